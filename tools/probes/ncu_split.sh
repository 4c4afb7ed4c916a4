#!/usr/bin/env bash
# Nsight Compute on the GEMM pass of pinned split-K calls (thirty-fourth session): does the pass itself shrink with
# the split when nothing else runs beside it (ncu serializes kernels, so the PDL-launched reduce cannot sit on the
# SMs during the pass)? Lines of "op variant MxNxK kernel:split" on stdin; output under $OUT/ncu_split.txt.
#   printf 'gemm_a8w8 per_tensor 128x4096x8192 gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.sk8.sm90a:4\n' | bash tools/probes/ncu_split.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
M="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active"
M="$M,smsp__inst_executed.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"
while read -r op variant shape pick; do
  [ -z "$op" ] && continue
  echo "=== $op $variant $shape $pick" >> "$OUT/ncu_split.txt"
  timeout 120 ncu --clock-control none -k "regex:kernel_cutlass_kernel_flygemm" --launch-skip 3 --launch-count 1 \
    --metrics "$M" python3 - "$op" "$variant" "$shape" "$pick" >> "$OUT/ncu_split.txt" 2>&1 <<'PY' || echo "ncu failed" >> "$OUT/ncu_split.txt"
import os, sys
sys.path.insert(0, "python"); sys.path.insert(0, "tools")
import torch, flygemm
from flygemm import bench
op, variant, shape, pick = sys.argv[1:5]
M, N, K = (int(x) for x in shape.split("x"))
problem, _, _ = bench.make_problem(op, variant, M, N, K, torch.device("cuda"), torch.Generator(device="cuda").manual_seed(0))
from ab import pinned
fn = pinned(getattr(flygemm, op), problem, pick)
for _ in range(6):
    fn()
torch.cuda.synchronize()
PY
done
grep -E "^===|gpu__time_duration|dram__throughput|lts__throughput|sm__throughput|grid_size|warps_active|inst_executed|_st.sum" "$OUT/ncu_split.txt"
