#!/usr/bin/env python3
"""What the current sm_90a tables make of measured A/B pairs: for each pair line of a tools/ab.py log (A forced, B the
table when the log was written), the pick the repo's tables answer now, and the time ratio that pick stands for: B / A
where it is B's kernel, 1 where it is A's again, unknown otherwise. Prints each pair and the geomean over the known ones.

    python3 tools/probes/ab_outcome.py docs/measurements/2026-12-04-h200-ab-46-cost-rule.txt

Needs the built extension (the production lookup through tests/test_dispatch.py's sm90a_lookup).
"""
import argparse
import math
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAIR = re.compile(r"^(gemm_\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+.*median ([\d.]+)")


def pairs(path):
    """(op, variant, M, N, K, A kernel, B kernel, median B / A) of each pair line; B is the table's kernel then."""
    for line in open(path, errors="replace"):
        m, a = PAIR.match(line), re.search(r"A = (\S+?):\d", line)
        b = re.search(r"\(table: (\S+?):", line)
        if m and a and b and "B = table" in line:
            op, _, variant = m.group(1).partition("/")
            yield op, variant or "-", *map(int, m.group(2, 3, 4)), a.group(1), b.group(1), float(m.group(7))


def outcome(now, a, b, ratio):
    return ratio if now == b else 1.0 if now == a else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from test_dispatch import sm90a_lookup  # noqa: E402  (the production lookup over the repo's csv)
    known = []
    for path in args.logs:
        for op, variant, M, N, K, a, b, ratio in pairs(path):
            now = sm90a_lookup(op, M, N, K)[0]
            r = outcome(now, a, b, ratio)
            known += [r] if r is not None else []
            print(f"{op:<22} {variant:<11} {M:>6} {N:>6} {K:>6}  now {now}  "
                  f"{'unknown' if r is None else f'{r:.3f}'}")
    if known:
        changed = sum(1 for r in known if r != 1.0)
        print(f"{len(known)} pairs: geomean {math.exp(sum(map(math.log, known)) / len(known)):.3f}, "
              f"{min(known):.3f}-{max(known):.3f}, {changed} changed")


if __name__ == "__main__":
    main()
