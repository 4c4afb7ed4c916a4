#!/usr/bin/env bash
# Sixtieth session: which SM pipes the MXFP4 decode kernels keep busy (Nsight Compute raw metrics, one profiled call
# each, cold L2): the M = 16 e4 kernel against the M = 16 bf16-decode .img kernel and the M = 1 .wgn kernel, then the
# e4 kernel's executed instructions per SASS opcode. Is the integer ALU pipe (64 lanes / clock / SM on sm_90, half the
# FP32 rate; the e2m1 decode is LOP3 / PRMT / SHF) what limits the M = 16 kernel? Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
export PYTHONPATH=$PWD/python
K=gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16
METRICS="regex:^sm__inst_executed_pipe_[a-z0-9_]+\.avg\.pct_of_peak_sustained_active$,regex:^sm__pipe_[a-z0-9_]+_cycles_active\.avg\.pct_of_peak_sustained_active$,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum"
for spec in 16x16384x7168:$K.m16n64.s3.p2.e4.img.sm90a 16x16384x7168:$K.m16n64k128.s4.p4.img.sm90a \
            1x16384x7168:$K.m2n64.s2.p14.wgn.sm90a; do
  shape=${spec%%:*}; kern=${spec#*:}
  echo "=== $shape $kern" >> "$OUT/pipes.txt"
  timeout 150 ncu --clock-control none -k regex:main_kernel --launch-skip 3 --launch-count 1 --metrics "$METRICS" \
    python3 tools/profile_one.py --op gemm_mxfp4 --shape "$shape" --kernel "$kern:1" >> "$OUT/pipes.txt" 2>&1
  echo "ncu rc $? at $((SECONDS - start)) s ($kern)"
done
timeout 150 ncu --clock-control none -k regex:main_kernel --launch-skip 3 --launch-count 1 \
  --metrics sass__inst_executed_per_opcode --print-metric-instances values \
  python3 tools/profile_one.py --op gemm_mxfp4 --shape 16x16384x7168 --kernel "$K.m16n64.s3.p2.e4.img.sm90a:1" \
  > "$OUT/opcodes.txt" 2>&1
echo "opcodes rc $? at $((SECONDS - start)) s"
grep -E "^===|pct_of_peak|inst_executed.sum|duration" "$OUT/pipes.txt" | grep -vE " 0(\.00)?$| n/a" | sed 's/  */ /g' | head -90
grep -E "sass__inst_executed_per_opcode" -A3 "$OUT/opcodes.txt" | head -12 | cut -c1-1500
echo "probe took $((SECONDS - start)) s"
