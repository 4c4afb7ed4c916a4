"""The swapped-operand mode (swap_ab=1, the `.sw` kernels) of the sm_90a Hopper GEMM core
(kernels/cuda/_hopper_gemm.py), checked without a GPU: which configurations may have it, how it is named and
reported, that its M-major epilogue maps every accumulator value to the coordinate the TMA store writes (the
build-time layout check, traced here), and that the "scaled" epilogue's row and column operands trade places.
The kernels themselves run in tests/test_gpu_cuda_kernels.py (oracle on ragged shapes, every split_k)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def test_swap_configs_are_named_sw_and_report_it():
    cfg = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, tile_k=128,
                      split=8, swap_ab=1)
    assert hg.kernel_name(a8w8.FAMILY_SPEC, cfg) == "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw"
    assert cfg.meta()["swap_ab"] is True and cfg.max_split_k == 8
    plain = a16w16.Config(tile_m=128, tile_n=32, tile_k=64)
    assert plain.meta()["swap_ab"] is False
    assert not hg.kernel_name(a16w16.FAMILY_SPEC, plain).endswith(".sw")
    spec = {"in_dtype": "bf16", "out_dtype": "bf16", "tile_m": 128, "tile_n": 64, "tile_k": 64,
            "params": {"swap_ab": 1, "split": 8}}
    assert a16w16.Config.from_spec(spec).swap_ab == 1


@pytest.mark.parametrize("make, message", [
    (lambda: a16w16.Config(swap_ab=2), "swap_ab must be 0 or 1"),
    (lambda: a16w16.Config(tile_n=128, cluster_m=2, swap_ab=1), "no cluster"),
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=256, tile_n=32, swap_ab=1),
     "tile_m dividing 128"),
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=48, swap_ab=1),
     "multiple of 32"),
])
def test_swap_is_refused_where_it_is_not_implemented(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def _dsl_or_skip():
    try:
        hg.import_dsl()
    except Exception as exc:  # noqa: BLE001  (no CuTe DSL on this machine)
        pytest.skip(f"CuTe DSL not importable: {exc}")


@pytest.mark.parametrize("fam, kwargs", [
    (a8w8, dict(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, tile_k=128, swap_ab=1)),
    (a8w8, dict(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=32, tile_k=128, swap_ab=1)),
    (a16w16, dict(tile_m=128, tile_n=64, tile_k=64, swap_ab=1, split=8)),
    (a16w16, dict(in_dtype="bf16", out_dtype="fp32", tile_m=128, tile_n=32, tile_k=64, swap_ab=1)),
    (blockscale, dict(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, swap_ab=1, split=8)),
    (blockscale, dict(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=64, swap_ab=1, split=8)),
])
def test_swapped_epilogue_layout_matches_the_m_major_store(fam, kwargs):
    """The stmatrix (transposed) / st.shared footprint of every accumulator value lands where the M-major TMA
    store of its epilogue sub-tile reads it, for sampled threads of each consumer warpgroup."""
    _dsl_or_skip()
    cfg = fam.Config(**kwargs)
    assert fam.verify_epilogue_layout(cfg) == []


def test_swapped_scaled_epilogue_exchanges_row_and_column_operands():
    """a_scale belongs to the op's rows (tokens) = the swapped kernel's columns, w_scale to the weight rows."""
    _dsl_or_skip()
    Kernel = a8w8.FAMILY_SPEC.kernel_class()
    gemm = Kernel(a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, tile_k=128,
                              swap_ab=1))
    assert gemm._swapped_epilogue_args(("a_scale", "w_scale", "a_step", "w_step")) == (
        "w_scale", "a_scale", "w_step", "a_step")
    plain16 = a16w16.FAMILY_SPEC.kernel_class()(a16w16.Config(tile_m=128, tile_n=32, tile_k=64, swap_ab=1))
    assert plain16._swapped_epilogue_args(()) == ()


def test_swapped_blockscale_stages_a_scale_per_token_column():
    """With swap_ab a stage holds tile_n a_scale values (the tokens are the tile's columns) and the w_scale,
    and split-K is offered (the slices write promoted sums)."""
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, swap_ab=1, split=8)
    assert cfg.scale_rows == 32 and cfg.extra_stage_bytes() == (32 + 4) * 4 + 8
    assert hg.kernel_name(blockscale.FAMILY_SPEC, cfg) == "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x32x128.sk8.sw"
    assert cfg.max_split_k == 8
    plain = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=128)
    assert plain.scale_rows == 64


@pytest.mark.parametrize("tile_m, tile_n, swap", [(128, 32, 1), (64, 64, 1), (128, 128, 0), (64, 128, 0)])
def test_blockscale_scale_slot_of_every_accumulator_value_is_its_token(tile_m, tile_n, swap):
    """The promotion multiplies accumulator value i by s_row[bs_slot(i)], loaded from the stage's a_scale copy at
    bs_scale_index(slot): that index must be the value's token, i.e. its row in the PTX wgmma D fragment (row
    16 * warp + lane / 4 (+ 8) per 64-row atom) or, with swap_ab, its column (8 * (j // 4) + 2 * (lane % 4) + j % 2)."""
    _dsl_or_skip()
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=tile_m, tile_n=tile_n, swap_ab=swap)
    gemm = blockscale.FAMILY_SPEC.kernel_class()(cfg)
    per_atom = tile_n // 2
    values = per_atom * tile_m // (64 * cfg.mma_wg)
    for wg in range(cfg.mma_wg):
        for warp in range(4):
            for lane in range(32):
                thr_row0 = 64 * wg + 16 * warp + lane // 4
                slots = set()
                for i in range(values):
                    j = i % per_atom
                    token = (8 * (j // 4) + 2 * (lane % 4) + j % 2) if swap else gemm.acc_row(i, wg, warp, lane)
                    slot = gemm.bs_slot(i)
                    slots.add(slot)
                    assert gemm.bs_scale_index(slot, thr_row0, lane) == token, (wg, warp, lane, i)
                assert slots == set(range(gemm.bs_scale_slots()))
