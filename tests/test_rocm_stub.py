"""ROCm launch path of the built flygemm library, on a machine without AMD GPUs.

A stub HIP runtime (tests/stub_hip/stub_amdhip64.c, compiled here) is loaded through
FLYGEMM_HIP_LIBRARY. torch.ops.flygemm_testing.rocm_launch_probe loads and launches a kernel
record with fake device pointers; the stub logs every module load, function lookup and launch.
Each scenario runs in a fresh process (the HIP library and the modules are process-global).

Checks, for every family (gemm_a16w16, gemm_a8w8, gemm_a8w8_blockscale, gemm_splitk_decode,
gemm_mxfp): the device arch comes from the stub; the code object loaded is the one for that arch
(and a code object for another arch is rejected); the module is loaded once per device; grid,
block, dynamic LDS and the kernarg bytes (pointers, sizes, strides; gemm_a8w8: the scale pointers
and the per-row flags of every scale-kind combination, bias; gemm_mxfp: the E8M0 scale pointers,
logical K and the packed-fp4 row stride) follow the kernel's tile config for several shapes,
ragged M included; split-K: the workspace pointer, M_pad and the slices in the GEMM kernel's
kernarg and grid (slices clamped to the K tiles), and the reduce launched right after it exactly
when more than one slice runs (its grid and kernarg), never for split_k = 1;
argument validation; the error without libamdhip64."""

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


T, R, B = rt.SCALE_PER_TENSOR, rt.SCALE_PER_ROW, rt.SCALE_BLOCK
# (M, N, K, split_k[, a_scale_kind, w_scale_kind, bias]): ragged M, several split_k (one that
# does not divide the K tiles, one above the K tiles: clamped), split_k = 1 with no reduce
CASES = [(1, 64, 64, 1), (7, 4096, 4096, 3), (129, 256, 128, 1), (1000, 1024, 520, 2), (4096, 4096, 4096, 1),
         (5, 192, 1000, 16, 0, 0, True), (16, 4096, 7168, 4, 0, 0, True),
         (2048, 65536, 4096, 4)]  # 4 slices of 2048 x 65536 fp32 span 2 GiB: runs unsplit
# gemm_a8w8: every kind combination, ragged M; split-K for the fp8 records (int8 ones skip it)
CASES_A8W8 = [(1, 64, 64, 1, T, T, False), (7, 4096, 4096, 1, R, T, True), (129, 256, 128, 1, T, R, False),
              (1000, 1024, 528, 1, R, R, True), (4096, 4096, 4096, 1, R, R, False), (33, 48, 16, 1, T, T, True),
              (3, 256, 4096, 3, R, R, True), (64, 512, 1040, 5, T, R, False), (9, 64, 128, 8, R, T, True)]
CASES_BLOCKSCALE = [(1, 64, 128, 1, B, B, False), (7, 4096, 4096, 3, B, B, True), (129, 256, 200, 1, B, B, True),
                    (1000, 1024, 528, 2, B, B, False), (5, 192, 1008, 16, B, B, True)]
CASES_DECODE = [(1, 64, 64, 1), (8, 4096, 4096, 4), (3, 100, 1000, 3, 0, 0, True), (5, 2048, 7168, 1, 0, 0, True),
                (17, 64, 256, 2), (2, 8, 8, 16, 0, 0, True), (3, 102, 4096, 4)]  # last: N % 4 != 0 runs unsplit
MX = rt.SCALE_MX
# gemm_mxfp8 / gemm_mxfp4 (no split-K mode): MX scales, K % 32, ragged M, N and K tails
CASES_MX = [(1, 64, 64, 1, MX, MX, False), (7, 4096, 4096, 1, MX, MX, True), (129, 256, 160, 1, MX, MX, False),
            (1000, 1040, 1056, 1, MX, MX, True), (4097, 4096, 7168, 1, MX, MX, False), (33, 48, 32, 1, MX, MX, True)]
FAMILY_CASES = {"gemm_a16w16": CASES, "gemm_a8w8": CASES_A8W8, "gemm_a8w8_blockscale": CASES_BLOCKSCALE,
                "gemm_splitk_decode": CASES_DECODE, "gemm_mxfp": CASES_MX}
FAMILIES = tuple(FAMILY_CASES)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_device_arch_from_stub(stub, tmp_path, arch, kernels):
    out = rt.run_probes("torch", rt.stub_env(stub, tmp_path / "log", arch), [])
    assert out["arch"] == arch


