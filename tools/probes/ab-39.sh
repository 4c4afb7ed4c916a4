#!/usr/bin/env bash
# Thirty-ninth session, one device call: build the extension; A/B pairs files with their own rounds and time limits
# (FLYGEMM_AB39_SPECS: "pairs_file:rounds:seconds ..."; new tensors every round); then the per-buffer placement probe
# (tools/probes/placement.py --buffers) with the slowest and fastest copy profiled by ncu (FLYGEMM_AB39_PLACEMENT=ncu, the default;
# =plain: without ncu, copies of A only / W only / both; =app: A copies under ncu's application replay with the caches
# left alone, L2 fabric / slice metrics; anything else: skip).
# Full logs in $OUT; last, a short table of the decisive lines: for each pair the median B / A and B's kernel.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device_env.sh
OUT=${OUT:-/tmp}
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
for spec in ${FLYGEMM_AB39_SPECS:?}; do
  IFS=: read -r pairs rounds seconds <<< "$spec"
  timeout "$seconds" python3 tools/ab.py --pairs "$pairs" --rounds "$rounds" 2>&1 | grep -v -i warn \
    > "$OUT/$(basename "$pairs" .pairs).txt"
done
if [ "${FLYGEMM_AB39_PLACEMENT:-ncu}" = ncu ]; then
  timeout 120 ncu --clock-control none --profile-from-start off -k regex:GemmA8W8Sm90 --set full \
    -f -o "$OUT/placement" python3 tools/probes/placement.py --shape 1024x7168x16384 --buffers 12 --rep-ms 150 \
    --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a:1 > "$OUT/placement.txt" 2>&1
  ncu -i "$OUT/placement.ncu-rep" --page details --print-summary none > "$OUT/placement-ncu.txt" 2>&1
  timeout 60 python3 tools/probes/placement.py --shape 1024x6144x4096 --buffers 12 --rep-ms 150 \
    --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x192x128.sm90a:1 --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x128x128.pp.sm90a:1 \
    >> "$OUT/placement.txt" 2>&1
  grep -E "^  [a-zA-Z_]|Duration|DRAM Throughput|L2 Hit Rate|Mem Busy|Max Bandwidth" "$OUT/placement-ncu.txt" | head -30
elif [ "${FLYGEMM_AB39_PLACEMENT}" = plain ]; then
  # without ncu attached: which operand's copies differ (A only, W only, both), 16 copies each
  for vary in a w both; do
    timeout 60 python3 tools/probes/placement.py --shape 1024x7168x16384 --buffers 16 --rep-ms 150 --vary $vary \
      --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a:1 >> "$OUT/placement.txt" 2>&1
  done
elif [ "${FLYGEMM_AB39_PLACEMENT}" = app ]; then
  # application replay, caches left alone: does the slow A copy move more L2 sectors across the partition fabric?
  ncu --query-metrics --chip gh100 > "$OUT/ncu-metrics.txt" 2>&1
  want="gpu__time_duration.sum dram__bytes_read.sum lts__t_sectors.sum lts__t_sectors.max lts__t_sectors.min
        lts__t_sectors_srcunit_ltcfabric.sum lts__t_sectors_srcunit_tex.sum lts__t_sectors_srcunit_tex_lookup_hit.sum
        lts__t_sectors_srcunit_tex_lookup_miss.sum lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum"
  metrics=$(for m in $want; do grep -q "^${m%.*} " "$OUT/ncu-metrics.txt" && printf '%s,' "$m"; done)
  sections=""; [ -z "$metrics" ] && sections="--section MemoryWorkloadAnalysis_Tables"
  echo "metrics: ${metrics:-none found, MemoryWorkloadAnalysis_Tables instead}"
  timeout 200 ncu --replay-mode application --cache-control none --clock-control none --profile-from-start off \
    -k regex:GemmA8W8Sm90 ${metrics:+--metrics ${metrics%,}} $sections \
    -f -o "$OUT/placement-app" python3 tools/probes/placement.py --shape 1024x7168x16384 --buffers 16 --rep-ms 100 \
    --vary a --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a:1 > "$OUT/placement.txt" 2>&1
  ncu -i "$OUT/placement-app.ncu-rep" --page raw --csv > "$OUT/placement-app.csv" 2>&1
  ncu -i "$OUT/placement-app.ncu-rep" --page details --print-summary none > "$OUT/placement-app-details.txt" 2>&1
  python3 - "$OUT/placement-app.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if rows:
    keep = [i for i, h in enumerate(rows[0]) if "__" in h or h == "ID"]
    for r in rows[:1] + rows[2:]:
        print(" ".join(r[i].replace("lts__t_sectors", "lts")[:26] for i in keep))
PY
  grep -E "Duration|Fabric|L2 Hit" "$OUT/placement-app-details.txt" | head -12
fi
[ -f "$OUT/placement.txt" ] && grep -v "^==" "$OUT/placement.txt" | grep -v -i warn | cut -c1-40
# decisive lines: B / A median < 0.985 (B faster by 1.5% or more) or > 1.0 in the recheck file (the predecessor loses)
for f in "$OUT"/ab-*.txt; do
  echo "== $(basename "$f"): $(grep -c median "$f") pairs"
  python3 - "$f" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d. ]+)median ([\d.]+).*B = \S+?\.bf16\.(\S+)\.sm90a(:\S+)", line)
    if m:
        op, M, N, K, a, b, rounds, med, tile, split = m.groups()
        if float(med) < 0.985 or "recheck" in sys.argv[1]:
            print(f"{op.replace('gemm_', '')[:18]:18} {M:>5} {N:>6} {K:>6} {a:>7} {b:>7} {med} [{rounds.strip()}] {tile}{split}")
PY
done
# one archive: the device tool brings back a limited number of files
tar -czf /tmp/ab-logs.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv /tmp/ab-logs.tgz "$OUT/"
