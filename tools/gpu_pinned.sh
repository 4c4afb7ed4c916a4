#!/usr/bin/env bash
# tools/pinned_bench.py on the H200 in one device call: builds the extension from the carried
# kernels, then one pinned_bench run per line of $FLYGEMM_PINNED ("op variant shapes kernels",
# lines separated by ';'), all output in $OUT/pinned.log, printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_pinned}
mkdir -p "$OUT"
source tools/device_env.sh
PY=${PYTHON:-python3}
$PY setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
IFS=';' read -ra RUNS <<< "${FLYGEMM_PINNED:?set FLYGEMM_PINNED}"
for run in "${RUNS[@]}"; do
  read -r op variant shapes kernels <<< "$run"
  $PY tools/pinned_bench.py --op "$op" --variant "$variant" --shapes "$shapes" --kernels "$kernels" \
    --rounds "${FLYGEMM_PINNED_ROUNDS:-3}" >> "$OUT/pinned.log" 2>&1 || echo "pinned_bench $op failed" >> "$OUT/pinned.log"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$OUT/pinned.log" 2>&1
cat "$OUT/pinned.log"
