#!/usr/bin/env bash
# Sixty-first session (ran on the scratch branch exp/bs-sr-61, commit 99e617a, which has Config.scale_regs and the
# candidates; main has neither: they lost): blockscale decode kernels whose scales come by register prefetch
# (scale_regs, the .sr kernels) instead of through the bulk slots, so that a whole K = 7168 slice of 16 + 16 rows fits
# (m16n16.w7.bk4.rr.np.sr); plus the table's M = 16 / M = 1 kernels with scale_regs. Builds the extension, runs the
# blockscale decode GPU tests (every kernel), then tools/tune.py --kernel-time over the N = 2048 / 2112 rows (3 passes).
# Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="gemm_a8w8_blockscale and (every_decode_kernel_small_shape or bulk_kernels_reuse or matches_oracle)" \
  DT_LOG=bs-tests.log source tools/probes/decode_tests.sh
timeout 200 python3 tools/tune.py --op gemm_a8w8_blockscale --kernel-time --passes 3 \
  --shapes 16x2048x7168,12x2048x7168,16x2112x7168,1x2048x7168,8x2048x7168 \
  --match "m16n16.w7.bk3,.sr.,m8n16.w7.bk4" > "$OUT/bs-tune.txt" 2>&1
echo "tune rc $? at $((SECONDS - start)) s"
grep -vE "^\s*$|warn" "$OUT/bs-tune.txt" | sed 's/gemm_splitk_decode.a8w8_blockscale.fp8_e4m3fn.bf16.//' | cut -c1-140 | tail -n 30
echo "probe took $((SECONDS - start)) s"
