#!/usr/bin/env bash
# Copies build/kernels/<arch> (default sm_90a) to build/kslim/<arch> without the files only this machine's tools read
# (each kernel's result.json and build.log): what the extension build on a device machine needs. Why: the device tool
# carries the working tree and the named build outputs together within 64 MiB, and from the seventy-second session on the
# tracked tree (~29 MB) plus the full sm_90a build (~39 MB) no longer fit. On the device, before the job:
#   mkdir -p build/kernels && rm -rf build/kernels/sm_90a && mv build/kslim/sm_90a build/kernels/sm_90a
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-sm_90a}
[ -f "build/kernels/$arch/manifest.json" ] || { echo "no build/kernels/$arch: run tools/build_kernels.py --arch $arch" >&2; exit 1; }
rm -rf "build/kslim/$arch" && mkdir -p build/kslim
cp -a "build/kernels/$arch" "build/kslim/$arch"
find "build/kslim/$arch" \( -name result.json -o -name build.log \) -delete
echo "build/kslim/$arch: $(du -sh --apparent-size "build/kslim/$arch" | cut -f1) (carry [\"build/kslim\"])"
