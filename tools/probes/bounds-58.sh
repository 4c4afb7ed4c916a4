#!/usr/bin/env bash
# Fifty-eighth session: time the MXFP4 M = 16 .img kernel against its wrong-result bound twins (Config.bound: no weight
# decode, half the wgmmas, no image copies, and combinations; tools/probes/bounds-58.pairs). The twins are not in the
# product's kernel list; on a scratch branch first append them and build:
#   grep -v "^#" tools/probes/bounds-58.kernels.csv >> kernels/configs/sm_90a.kernels.csv
#   .venv/bin/python tools/build_kernels.py --arch sm_90a      # carry build/kernels/sm_90a
# Builds the extension, then (FLYGEMM_W58_TESTS: a pytest selection run first, e.g. candidates' oracle tests)
# tools/ab.py over FLYGEMM_W58_PAIRS (default the bounds' pairs; logs straight into $OUT). Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
source tools/probes/build_ext.sh
if [ -n "${FLYGEMM_W58_TESTS:-}" ]; then
  eval "tests=($FLYGEMM_W58_TESTS)"
  timeout ${FLYGEMM_W58_TEST_T:-170} python3 -m pytest -q -p no:cacheprovider "${tests[@]}" > "$OUT/w58-tests.log" 2>&1
  echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/w58-tests.log")"
  grep -E "^(FAILED|ERROR)" "$OUT/w58-tests.log" | head -10
fi
timeout ${FLYGEMM_W58_AB_T:-200} python3 tools/ab.py --pairs "${FLYGEMM_W58_PAIRS:-tools/probes/bounds-58.pairs}" --rounds ${FLYGEMM_W58_ROUNDS:-3} > "$OUT/w58-ab.txt" 2>&1
echo "ab rc $? at $((SECONDS - start)) s"
tail -n 45 "$OUT/w58-ab.txt"
