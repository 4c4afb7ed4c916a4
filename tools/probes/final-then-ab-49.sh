#!/usr/bin/env bash
# Forty-ninth session, one device call when machines are scarce: the final run (tools/gpu_final_and_issue4.sh: every
# GPU test, fuzz, memcheck, issue 4 / 5 benches) first, then the by_cost A/B pairs files in whatever time is left
# before FLYGEMM_DEADLINE seconds (default 570), split evenly. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
mkdir -p /tmp/ab49
bash tools/gpu_final_and_issue4.sh > /tmp/final.txt 2>&1
cp /tmp/final.txt "$OUT/final.txt"
pairs=(${FLYGEMM_AB_PAIRS:-})
left=$(( ${FLYGEMM_DEADLINE:-570} - (SECONDS - start) ))
echo "final took $((SECONDS - start)) s; $left s left for ${#pairs[@]} pairs files"
if [ "${#pairs[@]}" -gt 0 ] && [ "$left" -gt 60 ]; then
  FLYGEMM_BN_TESTS=0 FLYGEMM_BN_PAIRS="${pairs[*]}" FLYGEMM_BN_AB_T=$(( (left - 20) / ${#pairs[@]} )) \
    FLYGEMM_BN_ROUNDS=${FLYGEMM_BN_ROUNDS:-3} OUT=/tmp/ab49 bash tools/probes/bs-narrow-36.sh > /tmp/ab49/summary.txt 2>&1
  tar -czf "$OUT/ab-logs.tgz" -C /tmp/ab49 .
fi
nvidia-smi --query-gpu=name --format=csv,noheader
tail -n 45 /tmp/final.txt
