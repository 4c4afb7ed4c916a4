// The CPU implementation of every op: the oracle that defines the contract's numbers.
// Operands are dequantized to fp32 exactly as the contract says, products are accumulated in
// fp32 (int8: exactly, through float64, which holds every int8 dot product of K < 2^38), the
// bias is added in fp32, and the result is rounded to the output dtype once.
#include "cpu_reference.h"

#include "layout.h"

namespace flygemm {
namespace {

// E8M0 byte b encodes 2^(b - 127); 255 is NaN. Built from the fp32 bit pattern so that every
// power of two is exact (b = 0 is the fp32 subnormal 2^-127).
at::Tensor decode_e8m0(const at::Tensor& s) {
  at::Tensor b = s.view(at::kByte).to(at::kInt);
  at::Tensor bits = at::where(b == 0, at::full({}, 0x00400000, b.options()), b.__lshift__(23));
  at::Tensor value = bits.view(at::kFloat);
  return at::where(b == 255, at::full({}, NAN, value.options()), value);
}

// e2m1 nibble -> value: sign bit 3, then {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
at::Tensor decode_fp4_pairs(const at::Tensor& packed) {
  static const float kE2m1[16] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f,
                                  -0.f, -0.5f, -1.f, -1.5f, -2.f, -3.f, -4.f, -6.f};
  at::Tensor table = at::from_blob(const_cast<float*>(kE2m1), {16}, at::kFloat).clone();
  at::Tensor bytes = packed.view(at::kByte).to(at::kLong);
  at::Tensor lo = table.index_select(0, (bytes & 0xF).flatten()).view(bytes.sizes());
  at::Tensor hi = table.index_select(0, bytes.__rshift__(4).flatten()).view(bytes.sizes());
  // Element 2j is the low nibble of byte j, element 2j+1 the high nibble.
  return at::stack({lo, hi}, -1).flatten(-2);
}

// Expands a [rows/br, cols/bc] block-scale grid to [rows, cols] (edges may be partial).
at::Tensor expand_blocks(const at::Tensor& scale, int64_t rows, int64_t cols, int64_t br, int64_t bc) {
  at::Tensor s = scale.repeat_interleave(br, 0).repeat_interleave(bc, 1);
  return s.slice(0, 0, rows).slice(1, 0, cols);
}

at::Tensor row_scale(const at::Tensor& s, int64_t rows) {
  return s.to(at::kFloat).reshape({-1, 1}).expand({rows, 1});
}

struct Dequantized {
  at::Tensor a, w;      // fp32 [M, K], [N, K] (or the raw int8 as float64 for exact sums)
  at::Tensor post_a, post_w;  // per-row scales applied after the dot product, or undefined
};

Dequantized dequantize(const OpArgs& args, const Problem& p) {
  const int64_t M = p.M.expect_int(), N = p.N.expect_int(), K = p.K.expect_int();
  at::Tensor w = plain_weight(args.w);
  Dequantized d;
  switch (p.op) {
    case OpKind::a16w16:
      d.a = args.a.to(at::kFloat);
      d.w = w.to(at::kFloat);
      break;
    case OpKind::a8w8: {
      const bool integer = p.in_dtype == at::kChar;
      d.a = args.a.to(integer ? at::kDouble : at::kFloat);
      d.w = w.to(integer ? at::kDouble : at::kFloat);
      d.post_a = row_scale(*args.a_scale, M);
      d.post_w = row_scale(*args.w_scale, N).reshape({1, N});
      break;
    }
    case OpKind::a8w8_blockscale:
      d.a = args.a.to(at::kFloat) * expand_blocks(args.a_scale->to(at::kFloat), M, K, 1, kBlockScale);
      d.w = w.to(at::kFloat) * expand_blocks(args.w_scale->to(at::kFloat), N, K, kBlockScale, kBlockScale);
      break;
    case OpKind::mxfp8:
      d.a = args.a.to(at::kFloat) * expand_blocks(decode_e8m0(*args.a_scale), M, K, 1, kMxBlock);
      d.w = w.to(at::kFloat) * expand_blocks(decode_e8m0(*args.w_scale), N, K, 1, kMxBlock);
      break;
    case OpKind::mxfp4:
      d.a = decode_fp4_pairs(args.a) * expand_blocks(decode_e8m0(*args.a_scale), M, K, 1, kMxBlock);
      d.w = decode_fp4_pairs(w) * expand_blocks(decode_e8m0(*args.w_scale), N, K, 1, kMxBlock);
      break;
  }
  return d;
}

}  // namespace

void cpu_gemm(const OpArgs& args, const Problem& p, at::Tensor& out) {
  if (p.M == 0 || p.N == 0) return;
  Dequantized d = dequantize(args, p);
  at::Tensor acc = at::matmul(d.a, d.w.t()).to(at::kFloat);
  if (d.post_a.defined()) acc = acc * d.post_a * d.post_w;
  if (args.bias && args.bias->defined()) acc = acc + args.bias->to(at::kFloat).reshape({1, -1});
  out.copy_(acc.to(p.out_dtype));
}

}  // namespace flygemm
