#!/usr/bin/env bash
# Seventy-sixth session's device call (carry ["build/kslim"], made by tools/slim_kernels.sh). On an H200: the full final
# (tools/probes/any-61.sh: GPU tests, the issue-4 / 5 bars). Elsewhere: the out-of-sample check of the M > 4096 by_cost
# margins (tools/probes/by-cost-verify-75.sh), then the M = 65..256 small-N lead (tools/probes/small-n-76.pairs, 2 rounds).
# Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "device: $name"
if echo "$name" | grep -q H200 && [ -z "${SKIP_FINAL:-}" ]; then
  source tools/probes/use_kslim.sh
  bash tools/probes/any-61.sh
  exit
fi
if [ -n "${SKIP_VERIFY:-}" ]; then
  start=$SECONDS; source tools/probes/use_kslim.sh; source tools/probes/build_ext.sh
else
  bash tools/probes/by-cost-verify-75.sh
  source tools/device_env.sh
fi
timeout "${SMALL_N_T:-270}" python3 tools/ab.py --pairs tools/probes/small-n-76.pairs --rounds 2 > "$OUT/small-n.txt" 2>&1
echo "small-n rc $? at ${SECONDS} s ($(grep -c median "$OUT/small-n.txt") pairs)"
grep median "$OUT/small-n.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, m, $NF}'
