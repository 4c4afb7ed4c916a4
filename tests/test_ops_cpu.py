"""Every op on CPU against an independent float64 reference of the contract (conftest.reference):
both weight layouts, every allowed output dtype, every bias kind, the out variant with padded
rows, empty and ragged shapes, non-contiguous inputs and int8 exactness."""
import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flygemm
from conftest import (
    IN_DTYPES,
    OPS,
    OUT_DTYPES,
    assert_matches_reference,
    call_op,
    default_out_dtype,
    dtype_id,
    make_inputs,
    rel_fro_err,
    shuffle_ref,
    unshuffle_ref,
)

LAYOUTS = ("plain", "preshuffled")
BIAS_KINDS = ("none", "fp32", "out")

# One (M, N, K) per op: N a multiple of 16 and K of kp so the weight can be preshuffled;
# blockscale with N and K not multiples of 128 (partial edge blocks); MX with K % 32 == 0.
SHAPES = {
    "gemm_a16w16": (37, 48, 40),
    "gemm_a8w8": (37, 48, 80),
    "gemm_a8w8_blockscale": (37, 144, 272),
    "gemm_mxfp8": (37, 48, 160),
    "gemm_mxfp4": (37, 48, 160),
}

# (op, in_dtype, a_scale_kind, w_scale_kind) for the main matrix.
CONFIGS = [
    ("gemm_a16w16", torch.bfloat16, None, None),
    ("gemm_a16w16", torch.float16, None, None),
    ("gemm_a8w8", torch.float8_e4m3fn, "token", "channel"),
    ("gemm_a8w8", torch.float8_e4m3fnuz, "tensor", "channel"),
    ("gemm_a8w8", torch.int8, "token", "tensor"),
    ("gemm_a8w8_blockscale", torch.float8_e4m3fn, None, None),
    ("gemm_a8w8_blockscale", torch.float8_e4m3fnuz, None, None),
    ("gemm_mxfp8", torch.float8_e4m3fn, None, None),
    ("gemm_mxfp4", torch.float4_e2m1fn_x2, None, None),
]


def _matrix():
    for op, in_dtype, ak, wk in CONFIGS:
        for layout in LAYOUTS:
            for out_dtype in OUT_DTYPES[op]:
                for bias in BIAS_KINDS:
                    yield pytest.param(op, in_dtype, ak, wk, layout, out_dtype, bias,
                                       id=f"{op}-{dtype_id(in_dtype)}-{layout}-{dtype_id(out_dtype)}-bias_{bias}")


@pytest.mark.parametrize("op,in_dtype,ak,wk,layout,out_dtype,bias", list(_matrix()))
def test_matches_reference(op, in_dtype, ak, wk, layout, out_dtype, bias):
    M, N, K = SHAPES[op]
    inp = make_inputs(op, M, N, K, layout, in_dtype, out_dtype, bias, a_scale_kind=ak, w_scale_kind=wk)
    out = call_op(inp)
    assert_matches_reference(out, inp)


@pytest.mark.parametrize("in_dtype", IN_DTYPES["gemm_a8w8"], ids=dtype_id)
@pytest.mark.parametrize("ak", ["tensor", "token", "token2d"])
@pytest.mark.parametrize("wk", ["tensor", "channel", "channel2d"])
def test_a8w8_scale_combinations(in_dtype, ak, wk):
    inp = make_inputs("gemm_a8w8", 19, 32, 64, "plain", in_dtype, torch.float32, "fp32",
                      a_scale_kind=ak, w_scale_kind=wk, seed=3)
    assert_matches_reference(call_op(inp), inp)
    # The same scales as fp32 out and as bf16 out agree (single rounding at the end).
    bf = call_op(inp.with_(out_dtype=torch.bfloat16))
    assert torch.equal(bf, call_op(inp).to(torch.bfloat16))


@pytest.mark.parametrize("op", OPS)
def test_default_out_dtype(op):
    for in_dtype in IN_DTYPES[op]:
        inp = make_inputs(op, 5, 32, 64, "plain", in_dtype, None, "none")
        out = call_op(inp)
        assert out.dtype == default_out_dtype(op, in_dtype)
        assert torch.equal(out, call_op(inp.with_(out_dtype=out.dtype)))


