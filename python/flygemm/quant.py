"""Weight and activation quantization utilities for flygemm.

These functions produce (and invert) exactly the operand formats that the flygemm ops
consume (see the op contract in DESIGN.md):

========================  ==========================  ===========================================
quantizer                 values                      scale
========================  ==========================  ===========================================
per-tensor                fp8 e4m3fn/e4m3fnuz, int8   fp32 ``[1]``
per-token (activation)    fp8 / int8 ``[M, K]``       fp32 ``[M]``   (one per row of A)
per-channel (weight)      fp8 / int8 ``[N, K]``       fp32 ``[N]``   (one per output channel)
blockscale activation     fp8 ``[M, K]``              fp32 ``[M, ceil(K/128)]``   (1x128 blocks)
blockscale weight         fp8 ``[N, K]``              fp32 ``[ceil(N/128), ceil(K/128)]`` (128x128)
MXFP8 (OCP MX v1.0)       e4m3fn ``[R, K]``           e8m0 ``[R, K/32]``
MXFP4 (OCP MX v1.0)       e2m1 x2 ``[R, K/2]``        e8m0 ``[R, K/32]``
========================  ==========================  ===========================================

Conventions shared by every function here:

* Pure torch, vectorized; every tensor is created on the input's device, so the same code
  runs on CPU, CUDA and ROCm. Nothing reads data back to the host (validation looks only at
  dtypes and shapes) and no host tensor is copied to the device, so the functions do not
  synchronize and are meant to be usable under CUDA graph capture (not tested on a GPU).
* Floating inputs (fp32, fp16, bf16, fp64) are first converted to fp32; all arithmetic is in
  fp32. (fp64 inputs are therefore rounded to fp32 before quantization.)
* Dequantizers return fp32 ``q * scale`` with the scale broadcast over its block, which is
  exactly the "dequantized operand" of the op contract.
* Invalid arguments raise ``TypeError`` (wrong type or dtype) or ``ValueError`` (wrong shape
  or value) with a message naming the function, the argument, what was expected and what was
  given.

Scaled fp8 / int8 (per-tensor, per-token, per-channel, blockscale)
------------------------------------------------------------------
``scale = amax / qmax`` over the group (qmax: 448 for ``float8_e4m3fn``, 240 for
``float8_e4m3fnuz``, 127 for ``int8``). An all-zero group gets ``scale = 1``; a nonzero
group whose ``amax / qmax`` is below the smallest normal fp32 (``2**-126``) gets
``scale = 2**-126`` so that the scale is never zero or subnormal.
``q = saturate(x / scale)``: fp8 rounds to nearest, ties to even, after clamping to
``[-qmax, qmax]`` (never NaN for finite inputs, also for e4m3fnuz whose overflow would be
NaN); int8 rounds half to even and clamps to ``[-127, 127]`` (symmetric: -128 is never used).
Non-finite inputs are not checked (that would need a host sync): a NaN or Inf in a group
gives a NaN/Inf scale for the group, and int8 results of NaN are unspecified.

OCP MX (MXFP8 / MXFP4)
----------------------
Blocks of 32 consecutive elements along the last dimension K share one E8M0 scale
(OCP Microscaling Formats (MX) v1.0, section 6.3):

* ``X = floor(log2(amax(|block|))) - emax_elem`` with ``emax_elem = 8`` for e4m3 and ``2`` for
  e2m1, clamped to the E8M0 range ``[-127, 127]``; the scale byte is ``X + 127``.
  Any block whose amax is zero or an fp32 subnormal gets ``X = -127`` (byte 0, scale
  ``2**-127``), so an all-zero block has scale ``2**-127`` and all-zero elements.
* Elements are ``x / 2**X`` rounded to nearest, ties to even, and saturated to the element
  format's max magnitude (448 for e4m3, 6.0 for e2m1). Because ``amax / 2**X`` lies in
  ``[2**emax, 2**(emax+1))``, the largest elements of a block may saturate (e.g. e2m1
  values in (6, 8) clamp to 6), as the spec prescribes.
* NaN / Inf: a block containing any NaN or +-Inf gets the E8M0 NaN scale (byte 0xFF) and all
  its element bytes are zero; it dequantizes to NaN everywhere. Other blocks are unaffected.
* The sign of zero is kept (a negative value that rounds to zero is encoded as -0), as in
  IEEE conversions.
* E2M1 nibbles: bit 3 sign, bits 2..1 exponent (bias 1), bit 0 mantissa; magnitudes
  ``0, 0.5, 1, 1.5, 2, 3, 4, 6`` for codes 0..7. Packing (``torch.float4_e2m1fn_x2``):
  byte ``j`` of a row holds element ``2j`` in the LOW nibble and element ``2j+1`` in the
  HIGH nibble.

Torch dtype notes (torch 2.13): ``float8_e8m0fnu`` and ``float4_e2m1fn_x2`` have element size
1 byte and support ``.view(torch.uint8)`` both ways, ``empty``, ``clone``, ``cat``, slicing and
``==``. ``float4_e2m1fn_x2`` supports no conversion at all (``.to`` raises), so this module
works on uint8 views. This module never relies on torch's own e8m0 conversions either: it
builds and decodes E8M0 bytes with integer bit operations.
"""

