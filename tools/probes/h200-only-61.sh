#!/usr/bin/env bash
# Sixty-first session: on an H200 only (elsewhere a quick exit), tools/probes/any-61.sh (the full final of the tree with
# the fp8 M = 16 rows on m16n16.w7.bk4.rr.np). Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/probes/h200_only.sh
bash tools/probes/any-61.sh
