#!/usr/bin/env bash
# Sixty-first session (ran on the scratch branch exp/rr-61, commits 0b1d6cc..af9551f, whose kernel list had the candidates;
# main keeps only m16n16.w7.bk4.rr.np): fp8 M = 16 decode kernels that hold a whole K = 7168 slice in their bulk ring (red_ring: the
# reduction buffer in the slots; .np: packed rows), candidates appended to the kernel list on branch exp/rr-61. Builds
# the extension, runs the fp8 decode GPU tests that cover every decode kernel (small shape, ring reuse at K = 12288),
# then tools/tune.py --kernel-time over the m16n16 / m8n16 bulk kernels at the N = 2048 / 2112 rows (3 passes), per
# tensor and per token, and tools/ab.py (event time, fresh tensors) table vs each candidate. Then on an H200 only, the
# sixtieth session's e4 A/B (tools/probes/e4-h200-60.sh). Logs into $OUT; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="gemm_a8w8 and not blockscale and (every_decode_kernel_small_shape or bulk_kernels_reuse or matches_oracle)" \
  DT_LOG=rr-tests.log source tools/probes/decode_tests.sh
for v in per_tensor per_token; do
  timeout 150 python3 tools/tune.py --op gemm_a8w8 --variant $v --kernel-time --passes 3 \
    --shapes 16x2048x7168,12x2048x7168,16x2112x7168,1x2048x7168 \
    --match "m16n16.w8k128.bk6,.rr.np,.rr.rot" > "$OUT/rr-tune-$v.txt" 2>&1
  echo "tune $v rc $? at $((SECONDS - start)) s"
done
timeout 200 python3 tools/ab.py --pairs tools/probes/rr-61.pairs --rounds 5 > "$OUT/rr-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
for v in per_tensor per_token; do grep -vE "^\s*$" "$OUT/rr-tune-$v.txt" | cut -c1-150 | tail -n 30; done
cut -c1-140 "$OUT/rr-ab.txt"
echo "rr probe took $((SECONDS - start)) s"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) bash tools/probes/e4-h200-60.sh ;; esac
