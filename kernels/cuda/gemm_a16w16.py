"""gemm_a16w16 for sm_90a (H100/H200), written in CuTe DSL and exported ahead of time.

    out[m, n] = round_out( sum_k A[m, k] * W[n, k] + bias[n] )      (fp32 accumulate)

A is [M, K] row-major with row stride lda, W is [N, K] contiguous (K-major, a "TN" GEMM),
out is [M, N] with row stride ldo, bias is an optional fp32 [N] vector.

The kernel (warp-specialized persistent TMA + wgmma mainloop with fp32 accumulators, epilogue
+ bias, one rounding, stmatrix + TMA store) is the shared one of kernels/cuda/_hopper_gemm.py
with mainloop "plain" and epilogue "bias"; this file only fixes the family's dtypes, its exported
launcher signature and the checks of its C++ adapter.

Run-time arguments are plain pointers and integers (M, N, K, lda, ldo are dynamic), so one
binary per (in_dtype, out_dtype, tile config) serves every shape.

Requirements checked by the C++ adapter (TMA needs 16-byte aligned base addresses and row
strides): K % 8 == 0, lda % 8 == 0, lda >= K, ldo >= N, ldo * sizeof(out) % 16 == 0,
a / w / out 16-byte aligned, bias (if any) fp32 and 4-byte aligned, M, N, K >= 1.

Build-time entry point: `build(spec, out_dir)` (see docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_a16w16.py --out /tmp/x [--in-dtype bf16 --out-dtype bf16 ...]`.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _hopper_gemm as hg  # noqa: E402
from _hopper_gemm import (  # noqa: E402,F401  (re-exported for tools that import this family)
    SMEM_CAPACITY, SMEM_RESERVED, extract_cubins, sass_summary,
)

FAMILY = "gemm_a16w16"
OP = "gemm_a16w16"


class Config(hg.GemmConfig):
    """Static description of one specialization, derived from a kernels CSV row."""

    FAMILY = FAMILY
    IN_DTYPES = ("bf16", "fp16")
    OUT_DTYPES = ("bf16", "fp16", "fp32")
    MAINLOOP = "plain"
    EPILOGUE = "bias"
    DEFAULT_TILE = (128, 128, 64)


_KERNEL_CLASS = None


def _make_kernel_class(cfg=None):  # one class for every config
    """The DSL kernel class (deferred so that importing this module needs no DSL)."""
    global _KERNEL_CLASS
    if _KERNEL_CLASS is not None:
        return _KERNEL_CLASS
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    class GemmA16W16Sm90(hg.kernel_base_class()):
        @cute.jit
        def __call__(
            self,
            a_ptr: cute.Pointer,
            w_ptr: cute.Pointer,
            out_ptr: cute.Pointer,
            bias_ptr: cute.Pointer,
            M: Int32,
            N: Int32,
            K: Int32,
            lda: Int64,
            ldo: Int64,
            has_bias: Int32,
            max_ctas: Int32,
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
            stream: cuda.CUstream,
        ):
            self.launch_gemm(a_ptr, w_ptr, out_ptr, bias_ptr, M, N, K, lda, ldo, has_bias,
                             max_ctas, stream, split_args=(ws_ptr, M_pad, split_k))

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
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
        ):
            self.kernel_body(tma_atom_a, mA, tma_atom_b, mB, tma_atom_c, mC, tiled_mma,
                             a_smem_staged, b_smem_staged, epi_smem_staged, bias_ptr, M, N,
                             has_bias, num_m_tiles, num_n_tiles,
                             ws_ptr=ws_ptr, M_pad=M_pad, split_k=split_k)

    _KERNEL_CLASS = GemmA16W16Sm90
    return _KERNEL_CLASS


def _placeholder_args(cfg):
    """cute.compile arguments after the kernel object: only their types matter."""
    import cuda.bindings.driver as cuda
    import cutlass
    i32, i64 = cutlass.Int32(1), cutlass.Int64(8)
    return (hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.out_dtype),
            hg.gmem_ptr("fp32", 4), i32, i32, i32, i64, i64, i32, i32,
            hg.gmem_ptr("fp32", 16), i32, i32, cuda.CUstream(0))


# The C wrapper the DSL generates for our host function (checked against the header at build
# time so that a DSL upgrade that changes the calling convention fails the build, not a run).
_EXPECTED_WRAPPER_ARGS = [
    "void *a_ptr", "void *w_ptr", "void *out_ptr", "void *bias_ptr", "int32_t M", "int32_t N",
    "int32_t K", "int64_t lda", "int64_t ldo", "int32_t has_bias", "int32_t max_ctas",
    "void *ws_ptr", "int32_t M_pad", "int32_t split_k", "cudaStream_t stream",
]

_ADAPTER_CHECKS = ""
_ADAPTER_PACK = r"""
  void* packed[16] = {&a_ptr, &w_ptr, &out_ptr, &bias_ptr, &m, &n, &k, &lda, &ldo,
                      &has_bias, &max_ctas, &ws_ptr, &m_pad, &split_k, &stream, &ret};
"""

FAMILY_SPEC = hg.Family(
    name=FAMILY, op=OP, config_cls=Config, kernel_class=_make_kernel_class,
    placeholder_args=_placeholder_args, wrapper_args=_EXPECTED_WRAPPER_ARGS,
    adapter_checks=_ADAPTER_CHECKS, adapter_pack=_ADAPTER_PACK,
    requires_text="K%8==0, lda%8==0, lda>=K, ldo>=N, ldo*sizeof(out)%16==0, "
                  "a/w/out 16B aligned, bias fp32",
    k_align=8, source_file=__file__,
)


def build(spec: dict, out_dir: pathlib.Path) -> dict:
    return hg.build(FAMILY_SPEC, spec, out_dir)


def verify_epilogue_layout(cfg: Config, threads=None) -> list:
    return hg.verify_epilogue_layout(FAMILY_SPEC, cfg, threads)


def compile_and_export(cfg: Config, out_dir: pathlib.Path, ident: str, arch: str = "sm_90a"):
    return hg.compile_and_export(FAMILY_SPEC, cfg, pathlib.Path(out_dir), ident, arch)


def default_spec(in_dtype="bf16", out_dtype=None, tile=(128, 128, 64), params=None) -> dict:
    return hg.default_spec(FAMILY_SPEC, in_dtype, out_dtype, tile, params)


if __name__ == "__main__":
    hg.main(FAMILY_SPEC, __doc__)
