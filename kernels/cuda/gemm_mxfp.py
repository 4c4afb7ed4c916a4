"""gemm_mxfp8 / gemm_mxfp4 for sm_90a beyond decode sizes: exact dequantization to bf16, then the
bf16 GEMM.

    out[m, n] = round_bf16( sum_k (A[m, k] * 2^(sa[m, k/32] - 127)) * (W[n, k] * 2^(sw[n, k/32] - 127))
                            + bias[n] )

Hopper has no MX tensor-core instructions. An fp8 wgmma could run the products, but the E8M0
scales change every 32 k per row and per column, so each 32-k step would need its own fp32
promotion of the whole accumulator (4x the blockscale kernel's promotion work, which already costs
it ~10%). Instead every MX value is rewritten as the bf16 number it denotes: an e4m3 value has 3
mantissa bits and an e2m1 value 1, so x * 2^e is exact in bf16 (same exponent range as fp32)
unless the fp32 oracle itself under- or overflows. The products then run on the bf16 wgmma
kernels (kernels/cuda/gemm_a16w16.py, picked by the bf16 dispatch rows for (M, N, K)), with fp32
accumulation. The decode sizes (M <= 16) keep kernels/cuda/gemm_splitk_decode.py, which reads the
MX bytes directly.

This file's kernel is that conversion. One record per MX op; its launch converts ONE operand:

    LaunchArgs.a        source rows (fp8 bytes, or fp4 pairs packed in bytes), row stride lda bytes
    LaunchArgs.a_scale  E8M0 bytes [M, K/32], contiguous
    LaunchArgs.out      bf16 [M, K], row stride ldo elements
    LaunchArgs.M, K     rows and logical K (N is not used)

csrc/device_ops.cpp calls it for A and for W (plain layout) into bf16 buffers from the caching
allocator ((M + N) * K * 2 bytes, released after the GEMM), then runs gemm_a16w16.

One thread converts one 32-element block: 32 (fp8) or 16 (fp4) bytes in with 16-byte loads, one
scale byte, 64 bytes out with 16-byte stores; neighbouring threads take neighbouring blocks of a
row, so warps read and write contiguous memory. e4m3 -> f16 (cvt, exact) -> fp32; e2m1 nibble ->
fp32 by bit arithmetic (kernels/cuda/_ptx.py); times 2^(e-127) in fp32 (exact, subnormals kept);
one bf16 rounding (exact except where fp32 itself under/overflows).

Requirements (checked by the C++ adapter): K % 32 == 0, source rows 16-byte aligned (lda bytes
% 16 == 0), out 16-byte aligned with ldo >= K and ldo % 8 == 0, M * K / 32 < 2^31.

Build-time entry point: `build(spec, out_dir)` (docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_mxfp.py --op gemm_mxfp4 --out /tmp/x`.
"""

import argparse
import hashlib
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _cute_export as cx  # noqa: E402
import _ptx as ptx  # noqa: E402

FAMILY = "gemm_mxfp"
THREADS = 256
MX_BLOCK = 32
# op -> (in_dtype code, source bytes per 32-element block)
_OPS = {"gemm_mxfp8": ("fp8_e4m3fn", 32), "gemm_mxfp4": ("fp4_e2m1_x2", 16)}


class Config:
    """One specialization: which MX format it converts (pure Python)."""

    def __init__(self, op, in_dtype=None, out_dtype="bf16"):
        if op not in _OPS:
            raise ValueError(f"{FAMILY}: unsupported op {op!r}; supported: {sorted(_OPS)}")
        want_in, self.block_bytes = _OPS[op]
        if in_dtype and in_dtype != want_in:
            raise ValueError(f"{FAMILY}: {op} needs in_dtype {want_in}, got {in_dtype}")
        if out_dtype != "bf16":
            raise ValueError(f"{FAMILY}: MX ops write bf16, got out_dtype {out_dtype}")
        self.op, self.in_dtype, self.out_dtype = op, want_in, out_dtype
        self.fp4 = op == "gemm_mxfp4"

    @staticmethod
    def from_spec(spec: dict) -> "Config":
        return Config(spec["op"], spec.get("in_dtype") or None, spec.get("out_dtype") or "bf16")

    def meta(self) -> dict:
        # "role" tells csrc/device_ops.cpp that this record converts operands for the bf16 GEMM.
        return {"role": "mx_to_bf16", "op": self.op, "in_dtype": self.in_dtype, "out_dtype": self.out_dtype,
                "threads_per_cta": THREADS, "elements_per_thread": MX_BLOCK,
                "source_bytes_per_thread": self.block_bytes,
                "gemm": "bf16 operands -> gemm_a16w16 (bf16 dispatch rows)"}


