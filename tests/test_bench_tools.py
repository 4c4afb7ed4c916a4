"""The benchmark's shape sets and the decode-sweep plot tool (no GPU needed)."""
import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

from flygemm import bench

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_sweep_shapes_cover_every_model_layer_and_m():
    for nks in bench.SWEEP_MODELS.values():
        for n, k in nks:
            for m in bench.SWEEP_M:
                assert (m, n, k) in bench.SWEEP_SHAPES
    assert len(bench.SWEEP_SHAPES) == len(set(bench.SWEEP_SHAPES))


def _fake_run(tmp_path, drop=None):
    """Rows whose times make flygemm reach 2000 GB/s on every layer and torch 1000."""
    rows = []
    for m, n, k in bench.SWEEP_SHAPES:
        if (m, n, k) == drop:
            continue
        nbytes = m * k + n * k + 2 * m * n
        rows.append({"op": "gemm_a8w8", "variant": "per_tensor", "M": m, "N": n, "K": k,
                     "flygemm_us": nbytes / 2000e3, "torch_us": nbytes / 1000e3, "extra": {"bytes": nbytes}})
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"device": "test", "torch": "x", "copy_gbps": 4000.0, "rows": rows}))
    return path


def _load_tool():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import plot_sweep
    finally:
        sys.path.pop(0)
    return plot_sweep


def test_model_bandwidth_is_bytes_over_summed_time(tmp_path):
    tool = _load_tool()
    rows = json.loads(_fake_run(tmp_path).read_text())["rows"]
    bw = tool.model_bandwidth(rows, "Llama-3-70B", "gemm_a8w8", "per_tensor")
    assert sorted(bw) == list(bench.SWEEP_M)
    for fly, ref in bw.values():
        assert math.isclose(fly, 2000.0) and math.isclose(ref, 1000.0)


def test_incomplete_model_at_one_m_is_left_out(tmp_path):
    tool = _load_tool()
    n, k = bench.SWEEP_MODELS["DeepSeek-V3"][0]
    rows = json.loads(_fake_run(tmp_path, drop=(4, n, k)).read_text())["rows"]
    bw = tool.model_bandwidth(rows, "DeepSeek-V3", "gemm_a8w8", "per_tensor")
    assert 4 not in bw and 8 in bw


def test_plot_tool_writes_png_and_table(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sweep.png"
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "plot_sweep.py"), str(_fake_run(tmp_path)),
                          "--png", str(png)], capture_output=True, text=True, check=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| gemm_a8w8 | per_tensor | Llama-3-70B | 2000 / 1000 (50%)" in res.stdout


def test_call_spans_take_each_calls_first_start_to_last_end():
    # two repetitions of [flush (1 activity), fn (2 activities: pass 1 + reduce)]
    acts = [(0, 10), (12, 20), (25, 30), (40, 50), (52, 60), (61, 75)]
    assert bench.call_spans_ns(acts, n_flush=1, n_fn=2, reps=2) == [18, 23]


def test_call_spans_refuse_a_profile_that_does_not_split():
    acts = [(0, 10), (12, 20), (25, 30), (40, 50), (52, 60)]  # one activity missing
    assert bench.call_spans_ns(acts, n_flush=1, n_fn=2, reps=2) == []
    assert bench.call_spans_ns([], n_flush=1, n_fn=0, reps=0) == []


def test_model_bandwidth_from_kernel_spans(tmp_path):
    tool = _load_tool()
    rows = json.loads(_fake_run(tmp_path).read_text())["rows"]
    for r in rows:  # kernel spans half the event times: twice the bandwidth
        r["extra"].update(flygemm_kernel_us=r["flygemm_us"] / 2, torch_kernel_us=r["torch_us"] / 2)
    bw = tool.model_bandwidth(rows, "Llama-3-70B", "gemm_a8w8", "per_tensor", kernel_time=True)
    for fly, ref in bw.values():
        assert math.isclose(fly, 4000.0) and math.isclose(ref, 2000.0)
    for r in rows:  # a run without kernel spans has no kernel-time bandwidth
        del r["extra"]["flygemm_kernel_us"]
    assert tool.model_bandwidth(rows, "Llama-3-70B", "gemm_a8w8", "per_tensor", kernel_time=True) == {}


def _load_tools_module(name):
    from source_modules import load_source
    return load_source(f"tools/{name}.py", name)


def test_tune_passes_alternate_order_so_a_linear_drift_does_not_pick_the_winner(monkeypatch):
    """Three kernels of the same true speed timed while the 'GPU' slows down by 1 us per call:
    one forward pass ranks them in timing order; forward + reversed passes give equal means."""
    import torch
    tune = _load_tools_module("tune")
    assert tune.pass_orders(3, 1) == [[0, 1, 2]]
    assert tune.pass_orders(3, 3) == [[0, 1, 2], [2, 1, 0], [0, 1, 2]]
    monkeypatch.setattr(tune, "candidates", lambda *a, **k: [("k_a", 1), ("k_b", 1), ("k_c", 1)])
    clock = {"calls": 0}

    def drifting_time_us(fn, device, rep_ms=200.0, dirty_flush=False):
        fn()
        clock["calls"] += 1
        return 100.0 + clock["calls"]

    monkeypatch.setattr(tune.bench, "time_us", drifting_time_us)
    dev = torch.device("cpu")
    one = tune.tune_shape("gemm_a16w16", "-", 4, 32, 64, dev, torch.Generator().manual_seed(0), [1], passes=1,
                          paired=False)
    assert [r["kernel"] for r in sorted(one, key=lambda r: r["us"])] == ["k_a", "k_b", "k_c"]
    clock["calls"] = 0
    two = tune.tune_shape("gemm_a16w16", "-", 4, 32, 64, dev, torch.Generator().manual_seed(0), [1], passes=2,
                          paired=False)
    assert len({r["us"] for r in two}) == 1 and all(r["err"] < 1e-2 for r in two)



