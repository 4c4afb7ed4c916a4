#!/usr/bin/env bash
# The whole GPU check on a CUDA machine that has torch but no DSLs and no network:
# build the extension against that torch from prebuilt kernels in build/kernels/, run the GPU tests
# and the benchmark, keep full logs in $OUT, print a short table last.
#   FLYGEMM_BENCH_ARGS   extra arguments for `python -m flygemm bench`
#   FLYGEMM_TEST_ARGS    pytest selection (default: the GPU tests)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_gpu_check}
mkdir -p "$OUT"
source tools/device_env.sh
PY=${PYTHON:-python3}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for arch in ${FLYGEMM_ARCHS//,/ }; do
  [ -f "build/kernels/$arch/manifest.json" ] || { echo "no prebuilt kernels for $arch in build/kernels/$arch (carry them)"; exit 2; }
done
t0=$(date +%s)
if ! $PY setup.py build_ext --inplace > "$OUT/build.log" 2>&1; then
  tail -n 60 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
fi
t1=$(date +%s)
$PY -m flygemm info --kernels > "$OUT/info.txt" 2>&1
# shell words, so that a quoted -k expression stays one argument (FLYGEMM_TEST_ARGS="f.py -k 'a or b'")
eval "test_args=(${FLYGEMM_TEST_ARGS:-tests/test_gpu_cuda.py})"
$PY -m pytest -q -rs -p no:cacheprovider "${test_args[@]}" > "$OUT/tests.log" 2>&1
test_rc=$?
t2=$(date +%s)
$PY -m flygemm bench ${FLYGEMM_BENCH_ARGS:-} --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
bench_rc=$?
t3=$(date +%s)
echo "=== info";  head -n 20 "$OUT/info.txt"
echo "=== tests (rc $test_rc)"; grep -E "passed|failed|error|FAILED|ERROR" "$OUT/tests.log" | tail -n 25
echo "=== bench (rc $bench_rc)"; sed -n '/^op /,$p' "$OUT/bench.log" | tail -n 40
echo "=== times: build $((t1-t0)) s, tests $((t2-t1)) s, bench $((t3-t2)) s; $(cat "$OUT/gpu.txt" | tail -n 1)"
exit $test_rc
