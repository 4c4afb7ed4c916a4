// The GPU implementation of every op: validate (shared), pick a kernel (dispatch table), prepare
// operands in the kernel's layout, take the split-K workspace from the caching allocator, and
// launch on the tensor's device and current stream. Compiled only against a GPU build of torch
// (FLYGEMM_WITH_GPU); the same code serves CUDA and ROCm (torch exposes HIP through at::cuda).
#ifdef FLYGEMM_WITH_GPU
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "device_runtime.h"
#include "dispatch.h"
#include "layout.h"
#include "ops_common.h"

namespace flygemm {
namespace {

std::string device_arch(int device) {
  const auto* prop = at::cuda::getDeviceProperties(device);
#ifdef USE_ROCM
  std::string name = prop->gcnArchName;
  return name.substr(0, name.find(':'));  // "gfx942:sramecc+:xnack-" -> "gfx942"
#else
  std::string arch = "sm_" + std::to_string(prop->major) + std::to_string(prop->minor);
  return arch == "sm_90" ? "sm_90a" : arch;  // Hopper kernels are built for the 'a' target
#endif
}

bool capturing() {
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
}

// A 2-D row-major view with unit inner stride, 16-byte aligned base, 16-byte aligned row stride and
// rows of whole 16-byte units (what the kernels' 16-byte / TMA row accesses need): `t` itself when it
// is one, else a fresh buffer whose rows are padded to a multiple of 16 bytes, holding t's values when
// `copy_values`. Why not t.contiguous(): it returns a one-row view unchanged whatever its row stride
// (a size-1 dim counts as contiguous), and a contiguous [rows, cols] tensor has unaligned rows when
// cols * elem is not a multiple of 16 (e.g. an output with N % 8 != 0). Why whole units: the sm_90a
// TMA stores write a row's last 16-byte unit whole (H200, 2026-11-30: an in-place output with
// N = 137 fp32 / 157 fp16 and aligned padded rows got its 3 padding columns overwritten), so a
// caller's row of N % (16 / elem) != 0 elements is never written in place.
at::Tensor aligned_rows(const at::Tensor& t, bool copy_values, bool nan_fill = false) {
  const int64_t elem = t.element_size();
  const bool ok = t.stride(1) == 1 && t.stride(0) >= t.size(1) && (t.stride(0) * elem) % 16 == 0 &&
                  (t.size(1) * elem) % 16 == 0 && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  if (ok) return t;
  const int64_t per16 = std::max<int64_t>(1, 16 / elem);
  const int64_t ld = std::max<int64_t>(per16, (t.size(1) + per16 - 1) / per16 * per16);
  at::Tensor buf = at::empty({t.size(0), ld}, t.options()).narrow(1, 0, t.size(1));
  if (copy_values) buf.copy_(t);
  if (nan_fill) buf.fill_(std::numeric_limits<double>::quiet_NaN());
  return buf;
}

at::Tensor weight_in_layout(const at::Tensor& w, WeightLayout want) {
  if (want == WeightLayout::plain) return plain_weight(w).contiguous();
  return w.dim() == 4 ? w.contiguous() : preshuffle(w.contiguous());
}

// FLYGEMM_FORCE_KERNEL=<name>[:split_k|:auto|:sk] pins the kernel for matching problems (used by tools/tune.py
// to time every candidate through the real op path); ":sk" (or ":-1") runs the stream-K schedule.
std::optional<Choice> forced_kernel(const Query& q) {
  const char* env = std::getenv("FLYGEMM_FORCE_KERNEL");
  if (!env || !*env) return std::nullopt;
  std::string spec(env);
  const size_t colon = spec.find(':');
  const KernelRecord* k = find_kernel(spec.substr(0, colon).c_str());
  TORCH_CHECK(k, "flygemm: FLYGEMM_FORCE_KERNEL names an unknown kernel '", spec, "'");
  if (q.arch != k->arch || std::string(op_name(q.op)) != k->op || k->in_dtype != q.in_dtype ||
      k->out_dtype != q.out_dtype)
    return std::nullopt;
  // ":auto" (or ":0") picks the split_k a dispatch row with split_k 0 would
  const std::string tail = colon == std::string::npos ? "1" : spec.substr(colon + 1);
  if (tail == "sk" || tail == std::to_string(kStreamK)) {
    TORCH_CHECK(runs_stream_k(*k), "flygemm: FLYGEMM_FORCE_KERNEL asks ", k->name, " for stream-K, which it lacks");
    return Choice{k, kStreamK, "forced"};
  }
  const int split_k = tail == "auto" || tail == "0" ? auto_split_k(*k, q) : std::stoi(tail);
  return Choice{k, std::max(1, std::min(split_k, std::max(1, k->max_split_k))), "forced"};
}

// One MX operand [rows, K] (fp8 bytes or fp4 pairs) with E8M0 scales -> a new bf16 [rows, K].
at::Tensor mx_operand_to_bf16(const KernelRecord& k, const at::Tensor& src, const at::Tensor& scale,
                              int64_t K, int device) {
  at::Tensor x = aligned_rows(src, /*copy_values=*/true);
  at::Tensor s = scale.contiguous();
  at::Tensor out = at::empty({x.size(0), K}, x.options().dtype(at::kBFloat16));
  LaunchArgs la;
  la.a = x.data_ptr();
  la.a_scale = s.data_ptr();
  la.a_scale_kind = ScaleKind::mx_e8m0;
  la.out = out.data_ptr();
  la.M = x.size(0);
  la.K = K;
  la.lda = x.stride(0);  // storage elements = bytes for fp8 and packed fp4
  la.ldo = K;
  la.device = device;
  la.stream = at::cuda::getCurrentCUDAStream(device).stream();
  char err[512] = {0};
  const int rc = k.launch(la, err, sizeof(err));
  TORCH_CHECK(rc == 0, "flygemm: launching ", k.name, " failed (", rc, "): ", err);
  return out;
}

// One MX operand [rows, K] (fp8 bytes or fp4 pairs) with E8M0 scales -> e4m3 [rows, K] and the fp32 scales of its
// 128-wide K groups: [rows, ceil(K/128)] for group_rows 1 (the activation, 1x128) or [ceil(rows/128), ceil(K/128)]
// for 128 (the weight, 128x128), the layout gemm_a8w8_blockscale takes.
std::pair<at::Tensor, at::Tensor> mx_operand_to_blockscale(const KernelRecord& k, const at::Tensor& src,
                                                           const at::Tensor& scale, int64_t K,
                                                           int64_t group_rows, int device) {
  at::Tensor x = aligned_rows(src, /*copy_values=*/true);
  at::Tensor s = scale.contiguous();
  const int64_t rows = x.size(0), groups = (K + 127) / 128;
  at::Tensor values = at::empty({rows, K}, x.options().dtype(at::kFloat8_e4m3fn));
  at::Tensor scales = at::empty({(rows + group_rows - 1) / group_rows, groups}, x.options().dtype(at::kFloat));
  LaunchArgs la;
  la.a = x.data_ptr();
  la.a_scale = s.data_ptr();
  la.a_scale_kind = ScaleKind::mx_e8m0;
  la.out = values.data_ptr();
  la.workspace = scales.data_ptr<float>();
  la.M = rows;
  la.N = group_rows;
  la.K = K;
  la.lda = x.stride(0);  // storage elements = bytes for fp8 and packed fp4
  la.ldo = K;
  la.M_pad = groups;     // the scales' row stride
  la.device = device;
  la.stream = at::cuda::getCurrentCUDAStream(device).stream();
  char err[512] = {0};
  const int rc = k.launch(la, err, sizeof(err));
  TORCH_CHECK(rc == 0, "flygemm: launching ", k.name, " failed (", rc, "): ", err);
  return {values, scales};
}

}  // namespace

void ensure_loaded(const KernelRecord& k, int device) {
  static std::mutex mu;
  static std::set<std::pair<const KernelRecord*, int>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded.count({&k, device})) return;
  TORCH_CHECK(!capturing(), "flygemm: kernel ", k.name, " is not loaded on device ", device,
              " and a CUDA/HIP graph is being captured; call flygemm.warmup(device) before capture");
  char err[512] = {0};
  const int rc = k.load(device, err, sizeof(err));
  TORCH_CHECK(rc == 0, "flygemm: loading kernel ", k.name, " on device ", device, " failed (", rc, "): ", err);
  loaded.insert({&k, device});
}

