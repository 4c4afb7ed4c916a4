#pragma once
#include <ATen/ATen.h>

#include <string>

#include "problem.h"

namespace flygemm {

// A backend's implementation: writes the result of a validated problem into `out`.
using GemmImpl = void (*)(const OpArgs& args, const Problem& p, at::Tensor& out);

at::Tensor run_functional(const OpArgs& args, GemmImpl impl);
void run_out(OpArgs args, const at::Tensor& out, GemmImpl impl);

// GPU backend (device_ops.cpp): CUDA or ROCm, picked by the tensor's device arch.
void device_gemm(const OpArgs& args, const Problem& p, at::Tensor& out);

// Introspection ops (dispatch.cpp).
std::string info_json();
std::string explain_json(const std::string& op, int64_t M, int64_t N, int64_t K, at::ScalarType in_dtype,
                         std::optional<at::ScalarType> out_dtype, const std::string& arch,
                         const std::optional<std::string>& w_layout, std::optional<int64_t> sm_count,
                         const std::optional<std::string>& device_name);

}  // namespace flygemm
