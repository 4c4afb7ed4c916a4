#!/usr/bin/env bash
# Sixty-eighth session, the short form of any-68b.sh for a nearly spent device budget: half the ring-edge verify pairs
# (tools/probes/ring-edge-verify-68-half.pairs), no tests. Logs into $OUT; prints the pair lines last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
export PYTHONUNBUFFERED=1
source tools/probes/build_ext.sh > "$OUT/build-stdout.txt" 2>&1
timeout ${RV_AB_T:-60} python3 tools/ab.py --pairs tools/probes/ring-edge-verify-68-half.pairs --rounds 2 > "$OUT/ring-verify-half-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep -c median "$OUT/ring-verify-half-ab.txt"
