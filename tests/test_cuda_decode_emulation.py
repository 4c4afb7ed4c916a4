"""The CUDA split-K decode family's data flow (kernels/cuda/gemm_splitk_decode.py), checked on the CPU.

A NumPy emulation that follows the kernel's index formulas lane by lane: the unpredicated weight
vectors (clamped to the slice end), the activation staging into the double-buffered shared memory
(with the kernel's row strides, the bf16 / f16 conversions, the bit-exact e2m1 decode and the MX
scale factors), the PTX mma.m16n8k16 fragment layouts (weights as the 16 rows, tokens as the 8
columns, the remapped k order), the mxfp8 zero-row masking of the other block, the blockscale
temporaries, the warps_k reduction, and the split-K slices / workspace reduce (uneven and empty
slices). Compared with a float64 reference of the dequantized operands. It checks the design;
the DSL transcription is checked by tests/test_gpu_cuda_decode.py on an H200."""
import math
import pathlib

import numpy as np
import pytest
import torch

from flygemm import quant
from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]
fam = load_source("kernels/cuda/gemm_splitk_decode.py", "flygemm_cuda_gemm_splitk_decode")

M32 = 0xFFFFFFFF
E4M3_TABLE = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float().numpy()


def u32(x):
    return int(x) & M32


def bf16_bits_to_f(b):
    return np.array([b << 16], dtype=np.uint32).view(np.float32)[0].item()


def f_to_bf16_bits(f):
    bits = int(np.array([f], dtype=np.float32).view(np.uint32)[0])
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF  # RNE (finite values)


def f16_bits_to_f(b):
    return float(np.array([b], dtype=np.uint16).view(np.float16)[0])


def f_to_f16_bits(f):
    return int(np.array([f], dtype=np.float16).view(np.uint16)[0])


def pair_vals(x, kind):
    lo, hi = x & 0xFFFF, (x >> 16) & 0xFFFF
    if kind == "bf16":
        return bf16_bits_to_f(lo), bf16_bits_to_f(hi)
    return f16_bits_to_f(lo), f16_bits_to_f(hi)


# ---- the kernel's bit helpers
def e4m3x4_to_f16(x):
    b = [(x >> (8 * i)) & 0xFF for i in range(4)]
    h = [f_to_f16_bits(E4M3_TABLE[v]) for v in b]
    return [h[0] | (h[1] << 16), h[2] | (h[3] << 16)]


def e2m1x8_to_bf16(x):
    x8 = x >> 8
    msk = 0x81C081C0
    return [u32((x & 0x000F000F) * 0x1040) & msk, u32((x & 0x00F000F0) * 0x104) & msk,
            u32((x8 & 0x000F000F) * 0x1040) & msk, u32((x8 & 0x00F000F0) * 0x104) & msk]


def bf16x2_pow2(field):
    return u32((min(field, 255) << 7) * 0x00010001)


def hmul_bf16x2(a, b):
    lo = f_to_bf16_bits(np.float32(bf16_bits_to_f(a & 0xFFFF)) * np.float32(bf16_bits_to_f(b & 0xFFFF)))
    hi = f_to_bf16_bits(np.float32(bf16_bits_to_f(a >> 16)) * np.float32(bf16_bits_to_f(b >> 16)))
    return lo | (hi << 16)


def e8m0_f32(b):
    bits = max(u32(b << 23), 0x00400000)
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


