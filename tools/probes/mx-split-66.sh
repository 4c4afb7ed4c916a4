#!/usr/bin/env bash
# Sixty-sixth session, either card: the automatic split of the MXFP4 decode default lists (kTargetCtas = 192 CTAs)
# lost 1.05-1.26x to split 1 at M = 16 on layers with >= 48 N tiles or short K (sixty-fifth session, offtable-65.sh).
# Each list's kernels at splits 1..16 (tools/tune.py --kernel-time, 2 passes) over sixteen layers with no exact row,
# M = 8 / 16 / 32, then the production lookup against the best (tools/tune_vs_table.py). Sourced by h100-66.sh after
# the build; logs into $OUT (tuned.csv, offtable-logs.tgz).
layers=1536x4096,1024x8192,2048x5120,4096x2560,1280x5120,2048x3072,3072x1024,1536x1536,4096x3072,1536x7168
layers=$layers,1024x2048,2560x2048,6144x1024,8192x2048,5120x4096,3072x4096
while read -r op m match; do
  shapes=$(echo "$layers" | tr ',' '\n' | sed "s/^/${m}x/" | paste -sd,)
  timeout ${MS_T:-70} python3 tools/tune.py --op $op --kernel-time --passes 2 --shapes $shapes \
    --match "$match" --split-k 1,2,3,4,6,8,12,16 --csv "$OUT/tuned.csv" --append > "$OUT/offtable-$op-m$m.log" 2>&1
  echo "$op M = $m rc $? at $((SECONDS - start)) s"
done <<'GROUPS'
gemm_mxfp4 16 m16n64.s3.p2.e4.img,m16n64.sm90a
gemm_mxfp4 8 m8n64.s3.p4.wgb,m8n32.sm90a
gemm_mxfp4 32 m32n64.s3.p1.ib3.e4.img,m16n64.sm90a
GROUPS
OT_TOTAL=48 source tools/probes/offtable_summary.sh
