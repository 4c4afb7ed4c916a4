#!/usr/bin/env bash
# Sixty-fourth session: one call, chosen by the card that came. On an H200 the sixty-third session's 90 moved rows by
# event time and the issue-5 decode table (tools/probes/ring-verify-63.sh); on an H100 the ring sweep of the MX decode
# rows (tools/probes/ring-sweep-63.sh with RS_OPS=gemm_mxfp8,gemm_mxfp4). Logs into $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in
  *H200*) bash tools/probes/ring-verify-63.sh ;;
  *) RS_OPS=gemm_mxfp8,gemm_mxfp4 RS_T=${RS_T:-52} bash tools/probes/ring-sweep-63.sh ;;
esac
