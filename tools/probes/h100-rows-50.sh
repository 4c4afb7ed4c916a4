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
# the shapes of the fiftieth session's rows (FLYGEMM_R50_SHAPES=llm: the whole LLM set)
shapes=${FLYGEMM_R50_SHAPES:-54560x8192x8192,16384x24576x1536,4096x57344x8192,1024x57344x8192,1024x24576x1536,16384x28672x4096,1024x28672x4096,1024x4096x4096,16384x4096x14336}
timeout "${FLYGEMM_R50_T:-200}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8 --shapes "$shapes" \
  --json "$OUT/rows.json" > "$OUT/rows.log" 2>&1
grep -vE "UserWarning|_warn_once" "$OUT/rows.log" | sed -n '/^op /,$p' | cut -c1-150
