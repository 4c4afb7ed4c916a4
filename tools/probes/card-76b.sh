#!/usr/bin/env bash
# The .sw split cap's A/B, run from main: applies tools/probes/partial-cap-77.patch to the device's copy of the tree (its
# csrc/dispatch.cpp caps the .sw split past M = 64 and tests/test_dispatch.py pins it), so the table answers with the capped
# split while each pair's A side forces the old one. Carry ["build/kslim"]: the .sw split capped by its partials' share of the
# weight bytes (tools/probes/partial-cap-76.pairs, old pick forced against the table), wide unswapped tiles on mid-M long-K
# layers (tools/probes/mid-m-long-k-76.pairs), the oracle on changed shapes, the dispatch tests on the GPU. Logs into $OUT.
# Written in the seventy-sixth session (the cap then lived on a branch that did not survive); unrun as of the seventy-seventh.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
if git apply --check tools/probes/partial-cap-77.patch 2>/dev/null; then
  git apply tools/probes/partial-cap-77.patch && echo "applied partial-cap-77.patch"
else
  grep -q split_within_partial_share csrc/dispatch.cpp || { echo "partial-cap-77.patch does not apply"; exit 1; }
fi
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
for p in ${PAIRS:-partial-cap-76 mid-m-long-k-76}; do
  timeout "${AB_T:-150}" python3 tools/ab.py --pairs tools/probes/$p.pairs --rounds 2 > "$OUT/$p.txt" 2>&1
  echo "$p rc $? at $((SECONDS - start)) s ($(grep -c median "$OUT/$p.txt") pairs)"
done
timeout 60 python3 -m flygemm bench --ops gemm_a16w16,gemm_a8w8 --shapes 100x768x2048,176x832x1728,224x1024x4096,65x512x1536 \
  > "$OUT/check.txt" 2>&1
echo "check rc $? at $((SECONDS - start)) s"
timeout "${TD_T:-90}" python3 -m pytest -q -p no:cacheprovider tests/test_dispatch.py -k "explain or sm90a_default or by_cost or split" > "$OUT/test-dispatch.log" 2>&1
echo "test_dispatch rc $?: $(tail -n 1 "$OUT/test-dispatch.log") at $((SECONDS - start)) s"
grep -E "^gemm" "$OUT/check.txt" | cut -c1-150
for p in ${PAIRS:-partial-cap-76 mid-m-long-k-76}; do
  grep median "$OUT/$p.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, $5, $6, m, $NF}'
done
