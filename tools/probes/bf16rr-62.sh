#!/usr/bin/env bash
# Sixty-second session (scratch branch exp/bf16rr-62, whose kernel list has the candidates): bf16 M = 16 decode kernels
# with the fp8 step of the sixty-first session (red_ring: the reduction buffer in the bulk slots; .np: packed rows), so
# that 16 weight + 16 activation rows of 1792 (2 slots) or 896 columns (4 slots) fit. bf16 decode GPU tests over every
# decode kernel (small shape, ring reuse, oracle), tools/tune.py --kernel-time (3 passes) over the m16n16 / m8n16 bulk
# kernels, tools/ab.py (event time) table vs candidates (tools/probes/bf16rr-62.pairs), the sixty-first session's fp8
# M <= 12 pairs (rr-more2-61), and on an H200 the issue-5 decode table. Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="gemm_a16w16 and (every_decode_kernel_small_shape or bulk_kernels_reuse or matches_oracle)" \
  DT_LOG=bf16rr-tests.log source tools/probes/decode_tests.sh
timeout 150 python3 tools/tune.py --op gemm_a16w16 --kernel-time --passes 3 \
  --shapes 16x2048x7168,12x2048x7168,16x2112x7168,16x2048x8192,8x2048x7168 \
  --match "m16n16.w8.bk3,.rr.np,m8n16.w7k256.bk2" > "$OUT/bf16rr-tune.txt" 2>&1
echo "tune rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/ab.py --pairs tools/probes/bf16rr-62.pairs --rounds 5 > "$OUT/bf16rr-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 80 python3 tools/ab.py --pairs tools/probes/rr-more2-61.pairs --rounds 3 > "$OUT/rr-more2-ab.txt" 2>&1
echo "ab2 rc $? at $((SECONDS - start)) s"
grep -E "^\s+[0-9]+ " "$OUT/bf16rr-tune.txt" | cut -c1-150
cut -c1-150 "$OUT/bf16rr-ab.txt"
cut -c1-150 "$OUT/rr-more2-ab.txt"
echo "probe took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
