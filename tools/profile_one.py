#!/usr/bin/env python3
"""Run one op call after a warm-up, for a profiler (Nsight Compute) to capture:

    ncu --clock-control none -k regex:main_kernel --launch-skip 3 --launch-count 1 \
        python3 tools/profile_one.py --op gemm_a8w8 --variant per_tensor --shape 1x2048x7168 \
        --kernel gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n16.sm90a:1

--kernel pins the kernel and split_k (FLYGEMM_FORCE_KERNEL); without it the dispatch table chooses.
--activities prints every GPU activity of three cold-L2 calls (name, start offset, duration): what
the bench's kernel time (the span of one call's activities) is made of. --torch does the same for the
op's torch peer (the bench's comparison), e.g. to see which cuBLAS kernels it runs.
"""
import argparse
import os
import sys

import torch

import flygemm
from flygemm import bench


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", required=True)
    ap.add_argument("--variant", default="-")
    ap.add_argument("--shape", required=True, help="MxNxK")
    ap.add_argument("--kernel", default="", help="kernel:split_k to pin")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--activities", action="store_true", help="list one call's GPU activities (3 calls)")
    ap.add_argument("--torch", action="store_true", help="with --activities: the op's torch peer instead")
    args = ap.parse_args(argv)
    if args.kernel:
        os.environ["FLYGEMM_FORCE_KERNEL"] = args.kernel
    M, N, K = bench.parse_shapes(args.shape, [])[0]
    device = torch.device("cuda")
    problem, peer, _ = bench.make_problem(args.op, args.variant, M, N, K, device,
                                          torch.Generator(device=device).manual_seed(0))
    fn = getattr(flygemm, args.op)
    for _ in range(args.warmup + 1):
        fn(*problem)
    torch.cuda.synchronize()
    print(f"{args.op} {args.variant} {M}x{N}x{K}: {flygemm.explain(args.op, M, N, K, problem[0].dtype, device)['kernel']}"
          f" pinned={args.kernel or '-'}")
    if args.activities and args.torch:
        if peer is None:
            print("no torch peer for this op")
            return 1
        for _ in range(args.warmup + 1):
            peer()
        print("torch peer:")
        print_activities(peer, device)
    elif args.activities:
        print_activities(lambda: fn(*problem), device)
    return 0


def print_activities(call, device, calls: int = 3) -> None:
    from torch.profiler import ProfilerActivity, profile
    for i in range(calls):
        bench.flush_l2(device)
        torch.cuda.synchronize(device)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize(device)
        evs = sorted((e.start_ns(), e.duration_ns(), e.name()) for e in prof.profiler.kineto_results.events()
                     if e.device_type() == torch.autograd.DeviceType.CUDA)
        t0 = evs[0][0] if evs else 0
        for start, dur, name in evs:
            print(f"  call {i}: +{(start - t0) / 1e3:7.2f} us {dur / 1e3:7.2f} us  {name[:90]}")


if __name__ == "__main__":
    sys.exit(main())
