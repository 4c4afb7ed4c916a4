"""Every class of bad input raises a clear error naming the op and the argument (DESIGN.md,
Conventions), and never crashes the process."""
import subprocess
import sys
import textwrap

import pytest
import torch

import flygemm
from conftest import OPS, SCALED_OPS, _PYTHON_DIR, call_op, make_inputs

ops = torch.ops.flygemm
META = torch.device("meta")

# Small valid problem per op (N % 16 == 0 and K % 32 == 0, so every layout is possible).
M, N, K = 4, 32, 64


def good(op, layout="plain", **kw):
    return make_inputs(op, M, N, K, layout, kw.pop("in_dtype", None), kw.pop("out_dtype", None),
                       kw.pop("bias_kind", "none"), **kw)


EXPECTED_A = {
    "gemm_a16w16": "bfloat16 or float16",
    "gemm_a8w8": "float8_e4m3fn, float8_e4m3fnuz or int8",
    "gemm_a8w8_blockscale": "float8_e4m3fn or float8_e4m3fnuz",
    "gemm_mxfp8": "float8_e4m3fn",
    "gemm_mxfp4": "float4_e2m1fn_x2 (packed pairs)",
}


def name(dtype):
    """A dtype as Python spells it (what the messages must say)."""
    return str(dtype).replace("torch.", "")


def raises(exc, op, *fragments):
    """pytest.raises matching 'flygemm.<op>' and then each fragment, in order."""
    import re

    pattern = re.escape(f"flygemm.{op}") + "".join(".*" + re.escape(f) for f in fragments)
    return pytest.raises(exc, match=pattern)


# ----------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize("op,bad", [
    ("gemm_a16w16", torch.float32),
    ("gemm_a16w16", torch.float8_e4m3fn),
    ("gemm_a8w8", torch.bfloat16),
    ("gemm_a8w8", torch.uint8),
    ("gemm_a8w8_blockscale", torch.int8),
    ("gemm_mxfp8", torch.float8_e4m3fnuz),
    ("gemm_mxfp8", torch.int8),
    ("gemm_mxfp4", torch.uint8),
    ("gemm_mxfp4", torch.float8_e4m3fn),
])
def test_wrong_input_dtype(op, bad):
    inp = good(op)
    a = torch.zeros(inp.a.shape, dtype=bad) if bad != torch.float8_e4m3fnuz else inp.a.view(bad)
    w = torch.zeros(inp.w.shape, dtype=bad) if bad != torch.float8_e4m3fnuz else inp.w.view(bad)
    with raises(TypeError, op, "'a'", f"must be {EXPECTED_A[op]}, got {name(bad)}"):
        call_op(inp.with_(a=a, w=w))


@pytest.mark.parametrize("op", OPS)
def test_w_dtype_differs_from_a(op):
    inp = good(op)
    other = {torch.bfloat16: torch.float16, torch.float8_e4m3fn: torch.int8,
             torch.float4_e2m1fn_x2: torch.uint8}[inp.a.dtype]
    with raises(TypeError, op, "'w'", "same dtype as 'a'"):
        call_op(inp.with_(w=inp.w.view(other) if other != torch.float16 else inp.w.half()))


@pytest.mark.parametrize("op", ["gemm_a8w8", "gemm_a8w8_blockscale"])
def test_mixed_fp8_flavours(op):
    inp = good(op, in_dtype=torch.float8_e4m3fn)
    with raises(TypeError, op, "'w'", "same dtype as 'a' (float8_e4m3fn), got float8_e4m3fnuz",
                "fp8 flavours must not be mixed"):
        call_op(inp.with_(w=inp.w.view(torch.float8_e4m3fnuz)))
    inp = good(op, in_dtype=torch.float8_e4m3fnuz)
    with raises(TypeError, op, "'w'", "(float8_e4m3fnuz), got float8_e4m3fn", "fp8 flavours must not be mixed"):
        call_op(inp.with_(w=inp.w.view(torch.float8_e4m3fn)))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("bad", [torch.int8, torch.float64, torch.float8_e4m3fn])
