#!/usr/bin/env bash
# Seventy-fifth session: torch / fly on 48 random shapes (tools/probes/wild-75.py, seed 75) for bf16, fp8 per-tensor,
# per-token and blockscale, to find the shapes users would hit that no row was tuned for; then the SM clock of fp8 and
# blockscale at 8192^3 back to back (is blockscale's gap to fp8 a power-cap gap?), and the GPU fuzz at a new seed. Logs
# and JSON into $OUT; the worst rows last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/use_kslim.sh
source tools/probes/build_ext.sh
SHAPES=$(python3 tools/probes/wild-75.py --count "${WILD_COUNT:-48}" --seed "${WILD_SEED:-75}")
run() {  # name ops variants limit
  timeout "$4" python3 -m flygemm bench --no-check --ops "$2" --variants "$3" --shapes "$SHAPES" \
    --json "$OUT/wild-$1.json" > "$OUT/wild-$1.log" 2>&1
  echo "$1 rc $? at $((SECONDS - start)) s"
}
run bf16 gemm_a16w16 - "${WILD_T:-100}"
run fp8 gemm_a8w8 per_tensor,per_token "$((2 * ${WILD_T:-100}))"
run bs gemm_a8w8_blockscale - "${WILD_T:-100}"
if [ "${WILD_CLOCK:-1}" = 1 ]; then
  timeout 40 python3 tools/probes/clock-74.py --op gemm_a8w8 --variant per_tensor --seconds 4 8192x8192x8192 \
    gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.c1x2.pp.sm90a:1 > "$OUT/clock-fp8.txt" 2>&1
  timeout 40 python3 tools/probes/clock-74.py --op gemm_a8w8_blockscale --seconds 4 8192x8192x8192 \
    gemm_a8w8_blockscale.fp8_e4m3fn.bf16.t192x128x128.serial.sm90a:1 > "$OUT/clock-bs.txt" 2>&1
  echo "clock at $((SECONDS - start)) s"
  tail -n 4 "$OUT/clock-fp8.txt" "$OUT/clock-bs.txt"
fi
# the dispatch change of this session (a bucket's first aligned row) on the GPU: the fuzz at a new seed
FLYGEMM_FUZZ_SEED=${WILD_FUZZ_SEED:-251} timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_fuzz.py \
  > "$OUT/fuzz.log" 2>&1
echo "fuzz seed ${WILD_FUZZ_SEED:-251} rc $?: $(tail -n 1 "$OUT/fuzz.log")"
python3 tools/probes/wild_worst.py --top 40 "$OUT"/wild-*.json | tee "$OUT/wild-worst.txt" | cut -c1-170
