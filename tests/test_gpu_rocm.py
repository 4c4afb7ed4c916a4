"""GPU tests of the ROCm backend (skipped without an AMD GPU and a ROCm build of torch), in the shape
and tolerance of the CUDA GPU tests (tests/test_gpu_cuda*.py): every result is compared with the
CPU oracle on the same quantized inputs (relative Frobenius error <= 1e-2), written through the _out
variant into a NaN-poisoned view whose padded rows and guard rows must stay untouched.

Parametrized from the linked registry (flygemm.info()), so kernels other families add are covered
without editing this file:
  * every (op, in dtype, out dtype) with a ROCm kernel, for M in {1, 7, 128, 1000, 4097} with N and K
    off the tile sizes (N = 1040, K = 1024 + the kernels' K multiple), and for every bias kind x weight
    layout; a combination with no kernel on the device's arch must raise NotImplementedError naming it;
  * graph capture per op: capture after warm-up, replay with new inputs copied in, equal to eager;
  * every ROCm kernel with a split-K mode: pinned with FLYGEMM_FORCE_KERNEL to split_k values that do
    and do not divide the K tiles, equal to the oracle and bitwise identical run to run;
  * MX on gfx942 is a clear error (docs/ROCM.md, "MX formats")."""
import pytest
import torch

from conftest import IN_DTYPES, call_op, make_inputs, rel_fro_err
from gpu_outputs import POISON, check_guards, guarded_out

try:
    import flygemm
except ImportError:  # not built: the CPU tests report it
    flygemm = None

pytestmark = pytest.mark.gpu_rocm
requires_rocm = pytest.mark.skipif(
    getattr(torch.version, "hip", None) is None or not torch.cuda.is_available(),
    reason="needs an AMD GPU and a ROCm build of torch")

M_VALUES = [1, 7, 128, 1000, 4097]
N_OFF_TILE = 1040  # a multiple of 16 (the preshuffled layout), not of any tile_n
TORCH_DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
               "fp8_e4m3fn": torch.float8_e4m3fn, "fp8_e4m3fnuz": torch.float8_e4m3fnuz, "int8": torch.int8,
               "fp4_e2m1_x2": torch.float4_e2m1fn_x2}


# ----------------------------------------------------------------------------- registry
def rocm_kernels():
    if flygemm is None:
        return []
    try:
        return [k for k in flygemm.info()["kernels"] if k["arch"].startswith("gfx")]
    except Exception:  # noqa: BLE001  (a broken extension is reported by the CPU tests)
        return []


def combos():
    """(op, in dtype, out dtype) of every ROCm kernel in the build, any arch."""
    return sorted({(k["op"], k["in_dtype"], k["out_dtype"]) for k in rocm_kernels()})


def combo_id(c):
    return "-".join(c)


def device_arch():
    return flygemm._arch_of(torch.device("cuda"))


def kernels_for(op, in_name, out_name, arch):
    return [k for k in rocm_kernels() if (k["op"], k["in_dtype"], k["out_dtype"], k["arch"]) == (op, in_name, out_name, arch)]


def k_off_tile(op, in_name):
    """A K that is no multiple of any tile_k but meets the kernels' K multiple (and the MX 32)."""
    mult = max([k.get("requires_k_multiple", 1) for k in rocm_kernels() if (k["op"], k["in_dtype"]) == (op, in_name)]
               + [32 if op in ("gemm_mxfp8", "gemm_mxfp4") else 1])
    return 1024 + mult


# ----------------------------------------------------------------------------- helpers
def to_device(inp):
    mv = (lambda t: None if t is None else t.cuda())
    return inp.with_(a=mv(inp.a), w=mv(inp.w), a_scale=mv(inp.a_scale), w_scale=mv(inp.w_scale), bias=mv(inp.bias))


def run_out(inp_dev):
    buf, view = guarded_out(inp_dev.M, inp_dev.N, inp_dev.resolved_out_dtype, "cuda")
    call_op(inp_dev, out=view)
    torch.cuda.synchronize()
    return buf, view


def expect_clear_error(inp_dev):
    """A combination without a kernel on this arch raises NotImplementedError naming the arch."""
    with pytest.raises(NotImplementedError, match=device_arch()):
        run_out(inp_dev)


