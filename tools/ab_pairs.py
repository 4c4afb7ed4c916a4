"""Write the `tools/ab.py --pairs` file that compares an earlier dispatch table with today's, offline.

For every shape given (--shapes, and with --changed-rows every exact row whose pick differs between the two
tables, at M = its bucket's m_max), both picks come from the production lookup (csrc/dispatch.cpp through the
test-only op torch.ops.flygemm_testing.dispatch_lookup) over this build's kernels: A reads the table as it was at
git revision --rev, B the working tree's. Shapes whose two picks agree are left out. The device run then times
each pair interleaved in one process:

    python3 tools/ab_pairs.py --rev HEAD~3 --op gemm_a8w8 --changed-rows --shapes 300x3000x4096,768x1024x4096 \\
        > tools/tune_specs/ab-28.pairs
    python3 tools/ab.py --pairs tools/tune_specs/ab-28.pairs --rounds 3        # on the GPU machine

A kernel of the old table that this build no longer has cannot be run; such a shape is reported on stderr.

--sweep (no --rev): for every shape, every unsplit kernel of the op's own tile family (in dtype, bf16 out; not the decode
or MX families) against the working tree's pick, as `table <kernel>:1` pairs. The neighbouring buckets' picks miss
tiles that no bucket took yet (the fortieth session's bf16 512 x 2112 x 7168: t128x80, 0.78x the time of t128x128):

    python3 tools/ab_pairs.py --sweep --op gemm_a16w16 --shapes 512x2112x7168,512x4096x4096 > tools/tune_specs/x.pairs
"""
from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys

import build_kernels
import tune_vs_table as tv


def table_rows(text: str, arch: str, op: str) -> str:
    """The dispatch rows of one op from a table's CSV text, in the lookup op's form."""
    rows = [",".join(r[:9]) for r in csv.reader(line for line in io.StringIO(text) if line.startswith(f"{arch},{op},"))]
    return "\n".join(rows) + "\n"


def changed_row_shapes(old: str, new: str, arch: str, op: str, in_dtype: str) -> list[tuple[int, int, int]]:
    """(m_max, N, K) of every exact row (N, K > 0; a finite bucket) of `new` whose pick or split differs from `old`."""
    def exact(text):
        out = {}
        for r in csv.reader(io.StringIO(table_rows(text, arch, op))):
            if len(r) >= 9 and r[3] == "bf16" and r[2] == in_dtype and int(r[5]) > 0 and int(r[4]) < 2 ** 63 - 1:
                out[(int(r[4]), int(r[5]), int(r[6]))] = (r[7], r[8])
        return out
    before, after = exact(old), exact(new)
    return sorted(key for key, pick in after.items() if before.get(key) != pick)


def pick(klines: str, rows: str, arch: str, op: str, in_dtype: str, M: int, N: int, K: int) -> str:
    import torch
    kernel, split, _ = torch.ops.flygemm_testing.dispatch_lookup(
        klines, rows, arch, op, in_dtype, "bf16", M, N, K, "").split(",")
    return f"{kernel}:{split}"


def sweep_lines(op: str, variant: str, shapes, specs: dict, table_pick) -> list[str]:
    """`op variant MxNxK table <kernel>:1` for every kernel of op's tile family (op's input dtype, bf16 out) but the
    shape's current pick when that pick runs unsplit; table_pick(M, N, K) -> 'kernel:split'."""
    in_dtype = in_dtype_of(op)
    family = [n for n, s in specs.items() if s["family"] == op and s["in_dtype"] == in_dtype and s["out_dtype"] == "bf16"]
    lines = []
    for M, N, K in shapes:
        current = table_pick(M, N, K)
        lines += [f"{op} {variant} {M}x{N}x{K} table {name}:1  # table {current}"
                  for name in sorted(family) if f"{name}:1" != current]
    return lines


def in_dtype_of(op: str) -> str:
    return {"gemm_a16w16": "bf16", "gemm_mxfp4": "fp4_e2m1_x2"}.get(op, "fp8_e4m3fn")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", help="git revision of the earlier kernels/configs/<arch>.csv (A); not with --sweep")
    ap.add_argument("--sweep", action="store_true", help="every unsplit kernel of the op's family against today's pick")
    ap.add_argument("--op", action="append", required=True, help="op (repeatable)")
    ap.add_argument("--variant", default="-", help="tools/ab.py variant for gemm_a8w8 (per_tensor / per_token)")
    ap.add_argument("--shapes", default="", help="comma-separated MxNxK")
    ap.add_argument("--changed-rows", action="store_true", help="also every exact row that changed since --rev")
    ap.add_argument("--arch", default="sm_90a")
    args = ap.parse_args(argv)
    if bool(args.rev) == args.sweep:
        ap.error("give either --rev (compare two tables) or --sweep")

    import flygemm  # noqa: F401  (registers torch.ops.flygemm_testing)

    path = f"kernels/configs/{args.arch}.csv"
    new = (tv.ROOT / path).read_text()
    specs = {s["name"]: s for s in build_kernels.read_kernel_specs(args.arch)}
    klines = tv.kernel_lines(args.arch, list(specs.values()))
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
    command = f"python3 tools/ab_pairs.py {' '.join(argv or sys.argv[1:])}"
    if args.sweep:
        print(f"# every unsplit kernel of the family against the working tree's pick; {command}")
        for op in args.op:
            rows = table_rows(new, args.arch, op)
            variant = args.variant if op == "gemm_a8w8" else "-"
            print("\n".join(sweep_lines(op, variant, shapes, specs, lambda M, N, K: pick(
                klines[op], rows, args.arch, op, in_dtype_of(op), M, N, K))))
        return 0
    old = subprocess.run(["git", "show", f"{args.rev}:{path}"], cwd=tv.ROOT, check=True, capture_output=True,
                         text=True).stdout
    print(f"# A: {path} at {args.rev}, B: the working tree's; {command}")
    for op in args.op:
        in_dtype = in_dtype_of(op)
        variant = args.variant if op == "gemm_a8w8" else "-"
        todo = list(shapes) + (changed_row_shapes(old, new, args.arch, op, in_dtype) if args.changed_rows else [])
        for M, N, K in dict.fromkeys(todo):
            a = pick(klines[op], table_rows(old, args.arch, op), args.arch, op, in_dtype, M, N, K)
            b = pick(klines[op], table_rows(new, args.arch, op), args.arch, op, in_dtype, M, N, K)
            if a.split(":")[0] not in specs:
                print(f"ab_pairs: {op} {M}x{N}x{K}: A's kernel {a} is not built", file=sys.stderr)
            elif a != b:
                print(f"{op} {variant} {M}x{N}x{K} {a} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
