#!/usr/bin/env bash
# Fifty-sixth session, second call: the two host-side fixes after tools/probes/final-56.sh failed them on the GPU
# machine: _C.so linked with --as-needed through extra_preargs (the linker_so edit never reached that machine's link
# line), the ROCm MX emulator's fp8 decoder from the ROCm core (a bare `import gemm_a8w8` found the CUDA family).
# Prints the link line's flag, _C.so's DT_NEEDED and the tests. About 120 s. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
rm -f python/flygemm/_C.so
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
echo "link line: $(grep -- ' -shared' /tmp/build.log | tr ' ' '\n' | grep -c -- '--as-needed') x --as-needed"
echo "_C.so needs: $(readelf -d python/flygemm/_C.so | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_decode.py::test_fp16_out_twin_kernels_match_oracle \
  tests/test_quant.py::test_outputs_follow_input_device tests/test_integration.py tests/test_rocm_mx.py \
  > /tmp/tests.log 2>&1
cp /tmp/tests.log /tmp/build.log "$OUT/"
grep -E "^(FAILED|ERROR)" /tmp/tests.log | head -20
echo "tests: $(tail -n 1 /tmp/tests.log)"
