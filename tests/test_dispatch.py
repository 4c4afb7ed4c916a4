"""The dispatch table lookup (csrc/dispatch.cpp) through the test-only op
torch.ops.flygemm_testing.dispatch_lookup, which runs the production lookup over tables given
as CSV text, plus flygemm.explain / flygemm.info."""
import csv
import itertools
import json
import math
import random

import pytest
import torch

import flygemm

lookup_op = torch.ops.flygemm_testing.dispatch_lookup

# name,arch,op,in_dtype,out_dtype,k_multiple,n_multiple,max_split_k
KERNELS = """\
k_small,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1
k_large,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,8
k_fp16,gfx942,gemm_a8w8,fp8_e4m3fnuz,fp16,16,16,4
k_950,gfx950,gemm_a8w8,fp8_e4m3fn,bf16,16,16,4
"""

# arch,op,in_dtype,out_dtype,m_max,N,K,kernel,split_k
ROWS = """\
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,4096,4096,k_small,1
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,128,4096,4096,k_large,2
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,1024,4096,4096,k_large,4
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,32,0,0,k_small,1
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,8192,0,0,k_large,3
gfx942,gemm_a8w8,fp8_e4m3fnuz,fp16,64,4096,4096,k_fp16,2
gfx950,gemm_a8w8,fp8_e4m3fn,bf16,64,4096,4096,k_950,2
"""


def lookup(M, N=4096, K=4096, *, kernels=KERNELS, rows=ROWS, arch="gfx942", op="gemm_a8w8",
           in_dtype="fp8_e4m3fnuz", out_dtype="bf16", w_layout="", device_name=""):
    kernel, split_k, source = lookup_op(kernels, rows, arch, op, in_dtype, out_dtype, M, N, K, w_layout, 0,
                                        device_name).split(",")
    return kernel, int(split_k), source


# Unique M values per test for the miss log: the C++ logs each distinct miss once per process.
_unique_m = itertools.count(70001)


# ----------------------------------------------------------------------------- table rows


@pytest.mark.parametrize("M,expect", [
    (1, ("k_small", 1, "default")),   # below the 16 row's bucket (8, 16]: the default rows decide
    (8, ("k_small", 1, "default")),
    (9, ("k_small", 1, "table")),     # an exact row answers its power-of-two bucket (m_max / 2, m_max]
    (16, ("k_small", 1, "table")),    # bucket bounds are inclusive
    (17, ("k_small", 1, "default")),  # between measured buckets: default rows
    (65, ("k_large", 2, "table")),
    (128, ("k_large", 2, "table")),
    (129, ("k_large", 3, "default")),
    (513, ("k_large", 4, "table")),
    (1024, ("k_large", 4, "table")),
])
def test_exact_nk_rows_answer_their_power_of_two_bucket(M, expect):
    assert lookup(M) == expect


@pytest.mark.parametrize("M,expect", [
    (48, ("k_large", 3, "default")),  # not (48, 96]: a 96 row answers from the largest power of two below it
    (64, ("k_large", 3, "default")),
    (65, ("k_mid", 1, "table")),
    (96, ("k_mid", 1, "table")),
    (97, ("k_large", 2, "table")),    # the 128 row keeps (96, 128]
    (128, ("k_large", 2, "table")),
])
def test_an_exact_row_off_the_powers_of_two_splits_its_bucket(M, expect):
    rows = ROWS + "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,96,4096,4096,k_mid,1\n"
    kernels = KERNELS + "k_mid,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\n"
    assert lookup(M, kernels=kernels, rows=rows) == expect


def test_row_measured_at_m128_does_not_capture_decode_sizes():
    """The regression this rule fixes: a row tuned at M = 128 used to answer every M <= 128, sending
    M = 1 to a 128-row tensor-core tile instead of the decode kernel of the default rows."""
    assert lookup(1)[2] == "default" and lookup(100)[2] == "table"


@pytest.mark.parametrize("M", [1025, 4096, 1 << 20])
def test_m_above_every_exact_bucket_uses_default_rows(M):
    # The (N, K) rows were measured up to M = 1024 only: beyond that the default rows decide.
    assert lookup(M) == ("k_large", 3, "default")


def test_rows_of_other_dtypes_and_arches_are_ignored():
    assert lookup(40, out_dtype="fp16") == ("k_fp16", 2, "table")
    assert lookup(40, arch="gfx950", in_dtype="fp8_e4m3fn") == ("k_950", 2, "table")
    # fp16 has one exact bucket (64) and no default rows: above it, any fp16 kernel, never a bf16 row.
    assert lookup(500, out_dtype="fp16") == ("k_fp16", 1, "fallback")


@pytest.mark.parametrize("N,K,split_k", [
    (2048, 7168, 3),    # 64 N tiles: 3 slices give 192 CTAs
    (16384, 7168, 1),   # 512 N tiles fill the GPU alone
    (4096, 7168, 2),
    (64, 256, 2),       # 96 wanted, but only 2 K tiles
    (64, 4096 * 128, 16),  # capped by the kernel's max_split_k
])
def test_split_k_zero_means_automatic(N, K, split_k):
    kernels = "k_dec,sm_90a,gemm_a16w16,bf16,bf16,8,1,16,32,128\n"
    rows = "sm_90a,gemm_a16w16,bf16,bf16,16,0,0,k_dec,0\n"
    assert lookup(1, N, K, kernels=kernels, rows=rows, arch="sm_90a", op="gemm_a16w16", in_dtype="bf16") == \
        ("k_dec", split_k, "default")


@pytest.mark.parametrize("M,N,K,split_k", [
    (8, 16384, 7168, 1),    # 128 weight-row tiles of 128 rows: one wave of 132 CTAs holds no second slice
    (8, 7168, 16384, 1),    # 56 tiles: 2 slices would give 112 CTAs, but a split below 3 runs unsplit
    (8, 4096, 4096, 4),     # 32 tiles: 4 slices give 128 CTAs
    (8, 5632, 4096, 3),     # 44 tiles: 3 slices give 132 CTAs
    (8, 5760, 4096, 1),     # 45 tiles: 2 slices (90 CTAs) are below the smallest split worth its reduce
    (16, 2048, 7168, 8),    # 16 tiles: 8 slices (128 CTAs), also the kernel's max_split_k
    (16, 5120, 5120, 3),    # 40 tiles: 3 slices give 120 CTAs (4 would start a second wave)
    (64, 7168, 7168, 1),    # 56 weight tiles x 2 token tiles of 32
    # fewer than 24 K tiles: unsplit, whatever the tiles (twenty-sixth session)
    (8, 1024, 256, 1),      # 8 tiles want 16 slices, only 2 K tiles
    (16, 2048, 2048, 1),    # 16 tiles want 8 slices, 16 K tiles
    (16, 4096, 2560, 1),    # 32 tiles want 4 slices, 20 K tiles
    (16, 2048, 3072, 8),    # 24 K tiles: 8 slices of 3
])
def test_split_k_zero_counts_a_swapped_kernels_weight_rows_and_token_tiles(M, N, K, split_k):
    """A .sw tile (tile_m 128 weight rows by tile_n 32 tokens): its N tiles are 128 rows wide, not 32, and its
    slices fill one wave of 132 CTAs (one CTA per SM) rather than 192; a split of 2 runs unsplit, and so does any
    split when K has fewer than 24 K tiles."""
    kernels = "k_sw,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,32,128,plain,,128,1\n"
    rows = "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,64,0,0,k_sw,0\n"
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn") == \
        ("k_sw", split_k, "default")
    unswapped = kernels.replace(",1\n", ",0\n")   # same tiles read as a plain kernel: 32-wide N tiles
    assert lookup(8, 7168, 16384, kernels=unswapped, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn")[1] == 1


def test_row_order_does_not_matter():
    shuffled = "\n".join(reversed(ROWS.strip().split("\n")))
    for M in (1, 16, 17, 129, 5000):
        assert lookup(M, rows=shuffled) == lookup(M)


@pytest.mark.parametrize("M,expect", [(1, ("k_small", 1)), (32, ("k_small", 1)), (33, ("k_large", 3)),
                                      (8192, ("k_large", 3)), (100000, ("k_large", 3))])
@pytest.mark.parametrize("N,K", [(1024, 2048), (4096, 2048), (2048, 4096)])
def test_absent_nk_uses_default_rows(M, expect, N, K):
    assert lookup(M, N, K) == expect + ("default",)


def test_no_rows_falls_back_to_any_matching_kernel():
    assert lookup(1, rows="") == ("k_small", 1, "fallback")
    assert lookup(5000, 1024, 512, rows="") == ("k_small", 1, "fallback")
    assert lookup(3, out_dtype="fp16", rows="") == ("k_fp16", 1, "fallback")
    # Rows for other (N, K) only and no default rows: fallback as well.
    only_exact = "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,4096,4096,k_large,2\n"
    assert lookup(3, 1024, 1024, rows=only_exact) == ("k_small", 1, "fallback")
    assert lookup(12, rows=only_exact) == ("k_large", 2, "table")


def test_row_naming_an_unknown_kernel_is_skipped():
    rows = ("gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,64,4096,4096,k_gone,2\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,64,0,0,k_large,2\n")
    assert lookup(8, rows=rows) == ("k_large", 2, "default")


# ----------------------------------------------------------------------------- alignment

ALIGN_KERNELS = """\
k_128,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,128,128,4
k_n64,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,64,4
k_any,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,4
"""
ALIGN_ROWS = """\
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,256,4096,4000,k_128,2
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,256,4096,4096,k_128,2
gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,256,0,0,k_n64,2
"""


def test_default_rows_of_one_bucket_are_tried_in_order():
    """Several default rows for one M bucket: the first whose kernel meets the shape answers (the sm_90a
    MXFP4 .wgn decode kernels need K % 128, the row after them takes the rest); an exact row still wins."""
    kernels = ALIGN_KERNELS
    rows = ("gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,8,0,0,k_128,0\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,8,0,0,k_any,3\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,64,0,0,k_n64,2\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,8,4096,4000,k_n64,1\n")
    assert lookup(4, 4096, 4096, kernels=kernels, rows=rows)[::2] == ("k_128", "default")
    assert lookup(4, 4096, 4032, kernels=kernels, rows=rows) == ("k_any", 3, "default")
    # the next bucket's rows are not consulted while one of this bucket's fits
    assert lookup(8, 1040, 4032, kernels=kernels, rows=rows) == ("k_any", 3, "default")
    assert lookup(9, 4096, 4032, kernels=kernels, rows=rows) == ("k_n64", 2, "default")
    assert lookup(8, 4096, 4000, kernels=kernels, rows=rows) == ("k_n64", 1, "table")


def test_swapped_default_row_answers_only_within_one_wave():
    """A .sw kernel in a default row (one CTA per SM) answers only while its weight-row tiles x token tiles fit in
    one wave of 132 CTAs; otherwise the bucket's next row does, and with no row fitting the first row still
    answers. Exact rows are not subject to the rule (they were measured)."""
    kernels = ("k_sw64,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,32,128,plain,,64,1\n"
               "k_sw128,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,32,128,plain,,128,1\n"
               "k_tile,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,128,128,plain,,64,0\n")
    rows = ("sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,32,0,0,k_sw64,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,32,0,0,k_sw128,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,32,0,0,k_tile,1\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,64,0,0,k_sw64,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,64,8448,4096,k_sw64,1\n")
    find = lambda M, N: lookup(M, N, 4096, kernels=kernels, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn")
    assert find(32, 8448) == ("k_sw64", 1, "default")      # 132 tiles of 64 rows: exactly one wave
    assert find(32, 8512) == ("k_sw128", 1, "default")     # 133 tiles: the 128-row .sw kernel (67 tiles)
    assert find(24, 1024) == ("k_sw64", 8, "default")      # 16 tiles: one-wave split 8
    assert find(32, 17024) == ("k_tile", 1, "default")     # 133 tiles of 128 rows: the unswapped tile kernel
    assert find(48, 4224) == ("k_sw64", 1, "default")      # 66 x 2 token tiles = 132
    assert find(48, 8448) == ("k_sw64", 1, "table")        # an exact row is not subject to the rule
    assert find(64, 9000) == ("k_sw64", 1, "default")      # the bucket's only row: it answers anyway


def test_one_wave_is_the_devices_sm_count():
    """The one-wave rules count the device's SMs (production passes them; an H20 has 78, an H100 PCIe 114); without
    a count (0) the arch's reference part: sm_90a 132."""
    kernels = ("k_sw64,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,32,128,plain,,64,1\n"
               "k_sw128,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,32,128,plain,,128,1\n")
    rows = ("sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,32,0,0,k_sw64,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,32,0,0,k_sw128,0\n")
    find = lambda N, sms: lookup_op(kernels, rows, "sm_90a", "gemm_a8w8", "fp8_e4m3fn", "bf16", 32, N, 4096, "", sms)
    assert find(8448, 0) == find(8448, 132) == "k_sw64,1,default"    # 132 tiles of 64 rows
    assert find(8448, 114) == "k_sw128,1,default"                      # 132 > 114: the 128-row tile (66)
    assert find(1024, 132) == "k_sw64,8,default"                       # 16 tiles: split 132 / 16
    assert find(1024, 78) == "k_sw64,4,default"                        # 78 / 16


def test_decode_default_row_answers_only_within_one_wave():
    """A decode kernel in a default row (its metadata names the CTAs per SM it is built for) answers only while
    its N tiles x automatic split fit in one wave of that many CTAs on each of 132 SMs, and at a fixed split while its
    CTAs number from the ring edge (csrc/dispatch.cpp ring_min_ctas; 8-row tiles: 32 at K = 4096) to 132; otherwise the bucket's next row does, and with no row fitting the first row. Kernels without
    the key are not subject to it."""
    kernels = ("k_n16,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,16,16,256,plain,,8,0,4,0\n"
               "k_n64,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,16,64,256,plain,,8,0,2,0\n"
               "k_tile,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,128,128,plain,,64,0\n")
    rows = ("sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,8,0,0,k_n16,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,8,0,0,k_n64,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,8,16960,4096,k_n64,0\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,0,0,k_n64,2\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,0,0,k_tile,1\n")
    find = lambda M, N: lookup(M, N, 4096, kernels=kernels, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn")
    assert find(4, 8448) == ("k_n16", 1, "default")     # 528 tiles of 16 rows: 4 x 132, exactly one wave
    assert find(4, 12800) == ("k_n64", 1, "default")    # 800 tiles of 16 rows; 200 of 64 rows at split 1
    assert find(4, 16896) == ("k_n64", 1, "default")    # 264 tiles of 64 rows at split 1: one wave
    assert find(4, 8464) == ("k_n16", 1, "default")     # 529 tiles; 133 of 64 rows x split 2 = 266: none fits
    assert find(4, 16960) == ("k_n16", 1, "default")    # 265 tiles of 64 rows: none fits, the first row
    assert find(4, 1024) == ("k_n16", 3, "default")     # 64 tiles: split 3, 192 CTAs
    assert find(8, 16960) == ("k_n64", 1, "table")      # an exact row is not subject to the rule (265 tiles)
    # a fixed split (sixty-fifth session): from 64 CTAs to one wave of one CTA per SM, whatever the kernel is sized for
    assert find(16, 16960) == ("k_tile", 1, "default")  # 265 tiles x 2
    assert find(16, 8448) == ("k_tile", 1, "default")   # 132 x 2 = 264: two CTAs per SM
    assert find(16, 4224) == ("k_n64", 2, "default")    # 66 x 2 = 132
    assert find(16, 4288) == ("k_tile", 1, "default")   # 67 x 2 = 134
    assert find(16, 2048) == ("k_n64", 2, "default")    # 32 x 2 = 64
    # below 64 CTAs an 8-row kernel at a fixed split answers from max(32, K / 192) (sixty-eighth session)
    assert find(16, 1984) == ("k_n64", 2, "default")    # 31 x 2 = 62 >= 32
    assert find(16, 1024) == ("k_n64", 2, "default")    # 16 x 2 = 32
    assert find(16, 960) == ("k_tile", 1, "default")    # 15 x 2 = 30: too few


def test_tile_default_row_answers_within_one_wave_unless_last():
    """A plain tile kernel in a default row that is not its bucket's last answers only while its token tiles x
    weight-row tiles x split fit in one wave of 132 CTAs; the bucket's last row always answers (a list of tile
    kernels ends at its fallback instead of its first row). Tile kernels alone in a bucket are unchanged."""
    kernels = ("k_t128,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,128,128,128,plain,,128,0\n"
               "k_t192,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,128,192,128,plain,,128,0\n"
               "k_t256,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,128,256,128,plain,,128,0\n")
    rows = ("sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,128,0,0,k_t128,1\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,128,0,0,k_t192,1\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,128,0,0,k_t256,1\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,128,0,0,k_t128,1\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,256,0,0,k_t128,2\n"
            "sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,256,0,0,k_t256,1\n")
    find = lambda M, N: lookup(M, N, 4096, kernels=kernels, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn")
    assert find(100, 16896) == ("k_t128", 1, "default")  # 132 tiles of 128 rows: one wave
    assert find(100, 16897) == ("k_t192", 1, "default")  # 133: the 192-row tile (89)
    assert find(128, 33792) == ("k_t256", 1, "default")  # 176 of 192 rows; 132 of 256
    assert find(128, 49152) == ("k_t128", 1, "default")  # none fits: the last row (384 tiles, 97% of 3 waves)
    assert find(128, 40000) == ("k_t192", 1, "default")  # none fits, the last row's 313 tiles fill 79% of 3 waves:
                                                         # the cheapest waves x width (2 x 192 against 3 x 128)
    assert find(200, 4096) == ("k_t128", 2, "default")   # 2 x 32 tiles x split 2 = 128
    assert find(200, 8448) == ("k_t256", 1, "default")   # 2 x 66 x 2 = 264 > 132: the last row


def test_bulk_ring_decode_kernels_run_unsplit_up_to_k_4096_with_32_tiles():
    """The automatic split of a bulk-ring decode kernel (metadata w_bulk > 0) is 1 while K <= 4096 and it has at
    least 32 N tiles, else the 192-CTA split; the same kernel without a bulk ring splits at every K."""
    kernels = ("k_bulk,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,16,32,256,plain,,8,0,2,2\n"
               "k_reg,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,16,32,256,plain,,8,0,2,0\n")
    find = lambda k, K: lookup(1, 2048, K, kernels=kernels, rows=f"sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,8,0,0,{k},0\n",
                               arch="sm_90a", in_dtype="fp8_e4m3fn")
    assert find("k_bulk", 4096) == ("k_bulk", 1, "default")
    assert find("k_bulk", 4352) == ("k_bulk", 3, "default")  # 64 tiles: 192 CTAs
    assert find("k_reg", 4096) == ("k_reg", 3, "default")
    find_n = lambda N: lookup(1, N, 4096, kernels=kernels, rows="sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,8,0,0,k_bulk,0\n",
                              arch="sm_90a", in_dtype="fp8_e4m3fn")
    assert find_n(1024) == ("k_bulk", 1, "default")  # 32 tiles
    assert find_n(992) == ("k_bulk", 7, "default")   # 31 tiles: fewer were not measured, the 192-CTA split


def test_alignment_constraint_skips_a_kernel():
    # Aligned: the table row is used.
    assert lookup(200, 4096, 4096, kernels=ALIGN_KERNELS, rows=ALIGN_ROWS) == ("k_128", 2, "table")
    # K = 4000 is not a multiple of 128: the exact row's kernel is skipped, the default's is used.
    assert lookup(200, 4096, 4000, kernels=ALIGN_KERNELS, rows=ALIGN_ROWS) == ("k_n64", 2, "default")
    # N = 1040 meets neither k_128 nor k_n64 (N % 64): the first kernel that fits, split_k 1.
    assert lookup(8, 1040, 4096, kernels=ALIGN_KERNELS, rows=ALIGN_ROWS) == ("k_any", 1, "fallback")


def test_no_aligned_kernel_raises():
    kernels = "k_128,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,128,128,4\n"
    with pytest.raises(NotImplementedError,
                       match=r"flygemm\.gemm_a8w8 on gfx942.*N=4096 K=4000.*alignment.*K % 128 == 0 and N % 128 == 0"):
        lookup(8, 4096, 4000, kernels=kernels, rows="")


# ----------------------------------------------------------------------------- split_k


def test_split_k_clamped_to_kernel_max():
    rows = ("gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,4096,4096,k_large,32\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,64,4096,4096,k_small,4\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,128,4096,4096,k_large,0\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,256,4096,4096,k_large,-3\n"
            "gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,512,4096,4096,k_zero,5\n")
    kernels = KERNELS + "k_zero,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,0\n"
    assert lookup(12, rows=rows, kernels=kernels) == ("k_large", 8, "table")  # 32 -> max 8
    assert lookup(40, rows=rows, kernels=kernels) == ("k_small", 1, "table")  # 4 -> max 1
    assert lookup(100, rows=rows, kernels=kernels) == ("k_large", 1, "table")  # 0 = automatic: 1 here
    assert lookup(200, rows=rows, kernels=kernels) == ("k_large", 1, "table")  # negative -> 1
    assert lookup(300, rows=rows, kernels=kernels) == ("k_zero", 1, "table")   # max 0 means 1


# ----------------------------------------------------------------------------- weight layout

# A plain-weight decode kernel for the smallest bucket, preshuffled kernels above it (the ROCm
# tables' shape): the caller's weight layout picks between them.
LAYOUT_KERNELS = """\
k_decode,gfx942,gemm_a16w16,bf16,bf16,8,1,16,32,512,plain
k_small,gfx942,gemm_a16w16,bf16,bf16,8,16,16,64,256,preshuffled
k_big,gfx942,gemm_a16w16,bf16,bf16,8,16,1,128,64,preshuffled
"""
LAYOUT_ROWS = """\
gfx942,gemm_a16w16,bf16,bf16,8,0,0,k_decode,4
gfx942,gemm_a16w16,bf16,bf16,16,0,0,k_small,8
gfx942,gemm_a16w16,bf16,bf16,9223372036854775807,0,0,k_big,1
gfx942,gemm_a16w16,bf16,bf16,1,2048,7168,k_decode,2
gfx942,gemm_a16w16,bf16,bf16,1,1024,1000,k_decode,2
gfx942,gemm_a16w16,bf16,bf16,2,2048,7168,k_small,4
"""


def layout_lookup(M, N=4096, K=4096, w_layout=""):
    return lookup(M, N, K, kernels=LAYOUT_KERNELS, rows=LAYOUT_ROWS, op="gemm_a16w16", in_dtype="bf16",
                  out_dtype="bf16", w_layout=w_layout)


@pytest.mark.parametrize("w_layout", ["", "plain"])
def test_layout_unknown_or_matching_keeps_the_row(w_layout):
    assert layout_lookup(1, w_layout=w_layout) == ("k_decode", 4, "default")
    assert layout_lookup(1, 2048, 7168, w_layout) == ("k_decode", 2, "table")
    assert layout_lookup(9, w_layout=w_layout) == ("k_small", 8, "default")


def test_preshuffled_weight_takes_the_next_native_bucket():
    """A preshuffled weight is not unshuffled for the plain decode kernel: the smallest covering
    bucket of the same rows whose kernel reads preshuffled weights is used, with its split_k."""
    assert layout_lookup(1, w_layout="preshuffled") == ("k_small", 8, "default")
    assert layout_lookup(100, w_layout="preshuffled") == ("k_big", 1, "default")
    assert layout_lookup(2, 2048, 7168, "preshuffled") == ("k_small", 4, "table")  # exact row, native
    # the exact rows' native row answers only its bucket (1, 2]: M = 1 takes the default rows'
    assert layout_lookup(1, 2048, 7168, "preshuffled") == ("k_small", 8, "default")


def test_layout_no_kernel_reads_keeps_the_tuned_row():
    """When no kernel at all reads the caller's layout (sm_90a: every kernel reads plain weights), the
    weight is converted anyway, so the exact (tuned) row still decides."""
    kernels = "k_dec,sm_90a,gemm_a16w16,bf16,bf16,8,1,16,32,128,plain\nk_big,sm_90a,gemm_a16w16,bf16,bf16,8,8,1,128,64,plain\n"
    rows = ("sm_90a,gemm_a16w16,bf16,bf16,16,0,0,k_dec,0\n"
            "sm_90a,gemm_a16w16,bf16,bf16,128,4096,4096,k_big,1\n")
    for w_layout in ("", "plain", "preshuffled"):
        assert lookup(100, 4096, 4096, kernels=kernels, rows=rows, arch="sm_90a", op="gemm_a16w16",
                      in_dtype="bf16", w_layout=w_layout) == ("k_big", 1, "table")


def test_no_native_row_keeps_the_table_choice():
    # no plain kernel covers M = 100 (the decode row's bucket is below): the weight is converted
    assert layout_lookup(100, w_layout="plain") == ("k_big", 1, "default")
    assert layout_lookup(16, w_layout="plain") == ("k_small", 8, "default")
    # exact rows with only a plain kernel defer a preshuffled weight to the default rows
    assert layout_lookup(1, 1024, 1000, "preshuffled") == ("k_small", 8, "default")


def test_bad_layout_name():
    with pytest.raises(RuntimeError, match="unknown weight layout 'swizzled'"):
        layout_lookup(1, w_layout="swizzled")


# ----------------------------------------------------------------------------- errors


def test_unknown_arch_names_arch_and_supported():
    with pytest.raises(NotImplementedError,
                       match=r"flygemm\.gemm_a8w8 on sm_80 .*no kernels for arch sm_80; arches with kernels: gfx942, gfx950"):
        lookup(8, arch="sm_80")


def test_op_without_kernels():
    with pytest.raises(NotImplementedError, match=r"gemm_mxfp4 on gfx950.*no gfx950 kernel implements this op"):
        lookup(8, arch="gfx950", op="gemm_mxfp4", in_dtype="fp4_e2m1_x2")


def test_op_unsupported_by_design_says_why_and_what_instead():
    # gfx942 has no MX hardware (docs/ROCM.md, "MX formats")
    with pytest.raises(NotImplementedError, match=r"gemm_mxfp4 on gfx942 .*: not supported on gfx942: CDNA3 has no fp4 "
                                                  r".*flygemm\.quant\.dequantize_mxfp4.*flygemm\.gemm_a16w16"):
        lookup(8, op="gemm_mxfp4", in_dtype="fp4_e2m1_x2")


def test_dtype_combination_not_built():
    with pytest.raises(NotImplementedError,
                       match=r"no gfx942 kernel for this dtype combination; built: fp8_e4m3fnuz->bf16, fp8_e4m3fnuz->fp16"):
        lookup(8, out_dtype="fp32")


MX_KERNELS = """\
mx_decode,sm_90a,gemm_mxfp4,fp4_e2m1_x2,bf16,32,1,16,32,256,plain
mx_convert,sm_90a,gemm_mxfp4,fp4_e2m1_x2,bf16,32,1,1,1,32,plain,mx_to_bf16
"""
MX_ROWS = """\
sm_90a,gemm_mxfp4,fp4_e2m1_x2,bf16,16,0,0,mx_decode,0
sm_90a,gemm_mxfp4,fp4_e2m1_x2,bf16,9223372036854775807,0,0,mx_convert,1
"""


@pytest.mark.parametrize("M", [1, 16, 17, 4096])
def test_mx_fp16_output_takes_the_bf16_conversion_at_every_m(M):
    """The MX kernels that read MX bytes write bf16 only; an fp16 output takes the record that converts
    the operands to bf16 (its bf16 GEMM writes fp16), at decode sizes too; bf16 keeps the rows."""
    mx = dict(kernels=MX_KERNELS, rows=MX_ROWS, arch="sm_90a", op="gemm_mxfp4", in_dtype="fp4_e2m1_x2")
    assert lookup(M, 2048, 7168, out_dtype="fp16", **mx) == ("mx_convert", 1, "default")
    assert lookup(M, 2048, 7168, out_dtype="bf16", **mx)[0] == ("mx_decode" if M <= 16 else "mx_convert")
    with pytest.raises(NotImplementedError, match="no sm_90a kernel for this dtype combination"):
        lookup(M, 2048, 7168, out_dtype="fp16", **{**mx, "kernels": MX_KERNELS.splitlines()[0] + "\n"})


def test_empty_tables_raise_not_implemented():
    with pytest.raises(NotImplementedError, match=r"arches with kernels: none"):
        lookup(8, kernels="", rows="")


def test_bad_csv_is_rejected():
    with pytest.raises(RuntimeError, match="kernel line needs 8, 10, 11, 12, 14, 16, 17, 18, 19 or 20 fields"):
        lookup(8, kernels="k,gfx942,gemm_a8w8\n")
    with pytest.raises(RuntimeError, match="row line needs 9 fields"):
        lookup(8, rows="gfx942,gemm_a8w8,fp8_e4m3fnuz\n")
    with pytest.raises(RuntimeError, match="unknown dtype 'fp9'"):
        lookup(8, in_dtype="fp9")
    with pytest.raises(RuntimeError, match="unknown op gemm_nope"):
        lookup(8, op="gemm_nope")


# ----------------------------------------------------------------------------- miss log

HEADER = "arch,op,in_dtype,out_dtype,m_max,N,K,kernel,split_k,us,tflops,gbps"


def test_log_misses_appends_tuner_rows(tmp_path, monkeypatch):
    log = tmp_path / "misses.csv"
    monkeypatch.setenv("FLYGEMM_LOG_MISSES", str(log))
    m_hit, m_default, m_fallback = next(_unique_m), next(_unique_m), next(_unique_m)
    # A table hit logs nothing (M inside the largest exact bucket).
    assert lookup(m_hit % 512 + 513)[2] == "table"
    assert not log.exists() or log.read_text() == ""
    # A default-row miss and a fallback miss.
    assert lookup(m_default, 1024, 2048) == ("k_large", 3, "default")
    assert lookup(m_fallback, 2048, 512, rows="") == ("k_small", 1, "fallback")
    # Repeating a miss does not add a row.
    lookup(m_default, 1024, 2048)
    lines = log.read_text().splitlines()
    assert lines[0] == HEADER
    assert lines[1:] == [
        f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m_default},1024,2048,k_large,3,,,",
        f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m_fallback},2048,512,k_small,1,,,",
    ]
    rows = list(csv.DictReader(log.open()))
    assert [r["kernel"] for r in rows] == ["k_large", "k_small"]
    assert all(r["us"] == "" and r["tflops"] == "" and r["gbps"] == "" for r in rows)
    # The rows are valid dispatch rows for the lookup itself (the tuner fills in us/tflops/gbps).
    as_rows = "\n".join(",".join(line.split(",")[:9]) for line in lines[1:]) + "\n"
    assert lookup(m_default, 1024, 2048, rows=as_rows) == ("k_large", 3, "table")


def test_log_misses_appends_without_second_header(tmp_path, monkeypatch):
    log = tmp_path / "misses.csv"
    log.write_text(HEADER + "\ngfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,1,2,3,k_small,1,,,\n")
    monkeypatch.setenv("FLYGEMM_LOG_MISSES", str(log))
    m = next(_unique_m)
    lookup(m, 512, 512)
    lines = log.read_text().splitlines()
    assert lines.count(HEADER) == 1 and len(lines) == 3
    assert lines[2] == f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m},512,512,k_large,3,,,"


def test_no_log_without_env(tmp_path, monkeypatch):
    monkeypatch.delenv("FLYGEMM_LOG_MISSES", raising=False)
    monkeypatch.chdir(tmp_path)
    lookup(next(_unique_m), 640, 640)
    assert list(tmp_path.iterdir()) == []
    # Set after the first call: read at call time.
    log = tmp_path / "late.csv"
    monkeypatch.setenv("FLYGEMM_LOG_MISSES", str(log))
    m = next(_unique_m)
    lookup(m, 640, 640)
    assert log.read_text().splitlines()[1].startswith(f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m},640,640,")


def test_log_dispatch_records_every_pick_once(tmp_path, monkeypatch):
    """FLYGEMM_LOG_DISPATCH: each distinct call's pick, table hits included, with its source; a call with row scales
    under "gemm_a8w8.row_scales"; a new file gets a header (and the rows already logged to another file)."""
    log = tmp_path / "dispatch.csv"
    monkeypatch.setenv("FLYGEMM_LOG_DISPATCH", str(log))
    m_hit, m_default = next(_unique_m) % 512 + 513, next(_unique_m)
    assert lookup(m_hit)[2] == "table"
    assert lookup(m_default, 1024, 2048) == ("k_large", 3, "default")
    lookup(m_hit)
    assert lookup(128, 4096, 4096, kernels=SCALED_KERNELS, rows=SCALED_ROWS, op="gemm_a8w8.row_scales") == (
        "k_scaled", 1, "table")
    hit = lookup(m_hit)
    lines = log.read_text().splitlines()
    assert lines == [
        "arch,op,in_dtype,out_dtype,M,N,K,kernel,split_k,source",
        f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m_hit},4096,4096,{hit[0]},{hit[1]},table",
        f"gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,{m_default},1024,2048,k_large,3,default",
        "gfx942,gemm_a8w8.row_scales,fp8_e4m3fnuz,bf16,128,4096,4096,k_scaled,1,table",
    ]
    other = tmp_path / "other.csv"
    monkeypatch.setenv("FLYGEMM_LOG_DISPATCH", str(other))
    lookup(m_hit)
    assert other.read_text().splitlines()[1] == lines[1]
    monkeypatch.delenv("FLYGEMM_LOG_DISPATCH")
    lookup(m_default + 1, 1024, 2048)
    assert len(log.read_text().splitlines()) == 4 and len(other.read_text().splitlines()) == 2


