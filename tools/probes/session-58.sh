#!/usr/bin/env bash
# The fifty-eighth session's device call: first the wgmma cost probe (tools/probes/wgmma_rate.py, ~20 s, no extension
# needed), then tools/probes/final-58.sh (on an H200 the full final; elsewhere tests, fuzz, memcheck, decode table),
# then, while FLYGEMM_S58_DEADLINE (default 585) seconds allow, Nsight Compute source-level stall sampling of the MXFP4
# M = 16 decode kernel (tools/gpu_profile_source.sh). Export the final's FLYGEMM_* settings first; stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
mkdir -p /tmp/s58
timeout 90 python3 tools/probes/wgmma_rate.py > /tmp/s58/wgmma_rate.txt 2>&1
echo "wgmma_rate rc $?"
cp /tmp/s58/wgmma_rate.txt "$OUT/"
bash tools/probes/final-58.sh > /tmp/s58/final.txt 2>&1
cp /tmp/s58/final.txt "$OUT/"
left=$(( ${FLYGEMM_S58_DEADLINE:-585} - (SECONDS - start) ))
echo "final done at $((SECONDS - start)) s; $left s left"
if [ "$left" -gt 75 ]; then
  source tools/device_env.sh
  FLYGEMM_PROFILE=${FLYGEMM_S58_PROFILE:-"gemm_mxfp4:-:16x16384x7168:gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16.m16n64k128.s4.p4.img.sm90a:1:main_kernel"} \
    OUT=/tmp/s58 timeout $((left - 10)) bash tools/gpu_profile_source.sh
  echo "profile rc $?"
  cp /tmp/s58/ncu_src.txt "$OUT/" 2>/dev/null
fi
cat /tmp/s58/wgmma_rate.txt
[ -f /tmp/s58/ncu_src.txt ] && grep -vE "^==(WARNING|PROF)==" /tmp/s58/ncu_src.txt | head -60
tail -n 100 /tmp/s58/final.txt
echo "session-58 probe took $((SECONDS - start)) s"
