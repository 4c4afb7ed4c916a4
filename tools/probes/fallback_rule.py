#!/usr/bin/env python3
"""Score the sm_90a default tile lists' fallback offline: when no row of the M = 65..128 or M = 129..4096 list fits in
one wave, the list's last row (the old answer: the widest tile, or t128x128 again at M <= 128) against the row of the
same token-tile height with the fullest waves, a narrower tile needing --margin more (the rule of the twenty-ninth to
forty-fifth sessions), and against the cheapest waves x tile area / area_speed (csrc/dispatch.cpp cheapest_waves_row
since the forty-sixth), over every shape of tools/tune.py logs whose bf16 / fp8 list rows were all measured at split 1.

    python3 tools/probes/fallback_rule.py --threshold 0.85 docs/measurements/2026-12-01-h200-*-2[2-9]*.txt

Prints each shape whose pick the rule changes and the geomean (and worst) of the pick's time over the best measured
candidate for both answers. It mirrors the C++ rule for these lists (same wave count, fills in per mille, widest
first, ties to the wider tile); the production lookup itself is what tests/test_dispatch.py checks. A shape where a row
of the list fits in one wave is skipped: the one-wave rule answers there, before any fallback. So is a shape whose
pick (a 160 / 96-column tile, thirtieth session) its log did not measure.
"""
import argparse
import collections
import math
import re

from wave_cost import area_speeds, plain_tile, wave_cost  # noqa: E402  (tools/probes/wave_cost.py)

SMS = 132
LINE = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+\*?(gemm_\S+)\s+(\d+)\s+([\d.]+)")
TILE_ROWS = {  # the M = 129..4096 list's plain tile rows in list order (the last, the widest, is the old fallback)
    "gemm_a16w16": ["gemm_a16w16.bf16.bf16.t128x128x64", "gemm_a16w16.bf16.bf16.t128x192x64",
                    "gemm_a16w16.bf16.bf16.t128x160x64", "gemm_a16w16.bf16.bf16.t128x256x64"],
    "gemm_a8w8": ["gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128", "gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128",
                  "gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128"],
}
ONE_TOKEN_TILE_ROWS = {  # the M = 65..128 list's plain tile rows in list order (t128x128 closes it again)
    "gemm_a16w16": ["gemm_a16w16.bf16.bf16.t128x128x64", "gemm_a16w16.bf16.bf16.t128x192x64",
                    "gemm_a16w16.bf16.bf16.t128x256x64", "gemm_a16w16.bf16.bf16.t128x160x64",
                    "gemm_a16w16.bf16.bf16.t128x128x64"],
    "gemm_a8w8": TILE_ROWS["gemm_a8w8"] + ["gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128", "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128"],
}
LATE_TILES = {"gemm_a16w16.bf16.bf16.t128x160x64", "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128"}
SW_ROWS = {"gemm_a16w16": ["gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw"],
           "gemm_a8w8": ["gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.sk8.sw", "gemm_a8w8.fp8_e4m3fn.bf16.t128x64x128.sk8.sw"]}


def read_logs(paths):
    """(op, M, N, K) -> {(kernel without .sm90a, split_k): fastest us} for bf16 / fp8 rows at M = 65..4096."""
    times = collections.defaultdict(dict)
    for path in paths:
        for line in open(path, errors="replace"):
            m = LINE.match(line)
            if not m:
                continue
            M, N, K = map(int, m.group(1, 2, 3))
            kernel, sk, us = m.group(4).replace(".sm90a", ""), int(m.group(5)), float(m.group(6))
            op = next((o for o in TILE_ROWS if kernel.startswith(o + ".")), None)
            if op and 65 <= M <= 4096:
                key = (kernel, sk)
                times[(op, M, N, K)][key] = min(us, times[(op, M, N, K)].get(key, math.inf))
    return times


