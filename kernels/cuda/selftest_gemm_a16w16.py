"""GPU self-test of gemm_a16w16 (CuTe DSL, sm_90a) outside the torch op.

Needs a CUDA GPU, torch with CUDA and g++ (no CuTe DSL, no nvcc). Takes build directories
written by `kernels/cuda/gemm_a16w16.py --out DIR` (or by its `build()`), links each one's
objects + adapter into a small shared library, loads it with ctypes and compares against
torch on fresh random data, with NaN-poisoned padding around the inputs and a sentinel-filled
guard region around the output (a missing write or an out-of-bounds write fails).

    python kernels/cuda/selftest_gemm_a16w16.py --build /tmp/x [/tmp/y ...] [--bench]
"""

import argparse
import ctypes
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[2]
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
TORCH_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
SENTINEL16 = 0x7FBD  # a NaN payload for both bf16 and fp16 bit patterns (exponent all ones)
SENTINEL32 = 0x7FBADBAD

SHIM = r"""
#include "csrc/launch.h"
// like build/kernels/<arch>/registry.cpp: the adapter is placed inside a namespace
namespace @IDENT@_ns {
#include "adapter.cpp"
}
extern "C" int selftest_load(int device, char* err, int err_len) {
  return @IDENT@_ns::@IDENT@_load(device, err, err_len);
}
extern "C" int selftest_launch(const void* a, const void* w, const void* bias, void* out,
                               long long M, long long N, long long K, long long lda,
                               long long ldo, int device, void* stream, char* err, int err_len) {
  flygemm::LaunchArgs args;
  args.a = a; args.w = w; args.bias = bias; args.out = out;
  args.M = M; args.N = N; args.K = K; args.lda = lda; args.ldo = ldo;
  args.bias_dtype = bias ? flygemm::DType::fp32 : flygemm::DType::none;
  args.device = device; args.stream = stream;
  return @IDENT@_ns::@IDENT@_launch(args, err, err_len);
}
"""