# ---- warp-level mma.m16n8k16 from per-lane fragments
def warp_mma(kind, afr, bfr, cfr):
    """afr[lane] = 4 regs, bfr[lane] = 2 regs, cfr[lane] = 4 floats -> new cfr."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        a = [pair_vals(r, kind) for r in afr[lane]]
        A[g, 2 * t], A[g, 2 * t + 1] = a[0]
        A[g + 8, 2 * t], A[g + 8, 2 * t + 1] = a[1]
        A[g, 2 * t + 8], A[g, 2 * t + 9] = a[2]
        A[g + 8, 2 * t + 8], A[g + 8, 2 * t + 9] = a[3]
        b = [pair_vals(r, kind) for r in bfr[lane]]
        B[2 * t, g], B[2 * t + 1, g] = b[0]
        B[2 * t + 8, g], B[2 * t + 9, g] = b[1]
    D = A @ B
    out = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        c = cfr[lane]
        out.append([c[0] + D[g, 2 * t], c[1] + D[g, 2 * t + 1], c[2] + D[g + 8, 2 * t],
                    c[3] + D[g + 8, 2 * t + 1]])
    return out


class Smem:
    def __init__(self, n):
        self.b = np.zeros(n, dtype=np.uint8)

    def sts_v4(self, addr, v):
        assert addr % 16 == 0 and addr + 16 <= len(self.b), addr
        self.b[addr:addr + 16] = np.array(v, dtype=np.uint32).view(np.uint8)

    def lds_v4(self, addr):
        assert addr % 16 == 0 and addr + 16 <= len(self.b), addr
        return [int(x) for x in self.b[addr:addr + 16].view(np.uint32)]

    def sts_f32(self, addr, v):
        assert addr % 4 == 0
        self.b[addr:addr + 4] = np.array([v], dtype=np.float32).view(np.uint8)

    def lds_f32(self, addr):
        return float(self.b[addr:addr + 4].view(np.float32)[0])


def emulate(cfg, A_bytes, W_bytes, a_scale, w_scale, bias, M, N, K, split_k, a_per_row=0, w_per_row=0):
    """A_bytes [M, lda_bytes] uint8, W_bytes [N, K*eb] uint8; scales: fp32 arrays or uint8 (e8m0)."""
    mode, TM, TN, G, WN, WK, V = cfg.mode, cfg.tile_m, cfg.tile_n, cfg.groups, cfg.warps_n, cfg.warps_k, cfg.V
    VE, TK, RK, MT, STRIDE, ABUF = cfg.ve, cfg.tile_k, cfg.round_k, cfg.tile_m // 8, cfg.a_row_stride, cfg.a_buf_bytes
    SABUF, CH, NCH, THREADS = cfg.sa_buf_bytes, cfg.a_chunks_per_thread, cfg.a_chunks, cfg.threads
    CPR = NCH // TM
    SAE, SAPT = cfg.sa_entries, cfg.sa_per_thread
    kind = "bf16" if mode in ("bf16", "mxfp4") else "f16"
    STEPS = VE // 4
    LDS_PER_VEC = VE * 2 // 16
    eb16 = 16 // VE  # bytes per element *16/VE -> row bytes = K*16//VE
    row_b = K * 16 // VE
    lda_b = A_bytes.shape[1]
    out = np.full((M, N), np.nan)
    ws = np.zeros((split_k, (M + TM - 1) // TM * TM, N))
    nkb = (K + 127) // 128
    KT = (K + TK - 1) // TK

    def rd_w(row, off, n):
        return W_bytes[row, off:off + n]

    def vec_u32(bts):
        return [int(x) for x in np.frombuffer(bytes(bts), dtype=np.uint32)]

    for bm in range((M + TM - 1) // TM):
        m0 = bm * TM
        m_rows = min(M - m0, TM)
        for bs in range(split_k):
            kt_begin = (bs * KT) // split_k
            kt_end = ((bs + 1) * KT) // split_k
            nkt = kt_end - kt_begin
            kend = min(K, kt_end * TK)
            R = (nkt + WK - 1) // WK
            for bn in range((N + TN - 1) // TN):
                n_cta = bn * TN
                sm = Smem(cfg.smem_bytes)
                sA = 0
                sSA = sA + 2 * ABUF
                sRED = sSA + 2 * SABUF
                threads = range(THREADS)

                def load_a(k_r):
                    an, asn = {}, {}
                    for tid in threads:
                        regs, sc = [], []
                        for i in range(CH):
                            c = tid + i * THREADS
                            m = c // CPR
                            j = c - m * CPR
                            el = k_r + j * VE
                            pred = m < m_rows and el < kend and c < NCH
                            if pred:
                                off = m * lda_b + el * 16 // VE
                                regs += vec_u32(A_bytes[m0 + m].tobytes()[el * 16 // VE: el * 16 // VE + 16])
                            else:
                                regs += [0, 0, 0, 0]
                            if mode == "mxfp4":
                                sc.append(int(a_scale[m0 + m, el // 32]) if pred else 0)
                        if mode in ("fp8blk", "mxfp8"):
                            for i in range(SAPT):
                                e = tid + i * THREADS
                                col = e // TM
                                m = e - col * TM
                                if mode == "fp8blk":
                                    kb = k_r // 128 + col
                                    p = m < m_rows and kb < nkb and e < SAE
                                    sc.append(float(a_scale[m0 + m, kb]) if p else 0.0)
                                else:
                                    blk = k_r // 32 + col
                                    p = m < m_rows and blk < K // 32 and e < SAE
                                    sc.append(e8m0_f32(int(a_scale[m0 + m, blk]) if p else 0))
                        an[tid], asn[tid] = regs, sc
                    return an, asn

                def store_a(an, asn, abuf, sabuf):
                    for tid in threads:
                        for i in range(CH):
                            c = tid + i * THREADS
                            m = c // CPR
                            j = c - m * CPR
                            dst = abuf + m * STRIDE + j * (VE * 2)
                            if c < NCH:
                                raw = an[tid][i * 4:i * 4 + 4]
                                if mode == "bf16":
                                    sm.sts_v4(dst, raw)
                                elif mode == "mxfp4":
                                    mult = bf16x2_pow2(asn[tid][i] + 48)
                                    for q in range(4):
                                        d = [hmul_bf16x2(hmul_bf16x2(x, 0x7E807E80), mult) for x in e2m1x8_to_bf16(raw[q])]
                                        sm.sts_v4(dst + 16 * q, d)
                                else:
                                    h = []
                                    for q in range(4):
                                        h += e4m3x4_to_f16(raw[q])
                                    sm.sts_v4(dst, h[0:4])
                                    sm.sts_v4(dst + 16, h[4:8])
                        if mode in ("fp8blk", "mxfp8"):
                            for i in range(SAPT):
                                e = tid + i * THREADS
                                if e < SAE:
                                    sm.sts_f32(sabuf + e * 4, asn[tid][i])

                def load_w(tid, kt):
                    lane, warp = tid % 32, tid // 32
                    g, t, wn = lane // 4, lane % 4, warp % WN
                    regs, sc = [], []
                    rows = []
                    nbs = []
                    for gi in range(G):
                        r0 = n_cta + (wn * G + gi) * 16
                        nbs.append(min(r0, N - 1) // 128)
                        for h in range(2):
                            rows.append(min(r0 + h * 8 + g, N - 1))
                    packed = [0] * (G * V)
                    for gi in range(G):
                        for h in range(2):
                            row = rows[gi * 2 + h]
                            for u in range(V):
                                kel = max(min(kt * TK + (u * 4 + t) * VE, kend - VE), 0)
                                regs += vec_u32(rd_w(row, kel * 16 // VE, 16))
                                if mode == "mxfp8":
                                    blk = (kt * TK + u * 64) // 32
                                    for q in range(2):
                                        bq = max(min(blk + q, kend // 32 - 1), 0)
                                        packed[gi * V + u] |= int(w_scale[row, bq]) << (8 * (2 * h + q))
                                if mode == "mxfp4":
                                    sc.append(int(w_scale[row, kel // 32]))
                    if mode == "mxfp8":
                        sc = packed
                    if mode == "fp8blk":
                        for gi in range(G):
                            for j in range(V // 2):
                                kb = max(min((kt * TK) // 128 + j, nkb - 1), 0)
                                sc.append(float(w_scale[nbs[gi], kb]))
                    return regs, sc

                acc = {tid: [0.0] * (G * MT * 4) for tid in threads}
                tmpb = {tid: [0.0] * (G * MT * 4) for tid in threads}
                an, asn = load_a(kt_begin * TK)
                store_a(an, asn, sA, sSA)
                wcur = {tid: load_w(tid, kt_begin + tid // 32 // WN) for tid in threads}
                for r in range(R):
                    buf = r % 2
                    abuf, sabuf = sA + buf * ABUF, sSA + buf * SABUF
                    wnext = {tid: load_w(tid, kt_begin + (r + 1) * WK + tid // 32 // WN) for tid in threads}
                    an, asn = load_a((kt_begin + (r + 1) * WK) * TK)
                    for warp in range(WN * WK):
                        wn, wk = warp % WN, warp // WN
                        lanes = [warp * 32 + l for l in range(32)]
                        for u in range(V):
                            wfs = {}
                            for tid in lanes:
                                wr, sc = wcur[tid]
                                per = []
                                for gi in range(G):
                                    wf = []
                                    for h in range(2):
                                        base = ((gi * 2 + h) * V + u) * 4
                                        raw = wr[base:base + 4]
                                        if mode == "bf16":
                                            wf.append(raw)
                                        elif mode == "mxfp4":
                                            mult = bf16x2_pow2(sc[(gi * 2 + h) * V + u] + 78)
                                            d = []
                                            for q in range(4):
                                                d += [hmul_bf16x2(x, mult) for x in e2m1x8_to_bf16(raw[q])]
                                            wf.append(d)
                                        else:
                                            d = []
                                            for q in range(4):
                                                d += e4m3x4_to_f16(raw[q])
                                            wf.append(d)
                                    per.append(wf)
                                wfs[tid] = per
                            for mt in range(MT):
                                act, actB = {}, {}
                                for tid in lanes:
                                    lane = tid % 32
                                    g, t = lane // 4, lane % 4
                                    a_lane = g * STRIDE + (wk * TK + t * VE) * 2
                                    addr = abuf + a_lane + mt * 8 * STRIDE + u * 4 * VE * 2
                                    if mode == "mxfp8":
                                        selA = 1 if t < 2 else 0
                                        col = (wk * TK + t * VE) * 2
                                        la = (TM + (g + 8 * mt - TM) * selA) * STRIDE + col
                                        lb = (g + 8 * mt + (TM - g - 8 * mt) * selA) * STRIDE + col
                                        fa, fb = [], []
                                        for q in range(LDS_PER_VEC):
                                            fa += sm.lds_v4(abuf + la + u * 4 * VE * 2 + 16 * q)
                                            fb += sm.lds_v4(abuf + lb + u * 4 * VE * 2 + 16 * q)
                                        act[tid], actB[tid] = fa, fb
                                    else:
                                        f = []
                                        for q in range(LDS_PER_VEC):
                                            f += sm.lds_v4(addr + 16 * q)
                                        act[tid] = f
                                for gi in range(G):
                                    ab = (gi * MT + mt) * 4
                                    def av(tid, s):
                                        wf = wfs[tid][gi]
                                        return [wf[0][2 * s], wf[1][2 * s], wf[0][2 * s + 1], wf[1][2 * s + 1]]
                                    if mode == "mxfp8":
                                        ta = [[0.0] * 4 for _ in range(32)]
                                        tb = [[0.0] * 4 for _ in range(32)]
                                        for s in range(STEPS):
                                            ta = warp_mma(kind, [av(tid, s) for tid in lanes], [act[tid][2 * s:2 * s + 2] for tid in lanes], ta)
                                            tb = warp_mma(kind, [av(tid, s) for tid in lanes], [actB[tid][2 * s:2 * s + 2] for tid in lanes], tb)
                                        blk_l = (wk * TK + u * 64) // 32
                                        for li, tid in enumerate(lanes):
                                            t = (tid % 32) % 4
                                            sc = wcur[tid][1]
                                            for q in range(2):
                                                tq = ta[li] if q == 0 else tb[li]
                                                base = sabuf + ((blk_l + q) * TM + mt * 8 + 2 * t) * 4
                                                sa2 = [sm.lds_f32(base), sm.lds_f32(base + 4)]
                                                for h in range(2):
                                                    sw = e8m0_f32((sc[gi * V + u] >> (8 * (2 * h + q))) & 0xFF)
                                                    for c in range(2):
                                                        acc[tid][ab + 2 * h + c] += tq[2 * h + c] * (sw * sa2[c])
                                    elif mode == "fp8blk":
                                        if u % 2 == 0:
                                            tq = [[0.0] * 4 for _ in range(32)]
                                        else:
                                            tq = [tmpb[tid][ab:ab + 4] for tid in lanes]
                                        for s in range(STEPS):
                                            tq = warp_mma(kind, [av(tid, s) for tid in lanes], [act[tid][2 * s:2 * s + 2] for tid in lanes], tq)
                                        for li, tid in enumerate(lanes):
                                            t = (tid % 32) % 4
                                            if u % 2 == 0:
                                                tmpb[tid][ab:ab + 4] = tq[li]
                                            else:
                                                kbl = (wk * TK) // 128 + u // 2
                                                base = sabuf + (kbl * TM + mt * 8 + 2 * t) * 4
                                                sa2 = [sm.lds_f32(base), sm.lds_f32(base + 4)]
                                                sw = wcur[tid][1][gi * (V // 2) + u // 2]
                                                for c in range(4):
                                                    acc[tid][ab + c] += tq[li][c] * (sw * sa2[c % 2])
                                    else:
                                        cc = [acc[tid][ab:ab + 4] for tid in lanes]
                                        for s in range(STEPS):
                                            cc = warp_mma(kind, [av(tid, s) for tid in lanes], [act[tid][2 * s:2 * s + 2] for tid in lanes], cc)
                                        for li, tid in enumerate(lanes):
                                            acc[tid][ab:ab + 4] = cc[li]
                    store_a(an, asn, sA + (1 - buf) * ABUF, sSA + (1 - buf) * SABUF)
                    wcur = wnext
                # reduction
                RED_STRIDE = cfg.red_stride
                for tid in threads:
                    lane, warp = tid % 32, tid // 32
                    g, t, wn, wk = lane // 4, lane % 4, warp % WN, warp // WN
                    for gi in range(G):
                        for mt in range(MT):
                            for c in range(4):
                                m = mt * 8 + 2 * t + c % 2
                                nl = (wn * G + gi) * 16 + g + 8 * (c // 2)
                                sm.sts_f32(sRED + ((wk * TM + m) * RED_STRIDE + nl) * 4, acc[tid][(gi * MT + mt) * 4 + c])
                for tid in threads:
                    for i in range(cfg.out_per_thread):
                        idx = tid + i * THREADS
                        m = idx // TN
                        nl = idx - m * TN
                        n = n_cta + nl
                        if idx < TM * TN and m < m_rows and n < N:
                            v = sm.lds_f32(sRED + (m * RED_STRIDE + nl) * 4)
                            for q in range(1, WK):
                                v = v + sm.lds_f32(sRED + ((q * TM + m) * RED_STRIDE + nl) * 4)
                            if mode == "fp8":
                                v = v * float(a_scale[(m0 + m) * a_per_row]) * float(w_scale[n * w_per_row])
                            if split_k == 1:
                                out[m0 + m, n] = v + (bias[n] if bias is not None else 0.0)
                            else:
                                ws[bs, m0 + m, n] = v
    if split_k > 1:
        for m in range(M):
            for n in range(N):
                v = ws[0, m, n]
                for s in range(1, split_k):
                    v += ws[s, m, n]
                out[m, n] = v + (bias[n] if bias is not None else 0.0)
    return out


def make_case(op, M, N, K, seed, variant="rowwise"):
    g = torch.Generator().manual_seed(seed)
    a32 = torch.randn(M, K, generator=g) * (0.25 + 4 * torch.rand(M, 1, generator=g))
    w32 = torch.randn(N, K, generator=g) / math.sqrt(K)
    bias = torch.randn(N, generator=g).double().numpy()
    apr = wpr = 0
    if op == "gemm_a16w16":
        a, w = a32.to(torch.bfloat16), w32.to(torch.bfloat16)
        ref = a.double() @ w.double().T
        sa = sw = None
    elif op == "gemm_a8w8":
        if variant == "per_tensor":
            a, sa_t = quant.quantize_fp8_per_tensor(a32)
            w, sw_t = quant.quantize_fp8_per_tensor(w32)
        else:
            a, sa_t = quant.quantize_fp8_per_token(a32)
            w, sw_t = quant.quantize_fp8_per_channel(w32)
            apr = wpr = 1
        ref = (a.double() * sa_t.double().reshape(-1, 1)) @ (w.double() * sw_t.double().reshape(-1, 1)).T
        if variant == "per_tensor":
            ref = (a.double() @ w.double().T) * sa_t.double() * sw_t.double()
        sa, sw = sa_t.numpy(), sw_t.numpy()
    elif op == "gemm_a8w8_blockscale":
        a, sa_t = quant.quantize_fp8_blockscale_act(a32)
        w, sw_t = quant.quantize_fp8_blockscale_weight(w32)
        ref = quant.dequantize_blockscale_act(a, sa_t).double() @ quant.dequantize_blockscale_weight(w, sw_t).double().T
        sa, sw = sa_t.numpy(), sw_t.numpy()
    else:
        qz, dq = ((quant.quantize_mxfp8, quant.dequantize_mxfp8) if op == "gemm_mxfp8"
                  else (quant.quantize_mxfp4, quant.dequantize_mxfp4))
        a, sa_t = qz(a32)
        w, sw_t = qz(w32)
        ref = dq(a, sa_t).double() @ dq(w, sw_t).double().T
        sa, sw = sa_t.view(torch.uint8).numpy(), sw_t.view(torch.uint8).numpy()
    A = np.ascontiguousarray(a.view(torch.uint8).numpy().reshape(M, -1))
    W = np.ascontiguousarray(w.view(torch.uint8).numpy().reshape(N, -1))
    return A, W, sa, sw, bias, ref.numpy() + bias, apr, wpr


CASES = [
    # op, M, N, K, split_k, (tile_m, tile_n, tile_k), params
    ("gemm_a16w16", 3, 40, 352, 1, (16, 32, 0), {}),
    ("gemm_a16w16", 9, 48, 352, 3, (16, 32, 0), {}),           # 3 k-tiles / 3 slices
    ("gemm_a16w16", 1, 20, 72, 7, (8, 32, 0), {}),             # more slices than k-tiles
    ("gemm_a16w16", 16, 72, 1056, 4, (16, 64, 0), {"groups": 2, "warps_k": 2}),
    ("gemm_a8w8", 7, 40, 1056, 2, (16, 32, 0), {}),
    ("gemm_a8w8", 17, 33, 160, 3, (8, 32, 0), {}),             # M above the tile (grid.z), empty slices
    ("gemm_a8w8_blockscale", 16, 130, 544, 2, (16, 32, 0), {}),     # 2 weight-scale rows, partial blocks
    ("gemm_a8w8_blockscale", 5, 40, 272, 1, (8, 32, 128), {"warps_k": 2}),
    ("gemm_mxfp8", 16, 40, 352, 5, (16, 32, 128), {}),
    ("gemm_mxfp8", 2, 33, 96, 1, (8, 32, 128), {}),
    ("gemm_mxfp4", 5, 40, 352, 2, (8, 32, 0), {}),
    ("gemm_mxfp4", 11, 24, 160, 3, (16, 32, 128), {"groups": 2, "warps_k": 2}),
    # wide bulk tiles (twenty-first session): 5 / 2 warps along N, ragged N, a K tail, split-K
    ("gemm_a8w8", 5, 170, 1056, 1, (8, 80, 256), {"warps_k": 3, "w_bulk": 2, "min_blocks": 1}),
    ("gemm_a8w8", 8, 70, 4112, 3, (8, 32, 256), {"warps_k": 6, "w_bulk": 1, "min_blocks": 3}),
    ("gemm_a16w16", 13, 50, 1056, 2, (16, 32, 128), {"warps_k": 4, "w_bulk": 2, "min_blocks": 2}),
]


@pytest.mark.parametrize("op,M,N,K,split_k,tile,params", CASES)
def test_decode_emulation(op, M, N, K, split_k, tile, params):
    cfg = fam.Config(op, tile_m=tile[0], tile_n=tile[1], tile_k=tile[2], **params)
    A, W, sa, sw, bias, ref, apr, wpr = make_case(op, M, N, K, seed=M * 7 + N + K)
    out = emulate(cfg, A, W, sa, sw, bias, M, N, K, split_k, apr, wpr)
    assert not np.isnan(out).any()
    err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    assert err <= 1e-6, err


def test_a8w8_per_tensor_emulation():
    cfg = fam.Config("gemm_a8w8", tile_m=16, tile_n=32)
    A, W, sa, sw, bias, ref, apr, wpr = make_case("gemm_a8w8", 4, 40, 352, seed=3, variant="per_tensor")
    out = emulate(cfg, A, W, sa, sw, bias, 4, 40, 352, 2, apr, wpr)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) <= 1e-6


def test_weight_ring_config():
    """w_stages: 0 (register double buffer) or 2..8 ring slots, bf16 / fp8 / blockscale only; the
    ring's shared memory (slots x threads x 16-byte weight vectors) is part of the budget."""
    base = fam.Config("gemm_a8w8", tile_m=8, tile_n=32)
    ring = fam.Config("gemm_a8w8", tile_m=8, tile_n=32, w_stages=5, min_blocks=1)
    assert ring.w_stage_bytes == ring.threads * ring.groups * 2 * ring.V * 16 == 32 * 1024
    assert ring.smem_bytes - base.smem_bytes == 5 * ring.w_stage_bytes
    assert ring.meta()["w_bytes_in_flight_per_cta_smem_ring"] == 4 * ring.w_stage_bytes
    for bad in (1, 9, -1):
        with pytest.raises(ValueError, match="w_stages"):
            fam.Config("gemm_a16w16", w_stages=bad)
    for op in ("gemm_mxfp8", "gemm_mxfp4"):
        with pytest.raises(ValueError, match="w_stages"):
            fam.Config(op, w_stages=3)
    with pytest.raises(ValueError, match="shared memory"):  # 8 slots of 32 KiB do not fit
        fam.Config("gemm_a8w8", tile_m=8, tile_n=32, w_stages=8, min_blocks=1)