@pytest.mark.parametrize("N,K", [(48, 128), (32, 272)])
def test_blockscale_partial_blocks(N, K):
    """Scale blocks straddling the edges of K and N are applied to the right elements: scale
    each block by a distinct power of two so a misplaced block changes the result."""
    from flygemm import quant

    g = torch.Generator().manual_seed(11)
    M = 9
    xa, xw = torch.randn(M, K, generator=g), torch.randn(N, K, generator=g)
    a, sa = quant.quantize_fp8_blockscale_act(xa)
    w, sw = quant.quantize_fp8_blockscale_weight(xw)
    sa = sa * torch.exp2(torch.arange(sa.numel(), dtype=torch.float32).reshape(sa.shape) % 5)
    sw = sw * torch.exp2(-(torch.arange(sw.numel(), dtype=torch.float32).reshape(sw.shape) % 3))
    inp = make_inputs("gemm_a8w8_blockscale", M, N, K).with_(a=a, w=w, a_scale=sa, w_scale=sw,
                                                              out_dtype=torch.float16)
    assert_matches_reference(call_op(inp), inp)
    # Reference from an explicit loop over the 128-wide blocks (independent of quant's dequantizers).
    ref = torch.zeros(M, N, dtype=torch.float64)
    af, wf = a.double(), w.double()
    for kb in range(math.ceil(K / 128)):
        ks = slice(kb * 128, min(K, (kb + 1) * 128))
        part = af[:, ks] @ wf[:, ks].T
        wscale = sw[:, kb].double().repeat_interleave(128)[:N]
        ref += part * sa[:, kb].double()[:, None] * wscale[None, :]
    assert rel_fro_err(call_op(inp.with_(out_dtype=None)), ref) < 2.0**-8  # bf16 rounding


@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
def test_mx_nan_scale_poisons_its_rows(op):
    """E8M0 byte 255 is NaN: the rows (of A) / columns (of the output, from W) it scales are NaN,
    everything else is unaffected."""
    inp = make_inputs(op, 6, 32, 96, "plain", None, None, "fp32")
    sa, sw = inp.a_scale.view(torch.uint8).clone(), inp.w_scale.view(torch.uint8).clone()
    sa[2, 1] = 255
    sw[5, 2] = 255
    out = call_op(inp.with_(a_scale=sa.view(torch.float8_e8m0fnu), w_scale=sw.view(torch.float8_e8m0fnu)))
    nan = torch.zeros(6, 32, dtype=torch.bool)
    nan[2, :] = True
    nan[:, 5] = True
    assert torch.equal(torch.isnan(out), nan)
    assert torch.equal(out[~nan], call_op(inp)[~nan])


# ----------------------------------------------------------------------------- int8 exactness


def test_int8_exact_random():
    g = torch.Generator().manual_seed(5)
    M, N, K = 23, 48, 1008
    a = torch.randint(-127, 128, (M, K), generator=g, dtype=torch.int8)
    w = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    one = torch.ones(1)
    exact = a.long() @ w.long().T
    assert exact.abs().max() < 2**24  # representable in fp32
    out = torch.ops.flygemm.gemm_a8w8(a, w, one, one, None, torch.float32)
    assert torch.equal(out, exact.float())
    out_p = torch.ops.flygemm.gemm_a8w8(a, flygemm.preshuffle(w), one, one, None, torch.float32)
    assert torch.equal(out_p, exact.float())
    # Power-of-two scales keep the result exact too.
    sa = torch.full((M,), 0.25)
    sw = torch.exp2(torch.randint(-2, 3, (N,), generator=g).float())
    out_s = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, None, torch.float32)
    assert torch.equal(out_s, (exact.double() * 0.25 * sw.double()[None, :]).float())


def test_int8_exact_with_large_partial_sums():
    """Partial sums far above 2**24 (where fp32 accumulation drops low bits) that cancel back to
    a small total: the int8 result must still be the exact integer (an fp32 matmul is not)."""
    K = 8192
    h = K // 2
    a = torch.full((4, K), 127, dtype=torch.int8)
    w = torch.empty((16, K), dtype=torch.int8)
    w[:, :h] = 127
    w[:, h:] = -127
    for n in range(16):  # odd/even products scattered differently per row so the halves barely cancel
        w[n, n:h:97] = 126
        w[n, h + n::89] = -125
    a[1, ::7] = 125
    a[2, ::3] = -3
    a[3, 5::11] = 101
    exact = a.long() @ w.long().T
    assert exact.abs().max() < 2**24
    one = torch.ones(1)
    for wl in (w, flygemm.preshuffle(w)):
        out = torch.ops.flygemm.gemm_a8w8(a, wl, one, one, None, torch.float32)
        assert torch.equal(out.double(), exact.double())


# ----------------------------------------------------------------------------- out variant


