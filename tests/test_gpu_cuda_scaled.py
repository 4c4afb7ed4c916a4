"""GPU tests of the CUDA backend's scaled 8-bit GEMMs (skipped without an NVIDIA GPU):
gemm_a8w8 (fp8 e4m3fn and int8; per-tensor, per-token and per-channel scales) and
gemm_a8w8_blockscale (1x128 activation / 128x128 weight blocks). Operands come from the
flygemm.quant quantizers applied to fresh random data; every result is checked against the CPU
oracle (the same op on CPU tensors) and written through the _out variant into a poisoned output
with guard rows and padded rows, so a missing or an out-of-bounds write fails."""
import csv
import math
import pathlib

import pytest
import torch

import flygemm
from flygemm import quant
from gpu_outputs import check_guards, guarded_out, rel_fro

pytestmark = pytest.mark.gpu_cuda
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")

FP8 = torch.float8_e4m3fn
INT8 = torch.int8
M_VALUES = [1, 7, 128, 1000, 4097]
DTYPE_CODE = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
              FP8: "fp8_e4m3fn", INT8: "int8"}


def built(op, in_dtype, out_dtype):
    """Whether this build has an sm_90a kernel for the dtype pair (the op must raise otherwise)."""
    return any(k["arch"] == "sm_90a" and k["op"] == op and k["in_dtype"] == DTYPE_CODE[in_dtype]
               and k["out_dtype"] == DTYPE_CODE[out_dtype] for k in flygemm.info()["kernels"])




