#!/usr/bin/env python3
"""Ahead-of-time build of every kernel specialization listed in kernels/configs/<arch>.kernels.csv.

For each arch it writes build/kernels/<arch>/:
  <kernel name>/...      the family's build outputs (objects, device binaries, headers)
  registry.cpp           the KernelRecord table + adapters + dispatch rows (from <arch>.csv)
  manifest.json          objects, static libraries and linker flags for setup.py

Each kernel is compiled in its own subprocess (FlyDSL fixes its target per process through the
environment variable ARCH), at most --jobs at a time, with a progress bar. A kernel whose inputs
(family source, spec row, DSL version) hash the same as last time is not rebuilt.

Arch selection: --arch or env FLYGEMM_ARCHS (comma-separated; default: all three).
"""
from __future__ import annotations

import argparse
import concurrent.futures as futures
import csv
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "kernels" / "configs"
DEFAULT_OUT = ROOT / "build" / "kernels"
ALL_ARCHS = ("sm_90a", "gfx942", "gfx950")
VENDOR = {"sm_90a": "cuda", "gfx942": "rocm", "gfx950": "rocm"}
DSL_PACKAGE = {"cuda": "nvidia-cutlass-dsl", "rocm": "flydsl"}

DTYPE_CODES = {
    "none": "none", "bf16": "bf16", "fp16": "fp16", "fp32": "fp32",
    "fp8_e4m3fn": "fp8_e4m3fn", "fp8_e4m3fnuz": "fp8_e4m3fnuz", "int8": "int8",
    "fp4_e2m1_x2": "fp4_e2m1_x2", "e8m0": "e8m0",
}
KERNEL_COLUMNS = ("name", "family", "op", "in_dtype", "out_dtype", "w_layout",
                  "tile_m", "tile_n", "tile_k", "params")
DISPATCH_COLUMNS = ("arch", "op", "in_dtype", "out_dtype", "m_max", "N", "K", "kernel", "split_k")
# Kernel params the dispatch reads and the family never sees: they go into the registry's metadata (under "dispatch")
# and not into the build hash, so measuring them again rebuilds nothing. area_speed: the tile's throughput per unit of
# tile area, per mille of its op's reference tile (csrc/dispatch.cpp cheapest_waves_row; 1000 when absent). by_cost=1:
# in a default list the kernel's row is weighed by that cost only, never picked by first fit (cheaper_by_cost_row).
DISPATCH_PARAMS = {"area_speed": (1, 4000), "by_cost": (1, 1)}


