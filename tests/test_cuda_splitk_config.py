"""The split-K mode (the `.skS` kernels) and the fp32 promotion of the fp8 mainloop (the `.pP` kernels)
of the sm_90a Hopper GEMM core (kernels/cuda/_hopper_gemm.py), checked without a GPU: which configurations may have it, how it is named and reported, what the
generated C++ adapter does with split_k, and that the K slices the kernel derives cover every K tile
exactly once. The kernels themselves run in tests/test_gpu_cuda_kernels.py (oracle, every split_k,
determinism)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def test_split_configs_are_named_and_report_their_max_split_k():
    cfg = a16w16.Config(tile_m=128, tile_n=128, tile_k=64, split=8)
    assert cfg.max_split_k == 8 and cfg.meta()["max_split_k"] == 8
    assert hg.kernel_name(a16w16.FAMILY_SPEC, cfg) == "gemm_a16w16.bf16.bf16.t128x128x64.sk8"
    plain = a16w16.Config(tile_m=128, tile_n=128, tile_k=64)
    assert plain.max_split_k == 1
    assert hg.kernel_name(a16w16.FAMILY_SPEC, plain) == "gemm_a16w16.bf16.bf16.t128x128x64"
    spec = {"in_dtype": "fp8_e4m3fn", "out_dtype": "bf16", "tile_m": 64, "tile_n": 128, "tile_k": 128,
            "params": {"split": 4}}
    assert a8w8.Config.from_spec(spec).max_split_k == 4


@pytest.mark.parametrize("make", [
    lambda: a16w16.Config(split=1),                                # 1 is "no split": say 0
    lambda: a16w16.Config(split=hg.MAX_SPLIT_K + 1),
    lambda: a16w16.Config(tile_n=256, stages=4, cluster_m=2, split=4),  # clusters: no
    lambda: a8w8.Config(in_dtype="int8", out_dtype="bf16", split=4),    # s32 sums stay exact
    lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", cluster_m=2, split=4),  # clusters: no
])
def test_split_is_refused_where_it_is_not_implemented(make):
    with pytest.raises(ValueError, match="split"):
        make()


def test_blockscale_offers_split_k_and_its_adapter_packs_the_workspace():
    """Since the twenty-sixth session the promoting mainloop splits K too (a slice writes its promoted, scaled
    sums): the family's C ABI carries the workspace, M_pad and split_k like gemm_a8w8's."""
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, split=8, swap_ab=1)
    assert cfg.max_split_k == 8
    plain = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=128, split=4)
    assert plain.max_split_k == 4 and not plain.swap_ab
    assert blockscale._EXPECTED_WRAPPER_ARGS[-4:] == ["void *ws_ptr", "int32_t M_pad", "int32_t split_k",
                                                      "cudaStream_t stream"]
    text = hg.adapter_cpp(blockscale.FAMILY_SPEC, "ident_b", "name_b", "b.h", "ciface_b", cfg, 1024)
    assert "kMaxSplitK = 8" in text and "&ws_ptr, &m_pad, &split_k, &stream, &ret" in text


def _adapter(cfg):
    return hg.adapter_cpp(a16w16.FAMILY_SPEC, "ident_x", "name_x", "x.h", "ciface_x", cfg, 1024)


def test_adapter_clamps_split_k_and_requires_a_workspace():
    text = _adapter(a16w16.Config(tile_m=64, tile_n=128, tile_k=64, split=8))
    assert "kMaxSplitK = 8" in text and "kTileK = 64" in text
    # clamped to the kernel's maximum and to the K tile count; outputs past int32 run unsplit
    assert "want_split > k_tiles" in text and "M * N > lim - 256" in text
    assert "needs a 16-byte aligned fp32 workspace" in text
    assert "&ws_ptr, &m_pad, &split_k" in text
    plain = _adapter(a16w16.Config(tile_m=64, tile_n=128, tile_k=64))
    assert "kMaxSplitK = 1" in plain and "this kernel has no split-K mode" in plain


@pytest.mark.parametrize("k_tiles", [1, 2, 3, 7, 16, 17, 224])
@pytest.mark.parametrize("split", [1, 2, 3, 5, 8])
def test_k_slices_cover_every_k_tile_once(k_tiles, split):
    """_split_item: slice s owns K tiles [s*KT/S, (s+1)*KT/S); the adapter keeps S <= KT."""
    split = min(split, k_tiles)
    owned = []
    for s in range(split):
        begin, end = s * k_tiles // split, (s + 1) * k_tiles // split
        assert end > begin, "empty slice"
        owned += range(begin, end)
    assert owned == list(range(k_tiles))


def test_promote_configs_are_named_and_limited_to_fp8_with_room_for_two_accumulators():
    cfg = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128, promote=4)
    assert hg.kernel_name(a8w8.FAMILY_SPEC, cfg) == "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.p4"
    assert cfg.meta()["promote_k_tiles"] == 4
    with pytest.raises(ValueError, match="promote"):   # int8 sums are exact already
        a8w8.Config(in_dtype="int8", out_dtype="bf16", promote=4)
    with pytest.raises(ValueError, match="promote"):   # bf16 wgmma accumulates in fp32
        a16w16.Config(promote=4)
    with pytest.raises(ValueError, match="promote"):   # 128 + 128 accumulator registers
        a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=256, tile_k=128,
                    promote=4)



def test_three_consumer_warpgroups_split_the_register_file_and_fit_their_accumulators():
    """tile_m 192: 3 consumer warpgroups (512 threads); setmaxnreg 32 / 160 use the whole 64K
    register file, and only the accumulator sets that fit in 160 registers are accepted."""
    cfg = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=192, tile_n=128, tile_k=128,
                            overlap=0)
    assert (cfg.mma_wg, cfg.threads) == (3, 512)
    assert cfg.meta()["setmaxnreg"] == {"producer": 32, "consumer": 160}
    assert 128 * cfg.producer_regs + 3 * 128 * cfg.consumer_regs == 65536
    assert cfg.epi_m == 192 and cfg.stages >= 4
    two = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=256, tile_k=128)
    assert (two.mma_wg, two.producer_regs, two.consumer_regs) == (2, 40, 232)
    with pytest.raises(ValueError, match="blockscale's 2"):   # 3 x 64 registers do not fit in 160
        blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=192, tile_n=128, tile_k=128)
    # 2 x 128 registers > promote's 128; 128 is also past the 96 that three consumer warpgroups hold, checked first
    with pytest.raises(ValueError, match="96 is the most ptxas fits"):
        a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=192, tile_n=256, tile_k=128, promote=4)
    with pytest.raises(ValueError, match="mma_wg"):
        a16w16.Config(tile_m=192, mma_wg=2)


def test_three_consumer_warpgroups_hold_at_most_96_accumulator_registers():
    """512-thread CTAs build under ptxas's 128-register launch bound: t192x192 (96 accumulator registers) is a kernel
    of the table, t192x208 / t192x224 (104 / 112) are refused with the reason instead of failing in ptxas."""
    assert a16w16.Config(tile_m=192, tile_n=192, tile_k=64).acc_regs == 96
    assert a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=192, tile_n=192, tile_k=128).acc_regs == 96
    for n in (208, 224):
        with pytest.raises(ValueError, match="3 consumer warpgroups needs .* 96 is the most ptxas fits"):
            a16w16.Config(tile_m=192, tile_n=n, tile_k=64)
