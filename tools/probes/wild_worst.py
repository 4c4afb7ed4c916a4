#!/usr/bin/env python3
"""Rows of `python -m flygemm bench --json` files sorted by torch / fly, worst first (seventy-fifth session), with the
geomean per op / variant and the kernel each row ran.   python3 tools/probes/wild_worst.py [--top N] FILE.json ..."""
import argparse
import json
import math


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    rows = [r for f in args.files for r in json.load(open(f))["rows"] if r["speedup"] == r["speedup"]]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["op"], r["variant"]), []).append(r["speedup"])
    for (op, variant), ratios in sorted(groups.items()):
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"{op:22s} {variant:12s} geomean {gm:.3f} min {min(ratios):.3f} over {len(ratios)}")
    print(f"{'op':22s} {'variant':12s} {'shape':>18s} {'fly us':>9s} {'torch us':>9s} ratio  kernel")
    for r in sorted(rows, key=lambda r: r["speedup"])[:args.top]:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        print(f"{r['op']:22s} {r['variant']:12s} {shape:>18s} {r['flygemm_us']:9.1f} {r['torch_us']:9.1f} "
              f"{r['speedup']:.3f}  {r['kernel']}")


if __name__ == "__main__":
    main()
