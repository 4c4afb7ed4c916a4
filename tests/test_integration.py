"""Integration of flygemm's ops outside eager Python, on CPU (no GPU, no skips):

* TorchScript: a scripted module calling every op (and an ``_out`` variant) is saved, then
  loaded and run in a fresh process that only does ``torch.ops.load_library`` (no ``import
  flygemm``): same results, bit for bit.
* AOTInductor: ``torch.export`` (M dynamic) + ``aoti_compile_and_package``; the generated
  wrapper calls the ops through the dispatcher (AOTI proxy executor, extern kernel nodes).
  ``aoti_load_package`` in Python gives the eager results; the C++ program
  ``tests/cpp/aoti_app.cpp`` loads the same package with ``AOTIModelPackageLoader`` and gets
  them too.
* C++: ``tests/cpp`` is configured with ``find_package(Torch)`` + ``find_package(flygemm)``
  (``python/flygemm/share/cmake/flygemm/flygemmConfig.cmake``); ``dispatcher_app.cpp`` calls
  every op through ``c10::Dispatcher`` and compares with ``at::matmul``.

Run time on 2 busy CPU cores: ~65 s for the CMake build of tests/cpp (one build, shared through
a module-scoped fixture), 15-40 s for the AOTInductor compile, ~10 s for the rest: ~1.5-2 min.
Needs cmake >= 3.18 and a C++ compiler (AOTInductor on CPU needs one as well).
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
try:
    import flygemm
except ImportError:  # not installed: use the in-place build (python/flygemm/_C.so)
    sys.path.insert(0, str(ROOT / "python"))
    import flygemm

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script.*` is deprecated:DeprecationWarning")

CPP_DIR = ROOT / "tests" / "cpp"
PACKAGE_DIR = pathlib.Path(flygemm.__file__).resolve().parent
CMAKE_CONFIG_DIR = PACKAGE_DIR / "share" / "cmake" / "flygemm"

N, K = 32, 128  # every op below: weight [N, K] (K a multiple of 32 for MX, 128 for blockscale)
M_EXPORT, M_OTHER = 8, 37  # AOTI: traced with M_EXPORT, also run with M_OTHER (M is dynamic)

# Activation inputs of GemmModule.forward, in order; all have M rows (dim 0 is dynamic).
INPUT_NAMES = ["a16", "a8", "a8_scale", "ab", "ab_scale", "amx8", "amx8_scale", "amx4", "amx4_scale"]


def _rand_bytes(gen, *shape, lo=0, hi=255):
    return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.uint8)


def make_weights(seed=1):
    """Weights and their scales (module buffers: constants of the exported program)."""
    g = torch.Generator().manual_seed(seed)
    w8 = (torch.randn(N, K, generator=g) * 3).to(torch.float8_e4m3fn)
    return {
        "w16": torch.randn(N, K, generator=g).to(torch.bfloat16),
        "bias": torch.randn(N, generator=g),
        "w8": flygemm.preshuffle(w8),  # preshuffled [N/16, K/16, 16, 16]: both layouts are in use
        "w8_scale": torch.rand(N, generator=g) + 0.25,
        "wb": (torch.randn(N, K, generator=g) * 2).to(torch.float8_e4m3fn),
        "wb_scale": torch.rand((N + 127) // 128, K // 128, generator=g) + 0.25,
        "wmx8": (torch.randn(N, K, generator=g) * 4).to(torch.float8_e4m3fn),
        "wmx8_scale": _rand_bytes(g, N, K // 32, lo=120, hi=130).view(torch.float8_e8m0fnu),
        "wmx4": _rand_bytes(g, N, K // 2).view(torch.float4_e2m1fn_x2),
        "wmx4_scale": _rand_bytes(g, N, K // 32, lo=122, hi=130).view(torch.float8_e8m0fnu),
    }


def make_inputs(M, seed=0):
    g = torch.Generator().manual_seed(seed + M)
    return (
        torch.randn(M, K, generator=g).to(torch.bfloat16),
        (torch.randn(M, K, generator=g) * 3).to(torch.float8_e4m3fn),
        torch.rand(M, generator=g) + 0.25,  # per-token
        (torch.randn(M, K, generator=g) * 2).to(torch.float8_e4m3fn),
        torch.rand(M, K // 128, generator=g) + 0.25,  # 1x128 blocks
        (torch.randn(M, K, generator=g) * 4).to(torch.float8_e4m3fn),
        _rand_bytes(g, M, K // 32, lo=120, hi=130).view(torch.float8_e8m0fnu),
        _rand_bytes(g, M, K // 2).view(torch.float4_e2m1fn_x2),
        _rand_bytes(g, M, K // 32, lo=122, hi=130).view(torch.float8_e8m0fnu),
    )


class GemmModule(torch.nn.Module):
    """Calls every flygemm op (and one _out variant) on its inputs; scriptable and exportable.

    mx_bytes=True: the MX activation operands (fp4 data, e8m0 scales) come in as their uint8
    byte views and are viewed back inside forward. AOTInductor needs that in torch 2.13: its
    C++ wrapper codegen has no entry for float8_e8m0fnu / float4_e2m1fn_x2 *graph inputs*
    (KeyError in DTYPE_TO_ATEN, torch/_inductor/codegen/cpp_utils.py); as constants (the
    weights here) and as op arguments inside the graph they work.
    """

    def __init__(self, weights, mx_bytes: bool = False):
        super().__init__()
        self.mx_bytes = mx_bytes
        for name, t in weights.items():
            self.register_buffer(name, t)

    def forward(self, a16, a8, a8_scale, ab, ab_scale, amx8, amx8_scale, amx4, amx4_scale):
        if self.mx_bytes:
            amx8_scale = amx8_scale.view(torch.float8_e8m0fnu)
            amx4 = amx4.view(torch.float4_e2m1fn_x2)
            amx4_scale = amx4_scale.view(torch.float8_e8m0fnu)
        y16 = torch.ops.flygemm.gemm_a16w16(a16, self.w16, self.bias)
        y8 = torch.ops.flygemm.gemm_a8w8(a8, self.w8, a8_scale, self.w8_scale, None, torch.float16)
        yb = torch.ops.flygemm.gemm_a8w8_blockscale(ab, self.wb, ab_scale, self.wb_scale)
        ymx8 = torch.ops.flygemm.gemm_mxfp8(amx8, self.wmx8, amx8_scale, self.wmx8_scale)
        ymx4 = torch.ops.flygemm.gemm_mxfp4(amx4, self.wmx4, amx4_scale, self.wmx4_scale, self.bias)
        out = torch.empty(a16.shape[0], self.w16.shape[0], dtype=torch.float32, device=a16.device)
        torch.ops.flygemm.gemm_a16w16_out(a16, self.w16, None, torch.float32, out=out)
        return y16, y8, yb, ymx8, ymx4, out


def mx_bytes(inputs):
    """make_inputs() with the MX operands as uint8 byte views (inputs of GemmModule(mx_bytes=True))."""
    return tuple(t.view(torch.uint8) if t.dtype in (torch.float8_e8m0fnu, torch.float4_e2m1fn_x2) else t
                 for t in inputs)


OUTPUT_DTYPES = [torch.bfloat16, torch.float16, torch.bfloat16, torch.bfloat16, torch.bfloat16, torch.float32]


def assert_same(got, want, what):
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{what}: output {i} is {g.dtype}{list(g.shape)}, " \
                                                          f"expected {w.dtype}{list(w.shape)}"
        assert torch.equal(g, w), f"{what}: output {i} differs, max |diff| {(g.float() - w.float()).abs().max()}"


@pytest.fixture(scope="module")
def weights():
    return make_weights()


@pytest.fixture(scope="module")
def module(weights):
    return GemmModule(weights).eval()


@pytest.fixture(scope="module")
def eager(module):
    """Eager results per M: the reference for every path below. (Only sanity-checked here; the
    numerics of every op are checked against at::matmul by dispatcher_app and by the op tests.)"""
    results = {}
    for M in (M_EXPORT, M_OTHER):
        inputs = make_inputs(M)
        with torch.no_grad():
            outs = module(*inputs)
        assert [o.dtype for o in outs] == OUTPUT_DTYPES
        assert all(o.shape == (M, N) for o in outs)
        ref = torch.matmul(inputs[0].float(), module.w16.float().T)
        torch.testing.assert_close(outs[5], ref, rtol=1e-5, atol=1e-4)  # _out, fp32
        torch.testing.assert_close(outs[0].float(), ref + module.bias, rtol=1e-2, atol=1e-2)
        results[M] = (inputs, outs)
    return results


# ---------------------------------------------------------------------------------- TorchScript

_TS_RUNNER = textwrap.dedent("""
    import sys
    import torch
    lib, model, data = sys.argv[1:4]
    torch.ops.load_library(lib)  # the only flygemm-specific line: no `import flygemm`
    assert "flygemm" not in sys.modules
    m = torch.jit.load(model)
    d = torch.load(data)
    for M, (inputs, expected) in d.items():
        with torch.no_grad():
            outs = m(*inputs)
        assert len(outs) == len(expected), (M, len(outs))
        for i, (o, e) in enumerate(zip(outs, expected)):
            assert o.dtype == e.dtype and o.shape == e.shape, (M, i, o.dtype, e.dtype, o.shape, e.shape)
            assert torch.equal(o, e), (M, i, (o.float() - e.float()).abs().max())
        print("M", M, "ok")
    print("OK")