def test_paired_tuning_ranks_by_ratio_to_torch_so_drift_cannot_pick_the_winner(monkeypatch):
    """The 'GPU' slows down 5% per timed pair; k_last is truly 3% faster than the others but is timed
    last in one pass. Alone it would look slowest (higher us); paired with torch it ranks first."""
    import torch
    tune = _load_tools_module("tune")
    monkeypatch.setattr(tune, "candidates", lambda *a, **k: [("k_a", 1), ("k_b", 1), ("k_last", 1)])
    state = {"pairs": 0, "forced": None}
    real_fn = tune.flygemm.gemm_a16w16

    def spy(*args, **kwargs):  # remembers which kernel the timed call was pinned to
        state["forced"] = os.environ.get("FLYGEMM_FORCE_KERNEL", "")
        return real_fn(*args, **kwargs)

    def drifting_pair(fn_a, fn_b, device, rep_ms=400.0):
        fn_a()
        fn_b()
        state["pairs"] += 1
        slow = 1.05 ** state["pairs"]
        true_us = 97.0 if state["forced"].startswith("k_last") else 100.0
        return true_us * slow, 100.0 * slow

    monkeypatch.setattr(tune.flygemm, "gemm_a16w16", spy)
    monkeypatch.setattr(tune.bench, "time_pair_us", drifting_pair)
    monkeypatch.setattr(tune.bench, "time_us", lambda fn, device, rep_ms=200.0, dirty_flush=False: 100.0)
    rows = tune.tune_shape("gemm_a16w16", "-", 4, 32, 64, torch.device("cpu"), torch.Generator().manual_seed(0),
                           [1], passes=1, paired=True)
    assert all(r["paired"] for r in rows)
    assert max(rows, key=lambda r: r["us"])["kernel"] == "k_last"      # slowest by time...
    assert min(rows, key=tune.rank)["kernel"] == "k_last"              # ...best by paired ratio
    assert min(rows, key=tune.rank)["ratio"] == pytest.approx(100.0 / 97.0)

def test_paired_tuning_ignores_a_torch_outlier_in_one_pair(monkeypatch):
    """One pair times torch 4x slower than every other pair (seen on the H200 at M = 128: 51 vs 13 us);
    its candidate, truly the slowest, must not win on that pair's ratio."""
    import torch
    tune = _load_tools_module("tune")
    monkeypatch.setattr(tune, "candidates", lambda *a, **k: [("k_a", 1), ("k_slow", 1), ("k_b", 1)])
    state = {"forced": None}
    real_fn = tune.flygemm.gemm_a16w16

    def spy(*args, **kwargs):
        state["forced"] = os.environ.get("FLYGEMM_FORCE_KERNEL", "")
        return real_fn(*args, **kwargs)

    def pair(fn_a, fn_b, device, rep_ms=400.0):
        fn_a()
        fn_b()
        if state["forced"].startswith("k_slow"):
            return 150.0, 400.0
        return (100.0 if state["forced"].startswith("k_a") else 101.0), 100.0

    monkeypatch.setattr(tune.flygemm, "gemm_a16w16", spy)
    monkeypatch.setattr(tune.bench, "time_pair_us", pair)
    monkeypatch.setattr(tune.bench, "time_us", lambda fn, device, rep_ms=200.0, dirty_flush=False: 100.0)
    rows = tune.tune_shape("gemm_a16w16", "-", 4, 32, 64, torch.device("cpu"), torch.Generator().manual_seed(0),
                           [1], passes=1, paired=True)
    assert min(rows, key=tune.rank)["kernel"] == "k_a"
    slow = next(r for r in rows if r["kernel"] == "k_slow")
    assert slow["ratio"] == pytest.approx(100.0 / 150.0)   # the median torch time, not the outlier


def test_time_pair_runs_both_sides_and_returns_their_times_in_order():
    import time as _time
    import torch
    calls = []
    a_us, b_us = bench.time_pair_us(lambda: calls.append("a"),
                                    lambda: (calls.append("b"), _time.sleep(0.002)), torch.device("cpu"),
                                    rep_ms=40.0)
    assert "a" in calls and "b" in calls
    assert b_us > a_us and b_us >= 2000.0


class _FakeEvent:
    def __init__(self, log, **_):
        self.log = log

    def record(self):
        self.log.append("event")

    def elapsed_time(self, other):
        return 0.001


