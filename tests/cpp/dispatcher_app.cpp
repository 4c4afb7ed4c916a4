// Calls every flygemm op from C++ through the dispatcher (no Python) on CPU tensors and
// compares with an at::matmul reference computed here from independently dequantized
// operands. Prints "OK" and exits 0 on success; prints FAIL lines and exits nonzero otherwise.
//
//   dispatcher_app           the program is linked with flygemm::flygemm: the ops must already
//                            be registered when main() starts (that is what the link is for).
//   dispatcher_app --load    call flygemm::load() first (dlopen of the configured library path).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <flygemm/load.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace {

using Opt = std::optional<at::Tensor>;
using OptType = std::optional<at::ScalarType>;
using A16W16 = at::Tensor(const at::Tensor&, const at::Tensor&, const Opt&, OptType);
using A16W16Out = void(const at::Tensor&, const at::Tensor&, const Opt&, OptType, const at::Tensor&);
using Scaled = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const Opt&,
                          OptType);
using ScaledOut = void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, const Opt&,
                       OptType, const at::Tensor&);

template <typename Sig>
c10::TypedOperatorHandle<Sig> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

int failures = 0;

// out (rounded once to its dtype by the op) against the fp32 reference: within rounding of
// the output dtype plus a small absolute slack for the different fp32 summation order.
void check(const std::string& what, const at::Tensor& out, const at::Tensor& ref32, at::ScalarType want_dtype) {
  bool ok = out.scalar_type() == want_dtype && out.sizes() == ref32.sizes();
  double err = -1, scale = ref32.abs().max().item<double>();
  if (ok) {
    const double rel = want_dtype == at::kBFloat16 ? 1.0 / 128 : want_dtype == at::kHalf ? 1.0 / 1024 : 1e-5;
    at::Tensor diff = (out.to(at::kFloat) - ref32).abs();
    at::Tensor tol = ref32.abs() * rel + 1e-5 * scale + 1e-6;
    ok = diff.le(tol).all().item<bool>() && !out.isnan().any().item<bool>();
    err = diff.max().item<double>();
  }
  std::printf("%s %s: out %s %s, max |err| %.3g (max |ref| %.3g)\n", ok ? "ok  " : "FAIL", what.c_str(),
              std::string(c10::toString(out.scalar_type())).c_str(), c10::str(out.sizes()).c_str(), err, scale);
  if (!ok) ++failures;
}

