#!/usr/bin/env bash
# Fifty-second session's first device call. On an H200: the full final (tools/probes/final-then-ab-49.sh with the
# FLYGEMM_* settings the caller exports), logs packed to $OUT. On any other GPU: the tree's GPU tests, fuzz, memcheck
# and the issue-5 decode table only (tools/gpu_decode_report.sh), since the bars are the H200's and an H100 run of the
# benches is in docs/PERF.md already. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in
  *H200*) bash tools/probes/final-then-ab-49.sh ;;
  *) mkdir -p /tmp/s52
     OUT=/tmp/s52 bash tools/gpu_decode_report.sh > /tmp/s52/report.txt 2>&1
     tar -czf "$OUT/tests-logs.tgz" -C /tmp/s52 .
     tail -n 45 /tmp/s52/report.txt ;;
esac
