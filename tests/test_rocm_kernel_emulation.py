"""The ROCm gemm_a16w16 kernel's addressing, checked on the CPU.

kernels/rocm/gemm_a16w16.py keeps all index arithmetic in `_Geometry`; the FlyDSL kernel and the
NumPy emulator `emulate()` call the same methods. The emulator models the buffer-resource bounds
(loads past the resource read 0, stores past it are dropped; a vector straddling the end is an
error), the LDS tile (NaN-initialised, so reading an unwritten element poisons the result), the
MFMA 16x16 operand/result lane layouts (k16 pairs on gfx942, k32 on gfx950) and the output
masking, and writes into a guarded output buffer. Comparing with A @ W.T + bias over ragged
shapes checks every tile, every lane and every bound without a GPU."""

import numpy as np
import pytest

import rocm_testlib as rt

def _module():
    import importlib.util

    path = rt.ROOT / "kernels" / "rocm" / "gemm_a16w16.py"
    spec = importlib.util.spec_from_file_location("flygemm_rocm_gemm_a16w16", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


K16 = _module()


def preshuffle(w):
    n, k = w.shape
    return w.reshape(n // 16, 16, k // 8, 8).transpose(0, 2, 1, 3).reshape(-1)


def run(arch, tile, M, N, K, pad_a=0, pad_o=0, bias=True, params=None, seed=0):
    tm, tn, tk = tile
    cfg = K16.config_from_spec(dict(arch=arch, in_dtype="bf16", out_dtype="fp32", tile_m=tm, tile_n=tn, tile_k=tk,
                                    params=params or {}))
    rng = np.random.default_rng(seed)
    lda, ldo = K + pad_a, N + pad_o
    a = rng.standard_normal((M, lda))
    a[:, K:] = np.nan  # row padding must never be read
    w = rng.standard_normal((N, K))
    b = rng.standard_normal(N) if bias else None
    guard = 37
    out = np.full(M * ldo + guard, -12345.0)
    K16.emulate(cfg, a.reshape(-1), preshuffle(w), b, M, N, K, lda, ldo, out)
    got = out[:M * ldo].reshape(M, ldo)
    ref = a[:, :K] @ w.T + (b if bias else 0.0)
    np.testing.assert_allclose(got[:, :N], ref, rtol=1e-12, atol=1e-9)
    assert np.all(got[:, N:] == -12345.0), "wrote into the row padding of out"
    assert np.all(out[M * ldo:] == -12345.0), "wrote past the end of out"
    return got[:, :N]


CASES = [
    # tile, M, N, K, pad_a, pad_o, bias, params
    ((128, 128, 64), 130, 272, 200, 8, 16, True, None),
    ((128, 128, 64), 128, 128, 64, 0, 0, False, None),
    ((64, 128, 64), 1, 256, 4096, 0, 0, True, None),
    ((16, 64, 128), 5, 96, 136, 0, 8, True, None),
    ((16, 64, 256), 33, 64, 8, 0, 0, True, None),
    ((32, 32, 64), 33, 48, 72, 8, 0, True, None),          # wm=2, wn=2 by default
    ((64, 64, 64), 70, 80, 96, 0, 0, True, {"wm": 4, "wn": 1}),
    ((256, 64, 32), 300, 64, 40, 0, 0, True, None),
    ((64, 256, 64), 64, 272, 128, 0, 0, False, {"lds_pad": 0}),
    ((32, 64, 64), 7, 64, 0, 0, 0, True, None),             # K == 0: result is the bias
]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "t{}x{}x{}-M{}N{}K{}".format(*c[0], *c[1:4]))
def test_emulated_kernel_matches_reference(arch, case):
    tile, M, N, K, pad_a, pad_o, bias, params = case
    run(arch, tile, M, N, K, pad_a, pad_o, bias, params)


def test_config_validation():
    ok = dict(arch="gfx942", in_dtype="bf16", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=64)
    cfg = K16.config_from_spec(ok)
    assert (cfg.wm, cfg.wn, cfg.m_rep, cfg.n_rep, cfg.k_steps) == (1, 4, 8, 2, 2)
    assert cfg.mfma == "v_mfma_f32_16x16x16_bf16"
    assert K16.config_from_spec(dict(ok, arch="gfx950", in_dtype="fp16")).mfma == "v_mfma_f32_16x16x32_f16"
    assert cfg.grid(130, 272) == (2, 3, 1)
    bad = [
        dict(ok, tile_k=48),                    # not a multiple of 32
        dict(ok, tile_m=16, tile_k=64),         # A tile not a whole number of 16-byte vectors per thread
        dict(ok, tile_n=40),
        dict(ok, arch="gfx90a"),
        dict(ok, out_dtype="fp8_e4m3fn"),
        dict(ok, tile_m=256, tile_k=256),       # LDS 132 KiB > 64 KiB on gfx942
        dict(ok, params={"wm": 3, "wn": 1}),
    ]
    for spec in bad:
        with pytest.raises(ValueError):
            K16.config_from_spec(spec)
    # the same LDS footprint fits gfx950's 160 KiB
    K16.config_from_spec(dict(ok, arch="gfx950", tile_m=256, tile_k=256))


# --------------------------------------------------------------------------------------------
# gemm_a8w8: fp8/int8 bytes, decoded as each arch's MFMA reads them; scales and bias
# --------------------------------------------------------------------------------------------
def _module_a8w8():
    import importlib.util

    path = rt.ROOT / "kernels" / "rocm" / "gemm_a8w8.py"
    spec = importlib.util.spec_from_file_location("flygemm_rocm_gemm_a8w8", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


K8 = _module_a8w8()
FP8 = {"gfx942": "fp8_e4m3fnuz", "gfx950": "fp8_e4m3fn"}


def preshuffle8(w):
    """[N, K] bytes -> preshuffled [N/16, K/16, 16, 16] bytes, flat (DESIGN.md, kp = 16)."""
    n, k = w.shape
    return w.reshape(n // 16, 16, k // 16, 16).transpose(0, 2, 1, 3).reshape(-1)


def _ref_decode(in_dtype):
    """Byte -> value of the DTYPE (independent of the arch): torch's decoding when available."""
    torch = pytest.importorskip("torch")
    if in_dtype == "int8":
        t = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.int8)
    else:
        t = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(getattr(torch, in_dtype.replace("fp8", "float8")))
    return t.to(torch.float64).numpy()


@pytest.mark.parametrize("fmt", ["e4m3fn", "e4m3fnuz"])
def test_fp8_decoder_matches_torch(fmt):
    torch = pytest.importorskip("torch")
    want = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(getattr(torch, "float8_" + fmt))
    want = want.to(torch.float64).numpy()
    got = K8.fp8_table(fmt)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok])
    assert np.nanmax(got) == {"e4m3fn": 448.0, "e4m3fnuz": 240.0}[fmt]
    assert np.array_equal(K8.int8_table(), np.arange(256, dtype=np.int16).astype(np.uint8).view(np.int8))