def check_case(op, in_name, out_name, M, N, K, bias_kind, layout, seed=0):
    inp = make_inputs(op, M, N, K, layout, TORCH_DTYPE[in_name], TORCH_DTYPE[out_name], bias_kind, seed=seed)
    dev = to_device(inp)
    if not kernels_for(op, in_name, out_name, device_arch()):
        expect_clear_error(dev)
        return
    ref = call_op(inp)  # the CPU oracle on the same quantized inputs
    buf, view = run_out(dev)
    assert not torch.isnan(view).any(), "output not fully written"
    check_guards(buf, M, N)
    err = rel_fro_err(view, ref)
    assert err <= 1e-2, f"{op} {in_name}->{out_name} M={M} N={N} K={K} {bias_kind} {layout}: rel err {err:.3e}"


# ----------------------------------------------------------------------------- every combination
@requires_rocm
@pytest.mark.parametrize("M", M_VALUES)
@pytest.mark.parametrize("combo", combos(), ids=combo_id)
def test_matches_oracle(combo, M):
    op, in_name, out_name = combo
    check_case(op, in_name, out_name, M, N_OFF_TILE, k_off_tile(op, in_name), "fp32" if M % 2 else "none", "plain",
               seed=M)


@requires_rocm
@pytest.mark.parametrize("layout", ["plain", "preshuffled"])
@pytest.mark.parametrize("bias_kind", ["none", "fp32", "out"])
@pytest.mark.parametrize("combo", combos(), ids=combo_id)
def test_bias_and_layouts(combo, bias_kind, layout):
    op, in_name, out_name = combo
    check_case(op, in_name, out_name, 333, 272, k_off_tile(op, in_name), bias_kind, layout, seed=11)


@requires_rocm
def test_registry_has_rocm_kernels_for_the_device():
    arch = device_arch()
    assert any(k["arch"] == arch for k in rocm_kernels()), f"no kernels for {arch} in this build"
    info = flygemm.info()
    assert "rocm" in info["backends"]


# ----------------------------------------------------------------------------- graph capture
def graph_ops():
    return sorted({k["op"] for k in rocm_kernels()})


@requires_rocm
@pytest.mark.parametrize("op", graph_ops())
def test_graph_capture_replay(op):
    arch = device_arch()
    mine = sorted({(k["in_dtype"], k["out_dtype"]) for k in rocm_kernels() if k["op"] == op and k["arch"] == arch})
    if not mine:
        pytest.skip(f"no {op} kernel for {arch}")
    in_name, out_name = mine[0]
    M, N, K = 100, 384, k_off_tile(op, in_name)
    flygemm.warmup("cuda")
    static = to_device(make_inputs(op, M, N, K, "plain", TORCH_DTYPE[in_name], TORCH_DTYPE[out_name], "fp32", seed=1))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        call_op(static)  # warm on the capture stream
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out_static = call_op(static)
    for i in range(5):
        new = make_inputs(op, M, N, K, "plain", TORCH_DTYPE[in_name], TORCH_DTYPE[out_name], "fp32", seed=100 + i)
        for name in ("a", "w", "a_scale", "w_scale", "bias"):
            dst, src = getattr(static, name), getattr(new, name)
            if dst is not None:  # byte copies: fp4 / e8m0 tensors have no conversions
                dst.view(torch.uint8).copy_(src.contiguous().view(torch.uint8).to("cuda"))
        out_static.fill_(POISON)
        graph.replay()
        eager = call_op(static)
        torch.cuda.synchronize()
        assert torch.equal(out_static, eager), f"replay {i} differs from eager"
        assert rel_fro_err(out_static, call_op(new)) <= 1e-2


# ----------------------------------------------------------------------------- split-K
def split_k_kernels():
    return [k for k in rocm_kernels() if k.get("max_split_k", 1) > 1]


