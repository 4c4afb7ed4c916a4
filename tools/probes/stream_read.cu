// Read-bandwidth probes for the small-N decode shapes (how fast can 128 CTAs stream a 14.7 MB weight
// matrix at all?). Not product code: tools/probes/stream_read.py builds this with nvcc on the GPU
// machine, launches the kernels through CuPy and reports kernel time (cold L2) like tools/bench.py.
//
//   bulk_read: each CTA streams its contiguous slice into shared memory with cp.async.bulk (TMA
//              bulk copies, one mbarrier per stage, every stage issued at the start), then the
//              threads read every byte back from shared memory and add it up.
//   ldg_read : each thread keeps `UNROLL` 16-byte ld.global.nc loads in flight.
//   empty    : the launch floor for the same grid.
#include <cstdint>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_u32(bar)), "r"(bytes));
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT_%=;\n}" :: "r"(smem_u32(bar)), "r"(parity));
}

__device__ __forceinline__ void bulk_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      :: "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ uint4 ldg_nc(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// slice of CTA b: bytes [b * slice, (b + 1) * slice); `stages` equal stages, each `pieces` copies
extern "C" __global__ void bulk_read(const uint8_t* w, uint32_t slice, uint32_t stages, uint32_t pieces,
                                     uint32_t* out) {
  extern __shared__ __align__(128) uint8_t smem[];
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem);
  uint8_t* data = smem + 1024;
  const uint8_t* src = w + static_cast<size_t>(blockIdx.x) * slice;
  const uint32_t stage_bytes = slice / stages, piece = stage_bytes / pieces;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < stages; ++s) mbar_init(&bars[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (uint32_t s = 0; s < stages; ++s) {
      mbar_expect_tx(&bars[s], stage_bytes);
      for (uint32_t p = 0; p < pieces; ++p)
        bulk_g2s(data + s * stage_bytes + p * piece, src + s * stage_bytes + p * piece, piece, &bars[s]);
    }
  }
  __syncthreads();
  uint32_t acc = 0;
  for (uint32_t s = 0; s < stages; ++s) {
    mbar_wait(&bars[s], 0);
    const uint4* v = reinterpret_cast<const uint4*>(data + s * stage_bytes);
    for (uint32_t i = threadIdx.x; i < stage_bytes / 16; i += blockDim.x) {
      uint4 x = v[i];
      acc += x.x ^ x.y ^ x.z ^ x.w;
    }
  }
  if (acc == 0x12345678u) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;  // keeps the reads alive
}

template <int UNROLL>
__device__ void ldg_read_impl(const uint8_t* w, uint32_t slice, uint32_t* out) {
  const uint4* src = reinterpret_cast<const uint4*>(w + static_cast<size_t>(blockIdx.x) * slice);
  const uint32_t n = slice / 16;
  uint32_t acc = 0;
  for (uint32_t base = 0; base < n; base += UNROLL * blockDim.x) {
    uint4 x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      uint32_t i = base + u * blockDim.x + threadIdx.x;
      x[u] = ldg_nc(src + (i < n ? i : n - 1));
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc += x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
  }
  if (acc == 0x12345678u) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(512, 1) ldg_read8(const uint8_t* w, uint32_t slice, uint32_t* out) { ldg_read_impl<8>(w, slice, out); }
extern "C" __global__ void __launch_bounds__(512, 1) ldg_read16(const uint8_t* w, uint32_t slice, uint32_t* out) { ldg_read_impl<16>(w, slice, out); }
extern "C" __global__ void __launch_bounds__(512, 1) ldg_read32(const uint8_t* w, uint32_t slice, uint32_t* out) { ldg_read_impl<32>(w, slice, out); }

// The decode kernels' access pattern: CTA b owns 16 rows of K bytes (rows contiguous); warp wk owns
// columns [wk * K / W, (wk + 1) * K / W); lane (g = lane / LPR, t = lane % LPR) reads 16-byte pieces
// of rows g, g + 32 / LPR, ... so one load instruction covers 32 / LPR rows x LPR * 16 bytes. Every
// lane keeps up to 32 loads in flight. PF: ld.global with the .L2::128B prefetch hint.
template <int LPR, bool PF>
__device__ void pattern_read_impl(const uint8_t* w, uint32_t K, uint32_t* out) {
  constexpr int ROWS = 32 / LPR, RPL = 16 / ROWS;  // rows per instruction, rows per lane
  const uint32_t warps = blockDim.x / 32, wk = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t g = lane / LPR, t = lane % LPR, span = K / warps;
  const uint32_t pieces = span / (LPR * 16), n = pieces * RPL;
  const uint8_t* base = w + static_cast<size_t>(blockIdx.x) * 16 * K;
  uint32_t acc = 0;
  for (uint32_t j0 = 0; j0 < n; j0 += 32) {
    uint4 x[32];
#pragma unroll
    for (int u = 0; u < 32; ++u) {
      uint32_t j = j0 + u < n ? j0 + u : n - 1;
      uint32_t row = g + (j % RPL) * ROWS, col = wk * span + ((j / RPL) * LPR + t) * 16;
      const uint4* p = reinterpret_cast<const uint4*>(base + static_cast<size_t>(row) * K + col);
      if (PF)
        asm("ld.global.nc.L1::no_allocate.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];"
            : "=r"(x[u].x), "=r"(x[u].y), "=r"(x[u].z), "=r"(x[u].w) : "l"(p));
      else
        x[u] = ldg_nc(p);
    }
#pragma unroll
    for (int u = 0; u < 32; ++u) acc += x[u].x ^ x[u].y ^ x[u].z ^ x[u].w;
  }
  if (acc == 0x12345678u) out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(512, 1) pattern_lpr4(const uint8_t* w, uint32_t K, uint32_t* out) { pattern_read_impl<4, false>(w, K, out); }
extern "C" __global__ void __launch_bounds__(512, 1) pattern_lpr4_pf(const uint8_t* w, uint32_t K, uint32_t* out) { pattern_read_impl<4, true>(w, K, out); }
extern "C" __global__ void __launch_bounds__(512, 1) pattern_lpr8(const uint8_t* w, uint32_t K, uint32_t* out) { pattern_read_impl<8, false>(w, K, out); }
extern "C" __global__ void __launch_bounds__(512, 1) pattern_lpr32(const uint8_t* w, uint32_t K, uint32_t* out) { pattern_read_impl<32, false>(w, K, out); }

extern "C" __global__ void empty(uint32_t* out) {
  if (threadIdx.x == 1023) out[blockIdx.x] = 0;
}
