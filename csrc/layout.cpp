#include "layout.h"

#include "problem.h"

namespace flygemm {
namespace {

// Same-size integer dtype: the permutation moves storage elements, and copy kernels exist for
// integers of every width (they do not for fp4 / e8m0).
at::ScalarType bits_dtype(at::ScalarType t, const char* fn) {
  switch (c10::elementSize(t)) {
    case 1: return at::kByte;
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: TORCH_CHECK_TYPE(false, "flygemm.", fn, ": argument 'w' has no preshuffled layout for dtype ",
                              dtype_name(t), " (element size ", c10::elementSize(t), ")");
  }
}

}  // namespace

at::Tensor preshuffle(const at::Tensor& w) {
  TORCH_CHECK_VALUE(w.dim() == 2, "flygemm.preshuffle: argument 'w' must be 2-D [N, K], got ", w.dim(), "-D ",
              w.sym_sizes());
  bits_dtype(w.scalar_type(), "preshuffle");
  const int64_t kp = preshuffle_kp(w.scalar_type());
  const c10::SymInt N = w.sym_size(0), Ks = w.sym_size(1);
  TORCH_CHECK_VALUE(N % kPreshuffleRows == 0, "flygemm.preshuffle: N (rows of 'w') must be a multiple of 16, got ", N);
  TORCH_CHECK_VALUE(Ks % kp == 0, "flygemm.preshuffle: the row length of 'w' must be a multiple of ", kp,
              " storage elements (16 bytes) for ", dtype_name(w.scalar_type()), ", got ", Ks);
  const at::ScalarType t = w.scalar_type();
  return w.view(bits_dtype(t, "preshuffle"))
      .view_symint({N / kPreshuffleRows, kPreshuffleRows, Ks / kp, kp})
      .permute({0, 2, 1, 3})
      .contiguous()
      .view(t);
}

at::Tensor unshuffle(const at::Tensor& w) {
  bits_dtype(w.scalar_type(), "unshuffle");
  const int64_t kp = preshuffle_kp(w.scalar_type());
  TORCH_CHECK_VALUE(w.dim() == 4 && w.sym_size(2) == kPreshuffleRows && w.sym_size(3) == kp,
              "flygemm.unshuffle: argument 'w' must be preshuffled [N/16, K/", kp, ", 16, ", kp, "] for ",
              dtype_name(w.scalar_type()), ", got ", w.sym_sizes());
  const at::ScalarType t = w.scalar_type();
  return w.view(bits_dtype(t, "unshuffle"))
      .permute({0, 2, 1, 3})
      .reshape_symint({w.sym_size(0) * kPreshuffleRows, w.sym_size(1) * kp})
      .view(t);
}

at::Tensor plain_weight(const at::Tensor& w) { return w.dim() == 4 ? unshuffle(w) : w; }

}  // namespace flygemm
