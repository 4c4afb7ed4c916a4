#!/usr/bin/env bash
# Sixty-third session (scratch branch exp/np-all-62, whose kernel list has the aligned twins): every decode dispatch
# row (M <= 16, bf16 / fp8 per-tensor / blockscale) whose pick is not a bulk-ring kernel, timed against the bulk-ring
# kernels of its op and M (tools/probes/ring_sweep_groups.py), kernel time, 2 passes; then tools/tune_vs_table.py
# marks the rows whose best beats the table's pick by >= 2.5% (winners.csv for tools/merge_tuned.py).
# Logs into $OUT (stdout too when the caller writes it there: a call cut short returns what was done).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
python3 tools/probes/ring_sweep_groups.py ${RS_OPS:-} > "$OUT/groups.txt"  # RS_OPS: e.g. gemm_mxfp8,gemm_mxfp4
i=0
while read -r op variant shapes match splits; do
  i=$((i + 1))
  timeout ${RS_T:-100} python3 tools/tune.py --op $op --variant $variant --kernel-time --passes 2 --shapes $shapes \
    --match "$match" --split-k $splits --csv "$OUT/tuned.csv" --append > "$OUT/sweep-$i.log" 2>&1
  echo "group $i $op ${shapes%%x*} rc $? at $((SECONDS - start)) s"
done < "$OUT/groups.txt"
python3 tools/tune_vs_table.py --gain 1.025 "$OUT"/sweep-*.log --tuned "$OUT/tuned.csv" --out "$OUT/winners.csv" \
  > "$OUT/vs-table.txt" 2>&1
echo "vs table rc $? at $((SECONDS - start)) s: $(grep -c MERGE "$OUT/vs-table.txt") rows to merge"
grep MERGE "$OUT/vs-table.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g' | cut -c1-190
# the device tool returns a handful of files from $OUT: the 15 group logs travel as one archive
tar czf "$OUT/sweep-logs.tgz" -C "$OUT" $(cd "$OUT" && ls sweep-*.log) && rm -f "$OUT"/sweep-*.log
echo "sweep took $((SECONDS - start)) s"
