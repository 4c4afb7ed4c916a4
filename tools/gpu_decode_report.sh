#!/usr/bin/env bash
# One device call for a decode change: tools/gpu_fuzz.sh (build, every GPU test file, the fuzz under
# memcheck, the issue-5 decode table in kernel time), then one op's dispatch rows over more shapes with the
# oracle check (kernel time), and the same shapes with one kernel forced, to compare a default row with the
# kernel it replaced. Logs in $OUT (at most 8 files come back), a short table last.
#   FLYGEMM_DR_OP       op(s) of the extra benches, comma-separated (default gemm_mxfp4)
#   FLYGEMM_DR_SHAPES   MxNxK,... through the table, checked against the oracle (or op=MxNxK,...;op=... per op;
#                       FLYGEMM_DR_ROWS_T seconds per group, default 240)
#   FLYGEMM_DR_FORCE    kernel:split_k|auto forced over FLYGEMM_DR_FSHAPES (empty: skip)
#   FLYGEMM_DR_FSHAPES  MxNxK,... for the forced comparison (timed through the table too)
#   FLYGEMM_DR_MEMCHECK kernel-name parts (comma-separated): compute-sanitizer memcheck over those kernels of
#                       FLYGEMM_DR_OP, split_k 1 and 3 (empty: skip)
#   FLYGEMM_DR_SWEEP    ops of the decode sweep (kernel time, sweep.json for tools/plot_sweep.py; empty: skip)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_decode_report}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
DECODE=1x2048x7168,16x2048x7168,1x16384x7168,2x16384x7168,4x16384x7168,8x16384x7168,16x16384x7168
FLYGEMM_FUZZ_SEEDS=${FLYGEMM_FUZZ_SEEDS-} FLYGEMM_FUZZ_SAN_CASES=${FLYGEMM_FUZZ_SAN_CASES:-4} \
  FLYGEMM_BENCH_ARGS="--no-check --kernel-time --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes $DECODE" \
  OUT="$OUT" bash tools/gpu_fuzz.sh > "$OUT/fuzz.txt" 2>&1
fuzz_rc=$?
export PYTHONPATH=$PWD/python
op=${FLYGEMM_DR_OP:-gemm_mxfp4}
kt_table() { sed -n '/^kernel time/,/^$/p' "$1"; }
if [ -n "${FLYGEMM_DR_SHAPES:-}" ]; then
  # "MxNxK,..." for every op of FLYGEMM_DR_OP, or "op=MxNxK,...;op=..." for shapes of their own per op
  : > "$OUT/bench-rows.log"
  IFS=';' read -ra groups <<< "$FLYGEMM_DR_SHAPES"
  for g in "${groups[@]}"; do
    g_ops=$op; g_shapes=$g
    [[ $g == *=* ]] && { g_ops=${g%%=*}; g_shapes=${g#*=}; }
    timeout "${FLYGEMM_DR_ROWS_T:-240}" $PY -m flygemm bench --kernel-time --ops "$g_ops" --shapes "$g_shapes" \
      >> "$OUT/bench-rows.log" 2>&1
  done
fi
if [ -n "${FLYGEMM_DR_FORCE:-}" ]; then
  for pass in table forced; do
    force=""; [ $pass = forced ] && force=$FLYGEMM_DR_FORCE
    FLYGEMM_FORCE_KERNEL=$force timeout 120 $PY -m flygemm bench --no-check --kernel-time --ops "$op" \
      --shapes "$FLYGEMM_DR_FSHAPES" > "$OUT/bench-$pass.log" 2>&1
  done
fi
if [ -n "${FLYGEMM_DR_MEMCHECK:-}" ]; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  timeout 150 "$SAN" --tool memcheck $PY tools/sanitize_sweep.py --each-kernel --match "$FLYGEMM_DR_MEMCHECK" \
    --ops "$op" --split-k 1,3 --shapes 1x2056x7168,9x520x12288 > "$OUT/memcheck-kernels.log" 2>&1
  san_rc=$?
fi
if [ -n "${FLYGEMM_DR_SWEEP:-}" ]; then
  timeout 200 $PY -m flygemm bench --no-check --kernel-time --ops "$FLYGEMM_DR_SWEEP" --shapes decode-sweep \
    --json "$OUT/sweep.json" > "$OUT/sweep.log" 2>&1
  sweep_rc=$?
fi
rm -f "$OUT/build.log" "$OUT/fuzz-extra-seeds.log"
echo "=== gpu_fuzz.sh (rc $fuzz_rc)"; grep -E "passed|failed|ERROR SUMMARY|memcheck" "$OUT/fuzz.txt" | tail -n 6
echo "=== decode table"; kt_table "$OUT/bench.log"
if [ -f "$OUT/bench-rows.log" ]; then
  echo "=== $op rows through the table, checked"; kt_table "$OUT/bench-rows.log"
  echo "largest rel err: $(awk -v ops="$op" 'BEGIN {n = split(ops, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1}
    ($1 in want) && NF == 12 {print $(NF-1)}' "$OUT/bench-rows.log" | sort -g | tail -n 1)"
fi
if [ -f "$OUT/bench-forced.log" ]; then
  echo "=== through the table"; kt_table "$OUT/bench-table.log"
  echo "=== forced $FLYGEMM_DR_FORCE"; kt_table "$OUT/bench-forced.log"
fi
if [ -f "$OUT/memcheck-kernels.log" ]; then
  echo "=== memcheck $FLYGEMM_DR_MEMCHECK (rc $san_rc): $(grep -h 'ERROR SUMMARY' "$OUT/memcheck-kernels.log" | sort | uniq -c)"
fi
[ -f "$OUT/sweep.log" ] && echo "=== decode sweep $FLYGEMM_DR_SWEEP (rc $sweep_rc)"
exit $fuzz_rc