@pytest.mark.parametrize("pair", [False, True])
def test_gpu_event_loops_give_the_host_a_head_start_after_each_flush(monkeypatch, pair):
    """Every timed call's start event is queued after the L2 flush and a GPU sleep (the host's head start), so the
    events time the GPU, not a host that fell behind (twenty-eighth session: 40-60 us per call on the H200's host)."""
    import torch
    log = []
    monkeypatch.setattr(bench, "flush_l2", lambda device, dirty=False: log.append("flush"))
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append(f"sleep {cycles}"))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "Event", lambda **kw: _FakeEvent(log, **kw))
    device = torch.device("cuda")
    if pair:
        bench.time_pair_us(lambda: log.append("call"), lambda: log.append("call"), device, rep_ms=1.0)
    else:
        bench.time_us(lambda: log.append("call"), device, rep_ms=1.0)
    timed = [i for i in range(len(log) - 2) if log[i] == "event" and log[i + 1] == "call" and log[i + 2] == "event"]
    assert len(timed) >= 10
    for i in timed:
        assert log[i - 2:i] == ["flush", f"sleep {bench._HEAD_START_CYCLES}"]
    assert bench._HEAD_START_CYCLES >= 100_000   # ~50 us at the H200's clocks: more than a flush's host cost



def test_warm_l2_pairs_skip_the_flush_but_keep_the_head_start(monkeypatch):
    """tools/ab.py --warm-l2 (a diagnostic: operands that fit L2 come from it) times each call after the host's head
    start and no flush, for both kernels of the pair."""
    import torch
    log = []
    monkeypatch.setattr(bench, "flush_l2", lambda device, dirty=False: log.append("flush"))
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append(f"sleep {cycles}"))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "Event", lambda **kw: _FakeEvent(log, **kw))
    bench.time_pair_us(lambda: log.append("a"), lambda: log.append("b"), torch.device("cuda"), rep_ms=1.0,
                       warm_l2=True)
    assert "flush" not in log
    timed = [i for i in range(1, len(log) - 1) if log[i] in ("a", "b") and log[i - 1] == "event"]
    assert len(timed) >= 20
    assert all(log[i - 2] == f"sleep {bench._HEAD_START_CYCLES}" for i in timed)

def _bench_json(path, speedups):
    rows = [{"op": "gemm_a8w8", "variant": "per_tensor", "M": m, "N": 4096, "K": 4096, "device": "cuda",
             "speedup": s, "kernel": "k"} for m, s in speedups.items()]
    path.write_text(json.dumps({"rows": rows}))


def test_compare_bench_takes_the_median_run_and_relates_builds_to_the_first(tmp_path):
    _bench_json(tmp_path / "a-1.json", {128: 1.0, 1024: 0.5})
    _bench_json(tmp_path / "a-2.json", {128: 3.0, 1024: 0.5})
    _bench_json(tmp_path / "b-1.json", {128: 4.0, 1024: 1.0})
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "compare_bench.py"),
                          f"a={tmp_path}/a-*.json", f"b={tmp_path}/b-*.json"],
                         check=True, capture_output=True, text=True).stdout
    row128 = next(line for line in out.splitlines() if line.startswith("gemm_a8w8") and " 128 " in line)
    assert row128.split()[5:8] == ["2.000", "4.000", "2.000"]  # median of 1 and 3; b / a
    family = out.splitlines()[-1]
    assert "a 1.000" in family and "b 2.000" in family and "rel 2.000" in family


