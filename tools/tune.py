#!/usr/bin/env python3
"""Time every candidate kernel for each shape through the real op path and print dispatch rows.

Each candidate is pinned with FLYGEMM_FORCE_KERNEL (read by the C++ op at call time), timed with
the same method as tools/bench.py, checked against the CPU oracle, and the best correct one is
written as a row for kernels/configs/<arch>.csv (with the measured us / TFLOP/s / GB/s).

Paired timing (the default where the op has a torch peer): each candidate is timed interleaved
with torch (bench.time_pair_us) and ranked by that ratio, so that the GPU's clock drift over a
sweep cannot rank the candidates (on 2026-11-30 a single-pass unpaired sweep ranked the ping-pong
kernels, timed last, 6% behind the cooperative ones; paired they were 2-4% ahead). --no-paired
times each candidate alone (half the time) and ranks by microseconds.

    python tools/tune.py --op gemm_a16w16 --shapes 128x4096x4096,4096x4096x4096 --csv rows.csv
"""
from __future__ import annotations

import argparse
import math
import csv
import os
import sys

import torch

import flygemm
from flygemm import bench

DTYPE_NAMES = bench.KERNEL_DTYPE_NAMES


def m_bucket(M: int) -> int:
    """The dispatch bucket a measured M stands for: the next power of two."""
    b = 1
    while b < M:
        b *= 2
    return b


def measured_split(r: dict) -> int:
    """The split_k a result ran at: a candidate timed at ":0" ran at the split this build's automatic rule gave
    it, and its row says so, so that a later change of that rule does not move a measured row (twenty-fifth
    session: the bulk-ring kernels' automatic split at K <= 4096 went from up to 12 to 1)."""
    if r["split_k"] != 0:
        return r["split_k"]
    import build_kernels
    import tune_vs_table
    klines = tune_vs_table.kernel_lines(r["arch"], list(build_kernels.read_kernel_specs(r["arch"])))[r["op"]]
    return tune_vs_table.auto_split(klines, r["arch"], r["op"], r["in_dtype"], r["out_dtype"], r["kernel"],
                                    r["M"], r["N"], r["K"])


STREAM_K = -1  # split_k of the stream-K schedule (csrc/launch.h kStreamK); `--split-k 1,sk` asks for it
DECODE_FAMILY_MAX_M = 64  # the split-K decode kernels stream the weights once per 8/16 tokens


def candidates(arch: str, op: str, in_dtype: str, out_dtype: str, split_ks: list[int],
               M: int = 1) -> list[tuple[str, int]]:
    """(kernel, split_k) pairs: every kernel for the op and dtypes, with the split_k values it has
    (decode-family kernels only up to M = 64: at 8192^3 one call takes 0.1 s, and they never win)."""
    return [(k["name"], s) for k in flygemm.info()["kernels"]
            if k["arch"] == arch and k["op"] == op and k["in_dtype"] == in_dtype and k["out_dtype"] == out_dtype
            and (M <= DECODE_FAMILY_MAX_M or k["meta"].get("family") != "gemm_splitk_decode")
            for s in split_ks if (k["meta"].get("stream_k") if s == STREAM_K else s <= max(1, k["max_split_k"]))]


def pass_orders(n: int, passes: int) -> list[list[int]]:
    """Candidate order per timing pass: forward, then reversed, alternating, so that a drift of
    clock or temperature over the run (a GEMM sweep heats the GPU) adds to every candidate's mean
    about equally instead of favouring the ones timed first."""
    fwd = list(range(n))
    return [fwd if p % 2 == 0 else fwd[::-1] for p in range(max(1, passes))]


def tune_shape(op: str, variant: str, M: int, N: int, K: int, device, gen, split_ks,
               passes: int = 1, paired: bool = True, kernel_time: bool = False, match: str = "") -> list[dict]:
    args, peer, nbytes = bench.make_problem(op, variant, M, N, K, device, gen)
    fn = getattr(flygemm, op)
    ref = fn(*(t.cpu() for t in args)) if M * N * K <= 2 ** 36 else None
    out0 = fn(*args)
    arch = flygemm._arch_of(device)
    in_name, out_name = DTYPE_NAMES[args[0].dtype], DTYPE_NAMES[out0.dtype]
    timer = bench.kernel_time_us if kernel_time else (lambda f, d: bench.time_us(f, d, rep_ms=60.0))
    try:
        torch_us = timer(peer, device) if peer else float("nan")
    except RuntimeError:  # the torch peer may not support this scaling (e.g. cuBLAS blockwise at M=1)
        torch_us = float("nan")
    cands = [c for c in candidates(arch, op, in_name, out_name, split_ks, M)
             if any(m in c[0] for m in match.split(","))]
    paired = paired and not kernel_time and torch_us == torch_us  # a peer that ran
    times = {i: [] for i in range(len(cands))}
    peers = {i: [] for i in range(len(cands))}
    errs, failed = {}, set()
    for order in pass_orders(len(cands), passes):
        for i in order:
            if i in failed:
                continue
            name, split_k = cands[i]
            os.environ["FLYGEMM_FORCE_KERNEL"] = f"{name}:{split_k}"
            try:
                if i not in errs:
                    out = fn(*args)
                    errs[i] = bench.rel_fro(out, ref) if ref is not None else float("nan")
                if paired:
                    fly_us, peer_us = bench.time_pair_us(lambda: fn(*args), peer, device, rep_ms=120.0)
                    times[i].append(fly_us)
                    peers[i].append(peer_us)
                else:
                    times[i].append(timer(lambda: fn(*args), device))
            except RuntimeError as exc:
                print(f"  {name}:{split_k} failed: {str(exc).splitlines()[0]}", file=sys.stderr)
                failed.add(i)
            finally:
                os.environ.pop("FLYGEMM_FORCE_KERNEL", None)
    ratios = paired_ratios(times, peers)
    results = []
    for i, (name, split_k) in enumerate(cands):
        if i in failed or not times[i]:
            continue
        us = sum(times[i]) / len(times[i])
        # torch/fly: the mean of the paired ratios, or the lone torch time over this one
        ratio = sum(ratios[i]) / len(ratios[i]) if ratios[i] else torch_us / us
        results.append(dict(arch=arch, op=op, in_dtype=in_name, out_dtype=out_name, M=M, N=N, K=K,
                            kernel=name, split_k=split_k, us=us, err=errs[i], torch_us=torch_us,
                            ratio=ratio, paired=bool(ratios[i]),
                            tflops=2.0 * M * N * K / us / 1e6, gbps=nbytes / us / 1e3))
    return results


