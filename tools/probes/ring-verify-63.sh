#!/usr/bin/env bash
# Sixty-third session: the 90 dispatch rows the ring sweep moved (tools/probes/ring-sweep-63.sh, H100 kernel time,
# >= 2.5%). Builds the extension, runs every decode GPU test, memcheck / racecheck over the aligned-row kernels that
# rows now name for the first time (pinned at split_k 1 and 3, ragged N, a K that refills the ring), then
# tools/ab.py, old pick against the new table on every moved row (event time, 3 rounds); on an H200 then the issue-5
# decode table. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="" DT_LOG=decode-tests.log DT_T=240 source tools/probes/decode_tests.sh
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck; do
  timeout 100 "$SAN" --tool $tool python3 tools/sanitize_sweep.py --each-kernel --match w4.bk2.np,w6.bk1.np \
    --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale --split-k 1,3 --shapes 16x2056x7168,9x520x12288,13x200x4096 \
    > "$OUT/$tool.log" 2>&1
  echo "$tool rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/$tool.log") pinned calls, largest rel err $(grep -o 'rel err [0-9.e+-]*' "$OUT/$tool.log" | awk '{print $3}' | sort -g | tail -n 1)"
  grep -E "ERROR SUMMARY|sanitize sweep|Error|Traceback" "$OUT/$tool.log" | sort | uniq -c | head -6
done
timeout $((580 - SECONDS + start)) python3 tools/ab.py --pairs tools/probes/ring-verify-63.pairs --rounds 3 > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
cut -c1-160 "$OUT/ab.txt" | tail -100
source tools/probes/h200_decode_table.sh  # on an H200 only: the issue-5 decode table in the time left
