#!/usr/bin/env bash
# Sixty-eighth session, either card, after the ring edges moved (csrc/dispatch.cpp ring_min_ctas): the move by event
# time out of sample (tools/probes/ring-edge-verify-68.pairs: old pick pinned against the table), then every decode GPU
# test. Logs into $OUT (logs-68b.tgz); prints a short summary last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
export PYTHONUNBUFFERED=1
DC_NAME=ring-verify DC_PAIRS=tools/probes/ring-edge-verify-68.pairs DC_K="" DC_AB_T=${RV_AB_T:-150} DC_TEST_T=120 \
  source tools/probes/default_check.sh > "$OUT/rv-stdout.txt" 2>&1
(cd "$OUT" && tar czf logs-68b.tgz ./*.txt ./*.log 2>/dev/null)
grep -E "rc|passed|failed" "$OUT/rv-stdout.txt" | tail -5
