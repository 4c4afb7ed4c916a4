"""The MXFP4 .e4.img decode kernels' arithmetic and layout without a GPU (kernels/cuda/gemm_splitk_decode.py,
Config.mx_e4; the PTX helpers in kernels/cuda/_ptx.py).

An emulation of the inline PTX, instruction by instruction (prmt's byte select and sign replication, the packed
max of e8m0_quad_rebias): a 4-block quad of weights and of a token's activation, each block re-biased to the quad's
largest E8M0 byte through the magnitude table, gives exactly the dequantized dot product once the two fp32 factors
are applied, while the quad's scales lie within 14 binades; beyond, only blocks 2^-14 below the largest change, by
less than half a subnormal step of the table. Then the layout: the image words of a quad, read as wgmma's B tile,
meet the weight words the A fragment holds at the same k (a full m64n16k32 emulation per step), and the image of a
k-tile is covered exactly once."""
import csv
import pathlib

import numpy as np
import pytest
import torch

from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]
fam = load_source("kernels/cuda/gemm_splitk_decode.py", "gemm_splitk_decode_e4")
M32 = 0xFFFFFFFF
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
E4M3 = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float().numpy()


def prmt(a, b, c):
    """PTX prmt.b32 (default mode): byte k of the result is byte (c >> 4k) & 7 of {b, a}, replaced by its sign bit
    replicated when (c >> 4k) & 8."""
    src = (b << 32) | a
    out = 0
    for k in range(4):
        sel = (c >> (4 * k)) & 0xF
        byte = (src >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * k)
    return out


def e4m3_byte(x):
    return int(torch.tensor([x], dtype=torch.float32).to(torch.float8_e4m3fn).view(torch.uint8)[0])


def lut(delta):
    """_ptx.e2m1_e4m3_lut: e4m3(|code i| * 2^(6 - delta)), round to nearest even; 2^(6 - delta) is 0 from 133."""
    p = 2.0 ** (6 - delta) if delta < 133 else 0.0
    b = [e4m3_byte(np.float32(m * p)) for m in E2M1[:8]]
    return b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24, b[4] | b[5] << 8 | b[6] << 16 | b[7] << 24


def decode(x, lo, hi):
    """_ptx.e2m1x8_to_e4m3_lut, its instructions in order."""
    m = x & 0x77777777
    h = m >> 16
    y = (x << 4) & M32
    w0 = prmt(lo, hi, m) | (prmt(x, y, 0x1504) & 0x80808080)
    w1 = prmt(lo, hi, h) | (prmt(x, y, 0x3726) & 0x80808080)
    return w0, w1


def quad_rebias(word):
    """_ptx.e8m0_quad_rebias: (largest byte S, word of S - byte per byte)."""
    lo, hi = word & 0x00FF00FF, (word >> 8) & 0x00FF00FF
    mx = max(lo & 0xFFFF, hi & 0xFFFF) | max(lo >> 16, hi >> 16) << 16
    s = max(mx & 0xFFFF, mx >> 16)
    return s, (s * 0x01010101 - word) & M32


def e8m0(b):
    return float("nan") if b == 255 else 2.0 ** (b - 127)


def bytes_of(w):
    return [(w >> (8 * i)) & 0xFF for i in range(4)]


@pytest.mark.parametrize("delta", list(range(0, 24)) + [60, 132, 133, 200, 255])
def test_every_nibble_decodes_to_its_value_times_the_tables_power(delta):
    """All 16 codes in every nibble position: exact for delta <= 14, the nearest e4m3 below that, zero from 19."""
    lo, hi = lut(delta)
    rng = np.random.default_rng(delta)
    words = [sum(((i + k) % 16) << (4 * k) for k in range(8)) for i in range(16)]
    words += [int(x) for x in rng.integers(0, 2 ** 32, 64, dtype=np.uint64)]
    for x in words:
        got = [v for w in decode(x, lo, hi) for v in bytes_of(w)]
        for i, byte in enumerate(got):
            val = E2M1[(x >> (4 * i)) & 0xF] * (2.0 ** (6 - delta) if delta < 133 else 0.0)
            if delta <= 14:
                assert E4M3[byte] == val, (hex(x), i, delta)
            else:
                assert E4M3[byte] == float(torch.tensor([val]).to(torch.float8_e4m3fn).float()), (hex(x), i)
            if delta >= 19:
                assert E4M3[byte] == 0.0
            assert byte & 0x7F != 0x7F   # never the NaN code


def test_quad_rebias_bytes():
    rng = np.random.default_rng(1)
    for w in [0, M32, 0x7F7F7F7F, 0x00FF0001, 0xFF000000] + [int(x) for x in rng.integers(0, 2 ** 32, 500)]:
        s, r = quad_rebias(w)
        assert s == max(bytes_of(w))
        assert bytes_of(r) == [s - b for b in bytes_of(w)]


