#!/usr/bin/env bash
# MX decode-sweep rows in one device call (sixteenth session): MXFP8 at M = 1..8 and both MX ops at M = 16..64 over
# the decode sweep's layers (tools/tune_specs/mx_decode_sweep_*.txt), kernel time, a few candidate kernels each
# (FLYGEMM_MXS_* override them), every step under its own time limit so that a slow step keeps the others'
# results; logs and winning rows in $OUT (tune-*.log: every candidate with its oracle error; tuned.csv).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/flygemm_mx_sweep}
mkdir -p "$OUT"
source tools/device_env.sh
PY=${PYTHON:-python3}
$PY setup.py build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
rm -f "$OUT/build.log"
step() {  # name seconds op shapes-file match
  timeout "$2" $PY tools/tune.py --op "$3" --shapes "$(cat "tools/tune_specs/$4")" --split-k "${FLYGEMM_MXS_SPLITS:-1,2}" \
    --kernel-time --match "$5" --csv "$OUT/tuned.csv" --append > "$OUT/tune-$1.log" 2>&1
  echo "$1 rc $?"
}
step mxfp8-m1-8 "${FLYGEMM_MXS_T1:-200}" gemm_mxfp8 mx_decode_sweep_m1-8.txt "${FLYGEMM_MXS_M1:-m8n64.wg,m16n64.wg,w8k128.bk6,w7.bk3}"
step mxfp8-m16-64 "${FLYGEMM_MXS_T2:-170}" gemm_mxfp8 mx_decode_sweep_m16-64.txt "${FLYGEMM_MXS_M2:-m16n64.wg,m8n64.wg,w7.bk3,dequant}"
step mxfp4-m16-64 "${FLYGEMM_MXS_T3:-150}" gemm_mxfp4 mx_decode_sweep_m16-64.txt "${FLYGEMM_MXS_M3:-m16n64,m8n64.s3.p2.wgn,dequant}"
# winners per shape (the starred lines)
grep -h "\*" "$OUT"/tune-*.log | awk '{print $1, $2, $3, $4, $5, $6}'
