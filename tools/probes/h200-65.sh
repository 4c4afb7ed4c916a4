#!/usr/bin/env bash
# Sixty-fifth session, H200 only (exits at once on any other card): the M = 9..16 and M <= 8 bulk-ring default rows by
# event time (tools/probes/m16-default-65.sh, m8-default-65.sh: old default pinned against the table, 2 rounds, and the
# decode GPU tests), then tools/probes/h200-64.sh (the issue-5 decode table and the 110 rows of the sixty-third and
# sixty-fourth sessions) in what is left of $H65_END seconds. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
bash tools/probes/m16-default-65.sh
bash tools/probes/m8-default-65.sh
H64_END=$((${H65_END:-570} - SECONDS + start)) bash tools/probes/h200-64.sh
