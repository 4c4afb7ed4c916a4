#!/usr/bin/env bash
# Seventy-fifth session, third call: the M > 4096 by_cost rows with their ping-pong margins, out of sample
# (tools/probes/by-cost-oos-75.pairs, tools/ab.py 2 rounds), the oracle on three changed shapes (python -m flygemm bench
# with the check) and tests/test_dispatch.py's explain / sm_90a default-row tests on the GPU (the linked table through flygemm.explain). Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
timeout "${AB_T:-130}" python3 tools/ab.py --pairs tools/probes/by-cost-oos-75.pairs --rounds 2 > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s ($(grep -c median "$OUT/ab.txt") pairs)"
timeout "${CHECK_T:-60}" python3 -m flygemm bench --ops gemm_a16w16,gemm_a8w8 --shapes 4500x576x4096,4286x576x6336,5168x1728x4096 \
  > "$OUT/check.txt" 2>&1
echo "check rc $? at $((SECONDS - start)) s"
timeout "${TD_T:-60}" python3 -m pytest -q -p no:cacheprovider tests/test_dispatch.py -k "explain or sm90a_default or by_cost" > "$OUT/test-dispatch.log" 2>&1
echo "test_dispatch rc $?: $(tail -n 1 "$OUT/test-dispatch.log") at $((SECONDS - start)) s"
grep -E "^gemm" "$OUT/check.txt" | tail -n 9 | cut -c1-150
grep median "$OUT/ab.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, m}'
