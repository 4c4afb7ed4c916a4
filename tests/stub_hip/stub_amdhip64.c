/* Stub HIP runtime for tests: built by the tests (gcc -shared -fPIC) into a temporary
 * directory as libamdhip64.so and selected with FLYGEMM_HIP_LIBRARY=<path>.
 *
 * It implements the HIP module-API functions the flygemm ROCm shim forwards (and the device
 * queries), runs no kernel, and appends one JSON object per call to the file named by
 * FLYGEMM_STUB_LOG:
 *   hipModuleLoadData     code-object size, ELF e_machine / e_flags, the gfx target from
 *                         e_flags and from the AMDGPU metadata note, and the path of a copy of
 *                         the code object (<log>.co<N>.hsaco); loading an object whose target
 *                         differs from the device's fails with hipErrorNoBinaryForGpu (209),
 *                         as the real runtime does;
 *   hipModuleGetFunction  kernel name and its metadata (kernarg, LDS, scratch, registers, args);
 *                         an unknown name fails with hipErrorNotFound (500);
 *   hipModuleLaunchKernel grid, block, dynamic shared memory, stream, and the kernarg bytes
 *                         (packed from kernelParams with the metadata's arg offsets/sizes, as
 *                         HIP does, or taken from extra's HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
 * Environment:
 *   FLYGEMM_STUB_ARCH     device arch reported by hipGetDeviceProperties (default gfx942)
 *   FLYGEMM_STUB_DEVICES  device count (default 1)
 *   FLYGEMM_STUB_FAIL     name of one HIP function that returns hipErrorInvalidValue (1)
 * No HIP header is used; the types are declared here.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
#define OK 0
#define E_INVALID_VALUE 1
#define E_INVALID_DEVICE 101
#define E_INVALID_IMAGE 200
#define E_NO_BINARY_FOR_GPU 209
#define E_INVALID_HANDLE 400
#define E_NOT_FOUND 500

#define MAX_KERNELS 64
#define MAX_ARGS 64

/* Marker looked up by the shim's test-only probe. */
__attribute__((visibility("default"))) const int flygemm_stub_hip_marker = 1;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int g_device = 0;
static int g_last_error = 0;
static int g_module_count = 0;

typedef struct {
  uint32_t offset, size;
  char kind[48];
} Arg;

typedef struct {
  char name[256];
  char symbol[256];
  uint64_t kernarg_size, lds, scratch, vgpr, sgpr, agpr, wavefront;
  int nargs;
  Arg args[MAX_ARGS];
} KernelMeta;

typedef struct {
  int id;
  int device;
  char target[128];
  int nkernels;
  KernelMeta kernels[MAX_KERNELS];
} Module;

typedef struct {
  Module* module;
  KernelMeta* meta;
} Function;

/* ------------------------------------------------------------------------------------------ */
static const char* stub_arch(void) {
  const char* a = getenv("FLYGEMM_STUB_ARCH");
  return a && *a ? a : "gfx942";
}

static int stub_devices(void) {
  const char* d = getenv("FLYGEMM_STUB_DEVICES");
  int n = d ? atoi(d) : 1;
  return n > 0 ? n : 1;
}

static int should_fail(const char* fn) {
  const char* f = getenv("FLYGEMM_STUB_FAIL");
  return f && strcmp(f, fn) == 0;
}

static void logf_json(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_json(const char* fmt, ...) {
  const char* path = getenv("FLYGEMM_STUB_LOG");
  if (!path || !*path) return;
  pthread_mutex_lock(&g_mu);
  FILE* f = fopen(path, "a");
  if (f) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
  }
  pthread_mutex_unlock(&g_mu);
}

static hipError_t ret(hipError_t e) {
  if (e) g_last_error = e;
  return e;
}

