#!/usr/bin/env bash
# Fifty-sixth session, second call: the two host-side fixes after tools/probes/final-56.sh failed them on the GPU
# machine: _C.so linked with --as-needed through extra_preargs (the linker_so edit never reached that machine's link
# line), the ROCm MX emulator's fp8 decoder from the ROCm core (a bare `import gemm_a8w8` found the CUDA family).
# Prints the link line's flag, _C.so's DT_NEEDED and the tests. Then the fp8 ops' fp16-output twins as they are now
# (default rows only): A/B of the table's pick against the one 128 x 128 tile every fp16-output call ran before.
# About 180 s. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
rm -f python/flygemm/_C.so
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
echo "link line: $(grep -- ' -shared' /tmp/build.log | tr ' ' '\n' | grep -c -- '--as-needed') x --as-needed"
echo "_C.so needs: $(readelf -d python/flygemm/_C.so | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_decode.py::test_fp16_out_twin_kernels_match_oracle \
  tests/test_quant.py::test_outputs_follow_input_device tests/test_integration.py::test_cpp_link_only_app \
  tests/test_integration.py::test_library_needs_no_unused_torch_libraries tests/test_rocm_mx.py \
  > /tmp/tests.log 2>&1
cp /tmp/tests.log /tmp/build.log "$OUT/"
grep -E "^(FAILED|ERROR)" /tmp/tests.log | head -20
echo "tests: $(tail -n 1 /tmp/tests.log)"
shapes="1x2048x7168 16x2048x7168 1x16384x7168 16x16384x7168 128x8192x8192 1024x8192x8192 8192x8192x8192"
: > /tmp/fp16out.pairs
for s in $shapes; do
  echo "gemm_a8w8 per_token_fp16 $s table gemm_a8w8.fp8_e4m3fn.fp16.t128x128x128.sm90a:1" >> /tmp/fp16out.pairs
  echo "gemm_a8w8_blockscale fp16 $s table gemm_a8w8_blockscale.fp8_e4m3fn.fp16.t128x128x128.sm90a:1" >> /tmp/fp16out.pairs
done
timeout 75 python3 tools/ab.py --pairs /tmp/fp16out.pairs --rounds 2 > /tmp/ab-fp16out.log 2>&1
cp /tmp/ab-fp16out.log "$OUT/"
echo "== A/B: B = the old fp16-output tile, A = the table's twin (B/A > 1: the twin is faster)"
grep -E "^gemm_" /tmp/ab-fp16out.log | cut -c1-150
