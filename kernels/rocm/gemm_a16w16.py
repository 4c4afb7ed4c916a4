"""gemm_a16w16 for ROCm (gfx942, gfx950), written in FlyDSL and exported ahead of time.

    out[m, n] = round_out( sum_k A[m, k] * W[n, k] + bias[n] )      (fp32 accumulate, one rounding)

Operands
    A     bf16/fp16 [M, K], row stride ``lda`` elements (K contiguous).
    W     same dtype, PRESHUFFLED [N/16, K/8, 16, 8]: element (n, k) at [n//16, k//8, n%16, k%8].
    bias  fp32 [N] or null.
    out   bf16/fp16/fp32 [M, N], row stride ``ldo`` elements.
Requirements (reported by build()): N % 16 == 0, K % 8 == 0; any M (ragged M is masked).

Design (DESIGN.md): one workgroup of 4 waves (256 threads) computes a tile_m x tile_n tile.
The waves form a ``wm x wn`` grid; wave (i, j) owns rows [i*tile_m/wm, ...) and columns
[j*tile_n/wn, ...). Per K tile of ``tile_k``:
  * A goes global -> registers (16-byte buffer loads) -> LDS (row-major, rows padded by
    ``lds_pad`` elements) -> registers in the MFMA A-operand layout;
  * the preshuffled W goes straight from global memory into registers in the MFMA B-operand
    layout (one 16-byte load per lane per 16 columns x 32 k), no LDS;
  * MFMA 16x16: v_mfma_f32_16x16x16_{bf16,f16} (two per 32-k step) on gfx942,
    v_mfma_f32_16x16x32_{bf16,f16} on gfx950.
The next tile's A and W are loaded into registers while the current tile is multiplied.
Bounds: every global access goes through a buffer resource whose base is rebased to the
workgroup's tile and whose size is the exact end of the valid region, so rows >= M read zeros
and never write; K tails (K % tile_k) and N tails (N % tile_n) are masked by moving the offset
past the resource size. The bias resource has size 0 when bias is null (reads give 0).

The index arithmetic lives in ``_Geometry``; the kernel and the NumPy emulator ``emulate()``
call the same methods, so the emulator checks the kernel's addressing without a GPU.

Build: ``build(spec, out_dir)`` (docs/TEAM_INTERFACES.md) or, standalone,
``ARCH=gfx950 python kernels/rocm/gemm_a16w16.py --out /tmp/x``.
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

FAMILY = "gemm_a16w16"
OP = "gemm_a16w16"
NUM_WAVES = 4
WAVE = 64
THREADS = NUM_WAVES * WAVE
KSTEP = 32  # k elements per MFMA step (one k32 MFMA on gfx950, two k16 MFMAs on gfx942)
VEC = 8  # 16-byte vectors of 16-bit elements
LDS_LIMIT = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}
SUPPORTED_ARCHS = ("gfx942", "gfx950")
IN_DTYPES = ("bf16", "fp16")
OUT_DTYPES = ("bf16", "fp16", "fp32")
OUT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
# Buffer-resource offsets are 32-bit; masked accesses use this byte offset, which is never
# inside a resource (the adapter keeps every resource below 2 GiB).
OOB_BYTES = 0x80000000
MAX_RESOURCE_BYTES = 0x7FFFFFFF


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    arch: str
    in_dtype: str
    out_dtype: str
    tile_m: int
    tile_n: int
    tile_k: int
    wm: int
    wn: int
    lds_pad: int = 8
    waves_per_eu: int = 0

    # derived --------------------------------------------------------------------------------
    @property
    def m_rep(self) -> int:  # 16-row MFMA blocks per wave
        return self.tile_m // (16 * self.wm)

    @property
    def n_rep(self) -> int:  # 16-column MFMA blocks per wave
        return self.tile_n // (16 * self.wn)

    @property
    def k_steps(self) -> int:  # 32-k steps per K tile
        return self.tile_k // KSTEP

    @property
    def a_vecs_per_row(self) -> int:
        return self.tile_k // VEC

    @property
    def a_passes(self) -> int:  # 16-byte A vectors each thread moves per K tile
        return self.tile_m * self.tile_k // VEC // THREADS

    @property
    def lds_row(self) -> int:  # LDS row stride of the A tile, elements
        return self.tile_k + self.lds_pad

    @property
    def lds_bytes(self) -> int:
        return self.tile_m * self.lds_row * 2

    @property
    def out_bytes(self) -> int:
        return OUT_BYTES[self.out_dtype]

    @property
    def mfma(self) -> str:
        ty = "bf16" if self.in_dtype == "bf16" else "f16"
        return f"v_mfma_f32_16x16x32_{ty}" if self.arch == "gfx950" else f"v_mfma_f32_16x16x16_{ty}"

    def grid(self, M: int, N: int) -> tuple:
        return ((M + self.tile_m - 1) // self.tile_m, (N + self.tile_n - 1) // self.tile_n, 1)

    def validate(self) -> None:
        err = []
        if self.arch not in SUPPORTED_ARCHS:
            err.append(f"arch {self.arch!r} not in {SUPPORTED_ARCHS}")
        if self.in_dtype not in IN_DTYPES:
            err.append(f"in_dtype {self.in_dtype!r} not in {IN_DTYPES}")
        if self.out_dtype not in OUT_DTYPES:
            err.append(f"out_dtype {self.out_dtype!r} not in {OUT_DTYPES}")
        if self.wm * self.wn != NUM_WAVES or self.wm <= 0 or self.wn <= 0:
            err.append(f"wm*wn must be {NUM_WAVES}, got wm={self.wm} wn={self.wn}")
        else:
            if self.tile_m <= 0 or self.tile_m % (16 * self.wm):
                err.append(f"tile_m={self.tile_m} must be a positive multiple of 16*wm={16 * self.wm}")
            if self.tile_n <= 0 or self.tile_n % (16 * self.wn):
                err.append(f"tile_n={self.tile_n} must be a positive multiple of 16*wn={16 * self.wn}")
        if self.tile_k <= 0 or self.tile_k % KSTEP:
            err.append(f"tile_k={self.tile_k} must be a positive multiple of {KSTEP}")
        elif (self.tile_m * self.tile_k // VEC) % THREADS:
            err.append(
                f"tile_m*tile_k/{VEC} = {self.tile_m * self.tile_k // VEC} must be a multiple of {THREADS} "
                "(whole 16-byte A vectors per thread)"
            )
        if self.lds_pad < 0 or self.lds_pad % VEC:
            err.append(f"lds_pad={self.lds_pad} must be a non-negative multiple of {VEC}")
        if self.arch in LDS_LIMIT and self.lds_bytes > LDS_LIMIT[self.arch]:
            err.append(f"LDS {self.lds_bytes} B exceeds {LDS_LIMIT[self.arch]} B on {self.arch}")
        if err:
            raise ValueError(f"{FAMILY}: invalid config {self}: " + "; ".join(err))


def config_from_spec(spec: dict) -> Config:
    params = dict(spec.get("params") or {})
    tile_m, tile_n, tile_k = int(spec["tile_m"]), int(spec["tile_n"]), int(spec["tile_k"])
    wn = int(params.get("wn", 0)) or max(1, min(NUM_WAVES, tile_n // 16))
    while NUM_WAVES % wn:
        wn -= 1
    wm = int(params.get("wm", 0)) or NUM_WAVES // wn
    cfg = Config(
        arch=str(spec["arch"]),
        in_dtype=str(spec.get("in_dtype", "bf16")),
        out_dtype=str(spec.get("out_dtype") or spec.get("in_dtype", "bf16")),
        tile_m=tile_m,
        tile_n=tile_n,
        tile_k=tile_k,
        wm=wm,
        wn=wn,
        lds_pad=int(params.get("lds_pad", 8)),
        waves_per_eu=int(params.get("waves_per_eu", 0)),
    )
    cfg.validate()
    return cfg


def kernel_name(cfg: Config) -> str:
    return f"{FAMILY}.{cfg.in_dtype}.{cfg.out_dtype}.t{cfg.tile_m}x{cfg.tile_n}x{cfg.tile_k}"


# --------------------------------------------------------------------------------------------
# Index arithmetic shared by the kernel (FlyDSL values) and the emulator (NumPy arrays)
# --------------------------------------------------------------------------------------------
class _Geometry:
    """All addressing of the kernel. ``sel(c, a, b)`` is the backend's select; every other
    operation is +, *, //, %, < which FlyDSL integers and NumPy arrays both provide."""

    def __init__(self, cfg: Config, sel, mn):
        self.c = cfg
        self.sel = sel
        self.min = mn

    # thread decomposition
    def thread(self, tid):
        c = self.c
        wave = tid // WAVE
        lane = tid % WAVE
        return dict(wm=wave // c.wn, wn=wave % c.wn, l16=lane % 16, lg=lane // 16)

    # A: global -> registers, one 16-byte vector per pass. Element offsets are relative to the
    # workgroup's rebased A (row m0, column 0).
    def a_vec_coord(self, tid, p):
        c = self.c
        v = p * THREADS + tid
        return v // c.a_vecs_per_row, (v % c.a_vecs_per_row) * VEC  # (row in tile, k in tile)

    def a_global_offset(self, tid, p, kt, K, lda):
        row, kk = self.a_vec_coord(tid, p)
        k = kt * self.c.tile_k + kk
        return self.sel(k < K, row * lda + k, OOB_BYTES // 2)

    def a_lds_store_offset(self, tid, p):
        row, kk = self.a_vec_coord(tid, p)
        return row * self.c.lds_row + kk

    # A: LDS -> registers in the MFMA A layout: lane (l16, lg) holds row l16, k = lg*8 .. +7 of
    # the 32-k step (the B operand uses the same k assignment, so the products pair up).
    def a_lds_load_offset(self, t, i, s):
        c = self.c
        row = t["wm"] * (c.tile_m // c.wm) + i * 16 + t["l16"]
        return row * c.lds_row + s * KSTEP + t["lg"] * VEC

    # W (preshuffled): global -> registers in the MFMA B layout: lane (l16, lg) holds column
    # l16 of the 16-column block, k = lg*8 .. +7 of the 32-k step, i.e. one 16-byte row of the
    # [16, 8] inner block. Offsets are relative to the rebased W (column n0).
    def w_global_offset(self, t, j, s, kt, K):
        c = self.c
        nblk = t["wn"] * c.n_rep + j  # 16-column block inside the tile
        kb = (kt * c.tile_k + s * KSTEP) // VEC + t["lg"]  # 8-k block
        off = nblk * (K * 16) + kb * (16 * VEC) + t["l16"] * VEC
        return self.sel(kb * VEC < K, off, OOB_BYTES // 2)

    # C: lane (l16, lg) of 16x16 block (i, j) holds rows lg*4 + r (r = 0..3), column l16.
    def c_coord(self, t, i, j, r):
        c = self.c
        row = t["wm"] * (c.tile_m // c.wm) + i * 16 + t["lg"] * 4 + r
        col = t["wn"] * (c.tile_n // c.wn) + j * 16 + t["l16"]
        return row, col

    def c_block_col(self, t, j):  # first column of the lane's 16-column block (uniform per wave)
        c = self.c
        return t["wn"] * (c.tile_n // c.wn) + j * 16

    def c_offset(self, t, i, j, r, n_left, ldo):
        row, col = self.c_coord(t, i, j, r)
        return self.sel(self.c_block_col(t, j) < n_left, row * ldo + col, OOB_BYTES // self.c.out_bytes)

    # Resource sizes (bytes) of the per-workgroup rebased buffers.
    @staticmethod
    def a_bytes(rows_valid, lda, K):
        return ((rows_valid - 1) * lda + K) * 2

    def w_bytes(self, n_left, K):
        return self.min(n_left, self.c.tile_n) * K * 2

    def out_bytes_(self, rows_valid, ldo, n_left):
        return ((rows_valid - 1) * ldo + n_left) * self.c.out_bytes


# --------------------------------------------------------------------------------------------
# FlyDSL kernel
# --------------------------------------------------------------------------------------------
def _make_launcher(cfg: Config):
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr import const_expr, gpu, range_constexpr, rocdl
    from flydsl.expr.typing import T

    in_t = fx.BFloat16 if cfg.in_dtype == "bf16" else fx.Float16
    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[cfg.out_dtype]
    gfx950 = cfg.arch == "gfx950"
    bf16 = cfg.in_dtype == "bf16"
    TM, TN, TK = cfg.tile_m, cfg.tile_n, cfg.tile_k
    MR, NR, KS, AP = cfg.m_rep, cfg.n_rep, cfg.k_steps, cfg.a_passes

    def dsl_sel(c, a, b):
        return c.select(a, b)

    geo = _Geometry(cfg, dsl_sel, fx.min)

    def mma(a8, b8, acc):
        """acc += A(16 x 32) * B(32 x 16) for one 32-k step; a8/b8 are a lane's 8 k values."""
        if const_expr(gfx950):
            if const_expr(bf16):
                return rocdl.mfma_f32_16x16x32_bf16(T.f32x4, [a8, b8, acc])
            return rocdl.mfma_f32_16x16x32_f16(T.f32x4, [a8, b8, acc])
        # gfx942: two k16 MFMAs on the low and high 4 k values of each lane
        if const_expr(bf16):
            a8 = a8.bitcast(fx.Int16)
            b8 = b8.bitcast(fx.Int16)
        lo, hi = [0, 1, 2, 3], [4, 5, 6, 7]
        f = rocdl.mfma_f32_16x16x16bf16_1k if bf16 else rocdl.mfma_f32_16x16x16f16
        acc = f(T.f32x4, [a8.shuffle(a8, lo), b8.shuffle(b8, lo), acc])
        return f(T.f32x4, [a8.shuffle(a8, hi), b8.shuffle(b8, hi), acc])

    @flyc.kernel
    def gemm_a16w16_kernel(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
    ):
        tid = fx.thread_idx.x
        bm = fx.block_idx.x
        bn = fx.block_idx.y
        m0 = bm * TM
        n0 = bn * TN
        rows_valid = geo.min(M - m0, TM)
        n_left = N - n0

        # Per-workgroup buffer resources, rebased to the tile (64-bit base arithmetic) and sized
        # to the exact end of the valid region.
        a_rs = rocdl.make_buffer_ptr(
            a + fx.Int64(m0) * fx.Int64(lda), num_records_bytes=fx.Int64(geo.a_bytes(rows_valid, lda, K))
        )
        w_rs = rocdl.make_buffer_ptr(
            w + fx.Int64(n0) * fx.Int64(K), num_records_bytes=fx.Int64(geo.w_bytes(n_left, K))
        )
        o_rs = rocdl.make_buffer_ptr(
            out + (fx.Int64(m0) * fx.Int64(ldo) + fx.Int64(n0)),
            num_records_bytes=fx.Int64(geo.out_bytes_(rows_valid, ldo, n_left)),
        )
        # No bias: a zero-sized resource (every load reads 0) on the unmoved null pointer (no
        # pointer arithmetic on null).
        has_bias = fx.ptrtoint(bias) != fx.Int64(0)
        b_rs = rocdl.make_buffer_ptr(
            bias + has_bias.select(fx.Int64(n0), fx.Int64(0)),
            num_records_bytes=has_bias.select(fx.Int64(n_left) * 4, fx.Int64(0)),
        )

        lds = fx.SharedAllocator().allocate(fx.Array[in_t, TM * cfg.lds_row, 16]).peek()
        s_a = lds.ptr

        t = geo.thread(tid)
        v8 = fx.Vector.make_type(VEC, in_t)

        def load_a(kt):
            return [fx.ptr_load(a_rs + geo.a_global_offset(tid, p, kt, K, lda), result_type=v8) for p in range(AP)]

        def load_w(kt):
            return [
                fx.ptr_load(w_rs + geo.w_global_offset(t, j, s, kt, K), result_type=v8)
                for j in range(NR)
                for s in range(KS)
            ]

        def store_a(regs):
            for p in range_constexpr(AP):
                fx.ptr_store(regs[p], s_a + geo.a_lds_store_offset(tid, p))

        def compute(acc, wregs):
            acc = list(acc)
            for s in range_constexpr(KS):
                afr = [fx.ptr_load(s_a + geo.a_lds_load_offset(t, i, s), result_type=v8) for i in range(MR)]
                for i in range_constexpr(MR):
                    for j in range_constexpr(NR):
                        acc[i * NR + j] = mma(afr[i], wregs[j * KS + s], acc[i * NR + j])
            return acc

        nk = (K + (TK - 1)) // TK
        acc = [fx.Vector.filled(4, 0.0, fx.Float32) for _ in range(MR * NR)]
        a_regs = load_a(0)
        w_regs = load_w(0)
        for kt in range(0, nk - 1):
            store_a(a_regs)
            gpu.barrier()
            w_cur = w_regs
            a_regs = load_a(kt + 1)
            w_regs = load_w(kt + 1)
            acc = compute(acc, w_cur)
            gpu.barrier()
        store_a(a_regs)
        gpu.barrier()
        acc = compute(acc, w_regs)

        # Epilogue: + bias (fp32), round once, store. Rows >= M fall outside o_rs; column
        # blocks >= N are masked to an out-of-range offset.
        for j in range_constexpr(NR):
            col = geo.c_coord(t, 0, j, 0)[1]
            bval = fx.ptr_load(b_rs + col, result_type=fx.Float32)
            for i in range_constexpr(MR):
                vec = fx.Vector(acc[i * NR + j])
                for r in range_constexpr(4):
                    val = vec[r] + bval
                    if const_expr(out_t is not fx.Float32):
                        val = val.to(out_t)
                    fx.ptr_store(val, o_rs + geo.c_offset(t, i, j, r, n_left, ldo))

    @flyc.jit
    def gemm_a16w16_launch(
        out: fx.Pointer,
        a: fx.Pointer,
        w: fx.Pointer,
        bias: fx.Pointer,
        M: fx.Int32,
        N: fx.Int32,
        K: fx.Int32,
        lda: fx.Int32,
        ldo: fx.Int32,
        stream: fx.Stream = fx.Stream(None),
    ):
        gemm_a16w16_kernel(out, a, w, bias, M, N, K, lda, ldo).launch(
            grid=((M + (TM - 1)) // TM, (N + (TN - 1)) // TN, 1), block=(THREADS, 1, 1), stream=stream
        )

    placeholders = (  # alignment promises: A and W 16 bytes (checked by the adapter), out/bias elements
        flyc.from_c_void_p(out_t, None, assumed_align=cfg.out_bytes),
        flyc.from_c_void_p(in_t, None, assumed_align=16),
        flyc.from_c_void_p(in_t, None, assumed_align=16),
        flyc.from_c_void_p(fx.Float32, None, assumed_align=4),
        # example scalars: only their types matter
        128,
        128,
        128,
        128,
        128,
    )
    return flyc, gemm_a16w16_launch, placeholders


# --------------------------------------------------------------------------------------------
# NumPy emulator (uses _Geometry, models buffer OOB, LDS, MFMA lane layouts)
# --------------------------------------------------------------------------------------------
def emulate(cfg: Config, A, Wsh, bias, M, N, K, lda, ldo, out_init):
    """Runs the kernel's dataflow on the CPU, workgroup by workgroup, with all 256 threads as
    NumPy vectors and the same `_Geometry` addressing as the FlyDSL kernel.

    A: flat array holding [M, K] with row stride lda; Wsh: flat preshuffled weight; bias: [N]
    or None; out_init: flat output buffer with row stride ldo, written in place with the fp32
    sums (no output rounding) and returned. Models buffer-resource bounds (past the size: loads
    read 0, stores are dropped; a straddling vector is an assertion error), the LDS tile
    (NaN-initialised) and the MFMA 16x16 operand/accumulator lane layouts of `arch`."""
    import numpy as np

    def np_sel(c, a, b):
        return np.where(c, a, b)

    geo = _Geometry(cfg, np_sel, min)
    tid = np.arange(THREADS)
    t = geo.thread(tid)
    TM, TN, TK = cfg.tile_m, cfg.tile_n, cfg.tile_k
    nk = (K + TK - 1) // TK
    grid = cfg.grid(M, N)

    def buf_load(arr, base, nbytes, off_elems, esize, n):
        """Buffer load of n elements per thread; vectors past the resource size read 0 (the
        kernel never issues a vector that straddles the end, which is asserted)."""
        off = np.asarray(off_elems, dtype=np.int64).reshape(-1)
        ob = off * esize
        inside = ob + n * esize <= nbytes
        assert np.all(inside | (ob >= nbytes)), "straddling buffer access"
        idx = base + off[:, None] + np.arange(n)[None, :]
        res = np.zeros((len(off), n))
        res[inside] = arr[idx[inside]]
        return res

    for bm in range(grid[0]):
        for bn in range(grid[1]):
            m0, n0 = bm * TM, bn * TN
            rows_valid = min(M - m0, TM)
            n_left = N - n0
            a_base, a_nb = m0 * lda, geo.a_bytes(rows_valid, lda, K)
            w_base, w_nb = n0 * K, geo.w_bytes(n_left, K)
            o_base, o_nb = m0 * ldo + n0, geo.out_bytes_(rows_valid, ldo, n_left)
            lds = np.full(TM * cfg.lds_row, np.nan)
            acc = np.zeros((cfg.m_rep, cfg.n_rep, WAVE * NUM_WAVES, 4))
            for kt in range(max(nk, 1)):  # the kernel always multiplies at least one (masked) tile
                # A -> LDS
                for p in range(cfg.a_passes):
                    vals = buf_load(A, a_base, a_nb, geo.a_global_offset(tid, p, kt, K, lda), 2, VEC)
                    so = geo.a_lds_store_offset(tid, p)
                    for q in range(VEC):
                        lds[so + q] = vals[:, q]
                for s in range(cfg.k_steps):
                    afr = []
                    for i in range(cfg.m_rep):
                        lo = geo.a_lds_load_offset(t, i, s)
                        afr.append(np.stack([lds[lo + q] for q in range(VEC)], axis=1))  # [256, 8]
                    for j in range(cfg.n_rep):
                        bfr = buf_load(Wsh, w_base, w_nb, geo.w_global_offset(t, j, s, kt, K), 2, VEC)
                        for i in range(cfg.m_rep):
                            acc[i, j] += _mfma_emulate(afr[i], bfr, cfg.arch)
            # epilogue
            for j in range(cfg.n_rep):
                col = geo.c_coord(t, 0, j, 0)[1]
                bv = np.zeros(THREADS)
                if bias is not None:
                    bv = buf_load(bias, n0, n_left * 4, col, 4, 1)[:, 0]
                for i in range(cfg.m_rep):
                    for r in range(4):
                        off = np.asarray(geo.c_offset(t, i, j, r, n_left, ldo), dtype=np.int64)
                        ok = off * cfg.out_bytes + cfg.out_bytes <= o_nb
                        out_init[o_base + off[ok]] = acc[i, j, ok, r] + bv[ok]
    return out_init


def _mfma_emulate(a8, b8, arch):
    """One 32-k step of 16x16 MFMAs for a wave set. a8/b8: [256, 8] per-thread operands.
    Returns [256, 4] accumulator increments in the C layout (row lg*4+r, column l16)."""
    import numpy as np

    out = np.zeros((a8.shape[0], 4))
    halves = [(0, 8)] if arch == "gfx950" else [(0, 4), (4, 8)]
    for w in range(a8.shape[0] // WAVE):
        aw, bw = a8[w * WAVE : (w + 1) * WAVE], b8[w * WAVE : (w + 1) * WAVE]
        for lo, hi in halves:
            kpl = hi - lo
            Am = np.zeros((16, 4 * kpl))
            Bm = np.zeros((4 * kpl, 16))
            for lane in range(WAVE):
                l16, lg = lane % 16, lane // 16
                Am[l16, lg * kpl : (lg + 1) * kpl] = aw[lane, lo:hi]
                Bm[lg * kpl : (lg + 1) * kpl, l16] = bw[lane, lo:hi]
            Cm = Am @ Bm
            for lane in range(WAVE):
                for r in range(4):
                    out[w * WAVE + lane, r] += Cm[(lane // 16) * 4 + r, lane % 16]
    return out


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def _setup_env(arch: str) -> None:
    cur = os.environ.get("ARCH")
    if cur and cur != arch:
        raise RuntimeError(
            f"{FAMILY}.build: process targets ARCH={cur} but the spec is for {arch}; "
            "FlyDSL's target is fixed per process (run one build process per arch)"
        )
    os.environ["ARCH"] = arch
    os.environ["FLYDSL_GPU_ARCH"] = arch  # flydsl.runtime.device.get_rocm_arch() without hardware
    os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "0"  # reproducible: always compile
    rp = os.environ.get("ROCM_PATH")
    if not rp or not (Path(rp) / "llvm" / "bin" / "ld.lld").exists():
        repo = Path(__file__).resolve().parents[2]
        if str(repo) not in sys.path:
            sys.path.insert(0, str(repo))
        from tools.rocm_toolchain import apply_to_current_process

        apply_to_current_process()


def _strip_debug(obj: Path) -> None:
    """Drop the DWARF of the embedded FlyDSL host runtime (~420 KiB of a ~450 KiB object);
    symbols, including the local ``<sym>__kernels_binary``, are kept."""
    tool = shutil.which("llvm-objcopy") or shutil.which("objcopy")
    if tool is None:
        return
    import subprocess

    subprocess.run([tool, "--strip-debug", str(obj)], check=True)


def _extract_hsaco(obj_path: Path, symbol_prefix: str) -> bytes:
    from elftools.elf.elffile import ELFFile

    with open(obj_path, "rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        found = []
        for sym in symtab.iter_symbols():
            if sym.name.startswith(symbol_prefix) and sym.name.endswith("_binary") and sym["st_size"] > 0:
                sec = elf.get_section(sym["st_shndx"])
                data = sec.data()[sym["st_value"] : sym["st_value"] + sym["st_size"]]
                if data[:4] == b"\x7fELF":
                    found.append(data)
        if len(found) != 1:
            raise RuntimeError(f"{obj_path}: expected one embedded HSACO, found {len(found)}")
        return found[0]


def _isa_stats(isa: str) -> dict:
    def grab(key, cast=int):
        m = re.search(rf"^[\s-]*\.{re.escape(key)}:\s*(\S+)", isa, re.M)
        return cast(m.group(1)) if m else None

    mfma = sorted(set(re.findall(r"^\s*(v_mfma_\w+)", isa, re.M)))
    return {
        "vgpr_count": grab("vgpr_count"),
        "agpr_count": grab("agpr_count"),
        "sgpr_count": grab("sgpr_count"),
        "vgpr_spill_count": grab("vgpr_spill_count"),
        "sgpr_spill_count": grab("sgpr_spill_count"),
        "group_segment_fixed_size": grab("group_segment_fixed_size"),
        "private_segment_fixed_size": grab("private_segment_fixed_size"),
        "kernarg_segment_size": grab("kernarg_segment_size"),
        "mfma_instructions": mfma,
        "mfma_count": len(re.findall(r"^\s*v_mfma_", isa, re.M)),
    }


def _adapter_cpp(ident: str, sym: str, cfg: Config, name: str) -> str:
    out_sz = cfg.out_bytes
    return f"""
// ---- {name} ({cfg.arch}) : generated by kernels/rocm/gemm_a16w16.py ----
// FlyDSL export_to_c entry points (see {ident}.h; declared here so that no header is included
// inside the generator's namespace) and the HIP runtime shim's error formatter.
extern "C" int32_t {sym}(void** args);
extern "C" int32_t {sym}__module_init(void);
extern "C" int32_t {sym}__module_load(int32_t device);
extern "C" int flygemm_rocm_format_error(int code, const char* what, char* err, int err_len);
namespace {{
int {ident}_load(int device, char* err, int err_len) {{
  int rc = {sym}__module_init();
  if (rc != 0) return flygemm_rocm_format_error(rc, "{name}: module init", err, err_len);
  rc = {sym}__module_load(device);
  if (rc != 0) return flygemm_rocm_format_error(rc, "{name}: module load (hipModuleLoadData)", err, err_len);
  return 0;
}}
int {ident}_launch(const flygemm::LaunchArgs& p, char* err, int err_len) {{
  auto fail = [&](const char* msg) {{
    if (err && err_len > 0) {{
      int i = 0;
      const char* pre = "{name}: ";
      for (; *pre && i < err_len - 1; ++pre) err[i++] = *pre;
      for (; *msg && i < err_len - 1; ++msg) err[i++] = *msg;
      err[i] = 0;
    }}
    return -1;
  }};
  if (p.split_k != 1) return fail("split_k must be 1 (no split-K mode)");
  if (p.M < 0 || p.N < 0 || p.K < 0) return fail("negative size");
  if (p.N % 16 != 0) return fail("N must be a multiple of 16 (preshuffled weight)");
  if (p.K % 8 != 0) return fail("K must be a multiple of 8");
  if (p.bias != nullptr && p.bias_dtype != flygemm::DType::fp32) return fail("bias must be fp32");
  if (p.M == 0 || p.N == 0) return 0;
  if (p.lda < p.K || p.ldo < p.N) return fail("row stride smaller than the row");
  // 16-byte vector loads of A and W
  if (p.lda % 8 != 0 || ((uintptr_t)p.a % 16) != 0) return fail("A rows must be 16-byte aligned");
  if (((uintptr_t)p.w % 16) != 0) return fail("W must be 16-byte aligned");
  // 32-bit buffer offsets: every per-workgroup resource must stay below 2 GiB, and the
  // kernel's scalar arguments are int32.
  const long long lim = 0x7fffffffLL;
  if (p.M > lim || p.N > lim || p.K > lim || p.lda > lim || p.ldo > lim) return fail("size exceeds int32");
  if ((long long){cfg.tile_m} * p.lda * 2 >= lim) return fail("lda too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_n} * p.K * 2 >= lim) return fail("K too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_m} * p.ldo * {out_sz} >= lim) return fail("ldo too large for 32-bit buffer offsets");
  void* out = p.out;
  void* a = const_cast<void*>(p.a);
  void* w = const_cast<void*>(p.w);
  void* bias = const_cast<void*>(p.bias);
  int32_t M = (int32_t)p.M, N = (int32_t)p.N, K = (int32_t)p.K;
  int32_t lda = (int32_t)p.lda, ldo = (int32_t)p.ldo;
  void* stream = p.stream;
  void* args[10] = {{&out, &a, &w, &bias, &M, &N, &K, &lda, &ldo, &stream}};
  int rc = {sym}(args);
  if (rc != 0) return flygemm_rocm_format_error(rc, "{name}: launch (hipModuleLaunchKernel)", err, err_len);
  return 0;
}}
}}  // namespace
"""


def build(spec: dict, out_dir) -> dict:
    """Compile one specialization for spec['arch'] and export it (see module docstring)."""
    t0 = time.time()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = config_from_spec(spec)
    name = str(spec.get("name") or spec.get("kernel") or kernel_name(cfg))
    ident = str(spec.get("ident") or re.sub(r"[^A-Za-z0-9_]", "_", f"{cfg.arch}_{name}"))
    sym = f"flygemm_rocm_{ident}"
    _setup_env(cfg.arch)

    dump_dir = Path(tempfile.mkdtemp(prefix="isa_", dir=out_dir))
    os.environ["FLYDSL_DEBUG_DUMP_ASM"] = "1"
    os.environ["FLYDSL_DUMP_DIR"] = str(dump_dir)
    try:
        flyc, launcher, placeholders = _make_launcher(cfg)
        hints = {"waves_per_eu": cfg.waves_per_eu} if cfg.waves_per_eu else None
        comp = flyc.compile[hints] if hints else flyc.compile
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            compiled = comp(launcher, *placeholders)
        compiled.export_to_c(str(out_dir), ident, function_prefix=sym)
        isa_files = sorted(dump_dir.rglob("*final_isa.s"))
        if len(isa_files) != 1:
            raise RuntimeError(f"{FAMILY}.build: expected one ISA dump, found {isa_files}")
        isa = isa_files[0].read_text()
    finally:
        os.environ.pop("FLYDSL_DEBUG_DUMP_ASM", None)
        os.environ.pop("FLYDSL_DUMP_DIR", None)
    shutil.rmtree(dump_dir, ignore_errors=True)

    obj = out_dir / f"{ident}.o"
    _strip_debug(obj)
    hsaco = _extract_hsaco(obj, sym)
    (out_dir / f"{ident}.hsaco").write_bytes(hsaco)
    (out_dir / f"{ident}.s").write_text(isa)
    stats = _isa_stats(isa)
    export_meta = _export_metadata(obj, sym)

    if stats["private_segment_fixed_size"] not in (0, None):
        raise RuntimeError(f"{FAMILY}.build: {name} uses scratch ({stats['private_segment_fixed_size']} B)")
    meta = {
        "family": FAMILY,
        "op": OP,
        "name": name,
        "arch": cfg.arch,
        "config": asdict(cfg),
        "threads": THREADS,
        "waves": [cfg.wm, cfg.wn],
        "m_rep": cfg.m_rep,
        "n_rep": cfg.n_rep,
        "lds_bytes": cfg.lds_bytes,
        "dynamic_lds_bytes": 0,
        "grid": "(ceil(M/tile_m), ceil(N/tile_n), 1)",
        "block": [THREADS, 1, 1],
        "w_layout": "preshuffled [N/16, K/8, 16, 8]",
        "bias": "fp32 [N] or null",
        "requires": {"N_multiple": 16, "K_multiple": 8, "split_k": 1},
        "mfma": cfg.mfma,
        "hsaco": f"{ident}.hsaco",
        "isa": f"{ident}.s",
        "header": f"{ident}.h",
        "export_symbol": sym,
        "kernel_args": ["out", "a", "w", "bias", "M", "N", "K", "lda", "ldo"],
        "launcher_abi": export_meta.get("abi"),
        "flydsl_version": export_meta.get("flydsl_version"),
        "build_seconds": round(time.time() - t0, 2),
        **stats,
    }
    (out_dir / f"{ident}.meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return {
        "objects": [f"{ident}.o"],
        "adapter_cpp": _adapter_cpp(ident, sym, cfg, name),
        "link_libs": [],
        "link_flags": ["-ldl", "-pthread"],
        "meta": meta,
        "requires_k_multiple": 8,
        "requires_n_multiple": 16,
        "max_split_k": 1,
    }


def _export_metadata(obj: Path, sym: str) -> dict:
    """The JSON FlyDSL embeds as ``<sym>__metadata`` in the object."""
    from elftools.elf.elffile import ELFFile

    with open(obj, "rb") as f:
        elf = ELFFile(f)
        for s in elf.get_section_by_name(".symtab").iter_symbols():
            if s.name == f"{sym}__metadata":
                data = elf.get_section(s["st_shndx"]).data()[s["st_value"] : s["st_value"] + s["st_size"]]
                return json.loads(data.rstrip(b"\0").decode())
    return {}


# --------------------------------------------------------------------------------------------
# Standalone use
# --------------------------------------------------------------------------------------------
DEFAULT_SPECS = [
    dict(in_dtype="bf16", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=64),
    dict(in_dtype="fp16", out_dtype="fp16", tile_m=64, tile_n=128, tile_k=64),
    dict(in_dtype="bf16", out_dtype="fp32", tile_m=16, tile_n=64, tile_k=128),
]


def _main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", default=os.environ.get("ARCH", "gfx942"))
    ap.add_argument("--in-dtype")
    ap.add_argument("--out-dtype")
    ap.add_argument("--tile", help="MxNxK, e.g. 128x128x64")
    ap.add_argument("--params", default="", help="k=v;k=v (wm, wn, lds_pad, waves_per_eu)")
    args = ap.parse_args(argv)
    if args.tile:
        tm, tn, tk = (int(x) for x in args.tile.split("x"))
        ind = args.in_dtype or "bf16"
        specs = [dict(in_dtype=ind, out_dtype=args.out_dtype or ind, tile_m=tm, tile_n=tn, tile_k=tk)]
    else:
        specs = DEFAULT_SPECS
    params = {}
    for kv in filter(None, args.params.split(";")):
        k, v = kv.split("=")
        params[k] = int(v) if v.lstrip("-").isdigit() else v
    for spec in specs:
        spec = dict(spec, arch=args.arch, params=params)
        cfg = config_from_spec(spec)
        spec["ident"] = re.sub(r"[^A-Za-z0-9_]", "_", f"{cfg.arch}_{kernel_name(cfg)}")
        d = Path(args.out) / spec["ident"]
        if d.exists():
            shutil.rmtree(d)
        res = build(spec, d)
        m = res["meta"]
        print(
            f"{m['arch']} {m['name']}: {m['build_seconds']} s, {m['mfma_instructions']} x{m['mfma_count']}, "
            f"LDS {m['group_segment_fixed_size']} B, VGPR {m['vgpr_count']} AGPR {m['agpr_count']} "
            f"SGPR {m['sgpr_count']}, kernarg {m['kernarg_segment_size']} B, scratch "
            f"{m['private_segment_fixed_size']} -> {d}"
        )


if __name__ == "__main__":
    _main()
