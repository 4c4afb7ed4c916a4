#!/usr/bin/env python3
"""Wave-cost model against measured A/B pairs (forty-fifth session): for each pair of plain tile kernels in a
tools/ab.py log, the predicted time ratio B / A = (waves_B x tile area_B) / (waves_A x tile area_A), where a kernel's
waves are ceil(tiles / SMs) of one persistent CTA per SM, next to the measured median B / A. A ratio far from the
prediction is the tiles' own speed per unit of area (wider tiles reuse more of each operand load).

    python3 tools/probes/wave_cost.py docs/measurements/2026-12-04-h200-ab-45-*.txt

Pairs whose kernels are not plain token tiles (the .sw / .sk / decode kernels) are skipped.
"""
import argparse
import math
import re

SMS = 132
TILE = re.compile(r"\.t(\d+)x(\d+)x\d+")
PAIR = re.compile(r"^(gemm_\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+.*median ([\d.]+)")
TABLE = re.compile(r"\(table: (\S+?):\d+\)")
SIDES = re.compile(r"A = (\S+)\s+B = (\S+)")


def plain_tile(kernel):
    """(tile_m, tile_n) of a plain token-tile kernel, None for any other kernel."""
    m = TILE.search(kernel)
    if not m or ".sw" in kernel or ".sk" in kernel or "splitk_decode" in kernel:
        return None
    return int(m.group(1)), int(m.group(2))


def wave_cost(M, N, tile, sms=SMS):
    """Waves x tile area: proportional to the time of a kernel whose tiles all take the same time."""
    tm, tn = tile
    tiles = math.ceil(M / tm) * math.ceil(N / tn)
    return math.ceil(tiles / sms) * tm * tn


def pairs(path):
    """(op, M, N, kernel A, kernel B, measured B / A) of each pair line of a tools/ab.py log."""
    for line in open(path, errors="replace"):
        m, sides = PAIR.match(line), SIDES.search(line)
        if not m or not sides:
            continue
        table = TABLE.search(line)
        a, b = (table.group(1) if s == "table" and table else s.rsplit(":", 1)[0] for s in sides.groups())
        yield m.group(1), int(m.group(2)), int(m.group(3)), a, b, float(m.group(5))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    agree = total = 0
    for path in args.logs:
        for op, M, N, a, b, measured in pairs(path):
            ta, tb = plain_tile(a), plain_tile(b)
            if not ta or not tb or ta == tb:
                continue
            predicted = wave_cost(M, N, tb) / wave_cost(M, N, ta)
            total += 1
            same_side = (predicted < 1) == (measured < 1) or abs(predicted - 1) < 0.01
            agree += same_side
            print(f"{op:<22} {M:>6} {N:>6}  t{ta[0]}x{ta[1]} -> t{tb[0]}x{tb[1]}  predicted {predicted:.3f}"
                  f"  measured {measured:.3f}{'' if same_side else '  <- other side'}")
    print(f"{agree} of {total} pairs on the predicted side of 1")


if __name__ == "__main__":
    main()
