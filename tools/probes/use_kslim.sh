# Sourced by the probe scripts (from the repository root): slim kernels carried as build/kslim (tools/slim_kernels.sh)
# become build/kernels/sm_90a, which setup.py links.
if [ -d build/kslim/sm_90a ]; then
  mkdir -p build/kernels && rm -rf build/kernels/sm_90a && mv build/kslim/sm_90a build/kernels/sm_90a
fi
