#!/usr/bin/env bash
# The MXFP4 bf16-wgmma decode kernels (.wgb, seventeenth session) in one device call: build the extension,
# their GPU tests, one Nsight Compute source profile (FLYGEMM_MXB_PROFILE, empty: skip), then kernel-time
# tuning against the kernels the table uses now over the decode sweep's layers at M = 16..64, the issue-5
# shapes, and (FLYGEMM_MXB_M8=1) M = 8. Every step has its own time limit, so a slow one keeps the others'
# results; logs and winning rows (tuned.csv) in $OUT.
#   FLYGEMM_MXB_TEST_FILES / FLYGEMM_MXB_TESTS  the pytest files and -k expression of the test step
#   FLYGEMM_MXB_MATCH  the .wgb candidates of the tuning; FLYGEMM_MXB_NOW  the kernels they are compared with
#   FLYGEMM_MXB_OP     the op (default gemm_mxfp4; gemm_mxfp8 for the MXFP8 .wgb kernels)
#   FLYGEMM_MXB_SAN=1  compute-sanitizer memcheck over the op's .wgb kernels after the tests
#                      (FLYGEMM_MXB_SAN_MATCH: other kernels, comma-separated name parts, e.g. .img.)
#   FLYGEMM_MXB_EXTRA  more shapes for the issue step (MxNxK,...); FLYGEMM_MXB_TUNE=0 skips the tuning
#   FLYGEMM_MXB_PASSES timing passes per candidate (default 1; 2+ alternate the candidate order, so a drift of
#                      clocks over a long step, seen on long-K M = 128 shapes, adds to every candidate alike)
#   FLYGEMM_MXB_PLAN   a file of tuning steps, one per line: name seconds op shapes match splits (# comments);
#                      replaces the issue / sweep / M = 8 steps (several ops and candidate sets in one call)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_mx_bf16}
mkdir -p "$OUT"
source tools/device_env.sh
PY=${PYTHON:-python3}
$PY setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/build.log"
timeout "${FLYGEMM_MXB_T0:-120}" $PY -m pytest -q -rs -p no:cacheprovider ${FLYGEMM_MXB_TEST_FILES:-tests/test_gpu_cuda_decode.py} \
  -k "${FLYGEMM_MXB_TESTS:-mx_bf16 or (gemm_mxfp4 and (wgmma_kernels or every_decode_kernel or special_scale))}" \
  > "$OUT/tests.log" 2>&1
echo "tests rc $? $(tail -n 1 "$OUT/tests.log")"
OP=${FLYGEMM_MXB_OP:-gemm_mxfp4}
if [ "${FLYGEMM_MXB_SAN:-0}" = 1 ]; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  PYTHONPATH=$PWD/python timeout "${FLYGEMM_MXB_TS:-90}" "$SAN" --tool memcheck $PY tools/sanitize_sweep.py --each-kernel \
    --match "${FLYGEMM_MXB_SAN_MATCH:-.wgb.}" --ops "$OP" --shapes 70x272x1024,1x200x7168 > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc $? $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -n 1)"
fi
if [ -n "${FLYGEMM_MXB_PROFILE:-}" ]; then
  FLYGEMM_PROFILE=$FLYGEMM_MXB_PROFILE timeout "${FLYGEMM_MXB_TP:-150}" bash tools/gpu_profile_source.sh
  echo "profile rc $?"
fi
step() {  # name seconds shapes match splits [op]
  timeout "$2" $PY tools/tune.py --op "${6:-$OP}" --shapes "$3" --split-k "$5" --kernel-time --match "$4" \
    --passes "${FLYGEMM_MXB_PASSES:-1}" \
    --csv "$OUT/tuned.csv" --append > "$OUT/tune-$1.log" 2>&1
  echo "$1 rc $?"
}
if [ -n "${FLYGEMM_MXB_PLAN:-}" ]; then
  grep -v '^ *#' "$FLYGEMM_MXB_PLAN" | while read -r name secs op shapes match splits; do
    [ -n "$name" ] && step "$name" "$secs" "$shapes" "$match" "$splits" "$op"
  done
  grep -h "\*" "$OUT"/tune-*.log | awk '{print $1, $2, $3, $4, $5, $6}'
  exit 0
fi
NOW=${FLYGEMM_MXB_NOW-m16n64.sm90a,m16n64.wg.,m8n64.s3.p2.wgn,m8n32.sm90a}
WGB=${FLYGEMM_MXB_MATCH:-k128.s4.p8.wgb,k128.s4.p4,k128.s4.p2.wgb,k128.s3.p2.b3,m8n64.s3.p4.wgb}
if [ "${FLYGEMM_MXB_TUNE:-1}" = 0 ]; then exit 0; fi   # tests / memcheck / profile only
step issue "${FLYGEMM_MXB_T1:-90}" 16x16384x7168,32x16384x7168,64x16384x7168,16x2048x7168,32x2048x7168,64x2048x7168${FLYGEMM_MXB_EXTRA:+,$FLYGEMM_MXB_EXTRA} \
  "$WGB${NOW:+,$NOW}" 1,2
step sweep "${FLYGEMM_MXB_T2:-260}" "$(cat tools/tune_specs/mx_decode_sweep_m16-64.txt)" "$WGB${NOW:+,$NOW}" 1,2
if [ "${FLYGEMM_MXB_M8:-0}" = 1 ]; then
  step m8 "${FLYGEMM_MXB_T3:-60}" "$(tr ',' '\n' < tools/tune_specs/mx_decode_sweep_m1-8.txt | grep '^8x' | paste -sd,)" \
    "m8n64.s3.p4.wgb,m8n64.s3.p2.wgn,m8n32.sm90a" 1,2
fi
grep -h "\*" "$OUT"/tune-*.log | awk '{print $1, $2, $3, $4, $5, $6}'