def raw_operands(M, N, K, seed):
    """Fresh random fp32 activation / weight whose rows have different magnitudes (so that a
    per-row scale applied to the wrong row shows) and an fp32 bias."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(M, K, generator=g) * (0.25 + 4 * torch.rand(M, 1, generator=g))
    w = torch.randn(N, K, generator=g) / math.sqrt(K) * (0.25 + 4 * torch.rand(N, 1, generator=g))
    bias = torch.randn(N, generator=g)
    return x, w, bias


def quantize_a8w8(M, N, K, dtype, a_mode, w_mode, seed):
    x, wf, bias = raw_operands(M, N, K, seed)
    a, sa = (quant.quantize_fp8_per_token(x, dtype) if a_mode == "token"
             else quant.quantize_fp8_per_tensor(x, dtype))
    w, sw = (quant.quantize_fp8_per_channel(wf, dtype) if w_mode == "channel"
             else quant.quantize_fp8_per_tensor(wf, dtype))
    return a, w, sa, sw, bias


def quantize_blockscale(M, N, K, seed):
    x, wf, bias = raw_operands(M, N, K, seed)
    a, sa = quant.quantize_fp8_blockscale_act(x, 128, FP8)
    w, sw = quant.quantize_fp8_blockscale_weight(wf, 128, FP8)
    return a, w, sa, sw, bias


def run_out(op, a, w, sa, sw, bias, out_dtype, layout="plain"):
    """The op on the GPU through its _out variant into a guarded, poisoned buffer."""
    M, N = a.shape[0], w.shape[0]
    wd = w.cuda() if layout == "plain" else flygemm.preshuffle(w.cuda())
    buf, view = guarded_out(M, N, out_dtype, "cuda")
    getattr(torch.ops.flygemm, op + "_out")(
        a.cuda(), wd, sa.cuda(), sw.cuda(), None if bias is None else bias.cuda(), out_dtype, out=view)
    torch.cuda.synchronize()
    assert not torch.isnan(view).any(), "output not fully written"
    check_guards(buf, M, N)
    return view


# ----------------------------------------------------------------------------- gemm_a8w8
@requires_cuda
@pytest.mark.parametrize("M", M_VALUES)
@pytest.mark.parametrize("scales", ["tensor-tensor", "token-channel", "token-tensor", "tensor-channel"])
@pytest.mark.parametrize("in_dtype", [FP8, INT8], ids=["fp8", "int8"])
def test_a8w8_matches_oracle(in_dtype, scales, M):
    # N and K not multiples of the tile: ragged N tile, and a K tail inside the last 128-wide stage
    N, K = 1000, 1040
    a_mode, w_mode = scales.split("-")
    a, w, sa, sw, bias = quantize_a8w8(M, N, K, in_dtype, a_mode, w_mode, seed=M * 7 + len(scales))
    bias = bias if M % 2 else None
    ref = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, bias)
    out = run_out("gemm_a8w8", a, w, sa, sw, bias, torch.bfloat16)
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32],
                         ids=["bf16", "fp16", "fp32"])
@pytest.mark.parametrize("in_dtype", [FP8, INT8], ids=["fp8", "int8"])
def test_a8w8_out_dtypes_bias_layouts(in_dtype, out_dtype, with_bias, layout):
    M, N, K = 333, 272, 528
    modes = ("token", "channel") if with_bias else ("tensor", "channel")
    a, w, sa, sw, bias = quantize_a8w8(M, N, K, in_dtype, *modes, seed=11 + with_bias)
    bias = bias if with_bias else None
    ref = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, bias, out_dtype)
    if not built("gemm_a8w8", in_dtype, out_dtype):
        with pytest.raises(NotImplementedError, match="sm_90a"):
            run_out("gemm_a8w8", a, w, sa, sw, bias, out_dtype, layout)
        return
    out = run_out("gemm_a8w8", a, w, sa, sw, bias, out_dtype, layout)
    err = rel_fro(out, ref)
    assert err <= 1e-2
    if in_dtype == INT8 and out_dtype == torch.float32:
        # s32 accumulation is exact (|sum| < 2**24 here), the scaling is the oracle's fp32 math
        assert err <= 1e-5, f"int8 -> fp32 should match the oracle almost bit for bit, got {err}"


@requires_cuda
@pytest.mark.parametrize("M", [1, 7, 16, 64, 128, 1000, 4097])
@pytest.mark.parametrize("N,K", [(2112, 1536), (1000, 4128)])
@pytest.mark.parametrize("in_dtype", [FP8, INT8], ids=["fp8", "int8"])
def test_a8w8_fp32_output_through_the_table(in_dtype, N, K, M):
    """fp32 outputs take the kernels of the bf16-output default rows (sm_90a.twins.csv: decode kernels at small M,
    swapped and split-K tiles in between, the ping-pong tile at large M), not the one 128 x 128 tile they ran at every
    M before; per-token / per-channel scales, bias on odd M, poisoned output with guard rows."""
    a, w, sa, sw, bias = quantize_a8w8(M, N, K, in_dtype, "token", "channel", seed=M * 5 + N + K)
    bias = bias if M % 2 else None
    pick = flygemm.explain("gemm_a8w8", M, N, K, in_dtype, "cuda", out_dtype=torch.float32)
    assert f".{DTYPE_CODE[in_dtype]}.fp32." in pick["kernel"] and pick["source"] == "default", pick
    ref = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, bias, torch.float32)
    err = rel_fro(run_out("gemm_a8w8", a, w, sa, sw, bias, torch.float32), ref)
    assert err <= (1e-5 if in_dtype == INT8 else 1e-2), f"{pick['kernel']}: rel err {err:.3e}"


@requires_cuda
def test_a8w8_functional_variant_and_default_dtype():
    M, N, K = 77, 512, 256
    for in_dtype in (FP8, INT8):
        a, w, sa, sw, bias = quantize_a8w8(M, N, K, in_dtype, "token", "channel", seed=5)
        out = torch.ops.flygemm.gemm_a8w8(a.cuda(), w.cuda(), sa.cuda(), sw.cuda(), bias.cuda())
        assert out.shape == (M, N) and out.dtype == torch.bfloat16 and out.is_cuda
        assert rel_fro(out, torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, bias)) <= 1e-2


# ----------------------------------------------------------------------------- gemm_a8w8_blockscale
@requires_cuda
@pytest.mark.parametrize("M", M_VALUES)
@pytest.mark.parametrize("N,K", [(1000, 1040), (392, 2320)])
def test_blockscale_matches_oracle(N, K, M):
    # K % 128 != 0: the last scale block is partial; N % 128 != 0: the last w_scale row is partial
    a, w, sa, sw, bias = quantize_blockscale(M, N, K, seed=M * 3 + N)
    bias = bias if (M + N) % 2 else None
    ref = torch.ops.flygemm.gemm_a8w8_blockscale(a, w, sa, sw, bias)
    out = run_out("gemm_a8w8_blockscale", a, w, sa, sw, bias, torch.bfloat16)
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_blockscale_out_dtypes_bias_layouts(out_dtype, with_bias, layout):
    M, N, K = 333, 272, 528
    a, w, sa, sw, bias = quantize_blockscale(M, N, K, seed=21 + with_bias)
    bias = bias if with_bias else None
    ref = torch.ops.flygemm.gemm_a8w8_blockscale(a, w, sa, sw, bias, out_dtype)
    if not built("gemm_a8w8_blockscale", FP8, out_dtype):
        with pytest.raises(NotImplementedError, match="sm_90a"):
            run_out("gemm_a8w8_blockscale", a, w, sa, sw, bias, out_dtype, layout)
        return
    out = run_out("gemm_a8w8_blockscale", a, w, sa, sw, bias, out_dtype, layout)
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
def test_blockscale_scales_are_per_block():
    """Scales that differ wildly between K blocks and between 128-row groups of W: applying a
    block's scale to the wrong block (or one scale to the whole tile) fails the comparison."""
    M, N, K = 200, 384, 640
    a, w, sa, sw, _ = quantize_blockscale(M, N, K, seed=99)
    g = torch.Generator().manual_seed(7)
    sa = sa * torch.exp2(torch.randint(-4, 5, sa.shape, generator=g).float())
    sw = sw * torch.exp2(torch.randint(-4, 5, sw.shape, generator=g).float())
    ref = torch.ops.flygemm.gemm_a8w8_blockscale(a, w, sa, sw)
    out = run_out("gemm_a8w8_blockscale", a, w, sa, sw, None, torch.bfloat16)
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
def row_scales_rows():
    """(m_max, N, K, kernel, split_k) of the sm_90a table's gemm_a8w8.row_scales rows (calls with row scales only)."""
    table = pathlib.Path(__file__).resolve().parents[1] / "kernels" / "configs" / "sm_90a.csv"
    lines = (line for line in table.open() if line.startswith("sm_90a,gemm_a8w8.row_scales,fp8_e4m3fn,bf16,"))
    return [(int(r[4]), int(r[5]), int(r[6]), r[7], int(r[8])) for r in csv.reader(lines)]