from __future__ import annotations

import torch

__all__ = [
    "FP8_MAX",
    "E2M1_VALUES",
    "MX_BLOCK",
    "quantize_fp8_per_tensor",
    "quantize_fp8_per_token",
    "quantize_fp8_per_channel",
    "quantize_fp8_blockscale_act",
    "quantize_fp8_blockscale_weight",
    "quantize_mxfp8",
    "quantize_mxfp4",
    "dequantize_fp8_per_tensor",
    "dequantize_rowwise",
    "dequantize_per_token",
    "dequantize_per_channel",
    "dequantize_blockscale_act",
    "dequantize_blockscale_weight",
    "dequantize_mxfp8",
    "dequantize_mxfp4",
    "e8m0_to_float",
    "pack_fp4",
    "unpack_fp4",
]

#: Largest finite magnitude of each scaled 8-bit format (the ``qmax`` of the scale rule).
FP8_MAX = {
    torch.float8_e4m3fn: 448.0,
    torch.float8_e4m3fnuz: 240.0,
    torch.int8: 127.0,
}

#: Magnitudes of the E2M1 codes 0..7 (code 8..15 are the negatives).
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)

#: Number of elements along K that share one E8M0 scale.
MX_BLOCK = 32

_FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e4m3fnuz)
_SCALED_DTYPES = (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.int8)
_FLOAT_INPUTS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
_FP32_TINY = 2.0**-126  # smallest normal fp32
_E4M3_EMAX = 8  # exponent of the largest e4m3 binade (448 = 1.75 * 2**8)
_E2M1_EMAX = 2  # exponent of the largest e2m1 binade (6 = 1.5 * 2**2)
_E4M3_MAX = 448.0
_E2M1_MAX = 6.0
# Decision points between consecutive E2M1 magnitudes; index i separates codes i and i+1.
_E2M1_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)


# ----------------------------------------------------------------------------- validation


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _check_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{fn}: argument '{name}' must be a torch.Tensor, got {type(x).__name__}")


def _check_float_input(fn: str, name: str, x, ndim: int | None = None) -> None:
    _check_tensor(fn, name, x)
    if x.dtype not in _FLOAT_INPUTS:
        raise TypeError(
            f"{fn}: argument '{name}' must have a floating dtype "
            f"(float32, float16, bfloat16 or float64), got {_dtype_name(x.dtype)}"
        )
    if ndim is not None and x.dim() != ndim:
        raise ValueError(
            f"{fn}: argument '{name}' must be {ndim}-D, got {x.dim()}-D with shape {tuple(x.shape)}"
        )