def _random_bytes(rng, shape, in_dtype):
    """Random operand bytes, NaN encodings excluded (every other code, subnormals and the
    extremes included)."""
    table = _ref_decode(in_dtype)
    codes = np.flatnonzero(~np.isnan(table))
    return rng.choice(codes, size=shape).astype(np.uint8)


def run8(arch, in_dtype, tile, M, N, K, pad_a=0, pad_o=0, bias=True, a_row=True, w_row=True, params=None,
         seed=0, decode_as=None):
    tm, tn, tk = tile
    cfg = K8.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype="fp32", tile_m=tm, tile_n=tn,
                                   tile_k=tk, params=params or {}))
    rng = np.random.default_rng(seed)
    lda, ldo = K + pad_a, N + pad_o
    a = np.full((M, lda), np.nan)  # row padding must never be read (NaN poisons the result)
    a[:, :K] = _random_bytes(rng, (M, K), in_dtype)
    w = _random_bytes(rng, (N, K), in_dtype)
    sa = rng.uniform(0.25, 2.0, M if a_row else 1)
    sw = rng.uniform(0.25, 2.0, N if w_row else 1)
    b = rng.standard_normal(N) if bias else None
    guard = 37
    out = np.full(M * ldo + guard, -12345.0)
    K8.emulate(cfg, a.reshape(-1), preshuffle8(w).astype(np.float64), b, sa, sw, M, N, K, lda, ldo, out,
               a_per_row=a_row, w_per_row=w_row)
    got = out[:M * ldo].reshape(M, ldo)
    dec = _ref_decode(decode_as or in_dtype)
    acc = dec[a[:, :K].astype(np.int64)] @ dec[w.astype(np.int64)].T
    ref = acc * sa.reshape(-1, 1) * sw.reshape(1, -1) + (b if bias else 0.0)
    assert np.all(got[:, N:] == -12345.0), "wrote into the row padding of out"
    assert np.all(out[M * ldo:] == -12345.0), "wrote past the end of out"
    return got[:, :N], ref, acc


