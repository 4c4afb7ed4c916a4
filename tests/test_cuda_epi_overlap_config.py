"""The epilogue overlap of the serial blockscale mainloop (param epi_overlap=1, the `.eo` kernels of
kernels/cuda/_hopper_gemm.py), checked without a GPU: which configurations take it, which it refuses, and how it is
named and reported. The kernels run in tests/test_gpu_cuda_kernels.py (bitwise against their serial twins)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def serial_blockscale(**kwargs):
    return blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_k=128, overlap=0, **kwargs)


def test_epi_overlap_keeps_the_serial_tile_as_it_is():
    serial = serial_blockscale(tile_m=192, tile_n=128)
    eo = serial_blockscale(tile_m=192, tile_n=128, epi_overlap=1)
    # the next tile's block goes to the scratch accumulator the serial loop has anyway: same registers and smem
    assert (eo.acc_regs, eo.consumer_regs, eo.stages, eo.smem_bytes) == (
        serial.acc_regs, serial.consumer_regs, serial.stages, serial.smem_bytes)
    assert "in flight during the epilogue" in eo.meta()["mainloop"]
    assert "epilogue" not in serial.meta()["mainloop"]


def test_epi_overlap_kernels_are_named_eo():
    cfg = serial_blockscale(tile_m=128, tile_n=192, epi_overlap=1)
    assert hg.kernel_name(blockscale.FAMILY_SPEC, cfg) == "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x192x128.eo"
    spec = {"in_dtype": "fp8_e4m3fn", "out_dtype": "bf16", "tile_m": 192, "tile_n": 128, "tile_k": 128,
            "params": {"overlap": 0, "epi_overlap": 1}}
    assert blockscale.Config.from_spec(spec).epi_overlap == 1
    assert blockscale.Config.from_spec({**spec, "params": {"overlap": 0}}).epi_overlap == 0


@pytest.mark.parametrize("make, message", [
    (lambda: blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128,
                                    epi_overlap=1),
     "serial blockscale"),                                                   # overlap=1: two scratch sets
    (lambda: serial_blockscale(tile_m=128, tile_n=128, split=8, epi_overlap=1), "no split-K"),
    (lambda: serial_blockscale(tile_m=64, tile_n=128, pingpong=1, epi_overlap=1), "no split-K, no ping-pong"),
    (lambda: a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, tile_k=128,
                                    epi_overlap=1),
     "serial blockscale"),                                                   # no promotion: nothing to overlap
    (lambda: serial_blockscale(tile_m=192, tile_n=128, epi_overlap=2), "epi_overlap must be 0 or 1"),
])
def test_epi_overlap_refuses_what_it_cannot_run(make, message):
    with pytest.raises(ValueError, match=message):
        make()
