#!/usr/bin/env bash
# Sixty-seventh session, either card. `bash tools/probes/any-67.sh 1`: the MXFP4 one-wave split by event time
# (tools/probes/mx-split-verify-66.sh: its pairs, then the decode GPU tests), then the MXFP4 M = 5..8 list order
# (tools/probes/mx-m8-order-67.pairs). `... 2` (same machine, the extension already built): the M = 9..16 ring window's
# lower edge (tools/probes/m16-edge-67.pairs). `... 3`: the sixty-seventh session's dispatch change by event time out of
# sample (tools/probes/edge-verify-67.pairs: old pick pinned against the table), then every decode GPU test. Logs into
# $OUT (logs-<part>.tgz); prints a short summary last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
part=${1:-1}
if [ "$part" = 3 ]; then
  DC_NAME=edge-verify DC_PAIRS=tools/probes/edge-verify-67.pairs DC_K="" DC_AB_T=${EV_AB_T:-200} DC_TEST_T=120 \
    source tools/probes/default_check.sh > "$OUT/ev-stdout.txt" 2>&1
  (cd "$OUT" && tar czf logs-3.tgz ./*.txt ./*.log 2>/dev/null)
  grep -E "rc|passed|failed" "$OUT/ev-stdout.txt" | tail -5
  exit 0
fi
if [ "$part" = 1 ]; then
  bash tools/probes/mx-split-verify-66.sh > "$OUT/mv-stdout.txt" 2>&1
  echo "verify done at $((SECONDS - start)) s" >> "$OUT/mv-stdout.txt"
  pairs=tools/probes/mx-m8-order-67.pairs name=mx-m8-order limit=${ORDER_T:-120}
else
  pairs=tools/probes/m16-edge-67.pairs name=m16-edge limit=${EDGE_T:-240}
fi
source tools/device_env.sh
export PYTHONPATH=$PWD/python
[ -f python/flygemm/_C.so ] || source tools/probes/build_ext.sh > /dev/null
timeout "$limit" python3 tools/ab.py --pairs "$pairs" --rounds 2 > "$OUT/$name-ab.txt" 2>&1
echo "$name rc $? at $((SECONDS - start)) s"
(cd "$OUT" && tar czf "logs-$part.tgz" ./*.txt ./*.log 2>/dev/null)
[ "$part" = 1 ] && cut -c1-150 "$OUT/mv-stdout.txt" | tail -70
grep -c median "$OUT/$name-ab.txt"
