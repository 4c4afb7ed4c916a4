"""The GPU-only C++ (csrc/device_ops.cpp, compiled only against a CUDA build of torch) must at least
compile here, where torch is a CPU build: a syntax and type check against torch's own headers and the
local CUDA toolkit headers, so a GPU-path error shows in CI instead of on the GPU machine.

torch's CUDA headers include the cuBLAS / cuSPARSE / cuSOLVER headers, which a toolkit without those
libraries lacks; the test supplies minimal declarations of the handle and status types they name."""
import pathlib
import shutil
import subprocess

import pytest
from torch.utils import cpp_extension

ROOT = pathlib.Path(__file__).resolve().parents[1]
CUDA_INCLUDE = pathlib.Path("/usr/local/cuda/include")

STUBS = {
    "cusparse.h": "typedef struct cusparseContext* cusparseHandle_t; typedef int cusparseStatus_t;\n",
    "cublas_v2.h": "typedef struct cublasContext* cublasHandle_t; typedef int cublasStatus_t;\n",
    "cublasLt.h": "typedef struct cublasLtContext* cublasLtHandle_t;\n",
    "cusolverDn.h": "typedef struct cusolverDnContext* cusolverDnHandle_t; typedef int cusolverStatus_t;\n",
    "cusolver_common.h": "",
    "c10/cuda/impl/cuda_cmake_macros.h": "",
}


@pytest.mark.skipif(not (CUDA_INCLUDE / "cuda_runtime_api.h").is_file() or shutil.which("g++") is None,
                    reason="needs g++ and the CUDA toolkit headers")
@pytest.mark.parametrize("source", ["device_ops.cpp"])
def test_gpu_source_compiles(tmp_path, source):
    for name, text in STUBS.items():
        if not (CUDA_INCLUDE / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
    includes = [f"-I{p}" for p in cpp_extension.include_paths()]
    cmd = ["g++", "-std=c++20", "-fsyntax-only", "-DFLYGEMM_WITH_GPU", *includes, f"-I{CUDA_INCLUDE}",
           f"-I{tmp_path}", f"-I{ROOT / 'csrc'}", str(ROOT / "csrc" / source)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    errors = [line for line in res.stderr.splitlines() if "error" in line]
    assert res.returncode == 0, "\n".join(errors[:20]) or res.stderr[-2000:]