def test_merge_tuned_replaces_matching_rows_in_place_and_appends_the_rest(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("arch,op,in,out,m_max,N,K,kernel,split_k\n# old\n"
                     "sm_90a,op,bf16,bf16,128,64,64,old,1\nsm_90a,op,bf16,bf16,256,64,64,keep,1\n")
    tuned = tmp_path / "tuned.csv"
    tuned.write_text("arch,op,in,out,m_max,N,K,kernel,split_k\n"
                     "sm_90a,op,bf16,bf16,128,64,64,new,2\nsm_90a,op,bf16,bf16,512,64,64,added,1\n")
    subprocess.run([sys.executable, str(ROOT / "tools" / "merge_tuned.py"), str(tuned), "--table", str(table),
                    "--comment", "why"], check=True, capture_output=True)
    assert table.read_text().splitlines()[2:] == [
        "sm_90a,op,bf16,bf16,128,64,64,new,2", "sm_90a,op,bf16,bf16,256,64,64,keep,1",
        "# why", "sm_90a,op,bf16,bf16,512,64,64,added,1"]



def test_merge_tuned_keeps_the_first_row_of_a_file_without_header(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("arch,op,in,out,m_max,N,K,kernel,split_k\nsm_90a,op,bf16,bf16,128,64,64,old,1\n")
    tuned = tmp_path / "rows.csv"
    tuned.write_text("sm_90a,op,bf16,bf16,128,64,64,new,1\n")
    subprocess.run([sys.executable, str(ROOT / "tools" / "merge_tuned.py"), str(tuned), "--table", str(table)],
                   check=True, capture_output=True)
    assert table.read_text().splitlines()[1:] == ["sm_90a,op,bf16,bf16,128,64,64,new,1"]

def test_every_device_script_parses():
    """The tools/*.sh scripts only run on the GPU machine: a syntax error would cost a device call."""
    scripts = sorted(pathlib.Path(__file__).resolve().parents[1].glob("tools/*.sh"))
    assert scripts
    for script in scripts:
        res = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert res.returncode == 0, f"{script.name}: {res.stderr}"


def test_try_kernels_refuses_to_start_without_a_test_selection(tmp_path):
    """Without FLYGEMM_TRY_K it would run every GPU test of every kernel inside one device call."""
    root = pathlib.Path(__file__).resolve().parents[1]
    env = {"PATH": "/usr/bin:/bin", "OUT": str(tmp_path)}
    res = subprocess.run(["bash", str(root / "tools/gpu_try_kernels.sh")], capture_output=True,
                         text=True, env=env, timeout=60)
    assert res.returncode != 0
    assert "FLYGEMM_TRY_K" in res.stderr
    assert not (tmp_path / "check.txt").exists()


def test_pinned_bench_reports_every_candidate_once_with_its_rounds():
    """A CPU dry run of tools/pinned_bench.py (the CPU op ignores the pin): one row per candidate, the
    split_k suffix added where it was left out, one ratio per round."""
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "pinned_bench.py"), "--device", "cpu",
                          "--op", "gemm_a16w16", "--shapes", "16x32x64", "--rounds", "2",
                          "--kernels", "k.one,k.two:3"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
    assert res.returncode == 0, res.stderr
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith("gemm_a16w16")]
    assert sorted(r[3] for r in rows) == ["k.one:1", "k.two:3"]
    for r in rows:
        ratio, rounds = float(r[4]), [float(x) for x in r[6:]]
        assert len(rounds) == 2 and ratio > 0 and min(rounds) <= ratio <= max(rounds)


def test_device_env_is_shared_by_every_script_that_builds_the_extension_on_the_gpu_machine():
    root = pathlib.Path(__file__).resolve().parents[1]
    builders = [p.name for p in sorted(root.glob("tools/gpu_*.sh")) if "setup.py build_ext" in p.read_text()]
    assert builders
    for name in builders:
        assert "source tools/device_env.sh" in (root / "tools" / name).read_text(), name
    script = "source tools/device_env.sh; echo $FLYGEMM_SKIP_KERNEL_BUILD $FLYGEMM_ARCHS $PYTHONPATH"
    out = subprocess.run(["bash", "-c", script], cwd=root, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout.split()
    assert out == ["1", "sm_90a", str(root / "python")]
    out = subprocess.run(["bash", "-c", script], cwd=root, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "FLYGEMM_ARCHS": "sm_90a,gfx942"}).stdout.split()
    assert out[1] == "sm_90a,gfx942"


def test_kernel_time_tuning_ranks_by_kernel_time_and_match_filters(monkeypatch):
    """tools/tune.py --kernel-time: every candidate (and torch) is timed with bench.kernel_time_us,
    unpaired, ranked by that time; --match keeps only the candidates whose name contains it."""
    import torch
    tune = _load_tools_module("tune")
    monkeypatch.setattr(tune, "candidates", lambda *a, **k: [("dec.k_a", 1), ("dec.k_b", 1), ("big.k_c", 1)])
    state = {"forced": None}
    real_fn = tune.flygemm.gemm_a16w16

    def spy(*args, **kwargs):
        state["forced"] = os.environ.get("FLYGEMM_FORCE_KERNEL", "")
        return real_fn(*args, **kwargs)

    def kernel_time(fn, device, reps=50):
        state["forced"] = None
        fn()
        return {"dec.k_a:1": 9.0, "dec.k_b:1": 7.0, "big.k_c:1": 5.0}.get(state["forced"], 8.0)

    monkeypatch.setattr(tune.flygemm, "gemm_a16w16", spy)
    monkeypatch.setattr(tune.bench, "kernel_time_us", kernel_time)
    monkeypatch.setattr(tune.bench, "time_pair_us", lambda *a, **k: pytest.fail("kernel time is unpaired"))
    rows = tune.tune_shape("gemm_a16w16", "-", 4, 32, 64, torch.device("cpu"), torch.Generator().manual_seed(0),
                           [1], passes=1, paired=True, kernel_time=True, match="dec.")
    assert sorted(r["kernel"] for r in rows) == ["dec.k_a", "dec.k_b"]
    best = min(rows, key=tune.rank)
    assert best["kernel"] == "dec.k_b" and not best["paired"]
    assert best["ratio"] == pytest.approx(8.0 / 7.0)  # torch's kernel time over the candidate's


def test_tune_ranks_an_unmeasured_candidate_last():
    """A candidate whose time came back NaN (e.g. kernel time not recorded) must not win the shape."""
    tune = _load_tools_module("tune")
    rows = [{"paired": False, "us": float("nan"), "ratio": float("nan")},
            {"paired": False, "us": 30.5, "ratio": float("nan")},
            {"paired": False, "us": 31.0, "ratio": float("nan")}]
    assert min(rows, key=tune.rank)["us"] == 30.5
    paired = [{"paired": True, "us": 1.0, "ratio": float("nan")}, {"paired": True, "us": 2.0, "ratio": 1.1}]
    assert min(paired, key=tune.rank)["ratio"] == 1.1


