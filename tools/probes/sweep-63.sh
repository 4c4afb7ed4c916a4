#!/usr/bin/env bash
# Sixty-third session, last call: the issue-5 decode sweep (M = 1..64 over the DeepSeek-V3 and Llama-3-70B
# projections, kernel time, torch in the same run, copy bandwidth measured in the run) for the three ops whose rows the
# ring sweep moved, one JSON per op so that a call cut short keeps what finished; then the issue-5 decode table
# (N = 2048 / 16384) for those ops. For tools/plot_sweep.py. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
for op in gemm_a8w8 gemm_a16w16 gemm_a8w8_blockscale; do
  timeout ${SW_T:-85} python3 -m flygemm bench --no-check --kernel-time --ops $op --shapes decode-sweep \
    --json "$OUT/sweep-$op.json" > "$OUT/sweep-$op.log" 2>&1
  echo "sweep $op rc $? at $((SECONDS - start)) s"
done
timeout $((330 - SECONDS + start)) python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale --shapes 1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168 \
  > "$OUT/decode.log" 2>&1
echo "decode table rc $? at $((SECONDS - start)) s"
sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150
