#!/usr/bin/env bash
# Sixtieth session's device call. On an H200: the full final (tools/probes/final-58.sh: every GPU test, fuzz, the
# issue-4 / 5 benches) with the settings below, to put the e4 MXFP4 kernels on the H200. On any other GPU:
# ${FLYGEMM_ELSE:-tools/probes/memcheck-60.sh} (default: sanitizers over the e4 kernels). (The first call of the session, elsewhere, ran the
# e4-more-59 candidates through tools/probes/e4-59.sh from a scratch branch.) Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in
  *H200*) export FLYGEMM_I4_T=150 FLYGEMM_FUZZ_SEEDS=160 FLYGEMM_FUZZ_MANY=40 FLYGEMM_I4_EXTRA="" \
            FLYGEMM_DEADLINE=560 FLYGEMM_AB_PAIRS=""
          bash tools/probes/final-58.sh > "$OUT/final.txt" 2>&1; tail -n 60 "$OUT/final.txt" ;;
  *) bash ${FLYGEMM_ELSE:-tools/probes/memcheck-60.sh} ;;
esac
