#!/usr/bin/env bash
# Fifty-third session: verify the MXFP4 M = 65..128 rows (64-token decode kernel over two tiles): build, the MX and
# dispatch GPU tests, memcheck over that kernel at two-tile shapes, then the op on its table pick at a few layers.
# Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
python3 -m pytest -q tests/test_gpu_cuda_mx.py tests/test_dispatch.py > /tmp/tests.log 2>&1
echo "tests: $(tail -n 1 /tmp/tests.log)"; grep -E "^(FAILED|ERROR)" /tmp/tests.log | head
timeout 60 compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match m64n64k128.s4.p1.img \
  --ops gemm_mxfp4 --split-k 1,2 --shapes 100x520x4096,128x264x1024 > /tmp/memcheck.log 2>&1
echo "memcheck: $(grep -E "ERROR SUMMARY" /tmp/memcheck.log | tail -1) / $(tail -n 1 /tmp/memcheck.log)"
timeout 60 python3 -m flygemm bench --no-check --ops gemm_mxfp4 \
  --shapes 96x7168x16384,128x8192x8192,128x4096x4096,100x14336x4096,128x36864x7168 > /tmp/bench.log 2>&1
cp /tmp/tests.log /tmp/memcheck.log /tmp/bench.log "$OUT/" 2>/dev/null
grep -E "^gemm_" /tmp/bench.log | sort -u