CASES8 = [
    # tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, params
    ((128, 128, 128), 130, 272, 400, 16, 16, True, True, True, None),
    ((128, 128, 128), 128, 128, 128, 0, 0, False, False, False, None),
    ((64, 128, 128), 1, 256, 4096, 0, 0, True, True, False, None),
    ((16, 64, 256), 5, 96, 272, 0, 8, True, False, True, None),
    ((16, 64, 256), 33, 64, 16, 0, 0, True, True, True, None),
    ((32, 64, 128), 33, 48, 144, 16, 0, True, False, False, None),  # wm=1, wn=4; N tail inside the tile
    ((64, 64, 128), 70, 80, 208, 0, 0, True, True, True, {"wm": 4, "wn": 1}),
    ((64, 256, 128), 64, 272, 256, 0, 0, False, True, True, {"lds_pad": 0}),
    ((32, 64, 128), 7, 64, 0, 0, 0, True, True, True, None),  # K == 0: result is the bias
]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("dtype", ["fp8", "int8"])
@pytest.mark.parametrize("case", CASES8, ids=lambda c: "t{}x{}x{}-M{}N{}K{}".format(*c[0], *c[1:4]))
def test_emulated_a8w8_matches_reference(arch, dtype, case):
    tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, params = case
    in_dtype = FP8[arch] if dtype == "fp8" else "int8"
    got, ref, acc = run8(arch, in_dtype, tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, params)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_emulated_a8w8_int8_is_exact(arch):
    """int8: the emulated int32 accumulator equals the exact integer product (unit scales, no
    bias), including the extreme codes -128 * -128."""
    tile, M, N, K = (64, 128, 128), 65, 144, 1024
    cfg = K8.config_from_spec(dict(arch=arch, in_dtype="int8", out_dtype="fp32", tile_m=64, tile_n=128,
                                   tile_k=128))
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (M, K)).astype(np.uint8)
    w = rng.integers(0, 256, (N, K)).astype(np.uint8)
    a[0, :] = 0x80  # -128
    w[0, :] = 0x80
    out = np.full(M * N, -1.0)
    K8.emulate(cfg, a.reshape(-1), preshuffle8(w), None, np.ones(1), np.ones(1), M, N, K, K, N, out)
    exact = a.view(np.int8).astype(np.int64) @ w.view(np.int8).astype(np.int64).T
    assert exact[0, 0] == 128 * 128 * K
    assert np.array_equal(out.reshape(M, N), exact.astype(np.float64))


def test_gfx942_fp8_mfma_reads_fnuz():
    """The emulated MFMA decodes bytes in the ARCH's fp8 format (gfx942: e4m3fnuz, gfx950:
    e4m3fn). Checked in both directions: the right pairing matches, the swapped one does not."""
    for arch, other in (("gfx942", "fp8_e4m3fn"), ("gfx950", "fp8_e4m3fnuz")):
        got, ref, _ = run8(arch, FP8[arch], (64, 128, 128), 64, 128, 256, bias=False)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)
        got2, wrong, _ = run8(arch, FP8[arch], (64, 128, 128), 64, 128, 256, bias=False, decode_as=other)
        finite = np.isfinite(wrong)
        assert not np.allclose(got2[finite], wrong[finite], rtol=1e-3)


def test_a8w8_config_validation():
    ok = dict(arch="gfx942", in_dtype="fp8_e4m3fnuz", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128)
    cfg = K8.config_from_spec(ok)
    assert (cfg.wm, cfg.wn, cfg.m_rep, cfg.n_rep, cfg.k_steps, cfg.vec, cfg.lds_pad) == (1, 4, 8, 2, 2, 16, 16)
    assert cfg.lds_bytes == 128 * 144
    assert cfg.mfma == "v_mfma_f32_16x16x32_fp8_fp8" and cfg.mfma_per_tile == 8 * 2 * 2 * 2
    assert K8.config_from_spec(dict(ok, in_dtype="int8")).mfma == "v_mfma_i32_16x16x32_i8"
    g950 = K8.config_from_spec(dict(ok, arch="gfx950", in_dtype="fp8_e4m3fn"))
    assert g950.mfma == "v_mfma_scale_f32_16x16x128_f8f6f4" and g950.mfma_per_tile == 8 * 2 * 1
    assert K8.config_from_spec(dict(ok, arch="gfx950", in_dtype="int8")).mfma == "v_mfma_i32_16x16x64_i8"
    # k64 tiles: fine for gfx942 and gfx950 int8, not for gfx950's k128 fp8 MFMA
    K8.config_from_spec(dict(ok, tile_k=64, tile_m=256))
    K8.config_from_spec(dict(ok, arch="gfx950", in_dtype="int8", tile_k=64, tile_m=256))
    bad = [
        dict(ok, in_dtype="fp8_e4m3fn"),                         # OCP fp8 on gfx942: its MFMA reads fnuz
        dict(ok, arch="gfx950", in_dtype="fp8_e4m3fnuz"),        # fnuz on gfx950
        dict(ok, arch="gfx950", in_dtype="fp8_e4m3fn", tile_k=64, tile_m=256),
        dict(ok, tile_k=96),
        dict(ok, in_dtype="bf16"),
        dict(ok, out_dtype="int8"),
        dict(ok, params={"lds_pad": 8}),                         # not whole 16-byte vectors
        dict(ok, tile_m=256, tile_k=256),                        # LDS 68 KiB > 64 KiB on gfx942
    ]
    for spec in bad:
        with pytest.raises(ValueError):
            K8.config_from_spec(spec)
    K8.config_from_spec(dict(ok, arch="gfx950", in_dtype="fp8_e4m3fn", tile_m=256, tile_k=256))
