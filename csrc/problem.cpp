#include "problem.h"

#include <c10/util/Exception.h>

#include <sstream>

namespace flygemm {
namespace {

std::string shape_str(const at::Tensor& t) {
  std::ostringstream os;
  os << t.sym_sizes();
  return os.str();
}

std::string dtype_str(at::ScalarType t) { return dtype_name(t); }

bool is_fp8_e4m3(at::ScalarType t) {
  return t == at::kFloat8_e4m3fn || t == at::kFloat8_e4m3fnuz;
}

// Argument dtype check with the message format every check uses.
void expect_dtype(bool ok, OpKind op, const char* arg, const char* expected, at::ScalarType got) {
  TORCH_CHECK_TYPE(ok, "flygemm.", op_name(op), ": argument '", arg, "' must be ", expected,
                   ", got ", dtype_str(got));
}

void expect_same_device(OpKind op, const at::Tensor& a, const char* arg, const at::Tensor& t) {
  TORCH_CHECK_VALUE(t.device() == a.device(), "flygemm.", op_name(op), ": argument '", arg,
              "' must be on the same device as 'a' (", a.device(), "), got ", t.device());
}

// Logical K of one row of an [R, K]-like operand (fp4 packs two values per byte).
c10::SymInt logical_k(const at::Tensor& t, at::ScalarType dtype, int64_t dim) {
  c10::SymInt k = t.sym_size(dim);
  return dtype == at::kFloat4_e2m1fn_x2 ? k * 2 : k;
}

struct WeightShape {
  c10::SymInt N, K;
  WeightLayout layout;
};

WeightShape check_weight(OpKind op, const at::Tensor& w) {
  const at::ScalarType dt = w.scalar_type();
  if (w.dim() == 2) {
    return {w.sym_size(0), logical_k(w, dt, 1), WeightLayout::plain};
  }
  TORCH_CHECK_VALUE(w.dim() == 4, "flygemm.", op_name(op),
              ": argument 'w' must be 2-D [N, K] (plain) or 4-D [N/16, K/kp, 16, kp] "
              "(preshuffled), got ", w.dim(), "-D ", shape_str(w));
  const int64_t kp = preshuffle_kp(dt);
  TORCH_CHECK_VALUE(w.sym_size(2) == kPreshuffleRows && w.sym_size(3) == kp, "flygemm.", op_name(op),
              ": argument 'w' is 4-D so it must be preshuffled [N/16, K/", kp, ", 16, ", kp,
              "] for ", dtype_str(dt), ", got ", shape_str(w));
  TORCH_CHECK_VALUE(w.is_contiguous(), "flygemm.", op_name(op),
              ": argument 'w' (preshuffled) must be contiguous");
  c10::SymInt N = w.sym_size(0) * kPreshuffleRows;
  c10::SymInt k_stored = w.sym_size(1) * kp;
  c10::SymInt K = dt == at::kFloat4_e2m1fn_x2 ? k_stored * 2 : k_stored;
  return {N, K, WeightLayout::preshuffled};
}

void check_input_dtypes(OpKind op, at::ScalarType a, at::ScalarType w) {
  switch (op) {
    case OpKind::a16w16:
      expect_dtype(a == at::kBFloat16 || a == at::kHalf, op, "a", "bfloat16 or float16", a);
      break;
    case OpKind::a8w8:
      expect_dtype(is_fp8_e4m3(a) || a == at::kChar, op, "a",
                   "float8_e4m3fn, float8_e4m3fnuz or int8", a);
      break;
    case OpKind::a8w8_blockscale:
      expect_dtype(is_fp8_e4m3(a), op, "a", "float8_e4m3fn or float8_e4m3fnuz", a);
      break;
    case OpKind::mxfp8:
      expect_dtype(a == at::kFloat8_e4m3fn, op, "a", "float8_e4m3fn", a);
      break;
    case OpKind::mxfp4:
      expect_dtype(a == at::kFloat4_e2m1fn_x2, op, "a", "float4_e2m1fn_x2 (packed pairs)", a);
      break;
  }
  TORCH_CHECK_TYPE(w == a, "flygemm.", op_name(op), ": argument 'w' must have the same dtype as 'a' (",
                   dtype_str(a), "), got ", dtype_str(w),
                   (is_fp8_e4m3(a) && is_fp8_e4m3(w) ? " (fp8 flavours must not be mixed)" : ""));
}

// Scale of A or W for the per-tensor / per-row ops. rows = M or N.
ScaleKind check_row_scale(OpKind op, const char* arg, const at::Tensor& s, const c10::SymInt& rows) {
  expect_dtype(s.scalar_type() == at::kFloat, op, arg, "float32", s.scalar_type());
  const bool one = s.sym_numel() == 1 && s.dim() <= 2;
  if (one) return ScaleKind::per_tensor;
  const bool per_row = (s.dim() == 1 && s.sym_size(0) == rows) ||
                       (s.dim() == 2 && s.sym_size(0) == rows && s.sym_size(1) == 1);
  TORCH_CHECK_VALUE(per_row, "flygemm.", op_name(op), ": argument '", arg,
              "' must hold 1 value (per-tensor) or ", rows, " values as [", rows, "] or [", rows,
              ", 1] (per-row), got ", shape_str(s));
  return ScaleKind::per_row;
}

void check_2d_scale(OpKind op, const char* arg, const at::Tensor& s, at::ScalarType dtype,
                    const char* dtype_name, const c10::SymInt& rows, const c10::SymInt& cols,
                    const char* meaning) {
  expect_dtype(s.scalar_type() == dtype, op, arg, dtype_name, s.scalar_type());
  TORCH_CHECK_VALUE(s.dim() == 2 && s.sym_size(0) == rows && s.sym_size(1) == cols, "flygemm.",
              op_name(op), ": argument '", arg, "' must be [", rows, ", ", cols, "] (", meaning,
              "), got ", shape_str(s));
}

const at::Tensor& required(OpKind op, const char* arg, const std::optional<at::Tensor>& t) {
  TORCH_CHECK_VALUE(t.has_value() && t->defined(), "flygemm.", op_name(op), ": argument '", arg,
              "' is required");
  return *t;
}

void check_scales(const OpArgs& args, Problem& p) {
  const OpKind op = args.op;
  if (op == OpKind::a16w16) {
    TORCH_CHECK_VALUE(!(args.a_scale && args.a_scale->defined()) && !(args.w_scale && args.w_scale->defined()),
                "flygemm.gemm_a16w16 takes no scales");
    return;
  }
  const at::Tensor& sa = required(op, "a_scale", args.a_scale);
  const at::Tensor& sw = required(op, "w_scale", args.w_scale);
  expect_same_device(op, args.a, "a_scale", sa);
  expect_same_device(op, args.a, "w_scale", sw);
  switch (op) {
    case OpKind::a8w8:
      p.a_scale_kind = check_row_scale(op, "a_scale", sa, p.M);
      p.w_scale_kind = check_row_scale(op, "w_scale", sw, p.N);
      break;
    case OpKind::a8w8_blockscale: {
      c10::SymInt kb = (p.K + (kBlockScale - 1)) / kBlockScale;
      c10::SymInt nb = (p.N + (kBlockScale - 1)) / kBlockScale;
      check_2d_scale(op, "a_scale", sa, at::kFloat, "float32", p.M, kb, "1x128 blocks: [M, ceil(K/128)]");
      check_2d_scale(op, "w_scale", sw, at::kFloat, "float32", nb, kb,
                     "128x128 blocks: [ceil(N/128), ceil(K/128)]");
      p.a_scale_kind = p.w_scale_kind = ScaleKind::block;
      break;
    }
    case OpKind::mxfp8:
    case OpKind::mxfp4: {
      c10::SymInt kb = p.K / kMxBlock;
      check_2d_scale(op, "a_scale", sa, at::kFloat8_e8m0fnu, "float8_e8m0fnu", p.M, kb, "[M, K/32]");
      check_2d_scale(op, "w_scale", sw, at::kFloat8_e8m0fnu, "float8_e8m0fnu", p.N, kb, "[N, K/32]");
      p.a_scale_kind = p.w_scale_kind = ScaleKind::mx_e8m0;
      break;
    }
    case OpKind::a16w16:
      break;
  }
}

// The contract's output dtypes: bf16 and fp16 for every op, fp32 also for a16w16 and a8w8.
bool out_dtype_allowed(OpKind op, at::ScalarType out) {
  const bool wide = op == OpKind::a16w16 || op == OpKind::a8w8;
  return out == at::kBFloat16 || out == at::kHalf || (wide && out == at::kFloat);
}

const char* allowed_out_dtypes(OpKind op) {
  return op == OpKind::a16w16 || op == OpKind::a8w8 ? "bfloat16, float16 or float32" : "bfloat16 or float16";
}

void check_out_dtype(OpKind op, at::ScalarType out) {
  expect_dtype(out_dtype_allowed(op, out), op, "out_dtype", allowed_out_dtypes(op), out);
}

}  // namespace

std::string dtype_name(at::ScalarType t) {
  // Python's spelling (float32, int8, float8_e4m3fn), the names users write and the messages use.
  const auto names = c10::getDtypeNames(t);
  return names.first.empty() ? std::string(c10::toString(t)) : std::string(names.first);
}

void check_out_tensor_dtype(OpKind op, at::ScalarType t) {
  TORCH_CHECK_TYPE(out_dtype_allowed(op, t), "flygemm.", op_name(op), "_out: argument 'out' must be ",
                   allowed_out_dtypes(op), ", got ", dtype_str(t));
}

const char* op_name(OpKind op) {
  switch (op) {
    case OpKind::a16w16: return "gemm_a16w16";
    case OpKind::a8w8: return "gemm_a8w8";
    case OpKind::a8w8_blockscale: return "gemm_a8w8_blockscale";
    case OpKind::mxfp8: return "gemm_mxfp8";
    case OpKind::mxfp4: return "gemm_mxfp4";
  }
  return "?";
}

std::optional<OpKind> op_from_name(const std::string& name) {
  for (OpKind op : {OpKind::a16w16, OpKind::a8w8, OpKind::a8w8_blockscale, OpKind::mxfp8, OpKind::mxfp4}) {
    if (name == op_name(op)) return op;
  }
  return std::nullopt;
}

DType to_dtype_code(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return DType::bf16;
    case at::kHalf: return DType::fp16;
    case at::kFloat: return DType::fp32;
    case at::kFloat8_e4m3fn: return DType::fp8_e4m3fn;
    case at::kFloat8_e4m3fnuz: return DType::fp8_e4m3fnuz;
    case at::kChar: return DType::int8;
    case at::kFloat4_e2m1fn_x2: return DType::fp4_e2m1_x2;
    case at::kFloat8_e8m0fnu: return DType::e8m0;
    default: return DType::none;
  }
}

