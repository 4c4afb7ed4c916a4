"""Async global->LDS copy (gfx950 LDS DMA) and the ``preload`` scheduling hints of the ROCm
preshuffle GEMM families, checked on the CPU (no AMD GPU anywhere).

* Emulation: kernels/rocm/_preshuffle_gemm.emulate models the async path as the hardware runs
  it (each wave's DMA writes 16 bytes per lane at its M0 base + 16 * lane; a stage reads as NaN
  while its DMA is in flight) with the same ``_Geometry`` as the FlyDSL kernel. The async path
  must give exactly the synchronous path's results, and a broken DMA lane mapping or a single
  LDS stage must be caught.
* Layouts: both LDS layouts of A are bank-conflict free for the MFMA operand reads (32-bank and
  64-bank phases) and the async layout is a permutation of the stage.
* Configuration: async_copy off gfx950, malformed or out-of-range preload, unknown params and the
  default preload table (every dtype).
The ISA side (buffer_load ... lds, fewer ds_write than the synchronous twin, preload honoured)
is in test_rocm_async_isa.py."""

import numpy as np
import pytest

import test_rocm_kernel_emulation as emu

K16, K8 = emu.K16, emu.K8
CORE = K16.core  # kernels/rocm/_preshuffle_gemm.py, as the family modules import it


def _cfg16(arch="gfx950", tile=(128, 128, 64), in_dtype="bf16", **params):
    tm, tn, tk = tile
    return K16.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype="bf16", tile_m=tm, tile_n=tn,
                                     tile_k=tk, params=params))


def _cfg8(arch="gfx950", tile=(128, 128, 128), in_dtype="fp8_e4m3fn", **params):
    tm, tn, tk = tile
    return K8.config_from_spec(dict(arch=arch, in_dtype=in_dtype, out_dtype="bf16", tile_m=tm, tile_n=tn,
                                    tile_k=tk, params=params))


# --------------------------------------------------------------------------------------------
# Emulation: async == sync
# --------------------------------------------------------------------------------------------
ASYNC_CASES16 = [  # tile, M, N, K, pad_a, pad_o, bias, extra params
    ((128, 128, 64), 130, 272, 200, 8, 16, True, {}),        # ragged M, N and K; padded rows
    ((128, 128, 64), 128, 128, 64, 0, 0, False, {}),         # one K tile
    ((64, 128, 64), 1, 256, 1024, 0, 0, True, {}),           # many K tiles (both stages reused)
    ((16, 64, 256), 33, 64, 8, 0, 0, True, {}),              # K tail inside the first chunk
    ((32, 32, 128), 33, 48, 136, 8, 0, True, {}),            # wm=2, wn=2
    ((64, 64, 32), 70, 80, 96, 0, 0, True, {"wm": 4, "wn": 1}),  # 4 chunks per row
    ((32, 64, 64), 7, 64, 0, 0, 0, True, {}),                # K == 0: the bias
]


@pytest.mark.parametrize("case", ASYNC_CASES16, ids=lambda c: "t{}x{}x{}-M{}N{}K{}".format(*c[0], *c[1:4]))
def test_async_emulation_equals_sync_16bit(case):
    tile, M, N, K, pad_a, pad_o, bias, params = case
    sync = emu.run("gfx950", tile, M, N, K, pad_a, pad_o, bias, dict(params), seed=5)
    asyn = emu.run("gfx950", tile, M, N, K, pad_a, pad_o, bias, dict(params, async_copy=1), seed=5)
    assert np.array_equal(sync, asyn)


ASYNC_CASES8 = [  # tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, extra params
    ((128, 128, 128), 130, 272, 400, 16, 16, True, True, True, {}),
    ((64, 128, 128), 1, 256, 2048, 0, 0, True, True, False, {}),
    ((16, 64, 256), 5, 96, 272, 0, 8, True, False, True, {}),
    ((64, 64, 128), 70, 80, 208, 0, 0, True, True, True, {"wm": 4, "wn": 1}),
    ((32, 64, 128), 7, 64, 0, 0, 0, True, True, True, {}),
]


