"""ROCm launch path of the built flygemm library, on a machine without AMD GPUs.

A stub HIP runtime (tests/stub_hip/stub_amdhip64.c, compiled here) is loaded through
FLYGEMM_HIP_LIBRARY. torch.ops.flygemm_testing.rocm_launch_probe loads and launches a kernel
record with fake device pointers; the stub logs every module load, function lookup and launch.
Each scenario runs in a fresh process (the HIP library and the modules are process-global).

Checks: the device arch comes from the stub; the code object loaded is the one for that arch
(and a code object for another arch is rejected); the module is loaded once per device; grid,
block, dynamic LDS and the kernarg bytes follow the kernel's tile config for several shapes,
ragged M included; argument validation; the error without libamdhip64."""

import json
import os

import pytest

import rocm_testlib as rt

torch = pytest.importorskip("torch")


def _kernels():
    try:
        import flygemm
    except ImportError as exc:
        pytest.skip(f"flygemm extension not built: {exc}")
    ops = torch.ops.flygemm_testing
    if not hasattr(ops, "rocm_kernels"):
        lib = flygemm.library_path() if hasattr(flygemm, "library_path") else None
        if lib and rt.embedded_exports(lib):
            pytest.fail("the flygemm library embeds ROCm kernels but lacks csrc/rocm_runtime.cpp's test ops")
        pytest.skip("flygemm library built without csrc/rocm_runtime.cpp and without ROCm kernels")
    kernels = json.loads(ops.rocm_kernels())
    if not kernels:
        pytest.skip("no ROCm kernels in this build")
    return kernels


@pytest.fixture(scope="module")
def kernels():
    return _kernels()


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    return rt.build_stub(tmp_path_factory.mktemp("stub_hip"))


def _ref(k):
    """Probe reference of a record: name@arch (names may repeat across arches)."""
    return f"{k['name']}@{k['arch']}"


def _family(kernels, arch, family="gemm_a16w16"):
    return [k for k in kernels if k["arch"] == arch and k["family"] == family]


CASES = [(1, 64, 64), (7, 4096, 4096), (129, 256, 128), (1000, 1024, 520), (4096, 4096, 4096)]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_device_arch_from_stub(stub, tmp_path, arch, kernels):
    out = rt.run_probes("torch", rt.stub_env(stub, tmp_path / "log", arch), [])
    assert out["arch"] == arch


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_gemm_a16w16_launch_geometry(stub, tmp_path, arch, kernels):
    ks = _family(kernels, arch)
    if not ks:
        pytest.skip(f"no gemm_a16w16 kernels for {arch} in this build")
    log = tmp_path / "stub.jsonl"
    per_kernel = [[(M, N, K) for M, N, K in CASES
                   if N % k["requires_n_multiple"] == 0 and K % k["requires_k_multiple"] == 0] for k in ks]
    probes = [(_ref(k), M, N, K, 1) for k, cases in zip(ks, per_kernel) for M, N, K in cases]
    out = rt.run_probes("torch", rt.stub_env(stub, log, arch), probes)  # one process: modules stay loaded
    assert out["arch"] == arch
    assert out["results"] == ["ok"] * len(probes), out["results"]
    entries = [e for e in rt.read_log(log) if e["call"].startswith("hipModule")]
    # Every record has its own module; they are loaded in probe order, at the first launch.
    module_ids = [e["module"] for e in entries if e["call"] == "hipModuleLoadData"]
    assert len(module_ids) == len(ks), "each kernel's module must be loaded exactly once"
    for k, cases, mid in zip(ks, per_kernel, module_ids):
        mine = [e for e in entries if e.get("module") == mid]
        rt.check_gemm_a16w16_launches(mine, k, arch, cases)
        # The code object handed to HIP is the one for this arch, as the device reports it.
        (load,) = [e for e in mine if e["call"] == "hipModuleLoadData"]
        info = rt.code_object_info(open(load["file"], "rb").read())
        assert info["mach"] == arch
        assert info["metadata"]["amdhsa.target"].split("-")[-1].split(":")[0] == arch


def test_code_object_for_other_arch_is_rejected(stub, tmp_path, kernels):
    for dev_arch, obj_arch in (("gfx942", "gfx950"), ("gfx950", "gfx942")):
        ks = _family(kernels, obj_arch)
        if not ks:
            continue
        out = rt.run_probes("torch", rt.stub_env(stub, tmp_path / f"{dev_arch}.log", dev_arch),
                            [(_ref(ks[0]), 16, 64, 64, 1)])
        assert "hipErrorNoBinaryForGpu" in out["results"][0], out


def test_argument_validation(stub, tmp_path, kernels):
    ks = _family(kernels, "gfx942") or _family(kernels, "gfx950")
    if not ks:
        pytest.skip("no gemm_a16w16 ROCm kernels")
    k = ks[0]
    log = tmp_path / "log.jsonl"
    out = rt.run_probes("torch", rt.stub_env(stub, log, k["arch"]), [
        (_ref(k), 16, 40, 64, 1),
        (_ref(k), 16, 64, 60, 1),
        (_ref(k), 16, 64, 64, 2),
        (_ref(k), 0, 64, 64, 1),
        ("no.such.kernel", 16, 64, 64, 1),
    ])
    r = out["results"]
    assert "N must be a multiple of 16" in r[0]
    assert "K must be a multiple of 8" in r[1]
    assert "split_k must be 1" in r[2]
    assert r[3] == "ok"
    assert "no kernel named" in r[4]
    assert not [e for e in rt.read_log(log) if e["call"] == "hipModuleLaunchKernel"]


def test_without_libamdhip64(tmp_path, kernels):
    k = kernels[0]
    env = dict(os.environ, FLYGEMM_HIP_LIBRARY=str(tmp_path / "absent" / "libamdhip64.so"))
    out = rt.run_probes("torch", env, [(_ref(k), 16, 64, 64, 1)])
    msg = "flygemm: ROCm kernel called but libamdhip64.so could not be loaded: "
    assert out["results"][0].startswith(msg), out
    assert out["arch"].startswith("error: " + msg)


def test_probe_refuses_a_real_hip_runtime(tmp_path, kernels):
    """The probe passes fake pointers, so it must never reach a real HIP runtime: a HIP library
    without the stub's marker symbol is refused."""
    import shutil
    import subprocess

    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "fake.c"
    src.write_text("int hipGetDevice(int* d) { *d = 0; return 0; }\n")
    lib = tmp_path / "libamdhip64.so"
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    out = rt.run_probes("torch", dict(os.environ, FLYGEMM_HIP_LIBRARY=str(lib)), [(_ref(kernels[0]), 16, 64, 64, 1)])
    assert "only against the stub" in out["results"][0]
