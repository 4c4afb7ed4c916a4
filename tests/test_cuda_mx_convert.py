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


# ---------------------------------------------------------------------------------------------
# to=blockscale: the regrouping for the fp8 blockscale GEMM, emulated as the kernel computes it.
# ---------------------------------------------------------------------------------------------

def regroup(values: torch.Tensor, scale_bytes: torch.Tensor, group_rows: int, fp4: bool):
    """values: the MX elements as fp32 [rows, K] (no scale); scale_bytes: uint8 [rows, K/32].
    Returns (e4m3 [rows, K], fp32 scales [ceil(rows / group_rows), ceil(K / 128)]) as kernels/cuda/gemm_mxfp.py
    computes them: r = the largest usable E8M0 byte of the group (not 255, 127 when none), every block times
    2^max(e - r + head, MIN_SHIFT) rounded to e4m3 (nearest even), NaN blocks all NaN, scale 2^(r - 127 - head)."""
    rows, K = values.shape
    head = fam.FP4_HEADROOM if fp4 else 0
    e = scale_bytes.to(torch.int64)
    kb, groups = K // 32, -(-K // 128)
    usable = torch.where(e == 255, torch.full_like(e, -1), e)
    usable = torch.nn.functional.pad(usable, (0, groups * 4 - kb), value=-1).view(rows, groups, 4).amax(-1)
    if group_rows > 1:
        pad = -rows % group_rows
        usable = torch.nn.functional.pad(usable, (0, 0, 0, pad), value=-1)
        usable = usable.view(-1, group_rows, groups).amax(1)
    r = torch.where(usable < 0, torch.full_like(usable, 127), usable)
    r_blocks = r.repeat_interleave(group_rows, 0)[:rows].repeat_interleave(4, 1)[:, :kb]
    shift = torch.clamp(e - r_blocks + head, min=fam.MIN_SHIFT).to(torch.float64)
    scaled = (values.view(rows, kb, 32).double() * torch.exp2(shift)[..., None]).float()
    q = scaled.to(torch.float8_e4m3fn).view(rows, K)
    q = torch.where((e == 255).repeat_interleave(32, 1), torch.full_like(q, float("nan")), q)
    return q, torch.exp2((r - 127 - head).double()).float()


def regrouped_dequant(q, s, group_rows):
    rows, K = q.shape
    full = s.repeat_interleave(group_rows, 0)[:rows].repeat_interleave(128, 1)[:, :K]
    return q.float() * full


def mx_operand(fmt, rows, K, seed, row_gain_log2=None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, K, generator=g)
    if row_gain_log2 is not None:
        x = x * torch.exp2(row_gain_log2.float())[:, None]
    if fmt == "mxfp4":
        q, s = quant.quantize_mxfp4(x)
        return quant.unpack_fp4(q).float(), s.view(torch.uint8), quant.dequantize_mxfp4(q, s)
    q, s = quant.quantize_mxfp8(x)
    return q.float(), s.view(torch.uint8), quant.dequantize_mxfp8(q, s)


def test_regroup_constants():
    assert fam.FP4_HEADROOM == 6 and fam.MIN_SHIFT <= -40  # 448 * 2^-40 rounds to 0 in e4m3 anyway
    assert 6 * 2 ** fam.FP4_HEADROOM <= 448                # the group's largest e2m1 block stays finite
    assert fam.Config("gemm_mxfp4", to="blockscale").meta()["role"] == "mx_to_blockscale"
    with pytest.raises(ValueError, match="param to"):
        fam.Config("gemm_mxfp4", to="fp16")