def _cases_for(k, family):
    """The family's cases this record accepts: alignment, and split_k within its max_split_k."""
    return [c for c in FAMILY_CASES[family] if c[1] % k["requires_n_multiple"] == 0
            and c[2] % k["requires_k_multiple"] == 0 and c[3] <= k["max_split_k"]]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_launch_geometry(stub, tmp_path, arch, family, kernels):
    ks = _family(kernels, arch, family)
    if not ks:
        if family == "gemm_mxfp" and arch == "gfx942":
            pytest.skip("no MX kernels on gfx942 by design (docs/ROCM.md, 'MX formats')")
        pytest.skip(f"no {family} kernels for {arch} in this build")
    log = tmp_path / "stub.jsonl"
    per_kernel = [_cases_for(k, family) for k in ks]
    assert all(per_kernel), "every record must be probed"
    if any(k["max_split_k"] > 1 for k in ks):  # split-K records see split-K launches, reduce included
        assert any(rt.expected_launches(k, c)[1:] for k, cases in zip(ks, per_kernel) for c in cases)
    probes = [(_ref(k), *c) for k, cases in zip(ks, per_kernel) for c in cases]
    out = rt.run_probes("torch", rt.stub_env(stub, log, arch), probes)  # one process: modules stay loaded
    assert out["arch"] == arch
    assert out["results"] == ["ok"] * len(probes), out["results"]
    entries = [e for e in rt.read_log(log) if e["call"].startswith("hipModule")]
    # Every record has its own module; they are loaded in probe order, at the first launch.
    module_ids = [e["module"] for e in entries if e["call"] == "hipModuleLoadData"]
    assert len(module_ids) == len(ks), "each kernel's module must be loaded exactly once"
    for k, cases, mid in zip(ks, per_kernel, module_ids):
        mine = [e for e in entries if e.get("module") == mid]
        rt.check_launches(mine, k, arch, cases)
        # The code object handed to HIP is the one for this arch, as the device reports it.
        (load,) = [e for e in mine if e["call"] == "hipModuleLoadData"]
        info = rt.code_object_info(open(load["file"], "rb").read())
        assert info["mach"] == arch
        assert info["metadata"]["amdhsa.target"].split("-")[-1].split(":")[0] == arch


def test_all_families_present(kernels):
    """Every ROCm family is embedded for both arches (a build that silently dropped one would
    otherwise only skip the tests above)."""
    have = {(k["arch"], k["family"]) for k in kernels}
    for arch in ("gfx942", "gfx950"):
        if any(a == arch for a, _ in have):
            assert {(arch, f) for f in FAMILIES if f != "gemm_mxfp"} <= have, sorted(have)
    if any(a == "gfx950" for a, _ in have):
        assert ("gfx950", "gemm_mxfp") in have, sorted(have)
    assert ("gfx942", "gemm_mxfp") not in have  # gfx942 has no MX hardware


def test_split_k_records(kernels):
    """max_split_k: 16 for the fp32-accumulating records of the split-K families, 1 for int8
    (exact int32 sums) and the MX family (no split-K mode)."""
    for k in kernels:
        want = 1 if (k["family"] == "gemm_a8w8" and ".int8." in k["name"]) or k["family"] == "gemm_mxfp" else 16
        assert k["max_split_k"] == want, (k["name"], k["max_split_k"])


def test_code_object_for_other_arch_is_rejected(stub, tmp_path, kernels):
    for dev_arch, obj_arch in (("gfx942", "gfx950"), ("gfx950", "gfx942")):
        ks = _family(kernels, obj_arch)
        if not ks:
            continue
        out = rt.run_probes("torch", rt.stub_env(stub, tmp_path / f"{dev_arch}.log", dev_arch),
                            [(_ref(ks[0]), 16, 64, 64, 1)])
        assert "hipErrorNoBinaryForGpu" in out["results"][0], out


