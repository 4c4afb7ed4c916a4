#!/usr/bin/env bash
# Set up a development environment from a fresh clone: .venv with pinned dependencies, the AOT
# kernel build (progress bar; cached by content hash), and flygemm installed in editable mode.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
# The kernels first, in the foreground, so the progress bar shows (pip hides build output).
.venv/bin/python tools/build_kernels.py
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e .
.venv/bin/python -m flygemm info | head -n 8
