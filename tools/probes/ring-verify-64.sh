#!/usr/bin/env bash
# Sixty-fourth session: the MX decode rows the ring sweep moved (RS_OPS=gemm_mxfp8,gemm_mxfp4 ring-sweep-63.sh; merged
# into the table), each checked by event time: the MX decode GPU tests, then tools/ab.py, old pick pinned against the
# new table, 3 rounds (tools/probes/ring-verify-64.pairs, written by ring_pairs.py before the merge); on an H200 then
# the issue-5 decode table. Logs into $OUT. (Run once, before six of the rows became op@H100 rows; since then those six
# pairs time the H100 pick against the shared table, see tools/probes/h200-64.sh.)
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
DT_K="mx" DT_LOG=decode-tests.log DT_T=200 source tools/probes/decode_tests.sh
timeout $((520 - SECONDS + start)) python3 tools/ab.py --pairs tools/probes/ring-verify-64.pairs --rounds 3 \
  > "$OUT/ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
cut -c1-160 "$OUT/ab.txt" | tail -80
source tools/probes/h200_decode_table.sh  # on an H200 only
