// HIP runtime shim (csrc/rocm_runtime.cpp).
//
// The FlyDSL export objects call HIP module-API functions (hipModuleLoadData,
// hipModuleGetFunction, hipModuleLaunchKernel, ...). rocm_runtime.cpp defines those symbols,
// with hidden visibility so they bind only inside this library, as forwarders that dlopen
// libamdhip64.so on first use. The library therefore loads on machines without ROCm; a ROCm
// kernel called there fails with the message below instead of a loader error.
//
// Library lookup order: $FLYGEMM_HIP_LIBRARY (exact path, for tests); a libamdhip64 already
// loaded in the process (the one torch uses); libamdhip64.so / .so.7 / .so.6 on the loader
// path; $ROCM_PATH/lib and /opt/rocm/lib. A failed attempt is retried on the next call.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// HIP error code returned by every forwarder when libamdhip64 cannot be loaded
// (hipErrorSharedObjectInitFailed).
#define FLYGEMM_HIP_LOAD_FAILED 303

// 1 when libamdhip64 is (or can now be) loaded, else 0.
int flygemm_rocm_hip_available(void);

// "flygemm: ROCm kernel called but libamdhip64.so could not be loaded: <dlerror>", or "" when
// loaded. The pointer stays valid until the next load attempt.
const char* flygemm_rocm_hip_load_error(void);

// Writes "<what> failed: <reason>" into err (NUL-terminated, at most err_len bytes) for a
// nonzero code returned by a HIP call or a FlyDSL export entry (-1: module not initialized,
// -2: module not loaded on the current device). Returns `code` (or -1 when code is 0).
int flygemm_rocm_format_error(int code, const char* what, char* err, int err_len);

// Device arch of `device` ("gfx942", "gfx950", ...; features such as ":sramecc+" dropped) from
// hipGetDeviceProperties. Returns 0 on success, else a HIP error code with the reason in out.
int flygemm_rocm_device_arch(int device, char* out, int out_len);

#ifdef __cplusplus
}
#endif
