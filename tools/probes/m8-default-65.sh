#!/usr/bin/env bash
# Sixty-fifth session, either card: the M <= 8 default lists that open with bulk-ring kernels at split 1, checked by
# event time on layers outside every tuning run (tools/probes/m8-default-65.pairs: the old default pick pinned against
# the table, 2 rounds), then every decode GPU test (the default lists of both buckets included). Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${MD_AB_T:-200} python3 tools/ab.py --pairs tools/probes/m8-default-65.pairs --rounds 2 > "$OUT/m8-default-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/m8-default-ab.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g' | cut -c1-150
DT_K="" DT_LOG=decode-tests.log DT_T=${MD_TEST_T:-240} source tools/probes/decode_tests.sh
