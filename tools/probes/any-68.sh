#!/usr/bin/env bash
# Sixty-eighth session, either card: the sixty-seventh session's dispatch change out of sample with every decode GPU
# test (tools/probes/any-67.sh 3), then the M = 5..8 rings' lower edge (tools/probes/m8-edge-68.pairs). Logs into $OUT
# (logs-3.tgz, logs-68.tgz); prints a short summary last.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
export PYTHONUNBUFFERED=1 EV_AB_T=${EV_AB_T:-110}
bash tools/probes/any-67.sh 3
source tools/device_env.sh
export PYTHONPATH=$PWD/python
timeout "${M8_T:-110}" python3 tools/ab.py --pairs tools/probes/m8-edge-68.pairs --rounds 2 > "$OUT/m8-edge-ab.txt" 2>&1
echo "m8-edge rc $? at $((SECONDS - start)) s"
(cd "$OUT" && tar czf logs-68.tgz ./m8-edge-ab.txt)
grep -c median "$OUT/m8-edge-ab.txt"