@pytest.mark.parametrize("dtype", ["fp8_e4m3fn", "int8"])
@pytest.mark.parametrize("case", ASYNC_CASES8, ids=lambda c: "t{}x{}x{}-M{}N{}K{}".format(*c[0], *c[1:4]))
def test_async_emulation_equals_sync_8bit(case, dtype):
    tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, params = case
    sync, ref, _ = emu.run8("gfx950", dtype, tile, M, N, K, pad_a, pad_o, bias, a_row, w_row, dict(params), seed=7)
    asyn, _, _ = emu.run8("gfx950", dtype, tile, M, N, K, pad_a, pad_o, bias, a_row, w_row,
                          dict(params, async_copy=1), seed=7)
    np.testing.assert_allclose(asyn, ref, rtol=1e-12, atol=1e-9)
    assert np.array_equal(sync, asyn)


def _dma_chunk_without_swizzle(self, tid, p):
    vpr = self.c.a_vecs_per_row
    pos = p * CORE.THREADS + tid
    return pos // vpr, pos % vpr


@pytest.mark.parametrize("attr, broken", [
    ("a_dma_chunk", _dma_chunk_without_swizzle),          # DMA lanes not the inverse of the read swizzle
    ("a_lds_stage", lambda self, kt: 0),                  # one stage: the next DMA overwrites the tile in use
    ("a_dma_lds_wave_base", lambda self, stage, p, wave: p * CORE.THREADS * CORE.VEC_BYTES),  # waves overlap
])
def test_emulator_catches_broken_async_addressing(monkeypatch, attr, broken):
    """The equivalence above is meaningful: the emulator fails on each of these mistakes."""
    monkeypatch.setattr(CORE._Geometry, attr, broken)
    with pytest.raises(AssertionError):
        emu.run("gfx950", (128, 128, 64), 130, 272, 200, 8, 16, True, {"async_copy": 1})


# --------------------------------------------------------------------------------------------
# LDS layouts
# --------------------------------------------------------------------------------------------
def _geometry(cfg):
    return CORE._Geometry(cfg, np.where, min)


LAYOUT_CONFIGS = [
    ("bf16", (128, 128, 64)), ("bf16", (64, 128, 32)), ("bf16", (16, 64, 256)), ("bf16", (32, 64, 128)),
    ("fp8_e4m3fn", (128, 128, 128)), ("fp8_e4m3fn", (16, 64, 256)), ("int8", (64, 64, 64)),
    ("int8", (32, 64, 512)),
]


def _config(in_dtype, tile, **params):
    return (_cfg16(tile=tile, in_dtype=in_dtype, **params) if in_dtype == "bf16"
            else _cfg8(tile=tile, in_dtype=in_dtype, **params))


@pytest.mark.parametrize("async_copy", [0, 1])
@pytest.mark.parametrize("in_dtype, tile", LAYOUT_CONFIGS, ids=lambda v: str(v))
def test_mfma_operand_reads_are_bank_conflict_free(in_dtype, tile, async_copy):
    """Every ds_read_b128 of an A fragment: within each phase (8 lanes on 32 banks, 16 lanes on
    64 banks) the lanes hit distinct 16-byte bank groups. A power-of-two row stride without the
    padding or the swizzle would put 8 or 16 rows on the same banks."""
    cfg = _config(in_dtype, tile, async_copy=async_copy)
    geo = _geometry(cfg)
    t = geo.thread(np.arange(CORE.THREADS))
    for i in range(cfg.m_rep):
        for s in range(cfg.k_steps):
            chunk = np.asarray(geo.a_lds_load_offset(t, i, s)) * cfg.elem_bytes // CORE.VEC_BYTES
            for lanes, groups in ((8, 8), (16, 16)):  # (lanes per phase, 16-byte bank groups)
                phases = (chunk % groups).reshape(-1, lanes)
                assert all(len(set(ph)) == lanes for ph in phases), (i, s, lanes, phases[:2])


