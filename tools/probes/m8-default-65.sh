#!/usr/bin/env bash
# Sixty-fifth session, either card: the M <= 8 default lists that open with bulk-ring kernels at split 1, checked by
# event time on layers outside every tuning run (tools/probes/m8-default-65.pairs: the old default pick pinned against
# the table, 2 rounds), then every decode GPU test (the default lists of both buckets included). Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
DC_NAME=m8-default DC_PAIRS=tools/probes/m8-default-65.pairs DC_K="" DC_AB_T=${MD_AB_T:-200} DC_TEST_T=${MD_TEST_T:-200} \
  source tools/probes/default_check.sh
