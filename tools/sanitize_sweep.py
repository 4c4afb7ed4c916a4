#!/usr/bin/env python3
"""A small sweep of every op that has a GPU kernel, meant to run under compute-sanitizer:
    compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py
Each result is checked against the CPU oracle so a silent wrong answer also fails.

    python3 tools/sanitize_sweep.py --each-kernel [--match c2x1]
runs the sweep once per built kernel of this device's arch (pinned with FLYGEMM_FORCE_KERNEL), so
that racecheck / synccheck see kernels the dispatch table does not pick (e.g. the cluster variants:
    compute-sanitizer --tool racecheck python3 tools/sanitize_sweep.py --each-kernel --match .c
); --split-k 1,3 also runs each pinned kernel with a split-K mode at those split_k values (capped at
its max_split_k; e.g. the workspace stores of the .sk kernels:
    compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match .sk --split-k 1,2,3
). --shapes MxNxK,... replaces the sweep's shapes and --ops limits it to some ops, e.g. K over the
stage count so that racecheck sees a stage refilled inside one tile (t128 blockscale: 6 stages of 128 K):
    compute-sanitizer --tool racecheck python3 tools/sanitize_sweep.py --each-kernel --ops gemm_a8w8_blockscale --shapes 130x264x1056
"""
import argparse
import os
import sys

import torch

import flygemm
from flygemm import bench

SHAPES = [(1, 64, 64), (7, 136, 224), (130, 264, 544)]  # K % 32, N % 8: every family's alignment
DTYPE_NAMES = bench.KERNEL_DTYPE_NAMES


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--each-kernel", action="store_true", help="pin every built kernel in turn")
    ap.add_argument("--match", default="", help="with --each-kernel: only kernels whose name contains one of these "
                    "(comma-separated)")
    ap.add_argument("--split-k", default="1", help="with --each-kernel: split_k values to pin (comma-separated)")
    ap.add_argument("--shapes", default="", help="MxNxK,... instead of the built-in sweep shapes")
    ap.add_argument("--ops", default="", help="comma-separated ops (default: every op with a GPU kernel)")
    ap.add_argument("--variant", default="per_token", help="the problems' variant (flygemm.bench.make_problem): "
                    "per_token / per_tensor scales for gemm_a8w8, fp16 for gemm_a16w16 with fp16 operands (the "
                    "fp16 kernels), per_token_fp16 for the fp8 ops with fp16 output; other ops ignore it)")
    args = ap.parse_args(argv)
    shapes = bench.parse_shapes(args.shapes, SHAPES)
    gen = torch.Generator().manual_seed(7)
    arch = flygemm._arch_of("cuda")
    kernels = [k for k in flygemm.info()["kernels"] if k["arch"] == arch]
    built = {k["op"] for k in kernels}
    if args.ops:
        unknown = set(args.ops.split(",")) - built
        if unknown:
            raise SystemExit(f"no GPU kernel built for {sorted(unknown)} (built: {sorted(built)})")
        built = set(args.ops.split(","))
    failures = total_pinned = 0
    for op in sorted(built):
        pinned = 0
        for M, N, K in shapes:
            pargs, _, _ = bench.make_problem(op, args.variant, M, N, K, torch.device("cuda"), gen)
            fn = getattr(flygemm, op)
            ref = fn(*(t.cpu() if isinstance(t, torch.Tensor) else t for t in pargs))
            pins = [None]
            if args.each_kernel:
                out0 = fn(*pargs)
                pins = [f"{k['name']}:{s}" for k in kernels
                        if k["op"] == op and any(m in k["name"] for m in args.match.split(","))
                        and K % max(1, k["requires_k_multiple"]) == 0  # else it refuses the shape
                        and k["in_dtype"] == DTYPE_NAMES.get(pargs[0].dtype)
                        and k["out_dtype"] == DTYPE_NAMES.get(out0.dtype)
                        for s in sorted({min(int(v), max(1, k["max_split_k"]))
                                         for v in args.split_k.split(",")})]
            pinned += sum(1 for pin in pins if pin)
            for pin in pins:
                if pin:
                    os.environ["FLYGEMM_FORCE_KERNEL"] = pin
                try:
                    out = fn(*pargs)
                    torch.cuda.synchronize()
                finally:
                    os.environ.pop("FLYGEMM_FORCE_KERNEL", None)
                err = bench.rel_fro(out, ref)
                print(f"{op} {M}x{N}x{K}{' ' + pin if pin else ''}: rel err {err:.2e}")
                failures += not err <= 1e-2
        if args.each_kernel:
            print(f"{op}: {pinned} pinned calls")
            total_pinned += pinned
            # an op asked for by name that pinned nothing was not checked: say so instead of passing
            if args.ops and not pinned:
                print(f"{op}: no built kernel matched --match {args.match!r} on these shapes")
                failures += 1
    if args.each_kernel and not total_pinned:
        print(f"no built kernel matched --match {args.match!r}")
        failures += 1
    print("sanitize sweep:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
