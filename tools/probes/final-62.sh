#!/usr/bin/env bash
# Sixty-second session, last call: packed-ring slots now rounded up to 128 bytes (only the blockscale m16n16.w7.bk3.np
# slot changes: 58304 -> 58368 bytes, so its odd slots' rows start on 128-byte boundaries too): the blockscale decode GPU
# tests, memcheck over that kernel, its kernel time; the packed-row twins on the remaining rows that name their base
# kernels (tools/tune.py --kernel-time, 3 passes); then on an H200 the issue-5 decode table. Logs into $OUT; stdout
# outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="gemm_a8w8_blockscale and (every_decode_kernel_small_shape or bulk_kernels_reuse or matches_oracle)" \
  DT_LOG=final-bs-tests.log source tools/probes/decode_tests.sh
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
timeout 60 "$SAN" --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match m16n16.w7.bk3.np \
  --ops gemm_a8w8_blockscale --split-k 1,3 --shapes 16x2056x7168,9x520x12288,13x200x4096 > "$OUT/final-memcheck.log" 2>&1
echo "memcheck rc $? at $((SECONDS - start)) s: $(grep -c 'rel err' "$OUT/final-memcheck.log") pinned calls"
grep -E "ERROR SUMMARY|sanitize sweep|Error|Traceback" "$OUT/final-memcheck.log" | sort | uniq -c | head -6
source tools/probes/kernel_time.sh
KT_T=80 kt gemm_a8w8_blockscale - 16x2048x7168,16x2112x7168,16x1024x4096,1x2048x7168 "m16n16.w7.bk3,m8n16.w7.bk4" final-blockscale
KT_T=80 kt gemm_a16w16 - 2x4096x4096,4x4096x4096 m16n16.w8.bk3 final-bf16
KT_T=80 kt gemm_a8w8 per_tensor 1x2048x7168,1x2112x7168,1x1536x8960,2x2112x7168 m8n16.w7.bk4 final-fp8
for f in final-blockscale final-bf16 final-fp8; do grep -E "^\s+[0-9]+ " "$OUT/$f.txt" | cut -c1-150; done
echo "probe took $((SECONDS - start)) s"
source tools/probes/h200_decode_table.sh
