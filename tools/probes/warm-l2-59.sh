#!/usr/bin/env bash
# Fifty-ninth session: what the MXFP4 M = 16 .img kernel's own work costs once the HBM stream is taken away. On a scratch
# branch with the bound twins built (tools/probes/bounds-58.sh says how), builds the extension, then tools/ab.py over
# tools/probes/warm-l2-59.pairs twice: --warm-l2 (weights of K = 1792 / 3584 served from L2) and cold (flushed), logs
# straight into $OUT. On an H200 then the fifty-eighth session's cold bounds at K = 7168 (tools/probes/bounds-58.pairs).
# Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
pairs=tools/probes/warm-l2-59.pairs
timeout 150 python3 tools/ab.py --pairs $pairs --rounds 3 --warm-l2 > "$OUT/warm.txt" 2>&1
echo "warm rc $? at $((SECONDS - start)) s"
timeout 150 python3 tools/ab.py --pairs $pairs --rounds 3 > "$OUT/cold.txt" 2>&1
echo "cold rc $? at $((SECONDS - start)) s"
if [[ $name == *H200* ]]; then
  timeout 150 python3 tools/ab.py --pairs tools/probes/bounds-58.pairs --rounds 3 > "$OUT/bounds-h200.txt" 2>&1
  echo "H200 bounds rc $? at $((SECONDS - start)) s"
fi
for f in warm cold bounds-h200; do
  [ -f "$OUT/$f.txt" ] && { echo "== $f"; cut -c1-110 "$OUT/$f.txt"; }
done
echo "probe took $((SECONDS - start)) s"