def build_shim(build_dir: pathlib.Path, work: pathlib.Path):
    info = json.loads((build_dir / "build.json").read_text())
    ident = info["ident"]
    src = work / f"shim_{ident}.cpp"
    src.write_text(SHIM.replace("@IDENT@", ident))
    so = work / f"libselftest_{ident}.so"
    cmd = (["g++", "-std=c++17", "-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", str(src),
            f"-I{build_dir}", f"-I{REPO}", f"-I{CUDA_HOME}/include"]
           + [str(build_dir / o) for o in info["objects"]]
           + [str(build_dir / l) for l in info["link_libs"]]
           + [f"-L{CUDA_HOME}/lib64"] + info["link_flags"] + ["-Wl,--no-undefined", "-o", str(so)])
    subprocess.run(cmd, check=True)
    lib = ctypes.CDLL(str(so))
    lib.selftest_load.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.selftest_launch.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_longlong] * 5 + [
        ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    return info, lib


class Kernel:
    def __init__(self, info, lib):
        self.info, self.lib = info, lib
        meta = info["meta"]
        self.in_dtype = TORCH_DTYPE[meta["in_dtype"]]
        self.out_dtype = TORCH_DTYPE[meta["out_dtype"]]
        self.name = info["name"]

    def load(self, device):
        err = ctypes.create_string_buffer(512)
        rc = self.lib.selftest_load(device, err, 512)
        if rc:
            raise RuntimeError(err.value.decode())

    def launch(self, a, w, bias, out, M, N, K, lda, ldo, check=True):
        err = ctypes.create_string_buffer(512)
        rc = self.lib.selftest_launch(
            a.data_ptr(), w.data_ptr(), bias.data_ptr() if bias is not None else None,
            out.data_ptr(), M, N, K, lda, ldo, out.device.index,
            torch.cuda.current_stream().cuda_stream, err, 512)
        if rc and check:
            raise RuntimeError(f"rc={rc}: {err.value.decode()}")
        return rc, err.value.decode()


def run_case(k: Kernel, M, N, K, pad_a=0, pad_o=0, with_bias=True, seed=0):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(seed)
    lda, ldo = K + pad_a, N + pad_o
    a_buf = torch.full((M, lda), float("nan"), device=dev, dtype=k.in_dtype)
    a = (torch.rand((M, K), device=dev, generator=g) * 2 - 1).to(k.in_dtype)
    a_buf[:, :K] = a
    # W [N, K] contiguous, followed by NaNs (a read past the end would poison the result)
    w_flat = torch.full((N * K + 4096,), float("nan"), device=dev, dtype=k.in_dtype)
    w = (torch.rand((N, K), device=dev, generator=g) * 2 - 1).to(k.in_dtype)
    w_flat[: N * K] = w.reshape(-1)
    bias = (torch.rand((N,), device=dev, generator=g) * 4 - 2) if with_bias else None

    # output rows 1..M of an (M + 2)-row buffer: row 0, row M+1, columns N..ldo-1 are guards
    ob = torch.empty((M + 2, ldo), device=dev, dtype=k.out_dtype)
    bits = ob.view(torch.int16 if ob.element_size() == 2 else torch.int32)
    bits.fill_(SENTINEL16 if ob.element_size() == 2 else SENTINEL32)
    out = ob[1: M + 1]
    k.launch(a_buf, w_flat, bias, out, M, N, K, lda, ldo)
    torch.cuda.synchronize()

    ref = a.double() @ w.double().t()
    if bias is not None:
        ref = ref + bias.double()
    ref_o = ref.to(k.out_dtype)
    got = out[:, :N]
    guard = torch.ones_like(bits, dtype=torch.bool)
    guard[1: M + 1, :N] = False
    sentinel = SENTINEL16 if ob.element_size() == 2 else SENTINEL32
    guard_bad = int(((bits != sentinel) & guard).sum())
    nan_bad = int(torch.isnan(got.float()).sum())
    # one rounding at the end: 1 ulp of the output type plus fp32 accumulation error
    rtol = {torch.bfloat16: 2 ** -7, torch.float16: 2 ** -10, torch.float32: 2 ** -18}[k.out_dtype]
    atol = rtol * math.sqrt(K) * 0.5 + 1e-6 * K
    diff = (got.double() - ref_o.double()).abs()
    tol = atol + rtol * ref_o.double().abs()
    n_bad = int((diff > tol).sum())
    ok = n_bad == 0 and guard_bad == 0 and nan_bad == 0
    print(f"  {'ok  ' if ok else 'FAIL'} M={M} N={N} K={K} lda={lda} ldo={ldo} bias={with_bias}: "
          f"max|diff|={float(diff.max()):.3g} bad={n_bad} nan={nan_bad} guard_writes={guard_bad}")
    return ok


CASES = [
    # (M, N, K, pad_a, pad_o, bias)
    (1, 1, 8, 0, 0, True), (1, 1, 8, 0, 7, False), (7, 13, 24, 8, 3, True),
    (64, 64, 64, 0, 0, False), (128, 128, 64, 0, 0, True), (127, 129, 72, 8, 8, True),
    (129, 257, 520, 16, 0, True), (1, 4096, 4096, 0, 0, True), (16, 2048, 7168, 0, 0, False),
    (300, 200, 1000, 24, 8, True), (1000, 1000, 64, 0, 0, True), (2048, 2048, 2048, 0, 0, True),
    (4096, 4096, 512, 0, 0, True), (5000, 3, 136, 8, 5, True), (3, 5000, 136, 0, 0, False),
    (8192, 1024, 256, 0, 0, True),
]


def bench(k: Kernel, shapes, iters=20):
    dev = torch.device("cuda")
    for (M, N, K) in shapes:
        a = torch.randn((M, K), device=dev).to(k.in_dtype)
        w = torch.randn((N, K), device=dev).to(k.in_dtype)
        out = torch.empty((M, N), device=dev, dtype=k.out_dtype)

        def ours():
            k.launch(a, w, None, out, M, N, K, K, N, check=False)

        def theirs():  # cuBLAS, output in the input dtype
            torch.mm(a, w.t())

        res = []
        for fn in (ours, theirs):
            for _ in range(3):
                fn()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            s.record()
            for _ in range(iters):
                fn()
            e.record()
            torch.cuda.synchronize()
            res.append(s.elapsed_time(e) * 1e3 / iters)
        tf = 2 * M * N * K / (res[0] * 1e-6) / 1e12
        print(f"  bench M={M} N={N} K={K}: {res[0]:.1f} us ({tf:.0f} TFLOP/s), "
              f"torch {res[1]:.1f} us, speedup {res[1] / res[0]:.2f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", nargs="+", required=True, help="build directories")
    ap.add_argument("--bench", action="store_true")
    args = ap.parse_args()
    assert torch.cuda.is_available(), "needs a CUDA GPU"
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in args.build:
            info, lib = build_shim(pathlib.Path(d), pathlib.Path(tmp))
            k = Kernel(info, lib)
            print(f"{k.name} ({info['meta'].get('tile_m')}x{info['meta'].get('tile_n')}"
                  f"x{info['meta'].get('tile_k')}, stages {info['meta'].get('stages')})")
            k.load(torch.cuda.current_device())
            for i, c in enumerate(CASES):
                failed += not run_case(k, *c, seed=i)
            # rejected arguments come back as an error, not a crash
            x = torch.zeros((8, 16), device="cuda", dtype=k.in_dtype)
            rc, msg = k.launch(x, x, None, torch.zeros((8, 16), device="cuda", dtype=k.out_dtype),
                               8, 8, 12, 16, 16, check=False)
            print(f"  {'ok  ' if rc else 'FAIL'} K=12 rejected: {msg}")
            failed += not rc
            if args.bench:
                bench(k, [(4096, 4096, 4096), (8192, 8192, 8192), (16, 4096, 4096),
                          (1, 16384, 7168)])
    print(f"{'PASS' if not failed else 'FAIL'}: {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
