"""The ROCm MX family (kernels/rocm/gemm_mxfp.py: gemm_mxfp8, gemm_mxfp4 on gfx950), checked
without AMD hardware.

1. Emulator: the kernel's dataflow (the shared core's addressing, LDS and buffer bounds, plus the
   family's E8M0 scale addressing per 32-block) run through a NumPy model of the scaled MFMA
   (CDNA4 operand slot layout, e2m1 nibbles, E8M0 scales taken from lane 16*block + row) matches
   the float64 contract on quantized data whose scales differ wildly between blocks, and the CPU
   oracle within one output ulp; ragged M, N and K tails, padded strides, bias; a NaN scale block
   stays in its own row / column. Counter-checks show the comparison can fail: a scale routed to
   the wrong block or lane, or a decoder with the wrong nibble order, is caught.
2. Build outputs (build/kernels/gfx950/gemm_mxfp*): the scaled MFMA with the right operand
   format modifiers (fp4: cbsz:4 blgp:4; fp8: none), scale operands that are VGPRs filled by byte
   loads from memory (never the constant 0x7f of unit scales), one byte load per 16-row /
   16-column block per MFMA group, no scale work in the epilogue, code-object limits.
3. The gfx942 decision: MX on gfx942 is an error naming the arch, the reason and the alternative.
"""
import json
import os
import pathlib
import re

import numpy as np
import pytest

import rocm_testlib as rt
from source_modules import load_source

torch = pytest.importorskip("torch")


def _module():
    return load_source("kernels/rocm/gemm_mxfp.py", "flygemm_rocm_gemm_mxfp")


MX = _module()
FP8, FP4 = MX.FP8, MX.FP4
BYTES_PER_K = {FP8: 1.0, FP4: 0.5}


def quant():
    from flygemm import quant as q

    return q


