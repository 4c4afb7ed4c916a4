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

from source_modules import load_source


def _module_named(name):
    return load_source(f"kernels/rocm/{name}.py", f"flygemm_rocm_{name}")


def _module():
    return _module_named("gemm_a16w16")


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
    return _module_named("gemm_a8w8")


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


# --------------------------------------------------------------------------------------------
# Split-K (kernels/rocm/_splitk.py): partials into the modelled fp32 workspace, then the reduce
# --------------------------------------------------------------------------------------------


SK = _module_named("_splitk")

# tile, M, N, K, split_k: ragged M, split_k dividing / not dividing the K tiles, more slices than
# K tiles (clamped), split_k = 1 (direct, no workspace)
SPLIT_CASES16 = [
    ((16, 64, 256), 5, 96, 1000, 3),     # 4 K tiles in 3 slices (floor partition: 1, 1, 2)
    ((16, 64, 256), 1, 64, 4096, 4),     # 16 tiles, 4 slices
    ((64, 128, 64), 70, 272, 640, 4),    # ragged M over two row tiles, 10 tiles in 4 slices
    ((16, 64, 128), 9, 64, 1024, 16),    # 8 tiles: clamped to 8 slices
    ((32, 64, 64), 33, 48, 72, 2),       # K tail inside the last tile of the last slice
    ((16, 64, 256), 3, 64, 512, 1),      # direct
]


def _ids(c):
    return "t{}x{}x{}-M{}N{}K{}-S{}".format(*c[0], *c[1:])


def test_k_slice_partition():
    """Slices are whole K tiles, contiguous, cover every tile once, differ by at most one tile,
    and none is empty once split_k is clamped to the tile count."""
    for k_tiles in range(1, 40):
        for split_k in range(1, 17):
            S = SK.effective_split_k(split_k, k_tiles)
            parts = [SK.k_slice(s, k_tiles, S) for s in range(S)]
            assert parts[0][0] == 0 and parts[-1][1] == k_tiles
            assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
            sizes = [e - b for b, e in parts]
            assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1, (k_tiles, split_k, sizes)
    assert SK.effective_split_k(8, 100, N=130) == 1  # N % 4: the reduce's 16-byte rows; runs unsplit
    assert SK.effective_split_k(4, 100, N=65536, M_pad=2048) == 1  # 2 GiB of slices: 32-bit offsets
    assert SK.effective_split_k(4, 100, N=65536, M_pad=1024) == 4


