"""gemm_mxfp8 / gemm_mxfp4 for sm_90a beyond decode sizes: the MX operands are rewritten for a GEMM that
Hopper's tensor cores run, by one of two conversions (param `to`):

    out[m, n] = round_bf16( sum_k (A[m, k] * 2^(sa[m, k/32] - 127)) * (W[n, k] * 2^(sw[n, k/32] - 127))
                            + bias[n] )

Hopper has no MX tensor-core instructions, and an fp8 wgmma fed the MX bytes as they are would need an fp32
promotion of the whole accumulator every 32 k, with a scale that is an outer product (row x column): at least
two FP32 operations per accumulator value per 32 k, which the FP32 pipe cannot hide behind the wgmma.

to=blockscale (the `.regroup` records, the default rows): each operand is regrouped into the fp8 blockscale
format - e4m3 values and one fp32 scale per 128-wide K group, 1 x 128 for A (per row) and 128 x 128 for W -
and the products run on this project's fp8 blockscale GEMM (kernels/cuda/gemm_a8w8_blockscale.py, picked by
the blockscale dispatch rows), which promotes every 128 k with one scale per row. The group's scale is
2^(r - 127 - h) with r its largest E8M0 byte (the NaN byte 255 left out) and h = FP4_HEADROOM for MXFP4 (6:
e2m1 values reach 6, e4m3 448), 0 for MXFP8; an MX block with byte e is stored as its values times
2^(e - r + h), rounded to e4m3 (nearest even). That is exact while the result is an e4m3 number: for MXFP4
whenever the group's blocks span at most 14 binades (e2m1 x 2^s is e4m3 for s in [-8, 6]); for MXFP8 at the
group's largest block, and in a weaker block for every value that stays above e4m3's subnormal step
2^-9 after the shift. Either way the error of a value is at most half that step at the group's scale
(tests/test_cuda_mx_convert.py emulates the kernel and checks both; on Gaussian weights whose rows reach
2^-6 of the strongest row of their 128-row block the output columns move by at most 4.3e-5 relative, 1e-3 at
2^-9, 2.4e-2 at 2^-12 for MXFP8, 0 for MXFP4). A block with the NaN byte becomes all NaN (e4m3 0x7F) and
its group's scale ignores it, so NaN reaches exactly the oracle's row (A) or column (W). Launch:

    LaunchArgs.a / a_scale   the MX operand [rows, K] (row stride lda bytes) and its E8M0 bytes [rows, K/32]
    LaunchArgs.out           e4m3 [rows, K], row stride ldo bytes
    LaunchArgs.workspace     fp32 scales [rows or ceil(rows/128), ceil(K/128)], row stride M_pad floats
    LaunchArgs.N             rows per scale group: 1 (A) or 128 (W)

A warp converts warp_rows (param: 32, 64 or 128) rows of one group (128 rows x 128 K) in steps of 4 rows, 8
lanes per row each taking 16 values (a 16-byte fp8 / 8-byte fp4 load, a 16-byte store: every step reads and
writes whole 128-byte row runs); it finds r with one redux.sync over the warp (1 x 128: shuffles among the
row's 8 lanes; 128 x 128 with warp_rows < 128: each warp also reads the 512 scale bytes of the whole block),
then decodes (exact fp32), multiplies by the power of two, rounds (cvt.rn.satfinite.e4m3x2.f32) and stores.
The kernel is bound by memory requests in flight: a warp per group (warp_rows=128) needs 186-255 registers,
and ptxas sinks each value load to its step, so 8 warps per SM waited out a round trip per step (1.1-1.4
TB/s on an 8192 x 8192 weight, H100). With 32 / 64 rows per warp the kernel takes 72 / 96 registers and
runs 4x / 2x as many warps; hoist=1 makes every loaded word feed the first conversion (times a run-time
zero), so that ptxas issues the warp's loads together (2.0-2.4 TB/s, H100; the records' params in
kernels/configs/sm_90a.kernels.csv are the measured best per format).

to=bf16 (the `.dequant` records; fp16 outputs, and FLYGEMM_FORCE_KERNEL): every MX value is rewritten as the
bf16 number it denotes - an e4m3 value has 3 mantissa bits and an e2m1 value 1, so x * 2^e is exact in bf16
(same exponent range as fp32) unless the fp32 oracle itself under- or overflows - and the products run on
the bf16 wgmma kernels (kernels/cuda/gemm_a16w16.py, picked by the bf16 dispatch rows), exact but at the
bf16 rate (0.52-0.58x of the blockscale GEMM's speed at 8192^3 / 54560 x 8192 x 8192 on the H200). Launch:

    LaunchArgs.a        source rows (fp8 bytes, or fp4 pairs packed in bytes), row stride lda bytes
    LaunchArgs.a_scale  E8M0 bytes [M, K/32], contiguous
    LaunchArgs.out      bf16 [M, K], row stride ldo elements
    LaunchArgs.M, K     rows and logical K (N is not used)

One thread converts one 32-element block: 32 (fp8) or 16 (fp4) bytes in with 16-byte loads, one
scale byte, 64 bytes out with 16-byte stores; neighbouring threads take neighbouring blocks of a
row, so warps read and write contiguous memory. e4m3 -> f16 (cvt, exact) -> fp32; e2m1 nibble ->
fp32 by bit arithmetic (kernels/cuda/_ptx.py); times 2^(e-127) in fp32 (exact, subnormals kept);
one bf16 rounding (exact except where fp32 itself under/overflows).

csrc/device_ops.cpp runs the record's conversion for A and for W (plain layout) into buffers from the caching
allocator, then the GEMM. The decode sizes (M <= 64; MXFP4 to M = 128 where K % 128 == 0, sm_90a.csv) keep
kernels/cuda/gemm_splitk_decode.py, which reads the MX bytes directly.

Requirements (checked by the C++ adapter): K % 32 == 0, source rows 16-byte aligned (lda bytes
% 16 == 0), out 16-byte aligned with ldo >= K and ldo % 8 == 0 (regroup: ldo bytes % 16 == 0), M * K / 32 < 2^31.

Build-time entry point: `build(spec, out_dir)` (docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_mxfp.py --op gemm_mxfp4 [--to blockscale] --out /tmp/x`.
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
# param `to`: the GEMM the converted operands feed
_TARGETS = ("bf16", "blockscale")
# Regrouping (to=blockscale): a warp converts one group of REGROUP_ROWS rows x 128 K (4 MX blocks per row),
# a lane the group's rows lane, lane + 32, ...; REGROUP_WARPS groups (consecutive along K) per CTA.
REGROUP_ROWS = 128
REGROUP_WARPS = 4
# param warp_rows: rows of a group one warp converts (128: a warp per group, REGROUP_WARPS groups per CTA; 64 / 32:
# 2 / 4 warps per group). Fewer rows per warp: fewer registers, more warps per SM, so more loads in flight.
_WARP_ROWS = (32, 64, 128)
GROUP_K = 128
# e2m1 values reach 6, e4m3 448: an MXFP4 group's largest block is stored times 2^6, so its weaker blocks
# keep 6 more binades before they reach e4m3's subnormals.
FP4_HEADROOM = 6
# Blocks more than this many binades below their group's largest round to zero whatever their values are;
# clamping the exponent keeps the fp32 factor a normal number.
MIN_SHIFT = -64


class Config:
    """One specialization: which MX format it converts (pure Python)."""

    def __init__(self, op, in_dtype=None, out_dtype="bf16", to="bf16", warp_rows=REGROUP_ROWS, hoist=0):
        if op not in _OPS:
            raise ValueError(f"{FAMILY}: unsupported op {op!r}; supported: {sorted(_OPS)}")
        want_in, self.block_bytes = _OPS[op]
        if in_dtype and in_dtype != want_in:
            raise ValueError(f"{FAMILY}: {op} needs in_dtype {want_in}, got {in_dtype}")
        if out_dtype != "bf16":
            raise ValueError(f"{FAMILY}: MX ops write bf16, got out_dtype {out_dtype}")
        if to not in _TARGETS:
            raise ValueError(f"{FAMILY}: param to must be one of {sorted(_TARGETS)}, got {to!r}")
        if int(warp_rows) not in _WARP_ROWS or (to != "blockscale" and int(warp_rows) != REGROUP_ROWS):
            raise ValueError(f"{FAMILY}: param warp_rows must be one of {_WARP_ROWS} (to=blockscale only), "
                             f"got {warp_rows!r}")
        self.op, self.in_dtype, self.out_dtype, self.to = op, want_in, out_dtype, to
        self.warp_rows = int(warp_rows)
        if int(hoist) not in (0, 1):
            raise ValueError(f"{FAMILY}: param hoist must be 0 or 1, got {hoist!r}")
        self.hoist = int(hoist)
        self.fp4 = op == "gemm_mxfp4"

    @staticmethod
    def from_spec(spec: dict) -> "Config":
        params = spec.get("params") or {}
        return Config(spec["op"], spec.get("in_dtype") or None, spec.get("out_dtype") or "bf16",
                      params.get("to", "bf16"), params.get("warp_rows", REGROUP_ROWS),
                      params.get("hoist", 0))

    def meta(self) -> dict:
        # "role" tells csrc/device_ops.cpp which GEMM runs on the converted operands.
        if self.to == "blockscale":
            return {"role": "mx_to_blockscale", "op": self.op, "in_dtype": self.in_dtype,
                    "out_dtype": self.out_dtype, "threads_per_cta": REGROUP_WARPS * 32,
                    "group_rows": [1, REGROUP_ROWS], "fp4_headroom_log2": FP4_HEADROOM,
                    "warp_rows": self.warp_rows, "hoist": self.hoist,
                    "gemm": "e4m3 operands + fp32 1x128 / 128x128 scales -> gemm_a8w8_blockscale "
                            "(blockscale dispatch rows)"}
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


def _make_regroup_class(cfg: Config):
    """to=blockscale: one MX operand -> e4m3 values and fp32 scales of 128-wide K groups (see the module doc)."""
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    P = ptx.helpers(0)
    SUB = GROUP_K // MX_BLOCK                 # MX blocks per group row
    HEAD = FP4_HEADROOM if cfg.fp4 else 0

    def decode(words):
        """The 32 values of one MX block as fp32 (exact)."""
        if cfg.fp4:
            return [P.e2m1_to_f32(w, 4 * j) for w in words for j in range(8)]
        vals = []
        for w in words:
            for h in P.e4m3x4_to_f16(w):
                vals += P.f16x2_to_f32(h)
        return vals

    def is_nan_byte(e):
        return P.bshr(e + 1, 8)              # 1 for the E8M0 NaN (255), 0 for 0..254

    def pow2(d):
        """2^d as fp32 for d in [MIN_SHIFT, 127]."""
        return P.bits_f32(P.bshl(d + 127, 23))

    LANES_PER_ROW = GROUP_K // 16          # a lane converts 16 values of a group row (half an MX block)
    ROWS_PER_STEP = 32 // LANES_PER_ROW
    STEPS = REGROUP_ROWS // ROWS_PER_STEP
    CHUNK = cfg.block_bytes // 2           # source bytes of 16 values

    def load_chunk(x, row, blk, half, ok):
        """The source words of 16 values of MX block `blk` of row `row` (half 0 or 1 of the block)."""
        src = x.src + Int64(row) * x.lda_bytes + Int64(blk) * cfg.block_bytes + Int64(half) * CHUNK
        return P.ldg_b64_p(src, ok) if cfg.fp4 else P.ldg_a(src, ok)

    def convert_chunk(x, row, blk, half, ok, e, r, words):
        """Those 16 values times 2^(e - r + HEAD), rounded to e4m3 (exact unless they fall below e4m3's subnormal
        step); all NaN where the block's byte is the NaN code."""
        fac = pow2(P.bop("max.s32", e - r + HEAD, MIN_SHIFT))
        vals = [P.fmul_exact(v, fac) for v in decode(words)]
        nan_mask = is_nan_byte(e) * 0x7F7F7F7F   # 0x7F / 0xFF bytes are e4m3fn NaN
        out = [P.bop("or.b32", P.f32x4_to_e4m3x4(*vals[4 * j:4 * j + 4]), nan_mask) for j in range(4)]
        P.stg_v4_p(x.dst + Int64(row) * x.ldo + Int64(blk) * MX_BLOCK + Int64(half) * 16, out, ok)

    WARPS_PER_GROUP = REGROUP_ROWS // cfg.warp_rows
    GROUPS_PER_CTA = REGROUP_WARPS // WARPS_PER_GROUP
    WARP_STEPS = cfg.warp_rows // ROWS_PER_STEP

    def usable(ok, e):
        """e + 1 for a usable block, 0 for one past the edge or with the NaN scale (unsigned max picks r)."""
        return ok * (e + 1) * (1 - is_nan_byte(e))

    def block_key(x, lane, g, bx, block_wide):
        """The largest usable key of the 128 x 128 block's 512 scale bytes (lane: rows lane, lane + 32, ...),
        for a warp that converts only part of the block's rows; 0 unless block_wide."""
        key = Int32(0)
        for i in range(REGROUP_ROWS // 32):
            row = bx * REGROUP_ROWS + 32 * i + lane
            row_ok = block_wide * P.b2i(row < x.rows)
            for b in range(SUB):
                ok = row_ok * P.b2i(g * SUB + b < x.kblocks)
                key = P.umax(key, usable(ok, P.ldg_u8_p(x.scale + Int64(row) * Int64(x.kblocks)
                                                         + Int64(g * SUB + b), ok)))
        return key

    def regroup_lane(x, lane, warp, bx, by):
        """Every lane runs this whole (the warp reduction and shuffles need all 32), predicated where out of
        range. A warp step covers ROWS_PER_STEP rows of the group, LANES_PER_ROW lanes per row reading its
        128 (fp8) / 64 (fp4) contiguous bytes; the warp's warp_rows rows of the group take WARP_STEPS steps."""
        g = by * GROUPS_PER_CTA + warp // WARPS_PER_GROUP
        part = warp % WARPS_PER_GROUP            # which warp_rows rows of the group
        g_ok = P.b2i(g * SUB < x.kblocks)
        chunk, sub_row = lane % LANES_PER_ROW, lane // LANES_PER_ROW
        blk, half = g * SUB + chunk // 2, chunk % 2
        blk_ok = P.b2i(blk < x.kblocks)
        block_wide = P.b2i(x.group_rows > 1)
        steps, lane_key = [], Int32(0)
        for j in range(WARP_STEPS):
            row = bx * REGROUP_ROWS + part * cfg.warp_rows + ROWS_PER_STEP * j + sub_row
            row_ok = P.b2i(row < x.rows)
            ok = row_ok * blk_ok
            e = P.ldg_u8_p(x.scale + Int64(row) * Int64(x.kblocks) + Int64(blk), ok)
            # every step's values are requested before any waits
            words = load_chunk(x, row, blk, half, ok)
            key = usable(ok, e)
            lane_key = P.umax(lane_key, key)
            steps.append((row, row_ok, ok, e, key, words))
        if WARPS_PER_GROUP > 1:     # the 128 x 128 scale needs the rows the other warps convert
            lane_key = block_key(x, lane, g, bx, block_wide)
        group_key = P.redux_max_u32(lane_key)
        dep = Int32(0)
        if cfg.hoist:
            # every loaded word feeds the first conversion (times a run-time zero), so ptxas issues all the warp's
            # value loads together instead of sinking each to its use after the previous step's store
            for w in (w for st in steps for w in st[5]):
                dep = P.bop("xor.b32", dep, w)
            dep = P.band(dep, P.bshr(x.rows, 31))
        for j, (row, row_ok, ok, e, key, words) in enumerate(steps):
            for m in (1, 2, 4):   # the row's largest over its LANES_PER_ROW lanes
                key = P.umax(key, P.shfl_bfly(key, m))
            key = block_wide * group_key + (1 - block_wide) * key
            r = key - 1 + P.b2i(key == 0) * 128 + dep   # no usable block: any exponent (127) will do
            convert_chunk(x, row, blk, half, ok, e, r, words)
            s = P.e8m0_f32(r)
            if HEAD:
                s = P.fmul_exact(s, P.bits_f32((127 - HEAD) << 23))
            # the group's scale: per row by its first lane (group_rows 1), or once per 128-row block by lane 0
            # of the group's first warp
            s_row = block_wide * bx + (1 - block_wide) * row
            writer = (block_wide * P.b2i(lane == 0) * P.b2i(part == 0) * (1 if j == 0 else 0)
                      + (1 - block_wide) * row_ok * P.b2i(chunk == 0))
            P.stg_f32_p(x.dst_scale + (Int64(s_row) * Int64(x.ld_scale) + Int64(g)) * 4, s, writer * g_ok)

    class _Args:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class MxRegroupSm90:
        @cute.kernel
        def kernel(self, src: Int64, scale: Int64, dst: Int64, dst_scale: Int64, rows: Int32, kblocks: Int32,
                   lda_bytes: Int64, ldo: Int64, ld_scale: Int32, group_rows: Int32):
            tid, _, _ = cute.arch.thread_idx()
            bx, by, _ = cute.arch.block_idx()
            x = _Args(src=src, scale=scale, dst=dst, dst_scale=dst_scale, rows=rows, kblocks=kblocks,
                      lda_bytes=lda_bytes, ldo=ldo, ld_scale=ld_scale, group_rows=group_rows)
            regroup_lane(x, tid % 32, tid // 32, bx, by)

        @cute.jit
        def __call__(self, src: Int64, scale: Int64, dst: Int64, dst_scale: Int64, rows: Int32, kblocks: Int32,
                     lda_bytes: Int64, ldo: Int64, ld_scale: Int32, group_rows: Int32, stream: cuda.CUstream):
            groups = (kblocks + SUB - 1) // SUB
            self.kernel(src, scale, dst, dst_scale, rows, kblocks, lda_bytes, ldo, ld_scale, group_rows).launch(
                grid=((rows + REGROUP_ROWS - 1) // REGROUP_ROWS, (groups + GROUPS_PER_CTA - 1) // GROUPS_PER_CTA, 1),
                block=[REGROUP_WARPS * 32, 1, 1], stream=stream)

    return MxRegroupSm90


def compile_and_export(cfg: Config, out_dir: pathlib.Path, ident: str, arch: str = "sm_90a"):
    cx.import_dsl()
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    i32, i64 = Int32(1), Int64(0)
    if cfg.to == "blockscale":
        kernel = _make_regroup_class(cfg)()
        args = (i64, i64, i64, i64, i32, i32, i64, i64, i32, i32)
    else:
        kernel = _make_kernel_class(cfg)()
        args = (i64, i64, i64, i32, i32, i64, i64)
    compiled = cute.compile(kernel, *args, cuda.CUstream(0), options=f"--gpu-arch {arch}")
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


_REGROUP_WRAPPER_ARGS = ["int64_t src", "int64_t scale", "int64_t dst", "int64_t dst_scale", "int32_t rows",
                         "int32_t kblocks", "int64_t lda_bytes", "int64_t ldo", "int32_t ld_scale",
                         "int32_t group_rows", "cudaStream_t stream"]

_REGROUP_LAUNCH = r"""
// Regroups one MX operand for the blockscale GEMM (see kernels/cuda/gemm_mxfp.py, to=blockscale):
//   a [rows, K] MX bytes (row stride lda bytes), a_scale E8M0 [rows, K/32] -> out e4m3 [rows, K] (row stride
//   ldo bytes) and workspace fp32 group scales [rows or ceil(rows/128), ld_scale = M_pad] (row stride M_pad
//   floats); N = rows per scale group: 1 (1x128, the activation) or 128 (128x128, the weight).
static int @IDENT@_launch(const flygemm::LaunchArgs& args, char* err, int err_len) {
  using namespace @IDENT@_detail;
  const long long rows = args.M, K = args.K, lim = 0x7fffffffLL;
  if (rows < 0 || K < 0) return fail(err, err_len, "negative size");
  if (rows == 0 || K == 0) return 0;
  if (K % 32 != 0) return fail(err, err_len, "K must be a multiple of 32 (MX block)");
  if (rows * (K / 32) > lim) return fail(err, err_len, "M * K / 32 must fit in int32");
  if (args.N != 1 && args.N != 128) return fail(err, err_len, "rows per scale group (N) must be 1 or 128");
  const long long row_bytes = K / 32 * kBlockBytes, groups = (K + 127) / 128;
  if (args.lda < row_bytes || args.lda % 16 != 0)
    return fail(err, err_len, "lda (bytes) must be >= the row's bytes and a multiple of 16");
  if (args.ldo < K || args.ldo % 16 != 0) return fail(err, err_len, "ldo (bytes) must be >= K and a multiple of 16");
  if (args.M_pad < groups || args.M_pad > lim) return fail(err, err_len, "scale row stride (M_pad) must be >= ceil(K/128)");
  if (!args.a || !args.a_scale || !args.out || !args.workspace)
    return fail(err, err_len, "null source, scale, output or output-scale pointer");
  if (!aligned(args.a, 16) || !aligned(args.out, 16)) return fail(err, err_len, "source and output must be 16-byte aligned");
  if (!aligned(args.workspace, 4)) return fail(err, err_len, "output scales must be 4-byte aligned fp32");
  if (args.a_scale_kind != flygemm::ScaleKind::mx_e8m0) return fail(err, err_len, "scales must be E8M0 [rows, K/32]");
  if (args.split_k != 1) return fail(err, err_len, "split_k must be 1");
  if (loaded_sm_count(args.device, err, err_len) <= 0) return -1;
  int64_t src = (int64_t)args.a, scale = (int64_t)args.a_scale, dst = (int64_t)args.out;
  int64_t dst_scale = (int64_t)args.workspace;
  int32_t r = (int32_t)rows, kblocks = (int32_t)(K / 32), ld_scale = (int32_t)args.M_pad;
  int32_t group_rows = (int32_t)args.N;
  int64_t lda_bytes = args.lda, ldo = args.ldo;
  void* stream = args.stream;
  int32_t ret = 0;
  void* packed[12] = {&src, &scale, &dst, &dst_scale, &r, &kblocks, &lda_bytes, &ldo, &ld_scale, &group_rows,
                      &stream, &ret};
  @CIFACE@(packed, 12);
  if (ret != 0) return fail_cuda(err, err_len, "kernel launch (cudaLaunchKernelEx)", ret);
  return 0;
}
"""


def adapter_cpp(ident: str, name: str, header_rel: str, ciface: str, cfg: Config) -> str:
    constants = _ADAPTER_CONSTANTS.replace("@BLOCK_BYTES@", str(cfg.block_bytes))
    text = cx.adapter_prelude(ident, name, pathlib.Path(__file__).name, header_rel, ciface, constants)
    launch = _REGROUP_LAUNCH if cfg.to == "blockscale" else _ADAPTER_LAUNCH
    return text + launch.replace("@IDENT@", ident).replace("@CIFACE@", ciface)


def default_name(cfg: Config) -> str:
    kind = "regroup" if cfg.to == "blockscale" else "dequant"
    return f"{FAMILY}.{cfg.op}.{cfg.in_dtype}.bf16.{kind}.sm90a"


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
        "requires": ("K%32==0, source rows 16B aligned, out 16B aligned, ldo%16==0 (bytes), scales fp32"
                     if cfg.to == "blockscale" else "K%32==0, source rows 16B aligned, out 16B aligned, ldo%8==0"),
    })
    wrapper_args = _REGROUP_WRAPPER_ARGS if cfg.to == "blockscale" else _EXPECTED_WRAPPER_ARGS
    ciface = cx.parse_launcher(FAMILY, header, ident, wrapper_args)
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
    ap.add_argument("--to", default="bf16", choices=_TARGETS)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    spec = {"arch": "sm_90a", "op": a.op, "family": FAMILY, "params": {"to": a.to}}
    spec["name"] = default_name(Config.from_spec(spec))
    res = build(spec, pathlib.Path(a.out))
    print(json.dumps({k: v for k, v in res.items() if k != "adapter_cpp"}, indent=1))


if __name__ == "__main__":
    _main()
