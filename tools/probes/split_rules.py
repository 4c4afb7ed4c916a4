#!/usr/bin/env python3
"""Automatic-split rules for decode kernels, scored offline on tools/tune.py logs that timed each kernel at many splits
(tools/probes/mx-split-66.sh: --split-k 1,2,3,4,6,8,12,16, kernel time). Per rule, over the logs' shapes:
(1) per kernel, its time at the rule's split over its best split; (2) the list's first kernel (the default list's pick)
at the rule's split over the best kernel and split of the shape. Geomean / worst; a split a log lacks falls to the
next smaller one it has.

    python3 tools/probes/split_rules.py offtable-gemm_mxfp4-m16.log [--first img]

Rules: t192 (at least 192 CTAs, the production rule before the sixty-sixth session), w132 (the largest split within
one wave of 132 CTAs, since), and a few neighbours for comparison.
"""
import argparse
import collections
import math
import re

KERNEL_TILE_K = 256  # the MXFP4 decode kernels of the sweep (a "k128" name: 128)


def clamp(split, k_tiles):
    return max(1, min(split, k_tiles, 16))


RULES = {
    "t192": lambda tiles, kt: clamp(-(-192 // tiles), kt),
    "w132": lambda tiles, kt: clamp(132 // tiles, kt),
    "t96": lambda tiles, kt: clamp(-(-96 // tiles), kt),
    "w96": lambda tiles, kt: clamp(96 // tiles, kt),
    "w264": lambda tiles, kt: clamp(264 // tiles, kt),
    "split1": lambda tiles, kt: 1,
}


def read_logs(paths):
    times = collections.defaultdict(dict)  # (M, N, K, kernel) -> {split: us}
    for path in paths:
        for line in open(path):
            f = line.split()
            if len(f) < 6 or not f[0].isdigit():
                continue
            M, N, K = map(int, f[:3])
            times[(M, N, K, f[3].lstrip("*"))][int(f[4])] = float(f[5])
    return times


def at_split(by_split, split):
    while split not in by_split and split > 1:
        split -= 1
    return by_split[split]


def shape_of(kernel, K):
    tile_n = int(re.search(r"\.m\d+n(\d+)", kernel).group(1))
    tile_k = 128 if "k128" in kernel else KERNEL_TILE_K
    return tile_n, K // tile_k


def summary(ratios):
    return f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} (worst {max(ratios):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--first", default="img,wgb", help="substrings naming the list's first kernel (any)")
    args = ap.parse_args()
    times = read_logs(args.logs)
    kernels = sorted({k[3] for k in times})
    shapes = sorted({k[:3] for k in times})
    first = [k for k in kernels if any(s in k for s in args.first.split(","))]
    for name, rule in RULES.items():
        per_kernel = []
        for (M, N, K, kernel), by_split in times.items():
            tile_n, kt = shape_of(kernel, K)
            per_kernel.append(at_split(by_split, rule(-(-N // tile_n), kt)) / min(by_split.values()))
        line = f"{name:7s} kernel at the rule's split / its best split {summary(per_kernel)}"
        if first:
            picks = []
            for M, N, K in shapes:
                tile_n, kt = shape_of(first[0], K)
                best = min(min(times[(M, N, K, k)].values()) for k in kernels if (M, N, K, k) in times)
                picks.append(at_split(times[(M, N, K, first[0])], rule(-(-N // tile_n), kt)) / best)
            line += f"; first kernel / best of the shape {summary(picks)}"
        print(line)


if __name__ == "__main__":
    main()
