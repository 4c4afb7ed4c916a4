#!/usr/bin/env bash
# Fifty-sixth session's device call: the final (tools/probes/final-or-tests-53.sh, with the FLYGEMM_* settings the
# caller exports) with the fifty-fifth session's three host-side fixes added to its test run, since the whole-suite
# probe (tools/probes/suite-55.sh) costs a call of its own: scales quantized on CUDA equal the CPU's, _C.so without
# unused torch libraries in DT_NEEDED (a linked C++ app starts), the MX oracle bound with fp32 accumulation error.
# Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export FLYGEMM_TEST_ARGS="tests/test_gpu_cuda.py tests/test_gpu_cuda_scaled.py tests/test_gpu_cuda_decode.py \
tests/test_gpu_cuda_kernels.py tests/test_gpu_cuda_mx.py tests/test_gpu_rocm.py tests/test_dispatch.py \
tests/test_gpu_fuzz.py tests/test_gpu_multi_device.py tests/test_gpu_integration.py \
tests/test_quant.py::test_outputs_follow_input_device tests/test_integration.py::test_cpp_link_only_app \
tests/test_integration.py::test_library_needs_no_unused_torch_libraries \
tests/test_rocm_mx.py::test_emulated_mx_kernel_matches_cpu_oracle"
bash tools/probes/final-or-tests-53.sh
