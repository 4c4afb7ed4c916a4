// The one interface between the C++ op layer and the ahead-of-time compiled kernels.
//
// tools/build_kernels.py generates build/kernels/<arch>/registry.cpp, which defines one
// KernelRecord per compiled specialization. Each record's `launch` is an adapter written by the
// kernel family's Python file (kernels/<vendor>/<family>.py, function `launch_adapter_cpp`): it
// translates LaunchArgs into whatever the DSL's exported host launcher takes. Geometry (grid,
// block, shared memory) is computed only by the DSL's launcher or the adapter, never here.
#pragma once
#include <cstdint>

namespace flygemm {

// Element types as plain codes so that the generated registry needs no torch headers.
enum class DType : int32_t { none = 0, bf16, fp16, fp32, fp8_e4m3fn, fp8_e4m3fnuz, int8, fp4_e2m1_x2, e8m0 };

enum class WeightLayout : int32_t { plain = 0, preshuffled = 1 };

// How a scale tensor maps onto its operand.
enum class ScaleKind : int32_t {
  none = 0,
  per_tensor,  // one value
  per_row,     // one per row of A (M values) or of W (N values)
  block,       // blockscale: [rows / block_rows, ceil(K / 128)]
  mx_e8m0,     // OCP MX: one E8M0 byte per 32 elements along K
};

// LaunchArgs::split_k / a dispatch row's split_k that runs the stream-K schedule: the persistent grid's CTAs each
// take a contiguous run of (tile, K tile) units, whole tiles go out through the normal epilogue and the pieces of
// tiles shared by several CTAs are summed in CTA order by a fix-up kernel (workspace: LaunchArgs::scratch, sized
// by the record's scratch_bytes). Kernels whose meta has "stream_k": 1 (kernels/cuda/_hopper_gemm.py).
constexpr int32_t kStreamK = -1;

struct LaunchArgs {
  const void* a = nullptr;        // [M, K] (row stride lda elements; fp4: packed bytes)
  const void* w = nullptr;        // weight in the record's layout, contiguous
  const void* a_scale = nullptr;
  const void* w_scale = nullptr;
  const void* bias = nullptr;     // [N] or null
  void* out = nullptr;            // [M, N] with row stride ldo elements
  float* workspace = nullptr;     // fp32 [split_k, M_pad, N] when split_k > 1, else null
  void* scratch = nullptr;        // the record's scratch_bytes(args) bytes, when it has that function
  int64_t scratch_bytes = 0;
  int64_t M = 0, N = 0, K = 0;
  int64_t lda = 0, ldo = 0;
  int64_t M_pad = 0;              // rows of each workspace slice
  int32_t split_k = 1;            // slices (>= 1), or kStreamK
  ScaleKind a_scale_kind = ScaleKind::none, w_scale_kind = ScaleKind::none;
  DType bias_dtype = DType::none;
  int32_t device = 0;
  void* stream = nullptr;         // cudaStream_t / hipStream_t of the op's current stream
};

// Returns 0 on success, otherwise a backend error code; the message (if any) is written into
// `err` (NUL-terminated, at most err_len bytes).
using LaunchFn = int (*)(const LaunchArgs& args, char* err, int err_len);
// Loads the record's module on the current device (called once per device, outside capture).
using LoadFn = int (*)(int device, char* err, int err_len);
// Bytes of device scratch one launch with these args needs (the op layer allocates it on the op's stream
// and passes it as LaunchArgs::scratch); the kernel's adapter owns the layout.
using ScratchFn = int64_t (*)(const LaunchArgs& args);

struct KernelRecord {
  const char* name;        // unique, e.g. "gemm_a16w16.bf16.bf16.t128x128x64"
  const char* arch;        // "sm_90a", "gfx942", "gfx950"
  const char* family;      // kernel family file name, e.g. "gemm_a16w16"
  const char* op;          // op it implements, e.g. "gemm_a16w16"
  DType in_dtype;
  DType out_dtype;
  WeightLayout w_layout;   // layout the kernel reads natively
  int32_t tile_m, tile_n, tile_k;
  int32_t max_split_k;     // 1 when the kernel has no split-K mode
  int32_t requires_k_multiple;  // K must be a multiple of this (elements)
  int32_t requires_n_multiple;  // N must be a multiple of this
  const char* meta_json;   // everything else the build knew (tile config, sizes, source hash)
  LoadFn load;
  LaunchFn launch;
  ScratchFn scratch_bytes = nullptr;  // null: the kernel needs no scratch
};

struct DispatchRow {
  const char* arch;
  const char* op;
  DType in_dtype;
  DType out_dtype;
  int64_t m_max;  // bucket: rows with M <= m_max
  int64_t N, K;   // 0 means "any" (heuristic default row for this arch/op/dtype/M regime)
  const char* kernel;
  int32_t split_k;
};

}  // namespace flygemm

// Defined by each generated registry (extern "C" so a missing arch is just an empty table).
extern "C" {
struct FlygemmRegistry {
  const flygemm::KernelRecord* kernels;
  int num_kernels;
  const flygemm::DispatchRow* rows;
  int num_rows;
};
}
