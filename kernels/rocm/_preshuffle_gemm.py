"""Shared core of the ROCm preshuffled-weight GEMM families (FlyDSL 0.4.2, gfx942/gfx950).

Used by kernels/rocm/gemm_a16w16.py, gemm_a8w8.py and gemm_mxfp.py (tools/build_kernels.py hashes
this file into every ROCm kernel's build cache key). A family file supplies a ``Family``
(dtypes, MFMA form per arch and dtype, kernel arguments, adapter checks), its FlyDSL kernel
signature and the MFMA call; everything else lives here:

  * ``Config`` / ``config_from_spec``: tile, wave grid, LDS padding, async copy, scheduling
    hints (``preload``, default table ``PRELOAD_TABLE``), validation;
  * ``_Geometry``: ALL index arithmetic (thread decomposition, A global/LDS offsets and the two
    LDS layouts, the LDS-DMA lane mapping, preshuffled W offsets, C coordinates, masks,
    buffer-resource sizes, scale offsets). The FlyDSL kernel and the NumPy emulator call the
    same methods, so the emulator checks the kernel's addressing without a GPU;
  * ``KernelCore``: the IR-emitting pieces of the kernel (buffer resources rebased to the
    workgroup's tile, LDS staging of A (registers + ds_write, or LDS DMA), preshuffled-W
    register loads, the K-tile pipeline and its scheduling hints, the epilogue with optional
    per-tensor/per-row scales, bias, one rounding, masked store);
  * ``emulate``: the NumPy model of that dataflow (buffer OOB, NaN-poisoned LDS, LDS DMA lane
    order and in-flight poisoning, MFMA lanes);
  * ``build`` / ``adapter_cpp`` / ``main``: ahead-of-time export (``export_to_c``), ISA dump
    and metadata, the C++ adapter from ``flygemm::LaunchArgs``, and the standalone CLI.

Dataflow (one workgroup = 4 waves = 256 threads computes a tile_m x tile_n tile; the waves form
a ``wm x wn`` grid). Every global or LDS vector access moves 16 bytes (``vec`` elements:
8 for 16-bit, 16 for 8-bit operands). Per K tile of ``tile_k``:
  * A: global -> registers (16-byte buffer loads) -> LDS (row-major, rows padded by ``lds_pad``
    elements) -> registers in the MFMA A-operand layout; or, with ``async_copy`` (params
    ``async_copy=1``, gfx950 only), global -> LDS directly by LDS DMA (``buffer_load_dwordx4
    ... lds``: no registers, no ds_write) into one of two LDS stages, in an unpadded layout
    whose 16-byte chunks are XOR-swizzled by row (``_Geometry.a_lds_swizzle``, derived from
    tile_k) because the DMA writes each wave's 64 chunks at consecutive addresses;
  * W (preshuffled [N/16, K/vec, 16, vec]) goes straight from global memory into registers in
    the MFMA B-operand layout (one 16-byte load per lane per 16 columns per k step), no LDS;
  * a "k step" is 4 lane groups x ``vec`` = 32 (16-bit) or 64 (8-bit) k: lane (l16, lg) holds
    row/column l16 and k = lg*vec .. +vec-1 of the step, for A and W alike, so the products pair
    up whatever k order an MFMA uses inside its operands. An MFMA form consumes ``steps`` k steps
    (1, or 2 for gfx950's k128 form) and issues ``steps*vec/lane_k`` instructions on them.
The next tile's A and W are loaded (A: into registers, or by DMA into the other LDS stage)
while the current tile is multiplied; ``preload`` orders that region (KernelCore.schedule_hints).
Bounds: every global access goes through a buffer resource whose base is rebased to the
workgroup's tile and whose size is the exact end of the valid region, so rows >= M read zeros
and never write; K tails and N tails are masked by moving the offset to byte 0x80000000, past
every resource (the adapter keeps resources below 2 GiB).
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

NUM_WAVES = 4
WAVE = 64
THREADS = NUM_WAVES * WAVE
VEC_BYTES = 16  # bytes per lane per global/LDS vector access
LANE_GROUPS = 4  # a 16x16 MFMA's 64 lanes: 16 rows (columns) x 4 k groups
LDS_BANK_CHUNKS = 16  # 16-byte chunks per LDS bank line on gfx950 (64 banks x 4 bytes)
LDS_LIMIT = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}
SUPPORTED_ARCHS = ("gfx942", "gfx950")
# Bytes per storage element of A and W (fp4 e2m1 is stored as packed byte pairs: the core works on
# the bytes, the family converts logical K).
IN_BYTES = {"bf16": 2, "fp16": 2, "fp8_e4m3fn": 1, "fp8_e4m3fnuz": 1, "int8": 1, "fp4_e2m1_x2": 1}
OUT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
# Buffer-resource offsets are 32-bit; masked accesses use this byte offset, which is never
# inside a resource (the adapter keeps every resource below 2 GiB).
OOB_BYTES = 0x80000000
MAX_RESOURCE_BYTES = 0x7FFFFFFF
# Archs with the 16-byte LDS DMA (buffer_load_dwordx4 ... lds); gfx942's moves 4 bytes per lane.
ASYNC_COPY_ARCHS = ("gfx950",)
# kernels CSV ``params`` keys the preshuffle families understand (a typo must not be ignored)
KNOWN_PARAMS = ("wm", "wn", "lds_pad", "waves_per_eu", "async_copy", "preload")


# The fp8 decoder of the NumPy emulators (gemm_a8w8's and gemm_mxfp's), here so that the families share it by the
# core's unique module name (a bare `import gemm_a8w8` can find the CUDA family of that name first).
def fp8_table(fmt: str):
    """float64 values of the 256 bytes of an fp8 format: "e4m3fn" (OCP: bias 7, S.1111.111 is
    NaN, max 448) or "e4m3fnuz" (bias 8, 0x80 is the only NaN, no -0, max 240)."""
    import numpy as np

    bias = {"e4m3fn": 7, "e4m3fnuz": 8}[fmt]
    b = np.arange(256)
    s = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = (b & 0x7).astype(np.float64)
    val = np.where(e == 0, m / 8 * 2.0 ** (1 - bias), (1 + m / 8) * 2.0 ** (e - bias)) * s
    if fmt == "e4m3fn":
        val[(b & 0x7F) == 0x7F] = np.nan
    else:
        val[0x80] = np.nan
    return val


def oob_elems(esize: int) -> int:
    """Element offset whose byte offset is OOB_BYTES as a 32-bit value. For 1-byte elements
    0x80000000 is not an int32, so the same bits are written as -2**31."""
    return OOB_BYTES // esize if esize > 1 else OOB_BYTES - (1 << 32)


# --------------------------------------------------------------------------------------------
# Family description and configuration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MmaForm:
    """How one (arch, in_dtype) uses the 16x16 MFMA."""

    mnemonic: str  # as the ISA listing spells it
    steps: int  # k steps (one 16-byte vector per lane each) one MFMA group consumes
    lane_k: int  # elements per lane per instruction
    acc: str  # accumulator element type: "f32" or "i32"


@dataclass(frozen=True)
class Family:
    name: str  # family file name, e.g. "gemm_a8w8"
    op: str
    in_dtypes: dict  # arch -> in dtypes the family builds for that arch
    out_dtypes: tuple
    forms: dict  # (arch, in_dtype) -> MmaForm
    kernel_args: tuple  # kernel argument names, in kernarg order
    w_layout_doc: str = ""
    adapter_checks: object = None  # cfg -> C++ statements (variables p, fail) after the common checks
    adapter_locals: str = ""  # C++ declarations of the family's extra kernel arguments
    meta: tuple = ()  # extra (key, value) pairs for the build metadata
    k_per_elem: int = 1  # logical K values per storage element (2 for packed fp4); LaunchArgs.K is logical
    max_split_k: object = None  # cfg -> slices the record supports (None: 1); see _splitk.py
    k_multiple: int = 0  # K must be a multiple of this (logical); 0: one 16-byte vector of storage elements

    def k_multiple_of(self, cfg) -> int:
        return self.k_multiple or cfg.vec * self.k_per_elem


@dataclass(frozen=True)
class Config:
    family: str
    arch: str
    in_dtype: str
    out_dtype: str
    tile_m: int
    tile_n: int
    tile_k: int
    wm: int
    wn: int
    lds_pad: int
    waves_per_eu: int
    form: MmaForm
    async_copy: bool = False  # A global -> LDS by buffer_load ... lds (gfx950), see module docstring
    preload: tuple = (0, 0)  # (LDS reads, global loads) scheduled ahead of the first MFMA of a K tile

    # derived --------------------------------------------------------------------------------
    @property
    def elem_bytes(self) -> int:
        return IN_BYTES[self.in_dtype]

    @property
    def vec(self) -> int:  # elements per 16-byte vector
        return VEC_BYTES // self.elem_bytes

    @property
    def kstep(self) -> int:  # k per step: 4 lane groups x one vector
        return LANE_GROUPS * self.vec

    @property
    def m_rep(self) -> int:  # 16-row MFMA blocks per wave
        return self.tile_m // (16 * self.wm)

    @property
    def n_rep(self) -> int:  # 16-column MFMA blocks per wave
        return self.tile_n // (16 * self.wn)

    @property
    def k_steps(self) -> int:  # k steps per K tile
        return self.tile_k // self.kstep

    @property
    def a_vecs_per_row(self) -> int:
        return self.tile_k // self.vec

    @property
    def a_passes(self) -> int:  # 16-byte A vectors each thread moves per K tile
        return self.tile_m * self.tile_k // self.vec // THREADS

    @property
    def lds_row(self) -> int:  # LDS row stride of the A tile, elements
        return self.tile_k + self.lds_pad

    @property
    def lds_stages(self) -> int:  # A tiles in LDS: the async path fills one while the other is read
        return 2 if self.async_copy else 1

    @property
    def lds_stage_elems(self) -> int:
        return self.tile_m * self.lds_row

    @property
    def lds_bytes(self) -> int:
        return self.lds_stages * self.lds_stage_elems * self.elem_bytes

    # instruction counts of one K tile's hot-loop region (what ``preload`` is bounded by)
    @property
    def ds_reads_per_tile(self) -> int:  # 16-byte LDS reads of A fragments, per thread
        return self.m_rep * self.k_steps

    @property
    def ds_writes_per_tile(self) -> int:  # the async copy writes LDS without ds_write
        return 0 if self.async_copy else self.a_passes

    @property
    def vmem_loads_per_tile(self) -> int:  # 16-byte global loads per thread: A (or A DMA), then W
        return self.a_passes + self.n_rep * self.k_steps

    @property
    def out_bytes(self) -> int:
        return OUT_BYTES[self.out_dtype]

    @property
    def mfma(self) -> str:
        return self.form.mnemonic

    @property
    def mfma_per_step(self) -> float:  # instructions per 16x16 block per k step
        return self.vec / self.form.lane_k

    @property
    def mfma_per_tile(self) -> int:  # MFMA instructions one wave issues per K tile
        return int(self.m_rep * self.n_rep * self.k_steps * self.mfma_per_step)

    def grid(self, M, N, split_k=1) -> tuple:
        """Launch grid: one workgroup per output tile and K slice. The DSL launchers call it with
        traced M / N / split_k, the emulators with ints: one definition of the geometry."""
        return ((M + (self.tile_m - 1)) // self.tile_m, (N + (self.tile_n - 1)) // self.tile_n, split_k)

    def as_dict(self) -> dict:
        return asdict(self)

    def validate(self) -> None:
        err = []
        if self.wm * self.wn != NUM_WAVES or self.wm <= 0 or self.wn <= 0:
            err.append(f"wm*wn must be {NUM_WAVES}, got wm={self.wm} wn={self.wn}")
        else:
            if self.tile_m <= 0 or self.tile_m % (16 * self.wm):
                err.append(f"tile_m={self.tile_m} must be a positive multiple of 16*wm={16 * self.wm}")
            if self.tile_n <= 0 or self.tile_n % (16 * self.wn):
                err.append(f"tile_n={self.tile_n} must be a positive multiple of 16*wn={16 * self.wn}")
        kgrain = self.kstep * self.form.steps
        if self.tile_k <= 0 or self.tile_k % kgrain:
            err.append(f"tile_k={self.tile_k} must be a positive multiple of {kgrain} ({self.form.mnemonic})")
        elif (self.tile_m * self.tile_k // self.vec) % THREADS:
            err.append(
                f"tile_m*tile_k/{self.vec} = {self.tile_m * self.tile_k // self.vec} must be a multiple of "
                f"{THREADS} (whole 16-byte A vectors per thread)"
            )
        if self.lds_pad < 0 or self.lds_pad % self.vec:
            err.append(f"lds_pad={self.lds_pad} must be a non-negative multiple of {self.vec}")
        if self.async_copy:
            err += self._async_copy_errors()
        if not err:
            err += self._preload_errors()
        if self.arch in LDS_LIMIT and self.lds_bytes > LDS_LIMIT[self.arch]:
            err.append(f"LDS {self.lds_bytes} B exceeds {LDS_LIMIT[self.arch]} B on {self.arch}")
        if err:
            raise ValueError(f"{self.family}: invalid config {self}: " + "; ".join(err))

    def _async_copy_errors(self) -> list:
        vpr = self.a_vecs_per_row
        err = []
        if self.lds_pad:
            err.append(f"lds_pad={self.lds_pad} with async_copy=1: the async copy writes LDS in lane order, "
                       "so its layout is the tile_k-derived XOR swizzle and has no row padding (use lds_pad=0)")
        if vpr <= 0 or vpr & (vpr - 1):
            err.append(f"async_copy=1 needs tile_k/{self.vec} = {vpr} 16-byte vectors per A row to be a power of "
                       "two (the XOR swizzle must stay inside the row)")
        return err

    def _preload_errors(self) -> list:
        p = self.preload
        if (not isinstance(p, tuple) or len(p) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in p)):
            return [f"preload={p!r} must be a pair of non-negative ints (LDS reads, global loads)"]
        err = []
        if p[0] > self.ds_reads_per_tile:
            err.append(f"preload[0]={p[0]} exceeds the {self.ds_reads_per_tile} A-fragment LDS reads of one K tile "
                       f"(m_rep {self.m_rep} x k_steps {self.k_steps})")
        if p[1] > self.vmem_loads_per_tile:
            err.append(f"preload[1]={p[1]} exceeds the {self.vmem_loads_per_tile} global loads of one K tile "
                       f"(A {self.a_passes} + W n_rep {self.n_rep} x k_steps {self.k_steps})")
        return err


def config_from_spec(spec: dict, fam: Family) -> Config:
    params = dict(spec.get("params") or {})
    arch = str(spec["arch"])
    in_dtype = str(spec.get("in_dtype") or next(iter(fam.in_dtypes.get(arch, ("",)))))
    out_dtype = str(spec.get("out_dtype") or (in_dtype if in_dtype in fam.out_dtypes else fam.out_dtypes[0]))
    err = []
    if arch not in SUPPORTED_ARCHS:
        err.append(f"arch {arch!r} not in {SUPPORTED_ARCHS}")
    elif in_dtype not in fam.in_dtypes[arch]:
        err.append(f"in_dtype {in_dtype!r} not in {fam.in_dtypes[arch]} on {arch}")
    if out_dtype not in fam.out_dtypes:
        err.append(f"out_dtype {out_dtype!r} not in {fam.out_dtypes}")
    if err:
        raise ValueError(f"{fam.name}: invalid spec {spec}: " + "; ".join(err))
    unknown = sorted(set(params) - set(KNOWN_PARAMS))
    if unknown:
        raise ValueError(f"{fam.name}: unknown params {unknown} in {spec.get('name') or spec}; "
                         f"known: {', '.join(KNOWN_PARAMS)}")
    async_copy = _parse_async_copy(params.get("async_copy", 0), arch, fam.name)
    tile_m, tile_n, tile_k = int(spec["tile_m"]), int(spec["tile_n"]), int(spec["tile_k"])
    wn = int(params.get("wn", 0)) or max(1, min(NUM_WAVES, tile_n // 16))
    while NUM_WAVES % wn:
        wn -= 1
    wm = int(params.get("wm", 0)) or NUM_WAVES // wn
    default_pad = 0 if async_copy else VEC_BYTES // IN_BYTES[in_dtype]
    cfg = Config(
        family=fam.name,
        arch=arch,
        in_dtype=in_dtype,
        out_dtype=out_dtype,
        tile_m=tile_m,
        tile_n=tile_n,
        tile_k=tile_k,
        wm=wm,
        wn=wn,
        lds_pad=int(params.get("lds_pad", default_pad)),
        waves_per_eu=int(params.get("waves_per_eu", 0)),
        form=fam.forms[(arch, in_dtype)],
        async_copy=async_copy,
    )
    cfg.validate()  # the tile first: the preload bounds and the default table depend on it
    preload = parse_preload(params["preload"], fam.name) if "preload" in params else default_preload(cfg)
    cfg = replace(cfg, preload=preload)
    cfg.validate()
    return cfg


def _parse_async_copy(value, arch: str, family: str) -> bool:
    """params ``async_copy`` (0 or 1). Checked before anything else about the tile, so asking for
    it on an arch without the instruction is one clear error, not a compiler failure later."""
    if value not in (0, 1, "0", "1", False, True):
        raise ValueError(f"{family}: async_copy={value!r} must be 0 or 1")
    on = bool(int(value))
    if on and arch not in ASYNC_COPY_ARCHS:
        raise ValueError(
            f"{family}: async_copy=1 is not available on {arch}: it needs the 16-byte "
            f"'buffer_load_dwordx4 ... lds' (global -> LDS without registers) of {', '.join(ASYNC_COPY_ARCHS)}; "
            f"{arch} can only copy 4 bytes per lane that way. Use async_copy=0 on {arch}."
        )
    return on


def parse_preload(value, family: str) -> tuple:
    """params ``preload``: "D:V" (CSV) or a pair of ints -> (D, V); bounds are checked by
    Config.validate (they depend on the tile)."""
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) != 2 or not all(re.fullmatch(r"\s*\d+\s*", x) for x in parts):
            raise ValueError(f"{family}: preload={value!r} must be 'D:V' with non-negative ints "
                             "(D LDS reads, V global loads ahead of the first MFMA)")
        return (int(parts[0]), int(parts[1]))
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return tuple(value)
    raise ValueError(f"{family}: preload={value!r} must be 'D:V' or a pair of non-negative ints")


# Default ``preload`` (LDS reads, global loads scheduled ahead of a K tile's first MFMA; see
# KernelCore.schedule_hints), keyed by (tile_m, tile_n, bytes of one A row = tile_k * element
# size), so one table serves bf16/fp16 (2 bytes) and fp8/int8 (1 byte): tiles with the same key
# issue the same number of 16-byte A loads, W loads and A-fragment LDS reads per K tile, which
# is what these counts schedule. Values: the gfx950 8-bit tuning table of the public FlyDSL
# preshuffle GEMM (_TILE_PRELOAD_TABLE in ROCm/FlyDSL kernels/gemm/preshuffle_gemm.py, keyed by
# tile_k = bytes for 8-bit), used here for every dtype and both archs; not measured by flygemm
# (no AMD GPU reachable). Other tiles get PRELOAD_FALLBACK. Every value is clamped to the
# tile's counts (a table entry must never make a valid tile invalid).
PRELOAD_TABLE = {
    (16, 64, 256): (2, 2),
    (16, 64, 512): (4, 4),
    (16, 128, 256): (2, 2),
    (32, 64, 128): (6, 6),
    (64, 64, 128): (4, 4),
    (64, 128, 128): (8, 8),
    (64, 128, 256): (8, 8),
    (64, 256, 128): (8, 8),
    (128, 64, 128): (6, 6),
    (128, 128, 64): (4, 4),
    (128, 128, 128): (8, 8),
    (128, 128, 256): (4, 4),
    (128, 256, 128): (6, 6),
    (256, 128, 128): (6, 6),
}
# Two LDS reads and two loads ahead: what the public FlyDSL preshuffle GEMM's hand schedule
# hoists before the first MFMA (sched_dsrd(2) in its gfx942 hot-loop scheduler).
PRELOAD_FALLBACK = (2, 2)


def default_preload(cfg: Config) -> tuple:
    d, v = PRELOAD_TABLE.get((cfg.tile_m, cfg.tile_n, cfg.tile_k * cfg.elem_bytes), PRELOAD_FALLBACK)
    return (min(d, cfg.ds_reads_per_tile), min(v, cfg.vmem_loads_per_tile))


def kernel_name(cfg: Config) -> str:
    name = f"{cfg.family}.{cfg.in_dtype}.{cfg.out_dtype}.t{cfg.tile_m}x{cfg.tile_n}x{cfg.tile_k}"
    return name + (".async" if cfg.async_copy else "")


# --------------------------------------------------------------------------------------------
# Index arithmetic shared by the kernel (FlyDSL values) and the emulator (NumPy arrays)
# --------------------------------------------------------------------------------------------
class _Geometry:
    """All addressing of the kernel. ``sel(c, a, b)`` is the backend's select; every other
    operation is +, -, *, //, %, < which FlyDSL integers and NumPy arrays both provide.
    Offsets are in elements of the buffer they index."""

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

    # A: global -> registers, one 16-byte vector per pass. Offsets are relative to the
    # workgroup's rebased A (row m0, column 0).
    def a_vec_chunk(self, tid, p):  # (row in tile, 16-byte chunk of the row)
        c = self.c
        v = p * THREADS + tid
        return v // c.a_vecs_per_row, v % c.a_vecs_per_row

    def a_vec_coord(self, tid, p):  # (row in tile, k in tile)
        row, kc = self.a_vec_chunk(tid, p)
        return row, kc * self.c.vec

    def a_global_offset(self, tid, p, kt, K, lda):
        row, kk = self.a_vec_coord(tid, p)
        k = kt * self.c.tile_k + kk
        return self.sel(k < K, row * lda + k, oob_elems(self.c.elem_bytes))

    def a_lds_store_offset(self, tid, p):
        return self.a_lds_offset(*self.a_vec_chunk(tid, p))

    # A in LDS (element offsets inside one stage). Synchronous path: row-major, each row padded
    # by lds_pad elements, which staggers consecutive rows over the LDS banks. Async path: the
    # LDS DMA writes 16 bytes per lane at consecutive addresses (wave base + 16 * lane), so a
    # row cannot be padded; rows are tile_k elements and chunk kc of row r sits at chunk
    # kc ^ a_lds_swizzle(r) of that row instead.
    def a_lds_offset(self, row, kc):
        c = self.c
        if c.async_copy:
            return row * c.tile_k + (kc ^ self.a_lds_swizzle(row)) * c.vec
        return row * c.lds_row + kc * c.vec

    def a_lds_swizzle(self, row):
        """Async-path XOR swizzle, derived from tile_k (vpr = tile_k/vec chunks per row, a power
        of two). An MFMA operand read (ds_read_b128) has 16 lanes read rows r..r+15 at one chunk
        kc. LDS bank conflicts are resolved per phase: 8 lanes x 16 bytes over 32 banks, or 16
        lanes over 64 banks, so both 8 and 16 consecutive rows must land in distinct 16-byte bank
        groups (chunk positions mod 8, resp. mod 16). (r % vpr) alone does that when vpr >= 16;
        for vpr = 4 or 8 a row's chunk positions repeat every 16/vpr rows, and XORing in
        (r // vpr) % (16 // vpr) separates those rows too."""
        vpr = self.c.a_vecs_per_row
        return (row % vpr) ^ ((row // vpr) % max(1, LDS_BANK_CHUNKS // vpr))

    def a_lds_stage(self, kt):  # which LDS stage holds K tile kt
        return kt % self.c.lds_stages

    def last_k_tile(self, nk):  # the kernel multiplies max(nk, 1) tiles (K == 0: one masked tile)
        return self.sel(nk < 1, 0, nk - 1)

    def a_lds_stage_base(self, stage):  # element offset of a stage
        return stage * self.c.lds_stage_elems

    # A: global -> LDS by LDS DMA (async path). Each pass, a wave writes 64 x 16 bytes at its
    # wave-uniform base (the M0 value) + 16 * lane; these two methods give the base and, per
    # thread, the global BYTE offset (the DMA moves bytes: its view of A is byte-typed whatever
    # the element size) of the chunk that belongs at the thread's LDS position.
    def a_dma_lds_wave_base(self, stage, p, wave):  # bytes from the LDS tile's start
        c = self.c
        return self.a_lds_stage_base(stage) * c.elem_bytes + (p * THREADS + wave * WAVE) * VEC_BYTES

    def a_dma_chunk(self, tid, p):
        """(row, global chunk) of A that thread tid copies in pass p: its LDS position
        pos = p*THREADS + tid holds LDS chunk pos % vpr of row pos // vpr, which the swizzle
        assigns to global chunk (pos % vpr) ^ swizzle(row) (the XOR is its own inverse)."""
        vpr = self.c.a_vecs_per_row
        pos = p * THREADS + tid
        row = pos // vpr
        return row, (pos % vpr) ^ self.a_lds_swizzle(row)

    def a_dma_global_byte_offset(self, tid, p, kt, K, lda):
        c = self.c
        row, kc = self.a_dma_chunk(tid, p)
        k = kt * c.tile_k + kc * c.vec
        return self.sel(k < K, (row * lda + k) * c.elem_bytes, oob_elems(1))

    # A: LDS -> registers in the MFMA A layout: lane (l16, lg) holds row l16, k = lg*vec .. +vec-1
    # of k step s (the B operand uses the same k assignment, so the products pair up).
    def a_frag_row(self, t, i):  # row in the tile of the lane's A operand in 16-row block i
        c = self.c
        return t["wm"] * (c.tile_m // c.wm) + i * 16 + t["l16"]

    def a_lds_load_offset(self, t, i, s):
        return self.a_lds_offset(self.a_frag_row(t, i), s * LANE_GROUPS + t["lg"])

    # W (preshuffled [N/16, K/vec, 16, vec]): global -> registers in the MFMA B layout: lane
    # (l16, lg) holds column l16 of the 16-column block, k = lg*vec .. +vec-1 of step s, i.e. one
    # 16-byte row of the [16, vec] inner block. Offsets are relative to the rebased W (column n0).
    def w_global_offset(self, t, j, s, kt, K):
        c = self.c
        nblk = t["wn"] * c.n_rep + j  # 16-column block inside the tile
        kb = (kt * c.tile_k + s * c.kstep) // c.vec + t["lg"]  # vec-k block
        off = nblk * (K * 16) + kb * (16 * c.vec) + t["l16"] * c.vec
        return self.sel(kb * c.vec < K, off, oob_elems(c.elem_bytes))

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

    # Scales (fp32): per_row is 1 (one value per row of A / of W) or 0 (one value). The
    # resources are rebased to the tile's first row/column when per_row (base * per_row).
    @staticmethod
    def scale_offset(idx, per_row):
        return idx * per_row

    @staticmethod
    def scale_bytes(valid, per_row):  # valid*4 when per_row, else 4
        return ((valid - 1) * per_row + 1) * 4

    # Resource sizes (bytes) of the per-workgroup rebased buffers.
    def a_bytes(self, rows_valid, lda, K):
        return ((rows_valid - 1) * lda + K) * self.c.elem_bytes

    def w_bytes(self, n_left, K):
        return self.min(n_left, self.c.tile_n) * K * self.c.elem_bytes

    def out_bytes_(self, rows_valid, ldo, n_left):
        return ((rows_valid - 1) * ldo + n_left) * self.c.out_bytes


# --------------------------------------------------------------------------------------------
# FlyDSL kernel pieces
# --------------------------------------------------------------------------------------------
# sched_group_barrier instruction classes (LLVM AMDGPU SchedGroupMask bits)
SCHED_MFMA = 0x008
SCHED_VMEM_READ = 0x020
SCHED_DS_READ = 0x100


def spread(n: int, slots: int) -> list:
    """n items over ``slots`` slots as evenly as possible, earlier slots first:
    spread(5, 4) == [2, 1, 1, 1]."""
    if slots <= 0:
        return []
    return [(i + 1) * n // slots - i * n // slots for i in range(slots)][::-1] if n > 0 else [0] * slots


class KernelCore:
    """IR-emitting pieces of the kernel. A family's ``@flyc.kernel`` function calls, in order,
    on a KernelCore ``kc`` created outside it (a closure variable):

        kc.begin(out, a, w, bias, M, N, K, lda, ldo)
        acc = kc.acc0()
        regs = kc.prologue()                 # registers carried from one K tile to the next
        for kt in range(0, kc.nk - 1):       # dynamic loop: must stay in the kernel function
            acc, regs = kc.k_tile(kt, acc, regs)
        acc = kc.last_k_tile(acc, regs)
        kc.epilogue(acc[, scales])

    K tile kt, synchronous path (one LDS stage; A staged through registers):
        ds_write A(kt) regs -> LDS; barrier; load A(kt+1), W(kt+1) to registers;
        MFMAs of kt (A fragments read from LDS, W(kt) from registers); barrier
    Async path (gfx950; two LDS stages, A never in registers):
        wait for the LDS DMA of A(kt) (own wave) ; barrier (every wave's DMA has landed and every
        wave is done reading the stage A(kt+1) will overwrite); DMA A(kt+1) -> the other stage;
        load W(kt+1); MFMAs of kt
    In both, the loads of tile kt+1 and the MFMAs of tile kt form one scheduling region that
    ``schedule_hints`` orders according to ``cfg.preload``; a family's per-tile scale registers
    (``load_tile_scales``, e.g. MX E8M0 bytes) for tile kt+1 load right after the MFMAs of kt.

    FlyDSL turns the kernel function's dynamic ``for`` into an scf.for by rewriting that
    function's source, so the loop itself cannot live in a helper; its loop-carried state is
    inferred from the names assigned in the body and the LOCAL objects whose methods it calls,
    which is why ``kc`` must be a closure variable, not a local."""

    def __init__(self, cfg: Config, in_t, mma, reg_t=None):
        """in_t: element type of A in LDS; reg_t: element type of the 16-byte register vectors
        (default in_t; 8-bit operands move as 4 x i32: LLVM has no v16i8 buffer load);
        mma(a_vecs, b_vecs, acc) -> acc for one MFMA group (lists of ``form.steps`` vectors)."""
        import flydsl.expr as fx

        self.cfg = cfg
        self.fx = fx
        self.in_t = in_t
        self.reg_t = reg_t or in_t
        self.mma = mma
        self.out_t = {"bf16": fx.BFloat16, "fp16": fx.Float16, "fp32": fx.Float32}[cfg.out_dtype]
        self.acc_t = fx.Float32 if cfg.form.acc == "f32" else fx.Int32

        def dsl_sel(c, a, b):
            return c.select(a, b)

        self.geo = _Geometry(cfg, dsl_sel, fx.min)

    def begin(self, out, a, w, bias, M, N, K, lda, ldo):
        from flydsl.expr import rocdl

        fx, cfg, geo = self.fx, self.cfg, self.geo
        TM, TN, TK = cfg.tile_m, cfg.tile_n, cfg.tile_k
        self.out, self.M, self.N, self.K, self.lda, self.ldo = out, M, N, K, lda, ldo
        self.tid = tid = fx.thread_idx.x
        bm = fx.block_idx.x
        bn = fx.block_idx.y
        self.m0 = m0 = bm * TM
        self.n0 = n0 = bn * TN
        self.rows_valid = rows_valid = geo.min(M - m0, TM)
        self.n_left = n_left = N - n0

        # Per-workgroup buffer resources, rebased to the tile (64-bit base arithmetic) and sized
        # to the exact end of the valid region.
        self.a_rs = rocdl.make_buffer_ptr(
            a + fx.Int64(m0) * fx.Int64(lda), num_records_bytes=fx.Int64(geo.a_bytes(rows_valid, lda, K))
        )
        self.w_rs = rocdl.make_buffer_ptr(
            w + fx.Int64(n0) * fx.Int64(K), num_records_bytes=fx.Int64(geo.w_bytes(n_left, K))
        )
        self.o_rs = rocdl.make_buffer_ptr(
            out + (fx.Int64(m0) * fx.Int64(ldo) + fx.Int64(n0)),
            num_records_bytes=fx.Int64(geo.out_bytes_(rows_valid, ldo, n_left)),
        )
        # No bias: a zero-sized resource (every load reads 0) on the unmoved null pointer (no
        # pointer arithmetic on null).
        has_bias = fx.ptrtoint(bias) != fx.Int64(0)
        self.b_rs = rocdl.make_buffer_ptr(
            bias + has_bias.select(fx.Int64(n0), fx.Int64(0)),
            num_records_bytes=has_bias.select(fx.Int64(n_left) * 4, fx.Int64(0)),
        )

        lds = fx.SharedAllocator().allocate(fx.Array[self.in_t, cfg.lds_stages * cfg.lds_stage_elems, 16]).peek()
        self.s_a = lds.ptr
        if cfg.async_copy:
            # The DMA's view of A is bytes (offsets from a_dma_global_byte_offset), whatever the
            # element size; same base and size as a_rs.
            a_bytes = rocdl.make_buffer_ptr(
                fx.recast_iter(fx.Int8, a + fx.Int64(m0) * fx.Int64(lda)),
                num_records_bytes=fx.Int64(geo.a_bytes(rows_valid, lda, K)),
            )
            self.a_rsrc_bytes = rocdl.get_buffer_rsrc(a_bytes)
            self.s_a_bytes = fx.recast_iter(fx.Int8, self.s_a)

        self.t = geo.thread(tid)
        self.vty = fx.Vector.make_type(VEC_BYTES * 8 // self.reg_t.width, self.reg_t)
        self.nk = (K + (TK - 1)) // TK
        return self

    def acc0(self):
        zero = 0.0 if self.acc_t is self.fx.Float32 else 0
        return [self.fx.Vector.filled(4, zero, self.acc_t) for _ in range(self.cfg.m_rep * self.cfg.n_rep)]

    def load_a(self, kt):
        fx, geo = self.fx, self.geo
        return [
            fx.ptr_load(self.a_rs + geo.a_global_offset(self.tid, p, kt, self.K, self.lda), result_type=self.vty)
            for p in range(self.cfg.a_passes)
        ]

    def load_w(self, kt):
        fx, geo, c = self.fx, self.geo, self.cfg
        return [
            fx.ptr_load(self.w_rs + geo.w_global_offset(self.t, j, s, kt, self.K), result_type=self.vty)
            for j in range(c.n_rep)
            for s in range(c.k_steps)
        ]

    def store_a(self, regs):
        for p in range(self.cfg.a_passes):
            self.fx.ptr_store(regs[p], self.s_a + self.geo.a_lds_store_offset(self.tid, p))

    def dma_a(self, kt, stage):
        """Async path: A tile kt global -> LDS stage by LDS DMA (buffer_load_dwordx4 ... lds),
        one 16-byte chunk per lane per pass. The async form of the intrinsic is not tracked by
        the compiler's wait insertion: the tracked form (raw_ptr_buffer_load_lds) makes LLVM put
        s_waitcnt vmcnt(0) before the tile's first ds_read_b128, i.e. wait for the NEXT tile's
        DMA, as it cannot tell the two stages apart (seen in the ISA). The explicit ``wait_a``
        plus the barrier in ``k_tile`` order the DMA before the LDS reads instead."""
        from flydsl.expr import rocdl
        from flydsl.expr.typing import T

        fx, geo = self.fx, self.geo
        wave = self.tid // WAVE
        i32 = lambda v: fx.Int32(v).ir_value()  # noqa: E731
        for p in range(self.cfg.a_passes):
            # M0 (the LDS address) must be wave-uniform: the wave base, read from lane 0.
            base = rocdl.readfirstlane(T.i32, fx.Int32(geo.a_dma_lds_wave_base(stage, p, wave)).ir_value())
            lds_ptr = (self.s_a_bytes + fx.Int32(base)).llvm_ptr
            voffset = geo.a_dma_global_byte_offset(self.tid, p, kt, self.K, self.lda)
            rocdl.raw_ptr_buffer_load_async_lds(self.a_rsrc_bytes, lds_ptr, i32(VEC_BYTES), i32(voffset), i32(0), i32(0))

    def wait_a(self):
        """Async path: this wave's LDS DMAs have landed (the other waves' are covered by the
        barrier that follows). vmcnt(0), not the DMA's exact position in the counter: the
        scheduler may interleave the tile's W loads with the DMAs, and those W registers feed
        this tile's MFMAs anyway, issued as long ago as the DMAs. (rocdl.asyncmark /
        wait_asyncmark would compute the count, but LLVM declares those intrinsics without
        nocallback, which makes the kernel request every hidden kernel argument.)"""
        from flydsl.expr import rocdl

        rocdl.s_waitcnt(vmcnt=0)

    def load_tile_scales(self, kt):
        """Registers a family's MFMA reads per K tile besides A and W (block scales); carried
        through the K loop with them and loaded once the previous tile's MFMAs are issued (with
        the A/W prefetch they needed phi copies that waited on the loads). Default: none."""
        return []

    def group_mma(self, i, j, g, a_vecs, b_vecs, acc, tile_scales):
        """MFMA group g of 16x16 block (i, j); families with per-tile scales override it."""
        return self.mma(a_vecs, b_vecs, acc)

    def compute(self, acc, wregs, stage=0, tile_scales=()):
        fx, geo, c = self.fx, self.geo, self.cfg
        MR, NR, KS, G = c.m_rep, c.n_rep, c.k_steps, c.form.steps
        acc = list(acc)
        s_a = self.s_a + geo.a_lds_stage_base(stage) if c.async_copy else self.s_a
        for s0 in range(0, KS, G):
            steps = range(s0, s0 + G)
            afr = [
                [fx.ptr_load(s_a + geo.a_lds_load_offset(self.t, i, s), result_type=self.vty) for s in steps]
                for i in range(MR)
            ]
            for i in range(MR):
                for j in range(NR):
                    acc[i * NR + j] = self.group_mma(i, j, s0 // G, afr[i], [wregs[j * KS + s] for s in steps],
                                                     acc[i * NR + j], tile_scales)
        return acc

    # ---- the K loop -----------------------------------------------------------------------
    def prologue(self, kt0=0):
        """Loads of K tile kt0 (0, or a split-K slice's first); returns the registers carried
        into the loop (sync: A, W, tile scales; async: W and tile scales, A(kt0) goes to its LDS
        stage)."""
        if self.cfg.async_copy:
            self.dma_a(kt0, self.geo.a_lds_stage(kt0))
            return self.load_w(kt0) + self.load_tile_scales(kt0)
        return self.load_a(kt0) + self.load_w(kt0) + self.load_tile_scales(kt0)

    def _split(self, regs):  # (A, W, tile scales)
        na = 0 if self.cfg.async_copy else self.cfg.a_passes
        nw = self.cfg.n_rep * self.cfg.k_steps
        return regs[:na], regs[na:na + nw], regs[na + nw:]

    def k_tile(self, kt, acc, regs):
        """One steady-state K tile: multiply tile kt while tile kt+1 is loaded (see the class
        docstring for the order and the barriers)."""
        from flydsl.expr import gpu, rocdl

        a_regs, w_cur, s_cur = self._split(regs)
        if self.cfg.async_copy:
            self.wait_a()
            gpu.barrier()
            rocdl.sched_barrier(0)
            self.dma_a(kt + 1, self.geo.a_lds_stage(kt + 1))
            w_next = self.load_w(kt + 1)
            acc = self.compute(acc, w_cur, self.geo.a_lds_stage(kt), s_cur)
            s_next = self.load_tile_scales(kt + 1)
            self.schedule_hints()
            return acc, w_next + s_next
        self.store_a(a_regs)
        gpu.barrier()
        rocdl.sched_barrier(0)
        a_next = self.load_a(kt + 1)
        w_next = self.load_w(kt + 1)
        acc = self.compute(acc, w_cur, 0, s_cur)
        s_next = self.load_tile_scales(kt + 1)
        self.schedule_hints()
        gpu.barrier()
        return acc, a_next + w_next + s_next

    def last_k_tile(self, acc, regs, kt_last=None):
        """The loop's last K tile: kt_last (a split-K slice's), default the kernel's last."""
        from flydsl.expr import gpu

        a_regs, w_cur, s_cur = self._split(regs)
        if self.cfg.async_copy:
            self.wait_a()
            gpu.barrier()
            kt_last = self.geo.last_k_tile(self.nk) if kt_last is None else kt_last
            return self.compute(acc, w_cur, self.geo.a_lds_stage(kt_last), s_cur)
        self.store_a(a_regs)
        gpu.barrier()
        return self.compute(acc, w_cur, 0, s_cur)

    def schedule_hints(self):
        """Order the hot-loop region (the loads of tile kt+1 and the MFMAs of tile kt) with
        sched_group_barrier, the meaning the public FlyDSL preshuffle GEMM gives ``preload``:
        first ``preload[1]`` global loads (VMEM reads: the A loads or A LDS-DMA loads, then the
        W loads, in program order) and ``preload[0]`` A-fragment LDS reads, then the MFMAs one
        at a time, each followed by its share of the remaining LDS reads and global loads,
        spread evenly over the tile's MFMAs. Ends with sched_barrier(0) so nothing is moved
        across the region's end. Hints only: data dependences still decide what is legal."""
        from flydsl.expr import rocdl

        c = self.cfg
        d0, v0 = c.preload
        n_mfma = c.mfma_per_tile
        dsrd = spread(c.ds_reads_per_tile - d0, n_mfma)
        vmem = spread(c.vmem_loads_per_tile - v0, n_mfma)
        if v0:
            rocdl.sched_group_barrier(SCHED_VMEM_READ, v0, 0)
        if d0:
            rocdl.sched_group_barrier(SCHED_DS_READ, d0, 0)
        for i in range(n_mfma):
            rocdl.sched_group_barrier(SCHED_MFMA, 1, 0)
            if dsrd[i]:
                rocdl.sched_group_barrier(SCHED_DS_READ, dsrd[i], 0)
            if vmem[i]:
                rocdl.sched_group_barrier(SCHED_VMEM_READ, vmem[i], 0)
        rocdl.sched_barrier(0)

    def epilogue(self, acc, scales=None):
        """out = round_out(acc [* a_scale[m or 0] * w_scale[n or 0]] + bias[n]). Rows >= M fall
        outside the output resource; column blocks >= N are masked to an out-of-range offset.
        ``scales`` = (a_scale, w_scale, a_per_row, w_per_row): fp32 pointers and int32 0/1
        (run-time, branch-free: the per-row flag is the index stride)."""
        from flydsl.expr import rocdl

        fx, geo, c, t = self.fx, self.geo, self.cfg, self.t
        MR, NR = c.m_rep, c.n_rep
        if scales is not None:
            a_scale, w_scale, a_row, w_row = scales
            sa_rs = rocdl.make_buffer_ptr(
                a_scale + fx.Int64(self.m0 * a_row),
                num_records_bytes=fx.Int64(geo.scale_bytes(self.rows_valid, a_row)),
            )
            sw_rs = rocdl.make_buffer_ptr(
                w_scale + fx.Int64(self.n0 * w_row),
                num_records_bytes=fx.Int64(geo.scale_bytes(self.n_left, w_row)),
            )
            sa = [
                [
                    fx.ptr_load(sa_rs + geo.scale_offset(geo.c_coord(t, i, 0, r)[0], a_row), result_type=fx.Float32)
                    for r in range(4)
                ]
                for i in range(MR)
            ]
        for j in range(NR):
            col = geo.c_coord(t, 0, j, 0)[1]
            bval = fx.ptr_load(self.b_rs + col, result_type=fx.Float32)
            if scales is not None:
                swv = fx.ptr_load(sw_rs + geo.scale_offset(col, w_row), result_type=fx.Float32)
            for i in range(MR):
                vec = fx.Vector(acc[i * NR + j])
                if self.acc_t is not fx.Float32:
                    vec = vec.to(fx.Float32)  # int32 -> fp32, round to nearest even
                for r in range(4):
                    if scales is not None:
                        val = vec[r] * sa[i][r] * swv + bval
                    else:
                        val = vec[r] + bval
                    if self.out_t is not fx.Float32:
                        val = val.to(self.out_t)
                    fx.ptr_store(val, self.o_rs + geo.c_offset(t, i, j, r, self.n_left, self.ldo))


# --------------------------------------------------------------------------------------------
# NumPy emulator (uses _Geometry, models buffer OOB, LDS, MFMA lane layouts)
# --------------------------------------------------------------------------------------------
def buffer_load_model(arr, base, nbytes, off_bytes, esize, n):
    """A buffer load of n elements (esize bytes each) per thread at a BYTE offset from the
    resource's base (element ``base`` of ``arr``), as the hardware's 32-bit unsigned offset;
    vectors past the resource size read 0 (the kernel never issues a vector that straddles the
    end, which is asserted, nor one that starts inside an element)."""
    import numpy as np

    ob = np.asarray(off_bytes, dtype=np.int64).reshape(-1) & 0xFFFFFFFF  # 32-bit unsigned
    inside = ob + n * esize <= nbytes
    assert np.all(inside | (ob >= nbytes)), "straddling buffer access"
    assert np.all(ob[inside] % esize == 0), "buffer access inside an element"
    idx = base + (ob // esize)[:, None] + np.arange(n)[None, :]
    res = np.zeros((len(ob), n))
    res[inside] = arr[idx[inside]]
    return res


def buffer_load_elems_model(arr, base, nbytes, off_elems, esize, n):
    """``buffer_load_model`` at an ELEMENT offset."""
    import numpy as np

    return buffer_load_model(arr, base, nbytes, np.asarray(off_elems, dtype=np.int64) * esize, esize, n)


def buffer_store_model(arr, base, nbytes, off_elems, esize, vals):
    """Buffer store of one element per thread at an element offset (32-bit unsigned byte offset):
    stores past the resource size are dropped."""
    import numpy as np

    off = np.asarray(off_elems, dtype=np.int64).reshape(-1)
    ob = (off * esize) & 0xFFFFFFFF
    ok = ob + esize <= nbytes
    arr[base + (ob // esize)[ok]] = np.broadcast_to(vals, off.shape)[ok]


def emulate(cfg: Config, A, Wsh, bias, M, N, K, lda, ldo, out_init, decode=None, scales=None, group_mma=None,
            k_tiles=None, tile_scale=None, store=None):
    """Runs the kernel's dataflow on the CPU, workgroup by workgroup, with all 256 threads as
    NumPy vectors and the same `_Geometry` addressing as the FlyDSL kernel.

    A: flat array holding [M, K] with row stride lda; Wsh: flat preshuffled weight; bias: [N]
    or None; out_init: flat output buffer with row stride ldo, written in place with the
    unrounded float64 results and returned. ``decode`` maps the operand elements (e.g. fp8
    bytes) to values as the arch's MFMA reads them (NaN stays NaN); default: identity.
    ``scales`` = (a_scale, w_scale, a_per_row, w_per_row) for scaled families. Models
    buffer-resource bounds (past the size: loads read 0, stores are dropped; a straddling vector
    is an assertion error; offsets wrap at 32 bits as the hardware's), the LDS tile
    (NaN-initialised) and the MFMA 16x16 operand/accumulator lane layouts of the form.
    ``group_mma(tile, kt, g, i, j, a_frag, b_frag)`` replaces the MFMA model for families whose
    MFMA reads more than the operands (block scales): it gets the workgroup's tile (m0, n0,
    rows_valid, n_left), the K tile, the MFMA group and the undecoded [256, kl] operands, and
    returns the [256, 4] accumulator increments.

    Hooks (kernels/rocm/_splitk.py, gemm_a8w8_blockscale.py): ``k_tiles`` the K tiles to run
    (a split-K slice; default all); ``tile_scale(part, kt, ctx)`` the contribution of K tile kt
    given its raw products (default: unchanged); ``store(acc, ctx)`` replaces the epilogue.
    ``ctx`` holds geo, t, m0, n0, rows_valid, n_left of the workgroup."""
    import numpy as np

    def np_sel(c, a, b):
        return np.where(c, a, b)

    geo = _Geometry(cfg, np_sel, min)
    tid = np.arange(THREADS)
    t = geo.thread(tid)
    TM, TN, TK = cfg.tile_m, cfg.tile_n, cfg.tile_k
    V, G, esz = cfg.vec, cfg.form.steps, cfg.elem_bytes
    nk = (K + TK - 1) // TK
    grid = cfg.grid(M, N)
    dec = decode or (lambda x: x)

    buf_load_bytes = buffer_load_model

    def buf_load(arr, base, nbytes, off_elems, esize, n):
        return buf_load_bytes(arr, base, nbytes, np.asarray(off_elems, dtype=np.int64) * esize, esize, n)

    if scales is not None:
        a_scale, w_scale, a_row, w_row = scales
    for bm in range(grid[0]):
        for bn in range(grid[1]):
            m0, n0 = bm * TM, bn * TN
            rows_valid = min(M - m0, TM)
            n_left = N - n0
            a_base, a_nb = m0 * lda, geo.a_bytes(rows_valid, lda, K)
            w_base, w_nb = n0 * K, geo.w_bytes(n_left, K)
            o_base, o_nb = m0 * ldo + n0, geo.out_bytes_(rows_valid, ldo, n_left)
            lds = np.full(cfg.lds_stages * cfg.lds_stage_elems, np.nan)
            acc = np.zeros((cfg.m_rep, cfg.n_rep, THREADS, 4))
            tile = dict(m0=m0, n0=n0, rows_valid=rows_valid, n_left=n_left)
            ctx = dict(tile, geo=geo, t=t)

            def a_sync_to_lds(kt):  # registers -> ds_write, complete before the barrier
                for p in range(cfg.a_passes):
                    vals = buf_load(A, a_base, a_nb, geo.a_global_offset(tid, p, kt, K, lda), esz, V)
                    so = geo.a_lds_store_offset(tid, p)
                    for q in range(V):
                        lds[so + q] = vals[:, q]

            def a_dma_issue(kt):
                """LDS DMA of tile kt as the hardware does it: lane l of a wave writes 16 bytes at
                the wave's M0 base + 16*l. While in flight its destination reads as NaN, so a
                compute that reads a stage before ``a_dma_wait`` poisons the result."""
                stage = geo.a_lds_stage(kt)
                writes = []
                for p in range(cfg.a_passes):
                    vals = buf_load_bytes(A, a_base, a_nb, geo.a_dma_global_byte_offset(tid, p, kt, K, lda), esz, V)
                    lds_byte = geo.a_dma_lds_wave_base(stage, p, tid // WAVE) + (tid % WAVE) * VEC_BYTES
                    assert np.all(lds_byte % VEC_BYTES == 0)
                    idx = lds_byte // esz
                    for q in range(V):
                        lds[idx + q] = np.nan
                    writes.append((idx, vals))
                return writes

            def a_dma_wait(writes):
                for idx, vals in writes:
                    for q in range(V):
                        lds[idx + q] = vals[:, q]

            # the kernel always multiplies at least one (masked) tile
            tiles = list(range(int(geo.last_k_tile(nk)) + 1) if k_tiles is None else k_tiles)
            last = tiles[-1]
            in_flight = a_dma_issue(tiles[0]) if cfg.async_copy else None
            for kt in tiles:
                part = np.zeros_like(acc)
                # A -> LDS: the synchronous path stores tile kt now; the async path waits for
                # the DMA of tile kt and starts the DMA of tile kt+1 into the other stage
                if cfg.async_copy:
                    a_dma_wait(in_flight)
                    in_flight = a_dma_issue(kt + 1) if kt < last else []
                else:
                    a_sync_to_lds(kt)
                stage_base = geo.a_lds_stage_base(geo.a_lds_stage(kt))
                for s0 in range(0, cfg.k_steps, G):
                    afr = []
                    for i in range(cfg.m_rep):
                        parts = []
                        for s in range(s0, s0 + G):
                            lo = stage_base + geo.a_lds_load_offset(t, i, s)
                            parts.append(np.stack([lds[lo + q] for q in range(V)], axis=1))  # [256, V]
                        afr.append(np.concatenate(parts, axis=1))
                    for j in range(cfg.n_rep):
                        bfr = np.concatenate(
                            [buf_load(Wsh, w_base, w_nb, geo.w_global_offset(t, j, s, kt, K), esz, V)
                             for s in range(s0, s0 + G)],
                            axis=1,
                        )
                        for i in range(cfg.m_rep):
                            if group_mma is not None:
                                part[i, j] += group_mma(tile, kt, s0 // G, i, j, afr[i], bfr)
                            else:
                                part[i, j] += mfma_emulate(dec(afr[i]), dec(bfr), cfg.form.lane_k)
                acc += part if tile_scale is None else tile_scale(part, kt, ctx)
            if store is not None:
                store(acc, ctx)
                continue
            # epilogue
            if scales is not None:
                sa_base, sa_nb = m0 * a_row, geo.scale_bytes(rows_valid, a_row)
                sw_base, sw_nb = n0 * w_row, geo.scale_bytes(n_left, w_row)
            for j in range(cfg.n_rep):
                col = geo.c_coord(t, 0, j, 0)[1]
                bv = np.zeros(THREADS)
                if bias is not None:
                    bv = buf_load(bias, n0, n_left * 4, col, 4, 1)[:, 0]
                if scales is not None:
                    swv = buf_load(w_scale, sw_base, sw_nb, geo.scale_offset(col, w_row), 4, 1)[:, 0]
                for i in range(cfg.m_rep):
                    for r in range(4):
                        val = acc[i, j, :, r]
                        if scales is not None:
                            row = geo.c_coord(t, i, j, r)[0]
                            sav = buf_load(a_scale, sa_base, sa_nb, geo.scale_offset(row, a_row), 4, 1)[:, 0]
                            val = val * sav * swv
                        buffer_store_model(out_init, o_base, o_nb, geo.c_offset(t, i, j, r, n_left, ldo),
                                           cfg.out_bytes, val + bv)
    return out_init


def mfma_emulate(a, b, lane_k):
    """One MFMA group of 16x16 MFMAs for a set of waves. a/b: [256, kl] per-thread operands
    (kl = steps * vec elements per lane). Each instruction takes the next ``lane_k`` elements of
    every lane: lane (l16, lg) supplies A[l16, lg*lane_k + q] and B[lg*lane_k + q, l16].
    Returns [256, 4] accumulator increments in the C layout (row lg*4+r, column l16)."""
    import numpy as np

    n, kl = a.shape
    nw = n // WAVE
    assert kl % lane_k == 0 and n % WAVE == 0
    out = np.zeros((n, 4))
    for lo in range(0, kl, lane_k):
        # lane = lg*16 + l16 -> [wave, lg, l16, q]
        av = a[:, lo : lo + lane_k].reshape(nw, LANE_GROUPS, 16, lane_k)
        bv = b[:, lo : lo + lane_k].reshape(nw, LANE_GROUPS, 16, lane_k)
        Am = av.transpose(0, 2, 1, 3).reshape(nw, 16, LANE_GROUPS * lane_k)  # [w, row l16, k = lg*lane_k + q]
        Bm = bv.transpose(0, 1, 3, 2).reshape(nw, LANE_GROUPS * lane_k, 16)  # [w, k = lg*lane_k + q, col l16]
        Cm = Am @ Bm  # [w, row, col]
        # lane (l16, lg) holds rows lg*4 + r of column l16
        out += Cm.reshape(nw, LANE_GROUPS, 4, 16).transpose(0, 1, 3, 2).reshape(n, 4)
    return out


# --------------------------------------------------------------------------------------------
# Build (ahead-of-time export)
# --------------------------------------------------------------------------------------------
def _setup_env(arch: str, family: str) -> None:
    cur = os.environ.get("ARCH")
    if cur and cur != arch:
        raise RuntimeError(
            f"{family}.build: process targets ARCH={cur} but the spec is for {arch}; "
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


def isa_stats(isa: str) -> dict:
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


def max_split_k(cfg: Config, fam: Family) -> int:
    return int(fam.max_split_k(cfg)) if fam.max_split_k else 1


def _split_k_checks(cfg: Config, fam: Family) -> str:
    """C++ split-K validation; declares the kernel arguments ws, M_pad, split_k when the family
    has a split-K mode (kernels/rocm/_splitk.py)."""
    if fam.max_split_k is None:
        return '  if (p.split_k != 1) return fail("split_k must be 1 (no split-K mode)");'
    import _splitk

    why = "int32 accumulators are exact, fp32 partial sums would not be" if cfg.form.acc == "i32" else ""
    return _splitk.adapter_checks(cfg.tile_k, max_split_k(cfg, fam), why)


def launcher_placeholders(flyc, fx, out_t, out_bytes, operand_t, scale_ptrs=(), workspace=True,
                          scalars=()) -> tuple:
    """Example arguments that `flyc.compile` traces a launcher with, in the adapters' order: out,
    a, w, bias (fp32), the scale pointers ((element type, alignment) each), the fp32 workspace,
    then example scalars (only their types matter). The alignments are promises the code is
    compiled under: A and W 16 bytes (checked by the adapters), the workspace 16 bytes (the
    caching allocator's), everything else its element size."""
    ptrs = [flyc.from_c_void_p(out_t, None, assumed_align=out_bytes),
            flyc.from_c_void_p(operand_t, None, assumed_align=16),
            flyc.from_c_void_p(operand_t, None, assumed_align=16),
            flyc.from_c_void_p(fx.Float32, None, assumed_align=4)]
    ptrs += [flyc.from_c_void_p(t, None, assumed_align=align) for t, align in scale_ptrs]
    if workspace:
        ptrs.append(flyc.from_c_void_p(fx.Float32, None, assumed_align=16))
    return tuple(ptrs) + tuple(scalars)


def adapter_head(name: str, ident: str, sym: str, arch: str, family_file: str) -> str:
    """The C++ every ROCm adapter starts with: the export's entry points, the load function, and the
    launch function's opening up to its `fail` helper (the family adds its checks and packing)."""
    return f"""
// ---- {name} ({arch}) : generated by kernels/rocm/{family_file} ----
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
"""


def adapter_cpp(ident: str, sym: str, cfg: Config, name: str, fam: Family) -> str:
    """C++ adapter: flygemm::LaunchArgs -> the FlyDSL export's ``void** args`` (kernel arguments
    in ``fam.kernel_args`` order, then the stream)."""
    out_sz, esz, vec = cfg.out_bytes, cfg.elem_bytes, cfg.vec
    kmul = fam.k_multiple_of(cfg)
    k_store = "p.K" if fam.k_per_elem == 1 else f"(p.K / {fam.k_per_elem})"  # storage elements of a row
    args = [f"&{a}" for a in fam.kernel_args] + ["&stream"]
    return adapter_head(name, ident, sym, cfg.arch, f"{fam.name}.py") + f"""{_split_k_checks(cfg, fam)}
  if (p.M < 0 || p.N < 0 || p.K < 0) return fail("negative size");
  if (p.N % 16 != 0) return fail("N must be a multiple of 16 (preshuffled weight)");
  if (p.K % {kmul} != 0) return fail("K must be a multiple of {kmul}");
  if (p.bias != nullptr && p.bias_dtype != flygemm::DType::fp32) return fail("bias must be fp32");
{fam.adapter_checks(cfg) if fam.adapter_checks else ""}
  if (p.M == 0 || p.N == 0) return 0;
  if (p.lda < {k_store} || p.ldo < p.N) return fail("row stride smaller than the row");
  // 16-byte vector loads of A and W
  if (p.lda % {vec} != 0 || ((uintptr_t)p.a % 16) != 0) return fail("A rows must be 16-byte aligned");
  if (((uintptr_t)p.w % 16) != 0) return fail("W must be 16-byte aligned");
  // 32-bit buffer offsets: every per-workgroup resource must stay below 2 GiB, and the
  // kernel's scalar arguments are int32.
  const long long lim = 0x7fffffffLL;
  if (p.M > lim || p.N > lim || p.K > lim || p.lda > lim || p.ldo > lim) return fail("size exceeds int32");
  if ((long long){cfg.tile_m} * p.lda * {esz} >= lim) return fail("lda too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_n} * {k_store} * {esz} >= lim) return fail("K too large for 32-bit buffer offsets");
  if ((long long){cfg.tile_m} * p.ldo * {out_sz} >= lim) return fail("ldo too large for 32-bit buffer offsets");
  void* out = p.out;
  void* a = const_cast<void*>(p.a);
  void* w = const_cast<void*>(p.w);
  void* bias = const_cast<void*>(p.bias);
{fam.adapter_locals}
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


def build(spec: dict, out_dir, fam: Family, make_launcher) -> dict:
    """Compile one specialization for spec['arch'] and export it (docs/TEAM_INTERFACES.md).
    ``make_launcher(cfg)`` returns (flydsl.compiler, the @flyc.jit launcher, placeholders)."""
    t0 = time.time()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = config_from_spec(spec, fam)
    name = str(spec.get("name") or spec.get("kernel") or kernel_name(cfg))
    ident = str(spec.get("ident") or re.sub(r"[^A-Za-z0-9_]", "_", f"{cfg.arch}_{name}"))
    sym = f"flygemm_rocm_{ident}"
    _setup_env(cfg.arch, fam.name)

    dump_dir = Path(tempfile.mkdtemp(prefix="isa_", dir=out_dir))
    os.environ["FLYDSL_DEBUG_DUMP_ASM"] = "1"
    os.environ["FLYDSL_DUMP_DIR"] = str(dump_dir)
    try:
        flyc, launcher, placeholders = make_launcher(cfg)
        hints = {"waves_per_eu": cfg.waves_per_eu} if cfg.waves_per_eu else None
        comp = flyc.compile[hints] if hints else flyc.compile
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            compiled = comp(launcher, *placeholders)
        compiled.export_to_c(str(out_dir), ident, function_prefix=sym)
        isa_files = sorted(dump_dir.rglob("*final_isa.s"))
        if len(isa_files) != 1:
            raise RuntimeError(f"{fam.name}.build: expected one ISA dump, found {isa_files}")
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
    stats = isa_stats(isa)
    import _splitk

    per_kernel = _splitk.kernel_stats(isa)
    if len(per_kernel) > 1:  # GEMM + split-K reduce: the module-wide numbers are the GEMM kernel's
        stats.update(per_kernel[next(k for k in per_kernel if not k.startswith(_splitk.REDUCE_PREFIX))])
    export_meta = _export_metadata(obj, sym)

    for kname, ks in dict(per_kernel, module=stats).items():
        if ks["private_segment_fixed_size"] not in (0, None):
            raise RuntimeError(f"{fam.name}.build: {name} ({kname}) uses scratch ({ks['private_segment_fixed_size']} B)")
    meta = {
        "family": fam.name,
        "op": fam.op,
        "name": name,
        "arch": cfg.arch,
        "config": cfg.as_dict(),
        "threads": THREADS,
        "waves": [cfg.wm, cfg.wn],
        "m_rep": cfg.m_rep,
        "n_rep": cfg.n_rep,
        "lds_bytes": cfg.lds_bytes,
        "lds_stages": cfg.lds_stages,
        "lds_layout": ("tile_k rows, 16-byte chunks XOR-swizzled (async copy)" if cfg.async_copy
                       else f"tile_k + {cfg.lds_pad} elements per row (padded)"),
        "dynamic_lds_bytes": 0,
        # A global -> LDS by LDS DMA (buffer_load_dwordx4 ... lds) instead of registers + ds_write
        "async_copy": cfg.async_copy,
        # (LDS reads, global loads) scheduled before the first MFMA of each K tile, and the
        # per-thread counts of one K tile they are taken from (KernelCore.schedule_hints)
        "preload": list(cfg.preload),
        "preload_default": list(default_preload(cfg)),
        "k_tile_instructions": {"ds_read_b128": cfg.ds_reads_per_tile, "ds_write_b128": cfg.ds_writes_per_tile,
                                "vmem_load_dwordx4": cfg.vmem_loads_per_tile, "mfma": cfg.mfma_per_tile},
        "grid": "(ceil(M/tile_m), ceil(N/tile_n), 1)",
        "block": [THREADS, 1, 1],
        "w_layout": fam.w_layout_doc,
        "bias": "fp32 [N] or null",
        "requires": {"N_multiple": 16, "K_multiple": fam.k_multiple_of(cfg), "split_k": max_split_k(cfg, fam)},
        "kernels": per_kernel,
        "mfma": cfg.mfma,
        "mfma_per_k_tile": cfg.mfma_per_tile,
        "hsaco": f"{ident}.hsaco",
        "isa": f"{ident}.s",
        "header": f"{ident}.h",
        "export_symbol": sym,
        "kernel_args": list(fam.kernel_args),
        "launcher_abi": export_meta.get("abi"),
        "flydsl_version": export_meta.get("flydsl_version"),
        "build_seconds": round(time.time() - t0, 2),
        **dict(fam.meta),
        **stats,
    }
    (out_dir / f"{ident}.meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
    return {
        "objects": [f"{ident}.o"],
        "adapter_cpp": adapter_cpp(ident, sym, cfg, name, fam),
        "link_libs": [],
        "link_flags": ["-ldl", "-pthread"],
        "meta": meta,
        "requires_k_multiple": fam.k_multiple_of(cfg),
        "requires_n_multiple": 16,
        "max_split_k": max_split_k(cfg, fam),
    }


# --------------------------------------------------------------------------------------------
# Standalone use
# --------------------------------------------------------------------------------------------
def main(fam: Family, build_fn, default_specs, argv=None, description=""):
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", default=os.environ.get("ARCH", "gfx942"))
    ap.add_argument("--in-dtype")
    ap.add_argument("--out-dtype")
    ap.add_argument("--tile", help="MxNxK, e.g. 128x128x64")
    ap.add_argument("--params", default="", help="k=v;k=v (" + ", ".join(KNOWN_PARAMS) + "; preload=D:V)")
    args = ap.parse_args(argv)
    if args.tile:
        tm, tn, tk = (int(x) for x in args.tile.split("x"))
        specs = [dict(in_dtype=args.in_dtype, out_dtype=args.out_dtype, tile_m=tm, tile_n=tn, tile_k=tk)]
    else:
        specs = [s for s in default_specs if s.get("arch", args.arch) == args.arch]
    params = {}
    for kv in filter(None, args.params.split(";")):
        k, v = kv.split("=")
        params[k] = int(v) if v.lstrip("-").isdigit() else v
    for spec in specs:
        spec = dict(spec, arch=args.arch, params=params)
        cfg = config_from_spec(spec, fam)
        spec["ident"] = re.sub(r"[^A-Za-z0-9_]", "_", f"{cfg.arch}_{kernel_name(cfg)}")
        d = Path(args.out) / spec["ident"]
        if d.exists():
            shutil.rmtree(d)
        res = build_fn(spec, d)
        m = res["meta"]
        print(
            f"{m['arch']} {m['name']}: {m['build_seconds']} s, {m['mfma_instructions']} x{m['mfma_count']}, "
            f"LDS {m['group_segment_fixed_size']} B, VGPR {m['vgpr_count']} AGPR {m['agpr_count']} "
            f"SGPR {m['sgpr_count']}, kernarg {m['kernarg_segment_size']} B, scratch "
            f"{m['private_segment_fixed_size']} -> {d}"
        )
