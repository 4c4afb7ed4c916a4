"""gemm_a8w8 for ROCm (gfx942, gfx950), written in FlyDSL and exported ahead of time.

    out[m, n] = round_out( (sum_k A[m, k] * W[n, k]) * a_scale[m or 0] * w_scale[n or 0] + bias[n] )

(fp8: fp32 accumulation; int8: exact int32 accumulation, converted to fp32 once; the scale
products and the bias add are fp32 operations in that order, as the CPU oracle does them; one
rounding to the output dtype.)

Operands
    A        fp8 or int8 [M, K], row stride ``lda`` elements (bytes), K contiguous.
             fp8 is float8_e4m3fnuz on gfx942 and float8_e4m3fn (OCP) on gfx950: the format
             each arch's fp8 MFMA reads.
    W        same dtype, PRESHUFFLED [N/16, K/16, 16, 16]: element (n, k) at
             [n//16, k//16, n%16, k%16] (aiter's shuffle_weight(w, layout=(16, 16))).
    a_scale  fp32, 1 value (per tensor) or M values (per row of A).
    w_scale  fp32, 1 value (per tensor) or N values (per row of W).
    bias     fp32 [N] or null.
    out      bf16/fp16/fp32 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): N % 16 == 0, K % 16 == 0; any M (ragged M is masked);
int8: K <= 131071 (|sum| <= 128*128*K stays below 2^31).

Scale kinds are RUN-TIME kernel arguments (``a_scale_per_row``, ``w_scale_per_row``: 0 or 1),
not compiled variants. The flag is the index stride of the scale (index = row * flag), so the
kernel has no branch and the same instructions for every kind; the scales are read once per
output element in the epilogue (the k loop is untouched), and a per-tensor scale is one address
for every lane (one cache line). Compiled variants would only drop one multiply per address
and would build (and embed) 4x the kernels for each tile, beyond the build-time budget.

The tiling, A staging through LDS, preshuffled-W register loads, bounds handling, epilogue,
NumPy emulator and export live in ``_preshuffle_gemm.py`` (shared with gemm_a16w16). This file
holds what is specific to 8-bit operands: dtypes, the MFMA forms, the kernel signature
(out, a, w, bias, a_scale, w_scale, ws, M, N, K, lda, ldo, a_scale_per_row, w_scale_per_row,
M_pad, split_k: 92 bytes of kernarg), the adapter's scale checks and the fp8/int8 decoders of
the emulator.

Split-K (``_splitk.py``, fp8 only): grid z = split_k slices of whole K tiles write their raw
fp32 sums to the workspace; the module's reduce kernel adds them in slice order, THEN applies
a_scale * w_scale and the bias (the oracle's order: the scales multiply the finished dot
product) and rounds once. int8 has no split-K mode (max_split_k 1): its exact int32 sums would
become inexact fp32 partial sums; its module has no reduce kernel.
MFMA per 64-k step (one 16-byte vector = 16 k per lane):
  * gfx942 fp8:  v_mfma_f32_16x16x32_fp8_fp8 (fnuz operands on gfx942: the mnemonic is the same
                 on every CDNA3/4 target, the arch fixes the format), two per step (8 bytes each);
  * gfx942 int8: v_mfma_i32_16x16x32_i8, two per step;
  * gfx950 int8: v_mfma_i32_16x16x64_i8, one per step;
  * gfx950 fp8:  v_mfma_scale_f32_16x16x128_f8f6f4 with both formats fp8 e4m3 (cbsz = blgp = 0)
                 and unit E8M0 scales (127 = 2^0): one per TWO steps (32 bytes per lane), the
                 full-rate fp8 form of gfx950 (v_mfma_f32_16x16x32_fp8_fp8 runs at half rate).

Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_a8w8.py --out /tmp/x``.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _preshuffle_gemm as core  # noqa: E402
import _splitk as splitk  # noqa: E402
from _preshuffle_gemm import THREADS, Config, MmaForm, fp8_table  # noqa: E402

FAMILY = "gemm_a8w8"
OP = "gemm_a8w8"
# fp8 in_dtype per arch: the format of that arch's fp8 MFMA
FP8 = {"gfx942": "fp8_e4m3fnuz", "gfx950": "fp8_e4m3fn"}
IN_DTYPES = {arch: (fp8, "int8") for arch, fp8 in FP8.items()}
OUT_DTYPES = ("bf16", "fp16", "fp32")
E8M0_ONE = 127  # E8M0 scale byte of 2^0
INT8_MAX_K = 131071  # 128 * 128 * K < 2^31


def _adapter_checks(cfg: Config) -> str:
    """C++ checks of the scale arguments (and of K for exact int32 accumulation)."""
    checks = """  if (p.a_scale == nullptr || p.w_scale == nullptr) return fail("a_scale and w_scale are required");
  if (p.a_scale_kind != flygemm::ScaleKind::per_tensor && p.a_scale_kind != flygemm::ScaleKind::per_row)
    return fail("a_scale_kind must be per_tensor or per_row");
  if (p.w_scale_kind != flygemm::ScaleKind::per_tensor && p.w_scale_kind != flygemm::ScaleKind::per_row)
    return fail("w_scale_kind must be per_tensor or per_row");
  if (((uintptr_t)p.a_scale % 4) != 0 || ((uintptr_t)p.w_scale % 4) != 0) return fail("scales must be 4-byte aligned");"""
    if cfg.in_dtype == "int8":
        checks += f"""
  if (p.K > {INT8_MAX_K}) return fail("K too large for exact int32 accumulation (int8: K <= {INT8_MAX_K})");"""
    return checks


def _splittable(cfg: Config) -> bool:
    """fp8 (fp32 accumulators) has a split-K mode; int8 keeps its exact int32 sums whole."""
    return cfg.form.acc == "f32"


FAM = core.Family(
    name=FAMILY,
    op=OP,
    in_dtypes=IN_DTYPES,
    out_dtypes=OUT_DTYPES,
    forms={
        ("gfx942", "fp8_e4m3fnuz"): MmaForm("v_mfma_f32_16x16x32_fp8_fp8", steps=1, lane_k=8, acc="f32"),
        ("gfx942", "int8"): MmaForm("v_mfma_i32_16x16x32_i8", steps=1, lane_k=8, acc="i32"),
        ("gfx950", "fp8_e4m3fn"): MmaForm("v_mfma_scale_f32_16x16x128_f8f6f4", steps=2, lane_k=32, acc="f32"),
        ("gfx950", "int8"): MmaForm("v_mfma_i32_16x16x64_i8", steps=1, lane_k=16, acc="i32"),
    },
    kernel_args=("out", "a", "w", "bias", "a_scale", "w_scale", "ws", "M", "N", "K", "lda", "ldo",
                 "a_scale_per_row", "w_scale_per_row", "M_pad", "split_k"),
    w_layout_doc="preshuffled [N/16, K/16, 16, 16]",
    adapter_checks=_adapter_checks,
    adapter_locals="""  void* a_scale = const_cast<void*>(p.a_scale);
  void* w_scale = const_cast<void*>(p.w_scale);
  int32_t a_scale_per_row = p.a_scale_kind == flygemm::ScaleKind::per_row ? 1 : 0;
  int32_t w_scale_per_row = p.w_scale_kind == flygemm::ScaleKind::per_row ? 1 : 0;""",
    meta=(
        ("scales", "a_scale fp32 [1 or M], w_scale fp32 [1 or N]; kinds are the int32 kernel arguments "
                   "a_scale_per_row / w_scale_per_row (0 or 1)"),
    ),
    max_split_k=lambda cfg: splitk.MAX_SPLIT_K if _splittable(cfg) else 1,
)


def config_from_spec(spec: dict) -> Config:
    return core.config_from_spec(spec, FAM)


def kernel_name(cfg: Config) -> str:
    return core.kernel_name(cfg)


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
def make_mma(cfg: Config):
    """The MFMA group of cfg's (arch, 8-bit dtype): mma(a_vecs, b_vecs, acc) -> acc (also used by
    gemm_a8w8_blockscale)."""
    import flydsl.expr as fx
    from flydsl._mlir import ir
    from flydsl.expr import rocdl
    from flydsl.expr.typing import T

    gfx950 = cfg.arch == "gfx950"
    fp8 = cfg.in_dtype != "int8"

    def mfma_i32_16x16x64_i8(a, b, acc):  # gfx950; the ODS builder takes attributes
        perm = ir.Attribute.parse("#rocdl<mfma_perm_b none>")
        return rocdl.mfma_i32_16x16x64_i8(
            T.i32x4, fx.as_ir_value(a), fx.as_ir_value(b), fx.as_ir_value(acc), 0, 0, perm
        ).result

    def mma(a_vecs, b_vecs, acc):
        """acc += A * B for one MFMA group; a_vecs/b_vecs: the lane's 16-byte vectors (16 k each,
        as 4 x i32)."""
        if gfx950 and fp8:  # 32 bytes per lane: the two steps' vectors side by side
            idx = list(range(8))
            a = a_vecs[0].shuffle(a_vecs[1], idx)
            b = b_vecs[0].shuffle(b_vecs[1], idx)
            one = fx.Int32(E8M0_ONE)
            return rocdl.mfma_scale_f32_16x16x128_f8f6f4(T.f32x4, [a, b, acc, 0, 0, 0, one, 0, one])
        (a16,), (b16,) = a_vecs, b_vecs
        if gfx950:
            return mfma_i32_16x16x64_i8(a16, b16, acc)
        # gfx942: two k32 MFMAs on the low and high 8 bytes of each lane's 16
        a2 = a16.bitcast(fx.Int64)
        b2 = b16.bitcast(fx.Int64)
        if fp8:
            acc = rocdl.mfma_f32_16x16x32_fp8_fp8(T.f32x4, [a2[0], b2[0], acc])
            return rocdl.mfma_f32_16x16x32_fp8_fp8(T.f32x4, [a2[1], b2[1], acc])
        acc = rocdl.mfma_i32_16x16x32_i8(T.i32x4, [a2[0], b2[0], acc])
        return rocdl.mfma_i32_16x16x32_i8(T.i32x4, [a2[1], b2[1], acc])

    return mma


def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[cfg.out_dtype]
    kc = core.KernelCore(cfg, fx.Int8, make_mma(cfg), reg_t=fx.Int32)
    splittable = _splittable(cfg)  # trace-time constant: int8 builds neither pass-1 stores nor the reduce
    reduce_kernel = splitk.make_reduce_kernel(cfg.out_dtype, scaled=True) if splittable else None

    @flyc.kernel
    def gemm_a8w8_kernel(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        a_scale: fx.Pointer,
        w_scale: fx.Pointer,
        ws: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
        a_scale_per_row: fx.Int32,
        w_scale_per_row: fx.Int32,
        M_pad: fx.Int32,
        split_k: fx.Int32,
    ):
        kc.begin(out, a, w, bias, M, N, K, lda, ldo)
        kt0, kt1 = splitk.kernel_k_slice(kc.nk, split_k)
        acc = kc.acc0()
        regs = kc.prologue(kt0)
        for kt in range(kt0, kt1 - 1):
            acc, regs = kc.k_tile(kt, acc, regs)
        acc = kc.last_k_tile(acc, regs, kt1 - 1)
        scales = (a_scale, w_scale, a_scale_per_row, w_scale_per_row)
        if splittable:
            if split_k > 1:
                splitk.store_partial(kc, acc, ws, M_pad)
            else:
                kc.epilogue(acc, scales)
        else:
            kc.epilogue(acc, scales)

    @flyc.jit
    def gemm_a8w8_launch(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        a_scale: fx.Pointer,
        w_scale: fx.Pointer,
        ws: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
        a_scale_per_row: fx.Int32,
        w_scale_per_row: fx.Int32,
        M_pad: fx.Int32,
        split_k: fx.Int32,
        stream: fx.Stream = fx.Stream(None),
    ):
        gemm_a8w8_kernel(out, a, w, bias, a_scale, w_scale, ws, M, N, K, lda, ldo, a_scale_per_row,
                         w_scale_per_row, M_pad, split_k).launch(
            grid=cfg.grid(M, N, split_k), block=(THREADS, 1, 1), stream=stream
        )
        if splittable:
            if split_k > 1:
                reduce_kernel(out, ws, bias, a_scale, w_scale, M, N, ldo, M_pad, split_k, a_scale_per_row,
                              w_scale_per_row).launch(
                    grid=splitk.WsGeometry.reduce_grid(M, N), block=(THREADS, 1, 1), stream=stream
                )

    # scalars: M, N, K, lda, ldo, a_scale_per_row, w_scale_per_row, M_pad, split_k
    placeholders = core.launcher_placeholders(flyc, fx, out_t, cfg.out_bytes, fx.Int8,
                                              scale_ptrs=((fx.Float32, 4), (fx.Float32, 4)),
                                              scalars=(128, 128, 128, 128, 128, 1, 1, 128, 2))
    return flyc, gemm_a8w8_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy emulator: bytes in memory, decoded as the arch's MFMA reads them
# --------------------------------------------------------------------------------------------


def int8_table():
    import numpy as np

    b = np.arange(256)
    return np.where(b < 128, b, b - 256).astype(np.float64)


# The operand format each arch's 8-bit MFMA applies to the bytes it is given.
MFMA_FORMAT = {("gfx942", "fp8"): "e4m3fnuz", ("gfx950", "fp8"): "e4m3fn"}
DTYPE_FORMAT = {"fp8_e4m3fnuz": "e4m3fnuz", "fp8_e4m3fn": "e4m3fn", "int8": "int8"}


def mfma_decoder(cfg: Config):
    """bytes (as float64 0..255, NaN = unwritten LDS) -> values, as cfg's MFMA reads them."""
    import numpy as np

    fmt = "int8" if cfg.in_dtype == "int8" else MFMA_FORMAT[(cfg.arch, "fp8")]
    table = int8_table() if fmt == "int8" else fp8_table(fmt)

    def decode(x):
        x = np.asarray(x, dtype=np.float64)
        nan = np.isnan(x)
        out = table[np.where(nan, 0, x).astype(np.int64)]
        return np.where(nan, np.nan, out)

    return decode


