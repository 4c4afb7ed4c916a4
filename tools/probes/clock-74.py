"""SM clock and power while one pinned kernel runs back to back for a few seconds, then the next kernel (each twice, in
turn): whether a kernel that wins a flushed A/B (tools/ab.py, where calls of up to ~2 ms run mostly above the power cap's
clock) still wins at the cap. Seventy-fourth session: the blockscale .eo candidate ran at a higher SM clock than its
serial twin at the 700 W cap and still took 4-6% longer (docs/PERF.md). Needs nvidia-smi.

    python3 tools/probes/clock-74.py [--op gemm_a8w8_blockscale] [--variant -] [--seconds 3] MxNxK KERNEL[:split] ...
"""
import argparse
import os
import subprocess
import time

import torch

import flygemm  # noqa: F401  (registers torch.ops.flygemm)
from flygemm import bench


def sample_while(run, seconds):
    """(us per call, mean SM clock MHz, mean power W) over the last 2/3 of `seconds` of back-to-back calls."""
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "100"], stdout=subprocess.PIPE, text=True)
    start, calls = time.time(), 0
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ev0.record()
    while time.time() - start < seconds:
        for _ in range(4):
            run()
        calls += 4
        torch.cuda.synchronize()
    ev1.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [tuple(float(v) for v in line.split(",")) for line in smi.communicate()[0].split("\n") if "," in line]
    late = samples[len(samples) // 3:] or samples  # after the clocks settle
    return (ev0.elapsed_time(ev1) * 1000 / calls, sum(s[0] for s in late) / len(late),
            sum(s[1] for s in late) / len(late))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", default="gemm_a8w8_blockscale")
    ap.add_argument("--variant", default="-")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("shape", help="MxNxK")
    ap.add_argument("kernels", nargs="+", help="kernel[:split_k] names, pinned with FLYGEMM_FORCE_KERNEL")
    a = ap.parse_args()
    M, N, K = (int(x) for x in a.shape.split("x"))
    args, _, _ = bench.make_problem(a.op, a.variant, M, N, K, torch.device("cuda"),
                                    torch.Generator(device="cuda").manual_seed(1))
    op = getattr(torch.ops.flygemm, a.op)
    for kernel in a.kernels + a.kernels:
        os.environ["FLYGEMM_FORCE_KERNEL"] = kernel
        for _ in range(3):
            op(*args)
        torch.cuda.synchronize()
        us, clock, power = sample_while(lambda: op(*args), a.seconds)
        print(f"{a.shape} {kernel}: {us:8.1f} us/call back to back, SM clock {clock:6.0f} MHz, power {power:5.0f} W")


if __name__ == "__main__":
    main()
