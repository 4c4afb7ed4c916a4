#!/usr/bin/env bash
# Fifty-third session's second call: on an H200 the full final (tools/probes/final-or-tests-53.sh, with the caller's
# FLYGEMM_* settings); elsewhere (the tree's tests already passed there) only build + the issue-4 MX shapes:
# blockscale, MXFP8, MXFP4 at 8192^3, 54560 x 8192 x 8192 and two LLM layers, same process. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in
  *H200*) bash tools/probes/final-or-tests-53.sh ;;
  *) source tools/device_env.sh
     python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
     timeout 240 python3 -m flygemm bench --no-check --ops gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
       --shapes 8192x8192x8192,54560x8192x8192,1024x8192x8192,4096x7168x16384 > /tmp/mx-bench.log 2>&1
     cp /tmp/mx-bench.log "$OUT/"; grep -vE "UserWarning|_warn_once" /tmp/mx-bench.log | tail -n 16 ;;
esac