def test_unsupported_out_dtype(op, bad):
    with raises(TypeError, op, "'out_dtype'", "bfloat16", f"got {name(bad)}"):
        call_op(good(op).with_(out_dtype=bad))


@pytest.mark.parametrize("op", ["gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"])
def test_fp32_out_only_for_a16w16_and_a8w8(op):
    with raises(TypeError, op, "'out_dtype'", "must be bfloat16 or float16, got float32"):
        call_op(good(op).with_(out_dtype=torch.float32))


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("op", OPS)
def test_k_mismatch(op):
    inp = good(op)
    big = make_inputs(op, M, N, 2 * K, "plain")
    with raises(ValueError, op, "K mismatch", "'a'", "'w'"):
        call_op(inp.with_(w=big.w))


@pytest.mark.parametrize("op", OPS)
def test_k_mismatch_preshuffled(op):
    inp = good(op)
    big = make_inputs(op, M, N, 2 * K, "preshuffled")
    with raises(ValueError, op, "K mismatch"):
        call_op(inp.with_(w=big.w))


@pytest.mark.parametrize("op", OPS)
def test_wrong_rank_a(op):
    inp = good(op)
    with raises(ValueError, op, "'a'", "2-D", "1-D"):
        call_op(inp.with_(a=inp.a[0]))
    with raises(ValueError, op, "'a'", "2-D", "3-D"):
        call_op(inp.with_(a=inp.a[None]))


