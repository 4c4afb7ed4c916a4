"""GPU tests on a machine with two or more NVIDIA GPUs (skipped otherwise): every op runs on the
device of its tensors whatever the current device is, loads its kernels there, takes its split-K
workspace and its stream there, and a CUDA graph captured on the second GPU replays there.

Why: serving processes often hold several GPUs; a launch that used the current device's module,
SM count, stream or workspace would fail or, worse, read another device's memory."""
import pytest
import torch

import flygemm
from gpu_outputs import rel_fro
from test_gpu_fuzz import make_inputs

requires_two_gpus = pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None
    or torch.cuda.device_count() < 2,
    reason="needs two NVIDIA GPUs and a CUDA build of torch")
pytestmark = [pytest.mark.gpu_cuda, requires_two_gpus]

OPS = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4")


def case(op, M, N=2048, K=7168, **kw):
    c = {"op": op, "in": "bf16" if op == "gemm_a16w16" else "fp8", "M": M, "N": N, "K": K, "layout": "plain",
         "a_scale": "token" if op == "gemm_a8w8" else "", "w_scale": "channel" if op == "gemm_a8w8" else "",
         "a_pad": 0, "out_dtype": None, "bias": "fp32", "out_pad": None, "seed": 1000 + M}
    c.update(kw)
    return c


def on(device, args):
    return tuple(None if t is None else t.to(device) for t in args)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("M", [4, 300])  # a decode kernel and a large-M kernel
def test_op_runs_on_its_tensors_device_not_the_current_one(op, M):
    c = case(op, M)
    args, bias, out_dtype = make_inputs(c, device="cpu")
    ref = getattr(torch.ops.flygemm, op)(*args, bias, out_dtype)
    torch.cuda.set_device(0)
    for dev in ("cuda:1", "cuda:0", "cuda:1"):  # first use on each device, then again
        out = getattr(torch.ops.flygemm, op)(*on(dev, args), bias.to(dev), out_dtype)
        torch.cuda.synchronize(dev)
        assert out.device == torch.device(dev)
        assert rel_fro(out, ref) <= 1e-2, f"{op} M={M} on {dev}"


@pytest.mark.parametrize("op", ["gemm_a8w8", "gemm_mxfp4"])
def test_split_k_workspace_and_stream_on_the_second_gpu(op, monkeypatch):
    """A decode kernel pinned to split_k 3 (workspace + reduce kernel) on cuda:1 from a side stream of
    cuda:1 while cuda:0 is current, writing into a poisoned out view."""
    c = case(op, 16, N=1024, K=4096)
    args, bias, out_dtype = make_inputs(c, device="cpu")
    ref = getattr(torch.ops.flygemm, op)(*args, bias, out_dtype)
    kernel = next(k["name"] for k in flygemm.info()["kernels"]
                  if k["arch"] == "sm_90a" and k["op"] == op and k["meta"].get("family") == "gemm_splitk_decode"
                  and k["max_split_k"] >= 3 and 4096 % max(1, k["requires_k_multiple"]) == 0)
    monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{kernel}:3")
    torch.cuda.set_device(0)
    dev_args, dev_bias = on("cuda:1", args), bias.to("cuda:1")
    out = torch.full((16, 1024), float("nan"), dtype=torch.bfloat16, device="cuda:1")
    side = torch.cuda.Stream(device="cuda:1")
    side.wait_stream(torch.cuda.current_stream("cuda:1"))
    with torch.cuda.stream(side):
        getattr(torch.ops.flygemm, op + "_out")(*dev_args, dev_bias, None, out=out)
    side.synchronize()
    assert rel_fro(out, ref) <= 1e-2


def test_graph_captured_on_the_second_gpu_replays_there():
    c = case("gemm_a8w8", 8, N=4096, K=4096)
    args, bias, _ = make_inputs(c, device="cpu")
    torch.cuda.set_device(0)
    with torch.cuda.device(1):
        flygemm.warmup(torch.device("cuda", 1))
        static = list(on("cuda:1", args))
        dev_bias = bias.to("cuda:1")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            torch.ops.flygemm.gemm_a8w8(*static, dev_bias)  # warm up outside capture
        stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        # an explicit capture stream on cuda:1: torch.cuda.graph's default capture stream is created
        # once per process, on the device current at the first capture (cuda:0 in a test session)
        with torch.cuda.graph(graph, stream=torch.cuda.Stream(device=1)):
            out = torch.ops.flygemm.gemm_a8w8(*static, dev_bias)
        for seed in range(3):
            new, _, _ = make_inputs({**c, "seed": 50 + seed}, device="cpu")
            for dst, src in zip(static, new):
                dst.copy_(src)
            graph.replay()
            torch.cuda.synchronize()
            eager = torch.ops.flygemm.gemm_a8w8(*static, dev_bias)
            assert torch.equal(out, eager)
            assert rel_fro(out, torch.ops.flygemm.gemm_a8w8(*new, bias)) <= 1e-2


def test_operands_on_two_devices_raise_clearly():
    c = case("gemm_a16w16", 4, N=256, K=256)
    (a, w), bias, _ = make_inputs(c, device="cpu")
    with pytest.raises(ValueError, match="same device"):
        torch.ops.flygemm.gemm_a16w16(a.to("cuda:0"), w.to("cuda:1"), None)
