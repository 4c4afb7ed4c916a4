#!/usr/bin/env bash
# Sixty-fourth session (prepared, not yet run): do off-table decode shapes at M = 16 want the bulk-ring kernels? The
# M = 16 default rows name the .sw tiles, but the ring sweep (sixty-third session) found the bf16 ring kernels 11-27%
# faster on the small exact layers (16 x 1024 / 2048 x 2048, 16 x 4096 x 4096) and even on the large ones. This times,
# per op, ten layers that have no exact row (N 1024..4096, K 1024..8192) at M = 16 over the default list's kernels and
# the op's M = 16 ring kernels, at the automatic split and 1 (tools/tune.py --kernel-time, 2 passes); then
# tools/tune_vs_table.py prints, per shape, the production lookup's choice (a default row) against the best. A default
# rule for the ring kernels follows only if they win across these shapes. Logs into $OUT (archived).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
shapes=16x1536x4096,16x1024x8192,16x2048x5120,16x4096x2560,16x1280x5120,16x2048x3072,16x3072x1024,16x1536x1536
shapes=$shapes,16x4096x3072,16x1536x7168
while read -r op variant match; do
  timeout ${OT_T:-150} python3 tools/tune.py --op $op --variant $variant --kernel-time --passes 2 --shapes $shapes \
    --match "$match" --split-k 0,1 --csv "$OUT/tuned.csv" --append > "$OUT/offtable-$op.log" 2>&1
  echo "$op rc $? at $((SECONDS - start)) s"
done <<'GROUPS'
gemm_a16w16 - t64x32x64.sk8.sw,t128x32x64.sk8.sw,m16n16.w8.bk3,m16n32.w4.bk2
gemm_a8w8 per_tensor t64x32x128.sk8.sw,t128x32x128.sk8.sw,m16n64.w1.b4.wg,m16n16.w7.bk4.rr.np,m8n16.w7.bk4.np
gemm_a8w8_blockscale - t64x32x128.sk8.sw,t128x32x128.sk8.sw,m16n16.w7.bk3.np,m8n16.w7.bk4.np
GROUPS
OT_TOTAL=30 source tools/probes/offtable_summary.sh