def _check_dtype_arg(fn: str, dtype, allowed) -> None:
    names = ", ".join(_dtype_name(d) for d in allowed)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{fn}: argument 'dtype' must be a torch.dtype (one of {names}), got {dtype!r}")
    if dtype not in allowed:
        raise ValueError(f"{fn}: argument 'dtype' must be one of {names}, got {_dtype_name(dtype)}")


def _check_block(fn: str, block) -> None:
    if isinstance(block, bool) or not isinstance(block, int):
        raise TypeError(f"{fn}: argument 'block' must be an int, got {type(block).__name__}")
    if block <= 0:
        raise ValueError(f"{fn}: argument 'block' must be positive, got {block}")


def _check_q(fn: str, q, allowed, ndim: int | None = None) -> None:
    _check_tensor(fn, "q", q)
    if q.dtype not in allowed:
        names = ", ".join(_dtype_name(d) for d in allowed)
        raise TypeError(f"{fn}: argument 'q' must have dtype {names}, got {_dtype_name(q.dtype)}")
    if ndim is not None and q.dim() != ndim:
        raise ValueError(f"{fn}: argument 'q' must be {ndim}-D, got {q.dim()}-D with shape {tuple(q.shape)}")


def _check_scale(fn: str, scale, shape, dtypes=(torch.float32,), device=None) -> None:
    _check_tensor(fn, "scale", scale)
    if scale.dtype not in dtypes:
        names = " or ".join(_dtype_name(d) for d in dtypes)
        raise TypeError(f"{fn}: argument 'scale' must have dtype {names}, got {_dtype_name(scale.dtype)}")
    if shape is not None and tuple(scale.shape) != tuple(shape):
        raise ValueError(
            f"{fn}: argument 'scale' must have shape {list(shape)}, got {list(scale.shape)}"
        )
    if device is not None and scale.device != device:
        raise ValueError(f"{fn}: argument 'scale' must be on device {device} (like 'q'), got {scale.device}")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ----------------------------------------------------------------------------- scaled fp8 / int8


def _scale_from_amax(amax: torch.Tensor, qmax: float) -> torch.Tensor:
    """fp32 scale = amax / qmax; 1 where amax == 0; at least 2**-126 otherwise."""
    # A tensor divisor, not the Python float: torch on CUDA turns division by a scalar into a
    # multiplication by its rounded reciprocal, one ulp off the CPU's quotient for some amax,
    # and the scale must not depend on the device that quantized.
    scale = (amax / torch.full_like(amax, qmax)).clamp_min(_FP32_TINY)
    return torch.where(amax == 0, torch.ones_like(scale), scale)