@pytest.mark.parametrize("group_rows", [1, 128])
def test_mxfp4_regroup_is_exact_while_a_group_spans_14_binades(group_rows):
    """e2m1 x 2^s is an e4m3 number for s in [-8, 6]: with the group's largest block at s = 6, every block
    up to 14 binades weaker converts exactly. Rows 0..14 binades weak within each 128-row block; K = 416 leaves a
    last group of one MX block."""
    rows, K = 300, 416
    gain = -(torch.arange(rows) % 13)
    vals, sb, want = mx_operand("mxfp4", rows, K, seed=11, row_gain_log2=gain)
    spans = [int(sb[r0:r0 + 128, c:c + 4].max()) - int(sb[r0:r0 + 128, c:c + 4].min())
             for r0 in range(0, rows, 128) for c in range(0, K // 32, 4)]
    assert 12 <= max(spans) <= 14
    q, s = regroup(vals, sb, group_rows, fp4=True)
    assert torch.equal(regrouped_dequant(q, s, group_rows), want)


def test_mxfp4_regroup_beyond_14_binades_loses_only_below_the_groups_subnormal_step():
    rows, K = 128, 256
    gain = torch.zeros(rows, dtype=torch.int64)
    gain[5] = -20                                   # 20 binades under the rest of its 128-row block
    vals, sb, want = mx_operand("mxfp4", rows, K, seed=12, row_gain_log2=gain)
    q, s = regroup(vals, sb, 128, fp4=True)
    got = regrouped_dequant(q, s, 128)
    step = s.repeat_interleave(128, 1)[0, :K] * 2.0 ** -9   # e4m3's smallest subnormal at the group's scale
    assert torch.equal(got[torch.arange(rows) != 5], want[torch.arange(rows) != 5])
    assert ((got[5] - want[5]).abs() <= step / 2).all()


@pytest.mark.parametrize("group_rows", [1, 128])
def test_mxfp8_regroup_error_is_below_half_a_subnormal_step_of_the_group(group_rows):
    rows, K = 260, 512
    gain = -(torch.arange(rows) % 9)
    vals, sb, want = mx_operand("mxfp8", rows, K, seed=13, row_gain_log2=gain)
    q, s = regroup(vals, sb, group_rows, fp4=False)
    got = regrouped_dequant(q, s, group_rows)
    step = s.repeat_interleave(group_rows, 0)[:rows].repeat_interleave(128, 1)[:, :K] * 2.0 ** -9
    assert ((got - want).abs() <= step / 2).all()
    # a block at its group's largest exponent is unchanged
    top = (sb.to(torch.int64).repeat_interleave(32, 1) ==
           (torch.log2(s).round().to(torch.int64) + 127).repeat_interleave(group_rows, 0)[:rows]
           .repeat_interleave(128, 1)[:, :K])
    assert top.any() and torch.equal(got[top], want[top])


def test_mxfp8_regroup_accuracy_on_channels_of_unequal_size():
    """What the 128 x 128 weight groups cost MXFP8: weight rows down to 2^-6 of the strongest in their 128-row
    block. Relative error of each output column against the exact MX product (the op contract's): at most
    4.3e-5 here, below the fp8 wgmma's own accumulation error (README, known limitations). (Rows 2^-9 / 2^-12
    under the block's strongest: 1.0e-3 / 2.4e-2; MXFP4: exact in all three cases.)"""
    N, K, M = 256, 1024, 64
    gain = -(torch.arange(N) % 7)
    wv, wsb, w_exact = mx_operand("mxfp8", N, K, seed=14, row_gain_log2=gain)
    av, asb, a_exact = mx_operand("mxfp8", M, K, seed=15)
    wq, ws = regroup(wv, wsb, 128, fp4=False)
    aq, as_ = regroup(av, asb, 1, fp4=False)
    got = regrouped_dequant(aq, as_, 1).double() @ regrouped_dequant(wq, ws, 128).double().T
    want = a_exact.double() @ w_exact.double().T
    col_err = (got - want).norm(dim=0) / want.norm(dim=0)
    assert col_err.max() <= 1e-4, col_err.max()


def test_regroup_nan_scale_makes_its_block_nan_and_leaves_the_group():
    vals, sb, want = mx_operand("mxfp8", 4, 256, seed=16)
    sb = sb.clone()
    sb[2, 5] = 255
    q, s = regroup(vals, sb, 1, fp4=False)
    got = regrouped_dequant(q, s, 1)
    assert torch.isnan(got[2, 160:192]).all() and not torch.isnan(got[2, :160]).any()
    assert torch.equal(got[2, 128:160], want[2, 128:160]) or ((got[2, 128:160] - want[2, 128:160]).abs()
                                                             <= s[2, 1] * 2.0 ** -10).all()