def test_ab_table_side_calls_the_op_unpinned_and_kernel_side_pins_it(monkeypatch):
    """tools/ab.py: `table` runs the op as the dispatch table would (no FLYGEMM_FORCE_KERNEL during the
    call); kernel:split_k sets it for exactly the duration of the call."""
    ab = _load_tools_module("ab")
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL", raising=False)
    seen = []

    def op(x):
        seen.append(os.environ.get("FLYGEMM_FORCE_KERNEL"))
        return x

    assert ab.pinned(op, (1,), ab.TABLE)() == 1
    assert ab.pinned(op, (2,), "k.sm90a:3")() == 2
    assert seen == [None, "k.sm90a:3"]
    assert "FLYGEMM_FORCE_KERNEL" not in os.environ
    # `torch`: the problem's torch peer, the op not called; a shape without a peer says so
    assert ab.pinned(op, (3,), ab.TORCH, peer=lambda: "peer")() == "peer" and len(seen) == 2
    with pytest.raises(ValueError, match="no torch peer"):
        ab.pinned(op, (3,), ab.TORCH)


def test_ab_pairs_file_times_each_line_and_single_mode_needs_all_four_args(tmp_path, monkeypatch, capsys):
    """tools/ab.py --pairs: one interleaved A/B per `op variant MxNxK A B` line (comments skipped), each printed with
    its two picks; without --pairs, --op / --shapes / --a / --b are all required."""
    ab = _load_tools_module("ab")
    calls = []
    warm = []
    monkeypatch.setattr(ab, "time_ab", lambda op, variant, M, N, K, a, b, rounds, device, gen, fresh, warm_l2: (
        calls.append((op, variant, M, N, K, a, b, fresh)), warm.append(warm_l2)) and "1.0 2.0  2.000 -> A")
    pairs = tmp_path / "p.pairs"
    pairs.write_text("# a comment\ngemm_a8w8 per_tensor 96x4096x1024 k1:1 k2:3\n\n"
                     "gemm_a16w16 - 256x2112x7168 table k3:1   # a note after the pair\n")
    assert ab.main(["--pairs", str(pairs), "--rounds", "1", "--device", "cpu"]) == 0
    # fresh tensors every round unless --same-tensors
    assert calls == [("gemm_a8w8", "per_tensor", 96, 4096, 1024, "k1:1", "k2:3", True),
                     ("gemm_a16w16", "-", 256, 2112, 7168, "table", "k3:1", True)]
    calls.clear()
    assert ab.main(["--pairs", str(pairs), "--rounds", "1", "--device", "cpu", "--same-tensors"]) == 0
    assert [c[-1] for c in calls] == [False, False]
    assert warm == [False] * 4
    assert ab.main(["--pairs", str(pairs), "--rounds", "1", "--device", "cpu", "--warm-l2"]) == 0
    assert warm[4:] == [True, True]
    out = capsys.readouterr().out
    assert "A = k1:1  B = k2:3" in out and "A = table  B = k3:1" in out
    with pytest.raises(SystemExit):
        ab.main(["--op", "gemm_a8w8", "--shapes", "1x2x3", "--a", "k1:1"])


def test_ab_pairs_sweep_offers_every_unsplit_kernel_of_the_family_but_the_pick(monkeypatch):
    """tools/ab_pairs.py --sweep: the op's own tile family only (input dtype, bf16 out; not decode / other outputs), each
    kernel at split 1 against the table, the current pick left out only when it already runs unsplit."""
    monkeypatch.syspath_prepend(str(ROOT / "tools"))  # its sibling imports, as when run from tools/
    ap = _load_tools_module("ab_pairs")
    spec = lambda name, family="gemm_a16w16", in_dtype="bf16", out="bf16": (
        name, {"family": family, "in_dtype": in_dtype, "out_dtype": out})
    specs = dict([spec("t128x80"), spec("t128x128"), spec("t64x64.sw"), spec("t128x128.fp16out", out="fp16"),
                  spec("decode.m8n32", family="gemm_splitk_decode"), spec("fp16in", in_dtype="fp16")])
    picks = {(512, 2112, 7168): "t128x128:1", (256, 2112, 7168): "t64x64.sw:2"}
    lines = ap.sweep_lines("gemm_a16w16", "-", list(picks), specs, lambda M, N, K: picks[(M, N, K)])
    assert [ln.split("  #")[0] for ln in lines] == [
        "gemm_a16w16 - 512x2112x7168 table t128x80:1", "gemm_a16w16 - 512x2112x7168 table t64x64.sw:1",
        "gemm_a16w16 - 256x2112x7168 table t128x128:1", "gemm_a16w16 - 256x2112x7168 table t128x80:1",
        "gemm_a16w16 - 256x2112x7168 table t64x64.sw:1"]
    assert lines[0].endswith("# table t128x128:1")
    with pytest.raises(SystemExit):  # one of --rev / --sweep
        ap.main(["--op", "gemm_a8w8", "--shapes", "1x2x3"])
    with pytest.raises(SystemExit):
        ap.main(["--op", "gemm_a8w8", "--shapes", "1x2x3", "--rev", "HEAD", "--sweep"])


