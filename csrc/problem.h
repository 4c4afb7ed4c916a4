// Argument validation shared by every backend (CPU oracle, Meta, CUDA, ROCm): one place decides
// what a valid call is, so the backends cannot disagree about the contract.
#pragma once
#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "launch.h"

namespace flygemm {

enum class OpKind { a16w16, a8w8, a8w8_blockscale, mxfp8, mxfp4 };

const char* op_name(OpKind op);
std::optional<OpKind> op_from_name(const std::string& name);

// A dtype as Python spells it ("float32", "int8", "float8_e4m3fn"), for error messages.
std::string dtype_name(at::ScalarType t);

// Conversions between torch dtypes and the registry's plain codes.
DType to_dtype_code(at::ScalarType t);
const char* dtype_code_name(DType d);
std::optional<DType> dtype_code_from_name(const std::string& name);

// Elements per 16 bytes along K in the preshuffled layout (8 for 16-bit, 16 for 8-bit,
// 16 packed bytes = 32 values for fp4).
int64_t preshuffle_kp(at::ScalarType t);
constexpr int64_t kPreshuffleRows = 16;
constexpr int64_t kBlockScale = 128;  // blockscale block edge along K (and N for weights)
constexpr int64_t kMxBlock = 32;      // OCP MX block along K

struct OpArgs {
  OpKind op;
  const at::Tensor& a;
  const at::Tensor& w;
  const std::optional<at::Tensor>& a_scale;
  const std::optional<at::Tensor>& w_scale;
  const std::optional<at::Tensor>& bias;
  std::optional<at::ScalarType> out_dtype;
};

// The validated problem. Sizes are SymInts so the Meta kernels share this code.
struct Problem {
  OpKind op;
  c10::SymInt M, N, K;  // K in logical elements (fp4: 2 per byte)
  WeightLayout w_layout;
  at::ScalarType in_dtype;
  at::ScalarType out_dtype;
  ScaleKind a_scale_kind = ScaleKind::none;
  ScaleKind w_scale_kind = ScaleKind::none;
};

// Throws c10::Error (ValueError/TypeError in Python) naming op, argument, expected, actual.
Problem check_args(const OpArgs& args);
// Checks a caller-provided output against the problem (shape, dtype, device, row-major rows).
void check_out(const OpArgs& args, const Problem& p, const at::Tensor& out);

// The dtype of a caller-provided 'out' when out_dtype is not given (message names 'out').
void check_out_tensor_dtype(OpKind op, at::ScalarType t);

// Default output dtype and the allowed set, per the contract.
at::ScalarType default_out_dtype(OpKind op, at::ScalarType in_dtype);

}  // namespace flygemm
