#!/usr/bin/env bash
# Sixtieth session: compute-sanitizer memcheck over the MXFP4 e4 decode kernels (Config.mx_e4, the fifty-ninth
# session's; not yet run under a sanitizer), each pinned at split_k 1 and 3 on a ragged N and a long K, every result
# checked against the CPU oracle (tools/sanitize_sweep.py); memcheck over every MXFP4 kernel (pinned MXFP4 sweeps
# matched no kernel before this session's fix of tools/sanitize_sweep.py); synccheck over the e4 kernels.
# Logs straight into $OUT; redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
export PYTHONPATH=$PWD/python
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
shapes=${FLYGEMM_MC_SHAPES:-1x2056x7168,9x520x12288,33x200x4096}
timeout ${FLYGEMM_MC_T:-300} "$SAN" --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match .e4. \
  --ops gemm_mxfp4 --split-k 1,3 --shapes "$shapes" > "$OUT/memcheck-e4.log" 2>&1
echo "memcheck rc $? at $((SECONDS - start)) s"
timeout ${FLYGEMM_MC_ALL_T:-240} "$SAN" --tool memcheck python3 tools/sanitize_sweep.py --each-kernel --match mxfp4 \
  --ops gemm_mxfp4 --split-k 1,3 --shapes 9x520x12288,17x136x2048 > "$OUT/memcheck-mxfp4.log" 2>&1
echo "memcheck (every MXFP4 kernel) rc $? at $((SECONDS - start)) s"
timeout ${FLYGEMM_SC_T:-100} "$SAN" --tool synccheck python3 tools/sanitize_sweep.py --each-kernel --match .e4. \
  --ops gemm_mxfp4 --split-k 1 --shapes 9x520x12288 > "$OUT/synccheck-e4.log" 2>&1
echo "synccheck rc $? at $((SECONDS - start)) s"
for f in memcheck-e4 memcheck-mxfp4 synccheck-e4; do
  echo "== $f: $(grep -c 'rel err' "$OUT/$f.log") pinned calls, largest rel err $(grep -o 'rel err [0-9.e+-]*' "$OUT/$f.log" | awk '{print $3}' | sort -g | tail -n 1)"
  grep -E "ERROR SUMMARY|sanitize sweep|Error|Traceback" "$OUT/$f.log" | sort | uniq -c | head -8
done
echo "probe took $((SECONDS - start)) s"
