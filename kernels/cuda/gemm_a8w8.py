"""gemm_a8w8 for sm_90a (H100/H200), written in CuTe DSL and exported ahead of time.

    out[m, n] = round_out( (sum_k A[m, k] * W[n, k]) * sa[m] * sw[n] + bias[n] )

A [M, K] and W [N, K] are both float8_e4m3fn (fp8 wgmma, fp32 accumulation; QGMMA in SASS) or
both int8 (s8 wgmma with exact s32 accumulation, converted to fp32 in the epilogue; IGMMA in
SASS). Both operands are K-major, as Hopper's 8-bit wgmma requires: A row-major with row stride
lda, W [N, K] contiguous. sa is a_scale (fp32, 1 value per-tensor or M values per-token), sw is
w_scale (fp32, 1 value per-tensor or N values per-channel), bias an optional fp32 [N] vector,
out [M, N] (bf16, fp16 or fp32) with row stride ldo.

Per-tensor vs per-row scales are chosen at run time (LaunchArgs::a_scale_kind / w_scale_kind ->
the kernel arguments a_per_row / w_per_row, used as the index step 1 or 0 of the scale lookup),
not by compile-time variants: the scales are applied once per output element in the epilogue,
never in the K loop, so the run-time choice costs an integer multiply per distinct row/column
and no branch, while compile-time variants would multiply the binaries (and build time) by 4.

The kernel (warp-specialized persistent TMA + wgmma mainloop, epilogue with the scales, bias,
one rounding, stmatrix + TMA store) is the shared one of kernels/cuda/_hopper_gemm.py with
mainloop "plain" and epilogue "scaled".  tile_k is 128 elements (128 bytes: one SW128 atom per
row) by default; 64 and 256 are accepted.

Requirements checked by the C++ adapter (TMA needs 16-byte aligned base addresses and row
strides): K % 16 == 0, lda % 16 == 0, lda >= K, ldo >= N, ldo * sizeof(out) % 16 == 0,
a / w / out 16-byte aligned, a_scale / w_scale non-null fp32 4-byte aligned with kind per_tensor
or per_row, bias (if any) fp32 and 4-byte aligned, M, N, K >= 1. build() reports
requires_k_multiple = 16 and requires_n_multiple = 1 (the op layer pads output rows that are not
16-byte aligned; see kernels/cuda/_hopper_gemm.py, Family).

Build-time entry point: `build(spec, out_dir)` (see docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_a8w8.py --out /tmp/x [--in-dtype int8 --out-dtype fp32 --sass]`.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _hopper_gemm as hg  # noqa: E402

FAMILY = "gemm_a8w8"
OP = "gemm_a8w8"


class Config(hg.GemmConfig):
    FAMILY = FAMILY
    IN_DTYPES = ("fp8_e4m3fn", "int8")
    OUT_DTYPES = ("bf16", "fp16", "fp32")
    MAINLOOP = "plain"
    EPILOGUE = "scaled"
    DEFAULT_TILE = (128, 128, 128)
    MAINLOOP_TEXT = "TMA + mbarrier pipeline + 8-bit wgmma (SS), fp32 (fp8) / s32 (int8) accumulators"
    EPILOGUE_TEXT = ("acc * a_scale[m or 0] * w_scale[n or 0] + bias(fp32), round once, "
                     "stmatrix/st.shared + TMA store")


_KERNEL_CLASS = None


def _make_kernel_class(cfg=None):  # one class for every config
    global _KERNEL_CLASS
    if _KERNEL_CLASS is not None:
        return _KERNEL_CLASS
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    class GemmA8W8Sm90(hg.kernel_base_class()):
        @cute.jit
        def __call__(
            self,
            a_ptr: cute.Pointer,
            w_ptr: cute.Pointer,
            out_ptr: cute.Pointer,
            bias_ptr: cute.Pointer,
            a_scale_ptr: cute.Pointer,
            w_scale_ptr: cute.Pointer,
            M: Int32,
            N: Int32,
            K: Int32,
            lda: Int64,
            ldo: Int64,
            has_bias: Int32,
            a_per_row: Int32,
            w_per_row: Int32,
            max_ctas: Int32,
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
            stream: cuda.CUstream,
        ):
            self.launch_gemm(a_ptr, w_ptr, out_ptr, bias_ptr, M, N, K, lda, ldo, has_bias,
                             max_ctas, stream,
                             extra_kernel_args=(a_scale_ptr, w_scale_ptr, a_per_row, w_per_row),
                             split_args=(ws_ptr, M_pad, split_k))

        @cute.kernel
        def kernel(
            self,
            tma_atom_a: cute.CopyAtom,
            mA: cute.Tensor,
            tma_atom_b: cute.CopyAtom,
            mB: cute.Tensor,
            tma_atom_c: cute.CopyAtom,
            mC: cute.Tensor,
            tiled_mma: cute.TiledMma,
            a_smem_staged: cute.ComposedLayout,
            b_smem_staged: cute.ComposedLayout,
            epi_smem_staged: cute.ComposedLayout,
            bias_ptr: cute.Pointer,
            M: Int32,
            N: Int32,
            has_bias: Int32,
            num_m_tiles: Int32,
            num_n_tiles: Int32,
            a_scale_ptr: cute.Pointer,
            w_scale_ptr: cute.Pointer,
            a_step: Int32,
            w_step: Int32,
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
        ):
            self.kernel_body(tma_atom_a, mA, tma_atom_b, mB, tma_atom_c, mC, tiled_mma,
                             a_smem_staged, b_smem_staged, epi_smem_staged, bias_ptr, M, N,
                             has_bias, num_m_tiles, num_n_tiles,
                             a_scale_ptr=a_scale_ptr, w_scale_ptr=w_scale_ptr,
                             a_step=a_step, w_step=w_step,
                             ws_ptr=ws_ptr, M_pad=M_pad, split_k=split_k)

    _KERNEL_CLASS = GemmA8W8Sm90
    return _KERNEL_CLASS


def _placeholder_args(cfg):
    import cuda.bindings.driver as cuda
    import cutlass
    i32, i64 = cutlass.Int32(1), cutlass.Int64(16)
    f32 = hg.gmem_ptr("fp32", 4)
    return (hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.out_dtype),
            f32, hg.gmem_ptr("fp32", 4), hg.gmem_ptr("fp32", 4),
            i32, i32, i32, i64, i64, i32, i32, i32, i32,
            hg.gmem_ptr("fp32", 16), i32, i32, cuda.CUstream(0))


_EXPECTED_WRAPPER_ARGS = [
    "void *a_ptr", "void *w_ptr", "void *out_ptr", "void *bias_ptr", "void *a_scale_ptr",
    "void *w_scale_ptr", "int32_t M", "int32_t N", "int32_t K", "int64_t lda", "int64_t ldo",
    "int32_t has_bias", "int32_t a_per_row", "int32_t w_per_row", "int32_t max_ctas",
    "void *ws_ptr", "int32_t M_pad", "int32_t split_k", "cudaStream_t stream",
]

_ADAPTER_CHECKS = r"""
  if (!args.a_scale || !args.w_scale) return fail(err, err_len, "null a_scale or w_scale pointer");
  if (!aligned(args.a_scale, 4) || !aligned(args.w_scale, 4))
    return fail(err, err_len, "a_scale and w_scale must be fp32 and 4-byte aligned");
  if (args.a_scale_kind != flygemm::ScaleKind::per_tensor && args.a_scale_kind != flygemm::ScaleKind::per_row)
    return fail(err, err_len, "a_scale must be per-tensor (1 value) or per-row (M values)");
  if (args.w_scale_kind != flygemm::ScaleKind::per_tensor && args.w_scale_kind != flygemm::ScaleKind::per_row)
    return fail(err, err_len, "w_scale must be per-tensor (1 value) or per-row (N values)");