def test_workspace_layout_is_the_contract():
    """workspace[s, m, n] of the fp32 [S, M_pad, N] tensor the op allocates (csrc/device_ops.cpp)."""
    S, M_pad, N = 3, 32, 48
    ws = np.arange(S * M_pad * N).reshape(S, M_pad, N)
    for s, m, n in [(0, 0, 0), (2, 31, 47), (1, 5, 7)]:
        assert ws.reshape(-1)[SK.ws_offset(s, m, n, M_pad, N)] == ws[s, m, n]
    wg = SK.WsGeometry(np.where)
    assert wg.reduce_bytes(S, M_pad, N) == ((S - 1) * M_pad * N + N) * 4
    assert wg.tile_bytes(rows_valid=5, n_left=20, N=N) == (4 * N + 20) * 4


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("case", SPLIT_CASES16, ids=_ids)
def test_emulated_a16w16_split_k(arch, case):
    tile, M, N, K, S = case
    tm, tn, tk = tile
    cfg = K16.config_from_spec(dict(arch=arch, in_dtype="bf16", out_dtype="bf16", tile_m=tm, tile_n=tn, tile_k=tk))
    rng = np.random.default_rng(S)
    lda, ldo = K + 8, N + 16
    a = rng.standard_normal((M, lda))
    a[:, K:] = np.nan
    w = rng.standard_normal((N, K))
    b = rng.standard_normal(N)
    out = np.full(M * ldo + 37, -12345.0)
    K16.emulate(cfg, a.reshape(-1), preshuffle(w), b, M, N, K, lda, ldo, out, split_k=S)
    got = out[:M * ldo].reshape(M, ldo)
    np.testing.assert_allclose(got[:, :N], a[:, :K] @ w.T + b, rtol=1e-12, atol=1e-9)
    assert np.all(got[:, N:] == -12345.0) and np.all(out[M * ldo:] == -12345.0)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_emulated_split_k_with_async_copy(dtype):
    """gfx950's async A path (two LDS stages, DMA one tile ahead) inside split-K slices that start
    on an odd K tile (stage 1): 10 tiles in 3 slices = [0, 3), [3, 6), [6, 10)."""
    if dtype == "bf16":
        cfg = K16.config_from_spec(dict(arch="gfx950", in_dtype="bf16", out_dtype="bf16", tile_m=128, tile_n=128,
                                        tile_k=64, params={"async_copy": 1}))
        M, N, K = 130, 256, 640
        rng = np.random.default_rng(11)
        a, w, b = rng.standard_normal((M, K)), rng.standard_normal((N, K)), rng.standard_normal(N)
        out = np.full(M * N, -12345.0)
        K16.emulate(cfg, a.reshape(-1), preshuffle(w), b, M, N, K, K, N, out, split_k=3)
        np.testing.assert_allclose(out.reshape(M, N), a @ w.T + b, rtol=1e-12, atol=1e-9)
        return
    cfg = K8.config_from_spec(dict(arch="gfx950", in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128,
                                   tile_k=128, params={"async_copy": 1}))
    M, N, K = 130, 256, 1280
    rng = np.random.default_rng(12)
    a = _random_bytes(rng, (M, K), "fp8_e4m3fn")
    w = _random_bytes(rng, (N, K), "fp8_e4m3fn")
    sa, sw = rng.uniform(0.5, 2.0, M), rng.uniform(0.5, 2.0, 1)
    out = np.full(M * N, -12345.0)
    K8.emulate(cfg, a.reshape(-1), preshuffle8(w).astype(np.float64), None, sa, sw, M, N, K, K, N, out, split_k=3)
    dec = _ref_decode("fp8_e4m3fn")
    ref = (dec[a.astype(np.int64)] @ dec[w.astype(np.int64)].T) * sa.reshape(-1, 1) * sw
    np.testing.assert_allclose(out.reshape(M, N), ref, rtol=1e-12, atol=1e-9)


