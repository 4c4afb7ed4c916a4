"""Split-K for the ROCm FlyDSL families (gemm_a16w16, gemm_a8w8, gemm_a8w8_blockscale,
gemm_splitk_decode): the K-slice partition, the fp32 workspace addressing, the partial store,
the fixed-order reduce kernel, their NumPy models, the adapter's split-K checks and the
per-kernel statistics of a module holding two kernels.

Contract (DESIGN.md, csrc/launch.h): with ``split_k = S > 1`` the op hands the record an fp32
workspace ``[S, M_pad, N]`` (M_pad = M rounded up to tile_m) and expects the output rounded once.

  * pass 1 (the family's GEMM kernel, grid z = S): slice s owns the K tiles
    ``[s*KT/S, (s+1)*KT/S)`` of ``KT = ceil(K / tile_k)`` (``k_slice``): S need not divide KT.
    It writes its fp32 partial sums (no bias, no rounding; blockscale: already scaled per
    128-K block) to ``workspace[s, m, n]`` for m < M. The adapter clamps S to KT, so no slice
    is empty (each owns >= 1 tile) and every workspace element the reduce reads was written.
  * pass 2 (``reduce`` kernel, same module, launched by the same exported launcher on the same
    stream right after pass 1, only when S > 1): out[m, n] = round_out(((ws[0] + ws[1]) + ...
    + ws[S-1]) [* a_scale[m or 0] * w_scale[n or 0]] + bias[n]) -- the slices are added in
    index order, the scales and the bias in the oracle's order (csrc/cpu_reference.cpp), no
    atomics: bitwise reproducible run to run.
  * S == 1: the GEMM kernel's own epilogue writes out directly; no workspace, no reduce launch.

gemm_a8w8 (per-tensor / per-row scales) defers its scales to the reduce: the oracle scales the
finished dot product, so scaling the sum of the partials is the oracle's operation order.
Blockscale cannot defer (a scale per 128-K block): its partials are promoted per block.

All index arithmetic here is written once and called by the FlyDSL kernels (DSL integers, the
select is ``c.select(a, b)``) and by the NumPy models (arrays, ``np.where``).
"""

import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from _preshuffle_gemm import OOB_BYTES, THREADS, _Geometry, buffer_load_elems_model, buffer_store_model  # noqa: E402

MAX_SPLIT_K = 16
REDUCE_PREFIX = "splitk_reduce"  # name prefix of the reduce kernel in a module's code object
REDUCE_VEC = 4  # fp32 workspace elements per reduce thread (one 16-byte load per slice)
WS_BYTES = 4  # fp32 workspace element


# --------------------------------------------------------------------------------------------
# Dispatch heuristic (no AMD hardware to measure on: docs/ROCM.md, "Split-K, blockscale and decode")
# --------------------------------------------------------------------------------------------
CU_COUNT = {"gfx942": 304, "gfx950": 256}  # MI300X / MI355X compute units (aiter's tuned tables' cu_num)
MIN_K_TILES_PER_SLICE = 2  # a slice keeps its loads pipelined over at least two K tiles
WS_TRAFFIC_SHARE = 0.25  # workspace write + read at most a quarter of the weight bytes
# (N, K) of the default (N = K = 0) rows: a 4096-wide projection, the middle of the LLM set
DEFAULT_NK = (4096, 4096)


