"""GPU tests of every sm_90a kernel of the Hopper GEMM core, each one pinned with
FLYGEMM_FORCE_KERNEL (skipped without an NVIDIA GPU). The dispatch table only routes a few shapes
to each kernel; tuning candidates (cluster / multicast variants, 256x128 tiles, ...) are checked
here on shapes chosen for their edges:
  * tile counts that are odd in M and in N, so that a 2x1 / 1x2 cluster's partner tile lies past
    the edge of the output (zero-filled by TMA, its store clipped) while its multicast half still
    feeds the other CTA;
  * more tiles than SMs (the persistent loop, pipeline phases carried across tiles);
  * K tails, and odd and even numbers of 128-wide K blocks (the two exits of blockscale's
    overlapped promotion), including a single K block.
Every result is compared with the CPU oracle on fresh random data, written through the _out variant
into a poisoned output with guard rows and padded rows."""
import math
import os

import pytest
import torch

import flygemm
from flygemm import quant
from gpu_outputs import check_guards, guarded_out, rel_fro

pytestmark = pytest.mark.gpu_cuda
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")

FAMILIES = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale")
TORCH_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
               "fp8_e4m3fn": torch.float8_e4m3fn, "int8": torch.int8}
# (M, N, K): tiny (one tile, cluster partners past both edges); odd tile counts with K tails
# (9 K blocks of 128); even K blocks; a single K block; more tiles than SMs.
SHAPES = [(7, 136, 208), (333, 520, 1040), (1000, 392, 1024), (129, 264, 128), (2304, 2056, 512)]


def core_kernels():
    """Names of the sm_90a kernels of the shared Hopper core (not the split-K decode family)."""
    if flygemm is None:
        return []
    try:
        kernels = flygemm.info()["kernels"]
    except Exception:  # noqa: BLE001  (no extension: the other GPU tests report it)
        return []
    return [k["name"] for k in kernels
            if k["arch"] == "sm_90a" and any(k["name"].startswith(f + ".") for f in FAMILIES)]


def kernel_info(name):
    return next(k for k in flygemm.info()["kernels"] if k["name"] == name)


