"""Clock and power while a large GEMM runs back to back (H200 probe, needs CUDA and the built extension).

Why: blockscale at 8192^3 runs ~20% slower than plain fp8. If the SM clock drops under the promotion
FFMAs' extra power, part of that gap is the power limit, not the schedule. For each op this runs the call
back to back for --seconds while `nvidia-smi` samples SM clock and board power every 50 ms, and prints
microseconds per call, mean clock, mean power and clock cycles per call (us x MHz), the clock-free cost.

    python3 tools/probes/clock_power.py --shape 8192x8192x8192 --seconds 3
"""

import argparse
import pathlib
import subprocess
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import flygemm  # noqa: E402
from flygemm import bench  # noqa: E402

CASES = [("gemm_a16w16", "-"), ("gemm_a8w8", "per_tensor"), ("gemm_a8w8_blockscale", "-")]


def sample_while(fn, seconds):
    """Runs fn() back to back for `seconds`; returns (us per call, [(MHz, W)] samples in the steady part)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    mon = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            fn()
        calls += 10
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    mon.terminate()
    out, _ = mon.communicate()
    samples = []
    for line in out.splitlines():
        try:
            mhz, watt = (float(x) for x in line.split(","))
            samples.append((mhz, watt))
        except ValueError:
            pass
    steady = samples[len(samples) // 4:] or samples   # skip the ramp
    return dt / calls * 1e6, steady


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="8192x8192x8192")
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args(argv)
    M, N, K = (int(x) for x in a.shape.split("x"))
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(0)
    print(f"{'op':22} {'variant':10} {'who':7} {'us/call':>9} {'MHz':>6} {'W':>5} {'Mcycles':>8} {'TFLOPS':>7}")
    for op, variant in CASES:
        args, peer, _ = bench.make_problem(op, variant, M, N, K, dev, gen)
        fly = getattr(flygemm, op)
        for who, fn in (("flygemm", lambda: fly(*args)), ("torch", peer)):
            if fn is None:
                continue
            us, s = sample_while(fn, a.seconds)
            mhz = sum(x for x, _ in s) / max(1, len(s))
            watt = sum(w for _, w in s) / max(1, len(s))
            print(f"{op:22} {variant:10} {who:7} {us:9.1f} {mhz:6.0f} {watt:5.0f} {us * mhz / 1e6:8.3f} "
                  f"{2 * M * N * K / us / 1e6:7.0f}", flush=True)


if __name__ == "__main__":
    main()
