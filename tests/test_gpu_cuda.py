"""GPU tests of the CUDA backend (skipped without an NVIDIA GPU): every result is checked against
the CPU oracle on fresh random data, with poisoned outputs and guard regions around them."""
import math

import pytest
import torch

import flygemm
from gpu_outputs import POISON, check_guards, guarded_out, rel_fro

pytestmark = pytest.mark.gpu_cuda
requires_cuda = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")



def built_a16w16(in_dtype, out_dtype):
    """Whether this build has an sm_90a kernel for the dtype pair (the op must raise otherwise)."""
    names = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    return any(k["arch"] == "sm_90a" and k["op"] == "gemm_a16w16" and names.get(k["in_dtype"]) == in_dtype
               and names.get(k["out_dtype"]) == out_dtype for k in flygemm.info()["kernels"])


def rand_operands(M, N, K, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(dtype)
    w = (torch.randn(N, K, generator=g) / math.sqrt(K)).to(dtype)
    bias = torch.randn(N, generator=g)
    return a, w, bias




@requires_cuda
@pytest.mark.parametrize("M", [1, 7, 128, 1000, 4097])
@pytest.mark.parametrize("N,K", [(256, 512), (1000, 4104), (4096, 1024)])
def test_a16w16_matches_oracle_bf16(M, N, K):
    a, w, _ = rand_operands(M, N, K, torch.bfloat16, seed=M * 31 + N + K)
    ref = torch.ops.flygemm.gemm_a16w16(a, w)
    out = torch.ops.flygemm.gemm_a16w16(a.cuda(), w.cuda())
    assert out.shape == (M, N) and out.dtype == torch.bfloat16
    assert not torch.isnan(out).any()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("in_dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
def test_a16w16_out_variant_poisoned(in_dtype, out_dtype, with_bias, layout):
    M, N, K = 333, 272, 520
    a, w, bias = rand_operands(M, N, K, in_dtype, seed=11)
    bias = bias if with_bias else None
    ref = torch.ops.flygemm.gemm_a16w16(a, w, bias, out_dtype)
    wd = w.cuda() if layout == "plain" else flygemm.preshuffle(w.cuda())
    buf, view = guarded_out(M, N, out_dtype, "cuda")
    if not built_a16w16(in_dtype, out_dtype):
        with pytest.raises(NotImplementedError, match="sm_90a"):
            torch.ops.flygemm.gemm_a16w16_out(a.cuda(), wd, None if bias is None else bias.cuda(), out_dtype, out=view)
        return
    torch.ops.flygemm.gemm_a16w16_out(a.cuda(), wd, None if bias is None else bias.cuda(), out_dtype, out=view)
    torch.cuda.synchronize()
    assert not torch.isnan(view).any(), "output not fully written"
    check_guards(buf, M, N)
    assert rel_fro(view, ref) <= 1e-2


@requires_cuda
@pytest.mark.parametrize("M", [1, 7, 16, 64, 128, 1000, 4097])
@pytest.mark.parametrize("N,K", [(2112, 1536), (1000, 4128)])
@pytest.mark.parametrize("in_dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
def test_a16w16_fp32_output_through_the_table(in_dtype, N, K, M):
    """fp32 outputs take the kernels of the bf16 default rows (sm_90a.twins.csv: decode kernels at small M, swapped
    and split-K tiles in between, the ping-pong tile at large M), not the one 128 x 128 tile they ran at every M
    before; bias on odd M, poisoned output with guard rows."""
    a, w, bias = rand_operands(M, N, K, in_dtype, seed=M * 5 + N + K)
    bias = bias if M % 2 else None
    pick = flygemm.explain("gemm_a16w16", M, N, K, in_dtype, "cuda", out_dtype=torch.float32)
    assert ".fp32." in pick["kernel"] and pick["source"] == "default", pick
    ref = torch.ops.flygemm.gemm_a16w16(a, w, bias, torch.float32)
    buf, view = guarded_out(M, N, torch.float32, "cuda")
    torch.ops.flygemm.gemm_a16w16_out(a.cuda(), w.cuda(), None if bias is None else bias.cuda(), torch.float32,
                                      out=view)
    torch.cuda.synchronize()
    assert not torch.isnan(view).any(), "output not fully written"
    check_guards(buf, M, N)
    err = rel_fro(view, ref)
    assert err <= 1e-2, f"{pick['kernel']}: rel err {err:.3e}"


@requires_cuda
def test_a16w16_strided_activation_and_empty():
    M, N, K = 65, 128, 256
    a, w, _ = rand_operands(M, N, K, torch.bfloat16, seed=5)
    wide = torch.randn(M, K + 64, dtype=torch.bfloat16)
    wide[:, :K] = a
    out = torch.ops.flygemm.gemm_a16w16(wide.cuda()[:, :K], w.cuda())
    assert rel_fro(out, torch.ops.flygemm.gemm_a16w16(a, w)) <= 1e-2
    empty = torch.ops.flygemm.gemm_a16w16(torch.empty(0, K, dtype=torch.bfloat16, device="cuda"), w.cuda())
    assert empty.shape == (0, N)


@requires_cuda
def test_a16w16_non_default_stream():
    M, N, K = 777, 512, 1024
    a, w, _ = rand_operands(M, N, K, torch.bfloat16, seed=3)
    ref = torch.ops.flygemm.gemm_a16w16(a, w)
    stream = torch.cuda.Stream()
    ad, wd = a.cuda(), w.cuda()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        out = torch.ops.flygemm.gemm_a16w16(ad, wd)
    stream.synchronize()
    assert rel_fro(out, ref) <= 1e-2


@requires_cuda
def test_a16w16_cuda_graph_replay():
    M, N, K = 100, 384, 768
    flygemm.warmup("cuda")
    a_static = torch.empty(M, K, dtype=torch.bfloat16, device="cuda")
    w_static = torch.empty(N, K, dtype=torch.bfloat16, device="cuda")
    a0, w0, _ = rand_operands(M, N, K, torch.bfloat16, seed=0)
    a_static.copy_(a0)
    w_static.copy_(w0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.ops.flygemm.gemm_a16w16(a_static, w_static)  # warm on the capture stream
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out_static = torch.ops.flygemm.gemm_a16w16(a_static, w_static)
    for i in range(5):
        a, w, _ = rand_operands(M, N, K, torch.bfloat16, seed=100 + i)
        a_static.copy_(a)
        w_static.copy_(w)
        out_static.fill_(POISON)
        graph.replay()
        torch.cuda.synchronize()
        eager = torch.ops.flygemm.gemm_a16w16(a_static, w_static)
        assert torch.equal(out_static, eager)
        assert rel_fro(out_static, torch.ops.flygemm.gemm_a16w16(a, w)) <= 1e-2


@requires_cuda
def test_explain_and_info_on_device():
    info = flygemm.info()
    assert "cuda" in info["backends"]
    choice = flygemm.explain("gemm_a16w16", 4096, 4096, 4096, torch.bfloat16, "cuda")
    assert choice["kernel"].startswith("gemm_a16w16") and choice["split_k"] >= 1


@requires_cuda
def test_unbuilt_op_raises_clearly():
    """Ops without an sm_90a kernel in this build raise NotImplementedError naming the arch."""
    built_ops = {k["op"] for k in flygemm.info()["kernels"] if k["arch"] == "sm_90a"}
    if "gemm_mxfp8" in built_ops:
        pytest.skip("gemm_mxfp8 has an sm_90a kernel in this build")
    a = torch.zeros(4, 64, device="cuda").to(torch.float8_e4m3fn)
    s = torch.ones(4, 2, device="cuda").to(torch.float8_e8m0fnu)
    with pytest.raises(NotImplementedError, match="sm_90a"):
        torch.ops.flygemm.gemm_mxfp8(a, a, s, s)
