#!/usr/bin/env bash
# Fifty-fifth session (written after its device time ran out): the whole test suite on the GPU machine, CPU-side files
# included, to confirm the three host-side fixes made after the first such run (per-token scales on CUDA equal the
# CPU's, _C.so without libtorch.so / libtorch_python.so in DT_NEEDED so a linked C++ app starts, the MX oracle bound
# with fp32 accumulation error). About 300 s. Redirect stdout outside $OUT; the full log lands in $OUT/suite.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
echo "_C.so needs: $(readelf -d python/flygemm/_C.so | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/ > /tmp/suite.log 2>&1
cp /tmp/suite.log /tmp/build.log "$OUT/"
grep -E "^(FAILED|ERROR)" /tmp/suite.log | head -20
echo "suite: $(tail -n 1 /tmp/suite.log)"
