#!/usr/bin/env bash
# Fifty-fourth session (written without a GPU; run it next session before merging exp/fp16-twins): the fp16
# gemm_a16w16 twins of the bf16 kernels (kernels/configs/sm_90a.twins.csv) and the decode family's fp16 / fp32
# outputs. Build; GPU tests (the fp16 decode twins pinned, every core kernel incl. the tile twins, the a16w16 op
# tests, the decode file with its dtype filter); memcheck over the fp16 twins with fp16 problems; then speed:
# bench (kernel time) bf16 and fp16 side by side against torch.mm, and A/B of the fp16 table pick against the one
# 128 x 128 tile every fp16 call ran before. About 580 s at most (the timeouts). Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
timeout 270 python3 -m pytest -q -x tests/test_gpu_cuda_decode.py tests/test_gpu_cuda.py \
  tests/test_gpu_cuda_kernels.py -k "fp16 or decode or a16w16" > /tmp/tests.log 2>&1
echo "tests: $(tail -n 1 /tmp/tests.log)"; grep -E "^(FAILED|ERROR)" /tmp/tests.log | head
timeout 60 compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match .fp16.fp16. \
  --ops gemm_a16w16 --variant fp16 --split-k 1,3 > /tmp/memcheck.log 2>&1
echo "memcheck: $(grep -E "ERROR SUMMARY" /tmp/memcheck.log | tail -1) / $(tail -n 1 /tmp/memcheck.log)"
shapes=1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168,64x8192x8192,128x8192x8192,1024x8192x8192,8192x8192x8192
timeout 80 python3 -m flygemm bench --no-check --kernel-time --ops gemm_a16w16 --variants=-,fp16 --shapes $shapes \
  > /tmp/bench.log 2>&1
old=gemm_a16w16.fp16.fp16.t128x128x64.sm90a:1
printf "gemm_a16w16 fp16 %s table $old\n" ${shapes//,/ } > /tmp/fp16.pairs
timeout 80 python3 tools/ab.py --pairs /tmp/fp16.pairs --rounds 3 > /tmp/ab.log 2>&1
cp /tmp/tests.log /tmp/memcheck.log /tmp/bench.log /tmp/ab.log "$OUT/" 2>/dev/null
echo "== bench (kernel time)"; grep -A20 "kernel us" /tmp/bench.log | grep -E "^gemm_"
echo "== A/B: B = the old fp16 tile, A = the table's twin (B/A > 1: the twin is faster)"; grep -E "^gemm_" /tmp/ab.log | cut -c1-120
