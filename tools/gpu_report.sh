#!/usr/bin/env bash
# The closing-note run on the H200, in one device call: the GPU tests and the issue-4 large shapes
# (tools/gpu_check.sh), then the LLM shape set and the issue-5 decode shapes (kernel time).
# Everything is packed into $OUT/report.tgz (the device returns only a few files); the summary
# (test result, large-shape rows, per-family LLM geomeans, decode table) is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/flygemm_report}
mkdir -p "$FINAL"
export OUT=$(mktemp -d)
PY=${PYTHON:-python3}
export FLYGEMM_TEST_ARGS=${FLYGEMM_TEST_ARGS:-"tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py tests/test_gpu_cuda_decode.py tests/test_gpu_cuda_kernels.py tests/test_gpu_cuda_mx.py tests/test_gpu_rocm.py tests/test_dispatch.py tests/test_gpu_fuzz.py tests/test_gpu_multi_device.py tests/test_gpu_integration.py"}
export FLYGEMM_BENCH_ARGS="--no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes 8192x8192x8192,54560x8192x8192"
bash tools/gpu_check.sh > "$OUT/check.txt" 2>&1
echo "check rc $?" >> "$OUT/check.txt"
export PYTHONPATH=$PWD/python
# FLYGEMM_REPORT_LLM=0 skips the LLM set (when no row of it changed); FLYGEMM_REPORT_SWEEP=1 adds the
# decode sweep (kernel time) for tools/plot_sweep.py
if [ "${FLYGEMM_REPORT_LLM:-1}" != 0 ]; then
  $PY -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale --shapes llm \
    --json "$OUT/llm.json" > "$OUT/llm.log" 2>&1
fi
$PY -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 1x16384x7168,16x16384x7168,1x2048x7168,16x2048x7168 --json "$OUT/decode.json" > "$OUT/decode.log" 2>&1
if [ "${FLYGEMM_REPORT_SWEEP:-0}" != 0 ]; then
  $PY -m flygemm bench --no-check --kernel-time --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
    --shapes decode-sweep --json "$OUT/sweep.json" > "$OUT/sweep.log" 2>&1
  echo "=== decode sweep (rc $?)"
fi
# FLYGEMM_REPORT_MEMCHECK=<kernel-name substring> adds compute-sanitizer memcheck over those kernels
# (split_k 1 and 3, shapes FLYGEMM_REPORT_SAN_SHAPES)
if [ -n "${FLYGEMM_REPORT_MEMCHECK:-}" ]; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  timeout 150 "$SAN" --tool memcheck $PY tools/sanitize_sweep.py --each-kernel --match "$FLYGEMM_REPORT_MEMCHECK" \
    --split-k 1,3 --shapes "${FLYGEMM_REPORT_SAN_SHAPES:-1x2056x7168,9x520x12288}" > "$OUT/memcheck.log" 2>&1
  echo "=== memcheck $FLYGEMM_REPORT_MEMCHECK (rc $?): $(grep -h 'ERROR SUMMARY' "$OUT/memcheck.log" | sort | uniq -c)"
fi
tar -czf "$FINAL/report.tgz" -C "$OUT" .
grep -E "^=== tests|passed|failed" "$OUT/check.txt" | head -n 4
sed -n '/^=== bench/,/^=== times/p' "$OUT/check.txt"
[ -f "$OUT/llm.json" ] && $PY tools/compare_bench.py llm="$OUT/llm.json" | sed -n '/^geomean/,$p'
sed -n '/^op /,$p' "$OUT/decode.log" | tail -n 40
