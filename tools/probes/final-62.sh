#!/usr/bin/env bash
# Sixty-second session, last call: the packed-row twins on the remaining rows that name their base kernels
# (tools/tune.py --kernel-time, 3 passes), then on an H200 the issue-5 decode table with this session's rows. Logs into
# $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
source tools/probes/kernel_time.sh
kt gemm_a16w16 - 2x4096x4096,4x4096x4096,16x1024x4096 m16n16.w8.bk3 final-bf16
kt gemm_a8w8 per_tensor 1x2048x7168,1x2112x7168,1x1536x8960,2x2112x7168 m8n16.w7.bk4 final-fp8
kt gemm_a8w8_blockscale - 16x1024x4096,1x2048x7168 "m16n16.w7.bk3,m8n16.w7.bk4" final-blockscale
for f in final-bf16 final-fp8 final-blockscale; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
