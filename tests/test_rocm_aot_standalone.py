"""The ROCm kernel pipeline end to end, without the op library and without AMD hardware:
kernels/rocm/gemm_a16w16.py, gemm_a8w8.py, gemm_a8w8_blockscale.py and gemm_splitk_decode.py build()
for gfx942 and gfx950 (FlyDSL, one process per kernel), the exported objects linked with
csrc/rocm_runtime.cpp (shim only) and a minimal registry into a throwaway library, then driven
through the stub HIP runtime (tests/stub_hip), split-K launches (GEMM kernel + reduce) included.

Needs flydsl (build machine); skipped elsewhere. Takes ~90 s (six FlyDSL builds)."""

import concurrent.futures
import json
import os
import subprocess
import sys

import pytest

import rocm_testlib as rt

pytest.importorskip("flydsl")
pytest.importorskip("elftools")

ARCHS = ("gfx942", "gfx950")
SPECS = [  # (family, arch, in, out, tile)
    ("gemm_a16w16", "gfx942", "bf16", "bf16", (64, 128, 64)),
    ("gemm_a16w16", "gfx950", "fp16", "fp32", (16, 64, 128)),
    ("gemm_a8w8", "gfx942", "fp8_e4m3fnuz", "bf16", (16, 64, 256)),
    ("gemm_a8w8", "gfx950", "int8", "fp16", (64, 128, 128)),
    ("gemm_a8w8_blockscale", "gfx942", "fp8_e4m3fnuz", "bf16", (32, 64, 128)),
    ("gemm_splitk_decode", "gfx950", "bf16", "bf16", (16, 32, 512)),
]
# (M, N, K, split_k[, a_scale_kind, w_scale_kind, bias])
CASES = {
    "gemm_a16w16": [(1, 64, 64, 1), (130, 272, 200, 2), (256, 128, 4096, 3), (17, 48, 8, 4)],
    "gemm_a8w8": [(1, 64, 64, 1, 1, 1, False), (130, 272, 208, 1, 2, 1, True), (256, 128, 4096, 1, 1, 2, False),
                  (17, 48, 16, 1, 2, 2, True)],  # int8 spec here: no split-K mode
    "gemm_a8w8_blockscale": [(1, 64, 128, 1, 3, 3, False), (7, 256, 1008, 3, 3, 3, True), (40, 64, 4096, 16, 3, 3, False)],
    "gemm_splitk_decode": [(1, 64, 64, 1), (8, 100, 4096, 4, 0, 0, True), (3, 2048, 7168, 3), (17, 36, 520, 2)],
}
K_MULTIPLE = {"gemm_a16w16": 8, "gemm_a8w8": 16, "gemm_a8w8_blockscale": 16, "gemm_splitk_decode": 8}
N_MULTIPLE = {"gemm_a16w16": 16, "gemm_a8w8": 16, "gemm_a8w8_blockscale": 16, "gemm_splitk_decode": 1}
KERNARG = {"gemm_a16w16": 68, "gemm_a8w8": 92, "gemm_a8w8_blockscale": 84, "gemm_splitk_decode": 68}


def _spec(family, arch, ind, outd, tile):
    tm, tn, tk = tile
    name = f"{family}.{ind}.{outd}.t{tm}x{tn}x{tk}.{arch}"
    decode = family == "gemm_splitk_decode"
    return dict(name=name, family=family, op="gemm_a16w16" if decode else family, in_dtype=ind, out_dtype=outd,
                w_layout="plain" if decode else "preshuffled", tile_m=tm, tile_n=tn, tile_k=tk, params={},
                arch=arch, ident="k_" + name.replace(".", "_"))


def _first(harness, family, arch):
    return next(s for s, _ in harness["built"] if s["arch"] == arch and s["family"] == family)


