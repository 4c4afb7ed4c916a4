#!/usr/bin/env bash
# Small-N decode investigation in one device call: build + the decode GPU tests, memcheck on the
# kernels matching FLYGEMM_TRY_MATCH, the kernel-time tuning of the decode-family kernels on the N = 2048 decode
# shapes (tools/tune.py --kernel-time), and the read-bandwidth probes (tools/probes/stream_read.py).
#   FLYGEMM_TEST_ARGS  pytest selection (default tests/test_gpu_cuda_decode.py)
#   FLYGEMM_TRY_MATCH  kernel-name substring for compute-sanitizer memcheck (default: none)
#   FLYGEMM_TUNE_OPS   "op:variant ..." (default bf16, fp8 per-tensor, blockscale)
#   FLYGEMM_TUNE_SHAPES (default 1x2048x7168,16x2048x7168); FLYGEMM_TUNE_MATCH kernel-name filter (default
#   splitk_decode); FLYGEMM_PROBE=0 skips the probes
# Logs go to a fresh folder packed into $OUT/all.tgz at the end (the device returns a few files only);
# the probe table is also left as $OUT/probe.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/flygemm_small_n}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
export FLYGEMM_TEST_ARGS=${FLYGEMM_TEST_ARGS:-tests/test_gpu_cuda_decode.py}
export FLYGEMM_BENCH_ARGS=${FLYGEMM_BENCH_ARGS:-"--kernel-time --no-check --ops gemm_a8w8 --shapes 1x2048x7168"}
OUT=$OUT timeout 240 bash tools/gpu_check.sh > "$OUT/check.txt" 2>&1
echo "check rc $?"; grep -E "passed|failed" "$OUT/check.txt" | tail -n 3
cp "$OUT/tests.log" "$OUT/decode-tests.log" 2>/dev/null; grep -E "^FAILED|Error" "$OUT/tests.log" | head -n 8
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
if [ -n "${FLYGEMM_TRY_MATCH:-}" ]; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  timeout 120 "$SAN" --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match "$FLYGEMM_TRY_MATCH" --split-k "${FLYGEMM_TRY_SAN_SPLITS:-1,3}" \
    --shapes "${FLYGEMM_TRY_SAN_SHAPES:-1x2056x7168,9x520x12288}" > "$OUT/memcheck.log" 2>&1
  echo "=== memcheck (rc $?)"; grep -E "ERROR SUMMARY|FAIL" "$OUT/memcheck.log" | sort | uniq -c | head -n 5
fi
for spec in ${FLYGEMM_TUNE_OPS:-gemm_a16w16:- gemm_a8w8:per_tensor gemm_a8w8_blockscale:-}; do
  op=${spec%%:*}
  timeout 200 python3 tools/tune.py --op "$op" --variant "${spec#*:}" --kernel-time --match "${FLYGEMM_TUNE_MATCH:-splitk_decode}" \
    --shapes "${FLYGEMM_TUNE_SHAPES:-1x2048x7168,16x2048x7168}" --split-k "${FLYGEMM_TUNE_SPLITS:-1,2,4}" \
    > "$OUT/tune_$op.txt" 2>&1
  echo "=== $op (rc $?)"
  awk -v top="${FLYGEMM_TUNE_TOP:-6}" '$1 ~ /^[0-9]+$/ {k = $1 " " $2 " " $3; if (n[k]++ < top) print}' "$OUT/tune_$op.txt" \
    | sed 's/gemm_splitk_decode\.//; s/fp8_e4m3fn\.bf16\.//; s/bf16\.bf16\.//; s/\.sm90a//' | cut -c1-96
done
if [ "${FLYGEMM_PROBE:-1}" != 0 ]; then
  timeout 150 python3 tools/probes/stream_read.py > "$OUT/probe.txt" 2>&1
  echo "=== probe (rc $?)"; grep -E "^---|pattern|ldg32|bulk ctas 128 stages 7" "$OUT/probe.txt"
fi
tar -czf "$FINAL/all.tgz" -C "$OUT" . && { [ ! -f "$OUT/probe.txt" ] || cp "$OUT/probe.txt" "$FINAL/"; } && rm -rf "$OUT"
