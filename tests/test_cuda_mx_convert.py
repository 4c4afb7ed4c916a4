"""The CUDA MX -> bf16 conversion (kernels/cuda/gemm_mxfp.py, used for the MX ops beyond decode sizes),
checked on the CPU: its integer e2m1 decode (kernels/cuda/_ptx.py e2m1_to_f32) and E8M0 scale bits
(e8m0_f32) emulated exactly as the PTX computes them, then the fp32 product and one bf16 rounding,
against flygemm.quant's dequantizers (the oracle's semantics). The PTX transcription itself is
checked by tests/test_gpu_cuda_mx.py on an H200."""
import pathlib

import numpy as np
import pytest
import torch

from flygemm import quant
from source_modules import load_source

ROOT = pathlib.Path(__file__).resolve().parents[1]
fam = load_source("kernels/cuda/gemm_mxfp.py", "flygemm_cuda_gemm_mxfp")


def e2m1_bits(nibble: int) -> int:
    """kernels/cuda/_ptx.py e2m1_to_f32: sign to bit 31; magnitude m -> m < 2 ? m * 0x3F000000
    : (m << 22) + 0x3F000000."""
    m, sign = nibble & 7, (nibble & 8) << 28
    return (m * 0x3F000000 if m < 2 else (m << 22) + 0x3F000000) | sign


def e8m0_bits(b: int) -> int:
    """kernels/cuda/_ptx.py e8m0_f32: max(b << 23, 0x00400000) | ((b + 1) >> 8) << 22
    (b = 0 is 2^-127, a subnormal; b = 255 is NaN)."""
    return max(b << 23, 0x00400000) | (((b + 1) >> 8) << 22)


def as_f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def test_e2m1_decode_matches_torch_for_every_nibble():
    table = torch.tensor([[n | (n << 4)] for n in range(16)], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    want = quant.unpack_fp4(table)[:, 0].float().numpy()
    got = as_f32([e2m1_bits(n) for n in range(16)])
    np.testing.assert_array_equal(got, want)


def test_e8m0_bits_are_the_powers_of_two_and_nan():
    got = as_f32([e8m0_bits(b) for b in range(256)]).astype(np.float64)
    np.testing.assert_array_equal(got[:255], 2.0 ** (np.arange(255) - 127))
    assert np.isnan(got[255])
    want = quant.e8m0_to_float(torch.arange(256, dtype=torch.uint8)).double().numpy()
    np.testing.assert_array_equal(got, want)


def convert(values_f32: np.ndarray, scale_bytes: np.ndarray) -> torch.Tensor:
    """fp32 value * fp32 scale (round to nearest), then one bf16 rounding, per 32-element block."""
    s = as_f32([e8m0_bits(int(b)) for b in scale_bytes.reshape(-1)]).reshape(scale_bytes.shape)
    prod = (values_f32.reshape(*scale_bytes.shape, 32) * s[..., None]).astype(np.float32)
    return torch.from_numpy(prod.reshape(values_f32.shape)).to(torch.bfloat16)


@pytest.mark.parametrize("gain", [1.0, 2.0 ** 60, 2.0 ** -60])
def test_mxfp4_conversion_equals_dequantize(gain):
    x = torch.randn(24, 256, generator=torch.Generator().manual_seed(3)) * gain
    q, s = quant.quantize_mxfp4(x)
    nib = q.view(torch.uint8).numpy()
    nibbles = np.stack([nib & 15, nib >> 4], axis=-1).reshape(24, 256)  # element 2i in the low nibble
    vals = as_f32([e2m1_bits(int(n)) for n in nibbles.reshape(-1)]).reshape(nibbles.shape)
    s.view(torch.uint8)[5, 3] = 255  # a NaN scale: its whole block is NaN, as in the oracle
    got = convert(vals, s.view(torch.uint8).numpy())
    want = quant.dequantize_mxfp4(q, s).float()
    assert torch.isnan(got[5, 96:128].float()).all()
    assert _equal_nan(got.float(), want)  # exact: e2m1 * 2^e fits bf16


def _equal_nan(a, b):
    return bool(torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)))


@pytest.mark.parametrize("gain", [1.0, 2.0 ** 40, 2.0 ** -40])
def test_mxfp8_conversion_equals_dequantize(gain):
    x = torch.randn(24, 256, generator=torch.Generator().manual_seed(4)) * gain
    q, s = quant.quantize_mxfp8(x)
    vals = q.float().numpy()  # e4m3 -> f16 -> f32 is exact
    got = convert(vals, s.view(torch.uint8).numpy())
    assert torch.equal(got.float(), quant.dequantize_mxfp8(q, s).float())


def test_config_validation():
    assert fam.Config("gemm_mxfp4").block_bytes == 16 and fam.Config("gemm_mxfp8").block_bytes == 32
    with pytest.raises(ValueError, match="unsupported op"):
        fam.Config("gemm_a8w8")
    with pytest.raises(ValueError, match="bf16"):
        fam.Config("gemm_mxfp8", out_dtype="fp16")
    assert fam.Config("gemm_mxfp8").meta()["role"] == "mx_to_bf16"
