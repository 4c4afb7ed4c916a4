#!/usr/bin/env python3
"""Accumulation accuracy of the fp8 GEMMs against an fp64 reference on the GPU.

For each shape, per-tensor quantized inputs are multiplied three ways with fp32 outputs (so that no
output rounding hides the accumulation error; torch allows fp32 output for per-tensor scales only):
flygemm.gemm_a8w8, torch._scaled_mm with use_fast_accum=False (torch's default) and with
use_fast_accum=True; each result is compared with the same product computed in fp64 from the
dequantized operands (relative Frobenius error). Also flygemm.gemm_a8w8_blockscale (per-128-K fp32
promotion) on its own quantization, with fp16 output (its sm_90a kernels write bf16 / fp16; fp16
rounding alone gives ~3e-4).

    python tools/fp8_accuracy.py --shapes 256x4096x4096,256x4096x16384,256x4096x65536
"""
import argparse
import math
import os
import sys

import torch

import flygemm
from flygemm import bench, quant


def rel(out, ref):
    return (torch.linalg.norm(out.double() - ref) / torch.linalg.norm(ref)).item()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default="256x4096x4096,256x4096x16384,256x4096x65536")
    ap.add_argument("--kernel", default="", help="pin flygemm's fp32-output gemm_a8w8 kernel (FLYGEMM_FORCE_KERNEL)")
    args = ap.parse_args(argv)
    if args.kernel:
        os.environ["FLYGEMM_FORCE_KERNEL"] = args.kernel
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(3)
    print(f"{'M':>6}{'N':>7}{'K':>7}{'flygemm':>11}{'torch':>11}{'torch fast':>11}{'blockscale':>11}")
    for M, N, K in bench.parse_shapes(args.shapes, []):
        a32 = torch.randn(M, K, generator=gen, device=dev)
        w32 = torch.randn(N, K, generator=gen, device=dev) / math.sqrt(K)
        qa, sa = quant.quantize_fp8_per_tensor(a32, torch.float8_e4m3fn)
        qw, sw = quant.quantize_fp8_per_tensor(w32, torch.float8_e4m3fn)
        ref = (qa.double() @ qw.double().t()) * (sa.double() * sw.double()).reshape(())
        fly = flygemm.gemm_a8w8(qa, qw, sa, sw, None, torch.float32)
        ta, tb = sa.reshape(1, 1), sw.reshape(1, 1)
        t0 = torch._scaled_mm(qa, qw.t(), ta, tb, out_dtype=torch.float32, use_fast_accum=False)
        t1 = torch._scaled_mm(qa, qw.t(), ta, tb, out_dtype=torch.float32, use_fast_accum=True)
        ba, bsa = quant.quantize_fp8_blockscale_act(a32, 128, torch.float8_e4m3fn)
        bw, bsw = quant.quantize_fp8_blockscale_weight(w32, 128, torch.float8_e4m3fn)
        kb = bsa.shape[1]
        dqa = (ba.double().reshape(M, kb, -1) * bsa.double().reshape(M, kb, 1)).reshape(M, -1)[:, :K]
        dqw = (bw.double().reshape(N, kb, -1) * bsw.double().repeat_interleave(128, 0)[:N].reshape(N, kb, 1)
               ).reshape(N, -1)[:, :K] if K % 128 == 0 else None
        bs = (rel(flygemm.gemm_a8w8_blockscale(ba, bw, bsa, bsw, None, torch.float16), dqa @ dqw.t())
              if dqw is not None else float("nan"))
        print(f"{M:>6}{N:>7}{K:>7}{rel(fly, ref):>11.2e}{rel(t0, ref):>11.2e}{rel(t1, ref):>11.2e}{bs:>11.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