_BUILD = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[3])
spec = json.loads(sys.argv[1])
g = importlib.import_module(spec["family"])
res = g.build(spec, sys.argv[2])
open(sys.argv[2] + "/result.json", "w").write(json.dumps(res))
"""


def _build(spec, out_dir):
    out_dir.mkdir(parents=True)
    env = dict(os.environ, ARCH=spec["arch"])
    sys.path.insert(0, str(rt.ROOT / "tools"))
    import rocm_toolchain

    env.update(rocm_toolchain.toolchain_env())
    proc = subprocess.run([sys.executable, "-c", _BUILD, json.dumps(spec), str(out_dir),
                           str(rt.ROOT / "kernels" / "rocm")], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    return json.loads((out_dir / "result.json").read_text())


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rocm_aot")
    specs = [_spec(*x) for x in SPECS]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # at most 2 FlyDSL builds at a time
        results = list(pool.map(lambda s: _build(s, tmp / s["ident"]), specs))
    built = list(zip(specs, results))
    objects = [tmp / s["ident"] / o for s, r in built for o in r["objects"]]
    lib = rt.link_harness(tmp, built, objects)
    stub = rt.build_stub(tmp)
    return dict(tmp=tmp, built=built, lib=lib, stub=stub)


def test_build_outputs(harness):
    for spec, res in harness["built"]:
        d = harness["tmp"] / spec["ident"]
        meta = res["meta"]
        assert res["requires_n_multiple"] == N_MULTIPLE[spec["family"]]
        assert res["max_split_k"] == (1 if spec["in_dtype"] == "int8" else 16)
        assert res["requires_k_multiple"] == K_MULTIPLE[spec["family"]]
        for f in (meta["hsaco"], meta["isa"], *res["objects"]):
            assert (d / f).is_file(), f
        info = rt.code_object_info((d / meta["hsaco"]).read_bytes())
        assert info["e_machine"] == rt.EM_AMDGPU and info["mach"] == spec["arch"]
        kernels = info["metadata"]["amdhsa.kernels"]
        (kern,) = [k for k in kernels if rt.kernel_kind(k[".name"]) == spec["family"]]
        reduces = [rt.kernel_kind(k[".name"]) for k in kernels if k is not kern]
        assert reduces == ([] if res["max_split_k"] == 1 else [rt.FAMILY_REDUCE[spec["family"]]])
        assert kern[".kernarg_segment_size"] == meta["kernarg_segment_size"] == KERNARG[spec["family"]]
        assert kern[".group_segment_fixed_size"] == meta["lds_bytes"] == meta["group_segment_fixed_size"]
        assert kern[".private_segment_fixed_size"] == 0
        # the object embeds exactly this code object
        (exp,) = rt.embedded_exports(d / res["objects"][0])
        assert exp["hsaco"] == (d / meta["hsaco"]).read_bytes()
        assert exp["metadata"]["arch"] == spec["arch"]


def test_object_imports_only_hip_module_api(harness):
    allowed_hip = {"hipGetDevice", "hipSetDevice", "hipDeviceSynchronize", "hipGetLastError", "hipGetErrorName",
                   "hipModuleLoadData", "hipModuleUnload", "hipModuleGetFunction", "hipModuleLaunchKernel"}
    for spec, res in harness["built"]:
        obj = harness["tmp"] / spec["ident"] / res["objects"][0]
        out = subprocess.run(["nm", "-u", str(obj)], stdout=subprocess.PIPE, text=True, check=True).stdout
        undefined = {ln.split()[-1] for ln in out.splitlines() if ln.strip()}
        hip = {s for s in undefined if s.startswith("hip")}
        assert hip <= allowed_hip, hip - allowed_hip
        assert {"hipModuleLoadData", "hipModuleLaunchKernel", "hipModuleGetFunction"} <= hip


def test_library_has_no_undefined_hip_symbols(harness):
    out = subprocess.run(["nm", "-D", "--undefined-only", str(harness["lib"])], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    assert not [ln for ln in out.splitlines() if " hip" in ln], out
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(harness["lib"])], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    assert not [ln for ln in dyn.splitlines() if ln.split()[-1].startswith("hip")], "shim symbols must be hidden"


@pytest.mark.parametrize("spec_row", SPECS, ids=lambda x: f"{x[0]}-{x[1]}")
def test_launch_through_stub(harness, tmp_path, spec_row):
    family, arch = spec_row[:2]
    spec, res = next((s, r) for s, r in harness["built"] if s["arch"] == arch and s["family"] == family)
    log = tmp_path / "stub.jsonl"
    env = rt.stub_env(harness["stub"], log, arch)
    cases = [(spec["name"], *c) for c in CASES[family]]
    out = rt.run_probes(str(harness["lib"]), env, cases)
    assert out["arch"] == arch
    assert out["results"] == ["ok"] * len(cases), out
    kernel = dict(name=spec["name"], family=family, in_dtype=spec["in_dtype"],
                  tile=[spec["tile_m"], spec["tile_n"], spec["tile_k"]], meta=res["meta"])
    entries = [e for e in rt.read_log(log) if e["call"].startswith("hipModule")]
    rt.check_launches(entries, kernel, arch, CASES[family])
    # the code object handed to the runtime is the one the build saved
    (load,) = [e for e in entries if e["call"] == "hipModuleLoadData"]
    saved = harness["tmp"] / spec["ident"] / res["meta"]["hsaco"]
    assert open(load["file"], "rb").read() == saved.read_bytes()


def test_wrong_arch_and_errors(harness, tmp_path):
    gfx950 = _first(harness, "gemm_a16w16", "gfx950")
    gfx942 = _first(harness, "gemm_a16w16", "gfx942")
    log = tmp_path / "stub.jsonl"
    env = rt.stub_env(harness["stub"], log, "gfx942")
    out = rt.run_probes(str(harness["lib"]), env, [
        (gfx950["name"], 16, 64, 64, 1),   # gfx950 code object on a gfx942 device
        (gfx942["name"], 16, 40, 64, 1),   # N % 16
        (gfx942["name"], 16, 64, 60, 1),   # K % 8
        (gfx942["name"], 16, 64, 64, 17),  # split-K beyond max_split_k
        (gfx942["name"], 0, 64, 64, 1),    # M == 0: nothing launched
        ("no.such.kernel", 1, 16, 8, 1),
    ])
    r = out["results"]
    assert "hipErrorNoBinaryForGpu" in r[0] and "209" in r[0]
    assert "N must be a multiple of 16" in r[1]
    assert "K must be a multiple of 8" in r[2]
    assert "split_k must be in [1, 16]" in r[3]
    assert r[4] == "ok"
    assert "no such kernel" in r[5]
    assert not [e for e in rt.read_log(log) if e["call"] == "hipModuleLaunchKernel"]


def test_without_hip_library(harness, tmp_path):
    spec = harness["built"][0][0]
    env = dict(os.environ, FLYGEMM_HIP_LIBRARY=str(tmp_path / "missing" / "libamdhip64.so"))
    out = rt.run_probes(str(harness["lib"]), env, [(spec["name"], 16, 64, 64, 1)])
    assert out["results"][0].startswith(
        "flygemm: ROCm kernel called but libamdhip64.so could not be loaded: "), out
    assert out["arch"].startswith("error: flygemm: ROCm kernel called but libamdhip64.so could not be loaded")
