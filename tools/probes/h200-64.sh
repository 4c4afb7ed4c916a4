#!/usr/bin/env bash
# Sixty-fourth session, H200 only (exits at once on any other card): the issue-5 decode table first (the bars), then
# every dispatch row the sixty-third and sixty-fourth sessions moved on H100 evidence, old pick pinned against the
# table by event time (tools/ab.py, 2 rounds), so that a row losing on the H200 can be reverted; the 24 op@H100 rows
# (18 of the sixty-third session, six MX rows of the sixty-fourth) are paired the other way (the shared H200 pick as A,
# the H100 pick pinned as B): B / A < 1 there says the H100 pick wins on the H200 too and its row can become shared.
# Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
source tools/probes/build_ext.sh
timeout 200 python3 -m flygemm bench --no-check --kernel-time \
  --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
  --shapes 1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168 > "$OUT/decode.log" 2>&1
echo "decode table rc $? at $((SECONDS - start)) s"
sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150
cat tools/probes/ring-verify-64.pairs tools/probes/ring-verify-63.pairs > /tmp/pairs-64
timeout $((${H64_END:-560} - SECONDS + start)) python3 tools/ab.py --pairs /tmp/pairs-64 --rounds 2 > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
# shared rows whose new pick lost or tied on the H200 (B / A >= 0.99; A is the old pick), and op@H100 rows whose H100
# pick also wins there (A = table, the shared H200 pick; B / A < 0.99)
awk '{for (i = 1; i < NF; i++) if ($i == "median") m = $(i + 1); h = index($0, "A = table") > 0}
     /median/ && ((!h && m >= 0.99) || (h && m < 0.99)) {print (h ? "H100 pick wins:" : "shared lost:"), $1, $2, $3, $4, $5, $6, m}' \
  "$OUT/ab.txt" | sort -k8,8 -g | tail -40
echo "B / A over all rows: $(awk '{for (i = 1; i < NF; i++) if ($i == "median") print $(i + 1)}' "$OUT/ab.txt" | sort -g \
  | awk '{v[NR] = $1} END {print NR " rows, min " v[1] ", median " v[int((NR + 1) / 2)] ", max " v[NR]}')"