def tiles(kernel, M, N):
    tm, tn = map(int, re.search(r"\.t(\d+)x(\d+)x", kernel).groups())
    if ".sw" in kernel:  # weight rows x tokens
        return math.ceil(N / tm) * math.ceil(M / tn)
    return math.ceil(M / tm) * math.ceil(N / tn)


def wave_efficiency(kernel, M, N):
    t = tiles(kernel, M, N)
    return t / (math.ceil(t / SMS) * SMS)


def tile_width(kernel):
    return int(re.search(r"\.t\d+x(\d+)x", kernel).group(1))


def fullest_waves(rows, M, N, threshold, margin=0.10):
    """The C++ rule: the rows weighed widest first, a narrower tile replaces the best so far only with `margin` more of
    its waves' slots filled (per mille, as csrc/dispatch.cpp counts; ties: the wider)."""
    last = rows[-1]
    if wave_efficiency(last, M, N) >= threshold:
        return last
    best, best_fill = None, 0
    for k in sorted(dict.fromkeys(rows), key=tile_width, reverse=True):
        fill = math.floor(wave_efficiency(k, M, N) * 1000 + 0.5)
        if best is None or fill >= best_fill + math.floor(margin * 1000 + 0.5):
            best, best_fill = k, fill
    return best


def cheapest_waves(rows, M, N, threshold, speeds):
    """The C++ rule: the last row unless its waves are `threshold` full or less; then the least waves x tile area /
    area_speed (ties: the larger tile, then the last row)."""
    last = rows[-1]
    if wave_efficiency(last, M, N) >= threshold:
        return last

    def cost(k):
        tm, tn = plain_tile(k)
        return wave_cost(M, N, (tm, tn), SMS, speeds.get(k, 1.0)), -tm * tn

    best = last
    for k in rows:
        if cost(k)[0] < cost(best)[0] * (1 - 1e-9) or (abs(cost(k)[0] - cost(best)[0]) <= 1e-9 * cost(best)[0]
                                                       and cost(k)[1] < cost(best)[1]):
            best = k
    return best


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threshold", type=float, default=0.85, help="wave efficiency of the widest tile below "
                    "which the fullest waves answer (csrc/dispatch.cpp: 0.85)")
    ap.add_argument("--margin", type=float, default=0.10, help="how much fuller a narrower tile's waves must be than "
                    "the best so far (csrc/dispatch.cpp: 0.10)")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args(argv)
    speeds = area_speeds()
    ratios = collections.defaultdict(list)
    for (op, M, N, K), d in sorted(read_logs(args.logs).items()):
        rows = (ONE_TOKEN_TILE_ROWS if M <= 128 else TILE_ROWS)[op]
        # every row measured, except the 160 / 96-column tiles (thirtieth session) of older logs, as long as the
        # rule does not pick them
        if not all((k, 1) in d for k in rows if k not in LATE_TILES):
            continue
        if any(tiles(k, M, N) <= SMS for k in SW_ROWS[op] + rows):
            continue
        best = min(d.values())
        old, new = rows[-1], fullest_waves(rows, M, N, args.threshold, args.margin)
        cheap = cheapest_waves(rows, M, N, args.threshold, speeds)
        if (new, 1) not in d or (cheap, 1) not in d:
            continue
        ratios["last row"].append(d[(old, 1)] / best)
        ratios["fullest waves"].append(d[(new, 1)] / best)
        ratios["cheapest waves"].append(d[(cheap, 1)] / best)
        if new != old or cheap != old:
            print(f"{op:12} {M:5} {N:6} {K:6}  best {best:7.1f}  last {d[(old, 1)]:7.1f}  "
                  f"fullest {d[(new, 1)]:7.1f} ({new.split('.')[-1]})  cheapest {d[(cheap, 1)]:7.1f} "
                  f"({cheap.split('.')[-1]})  last row's waves {wave_efficiency(old, M, N):.0%} full")
    for name, xs in ratios.items():
        print(f"{name:14} {len(xs)} shapes: {geomean(xs):.3f}x the best candidate (geomean), worst {max(xs):.3f}x")


if __name__ == "__main__":
    main()
