#!/usr/bin/env python3
"""Compare tools/tune.py logs with what the dispatch table picks today, in the same run.

For every (op, M, N, K) of the logs it finds the kernel and split_k that the production lookup
(csrc/dispatch.cpp through the test-only op torch.ops.flygemm_testing.dispatch_lookup) chooses from
kernels/configs/<arch>.csv - split_k 0 rows resolved by the C++ auto_split_k with each kernel's tile -
and reads that choice's time from the same log, next to the best measured candidate. A row is marked
MERGE when the best beats the table's choice by at least --gain; --tuned / --out write those winners'
rows of tools/tune.py's tuned.csv to a file for tools/merge_tuned.py. Rows whose table choice was not
measured in the run show "-" (nothing to compare in the same run: never merged).

    python tools/tune_vs_table.py --gain 1.02 tune-*.log --tuned tuned.csv --out winners.csv
"""
from __future__ import annotations

import argparse
import csv
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_kernels  # noqa: E402  (kernel specs exactly as the registry is generated from them)
from tune import m_bucket  # noqa: E402  (the bucket tuned.csv writes for a measured M)

# a result line of tools/tune.py: M N K [*]kernel split_k us ...
LINE = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+\*?(\S+)\s+(\d+)\s+([\d.]+|nan)\s")


def read_logs(paths):
    """{(M, N, K, kernel): {split_k: us}} over every log (a later log's time replaces an earlier one)."""
    times = {}
    for p in paths:
        for line in open(p):
            m = LINE.match(line)
            if m and m.group(6) != "nan":
                M, N, K, kernel, sk, us = m.groups()
                times.setdefault((int(M), int(N), int(K), kernel), {})[int(sk)] = float(us)
    return times


def swaps_operands(spec: dict) -> bool:
    """A swapped-operand tile kernel (param swap_ab=1): its tile is tile_m weight rows by tile_n tokens."""
    return str(spec.get("params", {}).get("swap_ab", 0)) == "1"


def kernel_lines(arch: str, specs: list[dict]) -> dict:
    """The dispatch_lookup kernel CSV line of every built kernel, by op (K / N multiples, max split_k, a
    decode kernel's CTAs per SM and bulk-ring depth and a tile kernel's stream-K mode from the build's result.json,
    tiles, operand swap and the dispatch-only params area_speed / by_cost from the spec, as in the generated
    registry)."""
    lines = {}
    for s in specs:
        res = ROOT / "build" / "kernels" / arch / s["name"] / "result.json"
        if not res.exists():
            continue  # not built: the production table cannot pick it either
        r = json.loads(res.read_text())
        lines.setdefault(s["op"], []).append(",".join(map(str, [
            s["name"], arch, s["op"], s["in_dtype"], s["out_dtype"], r.get("requires_k_multiple", 1),
            r.get("requires_n_multiple", 1), r.get("max_split_k", 1), s["tile_n"], s["tile_k"],
            s["w_layout"] or "plain", "", s["tile_m"], int(swaps_operands(s)),
            r.get("meta", {}).get("min_blocks_per_sm", 0), r.get("meta", {}).get("w_bulk", 0),
            int(bool(r.get("meta", {}).get("stream_k", 0))), s.get("dispatch", {}).get("area_speed", 0),
            s.get("dispatch", {}).get("by_cost", 0)])))
    return {op: "\n".join(v) + "\n" for op, v in lines.items()}


def resolve_auto_splits(d: dict, klines: str, arch: str, op: str, in_dtype: str, M: int, N: int, K: int) -> dict:
    """A candidate timed at split_k 0 (tools/tune.py forces it as ":0", the automatic split) under the split
    the C++ auto_split_k resolves it to for this shape, so that it can stand for a table row with either;
    an explicitly timed split of the same value keeps its own time. The resolution is this build's rule: read
    logs taken under an earlier auto_split_k with care (before the twenty-second session's one-wave rule for
    the .sw kernels; before the twenty-fifth session's unsplit bulk-ring kernels at K <= 4096, whose ":0"
    timings in older logs are of the 192-CTA split; before the twenty-sixth session's unsplit .sw kernels at
    fewer than 24 K tiles)."""
    out = {key: us for key, us in d.items() if key[1] != 0}
    for (kernel, sk), us in d.items():
        if sk == 0:
            out.setdefault((kernel, auto_split(klines, arch, op, in_dtype, "bf16", kernel, M, N, K)), us)
    return out


