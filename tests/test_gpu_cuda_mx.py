"""GPU tests of gemm_mxfp8 / gemm_mxfp4 beyond decode sizes on CUDA (skipped without an NVIDIA GPU): the
regrouping into e4m3 + 1x128 / 128x128 fp32 scales followed by the fp8 blockscale GEMM (the default,
kernels/cuda/gemm_mxfp.py to=blockscale), and the exact MX -> bf16 conversion followed by the bf16 GEMM (fp16
outputs; forced here with FLYGEMM_FORCE_KERNEL).

Every case runs the real op's _out variant into a NaN-poisoned view with padded and guard rows and
compares with the CPU op (the oracle) on the same quantized inputs (relative Frobenius error <= 1e-2),
for both weight layouts, with and without bias, M in {65, 128, 1000, 4097} (M <= 64 runs the decode kernels:
their bucket is checked the same way here at M in {17, 40, 64}) and K not a multiple of the GEMM's k tile. Extreme E8M0 scales (bytes near 190 and 64) must stay exact, unlike a bf16 scale
multiply. A CUDA graph captured after warmup and replayed with new inputs must equal eager runs."""
import math

import pytest
import torch

import flygemm
from flygemm import quant
from gpu_outputs import check_guards, guarded_out, rel_fro

pytestmark = pytest.mark.gpu_cuda
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")

OPS = {"gemm_mxfp8": (quant.quantize_mxfp8, torch.float8_e4m3fn),
       "gemm_mxfp4": (quant.quantize_mxfp4, torch.float4_e2m1fn_x2)}
SHAPES = [(256, 1056), (1008, 4096)]  # N = 1008: a multiple of 16 (preshuffle), not of a tile
M_VALUES = [65, 128, 1000, 4097]
DECODE_M_VALUES = [17, 40, 64]   # the MX decode bucket up to M = 64 (sm_90a.csv): several M tiles, the last ragged


def converter_built(op, role="mx_to_bf16"):
    return any(k["arch"] == "sm_90a" and k["op"] == op and k["meta"].get("role") == role
               for k in flygemm.info()["kernels"])


# record name part -> role (add regrouping variants here when A/B-ing params warp_rows / hoist on the GPU)
REGROUPS = ["regroup"]
CONVERTERS = {**{r: "mx_to_blockscale" for r in REGROUPS}, "dequant": "mx_to_bf16"}


def converter_name(op, converter):
    dtype = "fp8_e4m3fn" if op == "gemm_mxfp8" else "fp4_e2m1_x2"
    return f"gemm_mxfp.{op.split('_')[1]}.{dtype}.bf16.{converter}.sm90a"


def force_converter(monkeypatch, op, converter):
    """Pins the MX record of `converter` for op (the inner blockscale / bf16 GEMM keeps its own rows)."""
    name = converter_name(op, converter)
    if not any(k["name"] == name and k["meta"].get("role") == CONVERTERS[converter]
               for k in flygemm.info()["kernels"]):
        pytest.skip(f"no sm_90a record {name} in this build")
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", name)