def emulate(cfg: Config, A, Wsh, bias, a_scale, w_scale, M, N, K, lda, ldo, out_init,
            a_per_row=None, w_per_row=None, split_k=1, M_pad=None):
    """Runs the kernel's dataflow on the CPU (see ``_preshuffle_gemm.emulate``). A and Wsh hold
    the operand BYTES (uint8, flat, A with row stride lda, W preshuffled); the MFMA decodes them
    in the arch's format (gfx942: fp8 e4m3fnuz, gfx950: fp8 e4m3fn; int8 two's complement).
    a_scale/w_scale: fp32 arrays of 1 or M / N values (per-row flags default to len > 1).
    out_init receives the unrounded results (acc * a_scale * w_scale + bias). split_k > 1 (fp8)
    runs the split-K passes: raw partials into a modelled workspace [split_k, M_pad, N], then the
    reduce (sum in slice order, scales, bias), as the adapter launches them."""
    import numpy as np

    a_row = int(len(a_scale) > 1) if a_per_row is None else int(a_per_row)
    w_row = int(len(w_scale) > 1) if w_per_row is None else int(w_per_row)
    A, Wsh = np.asarray(A, dtype=np.float64), np.asarray(Wsh, dtype=np.float64)
    scales = (np.asarray(a_scale, np.float64), np.asarray(w_scale, np.float64), a_row, w_row)
    k_tiles = (K + cfg.tile_k - 1) // cfg.tile_k
    if splitk.effective_split_k(split_k, k_tiles, N) == 1:
        return core.emulate(cfg, A, Wsh, bias, M, N, K, lda, ldo, out_init, decode=mfma_decoder(cfg), scales=scales)
    assert _splittable(cfg), "int8 has no split-K mode"
    M_pad = M_pad or (M + cfg.tile_m - 1) // cfg.tile_m * cfg.tile_m

    def run_slice(k_range, s, ws):
        core.emulate(cfg, A, Wsh, None, M, N, K, lda, ldo, None, decode=mfma_decoder(cfg), k_tiles=k_range,
                     store=splitk.partial_store_hook(ws, s, M_pad, N))

    return splitk.emulate_split(run_slice, k_tiles, M, N, M_pad, split_k, out_init, ldo, bias, scales)[0]


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def build(spec: dict, out_dir) -> dict:
    """Compile one specialization for spec['arch'] and export it (see module docstring)."""
    return core.build(spec, out_dir, FAM, _make_launcher)


DEFAULT_SPECS = [
    dict(arch="gfx942", in_dtype="fp8_e4m3fnuz", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
    dict(arch="gfx942", in_dtype="int8", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
    dict(arch="gfx950", in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
    dict(arch="gfx950", in_dtype="int8", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
]

if __name__ == "__main__":
    core.main(FAM, build, DEFAULT_SPECS, description=__doc__.splitlines()[0])
