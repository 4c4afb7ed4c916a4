#!/usr/bin/env python3
"""Compare `flygemm bench --json` runs of several builds (tools/gpu_ab_builds.sh).

    python3 tools/compare_bench.py main='out/ab-main-*.json' combo='out/ab-combo-*.json'

Per row: each build's median speedup (torch time / flygemm time) over its runs, and each build's
speedup relative to the first build (> 1: faster than the first). Then per (op, variant) family the
geometric means. Ratios to torch measured in the same process are compared, not raw times, so a
clock shift between processes cancels."""
import glob
import json
import math
import signal
import statistics
import sys
from collections import defaultdict


def load(pattern):
    runs = [json.load(open(p))["rows"] for p in sorted(glob.glob(pattern))]
    if not runs:
        raise SystemExit(f"compare_bench: no files match {pattern}")
    by_key = defaultdict(list)
    kernel = {}
    for rows in runs:
        for r in rows:
            if r.get("device") != "cuda" or not r.get("speedup") or math.isnan(r["speedup"]):
                continue
            key = (r["op"], r["variant"], r["M"], r["N"], r["K"])
            by_key[key].append(r["speedup"])
            kernel[key] = r.get("kernel", "")
    return {k: statistics.median(v) for k, v in by_key.items()}, kernel, len(runs)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    if not argv or any("=" not in a for a in argv):
        raise SystemExit(__doc__)
    builds = [a.split("=", 1) for a in argv]
    loaded = {name: load(pattern) for name, pattern in builds}
    names = [n for n, _ in builds]
    base = names[0]
    keys = [k for k in loaded[base][0] if all(k in loaded[n][0] for n in names)]
    print("runs: " + ", ".join(f"{n} {loaded[n][2]}" for n in names))
    head = f"{'op':22} {'var':10} {'M':>6} {'N':>6} {'K':>6} " + " ".join(f"{n:>9}" for n in names)
    head += " " + " ".join(f"{n + '/' + base:>14}" for n in names[1:])
    print(head)
    fams = defaultdict(lambda: defaultdict(list))
    for k in keys:
        sp = [loaded[n][0][k] for n in names]
        line = f"{k[0]:22} {k[1]:10} {k[2]:6d} {k[3]:6d} {k[4]:6d} " + " ".join(f"{s:9.3f}" for s in sp)
        line += " " + " ".join(f"{s / sp[0]:14.3f}" for s in sp[1:])
        kernels = {loaded[n][1][k] for n in names}
        line += "  " + " | ".join(sorted(kernels))
        print(line)
        for n, s in zip(names, sp):
            fams[(k[0], k[1])][n].append(s)
    print("\ngeomean speedup vs torch per family")
    for fam, per in fams.items():
        g = [geomean(per[n]) for n in names]
        rel = " ".join(f"{x / g[0]:.3f}" for x in g[1:])
        print(f"{fam[0]:22} {fam[1]:10} n={len(per[base]):3d} " + " ".join(f"{n} {x:.3f}" for n, x in zip(names, g))
              + f"  rel {rel}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head: stop quietly
    sys.exit(main(sys.argv[1:]))
