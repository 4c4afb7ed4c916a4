#!/usr/bin/env bash
# Fifty-eighth session, after the GPU suite passed on an H100 in the same session: on an H200 the full final
# (tools/probes/final-58.sh: every GPU test, fuzz, memcheck, the issue-4 / 5 benches), on any other GPU nothing
# (a quick exit that spends no more device time). Export the final's FLYGEMM_* settings first; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "device: $name"
case "$name" in
  *H200*) bash tools/probes/final-58.sh ;;
  *) echo "not an H200: nothing run" ;;
esac
