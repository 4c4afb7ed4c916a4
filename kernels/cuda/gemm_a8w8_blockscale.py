"""gemm_a8w8_blockscale for sm_90a (H100/H200), written in CuTe DSL and exported ahead of time.

    out[m, n] = round_out( sum_kb a_scale[m, kb] * w_scale[n / 128, kb] * S_kb[m, n] + bias[n] )
    S_kb[m, n] = sum_{k in block kb} A[m, k] * W[n, k]          (kb = k / 128)

A [M, K] and W [N, K] are float8_e4m3fn, both K-major (A row-major with row stride lda, W [N, K]
contiguous). a_scale is fp32 [M, ceil(K/128)] (1x128 blocks), w_scale fp32 [ceil(N/128),
ceil(K/128)] (128x128 blocks), both row-major and contiguous; bias an optional fp32 [N] vector;
out [M, N] bf16 or fp16 with row stride ldo.

Mainloop ("fp32 promotion", as DeepGEMM does): tile_k = 128, so each pipeline stage is exactly
one scale block. Per stage the consumer warpgroups run the fp8 wgmma (QGMMA) into a scratch fp32
accumulator, then add scratch * a_scale[m, kb] * w_scale[nb, kb] to the fp32 accumulator held in
registers. With param overlap=1 (default) there are two scratch accumulators used alternately:
block kb+1's wgmma is issued before block kb is promoted (wgmma wait depth 1; block kb's stage is
released once its wgmma has retired), so the tensor cores work through the promotion; overlap=0
waits for each block's wgmma before promoting it. The promotion itself is the same per 128-K
block either way. Where tile_n divides 128 one w_scale value covers the tile per K block; other
widths (80 / 96 / 112, more tiles per wave; 144 / 160 / 192 with serial promotion, less shared
memory traffic per flop) cross one 128-column boundary at an n8 atom, the stage
holds both w_scale values and the promotion, unrolled for the tile's boundary atom, uses the first
left of it and the second right of it. The a_scale values of the thread's rows (2 per 64-row wgmma
atom) are read from shared memory before the block's wgmma is issued (overlap=1) or while it runs
(overlap=0: the serial loop waits for the wgmma anyway; H200, 2026-12-04: 2-3% faster than reading them
first, and 0.4-2.9% slower in the overlapped loop). How they get there (param scale_tma):
token-major tiles (default scale_tma=3) have the producer load a_scale and w_scale by TMA, one box of
4 K blocks (16-byte rows) per load, into a ring of 3 slots with its own full / empty mbarriers, so a
stage's scales cost no per-row copies (H200: 3-16% faster at large M than the alternative); the .sw
tiles (default 0) and `.st0` kernels copy them into each stage with 4-byte cp.async. Swapped operands
(param swap_ab=1, the `.sw` kernels, for M = 9..64): the tile is tile_m (64 / 128) weight rows by
tile_n (32 / 64) tokens, so one w_scale covers the tile and each of the thread's columns (2 per
n8 block) has its own a_scale; the promotion is otherwise the same. K need not be a
multiple of 128: TMA zero-fills the tail of the last block, whose scales then apply to the
partial block. The epilogue (+ bias, one rounding, stmatrix + TMA store) and the producer /
scheduler are the shared ones of kernels/cuda/_hopper_gemm.py (mainloop "blockscale", epilogue
"bias"). Split-K (param split, the `.skS` kernels): a slice promotes its own K blocks and writes the
scaled fp32 sums to the op's workspace; the core's reduce kernel adds the bias and rounds once.

Requirements checked by the C++ adapter: K % 16 == 0, lda % 16 == 0, lda >= K, ldo >= N,
ldo * sizeof(out) % 16 == 0, a / w / out 16-byte aligned, a_scale / w_scale non-null fp32 4-byte
aligned (kind block; 16-byte aligned for the scale ring, whose kernels read both with a row stride of
ceil(K/128) rounded up to 4 floats: the op layer, csrc/device_ops.cpp, hands them such copies), M * ceil(K/128) and ceil(N/128) * ceil(K/128) fit in int32, bias (if any)
fp32. build() reports requires_k_multiple = 16 and requires_n_multiple = 1 (the op layer pads
output rows that are not 16-byte aligned; see kernels/cuda/_hopper_gemm.py, Family).

Build-time entry point: `build(spec, out_dir)` (see docs/TEAM_INTERFACES.md).
Standalone: `python kernels/cuda/gemm_a8w8_blockscale.py --out /tmp/x [--tile 64x128x128 --sass]`.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import _hopper_gemm as hg  # noqa: E402

FAMILY = "gemm_a8w8_blockscale"
OP = "gemm_a8w8_blockscale"
SCALE_BLOCK = 128


class Config(hg.GemmConfig):
    FAMILY = FAMILY
    IN_DTYPES = ("fp8_e4m3fn",)
    OUT_DTYPES = ("bf16", "fp16")
    MAINLOOP = "blockscale"
    EPILOGUE = "bias"
    DEFAULT_TILE = (128, 128, 128)
    MAINLOOP_TEXT = ("TMA + mbarrier pipeline + fp8 wgmma (SS) per 128-wide K block into a scratch "
                     "accumulator, scaled by a_scale[m, kb] * w_scale[n/128, kb] and added to "
                     "fp32 accumulators (fp32 promotion)")
    EPILOGUE_TEXT = "bias(fp32) + round once + stmatrix + TMA store"

    def max_acc_regs(self) -> int:
        # the promoted accumulator and the scratch one(s): 3 x 64 registers per thread with
        # overlap=1, 2 x 96 without (t128x192 serial); 128x256 / 256x128 tiles (2 x 128 at
        # least) do not fit
        return 64 if self.overlap else 96

    def check_family(self) -> None:
        if self.tile_k != SCALE_BLOCK:
            raise ValueError(f"{FAMILY}: tile_k must be {SCALE_BLOCK} (one scale block per stage), "
                             f"got {self.tile_k}")
        # the weight rows of a tile (its columns; its rows with swap_ab, checked by the core) lie in
        # at most two 128-row w_scale blocks (a tile_n that does not divide 128 promotes its columns
        # with two w_scale values, see _hopper_gemm.first_block_atoms)
        if not self.swap_ab and hg.max_w_scale_blocks(self.tile_n) > 2:
            raise ValueError(f"{FAMILY}: a {self.tile_n}-column tile can cross two 128-row w_scale "
                             f"block boundaries (at most one is supported)")


_KERNEL_CLASSES = {}


def _make_kernel_class(cfg=None):
    """The DSL kernel class for cfg: the scales reach the kernel as pointers, or (scale_tma, the `.stR`
    kernels) as the TMA atoms and tensors the host launcher makes of them (_hopper_gemm._scale_tma_atoms)."""
    scale_tma = bool(cfg is not None and cfg.scale_tma)
    if scale_tma in _KERNEL_CLASSES:
        return _KERNEL_CLASSES[scale_tma]
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    from cutlass import Int32, Int64

    class GemmA8W8BlockscaleSm90(hg.kernel_base_class()):
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
            max_ctas: Int32,
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
            stream: cuda.CUstream,
        ):
            self.launch_gemm(a_ptr, w_ptr, out_ptr, bias_ptr, M, N, K, lda, ldo, has_bias,
                             max_ctas, stream, extra_kernel_args=(a_scale_ptr, w_scale_ptr),
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
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
        ):
            self.kernel_body(tma_atom_a, mA, tma_atom_b, mB, tma_atom_c, mC, tiled_mma,
                             a_smem_staged, b_smem_staged, epi_smem_staged, bias_ptr, M, N,
                             has_bias, num_m_tiles, num_n_tiles,
                             a_scale_ptr=a_scale_ptr, w_scale_ptr=w_scale_ptr,
                             ws_ptr=ws_ptr, M_pad=M_pad, split_k=split_k)

    class GemmA8W8BlockscaleScaleTmaSm90(GemmA8W8BlockscaleSm90):
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
            tma_atom_sa: cute.CopyAtom,
            mSA: cute.Tensor,
            tma_atom_sw: cute.CopyAtom,
            mSW: cute.Tensor,
            ws_ptr: cute.Pointer,
            M_pad: Int32,
            split_k: Int32,
        ):
            self.kernel_body(tma_atom_a, mA, tma_atom_b, mB, tma_atom_c, mC, tiled_mma,
                             a_smem_staged, b_smem_staged, epi_smem_staged, bias_ptr, M, N,
                             has_bias, num_m_tiles, num_n_tiles,
                             tma_atom_sa=tma_atom_sa, mSA=mSA, tma_atom_sw=tma_atom_sw, mSW=mSW,
                             ws_ptr=ws_ptr, M_pad=M_pad, split_k=split_k)

    _KERNEL_CLASSES[False] = GemmA8W8BlockscaleSm90
    _KERNEL_CLASSES[True] = GemmA8W8BlockscaleScaleTmaSm90
    return _KERNEL_CLASSES[scale_tma]


def _placeholder_args(cfg):
    import cuda.bindings.driver as cuda
    import cutlass
    i32, i64 = cutlass.Int32(1), cutlass.Int64(16)
    scale_align = 16 if cfg.scale_tma else 4   # TMA reads 16-byte aligned scale tensors
    return (hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.in_dtype), hg.gmem_ptr(cfg.out_dtype),
            hg.gmem_ptr("fp32", 4), hg.gmem_ptr("fp32", scale_align), hg.gmem_ptr("fp32", scale_align),
            i32, i32, i32, i64, i64, i32, i32,
            hg.gmem_ptr("fp32", 16), i32, i32, cuda.CUstream(0))


_EXPECTED_WRAPPER_ARGS = [
    "void *a_ptr", "void *w_ptr", "void *out_ptr", "void *bias_ptr", "void *a_scale_ptr",
    "void *w_scale_ptr", "int32_t M", "int32_t N", "int32_t K", "int64_t lda", "int64_t ldo",
    "int32_t has_bias", "int32_t max_ctas", "void *ws_ptr", "int32_t M_pad", "int32_t split_k",
    "cudaStream_t stream",
]

_ADAPTER_CHECKS = r"""
  if (!args.a_scale || !args.w_scale) return fail(err, err_len, "null a_scale or w_scale pointer");
  if (!aligned(args.a_scale, 4) || !aligned(args.w_scale, 4))
    return fail(err, err_len, "a_scale and w_scale must be fp32 and 4-byte aligned");
  if (kScaleTma && (!aligned(args.a_scale, 16) || !aligned(args.w_scale, 16)))
    return fail(err, err_len, "a_scale and w_scale must be 16-byte aligned (TMA; the op layer copies them)");
  if (args.a_scale_kind != flygemm::ScaleKind::block || args.w_scale_kind != flygemm::ScaleKind::block)
    return fail(err, err_len, "a_scale / w_scale must be block scales ([M, ceil(K/128)], [ceil(N/128), ceil(K/128)])");
  {
    const long long kb = (K + 127) / 128, nb = (N + 127) / 128;
    if (M * kb > lim || nb * kb > lim) return fail(err, err_len, "scale tensors too large for int32 indices");
  }
"""

_ADAPTER_PACK = r"""
  void* a_scale_ptr = const_cast<void*>(args.a_scale);
  void* w_scale_ptr = const_cast<void*>(args.w_scale);
  void* packed[18] = {&a_ptr, &w_ptr, &out_ptr, &bias_ptr, &a_scale_ptr, &w_scale_ptr, &m, &n, &k,
                      &lda, &ldo, &has_bias, &max_ctas, &ws_ptr, &m_pad, &split_k, &stream, &ret};
"""

FAMILY_SPEC = hg.Family(
    name=FAMILY, op=OP, config_cls=Config, kernel_class=_make_kernel_class,
    placeholder_args=_placeholder_args, wrapper_args=_EXPECTED_WRAPPER_ARGS,
    adapter_checks=_ADAPTER_CHECKS, adapter_pack=_ADAPTER_PACK,
    requires_text="K%16==0, lda%16==0, lda>=K, ldo>=N, ldo*sizeof(out)%16==0, a/w/out 16B aligned, "
                  "a_scale fp32 [M, ceil(K/128)], w_scale fp32 [ceil(N/128), ceil(K/128)] contiguous, "
                  "bias fp32",
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
