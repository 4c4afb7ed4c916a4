#!/usr/bin/env bash
# Seventy-third session's device call (carry ["build/kslim"], made by tools/slim_kernels.sh). On an H200: the full final
# (tools/probes/any-61.sh). Elsewhere: the fp32 tile A/B past M = 4096 (tools/probes/fp32-tiles-73.pairs, 2 rounds) and,
# with the time left of DEADLINE seconds, the fuzz at two new seeds under memcheck. AB_PAIRS, TESTS, SEEDS override. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ -d build/kslim/sm_90a ]; then
  mkdir -p build/kernels && rm -rf build/kernels/sm_90a && mv build/kslim/sm_90a build/kernels/sm_90a
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "device: $name"
if echo "$name" | grep -q H200; then
  bash tools/probes/any-61.sh
  exit
fi
DEADLINE=${DEADLINE:-570}
source tools/device_env.sh
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
echo "built at ${SECONDS}s"
timeout "${AB_T:-330}" python3 tools/ab.py --pairs "${AB_PAIRS:-tools/probes/fp32-tiles-73.pairs}" --rounds 2 > "$OUT/ab.txt" 2>&1
echo "ab rc=$? at ${SECONDS}s ($(grep -c median "$OUT/ab.txt") pairs)"
left=$((DEADLINE - SECONDS))
if [ "$left" -gt 170 ]; then
  FLYGEMM_TEST_ARGS="${TESTS:-tests/test_gpu_fuzz.py}" FLYGEMM_FUZZ_SEEDS="${SEEDS:-227 229}" FLYGEMM_FUZZ_MANY=80 \
    FLYGEMM_FUZZ_SAN_CASES=4 timeout $((left - 10)) bash tools/gpu_fuzz.sh > "$OUT/fuzz.txt" 2>&1
  echo "fuzz rc=$? at ${SECONDS}s"; tail -n 8 "$OUT/fuzz.txt"
fi
grep median "$OUT/ab.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1); print $1, $2"x"$3"x"$4, m, $NF}'