def _make_kernel_class(cfg: Config):
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    P = ptx.helpers(0)
    SRC_BLOCK = cfg.block_bytes

    def fp8_block_to_f32(words):
        """8 words = 32 e4m3 bytes -> 32 fp32 values in order."""
        vals = []
        for w in words:
            for h in P.e4m3x4_to_f16(w):
                vals += P.f16x2_to_f32(h)
        return vals

    def fp4_block_to_f32(words):
        """4 words = 32 e2m1 nibbles (element 2i in the low nibble of byte i) -> 32 fp32 values."""
        return [P.e2m1_to_f32(w, 4 * j) for w in words for j in range(8)]

    def convert_block(src_addr, scale_f32, dst_addr):
        """One 32-element block: load, decode, scale, round to bf16, store (plain Python: the
        lists unroll at trace time)."""
        words = []
        for v in range(SRC_BLOCK // 16):
            words += P.ldg_w(src_addr + 16 * v)
        vals = fp4_block_to_f32(words) if cfg.fp4 else fp8_block_to_f32(words)
        vals = [P.fmul_exact(x, scale_f32) for x in vals]
        packed = [P.pack_bf16x2(vals[2 * i], vals[2 * i + 1]) for i in range(MX_BLOCK // 2)]
        for v in range(4):
            P.stg_v4(dst_addr + 16 * v, packed[4 * v:4 * v + 4])

    class MxToBf16Sm90:
        @cute.kernel
        def kernel(self, src: Int64, scale: Int64, dst: Int64, rows: Int32, kblocks: Int32,
                   lda_bytes: Int64, ldo: Int64):
            tid, _, _ = cute.arch.thread_idx()
            bx, _, _ = cute.arch.block_idx()
            idx = bx * THREADS + tid
            if idx < rows * kblocks:
                r = idx // kblocks
                b = idx - r * kblocks
                convert_block(src + Int64(r) * lda_bytes + Int64(b) * SRC_BLOCK,
                              P.e8m0_f32(P.ldg_u8(scale + Int64(idx))),
                              dst + (Int64(r) * ldo + Int64(b) * MX_BLOCK) * 2)

        @cute.jit
        def __call__(self, src: Int64, scale: Int64, dst: Int64, rows: Int32, kblocks: Int32,
                     lda_bytes: Int64, ldo: Int64, stream: cuda.CUstream):
            total = rows * kblocks
            self.kernel(src, scale, dst, rows, kblocks, lda_bytes, ldo).launch(
                grid=((total + THREADS - 1) // THREADS, 1, 1), block=[THREADS, 1, 1], stream=stream)

    return MxToBf16Sm90


def compile_and_export(cfg: Config, out_dir: pathlib.Path, ident: str, arch: str = "sm_90a"):
    cx.import_dsl()
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    kernel = _make_kernel_class(cfg)()
    i32, i64 = Int32(1), Int64(0)
    compiled = cute.compile(kernel, i64, i64, i64, i32, i32, i64, i64, cuda.CUstream(0),
                            options=f"--gpu-arch {arch}")
    out_dir.mkdir(parents=True, exist_ok=True)
    compiled.export_to_c(str(out_dir), ident, ident)
    return out_dir / f"{ident}.h", out_dir / f"{ident}.o"


_EXPECTED_WRAPPER_ARGS = ["int64_t src", "int64_t scale", "int64_t dst", "int32_t rows",
                          "int32_t kblocks", "int64_t lda_bytes", "int64_t ldo", "cudaStream_t stream"]

_ADAPTER_CONSTANTS = r"""
constexpr long long kBlockBytes = @BLOCK_BYTES@;  // source bytes per 32-element MX block
"""

_ADAPTER_LAUNCH = r"""
// Converts one MX operand to bf16 (see kernels/cuda/gemm_mxfp.py): a -> out, a_scale = E8M0.
static int @IDENT@_launch(const flygemm::LaunchArgs& args, char* err, int err_len) {
  using namespace @IDENT@_detail;
  const long long rows = args.M, K = args.K, lim = 0x7fffffffLL;
  if (rows < 0 || K < 0) return fail(err, err_len, "negative size");
  if (rows == 0 || K == 0) return 0;
  if (K % 32 != 0) return fail(err, err_len, "K must be a multiple of 32 (MX block)");
  if (rows * (K / 32) > lim) return fail(err, err_len, "M * K / 32 must fit in int32");
  const long long row_bytes = K / 32 * kBlockBytes;
  if (args.lda < row_bytes || args.lda % 16 != 0)
    return fail(err, err_len, "lda (bytes) must be >= the row's bytes and a multiple of 16");
  if (args.ldo < K || args.ldo % 8 != 0) return fail(err, err_len, "ldo must be >= K and a multiple of 8");
  if (!args.a || !args.a_scale || !args.out) return fail(err, err_len, "null source, scale or output pointer");
  if (!aligned(args.a, 16) || !aligned(args.out, 16)) return fail(err, err_len, "source and output must be 16-byte aligned");
  if (args.a_scale_kind != flygemm::ScaleKind::mx_e8m0) return fail(err, err_len, "scales must be E8M0 [rows, K/32]");
  if (args.split_k != 1) return fail(err, err_len, "split_k must be 1");
  if (loaded_sm_count(args.device, err, err_len) <= 0) return -1;
  int64_t src = (int64_t)args.a, scale = (int64_t)args.a_scale, dst = (int64_t)args.out;
  int32_t r = (int32_t)rows, kblocks = (int32_t)(K / 32);
  int64_t lda_bytes = args.lda, ldo = args.ldo;
  void* stream = args.stream;
  int32_t ret = 0;
  void* packed[9] = {&src, &scale, &dst, &r, &kblocks, &lda_bytes, &ldo, &stream, &ret};
  @CIFACE@(packed, 9);
  if (ret != 0) return fail_cuda(err, err_len, "kernel launch (cudaLaunchKernelEx)", ret);
  return 0;
}
"""


def adapter_cpp(ident: str, name: str, header_rel: str, ciface: str, cfg: Config) -> str:
    constants = _ADAPTER_CONSTANTS.replace("@BLOCK_BYTES@", str(cfg.block_bytes))
    text = cx.adapter_prelude(ident, name, pathlib.Path(__file__).name, header_rel, ciface, constants)
    return text + _ADAPTER_LAUNCH.replace("@IDENT@", ident).replace("@CIFACE@", ciface)


def default_name(cfg: Config) -> str:
    return f"{FAMILY}.{cfg.op}.{cfg.in_dtype}.bf16.dequant.sm90a"


def build(spec: dict, out_dir: pathlib.Path) -> dict:
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    arch = str(spec.get("arch") or "sm_90a")
    if arch not in ("sm_90a", "sm_90"):
        raise ValueError(f"{FAMILY}: CUDA family targets sm_90a, got arch={arch!r}")
    cfg = Config.from_spec(spec)
    name = str(spec.get("name") or spec.get("kernel") or default_name(cfg))
    ident = str(spec.get("ident") or "k_" + "".join(c if c.isalnum() else "_" for c in name))
    t0 = time.time()
    header, obj = compile_and_export(cfg, out_dir, ident)
    meta = cfg.meta()
    meta.update({
        "arch": "sm_90a", "family": FAMILY, "ident": ident, "dsl": cx.dsl_version(),
        "source_sha256_16": hashlib.sha256(pathlib.Path(__file__).read_bytes()).hexdigest()[:16],
        "compile_seconds": round(time.time() - t0, 2), "c_entry": f"cute_dsl_{ident}_wrapper",
        "requires": "K%32==0, source rows 16B aligned, out 16B aligned, ldo%8==0",
    })
    ciface = cx.parse_launcher(FAMILY, header, ident, _EXPECTED_WRAPPER_ARGS)
    adapter = adapter_cpp(ident, name, header.name, ciface, cfg)
    result = {"objects": [obj.name], "adapter_cpp": adapter, **cx.link_result(out_dir), "meta": meta,
              "requires_k_multiple": MX_BLOCK, "requires_n_multiple": 1, "max_split_k": 1}
    (out_dir / "adapter.cpp").write_text(adapter)
    (out_dir / "build.json").write_text(json.dumps(
        {k: v for k, v in result.items() if k != "adapter_cpp"} | {"ident": ident, "name": name}, indent=1))
    return result


def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", default="gemm_mxfp8", choices=sorted(_OPS))
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    spec = {"arch": "sm_90a", "op": a.op, "family": FAMILY}
    spec["name"] = default_name(Config.from_spec(spec))
    res = build(spec, pathlib.Path(a.out))
    print(json.dumps({k: v for k, v in res.items() if k != "adapter_cpp"}, indent=1))


if __name__ == "__main__":
    _main()