def test_split_k_partials_and_fixed_order_reduce():
    """The workspace holds each slice's own partial sum (rows < M; rows M..M_pad untouched, NaN),
    and the reduce adds them in slice order: bitwise equal to a float32 left fold of the
    partials, and different from another order (so the order is really fixed)."""
    cfg = K16.config_from_spec(dict(arch="gfx942", in_dtype="bf16", out_dtype="bf16", tile_m=16, tile_n=64,
                                    tile_k=256))
    M, N, K, S = 5, 64, 1024, 4
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float32).astype(np.float64)
    w = rng.standard_normal((N, K)).astype(np.float32).astype(np.float64)
    M_pad = 16
    ws = SK.new_workspace(S, M_pad, N)
    for s in range(S):
        b, e = SK.k_slice(s, 4, S)
        K16.core.emulate(cfg, a.reshape(-1), preshuffle(w), None, M, N, K, K, N, None, k_tiles=range(b, e),
                         store=SK.partial_store_hook(ws, s, M_pad, N))
    parts = ws.reshape(S, M_pad, N)
    for s in range(S):
        ks = slice(s * 256, (s + 1) * 256)
        np.testing.assert_allclose(parts[s, :M], a[:, ks] @ w[:, ks].T, rtol=1e-12, atol=1e-12)
    assert np.all(np.isnan(parts[:, M:])), "rows >= M must never be written"
    parts32 = parts.astype(np.float32)
    out = np.zeros(M * N, dtype=np.float32)
    SK.emulate_reduce(parts32.reshape(-1), out, None, M, N, N, M_pad, S)
    fold = parts32[0, :M]
    for s in range(1, S):
        fold = fold + parts32[s, :M]
    assert np.array_equal(out.reshape(M, N), fold)
    backwards = parts32[S - 1, :M]
    for s in range(S - 2, -1, -1):
        backwards = backwards + parts32[s, :M]
    assert not np.array_equal(fold, backwards)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("case", [
    ((16, 64, 256), 5, 96, 1008, 3, True, False),
    ((64, 128, 128), 70, 256, 640, 4, False, True),
    ((16, 64, 256), 1, 64, 272, 5, True, True),      # 2 K tiles: clamped to 2 slices
    ((16, 64, 256), 3, 64, 4096, 16, False, False),  # 16 tiles in 16 slices
], ids=lambda c: "t{}x{}x{}-M{}N{}K{}-S{}".format(*c[0], *c[1:5]))
def test_emulated_a8w8_split_k(arch, case):
    """fp8 split-K: raw partials, then the reduce applies a_scale * w_scale (every kind) and bias."""
    tile, M, N, K, S, a_row, w_row = case
    in_dtype = FP8[arch]
    tm, tn, tk = tile
    cfg = K8.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype="bf16", tile_m=tm, tile_n=tn, tile_k=tk))
    rng = np.random.default_rng(S)
    lda, ldo = K + 16, N + 16
    a = np.full((M, lda), np.nan)
    a[:, :K] = _random_bytes(rng, (M, K), in_dtype)
    w = _random_bytes(rng, (N, K), in_dtype)
    sa = rng.uniform(0.25, 2.0, M if a_row else 1)
    sw = rng.uniform(0.25, 2.0, N if w_row else 1)
    b = rng.standard_normal(N)
    out = np.full(M * ldo + 37, -12345.0)
    K8.emulate(cfg, a.reshape(-1), preshuffle8(w).astype(np.float64), b, sa, sw, M, N, K, lda, ldo, out, split_k=S)
    got = out[:M * ldo].reshape(M, ldo)
    dec = _ref_decode(in_dtype)
    ref = (dec[a[:, :K].astype(np.int64)] @ dec[w.astype(np.int64)].T) * sa.reshape(-1, 1) * sw.reshape(1, -1) + b
    np.testing.assert_allclose(got[:, :N], ref, rtol=1e-12, atol=1e-9)
    assert np.all(got[:, N:] == -12345.0) and np.all(out[M * ldo:] == -12345.0)


def test_int8_has_no_split_k_mode():
    cfg = K8.config_from_spec(dict(arch="gfx942", in_dtype="int8", out_dtype="bf16", tile_m=16, tile_n=64,
                                   tile_k=256))
    assert K8.FAM.max_split_k(cfg) == 1
    with pytest.raises(AssertionError, match="int8 has no split-K mode"):
        K8.emulate(cfg, np.zeros(16 * 512), np.zeros(64 * 512), None, np.ones(1), np.ones(1), 16, 64, 512, 512, 64,
                   np.zeros(16 * 64), split_k=2)


# --------------------------------------------------------------------------------------------
# gemm_a8w8_blockscale: per-128-K-block fp32 promotion, direct and split-K
# --------------------------------------------------------------------------------------------
KB = _module_named("gemm_a8w8_blockscale")

BLOCK_CASES = [
    # tile, params, M, N, K, split_k
    ((32, 64, 128), {}, 5, 96, 1008, 3),          # partial last scale block (K % 128 = 112), ragged M
    ((32, 64, 128), {}, 1, 64, 16, 4),            # one partial block: clamped to one slice
    ((64, 128, 128), {}, 70, 272, 640, 1),        # direct
    ((128, 128, 128), {"wm": 2, "wn": 2}, 130, 400, 272, 2),  # N not a multiple of 128: last w_scale row partial
    ((32, 64, 128), {}, 33, 256, 2048, 16),       # 16 blocks, 16 slices
]