def test_ring_refill_config():
    """w_refill=1 (.rf): the same slots and shared memory, one more round in flight; only with a ring."""
    kw = dict(tile_m=2, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", mx_n=1, w_stages=2, a_rounds=14)
    plain = fam.Config("gemm_mxfp4", **kw)
    refill = fam.Config("gemm_mxfp4", w_refill=1, **kw)
    assert refill.smem_bytes == plain.smem_bytes
    assert plain.meta()["w_bytes_in_flight_per_cta_smem_ring"] == plain.w_stage_bytes
    assert refill.meta()["w_bytes_in_flight_per_cta_smem_ring"] == 2 * plain.w_stage_bytes == 32 * 1024
    for bad in (dict(w_refill=1), dict(w_refill=2, w_stages=3), dict(w_refill=1, w_stages=3)):
        with pytest.raises(ValueError, match="w_refill"):   # no ring, not 0 / 1, not an MX pipeline's ring
            fam.Config("gemm_a8w8", tile_m=8, tile_n=32, min_blocks=1, **bad)
    spec = {"op": "gemm_mxfp4", "tile_m": 2, "tile_n": 64, "tile_k": 256,
            "params": {"warps_k": 2, "mma": "wgmma", "mx_n": 1, "w_stages": 2, "a_rounds": 14, "w_refill": 1}}
    assert fam.Config.from_spec(spec).w_refill == 1


def test_unknown_kernel_params_are_refused():
    spec = {"op": "gemm_a8w8", "tile_m": 8, "tile_n": 16, "tile_k": 0, "params": {"l2_ahead": 0}}
    with pytest.raises(ValueError, match="unknown params"):
        fam.Config.from_spec(spec)
    spec["params"] = {"w_stages": 4, "min_blocks": 1, "warps_k": 8}
    assert fam.Config.from_spec(spec).w_stages == 4


def test_bulk_ring_holding_a_whole_k_slice():
    """red_ring: the reduction buffer lives in the ring's slots (not next to them), so 16 weight + 16 activation rows
    of a whole K = 7168 fp8 slice fit; row_pad=0 starts every row on a 128-byte boundary (packed when the round's
    bytes are a multiple of 128). Both only with a bulk ring."""
    rr = fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=64, warps_k=7, w_bulk=16, min_blocks=1, red_ring=1)
    assert rr.wb_row_bytes == 448 and 16 * rr.round_k == 7168
    plain = fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=64, warps_k=7, w_bulk=4, min_blocks=1)
    assert plain.smem_bytes - 4 * (plain.wb_slot_bytes + 8) - plain.red_bytes == rr.smem_bytes - 16 * (rr.wb_slot_bytes + 8)
    assert rr.smem_bytes <= fam.SMEM_LIMIT and rr.meta()["red_ring"] == 1
    np_ = fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=128, warps_k=8, w_bulk=7, min_blocks=1, red_ring=1,
                     row_pad=0)
    assert np_.wb_row_bytes == 1024 and np_.smem_bytes <= fam.SMEM_LIMIT
    # packed means aligned: a round of 448 bytes (3.5 x 128) gets 512-byte rows, so every row starts on 128 bytes
    odd = fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=64, warps_k=7, w_bulk=4, min_blocks=1, row_pad=0)
    assert odd.wb_row_bytes == 512 and odd.wb_slot_bytes == 32 * 512
    with pytest.raises(ValueError, match="shared memory"):   # padded rows: the whole slice does not fit
        fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=128, warps_k=8, w_bulk=7, min_blocks=1, red_ring=1)
    with pytest.raises(ValueError, match="red_ring"):
        fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=64, warps_k=7, min_blocks=1, red_ring=1)
    with pytest.raises(ValueError, match="row_pad"):
        fam.Config("gemm_a8w8", tile_m=16, tile_n=16, tile_k=64, warps_k=7, min_blocks=1, row_pad=0)