# ----------------------------------------------------------------------------- explain / info


@pytest.mark.parametrize("op", ["gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"])
def test_explain_cpu(op):
    expect = {"kernel": "cpu_reference", "split_k": 1, "source": "cpu", "arch": "cpu"}
    assert flygemm.explain(op, 16, 4096, 4096, torch.bfloat16, device="cpu") == expect
    assert flygemm.explain(op, 1, 8, 8, device=torch.device("cpu")) == expect


def test_info():
    info = flygemm.info()
    assert info["version"] == flygemm.__version__
    assert "cpu" in info["backends"]
    assert set(info["backends"]) <= {"cpu", "cuda", "rocm"}
    assert isinstance(info["archs"], dict) and isinstance(info["kernels"], list)
    for k in info["kernels"]:
        assert {"name", "arch", "op", "in_dtype", "out_dtype", "w_layout", "tile"} <= set(k)
        assert k["arch"] in info["archs"]
    for arch, counts in info["archs"].items():
        assert counts["kernels"] == sum(k["arch"] == arch for k in info["kernels"])


def test_explain_memoizes_the_linked_lookup():
    """The op path and explain answer from choose_kernel_cached: one entry per distinct query (every field of it in
    the key: M, the weight layout, ...), the same answer again from the entry, and no entry for a query that fails."""
    kernels = flygemm.info()["kernels"]
    if not kernels:
        pytest.skip("no kernels linked into this build")
    arch, op = kernels[0]["arch"], kernels[0]["op"]
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(kernels[0]["in_dtype"])
    if dtype is None:
        pytest.skip("the first linked kernel is not a bf16 / fp16 one")
    size = torch.ops.flygemm_testing.choice_cache_size
    M = next(_unique_m)
    before = size()
    first = flygemm.explain(op, M, 4096, 4096, dtype, device=arch)
    assert size() == before + 1
    assert flygemm.explain(op, M, 4096, 4096, dtype, device=arch) == first and size() == before + 1
    flygemm.explain(op, M + 1, 4096, 4096, dtype, device=arch)
    flygemm.explain(op, M, 4096, 4096, dtype, device=arch, w_layout="preshuffled")
    assert size() == before + 3
    with pytest.raises(RuntimeError):
        flygemm.explain("gemm_nope", M, 4096, 4096, dtype, device=arch)
    assert size() == before + 3


def test_explain_on_linked_table():
    """explain for an arch uses the table linked into this build: a kernel when one exists,
    otherwise a NotImplementedError naming the arch and the arches that have kernels."""
    info = flygemm.info()
    names = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8_e4m3fn": torch.float8_e4m3fn,
             "fp8_e4m3fnuz": torch.float8_e4m3fnuz, "int8": torch.int8, "fp4_e2m1_x2": torch.float4_e2m1fn_x2}
    outs = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    for k in info["kernels"][:5]:
        got = flygemm.explain(k["op"], 64, 4096, 4096, names[k["in_dtype"]], device=k["arch"],
                              out_dtype=outs[k["out_dtype"]])
        assert got["arch"] == k["arch"] and got["split_k"] >= 1
        assert got["source"] in ("table", "default", "fallback")
    for arch in ("sm_90a", "gfx942", "gfx950"):
        if arch in info["archs"]:
            continue
        supported = ", ".join(sorted(info["archs"])) or "none"
        with pytest.raises(NotImplementedError, match=rf"no kernels for arch {arch}; arches with kernels: {supported}"):
            flygemm.explain("gemm_a16w16", 64, 4096, 4096, torch.bfloat16, device=arch)
    with pytest.raises(RuntimeError, match="flygemm.explain: unknown op 'gemm_nope'"):
        flygemm.explain("gemm_nope", 1, 1, 1, torch.bfloat16, device="gfx942")



def sm90a_tables(op="gemm_mxfp4"):
    """The sm_90a kernels and dispatch rows of an op as the build reads them (kernels/configs/sm_90a*.csv),
    in the test op's CSV form; the decode kernels' K requirement, CTAs per SM and bulk ring from their family's
    Config, the tile kernels' from theirs; a tile kernel's area_speed and by_cost params and its schedule (ping-pong or not;
    csrc/dispatch.cpp) as the build passes them. The rows
    include the op's scaling-restricted ones ("gemm_a8w8.row_scales"), and both add the dtype twins
    (kernels/configs/sm_90a.twins.csv) as tools/build_kernels.py does."""
    op = op.split(".")[0]
    from source_modules import ROOT as root, load_source
    fam = load_source("kernels/cuda/gemm_splitk_decode.py", "decode_family")
    bk = load_source("tools/build_kernels.py", "flygemm_build_kernels")
    listed = [r for r in csv.reader(line for line in open(root / "kernels/configs/sm_90a.kernels.csv")
                                    if not line.startswith("#")) if len(r) >= 9]
    table = [r for r in csv.reader(line for line in open(root / "kernels/configs/sm_90a.csv")
                                   if line.startswith("sm_90a,"))]
    by_name = {r[0]: r for r in listed}
    # a tile kernel's K requirement is its family's (16-byte TMA rows: 8 bf16 / 16 fp8; MX: one 32-block), as
    # _hopper_gemm.build / gemm_mxfp.build report it to the registry
    families = {f: load_source(f"kernels/cuda/{f}.py", f"k_align_{f}")
                for f in {r[1] for r in listed if r[2] == op and r[1] != "gemm_splitk_decode"}}
    k_align = {f: m.FAMILY_SPEC.k_align if hasattr(m, "FAMILY_SPEC") else m.MX_BLOCK for f, m in families.items()}
    listed += [[s["name"], *by_name[s["twin_of"]][1:3], s["in_dtype"], s["out_dtype"], *by_name[s["twin_of"]][5:]]
               for s in bk.read_kernel_specs("sm_90a") if "twin_of" in s]   # the build's own twin list
    kernels = []
    for r in listed:
        if r[2] != op:
            continue
        k_multiple, max_split, per_sm, bulk = k_align.get(r[1], 0), 16, 0, 0
        params = {k: int(v) if v.isdigit() else v for k, v in (kv.split("=") for kv in r[9].split(";") if kv)}
        if r[1] == "gemm_splitk_decode":
            cfg = fam.Config.from_spec({"op": r[2], "tile_m": int(r[6]), "tile_n": int(r[7]),
                                        "tile_k": int(r[8]), "params": params})
            k_multiple, per_sm, bulk = cfg.k_multiple, cfg.min_blocks, cfg.w_bulk
        else:
            max_split = params.get("split", 1)
        swap = params.get("swap_ab", 0)
        stream_k = int(max_split > 1 and not swap and r[1] != "gemm_splitk_decode")  # GemmConfig.stream_k
        kernels.append(f"{r[0]},sm_90a,{r[2]},{r[3]},{r[4]},{k_multiple},1,{max_split},{r[7]},{r[8]},{r[5]},,{r[6]},"
                       f"{swap},{per_sm},{bulk},{stream_k},{params.get('area_speed', 0)},{params.get('by_cost', 0)},"
                       f"{'pingpong' if params.get('pingpong') else ''}")
    dicts = [dict(zip(("arch", "op", "in_dtype", "out_dtype", "m_max", "N", "K", "kernel", "split_k"), r[:9]))
             for r in table]
    rows = [",".join(d.values()) for d in dicts + bk.twin_rows("sm_90a", dicts) if bk.row_base_op(d["op"]) == op]
    return "\n".join(kernels) + "\n", "\n".join(rows) + "\n"


