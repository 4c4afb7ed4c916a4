"""The wgmma decode kernels' operand layouts without a GPU (kernels/cuda/gemm_splitk_decode.py,
mma=wgmma): the kernel's own index helpers (lane_vector_col, wg_a_quad, wg_act_word_offset, WG_LBO /
WG_SBO) are run through a model of what the hardware does with them, and the result must be the
plain product W @ X^T of one round. The model is written from the PTX / CuTe definitions, not from
the kernel:
  * wgmma A from registers, 8-bit types (CuTe ALayout_64x32): thread (warp wi, lane 4g + t),
    register r = v1 + 2 v2, byte v0 holds A[16 wi + g + 8 v1][4 t + v0 + 16 v2];
  * B from shared memory, K-major, no swizzle: element (k, n) of a k32 step tile lies at
    (k // 16) * LBO + (n // 8) * SBO + (n % 8) * 16 + k % 16.
A wrong permutation in either helper changes the sum's pairing of weights with activations and the
products no longer match."""
import pathlib
import random

import pytest
from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_family():
    return load_source("kernels/cuda/gemm_splitk_decode.py", "gemm_splitk_decode_layout")


fam = load_family()


def lane_words(row, col0):
    """The 4 words (4 values each) of a 16-value fp8 vector starting at column col0 of row."""
    return [[row[col0 + 4 * w + b] for b in range(4)] for w in range(4)]


def even_odd(values8):
    """What _ptx.e2m1x8_to_e4m3 promises about order: 8 nibbles (values) -> the even values (0, 2,
    4, 6) as bytes 0..3 of its first word, the odd ones of its second."""
    return [values8[0::2], values8[1::2]]


