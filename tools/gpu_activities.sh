#!/usr/bin/env bash
# GPU activities (kernel name, start offset, duration) of single cold-L2 calls, for a list of pinned
# kernels: what a call's kernel time is made of (e.g. a split-K main kernel against its reduce).
#   FLYGEMM_ACTIVITIES  "op:variant:MxNxK:kernel:split_k ..." (kernel '-' = the dispatch table's choice,
#                       'torch' = the op's torch peer, the bench's comparison)
# Builds the extension from the carried build/kernels first; full output in $OUT/activities.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_activities}
mkdir -p "$OUT"
source tools/device_env.sh
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
export PYTHONPATH=$PWD/python
for spec in ${FLYGEMM_ACTIVITIES:?set FLYGEMM_ACTIVITIES}; do
  IFS=: read -r op variant shape kernel split <<< "$spec"
  pin=()
  [ "$kernel" = torch ] && pin=(--torch)
  [ "$kernel" != "-" ] && [ "$kernel" != torch ] && pin=(--kernel "$kernel:$split")
  echo "### $spec"
  timeout 60 python3 tools/profile_one.py --op "$op" --variant "$variant" --shape "$shape" "${pin[@]}" --activities 2>&1 \
    | grep -v -i "warn"
done > "$OUT/activities.txt"
# one line per activity of the last call of each spec
awk '/^###/ {print; next} /call 2:/ {print}' "$OUT/activities.txt" | sed 's/gemm_splitk_decode\.//'
