#!/usr/bin/env bash
# One device call for a new kernel against the dispatch table: build the extension, run GPU tests,
# one main bench, then for each forced kernel the same shapes twice in alternation - through the
# table and with FLYGEMM_FORCE_KERNEL - compared by tools/compare_bench.py (ratios to torch of the
# same process). Every step is time-limited and writes its log into $OUT as it goes.
#   FLYGEMM_FB_TESTS   pytest arguments (default: the decode and dispatch GPU tests)
#   FLYGEMM_FB_BENCH   arguments of the main `flygemm bench` (default: the issue-5 decode shapes,
#                      every op, kernel time)
#   FLYGEMM_FB_FORCED  "label|op|kernel:split|MxNxK,...;..." (split may be "auto": the table's rule
#                      for split_k 0 rows)
#   FLYGEMM_FB_LIMITS  seconds for "tests bench forced" (default: 200 120 200)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_forced_bench}
mkdir -p "$OUT"
source tools/device_env.sh
PY=${PYTHON:-python3}
read -r LIM_TESTS LIM_BENCH LIM_FORCED <<< "${FLYGEMM_FB_LIMITS:-200 120 200}"
note() { echo "$*" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
if ! $PY setup.py build_ext --inplace > "$OUT/build.log" 2>&1; then
  tail -n 40 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
fi
timeout "$LIM_TESTS" $PY -m pytest -q -rs -p no:cacheprovider \
  ${FLYGEMM_FB_TESTS:-tests/test_gpu_cuda_decode.py tests/test_dispatch.py} > "$OUT/tests.log" 2>&1
note "tests rc $? $(tail -n 1 "$OUT/tests.log")"
DECODE=1x16384x7168,16x16384x7168,1x2048x7168,16x2048x7168
timeout "$LIM_BENCH" $PY -m flygemm bench ${FLYGEMM_FB_BENCH:---kernel-time --no-check --shapes $DECODE} \
  --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
note "bench rc $?"
end=$(( $(date +%s) + LIM_FORCED ))
IFS=';' read -ra FORCED <<< "${FLYGEMM_FB_FORCED:-}"
for entry in "${FORCED[@]}"; do
  IFS='|' read -r label op kernel shapes <<< "$entry"
  [ -n "$label" ] || continue
  for round in 1 2; do
    left=$(( end - $(date +%s) )); [ "$left" -gt 5 ] || { note "forced: out of time at $label"; break 2; }
    timeout "$left" $PY -m flygemm bench --no-check --ops "$op" --shapes "$shapes" \
      --json "$OUT/fb-$label-table-$round.json" >> "$OUT/forced.log" 2>&1
    left=$(( end - $(date +%s) )); [ "$left" -gt 5 ] || { note "forced: out of time at $label"; break 2; }
    FLYGEMM_FORCE_KERNEL=$kernel timeout "$left" $PY -m flygemm bench --no-check --ops "$op" --shapes "$shapes" \
      --json "$OUT/fb-$label-forced-$round.json" >> "$OUT/forced.log" 2>&1
  done
  $PY tools/compare_bench.py table="$OUT/fb-$label-table-*.json" forced="$OUT/fb-$label-forced-*.json" \
    > "$OUT/compare-$label.txt" 2>&1
done
# the device returns only a few files: keep the summaries, pack the rest
tar -czf "$OUT/forced.tgz" -C "$OUT" $(cd "$OUT" && ls fb-*.json forced.log tests.log build.log gpu.txt 2>/dev/null) \
  && rm -f "$OUT"/fb-*.json "$OUT/forced.log" "$OUT/build.log"
echo "=== tests"; grep -E "passed|failed|FAILED|ERROR" "$OUT/tests.log" | tail -n 8
echo "=== bench"; sed -n '/^op /,$p' "$OUT/bench.log" | tail -n 30
for f in "$OUT"/compare-*.txt; do [ -f "$f" ] && { echo "=== $(basename "$f")"; tail -n 50 "$f"; }; done
cat "$OUT/summary.txt"