@pytest.mark.parametrize("in_dtype, tile", LAYOUT_CONFIGS, ids=lambda v: str(v))
def test_async_layout_is_a_permutation_written_in_lane_order(in_dtype, tile):
    """The swizzled layout stores every chunk of the tile exactly once inside its stage, and the
    DMA (lane l of a wave at M0 + 16*l) puts at each position the chunk the readers look for."""
    cfg = _config(in_dtype, tile, async_copy=1)
    geo = _geometry(cfg)
    vpr = cfg.a_vecs_per_row
    rows, kcs = np.meshgrid(np.arange(cfg.tile_m), np.arange(vpr), indexing="ij")
    offs = np.asarray(geo.a_lds_offset(rows, kcs)).reshape(-1)
    assert sorted(offs.tolist()) == list(range(0, cfg.tile_m * cfg.tile_k, cfg.vec))
    tid = np.arange(CORE.THREADS)
    for p in range(cfg.a_passes):
        row, kc = geo.a_dma_chunk(tid, p)
        lds_byte = geo.a_dma_lds_wave_base(1, p, tid // CORE.WAVE) + (tid % CORE.WAVE) * CORE.VEC_BYTES
        want = geo.a_lds_stage_base(1) + np.asarray(geo.a_lds_offset(row, kc))
        assert np.array_equal(lds_byte // cfg.elem_bytes, want)


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, in_dtype", [(_cfg16, "bf16"), (_cfg16, "fp16"), (_cfg8, "fp8_e4m3fnuz"),
                                             (_cfg8, "int8")], ids=["bf16", "fp16", "fp8", "int8"])
def test_async_copy_off_gfx950_is_an_early_clear_error(make, in_dtype):
    """Raised while reading the params, before any tile check or compilation."""
    with pytest.raises(ValueError, match=r"async_copy=1 is not available on gfx942: it needs the 16-byte "
                                         r"'buffer_load_dwordx4 \.\.\. lds'.*Use async_copy=0 on gfx942"):
        make(arch="gfx942", in_dtype=in_dtype, async_copy=1)
    with pytest.raises(ValueError, match="async_copy=1 is not available on gfx942"):  # even for a bad tile
        make(arch="gfx942", in_dtype=in_dtype, tile=(100, 100, 100), async_copy=1)
    make(arch="gfx942", in_dtype=in_dtype, async_copy=0)  # the synchronous path is fine there


def test_async_copy_config():
    sync, asyn = _cfg16(), _cfg16(async_copy=1)
    assert (sync.lds_stages, sync.lds_pad, sync.lds_bytes) == (1, 8, 128 * 72 * 2)
    assert (asyn.lds_stages, asyn.lds_pad, asyn.lds_bytes) == (2, 0, 2 * 128 * 64 * 2)
    assert (asyn.ds_writes_per_tile, sync.ds_writes_per_tile) == (0, 4)
    assert K16.kernel_name(asyn).endswith(".t128x128x64.async")
    f8 = _cfg8(async_copy="1")
    assert f8.async_copy is True and f8.lds_bytes == 2 * 128 * 128
    bad = [
        dict(async_copy=2),
        dict(async_copy="yes"),
        dict(async_copy=1, lds_pad=8),                       # the DMA layout has no padding
    ]
    for params in bad:
        with pytest.raises(ValueError, match="async_copy"):
            _cfg16(**params)
    with pytest.raises(ValueError, match="power of two"):    # 12 chunks per row: no XOR swizzle
        _cfg16(tile=(64, 128, 96), async_copy=1)
    _cfg16(tile=(64, 128, 96))                               # fine synchronously
    with pytest.raises(ValueError, match="LDS 262144 B exceeds 163840 B"):  # two stages of 128 KiB
        _cfg16(tile=(256, 64, 256), async_copy=1)


def test_unknown_params_are_rejected():
    with pytest.raises(ValueError, match=r"unknown params \['async'\]"):
        _cfg16(**{"async": 1})