"""

_ADAPTER_PACK = r"""
  void* a_scale_ptr = const_cast<void*>(args.a_scale);
  void* w_scale_ptr = const_cast<void*>(args.w_scale);
  int32_t a_per_row = args.a_scale_kind == flygemm::ScaleKind::per_row ? 1 : 0;
  int32_t w_per_row = args.w_scale_kind == flygemm::ScaleKind::per_row ? 1 : 0;
  void* packed[20] = {&a_ptr, &w_ptr, &out_ptr, &bias_ptr, &a_scale_ptr, &w_scale_ptr, &m, &n, &k,
                      &lda, &ldo, &has_bias, &a_per_row, &w_per_row, &max_ctas, &ws_ptr, &m_pad,
                      &split_k, &stream, &ret};
"""

FAMILY_SPEC = hg.Family(
    name=FAMILY, op=OP, config_cls=Config, kernel_class=_make_kernel_class,
    placeholder_args=_placeholder_args, wrapper_args=_EXPECTED_WRAPPER_ARGS,
    adapter_checks=_ADAPTER_CHECKS, adapter_pack=_ADAPTER_PACK,
    requires_text="K%16==0, lda%16==0, lda>=K, ldo>=N, ldo*sizeof(out)%16==0, a/w/out 16B aligned, "
                  "a_scale/w_scale fp32 per_tensor or per_row, bias fp32",
    k_align=16, source_file=__file__,
)


def build(spec: dict, out_dir: pathlib.Path) -> dict:
    return hg.build(FAMILY_SPEC, spec, out_dir)


def verify_epilogue_layout(cfg: Config, threads=None) -> list:
    return hg.verify_epilogue_layout(FAMILY_SPEC, cfg, threads)


def default_spec(in_dtype="fp8_e4m3fn", out_dtype="bf16", tile=(128, 128, 128), params=None) -> dict:
    return hg.default_spec(FAMILY_SPEC, in_dtype, out_dtype, tile, params)


if __name__ == "__main__":
    hg.main(FAMILY_SPEC, __doc__)