def _cast_scaled(xs: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Saturating round-to-nearest-even conversion of already scaled fp32 values."""
    qmax = FP8_MAX[dtype]
    if dtype == torch.int8:
        # torch.round rounds half to even.
        return torch.round(xs).clamp(-qmax, qmax).to(torch.int8)
    return xs.clamp(-qmax, qmax).to(dtype)


def _rowwise_amax(xf: torch.Tensor) -> torch.Tensor:
    if xf.shape[1] == 0:
        return xf.new_zeros(xf.shape[0])
    return xf.abs().amax(dim=1)


def quantize_fp8_per_tensor(x: torch.Tensor, dtype: torch.dtype = torch.float8_e4m3fn):
    """Quantize ``x`` (any shape) with one fp32 scale for the whole tensor.

    Args:
        x: floating tensor (fp32/fp16/bf16/fp64), any shape.
        dtype: ``torch.float8_e4m3fn`` (max 448), ``torch.float8_e4m3fnuz`` (max 240) or
            ``torch.int8`` (symmetric, max 127).

    Returns:
        ``(q, scale)``: ``q`` of ``dtype`` and ``x``'s shape, ``scale`` fp32 of shape ``[1]``,
        with ``q * scale ~= x``. ``scale = amax(|x|) / qmax`` (1 if ``x`` is all zero),
        ``q = saturate(round_half_even(x / scale))``.
    """
    fn = "quantize_fp8_per_tensor"
    _check_float_input(fn, "x", x)
    _check_dtype_arg(fn, dtype, _SCALED_DTYPES)
    xf = x.float()
    amax = xf.abs().amax().reshape(1) if xf.numel() else xf.new_zeros(1)
    scale = _scale_from_amax(amax, FP8_MAX[dtype])
    return _cast_scaled(xf / scale.reshape(()), dtype), scale


def _quantize_rowwise(fn: str, name: str, x, dtype):
    _check_float_input(fn, name, x, ndim=2)
    _check_dtype_arg(fn, dtype, _SCALED_DTYPES)
    xf = x.float()
    scale = _scale_from_amax(_rowwise_amax(xf), FP8_MAX[dtype])
    return _cast_scaled(xf / scale[:, None], dtype), scale


def quantize_fp8_per_token(x: torch.Tensor, dtype: torch.dtype = torch.float8_e4m3fn):
    """Quantize an activation ``x [M, K]`` with one fp32 scale per row (token).

    Returns ``(q [M, K] of dtype, scale fp32 [M])`` with ``q[m] * scale[m] ~= x[m]``; the scale
    rule is that of :func:`quantize_fp8_per_tensor` applied to each row. ``dtype``:
    ``float8_e4m3fn``, ``float8_e4m3fnuz`` or ``int8``.
    """
    return _quantize_rowwise("quantize_fp8_per_token", "x", x, dtype)


def quantize_fp8_per_channel(w: torch.Tensor, dtype: torch.dtype = torch.float8_e4m3fn):
    """Quantize a weight ``w [N, K]`` with one fp32 scale per output channel (row).

    Returns ``(q [N, K] of dtype, scale fp32 [N])`` with ``q[n] * scale[n] ~= w[n]``; the scale
    rule is that of :func:`quantize_fp8_per_tensor` applied to each row. ``dtype``:
    ``float8_e4m3fn``, ``float8_e4m3fnuz`` or ``int8``.
    """
    return _quantize_rowwise("quantize_fp8_per_channel", "w", w, dtype)


def quantize_fp8_blockscale_act(
    x: torch.Tensor, block: int = 128, dtype: torch.dtype = torch.float8_e4m3fn
):
    """Quantize an activation ``x [M, K]`` with one fp32 scale per 1 x ``block`` block.

    Returns ``(q [M, K] of dtype, scale fp32 [M, ceil(K / block)])``; block ``(m, j)`` covers
    ``x[m, j*block : (j+1)*block]`` (the last block of a row may be partial). Each block uses
    the scale rule of :func:`quantize_fp8_per_tensor`. ``dtype``: ``float8_e4m3fn`` or
    ``float8_e4m3fnuz``. The ops use ``block = 128``.
    """
    fn = "quantize_fp8_blockscale_act"
    _check_float_input(fn, "x", x, ndim=2)
    _check_block(fn, block)
    _check_dtype_arg(fn, dtype, _FP8_DTYPES)
    xf = x.float()
    M, K = xf.shape
    nb = _cdiv(K, block)
    padded = torch.nn.functional.pad(xf.abs(), (0, nb * block - K))
    amax = padded.view(M, nb, block).amax(dim=2)
    scale = _scale_from_amax(amax, FP8_MAX[dtype])
    expanded = scale.repeat_interleave(block, dim=1)[:, :K]
    return _cast_scaled(xf / expanded, dtype), scale


def quantize_fp8_blockscale_weight(
    w: torch.Tensor, block: int = 128, dtype: torch.dtype = torch.float8_e4m3fn
):
    """Quantize a weight ``w [N, K]`` with one fp32 scale per ``block`` x ``block`` tile.

    Returns ``(q [N, K] of dtype, scale fp32 [ceil(N / block), ceil(K / block)])``; tile
    ``(i, j)`` covers ``w[i*block : (i+1)*block, j*block : (j+1)*block]`` (edge tiles may be
    partial in either dimension). Each tile uses the scale rule of
    :func:`quantize_fp8_per_tensor`. ``dtype``: ``float8_e4m3fn`` or ``float8_e4m3fnuz``.
    The ops use ``block = 128``.
    """
    fn = "quantize_fp8_blockscale_weight"
    _check_float_input(fn, "w", w, ndim=2)
    _check_block(fn, block)
    _check_dtype_arg(fn, dtype, _FP8_DTYPES)
    wf = w.float()
    N, K = wf.shape
    nbn, nbk = _cdiv(N, block), _cdiv(K, block)
    padded = torch.nn.functional.pad(wf.abs(), (0, nbk * block - K, 0, nbn * block - N))
    amax = padded.view(nbn, block, nbk, block).amax(dim=(1, 3))
    scale = _scale_from_amax(amax, FP8_MAX[dtype])
    expanded = scale.repeat_interleave(block, dim=0).repeat_interleave(block, dim=1)[:N, :K]
    return _cast_scaled(wf / expanded, dtype), scale


def dequantize_fp8_per_tensor(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantize_fp8_per_tensor`: fp32 ``q * scale``.

    ``q``: fp8 (e4m3fn / e4m3fnuz) or int8, any shape; ``scale``: fp32 with one element
    (shape ``[1]`` or ``[]``).
    """
    fn = "dequantize_fp8_per_tensor"
    _check_q(fn, q, _SCALED_DTYPES)
    _check_scale(fn, scale, None, device=q.device)
    if scale.numel() != 1:
        raise ValueError(f"{fn}: argument 'scale' must have exactly one element, got shape {list(scale.shape)}")
    return q.float() * scale.reshape(())


def dequantize_rowwise(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of per-token / per-channel quantization: fp32 ``q[r, :] * scale[r]``.

    ``q``: fp8 (e4m3fn / e4m3fnuz) or int8 ``[R, K]``; ``scale``: fp32 ``[R]``.
    """
    return _dequantize_rowwise("dequantize_rowwise", q, scale)


def _dequantize_rowwise(fn: str, q, scale):
    _check_q(fn, q, _SCALED_DTYPES, ndim=2)
    _check_scale(fn, scale, (q.shape[0],), device=q.device)
    return q.float() * scale[:, None]


def dequantize_per_token(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantize_fp8_per_token` (same as :func:`dequantize_rowwise`)."""
    return _dequantize_rowwise("dequantize_per_token", q, scale)


def dequantize_per_channel(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantize_fp8_per_channel` (same as :func:`dequantize_rowwise`)."""
    return _dequantize_rowwise("dequantize_per_channel", q, scale)


def dequantize_blockscale_act(q: torch.Tensor, scale: torch.Tensor, block: int = 128) -> torch.Tensor:
    """Inverse of :func:`quantize_fp8_blockscale_act`: fp32 ``q[m, k] * scale[m, k // block]``.

    ``q``: fp8 ``[M, K]``; ``scale``: fp32 ``[M, ceil(K / block)]``.
    """
    fn = "dequantize_blockscale_act"
    _check_q(fn, q, _FP8_DTYPES, ndim=2)
    _check_block(fn, block)
    M, K = q.shape
    _check_scale(fn, scale, (M, _cdiv(K, block)), device=q.device)
    return q.float() * scale.repeat_interleave(block, dim=1)[:, :K]


def dequantize_blockscale_weight(q: torch.Tensor, scale: torch.Tensor, block: int = 128) -> torch.Tensor:
    """Inverse of :func:`quantize_fp8_blockscale_weight`:
    fp32 ``q[n, k] * scale[n // block, k // block]``.

    ``q``: fp8 ``[N, K]``; ``scale``: fp32 ``[ceil(N / block), ceil(K / block)]``.
    """
    fn = "dequantize_blockscale_weight"
    _check_q(fn, q, _FP8_DTYPES, ndim=2)
    _check_block(fn, block)
    N, K = q.shape
    _check_scale(fn, scale, (_cdiv(N, block), _cdiv(K, block)), device=q.device)
    expanded = scale.repeat_interleave(block, dim=0).repeat_interleave(block, dim=1)[:N, :K]
    return q.float() * expanded


# ----------------------------------------------------------------------------- OCP MX


def _pow2_from_biased(biased: torch.Tensor) -> torch.Tensor:
    """fp32 ``2**(biased - 127)`` for int32 ``biased`` in [1, 254], built from bits (exact)."""
    return (biased << 23).view(torch.float32)


def e8m0_to_float(scale: torch.Tensor) -> torch.Tensor:
    """Decode E8M0 scales (``torch.float8_e8m0fnu`` or their uint8 bytes) to fp32.

    Byte ``b`` decodes to ``2**(b - 127)``; byte 0 is ``2**-127`` (an fp32 subnormal) and byte
    255 is NaN. Same result as torch 2.13's ``scale.to(torch.float32)``, but computed with
    integer bit operations so it does not depend on the device's e8m0 conversion support.
    """
    fn = "e8m0_to_float"
    _check_tensor(fn, "scale", scale)
    if scale.dtype not in (torch.float8_e8m0fnu, torch.uint8):
        raise TypeError(
            f"{fn}: argument 'scale' must have dtype float8_e8m0fnu or uint8, got {_dtype_name(scale.dtype)}"
        )
    b = scale.view(torch.uint8).to(torch.int32)
    bits = torch.where(b == 0, torch.full_like(b, 0x00400000), b << 23)
    bits = torch.where(b == 255, torch.full_like(b, 0x7FC00000), bits)
    return bits.view(torch.float32)


def _mx_prepare(fn: str, x, emax: int):
    """Shared MX step: returns (scaled fp32 values [R, K], scale bytes uint8 [R, K/32])."""
    _check_float_input(fn, "x", x, ndim=2)
    R, K = x.shape
    if K % MX_BLOCK != 0:
        raise ValueError(
            f"{fn}: argument 'x' must have K (dim 1) divisible by {MX_BLOCK}, got shape {list(x.shape)}"
        )
    xf = x.float().reshape(R, K // MX_BLOCK, MX_BLOCK)
    amax = xf.abs().amax(dim=2)
    # floor(log2(amax)) from the fp32 exponent field. amax >= 0, so the sign bit is clear.
    # A zero or subnormal amax has field 0, giving X = -127 - emax which clamps to -127.
    field = (amax.view(torch.int32) >> 23) & 0xFF
    nonfinite = field == 0xFF  # Inf or NaN somewhere in the block
    X = (field - 127 - emax).clamp(-127, 127)
    # For finite fp32 input field <= 254, so X <= 127 - emax and 127 - X >= 2: the inverse
    # scale 2**-X is a normal fp32 and the multiplication below is exact.
    inv = _pow2_from_biased(torch.where(nonfinite, torch.full_like(X, 127), 127 - X))
    xs = xf * inv[:, :, None]
    xs = torch.where(nonfinite[:, :, None], torch.zeros_like(xs), xs)
    scale_bytes = torch.where(nonfinite, torch.full_like(X, 255), X + 127).to(torch.uint8)
    return xs.reshape(R, K), scale_bytes


def quantize_mxfp8(x: torch.Tensor):
    """OCP MXFP8 (E4M3 elements, E8M0 scale per 32 elements along K).

    Args:
        x: floating tensor ``[R, K]`` with ``K % 32 == 0``.

    Returns:
        ``(q, scale)``: ``q`` ``torch.float8_e4m3fn [R, K]``, ``scale`` ``torch.float8_e8m0fnu
        [R, K / 32]`` with ``x[r, k] ~= q[r, k] * 2**(scale_byte[r, k // 32] - 127)``.
        ``X = floor(log2(block amax)) - 8`` clamped to ``[-127, 127]``; elements are
        ``x / 2**X`` rounded to nearest even and saturated to +-448. All-zero blocks get scale
        byte 0 (``2**-127``); blocks containing NaN/Inf get scale byte 255 (NaN) and zero
        elements. See the module docstring.
    """
    xs, sb = _mx_prepare("quantize_mxfp8", x, _E4M3_EMAX)
    q = xs.clamp(-_E4M3_MAX, _E4M3_MAX).to(torch.float8_e4m3fn)
    return q, sb.view(torch.float8_e8m0fnu)


def _e2m1_codes(v: torch.Tensor) -> torch.Tensor:
    """Round fp32 values to E2M1 nibble codes (uint8 0..15): RNE, saturating to +-6.

    NaN has no E2M1 encoding and maps to code 0 (+0).
    """
    a = v.abs().clamp(max=_E2M1_MAX)
    code = torch.zeros(a.shape, dtype=torch.uint8, device=a.device)
    # Count the decision points below |v| (a loop over 7 constants, not over elements).
    # Midpoint i lies between codes i and i+1; an exact tie goes to the even code, i.e. up
    # for odd i (0.75 -> 1.0, 1.75 -> 2.0, 3.5 -> 4.0) and down for even i.
    for i, mid in enumerate(_E2M1_MIDPOINTS):
        code += (a >= mid) if i % 2 == 1 else (a > mid)
    code |= torch.signbit(v).to(torch.uint8) << 3
    return torch.where(torch.isnan(v), torch.zeros_like(code), code)


def _pack_codes(codes: torch.Tensor) -> torch.Tensor:
    pairs = codes.reshape(*codes.shape[:-1], codes.shape[-1] // 2, 2)
    packed = pairs[..., 0] | (pairs[..., 1] << 4)
    return packed.contiguous().view(torch.float4_e2m1fn_x2)


def quantize_mxfp4(x: torch.Tensor):
    """OCP MXFP4 (E2M1 elements packed in pairs, E8M0 scale per 32 elements along K).

    Args:
        x: floating tensor ``[R, K]`` with ``K % 32 == 0``.

    Returns:
        ``(q, scale)``: ``q`` ``torch.float4_e2m1fn_x2 [R, K / 2]`` (byte ``j`` holds element
        ``2j`` in the low nibble and ``2j + 1`` in the high nibble), ``scale``
        ``torch.float8_e8m0fnu [R, K / 32]``. ``X = floor(log2(block amax)) - 2`` clamped to
        ``[-127, 127]``; elements are ``x / 2**X`` rounded to nearest even on the E2M1 grid
        (0, 0.5, 1, 1.5, 2, 3, 4, 6) and saturated to +-6. All-zero blocks get scale byte 0;
        blocks containing NaN/Inf get scale byte 255 (NaN) and zero elements.
    """
    xs, sb = _mx_prepare("quantize_mxfp4", x, _E2M1_EMAX)
    return _pack_codes(_e2m1_codes(xs)), sb.view(torch.float8_e8m0fnu)


def pack_fp4(values: torch.Tensor) -> torch.Tensor:
    """Round fp32 values to E2M1 (no scaling) and pack pairs into ``torch.float4_e2m1fn_x2``.

    Args:
        values: floating tensor ``[..., K]`` with even ``K``. Values are rounded to the
            nearest E2M1 value (ties to even code), saturated to +-6; values already on the
            grid are packed exactly. NaN (not representable) becomes +0.

    Returns:
        ``torch.float4_e2m1fn_x2 [..., K / 2]``: byte ``j`` holds element ``2j`` in the low
        nibble and element ``2j + 1`` in the high nibble.
    """
    fn = "pack_fp4"
    _check_float_input(fn, "values", values)
    if values.dim() < 1 or values.shape[-1] % 2 != 0:
        raise ValueError(
            f"{fn}: argument 'values' must have an even last dimension, got shape {list(values.shape)}"
        )
    return _pack_codes(_e2m1_codes(values.float()))


def _fp4_bytes(fn: str, q) -> torch.Tensor:
    _check_tensor(fn, "q", q)
    if q.dtype not in (torch.float4_e2m1fn_x2, torch.uint8):
        raise TypeError(
            f"{fn}: argument 'q' must have dtype float4_e2m1fn_x2 or uint8, got {_dtype_name(q.dtype)}"
        )
    if q.dim() < 1:
        raise ValueError(f"{fn}: argument 'q' must have at least 1 dimension, got a 0-D tensor")
    return q.view(torch.uint8)


def _unpack_bytes(b: torch.Tensor) -> torch.Tensor:
    codes = torch.stack((b & 0xF, b >> 4), dim=-1).reshape(*b.shape[:-1], b.shape[-1] * 2)
    c = codes.to(torch.int32)
    e = (c >> 1) & 0x3  # exponent field (bias 1; 0 = subnormal)
    m = (c & 0x1).to(torch.float32)  # mantissa bit
    # normal: 2**(e-1) * (1 + m/2); subnormal (e == 0): m/2. Integer shifts keep it exact.
    pow2 = (1 << (e - 1).clamp(min=0)).to(torch.float32)
    mag = torch.where(e == 0, 0.5 * m, pow2 * (1.0 + 0.5 * m))
    return torch.where((c & 0x8) != 0, -mag, mag)


def unpack_fp4(q: torch.Tensor) -> torch.Tensor:
    """Unpack ``torch.float4_e2m1fn_x2`` (or raw uint8) ``[..., K / 2]`` to fp32 ``[..., K]``.

    Element ``2j`` comes from the low nibble of byte ``j`` and element ``2j + 1`` from the high
    nibble. Code 8 (-0) decodes to -0.0.
    """
    return _unpack_bytes(_fp4_bytes("unpack_fp4", q))


def _mx_scale_expanded(fn: str, scale, R: int, K: int, device) -> torch.Tensor:
    _check_scale(fn, scale, (R, K // MX_BLOCK), dtypes=(torch.float8_e8m0fnu, torch.uint8), device=device)
    return e8m0_to_float(scale).repeat_interleave(MX_BLOCK, dim=1)


def dequantize_mxfp8(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantize_mxfp8`: fp32 ``q[r, k] * 2**(scale[r, k // 32] - 127)``.

    ``q``: ``float8_e4m3fn [R, K]`` with ``K % 32 == 0``; ``scale``: ``float8_e8m0fnu`` (or its
    uint8 bytes) ``[R, K / 32]``. A NaN scale (byte 255) yields NaN for its whole block.
    """
    fn = "dequantize_mxfp8"
    _check_q(fn, q, (torch.float8_e4m3fn,), ndim=2)
    R, K = q.shape
    if K % MX_BLOCK != 0:
        raise ValueError(f"{fn}: argument 'q' must have K (dim 1) divisible by {MX_BLOCK}, got shape {list(q.shape)}")
    return q.float() * _mx_scale_expanded(fn, scale, R, K, q.device)


def dequantize_mxfp4(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`quantize_mxfp4`: fp32 ``[R, K]`` = unpacked E2M1 values times
    ``2**(scale[r, k // 32] - 127)``.

    ``q``: ``float4_e2m1fn_x2`` (or its uint8 bytes) ``[R, K / 2]`` with ``K % 32 == 0``;
    ``scale``: ``float8_e8m0fnu`` (or uint8) ``[R, K / 32]``. A NaN scale yields NaN for its block.
    """
    fn = "dequantize_mxfp4"
    b = _fp4_bytes(fn, q)
    if b.dim() != 2:
        raise ValueError(f"{fn}: argument 'q' must be 2-D, got {b.dim()}-D with shape {tuple(b.shape)}")
    R, K = b.shape[0], b.shape[1] * 2
    if K % MX_BLOCK != 0:
        raise ValueError(
            f"{fn}: argument 'q' must hold K = 2 * q.shape[1] elements per row with K divisible by "
            f"{MX_BLOCK}, got shape {list(b.shape)} (K = {K})"
        )
    return _unpack_bytes(b) * _mx_scale_expanded(fn, scale, R, K, b.device)
