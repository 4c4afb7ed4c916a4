"""flygemm: GEMM kernels for LLM inference as PyTorch custom ops.

Every op computes ``out[m, n] = round_out(sum_k A[m, k] * W[n, k] + bias[n])`` with A and W
dequantized, fp32 accumulation and a single rounding to the output dtype. The ops live in
``torch.ops.flygemm`` (schemas defined in C++); the functions here are thin, documented wrappers.

Weights are ``[N, K]`` (plain) or ``[N/16, K/kp, 16, kp]`` (preshuffled, see :func:`preshuffle`);
every op accepts both on every device.
"""
from __future__ import annotations

import json
import pathlib
from typing import Optional

import torch

__version__ = "0.1.0"

_LIB = pathlib.Path(__file__).with_name("_C.so")
if not _LIB.exists():
    raise ImportError(f"flygemm: the compiled library {_LIB} is missing; build with `pip install -e .`")
torch.ops.load_library(str(_LIB))

from . import quant  # noqa: E402  (after the library: quant is pure torch but part of the API)

ops = torch.ops.flygemm
Tensor = torch.Tensor

__all__ = [
    "gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4",
    "preshuffle", "unshuffle", "explain", "warmup", "info", "library_path", "quant",
]


def library_path() -> str:
    """Path of the compiled library (load it with ``torch.ops.load_library`` or link it from C++)."""
    return str(_LIB)


def _call(name: str, args: tuple, bias, out_dtype, out):
    if out is None:
        return getattr(ops, name)(*args, bias, out_dtype)
    getattr(ops, name + "_out")(*args, bias, out_dtype, out=out)
    return out


def gemm_a16w16(a: Tensor, w: Tensor, bias: Optional[Tensor] = None,
                out_dtype: Optional[torch.dtype] = None, out: Optional[Tensor] = None) -> Tensor:
    """bf16/fp16 GEMM: ``a [M, K] @ w[N, K].T (+ bias)``.

    a, w: same dtype (bfloat16 or float16); w plain [N, K] or preshuffled [N/16, K/8, 16, 8].
    bias: [N], float32 or the output dtype. out_dtype: bfloat16, float16 or float32 (default a.dtype).
    out: optional preallocated [M, N] output (rows may be padded: stride(0) >= N).
    """
    return _call("gemm_a16w16", (a, w), bias, out_dtype, out)


def gemm_a8w8(a: Tensor, w: Tensor, a_scale: Tensor, w_scale: Tensor, bias: Optional[Tensor] = None,
              out_dtype: Optional[torch.dtype] = None, out: Optional[Tensor] = None) -> Tensor:
    """Scaled 8-bit GEMM: ``(a * a_scale) @ (w * w_scale).T (+ bias)``.

    a, w: both float8_e4m3fn, both float8_e4m3fnuz, or both int8 (int8 sums are exact int32).
    a_scale: float32, 1 value (per-tensor) or M values ([M] or [M, 1], per-token).
    w_scale: float32, 1 value or N values (per-channel). out_dtype: bf16 (default), fp16, fp32.
    """
    return _call("gemm_a8w8", (a, w, a_scale, w_scale), bias, out_dtype, out)


def gemm_a8w8_blockscale(a: Tensor, w: Tensor, a_scale: Tensor, w_scale: Tensor, bias: Optional[Tensor] = None,
                         out_dtype: Optional[torch.dtype] = None, out: Optional[Tensor] = None) -> Tensor:
    """fp8 GEMM with block scales: a_scale float32 [M, ceil(K/128)] (1x128 blocks),
    w_scale float32 [ceil(N/128), ceil(K/128)] (128x128 blocks). out_dtype: bf16 (default) or fp16."""
    return _call("gemm_a8w8_blockscale", (a, w, a_scale, w_scale), bias, out_dtype, out)


def gemm_mxfp8(a: Tensor, w: Tensor, a_scale: Tensor, w_scale: Tensor, bias: Optional[Tensor] = None,
               out_dtype: Optional[torch.dtype] = None, out: Optional[Tensor] = None) -> Tensor:
    """OCP MXFP8 GEMM: a, w float8_e4m3fn; a_scale [M, K/32], w_scale [N, K/32] float8_e8m0fnu.
    K must be a multiple of 32. out_dtype: bf16 (default) or fp16."""
    return _call("gemm_mxfp8", (a, w, a_scale, w_scale), bias, out_dtype, out)


