#!/usr/bin/env bash
# Fifty-first session, for a device call with little budget left: on an H200 only, the final run cut to what the issue
# 4 / 5 bars need (tools/gpu_decode_report.sh: build, every GPU test file, fuzz + memcheck, the issue-5 decode table;
# then the two issue-4 large shapes), each part copied to $OUT as soon as it ends so a timeout keeps what finished.
# On any other GPU it only prints the device name (an H100 run of this tree is in docs/PERF.md already).
#   FLYGEMM_S51_T  seconds for the large-shape bench (default 70)
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$name"
case "$name" in *H200*) ;; *) exit 0 ;; esac
mkdir -p /tmp/s51
OUT=/tmp/s51 bash tools/gpu_decode_report.sh > "$OUT/report.txt" 2>&1
cp /tmp/s51/fuzz.txt /tmp/s51/check.txt "$OUT/" 2>/dev/null
source tools/device_env.sh
timeout "${FLYGEMM_S51_T:-70}" python3 -m flygemm bench --no-check \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes 8192x8192x8192,54560x8192x8192 \
  > "$OUT/issue4.log" 2>&1
echo "issue-4 large shapes rc $?"
tail -n 60 "$OUT/report.txt"
grep -vE "UserWarning|_warn_once" "$OUT/issue4.log" | tail -n 16
