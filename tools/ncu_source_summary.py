#!/usr/bin/env python3
"""Summarize an Nsight Compute source page (`ncu -i rep --page source --csv --print-source sass`):
where the warps' stall samples fall, by stall reason, by opcode and by instruction.

    python3 tools/ncu_source_summary.py ncu_src.csv [top]

Samples that ncu attributes to no listed reason (e.g. a wgmma waiting to be accepted) show as
"unattributed" in the instruction lines."""
import collections
import csv
import re
import sys

TOTAL = "Warp Stall Sampling (All Samples)"


def _num(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def load(path: str):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head_i = next(i for i, r in enumerate(rows) if "Address" in r and "Source" in r)
    head = rows[head_i]
    body = [r for r in rows[head_i + 1:] if len(r) == len(head)]
    return {name: j for j, name in enumerate(head)}, body


def opcode(source: str) -> str:
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    op = text.split()[0].split(".")[0] if text else "?"
    if op in ("HGMMA", "QGMMA", "IGMMA") and "!UPT" in text:
        op += " (first of group)"
    return op


def main(argv=None) -> int:
    argv = argv if argv is not None else sys.argv[1:]
    path, top = argv[0], int(argv[1]) if len(argv) > 1 else 25
    col, body = load(path)
    if TOTAL not in col:
        print("no stall-sampling column; columns:", list(col))
        return 1
    reasons = [n for n in col if n.startswith("stall_") and "(Not Issued)" not in n]
    samples = [_num(r[col[TOTAL]]) for r in body]
    total = sum(samples) or 1.0
    print(f"{len(body)} instructions, {total:.0f} samples")
    by_reason = sorted(((sum(_num(r[col[n]]) for r in body), n) for n in reasons), reverse=True)
    print("by reason:  " + ", ".join(f"{n[6:]} {s / total:.1%}" for s, n in by_reason[:8] if s))
    by_op = collections.Counter()
    for r, s in zip(body, samples):
        by_op[opcode(r[col["Source"]])] += s
    print("by opcode:  " + ", ".join(f"{op} {s / total:.1%}" for op, s in by_op.most_common(8)))
    for r, s in sorted(zip(body, samples), key=lambda x: -x[1])[:top]:
        parts = sorted(((_num(r[col[n]]), n[6:]) for n in reasons), reverse=True)
        named = sum(v for v, _ in parts)
        why = [f"{n} {v / s:.0%}" for v, n in parts[:2] if v]
        if s - named > 0.2 * s:
            why.append(f"unattributed {(s - named) / s:.0%}")
        print(f"{s / total:6.1%}  {r[col['Source']].strip()[:64]:64}  {', '.join(why)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
