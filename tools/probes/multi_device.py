"""Probe (two GPUs): on which device and stream do flygemm's kernels run when the tensors live on
cuda:1, and does a CUDA graph captured on cuda:1 record them? Prints one line per scenario:
the devices the profiler saw the op's kernels on, and whether a replay of the captured graph writes
the op's output. (torch.cuda.graph's default capture stream is made once per process, on the device
current at the first capture: a later capture on another device must pass its own stream.)

    python tools/probes/multi_device.py
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "tests")
import flygemm  # noqa: E402
from test_gpu_fuzz import make_inputs  # noqa: E402


def operands(op, M, N, K, device):
    c = {"op": op, "in": "bf16" if op == "gemm_a16w16" else "fp8", "M": M, "N": N, "K": K, "layout": "plain",
         "a_scale": "tensor" if op == "gemm_a8w8" else "", "w_scale": "tensor" if op == "gemm_a8w8" else "",
         "a_pad": 0, "out_dtype": None, "bias": None, "out_pad": None, "seed": 3}
    args, _, _ = make_inputs(c, device="cpu")
    return tuple(t.to(device) for t in args)


def kernel_devices(fn):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)
    return sorted({(e.device_index, e.name[:40]) for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA and "flygemm" in e.name or "kernel" in e.name})


def graph_nodes(op, args, device):
    with torch.cuda.device(device):
        flygemm.warmup(torch.device("cuda", device))
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            getattr(torch.ops.flygemm, op)(*args, None)
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=torch.cuda.Stream(device=device)):
            out = getattr(torch.ops.flygemm, op)(*args, None)
        # a graph that recorded the op writes its output on replay
        out.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize(device)
        return "recorded" if not torch.isnan(out).any() else "EMPTY", out


def main():
    assert torch.cuda.device_count() >= 2
    for op, (M, N, K) in [("gemm_a8w8", (8, 4096, 4096)), ("gemm_a16w16", (300, 2048, 2048))]:
        for current in (0, 1):
            torch.cuda.set_device(current)
            args = operands(op, M, N, K, "cuda:1")
            devs = kernel_devices(lambda: getattr(torch.ops.flygemm, op)(*args, None))
            print(f"{op} {M}x{N}x{K}: tensors on cuda:1, current device {current}: kernels on {devs}")
        for dev in (0, 1):
            torch.cuda.set_device(0)
            args = operands(op, M, N, K, f"cuda:{dev}")
            n, _ = graph_nodes(op, args, dev)
            print(f"{op} {M}x{N}x{K}: graph captured on cuda:{dev} (current device 0 before): {n}")


if __name__ == "__main__":
    main()