# ----------------------------------------------------------------------------- data
def mx_operands(in_dtype, rows, K, rng, spread=12):
    """Quantized [rows, K] operand (bytes, uint8) and its E8M0 scales (uint8 [rows, K/32]), from
    data whose magnitude changes by up to 2^spread from one 32-block to the next, so a scale
    applied to the wrong block or row is a large error."""
    q = quant()
    x = torch.from_numpy(rng.standard_normal((rows, K)))
    x = x * torch.from_numpy(np.exp2(rng.integers(-spread, spread + 1, (rows, K // 32)))).repeat_interleave(32, 1)
    data, scale = q.quantize_mxfp8(x.float()) if in_dtype == FP8 else q.quantize_mxfp4(x.float())
    return data.view(torch.uint8).numpy().copy(), scale.view(torch.uint8).numpy().copy()


def dequant(in_dtype, data, scale):
    """float64 [rows, K] per the contract, through flygemm.quant (independent of the kernel)."""
    q = quant()
    d = torch.from_numpy(data)
    s = torch.from_numpy(scale).view(torch.float8_e8m0fnu)
    if in_dtype == FP8:
        return q.dequantize_mxfp8(d.view(torch.float8_e4m3fn), s).double().numpy()
    return q.dequantize_mxfp4(d.view(torch.float4_e2m1fn_x2), s).double().numpy()


def preshuffle_bytes(w):
    """[N, Kb] bytes -> preshuffled [N/16, Kb/16, 16, 16], flat (DESIGN.md: 16-byte units)."""
    n, kb = w.shape
    return w.reshape(n // 16, 16, kb // 16, 16).transpose(0, 2, 1, 3).reshape(-1)


def run(in_dtype, tile, M, N, K, pad_a=0, pad_o=0, bias=True, params=None, seed=0, edit=None):
    """Emulates one kernel config; returns (got [M, N], float64 reference, a, w, sa, sw, b).
    ``edit(a, w, sa, sw)`` may change the quantized operands before both computations."""
    tm, tn, tk = tile
    cfg = MX.config_from_spec(dict(arch="gfx950", in_dtype=in_dtype, out_dtype="bf16", tile_m=tm, tile_n=tn,
                                   tile_k=tk, params=params or {}))
    rng = np.random.default_rng(seed)
    a, sa = mx_operands(in_dtype, M, K, rng)
    w, sw = mx_operands(in_dtype, N, K, rng)
    if edit:
        edit(a, w, sa, sw)
    kbytes = int(K * BYTES_PER_K[in_dtype])
    lda, ldo = kbytes + pad_a, N + pad_o
    a_mem = np.full((M, lda), np.nan)  # row padding must never be read (NaN poisons the result)
    a_mem[:, :kbytes] = a
    b = rng.standard_normal(N) if bias else None
    guard = 37
    out = np.full(M * ldo + guard, -12345.0)
    MX.emulate(cfg, a_mem.reshape(-1), preshuffle_bytes(w), b, sa.reshape(-1), sw.reshape(-1), M, N, K, lda, ldo,
               out)
    got = out[:M * ldo].reshape(M, ldo)
    assert np.all(got[:, N:] == -12345.0), "wrote into the row padding of out"
    assert np.all(out[M * ldo:] == -12345.0), "wrote past the end of out"
    with np.errstate(invalid="ignore"):
        ref = dequant(in_dtype, a, sa) @ dequant(in_dtype, w, sw).T + (b if bias else 0.0)
    return got[:, :N], ref, (a, w, sa, sw, b)


def assert_close(got, ref):
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12 * scale)


CASES = [
    # tile (K logical), M, N, K, pad_a (bytes), pad_o, bias, params
    ((128, 128, 256), 130, 272, 352, 16, 16, True, None),    # ragged M, N tail, K tail inside the 2nd tile
    ((128, 128, 256), 128, 128, 256, 0, 0, False, None),
    ((64, 128, 256), 1, 256, 4096, 0, 0, True, None),          # decode row, many K tiles
    ((16, 64, 512), 5, 96, 544, 0, 8, True, None),             # 4 MFMA groups per tile, K tail of one block
    ((16, 64, 512), 33, 64, 32, 0, 0, True, None),             # K = one block: 15 of 16 blocks masked
    ((64, 64, 128), 33, 48, 160, 16, 0, True, None),           # one MFMA group per tile
    ((64, 64, 256), 70, 80, 288, 0, 0, True, {"wm": 4, "wn": 1}),
    ((64, 256, 256), 64, 272, 256, 0, 0, False, {"lds_pad": 0}),
    ((128, 128, 256), 130, 272, 352, 16, 16, True, {"async_copy": 1}),  # A by LDS DMA, two stages
]


@pytest.mark.parametrize("in_dtype", [FP8, FP4])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "t{}x{}x{}-M{}N{}K{}".format(*c[0], *c[1:4]))
def test_emulated_mx_kernel_matches_contract(in_dtype, case):
    tile, M, N, K, pad_a, pad_o, bias, params = case
    got, ref, _ = run(in_dtype, tile, M, N, K, pad_a, pad_o, bias, params)
    assert_close(got, ref)


@pytest.mark.parametrize("in_dtype", [FP8, FP4])
def test_emulated_mx_kernel_matches_cpu_oracle(in_dtype):
    """Rounded once to bf16, the emulated kernel equals the CPU op (the oracle) within one ulp, plus the
    oracle's own fp32 accumulation error where a sum cancels (its order depends on the CPU's matmul
    blocking: a 16-core machine exceeded the bare ulp by 1.8e-3 on an output near zero)."""
    fg = pytest.importorskip("flygemm")
    M, N, K = 70, 144, 416
    got, _, (a, w, sa, sw, b) = run(in_dtype, (64, 128, 256), M, N, K, bias=True, seed=3)
    dt = torch.float8_e4m3fn if in_dtype == FP8 else torch.float4_e2m1fn_x2
    e8 = torch.float8_e8m0fnu
    oracle = getattr(fg, MX.OPS[in_dtype])(torch.from_numpy(a).view(dt), torch.from_numpy(w).view(dt),
                                         torch.from_numpy(sa).view(e8), torch.from_numpy(sw).view(e8),
                                         torch.from_numpy(b).float())
    emu = torch.from_numpy(got).to(torch.bfloat16).double()
    diff = (emu - oracle.double()).abs()
    absprod = np.abs(dequant(in_dtype, a, sa)) @ np.abs(dequant(in_dtype, w, sw)).T + np.abs(b)
    fp32_sum = torch.from_numpy((K + 1) * 2.0 ** -24 * absprod)
    ulp = torch.finfo(torch.bfloat16).eps * emu.abs() + fp32_sum + 2.0 ** -133
    assert torch.all(diff <= ulp), f"max excess {(diff - ulp).max().item():.3e}"


@pytest.mark.parametrize("in_dtype", [FP8, FP4])
def test_nan_scale_stays_in_its_row_and_column(in_dtype):
    """A NaN block (E8M0 255) of A row 5 and of W column 17 poisons exactly that row / column: the
    K-tail blocks past K/32 are never read from the neighbouring row's scales."""
    def poison(a, w, sa, sw):
        sa[5, 0] = MX.E8M0_NAN
        sw[17, 0] = MX.E8M0_NAN
        sa[4, -1] = sw[16, -1] = 3  # the last blocks of the rows before them stay finite

    got, ref, _ = run(in_dtype, (64, 128, 256), 20, 48, 160, bias=False, edit=poison)
    nan = np.isnan(got)
    assert nan[5].all() and nan[:, 17].all()
    keep = np.ones_like(nan)
    keep[5], keep[:, 17] = False, False
    assert not nan[keep].any()
    assert_close(got[keep], ref[keep])


@pytest.mark.parametrize("in_dtype", [FP8, FP4])
def test_misrouted_scales_are_caught(in_dtype, monkeypatch):
    """Counter-check: a plausible wrong scale routing (each lane's K groups contiguous, i.e.
    block lg * groups + g instead of 4 g + lg) gives a different result, so the emulator tests
    the scale addressing and not only the data."""
    def wrong(self, t, kt, g):
        c = self.c
        return kt * (MX.logical_tile_k(c) // MX.MX_BLOCK) + t["lg"] * MX.mfma_groups(c) + g

    monkeypatch.setattr(MX.MxGeometry, "scale_block", wrong)
    got, ref, _ = run(in_dtype, (16, 64, 512), 16, 64, 512, bias=False)
    assert not np.allclose(got, ref, rtol=1e-3)


def test_scale_from_the_wrong_lane_is_caught():
    """Counter-check on the MFMA model: reading (row r, block b) from lane 4 r + b instead of
    16 b + r changes the product."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (MX.WAVE, 32)).astype(np.float64)
    b = rng.integers(0, 256, (MX.WAVE, 32)).astype(np.float64)
    a[(a % 128) == 127] = 0  # no NaN codes
    b[(b % 128) == 127] = 0
    sa = rng.integers(100, 150, MX.WAVE)
    sw = np.full(MX.WAVE, 127)
    right = MX.scaled_mfma_model(a, b, sa, sw, 0, FP8)
    swapped = sa.reshape(4, 16).T.reshape(-1)  # lane 4 r + b holds what lane 16 b + r held
    assert not np.allclose(right, MX.scaled_mfma_model(a, b, swapped, sw, 0, FP8), rtol=1e-6)


def test_e2m1_nibble_order_matches_the_contract():
    """The MFMA model reads byte p of a lane's fp4 operand as values 2p (low nibble) and 2p + 1
    (high nibble) of that lane's 32: the order flygemm.quant packs (OCP / torch float4_e2m1fn_x2).
    The swapped reading disagrees with quant.unpack_fp4."""
    q = quant()
    rng = np.random.default_rng(0)
    frag = rng.integers(0, 256, (MX.WAVE, 16)).astype(np.uint8)
    mat = MX.operand_matrix(frag.astype(np.float64), FP4)
    lanes = np.arange(MX.WAVE)
    for lane in lanes[::7]:
        row, group = lane % 16, lane // 16
        want = q.unpack_fp4(torch.from_numpy(frag[lane])).double().numpy()
        assert np.array_equal(mat[row, 32 * group:32 * group + 32], want)
    swapped = ((frag & 0xF) << 4) | (frag >> 4)
    assert not np.array_equal(MX.operand_matrix(swapped.astype(np.float64), FP4), mat)


def test_fp8_operand_decode_ignores_other_modules_named_like_rocm_families(monkeypatch):
    """The fp8 operand model decodes e4m3 through the ROCm core (a unique module name), not a bare `gemm_a8w8`
    import: with the CUDA family of that name loaded first (as the GPU test files do), the emulator test failed
    with an ImportError on the GPU machine. Every byte decodes as torch's float8_e4m3fn does."""
    import types
    monkeypatch.setitem(__import__("sys").modules, "gemm_a8w8", types.ModuleType("gemm_a8w8"))
    frag = np.tile(np.arange(256, dtype=np.uint8).reshape(8, 32), (MX.WAVE // 8, 1))
    mat = MX.operand_matrix(frag.astype(np.float64), FP8)
    want = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).double().numpy()
    for lane in range(0, MX.WAVE, 5):
        row, group = lane % 16, lane // 16
        slots = 64 * (np.arange(32) // 16) + 16 * group + np.arange(32) % 16
        np.testing.assert_array_equal(mat[row, slots], want[frag[lane]])


def test_e2m1_and_e8m0_tables_match_torch():
    codes = torch.arange(16, dtype=torch.uint8)
    pairs = (codes | (codes << 4)).view(torch.float4_e2m1fn_x2)  # both nibbles the same code
    assert np.array_equal(MX.e2m1_table(), quant().unpack_fp4(pairs).double().numpy()[::2])
    e8 = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.float8_e8m0fnu)
    want = quant().e8m0_to_float(e8).double().numpy()
    got = MX.e8m0_table()
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[:255], want[:255])


def test_config_rules():
    ok = dict(arch="gfx950", in_dtype=FP8, out_dtype="bf16", tile_m=128, tile_n=128, tile_k=256)
    c8 = MX.config_from_spec(ok)
    assert (c8.tile_k, c8.k_steps, c8.form.steps, MX.mfma_groups(c8), c8.mfma_per_tile) == (256, 4, 2, 2, 32)
    c4 = MX.config_from_spec(dict(ok, in_dtype=FP4))
    assert (c4.tile_k, c4.k_steps, c4.form.steps, MX.mfma_groups(c4), c4.mfma_per_tile) == (128, 2, 1, 2, 32)
    assert MX.kernel_name(c4) == "gemm_mxfp4.fp4_e2m1_x2.bf16.t128x128x256"
    assert c4.lds_bytes == 128 * (128 + 16)
    with pytest.raises(ValueError, match="gfx942 has none"):
        MX.config_from_spec(dict(ok, arch="gfx942"))
    with pytest.raises(ValueError, match="multiple of 128"):
        MX.config_from_spec(dict(ok, tile_k=192))
    for bad in (dict(ok, out_dtype="fp32"), dict(ok, in_dtype="int8"), dict(ok, tile_n=40)):
        with pytest.raises(ValueError):
            MX.config_from_spec(bad)


# ----------------------------------------------------------------------------- build outputs
def _build_dir():
    return pathlib.Path(os.environ.get("FLYGEMM_KERNEL_BUILD_DIR", rt.ROOT / "build" / "kernels"))


def _built_mx():
    return [(mf.parent, json.loads(mf.read_text())) for mf in sorted(_build_dir().glob("gfx950/gemm_mxfp*/*.meta.json"))]


BUILT = _built_mx()


def _csv_kernels():
    lines = [ln for ln in (rt.ROOT / "kernels" / "configs" / "gfx950.kernels.csv").read_text().splitlines()
             if ln and not ln.startswith("#")]
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:] if ",gemm_mxfp," in ln]


def test_every_mx_kernel_is_built():
    if not (_build_dir() / "gfx950").is_dir():
        pytest.skip("no gfx950 build outputs (run tools/build_kernels.py --arch gfx950)")
    want = {k["name"] for k in _csv_kernels()}
    assert want, "no gemm_mxfp rows in gfx950.kernels.csv"
    assert {m["name"] for _, m in BUILT} == want
    assert {k["op"] for k in _csv_kernels()} == {"gemm_mxfp8", "gemm_mxfp4"}


def _body(isa):
    return [ln for ln in isa.splitlines() if ln.strip() and not ln.lstrip().startswith((";", "."))]


def _operands(line):
    """Operands of an instruction line, modifiers (op_sel:..., cbsz:...) dropped."""
    ops = line.split(None, 1)[1]
    ops = re.split(r"\s+(?:op_sel|op_sel_hi|cbsz|blgp|abid)\b", ops)[0]
    return [o.strip() for o in ops.split(",")]


@pytest.mark.skipif(not BUILT, reason="no gemm_mxfp build outputs (run tools/build_kernels.py --arch gfx950)")
@pytest.mark.parametrize("item", BUILT, ids=lambda it: it[1]["name"])
def test_scaled_mfma_with_real_scales(item):
    kdir, meta = item
    cfg = meta["config"]
    in_dtype = cfg["in_dtype"]
    body = _body((kdir / meta["isa"]).read_text())
    mfma = [ln for ln in body if re.match(r"\s*v_mfma", ln)]
    assert {ln.split()[0] for ln in mfma} == {MX.MNEMONIC}
    # operand formats: fp4 e2m1 for both operands (cbsz:4 blgp:4); fp8 e4m3 is format 0 (no modifier)
    for ln in mfma:
        if in_dtype == FP4:
            assert re.search(r"\bcbsz:4\b", ln) and re.search(r"\bblgp:4\b", ln), ln
        else:
            assert not re.search(r"\b(cbsz|blgp):", ln), ln
        assert "op_sel:" not in ln, ln  # every scale register holds its E8M0 in byte 0
        ops = _operands(ln)
        assert len(ops) == 6, ln
        nregs = {FP8: 8, FP4: 4}[in_dtype]  # operand registers: 32 bytes fp8, 16 bytes fp4
        for src in ops[1:3]:
            lo, hi = map(int, re.fullmatch(r"[va]\[(\d+):(\d+)\]", src).groups())
            assert hi - lo + 1 == nregs, ln
    # the scale operands are VGPRs written by byte loads from memory, never an immediate/constant
    loaded = set(re.findall(r"^\s*buffer_load_ubyte\s+(v\d+),", "\n".join(body), re.M))
    for ln in mfma:
        for reg in _operands(ln)[4:6]:
            assert re.fullmatch(r"v\d+", reg), f"scale operand {reg} is not a VGPR: {ln}"
            assert reg in loaded, f"scale operand {reg} is not filled by a byte load: {ln}"
            assert not re.search(rf"^\s*v_mov_b32(_e32)?\s+{reg},\s*(0x7f|127)\s*$", "\n".join(body), re.M), reg
    # one byte load per 16-row / 16-column block per MFMA group, per emitted K tile
    wm, wn = meta["waves"]
    mr, nr = cfg["tile_m"] // (16 * wm), cfg["tile_n"] // (16 * wn)
    groups = meta["mfma_groups_per_k_tile"]
    per_tile_mfma = mr * nr * groups
    assert per_tile_mfma == meta["mfma_per_k_tile"] and len(mfma) % per_tile_mfma == 0
    tiles = len(mfma) // per_tile_mfma
    n_bytes = len([ln for ln in body if re.match(r"\s*buffer_load_ubyte\s", ln)])
    assert n_bytes == tiles * (mr + nr) * groups, (n_bytes, tiles, mr, nr, groups)
    # the scales are applied in the MFMA: the epilogue loads only the bias (one dword per 16
    # columns) and has no fp32 scale multiply
    assert len([ln for ln in body if re.match(r"\s*buffer_load_dword\s", ln)]) == nr
    assert meta["kernel_args"] == ["out", "a", "w", "bias", "a_scale", "w_scale", "M", "N", "K", "lda", "ldo"]
    assert meta["kernarg_segment_size"] == rt.kernarg_size("gemm_mxfp") == 68
    assert meta["requires"]["K_multiple"] == 32
    assert meta["tile_k_logical"] == cfg["tile_k"] * MX.K_PER_BYTE[in_dtype]


# ----------------------------------------------------------------------------- gfx942
def test_gfx942_mx_is_a_clear_error():
    """The decision for gfx942 (docs/ROCM.md, 'MX formats'): no kernel, and a call says why and
    what to use instead, through the production lookup."""
    pytest.importorskip("flygemm")
    lookup = torch.ops.flygemm_testing.dispatch_lookup
    kernels = "k16,gfx942,gemm_a16w16,bf16,bf16,8,16,1\n"
    for op, dt, deq in (("gemm_mxfp8", "fp8_e4m3fn", "dequantize_mxfp8"),
                        ("gemm_mxfp4", "fp4_e2m1_x2", "dequantize_mxfp4")):
        with pytest.raises(NotImplementedError) as exc:
            lookup(kernels, "", "gfx942", op, dt, "bf16", 16, 4096, 4096)
        msg = str(exc.value)
        assert f"flygemm.{op} on gfx942" in msg and "not supported on gfx942" in msg, msg
        assert f"flygemm.quant.{deq}" in msg and "flygemm.gemm_a16w16" in msg and "gfx950" in msg, msg
    # a kernel for the combination (e.g. a future software path) takes precedence over the verdict
    sw = kernels + "k_sw,gfx942,gemm_mxfp8,fp8_e4m3fn,bf16,32,16,1\n"
    assert lookup(sw, "", "gfx942", "gemm_mxfp8", "fp8_e4m3fn", "bf16", 16, 4096, 4096).startswith("k_sw,")


def test_gfx942_mx_error_through_explain():
    fg = pytest.importorskip("flygemm")
    if "gfx942" not in fg.info()["archs"]:
        pytest.skip("no gfx942 kernels linked")
    with pytest.raises(NotImplementedError, match=r"gemm_mxfp4 on gfx942.*not supported on gfx942.*gemm_a16w16"):
        fg.explain("gemm_mxfp4", 16, 4096, 4096, torch.float4_e2m1fn_x2, device="gfx942")