def operands(op, M, N, K, seed, a_gain=1.0, w_gain=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(M, K, generator=g, device="cuda") * (0.25 + 4 * torch.rand(M, 1, generator=g, device="cuda"))
    wf = torch.randn(N, K, generator=g, device="cuda") / math.sqrt(K)
    quantize = OPS[op][0]
    a, sa = quantize(x * a_gain)
    w, sw = quantize(wf * w_gain)
    bias = torch.randn(N, generator=g, device="cuda")
    return a, w, sa, sw, bias


def run_checked(op, a, w, sa, sw, bias, M, N):
    buf, view = guarded_out(M, N, torch.bfloat16, "cuda")
    getattr(torch.ops.flygemm, op + "_out")(a, w, sa, sw, bias, None, out=view)
    torch.cuda.synchronize()
    check_guards(buf, M, N)
    return view


@requires_cuda
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("M", M_VALUES)
@pytest.mark.parametrize("N,K", SHAPES)
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("converter", sorted(CONVERTERS))
def test_matches_oracle(op, M, N, K, layout, with_bias, converter, monkeypatch):
    if not converter_built(op):
        pytest.skip(f"no sm_90a MX converter for {op} in this build")
    a, w, sa, sw, bias = operands(op, M, N, K, seed=M * 7 + N + K)
    bias = bias if with_bias else None
    if M > 128 or op != "gemm_mxfp4" or K % 128:  # MXFP4 M = 65..128, K % 128 == 0: the decode kernel (test below)
        assert flygemm.explain(op, M, N, K, OPS[op][1], "cuda")["kernel"].startswith("gemm_mxfp.")
    force_converter(monkeypatch, op, converter)
    w_in = flygemm.preshuffle(w) if layout == "preshuffled" else w
    out = run_checked(op, a, w_in, sa, sw, bias, M, N)
    ref = getattr(torch.ops.flygemm, op)(a.cpu(), w.cpu(), sa.cpu(), sw.cpu(), None if bias is None else bias.cpu())
    assert not torch.isnan(out).any()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("M", DECODE_M_VALUES)
@pytest.mark.parametrize("N,K", SHAPES)
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
def test_decode_bucket_above_one_tile_matches_oracle(op, M, N, K, layout):
    """M = 17..64 runs a decode kernel (MXFP8: the .wg kernel over several M tiles where K % 128 == 0;
    MXFP4: a .wgb kernel of tile_m 32 / 64; the mma.sync kernel else), not the conversion: checked like
    the conversion above, bias included."""
    a, w, sa, sw, bias = operands(op, M, N, K, seed=M * 5 + N + K)
    assert flygemm.explain(op, M, N, K, OPS[op][1], "cuda")["kernel"].startswith("gemm_splitk_decode.")
    w_in = flygemm.preshuffle(w) if layout == "preshuffled" else w
    out = run_checked(op, a, w_in, sa, sw, bias, M, N)
    ref = getattr(torch.ops.flygemm, op)(a.cpu(), w.cpu(), sa.cpu(), sw.cpu(), bias.cpu())
    assert not torch.isnan(out).any()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("M", [65, 100, 128])
@pytest.mark.parametrize("N,K", SHAPES)
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_mxfp4_two_token_tiles_match_oracle(M, N, K, layout, with_bias):
    """MXFP4 at M = 65..128 on the table's own pick (fifty-third session): the 64-token decode kernel over two tiles,
    the last ragged, where K % 128 == 0, else the regrouping."""
    op = "gemm_mxfp4"
    if not converter_built(op, "mx_to_blockscale"):
        pytest.skip(f"no sm_90a regrouping record for {op} in this build")
    kernel = flygemm.explain(op, M, N, K, OPS[op][1], "cuda")["kernel"]
    assert kernel.startswith("gemm_splitk_decode." if K % 128 == 0 else "gemm_mxfp."), kernel
    a, w, sa, sw, bias = operands(op, M, N, K, seed=M * 3 + N + K)
    bias = bias if with_bias else None
    w_in = flygemm.preshuffle(w) if layout == "preshuffled" else w
    out = run_checked(op, a, w_in, sa, sw, bias, M, N)
    ref = getattr(torch.ops.flygemm, op)(a.cpu(), w.cpu(), sa.cpu(), sw.cpu(), None if bias is None else bias.cpu())
    assert not torch.isnan(out).any()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("M,converter", [(64, None), (65, None), (65, "regroup"), (65, "dequant"), (200, "regroup")])
def test_extreme_scales_are_exact(op, M, converter, monkeypatch):
    """Activations scaled by 2^60 and weights by 2^-60: E8M0 bytes near 187 and 67. The products are
    ordinary numbers; the bf16 conversion keeps every scaled value exact in bf16, the regrouping carries the
    scales as exact fp32 powers of two per 128-wide group, as the decode kernels (M = 64; MXFP4 M = 65) do per block."""
    if not converter_built(op):
        pytest.skip(f"no sm_90a MX converter for {op} in this build")
    N, K = 256, 1024
    # the decode kernels to M = 64, MXFP4's to M = 128 where K % 128 == 0; the regrouping above (unforced)
    path = "gemm_splitk_decode." if M <= (128 if op == "gemm_mxfp4" else 64) else "gemm_mxfp."
    assert flygemm.explain(op, M, N, K, OPS[op][1], "cuda")["kernel"].startswith(path)
    if converter:
        force_converter(monkeypatch, op, converter)
    a, w, sa, sw, _ = operands(op, M, N, K, seed=5, a_gain=2.0 ** 60, w_gain=2.0 ** -60)
    assert sa.view(torch.uint8).max().item() >= 180 and sw.view(torch.uint8).min().item() <= 75
    out = run_checked(op, a, w, sa, sw, None, M, N)
    ref = getattr(torch.ops.flygemm, op)(a.cpu(), w.cpu(), sa.cpu(), sw.cpu())
    assert torch.isfinite(out).all()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("converter", REGROUPS)
def test_channels_of_unequal_size_keep_their_accuracy(op, layout, converter, monkeypatch):
    """The regrouping's 128 x 128 weight groups: weight rows 2^0 .. 2^-12 (MXFP4: exact while a group spans <= 14
    binades) or 2^0 .. 2^-6 (MXFP8: 4e-5 in the CPU emulation, tests/test_cuda_mx_convert.py) of the strongest row
    of their 128-row block. Every output column within 1e-2 of the oracle's; a weak row lost in the conversion
    would be off by about 1."""
    if not converter_built(op, "mx_to_blockscale"):
        pytest.skip(f"no sm_90a regrouping record for {op} in this build")
    M, N, K = 200, 384, 1024
    assert "regroup" in flygemm.explain(op, M, N, K, OPS[op][1], "cuda")["kernel"]
    force_converter(monkeypatch, op, converter)
    g = torch.Generator(device="cuda").manual_seed(21)
    x = torch.randn(M, K, generator=g, device="cuda")
    spread = 13 if op == "gemm_mxfp4" else 7
    gain = torch.exp2(-(torch.arange(N, device="cuda") % spread).float())[:, None]
    wf = torch.randn(N, K, generator=g, device="cuda") * gain / math.sqrt(K)
    a, sa = OPS[op][0](x)
    w, sw = OPS[op][0](wf)
    w_in = flygemm.preshuffle(w) if layout == "preshuffled" else w
    out = run_checked(op, a, w_in, sa, sw, None, M, N).float().cpu()
    ref = getattr(torch.ops.flygemm, op)(a.cpu(), w.cpu(), sa.cpu(), sw.cpu()).float()
    col_err = (out - ref).norm(dim=0) / ref.norm(dim=0)
    assert col_err.max() <= 1e-2, (col_err.argmax().item(), col_err.max().item())


@requires_cuda
@pytest.mark.parametrize("op", sorted(OPS))
def test_graph_replay_equals_eager(op):
    if not converter_built(op):
        pytest.skip(f"no sm_90a MX converter for {op} in this build")
    M, N, K = 200, 512, 2048
    static = list(operands(op, M, N, K, seed=1))
    fn = getattr(torch.ops.flygemm, op)
    flygemm.warmup("cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            fn(*static)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(*static)
    for seed in range(2, 12):
        fresh = operands(op, M, N, K, seed=seed)
        for dst, src in zip(static, fresh):
            dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, fn(*fresh)), f"replay {seed} differs from eager"

