"""Where a split-K call's kernel time goes: each kernel of one pinned call (the GEMM pass, the reduce) and the gap
between them, cold L2, medians over reps (H200 probe, needs CUDA and the extension).

Why (thirty-fourth session): a persistent tile kernel at M = 128, K = 8192 takes about as long on 32 tiles as on 132
(the CTA's tile time bounds it; tools/tune_specs/streamk-probe-34.plan), so spreading K over every SM should pay,
but the split rows rarely win in tuning. This shows whether the GEMM pass shrinks with the split and what the
reduce and its launch cost.

    python3 tools/probes/split_breakdown.py --op gemm_a8w8_blockscale --shapes 128x4096x8192 \
        --kernels gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a --splits 1,2,4
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


def kernel_rows(fn, device, reps):
    """[(name, median duration us, median start offset from the call's first kernel us)] of fn's kernels."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    n_flush = len(_kernels_of(lambda: bench.flush_l2(device), device))
    per_call = []
    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            bench.flush_l2(device)
            fn()
        torch.cuda.synchronize(device)
    acts = _cuda_events(prof)
    n_fn = len(acts) // reps - n_flush
    if n_fn <= 0 or len(acts) != reps * (n_flush + n_fn):
        return []
    for r in range(reps):
        per_call.append(acts[r * (n_flush + n_fn) + n_flush:(r + 1) * (n_flush + n_fn)])
    rows = []
    for i in range(n_fn):
        t0 = [c[0][1] for c in per_call]
        rows.append((per_call[0][i][0][:60],
                     statistics.median(c[i][2] for c in per_call) / 1000.0,
                     statistics.median(c[i][1] - s for c, s in zip(per_call, t0)) / 1000.0))
    span = statistics.median(max(e[1] + e[2] for e in c) - c[0][1] for c in per_call) / 1000.0
    rows.append(("span", span, 0.0))
    return rows


def _cuda_events(prof):
    out = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() == torch.autograd.DeviceType.CUDA:
            out.append((e.name(), int(e.start_ns()), int(e.duration_ns())))
    return sorted(out, key=lambda x: x[1])


def _kernels_of(fn, device):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize(device)
    return _cuda_events(prof)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", required=True)
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", required=True, help="comma-separated MxNxK")
    ap.add_argument("--kernels", required=True, help="comma-separated kernel names")
    ap.add_argument("--splits", default="1", help="comma-separated split_k values")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(0)
    first = True
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        problem, _, _ = bench.make_problem(args.op, args.variant, M, N, K, device, gen)
        for kernel in args.kernels.split(","):
            for split in args.splits.split(","):
                fn = pinned(getattr(flygemm, args.op), problem, f"{kernel}:{split}")
                if first:  # the first profiler session of a process can miss activities
                    kernel_rows(fn, device, 3)
                    first = False
                short = kernel.replace(args.op + ".", "")
                for name, dur, start in kernel_rows(fn, device, args.reps):
                    print(f"{shape:>16} {short:44} {split:>2} {name[:40]:40} {dur:8.1f} us  at {start:6.1f}",
                          flush=True)


if __name__ == "__main__":
    main()
