#!/usr/bin/env bash
# Sixty-fifth session, either card: the M = 9..16 default lists that open with the bulk-ring kernels at split 1, checked
# by event time on layers outside every tuning run (tools/probes/m16-default-65.pairs: old default pinned against the
# table; at N <= 1024 against the ring kernel pinned, to place the rows' lower bound), 2 rounds; then the decode GPU
# tests of the default lists. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
DC_NAME=m16-default DC_PAIRS=tools/probes/m16-default-65.pairs DC_K="default or oracle" DC_AB_T=${MD_AB_T:-300} DC_TEST_T=${MD_TEST_T:-200} \
  source tools/probes/default_check.sh
