# Sourced by the probe scripts (from the repository root, after `start=$SECONDS`): names the GPU (in $name), sets the
# device environment, builds the extension and puts python/ on PYTHONPATH, or prints the build log's tail and exits.
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
echo "built at $((SECONDS - start)) s"
export PYTHONPATH=$PWD/python
