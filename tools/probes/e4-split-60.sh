#!/usr/bin/env bash
# Sixtieth session (branch exp/more-60: the e4-more-59 candidates in the kernel list): at 16 x 16384 x 7168 the e4 kernel
# runs 256 CTAs, under two per SM, so min_blocks 3-5 could not add warps at split 1 (the H100 A/B earlier this session).
# Split-K 2 / 3 gives them the CTAs: each pinned kernel checked against the CPU oracle at split 2 / 3
# (tools/sanitize_sweep.py without a sanitizer), then tools/ab.py cold at K = 7168 and with --warm-l2 at K = 3584
# (table pick A against split-K candidates B). Logs into $OUT; stdout outside $OUT. tools/probes/e4-w3-60.sh runs the
# same steps for other candidates: FLYGEMM_CAND (pairs and log name), FLYGEMM_CAND_MATCH, FLYGEMM_CAND_SPLITS.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
export PYTHONPATH=$PWD/python
c=${FLYGEMM_CAND:-e4-split-60}; log=$OUT/${c%-60}
timeout 120 python3 tools/sanitize_sweep.py --each-kernel --match "${FLYGEMM_CAND_MATCH:-.e4.}" --ops gemm_mxfp4 --split-k "${FLYGEMM_CAND_SPLITS:-2,3}" \
  --shapes 16x16384x3584,17x520x12288 > "$log-check.log" 2>&1
echo "oracle check rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$log-check.log") pinned calls, $(tail -n 1 "$log-check.log")"
timeout 200 python3 tools/ab.py --pairs tools/probes/$c.pairs --rounds 3 > "$log-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/ab.py --pairs tools/probes/$c-warm.pairs --rounds 3 --warm-l2 > "$log-warm.txt" 2>&1
echo "warm rc $? at $((SECONDS - start)) s"
cut -c1-100 "$log-ab.txt"; cut -c1-100 "$log-warm.txt"
grep -v "rel err 0.00e+00" "$log-check.log" | head -5
echo "probe took $((SECONDS - start)) s"
