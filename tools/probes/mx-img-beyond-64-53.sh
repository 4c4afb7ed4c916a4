#!/usr/bin/env bash
# Fifty-third session: can the MX decode .img kernels serve M = 65..256 (several 64-token tiles) faster than the
# regrouping? First the forced kernels against the CPU oracle at M = 96 / 128 / 200 (guard rows, rel. Frobenius
# <= 1e-2), then tools/ab.py over tools/probes/mx-img-beyond-64-53.pairs. Redirect stdout outside $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvidia-smi --query-gpu=name --format=csv,noheader
source tools/device_env.sh
python3 setup.py build_ext --inplace > /tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; exit 1; }
python3 - <<'PY'
import os, torch, flygemm
from flygemm import bench
gen = torch.Generator(device="cuda").manual_seed(3)
for op, k in [("gemm_mxfp4", "gemm_splitk_decode.mxfp4.fp4_e2m1_x2.bf16.m64n64k128.s4.p1.img.sm90a:2"),
              ("gemm_mxfp8", "gemm_splitk_decode.mxfp8.fp8_e4m3fn.bf16.m64n64k128.s2.p1.img.sm90a:2")]:
    for M in (96, 128, 200):
        N, K = 640, 4096
        problem, _, _ = bench.make_problem(op, "-", M, N, K, torch.device("cuda"), gen)
        os.environ["FLYGEMM_FORCE_KERNEL"] = k
        try:
            out = getattr(flygemm, op)(*problem).float().cpu()
        except RuntimeError as e:
            print(op, M, "error:", str(e).splitlines()[0]); continue
        finally:
            os.environ.pop("FLYGEMM_FORCE_KERNEL", None)
        ref = getattr(torch.ops.flygemm, op)(*[t.cpu() if isinstance(t, torch.Tensor) else t for t in problem]).float()
        err = ((out - ref).norm() / ref.norm()).item()
        print(f"{op} M={M} forced {k.split('.bf16.')[1]}: rel err {err:.2e} {'OK' if err <= 1e-2 else 'FAIL'}")
PY
timeout 200 python3 tools/ab.py --pairs tools/probes/mx-img-beyond-64-53.pairs --rounds 3 > /tmp/ab.log 2>&1
cp /tmp/ab.log "$OUT/"; cat /tmp/ab.log | cut -c1-140
