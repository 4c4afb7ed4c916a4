#!/usr/bin/env bash
# Fifty-eighth session (measurement; on a scratch branch first: grep -v "^#" tools/probes/warps-58.kernels.csv >>
# kernels/configs/sm_90a.kernels.csv, then build): build the extension with the MXFP4 .img candidates that run 3 / 4
# warpgroups along K per CTA, run the MXFP4 decode oracle tests over every MXFP4 decode kernel (candidates included),
# then tools/ab.py over tools/probes/warps-58.pairs. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
echo "built at $((SECONDS - start)) s"
timeout ${FLYGEMM_W58_TEST_T:-170} python3 -m pytest -q -p no:cacheprovider tests/test_gpu_cuda_decode.py -k mxfp4 > /tmp/w58-tests.log 2>&1
echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 /tmp/w58-tests.log)"
grep -E "^(FAILED|ERROR)|Error" /tmp/w58-tests.log | head -10
timeout ${FLYGEMM_W58_AB_T:-200} python3 tools/ab.py --pairs tools/probes/warps-58.pairs --rounds ${FLYGEMM_W58_ROUNDS:-3} > /tmp/w58-ab.txt 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
cp /tmp/w58-tests.log /tmp/w58-ab.txt "$OUT/"
tail -n 45 /tmp/w58-ab.txt
