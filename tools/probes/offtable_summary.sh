# Sourced by the off-table probes after their tools/tune.py runs ($OUT/offtable-*.log, $OUT/tuned.csv): the production
# lookup against the best per shape (tools/tune_vs_table.py --gain 1.025, winners into $OUT/winners.csv), the shapes
# >= 2.5% off the best (of $OT_TOTAL), and the logs archived into $OUT/offtable-logs.tgz.
python3 tools/tune_vs_table.py --gain 1.025 "$OUT"/offtable-*.log --tuned "$OUT/tuned.csv" --out "$OUT/winners.csv" \
  > "$OUT/vs-table.txt" 2>&1
echo "vs table rc $? at $((SECONDS - start)) s: $(grep -c MERGE "$OUT/vs-table.txt") of $OT_TOTAL shapes >= 2.5% off the best"
grep -E "MERGE" "$OUT/vs-table.txt" | sed 's/gemm_splitk_decode\.//g; s/fp8_e4m3fn\.bf16\.//g; s/bf16\.bf16\.//g; s/fp4_e2m1_x2\.bf16\.//g' \
  | cut -c1-190 | head -60
tar czf "$OUT/offtable-logs.tgz" -C "$OUT" $(cd "$OUT" && ls offtable-*.log) && rm -f "$OUT"/offtable-*.log
