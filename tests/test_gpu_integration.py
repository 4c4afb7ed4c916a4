"""The ops as PyTorch citizens on CUDA tensors (skipped without an NVIDIA GPU), the GPU side of
tests/test_opcheck.py:

* torch.library.opcheck with the real CUDA kernels: the fake/Meta kernels must agree with what the
  device produces (shape, dtype, strides), inputs are not mutated, AOT dispatch with dynamic shapes;
* torch.compile(fullgraph=True, dynamic=True) with the inductor backend: one graph for two M, results
  bitwise equal to eager;
* torch.compile(mode="reduce-overhead"): inductor's CUDA graphs record and replay the ops (the way
  serving engines run decode steps), every replay with new inputs equal to eager."""
import pytest
import torch

import flygemm  # noqa: F401  (loads the ops)
from conftest import OPS, OUT_DTYPES, dtype_id, make_inputs
from test_opcheck import GemmModule, _allclose_for_byte_floats  # noqa: F401  (autouse fixture)

pytestmark = [pytest.mark.gpu_cuda, pytest.mark.skipif(
    not torch.cuda.is_available() or getattr(torch.version, "hip", None) is not None,
    reason="needs an NVIDIA GPU and a CUDA build of torch")]

ops = torch.ops.flygemm
N, K = 48, 256


def cuda_inputs(op, M, out_dtype, seed=0, layout="plain"):
    return make_inputs(op, M, N, K, layout, None, out_dtype, "fp32", device="cuda", seed=seed)


def _cases():
    for op in OPS:
        for out_dtype in OUT_DTYPES[op]:
            yield pytest.param(op, out_dtype, id=f"{op}-{dtype_id(out_dtype)}")


@pytest.mark.parametrize("op,out_dtype", list(_cases()))
def test_opcheck_on_cuda(op, out_dtype):
    for M in (1, 40):  # a decode kernel and a large-M kernel
        inp = cuda_inputs(op, M, out_dtype)
        torch.library.opcheck(getattr(ops, op).default, inp.args())
        out = torch.empty(M, N + 8, dtype=out_dtype, device="cuda")[:, :N]
        torch.library.opcheck(getattr(ops, op + "_out").default, inp.args(), {"out": out})


def _module_args(inp):
    return inp.a, inp.w, inp.a_scale, inp.w_scale, inp.bias


class FunctionalModule(torch.nn.Module):
    """The functional op on the given and on an in-graph preshuffled weight (no out= variant: under
    inductor the MX out variants hit pytorch#189522, see tests/test_opcheck.py)."""

    def __init__(self, op, out_dtype):
        super().__init__()
        self.op, self.out_dtype = getattr(ops, op), out_dtype

    def forward(self, a, w, a_scale, w_scale, bias):
        scales = () if a_scale is None else (a_scale, w_scale)
        return (self.op(a, w, *scales, bias, self.out_dtype),
                self.op(a, ops.preshuffle(w), *scales, bias, self.out_dtype))


@pytest.mark.parametrize("op", OPS)
def test_compile_inductor_dynamic_on_cuda(op):
    from torch._dynamo.testing import CompileCounterWithBackend

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    mx = op in ("gemm_mxfp8", "gemm_mxfp4")
    mod = (FunctionalModule if mx else GemmModule)(op, OUT_DTYPES[op][-1])
    compiled = torch.compile(mod, fullgraph=True, dynamic=True, backend=counter)
    for M, seed in ((9, 1), (37, 2)):  # M != K / 32 = 8: no duck-sized guard tying M to the scale width
        inp = cuda_inputs(op, M, OUT_DTYPES[op][-1], seed)
        got, want = compiled(*_module_args(inp)), mod(*_module_args(inp))
        for g, w in zip(got, want):
            assert g.shape == (M, N) and g.device.type == "cuda"
            assert torch.equal(g, w)
    assert counter.frame_count == 1, f"recompiled for a new M ({counter.frame_count} compiles)"


class Decode(torch.nn.Module):
    """One layer of a decode step: the GEMM plus a pointwise epilogue, as a serving engine compiles it."""

    def __init__(self, op):
        super().__init__()
        self.op = getattr(ops, op)

    def forward(self, a, w, a_scale, w_scale, bias):
        scales = () if a_scale is None else (a_scale, w_scale)
        y = self.op(a, w, *scales, bias, None)
        return y, torch.nn.functional.silu(y.float())


@pytest.mark.parametrize("op", OPS)
def test_compile_reduce_overhead_replays_the_op_in_cuda_graphs(op):
    torch._dynamo.reset()
    mod = Decode(op)
    compiled = torch.compile(mod, mode="reduce-overhead", fullgraph=True)
    for step in range(5):  # the first calls warm up and record, the later ones replay
        inp = cuda_inputs(op, 16, None, seed=10 + step)
        got = [t.clone() for t in compiled(*_module_args(inp))]  # replays reuse the graph's outputs
        torch.cuda.synchronize()
        want = mod(*_module_args(inp))
        assert torch.equal(got[0], want[0]), f"step {step}: GEMM output differs from eager"
        # the fused pointwise tail is inductor's code, not flygemm's: close, not necessarily bitwise
        torch.testing.assert_close(got[1], want[1], rtol=1e-5, atol=1e-5)
