#!/usr/bin/env bash
# Thirty-fourth session, one device call: the Hopper core's split-K partials stored as 8-byte vectors. Builds the
# extension, runs the core-kernel GPU tests (every core kernel and every split-K kernel against the oracle,
# determinism), then tools/probes/split_breakdown.py on the shapes whose scalar-store numbers are in
# docs/measurements/2026-12-02-h200-split-breakdown-34.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device_env.sh
OUT=${OUT:-/tmp}
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_kernels.py > "$OUT/tests.log" 2>&1
echo "tests rc $?: $(tail -1 "$OUT/tests.log")"
P="timeout 90 python3 tools/probes/split_breakdown.py --reps 20"
{
  $P --op gemm_a8w8_blockscale --shapes 128x4096x8192,128x10240x8192,1024x2176x8192 \
     --kernels gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a --splits 1,2,3,4
  $P --op gemm_a8w8 --variant per_tensor --shapes 128x4096x8192,128x4096x2048,128x16384x2048,128x10240x8192 \
     --kernels gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a --splits 1,2,3,4
  $P --op gemm_a16w16 --shapes 128x4096x8192,128x10240x8192 --kernels gemm_a16w16.bf16.bf16.t128x128x64.sk8.sm90a \
     --splits 1,2,3,4
} 2>&1 | grep -v -i warn | tee "$OUT/split.txt" | grep "span"
