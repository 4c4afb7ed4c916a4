// The op schemas (the one source of truth) and their CPU, Meta and utility registrations.
// GPU registrations live in device_ops.cpp; every backend shares the argument checks of
// problem.cpp and the allocation logic here.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "cpu_reference.h"
#include "device_runtime.h"
#include "dispatch.h"
#include "layout.h"
#include "ops_common.h"
#include "problem.h"

namespace flygemm {

at::Tensor run_functional(const OpArgs& args, GemmImpl impl) {
  Problem p = check_args(args);
  at::Tensor out = at::empty_symint({p.M, p.N}, args.a.options().dtype(p.out_dtype));
  if (impl) impl(args, p, out);
  return out;
}

void run_out(OpArgs args, const at::Tensor& out, GemmImpl impl) {
  TORCH_CHECK(out.defined(), "flygemm.", op_name(args.op), "_out: argument 'out' is required");
  OpArgs checked = args;
  if (!checked.out_dtype) {
    check_out_tensor_dtype(args.op, out.scalar_type());
    checked.out_dtype = out.scalar_type();
  }
  Problem p = check_args(checked);
  check_out(checked, p, out);
  at::Tensor target = out;
  if (impl) impl(checked, p, target);
}

void warmup(const at::Device& device) {
  if (device.is_cpu()) return;  // the CPU oracle has nothing to load
#ifdef FLYGEMM_WITH_GPU
  warmup_device(device);
#else
  TORCH_CHECK(false, "flygemm.warmup: this build of flygemm has no GPU backend (torch is a CPU build), got ",
              device);
#endif
}

namespace {
const std::optional<at::Tensor> kNone;

// One functional and one out-variant entry point per op, instantiated per backend.
template <GemmImpl impl>
struct Entry {
  static at::Tensor a16w16(const at::Tensor& a, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                           std::optional<at::ScalarType> out_dtype) {
    return run_functional({OpKind::a16w16, a, w, kNone, kNone, bias, out_dtype}, impl);
  }
  static void a16w16_out(const at::Tensor& a, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                         std::optional<at::ScalarType> out_dtype, const at::Tensor& out) {
    run_out({OpKind::a16w16, a, w, kNone, kNone, bias, out_dtype}, out, impl);
  }
  template <OpKind op>
  static at::Tensor scaled(const at::Tensor& a, const at::Tensor& w, const at::Tensor& a_scale,
                           const at::Tensor& w_scale, const std::optional<at::Tensor>& bias,
                           std::optional<at::ScalarType> out_dtype) {
    return run_functional({op, a, w, a_scale, w_scale, bias, out_dtype}, impl);
  }
  template <OpKind op>
  static void scaled_out(const at::Tensor& a, const at::Tensor& w, const at::Tensor& a_scale,
                         const at::Tensor& w_scale, const std::optional<at::Tensor>& bias,
                         std::optional<at::ScalarType> out_dtype, const at::Tensor& out) {
    run_out({op, a, w, a_scale, w_scale, bias, out_dtype}, out, impl);
  }
};

}  // namespace


}  // namespace flygemm

using flygemm::OpKind;

TORCH_LIBRARY(flygemm, m) {
  const char* kScaled = "(Tensor a, Tensor w, Tensor a_scale, Tensor w_scale, Tensor? bias=None, ScalarType? out_dtype=None)";
  const char* kScaledOut =
      "(Tensor a, Tensor w, Tensor a_scale, Tensor w_scale, Tensor? bias=None, ScalarType? out_dtype=None, *, Tensor(a!) out) -> ()";
  m.def("gemm_a16w16(Tensor a, Tensor w, Tensor? bias=None, ScalarType? out_dtype=None) -> Tensor");
  m.def("gemm_a16w16_out(Tensor a, Tensor w, Tensor? bias=None, ScalarType? out_dtype=None, *, Tensor(a!) out) -> ()");
  for (const char* name : {"gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"}) {
    m.def((std::string(name) + kScaled + " -> Tensor").c_str());
    m.def((std::string(name) + "_out" + kScaledOut).c_str());
  }
  // Weight layout conversion (views + one copy: works on every device, traced by torch.compile).
  m.def("preshuffle(Tensor w) -> Tensor", torch::dispatch(c10::DispatchKey::CompositeImplicitAutograd,
                                                           &flygemm::preshuffle));
  m.def("unshuffle(Tensor w) -> Tensor", torch::dispatch(c10::DispatchKey::CompositeImplicitAutograd,
                                                         &flygemm::unshuffle));
  // Introspection (no tensors: usable from any process, including C++ programs).
  m.def("_info() -> str", &flygemm::info_json);
  m.def("_warmup(Device device) -> ()", &flygemm::warmup);
  m.def("_explain(str op, int M, int N, int K, ScalarType in_dtype, ScalarType? out_dtype, str arch, "
        "str? w_layout=None, int? sm_count=None, str? device_name=None) -> str",
        &flygemm::explain_json);
}

#define FLYGEMM_REGISTER_BACKEND(m, IMPL)                                                          \
  do {                                                                                            \
    using E = flygemm::Entry<IMPL>;                                                               \
    m.impl("gemm_a16w16", &E::a16w16);                                                            \
    m.impl("gemm_a16w16_out", &E::a16w16_out);                                                    \
    m.impl("gemm_a8w8", &E::template scaled<OpKind::a8w8>);                                       \
    m.impl("gemm_a8w8_out", &E::template scaled_out<OpKind::a8w8>);                               \
    m.impl("gemm_a8w8_blockscale", &E::template scaled<OpKind::a8w8_blockscale>);                 \
    m.impl("gemm_a8w8_blockscale_out", &E::template scaled_out<OpKind::a8w8_blockscale>);         \
    m.impl("gemm_mxfp8", &E::template scaled<OpKind::mxfp8>);                                     \
    m.impl("gemm_mxfp8_out", &E::template scaled_out<OpKind::mxfp8>);                             \
    m.impl("gemm_mxfp4", &E::template scaled<OpKind::mxfp4>);                                     \
    m.impl("gemm_mxfp4_out", &E::template scaled_out<OpKind::mxfp4>);                             \
  } while (0)

TORCH_LIBRARY_IMPL(flygemm, CPU, m) { FLYGEMM_REGISTER_BACKEND(m, &flygemm::cpu_gemm); }

// Meta: the same checks, no computation (shapes are SymInts, so dynamic shapes trace).
TORCH_LIBRARY_IMPL(flygemm, Meta, m) { FLYGEMM_REGISTER_BACKEND(m, nullptr); }

#ifdef FLYGEMM_WITH_GPU
TORCH_LIBRARY_IMPL(flygemm, CUDA, m) { FLYGEMM_REGISTER_BACKEND(m, &flygemm::device_gemm); }
#endif
