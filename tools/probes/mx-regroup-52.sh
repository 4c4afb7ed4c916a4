#!/usr/bin/env bash
# Fifty-second session: MX beyond decode sizes through the regrouping (kernels/cuda/gemm_mxfp.py to=blockscale) and
# the fp8 blockscale GEMM. Build, the MX / dispatch GPU tests, memcheck over the regrouping records, then the op
# bench of blockscale / MXFP8 / MXFP4 on the default (regroup) path and with the exact bf16 path forced
# (FLYGEMM_FORCE_KERNEL=...dequant), same process per run. Logs in $OUT; a table of MX time / blockscale time last.
#   FLYGEMM_MX52_SHAPES  shapes (default: the issue-4 pair and four LLM-set layers)
#   FLYGEMM_MX52_T       seconds per bench run (default 150)
#   FLYGEMM_MX52_DEQUANT formats whose exact bf16 path is timed too (default both; empty: none)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/mx_regroup_52}
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
shapes=${FLYGEMM_MX52_SHAPES:-8192x8192x8192,54560x8192x8192,128x8192x8192,1024x8192x8192,4096x7168x16384,16384x24576x1536}
T=${FLYGEMM_MX52_T:-150}
timeout "$T" python3 -m flygemm bench --no-check --ops gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 --shapes "$shapes" \
  > "$OUT/bench-regroup.log" 2>&1
for f in ${FLYGEMM_MX52_DEQUANT-mxfp8.fp8_e4m3fn mxfp4.fp4_e2m1_x2}; do
  FLYGEMM_FORCE_KERNEL=gemm_mxfp.$f.bf16.dequant.sm90a timeout "$T" python3 -m flygemm bench --no-check \
    --ops gemm_${f%%.*} --shapes "$shapes" > "$OUT/bench-dequant-${f%%.*}.log" 2>&1
done
python3 - "$OUT" <<'PY'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
def rows(name):
    t = {}
    for line in (out / name).read_text().splitlines():
        f = line.split()
        if len(f) > 6 and f[0].startswith("gemm_") and re.fullmatch(r"\d+", f[2]):
            t[(f[0], f"{f[2]}x{f[3]}x{f[4]}")] = float(f[5])
    return t
reg = rows("bench-regroup.log")
deq = {k: v for f in out.glob("bench-dequant-*.log") for k, v in rows(f.name).items()}
print(f"{'shape':>20} {'blockscale us':>13} {'op':>10} {'regroup us':>10} {'bf16 path us':>12} {'bs/regroup':>10} {'bs/bf16':>8}")
for (op, shape), us in sorted(reg.items(), key=lambda kv: kv[0][1]):
    if op.startswith("gemm_mx"):
        bs = reg.get(("gemm_a8w8_blockscale", shape), float("nan")); d = deq.get((op, shape), float("nan"))
        print(f"{shape:>20} {bs:13.1f} {op[5:]:>10} {us:10.1f} {d:12.1f} {bs / us:10.3f} {bs / d:8.3f}")
PY
