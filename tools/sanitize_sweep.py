#!/usr/bin/env python3
"""A small sweep of every op that has a GPU kernel, meant to run under compute-sanitizer:
    compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py
Each result is checked against the CPU oracle so a silent wrong answer also fails."""
import sys

import torch

import flygemm
from flygemm import bench

SHAPES = [(1, 64, 64), (7, 136, 208), (130, 264, 528)]  # K % 16, N % 8: every family's alignment


def main() -> int:
    gen = torch.Generator().manual_seed(7)
    built = {k["op"] for k in flygemm.info()["kernels"] if k["arch"] == flygemm._arch_of("cuda")}
    failures = 0
    for op in sorted(built):
        for M, N, K in SHAPES:
            args, _, _ = bench.make_problem(op, "per_token", M, N, K, torch.device("cuda"), gen)
            out = getattr(flygemm, op)(*args)
            torch.cuda.synchronize()
            err = bench.rel_fro(out, getattr(flygemm, op)(*(t.cpu() for t in args)))
            print(f"{op} {M}x{N}x{K}: rel err {err:.2e}")
            failures += not err <= 1e-2
    print("sanitize sweep:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
