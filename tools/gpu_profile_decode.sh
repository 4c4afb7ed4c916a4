#!/usr/bin/env bash
# Nsight Compute on the decode kernels (after tools/gpu_check.sh built the extension): one cold-L2
# profile of the split-K pass per "op:variant:MxNxK:kernel:split_k" in FLYGEMM_PROFILE (space separated).
# Output: $OUT/ncu.txt (details page per kernel: speed of light, memory, warp stalls, occupancy).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_gpu_check}
export PYTHONPATH=$PWD/python
for spec in ${FLYGEMM_PROFILE:?}; do
  IFS=: read -r op variant shape kernel split <<< "$spec"
  echo "=== $spec" >> "$OUT/ncu.txt"
  timeout 120 ncu --clock-control none -k regex:main_kernel --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats --section SchedulerStats \
    python3 tools/profile_one.py --op "$op" --variant "$variant" --shape "$shape" --kernel "$kernel:$split" \
    >> "$OUT/ncu.txt" 2>&1 || echo "ncu failed for $spec" >> "$OUT/ncu.txt"
done
