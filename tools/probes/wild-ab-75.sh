#!/usr/bin/env bash
# Seventy-fifth session, second call: tools/ab.py over tools/probes/by-cost-large-m-75.pairs (the 192-row by_cost rows of
# the M > 4096 buckets against the pick before) and tools/probes/wild-ab-75.pairs (the table's pick against other tiles on
# the random-shape sweep's worst mid-M rows), 2 rounds, event time. Logs into $OUT; per pair B / A (median) last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
cat ${AB_PAIRS:-tools/probes/by-cost-large-m-75.pairs tools/probes/wild-ab-75.pairs} > "$OUT/pairs.txt"
timeout "${AB_T:-330}" python3 tools/ab.py --pairs "$OUT/pairs.txt" --rounds "${AB_ROUNDS:-2}" \
  > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s ($(grep -c median "$OUT/ab.txt") pairs)"
grep median "$OUT/ab.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, m, $NF}' \
  | sed 's/gemm_a8w8.fp8_e4m3fn.bf16.//; s/gemm_a16w16.bf16.bf16.//; s/\.sm90a//'
