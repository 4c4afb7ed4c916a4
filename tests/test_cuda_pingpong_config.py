"""The ping-pong consumer schedule of the sm_90a Hopper GEMM core (param pingpong=1, the `.pp`
kernels of kernels/cuda/_hopper_gemm.py), checked without a GPU: what a ping-pong configuration is
(two one-warpgroup teams on whole tiles, their own epilogue buffers), which combinations it refuses,
and how it is named and reported. The kernels run in tests/test_gpu_cuda_kernels.py."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def test_pingpong_is_two_one_warpgroup_teams_with_their_own_epilogue_buffers():
    coop = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128)
    pp = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128, pingpong=1)
    assert (coop.teams, coop.mma_wg, coop.consumer_wgs) == (1, 2, 2)
    assert (pp.teams, pp.mma_wg, pp.consumer_wgs) == (2, 1, 2)
    assert pp.threads == coop.threads == 384
    # a whole 128x128 tile per warpgroup: twice the cooperative accumulator registers
    assert pp.acc_regs == 2 * coop.acc_regs == 128
    # epilogue sub-tiles of one warpgroup's 64 rows, one set of buffers per team
    assert pp.epi_m == 64 and coop.epi_m == 128
    assert pp.epi_bytes == 2 * pp.epi_stages * 64 * 32 * 2
    assert pp.smem_bytes <= hg.SMEM_CAPACITY
    meta = pp.meta()
    assert meta["schedule"] == "pingpong" and meta["consumer_warpgroups"] == 2
    assert coop.meta()["schedule"] == "cooperative"


def test_pingpong_kernels_are_named_pp():
    cfg = a16w16.Config(tile_m=128, tile_n=128, tile_k=64, pingpong=1, cluster_n=2)
    assert hg.kernel_name(a16w16.FAMILY_SPEC, cfg) == "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp"
    spec = {"in_dtype": "fp8_e4m3fn", "out_dtype": "bf16", "tile_m": 64, "tile_n": 256, "tile_k": 128,
            "params": {"pingpong": 1}}
    assert a8w8.Config.from_spec(spec).teams == 2


@pytest.mark.parametrize("kwargs, message", [
    (dict(tile_m=128, tile_n=256, pingpong=1), "accumulator registers"),  # 256 per thread
    (dict(tile_m=128, tile_n=128, pingpong=1, split=8), "split-K"),
    (dict(tile_m=128, tile_n=128, pingpong=1, mma_wg=2), "mma_wg=1"),
    (dict(tile_m=128, tile_n=128, pingpong=2), "pingpong must be 0 or 1"),
])
def test_pingpong_refuses_what_it_cannot_run(kwargs, message):
    with pytest.raises(ValueError, match=message):
        a16w16.Config(tile_k=64, **kwargs)


def test_blockscale_pingpong_fits_only_the_64_row_tile():
    ok = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=64, tile_n=128, tile_k=128,
                           pingpong=1)
    assert ok.teams == 2 and ok.acc_regs == 64
    with pytest.raises(ValueError, match="accumulator registers"):
        blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128,
                          pingpong=1)
