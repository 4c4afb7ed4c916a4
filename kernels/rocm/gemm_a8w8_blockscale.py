"""gemm_a8w8_blockscale for ROCm (gfx942, gfx950), written in FlyDSL and exported ahead of time.

    out[m, n] = round_out( sum_kb (a_scale[m, kb] * w_scale[n / 128, kb]) * S_kb[m, n] + bias[n] )
    S_kb[m, n] = sum_{k in block kb} A[m, k] * W[n, k]          (kb = k / 128, fp32)

Operands
    A        fp8 [M, K], row stride ``lda`` bytes, K contiguous (e4m3fnuz on gfx942, e4m3fn on
             gfx950: the format each arch's fp8 MFMA reads).
    W        same dtype, PRESHUFFLED [N/16, K/16, 16, 16] (as gemm_a8w8).
    a_scale  fp32 [M, ceil(K/128)]          (1x128 blocks), row-major, contiguous.
    w_scale  fp32 [ceil(N/128), ceil(K/128)] (128x128 blocks), row-major, contiguous.
    bias     fp32 [N] or null.
    out      bf16/fp16 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): N % 16 == 0, K % 16 == 0 (K need not be a multiple of 128:
the last block is partial, its scales apply to it); any M.

Software dequantization with fp32 promotion on both arches: tile_k = 128, so one K tile is one
scale block. Per K tile the standard fp8 MFMAs (those of gemm_a8w8: gfx942 two
v_mfma_f32_16x16x32_fp8_fp8 per 64-k step, gfx950 one v_mfma_scale_f32_16x16x128_f8f6f4 with
unit E8M0 scales per 128 k) accumulate the block's raw products into a fresh fp32 accumulator,
which is then multiplied by a_scale[m, kb] * w_scale[n/128, kb] (fp32) and added to the running
fp32 accumulator. The K loop is the core's (KernelCore.k_tile: sync or async A path, schedule
hints); a block's scales are the core's per-tile scale registers (``load_tile_scales``), loaded
one tile ahead and carried with the operand registers.
gfx950's v_mfma_scale_f32_16x16x128_f8f6f4 is not used for the block scales themselves: it
takes E8M0 (power-of-two) scales per 32 k, and blockscale checkpoints carry arbitrary fp32
scales, which it cannot apply exactly.

The epilogue adds the bias and rounds once (split_k == 1), or writes the promoted fp32 partial
sums to the split-K workspace, summed in slice order by the module's reduce kernel, which adds
the bias and rounds once (``_splitk.py``; the scales must be applied per block, inside pass 1).

Kernel signature (84 bytes of kernarg): out, a, w, bias, a_scale, w_scale, ws, M, N, K, lda,
ldo, M_pad, split_k. The tiling, A staging through LDS, preshuffled-W register loads and bounds
live in ``_preshuffle_gemm.py``; the MFMA group is gemm_a8w8's ``make_mma``.

Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_a8w8_blockscale.py --out /tmp/x --arch gfx950``.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _preshuffle_gemm as core  # noqa: E402
import _splitk as splitk  # noqa: E402
import gemm_a8w8 as a8w8  # noqa: E402
from _preshuffle_gemm import THREADS, Config  # noqa: E402

FAMILY = "gemm_a8w8_blockscale"
OP = "gemm_a8w8_blockscale"
SCALE_BLOCK = 128  # k (and n) extent of one scale
IN_DTYPES = {arch: (fp8,) for arch, fp8 in a8w8.FP8.items()}
OUT_DTYPES = ("bf16", "fp16")


def _adapter_checks(cfg: Config) -> str:
    return """  if (p.a_scale == nullptr || p.w_scale == nullptr) return fail("a_scale and w_scale are required");
  if (p.a_scale_kind != flygemm::ScaleKind::block || p.w_scale_kind != flygemm::ScaleKind::block)
    return fail("a_scale_kind and w_scale_kind must be block (1x128 / 128x128)");
  if (((uintptr_t)p.a_scale % 4) != 0 || ((uintptr_t)p.w_scale % 4) != 0) return fail("scales must be 4-byte aligned");
  {
    const long long kb = (p.K + 127) / 128, nb = (p.N + 127) / 128;
    if (p.M * kb * 4 >= 0x7fffffffLL || nb * kb * 4 >= 0x7fffffffLL)
      return fail("scale tensors too large for 32-bit buffer offsets");
  }"""


FAM = core.Family(
    name=FAMILY,
    op=OP,
    in_dtypes=IN_DTYPES,
    out_dtypes=OUT_DTYPES,
    forms={(arch, fp8): a8w8.FAM.forms[(arch, fp8)] for arch, fp8 in a8w8.FP8.items()},
    kernel_args=("out", "a", "w", "bias", "a_scale", "w_scale", "ws", "M", "N", "K", "lda", "ldo", "M_pad",
                 "split_k"),
    w_layout_doc="preshuffled [N/16, K/16, 16, 16]",
    adapter_checks=_adapter_checks,
    adapter_locals="""  void* a_scale = const_cast<void*>(p.a_scale);
  void* w_scale = const_cast<void*>(p.w_scale);""",
    meta=(
        ("scales", "a_scale fp32 [M, ceil(K/128)], w_scale fp32 [ceil(N/128), ceil(K/128)]; applied per "
                   "128-K block to the block's fp32 MFMA sums (software promotion)"),
        ("scale_block", SCALE_BLOCK),
    ),
    max_split_k=lambda cfg: splitk.MAX_SPLIT_K,
)


def config_from_spec(spec: dict) -> Config:
    cfg = core.config_from_spec(spec, FAM)
    if cfg.tile_k != SCALE_BLOCK:
        raise ValueError(f"{FAMILY}: tile_k must be {SCALE_BLOCK} (one scale block per K tile), got {cfg.tile_k}")
    return cfg


def kernel_name(cfg: Config) -> str:
    return core.kernel_name(cfg)


# --------------------------------------------------------------------------------------------
# Scale addressing, shared by the kernel and the emulator
# --------------------------------------------------------------------------------------------
class BlockScaleGeometry:
    """Offsets (fp32 elements) of the scales a lane needs for K tile kt (= scale block kt).
    a_scale's resource is rebased to the workgroup's first row m0; w_scale's is the whole
    tensor (the 128-row block of a column is (n0 + col) / 128)."""

    def __init__(self, geo):
        self.geo = geo

    @staticmethod
    def k_blocks(K):
        return (K + (SCALE_BLOCK - 1)) // SCALE_BLOCK

    @staticmethod
    def a_base(m0, nkb):
        return m0 * nkb

    @staticmethod
    def a_bytes(rows_valid, nkb):
        return rows_valid * nkb * 4

    @staticmethod
    def w_bytes(N, nkb):
        return ((N + (SCALE_BLOCK - 1)) // SCALE_BLOCK) * nkb * 4

    def a_offset(self, t, i, r, kt, nkb):  # row lg*4 + r of 16-row block i
        return self.geo.c_coord(t, i, 0, r)[0] * nkb + kt

    def w_offset(self, t, j, kt, n0, nkb):  # the 16-column block j never straddles 128 columns
        return ((n0 + self.geo.c_block_col(t, j)) // SCALE_BLOCK) * nkb + kt


class BlockScaleCore(core.KernelCore):
    """The preshuffle core with the block scales as its per-tile scale registers
    (``load_tile_scales``: carried through the core's K loop, loaded once the previous tile's
    MFMAs are issued) and a ``compute`` that multiplies each K tile into a fresh accumulator and
    promotes it: acc + part * (a_scale * w_scale)."""

    def __init__(self, cfg: Config):
        import flydsl.expr as fx

        super().__init__(cfg, fx.Int8, a8w8.make_mma(cfg), reg_t=fx.Int32)
        self.bg = BlockScaleGeometry(self.geo)

    def begin_scales(self, a_scale, w_scale):
        import flydsl.expr as fx
        from flydsl.expr import rocdl

        bg = self.bg
        self.nkb = nkb = bg.k_blocks(self.K)
        self.sa_rs = rocdl.make_buffer_ptr(a_scale + fx.Int64(bg.a_base(self.m0, nkb)),
                                           num_records_bytes=fx.Int64(bg.a_bytes(self.rows_valid, nkb)))
        self.sw_rs = rocdl.make_buffer_ptr(w_scale, num_records_bytes=fx.Int64(bg.w_bytes(self.N, nkb)))

    def load_tile_scales(self, kt):
        """The lane's scales of block kt, flat: 4 * m_rep row scales (block i, row r at 4i + r),
        then n_rep column-block scales."""
        fx, bg, c = self.fx, self.bg, self.cfg
        sa = [fx.ptr_load(self.sa_rs + bg.a_offset(self.t, i, r, kt, self.nkb), result_type=fx.Float32)
              for i in range(c.m_rep) for r in range(4)]
        sw = [fx.ptr_load(self.sw_rs + bg.w_offset(self.t, j, kt, self.n0, self.nkb), result_type=fx.Float32)
              for j in range(c.n_rep)]
        return sa + sw

    def compute(self, acc, wregs, stage=0, tile_scales=()):
        fx, c = self.fx, self.cfg
        part = super().compute(self.acc0(), wregs, stage, tile_scales)
        sa = [fx.Vector.from_elements(tile_scales[4 * i:4 * i + 4], fx.Float32) for i in range(c.m_rep)]
        sw = tile_scales[4 * c.m_rep:]
        nr = c.n_rep
        return [fx.Vector(acc[q]) + fx.Vector(part[q]) * (sa[q // nr] * sw[q % nr]) for q in range(len(acc))]


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16}[cfg.out_dtype]
    kc = BlockScaleCore(cfg)
    reduce_kernel = splitk.make_reduce_kernel(cfg.out_dtype, scaled=False)

    @flyc.kernel
    def gemm_a8w8_blockscale_kernel(
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
        M_pad: fx.Int32,
        split_k: fx.Int32,
    ):
        kc.begin(out, a, w, bias, M, N, K, lda, ldo)
        kc.begin_scales(a_scale, w_scale)
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
    def gemm_a8w8_blockscale_launch(
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
        M_pad: fx.Int32,
        split_k: fx.Int32,
        stream: fx.Stream = fx.Stream(None),
    ):
        gemm_a8w8_blockscale_kernel(out, a, w, bias, a_scale, w_scale, ws, M, N, K, lda, ldo, M_pad,
                                    split_k).launch(
            grid=cfg.grid(M, N, split_k), block=(THREADS, 1, 1), stream=stream
        )
        if split_k > 1:
            reduce_kernel(out, ws, bias, M, N, ldo, M_pad, split_k).launch(
                grid=splitk.WsGeometry.reduce_grid(M, N), block=(THREADS, 1, 1), stream=stream
            )

    # scalars: M, N, K, lda, ldo, M_pad, split_k
    placeholders = core.launcher_placeholders(flyc, fx, out_t, cfg.out_bytes, fx.Int8,
                                              scale_ptrs=((fx.Float32, 4), (fx.Float32, 4)),
                                              scalars=(128, 128, 128, 128, 128, 128, 2))
    return flyc, gemm_a8w8_blockscale_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy emulator
# --------------------------------------------------------------------------------------------
def _promotion_hook(cfg: Config, a_scale, w_scale, M, N, K):
    """``tile_scale`` hook of ``_preshuffle_gemm.emulate``: the kernel's per-block promotion,
    with the scale loads through the same offsets and buffer bounds."""
    import numpy as np

    nkb = BlockScaleGeometry.k_blocks(K)

    def tile_scale(part, kt, ctx):
        bg = BlockScaleGeometry(ctx["geo"])
        t, m0, n0 = ctx["t"], ctx["m0"], ctx["n0"]
        a_base, a_nb = bg.a_base(m0, nkb), bg.a_bytes(ctx["rows_valid"], nkb)
        out = np.empty_like(part)
        for i in range(cfg.m_rep):
            sa = np.stack([core.buffer_load_elems_model(a_scale, a_base, a_nb, bg.a_offset(t, i, r, kt, nkb), 4, 1)[:, 0]
                           for r in range(4)], axis=1)  # [256, 4]
            for j in range(cfg.n_rep):
                sw = core.buffer_load_elems_model(w_scale, 0, bg.w_bytes(N, nkb),
                                            np.full(THREADS, bg.w_offset(t, j, kt, n0, nkb)), 4, 1)  # [256, 1]
                out[i, j] = part[i, j] * (sa * sw)
        return out

    return tile_scale


def emulate(cfg: Config, A, Wsh, bias, a_scale, w_scale, M, N, K, lda, ldo, out_init, split_k=1, M_pad=None):
    """Runs the kernel's dataflow on the CPU (``_preshuffle_gemm.emulate`` with the per-block
    promotion hook). A and Wsh hold the operand BYTES (flat; A with row stride lda, W
    preshuffled), decoded as the arch's MFMA reads them; a_scale [M, ceil(K/128)] and w_scale
    [ceil(N/128), ceil(K/128)] (flattened); out_init receives the unrounded results. split_k > 1
    runs the split-K passes (promoted partials into a modelled workspace, then the reduce)."""
    import numpy as np

    A, Wsh = np.asarray(A, dtype=np.float64), np.asarray(Wsh, dtype=np.float64)
    promote = _promotion_hook(cfg, np.asarray(a_scale, np.float64).reshape(-1),
                              np.asarray(w_scale, np.float64).reshape(-1), M, N, K)
    decode = a8w8.mfma_decoder(cfg)
    k_tiles = (K + cfg.tile_k - 1) // cfg.tile_k
    if splitk.effective_split_k(split_k, k_tiles, N) == 1:
        return core.emulate(cfg, A, Wsh, bias, M, N, K, lda, ldo, out_init, decode=decode, tile_scale=promote)
    M_pad = M_pad or (M + cfg.tile_m - 1) // cfg.tile_m * cfg.tile_m

    def run_slice(k_range, s, ws):
        core.emulate(cfg, A, Wsh, None, M, N, K, lda, ldo, None, decode=decode, k_tiles=k_range,
                     tile_scale=promote, store=splitk.partial_store_hook(ws, s, M_pad, N))

    return splitk.emulate_split(run_slice, k_tiles, M, N, M_pad, split_k, out_init, ldo, bias)[0]


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def build(spec: dict, out_dir) -> dict:
    """Compile one specialization for spec['arch'] and export it (see module docstring)."""
    config_from_spec(spec)  # the family's own constraints (tile_k) before compiling
    return core.build(spec, out_dir, FAM, _make_launcher)


DEFAULT_SPECS = [
    dict(arch="gfx942", in_dtype="fp8_e4m3fnuz", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
    dict(arch="gfx950", in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128),
]

if __name__ == "__main__":
    core.main(FAM, build, DEFAULT_SPECS, description=__doc__.splitlines()[0])
