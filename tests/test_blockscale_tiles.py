"""Blockscale token tiles whose width does not divide 128 (kernels/cuda/_hopper_gemm.py, first_block_atoms), checked
without a GPU: a tile then crosses one 128-column w_scale block, each stage holds both blocks' w_scale, and the
promotion takes the first for the tile's first `first_block_atoms` n8 column atoms and the second for the rest. The
kernels themselves run in tests/test_gpu_cuda_kernels.py (oracle with w_scale differing per 128-row block)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg

WIDTHS = (32, 48, 64, 80, 96, 112, 128, 144, 160, 192)


@pytest.mark.parametrize("tile_n", WIDTHS)
def test_every_column_gets_the_w_scale_block_it_lies_in(tile_n):
    """For every tile start n0 = t * tile_n, column c of the tile lies in block n0 // 128 when its atom is one of the
    first first_block_atoms(n0) atoms and in the next block otherwise; tiles that divide 128 never cross."""
    blocks = hg.w_scale_blocks(tile_n)
    assert blocks == (1 if 128 % tile_n == 0 else 2)
    assert hg.max_w_scale_blocks(tile_n) == blocks
    for t in range(3 * 128):
        n0 = t * tile_n
        first = hg.first_block_atoms(n0, tile_n)
        assert first in hg.first_block_atom_counts(tile_n)
        for c in range(tile_n):
            block = (n0 + c) // 128 - n0 // 128
            assert block == (1 if c // 8 >= first else 0), (tile_n, n0, c)
            assert block < blocks


@pytest.mark.parametrize("tile_n, counts", [(80, (2, 4, 6, 8, 10)), (96, (4, 8, 12)),
                                            (112, (2, 4, 6, 8, 10, 12, 14)), (128, (16,)), (64, (8,)),
                                            (160, (4, 8, 12, 16)), (192, (8, 16))])
def test_the_promotion_is_unrolled_for_a_few_boundary_atoms(tile_n, counts):
    assert hg.first_block_atom_counts(tile_n) == counts


@pytest.mark.parametrize("tile_n, epi_n", [(80, 16), (96, 32), (112, 16), (128, 32), (144, 16), (160, 32), (192, 32)])
def test_crossing_widths_are_accepted_with_their_epilogue_sub_tile(tile_n, epi_n):
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=tile_n,
                            overlap=0 if tile_n > 128 else 1)
    assert cfg.epi_n == epi_n
    assert hg.kernel_name(blockscale.FAMILY_SPEC, cfg) == f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x{tile_n}x128"


@pytest.mark.parametrize("make, message", [
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=104), "multiple of 16"),
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=144), "accumulator"),
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=176, overlap=0),
     "two 128-row w_scale block boundaries"),
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=208, overlap=0),
     "accumulator"),
    (lambda: a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=40), "multiple of 16"),
])
def test_widths_outside_the_core_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def _kernel_or_skip(cfg):
    try:
        hg.import_dsl()
    except Exception as exc:  # noqa: BLE001  (no CuTe DSL on this machine)
        pytest.skip(f"CuTe DSL not importable: {exc}")
    return blockscale.FAMILY_SPEC.kernel_class()(cfg)


@pytest.mark.parametrize("tile_m, tile_n", [(128, 80), (128, 112), (192, 96), (64, 112), (128, 128), (128, 160),
                                            (128, 192)])
def test_promotion_slot_of_every_value_is_its_row_and_its_columns_block(tile_m, tile_n):
    """s_row[b * slots + r] holds a_scale of slot r times w_scale of block b (_bs_load_scales); the promotion unrolled
    for `first` reads bs_promote_slot(i, first) for value i, which must be the value's row slot in the block of its
    column (PTX wgmma D fragment: column 8 * (j // 4) + 2 * (lane % 4) + j % 2)."""
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=tile_m, tile_n=tile_n,
                            overlap=0 if tile_m == 192 or tile_n > 128 else 1)
    gemm = _kernel_or_skip(cfg)
    slots = gemm.bs_scale_slots()
    per_atom = tile_n // 2
    values = per_atom * tile_m // (64 * cfg.mma_wg)
    for t in range(128):
        n0 = t * tile_n
        first = hg.first_block_atoms(n0, tile_n)
        for lane in (0, 5, 31):
            for i in range(values):
                j = i % per_atom
                col = 8 * (j // 4) + 2 * (lane % 4) + j % 2
                block = (n0 + col) // 128 - n0 // 128
                assert gemm.bs_promote_slot(i, first) == block * slots + gemm.bs_slot(i), (n0, lane, i)


@pytest.mark.parametrize("tile_m, tile_n", [(128, 80), (128, 112), (192, 112), (128, 144)])
def test_narrow_epilogue_sub_tile_matches_the_tma_store(tile_m, tile_n):
    """The 16-column epilogue sub-tile: every accumulator value lands where the TMA store of its sub-tile reads it."""
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=tile_m, tile_n=tile_n,
                            overlap=0 if tile_m == 192 or tile_n > 128 else 1)
    _kernel_or_skip(cfg)
    assert blockscale.verify_epilogue_layout(cfg) == []
