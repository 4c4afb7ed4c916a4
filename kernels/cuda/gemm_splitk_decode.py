"""Memory-bound split-K decode GEMMs for sm_90a (H100/H200) in CuTe DSL, for small M (M <= 16; MX up to 64).

    out[m, n] = round( sum_k A[m, k] * W[n, k] (dequantized) + bias[n] )   (fp32 accumulate; one rounding to
                                                                          the kernel's out dtype: bf16, fp16, fp32)

One family file, five ops (specialization rows in kernels/configs/sm_90a.kernels.csv):

  mode      op                     a / w                       scales
  bf16      gemm_a16w16            bf16 or fp16 [M, K] / [N, K] -    (fp16: the f16 mma, otherwise the same)
  fp8       gemm_a8w8              e4m3fn                      a: 1 or M fp32, w: 1 or N fp32
  fp8blk    gemm_a8w8_blockscale   e4m3fn                      a: [M, ceil(K/128)], w: [ceil(N/128), ceil(K/128)]
  mxfp8     gemm_mxfp8             e4m3fn                      e8m0 [rows, K/32]
  mxfp4     gemm_mxfp4             e2m1 x2 packed [rows, K/2]  e8m0 [rows, K/32]

Design (decode: the weights are the only large operand, so the kernel is a weight stream):

  * "swap AB" mma.sync: the weight rows are the 16 rows of mma.m16n8k16 (register operand A),
    the (at most 16) tokens are its 8 columns (operand B, one or two n8 tiles per tile_m 8/16).
    Lane (g, t) of a warp loads rows g and g+8 of its 16-row weight group as 16-byte vectors
    (ld.global.nc.L1::no_allocate.v4, LDG.E.128): vector u of a k-tile starts at byte
    (4u + t) * 16, so the 4 lanes of a row read 64 contiguous bytes per instruction and a
    warp reads 8 rows x 64 B. Because the sum over k may run in any order, the k-order inside
    a vector is remapped freely; the activation fragment uses the same remap.
  * bf16: the vector is the mma fragment as is (HMMA.16816.F32.BF16).
    fp8: Hopper has no mma.sync for e4m3 (ptxas lowers it to F2FP + f16 HMMA), so the kernel
    converts e4m3 -> f16 itself (cvt.rn.f16x2.e4m3x2, exact) and runs HMMA.16816.F32 (f16);
    the activation is converted once per CTA when it is staged in shared memory.
    Per-tensor / per-token / per-channel scales are applied to the fp32 result.
    blockscale: the 128-wide k blocks are accumulated in a temporary and scaled by
    w_scale[n/128, kb] * a_scale[m, kb] in fp32 before being added.
    mxfp8: a 16-byte vector is half of a 32-element MX block, so the 4 lanes of a row hold two
    blocks (lanes 0,1 and 2,3): two HMMAs per k-step with the activation of the other block
    masked (those lanes read an all-zero row of shared memory) give one temporary per block, scaled in
    fp32 by 2^(w_e8m0 - 127) * 2^(a_e8m0 - 127) (exact powers of two, any exponent).
    mxfp4 (no FP4 hardware on Hopper): e2m1 nibbles are decoded in registers with a bit trick
    (one AND, one IMAD and one AND per pair of values -> bf16 * 2^-126) and multiplied by the
    E8M0 scale in bf16 (mul.rn.bf16x2; exact); the activation is decoded the same way while it
    is staged. To keep the bf16 scale factors representable the weight is scaled by 2^-48 and
    the activation by 2^48 (products exact): exact for E8M0 weight scale bytes <= 176 (2^49)
    and activation scale bytes <= 206; larger scales overflow to inf (like the data would).
  * mma=wgmma (the .wg kernels; fp8 and blockscale): a warpgroup (4 warps along N, tile_n 64) issues
    wgmma.m64n{8,16}k32.f32.e4m3.e4m3 with the weight vectors as the register A operand (the quad
    {a0..a3} = words of rows g / g+8, wg_a_quad) and the raw e4m3 activation as the shared-memory B
    operand, staged in the no-swizzle K-major core-matrix layout that matches the A remap
    (wg_act_word_offset; fence.proxy.async before the round's barrier). No conversion and one tensor
    instruction per 64 x 32 weights (the sync path: 8 HMMAs and 32 F2FP). Each 128-wide k block
    chains 4 wgmmas into a fresh fp32 temporary, added (x block scales) after wgmma.wait_group:
    the tensor core's fp8 accumulation is not full fp32, so it never sums more than 128 products.
    Measured on the H200 (2026-11-30): fp8 1 x 16384 x 7168 29.5 us kernel time (93% of copy
    bandwidth) against 35 us for the best mma.sync kernel; see docs/PERF.md.
    One warpgroup per CTA (warps_k=1, min_blocks 3 / 4: the .w1.bN kernels, 2026-12-01, twentieth session): a
    round's barrier then syncs 4 warps and 3-4 CTAs share an SM, so one CTA's barrier or load wait is covered by
    the others' loads. Nsight Compute on 1 x 8192 x 8192 with the two-warpgroup kernel (128 CTAs, one per SM): DRAM
    58%, 63% of the stall samples on the weight loads, 20% at the round barrier. The .w1 kernels won 3-30% on 74
    decode-sweep rows (fp8 / blockscale / MXFP8; 1 x 57344 x 8192 fp8 110 us, 100% of copy bandwidth) and lose
    at 16384 x 7168. Measured and dropped the same day: tile_m 32 / 64 (wgmma n32 / n64; 0.6-0.9x the large-M
    tile kernels at M = 32 / 64), tile_k 512 and four warpgroups along K (more bytes in flight per CTA, slower).
  * CTA = warps_n x warps_k warps; warp (wn, wk) owns `groups` 16-row weight groups and every
    warps_k-th k-tile of the CTA's split-K slice. The slice is processed in rounds of warps_k
    k-tiles: the activation of a round (tile_m x warps_k*tile_k, converted to bf16/f16) sits in
    double-buffered shared memory; during round r every thread already has the weights of round
    r+1 in flight (register double buffer) and the raw activation of round r+1 (registers), so
    one barrier per round never drains the memory pipe. At the end the warps_k partial sums are
    added in fixed order through shared memory.
  * split-K (LaunchArgs.split_k = S > 1, grid.y = S): slice s owns k-tiles
    [s*KT/S, (s+1)*KT/S) (need not divide, may be empty), writes fp32 partials (scaled, no bias)
    to workspace[s, m, n] (rows m < M of each M_pad-row slice), and a second kernel of this
    family (same host launcher, same stream) sums s = 0..S-1 in order, adds the bias and rounds
    once to bf16. S == 1 writes out directly. No atomics: bitwise reproducible.
  * grid = (ceil(N / tile_n), split_k, ceil(M / tile_m)): any M works (slowly for large M);
    ragged N is handled (rows clamped on load, masked on store). Weight loads are never
    predicated: vectors past the slice end / K re-read the slice's last vector (cache hits) and
    meet zero activation columns (the activation loads are predicated and zero-filled).
  * weight ring (param w_stages = S >= 2, the .sS kernels): instead of the register double buffer
    each thread copies its own weight vectors of round r + S - 1 into its own 16-byte cells of an
    S-slot shared-memory ring (cp.async.cg, LDGSTS: no registers held while in flight), waits for
    round r with cp.async.wait_group S - 1 and reads its cells back (LDS.128, conflict-free: cell
    of vector j = slot + (j * threads + tid) * 16). A thread only reads what it copied, so the
    ring needs no barrier. S - 1 rounds in flight per CTA (vs one); 1 CTA/SM. Measured on the
    H200 (2026-11-30): within +-5% of the register kernels, ahead on fp8 at M = 16, N = 2048
    (14.0 vs 14.6 us) and at 1 x 10240 x 8192 / 1 x 57344 x 8192; ncu shows the small-N case bound
    by neither (DRAM 31%, 8 warps per SM mostly idle) - see docs/PERF.md.
  * bulk ring (param w_bulk = B >= 1, the .bkB kernels; bf16 / fp8 / blockscale / MXFP4): the warps copy each
    round's tile_n weight rows and tile_m raw activation rows global -> shared memory with one TMA bulk
    copy per row (cp.async.bulk, transaction bytes completing on the slot's mbarrier; blockscale: the
    round's weight and activation scales by 4-byte cp.async, cp.async.mbarrier.arrive on the same
    mbarrier) into a ring of B slots; the
    first B rounds are requested before anything else and a slot is refilled once the barrier after
    its round has passed (no barrier at all while rounds <= B). Warps read the weight vectors and the
    activation fragments straight from the slot (fp8: converted to f16 in registers); vectors past the
    slice are masked to zero (their slot bytes are stale), activation rows past M are zeroed once.
    Why: at N = 2048 the register / cp.async kernels kept the weights streaming but every round's small
    activation load queued behind megabytes of weight requests (ncu: the warps waited on the
    activation, not the weights). Measured on the H200 (2026-11-30, kernel time): 1 x 2048 x 7168 fp8
    6.3 us against 8.7 us, blockscale 7.0 against 8.9 us, bf16 9.1 against 11.7 us; see docs/PERF.md.
    Every warp issues a few rows' copies (row i: lane i // warps of warp i % warps), not warp 0 alone:
    16 x 2048 x 7168 fp8 8.2 -> 7.8 us, blockscale 9.1 -> 8.0, bf16 11.3 -> 10.6. Tried and dropped
    (2026-11-30): clusters of 2 / 4 CTAs along N sharing each activation row by a multicast bulk copy
    (per-slot release barriers across the cluster) - correct but 0.3-1.2 us slower with 2, and two
    waves with 4 (docs/measurements/2026-11-30-h200-tune-bulk-mcast-9.txt).
    A ring can hold a CTA's whole K slice (no slot refilled, no barrier): at tile_m 16 that needs packed rows
    (row_pad=0, 2-way conflicts on the fragment reads) and the reduction buffer in the idle slots after the last round
    (red_ring=1), fp8 16 x 2048 x 7168 in 7.9 against 8.2 us for 7 rounds in 6 slots (H100, 2026-12-06).
    Packed rows also pay without the whole slice wherever a slot holds 8 or more activation rows, despite the 2-way
    conflicts: every row's bulk copy then starts on a 128-byte boundary (H100, kernel time: bf16 m16n16.w8.bk3
    16 x 2048 x 7168 12.5 against 12.8 us, fp8 m8n16.w7.bk4 at M = 8 7.4 against 7.9; at M = 1 they tie). The
    alignment is what pays: blockscale m16n16.w7.bk3.np ran 8.8 against 9.0 us while its 58304-byte slots left every
    other slot's rows at 64 mod 128, and 8.2 once packed slots were rounded up to 128 bytes (2026-12-06).
  * wide bulk tiles (tile_n 32 / 80 with the bulk ring, warps_n = tile_n / 16 warps along N): every CTA also copies its
    tile_m activation rows, so with 16 weight rows per CTA the L2 -> SM traffic at M = 8 is 1.5x the weight bytes (2x at
    M = 16). 32 rows halve that share (fp8 8 x 36864 x 7168 74.7 -> 67.4 us, 1 x 8192 x 8192 20.7 -> 18.6 us); 80 rows make
    N = 10240 one wave of 128 CTAs, one per SM (fp8 1 x 10240 x 8192 24.1 -> 22.8 us). Measured on the H200, 2026-12-01
    (docs/PERF.md, twenty-first session).
  * MXFP4 bulk (w_bulk with gemm_mxfp4): the slot also holds the round's E8M0 scale bytes (weight rows,
    then activation rows), copied as 4-byte cp.async words by every thread (zero-filled past the slice)
    with one noinc arrival each on the slot's mbarrier, so K % 128 == 0 and 4-byte aligned scale pointers.
    The activation is not decoded by every warp: at the end of round r the CTA decodes round r + 1's raw
    activation from its slot into a staged bf16 buffer (store_a), once per CTA. Measured on the H200
    (2026-11-30, kernel time): 1 x 2048 x 7168 8.2 us against 9.5 us; at N = 16384 the best bulk variant
    (m8n64g2.w4.bk3, not built) only tied the register kernel (30.7 vs 30.5 us): ncu put it at 47% issue-slot
    use with ~7.9 instructions per weight byte, most of them the e2m1 decode and its scale multiply
    (Hopper has no FP4 conversion), its 2 warps per scheduler stalled on short dependency chains.
  * MXFP4 blocks along N (param mx_n=1, the .wgn kernels): a lane's 16-byte chunk of a weight row is one
    whole 32-block and the 4 lanes of a row read 4 consecutive blocks. k32 step q of a chunk takes raw word q
    of every lane's chunk (decoded to e4m3 x 2^-6 in registers, 7 integer instructions per 8 values), and the
    B tile of the step has a column per (block j of the 4, token m) holding token m's activation at lane j's
    k slots only (zeros elsewhere, written once): one wgmma.m64n(4 tile_m)k32 per step, four steps give each
    lane's accumulator columns its own block's sums, scaled by the E8M0 pair and added (2 tile_m FFMA per
    chunk and row instead of a temporary per block and step). Weights travel by cp.async into a per-thread
    ring (w_stages, no barrier); the activation of a_rounds rounds, and the weight rows' E8M0 words of those
    rounds, are staged at once (loads issued before the ring's), so the rounds in between run without barriers.
    K % 128 == 0. Measured on the H200 (2026-11-30, kernel time): 1 x 16384 x 7168 17.8 us against 30.5 us
    for the best earlier MXFP4 kernel and 29.1 us for fp8 (docs/PERF.md). The E8M0 words first rode in the
    weight ring as 4-byte cp.async copies (19.8 us here): those go through L1, and a warp's 8 rows of one word
    offset meet in one shared-memory bank (4-way at a 224-byte scale row, 32-way at 256 bytes: 1 x 16384 x 8192
    took 34 us, now 21.5 us).
  * MXFP4 through bf16 wgmma (param mx_bf16=1, the .wgb kernels): the .wgn pipeline (lane chunk = one 32-block,
    per-thread cp.async ring, a_rounds rounds of activation and weight-scale words staged at once), but the
    weights are decoded to bf16 (e2m1x8_to_bf16) and multiplied by their block's E8M0 scale in registers, the
    activation likewise while it is staged - the mma.sync kernels' exact scaling (weight x 2^-48, activation
    x 2^48). With the scales inside the operands a k16 step may mix blocks: wgmma.m64n(tile_m)k16 adds every
    step straight into one accumulator, and the cost per weight value (~17 instructions per 8 values: the decode
    and its scale multiply) does not grow with tile_m as the .wgn scaling does (2 tile_m FFMAs per 32 values).
    tile_m 8 / 16 / 32 / 64, groups=2 (tile_n 128) for K = 512. Measured on the H200 (2026-12-01, kernel time):
    16 x 16384 x 7168 30.4 us against 37.5 for m16n64 (mma.sync), 32 / 64 x 16384 x 7168 37.7 / 59.3 against
    71.8 / 139.7 us; 1.47x geomean over the 46 decode-sweep shapes at M = 8..64 (docs/PERF.md, seventeenth
    session). Nsight Compute at M = 16: 57% issue-slot use, stalls spread (not_selected 20%, the round-end
    wgmma wait 7%): close to issue-bound, so more CTAs per SM (.b3) and groups=2 did not help. Deferring the
    round-end wait to the stage end was tried and dropped: ptxas then reused the in-flight wgmmas' A registers
    for the next round's decode without a wait (unsafe). Also dropped (2026-12-01, eighteenth session, docs/PERF.md;
    code in commits b6ac26d, 13fc51b, e881c7c): issuing a stage's activation loads one stage ahead (+-4%), and
    staging the activation once per cluster of CTAs, by st.shared::cluster (0.3-0.6x: the cluster barrier's
    release drains the weight ring) or by a TMA exchange of halves (0.85-0.97x although the staging instructions
    halve): the staging's instruction count is not what limits these kernels.
    MXFP8 (mx_bf16 with gemm_mxfp8): a lane's unit is one 32-byte block (two 16-byte copies), e4m3 -> bf16 is a
    bit move (e4m3x4_to_bf16, x 2^-120 folded into the factor), and a unit or staged chunk holding an e4m3 NaN code
    gets a NaN factor (nan_if_any; the move alone would make the code 480). Kept at tile_m 64 only: 1.14-1.45x the
    .wg kernel at M = 64 on the large layers, slower at M <= 32 (docs/PERF.md, seventeenth session).
  * the activation decoded once per call (param a_image=1, the .img kernels; mx_bf16 MXFP4 / MXFP8): first, 2026-12-01
    (nineteenth session), an upper bound: the .wgb kernels with no activation staging at all (wrong results) took 24.5 /
    36.4 us at 16 / 64 x 16384 x 7168 against 30.1 / 59.0 us, MXFP8 m64 67 against 104 us
    (docs/measurements/2026-12-01-h200-skip-bounds-19.txt) - the per-CTA decode of the activation, repeated by each of
    the N / tile_n CTAs, was most of the difference (the eighteenth session's cluster-sharing attempts only moved it).
    So the launcher first runs act_image_kernel (a thread per raw 16-byte chunk: decode with the E8M0 scale, exactly as
    staging does, and store each word where staging would put it: the image of the B tiles, per tile_m rows and k-tile,
    in the launch's scratch, LaunchArgs::scratch), then the GEMM as its programmatic dependent (PDL): it requests its
    first weight rounds, waits (griddepcontrol.wait) and copies each stage's image with one TMA bulk copy per k-tile
    into one of two stage buffers, the next stage's copy in flight during the current stage (main_img). A warpgroup whose
    k-tile of the slice's last round lies past the slice skips it (the image holds the next slice's values there). Cost:
    every CTA reads the bf16 image (4x the raw fp4 bytes) from L2, and the image kernel's latency sits before the GEMM's
    first stage. Measured on the H200 (kernel time, docs/PERF.md nineteenth session): 1.05 / 1.05 / 1.10 / 1.31x geomean
    at M = 8 / 16 / 32 / 64 over the MXFP4 sweep rows, 16 / 32 / 64 x 16384 x 7168 30.4 / 37.7 / 59.3 -> 26.3 / 32.8 /
    36.3 us; MXFP8 m64 1.2-2x (64 x 57344 x 8192: 430 -> 283 us, with a 2-round weight ring so that two CTAs fit an SM).
    The GEMM is placed only after the image kernel's CTAs exit (no early PDL release: with about one GEMM CTA per SM
    an early release cost 6-48 us, see act_image_kernel); the rows were tuned with the release at the start.
    What still limits the M = 16 .img kernel (2026-12-06, fifty-seventh session, H100, docs/PERF.md): not its weight
    decode (a wrong-result twin without decode and E8M0 multiply: 0.975x the time at 16 x 16384 x 7168, 0.91x at
    M = 64), nor the ring depth (w_stages 6 / 8, in-place refill: 1.01-1.22x slower), the image reads per weight byte
    (groups=2: 1.08-1.17x slower) or the rounds' count (tile_k 256: 0.985-1.05x). It takes ~28 us on the H100 and
    the H200 alike, where the fp8 decode drops from 41 to 29 us with the H200's bandwidth.
    Correction (2026-12-06, fifty-eighth session, H100, docs/PERF.md): on the H100 even the twin without decode, without
    image copies and with half the wgmmas (Config.bound = 7) takes 0.938x the time (0.895x at N = 36864): there the
    kernel sits on its weight stream (plus the image kernel before it), about where the M = 1 .wgn kernel streams the
    same weights, so H100 bounds cannot show what the work costs on the H200, whose faster stream (M = 1: 18 us) leaves
    the same kernel at 28 us; the bounds must be timed there (tools/probes/bounds-58.sh). Also measured then: one
    wgmma.m64n16k16 costs ~8.2 ns of an SM's time with 4 warpgroups issuing (tools/probes/wgmma_rate.py; n8 7.8, n32 9.9,
    n64 18.2, e4m3 k32 the same as bf16 k16), so the kernel's 869 wgmmas per SM are ~7-9 us of its 28; Nsight Compute:
    48% issue-slot use, stalls spread (the wgmma group's first instruction 12%, the round-end wait 7%); 3 or 4
    warpgroups along K per CTA (24 / 32 warps per SM) 1.00-1.33x slower.
  * e4m3 wgmmas on re-biased quads (param mx_e4=1, the .e4.img kernels; MXFP4 a_image): the .img pipeline, but each
    4-block quad of a weight row (the 4 lanes of the row, 128 columns) and of a token is re-biased to its largest E8M0
    byte S: block b's e2m1 values become e4m3 values times 2^(6 - (S - s_b)) through a per-block magnitude table (8
    bytes, one of 256 in shared memory, e2m1_e4m3_lut) picked by two byte permutes per 4 values (e2m1x8_to_e4m3_lut:
    9 instructions per 8 values against ~17 for the bf16 decode and its scale multiply), exact while s_b >= S - 14.
    Four wgmma.m64n(tile_m)k32 e4m3 per quad into a fresh temporary (half the bf16 path's k16 steps), added times
    2^(S_w - 133) * 2^(S_a - 133) (fp32, the rows' from the staged scale words, the tokens' from the image). The image
    holds 4 e4m3 B tiles and the tokens' factors per 128 columns (132 bytes per token against 256).
    Why: with the weights in L2 (tools/ab.py --warm-l2, H100, 2026-12-06) the M = 16 .img kernel's work beyond its
    weight stream was 2.9 of its 5.4 us per 1792 columns at N = 16384, half its wgmmas 1.7 of it. Measured the same day
    (H100, cold L2, docs/PERF.md fifty-ninth session): 0.91-0.99x the .img kernels' time on 27 of 30 dispatch rows
    (16 x 16384 x 7168 30.7 -> 30.1 us with tile_k 256, 16 x 36864 x 7168 0.95x, 64 x 57344 x 8192 0.91x); with the
    weights in L2 0.94x; tile_k 256 (two chunks per lane and round) a further 0.95-0.98x at M = 16 / 32, three image
    stage buffers (img_bufs=3, .ib3) 0.98x at M = 32 only. Less than the bound twins promised: Nsight Compute puts 38%
    of issue slots busy and the largest stall on the image stage's mbarrier wait (10% of samples), which a third
    buffer removes without speeding M = 16 up; see docs/PERF.md. On the H200 (2026-12-06, sixtieth session) 16 x 16384
    x 7168 takes 24.5 us against 27.1 for the .img kernel (kernel time; 0.86x the fp8 decode's time); no SM pipe is
    near its limit there (integer ALU 54%, issue 52%, 22% of the warp slots active), yet more warps per SM lost on the
    H100, cold and with the weights in L2: min_blocks 3-5 (split 1 has under two CTAs per SM), the same at split-K
    2 / 3 (1.14-1.34x), three / four warpgroups along K (80 / 64 registers: 1.02-1.34x). Not built.
  * ring refill (param w_refill=1, the .rf kernels; the mx_n / mx_bf16 cp.async ring): a thread refills a slot as soon as it has
    read the slot's vectors into registers (round r + S into round r's slot), not at the start of the next round
    (round r + S - 1 into round r - 1's slot), so S rounds are in flight while round r computes instead of S - 1, in
    the same shared memory. The cp.async follows the thread's own reads of those cells in program order. For the
    MXFP4 M = 1 kernel, whose staged activation leaves room for two slots only (two CTAs per SM).
  * registers: 256 threads, min 2 CTAs/SM (nvvm.minctasm) -> <= 128 registers; 2 x (weights of
    one round) per thread = 2 x 128 B (bf16/fp8, tile_k 128/256) or 2 x 64 B (MX), i.e. 64 KiB
    (32 KiB for MX) of weights in flight per SM plus the next round's activation.

Requirements (checked by the C++ adapter): K % 8 (bf16) / 16 (fp8) / 32 (MX) == 0, lda >= K and
rows 16-byte aligned, a/w 16-byte aligned, ldo >= N, bias fp32 or null, split_k <= 16.

Build-time entry point: `build(spec, out_dir)` (docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_splitk_decode.py --op gemm_a16w16 --out /tmp/x --sass`.
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

FAMILY = "gemm_splitk_decode"
MAX_SPLIT_K = 16

# op -> (mode, in_dtype code, elements per 16-byte vector, requires_k_multiple)
_OPS = {
    "gemm_a16w16": ("bf16", "bf16", 8, 8),
    "gemm_a8w8": ("fp8", "fp8_e4m3fn", 16, 16),
    "gemm_a8w8_blockscale": ("fp8blk", "fp8_e4m3fn", 16, 16),
    "gemm_mxfp8": ("mxfp8", "fp8_e4m3fn", 16, 32),
    "gemm_mxfp4": ("mxfp4", "fp4_e2m1_x2", 32, 32),
}
# output dtypes and their bytes per element (the epilogue's and the reduce's store_out)
_OUT_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
# bytes of shared memory per activation element after staging (bf16 or f16)
_SMEM_EB = 2
# shared-memory row padding (bytes, row stride mod 128) that makes the fragment reads
# conflict-free (see _Config.__init__)
_ROW_PAD = {"bf16": 64, "fp8": 16, "fp8blk": 16, "mxfp8": 16, "mxfp4": 32}
SMEM_LIMIT = 227 * 1024
# wgmma B operand (mma=wgmma): K-major without swizzle; core matrices (8 token rows x 16 bytes) are
# WG_LBO bytes apart along K and WG_SBO bytes apart along the tokens
WG_LBO, WG_SBO = 128, 256


def bulk_issue_row(tid, warps):
    """w_bulk: the slot row (weight rows, then activation rows) whose bulk copy thread tid of a CTA of
    `warps` warps issues: lane i // warps of warp i % warps issues row i, so every warp has a few rows
    (a warp issues its lanes' copies one after the other)."""
    return (tid % 32) * warps + tid // 32


def lane_vector_col(u, t, ve):
    """First k column (inside the warp's k-tile) of lane t's 16-byte weight vector u: the 4 lanes of
    a row read 64 contiguous bytes per load instruction."""
    return (u * 4 + t) * ve


def wg_a_quad(u, hh, v):
    """mma=wgmma: the weight registers (indices into the round's 2 rows x v vectors x 4 words) that
    form wgmma's A fragment {a0, a1, a2, a3} for k32 step 2u + hh: words 2hh, 2hh + 1 of vector u of
    rows g (h = 0: a0, a2) and g + 8 (h = 1: a1, a3); a0/a1 hold k 4t.., a2/a3 k 16 + 4t..."""
    return [(h * v + u) * 4 + 2 * hh + w for w in (0, 1) for h in (0, 1)]


def wg_fp4_quad(u, hh, v):
    """mma=wgmma, fp4: (weight word, decoded half) of A-fragment slots {a0, a1, a2, a3} for k32 step
    2u + hh: word hh of the 8-byte vector u of rows g (h = 0) and g + 8 (h = 1) decodes into its even
    values (half 0: a0 / a1, k 4t..) and its odd values (half 1: a2 / a3, k 16 + 4t..)."""
    return [((h * v + u) * 2 + hh, w) for w in (0, 1) for h in (0, 1)]


def fp4_raw_word_chunk(j, q):
    """fp4 activation: raw 16-byte chunk j (32 values) word q = (16-value lane chunk, its word hh)."""
    return 2 * j + q // 2, q % 2


def wg_act_word_offset(j, m, hh, w, tk, v, bstep, variants=1):
    """mma=wgmma: byte offset in the round's activation buffer of the e4m3 word that meets A-fragment
    word (hh, w) of 16-value chunk j (round columns 16j..16j+15) of token m. Chunk j is vector u of
    lane t of warpgroup wg, so the word belongs to k32 step 2u + hh at k 16w + 4t (see wg_a_quad):
    fp8 raw word q is (hh, w) = (q // 2, q % 2); an fp4 word hh decodes into w = 0 (even values) and
    1 (odd). The (wg, step) tile is bstep bytes: `variants` B tiles of 32 x tile_m bytes (MX: tile
    t // 2 holds lane pair t // 2's k positions), token group m // 8 at WG_SBO, core matrix w at
    WG_LBO, token row m % 8 at 16 bytes, k 4t.. inside the row."""
    wg = j // (tk // 16)
    v16 = j - wg * (tk // 16)
    t = v16 % 4
    variant = t // 2 if variants == 2 else 0
    return ((wg * 2 * v + 2 * (v16 // 4) + hh) * bstep + variant * (bstep // variants) + (m // 8) * WG_SBO
            + w * WG_LBO + (m % 8) * 16 + t * 4)


def mxn_act_word_offset(jb, m, q, w, tm, bstep):
    """mx_n (MX blocks along wgmma's N): byte offset in the round's activation buffer of e4m3 word w
    (0: even values, 1: odd; e2m1x8_to_e4m3) of raw word q of 32-block jb (round-relative) of token m.
    Block jb is lane j = jb % 4's chunk of a 4-block group, and word q of every lane's chunk feeds k32
    step 4 (jb // 4) + q (k-tiles hold whole 4-block groups, so the step index runs on across warps_k).
    Its values go to column n = 8 (m // 2) + 2 j + m % 2 of that step's B tile, at lane j's k slots
    (4j.. of each k half); every other byte of the column stays zero, so column (j, m) sums block j of
    token m only and lane t's accumulator columns 2t, 2t + 1 (+ 8c) are its own block's sums."""
    j = jb % 4
    n = 8 * (m // 2) + 2 * j + m % 2
    return (4 * (jb // 4) + q) * bstep + (n // 8) * WG_SBO + w * WG_LBO + (n % 8) * 16 + 4 * j


def mxn_a_quad(u, q, v):
    """mx_n: (weight word, decoded half) of A-fragment slots {a0, a1, a2, a3} for k32 step 4u + q:
    raw word q of the 16-byte chunk u of rows g (h = 0) and g + 8 (h = 1), its even values (a0 / a1,
    k 4t..) and its odd values (a2 / a3, k 16 + 4t..)."""
    return [((h * v + u) * 4 + q, w) for w in (0, 1) for h in (0, 1)]


def mxb_a_quad(u, q, s):
    """mx_bf16: (weight word, decoded word) of A-fragment slots {a0, a1, a2, a3} for k16 step 8u + 2q + s:
    raw word q of the 16-byte chunk u of rows g (a0, a2) and g + 8 (a1, a3) decodes (e2m1x8_to_bf16) into
    bf16 pairs i = 0..3 (nibbles i, i + 4); step s takes pairs 2s (k slots 2t, 2t + 1) and 2s + 1 (8 + 2t..).
    Words of row g + 8 follow the V chunks of row g (wcur layout of load_w_mxn)."""
    return [(2 * s + w, h, q, u) for w in (0, 1) for h in (0, 1)]


def mxb_act_word_offset(jb, m, q, i, bstep):
    """mx_bf16: byte offset in the round's activation buffer of the bf16 pair word i (e2m1x8_to_bf16) of raw
    word q of 32-block jb (round-relative) of token m. Block jb is lane j = jb % 4's chunk of 4-block group
    jb // 4 (k-tiles hold whole groups, so the step index runs on across warps_k); pair i meets A-fragment
    word i % 2 (a0 / a2 of mxb_a_quad) of k16 step 8 (jb // 4) + 2q + i // 2 at k slots 2j, 2j + 1 of core
    matrix i % 2: token group m // 8 at WG_SBO, core matrix at WG_LBO, token row m % 8 at 16 bytes."""
    step = 8 * (jb // 4) + 2 * q + i // 2
    return step * bstep + (m // 8) * WG_SBO + (i % 2) * WG_LBO + (m % 8) * 16 + 4 * (jb % 4)


def mxb8_a_quad(q8):
    """mx_bf16, MXFP8: (decoded word, row half h) of A-fragment slots {a0, a1, a2, a3} for k16 step 8u + q8 of
    a lane's 32-byte unit u: raw word q8 (4 e4m3 values) of rows g (h = 0) and g + 8 (h = 1) decodes
    (e4m3x4_to_bf16) into pairs 0 (values 0, 2: k slots 2t, 2t + 1, a0 / a1) and 1 (values 1, 3: a2 / a3)."""
    return [(w, h) for w in (0, 1) for h in (0, 1)]


def mxb8_act_word_offset(jb, m, q8, i, bstep):
    """mx_bf16, MXFP8: byte offset in the round's activation buffer of bf16 pair word i (e4m3x4_to_bf16) of raw
    word q8 (values 4 q8 .. 4 q8 + 3) of 32-block jb (round-relative) of token m: k16 step 8 (jb // 4) + q8, core
    matrix i, lane j = jb % 4's k slots (as mxb_act_word_offset)."""
    step = 8 * (jb // 4) + q8
    return step * bstep + (m // 8) * WG_SBO + i * WG_LBO + (m % 8) * 16 + 4 * (jb % 4)


def mxe_act_word_offset(jb, m, q, w, bstep, group_bytes):
    """mx_e4: byte offset (from the first 128-column group of the image, or of a round's buffer) of e4m3 word w
    (0: nibbles 0..3, 1: nibbles 4..7, e2m1x8_to_e4m3_lut) of raw word q of 32-block jb of token m. Block jb is
    lane j = jb % 4's chunk of quad jb // 4, whose group holds 4 k32 B tiles (bstep bytes each) then the tokens'
    factors; word q of every lane's chunk feeds k32 step q, word w the A fragment's a0 / a1 (w = 0, k 4j..) or
    a2 / a3 (w = 1, k 16 + 4j..): core matrix w at WG_LBO, token group m // 8 at WG_SBO, token row m % 8 at 16 bytes."""
    return (jb // 4) * group_bytes + q * bstep + (m // 8) * WG_SBO + w * WG_LBO + (m % 8) * 16 + 4 * (jb % 4)


def mxe_factor_offset(jb, m, bstep, group_bytes):
    """mx_e4: byte offset of token m's fp32 factor 2^(S - 127 - 6) for the quad holding 32-block jb (after the
    group's 4 B tiles)."""
    return (jb // 4) * group_bytes + 4 * bstep + 4 * m


def mxn_d_index(h, m):
    """mx_n: accumulator register of row g + 8h, token m (column 8 (m // 2) + 2t + m % 2)."""
    return (m // 2) * 4 + 2 * h + m % 2


class Config:
    """Static description of one specialization (pure Python)."""

    def __init__(self, op, in_dtype=None, out_dtype="bf16", tile_m=16, tile_n=32, tile_k=0,
                 warps_k=4, groups=1, l2_prefetch=128, min_blocks=2, w_stages=0, mma="sync", w_bulk=0,
                 mx_n=0, a_rounds=0, mx_bf16=0, a_image=0, w_refill=0, bound=0, mx_e4=0, img_bufs=2,
                 red_ring=0, row_pad=1):
        if op not in _OPS:
            raise ValueError(f"{FAMILY}: unsupported op {op!r}; supported: {sorted(_OPS)}")
        self.op = op
        self.mode, want_in, self.ve, self.k_multiple = _OPS[op]
        # gemm_a16w16 takes fp16 too: the same kernels with the f16 mma (HMMA.16816.F32 either way)
        allowed_in = (want_in, "fp16") if self.mode == "bf16" else (want_in,)
        if in_dtype and in_dtype not in allowed_in:
            raise ValueError(f"{FAMILY}: {op} needs in_dtype {' or '.join(allowed_in)}, got {in_dtype}")
        self.in_dtype = in_dtype or want_in
        # the fp32 sums are rounded once, by the epilogue (split_k 1) or the reduce, to the output dtype
        if out_dtype not in _OUT_BYTES:
            raise ValueError(f"{FAMILY}: out_dtype must be one of {sorted(_OUT_BYTES)}, got {out_dtype}")
        self.out_dtype = out_dtype
        self.out_bytes = _OUT_BYTES[out_dtype]
        self.tile_m = int(tile_m)
        # mx_n = 1 (the .wgn kernels, MXFP4 with mma=wgmma): see mx_n below; tile_m 2 / 4 / 8 / 16 tokens
        self.mx_n = int(mx_n)
        if self.mx_n not in (0, 1):
            raise ValueError(f"{FAMILY}: mx_n must be 0 or 1")
        # mx_bf16 = 1 (the .wgb kernels, MXFP4 with mma=wgmma): see mx_bf16 below; tile_m 8 / 16 / 32 / 64
        self.mx_bf16 = int(mx_bf16)
        if self.mx_bf16 not in (0, 1) or (self.mx_bf16 and self.mx_n):
            raise ValueError(f"{FAMILY}: mx_bf16 must be 0 or 1, and not with mx_n")
        # the kernels that stage a_rounds rounds of activation at once and stream the weights through a
        # per-thread cp.async ring (main_mxn): both MXFP4 wgmma designs
        self.mx_pipe = self.mx_n or self.mx_bf16
        allowed_m = (2, 4, 8, 16) if self.mx_n else (8, 16, 32, 64) if self.mx_bf16 else (8, 16)
        if self.tile_m not in allowed_m:
            raise ValueError(f"{FAMILY}: tile_m must be one of {allowed_m} for this kernel, got {tile_m}")
        self.groups = int(groups)
        if self.groups not in (1, 2, 4):
            raise ValueError(f"{FAMILY}: groups must be 1, 2 or 4")
        self.tile_n = int(tile_n)
        if self.tile_n % (16 * self.groups) != 0:
            raise ValueError(f"{FAMILY}: tile_n must be a multiple of 16*groups")
        self.warps_n = self.tile_n // (16 * self.groups)
        self.warps_k = int(warps_k)
        if self.warps_n < 1 or self.warps_k < 1 or self.warps_n * self.warps_k > 16:
            raise ValueError(f"{FAMILY}: warps_n * warps_k must be in [1, 16]")
        self.threads = 32 * self.warps_n * self.warps_k
        # mma=wgmma: the weights travel in 16-value lane chunks for every format (fp8 16 bytes, fp4 8)
        self.mma = str(mma)
        self.wve = 16 if self.mma == "wgmma" else self.ve
        if self.mx_n:
            # MXFP4 blocks along wgmma's N: a lane's 16-byte chunk of a row is one whole 32-block, the 4
            # lanes of a row read 4 consecutive blocks (64 bytes); a k32 step takes word q of every lane's
            # chunk, and the B tile has one column per (block of the 4, token) holding the activation at
            # that block's lane's k slots only (zeros elsewhere). So one wgmma.m64n(4 tile_m)k32 per step,
            # four steps per chunk accumulate every block's sum in its own column, and a lane scales only
            # its own block's columns: 2 x tile_m scale multiply-adds per 32 weight values of a row,
            # against a temporary per block and step of the masked-tile kernels (.wg).
            if self.mma != "wgmma" or self.mode != "mxfp4":
                raise ValueError(f"{FAMILY}: mx_n is implemented for gemm_mxfp4 with mma=wgmma")
            self.wve = 32
        if self.mx_bf16:
            # MXFP4 through bf16 wgmma with the E8M0 scales folded into both operands: the weights are
            # decoded to bf16 and multiplied by their block's scale in registers (mul.rn.bf16x2, exact
            # as in the mma.sync kernels: weight x 2^-48, activation x 2^48), the activation the same
            # way once per CTA while it is staged. No per-block temporary and no scale FFMA at all:
            # every k16 step accumulates straight into one fp32 accumulator, whatever blocks it mixes,
            # so the cost per weight value does not grow with tile_m (the .wgn kernels spend 2 tile_m
            # FFMAs per 32 values and row, which made tile_m 16 lose to mma.sync). wgmma.m64n(tile_m)k16.
            # Lane chunks, ring and staging are those of the .wgn kernels (a 16-byte chunk = one block).
            # MXFP8 the same way (e4m3 -> bf16 is a bit move): a lane's unit is one 32-block of 32 bytes there
            if self.mma != "wgmma" or self.mode not in ("mxfp4", "mxfp8"):
                raise ValueError(f"{FAMILY}: mx_bf16 is implemented for gemm_mxfp4 / gemm_mxfp8 with mma=wgmma")
            self.wve = 32
        # mx_n: the activation of a_rounds rounds is staged at once (B tiles of every round of the group in
        # shared memory), so the rounds in between need no barrier: the warps run through them on their own
        # weight rings. Measured before (one staged round per barrier, 2026-11-30, ncu on 1 x 16384 x 7168):
        # 21% of the stall samples at the round barrier and 32% on global loads (the staging warp's
        # activation, the weight scales one round ahead).
        self.a_rounds = int(a_rounds) if self.mx_pipe else 0
        if self.mx_pipe and not 1 <= self.a_rounds <= 64:
            raise ValueError(f"{FAMILY}: mx_n / mx_bf16 need a_rounds in [1, 64]")
        if not self.mx_pipe and a_rounds:
            raise ValueError(f"{FAMILY}: a_rounds is a parameter of the mx_n / mx_bf16 kernels")
        # a_image = 1 (the .img kernels, mx_bf16): the activation is decoded once per call, not once per CTA.
        # A first kernel of the launcher writes it, scales folded in, as the image of the B tiles (act_image_kernel:
        # per tile_m rows, per 128-column group, the 8 k16 steps' tiles exactly as staging lays them out in shared
        # memory), into the launch's scratch; the main kernel, launched as its programmatic dependent (PDL), streams
        # its weight ring meanwhile and copies each stage's image with TMA bulk copies into two alternating stage
        # buffers (the next stage's copy in flight during the current one). Why: the per-CTA decode was the largest
        # instruction share of these kernels; without it (wrong results, an upper bound measured on the H200,
        # docs/measurements/2026-12-01-h200-skip-bounds-19.txt) 16 / 64 x 16384 x 7168 took 24.5 / 36.4 against
        # 30.1 / 59.0 us. The price: every CTA reads the bf16 image (4x the raw fp4 bytes) from L2.
        self.a_image = int(a_image)
        if self.a_image not in (0, 1) or (self.a_image and not self.mx_bf16):
            raise ValueError(f"{FAMILY}: a_image must be 0 or 1, and is a parameter of the mx_bf16 kernels")
        # mx_e4 = 1 (the .e4.img kernels, MXFP4 a_image): the .img pipeline with e4m3 k32 wgmmas instead of bf16 k16
        # ones - half the tensor instructions and a 9-instruction decode per 8 weights (e2m1x8_to_e4m3_lut) instead of
        # ~17 (e2m1x8_to_bf16 and the scale multiply). e4m3 cannot carry an E8M0 scale, so each 4-block quad (128
        # columns: the 4 lanes of a row hold its 4 blocks) is re-biased to its largest block: block b's values become
        # e2m1 * 2^(6 - (S - s_b)) in e4m3 (S = the quad's largest E8M0 byte; exact while s_b >= S - 14, rounded to
        # nearest below that and zero from S - 19: those blocks are 2^-14 of the largest one's scale), the activation's
        # token quads alike in the image (act_image_kernel, with the token's 2^(S - 127 - 6) after each group's B
        # tiles). Each quad's four k32 steps go into a fresh temporary, added to the accumulator times the row's and the
        # token's factor (the tensor core's fp8 sums are not full fp32, so no temporary spans more than 128 products,
        # as in the fp8 kernels). Why: at 16 x 16384 x 7168 with its weights in L2 (H100, tools/ab.py --warm-l2), the
        # .img kernel's work beyond its weight stream is 2.9 of its 5.4 us per 1792 columns, half the wgmmas alone
        # 1.7 (docs/PERF.md, fifty-ninth session).
        self.mx_e4 = int(mx_e4)
        if self.mx_e4 not in (0, 1) or (self.mx_e4 and not (self.a_image and op == "gemm_mxfp4")):
            raise ValueError(f"{FAMILY}: mx_e4 must be 0 or 1, and is a parameter of the MXFP4 a_image kernels")
        if self.mx_e4 and (self.groups != 1 or int(bound)):
            raise ValueError(f"{FAMILY}: mx_e4 kernels take groups=1 and no bound")
        # img_bufs = 3 (the .ib3 kernels, a_image): three stage buffers of image, the copy of stage s + 2 in flight during
        # stage s (two: s + 1). Why: Nsight Compute on the M = 16 e4 kernel (H100, 2026-12-06) put 10% of its stall
        # samples on the wait for a stage's image, whose copy had one stage (2 rounds) to land.
        self.img_bufs = int(img_bufs)
        if self.img_bufs not in (2, 3) or (self.img_bufs != 2 and not self.a_image):
            raise ValueError(f"{FAMILY}: img_bufs must be 2 or 3, and 3 needs a_image")
        # bound (measurement only, WRONG RESULTS; tools/probes/bounds-58.*): a twin of an MXFP4 .img kernel with part of
        # its work left out, to time what that part costs - bit 1 no weight decode (raw fp4 words as the A operand),
        # bit 2 half the k16 wgmmas, bit 4 no image copies (B tiles as left in shared memory). Never a dispatch row
        # (tests/test_dispatch.py checks); the decode tests skip these kernels (".bnd" in the name).
        self.bound = int(bound)
        if self.bound and not (0 < self.bound < 8 and self.a_image and op == "gemm_mxfp4"):
            raise ValueError(f"{FAMILY}: bound (1..7) is a measurement parameter of the MXFP4 a_image kernels")
        # tile_k = elements of one k-tile (one warp, one round) = 4 lanes x V vectors x wve
        per_vec = 4 * self.wve
        tk = int(tile_k) or (per_vec * (2 if self.mode == "mxfp4" else 4))
        if tk % per_vec != 0:
            raise ValueError(f"{FAMILY}: tile_k must be a multiple of {per_vec} for {op}")
        self.tile_k = tk
        self.V = tk // per_vec  # 16-byte vectors per row per k-tile per lane
        if self.mode == "fp8blk" and self.V % 2 != 0:
            raise ValueError(f"{FAMILY}: blockscale needs tile_k a multiple of 128")
        if self.V > 8:
            raise ValueError(f"{FAMILY}: tile_k too large (at most 8 vectors per lane)")
        self.l2_prefetch = int(l2_prefetch)
        self.min_blocks = int(min_blocks)  # CTAs per SM the register budget is sized for
        if self.min_blocks < 1 or self.min_blocks * self.threads > 2048:
            raise ValueError(f"{FAMILY}: min_blocks * threads must be <= 2048")
        if self.l2_prefetch not in (0, 64, 128, 256):
            raise ValueError(f"{FAMILY}: l2_prefetch must be 0, 64, 128 or 256")
        # w_stages = S >= 2: weights travel global -> shared memory by cp.async into a ring of S
        # rounds (S - 1 rounds in flight ahead of the one being computed, no registers held);
        # 0: register double buffer (one round ahead)
        self.w_stages = int(w_stages)
        if self.w_stages == 1 or not 0 <= self.w_stages <= 8:
            raise ValueError(f"{FAMILY}: w_stages must be 0 or in [2, 8]")
        if self.w_stages and self.mode in ("mxfp8", "mxfp4") and self.mma != "wgmma":
            raise ValueError(f"{FAMILY}: w_stages is implemented for bf16 / fp8 / blockscale only")
        # w_refill = 1 (the .rf kernels): a ring slot is refilled as soon as this thread has read it back, with
        # round r + S, instead of at the start of the round with round r + S - 1: S rounds in flight while round r
        # computes instead of S - 1, for no extra shared memory (the round's weights are in registers by then).
        # Why: the MXFP4 M = 1 kernel (m2n64.s2.p14.wgn) fills shared memory with its staged activation (two CTAs
        # per SM), so its ring had one round (16 KB per CTA) in flight, where the fp8 .wg kernel at 93% of copy
        # bandwidth has two; a third slot costs a CTA per SM or a second activation stage.
        # A thread only refills cells it has just read into registers, and issues the cp.async after those
        # reads in program order (shared memory accesses of one thread are not reordered around each other).
        # Built and measured for the MX pipelines (mx_n / mx_bf16) only, so only they take it.
        self.w_refill = int(w_refill)
        if self.w_refill not in (0, 1) or (self.w_refill and (self.w_stages < 2 or not (mx_n or mx_bf16))):
            raise ValueError(f"{FAMILY}: w_refill must be 0 or 1, and needs the cp.async ring of an mx_n / mx_bf16 "
                             "kernel (w_stages >= 2)")
        # w_bulk = B >= 1 (the .bkB kernels): a round's weight rows AND its raw activation rows travel
        # global -> shared memory as one TMA bulk copy per row (cp.async.bulk, completing on the
        # slot's mbarrier) into a ring of B round-sized slots; the first B rounds are requested before
        # anything else, and the warps read both mma operands straight from the slot (fp8: the
        # activation fragment is converted in registers), so a round needs no staging and, while the
        # ring is not reused (rounds <= B), no barrier. Why the activation too: a small activation
        # load issued after megabytes of weight requests waits behind them (ncu, 2026-11-30: 40% of
        # the stall samples of a weights-only bulk version sat on the round-0 activation), and each
        # later round's staged activation added one more memory latency to the critical path.
        self.w_bulk = int(w_bulk)
        if not 0 <= self.w_bulk <= 16:
            raise ValueError(f"{FAMILY}: w_bulk must be in [0, 16]")
        if self.w_bulk and (self.w_stages or self.mma != "sync"
                            or self.mode not in ("bf16", "fp8", "fp8blk", "mxfp8", "mxfp4")):
            # (MXFP4 through wgmma with bulk slots was built and measured, 2026-11-30: 35.6 against 30.5 us at
            # 1 x 16384 x 7168; docs/measurements/2026-11-30-h200-tune-mxfp4-bulk-10.txt, commit 06e8349; and
            # with one 32-block per k32 step (4-byte lane words) in registers / a cp.async ring / bulk slots:
            # 33.3 / 38.0 / 30.8 us, ...-tune-mxfp4-wg4-11.txt, commit 34d0d9a)
            raise ValueError(f"{FAMILY}: w_bulk is implemented for bf16 / fp8 / blockscale / MX with mma=sync and "
                             "w_stages=0")
        if self.w_bulk and self.mode in ("mxfp8", "mxfp4"):
            # the E8M0 scales travel as 4-byte cp.async words (4 blocks each) next to the bulk rows:
            # rows of K / 32 scale bytes must be whole, 4-byte aligned words
            self.k_multiple = 128

        # mma = "wgmma" (the .wg kernels, fp8 / blockscale): each warpgroup (4 warps along N, 64
        # weight rows) runs wgmma.m64n{8,16}k32 e4m3 with the weights as the register A operand and
        # the raw e4m3 activation as the shared-memory B operand: no e4m3 -> f16 conversion and one
        # tensor instruction per 64 x 32 weights instead of eight HMMAs plus 32 conversions.
        if self.mma not in ("sync", "wgmma"):
            raise ValueError(f"{FAMILY}: mma must be 'sync' or 'wgmma', got {mma!r}")
        # MX with wgmma: lanes 0,1 of a row hold one 32-element block and lanes 2,3 the next, so a
        # k32 step mixes two blocks; each step runs twice against two B tiles, each holding the
        # activation at one lane pair's k positions (zeros at the other's), one temporary per block
        self.wg_variants = 2 if self.mma == "wgmma" and self.mode in ("mxfp8", "mxfp4") and not self.mx_pipe else 1
        if self.mma == "wgmma":
            if self.mode == "bf16":
                raise ValueError(f"{FAMILY}: mma=wgmma is implemented for fp8, blockscale and MX only")
            # mx_bf16 also takes groups=2 (tile_n 128): each warp holds two 16-row groups, one wgmma per group
            # against the same B tile, so the activation staged once per CTA serves twice the weight rows
            if (self.groups != 1 and not (self.mx_bf16 and self.groups == 2)) or self.warps_n != 4:
                raise ValueError(f"{FAMILY}: mma=wgmma needs tile_n=64 (one warpgroup) and groups=1 "
                                 "(mx_bf16: groups 1 or 2, tile_n 64 or 128)")
            if (self.V % 2 and not self.mx_pipe) or (self.w_stages and not self.mx_pipe) or (self.mx_pipe and self.w_stages < 2):
                raise ValueError(f"{FAMILY}: mma=wgmma needs tile_k a multiple of 128 and w_stages=0 "
                                 "(mx_n / mx_bf16: w_stages >= 2)")
            if self.mx_pipe:
                # each quad's 4 E8M0 bytes are staged as one 4-byte word: K / 32 scale bytes per row must be
                # whole words
                self.k_multiple = 128
            if self.wg_variants == 2:
                # whole k-tiles only: the weight scales of a k-tile are read as 32-bit words, and a
                # K tail (a partial last k-tile) was never run on a GPU for these kernels
                self.k_multiple = self.tile_k

        self.round_k = self.warps_k * tk  # activation columns per round
        self.a_row_stride = self.round_k * _SMEM_EB + _ROW_PAD[self.mode]
        # mxfp8: one extra all-zero row; lanes of the "other" block read their fragments there
        self.a_rows = self.tile_m + (1 if self.mode == "mxfp8" else 0)
        self.a_buf_bytes = self.a_rows * self.a_row_stride
        if self.mma == "wgmma":
            # raw e4m3 in wgmma's no-swizzle K-major core-matrix layout: per (warpgroup, k32 step)
            # a tile of tile_m/8 token groups (SBO 256 B) x 2 core matrices along K (LBO 128 B)
            self.b_step_bytes = 32 * self.tile_m * self.wg_variants
            self.a_buf_bytes = self.round_k * self.tile_m * self.wg_variants
            if self.mx_n:  # one k32 step per raw word of a 4-block group, 4 tile_m columns per step
                self.b_step_bytes = 32 * 4 * self.tile_m
                self.a_buf_bytes = self.round_k * 4 * self.tile_m
            if self.mx_bf16:  # bf16 k16 steps: 32 bytes per token and step, as the e4m3 k32 tiles
                self.b_step_bytes = 32 * self.tile_m
                self.a_buf_bytes = self.round_k * 2 * self.tile_m
            if self.mx_e4:  # a 128-column group's image: 4 e4m3 k32 B tiles, then the tokens' fp32 factors
                self.a_buf_bytes = self.round_k // 128 * (4 * self.b_step_bytes + 4 * self.tile_m)
        raw_row = self.round_k * 16 // self.ve  # raw activation bytes per row per round
        self.a_chunks = self.tile_m * raw_row // 16  # 16-byte raw chunks per round
        self.a_chunks_per_thread = -(-self.a_chunks // self.threads)
        if self.mode == "fp8blk":
            self.sa_cols = self.round_k // 128
        elif (self.mode == "mxfp8" and not self.mx_bf16) or self.wg_variants == 2 or self.mx_n:
            self.sa_cols = self.round_k // 32
        else:
            self.sa_cols = 0
        self.sa_entries = self.sa_cols * self.tile_m
        self.sa_per_thread = -(-self.sa_entries // self.threads) if self.sa_entries else 0
        self.sa_buf_bytes = self.sa_entries * 4
        self.red_stride = self.tile_n + 4  # fp32 words per reduction row (bank spread)
        # mx_n: the 4 lanes of a row hold partial sums of different blocks: 4 partials per warps_k
        self.red_parts = self.warps_k * (4 if self.mx_n else 1)
        self.red_bytes = self.red_parts * self.tile_m * self.red_stride * 4
        self.zero_bytes = 0
        # one round of weights (mx_bf16 MXFP8: a lane's unit is a 32-byte block, two 16-byte vectors)
        self.unit_vectors = 2 if self.mx_bf16 and self.mode == "mxfp8" else 1
        self.w_stage_bytes = self.threads * self.groups * 2 * self.V * 16 * self.unit_vectors
        # mx_n: the E8M0 words of the weight rows (one per row and 4-block quad) are staged with the
        # activation, a_rounds rounds at once: [round][row][word]
        self.sw_stage_bytes = self.a_rounds * self.tile_n * (self.round_k // 128) * 4 if self.mx_pipe else 0
        # mx_e4: each staged word becomes the quad's re-bias word (S - byte b per byte) and the row's fp32 factor
        self.sw_stage_bytes *= 2 if self.mx_e4 else 1
        # bulk slots: tile_n rows of one round's weight bytes; a row stride of 64 mod 128 bytes
        # keeps the fragment reads (8 lanes: 2 rows x 64 bytes per phase) conflict-free
        # (the raw activation rows follow the weight rows, same stride: their fragment reads are the
        # weights' pattern)
        round_bytes = self.round_k * 16 // self.ve
        # row_pad = 0 (the .np kernels): every row starts on a 128-byte boundary: rows packed at the round's bytes
        # when those are a multiple of 128 (2-way conflicts on the fragment reads), else rounded up to one. Aligned
        # bulk copies ran faster wherever a slot holds 8 or more activation rows, and packing lets a whole K = 7168
        # slice of 16 weight and 16 activation rows fit. (Tried and dropped, 2026-12-06: odd rows rotated by 64
        # bytes inside their packed bytes by a second bulk copy, which keeps the reads conflict-free: 9.3 against
        # 7.9 us at 16 x 2048 x 7168 on an H100, docs/PERF.md.)
        self.row_pad = int(row_pad)
        if self.row_pad not in (0, 1) or (not self.row_pad and not w_bulk):
            raise ValueError(f"{FAMILY}: row_pad must be 0 or 1, and 0 only with w_bulk")
        if self.row_pad:
            self.wb_row_bytes = round_bytes + (64 if round_bytes % 128 == 0 else 0)
        else:
            self.wb_row_bytes = -(-round_bytes // 128) * 128
        self.wb_slot_bytes = (self.tile_n + self.tile_m) * self.wb_row_bytes
        # blockscale: the round's scales follow (cp.async, 4 bytes each): the weight-row block's
        # round_k / 128 scales, then the activation's [round_k / 128][tile_m] (the sabuf layout)
        self.wb_nkb = self.round_k // 128 if self.mode == "fp8blk" else 0
        self.wb_sa_offset = -(-self.wb_nkb * 4 // 16) * 16  # activation scales 16-byte aligned (lds.v2)
        self.wb_slot_bytes += self.wb_sa_offset + -(-self.wb_nkb * self.tile_m * 4 // 16) * 16
        # MXFP4: then the E8M0 scale bytes of the round, one row per weight row and per activation row;
        # 4 pad bytes make the row stride an odd number of words, so the 8 rows a warp reads at once
        # fall in 8 different banks (the 4 lanes of a row read bytes of one word)
        mx_words = self.round_k // 128
        self.wb_mx_srow = 4 * (mx_words + 1 - mx_words % 2) if self.mode in ("mxfp8", "mxfp4") else 0
        self.wb_slot_bytes += -(-(self.tile_n + self.tile_m) * self.wb_mx_srow // 16) * 16
        if not self.row_pad:  # packed rows: every slot, so every row of every slot, starts on a 128-byte boundary
            self.wb_slot_bytes = -(-self.wb_slot_bytes // 128) * 128
        if self.w_bulk and self.threads < self.tile_n + self.tile_m:
            # one thread issues each slot row's copy (bulk_issue_row)
            raise ValueError(f"{FAMILY}: w_bulk needs at least tile_n + tile_m threads (one per slot row)")
        if self.w_bulk and self.mode == "fp8blk" and 128 % self.tile_n:
            raise ValueError(f"{FAMILY}: blockscale with w_bulk needs tile_n dividing 128 (one weight-scale row)")
        if self.w_bulk and self.mode == "mxfp4" and self.w_bulk < 2:
            raise ValueError(f"{FAMILY}: MXFP4 with w_bulk needs at least 2 slots (round r + 1 is staged "
                             "during round r)")
        if self.w_bulk and self.mode != "mxfp4":
            self.a_buf_bytes = 0  # no staged activation (MXFP4 stages the decoded activation, see stage_bulk_act)
            if self.mode == "mxfp8":
                self.sa_buf_bytes = 0  # the activation's E8M0 bytes are read from the slot
        # mx_n: the reduction buffer (4 partials per warps_k) reuses the activation buffers, idle after
        # the last round's barrier (every wgmma that read them was waited for before it)
        # red_ring = 1 (the .rr kernels, bulk ring): the reduction buffer reuses the ring's slots, which are idle once
        # every warp has read its last round (a barrier before the partials are stored): the smem it saves lets a
        # ring hold a whole K slice at tile_m 16, so no slot is refilled and no round waits for a refill
        self.red_ring = int(red_ring)
        if self.red_ring not in (0, 1) or (self.red_ring and (not self.w_bulk or self.mode not in ("bf16", "fp8", "fp8blk")
                                                            or self.red_bytes > self.w_bulk * self.wb_slot_bytes)):
            raise ValueError(f"{FAMILY}: red_ring must be 0 or 1, and 1 needs a bf16 / fp8 / blockscale bulk ring "
                             "at least as large as the reduction buffer")
        act_and_red = 2 * self.a_buf_bytes + 2 * self.sa_buf_bytes + (0 if self.red_ring else self.red_bytes)
        if self.mx_pipe:
            act_and_red = max(self.a_rounds * (self.a_buf_bytes + self.sa_buf_bytes) + self.sw_stage_bytes,
                              self.red_bytes)
        # a_image: one 8-byte mbarrier per image stage buffer, padded to 16 bytes
        self.img_bar_bytes = -(-8 * self.img_bufs // 16) * 16
        if self.a_image:
            # img_bufs stage buffers of B-tile image, two of weight-scale words, then the stage buffers' mbarriers
            act_and_red = max(self.img_bufs * self.a_rounds * self.a_buf_bytes + 2 * self.sw_stage_bytes
                              + self.img_bar_bytes, self.red_bytes)
        # a_image: bytes of the activation image per tile_m rows and 128 columns (8 k16 steps of bf16 B tiles; mx_e4:
        # 4 k32 steps of e4m3 B tiles and the tile_m tokens' factors)
        self.img_group_bytes = (132 if self.mx_e4 else 256) * self.tile_m
        # mx_e4: the 256 magnitude tables (e2m1_e4m3_lut), one per re-bias byte, 8 bytes each
        self.lut_bytes = 256 * 8 if self.mx_e4 else 0
        self.smem_bytes = (act_and_red + self.lut_bytes
                           + self.zero_bytes + self.w_stages * self.w_stage_bytes
                           + self.w_bulk * (self.wb_slot_bytes + 8) + 5 * 128)
        if self.smem_bytes > SMEM_LIMIT:
            raise ValueError(f"{FAMILY}: {self.smem_bytes} bytes of shared memory exceed {SMEM_LIMIT}")
        self.out_per_thread = -(-self.tile_m * self.tile_n // self.threads)

    @staticmethod
    def from_spec(spec: dict) -> "Config":
        p = dict(spec.get("params") or {})
        unknown = set(p) - {"warps_k", "groups", "l2_prefetch", "min_blocks", "w_stages", "mma", "w_bulk", "mx_n",
                            "a_rounds", "mx_bf16", "a_image", "w_refill", "bound", "mx_e4", "img_bufs",
                            "red_ring", "row_pad"}
        if unknown:  # a misspelt parameter would otherwise build the default kernel under its name
            raise ValueError(f"{FAMILY}: unknown params {sorted(unknown)}")
        return Config(
            op=spec["op"], in_dtype=spec.get("in_dtype") or None,
            out_dtype=spec.get("out_dtype") or "bf16",
            tile_m=spec.get("tile_m", 16), tile_n=spec.get("tile_n", 32),
            tile_k=spec.get("tile_k", 0),
            warps_k=p.get("warps_k", 4), groups=p.get("groups", 1),
            l2_prefetch=p.get("l2_prefetch", 128), min_blocks=p.get("min_blocks", 2),
            w_stages=p.get("w_stages", 0), mma=p.get("mma", "sync"), w_bulk=p.get("w_bulk", 0),
            mx_n=p.get("mx_n", 0), a_rounds=p.get("a_rounds", 0), mx_bf16=p.get("mx_bf16", 0),
            a_image=p.get("a_image", 0), w_refill=p.get("w_refill", 0), bound=p.get("bound", 0),
            mx_e4=p.get("mx_e4", 0), img_bufs=p.get("img_bufs", 2),
            red_ring=p.get("red_ring", 0), row_pad=p.get("row_pad", 1),
        )

    def meta(self) -> dict:
        w_bytes_round = 16 * self.groups * 2 * self.V  # per lane, one round in flight
        return {
            "op": self.op, "mode": self.mode, "in_dtype": self.in_dtype, "out_dtype": self.out_dtype,
            "tile_m": self.tile_m, "tile_n": self.tile_n, "tile_k": self.tile_k,
            "warps_n": self.warps_n, "warps_k": self.warps_k, "groups": self.groups,
            "threads_per_cta": self.threads, "vectors_per_row": self.V,
            "w_bytes_in_flight_per_thread": w_bytes_round,
            "w_bytes_in_flight_per_cta": w_bytes_round * self.threads,
            "smem_bytes": self.smem_bytes, "l2_prefetch": self.l2_prefetch,
            "w_stages": self.w_stages,
            "w_bytes_in_flight_per_cta_smem_ring": max(self.w_stages - 1 + self.w_refill, 0) * self.w_stage_bytes,
            "w_refill": self.w_refill,
            "w_bulk": self.w_bulk, "red_ring": self.red_ring, "row_pad": self.row_pad,
            "w_bytes_in_flight_per_cta_bulk": self.w_bulk * self.tile_n * self.round_k * 16 // self.ve,
            "min_blocks_per_sm": self.min_blocks,
            "mx_n": self.mx_n, "a_rounds": self.a_rounds, "mx_bf16": self.mx_bf16, "a_image": self.a_image,
            "bound": self.bound, "mx_e4": self.mx_e4, "img_bufs": self.img_bufs,
            "mma": (f"wgmma.m64n{4 * self.tile_m}k32 e4m3 (A in registers, MX blocks along N)" if self.mx_n else
                    f"wgmma.m64n{self.tile_m}k32 e4m3 (A in registers, quads re-biased)" if self.mx_e4 else
                    f"wgmma.m64n{self.tile_m}k16 bf16 (A in registers, E8M0 scales folded in)" if self.mx_bf16 else
                    f"wgmma.m64n{self.tile_m}k32 e4m3 (A in registers)" if self.mma == "wgmma" else
                    "mma.sync m16n8k16 " + ("bf16" if self.mode in ("bf16", "mxfp4") else "f16 (e4m3 converted)")),
            "max_split_k": MAX_SPLIT_K,
        }


# ---------------------------------------------------------------------------------------------
# DSL
# ---------------------------------------------------------------------------------------------
def _make_kernel_class(cfg: Config):
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass import Float32, Int32, Int64

    # ------------------------------------------------------------------ inline PTX helpers
    P = ptx.helpers(cfg.l2_prefetch)
    (_asm, bop, band, bshr, bshl, umul, umin, umax, hmul_bf16x2, bits_f32, ldg_w, ldg_a, ldg_u8_p, ldg_u8, ldg_f32, lds_v4, lds_v2f, lds_f32, sts_v4, sts_f32, stg_f32, stg_bf16, ld_f32, ld_f32_plain, mma, e4m3x4_to_f16, e8m0_f32, e8m0_f32_packed, e2m1x8_to_bf16, bf16x2_pow2, b2i, cp_async_16, cp_async_commit, cp_async_wait) = (
        getattr(P, n) for n in ('_asm', 'bop', 'band', 'bshr', 'bshl', 'umul', 'umin', 'umax', 'hmul_bf16x2', 'bits_f32', 'ldg_w', 'ldg_a', 'ldg_u8_p', 'ldg_u8', 'ldg_f32', 'lds_v4', 'lds_v2f', 'lds_f32', 'sts_v4', 'sts_f32', 'stg_f32', 'stg_bf16', 'ld_f32', 'ld_f32_plain', 'mma', 'e4m3x4_to_f16', 'e8m0_f32', 'e8m0_f32_packed', 'e2m1x8_to_bf16', 'bf16x2_pow2', 'b2i', 'cp_async_16', 'cp_async_commit', 'cp_async_wait'))
    sts_b32, fence_proxy_async, wgmma_fence, wgmma_commit, wgmma_wait, smem_desc_kmajor, wgmma_e4m3 = (
        P.sts_b32, P.fence_proxy_async, P.wgmma_fence, P.wgmma_commit, P.wgmma_wait, P.smem_desc_kmajor,
        P.wgmma_e4m3)
    ldg_w8, ldg_b32, ldg_b32_p, e2m1x8_to_e4m3 = P.ldg_w8, P.ldg_b32, P.ldg_b32_p, P.e2m1x8_to_e4m3
    e4m3x4_to_bf16, e4m3x4_nan_bits = P.e4m3x4_to_bf16, P.e4m3x4_nan_bits
    stg_b32 = P.stg_b32
    OUT_BYTES = cfg.out_bytes

    def store_out(addr, v):
        """One output element, the fp32 sum rounded once (round to nearest even) to the kernel's output dtype."""
        if cutlass.const_expr(cfg.out_dtype == "bf16"):
            stg_bf16(addr, v)
        elif cutlass.const_expr(cfg.out_dtype == "fp16"):
            P.stg_f16(addr, v)
        else:
            stg_f32(addr, v)

    def nan_if_any(mult, bits):
        """mx_bf16 MXFP8: the bf16x2 scale factor, made NaN where `bits` (OR of e4m3x4_nan_bits) flags an e4m3
        NaN code: the block's products become NaN, as the oracle's sum does (the bit-move decode would make the
        code a finite 480)."""
        flag = Int32(0) - b2i(band(bits, 0x80808080) != 0)
        return bop("or.b32", mult, band(flag, 0x7FC07FC0))
    def mx_act_decode(v, sb):
        """mx_bf16: one raw 16-byte activation chunk (words v[0..3]) with its block's E8M0 byte sb -> the bf16 pair
        words of the B tiles, A * 2^48 (exact, as the mma.sync kernels' store_a), keyed (raw word q, pair i).
        MXFP4: (q * 2^-126) * 2^126 * 2^(b - 79), pairs 0..3 of e2m1x8_to_bf16. MXFP8: (q * 2^-120) * 2^120 *
        2^(b - 79), pairs 0..1 of e4m3x4_to_bf16; a chunk holding an e4m3 NaN code gets a NaN factor."""
        if mode == "mxfp8":
            nb = e4m3x4_nan_bits(v[0])
            for q in range(1, 4):
                nb = bop("or.b32", nb, e4m3x4_nan_bits(v[q]))
            mult = nan_if_any(bf16x2_pow2(sb + 48), nb)
            return {(q, i_): hmul_bf16x2(hmul_bf16x2(d, 0x7B807B80), mult)
                    for q in range(4) for i_, d in enumerate(e4m3x4_to_bf16(v[q]))}
        mult = bf16x2_pow2(sb + 48)
        return {(q, i_): hmul_bf16x2(hmul_bf16x2(d, 0x7E807E80), mult)
                for q in range(4) for i_, d in enumerate(e2m1x8_to_bf16(v[q]))}

    def act_word_offset(j, m, q, i_):
        """mx_bf16: byte offset (from the first 128-column group) of pair word i_ of raw word q of 16-byte activation
        chunk j of token m in the B tiles (MXFP8: chunk j is half j % 2 of block j // 2)."""
        if MX8:
            return mxb8_act_word_offset(j // 2, m, 4 * (j % 2) + q, i_, BSTEP)
        return mxb_act_word_offset(j, m, q, i_, BSTEP)

    mbar_init, fence_mbar_init, mbar_arrive_expect_tx, mbar_wait, bulk_g2s = (
        P.mbar_init, P.fence_mbar_init, P.mbar_arrive_expect_tx, P.mbar_wait, P.bulk_g2s)
    lds_u8 = P.lds_u8
    e2m1x8_to_e4m3_lut, e2m1_e4m3_lut, e8m0_quad_rebias = P.e2m1x8_to_e4m3_lut, P.e2m1_e4m3_lut, P.e8m0_quad_rebias
    lds_v2, fmul_exact = P.lds_v2, P.fmul_exact
    TWO_M6 = 2.0 ** -6                  # mx_e4: the factors undo the tables' 2^6 (e2m1_e4m3_lut)
    cp_async_4_zfill, cp_async_mbar_arrive = P.cp_async_4_zfill, P.cp_async_mbar_arrive

    # ------------------------------------------------------------------ static configuration
    mode = cfg.mode
    TM, TN, G, WN, WK, V = cfg.tile_m, cfg.tile_n, cfg.groups, cfg.warps_n, cfg.warps_k, cfg.V
    THREADS = cfg.threads
    VE = cfg.ve                   # elements per 16-byte vector
    A_STORE_BYTES = {"bf16": 2, "mxfp4": 1}.get(mode, 1)  # bytes per storage element of a
    TK = cfg.tile_k
    MT = TM // 8                  # n8 token tiles
    STRIDE = cfg.a_row_stride
    ABUF = cfg.a_buf_bytes
    SABUF = cfg.sa_buf_bytes
    CH = cfg.a_chunks_per_thread
    NCH = cfg.a_chunks
    CPR = NCH // TM               # raw chunks per activation row per round
    SAE = cfg.sa_entries
    SAPT = cfg.sa_per_thread
    RED_STRIDE = cfg.red_stride
    WS = cfg.w_stages                 # smem weight ring depth (0: register double buffer)
    WSTAGE = cfg.w_stage_bytes
    RF = cfg.w_refill                 # 1: a slot is refilled right after it is read (Config.w_refill)
    WS_AHEAD = WS - 1 + RF            # rounds a thread has requested beyond the one it computes
    WB = cfg.w_bulk                   # bulk-copy weight ring depth in rounds (0: off)
    WB_ROW, WB_SLOT = cfg.wb_row_bytes, cfg.wb_slot_bytes
    WB_SC, WB_NKB = (cfg.tile_n + cfg.tile_m) * cfg.wb_row_bytes, cfg.wb_nkb  # blockscale scales in a slot
    WB_SA = WB_SC + cfg.wb_sa_offset
    WB_MXS = cfg.wb_mx_srow           # MX: bytes per E8M0 scale row in a slot (0: not MX bulk)
    WB_MXW = cfg.round_k // 128       # MX: 4-byte scale words per row per round
    WB_MXN = (TN + TM) * WB_MXW if WB and mode in ("mxfp8", "mxfp4") else 0   # MX: scale words per round
    # bulk lanes + (blockscale) one warp's cp.async lanes + (MXFP4) every thread's cp.async arrival
    WB_ARRIVALS = TN + TM + (32 if WB_NKB else 0) + (THREADS if WB_MXN else 0)
    NWARPS = THREADS // 32
    OPT = cfg.out_per_thread
    WG = cfg.mma == "wgmma"
    BSTEP = getattr(cfg, "b_step_bytes", 0)   # smem bytes of one (warpgroup, k32 step) B tile
    kind = "bf16" if mode in ("bf16", "mxfp4") and cfg.in_dtype != "fp16" else "f16"
    LDS_PER_VEC = VE * _SMEM_EB // 16   # 16-byte smem reads per vector of activation
    STEPS = VE // 4                     # k16 mma steps per vector pair (rows g, g+8)
    NW = G * 2 * V * 4                  # weight registers per round
    MXB = cfg.mx_bf16 == 1              # MXFP4 through bf16 wgmma, scales folded in (Config.mx_bf16)
    WGMX = WG and mode in ("mxfp8", "mxfp4") and not MXB  # MX through wgmma (two masked B tiles per step)
    WVE = cfg.wve                       # weight values per lane chunk
    MXN = cfg.mx_n == 1                 # MXFP4 blocks along wgmma's N (Config.mx_n)
    MXP = MXN or MXB                    # the staged-activation + cp.async-ring pipeline of main_mxn
    MX8 = MXB and mode == "mxfp8"       # mx_bf16 MXFP8: a lane's unit is a 32-byte block
    BND = cfg.bound                     # measurement-only bounds (Config.bound)
    AIMG = cfg.a_image == 1             # the activation decoded once per call into an image (Config.a_image)
    KTI = TK // 128 * cfg.img_group_bytes   # a_image: image bytes of one k-tile (tile_m rows)
    MXE = cfg.mx_e4 == 1                # e4m3 k32 wgmmas on quads re-biased to their largest block (Config.mx_e4)
    GRP = cfg.img_group_bytes           # a_image: image bytes of one 128-column group (tile_m rows)
    IB = cfg.img_bufs                   # a_image: image stage buffers (Config.img_bufs)
    SWB = cfg.sw_stage_bytes            # a_image: bytes of one stage's weight-scale words
    UV = cfg.unit_vectors               # 16-byte vectors per lane unit (MX8: 2)
    NB = 4 * TM if MXN else TM          # wgmma N
    NPART = cfg.red_parts               # partial sums per output in the final reduction
    PR = cfg.a_rounds                   # mx_n: rounds per activation stage
    MXW = cfg.round_k // 128            # mx_n: E8M0 words (4-block quads) per weight row and round
    SWE = PR * TN * MXW                 # mx_n: staged weight-scale words per stage
    SWPT = -(-SWE // THREADS) if MXP else 0                            # mx_n: of them per thread
    CHS = -(-(PR * cfg.a_chunks) // THREADS) if MXP else 0            # mx_n: raw chunks per thread per stage
    SPTS = -(-(PR * cfg.sa_entries) // THREADS) if MXP else 0         # mx_n: activation scales per thread
    if WGMX and mode == "mxfp4" and not MXN:
        NW = 2 * V * 2                  # 8-byte fp4 chunks
    if MXP:
        NW = G * 2 * V * 4 * UV         # rows g / g+8 (of each group) x V lane units (one 32-block each)
        NWS = G * 2 * V                 # their E8M0 bytes
    elif WGMX:
        NWS = 2 * (V // 2)              # rows g / g+8 x the k-tile's 2V e8m0 bytes as words
    elif mode == "mxfp8":
        NWS = G * V                     # e8m0 bytes (row g/g+8 x block A/B) packed per vector
    elif mode == "mxfp4":
        NWS = G * 2 * V
    elif mode == "fp8blk":
        NWS = G * (V // 2)
    else:
        NWS = 1

    # ptxas register budget: (65536 / threads / min_blocks); min_blocks > 1 needs an explicit
    # carveout (otherwise the DSL queries the device at compile time)
    MIN_BLOCKS = {}
    if cfg.min_blocks > 1 or cfg.w_stages or cfg.w_bulk:
        MIN_BLOCKS = dict(min_blocks_per_mp=cfg.min_blocks, preferred_smem_carveout=100)

    class SplitKDecodeGemm:
        # -------------------------------------------------------------- loads of one round
        @cute.jit
        def load_w(self, wnext, snext, w, rows, nb, kt, kend, K, nkb, w_scale, t,
                   weights=True, scales=True, slot=None, tid=None):
            """Weights (+ weight scales) of k-tile kt for this lane into wnext / snext; with
            `slot` (smem ring mode) the weight vectors go by cp.async to this thread's 16-byte
            cells of that ring slot instead (cell of vector j: slot + (j * THREADS + tid) * 16,
            read back only by the same thread, so no barrier orders them).

            Not predicated: a vector at or beyond the end of the slice (kend, a multiple of the
            vector) is re-read from the slice's last vector of the row (cache hit); the
            activation of those columns is zero in shared memory, so it adds nothing."""
            if cutlass.const_expr(MXN):
                self.load_w_mxn(wnext, snext, w, rows, kt, kend, K, w_scale, t, weights, scales, slot, tid)
                return
            for gi in cutlass.range_constexpr(G):
                for h in cutlass.range_constexpr(2):
                    row = rows[gi * 2 + h]
                    if cutlass.const_expr(WGMX and scales and not MXN):
                        # the k-tile's 2V block scales of this row, V / 2 words (K % 128 == 0); words
                        # past the row end re-read its last word (their activation is zero)
                        for q in cutlass.range_constexpr(V // 2):
                            wi_ = cutlass.min(kt * (V // 2) + q, K // 128 - 1)
                            snext[h * (V // 2) + q] = ldg_b32(w_scale + Int64(row) * (K // 32) + Int64(wi_) * 4)
                    for u in cutlass.range_constexpr(V if weights else 0):
                        kel = cutlass.max(cutlass.min(kt * TK + lane_vector_col(u, t, WVE), kend - WVE), 0)
                        addr = w + Int64(row) * (Int64(K) * 16 // VE) + Int64(kel) * 16 // VE
                        vec = (gi * 2 + h) * V + u
                        if cutlass.const_expr(WGMX and mode == "mxfp4"):
                            v = ldg_w8(addr)
                            for j in cutlass.range_constexpr(2):
                                wnext[vec * 2 + j] = v[j]
                        elif cutlass.const_expr(slot is not None):
                            cp_async_16(slot + (vec * THREADS + tid) * 16, addr)
                        else:
                            v = ldg_w(addr)
                            for j in cutlass.range_constexpr(4):
                                wnext[vec * 4 + j] = v[j]
                        if cutlass.const_expr(mode == "mxfp8" and not WGMX):
                            # blocks of lanes 0,1 (q = 0) and 2,3 (q = 1) of this vector; the four
                            # bytes (h, q) of (group, vector) are packed into one register
                            blk = (kt * TK + u * 64) // 32
                            for q in cutlass.range_constexpr(2):
                                bq = cutlass.max(cutlass.min(blk + q, kend // 32 - 1), 0)
                                byte = ldg_u8(w_scale + Int64(row) * (K // 32) + Int64(bq))
                                sh = 8 * (2 * h + q)
                                if cutlass.const_expr(h == 0 and q == 0):
                                    snext[gi * V + u] = byte
                                else:
                                    snext[gi * V + u] = snext[gi * V + u] | bshl(byte, sh)
                        if cutlass.const_expr(mode == "mxfp4" and not WGMX):
                            snext[(gi * 2 + h) * V + u] = ldg_u8(
                                w_scale + Int64(row) * (K // 32) + Int64(kel // 32))
            if cutlass.const_expr(mode == "fp8blk" and scales):
                for gi in cutlass.range_constexpr(G):
                    for j in cutlass.range_constexpr(V // 2):
                        kb = cutlass.max(cutlass.min((kt * TK) // 128 + j, nkb - 1), 0)
                        snext[gi * (V // 2) + j] = ld_f32(w_scale + (Int64(nb[gi]) * nkb + kb) * 4)

        @cute.jit
        def load_w_mxn(self, wnext, snext, w, rows, kt, kend, K, w_scale, t, weights, scales, slot, tid):
            """mx_n: this lane's 16-byte chunks (one 32-block each) of rows g / g+8 for k-tile kt into
            wnext (or by cp.async into its ring cells, as load_w) and their E8M0 bytes into snext. A chunk
            at or past the slice end re-reads the slice's last block, and its scale: it meets zero activation."""
            for rr_ in cutlass.range_constexpr(2 * G):   # rows g / g + 8 of each 16-row group
                row = rows[rr_]
                for u in cutlass.range_constexpr(V):
                    # the quad's 4 blocks start at cb (K % 128 == 0, so kend is a multiple of 128 and a quad is
                    # either inside the slice or, clamped, the slice's last quad again)
                    cb = cutlass.max(cutlass.min(kt * TK + 128 * u, kend - 128), 0)
                    vec = rr_ * V + u
                    # cb >= 0: shifts, not (signed) divisions
                    sw_word = w_scale + Int64(row) * (K // 32) + Int64(cb >> 5)
                    if cutlass.const_expr(weights):
                        if cutlass.const_expr(MX8):   # one byte per value: the unit is 32 bytes
                            addr = w + Int64(row) * Int64(K) + Int64(cb + 32 * t)
                        else:
                            addr = w + Int64(row) * (Int64(K) >> 1) + Int64((cb >> 1) + 16 * t)
                        for h2 in cutlass.range_constexpr(UV):
                            cell = vec * UV + h2
                            if cutlass.const_expr(slot is not None):
                                # (the quad's E8M0 words are staged with the activation: stage_mxn_issue)
                                cp_async_16(slot + (cell * THREADS + tid) * 16, addr + Int64(16 * h2))
                            else:
                                v = ldg_w(addr + Int64(16 * h2))
                                for j in cutlass.range_constexpr(4):
                                    wnext[cell * 4 + j] = v[j]
                    if cutlass.const_expr(scales):
                        snext[vec] = ldg_u8(sw_word + Int64(t))

        @cute.jit
        def issue_bulk(self, cx, r):
            """w_bulk: round r's TN weight rows and TM raw activation rows -> ring slot r % WB, one
            bulk copy per row, row i by lane i // NWARPS of warp i % NWARPS (bulk_issue_row): every
            warp issues a few rows. Why spread: a bulk copy takes its operands from uniform registers, so a
            warp issues its lanes' copies one after the other; with warp 0 issuing the first rounds'
            ~100 copies alone, 25-29% of the stall samples of the N = 2048 kernels sat at the barrier
            that waited for it (ncu, 2026-11-30). The lane of each of the TN + TM rows arrives on the slot's mbarrier
            (initialized for TN + TM) announcing its bytes; weight rows past N re-read row N - 1 (never
            stored), activation rows past M copy nothing. Only the slice's columns are copied: slot
            bytes past them are stale and the readers mask them."""
            k0 = (cx.kt_begin + r * WK) * TK
            nbytes = (cutlass.min(cx.kend - k0, WK * TK) * 16) // VE
            slot = cx.sW + (r % WB) * WB_SLOT
            bar = cx.sBar + (r % WB) * 8
            rl = cx.bulk_row
            if rl < TN:
                row = cutlass.min(cx.n_cta + rl, cx.N - 1)
                mbar_arrive_expect_tx(bar, nbytes)
                bulk_g2s(slot + rl * WB_ROW, cx.w + Int64(row) * (Int64(cx.K) * 16 // VE)
                         + Int64(k0) * 16 // VE, nbytes, bar)
            elif rl < TN + TM:
                m = rl - TN
                if m < cx.m_rows:
                    mbar_arrive_expect_tx(bar, nbytes)
                    bulk_g2s(slot + (TN + m) * WB_ROW,
                             cx.a_tile + Int64(m * cx.lda_b) + Int64(k0) * 16 // VE, nbytes, bar)
                else:
                    mbar_arrive_expect_tx(bar, 0)
            if cutlass.const_expr(WB_NKB > 0):
                # blockscale: the round's weight scales (row block nb) and activation scales, 4-byte
                # cp.async each (zeros past K / M), tracked by one noinc arrival per lane of warp
                # r % NWARPS
                if cx.tid // 32 == r % NWARPS:
                    kb0 = k0 // 128
                    for i in cutlass.range_constexpr(-(-(WB_NKB * (1 + TM)) // 32)):
                        e = cx.tid % 32 + 32 * i
                        if e < WB_NKB:
                            kb = kb0 + e
                            cp_async_4_zfill(slot + WB_SC + e * 4,
                                             cx.w_scale + (Int64(cx.nb0) * cx.nkb + cutlass.min(kb, cx.nkb - 1)) * 4,
                                             b2i(kb < cx.nkb))
                        elif e < WB_NKB * (1 + TM):
                            e2 = e - WB_NKB
                            kbl = e2 // TM
                            m = e2 - kbl * TM
                            kb = kb0 + kbl
                            cp_async_4_zfill(slot + WB_SA + e2 * 4,
                                             cx.a_scale + (Int64(cutlass.min(m, cx.m_rows - 1)) * cx.nkb
                                                           + cutlass.min(kb, cx.nkb - 1)) * 4,
                                             b2i(kb < cx.nkb) & b2i(m < cx.m_rows))
                    cp_async_mbar_arrive(bar)
            if cutlass.const_expr(WB_MXN > 0):
                self.issue_mx_scales(cx, k0, slot, bar)

        @cute.jit
        def issue_mx_scales(self, cx, k0, slot, bar):
            """w_bulk, MXFP4: the round's E8M0 scale bytes (weight rows, then activation rows; slot layout
            of read_bulk / act_bulk) as 4-byte cp.async words spread over every thread, each thread's
            copies tracked by one noinc arrival on the slot's mbarrier. Words past the slice (kend, a
            multiple of 128) and activation rows past M are zero-filled, so no stale byte becomes an
            inf / NaN factor; weight rows past N re-read row N - 1 (never stored)."""
            kw0 = k0 // 128
            for i in cutlass.range_constexpr(-(-WB_MXN // THREADS)):
                e = cx.tid + i * THREADS
                if e < WB_MXN:
                    rr = e // WB_MXW
                    kw = kw0 + e - rr * WB_MXW
                    valid = b2i(kw * 128 < cx.kend)   # past the slice: zeros (finite factors)
                    kwc = cutlass.min(kw, cx.K // 128 - 1)
                    src = cx.w_scale + Int64(cutlass.min(cx.n_cta + rr, cx.N - 1)) * (cx.K // 32)
                    if rr >= TN:
                        valid = valid & b2i(rr - TN < cx.m_rows)
                        src = cx.a_scale + Int64(cutlass.min(rr - TN, cx.m_rows - 1)) * (cx.K // 32)
                    cp_async_4_zfill(slot + WB_SC + rr * WB_MXS + (e - rr * WB_MXW) * 4, src + Int64(kwc) * 4, valid)
            cp_async_mbar_arrive(bar)

        @cute.jit
        def read_bulk(self, cx, r, wcur, scur):
            """w_bulk: wait for round r's slot and read this lane's weight vectors (the layout of
            load_w) from it. Returns the slot and per vector u an all-ones / zero mask: vectors at or
            past the slice end are zeroed (their slot bytes are stale), in the weights here and in the
            activation fragments (act_bulk) with the same k columns. MXFP4: the raw weights are kept and
            the vector's E8M0 scale byte goes to scur; the mask is applied to the decoded scale factors
            instead (one AND per vector: any e2m1 bits decode to a finite value, times 0 is 0)."""
            mbar_wait(cx.sBar + (r % WB) * 8, (r // WB) % 2)
            slot = cx.sW + (r % WB) * WB_SLOT
            kt = cx.kt_begin + r * WK + cx.wk
            keeps = [Int32(0) - b2i(kt * TK + lane_vector_col(u, cx.t, VE) < cx.kend) for u in range(V)]
            for gi in cutlass.range_constexpr(G):
                for h in cutlass.range_constexpr(2):
                    rl = (cx.wn * G + gi) * 16 + h * 8 + cx.g
                    for u in cutlass.range_constexpr(V):
                        col = cx.wk * TK + lane_vector_col(u, cx.t, VE)
                        v = lds_v4(slot + rl * WB_ROW + (col * 16) // VE)
                        vec = (gi * 2 + h) * V + u
                        if cutlass.const_expr(mode == "mxfp4"):
                            scur[vec] = lds_u8(slot + WB_SC + rl * WB_MXS + col // 32)
                            for j in cutlass.range_constexpr(4):
                                wcur[vec * 4 + j] = v[j]
                        else:
                            for j in cutlass.range_constexpr(4):
                                wcur[vec * 4 + j] = band(v[j], keeps[u])
                        if cutlass.const_expr(mode == "mxfp8"):
                            # the load_w packing: byte 2h + q of scur[gi * V + u] = row g + 8h, block q of
                            # the vector pair (lanes 0,1: q = 0, lanes 2,3: q = 1); zeros past the slice
                            blk = (cx.wk * TK + u * 64) // 32
                            for q in cutlass.range_constexpr(2):
                                byte = lds_u8(slot + WB_SC + rl * WB_MXS + blk + q)
                                if cutlass.const_expr(h == 0 and q == 0):
                                    scur[gi * V + u] = byte
                                else:
                                    scur[gi * V + u] = scur[gi * V + u] | bshl(byte, 8 * (2 * h + q))
            return slot, keeps

        @cute.jit
        def act_bulk(self, cx, slot, keeps, u, mt):
            """w_bulk: the B fragment of vector u, token tile mt, from the slot's raw activation rows
            (token g + 8 mt; rows past M are zeros), masked like the weights; fp8 converted to f16."""
            col = cx.wk * TK + lane_vector_col(u, cx.t, VE)
            raw = lds_v4(slot + (TN + cx.g + 8 * mt) * WB_ROW + (col * 16) // VE)
            raw = [band(x, keeps[u]) for x in raw]
            if cutlass.const_expr(mode == "bf16"):
                return raw
            act = []
            for q in cutlass.range_constexpr(4):
                act += e4m3x4_to_f16(raw[q])
            return act

        @cute.jit
        def stage_bulk_act(self, cx, r, abuf):
            """w_bulk, MXFP4: wait for round r's slot and stage its activation, decoded and scaled (store_a),
            into abuf. Why not decode in every warp like the fp8 fragments: the e2m1 decode is integer work
            (half-rate pipe on Hopper), and the WN warps of a k-tile would each decode the same activation -
            staged, each value is decoded once per CTA and rows past M cost nothing but zero stores.
            Chunks (32 values = one E8M0 block) past the slice are staged as zeros, their scale too."""
            mbar_wait(cx.sBar + (r % WB) * 8, (r // WB) % 2)
            slot = cx.sW + (r % WB) * WB_SLOT
            k0 = (cx.kt_begin + r * WK) * TK
            for i in cutlass.range_constexpr(CH):
                c = cx.tid + i * THREADS
                m = cutlass.min(c // CPR, TM - 1)
                j = c - (c // CPR) * CPR
                keep = Int32(0) - b2i(k0 + j * VE < cx.kend)
                raw = lds_v4(slot + (TN + m) * WB_ROW + j * 16)
                for q in cutlass.range_constexpr(4):
                    cx.anext[i * 4 + q] = band(raw[q], keep)
                cx.asnext[i] = band(lds_u8(slot + WB_SC + (TN + m) * WB_MXS + j), keep)
            self.store_a(cx.anext, cx.asnext, abuf, None, cx.m_rows, cx.tid)

        @cute.jit
        def load_a(self, anext, asnext, a, a_scale, lda_b, m_rows, k_r, kend, K, nkb, tid):
            """Raw activation chunks (+ activation scales) of the round starting at column k_r."""
            for i in cutlass.range_constexpr(CH):
                c = tid + i * THREADS
                m = c // CPR
                j = c - m * CPR
                el = k_r + j * VE
                pred = b2i(m < m_rows) & b2i(el < kend) & b2i(c < NCH)
                # 32-bit offset inside the tile (the adapter bounds lda and K)
                v = ldg_a(a + Int64(m * lda_b + el * 16 // VE), pred)
                for q in cutlass.range_constexpr(4):
                    anext[i * 4 + q] = v[q]
                if cutlass.const_expr(mode == "mxfp4" and not WGMX):
                    asnext[i] = ldg_u8_p(a_scale + Int64(m) * (K // 32) + Int64(el // 32), pred)
            if cutlass.const_expr(mode == "fp8blk" or mode == "mxfp8" or WGMX):
                for i in cutlass.range_constexpr(SAPT):
                    e = tid + i * THREADS
                    col = e // TM
                    m = e - col * TM
                    if cutlass.const_expr(mode == "fp8blk"):
                        kb = k_r // 128 + col
                        p = b2i(m < m_rows) & b2i(kb < nkb) & b2i(e < SAE)
                        asnext[i] = ldg_f32(a_scale + (Int64(m) * nkb + kb) * 4, p)
                    else:
                        blk = k_r // 32 + col
                        p = b2i(m < m_rows) & b2i(blk < K // 32) & b2i(e < SAE)
                        asnext[i] = e8m0_f32(ldg_u8_p(a_scale + Int64(m) * (K // 32) + Int64(blk), p))

        @cute.jit
        def store_a(self, anext, asnext, abuf, sabuf, m_rows, tid):
            """Convert the raw activation of a round and store it into shared memory (rows at or
            beyond M are stored as zeros without converting them)."""
            for i in cutlass.range_constexpr(CH):
                c = tid + i * THREADS
                m = c // CPR
                j = c - m * CPR
                dst = abuf + m * STRIDE + j * (VE * _SMEM_EB)
                if cutlass.const_expr(WG):
                    # raw chunk j = k-tile columns 16 v16 .. of warpgroup wg; its word q is the
                    # A-fragment word (half hh = q // 2, register a0/a2 by q % 2) of lane t = v16 % 4
                    # for vector u = v16 // 4, i.e. k32 step 2u + hh at k 16 (q % 2) + 4t
                    if c < NCH:
                        if cutlass.const_expr(MXN):
                            # raw chunk j = 32-block j of the round; word q -> step 4 (j // 4) + q
                            for q in cutlass.range_constexpr(4):
                                d = e2m1x8_to_e4m3(anext[i * 4 + q])
                                for w_ in cutlass.range_constexpr(2):
                                    sts_b32(abuf + mxn_act_word_offset(j, m, q, w_, TM, BSTEP), d[w_])
                        elif cutlass.const_expr(mode == "mxfp4"):
                            # 32 values = lane chunks 2j, 2j + 1 of 8 bytes; word hh of a chunk decodes
                            # into the even (w = 0) and odd (w = 1) values, as the weights do
                            for q in cutlass.range_constexpr(4):
                                d = e2m1x8_to_e4m3(anext[i * 4 + q])
                                for w_ in cutlass.range_constexpr(2):
                                    jc, hh = fp4_raw_word_chunk(j, q)
                                    sts_b32(abuf + wg_act_word_offset(jc, m, hh, w_, TK, V, BSTEP, cfg.wg_variants),
                                            d[w_])
                        else:
                            for q in cutlass.range_constexpr(4):
                                sts_b32(abuf + wg_act_word_offset(j, m, q // 2, q % 2, TK, V, BSTEP, cfg.wg_variants),
                                        anext[i * 4 + q])
                elif c < NCH:
                    if cutlass.const_expr(mode == "bf16"):
                        sts_v4(dst, [anext[i * 4 + q] for q in range(4)])
                    elif m < m_rows:
                        if cutlass.const_expr(mode == "mxfp4"):
                            # A * 2^48: (q * 2^-126) * 2^126 * 2^(b - 127 + 48); both factors finite
                            mult = bf16x2_pow2(asnext[i] + 48)
                            for q in cutlass.range_constexpr(4):
                                d = e2m1x8_to_bf16(anext[i * 4 + q])
                                d = [hmul_bf16x2(hmul_bf16x2(x, 0x7E807E80), mult) for x in d]
                                sts_v4(dst + 16 * q, d)
                        else:
                            h = []
                            for q in cutlass.range_constexpr(4):
                                h += e4m3x4_to_f16(anext[i * 4 + q])
                            sts_v4(dst, h[0:4])
                            sts_v4(dst + 16, h[4:8])
                    else:
                        for q in cutlass.range_constexpr(VE * _SMEM_EB // 16):
                            sts_v4(dst + 16 * q, [Int32(0)] * 4)
            if cutlass.const_expr(mode == "fp8blk" or mode == "mxfp8" or WGMX):
                for i in cutlass.range_constexpr(SAPT):
                    e = tid + i * THREADS
                    if e < SAE:
                        sts_f32(sabuf + e * 4, asnext[i])
            if cutlass.const_expr(WG):
                fence_proxy_async()  # the wgmmas read these bytes through the async proxy

        @cute.jit
        def ring_refill(self, cx, rr, wk, t, tid):
            """Round rr's weight vectors into its ring slot, one cp.async group (empty past the slice)."""
            if rr < cx.R:
                self.load_w(None, None, cx.w, cx.rows, cx.nb, cx.kt_begin + rr * WK + wk, cx.kend,
                            cx.K, cx.nkb, cx.w_scale, t, scales=False,
                            slot=cx.sW + (rr % WS) * WSTAGE, tid=tid)
            cp_async_commit()

        @cute.jit
        def round_(self, cx, r, wcur, scur, wnext, snext, abuf, sabuf, abuf_n, sabuf_n):
            """Round r: weights wcur (in registers) x activation abuf (smem); meanwhile the weights
            of round r+1 go to wnext and its activation to abuf_n (one barrier at the end)."""
            acc, tmpb, anext, asnext = cx.acc, cx.tmpb, cx.anext, cx.asnext
            t, wk, tid = cx.t, cx.wk, cx.tid
            # next round: weights and raw activation in flight while this round computes
            if cutlass.const_expr(WB > 0):
                # bulk ring: round r + WB - 1 -> the slot of round r - 1, whose readers all passed the
                # barrier that ended round r - 1; the blockscale weight scales of round r + 1 -> registers
                if (r >= 1) & (r + WB - 1 < cx.R):
                    self.issue_bulk(cx, r + WB - 1)
            elif cutlass.const_expr(WS > 0):
                # ring: round r + WS - 1 -> its slot (one commit group per round, empty past
                # the slice), the blockscale weight scales of round r + 1 -> registers
                self.ring_refill(cx, r + WS - 1, wk, t, tid)
                self.load_w(None, snext, cx.w, cx.rows, cx.nb, cx.kt_begin + (r + 1) * WK + wk, cx.kend,
                            cx.K, cx.nkb, cx.w_scale, t, weights=False)
            else:
                self.load_w(wnext, snext, cx.w, cx.rows, cx.nb, cx.kt_begin + (r + 1) * WK + wk, cx.kend,
                            cx.K, cx.nkb, cx.w_scale, t)
            if cutlass.const_expr(WB == 0):
                self.load_a(anext, asnext, cx.a_tile, cx.a_scale, cx.lda_b, cx.m_rows,
                            (cx.kt_begin + (r + 1) * WK) * TK, cx.kend, cx.K, cx.nkb, tid)
            bslot, bkeeps = None, None
            if cutlass.const_expr(WB > 0):
                bslot, bkeeps = self.read_bulk(cx, r, wcur, scur)
                if cutlass.const_expr(WB_NKB > 0):
                    sabuf = bslot + WB_SA  # blockscale activation scales (sabuf layout)
            if cutlass.const_expr(WS > 0):
                # this thread's copies of round r have landed (at most WS - 1 newer groups pending)
                cp_async_wait(WS - 1)
                slot_r = cx.sW + (r % WS) * WSTAGE
                for vec in cutlass.range_constexpr(NW // 4):
                    v = lds_v4(slot_r + (vec * THREADS + tid) * 16)
                    for j in cutlass.range_constexpr(4):
                        wcur[vec * 4 + j] = v[j]

            if cutlass.const_expr(MXN):
                self.round_wgmma_mxn(cx, wcur, scur, abuf, sabuf)
            elif cutlass.const_expr(WGMX):
                self.round_wgmma_mx(cx, wcur, scur, abuf, sabuf)
            elif cutlass.const_expr(WG):
                self.round_wgmma(cx, wcur, scur, abuf, sabuf)
            for u in cutlass.range_constexpr(0 if WG else V):
                # weight fragments (A operand) of rows g and g+8 of every group, converted
                wfs = []
                for gi in cutlass.range_constexpr(G):
                    wf = []
                    for h in cutlass.range_constexpr(2):
                        base = ((gi * 2 + h) * V + u) * 4
                        raw = [wcur[base + j] for j in range(4)]
                        if cutlass.const_expr(mode == "bf16"):
                            wf.append(raw)
                        elif cutlass.const_expr(mode == "mxfp4"):
                            mult = bf16x2_pow2(scur[(gi * 2 + h) * V + u] + 78)
                            if cutlass.const_expr(WB > 0):
                                mult = band(mult, bkeeps[u])   # vectors past the slice (read_bulk)
                            d = []
                            for q in cutlass.range_constexpr(4):
                                d += [hmul_bf16x2(x, mult) for x in e2m1x8_to_bf16(raw[q])]
                            wf.append(d)
                        else:
                            d = []
                            for q in cutlass.range_constexpr(4):
                                d += e4m3x4_to_f16(raw[q])
                            wf.append(d)
                    wfs.append(wf)
                for mt in cutlass.range_constexpr(MT):
                    # activation fragments (B operand) of vector u, token tile mt
                    addr = abuf + cx.a_lane + mt * 8 * STRIDE + u * 4 * VE * _SMEM_EB
                    act = []
                    if cutlass.const_expr(WB > 0 and mode != "mxfp4"):
                        act = self.act_bulk(cx, bslot, bkeeps, u, mt)
                    elif cutlass.const_expr(mode != "mxfp8"):
                        for q in cutlass.range_constexpr(LDS_PER_VEC):
                            act += lds_v4(addr + 16 * q)
                    for gi in cutlass.range_constexpr(G):
                        wf = wfs[gi]
                        ab = (gi * MT + mt) * 4
                        if cutlass.const_expr(mode == "mxfp8"):
                            # q = 0: block of lanes t < 2, q = 1: block of lanes t >= 2; the lanes
                            # of the other block read their activation fragment from the zero row
                            blk_l = (wk * TK + u * 64) // 32
                            for q in cutlass.range_constexpr(2):
                                fq = []
                                if cutlass.const_expr(WB > 0):
                                    fq = [band(x, cx.mx_keep[q]) for x in act]
                                else:
                                    lane_off = cx.lane_a[mt] if q == 0 else cx.lane_b[mt]
                                    for j in cutlass.range_constexpr(LDS_PER_VEC):
                                        fq += lds_v4(abuf + lane_off + u * 4 * VE * _SMEM_EB + 16 * j)
                                tq = [Float32(0.0)] * 4
                                for s in cutlass.range_constexpr(STEPS):
                                    av = [wf[0][2 * s], wf[1][2 * s], wf[0][2 * s + 1], wf[1][2 * s + 1]]
                                    tq = mma(kind, av, [fq[2 * s], fq[2 * s + 1]], tq)
                                # 2^(w-127) * 2^(a-127); rows g / g+8, tokens 2t / 2t+1
                                if cutlass.const_expr(WB > 0):
                                    sa2 = [e8m0_f32(lds_u8(bslot + WB_SC + (TN + mt * 8 + 2 * t + c) * WB_MXS
                                                           + blk_l + q)) for c in range(2)]
                                else:
                                    sa2 = lds_v2f(sabuf + ((blk_l + q) * TM + mt * 8 + 2 * t) * 4)
                                for h in cutlass.range_constexpr(2):
                                    sw = e8m0_f32_packed(scur[gi * V + u], 2 * h + q)
                                    for c in cutlass.range_constexpr(2):
                                        acc[ab + 2 * h + c] = acc[ab + 2 * h + c] + tq[2 * h + c] * (sw * sa2[c])
                        elif cutlass.const_expr(mode == "fp8blk"):
                            # one 128-wide scale block = vectors u (even) and u + 1
                            tb_ = (gi * MT + mt) * 4
                            if cutlass.const_expr(u % 2 == 0):
                                tq = [Float32(0.0)] * 4
                            else:
                                tq = [tmpb[tb_ + c] for c in range(4)]
                            for s in cutlass.range_constexpr(STEPS):
                                av = [wf[0][2 * s], wf[1][2 * s], wf[0][2 * s + 1], wf[1][2 * s + 1]]
                                tq = mma(kind, av, [act[2 * s], act[2 * s + 1]], tq)
                            if cutlass.const_expr(u % 2 == 0):
                                for c in cutlass.range_constexpr(4):
                                    tmpb[tb_ + c] = tq[c]
                            else:
                                kbl = (wk * TK) // 128 + u // 2
                                sa2 = lds_v2f(sabuf + (kbl * TM + mt * 8 + 2 * t) * 4)
                                if cutlass.const_expr(WB > 0):
                                    sw = lds_f32(bslot + WB_SC + kbl * 4)
                                else:
                                    sw = scur[gi * (V // 2) + u // 2]
                                for c in cutlass.range_constexpr(4):
                                    acc[ab + c] = acc[ab + c] + tq[c] * (sw * sa2[c % 2])
                        else:
                            cc = [acc[ab + c] for c in range(4)]
                            for s in cutlass.range_constexpr(STEPS):
                                av = [wf[0][2 * s], wf[1][2 * s], wf[0][2 * s + 1], wf[1][2 * s + 1]]
                                cc = mma(kind, av, [act[2 * s], act[2 * s + 1]], cc)
                            for c in cutlass.range_constexpr(4):
                                acc[ab + c] = cc[c]

            # raw activation of the next round -> the other buffer; one barrier per round
            if cutlass.const_expr(WB > 0 and mode == "mxfp4"):
                # the decoded activation of round r + 1 -> the other buffer (its slot was requested WB - 1
                # rounds ago); the barrier also frees this round's slot for the refill
                if r + 1 < cx.R:
                    self.stage_bulk_act(cx, r + 1, abuf_n)
                cute.arch.sync_threads()
            elif cutlass.const_expr(WB > 0):
                # the slot of this round is refilled at the start of the next: every warp must be
                # done with it (no barrier while the ring is not reused)
                if cx.R > WB:
                    cute.arch.sync_threads()
            else:
                self.store_a(anext, asnext, abuf_n, sabuf_n, cx.m_rows, tid)
                cute.arch.sync_threads()

        @cute.jit
        def round_wgmma(self, cx, wcur, scur, abuf, sabuf):
            """The compute of one round with wgmma (mma=wgmma): per 128-wide k block, four k32 steps
            into a fresh fp32 temporary (the tensor core's fp8 accumulation is not full fp32, so the
            temporaries are added in fp32), then acc += temporary (x the block scales).

            Step s = 2u + hh uses bytes 8hh..8hh+7 of vector u of rows g (a0, a2) and g+8 (a1, a3):
            the k order inside a step is remapped, and store_a lays the activation out to match."""
            acc, t, wk = cx.acc, cx.t, cx.wk
            desc0 = smem_desc_kmajor(abuf + wk * 2 * V * BSTEP, WG_LBO, WG_SBO)
            wgmma_fence()
            tmps = []
            for j in cutlass.range_constexpr(V // 2):
                d = None
                for s4 in cutlass.range_constexpr(4):
                    step = 4 * j + s4
                    u = step // 2
                    hh = step % 2
                    a = [wcur[i] for i in wg_a_quad(u, hh, V)]
                    if cutlass.const_expr(s4 == 0):
                        # a fresh temporary: zeroed input registers between two blocks' wgmmas made
                        # ptxas wait for the first block before issuing the second (SASS, 2026-11-30)
                        d = P.wgmma_e4m3_fresh(TM, a, desc0 + Int64(step * BSTEP // 16))
                    else:
                        d = wgmma_e4m3(TM, d, a, desc0 + Int64(step * BSTEP // 16), 1)
                wgmma_commit()
                tmps += d
            tmps = wgmma_wait(tmps)
            for j in cutlass.range_constexpr(V // 2):
                for mt in cutlass.range_constexpr(MT):
                    if cutlass.const_expr(mode == "fp8blk"):
                        kbl = (wk * TK) // 128 + j
                        sa2 = lds_v2f(sabuf + (kbl * TM + mt * 8 + 2 * t) * 4)
                        sw = scur[j]
                        for c in cutlass.range_constexpr(4):
                            acc[mt * 4 + c] = acc[mt * 4 + c] + tmps[j * (TM // 2) + mt * 4 + c] * (sw * sa2[c % 2])
                    else:
                        for c in cutlass.range_constexpr(4):
                            acc[mt * 4 + c] = acc[mt * 4 + c] + tmps[j * (TM // 2) + mt * 4 + c]

        @cute.jit
        def round_wgmma_mx(self, cx, wcur, scur, abuf, sabuf):
            """MX through wgmma: per 64-wide k group u, steps 2u and 2u + 1 against the two masked B
            tiles give one fp32 temporary for block 2u (lanes 0,1) and one for block 2u + 1 (lanes
            2,3); each is scaled by 2^(w_e8m0 - 127) * 2^(a_e8m0 - 127) in fp32 (exact powers of two)
            and added. fp4 values are decoded to e4m3 x 2^-6 on both sides (temporary x 2^12)."""
            acc, t, wk = cx.acc, cx.t, cx.wk
            desc0 = smem_desc_kmajor(abuf + wk * 2 * V * BSTEP, WG_LBO, WG_SBO)
            half = BSTEP // 2 // 16          # descriptor units between the two B tiles of a step
            # every A fragment of the round first, then one wgmma.fence (a register write between
            # two wgmmas would make ptxas fence each of them)
            quads = []
            for step in cutlass.range_constexpr(2 * V):
                u, hh = step // 2, step % 2
                if cutlass.const_expr(mode == "mxfp4"):
                    slots = wg_fp4_quad(u, hh, V)
                    dec = {i: e2m1x8_to_e4m3(wcur[i]) for i, _ in slots}
                    quads.append([dec[i][w_] for i, w_ in slots])
                else:
                    quads.append([wcur[i] for i in wg_a_quad(u, hh, V)])
            wgmma_fence()
            tmps = []
            for u in cutlass.range_constexpr(V):
                d = [[Float32(0.0)] * (TM // 2) for _ in range(2)]
                for hh in cutlass.range_constexpr(2):
                    step = 2 * u + hh
                    a = quads[step]
                    for var in cutlass.range_constexpr(2):
                        d[var] = wgmma_e4m3(TM, d[var], a, desc0 + Int64(step * BSTEP // 16 + var * half),
                                            1 if hh > 0 else 0)
                tmps += d[0] + d[1]
            wgmma_commit()
            tmps = wgmma_wait(tmps)
            for u in cutlass.range_constexpr(V):
                for var in cutlass.range_constexpr(2):
                    bl = 2 * u + var                        # block inside the warp's k-tile
                    blk_l = (wk * TK) // 32 + bl            # block inside the round (activation scales)
                    ws = [e8m0_f32_packed(scur[h * (V // 2) + bl // 4], bl % 4) for h in range(2)]
                    for mt in cutlass.range_constexpr(MT):
                        sa2 = lds_v2f(sabuf + (blk_l * TM + mt * 8 + 2 * t) * 4)
                        for c in cutlass.range_constexpr(4):
                            tv = tmps[(2 * u + var) * (TM // 2) + mt * 4 + c]
                            if cutlass.const_expr(mode == "mxfp4"):
                                tv = tv * Float32(4096.0)
                            acc[mt * 4 + c] = acc[mt * 4 + c] + tv * (ws[c // 2] * sa2[c % 2])

        @cute.jit
        def main_mxn(self, cx, sA, sSA, sW, wcur, scur, acc, tid, t, wk, rows, w, w_scale, a_tile, a_scale, lda_b,
                     m_rows, kt_begin, kend, K, R):
            """mx_n: every round of the CTA's slice. Stage 0's activation loads go out first (a small load
            queued behind megabytes of weight requests waits for them), then the first WS_AHEAD rounds of
            the weight ring; each stage of PR rounds is staged between two barriers, and the rounds inside
            a stage run without any."""
            cx.sA, cx.sSA, cx.sW, cx.acc, cx.tid, cx.t, cx.wk = sA, sSA, sW, acc, tid, t, wk
            cx.rows, cx.w, cx.w_scale, cx.a_tile, cx.a_scale, cx.lda_b = rows, w, w_scale, a_tile, a_scale, lda_b
            cx.m_rows, cx.kt_begin, cx.kend, cx.K, cx.R = m_rows, kt_begin, kend, K, R
            cx.stg = cute.make_rmem_tensor((max(CHS * 4, 1),), Int32)
            cx.stgs = cute.make_rmem_tensor((max(SPTS, 1),), Float32)
            cx.stgw = cute.make_rmem_tensor((max(SWPT, 1),), Int32)
            cx.stgb = cute.make_rmem_tensor((max(CHS if MXB else 0, 1),), Int32)
            self.stage_mxn_issue(cx, 0)
            self.ring_prologue(w, rows, kt_begin, wk, kend, K, w_scale, t, sW, tid, R)
            self.stage_mxn_store(cx)
            cute.arch.sync_threads()
            for sr in cutlass.range((R + PR - 1) // PR, unroll=1):
                if sr > 0:
                    cute.arch.sync_threads()   # every warp is done with the previous stage's B tiles
                    self.stage_mxn_issue(cx, sr)
                    self.stage_mxn_store(cx)
                    cute.arch.sync_threads()
                for rr in cutlass.range(cutlass.min(PR, R - sr * PR), unroll=1):
                    self.round_mxn(cx, sr * PR + rr, wcur, scur, sA + rr * ABUF, sSA + rr * SABUF,
                                   cx.sSW + rr * (TN * MXW * 4))

        @cute.jit
        def ring_prologue(self, w, rows, kt_begin, wk, kend, K, w_scale, t, sW, tid, R):
            """mx_n / mx_bf16: the weight ring's first WS_AHEAD rounds, one cp.async group each (empty past the slice)."""
            for s_ in cutlass.range_constexpr(WS_AHEAD):
                if s_ < R:
                    self.load_w_mxn(None, None, w, rows, kt_begin + s_ * WK + wk, kend, K, w_scale, t, True, False,
                                    sW + s_ * WSTAGE, tid)
                cp_async_commit()

        @cute.jit
        def main_img(self, cx, sA, sW, wcur, scur, acc, tid, t, wk, rows, w, w_scale, kt_begin, kt_end, kend, K, R):
            """a_image: every round of the CTA's slice. Stage sr (PR rounds) reads B-tile buffer sr % IB and weight-scale
            words sr % 2; at its start (after the barrier that frees stage sr - 1's buffers) warp 0 requests stage
            sr + IB - 1's image (TMA bulk copies on that buffer's mbarrier) and every thread loads stage sr + 1's scale
            words, stored at its end.
            The image is written by the launcher's first kernel: griddepcontrol.wait before the first copy, after the
            weight ring's first rounds are requested (under PDL this kernel starts while that one runs)."""
            cx.sW, cx.acc, cx.tid, cx.t, cx.wk = sW, acc, tid, t, wk
            cx.rows, cx.w, cx.w_scale = rows, w, w_scale
            cx.kt_begin, cx.kt_end, cx.kend, cx.K, cx.R = kt_begin, kt_end, kend, K, R
            cx.stgw = cute.make_rmem_tensor((max(SWPT, 1),), Int32)
            sSW = sA + IB * PR * ABUF
            bar = sSW + 2 * SWB
            nst = (R + PR - 1) // PR
            if tid == 0:
                for i in cutlass.range_constexpr(IB):
                    mbar_init(bar + 8 * i, 1)
                fence_mbar_init()
            if cutlass.const_expr(MXE):
                # the magnitude table of every re-bias byte (read after the barrier below)
                cx.lut = bar + cfg.img_bar_bytes
                for i in cutlass.range_constexpr(-(-256 // THREADS)):
                    e = tid + i * THREADS
                    if e < 256:
                        lut = e2m1_e4m3_lut(e)
                        sts_b32(cx.lut + e * 8, lut[0])
                        sts_b32(cx.lut + e * 8 + 4, lut[1])
            if nst > 0:
                self.issue_stage_scales(cx, 0)
            self.ring_prologue(w, rows, kt_begin, wk, kend, K, w_scale, t, sW, tid, R)
            cute.arch.griddepcontrol_wait()
            cute.arch.sync_threads()   # the mbarriers' initialization
            for s_ in cutlass.range_constexpr(IB - 1):
                if s_ < nst:
                    self.issue_stage_image(cx, s_, sA + s_ * (PR * ABUF), bar + 8 * s_)
            if nst > 0:
                self.store_stage_scales(cx, sSW)
            for sr in cutlass.range(nst, unroll=1):
                b = sr % 2
                ib = sr % IB
                cute.arch.sync_threads()   # stage sr's scale words stored; every warp done with stage sr - 1's buffers
                if sr + IB - 1 < nst:
                    nb = (sr + IB - 1) % IB   # stage sr - 1's buffer
                    self.issue_stage_image(cx, sr + IB - 1, sA + nb * (PR * ABUF), bar + nb * 8)
                if sr + 1 < nst:
                    self.issue_stage_scales(cx, sr + 1)
                if cutlass.const_expr(not (BND & 4)):
                    mbar_wait(bar + ib * 8, (sr // IB) % 2)
                for rr in cutlass.range(cutlass.min(PR, R - sr * PR), unroll=1):
                    self.round_mxn(cx, sr * PR + rr, wcur, scur, sA + ib * (PR * ABUF) + rr * ABUF, 0,
                                   sSW + b * SWB + rr * (TN * MXW * 4))
                if sr + 1 < nst:
                    self.store_stage_scales(cx, sSW + (1 - b) * SWB)

        @cute.jit
        def issue_stage_image(self, cx, sr, dst, bar):
            """a_image: warp 0 requests the image of stage sr's k-tiles inside the slice (one bulk copy per k-tile,
            KTI bytes, contiguous in the image) into dst, completing on bar."""
            if cutlass.const_expr(not (BND & 4)):
                if cx.tid < 32:
                    kt0 = cx.kt_begin + sr * PR * WK
                    nkt = cutlass.min(cx.kt_end, kt0 + PR * WK) - kt0
                    if cx.tid == 0:
                        mbar_arrive_expect_tx(bar, nkt * KTI)
                    cute.arch.sync_warp()
                    for i in cutlass.range_constexpr(-(-(PR * WK) // 32)):
                        j = cx.tid + 32 * i
                        if j < nkt:
                            bulk_g2s(dst + j * KTI, cx.img + Int64(kt0 + j) * KTI, KTI, bar)

        @cute.jit
        def stage_mxn_issue(self, cx, sr):
            """mx_n: the raw activation chunks (and E8M0 scales, as fp32) of the PR rounds of stage sr into
            registers (cx.stg / cx.stgs), spread over every thread; zeros past M, the slice and K."""
            r0 = sr * PR
            nr = cutlass.min(PR, cx.R - r0)
            for i in cutlass.range_constexpr(CHS):
                c = cx.tid + i * THREADS
                pr = c // NCH
                cc = c - pr * NCH
                m = cc // CPR
                j = cc - m * CPR
                el = (cx.kt_begin + (r0 + pr) * WK) * TK + j * VE
                pred = b2i(c < PR * NCH) & b2i(pr < nr) & b2i(m < cx.m_rows) & b2i(el < cx.kend)
                v = ldg_a(cx.a_tile + Int64(m * cx.lda_b) + Int64(el) * 16 // VE, pred)
                for q in cutlass.range_constexpr(4):
                    cx.stg[i * 4 + q] = v[q]
                if cutlass.const_expr(MXB):
                    # the chunk is one 32-block: its E8M0 byte (0 where the chunk is zero-filled)
                    cx.stgb[i] = ldg_u8_p(cx.a_scale + Int64(m) * (cx.K // 32) + Int64(el >> 5), pred)
            for i in cutlass.range_constexpr(SPTS):
                e = cx.tid + i * THREADS
                pr = e // SAE
                e2 = e - pr * SAE
                col = e2 // TM
                m = e2 - col * TM
                blk = ((cx.kt_begin + (r0 + pr) * WK) * TK) // 32 + col
                p = b2i(e < PR * SAE) & b2i(pr < nr) & b2i(m < cx.m_rows) & b2i(blk < cx.K // 32)
                cx.stgs[i] = e8m0_f32(ldg_u8_p(cx.a_scale + Int64(m) * (cx.K // 32) + Int64(blk), p))
            self.issue_stage_scales(cx, sr)

        @cute.jit
        def issue_stage_scales(self, cx, sr):
            """The weight rows' E8M0 words of stage sr's rounds into cx.stgw (word q of a row's round: its 4-block
            quad q, k (round start) + 128 q); rows past N re-read row N - 1 (never stored), words past the slice
            are 0 (their activation is 0). Why not 4-byte cp.async words in the weight ring: with a 256-byte scale
            row stride (K = 8192) those copies hit one shared-memory bank from every row of a warp (ncu,
            2026-11-30: 32-way conflicts, 73% of all shared wavefronts; 1 x 16384 x 8192 took 34 us against 21 us
            at K = 7680, docs/measurements/2026-11-30-h200-ncu-mxfp4-scale-stride-15.txt)."""
            r0 = sr * PR
            nr = cutlass.min(PR, cx.R - r0)
            for i in cutlass.range_constexpr(SWPT):
                e = cx.tid + i * THREADS
                pr = e // (TN * MXW)
                e2 = e - pr * (TN * MXW)
                rl = e2 // MXW
                q = e2 - rl * MXW
                k0 = (cx.kt_begin + (r0 + pr) * WK) * TK + 128 * q
                row = cutlass.min(cx.n_cta + rl, cx.N - 1)
                p = b2i(e < SWE) & b2i(pr < nr) & b2i(k0 < cx.kend)
                cx.stgw[i] = ldg_b32_p(cx.w_scale + Int64(row) * (cx.K // 32) + Int64(k0 >> 5), p)

        @cute.jit
        def stage_mxn_store(self, cx):
            """mx_n: the staged chunks decoded to e4m3 x 2^-6 into the B tiles of their round (stage round pr
            at sA + pr * ABUF, mxn_act_word_offset), the scales into sSA + pr * SABUF (the sabuf layout)."""
            for i in cutlass.range_constexpr(CHS):
                c = cx.tid + i * THREADS
                if c < PR * NCH:
                    pr = c // NCH
                    cc = c - pr * NCH
                    m = cc // CPR
                    j = cc - m * CPR
                    base = cx.sA + pr * ABUF
                    if cutlass.const_expr(MXB):
                        dec = mx_act_decode([cx.stg[i * 4 + q] for q in range(4)], cx.stgb[i])
                        for (q, i_), word in dec.items():
                            sts_b32(base + act_word_offset(j, m, q, i_), word)
                    else:
                        for q in cutlass.range_constexpr(4):
                            d = e2m1x8_to_e4m3(cx.stg[i * 4 + q])
                            for w_ in cutlass.range_constexpr(2):
                                sts_b32(base + mxn_act_word_offset(j, m, q, w_, TM, BSTEP), d[w_])
            for i in cutlass.range_constexpr(SPTS):
                e = cx.tid + i * THREADS
                if e < PR * SAE:
                    pr = e // SAE
                    sts_f32(cx.sSA + pr * SABUF + (e - pr * SAE) * 4, cx.stgs[i])
            self.store_stage_scales(cx, cx.sSW)
            fence_proxy_async()  # the wgmmas read the B tiles through the async proxy

        @cute.jit
        def store_stage_scales(self, cx, dst):
            """cx.stgw (issue_stage_scales) into the stage's weight-scale words at dst. mx_e4: the quad's re-bias
            word instead (S - byte b per byte: block b's magnitude table), and the row's fp32 factor 2^(S - 127 - 6)
            SWE words further (NaN where S is E8M0's NaN, 0xFF)."""
            for i in cutlass.range_constexpr(SWPT):
                e = cx.tid + i * THREADS
                if e < SWE:
                    if cutlass.const_expr(MXE):
                        top, rebias = e8m0_quad_rebias(cx.stgw[i])
                        sts_b32(dst + e * 4, rebias)
                        sts_f32(dst + (SWE + e) * 4, fmul_exact(e8m0_f32(top), Float32(TWO_M6)))
                    else:
                        sts_b32(dst + e * 4, cx.stgw[i])

        @cute.jit
        def ring_refill_mx(self, cx, rr):
            """mx_n / mx_bf16: round rr's weight chunks into its ring slot, one cp.async group (empty past the slice)."""
            if rr < cx.R:
                self.load_w_mxn(None, None, cx.w, cx.rows, cx.kt_begin + rr * WK + cx.wk, cx.kend, cx.K, cx.w_scale,
                                cx.t, True, False, cx.sW + (rr % WS) * WSTAGE, cx.tid)
            cp_async_commit()

        @cute.jit
        def round_mxn(self, cx, r, wcur, scur, abuf, sabuf, swbuf):
            """mx_n round r: request round r + WS - 1 into its ring slot (one cp.async group per round, empty
            past the slice), wait for round r's group (this thread's own cells: no barrier), read it back and
            compute against the staged B tiles at abuf / sabuf, with the weight rows' E8M0 words at swbuf.
            w_refill: round r + WS goes into round r's slot once it is read back."""
            if cutlass.const_expr(not RF):
                self.ring_refill_mx(cx, r + WS - 1)
            cp_async_wait(WS - 1)
            slot = cx.sW + (r % WS) * WSTAGE
            for vec in cutlass.range_constexpr(G * 2 * V * UV):
                v = lds_v4(slot + (vec * THREADS + cx.tid) * 16)
                for j in cutlass.range_constexpr(4):
                    wcur[vec * 4 + j] = v[j]
            if cutlass.const_expr(RF):
                self.ring_refill_mx(cx, r + WS)
            for gh in cutlass.range_constexpr(G * 2):
                rl = (cx.wn * G + gh // 2) * 16 + cx.g + 8 * (gh % 2)
                for u in cutlass.range_constexpr(V):
                    # byte t of the row's word for this warp's quad u (8 rows of a warp 4 * MXW bytes apart)
                    scur[gh * V + u] = lds_u8(swbuf + (rl * MXW + cx.wk * V + u) * 4 + cx.t)
            if cutlass.const_expr(AIMG):
                # the image holds the next slice's activation past this one (staging zero-filled it): a warpgroup
                # whose k-tile of the slice's last round lies past the slice skips it (warpgroup-uniform: wk)
                if cx.kt_begin + r * WK + cx.wk < cx.kt_end:
                    if cutlass.const_expr(MXE):
                        self.round_wgmma_mxe(cx, wcur, scur, abuf, swbuf)
                    else:
                        self.round_wgmma_mxb(cx, wcur, scur, abuf)
            elif cutlass.const_expr(MXB):
                self.round_wgmma_mxb(cx, wcur, scur, abuf)
            else:
                self.round_wgmma_mxn(cx, wcur, scur, abuf, sabuf)

        @cute.jit
        def round_wgmma_mxb(self, cx, wcur, scur, abuf):
            """MXFP4 through bf16 wgmma (Config.mx_bf16): per 16-byte chunk u (one 32-block per lane), the raw
            words of rows g / g + 8 decoded to bf16 and multiplied by their block's scale (x 2^-48: q * 2^-126
            * 2^(b - 49)), then eight k16 steps straight into the accumulator, one wgmma group per chunk (the
            next chunk's decode runs while it executes). The round ends with every group waited for: the ring
            refill reuses nothing of them, but the accumulator is read by no one else meanwhile."""
            acc, wk = cx.acc, cx.wk
            desc0 = smem_desc_kmajor(abuf + wk * 8 * V * BSTEP, WG_LBO, WG_SBO)
            na = TM // 2                     # accumulator registers per 16-row group
            d = [[acc[gi * na + i] for i in range(na)] for gi in range(G)]
            for u in cutlass.range_constexpr(V):
                dec = {}
                for gh in cutlass.range_constexpr(G * 2):   # (group, row g / g + 8)
                    if cutlass.const_expr(MX8):
                        # q * 2^-120 * 2^(b - 55) = q * 2^(b - 127) * 2^-48
                        base = (gh * V + u) * 8
                        nb = e4m3x4_nan_bits(wcur[base])
                        for q8 in cutlass.range_constexpr(1, 8):
                            nb = bop("or.b32", nb, e4m3x4_nan_bits(wcur[base + q8]))
                        mult = nan_if_any(bf16x2_pow2(scur[gh * V + u] + 72), nb)
                        for q8 in cutlass.range_constexpr(8):
                            dec[(gh, q8)] = [hmul_bf16x2(x, mult)
                                             for x in e4m3x4_to_bf16(wcur[(gh * V + u) * 8 + q8])]
                    else:
                        mult = bf16x2_pow2(scur[gh * V + u] + 78)
                        for q in cutlass.range_constexpr(4):
                            if cutlass.const_expr(BND & 1):
                                dec[(gh, q)] = [wcur[(gh * V + u) * 4 + q]] * 4
                            else:
                                raw = wcur[(gh * V + u) * 4 + q]
                                dec[(gh, q)] = [hmul_bf16x2(x, mult) for x in e2m1x8_to_bf16(raw)]
                wgmma_fence()
                for gi in cutlass.range_constexpr(G):
                    for s8 in cutlass.range_constexpr(4 if BND & 2 else 8):   # k16 step 8u + s8 of the unit
                        if cutlass.const_expr(MX8):
                            a = [dec[(gi * 2 + h, s8)][w_] for (w_, h) in mxb8_a_quad(s8)]
                        else:
                            a = [dec[(gi * 2 + h, q_)][w_] for (w_, h, q_, _) in mxb_a_quad(u, s8 // 2, s8 % 2)]
                        d[gi] = P.wgmma_bf16(TM, d[gi], a, desc0 + Int64((8 * u + s8) * BSTEP // 16))
                wgmma_commit()
            flat = wgmma_wait([x for dg in d for x in dg])
            for i in cutlass.range_constexpr(G * na):
                acc[i] = flat[i]

        @cute.jit
        def round_wgmma_mxe(self, cx, wcur, scur, abuf, swbuf):
            """e4m3 k32 wgmmas on re-biased quads (Config.mx_e4): per 16-byte chunk u (one 32-block per lane, the 4
            lanes of a row one quad), rows g / g + 8 decoded through their block's magnitude table (scur: the
            re-bias byte), four k32 steps into a fresh temporary (one wgmma group per chunk; the next chunk's decode
            runs while it executes), then each temporary added times the row's factor and the token's (fp32, from the
            staged scale words and the image group's factors), once its group is done."""
            acc, t, wk = cx.acc, cx.t, cx.wk
            ktile = abuf + wk * KTI
            rls = [cx.wn * 16 + cx.g + 8 * h for h in range(2)]
            ds = []
            for u in cutlass.range_constexpr(V):
                luts = [lds_v2(cx.lut + scur[h * V + u] * 8) for h in range(2)]
                quads = []
                for q in cutlass.range_constexpr(4):
                    dec = [e2m1x8_to_e4m3_lut(wcur[(h * V + u) * 4 + q], luts[h][0], luts[h][1]) for h in range(2)]
                    quads.append([dec[0][0], dec[1][0], dec[0][1], dec[1][1]])
                desc = smem_desc_kmajor(ktile + u * GRP, WG_LBO, WG_SBO)
                wgmma_fence()
                d = P.wgmma_e4m3_fresh(TM, quads[0], desc)
                for q in cutlass.range_constexpr(1, 4):
                    d = wgmma_e4m3(TM, d, quads[q], desc + Int64(q * BSTEP // 16), 1)
                wgmma_commit()
                ds.append(d)
            for u in cutlass.range_constexpr(V):
                # the factors first (loads), then chunk u's group (V - 1 - u younger groups may still run)
                fw = [lds_f32(swbuf + (SWE + rls[h] * MXW + wk * V + u) * 4) for h in range(2)]
                fa = []
                for c in cutlass.range_constexpr(TM // 8):
                    fa += lds_v2f(ktile + u * GRP + 4 * BSTEP + (8 * c + 2 * t) * 4)
                tv = P.wgmma_wait_pending(ds[u], V - 1 - u)
                for c in cutlass.range_constexpr(TM // 8):
                    for h in cutlass.range_constexpr(2):
                        for j in cutlass.range_constexpr(2):
                            i = 4 * c + 2 * h + j
                            acc[i] = acc[i] + tv[i] * (fw[h] * fa[2 * c + j])

        @cute.jit
        def round_wgmma_mxn(self, cx, wcur, scur, abuf, sabuf):
            """MXFP4 blocks along N (Config.mx_n): per 16-byte chunk u, four k32 steps (one per raw word) into
            one fresh fp32 temporary whose columns 2t, 2t + 1 (+ 8c) are lane t's own block's sums for
            tokens 2c, 2c + 1; each is scaled by 2^(w_e8m0 - 127) * 2^(a_e8m0 - 127) (exact powers of two)
            and added to this lane's accumulator. The e4m3 x 2^-6 decode's 2^12 is applied at the end."""
            acc, t, wk = cx.acc, cx.t, cx.wk
            desc0 = smem_desc_kmajor(abuf + wk * 4 * V * BSTEP, WG_LBO, WG_SBO)
            # the scale factors first: computed while the wgmmas run, not after their wait
            ws_sa = []
            for u in cutlass.range_constexpr(V):
                ws = [e8m0_f32(scur[h * V + u]) for h in range(2)]
                blk_l = (wk * TK) // 32 + 4 * u + t      # this lane's block inside the round
                sa = []
                for mp in cutlass.range_constexpr(TM // 2):
                    sa += lds_v2f(sabuf + (blk_l * TM + 2 * mp) * 4)
                ws_sa.append((ws, sa))
            # per chunk: its A fragments, one wgmma.fence, its four steps as one group; the next chunk's
            # decode runs while they execute
            ds = []
            for u in cutlass.range_constexpr(V):
                quads = []
                for q in cutlass.range_constexpr(4):
                    slots = mxn_a_quad(u, q, V)
                    dec = {i: e2m1x8_to_e4m3(wcur[i]) for i, _ in slots}
                    quads.append([dec[i][w_] for i, w_ in slots])
                wgmma_fence()
                d = None
                for q in cutlass.range_constexpr(4):
                    step = 4 * u + q
                    if cutlass.const_expr(q == 0):
                        d = P.wgmma_e4m3_fresh(NB, quads[q], desc0 + Int64(step * BSTEP // 16))
                    else:
                        d = wgmma_e4m3(NB, d, quads[q], desc0 + Int64(step * BSTEP // 16), 1)
                wgmma_commit()
                ds.append(d)
            for u in cutlass.range_constexpr(V):
                # chunk u's group done (V - 1 - u younger groups may still run): scale it
                tv = P.wgmma_wait_pending(ds[u], V - 1 - u)
                ws, sa = ws_sa[u]
                for h in cutlass.range_constexpr(2):
                    for m in cutlass.range_constexpr(TM):
                        acc[h * TM + m] = acc[h * TM + m] + tv[mxn_d_index(h, m)] * (ws[h] * sa[m])

        @cute.jit
        def epilogue_operands(self, a_scale, w_scale, bias, tid, n_cta, m0, m_rows, N, a_per_row,
                              w_per_row, split_k, has_bias):
            """w_bulk: this thread's output scales (fp8) and bias, loaded at the start while the
            weights stream instead of after the main loop (a load there is one more memory latency
            at the end of the kernel). Addresses are clamped into the tensors; None without w_bulk."""
            if cutlass.const_expr(WB == 0):
                return None
            ops = []
            for i in cutlass.range_constexpr(OPT):
                idx = tid + i * THREADS
                m = cutlass.min(idx // TN, m_rows - 1)
                n = cutlass.min(n_cta + idx % TN, N - 1)
                sa, sw = Float32(1.0), Float32(1.0)
                if cutlass.const_expr(mode == "fp8"):
                    sa = ld_f32(a_scale + Int64((m0 + m) * a_per_row) * 4)
                    sw = ld_f32(w_scale + Int64(n * w_per_row) * 4)
                b = ldg_f32(bias + Int64(n) * 4, b2i(has_bias != 0) & b2i(split_k == 1))
                ops.append((sa, sw, b))
            return ops

        # -------------------------------------------------------------- main kernel
        @cute.kernel
        def main_kernel(self, a: Int64, w: Int64, a_scale: Int64, w_scale: Int64, bias: Int64, act: Int64,
                        out: Int64, ws: Int64, M: Int32, N: Int32, K: Int32, lda: Int64, ldo: Int64,
                        M_pad: Int32, split_k: Int32, has_bias: Int32, a_per_row: Int32,
                        w_per_row: Int32):
            # the split-K reduce (launched after this grid with PDL) may be placed once every CTA of this
            # grid has started; it waits for the partials with griddepcontrol.wait
            cute.arch.griddepcontrol_launch_dependents()
            tid, _, _ = cute.arch.thread_idx()
            bn, bs, bm = cute.arch.block_idx()
            lane = tid % 32
            warp = tid // 32
            g = lane // 4
            t = lane % 4
            wn = warp % WN
            wk = warp // WN
            n_cta = bn * TN
            m0 = bm * TM
            m_rows = cutlass.min(M - m0, TM)
            KT = (K + TK - 1) // TK
            kt_begin = (bs * KT) // split_k
            kt_end = ((bs + 1) * KT) // split_k
            nkt = kt_end - kt_begin
            kend = cutlass.min(K, kt_end * TK)   # end of this slice's columns
            R = (nkt + WK - 1) // WK
            nkb = (K + 127) // 128
            # lda counts storage elements (fp4: packed bytes); row stride in bytes < 2^31 (adapter)
            lda_b = Int32(lda * A_STORE_BYTES)
            a_tile = a + Int64(m0) * (lda * A_STORE_BYTES)
            # Per-row activation scales that load_a streams with the tile start at this CTA's first
            # row too (blockscale: nkb fp32 per row; MX: K/32 bytes per row). The a8w8 epilogue
            # indexes its per-token scales by absolute row and keeps the base pointer.
            a_scale_tile = a_scale
            if cutlass.const_expr(mode == "fp8blk"):
                a_scale_tile = a_scale + Int64(m0) * Int64(nkb) * 4
            if cutlass.const_expr(mode == "mxfp8" or mode == "mxfp4"):
                a_scale_tile = a_scale + Int64(m0) * Int64(K // 32)

            # ---- shared memory
            smem = cutlass.memory.SmemAllocator()
            sbuf = smem.allocate_array(cutlass.Int8, cfg.smem_bytes, byte_alignment=128)
            s0 = sbuf.toint()
            sA = s0
            sSA = sA + (PR if MXP else 2) * ABUF
            sRED = sA if cutlass.const_expr(MXP) else sSA + 2 * SABUF   # mx_n: reuses the activation buffers
            sW = (sRED + cfg.red_bytes + 127) // 128 * 128  # weight ring (w_stages > 0)
            if cutlass.const_expr(cfg.red_ring):
                sW = (sSA + 2 * SABUF + 127) // 128 * 128
                sRED = sW
            if cutlass.const_expr(MXP):
                sW = (sA + (cfg.smem_bytes - cfg.w_stages * cfg.w_stage_bytes - 5 * 128) + 127) // 128 * 128
            if cutlass.const_expr(WGMX):
                # both activation buffers start as zeros: staging writes only a lane pair's k
                # positions of each masked B tile, the other pair's stay zero for the whole kernel
                ZB = (PR if MXN else 2) * ABUF   # mx_n: the B tiles of a whole stage
                for i in cutlass.range_constexpr(-(-(ZB // 16) // THREADS)):
                    e = tid + i * THREADS
                    if e < ZB // 16:
                        sts_v4(sA + e * 16, [Int32(0)] * 4)
                # the zeros cover the staged positions too: every thread's zeros must land before
                # any thread stages round 0 there (without this barrier a late warp's zeros erased
                # staged activation: wrong and non-reproducible sums)
                cute.arch.sync_threads()
            if cutlass.const_expr(mode == "mxfp8" and not WGMX and WB == 0 and not MXP):
                # the zero row (row TM) of both activation buffers
                for i in cutlass.range_constexpr(-(-(2 * STRIDE // 16) // THREADS)):
                    e = tid + i * THREADS
                    if e < 2 * STRIDE // 16:
                        zb = e // (STRIDE // 16)
                        zo = e - zb * (STRIDE // 16)
                        sts_v4(sA + zb * ABUF + TM * STRIDE + zo * 16, [Int32(0)] * 4)

            # ---- per-lane weight row addresses (rows clamped to N-1: loaded, never stored)
            rows = []
            nb = []
            for gi in cutlass.range_constexpr(G):
                r0 = n_cta + (wn * G + gi) * 16
                nb.append(cutlass.min(r0, N - 1) // 128)
                for h in cutlass.range_constexpr(2):
                    row = cutlass.min(r0 + h * 8 + g, N - 1)
                    rows.append(row)

            wA = cute.make_rmem_tensor((NW,), Int32)
            wB = cute.make_rmem_tensor((NW,), Int32)
            if cutlass.const_expr(mode == "fp8blk"):
                sAw = cute.make_rmem_tensor((NWS,), Float32)
                sBw = cute.make_rmem_tensor((NWS,), Float32)
            else:
                sAw = cute.make_rmem_tensor((NWS,), Int32)
                sBw = cute.make_rmem_tensor((NWS,), Int32)
            anext = cute.make_rmem_tensor((CH * 4,), Int32)
            if cutlass.const_expr(mode == "mxfp4" and not WGMX):
                asnext = cute.make_rmem_tensor((CH,), Int32)
            elif cutlass.const_expr(mode == "fp8blk" or mode == "mxfp8" or WGMX):
                asnext = cute.make_rmem_tensor((max(SAPT, 1),), Float32)
            else:
                asnext = cute.make_rmem_tensor((1,), Int32)
            acc = cute.make_rmem_tensor((2 * TM if MXN else G * MT * 4,), Float32)
            acc.fill(0.0)
            tmpb = cute.make_rmem_tensor((max(G * MT * 4, 1),), Float32)

            class _Ctx:
                pass
            cx = _Ctx()
            # ---- prologue: activation of round 0 in smem, weights of round 0 in flight
            if cutlass.const_expr(AIMG):
                cx.g, cx.wn, cx.n_cta, cx.N = g, wn, n_cta, N
                cx.img = act + Int64(bm) * Int64(KT) * KTI   # this CTA's tile_m rows of the image
                self.main_img(cx, sA, sW, wA, sAw, acc, tid, t, wk, rows, w, w_scale, kt_begin, kt_end, kend, K, R)
            elif cutlass.const_expr(MXP):
                cx.g, cx.wn, cx.n_cta, cx.N = g, wn, n_cta, N
                cx.sSW = sSA + PR * SABUF
                self.main_mxn(cx, sA, sSA, sW, wA, sAw, acc, tid, t, wk, rows, w, w_scale, a_tile, a_scale_tile,
                              lda_b, m_rows, kt_begin, kend, K, R)
            elif cutlass.const_expr(WB > 0):
                # bulk ring: the first WB rounds (weights and activation) are requested before
                # anything else; the epilogue's scales and bias are loaded while they stream
                cx.sW, cx.sBar, cx.tid, cx.n_cta, cx.N, cx.K, cx.w = sW, sW + WB * WB_SLOT, tid, n_cta, N, K, w
                cx.kt_begin, cx.kend, cx.m_rows, cx.a_tile, cx.lda_b = kt_begin, kend, m_rows, a_tile, lda_b
                cx.anext, cx.asnext = anext, asnext
                cx.w_scale, cx.a_scale, cx.nkb, cx.nb0 = w_scale, a_scale_tile, nkb, nb[0]
                cx.bulk_row = bulk_issue_row(tid, NWARPS)   # the row this thread copies (issue_bulk)
                # thread 0 initializes the slot barriers, then every warp requests its rows of the
                # first WB rounds at once
                if tid == 0:
                    for s_ in cutlass.range_constexpr(WB):
                        mbar_init(cx.sBar + s_ * 8, WB_ARRIVALS)
                    fence_mbar_init()
                cute.arch.sync_threads()
                for s_ in cutlass.range_constexpr(WB):
                    if s_ < R:
                        self.issue_bulk(cx, s_)
                # activation rows past M are never copied: zeros in every slot, for the whole kernel
                zrow = WB_ROW // 16
                for i in cutlass.range_constexpr(-(-(WB * TM * zrow) // THREADS)):
                    e = tid + i * THREADS
                    sl = e // (TM * zrow)
                    m = (e - sl * TM * zrow) // zrow
                    if (e < WB * TM * zrow) & (m >= m_rows):
                        sts_v4(sW + sl * WB_SLOT + (TN + m) * WB_ROW + (e % zrow) * 16, [Int32(0)] * 4)
                cute.arch.sync_threads()
                if cutlass.const_expr(mode == "mxfp4"):
                    if R > 0:
                        self.stage_bulk_act(cx, 0, sA)
                    cute.arch.sync_threads()
            else:
                self.load_a(anext, asnext, a_tile, a_scale_tile, lda_b, m_rows, kt_begin * TK, kend, K, nkb, tid)
            epi = self.epilogue_operands(a_scale, w_scale, bias, tid, n_cta, m0, m_rows, N, a_per_row,
                                         w_per_row, split_k, has_bias)
            if cutlass.const_expr(WB > 0 or MXP):
                pass
            elif cutlass.const_expr(WS > 0):
                for s_ in cutlass.range_constexpr(WS - 1):
                    if s_ < R:
                        self.load_w(None, None, w, rows, nb, kt_begin + s_ * WK + wk, kend, K, nkb, w_scale,
                                    t, scales=False, slot=sW + s_ * WSTAGE, tid=tid)
                    cp_async_commit()
                self.load_w(None, sAw, w, rows, nb, kt_begin + wk, kend, K, nkb, w_scale, t, weights=False)
            else:
                self.load_w(wA, sAw, w, rows, nb, kt_begin + wk, kend, K, nkb, w_scale, t)
            if cutlass.const_expr(WB == 0 and not MXP):
                self.store_a(anext, asnext, sA, sSA, m_rows, tid)
                cute.arch.sync_threads()

            # per-lane constant parts of the fragment addresses
            a_lane = g * STRIDE + (wk * TK + t * VE) * _SMEM_EB
            lane_a = []
            lane_b = []
            if cutlass.const_expr(mode == "mxfp8"):
                selA = b2i(t < 2)
                for mt in cutlass.range_constexpr(MT):
                    col = (wk * TK + t * VE) * _SMEM_EB
                    lane_a.append((TM + (g + 8 * mt - TM) * selA) * STRIDE + col)
                    lane_b.append((g + 8 * mt + (TM - g - 8 * mt) * selA) * STRIDE + col)

            # rounds in pairs: buffers alternate statically (no register copies)
            cx.g, cx.wn = g, wn
            cx.acc, cx.tmpb, cx.anext, cx.asnext = acc, tmpb, anext, asnext
            cx.t, cx.wk, cx.tid, cx.w, cx.rows, cx.nb = t, wk, tid, w, rows, nb
            cx.kt_begin, cx.kend, cx.K, cx.nkb, cx.w_scale = kt_begin, kend, K, nkb, w_scale
            cx.a_tile, cx.a_scale, cx.lda_b, cx.m_rows = a_tile, a_scale_tile, lda_b, m_rows
            cx.a_lane, cx.lane_a, cx.lane_b = a_lane, lane_a, lane_b
            # MXFP8 bulk: the activation fragment of block q is kept in the lanes of block q (t // 2 == q)
            # and zeroed in the others (the bulk form of the zero row)
            cx.mx_keep = [Int32(0) - b2i(t < 2), Int32(0) - b2i(t >= 2)]
            cx.sW, cx.R = sW, R
            if cutlass.const_expr(MXP):
                pass   # main_mxn ran every round
            elif cutlass.const_expr(WB > 0 and mode != "mxfp4"):
                # bulk ring: both operands come from the round's slot, no buffer alternates, so one round
                # per loop body (half the code: the kernels are short, and a cold instruction cache at the
                # start showed in their stall samples, docs/measurements/2026-11-30-h200-ncu-blockscale-m1-12.txt)
                for r in cutlass.range(R, unroll=1):
                    self.round_(cx, r, wA, sAw, wB, sBw, sA, sSA, sA + ABUF, sSA + SABUF)
            else:
                for rp in cutlass.range((R + 1) // 2, unroll=1):
                    self.round_(cx, 2 * rp, wA, sAw, wB, sBw, sA, sSA, sA + ABUF, sSA + SABUF)
                    if 2 * rp + 1 < R:
                        self.round_(cx, 2 * rp + 1, wB, sBw, wA, sAw, sA + ABUF, sSA + SABUF, sA, sSA)

            # ---- reduce the warps_k partial sums in fixed order, scale, bias, store
            if cutlass.const_expr(MXP or cfg.red_ring):
                # the reduction buffer is the B tiles' space (red_ring: the bulk slots): every warp must be done
                # with its last round's wgmmas / slot reads first
                cute.arch.sync_threads()
            if cutlass.const_expr(MXN):
                # partial (wk, t): lane t's blocks of every token
                for h in cutlass.range_constexpr(2):
                    for m in cutlass.range_constexpr(TM):
                        nl = wn * 16 + g + 8 * h
                        sts_f32(sRED + (((wk * 4 + t) * TM + m) * RED_STRIDE + nl) * 4, acc[h * TM + m])
            for gi in cutlass.range_constexpr(0 if MXN else G):
                for mt in cutlass.range_constexpr(MT):
                    for c in cutlass.range_constexpr(4):
                        m = mt * 8 + 2 * t + c % 2
                        nl = (wn * G + gi) * 16 + g + 8 * (c // 2)
                        sts_f32(sRED + ((wk * TM + m) * RED_STRIDE + nl) * 4, acc[(gi * MT + mt) * 4 + c])
            cute.arch.sync_threads()
            for i in cutlass.range_constexpr(OPT):
                idx = tid + i * THREADS
                m = idx // TN
                nl = idx - m * TN
                n = n_cta + nl
                if (idx < TM * TN) & (m < m_rows) & (n < N):
                    v = lds_f32(sRED + (m * RED_STRIDE + nl) * 4)
                    for q in cutlass.range_constexpr(1, NPART):
                        v = v + lds_f32(sRED + ((q * TM + m) * RED_STRIDE + nl) * 4)
                    if cutlass.const_expr(MXN):
                        v = v * Float32(4096.0)   # e2m1 -> e4m3 x 2^-6 on both operands
                    if cutlass.const_expr(epi is not None and mode == "fp8"):
                        v = v * epi[i][0]
                        v = v * epi[i][1]
                    elif cutlass.const_expr(mode == "fp8"):
                        v = v * ld_f32(a_scale + Int64((m0 + m) * a_per_row) * 4)
                        v = v * ld_f32(w_scale + Int64(n * w_per_row) * 4)
                    if split_k == 1:
                        if has_bias != 0:
                            v = v + (epi[i][2] if cutlass.const_expr(epi is not None) else ld_f32(bias + Int64(n) * 4))
                        store_out(out + (Int64(m0 + m) * ldo + n) * OUT_BYTES, v)
                    else:
                        stg_f32(ws + ((Int64(bs) * M_pad + m0 + m) * N + n) * 4, v)

        # -------------------------------------------------------------- split-K reduce
        @cute.kernel
        def reduce_kernel(self, ws: Int64, bias: Int64, out: Int64, M: Int32, N: Int32, ldo: Int64,
                          M_pad: Int32, split_k: Int32, has_bias: Int32):
            """out[m, n] = round(sum over s in order of ws[s, m, n] + bias[n]), one element per thread. The
            GEMM's programmatic dependent: griddepcontrol.wait returns once the GEMM has completed and its
            partials are visible. Every slice's load is issued before the first add (loads inside a loop
            each waited a full L2 round trip)."""
            cute.arch.griddepcontrol_wait()
            tid, _, _ = cute.arch.thread_idx()
            bx, _, _ = cute.arch.block_idx()
            idx = bx * 256 + tid
            if idx < M * N:
                m = idx // N
                n = idx - m * N
                slice_elems = Int64(M_pad) * N
                p = ws + (Int64(m) * N + n) * 4
                v = ld_f32_plain(p)
                parts = [Float32(0.0)] * MAX_SPLIT_K
                for s in cutlass.range_constexpr(1, MAX_SPLIT_K):
                    part = Float32(0.0)
                    if s < split_k:
                        part = ld_f32_plain(p + Int64(s) * slice_elems * 4)
                    parts[s] = part
                for s in cutlass.range_constexpr(1, MAX_SPLIT_K):
                    if s < split_k:
                        v = v + parts[s]
                if has_bias != 0:
                    v = v + ld_f32(bias + Int64(n) * 4)
                store_out(out + (Int64(m) * ldo + n) * OUT_BYTES, v)

        # -------------------------------------------------------------- a_image: the activation image
        @cute.kernel
        def act_image_kernel(self, a: Int64, a_scale: Int64, act: Int64, M: Int32, K: Int32, lda: Int64):
            """a_image: thread (row, raw 16-byte chunk) decodes its chunk with the block's E8M0 byte (mx_act_decode,
            the staging's arithmetic) and stores each word where staging would put it in shared memory
            (act_word_offset, k-tile images back to back), at image tile row // TM. Rows past M and columns past K
            (up to whole k-tiles) are zeros. One chunk per thread: this kernel's latency is on the GEMM's critical
            path (the GEMM waits for it after its first weight rounds). No griddepcontrol.launch_dependents: the
            GEMM is placed once this kernel's CTAs have exited. Released by that instruction (at the start or after
            the stores, the same), the GEMM's CTAs were placed while these still held SMs and, with about one GEMM
            CTA per SM (N = 7168 / 8192, tile_n 64, split_k 1), ran 6-48 us slower (H200, 2026-12-01: 16 x 8192 x
            7168 25.4 -> 18.2 us without it, MXFP8 32 x 7168 x 16384 125 -> 77.6 us; at two CTAs per SM the release
            was 0.5-1 us faster, docs/measurements/2026-12-01-h200-img-trigger-19.txt)."""
            tid, _, _ = cute.arch.thread_idx()
            bx, _, _ = cute.arch.block_idx()
            KT = (K + TK - 1) // TK
            nchunks = KT * TK // VE
            idx = bx * 256 + tid
            row = idx // nchunks
            j = idx - row * nchunks
            if row < (M + TM - 1) // TM * TM:
                mt = row // TM
                m = row - mt * TM
                el = j * VE
                ok = b2i(row < M) & b2i(el < K)
                v = ldg_a(a + Int64(row) * (lda * A_STORE_BYTES) + Int64(el) * 16 // VE, ok)
                base = act + Int64(mt) * Int64(KT) * KTI
                if cutlass.const_expr(MXE):
                    self.image_chunk_e4(v, a_scale + Int64(row) * (K // 32) + Int64((el >> 7) * 4), ok, j, m, base)
                else:
                    sb = ldg_u8_p(a_scale + Int64(row) * (K // 32) + Int64(el >> 5), ok)
                    for (q, i_), word in mx_act_decode(v, sb).items():
                        stg_b32(base + Int64(act_word_offset(j, m, q, i_)), word)

        @cute.jit
        def image_chunk_e4(self, v, quad_scales, ok, j, m, base):
            """mx_e4: activation chunk j (one 32-block, lane j % 4 of quad j // 4) of token m re-biased to the quad's
            largest block and stored as e4m3 words of the quad's 4 k32 B tiles; the quad's first chunk also stores
            the token's factor 2^(S - 127 - 6). The quad's 4 scale bytes as bytes (the scale view may be unaligned)."""
            qw = Int32(0)
            for b in cutlass.range_constexpr(4):
                qw = bop("or.b32", qw, bshl(ldg_u8_p(quad_scales + Int64(b), ok), 8 * b))
            top, rebias = e8m0_quad_rebias(qw)
            lut = e2m1_e4m3_lut(band(bshr(rebias, 8 * (j % 4)), 0xFF))
            for q in cutlass.range_constexpr(4):
                words = e2m1x8_to_e4m3_lut(v[q], lut[0], lut[1])
                for w_ in cutlass.range_constexpr(2):
                    stg_b32(base + Int64(mxe_act_word_offset(j, m, q, w_, BSTEP, GRP)), words[w_])
            if j % 4 == 0:
                stg_f32(base + Int64(mxe_factor_offset(j, m, BSTEP, GRP)), fmul_exact(e8m0_f32(top), Float32(TWO_M6)))

        # -------------------------------------------------------------- host launcher
        @cute.jit
        def __call__(self, a: Int64, w: Int64, a_scale: Int64, w_scale: Int64, bias: Int64, act: Int64,
                     out: Int64, ws: Int64, M: Int32, N: Int32, K: Int32, lda: Int64, ldo: Int64,
                     M_pad: Int32, split_k: Int32, has_bias: Int32, a_per_row: Int32,
                     w_per_row: Int32, stream: cuda.CUstream):
            grid_n = (N + TN - 1) // TN
            grid_m = (M + TM - 1) // TM
            if cutlass.const_expr(AIMG):
                # the activation image first; the GEMM is its programmatic dependent (griddepcontrol.wait in main_img)
                n_img = grid_m * TM * ((K + TK - 1) // TK) * (TK // VE)   # act_image_kernel: a thread per chunk
                self.act_image_kernel(a, a_scale, act, M, K, lda).launch(
                    grid=((n_img + 255) // 256, 1, 1), block=[256, 1, 1], stream=stream)
            self.main_kernel(a, w, a_scale, w_scale, bias, act, out, ws, M, N, K, lda, ldo, M_pad,
                             split_k, has_bias, a_per_row, w_per_row).launch(
                grid=(grid_n, split_k, grid_m), block=[THREADS, 1, 1], stream=stream,
                use_pdl=AIMG, **MIN_BLOCKS)
            if split_k > 1:
                total = M * N
                self.reduce_kernel(ws, bias, out, M, N, ldo, M_pad, split_k, has_bias).launch(
                    grid=((total + 255) // 256, 1, 1), block=[256, 1, 1], stream=stream, use_pdl=True)

    return SplitKDecodeGemm


# ---------------------------------------------------------------------------------------------
# Compile + export
# ---------------------------------------------------------------------------------------------
def compile_and_export(cfg: Config, out_dir: pathlib.Path, ident: str, arch: str = "sm_90a",
                       keep_dir=None):
    cx.import_dsl()
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    Kernel = _make_kernel_class(cfg)
    gemm = Kernel()
    i32, i64 = Int32(1), Int64(0)
    opts = f"--gpu-arch {arch}"
    if keep_dir:
        opts += f" --keep-ptx --keep-cubin --dump-dir {keep_dir}"
    compiled = cute.compile(gemm, i64, i64, i64, i64, i64, i64, i64, i64, i32, i32, i32, i64, i64,
                            i32, i32, i32, i32, i32, cuda.CUstream(0), options=opts)
    out_dir.mkdir(parents=True, exist_ok=True)
    compiled.export_to_c(str(out_dir), ident, ident)
    return out_dir / f"{ident}.h", out_dir / f"{ident}.o"


_EXPECTED_WRAPPER_ARGS = [
    "int64_t a", "int64_t w", "int64_t a_scale", "int64_t w_scale", "int64_t bias", "int64_t act", "int64_t out",
    "int64_t ws", "int32_t M", "int32_t N", "int32_t K", "int64_t lda", "int64_t ldo",
    "int32_t M_pad", "int32_t split_k", "int32_t has_bias", "int32_t a_per_row",
    "int32_t w_per_row", "cudaStream_t stream",
]


# ---------------------------------------------------------------------------------------------
# C++ adapter (no #include: it is pasted into a namespace of the generated registry)
# ---------------------------------------------------------------------------------------------
# Split-K decode GEMM (@OP@): pass 1 (grid ceil(N/@TILE_N@) x split_k x ceil(M/@TILE_M@),
# @THREADS@ threads) and, for split_k > 1, the fp32 workspace reduce, both enqueued by the
# exported host launcher on args.stream.
_ADAPTER_CONSTANTS = r"""
constexpr long long kTileM = @TILE_M@, kKMultiple = @KMULT@, kMaxSplitK = @MAXSPLIT@;
constexpr long long kElemNum = @ENUM@, kElemDen = @EDEN@;  // bytes per element = num / den
constexpr long long kStoreBytes = @SBYTES@;  // bytes per storage element of a (fp4: 1 per pair)
constexpr long long kOutBytes = @OBYTES@;  // bytes per element of out (@OUTDT@)
constexpr int kMode = @MODE@;  // 0 bf16, 1 fp8 (tensor/row scales), 2 blockscale, 3 mxfp8, 4 mxfp4
constexpr int kMxScaleAlign = @MXALIGN@;  // E8M0 scale pointers: the MXFP4 bulk kernels copy 4-byte words
// a_image: bytes of the activation image per k-tile of tile_m rows (Config.img_group_bytes x tile_k / 128),
// k-tiles of @TILE_K@ columns; 0: the kernel needs no scratch
constexpr long long kImageKTileBytes = @IMGKT@, kTileK = @TILE_K@;
"""

_ADAPTER_LAUNCH = r"""
// a_image: the image covers ceil(M / tile_m) row tiles x ceil(K / tile_k) k-tiles (act_image_kernel's grid)
static int64_t @IDENT@_scratch_bytes(const flygemm::LaunchArgs& args) {
  using namespace @IDENT@_detail;
  if (args.M <= 0 || args.K <= 0) return 0;
  return (args.M + kTileM - 1) / kTileM * ((args.K + kTileK - 1) / kTileK) * kImageKTileBytes;
}

static int @IDENT@_launch(const flygemm::LaunchArgs& args, char* err, int err_len) {
  using namespace @IDENT@_detail;
  const long long M = args.M, N = args.N, K = args.K, lim = 0x7fffffffLL;
  if (M < 0 || N < 0 || K < 0) return fail(err, err_len, "negative size");
  if (M == 0 || N == 0) return 0;
  if (K == 0) return fail(err, err_len, "K must be >= 1 (the op layer handles K == 0)");
  if (M > lim || N > lim || K > (1LL << 30)) return fail(err, err_len, "M, N must fit in int32 and K <= 2^30");
  if ((M + kTileM - 1) / kTileM > 65535) return fail(err, err_len, "M too large (grid.z)");
  if (K % kKMultiple != 0) return fail(err, err_len, "K must be a multiple of @KMULT@");
  const long long k_storage = K * kElemNum / kElemDen;  // bytes of one row of a / w
  const long long lda_bytes = args.lda * kStoreBytes;   // lda counts storage elements (fp4: bytes)
  if (lda_bytes < k_storage || lda_bytes % 16 != 0 || lda_bytes * kTileM > lim || k_storage > lim / 2)
    return fail(err, err_len, "lda must be >= K (storage elements) with 16-byte aligned rows of a");
  if (args.ldo < N) return fail(err, err_len, "ldo must be >= N");
  if (!args.a || !args.w || !args.out) return fail(err, err_len, "null a, w or out pointer");
  if (!aligned(args.a, 16) || !aligned(args.w, 16)) return fail(err, err_len, "a and w must be 16-byte aligned");
  if (!aligned(args.out, kOutBytes)) return fail(err, err_len, "out must be @OBYTES@-byte aligned");
  const int split_k = args.split_k;
  if (split_k < 1 || split_k > kMaxSplitK) return fail(err, err_len, "split_k must be in [1, @MAXSPLIT@]");
  if (split_k > 1) {
    if (!args.workspace) return fail(err, err_len, "split_k > 1 needs the fp32 workspace");
    if (args.M_pad < M || args.M_pad > lim) return fail(err, err_len, "workspace M_pad must be >= M");
    if (M * N > lim) return fail(err, err_len, "M * N must fit in int32 for the split-K reduce");
    if (!aligned(args.workspace, 4)) return fail(err, err_len, "workspace must be 4-byte aligned");
  }
  if (args.bias) {
    if (args.bias_dtype != flygemm::DType::fp32) return fail(err, err_len, "bias must be fp32 (the op layer converts it)");
    if (!aligned(args.bias, 4)) return fail(err, err_len, "bias must be 4-byte aligned");
  }
  int a_per_row = 0, w_per_row = 0;
  if (kMode != 0) {
    if (!args.a_scale || !args.w_scale) return fail(err, err_len, "a_scale and w_scale are required");
    using SK = flygemm::ScaleKind;
    if (kMode == 1) {
      if (args.a_scale_kind != SK::per_tensor && args.a_scale_kind != SK::per_row)
        return fail(err, err_len, "a_scale must be per-tensor or per-token fp32");
      if (args.w_scale_kind != SK::per_tensor && args.w_scale_kind != SK::per_row)
        return fail(err, err_len, "w_scale must be per-tensor or per-channel fp32");
      a_per_row = args.a_scale_kind == SK::per_row ? 1 : 0;
      w_per_row = args.w_scale_kind == SK::per_row ? 1 : 0;
    } else if (kMode == 2) {
      if (args.a_scale_kind != SK::block || args.w_scale_kind != SK::block)
        return fail(err, err_len, "blockscale needs fp32 block scales");
    } else if (args.a_scale_kind != SK::mx_e8m0 || args.w_scale_kind != SK::mx_e8m0) {
      return fail(err, err_len, "MX ops need e8m0 scales [rows, K/32]");
    }
    if (kMode <= 2 && (!aligned(args.a_scale, 4) || !aligned(args.w_scale, 4)))
      return fail(err, err_len, "fp32 scales must be 4-byte aligned");
    if (kMode >= 3 && (!aligned(args.a_scale, kMxScaleAlign) || !aligned(args.w_scale, kMxScaleAlign)))
      return fail(err, err_len, "this kernel needs 4-byte aligned E8M0 scale pointers");
  }
  if (kImageKTileBytes > 0) {
    if (!args.scratch || args.scratch_bytes < @IDENT@_scratch_bytes(args) || !aligned(args.scratch, 16))
      return fail(err, err_len, "this kernel needs its 16-byte aligned scratch (the activation image)");
  }
  if (loaded_sm_count(args.device, err, err_len) <= 0) return -1;
  // Same packing as cute_dsl_@IDENT@_wrapper in @HEADER@; the launcher returns the status of
  // the (last) cudaLaunchKernelEx.
  int64_t a = (int64_t)args.a, w = (int64_t)args.w, a_scale = (int64_t)args.a_scale;
  int64_t w_scale = (int64_t)args.w_scale, bias = (int64_t)args.bias, out = (int64_t)args.out;
  int64_t act = (int64_t)args.scratch;
  int64_t ws = (int64_t)args.workspace;
  int32_t m = (int32_t)M, n = (int32_t)N, k = (int32_t)K;
  int64_t lda = (int64_t)args.lda, ldo = (int64_t)args.ldo;
  int32_t m_pad = split_k > 1 ? (int32_t)args.M_pad : (int32_t)M;
  int32_t sk = split_k, has_bias = args.bias ? 1 : 0;
  void* stream = args.stream;
  int32_t ret = 0;
  void* packed[20] = {&a, &w, &a_scale, &w_scale, &bias, &act, &out, &ws, &m, &n, &k, &lda, &ldo,
                      &m_pad, &sk, &has_bias, &a_per_row, &w_per_row, &stream, &ret};
  @CIFACE@(packed, 20);
  if (ret != 0) return fail_cuda(err, err_len, "kernel launch (cudaLaunchKernelEx)", ret);
  return 0;
}
"""

_MODE_CODE = {"bf16": 0, "fp8": 1, "fp8blk": 2, "mxfp8": 3, "mxfp4": 4}
_ELEM_BYTES = {"bf16": (2, 1), "fp8": (1, 1), "fp8blk": (1, 1), "mxfp8": (1, 1), "mxfp4": (1, 2)}


def adapter_cpp(ident: str, name: str, header_rel: str, ciface: str, cfg: Config) -> str:
    text = cx.adapter_prelude(ident, name, pathlib.Path(__file__).name, header_rel, ciface,
                              _ADAPTER_CONSTANTS) + _ADAPTER_LAUNCH
    enum, eden = _ELEM_BYTES[cfg.mode]
    for k, v in {
        "@IDENT@": ident, "@NAME@": name, "@HEADER@": header_rel, "@CIFACE@": ciface,
        "@OP@": cfg.op, "@TILE_M@": str(cfg.tile_m), "@TILE_N@": str(cfg.tile_n),
        "@THREADS@": str(cfg.threads), "@KMULT@": str(cfg.k_multiple),
        "@MAXSPLIT@": str(MAX_SPLIT_K), "@ENUM@": str(enum), "@EDEN@": str(eden),
        "@MODE@": str(_MODE_CODE[cfg.mode]), "@SBYTES@": "2" if cfg.mode == "bf16" else "1",
        "@OBYTES@": str(cfg.out_bytes), "@OUTDT@": cfg.out_dtype,
        "@IMGKT@": str(cfg.tile_k // 128 * cfg.img_group_bytes if cfg.a_image else 0),
        "@TILE_K@": str(cfg.tile_k),
        "@MXALIGN@": "4" if ((cfg.w_bulk and cfg.mode == "mxfp4") or (cfg.mx_pipe and cfg.mode in ("mxfp4", "mxfp8")))
        else "1",
    }.items():
        text = text.replace(k, v)
    return text


# ---------------------------------------------------------------------------------------------
# build() per docs/TEAM_INTERFACES.md
# ---------------------------------------------------------------------------------------------
def build(spec: dict, out_dir: pathlib.Path) -> dict:
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    arch = str(spec.get("arch") or "sm_90a")
    if arch not in ("sm_90a", "sm_90"):
        raise ValueError(f"{FAMILY}: CUDA family targets sm_90a, got arch={arch!r}")
    arch = "sm_90a"
    cfg = Config.from_spec(spec)
    name = str(spec.get("name") or spec.get("kernel") or default_name(cfg))
    ident = str(spec.get("ident") or "k_" + "".join(c if c.isalnum() else "_" for c in name))
    t0 = time.time()
    header, obj = compile_and_export(cfg, out_dir, ident, arch)
    compile_s = time.time() - t0
    meta = cfg.meta()
    meta.update({
        "arch": arch, "family": FAMILY, "ident": ident,
        "dsl": cx.dsl_version(),
        "source_sha256_16": hashlib.sha256(pathlib.Path(__file__).read_bytes()).hexdigest()[:16],
        "compile_seconds": round(compile_s, 2), "c_entry": f"cute_dsl_{ident}_wrapper",
        "requires": f"K%{cfg.k_multiple}==0, a rows 16B aligned, a/w 16B aligned, ldo>=N, bias fp32",
    })
    ciface = cx.parse_launcher(FAMILY, header, ident, _EXPECTED_WRAPPER_ARGS)
    adapter = adapter_cpp(ident, name, header.name, ciface, cfg)
    result = {
        "objects": [obj.name],
        "adapter_cpp": adapter,
        **cx.link_result(out_dir),
        "meta": meta,
        "requires_k_multiple": cfg.k_multiple,
        "requires_n_multiple": 1,
        "max_split_k": MAX_SPLIT_K,
        "scratch_fn": bool(cfg.a_image),   # registry: the record's scratch_bytes is @IDENT@_scratch_bytes
    }
    (out_dir / "adapter.cpp").write_text(adapter)
    (out_dir / "build.json").write_text(json.dumps(
        {k: v for k, v in result.items() if k != "adapter_cpp"} | {"ident": ident, "name": name},
        indent=1))
    return result


def default_name(cfg: Config) -> str:
    return f"{FAMILY}.{cfg.op}.{cfg.in_dtype}.{cfg.out_dtype}.m{cfg.tile_m}n{cfg.tile_n}k{cfg.tile_k}.sm90a"


extract_cubins = cx.extract_cubins


def sass_summary(obj_path, cuobjdump=None) -> dict:
    """cuobjdump --dump-sass of the embedded cubin(s): instruction counts per kernel, resources."""
    import re
    res = {"cubins": 0, "kernels": {}, "resource_usage": ""}
    pat = re.compile(r"\b(HMMA\.[\w.]+|LDG[\w.]*|STG[\w.]*|LDS[\w.]*|STS[\w.]*|LDL[\w.]*|STL[\w.]*|"
                     r"F2FP[\w.]*|HMUL2[\w.]*|BAR[\w.]*|IMAD|LOP3\.LUT|PRMT|SHF[\w.]*|UBLKPF[\w.]*)")
    for sass, usage in cx.dump_sass(obj_path, cuobjdump):
        res["cubins"] += 1
        res["resource_usage"] += usage
        for part in sass.split("Function : ")[1:]:
            kname = part.split("\n", 1)[0].strip()
            counts = {}
            for ins in pat.findall(part):
                counts[ins] = counts.get(ins, 0) + 1
            res["kernels"][kname] = counts
    return res


def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", default="gemm_a16w16", choices=sorted(_OPS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--tile", default="16x32x0", help="tile_m x tile_n x tile_k (0: default)")
    ap.add_argument("--params", default="", help="k=v;k=v (warps_k, groups, l2_prefetch)")
    ap.add_argument("--sass", action="store_true")
    ap.add_argument("--keep", default=None, help="directory for the PTX / cubin")
    a = ap.parse_args(argv)
    params = {}
    for kv in filter(None, a.params.split(";")):
        k, v = kv.split("=", 1)
        params[k.strip()] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    tm, tn, tk = (int(x) for x in a.tile.lower().split("x"))
    spec = {"arch": "sm_90a", "op": a.op, "family": FAMILY, "tile_m": tm, "tile_n": tn,
            "tile_k": tk, "params": params, "out_dtype": "bf16"}
    cfg = Config.from_spec(spec)
    spec["name"] = default_name(cfg)
    t0 = time.time()
    out = pathlib.Path(a.out)
    if a.keep:  # PTX + cubin of the same specialization, for reading
        compile_and_export(cfg, pathlib.Path(a.keep) / "export", "keep_" + cfg.mode, keep_dir=a.keep)
    res = build(spec, out)
    print(json.dumps({k: v for k, v in res.items() if k != "adapter_cpp"}, indent=1))
    print(f"built {spec['name']} in {time.time() - t0:.1f} s -> {out}")
    if a.sass:
        print(json.dumps(sass_summary(out / res["objects"][0]), indent=1))


if __name__ == "__main__":
    _main()
