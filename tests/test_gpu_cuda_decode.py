"""GPU tests of the CUDA split-K decode family (kernels/cuda/gemm_splitk_decode.py; skipped without an
NVIDIA GPU): gemm_a16w16 (bf16), gemm_a8w8 (fp8, per-token/per-channel and per-tensor scales),
gemm_a8w8_blockscale, gemm_mxfp8 and gemm_mxfp4, all with bf16 output, for decode sizes M <= 16; and the dtype twins
of the bf16-output kernels (kernels/configs/sm_90a.twins.csv): fp16 gemm_a16w16, the fp8 ops' fp16 outputs, and the
fp32 outputs of gemm_a16w16 (bf16 / fp16 in) and gemm_a8w8.

Every case runs through the real op (the _out variant writing into a NaN-poisoned view with padded
rows and guard rows), once with the split_k of the dispatch table and once pinned through
FLYGEMM_FORCE_KERNEL=<kernel>:<split_k> to a split_k that does not divide the number of K tiles
(uneven last slice); results are compared with the CPU op (the oracle, rel. Frobenius <= 1e-2)
and a second run must be bitwise identical. A CUDA graph captured once and replayed 100 times with
new inputs copied into its static inputs must equal eager runs bitwise. Operands come from the
flygemm.quant quantizers applied to fresh random data."""
import math

import pytest
import torch

import flygemm
from flygemm import quant
from gpu_outputs import POISON, check_guards, guarded_out, rel_fro

pytestmark = pytest.mark.gpu_cuda
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")

FAMILY = "gemm_splitk_decode"
OPS = ["gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"]
IN_DTYPE = {"gemm_a16w16": torch.bfloat16, "gemm_a8w8": torch.float8_e4m3fn,
            "gemm_a8w8_blockscale": torch.float8_e4m3fn, "gemm_mxfp8": torch.float8_e4m3fn,
            "gemm_mxfp4": torch.float4_e2m1fn_x2}
SHAPES = [(2048, 7168), (16384, 7168), (272, 1056)]
M_VALUES = [1, 2, 7, 16]
M_ORACLE = 16  # operands are made once with 16 rows; smaller M use the leading rows


IN_CODE = {"gemm_a16w16": "bf16", "gemm_mxfp4": "fp4_e2m1_x2"}   # the others: fp8_e4m3fn


def decode_kernels(op=None, dtypes=None):
    """The decode family's kernels of op; of its usual dtypes (bf16 or fp8 / MX in, bf16 out) unless `dtypes`
    gives (in_dtype, out_dtype) codes."""
    def usual(k):
        want = dtypes or (IN_CODE.get(k["op"], "fp8_e4m3fn"), "bf16")
        return (k["in_dtype"], k["out_dtype"]) == tuple(want)
    return [k for k in flygemm.info()["kernels"]
            if k["arch"] == "sm_90a" and k["meta"].get("family") == FAMILY and (op is None or k["op"] == op)
            and usual(k) and ".bnd" not in k["name"]]   # exp/bounds-58: the wrong-result bound twins