def test_bulk_ring_config():
    """w_bulk: B round slots of (tile_n weight rows + tile_m activation rows) x the round's bytes
    (+64 when that is a multiple of 128) replace the staged activation buffers (blockscale: plus the
    round's scales); bf16 / fp8 / blockscale with mma=sync only, not combined with the cp.async ring."""
    cfg = fam.Config("gemm_a8w8", tile_m=8, tile_n=16, tile_k=256, warps_k=7, w_bulk=4, min_blocks=1)
    round_bytes = 7 * 256
    assert cfg.wb_row_bytes == round_bytes + 64 and cfg.a_buf_bytes == 0
    assert cfg.wb_slot_bytes == (16 + 8) * cfg.wb_row_bytes
    base = fam.Config("gemm_a8w8", tile_m=8, tile_n=16, tile_k=256, warps_k=7, min_blocks=1)
    assert cfg.smem_bytes - (base.smem_bytes - 2 * base.a_buf_bytes) == 4 * (cfg.wb_slot_bytes + 8)
    meta = cfg.meta()
    assert meta["w_bulk"] == 4 and meta["w_bytes_in_flight_per_cta_bulk"] == 4 * 16 * round_bytes
    bf = fam.Config("gemm_a16w16", tile_m=16, tile_n=16, tile_k=128, warps_k=8, w_bulk=3, min_blocks=1)
    assert bf.wb_row_bytes == 8 * 128 * 2 + 64
    for bad in (-1, 17):
        with pytest.raises(ValueError, match="w_bulk"):
            fam.Config("gemm_a8w8", tile_m=8, tile_n=16, w_bulk=bad)
    blk = fam.Config("gemm_a8w8_blockscale", tile_m=8, tile_n=16, tile_k=128, warps_k=7, w_bulk=2, min_blocks=1)
    # 7 weight scales (16-byte aligned block), then [7][8] activation scales
    assert blk.wb_nkb == 7 and blk.wb_sa_offset == 32
    assert blk.wb_slot_bytes == (16 + 8) * blk.wb_row_bytes + 32 + 7 * 8 * 4
    with pytest.raises(ValueError, match="tile_n dividing 128"):
        fam.Config("gemm_a8w8_blockscale", tile_m=8, tile_n=48, tile_k=128, warps_k=2, w_bulk=2, min_blocks=1)
    for kw in (dict(op="gemm_mxfp4", w_bulk=1),
               dict(op="gemm_a8w8", w_stages=3), dict(op="gemm_a8w8", tile_n=64, mma="wgmma", warps_k=2)):
        with pytest.raises(ValueError, match="w_bulk"):
            fam.Config(**{"tile_m": 8, "tile_n": 16, "min_blocks": 1, "w_bulk": 2, **kw})
    with pytest.raises(ValueError, match="shared memory"):  # 8 slots of 44 KiB do not fit
        fam.Config("gemm_a8w8", tile_m=8, tile_n=16, tile_k=256, warps_k=7, w_bulk=8, min_blocks=1)
    spec = {"op": "gemm_a8w8", "tile_m": 8, "tile_n": 16, "tile_k": 256, "params": {"w_bulk": 4, "warps_k": 7}}
    assert fam.Config.from_spec(spec).w_bulk == 4


