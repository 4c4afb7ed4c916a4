"""tools/tune_vs_table.py: the table's pick is read from the same tuning log and compared with the best
candidate; only rows that beat the pick by the gain are written for tools/merge_tuned.py."""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

PICK = "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n80.w3.bk2.sm90a"   # sm_90a.csv: 1 x 10240 x 8192, split 1
OTHER = "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n16.w6.bk1.sm90a"


@pytest.fixture
def tool():
    if not all((ROOT / "build/kernels/sm_90a" / k / "result.json").exists() for k in (PICK, OTHER)):
        pytest.skip("needs the sm_90a kernel build (python tools/build_kernels.py --arch sm_90a)")
    import tune_vs_table
    return tune_vs_table


def write_case(tmp_path, other_us):
    log = tmp_path / "tune.log"
    log.write_text(
        "     M      N      K  kernel  sk  us\n"
        f"     1  10240   8192 *{OTHER}  1  {other_us}  7.4  3680  1.970  0.00e+00\n"
        f"     1  10240   8192  {PICK}  1  24.0  7.0  3489  1.868  4.64e-09\n"
        f"     1  10240   8192  {PICK}  2  29.0  5.8  2894  1.549  4.64e-09\n"
        "     1  10240   8192  some.kernel.not.built  1  1.0  0  0  0  0\n")
    tuned = tmp_path / "tuned.csv"
    tuned.write_text("arch,op,in_dtype,out_dtype,m_max,N,K,kernel,split_k,us,tflops,gbps\n"
                     f"sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,1,10240,8192,{OTHER},1,{other_us},7.4,3680\n"
                     f"sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,1,2048,7168,{OTHER},1,6.0,7.4,3680\n")
    return log, tuned


