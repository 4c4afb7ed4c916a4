#!/usr/bin/env bash
# Sixty-fifth session, either card: the next default lists after M = 9..16 (bf16 / fp8 / blockscale, done): do the
# bulk-ring kernels at split 1 beat the M <= 8 default lists (M = 1 and 8) and the MXFP8 / MXFP4 M = 9..16 lists on
# layers with no exact row? Per group, the list's kernels and the ring kernels at the automatic split and 1
# (tools/tune.py --kernel-time, 2 passes) over the ten layers of tools/probes/m16-offtable-64.sh, then
# tools/tune_vs_table.py (the production lookup against the best). Feeds tools/default_order.py. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
layers=1536x4096,1024x8192,2048x5120,4096x2560,1280x5120,2048x3072,3072x1024,1536x1536,4096x3072,1536x7168
while read -r op variant m match; do
  shapes=$(echo "$layers" | tr ',' '\n' | sed "s/^/${m}x/" | paste -sd,)
  timeout ${OT_T:-60} python3 tools/tune.py --op $op --variant $variant --kernel-time --passes 2 --shapes $shapes \
    --match "$match" --split-k 0,1 --csv "$OUT/tuned.csv" --append > "$OUT/offtable-$op-m$m.log" 2>&1
  echo "$op M = $m rc $? at $((SECONDS - start)) s"
done <<'GROUPS'
gemm_a16w16 - 1 m8n32.w4.bk2,m8n16.w7k256.bk2,m8n16.sm90a,m8n32.sm90a,t128x32x64.sk8.sw
gemm_a16w16 - 8 m8n32.w4.bk2,m8n16.w7k256.bk2,m8n16.sm90a,m8n32.sm90a,t128x32x64.sk8.sw
gemm_a8w8 per_tensor 1 m8n16.w6.bk1,m8n64.wg,t128x32x128.sk8.sw,m8n64.w1.b4.wg,m8n16.w7.bk4,m8n32.w4.bk2.np
gemm_a8w8 per_tensor 8 m8n16.w6.bk1,m8n64.wg,t128x32x128.sk8.sw,m8n64.w1.b4.wg,m8n16.w7.bk4,m8n32.w4.bk2.np
gemm_a8w8_blockscale - 1 m8n32.w4.bk2,m8n64.wg,m8n64.w1.b4.wg,m8n16.w7.bk4
gemm_a8w8_blockscale - 8 m8n32.w4.bk2,m8n64.wg,m8n64.w1.b4.wg,m8n16.w7.bk4
gemm_mxfp8 - 16 m16n64.wg,m16n64k128.w1.b4.wg,m16n32.sm90a,m16n16.w7.bk3
gemm_mxfp4 - 16 m16n64.s3.p2.e4.img,m16n64.sm90a,m8n16.w7.bk4
GROUPS
OT_TOTAL=80 source tools/probes/offtable_summary.sh
