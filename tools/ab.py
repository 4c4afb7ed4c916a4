#!/usr/bin/env python3
"""A/B two pinned kernels of one op on the same inputs, timed interleaved (flush, A, flush, B per
repetition: bench.time_pair_us), so that clock and temperature drift during the run cannot favour
either. Prints B's time / A's time per shape (> 1: A is faster) and which one a dispatch row
should name.

    python3 tools/ab.py --op gemm_a8w8_blockscale --shapes 8192x8192x8192 \
        --a gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a:1 \
        --b gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a:1

Each kernel is pinned through FLYGEMM_FORCE_KERNEL, which the C++ op reads at every call; `table`
instead of kernel:split_k runs what the dispatch table picks (printed per shape), so a candidate can
be compared with the current rows over many shapes at once."""
import argparse
import os
import sys

import torch

import flygemm
from flygemm import bench

TABLE = "table"


def pinned(fn, args, kernel):
    if kernel == TABLE:  # the dispatch table's own choice, nothing forced
        return lambda: fn(*args)

    def call():
        os.environ["FLYGEMM_FORCE_KERNEL"] = kernel
        try:
            return fn(*args)
        finally:
            os.environ.pop("FLYGEMM_FORCE_KERNEL", None)
    return call


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", required=True)
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", required=True, help="comma-separated MxNxK")
    ap.add_argument("--a", required=True, help="kernel:split_k, or `table` (the dispatch table's choice)")
    ap.add_argument("--b", required=True, help="kernel:split_k, or `table`")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved measurements per shape")
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(0)
    fn = getattr(flygemm, args.op)
    print(f"A = {args.a}\nB = {args.b}")
    print(f"{'M':>6} {'N':>6} {'K':>6} {'A us':>9} {'B us':>9}  B/A per round")
    for M, N, K in bench.parse_shapes(args.shapes, []):
        problem, _, _ = bench.make_problem(args.op, args.variant, M, N, K, device, gen)
        call_a, call_b = pinned(fn, problem, args.a), pinned(fn, problem, args.b)
        rounds = [bench.time_pair_us(call_a, call_b, device) for _ in range(args.rounds)]
        a_us = sorted(r[0] for r in rounds)[len(rounds) // 2]
        b_us = sorted(r[1] for r in rounds)[len(rounds) // 2]
        ratios = " ".join(f"{b / a:.3f}" for a, b in rounds)
        note = ""
        if TABLE in (args.a, args.b):
            dtype = problem[0].dtype
            pick = flygemm.explain(args.op, M, N, K, dtype, "cuda")
            note = f"  (table: {pick['kernel']}:{pick['split_k']})"
        print(f"{M:6d} {N:6d} {K:6d} {a_us:9.1f} {b_us:9.1f}  {ratios}  -> {'A' if a_us <= b_us else 'B'}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
