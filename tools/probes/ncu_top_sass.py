#!/usr/bin/env python3
"""Summarize the SASS page of an Nsight Compute report (`ncu -i rep --page source --csv --print-source sass`):
the share of warp-stall samples per opcode and the instructions with the most samples, each with its largest stall
reasons where the csv has per-reason columns. Written in the forty-fourth session to ask where the blockscale
promotion's cycles go (tools/probes/ncu_split.sh, FLYGEMM_NCU_SOURCE=1).

    python3 tools/probes/ncu_top_sass.py report.csv [--top 25]
"""
import argparse
import collections
import csv
import sys

ALL_SAMPLES = "Warp Stall Sampling (All Samples)"


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def read_rows(path: str):
    """The csv's header (the line that starts with "Address"; ncu puts a "Kernel Name" line first) and rows."""
    with open(path, newline="") as f:
        table = [row for row in csv.reader(f) if row]
    starts = [i for i, row in enumerate(table) if row[0] == "Address"]
    if not starts:
        sys.exit(f"{path}: no header line starting with Address")
    return table[starts[0]], table[starts[0] + 1:]


def opcode(source: str) -> str:
    words = source.split()
    if words and words[0].startswith("@"):  # predicate
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    header, rows = read_rows(args.csv)
    col = {name: i for i, name in enumerate(header)}
    if ALL_SAMPLES not in col or "Source" not in col:
        sys.exit(f"columns not found; header: {header}")
    samples = [number(r[col[ALL_SAMPLES]]) for r in rows]
    total = sum(samples) or 1.0
    reasons = [name for name in header if name.startswith("stall_") and "Not Issued" not in name]
    by_op = collections.Counter()
    for r, s in zip(rows, samples):
        by_op[opcode(r[col["Source"]])] += s
    print(f"{len(rows)} instructions, {int(total)} samples; by opcode:")
    print("  " + ", ".join(f"{op} {100 * s / total:.1f}%" for op, s in by_op.most_common(12)))
    order = sorted(range(len(rows)), key=lambda i: -samples[i])[:args.top]
    for i in order:
        r = rows[i]
        top_reasons = sorted(((number(r[col[n]]), n) for n in reasons), reverse=True)[:3]
        why = ", ".join(f"{n[len('stall_'):]} {v:.0f}" for v, n in top_reasons if v > 0)
        address = r[col["Address"]] if "Address" in col else str(i)
        print(f"  {address:>8} {100 * samples[i] / total:5.1f}% {r[col['Source']][:60]:<60} {why}")


if __name__ == "__main__":
    main()
