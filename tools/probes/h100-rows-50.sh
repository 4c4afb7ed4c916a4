#!/usr/bin/env bash
# Fiftieth session: confirm the @H100 rows through the ops (not a forced kernel): build, the dispatch tests and the
# part-row GPU test, then the issue-4 large shapes and the LLM set for bf16 / fp8 (blockscale has no H100 row).
# Logs in $OUT; the geomeans and the shapes of the new rows last. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/h100_rows_50}
mkdir -p "$OUT"
source tools/device_env.sh
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
python3 -m pytest -q tests/test_dispatch.py tests/test_gpu_cuda_scaled.py -k "dispatch or part or h100 or row_scales" \
  > "$OUT/tests.log" 2>&1
tail -n 1 "$OUT/tests.log"
nvidia-smi --query-gpu=name --format=csv,noheader
timeout "${FLYGEMM_R50_T:-200}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8 \
  --shapes 8192x8192x8192,54560x8192x8192 > "$OUT/issue4.log" 2>&1
timeout "${FLYGEMM_R50_T:-200}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8 --shapes llm \
  --json "$OUT/llm.json" > "$OUT/llm.log" 2>&1
grep -E "geometric|54560" "$OUT/issue4.log"
grep -E "geometric" "$OUT/llm.log"
grep -E "@|t128x256|t256x128" "$OUT/llm.log" | grep -E " (16384 +24576 +1536|4096 +57344 +8192|1024 +57344 +8192|1024 +24576 +1536|16384 +28672 +4096|1024 +28672 +4096|1024 +4096 +4096|16384 +4096 +14336) "