@pytest.mark.parametrize("op", OPS)
def test_wrong_rank_w(op):
    inp = good(op)
    with raises(ValueError, op, "'w'", "2-D [N, K] (plain) or 4-D", "1-D"):
        call_op(inp.with_(w=inp.w[0]))
    with raises(ValueError, op, "'w'", "3-D"):
        call_op(inp.with_(w=inp.w[None]))
    # 4-D but not [N/16, K/kp, 16, kp].
    n_, ks = inp.w.shape
    kp = 16 // inp.w.element_size()
    with raises(ValueError, op, "'w'", "preshuffled", f"16, {kp}]"):
        call_op(inp.with_(w=inp.w.reshape(n_ // 8, 8, ks // kp, kp).view(inp.w.dtype)))
    with raises(ValueError, op, "'w'", "preshuffled"):
        call_op(inp.with_(w=inp.w.reshape(n_ // 16, ks // (2 * kp), 16, 2 * kp)))


@pytest.mark.parametrize("op", OPS)
def test_preshuffled_w_must_be_contiguous(op):
    inp = good(op, "preshuffled")
    nc = torch.cat([inp.w.view(torch.uint8)] * 2, dim=1)[:, ::2].view(inp.w.dtype)
    assert nc.shape == inp.w.shape and not nc.is_contiguous()
    with raises(ValueError, op, "'w'", "contiguous"):
        call_op(inp.with_(w=nc))


@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
def test_mx_k_multiple_of_32(op):
    inp = good(op)
    k = 48
    a = inp.a[:, : (k // 2 if op == "gemm_mxfp4" else k)]
    w = inp.w[:, : (k // 2 if op == "gemm_mxfp4" else k)]
    with raises(ValueError, op, "K must be a multiple of 32", "K = 48"):
        call_op(inp.with_(a=a, w=w))


def test_preshuffle_constraints():
    with pytest.raises(ValueError, match=r"flygemm\.preshuffle.*N .*multiple of 16.*got 24"):
        flygemm.preshuffle(torch.zeros(24, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"flygemm\.preshuffle.*multiple of 8 .*got 36"):
        flygemm.preshuffle(torch.zeros(32, 36, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"flygemm\.preshuffle.*multiple of 16 .*got 40"):
        flygemm.preshuffle(torch.zeros(32, 40, dtype=torch.int8))
    with pytest.raises(ValueError, match=r"flygemm\.preshuffle.*multiple of 16 .*got 8"):
        flygemm.preshuffle(torch.zeros(32, 8, dtype=torch.uint8).view(torch.float4_e2m1fn_x2))
    with pytest.raises(ValueError, match=r"flygemm\.preshuffle.*'w'.*2-D.*3-D"):
        flygemm.preshuffle(torch.zeros(2, 32, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"flygemm\.unshuffle.*'w'.*preshuffled"):
        flygemm.unshuffle(torch.zeros(32, 64, dtype=torch.bfloat16))
    with pytest.raises(TypeError, match=r"flygemm\.preshuffle: argument 'w' has no preshuffled layout for dtype float64"):
        flygemm.preshuffle(torch.zeros(32, 64, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"flygemm\.unshuffle: argument 'w' has no preshuffled layout for dtype float64"):
        flygemm.unshuffle(torch.zeros(2, 4, 16, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"flygemm\.unshuffle.*'w'.*preshuffled"):
        flygemm.unshuffle(torch.zeros(2, 4, 16, 16, dtype=torch.bfloat16))  # kp is 8 for bf16


# ----------------------------------------------------------------------------- scales


@pytest.mark.parametrize("op", SCALED_OPS)
def test_scale_wrong_dtype(op):
    inp = good(op)
    bad = torch.float16 if op in ("gemm_a8w8", "gemm_a8w8_blockscale") else torch.float32
    want = "float32" if bad == torch.float16 else "float8_e8m0fnu"
    for arg in ("a_scale", "w_scale"):
        s = getattr(inp, arg)
        bad_s = s.to(bad) if bad == torch.float16 else torch.ones(s.shape)
        with raises(TypeError, op, f"'{arg}'", f"must be {want}, got {name(bad_s.dtype)}"):
            call_op(inp.with_(**{arg: bad_s}))


@pytest.mark.parametrize("arg", ["a_scale", "w_scale"])
def test_a8w8_scale_wrong_shape(arg):
    inp = good("gemm_a8w8")
    rows = M if arg == "a_scale" else N
    for bad in (torch.ones(rows + 1), torch.ones(rows, 2), torch.ones(1, rows), torch.ones(rows, 1, 1),
                torch.ones(2)):
        with raises(ValueError, "gemm_a8w8", f"'{arg}'", "1 value (per-tensor)", f"{rows} values"):
            call_op(inp.with_(**{arg: bad}))


@pytest.mark.parametrize("op", ["gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"])
@pytest.mark.parametrize("arg", ["a_scale", "w_scale"])
def test_block_scale_wrong_shape(op, arg):
    inp = good(op)
    s = getattr(inp, arg)
    raw = s.view(torch.uint8) if s.dtype == torch.float8_e8m0fnu else s
    for bad in (raw[:-1], raw[:, :-1], torch.cat([raw, raw], 1), raw.reshape(-1), raw[None]):
        bad = bad.contiguous().view(s.dtype) if s.dtype == torch.float8_e8m0fnu else bad
        with raises(ValueError, op, f"'{arg}'", "must be ["):
            call_op(inp.with_(**{arg: bad}))


@pytest.mark.parametrize("op", SCALED_OPS)
@pytest.mark.parametrize("arg", ["a_scale", "w_scale"])
def test_scale_on_other_device(op, arg):
    inp = good(op)
    with raises(ValueError, op, f"'{arg}'", "same device as 'a' (cpu)", "meta"):
        call_op(inp.with_(**{arg: getattr(inp, arg).to(META)}))


# ----------------------------------------------------------------------------- bias


@pytest.mark.parametrize("op", OPS)
def test_bias_wrong_dtype(op):
    inp = good(op, out_dtype=torch.bfloat16)
    for bad in (torch.float16, torch.float64, torch.int32):
        with raises(TypeError, op, "'bias'", "float32 or the output dtype (bfloat16)", f"got {name(bad)}"):
            call_op(inp.with_(bias=torch.zeros(N, dtype=bad)))


@pytest.mark.parametrize("op", OPS)
def test_bias_wrong_shape(op):
    inp = good(op)
    for bad in (torch.zeros(N + 1), torch.zeros(1), torch.zeros(1, N), torch.zeros(M, N), torch.zeros(())):
        with raises(ValueError, op, "'bias'", f"[N] = [{N}]"):
            call_op(inp.with_(bias=bad))


# ----------------------------------------------------------------------------- devices


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("arg", ["w", "bias"])
def test_tensors_on_different_devices(op, arg):
    inp = good(op, bias_kind="fp32")
    with raises(ValueError, op, f"'{arg}'", "same device as 'a' (cpu)", "meta"):
        call_op(inp.with_(**{arg: getattr(inp, arg).to(META)}))


@pytest.mark.parametrize("op", OPS)
def test_a_on_other_device(op):
    inp = good(op)
    with pytest.raises(ValueError, match=rf"flygemm\.{op}.*same device as 'a' \(meta\).*cpu"):
        call_op(inp.with_(a=inp.a.to(META)))


# ----------------------------------------------------------------------------- out


@pytest.mark.parametrize("op", OPS)
def test_out_wrong_shape(op):
    inp = good(op)
    dt = inp.resolved_out_dtype
    for bad in (torch.empty(M + 1, N, dtype=dt), torch.empty(M, N - 1, dtype=dt), torch.empty(M * N, dtype=dt),
                torch.empty(1, M, N, dtype=dt)):
        with raises(ValueError, op + "_out", "'out'", f"[M, N] = [{M}, {N}]"):
            call_op(inp, out=bad)


@pytest.mark.parametrize("op", OPS)
def test_out_wrong_dtype(op):
    inp = good(op)
    # out_dtype given and disagreeing with out.
    with raises(TypeError, op + "_out", "out_dtype (float16) disagrees with 'out' (bfloat16)"):
        call_op(inp.with_(out_dtype=torch.float16), out=torch.empty(M, N, dtype=torch.bfloat16))
    # out_dtype omitted: out's dtype must be an allowed output dtype.
    for bad in (torch.int8, torch.float64) + ((torch.float32,) if op not in ("gemm_a16w16", "gemm_a8w8") else ()):
        with raises(TypeError, op + "_out", "'out'", "bfloat16", f"got {name(bad)}"):
            call_op(inp, out=torch.empty(M, N, dtype=bad))


@pytest.mark.parametrize("op", OPS)
def test_out_non_unit_inner_stride(op):
    inp = good(op)
    dt = inp.resolved_out_dtype
    with raises(ValueError, op + "_out", "'out'", "unit stride along N"):
        call_op(inp, out=torch.empty(M, 2 * N, dtype=dt)[:, ::2])
    with raises(ValueError, op + "_out", "'out'", "unit stride along N"):
        call_op(inp, out=torch.empty(N, M, dtype=dt).t())


@pytest.mark.parametrize("op", OPS)
def test_out_overlapping_rows(op):
    inp = good(op)
    dt = inp.resolved_out_dtype
    overlapping = torch.empty(M * N, dtype=dt).as_strided((M, N), (N // 2, 1))
    with raises(ValueError, op + "_out", "'out'", "must not overlap"):
        call_op(inp, out=overlapping)


@pytest.mark.parametrize("op", OPS)
def test_out_on_other_device(op):
    inp = good(op)
    with raises(ValueError, op, "'out'", "same device as 'a' (cpu)", "meta"):
        call_op(inp, out=torch.empty(M, N, dtype=inp.resolved_out_dtype, device=META))


def test_out_is_required_by_schema():
    inp = good("gemm_a8w8")
    with pytest.raises(RuntimeError, match="gemm_a8w8_out.*missing value for argument 'out'"):
        ops.gemm_a8w8_out(*inp.args())


@pytest.mark.parametrize("op", SCALED_OPS)
def test_scales_required_by_schema(op):
    inp = good(op)
    with pytest.raises((TypeError, RuntimeError), match=r"a_scale|w_scale|argument"):
        getattr(ops, op)(inp.a, inp.w)


# a16w16 called with scales cannot be expressed: its schema has no scale arguments.


# ----------------------------------------------------------------------------- no crash


def test_bad_calls_do_not_crash_the_process():
    """A batch of bad calls in a fresh process: each raises a Python exception (none aborts,
    segfaults or leaves the process unusable), then a good call still works."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(_PYTHON_DIR)!r})
        import torch, flygemm
        ops = torch.ops.flygemm
        bf = torch.bfloat16
        f8 = torch.float8_e4m3fn
        one = torch.ones(1)
        a16 = torch.randn(4, 64).to(bf); w16 = torch.randn(32, 64).to(bf)
        a8 = a16.float().to(f8); w8 = w16.float().to(f8)
        e8 = torch.full((4, 2), 127, dtype=torch.uint8).view(torch.float8_e8m0fnu)
        calls = [
            lambda: ops.gemm_a16w16(a16.float(), w16.float()),
            lambda: ops.gemm_a16w16(a16, w16[:, :32]),
            lambda: ops.gemm_a16w16(a16, w16.reshape(2, 16, 8, 8)),
            lambda: ops.gemm_a16w16(a16, w16.reshape(-1)),
            lambda: ops.gemm_a16w16(a16[0], w16),
            lambda: ops.gemm_a16w16(a16, w16, torch.zeros(7)),
            lambda: ops.gemm_a16w16(a16, w16, None, torch.int8),
            lambda: ops.gemm_a16w16(a16, w16.to('meta')),
            lambda: ops.gemm_a16w16_out(a16, w16, out=torch.empty(3, 3, dtype=bf)),
            lambda: ops.gemm_a16w16_out(a16, w16, out=torch.empty(64, 4, dtype=bf).t()[:, :32]),
            lambda: ops.gemm_a8w8(a8, w8.view(torch.float8_e4m3fnuz), one, one),
            lambda: ops.gemm_a8w8(a8, w8, torch.ones(5), one),
            lambda: ops.gemm_a8w8(a8, w8, one.half(), one),
            lambda: ops.gemm_a8w8(a8, w8, one.to('meta'), one),
            lambda: ops.gemm_a8w8(a8, w8, torch.ones(0), one),
            lambda: ops.gemm_a8w8_blockscale(a8, w8, one, one),
            lambda: ops.gemm_a8w8_blockscale(a8, w8, torch.ones(4, 1), torch.ones(1, 1), None, torch.float32),
            lambda: ops.gemm_mxfp8(a8, w8, e8, e8),
            lambda: ops.gemm_mxfp8(a8[:, :48], w8[:, :48], e8, e8),
            lambda: ops.gemm_mxfp4(a8, w8, e8, e8),
            lambda: flygemm.preshuffle(w16[:30]),
            lambda: flygemm.preshuffle(w16[:, :60]),
            lambda: flygemm.unshuffle(w16),
            lambda: flygemm.explain('gemm_nope', 1, 1, 1, bf, 'gfx942'),
        ]
        n = 0
        for i, c in enumerate(calls):
            try:
                c()
            except (TypeError, ValueError, RuntimeError, NotImplementedError) as e:
                assert 'flygemm' in str(e), (i, str(e))
                n += 1
            else:
                raise SystemExit(f'call {{i}} did not raise')
        out = ops.gemm_a16w16(a16, w16)
        assert out.shape == (4, 32)
        print('OK', n)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert r.stdout.strip().startswith("OK "), r.stdout