# A torch time in one pair further than this from the median of all pairs of the shape is an
# outlier (on 2026-11-30 one pair timed torch at 51 us against 13-14 us in every other pair, and the
# candidate it was paired with won at "1.76x" while it ran at half the speed of the best kernel).
# Clock drift over a sweep stays far inside it (a few %).
PEER_OUTLIER = 0.15


def paired_ratios(times: dict, peers: dict) -> dict:
    """torch/fly per pair; a pair whose torch time is an outlier uses the median torch time."""
    all_peers = sorted(x for v in peers.values() for x in v)
    if not all_peers:
        return {i: [] for i in times}
    med = all_peers[len(all_peers) // 2]
    out = {}
    for i, fly in times.items():
        out[i] = [(pe if abs(pe / med - 1.0) <= PEER_OUTLIER else med) / f for f, pe in zip(fly, peers[i])]
    return out


def rank(row: dict):
    """Sort key, best first: the paired ratio to torch where it was measured, else the time."""
    key = -row["ratio"] if row["paired"] else row["us"]
    return math.inf if math.isnan(key) else key  # an unmeasured candidate (NaN) ranks last


def row_op(op: str, variant: str) -> str:
    """The op column of a row tuned with `variant`: gemm_a8w8 measured with per-token / per-channel scales
    answers only such calls (csrc/dispatch.h kRowScalesSuffix); per-tensor rows answer every call."""
    return op + ".row_scales" if op == "gemm_a8w8" and variant == "per_token" else op


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", default="gemm_a16w16")
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shapes", required=True, help="comma-separated MxNxK")
    ap.add_argument("--split-k", default="1", help="comma-separated split_k values to try (sk: stream-K)")
    ap.add_argument("--csv", help="write the winning dispatch rows here")
    ap.add_argument("--append", action="store_true", help="append to --csv (no header) instead of replacing it")
    ap.add_argument("--passes", type=int, default=1,
                    help="timing passes over the candidates, alternately forward and reversed; a "
                         "candidate's time is the mean (2 cancels a linear drift; default 1)")
    ap.add_argument("--paired", action=argparse.BooleanOptionalAction, default=True,
                    help="time each candidate interleaved with torch and rank by that ratio (default); "
                         "--no-paired: time it alone and rank by microseconds")
    ap.add_argument("--kernel-time", action="store_true",
                    help="rank by kernel time (cold L2, the GPU span of the call's kernels: the decode "
                         "goals' measure) instead of event time; implies --no-paired")
    ap.add_argument("--match", default="", help="only candidates whose kernel name contains this (comma-separated: any of these)")
    args = ap.parse_args(argv)
    device = torch.device("cuda")
    gen = torch.Generator().manual_seed(1)
    split_ks = [STREAM_K if s.strip() == "sk" else int(s) for s in args.split_k.split(",")]
    winners = []
    print(f"{'M':>6}{'N':>7}{'K':>7}  {'kernel':<46}{'sk':>3}{'us':>10}{'TFLOP/s':>9}{'GB/s':>7}"
          f"{'torch/fly':>10}{'err':>10}")
    for M, N, K in bench.parse_shapes(args.shapes, []):
        rows = tune_shape(args.op, args.variant, M, N, K, device, gen, split_ks, args.passes, args.paired,
                          args.kernel_time, args.match)
        ok = [r for r in rows if not (r["err"] > 1e-2)]  # NaN err (unchecked) passes
        for r in sorted(rows, key=rank):
            mark = "*" if ok and r is min(ok, key=rank) else " "
            print(f"{M:>6}{N:>7}{K:>7} {mark}{r['kernel']:<46}{r['split_k']:>3}{r['us']:>10.1f}"
                  f"{r['tflops']:>9.1f}{r['gbps']:>7.0f}{r['ratio']:>10.3f}{r['err']:>10.2e}")
        if ok:
            winners.append(min(ok, key=rank))
    if args.csv:
        with open(args.csv, "a" if args.append else "w", newline="") as f:
            w = csv.writer(f)
            if not args.append or f.tell() == 0:
                w.writerow(["arch", "op", "in_dtype", "out_dtype", "m_max", "N", "K", "kernel", "split_k",
                            "us", "tflops", "gbps"])
            for r in winners:
                w.writerow([r["arch"], row_op(r["op"], args.variant), r["in_dtype"], r["out_dtype"], m_bucket(r["M"]), r["N"], r["K"],
                            r["kernel"], measured_split(r), f"{r['us']:.1f}", f"{r['tflops']:.1f}",
                            f"{r['gbps']:.0f}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