def test_gemm_a8w8_argument_validation(stub, tmp_path, kernels):
    tested = 0
    for arch in ("gfx942", "gfx950"):
        ks = _family(kernels, arch, "gemm_a8w8")
        a16 = _family(kernels, arch)
        if not ks or not a16:
            continue
        tested += 1
        fp8 = next(k for k in ks if ".int8." not in k["name"])
        int8 = next(k for k in ks if ".int8." in k["name"])
        log = tmp_path / f"{arch}.jsonl"
        out = rt.run_probes("torch", rt.stub_env(stub, log, arch), [
            (_ref(fp8), 16, 64, 64, 1, 0, T, False),       # a_scale missing
            (_ref(fp8), 16, 64, 64, 1, T, 0, False),       # w_scale missing
            (_ref(fp8), 16, 64, 64, 1, 3, T, False),       # blockscale kind is not this op's
            (_ref(fp8), 16, 64, 72, 1, T, T, False),       # K % 16
            (_ref(fp8), 16, 40, 64, 1, T, T, False),       # N % 16
            (_ref(int8), 16, 64, 4096, 2, T, T, False),    # int8 has no split-K mode
            (_ref(fp8), 16, 64, 4096, 17, T, T, False),    # more slices than max_split_k
            (_ref(int8), 16, 64, 131072, 1, T, T, False),  # int32 accumulation could overflow
            (_ref(fp8), 0, 64, 64, 1, T, T, False),        # M == 0: nothing launched
            (_ref(a16[0]), 16, 64, 64, 1, R, R, True),     # gemm_a16w16 ignores scales: 68-byte kernarg
        ])
        r = out["results"]
        assert "a_scale and w_scale are required" in r[0] and "a_scale and w_scale are required" in r[1], r
        assert "a_scale_kind must be per_tensor or per_row" in r[2], r
        assert "K must be a multiple of 16" in r[3], r
        assert "N must be a multiple of 16" in r[4], r
        assert "split_k must be 1 (int32 accumulators are exact" in r[5], r
        assert "split_k must be in [1, 16]" in r[6], r
        assert "K too large for exact int32 accumulation" in r[7], r
        assert r[8] == "ok" and r[9] == "ok", r
        (launch,) = [e for e in rt.read_log(log) if e["call"] == "hipModuleLaunchKernel"]
        assert launch["kernarg_size"] == rt.kernarg_size("gemm_a16w16") == 68
        assert rt.decode_kernarg("gemm_a16w16", launch["kernarg"])["bias"] == rt.PROBE_BIAS
    if not tested:
        pytest.skip("no gemm_a8w8 ROCm kernels")


def test_gemm_mxfp_argument_validation(stub, tmp_path, kernels):
    ks = _family(kernels, "gfx950", "gemm_mxfp")
    if not ks:
        pytest.skip("no gemm_mxfp ROCm kernels")
    fp8 = next(k for k in ks if ".fp8_e4m3fn." in k["name"])
    fp4 = next(k for k in ks if ".fp4_e2m1_x2." in k["name"])
    log = tmp_path / "mx.jsonl"
    out = rt.run_probes("torch", rt.stub_env(stub, log, "gfx950"), [
        (_ref(fp8), 16, 64, 64, 1, 0, MX, False),     # a_scale missing
        (_ref(fp4), 16, 64, 64, 1, MX, 0, False),     # w_scale missing
        (_ref(fp8), 16, 64, 64, 1, T, T, False),      # per-tensor fp32 scales are not MX scales
        (_ref(fp4), 16, 64, 48, 1, MX, MX, False),    # K % 32 (fp4: 24 bytes would pass the vector check)
        (_ref(fp8), 16, 40, 64, 1, MX, MX, False),    # N % 16
        (_ref(fp8), 16, 64, 64, 2, MX, MX, False),    # split-K
        (_ref(fp4), 0, 64, 64, 1, MX, MX, False),     # M == 0: nothing launched
        (_ref(fp4), 3, 64, 96, 1, MX, MX, True),      # K = 96: 48 bytes per row, lda 48
    ])
    r = out["results"]
    assert "a_scale and w_scale are required" in r[0] and "a_scale and w_scale are required" in r[1], r
    assert "scales must be OCP MX e8m0" in r[2], r
    assert "K must be a multiple of 32" in r[3], r
    assert "N must be a multiple of 16" in r[4], r
    assert "split_k must be 1" in r[5], r
    assert r[6] == "ok" and r[7] == "ok", r
    (launch,) = [e for e in rt.read_log(log) if e["call"] == "hipModuleLaunchKernel"]
    ka = rt.decode_kernarg("gemm_mxfp", launch["kernarg"])
    assert (ka["M"], ka["K"], ka["lda"], ka["bias"]) == (3, 96, 48, rt.PROBE_BIAS), ka


def test_argument_validation(stub, tmp_path, kernels):
    ks = _family(kernels, "gfx942") or _family(kernels, "gfx950")
    if not ks:
        pytest.skip("no gemm_a16w16 ROCm kernels")
    k = ks[0]
    log = tmp_path / "log.jsonl"
    out = rt.run_probes("torch", rt.stub_env(stub, log, k["arch"]), [
        (_ref(k), 16, 40, 64, 1),
        (_ref(k), 16, 64, 60, 1),
        (_ref(k), 16, 64, 64, 17),
        (_ref(k), 16, 64, 64, 0),
        (_ref(k), 0, 64, 64, 1),
        (_ref(k), 0, 64, 4096, 4),
        ("no.such.kernel", 16, 64, 64, 1),
    ])
    r = out["results"]
    assert "N must be a multiple of 16" in r[0]
    assert "K must be a multiple of 8" in r[1]
    assert "split_k must be in [1, 16]" in r[2] and "split_k must be in [1, 16]" in r[3]
    assert r[4] == "ok" and r[5] == "ok"  # M == 0: nothing launched, not even the reduce
    assert "no kernel named" in r[6]
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
