#!/usr/bin/env bash
# New kernel variants on the H200 in one device call: build the extension and run the per-kernel
# GPU tests of the new kernels (tools/gpu_check.sh), compute-sanitizer racecheck and memcheck on
# them, and the tuning sweep (tools/gpu_tune.sh, its FLYGEMM_TUNE_* settings).  Every step runs
# under a time limit and writes its log straight into $OUT as it goes (a hung kernel or a slow
# step must not cost the other steps' results); everything is also packed into $OUT/try.tgz.
#   FLYGEMM_TRY_K          pytest -k expression selecting the new kernels' tests (e.g. pp)
#   FLYGEMM_TRY_TESTS      test files (default tests/test_gpu_cuda_kernels.py)
#   FLYGEMM_TRY_MATCH      substring of the kernel names for the sanitizers (e.g. .pp.; empty: skip)
#   FLYGEMM_TRY_SAN_TOOLS  sanitizer tools (default: racecheck memcheck)
#   FLYGEMM_TRY_SAN_SHAPES sanitizer shapes (default: more tiles than 2 x 132 at 128x128)
#   FLYGEMM_TRY_LIMITS     seconds for "check sanitizer tune" (default: 240 90 180)
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/flygemm_try}
mkdir -p "$FINAL"
export OUT=$(mktemp -d)
PY=${PYTHON:-python3}
read -r LIM_CHECK LIM_SAN LIM_TUNE <<< "${FLYGEMM_TRY_LIMITS:-240 90 180}"
export FLYGEMM_TEST_ARGS="${FLYGEMM_TRY_TESTS:-tests/test_gpu_cuda_kernels.py} -k '${FLYGEMM_TRY_K:?set FLYGEMM_TRY_K}'"
export FLYGEMM_BENCH_ARGS=${FLYGEMM_BENCH_ARGS:-"--no-check --ops gemm_a8w8 --shapes 8192x8192x8192"}
note() { echo "$*" | tee -a "$FINAL/summary.txt"; }
timeout "$LIM_CHECK" bash tools/gpu_check.sh > "$FINAL/check.txt" 2>&1
note "check rc $?"
cp "$OUT/tests.log" "$FINAL/tests.log" 2>/dev/null
export PYTHONPATH=$PWD/python
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "${FLYGEMM_TRY_MATCH:-}" ]; then
  for tool in ${FLYGEMM_TRY_SAN_TOOLS:-racecheck memcheck}; do
    timeout "$LIM_SAN" "$SAN" --tool "$tool" $PY tools/sanitize_sweep.py --each-kernel \
      --match "$FLYGEMM_TRY_MATCH" --shapes "${FLYGEMM_TRY_SAN_SHAPES:-2304x2056x512}" > "$FINAL/$tool.log" 2>&1
    note "$tool rc $?"
  done
fi
if [ -n "${FLYGEMM_TUNE_OPS:-}" ]; then
  OUT=$FINAL timeout "$LIM_TUNE" bash tools/gpu_tune.sh > /dev/null 2>&1
  note "tune rc $?"
fi
tar -czf "$FINAL/try.tgz" -C "$OUT" .
grep -E "^=== tests|passed|failed|FAIL" "$FINAL/check.txt" | head -n 12
for tool in ${FLYGEMM_TRY_SAN_TOOLS:-racecheck memcheck}; do
  [ -f "$FINAL/$tool.log" ] && { echo "=== $tool"; grep -E "ERROR SUMMARY|hazard|FAIL|ok" "$FINAL/$tool.log" | tail -n 4; }
done
# the 6 fastest candidates per shape and op
[ -f "$FINAL/tune.log" ] && awk '/^===/ {delete n; print substr($0, 1, 60); next} $1 ~ /^[0-9]+$/ {k = $1 " " $2 " " $3; if (n[k]++ < 6) print}' "$FINAL/tune.log"
cat "$FINAL/summary.txt"
