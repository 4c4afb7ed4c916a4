#!/usr/bin/env bash
# The next session's device call (main; the fifty-seventh session's tools/probes/final-57.sh without its MXFP4 ring
# candidates, which live on exp/bounds-57 only): tools/probes/final-or-tests-52.sh (on an H200 the full final:
# every GPU test, fuzz, memcheck, the issue-4 / 5 benches; elsewhere the tests, fuzz, memcheck and decode table) with
# the host-side tests added, then _C.so's DT_NEEDED and which of its undefined symbols libtorch.so defines on this
# machine (setup.py leaves -ltorch off the link line).
# Export the FLYGEMM_* settings of the final first. Redirect stdout outside $OUT.
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
so=python/flygemm/_C.so
tlib=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
echo "== _C.so needs: $(readelf -d $so | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
nm -D --undefined-only $so | awk '{print $NF}' | sort -u > /tmp/undef.txt
nm -D --defined-only "$tlib/libtorch.so" | awk '{print $NF}' | sort -u > /tmp/libtorch-defs.txt
echo "libtorch.so here defines $(wc -l < /tmp/libtorch-defs.txt) symbols, of _C.so's undefined: $(comm -12 /tmp/undef.txt /tmp/libtorch-defs.txt | head -5 | tr '\n' ' ')"
echo "probe took $((SECONDS - start)) s"
