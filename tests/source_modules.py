"""Project source files imported by path (kernel families, tools, python/flygemm modules) without installing
or building anything: the CPU tests read them as the build does. Each call executes the file anew."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_source(rel_path, name=None):
    """The module at ROOT / rel_path, named `name` (default: its file name without .py)."""
    path = ROOT / rel_path
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_hopper_families():
    """The sm_90a Hopper-core families (gemm_a16w16, gemm_a8w8, gemm_a8w8_blockscale) from kernels/cuda, with that
    folder on sys.path for their `_hopper_gemm` import; returns (a16w16, a8w8, blockscale)."""
    import sys
    cuda_dir = str(ROOT / "kernels" / "cuda")
    if cuda_dir not in sys.path:
        sys.path.insert(0, cuda_dir)
    return tuple(load_source(f"kernels/cuda/{n}.py", n) for n in ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale"))