# ----------------------------------------------------------------------------- configs
def _read_csv(path: pathlib.Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    return list(csv.DictReader(lines))


def parse_params(text: str) -> dict:
    params = {}
    for item in filter(None, (p.strip() for p in (text or "").split(";"))):
        key, _, value = item.partition("=")
        value = value.strip()
        params[key.strip()] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return params


def split_dispatch_params(arch: str, name: str, params: dict) -> dict:
    """Removes the dispatch-only params (DISPATCH_PARAMS) from a kernel's params and returns them, range-checked."""
    out = {}
    for key, (lo, hi) in DISPATCH_PARAMS.items():
        if key not in params:
            continue
        value = params.pop(key)
        if not isinstance(value, int) or not lo <= value <= hi:
            raise SystemExit(f"{arch}.kernels.csv: kernel {name}: {key} must be an integer in {lo}..{hi}, "
                             f"not {value!r}")
        out[key] = value
    return out


def ident_of(name: str) -> str:
    return "k_" + re.sub(r"[^0-9A-Za-z_]", "_", name)


TWIN_COLUMNS = ("op", "in_dtype", "out_dtype", "twin_in_dtype", "twin_out_dtype")
# The optional column "rows": which rows a twin copies, "all" (default) or "default" (the N = K = 0 default rows
# only, and so only the kernels those name: fewer kernels to build; exact-shape calls take the default rows).
TWIN_ROWS = ("all", "default")


def read_twins(arch: str, configs: pathlib.Path | None = None) -> dict:
    """kernels/configs/<arch>.twins.csv: {(op, in_dtype, out_dtype): [(twin_in_dtype, twin_out_dtype, rows), ...]}."""
    twins = {}
    for row in _read_csv((configs or CONFIGS) / f"{arch}.twins.csv"):
        missing = [c for c in TWIN_COLUMNS if c not in row]
        if missing:
            raise SystemExit(f"{arch}.twins.csv: missing columns {missing}")
        for k in TWIN_COLUMNS[1:]:
            if row[k] not in DTYPE_CODES:
                raise SystemExit(f"{arch}.twins.csv: unknown dtype {row[k]!r}")
        rows = (row.get("rows") or "all").strip()
        if rows not in TWIN_ROWS:
            raise SystemExit(f"{arch}.twins.csv: rows must be one of {TWIN_ROWS}, got {rows!r}")
        twins.setdefault((row["op"], row["in_dtype"], row["out_dtype"]), []).append(
            (row["twin_in_dtype"], row["twin_out_dtype"], rows))
    return twins


def twin_copies_row(entry: tuple, row: dict | None) -> bool:
    """Whether a twin (an entry of read_twins; a (twin_in, twin_out) pair means rows "all") copies a dispatch row
    (None: whether it copies any)."""
    rows = entry[2] if len(entry) > 2 else "all"
    return row is None or rows == "all" or (int(row["N"] or 0) == 0 and int(row["K"] or 0) == 0)


def twin_kernel_name(name: str, dtypes: tuple[str, str], twin: tuple[str, str]) -> str:
    """The twin's name: the kernel name's ".<in>.<out>." part with the twin's dtypes."""
    old, new = ".{}.{}.".format(*dtypes), ".{}.{}.".format(*twin)
    if old not in name:
        raise SystemExit(f"kernel {name}: a twinned kernel's name must contain {old!r} (its dtypes)")
    return name.replace(old, new, 1)


def kernel_twins(twins: dict, op: str, in_dtype: str, out_dtype: str, name: str,
                 row: dict | None = None) -> list[tuple[str, str, str]]:
    """(twin_in_dtype, twin_out_dtype, twin name) of each twin of one kernel (<arch>.twins.csv), of those that copy
    `row` when one is given."""
    return [(e[0], e[1], twin_kernel_name(name, (in_dtype, out_dtype), (e[0], e[1])))
            for e in twins.get((op, in_dtype, out_dtype), []) if twin_copies_row(e, row)]


def read_kernel_specs(arch: str) -> list[dict]:
    """Every kernel of <arch>.kernels.csv, then the dtype twins (<arch>.twins.csv) that it does not list itself."""
    specs = []
    for row in _read_csv(CONFIGS / f"{arch}.kernels.csv"):
        missing = [c for c in KERNEL_COLUMNS if c not in row]
        if missing:
            raise SystemExit(f"{arch}.kernels.csv: missing columns {missing}")
        spec = {k: (row[k] or "").strip() for k in KERNEL_COLUMNS}
        for k in ("tile_m", "tile_n", "tile_k"):
            spec[k] = int(spec[k])
        spec["params"] = parse_params(spec["params"])
        dispatch = split_dispatch_params(arch, spec["name"], spec["params"])
        if dispatch:  # only when present: the hash of every other spec stays as it was
            spec["dispatch"] = dispatch
        spec["arch"] = arch
        spec["ident"] = ident_of(spec["name"])
        for k in ("in_dtype", "out_dtype"):
            if spec[k] not in DTYPE_CODES:
                raise SystemExit(f"{arch}.kernels.csv: kernel {spec['name']}: unknown {k} {spec[k]!r}")
        specs.append(spec)
    names = [s["name"] for s in specs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"{arch}.kernels.csv: duplicate kernel names {sorted(dup)}")
    listed, twins = set(names), read_twins(arch)
    naming = {}   # only what rows name is twinned, and only for the twins that copy such a row
    for r in _read_csv(CONFIGS / f"{arch}.csv"):
        naming.setdefault(r["kernel"], []).append(r)
    for spec in list(specs):
        found = [t for r in naming.get(spec["name"], [])
                 for t in kernel_twins(twins, spec["op"], spec["in_dtype"], spec["out_dtype"], spec["name"], row=r)]
        for ti, to, name in dict.fromkeys(found):
            if name not in listed:
                listed.add(name)
                specs.append(dict(spec, in_dtype=ti, out_dtype=to, name=name, ident=ident_of(name), twin_of=spec["name"]))
    return specs


# A row whose op ends in this answers only calls with per-token / per-channel scales (csrc/dispatch.h
# kRowScalesSuffix), before the op's own rows; exact (N, K) rows of the ops with such scales only.
ROW_SCALES_SUFFIX = ".row_scales"
OPS_WITH_ROW_SCALES = ("gemm_a8w8",)


# "<op>@<part>": an exact row measured on one part of the arch, answering only on a device whose name has <part> as a
# word (csrc/dispatch.h kPartSeparator; "gemm_a16w16@H100" on an "NVIDIA H100 80GB HBM3"), ahead of the shared rows.
PART_SEPARATOR = "@"


def split_part(op: str) -> tuple[str, str]:
    """'gemm_a8w8.row_scales@H100' -> ('gemm_a8w8.row_scales', 'H100'); no part: (op, '')."""
    base, _, part = op.partition(PART_SEPARATOR)
    return base, part


def check_part(arch: str, row: dict) -> None:
    base, part = split_part(row["op"])
    if PART_SEPARATOR not in row["op"]:
        return
    if not part.isalnum() or not part.isascii():
        raise SystemExit(f"{arch}.csv: {row['op']!r}: the part after {PART_SEPARATOR!r} must be one word of letters "
                         f"and digits, as in a device name (H100)")
    if not int(row["N"] or 0) or not int(row["K"] or 0):
        raise SystemExit(f"{arch}.csv: {row['op']!r} row at m_max {row['m_max']} needs an exact N and K "
                         f"(default rows are shared by every part)")


def check_row_scaling(arch: str, row: dict) -> None:
    op = split_part(row["op"])[0]
    if not op.endswith(ROW_SCALES_SUFFIX):
        return
    op = op[:-len(ROW_SCALES_SUFFIX)]
    if op not in OPS_WITH_ROW_SCALES:
        raise SystemExit(f"{arch}.csv: {row['op']!r}: only {', '.join(OPS_WITH_ROW_SCALES)} rows may be "
                         f"restricted to calls with row scales")
    if not int(row["N"] or 0) or not int(row["K"] or 0):
        raise SystemExit(f"{arch}.csv: {row['op']!r} row at m_max {row['m_max']} needs an exact N and K "
                         f"(default rows are not split by scaling)")


def row_base_op(op: str) -> str:
    """The op of a dispatch row's op field ('gemm_a8w8.row_scales@H100' -> 'gemm_a8w8')."""
    base = split_part(op)[0]
    return base[:-len(ROW_SCALES_SUFFIX)] if base.endswith(ROW_SCALES_SUFFIX) else base


def twin_rows(arch: str, rows: list[dict], twins: dict | None = None) -> list[dict]:
    """The rows that <arch>.twins.csv (or `twins`, as read_twins returns) adds: each row of a twinned (op, in, out),
    again for each twin dtype pair with the twin kernel, except where `rows` have rows of (op, twin_in_dtype,
    twin_out_dtype) themselves for the same bucket and shape (m_max, N, K): measured rows of the twin's own dtypes
    replace the copies there (the fp32-output rows past M = 4096), and only there."""
    twins = read_twins(arch) if twins is None else twins
    own = {(row_base_op(r["op"]), r["in_dtype"], r["out_dtype"], r["m_max"], r["N"], r["K"]) for r in rows}
    out = []
    for r in rows:
        base = row_base_op(r["op"])
        for ti, to, name in kernel_twins(twins, base, r["in_dtype"], r["out_dtype"], r["kernel"], row=r):
            if (base, ti, to, r["m_max"], r["N"], r["K"]) not in own:
                out.append(dict(r, in_dtype=ti, out_dtype=to, kernel=name))
    return out


def read_dispatch_rows(arch: str, kernel_names: set[str]) -> list[dict]:
    """Every row of <arch>.csv, then the dtype twins' rows (twin_rows)."""
    rows = []
    for row in _read_csv(CONFIGS / f"{arch}.csv"):
        missing = [c for c in DISPATCH_COLUMNS if c not in row]
        if missing:
            raise SystemExit(f"{arch}.csv: missing columns {missing}")
        if row["arch"] != arch:
            raise SystemExit(f"{arch}.csv: row for arch {row['arch']!r}")
        if row["kernel"] not in kernel_names:
            raise SystemExit(f"{arch}.csv: kernel {row['kernel']!r} is not in {arch}.kernels.csv")
        check_part(arch, row)
        check_row_scaling(arch, row)
        rows.append({
            "op": row["op"], "in_dtype": row["in_dtype"], "out_dtype": row["out_dtype"],
            "m_max": int(row["m_max"]), "N": int(row["N"] or 0), "K": int(row["K"] or 0),
            "kernel": row["kernel"], "split_k": int(row["split_k"]) if str(row["split_k"]).strip() else 1,
        })
    extra = twin_rows(arch, rows)
    missing = sorted({r["kernel"] for r in extra} - kernel_names)
    if missing:
        raise SystemExit(f"{arch}.twins.csv: twin kernels not built: {missing[:5]}")
    return rows + extra


# ----------------------------------------------------------------------------- hashing / cache
def family_source(arch: str, family: str) -> pathlib.Path:
    path = ROOT / "kernels" / VENDOR[arch] / f"{family}.py"
    if not path.exists():
        raise SystemExit(f"kernel family {family!r} for {arch} not found: {path}")
    return path


def dsl_version(arch: str) -> str:
    try:
        return importlib.metadata.version(DSL_PACKAGE[VENDOR[arch]])
    except importlib.metadata.PackageNotFoundError:
        return "missing"


_LOCAL_IMPORT = re.compile(r"^\s*(?:import|from)\s+(\w+)", re.M)


def local_helpers(src: pathlib.Path) -> list[pathlib.Path]:
    """The modules next to a family file that it imports, directly or through another one: the
    shared `_*.py` helpers and sibling families (kernels/rocm/gemm_a8w8_blockscale.py imports
    gemm_a8w8), so editing one rebuilds only the families that use it."""
    found, todo = {}, [src]
    while todo:
        for name in _LOCAL_IMPORT.findall(todo.pop().read_text()):
            path = src.parent / f"{name}.py"
            if path.is_file() and path != src and path not in found:
                found[path] = True
                todo.append(path)
    return sorted(found)


def spec_hash(spec: dict) -> str:
    h = hashlib.sha256()
    src = family_source(spec["arch"], spec["family"])
    h.update(src.read_bytes())
    for helper in local_helpers(src):  # the local modules it imports count too
        h.update(helper.read_bytes())
    h.update(json.dumps({k: v for k, v in spec.items() if k != "dispatch"}, sort_keys=True).encode())
    h.update(dsl_version(spec["arch"]).encode())
    h.update((ROOT / "csrc" / "launch.h").read_bytes())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- one kernel
def build_one(spec: dict, out_dir: pathlib.Path) -> dict:
    """Runs in a fresh subprocess: import the family module and call its build()."""
    src = family_source(spec["arch"], spec["family"])
    sys.path.insert(0, str(src.parent))
    mod_spec = importlib.util.spec_from_file_location(f"flygemm_family_{spec['family']}", src)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    result = module.build(spec, out_dir)
    for key in ("objects", "adapter_cpp"):
        if key not in result:
            raise RuntimeError(f"{src.name}: build() result lacks {key!r}")
    for rel in list(result["objects"]) + list(result.get("link_libs", [])):
        if not (out_dir / rel).exists():
            raise RuntimeError(f"{src.name}: build() listed {rel} but it was not written")
    return result


def _child_main(spec_json: str, out_dir: str) -> int:
    spec = json.loads(spec_json)
    out = pathlib.Path(out_dir)
    t0 = time.time()
    result = build_one(spec, out)
    result["build_seconds"] = round(time.time() - t0, 2)
    (out / "result.json").write_text(json.dumps(result, indent=1, default=str))
    return 0


def _child_env(arch: str) -> dict:
    env = dict(os.environ)
    env["ARCH"] = arch
    env["PYTHONUNBUFFERED"] = "1"
    if VENDOR[arch] == "rocm":
        sys.path.insert(0, str(ROOT / "tools"))
        import rocm_toolchain  # noqa: E402  (tools/rocm_toolchain.py)
        env.update(rocm_toolchain.toolchain_env())
    return env


def run_kernel_job(spec: dict, arch_dir: pathlib.Path) -> tuple[dict, dict, bool, str]:
    """Build (or reuse) one kernel; returns (spec, result, cached, log)."""
    digest = spec_hash(spec)
    kdir = arch_dir / spec["name"]
    stamp = kdir / "hash.txt"
    result_file = kdir / "result.json"
    if stamp.exists() and stamp.read_text() == digest and result_file.exists():
        return spec, json.loads(result_file.read_text()), True, ""
    if kdir.exists():
        shutil.rmtree(kdir)
    kdir.mkdir(parents=True)
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", json.dumps(spec), str(kdir)]
    proc = subprocess.run(cmd, env=_child_env(spec["arch"]), cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (kdir / "build.log").write_text(proc.stdout)
    if proc.returncode != 0:
        raise RuntimeError(f"building {spec['arch']}/{spec['name']} failed (log: {kdir / 'build.log'}):\n"
                           + proc.stdout[-4000:])
    stamp.write_text(digest)
    return spec, json.loads(result_file.read_text()), False, proc.stdout


# ----------------------------------------------------------------------------- registry
def _cstr(text: str) -> str:
    return json.dumps(text)  # JSON string escaping is valid C string escaping for our content


def write_registry(arch: str, arch_dir: pathlib.Path, built: list[tuple[dict, dict]], rows: list[dict]) -> None:
    sym = "flygemm_registry_" + arch
    out = [
        "// Generated by tools/build_kernels.py. Do not edit.",
        '#include "launch.h"',
        "",
    ]
    for spec, result in built:
        out.append(f"// ---- {spec['name']}")
        out.append(f"namespace {spec['ident']}_ns {{")
        out.append(result["adapter_cpp"])
        out.append(f"}}  // namespace {spec['ident']}_ns")
        out.append("")
    out.append("namespace {")
    out.append("const flygemm::KernelRecord kKernels[] = {")
    for spec, result in built:
        meta = dict(result.get("meta", {}))
        meta.update(params=spec["params"], dispatch=spec.get("dispatch", {}), build_seconds=result.get("build_seconds"))
        ns = spec["ident"] + "_ns"
        out.append(
            "  {" + ", ".join([
                _cstr(spec["name"]), _cstr(arch), _cstr(spec["family"]), _cstr(spec["op"]),
                f"flygemm::DType::{DTYPE_CODES[spec['in_dtype']]}",
                f"flygemm::DType::{DTYPE_CODES[spec['out_dtype']]}",
                f"flygemm::WeightLayout::{spec['w_layout'] or 'plain'}",
                str(spec["tile_m"]), str(spec["tile_n"]), str(spec["tile_k"]),
                str(int(result.get("max_split_k", 1))),
                str(int(result.get("requires_k_multiple", 1))),
                str(int(result.get("requires_n_multiple", 1))),
                _cstr(json.dumps(meta, sort_keys=True, default=str)),
                f"&{ns}::{spec['ident']}_load", f"&{ns}::{spec['ident']}_launch",
            ] + ([f"&{ns}::{spec['ident']}_scratch_bytes"] if result.get("scratch_fn") else [])) + "},"
        )
    if not built:
        out.append("  {}")  # zero-length arrays are not C++
    out.append("};")
    out.append("const flygemm::DispatchRow kRows[] = {")
    for r in rows:
        out.append(
            "  {" + ", ".join([
                _cstr(arch), _cstr(r["op"]), f"flygemm::DType::{r['in_dtype']}",
                f"flygemm::DType::{r['out_dtype']}", f"{r['m_max']}LL", f"{r['N']}LL", f"{r['K']}LL",
                _cstr(r["kernel"]), str(r["split_k"]),
            ]) + "},"
        )
    if not rows:
        out.append("  {}")
    out.append("};")
    out.append("}  // namespace")
    out.append(f'extern "C" const FlygemmRegistry {sym} = {{kKernels, {len(built)}, kRows, {len(rows)}}};')
    (arch_dir / "registry.cpp").write_text("\n".join(out) + "\n")


SHARED_LIBS_DIR = "_libs"


def hoist_link_libs(arch_dir: pathlib.Path, built: list[tuple[dict, dict]]) -> list[str]:
    """Moves the runtime libraries that kernel builds ship (one copy each: 52 KB x 272 for the
    CuTe DSL runtime) into arch_dir/_libs, keeping one copy per name; returns the kept paths
    relative to the output root. Two kernels shipping different bytes under one name (two DSL
    versions in one tree) is an error rather than a silent pick."""
    shared = arch_dir / SHARED_LIBS_DIR
    kept = []
    for spec, result in built:
        for lib in result.get("link_libs", []):
            copy, target = arch_dir / spec["name"] / lib, shared / os.path.basename(lib)
            if copy.exists():
                if target.exists() and target.read_bytes() != copy.read_bytes():
                    raise SystemExit(f"{spec['name']}: {lib} differs from {target}; "
                                     "delete the arch folder and rebuild")
                shared.mkdir(exist_ok=True)
                os.replace(copy, target)
            elif not target.exists():
                raise SystemExit(f"{spec['name']}: {lib} is missing from {copy.parent} and {shared}; "
                                 "delete the arch folder and rebuild")
            rel = str(target.relative_to(arch_dir.parent))
            if rel not in kept:
                kept.append(rel)
    return kept


def write_manifest(arch: str, arch_dir: pathlib.Path, built: list[tuple[dict, dict]]) -> None:
    objects, flags = [], []
    libs = hoist_link_libs(arch_dir, built)
    for spec, result in built:
        kdir = arch_dir / spec["name"]
        objects += [str((kdir / o).relative_to(arch_dir.parent)) for o in result["objects"]]
        for flag in result.get("link_flags", []):
            if flag not in flags:
                flags.append(flag)
    manifest = {
        "arch": arch, "vendor": VENDOR[arch], "registry_symbol": "flygemm_registry_" + arch,
        # Paths are relative to the output root (build/kernels), so the tree can be copied.
        "registry": str((arch_dir / "registry.cpp").relative_to(arch_dir.parent)),
        "include_dirs": sorted({str((arch_dir / s["name"]).relative_to(arch_dir.parent)) for s, _ in built}),
        "objects": objects, "link_libs": libs, "link_flags": flags,
        "kernels": [s["name"] for s, _ in built],
        "dsl_version": dsl_version(arch),
        # setup.py refuses to link this tree once either table changed (a stale registry.cpp would
        # silently keep the old dispatch rows)
        "configs_sha256": configs_fingerprint(arch),
    }
    (arch_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))


def configs_fingerprint(arch: str, configs: pathlib.Path | None = None) -> str:
    """sha256 over kernels/configs/<arch>.kernels.csv, <arch>.csv and <arch>.twins.csv: what registry.cpp was made
    from."""
    h = hashlib.sha256()
    for name in (f"{arch}.kernels.csv", f"{arch}.csv", f"{arch}.twins.csv"):
        path = (configs or CONFIGS) / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b""))
    return h.hexdigest()