def operands(op, in_dtype, M, N, K, seed):
    """(args before bias, bias) for the op, on the CPU."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(M, K, generator=g) * (0.25 + 4 * torch.rand(M, 1, generator=g))
    w = torch.randn(N, K, generator=g) / math.sqrt(K) * (0.25 + 4 * torch.rand(N, 1, generator=g))
    bias = torch.randn(N, generator=g)
    if op == "gemm_a16w16":
        return (x.to(in_dtype), w.to(in_dtype)), bias
    if op == "gemm_a8w8":
        a, sa = quant.quantize_fp8_per_token(x, in_dtype)
        q, sw = quant.quantize_fp8_per_channel(w, in_dtype)
        return (a, q, sa, sw), bias
    a, sa = quant.quantize_fp8_blockscale_act(x, 128, in_dtype)
    q, sw = quant.quantize_fp8_blockscale_weight(w, 128, in_dtype)
    # scales that differ between K blocks and 128-row groups of W: a block promoted with another
    # block's scale (e.g. the two scratch accumulators of the overlapped promotion swapped) fails
    sa = sa * torch.exp2(torch.randint(-3, 4, sa.shape, generator=g).float())
    sw = sw * torch.exp2(torch.randint(-3, 4, sw.shape, generator=g).float())
    return (a, q, sa, sw), bias


_REFS = {}  # (op, dtypes, shape, bias) -> (args, bias, oracle output): shared by the kernels


def reference(op, in_name, out_name, M, N, K, with_bias):
    key = (op, in_name, out_name, M, N, K, with_bias)
    if key not in _REFS:
        args, bias = operands(op, TORCH_DTYPE[in_name], M, N, K, seed=M * 131 + N * 7 + K)
        bias = bias if with_bias else None
        ref = getattr(torch.ops.flygemm, op)(*args, bias, TORCH_DTYPE[out_name])
        _REFS[key] = (args, bias, ref)
    return _REFS[key]


@requires_cuda
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", core_kernels())
def test_every_core_kernel_matches_oracle(name, shape, monkeypatch):
    k = kernel_info(name)
    op, in_name, out_name = k["op"], k["in_dtype"], k["out_dtype"]
    M, N, K = shape
    k_align = 8 if op == "gemm_a16w16" else 16
    n_align = 1 if op == "gemm_a16w16" else 16 // TORCH_DTYPE[out_name].itemsize
    if K % k_align or N % n_align:
        pytest.skip("shape outside the kernel's alignment contract")
    with_bias = (M + N) % 2 == 1
    args, bias, ref = reference(op, in_name, out_name, M, N, K, with_bias)
    out_dtype = TORCH_DTYPE[out_name]
    buf, view = guarded_out(M, N, out_dtype, "cuda")
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", name)
    getattr(torch.ops.flygemm, op + "_out")(
        *[t.cuda() for t in args], None if bias is None else bias.cuda(), out_dtype, out=view)
    torch.cuda.synchronize()
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
    assert not torch.isnan(view).any(), "output not fully written"
    check_guards(buf, M, N)
    err = rel_fro(view, ref)
    assert err <= 1e-2, f"{name} {shape}: rel err {err:.3e}"


@requires_cuda
@pytest.mark.parametrize("name", core_kernels())
def test_ragged_last_token_tile_is_bitwise_the_aligned_result(name, monkeypatch):
    """A ragged M's last token tile is loaded and stored from row M - tile_m, overlapping the tile before it
    (kernels/cuda/_hopper_gemm.py, m_shift): its rows, the ones computed twice included, are bitwise the first
    M rows of the same GEMM over 384 rows (whole tiles: nothing moved) whose first M rows are the same."""
    k = kernel_info(name)
    op, in_name, out_name = k["op"], k["in_dtype"], k["out_dtype"]
    M, M_full, N, K = 333, 384, 520, 1040
    if op != "gemm_a16w16" and N % (16 // TORCH_DTYPE[out_name].itemsize):
        pytest.skip("shape outside the kernel's alignment contract")
    args, bias, _ = reference(op, in_name, out_name, M_full, N, K, True)
    # the activation and its per-row scales are the arguments 0 and 2; the weight side is shared
    cut = [t[:M] if i in (0, 2) else t for i, t in enumerate(args)]
    out_dtype = TORCH_DTYPE[out_name]
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{name}:1")
    full = getattr(torch.ops.flygemm, op)(*[t.cuda() for t in args], bias.cuda(), out_dtype)
    part = getattr(torch.ops.flygemm, op)(*[t.cuda() for t in cut], bias.cuda(), out_dtype)
    torch.cuda.synchronize()
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
    assert torch.equal(part, full[:M]), f"{name}: rows of M = {M} differ from the whole-tile run"


def split_kernels():
    """Core kernels with a split-K mode (max_split_k > 1)."""
    try:
        return [n for n in core_kernels() if kernel_info(n)["max_split_k"] > 1]
    except Exception:  # noqa: BLE001
        return []


# (M, N, K): ragged M / N / K tail with 9 K tiles of 128 (64 for bf16: 17); few K tiles, so that
# large split_k values are clamped to the K tile count; more work items than SMs; an odd N (the partials
# of a row are then not 8-byte aligned: stored one value at a time instead of in pairs).
SPLIT_SHAPES = [(77, 264, 1040), (128, 520, 128), (200, 1032, 4096), (45, 131, 640)]


@requires_cuda
@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", split_kernels())
def test_split_k_core_kernel_matches_oracle_and_is_deterministic(name, shape, monkeypatch):
    """Every split_k of a split-capable kernel (incl. values that do not divide the K tiles and
    values above the K tile count) against the oracle, poisoned output with guard rows; the
    workspace comes from the caching allocator and is poisoned first; two runs bitwise equal."""
    k = kernel_info(name)
    op, in_name, out_name = k["op"], k["in_dtype"], k["out_dtype"]
    M, N, K = shape
    with_bias = True
    args, bias, ref = reference(op, in_name, out_name, M, N, K, with_bias)
    out_dtype = TORCH_DTYPE[out_name]
    dev_args = [t.cuda() for t in args]
    for split in sorted({2, 3, 5, k["max_split_k"]}):
        # poison what the allocator will hand out as the workspace
        junk = torch.full((split * (M + 256) * N,), float("nan"), device="cuda")
        del junk
        results = []
        for _ in range(2):
            buf, view = guarded_out(M, N, out_dtype, "cuda")
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{name}:{split}")
            getattr(torch.ops.flygemm, op + "_out")(*dev_args, bias.cuda(), out_dtype, out=view)
            torch.cuda.synchronize()
            monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
            assert not torch.isnan(view).any(), f"split_k={split}: output not fully written"
            check_guards(buf, M, N, what=f"split_k={split}")
            err = rel_fro(view, ref)
            assert err <= 1e-2, f"{name} {shape} split_k={split}: rel err {err:.3e}"
            results.append(view.clone())
        assert torch.equal(results[0], results[1]), f"split_k={split}: not bitwise reproducible"


def streamk_kernels():
    """Core kernels with the stream-K schedule (meta stream_k)."""
    try:
        return [n for n in core_kernels() if kernel_info(n)["meta"].get("stream_k")]
    except Exception:  # noqa: BLE001
        return []


# (M, N, K): the split-K shapes; fewer units than SMs (the grid shrinks, every tile is shared by several CTAs);
# a ragged M over two token tiles (the fix-up writes the moved last tile); 80 and 133 tiles of 128 x 128 at
# M = 128 (a partial wave and one tile past a wave: most tiles shared, then most whole); several waves.
STREAMK_SHAPES = SPLIT_SHAPES + [(7, 136, 208), (333, 520, 1040), (128, 10240, 1024), (128, 17024, 512),
                                 (1000, 2056, 768)]


@requires_cuda
@pytest.mark.parametrize("shape", STREAMK_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", streamk_kernels())
def test_stream_k_core_kernel_matches_oracle_and_is_deterministic(name, shape, monkeypatch):
    """split_k = stream-K against the oracle into a poisoned output with guard rows, the workspace (the
    launch's scratch, from the caching allocator) poisoned first; two runs bitwise equal."""
    k = kernel_info(name)
    op, in_name, out_name = k["op"], k["in_dtype"], k["out_dtype"]
    M, N, K = shape
    if op != "gemm_a16w16" and N % (16 // TORCH_DTYPE[out_name].itemsize):
        pytest.skip("shape outside the kernel's alignment contract")
    args, bias, ref = reference(op, in_name, out_name, M, N, K, (M + K) % 2 == 0)
    out_dtype = TORCH_DTYPE[out_name]
    dev_args = [t.cuda() for t in args]
    dev_bias = None if bias is None else bias.cuda()
    junk = torch.full((2 * 132 * k["tile"][0] * k["tile"][1] + 4096,), float("nan"), device="cuda")
    del junk
    results = []
    for _ in range(2):
        buf, view = guarded_out(M, N, out_dtype, "cuda")
        monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{name}:sk")
        getattr(torch.ops.flygemm, op + "_out")(*dev_args, dev_bias, out_dtype, out=view)
        torch.cuda.synchronize()
        monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
        assert not torch.isnan(view).any(), "stream-K: output not fully written"
        check_guards(buf, M, N, what="stream-K")
        err = rel_fro(view, ref)
        assert err <= 1e-2, f"{name} {shape} stream-K: rel err {err:.3e}"
        results.append(view.clone())
    assert torch.equal(results[0], results[1]), "stream-K: not bitwise reproducible"


def scale_ring_pairs():
    """(.stR kernel, its twin without the .stR part) for every such kernel whose twin is built: one of the two loads
    the blockscale scales into the TMA ring, the other copies them into each stage (scale_tma = 0; .st0 names the
    in-stage variant of a token-major tile, whose default is the ring, .st4 the ring variant of a .sw tile)."""
    try:
        names = set(core_kernels())
    except Exception:  # noqa: BLE001
        return []
    pairs = []
    for n in sorted(names):
        parts = n.split(".")
        ring = [p for p in parts if p.startswith("st") and p[2:].isdigit()]
        if ring and ".".join(p for p in parts if p not in ring) in names:
            pairs.append((n, ".".join(p for p in parts if p not in ring)))
    return pairs


# (M, N, K): KB = ceil(K / 128) of 2, 9, 4 and 57 (not multiples of 4: the op layer pads the scale rows), of 8
# and 64; ragged M and N; a work piece of the persistent loop that starts mid-group (the split / stream-K runs).
SCALE_RING_SHAPES = [(7, 136, 208), (333, 520, 1040), (129, 264, 512), (300, 392, 7296), (1000, 2056, 1024),
                     (2304, 1032, 8192)]


@requires_cuda
@pytest.mark.parametrize("shape", SCALE_RING_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("pair", scale_ring_pairs(), ids=lambda p: p[0])
def test_scale_ring_kernel_is_bitwise_its_in_stage_twin(pair, shape, monkeypatch):
    """A kernel with the scales by TMA into a ring computes what its twin (4-byte copies into each stage) does, in
    the same order: bitwise equal outputs, also for scales passed as views that start off a 16-byte boundary
    (the op layer copies them) and for every split mode the pair shares."""
    variant, twin = pair
    k = kernel_info(variant)
    op, out_name = k["op"], k["out_dtype"]
    M, N, K = shape
    args, bias, ref = reference(op, k["in_dtype"], out_name, M, N, K, True)
    a, q, sa, sw = [t.cuda() for t in args]
    # the same values one float past a 16-byte boundary
    sa_off = torch.empty(sa.numel() + 1, device="cuda")[1:].view(sa.shape).copy_(sa)
    sw_off = torch.empty(sw.numel() + 1, device="cuda")[1:].view(sw.shape).copy_(sw)
    out_dtype = TORCH_DTYPE[out_name]
    splits = ["1"] + (["3", "sk"] if k["max_split_k"] > 1 else [])
    for split in splits:
        if split == "sk" and not k["meta"].get("stream_k"):
            continue
        outs = {}
        for name, scales in ((twin, (sa, sw)), (variant, (sa, sw)), (variant + " (offset scales)", (sa_off, sw_off))):
            monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{name.split()[0]}:{split}")
            outs[name] = getattr(torch.ops.flygemm, op)(a, q, *scales, bias.cuda(), out_dtype)
            torch.cuda.synchronize()
            monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")
        assert rel_fro(outs[twin].cpu(), ref) <= 1e-2, f"{twin} split {split}"
        for name, out in outs.items():
            assert torch.equal(out, outs[twin]), f"{name} split {split} differs from {twin}"


def test_forced_kernel_list_is_not_empty_when_built():
    """Collection sanity: with an extension that has sm_90a kernels, the list above is not empty."""
    if flygemm is None or not os.environ.get("FLYGEMM_EXPECT_SM90A"):
        pytest.skip("set FLYGEMM_EXPECT_SM90A=1 to require sm_90a kernels")
    assert core_kernels()
