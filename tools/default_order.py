#!/usr/bin/env python3
"""Evaluate default-row orders for one M bucket against tools/tune.py logs, offline, through the production lookup.

A default row answers every (N, K) of its bucket that has no exact row, and a bucket may list several kernels
(csrc/dispatch.cpp first_fitting_default: the first whose kernel fits the shape and its one-wave rule answers).
This prints, for each order, the geomean over the logged shapes of (time of the order's pick) / (best candidate
time in the same log), the worst shape, and the shapes whose pick the log did not time ("miss").

    python3 tools/default_order.py --op gemm_a16w16 --m 65-128 --bucket 128 \\
        --order t64x128x64:1 --order t64x64x64.sk8.sw:0,t128x64x64.sk8.sw:0,t128x128x64:1 tune-b16_96.log
    python3 tools/default_order.py --op gemm_a8w8 --m 129-512 --bucket 4096 --search 2 --exclude c1x2 tune-f8.log

Kernels are named in full or by the part after `<op>.<in>.<out>.` without `.sm90a`; `:split_k` defaults to 1,
`:0` is the automatic split (resolved per shape by the C++ auto_split_k). `--search N` ranks every order of up
to N of the logged kernels (at the splits written for them with --order, else their automatic split for `.sw`
and decode kernels and 1 for tile kernels). `--detail` prints each shape's ratio. Needs the kernel build
(python tools/build_kernels.py --arch sm_90a) for the kernels' tile sizes."""
import argparse
import itertools
import math
import sys

import torch

import flygemm  # noqa: F401  (registers torch.ops.flygemm_testing)
import build_kernels
import tune_vs_table as tv


def short_name(kernel: str, prefix: str, arch: str) -> str:
    suffix = "." + arch.replace("_", "")
    decode_prefix = "gemm_splitk_decode." + prefix[len("gemm_"):]
    name = kernel
    for p in (prefix, decode_prefix):
        name = name[len(p):] if name.startswith(p) else name
    return name[: -len(suffix)] if name.endswith(suffix) else name


def full_name(name: str, prefix: str, arch: str, known=None) -> str:
    """`name` in full, or the part after `<op>.<in>.<out>.` (a tile kernel) or after `gemm_splitk_decode.<op
    without gemm_>.<in>.<out>.` (a decode kernel), with or without the arch suffix. With `known` (the built kernel
    names) an unknown name is an error: a row naming no kernel would drop out of the lookup unseen."""
    suffix = "." + arch.replace("_", "")
    candidates = [name] if name.startswith(("gemm_", prefix)) else [
        prefix + name, "gemm_splitk_decode." + prefix[len("gemm_"):] + name]
    candidates = [c if c.endswith(suffix) else c + suffix for c in candidates]
    if known is None:
        return candidates[0]
    for c in candidates:
        if c in known:
            return c
    raise SystemExit(f"default_order: no built kernel named {name} (tried {', '.join(candidates)})")


def parse_order(text: str, prefix: str, arch: str, known=None) -> list[tuple[str, int]]:
    out = []
    for item in text.split(","):
        name, _, split = item.partition(":")
        out.append((full_name(name, prefix, arch, known), int(split) if split else 1))
    return out


def default_split(spec: dict) -> int:
    """The split a searched kernel's row gets: automatic for .sw and decode kernels, 1 for tile kernels."""
    return 0 if tv.swaps_operands(spec) or spec.get("family") == "gemm_splitk_decode" else 1


