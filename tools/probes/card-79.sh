#!/usr/bin/env bash
# Seventy-ninth session's device call (carry ["build/kslim"]; redirect stdout outside $OUT): the out-of-sample A/B of
# the .sw split cap restricted to K <= 4096 (tools/probes/partial-cap-79.pairs, old split forced against the table),
# whether a ragged M slows the .sw tiles (tools/probes/ragged-sw-79.pairs), and the dispatch tests on the GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
for p in ${PAIRS:-ragged-sw-79 partial-cap-79}; do
  timeout "${AB_T:-150}" python3 tools/ab.py --pairs tools/probes/$p.pairs --rounds 2 > "$OUT/$p.txt" 2>&1
  echo "$p rc $? at $((SECONDS - start)) s ($(grep -c median "$OUT/$p.txt") pairs)"
done
timeout "${TD_T:-60}" python3 -m pytest -q -p no:cacheprovider tests/test_dispatch.py -k "split or sm90a_default" > "$OUT/test-dispatch.log" 2>&1
echo "test_dispatch rc $?: $(tail -n 1 "$OUT/test-dispatch.log") at $((SECONDS - start)) s"
for p in ${PAIRS:-ragged-sw-79 partial-cap-79}; do
  grep median "$OUT/$p.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, $5, $6, m}'
done