# ----------------------------------------------------------------------------- driver
def selected_archs(cli: list[str] | None) -> list[str]:
    text = ",".join(cli) if cli else os.environ.get("FLYGEMM_ARCHS", ",".join(ALL_ARCHS))
    archs = [a.strip() for a in text.split(",") if a.strip()]
    bad = [a for a in archs if a not in ALL_ARCHS]
    if bad:
        raise SystemExit(f"unknown arch(s) {bad}; supported: {', '.join(ALL_ARCHS)}")
    return archs


def _progress(total: int):
    try:
        from tqdm import tqdm
        return tqdm(total=total, unit="kernel", desc="flygemm kernels", file=sys.stderr)
    except ImportError:  # plain counter when tqdm is absent
        class Plain:
            n = 0
            def update(self, k=1):
                self.n += k
                print(f"[{self.n}/{total}] kernels built", file=sys.stderr, flush=True)
            def set_postfix_str(self, s):
                pass
            def close(self):
                pass
        return Plain()


def prune_stale_kernels(arch_dir: pathlib.Path, names: set[str]) -> list[str]:
    """Removes the build directories (those with a hash stamp) of kernels that the config no longer
    lists, so that a build tree carried to the GPU machine holds only what the manifest names."""
    stale = sorted(d.name for d in arch_dir.iterdir()
                   if d.is_dir() and (d / "hash.txt").exists() and d.name not in names)
    for name in stale:
        shutil.rmtree(arch_dir / name)
    return stale


