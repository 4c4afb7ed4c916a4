"""gemm_a16w16 for ROCm (gfx942, gfx950), written in FlyDSL and exported ahead of time.

    out[m, n] = round_out( sum_k A[m, k] * W[n, k] + bias[n] )      (fp32 accumulate, one rounding)

Operands
    A     bf16/fp16 [M, K], row stride ``lda`` elements (K contiguous).
    W     same dtype, PRESHUFFLED [N/16, K/8, 16, 8]: element (n, k) at [n//16, k//8, n%16, k%8].
    bias  fp32 [N] or null.
    out   bf16/fp16/fp32 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): N % 16 == 0, K % 8 == 0; any M (ragged M is masked).

The tiling, A staging through LDS, preshuffled-W register loads, bounds handling, epilogue,
NumPy emulator and export live in ``_preshuffle_gemm.py`` (shared with gemm_a8w8). This file
holds what is specific to 16-bit operands: the dtypes and the MFMA form,
  * gfx942: v_mfma_f32_16x16x16_{bf16,f16}, two per 32-k step (low/high 4 k of each lane);
  * gfx950: v_mfma_f32_16x16x32_{bf16,f16}, one per 32-k step,
and the kernel signature (out, a, w, bias, ws, M, N, K, lda, ldo, M_pad, split_k: 68 bytes of
kernarg).

Split-K (``_splitk.py``): grid z = split_k slices of whole K tiles; with split_k > 1 the kernel
writes fp32 partials to the workspace ``ws`` [split_k, M_pad, N] and the module's second kernel
(the fixed-order reduce, launched by the same exported launcher on the same stream) adds them,
adds the bias and rounds once; split_k == 1 writes ``out`` directly and launches nothing else.

Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_a16w16.py --out /tmp/x``.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _preshuffle_gemm as core  # noqa: E402
import _splitk as splitk  # noqa: E402
from _preshuffle_gemm import (  # noqa: E402,F401  (re-exported for tests and tools)
    LDS_LIMIT,
    NUM_WAVES,
    OOB_BYTES,
    OUT_BYTES,
    SUPPORTED_ARCHS,
    THREADS,
    WAVE,
    Config,
    MmaForm,
    _Geometry,
)

FAMILY = "gemm_a16w16"
OP = "gemm_a16w16"
IN_DTYPES = ("bf16", "fp16")
OUT_DTYPES = ("bf16", "fp16", "fp32")
KSTEP = 32  # k elements per MFMA step (one k32 MFMA on gfx950, two k16 MFMAs on gfx942)
VEC = 8  # 16-byte vectors of 16-bit elements


def _forms():
    forms = {}
    for ty, short in (("bf16", "bf16"), ("fp16", "f16")):
        forms[("gfx942", ty)] = MmaForm(f"v_mfma_f32_16x16x16_{short}", steps=1, lane_k=4, acc="f32")
        forms[("gfx950", ty)] = MmaForm(f"v_mfma_f32_16x16x32_{short}", steps=1, lane_k=8, acc="f32")
    return forms


FAM = core.Family(
    name=FAMILY,
    op=OP,
    in_dtypes={"gfx942": IN_DTYPES, "gfx950": IN_DTYPES},
    out_dtypes=OUT_DTYPES,
    forms=_forms(),
    kernel_args=("out", "a", "w", "bias", "ws", "M", "N", "K", "lda", "ldo", "M_pad", "split_k"),
    w_layout_doc="preshuffled [N/16, K/8, 16, 8]",
    max_split_k=lambda cfg: splitk.MAX_SPLIT_K,
)


def config_from_spec(spec: dict) -> Config:
    return core.config_from_spec(spec, FAM)


def kernel_name(cfg: Config) -> str:
    return core.kernel_name(cfg)


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
def make_mma(arch: str, in_dtype: str):
    """mma(a_vecs, b_vecs, acc) -> acc for one 32-k step of 16-bit operands (a lane's 8 k values
    of A and of B); also used by gemm_splitk_decode."""
    import flydsl.expr as fx
    from flydsl.expr import rocdl
    from flydsl.expr.typing import T

    gfx950 = arch == "gfx950"
    bf16 = in_dtype == "bf16"

    def mma(a_vecs, b_vecs, acc):
        """acc += A(16 x 32) * B(32 x 16) for one 32-k step; a8/b8 are a lane's 8 k values."""
        (a8,), (b8,) = a_vecs, b_vecs
        if gfx950:
            if bf16:
                return rocdl.mfma_f32_16x16x32_bf16(T.f32x4, [a8, b8, acc])
            return rocdl.mfma_f32_16x16x32_f16(T.f32x4, [a8, b8, acc])
        # gfx942: two k16 MFMAs on the low and high 4 k values of each lane
        if bf16:
            a8 = a8.bitcast(fx.Int16)
            b8 = b8.bitcast(fx.Int16)
        lo, hi = [0, 1, 2, 3], [4, 5, 6, 7]
        f = rocdl.mfma_f32_16x16x16bf16_1k if bf16 else rocdl.mfma_f32_16x16x16f16
        acc = f(T.f32x4, [a8.shuffle(a8, lo), b8.shuffle(b8, lo), acc])
        return f(T.f32x4, [a8.shuffle(a8, hi), b8.shuffle(b8, hi), acc])

    return mma


