"""Shared test helpers: importability, GPU markers, random quantized inputs and an independent
float64 reference of the op contract (DESIGN.md, "Op contract").

The reference never calls a flygemm op: operands are dequantized with ``flygemm.quant``'s
dequantizers (the contract's "dequantized operand"), preshuffled weights are turned back into
``[N, K]`` with a reshape/permute written here from the layout definition, and the sum is taken in
float64. The CPU oracle accumulates in fp32 and rounds once, so it must lie within about one
ulp of the output dtype of this reference.
"""
from __future__ import annotations

import dataclasses
import pathlib
import sys
from typing import Optional

import pytest
import torch

_PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1] / "python"

try:
    import flygemm  # noqa: F401
except ImportError:
    if str(_PYTHON_DIR) not in sys.path:
        sys.path.insert(0, str(_PYTHON_DIR))
    try:
        import flygemm  # noqa: F401
    except ImportError:  # not built yet: tests that need it fail on their own import
        flygemm = None


# ----------------------------------------------------------------------------- markers

def _is_rocm() -> bool:
    return getattr(torch.version, "hip", None) is not None


def has_cuda_gpu() -> bool:
    return torch.cuda.is_available() and not _is_rocm()


def has_rocm_gpu() -> bool:
    return _is_rocm() and torch.cuda.is_available()


def pytest_configure(config):
    # Also declared in pyproject.toml; repeated so the markers exist when pytest runs elsewhere.
    config.addinivalue_line("markers", "gpu_cuda: needs an NVIDIA GPU with the CUDA backend (skipped elsewhere)")
    config.addinivalue_line("markers", "gpu_rocm: needs an AMD GPU with the ROCm backend (skipped elsewhere)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu_cuda") and not has_cuda_gpu():
        pytest.skip("needs an NVIDIA GPU and a CUDA build of torch")
    if item.get_closest_marker("gpu_rocm") and not has_rocm_gpu():
        pytest.skip("needs an AMD GPU and a ROCm build of torch")


# ----------------------------------------------------------------------------- op tables

OPS = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4")
SCALED_OPS = OPS[1:]

#: Input dtypes per op (the first is the one used when a test does not care).
IN_DTYPES = {
    "gemm_a16w16": (torch.bfloat16, torch.float16),
    "gemm_a8w8": (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.int8),
    "gemm_a8w8_blockscale": (torch.float8_e4m3fn, torch.float8_e4m3fnuz),
    "gemm_mxfp8": (torch.float8_e4m3fn,),
    "gemm_mxfp4": (torch.float4_e2m1fn_x2,),
}

#: Allowed output dtypes per op, per the contract.
OUT_DTYPES = {
    "gemm_a16w16": (torch.bfloat16, torch.float16, torch.float32),
    "gemm_a8w8": (torch.bfloat16, torch.float16, torch.float32),
    "gemm_a8w8_blockscale": (torch.bfloat16, torch.float16),
    "gemm_mxfp8": (torch.bfloat16, torch.float16),
    "gemm_mxfp4": (torch.bfloat16, torch.float16),
}


def default_out_dtype(op: str, in_dtype: torch.dtype) -> torch.dtype:
    return in_dtype if op == "gemm_a16w16" else torch.bfloat16


def kp_of(dtype: torch.dtype) -> int:
    """Storage elements per 16 bytes along K in the preshuffled layout."""
    return 16 // torch.empty(0, dtype=dtype).element_size()


def dtype_id(d) -> str:
    return str(d).replace("torch.", "")


# ----------------------------------------------------------------------------- layout (independent)

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(_BITS[t.element_size()])


