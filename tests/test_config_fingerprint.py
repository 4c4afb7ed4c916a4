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
    for name in ("sm_90a.kernels.csv", "sm_90a.csv", "sm_90a.twins.csv"):
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


def test_dispatch_only_params_leave_the_family_and_the_build_hash_alone():
    """area_speed (tools/build_kernels.py DISPATCH_PARAMS) goes to the registry's metadata, not to the family: adding or
    re-measuring it must not rebuild the kernel, and a value out of range is refused with the kernel's name."""
    import pytest
    bk = load_build_kernels()
    params = bk.parse_params("overlap=0;area_speed=865")
    assert bk.split_dispatch_params("sm_90a", "k", params) == {"area_speed": 865} and params == {"overlap": 0}
    spec = {"arch": "sm_90a", "family": "gemm_a8w8_blockscale", "name": "k", "params": params}
    assert bk.spec_hash(dict(spec, dispatch={"area_speed": 865})) == bk.spec_hash(spec)
    assert bk.spec_hash(dict(spec, params={"overlap": 1})) != bk.spec_hash(spec)
    for bad in ("area_speed=0", "area_speed=fast", "area_speed=5000"):
        with pytest.raises(SystemExit, match="kernel k: area_speed must be an integer in 1..4000"):
            bk.split_dispatch_params("sm_90a", "k", bk.parse_params(bad))
    read = {s["name"]: s for s in bk.read_kernel_specs("sm_90a")}
    serial96 = read["gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x96x128.serial.sm90a"]
    assert serial96["dispatch"] == {"area_speed": 865} and "area_speed" not in serial96["params"]
    assert "dispatch" not in read["gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a"]


def test_fingerprint_follows_the_twins_table(tmp_path):
    """sm_90a.twins.csv adds kernels and rows to the registry, so editing it makes the tree stale too."""
    bk = load_build_kernels()
    for name in ("sm_90a.kernels.csv", "sm_90a.csv", "sm_90a.twins.csv"):
        (tmp_path / name).write_text((ROOT / "kernels" / "configs" / name).read_text())
    base = bk.configs_fingerprint("sm_90a", tmp_path)
    assert base == bk.configs_fingerprint("sm_90a", ROOT / "kernels" / "configs")
    (tmp_path / "sm_90a.twins.csv").write_text((ROOT / "kernels" / "configs" / "sm_90a.twins.csv").read_text()
                                               + "gemm_a8w8,fp8_e4m3fn,bf16,fp8_e4m3fn,fp16\n")
    assert bk.configs_fingerprint("sm_90a", tmp_path) != base


def _kernel_shipping(arch_dir, name, lib_bytes):
    (arch_dir / name).mkdir(parents=True)
    (arch_dir / name / "librt.a").write_bytes(lib_bytes)
    return {"name": name}, {"objects": [], "link_libs": ["librt.a"]}


def test_runtime_library_is_kept_once_per_arch(tmp_path):
    bk = load_build_kernels()
    arch_dir = tmp_path / "sm_90a"
    built = [_kernel_shipping(arch_dir, n, b"runtime v1") for n in ("k1", "k2")]
    assert bk.hoist_link_libs(arch_dir, built) == ["sm_90a/_libs/librt.a"]
    assert (arch_dir / "_libs" / "librt.a").read_bytes() == b"runtime v1"
    assert not any((arch_dir / n / "librt.a").exists() for n in ("k1", "k2"))
    # a later run over cached kernels (their copies already moved) finds the shared one
    assert bk.hoist_link_libs(arch_dir, built) == ["sm_90a/_libs/librt.a"]
    assert bk.prune_stale_kernels(arch_dir, {"k1", "k2"}) == []
    assert (arch_dir / "_libs" / "librt.a").exists()


def test_runtime_library_conflicts_and_losses_are_errors(tmp_path):
    import pytest
    bk = load_build_kernels()
    arch_dir = tmp_path / "sm_90a"
    built = [_kernel_shipping(arch_dir, "k1", b"runtime v1"), _kernel_shipping(arch_dir, "k2", b"runtime v2")]
    with pytest.raises(SystemExit, match="differs"):
        bk.hoist_link_libs(arch_dir, built)
    (arch_dir / "_libs" / "librt.a").unlink()
    (arch_dir / "k2" / "librt.a").unlink()
    with pytest.raises(SystemExit, match="missing"):
        bk.hoist_link_libs(arch_dir, built)
