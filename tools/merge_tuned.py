#!/usr/bin/env python3
"""Merge tools/tune.py's winning rows (tuned.csv) into a dispatch table: a row with the same
(arch, op, in_dtype, out_dtype, m_max, N, K) is replaced in place, the others are appended under
the given comment lines.

    python3 tools/merge_tuned.py tuned.csv --table kernels/configs/sm_90a.csv \
        --comment "gemm_a8w8 at M = 16384: tools/gpu_tune.sh on the H200, <date> (<log file>)"

tune.py writes the next power of two above the measured M as m_max; --m-max sets another bucket for every merged
row, e.g. --m-max 96 for rows measured at M = 65..96 (csrc/dispatch.cpp: such a row answers M = 65..96 and leaves
M = 97..128 to the layer's 128 row).
"""
import argparse
import pathlib
import sys

KEY_COLUMNS = 7


def row_key(line: str):
    return tuple(line.split(",")[:KEY_COLUMNS])


def with_m_max(line: str, m_max: int) -> str:
    """The row with its m_max column (the fifth) replaced."""
    cols = line.split(",")
    cols[4] = str(m_max)
    return ",".join(cols)


def merge(table_lines, tuned_lines, comments):
    tuned = {row_key(line): line for line in tuned_lines}
    out, replaced = [], set()
    for line in table_lines:
        key = row_key(line)
        if line and not line.startswith("#") and key in tuned:
            out.append(tuned[key])
            replaced.add(key)
        else:
            out.append(line)
    added = [line for key, line in tuned.items() if key not in replaced]
    if added:
        out += [f"# {c}" for c in comments] + added
    return out, len(replaced), len(added)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tuned")
    ap.add_argument("--table", default="kernels/configs/sm_90a.csv")
    ap.add_argument("--comment", action="append", default=[], help="comment line above appended rows")
    ap.add_argument("--m-max", type=int, default=0, help="bucket for every merged row (default: tune.py's)")
    args = ap.parse_args(argv)
    table = pathlib.Path(args.table)
    # tools/tune.py writes a header line; a hand-made file may have none (its first row is data)
    tuned_lines = [ln for ln in pathlib.Path(args.tuned).read_text().splitlines()
                   if ln.strip() and not ln.startswith(("#", "arch,"))]
    if args.m_max > 0:
        tuned_lines = [with_m_max(ln, args.m_max) for ln in tuned_lines]
    lines, n_replaced, n_added = merge(table.read_text().splitlines(), tuned_lines, args.comment)
    table.write_text("\n".join(lines) + "\n")
    print(f"{table}: {n_replaced} rows replaced, {n_added} added")
    return 0


if __name__ == "__main__":
    sys.exit(main())
