#!/usr/bin/env bash
# One device call for a session's final tree: tools/gpu_decode_report.sh (build, every GPU test file, fuzz and its
# memcheck run, the issue-5 decode table, FLYGEMM_DR_* extras) and then the issue-4 bench (the two large shapes, then
# the LLM shape set with its JSON), each part under its own time limit; logs in $OUT (as one .tgz), the short tables last.
# Redirect stdout outside $OUT.
#   FLYGEMM_I4_T  seconds for each issue-4 part (default 150); FLYGEMM_I4=0 skips them;
#   FLYGEMM_I4_EXTRA  more shapes (MxNxK,...) for the same three ops, with their JSON (extra.json)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_final}
mkdir -p "$OUT"
OUT="$OUT" bash tools/gpu_decode_report.sh > "$OUT/report.txt" 2>&1
echo "report rc $?"
if [ "${FLYGEMM_I4:-1}" != 0 ]; then
  source tools/device_env.sh
  ops=gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4
  timeout "${FLYGEMM_I4_T:-150}" python3 -m flygemm bench --no-check --ops "$ops" \
    --shapes 8192x8192x8192,54560x8192x8192 > "$OUT/issue4.log" 2>&1
  echo "issue-4 large shapes rc $?"
  timeout "${FLYGEMM_I4_T:-150}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
    --shapes llm --json "$OUT/llm.json" > "$OUT/issue4-llm.log" 2>&1
  echo "issue-4 LLM set rc $?"
  if [ -n "${FLYGEMM_I4_EXTRA:-}" ]; then
    timeout "${FLYGEMM_I4_T:-150}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
      --shapes "$FLYGEMM_I4_EXTRA" --json "$OUT/extra.json" > "$OUT/extra.log" 2>&1
    echo "extra shapes rc $?"
  fi
fi
tail -n 70 "$OUT/report.txt"
[ -f "$OUT/issue4.log" ] && grep -vE "UserWarning|_warn_once" "$OUT/issue4.log" | tail -n 25
[ -f "$OUT/issue4-llm.log" ] && tail -n 8 "$OUT/issue4-llm.log"
[ -f "$OUT/extra.log" ] && tail -n 6 "$OUT/extra.log"
# one archive: the device tool brings back a limited number of files (the thirty-ninth session lost llm.json)
tar -czf /tmp/final-logs.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv /tmp/final-logs.tgz "$OUT/"
exit 0
