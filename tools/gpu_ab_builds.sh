#!/usr/bin/env bash
# Compare kernel builds (e.g. main vs a branch) on one GPU, in one device call: the extension is
# built once per kernel build, then `flygemm bench` runs alternately with each build (A B A B ...)
# so clock and temperature drift hit both alike. Two builds cannot share a process (both register
# torch.ops.flygemm), so this alternates processes; each row's ratio is to torch in the same process.
#   FLYGEMM_AB_BUILDS   space-separated names; "tree" is build/kernels/<arch> with the tree's configs,
#                       any other name is build/variants/<name>/{sm_90a,configs} (carry them)
#   FLYGEMM_AB_ARGS     arguments for `flygemm bench` (e.g. --no-check --ops ... --shapes ...)
#   FLYGEMM_AB_ROUNDS   bench runs per build (default 2)
#   FLYGEMM_AB_BEFORE   optional command run once per build (before the benches) with that build on
#                       PYTHONPATH and $AB_NAME set, e.g. tests or a sanitizer sweep
# Writes $OUT/compare.txt and $OUT/ab.tgz (every JSON and log: few files, so that all of them come
# back from the device machine); prints tools/compare_bench.py's table last.
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-/tmp/flygemm_ab}
mkdir -p "$FINAL"
OUT=$(mktemp -d)  # logs gather here, packed into $FINAL/ab.tgz at the end
ARCH=sm_90a
WORK=$(mktemp -d)
export FLYGEMM_ARCHS=$ARCH
source tools/device_env.sh
PY=${PYTHON:-python3}
BUILDS=${FLYGEMM_AB_BUILDS:?names of the builds to compare}
cp -r build/kernels/$ARCH "$WORK/tree-kernels" && cp -r kernels/configs "$WORK/tree-configs"

install_build() {  # put build $1's kernels and configs where setup.py reads them
  local src_k=$WORK/tree-kernels src_c=$WORK/tree-configs
  if [ "$1" != tree ]; then src_k=build/variants/$1/$ARCH src_c=build/variants/$1/configs; fi
  rm -rf build/kernels/$ARCH kernels/configs && cp -r "$src_k" build/kernels/$ARCH && cp -r "$src_c" kernels/configs
}

for name in $BUILDS; do
  install_build "$name"
  t0=$(date +%s)
  if ! $PY setup.py build_ext --inplace > "$OUT/build-$name.log" 2>&1; then
    tail -n 40 "$OUT/build-$name.log"; echo "BUILD FAILED: $name"; install_build tree; exit 1
  fi
  mkdir -p "$WORK/py-$name" && cp -r python/flygemm "$WORK/py-$name/"
  echo "built $name in $(( $(date +%s) - t0 )) s"
done
install_build tree

if [ -n "${FLYGEMM_AB_BEFORE:-}" ]; then
  for name in $BUILDS; do
    AB_NAME=$name PYTHONPATH=$WORK/py-$name bash -c "$FLYGEMM_AB_BEFORE" > "$OUT/before-$name.log" 2>&1
    echo "=== before ($name): rc $?"; tail -n 25 "$OUT/before-$name.log"
  done
fi

for round in $(seq 1 "${FLYGEMM_AB_ROUNDS:-2}"); do
  for name in $BUILDS; do
    PYTHONPATH=$WORK/py-$name $PY -m flygemm bench ${FLYGEMM_AB_ARGS:-} \
      --json "$OUT/ab-$name-$round.json" > "$OUT/bench-$name-$round.log" 2>&1 || echo "bench $name $round: rc $?"
  done
done
args=()
for name in $BUILDS; do args+=("$name=$OUT/ab-$name-*.json"); done
PYTHONPATH=$PWD/python $PY tools/compare_bench.py "${args[@]}" | tee "$FINAL/compare.txt"
tar -czf "$FINAL/ab.tgz" -C "$OUT" .
