"""The blockscale scale ring (scale_tma = R, the `.stR` kernels) of the sm_90a Hopper GEMM core
(kernels/cuda/_hopper_gemm.py), checked without a GPU: which configurations may have it, how it is named and
reported, what shared memory it takes, and that the op layer hands such kernels scale rows TMA can read.
The kernels themselves run in tests/test_gpu_cuda_kernels.py (oracle, ragged tiles, split-K / stream-K, and
bitwise against the same tile with in-stage scales)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def bs(**kw):
    return blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", **kw)


def test_the_ring_is_the_default_of_token_major_blockscale_tiles_only():
    """Token-major blockscale tiles load their scales into the ring (3 slots) unless told otherwise; .sw and
    ping-pong tiles and the other families keep no ring. A value other than the default names the kernel .stR."""
    cfg = bs(tile_m=128, tile_n=192, overlap=0)
    assert cfg.scale_tma == 3 and cfg.meta()["scale_tma_slots"] == 3
    assert hg.kernel_name(blockscale.FAMILY_SPEC, cfg) == "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x192x128"
    off = bs(tile_m=128, tile_n=192, overlap=0, scale_tma=0)
    assert off.meta()["scale_tma_slots"] == 0
    assert hg.kernel_name(blockscale.FAMILY_SPEC, off).endswith(".t128x192x128.st0")
    assert bs(tile_m=64, tile_n=128, pingpong=1).scale_tma == 0
    assert a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_k=128).scale_tma == 0
    spec = {"in_dtype": "fp8_e4m3fn", "out_dtype": "bf16", "tile_m": 64, "tile_n": 64, "tile_k": 128,
            "params": {"swap_ab": 1, "split": 8}}
    assert blockscale.Config.from_spec(spec).scale_tma == 0
    spec["params"]["scale_tma"] = 4
    name = hg.kernel_name(blockscale.FAMILY_SPEC, blockscale.Config.from_spec(spec))
    assert name.endswith(".sk8.sw.st4")


@pytest.mark.parametrize("make, message", [
    (lambda: a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_k=128, scale_tma=3), "blockscale"),
    (lambda: bs(tile_m=128, tile_n=128, scale_tma=1), "ring slots >= 2"),
    (lambda: bs(tile_m=128, tile_n=128, pingpong=1, scale_tma=3), "cooperative"),
])
def test_scale_tma_is_refused_where_it_is_not_implemented(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("kw", [dict(tile_m=128, tile_n=192, overlap=0), dict(tile_m=192, tile_n=128, overlap=0),
                                dict(tile_m=128, tile_n=128), dict(tile_m=64, tile_n=64, swap_ab=1, split=8)])
def test_the_ring_replaces_the_stage_scales_in_the_shared_memory_budget(kw):
    """A stage no longer carries scales; the ring (R slots of a [rows][4] a_scale box and a 128-byte w_scale
    box, 128-byte aligned, plus 2R mbarriers) is counted once, and these tiles keep their pipeline depth."""
    plain, ring = bs(scale_tma=0, **kw), bs(scale_tma=3, **kw)
    assert ring.stage_bytes == plain.stage_bytes - plain.extra_stage_bytes()
    rows = ring.scale_rows
    assert ring.fixed_extra_bytes() == 3 * ((rows * hg.SCALE_GROUP + 32) * 4 + 16)
    assert (rows * hg.SCALE_GROUP * 4) % 128 == 0   # the w_scale box starts 128-byte aligned
    assert ring.stages == plain.stages
    assert ring.smem_bytes <= hg.SMEM_CAPACITY


def test_adapter_requires_aligned_scales_only_for_the_ring():
    text = {}
    for st in (0, 3):
        cfg = bs(tile_m=128, tile_n=128, scale_tma=st)
        text[st] = hg.adapter_cpp(blockscale.FAMILY_SPEC, "ident_x", "name_x", "h.h", "ciface", cfg, 1000)
    assert "constexpr bool kScaleTma = true;" in text[3]
    assert "constexpr bool kScaleTma = false;" in text[0]
    assert "must be 16-byte aligned (TMA" in text[3]


def test_op_layer_pads_scale_rows_for_ring_kernels():
    """csrc: a record whose meta reports scale_tma_slots gets scale copies with 16-byte rows (aligned_rows), the
    row stride the kernel assumes (ceil(KB / 4) * 4 floats)."""
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    ops = (root / "csrc" / "device_ops.cpp").read_text()
    disp = (root / "csrc" / "dispatch.cpp").read_text()
    assert 'meta_int(k, "scale_tma_slots") > 0' in disp
    i = ops.index("if (reads_scales_by_tma(k))")
    block = ops[i:i + 400]
    assert "a_scale = aligned_rows(a_scale, /*copy_values=*/true)" in block
    assert "w_scale = aligned_rows(w_scale, /*copy_values=*/true)" in block