def test_preload_parsing_and_bounds():
    cfg = _cfg16(preload="3:5")  # 128x128x64 bf16: 16 LDS reads, 4 + 4 global loads per K tile
    assert cfg.preload == (3, 5) and (cfg.ds_reads_per_tile, cfg.vmem_loads_per_tile) == (16, 8)
    assert _cfg16(preload=(16, 8)).preload == (16, 8)       # the whole tile ahead is allowed
    assert _cfg16(preload="0:0").preload == (0, 0)
    malformed = ["3", "3:5:1", "-1:2", "a:b", "3.5:1", "", (1,), (1, 2, 3), 7]
    for value in malformed:
        with pytest.raises(ValueError, match="preload"):
            _cfg16(preload=value)
    for value in [(-1, 0), (1.5, 2), (True, 1), ("1", 2)]:
        with pytest.raises(ValueError, match="pair of non-negative ints"):
            _cfg16(preload=value)
    with pytest.raises(ValueError, match=r"preload\[0\]=17 exceeds the 16 A-fragment LDS reads"):
        _cfg16(preload="17:0")
    with pytest.raises(ValueError, match=r"preload\[1\]=9 exceeds the 8 global loads"):
        _cfg16(preload="0:9")
    with pytest.raises(ValueError, match=r"preload\[1\]=9 exceeds the 8 global loads"):
        _cfg8(preload="0:9", async_copy=1)                   # the DMA loads count as global loads


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_default_preload_every_dtype(arch):
    """One table keyed by A-row bytes: bf16/fp16 tiles get the entry of the 8-bit tile with the
    same byte geometry (same load and LDS-read counts); tiles outside it get the fallback; every
    default is inside the tile's bounds."""
    fp8 = {"gfx942": "fp8_e4m3fnuz", "gfx950": "fp8_e4m3fn"}[arch]
    expect = [  # make, in_dtype, tile, params, (LDS reads, global loads) ahead
        (_cfg16, "bf16", (128, 128, 64), {}, (8, 8)),      # 128-byte rows: the (128, 128, 128) entry
        (_cfg16, "fp16", (128, 128, 64), {}, (8, 8)),
        (_cfg16, "bf16", (16, 64, 256), {}, (4, 4)),       # 512-byte rows: (16, 64, 512)
        (_cfg16, "fp16", (64, 128, 64), {}, (8, 6)),       # (8, 8) clamped to 2 + 4 global loads
        (_cfg8, fp8, (128, 128, 128), {}, (8, 8)),
        (_cfg8, fp8, (16, 64, 256), {}, (2, 2)),
        (_cfg8, "int8", (64, 128, 128), {}, (8, 6)),
        (_cfg8, "int8", (128, 128, 64), {}, (4, 4)),
        (_cfg8, "int8", (32, 64, 128), {}, (4, 3)),        # (6, 6) clamped to 4 reads, 1 + 2 loads
        (_cfg16, "bf16", (32, 32, 64), {}, CORE.PRELOAD_FALLBACK),  # not in the table
        (_cfg16, "bf16", (64, 64, 32), {"wm": 4, "wn": 1}, (1, 2)),  # fallback clamped: 1 LDS read
    ]
    for make, in_dtype, tile, params, want in expect:
        cfg = make(arch=arch, in_dtype=in_dtype, tile=tile, **params)
        assert cfg.preload == want, (in_dtype, tile, cfg.preload)
        assert cfg.preload[0] <= cfg.ds_reads_per_tile and cfg.preload[1] <= cfg.vmem_loads_per_tile
    for key, (d, v) in CORE.PRELOAD_TABLE.items():
        assert d >= 0 and v >= 0, key


def test_spread():
    assert CORE.spread(5, 4) == [2, 1, 1, 1]
    assert CORE.spread(8, 32) == [1, 0, 0, 0] * 8
    assert CORE.spread(0, 3) == [0, 0, 0]
    assert CORE.spread(7, 1) == [7]
    assert CORE.spread(2, 4) == [1, 0, 1, 0]
    for n in range(0, 40):
        for slots in range(1, 20):
            got = CORE.spread(n, slots)  # evenly spread, ahead of schedule: prefix sums round up
            assert [sum(got[:j]) for j in range(slots + 1)] == [-(-j * n // slots) for j in range(slots + 1)]