def _padded_out(M, N, dtype, pad=5, guard_rows=2):
    """An [M, N] view with row stride N + pad inside a buffer whose every byte is poisoned."""
    poison = float("nan")
    buf = torch.full((M + 2 * guard_rows, N + pad), poison, dtype=dtype)
    return buf, buf[guard_rows:guard_rows + M, :N]


def _check_untouched(buf, M, N, guard_rows=2):
    inside = torch.zeros_like(buf, dtype=torch.bool)
    inside[guard_rows:guard_rows + M, :N] = True
    assert torch.isnan(buf[~inside]).all(), "the out variant wrote outside [M, N]"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", OPS)
def test_out_variant_padded_rows(op, layout):
    M, N, K = SHAPES[op]
    for out_dtype in OUT_DTYPES[op]:
        inp = make_inputs(op, M, N, K, layout, None, out_dtype, "fp32", seed=2)
        buf, view = _padded_out(M, N, out_dtype)
        assert view.stride(0) > N
        call_op(inp, out=view)
        _check_untouched(buf, M, N)
        assert torch.equal(view, call_op(inp))
        assert_matches_reference(view, inp)


@pytest.mark.parametrize("op", OPS)
def test_out_variant_takes_dtype_from_out(op):
    """With out_dtype=None the out variant computes in the dtype of 'out'."""
    M, N, K = 6, 32, 64
    inp = make_inputs(op, M, N, K, "plain", None, None, "fp32")
    for dt in OUT_DTYPES[op]:
        out = torch.full((M, N), float("nan"), dtype=dt)
        call_op(inp, out=out)
        assert torch.equal(out, call_op(inp.with_(out_dtype=dt)))


@pytest.mark.parametrize("op", OPS)
def test_python_wrappers(op):
    inp = make_inputs(op, 7, 32, 64, "preshuffled", None, None, "out")
    fn = getattr(flygemm, op)
    got = fn(*inp.args())
    assert torch.equal(got, call_op(inp))
    out = torch.empty(7, 40, dtype=got.dtype)[:, :32]
    ret = fn(*inp.args(), out=out)
    assert ret is out and torch.equal(out, got)


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("op", OPS)
def test_empty_m(op):
    N, K = 32, 64
    for layout in LAYOUTS:
        inp = make_inputs(op, 0, N, K, layout, None, None, "fp32")
        out = call_op(inp)
        assert out.shape == (0, N) and out.dtype == inp.resolved_out_dtype
        buf = torch.full((1, N), float("nan"), dtype=out.dtype)
        call_op(inp, out=buf[:0])
        assert torch.isnan(buf).all()


@pytest.mark.parametrize("op", OPS)
def test_small_and_ragged_m(op):
    N, K = 48, 96
    for M in (1, 2, 13, 65):
        for layout in LAYOUTS:
            inp = make_inputs(op, M, N, K, layout, None, None, "fp32", seed=M)
            assert_matches_reference(call_op(inp), inp)
    # Rows are independent: row m of an [M, N] result equals the M = 1 result of row m.
    inp = make_inputs(op, 13, N, K, "plain", None, None, "fp32", seed=4)
    full = call_op(inp)
    for m in (0, 6, 12):
        sub = inp.with_(M=1, a=inp.a[m:m + 1],
                        a_scale=inp.a_scale if inp.a_scale is None or inp.a_scale.numel() == 1
                        else inp.a_scale[m:m + 1])
        assert torch.equal(call_op(sub), full[m:m + 1])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", OPS)
def test_k0_gives_bias_or_zeros(op, layout):
    """K = 0 is an empty sum: the result is the bias rounded to the output dtype, or zeros.
    (a16w16 plain is the case the contract needs; every op and layout handles it.)"""
    M, N = 5, 32
    for out_dtype in OUT_DTYPES[op]:
        for bias_kind in BIAS_KINDS:
            inp = make_inputs(op, M, N, 0, layout, None, out_dtype, bias_kind)
            out = call_op(inp)
            expect = torch.zeros(M, N) if inp.bias is None else inp.bias.float().expand(M, N)
            assert torch.equal(out, expect.to(out_dtype))
            buf, view = _padded_out(M, N, out_dtype)
            call_op(inp, out=view)
            assert torch.equal(view, out)
            _check_untouched(buf, M, N)


def test_a16w16_n0():
    a = torch.randn(4, 16).bfloat16()
    out = torch.ops.flygemm.gemm_a16w16(a, torch.empty(0, 16, dtype=torch.bfloat16))
    assert out.shape == (4, 0) and out.dtype == torch.bfloat16


# ----------------------------------------------------------------------------- strides


