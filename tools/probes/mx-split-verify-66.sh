#!/usr/bin/env bash
# Sixty-sixth session, either card: the MXFP4 one-wave split (csrc/dispatch.cpp splits_within_one_wave) by event time
# on layers outside the sweep that chose it (tools/probes/mx-split-66.pairs: the old 192-CTA split pinned against the
# table, 2 rounds), then every decode GPU test (the new splits and the rows the sixty-sixth session reverted). Logs
# into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${MV_AB_T:-120} python3 tools/ab.py --pairs tools/probes/mx-split-66.pairs --rounds 2 > "$OUT/mx-split-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/mx-split-ab.txt" | sed 's/gemm_splitk_decode\.mxfp4\.fp4_e2m1_x2\.bf16\.//g' | cut -c1-130
DT_K="" DT_LOG=mx-split-tests.log DT_T=${MV_TEST_T:-60} source tools/probes/decode_tests.sh