SM90A_IN_DTYPE = {"gemm_a16w16": "bf16", "gemm_mxfp4": "fp4_e2m1_x2"}   # the others here: fp8_e4m3fn


def sm90a_lookup(op, M, N, K, device_name=""):
    """(kernel, split_k, source) the production lookup answers from the sm_90a tables for op's usual input dtype,
    on a device of that name ("": the reference part, as production without a device)."""
    kernels, rows = sm90a_tables(op)
    return lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op,
                  in_dtype=SM90A_IN_DTYPE.get(op.split(".")[0], "fp8_e4m3fn"), device_name=device_name)


@pytest.mark.parametrize("M, N, K, kernel, source", [
    (1, 16384, 7168, "mxfp4.fp4_e2m1_x2.bf16.m2n64.s2.p14.wgn.sm90a", "table"),
    (3, 16384, 7168, "mxfp4.fp4_e2m1_x2.bf16.m4n64.s4.p3.wgn.sm90a", "table"),
    (8, 16384, 7168, "mxfp4.fp4_e2m1_x2.bf16.m8n64.s3.p2.e4.img.sm90a", "table"),
    (16, 16384, 7168, "mxfp4.fp4_e2m1_x2.bf16.m16n64.s3.p2.e4.img.sm90a", "table"),
    (1, 24576, 1536, "mxfp4.fp4_e2m1_x2.bf16.m2n64k128.s3.p8.b4.wgn.sm90a", "table"),
    (2, 57344, 8192, "mxfp4.fp4_e2m1_x2.bf16.m2n64k128.s3.p8.b4.wgn.sm90a", "table"),
    (1, 8192, 8192, "mxfp4.fp4_e2m1_x2.bf16.m2n64k128.s3.p8.b4.wgn.sm90a", "table"),
    (8, 8192, 28672, "mxfp4.fp4_e2m1_x2.bf16.m8n64.s3.p2.e4.img.sm90a", "table"),
    # twenty-third session: split 4 rows after the split-K reduce became a PDL dependent
    (8, 2112, 7168, "mxfp4.fp4_e2m1_x2.bf16.m8n64.s3.p4.wgb.sm90a", "table"),
    (16, 2048, 7168, "mxfp4.fp4_e2m1_x2.bf16.m16n64k128.s4.p8.wgb.sm90a", "table"),
    # untuned shapes: the bucket's .wgn / .wgb default row when K % 128 == 0, else the row after it
    (1, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m2n64k128.s3.p8.b4.wgn.sm90a", "default"),
    (3, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m4n64.s4.p3.wgn.sm90a", "default"),
    (8, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m8n32.sm90a", "default"),  # unsplit since the sixty-seventh session
    (8, 4096, 4064, "mxfp4.fp4_e2m1_x2.bf16.m8n32.sm90a", "default"),
    (1, 4096, 4064, "mxfp4.fp4_e2m1_x2.bf16.m8n32.sm90a", "default"),
    (5, 4096, 4064, "mxfp4.fp4_e2m1_x2.bf16.m8n32.sm90a", "default"),
    (12, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m16n64.s3.p2.e4.img.sm90a", "default"),
    (12, 4096, 4064, "mxfp4.fp4_e2m1_x2.bf16.m16n64.sm90a", "default"),
    # (fifty-ninth session: the rows on .img kernels moved to their e4 twins, 7 of them to tile_k 256, where an H100 A/B
    # found them faster; tools/probes/e4-59.pairs, e4b-59.pairs)
    # M = 17..64: the decode buckets (.img kernels, nineteenth session; m16n64 for K % 128 != 0), not the exact conversion;
    # above them, to M = 128, the 64-token decode kernel over several tiles where it fits one wave or a row was
    # measured (fifty-third session), else and above the regrouping for the fp8 blockscale GEMM
    (32, 57344, 8192, "mxfp4.fp4_e2m1_x2.bf16.m32n64.s3.p1.ib3.e4.img.sm90a", "table"),
    (64, 57344, 8192, "mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s4.p1.e4.img.sm90a", "table"),
    (20, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m32n64.s3.p1.ib3.e4.img.sm90a", "default"),
    (40, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s4.p1.img.sm90a", "default"),
    (40, 4096, 4064, "mxfp4.fp4_e2m1_x2.bf16.m16n64.sm90a", "default"),
    (65, 4096, 4096, "mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s4.p1.img.sm90a", "default"),
    (128, 4096, 4064, "gemm_mxfp.mxfp4.fp4_e2m1_x2.bf16.regroup.sm90a", "default"),
    (100, 36864, 4096, "gemm_mxfp.mxfp4.fp4_e2m1_x2.bf16.regroup.sm90a", "default"),
    (128, 36864, 7168, "mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s3.p1.img.sm90a", "table"),
    (160, 7168, 16384, "mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s4.p1.e4.img.sm90a", "table"),
    (200, 8192, 8192, "gemm_mxfp.mxfp4.fp4_e2m1_x2.bf16.regroup.sm90a", "default"),
    (129, 4096, 4096, "gemm_mxfp.mxfp4.fp4_e2m1_x2.bf16.regroup.sm90a", "default"),
    (4096, 4096, 4064, "gemm_mxfp.mxfp4.fp4_e2m1_x2.bf16.regroup.sm90a", "default"),
    (1, 25648, 10048, "mxfp4.fp4_e2m1_x2.bf16.m8n32.sm90a", "default"),   # the first row meeting K % 32 (see MXFP8)
])
def test_sm90a_mxfp4_decode_rows(M, N, K, kernel, source):
    """The MXFP4 decode rows measured on the H200 (sm_90a.csv, 2026-11-30) through the production lookup:
    the .wgn kernels at the tuned M <= 8 rows and in the M <= 4 default rows for K % 128 == 0, m8n32 else."""
    kernels, rows = sm90a_tables("gemm_mxfp4")
    got = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op="gemm_mxfp4", in_dtype="fp4_e2m1_x2")
    assert got[0] == ("" if kernel.startswith("gemm_mxfp.") else "gemm_splitk_decode.") + kernel
    assert got[2] == source


@pytest.mark.parametrize("M, N, K, kernel, source", [
    (8, 16384, 7168, "m8n64.wg", "table"),
    (4, 57344, 8192, "m8n64.w1.b4.wg", "table"),   # one warpgroup per CTA (twentieth session)
    (1, 2112, 7168, "m8n16.w8k128.bk6", "table"),
    (64, 8192, 8192, "m64n64k128.s2.p1.img", "table"),
    (64, 2112, 7168, "m16n64.wg", "table"),
    # untuned shapes: the .wg kernel when K % 128 == 0, the mma.sync kernel of the bucket else; M = 17..64 decode
    # (M = 33..64: the .img kernel, nineteenth session)
    (3, 4096, 4096, "m8n64.wg", "default"),
    (3, 4096, 4064, "m8n32", "default"),
    (12, 4096, 4096, "m16n64.wg", "default"),
    (40, 4096, 4096, "m64n64k128.s2.p1.img", "default"),
    (24, 4096, 4096, "m16n64.wg", "default"),
    (40, 4096, 4064, "m16n32", "default"),
    # K % 256 != 0 where the bucket's m8n32 row is past one wave at its automatic split: no row passes the list's
    # rules, so the first that meets the alignment answers (it had been the first kernel of the kind in the kernel
    # list, outside the bucket; seventy-fifth session)
    (1, 2880, 5760, "m8n32", "default"),
    (1, 25648, 10048, "m8n32", "default"),
])
def test_sm90a_mxfp8_decode_rows(M, N, K, kernel, source):
    """The MXFP8 decode rows measured on the H200 (sm_90a.csv, sixteenth session) through the production lookup."""
    kernels, rows = sm90a_tables("gemm_mxfp8")
    got = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op="gemm_mxfp8", in_dtype="fp8_e4m3fn")
    assert got[0] == f"gemm_splitk_decode.mxfp8.fp8_e4m3fn.bf16.{kernel}.sm90a" and got[2] == source


DEC = "gemm_splitk_decode."


@pytest.mark.parametrize("op, in_dtype", [("gemm_a16w16", "bf16"), ("gemm_a8w8", "fp8_e4m3fn"),
                                          ("gemm_a8w8_blockscale", "fp8_e4m3fn"), ("gemm_mxfp8", "fp8_e4m3fn"),
                                          ("gemm_mxfp4", "fp4_e2m1_x2")])
def test_sm90a_random_shapes_answer_from_the_rows(op, in_dtype):
    """Shapes no row was tuned for (N, K multiples of 32 over 512..32768, M 1..16384, log-uniform) are answered by
    the table's or default rows, never by the any-kernel fallback: every default bucket holds a row for any K % 32 == 0
    (seventy-fifth session: MXFP8 / MXFP4 at M <= 8 with K % 256 / % 128 != 0 were not)."""
    kernels, rows = sm90a_tables(op)
    rng = random.Random(75)
    dim = lambda: 32 * round(math.exp(rng.uniform(math.log(512), math.log(32768))) / 32)  # noqa: E731
    for _ in range(300):
        M, N, K = max(1, round(math.exp(rng.uniform(0.0, math.log(16384))))), dim(), dim()
        got = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype)
        assert got[2] in ("table", "default"), (M, N, K, got)


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k, source", [
    # untuned shapes (twenty-second session defaults): bf16 M <= 8 the bulk-ring m8n32.w4.bk2, M = 9..16 the .sw tile
    # kernel with split_k from its 128-row N tiles; fp8 M = 9..16 t64x32x128.sw (64-row N tiles)
    # (bulk-ring kernels at K <= 4096 unsplit since the twenty-fifth session)
    ("gemm_a16w16", "bf16", 2, 3072, 3072, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 2, 3072, 8192, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 2, "default"),
    # (twenty-fifth session: bf16 M = 9..16 t64x32x64.sw first, 48 tiles at one-wave split 2 -> unsplit)
    # (sixty-fifth session: the 32-column bulk-ring kernel at split 1 answers from 64 to 132 of its CTAs)
    ("gemm_a16w16", "bf16", 12, 3072, 3072, DEC + "a16w16.bf16.bf16.m16n32.w4.bk2.np.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 12, 9216, 3072, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 16, 12288, 4096, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1, "default"),
    # fp8 M <= 8 (twenty-fifth session): m8n16.w6.bk1 -> m8n64.wg -> t128x32x128.sw -> m8n64.w1.b4.wg, the first
    # whose CTAs at the automatic split fit in one wave (w6.bk1 4 per SM, wg 2, w1.b4 4, .sw 1); none: w6.bk1
    # (sixty-fifth session: bulk-ring rows at split 1 ahead of these answer 64..132 CTAs; 4480 is past them)
    ("gemm_a8w8", "fp8_e4m3fn", 7, 4480, 2880, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 7, 3072, 3072, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 4, 12800, 8192, DEC + "a8w8.fp8_e4m3fn.bf16.m8n64.wg.sm90a", 1, "default"),  # 800 > 528
    ("gemm_a8w8", "fp8_e4m3fn", 4, 9216, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1,
     "default"),  # wg: 144 tiles at split 2 > 264
    ("gemm_a8w8", "fp8_e4m3fn", 4, 30720, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 4, 65536, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 1, "default"),
    # (sixty-eighth session: below 64 CTAs the ring answers from max(32, K / 192); these stay below its edge)
    ("gemm_a8w8", "fp8_e4m3fn", 1, 496, 2048, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 7, "default"),  # 31 CTAs
    ("gemm_a8w8", "fp8_e4m3fn", 1, 1008, 12288, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 4, "default"),
    # blockscale / MXFP8 M <= 8: the one-warpgroup wgmma kernel (4 per SM) where m8n64.wg (2 per SM) would need a
    # partial second wave (180 tiles at split 2 = 360 CTAs)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 4, 11520, 4096,
     DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 2, "default"),
    # (twenty-sixth session: the 32-row bulk-ring kernel first, unsplit at K <= 4096: 264 CTAs fill its 2 per SM)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 4, 8448, 4096, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1,
     "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 4, 12288, 8192, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n64.wg.sm90a", 1,
     "default"),
    ("gemm_mxfp8", "fp8_e4m3fn", 4, 11520, 4096, DEC + "mxfp8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 2, "default"),
    # rows of the twenty-fifth session's M <= 8 runs
    ("gemm_a8w8", "fp8_e4m3fn", 8, 49152, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.np.sm90a", 1, "table"),  # 63rd
    ("gemm_a8w8", "fp8_e4m3fn", 3, 40960, 7168, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1, "table"),
    # (48 weight-row tiles: split 1 since the twenty-third session, 6.3 against 7.2 us at split 2 on the H200)
    ("gemm_a8w8", "fp8_e4m3fn", 9, 3072, 3072, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1, "default"),
    # (twenty-fifth session: 192 tiles of 64 rows > 132 -> the 128-row .sw kernel; past 132 of those, m16n64.w1.b4.wg)
    ("gemm_a8w8", "fp8_e4m3fn", 16, 12288, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 16, 22528, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m16n64.w1.b4.wg.sm90a", 1, "default"),
    # (twenty-sixth session: blockscale M = 9..64 on its .sw tile kernels, 64-row tiles while they fit in one wave,
    # then 128-row ones; M = 33..64 then the unswapped t64x128x128)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 16, 11520, 4096,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 24, 3328, 3072,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 40, 4096, 4096,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 48, 20480, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1,
     "default"),
    # (M = 17..32: the .sw default row of the twenty-fourth session; 48 weight-row tiles, split 2 -> unsplit)
    ("gemm_a8w8", "fp8_e4m3fn", 20, 3072, 3072, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1, "default"),
    # rows measured then for seven layers without decode rows (split_k 0: automatic)
    ("gemm_a8w8", "fp8_e4m3fn", 1, 4096, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 6, 6144, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 16, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 3, 5120, 13824, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1, "table"),
    # (t128x32x64.sw until the twenty-fourth session's re-timing: 62.9 against 60.0 us)
    ("gemm_a16w16", "bf16", 32, 28672, 4096, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 2, 6144, 4096, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1, "default"),  # M = 2: no row
    ("gemm_a16w16", "bf16", 2, 5120, 5120, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 2, 4096, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 32, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 24, 28672, 4096, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 32, 5120, 13824, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 3, "table"),
    ("gemm_a16w16", "bf16", 40, 28672, 4096, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1, "default"),
    # twenty-fourth session: .sw defaults for M = 17..64, a row answering only within one wave of 132 CTAs
    ("gemm_a16w16", "bf16", 24, 2880, 2880, "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 32, 1024, 4096, "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 8, "default"),
    ("gemm_a16w16", "bf16", 32, 11008, 4096, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 32, 18432, 4096, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 48, 7168, 2048, "gemm_a16w16.bf16.bf16.t64x64x64.sk8.sw.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 64, 11008, 4096, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 32, 3584, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 24, 11008, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 40, 1536, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 5, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 64, 11008, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1, "default"),
    # bf16 M <= 4 on the long-K layers: the register kernel and the .sw tiles again (the bulk-ring default lost there)
    ("gemm_a16w16", "bf16", 1, 8192, 28672, DEC + "a16w16.bf16.bf16.m8n32.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 3, 7168, 16384, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 2, "table"),  # 66th
    ("gemm_a16w16", "bf16", 2, 7168, 8192, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1, "default"),
    # rows measured on the mid layers against the new tiles
    ("gemm_a16w16", "bf16", 16, 5120, 5120, "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 64, 5120, 5120, "gemm_a16w16.bf16.bf16.t64x64x64.sk8.sw.sm90a", 1, "table"),
    ("gemm_a8w8", "fp8_e4m3fn", 48, 4096, 14336, "gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 1, "table"),
])
def test_sm90a_decode_defaults_and_rows_of_the_twenty_second_to_twenty_sixth_sessions(op, in_dtype, M, N, K, kernel, split_k, source):
    kernels, rows = sm90a_tables(op)
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype) == (
        kernel, split_k, source)


SW = "sk8.sw.sm90a"


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k, source", [
    # M = 65..128 (twenty-seventh session): the 64-token swapped tile while it fits in one wave (2 token tiles x N / 64
    # <= 132), bf16 / blockscale then the 128-row one (N / 128 x 2 <= 132), then the 128-row token tile unsplit.
    ("gemm_a8w8", "fp8_e4m3fn", 65, 3200, 3072, f"gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.{SW}", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 100, 12288, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 104, 2048, 1024, f"gemm_a16w16.bf16.bf16.t64x64x64.{SW}", 1, "default"),  # < 24 K tiles
    ("gemm_a16w16", "bf16", 128, 6400, 4096, f"gemm_a16w16.bf16.bf16.t128x64x64.{SW}", 1, "default"),
    ("gemm_a16w16", "bf16", 104, 16000, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 120, 1280, 4096,
     f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.{SW}", 3, "default"),  # 40 tiles: 132 / 40 slices
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 128, 6400, 4096,
     f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x64x128.{SW}", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 128, 12800, 4096,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a", 1, "default"),
    # past one wave of 128-row tiles (N > 16896): the widest token tile that fits in one wave; none: t128x128 again
    # while its waves are >= 85% full, else the cheapest waves x width (40000: t128x160's 2 x 160 against 2 x 256)
    ("gemm_a16w16", "bf16", 100, 20000, 4096, "gemm_a16w16.bf16.bf16.t128x192x64.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 100, 26000, 4096, "gemm_a16w16.bf16.bf16.t128x256x64.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 100, 40000, 4096, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a", 1, "default"),
    ("gemm_a16w16", "bf16", 100, 49152, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 100, 8000, 4096, f"gemm_a8w8.fp8_e4m3fn.bf16.t128x64x128.{SW}", 1, "default"),  # 28th
    ("gemm_a8w8", "fp8_e4m3fn", 100, 17000, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 100, 33792, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128.sm90a", 1, "default"),
    # M = 129..4096: the widest tile that fits in one wave, the 256-wide token tile last (every large-M shape)
    ("gemm_a16w16", "bf16", 256, 4000, 4096, f"gemm_a16w16.bf16.bf16.t128x64x64.{SW}", 1, "default"),
    ("gemm_a16w16", "bf16", 512, 4000, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a", 1, "default"),  # 45th: .pp
    ("gemm_a16w16", "bf16", 2048, 4000, 4096, "gemm_a16w16.bf16.bf16.t128x256x64.sm90a", 1, "default"),
    ("gemm_a8w8", "fp8_e4m3fn", 256, 2000, 4096, f"gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.{SW}", 1, "default"),
    # 48th: the by_cost unsplit swapped tile, 3 x 40 tiles of 176 tokens (one wave); H200 0.858x t128x192's time
    ("gemm_a8w8", "fp8_e4m3fn", 512, 5000, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sw.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 256, 4000, 4096,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1, "default"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 1024, 4000, 4096,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a", 1, "default"),
    # measured rows: the LLM set at M = 128 and layers at M = 96 (a row answers its bucket M = 65..128)
    ("gemm_a8w8", "fp8_e4m3fn", 65, 2048, 8192, f"gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.{SW}", 1, "table"),
    # the old pick where it won every round of the interleaved A/B (tools/ab.py --pairs)
    ("gemm_a8w8", "fp8_e4m3fn", 65, 3072, 3072, "gemm_a8w8.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1, "table"),
    ("gemm_a16w16", "bf16", 80, 1024, 4096, f"gemm_a16w16.bf16.bf16.t64x64x64.{SW}", 3, "table"),
    ("gemm_a16w16", "bf16", 128, 2112, 7168, f"gemm_a16w16.bf16.bf16.t64x64x64.{SW}", 2, "table"),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 128, 4096, 4096,
     f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.{SW}", 1, "table"),
    # where the old default t64x128x128 stayed ahead of the new order, its row pins it
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 96, 4608, 3584,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1, "table"),
])
def test_sm90a_m65_to_4096_defaults_and_rows_of_the_twenty_seventh_session(op, in_dtype, M, N, K, kernel, split_k,
                                                                         source):
    kernels, rows = sm90a_tables(op)
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype) == (
        kernel, split_k, source)


@pytest.mark.parametrize("M, N, K, kernel, split_k, source", [
    # fp8 defaults (twenty-eighth session): the swapped 128-row weight tile after t64x64.sw, while it fits in one
    # wave (N / 128 x token tiles of 64 <= 132), at M = 65..128 and 129..4096
    (100, 8000, 4096, f"t128x64x128.{SW}", 1, "default"),       # t64x64.sw: 125 x 2 tiles; this: 63 x 2
    (100, 12288, 4096, "t128x128x128.sm90a", 1, "default"),     # 96 x 2 > 132
    (300, 3000, 4096, f"t128x64x128.{SW}", 1, "default"),       # 24 x 5 = 120
    (768, 1024, 4096, f"t128x64x128.{SW}", 1, "default"),       # 8 x 12 = 96
    (1024, 1024, 4096, f"t128x64x128.{SW}", 1, "default"),      # 8 x 16 = 128
    (1536, 1024, 4096, "t128x128x128.pp.sm90a", 1, "default"),  # 8 x 24 > 132; t128x128 (ping-pong since the 45th): 8 x 12
    # measured rows (kernel time, ...-m128-fp8-new-tiles-28.txt)
    (128, 7168, 16384, f"t128x64x128.{SW}", 1, "table"),
    (128, 8192, 28672, f"t128x64x128.{SW}", 1, "table"),
    (96, 3584, 18944, f"t128x64x128.{SW}", 2, "table"),
    (256, 4096, 14336, f"t128x64x128.{SW}", 1, "table"),
    # (512, 10240, 8192) moved to t128x176 in the fortieth session (ab-40-m512-sweep.pairs)
])
def test_sm90a_fp8_swapped_128_row_tile_of_the_twenty_eighth_session(M, N, K, kernel, split_k, source):
    kernels, rows = sm90a_tables("gemm_a8w8")
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op="gemm_a8w8", in_dtype="fp8_e4m3fn") == (
        "gemm_a8w8.fp8_e4m3fn.bf16." + kernel, split_k, source)


@pytest.mark.parametrize("op, M, N, K, kernel, split_k", [
    # 256 x 64 token tiles on the narrow N = 2112 layer: 4 x 33 = 132 CTAs at M = 1024, one full wave
    ("gemm_a16w16", 1024, 2112, 7168, "gemm_a16w16.bf16.bf16.t256x64x64.sm90a", 1),
    ("gemm_a16w16", 2048, 2112, 7168, "gemm_a16w16.bf16.bf16.t256x64x64.sm90a", 1),
    ("gemm_a8w8", 1024, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t256x64x128.sm90a", 1),
    ("gemm_a8w8", 2048, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t256x64x128.sm90a", 1),
    # the earlier pick where the head-start A/B found it >= 3% faster in both rounds
    ("gemm_a8w8", 128, 4096, 1024, "gemm_a8w8.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1),
    ("gemm_a16w16", 128, 4608, 3584, "gemm_a16w16.bf16.bf16.t64x128x64.sm90a", 1),
    ("gemm_a8w8_blockscale", 128, 7680, 2560, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x128x128.sm90a", 1),
    # twenty-ninth session: 96 / 160-column token tiles on the 36864 x 7168 layer at M = 97..128 (M = 65..96: the
    # thirty-first session's m_max = 96 rows, below)
    ("gemm_a8w8", 128, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128.sm90a", 1),
    ("gemm_a8w8", 97, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128.sm90a", 1),
    ("gemm_a16w16", 100, 36864, 7168, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a", 1),
    # M = 1024 rows of two layers where the bucket's last default row had run 1.09 waves
    ("gemm_a16w16", 1024, 4608, 3584, "gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw.sm90a", 1),
    ("gemm_a8w8", 1024, 4608, 3584, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a", 1),
    # MXFP4 decode on the refilled rings
    ("gemm_mxfp4", 1, 36864, 7168, "gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16.m2n64.s2.p14.rf.wgn.sm90a", 1),
    ("gemm_mxfp4", 1, 8192, 28672, "gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16.m2n64.s3.p7.rf.wgn.sm90a", 2),
    ("gemm_mxfp4", 3, 10240, 8192, "gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16.m4n64.s4.p3.rf.wgn.sm90a", 2),
])
def test_sm90a_rows_of_the_twenty_eighth_and_twenty_ninth_sessions(op, M, N, K, kernel, split_k):
    assert sm90a_lookup(op, M, N, K) == (kernel, split_k, "table")


SW96 = {"gemm_a16w16": "gemm_a16w16.bf16.bf16.t128x96x64.sk8.sw.sm90a",
        "gemm_a8w8": "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128.sk8.sw.sm90a",
        "gemm_a8w8_blockscale": "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x96x128.sk8.sw.sm90a"}


@pytest.mark.parametrize("op, M, N, K, kernel, split_k, source", [
    # thirty-first session, M = 65..96: exact rows at m_max = 96 answer M = 65..96 (the largest power of two below 96
    # is 64) and leave M = 97..128 to the layer's m_max = 128 row
    ("gemm_a16w16", 65, 7168, 18432, SW96["gemm_a16w16"], 2, "table"),
    ("gemm_a16w16", 96, 7168, 18432, SW96["gemm_a16w16"], 2, "table"),
    ("gemm_a16w16", 97, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw.sm90a", 1, "table"),
    ("gemm_a16w16", 64, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1, "table"),
    ("gemm_a8w8", 80, 36864, 7168, SW96["gemm_a8w8"], 1, "table"),
    ("gemm_a8w8", 80, 5120, 5120, "gemm_a8w8.fp8_e4m3fn.bf16.t128x64x128.sk8.sw.sm90a", 1, "table"),
    ("gemm_a8w8_blockscale", 80, 3072, 1536, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 1, "table"),
    # the default lists of M = 65..96: the 96-token .sw tile at the automatic split (132 / 96 weight tiles < 3:
    # unsplit; 40 tiles at K = 4096: 3 slices); fp8 first the 64-row .sw tile while 2 token tiles x N / 64 <= 132
    ("gemm_a16w16", 70, 12288, 4096, SW96["gemm_a16w16"], 1, "default"),
    ("gemm_a16w16", 70, 5000, 4096, SW96["gemm_a16w16"], 3, "default"),
    ("gemm_a8w8_blockscale", 90, 16384, 7168, SW96["gemm_a8w8_blockscale"], 1, "default"),
    ("gemm_a8w8", 90, 4000, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 1, "default"),
    ("gemm_a8w8", 90, 12288, 4096, SW96["gemm_a8w8"], 1, "default"),
    # M = 97..128 keeps the 128 list
    ("gemm_a16w16", 100, 12288, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sm90a", 1, "default"),
])
def test_sm90a_m65_to_96_rows_and_defaults_of_the_thirty_first_session(op, M, N, K, kernel, split_k, source):
    assert sm90a_lookup(op, M, N, K) == (kernel, split_k, source)


SW64 = {"gemm_a16w16": "gemm_a16w16.bf16.bf16.t64x64x64.sk8.sw.sm90a",
        "gemm_a8w8_blockscale": "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a"}
SW128x64 = {"gemm_a16w16": "gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw.sm90a",
            "gemm_a8w8": "gemm_a8w8.fp8_e4m3fn.bf16.t128x64x128.sk8.sw.sm90a",
            "gemm_a8w8_blockscale": "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x64x128.sk8.sw.sm90a"}


@pytest.mark.parametrize("op, M, N, K, kernel, split_k, source", [
    # thirty-second session, M = 65..96 defaults: a .sw row that is not the list's last defers when it is short of
    # CTAs (csrc/dispatch.cpp swapped_row_short_of_ctas). bf16 [t128x96, t128x64, t64x64]:
    ("gemm_a16w16", 80, 4096, 2048, SW128x64["gemm_a16w16"], 1, "default"),   # t128x96: split 4 over 32 K tiles
    ("gemm_a16w16", 80, 5120, 1024, SW128x64["gemm_a16w16"], 1, "default"),   # unsplit on 40 < 132 / 3 tiles
    ("gemm_a16w16", 80, 1536, 1536, SW64["gemm_a16w16"], 1, "default"),       # t128x64: 24 tiles at split 5 too
    ("gemm_a16w16", 80, 7168, 2048, SW96["gemm_a16w16"], 1, "default"),       # unsplit on 56 tiles: stays
    ("gemm_a16w16", 80, 1536, 7168, SW96["gemm_a16w16"], 8, "default"),       # split 8 over 112 K tiles: stays
    ("gemm_a16w16", 96, 16384, 2048, SW96["gemm_a16w16"], 1, "default"),      # t64x64 past one wave: no deferral due
    # blockscale [t128x96, t64x64, t128x64]: t64x64 while it fits in one wave, else the 128-row tile
    ("gemm_a8w8_blockscale", 72, 4096, 2048, SW64["gemm_a8w8_blockscale"], 1, "default"),
    ("gemm_a8w8_blockscale", 72, 3968, 4096, SW64["gemm_a8w8_blockscale"], 1, "default"),
    ("gemm_a8w8_blockscale", 72, 5632, 3072, SW128x64["gemm_a8w8_blockscale"], 1, "default"),
    ("gemm_a8w8_blockscale", 72, 2048, 7168, SW96["gemm_a8w8_blockscale"], 8, "default"),
    # thirty-third session: blockscale t128x96 also defers unsplit while t128x64 (the last row) fits in one wave
    ("gemm_a8w8_blockscale", 80, 8192, 4096, SW128x64["gemm_a8w8_blockscale"], 1, "default"),  # 64 -> 128 tiles
    ("gemm_a8w8_blockscale", 92, 6144, 1536, SW128x64["gemm_a8w8_blockscale"], 1, "default"),  # 48 -> 96 tiles
    ("gemm_a8w8_blockscale", 80, 8704, 2048, SW96["gemm_a8w8_blockscale"], 1, "default"),      # 136 > 132: stays
    ("gemm_a8w8_blockscale", 80, 8192, 7168, SW96["gemm_a8w8_blockscale"], 2, "default"),      # split 2 over 56 K tiles
    ("gemm_a16w16", 80, 6144, 1024, SW96["gemm_a16w16"], 1, "default"),     # bf16 / fp8 keep the third-of-a-wave rule
    # exact rows measured at M = 80 / 92
    ("gemm_a16w16", 70, 3072, 1536, SW128x64["gemm_a16w16"], 1, "table"),
    ("gemm_a16w16", 70, 576, 7168, SW64["gemm_a16w16"], 4, "table"),
    ("gemm_a8w8", 90, 7168, 1536, SW96["gemm_a8w8"], 1, "default"),   # its exact row lost at M = 88 (A/B): dropped
    ("gemm_a8w8_blockscale", 90, 7168, 1536, SW128x64["gemm_a8w8_blockscale"], 1, "table"),
    # lists ordered narrow-first are not affected: at M = 16 t64x32.sw answers on 8 tiles unsplit (below the
    # bulk-ring rows' 32 CTAs)
    ("gemm_a16w16", 16, 480, 1024, "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 1, "default"),
])
def test_sm90a_m65_to_96_swapped_rows_short_of_ctas_defer(op, M, N, K, kernel, split_k, source):
    assert sm90a_lookup(op, M, N, K) == (kernel, split_k, source)


@pytest.mark.parametrize("M, N, K, tile, split_k", [
    # thirty-second session: a blockscale .sw kernel splits from 2 (not 3) over >= 48 K tiles (K >= 6144 for fp8):
    # 45..66 weight tiles x 2 slices fill about a wave (A/B over 45 such lookups: 1.20x, ab-32-bs-split2.pairs)
    (44, 2880, 28672, "t64x64x128", 2),
    (70, 6144, 18432, "t128x96x128", 2),
    (20, 2880, 14336, "t64x32x128", 2),
    (100, 2048, 28672, "t64x64x128", 2),
    # below 48 K tiles unsplit as before (the same A/B: 0.99x there)
    (24, 3328, 3072, "t64x32x128", 1),
    (40, 4096, 4096, "t64x64x128", 1),
    (84, 10240, 4096, "t128x96x128", 1),
])
def test_sm90a_blockscale_swapped_kernels_split_from_two_over_long_k(M, N, K, tile, split_k):
    kernel = f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.{tile}.sk8.sw.sm90a"
    assert sm90a_lookup("gemm_a8w8_blockscale", M, N, K) == (kernel, split_k, "default")
    # bf16 / fp8 keep the floor of 3: the same layer's fp8 .sw pick at M = 44 stays unsplit
    if (M, N, K) == (44, 2880, 28672):
        assert sm90a_lookup("gemm_a8w8", M, N, K)[1] != 2


BF16_SW = "gemm_a16w16.bf16.bf16.{}.sk8.sw.sm90a"
FP8_SW = "gemm_a8w8.fp8_e4m3fn.bf16.{}.sk8.sw.sm90a"


@pytest.mark.parametrize("op, M, N, K, kernel, split_k", [
    # past M = 64 and up to K = 4096 a bf16 / fp8 .sw split stops at K-row bytes / (16 M): its fp32 partials
    # (8 x split x M bytes a column) stay within half the weight bytes (csrc/dispatch.cpp split_within_partial_share)
    ("gemm_a16w16", 100, 1024, 3072, BF16_SW.format("t64x64x64"), 3),    # 6144 / 1600: 3 (the wave gave 4)
    ("gemm_a16w16", 120, 512, 4096, BF16_SW.format("t64x64x64"), 4),     # 8192 / 1920: 4 (8)
    ("gemm_a16w16", 120, 512, 2048, BF16_SW.format("t64x64x64"), 1),     # 2 is below the floor of 3: unsplit
    ("gemm_a8w8", 65, 768, 3072, FP8_SW.format("t64x64x128"), 1),        # 3072 / 1040: 2, unsplit (5)
    # past K = 4096 the one-wave split stays
    ("gemm_a8w8", 65, 512, 7168, FP8_SW.format("t64x64x128"), 8),
    ("gemm_a8w8", 160, 768, 7168, FP8_SW.format("t64x64x128"), 3),
    # M <= 64 keeps the one-wave split
    ("gemm_a8w8", 64, 512, 7168, FP8_SW.format("t64x64x128"), 8),
    ("gemm_a16w16", 64, 512, 2048, BF16_SW.format("t64x64x64"), 8),
    # blockscale (promoting) keeps its split: 7168 / 3840 would cap it to 1
    ("gemm_a8w8_blockscale", 240, 512, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x64x128.sk8.sw.sm90a", 4),
])
def test_sm90a_swapped_split_capped_by_its_partials_past_m64(op, M, N, K, kernel, split_k):
    assert sm90a_lookup(op, M, N, K) == (kernel, split_k, "default")


@pytest.mark.parametrize("M, N, K, kernel, split_k, source", [
    # thirty-third session: blockscale M = 129..256 lists t64x64.sw first while it fits in one wave (3 token tiles up
    # to M = 192: N <= 2816; 4 up to 256: N <= 2112), then the M = 129..4096 list (A/B: 1.26x over 37 pairs, 1.32x
    # over 12 at M = 136 / 256)
    (176, 2048, 7168, "t64x64x128.sk8.sw", 1, "default"),
    (176, 512, 14336, "t64x64x128.sk8.sw", 5, "default"),      # 24 tiles: the .sw split fills the wave
    (136, 2816, 4096, "t64x64x128.sk8.sw", 1, "default"),      # 132 tiles
    (200, 2816, 4096, "t64x128x128", 1, "default"),            # 176 tiles: the M = 129..4096 list's first row
    (256, 2176, 4096, "t64x128x128", 1, "default"),            # 136 tiles
    (240, 2112, 7168, "t64x64x128.sk8.sw", 1, "table"),        # its m_max = 256 exact row, re-measured
    (257, 1024, 4096, "t64x128x128", 1, "default"),            # past the bucket
])
def test_sm90a_blockscale_m129_to_256_lists_the_64_row_swapped_tile_first(M, N, K, kernel, split_k, source):
    name = f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.{kernel}.sm90a"
    assert sm90a_lookup("gemm_a8w8_blockscale", M, N, K) == (name, split_k, source)


@pytest.mark.parametrize("op, M, N, K, kernel", [
    # No row fits in one wave and the last row's waves are < 85% full: the cheapest waves x tile area / area_speed
    # (csrc/dispatch.cpp cheapest_waves_row; costs below in columns of 128-row tiles, area_speed 1 unless named).
    ("gemm_a16w16", 1024, 5120, 4096, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a"),      # 2 waves x 160 = 320; 192: 384
    ("gemm_a16w16", 512, 12288, 4096, "gemm_a16w16.bf16.bf16.t128x192x64.sm90a"),      # 2 x 192; 160, 208: 3 waves
    ("gemm_a16w16", 448, 13824, 5120, "gemm_a16w16.bf16.bf16.t128x224x64.sm90a"),      # 2 x 224 against 2 x 256
    ("gemm_a16w16", 600, 5120, 5120, "gemm_a16w16.bf16.bf16.t128x208x64.sm90a"),       # 125 tiles: 1 x 208 (H200 0.877)
    ("gemm_a8w8", 1500, 7168, 16384, "gemm_a8w8.fp8_e4m3fn.bf16.t128x224x128.sm90a"),  # 4 x 224 against 4 x 256 (0.907)
    ("gemm_a8w8", 2048, 5120, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),   # 5 x 128 = 640; 208 / 224: 672
    ("gemm_a8w8", 600, 9000, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128.sm90a"),   # 2 x 192; 128: 3 x 128 (a tie: larger)
    # the last row's waves are >= 85% full: it stays (4096 x 20480: 32 x 80 = 2560 tiles, 97%)
    ("gemm_a16w16", 4096, 20480, 4096, "gemm_a16w16.bf16.bf16.t128x256x64.sm90a"),
    # one token tile (M = 65..128; the 160 / 96-column tiles are listed after the 256-column one)
    ("gemm_a16w16", 100, 40960, 4096, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a"),     # 2 x 160 against 2 x 256
    ("gemm_a16w16", 128, 34816, 4096, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a"),     # 3 x 160 against 2 x 256
    ("gemm_a8w8", 128, 34816, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128.sm90a"),    # 3 x 96 / 0.85 against 2 x 256
    ("gemm_a8w8", 128, 40960, 5120, "gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128.sm90a"),   # 2 x 192 against 3 x 128
    ("gemm_a8w8", 100, 45056, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a"),   # 352 / 396 = 89%: the last row
    ("gemm_a16w16", 128, 49152, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sm90a"),     # 384 / 396: the last row
    # blockscale weighs its token-tile heights against each other (area_speed: t64x128 0.6, t128x128 0.89, t192x96
    # 0.865, t192x112 0.905, t192x128.serial 1; forty-sixth session, H200 A/B, docs/PERF.md)
    # (M = 257..1024 on the M = 1025..4096 list since the forty-sixth session; costs in t128x128 tiles)
    ("gemm_a8w8_blockscale", 1024, 5120, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),  # 2 x 1.5 = 3 against 3 / 0.89
    ("gemm_a8w8_blockscale", 400, 4608, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x112x128.serial.sm90a"),   # 1 wave: H200 0.917 of t64x128
    # M = 129..256: the 192-row tiles close that list too (one token tile to M = 192): 1 wave x 1.125 / 0.865 against
    # t64x128's 2 x 0.5 / 0.6 (H200 at 160 x 9216 x 4096: 0.827 of t64x128's time)
    ("gemm_a8w8_blockscale", 150, 9216, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x96x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 1100, 3072, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a"),   # 2 / 0.89 against 2 x 1.5 for t192x128 (0.865)
])
def test_default_list_without_a_one_wave_row_takes_the_cheapest_waves(op, M, N, K, kernel):
    assert sm90a_lookup(op, M, N, K) == (kernel, 1, "default")


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k", [
    # twenty-third session: the .sw tile kernels at split 1 (no workspace, no reduce) on the 4096 / 5120-class layers
    ("gemm_a8w8", "fp8_e4m3fn", 16, 4096, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 32, 5120, 5120, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 32, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
    ("gemm_a16w16", "bf16", 16, 13824, 5120, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 8, 4096, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
    # split rows that won once the reduce became a PDL dependent
    ("gemm_mxfp4", "fp4_e2m1_x2", 16, 2048, 7168, DEC + "mxfp4.fp4_e2m1_x2.bf16.m16n64k128.s4.p8.wgb.sm90a", 4),
    ("gemm_mxfp8", "fp8_e4m3fn", 16, 2112, 7168, DEC + "mxfp8.fp8_e4m3fn.bf16.m16n64.wg.sm90a", 6),  # 6: sixty-sixth session
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 8, 10240, 8192, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 2),
])
def test_sm90a_rows_of_the_twenty_third_session(op, in_dtype, M, N, K, kernel, split_k):
    kernels, rows = sm90a_tables(op)
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype) == (
        kernel, split_k, "table")


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k", [
    # swapped-operand tile kernels at M = 17..64 (twentieth session): the bucket-32 row answers M = 17..32
    # (t64x32x128.sw split 1 until the twenty-fourth session's re-timing: 9.3 against 8.7 us)
    ("gemm_a8w8", "fp8_e4m3fn", 32, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 4),
    ("gemm_a8w8", "fp8_e4m3fn", 20, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 64, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
    ("gemm_a16w16", "bf16", 32, 2048, 7168, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 4),
    ("gemm_a16w16", "bf16", 64, 2112, 7168, "gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw.sm90a", 4),
    # one-warpgroup decode CTAs (twentieth session)
    ("gemm_a8w8", "fp8_e4m3fn", 1, 57344, 8192, DEC + "a8w8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 1),  # again (66th)
    ("gemm_a8w8", "fp8_e4m3fn", 16, 24576, 1536, "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m16n64.w1.b4.wg.sm90a", 1),
    # (m16n64.w1.b3.wg at split 2 until the twenty-sixth session: 74.3 against 68.5 us for the .sw tile kernel)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 16, 36864, 7168,
     "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
    ("gemm_mxfp8", "fp8_e4m3fn", 8, 8192, 8192, "gemm_splitk_decode.mxfp8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 4),
    # wide bulk decode kernels (32 weight rows per CTA), twenty-first session; the bucket-8 row answers M = 5..8
    ("gemm_a8w8", "fp8_e4m3fn", 8, 36864, 7168, "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n32.w6.bk1.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 5, 36864, 7168, "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n32.w6.bk1.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 1, 8192, 8192, "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
    ("gemm_a16w16", "bf16", 16, 36864, 7168, "gemm_splitk_decode.a16w16.bf16.bf16.m16n32.w4.bk2.sm90a", 1),
    # one wave of 128 CTAs at N = 10240 (80 weight rows per CTA)
    ("gemm_a8w8", "fp8_e4m3fn", 3, 10240, 8192, "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n80.w3.bk2.sm90a", 1),
    # swapped-operand tile kernels down to M = 5 (twenty-first session)
    ("gemm_a8w8", "fp8_e4m3fn", 12, 10240, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 6, 7168, 18432, "gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
    ("gemm_a16w16", "bf16", 8, 8192, 28672, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.np.sm90a", 1),  # 63rd session
    ("gemm_a16w16", "bf16", 64, 2048, 7168, "gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 4),
    # blockscale with 32 weight rows per CTA (measured in the twenty-first session, built in the twenty-second)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 8, 36864, 7168,
     "gemm_splitk_decode.a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 6, 8192, 8192,
     "gemm_splitk_decode.a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
])
def test_sm90a_decode_rows_of_the_twentieth_and_twenty_first_sessions(op, in_dtype, M, N, K, kernel, split_k):
    """The rows measured on the H200 for the .sw, .w1 and wide bulk kernels (sm_90a.csv) through the production
    lookup."""
    kernels, rows = sm90a_tables(op)
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype) == (
        kernel, split_k, "table")


def test_a_stream_k_row_runs_stream_k_only_on_a_kernel_with_the_mode():
    """split_k = -1 (csrc/launch.h kStreamK) in a row: the stream-K schedule where the kernel's metadata offers it
    (17th kernel field), else unsplit."""
    kernels = ("k_sk,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,128,128,plain,,128,0,0,0,1\n"
               "k_nosk,sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,16,1,8,128,128,plain,,128,0,0,0,0\n")
    for name, want in (("k_sk", -1), ("k_nosk", 1)):
        rows = f"sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,128,10240,8192,{name},-1\n"
        got = lookup(128, 10240, 8192, kernels=kernels, rows=rows, arch="sm_90a", in_dtype="fp8_e4m3fn")
        assert got == (name, want, "table")


@pytest.mark.parametrize("N, K", [(57344, 8192)])
def test_sm90a_blockscale_m128_stream_k_rows_of_the_thirty_fifth_session(N, K):
    """The M = 128 layer where stream-K beat the table's pick (docs/PERF.md, thirty-fifth session; its 36864 x 7168
    row went to a 96-wide tile in the thirty-sixth) answers M = 97..128 with the t128x128 split-K kernel's stream-K
    schedule; M = 96 keeps the default rows."""
    kernel = "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a"
    assert sm90a_lookup("gemm_a8w8_blockscale", 128, N, K) == (kernel, -1, "table")
    assert sm90a_lookup("gemm_a8w8_blockscale", 97, N, K) == (kernel, -1, "table")
    assert sm90a_lookup("gemm_a8w8_blockscale", 96, N, K)[1] != -1


@pytest.mark.parametrize("M, N, K, tile", [
    # 96 / 112 columns (more tiles per wave)
    (128, 10240, 8192, "t128x96x128"),     # 80 tiles of 128 columns, 107 of 96
    (128, 24576, 1536, "t128x96x128.st0"),
    (128, 36864, 7168, "t128x96x128"),
    (128, 28672, 4096, "t128x112x128.st0"),
    (97, 28672, 4096, "t128x112x128.st0"),     # the m_max = 128 row answers M = 97..128
    # 160 / 192 columns with serial promotion (less shared-memory traffic per flop)
    (1024, 28672, 4096, "t128x160x128.serial.st0"),
    (1024, 10240, 8192, "t128x160x128.serial.st0"),
    # forty-fourth session (tools/tune_specs/ab-44-bs-retune.pairs, 5 fresh rounds): t128x192.serial 0.972 / 0.957
    (1024, 57344, 8192, "t128x192x128.serial"),
    (1024, 36864, 7168, "t128x192x128.serial"),
    (4096, 6144, 4096, "t192x128x128.serial"),
    (4096, 28672, 4096, "t192x128x128.serial"),
    (4096, 10240, 8192, "t192x128x128.serial"),
    (4096, 8192, 28672, "t192x128x128.serial"),
    (4096, 7168, 16384, "t192x128x128.serial"),
    (4096, 36864, 7168, "t192x128x128.serial"),
    (16384, 8192, 28672, "t192x128x128.serial"),
    (16384, 7168, 18432, "t192x128x128.serial"),
    (54560, 8192, 8192, "t192x128x128.serial"),   # the issue-4 large shape (m_max = 65536 row)
    # measured after the final run, three rounds each (...-ab-bs-wide-confirm-36.txt); the two M = 1024 layers first
    # went to t128x112 (3.9 waves of 112-column tiles against 3.4 of 128), then t128x160.serial beat that
    (1024, 7168, 16384, "t128x160x128.serial.st0"),
    (1024, 7168, 18432, "t128x160x128.serial.st0"),
    (4096, 7168, 18432, "t192x128x128.serial"),
    (4096, 57344, 8192, "t192x128x128.serial"),
    (1024, 6144, 4096, "t128x192x128.serial"),
    (4096, 8192, 8192, "t192x128x128.serial"),
    (16384, 57344, 8192, "t192x128x128.serial"),
    (16384, 36864, 7168, "t192x128x128.serial"),
    (16384, 6144, 4096, "t192x128x128.serial"),
    (16384, 7168, 16384, "t192x128x128.serial"),
    (8192, 8192, 8192, "t192x128x128.serial"),    # the issue-4 8192^3 shape
])
def test_sm90a_blockscale_rows_with_tiles_crossing_a_w_scale_block(M, N, K, tile):
    """Rows of the thirty-sixth session (docs/PERF.md): token tiles whose width does not divide the 128-row w_scale
    block, where the head-start A/B against the table's pick won by 2.5-16%. Forty-third session (scale ring,
    ab-43-switch.pairs): t192x128.serial took the rows with m_max >= 1024 where it won (37 of 44 pairs); the t128x160
    rows kept name its in-stage twin .st0, the M = 128 t128x96 / t128x112 rows of 24576 x 1536 / 28672 x 4096 theirs."""
    assert sm90a_lookup("gemm_a8w8_blockscale", M, N, K) == (
        f"gemm_a8w8_blockscale.fp8_e4m3fn.bf16.{tile}.sm90a", 1, "table")


@pytest.mark.parametrize("M, N, K, tile", [
    # one wave of 80-column tiles at M = 128 (10240 / 80 = 128 CTAs on 132 SMs, against 80 of 128 columns)
    (128, 10240, 8192, "t128x80x128"),
    (100, 10240, 8192, "t128x80x128"),
    (128, 57344, 8192, "t128x112x128"),
    # 7168 / 112 = 64 tiles per 128 token rows: 3.9 waves at M = 1024, against 1.7 of 256-column tiles
    (1024, 7168, 16384, "t128x112x128"),
    (1024, 7168, 18432, "t128x112x128"),
])
def test_sm90a_fp8_rows_with_80_and_112_column_tiles(M, N, K, tile):
    """Rows of the thirty-seventh session (docs/PERF.md): fp8 token tiles 80 / 112 wide (the 16-column epilogue)
    where the head-start A/B against the table's pick won by 2.6-7.5% (per-token too at 128 x 10240 x 8192)."""
    assert sm90a_lookup("gemm_a8w8", M, N, K) == (f"gemm_a8w8.fp8_e4m3fn.bf16.{tile}.sm90a", 1, "table")


# ----------------------------------------------------------------------------- rows restricted to row scales

SCALED_ROWS = ROWS + """\
gfx942,gemm_a8w8.row_scales,fp8_e4m3fnuz,bf16,128,4096,4096,k_scaled,1
gfx942,gemm_a8w8.row_scales,fp8_e4m3fnuz,bf16,128,8192,4096,k_scaled,1
"""
SCALED_KERNELS = KERNELS + "k_scaled,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\n"


@pytest.mark.parametrize("op, M, N, expect", [
    ("gemm_a8w8.row_scales", 128, 4096, ("k_scaled", 1, "table")),  # its bucket (64, 128]
    ("gemm_a8w8.row_scales", 65, 4096, ("k_scaled", 1, "table")),
    ("gemm_a8w8", 128, 4096, ("k_large", 2, "table")),                 # per-tensor calls keep the op's rows
    ("gemm_a8w8.row_scales", 1024, 4096, ("k_large", 4, "table")),     # outside its bucket: the op's exact row
    ("gemm_a8w8.row_scales", 16, 4096, ("k_small", 1, "table")),
    ("gemm_a8w8.row_scales", 40, 4096, ("k_large", 3, "default")),     # no exact row covers M: the default rows
    ("gemm_a8w8.row_scales", 128, 8192, ("k_scaled", 1, "table")),  # a layer with only a restricted row
    ("gemm_a8w8", 128, 8192, ("k_large", 3, "default")),
])
def test_row_scales_rows_answer_only_calls_with_row_scales(op, M, N, expect):
    assert lookup(M, N, 4096, kernels=SCALED_KERNELS, rows=SCALED_ROWS, op=op) == expect


def test_row_scales_rows_are_exact_rows_only():
    """A default row restricted to row scales is ignored by the lookup (and refused by the build, below)."""
    rows = ROWS + "gfx942,gemm_a8w8.row_scales,fp8_e4m3fnuz,bf16,8192,0,0,k_scaled,1\n"
    assert lookup(2048, 1024, 1024, kernels=SCALED_KERNELS, rows=rows, op="gemm_a8w8.row_scales") == ("k_large", 3, "default")


@pytest.mark.parametrize("op, N, K, message", [
    ("gemm_a8w8.row_scales", 0, 0, "needs an exact N and K"),
    ("gemm_a16w16.row_scales", 4096, 4096, "only gemm_a8w8 rows"),
])
def test_build_refuses_bad_row_scales_rows(op, N, K, message):
    from source_modules import load_source
    bk = load_source("tools/build_kernels.py", "build_kernels_rows")
    with pytest.raises(SystemExit, match=message):
        bk.check_row_scaling("sm_90a", {"op": op, "N": str(N), "K": str(K), "m_max": "128"})


@pytest.mark.parametrize("op", ["gemm_a16w16.row_scales", "gemm_a8w8.per_token", "gemm_a8w8_blockscale.row_scales"])
def test_unknown_scaling_qualifier_is_a_clear_error(op):
    with pytest.raises(RuntimeError, match="unknown op"):
        lookup(128, op=op)


# ----------------------------------------------------------------------------- rows of one part ("<op>@<part>")

PART_ROWS = SCALED_ROWS + """\
gfx942,gemm_a8w8@MI300X,fp8_e4m3fnuz,bf16,128,4096,4096,k_part,1
gfx942,gemm_a8w8.row_scales@MI300X,fp8_e4m3fnuz,bf16,128,8192,4096,k_part_scaled,1
"""
PART_KERNELS = SCALED_KERNELS + ("k_part,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\n"
                                 "k_part_scaled,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\n")
MI300X = "AMD Instinct MI300X"


@pytest.mark.parametrize("op, M, N, device_name, expect", [
    ("gemm_a8w8", 128, 4096, MI300X, ("k_part", 1, "table")),                 # the part's row, in its bucket (64, 128]
    ("gemm_a8w8", 128, 4096, "", ("k_large", 2, "table")),                    # no device: the shared rows
    ("gemm_a8w8", 128, 4096, "AMD Instinct MI300X2", ("k_large", 2, "table")),  # a word, not a prefix
    ("gemm_a8w8", 128, 4096, "AMD Instinct XMI300X", ("k_large", 2, "table")),
    ("gemm_a8w8", 128, 4096, "mi300x", ("k_large", 2, "table")),              # case as the device reports it
    ("gemm_a8w8", 128, 4096, "MI300X-OAM (rev 2)", ("k_part", 1, "table")),   # words split at any non-alphanumeric
    ("gemm_a8w8", 1024, 4096, MI300X, ("k_large", 4, "table")),               # outside its bucket: the shared rows
    ("gemm_a8w8", 40, 4096, MI300X, ("k_large", 3, "default")),
    ("gemm_a8w8.row_scales", 128, 4096, MI300X, ("k_part", 1, "table")),      # the part's rows before row_scales rows
    ("gemm_a8w8.row_scales", 128, 8192, MI300X, ("k_part_scaled", 1, "table")),
    ("gemm_a8w8", 128, 8192, MI300X, ("k_large", 3, "default")),              # a row_scales@part row: row scales only
    ("gemm_a8w8.row_scales", 128, 8192, "", ("k_scaled", 1, "table")),
])
def test_part_rows_answer_only_on_a_device_of_that_name(op, M, N, device_name, expect):
    assert lookup(M, N, 4096, kernels=PART_KERNELS, rows=PART_ROWS, op=op, device_name=device_name) == expect


def test_part_rows_are_exact_rows_only():
    """A default row of one part is ignored by the lookup (and refused by the build, below)."""
    rows = PART_ROWS + "gfx942,gemm_a8w8@MI300X,fp8_e4m3fnuz,bf16,8192,0,0,k_part,1\n"
    assert lookup(2048, 1024, 1024, kernels=PART_KERNELS, rows=rows, device_name=MI300X) == ("k_large", 3, "default")


@pytest.mark.parametrize("op, N, K, message", [
    ("gemm_a8w8@H100", 0, 0, "needs an exact N and K"),
    ("gemm_a8w8@H 100", 4096, 4096, "one word of letters and digits"),
    ("gemm_a8w8@", 4096, 4096, "one word of letters and digits"),
    ("gemm_a16w16.row_scales@H100", 4096, 4096, "only gemm_a8w8 rows"),
])
def test_build_refuses_bad_part_rows(op, N, K, message):
    from source_modules import load_source
    bk = load_source("tools/build_kernels.py", "build_kernels_part_rows")
    row = {"op": op, "N": str(N), "K": str(K), "m_max": "128"}
    with pytest.raises(SystemExit, match=message):
        bk.check_part("sm_90a", row)
        bk.check_row_scaling("sm_90a", row)


H100 = "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize("op, M, N, K, tile", [
    ("gemm_a16w16", 16384, 57344, 8192, "t128x256x64"),
    ("gemm_a16w16", 4096, 36864, 7168, "t256x128x64"),
    ("gemm_a16w16", 1024, 36864, 7168, "t256x128x64"),
    ("gemm_a8w8", 16384, 57344, 8192, "t256x128x128"),
    ("gemm_a8w8", 16384, 36864, 7168, "t128x256x128"),
    ("gemm_a8w8", 4096, 36864, 7168, "t128x256x128"),
    ("gemm_a8w8.row_scales", 4096, 36864, 7168, "t256x128x128"),
    ("gemm_a8w8.row_scales", 16384, 7168, 18432, "t256x128x128"),
    ("gemm_a8w8.row_scales", 16384, 8192, 8192, "t128x256x128"),
    ("gemm_a8w8.row_scales", 4096, 28672, 4096, "t256x128x128"),
    # fiftieth session (ab-50-pp-h100.pairs); 16384 x 24576 x 1536 confirmed by ab-51-bf16-24576.pairs
    ("gemm_a16w16", 16384, 24576, 1536, "t128x256x64"),
    ("gemm_a16w16", 4096, 57344, 8192, "t128x256x64"),
    ("gemm_a16w16", 1024, 57344, 8192, "t256x128x64"),
    ("gemm_a16w16", 1024, 24576, 1536, "t256x128x64"),
    ("gemm_a8w8", 54560, 8192, 8192, "t128x256x128"),
    ("gemm_a8w8.row_scales", 54560, 8192, 8192, "t128x256x128"),
    ("gemm_a8w8", 16384, 28672, 4096, "t256x128x128"),
    ("gemm_a8w8.row_scales", 16384, 28672, 4096, "t256x128x128"),
    ("gemm_a8w8", 1024, 28672, 4096, "t256x128x128"),
    ("gemm_a8w8", 1024, 4096, 4096, "t256x128x128"),
    ("gemm_a8w8.row_scales", 16384, 4096, 14336, "t256x128x128"),
])
def test_sm90a_h100_rows_replace_the_ping_pong_picks_on_an_h100_only(op, M, N, K, tile):
    """Forty-ninth and fiftieth sessions (docs/PERF.md): on an H100 the shared rows' ping-pong t128x128 picks ran
    1.02-1.41x the time of a 256-wide tile on these layers; the H200 they were measured on keeps them."""
    dtype = "bf16" if op == "gemm_a16w16" else "fp8_e4m3fn"
    kernel = f"{op.split('.')[0]}.{dtype}.bf16.{tile}.sm90a"
    assert sm90a_lookup(op, M, N, K, device_name=H100) == (kernel, 1, "table")
    for name in ("", "NVIDIA H200", "NVIDIA GH200 480GB"):
        shared = sm90a_lookup(op, M, N, K, device_name=name)
        assert shared == sm90a_lookup(op, M, N, K) and shared[0] != kernel


def test_sm90a_h100_row_of_one_scaling_leaves_the_other_on_the_shared_pick():
    """16384 x 4096 x 14336 on an H100: the 256-wide tile won per-token only (0.929; per-tensor 1.017), so only the
    row_scales op has an H100 row there."""
    assert sm90a_lookup("gemm_a8w8", 16384, 4096, 14336, device_name=H100) == \
        sm90a_lookup("gemm_a8w8", 16384, 4096, 14336) == ("gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a", 1, "table")


def test_explain_answers_for_a_named_device():
    """flygemm.explain(device_name=...) answers as the ops do on a device of that name (the H100 rows above); an arch
    name alone answers for the reference part."""
    if "sm_90a" not in json.loads(torch.ops.flygemm._info())["archs"]:
        pytest.skip("sm_90a kernels not linked into this build")
    on_h100 = flygemm.explain("gemm_a16w16", 16384, 57344, 8192, device="sm_90a", device_name=H100)
    assert on_h100["kernel"] == "gemm_a16w16.bf16.bf16.t128x256x64.sm90a"
    assert flygemm.explain("gemm_a16w16", 16384, 57344, 8192, device="sm_90a")["kernel"] == \
        "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"


@pytest.mark.parametrize("M, N, K, tile", [
    (16384, 36864, 7168, "t128x256x128.c2x1"),
    (16384, 57344, 8192, "t256x128x128"),
    (12000, 57344, 8192, "t256x128x128"),
])
def test_sm90a_per_token_rows_keep_the_tiles_the_ping_pong_rows_replaced(M, N, K, tile):
    """Thirty-seventh session: the .pp rows won per-tensor and lost per-token on these layers (3-round A/B)."""
    assert sm90a_lookup("gemm_a8w8", M, N, K) == ("gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a", 1, "table")
    assert sm90a_lookup("gemm_a8w8.row_scales", M, N, K) == (f"gemm_a8w8.fp8_e4m3fn.bf16.{tile}.sm90a", 1, "table")


@pytest.mark.parametrize("op, M, N, K, kernel", [
    ("gemm_a16w16", 1024, 10240, 8192, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a"),
    ("gemm_a16w16", 4096, 6144, 4096, "gemm_a16w16.bf16.bf16.t256x128x64.sm90a"),
    ("gemm_a16w16", 4096, 8192, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 4096, 24576, 1536, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 4096, 28672, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 4096, 36864, 7168, "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp.sm90a"),
    ("gemm_a16w16", 4096, 57344, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 4096, 4096, "gemm_a16w16.bf16.bf16.t128x256x64.c1x2.sm90a"),
    ("gemm_a16w16", 16384, 6144, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 7168, 16384, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 8192, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 24576, 1536, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 28672, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 16384, 57344, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a8w8", 4096, 4096, 14336, "gemm_a8w8.fp8_e4m3fn.bf16.t256x128x128.sm90a"),
    ("gemm_a8w8", 4096, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 4096, 8192, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t256x128x128.sm90a"),
    ("gemm_a8w8", 4096, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 4096, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 4096, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 4096, 57344, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t256x128x128.sm90a"),
    ("gemm_a8w8", 16384, 4096, 14336, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 16384, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 16384, 7168, 16384, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 16384, 7168, 18432, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 16384, 8192, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 16384, 10240, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 16384, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 16384, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a8w8", 16384, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 16384, 57344, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    # thirty-eighth session: M = 1024 (ab-38-m1024-pp.pairs, confirmed by ab-38-confirm.pairs per-tensor and per-token)
    ("gemm_a8w8", 1024, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 1024, 4096, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a8w8", 1024, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 1024, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a16w16", 1024, 24576, 1536, "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp.sm90a"),
    # 2112 = 12 x 176: 384 tiles of 128 tokens at M = 4096 (2.91 waves of 132) against 352 of t128x192 (2.67)
    ("gemm_a8w8", 4096, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a"),
    ("gemm_a16w16", 4096, 2112, 7168, "gemm_a16w16.bf16.bf16.t128x176x64.sm90a"),
    ("gemm_a8w8", 4000, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a"),   # the row's bucket (2048, 4096]
    # M = 4097..8192 had no exact rows (the default t128x128 answered; ab-38-m8192.pairs, ab-38-m8192-bs.pairs)
    ("gemm_a8w8", 8192, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a8w8", 4097, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),  # the bucket (4096, 8192]
    ("gemm_a8w8", 8192, 57344, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8.row_scales", 8192, 57344, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a"),
    ("gemm_a8w8.row_scales", 6000, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a"),
    ("gemm_a8w8.row_scales", 8192, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),  # no row_scales row
    ("gemm_a16w16", 8192, 24576, 1536, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 8192, 36864, 7168, "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp.sm90a"),
    ("gemm_a8w8_blockscale", 8192, 8192, 28672, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 8192, 7168, 16384, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    # after the final run (ab-38-m8192-bs.pairs)
    ("gemm_a8w8_blockscale", 8192, 4096, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    ("gemm_a16w16", 8192, 2112, 7168, "gemm_a16w16.bf16.bf16.t128x176x64.sm90a"),
    ("gemm_a8w8", 8192, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a"),
    ("gemm_a8w8", 8192, 7168, 16384, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),  # ab-38-placement.pairs
    # thirty-ninth session: M = 1025..2048 and 257..512 (ab-39-confirm.pairs, ab-39-m512.pairs), the recheck's .pp rows
    ("gemm_a8w8", 2048, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a"),
    ("gemm_a8w8", 1025, 36864, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),  # the bucket (1024, 2048]
    ("gemm_a16w16", 2048, 57344, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a8w8_blockscale", 2048, 6144, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 1500, 57344, 8192, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 512, 6144, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x192x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 512, 10240, 8192, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x160x128.serial.st0.sm90a"),
    ("gemm_a8w8", 512, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a16w16", 512, 36864, 7168, "gemm_a16w16.bf16.bf16.t128x192x64.sm90a"),
    ("gemm_a8w8", 1024, 10240, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    ("gemm_a16w16", 1024, 57344, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp.sm90a"),
    ("gemm_a16w16", 1024, 36864, 7168, "gemm_a16w16.bf16.bf16.t128x128x64.c1x2.pp.sm90a"),
    # after the final run: M = 129..256 (ab-39-m256-bs.pairs)
    ("gemm_a16w16", 256, 57344, 8192, "gemm_a16w16.bf16.bf16.t128x128x64.sk8.sw.sm90a"),  # fortieth session
    ("gemm_a8w8", 200, 24576, 1536, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c2x1.pp.sm90a"),
    # (blockscale 256 x 28672 x 4096 went to t128x112 here, then to t128x160.serial in the forty-first session, below)
    # fortieth session: blockscale serial wide tiles (ab-40-m256-rest.pairs)
    ("gemm_a8w8_blockscale", 256, 10240, 8192, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x160x128.serial.st0.sm90a"),
    ("gemm_a8w8_blockscale", 400, 24576, 1536, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x192x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 2048, 2112, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x160x128.serial.st0.sm90a"),
    ("gemm_a8w8_blockscale", 1100, 7168, 16384, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    # fortieth session: every unsplit kernel at M = 512 (ab-40-m512-sweep.pairs)
    ("gemm_a16w16", 512, 2112, 7168, "gemm_a16w16.bf16.bf16.t128x80x64.sm90a"),
    ("gemm_a16w16", 384, 4096, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sk8.sw.sm90a"),
    ("gemm_a16w16", 512, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x112x64.sm90a"),
    ("gemm_a16w16", 257, 28672, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.sk8.sw.sm90a"),
    ("gemm_a8w8", 512, 7168, 16384, "gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a"),
    ("gemm_a8w8", 500, 7168, 18432, "gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a"),
    ("gemm_a8w8", 512, 10240, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a"),
    # fortieth session, after the final run (ab-40-m256-bf16-sweep, -m256-fp8-sweep, -m512-bs-sweep.pairs)
    ("gemm_a16w16", 256, 10240, 8192, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a"),
    ("gemm_a16w16", 200, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x112x64.sm90a"),
    ("gemm_a16w16", 256, 6144, 4096, "gemm_a16w16.bf16.bf16.t128x112x64.sm90a"),
    ("gemm_a8w8", 256, 6144, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x96x128.sm90a"),
    ("gemm_a8w8_blockscale", 512, 7168, 16384, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x112x128.sm90a"),
    # forty-first session (ab-41-sweep-*.pairs)
    ("gemm_a16w16", 2048, 7168, 16384, "gemm_a16w16.bf16.bf16.t128x176x64.sm90a"),
    ("gemm_a16w16", 1025, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x176x64.sm90a"),
    ("gemm_a16w16", 2048, 28672, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a8w8_blockscale", 1024, 4096, 14336, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sm90a"),
    # forty-fourth session: the serial tile once it read its scales while the wgmmas run (ab-44-serial.pairs, 0.983)
    ("gemm_a8w8_blockscale", 4096, 4096, 14336, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 256, 36864, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x192x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 256, 28672, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x160x128.serial.st0.sm90a"),
    ("gemm_a8w8_blockscale", 200, 6144, 4096, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x96x128.sm90a"),
    ("gemm_a8w8", 256, 10240, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a"),
    ("gemm_a8w8", 256, 28672, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a"),
    ("gemm_a8w8", 256, 8192, 8192, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sw.sm90a"),
    ("gemm_a8w8", 129, 8192, 28672, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sw.sm90a"),
])
def test_sm90a_rows_from_the_head_start_ab_sweeps(op, M, N, K, kernel):
    """Thirty-seventh to forty-first sessions (docs/PERF.md): rows where the .pp / 256-row / 176-column / other built
    tiles beat the table's pick by >= 2% in every round of the head-start A/B (tools/tune_specs/ab-37-*.pairs,
    ab-38-*.pairs; fp8 rows per-tensor and per-token), or (ab-39-*.pairs .. ab-41-*.pairs) by the median of rounds on new tensors."""
    assert sm90a_lookup(op, M, N, K) == (kernel, 1, "table")


def test_sm90a_m256_row_of_the_2112_layer_runs_t64x64_unsplit():
    # thirty-ninth session: t64x64.sw at split 2 (the M = 128 row's pick) won 0.949-0.953 against t128x64.sw unsplit;
    # fortieth session (ab-40-m256-bf16-sweep.pairs): the same kernel unsplit won 0.798-0.800 against split 2
    assert sm90a_lookup("gemm_a16w16", 256, 2112, 7168) == ("gemm_a16w16.bf16.bf16.t64x64x64.sk8.sw.sm90a", 1, "table")


@pytest.mark.parametrize("op, variant, expect", [
    ("gemm_a8w8", "per_token", "gemm_a8w8.row_scales"),
    ("gemm_a8w8", "per_tensor", "gemm_a8w8"),
    ("gemm_a16w16", "-", "gemm_a16w16"),
    ("gemm_a8w8_blockscale", "-", "gemm_a8w8_blockscale"),
])
def test_tune_writes_per_token_rows_as_row_scales_rows(op, variant, expect):
    """tools/tune.py --variant per_token measures calls with row scales, so its rows answer only those."""
    from source_modules import load_source
    assert load_source("tools/tune.py", "tune_rows").row_op(op, variant) == expect


BS = "gemm_a8w8_blockscale.fp8_e4m3fn.bf16"


@pytest.mark.parametrize("op, M, N, K, kernel", [
    # blockscale M > 1024: t192x128.serial once the narrower rows of the bucket need more than one wave
    ("gemm_a8w8_blockscale", 600, 5120, 5120, f"{BS}.t128x128x128.sm90a"),   # M = 257..1024 unchanged
    ("gemm_a8w8_blockscale", 1025, 12288, 4096, f"{BS}.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 1500, 2048, 8192, f"{BS}.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 3000, 5120, 13824, f"{BS}.t192x128x128.serial.sm90a"),
    ("gemm_a8w8_blockscale", 12000, 3072, 4096, f"{BS}.t192x128x128.serial.sm90a"),   # the largest bucket
    ("gemm_a8w8_blockscale", 1500, 512, 4096, f"{BS}.t64x128x128.sm90a"),     # 24 x 4 tiles: one wave
    ("gemm_a8w8_blockscale", 2048, 1024, 4096, f"{BS}.t128x128x128.sm90a"),   # 16 x 8 tiles: one wave
    # bf16 / fp8 M > 4096: the ping-pong t128x128 tile once the cooperative tiles exceed one wave
    ("gemm_a16w16", 6000, 12288, 4096, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a16w16", 20000, 5120, 5120, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),
    ("gemm_a8w8", 12000, 3072, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 20000, 5120, 5120, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),
    ("gemm_a8w8", 4200, 512, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sm90a"),   # 33 x 4 tiles: one wave
    # 40 x 5 tiles fill 76% of two waves' SM slots: the two 128 x 128 rows cost the same, so the last (ping-pong) row
    # stayed (H200 A/B, forty-sixth session: 0.970 of the cooperative tile's time); since the seventy-fifth session the
    # by_cost t192x160 (27 x 4 tiles, one wave; 0.963 of the ping-pong tile's time on an H100) answers
    ("gemm_a16w16", 5120, 640, 4096, "gemm_a16w16.bf16.bf16.t192x160x64.sm90a"),
    # the M > 4096 by_cost rows against the ping-pong pick (csrc/dispatch.cpp by_cost_margin; seventy-fifth session,
    # tools/probes/by-cost-large-m-75.pairs): 5% cheaper with K rows of 8 KiB or more, 15% with shorter ones
    ("gemm_a8w8", 5168, 1728, 21568, "gemm_a8w8.fp8_e4m3fn.bf16.t192x192x128.sm90a"),      # predicted 0.826, 0.575
    ("gemm_a8w8", 12000, 2560, 14336, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),  # 0.963: 1.010
    ("gemm_a8w8", 4500, 3072, 2048, "gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a"),    # short K, 0.885: 1.083
    ("gemm_a8w8", 16384, 576, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t192x192x128.sm90a"),       # short K, 0.826: 0.778
    ("gemm_a16w16", 12000, 2112, 4096, "gemm_a16w16.bf16.bf16.t192x160x64.sm90a"),         # 0.944: 0.957
    ("gemm_a16w16", 6000, 3072, 2048, "gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a"),       # short K, 0.917: 1.019
])
def test_sm90a_default_rows_of_the_forty_fourth_session(op, M, N, K, kernel):
    """docs/PERF.md, forty-fourth session: off-table blockscale shapes with M > 1024 end at t192x128.serial, bf16 / fp8
    shapes with M > 4096 at the ping-pong t128x128 tile (unless its waves leave more than 15% of the SM slots idle)."""
    assert sm90a_lookup(op, M, N, K) == (kernel, 1, "default")


@pytest.mark.parametrize("op, M, N, K, kernel, source", [
    # below its m_max an exact plain-tile row yields to the default rows' pick when that costs >= 10% less waves x tile
    # area / area_speed (csrc/dispatch.cpp cheaper_default_below_m_max; H200 A/B, forty-sixth session, new / old time)
    ("gemm_a16w16", 577, 7168, 16384, "gemm_a16w16.bf16.bf16.t128x160x64.sm90a", "default"),      # 0.667 (row 1024)
    # 0.747 (row 2048); forty-eighth session: the by_cost t128x160.sw, 0.870x t128x192's time
    ("gemm_a8w8", 1025, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x160x128.sw.sm90a", "default"),
    ("gemm_a8w8", 3000, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128.sm90a", "default"),   # 2 waves against 3
    ("gemm_a8w8_blockscale", 1281, 2112, 7168, f"{BS}.t192x128x128.serial.sm90a", "default"),   # 0.567 (row 2048)
    ("gemm_a8w8_blockscale", 300, 10240, 8192, f"{BS}.t128x128x128.sm90a", "default"),          # 2 waves / 0.89: 0.899
    # 260 x 7168 x 18432: the M = 512 row's t128x112 runs 3 x 64 tiles (2 waves), t128x192 3 x 38 (one), and the
    # by_cost t128x144.sw 2 x 56 of 144 tokens (one; forty-seventh session 114.8 us against t128x192's 149.9)
    ("gemm_a16w16", 260, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x144x64.sw.sm90a", "default"),
    # at m_max the measurement stands; 4.5% cheaper is under the margin
    ("gemm_a16w16", 512, 7168, 18432, "gemm_a16w16.bf16.bf16.t128x112x64.sm90a", "table"),
    ("gemm_a8w8", 4096, 2112, 7168, "gemm_a8w8.fp8_e4m3fn.bf16.t128x176x128.sm90a", "table"),
    ("gemm_a16w16", 1536, 7168, 16384, "gemm_a16w16.bf16.bf16.t128x176x64.sm90a", "table"),     # t128x224: 0.955
])
def test_exact_rows_below_their_m_max_yield_to_a_cheaper_default(op, M, N, K, kernel, source):
    assert sm90a_lookup(op, M, N, K) == (kernel, 1, source)


@pytest.mark.parametrize("M, N, K, kernel", [
    # t192x128's waves less than 85% full: the cheapest waves x tile area / area_speed (t192x112 0.905, t192x96 0.865,
    # t128x128 0.89, t192x128 1; csrc/dispatch.cpp cheapest_waves_row)
    # costs in t192x128 tiles: waves x area / area_speed
    (1100, 6400, 4096, f"{BS}.t192x112x128.serial.sm90a"),   # 3 x 0.875 / 0.905 = 2.90; t192x128 3, t128x128 3.0
    (1300, 5120, 5120, f"{BS}.t192x96x128.serial.sm90a"),    # 3 x 0.75 / 0.865 = 2.60; t192x112 2.90
    (1500, 3584, 8192, f"{BS}.t192x112x128.serial.sm90a"),   # 2 x 0.875 / 0.905 = 1.93 (t192x128 at 0.848 of 2 waves: 2)
    # t128x128's 5 waves / 0.89 = 5.6 against t192x112's 4 x 1.31 / 0.905 = 5.8 (H200: 0.930 / 0.964 of t192x128's time)
    (1200, 8192, 4096, f"{BS}.t128x128x128.sm90a"),
    (5000, 2048, 7168, f"{BS}.t128x128x128.sm90a"),          # the largest bucket (H200: 0.969 of t192x112's time)
    (1500, 5632, 4096, f"{BS}.t192x128x128.serial.sm90a"),   # 352 tiles fill 0.89 of 3 waves: unchanged
    (1100, 2048, 7168, f"{BS}.t192x96x128.serial.sm90a"),    # 6 x 22 = 132 tiles: one wave, before the wider tiles
])
def test_sm90a_blockscale_defaults_weigh_the_192_row_serial_tiles(M, N, K, kernel):
    """docs/PERF.md, forty-fifth session: measured at M = 1100..1500, time follows waves x tile area / tile speed."""
    assert sm90a_lookup("gemm_a8w8_blockscale", M, N, K) == (kernel, 1, "default")


def test_every_exact_row_answers_at_its_own_m_max():
    """An exact row was measured at its m_max: whatever the default rows cost there, the lookup at that M answers the
    row (csrc/dispatch.cpp cheaper_default_below_m_max yields only below m_max), for every sm_90a row of the tile ops,
    each looked up with its own input / output dtypes (twin rows included)."""
    wrong = []
    for op in ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale"):
        kernels, rows = sm90a_tables(op)
        for row in rows.splitlines():
            f = row.split(",")
            if f[1] != op or f[5] == "0" or int(f[4]) > 1 << 20:
                continue
            M, N, K = int(f[4]), int(f[5]), int(f[6])
            got = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=f[2], out_dtype=f[3])
            if got[2] != "table":
                wrong.append((op, M, N, K, got))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("op, M, N, K, kernel", [
    # by_cost rows (csrc/dispatch.cpp cheaper_by_cost_row): a 192-row or unsplit swapped tile answers where its
    # waves x area / area_speed is 3% or more below the first-fit / cheapest-waves pick (H200, forty-seventh session)
    ("gemm_a16w16", 184, 14336, 4096, "gemm_a16w16.bf16.bf16.t192x112x64.sm90a"),      # 44.0 -> 38.1 us
    ("gemm_a8w8", 260, 7168, 18432, "gemm_a8w8.fp8_e4m3fn.bf16.t128x144x128.sw.sm90a"),  # 80.2 -> 58.0 us
    ("gemm_a16w16", 545, 57344, 8192, "gemm_a16w16.bf16.bf16.t192x192x64.sm90a"),      # 7 waves: 0.925x
    # the gate: past 7 waves of its own a by_cost row is not weighed (fp8 3300 x 14336 x 4096 at 11: 1.042x)
    ("gemm_a8w8", 3300, 14336, 4096, "gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128.sm90a"),
    ("gemm_a16w16", 4096, 20480, 4096, "gemm_a16w16.bf16.bf16.t128x256x64.sm90a"),
])
def test_sm90a_by_cost_rows_and_their_wave_gate(op, M, N, K, kernel):
    assert sm90a_lookup(op, M, N, K) == (kernel, 1, "default")


def test_by_cost_kernels_are_not_first_fit_rows():
    """Every kernel with by_cost=1 (kernels csv) is a tile kernel that does not split, and sits in the bf16 / fp8
    default lists before their last row: the last row stays a first-fit one (csrc/dispatch.cpp first_fitting_default)."""
    from source_modules import ROOT as root
    by_cost = {r[0] for r in csv.reader(open(root / "kernels/configs/sm_90a.kernels.csv"))
               if len(r) > 9 and "by_cost=1" in r[9]}
    assert by_cost and all(".sk" not in k for k in by_cost)
    rows = [r for r in csv.reader(line for line in open(root / "kernels/configs/sm_90a.csv") if not line.startswith("#"))
            if len(r) > 8]
    defaults = {}
    for r in rows:
        if r[5] == "0" and r[6] == "0":
            defaults.setdefault((r[0], r[1], r[2], r[3], r[4]), []).append(r)
    listed = 0
    for key, bucket in defaults.items():
        names = [c for r in bucket for c in r if c.endswith(".sm90a")]
        listed += sum(n in by_cost for n in names)
        assert not names or names[-1] not in by_cost, key
    assert listed >= len(by_cost)


# ----------------------------------------------------------------------------- dtype twins (sm_90a.twins.csv)


# (op as the table is asked, dtypes of the measured rows, dtypes of their twins, which rows the twin copies:
# kernels/configs/sm_90a.twins.csv)
TWINNED = [("gemm_a16w16", ("bf16", "bf16"), ("fp16", "fp16"), "all"),
           ("gemm_a8w8", ("fp8_e4m3fn", "bf16"), ("fp8_e4m3fn", "fp16"), "default"),
           ("gemm_a8w8.row_scales", ("fp8_e4m3fn", "bf16"), ("fp8_e4m3fn", "fp16"), "default"),
           ("gemm_a8w8", ("int8", "bf16"), ("int8", "fp16"), "all"),
           ("gemm_a8w8_blockscale", ("fp8_e4m3fn", "bf16"), ("fp8_e4m3fn", "fp16"), "default"),
           ("gemm_a16w16", ("bf16", "bf16"), ("bf16", "fp32"), "default"),
           ("gemm_a16w16", ("bf16", "bf16"), ("fp16", "fp32"), "default"),
           ("gemm_a8w8", ("fp8_e4m3fn", "bf16"), ("fp8_e4m3fn", "fp32"), "default"),
           ("gemm_a8w8.row_scales", ("fp8_e4m3fn", "bf16"), ("fp8_e4m3fn", "fp32"), "default"),
           ("gemm_a8w8", ("int8", "bf16"), ("int8", "fp32"), "default")]


# The tile of the fp32-output rows past M = 4096 (sm_90a.csv), which replace the twin copies of that bucket.
FP32_ROWS_PAST_4096 = {"gemm_a16w16": "t128x256x64", "gemm_a8w8": "t128x256x128"}
# Of the shapes test_twin_dtypes_take_the_measured_rows_twin asks about, those whose fp32 rows past M = 4096 are exact
# rows of the layer (seventy-third session, H100 A/B), by (op, N, K, M): the tile they name.
FP32_EXACT_PAST_4096 = {("gemm_a16w16", 57344, 8192, 16384): "t192x192x64",
                        ("gemm_a16w16", 2112, 7168, 16384): "t128x128x64.pp",
                        ("gemm_a8w8", 2112, 7168, 16384): "t128x128x128.pp"}


def without_exact_rows(rows: str, dtypes: tuple) -> str:
    """The rows (sm90a_tables' CSV) less the exact (N, K) rows of the given (in, out) dtypes."""
    def exact(line):
        f = line.split(",")
        return (f[2], f[3]) == dtypes and (f[5], f[6]) != ("0", "0")
    return "\n".join(line for line in rows.splitlines() if not exact(line)) + "\n"


@pytest.mark.parametrize("M", [1, 2, 5, 8, 16, 24, 64, 100, 128, 300, 1024, 4096, 16384, 60000])
@pytest.mark.parametrize("N,K", [(2048, 7168), (16384, 7168), (8192, 8192), (4096, 4096), (57344, 8192),
                                 (2112, 7168), (1000, 4128)])
@pytest.mark.parametrize("op,dtypes,twin,scope", TWINNED, ids=lambda v: ".".join(v) if isinstance(v, tuple) else v)
def test_twin_dtypes_take_the_measured_rows_twin(op, dtypes, twin, scope, M, N, K):
    """fp16 gemm_a16w16 and the fp8 / int8 ops' fp16 and fp32 outputs had no rows of their own (one 128 x 128 tile for
    every shape, 16 CTAs at N = 2048); with the twins each picks the twin of whatever the measured rows pick (for twins of
    the default rows only: the measured default rows), with the same split_k and from the same kind of row."""
    kernels, rows = sm90a_tables(op)
    base = op.split(".")[0]
    if twin[1] == "fp32" and twin[0] != "int8" and M > 4096:  # sm_90a.csv's own fp32 rows past M = 4096 answer there
        picked = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=twin[0], out_dtype="fp32")
        exact = FP32_EXACT_PAST_4096.get((base, N, K, M))
        tile, source = (exact, "table") if exact else (FP32_ROWS_PAST_4096[base], "default")
        assert picked == (f"{base}.{twin[0]}.fp32.{tile}.sm90a", 1, source)
        return
    measured_rows = rows if scope == "all" else without_exact_rows(rows, dtypes)
    measured = lookup(M, N, K, kernels=kernels, rows=measured_rows, arch="sm_90a", op=op, in_dtype=dtypes[0],
                      out_dtype=dtypes[1])
    picked = lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=twin[0], out_dtype=twin[1])
    old, new = ".{}.{}.".format(*dtypes), ".{}.{}.".format(*twin)
    assert new in picked[0]
    if measured[2] == "fallback":  # no row takes the shape: the first built kernel that does (only row kernels
        assert picked[2] == "fallback"  # are twinned, so that may be another one)
        assert picked[0].replace(new, old, 1) in {line.split(",")[0] for line in kernels.splitlines()}
    else:
        assert picked == (measured[0].replace(old, new, 1), measured[1], measured[2])


def fp32_exact_rows_past_4096():
    """sm_90a.csv's exact (N, K) rows with fp32 output past M = 4096: (op, in_dtype, m_max, N, K, kernel)."""
    from source_modules import ROOT as root
    with open(root / "kernels/configs/sm_90a.csv") as f:
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#")) if len(r) >= 8]
    return [(r[1], r[2], int(r[4]), int(r[5]), int(r[6]), r[7]) for r in rows
            if r[3] == "fp32" and r[5] != "0" and 4096 < int(r[4]) < 2**62]


# The per-token (row-scales) fp32 rows past M = 4096 that keep the 128 x 256 tile where the ping-pong rows lost with
# per-token scales (seventy-third session): (m_max, N, K).
FP32_ROW_SCALES_KEEP_T128X256 = {(16384, 6144, 4096), (8192, 8192, 8192), (8192, 10240, 8192), (8192, 28672, 4096)}


def test_fp32_exact_rows_past_4096_answer_their_buckets():
    """The fp32 rows measured at M = 8192 / 16384 on the LLM layers (seventy-third session) answer M = 4097..8192 /
    8193..16384 of their layer with their kernel, bf16 and fp16 the same kernels, and per-token calls too (no twin row
    takes them over) except on the four layers whose row-scales rows keep the 128 x 256 tile; past M = 16384 the layer
    goes back to the 128 x 256 default row."""
    every = fp32_exact_rows_past_4096()
    rows = [r for r in every if r[0] in FP32_ROWS_PAST_4096]
    assert len(rows) >= 30
    assert {r[2:5] for r in every if r[0] == "gemm_a8w8.row_scales"} == FP32_ROW_SCALES_KEEP_T128X256
    ops = {}
    for op, in_dtype, m_max, N, K, kernel in rows:
        ops.setdefault(op, sm90a_tables(op))
        kernels, table = ops[op]
        assert lookup(m_max, N, K, kernels=kernels, rows=table, arch="sm_90a", op=op, in_dtype=in_dtype,
                      out_dtype="fp32") == (kernel, 1, "table")
        far = lookup(16385, N, K, kernels=kernels, rows=table, arch="sm_90a", op=op, in_dtype=in_dtype,
                     out_dtype="fp32")
        assert far == (f"{op}.{in_dtype}.fp32.{FP32_ROWS_PAST_4096[op]}.sm90a", 1, "default")
    a16 = {(m, n, k, kern.replace(".bf16.", ".")) for op, dt, m, n, k, kern in rows if dt == "bf16"}
    assert a16 == {(m, n, k, kern.replace(".fp16.", ".")) for op, dt, m, n, k, kern in rows if dt == "fp16"}
    for op, in_dtype, m_max, N, K, kernel in rows:
        if op == "gemm_a8w8":
            kernels, table = ops[op]
            if (m_max, N, K) in FP32_ROW_SCALES_KEEP_T128X256:
                kernel = f"gemm_a8w8.{in_dtype}.fp32.t128x256x128.sm90a"
            assert lookup(m_max, N, K, kernels=kernels, rows=table, arch="sm_90a", op="gemm_a8w8.row_scales",
                          in_dtype=in_dtype, out_dtype="fp32") == (kernel, 1, "table")


def test_twin_rules():
    """tools/build_kernels.py: a twin is named by its dtypes; rows of the twin combination itself suppress the
    twin rows of the same bucket and shape; a twinned kernel whose name lacks its dtypes stops the build."""
    from source_modules import load_source
    bk = load_source("tools/build_kernels.py", "flygemm_build_kernels")
    twins = {("gemm_a16w16", "bf16", "bf16"): [("fp16", "fp16")]}
    assert bk.kernel_twins(twins, "gemm_a16w16", "bf16", "bf16", "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a") == [
        ("fp16", "fp16", "gemm_a16w16.fp16.fp16.t64x32x64.sk8.sw.sm90a")]
    assert bk.kernel_twins(twins, "gemm_a8w8", "fp8_e4m3fn", "bf16", "x.fp8_e4m3fn.bf16.y") == []
    row = {"op": "gemm_a16w16@H100", "in_dtype": "bf16", "out_dtype": "bf16", "m_max": 16, "N": 2048, "K": 7168,
           "kernel": "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", "split_k": 2}
    (twin,) = bk.twin_rows("sm_90a", [row], twins)
    assert twin == dict(row, in_dtype="fp16", out_dtype="fp16", kernel="gemm_a16w16.fp16.fp16.t64x32x64.sk8.sw.sm90a")
    own = dict(row, op="gemm_a16w16", in_dtype="fp16", out_dtype="fp16", kernel="k_fp16")
    assert bk.twin_rows("sm_90a", [row, own], twins) == []   # the twin dtypes' own row of that bucket and shape
    elsewhere = dict(own, m_max=64)                          # ... replaces the copies there and only there
    assert bk.twin_rows("sm_90a", [row, elsewhere], twins) == [twin]
    with pytest.raises(SystemExit, match="must contain"):
        bk.kernel_twins(twins, "gemm_a16w16", "bf16", "bf16", "gemm_a16w16_t64x32")
    defaults_only = {("gemm_a16w16", "bf16", "bf16"): [("fp16", "fp16", "default")]}
    assert bk.twin_rows("sm_90a", [row], defaults_only) == []   # an exact row: not copied
    default_row = dict(row, op="gemm_a16w16", N=0, K=0)
    assert [r["kernel"] for r in bk.twin_rows("sm_90a", [row, default_row], defaults_only)] == [
        "gemm_a16w16.fp16.fp16.t64x32x64.sk8.sw.sm90a"]


def test_twin_rows_column_is_checked(tmp_path):
    """sm_90a.twins.csv's optional rows column: all (or empty) / default, anything else stops the build."""
    from source_modules import load_source
    bk = load_source("tools/build_kernels.py", "flygemm_build_kernels")
    head = "op,in_dtype,out_dtype,twin_in_dtype,twin_out_dtype,rows\n"
    (tmp_path / "sm_90a.twins.csv").write_text(head + "gemm_a8w8,fp8_e4m3fn,bf16,fp8_e4m3fn,fp16,default\n"
                                               "gemm_a16w16,bf16,bf16,fp16,fp16,\n")
    assert bk.read_twins("sm_90a", tmp_path) == {("gemm_a8w8", "fp8_e4m3fn", "bf16"): [("fp8_e4m3fn", "fp16", "default")],
                                                 ("gemm_a16w16", "bf16", "bf16"): [("fp16", "fp16", "all")]}
    (tmp_path / "sm_90a.twins.csv").write_text(head + "gemm_a16w16,bf16,bf16,fp16,fp16,exact\n")
    with pytest.raises(SystemExit, match="rows must be one of"):
        bk.read_twins("sm_90a", tmp_path)


@pytest.mark.parametrize("op,dtypes,twin,scope", [t for t in TWINNED if "." not in t[0]],
                         ids=lambda v: ".".join(v) if isinstance(v, tuple) else v)
def test_twin_kernels_are_built_for_every_row_kernel(op, dtypes, twin, scope):
    """Every kernel a row of the measured dtypes names (for twins of the default rows: a default row) has its twin
    in the build's kernel list (with the same family params), and the decode twins are valid decode configs of the
    twin's dtypes; twins of the default rows build no kernel that only exact rows name."""
    from source_modules import load_source
    bk = load_source("tools/build_kernels.py", "flygemm_build_kernels")
    fam = load_source("kernels/cuda/gemm_splitk_decode.py", "decode_family")
    specs = {s["name"]: s for s in bk.read_kernel_specs("sm_90a")}
    rows = bk.read_dispatch_rows("sm_90a", set(specs))
    mine = [r for r in rows if bk.row_base_op(r["op"]) == op and (r["in_dtype"], r["out_dtype"]) == dtypes]
    used = {r["kernel"] for r in mine if scope == "all" or r["N"] == r["K"] == 0}
    assert used
    old, new = ".{}.{}.".format(*dtypes), ".{}.{}.".format(*twin)
    twins_built = {n for n, s in specs.items()
                   if s.get("twin_of") in {r["kernel"] for r in mine} and (s["in_dtype"], s["out_dtype"]) == twin}
    assert twins_built == {n.replace(old, new, 1) for n in used} - {n for n, s in specs.items() if "twin_of" not in s}
    for name in used:
        twin_spec = specs[name.replace(old, new, 1)]
        assert (twin_spec["in_dtype"], twin_spec["out_dtype"]) == twin
        ignore = ("name", "ident", "in_dtype", "out_dtype", "twin_of")
        assert {k: v for k, v in twin_spec.items() if k not in ignore} == \
               {k: v for k, v in specs[name].items() if k not in ignore}
        if twin_spec["family"] == "gemm_splitk_decode":
            cfg = fam.Config.from_spec(twin_spec)
            assert (cfg.in_dtype, cfg.out_dtype, cfg.out_bytes) == (twin[0], twin[1], 4 if twin[1] == "fp32" else 2)
    assert any(bk.row_base_op(r["op"]) == op and (r["in_dtype"], r["out_dtype"]) == twin for r in rows)


def test_decode_config_dtypes():
    """The decode family: fp16 input only for gemm_a16w16; bf16 / fp16 / fp32 outputs for every op."""
    from source_modules import load_source
    fam = load_source("kernels/cuda/gemm_splitk_decode.py", "decode_family")
    for out, nbytes in (("bf16", 2), ("fp16", 2), ("fp32", 4)):
        assert fam.Config("gemm_a8w8", out_dtype=out, tile_m=8, tile_n=32).out_bytes == nbytes
    assert fam.Config("gemm_a16w16", in_dtype="fp16", out_dtype="fp16", tile_m=8, tile_n=32).in_dtype == "fp16"
    with pytest.raises(ValueError, match="in_dtype"):
        fam.Config("gemm_a8w8", in_dtype="fp16", tile_m=8, tile_n=32)
    with pytest.raises(ValueError, match="out_dtype"):
        fam.Config("gemm_a16w16", out_dtype="fp8_e4m3fn", tile_m=8, tile_n=32)


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k", [
    # sixty-second session (H100 kernel / event time): packed-row (.np) twins of the bulk-ring picks where a slot holds
    # 8 or more activation rows; M rounds up to its bucket (12 -> 16, 7 -> 8, 3 -> 4)
    ("gemm_a16w16", "bf16", 12, 2048, 7168, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),
    ("gemm_a16w16", "bf16", 16, 2112, 7168, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),
    ("gemm_a16w16", "fp16", 16, 2048, 7168, DEC + "a16w16.fp16.fp16.m16n16.w8.bk3.np.sm90a", 1),   # dtype twin
    ("gemm_a16w16", "bf16", 16, 2048, 8192, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),   # was the .sw tile
    ("gemm_a16w16", "bf16", 16, 1024, 4096, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 7, 2048, 7168, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 3, 1536, 8960, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 1, 1536, 8960, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.sm90a", 1),   # was the .sw tile
    ("gemm_a8w8", "fp8_e4m3fn", 1, 2048, 7168, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.sm90a", 1),   # M = 1: a tie
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 16, 2112, 7168,
     DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m16n16.w7.bk3.np.sm90a", 1),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 8, 1536, 8960, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    # (two 8-row CTAs along M beat the 16-row kernel at 16 x 1024 x 4096 once packed: 5.2 against 5.8 us)
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 16, 1024, 4096, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 2, 2112, 7168, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
])
def test_sm90a_decode_rows_of_the_sixty_second_session(op, in_dtype, M, N, K, kernel, split_k):
    kernels, rows = sm90a_tables(op)
    out_dtype = "fp16" if in_dtype == "fp16" else "bf16"
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype,
                  out_dtype=out_dtype) == (kernel, split_k, "table")


@pytest.mark.parametrize("op, in_dtype, M, N, K, kernel, split_k", [
    # sixty-third session (ring sweep, H100 kernel time, each row confirmed by event time): rows whose pick was a .sw
    # tile or an older decode kernel, now on the bulk-ring kernels; M rounds up to its bucket
    ("gemm_a16w16", "bf16", 16, 2048, 2048, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),   # was t64x32 .sw
    ("gemm_a16w16", "bf16", 3, 2048, 2048, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1),   # was t128x32 .sw, split 8
    ("gemm_a16w16", "fp16", 8, 8192, 8192, DEC + "a16w16.fp16.fp16.m8n32.w4.bk2.np.sm90a", 1),   # dtype twin
    ("gemm_a16w16", "bf16", 13, 4096, 4096, DEC + "a16w16.bf16.bf16.m16n32.w4.bk2.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 1, 2048, 8192, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 6, 2048, 8192, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),   # was m8n64.wg
    ("gemm_a8w8", "fp8_e4m3fn", 8, 3584, 18944, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.np.sm90a", 1),
    ("gemm_a8w8", "fp8_e4m3fn", 8, 7680, 2560, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.np.sm90a", 1),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 1, 2048, 2048, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 4, 8192, 8192,
     DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.np.sm90a", 1),
    ("gemm_a8w8_blockscale", "fp8_e4m3fn", 16, 2048, 8192,
     DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m16n16.w7.bk3.np.sm90a", 1),   # was t128x32 .sw, split 8
])
def test_sm90a_decode_rows_of_the_sixty_third_session(op, in_dtype, M, N, K, kernel, split_k):
    kernels, rows = sm90a_tables(op)
    out_dtype = "fp16" if in_dtype == "fp16" else "bf16"
    assert lookup(M, N, K, kernels=kernels, rows=rows, arch="sm_90a", op=op, in_dtype=in_dtype,
                  out_dtype=out_dtype) == (kernel, split_k, "table")


MXFP4, MXFP8 = DEC + "mxfp4.fp4_e2m1_x2.bf16.", DEC + "mxfp8.fp8_e4m3fn.bf16."


@pytest.mark.parametrize("op, M, N, K, kernel, split_k", [
    # sixty-fourth session (MX ring sweep, H100 kernel time, each of the 20 moved rows confirmed by event time, new / old
    # 0.779-0.964): rows whose old pick came from the fifty-ninth session's H100 e4 moves or none, shared; M rounds up
    ("gemm_mxfp4", 16, 8192, 8192, MXFP4 + "m16n64.s3.p2.e4.img.sm90a", 1),
    ("gemm_mxfp4", 11, 7168, 18432, MXFP4 + "m16n64.s3.p2.e4.img.sm90a", 1),
    ("gemm_mxfp4", 8, 10240, 8192, MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 1),
    ("gemm_mxfp4", 8, 8192, 8192, MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 1),   # was m8n64.s3.p4.wgb at split 2
    ("gemm_mxfp8", 1, 2048, 2048, MXFP8 + "m8n16.w8k128.bk6.sm90a", 1),  # 9.6 -> 7.5 us
    ("gemm_mxfp8", 5, 1024, 4096, MXFP8 + "m8n16.w8k128.bk6.sm90a", 1),
    ("gemm_mxfp8", 1, 4096, 1024, MXFP8 + "m8n32.sm90a", 1),
    ("gemm_mxfp8", 16, 4096, 1024, MXFP8 + "m16n64.wg.sm90a", 1),
])
def test_sm90a_mx_decode_rows_of_the_sixty_fourth_session(op, M, N, K, kernel, split_k):
    for device_name in ("", H100, "NVIDIA H200"):
        assert sm90a_lookup(op, M, N, K, device_name=device_name) == (kernel, split_k, "table")


BF16_SW, FP8_SW = "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", "gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a"


@pytest.mark.parametrize("op, M, N, K, kernel, split_k", [
    # sixty-fifth session: the M = 9..16 (and M <= 8) default lists open with bulk-ring decode kernels at split 1, each
    # answering from 64 CTAs to one wave of one CTA per SM (132 on the reference part); past that the .sw tile kernels
    ("gemm_a16w16", 16, 1536, 3072, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),
    ("gemm_a16w16", 16, 1008, 14336, BF16_SW, 8),                                         # 63: too few
    ("gemm_a16w16", 16, 2112, 2048, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),   # 132
    ("gemm_a16w16", 16, 2128, 2048, DEC + "a16w16.bf16.bf16.m16n32.w4.bk2.np.sm90a", 1),   # 133 16-column tiles
    ("gemm_a16w16", 12, 4224, 3072, DEC + "a16w16.bf16.bf16.m16n32.w4.bk2.np.sm90a", 1),   # 132 32-column tiles
    ("gemm_a16w16", 16, 4256, 3072, BF16_SW, 1),   # 133: the two-CTA kernel would still fit 264 at its automatic split
    ("gemm_a16w16", 16, 30720, 2048, BF16_SW, 1),  # no row fits: the first tile kernel, not the first (decode) row
    # M <= 8 (same session, the same rule): bf16 m8n16.w7k256.bk2, fp8 m8n16.w7.bk4.np then m8n32.w4.bk2.np, blockscale
    # m8n16.w7.bk4.np, each at split 1, ahead of the lists that were there; past them those lists as before
    ("gemm_a16w16", 8, 1536, 3072, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1),
    ("gemm_a16w16", 1, 1280, 8192, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1),
    ("gemm_a16w16", 8, 2112, 2048, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1),
    ("gemm_a16w16", 8, 2128, 2048, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1),   # the old default
    ("gemm_a16w16", 1, 30720, 2048, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1),  # no row fits: its first row again
    ("gemm_a8w8", 1, 1536, 7168, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8", 4, 3072, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n32.w4.bk2.np.sm90a", 1),
    ("gemm_a8w8", 4, 4256, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 1),
    ("gemm_a8w8_blockscale", 8, 2048, 5120, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),
    ("gemm_a8w8_blockscale", 8, 2560, 4096, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 1),
    ("gemm_a8w8_blockscale", 1, 30720, 2048, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 1),
    ("gemm_a8w8", 12, 1536, 4096, DEC + "a8w8.fp8_e4m3fn.bf16.m16n16.w7.bk4.rr.np.sm90a", 1),
    ("gemm_a8w8", 16, 2128, 2048, FP8_SW, 1),
    ("gemm_a8w8", 16, 30720, 2048, DEC + "a8w8.fp8_e4m3fn.bf16.m16n64.w1.b4.wg.sm90a", 1),  # its last row fits there
    ("gemm_a8w8_blockscale", 16, 1536, 4096, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m16n16.w7.bk3.np.sm90a", 1),
    ("gemm_a8w8_blockscale", 16, 512, 7168, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 8),
    ("gemm_a8w8_blockscale", 16, 30720, 2048, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
    # sixty-seventh / sixty-eighth sessions: the rings' lower edge follows K (csrc/dispatch.cpp ring_min_ctas): 16-row
    # rings from max(32, K / 144) CTAs below 64, else max(64, K / 192); 8-row rings from max(32, K / 192) up to 64
    ("gemm_a16w16", 9, 1024, 12288, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),   # 64 CTAs >= 12288 / 192
    ("gemm_a16w16", 9, 1024, 12480, BF16_SW, 8),                                          # 64 < 65
    ("gemm_a16w16", 16, 1024, 14336, BF16_SW, 8),                                         # 64 < 75 (was the ring)
    ("gemm_a16w16", 16, 512, 4608, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),    # 32 CTAs
    ("gemm_a16w16", 16, 512, 6144, BF16_SW, 8),                                           # 32 < 43 (was the ring)
    ("gemm_a16w16", 16, 640, 5760, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),    # 40 >= 5760 / 144
    ("gemm_a16w16", 16, 640, 5888, BF16_SW, 8),                                           # 40 < 41
    ("gemm_a16w16", 16, 1008, 9072, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),   # 63 >= 9072 / 144
    ("gemm_a16w16", 16, 1008, 9216, BF16_SW, 8),                                          # 63 < 64
    ("gemm_a16w16", 16, 960, 1024, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),    # 60 (was the .sw tile)
    ("gemm_a16w16", 16, 496, 1024, BF16_SW, 1),                                           # 31: too few
    ("gemm_a16w16", 16, 1536, 20480, BF16_SW, 5),                                         # 96 < 107
    ("gemm_a16w16", 16, 2112, 24576, DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1),  # 132 >= 128
    ("gemm_a8w8", 16, 768, 6912, DEC + "a8w8.fp8_e4m3fn.bf16.m16n16.w7.bk4.rr.np.sm90a", 1),  # 48 CTAs
    ("gemm_a8w8", 16, 768, 9216, FP8_SW, 8),                                                 # 48 < 64 (was the ring)
    ("gemm_a8w8_blockscale", 16, 768, 9344, "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 8),
    ("gemm_a8w8", 8, 2048, 1024, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),   # 128 CTAs
    ("gemm_a16w16", 8, 512, 6144, DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1),     # 32 (was m8n32:12)
    ("gemm_a16w16", 8, 512, 6336, DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 12),         # 32 < 33
    ("gemm_a8w8", 1, 768, 14336, DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a", 4),        # 48 < 64
    ("gemm_a8w8_blockscale", 5, 1008, 12096, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1),  # 63
    ("gemm_a8w8_blockscale", 5, 1008, 12288, DEC + "a8w8_blockscale.fp8_e4m3fn.bf16.m8n32.w4.bk2.sm90a", 6),  # < 64
])
def test_sm90a_ring_default_rows(op, M, N, K, kernel, split_k):
    for device_name in ("", H100, "NVIDIA H200"):
        assert sm90a_lookup(op, M, N, K, device_name=device_name) == (kernel, split_k, "default")


@pytest.mark.parametrize("op, M, N, K, h100, shared", [
    # sixty-third session's moves of picks an H200 had chosen, from one .sw tile or split to another or from a decode
    # kernel to a .sw tile (H100 event time 0.891-0.995): op@H100 rows since the sixty-fourth session
    ("gemm_a8w8", 16, 16384, 7168, ("gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
     ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1)),   # an issue-5 bar shape
    ("gemm_a8w8", 9, 8192, 8192, ("gemm_a8w8.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
     ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1)),
    ("gemm_a8w8", 16, 5120, 13824, ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
     ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 3)),
    ("gemm_a8w8", 16, 32768, 512, ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
     (DEC + "a8w8.fp8_e4m3fn.bf16.m16n64.w1.b4.wg.sm90a", 1)),
    ("gemm_a16w16", 16, 8192, 8192, ("gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 1),
     ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 5, 5632, 4096, ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1),
     ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 3)),   # the old row's automatic split
    ("gemm_a8w8_blockscale", 16, 2560, 10240, ("gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1),
     ("gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 6)),
    ("gemm_a8w8_blockscale", 16, 5632, 4096, ("gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1),
     ("gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t64x32x128.sk8.sw.sm90a", 1)),
    # sixty-fourth session: the MX ring sweep's moves of picks an H200 had chosen (a split or a sibling kernel) answer on
    # an H100 only (op@H100 rows); the H200's picks stay shared until an H200 re-measures them
    ("gemm_mxfp4", 1, 57344, 8192, (MXFP4 + "m2n64.s2.p14.rf.wgn.sm90a", 2), (MXFP4 + "m2n64k128.s3.p8.b4.wgn.sm90a", 1)),
    ("gemm_mxfp4", 1, 10240, 8192, (MXFP4 + "m2n64k128.s3.p8.b4.wgn.sm90a", 2), (MXFP4 + "m2n64k128.s3.p8.b4.wgn.sm90a", 4)),
    ("gemm_mxfp4", 2, 10240, 8192, (MXFP4 + "m2n64k128.s3.p8.b4.wgn.sm90a", 2), (MXFP4 + "m2n64k128.s3.p8.b4.wgn.sm90a", 4)),
    ("gemm_mxfp4", 3, 7168, 16384, (MXFP4 + "m4n64.s4.p3.wgn.sm90a", 2), (MXFP4 + "m4n64.s4.p3.rf.wgn.sm90a", 2)),
    ("gemm_mxfp4", 4, 10240, 8192, (MXFP4 + "m4n64.s4.p3.rf.wgn.sm90a", 1), (MXFP4 + "m4n64.s4.p3.rf.wgn.sm90a", 2)),
])
def test_sm90a_h100_decode_rows_of_the_sixty_third_and_sixty_fourth_sessions(op, M, N, K, h100, shared):
    assert sm90a_lookup(op, M, N, K, device_name=H100) == (*h100, "table")
    for device_name in ("", "NVIDIA H200", "NVIDIA GH200 480GB"):
        assert sm90a_lookup(op, M, N, K, device_name=device_name) == (*shared, "table")


@pytest.mark.parametrize("op, M, N, K, h100, shared", [
    # sixty-sixth session: 15 shared rows the sixty-third / sixty-fourth sessions had moved on H100 evidence lost on the
    # H200 (both rounds of an A/B, new / old 1.016-1.285): the shared rows answer their old (H200) picks again and the
    # H100 picks answer on an H100 only; M rounds up to its bucket
    ("gemm_a16w16", 16, 10240, 8192, (DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 16, 57344, 8192, (DEC + "a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 1, 7168, 18432, (DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 2)),
    ("gemm_a16w16", 4, 7168, 16384, (DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 2)),
    ("gemm_a16w16", 8, 7168, 20480, (DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 8, 16384, 7168, (DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 8, 11008, 4096, (DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 7, 14336, 4096, (DEC + "a16w16.bf16.bf16.m8n32.w4.bk2.sm90a", 1), ("gemm_a16w16.bf16.bf16.t128x32x64.sk8.sw.sm90a", 1)),
    ("gemm_a16w16", 1, 40960, 7168, (DEC + "a16w16.bf16.bf16.m8n16.w7k256.bk2.sm90a", 1), (DEC + "a16w16.bf16.bf16.m8n32.sm90a", 1)),
    ("gemm_a8w8", 1, 57344, 8192, (DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.sm90a", 1), (DEC + "a8w8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 1)),
    ("gemm_a8w8", 3, 57344, 8192, (DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w7.bk4.np.sm90a", 1), (DEC + "a8w8.fp8_e4m3fn.bf16.m8n64.w1.b4.wg.sm90a", 1)),
    ("gemm_a8w8", 8, 16384, 7168, (DEC + "a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.np.sm90a", 1), ("gemm_a8w8.fp8_e4m3fn.bf16.t128x32x128.sk8.sw.sm90a", 1)),
    ("gemm_mxfp4", 8, 7168, 16384, (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 1), (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 2)),
    ("gemm_mxfp4", 6, 7168, 18432, (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 1), (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 2)),
    ("gemm_mxfp4", 8, 8192, 28672, (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 1), (MXFP4 + "m8n64.s3.p2.e4.img.sm90a", 2)),
])
def test_sm90a_h100_rows_of_the_sixty_sixth_session(op, M, N, K, h100, shared):
    assert sm90a_lookup(op, M, N, K, device_name=H100) == (*h100, "table")
    for device_name in ("", "NVIDIA H200"):
        assert sm90a_lookup(op, M, N, K, device_name=device_name) == (*shared, "table")


@pytest.mark.parametrize("op, M, N, K, kernel, split_k", [
    # H100 picks of the sixty-third / sixty-fourth sessions that won on the H200 too (sixty-sixth session): shared now
    ("gemm_a16w16", 16, 24576, 1536, "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a", 1),   # 0.896 / 0.978
    ("gemm_mxfp8", 16, 2112, 7168, MXFP8 + "m16n64.wg.sm90a", 6),                          # 0.949 / 0.946
])
def test_sm90a_h100_picks_shared_since_the_sixty_sixth_session(op, M, N, K, kernel, split_k):
    for device_name in ("", H100, "NVIDIA H200"):
        assert sm90a_lookup(op, M, N, K, device_name=device_name) == (kernel, split_k, "table")


@pytest.mark.parametrize("M, N, K, kernel, split_k", [
    # sixty-sixth session: the MXFP4 decode kernels with 8..32-row token tiles split within one wave of one CTA per SM
    # (the largest split with N tiles x split <= 132), unsplit from 132 N tiles on; before, the 192-CTA target
    (16, 3072, 1024, "m16n64.s3.p2.e4.img.sm90a", 2),    # 48 tiles (the target: 4)
    (16, 4096, 2560, "m16n64.s3.p2.e4.img.sm90a", 2),    # 64 tiles (3)
    (12, 2048, 3072, "m16n64.s3.p2.e4.img.sm90a", 4),    # 32 tiles (6)
    (16, 1024, 8192, "m16n64.s3.p2.e4.img.sm90a", 8),    # 16 tiles (12)
    (16, 1536, 1536, "m16n64.s3.p2.e4.img.sm90a", 5),    # 24 tiles (6)
    (16, 8448, 2048, "m16n64.s3.p2.e4.img.sm90a", 1),    # 132 tiles (2)
    (8, 3072, 5120, "m8n64.s3.p4.wgb.sm90a", 2),    # 48 tiles (4; m8n32's 96 tiles are short of 5120 / 44)
    (5, 8192, 2048, "m8n64.s3.p4.wgb.sm90a", 1),
    (32, 6144, 1024, "m32n64.s3.p1.ib3.e4.img.sm90a", 1),
    (24, 1024, 1024, "m32n64.s3.p1.ib3.e4.img.sm90a", 4),  # at most one slice per 256-K tile (8 by the wave)
    (2, 3072, 1024, "m2n64k128.s3.p8.b4.wgn.sm90a", 4),   # the 2- and 4-row kernels keep the target (not measured)
    (64, 3072, 1024, "m64n64k128.s4.p1.img.sm90a", 4),    # and the 64-row one
])
def test_sm90a_mxfp4_decode_split_within_one_wave(M, N, K, kernel, split_k):
    for device_name in ("", H100, "NVIDIA H200"):
        assert sm90a_lookup("gemm_mxfp4", M, N, K, device_name=device_name) == (MXFP4 + kernel, split_k, "default")


@pytest.mark.parametrize("M, N, K, kernel, split_k", [
    # sixty-seventh session: at M = 5..8 m8n32 unsplit opens the MXFP4 list from max(64, K / 44) CTAs to one wave
    # (csrc/dispatch.cpp fixed_split_min_ctas); elsewhere the .wgb kernel at its one-wave split as before
    (8, 3072, 4096, "m8n32.sm90a", 1),            # 96 CTAs >= 4096 / 44
    (8, 2816, 4096, "m8n64.s3.p4.wgb.sm90a", 3),  # 88 < 94
    (8, 2048, 2816, "m8n32.sm90a", 1),            # 64 CTAs
    (8, 2016, 2816, "m8n64.s3.p4.wgb.sm90a", 4),  # 63: too few
    (5, 4224, 1024, "m8n32.sm90a", 1),            # 132: one wave
    (8, 4256, 1024, "m8n64.s3.p4.wgb.sm90a", 1),  # 133: past it
    (8, 8192, 2048, "m8n64.s3.p4.wgb.sm90a", 1),
    (4, 4096, 1024, "m4n64.s4.p3.wgn.sm90a", 3),  # M <= 4: its own list
])
def test_sm90a_mxfp4_m8_list_opens_with_m8n32_unsplit(M, N, K, kernel, split_k):
    for device_name in ("", H100, "NVIDIA H200"):
        assert sm90a_lookup("gemm_mxfp4", M, N, K, device_name=device_name) == (MXFP4 + kernel, split_k, "default")


def test_sm90a_mxfp4_decode_split_counts_the_devices_sms():
    kernels, rows = sm90a_tables("gemm_mxfp4")
    find = lambda N, sms: lookup_op(kernels, rows, "sm_90a", "gemm_mxfp4", "fp4_e2m1_x2", "bf16", 16, N, 4096, "", sms)
    assert find(1024, 78) == MXFP4 + "m16n64.s3.p2.e4.img.sm90a,4,default"    # an H20: 78 // 16 tiles
    assert find(1024, 114) == MXFP4 + "m16n64.s3.p2.e4.img.sm90a,7,default"   # an H100 PCIe: 114 // 16
    assert find(1024, 0) == MXFP4 + "m16n64.s3.p2.e4.img.sm90a,8,default"     # the reference part: 132 // 16