@requires_rocm
@pytest.mark.parametrize("name", [k["name"] + "@" + k["arch"] for k in split_k_kernels()] or ["none"])
def test_split_k_deterministic(name, monkeypatch):
    if name == "none":
        pytest.skip("no ROCm kernel with a split-K mode in this build")
    kname, arch = name.split("@")
    if arch != device_arch():
        pytest.skip(f"{kname} is a {arch} kernel")
    k = next(k for k in split_k_kernels() if k["name"] == kname and k["arch"] == arch)
    op, in_name, out_name = k["op"], k["in_dtype"], k["out_dtype"]
    M, N, K = 7, N_OFF_TILE, 7168
    inp = make_inputs(op, M, N, K, "plain", TORCH_DTYPE[in_name], TORCH_DTYPE[out_name], "fp32", seed=3)
    ref = call_op(inp)
    dev = to_device(inp)
    kt = -(-K // k["tile"][2])
    for split in sorted({2, 3, 5, min(k["max_split_k"], kt)}):
        split = min(split, k["max_split_k"])
        monkeypatch.setenv("FLYGEMM_FORCE_KERNEL", f"{kname}:{split}")
        buf, view = run_out(dev)
        assert not torch.isnan(view).any(), f"{kname}:{split}: output not fully written"
        check_guards(buf, M, N)
        assert rel_fro_err(view, ref) <= 1e-2, f"{kname}:{split}"
        _, view2 = run_out(dev)
        assert torch.equal(view, view2), f"{kname}:{split}: two runs differ"
    monkeypatch.delenv("FLYGEMM_FORCE_KERNEL")


# ----------------------------------------------------------------------------- clear errors
@requires_rocm
def test_mx_on_gfx942_is_a_clear_error():
    if device_arch() != "gfx942":
        pytest.skip("the device is not gfx942")
    for op in ("gemm_mxfp8", "gemm_mxfp4"):
        inp = to_device(make_inputs(op, 16, 256, 256))
        with pytest.raises(NotImplementedError, match=rf"{op} on gfx942.*not supported on gfx942.*gemm_a16w16"):
            call_op(inp)


@requires_rocm
def test_unaligned_n_is_a_clear_error():
    """N not a multiple of 16 has no preshuffled-layout kernel: NotImplementedError naming the need."""
    arch = device_arch()
    N, K = 40, 256
    a = torch.randn(8, K, device="cuda").to(torch.bfloat16)
    w = torch.randn(N, K, device="cuda").to(torch.bfloat16)
    if any(k["op"] == "gemm_a16w16" and k["in_dtype"] == "bf16" and k["out_dtype"] == "bf16" and k["arch"] == arch
           and N % k["requires_n_multiple"] == 0 and K % k["requires_k_multiple"] == 0 for k in rocm_kernels()):
        pytest.skip(f"a gemm_a16w16 kernel for N = {N} exists")
    with pytest.raises(NotImplementedError, match=rf"{arch}.*N % 16 == 0"):
        torch.ops.flygemm.gemm_a16w16(a, w)


# ----------------------------------------------------------------------------- misc
@requires_rocm
def test_strided_activation_non_default_stream_and_empty():
    arch = device_arch()
    in_dtype = IN_DTYPES["gemm_a16w16"][0]
    if not kernels_for("gemm_a16w16", "bf16", "bf16", arch):
        pytest.skip(f"no bf16 kernel for {arch}")
    M, N, K = 65, 128, 256
    inp = make_inputs("gemm_a16w16", M, N, K, in_dtype=in_dtype, seed=5)
    wide = torch.zeros(M, K + 64, dtype=in_dtype, device="cuda")
    wide[:, :K] = inp.a.cuda()
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        out = torch.ops.flygemm.gemm_a16w16(wide[:, :K], inp.w.cuda())
    stream.synchronize()
    assert rel_fro_err(out, call_op(inp)) <= 1e-2
    empty = torch.ops.flygemm.gemm_a16w16(torch.empty(0, K, dtype=in_dtype, device="cuda"), inp.w.cuda())
    assert empty.shape == (0, N)


@requires_rocm
def test_explain_on_device():
    arch = device_arch()
    for op, in_name, out_name in combos():
        if kernels_for(op, in_name, out_name, arch):
            c = flygemm.explain(op, 4096, 4096, 4096, TORCH_DTYPE[in_name], "cuda", TORCH_DTYPE[out_name])
            assert c["arch"] == arch and c["split_k"] >= 1 and c["kernel"]