def heuristic_split_k(arch: str, M: int, N: int, K: int, tile, w_elem_bytes: float) -> int:
    """split_k for an M-row problem on a kernel with ``tile`` (tile_m, tile_n, tile_k): the
    smallest power of two that gives every compute unit a workgroup, doubled only while each
    slice keeps >= MIN_K_TILES_PER_SLICE K tiles, the workspace traffic (fp32 partials written
    and read back, 8 * S * M * N bytes) stays within WS_TRAFFIC_SHARE of the weight bytes, and
    S <= MAX_SPLIT_K."""
    tm, tn, tk = tile
    tiles = -(-M // tm) * -(-N // tn)
    k_tiles = -(-K // tk)
    w_bytes = N * K * w_elem_bytes
    s = 1
    while (tiles * s < CU_COUNT[arch] and 2 * s <= MAX_SPLIT_K and k_tiles // (2 * s) >= MIN_K_TILES_PER_SLICE
           and 8 * (2 * s) * M * N <= WS_TRAFFIC_SHARE * w_bytes):
        s *= 2
    return s


# --------------------------------------------------------------------------------------------
# Index arithmetic shared by kernels and models
# --------------------------------------------------------------------------------------------
def k_slice(s, k_tiles, split_k):
    """[begin, end) K tiles of slice s (floor partition: sizes differ by at most one tile)."""
    return (s * k_tiles) // split_k, ((s + 1) * k_tiles) // split_k


def effective_split_k(split_k: int, k_tiles: int, N: int = 0, M_pad: int = 0) -> int:
    """Slices actually launched (the adapter does the same): never more than the K tiles; one
    when N % REDUCE_VEC != 0 or when the slices would span 2 GiB (32-bit buffer offsets)."""
    s = 1 if N % REDUCE_VEC else max(1, min(int(split_k), int(k_tiles)))
    return 1 if s * M_pad * N * WS_BYTES >= 0x7FFFFFFF else s


def ws_offset(s, m, n, M_pad, N):
    """Element offset of workspace[s, m, n] in the fp32 [S, M_pad, N] workspace."""
    return (s * M_pad + m) * N + n


class WsGeometry:
    """Workspace addressing. ``sel(c, a, b)`` is the backend's select."""

    def __init__(self, sel):
        self.sel = sel

    # pass 1: a tile's partials through a resource rebased to workspace[s, m0, n0]
    @staticmethod
    def tile_base(s, m0, n0, M_pad, N):
        return ws_offset(s, m0, n0, M_pad, N)

    @staticmethod
    def tile_bytes(rows_valid, n_left, N):  # end of the tile's valid region
        return ws_offset(0, rows_valid - 1, n_left, 0, N) * WS_BYTES

    def tile_offset(self, row, col, col_valid, N):
        """Element (row, col) of the tile; masked columns go past every resource."""
        return self.sel(col_valid, ws_offset(0, row, col, 0, N), OOB_BYTES // WS_BYTES)

    # pass 2: row m = grid x (HIP allows 2^31 - 1 there, 65536 on y), REDUCE_VEC columns per
    # thread, THREADS * REDUCE_VEC columns per workgroup along grid y
    @staticmethod
    def reduce_grid(M, N):
        return (M, (N + (THREADS * REDUCE_VEC - 1)) // (THREADS * REDUCE_VEC), 1)

    @staticmethod
    def reduce_col(by, tid):
        return (by * THREADS + tid) * REDUCE_VEC

    @staticmethod
    def reduce_row_base(m, N):  # the resource starts at workspace[0, m, 0]
        return ws_offset(0, m, 0, 0, N)

    @staticmethod
    def reduce_bytes(split_k, M_pad, N):  # ... and ends at workspace[S-1, m, N]
        return ws_offset(split_k - 1, 0, N, M_pad, N) * WS_BYTES

    def reduce_offset(self, s, col, M_pad, N, split_k):
        """Slice s of column col, or past the resource (the load returns zeros) for col >= N and for
        s >= split_k: the reduce loads every slice up to MAX_SPLIT_K, and an unused slice's offset
        could wrap 32 bits back into the resource, so it is not left to the range check."""
        live = self.sel(col < N, ws_offset(s, 0, col, M_pad, N), OOB_BYTES // WS_BYTES)
        return self.sel(split_k > s, live, OOB_BYTES // WS_BYTES)


# --------------------------------------------------------------------------------------------
# FlyDSL pieces
# --------------------------------------------------------------------------------------------
def dsl_sel(c, a, b):
    return c.select(a, b)


def kernel_k_slice(k_tiles, split_k):
    """[begin, end) K tiles of this workgroup's slice (grid z)."""
    import flydsl.expr as fx

    return k_slice(fx.block_idx.z, k_tiles, split_k)


def ws_tile_resource(ws, m0, n0, rows_valid, n_left, N, M_pad):
    """Buffer resource over this workgroup's partial tile: workspace[s, m0.., n0..]."""
    import flydsl.expr as fx
    from flydsl.expr import rocdl

    wg = WsGeometry(dsl_sel)
    base = ws + fx.Int64(wg.tile_base(fx.block_idx.z, m0, n0, M_pad, N))
    return rocdl.make_buffer_ptr(base, num_records_bytes=fx.Int64(wg.tile_bytes(rows_valid, n_left, N)))


def store_partial(kc, acc, ws, M_pad):
    """Pass-1 epilogue of the preshuffle core: the raw fp32 accumulators of KernelCore ``kc``
    to the workspace slice (int32 accumulators converted once; no scale, no bias)."""
    fx, geo, c, t = kc.fx, kc.geo, kc.cfg, kc.t
    wg = WsGeometry(dsl_sel)
    rs = ws_tile_resource(ws, kc.m0, kc.n0, kc.rows_valid, kc.n_left, kc.N, M_pad)
    for j in range(c.n_rep):
        col_valid = geo.c_block_col(t, j) < kc.n_left
        for i in range(c.m_rep):
            vec = fx.Vector(acc[i * c.n_rep + j])
            if kc.acc_t is not fx.Float32:
                vec = vec.to(fx.Float32)
            for r in range(4):
                row, col = geo.c_coord(t, i, j, r)
                fx.ptr_store(vec[r], rs + wg.tile_offset(row, col, col_valid, kc.N))


def make_reduce_kernel(out_dtype: str, scaled: bool):
    """The pass-2 kernel (a ``@flyc.kernel``): scaled=True takes a_scale, w_scale and their
    per-row flags (gemm_a8w8), else none. Launch with grid ``WsGeometry.reduce_grid(M, N)`` and
    block (THREADS, 1, 1). Needs N % REDUCE_VEC == 0 (16-byte workspace rows)."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl.expr import rocdl

    out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[out_dtype]
    out_bytes = {"bf16": 2, "fp16": 2, "fp32": 4}[out_dtype]
    wg = WsGeometry(dsl_sel)

    class Reduce:
        """Per-thread state of the reduce (a closure object, as FlyDSL's loop rewriting needs)."""

        def begin(self, ws, M_pad, N, split_k):
            self.m = fx.block_idx.x
            self.col = wg.reduce_col(fx.block_idx.y, fx.thread_idx.x)
            self.M_pad, self.N = M_pad, N
            self.v4 = fx.Vector.make_type(REDUCE_VEC, fx.Float32)  # needs the kernel's MLIR context
            self.ws_rs = rocdl.make_buffer_ptr(
                ws + fx.Int64(wg.reduce_row_base(self.m, N)),
                num_records_bytes=fx.Int64(wg.reduce_bytes(split_k, M_pad, N)),
            )
            return self

        def load(self, s, split_k):
            return fx.Vector(fx.ptr_load(self.ws_rs + wg.reduce_offset(s, self.col, self.M_pad, self.N, split_k),
                                         result_type=self.v4))

        def ordered_sum(self, split_k):
            """The slices' sum in slice order. Every slice's load is issued before the first add (a
            loop over split_k would wait one L2 round trip per slice); slices >= split_k load zeros,
            and adding +0.0 changes no sum but a -0.0, which the bias add (+0.0 without a bias) makes
            +0.0 anyway, so the output is bitwise that of the loop. (The CUDA reduce gained 2-8% on
            the H200 from the same change, twenty-third session; unmeasured on AMD hardware.)"""
            parts = [self.load(s, split_k) for s in range(MAX_SPLIT_K)]
            total = parts[0]
            for part in parts[1:]:
                total = total + part
            return total

        def finish(self, total, out, bias, ldo, scales=None):
            """out[m, col + q] = round(total[q] [* sa * sw] + bias); columns >= N fall past the
            output resource (N elements of row m) and are dropped."""
            N, m, col = self.N, self.m, self.col
            o_rs = rocdl.make_buffer_ptr(out + fx.Int64(m) * fx.Int64(ldo), num_records_bytes=fx.Int64(N * out_bytes))
            has_bias = fx.ptrtoint(bias) != fx.Int64(0)
            b_rs = rocdl.make_buffer_ptr(bias, num_records_bytes=has_bias.select(fx.Int64(N) * 4, fx.Int64(0)))
            if scales is not None:
                a_scale, w_scale, a_row, w_row, M = scales
                sa_rs = rocdl.make_buffer_ptr(a_scale, num_records_bytes=fx.Int64(_Geometry.scale_bytes(M, a_row)))
                sw_rs = rocdl.make_buffer_ptr(w_scale, num_records_bytes=fx.Int64(_Geometry.scale_bytes(N, w_row)))
                sa = fx.ptr_load(sa_rs + _Geometry.scale_offset(m, a_row), result_type=fx.Float32)
            for q in range(REDUCE_VEC):
                val = total[q]
                if scales is not None:
                    sw = fx.ptr_load(sw_rs + _Geometry.scale_offset(col + q, w_row), result_type=fx.Float32)
                    val = val * sa * sw
                val = val + fx.ptr_load(b_rs + (col + q), result_type=fx.Float32)
                if out_t is not fx.Float32:
                    val = val.to(out_t)
                fx.ptr_store(val, o_rs + (col + q))

    rd = Reduce()

    if scaled:

        @flyc.kernel
        def splitk_reduce_scaled(
            out: fx.Pointer, ws: fx.Pointer, bias: fx.Pointer, a_scale: fx.Pointer, w_scale: fx.Pointer,
            M: fx.Int32, N: fx.Int32, ldo: fx.Int32, M_pad: fx.Int32, split_k: fx.Int32,
            a_scale_per_row: fx.Int32, w_scale_per_row: fx.Int32,
        ):
            rd.begin(ws, M_pad, N, split_k)
            rd.finish(rd.ordered_sum(split_k), out, bias, ldo, (a_scale, w_scale, a_scale_per_row, w_scale_per_row, M))

        return splitk_reduce_scaled

    @flyc.kernel
    def splitk_reduce(
        out: fx.Pointer, ws: fx.Pointer, bias: fx.Pointer,
        M: fx.Int32, N: fx.Int32, ldo: fx.Int32, M_pad: fx.Int32, split_k: fx.Int32,
    ):
        rd.begin(ws, M_pad, N, split_k)
        rd.finish(rd.ordered_sum(split_k), out, bias, ldo)

    return splitk_reduce


# Kernel arguments of the reduce, in kernarg order (pointers 8 bytes, int32 scalars).
REDUCE_ARGS = ("out", "ws", "bias", "M", "N", "ldo", "M_pad", "split_k")
REDUCE_SCALED_ARGS = ("out", "ws", "bias", "a_scale", "w_scale", "M", "N", "ldo", "M_pad", "split_k",
                      "a_scale_per_row", "w_scale_per_row")


# --------------------------------------------------------------------------------------------
# NumPy models
# --------------------------------------------------------------------------------------------
def new_workspace(split_k, M_pad, N):
    """NaN-filled fp32 workspace model: an element the reduce reads but pass 1 never wrote
    poisons the result."""
    import numpy as np

    return np.full(split_k * M_pad * N, np.nan)


def partial_store_hook(ws, s, M_pad, N):
    """``store`` hook for ``_preshuffle_gemm.emulate``: writes a workgroup's accumulators to the
    workspace slice s exactly as ``store_partial`` does."""
    import numpy as np

    wg = WsGeometry(np.where)

    def store(acc, ctx):
        geo, t, cfg = ctx["geo"], ctx["t"], ctx["geo"].c
        base = wg.tile_base(s, ctx["m0"], ctx["n0"], M_pad, N)
        nbytes = wg.tile_bytes(ctx["rows_valid"], ctx["n_left"], N)
        for j in range(cfg.n_rep):
            col_valid = geo.c_block_col(t, j) < ctx["n_left"]
            for i in range(cfg.m_rep):
                for r in range(4):
                    row, col = geo.c_coord(t, i, j, r)
                    buffer_store_model(ws, base, nbytes, wg.tile_offset(row, col, col_valid, N), WS_BYTES,
                                       acc[i, j, :, r])

    return store


def emulate_reduce(ws, out, bias, M, N, ldo, M_pad, split_k, scales=None):
    """The reduce kernel on the CPU, workgroup by workgroup with all threads as NumPy vectors:
    fixed-order sum of the slices, optional (a_scale, w_scale, a_per_row, w_per_row) scales,
    bias; writes the unrounded results into the flat ``out`` (row stride ldo). The arithmetic
    is done in the workspace's dtype (float32: the kernel's exact sums; float64: a model)."""
    import numpy as np

    dt = np.asarray(ws).dtype

    def load(*args):
        return buffer_load_elems_model(*args).astype(dt)

    wg = WsGeometry(np.where)
    tid = np.arange(THREADS)
    gx, gy, _ = wg.reduce_grid(M, N)
    for m in range(gx):
        for by in range(gy):
            col = wg.reduce_col(by, tid)
            base, nbytes = wg.reduce_row_base(m, N), wg.reduce_bytes(split_k, M_pad, N)
            parts = [load(ws, base, nbytes, wg.reduce_offset(s, col, M_pad, N, split_k), WS_BYTES, REDUCE_VEC)
                     for s in range(MAX_SPLIT_K)]  # as the kernel: every slice, zeros past split_k
            total = parts[0]
            for part in parts[1:]:
                total = total + part
            bias_nb = N * 4 if bias is not None else 0
            barr = bias if bias is not None else np.zeros(1)
            for q in range(REDUCE_VEC):
                val = total[:, q]
                if scales is not None:
                    a_scale, w_scale, a_row, w_row = scales
                    sa = load(a_scale, 0, _Geometry.scale_bytes(M, a_row),
                              np.full(THREADS, _Geometry.scale_offset(m, a_row)), 4, 1)[:, 0]
                    sw = load(w_scale, 0, _Geometry.scale_bytes(N, w_row), _Geometry.scale_offset(col + q, w_row), 4,
                              1)[:, 0]
                    val = val * sa * sw
                val = val + load(barr, 0, bias_nb, col + q, 4, 1)[:, 0]
                buffer_store_model(out, m * ldo, N * 4, col + q, 4, val)  # row m: N elements (4-byte model)
    return out


def emulate_split(run_slice, k_tiles, M, N, M_pad, split_k, out, ldo, bias, scales=None):
    """Pass 1 + pass 2 of a split-K launch on the CPU, slices clamped as the adapter clamps them.
    ``run_slice(k_range, s, ws)`` runs the family's emulated GEMM kernel of slice s over the K
    tiles ``k_range``, storing its partials into the modelled workspace ``ws`` (NaN-filled:
    an element the reduce reads but no slice wrote poisons the result). Returns (out, ws)."""
    S = effective_split_k(split_k, k_tiles, N, M_pad)
    assert S > 1, "split_k == 1 is the direct path (the family's epilogue)"
    ws = new_workspace(split_k, M_pad, N)  # the op allocates split_k slices; S <= split_k are used
    for s in range(S):
        b, e = k_slice(s, k_tiles, S)
        assert e > b, "empty slice"
        run_slice(range(b, e), s, ws)
    emulate_reduce(ws, out, bias, M, N, ldo, M_pad, S, scales)
    return out, ws


# --------------------------------------------------------------------------------------------
# Adapter (C++) and build support
# --------------------------------------------------------------------------------------------
def adapter_checks(tile_k: int, max_split_k: int, why_not: str = "") -> str:
    """C++ statements (variables ``p``, ``fail``) that validate LaunchArgs' split-K fields and
    declare the kernel arguments ``ws``, ``M_pad``, ``split_k``. ``split_k`` is clamped to the
    number of K tiles (no empty slice), and to 1 when N % 4 != 0 (the reduce reads 16-byte
    workspace rows) or when the used slices span 2 GiB (the reduce's 32-bit offsets)."""
    if max_split_k <= 1:
        reason = f" ({why_not})" if why_not else ""
        return f"""  if (p.split_k != 1) return fail("split_k must be 1{reason}");
  void* ws = nullptr;
  int32_t M_pad = (int32_t)p.M, split_k = 1;"""
    return f"""  if (p.split_k < 1 || p.split_k > {max_split_k}) return fail("split_k must be in [1, {max_split_k}]");
  // Slices are whole K tiles; more slices than tiles would leave some empty.
  const long long k_tiles_ = (p.K + {tile_k - 1}) / {tile_k};
  int32_t split_k = (int32_t)(p.split_k < k_tiles_ ? p.split_k : (k_tiles_ > 0 ? k_tiles_ : 1));
  // The reduce reads 16-byte workspace vectors: rows of N % {REDUCE_VEC} != 0 floats run unsplit.
  if (p.N % {REDUCE_VEC} != 0) split_k = 1;
  // Its 32-bit buffer offsets span the used slices: a larger workspace runs unsplit too.
  if (split_k > 1 && (long long)split_k * p.M_pad * p.N * {WS_BYTES} >= 0x7fffffffLL) split_k = 1;
  void* ws = p.workspace;
  int32_t M_pad = (int32_t)p.M;
  if (split_k > 1) {{
    if (p.workspace == nullptr) return fail("split_k > 1 needs the fp32 workspace");
    if (((uintptr_t)p.workspace % 16) != 0) return fail("workspace must be 16-byte aligned");
    if (p.M_pad < p.M) return fail("M_pad must be >= M");
    M_pad = (int32_t)p.M_pad;
  }}"""


def kernel_sections(isa: str) -> dict:
    """{kernel name: (code text, metadata text)} of every kernel in a FlyDSL ISA listing (the
    code from the kernel's label to its .end_amdhsa_kernel, the metadata list item naming it)."""
    out = {}
    md = isa.split("amdhsa.kernels:", 1)[1] if "amdhsa.kernels:" in isa else ""
    items = re.split(r"^  - ", md, flags=re.M)[1:]
    for item in items:
        m = re.search(r"^\s+\.name:\s+(\S+)", item, re.M)
        if not m:
            continue
        name = m.group(1)
        code = re.search(rf"^{re.escape(name)}:\n(.*?)^\s*\.end_amdhsa_kernel", isa, re.M | re.S)
        out[name] = (code.group(1) if code else "", item)
    return out


def kernel_stats(isa: str) -> dict:
    """Per-kernel register/LDS/kernarg/MFMA statistics of a multi-kernel ISA listing."""
    def grab(text, key):
        m = re.search(rf"^[\s-]*\.{re.escape(key)}:\s*(\d+)", text, re.M)
        return int(m.group(1)) if m else None

    keys = ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
            "group_segment_fixed_size", "private_segment_fixed_size", "kernarg_segment_size")
    stats = {}
    for name, (code, md) in kernel_sections(isa).items():
        s = {k: grab(md, k) for k in keys}
        s["mfma_instructions"] = sorted(set(re.findall(r"^\s*(v_mfma_\w+)", code, re.M)))
        s["mfma_count"] = len(re.findall(r"^\s*v_mfma_", code, re.M))
        stats[name] = s
    return stats
