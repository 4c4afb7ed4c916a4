#!/usr/bin/env bash
# One device call for new kernel candidates: tools/gpu_decode_report.sh (build, every GPU test file, the fuzz
# and its memcheck run, the issue-5 decode table in kernel time), then a tuning plan in kernel time
# (tools/gpu_tune_mx_bf16.sh with FLYGEMM_MXB_PLAN, its own test step skipped). Each part's logs are packed
# into one archive in $OUT as soon as the part ends, so a call cut at its time limit still returns the parts
# that finished; the short tables last.
#   FLYGEMM_RT_PLAN      the tuning plan (name seconds op shapes match splits per line); empty: report only
#   FLYGEMM_RT_REPORT=0  skip the report part (tuning only)
#   FLYGEMM_RT_T1        time limit of the report part in seconds (default 300)
#   FLYGEMM_RT_T2        time limit of the tuning part (default 540: its logs still come back inside a
#                        600 s device call whose plan's steps add up to more)
#   FLYGEMM_RT_TESTS     a pytest -k expression over tests/test_gpu_cuda_decode.py run before the tuning
#                        (e.g. the new candidates' tests when the report part is skipped); empty: none
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_report_tune}
mkdir -p "$OUT"
work=$(mktemp -d)
if [ "${FLYGEMM_RT_REPORT:-1}" != 0 ]; then
  mkdir -p "$work/report"
  OUT="$work/report" timeout "${FLYGEMM_RT_T1:-300}" bash tools/gpu_decode_report.sh > "$work/report/summary.txt" 2>&1
  echo "report rc $?" >> "$work/report/summary.txt"
  tar -C "$work" -czf "$OUT/report.tgz" report
  cat "$work/report/summary.txt"
fi
if [ -n "${FLYGEMM_RT_PLAN:-}" ]; then
  mkdir -p "$work/tune"
  OUT="$work/tune" FLYGEMM_MXB_PLAN="$FLYGEMM_RT_PLAN" FLYGEMM_MXB_TESTS="${FLYGEMM_RT_TESTS:-not_a_test_name}" \
    timeout "${FLYGEMM_RT_T2:-540}" bash tools/gpu_tune_mx_bf16.sh > "$work/tune/summary.txt" 2>&1
  echo "tune rc $?" >> "$work/tune/summary.txt"
  tar -C "$work" -czf "$OUT/tune.tgz" tune
  echo "=== tuning winners (kernel time)"
  cat "$work/tune/summary.txt"
fi
