"""Inline-PTX building blocks shared by the CUDA families written with raw pointers
(kernels/cuda/gemm_splitk_decode.py, gemm_mxfp.py; the Hopper core's split-K partial stores and stream-K flags,
_hopper_gemm.py):
16-byte global loads, shared-memory
accesses, integer bit operations, and exact conversions of the 8-bit and MX formats
(e4m3 -> f16, e2m1 -> bf16, E8M0 -> fp32).

`helpers(l2_prefetch)` must be called after CuTe DSL is imported (inside kernel-class creation);
it returns a namespace of functions that emit `llvm.inline_asm` into the kernel being traced.
"""
import types


def helpers(l2_prefetch: int = 0) -> types.SimpleNamespace:
    """l2_prefetch: 0, 64, 128 or 256 — the L2 prefetch hint of the streamed weight loads."""
    from cutlass import Float32, Int32, Int64
    from cutlass._mlir.dialects import llvm
    from cutlass.cutlass_dsl import T

    def _asm(rtypes, args, text, cons, side=False):
        vals = [x.ir_value() for x in args]
        kw = dict(has_side_effects=side, is_align_stack=False, asm_dialect=llvm.AsmDialect.AD_ATT)
        if not rtypes:
            llvm.inline_asm(None, vals, text, cons, **kw)
            return None
        if len(rtypes) == 1:
            return llvm.inline_asm(rtypes[0], vals, text, cons, **kw)
        st = llvm.StructType.get_literal(rtypes)
        r = llvm.inline_asm(st, vals, text, cons, **kw)
        return [llvm.extractvalue(ty, r, [i]) for i, ty in enumerate(rtypes)]

    def bop(op, a, b):
        return Int32(_asm([T.i32()], [Int32(a), Int32(b)], f"{op} $0, $1, $2;", "=r,r,r"))

    def band(a, b):
        return bop("and.b32", a, b)

    def bshr(a, b):
        return bop("shr.u32", a, b)

    def bshl(a, b):
        return bop("shl.b32", a, b)

    def umul(a, b):
        return bop("mul.lo.u32", a, b)

    def umin(a, b):
        return bop("min.u32", a, b)

    def umax(a, b):
        return bop("max.u32", a, b)

    def hmul_bf16x2(a, b):
        return bop("mul.rn.bf16x2", a, b)

    def bits_f32(x):
        return Float32(_asm([T.f32()], [Int32(x)], "mov.b32 $0, $1;", "=f,r"))

    l2 = {0: "", 64: ".L2::64B", 128: ".L2::128B", 256: ".L2::256B"}[l2_prefetch]

    def ldg_w(addr):
        """16 weight bytes, streamed (no L1 allocation)."""
        r = _asm([T.i32()] * 4, [Int64(addr)],
                 f"ld.global.nc.L1::no_allocate{l2}.v4.b32 {{$0,$1,$2,$3}}, [$4];",
                 "=r,=r,=r,=r,l")
        return [Int32(x) for x in r]

    def ldg_w8(addr):
        """8 weight bytes, streamed (no L1 allocation)."""
        r = _asm([T.i32()] * 2, [Int64(addr)],
                 f"ld.global.nc.L1::no_allocate{l2}.v2.b32 {{$0,$1}}, [$2];", "=r,=r,l")
        return [Int32(x) for x in r]

    def ldg_b32(addr):
        """One 32-bit word through the read-only path (scales)."""
        return Int32(_asm([T.i32()], [Int64(addr)], "ld.global.nc.b32 $0, [$1];", "=r,l"))

    def cp_async_16(smem_addr, gaddr):
        """16 weight bytes global -> shared without passing through registers (LDGSTS, L1 bypass)."""
        _asm([], [Int32(smem_addr), Int64(gaddr)],
             f"cp.async.cg.shared.global{l2} [$0], [$1], 16;", "r,l", side=True)

    def cp_async_commit():
        _asm([], [], "cp.async.commit_group;", "", side=True)

    def cp_async_wait(pending):
        """Wait until at most `pending` (a constant) of this thread's committed groups are in flight."""
        _asm([], [], f"cp.async.wait_group {int(pending)};", "", side=True)

    def ldg_a(addr, pred):
        """16 activation bytes (small, re-read by every CTA column: keep the default caching)."""
        r = _asm([T.i32()] * 4, [Int64(addr), Int32(pred)],
                 "{ .reg .pred p; setp.ne.b32 p, $5, 0; mov.b32 $0, 0; mov.b32 $1, 0; "
                 "mov.b32 $2, 0; mov.b32 $3, 0;\n"
                 "@p ld.global.nc.v4.b32 {$0,$1,$2,$3}, [$4]; }",
                 "=r,=r,=r,=r,l,r")
        return [Int32(x) for x in r]

    def ldg_b32_p(addr, pred):
        """One 32-bit word through the read-only path, 0 where pred is 0."""
        return Int32(_asm([T.i32()], [Int64(addr), Int32(pred)],
                          "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, 0;\n"
                          "@p ld.global.nc.b32 $0, [$1]; }", "=r,l,r"))

    def ldg_u8_p(addr, pred):
        return Int32(_asm([T.i32()], [Int64(addr), Int32(pred)],
                          "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, 0;\n"
                          "@p ld.global.nc.u8 $0, [$1]; }", "=r,l,r"))

    def ldg_u8(addr):
        return Int32(_asm([T.i32()], [Int64(addr)], "ld.global.nc.u8 $0, [$1];", "=r,l"))

    def ldg_f32(addr, pred):
        return Float32(_asm([T.f32()], [Int64(addr), Int32(pred)],
                            "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov.b32 $0, 0f00000000;\n"
                            "@p ld.global.nc.f32 $0, [$1]; }", "=f,l,r"))

    def lds_v4(addr):
        r = _asm([T.i32()] * 4, [Int32(addr)], "ld.shared.v4.b32 {$0,$1,$2,$3}, [$4];",
                 "=r,=r,=r,=r,r", side=True)
        return [Int32(x) for x in r]

    def lds_v2f(addr):
        r = _asm([T.f32()] * 2, [Int32(addr)], "ld.shared.v2.f32 {$0,$1}, [$2];", "=f,=f,r",
                 side=True)
        return [Float32(x) for x in r]

    def lds_v2(addr):
        r = _asm([T.i32()] * 2, [Int32(addr)], "ld.shared.v2.b32 {$0,$1}, [$2];", "=r,=r,r", side=True)
        return [Int32(x) for x in r]

    def lds_f32(addr):
        return Float32(_asm([T.f32()], [Int32(addr)], "ld.shared.f32 $0, [$1];", "=f,r", side=True))

    def lds_u8(addr):
        return Int32(_asm([T.i32()], [Int32(addr)], "ld.shared.u8 $0, [$1];", "=r,r", side=True))

    def sts_v4(addr, v):
        _asm([], [Int32(addr)] + [Int32(x) for x in v], "st.shared.v4.b32 [$0], {$1,$2,$3,$4};",
             "r,r,r,r,r", side=True)

    def sts_f32(addr, v):
        _asm([], [Int32(addr), Float32(v)], "st.shared.f32 [$0], $1;", "r,f", side=True)

    def stg_f32(addr, v):
        _asm([], [Int64(addr), Float32(v)], "st.global.f32 [$0], $1;", "l,f", side=True)

    def stg_v2f32(addr, a, b):
        _asm([], [Int64(addr), Float32(a), Float32(b)], "st.global.v2.f32 [$0], {$1,$2};", "l,f,f", side=True)

    def ldg_cg_v2f32(addr):
        """Two floats from L2 (.cg: no L1 line that another CTA's later writes could leave stale)."""
        r = _asm([T.f32()] * 2, [Int64(addr)], "ld.global.cg.v2.f32 {$0,$1}, [$2];", "=f,=f,l,~{memory}",
                 side=True)
        return [Float32(x) for x in r]

    def ld_acquire_b64(addr):
        return Int64(_asm([T.i64()], [Int64(addr)], "ld.acquire.gpu.global.b64 $0, [$1];", "=l,l,~{memory}",
                          side=True))

    def st_release_b64(addr, v):
        _asm([], [Int64(addr), Int64(v)], "st.release.gpu.global.b64 [$0], $1;", "l,l,~{memory}", side=True)

    def st_relaxed_b64(addr, v):
        _asm([], [Int64(addr), Int64(v)], "st.relaxed.gpu.global.b64 [$0], $1;", "l,l,~{memory}", side=True)

    def stg_bf16(addr, v):
        _asm([], [Int64(addr), Float32(v)],
             "{ .reg .b16 h; cvt.rn.bf16.f32 h, $1; st.global.b16 [$0], h; }", "l,f", side=True)

    def stg_f16(addr, v):
        _asm([], [Int64(addr), Float32(v)],
             "{ .reg .b16 h; cvt.rn.f16.f32 h, $1; st.global.b16 [$0], h; }", "l,f", side=True)

    def ld_f32(addr):
        return Float32(_asm([T.f32()], [Int64(addr)], "ld.global.nc.f32 $0, [$1];", "=f,l"))

    def ld_f32_plain(addr):
        return Float32(_asm([T.f32()], [Int64(addr)], "ld.global.f32 $0, [$1];", "=f,l",
                            side=True))

    def mma(kind, a, b, c):
        ty = "bf16" if kind == "bf16" else "f16"
        r = _asm([T.f32()] * 4, [Int32(x) for x in a] + [Int32(x) for x in b] + [Float32(x) for x in c],
                 f"mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 "
                 "{$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
                 "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f")
        return [Float32(x) for x in r]

    def e4m3x4_to_f16(x):
        """4 e4m3 bytes -> two f16x2 words (bytes 0,1 and 2,3), exact."""
        r = _asm([T.i32()] * 2, [Int32(x)],
                 "{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $2; cvt.rn.f16x2.e4m3x2 $0, lo; "
                 "cvt.rn.f16x2.e4m3x2 $1, hi; }", "=r,=r,r")
        return [Int32(v) for v in r]

    def e8m0_f32(b):
        """E8M0 byte -> 2^(b-127) as fp32 (b = 0 -> 2^-127, a subnormal; b = 255 -> NaN, the
        format's NaN: bit 22 set on top of the all-ones exponent)."""
        nan_bit = bshl(bshr(bop("add.u32", b, 1), 8), 22)  # 1 << 22 iff b == 255
        return bits_f32(bop("or.b32", umax(bshl(b, 23), 0x00400000), nan_bit))

    def e8m0_f32_packed(x, k):
        """Byte k of x as E8M0 -> fp32."""
        if k == 3:
            b = bshr(x, 24)
        else:
            b = bshr(band(x, 0xFF << (8 * k)), 8 * k)
        return e8m0_f32(b)

    def e2m1x8_to_bf16(x):
        """8 e2m1 nibbles -> 4 bf16x2 words holding value * 2^-126, pairs (0,4) (1,5) (2,6) (3,7)."""
        x8 = bshr(x, 8)
        msk = 0x81C081C0
        return [band(umul(band(x, 0x000F000F), 0x1040), msk),
                band(umul(band(x, 0x00F000F0), 0x104), msk),
                band(umul(band(x8, 0x000F000F), 0x1040), msk),
                band(umul(band(x8, 0x00F000F0), 0x104), msk)]

    def e4m3x4_to_bf16(x):
        """4 e4m3 bytes -> two bf16x2 words holding value * 2^-120 (exact for every code, subnormals too: the 7
        exponent / mantissa bits move to bf16 bits 4..10, the sign to bit 15), pairs (0, 2) and (1, 3)."""
        even = bop("or.b32", band(bshl(x, 4), 0x07F007F0), band(bshl(x, 8), 0x80008000))
        odd = bop("or.b32", band(bshr(x, 4), 0x07F007F0), band(x, 0x80008000))
        return [even, odd]

    def e4m3x4_nan_bits(x):
        """Bit 7 of byte i set iff byte i of x is an e4m3fn NaN code (0x7F / 0xFF), once masked with 0x80808080
        (OR several words first): e4m3x4_to_bf16 maps those codes to 480 x 2^-120, so callers turn the block's
        factor into NaN instead."""
        return bop("add.u32", band(x, 0x7F7F7F7F), 0x01010101)

    def e2m1x8_to_e4m3(x):
        """8 e2m1 nibbles -> two words of 4 e4m3 bytes holding value * 2^-6 (exact for all 16 codes,
        subnormal 0.5 included: sign to bit 7, the 3 magnitude bits to bits 2..4), the even nibbles
        (0, 2, 4, 6) in the first word and the odd ones in the second."""
        even = bop("or.b32", band(bshl(x, 2), 0x1C1C1C1C), band(bshl(x, 4), 0x80808080))
        odd = bop("or.b32", band(bshr(x, 2), 0x1C1C1C1C), band(x, 0x80808080))
        return [even, odd]

    def e2m1x8_to_e4m3_lut(x, lut_lo, lut_hi):
        """8 e2m1 nibbles -> two words of 4 e4m3 bytes through a magnitude table: byte i of the first word is
        nibble i's magnitude entry (nibbles 0..3), of the second nibble i + 4's; the sign bit of each nibble
        goes to bit 7 of its byte. The table (lut_lo: magnitudes 0..3, lut_hi: 4..7, e4m3 bytes with bit 7
        clear) carries the block's power-of-two factor (e2m1_e4m3_lut). 9 instructions per 8 values: the
        magnitudes by two byte permutes with the masked nibbles as selectors, the signs by two permutes of the
        word and of the word shifted by 4 (odd nibbles' sign bits are bit 7 of their byte already, even ones'
        are bit 3)."""
        r = _asm([T.i32()] * 2, [Int32(x), Int32(lut_lo), Int32(lut_hi)],
                 "{ .reg .b32 m, h, y, t, s;\n"
                 "and.b32 m, $2, 0x77777777; shr.u32 h, m, 16; shl.b32 y, $2, 4;\n"
                 "prmt.b32 t, $3, $4, m; prmt.b32 s, $2, y, 0x1504; and.b32 s, s, 0x80808080; or.b32 $0, t, s;\n"
                 "prmt.b32 t, $3, $4, h; prmt.b32 s, $2, y, 0x3726; and.b32 s, s, 0x80808080; or.b32 $1, t, s; }",
                 "=r,=r,r,r,r")
        return [Int32(v) for v in r]

    def e2m1_e4m3_lut(delta):
        """The magnitude table of e2m1x8_to_e4m3_lut for a block 2^delta below its slab's largest (delta >= 0):
        entry i = e4m3(|e2m1 code i| * 2^(6 - delta)), rounded to nearest even (exact for delta <= 14: down to
        e4m3's subnormals), all zeros from delta 19 on (below half the smallest subnormal). 2^6 puts the largest
        block's 6.0 at 384 (e4m3 max 448)."""
        p = bits_f32(bshl(bop("max.s32", Int32(133) - Int32(delta), 0), 23))   # 2^(6 - delta); 0 from delta 133
        mags = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
        v = [fmul_exact(p, Float32(m_)) for m_ in mags]
        return f32x4_to_e4m3x4(*v[:4]), f32x4_to_e4m3x4(*v[4:])

    def e8m0_quad_rebias(word):
        """A 4-block quad's E8M0 word (byte b = block b) -> (its largest byte S, the word of S - byte b per byte).
        Every byte of the difference fits its byte (no borrow: S >= each byte)."""
        r = _asm([T.i32()] * 2, [Int32(word)],
                 "{ .reg .b32 lo, hi, m, s;\n"
                 "and.b32 lo, $2, 0x00FF00FF; shr.u32 hi, $2, 8; and.b32 hi, hi, 0x00FF00FF;\n"
                 "max.u16x2 m, lo, hi; shr.u32 s, m, 16; and.b32 m, m, 0xFFFF; max.u32 $0, m, s;\n"
                 "mul.lo.u32 s, $0, 0x01010101; sub.u32 $1, s, $2; }",
                 "=r,=r,r")
        return Int32(r[0]), Int32(r[1])

    def bf16x2_pow2(field):
        """bf16x2 word with both halves 2^(field-127) (field clamped to 255 = inf)."""
        return umul(bshl(umin(field, 255), 7), 0x00010001)

    def b2i(c):
        return Int32(c)

    def stg_b32(addr, v):
        _asm([], [Int64(addr), Int32(v)], "st.global.b32 [$0], $1;", "l,r", side=True)

    def stg_v4(addr, v):
        _asm([], [Int64(addr)] + [Int32(x) for x in v], "st.global.v4.b32 [$0], {$1,$2,$3,$4};",
             "l,r,r,r,r", side=True)

    def f16x2_to_f32(x):
        """f16x2 word -> (low half, high half) as fp32, exact."""
        r = _asm([T.f32()] * 2, [Int32(x)],
                 "{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $2; cvt.f32.f16 $0, lo; cvt.f32.f16 $1, hi; }",
                 "=f,=f,r")
        return [Float32(v) for v in r]

    def fmul_exact(a, b):
        """a * b in fp32, round-to-nearest, subnormals kept (inline PTX: no fast-math flush)."""
        return Float32(_asm([T.f32()], [Float32(a), Float32(b)], "mul.rn.f32 $0, $1, $2;", "=f,f,f"))

    def pack_bf16x2(lo, hi):
        """Two fp32 -> one bf16x2 word (lo in the low half), each rounded to nearest even."""
        return Int32(_asm([T.i32()], [Float32(lo), Float32(hi)], "cvt.rn.bf16x2.f32 $0, $2, $1;",
                          "=r,f,f"))

    def e2m1_to_f32(word, shift):
        """The e2m1 nibble at bit `shift` of `word` -> its value as fp32, exact: magnitudes
        m = 2..7 are normal (exponent m >> 1, mantissa m & 1: bits (m << 22) + 0x3F000000),
        m = 1 is 0.5 (0x3F000000) and m = 0 is zero, so m < 2 gives m * 0x3F000000."""
        return bits_f32(_asm([T.i32()], [Int32(word)],
                             "{ .reg .pred p; .reg .b32 t, u, s;\n"
                             f"shr.u32 t, $1, {shift}; and.b32 s, t, 8; shl.b32 s, s, 28; and.b32 t, t, 7;\n"
                             "shl.b32 u, t, 22; add.u32 u, u, 0x3F000000; setp.lt.u32 p, t, 2;\n"
                             "@p mul.lo.u32 u, t, 0x3F000000; or.b32 $0, u, s; }", "=r,r"))

    def f32x4_to_e4m3x4(v0, v1, v2, v3):
        """Four fp32 -> one word of 4 e4m3 bytes (v0 in byte 0), each rounded to nearest even with
        saturation to +-448 (satfinite); NaN stays NaN."""
        return Int32(_asm([T.i32()], [Float32(v0), Float32(v1), Float32(v2), Float32(v3)],
                          "{ .reg .b16 l, h; cvt.rn.satfinite.e4m3x2.f32 l, $2, $1;\n"
                          "cvt.rn.satfinite.e4m3x2.f32 h, $4, $3; mov.b32 $0, {l, h}; }", "=r,f,f,f,f"))

    def redux_max_u32(x):
        """Largest x over the (fully active) warp."""
        return Int32(_asm([T.i32()], [Int32(x)], "redux.sync.max.u32 $0, $1, 0xffffffff;", "=r,r", side=True))

    def shfl_bfly(x, lane_mask):
        """x of the lane whose index differs from this one's in the bits of lane_mask (the whole warp active)."""
        return Int32(_asm([T.i32()], [Int32(x)], f"shfl.sync.bfly.b32 $0, $1, {int(lane_mask)}, 0x1f, 0xffffffff;",
                          "=r,r", side=True))

    def ldg_b64_p(addr, pred):
        """8 bytes through the read-only path, zeros where pred is 0."""
        r = _asm([T.i32()] * 2, [Int64(addr), Int32(pred)],
                 "{ .reg .pred p; setp.ne.b32 p, $3, 0; mov.b32 $0, 0; mov.b32 $1, 0;\n"
                 "@p ld.global.nc.v2.b32 {$0,$1}, [$2]; }", "=r,=r,l,r")
        return [Int32(x) for x in r]

    def stg_v4_p(addr, v, pred):
        """16 bytes to global memory where pred != 0."""
        _asm([], [Int64(addr)] + [Int32(x) for x in v] + [Int32(pred)],
             "{ .reg .pred p; setp.ne.b32 p, $5, 0;\n@p st.global.v4.b32 [$0], {$1,$2,$3,$4}; }",
             "l,r,r,r,r,r", side=True)

    def stg_f32_p(addr, v, pred):
        _asm([], [Int64(addr), Float32(v), Int32(pred)],
             "{ .reg .pred p; setp.ne.b32 p, $2, 0;\n@p st.global.f32 [$0], $1; }", "l,f,r", side=True)

    def sts_b32(addr, v):
        _asm([], [Int32(addr), Int32(v)], "st.shared.b32 [$0], $1;", "r,r", side=True)

    # ---- TMA bulk copies (cp.async.bulk) completing on shared-memory mbarriers
    def mbar_init(addr, count):
        _asm([], [Int32(addr), Int32(count)], "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", side=True)

    def fence_mbar_init():
        """Makes the mbarrier initializations visible to the async proxy (the bulk copies)."""
        _asm([], [], "fence.mbarrier_init.release.cluster;", "", side=True)

    def mbar_arrive_expect_tx(addr, nbytes):
        """One arrival that also announces `nbytes` bytes of bulk copies completing on this phase."""
        _asm([], [Int32(addr), Int32(nbytes)],
             "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r", side=True)

    def mbar_wait(addr, parity):
        """Spins until the phase with this parity (0/1) of the mbarrier has completed."""
        _asm([], [Int32(addr), Int32(parity)],
             "{ .reg .pred p;\nFLY_MBAR_WAIT:\n"
             "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
             "@!p bra FLY_MBAR_WAIT; }", "r,r", side=True)

    def bulk_g2s(smem_addr, gaddr, nbytes, mbar):
        """nbytes (multiple of 16, 16-byte aligned ends) global -> shared by the TMA unit, completing
        as transaction bytes on mbar."""
        _asm([], [Int32(smem_addr), Int64(gaddr), Int32(nbytes), Int32(mbar)],
             "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];",
             "r,l,r,r", side=True)

    def cp_async_4_zfill(smem_addr, gaddr, valid):
        """4 bytes global -> shared (cp.async.ca, LDGSTS); zeros when valid == 0 (nothing is read)."""
        _asm([], [Int32(smem_addr), Int64(gaddr), Int32(valid)],
             "{ .reg .pred p; .reg .b32 n; setp.ne.b32 p, $2, 0; selp.b32 n, 4, 0, p;\n"
             "cp.async.ca.shared.global [$0], [$1], 4, n; }", "r,l,r", side=True)

    def cp_async_mbar_arrive(mbar):
        """An arrival on mbar once all of this thread's earlier cp.async copies have landed (noinc:
        the mbarrier's expected count includes it)."""
        _asm([], [Int32(mbar)], "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r", side=True)

    # ---- wgmma (sm_90a warpgroup MMA) with the A operand in registers, for the decode kernels
    def fence_proxy_async():
        """Makes this thread's st.shared writes visible to the async proxy (wgmma operand reads)."""
        _asm([], [], "fence.proxy.async.shared::cta;", "", side=True)

    def wgmma_fence():
        """Orders this thread's register writes (A fragments) before the next wgmma."""
        _asm([], [], "wgmma.fence.sync.aligned;", "", side=True)

    def wgmma_commit():
        _asm([], [], "wgmma.commit_group.sync.aligned;", "", side=True)

    def wgmma_wait(regs):
        """Waits for every committed wgmma group of this warpgroup; the accumulator registers pass
        through the asm so that nothing reads them before the wait."""
        n = len(regs)
        cons = ",".join(["=f"] * n) + "," + ",".join(str(i) for i in range(n))
        r = _asm([T.f32()] * n, [Float32(x) for x in regs], "wgmma.wait_group.sync.aligned 0;", cons,
                 side=True)
        return [Float32(x) for x in (r if n > 1 else [r])]

    def wgmma_wait_pending(regs, pending):
        """wgmma_wait, but returns once at most `pending` committed groups of this warpgroup still run (the
        registers passed through belong to an older group)."""
        n = len(regs)
        cons = ",".join(["=f"] * n) + "," + ",".join(str(i) for i in range(n))
        r = _asm([T.f32()] * n, [Float32(x) for x in regs], f"wgmma.wait_group.sync.aligned {int(pending)};", cons,
                 side=True)
        return [Float32(x) for x in (r if n > 1 else [r])]

    def smem_desc_kmajor(addr, lbo, sbo):
        """wgmma shared-memory matrix descriptor, K-major without swizzle: start address, LBO (byte
        distance of core matrices adjacent along K), SBO (along M/N), all >> 4."""
        lo = bop("or.b32", band(bshr(addr, 4), 0x3FFF), (lbo >> 4) << 16)
        return Int64(_asm([T.i64()], [Int32(lo), Int32(sbo >> 4)], "mov.b64 $0, {$1, $2};", "=l,r,r"))

    def wgmma_e4m3(n, d, a, desc, accumulate):
        """D[64 x n] (+)= A[64 x 32] (registers: 4 words of e4m3) x B[32 x n] (smem descriptor), f32
        accumulate; `accumulate` (0/1) is wgmma's scale-d. n = 8 or 16."""
        nd = n // 2
        dl = "{" + ",".join(f"${i}" for i in range(nd)) + "}"
        al = "{" + ",".join(f"${2 * nd + i}" for i in range(4)) + "}"
        text = ("{ .reg .pred p; setp.ne.b32 p, $%d, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n%dk32.f32.e4m3.e4m3 %s, %s, $%d, p, 1, 1; }"
                % (2 * nd + 5, n, dl, al, 2 * nd + 4))
        cons = (",".join(["=f"] * nd) + "," + ",".join(str(i) for i in range(nd)) + ",r,r,r,r,l,r")
        r = _asm([T.f32()] * nd, [Float32(x) for x in d] + [Int32(x) for x in a]
                 + [Int64(desc), Int32(accumulate)], text, cons, side=True)
        return [Float32(x) for x in r]

    def wgmma_bf16(n, d, a, desc):
        """D[64 x n] += A[64 x 16] (registers: 4 words of bf16x2, the mma.sync m16n8k16 A layout per warp) x
        B[16 x n] (smem descriptor, K-major: trans-b 0), f32 accumulate. n = 8 .. 256, a multiple of 8."""
        nd = n // 2
        dl = "{" + ",".join(f"${i}" for i in range(nd)) + "}"
        al = "{" + ",".join(f"${2 * nd + i}" for i in range(4)) + "}"
        text = ("{ .reg .pred p; .reg .b32 o; mov.b32 o, 1; setp.ne.b32 p, o, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n%dk16.f32.bf16.bf16 %s, %s, $%d, p, 1, 1, 0; }"
                % (n, dl, al, 2 * nd + 4))
        cons = (",".join(["=f"] * nd) + "," + ",".join(str(i) for i in range(nd)) + ",r,r,r,r,l")
        r = _asm([T.f32()] * nd, [Float32(x) for x in d] + [Int32(x) for x in a] + [Int64(desc)], text, cons,
                 side=True)
        return [Float32(x) for x in r]

    def wgmma_e4m3_fresh(n, a, desc):
        """D[64 x n] = A[64 x 32] x B[32 x n] into fresh registers: wgmma_e4m3 with scale-d false, but with
        D as pure outputs (no zeroed input registers, whose writes between two wgmma groups made ptxas
        wait for the first group before issuing the second) and the predicate a constant inside the
        asm block."""
        nd = n // 2
        dl = "{" + ",".join(f"${i}" for i in range(nd)) + "}"
        al = "{" + ",".join(f"${nd + i}" for i in range(4)) + "}"
        text = ("{ .reg .pred p; .reg .b32 z; mov.b32 z, 0; setp.ne.b32 p, z, 0;\n"
                "wgmma.mma_async.sync.aligned.m64n%dk32.f32.e4m3.e4m3 %s, %s, $%d, p, 1, 1; }"
                % (n, dl, al, nd + 4))
        cons = ",".join(["=f"] * nd) + ",r,r,r,r,l"
        r = _asm([T.f32()] * nd, [Int32(x) for x in a] + [Int64(desc)], text, cons, side=True)
        return [Float32(x) for x in r]

    return types.SimpleNamespace(**{name: fn for name, fn in locals().items() if callable(fn)
                                    and name not in ("Float32", "Int32", "Int64", "T")})