def emulate_round(W, X, tile_m, V, warps_k, variants=1, fp4=False):
    """D[variant][64][tile_m] of one round as the kernel computes it (16 values per lane vector:
    16 fp8 bytes or 8 fp4 bytes); MX (variants 2): the k32 steps against B tile 0 / 1 (zeros where
    the kernel never writes: it zero-fills the buffer once). fp4: raw activation chunks of 32 values
    and weight words decoded by even_odd."""
    TK = 4 * V * 16
    bstep = 32 * tile_m * variants
    round_k = warps_k * TK
    # activation staging: raw 16-byte chunks -> words at wg_act_word_offset
    smem = {}

    def put(base, values):
        for b in range(4):
            assert base + b not in smem, "two activation bytes share a shared-memory byte"
            smem[base + b] = values[b]
    for m in range(tile_m):
        if fp4:
            for j in range(round_k // 32):
                for q in range(4):
                    jc, hh = fam.fp4_raw_word_chunk(j, q)
                    for w, half in enumerate(even_odd(X[m][32 * j + 8 * q: 32 * j + 8 * q + 8])):
                        put(fam.wg_act_word_offset(jc, m, hh, w, TK, V, bstep, variants), half)
        else:
            for j in range(round_k // 16):
                for q in range(4):
                    put(fam.wg_act_word_offset(j, m, q // 2, q % 2, TK, V, bstep, variants),
                        X[m][16 * j + 4 * q: 16 * j + 4 * q + 4])
    assert len(smem) == tile_m * round_k and max(smem) < round_k * tile_m * variants  # inside the buffer
    Ds = []
    for var in range(variants):
        Ds.append(emulate_variant(W, smem, tile_m, V, warps_k, TK, bstep, var * (bstep // variants), fp4))
    return Ds


def thread_registers(W, wk, TK, V, chunk_values, words_of):
    """The weight registers of every thread (warp wi, lane) of k-tile wk: rows g, g + 8 of its warp's 16,
    V lane chunks of chunk_values values per row (lane_vector_col), each split into words by words_of."""
    regs = {}
    for wi in range(4):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            words = []
            for h in range(2):
                row = W[16 * wi + g + 8 * h]
                for u in range(V):
                    words += words_of(row, wk * TK + fam.lane_vector_col(u, t, chunk_values))
            regs[wi, lane] = words
    return regs


def value_words(n):
    """A chunk of raw fp4 values as n words of 8 values."""
    return lambda row, col: [row[col + 8 * q: col + 8 * q + 8] for q in range(n)]


def emulate_variant(W, smem, tile_m, V, warps_k, TK, bstep, tile_offset, fp4=False):
    D = [[0] * tile_m for _ in range(64)]
    for wk in range(warps_k):
        # fp4: an 8-byte vector is 2 words of 8 values
        regs = thread_registers(W, wk, TK, V, 16, value_words(2) if fp4 else lane_words)
        for step in range(2 * V):
            u, hh = step // 2, step % 2
            if fp4:
                quad = [(lambda i, w: lambda words: even_odd(words[i])[w])(i, w) for i, w in fam.wg_fp4_quad(u, hh, V)]
            else:
                quad = [(lambda i: lambda words: words[i])(i) for i in fam.wg_a_quad(u, hh, V)]
            A = [[None] * 32 for _ in range(64)]
            for (wi, lane), words in regs.items():
                g, t = lane // 4, lane % 4
                for r, slot in enumerate(quad):
                    v1, v2 = r % 2, r // 2
                    for v0 in range(4):
                        A[16 * wi + g + 8 * v1][4 * t + v0 + 16 * v2] = slot(words)[v0]
            start = (wk * 2 * V + step) * bstep + tile_offset
            for n in range(tile_m):
                col = [smem.get(start + (k // 16) * fam.WG_LBO + (n // 8) * fam.WG_SBO + (n % 8) * 16 + k % 16, 0)
                       for k in range(32)]
                for mrow in range(64):
                    D[mrow][n] += sum(A[mrow][k] * col[k] for k in range(32))
    return D


@pytest.mark.parametrize("tile_m", [8, 16])
def test_wgmma_operand_layouts_compute_the_round_product(tile_m):
    V, warps_k = 4, 2
    round_k = warps_k * 4 * V * 16
    rnd = random.Random(tile_m)
    W = [[rnd.randint(-7, 7) for _ in range(round_k)] for _ in range(64)]
    X = [[rnd.randint(-7, 7) for _ in range(round_k)] for _ in range(tile_m)]
    D, = emulate_round(W, X, tile_m, V, warps_k)
    want = [[sum(W[r][k] * X[n][k] for k in range(round_k)) for n in range(tile_m)] for r in range(64)]
    assert D == want


@pytest.mark.parametrize("fp4", [False, True], ids=["mxfp8", "mxfp4"])
@pytest.mark.parametrize("tile_m, V", [(8, 4), (16, 2)])
def test_wgmma_mx_masked_tiles_split_the_sum_by_32_block(tile_m, V, fp4):
    """MX (two B tiles per step): tile 0 must see exactly the even 32-blocks of every 64-wide group
    (lanes 0,1) and tile 1 the odd ones (lanes 2,3), so that each temporary is one block's sum."""
    warps_k = 2
    round_k = warps_k * 4 * V * 16
    rnd = random.Random(V)
    W = [[rnd.randint(-7, 7) for _ in range(round_k)] for _ in range(64)]
    X = [[rnd.randint(-7, 7) for _ in range(round_k)] for _ in range(tile_m)]
    D0, D1 = emulate_round(W, X, tile_m, V, warps_k, variants=2, fp4=fp4)
    for var, D in ((0, D0), (1, D1)):
        cols = [k for k in range(round_k) if (k // 32) % 2 == var]
        want = [[sum(W[r][k] * X[n][k] for k in cols) for n in range(tile_m)] for r in range(64)]
        assert D == want


def test_wgmma_quads_use_every_weight_word_once():
    V = 4
    used = sorted(i for step in range(2 * V) for i in fam.wg_a_quad(step // 2, step % 2, V))
    assert used == list(range(2 * V * 4))


@pytest.mark.parametrize("kwargs, message", [
    (dict(op="gemm_a16w16", tile_m=8, tile_n=64, tile_k=128, warps_k=2), "fp8, blockscale and MX only"),
    (dict(op="gemm_a8w8", tile_m=8, tile_n=32, tile_k=256, warps_k=2), "tile_n=64"),
    (dict(op="gemm_a8w8", tile_m=8, tile_n=64, tile_k=256, warps_k=2, groups=2), "tile_n"),
    (dict(op="gemm_a8w8", tile_m=8, tile_n=64, tile_k=64, warps_k=2), "multiple of 128"),
    (dict(op="gemm_a8w8", tile_m=8, tile_n=64, tile_k=256, warps_k=2, w_stages=3, min_blocks=1), "w_stages=0"),
])
def test_wgmma_config_refuses_what_it_does_not_implement(kwargs, message):
    with pytest.raises(ValueError, match=message):
        fam.Config(mma="wgmma", **kwargs)


def test_wgmma_config_sizes_the_raw_activation_buffer():
    cfg = fam.Config(op="gemm_a8w8_blockscale", tile_m=16, tile_n=64, tile_k=256, warps_k=2, mma="wgmma")
    assert cfg.a_buf_bytes == 2 * 256 * 16  # raw e4m3, one byte per value
    assert cfg.b_step_bytes == 32 * 16
    assert cfg.meta()["mma"].startswith("wgmma.m64n16k32")
    with pytest.raises(ValueError, match="mma must be"):
        fam.Config(op="gemm_a8w8", mma="tcgen05")


def stage_mx_blocks(X, tile_m, round_k, split, word_offset, value_bytes, word_values=8):
    """The MX wgmma kernels' activation staging of one round as a {byte offset: value} map: raw word q
    (word_values values: 8 e2m1 or 4 e4m3) of 32-block jb of token m is split into words by `split` (what
    the decode promises about order), word i going to word_offset(jb, m, q, i), value_bytes bytes per
    value. No two values may share a byte."""
    smem = {}
    for m in range(tile_m):
        for jb in range(round_k // 32):
            for q in range(32 // word_values):
                raw = X[m][32 * jb + word_values * q: 32 * jb + word_values * (q + 1)]
                for i, word in enumerate(split(raw)):
                    base = word_offset(jb, m, q, i)
                    for e, value in enumerate(word):
                        assert base + value_bytes * e not in smem, "two activation values share shared memory"
                        smem[base + value_bytes * e] = value
    assert len(smem) == tile_m * round_k
    return smem


def emulate_mxn_round(W, X, tile_m, V, warps_k):
    """mx_n (MXFP4 blocks along wgmma's N): D[wk][u][64][4 tile_m] of one round as the kernel computes
    it (chunk u of k-tile wk: four k32 steps, one per raw word), from the kernel's helpers
    mxn_act_word_offset / mxn_a_quad and the hardware model above. Each value is one e2m1 value; a raw
    word holds 8 of them in order, and e2m1x8_to_e4m3 splits it into even / odd (even_odd)."""
    TK = 128 * V
    tm4 = 4 * tile_m
    bstep = 32 * tm4
    round_k = warps_k * TK
    smem = stage_mx_blocks(X, tile_m, round_k, even_odd,
                            lambda jb, m, q, w: fam.mxn_act_word_offset(jb, m, q, w, tile_m, bstep), 1)
    assert max(smem) < round_k * tm4
    out = []
    for wk in range(warps_k):
        regs = thread_registers(W, wk, TK, V, 32, value_words(4))   # a 16-byte chunk: 4 words of 8 values
        per_u = []
        for u in range(V):
            D = [[0] * tm4 for _ in range(64)]
            for q in range(4):
                A = [[None] * 32 for _ in range(64)]
                for (wi, lane), words in regs.items():
                    g, t = lane // 4, lane % 4
                    for r, (i, w) in enumerate(fam.mxn_a_quad(u, q, V)):
                        v1, v2 = r % 2, r // 2
                        for v0 in range(4):
                            A[16 * wi + g + 8 * v1][4 * t + v0 + 16 * v2] = even_odd(words[i])[w][v0]
                start = (wk * 4 * V + 4 * u + q) * bstep
                for n in range(tm4):
                    col = [smem.get(start + (k // 16) * fam.WG_LBO + (n // 8) * fam.WG_SBO + (n % 8) * 16 + k % 16, 0)
                           for k in range(32)]
                    for mrow in range(64):
                        D[mrow][n] += sum(A[mrow][k] * col[k] for k in range(32))
            per_u.append(D)
        out.append(per_u)
    return out


@pytest.mark.parametrize("tile_m, V", [(2, 2), (4, 1), (16, 1)])
def test_wgmma_mx_blocks_along_n_give_each_lane_its_block_sums(tile_m, V):
    """mx_n: after the four steps of chunk u, the accumulator register mxn_d_index(h, m) of lane t (row
    g + 8h) must hold exactly the sum over 32-block 4u + t of its k-tile of W[row] * X[m]: each lane then
    scales only its own block."""
    warps_k = 2
    TK = 128 * V
    round_k = warps_k * TK
    rnd = random.Random(tile_m * 10 + V)
    W = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(64)]
    X = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(tile_m)]
    Ds = emulate_mxn_round(W, X, tile_m, V, warps_k)
    for wk in range(warps_k):
        for u in range(V):
            D = Ds[wk][u]
            for wi in range(4):
                for g in range(8):
                    for t in range(4):
                        # lane t's registers, in the m64nN accumulator layout: register c * 4 + 2h + e is
                        # row g + 8h, column 8c + 2t + e
                        regs = {}
                        for h in range(2):
                            for c in range(tile_m // 2):
                                for e in range(2):
                                    regs[c * 4 + 2 * h + e] = D[16 * wi + g + 8 * h][8 * c + 2 * t + e]
                        k0 = wk * TK + 32 * (4 * u + t)
                        for h in range(2):
                            row = W[16 * wi + g + 8 * h]
                            for m in range(tile_m):
                                want = sum(row[k] * X[m][k] for k in range(k0, k0 + 32))
                                assert regs[fam.mxn_d_index(h, m)] == want


def test_mx_blocks_along_n_config():
    cfg = fam.Config(op="gemm_mxfp4", tile_m=2, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_n=1,
                     w_stages=4, a_rounds=7)
    assert cfg.V == 2 and cfg.b_step_bytes == 32 * 8 and cfg.a_buf_bytes == 512 * 8
    assert cfg.red_parts == 8 and cfg.meta()["mma"].startswith("wgmma.m64n8k32")
    assert cfg.k_multiple == 128  # the staged 4-byte E8M0 words
    # per ring slot: 16 weight bytes per chunk and thread
    assert cfg.w_stage_bytes == 256 * 2 * 2 * 16
    # 7 rounds of B tiles, fp32 activation scales and the 64 weight rows' 4 E8M0 words per round; the
    # reduction buffer reuses them
    assert cfg.sw_stage_bytes == 7 * 64 * 4 * 4
    assert cfg.smem_bytes == 7 * (512 * 8 + 16 * 2 * 4) + cfg.sw_stage_bytes + 4 * cfg.w_stage_bytes + 5 * 128
    with pytest.raises(ValueError, match="w_stages >= 2"):
        fam.Config(op="gemm_mxfp4", tile_m=2, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_n=1, a_rounds=7)
    with pytest.raises(ValueError, match="a_rounds"):
        fam.Config(op="gemm_mxfp4", tile_m=2, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_n=1, w_stages=4)
    with pytest.raises(ValueError, match="mx_n is implemented"):
        fam.Config(op="gemm_mxfp8", tile_m=8, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_n=1)
    with pytest.raises(ValueError, match="tile_m"):
        fam.Config(op="gemm_mxfp4", tile_m=2, tile_n=64, tile_k=256, warps_k=2, mma="wgmma")


def bf16_pairs(values8):
    """What _ptx.e2m1x8_to_bf16 promises about order: 8 nibbles (values) -> 4 words of two 16-bit
    values, pairs (0, 4) (1, 5) (2, 6) (3, 7), the first of a pair in the low half."""
    return [[values8[i], values8[i + 4]] for i in range(4)]


def emulate_bf16_round(W, X, tile_m, V, warps_k, fp8=False):
    """mx_bf16 (MX through bf16 wgmma): D[64][tile_m] of one round from the kernel's helpers (MXFP4:
    mxb_act_word_offset / mxb_a_quad, raw words of 8 e2m1 values split by bf16_pairs; MXFP8:
    mxb8_act_word_offset / mxb8_a_quad, raw words of 4 e4m3 values split by e4m3_pairs) and this model of the
    hardware, written from the PTX definitions:
      * wgmma A from registers, 16-bit types: thread (warp wi, lane 4g + t), register r = v1 + 2 v2 holds
        A[16 wi + g + 8 v1][2 t + e + 8 v2] in its half e;
      * B K-major, no swizzle, 16-bit: element (k, n) of a k16 step tile at byte
        (k // 8) * LBO + (n // 8) * SBO + (n % 8) * 16 + 2 (k % 8).
    A lane's unit (a 16-byte fp4 chunk or a 32-byte fp8 block) is one 32-block: eight k16 steps."""
    TK = 128 * V
    bstep = 32 * tile_m
    round_k = warps_k * TK
    if fp8:
        wv, split = 4, e4m3_pairs
        offset = lambda jb, m, q8, i: fam.mxb8_act_word_offset(jb, m, q8, i, bstep)  # noqa: E731

        def slots(u, s8):   # (row half, word of the unit, pair) of a0..a3
            return [(h, (h * V + u) * 8 + s8, w_) for (w_, h) in fam.mxb8_a_quad(s8)]
    else:
        wv, split = 8, bf16_pairs
        offset = lambda jb, m, q, i: fam.mxb_act_word_offset(jb, m, q, i, bstep)  # noqa: E731

        def slots(u, s8):
            return [(h, (h * V + u_) * 4 + q_, w_) for (w_, h, q_, u_) in fam.mxb_a_quad(u, s8 // 2, s8 % 2)]
    smem = stage_mx_blocks(X, tile_m, round_k, split, offset, 2, word_values=wv)
    assert max(smem) < round_k * 2 * tile_m
    D = [[0] * tile_m for _ in range(64)]
    words_of = lambda row, col: [row[col + wv * q: col + wv * (q + 1)] for q in range(32 // wv)]  # noqa: E731
    for wk in range(warps_k):
        regs = thread_registers(W, wk, TK, V, 32, words_of)
        for u in range(V):
            for s8 in range(8):
                A = [[None] * 16 for _ in range(64)]
                for (wi, lane), words in regs.items():
                    g, t = lane // 4, lane % 4
                    for r, (h, wi_, w_) in enumerate(slots(u, s8)):
                        v1, v2 = r % 2, r // 2
                        assert v1 == h, "a0 / a2 hold row g, a1 / a3 row g + 8"
                        for e in range(2):
                            A[16 * wi + g + 8 * v1][2 * t + e + 8 * v2] = split(words[wi_])[w_][e]
                start = (wk * 8 * V + 8 * u + s8) * bstep
                for n in range(tile_m):
                    col = [smem.get(start + (k // 8) * fam.WG_LBO + (n // 8) * fam.WG_SBO + (n % 8) * 16
                                    + 2 * (k % 8), 0) for k in range(16)]
                    for mrow in range(64):
                        D[mrow][n] += sum(A[mrow][k] * col[k] for k in range(16))
    return D


@pytest.mark.parametrize("tile_m, V", [(8, 2), (16, 1), (32, 1)])
def test_wgmma_mx_bf16_operand_layouts_compute_the_round_product(tile_m, V):
    """mx_bf16: with the scales folded into the operands, every k16 step may mix blocks; the round's
    eight steps per chunk must pair every weight value with the activation value of the same k once."""
    warps_k = 2
    round_k = warps_k * 128 * V
    rnd = random.Random(tile_m * 7 + V)
    W = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(64)]
    X = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(tile_m)]
    D = emulate_bf16_round(W, X, tile_m, V, warps_k)
    want = [[sum(W[r][k] * X[n][k] for k in range(round_k)) for n in range(tile_m)] for r in range(64)]
    assert D == want


def test_mx_bf16_config():
    cfg = fam.Config(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1,
                     w_stages=3, a_rounds=4)
    assert cfg.V == 2 and cfg.b_step_bytes == 32 * 16 and cfg.a_buf_bytes == 512 * 2 * 16
    assert cfg.red_parts == 2 and cfg.sa_buf_bytes == 0 and cfg.wg_variants == 1
    assert cfg.meta()["mma"].startswith("wgmma.m64n16k16 bf16") and cfg.k_multiple == 128
    assert cfg.smem_bytes == 4 * 512 * 2 * 16 + 4 * 64 * 4 * 4 + 3 * cfg.w_stage_bytes + 5 * 128
    for tm in (8, 32, 64):
        fam.Config(op="gemm_mxfp4", tile_m=tm, tile_n=64, tile_k=128, warps_k=2, mma="wgmma", mx_bf16=1,
                   w_stages=3, a_rounds=1)
    with pytest.raises(ValueError, match="tile_m"):
        fam.Config(op="gemm_mxfp4", tile_m=4, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1,
                   w_stages=3, a_rounds=2)
    g2 = fam.Config(op="gemm_mxfp4", tile_m=16, tile_n=128, tile_k=128, warps_k=2, groups=2, mma="wgmma", mx_bf16=1,
                    w_stages=4, a_rounds=4)
    # per ring slot: 16 bytes per chunk, thread and row (two groups x rows g / g + 8)
    assert g2.warps_n == 4 and g2.threads == 256 and g2.w_stage_bytes == 256 * 2 * 2 * 16
    with pytest.raises(ValueError, match="groups 1 or 2"):
        fam.Config(op="gemm_mxfp4", tile_m=2, tile_n=128, tile_k=256, warps_k=2, groups=2, mma="wgmma", mx_n=1,
                   w_stages=4, a_rounds=7)
    with pytest.raises(ValueError, match="not with mx_n"):
        fam.Config(op="gemm_mxfp4", tile_m=8, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1, mx_n=1,
                   w_stages=3, a_rounds=2)
    with pytest.raises(ValueError, match="mx_bf16 is implemented"):
        fam.Config(op="gemm_a8w8", tile_m=8, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1,
                   w_stages=3, a_rounds=2)
    with pytest.raises(ValueError, match="w_stages >= 2"):
        fam.Config(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1,
                   a_rounds=2)


def e4m3_pairs(values4):
    """What _ptx.e4m3x4_to_bf16 promises about order: 4 bytes (values) -> 2 words of two 16-bit values,
    pairs (0, 2) and (1, 3), the first of a pair in the low half."""
    return [[values4[0], values4[2]], [values4[1], values4[3]]]


@pytest.mark.parametrize("tile_m, V", [(8, 2), (16, 1), (32, 1)])
def test_wgmma_mx_bf16_fp8_operand_layouts_compute_the_round_product(tile_m, V):
    warps_k = 2
    round_k = warps_k * 128 * V
    rnd = random.Random(tile_m * 11 + V)
    W = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(64)]
    X = [[rnd.randint(-6, 6) for _ in range(round_k)] for _ in range(tile_m)]
    D = emulate_bf16_round(W, X, tile_m, V, warps_k, fp8=True)
    want = [[sum(W[r][k] * X[n][k] for k in range(round_k)) for n in range(tile_m)] for r in range(64)]
    assert D == want


def test_mx_bf16_fp8_config():
    cfg = fam.Config(op="gemm_mxfp8", tile_m=16, tile_n=64, tile_k=128, warps_k=2, mma="wgmma", mx_bf16=1,
                     w_stages=4, a_rounds=4)
    # a lane's unit is a 32-byte block: two 16-byte vectors per row and unit in the ring
    assert cfg.V == 1 and cfg.unit_vectors == 2 and cfg.w_stage_bytes == 256 * 2 * 1 * 32
    assert cfg.sa_buf_bytes == 0 and cfg.k_multiple == 128 and cfg.a_buf_bytes == 256 * 2 * 16
