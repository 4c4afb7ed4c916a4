// Kernel choice: the shape-keyed dispatch table generated from kernels/configs/<arch>.csv, a
// heuristic default when a shape is not in it, and the registry of compiled kernels.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch.h"
#include "problem.h"

namespace flygemm {

struct KernelTable {
  std::vector<const KernelRecord*> kernels;
  std::vector<const DispatchRow*> rows;
};

// Every kernel and row linked into this library (all arches).
const KernelTable& linked_table();
const KernelRecord* find_kernel(const char* name);
std::vector<std::string> linked_archs();

struct Query {
  std::string arch;
  OpKind op;
  DType in_dtype, out_dtype;
  int64_t M, N, K;
  // Layout of the caller's weight, when known: a row whose kernel reads the other layout gives
  // way to a covering bucket of the same rows (exact, else default) whose kernel reads this one,
  // so the weight is not converted on every call; without one the row stands.
  std::optional<WeightLayout> w_layout = std::nullopt;
  // SMs (CUs) of the device the call runs on, for the one-wave rules of the default rows and the .sw split;
  // 0: unknown, the arch's reference part (sm_90a: the H100 SXM / H200's 132, where those rules were measured).
  int64_t sm_count = 0;
  // The call scales by row or column (gemm_a8w8 with a per-token a_scale or a per-channel w_scale): exact rows
  // of op "<op>.row_scales" answer it before the op's own rows. Why: the per-row epilogue costs differently
  // per kernel (the ping-pong tiles won 3-4% per-tensor and lost 5-7% per-token on the same M = 16384 layers).
  bool row_scales = false;
  // Name of the device the call runs on (cudaDeviceProp::name, "NVIDIA H100 80GB HBM3"); empty: the arch's reference
  // part (sm_90a: the H200 its rows were measured on). Rows of op "<op>@<part>" answer only where <part> is a word of it.
  std::string device_name;
};

// Suffix of a dispatch row's op that restricts the row to calls with row scales (Query::row_scales).
inline constexpr const char* kRowScalesSuffix = ".row_scales";
// "<op>@<part>" (also "<op>.row_scales@<part>"): an exact row measured on one part of the arch, answering only on a
// device whose name has <part> as a word (Query::device_name), ahead of the rows every part shares.
inline constexpr char kPartSeparator = '@';

// Whether part is a word of device_name (words: runs of letters and digits; "NVIDIA H100 80GB HBM3" has H100, not H10).
bool names_part(const std::string& device_name, const char* part);

// "gemm_a8w8" or "gemm_a8w8.row_scales" (ops with row scales only) -> (op, row_scales); nullopt otherwise.
std::optional<std::pair<OpKind, bool>> op_and_scaling(const std::string& name);

struct Choice {
  const KernelRecord* kernel = nullptr;
  int32_t split_k = 1;
  const char* source = "";  // "table", "default" or "fallback"
};

// Never fails for a table miss; throws a clear error only when no kernel of `table` can run the
// query (arch without kernels, dtype combination not built, alignment not met).
Choice choose_kernel(const KernelTable& table, const Query& q);

// choose_kernel memoized per (table, query): what the op path and flygemm.explain call. Why: the lookup walks the
// table's rows and names at every call, tens to hundreds of microseconds of host time on the sm_90a tables (the
// forty-eighth session's A/B times of small GEMMs were that host time, not the kernels'); the tables never change
// after load, so a query's answer does not either. Bounded (cleared past kChoiceCacheMax entries), thread-safe.
Choice choose_kernel_cached(const KernelTable& table, const Query& q);
inline constexpr size_t kChoiceCacheMax = 1 << 16;
// Entries in the cache now (for tests).
size_t choice_cache_size();

// Records that convert an MX operand to bf16 for the bf16 GEMM (kernels/cuda/gemm_mxfp.py) say so
// in their metadata.
bool converts_mx_to_bf16(const KernelRecord& k);
// Records that regroup an MX operand into e4m3 values with fp32 1x128 / 128x128 scales for the fp8
// blockscale GEMM (kernels/cuda/gemm_mxfp.py, to=blockscale).
bool converts_mx_to_blockscale(const KernelRecord& k);

// Swapped-operand tile kernels (kernels/cuda/_hopper_gemm.py swap_ab, the `.sw` kernels: tile_m weight rows
// by tile_n tokens per tile) say so in their metadata.
bool swaps_operands(const KernelRecord& k);

// Blockscale tile kernels that load a_scale / w_scale by TMA (kernels/cuda/_hopper_gemm.py scale_tma, the `.stR`
// kernels) say so in their metadata: they read both with 16-byte aligned rows of ceil(KB / 4) * 4 floats.
bool reads_scales_by_tma(const KernelRecord& k);

// Tile kernels with a stream-K mode (split_k = kStreamK; kernels/cuda/_hopper_gemm.py) say so in their metadata.
bool runs_stream_k(const KernelRecord& k);

// The split_k of a row with split_k = 0: about 192 CTAs over the N tiles (.sw kernels: at most one wave of
// 132 CTAs over their weight-row and token tiles), at most one slice per K tile.
int32_t auto_split_k(const KernelRecord& k, const Query& q);

// Appends a tuner-ready CSV row when FLYGEMM_LOG_MISSES names a file.
void log_miss(const Query& q, const Choice& c);

// Appends "arch,op,in_dtype,out_dtype,M,N,K,kernel,split_k,source" when FLYGEMM_LOG_DISPATCH names a file: every
// distinct call's pick, table hits included (op "gemm_a8w8.row_scales" for a call with row scales), so a user or a
// test can see which kernel a call ran.
void log_dispatch(const Query& q, const Choice& c);

}  // namespace flygemm
