#!/usr/bin/env bash
# Thirty-fifth session, one device call: the stream-K schedule of the Hopper core's split-capable tile kernels.
# Builds the extension, runs the core-kernel GPU tests (every core kernel, every split-K and stream-K kernel against
# the oracle, determinism), then the GEMM pass / fix-up breakdown of the layer the design targets and the
# head-start A/B of stream-K against the table's pick on the LLM-set layers at M = 128 (event time).
#   FLYGEMM_SK_TESTS=0  skip the tests;  FLYGEMM_SK_K  a pytest -k expression for them;  FLYGEMM_SK_BREAKDOWN=0  skip
#   the breakdown;  FLYGEMM_SK_PAIRS  pairs files (default: the M = 128 file);  FLYGEMM_SK_AB_T  A/B time limit (s)
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device_env.sh
OUT=${OUT:-/tmp}
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
if [ "${FLYGEMM_SK_TESTS:-1}" != 0 ]; then
  timeout 260 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_kernels.py \
    ${FLYGEMM_SK_K:+-k "$FLYGEMM_SK_K"} > "$OUT/tests.log" 2>&1
  echo "tests rc $?: $(tail -1 "$OUT/tests.log")"
  grep -E "^FAILED|Error" "$OUT/tests.log" | head -20
fi
P="timeout 60 python3 tools/probes/split_breakdown.py --reps 20"
[ "${FLYGEMM_SK_BREAKDOWN:-1}" != 0 ] && {
  $P --op gemm_a8w8_blockscale --shapes 128x4096x8192,128x10240x8192,1024x2112x7168,1024x4096x4096 \
     --kernels gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a --splits 1,sk
  $P --op gemm_a8w8 --variant per_tensor --shapes 128x10240x8192,1024x10240x8192 \
     --kernels gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a --splits 1,sk
} 2>&1 | grep -v -i warn > "$OUT/breakdown.txt"
grep -E "span| sk " "$OUT/breakdown.txt" | head -30
for pairs in ${FLYGEMM_SK_PAIRS:-tools/tune_specs/ab-35-streamk-m128.pairs}; do
  timeout "${FLYGEMM_SK_AB_T:-200}" python3 tools/ab.py --pairs "$pairs" --rounds 2 2>&1 | grep -v -i warn \
    > "$OUT/$(basename "$pairs" .pairs).txt"
  echo "=== $pairs"
  cat "$OUT/$(basename "$pairs" .pairs).txt"
done