const char* dtype_code_name(DType d) {
  switch (d) {
    case DType::none: return "none";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
    case DType::fp8_e4m3fn: return "fp8_e4m3fn";
    case DType::fp8_e4m3fnuz: return "fp8_e4m3fnuz";
    case DType::int8: return "int8";
    case DType::fp4_e2m1_x2: return "fp4_e2m1_x2";
    case DType::e8m0: return "e8m0";
  }
  return "?";
}

std::optional<DType> dtype_code_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(DType::e8m0); ++i) {
    if (name == dtype_code_name(static_cast<DType>(i))) return static_cast<DType>(i);
  }
  return std::nullopt;
}

int64_t preshuffle_kp(at::ScalarType t) {
  const int64_t bytes = static_cast<int64_t>(c10::elementSize(t));
  return 16 / bytes;  // 16 bytes of storage elements (fp4: 16 packed bytes)
}

at::ScalarType default_out_dtype(OpKind op, at::ScalarType in_dtype) {
  return op == OpKind::a16w16 ? in_dtype : at::kBFloat16;
}

Problem check_args(const OpArgs& args) {
  const OpKind op = args.op;
  const at::Tensor& a = args.a;
  const at::Tensor& w = args.w;
  TORCH_CHECK_VALUE(a.defined() && w.defined(), "flygemm.", op_name(op), ": 'a' and 'w' are required");
  check_input_dtypes(op, a.scalar_type(), w.scalar_type());
  TORCH_CHECK_VALUE(a.dim() == 2, "flygemm.", op_name(op), ": argument 'a' must be 2-D [M, K], got ",
              a.dim(), "-D ", shape_str(a));
  expect_same_device(op, a, "w", w);

  Problem p{op, a.sym_size(0), 0, logical_k(a, a.scalar_type(), 1), WeightLayout::plain,
            a.scalar_type(), at::kBFloat16};
  WeightShape ws = check_weight(op, w);
  p.N = ws.N;
  p.w_layout = ws.layout;
  TORCH_CHECK_VALUE(ws.K == p.K, "flygemm.", op_name(op), ": K mismatch: 'a' ", shape_str(a),
              " has K = ", p.K, " but 'w' ", shape_str(w), " has K = ", ws.K);
  if (op == OpKind::mxfp8 || op == OpKind::mxfp4) {
    TORCH_CHECK_VALUE(p.K % kMxBlock == 0, "flygemm.", op_name(op),
                ": K must be a multiple of 32 (OCP MX blocks), got K = ", p.K);
  }
  p.out_dtype = args.out_dtype.value_or(default_out_dtype(op, p.in_dtype));
  check_out_dtype(op, p.out_dtype);
  check_scales(args, p);
  if (args.bias && args.bias->defined()) {
    const at::Tensor& b = *args.bias;
    expect_same_device(op, a, "bias", b);
    expect_dtype(b.scalar_type() == at::kFloat || b.scalar_type() == p.out_dtype, op, "bias",
                 (std::string("float32 or the output dtype (") + dtype_str(p.out_dtype) + ")").c_str(),
                 b.scalar_type());
    TORCH_CHECK_VALUE(b.dim() == 1 && b.sym_size(0) == p.N, "flygemm.", op_name(op),
                ": argument 'bias' must be [N] = [", p.N, "], got ", shape_str(b));
  }
  return p;
}

