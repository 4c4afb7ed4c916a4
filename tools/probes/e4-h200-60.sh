#!/usr/bin/env bash
# Sixtieth session, on an H200 only (elsewhere a quick exit): the MXFP4 rows moved to the e4 kernels on the H100
# (fifty-ninth session) A/B'd on the H200, old pick (A) against the table's (B): tools/probes/e4-h200-60.pairs, written
# offline by `tools/ab_pairs.py --rev de89b7b --op gemm_mxfp4 --changed-rows`; then the e4 M = 16 kernel's executed
# instructions per SASS opcode (Nsight Compute). Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/h200_only.sh
source tools/probes/build_ext.sh
timeout ${FLYGEMM_AB_T:-300} python3 tools/ab.py --pairs tools/probes/e4-h200-60.pairs --rounds 3 > "$OUT/e4-h200-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
K=gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16
timeout 60 ncu --clock-control none -k regex:main_kernel --launch-skip 3 --launch-count 1 \
  --metrics sass__inst_executed_per_opcode --print-metric-instances details \
  python3 tools/profile_one.py --op gemm_mxfp4 --shape 16x16384x7168 --kernel "$K.m16n64.s3.p2.e4.img.sm90a:1" \
  > "$OUT/opcodes.txt" 2>&1
echo "opcodes rc $? at $((SECONDS - start)) s"
cut -c1-120 "$OUT/e4-h200-ab.txt"
grep -A12 "sass__inst_executed_per_opcode" "$OUT/opcodes.txt" | cut -c1-400
echo "probe took $((SECONDS - start)) s"
