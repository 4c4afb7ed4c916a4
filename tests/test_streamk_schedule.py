"""The stream-K schedule of the sm_90a Hopper GEMM core (kernels/cuda/_hopper_gemm.py, split_k = STREAM_K), checked
without a GPU on the same functions the kernel traces: every (tile, K tile) unit is computed by exactly one CTA,
each CTA's pieces are contiguous and inside one tile, only the first and last piece of a run can be part of a
tile, a later part (starting inside a tile) is always its run's first piece and goes to the CTA's own slot, and
the CTA holding a tile's first part finds the others at CTAs c + 1 .. c_last in K order, waiting only on CTAs
of higher index. Also: which kernels offer the mode and what the adapter does with it. The kernels themselves
run in tests/test_gpu_cuda_kernels.py (oracle, determinism)."""
import pytest
from source_modules import load_hopper_families

a16w16, a8w8, blockscale = load_hopper_families()
hg = a16w16.hg


def runs(tiles, k_tiles, ctas):
    """Per CTA, the pieces of its run as the kernel's loop visits them: (tile, kt_begin, k_count)."""
    units = tiles * k_tiles
    out = []
    for c in range(ctas):
        cur, end = hg.streamk_first_unit(c, ctas, units), hg.streamk_first_unit(c + 1, ctas, units)
        pieces = []
        while cur < end:
            tile, kt_begin, count = hg.streamk_piece(cur, end, k_tiles)
            assert count >= 1
            pieces.append((tile, kt_begin, count))
            cur += count
        out.append(pieces)
    return out


# (tiles, K tiles, CTAs): fewer tiles than SMs (the LLM layer 128 x 10240 x 8192 on t128x128x128: 80 x 64), a
# tile past a wave, several waves, a run inside one tile, fewer units than CTAs (the grid is min(units, SMs)),
# one K tile, CTA counts that divide the units and ones that do not.
CASES = [(80, 64, 132), (133, 64, 132), (224, 32, 132), (448, 64, 132), (1, 64, 132), (3, 5, 15),
         (8, 1, 8), (7, 3, 21), (132, 64, 132), (264, 16, 132), (5, 1000, 78), (2, 2, 4)]


@pytest.mark.parametrize("tiles,k_tiles,sms", CASES, ids=lambda v: str(v))
def test_every_unit_once_and_every_tiles_first_part_finds_the_others(tiles, k_tiles, sms):
    units = tiles * k_tiles
    ctas = min(units, sms)   # the grid (launch_gemm, the adapter's streamk_ctas)
    written = {}             # slot -> (tile, kt_begin, count): later parts
    firsts = {}              # tile -> (cta, count): first parts that do not finish their tile
    covered = [0] * units
    for c, pieces in enumerate(runs(tiles, k_tiles, ctas)):
        assert pieces, f"CTA {c} has no work"
        for i, (tile, kt_begin, count) in enumerate(pieces):
            assert 0 <= kt_begin and kt_begin + count <= k_tiles
            for u in range(tile * k_tiles + kt_begin, tile * k_tiles + kt_begin + count):
                covered[u] += 1
                assert hg.streamk_owner(u, ctas, units) == c
            if count == k_tiles:
                continue
            assert i in (0, len(pieces) - 1), "a part of a tile inside a run"
            if kt_begin > 0:     # a later part: the run's first piece, in the CTA's own slot
                assert i == 0 and c < hg.streamk_slots(ctas) and c not in written
                written[c] = (tile, kt_begin, count)
            else:                # a first part: the run's last piece
                assert i == len(pieces) - 1 and tile not in firsts
                firsts[tile] = (c, count)
    assert covered == [1] * units
    read = set()
    for tile, (c, count) in firsts.items():
        assert hg.streamk_owner(tile * k_tiles, ctas, units) == c
        c_last = hg.streamk_owner((tile + 1) * k_tiles - 1, ctas, units)
        assert c_last > c, "a first part with no later part"
        next_k = count
        for later in range(c + 1, c_last + 1):   # the kernel's wait-and-add loop, in this order
            assert later in written and written[later][0] == tile
            assert written[later][1] == next_k, "parts not added in K order"
            next_k += written[later][2]
            read.add(later)
        assert next_k == k_tiles
    assert read == set(written), "a later part no first part adds"


def test_balanced_runs():
    """Every run has floor or ceil of units / CTAs units: the point of the schedule."""
    for tiles, k_tiles, sms in CASES:
        units = tiles * k_tiles
        ctas = min(units, sms)
        lengths = {sum(p[2] for p in pieces) for pieces in runs(tiles, k_tiles, ctas)}
        assert lengths <= {units // ctas, -(-units // ctas)}


def test_stream_k_is_offered_by_split_kernels_in_the_ops_orientation():
    split = a8w8.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=128, split=8)
    assert split.stream_k and split.meta()["stream_k"] == 1
    swapped = blockscale.Config(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile_m=128, tile_n=32, split=8, swap_ab=1)
    assert not swapped.stream_k and swapped.meta()["stream_k"] == 0
    plain = a16w16.Config(tile_m=128, tile_n=128, tile_k=64)
    assert not plain.stream_k


def _adapter(cfg):
    return hg.adapter_cpp(a16w16.FAMILY_SPEC, "ident_x", "name_x", "x.h", "ciface_x", cfg, 1024)


def test_adapter_sizes_the_slots_and_refuses_stream_k_without_the_mode():
    text = _adapter(a16w16.Config(tile_m=128, tile_n=128, tile_k=64, split=8))
    assert "constexpr bool kHasStreamK = true;" in text
    assert f"kStreamKSlotsPerCta = {hg.streamk_slots(1)}" in text
    assert "static int64_t ident_x_scratch_bytes" in text          # the registry's scratch_bytes
    assert "ctas * (kStreamKSlotsPerCta * kTileM * kTileN * 4 + 8)" in text   # slots, then 8-byte flags
    assert "m_pad = next_streamk_token();" in text                 # the flags' launch token
    assert "units <= 0x7fffffffLL / (ctas + 1)" in text             # else unsplit: int32 unit arithmetic
    plain = _adapter(a16w16.Config(tile_m=128, tile_n=128, tile_k=64))
    assert "constexpr bool kHasStreamK = false;" in plain and "has no stream-K mode" in plain