def gemm_mxfp4(a: Tensor, w: Tensor, a_scale: Tensor, w_scale: Tensor, bias: Optional[Tensor] = None,
               out_dtype: Optional[torch.dtype] = None, out: Optional[Tensor] = None) -> Tensor:
    """OCP MXFP4 GEMM: a [M, K/2], w [N, K/2] float4_e2m1fn_x2 (element 2j in the low nibble of
    byte j); a_scale [M, K/32], w_scale [N, K/32] float8_e8m0fnu. out_dtype: bf16 (default) or fp16."""
    return _call("gemm_mxfp4", (a, w, a_scale, w_scale), bias, out_dtype, out)


def preshuffle(w: Tensor) -> Tensor:
    """Plain [N, K] weight -> preshuffled [N/16, K/kp, 16, kp] (kp = 16 bytes of elements).

    Element (n, k) moves to ``[n // 16, k // kp, n % 16, k % kp]``; the bytes equal aiter's
    ``shuffle_weight(w, layout=(16, 16))``. Needs N % 16 == 0 and K % kp == 0. Inverse: :func:`unshuffle`.
    """
    return ops.preshuffle(w)


def unshuffle(w: Tensor) -> Tensor:
    """Preshuffled [N/16, K/kp, 16, kp] weight -> plain [N, K] (bit-exact inverse of :func:`preshuffle`)."""
    return ops.unshuffle(w)


def info() -> dict:
    """Version, backends, arches and the kernels compiled into this build."""
    return json.loads(ops._info())


def _arch_of(device) -> str:
    if isinstance(device, str) and device in ("sm_90a", "gfx942", "gfx950", "cpu"):
        return device
    device = torch.device(device)
    if device.type == "cpu":
        return "cpu"
    props = torch.cuda.get_device_properties(device)
    if getattr(torch.version, "hip", None):
        return props.gcnArchName.split(":")[0]
    arch = f"sm_{props.major}{props.minor}"
    return "sm_90a" if arch == "sm_90" else arch


def explain(op: str, M: int, N: int, K: int, dtype: torch.dtype = torch.bfloat16,
            device="cuda", out_dtype: Optional[torch.dtype] = None, w_layout: Optional[str] = None,
            device_name: Optional[str] = None) -> dict:
    """The kernel and split_k the dispatch table picks for a problem.

    op: an op name; "gemm_a8w8.row_scales" for a gemm_a8w8 call with a per-token a_scale or a per-channel
    w_scale (the table may pick differently for those).
    device: a torch device or an arch name ("sm_90a", "gfx942", "gfx950"). On "cpu" the answer
    is always the CPU reference implementation.
    w_layout: the weight the call passes, "plain" (2-D) or "preshuffled" (4-D); the ops prefer a
    kernel reading that layout natively when the table has one for the M bucket. None: as if
    unknown (the table's first choice).
    A torch device answers for that GPU's SM count, as the ops do (the default rows' one-wave rules
    count SMs); an arch name answers for the arch's reference part (sm_90a: 132 SMs).
    device_name: answer as on a device of that name ("NVIDIA H100 80GB HBM3": the table's H100 rows, those of op
    "<op>@H100"); None: a torch device's own name, the arch's reference part (sm_90a: the H200) for an arch name.
    """
    arch = _arch_of(device)
    if arch == "cpu":
        return {"kernel": "cpu_reference", "split_k": 1, "source": "cpu", "arch": "cpu"}
    if device_name is None:
        device_name = _device_name(device)
    return json.loads(ops._explain(op, M, N, K, dtype, out_dtype, arch, w_layout, _sm_count(device), device_name))


def _device_name(device) -> Optional[str]:
    """A GPU device's name (what the ops match "<op>@<part>" rows against), None for an arch name or no such device."""
    dev = _gpu(device)
    return None if dev is None else torch.cuda.get_device_name(dev)


def _gpu(device) -> Optional[torch.device]:
    """The torch GPU device `device` names, None for an arch name or a machine without that device."""
    if isinstance(device, str) and device in ("sm_90a", "gfx942", "gfx950", "cpu"):
        return None
    dev = torch.device(device)
    return dev if dev.type == "cuda" and torch.cuda.is_available() else None


def _sm_count(device) -> Optional[int]:
    """SMs (CUs) of a GPU device, None for an arch name or a machine without that device."""
    dev = _gpu(device)
    return None if dev is None else torch.cuda.get_device_properties(dev).multi_processor_count


def warmup(device=None) -> None:
    """Load every kernel module for `device` now (do this before capturing a CUDA/HIP graph)."""
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else "cpu"
    ops._warmup(torch.device(device))
