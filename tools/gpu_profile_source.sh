#!/usr/bin/env bash
# Nsight Compute source-level stall sampling (after tools/gpu_check.sh built the extension): for each
# "op:variant:MxNxK:kernel:split_k:kernel_regex" in FLYGEMM_PROFILE (space separated) one profile of the
# 4th call, then the per-SASS-instruction page as CSV and a summary of where the warps stall.
# Output: $OUT/ncu_src_<i>.csv (every instruction), $OUT/ncu_src.txt (summaries).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_gpu_check}
export PYTHONPATH=$PWD/python
i=0
for spec in ${FLYGEMM_PROFILE:?}; do
  IFS=: read -r op variant shape kernel split regex <<< "$spec"
  i=$((i + 1))
  echo "=== [$i] $spec" >> "$OUT/ncu_src.txt"
  timeout 180 ncu --clock-control none -k "regex:$regex" --launch-skip 3 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -f -o "$OUT/rep_$i" \
    python3 tools/profile_one.py --op "$op" --variant "$variant" --shape "$shape" --kernel "$kernel:$split" \
    >> "$OUT/ncu_src.txt" 2>&1 || { echo "ncu failed for $spec" >> "$OUT/ncu_src.txt"; continue; }
  ncu -i "$OUT/rep_$i.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu_src_$i.csv" 2>> "$OUT/ncu_src.txt"
  python3 tools/ncu_source_summary.py "$OUT/ncu_src_$i.csv" >> "$OUT/ncu_src.txt" 2>&1
  ncu -i "$OUT/rep_$i.ncu-rep" --page details --print-summary none 2>&1 \
    | grep -E "Duration|Elapsed Cycles|Throughput|Issue Slots|Tensor is|Warp Cycles Per Issued|Active Warps" >> "$OUT/ncu_src.txt"
  rm -f "$OUT/rep_$i.ncu-rep"
done
