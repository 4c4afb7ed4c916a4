#!/usr/bin/env bash
# Fifty-third session: the MX regrouping with fewer rows per warp (kernels/cuda/gemm_mxfp.py params warp_rows,
# hoist; records gemm_mxfp.*.regroup.w32 / w32h / w64 / w64h) against the fifty-second session's warp-per-group
# kernel (.regroup) and the exact bf16 path (.dequant). Build, the MX / dispatch GPU tests (every variant against
# the oracle), memcheck over every regroup record, then each kernel of one pinned MX call (conversions and GEMM,
# cold L2, medians: tools/probes/split_breakdown.py). Logs in $OUT; a table of span and each kernel's time last.
#   FLYGEMM_MX53_SHAPES  shapes (default below)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mx_warp_rows_53}
mkdir -p "$OUT"
source tools/device_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 40 "$OUT/build.log"; exit 1; }
python3 -m pytest -q tests/test_gpu_cuda_mx.py tests/test_cuda_mx_convert.py tests/test_dispatch.py > "$OUT/tests.log" 2>&1
echo "tests: $(tail -n 1 "$OUT/tests.log")"
grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -20
compute-sanitizer --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match regroup \
  --shapes 65x520x1056,300x384x416,129x264x96 > "$OUT/memcheck.log" 2>&1
echo "memcheck: $(grep -E "ERROR SUMMARY" "$OUT/memcheck.log" | tail -1) / $(tail -n 1 "$OUT/memcheck.log")"
shapes=${FLYGEMM_MX53_SHAPES:-128x8192x8192,256x8192x8192,1024x8192x8192,8192x8192x8192,4096x7168x16384}
for f in mxfp8.fp8_e4m3fn mxfp4.fp4_e2m1_x2; do
  ks=""
  for v in regroup regroup.w32 regroup.w32h regroup.w64 regroup.w64h dequant; do ks="$ks,gemm_mxfp.$f.bf16.$v.sm90a"; done
  timeout 200 python3 tools/probes/split_breakdown.py --op gemm_${f%%.*} --shapes "$shapes" --kernels "${ks#,}" \
    --reps 20 > "$OUT/breakdown-${f%%.*}.log" 2>&1
done
python3 - "$OUT" <<'PY'
import collections, pathlib, sys
out = pathlib.Path(sys.argv[1])
print(f"{'op':>6} {'shape':>16} {'kernel':>14} {'span us':>8}  kernels in launch order (us)")
for log in sorted(out.glob("breakdown-*.log")):
    calls = collections.OrderedDict()
    for line in log.read_text().splitlines():
        f = line.split()
        if len(f) >= 6 and f[-1] and "us" in f and "x" in f[0]:
            calls.setdefault((f[0], f[1]), []).append((f[3], float(f[f.index("us") - 1])))
    for (shape, kernel), rows in calls.items():
        span = next((d for n, d in rows if n == "span"), float("nan"))
        ks = " / ".join(f"{d:.1f}" for n, d in rows if n != "span")
        variant = kernel.split(".bf16.")[-1].replace(".sm90a", "")
        print(f"{log.stem[10:]:>6} {shape:>16} {variant:>14} {span:8.1f}  {ks}")
PY