def auto_split(klines: str, arch: str, op: str, in_dtype: str, out_dtype: str, kernel: str,
               M: int, N: int, K: int) -> int:
    """The split_k this build runs `kernel` at for a row with split_k 0 (the C++ auto_split_k, through the
    production lookup over a one-row table)."""
    import torch
    row = f"{arch},{op},{in_dtype},{out_dtype},{2 ** 63 - 1},0,0,{kernel},0\n"
    return int(torch.ops.flygemm_testing.dispatch_lookup(
        klines, row, arch, op, in_dtype, out_dtype, M, N, K, "").split(",")[1])


def measured_m(row: list) -> float:
    """The M a tuned.csv row was timed at, from its TFLOP/s and microseconds (2 M N K / us)."""
    N, K, us, tflops = int(row[5]), int(row[6]), float(row[9]), float(row[10] or 0)
    return tflops * us * 1e6 / (2.0 * N * K)


def fastest_per_key(rows: list) -> list:
    """One tuned.csv row per dispatch key (arch .. K). A tuning run appends one winner per step, so two steps
    over the same shape, or two M of one bucket, leave several rows for one key, and tools/merge_tuned.py would
    keep whichever came last. The row timed at the largest M wins (times at different M do not compare: in the
    twenty-eighth session 768 x 2112 x 7168's 36.6 us would have beaten 1024 x 2112 x 7168's 42.5 us and put
    the M = 768 winner in the bucket that M = 1024 is tuned for); among rows of one M (within 10%, TFLOP/s are
    rounded), the fastest."""
    best = {}
    for r in rows:
        key = tuple(r[:7])
        if key not in best:
            best[key] = r
            continue
        m, m_best = measured_m(r), measured_m(best[key])
        if m > 1.1 * m_best or (m * 1.1 >= m_best and float(r[9]) < float(best[key][9])):
            best[key] = r
    return list(best.values())


def dispatch_rows(arch: str, op: str) -> str:
    with open(ROOT / "kernels" / "configs" / f"{arch}.csv") as f:
        rows = [",".join(r[:9]) for r in csv.reader(line for line in f if line.startswith(f"{arch},{op},"))]
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="tools/tune.py output logs")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--gain", type=float, default=1.02, help="table time / best time that marks a row MERGE")
    ap.add_argument("--tuned", help="tools/tune.py's tuned.csv of the same run")
    ap.add_argument("--out", help="with --tuned: write the MERGE rows of tuned.csv here")
    args = ap.parse_args(argv)

    import torch
    import flygemm  # noqa: F401  (registers torch.ops.flygemm_testing)

    specs = {s["name"]: s for s in build_kernels.read_kernel_specs(args.arch)}
    klines = kernel_lines(args.arch, list(specs.values()))
    by_shape = {}
    for (M, N, K, kernel), splits in read_logs(args.logs).items():
        if kernel in specs:
            by_shape.setdefault((specs[kernel]["op"], M, N, K), {}).update(
                {(kernel, sk): us for sk, us in splits.items()})
    merge = set()
    for (op, M, N, K), d in sorted(by_shape.items()):
        in_dtype = specs[next(iter(d))[0]]["in_dtype"]
        d = resolve_auto_splits(d, klines[op], args.arch, op, in_dtype, M, N, K)
        kernel, sk, source = torch.ops.flygemm_testing.dispatch_lookup(
            klines[op], dispatch_rows(args.arch, op), args.arch, op, in_dtype, "bf16", M, N, K, "").split(",")
        now = d.get((kernel, int(sk)))
        best = min(d, key=d.get)
        gain = now / d[best] if now else None
        flag = "MERGE" if gain and gain >= args.gain and best != (kernel, int(sk)) else ""
        if flag:
            merge.add((op, m_bucket(M), N, K))
        print(f"{op:21s} {M:4d} {N:6d} {K:6d}  table {kernel}:{sk} ({source}) "
              f"{now if now else '-'}  best {best[0]}:{best[1]} {d[best]}  "
              f"{f'{gain:.3f}' if gain else '-'} {flag}")
    if args.tuned and args.out:
        with open(args.tuned) as f:
            rows = list(csv.reader(f))
        keep = [rows[0]] + fastest_per_key([r for r in rows[1:] if (r[1], int(r[4]), int(r[5]), int(r[6])) in merge])
        with open(args.out, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(keep)
        print(f"{len(keep) - 1} rows to merge -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
