#!/usr/bin/env bash
# Sixty-first session: the fp8 M = 16 decode rows on m16n16.w7.bk4.rr.np (a whole K slice in the ring, the reduction
# buffer in its slots). Builds the extension, runs every decode GPU test, memcheck / racecheck over the new kernel
# (pinned at split_k 1 and 3, ragged N, K = 7168 and a K that refills the ring), the issue-5 fp8 decode bench (kernel
# time), then on an H200 only the sixtieth session's e4 A/B (tools/probes/e4-h200-60.sh). Logs into $OUT; stdout
# outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${FLYGEMM_V_TEST_T:-240} python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_decode.py > "$OUT/decode-tests.log" 2>&1
echo "decode tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/decode-tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/decode-tests.log" | head -12
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for tool in memcheck racecheck; do
  timeout 90 "$SAN" --tool $tool python3 tools/sanitize_sweep.py --each-kernel --match .rr.np \
    --ops gemm_a8w8 --split-k 1,3 --shapes 16x2056x7168,9x520x12288,13x200x4096 > "$OUT/$tool-rr.log" 2>&1
  echo "$tool rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/$tool-rr.log") pinned calls, largest rel err $(grep -o 'rel err [0-9.e+-]*' "$OUT/$tool-rr.log" | awk '{print $3}' | sort -g | tail -n 1)"
  grep -E "ERROR SUMMARY|sanitize sweep|Error|Traceback" "$OUT/$tool-rr.log" | sort | uniq -c | head -6
done
timeout 90 python3 -m flygemm bench --no-check --kernel-time --ops gemm_a8w8 \
  --shapes 1x2048x7168,16x2048x7168,12x2048x7168,16x2112x7168,1x16384x7168,16x16384x7168 > "$OUT/bench-fp8.log" 2>&1
echo "bench rc $? at $((SECONDS - start)) s"
sed -n '/^kernel time/,/^$/p' "$OUT/bench-fp8.log" | cut -c1-150 | head -24
echo "verify took $((SECONDS - start)) s"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) bash tools/probes/e4-h200-60.sh ;; esac
