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