def test_ab_pairs_reads_each_ops_rows_by_its_own_input_dtype(monkeypatch):
    # --changed-rows finds an op's rows by its input dtype: the MXFP4 rows (fp4_e2m1_x2) were read as fp8 ones
    import csv
    monkeypatch.syspath_prepend(str(ROOT / "tools"))
    ap = _load_tools_module("ab_pairs")
    lines = (ROOT / "kernels" / "configs" / "sm_90a.csv").read_text().splitlines()
    rows = list(csv.DictReader(ln for ln in lines if not ln.startswith("#")))
    for op in bench.OPS:
        assert ap.in_dtype_of(op) in {r["in_dtype"] for r in rows if r["op"] == op}, op


def test_merge_tuned_m_max_moves_rows_into_another_bucket(tmp_path):
    # rows measured at M = 65..96 go to m_max 96, next to (not over) the layer's 128 row
    table = tmp_path / "t.csv"
    table.write_text("arch,op,in,out,m_max,N,K,kernel,split_k\nsm_90a,op,bf16,bf16,128,64,64,old,1\n")
    tuned = tmp_path / "rows.csv"
    tuned.write_text("arch,op,in,out,m_max,N,K,kernel,split_k\nsm_90a,op,bf16,bf16,128,64,64,new,2\n")
    subprocess.run([sys.executable, str(ROOT / "tools" / "merge_tuned.py"), str(tuned), "--table", str(table),
                    "--m-max", "96", "--comment", "M = 65..96"], check=True, capture_output=True)
    assert table.read_text().splitlines()[1:] == [
        "sm_90a,op,bf16,bf16,128,64,64,old,1", "# M = 65..96", "sm_90a,op,bf16,bf16,96,64,64,new,2"]


def test_bench_kernel_column_is_the_kernel_the_call_dispatched(monkeypatch):
    """bench_one's kernel column comes from the dispatch log of the call itself (a per-token call's row_scales row,
    not flygemm.explain's answer for the op): a call that logs through the production lookup names its pick, the
    caller's own FLYGEMM_LOG_DISPATCH comes back afterwards, and a call with no device dispatch names nothing."""
    import torch
    kernels = "k_a,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\nk_b,gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,16,16,1\n"
    rows = ("gfx942,gemm_a8w8,fp8_e4m3fnuz,bf16,128,4096,4096,k_a,1\n"
            "gfx942,gemm_a8w8.row_scales,fp8_e4m3fnuz,bf16,128,4096,4096,k_b,1\n")

    def call(op):
        return torch.ops.flygemm_testing.dispatch_lookup(kernels, rows, "gfx942", op, "fp8_e4m3fnuz", "bf16",
                                                         100, 4096, 4096, "", 0)
    monkeypatch.setenv("FLYGEMM_LOG_DISPATCH", "/nonexistent/keep-me.csv")
    out, picks = bench.run_logged(call, ("gemm_a8w8.row_scales",))
    assert out == "k_b,1,table"
    assert picks == [{"arch": "gfx942", "op": "gemm_a8w8.row_scales", "in_dtype": "fp8_e4m3fnuz", "out_dtype": "bf16",
                      "M": "100", "N": "4096", "K": "4096", "kernel": "k_b", "split_k": "1", "source": "table"}]
    assert [p["kernel"] for p in bench.run_logged(call, ("gemm_a8w8",))[1]] == ["k_a"]
    assert os.environ["FLYGEMM_LOG_DISPATCH"] == "/nonexistent/keep-me.csv"
    monkeypatch.delenv("FLYGEMM_LOG_DISPATCH")
    assert bench.run_logged(lambda: 7, ()) == (7, [])
    assert "FLYGEMM_LOG_DISPATCH" not in os.environ


def test_ab_fresh_rounds_get_new_tensors_behind_spacers_of_other_sizes(monkeypatch):
    """tools/ab.py --fresh: every round times the pair on a new problem, allocated behind a spacer whose size differs per
    round (so the operands move); without it one problem serves every round."""
    import torch
    ab = _load_tools_module("ab")
    made, spacers = [], []
    monkeypatch.setattr(ab.bench, "make_problem", lambda *a: (made.append(object()) or (made[-1],), None, 0))
    real_empty = torch.empty
    monkeypatch.setattr(ab.torch, "empty", lambda n, **kw: spacers.append(n) or real_empty(0))
    assert [p[0][0] for p in ab.round_problems("op", "-", 1, 2, 3, "cpu", None, 3, fresh=True)] == made
    assert len(set(map(id, made))) == 3 and spacers == [0, ab.SPACER_STEP, 2 * ab.SPACER_STEP]
    made.clear()
    assert len({id(p[0][0]) for p in ab.round_problems("op", "-", 1, 2, 3, "cpu", None, 3, fresh=False)}) == 1
    assert len(made) == 1