def dispatch_log(path):
    """{(op, M, N, K): (kernel, split_k, source)} from a FLYGEMM_LOG_DISPATCH file."""
    return {(r["op"], int(r["M"]), int(r["N"]), int(r["K"])): (r["kernel"], int(r["split_k"]), r["source"])
            for r in csv.DictReader(path.open())}


@requires_cuda
def test_calls_with_row_scales_run_the_row_scales_rows(tmp_path, monkeypatch):
    """A gemm_a8w8 call with a per-token a_scale or a per-channel w_scale runs the kernel of its gemm_a8w8.row_scales
    row, a per-tensor call the op's own pick (the dispatch log records what each call ran), at the rows' own M, and
    both give the oracle's result on sampled rows (first, last and random ones)."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the sm_90a table's rows")
    rows = row_scales_rows()
    assert rows, "the sm_90a table has no gemm_a8w8.row_scales rows"
    log = tmp_path / "dispatch.csv"
    monkeypatch.setenv("FLYGEMM_LOG_DISPATCH", str(log))
    for i, (M, N, K, kernel, split_k) in enumerate(rows):
        g = torch.Generator(device="cuda").manual_seed(700 + i)
        x = torch.randn(M, K, device="cuda", generator=g) * (0.25 + 4 * torch.rand(M, 1, device="cuda", generator=g))
        wf = torch.randn(N, K, device="cuda", generator=g) / math.sqrt(K)
        a_tok, sa_tok = quant.quantize_fp8_per_token(x, FP8)
        a_ten, sa_ten = quant.quantize_fp8_per_tensor(x, FP8)
        w_ch, sw_ch = quant.quantize_fp8_per_channel(wf, FP8)
        w_ten, sw_ten = quant.quantize_fp8_per_tensor(wf, FP8)
        del x, wf
        sample = torch.cat([torch.tensor([0, M - 1]), torch.randint(1, M - 1, (6,), generator=torch.Generator().manual_seed(i))])
        for a, w, sa, sw in [(a_tok, w_ten, sa_tok, sw_ten), (a_ten, w_ch, sa_ten, sw_ch), (a_ten, w_ten, sa_ten, sw_ten)]:
            out = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, None)
            torch.cuda.synchronize()
            a_rows, sa_rows = a[sample.cuda()].cpu(), (sa[sample.cuda()] if sa.numel() > 1 else sa).cpu()
            ref = torch.ops.flygemm.gemm_a8w8(a_rows, w.cpu(), sa_rows, sw.cpu(), None)
            assert rel_fro(out[sample.cuda()].cpu(), ref) <= 1e-2, (M, N, K, sa.numel(), sw.numel())
            del out
        picks = dispatch_log(log)
        scaled = flygemm.explain("gemm_a8w8.row_scales", M, N, K, FP8, device="cuda")
        assert picks[("gemm_a8w8.row_scales", M, N, K)] == (scaled["kernel"], scaled["split_k"], "table")
        shared = flygemm.explain("gemm_a8w8.row_scales", M, N, K, FP8, device="sm_90a")
        if scaled == shared:  # no "<op>@<part>" row of this GPU on the layer: the row_scales row answered
            assert (scaled["kernel"], scaled["split_k"]) == (kernel, split_k)
        per_tensor = flygemm.explain("gemm_a8w8", M, N, K, FP8, device="cuda")
        assert picks[("gemm_a8w8", M, N, K)] == (per_tensor["kernel"], per_tensor["split_k"], per_tensor["source"])


@requires_cuda
def test_ops_launch_the_rows_of_this_gpus_part(tmp_path, monkeypatch):
    """Rows of op "<op>@<part>" (sm_90a.csv: "@H100") answer only on a GPU whose name has that word: the op launches
    what flygemm.explain answers for this device (its name included), which on an H100 is the part's row and elsewhere
    the shared row; results match the oracle on sampled rows."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the sm_90a table's rows")
    log = tmp_path / "dispatch.csv"
    monkeypatch.setenv("FLYGEMM_LOG_DISPATCH", str(log))
    name = torch.cuda.get_device_name()
    M, N, K = 4096, 28672, 4096   # a gemm_a8w8.row_scales@H100 row
    g = torch.Generator(device="cuda").manual_seed(911)
    a, sa = quant.quantize_fp8_per_token(torch.randn(M, K, device="cuda", generator=g), FP8)
    w, sw = quant.quantize_fp8_per_tensor(torch.randn(N, K, device="cuda", generator=g) / math.sqrt(K), FP8)
    out = torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, None)
    torch.cuda.synchronize()
    here = flygemm.explain("gemm_a8w8.row_scales", M, N, K, FP8, device="cuda")
    assert dispatch_log(log)[("gemm_a8w8.row_scales", M, N, K)] == (here["kernel"], here["split_k"], "table")
    on_h100 = flygemm.explain("gemm_a8w8.row_scales", M, N, K, FP8, device="sm_90a", device_name="NVIDIA H100 80GB HBM3")
    shared = flygemm.explain("gemm_a8w8.row_scales", M, N, K, FP8, device="sm_90a")
    assert on_h100["kernel"] != shared["kernel"]
    assert here == (on_h100 if "H100" in name.split() else shared), name
    sample = torch.cat([torch.tensor([0, M - 1]), torch.randint(1, M - 1, (6,), generator=torch.Generator().manual_seed(9))])
    ref = torch.ops.flygemm.gemm_a8w8(a[sample.cuda()].cpu(), w.cpu(), sa[sample.cuda()].cpu(), sw.cpu(), None)
    assert rel_fro(out[sample.cuda()].cpu(), ref) <= 1e-2


