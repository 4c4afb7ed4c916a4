"""Shared machinery of the sm_90a (H100/H200) GEMM families written in CuTe DSL.

    out[m, n] = round_out( epilogue( mainloop(A[m, :], W[n, :]) ) )

Used by kernels/cuda/gemm_a16w16.py, gemm_a8w8.py and gemm_a8w8_blockscale.py (tools/build_kernels.py
hashes every kernels/cuda/_*.py into each kernel's cache key, so a change here rebuilds them all).

A is [M, K] row-major with row stride lda, W is [N, K] contiguous (K-major, a "TN" GEMM; Hopper's
8-bit wgmma needs both operands K-major anyway), out is [M, N] with row stride ldo.

Kernel design (one CTA = 1 producer warpgroup + `mma_wg` consumer warpgroups, each consumer
warpgroup owning 64-row slices of the tile: 1 for tile_m 64, 3 for tile_m 192 (512 threads, the
register file split 32 / 160 per thread by setmaxnreg), 2 otherwise (40 / 232)):
  * warp 0 of warpgroup 0 streams A/W tiles into a `stages`-deep shared-memory ring with TMA
    (out-of-bounds rows / columns / K tail are zero-filled by the TMA unit); the rest of the
    producer warpgroup gives its registers away (setmaxnreg) and idles;
  * the consumer warpgroups run wgmma (SS operands) on each stage, releasing a stage back to the
    producer through an mbarrier pipeline as soon as the wgmma reading it has retired;
      - mainloop "plain": one accumulator (fp32, or s32 for int8), one wgmma batch kept in flight;
      - mainloop "blockscale": per 128-wide K block the wgmma sum goes to a scratch accumulator
        which is then scaled by a_scale[m, kb] * w_scale[n / 128, kb] and added to an fp32
        accumulator in registers ("fp32 promotion"); with two scratch accumulators (param
        overlap=1, the default) block kb+1's wgmma runs while block kb is promoted;
        the scales come by TMA too (scale_tma = R, default 3 on token-major tiles): at the first K tile
        of each group of SCALE_GROUP = 4 (or of a work piece) the producer loads the tile's a_scale rows
        and w_scale block(s) for the group, one box each, into slot `group % R` of a scale ring with
        its own full / empty mbarriers; every consumer thread reads its column of the slot and releases
        it after the group's last K tile. Without the ring (scale_tma = 0, the .sw tiles) 4-byte cp.async
        copies put a stage's scales into the stage, one per token row (5% of the time at large M);
  * epilogue: "bias" (+ bias[n] in fp32) or "scaled" (acc * sa[m] * sw[n] + bias[n], per-tensor or
    per-row scales chosen at run time), one rounding to the output dtype, registers -> swizzled smem
    (stmatrix for 16-bit outputs) -> TMA store, which clips the ragged N edge;
  * ragged M (M % tile_m != 0, M > tile_m, not swap_ab): the last token tile is loaded and stored from row
    M - tile_m, overlapping the tile before it (those rows are computed twice, bitwise alike), so that no
    A box crosses the tensor's row edge: such boxes starved the consumers (H200, 2026-12-01: bf16
    300 x 12288 x 4096 on t128x160 84 -> 56 us, fp8 on t128x96 50.5 -> 30.5 us; docs/PERF.md);
  * persistent: grid = min(#tiles, #SMs), tiles visited in a grouped raster order; the producer
    runs ahead into the next tile while the consumers do the epilogue of the current one (every
    stage is released before the epilogue starts);
  * clusters (params cluster_m=2 or cluster_n=2): the two CTAs of a cluster take adjacent tiles
    (same W column-panel for 2x1, same A row-panel for 1x2) and each loads half of the shared
    operand's tile with a TMA multicast into both CTAs' stages; a stage is released to both
    CTAs' producers (remote mbarrier arrives), so it is refilled only once both have read it;
    grid = (cluster_m, cluster_n, min(#cluster-tiles, #SMs / 2)).
  * ping-pong (param pingpong=1, the `.pp` kernels): two consumer warpgroups ("teams") take
    alternate tiles, each a whole tile, with their own epilogue buffers, named barrier and store
    warp; both consume the one stage ring in tile order, each skipping the other's stages. Two
    "turn" mbarriers let a team start its mainloop only once the other has waited on every stage
    of its tile (a team two fills ahead of a stage would pass its parity wait at once). One team's
    epilogue then runs under the other's mainloop: 2-4% over the cooperative kernels at the large
    shapes on the H200 (docs/PERF.md, sixth 2026-11-30 session).
  * split-K (param split = S_max, without clusters, fp8 / 16-bit inputs; the `.skS` kernels; blockscale
    slices write their promoted sums): with run-time split_k = S > 1 the persistent loop runs S x #tiles work items, slice
    s of a tile covering K tiles [s*KT/S, (s+1)*KT/S) (S <= KT, kept so by the adapter). A slice
    writes its fp32 tile (scales applied, no bias) straight from the accumulator registers to the
    op's workspace [S, M_pad, N]; `reduce_kernel`, launched by the same host launcher on the same
    stream, sums the S slices in slice order, adds the bias and rounds once: no atomics, bitwise
    reproducible. split_k = 1 runs exactly the plain kernel (TMA-store epilogue, no workspace).
    For shapes whose output tiles leave SMs idle (M = 128 on the narrow-N layers, N = 2112).
  * stream-K (the same split-capable kernels without swap_ab, run-time split_k = STREAM_K = -1): the grid's
    CTAs each take a contiguous, equal run of the tiles x K-tiles units; whole tiles take the normal
    epilogue, and the first part of a tile shared by several CTAs adds the other parts (fp32 slots in the
    op's scratch, each announced by a release flag) in CTA order before its epilogue: no reduce kernel, no
    atomics on data, bitwise reproducible. The schedule and its proof obligations: streamk_first_unit and
    tests/test_streamk_schedule.py.
  * swapped operands (param swap_ab=1, without clusters; the `.sw` kernels): the kernel
    computes out^T = W . A^T - the tile's tile_m rows are weight rows, its tile_n (32 / 64) columns
    tokens - and stores it through an M-major TMA view of the same `out` (stmatrix transposed); the
    epilogue's bias and scales follow the rows / columns they belong to, and split-K partials go to
    the op's [S, M_pad, N] workspace in the op's orientation (the usual reduce kernel). For M = 17..64:
    a 64-row token tile would be half empty at M = 32. Measured on the H200 (2026-12-01, twentieth
    session, kernel time): fp8 32 x 2112 x 7168 11.8 -> 9.1 us, 32 x 36864 x 7168 77.6 -> 68.4 us,
    bf16 32 x 36864 x 7168 150.4 -> 131.8 us (docs/PERF.md). Blockscale (twenty-sixth session): tile_m
    divides 128, so one w_scale covers the tile per K block; a stage holds tile_n a_scale values (the
    tokens) and a thread promotes each accumulator column with its own (bs_scale_index / bs_slot).
    16 x 8960 x 1536 9.9 -> 6.4 us, 32 x 1536 x 8960 18.5 -> 8.0 us against the decode / t64x128 kernels.

Run-time arguments are plain pointers and integers (M, N, K, lda, ldo are dynamic), so one binary
per (in_dtype, out_dtype, tile config) serves every shape.

A family file defines a `Family` (name, op, Config subclass, the DSL kernel subclass with its own
`__call__` / `kernel` signatures, the exported C wrapper's expected arguments and the C++ adapter's
family-specific checks and argument packing) and delegates `build()` / the CLI to this module.
"""

import argparse
import hashlib
import math
import json
import os
import pathlib
import re
import time

import _cute_export as cx  # same directory: the family files put it on sys.path

# sm_90 shared memory per block (opt-in maximum): 227 KiB.
SMEM_CAPACITY = 232448
# Bytes kept aside for mbarriers and alignment padding.
SMEM_RESERVED = 1024 + 1024
# scale_tma (blockscale): K blocks per scale TMA box, the fewest whose fp32 row is 16 bytes (a TMA box row's
# minimum). The kernel reads both scale tensors with a row stride of ceil(KB / SCALE_GROUP) * SCALE_GROUP
# floats (16-byte rows, as TMA needs); the op layer (csrc/device_ops.cpp) hands it such copies when the caller's
# rows are not (KB not a multiple of 4, or a view off a 16-byte boundary); the adapter checks the alignment.
SCALE_GROUP = 4
# Largest run-time split_k of a split-K kernel (the `split` param); threads of the reduce kernel.
MAX_SPLIT_K = 16
REDUCE_THREADS = 256
# Run-time split_k of a stream-K launch (csrc/launch.h kStreamK).
STREAM_K = -1
# A stream-K flag's value is (launch token << 32) + this: the token (the adapter's, never 0) tells this launch's
# flags from whatever the workspace held before.
STREAMK_FLAG_LOW = 0x5A17C3E9


# ---------------------------------------------------------------------------------------------
# Stream-K schedule (split_k = STREAM_K). The work is U = tiles x k_tiles units, tile-major (unit
# tile * k_tiles + kt: K tile kt of tile `tile` in the grouped raster); the grid's C CTAs each own
# a contiguous run of units, CTA c [first_unit(c), first_unit(c + 1)). A CTA's run is a sequence
# of pieces, one per tile it touches, and only its first and last piece can be part of a tile:
#   * a whole tile goes out through the normal epilogue;
#   * a run's first piece that starts inside a tile (K tile > 0) is a later part of a tile that a lower
#     CTA began: its fp32 partials go to workspace slot c and a release-store of flag c says so;
#   * a piece that starts a tile but does not finish it is the tile's first part (its CTA, c_first, ends
#     its run with it): c_first waits for the flags of CTAs c_first + 1 .. c_last (the owner of the
#     tile's last unit), adds their slots to its registers in that order (bitwise reproducible) and
#     stores the tile through the normal epilogue. Those CTAs computed their parts first, so the
#     waits are short, and nothing waits on a CTA of lower index (no cycle; the grid is one CTA per SM).
# The waiter resets each flag it consumed, so every launch leaves its flags at 0.
# Plain integer arithmetic: the kernel traces these with DSL integers (and the DSL's min), and
# tests/test_streamk_schedule.py runs them on Python ints.
# ---------------------------------------------------------------------------------------------
def streamk_first_unit(cta, ctas, units):
    """First unit of CTA `cta`'s run (cta = ctas: the end of the last run)."""
    return (cta * units) // ctas


def streamk_owner(unit, ctas, units):
    """The CTA whose run holds `unit`: the largest c with first_unit(c) <= unit."""
    return ((unit + 1) * ctas - 1) // units


def streamk_piece(cur, end, k_tiles, imin=min):
    """The piece a run [cur, end) starts with: (tile, first K tile, K tile count); the next one starts at
    cur + count."""
    tile = cur // k_tiles
    kt_begin = cur - tile * k_tiles
    return tile, kt_begin, imin(end - cur, k_tiles - kt_begin)


def streamk_slots(ctas):
    """fp32 workspace slots (tile_m x tile_n each) of a stream-K launch over `ctas` CTAs: one per CTA, the
    later part of a tile its run may start with; the 8-byte flags, one per CTA, follow them."""
    return ctas


# ---------------------------------------------------------------------------------------------
# Block scales across a tile (mainloop "blockscale", token-major tiles): w_scale has one value per
# 128 weight rows, i.e. per 128 output columns. A tile_n that divides 128 never crosses a 128-column
# block; other widths (80, 96, 112: more tiles per wave than 128, fewer idle SMs in the last wave;
# 144, 160, 192: less shared-memory traffic per flop) cross at most one boundary (max_w_scale_blocks),
# which lies on an n8 column atom because tile starts are multiples of 16. A stage then holds both blocks' w_scale, and the promotion uses the first for the tile's first
# `first_block_atoms` atoms and the second for the rest. That count is one of a few values fixed per
# tile, so the kernel branches once per K block to a promotion unrolled for it (no per-value select).
# Plain integer arithmetic, traced by the kernel and run on Python ints by tests/test_blockscale_tiles.py.
# ---------------------------------------------------------------------------------------------
SCALE_BLOCK = 128


def max_w_scale_blocks(tile_n):
    """The most 128-column w_scale blocks a tile_n-wide tile touches: its start lies at most
    128 - gcd(tile_n, 128) columns into a block."""
    return -(-(SCALE_BLOCK - math.gcd(tile_n, SCALE_BLOCK) + tile_n) // SCALE_BLOCK)


def w_scale_blocks(tile_n):
    """w_scale values a stage holds for a tile_n-wide tile: 1 where tile_n divides 128, else 2 (the
    blockscale family refuses widths that can touch 3 blocks)."""
    return 1 if SCALE_BLOCK % tile_n == 0 else 2


def first_block_atoms(n0, tile_n, imin=min):
    """n8 column atoms of the tile starting at column n0 that lie in n0's 128-column block."""
    return imin(tile_n, SCALE_BLOCK - n0 % SCALE_BLOCK) // 8


def first_block_atom_counts(tile_n):
    """Every value first_block_atoms takes over the tiles n0 = t * tile_n (they repeat every 128 tiles)."""
    return tuple(sorted({first_block_atoms(t * tile_n, tile_n) for t in range(SCALE_BLOCK)}))


DTYPE_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "f16": "fp16", "half": "fp16", "float16": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "f32": "fp32", "float": "fp32", "float32": "fp32", "torch.float32": "fp32",
    "fp8_e4m3fn": "fp8_e4m3fn", "fp8": "fp8_e4m3fn", "e4m3": "fp8_e4m3fn", "float8_e4m3fn": "fp8_e4m3fn",
    "torch.float8_e4m3fn": "fp8_e4m3fn",
    "int8": "int8", "i8": "int8", "s8": "int8", "torch.int8": "int8",
}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8_e4m3fn": 1, "int8": 1}
CPP_DTYPE = {k: f"flygemm::DType::{k}" for k in DTYPE_BYTES}


def norm_dtype(family: str, s, allowed) -> str:
    key = str(s).strip().lower()
    name = DTYPE_ALIASES.get(key)
    if name is None or name not in allowed:
        raise ValueError(f"{family}: unsupported dtype {s!r} (expected one of {', '.join(allowed)})")
    return name