def test_ab_verdict_goes_by_the_median_of_the_per_round_ratios(monkeypatch):
    """tools/ab.py: with new tensors every round the absolute times move with the placement, so the verdict is the
    median of the rounds' B / A ratios, not a comparison of A's and B's separate medians (which would say A here)."""
    ab = _load_tools_module("ab")
    rounds = iter([(100.0, 95.0), (200.0, 190.0), (150.0, 160.0)])
    monkeypatch.setattr(ab.bench, "make_problem", lambda *a: ((), None, 0))
    monkeypatch.setattr(ab.bench, "time_pair_us", lambda fa, fb, dev, warm_l2=False: next(rounds))
    line = ab.time_ab("gemm_a8w8", "per_tensor", 1, 2, 3, "k1:1", "k2:1", 3, "cpu", None, fresh=False)
    assert "0.950 0.950 1.067  median 0.950  -> B" in line
    assert line.split()[:2] == ["150.0", "160.0"]


def test_every_kernel_a_pairs_file_names_is_built_for_its_arch():
    """tools/tune_specs/*.pairs are written offline and spent on the GPU machine: a kernel name there that no arch builds
    would fail only after a device start. Each `op variant MxNxK A B` line names `table` or kernel:split of a listed
    kernel, the split as FLYGEMM_FORCE_KERNEL takes it (csrc/device_ops.cpp): an integer, `auto` or `sk` (stream-K)."""
    listed = set()
    for kernels_csv in (ROOT / "kernels" / "configs").glob("*.kernels.csv"):
        listed |= {line.split(",")[0] for line in kernels_csv.read_text().splitlines()
                   if line.strip() and not line.startswith("#")}
    unknown = []
    for pairs in sorted((ROOT / "tools" / "tune_specs").glob("*.pairs")):
        for line in pairs.read_text().splitlines():
            fields = line.split("#")[0].split()
            if not fields:
                continue
            assert len(fields) == 5, f"{pairs.name}: {line}"
            for side in fields[3:]:
                if side in ("table", "torch"):  # tools/ab.py's table pick and torch peer
                    continue
                kernel, split = side.rsplit(":", 1)
                assert split in ("auto", "sk") or split.lstrip("-").isdigit(), f"{pairs.name}: {side}"
                if kernel not in listed:
                    unknown.append(f"{pairs.name}: {kernel}")
    assert not unknown, unknown


def test_wave_cost_model_counts_waves_times_tile_area(tmp_path):
    """tools/probes/wave_cost.py: waves of one CTA per SM x tile area, and the pairs of a tools/ab.py log it reads
    (`table` resolved to the table's kernel; the .sw tiles are not plain token tiles)."""
    from source_modules import load_source
    wc = load_source("tools/probes/wave_cost.py", "wave_cost")
    assert wc.wave_cost(600, 5120, (128, 256)) == 1 * 128 * 256      # 5 x 20 = 100 tiles: one wave
    assert wc.wave_cost(600, 5120, (128, 192)) == 2 * 128 * 192      # 5 x 27 = 135 tiles: two
    assert wc.wave_cost(150, 22016, (128, 208), sms=132) == 2 * 128 * 208
    speeds = wc.area_speeds()  # the kernels csv's area_speed params, as csrc/dispatch.cpp divides by them
    assert speeds["gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x96x128.serial"] == 0.865
    assert "gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial" not in speeds   # the reference: 1
    assert wc.wave_cost(1300, 5120, (192, 96), speed=0.865) == 3 * 192 * 96 / 0.865  # 7 x 54 = 378 tiles
    assert wc.plain_tile("gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a") == (128, 128)
    assert wc.plain_tile("gemm_a8w8.fp8_e4m3fn.bf16.t128x64x128.sk8.sw.sm90a") is None
    log = tmp_path / "ab.txt"
    log.write_text("gemm_a16w16               600   5120   5120      55.2      48.5  0.871 0.898 0.877  median 0.877  -> B"
                   "  (table: gemm_a16w16.bf16.bf16.t128x208x64.sm90a:1)  A = gemm_a16w16.bf16.bf16.t128x256x64.sm90a:1"
                   "  B = table\n")
    assert list(wc.pairs(log)) == [("gemm_a16w16", 600, 5120, "gemm_a16w16.bf16.bf16.t128x256x64.sm90a",
                                    "gemm_a16w16.bf16.bf16.t128x208x64.sm90a", 0.877)]


def test_ab_outcome_reads_table_pairs_and_scores_the_current_pick(tmp_path):
    """tools/probes/ab_outcome.py: a pair whose B was the table counts B / A where the table still answers B's kernel, 1
    where it answers A's again, and nothing (unknown) where it answers a third kernel; forced-B pairs are skipped."""
    from source_modules import load_source
    ao = load_source("tools/probes/ab_outcome.py", "ab_outcome")
    log = tmp_path / "ab.txt"
    log.write_text(
        "gemm_a8w8/per_token      1500   7168  16384     263.9     238.8  0.901 0.905 0.904  median 0.904  -> B"
        "  (table: gemm_a8w8.fp8_e4m3fn.bf16.t128x224x128.sm90a:1)  A = gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128.sm90a:1"
        "  B = table\n"
        "gemm_a16w16               600   5120   5120      55.2      48.5  0.871 0.898 0.877  median 0.877  -> B"
        "  (table: gemm_a16w16.bf16.bf16.t128x256x64.sm90a:1)  A = table  B = gemm_a16w16.bf16.bf16.t128x208x64.sm90a:1\n")
    assert list(ao.pairs(log)) == [("gemm_a8w8", "per_token", 1500, 7168, 16384, "gemm_a8w8.fp8_e4m3fn.bf16.t128x256x128.sm90a",
                                    "gemm_a8w8.fp8_e4m3fn.bf16.t128x224x128.sm90a", 0.904)]
    assert ao.outcome("b", "a", "b", 0.904) == 0.904
    assert ao.outcome("a", "a", "b", 0.904) == 1.0
    assert ao.outcome("c", "a", "b", 0.904) is None


