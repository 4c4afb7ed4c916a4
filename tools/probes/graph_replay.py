"""Per-call time of decode GEMMs replayed from a CUDA graph, flygemm against its torch peer (H200 probe).

Why: the decode bars are kernel times (docs/PERF.md). A serving engine replays its decode step from a CUDA
graph, where a call costs its kernel time plus the gap between kernels. This captures --layers back-to-back
calls, each on its own weight copy (so that L2, 50 MiB on the H200, does not keep the weights between calls,
as in a model's successive layers), replays the graph and prints microseconds per call, median of --reps.

    python3 tools/probes/graph_replay.py --shapes 1x2048x7168,16x2048x7168
"""

import argparse
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import flygemm  # noqa: E402
from flygemm import bench  # noqa: E402

CASES = [("gemm_a16w16", "-"), ("gemm_a8w8", "per_tensor"), ("gemm_a8w8_blockscale", "-"),
         ("gemm_mxfp8", "-"), ("gemm_mxfp4", "-")]


def replay_us(calls, reps):
    """Microseconds per call of a graph of `calls` (a list of closures), median over reps replays."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for fn in calls:   # warm up on the capture stream (lazy loads, allocator)
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in calls:
            fn()
    times = []
    for _ in range(reps):
        bench.flush_l2(torch.device("cuda"))
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / len(calls))
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="1x2048x7168,16x2048x7168,1x16384x7168")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args(argv)
    dev = torch.device("cuda")
    print(f"{'op':22} {'variant':10} {'shape':>14} {'flygemm us':>10} {'torch us':>9} {'torch/fly':>9}")
    for shape in a.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        for op, variant in CASES:
            gen = torch.Generator(device=dev).manual_seed(0)
            problems = [bench.make_problem(op, variant, M, N, K, dev, gen) for _ in range(a.layers)]
            fly = getattr(flygemm, op)
            f_us = replay_us([lambda args=args: fly(*args) for args, _, _ in problems], a.reps)
            peers = [peer for _, peer, _ in problems]
            t_us = replay_us(peers, a.reps) if all(p is not None for p in peers) else float("nan")
            print(f"{op:22} {variant:10} {shape:>14} {f_us:10.2f} {t_us:9.2f} {t_us / f_us:9.3f}", flush=True)
            del problems, peers
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
