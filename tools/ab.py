#!/usr/bin/env python3
"""A/B two pinned kernels of one op on the same inputs, timed interleaved (flush, A, flush, B per
repetition: bench.time_pair_us), so that clock and temperature drift during the run cannot favour
either; every round on new input tensors at other addresses (see SPACER_STEP; --same-tensors: not). Prints B's time / A's time per shape (> 1: A is faster) and which one a dispatch row
should name.

    python3 tools/ab.py --op gemm_a8w8_blockscale --shapes 8192x8192x8192 \
        --a gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a:1 \
        --b gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a:1

Each kernel is pinned through FLYGEMM_FORCE_KERNEL, which the C++ op reads at every call; `table`
instead of kernel:split_k runs what the dispatch table picks (printed per shape), so a candidate can
be compared with the current rows over many shapes at once; `torch` times the op's torch peer (torch.mm /
torch._scaled_mm, as tools/bench.py does), so a pair `table torch` gives the gap to cuBLAS in the same run.

--pairs FILE times one pair per line instead, `op variant MxNxK A B` (# comments, also after a pair), e.g. the old and the new
dispatch row of every shape a table change touched, all ops in one process."""
import argparse
import os
import sys

import torch

import flygemm
from flygemm import bench

TABLE = "table"
TORCH = "torch"  # the torch peer of bench.make_problem (torch.mm / torch._scaled_mm), for the gap to cuBLAS in the same run


def pinned(fn, args, kernel, peer=None):
    if kernel == TABLE:  # the dispatch table's own choice, nothing forced
        return lambda: fn(*args)
    if kernel == TORCH:
        if peer is None:
            raise ValueError("this op / shape has no torch peer to time")
        return peer

    def call():
        os.environ["FLYGEMM_FORCE_KERNEL"] = kernel
        try:
            return fn(*args)
        finally:
            os.environ.pop("FLYGEMM_FORCE_KERNEL", None)
    return call


# Each round's operands are new tensors behind a spacer of r * SPACER_STEP bytes, so they sit at other addresses.
# Why: the time of a kernel depends on where its operands sit. On the H200 the same two kernels gave B / A 0.958 in one
# pair and 0.990 in another of the same run, each repeated to +-0.005 over the rounds of its pair; with new tensors every
# round the ratio alternated 0.960 / 0.987 / 0.961 / 0.988 / 0.953, and t128x112 at 1024 x 7168 x 16384 took 15% longer
# in one placement of five (docs/PERF.md, thirty-eighth session). On one set of tensors the rounds share the offset, so
# "every round won" was one sample; judge a candidate by the median over fresh rounds (--rounds 5 or more).
SPACER_STEP = 6 * 2 ** 20 + 4096


def round_problems(op, variant, M, N, K, device, gen, rounds, fresh):
    """(operands, torch peer) per round (fresh: new tensors behind a spacer of a size that differs per round), else one
    for all."""
    if not fresh:
        problem, peer, _ = bench.make_problem(op, variant, M, N, K, device, gen)
        yield from ((problem, peer) for _ in range(rounds))
        return
    for r in range(rounds):
        spacer = torch.empty(r * SPACER_STEP, dtype=torch.uint8, device=device)
        problem, peer, _ = bench.make_problem(op, variant, M, N, K, device, gen)
        yield problem, peer
        del problem, peer, spacer


def time_ab(op, variant, M, N, K, a, b, rounds, device, gen, fresh=True, warm_l2=False) -> str:
    """`A us B us  B/A per round  -> winner` for one shape, `rounds` interleaved measurements."""
    fn = getattr(flygemm, op)
    times = []
    for problem, peer in round_problems(op, variant, M, N, K, device, gen, rounds, fresh):
        times.append(bench.time_pair_us(pinned(fn, problem, a, peer), pinned(fn, problem, b, peer), device,
                                         warm_l2=warm_l2))
    a_us = sorted(t[0] for t in times)[len(times) // 2]
    b_us = sorted(t[1] for t in times)[len(times) // 2]
    # The verdict goes by the median of the per-round ratios: with new tensors each round the absolute times move with
    # the placement, the ratio of one round's interleaved pair less.
    median = sorted(tb / ta for ta, tb in times)[len(times) // 2]
    ratios = " ".join(f"{tb / ta:.3f}" for ta, tb in times) + f"  median {median:.3f}"
    note = ""
    if TABLE in (a, b):  # what the table's call ran (the dispatch log: per-token calls may take a row_scales row)
        _, picks = bench.run_logged(pinned(fn, problem, TABLE), ())
        note = f"  (table: {picks[0]['kernel']}:{picks[0]['split_k']})" if picks else ""
    return f"{a_us:9.1f} {b_us:9.1f}  {ratios}  -> {'A' if median >= 1.0 else 'B'}{note}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="")
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK")
    ap.add_argument("--a", default="", help="kernel:split_k, `table` (the dispatch table's choice) or `torch` (its peer)")
    ap.add_argument("--b", default="", help="kernel:split_k, or `table`")
    ap.add_argument("--pairs", default="", help="file of `op variant MxNxK A B` lines (instead of --op/--shapes/--a/--b)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved measurements per shape")
    ap.add_argument("--same-tensors", dest="fresh", action="store_false",
                    help="time every round on the same operand tensors (default: new tensors at other addresses for "
                         "every round, see SPACER_STEP)")
    ap.add_argument("--warm-l2", action="store_true",
                    help="no L2 flush between calls (a diagnostic: operands that fit L2 come from it, so the pair shows "
                         "what the kernels' own work costs without the HBM stream; never for dispatch rows)")
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
        name = op if variant == "-" else f"{op}/{variant}"
        try:
            timed = time_ab(op, variant, M, N, K, a, b, args.rounds, device, gen, args.fresh, args.warm_l2)
        except (RuntimeError, ValueError) as e:  # one pair that cannot run (torch's peer refuses N % 16) ends no run
            timed = f"error: {str(e).splitlines()[0]}"
        print(f"{name:22} {M:6d} {N:6d} {K:6d} " + timed + (f"  A = {a}  B = {b}" if args.pairs else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