def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    in_t = fx.BFloat16 if cfg.in_dtype == "bf16" else fx.Float16
    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[cfg.out_dtype]
    mma = make_mma(cfg.arch, cfg.in_dtype)

    kc = core.KernelCore(cfg, in_t, mma)
    reduce_kernel = splitk.make_reduce_kernel(cfg.out_dtype, scaled=False)

    @flyc.kernel
    def gemm_a16w16_kernel(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        ws: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
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
        if split_k > 1:
            splitk.store_partial(kc, acc, ws, M_pad)
        else:
            kc.epilogue(acc)

    @flyc.jit
    def gemm_a16w16_launch(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        ws: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
        M_pad: fx.Int32,
        split_k: fx.Int32,
        stream: fx.Stream = fx.Stream(None),
    ):
        gemm_a16w16_kernel(out, a, w, bias, ws, M, N, K, lda, ldo, M_pad, split_k).launch(
            grid=cfg.grid(M, N, split_k), block=(THREADS, 1, 1), stream=stream
        )
        if split_k > 1:
            reduce_kernel(out, ws, bias, M, N, ldo, M_pad, split_k).launch(
                grid=splitk.WsGeometry.reduce_grid(M, N), block=(THREADS, 1, 1), stream=stream
            )

    # scalars: M, N, K, lda, ldo, M_pad, split_k
    placeholders = core.launcher_placeholders(flyc, fx, out_t, cfg.out_bytes, in_t,
                                              scalars=(128, 128, 128, 128, 128, 128, 2))
    return flyc, gemm_a16w16_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy emulator (the shared model with identity element decoding)
# --------------------------------------------------------------------------------------------
def emulate(cfg: Config, A, Wsh, bias, M, N, K, lda, ldo, out_init, split_k=1, M_pad=None):
    """Runs the kernel's dataflow on the CPU (see ``_preshuffle_gemm.emulate``): A and Wsh hold
    the operand values; out_init receives the unrounded fp32 sums plus bias. split_k > 1 runs
    the split-K passes (partials into a modelled workspace [split_k, M_pad, N], then the reduce)
    as the adapter launches them (slices clamped to the K tiles)."""
    k_tiles = (K + cfg.tile_k - 1) // cfg.tile_k
    if splitk.effective_split_k(split_k, k_tiles, N) == 1:
        return core.emulate(cfg, A, Wsh, bias, M, N, K, lda, ldo, out_init)
    M_pad = M_pad or (M + cfg.tile_m - 1) // cfg.tile_m * cfg.tile_m

    def run_slice(k_range, s, ws):
        core.emulate(cfg, A, Wsh, None, M, N, K, lda, ldo, None, k_tiles=k_range,
                     store=splitk.partial_store_hook(ws, s, M_pad, N))

    return splitk.emulate_split(run_slice, k_tiles, M, N, M_pad, split_k, out_init, ldo, bias)[0]


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def build(spec: dict, out_dir) -> dict:
    """Compile one specialization for spec['arch'] and export it (see module docstring)."""
    return core.build(spec, out_dir, FAM, _make_launcher)


DEFAULT_SPECS = [
    dict(in_dtype="bf16", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=64),
    dict(in_dtype="fp16", out_dtype="fp16", tile_m=64, tile_n=128, tile_k=64),
    dict(in_dtype="bf16", out_dtype="fp32", tile_m=16, tile_n=64, tile_k=128),
]

if __name__ == "__main__":
    core.main(FAM, build, DEFAULT_SPECS, description=__doc__.splitlines()[0])
