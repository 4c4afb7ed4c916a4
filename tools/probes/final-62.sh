#!/usr/bin/env bash
# Sixty-second session, last call: the packed-row twins on the remaining rows that name their base kernels
# (tools/tune.py --kernel-time, 3 passes), then on an H200 the issue-5 decode table with this session's rows. Logs into
# $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
kt() {  # op, variant, shapes, match, log
  timeout 100 python3 tools/tune.py --op $1 --variant $2 --kernel-time --passes 3 --shapes $3 --match "$4" \
    > "$OUT/$5.txt" 2>&1; echo "kernel time $5 rc $? at $((SECONDS - start)) s"
}
kt gemm_a16w16 - 2x4096x4096,4x4096x4096,16x1024x4096 m16n16.w8.bk3 final-bf16
kt gemm_a8w8 per_tensor 1x2048x7168,1x2112x7168,1x1536x8960,2x2112x7168 m8n16.w7.bk4 final-fp8
kt gemm_a8w8_blockscale - 16x1024x4096,1x2048x7168 "m16n16.w7.bk3,m8n16.w7.bk4" final-blockscale
for f in final-bf16 final-fp8 final-blockscale; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
case "$name" in *H200*)
  timeout $((590 - SECONDS + start)) python3 -m flygemm bench --no-check --kernel-time \
    --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
    --shapes 1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168 > "$OUT/decode.log" 2>&1
  echo "bench rc $? at $((SECONDS - start)) s"
  sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150 ;;
esac
