#!/usr/bin/env bash
# Seventy-ninth session, second call (carry ["build/kslim"] rebuilt with the swapped tiles' ragged-M shift; redirect
# stdout outside $OUT): the .sw kernels against the oracle on the GPU (every core-kernel test, ragged bitwise and
# split-K ones included), the ragged-M timings (tools/probes/ragged-sw-79.pairs: before the shift an H100 ran bf16
# t128x64.sw unsplit at 4096 x 14336 in 81.5 us at M = 129, 77.3 at 200, 52.5 at 256), the mid-M long-K layers again
# (tools/probes/mid-m-long-k-76.pairs: wide unswapped tiles against the table's .sw picks) and the split cap's
# out-of-sample A/B (tools/probes/partial-cap-79.pairs).
# The shift lives in tools/probes/ragged-sw-79.patch until this call has passed (no device took it in the seventy-ninth
# session). Before the call: `git apply tools/probes/ragged-sw-79.patch`, then build the kernels and
# `bash tools/slim_kernels.sh`, so that the carried build/kslim holds the shifted kernels; this script applies the patch
# to the device's copy too if the tree does not have it (the kernels' sources then match the carried binaries).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
if ! grep -q "_token_shift" kernels/cuda/_hopper_gemm.py; then
  git apply tools/probes/ragged-sw-79.patch && echo "applied ragged-sw-79.patch (build/kslim must have been built with it)"
fi
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
timeout "${KT_T:-170}" python3 -m pytest -q -p no:cacheprovider -x tests/test_gpu_cuda_kernels.py -k "sw" > "$OUT/test-sw.log" 2>&1
echo "test_gpu_cuda_kernels -k sw rc $?: $(tail -n 1 "$OUT/test-sw.log") at $((SECONDS - start)) s"
for p in ${PAIRS:-ragged-sw-79 partial-cap-79 mid-m-long-k-76}; do
  timeout "${AB_T:-110}" python3 tools/ab.py --pairs tools/probes/$p.pairs --rounds 2 > "$OUT/$p.txt" 2>&1
  echo "$p rc $? at $((SECONDS - start)) s ($(grep -c median "$OUT/$p.txt") pairs)"
done
grep -E "FAILED|Error" "$OUT/test-sw.log" | head -n 10
for p in ${PAIRS:-ragged-sw-79 partial-cap-79 mid-m-long-k-76}; do
  grep median "$OUT/$p.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, $5, $6, m}'
done
