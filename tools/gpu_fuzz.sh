#!/usr/bin/env bash
# One device call: build + the GPU test files (tools/gpu_check.sh) with the randomized op-surface
# tests (tests/test_gpu_fuzz.py) at their default seed, the fuzz again at more seeds, and the fuzz
# under compute-sanitizer memcheck at a small case count. Full logs in $OUT, a short table last.
#   FLYGEMM_FUZZ_SEEDS      extra seeds (default "7 11"; set empty for none)
#   FLYGEMM_FUZZ_MANY       cases per op for the extra seeds (default 80)
#   FLYGEMM_FUZZ_SAN_CASES  cases per op under memcheck (default 6; 0 skips memcheck)
#   FLYGEMM_TEST_ARGS / FLYGEMM_BENCH_ARGS as for tools/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_gpu_fuzz}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
GPU_TESTS="tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py tests/test_gpu_cuda_decode.py \
tests/test_gpu_cuda_kernels.py tests/test_gpu_cuda_mx.py tests/test_gpu_rocm.py tests/test_dispatch.py \
tests/test_gpu_fuzz.py tests/test_gpu_multi_device.py tests/test_gpu_integration.py"
FLYGEMM_TEST_ARGS=${FLYGEMM_TEST_ARGS:-$GPU_TESTS} \
  FLYGEMM_BENCH_ARGS=${FLYGEMM_BENCH_ARGS:---no-check --ops gemm_a8w8 --shapes 1x2048x7168} \
  OUT="$OUT" bash tools/gpu_check.sh > "$OUT/check.txt" 2>&1
check_rc=$?
summary=()
for seed in ${FLYGEMM_FUZZ_SEEDS-7 11}; do
  FLYGEMM_FUZZ_SEED=$seed FLYGEMM_FUZZ_CASES=${FLYGEMM_FUZZ_MANY:-80} timeout 240 \
    $PY -m pytest -q -p no:cacheprovider tests/test_gpu_fuzz.py > "$OUT/fuzz-seed$seed.log" 2>&1
  summary+=("fuzz seed $seed (rc $?): $(tail -n 1 "$OUT/fuzz-seed$seed.log")")
done
san_cases=${FLYGEMM_FUZZ_SAN_CASES:-6}
if [ "$san_cases" != 0 ]; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  FLYGEMM_FUZZ_SEED=5 FLYGEMM_FUZZ_CASES=$san_cases timeout 240 "$SAN" --tool memcheck \
    $PY -m pytest -q -p no:cacheprovider tests/test_gpu_fuzz.py -k random_case > "$OUT/fuzz-memcheck.log" 2>&1
  summary+=("memcheck (rc $?): $(grep -E "ERROR SUMMARY" "$OUT/fuzz-memcheck.log" | tail -n 1) / \
$(grep -E "passed|failed" "$OUT/fuzz-memcheck.log" | tail -n 1)")
fi
# fewer files come back from the device: one fuzz log, no copies of what check.txt shows
for f in "$OUT"/fuzz-seed*.log; do echo "##### $f"; cat "$f"; done > "$OUT/fuzz-extra-seeds.log" 2>/dev/null
failures=$(grep -h "^FAILED" "$OUT"/fuzz-seed*.log 2>/dev/null; grep -h "^E  .*Error" "$OUT/tests.log" | head -n 20)
rm -f "$OUT"/fuzz-seed*.log "$OUT/bench.json" "$OUT/info.txt" "$OUT/gpu.txt"
tail -n 45 "$OUT/check.txt"
echo "=== failures (first 30)"
echo "$failures" | head -n 30 | cut -c1-400
printf '%s\n' "${summary[@]}"
exit $check_rc
