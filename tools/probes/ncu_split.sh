#!/usr/bin/env bash
# Nsight Compute on the GEMM pass of pinned split-K calls (thirty-fourth session): does the pass itself shrink with
# the split when nothing else runs beside it (ncu serializes kernels, so the PDL-launched reduce cannot sit on the
# SMs during the pass), and where do its warps stall? Lines of "op variant MxNxK kernel:split" on stdin.
#   FLYGEMM_NCU_STALLS=1  the warp-state, scheduler, memory, launch and occupancy sections instead of a few metrics
#   FLYGEMM_NCU_SOURCE=1  (forty-fourth session) also the source counters: a report per line ($OUT/ncu_src_<i>.ncu-rep),
#                         its SASS page as csv, and the instructions with the most warp-stall samples (tools/ncu_source_summary.py)
# Full output in $OUT/ncu_split.txt, the key lines printed.
#   printf 'gemm_a8w8 per_tensor 128x4096x8192 gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a:4\n' | bash tools/probes/ncu_split.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
if [ "${FLYGEMM_NCU_STALLS:-0}" = 1 ]; then
  what=(--section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section SpeedOfLight
        --section LaunchStats --section Occupancy)
  keep="^===|Duration|Stall|Warp Cycles Per|Active Warps|Issued Warp|No Eligible|DRAM Throughput|L2 Hit|Mem Busy|Max Bandwidth|Memory Throughput|Est. Speedup|spends"
else
  m="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed"
  m="$m,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active"
  m="$m,smsp__inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"
  what=(--metrics "$m")
  keep="^===|gpu__time_duration|dram__throughput|lts__throughput|sm__throughput|grid_size|warps_active|inst_executed|_st.sum"
fi
if [ "${FLYGEMM_NCU_SOURCE:-0}" = 1 ]; then
  what+=(--section SourceCounters --import-source no)
fi
i=0
while read -r op variant shape pick; do
  [ -z "$op" ] && continue
  i=$((i + 1))
  echo "=== $op $variant $shape $pick" >> "$OUT/ncu_split.txt"
  rep=()
  [ "${FLYGEMM_NCU_SOURCE:-0}" = 1 ] && rep=(-f -o "$OUT/ncu_src_$i")
  timeout 150 ncu --clock-control none -k "regex:kernel_cutlass_kernel_flygemm" --launch-skip 3 --launch-count 1 \
    "${rep[@]}" "${what[@]}" python3 - "$op" "$variant" "$shape" "$pick" >> "$OUT/ncu_split.txt" 2>&1 <<'PY' || echo "ncu failed" >> "$OUT/ncu_split.txt"
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
  if [ "${FLYGEMM_NCU_SOURCE:-0}" = 1 ]; then
    ncu -i "$OUT/ncu_src_$i.ncu-rep" --page details --print-summary none >> "$OUT/ncu_split.txt" 2>&1
    ncu -i "$OUT/ncu_src_$i.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu_src_$i.csv" 2>&1
    echo "=== $op $variant $shape $pick: instructions with the most stall samples" >> "$OUT/ncu_top.txt"
    python3 tools/ncu_source_summary.py "$OUT/ncu_src_$i.csv" >> "$OUT/ncu_top.txt" 2>&1
  fi
done
grep -E "$keep" "$OUT/ncu_split.txt"
[ -f "$OUT/ncu_top.txt" ] && cat "$OUT/ncu_top.txt"
