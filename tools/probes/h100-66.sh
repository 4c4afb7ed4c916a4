#!/usr/bin/env bash
# Sixty-sixth session, the work for a card that is not an H200: (1) bf16 / blockscale M <= 8 at short K, where the
# sixty-fifth session's ring rows lost 8-12% by event time: the old kernel at split 1 against the ring row
# (tools/probes/m8-shortk-66.pairs, tools/ab.py, 4 rounds); (2) the MXFP4 decode lists' automatic split
# (tools/probes/mx-split-66.sh). Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${SK_AB_T:-150} python3 tools/ab.py --pairs tools/probes/m8-shortk-66.pairs --rounds 4 > "$OUT/m8-shortk-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/m8-shortk-ab.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g' | cut -c1-160
source tools/probes/mx-split-66.sh
