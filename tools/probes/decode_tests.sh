# Sourced by the probe scripts after build_ext.sh: the decode GPU tests of the -k selection $DT_K, log in $OUT/$DT_LOG;
# prints the summary line and any failures.
timeout ${DT_T:-200} python3 -m pytest -q -x -p no:cacheprovider tests/test_gpu_cuda_decode.py -k "$DT_K" \
  > "$OUT/$DT_LOG" 2>&1
echo "tests rc $? at $((SECONDS - start)) s: $(tail -n 1 "$OUT/$DT_LOG")"
grep -E "^(FAILED|ERROR)|Error|assert" "$OUT/$DT_LOG" | head -12
