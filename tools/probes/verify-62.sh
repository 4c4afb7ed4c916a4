#!/usr/bin/env bash
# Sixty-second session: the dispatch rows moved to the packed-row (.np) decode kernels and m8n16.w7.bk4 / m16n16.w8.bk3.
# Builds the extension, runs every decode GPU test, memcheck / racecheck over the .np kernels (pinned at split_k 1 and
# 3, ragged N, K = 7168 and a K that refills the ring), tools/ab.py old pick against the new table on every changed row
# (tools/probes/verify-62.pairs, 5 rounds), kernel time at the 2112 rows, then on an H200 the issue-5 decode table.
# Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_decode.py > "$OUT/decode-tests.log" 2>&1
echo "decode tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/decode-tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/decode-tests.log" | head -12
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck; do
  timeout 100 "$SAN" --tool $tool python3 tools/sanitize_sweep.py --each-kernel --match .np. \
    --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale --split-k 1,3 --shapes 16x2056x7168,9x520x12288,13x200x4096 \
    > "$OUT/$tool-np.log" 2>&1
  echo "$tool rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/$tool-np.log") pinned calls, largest rel err $(grep -o 'rel err [0-9.e+-]*' "$OUT/$tool-np.log" | awk '{print $3}' | sort -g | tail -n 1)"
  grep -E "ERROR SUMMARY|sanitize sweep|Error|Traceback" "$OUT/$tool-np.log" | sort | uniq -c | head -6
done
timeout 150 python3 tools/ab.py --pairs tools/probes/verify-62.pairs --rounds 5 > "$OUT/verify-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
source tools/probes/kernel_time.sh
kt gemm_a16w16 - 16x2112x7168 m16n16.w8.bk3 kt-gemm_a16w16
kt gemm_a8w8 per_tensor 8x2112x7168 m8n16.w7.bk4 kt-gemm_a8w8
kt gemm_a8w8_blockscale - 16x2112x7168 m16n16.w7.bk3 kt-gemm_a8w8_blockscale
cut -c1-150 "$OUT/verify-ab.txt"
for f in kt-gemm_a16w16 kt-gemm_a8w8 kt-gemm_a8w8_blockscale; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "verify took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
