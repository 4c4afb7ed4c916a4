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
be compared with the current rows over many shapes at once.

--pairs FILE times one pair per line instead, `op variant MxNxK A B` (# comments, also after a pair), e.g. the old and the new
dispatch row of every shape a table change touched, all ops in one process."""
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


def time_ab(op, variant, M, N, K, a, b, rounds, device, gen) -> str:
    """`A us B us  B/A per round  -> winner` for one shape, `rounds` interleaved measurements."""
    fn = getattr(flygemm, op)
    problem, _, _ = bench.make_problem(op, variant, M, N, K, device, gen)
    call_a, call_b = pinned(fn, problem, a), pinned(fn, problem, b)
    times = [bench.time_pair_us(call_a, call_b, device) for _ in range(rounds)]
    a_us = sorted(t[0] for t in times)[len(times) // 2]
    b_us = sorted(t[1] for t in times)[len(times) // 2]
    ratios = " ".join(f"{tb / ta:.3f}" for ta, tb in times)
    note = ""
    if TABLE in (a, b):
        pick = flygemm.explain(op, M, N, K, problem[0].dtype, "cuda")
        note = f"  (table: {pick['kernel']}:{pick['split_k']})"
    return f"{a_us:9.1f} {b_us:9.1f}  {ratios}  -> {'A' if a_us <= b_us else 'B'}{note}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="")
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK")
    ap.add_argument("--a", default="", help="kernel:split_k, or `table` (the dispatch table's choice)")
    ap.add_argument("--b", default="", help="kernel:split_k, or `table`")
    ap.add_argument("--pairs", default="", help="file of `op variant MxNxK A B` lines (instead of --op/--shapes/--a/--b)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved measurements per shape")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args(argv)
    if args.pairs:
        jobs = [fields for line in open(args.pairs) if (fields := line.split("#")[0].split())]  # "# ..." comments
    elif args.op and args.shapes and args.a and args.b:
        jobs = [[args.op, args.variant, f"{M}x{N}x{K}", args.a, args.b]
                for M, N, K in bench.parse_shapes(args.shapes, [])]
        print(f"A = {args.a}\nB = {args.b}")
    else:
        ap.error("give --pairs, or --op, --shapes, --a and --b")
    device = torch.device(args.device)
    gen = torch.Generator(device=device).manual_seed(0)
    print(f"{'op':22} {'M':>6} {'N':>6} {'K':>6} {'A us':>9} {'B us':>9}  B/A per round")
    for op, variant, shape, a, b in jobs:
        (M, N, K), = bench.parse_shapes(shape, [])
        print(f"{op:22} {M:6d} {N:6d} {K:6d} " + time_ab(op, variant, M, N, K, a, b, args.rounds, device, gen)
              + (f"  A = {a}  B = {b}" if args.pairs else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
