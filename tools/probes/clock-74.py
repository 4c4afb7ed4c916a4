"""Seventy-fourth session: SM clock and power while one pinned kernel runs back to back for a few seconds (does the .eo
blockscale kernel run at a lower clock than its serial twin at the power cap?). Needs nvidia-smi; prints one line per kernel."""
import os
import subprocess
import sys
import time

import torch

import flygemm  # noqa: F401  (registers torch.ops.flygemm)
from flygemm import bench

M, N, K = (int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "16384x7168x16384").split("x"))
kernels = sys.argv[2:]
args, _, _ = bench.make_problem("gemm_a8w8_blockscale", "-", M, N, K, torch.device("cuda"),
                                torch.Generator(device="cuda").manual_seed(1))
op = torch.ops.flygemm.gemm_a8w8_blockscale


def problem():
    return op(*args)


for kernel in kernels + kernels:
    os.environ["FLYGEMM_FORCE_KERNEL"] = kernel
    for _ in range(3):
        problem()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    start, calls = time.time(), 0
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ev0.record()
    while time.time() - start < 3.0:
        for _ in range(4):
            problem()
        calls += 4
        torch.cuda.synchronize()
    ev1.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [tuple(float(v) for v in line.split(",")) for line in smi.communicate()[0].split("\n") if "," in line]
    late = samples[len(samples) // 3:]  # after the clocks settle
    clock = sum(s[0] for s in late) / len(late)
    power = sum(s[1] for s in late) / len(late)
    print(f"{M}x{N}x{K} {kernel}: {ev0.elapsed_time(ev1) * 1000 / calls:8.1f} us/call back to back, "
          f"SM clock {clock:6.0f} MHz, power {power:5.0f} W ({len(late)} samples)")
