#!/usr/bin/env python3
"""How many SM cycles one wgmma takes at the narrow N of the decode kernels (probe, not product code).

The MXFP4 M = 16 decode kernel (m16n64k128.s4.p4.img) takes ~28 us at 16 x 16384 x 7168 on the H100 and the H200
alike, without its weight decode only 2.5% less (docs/PERF.md, fifty-seventh session). Its tensor work is
16384 / 64 x 7168 / 16 = 114,688 wgmma.m64n16k16 (A = decoded weights from registers, B = the activation image in
shared memory), ~869 per SM. Were one such wgmma ~55 SM cycles whatever N is, that count alone would be the 28 us. It is
not (H100, fifty-eighth session, docs/measurements/2026-12-06-h100-wgmma-rate-58.txt): ~8.2 ns of an SM's time with 4
warpgroups issuing, so the count is 7-9 us of the 28. This probe measures the cost per instruction:
every CTA is one warpgroup issuing `iters` rounds of 8 chained wgmmas into one accumulator (like a kernel round),
`cps` CTAs per SM, cycles from clock64 in CTA 0 and kernel time from CUDA events.

Variants: bf16 RS (A from registers) n8..n128, bf16 SS (A from shared memory), e4m3 RS k32, and "dep": the A
registers rewritten before every round (the decode's dependency: wait for the round's wgmmas first).
Needs nvcc and CuPy (the GPU machine has both).

    python3 tools/probes/wgmma_rate.py
"""
import argparse
import os
import subprocess
import tempfile

import cupy

VARIANTS = [  # name, kind, n, k-bytes-per-row of one instruction
    ("bf16_rs_n8", "bf16_rs", 8), ("bf16_rs_n16", "bf16_rs", 16), ("bf16_rs_n32", "bf16_rs", 32),
    ("bf16_rs_n64", "bf16_rs", 64), ("bf16_rs_n128", "bf16_rs", 128),
    ("bf16_ss_n16", "bf16_ss", 16), ("bf16_ss_n64", "bf16_ss", 64),
    ("e4m3_rs_n16", "e4m3_rs", 16), ("e4m3_rs_n32", "e4m3_rs", 32), ("e4m3_rs_n64", "e4m3_rs", 64),
    ("bf16_rs_n16_dep", "bf16_rs_dep", 16), ("e4m3_rs_n16_dep", "e4m3_rs_dep", 16),
]

PRELUDE = r"""
#include <cstdint>
__device__ __forceinline__ uint64_t desc_of(const void* p, uint32_t step) {
  // no swizzle; leading / stride byte offsets 128 / 256 (any valid layout serves a throughput count)
  uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p)) + step * 32;
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
}
"""

KERNEL = r"""
extern "C" __global__ void __launch_bounds__(128) @NAME@(float* out, long long* cycles, int iters) {
  __shared__ __align__(1024) uint32_t smem[8192];
  for (int i = threadIdx.x; i < 8192; i += 128) smem[i] = 0x00010001u * (i & 3);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float d[@NACC@];
  #pragma unroll
  for (int i = 0; i < @NACC@; ++i) d[i] = 0.f;
  uint32_t a[8][4];
  #pragma unroll
  for (int s = 0; s < 8; ++s)
    #pragma unroll
    for (int j = 0; j < 4; ++j) a[s][j] = (threadIdx.x + s + j) & 0x00030003u;
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it) {
    uint32_t b[8][4];
    #pragma unroll
    for (int s = 0; s < 8; ++s)
      #pragma unroll
      for (int j = 0; j < 4; ++j) {
        b[s][j] = @REWRITE@;
        asm volatile("" : "+r"(b[s][j]));   // computed before the fence, as a decode would be
      }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    #pragma unroll
    for (int s = 0; s < 8; ++s) {
      uint64_t db = desc_of(smem, s);
      uint64_t da = desc_of(smem + 4096, s);
      (void)da;
      asm volatile(@ASM@ : @DOUT@ : @AIN@ "l"(db), "l"(da));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned @WAIT@;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  long long t1 = clock64();
  float s = 0.f;
  #pragma unroll
  for (int i = 0; i < @NACC@; ++i) s += d[i];
  out[blockIdx.x * 128 + threadIdx.x] = s;
  if (blockIdx.x == 0 && threadIdx.x == 0) cycles[0] = t1 - t0;
}
"""


def kernel_source(name, kind, n):
    nacc = n // 2
    dregs = ",".join(f"%{i}" for i in range(nacc))
    aregs = ",".join(f"%{nacc + i}" for i in range(4))
    desc_b, desc_a = f"%{nacc + 4}", f"%{nacc + 5}"
    base = kind.replace("_dep", "")
    if base == "bf16_rs":
        op = f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{dregs}}}, {{{aregs}}}, {desc_b}, 1, 1, 1, 0;"
    elif base == "bf16_ss":
        op = f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{dregs}}}, {desc_a}, {desc_b}, 1, 1, 1, 0, 0;"
    else:
        op = f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 {{{dregs}}}, {{{aregs}}}, {desc_b}, 1, 1, 1;"
    # the decode's dependency: new A values every round (the previous round's wgmmas were waited for)
    rewrite = "a[s][j] ^ (uint32_t)it" if kind.endswith("_dep") else "a[s][j]"
    return (KERNEL.replace("@NAME@", name).replace("@NACC@", str(nacc)).replace("@REWRITE@", rewrite)
            .replace("@ASM@", '"' + op + '"')
            .replace("@DOUT@", ", ".join(f'"+f"(d[{i}])' for i in range(nacc)))
            .replace("@AIN@", "".join(f'"r"(b[s][{j}]), ' for j in range(4)))
            .replace("@WAIT@", "0" if kind.endswith("_dep") else "1"))


def build(tmp):
    src = os.path.join(tmp, "wgmma_rate.cu")
    with open(src, "w") as f:
        f.write(PRELUDE + "".join(kernel_source(*v) for v in VARIANTS))
    cubin = os.path.join(tmp, "wgmma_rate.cubin")
    subprocess.run(["nvcc", "-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", src, "-o", cubin], check=True)
    return cubin


def measure(module, name, sms, cps, iters):
    fn = module.get_function(name)
    out = cupy.zeros(sms * cps * 128, dtype=cupy.float32)
    cyc = cupy.zeros(1, dtype=cupy.int64)
    args = (out, cyc, cupy.int32(iters))
    fn((sms * cps,), (128,), args)   # warm-up
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(5):
        start.record()
        fn((sms * cps,), (128,), args)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e3)
    us = sorted(times)[2]
    per_sm = cps * iters * 8
    return us, int(cyc.get()[0]) / (iters * 8), us * 1e3 / per_sm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=2048)
    ap.add_argument("--cps", default="1,2,4", help="CTAs (warpgroups) per SM")
    ap.add_argument("--source-only", action="store_true", help="write and compile the source, run nothing")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    cubin = build(tmp)
    if args.source_only:
        print(cubin)
        return
    module = cupy.RawModule(path=cubin)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    print(f"{'variant':>18} {'cps':>3} {'kernel us':>10} {'cyc/wgmma (WG)':>15} {'ns/wgmma per SM':>16}")
    for name, _, _ in VARIANTS:
        for cps in (int(c) for c in args.cps.split(",")):
            us, cyc, ns = measure(module, name, sms, cps, args.iters)
            print(f"{name:>18} {cps:>3} {us:10.1f} {cyc:15.1f} {ns:16.2f}")


if __name__ == "__main__":
    main()