/* ------------------------------------------------------------------------------------------ */
/* ELF + AMDGPU metadata (MessagePack) parsing                                                 */
/* ------------------------------------------------------------------------------------------ */
static uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t* p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t* p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static uint64_t be(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

static const char* mach_name(uint32_t mach) {
  switch (mach) {
    case 0x02c: return "gfx906";
    case 0x030: return "gfx908";
    case 0x03f: return "gfx90a";
    case 0x040: return "gfx940";
    case 0x04b: return "gfx941";
    case 0x04c: return "gfx942";
    case 0x04f: return "gfx950";
    default: return "unknown";
  }
}

/* Size of an ELF64 image from its header (section headers are last in LLD's output). */
static uint64_t elf_size(const uint8_t* img) {
  uint64_t shoff = rd64(img + 0x28);
  uint16_t shentsize = rd16(img + 0x3a), shnum = rd16(img + 0x3c);
  uint64_t end = shoff + (uint64_t)shentsize * shnum;
  uint64_t phoff = rd64(img + 0x20);
  uint16_t phentsize = rd16(img + 0x36), phnum = rd16(img + 0x38);
  for (int i = 0; i < shnum; ++i) {
    const uint8_t* sh = img + shoff + (uint64_t)i * shentsize;
    uint32_t type = rd32(sh + 4);
    uint64_t o = rd64(sh + 0x18), s = rd64(sh + 0x20);
    if (type != 8 /* NOBITS */ && o + s > end) end = o + s;
  }
  for (int i = 0; i < phnum; ++i) {
    const uint8_t* ph = img + phoff + (uint64_t)i * phentsize;
    uint64_t o = rd64(ph + 8), s = rd64(ph + 0x20);
    if (o + s > end) end = o + s;
  }
  return end;
}

typedef struct {
  const uint8_t* p;
  const uint8_t* end;
  int bad;
} Mp;

static int mp_need(Mp* m, size_t n) {
  if (m->bad || (size_t)(m->end - m->p) < n) {
    m->bad = 1;
    return 0;
  }
  return 1;
}

/* Reads a header; returns the type class: 'm' map, 'a' array, 's' str, 'b' bin, 'u' uint,
 * 'i' int, 'n' nil/bool, 'f' float; *len = count / length / value. */
static int mp_head(Mp* m, uint64_t* len) {
  if (!mp_need(m, 1)) return 0;
  uint8_t c = *m->p++;
  if (c <= 0x7f) { *len = c; return 'u'; }
  if (c >= 0xe0) { *len = (uint64_t)(int64_t)(int8_t)c; return 'i'; }
  if ((c & 0xf0) == 0x80) { *len = c & 0x0f; return 'm'; }
  if ((c & 0xf0) == 0x90) { *len = c & 0x0f; return 'a'; }
  if ((c & 0xe0) == 0xa0) { *len = c & 0x1f; return 's'; }
  int n = 0, t = 0;
  switch (c) {
    case 0xc0: case 0xc2: case 0xc3: *len = c == 0xc3; return 'n';
    case 0xc4: n = 1; t = 'b'; break;
    case 0xc5: n = 2; t = 'b'; break;
    case 0xc6: n = 4; t = 'b'; break;
    case 0xca: if (!mp_need(m, 4)) return 0; m->p += 4; *len = 0; return 'f';
    case 0xcb: if (!mp_need(m, 8)) return 0; m->p += 8; *len = 0; return 'f';
    case 0xcc: n = 1; t = 'u'; break;
    case 0xcd: n = 2; t = 'u'; break;
    case 0xce: n = 4; t = 'u'; break;
    case 0xcf: n = 8; t = 'u'; break;
    case 0xd0: n = 1; t = 'i'; break;
    case 0xd1: n = 2; t = 'i'; break;
    case 0xd2: n = 4; t = 'i'; break;
    case 0xd3: n = 8; t = 'i'; break;
    case 0xd9: n = 1; t = 's'; break;
    case 0xda: n = 2; t = 's'; break;
    case 0xdb: n = 4; t = 's'; break;
    case 0xdc: n = 2; t = 'a'; break;
    case 0xdd: n = 4; t = 'a'; break;
    case 0xde: n = 2; t = 'm'; break;
    case 0xdf: n = 4; t = 'm'; break;
    default: m->bad = 1; return 0;
  }
  if (!mp_need(m, (size_t)n)) return 0;
  *len = be(m->p, n);
  m->p += n;
  return t;
}

static void mp_skip(Mp* m) {
  uint64_t len;
  int t = mp_head(m, &len);
  if (t == 's' || t == 'b') {
    if (mp_need(m, len)) m->p += len;
  } else if (t == 'a') {
    for (uint64_t i = 0; i < len && !m->bad; ++i) mp_skip(m);
  } else if (t == 'm') {
    for (uint64_t i = 0; i < 2 * len && !m->bad; ++i) mp_skip(m);
  }
}

/* Reads a string into buf (truncated); returns 1 when the next item was a string. */
static int mp_str(Mp* m, char* buf, size_t cap) {
  const uint8_t* save = m->p;
  uint64_t len;
  if (mp_head(m, &len) != 's' || !mp_need(m, len)) {
    m->p = save;
    mp_skip(m);
    return 0;
  }
  size_t n = len < cap - 1 ? (size_t)len : cap - 1;
  memcpy(buf, m->p, n);
  buf[n] = 0;
  m->p += len;
  return 1;
}

static uint64_t mp_uint(Mp* m) {
  const uint8_t* save = m->p;
  uint64_t v;
  int t = mp_head(m, &v);
  if (t != 'u' && t != 'i') {
    m->p = save;
    mp_skip(m);
    return 0;
  }
  return v;
}

static void parse_args(Mp* m, KernelMeta* k) {
  uint64_t n;
  if (mp_head(m, &n) != 'a') { m->bad = 1; return; }
  for (uint64_t i = 0; i < n && !m->bad; ++i) {
    uint64_t fields;
    if (mp_head(m, &fields) != 'm') { m->bad = 1; return; }
    Arg a;
    memset(&a, 0, sizeof(a));
    for (uint64_t f = 0; f < fields && !m->bad; ++f) {
      char key[64];
      if (!mp_str(m, key, sizeof(key))) { mp_skip(m); continue; }
      if (!strcmp(key, ".offset")) a.offset = (uint32_t)mp_uint(m);
      else if (!strcmp(key, ".size")) a.size = (uint32_t)mp_uint(m);
      else if (!strcmp(key, ".value_kind")) mp_str(m, a.kind, sizeof(a.kind));
      else mp_skip(m);
    }
    if (k->nargs < MAX_ARGS) k->args[k->nargs++] = a;
  }
}

static void parse_kernel(Mp* m, KernelMeta* k) {
  uint64_t fields;
  memset(k, 0, sizeof(*k));
  if (mp_head(m, &fields) != 'm') { m->bad = 1; return; }
  for (uint64_t f = 0; f < fields && !m->bad; ++f) {
    char key[64];
    if (!mp_str(m, key, sizeof(key))) { mp_skip(m); continue; }
    if (!strcmp(key, ".name")) mp_str(m, k->name, sizeof(k->name));
    else if (!strcmp(key, ".symbol")) mp_str(m, k->symbol, sizeof(k->symbol));
    else if (!strcmp(key, ".kernarg_segment_size")) k->kernarg_size = mp_uint(m);
    else if (!strcmp(key, ".group_segment_fixed_size")) k->lds = mp_uint(m);
    else if (!strcmp(key, ".private_segment_fixed_size")) k->scratch = mp_uint(m);
    else if (!strcmp(key, ".vgpr_count")) k->vgpr = mp_uint(m);
    else if (!strcmp(key, ".sgpr_count")) k->sgpr = mp_uint(m);
    else if (!strcmp(key, ".agpr_count")) k->agpr = mp_uint(m);
    else if (!strcmp(key, ".wavefront_size")) k->wavefront = mp_uint(m);
    else if (!strcmp(key, ".args")) parse_args(m, k);
    else mp_skip(m);
  }
}

static void parse_metadata(const uint8_t* desc, size_t n, Module* mod) {
  Mp m = {desc, desc + n, 0};
  uint64_t fields;
  if (mp_head(&m, &fields) != 'm') return;
  for (uint64_t f = 0; f < fields && !m.bad; ++f) {
    char key[64];
    if (!mp_str(&m, key, sizeof(key))) { mp_skip(&m); continue; }
    if (!strcmp(key, "amdhsa.target")) {
      mp_str(&m, mod->target, sizeof(mod->target));
    } else if (!strcmp(key, "amdhsa.kernels")) {
      uint64_t nk;
      if (mp_head(&m, &nk) != 'a') return;
      for (uint64_t i = 0; i < nk && !m.bad; ++i) {
        if (mod->nkernels < MAX_KERNELS) parse_kernel(&m, &mod->kernels[mod->nkernels++]);
        else mp_skip(&m);
      }
    } else {
      mp_skip(&m);
    }
  }
}

/* Walks the SHT_NOTE sections for the NT_AMDGPU_METADATA (32) note of owner "AMDGPU". */
static void parse_notes(const uint8_t* img, uint64_t size, Module* mod) {
  uint64_t shoff = rd64(img + 0x28);
  uint16_t shentsize = rd16(img + 0x3a), shnum = rd16(img + 0x3c);
  if (shoff + (uint64_t)shentsize * shnum > size) return;
  for (int i = 0; i < shnum; ++i) {
    const uint8_t* sh = img + shoff + (uint64_t)i * shentsize;
    if (rd32(sh + 4) != 7 /* SHT_NOTE */) continue;
    uint64_t o = rd64(sh + 0x18), s = rd64(sh + 0x20);
    if (o + s > size) continue;
    uint64_t p = o;
    while (p + 12 <= o + s) {
      uint32_t namesz = rd32(img + p), descsz = rd32(img + p + 4), type = rd32(img + p + 8);
      uint64_t name = p + 12, desc = name + ((namesz + 3u) & ~3u);
      if (desc + descsz > o + s) break;
      if (type == 32 && namesz >= 6 && memcmp(img + name, "AMDGPU", 6) == 0) parse_metadata(img + desc, descsz, mod);
      p = desc + ((descsz + 3u) & ~3u);
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* HIP API                                                                                    */
/* ------------------------------------------------------------------------------------------ */
hipError_t hipGetDeviceCount(int* count) {
  if (!count) return ret(E_INVALID_VALUE);
  *count = stub_devices();
  logf_json("{\"call\":\"hipGetDeviceCount\",\"count\":%d}", *count);
  return OK;
}

hipError_t hipGetDevice(int* device) {
  if (!device) return ret(E_INVALID_VALUE);
  if (should_fail("hipGetDevice")) return ret(E_INVALID_VALUE);
  *device = g_device;
  return OK;
}

hipError_t hipSetDevice(int device) {
  logf_json("{\"call\":\"hipSetDevice\",\"device\":%d}", device);
  if (device < 0 || device >= stub_devices()) return ret(E_INVALID_DEVICE);
  g_device = device;
  return OK;
}

hipError_t hipDeviceSynchronize(void) {
  logf_json("{\"call\":\"hipDeviceSynchronize\",\"device\":%d}", g_device);
  return OK;
}

hipError_t hipGetLastError(void) {
  hipError_t e = g_last_error;
  g_last_error = 0;
  return e;
}

const char* hipGetErrorName(hipError_t e) {
  switch (e) {
    case OK: return "hipSuccess";
    case E_INVALID_VALUE: return "hipErrorInvalidValue";
    case E_INVALID_DEVICE: return "hipErrorInvalidDevice";
    case E_INVALID_IMAGE: return "hipErrorInvalidImage";
    case E_NO_BINARY_FOR_GPU: return "hipErrorNoBinaryForGpu";
    case E_INVALID_HANDLE: return "hipErrorInvalidHandle";
    case E_NOT_FOUND: return "hipErrorNotFound";
    default: return "hipErrorUnknown";
  }
}

const char* hipGetErrorString(hipError_t e) { return hipGetErrorName(e); }

/* Writes a zeroed property struct with "Stub AMD device" as name and the arch string as
 * gcnArchName. The real hipDeviceProp_tR0600 is ~1.5 KiB; the stub uses offset 1024 for
 * gcnArchName (consumers must not rely on the offset: the shim scans for the field). */
static hipError_t fill_props(void* prop, int device, const char* fn) {
  if (!prop) return ret(E_INVALID_VALUE);
  if (device < 0 || device >= stub_devices()) return ret(E_INVALID_DEVICE);
  memset(prop, 0, 1088);
  strcpy((char*)prop, "Stub AMD device");
  snprintf((char*)prop + 1024, 64, "%s:sramecc+:xnack-", stub_arch());
  logf_json("{\"call\":\"%s\",\"device\":%d,\"arch\":\"%s\"}", fn, device, stub_arch());
  return OK;
}

hipError_t hipGetDevicePropertiesR0600(void* prop, int device) {
  return fill_props(prop, device, "hipGetDevicePropertiesR0600");
}

hipError_t hipGetDeviceProperties(void* prop, int device) { return fill_props(prop, device, "hipGetDeviceProperties"); }

/* hipDeviceAttributeComputeCapabilityMajor (23) / Minor (61) follow the arch ("gfx942" -> 9, 4;
 * "gfx950" -> 9, 5); hipDeviceAttributeWarpSize (87) -> 64; MaxSharedMemoryPerBlock (74) ->
 * 64 KiB / 160 KiB; MultiprocessorCount (63) -> 304 / 256. */
hipError_t hipDeviceGetAttribute(int* value, int attr, int device) {
  if (!value) return ret(E_INVALID_VALUE);
  if (device < 0 || device >= stub_devices()) return ret(E_INVALID_DEVICE);
  const char* a = stub_arch();
  int gfx950 = strncmp(a, "gfx95", 5) == 0;
  size_t n = strlen(a);
  switch (attr) {
    case 23: *value = n >= 4 ? a[3] - '0' : 0; break;
    case 61: *value = n >= 5 ? (int)strtol((char[]){a[4], 0}, NULL, 16) : 0; break;
    case 87: *value = 64; break;
    case 74: *value = gfx950 ? 160 * 1024 : 64 * 1024; break;
    case 63: *value = gfx950 ? 256 : 304; break;
    default: *value = 0; break;
  }
  logf_json("{\"call\":\"hipDeviceGetAttribute\",\"attr\":%d,\"device\":%d,\"value\":%d}", attr, device, *value);
  return OK;
}

hipError_t hipModuleLoadData(void** module, const void* image) {
  if (!module || !image) return ret(E_INVALID_VALUE);
  const uint8_t* img = (const uint8_t*)image;
  if (memcmp(img, "\x7f" "ELF", 4) != 0 || img[4] != 2 /* ELFCLASS64 */) {
    logf_json("{\"call\":\"hipModuleLoadData\",\"rc\":%d,\"error\":\"not an ELF64 image\"}", E_INVALID_IMAGE);
    return ret(E_INVALID_IMAGE);
  }
  uint16_t machine = rd16(img + 0x12);
  uint32_t flags = rd32(img + 0x30);
  uint64_t size = elf_size(img);
  const char* mach = mach_name(flags & 0xff);
  Module* mod = (Module*)calloc(1, sizeof(Module));
  if (!mod) return ret(2);
  pthread_mutex_lock(&g_mu);
  mod->id = ++g_module_count;
  pthread_mutex_unlock(&g_mu);
  mod->device = g_device;
  parse_notes(img, size, mod);

  char file[4096] = "";
  const char* log = getenv("FLYGEMM_STUB_LOG");
  if (log && *log) {
    snprintf(file, sizeof(file), "%s.co%d.hsaco", log, mod->id);
    FILE* f = fopen(file, "wb");
    if (f) {
      fwrite(img, 1, (size_t)size, f);
      fclose(f);
    }
  }
  hipError_t rc = OK;
  if (machine != 224 /* EM_AMDGPU */) rc = E_INVALID_IMAGE;
  else if (strcmp(mach, stub_arch()) != 0) rc = E_NO_BINARY_FOR_GPU;
  else if (should_fail("hipModuleLoadData")) rc = E_INVALID_VALUE;
  logf_json(
      "{\"call\":\"hipModuleLoadData\",\"device\":%d,\"device_arch\":\"%s\",\"module\":%d,\"size\":%llu,"
      "\"e_machine\":%u,\"e_flags\":%u,\"mach\":\"%s\",\"target\":\"%s\",\"kernels\":%d,\"file\":\"%s\",\"rc\":%d}",
      g_device, stub_arch(), mod->id, (unsigned long long)size, machine, flags, mach, mod->target, mod->nkernels,
      file, rc);
  if (rc != OK) {
    free(mod);
    return ret(rc);
  }
  *module = mod;
  return OK;
}

hipError_t hipModuleUnload(void* module) {
  Module* mod = (Module*)module;
  if (!mod) return ret(E_INVALID_HANDLE);
  logf_json("{\"call\":\"hipModuleUnload\",\"module\":%d}", mod->id);
  free(mod);
  return OK;
}

hipError_t hipModuleGetFunction(void** function, void* module, const char* name) {
  Module* mod = (Module*)module;
  if (!function || !mod || !name) return ret(E_INVALID_VALUE);
  KernelMeta* k = NULL;
  for (int i = 0; i < mod->nkernels; ++i)
    if (!strcmp(mod->kernels[i].name, name)) k = &mod->kernels[i];
  hipError_t rc = k ? OK : E_NOT_FOUND;
  char args[4096] = "";
  if (k) {
    size_t o = 0;
    for (int i = 0; i < k->nargs && o < sizeof(args) - 80; ++i)
      o += (size_t)snprintf(args + o, sizeof(args) - o, "%s[%u,%u,\"%s\"]", i ? "," : "", k->args[i].offset,
                            k->args[i].size, k->args[i].kind);
  }
  logf_json(
      "{\"call\":\"hipModuleGetFunction\",\"module\":%d,\"name\":\"%s\",\"rc\":%d,\"kernarg_segment_size\":%llu,"
      "\"group_segment_fixed_size\":%llu,\"private_segment_fixed_size\":%llu,\"vgpr_count\":%llu,"
      "\"sgpr_count\":%llu,\"agpr_count\":%llu,\"wavefront_size\":%llu,\"args\":[%s]}",
      mod->id, name, rc, k ? (unsigned long long)k->kernarg_size : 0ull, k ? (unsigned long long)k->lds : 0ull,
      k ? (unsigned long long)k->scratch : 0ull, k ? (unsigned long long)k->vgpr : 0ull,
      k ? (unsigned long long)k->sgpr : 0ull, k ? (unsigned long long)k->agpr : 0ull,
      k ? (unsigned long long)k->wavefront : 0ull, args);
  if (!k) return ret(rc);
  Function* fn = (Function*)calloc(1, sizeof(Function));
  if (!fn) return ret(2);
  fn->module = mod;
  fn->meta = k;
  *function = fn;
  return OK;
}

#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void*)0x02)
#define HIP_LAUNCH_PARAM_END ((void*)0x03)

hipError_t hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, void* stream, void** params, void** extra) {
  Function* fn = (Function*)f;
  if (!fn) return ret(E_INVALID_HANDLE);
  KernelMeta* k = fn->meta;
  uint8_t buf[4096];
  size_t size = 0;
  const char* via = "none";
  memset(buf, 0, sizeof(buf));
  hipError_t rc = OK;
  if (params) {
    via = "kernelParams";
    int explicit_index = 0;
    for (int i = 0; i < k->nargs; ++i) {
      if (!strncmp(k->args[i].kind, "hidden_", 7)) continue; /* filled by the runtime */
      const void* src = params[explicit_index++];
      if (k->args[i].offset + k->args[i].size <= sizeof(buf) && src)
        memcpy(buf + k->args[i].offset, src, k->args[i].size);
    }
    size = k->kernarg_size;
  } else if (extra) {
    via = "extra";
    const void* ptr = NULL;
    size_t n = 0;
    for (int i = 0; extra[i] != HIP_LAUNCH_PARAM_END && i < 16; i += 2) {
      if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER) ptr = extra[i + 1];
      else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE) n = *(const size_t*)extra[i + 1];
    }
    if (ptr && n <= sizeof(buf)) {
      memcpy(buf, ptr, n);
      size = n;
    } else {
      rc = E_INVALID_VALUE;
    }
  }
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (uint64_t)bx * by * bz > 1024)
    rc = E_INVALID_VALUE;
  if (should_fail("hipModuleLaunchKernel")) rc = E_INVALID_VALUE;
  char hex[2 * sizeof(buf) + 1];
  for (size_t i = 0; i < size; ++i) snprintf(hex + 2 * i, 3, "%02x", buf[i]);
  hex[2 * size] = 0;
  logf_json(
      "{\"call\":\"hipModuleLaunchKernel\",\"device\":%d,\"module\":%d,\"name\":\"%s\",\"grid\":[%u,%u,%u],"
      "\"block\":[%u,%u,%u],\"shared\":%u,\"stream\":%llu,\"via\":\"%s\",\"kernarg_size\":%zu,"
      "\"kernarg_segment_size\":%llu,\"kernarg\":\"%s\",\"rc\":%d}",
      g_device, fn->module->id, k->name, gx, gy, gz, bx, by, bz, shared, (unsigned long long)(uintptr_t)stream, via,
      size, (unsigned long long)k->kernarg_size, hex, rc);
  return ret(rc);
}