def run_blockscale(arch, tile, params, M, N, K, S, seed=0, scale_w=None):
    in_dtype = FP8[arch]
    tm, tn, tk = tile
    cfg = KB.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype="bf16", tile_m=tm, tile_n=tn, tile_k=tk,
                                   params=params))
    rng = np.random.default_rng(seed)
    lda, ldo = K + 16, N + 16
    a = np.full((M, lda), np.nan)
    a[:, :K] = _random_bytes(rng, (M, K), in_dtype)
    w = _random_bytes(rng, (N, K), in_dtype)
    nkb, nnb = -(-K // 128), -(-N // 128)
    sa = rng.uniform(0.25, 2.0, (M, nkb))
    sw = rng.uniform(0.25, 2.0, (nnb, nkb)) if scale_w is None else scale_w(nnb, nkb)
    b = rng.standard_normal(N)
    out = np.full(M * ldo + 37, -12345.0)
    KB.emulate(cfg, a.reshape(-1), preshuffle8(w).astype(np.float64), b, sa, sw, M, N, K, lda, ldo, out, split_k=S)
    got = out[:M * ldo].reshape(M, ldo)
    assert np.all(got[:, N:] == -12345.0) and np.all(out[M * ldo:] == -12345.0)
    dec = _ref_decode(in_dtype)
    ad = dec[a[:, :K].astype(np.int64)] * np.repeat(sa, 128, axis=1)[:, :K]
    wd = dec[w.astype(np.int64)] * np.repeat(np.repeat(sw, 128, axis=0), 128, axis=1)[:N, :K]
    return got[:, :N], ad @ wd.T + b


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("case", BLOCK_CASES, ids=lambda c: "t{}x{}x{}-M{}N{}K{}-S{}".format(*c[0], *c[2:]))
def test_emulated_blockscale_matches_reference(arch, case):
    """The oracle's dequantize-then-multiply (csrc/cpu_reference.cpp) equals the kernel's
    per-block promotion: every scale is read at the right (row, block) / (column block, block)."""
    tile, params, M, N, K, S = case
    got, ref = run_blockscale(arch, tile, params, M, N, K, S)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


def test_blockscale_scales_are_per_block():
    """A scale that differs per K block and per 128-column block must change the result exactly
    where it applies (a kernel using one scale per tile, or the wrong block, fails)."""
    def sw_steps(nnb, nkb):
        return (1.0 + np.arange(nnb)[:, None]) * (2.0 ** np.arange(nkb))[None, :]
    got, ref = run_blockscale("gfx942", (32, 64, 128), {}, 4, 256, 384, 2, scale_w=sw_steps)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)
    flat, _ = run_blockscale("gfx942", (32, 64, 128), {}, 4, 256, 384, 2, scale_w=lambda nb, kb: np.ones((nb, kb)))
    assert not np.allclose(got[:, 128:], flat[:, 128:])


def test_blockscale_config_validation():
    ok = dict(arch="gfx942", in_dtype="fp8_e4m3fnuz", out_dtype="bf16", tile_m=32, tile_n=64, tile_k=128)
    assert KB.config_from_spec(ok).mfma == "v_mfma_f32_16x16x32_fp8_fp8"
    assert KB.config_from_spec(dict(ok, arch="gfx950", in_dtype="fp8_e4m3fn")).mfma == \
        "v_mfma_scale_f32_16x16x128_f8f6f4"
    for bad in (dict(ok, tile_k=256, tile_m=64), dict(ok, out_dtype="fp32"), dict(ok, in_dtype="fp8_e4m3fn"),
                dict(ok, in_dtype="int8"), dict(ok, tile_m=16)):
        with pytest.raises(ValueError):
            KB.config_from_spec(bad)


# --------------------------------------------------------------------------------------------
# gemm_splitk_decode: plain weights, swap-AB MFMA, cross-wave LDS reduction, split-K
# --------------------------------------------------------------------------------------------
KD = _module_named("gemm_splitk_decode")

