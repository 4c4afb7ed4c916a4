#!/usr/bin/env bash
# Sixty-fifth session, either card: the M = 9..16 default lists that open with the bulk-ring kernels at split 1, checked
# by event time on layers outside every tuning run (tools/probes/m16-default-65.pairs: old default pinned against the
# table; at N <= 1024 against the ring kernel pinned, to place the rows' lower bound), 2 rounds; then the decode GPU
# tests of the default lists. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${MD_AB_T:-300} python3 tools/ab.py --pairs tools/probes/m16-default-65.pairs --rounds 2 > "$OUT/m16-default-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/m16-default-ab.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g' | cut -c1-170
DT_K="default or oracle" DT_LOG=m16-default-tests.log DT_T=${MD_TEST_T:-150} source tools/probes/decode_tests.sh
