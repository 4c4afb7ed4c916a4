#!/usr/bin/env bash
# Sixty-first session: the whole-K fp8 M = 16 decode kernel (m16n16.w7.bk4.rr.np) against the table's picks on the
# other small-N fp8 layers (tools/probes/${FLYGEMM_RR_PAIRS:-rr-more-61}.pairs, rr-more2-61: M <= 12; tools/ab.py, 5 rounds, event time). Logs into $OUT; stdout
# outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout 150 python3 tools/ab.py --pairs tools/probes/${FLYGEMM_RR_PAIRS:-rr-more-61}.pairs --rounds 5 > "$OUT/rr-more-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
cut -c1-220 "$OUT/rr-more-ab.txt"
