"""gemm_mxfp8 and gemm_mxfp4 for ROCm gfx950 (OCP MX), written in FlyDSL and exported ahead of time.

    out[m, n] = round_out( sum_k A[m, k] 2^(sa[m, k/32] - 127) * W[n, k] 2^(sw[n, k/32] - 127) + bias[n] )

(fp32 accumulation, one rounding; the E8M0 scales are applied inside the MFMA, so there is no
scale work in the epilogue.)

Operands
    A        gemm_mxfp8: fp8 e4m3fn [M, K]; gemm_mxfp4: fp4 e2m1 packed in pairs [M, K/2] (element
             2j in the low nibble of byte j). Row stride ``lda`` in storage elements (bytes).
    W        same dtype, PRESHUFFLED in 16-byte units: [N/16, K/16, 16, 16] fp8 or
             [N/16, K/32, 16, 16 packed bytes] fp4 (element (n, byte b) at [n//16, b//16, n%16, b%16]).
    a_scale  e8m0 [M, K/32]; w_scale e8m0 [N, K/32] (one byte per 32-element block along K).
    bias     fp32 [N] or null.
    out      bf16/fp16 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): N % 16 == 0, K % 32 == 0; any M (ragged M is masked).
gfx950 only: gfx942 (CDNA3) has no block-scaled MFMA and no fp4 data path (docs/ROCM.md, "MX formats").

The MFMA is v_mfma_scale_f32_16x16x128_f8f6f4 with the operand formats in cbsz/blgp (0 = fp8
e4m3 for both operands of gemm_mxfp8; 4 = fp4 e2m1 for gemm_mxfp4) and REAL scales: each lane
supplies one E8M0 byte per operand, selected by the instruction's op_sel byte index.

How the scales meet the data. The shared core (``_preshuffle_gemm.py``) gives lane (l16, lg) of
k step s the 16 bytes at storage k = s*64 + lg*16 of the K tile, for A (through LDS) and W alike,
and an MFMA group of ``form.steps`` consecutive steps feeds one scaled MFMA: 2 steps (32 bytes)
for fp8, 1 step (16 bytes = 32 values) for fp4. So MFMA group g of a K tile reads logical k
[128 g, 128 g + 128) of the tile, and does so in the hardware's own slot order (fp8: lane group
lg holds slots 16 lg + 0..15 and 64 + 16 lg + 0..15; fp4: slots 32 lg + 0..31). The MFMA takes
the scale of (row r, slot block b = slots 32 b .. 32 b + 31) from lane 16 b + r, so lane
(l16, lg) must supply block 4 g + lg of the tile for its row (A) or column (W): ``MxGeometry``.
Scales are single-byte buffer loads, one register per (16-row block, MFMA group), op_sel byte 0:
the contract's [rows, K/32] rows have any length, so a wider load could straddle the end of the
tensor (and read 0 for valid bytes), and packing four bytes into one register before the loop
back-edge would make every iteration wait for all of the next tile's loads (seen in the ISA:
s_waitcnt vmcnt(0) ahead of the MFMAs). Blocks past K/32 (the K tail of the last tile) are
masked to an out-of-range offset and read 0, never the next row's bytes: a NaN block (E8M0 255)
of one row cannot poison its neighbour. The next K tile's scale bytes are loaded once this tile's
MFMAs are issued (loaded with the A/W prefetch, they needed phi copies that waited on the loads).

Everything else (tiling, A staging through LDS, preshuffled-W register loads, bounds, bias
epilogue, NumPy emulator, export) is the shared core. This file holds what is specific to MX:
the two families (dtypes, MFMA form, kernel signature out, a, w, bias, a_scale, w_scale, M, N,
K, lda, ldo: 68 bytes of kernarg; K is LOGICAL), the scale addressing and loads, the scaled
MFMA, and the NumPy model of that MFMA (operand slot layout, e2m1 nibbles, E8M0 scales).

Configs: tile_k in the kernels CSV is logical K (a multiple of 128, the MFMA's K); the core's
``Config`` holds storage units (bytes), i.e. tile_k / 2 for fp4.

Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_mxfp.py --out /tmp/x [--in-dtype fp4_e2m1_x2]``.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _preshuffle_gemm as core  # noqa: E402
from _preshuffle_gemm import LANE_GROUPS, THREADS, WAVE, Config, MmaForm  # noqa: E402

FAMILY = "gemm_mxfp"
ARCH = "gfx950"
FP8, FP4 = "fp8_e4m3fn", "fp4_e2m1_x2"
OPS = {FP8: "gemm_mxfp8", FP4: "gemm_mxfp4"}
K_PER_BYTE = {FP8: 1, FP4: 2}  # logical K values per storage byte
OUT_DTYPES = ("bf16", "fp16")
MX_BLOCK = 32  # K values per E8M0 scale
MFMA_K = 128  # logical K of one v_mfma_scale_f32_16x16x128_f8f6f4
BLOCKS_PER_MFMA = MFMA_K // MX_BLOCK  # = LANE_GROUPS: lane group b supplies slot block b's scale
SCALE_BYTE = 0  # op_sel byte index: each scale register holds one zero-extended E8M0 byte
MNEMONIC = "v_mfma_scale_f32_16x16x128_f8f6f4"
# cbsz (A) / blgp (B) operand-format codes of the scaled MFMA
OPERAND_FORMAT = {FP8: 0, FP4: 4}
E8M0_NAN = 255
assert BLOCKS_PER_MFMA == LANE_GROUPS


def _adapter_checks(cfg: Config) -> str:
    """C++ checks of the MX scale arguments (after the core's N, K, bias, split-K checks)."""
    return f"""  if (p.a_scale == nullptr || p.w_scale == nullptr) return fail("a_scale and w_scale are required");
  if (p.a_scale_kind != flygemm::ScaleKind::mx_e8m0 || p.w_scale_kind != flygemm::ScaleKind::mx_e8m0)
    return fail("scales must be OCP MX e8m0 [rows, K/32] (ScaleKind::mx_e8m0)");
  // per-workgroup scale resources ({cfg.tile_m} or {cfg.tile_n} rows of K/32 bytes) stay below 2 GiB
  if ((long long){max(cfg.tile_m, cfg.tile_n)} * (p.K / {MX_BLOCK}) >= 0x7fffffffLL)
    return fail("K too large for 32-bit scale offsets");"""


def _family(in_dtype: str) -> core.Family:
    pack = K_PER_BYTE[in_dtype]
    # one scaled MFMA reads 128 values = 128 / pack bytes per row, 16 bytes (a core k step) per lane
    # and k step: fp8 needs 2 steps (32 bytes per lane), fp4 one (16 bytes = 32 values per lane)
    steps = MFMA_K // pack // (LANE_GROUPS * core.VEC_BYTES)
    return core.Family(
        name=FAMILY,
        op=OPS[in_dtype],
        in_dtypes={ARCH: (in_dtype,)},
        out_dtypes=OUT_DTYPES,
        forms={(ARCH, in_dtype): MmaForm(MNEMONIC, steps=steps, lane_k=steps * core.VEC_BYTES, acc="f32")},
        kernel_args=("out", "a", "w", "bias", "a_scale", "w_scale", "M", "N", "K", "lda", "ldo"),
        w_layout_doc="preshuffled [N/16, K/16, 16, 16] bytes" + (" (fp4: 32 values per 16 bytes)" if pack > 1 else ""),
        adapter_checks=_adapter_checks,
        adapter_locals="""  void* a_scale = const_cast<void*>(p.a_scale);
  void* w_scale = const_cast<void*>(p.w_scale);""",
        meta=(
            ("scales", "a_scale e8m0 [M, K/32], w_scale e8m0 [N, K/32], applied by the scaled MFMA"),
            ("operand_format", OPERAND_FORMAT[in_dtype]),
            ("k_unit", "K, tile_k: logical values; config tile_k: storage bytes"),
        ),
        k_per_elem=pack,
        k_multiple=MX_BLOCK,
    )


FAMS = {dt: _family(dt) for dt in (FP8, FP4)}


def config_from_spec(spec: dict) -> Config:
    """The core Config (storage units) of a spec whose tile_k is logical K."""
    arch = str(spec["arch"])
    in_dtype = str(spec.get("in_dtype") or FP8)
    if arch != ARCH:
        raise ValueError(f"{FAMILY}: MX formats need {ARCH}'s block-scaled MFMA; {arch} has none "
                         "(docs/ROCM.md, 'MX formats')")
    if in_dtype not in FAMS:
        raise ValueError(f"{FAMILY}: in_dtype {in_dtype!r} not in {tuple(FAMS)}")
    tile_k = int(spec["tile_k"])
    if tile_k <= 0 or tile_k % MFMA_K:
        raise ValueError(f"{FAMILY}: tile_k={tile_k} must be a positive multiple of {MFMA_K} (the scaled MFMA's K)")
    return core.config_from_spec(dict(spec, in_dtype=in_dtype, tile_k=tile_k // K_PER_BYTE[in_dtype]), FAMS[in_dtype])


def logical_tile_k(cfg: Config) -> int:
    return cfg.tile_k * K_PER_BYTE[cfg.in_dtype]


def mfma_groups(cfg: Config) -> int:  # scaled MFMAs per 16x16 block per K tile
    return cfg.k_steps // cfg.form.steps


def kernel_name(cfg: Config) -> str:
    return f"{OPS[cfg.in_dtype]}.{cfg.in_dtype}.{cfg.out_dtype}.t{cfg.tile_m}x{cfg.tile_n}x{logical_tile_k(cfg)}"


# --------------------------------------------------------------------------------------------
# Scale addressing (FlyDSL values and NumPy arrays alike, as the core's _Geometry)
# --------------------------------------------------------------------------------------------
class MxGeometry(core._Geometry):
    """The core's addressing plus the E8M0 scale bytes each lane feeds the scaled MFMA. Scale
    offsets are bytes into the scale tensor rebased to the tile's first row (A) / column (W)."""

    def scale_block(self, t, kt, g):
        """Block (of 32 K) of the scale lane (l16, lg) supplies to MFMA group g of K tile kt:
        slot block lg of that MFMA, which holds tensor block 4 g + lg of the tile."""
        return kt * (logical_tile_k(self.c) // MX_BLOCK) + g * BLOCKS_PER_MFMA + t["lg"]

    def _scale_offset(self, row, t, kt, g, kb):
        blk = self.scale_block(t, kt, g)
        return self.sel(blk < kb, row * kb + blk, core.oob_elems(1))  # K tail: read 0, not the next row

    def a_scale_offset(self, t, i, kt, g, kb):
        return self._scale_offset(self.a_frag_row(t, i), t, kt, g, kb)

    def w_scale_offset(self, t, j, kt, g, kb):
        # the B operand's column of lane l16 is the C column of lane l16
        return self._scale_offset(self.c_coord(t, 0, j, 0)[1], t, kt, g, kb)

    @staticmethod
    def a_scale_bytes(rows_valid, kb):
        return rows_valid * kb

    def w_scale_bytes(self, n_left, kb):
        return self.min(n_left, self.c.tile_n) * kb


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
def _kernel_core_class():
    class MxKernelCore(core.KernelCore):
        """KernelCore whose per-tile scale registers are the lanes' E8M0 bytes and whose MFMA
        group is the scaled MFMA. The kernel calls begin(...), then begin_scales(a_scale, w_scale,
        K), then the core's K-loop protocol (prologue / k_tile / last_k_tile)."""

        def __init__(self, cfg: Config, mma):
            import flydsl.expr as fx

            super().__init__(cfg, fx.Int8, mma, reg_t=fx.Int32)
            self.geo = MxGeometry(cfg, lambda c, a, b: c.select(a, b), fx.min)

        def begin_scales(self, a_scale, w_scale, K):
            from flydsl.expr import rocdl

            fx, geo = self.fx, self.geo
            self.kb = kb = K // MX_BLOCK
            self.sa_rs = rocdl.make_buffer_ptr(
                a_scale + fx.Int64(self.m0) * fx.Int64(kb),
                num_records_bytes=fx.Int64(geo.a_scale_bytes(self.rows_valid, kb)),
            )
            self.sw_rs = rocdl.make_buffer_ptr(
                w_scale + fx.Int64(self.n0) * fx.Int64(kb),
                num_records_bytes=fx.Int64(geo.w_scale_bytes(self.n_left, kb)),
            )

        def _byte(self, rs, off):
            fx = self.fx
            return fx.ptr_load(rs + off, result_type=fx.Uint8).to(fx.Int32)  # zero-extended E8M0 byte

        def load_tile_scales(self, kt):
            """The lane's scale bytes of K tile kt: [16-row block i of A, group g] at i * groups + g,
            then [16-column block j of W, group g] at (m_rep + j) * groups + g."""
            geo, c, t, kb = self.geo, self.cfg, self.t, self.kb
            groups = range(mfma_groups(c))
            a = [self._byte(self.sa_rs, geo.a_scale_offset(t, i, kt, g, kb)) for i in range(c.m_rep) for g in groups]
            w = [self._byte(self.sw_rs, geo.w_scale_offset(t, j, kt, g, kb)) for j in range(c.n_rep) for g in groups]
            return a + w

        def group_mma(self, i, j, g, a_vecs, b_vecs, acc, tile_scales):
            NG = mfma_groups(self.cfg)
            sa, sw = tile_scales[i * NG + g], tile_scales[(self.cfg.m_rep + j) * NG + g]
            return self.mma(a_vecs, b_vecs, acc, sa, sw)

    return MxKernelCore


def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr import rocdl
    from flydsl.expr.typing import T

    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16}[cfg.out_dtype]
    fmt = OPERAND_FORMAT[cfg.in_dtype]
    pack = K_PER_BYTE[cfg.in_dtype]

    def mma(a_vecs, b_vecs, acc, sa, sw):
        """acc += (A * 2^sa) (B * 2^sw) over one MFMA's 128 K: a_vecs/b_vecs are the lane's
        16-byte vectors (4 x i32; fp8: two, side by side = 8 registers; fp4: one = 4 registers),
        sa/sw the lane's scale registers (E8M0 in byte SCALE_BYTE)."""
        a, b = a_vecs[0], b_vecs[0]
        if len(a_vecs) == 2:
            idx = list(range(8))
            a, b = a.shuffle(a_vecs[1], idx), b.shuffle(b_vecs[1], idx)
        return rocdl.mfma_scale_f32_16x16x128_f8f6f4(T.f32x4, [a, b, acc, fmt, fmt, SCALE_BYTE, sa, SCALE_BYTE, sw])

    kc = _kernel_core_class()(cfg, mma)

    def k_storage(K):  # storage elements (bytes) of a row of A / W
        return K if pack == 1 else K // pack

    @flyc.kernel
    def gemm_mxfp_kernel(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        a_scale: fx.Pointer,
        w_scale: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
    ):
        kc.begin(out, a, w, bias, M, N, k_storage(K), lda, ldo)
        kc.begin_scales(a_scale, w_scale, K)
        acc = kc.acc0()
        regs = kc.prologue()
        for kt in range(0, kc.nk - 1):
            acc, regs = kc.k_tile(kt, acc, regs)
        acc = kc.last_k_tile(acc, regs)
        kc.epilogue(acc)

    @flyc.jit
    def gemm_mxfp_launch(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        a_scale: fx.Pointer,
        w_scale: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
        stream: fx.Stream = fx.Stream(None),
    ):
        gemm_mxfp_kernel(out, a, w, bias, a_scale, w_scale, M, N, K, lda, ldo).launch(
            grid=cfg.grid(M, N), block=(THREADS, 1, 1), stream=stream
        )

    # scalars: M, N, K, lda, ldo (no split-K: no workspace)
    placeholders = core.launcher_placeholders(flyc, fx, out_t, cfg.out_bytes, fx.Int8,
                                              scale_ptrs=((fx.Uint8, 1), (fx.Uint8, 1)), workspace=False,
                                              scalars=(128, 128, 128, 128, 128))
    return flyc, gemm_mxfp_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy model of the scaled MFMA and the emulator of the whole kernel
# --------------------------------------------------------------------------------------------
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # magnitudes of codes 0..7; bit 3 is the sign


def e2m1_table():
    """float64 value of each 4-bit e2m1 code."""
    import numpy as np

    mag = np.array(E2M1_VALUES)
    return np.concatenate([mag, -mag])


def e8m0_table():
    """float64 scale of each E8M0 byte: 2^(b - 127), 255 is NaN."""
    import numpy as np

    val = np.exp2(np.arange(256, dtype=np.float64) - 127)
    val[E8M0_NAN] = np.nan
    return val


def _decode_bytes(x, table):
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    nan = np.isnan(x)
    return np.where(nan, np.nan, table[np.where(nan, 0, x).astype(np.int64)])


def operand_matrix(frag, in_dtype):
    """The 16 x 128 matrix one wave's operand bytes mean to the scaled MFMA, per the CDNA4 operand
    layout: lane (l16, lg) holds row (A) or column (B) l16; fp8 (32 bytes, cbsz/blgp 0): byte p is
    slot 64 (p // 16) + 16 lg + p % 16; fp4 (16 bytes, format 4): byte p holds slots 32 lg + 2p
    (low nibble) and 32 lg + 2p + 1 (high nibble). frag: [64, bytes] float64 (NaN: unwritten LDS)."""
    import numpy as np

    lanes, nbytes = frag.shape
    assert lanes == WAVE
    l16, lg = np.arange(WAVE) % 16, np.arange(WAVE) // 16
    mat = np.full((16, MFMA_K), np.nan)
    p = np.arange(nbytes)
    if in_dtype == FP8:
        assert nbytes == 32
        slot = 64 * (p[None, :] // 16) + 16 * lg[:, None] + p[None, :] % 16
        mat[l16[:, None], slot] = _decode_bytes(frag, core.fp8_table("e4m3fn"))
        return mat
    assert nbytes == 16
    nan = np.isnan(frag)
    b = np.where(nan, 0, frag).astype(np.int64)
    table = e2m1_table()
    lo, hi = np.where(nan, np.nan, table[b & 0xF]), np.where(nan, np.nan, table[b >> 4])
    slot = 32 * lg[:, None] + 2 * p[None, :]
    mat[l16[:, None], slot] = lo
    mat[l16[:, None], slot + 1] = hi
    return mat


def scale_matrix(words, byte):
    """[16 rows, 4 slot blocks] scales of one wave: byte ``byte`` (op_sel) of lane 16 b + r's
    32-bit scale register is the E8M0 scale of (row r, slot block b)."""
    import numpy as np

    w = np.asarray(words, dtype=np.int64)
    codes = (w >> (8 * byte)) & 0xFF
    return e8m0_table()[codes].reshape(BLOCKS_PER_MFMA, 16).T


def scaled_mfma_model(a_frag, b_frag, sa_words, sw_words, byte, in_dtype):
    """v_mfma_scale_f32_16x16x128_f8f6f4 for a set of waves: [n, bytes] operand bytes and [n] scale
    registers per thread -> [n, 4] accumulator increments in the C layout (lane (l16, lg) holds
    rows 4 lg + r of column l16)."""
    import numpy as np

    n = a_frag.shape[0]
    out = np.zeros((n, 4))
    for w0 in range(0, n, WAVE):
        lanes = slice(w0, w0 + WAVE)
        A = operand_matrix(a_frag[lanes], in_dtype) * np.repeat(scale_matrix(sa_words[lanes], byte), MX_BLOCK, 1)
        B = operand_matrix(b_frag[lanes], in_dtype) * np.repeat(scale_matrix(sw_words[lanes], byte), MX_BLOCK, 1)
        C = A @ B.T  # [row, column]
        out[lanes] = C.reshape(LANE_GROUPS, 4, 16).transpose(0, 2, 1).reshape(WAVE, 4)
    return out


def emulate(cfg: Config, A, Wsh, bias, a_scale, w_scale, M, N, K, lda, ldo, out_init):
    """Runs the kernel's dataflow on the CPU (see ``_preshuffle_gemm.emulate``): A and Wsh hold the
    operand BYTES (flat; A with row stride lda bytes, W preshuffled), a_scale / w_scale the E8M0
    bytes [M, K/32] / [N, K/32] (flat), K is logical. Each MFMA group loads its scale bytes through
    ``MxGeometry`` and the buffer model and runs the scaled-MFMA model. out_init receives the
    unrounded results (+ bias)."""
    import numpy as np

    geo = MxGeometry(cfg, lambda c, a, b: np.where(c, a, b), min)
    t = geo.thread(np.arange(THREADS))
    kb = K // MX_BLOCK
    a_scale, w_scale = np.asarray(a_scale, np.int64), np.asarray(w_scale, np.int64)

    def scale_byte(arr, base, nbytes, off):
        return core.buffer_load_model(arr, base, nbytes, off, 1, 1)[:, 0].astype(np.int64) << (8 * SCALE_BYTE)

    def group_mma(tile, kt, g, i, j, a_frag, b_frag):
        sa = scale_byte(a_scale, tile["m0"] * kb, geo.a_scale_bytes(tile["rows_valid"], kb),
                        geo.a_scale_offset(t, i, kt, g, kb))
        sw = scale_byte(w_scale, tile["n0"] * kb, geo.w_scale_bytes(tile["n_left"], kb),
                        geo.w_scale_offset(t, j, kt, g, kb))
        return scaled_mfma_model(a_frag, b_frag, sa, sw, SCALE_BYTE, cfg.in_dtype)

    return core.emulate(cfg, np.asarray(A, np.float64), np.asarray(Wsh, np.float64), bias, M,
                        N, K // K_PER_BYTE[cfg.in_dtype], lda, ldo, out_init, group_mma=group_mma)


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def build(spec: dict, out_dir) -> dict:
    """Compile one specialization (spec tile_k in logical K) and export it (see module docstring)."""
    import json
    from pathlib import Path

    cfg = config_from_spec(spec)
    name = str(spec.get("name") or spec.get("kernel") or kernel_name(cfg))
    spec = dict(spec, name=name, in_dtype=cfg.in_dtype, tile_k=cfg.tile_k)  # the core works in storage units
    res = core.build(spec, out_dir, FAMS[cfg.in_dtype], _make_launcher)
    meta = res["meta"]
    meta.update(tile_k_logical=logical_tile_k(cfg), mfma_groups_per_k_tile=mfma_groups(cfg))
    meta_file = Path(out_dir) / f"{Path(meta['hsaco']).stem}.meta.json"
    meta_file.write_text(json.dumps(meta, indent=1, sort_keys=True))
    return res


DEFAULT_SPECS = [
    dict(arch=ARCH, in_dtype=FP8, out_dtype="bf16", tile_m=128, tile_n=128, tile_k=256),
    dict(arch=ARCH, in_dtype=FP4, out_dtype="bf16", tile_m=128, tile_n=128, tile_k=256),
]


def main(argv=None):
    """Standalone build: ``--tile MxNxK`` (K logical) for one dtype, or the default specs."""
    import argparse
    import re
    import shutil
    from pathlib import Path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--in-dtype", choices=tuple(FAMS))
    ap.add_argument("--out-dtype", choices=OUT_DTYPES, default="bf16")
    ap.add_argument("--tile", help="MxNxK (K logical), e.g. 128x128x256")
    ap.add_argument("--params", default="", help="k=v;k=v (wm, wn, lds_pad, waves_per_eu)")
    args = ap.parse_args(argv)
    params = {k: int(v) for k, v in (kv.split("=") for kv in filter(None, args.params.split(";")))}
    if args.tile:
        tm, tn, tk = (int(x) for x in args.tile.split("x"))
        specs = [dict(arch=ARCH, in_dtype=args.in_dtype or FP8, out_dtype=args.out_dtype, tile_m=tm, tile_n=tn,
                      tile_k=tk)]
    else:
        specs = [s for s in DEFAULT_SPECS if args.in_dtype in (None, s["in_dtype"])]
    for spec in specs:
        spec = dict(spec, params=params)
        name = kernel_name(config_from_spec(spec))
        spec["ident"] = re.sub(r"[^A-Za-z0-9_]", "_", f"{ARCH}_{name}")
        d = Path(args.out) / spec["ident"]
        if d.exists():
            shutil.rmtree(d)
        m = build(spec, d)["meta"]
        print(f"{ARCH} {m['name']}: {m['build_seconds']} s, {m['mfma_instructions']} x{m['mfma_count']}, "
              f"LDS {m['group_segment_fixed_size']} B, VGPR {m['vgpr_count']} AGPR {m['agpr_count']} "
              f"SGPR {m['sgpr_count']}, kernarg {m['kernarg_segment_size']} B, scratch "
              f"{m['private_segment_fixed_size']} -> {d}")


if __name__ == "__main__":
    main()