def small_k(kernel, k=1056):
    """K for a kernel's small-shape tests: 1056 (a K tail against every tile_k) where the kernel
    takes it, else the next multiple of its K requirement (the MX wgmma kernels take whole k-tiles)."""
    mult = max(1, kernel["requires_k_multiple"])
    return -(-k // mult) * mult


def skip_unless_built(op):
    if not decode_kernels(op):
        pytest.skip(f"no {FAMILY} kernel for {op} in this build")


def make_operands(op, M, N, K, seed, device="cuda", variant="rowwise"):
    """(a, w, a_scale, w_scale) for the op, quantized on `device` from fresh random data whose rows
    have different magnitudes (a scale applied to the wrong row shows), plus an fp32 bias."""
    g = torch.Generator(device=device).manual_seed(seed)
    x = torch.randn(M, K, generator=g, device=device) * (0.25 + 4 * torch.rand(M, 1, generator=g, device=device))
    wf = torch.randn(N, K, generator=g, device=device) / math.sqrt(K)
    wf = wf * (0.25 + 4 * torch.rand(N, 1, generator=g, device=device))
    bias = torch.randn(N, generator=g, device=device)
    if op == "gemm_a16w16":
        return (x.to(torch.bfloat16), wf.to(torch.bfloat16)), bias
    if op == "gemm_a8w8":
        if variant == "per_tensor":
            a, sa = quant.quantize_fp8_per_tensor(x)
            w, sw = quant.quantize_fp8_per_tensor(wf)
        else:
            a, sa = quant.quantize_fp8_per_token(x)
            w, sw = quant.quantize_fp8_per_channel(wf)
        return (a, w, sa, sw), bias
    if op == "gemm_a8w8_blockscale":
        a, sa = quant.quantize_fp8_blockscale_act(x)
        w, sw = quant.quantize_fp8_blockscale_weight(wf)
        return (a, w, sa, sw), bias
    quantize = quant.quantize_mxfp8 if op == "gemm_mxfp8" else quant.quantize_mxfp4
    a, sa = quantize(x)
    w, sw = quantize(wf)
    if variant == "random_scales":
        # every 32-block its own E8M0 exponent (2^-9 .. 2^9): a scale applied to the wrong block shows
        def rand_scales(s):
            return torch.randint(118, 137, s.shape, generator=g, device=device, dtype=torch.uint8).view(s.dtype)
        sa, sw = rand_scales(sa), rand_scales(sw)
    return (a, w, sa, sw), bias


def rows(args, op, M):
    """The operands of the first M tokens (activation and, except per-tensor, its scale)."""
    if op == "gemm_a16w16":
        return (args[0][:M], args[1])
    a, w, sa, sw = args
    return (a[:M], w, sa if sa.numel() == 1 else sa[:M], sw)


_CACHE = {}


def problem(op, N, K, variant="rowwise"):
    """Device operands with M_ORACLE rows and the CPU oracle for them (computed once)."""
    key = (op, N, K, variant)
    if key not in _CACHE:
        seed = N * 31 + K * 7 + OPS.index(op) + (1000 if variant == "per_tensor" else 0)
        args, bias = make_operands(op, M_ORACLE, N, K, seed=seed, variant=variant)
        ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in args), bias.cpu())
        _CACHE.clear()  # keep one problem alive (the 16384 x 7168 weights are large)
        _CACHE[key] = (args, bias, ref)
    return _CACHE[key]


def run_out(op, args, bias, M, N):
    buf, view = guarded_out(M, N, torch.bfloat16, "cuda")
    getattr(torch.ops.flygemm, op + "_out")(*args, bias, None, out=view)
    torch.cuda.synchronize()
    return buf, view