void check_equal(const std::string& what, const at::Tensor& a, const at::Tensor& b) {
  bool ok = a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && at::equal(a, b);
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// Reference dequantization, written independently of flygemm's code.
at::Tensor e8m0_to_float(const at::Tensor& s) {  // byte b -> 2^(b-127) (exact: build fp32 bits)
  at::Tensor bits = s.view(at::kByte).to(at::kInt);
  return at::bitwise_left_shift(bits, 23).view(at::kFloat);
}

at::Tensor e2m1_to_float(const at::Tensor& q) {  // [R, K/2] packed -> [R, K], low nibble first
  static const float kMag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  float table[16];
  for (int i = 0; i < 16; ++i) table[i] = (i & 8) ? -kMag[i & 7] : kMag[i & 7];
  at::Tensor lut = at::from_blob(table, {16}, at::kFloat).clone();
  at::Tensor b = q.view(at::kByte).to(at::kLong);
  at::Tensor codes = at::stack({b.bitwise_and(15), b.bitwise_right_shift(4)}, -1).reshape({q.size(0), -1});
  return lut.index_select(0, codes.flatten()).view(codes.sizes());
}

at::Tensor expand_mx(const at::Tensor& scale, int64_t K) {  // [R, K/32] e8m0 -> [R, K] fp32
  return e8m0_to_float(scale).repeat_interleave(32, 1).narrow(1, 0, K);
}

at::Tensor ref_gemm(const at::Tensor& a32, const at::Tensor& w32, const Opt& bias) {
  at::Tensor r = at::matmul(a32, w32.t());
  return bias ? r + bias->to(at::kFloat) : r;
}

at::Tensor rand_bytes(int64_t r, int64_t c, int lo, int hi) {
  return at::randint(lo, hi + 1, {r, c}, at::TensorOptions().dtype(at::kByte));
}

void test_a16w16() {
  const int64_t M = 37, N = 96, K = 160;
  at::Tensor a = at::randn({M, K}).to(at::kBFloat16);
  at::Tensor w = at::randn({N, K}).to(at::kBFloat16);
  at::Tensor bias = at::randn({N});
  auto gemm = op<A16W16>("flygemm::gemm_a16w16");
  at::Tensor ref = ref_gemm(a.to(at::kFloat), w.to(at::kFloat), bias);
  at::Tensor out = gemm.call(a, w, bias, std::nullopt);
  check("gemm_a16w16 bf16 + bias", out, ref, at::kBFloat16);
  check("gemm_a16w16 out_dtype=fp32", gemm.call(a, w, bias, at::kFloat), ref, at::kFloat);
  at::Tensor ah = a.to(at::kHalf), wh = w.to(at::kHalf);
  check("gemm_a16w16 fp16", gemm.call(ah, wh, std::nullopt, std::nullopt),
        ref_gemm(ah.to(at::kFloat), wh.to(at::kFloat), std::nullopt), at::kHalf);

  // _out into rows padded to N + 8 (stride(0) > N); the padding must stay untouched.
  at::Tensor storage = at::full({M, N + 8}, NAN, at::TensorOptions().dtype(at::kBFloat16));
  at::Tensor view = storage.narrow(1, 0, N);
  op<A16W16Out>("flygemm::gemm_a16w16_out").call(a, w, bias, std::nullopt, view);
  check_equal("gemm_a16w16_out (padded rows) == gemm_a16w16", view, out);
  check_equal("gemm_a16w16_out left the row padding alone", storage.narrow(1, N, 8).isnan().all(),
              at::ones({}, at::kBool));
}

void test_a8w8() {
  const int64_t M = 19, N = 64, K = 96;
  // fp8 e4m3fn, per-token activation scales and per-channel weight scales.
  at::Tensor a = (at::randn({M, K}) * 3).to(at::kFloat8_e4m3fn);
  at::Tensor w = (at::randn({N, K}) * 3).to(at::kFloat8_e4m3fn);
  at::Tensor as = at::rand({M}) + 0.25, ws = at::rand({N}) + 0.25;
  at::Tensor a32 = a.to(at::kFloat) * as.unsqueeze(1), w32 = w.to(at::kFloat) * ws.unsqueeze(1);
  auto gemm = op<Scaled>("flygemm::gemm_a8w8");
  at::Tensor out = gemm.call(a, w, as, ws, std::nullopt, std::nullopt);
  check("gemm_a8w8 fp8 per-token/per-channel", out, ref_gemm(a32, w32, std::nullopt), at::kBFloat16);
  at::Tensor bias = at::randn({N}).to(at::kHalf);
  check("gemm_a8w8 fp8 + fp16 bias, out_dtype=fp16", gemm.call(a, w, as, ws, bias, at::kHalf),
        ref_gemm(a32, w32, bias), at::kHalf);

  // int8, per-tensor scales, fp32 output.
  at::Tensor ai = at::randint(-127, 128, {M, K}, at::TensorOptions().dtype(at::kChar));
  at::Tensor wi = at::randint(-127, 128, {N, K}, at::TensorOptions().dtype(at::kChar));
  at::Tensor s1 = at::full({1}, 0.01f), s2 = at::full({1}, 0.02f);
  check("gemm_a8w8 int8 per-tensor, out_dtype=fp32", gemm.call(ai, wi, s1, s2, std::nullopt, at::kFloat),
        ref_gemm(ai.to(at::kFloat) * 0.01f, wi.to(at::kFloat) * 0.02f, std::nullopt), at::kFloat);

  at::Tensor o = at::empty({M, N}, at::TensorOptions().dtype(at::kBFloat16));
  op<ScaledOut>("flygemm::gemm_a8w8_out").call(a, w, as, ws, std::nullopt, std::nullopt, o);
  check_equal("gemm_a8w8_out == gemm_a8w8", o, out);
}

void test_blockscale() {
  const int64_t M = 9, N = 160, K = 320;  // partial last blocks along N and K
  const int64_t kb = (K + 127) / 128, nb = (N + 127) / 128;
  at::Tensor a = (at::randn({M, K}) * 2).to(at::kFloat8_e4m3fn);
  at::Tensor w = (at::randn({N, K}) * 2).to(at::kFloat8_e4m3fn);
  at::Tensor as = at::rand({M, kb}) + 0.25, ws = at::rand({nb, kb}) + 0.25;
  at::Tensor a32 = a.to(at::kFloat) * as.repeat_interleave(128, 1).narrow(1, 0, K);
  at::Tensor w32 = w.to(at::kFloat) *
                   ws.repeat_interleave(128, 0).narrow(0, 0, N).repeat_interleave(128, 1).narrow(1, 0, K);
  at::Tensor bias = at::randn({N});
  check("gemm_a8w8_blockscale + bias",
        op<Scaled>("flygemm::gemm_a8w8_blockscale").call(a, w, as, ws, bias, std::nullopt),
        ref_gemm(a32, w32, bias), at::kBFloat16);
}

void test_mxfp8() {
  const int64_t M = 13, N = 48, K = 128;
  at::Tensor a = (at::randn({M, K}) * 4).to(at::kFloat8_e4m3fn);
  at::Tensor w = (at::randn({N, K}) * 4).to(at::kFloat8_e4m3fn);
  at::Tensor as = rand_bytes(M, K / 32, 120, 132).view(at::kFloat8_e8m0fnu);
  at::Tensor ws = rand_bytes(N, K / 32, 120, 132).view(at::kFloat8_e8m0fnu);
  at::Tensor a32 = a.to(at::kFloat) * expand_mx(as, K), w32 = w.to(at::kFloat) * expand_mx(ws, K);
  check("gemm_mxfp8", op<Scaled>("flygemm::gemm_mxfp8").call(a, w, as, ws, std::nullopt, std::nullopt),
        ref_gemm(a32, w32, std::nullopt), at::kBFloat16);
}

void test_mxfp4() {
  const int64_t M = 11, N = 64, K = 256;
  at::Tensor a = rand_bytes(M, K / 2, 0, 255).view(at::kFloat4_e2m1fn_x2);
  at::Tensor w = rand_bytes(N, K / 2, 0, 255).view(at::kFloat4_e2m1fn_x2);
  at::Tensor as = rand_bytes(M, K / 32, 122, 131).view(at::kFloat8_e8m0fnu);
  at::Tensor ws = rand_bytes(N, K / 32, 122, 131).view(at::kFloat8_e8m0fnu);
  at::Tensor a32 = e2m1_to_float(a) * expand_mx(as, K), w32 = e2m1_to_float(w) * expand_mx(ws, K);
  at::Tensor ref = ref_gemm(a32, w32, std::nullopt);
  auto gemm = op<Scaled>("flygemm::gemm_mxfp4");
  at::Tensor out = gemm.call(a, w, as, ws, std::nullopt, std::nullopt);
  check("gemm_mxfp4", out, ref, at::kBFloat16);
  check("gemm_mxfp4 out_dtype=fp16", gemm.call(a, w, as, ws, std::nullopt, at::kHalf), ref, at::kHalf);
  at::Tensor o = at::empty({M, N}, at::TensorOptions().dtype(at::kBFloat16));
  op<ScaledOut>("flygemm::gemm_mxfp4_out").call(a, w, as, ws, std::nullopt, std::nullopt, o);
  check_equal("gemm_mxfp4_out == gemm_mxfp4", o, out);
}

void test_errors() {  // a bad call raises a c10::Error naming the op (not a crash)
  bool ok = false;
  try {
    at::Tensor a = at::randn({4, 32}).to(at::kBFloat16), w = at::randn({8, 16}).to(at::kBFloat16);
    op<A16W16>("flygemm::gemm_a16w16").call(a, w, std::nullopt, std::nullopt);
  } catch (const c10::Error& e) {
    ok = std::string(e.what()).find("gemm_a16w16") != std::string::npos;
  }
  std::printf("%s gemm_a16w16 with mismatched K raises c10::Error naming the op\n", ok ? "ok  " : "FAIL");
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  bool load = argc > 1 && std::strcmp(argv[1], "--load") == 0;
  try {
    if (load) {
      flygemm::load();
      std::printf("loaded %s with flygemm::load()\n", flygemm::library_path().c_str());
    } else if (!c10::Dispatcher::singleton().findSchema({"flygemm::gemm_a16w16", ""})) {
      std::printf("FAIL: flygemm::gemm_a16w16 is not registered at startup: the program is not linked "
                  "with flygemm's library (or the linker dropped it)\n");
      return 2;
    } else {
      std::printf("flygemm ops registered at startup (linked)\n");
    }
    auto info = c10::Dispatcher::singleton().findSchemaOrThrow("flygemm::_info", "").typed<std::string()>();
    std::printf("flygemm::_info: %s\n", info.call().c_str());

    at::manual_seed(0);
    test_a16w16();
    test_a8w8();
    test_blockscale();
    test_mxfp8();
    test_mxfp4();
    test_errors();
  } catch (const std::exception& e) {
    std::printf("FAIL: exception: %s\n", e.what());
    return 3;
  }
  if (failures) {
    std::printf("FAILED: %d check(s)\n", failures);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
