#!/usr/bin/env bash
# Fifty-ninth session's last device call (little device time left): build the extension, every GPU test of the tree
# (the list of tools/probes/final-58.sh), then the issue-5 MXFP4 bar shapes (fp8 per-tensor / MXFP4 at 1 / 16 x 16384
# x 7168, kernel time). Logs straight into $OUT; redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
timeout ${FLYGEMM_CHECK_T:-420} python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py \
  tests/test_gpu_cuda_decode.py tests/test_gpu_cuda_kernels.py tests/test_gpu_cuda_mx.py tests/test_gpu_rocm.py \
  tests/test_dispatch.py tests/test_gpu_fuzz.py tests/test_gpu_multi_device.py tests/test_gpu_integration.py \
  tests/test_quant.py::test_outputs_follow_input_device tests/test_integration.py::test_cpp_link_only_app \
  tests/test_integration.py::test_library_needs_no_unused_torch_libraries \
  tests/test_rocm_mx.py::test_emulated_mx_kernel_matches_cpu_oracle > "$OUT/tests.log" 2>&1
echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -12
timeout 60 python3 -m flygemm bench --no-check --kernel-time --ops gemm_a8w8,gemm_mxfp4 \
  --shapes 1x16384x7168,16x16384x7168 > "$OUT/bench.log" 2>&1
sed -n '/^kernel time/,/^$/p' "$OUT/bench.log" | head -12
echo "probe took $((SECONDS - start)) s"
