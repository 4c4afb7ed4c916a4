#!/usr/bin/env bash
# Sixtieth session (branch exp/w3-60: e4 kernels with 3 / 4 warpgroups along K in the kernel list; 80 / 64 registers,
# so two CTAs per SM give 24 / 32 warps against the table kernel's 16): each candidate checked against the CPU oracle at
# split 1 / 2 (tools/sanitize_sweep.py without a sanitizer), then tools/ab.py cold at K = 7168 and with --warm-l2 at
# K = 3584 (table pick A against candidate B). Logs into $OUT; stdout outside $OUT.
FLYGEMM_CAND=e4-w3-60 FLYGEMM_CAND_MATCH=.w3.s,.w4.s FLYGEMM_CAND_SPLITS=1,2 exec bash "$(dirname "$0")/e4-split-60.sh"
