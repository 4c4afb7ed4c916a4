#!/usr/bin/env bash
# Sixty-second session (scratch branch exp/np-all-62, whose kernel list has the candidates): aligned-row (.np) twins of
# the other bulk-ring picks whose padded rows sit at 64 mod 128 (MXFP8 m16n16.w7.bk3 / m8n16.w8k128.bk6, MXFP4
# m8n16.w7.bk4, fp8 / blockscale m8n32.w4.bk2, fp8 m8n16.w6.bk1 / m8n32.w6.bk1 / m8n80.w3.bk2 / m8n16.w2.bk1, bf16
# m8n32.w4.bk2 / m16n32.w4.bk2): the decode GPU tests over every decode kernel (small shape), then
# tools/tune.py --kernel-time (3 passes) at rows that name them. Logs into $OUT, stdout too (write it under $OUT: a
# call cut short still returns what was done).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="every_decode_kernel_small_shape" DT_LOG=np-all-tests.log source tools/probes/decode_tests.sh
source tools/probes/kernel_time.sh
KT_T=60 kt gemm_mxfp8 - 16x2048x7168,8x2048x7168,1x2048x7168 "m16n16.w7.bk3,m8n16.w8k128.bk6" np-all-mxfp8
KT_T=40 kt gemm_mxfp4 - 8x2048x7168,4x2048x7168 m8n16.w7.bk4 np-all-mxfp4
KT_T=60 kt gemm_a8w8 per_tensor 8x8192x8192,8x4096x4096,4x6144x4096 m8n32.w4.bk2 np-all-fp8
KT_T=40 kt gemm_a8w8_blockscale - 8x8192x8192,4x8192x8192 m8n32.w4.bk2 np-all-blockscale
KT_T=60 kt gemm_a8w8 per_tensor 1x4096x4096,4x5120x5120,1x24576x1536,8x36864x7168,1x10240x8192,1x32768x512 \
  "m8n16.w6.bk1,m8n32.w6.bk1,m8n80.w3.bk2,m8n16.w2.bk1" np-all-fp8-more
KT_T=60 kt gemm_a16w16 - 8x4096x4096,1x24576x1536,8x5120x5120,16x36864x7168 "m8n32.w4.bk2,m16n32.w4.bk2" np-all-bf16
for f in np-all-mxfp8 np-all-mxfp4 np-all-fp8 np-all-blockscale np-all-fp8-more np-all-bf16; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