void warmup_device(const at::Device& device) {
  TORCH_CHECK(device.is_cuda(), "flygemm.warmup: expected a GPU device, got ", device);
  const int index = device.has_index() ? device.index() : c10::cuda::current_device();
  c10::cuda::CUDAGuard guard(index);
  const std::string arch = device_arch(index);
  int n = 0;
  for (const KernelRecord* k : linked_table().kernels) {
    if (arch == k->arch) {
      ensure_loaded(*k, index);
      ++n;
    }
  }
  TORCH_CHECK(n > 0, "flygemm.warmup: no kernels for arch ", arch, " of device ", device,
              " in this build");
}

void device_gemm(const OpArgs& args, const Problem& p, at::Tensor& out) {
  const int64_t M = p.M.expect_int(), N = p.N.expect_int(), K = p.K.expect_int();
  if (M == 0 || N == 0) return;
  const int device = args.a.device().index();
  c10::cuda::CUDAGuard guard(device);
  if (K == 0) {  // empty sum: the result is the bias (or zero), rounded once
    if (args.bias && args.bias->defined()) out.copy_(args.bias->to(at::kFloat).expand({M, N}));
    else out.zero_();
    return;
  }
  Query q{device_arch(device), p.op, to_dtype_code(p.in_dtype), to_dtype_code(p.out_dtype), M, N, K,
          args.w.dim() == 4 ? WeightLayout::preshuffled : WeightLayout::plain,
          at::cuda::getDeviceProperties(device)->multiProcessorCount};
  q.row_scales = p.a_scale_kind == ScaleKind::per_row || p.w_scale_kind == ScaleKind::per_row;
  q.device_name = at::cuda::getDeviceProperties(device)->name;
  // Not value_or(choose_kernel(...)): that would run the lookup on every forced call too.
  const std::optional<Choice> forced = forced_kernel(q);
  const Choice c = forced ? *forced : choose_kernel_cached(linked_table(), q);
  log_miss(q, c);
  log_dispatch(q, c);
  const KernelRecord& k = *c.kernel;
  ensure_loaded(k, device);
  if (converts_mx_to_bf16(k)) {  // MX beyond decode sizes or to non-bf16 output: exact bf16 operands,
                                 // then the bf16 GEMM writing the requested dtype
    const at::Tensor a16 = mx_operand_to_bf16(k, args.a, *args.a_scale, K, device);
    const at::Tensor w16 = mx_operand_to_bf16(k, plain_weight(args.w), *args.w_scale, K, device);
    const std::optional<at::Tensor> none;
    const OpArgs bf16_args{OpKind::a16w16, a16, w16, none, none, args.bias, p.out_dtype};
    device_gemm(bf16_args, check_args(bf16_args), out);
    return;
  }
  if (converts_mx_to_blockscale(k)) {  // MX beyond decode sizes: e4m3 operands with 1x128 / 128x128 fp32
                                       // scales (exact while a group's blocks span <= 14 binades for MXFP4),
                                       // then the fp8 blockscale GEMM through its own rows
    const auto [a8, a_s] = mx_operand_to_blockscale(k, args.a, *args.a_scale, K, 1, device);
    const auto [w8, w_s] = mx_operand_to_blockscale(k, plain_weight(args.w), *args.w_scale, K, 128, device);
    const std::optional<at::Tensor> a_scale(a_s), w_scale(w_s);
    const OpArgs bs_args{OpKind::a8w8_blockscale, a8, w8, a_scale, w_scale, args.bias, p.out_dtype};
    device_gemm(bs_args, check_args(bs_args), out);
    return;
  }

  at::Tensor a = aligned_rows(args.a, /*copy_values=*/true);
  at::Tensor w = weight_in_layout(args.w, k.w_layout);
  auto fp32_contig = [](const std::optional<at::Tensor>& t) {
    if (!t || !t->defined()) return at::Tensor();
    if (t->scalar_type() != at::kFloat8_e8m0fnu) return t->to(at::kFloat).contiguous();
    // E8M0 bytes: kernels may copy them in 4-byte words (the MXFP4 bulk decode kernels), so a view that
    // starts off a 16-byte boundary is copied to a fresh (aligned) allocation; scales are small
    at::Tensor c = t->contiguous();
    return reinterpret_cast<uintptr_t>(c.data_ptr()) % 16 == 0 ? c : c.clone();
  };
  at::Tensor a_scale = fp32_contig(args.a_scale), w_scale = fp32_contig(args.w_scale);
  if (reads_scales_by_tma(k)) {  // TMA boxes: 16-byte aligned rows, i.e. [rows, KB] with row stride ceil(KB / 4) * 4
    a_scale = aligned_rows(a_scale, /*copy_values=*/true);
    w_scale = aligned_rows(w_scale, /*copy_values=*/true);
    TORCH_INTERNAL_ASSERT(a_scale.stride(0) == (a_scale.size(1) + 3) / 4 * 4 &&
                          w_scale.stride(0) == (w_scale.size(1) + 3) / 4 * 4);
  }
  at::Tensor bias = fp32_contig(args.bias);
  // a padded target starts as NaN (every output dtype is floating): an element a kernel failed to write
  // shows as NaN instead of uninitialized memory, for one write pass (a copy of the caller's values
  // would read and write)
  at::Tensor target = aligned_rows(out, /*copy_values=*/false, /*nan_fill=*/true);

  LaunchArgs la;
  la.a = a.data_ptr();
  la.w = w.data_ptr();
  la.a_scale = a_scale.defined() ? a_scale.data_ptr() : nullptr;
  la.w_scale = w_scale.defined() ? w_scale.data_ptr() : nullptr;
  la.bias = bias.defined() ? bias.data_ptr() : nullptr;
  la.bias_dtype = bias.defined() ? DType::fp32 : DType::none;
  la.out = target.data_ptr();
  la.M = M;
  la.N = N;
  la.K = K;
  la.lda = a.stride(0);
  la.ldo = target.stride(0);
  la.a_scale_kind = p.a_scale_kind;
  la.w_scale_kind = p.w_scale_kind;
  la.split_k = c.split_k;
  la.device = device;
  la.stream = at::cuda::getCurrentCUDAStream(device).stream();
  at::Tensor workspace;
  if (c.split_k > 1) {  // fp32 partials from the caching allocator on this stream (capture-safe)
    la.M_pad = (M + k.tile_m - 1) / k.tile_m * k.tile_m;
    workspace = at::empty({c.split_k, la.M_pad, N}, a.options().dtype(at::kFloat));
    la.workspace = workspace.data_ptr<float>();
  }
  at::Tensor scratch;
  if (k.scratch_bytes) {  // kernel-private device scratch, same allocator and stream as the workspace
    la.scratch_bytes = k.scratch_bytes(la);
    if (la.scratch_bytes > 0) {
      scratch = at::empty({la.scratch_bytes}, a.options().dtype(at::kByte));
      la.scratch = scratch.data_ptr();
    }
  }
  char err[512] = {0};
  const int rc = k.launch(la, err, sizeof(err));
  TORCH_CHECK(rc == 0, "flygemm.", op_name(p.op), ": launching ", k.name, " failed (", rc, "): ", err);
  if (!target.is_same(out)) out.copy_(target);
}

}  // namespace flygemm

#endif  // FLYGEMM_WITH_GPU
