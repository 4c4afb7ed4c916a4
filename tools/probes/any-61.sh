#!/usr/bin/env bash
# Sixty-first session's final device call: tools/probes/final-58.sh on whatever GPU comes, with the sixtieth session's
# settings. On an H200 that is the full final (every GPU test, fuzz, memcheck, the issue-4 / 5 benches); elsewhere the
# tree's GPU tests, fuzz, memcheck and the issue-5 decode table (tools/probes/final-or-tests-52.sh). Redirect stdout
# outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export FLYGEMM_I4_T=150 FLYGEMM_FUZZ_SEEDS=161 FLYGEMM_FUZZ_MANY=40 FLYGEMM_I4_EXTRA="" FLYGEMM_DEADLINE=560 \
  FLYGEMM_AB_PAIRS=""
bash tools/probes/final-58.sh > "$OUT/final.txt" 2>&1
tail -n 60 "$OUT/final.txt"
