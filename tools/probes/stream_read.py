#!/usr/bin/env python3
"""Kernel time (cold L2, tools/bench.py's method) of plain reads of a decode-sized weight matrix, to
tell what the small-N decode rows could reach: TMA bulk copies into shared memory (all stages issued
at the start) against ld.global.nc with 8 / 16 / 32 loads in flight per thread. Needs nvcc and
CuPy (the GPU machine has both); builds tools/probes/stream_read.cu into $TMPDIR.

    python3 tools/probes/stream_read.py --mbytes 14.68
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cupy
import numpy as np
import torch

from flygemm import bench

HERE = os.path.dirname(os.path.abspath(__file__))


def build_module():
    cubin = os.path.join(tempfile.gettempdir(), "stream_read.cubin")
    subprocess.run(["nvcc", "-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a",
                    os.path.join(HERE, "stream_read.cu"), "-o", cubin], check=True)
    return cupy.RawModule(path=cubin)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mbytes", default="14.68,29.36")
    args = ap.parse_args(argv)
    dev = torch.device("cuda")
    mod = build_module()
    bw = bench.copy_bandwidth_gbps(dev)
    print(f"copy bandwidth {bw:.0f} GB/s")
    out = cupy.zeros(1 << 20, dtype=cupy.uint32)
    empty = mod.get_function("empty")
    for mb in (float(x) for x in args.mbytes.split(",")):
        total = round(mb * 1e6 / (128 * 16 * 14)) * (128 * 16 * 14)
        w = cupy.asarray(torch.randint(0, 255, (total,), dtype=torch.uint8, device=dev))
        rows = []

        def run(name, fn):
            t = bench.kernel_time_us(fn, dev)
            rows.append((name, t, total / (t * 1e-6) / 1e9 / bw))

        for ctas in (128, 256):
            run(f"empty grid {ctas}", lambda c=ctas: empty((c,), (128,), (out,)))
        bulk = mod.get_function("bulk_read")
        for ctas in (128, 256, 512):
            slice_ = total // ctas
            if slice_ + 1024 > 227 * 1024:
                continue
            bulk.max_dynamic_shared_size_bytes = slice_ + 1024
            for stages in (1, 7, 14):
                for pieces in (1, 16):
                    if slice_ % (stages * pieces * 16):
                        continue
                    for threads in (128, 256):
                        run(f"bulk ctas {ctas} stages {stages} pieces {pieces} thr {threads}",
                            lambda c=ctas, s=slice_, st=stages, p=pieces, th=threads: bulk(
                                (c,), (th,), (w, np.uint32(s), np.uint32(st), np.uint32(p), out),
                                shared_mem=s + 1024))
        for unroll in (8, 16, 32):
            k = mod.get_function(f"ldg_read{unroll}")
            for ctas in (128, 132 * 2, 132 * 4):
                slice_ = total // ctas // 16 * 16
                run(f"ldg{unroll} ctas {ctas} thr 128",
                    lambda k=k, c=ctas, s=slice_: k((c,), (128,), (w, np.uint32(s), out)))
        kb = total // (128 * 16)  # bytes per row: 128 CTAs x 16 rows, like an n16 decode tile grid
        for name, lpr in (("pattern_lpr4", 4), ("pattern_lpr4_pf", 4), ("pattern_lpr8", 8), ("pattern_lpr32", 32)):
            k = mod.get_function(name)
            for warps in (4, 7, 8, 14, 16):
                span = kb // warps
                if kb % warps or span % (lpr * 16):
                    continue
                run(f"{name} ctas 128 thr {32 * warps}",
                    lambda k=k, th=32 * warps: k((128,), (th,), (w, np.uint32(kb), out)))
        x = torch.ones(total // 4, dtype=torch.float32, device=dev)
        run("torch sum (read only)", lambda: x.sum())
        print(f"--- {total / 1e6:.2f} MB")
        for name, t, frac in rows:
            print(f"{name:48s} {t:8.2f} us {frac:7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