def quad_dot(w_words, w_scales, a_words, a_scales):
    """One weight row's and one token's 128-column quad through the kernel: both re-biased and decoded, the e4m3
    products summed (exact in float64 here), times the two factors 2^(S - 127 - 6)."""
    sw, rw = quad_rebias(w_scales)
    sa, ra = quad_rebias(a_scales)
    total = 0.0
    for b in range(4):
        lw, la = lut(bytes_of(rw)[b]), lut(bytes_of(ra)[b])
        for q in range(4):
            dw = [v for w in decode(w_words[b][q], *lw) for v in bytes_of(w)]
            da = [v for w in decode(a_words[b][q], *la) for v in bytes_of(w)]
            total += sum(float(E4M3[x]) * float(E4M3[y]) for x, y in zip(dw, da))
    return total * (e8m0(sw) * 2.0 ** -6) * (e8m0(sa) * 2.0 ** -6)


def dequant_dot(w_words, w_scales, a_words, a_scales):
    total = 0.0
    for b in range(4):
        for q in range(4):
            for i in range(8):
                wv = E2M1[(w_words[b][q] >> (4 * i)) & 0xF] * e8m0(bytes_of(w_scales)[b])
                av = E2M1[(a_words[b][q] >> (4 * i)) & 0xF] * e8m0(bytes_of(a_scales)[b])
                total += wv * av
    return total


def random_quad(rng, spread):
    words = [[int(x) for x in rng.integers(0, 2 ** 32, 4)] for _ in range(4)]
    base = int(rng.integers(100, 140))
    scales = [base - int(rng.integers(0, spread + 1)) for _ in range(4)]
    return words, sum(s << (8 * i) for i, s in enumerate(scales))


@pytest.mark.parametrize("spread", [0, 3, 14])
def test_a_quad_is_exact_while_its_scales_lie_within_14_binades(spread):
    rng = np.random.default_rng(spread)
    for _ in range(40):
        ww, ws = random_quad(rng, spread)
        aw, as_ = random_quad(rng, spread)
        assert quad_dot(ww, ws, aw, as_) == dequant_dot(ww, ws, aw, as_)


