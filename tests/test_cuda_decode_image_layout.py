"""The MX decode .img kernels' activation image without a GPU (kernels/cuda/gemm_splitk_decode.py, a_image=1).

act_image_kernel writes each decoded activation word at the offset the per-CTA staging would use in shared memory
(mxb_act_word_offset / mxb8_act_word_offset with the chunk's index counted from K = 0), per tile_m rows; the GEMM then
copies k-tile kt's image as the KTI contiguous bytes at kt * KTI, and the adapter sizes the scratch as
ceil(M / tile_m) x ceil(K / tile_k) x KTI. Those three must agree: every word of a k-tile inside its own KTI bytes,
the words of all chunks covering the image exactly once (no byte left stale for the copy to pick up, none written
twice), and a k-tile's image equal to what staging lays out for that k-tile at the start of a round buffer."""
import csv
import pathlib

import pytest
from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]
fam = load_source("kernels/cuda/gemm_splitk_decode.py", "gemm_splitk_decode_image")


def image_configs():
    rows = csv.reader(line for line in open(ROOT / "kernels/configs/sm_90a.kernels.csv") if not line.startswith("#"))
    out = []
    for r in rows:
        if len(r) < 10 or "a_image=1" not in r[9] or "mx_e4=1" in r[9]:   # e4 images: test_cuda_decode_e4_rebias.py
            continue
        params = {k: int(v) if v.isdigit() else v for k, v in (kv.split("=") for kv in r[9].split(";") if kv)}
        out.append(pytest.param(fam.Config.from_spec({"op": r[2], "tile_m": int(r[6]), "tile_n": int(r[7]),
                                                      "tile_k": int(r[8]), "params": params}), id=r[0]))
    return out


def chunk_words(cfg, j, m):
    """Byte offsets (from the tile's first 128-column group) of the words of 16-byte chunk j of token m."""
    bstep = cfg.b_step_bytes
    if cfg.mode == "mxfp8":  # chunk j is half j % 2 of block j // 2; 4 raw words x 2 bf16 pairs
        return [fam.mxb8_act_word_offset(j // 2, m, 4 * (j % 2) + q, i, bstep) for q in range(4) for i in range(2)]
    return [fam.mxb_act_word_offset(j, m, q, i, bstep) for q in range(4) for i in range(4)]


IMAGE_CONFIGS = image_configs()


def test_the_table_has_image_kernels():
    assert len(IMAGE_CONFIGS) >= 4


@pytest.mark.parametrize("cfg", IMAGE_CONFIGS)
def test_image_words_tile_their_k_tiles_exactly(cfg):
    kti = cfg.tile_k // 128 * cfg.img_group_bytes
    assert kti == cfg.tile_k * cfg.tile_m * 2   # bf16 values of one k-tile of tile_m tokens
    k_tiles = 3
    chunks_per_tile = cfg.tile_k // cfg.ve
    seen = set()
    for j in range(k_tiles * chunks_per_tile):
        kt = j // chunks_per_tile
        for m in range(cfg.tile_m):
            for off in chunk_words(cfg, j, m):
                assert off % 4 == 0
                assert kt * kti <= off < (kt + 1) * kti, f"chunk {j} token {m}: word at {off} outside k-tile {kt}"
                assert off not in seen, f"two words at {off}"
                seen.add(off)
    assert seen == set(range(0, k_tiles * kti, 4)), "the image has bytes no chunk writes"


@pytest.mark.parametrize("cfg", IMAGE_CONFIGS)
def test_a_k_tile_image_is_the_staged_round_layout(cfg):
    """Staging lays out a round's chunks counted from the round's first column; the image counts from K = 0. For a
    round starting at any k-tile the two must differ by that k-tile's image offset only (the copy is a plain move)."""
    kti = cfg.tile_k // 128 * cfg.img_group_bytes
    chunks_per_tile = cfg.tile_k // cfg.ve
    for kt0 in (1, 5):
        for jr in range(cfg.warps_k * chunks_per_tile):   # the round's chunks, round-relative
            for m in (0, cfg.tile_m - 1):
                staged = chunk_words(cfg, jr, m)
                imaged = chunk_words(cfg, kt0 * chunks_per_tile + jr, m)
                assert [x - kt0 * kti for x in imaged] == staged


@pytest.mark.parametrize("cfg", IMAGE_CONFIGS)
def test_adapter_sizes_the_scratch_with_the_kernel_constants(cfg):
    text = fam.adapter_cpp("k_x", "x", "x.h", "x_ciface", cfg)
    kti = cfg.tile_k // 128 * cfg.img_group_bytes
    assert f"kImageKTileBytes = {kti}, kTileK = {cfg.tile_k};" in text
    assert "static int64_t k_x_scratch_bytes(const flygemm::LaunchArgs& args)" in text
    assert "(args.M + kTileM - 1) / kTileM * ((args.K + kTileK - 1) / kTileK) * kImageKTileBytes" in text


def test_image_needs_the_bf16_wgmma_kernels():
    with pytest.raises(ValueError, match="a_image"):
        fam.Config(op="gemm_mxfp4", tile_m=16, tile_n=64, warps_k=2, mma="wgmma", mx_n=1, w_stages=3, a_rounds=2,
                   a_image=1)
    plain = fam.Config(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=128, warps_k=2, mma="wgmma", mx_bf16=1,
                       w_stages=4, a_rounds=4)
    assert "kImageKTileBytes = 0," in fam.adapter_cpp("k_y", "y", "y.h", "y_ciface", plain)


def bound_rows():
    """The measurement-only bound twins (tools/probes/bounds-58.kernels.csv): name, params."""
    lines = open(ROOT / "tools/probes/bounds-58.kernels.csv").read().splitlines()
    return [(r[0], r[9]) for r in csv.reader(line for line in lines if not line.startswith("#"))]


def test_bound_twins_are_mxfp4_image_kernels_only():
    """bound (wrong results by design) builds only as a twin of an MXFP4 .img kernel, bits 1..7."""
    image = dict(op="gemm_mxfp4", tile_m=16, tile_n=64, tile_k=128, warps_k=2, mma="wgmma", mx_bf16=1, w_stages=4,
                 a_rounds=4, a_image=1)
    assert fam.Config(**image, bound=7).meta()["bound"] == 7
    for bad in (dict(image, bound=8), dict(image, a_image=0, bound=1), dict(image, op="gemm_mxfp8", bound=1)):
        with pytest.raises(ValueError, match="bound"):
            fam.Config(**bad)


def test_no_dispatch_row_or_kernel_list_names_a_bound_twin():
    """The twins live only in the probe's list, named .bnd (the decode GPU tests skip that name) and never in the
    kernel list or a dispatch row of the product."""
    names = [n for n, _ in bound_rows()]
    assert names and all(".bnd" in n and "bound=" in p for n, p in bound_rows())
    for name, params in bound_rows():   # each row builds as a bound twin
        kv = {k: int(v) if v.isdigit() else v for k, v in (x.split("=") for x in params.split(";") if x)}
        assert fam.Config.from_spec({"op": "gemm_mxfp4", "tile_m": 16, "tile_n": 64, "tile_k": 128,
                                     "params": kv}).bound == int(name.split(".bnd")[1][0])
    for name in ("sm_90a.kernels.csv", "sm_90a.csv", "sm_90a.twins.csv"):
        path = "kernels/configs/" + name
        text = (ROOT / path).read_text()
        assert ".bnd" not in text and "bound=" not in text, path
