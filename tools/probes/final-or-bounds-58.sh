#!/usr/bin/env bash
# Fifty-eighth session (on a scratch branch with the bound twins built, see tools/probes/bounds-58.sh), when the GPU
# suite has already passed on the tree: first the bound A/B (tools/probes/bounds-58.sh, which builds the extension),
# then on an H200 only the bars: the issue-5 decode table (kernel time, as tools/gpu_decode_report.sh runs it) and the issue-4
# benches (large shapes, LLM set; FLYGEMM_I4_T s each, as tools/gpu_final_and_issue4.sh), their logs written straight
# into $OUT (what is there comes back even when the call runs out of time). Stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
[ -n "${FLYGEMM_S58_H200_ONLY:-}" ] && [[ $name != *H200* ]] && { echo "not an H200: nothing run"; exit 0; }
bash tools/probes/bounds-58.sh
case "$name" in
  *H200*)
    source tools/device_env.sh
    DECODE=1x2048x7168,16x2048x7168,1x16384x7168,2x16384x7168,4x16384x7168,8x16384x7168,16x16384x7168
    timeout 120 python3 -m flygemm bench --no-check --kernel-time \
      --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes $DECODE > $OUT/decode.log 2>&1
    echo "decode table rc $? at $((SECONDS - start)) s"
    timeout "${FLYGEMM_I4_T:-150}" python3 -m flygemm bench --no-check \
      --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
      --shapes 8192x8192x8192,54560x8192x8192 > $OUT/issue4.log 2>&1
    echo "issue-4 large shapes rc $? at $((SECONDS - start)) s"
    timeout "${FLYGEMM_I4_T:-150}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
      --shapes llm --json $OUT/llm.json > $OUT/issue4-llm.log 2>&1
    echo "issue-4 LLM set rc $? at $((SECONDS - start)) s"
    sed -n '/^kernel time/,/^$/p' $OUT/decode.log
    grep -vE "UserWarning|_warn_once" $OUT/issue4.log | tail -n 25
    tail -n 8 $OUT/issue4-llm.log ;;
esac
echo "probe took $((SECONDS - start)) s"