def shuffle_ref(w: torch.Tensor) -> torch.Tensor:
    """Plain [N, Ks] -> [N/16, Ks/kp, 16, kp]: element (n, k) at [n//16, k//kp, n%16, k%kp]."""
    N, Ks = w.shape
    kp = kp_of(w.dtype)
    out = torch.empty((N // 16, Ks // kp, 16, kp), dtype=_BITS[w.element_size()])
    src = _bits(w.contiguous())
    for n in range(N):  # a slow explicit loop on purpose: independent of any reshape trick
        for kb in range(Ks // kp):
            out[n // 16, kb, n % 16] = src[n, kb * kp:(kb + 1) * kp]
    return out.view(w.dtype)


def unshuffle_ref(w: torch.Tensor) -> torch.Tensor:
    """[N/16, Ks/kp, 16, kp] -> plain [N, Ks] (the inverse of the layout definition)."""
    if w.dim() == 2:
        return w
    nb, kb, r, kp = w.shape
    assert r == 16 and kp == kp_of(w.dtype), w.shape
    return _bits(w).permute(0, 2, 1, 3).reshape(nb * 16, kb * kp).view(w.dtype)


# ----------------------------------------------------------------------------- inputs

@dataclasses.dataclass
class Inputs:
    op: str
    M: int
    N: int
    K: int
    a: torch.Tensor
    w: torch.Tensor  # in the requested layout
    a_scale: Optional[torch.Tensor]
    w_scale: Optional[torch.Tensor]
    bias: Optional[torch.Tensor]
    out_dtype: Optional[torch.dtype]  # as passed to the op (None: default)
    in_dtype: torch.dtype
    a_scale_kind: str = "none"
    w_scale_kind: str = "none"

    @property
    def resolved_out_dtype(self) -> torch.dtype:
        return self.out_dtype or default_out_dtype(self.op, self.in_dtype)

    def args(self) -> tuple:
        """Positional arguments of torch.ops.flygemm.<op> (bias and out_dtype included)."""
        if self.op == "gemm_a16w16":
            return (self.a, self.w, self.bias, self.out_dtype)
        return (self.a, self.w, self.a_scale, self.w_scale, self.bias, self.out_dtype)

    def with_(self, **kw) -> "Inputs":
        return dataclasses.replace(self, **kw)


def _quantize_rows(x: torch.Tensor, dtype: torch.dtype, kind: str):
    from flygemm import quant

    if kind == "tensor":
        return quant.quantize_fp8_per_tensor(x, dtype)
    if kind in ("token", "channel", "row"):
        return quant.quantize_fp8_per_token(x, dtype)
    if kind in ("token2d", "channel2d"):  # per-row as [R, 1]
        q, s = quant.quantize_fp8_per_token(x, dtype)
        return q, s.reshape(-1, 1)
    raise ValueError(kind)


def make_inputs(op: str, M: int, N: int, K: int, layout: str = "plain", in_dtype=None, out_dtype=None,
                bias_kind: str = "none", device="cpu", *, a_scale_kind: Optional[str] = None,
                w_scale_kind: Optional[str] = None, seed: int = 0) -> Inputs:
    """Fresh random operands for `op`, quantized through flygemm.quant (never all zeros).

    layout: "plain" or "preshuffled" (through flygemm.preshuffle). bias_kind: "none", "fp32" or
    "out" (the output dtype). a8w8 scale kinds: a "tensor" | "token" | "token2d",
    w "tensor" | "channel" | "channel2d" (defaults: token / channel).
    """
    from flygemm import quant

    in_dtype = in_dtype or IN_DTYPES[op][0]
    g = torch.Generator().manual_seed(seed * 1000003 + M * 7919 + N * 104729 + K * 31)
    # Values with a spread of magnitudes within each row so block scales differ.
    xa = torch.randn(M, K, generator=g) * torch.exp2(torch.randint(-3, 4, (M, 1), generator=g).float())
    xw = torch.randn(N, K, generator=g) * torch.exp2(torch.randint(-3, 4, (1, K), generator=g).float())
    sa = sw = None
    ak = wk = "none"
    if op == "gemm_a16w16":
        a, w = xa.to(in_dtype), xw.to(in_dtype)
    elif op == "gemm_a8w8":
        ak, wk = a_scale_kind or "token", w_scale_kind or "channel"
        a, sa = _quantize_rows(xa, in_dtype, ak)
        w, sw = _quantize_rows(xw, in_dtype, wk)
    elif op == "gemm_a8w8_blockscale":
        ak = wk = "block"
        a, sa = quant.quantize_fp8_blockscale_act(xa, 128, in_dtype)
        w, sw = quant.quantize_fp8_blockscale_weight(xw, 128, in_dtype)
    elif op == "gemm_mxfp8":
        ak = wk = "mx"
        a, sa = quant.quantize_mxfp8(xa)
        w, sw = quant.quantize_mxfp8(xw)
    elif op == "gemm_mxfp4":
        ak = wk = "mx"
        a, sa = quant.quantize_mxfp4(xa)
        w, sw = quant.quantize_mxfp4(xw)
    else:
        raise ValueError(op)
    resolved = out_dtype or default_out_dtype(op, in_dtype)
    if bias_kind == "none":
        bias = None
    elif bias_kind == "fp32":
        bias = torch.randn(N, generator=g)
    elif bias_kind == "out":
        bias = torch.randn(N, generator=g).to(resolved)
    else:
        raise ValueError(bias_kind)
    if layout == "preshuffled":
        import flygemm as fg

        w = fg.preshuffle(w)
    elif layout != "plain":
        raise ValueError(layout)
    dev = torch.device(device)
    mv = (lambda t: None if t is None else t.to(dev))
    return Inputs(op, M, N, K, mv(a), mv(w), mv(sa), mv(sw), mv(bias), out_dtype, in_dtype, ak, wk)


# ----------------------------------------------------------------------------- reference

def dequantized_operands(inp: Inputs):
    """fp32 dequantized A [M, K] and W [N, K] per the contract, through flygemm.quant."""
    from flygemm import quant

    a, w = inp.a.cpu(), unshuffle_ref(inp.w.cpu())
    sa = None if inp.a_scale is None else inp.a_scale.cpu()
    sw = None if inp.w_scale is None else inp.w_scale.cpu()
    op = inp.op
    if op == "gemm_a16w16":
        return a.float(), w.float()
    if op == "gemm_a8w8":
        def rows(q, s):  # one value: per-tensor (also what a per-row scale of one row means)
            if s.numel() == 1:
                return quant.dequantize_fp8_per_tensor(q, s.reshape(1))
            return quant.dequantize_rowwise(q, s.reshape(-1))
        return rows(a, sa), rows(w, sw)
    if op == "gemm_a8w8_blockscale":
        return quant.dequantize_blockscale_act(a, sa), quant.dequantize_blockscale_weight(w, sw)
    if op == "gemm_mxfp8":
        return quant.dequantize_mxfp8(a, sa), quant.dequantize_mxfp8(w, sw)
    if op == "gemm_mxfp4":
        return quant.dequantize_mxfp4(a, sa), quant.dequantize_mxfp4(w, sw)
    raise ValueError(op)


def reference(inp: Inputs) -> torch.Tensor:
    """float64 [M, N] = A @ W.T + bias from the dequantized operands (not rounded)."""
    A, W = dequantized_operands(inp)
    ref = A.double() @ W.double().T
    if inp.bias is not None:
        ref = ref + inp.bias.cpu().double()[None, :]
    return ref


def abs_reference(inp: Inputs) -> torch.Tensor:
    """float64 sum_k |A[m, k] W[n, k]| (+ |bias|): the scale of the fp32 accumulation error."""
    A, W = dequantized_operands(inp)
    ref = A.double().abs() @ W.double().abs().T
    if inp.bias is not None:
        ref = ref + inp.bias.cpu().double().abs()[None, :]
    return ref


def rel_fro_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in float64 (the absolute error when ref is all zero)."""
    out, ref = out.detach().cpu().double(), ref.detach().cpu().double()
    diff = torch.linalg.norm(out - ref).item()
    denom = torch.linalg.norm(ref).item()
    return diff / denom if denom > 0 else diff


_TINY = {torch.bfloat16: 2.0**-133, torch.float16: 2.0**-24, torch.float32: 2.0**-149}


def assert_matches_reference(out: torch.Tensor, inp: Inputs, ref: Optional[torch.Tensor] = None):
    """The op result is the float64 reference rounded once to the output dtype.

    fp32 output: relative Frobenius error <= 1e-5. bf16/fp16: elementwise
    |out - ref| <= eps_out * |ref| + (fp32 accumulation bound) + the dtype's smallest subnormal,
    i.e. within one ulp of the output dtype (correct rounding allows half an ulp; the rest is
    room for the fp32 sum crossing a rounding boundary).
    """
    dt = inp.resolved_out_dtype
    assert out.dtype == dt, (out.dtype, dt)
    assert tuple(out.shape) == (inp.M, inp.N)
    ref = reference(inp) if ref is None else ref
    got = out.detach().cpu().double()
    assert torch.isfinite(got).all(), "non-finite output"
    if dt == torch.float32:
        err = rel_fro_err(got, ref)
        assert err <= 1e-5, f"rel Frobenius error {err:.3e} > 1e-5"
        return
    eps32 = 2.0**-24
    acc = 2.0 * (inp.K + 2) * eps32 * abs_reference(inp)
    tol = torch.finfo(dt).eps * ref.abs() + acc + _TINY[dt]
    diff = (got - ref).abs()
    bad = diff > tol
    if bad.any():
        idx = bad.nonzero()[0].tolist()
        raise AssertionError(
            f"{int(bad.sum())} of {bad.numel()} elements off by more than one {dtype_id(dt)} ulp; first at "
            f"{idx}: got {got[tuple(idx)].item()!r}, reference {ref[tuple(idx)].item()!r}, tol {tol[tuple(idx)].item():.3e}")


def call_op(inp: Inputs, out: Optional[torch.Tensor] = None):
    """Calls torch.ops.flygemm.<op> (functional) or <op>_out when `out` is given."""
    if out is None:
        return getattr(torch.ops.flygemm, inp.op)(*inp.args())
    getattr(torch.ops.flygemm, inp.op + "_out")(*inp.args(), out=out)
    return out
