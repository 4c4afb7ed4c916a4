#!/usr/bin/env python3
"""Wave-cost model against measured A/B pairs (forty-fifth session): for each pair of plain tile kernels in a
tools/ab.py log, the predicted time ratio B / A = (waves_B x tile area_B) / (waves_A x tile area_A), where a kernel's
waves are ceil(tiles / SMs) of one persistent CTA per SM, next to the measured median B / A. A ratio far from the
prediction is the tiles' own speed per unit of area (wider tiles reuse more of each operand load). With --speeds each
kernel's area is divided by its area_speed param (kernels/configs/sm_90a.kernels.csv, per mille, 1000 when absent), the
cost csrc/dispatch.cpp cheapest_waves_row weighs.

    python3 tools/probes/wave_cost.py [--speeds] docs/measurements/2026-12-04-h200-ab-4[56]-*.txt

A swapped-operand tile kernel that does not split (`.sw` without `.skS`, forty-seventh session) counts in its tokens'
orientation: tile_m weight rows by tile_n tokens is a tile_n x tile_m token tile. Pairs whose kernels are no such tile
(the split-capable .sk / decode kernels) are skipped. --fit prints, per B kernel, the area_speed its pairs imply (A at
its own area_speed): predicted B / A at B's speed 1 over the measured B / A, geomean over its pairs.
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
    """(token rows, weight rows) of a tile kernel that does not split: (tile_m, tile_n), or (tile_n, tile_m) for a
    swapped-operand (.sw) one; None for any other kernel."""
    m = TILE.search(kernel)
    if not m or ".sk" in kernel or "splitk_decode" in kernel:
        return None
    tile_m, tile_n = int(m.group(1)), int(m.group(2))
    return (tile_n, tile_m) if ".sw." in kernel else (tile_m, tile_n)


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


def fit_speeds(logs, speed):
    """{B kernel: [implied area_speed per pair]}: B's speed that would make the cost model predict the measured ratio."""
    implied = {}
    for path in logs:
        for _, M, N, a, b, measured in pairs(path):
            ta, tb = plain_tile(a), plain_tile(b)
            if ta and tb and a != b:
                predicted = wave_cost(M, N, tb) / wave_cost(M, N, ta, speed=speed(a))
                implied.setdefault(b.replace(".sm90a", ""), []).append(predicted / measured)
    return implied


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speeds", action="store_true", help="divide by each kernel's area_speed (kernels csv)")
    ap.add_argument("--fit", action="store_true", help="print the area_speed each B kernel's pairs imply")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    speeds = area_speeds() if args.speeds or args.fit else {}
    speed = lambda k: speeds.get(k.replace(".sm90a", ""), 1.0)  # noqa: E731
    if args.fit:
        for kernel, implied in fit_speeds(args.logs, speed).items():
            geo = math.exp(sum(map(math.log, implied)) / len(implied))
            print(f"{kernel:<52} area_speed {geo:.3f}  ({len(implied)} pairs, {min(implied):.3f}-{max(implied):.3f})")
        return
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
