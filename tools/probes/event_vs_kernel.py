"""Where a pinned kernel's event time goes, next to its kernel time (H200 probe, needs CUDA and the extension).

Why: in the twenty-eighth session t128x64x128.sk8.sw beat t64x128x128 at 128 x 6144 x 4096 in kernel time (10.5
against 12.5 us) and lost in event time (20.3 against 15.9 us). For each `op variant MxNxK kernel:split` line of
--pairs-style input (every kernel of a line, A and B alike) this prints:
  kernel   the GPU span of one call's kernels (CUPTI through torch.profiler), cold L2 (bench.kernel_time_us)
  event    start/end events around one call after an L2 flush and the GPU head start for the host (bench.time_us,
           what tools/bench.py reports since the twenty-eighth session)
  event0   the same without the head start (what it reported before: host-bound when the host falls behind)
  idle     the same with the host synchronized before each start event (the GPU idle when the call is enqueued)
  b2b      events around 100 back-to-back calls without flushes, per call (warm L2; launch gaps hidden)
  host     host time per call while the GPU sleeps (the enqueue cost: Python, dispatcher, table, launch)

    python3 tools/probes/event_vs_kernel.py --pairs tools/tune_specs/ab-28.pairs --only 128x6144x4096
"""

import argparse
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import flygemm  # noqa: E402
from flygemm import bench  # noqa: E402
from ab import pinned  # noqa: E402
from host_overhead import host_us  # noqa: E402  (same directory)


def event_without_head_start(fn, device):
    cycles, bench._HEAD_START_CYCLES = bench._HEAD_START_CYCLES, 0
    try:
        return bench.time_us(fn, device)
    finally:
        bench._HEAD_START_CYCLES = cycles


def idle_event_us(fn, device, reps=50):
    """Median event time of one call enqueued onto an idle GPU, L2 flushed before."""
    times = []
    for _ in range(reps):
        bench.flush_l2(device)
        torch.cuda.synchronize(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def back_to_back_us(fn, device, calls=100):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(device)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1000.0 / calls


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", required=True, help="lines `op variant MxNxK A B` (tools/ab.py --pairs)")
    ap.add_argument("--only", default="", help="comma-separated MxNxK to keep")
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(0)
    keep = set(s for s in args.only.split(",") if s)
    print(f"{'op':20} {'shape':>16} {'kernel:split':58} {'kernel':>7} {'event':>7} {'event0':>7} {'idle':>7} {'b2b':>7} {'host':>6}")
    for line in open(args.pairs):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        op, variant, shape, *kernels = line.split()
        if keep and shape not in keep:
            continue
        M, N, K = (int(x) for x in shape.split("x"))
        problem, _, _ = bench.make_problem(op, variant, M, N, K, device, gen)
        for kernel in kernels:
            fn = pinned(getattr(flygemm, op), problem, kernel)
            row = [bench.kernel_time_us(fn, device), bench.time_us(fn, device), event_without_head_start(fn, device),
                   idle_event_us(fn, device), back_to_back_us(fn, device), host_us(fn, 100, 3)]
            print(f"{op:20} {shape:>16} {kernel.replace(op + '.', ''):58} " + " ".join(f"{v:7.1f}" for v in row),
                  flush=True)


if __name__ == "__main__":
    main()
