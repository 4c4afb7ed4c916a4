#!/usr/bin/env bash
# Sixty-first session, on an H200 only (elsewhere a quick exit): the issue-5 decode shapes (kernel time, copy bandwidth
# in the same run) for every decode family, to put this session's fp8 M = 16 rows (m16n16.w7.bk4.rr.np) on the H200.
# The large-M paths (issue 4) did not change. Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/h200_only.sh
source tools/probes/build_ext.sh
timeout 200 python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 1x2048x7168,16x2048x7168,12x2048x7168,16x2112x7168,1x16384x7168,16x16384x7168 > "$OUT/decode.log" 2>&1
echo "bench rc $? at $((SECONDS - start)) s"
sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150