def each_pinned_case(kernels, K, monkeypatch):
    """(kernel:split_k, M) for every kernel that takes K, pinned through FLYGEMM_FORCE_KERNEL at split_k 1, one that
    does not divide its K tiles, and 16, each at M = 1 / 7 / 16."""
    for k in kernels:
        if K % max(1, k["requires_k_multiple"]):
            continue
        kt = -(-K // k["tile"][2])
        for s in sorted({1, non_dividing_split(kt), 16}):
            pin = f"{k['name']}:{s}"
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", pin)
            for M in (1, 7, 16):
                yield pin, M


def check_twice(call, M, N, expect, label, out_dtype=torch.float16):
    """call(out) writes an [M, N] result of out_dtype into out: twice into NaN-poisoned outputs with guard rows, each
    fully written with the guards intact, within 1e-2 (relative Frobenius) of expect, the two bitwise equal."""
    views = []
    for _ in range(2):
        buf, view = guarded_out(M, N, out_dtype, "cuda")
        call(view)
        torch.cuda.synchronize()
        assert not torch.isnan(view).any(), f"{label}: output not fully written"
        check_guards(buf, M, N)
        views.append(view)
    err = rel_fro(views[0], expect)
    assert err <= 1e-2, f"{label}: rel err {err:.3e}"
    assert torch.equal(views[0], views[1]), f"{label}: two runs differ"


def non_dividing_split(kt):
    """A split_k that does not divide the kt K tiles (uneven last slice)."""
    for s in (3, 5, 7, 6, 9, 11, 13):
        if kt % s != 0:
            return s
    return 2


def table_choice(op, M, N, K):
    """(kernel, split_k) the dispatch table picks; a row of another family (gemm_a16w16 at
    2048 x 7168 for M > 8 ties with an earlier tuned row) is replaced by this family's m16n32 tile."""
    c = flygemm.explain(op, M, N, K, IN_DTYPE[op], "cuda")
    if c["kernel"].startswith(FAMILY):
        return c["kernel"], c["split_k"]
    tm = 8 if M <= 8 else 16
    name = next(k["name"] for k in decode_kernels(op) if k["tile"][:2] == [tm, 32])
    return name, 4


def check_case(op, M, N, K, kernel, split_k, monkeypatch, variant="rowwise", bias_on=True):
    args, bias, ref = problem(op, N, K, variant)
    a = rows(args, op, M)
    b = bias if bias_on else None
    expect = ref[:M] if bias_on else ref[:M] - bias.cpu().reshape(1, -1)
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{kernel}:{split_k}")
    buf, view = run_out(op, a, b, M, N)
    assert not torch.isnan(view).any(), f"{kernel}:{split_k}: output not fully written"
    check_guards(buf, M, N)
    err = rel_fro(view, expect)
    assert err <= 1e-2, f"{kernel}:{split_k} M={M} N={N} K={K}: rel err {err:.3e}"
    buf2, view2 = run_out(op, a, b, M, N)
    assert torch.equal(view, view2), f"{kernel}:{split_k}: two runs differ"
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")


@requires_cuda
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("N,K", SHAPES)
def test_decode_matches_oracle(op, N, K, monkeypatch):
    """Every M in {1, 2, 7, 16}: the table's kernel and split_k, and the same kernel with a
    split_k that does not divide the K tiles; the decode kernels serve M <= 16."""
    skip_unless_built(op)
    for M in M_VALUES:
        kernel, split_k = table_choice(op, M, N, K)
        kt = -(-K // next(k["tile"][2] for k in decode_kernels(op) if k["name"] == kernel))
        for s in sorted({split_k, non_dividing_split(kt)}):
            check_case(op, M, N, K, kernel, s, monkeypatch, bias_on=(M % 2 == 1))


@requires_cuda
@pytest.mark.parametrize("op", OPS)
def test_every_decode_kernel_small_shape(op, monkeypatch):
    """Each specialization (m8/m16 tiles, 32/64-row CTAs) on the ragged shape 272 x 1056, with
    split_k 1, a non-dividing one, and 16 (more slices than K tiles: empty slices write zeros)."""
    skip_unless_built(op)
    N = 272
    for k in decode_kernels(op):
        K = small_k(k)
        kt = -(-K // k["tile"][2])
        for s in sorted({1, non_dividing_split(kt), 16}):
            for M in (7, 16):
                check_case(op, M, N, K, k["name"], s, monkeypatch)


@requires_cuda
def test_fp16_twin_kernels_match_oracle(monkeypatch):
    """Every fp16 gemm_a16w16 decode kernel (the twins of the bf16 ones: the f16 mma, fp16 output rounded once)
    pinned at M = 1 / 7 / 16 on the ragged N = 272 with its small K and with K = 7168 (rings wrap, bulk slots are
    reused), split_k 1, one that does not divide the K tiles, and 16; fp16 operands, bias on odd M, the fp16 CPU
    oracle; NaN-poisoned fp16 output with guard rows, two runs bitwise equal. Then through the dispatch table at
    the issue-5 shapes: the fp16 pick is the bf16 pick's twin."""
    twins = decode_kernels("gemm_a16w16", ("fp16", "fp16"))
    if not twins:
        pytest.skip("no fp16 gemm_a16w16 decode kernel in this build")
    N, M_MAX = 272, 16
    g = torch.Generator().manual_seed(1616)
    for K in sorted({small_k(k) for k in twins} | {7168}):
        x = (torch.randn(M_MAX, K, generator=g) * (0.25 + 4 * torch.rand(M_MAX, 1, generator=g))).half()
        w = (torch.randn(N, K, generator=g) / math.sqrt(K)).half()
        bias = torch.randn(N, generator=g)
        ref = torch.ops.flygemm.gemm_a16w16(x, w, bias)
        assert ref.dtype == torch.float16
        xd, wd, bd = x.cuda(), w.cuda(), bias.cuda()
        for pin, M in each_pinned_case(twins, K, monkeypatch):
            b = bd if M % 2 else None
            expect = ref[:M] if M % 2 else ref[:M].float() - bias.reshape(1, -1)
            check_twice(lambda out: torch.ops.flygemm.gemm_a16w16_out(xd[:M], wd, b, None, out=out),
                             M, N, expect, f"{pin} M={M} K={K}")
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
    for M, N_, K_ in [(1, 2048, 7168), (16, 2048, 7168), (1, 16384, 7168), (16, 16384, 7168)]:
        bf = flygemm.explain("gemm_a16w16", M, N_, K_, torch.bfloat16, "cuda")
        fp = flygemm.explain("gemm_a16w16", M, N_, K_, torch.float16, "cuda")
        assert fp["kernel"] == bf["kernel"].replace(".bf16.bf16.", ".fp16.fp16.", 1), (M, N_, K_, bf, fp)
        assert fp["split_k"] == bf["split_k"]


# (op, in dtype, out dtype) of the decode kernels that copy the bf16-output default rows (sm_90a.twins.csv rows=default)
OUT_TWINS = [("gemm_a8w8", "fp8_e4m3fn", "fp16"), ("gemm_a8w8_blockscale", "fp8_e4m3fn", "fp16"),
             ("gemm_a8w8", "fp8_e4m3fn", "fp32"), ("gemm_a16w16", "bf16", "fp32"), ("gemm_a16w16", "fp16", "fp32")]
TORCH_OF = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@requires_cuda
@pytest.mark.parametrize("op,in_code,out_code", OUT_TWINS, ids=lambda v: v)
def test_out_dtype_twin_kernels_match_oracle(op, in_code, out_code, monkeypatch):
    """Every decode kernel of an op's fp16 or fp32 output (the twins of the bf16-output ones: the same kernel, the
    epilogue or the split-K reduce rounds once to the output dtype) pinned at M = 1 / 7 / 16 on the ragged N = 272 with
    its small K and with K = 7168, split_k 1, one that does not divide the K tiles, and 16; per-token / per-channel
    (blockscale: block) scales, bias on odd M, the CPU oracle with that output dtype; NaN-poisoned output with guard
    rows, two runs bitwise equal. Then through the dispatch table at the issue-5 shapes: a twin from the default rows,
    never the one 128 x 128 tile every such call ran before."""
    twins = decode_kernels(op, (in_code, out_code))
    if not twins:
        pytest.skip(f"no {in_code} -> {out_code} {op} decode kernel in this build")
    N, out_dtype = 272, TORCH_OF[out_code]
    for K in sorted({small_k(k) for k in twins} | {7168}):
        args, bias, _ = problem(op, N, K)
        if in_code == "fp16":  # gemm_a16w16's fp16 operands: the bf16 problem's values, rounded to fp16
            args = tuple(t.half() for t in args)
        ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in args), bias.cpu(), out_dtype)
        assert ref.dtype == out_dtype
        op_out = getattr(torch.ops.flygemm, op + "_out")
        for pin, M in each_pinned_case(twins, K, monkeypatch):
            b = bias if M % 2 else None
            expect = ref[:M] if M % 2 else ref[:M].float() - bias.cpu().reshape(1, -1)
            check_twice(lambda out: op_out(*rows(args, op, M), b, out_dtype, out=out),
                        M, N, expect, f"{pin} M={M} K={K}", out_dtype)
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
    for M, N_, K_ in [(1, 2048, 7168), (16, 2048, 7168), (1, 16384, 7168), (16, 16384, 7168)]:
        fp = flygemm.explain(op, M, N_, K_, args[0].dtype, "cuda", out_dtype=out_dtype)
        assert f".{in_code}.{out_code}." in fp["kernel"] and fp["source"] == "default", (M, N_, K_, fp)
        assert ".t128x128x" not in fp["kernel"], (M, N_, K_, fp)


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale"])
def test_smem_ring_kernels_over_many_rounds(op, monkeypatch):
    """The cp.async weight-ring kernels (meta w_stages > 0) on a K long enough for the ring to wrap
    several times (K = 7168: 7 to 14 rounds per CTA against 4-5 slots), ragged N, split_k 1 and one
    that does not divide the K tiles."""
    ring = [k for k in decode_kernels(op) if k["meta"].get("w_stages", 0) > 0]
    if not ring:
        pytest.skip(f"no smem-ring decode kernel for {op} in this build")
    N, K = 272, 7168
    for k in ring:
        kt = -(-K // k["tile"][2])
        for s in sorted({1, non_dividing_split(kt)}):
            for M in (1, 16):
                check_case(op, M, N, K, k["name"], s, monkeypatch)


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"])
def test_wgmma_kernels_over_many_rounds(op, monkeypatch):
    """The wgmma decode kernels (meta mma wgmma...) over K = 7168 (14 rounds per CTA: both
    activation buffers and weight register sets reused many times), ragged N (rows past N clamped),
    M = 1 / 7 / 16 (one or two token tiles of the B operand), split_k 1 and one that does not divide
    the K tiles, per-token and per-tensor scales; MX also with a random E8M0 exponent per block."""
    wg = [k for k in decode_kernels(op) if str(k["meta"].get("mma", "")).startswith("wgmma")]
    if not wg:
        pytest.skip(f"no wgmma decode kernel for {op} in this build")
    N, K = 272, 7168
    variants = {"gemm_a8w8": ["rowwise", "per_tensor"], "gemm_mxfp8": ["rowwise", "random_scales"],
                "gemm_mxfp4": ["rowwise", "random_scales"]}.get(op, ["rowwise"])
    for k in wg:
        kt = -(-K // k["tile"][2])
        for variant in variants:
            for s in sorted({1, non_dividing_split(kt)}):
                for M in (1, 7, 16):
                    check_case(op, M, N, K, k["name"], s, monkeypatch, variant=variant)


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
def test_mx_bf16_kernels_over_several_token_tiles(op, monkeypatch):
    """The MX bf16-wgmma decode kernels (meta mx_bf16: tile_m up to 64, the E8M0 scales folded into
    both operands) with M from part of one token tile to more than one (17, 40, 64, 70), ragged N,
    K = 7168 (many rounds and activation stages), split_k 1 and one that does not divide the K tiles,
    quantized and random per-block scales; NaN-poisoned output with guard rows, two runs bitwise equal."""
    wgb = [k for k in decode_kernels(op) if k["meta"].get("mx_bf16")]
    if not wgb:
        pytest.skip(f"no mx_bf16 decode kernel for {op} in this build")
    N, K, M_MAX = 272, 7168, 70
    for variant in ("rowwise", "random_scales"):
        args, bias = make_operands(op, M_MAX, N, K, seed=4242 + len(variant), variant=variant)
        ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in args), bias.cpu())
        for k in wgb:
            kt = -(-K // k["tile"][2])
            for s in sorted({1, non_dividing_split(kt)}):
                monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{k['name']}:{s}")
                for M in (17, 40, 64, M_MAX):
                    a = rows(args, op, M)
                    buf, view = run_out(op, a, bias, M, N)
                    assert not torch.isnan(view).any(), f"{k['name']}:{s} M={M}: output not fully written"
                    check_guards(buf, M, N)
                    err = rel_fro(view, ref[:M])
                    assert err <= 1e-2, f"{k['name']}:{s} M={M} {variant}: rel err {err:.3e}"
                    _, view2 = run_out(op, a, bias, M, N)
                    assert torch.equal(view, view2), f"{k['name']}:{s} M={M}: two runs differ"
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"])
def test_bulk_kernels_reuse_their_ring(op, monkeypatch):
    """The bulk-copy decode kernels (meta w_bulk > 0) over K = 12288: more rounds per CTA than ring
    slots (each slot refilled after the barrier of its round), ragged N (weight rows past N re-read
    row N - 1), M = 1 / 5 / 16 (activation rows past M zeroed once, never copied), split_k 1 and one
    that does not divide the K tiles (a partial last round: stale slot bytes masked), with and
    without bias; fp8 also with per-tensor scales, MX also with a random E8M0 exponent per block."""
    bulk = [k for k in decode_kernels(op) if k["meta"].get("w_bulk", 0) > 0]
    if not bulk:
        pytest.skip(f"no bulk-copy decode kernel for {op} in this build")
    N, K = 264, 12288
    for k in bulk:
        rounds = -(-(-(-K // k["tile"][2])) // k["meta"]["warps_k"])
        assert rounds > k["meta"]["w_bulk"], "the shape must reuse the ring"
        kt = -(-K // k["tile"][2])
        for variant in {"gemm_a8w8": ["rowwise", "per_tensor"],
                        "gemm_mxfp8": ["rowwise", "random_scales"],
                        "gemm_mxfp4": ["rowwise", "random_scales"]}.get(op, ["rowwise"]):
            for s in sorted({1, non_dividing_split(kt)}):
                for M in (1, 5, 16):
                    check_case(op, M, N, K, k["name"], s, monkeypatch, variant=variant, bias_on=(M != 5))


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
def test_mx_decode_random_block_scales(op, monkeypatch):
    """MX decode with a random E8M0 exponent per 32-block of A and W (quantized data keeps the
    block exponents of a row within a few binades; here they spread over 18), M = 1 / 16, the
    table's kernel and split_k and a split_k that does not divide the K tiles."""
    skip_unless_built(op)
    N, K = 2048, 7168
    for M in (1, 16):
        kernel, split_k = table_choice(op, M, N, K)
        for s in sorted({split_k, 3}):
            check_case(op, M, N, K, kernel, s, monkeypatch, variant="random_scales")


def check_nan_row_and_column(op, args, bias, M, N, K, monkeypatch):
    """args poisoned so that the oracle's output is NaN in weight row 5's column and token 3's row (and only
    there): every decode kernel of op taking K, split_k 1 and 3, must be non-finite exactly there (NaN, or inf
    where a kernel saturates a scale factor) and match the oracle elsewhere."""
    ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in args), bias.cpu())
    nan_ref = torch.isnan(ref)
    assert nan_ref[:, 5].all() and nan_ref[3].all() and nan_ref.sum() == M + N - 1
    for k in decode_kernels(op):
        if K % max(1, k["requires_k_multiple"]):
            continue
        for s in (1, 3):
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{k['name']}:{s}")
            buf, view = run_out(op, args, bias, M, N)
            check_guards(buf, M, N)
            out = view.float().cpu()
            assert not torch.isfinite(out[nan_ref]).any(), f"{k['name']}:{s}: finite where NaN"
            err = rel_fro(out[~nan_ref], ref[~nan_ref])
            assert err <= 1e-2, f"{k['name']}:{s}: rel err {err:.3e}"
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
def test_mx_decode_special_scale_bytes(op, monkeypatch):
    """E8M0 0xFF is NaN and 0x00 is 2^-127: one weight block and one activation block get 0xFF, another
    weight block 0x00. Every MX decode kernel, split_k 1 and 3, M = 16: the oracle's NaN output row
    (weight) and column (token) must be non-finite (NaN, or inf where a kernel saturates the scale
    factor instead of carrying the NaN), the rest must match the oracle."""
    skip_unless_built(op)
    N, K, M = 272, 7168, 16
    (a, w, sa, sw), bias = make_operands(op, M, N, K, seed=77)
    sa, sw = sa.clone(), sw.clone()
    sw.view(torch.uint8)[5, 17] = 255
    sw.view(torch.uint8)[9, 3] = 0
    sa.view(torch.uint8)[3, 100] = 255
    check_nan_row_and_column(op, (a, w, sa, sw), bias, M, N, K, monkeypatch)


@requires_cuda
def test_mxfp8_decode_nan_elements(monkeypatch):
    """e4m3fn NaN codes in the data (0x7F in a weight, 0xFF in an activation): every MXFP8 decode kernel,
    split_k 1 and 3, M = 16 must give a non-finite output where the oracle's is NaN (the weight's column,
    the token's row) and match the oracle elsewhere. The bf16-wgmma kernels decode e4m3 by a bit move that
    would turn the code into a finite 480, so they give such a block a NaN scale factor."""
    op = "gemm_mxfp8"
    skip_unless_built(op)
    N, K, M = 272, 7168, 16
    (a, w, sa, sw), bias = make_operands(op, M, N, K, seed=91)
    a, w = a.clone(), w.clone()
    w.view(torch.uint8)[5, 1000] = 0x7F
    a.view(torch.uint8)[3, 2049] = 0xFF
    check_nan_row_and_column(op, (a, w, sa, sw), bias, M, N, K, monkeypatch)


@requires_cuda
def test_a8w8_per_tensor_scales(monkeypatch):
    skip_unless_built("gemm_a8w8")
    for M in (1, 16):
        kernel, split_k = table_choice("gemm_a8w8", M, 2048, 7168)
        for s in sorted({split_k, 3}):
            check_case("gemm_a8w8", M, 2048, 7168, kernel, s, monkeypatch, variant="per_tensor")


@requires_cuda
def test_decode_m_above_tile(monkeypatch):
    """A forced decode kernel still handles M larger than its tile (grid.z over token tiles)."""
    skip_unless_built("gemm_a16w16")
    N, K, M = 272, 1056, 37
    args, bias = make_operands("gemm_a16w16", M, N, K, seed=5)
    ref = torch.ops.flygemm.gemm_a16w16(*(t.cpu() for t in args), bias.cpu())
    for k in decode_kernels("gemm_a16w16"):
        for s in (1, 3):
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{k['name']}:{s}")
            buf, view = run_out("gemm_a16w16", args, bias, M, N)
            check_guards(buf, M, N)
            assert rel_fro(view, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("split_k", ["table", 3])
def test_decode_cuda_graph_replay(op, split_k, monkeypatch):
    """Capture once (M = 7, 2048 x 7168), replay 100 times with new inputs copied into the static
    inputs: every replay equals an eager run bitwise (split_k > 1 allocates the workspace inside
    the captured region)."""
    skip_unless_built(op)
    M, N, K = 7, 2048, 7168
    kernel, table_split = table_choice(op, M, N, K)
    graph_replay_case(op, M, N, K, f"{kernel}:{table_split if split_k == 'table' else split_k}", monkeypatch)


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_mxfp8", "gemm_mxfp4"])
@pytest.mark.parametrize("split_k", [1, 3])
def test_image_kernels_cuda_graph_replay(op, split_k, monkeypatch):
    """The .img kernels (meta a_image: a first kernel writes the activation image into the op's scratch, the GEMM
    runs as its programmatic dependent) captured in a CUDA graph: the PDL edge and the scratch allocation inside
    the captured region, 20 replays with new inputs equal to eager runs."""
    img = [k for k in decode_kernels(op) if k["meta"].get("a_image")]
    if not img:
        pytest.skip(f"no a_image decode kernel for {op} in this build")
    for k in img:
        graph_replay_case(op, min(k["tile"][0], 40) - 3, 272, 7168, f"{k['name']}:{split_k}", monkeypatch,
                          replays=20)


@requires_cuda
@pytest.mark.parametrize("kernel", ["gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a",
                                    "gemm_a16w16.bf16.bf16.t128x128x64.sk8.sm90a"])
def test_stream_k_cuda_graph_replay(kernel, monkeypatch):
    """The stream-K schedule (split_k -1; kernels/cuda/_hopper_gemm.py) captured in a CUDA graph: its scratch (the
    later parts' slots and the flags) allocated inside the captured region and its flag token fixed in the graph;
    the reader resets every flag it consumed, so each of 20 replays with new inputs equals an eager run. 32 tiles of
    16 / 32 K tiles over 132 CTAs: every tile is shared by about four CTAs."""
    if not any(k["name"] == kernel for k in flygemm.info()["kernels"]):
        pytest.skip(f"{kernel} not in this build")
    graph_replay_case(kernel.split(".")[0], 128, 4096, 2048, f"{kernel}:sk", monkeypatch, replays=20)


def graph_replay_case(op, M, N, K, force, monkeypatch, replays=100):
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", force)
    flygemm.warmup("cuda")
    static, bias = make_operands(op, M, N, K, seed=0)
    static = tuple(t.clone() for t in static)
    fn = getattr(torch.ops.flygemm, op)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn(*static, bias)  # warm on the capture stream
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out_static = fn(*static, bias)
    for i in range(replays):
        new, _ = make_operands(op, M, N, K, seed=100 + i)
        for dst, src in zip(static, new):  # byte copies: float4 / e8m0 tensors have no conversions
            dst.view(torch.uint8).copy_(src.view(torch.uint8))
        out_static.fill_(POISON)
        graph.replay()
        eager = fn(*static, bias)
        torch.cuda.synchronize()
        assert torch.equal(out_static, eager), f"replay {i} differs from eager"
    ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in static), bias.cpu())
    assert rel_fro(out_static, ref) <= 1e-2


# (op, M bucket) -> the decode kernel its default row sends these small untuned shapes to (sm_90a.csv: the wgmma
# kernels for blockscale since the seventh session of 2026-11-30, bf16's bulk-ring kernel since the twenty-second
# session, fp8's first M <= 8 row, the 16-row bulk-ring kernel, since the twenty-fifth: it fits in one wave here;
# blockscale's 32-row bulk-ring kernel since the twenty-sixth)
DECODE_DEFAULT = {("gemm_a8w8", 8): ".m8n16.w6.bk1.", ("gemm_a8w8_blockscale", 8): ".m8n32.w4.bk2.",
                  ("gemm_a16w16", 8): ".m8n32.w4.bk2."}
# M = 9..16 of bf16 and fp8 per-tensor / per-token: the swapped-operand tile kernels (twenty-second session),
# blockscale's since the twenty-sixth
SWAPPED_DEFAULT = {"gemm_a8w8": "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.",
                   "gemm_a16w16": "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.",   # 64-row tiles first since the 25th
                   "gemm_a8w8_blockscale": "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw."}


# Layers with no exact row where a default list opens with a bulk-ring kernel at split 1 (sixty-fifth session):
# (op, M bucket, N, K) -> the kernel; at 4104 x 3072 the 16-column kernels are past their wave and the 32-column ones
# (bf16 M = 9..16, fp8 M <= 8) take it
RING_DEFAULT = {("gemm_a16w16", 16, 1536, 3072): ".m16n16.w8.bk3.np.",
                ("gemm_a16w16", 16, 4104, 3072): ".m16n32.w4.bk2.np.",
                ("gemm_a8w8", 16, 1536, 3072): ".m16n16.w7.bk4.rr.np.",
                ("gemm_a8w8_blockscale", 16, 1536, 3072): ".m16n16.w7.bk3.np.",
                ("gemm_a16w16", 8, 1536, 3072): ".m8n16.w7k256.bk2.", ("gemm_a8w8", 8, 1536, 3072): ".m8n16.w7.bk4.np.",
                ("gemm_a8w8", 8, 4104, 3072): ".m8n32.w4.bk2.np.",
                ("gemm_a8w8_blockscale", 8, 1536, 3072): ".m8n16.w7.bk4.np."}


@requires_cuda
def test_decode_is_the_default_for_small_m():
    """The default rows send M <= 16 of every op of this family to a decode kernel (DECODE_DEFAULT), except
    M = 9..16 of bf16, fp8 and blockscale, which go to the .sw tile kernels (SWAPPED_DEFAULT) with automatic split_k;
    and bf16, fp8 and blockscale to a bulk-ring kernel at split 1 where one fits (RING_DEFAULT). Shapes with measured
    rows (tools/tune.py) follow their measurement instead, so only untuned shapes are checked here."""
    for op in OPS:
        if not decode_kernels(op):
            continue
        for M in (1, 8, 9, 16):
            for N, K in [(272, 1056), (4104, 3072), (1536, 3072)]:
                c = flygemm.explain(op, M, N, K, IN_DTYPE[op], "cuda")
                bucket = 8 if M <= 8 else 16
                if (op, bucket, N, K) in RING_DEFAULT:
                    ring = RING_DEFAULT[op, bucket, N, K]
                    assert c["kernel"].startswith(FAMILY) and ring in c["kernel"], (op, M, N, K, c)
                    assert c["split_k"] == 1, (op, M, N, K, c)
                    continue
                if M > 8 and op in SWAPPED_DEFAULT:
                    assert c["kernel"].startswith(SWAPPED_DEFAULT[op]), (op, M, N, K, c)
                    continue
                assert c["kernel"].startswith(FAMILY), (op, M, N, K, c)
                if (op, bucket) in DECODE_DEFAULT:
                    assert DECODE_DEFAULT[op, bucket] in c["kernel"], (op, M, N, K, c)


@requires_cuda
@pytest.mark.parametrize("op", ["gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale"])
def test_ring_default_rows_match_oracle(op, monkeypatch):
    """The bulk-ring kernels the default rows pick at split 1 (RING_DEFAULT) on those layers and at 2112 x 2048 (the
    16-column kernels' last N in one wave), at the table's split and a non-dividing one, M = 1 / 8 (the M <= 8 lists)
    and 9 / 16 (M = 9..16), odd M with bias."""
    cases = sorted({(N, K, b) for (o, b, N, K) in RING_DEFAULT if o == op} | {(2112, 2048, 8), (2112, 2048, 16)})
    for N, K, bucket in cases:
        for M in ((1, 8) if bucket == 8 else (9, 16)):
            c = flygemm.explain(op, M, N, K, IN_DTYPE[op], "cuda")
            assert c["kernel"].startswith(FAMILY), (op, M, N, K, c)
            kt = -(-K // next(k["tile"][2] for k in decode_kernels(op) if k["name"] == c["kernel"]))
            for s in sorted({c["split_k"], non_dividing_split(kt)}):
                check_case(op, M, N, K, c["kernel"], s, monkeypatch, bias_on=(M % 2 == 1))


@requires_cuda
@pytest.mark.parametrize("op", OPS)
def test_decode_strided_activation(op, monkeypatch):
    """Activation rows with padding (lda > K, in storage elements: packed bytes for fp4)."""
    skip_unless_built(op)
    M, N = 7, 272
    for K in sorted({small_k(k) for k in decode_kernels(op)}):
        args, bias = make_operands(op, M, N, K, seed=9)
        a = args[0]
        nbytes = a.shape[1] * a.element_size()
        wide = torch.zeros(M, nbytes + 64, dtype=torch.uint8, device="cuda")
        wide[:, :nbytes] = a.view(torch.uint8)
        strided = wide.view(a.dtype)[:, :a.shape[1]]  # row stride: 64 bytes more than a row
        assert strided.stride(0) > strided.shape[1]
        ref = getattr(torch.ops.flygemm, op)(*(t.cpu() for t in args), bias.cpu())
        for k in (k for k in decode_kernels(op) if small_k(k) == K):
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{k['name']}:3")
            buf, view = run_out(op, (strided,) + tuple(args[1:]), bias, M, N)
            check_guards(buf, M, N)
            assert rel_fro(view, ref) <= 1e-2, k["name"]


def offset_copy(t, offset=1):
    """t's values in a view that starts `offset` bytes into a fresh buffer (a misaligned pointer)."""
    raw = torch.empty(t.numel() * t.element_size() + 16, dtype=torch.uint8, device=t.device)
    view = raw[offset:offset + t.numel() * t.element_size()].view(t.dtype).view(t.shape)
    view.copy_(t)
    return view


@requires_cuda
def test_mx_decode_misaligned_scale_views(monkeypatch):
    """E8M0 scale views that start off a word boundary (the MXFP4 bulk kernel copies scales in 4-byte
    words): the op layer copies them to an aligned buffer, results equal those of aligned scales."""
    op = "gemm_mxfp4"
    skip_unless_built(op)
    N, K = 2048, 7168
    args, bias, ref = problem(op, N, K, "random_scales")
    for M in (1, 16):
        kernel, split_k = table_choice(op, M, N, K)
        a, w, sa, sw = rows(args, op, M)
        monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{kernel}:{split_k}")
        _, aligned_out = run_out(op, (a, w, sa, sw), bias, M, N)
        buf, view = run_out(op, (a, w, offset_copy(sa, 1), offset_copy(sw, 3)), bias, M, N)
        check_guards(buf, M, N)
        assert torch.equal(view, aligned_out), f"{kernel}: misaligned scales changed the result"
        assert rel_fro(view, ref[:M]) <= 1e-2
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
