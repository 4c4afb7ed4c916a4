#!/usr/bin/env python3
"""The issue's speed measurement (flygemm and torch timed interleaved on the same inputs, as
`python -m flygemm bench` does) with the flygemm side pinned to each candidate kernel in turn,
so that a dispatch row can be chosen by its ratio to torch rather than by times taken minutes
apart (tools/tune.py times torch once, before all candidates, and the H200's clocks drift under
sustained load). Rounds go
over all candidates in turn, alternately forward and reversed; each ratio is the median of its
rounds (inputs drawn once per shape).

    python3 tools/pinned_bench.py --op gemm_a8w8 --variant per_tensor --shapes 8192x8192x8192 \
        --kernels gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128.c2x1.sm90a,gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a

Each kernel name may end in :split_k (default 1); pinning goes through FLYGEMM_FORCE_KERNEL."""
import argparse
import statistics
import sys

import torch

import flygemm
from flygemm import bench

from ab import pinned  # tools/ab.py (this script's folder is on sys.path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", required=True)
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", required=True, help="comma-separated MxNxK")
    ap.add_argument("--kernels", required=True, help="comma-separated kernel[:split_k]")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="cuda (the CPU runs the oracle: a dry run)")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    gen = torch.Generator(device=device).manual_seed(1)
    kernels = [k if ":" in k else k + ":1" for k in args.kernels.split(",")]
    print(f"{'op':<22}{'variant':<12}{'shape':<20}{'kernel':<54}{'torch/fly':>10}{'us':>10}  rounds")
    for shape in bench.parse_shapes(args.shapes, []):
        # one problem per shape (drawing a 54560 x 8192 problem takes longer than timing it)
        op_args, peer, _ = bench.make_problem(args.op, args.variant, *shape, device, gen)
        fn = getattr(flygemm, args.op)
        ratios = {k: [] for k in kernels}
        times = {k: [] for k in kernels}
        for r in range(args.rounds):
            for k in (kernels if r % 2 == 0 else kernels[::-1]):
                fly_us, torch_us = bench.time_pair_us(pinned(fn, op_args, k), peer, device)
                ratios[k].append(torch_us / fly_us)
                times[k].append(fly_us)
        for k in sorted(kernels, key=lambda k: -statistics.median(ratios[k])):
            print(f"{args.op:<22}{args.variant:<12}{'x'.join(map(str, shape)):<20}{k:<54}"
                  f"{statistics.median(ratios[k]):>10.3f}{statistics.median(times[k]):>10.1f}  "
                  + " ".join(f"{x:.3f}" for x in ratios[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
