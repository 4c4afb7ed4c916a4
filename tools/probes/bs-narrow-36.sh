#!/usr/bin/env bash
# Thirty-sixth session (reused in the thirty-seventh for the fp8 / bf16 80 / 112 tiles), one device call: the blockscale token tiles 80 / 96 / 112 (and 144 / 160 / 192) columns wide
# (a tile crossing a 128-row w_scale block). Builds the extension, runs the core-kernel GPU tests of those kernels (oracle with w_scale
# differing per 128-row block, ragged edges, cluster partners past the edge), then the head-start A/B of each new
# tile against the table's pick on the blockscale LLM-set layers (event time).
#   FLYGEMM_BN_TESTS=0  skip the tests;  FLYGEMM_BN_FILES  test files;  FLYGEMM_BN_K  their pytest -k expression;  FLYGEMM_BN_PAIRS  pairs files
#   (default: M = 128, 1024, 4096; tools/tune_specs/ab-36-bs-wide.pairs: the 144 / 160 / 192-wide tiles);
#   FLYGEMM_BN_AB_T  time limit per pairs file (s);  FLYGEMM_BN_ROUNDS  A/B rounds (default 2);  FLYGEMM_BN_AB_ARGS  more
#   tools/ab.py arguments (e.g. --fresh)
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device_env.sh
OUT=${OUT:-/tmp}
python3 setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
if [ "${FLYGEMM_BN_TESTS:-1}" != 0 ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider ${FLYGEMM_BN_FILES:-tests/test_gpu_cuda_kernels.py tests/test_blockscale_tiles.py} \
    -k "${FLYGEMM_BN_K:-x80x128 or x96x128 or x112x128 or blockscale_tiles}" > "$OUT/tests.log" 2>&1
  echo "tests rc $?: $(tail -1 "$OUT/tests.log")"
  grep -E "^FAILED|Error" "$OUT/tests.log" | head -20
fi
for pairs in ${FLYGEMM_BN_PAIRS:-tools/tune_specs/ab-36-bs-narrow-m128.pairs tools/tune_specs/ab-36-bs-narrow-m1024.pairs tools/tune_specs/ab-36-bs-narrow-m4096.pairs}; do
  timeout "${FLYGEMM_BN_AB_T:-150}" python3 tools/ab.py --pairs "$pairs" --rounds "${FLYGEMM_BN_ROUNDS:-2}" ${FLYGEMM_BN_AB_ARGS:-} 2>&1 | grep -v -i warn \
    > "$OUT/$(basename "$pairs" .pairs).txt"
done
# short table last: M N K, A (table) us, B us, B / A, B's tile
for f in "$OUT"/ab-*.txt; do
  python3 - "$f" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"\S+\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s.*B = \S+?\.bf16\.(\S+)\.sm90a", line)
    if m:
        M, N, K, a, b, tile = m.groups()
        print(f"{M:>6} {N:>6} {K:>6} {a:>9} {b:>9} {float(b) / float(a):6.3f} {tile}")
PY
done
