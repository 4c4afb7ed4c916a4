#!/usr/bin/env bash
# Forty-fourth session, last device call: the tree after the default-row changes (blockscale M > 1024 -> t192x128.serial,
# bf16 / fp8 M > 4096 -> the ping-pong tile). Builds the extension, runs tests/test_dispatch.py on the H200, then
# tools/bench.py (python -m flygemm bench) on the issue-4 large shapes, the off-table shapes the new default rows answer,
# and the LLM set. Logs in $OUT; the tables last.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp}
source tools/device_env.sh
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
python3 -m pytest -q tests/test_dispatch.py > "$OUT/dispatch.log" 2>&1
ops=gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale
timeout 90 python3 -m flygemm bench --no-check --ops "$ops" --shapes 8192x8192x8192,54560x8192x8192 > "$OUT/large.log" 2>&1
timeout 90 python3 -m flygemm bench --no-check --ops "$ops" \
  --shapes 600x5120x5120,1500x2048x8192,3000x5120x13824,6000x12288x4096,12000x3072x4096,20000x5120x5120 \
  --json "$OUT/offtable.json" > "$OUT/offtable.log" 2>&1
timeout 140 python3 -m flygemm bench --no-check --ops "$ops" --shapes llm --json "$OUT/llm.json" > "$OUT/llm.log" 2>&1
tail -1 "$OUT/dispatch.log"
for f in large offtable llm; do grep -E "^gemm|geometric" "$OUT/$f.log" | grep -v "^gemm.*llm" | tail -n 30 | cut -c1-150; done
