#!/usr/bin/env bash
# Seventy-second session: fp32 outputs on the twins of the bf16-output default rows' kernels (sm_90a.twins.csv).
# (1) the GPU tests of those kernels: every fp32 core kernel pinned (test_gpu_cuda_kernels), every fp32 decode twin
# pinned (test_out_dtype_twin_kernels_match_oracle), fp32 through the table at M = 1..4097, the out-dtype tests;
# (2) tools/ab.py over tools/probes/fp32-72.pairs: new pick against the old 128 x 128 tile, and against torch.
# (3) the LLM set with fp32 outputs against torch. Logs into $OUT; prints a short table last. Any card (correctness;
# the timings are that card's).
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${FP32_TEST_T:-300} python3 -m pytest -q -p no:cacheprovider \
  -k "fp32 or out_dtype_twin or fp16_twin or out_variant or out_dtypes" tests/test_gpu_cuda_kernels.py \
  tests/test_gpu_cuda_decode.py tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py > "$OUT/tests.txt" 2>&1
echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/tests.txt")"
grep -E "^(FAILED|ERROR)" "$OUT/tests.txt" | head -n 20
timeout ${FP32_AB_T:-200} python3 tools/ab.py --pairs tools/probes/fp32-72.pairs --rounds 2 > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
grep median "$OUT/ab.txt" | sed 's/gemm_splitk_decode\.//g' | cut -c1-170
# (3) the LLM shape set with fp32 outputs against torch's fp32-output peers (bench.py, interleaved, cold L2)
timeout ${FP32_LLM_T:-200} python3 tools/bench.py --ops gemm_a16w16,gemm_a8w8 --variants fp32,per_tensor_fp32 --shapes llm \
  --no-check --json "$OUT/llm-fp32.json" > "$OUT/llm-fp32.txt" 2>&1
echo "llm rc $? at $((SECONDS - start)) s"
grep -a "geometric" "$OUT/llm-fp32.txt" | sort -u
