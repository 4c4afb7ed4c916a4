#!/usr/bin/env bash
# Set up a development environment from a fresh clone (idempotent; a second run is incremental):
#   .venv with the pinned dependencies (requirements.txt),
#   the AOT kernel build for every arch (tools/build_kernels.py: progress bar, content-hash cache),
#   flygemm/_C.so compiled in place by setup.py (ninja: only changed sources recompile),
#   and the package put on .venv's path (the editable-install equivalent of `pip install -e .`).
# A regular install works too: `pip install --no-build-isolation .`
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
.venv/bin/python tools/build_kernels.py
echo "flygemm: compiling the C++ library (a few minutes the first time)" >&2
MAX_JOBS=${MAX_JOBS:-$(nproc)} FLYGEMM_SKIP_KERNEL_BUILD=1 .venv/bin/python setup.py -q build_ext --inplace \
  > build/setup_build_ext.log 2>&1 || { tail -n 40 build/setup_build_ext.log; exit 1; }
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/flygemm-dev.pth"
.venv/bin/python -m flygemm info
