#!/usr/bin/env bash
# Fifty-third session's final device call: tools/probes/final-or-tests-52.sh (on an H200 the full final, elsewhere
# the GPU tests, fuzz, memcheck and the issue-5 decode table), then, while FLYGEMM_DEADLINE (default 560) seconds
# allow, the MX ops at M = 128 / 256 on their default rows (the regrouping) and with the exact bf16 path forced,
# same process per run, for the M = 65..128 bucket. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
bash tools/probes/final-or-tests-52.sh
source tools/device_env.sh
shapes=128x8192x8192,256x8192x8192,128x7168x16384
run_mx() {  # log, then the bench arguments; stops at the deadline
  local log=$1; shift
  local left=$(( ${FLYGEMM_DEADLINE:-560} - (SECONDS - start) ))
  [ "$left" -gt 40 ] || { echo "no time left for $log"; return; }
  timeout $(( left < 70 ? left - 10 : 60 )) python3 -m flygemm bench --no-check --shapes "$shapes" "$@" > "/tmp/$log" 2>&1
  grep -E "^gemm_" "/tmp/$log"; cp "/tmp/$log" "$OUT/"
}
echo "== MX default rows (regroup)"
run_mx mx-default.log --ops gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4
for f in mxfp8.fp8_e4m3fn mxfp4.fp4_e2m1_x2; do
  echo "== ${f%%.*} forced to the bf16 path"
  FLYGEMM_FORCE_KERNEL=gemm_mxfp.$f.bf16.dequant.sm90a run_mx "mx-dequant-${f%%.*}.log" --ops "gemm_${f%%.*}"
done