def build_archs(archs: list[str], out_root: pathlib.Path, jobs: int) -> dict:
    plan = {arch: read_kernel_specs(arch) for arch in archs}
    total = sum(len(v) for v in plan.values())
    results: dict[str, list[tuple[dict, dict]]] = {a: [] for a in archs}
    t0 = time.time()
    bar = _progress(total)
    n_cached = 0
    with futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        pending = []
        for arch, specs in plan.items():
            (out_root / arch).mkdir(parents=True, exist_ok=True)
            pending += [pool.submit(run_kernel_job, s, out_root / arch) for s in specs]
        errors = []
        for fut in futures.as_completed(pending):
            try:
                spec, result, cached, _ = fut.result()
            except Exception as exc:  # keep building the rest, report all failures at the end
                errors.append(str(exc))
                bar.update(1)
                continue
            n_cached += cached
            results[spec["arch"]].append((spec, result))
            bar.set_postfix_str(f"{spec['arch']}/{spec['name']}{' (cached)' if cached else ''}")
            bar.update(1)
    bar.close()
    if errors:
        raise SystemExit("kernel build failed:\n" + "\n\n".join(errors))
    for arch in archs:
        order = {s["name"]: i for i, s in enumerate(plan[arch])}
        built = sorted(results[arch], key=lambda sr: order[sr[0]["name"]])
        rows = read_dispatch_rows(arch, {s["name"] for s, _ in built})
        write_registry(arch, out_root / arch, built, rows)
        write_manifest(arch, out_root / arch, built)
        pruned = prune_stale_kernels(out_root / arch, set(order))
        if pruned:
            print(f"flygemm: removed {len(pruned)} stale {arch} kernel build(s) no longer in the config: "
                  + ", ".join(pruned), file=sys.stderr)
    summary = {"archs": archs, "kernels": total, "cached": n_cached, "seconds": round(time.time() - t0, 1)}
    print(f"flygemm: {total} kernels for {', '.join(archs)} ({n_cached} cached) in {summary['seconds']} s",
          file=sys.stderr)
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", action="append", help="arch to build (repeatable); default env FLYGEMM_ARCHS or all")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output root (default build/kernels)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("FLYGEMM_BUILD_JOBS", os.cpu_count() or 2)))
    ap.add_argument("--child", nargs=2, metavar=("SPEC_JSON", "OUT_DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child_main(*args.child)
    build_archs(selected_archs(args.arch), pathlib.Path(args.out).resolve(), args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
