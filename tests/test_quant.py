"""Tests for flygemm.quant (CPU only; no GPU and no flygemm._C needed).

Reference results are computed independently of the implementation: fp8 / e2m1 rounding by
brute force over every representable value (nearest, ties to the even code), OCP MX shared
exponents with Python's math.frexp, block scales with explicit loops over blocks.
"""

import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

try:
    import flygemm.quant as quant
except ImportError:
    # flygemm/__init__.py needs the compiled flygemm/_C; quant itself is pure torch, so test
    # it from its source file when the library is not built yet.
    from source_modules import load_source
    quant = load_source("python/flygemm/quant.py", "flygemm_quant_standalone")

SETTINGS = settings(
    deadline=None,
    max_examples=30,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

FP8 = [torch.float8_e4m3fn, torch.float8_e4m3fnuz]
SCALED = FP8 + [torch.int8]
QMAX = {torch.float8_e4m3fn: 448.0, torch.float8_e4m3fnuz: 240.0, torch.int8: 127.0}
# Half of the smallest subnormal: the absolute rounding bound in the subnormal range.
HALF_MIN_SUB = {torch.float8_e4m3fn: 2.0**-10, torch.float8_e4m3fnuz: 2.0**-11}
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


# ----------------------------------------------------------------------------- references


def _nearest_even(a: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Index into the ascending non-negative `table` nearest to each |value| in `a`
    (float64), ties to the even index. `a` must be <= table[-1]."""
    d = (a.reshape(-1, 1) - table.reshape(1, -1)).abs()
    cand = d == d.min(dim=1, keepdim=True).values
    even = (torch.arange(table.numel()) % 2 == 0).reshape(1, -1)
    two = cand.sum(dim=1) == 2
    idx = torch.where(two, (cand & even).to(torch.int8).argmax(dim=1), cand.to(torch.int8).argmax(dim=1))
    return idx.reshape(a.shape)


def _fp8_positive_table(dtype):
    n = 0x7F if dtype == torch.float8_e4m3fn else 0x80  # e4m3fn 0x7F is NaN
    return torch.arange(n, dtype=torch.int32).to(torch.uint8).view(dtype).to(torch.float64)


def ref_fp8_bytes(xs: torch.Tensor, dtype) -> torch.Tensor:
    """Expected bytes of saturate-then-RNE conversion of fp32 `xs` to `dtype`."""
    a = xs.double().abs().clamp(max=QMAX[dtype])
    mag = _nearest_even(a, _fp8_positive_table(dtype))
    neg = torch.signbit(xs)
    if dtype == torch.float8_e4m3fnuz:
        neg = neg & (mag != 0)  # no negative zero in fnuz (0x80 is NaN)
    return (mag | (neg.to(torch.int64) << 7)).to(torch.uint8)


def ref_e2m1_codes(xs: torch.Tensor) -> torch.Tensor:
    a = xs.double().abs().clamp(max=6.0)
    mag = _nearest_even(a, torch.tensor(E2M1, dtype=torch.float64))
    return (mag | (torch.signbit(xs).to(torch.int64) << 3)).to(torch.uint8)


def ref_mx_exponent(block_amax: float, emax: int) -> int:
    if block_amax == 0.0:
        return -127
    _, e = math.frexp(block_amax)  # block_amax = m * 2**e, m in [0.5, 1)
    return max(-127, min(127, (e - 1) - emax))


def ref_scale(amax: float, qmax: float) -> float:
    if amax == 0.0:
        return 1.0
    s = float(torch.tensor(amax, dtype=torch.float32) / qmax)
    return max(s, 2.0**-126)


def check_scaled_roundtrip(x, q, scale_b, dtype):
    """Elementwise checks given the scale broadcast to x's shape (fp32)."""
    xf = x.float()
    xs = xf / scale_b
    dq = q.float() * scale_b
    assert torch.isfinite(dq).all()
    slop = xf.abs() * 2.0**-20 + scale_b * 2.0**-30
    if dtype == torch.int8:
        # torch.round is half-to-even: check against an independent floor-based reference.
        lo = torch.floor(xs)
        frac = xs - lo
        up = (frac > 0.5) | ((frac == 0.5) & (torch.remainder(lo, 2) == 1))
        expect = (lo + up.float()).clamp(-127, 127)
        assert torch.equal(q.float(), expect)
        assert (dq - xf).abs().le(scale_b / 2 + slop).all()
    else:
        assert torch.equal(q.view(torch.uint8), ref_fp8_bytes(xs, dtype))
        bound = torch.maximum(xf.abs() * 2.0**-4, scale_b * HALF_MIN_SUB[dtype])
        assert (dq - xf).abs().le(bound * (1 + 2.0**-18) + slop).all()
    assert q.float().abs().le(QMAX[dtype]).all()


# ----------------------------------------------------------------------------- strategies


@st.composite
def matrices(draw, max_rows=8, max_cols=300, col_multiple=1, min_cols=1):
    rows = draw(st.integers(1, max_rows))
    cols = draw(st.integers(min_cols, max_cols // col_multiple)) * col_multiple
    mode = draw(st.sampled_from(["randn", "randn", "wide", "lists"]))
    if mode == "lists" and rows * cols <= 128:
        vals = draw(
            st.lists(
                st.floats(-(2.0**100), 2.0**100, width=32, allow_nan=False, allow_infinity=False),
                min_size=rows * cols,
                max_size=rows * cols,
            )
        )
        return torch.tensor(vals, dtype=torch.float32).reshape(rows, cols)
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    x = torch.randn(rows, cols, generator=g) * 2.0 ** draw(st.integers(-40, 40))
    if mode == "wide":  # elements spanning many binades: exercises the subnormal range
        x = x * torch.exp2(torch.randint(-24, 8, (rows, cols), generator=g).float())
    if draw(st.booleans()):
        x = x * (torch.rand(rows, cols, generator=g) > 0.3)
    if draw(st.booleans()):  # an all-zero row
        x[draw(st.integers(0, rows - 1))] = 0.0
    return x


# ----------------------------------------------------------------------------- per-tensor / rowwise


@SETTINGS
@given(x=matrices(), dtype=st.sampled_from(SCALED))
def test_per_tensor_roundtrip(x, dtype):
    q, scale = quant.quantize_fp8_per_tensor(x, dtype)
    assert q.dtype == dtype and q.shape == x.shape
    assert scale.dtype == torch.float32 and scale.shape == (1,)
    assert scale.item() == ref_scale(x.abs().max().item(), QMAX[dtype])
    check_scaled_roundtrip(x, q, scale.expand_as(x), dtype)
    assert torch.equal(quant.dequantize_fp8_per_tensor(q, scale), q.float() * scale)


@SETTINGS
@given(x=matrices(), dtype=st.sampled_from(SCALED), which=st.sampled_from(["token", "channel"]))
def test_rowwise_roundtrip(x, dtype, which):
    qfn = quant.quantize_fp8_per_token if which == "token" else quant.quantize_fp8_per_channel
    dqfn = quant.dequantize_per_token if which == "token" else quant.dequantize_per_channel
    q, scale = qfn(x, dtype)
    assert q.dtype == dtype and q.shape == x.shape
    assert scale.dtype == torch.float32 and scale.shape == (x.shape[0],)
    for r in range(x.shape[0]):
        assert scale[r].item() == ref_scale(x[r].abs().max().item(), QMAX[dtype])
    check_scaled_roundtrip(x, q, scale[:, None].expand_as(x), dtype)
    dq = dqfn(q, scale)
    assert torch.equal(dq, q.float() * scale[:, None])
    assert torch.equal(dq, quant.dequantize_rowwise(q, scale))


def test_amax_element_maps_to_max():
    x = torch.tensor([[-3.0, 1.0, 0.25], [0.0, 7.0, -2.0]])
    for dtype in SCALED:
        q, s = quant.quantize_fp8_per_tensor(x, dtype)
        assert q.float().abs().max().item() == QMAX[dtype]
        assert q[1, 1].float().item() == QMAX[dtype]
        assert quant.dequantize_fp8_per_tensor(q, s)[1, 1].item() == pytest.approx(7.0, rel=1e-6)
        q, s = quant.quantize_fp8_per_token(x, dtype)
        assert q[0, 0].float().item() == -QMAX[dtype] and q[1, 1].float().item() == QMAX[dtype]


def test_fnuz_vs_fn_max():
    x = torch.linspace(-1000.0, 1000.0, 257).reshape(1, -1)
    qn, sn = quant.quantize_fp8_per_tensor(x, torch.float8_e4m3fn)
    qz, sz = quant.quantize_fp8_per_tensor(x, torch.float8_e4m3fnuz)
    assert sn.item() == pytest.approx(1000.0 / 448.0) and sz.item() == pytest.approx(1000.0 / 240.0)
    assert qn.float().max().item() == 448.0 and qz.float().max().item() == 240.0
    assert qn.float().min().item() == -448.0 and qz.float().min().item() == -240.0
    # no NaN (fnuz overflow would be NaN without the clamp)
    assert not torch.isnan(qz.float()).any() and not torch.isnan(qn.float()).any()
    assert quant.FP8_MAX[torch.float8_e4m3fnuz] == torch.finfo(torch.float8_e4m3fnuz).max == 240.0
    assert quant.FP8_MAX[torch.float8_e4m3fn] == torch.finfo(torch.float8_e4m3fn).max == 448.0


def test_int8_symmetric_half_even():
    # scale = 127 / 127 = 1, so x/scale is x itself: ties round to even, clamp at +-127
    x = torch.tensor([[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.0, 127.0, 3.4999]])
    q, s = quant.quantize_fp8_per_token(x, torch.int8)
    assert s.tolist() == [1.0]
    assert q.tolist() == [[0, 2, 2, 0, -2, -2, 126, -127, 127, 3]]
    assert q.dtype == torch.int8


def test_zero_and_empty_inputs():
    for dtype in SCALED:
        q, s = quant.quantize_fp8_per_tensor(torch.zeros(3, 5), dtype)
        assert s.tolist() == [1.0] and q.float().abs().sum() == 0
        q, s = quant.quantize_fp8_per_tensor(torch.zeros(0, 4), dtype)
        assert s.tolist() == [1.0] and q.shape == (0, 4)
        q, s = quant.quantize_fp8_per_token(torch.zeros(3, 0), dtype)
        assert s.tolist() == [1.0, 1.0, 1.0] and q.shape == (3, 0)
        q, s = quant.quantize_fp8_per_channel(torch.zeros(0, 7), dtype)
        assert s.shape == (0,) and q.shape == (0, 7)
        q, s = quant.quantize_fp8_per_tensor(torch.tensor(2.0), dtype)  # 0-d keeps its shape
        assert q.shape == () and s.shape == (1,)


def test_tiny_amax_scale_is_normal():
    x = torch.tensor([[2.0**-140, -(2.0**-141)], [0.0, 0.0]])
    q, s = quant.quantize_fp8_per_token(x, torch.float8_e4m3fn)
    assert s.tolist() == [2.0**-126, 1.0]
    assert torch.isfinite(q.float()).all()


def test_saturation_no_inf_nan():
    big = torch.finfo(torch.float32).max
    x = torch.tensor([[big, -big, 1.0, 0.0], [1e-30, 3e38, -1e38, 5.0]])
    for dtype in SCALED:
        for fn in (quant.quantize_fp8_per_tensor, quant.quantize_fp8_per_token, quant.quantize_fp8_per_channel):
            q, s = fn(x, dtype)
            assert torch.isfinite(s).all()
            assert torch.isfinite(q.float()).all()
            assert q.float().abs().max().item() == QMAX[dtype]
    for dtype in FP8:
        q, s = quant.quantize_fp8_blockscale_act(x, 2, dtype)
        assert torch.isfinite(q.float()).all() and torch.isfinite(s).all()
        q, s = quant.quantize_fp8_blockscale_weight(x, 2, dtype)
        assert torch.isfinite(q.float()).all() and torch.isfinite(s).all()


@pytest.mark.parametrize("src", [torch.bfloat16, torch.float16, torch.float64])
def test_lower_and_higher_precision_inputs(src):
    x = (torch.randn(6, 96, generator=torch.Generator().manual_seed(1)) * 3).to(src)
    xf = x.float()
    for fn in (quant.quantize_fp8_per_tensor, quant.quantize_fp8_per_token, quant.quantize_fp8_blockscale_act):
        a = fn(x)
        b = fn(xf)
        assert torch.equal(a[0].view(torch.uint8), b[0].view(torch.uint8)) and torch.equal(a[1], b[1])
    for fn in (quant.quantize_mxfp8, quant.quantize_mxfp4):
        a, b = fn(x), fn(xf)
        assert torch.equal(a[0].view(torch.uint8), b[0].view(torch.uint8))
        assert torch.equal(a[1].view(torch.uint8), b[1].view(torch.uint8))


# ----------------------------------------------------------------------------- blockscale


@SETTINGS
@given(
    x=matrices(max_rows=6, max_cols=300),
    block=st.sampled_from([128, 128, 32, 8, 5]),
    dtype=st.sampled_from(FP8),
)
def test_blockscale_act_roundtrip(x, block, dtype):
    M, K = x.shape
    nb = -(-K // block)
    q, scale = quant.quantize_fp8_blockscale_act(x, block, dtype)
    assert q.dtype == dtype and q.shape == (M, K)
    assert scale.dtype == torch.float32 and scale.shape == (M, nb)
    expect = torch.empty(M, nb)
    for j in range(nb):
        part = x[:, j * block : (j + 1) * block]  # the last one may be partial
        for m in range(M):
            expect[m, j] = ref_scale(part[m].abs().max().item(), QMAX[dtype])
    assert torch.equal(scale, expect)
    scale_b = scale.repeat_interleave(block, dim=1)[:, :K]
    check_scaled_roundtrip(x, q, scale_b, dtype)
    assert torch.equal(quant.dequantize_blockscale_act(q, scale, block), q.float() * scale_b)


@SETTINGS
@given(
    w=matrices(max_rows=140, max_cols=260),
    block=st.sampled_from([128, 128, 64, 32]),
    dtype=st.sampled_from(FP8),
)
def test_blockscale_weight_roundtrip(w, block, dtype):
    N, K = w.shape
    nbn, nbk = -(-N // block), -(-K // block)
    q, scale = quant.quantize_fp8_blockscale_weight(w, block, dtype)
    assert q.dtype == dtype and q.shape == (N, K)
    assert scale.dtype == torch.float32 and scale.shape == (nbn, nbk)
    expect = torch.empty(nbn, nbk)
    for i in range(nbn):
        for j in range(nbk):
            tile = w[i * block : (i + 1) * block, j * block : (j + 1) * block]
            expect[i, j] = ref_scale(tile.abs().max().item(), QMAX[dtype])
    assert torch.equal(scale, expect)
    scale_b = scale.repeat_interleave(block, 0).repeat_interleave(block, 1)[:N, :K]
    check_scaled_roundtrip(w, q, scale_b, dtype)
    assert torch.equal(quant.dequantize_blockscale_weight(q, scale, block), q.float() * scale_b)


def test_blockscale_partial_edges():
    # K = 130: blocks [0, 128) and [128, 130); N = 129: row tiles [0, 128) and [128, 129)
    x = torch.ones(3, 130)
    x[:, 128:] = 4.48  # the partial block's own amax decides its scale
    x[1, :128] = 0.0
    q, s = quant.quantize_fp8_blockscale_act(x)
    assert s.shape == (3, 2)
    assert s[:, 1].tolist() == pytest.approx([0.01] * 3)
    assert s[0, 0].item() == pytest.approx(1.0 / 448.0) and s[1, 0].item() == 1.0
    assert (q[:, 128:].float() == 448.0).all()
    w = torch.full((129, 130), 2.0)
    w[128, 129] = -8.0  # the corner tile is 1 x 2
    q, s = quant.quantize_fp8_blockscale_weight(w)
    assert s.shape == (2, 2)
    assert s[1, 1].item() == pytest.approx(8.0 / 448.0)
    assert s[0, 0].item() == s[0, 1].item() == s[1, 0].item() == pytest.approx(2.0 / 448.0)
    assert q[128, 129].float().item() == -448.0 and q[128, 128].float().item() == 112.0
    assert torch.allclose(quant.dequantize_blockscale_weight(q, s), w, rtol=2.0**-4)


# ----------------------------------------------------------------------------- MX


def _mx_reference_check(x, q_bytes_or_codes, sbytes, emax, kind):
    R, K = x.shape
    nb = K // 32
    assert sbytes.shape == (R, nb)
    amax = x.abs().reshape(R, nb, 32).amax(dim=2).tolist() if R * nb else []
    X = torch.tensor([[ref_mx_exponent(a, emax) for a in row] for row in amax], dtype=torch.float64)
    assert torch.equal(sbytes.double(), X.reshape(R, nb) + 127)
    xs = (x.double() * torch.exp2(-X.reshape(R, nb)).repeat_interleave(32, 1)).float()  # exact
    expect = ref_fp8_bytes(xs, torch.float8_e4m3fn) if kind == "fp8" else ref_e2m1_codes(xs)
    assert torch.equal(q_bytes_or_codes, expect)


def _codes(q_fp4):
    b = q_fp4.view(torch.uint8)
    return torch.stack((b & 0xF, b >> 4), dim=-1).reshape(b.shape[0], -1)


@SETTINGS
@given(x=matrices(max_rows=6, max_cols=256, col_multiple=32))
def test_mxfp8_roundtrip(x):
    q, s = quant.quantize_mxfp8(x)
    R, K = x.shape
    assert q.dtype == torch.float8_e4m3fn and q.shape == (R, K)
    assert s.dtype == torch.float8_e8m0fnu and s.shape == (R, K // 32)
    sb = s.view(torch.uint8)
    _mx_reference_check(x, q.view(torch.uint8), sb, 8, "fp8")
    pow2X = torch.exp2(sb.double() - 127).repeat_interleave(32, 1)
    xs = x.double() / pow2X
    dq = quant.dequantize_mxfp8(q, s)
    assert dq.dtype == torch.float32 and torch.isfinite(dq).all()
    err = (dq.double() - x.double()).abs()
    sat = xs.abs() > 448
    bound = torch.maximum(xs.abs() * 2.0**-4, torch.full_like(xs, 2.0**-10)) * pow2X
    assert (err <= bound)[~sat].all()
    assert torch.equal(dq.double()[sat], torch.sign(xs[sat]) * 448 * pow2X[sat])
    # torch's own e8m0 conversion agrees with our decoding
    assert torch.equal(s.to(torch.float32).repeat_interleave(32, 1), pow2X.float())


@SETTINGS
@given(x=matrices(max_rows=6, max_cols=256, col_multiple=32))
def test_mxfp4_roundtrip(x):
    q, s = quant.quantize_mxfp4(x)
    R, K = x.shape
    assert q.dtype == torch.float4_e2m1fn_x2 and q.shape == (R, K // 2)
    assert s.dtype == torch.float8_e8m0fnu and s.shape == (R, K // 32)
    sb = s.view(torch.uint8)
    _mx_reference_check(x, _codes(q), sb, 2, "fp4")
    pow2X = torch.exp2(sb.double() - 127).repeat_interleave(32, 1)
    xs = x.double() / pow2X
    dq = quant.dequantize_mxfp4(q, s)
    assert dq.dtype == torch.float32 and torch.isfinite(dq).all()
    a = xs.abs()
    half_gap = torch.where(a <= 2, 0.25, torch.where(a <= 4, 0.5, 1.0))
    sat = a > 6
    err = (dq.double() - x.double()).abs()
    assert (err <= half_gap * pow2X)[~sat].all()
    assert torch.equal(dq.double()[sat], torch.sign(xs[sat]) * 6 * pow2X[sat])
    assert torch.equal(quant.unpack_fp4(q) * s.to(torch.float32).repeat_interleave(32, 1), dq)


def test_mx_known_scales():
    x = torch.zeros(1, 96)
    x[0, 0] = 1.0  # block 0: amax 1.0
    x[0, 32:64] = 0.0  # block 1: all zero
    x[0, 64] = -3.0  # block 2: amax 3.0 -> floor(log2 3) = 1
    _, s8 = quant.quantize_mxfp8(x)
    _, s4 = quant.quantize_mxfp4(x)
    assert s8.view(torch.uint8).tolist() == [[127 + 0 - 8, 0, 127 + 1 - 8]]  # [[119, 0, 120]]
    assert s4.view(torch.uint8).tolist() == [[127 + 0 - 2, 0, 127 + 1 - 2]]  # [[125, 0, 126]]
    assert s8.to(torch.float32)[0, 0].item() == 2.0**-8
    assert s8.to(torch.float32)[0, 1].item() == 2.0**-127
    # the 1.0 element becomes 256 in e4m3 and 4.0 in e2m1 (code 0b0110)
    q8, _ = quant.quantize_mxfp8(x)
    q4, _ = quant.quantize_mxfp4(x)
    assert q8[0, 0].float().item() == 256.0 and q8[0, 64].float().item() == -384.0
    assert q4.view(torch.uint8)[0, 0].item() == 0b0110
    # element 64 (-3.0) in a block with X = -1: -3 / 2**-1 = -6 -> code 0b1111 in the low nibble
    assert q4.view(torch.uint8)[0, 32].item() == 0b1111
    # zero block dequantizes to exact zeros
    assert quant.dequantize_mxfp4(q4, s4)[0, 32:64].abs().sum().item() == 0.0


def test_mx_extreme_exponents():
    x = torch.zeros(2, 32)
    x[0, 0] = torch.finfo(torch.float32).max  # floor(log2) = 127
    x[0, 1] = -1.0
    x[1, 0] = 2.0**-149  # smallest subnormal: X clamps to -127
    x[1, 1] = 2.0**-140
    q8, s8 = quant.quantize_mxfp8(x)
    q4, s4 = quant.quantize_mxfp4(x)
    assert s8.view(torch.uint8)[:, 0].tolist() == [127 + 127 - 8, 0]
    assert s4.view(torch.uint8)[:, 0].tolist() == [127 + 127 - 2, 0]
    for dq in (quant.dequantize_mxfp8(q8, s8), quant.dequantize_mxfp4(q4, s4)):
        assert torch.isfinite(dq).all()
        assert dq[0, 0].item() == pytest.approx(x[0, 0].item(), rel=0.3)
    # 2**-140 * 2**127 = 2**-13: below half the smallest e4m3 subnormal (2**-9) -> 0
    assert q8[1, 1].float().item() == 0.0 and q4.view(torch.uint8)[1, 0].item() == 0


def test_mx_saturation():
    # block amax 500 -> X = 8 - 8 = 0, so 500 and 480 clamp to 448 (RNE of 480 would overflow)
    x = torch.zeros(1, 32)
    x[0, :4] = torch.tensor([500.0, -480.0, 449.0, 300.0])
    q, s = quant.quantize_mxfp8(x)
    assert s.view(torch.uint8).item() == 127
    assert q[0, :4].float().tolist() == [448.0, -448.0, 448.0, 288.0]
    # e2m1: amax 7.5 -> X = 2 - 2 = 0; 7.5, 6.5 clamp to 6
    y = torch.zeros(1, 32)
    y[0, :4] = torch.tensor([7.5, -6.5, 5.5, 6.0])
    q, s = quant.quantize_mxfp4(y)
    assert s.view(torch.uint8).item() == 127
    assert quant.unpack_fp4(q)[0, :4].tolist() == [6.0, -6.0, 6.0, 6.0]
    # huge inputs never produce inf / NaN
    z = torch.full((2, 64), 3e38)
    z[1] = -torch.finfo(torch.float32).max
    for fn, dq in ((quant.quantize_mxfp8, quant.dequantize_mxfp8), (quant.quantize_mxfp4, quant.dequantize_mxfp4)):
        qq, ss = fn(z)
        assert torch.isfinite(dq(qq, ss)).all()


def test_mx_nan_inf_blocks():
    x = torch.ones(2, 96)
    x[0, 5] = float("nan")
    x[1, 40] = float("inf")
    x[1, 70] = float("-inf")
    for fn, dq, kind in (
        (quant.quantize_mxfp8, quant.dequantize_mxfp8, "fp8"),
        (quant.quantize_mxfp4, quant.dequantize_mxfp4, "fp4"),
    ):
        q, s = fn(x)
        sb = s.view(torch.uint8)
        ones = 127 + 0 - (8 if kind == "fp8" else 2)  # blocks of 1.0
        assert sb.tolist() == [[255, ones, ones], [ones, 255, 255]]
        qb = q.view(torch.uint8)
        per = 32 if kind == "fp8" else 16
        assert qb[0, :per].sum().item() == 0  # elements of a NaN-scaled block are zero bytes
        d = dq(q, s)
        assert torch.isnan(d[0, :32]).all() and torch.isnan(d[1, 32:]).all()
        assert torch.isfinite(d[0, 32:]).all() and torch.isfinite(d[1, :32]).all()
        assert torch.equal(d[0, 32:], torch.ones(64))
        assert torch.isnan(s.to(torch.float32)[0, 0])


# ----------------------------------------------------------------------------- fp4 packing / RNE


def test_fp4_known_codes_and_packing():
    vals = torch.tensor([[1.0, 6.0, -0.5, 0.0, 0.5, -6.0, 1.5, -4.0]])
    q = quant.pack_fp4(vals)
    assert q.dtype == torch.float4_e2m1fn_x2 and q.shape == (1, 4)
    # low nibble = even index, high nibble = odd index
    assert q.view(torch.uint8).tolist() == [[
        0b0010 | (0b0111 << 4),  # 1.0, 6.0
        0b1001 | (0b0000 << 4),  # -0.5, 0.0
        0b0001 | (0b1111 << 4),  # 0.5, -6.0
        0b0011 | (0b1110 << 4),  # 1.5, -4.0
    ]]
    assert torch.equal(quant.unpack_fp4(q), vals)
    # all 16 codes, each alone in a nibble
    grid = torch.tensor(E2M1 + [-v for v in E2M1])
    codes = _codes(quant.pack_fp4(grid.reshape(1, 16)))
    assert codes.tolist() == [list(range(16))]


def test_fp4_unpack_pack_all_bytes():
    b = torch.arange(256, dtype=torch.int32).to(torch.uint8).reshape(4, 64)
    vals = quant.unpack_fp4(b.view(torch.float4_e2m1fn_x2))
    assert vals.shape == (4, 128) and vals.dtype == torch.float32
    assert torch.equal(quant.pack_fp4(vals).view(torch.uint8), b)  # including -0 (code 8)
    assert torch.equal(quant.unpack_fp4(b), vals)  # raw uint8 is accepted too
    assert vals[0, 0].item() == 0.0 and vals[0, 1].item() == 0.0  # byte 0
    assert vals[0, 2].item() == 0.5 and vals[0, 3].item() == 0.0  # byte 1: low nibble 1


def test_fp4_rne_ties():
    v = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -2.5, -5.0, 0.2, 0.3, 2.6, 5.1, 7.0, 100.0, 1e-9])
    got = quant.unpack_fp4(quant.pack_fp4(v))
    assert got.tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, -2.0, -4.0, 0.0, 0.5, 3.0, 6.0, 6.0, 6.0, 0.0]
    # the same ties through the MX path (block amax 4 -> X = 0, no scaling)
    x = torch.zeros(1, 32)
    x[0, :8] = torch.tensor([4.0, 2.5, 3.5, 5.0, 0.25, 0.75, 1.25, 1.75])
    q, s = quant.quantize_mxfp4(x)
    assert s.view(torch.uint8).item() == 127
    assert quant.unpack_fp4(q)[0, :8].tolist() == [4.0, 2.0, 4.0, 4.0, 0.0, 1.0, 1.0, 2.0]


@SETTINGS
@given(
    vals=st.lists(
        st.one_of(
            st.floats(-8, 8, width=32),
            st.sampled_from([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.75, -3.5, -5.0]),  # exact ties
        ),
        min_size=2,
        max_size=64,
    ).filter(lambda v: len(v) % 2 == 0)
)
def test_pack_fp4_matches_bruteforce(vals):
    x = torch.tensor(vals, dtype=torch.float32).reshape(1, -1)
    assert torch.equal(_codes(quant.pack_fp4(x)), ref_e2m1_codes(x))


def test_pack_fp4_nan_is_zero():
    # e2m1 has no NaN encoding: pack_fp4 documents NaN -> +0
    q = quant.pack_fp4(torch.tensor([float("nan"), -float("nan"), 1.0, float("inf")]))
    assert q.view(torch.uint8).tolist() == [0x00, 0x72]


def test_negative_zero_sign_kept():
    q, _ = quant.quantize_fp8_per_tensor(torch.tensor([1.0, -1e-9]))
    assert q.view(torch.uint8)[1].item() == 0x80
    qz, _ = quant.quantize_fp8_per_tensor(torch.tensor([1.0, -1e-9]), torch.float8_e4m3fnuz)
    assert qz.view(torch.uint8)[1].item() == 0x00  # fnuz has no -0 (0x80 is NaN)
    assert quant.pack_fp4(torch.tensor([-0.1, 0.1])).view(torch.uint8).item() == 0x08


# ----------------------------------------------------------------------------- device independence


def _devices():
    devs = ["cpu"]
    if torch.cuda.is_available():
        devs.append("cuda")
    return devs


@pytest.mark.parametrize("device", _devices())
def test_outputs_follow_input_device(device):
    x = torch.randn(4, 256, generator=torch.Generator().manual_seed(3))
    ref = {
        "mx8": quant.quantize_mxfp8(x),
        "mx4": quant.quantize_mxfp4(x),
        "tok": quant.quantize_fp8_per_token(x),
        "bs": quant.quantize_fp8_blockscale_weight(x),
    }
    xd = x.to(device)
    got = {
        "mx8": quant.quantize_mxfp8(xd),
        "mx4": quant.quantize_mxfp4(xd),
        "tok": quant.quantize_fp8_per_token(xd),
        "bs": quant.quantize_fp8_blockscale_weight(xd),
    }
    for k in ref:
        for a, b in zip(ref[k], got[k]):
            assert b.device.type == device
            assert torch.equal(a.view(torch.uint8) if a.element_size() == 1 else a, (b.view(torch.uint8) if b.element_size() == 1 else b).cpu())
    assert quant.dequantize_mxfp4(*got["mx4"]).device.type == device


def test_non_contiguous_input():
    x = torch.randn(64, 6, generator=torch.Generator().manual_seed(4)).t()  # [6, 64], strided
    assert not x.is_contiguous()
    for fn in (quant.quantize_mxfp4, quant.quantize_mxfp8, quant.quantize_fp8_per_token, quant.quantize_fp8_blockscale_act):
        a, b = fn(x), fn(x.contiguous())
        assert all(torch.equal(u.view(torch.uint8) if u.element_size() == 1 else u,
                               v.view(torch.uint8) if v.element_size() == 1 else v) for u, v in zip(a, b))


def test_module_needs_no_extension():
    import inspect

    src = inspect.getsource(quant)
    assert "_C" not in src.replace("__C", "")
    assert ".cuda" not in src


# ----------------------------------------------------------------------------- validation


def _raises(exc, match, fn, *args, **kwargs):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_validation_errors():
    x = torch.randn(4, 64)
    q8, s8 = quant.quantize_fp8_per_token(x)
    # non-tensor and wrong dtypes
    _raises(TypeError, r"quantize_fp8_per_tensor: argument 'x' must be a torch.Tensor, got list",
            quant.quantize_fp8_per_tensor, [1.0])
    _raises(TypeError, r"quantize_fp8_per_token: argument 'x' must have a floating dtype.*got int32",
            quant.quantize_fp8_per_token, torch.ones(2, 2, dtype=torch.int32))
    _raises(ValueError, r"quantize_fp8_per_tensor: argument 'dtype' must be one of .*got float16",
            quant.quantize_fp8_per_tensor, x, torch.float16)
    _raises(TypeError, r"quantize_fp8_per_tensor: argument 'dtype' must be a torch.dtype",
            quant.quantize_fp8_per_tensor, x, "fp8")
    _raises(ValueError, r"quantize_fp8_blockscale_act: argument 'dtype' must be one of float8_e4m3fn, "
            r"float8_e4m3fnuz, got int8", quant.quantize_fp8_blockscale_act, x, 128, torch.int8)
    # shapes
    _raises(ValueError, r"quantize_fp8_per_channel: argument 'w' must be 2-D, got 3-D",
            quant.quantize_fp8_per_channel, torch.ones(2, 2, 2))
    _raises(ValueError, r"quantize_fp8_per_token: argument 'x' must be 2-D, got 1-D",
            quant.quantize_fp8_per_token, torch.ones(5))
    _raises(ValueError, r"quantize_mxfp4: argument 'x' must have K \(dim 1\) divisible by 32, got shape \[4, 48\]",
            quant.quantize_mxfp4, torch.ones(4, 48))
    _raises(ValueError, r"quantize_mxfp8: argument 'x' must have K \(dim 1\) divisible by 32",
            quant.quantize_mxfp8, torch.ones(4, 33))
    _raises(ValueError, r"quantize_mxfp8: argument 'x' must be 2-D", quant.quantize_mxfp8, torch.ones(64))
    _raises(ValueError, r"quantize_fp8_blockscale_weight: argument 'block' must be positive, got 0",
            quant.quantize_fp8_blockscale_weight, x, 0)
    _raises(TypeError, r"quantize_fp8_blockscale_act: argument 'block' must be an int, got float",
            quant.quantize_fp8_blockscale_act, x, 128.0)
    _raises(ValueError, r"pack_fp4: argument 'values' must have an even last dimension, got shape \[3\]",
            quant.pack_fp4, torch.ones(3))
    # dequantizers
    _raises(ValueError, r"dequantize_per_token: argument 'scale' must have shape \[4\], got \[3\]",
            quant.dequantize_per_token, q8, s8[:3])
    _raises(TypeError, r"dequantize_rowwise: argument 'scale' must have dtype float32, got float16",
            quant.dequantize_rowwise, q8, s8.half())
    _raises(TypeError, r"dequantize_per_channel: argument 'q' must have dtype .*got float32",
            quant.dequantize_per_channel, x, s8)
    _raises(ValueError, r"dequantize_fp8_per_tensor: argument 'scale' must have exactly one element",
            quant.dequantize_fp8_per_tensor, q8, s8)
    qb, sb = quant.quantize_fp8_blockscale_act(torch.randn(3, 130))
    _raises(ValueError, r"dequantize_blockscale_act: argument 'scale' must have shape \[3, 2\], got \[3, 1\]",
            quant.dequantize_blockscale_act, qb, sb[:, :1])
    qw, sw = quant.quantize_fp8_blockscale_weight(torch.randn(129, 10))
    _raises(ValueError, r"dequantize_blockscale_weight: argument 'scale' must have shape \[2, 1\], got \[1, 1\]",
            quant.dequantize_blockscale_weight, qw, sw[:1])
    q4, s4 = quant.quantize_mxfp4(x)
    _raises(TypeError, r"dequantize_mxfp4: argument 'scale' must have dtype float8_e8m0fnu or uint8, got float32",
            quant.dequantize_mxfp4, q4, s4.to(torch.float32))
    _raises(ValueError, r"dequantize_mxfp4: argument 'scale' must have shape \[4, 2\], got \[4, 1\]",
            quant.dequantize_mxfp4, q4, s4[:, :1])
    _raises(TypeError, r"dequantize_mxfp4: argument 'q' must have dtype float4_e2m1fn_x2 or uint8, got float8_e4m3fn",
            quant.dequantize_mxfp4, q8, s4)
    _raises(ValueError, r"dequantize_mxfp4: argument 'q' must hold K = 2 \* q.shape\[1\]",
            quant.dequantize_mxfp4, q4[:, :8], s4)
    q8m, s8m = quant.quantize_mxfp8(x)
    _raises(TypeError, r"dequantize_mxfp8: argument 'q' must have dtype float8_e4m3fn, got float8_e4m3fnuz",
            quant.dequantize_mxfp8, q8m.view(torch.float8_e4m3fnuz), s8m)
    _raises(TypeError, r"unpack_fp4: argument 'q' must have dtype float4_e2m1fn_x2 or uint8, got int8",
            quant.unpack_fp4, torch.zeros(2, dtype=torch.int8))
    _raises(TypeError, r"e8m0_to_float: argument 'scale' must have dtype float8_e8m0fnu or uint8",
            quant.e8m0_to_float, torch.zeros(2))
    # uint8 views are accepted where documented
    assert torch.equal(quant.dequantize_mxfp4(q4.view(torch.uint8), s4.view(torch.uint8)), quant.dequantize_mxfp4(q4, s4))