def test_bulk_ring_config_mxfp4():
    """w_bulk, MXFP4: the slot also holds the round's E8M0 scale bytes, one row per weight and per
    activation row, padded to an odd number of words (bank spread); K must be a multiple of 128 (the
    scales travel as 4-byte words) and the decoded activation stays staged (two buffers)."""
    cfg = fam.Config("gemm_mxfp4", tile_m=8, tile_n=32, tile_k=256, warps_k=4, w_bulk=3, min_blocks=2)
    assert cfg.round_k == 1024 and cfg.wb_row_bytes == 512 + 64
    assert cfg.wb_mx_srow == 36 and (cfg.wb_mx_srow // 4) % 2 == 1
    assert cfg.wb_slot_bytes == 40 * 576 + -(-40 * 36 // 16) * 16
    assert cfg.k_multiple == 128 and cfg.a_buf_bytes == 8 * (1024 * 2 + 32)
    odd = fam.Config("gemm_mxfp4", tile_m=8, tile_n=16, tile_k=256, warps_k=7, w_bulk=4, min_blocks=1)
    assert odd.round_k == 1792 and odd.wb_mx_srow == 60  # 14 words -> 15
    assert fam.Config("gemm_mxfp4", tile_m=8, tile_n=32, tile_k=256).k_multiple == 32
    for op in ("gemm_mxfp4", "gemm_mxfp8"):  # not through wgmma (measured slower and removed)
        with pytest.raises(ValueError, match="w_bulk"):
            fam.Config(op, tile_m=8, tile_n=64, tile_k=256, warps_k=2, mma="wgmma", w_bulk=3, min_blocks=1)
    with pytest.raises(ValueError, match="at least 2 slots"):
        fam.Config("gemm_mxfp4", tile_m=8, tile_n=32, tile_k=256, w_bulk=1, min_blocks=1)


def test_bulk_ring_config_mxfp8():
    """w_bulk, MXFP8: e4m3 rows like fp8 plus the MXFP4 bulk's E8M0 scale rows (weight rows, then activation
    rows, odd word count); nothing is staged (the activation fragments and scale bytes come from the slot)."""
    cfg = fam.Config("gemm_mxfp8", tile_m=8, tile_n=16, tile_k=128, warps_k=7, w_bulk=4, min_blocks=1)
    assert cfg.round_k == 896 and cfg.wb_row_bytes == 896 + 64
    assert cfg.wb_mx_srow == 28 and cfg.k_multiple == 128
    assert cfg.a_buf_bytes == 0 and cfg.sa_buf_bytes == 0
    assert cfg.wb_slot_bytes == 24 * 960 + -(-24 * 28 // 16) * 16


@pytest.mark.parametrize("tile_k,warps_k", [(128, 7), (128, 8), (256, 4)])
def test_bulk_mxfp8_scale_bytes_match_the_vectors(tile_k, warps_k):
    """read_bulk / round_ (MXFP8 bulk): lane t of warp wk reads the E8M0 byte of block q of its vector pair
    u at slot-row offset (wk * tile_k + 64 u) / 32 + q. For the lanes that own block q (t // 2 == q; the
    others' activation is masked) that byte must be the scale of every column of the lane's vector: block
    k0 / 32 + offset of the round's scale row (issue_mx_scales copies blocks from k0 / 32 on)."""
    cfg = fam.Config("gemm_mxfp8", tile_m=8, tile_n=16, tile_k=tile_k, warps_k=warps_k, w_bulk=3, min_blocks=1)
    TK, VE = cfg.tile_k, cfg.ve
    assert cfg.round_k // 32 <= cfg.wb_mx_srow  # the row holds every block of the round
    for r in range(3):
        k0 = r * cfg.round_k
        for wk in range(cfg.warps_k):
            for u in range(cfg.V):
                for t in range(4):
                    cols = [(r * warps_k + wk) * TK + fam.lane_vector_col(u, t, VE) + i for i in range(VE)]
                    q = t // 2
                    off = (wk * TK + u * 64) // 32 + q
                    assert {c // 32 for c in cols} == {k0 // 32 + off}, (r, wk, u, t)


@pytest.mark.parametrize("op,tile_n,tile_k,warps_k", [("gemm_a8w8", 16, 256, 7), ("gemm_a8w8", 16, 128, 14),
                                                      ("gemm_a16w16", 16, 256, 7), ("gemm_a16w16", 16, 128, 8),
                                                      ("gemm_a8w8", 32, 256, 6), ("gemm_a8w8", 80, 256, 3),
                                                      ("gemm_a16w16", 32, 128, 4)])
def test_bulk_slot_fragment_reads_are_conflict_free(op, tile_n, tile_k, warps_k):
    """The 16-byte fragment reads from a bulk slot (read_bulk / act_bulk: lane (g, t) of warp wk reads
    vector u of row g at byte (wk * tile_k + lane_vector_col(u, t)) * 16 / ve) hit 32 distinct banks
    in each 8-lane phase of an LDS.128, for the weight rows of every warp along N and the activation rows."""
    cfg = fam.Config(op, tile_m=8, tile_n=tile_n, tile_k=tile_k, warps_k=warps_k, w_bulk=2, min_blocks=1)
    for wk in range(cfg.warps_k):
        for u in range(cfg.V):
            for row0 in range(0, cfg.tile_n + 1, 8):  # weight rows g / g + 8 of each warp along N, activation rows
                for phase in range(4):
                    banks = []
                    for lane in range(8 * phase, 8 * phase + 8):
                        g, t = lane // 4, lane % 4
                        col = wk * cfg.tile_k + fam.lane_vector_col(u, t, cfg.ve)
                        addr = (row0 + g) * cfg.wb_row_bytes + col * 16 // cfg.ve
                        banks += [(addr // 4 + w) % 32 for w in range(4)]
                    assert sorted(banks) == list(range(32)), (wk, u, row0, phase)


@pytest.mark.parametrize("tile_m,tile_n,warps_k", [(8, 16, 7), (16, 16, 14), (16, 16, 8), (8, 16, 1), (16, 16, 16),
                                                  (8, 32, 4), (8, 32, 6), (16, 32, 4), (8, 80, 3)])
def test_bulk_copies_are_issued_once_per_row_by_every_warp(tile_m, tile_n, warps_k):
    """w_bulk: thread tid issues the copy of slot row bulk_issue_row(tid, warps) when it is below
    tile_n + tile_m: every row exactly once, and the rows are spread so that no warp issues more than
    ceil(rows / warps) of them (a warp issues its lanes' copies one after the other)."""
    cfg = fam.Config("gemm_a8w8", tile_m=tile_m, tile_n=tile_n, tile_k=128, warps_k=warps_k, w_bulk=2, min_blocks=1)
    rows, warps = cfg.tile_n + cfg.tile_m, cfg.threads // 32
    issued = {}
    for tid in range(cfg.threads):
        row = fam.bulk_issue_row(tid, warps)
        if row < rows:
            assert row not in issued, (row, tid, issued.get(row))
            issued[row] = tid // 32
    assert sorted(issued) == list(range(rows))
    per_warp = np.bincount(list(issued.values()), minlength=warps)
    assert per_warp.max() <= -(-rows // warps), per_warp


def test_bulk_needs_a_thread_per_slot_row():
    """64 weight rows + 16 activation rows cannot be issued by one warp's 32 threads: refused at build."""
    with pytest.raises(ValueError, match="tile_n \\+ tile_m threads"):
        fam.Config("gemm_a8w8", tile_m=16, tile_n=64, tile_k=128, groups=4, warps_k=1, w_bulk=2, min_blocks=1)
    fam.Config("gemm_a8w8", tile_m=16, tile_n=64, tile_k=128, groups=4, warps_k=3, w_bulk=2, min_blocks=1)


@pytest.mark.parametrize("K,split_k", [(7168, 1), (7168, 3), (1056, 2), (4112, 1)])
def test_bulk_rounds_cover_the_slice_once(K, split_k):
    """The bulk path's bookkeeping (issue_bulk / read_bulk): round r of slice s copies columns
    [k0, min(k0 + round_k, kend)), k0 = (kt_begin + r * warps_k) * tile_k; a lane's vector is kept iff it
    starts below kend. Every column of every slice is then read by exactly one kept vector, from the
    bytes its round copied, and nothing past K is kept."""
    cfg = fam.Config("gemm_a8w8", tile_m=8, tile_n=16, tile_k=256, warps_k=7, w_bulk=4, min_blocks=1)
    TK, WK, VE = cfg.tile_k, cfg.warps_k, cfg.ve
    KT = -(-K // TK)
    seen = np.zeros(K, dtype=int)
    for s in range(split_k):
        kt_begin, kt_end = s * KT // split_k, (s + 1) * KT // split_k
        kend = min(K, kt_end * TK)
        R = -(-(kt_end - kt_begin) // WK)
        for r in range(R):
            k0 = (kt_begin + r * WK) * TK
            copied = range(k0, k0 + min(kend - k0, WK * TK))
            assert len(copied) * 16 // VE % 16 == 0  # bulk copy sizes are multiples of 16 bytes
            for wk in range(WK):
                kt = kt_begin + r * WK + wk
                for u in range(cfg.V):
                    for t in range(4):
                        c = kt * TK + fam.lane_vector_col(u, t, VE)
                        if c < kend:
                            assert c in copied and c + VE - 1 in copied
                            seen[c:c + VE] += 1
    assert (seen == 1).all()


def test_e4m3_bit_move_to_bf16_is_exact_and_nan_codes_are_flagged():
    """The mx_bf16 MXFP8 decode (_ptx.e4m3x4_to_bf16 / e4m3x4_nan_bits, same formulas): every e4m3fn code
    moved into bf16 (sign to bit 15, the 7 exponent / mantissa bits to bits 4..10) is value x 2^-120 exactly,
    subnormals included; the two NaN codes become a finite 480 x 2^-120 there, and exactly they set bit 7 of
    their byte in the NaN bits (so the kernel gives their block a NaN factor)."""
    codes = list(range(256))
    for b0 in codes:
        x = b0 | (((b0 + 37) & 0xFF) << 8) | (((b0 + 101) & 0xFF) << 16) | (((b0 + 199) & 0xFF) << 24)
        even = u32(((x << 4) & 0x07F007F0) | ((x << 8) & 0x80008000))
        odd = u32(((x >> 4) & 0x07F007F0) | (x & 0x80008000))
        nan_bits = u32((x & 0x7F7F7F7F) + 0x01010101) & 0x80808080
        bytes_ = [(x >> (8 * i)) & 0xFF for i in range(4)]
        halves = [even & 0xFFFF, odd & 0xFFFF, even >> 16, odd >> 16]   # pairs (0, 2) and (1, 3)
        for i, (b, h) in enumerate(zip(bytes_, halves)):
            is_nan = (b & 0x7F) == 0x7F
            assert bool(nan_bits & (0x80 << (8 * i))) == is_nan, hex(b)
            got = bf16_bits_to_f(h) * 2.0 ** 120
            want = 480.0 * (-1 if b & 0x80 else 1) if is_nan else float(E4M3_TABLE[b])
            assert got == want, (hex(b), got, want)


def test_listed_ring_kernels_name_their_packed_rows_and_reduction_buffer():
    """The kernel list's .np / .rr tags say row_pad=0 / red_ring=1 (and nothing else does), and a packed kernel's slot
    rows all start on 128-byte boundaries, the layout its rows were measured with (sixty-second session)."""
    import csv
    from source_modules import ROOT
    rows = [r for r in csv.DictReader(line for line in open(ROOT / "kernels/configs/sm_90a.kernels.csv")
                                      if not line.startswith("#")) if r["family"] == "gemm_splitk_decode"]
    packed = 0
    for r in rows:
        params = dict(kv.split("=") for kv in r["params"].split(";") if kv)
        spec = {"op": r["op"], "in_dtype": r["in_dtype"], "out_dtype": r["out_dtype"], "tile_m": int(r["tile_m"]),
                "tile_n": int(r["tile_n"]), "tile_k": int(r["tile_k"]),
                "params": {k: (v if k == "mma" else int(v)) for k, v in params.items()}}
        cfg = fam.Config.from_spec(spec)
        tags = r["name"].split(".")
        assert ("np" in tags) == (cfg.row_pad == 0), r["name"]
        assert ("rr" in tags) == (cfg.red_ring == 1), r["name"]
        if cfg.row_pad == 0:
            packed += 1
            assert cfg.wb_row_bytes % 128 == 0 and cfg.wb_slot_bytes % 128 == 0, r["name"]
    assert packed >= 5
