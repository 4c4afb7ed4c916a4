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
