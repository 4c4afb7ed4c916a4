# Sourced (from the repository root) by the tools/gpu_*.sh scripts on the GPU machine: the
# environment for building the extension against that machine's torch from prebuilt kernels in
# build/kernels/ (no DSLs, no network there).
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-$(nproc)} PYTHONPATH=$PWD/python
export FLYGEMM_SKIP_KERNEL_BUILD=1 FLYGEMM_ARCHS=${FLYGEMM_ARCHS:-sm_90a}
# Build with the system compiler: the Python there was built with /opt/gcc, whose link step pulls
# libstdc++ pieces in statically (libstdc++_nonshared); mixed with the system libstdc++ that torch
# loads, iostream calls in _C.so crashed (seen 2026-11-29: segfault in ostream::_M_insert<long>).
if [ -x /usr/bin/g++ ]; then
  export CC=/usr/bin/gcc CXX=/usr/bin/g++ LDSHARED="/usr/bin/g++ -pthread -shared"
fi
