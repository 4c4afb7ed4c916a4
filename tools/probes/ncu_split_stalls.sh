#!/usr/bin/env bash
# Thirty-fourth session: warp-state (stall reason) and memory sections of Nsight Compute for the GEMM pass of pinned
# split-K calls, to see why the pass barely shrinks with the split (tools/probes/split_breakdown.py). Lines of
# "op variant MxNxK kernel:split" on stdin; full reports in $OUT/ncu_stalls.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
while read -r op variant shape pick; do
  [ -z "$op" ] && continue
  echo "=== $op $variant $shape $pick" >> "$OUT/ncu_stalls.txt"
  timeout 150 ncu --clock-control none -k "regex:kernel_cutlass_kernel_flygemm" --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SpeedOfLight \
    --section LaunchStats --section Occupancy \
    python3 - "$op" "$variant" "$shape" "$pick" >> "$OUT/ncu_stalls.txt" 2>&1 <<'PY' || echo "ncu failed" >> "$OUT/ncu_stalls.txt"
import sys
sys.path.insert(0, "python"); sys.path.insert(0, "tools")
import torch, flygemm
from flygemm import bench
from ab import pinned
op, variant, shape, pick = sys.argv[1:5]
M, N, K = (int(x) for x in shape.split("x"))
problem, _, _ = bench.make_problem(op, variant, M, N, K, torch.device("cuda"), torch.Generator(device="cuda").manual_seed(0))
fn = pinned(getattr(flygemm, op), problem, pick)
for _ in range(6):
    fn()
torch.cuda.synchronize()
PY
done
grep -E "^===|Duration|Stall|Warp Cycles Per|Active Warps|Issued Warp|No Eligible|DRAM Throughput|L2 Hit|Mem Busy|Max Bandwidth|Memory Throughput" "$OUT/ncu_stalls.txt"
