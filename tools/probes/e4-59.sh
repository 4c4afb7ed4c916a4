#!/usr/bin/env bash
# Fifty-ninth session: the MXFP4 e4 kernels (Config.mx_e4) on the GPU machine: builds the extension, runs the MXFP4
# decode GPU tests (every MXFP4 decode kernel of the list, the e4 ones included; FLYGEMM_E4_TESTS: the -k selection),
# then tools/ab.py over tools/probes/${FLYGEMM_E4_PAIRS:-e4-59}.pairs (cold) and ...-warm.pairs (--warm-l2), and the
# fp8 per-tensor / MXFP4 decode at 1 / 16 x 16384 x 7168 (kernel time) for the MXFP4 bar. Logs straight into $OUT;
# redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${FLYGEMM_E4_TEST_T:-150} python3 -m pytest -q -x -p no:cacheprovider tests/test_gpu_cuda_decode.py \
  -k "${FLYGEMM_E4_TESTS:-(small_shape and mxfp4) or several_token_tiles or (special_scale and mxfp4) or image_kernels_cuda_graph}" > "$OUT/e4-tests.log" 2>&1
echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/e4-tests.log")"
grep -E "^(FAILED|ERROR)|Error|assert" "$OUT/e4-tests.log" | head -12
timeout 220 python3 tools/ab.py --pairs tools/probes/${FLYGEMM_E4_PAIRS:-e4-59}.pairs --rounds 3 > "$OUT/e4-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
timeout 60 python3 tools/ab.py --pairs tools/probes/${FLYGEMM_E4_PAIRS:-e4-59}-warm.pairs --rounds 3 --warm-l2 > "$OUT/e4-warm.txt" 2>&1
echo "warm rc $? at $((SECONDS - start)) s"
timeout 60 python3 -m flygemm bench --no-check --kernel-time --ops gemm_a8w8,gemm_mxfp4 \
  --shapes 1x16384x7168,16x16384x7168 > "$OUT/e4-bench.log" 2>&1
echo "bench rc $? at $((SECONDS - start)) s"
cut -c1-120 "$OUT/e4-ab.txt"; cut -c1-120 "$OUT/e4-warm.txt"
sed -n '/^kernel time/,/^$/p' "$OUT/e4-bench.log" | head -20
echo "probe took $((SECONDS - start)) s"
