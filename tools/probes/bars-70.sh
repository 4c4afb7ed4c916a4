#!/usr/bin/env bash
# Seventieth session, when too little device time is left for the whole final: the issue-4 / 5 bar benches only, on
# an H200 (the bars' card; elsewhere it stops at once). Builds the extension, then the issue-5 decode table (kernel
# time), the issue-4 large shapes and the LLM set, each under its own limit. Logs into $OUT; short tables last.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in *H200*) ;; *) echo "not an H200: skipped"; exit 0 ;; esac
source tools/device_env.sh
start=$SECONDS
python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
echo "build $((SECONDS - start)) s"
DECODE=1x2048x7168,16x2048x7168,1x16384x7168,2x16384x7168,4x16384x7168,8x16384x7168,16x16384x7168
timeout 90 python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes $DECODE > "$OUT/issue5.log" 2>&1
echo "issue-5 decode rc $? at $((SECONDS - start)) s"
timeout 120 python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 8192x8192x8192,54560x8192x8192 > "$OUT/issue4.log" 2>&1
echo "issue-4 large rc $? at $((SECONDS - start)) s"
timeout "${BARS_LLM_T:-150}" python3 -m flygemm bench --no-check --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale \
  --shapes llm --json "$OUT/llm.json" > "$OUT/issue4-llm.log" 2>&1
echo "issue-4 LLM rc $? at $((SECONDS - start)) s"
sed -n '/^kernel time/,/^$/p' "$OUT/issue5.log"
grep -vE "UserWarning|_warn_once" "$OUT/issue4.log" | grep -E "^gemm|geometric" | cut -c1-110
grep -E "geometric" "$OUT/issue4-llm.log"
