#!/usr/bin/env bash
# Sixtieth session (branch exp/w3-60: e4 kernels with 3 / 4 warpgroups along K in the kernel list; 80 / 64 registers,
# so two CTAs per SM give 24 / 32 warps against the table kernel's 16): each candidate checked against the CPU oracle at
# split 1 / 2 (tools/sanitize_sweep.py without a sanitizer), then tools/ab.py cold at K = 7168 and with --warm-l2 at
# K = 3584 (table pick A against candidate B). Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
export PYTHONPATH=$PWD/python
timeout 120 python3 tools/sanitize_sweep.py --each-kernel --match .w3.s,.w4.s --ops gemm_mxfp4 --split-k 1,2 \
  --shapes 16x16384x3584,17x520x12288 > "$OUT/e4-w3-check.log" 2>&1
echo "oracle check rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/e4-w3-check.log") pinned calls, $(tail -n 1 "$OUT/e4-w3-check.log")"
timeout 200 python3 tools/ab.py --pairs tools/probes/e4-w3-60.pairs --rounds 3 > "$OUT/e4-w3-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/ab.py --pairs tools/probes/e4-w3-60-warm.pairs --rounds 3 --warm-l2 > "$OUT/e4-w3-warm.txt" 2>&1
echo "warm rc $? at $((SECONDS - start)) s"
cut -c1-100 "$OUT/e4-w3-ab.txt"; cut -c1-100 "$OUT/e4-w3-warm.txt"
grep -v "rel err 0.00e+00" "$OUT/e4-w3-check.log" | head -5
echo "probe took $((SECONDS - start)) s"
