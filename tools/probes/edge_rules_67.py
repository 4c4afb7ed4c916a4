#!/usr/bin/env python3
"""Scores the sixty-seventh session's fixed-split lower edges (csrc/dispatch.cpp fixed_split_min_ctas) on the runs that
chose them: per layer the geomean of every round's B / A, and, where the rule moved the pick from the old 64-CTA floor,
the new pick's time over the old one's (geomean per op).

    python3 tools/probes/edge_rules_67.py

Ring edge: docs/measurements/2026-12-06-h100-67-m16-edge-ab-*.txt (A the .sw tile, B the 16-row ring at split 1; 16
columns per CTA), rule max(32, K / 192). MXFP4 order: ...-mx-m8-order-ab*.txt (A m8n32 at its automatic split, B the
table's .wgb kernel; 32 columns per CTA), rule max(64, K / 44). Both up to one wave of 132 CTAs.
"""
import collections
import glob
import math
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
MEAS = ROOT / "docs" / "measurements"
PAIR = re.compile(r"^(gemm_\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+((?:[\d.]+\s+)+)median")
ONE_WAVE = 132


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def rounds(pattern):
    """(op, M, N, K) -> every round's B / A over the files matching pattern."""
    out = collections.defaultdict(list)
    for path in sorted(glob.glob(str(MEAS / pattern))):
        for line in open(path):
            if m := PAIR.match(line):
                out[(m.group(1), *map(int, m.group(2, 3, 4)))] += [float(x) for x in m.group(5).split()]
    return out


def fits(ctas, K, floor, k_per_cta):
    return max(floor, -(-K // k_per_cta)) <= ctas <= ONE_WAVE


def ring_edge():
    moved = collections.defaultdict(list)
    for (op, M, N, K), r in rounds("2026-12-06-h100-67-m16-edge-ab-*.txt").items():
        ctas, ring_over_sw = N // 16, geomean(r)
        old, new = 64 <= ctas <= ONE_WAVE, fits(ctas, K, 32, 192)
        if old != new:  # the new pick's time over the old pick's
            moved[op].append(ring_over_sw if new else 1 / ring_over_sw)
    for op, ratios in sorted(moved.items()):
        print(f"ring edge  {op:22s} {len(ratios)} layers moved: new / old {geomean(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f})")


def mxfp4_order():
    taken, left = [], []
    for (op, M, N, K), r in rounds("2026-12-06-h100-67-mx-m8-order-ab*.txt").items():
        m8n32_over_wgb = 1 / geomean(r)
        (taken if fits(-(-N // 32), K, 64, 44) else left).append(m8n32_over_wgb)
    print(f"mxfp4 m8n32  {len(taken)} layers taken: new / old {geomean(taken):.3f} ({min(taken):.3f}-{max(taken):.3f}); "
          f"{len(left)} left on .wgb, where m8n32 would have taken {min(left):.3f}-{max(left):.3f}")


if __name__ == "__main__":
    ring_edge()
    mxfp4_order()
