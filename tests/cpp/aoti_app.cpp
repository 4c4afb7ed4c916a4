// Runs an AOTInductor package (torch._inductor.aoti_compile_and_package) from C++ and compares
// its outputs with the expected ones written by tests/test_integration.py. The package's
// generated code calls torch.ops.flygemm.* through the dispatcher (AOTI proxy executor), so
// the ops must be registered: this program is linked with flygemm::flygemm.
//
//   aoti_app <package.pt2> <case_dir> [<case_dir> ...]
//
// A case directory holds manifest.txt with one line per tensor,
//   input|expected <file> <ScalarType name, e.g. BFloat16> <ndim> <size_0> ... <size_ndim-1>
// and each <file> holds the tensor's contiguous bytes (native byte order). Outputs must equal
// the expected tensors exactly (same dtype, shape and bits). Prints OK and exits 0 on success.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

at::ScalarType dtype_from_name(const std::string& name) {
  for (at::ScalarType t :
       {at::kFloat, at::kDouble, at::kHalf, at::kBFloat16, at::kByte, at::kChar, at::kInt, at::kLong, at::kBool,
        at::kFloat8_e4m3fn, at::kFloat8_e4m3fnuz, at::kFloat8_e5m2, at::kFloat8_e8m0fnu, at::kFloat4_e2m1fn_x2}) {
    if (name == c10::toString(t)) return t;
  }
  throw std::runtime_error("aoti_app: unknown dtype " + name);
}

at::Tensor read_tensor(const std::string& path, at::ScalarType dtype, const std::vector<int64_t>& sizes) {
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(dtype));
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error("aoti_app: cannot open " + path);
  const auto nbytes = static_cast<std::streamsize>(t.nbytes());
  if (f.tellg() != nbytes)
    throw std::runtime_error("aoti_app: " + path + " has " + std::to_string(f.tellg()) + " bytes, expected " +
                             std::to_string(nbytes));
  f.seekg(0);
  f.read(static_cast<char*>(t.data_ptr()), nbytes);
  return t;
}

struct Case {
  std::vector<at::Tensor> inputs, expected;
};

Case read_case(const std::string& dir) {
  std::ifstream manifest(dir + "/manifest.txt");
  if (!manifest) throw std::runtime_error("aoti_app: cannot open " + dir + "/manifest.txt");
  Case c;
  std::string line;
  while (std::getline(manifest, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string kind, file, dtype;
    int64_t ndim = 0;
    in >> kind >> file >> dtype >> ndim;
    std::vector<int64_t> sizes(ndim);
    for (auto& s : sizes) in >> s;
    if (!in || (kind != "input" && kind != "expected"))
      throw std::runtime_error("aoti_app: bad manifest line: " + line);
    (kind == "input" ? c.inputs : c.expected).push_back(read_tensor(dir + "/" + file, dtype_from_name(dtype), sizes));
  }
  return c;
}

std::string describe(const at::Tensor& t) {
  return std::string(c10::toString(t.scalar_type())) + c10::str(t.sizes());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <package.pt2> <case_dir> [<case_dir> ...]\n", argv[0]);
    return 2;
  }
  int failures = 0;
  try {
    if (!c10::Dispatcher::singleton().findSchema({"flygemm::gemm_a16w16", ""})) {
      std::printf("FAIL: flygemm ops are not registered (program not linked with flygemm's library)\n");
      return 2;
    }
    torch::inductor::AOTIModelPackageLoader loader(argv[1]);
    for (int i = 2; i < argc; ++i) {
      Case c = read_case(argv[i]);
      std::vector<at::Tensor> outs = loader.run(c.inputs);
      bool ok = outs.size() == c.expected.size();
      std::printf("case %s: %zu inputs (M=%lld), %zu outputs (expected %zu)\n", argv[i], c.inputs.size(),
                  c.inputs.empty() ? -1LL : static_cast<long long>(c.inputs[0].size(0)), outs.size(),
                  c.expected.size());
      for (size_t j = 0; ok && j < outs.size(); ++j) {
        const at::Tensor& o = outs[j];
        const at::Tensor& e = c.expected[j];
        bool same = o.scalar_type() == e.scalar_type() && o.sizes() == e.sizes() && at::equal(o.contiguous(), e);
        std::printf("  %s output %zu: %s, expected %s\n", same ? "ok  " : "FAIL", j, describe(o).c_str(),
                    describe(e).c_str());
        if (!same && o.sizes() == e.sizes() && o.is_floating_point() && e.is_floating_point())
          std::printf("    max |diff| %g\n", (o.to(at::kFloat) - e.to(at::kFloat)).abs().max().item<double>());
        ok = ok && same;
      }
      if (!ok) ++failures;
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: exception: %s\n", e.what());
    return 3;
  }
  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
