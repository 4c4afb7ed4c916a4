#!/usr/bin/env bash
# Sixtieth session (branch exp/more-60: the e4-more-59 candidates in the kernel list): at 16 x 16384 x 7168 the e4 kernel
# runs 256 CTAs, under two per SM, so min_blocks 3-5 could not add warps at split 1 (the H100 A/B earlier this session).
# Split-K 2 / 3 gives them the CTAs: each pinned kernel checked against the CPU oracle at split 2 / 3
# (tools/sanitize_sweep.py without a sanitizer), then tools/ab.py cold at K = 7168 and with --warm-l2 at K = 3584
# (table pick A against split-K candidates B). Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
export PYTHONPATH=$PWD/python
timeout 120 python3 tools/sanitize_sweep.py --each-kernel --match .e4. --ops gemm_mxfp4 --split-k 2,3 \
  --shapes 16x16384x3584,17x520x12288 > "$OUT/e4-split-check.log" 2>&1
echo "oracle check rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/e4-split-check.log") pinned calls, $(tail -n 1 "$OUT/e4-split-check.log")"
timeout 200 python3 tools/ab.py --pairs tools/probes/e4-split-60.pairs --rounds 3 > "$OUT/e4-split-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/ab.py --pairs tools/probes/e4-split-60-warm.pairs --rounds 3 --warm-l2 > "$OUT/e4-split-warm.txt" 2>&1
echo "warm rc $? at $((SECONDS - start)) s"
cut -c1-100 "$OUT/e4-split-ab.txt"; cut -c1-100 "$OUT/e4-split-warm.txt"
grep -v "rel err 0.00e+00" "$OUT/e4-split-check.log" | head -5
echo "probe took $((SECONDS - start)) s"