def c_ident(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


# ---------------------------------------------------------------------------------------------
# Configuration (pure Python, no DSL import needed)
# ---------------------------------------------------------------------------------------------
class GemmConfig:
    """Static description of one specialization, derived from a kernels CSV row.  Families
    subclass it to set FAMILY / IN_DTYPES / OUT_DTYPES / MAINLOOP / EPILOGUE and to add checks."""

    FAMILY = "hopper_gemm"
    IN_DTYPES = ("bf16", "fp16")
    OUT_DTYPES = ("bf16", "fp16", "fp32")
    MAINLOOP = "plain"        # "plain" | "blockscale"
    EPILOGUE = "bias"         # "bias" | "scaled"
    DEFAULT_TILE = (128, 128, 64)
    MAINLOOP_TEXT = "TMA + mbarrier pipeline + wgmma (SS), fp32 accumulators"
    EPILOGUE_TEXT = "bias(fp32) + round once + stmatrix/st.shared + TMA store"

    def __init__(self, in_dtype="bf16", out_dtype=None, tile_m=128, tile_n=128, tile_k=None,
                 stages=0, mma_wg=0, raster_group=8, cluster_m=1, cluster_n=1, epi_stages=0,
                 overlap=1, release_scope="cta", split=0, promote=0, pingpong=0, swap_ab=0,
                 scale_tma=None):
        fam = self.FAMILY
        self.in_dtype = norm_dtype(fam, in_dtype, self.IN_DTYPES)
        self.out_dtype = norm_dtype(fam, out_dtype or in_dtype, self.OUT_DTYPES)
        in_b = DTYPE_BYTES[self.in_dtype]
        if tile_k is None:
            tile_k = 128 // in_b
        self.tile_m, self.tile_n, self.tile_k = int(tile_m), int(tile_n), int(tile_k)
        self.cluster_m, self.cluster_n = int(cluster_m), int(cluster_n)
        self.raster_group = int(raster_group)
        self.epi_stages = int(epi_stages)

        if self.tile_m not in (64, 128, 192, 256):
            raise ValueError(f"{fam}: tile_m must be 64, 128, 192 or 256, got {self.tile_m}")
        # tile_n: a multiple of 16 (the 16-column epilogue sub-tile of tiles that are not a multiple
        # of 32; wgmma takes any multiple of 8)
        if self.tile_n % 16 != 0 or not (32 <= self.tile_n <= 256):
            raise ValueError(f"{fam}: tile_n must be a multiple of 16 in [32, 256], got {self.tile_n}")
        # 64, 128 or 256 bytes of K per row: SW64 / SW128 / 2 x SW128 shared-memory atoms, and a
        # multiple of the wgmma K (16 for 16-bit inputs, 32 for 8-bit inputs = 32 bytes).
        allowed_k = tuple(b // in_b for b in (64, 128, 256))
        if self.tile_k not in allowed_k:
            raise ValueError(f"{fam}: tile_k must be one of {allowed_k} for {self.in_dtype} inputs, "
                             f"got {self.tile_k}")
        # Thread-block clusters of 2 CTAs (tile pairs adjacent in M: 2x1, sharing the W tile; or in
        # N: 1x2, sharing the A tile), the shared operand multicast by TMA.  Size 4 is not offered:
        # 132 SMs / 4 clusters are not all co-resident on every H100/H200 (GPC sizes vary), and a
        # persistent grid larger than the co-resident clusters runs a second wave.
        if (self.cluster_m, self.cluster_n) not in ((1, 1), (2, 1), (1, 2)):
            raise ValueError(f"{fam}: cluster must be 1x1, 2x1 or 1x2, got "
                             f"{self.cluster_m}x{self.cluster_n}")
        if self.tile_m % (8 * self.cluster_n) or self.tile_n % (8 * self.cluster_m):
            raise ValueError(f"{fam}: the multicast slices of tile {self.tile_m}x{self.tile_n} "
                             f"must be multiples of 8 rows")
        # blockscale: 1 = issue block kb+1's wgmma (into a second scratch accumulator) before
        # promoting block kb; 0 = wgmma -> wait -> promote, one block at a time.
        self.overlap = int(overlap)
        if self.overlap not in (0, 1):
            raise ValueError(f"{fam}: overlap must be 0 or 1")
        # Memory-model scope of a consumer's release arrive on a cluster's stage barriers (local
        # and peer CTA alike, through its shared::cluster address): "cta" is the .release.cta
        # arrive of CUTLASS / DeepGEMM multicast pipelines (wgmma.wait_group has already retired
        # the stage's reads); "cluster" is the formally cluster-scoped release (ptxas emits a
        # MEMBAR.GPU before each such arrive).
        self.release_scope = str(release_scope)
        if self.release_scope not in ("cta", "cluster"):
            raise ValueError(f"{fam}: release_scope must be cta or cluster")
        if self.raster_group < 1:
            raise ValueError(f"{fam}: raster_group must be >= 1")
        # split = S_max >= 2: the kernel also runs split-K (run-time split_k <= S_max): work item
        # (slice s, tile) covers K tiles [s*KT/S, (s+1)*KT/S) and stores its fp32 tile to the op's
        # workspace; a reduce kernel of the same launcher sums the slices in order, adds the bias
        # and rounds once.  Without clusters; not for int8, whose s32 sums would lose exactness in
        # fp32 partials.  Blockscale slices write their promoted (scaled) sums.
        self.split = int(split)
        if self.split == 1 or not 0 <= self.split <= MAX_SPLIT_K:
            raise ValueError(f"{fam}: split must be 0 or in [2, {MAX_SPLIT_K}]")
        if self.split and ((self.cluster_m, self.cluster_n) != (1, 1) or self.in_dtype == "int8"):
            raise ValueError(f"{fam}: split-K needs no cluster and a float input")
        # promote = P >= 1: fp8 only. Hopper's fp8 wgmma keeps its running sum in a reduced-precision
        # accumulator (measured: relative error 5e-4 at K = 1024 growing to 7e-3 at K = 65536, like
        # torch._scaled_mm(use_fast_accum=True)); with promote the wgmma sums P K tiles into a
        # scratch accumulator that is then added to an fp32 one (1.3e-4 flat, like cuBLAS's
        # default), at the cost of a second accumulator (tile_m x tile_n / threads <= 96 values).
        # swap_ab = 1 (the .sw kernels): the tile's rows are weight rows and its columns tokens, i.e. the
        # kernel computes out^T = W . A^T and stores it transposed (an M-major TMA store of the same
        # `out`). For small M (decode-sized M = 9..64): tile_n 32 / 64 tokens against 64 / 128-row weight
        # tiles instead of 64-row token tiles that are mostly empty. No clusters. The epilogue's row and
        # column operands (bias, the two scales) trade places, and split-K partials are written in the
        # op's [S, M_pad, N] orientation (the usual workspace and reduce kernel). The blockscale
        # mainloop promotes with one w_scale per tile (tile_m divides 128) and an a_scale per column.
        self.swap_ab = int(swap_ab)
        if self.swap_ab not in (0, 1):
            raise ValueError(f"{fam}: swap_ab must be 0 or 1")
        if self.swap_ab and (self.cluster_m, self.cluster_n) != (1, 1):
            raise ValueError(f"{fam}: swap_ab needs no cluster")
        if self.swap_ab and self.MAINLOOP == "blockscale" and (128 % self.tile_m or self.tile_n % 32):
            raise ValueError(f"{fam}: swap_ab with block scales needs tile_m dividing 128 (one w_scale "
                             f"per tile) and tile_n a multiple of 32, got {self.tile_m}x{self.tile_n}")
        self.promote = int(promote)
        if self.promote < 0:
            raise ValueError(f"{fam}: promote must be >= 0")
        if self.promote and (self.MAINLOOP != "plain" or self.in_dtype != "fp8_e4m3fn"):
            raise ValueError(f"{fam}: promote is for the fp8 plain mainloop")
        if self.epi_stages < 0:
            raise ValueError(f"{fam}: epi_stages must be >= 1 (0: automatic)")

        # Consumer schedule.  Cooperative (pingpong=0): mma_wg consumer warpgroups share each tile,
        # splitting its rows (each wgmma atom covers 64 rows; tile_m 192: three, so that while one
        # promotes / stores the other two keep the tensor cores fed).  Ping-pong (pingpong=1): two
        # consumer warpgroups ("teams" of mma_wg = 1) take alternate tiles, each a whole tile, so
        # that one team's epilogue runs while the other's mainloop keeps the tensor cores busy.
        # The teams consume the shared stage ring in tile order, which is what alternates them.
        self.pingpong = int(pingpong)
        if self.pingpong not in (0, 1):
            raise ValueError(f"{fam}: pingpong must be 0 or 1")
        if self.pingpong:
            if mma_wg and int(mma_wg) != 1:
                raise ValueError(f"{fam}: pingpong: each tile belongs to one warpgroup (mma_wg=1)")
            if self.split:
                raise ValueError(f"{fam}: pingpong does not run split-K")
        self.teams = 2 if self.pingpong else 1
        # scale_tma = R >= 2 (blockscale): the producer loads a_scale / w_scale by TMA, a box of SCALE_GROUP K
        # blocks per load, into a ring of R slots with its own full / empty mbarriers; 0: 4-byte cp.async copies
        # into each stage (one a_scale per token row). Default (None): 3 for the token-major tiles (H200,
        # forty-third session: 3-16% faster than the stage copies at large M, docs/PERF.md), 0 for the .sw
        # tiles (1-3% slower there). A value other than the default names the kernel `.stR`.
        self.scale_tma_default = 3 if (self.MAINLOOP == "blockscale" and not self.swap_ab
                                       and not self.pingpong) else 0
        self.scale_tma = self.scale_tma_default if scale_tma is None else int(scale_tma)
        if self.scale_tma and (self.MAINLOOP != "blockscale" or self.scale_tma < 2 or self.pingpong):
            raise ValueError(f"{fam}: scale_tma = ring slots >= 2, for the cooperative blockscale mainloop")
        self.mma_wg = 1 if self.pingpong else (
            int(mma_wg) if mma_wg else {64: 1, 192: 3}.get(self.tile_m, 2))
        if self.mma_wg not in (1, 2, 3) or self.tile_m % (64 * self.mma_wg) != 0:
            raise ValueError(f"{fam}: mma_wg={self.mma_wg} does not divide tile_m={self.tile_m}")
        self.consumer_wgs = self.mma_wg * self.teams
        # Register split of the 64K-entry register file (setmaxnreg, multiples of 8): the producer
        # warpgroup drops to producer_regs, the consumers rise to consumer_regs.  With 3 consumer
        # warpgroups (512 threads): 128 x 32 + 384 x 160 = 65536.
        self.producer_regs, self.consumer_regs = (32, 160) if self.consumer_wgs == 3 else (40, 232)
        acc_regs = self.tile_m * self.tile_n // (128 * self.mma_wg)
        limit = self.max_acc_regs()
        if acc_regs > limit:
            raise ValueError(f"{fam}: tile {self.tile_m}x{self.tile_n} with {self.mma_wg} "
                             f"consumer warpgroup(s) needs {acc_regs} accumulator registers per "
                             f"thread (max {limit} for this family)")
        # 512-thread CTAs (3 consumer warpgroups) are compiled for the launch bound of 128 registers per thread (setmaxnreg
        # raises the consumers only at run time), and one wgmma needs its whole accumulator live: ptxas rejects
        # t192x208 (104) and t192x224 (112) bf16 for "insufficient registers (128)"; t192x192 (96) builds.
        if self.consumer_wgs == 3 and acc_regs > 96:
            raise ValueError(f"{fam}: tile {self.tile_m}x{self.tile_n} with 3 consumer warpgroups needs {acc_regs} "
                             f"accumulator registers per thread; 96 is the most ptxas fits under the 128-register bound "
                             f"of a 512-thread CTA")
        self.acc_regs = acc_regs
        # fp32 accumulator copies a consumer thread holds: the sum, plus the scratch target of a
        # promoting mainloop (blockscale: one, or two with overlap; promote: one).  About 32
        # registers stay for addresses, scales and loop state.  A pre-filter: ptxas has the last
        # word (t192x256 plain passes it with 128 accumulator registers and still fails ptxas).
        scratch = ((self.overlap + 1) if self.MAINLOOP == "blockscale" else 0) + (1 if promote else 0)
        if (1 + scratch) * acc_regs > self.consumer_regs - 32:
            why = ("promote's" if promote else
                   f"blockscale's {scratch} (overlap={self.overlap})" if scratch else "no")
            raise ValueError(f"{fam}: tile {self.tile_m}x{self.tile_n} with {self.mma_wg} consumer "
                             f"warpgroup(s): the sum plus {why} scratch accumulator(s) take "
                             f"{1 + scratch} x {acc_regs} registers per thread, over the "
                             f"{self.consumer_regs - 32} that fit in {self.consumer_regs}")
        self.threads = 128 * (1 + self.consumer_wgs)
        self.check_family()

        # Epilogue sub-tile: rows of a team's warpgroups x 32 columns (16 where tile_n is an odd
        # multiple of 16); each team has its own epi_stages buffers (ping-pong teams store concurrently).
        self.epi_m = min(64 * self.mma_wg, self.tile_m)
        self.epi_n = 32 if self.tile_n % 32 == 0 else 16
        out_b = DTYPE_BYTES[self.out_dtype]
        self.stage_bytes = (self.tile_m + self.tile_n) * self.tile_k * in_b + self.extra_stage_bytes()
        epi_buf = self.epi_m * self.epi_n * out_b * self.teams

        def stages_left(epi_stages):
            return (SMEM_CAPACITY - SMEM_RESERVED - self.fixed_extra_bytes() - epi_buf * epi_stages
                    ) // self.stage_bytes

        if self.epi_stages == 0:
            # automatic: 4 epilogue buffers (the store warp waits for a TMA store's smem read every
            # 4th sub-tile instead of every 2nd) where they cost no mainloop stage, else 2
            self.epi_stages = 4 if stages_left(4) == stages_left(2) else 2
        self.epi_bytes = epi_buf * self.epi_stages
        max_stages = stages_left(self.epi_stages)
        if max_stages < 2:
            raise ValueError(f"{fam}: tile does not fit in shared memory with 2 stages")
        want = int(stages) if stages else max_stages
        if want < 2:
            raise ValueError(f"{fam}: stages must be >= 2")
        self.stages = min(want, max_stages)
        self.smem_bytes = (self.stages * self.stage_bytes + self.epi_bytes + self.fixed_extra_bytes()
                           + SMEM_RESERVED)

    @property
    def max_split_k(self) -> int:
        return self.split or 1

    @property
    def stream_k(self) -> bool:
        """A split-K kernel in the op's orientation also runs the stream-K schedule (split_k = STREAM_K)."""
        return bool(self.split) and not self.swap_ab

    # hooks ------------------------------------------------------------------------------------
    def max_acc_regs(self) -> int:
        return 128

    @property
    def scale_rows(self) -> int:
        """blockscale: per-token a_scale values a stage holds, the tile's token rows (its columns
        with swap_ab); the stage's w_scale follows them."""
        return self.tile_n if self.swap_ab else self.tile_m

    def extra_stage_bytes(self) -> int:
        """Shared memory per pipeline stage besides the A / W tiles."""
        if self.MAINLOOP == "blockscale" and not self.scale_tma:  # scale_rows + 4 fp32 scales, one mbarrier
            return (self.scale_rows + 4) * 4 + 8
        return 0

    @property
    def scale_slot_floats(self) -> int:
        """scale_tma: fp32 values per ring slot: the a_scale box [scale_rows][SCALE_GROUP], then the
        w_scale box [<= 2][SCALE_GROUP] padded to 128 bytes (each box starts 128-byte aligned)."""
        return self.scale_rows * SCALE_GROUP + 32

    def fixed_extra_bytes(self) -> int:
        """Shared memory besides the stages and epilogue buffers: the scale_tma ring and its
        full / empty mbarriers."""
        return self.scale_tma * (self.scale_slot_floats * 4 + 16)

    def check_family(self) -> None:
        pass

    @property
    def acc_is_int(self) -> bool:
        return self.in_dtype == "int8"

    @classmethod
    def from_spec(cls, spec: dict) -> "GemmConfig":
        p = dict(spec.get("params") or {})
        d = cls.DEFAULT_TILE
        return cls(
            in_dtype=spec.get("in_dtype", cls.IN_DTYPES[0]),
            out_dtype=spec.get("out_dtype") or spec.get("in_dtype", cls.IN_DTYPES[0]),
            tile_m=spec.get("tile_m", d[0]), tile_n=spec.get("tile_n", d[1]),
            tile_k=spec.get("tile_k", d[2]),
            stages=p.get("stages", 0), mma_wg=p.get("mma_wg", 0),
            raster_group=p.get("raster_group", 8),
            cluster_m=p.get("cluster_m", 1), cluster_n=p.get("cluster_n", 1),
            epi_stages=p.get("epi_stages", 0), overlap=p.get("overlap", 1),
            release_scope=p.get("release_scope", "cta"), split=p.get("split", 0),
            promote=p.get("promote", 0), pingpong=p.get("pingpong", 0),
            swap_ab=p.get("swap_ab", 0), scale_tma=p.get("scale_tma"),
        )

    def meta(self) -> dict:
        return {
            "in_dtype": self.in_dtype, "out_dtype": self.out_dtype,
            "tile_m": self.tile_m, "tile_n": self.tile_n, "tile_k": self.tile_k,
            "stages": self.stages, "epi_stages": self.epi_stages,
            "epi_tile": [self.epi_m, self.epi_n],
            "mma_warpgroups": self.mma_wg, "threads_per_cta": self.threads,
            "schedule": "pingpong" if self.pingpong else "cooperative",
            "consumer_warpgroups": self.consumer_wgs,
            "setmaxnreg": {"producer": self.producer_regs, "consumer": self.consumer_regs},
            "cluster": [self.cluster_m, self.cluster_n],
            "multicast": {"a": self.cluster_n > 1, "w": self.cluster_m > 1},
            "release_scope": (self.release_scope if (self.cluster_m, self.cluster_n) != (1, 1)
                              else "cta"),
            "raster_group": self.raster_group,
            "max_split_k": self.max_split_k,
            "stream_k": int(self.stream_k),
            "promote_k_tiles": self.promote,
            "swap_ab": bool(self.swap_ab),
            "scale_tma_slots": self.scale_tma,
            "smem_bytes": self.smem_bytes,
            "persistent": True, "warp_specialized": True,
            "mainloop": self.MAINLOOP_TEXT + (
                "; wgmma of block kb+1 in flight while block kb is promoted"
                if self.MAINLOOP == "blockscale" and self.overlap else ""),
            "epilogue": self.EPILOGUE_TEXT,
        }


# ---------------------------------------------------------------------------------------------
# DSL import (only needed for compiling)
# ---------------------------------------------------------------------------------------------
import_dsl = cx.import_dsl


_BASE_CLASS = None


def kernel_base_class():
    """The DSL kernel base class (defined on first use so that importing this module needs no DSL).

    Subclasses define the two entry points whose signatures are the family's ABI:
      * `@cute.jit __call__(self, <pointers>, M, N, K, lda, ldo, <flags>, max_ctas, stream)` which
        calls `self.launch_gemm(...)` with the family's extra kernel arguments;
      * `@cute.kernel kernel(self, <common kernel args>, <extra kernel args>)` which calls
        `self.kernel_body(...)`.
    """
    global _BASE_CLASS
    if _BASE_CLASS is not None:
        return _BASE_CLASS

    import cutlass
    import cutlass.cute as cute
    import cutlass.pipeline as pipeline
    import cutlass.utils.hopper_helpers as sm90_utils
    from cutlass import Int32, Int64, Float32
    from cutlass.cute.nvgpu import cpasync, warpgroup
    from cutlass.cutlass_dsl import if_generate
    from cutlass._mlir.dialects import nvvm
    from cutlass.tensor_utils import LayoutEnum
    import _ptx  # same directory
    _p = _ptx.helpers()
    stg_v2f32, ldg_cg_v2f32 = _p.stg_v2f32, _p.ldg_cg_v2f32
    ld_acquire_b64, st_release_b64, st_relaxed_b64 = _p.ld_acquire_b64, _p.st_release_b64, _p.st_relaxed_b64

    dsl_dtype = {"bf16": cutlass.BFloat16, "fp16": cutlass.Float16, "fp32": cutlass.Float32,
                 "fp8_e4m3fn": cutlass.Float8E4M3FN, "int8": cutlass.Int8}

    class HopperGemmSm90:
        def __init__(self, cfg: GemmConfig):
            self.cfg = cfg
            self.a_dtype = dsl_dtype[cfg.in_dtype]
            self.b_dtype = dsl_dtype[cfg.in_dtype]
            self.c_dtype = dsl_dtype[cfg.out_dtype]
            # wgmma accumulator: s32 for int8 inputs (exact), fp32 otherwise
            self.acc_is_int = cfg.acc_is_int
            self.acc_dtype = cutlass.Int32 if self.acc_is_int else Float32
            self.acc_zero = 0 if self.acc_is_int else 0.0
            self.mainloop_kind = cfg.MAINLOOP
            self.epilogue_kind = cfg.EPILOGUE
            self.tile_mnk = (cfg.tile_m, cfg.tile_n, cfg.tile_k)
            self.mma_wg = cfg.mma_wg            # warpgroups per tile
            self.teams = cfg.teams              # 2: ping-pong teams on alternate tiles
            self.num_mma_threads = 128 * cfg.mma_wg   # threads of one team
            self.threads = cfg.threads
            self.stages = cfg.stages
            self.epi_stages = cfg.epi_stages
            self.epi_tile = (cfg.epi_m, cfg.epi_n)
            self.raster_group = cfg.raster_group
            self.cluster_mn = (cfg.cluster_m, cfg.cluster_n)
            self.cluster_size = cfg.cluster_m * cfg.cluster_n
            # A is shared by the CTAs of a cluster row (same m), W by a cluster column (same n)
            self.mcast_a = cfg.cluster_n > 1
            self.mcast_b = cfg.cluster_m > 1
            self.bs_overlap = bool(cfg.overlap)
            self.release_scope = cfg.release_scope
            # A, W and out are all "row major": K-major operands, N-major output.  swap_ab: the
            # kernel's output tile is out^T, so its view of `out` is M-major (column major).
            self.swap_ab = bool(cfg.swap_ab)
            self.a_layout = LayoutEnum.ROW_MAJOR
            self.b_layout = LayoutEnum.ROW_MAJOR
            self.c_layout = LayoutEnum.COL_MAJOR if self.swap_ab else LayoutEnum.ROW_MAJOR
            self.load_regs = cfg.producer_regs
            self.mma_regs = cfg.consumer_regs
            self.buffer_align_bytes = 1024
            # blockscale: fp32 scales per stage in smem: scale_rows a_scale values, then w_scale
            self.scale_rows = cfg.scale_rows
            self.scale_stride = cfg.scale_rows + 4
            # scale_tma: ring slots (0: the scales travel in the stages) and floats per slot
            self.scale_tma = cfg.scale_tma
            self.scale_slot_floats = cfg.scale_slot_floats
            # w_scale values per stage (2: the tile may cross a 128-column block) and the counts of
            # first-block column atoms the promotion is unrolled for
            straddles = cfg.MAINLOOP == "blockscale" and not cfg.swap_ab
            self.w_scale_blocks = w_scale_blocks(cfg.tile_n) if straddles else 1
            self.first_atom_counts = first_block_atom_counts(cfg.tile_n)
            self.split_capable = cfg.split > 0
            self.streamk_capable = cfg.stream_k
            self.promote = cfg.promote
            # arrivals on a stage's empty barrier: one per consumer warp, or one per consumer
            # thread for the blockscale mainloop (whose threads also read the stage with LDS)
            self.per_thread_release = cfg.MAINLOOP == "blockscale"
            self.release_arrivals = self.num_mma_threads // (1 if self.per_thread_release else 32)

        # ---------------------------------------------------------------- static setup
        def _setup(self):
            self.tiled_mma = sm90_utils.make_trivial_tiled_mma(
                self.a_dtype, self.b_dtype,
                self.a_layout.sm90_mma_major_mode(), self.b_layout.sm90_mma_major_mode(),
                self.acc_dtype, (self.mma_wg, 1, 1), tiler_mn=(64, self.tile_mnk[1]))
            self.a_smem_staged = sm90_utils.make_smem_layout_a(
                self.a_layout, self.tile_mnk, self.a_dtype, self.stages)
            self.b_smem_staged = sm90_utils.make_smem_layout_b(
                self.b_layout, self.tile_mnk, self.b_dtype, self.stages)
            # team t owns epilogue buffers [t * epi_stages, (t + 1) * epi_stages)
            self.epi_smem_staged = sm90_utils.make_smem_layout_epi(
                self.c_dtype, self.c_layout, self.epi_tile, self.epi_stages * self.teams)

        def _make_r2s_copy(self, tiled_mma):
            """Tiled copy accumulators -> epilogue smem.  Its thread/value footprint comes from
            the stmatrix C-atom (also for fp32 outputs, where the data moves with plain st.shared)
            so that accumulator sub-tile e, value v lands at the coordinate the TMA store of
            sub-tile e expects; `verify_epilogue_layout` checks exactly this at build time."""
            copy_atom_r2s = sm90_utils.sm90_get_smem_store_op(
                self.c_layout, elem_ty_d=self.c_dtype, elem_ty_acc=Float32)
            copy_atom_c = cute.make_copy_atom(
                cute.nvgpu.warp.StMatrix8x8x16bOp(self.c_layout.is_m_major_c(), 4), self.c_dtype)
            tiled_copy_c_atom = cute.make_tiled_copy_C_atom(copy_atom_c, tiled_mma)
            return cute.make_tiled_copy_S(copy_atom_r2s, tiled_copy_c_atom)

        def acc_row(self, i, wg, warp, lane):
            """Row (inside the tile) of accumulator value i of a consumer thread: the PTX wgmma
            m64nNk* D fragment, row 16*warp + lane/4 (+8), repeated per 64-row atom.  Python ints
            or DSL values; `check_layouts` verifies it against the tiled MMA's partition."""
            per_atom = self.tile_mnk[1] // 2
            j, rep_m = i % per_atom, i // per_atom
            return 64 * self.mma_wg * rep_m + 64 * wg + 16 * warp + lane // 4 + 8 * ((j // 2) % 2)

        def acc_row_slot(self, i):
            """Which of the thread's 2 * rep_m distinct rows accumulator value i belongs to."""
            per_atom = self.tile_mnk[1] // 2
            j, rep_m = i % per_atom, i // per_atom
            return 2 * rep_m + (j // 2) % 2

        def acc_col_slot(self, i):
            """Which of the thread's tile_n / 4 distinct columns (2 per n8 block) value i belongs to."""
            j = i % (self.tile_mnk[1] // 2)
            return 2 * (j // 4) + j % 2

        def bs_scale_slots(self):
            """blockscale: combined scales a consumer thread keeps per K block, one per distinct
            accumulator row (2 per 64-row wgmma atom), or per distinct column with swap_ab."""
            bm, bn, _ = self.tile_mnk
            return bn // 4 if self.swap_ab else 2 * (bm // (64 * self.mma_wg))

        def bs_scale_index(self, r, thr_row0, lane):
            """Index in a stage's a_scale copy of the thread's scale slot r: its row (the PTX wgmma D
            fragment's lane/4 (+8) per atom), or with swap_ab its column (2*(lane%4) (+1) per n8)."""
            if self.swap_ab:
                return 8 * (r // 2) + 2 * (lane % 4) + r % 2
            return thr_row0 + 64 * self.mma_wg * (r // 2) + 8 * (r % 2)

        def bs_slot(self, i):
            """blockscale: the scale slot of accumulator value i."""
            return self.acc_col_slot(i) if self.swap_ab else self.acc_row_slot(i)

        def bs_promote_slot(self, i, first_atoms):
            """blockscale: index in s_row of value i's combined scale when the tile's first
            `first_atoms` n8 column atoms are in its first w_scale block and the rest in the next."""
            atom = (i % (self.tile_mnk[1] // 2)) // 4
            second = 1 if (self.w_scale_blocks > 1 and atom >= first_atoms) else 0
            return second * self.bs_scale_slots() + self.bs_slot(i)

        def check_layouts(self, threads):
            """Trace-time check (static thread indices): for every epilogue sub-tile e and value v
            the accumulator coordinate equals the coordinate the r2s copy stores it to, and the
            accumulator coordinates (bias / scale lookups) match the PTX wgmma layout."""
            self._setup()
            bm, bn, _ = self.tile_mnk
            tiled_mma = self.tiled_mma
            r2s = self._make_r2s_copy(tiled_mma)
            c_tile = cute.make_identity_tensor((bm, bn))
            c_epi = cute.make_identity_tensor(self.epi_tile)
            g_epi = cute.zipped_divide(cute.make_identity_tensor((bm, bn)), self.epi_tile)
            epi_shape = g_epi.shape[1]
            epi_layout = cute.make_layout(epi_shape, stride=(epi_shape[1], 1))
            epi_num = cute.size(g_epi, mode=[1])
            bad = []
            for t in threads:
                t_c = tiled_mma.get_slice(t).partition_C(c_tile)
                # PTX m64nNk16 D fragment: row 16*warp + lane/4 (+8), col 8*j + 2*(lane%4) (+1)
                wg, lane, warp = t // 128, t % 32, (t % 128) // 32
                per_atom = bn // 2  # accumulator values of one 64 x bn wgmma per thread
                for i in range(cute.size(t_c)):
                    j = i % per_atom
                    want = (self.acc_row(i, wg, warp, lane),
                            8 * (j // 4) + 2 * (lane % 4) + (j % 2))
                    if tuple(t_c[i]) != want:
                        bad.append(("acc", t, i, tuple(t_c[i]), want))
                r_acc = r2s.retile(t_c)
                src = r2s.get_slice(t).partition_S(c_epi)
                n = cute.size(src)
                if cute.size(r_acc) != n * epi_num:
                    bad.append(("size", t, cute.size(r_acc), n * epi_num))
                    continue
                for e in range(epi_num):
                    em, en = epi_layout.get_hier_coord(e)
                    for v in range(n):
                        want = (em * self.epi_tile[0] + src[v][0], en * self.epi_tile[1] + src[v][1])
                        if tuple(r_acc[e * n + v]) != want:
                            bad.append(("epi", t, e, v, tuple(r_acc[e * n + v]), want))
            self.layout_errors = bad

        # ---------------------------------------------------------------- host launcher
        def launch_gemm(self, a_ptr, w_ptr, out_ptr, bias_ptr, M, N, K, lda, ldo, has_bias,
                        max_ctas, stream, extra_kernel_args=(), split_args=None):
            """Host side, traced inside the family's `@cute.jit __call__`: TMA descriptors, grid,
            shared storage, launch of `self.kernel(<common args>, *extra_kernel_args,
            *split_args)`.  split_args = (ws_ptr, M_pad, split_k) for the families that take them
            (used by split-capable configs only): split_k > 1 runs num_tiles * split_k work items
            and then `reduce_kernel` on the same stream."""
            self._setup()
            bm, bn, bk = self.tile_mnk
            M_op, N_op = M, N
            if cutlass.const_expr(self.swap_ab):
                # the kernel's problem is out^T[N, M] = W[N, K] . A[M, K]^T: its "M" is N
                mA = cute.make_tensor(w_ptr, cute.make_layout((N, K), stride=(Int64(K), 1)))
                mB = cute.make_tensor(a_ptr, cute.make_layout((M, K), stride=(lda, 1)))
                mC = cute.make_tensor(out_ptr, cute.make_layout((N, M), stride=(1, ldo)))
                M, N = N, M
                extra_kernel_args = self._swapped_epilogue_args(extra_kernel_args)
            else:
                mA = cute.make_tensor(a_ptr, cute.make_layout((M, K), stride=(lda, 1)))
                mB = cute.make_tensor(w_ptr, cute.make_layout((N, K), stride=(Int64(K), 1)))
                mC = cute.make_tensor(out_ptr, cute.make_layout((M, N), stride=(ldo, 1)))

            if cutlass.const_expr(self.cluster_size == 1):
                tma_atom_a, tma_a = cpasync.make_tiled_tma_atom(
                    cpasync.CopyBulkTensorTileG2SOp(), mA,
                    cute.slice_(self.a_smem_staged, (None, None, 0)), (bm, bk))
                tma_atom_b, tma_b = cpasync.make_tiled_tma_atom(
                    cpasync.CopyBulkTensorTileG2SOp(), mB,
                    cute.slice_(self.b_smem_staged, (None, None, 0)), (bn, bk))
            else:
                # the shared operand: each CTA of the pair loads half of the tile and multicasts
                # it into both CTAs' shared memory
                cm, cn = self.cluster_mn
                tma_atom_a, tma_a = cpasync.make_tiled_tma_atom(
                    cpasync.CopyBulkTensorTileG2SMulticastOp() if self.mcast_a
                    else cpasync.CopyBulkTensorTileG2SOp(), mA,
                    cute.slice_(self.a_smem_staged, (None, None, 0)), (bm, bk),
                    num_multicast=cn)
                tma_atom_b, tma_b = cpasync.make_tiled_tma_atom(
                    cpasync.CopyBulkTensorTileG2SMulticastOp() if self.mcast_b
                    else cpasync.CopyBulkTensorTileG2SOp(), mB,
                    cute.slice_(self.b_smem_staged, (None, None, 0)), (bn, bk),
                    num_multicast=cm)
            tma_atom_c, tma_c = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileS2GOp(), mC,
                cute.slice_(self.epi_smem_staged, (None, None, 0)), self.epi_tile)

            num_m_tiles = (M + (bm - 1)) // bm
            num_n_tiles = (N + (bn - 1)) // bn
            k_tiles = (K + (bk - 1)) // bk
            if cutlass.const_expr(self.scale_tma > 0):
                extra_kernel_args = self._scale_tma_atoms(extra_kernel_args, M, N, k_tiles)
            num_tiles = num_m_tiles * num_n_tiles
            if cutlass.const_expr(self.split_capable):
                num_tiles = self._work_items(num_tiles, k_tiles, split_args[2])
            if cutlass.const_expr(self.cluster_size == 1):
                grid = (cutlass.min(num_tiles, cutlass.max(max_ctas, 1)), 1, 1)
            else:
                # grid (cluster_m, cluster_n, #clusters), one cluster per cluster-tile at a time
                cm, cn = self.cluster_mn
                num_cl_tiles = ((num_m_tiles + (cm - 1)) // cm) * ((num_n_tiles + (cn - 1)) // cn)
                grid = (cm, cn, cutlass.min(
                    num_cl_tiles, cutlass.max(max_ctas // self.cluster_size, 1)))

            @cute.struct
            class SharedStorage:
                mbar: cute.struct.MemRange[cutlass.Int64, self.stages * 2]
                sA: cute.struct.Align[
                    cute.struct.MemRange[self.a_dtype, cute.cosize(self.a_smem_staged)],
                    self.buffer_align_bytes]
                sB: cute.struct.Align[
                    cute.struct.MemRange[self.b_dtype, cute.cosize(self.b_smem_staged)],
                    self.buffer_align_bytes]
                sC: cute.struct.Align[
                    cute.struct.MemRange[self.c_dtype, cute.cosize(self.epi_smem_staged)],
                    self.buffer_align_bytes]
                if self.mainloop_kind == "blockscale" and self.scale_tma == 0:
                    # per stage: the tile's a_scale column + w_scale (cp.async by the producer
                    # warp) and one mbarrier completed by those copies
                    sS: cute.struct.Align[
                        cute.struct.MemRange[Float32, self.scale_stride * self.stages], 16]
                    sbar: cute.struct.MemRange[cutlass.Int64, self.stages]
                if self.scale_tma > 0:
                    # the scale ring: per slot the a_scale and w_scale TMA boxes of SCALE_GROUP K blocks;
                    # full barriers [0, R) (TMA bytes), empty barriers [R, 2R) (every consumer thread)
                    sR: cute.struct.Align[
                        cute.struct.MemRange[Float32, self.scale_slot_floats * self.scale_tma], 128]
                    rbar: cute.struct.MemRange[cutlass.Int64, 2 * self.scale_tma]
                if self.teams > 1:
                    # ping-pong turn barriers: order_bar[t] completes a phase when the other
                    # team has waited on every stage of its tile (see kernel_body)
                    order_bar: cute.struct.MemRange[cutlass.Int64, 2]

            self.shared_storage = SharedStorage
            self.smem_struct_bytes = SharedStorage.size_in_bytes()

            self.kernel(
                tma_atom_a, tma_a, tma_atom_b, tma_b, tma_atom_c, tma_c,
                self.tiled_mma, self.a_smem_staged, self.b_smem_staged, self.epi_smem_staged,
                bias_ptr, M, N, has_bias, num_m_tiles, num_n_tiles, *extra_kernel_args,
                *(split_args or ()),
            ).launch(
                grid=grid,
                block=[self.threads, 1, 1],
                cluster=None if self.cluster_size == 1 else (*self.cluster_mn, 1),
                min_blocks_per_mp=1,
                stream=stream,
            )
            if cutlass.const_expr(self.split_capable):
                self._launch_reduce(*split_args, out_ptr, bias_ptr, M_op, N_op, ldo, has_bias, stream)

        def _scale_tma_atoms(self, extra, M, N, k_tiles):
            """scale_tma, host side: TMA atoms and tensors for a_scale [tokens, KB] and w_scale [ceil(weight rows
            / 128), KB] (the kernel's M / N orientation: tokens are its N with swap_ab), both with a row stride
            of KB rounded up to SCALE_GROUP floats. A box is scale_rows (w_scale: w_scale_blocks) rows x
            SCALE_GROUP K blocks, row-major in shared memory; past the tensor's edges TMA writes zeros."""
            a_scale_ptr, w_scale_ptr = extra
            tokens, w_rows = (N, M) if self.swap_ab else (M, N)
            kb_stride = (k_tiles + (SCALE_GROUP - 1)) // SCALE_GROUP * SCALE_GROUP
            m_sa = cute.make_tensor(a_scale_ptr, cute.make_layout((tokens, k_tiles), stride=(kb_stride, 1)))
            m_sw = cute.make_tensor(w_scale_ptr, cute.make_layout(((w_rows + 127) // 128, k_tiles),
                                                                  stride=(kb_stride, 1)))
            rows, wb = self.scale_rows, self.w_scale_blocks
            atom_sa, tma_sa = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), m_sa,
                cute.make_layout((rows, SCALE_GROUP), stride=(SCALE_GROUP, 1)), (rows, SCALE_GROUP))
            atom_sw, tma_sw = cpasync.make_tiled_tma_atom(
                cpasync.CopyBulkTensorTileG2SOp(), m_sw,
                cute.make_layout((wb, SCALE_GROUP), stride=(SCALE_GROUP, 1)), (wb, SCALE_GROUP))
            return (atom_sa, tma_sa, atom_sw, tma_sw)

        def _swapped_epilogue_args(self, extra):
            """swap_ab: the kernel's rows are the op's columns, so the "scaled" epilogue's
            (row scale, column scale, row step, column step) = (a_scale, w_scale, a_step, w_step)
            become (w_scale, a_scale, w_step, a_step); the "bias" epilogue takes no extra args."""
            if self.mainloop_kind == "blockscale":
                return extra   # (a_scale, w_scale): the mainloop reads them in either orientation
            if self.epilogue_kind != "scaled":
                assert not extra, "swap_ab: unknown extra kernel arguments"
                return extra
            a_scale, w_scale, a_step, w_step = extra
            return (w_scale, a_scale, w_step, a_step)

        @cute.jit
        def _launch_reduce(self, ws_ptr, M_pad, split_k, out_ptr, bias_ptr, M, N, ldo, has_bias,
                           stream):
            """Host side: the split-K reduce after the GEMM kernel, only when split_k > 1."""
            if split_k > 1:
                total = M * N
                # programmatic dependent of the GEMM (PDL, released at the GEMM's start): its CTAs wait
                # on the SMs for the partials, so no launch gap sits between the two kernels
                self.reduce_kernel(ws_ptr, out_ptr, bias_ptr, M, N, ldo, M_pad, split_k,
                                   has_bias).launch(
                    grid=((total + (REDUCE_THREADS - 1)) // REDUCE_THREADS, 1, 1),
                    block=[REDUCE_THREADS, 1, 1], stream=stream, use_pdl=True)

        # ---------------------------------------------------------------- split-K reduce
        @cute.kernel
        def reduce_kernel(self, ws_ptr: cute.Pointer, out_ptr: cute.Pointer,
                          bias_ptr: cute.Pointer, M: Int32, N: Int32, ldo: Int64, M_pad: Int32,
                          split_k: Int32, has_bias: Int32):
            """out[m, n] = round(sum over s = 0..split_k-1 in order of ws[s, m, n] + bias[n]):
            one output element per thread (the adapter keeps M * N below 2^31); the partials
            already carry the scales, so the sum is rounded exactly once. Launched as the GEMM's
            programmatic dependent: griddepcontrol.wait returns once the GEMM has completed and its
            partials are visible. Every slice's load is issued before the first add (the loads of a
            loop would each wait a full L2 round trip)."""
            cute.arch.griddepcontrol_wait()
            tidx, _, _ = cute.arch.thread_idx()
            bidx, _, _ = cute.arch.block_idx()
            idx = bidx * REDUCE_THREADS + tidx
            if idx < M * N:
                m = idx // N
                n = idx - m * N
                ws = cute.make_tensor(ws_ptr, cute.make_layout((split_k * M_pad, N),
                                                               stride=(Int64(N), 1)))
                v = ws[(m, n)]
                parts = [Float32(0.0)] * self.cfg.max_split_k
                for s in cutlass.range_constexpr(1, self.cfg.max_split_k):
                    p = Float32(0.0)
                    if s < split_k:
                        p = ws[(s * M_pad + m, n)]
                    parts[s] = p
                for s in cutlass.range_constexpr(1, self.cfg.max_split_k):
                    if s < split_k:
                        v = v + parts[s]
                if has_bias != 0:
                    bias_t = cute.make_tensor(bias_ptr, cute.make_layout(N))
                    v = v + bias_t[n]
                out = cute.make_tensor(out_ptr, cute.make_layout((M, N), stride=(ldo, 1)))
                out[(m, n)] = v.to(self.c_dtype)

        # ---------------------------------------------------------------- tile scheduler
        @cute.jit
        def _tile_coord(self, tile: Int32, num_m_tiles: Int32, num_n_tiles: Int32):
            """Grouped raster: `raster_group` tile-columns at a time, n fastest inside a group,
            so that the CTAs of one wave share few A row-panels and W column-panels."""
            g = self.raster_group
            per_group = num_m_tiles * g
            group = tile // per_group
            first_n = group * g
            width = cutlass.min(num_n_tiles - first_n, g)
            r = tile - group * per_group
            m_idx = r // width
            n_idx = first_n + (r - m_idx * width)
            return m_idx, n_idx

        @cute.jit
        def _work_items(self, num_tiles, k_tiles, split_k):
            """Work items of a split-capable kernel: tiles x split_k slices, or for stream-K the
            tiles x k_tiles units (also the grid's upper bound)."""
            items = num_tiles * split_k
            if cutlass.const_expr(self.streamk_capable):
                if split_k < 0:
                    items = num_tiles * k_tiles
            return items

        def _num_work_tiles(self, num_m_tiles, num_n_tiles, k_tiles, split_k=None):
            """Work items of the persistent loop: tiles (times split_k slices for a split-capable
            config, or stream-K units), or cluster-tiles in a cluster."""
            if cutlass.const_expr(self.split_capable):
                return self._work_items(num_m_tiles * num_n_tiles, k_tiles, split_k)
            if cutlass.const_expr(self.cluster_size == 1):
                return num_m_tiles * num_n_tiles
            cm, cn = self.cluster_mn
            return ((num_m_tiles + (cm - 1)) // cm) * ((num_n_tiles + (cn - 1)) // cn)

        @cute.jit
        def _work_range(self, first, ctas, num_m_tiles, num_n_tiles, k_tiles, split_k):
            """The persistent loop's cursor range [cur, end): work items first, first + step, ... below
            the item count, or for stream-K CTA `first`'s run of units (ctas = the grid)."""
            cur = first
            end = self._num_work_tiles(num_m_tiles, num_n_tiles, k_tiles, split_k)
            if cutlass.const_expr(self.streamk_capable):
                if split_k < 0:
                    cur = streamk_first_unit(first, ctas, end)
                    end = streamk_first_unit(first + 1, ctas, end)
            return cur, end

        @cute.jit
        def _work_piece(self, cur, end, step, num_m_tiles, num_n_tiles, k_tiles, split_k, rank_m, rank_n):
            """The work at cursor `cur` -> (m_idx, n_idx, first K tile, K tile count, next cursor): a tile
            (or cluster-tile), a split-K slice, or a stream-K piece (the run's units inside one tile)."""
            m_idx = Int32(0)
            n_idx = Int32(0)
            kt_begin = Int32(0)
            k_count = k_tiles
            nxt = cur + step
            if cutlass.const_expr(self.streamk_capable):
                if split_k < 0:
                    tile, kt_begin, k_count = streamk_piece(cur, end, k_tiles, cutlass.min)
                    m_idx, n_idx = self._tile_coord(tile, num_m_tiles, num_n_tiles)
                    nxt = cur + k_count
                else:
                    m_idx, n_idx, kt_begin, k_count = self._split_item(
                        cur, num_m_tiles, num_n_tiles, k_tiles, split_k)
            elif cutlass.const_expr(self.split_capable):
                m_idx, n_idx, kt_begin, k_count = self._split_item(
                    cur, num_m_tiles, num_n_tiles, k_tiles, split_k)
            elif cutlass.const_expr(self.cluster_size == 1):
                m_idx, n_idx = self._tile_coord(cur, num_m_tiles, num_n_tiles)
            else:
                m_idx, n_idx = self._cluster_tile_coord(cur, num_m_tiles, num_n_tiles, rank_m, rank_n)
            return m_idx, n_idx, kt_begin, k_count, nxt

        @cute.jit
        def _split_item(self, item: Int32, num_m_tiles: Int32, num_n_tiles: Int32,
                        k_tiles: Int32, split_k: Int32):
            """Split-K work item -> (m_idx, n_idx, first K tile, K tile count): slice-major, so
            each slice walks the tiles in the grouped raster; slice s owns K tiles
            [s * KT / S, (s + 1) * KT / S), never empty because the adapter keeps S <= KT."""
            num_tiles = num_m_tiles * num_n_tiles
            s = item // num_tiles
            m_idx, n_idx = self._tile_coord(item - s * num_tiles, num_m_tiles, num_n_tiles)
            kt_begin = (s * k_tiles) // split_k
            kt_end = ((s + 1) * k_tiles) // split_k
            return m_idx, n_idx, kt_begin, kt_end - kt_begin

        @cute.jit
        def _cluster_tile_coord(self, ctile: Int32, num_m_tiles: Int32, num_n_tiles: Int32,
                                rank_m: Int32, rank_n: Int32):
            """Clusters: the same grouped raster over cluster-tiles (cluster_m x cluster_n tiles,
            `raster_group` tile-columns per group rounded down to whole cluster-tiles); the CTA of
            cluster coordinate (rank_m, rank_n) takes the tile at that offset, so the CTAs of one
            cluster work on adjacent tiles that share their A row-panel (1x2) or W column-panel
            (2x1).  The partner tile of a cluster-tile on the ragged M / N edge may lie entirely
            outside the output: it is computed on TMA's zero fill and its store is clipped, which
            keeps both CTAs' pipelines (the multicast) in step."""
            cm, cn = self.cluster_mn
            num_cm = (num_m_tiles + (cm - 1)) // cm
            num_cn = (num_n_tiles + (cn - 1)) // cn
            g = max(1, self.raster_group // cn)
            per_group = num_cm * g
            group = ctile // per_group
            first_n = group * g
            width = cutlass.min(num_cn - first_n, g)
            r = ctile - group * per_group
            cm_idx = r // width
            cn_idx = first_n + (r - cm_idx * width)
            return cm_idx * cm + rank_m, cn_idx * cn + rank_n

        @cute.jit
        def _issue_k_tile(self, mainloop, read_state, tiled_mma, acc, tCrA, tCrB,
                          num_k_blocks: cutlass.Constexpr, accumulate_after_first: cutlass.Constexpr):
            """Waits for the stage of `read_state` and issues its wgmmas into `acc` as one committed
            group.  accumulate_after_first: the caller set ACCUMULATE off for a fresh sum; it is
            switched on after the first wgmma (returned: the field is a traced value)."""
            mainloop.consumer_wait(read_state)
            warpgroup.fence()
            for kb in cutlass.range_constexpr(num_k_blocks):
                cute.gemm(tiled_mma, acc, tCrA[(None, None, kb, read_state.index)],
                          tCrB[(None, None, kb, read_state.index)], acc)
                if cutlass.const_expr(accumulate_after_first):
                    tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            warpgroup.commit_group()
            return tiled_mma

        @cute.jit
        def _bs_load_scales(self, sS, stage, s_row, thr_row0, lane):
            """blockscale: s_row[b * slots + r] = a_scale of the thread's scale slot r x the stage's
            w_scale of block b (b = 0, or 0 and 1 for a tile that may cross a 128-column block)."""
            slots = self.bs_scale_slots()
            for r in cutlass.range_constexpr(slots):
                sa_r = sS[(self.bs_scale_index(r, thr_row0, lane), stage)]
                for b in cutlass.range_constexpr(self.w_scale_blocks):
                    s_row[b * slots + r] = sa_r * sS[(self.scale_rows + b, stage)]

        @cute.jit
        def _bs_stage_scales(self, read_state, scales, s_row, thr_row0, lane, kt, kt_first, kt_last, seq):
            """blockscale: reads the combined scales of K block kt (the stage of `read_state`) into `s_row`.
            scales = (sbar, sS, rbar, sR). In-stage scales: waits for the stage's scale barrier. scale_tma:
            `seq` counts the scale groups this thread has finished; it waits for the group's ring slot at the
            group's first K block (or the work piece's, kt_first), reads column kt % SCALE_GROUP and releases
            the slot after the group's last (or the piece's, kt_last). Returns the new count."""
            sbar, sS, rbar, sR = scales
            if cutlass.const_expr(self.scale_tma == 0):
                cute.arch.mbarrier_wait(sbar + read_state.index, read_state.phase)
                self._bs_load_scales(sS, read_state.index, s_row, thr_row0, lane)
            else:
                slot = seq % self.scale_tma
                if kt == kt_first or kt % SCALE_GROUP == 0:
                    cute.arch.mbarrier_wait(rbar + slot, (seq // self.scale_tma) % 2)
                col = kt % SCALE_GROUP
                slots = self.bs_scale_slots()
                w_col = self.scale_rows * SCALE_GROUP + col
                for r in cutlass.range_constexpr(slots):
                    sa_r = sR[(self.bs_scale_index(r, thr_row0, lane) * SCALE_GROUP + col, slot)]
                    for b in cutlass.range_constexpr(self.w_scale_blocks):
                        s_row[b * slots + r] = sa_r * sR[(w_col + b * SCALE_GROUP, slot)]
                if kt == kt_last or col == SCALE_GROUP - 1:
                    # every consumer thread arrives after its own reads of the slot
                    cute.arch.mbarrier_arrive(rbar + self.scale_tma + slot)
                    seq = seq + 1
            return seq

        @cute.jit
        def _bs_issue(self, mainloop, read_state, scales, tiled_mma, tCrA, tCrB, acc_blk, s_row,
                      thr_row0, lane, kt, kt_first, kt_last, seq, num_k_blocks: cutlass.Constexpr):
            """blockscale: waits for the stage of `read_state` (operands and scales), reads the
            combined scales of the thread's rows (columns with swap_ab) into `s_row`, issues the
            stage's wgmmas into `acc_blk` (overwritten: ACCUMULATE off for the first) and commits
            them as one group. Returns (tiled_mma, scale group count; see _bs_stage_scales)."""
            mainloop.consumer_wait(read_state)
            seq = self._bs_stage_scales(read_state, scales, s_row, thr_row0, lane, kt, kt_first, kt_last, seq)
            # orders the previous promotion's reads of acc_blk before the wgmma overwrites it
            warpgroup.fence()
            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
            for kb in cutlass.range_constexpr(num_k_blocks):
                cute.gemm(tiled_mma, acc_blk, tCrA[(None, None, kb, read_state.index)],
                          tCrB[(None, None, kb, read_state.index)], acc_blk)
                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
            warpgroup.commit_group()
            # returned so that the caller rebinds it: the ACCUMULATE field set here is a traced
            # value that must be carried through the caller's loops
            return tiled_mma, seq

        @cute.jit
        def _bs_promote(self, acc, acc_blk, s_row, first_atoms):
            """fp32 promotion of one K block: acc += acc_blk * scale of the value's row (column) and
            w_scale block. `first_atoms`: the tile's column atoms in its first w_scale block (run
            time, one of first_atom_counts; unused where the tile lies in one block)."""
            if cutlass.const_expr(self.w_scale_blocks == 1):
                self._bs_promote_fixed(acc, acc_blk, s_row, self.tile_mnk[1] // 8)
            else:
                self._bs_promote_branch(acc, acc_blk, s_row, first_atoms, self.first_atom_counts)

        @cute.jit
        def _bs_promote_branch(self, acc, acc_blk, s_row, first_atoms, counts: cutlass.Constexpr):
            """Binary search of `first_atoms` over the static `counts`, down to the promotion
            unrolled for it (a warp-uniform branch of depth log2(len(counts)) per K block)."""
            if cutlass.const_expr(len(counts) == 1):
                self._bs_promote_fixed(acc, acc_blk, s_row, counts[0])
            else:
                half = len(counts) // 2
                if first_atoms < counts[half]:
                    self._bs_promote_branch(acc, acc_blk, s_row, first_atoms, counts[:half])
                else:
                    self._bs_promote_branch(acc, acc_blk, s_row, first_atoms, counts[half:])

        @cute.jit
        def _bs_promote_fixed(self, acc, acc_blk, s_row, first_atoms: cutlass.Constexpr):
            for i in cutlass.range_constexpr(cute.size(acc)):
                acc[i] = acc[i] + acc_blk[i] * s_row[self.bs_promote_slot(i, first_atoms)]

        def _consumer_release(self, mainloop, state):
            """Releases a stage.  In a cluster, lane r < cluster size of each consumer warp arrives
            on the stage's empty barrier of CTA rank r through its shared::cluster address
            (mapa + mbarrier.arrive.shared::cluster): the producers of both CTAs write into this
            CTA's stage through the multicast, so both must see the release.  It follows
            wgmma.wait_group, which has retired the wgmma reads of the stage.  Scope: see
            GemmConfig.release_scope."""
            if cutlass.const_expr(self.per_thread_release):
                # blockscale: every consumer thread read the stage's scales itself (LDS), so every
                # thread arrives, each after its own reads (an elected lane's arrive does not order
                # the other lanes' reads in the memory model; racecheck reported the refill)
                bar = mainloop.sync_object_empty.get_barrier(state.index)
                if cutlass.const_expr(self.cluster_size == 1):
                    cute.arch.mbarrier_arrive(bar)
                else:
                    scope = (nvvm.MemScopeKind.CLUSTER if self.release_scope == "cluster"
                             else nvvm.MemScopeKind.CTA)
                    for r in range(self.cluster_size):  # traced once per rank (not a jit body)
                        cute.arch.mbarrier_arrive(bar, Int32(r), scope=scope)
            elif cutlass.const_expr(self.cluster_size == 1):
                mainloop.consumer_release(state)
            else:
                bar = mainloop.sync_object_empty.get_barrier(state.index)
                scope = (nvvm.MemScopeKind.CLUSTER if self.release_scope == "cluster"
                         else nvvm.MemScopeKind.CTA)
                if_generate(
                    mainloop.is_signaling_thread,
                    lambda: cute.arch.mbarrier_arrive(bar, mainloop.consumer_mask, scope=scope),
                )

        def _last_tile_shift(self, M, num_m_tiles):
            """m_shift <= 0: rows to move the last token tile of a ragged M by (0 when M is a multiple of
            tile_m, or M <= tile_m), so that it ends at row M (see kernel_body)."""
            bm = self.tile_mnk[0]
            return cutlass.max(M - bm, 0) - (num_m_tiles - 1) * bm

        @cute.jit
        def _row_shift(self, m_idx: Int32, num_m_tiles: Int32, m_shift: Int32):
            """Rows token tile m_idx is moved by: m_shift for the last tile of M, 0 for the others and
            for a cluster's partner tile past the edge (m_idx == num_m_tiles)."""
            is_last = (m_idx + 1) // num_m_tiles - m_idx // num_m_tiles
            return m_shift * is_last

        def _load_a(self, tma_atom_a, src, dst, bar, mcast_mask):
            """One stage's A tile by TMA (multicast to the cluster when A is the shared operand)."""
            if cutlass.const_expr(self.mcast_a):
                cute.copy(tma_atom_a, src, dst, tma_bar_ptr=bar, mcast_mask=mcast_mask)
            else:
                cute.copy(tma_atom_a, src, dst, tma_bar_ptr=bar)

        def _pass_turn(self, order_bar, team):
            """Ping-pong: this team has waited on every stage of its tile; the other team may start
            its mainloop (every thread of the team arrives: the barrier counts 128)."""
            if cutlass.const_expr(self.teams > 1):
                cute.arch.mbarrier_arrive(order_bar + (1 - team))

        @cute.jit
        def _store_tile(self, epi_acc, tCcC, has_bias, bias_t, bias_len, gC, m_idx, n_idx, tma_atom_c,
                        sC, tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out, epi_bar,
                        store_pipe, is_store_warp, epi_count, epi_base=0):
            """Epilogue of one output tile: + bias, round once to the output dtype, registers ->
            shared memory (stmatrix) -> TMA store, epi_stages buffers in rotation.  Returns the
            advanced buffer counter.  epi_base: the team's first buffer.  The bias belongs to the
            tile's columns (the op's n), or with swap_ab to its rows; bias_len clamps its index."""
            bm, bn, _ = self.tile_mnk
            size_rD = cute.size(tRS_rD)
            # + bias[n] (fp32)
            if has_bias != 0:
                for i in cutlass.range_constexpr(cute.size(epi_acc)):
                    if cutlass.const_expr(self.swap_ab):
                        n = cutlass.min(m_idx * bm + tCcC[i][0], bias_len - 1)
                    else:
                        n = cutlass.min(n_idx * bn + tCcC[i][1], bias_len - 1)
                    epi_acc[i] = epi_acc[i] + bias_t[n]

            gC_t = gC[(None, None, m_idx, n_idx)]
            gC_epi = cute.zipped_divide(gC_t, self.epi_tile)
            bSG_sD, bSG_gD = cpasync.tma_partition(
                tma_atom_c, 0, cute.make_layout(1),
                cute.group_modes(sC, 0, 2), gC_epi)
            epi_num = cute.size(gC_epi, mode=[1])
            epi_shape = gC_epi.shape[1]
            epi_layout = cute.make_layout(epi_shape, stride=(epi_shape[1], 1))
            for e in cutlass.range_constexpr(epi_num):
                for v in cutlass.range_constexpr(size_rD):
                    tRS_rD[v] = tRS_rAcc[e * size_rD + v]
                tRS_rD_out.store(tRS_rD.load().to(self.c_dtype))
                buf = epi_base + (epi_count + e) % self.epi_stages
                cute.copy(tiled_copy_r2s, tRS_rD_out, tRS_sD[(None, None, None, buf)])
                # make the st.shared visible to the TMA (async proxy), then sync
                cute.arch.fence_proxy("async.shared", space="cta")
                epi_bar.arrive_and_wait()
                if is_store_warp:
                    cute.copy(tma_atom_c, bSG_sD[(None, buf)],
                              bSG_gD[(None, epi_layout.get_hier_coord(e))])
                    store_pipe.producer_commit()
                    # the buffer written next must no longer be read by a TMA store
                    store_pipe.producer_acquire()
                epi_bar.arrive_and_wait()
            return epi_count + epi_num

        @cute.jit
        def _store_tile_at(self, epi_acc, tCcC, has_bias, bias_t, bias_len, gC, gC_last, row_shift, m_idx,
                           n_idx, tma_atom_c, sC, tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out,
                           epi_bar, store_pipe, is_store_warp, epi_count, epi_base):
            """_store_tile into the tile's rows: gC_last's (moved by row_shift) for a ragged last token tile."""
            count = epi_count
            if cutlass.const_expr(self.swap_ab):
                count = self._store_tile(
                    epi_acc, tCcC, has_bias, bias_t, bias_len, gC, m_idx, n_idx, tma_atom_c, sC,
                    tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out, epi_bar, store_pipe,
                    is_store_warp, epi_count, epi_base)
            else:
                if row_shift != 0:
                    count = self._store_tile(
                        epi_acc, tCcC, has_bias, bias_t, bias_len, gC_last, m_idx, n_idx, tma_atom_c, sC,
                        tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out, epi_bar, store_pipe,
                        is_store_warp, epi_count, epi_base)
                else:
                    count = self._store_tile(
                        epi_acc, tCcC, has_bias, bias_t, bias_len, gC, m_idx, n_idx, tma_atom_c, sC,
                        tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out, epi_bar, store_pipe,
                        is_store_warp, epi_count, epi_base)
            return count

        @cute.jit
        def _store_partials(self, ws_t, epi_acc, tCcC, row0, n0, N):
            """Split-K: the tile's fp32 values (scaled, no bias) to rows row0.. of the workspace,
            straight from the accumulator registers. A thread holds pairs of adjacent columns (wgmma
            accumulator layout), stored as one 8-byte vector where the row is 8-byte aligned (N even),
            so that the 4 lanes of a row fill a 32-byte sector per instruction: scalar stores wrote
            half sectors and held the split-K pass up (LSU queue stalls; thirty-fourth session,
            docs/PERF.md). Columns past N are skipped."""
            if N % 2 == 0:
                base = ws_t.iterator.toint()
                for j in cutlass.range_constexpr(cute.size(epi_acc) // 2):
                    n = n0 + tCcC[2 * j][1]
                    if n < N:   # N even and n even: n + 1 < N too
                        off = (Int64(row0 + tCcC[2 * j][0]) * N + n) * 4
                        stg_v2f32(base + off, epi_acc[2 * j], epi_acc[2 * j + 1])
            else:
                for i in cutlass.range_constexpr(cute.size(epi_acc)):
                    n = n0 + tCcC[i][1]
                    if n < N:
                        ws_t[(row0 + tCcC[i][0], n)] = epi_acc[i]

        @cute.jit
        def _store_partials_swapped(self, ws_t, epi_acc, tCcC, row0, w0, t0, W, T):
            """Split-K with swap_ab: tile value (weight row w0 + r, token t0 + c) to the op's workspace
            row row0 + t0 + c, column w0 + r; weight rows past W and tokens past T are skipped."""
            for i in cutlass.range_constexpr(cute.size(epi_acc)):
                w_row = w0 + tCcC[i][0]
                tok = t0 + tCcC[i][1]
                if (w_row < W) & (tok < T):
                    ws_t[(row0 + tok, w_row)] = epi_acc[i]

        @cute.jit
        def _add_partials(self, ws_t, epi_acc, tCcC, row0):
            """Stream-K: epi_acc += the tile_m x tile_n fp32 slot at rows row0.. of ws_t (the layout
            _store_partials wrote it in, column pairs as 8-byte loads from L2)."""
            bn = self.tile_mnk[1]
            base = ws_t.iterator.toint()
            for j in cutlass.range_constexpr(cute.size(epi_acc) // 2):
                off = (Int64(row0 + tCcC[2 * j][0]) * bn + tCcC[2 * j][1]) * 4
                v = ldg_cg_v2f32(base + off)
                epi_acc[2 * j] = epi_acc[2 * j] + v[0]
                epi_acc[2 * j + 1] = epi_acc[2 * j + 1] + v[1]

        @cute.jit
        def _streamk_piece(self, ws_sk, flags, flag_value, epi_acc, tCcC, cur, kt_begin, k_tiles, units, cta,
                           ctas, epi_bar, mma_tidx):
            """Stream-K, a piece that is part of a tile (see the schedule above streamk_first_unit). A later part
            (kt_begin > 0): partials to slot `cta`, then its flag; returns 0. The first part: waits for the flags
            of CTAs cta + 1 .. c_last and adds their slots in that order; returns 1 (the tile is complete in
            epi_acc and goes out through the normal epilogue)."""
            bm = self.tile_mnk[0]
            complete = Int32(0)
            if kt_begin > 0:
                self._store_partials(ws_sk, epi_acc, tCcC, cta * bm, 0, self.tile_mnk[1])
                # every consumer thread's partials are written before the one release-store of the flag
                epi_bar.arrive_and_wait()
                if mma_tidx == 0:
                    st_release_b64(flags + Int64(cta) * 8, flag_value)
            else:
                tile = cur // k_tiles
                c_last = streamk_owner((tile + 1) * k_tiles - 1, ctas, units)
                for c in cutlass.range(cta + 1, c_last + 1, unroll=1):
                    if mma_tidx == 0:
                        while ld_acquire_b64(flags + Int64(c) * 8) != flag_value:
                            pass
                        st_relaxed_b64(flags + Int64(c) * 8, Int64(0))   # consumed: left clean
                    # the acquire of one thread, then the barrier, orders every thread's reads of the slot
                    epi_bar.arrive_and_wait()
                    self._add_partials(ws_sk, epi_acc, tCcC, c * bm)
                complete = Int32(1)
            return complete

        # ---------------------------------------------------------------- device kernel body
        @cute.jit
        def kernel_body(
            self,
            tma_atom_a: cute.CopyAtom,
            mA: cute.Tensor,
            tma_atom_b: cute.CopyAtom,
            mB: cute.Tensor,
            tma_atom_c: cute.CopyAtom,
            mC: cute.Tensor,
            tiled_mma: cute.TiledMma,
            a_smem_staged: cute.ComposedLayout,
            b_smem_staged: cute.ComposedLayout,
            epi_smem_staged: cute.ComposedLayout,
            bias_ptr: cute.Pointer,
            M: Int32,
            N: Int32,
            has_bias: Int32,
            num_m_tiles: Int32,
            num_n_tiles: Int32,
            a_scale_ptr=None,
            w_scale_ptr=None,
            tma_atom_sa=None,
            mSA=None,
            tma_atom_sw=None,
            mSW=None,
            a_step=None,
            w_step=None,
            ws_ptr=None,
            M_pad=None,
            split_k=None,
        ):
            """The whole kernel, inlined into each family's `@cute.kernel`.  Scale arguments:
            "scaled" epilogue: a_scale_ptr [M or 1], w_scale_ptr [N or 1] fp32 and the index
            steps a_step / w_step (1 per-row, 0 per-tensor); "blockscale" mainloop: a_scale_ptr
            [M, ceil(K/128)] and w_scale_ptr [ceil(N/128), ceil(K/128)] fp32 (row-major)."""
            bm, bn, bk = self.tile_mnk
            tidx, _, _ = cute.arch.thread_idx()
            bidx, _, _ = cute.arch.block_idx()
            gdim, _, _ = cute.arch.grid_dim()
            warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
            wg_idx = cute.arch.make_warp_uniform(tidx // 128)

            if cutlass.const_expr(self.split_capable):
                # the split-K reduce (launched after this grid with PDL) may be placed as soon as every
                # CTA of this grid runs; it waits for the partials with griddepcontrol.wait
                cute.arch.griddepcontrol_launch_dependents()
            if warp_idx == 0:
                cpasync.prefetch_descriptor(tma_atom_a)
                cpasync.prefetch_descriptor(tma_atom_b)
                cpasync.prefetch_descriptor(tma_atom_c)
                if cutlass.const_expr(self.scale_tma > 0):
                    cpasync.prefetch_descriptor(tma_atom_sa)
                    cpasync.prefetch_descriptor(tma_atom_sw)

            # ---- shared memory + mainloop pipeline (full/empty mbarrier per stage)
            smem = cutlass.memory.SmemAllocator()
            storage = smem.allocate(self.shared_storage)
            a_smem_one = cute.slice_(a_smem_staged, (None, None, 0))
            b_smem_one = cute.slice_(b_smem_staged, (None, None, 0))
            tx_bytes = cute.size_in_bytes(self.a_dtype, a_smem_one) + cute.size_in_bytes(
                self.b_dtype, b_smem_one)
            sbar, sS, rbar, sR = None, None, None, None
            if cutlass.const_expr(self.scale_tma > 0):
                rbar = storage.rbar.data_ptr()
                sR = cute.make_tensor(storage.sR.data_ptr(),
                                      cute.make_layout((self.scale_slot_floats, self.scale_tma)))
                if warp_idx == 0:
                    with cute.arch.elect_one():
                        for st in cutlass.range_constexpr(self.scale_tma):
                            cute.arch.mbarrier_init(rbar + st, 1)
                            cute.arch.mbarrier_init(rbar + self.scale_tma + st, self.num_mma_threads)
            if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.scale_tma == 0):
                # scale stage s is complete when all 32 producer lanes' cp.async copies into it
                # have landed (cp.async.mbarrier.arrive.noinc, one per lane)
                sbar = storage.sbar.data_ptr()
                sS = cute.make_tensor(storage.sS.data_ptr(),
                                      cute.make_layout((self.scale_stride, self.stages)))
                if warp_idx == 0:
                    with cute.arch.elect_one():
                        for st in cutlass.range_constexpr(self.stages):
                            cute.arch.mbarrier_init(sbar + st, 32)
            order_bar = None
            if cutlass.const_expr(self.teams > 1):
                order_bar = storage.order_bar.data_ptr()
                if warp_idx == 0:
                    with cute.arch.elect_one():
                        for t in cutlass.range_constexpr(2):
                            cute.arch.mbarrier_init(order_bar + t, self.num_mma_threads)
            if cutlass.const_expr(self.cluster_size == 1):
                mainloop = pipeline.PipelineTmaAsync.create(
                    barrier_storage=storage.mbar.data_ptr(),
                    num_stages=self.stages,
                    producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                    # one elected thread per consumer warp releases a stage
                    consumer_group=pipeline.CooperativeGroup(
                        pipeline.Agent.Thread, self.release_arrivals),
                    tx_count=tx_bytes,
                    cta_layout_vmnk=cute.make_layout((1, 1, 1, 1)),
                )
            else:
                # Cluster of 2: a stage of this CTA is written by both CTAs' producers (the
                # multicast half of the shared operand comes from the peer), so it is empty once
                # every consumer warp of both CTAs has released it: 2 arrivals per consumer warp
                # count on each CTA's empty barrier (see _consumer_release).  The full barrier
                # still expects the whole A + W tile bytes: the local TMA and the peer's multicast
                # both complete_tx on it.  create() fences the barrier inits and syncs the cluster
                # before any remote arrive / multicast can reach them.
                cm, cn = self.cluster_mn
                mainloop = pipeline.PipelineTmaAsync.create(
                    barrier_storage=storage.mbar.data_ptr(),
                    num_stages=self.stages,
                    producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                    consumer_group=pipeline.CooperativeGroup(
                        pipeline.Agent.Thread, (cm + cn - 1) * self.release_arrivals),
                    tx_count=tx_bytes,
                    cta_layout_vmnk=cute.make_layout((1, cm, cn, 1)),
                )

            sA = storage.sA.get_tensor(a_smem_staged.outer, swizzle=a_smem_staged.inner)
            sB = storage.sB.get_tensor(b_smem_staged.outer, swizzle=b_smem_staged.inner)
            sC = storage.sC.get_tensor(epi_smem_staged.outer, swizzle=epi_smem_staged.inner)

            # ---- global tiles: (bM, bK, RestM, RestK), (bN, bK, RestN, RestK), (bM, bN, RestM, RestN)
            gA = cute.local_tile(mA, (bm, bk), (None, None))
            gB = cute.local_tile(mB, (bn, bk), (None, None))
            gC = cute.local_tile(mC, (bm, bn), (None, None))
            k_tiles = cute.size(gA, mode=[3])
            # The last token tile of a ragged M (M % bm != 0, M > bm) is loaded and stored from row M - bm,
            # overlapping the tile before it (the shared rows are computed twice, alike): its TMA boxes
            # then stay inside the tensor. A box past the row edge starved the consumers (H200, thirtieth
            # session, bf16 t128x160: 300 x 12288 x 4096 84 us against 55 us at 384 rows, the same tiles;
            # Nsight Compute: 59% of the warp samples waiting on the load barrier, 17% at 384).
            # m_shift <= 0: rows to move the last tile by (0 when M is a multiple of bm, or M <= bm).
            m_shift = Int32(0)
            gA_last, gC_last = gA, gC
            if cutlass.const_expr(not self.swap_ab):
                m_shift = self._last_tile_shift(M, num_m_tiles)
                if cutlass.const_expr(self.streamk_capable):
                    if split_k < 0:
                        # stream-K: a tile's first part may sum its parts in another order than a whole tile
                        # does, so tiles must not overlap (two CTAs' stores of one row could differ in the last bit)
                        m_shift = Int32(0)
                gA_last = cute.local_tile(cute.domain_offset((m_shift, 0), mA), (bm, bk), (None, None))
                gC_last = cute.local_tile(cute.domain_offset((m_shift, 0), mC), (bm, bn), (None, None))

            # TMA partitions: (TMA, RestM, RestK) vs (TMA, Stage)
            if cutlass.const_expr(self.cluster_size == 1):
                tAsA, tAgA = cpasync.tma_partition(
                    tma_atom_a, 0, cute.make_layout(1),
                    cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
                if cutlass.const_expr(not self.swap_ab):
                    _, tAgA_last = cpasync.tma_partition(
                        tma_atom_a, 0, cute.make_layout(1),
                        cute.group_modes(sA, 0, 2), cute.group_modes(gA_last, 0, 2))
                tBsB, tBgB = cpasync.tma_partition(
                    tma_atom_b, 0, cute.make_layout(1),
                    cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))
                tile_first = bidx
                tile_step = gdim
                a_mcast_mask = None
                rank_m = Int32(0)   # no cluster: unused by _work_piece
                rank_n = Int32(0)
            else:
                # cluster (cm, cn, 1): CTA rank = m + cm * n, as %cluster_ctarank for a cluster
                # shape (cm, cn, 1) and the multicast masks expect.  A multicast operand's smem
                # tile is split in cluster-size slices: this CTA loads slice <its coordinate along
                # the sharing dimension> and writes it into every CTA of the mask.
                cm, cn = self.cluster_mn
                cta_layout_mnk = cute.make_layout((cm, cn, 1))
                cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
                cl_coord = cta_layout_mnk.get_flat_coord(cta_rank)
                a_mcast_mask = cute.make_layout_image_mask(cta_layout_mnk, cl_coord, mode=1)
                b_mcast_mask = cute.make_layout_image_mask(cta_layout_mnk, cl_coord, mode=0)
                tAsA, tAgA = cpasync.tma_partition(
                    tma_atom_a, cl_coord[1], cute.make_layout(cn),
                    cute.group_modes(sA, 0, 2), cute.group_modes(gA, 0, 2))
                if cutlass.const_expr(not self.swap_ab):
                    _, tAgA_last = cpasync.tma_partition(
                        tma_atom_a, cl_coord[1], cute.make_layout(cn),
                        cute.group_modes(sA, 0, 2), cute.group_modes(gA_last, 0, 2))
                tBsB, tBgB = cpasync.tma_partition(
                    tma_atom_b, cl_coord[0], cute.make_layout(cm),
                    cute.group_modes(sB, 0, 2), cute.group_modes(gB, 0, 2))
                rank_m = cl_coord[0]
                rank_n = cl_coord[1]
                _, _, cluster_id = cute.arch.block_idx()
                _, _, num_clusters = cute.arch.grid_dim()
                tile_first = cluster_id
                tile_step = num_clusters
            if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.scale_tma == 0):
                # a_scale [tokens, KB], w_scale [ceil(weight rows / 128), KB] row-major; KB == k_tiles
                # (tile_k 128). Tokens / weight rows are the kernel's M / N, or N / M with swap_ab.
                tokens, w_rows = (N, M) if self.swap_ab else (M, N)
                sa_t = cute.make_tensor(
                    a_scale_ptr, cute.make_layout((tokens, k_tiles), stride=(k_tiles, 1)))
                sw_t = cute.make_tensor(
                    w_scale_ptr,
                    cute.make_layout(((w_rows + 127) // 128, k_tiles), stride=(k_tiles, 1)))

            # ================================================================ producer
            if wg_idx == 0:
                cute.arch.setmaxregister_decrease(self.load_regs)
                if warp_idx == 0:
                    if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.scale_tma == 0):
                        scale_cp = cute.make_copy_atom(
                            cpasync.CopyG2SOp(), Float32, num_bits_per_copy=32)
                    if cutlass.const_expr(self.scale_tma > 0):
                        # scale ring: the a_scale boxes of token tile t and K-block group g, (TMA, tiles, groups)
                        # against (TMA, slot); the last token tile of a ragged M from row M - tile_m, as for A
                        g_rows = self.scale_rows
                        s_ra = cute.make_tensor(sR.iterator, cute.make_layout(
                            (g_rows, SCALE_GROUP, self.scale_tma), stride=(SCALE_GROUP, 1, self.scale_slot_floats)))
                        s_rw = cute.make_tensor(sR.iterator + g_rows * SCALE_GROUP, cute.make_layout(
                            (self.w_scale_blocks, SCALE_GROUP, self.scale_tma),
                            stride=(SCALE_GROUP, 1, self.scale_slot_floats)))
                        tSAs, tSAg = cpasync.tma_partition(
                            tma_atom_sa, 0, cute.make_layout(1), cute.group_modes(s_ra, 0, 2),
                            cute.group_modes(cute.local_tile(mSA, (g_rows, SCALE_GROUP), (None, None)), 0, 2))
                        tSAg_last = tSAg
                        if cutlass.const_expr(not self.swap_ab):
                            _, tSAg_last = cpasync.tma_partition(
                                tma_atom_sa, 0, cute.make_layout(1), cute.group_modes(s_ra, 0, 2),
                                cute.group_modes(cute.local_tile(cute.domain_offset((m_shift, 0), mSA),
                                                                 (g_rows, SCALE_GROUP), (None, None)), 0, 2))
                        scale_box_bytes = (g_rows + self.w_scale_blocks) * SCALE_GROUP * 4
                        scale_seq = Int32(0)   # scale groups loaded so far: slot scale_seq % R
                    prod_state = pipeline.make_pipeline_state(
                        pipeline.PipelineUserType.Producer, self.stages)
                    cur, end = self._work_range(tile_first, tile_step, num_m_tiles, num_n_tiles, k_tiles,
                                                split_k)
                    while cur < end:
                        m_idx, n_idx, kt_begin, k_count, nxt = self._work_piece(
                            cur, end, tile_step, num_m_tiles, num_n_tiles, k_tiles, split_k, rank_m, rank_n)
                        tAgA_t = tAgA[(None, m_idx, None)]
                        tBgB_t = tBgB[(None, n_idx, None)]
                        row_shift = self._row_shift(m_idx, num_m_tiles, m_shift)
                        if cutlass.const_expr(not self.swap_ab):
                            tAgA_last_t = tAgA_last[(None, m_idx, None)]
                        if cutlass.const_expr(self.scale_tma > 0):
                            # this tile's a_scale boxes by K-block group, and its w_scale boxes from the block
                            # of its first weight row (rows past the tensor arrive as zeros)
                            tSAg_t = tSAg[(None, n_idx, None)] if self.swap_ab else tSAg[(None, m_idx, None)]
                            tSAg_last_t = tSAg_last[(None, m_idx, None)]
                            nb_first = (m_idx * bm if self.swap_ab else n_idx * bn) // 128
                            tSWs, tSWg = cpasync.tma_partition(
                                tma_atom_sw, 0, cute.make_layout(1), cute.group_modes(s_rw, 0, 2),
                                cute.group_modes(cute.local_tile(cute.domain_offset((nb_first, 0), mSW),
                                                                 (self.w_scale_blocks, SCALE_GROUP), (0, None)), 0, 2))
                        for kt in cutlass.range(kt_begin, kt_begin + k_count, unroll=1):
                            if cutlass.const_expr(self.scale_tma > 0):
                                if kt == kt_begin or kt % SCALE_GROUP == 0:
                                    slot = scale_seq % self.scale_tma
                                    cute.arch.mbarrier_wait(rbar + self.scale_tma + slot,
                                                            (scale_seq // self.scale_tma + 1) % 2)
                                    with cute.arch.elect_one():
                                        cute.arch.mbarrier_arrive_and_expect_tx(rbar + slot, scale_box_bytes)
                                    grp = kt // SCALE_GROUP
                                    if cutlass.const_expr(self.swap_ab):
                                        cute.copy(tma_atom_sa, tSAg_t[(None, grp)], tSAs[(None, slot)],
                                                  tma_bar_ptr=rbar + slot)
                                    else:
                                        if row_shift != 0:
                                            cute.copy(tma_atom_sa, tSAg_last_t[(None, grp)], tSAs[(None, slot)],
                                                      tma_bar_ptr=rbar + slot)
                                        else:
                                            cute.copy(tma_atom_sa, tSAg_t[(None, grp)], tSAs[(None, slot)],
                                                      tma_bar_ptr=rbar + slot)
                                    cute.copy(tma_atom_sw, tSWg[(None, grp)], tSWs[(None, slot)],
                                              tma_bar_ptr=rbar + slot)
                                    scale_seq = scale_seq + 1
                            mainloop.producer_acquire(prod_state)
                            bar = mainloop.producer_get_barrier(prod_state)
                            if cutlass.const_expr(self.swap_ab):
                                self._load_a(tma_atom_a, tAgA_t[(None, kt)], tAsA[(None, prod_state.index)],
                                             bar, a_mcast_mask)
                            else:
                                if row_shift != 0:
                                    self._load_a(tma_atom_a, tAgA_last_t[(None, kt)],
                                                 tAsA[(None, prod_state.index)], bar, a_mcast_mask)
                                else:
                                    self._load_a(tma_atom_a, tAgA_t[(None, kt)],
                                                 tAsA[(None, prod_state.index)], bar, a_mcast_mask)
                            if cutlass.const_expr(self.mcast_b):
                                cute.copy(tma_atom_b, tBgB_t[(None, kt)],
                                          tBsB[(None, prod_state.index)], tma_bar_ptr=bar,
                                          mcast_mask=b_mcast_mask)
                            else:
                                cute.copy(tma_atom_b, tBgB_t[(None, kt)],
                                          tBsB[(None, prod_state.index)], tma_bar_ptr=bar)
                            if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.scale_tma == 0):
                                # this stage's scales: a_scale[t0 + r, kt] for the tile's tokens
                                # (its rows; its columns with swap_ab; clamped to the last token)
                                # and w_scale[nb, kt], 4-byte cp.async by all 32 lanes, each lane
                                # then arming the stage's scale barrier
                                lane_p = tidx % 32
                                t0p = n_idx * bn if self.swap_ab else m_idx * bm + row_shift
                                for j in cutlass.range_constexpr(self.scale_rows // 32):
                                    r = lane_p + 32 * j
                                    src = cute.make_tensor(
                                        sa_t.iterator + sa_t.layout(
                                            (cutlass.min(t0p + r, tokens - 1), kt)),
                                        cute.make_layout(1))
                                    dst = cute.make_tensor(
                                        sS.iterator + sS.layout((r, prod_state.index)),
                                        cute.make_layout(1))
                                    cute.copy(scale_cp, src, dst)
                                if lane_p < self.w_scale_blocks:
                                    # w_scale[nb, kt] of the block of the tile's first weight row (lane 0)
                                    # and, for a tile_n that does not divide 128, of the next block (lane 1)
                                    nb_w = (m_idx * bm if self.swap_ab else n_idx * bn) // 128 + lane_p
                                    if cutlass.const_expr(self.cluster_mn[1] > 1 or self.w_scale_blocks > 1):
                                        # the partner tile past the N edge (zero operands); the last
                                        # tile's next block past N (its columns there are not stored)
                                        nb_w = cutlass.min(nb_w, (N - 1) // 128)
                                    src_w = cute.make_tensor(
                                        sw_t.iterator + sw_t.layout((nb_w, kt)),
                                        cute.make_layout(1))
                                    dst_w = cute.make_tensor(
                                        sS.iterator + sS.layout((self.scale_rows + lane_p, prod_state.index)),
                                        cute.make_layout(1))
                                    cute.copy(scale_cp, src_w, dst_w)
                                cute.arch.cp_async_mbarrier_arrive_noinc(sbar + prod_state.index)
                            mainloop.producer_commit(prod_state)
                            prod_state.advance()
                        cur = nxt
                    # do not exit while TMA writes into this CTA's smem may be pending
                    mainloop.producer_tail(prod_state)

            # ================================================================ consumers
            if wg_idx > 0:
                cute.arch.setmaxregister_increase(self.mma_regs)
                # this warpgroup's team (ping-pong: its own tiles) and place inside the team
                team = 0            # a static 0 keeps the cooperative kernels' code as it was
                wg_in_team = wg_idx - 1
                if cutlass.const_expr(self.teams > 1):
                    team = (wg_idx - 1) // self.mma_wg
                    wg_in_team = (wg_idx - 1) - team * self.mma_wg
                mma_tidx = tidx - 128 - team * self.num_mma_threads
                # A/B smem operands are shared by a warpgroup: slice at warpgroup granularity.
                wg_thr_layout = cute.make_layout(self.mma_wg, stride=128)
                thr_mma = tiled_mma.get_slice(wg_thr_layout(wg_in_team))
                tCsA = thr_mma.partition_A(sA)
                tCsB = thr_mma.partition_B(sB)
                tCrA = tiled_mma.make_fragment_A(tCsA)
                tCrB = tiled_mma.make_fragment_B(tCsB)
                tCgC0 = thr_mma.partition_C(gC[(None, None, 0, 0)])
                acc = cute.make_rmem_tensor(tCgC0.shape, self.acc_dtype)
                if cutlass.const_expr(self.promote > 0):
                    # wgmma target of `promote` K tiles, added to the fp32 `acc` after them
                    acc_grp = cute.make_rmem_tensor(tCgC0.shape, Float32)
                num_k_blocks = cute.size(tCrA, mode=[2])

                # Per-thread (m, n) coordinates of the accumulator elements inside one tile,
                # used for the bias / scales.  Static: they only depend on the thread index.
                thr_mma_c = tiled_mma.get_slice(mma_tidx)
                tCcC = thr_mma_c.partition_C(cute.make_identity_tensor((bm, bn)))
                bias_len = M if self.swap_ab else N   # the op's N either way
                bias_t = cute.make_tensor(bias_ptr, cute.make_layout(bias_len))

                # The fp32 tile the epilogue rounds and stores: the accumulator itself, or for
                # s32 accumulators (int8) a converted copy; for "blockscale" the promoted sum.
                epi_acc = acc
                if cutlass.const_expr(self.acc_is_int):
                    epi_acc = cute.make_rmem_tensor(tCgC0.shape, Float32)
                if cutlass.const_expr(self.epilogue_kind == "scaled"):
                    sa_e = cute.make_tensor(a_scale_ptr, cute.make_layout(M))
                    sw_e = cute.make_tensor(w_scale_ptr, cute.make_layout(N))
                if cutlass.const_expr(self.mainloop_kind == "blockscale"):
                    # wgmma target of one 128-wide K block; `acc` holds the promoted fp32 sum
                    acc_blk = cute.make_rmem_tensor(tCgC0.shape, Float32)
                    # combined scale a_scale[m, kb] * w_scale[nb, kb] of the thread's rows
                    # (2 per 64-row wgmma atom; with swap_ab its columns, 2 per n8 block), read
                    # from the stage's smem copy
                    rows_per_thr = self.bs_scale_slots() * self.w_scale_blocks
                    s_row = cute.make_rmem_tensor((rows_per_thr,), Float32)
                    if cutlass.const_expr(self.bs_overlap):
                        # the second scratch accumulator / scale set (odd K blocks)
                        acc_blk2 = cute.make_rmem_tensor(tCgC0.shape, Float32)
                        s_row2 = cute.make_rmem_tensor((rows_per_thr,), Float32)
                    lane = tidx % 32
                    warp_in_wg = (tidx % 128) // 32
                    thr_row0 = 64 * wg_in_team + 16 * warp_in_wg + lane // 4
                    scales = (sbar, sS, rbar, sR)
                    scale_seq = Int32(0)   # scale_tma: scale groups this thread has finished

                # Epilogue copies: registers -> smem (stmatrix for 16-bit outputs) -> TMA store.
                tiled_copy_r2s = self._make_r2s_copy(tiled_mma)
                thr_copy_r2s = tiled_copy_r2s.get_slice(mma_tidx)
                tRS_sD = thr_copy_r2s.partition_D(sC)       # (R2S, R2S_M, R2S_N, PIPE)
                tRS_rAcc = tiled_copy_r2s.retile(epi_acc)
                rD_shape = cute.shape(thr_copy_r2s.partition_S(sC))
                tRS_rD = cute.make_rmem_tensor(rD_shape[:3], Float32)
                tRS_rD_out = cute.make_rmem_tensor(rD_shape[:3], self.c_dtype)
                size_rD = cute.size(tRS_rD)

                # the team's own named barrier (ids 1, 2) and store warp (its first warp)
                epi_bar = pipeline.NamedBarrier(barrier_id=1 + team,
                                                num_threads=self.num_mma_threads)
                store_pipe = pipeline.PipelineTmaStore.create(
                    num_stages=self.epi_stages,
                    producer_group=pipeline.CooperativeGroup(
                        pipeline.Agent.Thread, self.num_mma_threads),
                )
                is_store_warp = warp_idx == 4 + 4 * self.mma_wg * team
                epi_base = team * self.epi_stages

                read_state = pipeline.make_pipeline_state(
                    pipeline.PipelineUserType.Consumer, self.stages)
                release_state = pipeline.make_pipeline_state(
                    pipeline.PipelineUserType.Consumer, self.stages)

                if cutlass.const_expr(self.split_capable):
                    # fp32 partial tiles [split_k * M_pad, N] (the op's M / N: with swap_ab the
                    # kernel's N / M): slice s, row m at s * M_pad + m
                    ws_n = M if self.swap_ab else N
                    ws_t = cute.make_tensor(ws_ptr, cute.make_layout((split_k * M_pad, ws_n),
                                                                     stride=(Int64(ws_n), 1)))
                if cutlass.const_expr(self.streamk_capable):
                    # stream-K: streamk_slots(grid) tile_m x tile_n fp32 slots, then one 8-byte flag per CTA;
                    # the launch token comes in M_pad (unused by stream-K otherwise)
                    ws_sk = cute.make_tensor(ws_ptr, cute.make_layout((streamk_slots(gdim) * bm, bn),
                                                                      stride=(bn, 1)))
                    sk_flags = ws_ptr.toint() + Int64(streamk_slots(gdim)) * (bm * bn * 4)
                    sk_flag_value = Int64(M_pad) * 4294967296 + STREAMK_FLAG_LOW

                if cutlass.const_expr(self.teams > 1):
                    # the stages of the other team's tiles pass by: skip them in the ring
                    # (every tile has k_tiles stages; ping-pong never runs split-K)
                    read_state.advance(k_tiles * team)
                    release_state.advance(k_tiles * team)
                epi_count = Int32(0)
                tiles_done = Int32(0)
                cur, end = self._work_range(tile_first + team * tile_step, tile_step, num_m_tiles, num_n_tiles,
                                            k_tiles, split_k)
                while cur < end:
                    if cutlass.const_expr(self.teams > 1):
                        # Ping-pong turns: a team starts its mainloop only after the other team has
                        # waited on every stage of its previous tile.  Without the turns a team would
                        # wait on a stage two fills ahead of the ring, and the mbarrier parity wait
                        # cannot tell that fill from the one two back (it returned at once and the
                        # kernel faulted).  Team 1's tile j follows team 0's tile j, team 0's tile j
                        # (j >= 1) team 1's tile j - 1.
                        if tiles_done + team > 0:
                            cute.arch.mbarrier_wait(order_bar + team, (tiles_done + team + 1) % 2)
                    m_idx, n_idx, kt_begin, k_count, nxt = self._work_piece(
                        cur, end, tile_step * self.teams, num_m_tiles, num_n_tiles, k_tiles, split_k, rank_m,
                        rank_n)
                    row_shift = self._row_shift(m_idx, num_m_tiles, m_shift)  # the tile's first row: m_idx * bm + it
                    first_atoms = Int32(0)
                    if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.w_scale_blocks > 1):
                        first_atoms = first_block_atoms(n_idx * bn, bn, cutlass.min)

                    if cutlass.const_expr(self.mainloop_kind == "plain" and self.promote > 0):
                        # ---------------- mainloop: groups of `promote` K tiles into acc_grp (one
                        # wgmma batch in flight inside a group), then acc += acc_grp in fp32
                        acc.fill(0.0)
                        for g in cutlass.range(0, k_count, self.promote, unroll=1):
                            n_in = cutlass.min(k_count - g, self.promote)
                            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
                            for j in cutlass.range(n_in, unroll=1):
                                tiled_mma = self._issue_k_tile(mainloop, read_state, tiled_mma,
                                                               acc_grp, tCrA, tCrB, num_k_blocks, True)
                                if j > 0:
                                    # the previous K tile's wgmma is done with its stage
                                    warpgroup.wait_group(1)
                                    self._consumer_release(mainloop, release_state)
                                    release_state.advance()
                                read_state.advance()
                            warpgroup.wait_group(0)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            for i in cutlass.range_constexpr(cute.size(acc)):
                                acc[i] = acc[i] + acc_grp[i]

                    if cutlass.const_expr(self.mainloop_kind == "plain" and self.promote == 0):
                        # ---------------- mainloop: one accumulator, one wgmma batch in flight
                        acc.fill(self.acc_zero)
                        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                        # first k tile (no wgmma in flight yet)
                        tiled_mma = self._issue_k_tile(mainloop, read_state, tiled_mma, acc, tCrA,
                                                       tCrB, num_k_blocks, False)
                        read_state.advance()
                        for kt in cutlass.range(1, k_count, unroll=1):
                            tiled_mma = self._issue_k_tile(mainloop, read_state, tiled_mma, acc, tCrA,
                                                           tCrB, num_k_blocks, False)
                            # keep one wgmma batch in flight; the previous one is done with its stage
                            warpgroup.wait_group(1)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            read_state.advance()
                        # every stage of the tile has been waited on: the other team's turn
                        self._pass_turn(order_bar, team)
                        warpgroup.wait_group(0)
                        self._consumer_release(mainloop, release_state)
                        release_state.advance()

                    if cutlass.const_expr(self.mainloop_kind == "blockscale" and self.bs_overlap):
                        # ---------------- mainloop: per K block wgmma -> scale -> fp32 promotion,
                        # block kb+1's wgmma (into the other scratch accumulator) running on the
                        # tensor cores while block kb is scaled and added (wgmma wait depth 1).
                        # The two scratch sets alternate statically: K blocks go in pairs.
                        acc.fill(0.0)
                        kt_abs = kt_begin
                        kt_end = kt_begin + k_count
                        tiled_mma, scale_seq = self._bs_issue(
                            mainloop, read_state, scales, tiled_mma, tCrA, tCrB, acc_blk, s_row, thr_row0, lane,
                            kt_abs, kt_begin, kt_end - 1, scale_seq, num_k_blocks)
                        kt_abs = kt_abs + 1
                        read_state.advance()
                        for _ in cutlass.range((k_count - 1) // 2, unroll=1):
                            tiled_mma, scale_seq = self._bs_issue(
                                mainloop, read_state, scales, tiled_mma, tCrA, tCrB, acc_blk2, s_row2, thr_row0, lane,
                                kt_abs, kt_begin, kt_end - 1, scale_seq, num_k_blocks)
                            kt_abs = kt_abs + 1
                            read_state.advance()
                            warpgroup.wait_group(1)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            self._bs_promote(acc, acc_blk, s_row, first_atoms)
                            tiled_mma, scale_seq = self._bs_issue(
                                mainloop, read_state, scales, tiled_mma, tCrA, tCrB, acc_blk, s_row, thr_row0, lane,
                                kt_abs, kt_begin, kt_end - 1, scale_seq, num_k_blocks)
                            kt_abs = kt_abs + 1
                            read_state.advance()
                            warpgroup.wait_group(1)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            self._bs_promote(acc, acc_blk2, s_row2, first_atoms)
                        if (k_count - 1) % 2 == 1:
                            tiled_mma, scale_seq = self._bs_issue(
                                mainloop, read_state, scales, tiled_mma, tCrA, tCrB, acc_blk2, s_row2, thr_row0, lane,
                                kt_abs, kt_begin, kt_end - 1, scale_seq, num_k_blocks)
                            kt_abs = kt_abs + 1
                            read_state.advance()
                            warpgroup.wait_group(1)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            self._bs_promote(acc, acc_blk, s_row, first_atoms)
                            warpgroup.wait_group(0)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            self._bs_promote(acc, acc_blk2, s_row2, first_atoms)
                        else:
                            warpgroup.wait_group(0)
                            self._consumer_release(mainloop, release_state)
                            release_state.advance()
                            self._bs_promote(acc, acc_blk, s_row, first_atoms)

                    if cutlass.const_expr(self.mainloop_kind == "blockscale" and not self.bs_overlap):
                        # ---------------- mainloop: per K block wgmma -> scale -> fp32 promotion
                        acc.fill(0.0)
                        for kt in cutlass.range(kt_begin, kt_begin + k_count, unroll=1):
                            mainloop.consumer_wait(read_state)
                            warpgroup.fence()
                            tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
                            for kb in cutlass.range_constexpr(num_k_blocks):
                                cute.gemm(tiled_mma, acc_blk,
                                          tCrA[(None, None, kb, read_state.index)],
                                          tCrB[(None, None, kb, read_state.index)], acc_blk)
                                tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
                            warpgroup.commit_group()
                            # the block's scales are read while its wgmmas run: the promotion needs them only
                            # after the wait, and read before the issue they delayed every block's wgmmas
                            # (forty-fourth session: 2-3% at large M on t192x128 / t128x192 / t128x160, H200;
                            # the overlapped mainloop above reads them before the issue: reading them after it
                            # there was 0.4-2.9% slower on t128x128)
                            scale_seq = self._bs_stage_scales(read_state, scales, s_row, thr_row0, lane, kt,
                                                              kt_begin, kt_begin + k_count - 1, scale_seq)
                            warpgroup.wait_group(0)
                            # the stage's operands and scales have been read
                            self._consumer_release(mainloop, read_state)
                            read_state.advance()
                            self._bs_promote(acc, acc_blk, s_row, first_atoms)

                    if cutlass.const_expr(not (self.mainloop_kind == "plain" and self.promote == 0)):
                        self._pass_turn(order_bar, team)

                    # ---------------- epilogue math in fp32
                    if cutlass.const_expr(self.acc_is_int):
                        epi_acc.store(acc.load().to(Float32))
                    if cutlass.const_expr(self.epilogue_kind == "scaled"):
                        # acc * sa[m] * sw[n]; a_step / w_step are 0 for per-tensor scales
                        sm0 = m_idx * bm + row_shift
                        sn0 = n_idx * bn
                        for i in cutlass.range_constexpr(cute.size(epi_acc)):
                            sm = cutlass.min(sm0 + tCcC[i][0], M - 1)
                            sn = cutlass.min(sn0 + tCcC[i][1], N - 1)
                            epi_acc[i] = epi_acc[i] * sa_e[sm * a_step] * sw_e[sn * w_step]
                    if cutlass.const_expr(self.split_capable):
                        to_out = Int32(1)
                        if k_count < k_tiles:
                            # a split-K slice (split_k > 1: fp32 partials for the reduce kernel) or a
                            # stream-K part of a tile (the first part gathers the others and goes out)
                            to_out = Int32(0)
                            slice_row0 = (cur // (num_m_tiles * num_n_tiles)) * M_pad
                            if cutlass.const_expr(self.swap_ab):
                                self._store_partials_swapped(ws_t, epi_acc, tCcC, slice_row0,
                                                             m_idx * bm, n_idx * bn, M, N)
                            elif cutlass.const_expr(self.streamk_capable):
                                if split_k < 0:
                                    to_out = self._streamk_piece(
                                        ws_sk, sk_flags, sk_flag_value, epi_acc, tCcC, cur, kt_begin, k_tiles,
                                        num_m_tiles * num_n_tiles * k_tiles, bidx, gdim, epi_bar, mma_tidx)
                                else:
                                    self._store_partials(ws_t, epi_acc, tCcC,
                                                         slice_row0 + m_idx * bm + row_shift, n_idx * bn, N)
                            else:
                                self._store_partials(ws_t, epi_acc, tCcC, slice_row0 + m_idx * bm + row_shift,
                                                     n_idx * bn, N)
                        if to_out != 0:
                            epi_count = self._store_tile_at(
                                epi_acc, tCcC, has_bias, bias_t, bias_len, gC, gC_last, row_shift, m_idx,
                                n_idx, tma_atom_c, sC, tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out,
                                epi_bar, store_pipe, is_store_warp, epi_count, epi_base)
                    else:
                        epi_count = self._store_tile_at(
                            epi_acc, tCcC, has_bias, bias_t, bias_len, gC, gC_last, row_shift, m_idx,
                            n_idx, tma_atom_c, sC, tiled_copy_r2s, tRS_sD, tRS_rAcc, tRS_rD, tRS_rD_out,
                            epi_bar, store_pipe, is_store_warp, epi_count, epi_base)
                    if cutlass.const_expr(self.teams > 1):
                        read_state.advance(k_tiles * (self.teams - 1))
                        release_state.advance(k_tiles * (self.teams - 1))
                    cur = nxt
                    tiles_done += 1

                if is_store_warp:
                    store_pipe.producer_tail()

    _BASE_CLASS = HopperGemmSm90
    return _BASE_CLASS


# ---------------------------------------------------------------------------------------------
# Family description
# ---------------------------------------------------------------------------------------------
class Family:
    """What a family file tells this module.

    name, op           family / op names (CSV `family`, `op`)
    config_cls         GemmConfig subclass
    kernel_class       callable (cfg) -> DSL kernel class (subclass of kernel_base_class())
    placeholder_args   callable (cfg) -> the arguments of `cute.compile` after the kernel object
                       (only their types matter); the stream comes last
    wrapper_args       expected argument list of the exported C wrapper (ABI check)
    adapter_checks     C++ statements: family checks in <ident>_launch (may `return fail(...)`)
    adapter_pack       C++ statements declaring `void* packed[...]` in wrapper order + `&ret`
    requires_text      human-readable requirements for meta / docs
    k_align            K (and lda) must be a multiple of this many elements (16-byte TMA strides)

    N has no alignment requirement (requires_n_multiple = 1): the TMA store needs 16-byte aligned
    output rows (ldo), not a multiple of N, and the op layer hands the kernels an output whose rows
    are padded to 16 bytes when the caller's are not (csrc/device_ops.cpp, aligned_rows); bias and
    scale reads clamp the column to N - 1.
    """

    def __init__(self, name, op, config_cls, kernel_class, placeholder_args, wrapper_args,
                 adapter_checks, adapter_pack, requires_text, k_align, source_file):
        self.name, self.op = name, op
        self.config_cls = config_cls
        self.kernel_class = kernel_class
        self.placeholder_args = placeholder_args
        self.wrapper_args = list(wrapper_args)
        self.adapter_checks = adapter_checks
        self.adapter_pack = adapter_pack
        self.requires_text = requires_text
        self.k_align = int(k_align)
        self.source_file = pathlib.Path(source_file)


# ---------------------------------------------------------------------------------------------
# Compile + export
# ---------------------------------------------------------------------------------------------
def compile_and_export(fam: Family, cfg: GemmConfig, out_dir: pathlib.Path, ident: str,
                       arch: str = "sm_90a"):
    import_dsl()
    import cutlass.cute as cute
    Kernel = fam.kernel_class(cfg)
    gemm = Kernel(cfg)
    args = fam.placeholder_args(cfg)
    compiled = cute.compile(gemm, *args, options=f"--gpu-arch {arch}")
    out_dir.mkdir(parents=True, exist_ok=True)
    compiled.export_to_c(str(out_dir), ident, ident)
    cfg.smem_bytes_exact = int(getattr(gemm, "smem_struct_bytes", 0) or 0)
    return out_dir / f"{ident}.h", out_dir / f"{ident}.o"


def dsl_dtype(name: str):
    import cutlass
    return {"bf16": cutlass.BFloat16, "fp16": cutlass.Float16, "fp32": cutlass.Float32,
            "fp8_e4m3fn": cutlass.Float8E4M3FN, "int8": cutlass.Int8}[name]


def gmem_ptr(dtype_name: str, align: int = 16):
    """A placeholder global-memory pointer argument for `cute.compile`."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr
    return make_ptr(dsl_dtype(dtype_name), 0, cute.AddressSpace.gmem, assumed_align=align)


def verify_epilogue_layout(fam: Family, cfg: GemmConfig, threads=None) -> list:
    """Traces `check_layouts` (nothing runs on a GPU); returns the mismatches (empty = OK)."""
    import_dsl()
    import cutlass.cute as cute
    Kernel = fam.kernel_class(cfg)
    gemm = Kernel(cfg)
    n = 128 * cfg.mma_wg
    threads = threads or sorted({0, 5, 37, 70, 127, n - 1, n // 2 + 33})

    def body():
        gemm.check_layouts(threads)

    @cute.jit
    def probe():
        body()

    cute.compile(probe, options="--gpu-arch sm_90a")
    return gemm.layout_errors


def checked_epilogue_layout(fam: Family, cfg: GemmConfig, cache_dir: pathlib.Path) -> str:
    """verify_epilogue_layout, raising on a mismatch; a pass is remembered in cache_dir (next to
    the kernels of one build) under a key of everything the check depends on (sources, DSL
    version, dtypes, tile, consumer warpgroups, epilogue tile), so that the cluster / stages /
    overlap variants of one tile reuse it.  Returns "passed" or "passed (cached)"."""
    import cutlass
    h = hashlib.sha256(pathlib.Path(__file__).read_bytes())
    h.update(fam.source_file.read_bytes())
    h.update(json.dumps([fam.name, getattr(cutlass, "__version__", "?"), cfg.in_dtype, cfg.out_dtype,
                         cfg.tile_m, cfg.tile_n, cfg.tile_k, cfg.mma_wg, cfg.epi_m, cfg.epi_n,
                         cfg.epi_stages, cfg.MAINLOOP, cfg.EPILOGUE]).encode())
    stamp = pathlib.Path(cache_dir) / f"{h.hexdigest()[:24]}.ok"
    if stamp.is_file():
        return "passed (cached)"
    errs = verify_epilogue_layout(fam, cfg)
    if errs:
        raise RuntimeError(f"{fam.name}: epilogue/accumulator layout mismatch: {errs[:4]}")
    try:  # concurrent builds may race here: write a private file, then rename it into place
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(kernel_name(fam, cfg) + "\n")
        os.replace(tmp, stamp)
    except OSError:
        pass
    return "passed"


# ---------------------------------------------------------------------------------------------
# C++ adapter
# ---------------------------------------------------------------------------------------------
ADAPTER_LAUNCH = r"""
namespace {
namespace @IDENT@_detail {
// Stream-K (split_k = flygemm::kStreamK): the grid's CTAs, min(units, SMs) over tiles x K tiles units
// (kernels/cuda/_hopper_gemm.py, streamk_first_unit); 0 when the kernel has no stream-K mode or the unit
// arithmetic ((unit + 1) x CTAs) would leave int32: the launch then runs unsplit.
inline long long streamk_ctas(const flygemm::LaunchArgs& args, int sms) {
  if (!kHasStreamK || args.split_k != flygemm::kStreamK || args.M <= 0 || args.N <= 0 || args.K <= 0 || sms <= 0)
    return 0;
  const long long units = ((args.M + kTileM - 1) / kTileM) * ((args.N + kTileN - 1) / kTileN) *
                          ((args.K + kTileK - 1) / kTileK);
  const long long ctas = units < sms ? units : sms;
  return units <= 0x7fffffffLL / (ctas + 1) ? ctas : 0;
}
inline long long streamk_workspace_bytes(long long ctas) {  // the fp32 slots, then an 8-byte flag per CTA
  return ctas * (kStreamKSlotsPerCta * kTileM * kTileN * 4 + 8);
}
// A launch's token for its stream-K flags (never 0: a flag is (token << 32) + a constant): distinct per launch,
// so a flag left by an interrupted earlier launch on the same memory cannot pass for this launch's.
inline int32_t next_streamk_token() {
  static uint32_t counter = 0;
  uint32_t t = __atomic_add_fetch(&counter, 1u, __ATOMIC_RELAXED) & 0x7fffffffu;
  return (int32_t)(t ? t : 1);
}
}  // namespace @IDENT@_detail
}  // namespace

// Stream-K: the fp32 slots of the later parts of tiles shared by two or more CTAs and the CTAs' flags (the op
// layer allocates them as LaunchArgs::scratch); 0 for any other launch.
static int64_t @IDENT@_scratch_bytes(const flygemm::LaunchArgs& args) {
  using namespace @IDENT@_detail;
  if (!kHasStreamK || args.split_k != flygemm::kStreamK) return 0;
  char err[64];
  return streamk_workspace_bytes(streamk_ctas(args, loaded_sm_count(args.device, err, sizeof(err))));
}

static int @IDENT@_launch(const flygemm::LaunchArgs& args, char* err, int err_len) {
  using namespace @IDENT@_detail;
  const long long M = args.M, N = args.N, K = args.K, lim = 0x7fffffffLL;
  if (M < 0 || N < 0 || K < 0) return fail(err, err_len, "negative size");
  if (M == 0 || N == 0) return 0;  // nothing to write
  if (K == 0) return fail(err, err_len, "K must be >= 1 (the op layer handles K == 0)");
  if (M > lim || N > lim || K > lim) return fail(err, err_len, "M, N and K must fit in int32");
  if (((M + kTileM - 1) / kTileM) * ((N + kTileN - 1) / kTileN) > lim)
    return fail(err, err_len, "too many output tiles for int32 tile indices");
  if (K % @K_ALIGN@ != 0) return fail(err, err_len, "K must be a multiple of @K_ALIGN@ (TMA: 16-byte row stride of w)");
  if (args.lda < K || args.lda % @K_ALIGN@ != 0)
    return fail(err, err_len, "lda must be >= K and a multiple of @K_ALIGN@ (TMA: 16-byte row stride of a)");
  if (args.ldo < N || (args.ldo * kOutBytes) % 16 != 0)
    return fail(err, err_len, "ldo must be >= N and ldo * sizeof(out) a multiple of 16 bytes (TMA)");
  if (!args.a || !args.w || !args.out) return fail(err, err_len, "null a, w or out pointer");
  if (!aligned(args.a, 16) || !aligned(args.w, 16) || !aligned(args.out, 16))
    return fail(err, err_len, "a, w and out must be 16-byte aligned (TMA)");
  const bool stream_k = args.split_k == flygemm::kStreamK;
  if (args.split_k < 1 && !stream_k) return fail(err, err_len, "split_k must be >= 1 or kStreamK (-1)");
  if (stream_k && !kHasStreamK) return fail(err, err_len, "split_k = kStreamK: this kernel has no stream-K mode");
  if (kMaxSplitK == 1 && args.split_k != 1)
    return fail(err, err_len, "split_k must be 1 (this kernel has no split-K mode)");
  // split-K: at most kMaxSplitK slices and no more than K tiles (no slice is empty); the reduce
  // kernel indexes M * N in int32, so a larger output runs unsplit (same result, one rounding).
  const long long k_tiles = (K + kTileK - 1) / kTileK;
  long long want_split = stream_k ? 1 : (args.split_k < kMaxSplitK ? args.split_k : kMaxSplitK);
  if (want_split > k_tiles) want_split = k_tiles;
  if (M * N > lim - 256) want_split = 1;
  int32_t split_k = (int32_t)want_split;
  void* ws_ptr = nullptr;
  int32_t m_pad = 0;
  if (split_k > 1) {
    if (!args.workspace || !aligned(args.workspace, 16))
      return fail(err, err_len, "split_k > 1 needs a 16-byte aligned fp32 workspace");
    if (args.M_pad < ((M + kTileM - 1) / kTileM) * kTileM || args.M_pad * (long long)split_k > lim)
      return fail(err, err_len, "workspace M_pad must cover the M tiles (M rounded up to tile_m)");
    ws_ptr = args.workspace;
    m_pad = (int32_t)args.M_pad;
  }
  if (args.bias) {
    if (args.bias_dtype != flygemm::DType::fp32)
      return fail(err, err_len, "bias must be fp32 (the op layer converts it)");
    if (!aligned(args.bias, 4)) return fail(err, err_len, "bias must be 4-byte aligned");
  }
@CHECKS@
  const int sms = loaded_sm_count(args.device, err, err_len);
  if (sms <= 0) return -1;
  if (const long long ctas = streamk_ctas(args, sms)) {  // else stream-K runs unsplit
    if (!args.scratch || args.scratch_bytes < streamk_workspace_bytes(ctas) || !aligned(args.scratch, 16))
      return fail(err, err_len, "stream-K needs the record's scratch_bytes of 16-byte aligned scratch");
    ws_ptr = args.scratch;
    split_k = flygemm::kStreamK;
    m_pad = next_streamk_token();  // the kernel reads stream-K's launch token from M_pad
  }
  // Same packing as cute_dsl_@IDENT@_wrapper in @HEADER@. The launcher encodes the TMA
  // descriptors on the host and returns cudaLaunchKernelEx's status
  // (grid = min(#tiles, #SMs), @THREADS@ threads, @SMEM@ bytes of dynamic shared memory).
  void* a_ptr = const_cast<void*>(args.a);
  void* w_ptr = const_cast<void*>(args.w);
  void* out_ptr = args.out;
  void* bias_ptr = const_cast<void*>(args.bias);
  int32_t m = (int32_t)M, n = (int32_t)N, k = (int32_t)K;
  int64_t lda = (int64_t)args.lda, ldo = (int64_t)args.ldo;
  int32_t has_bias = args.bias ? 1 : 0, max_ctas = (int32_t)sms;
  void* stream = args.stream;
  int32_t ret = 0;
@PACK@
  @CIFACE@(packed, @NUM_PACKED@);
  if (ret != 0) return fail_cuda(err, err_len, "kernel launch (cudaLaunchKernelEx)", ret);
  return 0;
}
"""


def parse_header(fam: Family, header: pathlib.Path, ident: str) -> str:
    return cx.parse_launcher(fam.name, header, ident, fam.wrapper_args)


def adapter_cpp(fam: Family, ident: str, name: str, header_rel: str, ciface: str,
                cfg: GemmConfig, smem_bytes: int) -> str:
    checks = fam.adapter_checks.strip("\n")
    constants = (f"constexpr long long kTileM = {cfg.tile_m}, kTileN = {cfg.tile_n}, "
                 f"kTileK = {cfg.tile_k}, kOutBytes = {DTYPE_BYTES[cfg.out_dtype]}, "
                 f"kMaxSplitK = {cfg.max_split_k}, kStreamKSlotsPerCta = {streamk_slots(1)};\n"
                 f"constexpr bool kHasStreamK = {'true' if cfg.stream_k else 'false'};\n"
                 f"constexpr bool kScaleTma = {'true' if cfg.scale_tma else 'false'};  // blockscale scales by TMA")
    text = cx.adapter_prelude(ident, name, fam.source_file.name, header_rel, ciface, constants)
    text += ADAPTER_LAUNCH.replace("@CHECKS@\n", checks + "\n" if checks else "")
    for k, v in {
        "@PACK@": fam.adapter_pack.strip("\n"),
        "@NUM_PACKED@": str(len(fam.wrapper_args) + 1),
        "@IDENT@": ident, "@HEADER@": header_rel, "@CIFACE@": ciface,
        "@THREADS@": str(cfg.threads), "@SMEM@": str(smem_bytes), "@K_ALIGN@": str(fam.k_align),
    }.items():
        text = text.replace(k, v)
    return text


# ---------------------------------------------------------------------------------------------
# build() per docs/TEAM_INTERFACES.md
# ---------------------------------------------------------------------------------------------
def kernel_name(fam: Family, cfg: GemmConfig) -> str:
    cluster = "" if (cfg.cluster_m, cfg.cluster_n) == (1, 1) else f".c{cfg.cluster_m}x{cfg.cluster_n}"
    split = f".sk{cfg.split}" if cfg.split else ""
    promote = f".p{cfg.promote}" if cfg.promote else ""
    pingpong = ".pp" if cfg.pingpong else ""
    swap = ".sw" if cfg.swap_ab else ""
    scale_tma = f".st{cfg.scale_tma}" if cfg.scale_tma != cfg.scale_tma_default else ""
    return (f"{fam.name}.{cfg.in_dtype}.{cfg.out_dtype}.t{cfg.tile_m}x{cfg.tile_n}x{cfg.tile_k}"
            f"{cluster}{split}{promote}{pingpong}{swap}{scale_tma}")


def build(fam: Family, spec: dict, out_dir: pathlib.Path) -> dict:
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    arch = str(spec.get("arch") or "sm_90a")
    if arch not in ("sm_90a", "sm_90"):
        raise ValueError(f"{fam.name}: CUDA family targets sm_90a, got arch={arch!r}")
    arch = "sm_90a"  # wgmma / setmaxnreg need the arch-specific target
    cfg = fam.config_cls.from_spec(spec)
    name = str(spec.get("kernel") or spec.get("name") or kernel_name(fam, cfg))
    ident = str(spec.get("ident") or c_ident(kernel_name(fam, cfg)))

    t0 = time.time()
    layout_check = "skipped"
    if int((spec.get("params") or {}).get("verify_layout", 1)):
        layout_check = checked_epilogue_layout(fam, cfg, out_dir.parent / ".layout_checks")
    t1 = time.time()
    header, obj = compile_and_export(fam, cfg, out_dir, ident, arch)
    compile_s = time.time() - t1
    verify_s = t1 - t0

    h = hashlib.sha256(fam.source_file.read_bytes())
    h.update(pathlib.Path(__file__).read_bytes())
    src_hash = h.hexdigest()[:16]
    meta = cfg.meta()
    meta.update({
        "arch": arch, "family": fam.name, "ident": ident,
        "dsl": cx.dsl_version(),
        "source_sha256_16": src_hash, "compile_seconds": round(compile_s, 2),
        "layout_check_seconds": round(verify_s, 2), "layout_check": layout_check,
        "c_entry": f"cute_dsl_{ident}_wrapper",
        "smem_bytes": getattr(cfg, "smem_bytes_exact", 0) or cfg.smem_bytes,
        "requires": fam.requires_text,
    })
    ciface = parse_header(fam, header, ident)
    adapter = adapter_cpp(fam, ident, name, header.name, ciface, cfg, meta["smem_bytes"])
    result = {
        "objects": [obj.name],
        "adapter_cpp": adapter,
        **cx.link_result(out_dir),
        "meta": meta,
        "requires_k_multiple": fam.k_align,
        "requires_n_multiple": 1,
        "max_split_k": cfg.max_split_k,
        "scratch_fn": cfg.stream_k,   # registry: the record's scratch_bytes is @IDENT@_scratch_bytes
    }
    # Kept next to the objects for tools that only have the directory (selftest).
    (out_dir / "adapter.cpp").write_text(adapter)
    (out_dir / "build.json").write_text(json.dumps(
        {k: v for k, v in result.items() if k != "adapter_cpp"} | {"ident": ident, "name": name},
        indent=1))
    return result


# ---------------------------------------------------------------------------------------------
# SASS inspection (needs cuobjdump; a pip copy: nvidia-cuda-cuobjdump)
# ---------------------------------------------------------------------------------------------
extract_cubins = cx.extract_cubins
find_cuobjdump = cx.find_cuobjdump


# UTMALDG.2D.MULTICAST: the cluster's shared operand; SYNCS.ARRIVE.TRANS64.RED: a stage release
# arriving on a cluster peer's mbarrier (plain SYNCS.ARRIVE is local); UCGABAR_*: cluster barrier.
_SASS_PATTERN = (r"\b((?:HGMMA|QGMMA|IGMMA)\.[\w.]+|UTMALDG[\w.]*|UTMASTG[\w.]*|STSM[\w.]*|"
                 r"USETMAXREG[\w.]*|LDG[\w.]*|STG[\w.]*|STL[\w.]*|LDL[\w.]*|"
                 r"SYNCS\.ARRIVE\.TRANS64\.RED[\w.]*|UCGABAR_\w+|MEMBAR\.ALL\.GPU)")


def sass_summary(obj_path, cuobjdump=None) -> dict:
    """Runs cuobjdump --dump-sass on the embedded cubin(s); returns instruction counts, the
    registers / stack / local memory per thread (spills show as STL/LDL and a nonzero stack)."""
    res = {"cubins": 0, "targets": [], "counts": {}, "resource_usage": "",
           "registers": [], "stack_bytes": [], "local_bytes": []}
    for sass, usage in cx.dump_sass(obj_path, cuobjdump):
        res["cubins"] += 1
        res["resource_usage"] += usage
        res["registers"] += [int(x) for x in re.findall(r"REG:(\d+)", usage)]
        res["stack_bytes"] += [int(x) for x in re.findall(r"STACK:(\d+)", usage)]
        res["local_bytes"] += [int(x) for x in re.findall(r"LOCAL:(\d+)", usage)]
        res["targets"] += re.findall(r"code for (sm_\w+)", sass)
        for ins in re.findall(_SASS_PATTERN, sass):
            res["counts"][ins] = res["counts"].get(ins, 0) + 1
    return res


# ---------------------------------------------------------------------------------------------
# Standalone use
# ---------------------------------------------------------------------------------------------
def default_spec(fam: Family, in_dtype=None, out_dtype=None, tile=None, params=None) -> dict:
    cls = fam.config_cls
    in_dtype = in_dtype or cls.IN_DTYPES[0]
    tile = tile or cls.DEFAULT_TILE
    spec = {
        "arch": "sm_90a", "op": fam.op, "family": fam.name,
        "in_dtype": norm_dtype(fam.name, in_dtype, cls.IN_DTYPES),
        "out_dtype": norm_dtype(fam.name, out_dtype or (in_dtype if in_dtype in cls.OUT_DTYPES
                                                        else cls.OUT_DTYPES[0]), cls.OUT_DTYPES),
        "tile_m": int(tile[0]), "tile_n": int(tile[1]), "tile_k": int(tile[2]),
        "params": dict(params or {}),
    }
    cfg = cls.from_spec(spec)
    spec["kernel"] = kernel_name(fam, cfg)
    spec["ident"] = c_ident(spec["kernel"])
    return spec


def main(fam: Family, doc: str, argv=None):
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--in-dtype", default=fam.config_cls.IN_DTYPES[0])
    ap.add_argument("--out-dtype", default=None)
    d = fam.config_cls.DEFAULT_TILE
    ap.add_argument("--tile", default=f"{d[0]}x{d[1]}x{d[2]}")
    ap.add_argument("--params", default="", help="k=v;k=v (stages, mma_wg, raster_group, ...)")
    ap.add_argument("--sass", action="store_true", help="print a SASS summary (needs cuobjdump)")
    a = ap.parse_args(argv)
    params = {}
    for kv in filter(None, a.params.split(";")):
        k, v = kv.split("=", 1)
        params[k.strip()] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    tile = tuple(int(x) for x in a.tile.lower().split("x"))
    spec = default_spec(fam, a.in_dtype, a.out_dtype, tile, params)
    t0 = time.time()
    res = build(fam, spec, pathlib.Path(a.out))
    dt = time.time() - t0
    print(json.dumps({k: v for k, v in res.items() if k != "adapter_cpp"}, indent=1))
    print(f"built {spec['kernel']} in {dt:.1f} s -> {a.out}")
    if a.sass:
        summ = sass_summary(pathlib.Path(a.out) / res["objects"][0])
        summ.pop("resource_usage", None)
        print(json.dumps(summ, indent=1))
