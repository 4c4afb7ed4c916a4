#!/usr/bin/env bash
# Seventy-second session's last call: on an H200 the issue-4 / 5 bar benches (tools/probes/bars-70.sh, the tree's fp32
# change touches no bf16 / fp8 / MX row), then on any card the fp32-output tests through the table under
# compute-sanitizer memcheck (decode kernels, swapped / split-K tiles, M up to 128). Logs into $OUT; short tables last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
BARS_LLM_T=${BARS_LLM_T:-100} bash tools/probes/bars-70.sh > "$OUT/bars.txt" 2>&1
source tools/probes/build_ext.sh
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
timeout ${MC_T:-200} "$SAN" --tool memcheck --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
  tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py -k "fp32_output_through_the_table and not 4097 and not 1000" \
  > "$OUT/memcheck-fp32.txt" 2>&1
echo "memcheck rc $? at $((SECONDS - start)) s: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck-fp32.txt" | tail -n 1) / $(tail -n 1 "$OUT/memcheck-fp32.txt")"
tail -n 45 "$OUT/bars.txt"