DECODE_CASES = [
    # tile, params, M, N, K, split_k, in_dtype
    ((16, 32, 512), {}, 1, 64, 4096, 1, "bf16"),
    ((16, 32, 512), {}, 5, 100, 1000, 3, "bf16"),      # 2 K tiles: clamped to 2 slices
    ((16, 32, 512), {}, 5, 102, 1000, 3, "bf16"),      # N % 4 != 0: runs unsplit
    ((16, 32, 512), {}, 8, 2048, 7168, 4, "fp16"),     # 14 tiles in 4 slices
    ((16, 32, 512), {}, 3, 36, 520, 2, "bf16"),        # K tail, ragged N inside a 16-row block
    ((8, 64, 256), {"wk": 2}, 11, 132, 776, 4, "bf16"),  # two token tiles of 8, wn = 2
    ((16, 64, 128), {"wk": 1}, 16, 256, 2048, 16, "fp16"),  # no cross-wave reduction
    ((16, 32, 512), {}, 3, 33, 0, 1, "bf16"),          # K == 0: the bias
    ((16, 32, 512), {}, 17, 64, 1024, 2, "bf16"),      # M beyond one token tile
]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
@pytest.mark.parametrize("case", DECODE_CASES, ids=lambda c: "t{}x{}x{}-M{}N{}K{}-S{}-{}".format(*c[0], *c[2:]))
def test_emulated_decode_matches_reference(arch, case):
    tile, params, M, N, K, S, in_dtype = case
    tm, tn, tk = tile
    cfg = KD.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype=in_dtype, tile_m=tm, tile_n=tn,
                                   tile_k=tk, params=params))
    rng = np.random.default_rng(S + M)
    lda, ldo = K + 8, N + 5
    a = rng.standard_normal((M, lda))
    a[:, K:] = np.nan
    w = rng.standard_normal((N, K))
    b = rng.standard_normal(N)
    out = np.full(M * ldo + 37, -12345.0)
    KD.emulate(cfg, a.reshape(-1), w.reshape(-1), b, M, N, K, lda, ldo, out, split_k=S)
    got = out[:M * ldo].reshape(M, ldo)
    np.testing.assert_allclose(got[:, :N], a[:, :K] @ w.T + b, rtol=1e-12, atol=1e-9)
    assert np.all(got[:, N:] == -12345.0), "wrote into the row padding of out"
    assert np.all(out[M * ldo:] == -12345.0), "wrote past the end of out"


def test_decode_weight_loads_are_row_contiguous():
    """16-byte W loads: the 4 lanes of a row read 64 contiguous bytes per instruction, and a
    wave's vectors of one K tile cover each of its rows' k range exactly once."""
    cfg = KD.config_from_spec(dict(arch="gfx942", in_dtype="bf16", out_dtype="bf16", tile_m=16, tile_n=32,
                                   tile_k=512))
    geo = KD.DecodeGeometry(cfg, np.where)
    K = 4096
    t = geo.thread(np.arange(256))
    for u in range(cfg.unroll):
        off = np.asarray(geo.w_offset(t, 0, u, 0, K))
        wave0 = off[:64].reshape(4, 16)  # [lg, l16]
        assert np.all(np.diff(wave0, axis=0) == 8)  # lane groups: consecutive 16-byte vectors of a row
    seen = {}
    for g in range(cfg.groups):
        for u in range(cfg.unroll):
            off = np.asarray(geo.w_offset(t, g, u, 0, K))
            for o in off:
                seen[o] = seen.get(o, 0) + 1
    rows = {o // K for o in seen}
    assert rows == set(range(cfg.tile_n)) and set(seen.values()) == {1}
    assert sorted(seen)[-1] % K + 8 == cfg.tile_k  # the K tile's 512 k of every row


def test_decode_config_validation():
    ok = dict(arch="gfx942", in_dtype="bf16", out_dtype="bf16", tile_m=16, tile_n=32, tile_k=512)
    cfg = KD.config_from_spec(ok)
    assert (cfg.wn, cfg.wk, cfg.groups, cfg.unroll, cfg.lds_bytes) == (1, 4, 2, 4, 4 * 2 * 4 * 64 * 4)
    assert KD.config_from_spec(dict(ok, arch="gfx950")).form.mnemonic == "v_mfma_f32_16x16x32_bf16"
    for bad in (dict(ok, tile_m=32), dict(ok, tile_n=24), dict(ok, tile_k=500), dict(ok, in_dtype="fp8_e4m3fn"),
                dict(ok, params={"wk": 3}), dict(ok, tile_n=256, tile_k=2048), dict(ok, arch="gfx90a")):
        with pytest.raises(ValueError):
            KD.config_from_spec(bad)
