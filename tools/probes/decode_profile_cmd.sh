source tools/device_env.sh
python3 setup.py build_ext --inplace > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
export PYTHONPATH=$PWD/python
for spec in "gemm_a8w8 per_tensor gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n16.w8.bk4.sm90a:1" \
            "gemm_a8w8 per_tensor gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n16.sm90a:1" \
            "gemm_a16w16 - gemm_splitk_decode.a16w16.bf16.bf16.m8n16.w8.bk5.sm90a:1"; do
  set -- $spec
  timeout 60 python3 tools/profile_one.py --op $1 --variant $2 --shape 1x2048x7168 --kernel $3 --activities 2>&1 | grep -v Warn
done
FLYGEMM_PROFILE="gemm_a8w8:per_tensor:1x2048x7168:gemm_splitk_decode.a8w8.fp8_e4m3fn.bf16.m8n16.w8.bk4.sm90a:1:main_kernel gemm_a16w16:-:1x2048x7168:gemm_splitk_decode.a16w16.bf16.bf16.m8n16.w8.bk5.sm90a:1:main_kernel" timeout 300 bash tools/gpu_profile_source.sh
tar -czf $OUT/ncu.tgz -C $OUT . --exclude ncu.tgz 2>/dev/null; rm -f $OUT/ncu_src_*.csv
cat $OUT/ncu_src.txt | grep -v "^ *$" | head -120