def _transposed_back(t):
    """Same values, column-major strides (works for 1-byte dtypes without copy kernels)."""
    if t.element_size() == 1 and t.dtype not in (torch.int8, torch.uint8):
        return t.view(torch.uint8).t().contiguous().t().view(t.dtype)
    return t.t().contiguous().t()


def _sliced_rows(t, step=3):
    """Same values, row stride step * original (every step-th row of a larger tensor)."""
    raw = t.view(torch.uint8) if t.element_size() == 1 else t
    big = torch.zeros((raw.shape[0] * step,) + tuple(raw.shape[1:]), dtype=raw.dtype)
    big[::step] = raw
    return big[::step].view(t.dtype)


@pytest.mark.parametrize("op", OPS)
def test_noncontiguous_inputs(op):
    M, N, K = 21, 32, 288
    for layout in LAYOUTS:
        inp = make_inputs(op, M, N, K, layout, None, None, "fp32", seed=9)
        want = call_op(inp)
        variants = {
            "a transposed back": inp.with_(a=_transposed_back(inp.a)),
            "a sliced rows": inp.with_(a=_sliced_rows(inp.a)),
            "bias strided": inp.with_(bias=_sliced_rows(inp.bias[:, None])[:, 0]),
        }
        if layout == "plain":
            variants["w transposed back"] = inp.with_(w=_transposed_back(inp.w))
            variants["w sliced rows"] = inp.with_(w=_sliced_rows(inp.w))
        if inp.a_scale is not None and inp.a_scale.dim() == 2:
            variants["scales transposed back"] = inp.with_(a_scale=_transposed_back(inp.a_scale),
                                                           w_scale=_transposed_back(inp.w_scale))
            variants["scales sliced rows"] = inp.with_(a_scale=_sliced_rows(inp.a_scale),
                                                       w_scale=_sliced_rows(inp.w_scale))
        elif inp.a_scale is not None and inp.a_scale.numel() > 1:
            variants["scales strided"] = inp.with_(a_scale=_sliced_rows(inp.a_scale[:, None])[:, 0],
                                                   w_scale=_sliced_rows(inp.w_scale[:, None])[:, 0])
        for name, v in variants.items():
            assert not all(t.is_contiguous() for t in (v.a, v.w, v.a_scale, v.w_scale, v.bias)
                           if t is not None), name
            got = call_op(v)
            assert torch.equal(got, want), f"{op} {layout}: {name} changes the result"


# ----------------------------------------------------------------------------- layout


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e4m3fnuz,
                                   torch.int8, torch.float4_e2m1fn_x2], ids=dtype_id)
def test_preshuffle_matches_layout_definition(dtype):
    N, Ks = 32, 48
    size = torch.empty(0, dtype=dtype).element_size()
    g = torch.Generator().manual_seed(1)
    w = torch.randint(0, 256, (N, Ks * size), generator=g, dtype=torch.uint8).view(dtype)  # any bits
    p = flygemm.preshuffle(w)
    kp = 16 // w.element_size()
    assert p.shape == (N // 16, Ks // kp, 16, kp) and p.dtype == dtype and p.is_contiguous()
    assert torch.equal(p.view(torch.uint8), shuffle_ref(w).view(torch.uint8))
    back = flygemm.unshuffle(p)
    assert back.shape == w.shape and torch.equal(back.view(torch.uint8), w.view(torch.uint8))
    assert torch.equal(unshuffle_ref(p).view(torch.uint8), w.view(torch.uint8))


# ----------------------------------------------------------------------------- random shapes

K_UNIT = {"gemm_a16w16": 8, "gemm_a8w8": 16, "gemm_a8w8_blockscale": 16, "gemm_mxfp8": 32, "gemm_mxfp4": 32}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(OPS), M=st.integers(0, 70), n16=st.integers(1, 10), kb=st.integers(1, 12),
       layout=st.sampled_from(LAYOUTS), out_idx=st.integers(0, 2), bias=st.sampled_from(BIAS_KINDS),
       in_idx=st.integers(0, 2), seed=st.integers(0, 1000))
def test_random_shapes(op, M, n16, kb, layout, out_idx, bias, in_idx, seed):
    out_dtype = OUT_DTYPES[op][out_idx % len(OUT_DTYPES[op])]
    in_dtype = IN_DTYPES[op][in_idx % len(IN_DTYPES[op])]
    inp = make_inputs(op, M, 16 * n16, K_UNIT[op] * kb, layout, in_dtype, out_dtype, bias, seed=seed)
    assert_matches_reference(call_op(inp), inp)
