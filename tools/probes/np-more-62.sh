#!/usr/bin/env bash
# Sixty-second session: the packed-row twins (.np) of m8n16.w7.bk4 (fp8, blockscale) against it on the other M = 2..8
# rows that name it (tools/tune.py --kernel-time, 3 passes); then on an H200 the issue-5 decode table. Logs into $OUT;
# stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
source tools/probes/kernel_time.sh
kt gemm_a8w8 per_tensor 2x2048x7168,4x2048x7168,4x2112x7168,4x1536x8960,8x1536x8960,4x4096x14336 \
  "m8n16.w7.bk4,m16n16.w7.bk4.rr.np" np-more-fp8
kt gemm_a8w8_blockscale - 4x2048x7168,4x2048x8192,8x2048x8192,4x1536x8960,8x1536x8960 m8n16.w7.bk4 np-more-blockscale
for f in np-more-fp8 np-more-blockscale; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
