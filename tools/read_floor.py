#!/usr/bin/env python3
"""How fast can the GPU stream a given number of bytes at all? Kernel time (cold L2, the bench's
method) of torch reductions and copies over buffers of the decode weight sizes, as a floor for the
decode rows: a GEMM that reads `nbytes` once cannot beat a plain read of them by much.

    python3 tools/read_floor.py --mbytes 14.7,29.4,117.4,234.9
"""
import argparse
import sys

import torch

from flygemm import bench


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mbytes", default="14.7,29.4,117.4,234.9")
    args = ap.parse_args(argv)
    dev = torch.device("cuda")
    bw = bench.copy_bandwidth_gbps(dev)
    print(f"copy bandwidth {bw:.0f} GB/s; launch floor {bench.launch_floor_us(dev, kernel_time=True):.2f} us (kernel time)")
    print(f"{'MB':>8} {'sum us':>8} {'of copy':>8} {'copy us':>8} {'of copy':>8}")
    for mb in (float(x) for x in args.mbytes.split(",")):
        n = int(mb * 1e6) // 16 * 16
        x = torch.ones(n // 4, dtype=torch.float32, device=dev)
        y = torch.empty(n // 2, dtype=torch.uint8, device=dev)
        src = x.view(torch.uint8)[: n // 2]
        t_sum = bench.kernel_time_us(lambda: x.sum(), dev)
        t_copy = bench.kernel_time_us(lambda: y.copy_(src), dev)  # n/2 read + n/2 written
        frac_sum = n / (t_sum * 1e-6) / 1e9 / bw
        frac_copy = n / (t_copy * 1e-6) / 1e9 / bw
        print(f"{mb:8.1f} {t_sum:8.2f} {frac_sum:8.1%} {t_copy:8.2f} {frac_copy:8.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
