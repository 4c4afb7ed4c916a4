#!/usr/bin/env bash
# Sixty-second session, second call (scratch branch exp/bf16rr-62): the first call's kernel-time winner for bf16 M = 16
# (m16n16.w8.bk3.rr.np: the table kernel's geometry with packed rows and the reduction buffer in the slots) by event
# time (tools/probes/bf16rr2-62.pairs, 7 rounds), and kernel time at the rows the .sw tile holds (split 8 included).
# Then on an H200 the issue-5 decode table. Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout 200 python3 tools/ab.py --pairs tools/probes/bf16rr2-62.pairs --rounds 7 > "$OUT/bf16rr2-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/tune.py --op gemm_a16w16 --kernel-time --passes 3 --split-k 1,8 \
  --shapes 16x2048x8192,16x1536x8960,16x1024x4096 \
  --match ".rr.np,m16n16.w8.bk3,t128x32x64.sk8.sw" > "$OUT/bf16rr2-tune.txt" 2>&1
echo "tune rc $? at $((SECONDS - start)) s"
# packed rows (.np) alone on the M = 1 / 8 / 16 picks at 2048 x 7168: do 128-byte-aligned slot rows speed up the copies?
tune_np() {  # op, variant, match
  timeout 100 python3 tools/tune.py --op $1 --variant $2 --kernel-time --passes 3 \
    --shapes 1x2048x7168,8x2048x7168,16x2048x7168 --match "$3" > "$OUT/np-tune-$1.txt" 2>&1
  echo "tune $1 rc $? at $((SECONDS - start)) s"
}
tune_np gemm_a16w16 - "m8n16.w7k256.bk2,m16n16.w8.bk3"
tune_np gemm_a8w8 per_tensor "m8n16.w7.bk4,m16n16.w7.bk4.rr.np"
tune_np gemm_a8w8_blockscale - "m8n16.w7.bk4,m16n16.w7.bk3"
cut -c1-150 "$OUT/bf16rr2-ab.txt"
for f in bf16rr2-tune np-tune-gemm_a16w16 np-tune-gemm_a8w8 np-tune-gemm_a8w8_blockscale; do
  grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