def test_variants_option_picks_known_variants_and_makes_fp16_problems():
    """bench --variants: each op times the listed variants it knows (gemm_a16w16 '-' = bf16 and 'fp16'), the
    defaults without it; an op that knows none of them is an error; the fp16 problem is fp16 throughout."""
    import torch
    assert bench.op_variants("gemm_a16w16", None) == ("-",)
    assert bench.op_variants("gemm_a8w8", None) == ("per_tensor", "per_token")
    assert bench.op_variants("gemm_a16w16", "-,fp16,per_token") == ("-", "fp16")
    assert bench.op_variants("gemm_a8w8", "fp16,per_token") == ("per_token",)
    assert bench.op_variants("gemm_a8w8_blockscale", "fp16,per_token_fp16") == ("fp16",)
    with pytest.raises(ValueError, match="gemm_mxfp4"):
        bench.op_variants("gemm_mxfp4", "fp16")
    gen = torch.Generator().manual_seed(0)
    (a, w), peer, nbytes = bench.make_problem("gemm_a16w16", "fp16", 3, 16, 32, torch.device("cpu"), gen)
    assert a.dtype == w.dtype == torch.float16 and peer().dtype == torch.float16
    assert nbytes == 2 * (3 * 32 + 16 * 32 + 3 * 16)


@pytest.mark.parametrize("op,variant,scalars", [("gemm_a8w8", "per_tensor_fp16", 1), ("gemm_a8w8", "per_token_fp16", 3),
                                                ("gemm_a8w8_blockscale", "fp16", None)])
def test_fp16_output_variants_of_fp8_ops(op, variant, scalars):
    """bench variants "fp16" / "<scaling>_fp16" of the fp8 ops ask the op for fp16 output (bias None, out_dtype) with
    the scaling of the name; the default variants keep the four-argument call (bf16 output)."""
    import torch
    gen = torch.Generator().manual_seed(0)
    args, _, _ = bench.make_problem(op, variant, 3, 16, 256, torch.device("cpu"), gen)
    assert args[4:] == (None, torch.float16)
    if scalars is not None:
        assert args[2].numel() == scalars
    assert getattr(torch.ops.flygemm, op)(*args).dtype == torch.float16
    plain, _, _ = bench.make_problem(op, variant.replace("fp16", "").rstrip("_") or "-", 3, 16, 256,
                                     torch.device("cpu"), gen)
    assert len(plain) == 4 and getattr(torch.ops.flygemm, op)(*plain).dtype == torch.bfloat16



def test_kernel_dtype_names_cover_every_operand_and_output_dtype_of_the_kernel_lists():
    # tools/sanitize_sweep.py and tools/tune.py match kernels to problems through this table; a dtype missing from it
    # (fp4_e2m1_x2 was) makes every kernel of that dtype silently unmatched
    import csv
    names = set(bench.KERNEL_DTYPE_NAMES.values())
    root = pathlib.Path(__file__).resolve().parents[1] / "kernels" / "configs"
    seen = set()
    for path in sorted(root.glob("*.kernels.csv")):
        rows = csv.DictReader(line for line in path.read_text().splitlines() if not line.startswith("#"))
        for row in rows:
            seen |= {row["in_dtype"], row["out_dtype"]}
    assert {"fp4_e2m1_x2", "fp8_e4m3fn", "fp8_e4m3fnuz", "bf16"} <= seen
    assert seen <= names, f"kernel dtypes without a torch dtype in bench.KERNEL_DTYPE_NAMES: {sorted(seen - names)}"


def test_ptxas_info_reads_the_ptxas_lines():
    """tools/ptxas_info.py: registers, barriers, stack and spills from ptxas' own lines (the largest where several
    entry functions report), and the count of compiler-inserted wgmma waits (C7517); nothing reported: None."""
    ptxas_info = _load_tools_module("ptxas_info")
    log = ("remark[ptxas info]: ptxas output: ptxas info    : (C7517) wgmma.wait_group is injected in around line 684\n"
           "ptxas info    : Function properties for kernel_a\n"
           "ptxas         .     24 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
           "ptxas info    : Used 168 registers, used 16 barriers\n"
           "ptxas info    : Function properties for kernel_b\n"
           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 40 registers, used 1 barriers\n")
    assert ptxas_info.summarize(log) == {"registers": 168, "barriers": 16, "stack_bytes": 24, "spill_stores": 24,
                                         "spill_loads": 16, "injected_waits": 1}
    assert ptxas_info.summarize("no ptxas here")["registers"] is None
