"""CPU time per call of the flygemm ops and their torch peers (H200 probe, needs CUDA and the built extension).

Why: at decode sizes a GEMM runs 6-10 us on the GPU, so an eager caller is bound by what the host spends per
call (Python, the dispatcher, argument checks, the dispatch table, the launch) unless it replays a CUDA graph.
The GPU is kept busy with torch.cuda._sleep while `--calls` calls are enqueued, so the measured time is the
host's alone (the launch queue never fills). Prints microseconds per call, median of --repeats batches.

    python3 tools/probes/host_overhead.py --shape 1x2048x7168
"""

import argparse
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import flygemm  # noqa: E402
from flygemm import bench  # noqa: E402

CASES = [("gemm_a16w16", "-"), ("gemm_a8w8", "per_tensor"), ("gemm_a8w8", "per_token"),
         ("gemm_a8w8_blockscale", "-"), ("gemm_mxfp8", "-"), ("gemm_mxfp4", "-")]


def host_us(fn, calls, repeats):
    """Median over `repeats` batches of the host time per call while the GPU sleeps (queue not full)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(repeats):
        torch.cuda._sleep(200_000_000)   # ~0.1 s of GPU time: every call below only enqueues
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="1x2048x7168")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    M, N, K = (int(x) for x in a.shape.split("x"))
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    x = torch.zeros(1, device=dev)
    print(f"one-element torch kernel (x.add_): {host_us(lambda: x.add_(1.0), a.calls, a.repeats):.1f} us per call")
    print(f"{'op':22} {'variant':10} {'flygemm us':>10} {'torch.ops':>9} {'torch us':>9}  kernel")
    for op, variant in CASES:
        args, peer, _ = bench.make_problem(op, variant, M, N, K, dev, gen)
        fly = getattr(flygemm, op)
        f_us = host_us(lambda: fly(*args), a.calls, a.repeats)
        raw = getattr(torch.ops.flygemm, op)   # the registered op without the Python wrapper
        r_us = host_us(lambda: raw(*args, None, None), a.calls, a.repeats)
        t_us = host_us(peer, a.calls, a.repeats) if peer is not None else float("nan")
        kernel = flygemm.explain(op, M, N, K, args[0].dtype, dev)["kernel"]
        print(f"{op:22} {variant:10} {f_us:10.1f} {r_us:9.1f} {t_us:9.1f}  {kernel}", flush=True)


if __name__ == "__main__":
    main()
