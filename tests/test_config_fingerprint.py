"""The kernel tree records which config tables its registry (dispatch rows included) was made from;
setup.py refuses to link a tree whose tables have changed since (a stale registry.cpp would keep the
old dispatch rows without a word)."""
import pathlib
from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_build_kernels():
    return load_source("tools/build_kernels.py", "flygemm_build_kernels")


def test_fingerprint_follows_both_tables(tmp_path):
    bk = load_build_kernels()
    for name in ("sm_90a.kernels.csv", "sm_90a.csv"):
        (tmp_path / name).write_text((ROOT / "kernels" / "configs" / name).read_text())
    base = bk.configs_fingerprint("sm_90a", tmp_path)
    assert base == bk.configs_fingerprint("sm_90a", ROOT / "kernels" / "configs")
    for name in ("sm_90a.kernels.csv", "sm_90a.csv"):
        original = (tmp_path / name).read_text()
        (tmp_path / name).write_text(original + "# edited\n")
        assert bk.configs_fingerprint("sm_90a", tmp_path) != base, name
        (tmp_path / name).write_text(original)
    assert bk.configs_fingerprint("sm_90a", tmp_path) == base


def test_stale_kernel_builds_are_pruned_and_listed_ones_kept(tmp_path):
    bk = load_build_kernels()
    for name in ("kept", "dropped"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "hash.txt").write_text("x")
    (tmp_path / "not_a_kernel").mkdir()          # no hash stamp: left alone
    (tmp_path / "registry.cpp").write_text("")
    assert bk.prune_stale_kernels(tmp_path, {"kept"}) == ["dropped"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "not_a_kernel", "registry.cpp"]