def test_blocks_far_below_their_quads_largest_change_by_less_than_its_subnormal_step():
    """Scales spread over 30 binades: each product of a block 2^d below the largest (d > 14) moves by at most half a
    subnormal step of the tables (2^-10 relative to the largest block's scale, per operand)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        ww, ws = random_quad(rng, 30)
        aw, as_ = random_quad(rng, 30)
        top = e8m0(max(bytes_of(ws))) * e8m0(max(bytes_of(as_)))
        err = abs(quad_dot(ww, ws, aw, as_) - dequant_dot(ww, ws, aw, as_))
        assert err <= 128 * 2 * 6 * 2.0 ** -10 * top


def test_nan_scale_makes_the_quads_factor_nan():
    ww, ws = random_quad(np.random.default_rng(3), 2)
    aw, as_ = random_quad(np.random.default_rng(4), 2)
    assert np.isnan(quad_dot(ww, (ws & 0xFFFFFF00) | 0xFF, aw, as_))


# ------------------------------------------------------------------ layout: image B tiles against the A fragment
def e4_configs():
    rows = csv.reader(line for line in open(ROOT / "kernels/configs/sm_90a.kernels.csv") if not line.startswith("#"))
    out = []
    for r in rows:
        if len(r) >= 10 and "mx_e4=1" in r[9]:
            params = {k: int(v) if v.isdigit() else v for k, v in (kv.split("=") for kv in r[9].split(";") if kv)}
            out.append(pytest.param(fam.Config.from_spec({"op": r[2], "tile_m": int(r[6]), "tile_n": int(r[7]),
                                                          "tile_k": int(r[8]), "params": params}), id=r[0]))
    return out


E4_CONFIGS = e4_configs()


def test_the_list_has_e4_kernels():
    assert len(E4_CONFIGS) >= 3


@pytest.mark.parametrize("cfg", E4_CONFIGS)
def test_the_image_of_a_k_tile_is_written_exactly_once(cfg):
    grp, bstep = cfg.img_group_bytes, cfg.b_step_bytes
    assert grp == 4 * bstep + 4 * cfg.tile_m and bstep == 32 * cfg.tile_m
    kti = cfg.tile_k // 128 * grp
    assert cfg.a_buf_bytes == cfg.warps_k * kti   # a round's buffer: its k-tiles' images back to back
    seen = set()
    for jb in range(2 * cfg.tile_k // 32):   # two k-tiles of 32-blocks
        for m in range(cfg.tile_m):
            offs = [fam.mxe_act_word_offset(jb, m, q, w, bstep, grp) for q in range(4) for w in range(2)]
            if jb % 4 == 0:
                offs.append(fam.mxe_factor_offset(jb, m, bstep, grp))
            for off in offs:
                assert off % 4 == 0 and off not in seen
                assert (jb * 32 // cfg.tile_k) * kti <= off < (jb * 32 // cfg.tile_k + 1) * kti
                seen.add(off)
    assert seen == set(range(0, 2 * kti, 4))


@pytest.mark.parametrize("tile_m", [8, 16, 32])
def test_each_k32_step_pairs_weight_and_activation_at_the_same_k(tile_m):
    """wgmma.m64n(tile_m)k32 with A from registers: thread (warp, g, t) holds a0 = row g, k 4t..4t+3; a1 = row g + 8;
    a2 / a3 the same at k 16 + 4t. The kernel gives lane t's block (4u + t) raw word q, decoded, as a0 / a1 (nibbles
    0..3) and a2 / a3 (nibbles 4..7), step q. B[k][n] is the image tile: token n's row of core matrix k // 16. Their
    product, summed over the 4 steps, must pair every weight value with the same-index activation value."""
    rng = np.random.default_rng(tile_m)
    bstep, grp = 32 * tile_m, 132 * tile_m
    w_raw = rng.integers(0, 2 ** 32, (16, 4, 4), dtype=np.uint64)   # [row][block][word] of one quad
    a_raw = rng.integers(0, 2 ** 32, (tile_m, 4, 4), dtype=np.uint64)
    one = lut(0)
    image = bytearray(grp)
    for m in range(tile_m):
        for jb in range(4):
            for q in range(4):
                for w, word in enumerate(decode(int(a_raw[m, jb, q]), *one)):
                    off = fam.mxe_act_word_offset(jb, m, q, w, bstep, grp)
                    image[off:off + 4] = word.to_bytes(4, "little")
    got = np.zeros((16, tile_m))
    for q in range(4):
        tile = np.frombuffer(bytes(image[q * bstep:(q + 1) * bstep]), dtype=np.uint8)
        B = np.zeros((32, tile_m))
        for k in range(32):
            for n in range(tile_m):
                B[k, n] = E4M3[tile[(n // 8) * fam.WG_SBO + (k // 16) * fam.WG_LBO + (n % 8) * 16 + k % 16]]
        A = np.zeros((16, 32))
        for g in range(8):
            for t in range(4):
                dec = {h: decode(int(w_raw[g + 8 * h, t, q]), *one) for h in (0, 1)}
                regs = [dec[0][0], dec[1][0], dec[0][1], dec[1][1]]   # a0, a1, a2, a3 as the kernel passes them
                for r, word in enumerate(regs):
                    row, k0 = g + 8 * (r % 2), 16 * (r // 2) + 4 * t
                    A[row, k0:k0 + 4] = [E4M3[b] for b in bytes_of(word)]
        got += A @ B
    want = np.zeros((16, tile_m))
    for n in range(16):
        for m in range(tile_m):
            for b in range(4):
                for q in range(4):
                    for i in range(8):
                        want[n, m] += (E2M1[(int(w_raw[n, b, q]) >> (4 * i)) & 0xF]
                                       * E2M1[(int(a_raw[m, b, q]) >> (4 * i)) & 0xF] * 2.0 ** 12)
    np.testing.assert_array_equal(got, want)


def test_three_image_stage_buffers_need_an_image_kernel():
    base = dict(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_bf16=1, w_stages=3,
                a_rounds=2, a_image=1, mx_e4=1)
    two, three = fam.Config(**base), fam.Config(**base, img_bufs=3)
    # one more stage of image, one more mbarrier (padded to 16 bytes); everything else the same
    assert three.smem_bytes - two.smem_bytes == 2 * 4 * (4 * 32 * 16 + 4 * 16) + 16
    assert two.img_bar_bytes == 16 and three.img_bar_bytes == 32
    for bad in (dict(base, img_bufs=4), dict(base, a_image=0, mx_e4=0, img_bufs=3)):
        with pytest.raises(ValueError, match="img_bufs"):
            fam.Config(**bad)


def test_e4_needs_the_mxfp4_image_kernels():
    base = dict(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=128, warps_k=2, mma="wgmma", mx_bf16=1, w_stages=4,
                a_rounds=4)
    assert fam.Config(**base, a_image=1, mx_e4=1).meta()["mx_e4"] == 1
    for bad in (dict(base, mx_e4=1), dict(base, a_image=1, mx_e4=2), dict(base, op="gemm_mxfp8", a_image=1, mx_e4=1),
                dict(base, a_image=1, mx_e4=1, bound=1)):
        with pytest.raises(ValueError, match="mx_e4"):
            fam.Config(**bad)