@requires_cuda
def test_ops_launch_what_explain_answers_for_this_device(tmp_path, monkeypatch):
    """The default rows' one-wave rules count the device's SMs: the op (through the miss log, which records the
    kernel and split a default row chose) and flygemm.explain(device=<this GPU>) must agree on shapes whose pick
    depends on the count (on an H20 or an H100 PCIe they differ from the 132-SM reference part's)."""
    log = tmp_path / "misses.csv"
    monkeypatch.setenv("FLYGEMM_LOG_MISSES", str(log))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [(32, 8448, 4096), (32, 1040, 4096), (2000, 1024, 2048)]
    expected = []
    for i, (M, N, K) in enumerate(shapes):
        a, w, sa, sw, bias = quantize_a8w8(M, N, K, FP8, "tensor", "tensor", seed=500 + i)
        pick = flygemm.explain("gemm_a8w8", M, N, K, FP8, device="cuda")
        assert pick["source"] == "default"
        out = torch.ops.flygemm.gemm_a8w8(a.cuda(), w.cuda(), sa.cuda(), sw.cuda(), bias.cuda())
        assert rel_fro(out, torch.ops.flygemm.gemm_a8w8(a, w, sa, sw, bias)) <= 1e-2
        expected.append(f"{M},{N},{K},{pick['kernel']},{pick['split_k']}")
    logged = [",".join(line.split(",")[4:9]) for line in log.read_text().splitlines()[1:]]
    assert logged == expected
    if sms == 132:  # the H100 SXM / H200: the reference part's picks
        assert [e.split(",", 3)[3] for e in expected] == [
            "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a,1", "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a,7",
            "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a,1"]
