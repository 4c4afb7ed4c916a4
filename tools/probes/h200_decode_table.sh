# Sourced by the probe scripts after build_ext.sh (needs $name, $start): on an H200 only, the issue-5 decode table
# (kernel time, copy bandwidth in the same run) within the call's 590 s, log in $OUT/decode.log; elsewhere nothing.
case "$name" in *H200*)
  timeout $((590 - SECONDS + start)) python3 -m flygemm bench --no-check --kernel-time \
    --ops gemm_a16w16,gemm_a8w8,gemm_a8w8_blockscale,gemm_mxfp8,gemm_mxfp4 \
    --shapes 1x2048x7168,16x2048x7168,1x16384x7168,16x16384x7168 > "$OUT/decode.log" 2>&1
  echo "bench rc $? at $((SECONDS - start)) s"
  sed -n '/^kernel time/,/^$/p' "$OUT/decode.log" | cut -c1-150 ;;
esac