@pytest.mark.parametrize("other_us, merged", [(22.0, True), (23.8, False)])
def test_only_rows_that_beat_the_tables_pick_by_the_gain_are_written(tool, tmp_path, capsys, other_us, merged):
    log, tuned = write_case(tmp_path, other_us)
    out = tmp_path / "winners.csv"
    assert tool.main([str(log), "--gain", "1.02", "--tuned", str(tuned), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"table {PICK}:1 (table) 24.0" in printed          # the pick's own time in this run, not the best split
    assert ("MERGE" in printed) == merged
    rows = out.read_text().splitlines()
    assert rows[0].startswith("arch,op") and len(rows) == (2 if merged else 1)
    if merged:
        assert rows[1].split(",")[5:9] == ["10240", "8192", OTHER, "1"]


DEFAULT_FP8 = OTHER   # sm_90a.csv's first default row for M <= 8 (split_k 0), which fits 1 x 1024 x 8192 in one wave
WGMMA_FP8 = "gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n64.wg.sm90a"


def test_a_candidate_timed_at_the_automatic_split_stands_for_a_split_k_0_row(tool, tmp_path, capsys):
    """tools/tune.py times ":0" as the automatic split; 1 x 1008 x 12288 has no exact row, so the table's pick is the
    M <= 8 default row (split_k 0, resolved to 4 for 63 N tiles, below the bulk-ring rows' edge of 64 CTAs at this K)
    and its ":0" time is the pick's time."""
    if not (ROOT / "build/kernels/sm_90a" / DEFAULT_FP8 / "result.json").exists():
        pytest.skip("needs the sm_90a kernel build")
    log = tmp_path / "tune.log"
    log.write_text(
        f"     1   1008  12288 *{WGMMA_FP8}  0  9.0  3.7  1870  1.5  0.00e+00\n"
        f"     1   1008  12288  {DEFAULT_FP8}  0  10.0  3.4  1680  1.3  0.00e+00\n")
    assert tool.main([str(log), "--gain", "1.02"]) == 0
    printed = capsys.readouterr().out
    assert f"table {DEFAULT_FP8}:4 (default) 10.0" in printed
    assert "1.111 MERGE" in printed


def test_several_tuned_rows_for_one_key_leave_the_fastest(tool, tmp_path):
    """Two plan steps over the same shape append a winner each to tuned.csv: the merge file keeps one row per
    dispatch key, the fastest, wherever it stands in the file."""
    log, tuned = write_case(tmp_path, 22.0)
    with open(tuned, "a") as f:
        f.write(f"sm_90a,gemm_a8w8,fp8_e4m3fn,bf16,1,10240,8192,{PICK},2,23.5,7.1,3489\n")
    out = tmp_path / "winners.csv"
    assert tool.main([str(log), "--gain", "1.02", "--tuned", str(tuned), "--out", str(out)]) == 0
    rows = out.read_text().splitlines()[1:]
    assert [r.split(",")[7:10] for r in rows] == [[OTHER, "1", "22.0"]]


def test_rows_of_one_bucket_timed_at_different_m_keep_the_largest_m(tool):
    """M = 768 and 1024 share the bucket 1024: the faster M = 768 time must not displace the M = 1024 winner
    (the M a row was timed at comes from its TFLOP/s and us)."""
    k1024 = ["sm_90a", "gemm_a16w16", "bf16", "bf16", "1024", "2112", "7168", "t256x64", "1", "42.5", "729.6", "1160"]
    k768 = ["sm_90a", "gemm_a16w16", "bf16", "bf16", "1024", "2112", "7168", "t128x128", "1", "36.6", "634.9", "1216"]
    assert abs(tool.measured_m(k1024) - 1024) < 4 and abs(tool.measured_m(k768) - 768) < 4  # TFLOP/s to 0.1
    assert [r[7] for r in tool.fastest_per_key([k1024, k768])] == ["t256x64"]
    assert [r[7] for r in tool.fastest_per_key([k768, k1024])] == ["t256x64"]


def test_a_tuned_row_records_the_split_its_candidate_ran_at(tool):
    """tools/tune.py writes a winner timed at ":0" with the split this build's automatic rule ran it at, so that
    a later change of the rule does not move a measured row."""
    import tune
    base = dict(arch="sm_90a", op="gemm_a8w8", in_dtype="fp8_e4m3fn", out_dtype="bf16", M=1, N=1024, kernel=OTHER)
    assert tune.measured_split({**base, "K": 4096, "split_k": 0}) == 1   # bulk ring at K <= 4096: unsplit
    assert tune.measured_split({**base, "K": 8192, "split_k": 0}) == 3   # 64 tiles: 192 CTAs
    assert tune.measured_split({**base, "K": 8192, "split_k": 2}) == 2   # an explicit split stands


SW_BF16 = "gemm_a16w16.bf16.bf16.t128x64x64.sk8.sw.sm90a"
TILE_BF16 = "gemm_a16w16.bf16.bf16.t64x128x64.sm90a"


def tune_log(tmp_path, lines):
    """A tools/tune.py log of (M, N, K, kernel, split_k, us, mark) lines (mark "*": the shape's best); skips the test
    unless the named kernels are built (default_order.py reads their tiles from the build)."""
    kernels = {line[3] for line in lines}
    if not all((ROOT / "build/kernels/sm_90a" / k / "result.json").exists() for k in kernels):
        pytest.skip("needs the sm_90a kernel build (python tools/build_kernels.py --arch sm_90a)")
    log = tmp_path / "tune.log"
    log.write_text("".join(f"  {M:4d} {N:6d} {K:6d} {mark or ' '}{kernel}  {split}  {us}  0 0 0 0\n"
                           for M, N, K, kernel, split, us, mark in lines))
    return log


def test_default_order_scores_each_order_through_the_production_lookup(tmp_path, capsys):
    """tools/default_order.py: a .sw row first answers 96 x 4096 (64 tiles, one wave) and gives way to the tile
    kernel at 96 x 20480 (320 tiles); the tile kernel alone loses 2x on the first shape."""
    import default_order
    log = tune_log(tmp_path, [(96, 4096, 4096, TILE_BF16, 1, 20.0, ""), (96, 4096, 4096, SW_BF16, 1, 10.0, "*"),
                              (96, 20480, 4096, TILE_BF16, 1, 30.0, "*"), (96, 20480, 4096, SW_BF16, 1, 40.0, "")])
    assert default_order.main([str(log), "--op", "gemm_a16w16", "--m", "65-128", "--bucket", "128",
                               "--order", "t64x128x64", "--order", "t128x64x64.sk8.sw:0,t64x128x64:1",
                               "--search", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["1.414", "n=2", "miss=0"] and lines[0].endswith("t64x128x64:1")
    assert lines[1].split()[:3] == ["1.000", "n=2", "miss=0"]
    assert lines[2].split()[0] == "1.000" and "t128x64x64.sk8.sw:0,t64x128x64:1" in lines[2]  # the search's best


RING_BF16 = "gemm_splitk_decode.a16w16.bf16.bf16.m16n16.w8.bk3.np.sm90a"
SW64_BF16 = "gemm_a16w16.bf16.bf16.t64x32x64.sk8.sw.sm90a"


def test_default_order_names_decode_kernels_by_their_short_name(tmp_path, capsys):
    """tools/default_order.py takes a decode kernel by the part after `gemm_splitk_decode.<op>.<in>.<out>.` (the M = 9..16
    bulk-ring rows): at 16 x 1536 x 4096 (96 CTAs at split 1) the ring row answers; at 16 x 30720 x 2048 nothing fits and
    the list falls back to its first tile kernel. A name that is no built kernel is an error, not a row left out."""
    import default_order
    log = tune_log(tmp_path, [(16, 1536, 4096, RING_BF16, 1, 7.0, "*"), (16, 1536, 4096, SW64_BF16, 5, 9.0, ""),
                              (16, 30720, 2048, RING_BF16, 1, 90.0, ""), (16, 30720, 2048, SW64_BF16, 1, 30.0, "*")])
    assert default_order.main([str(log), "--op", "gemm_a16w16", "--m", "9-16", "--bucket", "16", "--detail",
                               "--order", "m16n16.w8.bk3.np:1,t64x32x64.sk8.sw:0"]) == 0
    out = capsys.readouterr().out
    assert out.split()[:3] == ["1.000", "n=2", "miss=0"], out
    assert "16x1536x4096: 1.00 (m16n16.w8.bk3.np:1)" in out and "16x30720x2048: 1.00 (t64x32x64.sk8.sw:1)" in out
    with pytest.raises(SystemExit, match="no built kernel named m16n16.w9"):
        default_order.main([str(log), "--op", "gemm_a16w16", "--m", "9-16", "--bucket", "16", "--order", "m16n16.w9:1"])


def test_fallback_probe_scores_the_fullest_and_cheapest_waves_against_the_widest_tile(tmp_path, capsys):
    """tools/probes/fallback_rule.py: at 1024 x 5120 the widest bf16 tile runs 160 tiles (61% of two waves), t128x192 216
    (82%), t128x160 256 (97%, 15 points more than the wider t128x192: past the 10-point margin): the greedy rule takes
    t128x160, and so does the cost (2 waves x 160 columns against 3 x 128, 2 x 192, 2 x 256); at 4096 x 20480 the
    widest tile's waves are 97% full and it stays."""
    sys.path.insert(0, str(ROOT / "tools" / "probes"))
    import fallback_rule
    t128, t192, t160, t256 = fallback_rule.TILE_ROWS["gemm_a16w16"]
    times = {(1024, 5120): {t128: 60.0, t192: 50.0, t160: 45.0, t256: 70.0},
             (4096, 20480): {t128: 900.0, t192: 880.0, t160: 990.0, t256: 800.0}}
    log = tmp_path / "tune.log"
    log.write_text("".join(f"  {M}  {N}  4096  {k}.sm90a  1  {us}  0 0 0 0\n"
                           for (M, N), t in times.items() for k, us in t.items()))
    fallback_rule.main([str(log)])
    out = capsys.readouterr().out.splitlines()
    assert any(line.split()[:3] == ["gemm_a16w16", "1024", "5120"] and "t128x160x64" in line for line in out)
    assert not any(line.split()[:2] == ["gemm_a16w16", "4096"] for line in out)
    widest, fullest, cheapest = (next(line for line in out if line.startswith(name))
                                 for name in ("last row", "fullest waves", "cheapest waves"))
    assert "2 shapes: 1.247x" in widest    # sqrt(70 / 45 * 800 / 800)
    assert "2 shapes: 1.000x" in fullest and "2 shapes: 1.000x" in cheapest
    # with a margin of 20 points t128x160 (15 points fuller) does not displace t128x192
    fallback_rule.main(["--margin", "0.2", str(log)])
    assert any("t128x192x64" in line for line in capsys.readouterr().out.splitlines() if " 1024 " in line)
