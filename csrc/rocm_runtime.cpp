// HIP runtime shim: the HIP module-API symbols imported by the FlyDSL export objects, defined
// as lazy dlopen/dlsym forwarders to libamdhip64.so (see rocm_runtime.h), plus a test-only probe
// that drives a ROCm KernelRecord's load/launch against a stub HIP library.
//
// No HIP header is needed (or exists on the build machines): the few HIP types used are opaque
// pointers and int error codes, declared below. Compiled into every build of the library; the
// definitions have hidden visibility, so they satisfy the export objects' undefined references
// at link time but never interpose on a HIP runtime that torch (ROCm build) has loaded.
//
// Build variants: the default includes the torch test op (flygemm_testing::rocm_launch_probe);
// -DFLYGEMM_ROCM_SHIM_ONLY compiles only the shim and the torch-free C entry points (used by the
// standalone tests that link FlyDSL objects without the op library).
#include "rocm_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "launch.h"

#define FLYGEMM_HIDDEN __attribute__((visibility("hidden")))

namespace {

// ------------------------------------------------------------------------------------------
// HIP types (ABI-compatible declarations)
// ------------------------------------------------------------------------------------------
using hipError_t = int;  // enum hipError_t: int-sized
using hipModule_t = void*;
using hipFunction_t = void*;
using hipStream_t = void*;

constexpr hipError_t kHipSuccess = 0;
constexpr hipError_t kHipErrorSymbolNotFound = 302;  // hipErrorSharedObjectSymbolNotFound
constexpr hipError_t kHipErrorLoadFailed = FLYGEMM_HIP_LOAD_FAILED;

// ------------------------------------------------------------------------------------------
// Lazy loading of libamdhip64
// ------------------------------------------------------------------------------------------
struct HipLibrary {
  std::mutex mu;
  std::atomic<void*> handle{nullptr};
  std::string path;   // what was opened
  std::string error;  // last load failure ("" once loaded)
};

HipLibrary& lib() {
  static HipLibrary* l = new HipLibrary();  // never destroyed: forwarders may run at exit
  return *l;
}

void* try_open(const char* name, int flags, std::string& errors) {
  dlerror();
  void* h = dlopen(name, flags);
  if (!h && !(flags & RTLD_NOLOAD)) {
    const char* e = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += e ? e : name;
  }
  return h;
}

void* hip_handle() {
  HipLibrary& l = lib();
  void* h = l.handle.load(std::memory_order_acquire);
  if (h) return h;
  std::lock_guard<std::mutex> lock(l.mu);
  h = l.handle.load(std::memory_order_relaxed);
  if (h) return h;
  std::string errors;
  const char* forced = std::getenv("FLYGEMM_HIP_LIBRARY");
  if (forced && *forced) {
    h = try_open(forced, RTLD_NOW | RTLD_LOCAL, errors);
    if (h) l.path = forced;
  } else {
    // 1. A HIP runtime already in the process (torch ROCm): use that very copy.
    static const char* kNames[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
    for (const char* n : kNames) {
      if ((h = try_open(n, RTLD_NOW | RTLD_NOLOAD, errors))) {
        l.path = n;
        break;
      }
    }
    // 2. The loader path, then the usual install locations.
    if (!h) {
      for (const char* n : kNames) {
        if ((h = try_open(n, RTLD_NOW | RTLD_LOCAL, errors))) {
          l.path = n;
          break;
        }
      }
    }
    if (!h) {
      std::vector<std::string> dirs;
      if (const char* rp = std::getenv("ROCM_PATH")) dirs.push_back(std::string(rp) + "/lib/");
      dirs.push_back("/opt/rocm/lib/");
      for (const std::string& d : dirs) {
        std::string p = d + "libamdhip64.so";
        if ((h = try_open(p.c_str(), RTLD_NOW | RTLD_LOCAL, errors))) {
          l.path = p;
          break;
        }
      }
    }
  }
  if (h) {
    l.error.clear();
    l.handle.store(h, std::memory_order_release);
  } else {
    l.error = "flygemm: ROCm kernel called but libamdhip64.so could not be loaded: " + errors;
  }
  return h;
}

// Resolves `name` once (per call site slot); nullptr when the library or the symbol is missing.
void* resolve(std::atomic<void*>& slot, const char* name) {
  void* f = slot.load(std::memory_order_acquire);
  if (f) return f;
  void* h = hip_handle();
  if (!h) return nullptr;
  f = dlsym(h, name);
  if (f) slot.store(f, std::memory_order_release);
  return f;
}

// Library loaded but symbol absent vs. library absent.
hipError_t missing() { return lib().handle.load() ? kHipErrorSymbolNotFound : kHipErrorLoadFailed; }

void copy_str(char* dst, int len, const std::string& s) {
  if (!dst || len <= 0) return;
  size_t n = std::min(s.size(), static_cast<size_t>(len - 1));
  std::memcpy(dst, s.data(), n);
  dst[n] = 0;
}

const char* static_error_name(hipError_t e) {
  switch (e) {
    case 0: return "hipSuccess";
    case 1: return "hipErrorInvalidValue";
    case 2: return "hipErrorOutOfMemory";
    case 3: return "hipErrorNotInitialized";
    case 98: return "hipErrorInvalidDeviceFunction";
    case 100: return "hipErrorNoDevice";
    case 101: return "hipErrorInvalidDevice";
    case 200: return "hipErrorInvalidImage";
    case 209: return "hipErrorNoBinaryForGpu";
    case 302: return "hipErrorSharedObjectSymbolNotFound";
    case 303: return "hipErrorSharedObjectInitFailed";
    case 400: return "hipErrorInvalidHandle";
    case 500: return "hipErrorNotFound";
    case 701: return "hipErrorLaunchOutOfResources";
    case 719: return "hipErrorLaunchFailure";
    default: return "hipErrorUnknown";
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------
// Forwarders: exactly the HIP symbols the FlyDSL export objects import (`nm -u`), with C
// linkage and hidden visibility.
// ------------------------------------------------------------------------------------------
#define FLYGEMM_HIP_FORWARD(ret, name, params, args)                               \
  extern "C" FLYGEMM_HIDDEN ret name params {                                      \
    static std::atomic<void*> slot{nullptr};                                       \
    using Fn = ret(*) params;                                                      \
    auto real_fn = reinterpret_cast<Fn>(resolve(slot, #name));                     \
    if (!real_fn) return missing();                                           \
    return real_fn args;                                                           \
  }

FLYGEMM_HIP_FORWARD(hipError_t, hipGetDevice, (int* device), (device))
FLYGEMM_HIP_FORWARD(hipError_t, hipSetDevice, (int device), (device))
FLYGEMM_HIP_FORWARD(hipError_t, hipDeviceSynchronize, (void), ())
FLYGEMM_HIP_FORWARD(hipError_t, hipGetLastError, (void), ())
FLYGEMM_HIP_FORWARD(hipError_t, hipModuleLoadData, (hipModule_t* module, const void* image), (module, image))
FLYGEMM_HIP_FORWARD(hipError_t, hipModuleUnload, (hipModule_t module), (module))
FLYGEMM_HIP_FORWARD(hipError_t, hipModuleGetFunction, (hipFunction_t* function, hipModule_t module, const char* name),
                    (function, module, name))
FLYGEMM_HIP_FORWARD(hipError_t, hipModuleLaunchKernel,
                    (hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                     unsigned int by, unsigned int bz, unsigned int shared_bytes, hipStream_t stream,
                     void** kernel_params, void** extra),
                    (f, gx, gy, gz, bx, by, bz, shared_bytes, stream, kernel_params, extra))

// Never fails: used on error paths, also when HIP is absent.
extern "C" FLYGEMM_HIDDEN const char* hipGetErrorName(hipError_t error) {
  static std::atomic<void*> slot{nullptr};
  using Fn = const char* (*)(hipError_t);
  if (lib().handle.load(std::memory_order_acquire)) {
    if (auto f = reinterpret_cast<Fn>(resolve(slot, "hipGetErrorName"))) return f(error);
  }
  return static_error_name(error);
}

// ------------------------------------------------------------------------------------------
// C entry points (rocm_runtime.h)
// ------------------------------------------------------------------------------------------
extern "C" int flygemm_rocm_hip_available(void) { return hip_handle() != nullptr; }

extern "C" const char* flygemm_rocm_hip_load_error(void) {
  if (hip_handle()) return "";
  return lib().error.c_str();
}

extern "C" int flygemm_rocm_format_error(int code, const char* what, char* err, int err_len) {
  std::string msg = std::string(what ? what : "HIP call") + " failed: ";
  if (!hip_handle()) {
    msg += lib().error;
  } else if (code == -1) {
    msg += "FlyDSL AOT module not initialized (module_init was not called)";
  } else if (code == -2) {
    msg += "module not loaded on the current device (load it first, outside graph capture)";
  } else {
    msg += "HIP error " + std::to_string(code) + " (" + hipGetErrorName(code) + ")";
  }
  copy_str(err, err_len, msg);
  return code != 0 ? code : -1;
}

extern "C" int flygemm_rocm_device_arch(int device, char* out, int out_len) {
  void* h = hip_handle();
  if (!h) {
    copy_str(out, out_len, lib().error);
    return kHipErrorLoadFailed;
  }
  // hipGetDeviceProperties is a macro for hipGetDevicePropertiesR0600 since ROCm 6; older
  // runtimes export the plain name. The struct layout differs between them, so instead of
  // hard-coding the offset of gcnArchName, hand over a buffer larger than any version and
  // pick the NUL-delimited field that starts with "gfx" followed by hex digits.
  using Fn = hipError_t (*)(void*, int);
  auto f = reinterpret_cast<Fn>(dlsym(h, "hipGetDevicePropertiesR0600"));
  if (!f) f = reinterpret_cast<Fn>(dlsym(h, "hipGetDeviceProperties"));
  if (!f) {
    copy_str(out, out_len, "hipGetDeviceProperties not found in " + lib().path);
    return kHipErrorSymbolNotFound;
  }
  std::vector<char> buf(16384, 0);
  const hipError_t rc = f(buf.data(), device);
  if (rc != kHipSuccess) {
    copy_str(out, out_len, std::string("hipGetDeviceProperties failed: ") + hipGetErrorName(rc));
    return rc;
  }
  for (size_t i = 0; i + 4 < buf.size(); ++i) {
    if ((i == 0 || buf[i - 1] == 0) && std::memcmp(&buf[i], "gfx", 3) == 0) {
      size_t j = i + 3;
      while (j < buf.size() && std::isxdigit(static_cast<unsigned char>(buf[j]))) ++j;
      if (j > i + 3 && j < buf.size() && (buf[j] == 0 || buf[j] == ':')) {
        copy_str(out, out_len, std::string(&buf[i], j - i));
        return kHipSuccess;
      }
    }
  }
  copy_str(out, out_len, "no gcnArchName in hipDeviceProp_t");
  return 1;
}

namespace {
int dtype_bytes(flygemm::DType t) {
  switch (t) {
    case flygemm::DType::bf16:
    case flygemm::DType::fp16: return 2;
    case flygemm::DType::fp32: return 4;
    default: return 1;  // 8-bit and packed fp4 bytes
  }
}
}  // namespace

// Test-only: load and launch `rec` with fake, distinct, 16-byte aligned device pointers.
// Refuses to run unless the loaded HIP library is the stub (tests/stub_hip), so that it can
// never launch a kernel on real hardware with invalid pointers. a_scale_kind / w_scale_kind are
// flygemm::ScaleKind codes: when not none, the scale pointer is set (fake) with that kind;
// with_bias sets a fake fp32 bias pointer. A's row stride is a row of A (K, or K/2 bytes for
// packed fp4) rounded up to 16 bytes.
extern "C" int flygemm_rocm_probe_record_ex(const flygemm::KernelRecord* rec, int64_t M, int64_t N, int64_t K,
                                            int split_k, int a_scale_kind, int w_scale_kind, int with_bias,
                                            char* out, int out_len) {
  if (!rec) {
    copy_str(out, out_len, "no such kernel");
    return -1;
  }
  if (std::strncmp(rec->arch, "gfx", 3) != 0) {
    copy_str(out, out_len, std::string(rec->name) + " is not a ROCm kernel (arch " + rec->arch + ")");
    return -1;
  }
  void* h = hip_handle();
  if (!h) {
    copy_str(out, out_len, lib().error);
    return kHipErrorLoadFailed;
  }
  if (!dlsym(h, "flygemm_stub_hip_marker")) {
    copy_str(out, out_len, "rocm_launch_probe runs only against the stub HIP library (tests/stub_hip)");
    return -1;
  }
  int device = 0;
  if (hipGetDevice(&device) != kHipSuccess) device = 0;
  flygemm::LaunchArgs a;
  a.a = reinterpret_cast<const void*>(uintptr_t{0x7f1000000000});
  a.w = reinterpret_cast<const void*>(uintptr_t{0x7f2000000000});
  a.out = reinterpret_cast<void*>(uintptr_t{0x7f3000000000});
  a.bias = nullptr;
  if (with_bias) {
    a.bias = reinterpret_cast<const void*>(uintptr_t{0x7f7000000000});
    a.bias_dtype = flygemm::DType::fp32;
  }
  if (a_scale_kind != 0) {
    a.a_scale = reinterpret_cast<const void*>(uintptr_t{0x7f5000000000});
    a.a_scale_kind = static_cast<flygemm::ScaleKind>(a_scale_kind);
  }
  if (w_scale_kind != 0) {
    a.w_scale = reinterpret_cast<const void*>(uintptr_t{0x7f6000000000});
    a.w_scale_kind = static_cast<flygemm::ScaleKind>(w_scale_kind);
  }
  const int64_t per16 = 16 / dtype_bytes(rec->in_dtype);  // storage elements per 16 bytes
  const int64_t row = rec->in_dtype == flygemm::DType::fp4_e2m1_x2 ? K / 2 : K;  // storage elements
  a.M = M;
  a.N = N;
  a.K = K;
  a.lda = (row + per16 - 1) / per16 * per16;
  a.ldo = N;
  a.split_k = split_k;
  a.device = device;
  a.stream = reinterpret_cast<void*>(uintptr_t{0x5eed0000});
  if (split_k > 1) {
    a.M_pad = (M + rec->tile_m - 1) / rec->tile_m * rec->tile_m;
    a.workspace = reinterpret_cast<float*>(uintptr_t{0x7f4000000000});
  }
  char err[1024] = {0};
  int rc = rec->load(device, err, sizeof(err));
  if (rc != 0) {
    copy_str(out, out_len, std::string("load: ") + err);
    return rc;
  }
  rc = rec->launch(a, err, sizeof(err));
  if (rc != 0) {
    copy_str(out, out_len, std::string("launch: ") + err);
    return rc;
  }
  copy_str(out, out_len, "ok");
  return 0;
}

// The same without scales and bias (kept for callers of the original entry point).
extern "C" int flygemm_rocm_probe_record(const flygemm::KernelRecord* rec, int64_t M, int64_t N, int64_t K,
                                         int split_k, char* out, int out_len) {
  return flygemm_rocm_probe_record_ex(rec, M, N, K, split_k, 0, 0, 0, out, out_len);
}

#ifndef FLYGEMM_ROCM_SHIM_ONLY
// ------------------------------------------------------------------------------------------
// torch test ops (namespace flygemm_testing)
// ------------------------------------------------------------------------------------------
#include <torch/library.h>

#include "dispatch.h"
#include "registry.h"

namespace {

// `kernel_name` is a record name, or "name@arch" to pick the record of that arch when several
// arches use the same name.
const flygemm::KernelRecord* find_record(const std::string& kernel_name) {
  const size_t at = kernel_name.rfind('@');
  if (at == std::string::npos) return flygemm::find_kernel(kernel_name.c_str());
  const std::string name = kernel_name.substr(0, at), arch = kernel_name.substr(at + 1);
  for (const flygemm::KernelRecord* k : flygemm::linked_table().kernels)
    if (name == k->name && arch == k->arch) return k;
  return nullptr;
}

std::string rocm_launch_probe(const std::string& kernel_name, int64_t M, int64_t N, int64_t K, int64_t split_k,
                              int64_t a_scale_kind, int64_t w_scale_kind, bool bias) {
  const flygemm::KernelRecord* rec = find_record(kernel_name);
  if (!rec) return "no kernel named '" + kernel_name + "' in this build";
  char out[2048] = {0};
  flygemm_rocm_probe_record_ex(rec, M, N, K, static_cast<int>(split_k), static_cast<int>(a_scale_kind),
                               static_cast<int>(w_scale_kind), bias ? 1 : 0, out, sizeof(out));
  return out;
}

std::string rocm_device_arch(int64_t device) {
  char out[512] = {0};
  const int rc = flygemm_rocm_device_arch(static_cast<int>(device), out, sizeof(out));
  return rc == 0 ? std::string(out) : "error: " + std::string(out);
}

std::string json_escape(const char* s) {
  std::string o;
  for (; s && *s; ++s) {
    const char c = *s;
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o;
}

// JSON list of the ROCm kernel records linked into this build: name, arch, family, tiles,
// requirements and the build's meta JSON (a JSON object, embedded as is).
std::string rocm_kernels() {
  std::string o = "[";
  bool first = true;
  for (const flygemm::KernelRecord* k : flygemm::linked_table().kernels) {
    if (std::strncmp(k->arch, "gfx", 3) != 0) continue;
    if (!first) o += ",";
    first = false;
    o += "{\"name\":\"" + json_escape(k->name) + "\",\"arch\":\"" + json_escape(k->arch) + "\",\"family\":\"" +
         json_escape(k->family) + "\",\"tile\":[" + std::to_string(k->tile_m) + "," + std::to_string(k->tile_n) +
         "," + std::to_string(k->tile_k) + "],\"requires_k_multiple\":" + std::to_string(k->requires_k_multiple) +
         ",\"requires_n_multiple\":" + std::to_string(k->requires_n_multiple) +
         ",\"max_split_k\":" + std::to_string(k->max_split_k) + ",\"meta\":" +
         (k->meta_json && *k->meta_json ? std::string(k->meta_json) : std::string("{}")) + "}";
  }
  return o + "]";
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(flygemm_testing, m) {
  m.def(
      "rocm_launch_probe(str kernel_name, int M, int N, int K, int split_k, int a_scale_kind=0, "
      "int w_scale_kind=0, bool bias=False) -> str",
      &rocm_launch_probe);
  m.def("rocm_device_arch(int device) -> str", &rocm_device_arch);
  m.def("rocm_kernels() -> str", &rocm_kernels);
}
#endif  // FLYGEMM_ROCM_SHIM_ONLY
