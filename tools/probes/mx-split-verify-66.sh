#!/usr/bin/env bash
# Sixty-sixth session, either card: the MXFP4 one-wave split (csrc/dispatch.cpp splits_within_one_wave) by event time
# on layers outside the sweep that chose it (tools/probes/mx-split-66.pairs: the old 192-CTA split pinned against the
# table, 2 rounds), then every decode GPU test (the new splits and the rows the sixty-sixth session reverted). Logs
# into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
DC_NAME=mx-split DC_PAIRS=tools/probes/mx-split-66.pairs DC_K="" DC_AB_T=${MV_AB_T:-150} DC_TEST_T=${MV_TEST_T:-90} \
  source tools/probes/default_check.sh
