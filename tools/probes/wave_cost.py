#!/usr/bin/env python3
"""Wave-cost model against measured A/B pairs (forty-fifth session): for each pair of plain tile kernels in a
tools/ab.py log, the predicted time ratio B / A = (waves_B x tile area_B) / (waves_A x tile area_A), where a kernel's
waves are ceil(tiles / SMs) of one persistent CTA per SM, next to the measured median B / A. A ratio far from the
prediction is the tiles' own speed per unit of area (wider tiles reuse more of each operand load). With --speeds each
kernel's area is divided by its area_speed param (kernels/configs/sm_90a.kernels.csv, per mille, 1000 when absent), the
cost csrc/dispatch.cpp cheapest_waves_row weighs.

    python3 tools/probes/wave_cost.py [--speeds] docs/measurements/2026-12-04-h200-ab-4[56]-*.txt

Pairs whose kernels are not plain token tiles (the .sw / .sk / decode kernels) are skipped.
"""
import argparse
import csv
import math
import pathlib
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


KERNELS_CSV = pathlib.Path(__file__).resolve().parents[2] / "kernels" / "configs" / "sm_90a.kernels.csv"


def area_speeds(path=KERNELS_CSV):
    """{kernel name without .sm90a: area_speed / 1000} for the kernels whose params carry one."""
    out = {}
    lines = [ln for ln in open(path) if ln.strip() and not ln.startswith("#")]
    for row in csv.DictReader(lines):
        for kv in filter(None, (row["params"] or "").split(";")):
            key, _, value = kv.partition("=")
            if key.strip() == "area_speed":
                out[row["name"].replace(".sm90a", "")] = int(value) / 1000.0
    return out


def wave_cost(M, N, tile, sms=SMS, speed=1.0):
    """Waves x tile area / area speed: proportional to the time of a kernel whose tiles all take the same time."""
    tm, tn = tile
    tiles = math.ceil(M / tm) * math.ceil(N / tn)
    return math.ceil(tiles / sms) * tm * tn / speed


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
    ap.add_argument("--speeds", action="store_true", help="divide by each kernel's area_speed (kernels csv)")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    speeds = area_speeds() if args.speeds else {}
    speed = lambda k: speeds.get(k.replace(".sm90a", ""), 1.0)  # noqa: E731
    agree = total = 0
    for path in args.logs:
        for op, M, N, a, b, measured in pairs(path):
            ta, tb = plain_tile(a), plain_tile(b)
            if not ta or not tb or ta == tb:
                continue
            predicted = wave_cost(M, N, tb, speed=speed(b)) / wave_cost(M, N, ta, speed=speed(a))
            total += 1
            same_side = (predicted < 1) == (measured < 1) or abs(predicted - 1) < 0.01
            agree += same_side
            print(f"{op:<22} {M:>6} {N:>6}  t{ta[0]}x{ta[1]} -> t{tb[0]}x{tb[1]}  predicted {predicted:.3f}"
                  f"  measured {measured:.3f}{'' if same_side else '  <- other side'}")
    print(f"{agree} of {total} pairs on the predicted side of 1")


if __name__ == "__main__":
    main()