""")


def _clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the child must not be able to `import flygemm` by accident
    return env


def test_torchscript_save_load_fresh_process(module, eager, tmp_path):
    scripted = torch.jit.script(module)
    graph = str(scripted.graph)
    for op in ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4", "gemm_a16w16_out"):
        assert f"flygemm::{op}(" in graph, f"scripted graph does not call flygemm::{op}:\n{graph}"
    for M, (inputs, outs) in eager.items():
        with torch.no_grad():
            assert_same(scripted(*inputs), outs, f"torch.jit.script, M={M}")

    model, data = tmp_path / "gemm.ts", tmp_path / "data.pt"
    scripted.save(str(model))
    torch.save({M: (list(inputs), list(outs)) for M, (inputs, outs) in eager.items()}, data)
    r = subprocess.run([sys.executable, "-c", _TS_RUNNER, flygemm.library_path(), str(model), str(data)],
                       capture_output=True, text=True, timeout=300, env=_clean_env(), cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_torchscript_load_needs_library(module, tmp_path):
    """Control for the test above: without load_library the saved model does not load."""
    model = tmp_path / "gemm.ts"
    torch.jit.script(module).save(str(model))
    code = "import sys, torch; torch.jit.load(sys.argv[1])"
    r = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True, text=True, timeout=300,
                       env=_clean_env(), cwd=tmp_path)
    assert r.returncode != 0 and "flygemm" in r.stderr, r.stderr


# ---------------------------------------------------------------------------------- AOTInductor

@pytest.fixture(scope="module")
def aoti_package(weights, eager, tmp_path_factory):
    from torch._inductor import aoti_compile_and_package

    inputs = mx_bytes(eager[M_EXPORT][0])
    m_dim = torch.export.Dim("M", min=1, max=65536)
    dynamic_shapes = {name: {0: m_dim} for name in INPUT_NAMES}
    ep = torch.export.export(GemmModule(weights, mx_bytes=True).eval(), inputs, dynamic_shapes=dynamic_shapes)
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    # The ops stay opaque custom-op calls. (The _out call into a fresh buffer is kept as is by
    # torch 2.13's export; other versions may wrap it in auto_functionalized: not asserted.)
    for op in ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"):
        assert f"flygemm.{op}.default" in targets, f"exported graph lacks flygemm.{op}: {sorted(targets)}"

    path = tmp_path_factory.mktemp("aoti") / "gemm.pt2"
    configs = {}
    if hasattr(torch._inductor.config.aot_inductor, "compile_wrapper_opt_level"):
        # The wrapper is only glue around the extern calls: -O0 compiles it faster.
        configs["aot_inductor.compile_wrapper_opt_level"] = "O0"
    return pathlib.Path(aoti_compile_and_package(ep, package_path=str(path), inductor_configs=configs))


def test_aoti_python(aoti_package, eager):
    # The generated code calls the ops as extern kernels through the dispatcher (proxy executor).
    with zipfile.ZipFile(aoti_package) as z:
        text = "".join(z.read(n).decode(errors="replace") for n in z.namelist() if n.endswith(".cpp"))
    assert "aoti_torch_proxy_executor_call_function" in text or "aoti_torch_call_dispatcher" in text
    for op in ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4"):
        assert f"flygemm.{op}" in text, f"no call of flygemm.{op} in the generated code"

    compiled = torch._inductor.aoti_load_package(str(aoti_package))
    for M, (inputs, outs) in eager.items():  # M_OTHER exercises the dynamic M dimension
        assert_same(compiled(*mx_bytes(inputs)), outs, f"aoti_load_package, M={M}")


def _scalar_type_name(dtype):
    """c10::toString(ScalarType) of a torch dtype (what aoti_app.cpp parses)."""
    names = {
        torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
        torch.uint8: "Byte", torch.int8: "Char", torch.int32: "Int", torch.int64: "Long", torch.bool: "Bool",
        torch.float8_e4m3fn: "Float8_e4m3fn", torch.float8_e4m3fnuz: "Float8_e4m3fnuz",
        torch.float8_e5m2: "Float8_e5m2", torch.float8_e8m0fnu: "Float8_e8m0fnu",
        torch.float4_e2m1fn_x2: "Float4_e2m1fn_x2",
    }
    return names[dtype]


def write_case(case_dir: pathlib.Path, inputs, expected):
    """Raw tensors + manifest.txt for aoti_app.cpp (see its header comment)."""
    case_dir.mkdir(parents=True)
    lines = []
    for kind, tensors in (("input", inputs), ("expected", expected)):
        for i, t in enumerate(tensors):
            name = f"{kind}{i}.bin"
            (case_dir / name).write_bytes(t.contiguous().view(torch.uint8).numpy().tobytes())
            lines.append(" ".join([kind, name, _scalar_type_name(t.dtype), str(t.dim())] + [str(s) for s in t.shape]))
    (case_dir / "manifest.txt").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------- C++ programs

def _cmake_prefix_path():
    return ";".join([str(PACKAGE_DIR), torch.utils.cmake_prefix_path])


@pytest.fixture(scope="module")
def cpp_build(tmp_path_factory):
    """One CMake build of tests/cpp (find_package(Torch) + find_package(flygemm)) for all C++ tests."""
    cmake = shutil.which("cmake")
    assert cmake, "cmake is required for the C++ integration tests"
    build = tmp_path_factory.mktemp("cpp_build")
    configure = [cmake, "-S", str(CPP_DIR), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_PREFIX_PATH={_cmake_prefix_path()}",
                 f"-DFLYGEMM_EXPECT_VERSION={flygemm.__version__}"]
    r = subprocess.run(configure, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"cmake configure failed:\n{r.stdout}\n{r.stderr}"
    jobs = str(max(1, min(4, os.cpu_count() or 1)))
    r = subprocess.run([cmake, "--build", str(build), "-j", jobs], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"cmake build failed:\n{r.stdout[-8000:]}\n{r.stderr[-8000:]}"
    return build


def _run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)


def test_cpp_dispatcher_app_linked(cpp_build):
    """Linked with flygemm::flygemm: the ops are registered before main() runs."""
    r = _run([cpp_build / "dispatcher_app"])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert "registered at startup" in r.stdout
    # The library survives --as-needed: it is in DT_NEEDED although no symbol of it is used.
    if shutil.which("readelf"):
        dyn = _run(["readelf", "-d", cpp_build / "dispatcher_app"]).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dyn)
        assert any(os.path.isabs(n) and os.path.exists(n) and os.path.samefile(n, flygemm.library_path())
                   for n in needed), dyn


def test_library_needs_no_unused_torch_libraries():
    """_C.so lists only the torch libraries it uses: libtorch.so (a shell) or libtorch_python.so in
    DT_NEEDED would have to be found through a RUNPATH it does not have, and a C++ application
    linked with flygemm::flygemm failed to start that way on the GPU machine."""
    if not shutil.which("readelf"):
        pytest.skip("readelf not available")
    dyn = _run(["readelf", "-d", flygemm.library_path()]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dyn)
    assert "libtorch_cpu.so" in needed and "libc10.so" in needed, needed
    assert not {"libtorch.so", "libtorch_python.so"} & set(needed), needed


def test_shared_object_link_starts_with_as_needed():
    """setup.py links _C.so with -Wl,--as-needed first (extra_preargs: ahead of the objects and every -l), whatever
    else the call passes; editing the compiler's linker_so list did not reach the GPU machine's link line."""
    from source_modules import load_source
    setup_py = load_source("setup.py", "flygemm_setup_py")
    calls = []

    class Compiler:
        def link_shared_object(self, objects, output, **kwargs):
            calls.append((objects, output, kwargs))

    compiler = Compiler()
    setup_py.link_as_needed(compiler)
    compiler.link_shared_object(["a.o"], "_C.so", libraries=["torch", "torch_python"], extra_postargs=["-x"])
    compiler.link_shared_object(["a.o"], "_C.so", extra_preargs=["-pre"])
    assert calls[0] == (["a.o"], "_C.so", {"libraries": ["torch", "torch_python"], "extra_postargs": ["-x"],
                                           "extra_preargs": ["-Wl,--as-needed"]})
    assert calls[1][2]["extra_preargs"] == ["-Wl,--as-needed", "-pre"]


def test_extension_links_no_unused_torch_library():
    """setup.py leaves libtorch.so and libtorch_python.so off _C.so's link line (CppExtension names both; --as-needed
    alone kept libtorch.so in DT_NEEDED on the GPU machine), and keeps the torch libraries _C.so uses."""
    from source_modules import load_source
    from torch.utils.cpp_extension import CppExtension
    setup_py = load_source("setup.py", "flygemm_setup_py")
    ext = setup_py.without_unused_torch_libraries(CppExtension(name="x", sources=["a.cpp"], libraries=["c10_cuda"]))
    assert "torch" not in ext.libraries and "torch_python" not in ext.libraries
    assert {"c10", "torch_cpu", "c10_cuda"} <= set(ext.libraries)


def test_cpp_link_only_app(cpp_build):
    """No symbol of torch or flygemm used: the library is loaded anyway, its deps resolve."""
    r = _run([cpp_build / "link_only_app"])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_cpp_dispatcher_app_dlopen(cpp_build):
    """Linked without the library (flygemm::loader): unregistered until flygemm::load()."""
    r = _run([cpp_build / "dispatcher_app_loader"])
    assert r.returncode == 2 and "not registered" in r.stdout, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    r = _run([cpp_build / "dispatcher_app_loader", "--load"])
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_cpp_aoti_app(cpp_build, aoti_package, eager, tmp_path):
    cases = []
    for M, (inputs, outs) in eager.items():
        case = tmp_path / f"case_M{M}"
        write_case(case, mx_bytes(inputs), outs)
        cases.append(case)
    r = _run([cpp_build / "aoti_app", aoti_package] + cases)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"


def test_cmake_version_file_matches_package():
    text = (CMAKE_CONFIG_DIR / "flygemmConfigVersion.cmake").read_text()
    assert f'set(PACKAGE_VERSION "{flygemm.__version__}")' in text
