#!/usr/bin/env bash
# Fifty-eighth session (measurement; on a scratch branch first: grep -v "^#" tools/probes/warps-58.kernels.csv >>
# kernels/configs/sm_90a.kernels.csv, then build): the MXFP4 .img candidates that run 3 / 4 warpgroups along K per CTA,
# through tools/probes/bounds-58.sh: the MXFP4 decode oracle tests over every MXFP4 decode kernel (candidates
# included), then tools/ab.py over tools/probes/warps-58.pairs. Redirect stdout outside $OUT.
FLYGEMM_W58_TESTS="tests/test_gpu_cuda_decode.py -k mxfp4" FLYGEMM_W58_PAIRS=tools/probes/warps-58.pairs \
  exec bash "$(dirname "$0")/bounds-58.sh"
