"""gemm_splitk_decode for ROCm (gfx942, gfx950): memory-bound split-K GEMM for decode-sized M on
PLAIN weights, written in FlyDSL and exported ahead of time (op gemm_a16w16, bf16/fp16).

    out[m, n] = round_out( sum_k A[m, k] * W[n, k] + bias[n] )      (fp32 accumulate, one rounding)

Operands
    A     bf16/fp16 [M, K], row stride ``lda`` elements (K contiguous).
    W     same dtype, PLAIN [N, K], K contiguous (no preshuffle).
    bias  fp32 [N] or null.
    out   bf16/fp16/fp32 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): K % 8 == 0 (16-byte vectors); any N, any M (M <= tile_m is
the design point: each token tile re-reads W).

Design (the weight is the only large operand, so the kernel is a weight stream):
  * "swap AB": the weight rows are the 16 rows of the 16x16 MFMA (operand A), the tokens its
    16 columns (operand B; tile_m = 8 or 16 tokens, lanes of absent tokens read zeros). MFMA per
    32-k step as gemm_a16w16: gfx942 two v_mfma_f32_16x16x16_{bf16,f16}, gfx950 one
    v_mfma_f32_16x16x32_{bf16,f16}.
  * W goes from global memory straight into registers with 16-byte buffer loads (8 k per lane),
    no LDS. Lane (l16, lg) of a wave reads row l16 of a 16-row block; its vector u of a K tile
    starts at k = (4u + lg) * 8, so the 4 lanes of a row read 64 contiguous bytes per
    instruction and a row's 64*unroll bytes per tile are read back to back. The sum over k may
    run in any order, so the activation vector of the lane uses the same k: the products pair.
  * workgroup = 4 waves = wn x wk: wave (wn_i, wk_i) owns ``groups`` 16-row blocks (tile_n =
    16 * groups * wn) and the wk_i-th quarter of every K tile (tile_k = wk * unroll * 32). The
    next K tile's W and A vectors are loaded while the current one is multiplied (register
    double buffer, no barrier in the loop). At the end the wk partial sums are added through
    LDS in wave order (fixed), then bias + one rounding, or the fp32 split-K partial.
  * split-K (``_splitk.py``): grid = (ceil(N / tile_n), ceil(M / tile_m), split_k); slice z owns
    K tiles [z*KT/S, (z+1)*KT/S) and writes its fp32 partial to the workspace; the module's
    reduce kernel (same exported launcher, same stream) adds the slices in order, adds the bias
    and rounds once. split_k == 1 writes out directly.
  * bounds: buffer resources rebased to the tile and sized to the valid region: W rows >= N and
    A rows >= M read zeros; K tails are masked to an out-of-range offset; output rows >= M
    fall outside the output resource, columns >= N are masked per element.

Kernel signature (68 bytes of kernarg): out, a, w, bias, ws, M, N, K, lda, ldo, M_pad, split_k.
Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_splitk_decode.py --out /tmp/x --arch gfx950``.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
import _preshuffle_gemm as core  # noqa: E402
import _splitk as splitk  # noqa: E402
import gemm_a16w16 as a16w16  # noqa: E402
from _preshuffle_gemm import LANE_GROUPS, OOB_BYTES, THREADS, WAVE, MmaForm, oob_elems  # noqa: E402

FAMILY = "gemm_splitk_decode"
OP = "gemm_a16w16"
IN_DTYPES = ("bf16", "fp16")
OUT_DTYPES = ("bf16", "fp16", "fp32")
IN_BYTES, VEC = 2, 8  # 16-byte vectors of 16-bit elements
KSTEP = LANE_GROUPS * VEC  # k per MFMA step: 32
MAX_REGS_VECS = 24  # 16-byte W + A vectors per lane per K tile (x2 buffers): keeps VGPRs < 256
KERNEL_ARGS = ("out", "a", "w", "bias", "ws", "M", "N", "K", "lda", "ldo", "M_pad", "split_k")


@dataclass(frozen=True)
class Config:
    arch: str
    in_dtype: str
    out_dtype: str
    tile_m: int  # tokens per workgroup (MFMA columns used)
    tile_n: int  # weight rows per workgroup
    tile_k: int  # k per K tile (the split-K grain)
    wk: int  # waves splitting each K tile
    waves_per_eu: int
    form: MmaForm

    @property
    def wn(self) -> int:  # waves side by side along N
        return core.NUM_WAVES // self.wk

    @property
    def groups(self) -> int:  # 16-row weight blocks per wave
        return self.tile_n // (16 * self.wn)

    @property
    def unroll(self) -> int:  # 32-k steps per wave per K tile
        return self.tile_k // (self.wk * KSTEP)

    @property
    def k_wave(self) -> int:  # k per wave per K tile
        return self.unroll * KSTEP

    @property
    def out_bytes(self) -> int:
        return core.OUT_BYTES[self.out_dtype]

    @property
    def lds_bytes(self) -> int:  # cross-wave reduction buffer (none when wk == 1)
        return 0 if self.wk == 1 else self.wk * self.wn * self.groups * 4 * WAVE * 4

    @property
    def mfma_per_tile(self) -> int:  # MFMA instructions one wave issues per K tile
        return int(self.groups * self.unroll * VEC / self.form.lane_k)

    def grid(self, M, N, split_k=1) -> tuple:
        """Launch grid (N tiles first), for the DSL launcher (traced values) and the emulator."""
        return ((N + (self.tile_n - 1)) // self.tile_n, (M + (self.tile_m - 1)) // self.tile_m, split_k)

    def as_dict(self) -> dict:
        return asdict(self)

    def validate(self) -> None:
        err = []
        if self.arch not in core.SUPPORTED_ARCHS:
            err.append(f"arch {self.arch!r} not in {core.SUPPORTED_ARCHS}")
        if self.in_dtype not in IN_DTYPES:
            err.append(f"in_dtype {self.in_dtype!r} not in {IN_DTYPES}")
        if self.out_dtype not in OUT_DTYPES:
            err.append(f"out_dtype {self.out_dtype!r} not in {OUT_DTYPES}")
        if self.tile_m not in (8, 16):
            err.append(f"tile_m={self.tile_m} must be 8 or 16 (tokens are the MFMA's 16 columns)")
        if self.wk not in (1, 2, 4):
            err.append(f"wk={self.wk} must be 1, 2 or 4")
        elif self.tile_n <= 0 or self.tile_n % (16 * self.wn):
            err.append(f"tile_n={self.tile_n} must be a positive multiple of 16*wn={16 * self.wn}")
        elif self.tile_k <= 0 or self.tile_k % (self.wk * KSTEP):
            err.append(f"tile_k={self.tile_k} must be a positive multiple of wk*32={self.wk * KSTEP}")
        elif self.unroll * (self.groups + 1) > MAX_REGS_VECS:
            err.append(f"unroll*(groups+1) = {self.unroll * (self.groups + 1)} vectors per K tile exceeds "
                       f"{MAX_REGS_VECS} (register double buffer)")
        if err:
            raise ValueError(f"{FAMILY}: invalid config {self}: " + "; ".join(err))


def config_from_spec(spec: dict) -> Config:
    params = dict(spec.get("params") or {})
    in_dtype = str(spec.get("in_dtype") or "bf16")
    cfg = Config(
        arch=str(spec["arch"]),
        in_dtype=in_dtype,
        out_dtype=str(spec.get("out_dtype") or in_dtype),
        tile_m=int(spec["tile_m"]),
        tile_n=int(spec["tile_n"]),
        tile_k=int(spec["tile_k"]),
        wk=int(params.get("wk", 4)),
        waves_per_eu=int(params.get("waves_per_eu", 0)),
        form=a16w16.FAM.forms.get((str(spec["arch"]), in_dtype), MmaForm("?", 1, 8, "f32")),
    )
    cfg.validate()
    return cfg


def kernel_name(cfg: Config) -> str:
    return f"{FAMILY}.{cfg.in_dtype}.{cfg.out_dtype}.t{cfg.tile_m}x{cfg.tile_n}x{cfg.tile_k}"


# --------------------------------------------------------------------------------------------
# Index arithmetic shared by the kernel (FlyDSL values) and the emulator (NumPy arrays)
# --------------------------------------------------------------------------------------------
class DecodeGeometry:
    """All addressing of the decode kernel; offsets in elements of the buffer they index.
    ``sel(c, a, b)`` is the backend's select."""

    def __init__(self, cfg: Config, sel):
        self.c = cfg
        self.sel = sel

    def thread(self, tid):
        wave, lane = tid // WAVE, tid % WAVE
        return dict(wn=wave % self.c.wn, wk=wave // self.c.wn, lane=lane, l16=lane % 16, lg=lane // 16)

    def k_of(self, t, u, kt):  # first k of the lane's vector u in K tile kt
        c = self.c
        return kt * c.tile_k + t["wk"] * c.k_wave + (u * LANE_GROUPS + t["lg"]) * VEC

    def w_row(self, t, g):  # weight row (relative to n0) the lane reads in block g
        return (t["wn"] * self.c.groups + g) * 16 + t["l16"]

    # W [N, K] plain, resource rebased to row n0: rows >= N are past its end
    def w_offset(self, t, g, u, kt, K):
        k = self.k_of(t, u, kt)
        return self.sel(k < K, self.w_row(t, g) * K + k, oob_elems(IN_BYTES))

    @staticmethod
    def w_bytes(n_left, tile_n, K, mn):
        return mn(n_left, tile_n) * K * IN_BYTES

    # A [M, K], resource rebased to token m0: lane row l16 (>= rows_valid: past the end)
    def a_offset(self, t, u, kt, K, lda):
        k = self.k_of(t, u, kt)
        return self.sel(k < K, t["l16"] * lda + k, oob_elems(IN_BYTES))

    @staticmethod
    def a_bytes(rows_valid, lda, K):
        return ((rows_valid - 1) * lda + K) * IN_BYTES

    # C of block g (swap AB): lane (l16, lg) holds token l16 and weight rows lg*4 + r
    def c_coord(self, t, g, r):  # (token m, weight n) relative to (m0, n0)
        return t["l16"], (t["wn"] * self.c.groups + g) * 16 + t["lg"] * 4 + r

    def n_limit(self, t, n_left):  # columns a lane may store: only wave wk == 0 stores
        return self.sel(t["wk"] == 0, n_left, 0)

    def out_offset(self, m, n, n_lim, ldo):
        return self.sel(n < n_lim, m * ldo + n, OOB_BYTES // self.c.out_bytes)

    def out_bytes(self, rows_valid, ldo, n_left):
        return ((rows_valid - 1) * ldo + n_left) * self.c.out_bytes

    # cross-wave reduction: LDS floats [wk][wn][groups][4][64]
    def lds_offset(self, t, g, r, wk):
        c = self.c
        return (((wk * c.wn + t["wn"]) * c.groups + g) * 4 + r) * WAVE + t["lane"]


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
class DecodeCore:
    """IR-emitting pieces (a closure object of the kernel function, which keeps the loop)."""

    def __init__(self, cfg: Config):
        import flydsl.expr as fx

        self.cfg, self.fx = cfg, fx
        self.in_t = fx.BFloat16 if cfg.in_dtype == "bf16" else fx.Float16
        self.out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[cfg.out_dtype]
        self.geo = DecodeGeometry(cfg, splitk.dsl_sel)
        self.mma = a16w16.make_mma(cfg.arch, cfg.in_dtype)

    def begin(self, out, a, w, bias, M, N, K, lda, ldo):
        from flydsl.expr import rocdl

        fx, c, geo = self.fx, self.cfg, self.geo
        self.M, self.N, self.K, self.lda, self.ldo = M, N, K, lda, ldo
        self.t = geo.thread(fx.thread_idx.x)
        self.n0 = n0 = fx.block_idx.x * c.tile_n
        self.m0 = m0 = fx.block_idx.y * c.tile_m
        self.rows_valid = rows_valid = fx.min(M - m0, c.tile_m)
        self.n_left = n_left = N - n0
        self.w_rs = rocdl.make_buffer_ptr(w + fx.Int64(n0) * fx.Int64(K),
                                          num_records_bytes=fx.Int64(geo.w_bytes(n_left, c.tile_n, K, fx.min)))
        self.a_rs = rocdl.make_buffer_ptr(a + fx.Int64(m0) * fx.Int64(lda),
                                          num_records_bytes=fx.Int64(geo.a_bytes(rows_valid, lda, K)))
        self.out, self.bias = out, bias
        self.vty = fx.Vector.make_type(VEC, self.in_t)
        self.nk = (K + (c.tile_k - 1)) // c.tile_k
        if c.wk > 1:
            lds = fx.SharedAllocator().allocate(fx.Array[fx.Float32, c.lds_bytes // 4, 16]).peek()
            self.s_red = lds.ptr
        return self

    def acc0(self):
        return [self.fx.Vector.filled(4, 0.0, self.fx.Float32) for _ in range(self.cfg.groups)]

    def load_w(self, kt):
        fx, c = self.fx, self.cfg
        return [fx.ptr_load(self.w_rs + self.geo.w_offset(self.t, g, u, kt, self.K), result_type=self.vty)
                for g in range(c.groups) for u in range(c.unroll)]

    def load_a(self, kt):
        fx = self.fx
        return [fx.ptr_load(self.a_rs + self.geo.a_offset(self.t, u, kt, self.K, self.lda), result_type=self.vty)
                for u in range(self.cfg.unroll)]

    def compute(self, acc, w_regs, a_regs):
        c = self.cfg
        acc = list(acc)
        for u in range(c.unroll):
            for g in range(c.groups):
                acc[g] = self.mma([w_regs[g * c.unroll + u]], [a_regs[u]], acc[g])
        return acc

    def reduce_waves(self, acc):
        """[groups][4] fp32 sums of the wk waves that share this lane's outputs, added in wave
        order through LDS (every wave computes them; only wk == 0 stores)."""
        from flydsl.expr import gpu

        fx, c, geo, t = self.fx, self.cfg, self.geo, self.t
        vals = [[fx.Vector(acc[g])[r] for r in range(4)] for g in range(c.groups)]
        if c.wk == 1:
            return vals
        for g in range(c.groups):
            for r in range(4):
                fx.ptr_store(vals[g][r], self.s_red + geo.lds_offset(t, g, r, t["wk"]))
        gpu.barrier()
        out = []
        for g in range(c.groups):
            row = []
            for r in range(4):
                v = fx.ptr_load(self.s_red + geo.lds_offset(t, g, r, 0), result_type=fx.Float32)
                for q in range(1, c.wk):
                    v = v + fx.ptr_load(self.s_red + geo.lds_offset(t, g, r, q), result_type=fx.Float32)
                row.append(v)
            out.append(row)
        return out

    def epilogue(self, sums):
        """out = round_out(sum + bias[n]) for the lane's outputs."""
        from flydsl.expr import rocdl

        fx, c, geo, t = self.fx, self.cfg, self.geo, self.t
        o_rs = rocdl.make_buffer_ptr(self.out + (fx.Int64(self.m0) * fx.Int64(self.ldo) + fx.Int64(self.n0)),
                                     num_records_bytes=fx.Int64(geo.out_bytes(self.rows_valid, self.ldo, self.n_left)))
        has_bias = fx.ptrtoint(self.bias) != fx.Int64(0)
        b_rs = rocdl.make_buffer_ptr(self.bias + has_bias.select(fx.Int64(self.n0), fx.Int64(0)),
                                     num_records_bytes=has_bias.select(fx.Int64(self.n_left) * 4, fx.Int64(0)))
        n_lim = geo.n_limit(t, self.n_left)
        for g in range(c.groups):
            for r in range(4):
                m, n = geo.c_coord(t, g, r)
                val = sums[g][r] + fx.ptr_load(b_rs + n, result_type=fx.Float32)
                if self.out_t is not fx.Float32:
                    val = val.to(self.out_t)
                fx.ptr_store(val, o_rs + geo.out_offset(m, n, n_lim, self.ldo))

    def store_partial(self, sums, ws, M_pad):
        """The fp32 sums to workspace[z, m0 + m, n0 + n] (no bias, no rounding)."""
        fx, c, geo, t = self.fx, self.cfg, self.geo, self.t
        wg = splitk.WsGeometry(splitk.dsl_sel)
        rs = splitk.ws_tile_resource(ws, self.m0, self.n0, self.rows_valid, self.n_left, self.N, M_pad)
        n_lim = geo.n_limit(t, self.n_left)
        for g in range(c.groups):
            for r in range(4):
                m, n = geo.c_coord(t, g, r)
                fx.ptr_store(sums[g][r], rs + wg.tile_offset(m, n, n < n_lim, self.N))


def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    dc = DecodeCore(cfg)
    reduce_kernel = splitk.make_reduce_kernel(cfg.out_dtype, scaled=False)

    @flyc.kernel
    def gemm_splitk_decode_kernel(
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
        dc.begin(out, a, w, bias, M, N, K, lda, ldo)
        kt0, kt1 = splitk.kernel_k_slice(dc.nk, split_k)
        acc = dc.acc0()
        w_regs = dc.load_w(kt0)
        a_regs = dc.load_a(kt0)
        for kt in range(kt0, kt1 - 1):
            w_cur = w_regs
            a_cur = a_regs
            w_regs = dc.load_w(kt + 1)
            a_regs = dc.load_a(kt + 1)
            acc = dc.compute(acc, w_cur, a_cur)
        acc = dc.compute(acc, w_regs, a_regs)
        sums = dc.reduce_waves(acc)
        if split_k > 1:
            dc.store_partial(sums, ws, M_pad)
        else:
            dc.epilogue(sums)

    @flyc.jit
    def gemm_splitk_decode_launch(
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
        gemm_splitk_decode_kernel(out, a, w, bias, ws, M, N, K, lda, ldo, M_pad, split_k).launch(
            grid=cfg.grid(M, N, split_k), block=(THREADS, 1, 1), stream=stream
        )
        if split_k > 1:
            reduce_kernel(out, ws, bias, M, N, ldo, M_pad, split_k).launch(
                grid=splitk.WsGeometry.reduce_grid(M, N), block=(THREADS, 1, 1), stream=stream
            )

    # scalars: M, N, K, lda, ldo, M_pad, split_k
    placeholders = core.launcher_placeholders(flyc, fx, dc.out_t, cfg.out_bytes, dc.in_t,
                                              scalars=(128, 128, 128, 128, 128, 128, 2))
    return flyc, gemm_splitk_decode_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy emulator
# --------------------------------------------------------------------------------------------
def emulate(cfg: Config, A, W, bias, M, N, K, lda, ldo, out_init, split_k=1, M_pad=None):
    """Runs the kernel's dataflow on the CPU, workgroup by workgroup with all 256 threads as
    NumPy vectors and the same ``DecodeGeometry`` addressing: buffer bounds (loads past a
    resource read 0, stores are dropped), the register double buffer's K tiles, the MFMA lane
    layouts (swap AB), the NaN-initialised cross-wave LDS reduction in wave order, and the
    split-K passes (workspace + reduce) as the adapter launches them. A: flat [M, K] with row
    stride lda; W: flat plain [N, K]; out_init: flat output with row stride ldo, written in place
    with the unrounded results and returned."""
    k_tiles = (K + cfg.tile_k - 1) // cfg.tile_k
    S = splitk.effective_split_k(split_k, k_tiles, N)
    if S == 1:
        _emulate_pass(cfg, A, W, bias, M, N, K, lda, ldo, out_init, range(max(k_tiles, 1)), None)
        return out_init
    M_pad = M_pad or (M + cfg.tile_m - 1) // cfg.tile_m * cfg.tile_m

    def run_slice(k_range, s, ws):
        _emulate_pass(cfg, A, W, None, M, N, K, lda, ldo, None, k_range, (ws, s, M_pad))

    return splitk.emulate_split(run_slice, k_tiles, M, N, M_pad, split_k, out_init, ldo, bias)[0]


def _emulate_pass(cfg, A, W, bias, M, N, K, lda, ldo, out, k_range, partial):
    """One launch of the GEMM kernel over the K tiles ``k_range``; ``partial`` = (ws, s, M_pad)
    stores the fp32 sums into workspace slice s instead of the output."""
    import numpy as np

    geo = DecodeGeometry(cfg, np.where)
    wg = splitk.WsGeometry(np.where)
    t = geo.thread(np.arange(THREADS))
    gx, gy, _ = cfg.grid(M, N)
    for bx in range(gx):
        for by in range(gy):
            n0, m0 = bx * cfg.tile_n, by * cfg.tile_m
            rows_valid, n_left = min(M - m0, cfg.tile_m), N - n0
            w_base, w_nb = n0 * K, geo.w_bytes(n_left, cfg.tile_n, K, min)
            a_base, a_nb = m0 * lda, geo.a_bytes(rows_valid, lda, K)
            acc = np.zeros((cfg.groups, THREADS, 4))
            for kt in k_range:
                xv = [core.buffer_load_elems_model(A, a_base, a_nb, geo.a_offset(t, u, kt, K, lda), IN_BYTES, VEC)
                      for u in range(cfg.unroll)]
                for g in range(cfg.groups):
                    for u in range(cfg.unroll):
                        wv = core.buffer_load_elems_model(W, w_base, w_nb, geo.w_offset(t, g, u, kt, K), IN_BYTES, VEC)
                        acc[g] += core.mfma_emulate(wv, xv[u], cfg.form.lane_k)
            # cross-wave reduction through a NaN-initialised LDS model, in wave order
            lds = np.full(max(cfg.lds_bytes // 4, 1), np.nan)
            if cfg.wk > 1:
                for g in range(cfg.groups):
                    for r in range(4):
                        lds[geo.lds_offset(t, g, r, t["wk"])] = acc[g, :, r]
                sums = np.stack([np.stack([sum(lds[geo.lds_offset(t, g, r, q)] for q in range(cfg.wk))
                                           for r in range(4)], axis=1) for g in range(cfg.groups)])
            else:
                sums = acc
            n_lim = geo.n_limit(t, n_left)
            if partial is not None:
                ws, s, M_pad = partial
                base, nbytes = wg.tile_base(s, m0, n0, M_pad, N), wg.tile_bytes(rows_valid, n_left, N)
            else:
                b = np.zeros(1) if bias is None else bias
                b_base, b_nb = (0, 0) if bias is None else (n0, n_left * 4)
                o_base, o_nb = m0 * ldo + n0, geo.out_bytes(rows_valid, ldo, n_left)
            for g in range(cfg.groups):
                for r in range(4):
                    m, n = geo.c_coord(t, g, r)
                    if partial is not None:
                        core.buffer_store_model(ws, base, nbytes, wg.tile_offset(m, n, n < n_lim, N), 4, sums[g, :, r])
                    else:
                        val = sums[g, :, r] + core.buffer_load_elems_model(b, b_base, b_nb, n, 4, 1)[:, 0]
                        core.buffer_store_model(out, o_base, o_nb, geo.out_offset(m, n, n_lim, ldo), cfg.out_bytes,
                                                val)


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export) and adapter
# --------------------------------------------------------------------------------------------
def adapter_cpp(ident: str, sym: str, cfg: Config, name: str) -> str:
    """C++ adapter: flygemm::LaunchArgs -> the FlyDSL export's ``void** args``."""
    args = [f"&{a}" for a in KERNEL_ARGS] + ["&stream"]
    return core.adapter_head(name, ident, sym, cfg.arch, f"{FAMILY}.py") + f"""{splitk.adapter_checks(cfg.tile_k, splitk.MAX_SPLIT_K)}
  if (p.M < 0 || p.N < 0 || p.K < 0) return fail("negative size");
  if (p.K % {VEC} != 0) return fail("K must be a multiple of {VEC}");
  if (p.bias != nullptr && p.bias_dtype != flygemm::DType::fp32) return fail("bias must be fp32");
  if (p.M == 0 || p.N == 0) return 0;
  if (p.lda < p.K || p.ldo < p.N) return fail("row stride smaller than the row");
  if (p.lda % {VEC} != 0 || ((uintptr_t)p.a % 16) != 0) return fail("A rows must be 16-byte aligned");
  if (((uintptr_t)p.w % 16) != 0) return fail("W must be 16-byte aligned");
  const long long lim = 0x7fffffffLL;
  if (p.M > lim || p.N > lim || p.K > lim || p.lda > lim || p.ldo > lim) return fail("size exceeds int32");
  if ((long long){cfg.tile_m} * p.lda * {IN_BYTES} >= lim) return fail("lda too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_n} * p.K * {IN_BYTES} >= lim) return fail("K too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_m} * p.ldo * {cfg.out_bytes} >= lim) return fail("ldo too large for 32-bit buffer offsets");
  void* out = p.out;
  void* a = const_cast<void*>(p.a);
  void* w = const_cast<void*>(p.w);
  void* bias = const_cast<void*>(p.bias);
  int32_t M = (int32_t)p.M, N = (int32_t)p.N, K = (int32_t)p.K;
  int32_t lda = (int32_t)p.lda, ldo = (int32_t)p.ldo;
  void* stream = p.stream;
  void* args[{len(args)}] = {{{", ".join(args)}}};
  int rc = {sym}(args);
  if (rc != 0) return flygemm_rocm_format_error(rc, "{name}: launch (hipModuleLaunchKernel)", err, err_len);
  return 0;
}}
}}  // namespace
"""


def build(spec: dict, out_dir) -> dict:
    """Compile one specialization for spec['arch'] and export it (docs/TEAM_INTERFACES.md)."""
    t0 = time.time()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = config_from_spec(spec)
    name = str(spec.get("name") or kernel_name(cfg))
    ident = str(spec.get("ident") or re.sub(r"[^A-Za-z0-9_]", "_", f"{cfg.arch}_{name}"))
    sym = f"flygemm_rocm_{ident}"
    core._setup_env(cfg.arch, FAMILY)
    isa, export_meta = _compile_and_export(cfg, out_dir, ident, sym)
    stats = splitk.kernel_stats(isa)
    main = next(k for k in stats if not k.startswith(splitk.REDUCE_PREFIX))
    for kname, ks in stats.items():
        if ks["private_segment_fixed_size"] not in (0, None):
            raise RuntimeError(f"{FAMILY}.build: {name} ({kname}) uses scratch")
    meta = {
        "family": FAMILY,
        "op": OP,
        "name": name,
        "arch": cfg.arch,
        "config": cfg.as_dict(),
        "threads": THREADS,
        "waves": [cfg.wn, cfg.wk],
        "groups": cfg.groups,
        "unroll": cfg.unroll,
        "lds_bytes": cfg.lds_bytes,
        "dynamic_lds_bytes": 0,
        "grid": "(ceil(N/tile_n), ceil(M/tile_m), split_k)",
        "block": [THREADS, 1, 1],
        "w_layout": "plain [N, K]",
        "bias": "fp32 [N] or null",
        "requires": {"N_multiple": 1, "K_multiple": VEC, "split_k": splitk.MAX_SPLIT_K},
        "mfma": cfg.form.mnemonic,
        "mfma_per_k_tile": cfg.mfma_per_tile,
        "hsaco": f"{ident}.hsaco",
        "isa": f"{ident}.s",
        "header": f"{ident}.h",
        "export_symbol": sym,
        "kernel_args": list(KERNEL_ARGS),
        "launcher_abi": export_meta.get("abi"),
        "flydsl_version": export_meta.get("flydsl_version"),
        "build_seconds": round(time.time() - t0, 2),
        "kernels": stats,
        **stats[main],
    }
    (out_dir / f"{ident}.meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return {
        "objects": [f"{ident}.o"],
        "adapter_cpp": adapter_cpp(ident, sym, cfg, name),
        "link_libs": [],
        "link_flags": ["-ldl", "-pthread"],
        "meta": meta,
        "requires_k_multiple": VEC,
        "requires_n_multiple": 1,
        "max_split_k": splitk.MAX_SPLIT_K,
    }


def _compile_and_export(cfg: Config, out_dir: Path, ident: str, sym: str):
    """FlyDSL compile + export_to_c; returns (ISA listing, export metadata). Writes <ident>.o
    (debug info stripped), .hsaco and .s into out_dir."""
    import contextlib
    import io

    dump_dir = Path(tempfile.mkdtemp(prefix="isa_", dir=out_dir))
    os.environ["FLYDSL_DEBUG_DUMP_ASM"] = "1"
    os.environ["FLYDSL_DUMP_DIR"] = str(dump_dir)
    try:
        flyc, launcher, placeholders = _make_launcher(cfg)
        comp = flyc.compile[{"waves_per_eu": cfg.waves_per_eu}] if cfg.waves_per_eu else flyc.compile
        with contextlib.redirect_stdout(io.StringIO()):
            compiled = comp(launcher, *placeholders)
        compiled.export_to_c(str(out_dir), ident, function_prefix=sym)
        (isa_file,) = sorted(dump_dir.rglob("*final_isa.s"))
        isa = isa_file.read_text()
    finally:
        os.environ.pop("FLYDSL_DEBUG_DUMP_ASM", None)
        os.environ.pop("FLYDSL_DUMP_DIR", None)
        shutil.rmtree(dump_dir, ignore_errors=True)
    obj = out_dir / f"{ident}.o"
    core._strip_debug(obj)
    (out_dir / f"{ident}.hsaco").write_bytes(core._extract_hsaco(obj, sym))
    (out_dir / f"{ident}.s").write_text(isa)
    return isa, core._export_metadata(obj, sym)


DEFAULT_SPECS = [
    dict(in_dtype="bf16", out_dtype="bf16", tile_m=16, tile_n=32, tile_k=512),
    dict(in_dtype="fp16", out_dtype="fp16", tile_m=16, tile_n=32, tile_k=512),
]

if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", default=os.environ.get("ARCH", "gfx942"))
    ap.add_argument("--tile", help="MxNxK, e.g. 16x32x512")
    ap.add_argument("--params", default="", help="k=v;k=v (wk, waves_per_eu)")
    cli = ap.parse_args()
    params = {k: int(v) for k, v in (kv.split("=") for kv in filter(None, cli.params.split(";")))}
    specs = DEFAULT_SPECS
    if cli.tile:
        tm, tn, tk = (int(x) for x in cli.tile.split("x"))
        specs = [dict(DEFAULT_SPECS[0], tile_m=tm, tile_n=tn, tile_k=tk)]
    for spec in specs:
        spec = dict(spec, arch=cli.arch, params=params)
        d = Path(cli.out) / kernel_name(config_from_spec(spec))
        shutil.rmtree(d, ignore_errors=True)
        m = build(spec, d)["meta"]
        print(f"{m['arch']} {m['name']}: {m['build_seconds']} s, {m['mfma_instructions']} x{m['mfma_count']}, "
              f"LDS {m['group_segment_fixed_size']} B, VGPR {m['vgpr_count']} AGPR {m['agpr_count']} "
              f"SGPR {m['sgpr_count']}, kernarg {m['kernarg_segment_size']} B -> {d}")
