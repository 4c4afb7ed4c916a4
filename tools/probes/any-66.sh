#!/usr/bin/env bash
# Sixty-sixth session, whatever card comes: on an H200 the default checks and the issue-5 / row checks
# (tools/probes/h200-65.sh, bounded at $H65_END seconds), elsewhere tools/probes/h100-66.sh. Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) bash tools/probes/h200-65.sh ;;
  *) bash tools/probes/h100-66.sh ;;
esac