void check_out(const OpArgs& args, const Problem& p, const at::Tensor& out) {
  const OpKind op = args.op;
  expect_same_device(op, args.a, "out", out);
  if (args.out_dtype) {
    TORCH_CHECK_TYPE(*args.out_dtype == out.scalar_type(), "flygemm.", op_name(op),
                     "_out: out_dtype (", dtype_str(*args.out_dtype), ") disagrees with 'out' (",
                     dtype_str(out.scalar_type()), ")");
  }
  TORCH_CHECK_VALUE(out.dim() == 2 && out.sym_size(0) == p.M && out.sym_size(1) == p.N, "flygemm.",
              op_name(op), "_out: argument 'out' must be [M, N] = [", p.M, ", ", p.N, "], got ",
              shape_str(out));
  TORCH_CHECK_VALUE(out.sym_stride(1) == 1 || p.N <= 1, "flygemm.", op_name(op),
              "_out: argument 'out' must have unit stride along N (rows may be padded), got strides ",
              out.sym_strides());
  TORCH_CHECK_VALUE(out.sym_stride(0) >= p.N || p.M <= 1, "flygemm.", op_name(op),
              "_out: argument 'out' rows must not overlap (row stride >= N), got strides ",
              out.sym_strides());
}

}  // namespace flygemm
