#!/usr/bin/env bash
# Sixty-second session: the packed-row twins (.np) of m8n16.w7.bk4 (fp8, blockscale) against it on the other M = 2..8
# rows that name it (tools/tune.py --kernel-time, 3 passes); then on an H200 the issue-5 decode table. Logs into $OUT;
# stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
kt() {  # op, variant, shapes, match, log
  timeout 120 python3 tools/tune.py --op $1 --variant $2 --kernel-time --passes 3 --shapes $3 --match "$4" \
    > "$OUT/$5.txt" 2>&1; echo "kernel time $5 rc $? at $((SECONDS - start)) s"
}
kt gemm_a8w8 per_tensor 2x2048x7168,4x2048x7168,4x2112x7168,4x1536x8960,8x1536x8960,4x4096x14336 \
  "m8n16.w7.bk4,m16n16.w7.bk4.rr.np" np-more-fp8
kt gemm_a8w8_blockscale - 4x2048x7168,4x2048x8192,8x2048x8192,4x1536x8960,8x1536x8960 m8n16.w7.bk4 np-more-blockscale
for f in np-more-fp8 np-more-blockscale; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
case "$name" in *H200*)
  timeout $((590 - SECONDS + start)) python3 -m flygemm bench --no-check --kernel-time \
    --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
    --shapes 1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168 > "$OUT/decode.log" 2>&1
  echo "bench rc $? at $((SECONDS - start)) s"
  sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150 ;;
esac
