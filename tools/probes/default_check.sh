# Sourced by the default-list and split checks (m16-default-65.sh, m8-default-65.sh, mx-split-verify-66.sh) after
# `start=$SECONDS`: builds the extension, times the pairs file $DC_PAIRS with tools/ab.py (2 rounds, into
# $OUT/$DC_NAME-ab.txt, bounded at $DC_AB_T seconds), prints each pair's line, then runs the decode GPU tests of the -k
# selection $DC_K.
source tools/probes/build_ext.sh
timeout ${DC_AB_T:-200} python3 tools/ab.py --pairs "$DC_PAIRS" --rounds 2 > "$OUT/$DC_NAME-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/$DC_NAME-ab.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g; s/fp4_e2m1_x2\.bf16\.//g' | cut -c1-160
DT_K="$DC_K" DT_LOG=$DC_NAME-tests.log DT_T=${DC_TEST_T:-200} source tools/probes/decode_tests.sh
