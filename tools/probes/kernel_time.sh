# Sourced by the probe scripts after build_ext.sh (needs $start): kt OP VARIANT SHAPES MATCH LOG runs tools/tune.py
# --kernel-time (3 passes) over the kernels whose names contain MATCH (comma-separated), log in $OUT/LOG.txt;
# KT_T seconds at most (default 120).
kt() {
  timeout ${KT_T:-120} python3 tools/tune.py --op $1 --variant $2 --kernel-time --passes 3 --shapes $3 --match "$4" \
    > "$OUT/$5.txt" 2>&1; echo "kernel time $5 rc $? at $((SECONDS - start)) s"
}
