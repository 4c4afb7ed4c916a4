#!/usr/bin/env bash
# Dispatch-row tuning on the GPU machine after tools/gpu_check.sh has built the extension there:
# every candidate (kernel, split_k) for the decode shapes of the CUDA decode goals and for the M=128
# row of the LLM shape set and the two large shapes, per op. Winning rows go to $OUT/tuned.csv, every timing to $OUT/tune.log.
# Each candidate is timed interleaved with torch and ranked by that ratio (tools/tune.py --paired, the default).
#   FLYGEMM_TUNE_OPS   "op:variant ..." (default: bf16, fp8 per-tensor, fp8 blockscale); "op:variant:MxNxK,..."
#                      tunes those shapes instead of the sets
#   FLYGEMM_TUNE_KERNEL_TIME=1 ranks by kernel time (tools/tune.py --kernel-time; the decode measure)
#   FLYGEMM_TUNE_SETS  shape sets among "decode big llm<M>" (llm<M>: the LLM shape set's (N, K) at
#                      that M, e.g. llm128 llm1024; default: decode llm128 big)
#   FLYGEMM_TUNE_SPLITS split_k candidates (default 1,2,3,4,6,8,12,16; capped per kernel)
#   FLYGEMM_TUNE_PASSES timing passes, alternately forward / reversed, averaged (default 1; 2 cancels drift)
#   FLYGEMM_TUNE_MATCH  only candidates whose kernel name contains one of these (comma-separated; default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_gpu_check}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/python
PY=${PYTHON:-python3}
BIG=8192x8192x8192,54560x8192x8192
DECODE=1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168
llm_shapes() { $PY -c "from flygemm.bench import LLM_NK; print(','.join(f'$1x{n}x{k}' for n, k in LLM_NK))"; }
for spec in ${FLYGEMM_TUNE_OPS:-gemm_a16w16:- gemm_a8w8:per_tensor gemm_a8w8_blockscale:-}; do
  IFS=: read -r op variant custom <<< "$spec"
  sets=${FLYGEMM_TUNE_SETS:-decode llm128 big}
  [ -z "$custom" ] || sets=custom
  for set in $sets; do
    case $set in custom) shapes=$custom ;; decode) shapes=$DECODE ;; llm[0-9]*) shapes=$(llm_shapes "${set#llm}") ;;
      big) shapes=$BIG ;; *) echo "unknown shape set $set" >&2; exit 2 ;; esac
    echo "=== $op $variant $shapes" >> "$OUT/tune.log"
    $PY tools/tune.py --op "$op" --variant "$variant" --shapes "$shapes" --split-k "${FLYGEMM_TUNE_SPLITS:-1,2,3,4,6,8,12,16}" --passes "${FLYGEMM_TUNE_PASSES:-1}" \
      ${FLYGEMM_TUNE_KERNEL_TIME:+--kernel-time} ${FLYGEMM_TUNE_MATCH:+--match "$FLYGEMM_TUNE_MATCH"} --csv "$OUT/tuned.csv" --append >> "$OUT/tune.log" 2>&1 || echo "tune $op failed" >> "$OUT/tune.log"
  done
done
grep -c . "$OUT/tuned.csv"
