#!/usr/bin/env python3
"""Sixty-third session: the tools/ab.py pairs that check a ring sweep's winners by event time, written BEFORE
tools/merge_tuned.py merges them: each winner row's current pick in kernels/configs/sm_90a.csv (A, pinned) against
the table (B, which names the winner once merged).

    python3 tools/probes/ring_pairs.py winners.csv > tools/probes/ring-verify-NN.pairs
"""
import csv
import sys

from ring_sweep_groups import ROOT, VARIANT  # this folder is on sys.path when run as a script


def main(winners: str) -> int:
    table = ROOT / "kernels" / "configs" / "sm_90a.csv"
    picks = {tuple(r[:7]): (r[7], r[8]) for r in csv.reader(l for l in open(table) if l.startswith("sm_90a,"))}
    print("# each dispatch row a ring sweep moves: its old pick (A, pinned) against the new table (B), event time")
    for r in list(csv.reader(open(winners)))[1:]:
        kernel, split = picks[tuple(r[:7])]
        print(f"{r[1]} {VARIANT[r[1]]} {r[4]}x{r[5]}x{r[6]} {kernel}:{split} table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