class Evaluator:
    def __init__(self, arch: str, op: str, bucket: int, m_range: tuple[int, int], logs: list[str]):
        self.arch, self.op, self.bucket = arch, op, bucket
        specs = {s["name"]: s for s in build_kernels.read_kernel_specs(arch)}
        self.specs = specs
        self.klines = tv.kernel_lines(arch, list(specs.values()))[op]
        self.times = {}  # (M, N, K) -> {(kernel, split): us}
        for (M, N, K, kernel), splits in tv.read_logs(logs).items():
            spec = specs.get(kernel)
            if spec and spec["op"] == op and m_range[0] <= M <= m_range[1]:
                self.times.setdefault((M, N, K), {}).update({(kernel, s): us for s, us in splits.items()})
        if not self.times:
            raise SystemExit(f"default_order: no {op} timings at M = {m_range[0]}..{m_range[1]} in the logs")
        first = specs[next(iter(next(iter(self.times.values()))))[0]]
        self.in_dtype, self.out_dtype = first["in_dtype"], first["out_dtype"]
        self.prefix = f"{op}.{self.in_dtype}.{self.out_dtype}."

    def rows(self, order: list[tuple[str, int]]) -> str:
        return "".join(f"{self.arch},{self.op},{self.in_dtype},{self.out_dtype},{self.bucket},0,0,{k},{s}\n"
                       for k, s in order)

    def ratios(self, order: list[tuple[str, int]]) -> list[tuple[tuple[int, int, int], float | None, str]]:
        """Per shape: (shape, pick time / best time or None when the pick was not timed, the pick)."""
        rows, out = self.rows(order), []
        for (M, N, K), timed in sorted(self.times.items()):
            resolved = tv.resolve_auto_splits(timed, self.klines, self.arch, self.op, self.in_dtype, M, N, K)
            kernel, split = torch.ops.flygemm_testing.dispatch_lookup(
                self.klines, rows, self.arch, self.op, self.in_dtype, self.out_dtype, M, N, K, "").split(",")[:2]
            t = resolved.get((kernel, int(split)))
            pick = f"{short_name(kernel, self.prefix, self.arch)}:{split}"
            out.append(((M, N, K), t / min(resolved.values()) if t else None, pick))
        return out

    def summary(self, order: list[tuple[str, int]], detail: bool = False) -> str:
        per_shape = self.ratios(order)
        hits = [(shape, r) for shape, r, _ in per_shape if r is not None]
        name = ",".join(f"{short_name(k, self.prefix, self.arch)}:{s}" for k, s in order)
        if not hits:
            return f"   -    n=0 miss={len(per_shape)}  {name}"
        geo = math.exp(sum(math.log(r) for _, r in hits) / len(hits))
        worst = max(hits, key=lambda h: h[1])
        line = (f"{geo:6.3f} n={len(hits)} miss={len(per_shape) - len(hits)} worst {worst[1]:.2f} "
                f"({'x'.join(map(str, worst[0]))})  {name}")
        if detail:
            line += "\n" + "\n".join(f"    {'x'.join(map(str, s))}: {f'{r:.2f}' if r else 'miss'} ({p})"
                                     for s, r, p in per_shape)
        return line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", help="tools/tune.py output logs")
    ap.add_argument("--op", required=True)
    ap.add_argument("--m", required=True, help="M range of the logged shapes to use, e.g. 65-128")
    ap.add_argument("--bucket", type=int, required=True, help="the default rows' m_max, e.g. 128")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--order", action="append", default=[], help="kernel[:split],... (repeatable)")
    ap.add_argument("--search", type=int, default=0, help="rank every order of up to N logged kernels")
    ap.add_argument("--exclude", default="", help="with --search: skip kernels containing any of these parts")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--detail", action="store_true")
    args = ap.parse_args(argv)
    lo, _, hi = args.m.partition("-")
    ev = Evaluator(args.arch, args.op, args.bucket, (int(lo), int(hi or lo)), args.logs)
    for text in args.order:
        print(ev.summary(parse_order(text, ev.prefix, args.arch, ev.specs), args.detail))
    if args.search:
        excluded = [e for e in args.exclude.split(",") if e]
        given = {k: s for text in args.order for k, s in parse_order(text, ev.prefix, args.arch, ev.specs)}
        kernels = sorted({k for timed in ev.times.values() for k, _ in timed if not any(e in k for e in excluded)})
        splits = {k: given.get(k, default_split(ev.specs[k])) for k in kernels}
        orders = [[(k, splits[k]) for k in p] for n in range(1, args.search + 1)
                  for p in itertools.permutations(kernels, n)]
        scored = []
        for order in orders:
            hits = [r for _, r, _ in ev.ratios(order) if r is not None]
            if hits:
                scored.append((math.exp(sum(map(math.log, hits)) / len(hits)), -len(hits), order))
        for _, _, order in sorted(scored, key=lambda s: (s[1], s[0]))[: args.top]:
            print(ev.summary(order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
