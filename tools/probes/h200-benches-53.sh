#!/usr/bin/env bash
# Fifty-third session, last call with little device time left: on an H200 only (the bars are the H200's; the tree's
# GPU tests passed on an H100 this session) build, then the issue-5 decode table (kernel time), the issue-4 large
# shapes (all five ops) and the LLM set (bf16, fp8, blockscale) as tools/gpu_final_and_issue4.sh runs them. Elsewhere:
# the device name only. Logs in $OUT; redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in *H200*) ;; *) exit 0 ;; esac
OUT=${OUT:-/tmp/h200_benches_53}
mkdir -p "$OUT"
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
T=${FLYGEMM_I4_T:-130}
timeout 90 python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 1x2048x7168,16x2048x7168,1x16384x7168,2x16384x7168,4x16384x7168,8x16384x7168,16x16384x7168 \
  > "$OUT/decode.log" 2>&1
timeout "$T" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 8192x8192x8192,54560x8192x8192 > "$OUT/issue4.log" 2>&1
timeout "$T" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
  --shapes llm --json "$OUT/llm.json" > "$OUT/issue4-llm.log" 2>&1
sed -n '/^kernel time/,/^$/p' "$OUT/decode.log"
grep -vE "UserWarning|_warn_once" "$OUT/issue4.log" | tail -n 25
tail -n 8 "$OUT/issue4-llm.log"
