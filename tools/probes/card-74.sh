#!/usr/bin/env bash
# Seventy-fourth session's device call (carry ["build/kslim"], made by tools/slim_kernels.sh): the .eo blockscale kernels
# (the next tile's first K block in flight during the epilogue). GPU tests of every serial blockscale kernel and the .eo
# twins (bitwise against the serial ones), then tools/ab.py on AB_PAIRS (default tools/probes/epi-overlap-74.pairs,
# 2 rounds). Redirect stdout outside $OUT; logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -d build/kslim/sm_90a ]; then
  mkdir -p build/kernels && rm -rf build/kernels/sm_90a && mv build/kslim/sm_90a build/kernels/sm_90a
fi
echo "device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
source tools/device_env.sh
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
echo "built at ${SECONDS}s"
timeout "${TEST_T:-200}" python3 -m pytest -q -x tests/test_gpu_cuda_kernels.py -k "${TEST_K:-epilogue_overlap or serial}" \
  > "$OUT/tests.txt" 2>&1
echo "tests rc=$? at ${SECONDS}s: $(tail -n 1 "$OUT/tests.txt")"
grep -E "^FAILED|Error" "$OUT/tests.txt" | head -n 5
timeout "${AB_T:-330}" python3 tools/ab.py --pairs "${AB_PAIRS:-tools/probes/epi-overlap-74.pairs}" --rounds "${AB_ROUNDS:-2}" \
  > "$OUT/ab.txt" 2>&1
echo "ab rc=$? at ${SECONDS}s ($(grep -c median "$OUT/ab.txt") pairs)"
grep median "$OUT/ab.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, m, $NF}'
