#!/usr/bin/env bash
# Fifty-sixth session's device call (exp/fp8-fp16-twins): the final (tools/probes/final-or-tests-52.sh: on an H200
# every GPU test, fuzz, memcheck, the issue-4 / 5 benches; elsewhere the tests, fuzz, memcheck and decode table) with
# the fifty-fifth session's three host-side fixes added to its test run (scales quantized on CUDA equal the CPU's,
# _C.so without unused torch libraries in DT_NEEDED, the MX oracle bound with fp32 accumulation error). The GPU tests
# include the fp8 ops' fp16-output twins (test_fp16_out_twin_kernels_match_oracle, every core kernel of
# test_gpu_cuda_kernels). Then, while FLYGEMM_DEADLINE (default 560) seconds allow: A/B of the fp16-output table
# pick against the one 128 x 128 tile every fp16-output call ran before, bench bf16 / fp16 outputs side by side
# (kernel time, torch._scaled_mm with the same output dtype), memcheck over the fp16-output decode twins.
# Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
export FLYGEMM_TEST_ARGS="tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py tests/test_gpu_cuda_decode.py \
tests/test_gpu_cuda_kernels.py tests/test_gpu_cuda_mx.py tests/test_gpu_rocm.py tests/test_dispatch.py \
tests/test_gpu_fuzz.py tests/test_gpu_multi_device.py tests/test_gpu_integration.py \
tests/test_quant.py::test_outputs_follow_input_device tests/test_integration.py::test_cpp_link_only_app \
tests/test_integration.py::test_library_needs_no_unused_torch_libraries \
tests/test_rocm_mx.py::test_emulated_mx_kernel_matches_cpu_oracle"
bash tools/probes/final-or-tests-52.sh
source tools/device_env.sh
left() { echo $(( ${FLYGEMM_DEADLINE:-560} - (SECONDS - start) )); }
limit() { local l; l=$(left); echo $(( l < $1 ? l - 5 : $1 )); }   # at most $1 s, never past the deadline
decode=1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168
shapes=$decode,128x8192x8192,1024x8192x8192,8192x8192x8192
: > /tmp/fp16out.pairs
for s in ${shapes//,/ }; do
  echo "gemm_a8w8 per_token_fp16 $s table gemm_a8w8.fp8_e4m3fn.fp16.t128x128x128.sm90a:1" >> /tmp/fp16out.pairs
  echo "gemm_a8w8_blockscale fp16 $s table gemm_a8w8_blockscale.fp8_e4m3fn.fp16.t128x128x128.sm90a:1" >> /tmp/fp16out.pairs
done
echo "== fp16-output twins: A/B, B = the old fp16-output tile, A = the table's twin (B/A > 1: the twin is faster)"
[ "$(left)" -gt 30 ] && timeout "$(limit 90)" python3 tools/ab.py --pairs /tmp/fp16out.pairs --rounds 3 > /tmp/ab-fp16out.log 2>&1
grep -E "^gemm_" /tmp/ab-fp16out.log | cut -c1-130
echo "== fp16-output twins: bench (kernel time), bf16 and fp16 outputs"
[ "$(left)" -gt 30 ] && timeout "$(limit 80)" python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a8w8,gemm_a8w8_blockscale --variants per_token,per_token_fp16,-,fp16 --shapes $shapes > /tmp/bench-fp16out.log 2>&1
grep -A20 "kernel us" /tmp/bench-fp16out.log | grep -E "^gemm_"
echo "== fp16-output twins: memcheck over the decode twins (split 1 / 3)"
[ "$(left)" -gt 20 ] && timeout "$(limit 60)" compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py --each-kernel \
  --match gemm_splitk_decode --ops gemm_a8w8,gemm_a8w8_blockscale --variant per_token_fp16 --split-k 1,3 \
  --shapes 7x272x1056 > /tmp/memcheck-fp16out.log 2>&1
echo "memcheck: $(grep -E "ERROR SUMMARY" /tmp/memcheck-fp16out.log | tail -1) / $(tail -n 1 /tmp/memcheck-fp16out.log)"
tar -czf "$OUT/fp16out-logs.tgz" -C /tmp ab-fp16out.log bench-fp16out.log memcheck-fp16out.log fp16out.pairs 2>/dev/null
echo "probe took $((SECONDS - start)) s"
