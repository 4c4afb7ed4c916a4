#!/usr/bin/env python3
"""Registers, spills and stack frame of sm_90a kernels, from ptxas itself, without a GPU or cuobjdump.

    python3 tools/ptxas_info.py gemm_a16w16.bf16.fp32.t128x128x64.pp.sm90a gemm_a16w16.bf16.bf16.t128x128x64.pp.sm90a

Each named kernel (as kernels/configs/sm_90a.kernels.csv and its dtype twins name it) is compiled once more, in its own
subprocess into a temporary directory, the way tools/build_kernels.py builds it, with the CuTe DSL's disk cache off
(CUTE_DSL_NO_CACHE) and ptxas remarks on (CUTE_DSL_COMPILER_OPT="remarks{ptx}"), and the ptxas lines it reports are
summarized per kernel: registers, barriers, stack frame, spill stores / loads, and the count of C7517 notes (a
wgmma.wait_group the compiler inserted, i.e. a serialized wgmma). Why: this machine has nvcc and ptxas but no
cuobjdump / nvdisasm, so the resource usage of a built kernel cannot be read from its object file here."""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_kernels  # noqa: E402  (tools/build_kernels.py)

PATTERNS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "barriers": re.compile(r"used (\d+) barriers"),
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
}


def summarize(log: str) -> dict:
    """The ptxas figures of one build's log (the largest where several entry functions report)."""
    info = {}
    for key, pat in PATTERNS.items():
        values = [int(v) for v in pat.findall(log)]
        info[key] = max(values) if values else None
    info["injected_waits"] = log.count("C7517")
    return info


def ptxas_info(spec: dict, out_dir: pathlib.Path) -> tuple[int, dict, str]:
    env = build_kernels._child_env(spec["arch"])
    env.update(CUTE_DSL_NO_CACHE="1", CUTE_DSL_COMPILER_OPT="remarks{ptx}")
    cmd = [sys.executable, str(ROOT / "tools" / "build_kernels.py"), "--child", json.dumps(spec, default=str),
           str(out_dir)]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    return proc.returncode, summarize(log), log


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="+", help="kernel names (sm_90a)")
    ap.add_argument("--log", help="also write every build's full log to this file")
    args = ap.parse_args(argv)
    specs = {s["name"]: s for s in build_kernels.read_kernel_specs("sm_90a")}
    unknown = [k for k in args.kernels if k not in specs]
    if unknown:
        ap.error(f"not sm_90a kernels of this tree: {', '.join(unknown)}")
    logs, status = [], 0
    print(f"{'kernel':<64}{'regs':>6}{'bars':>6}{'stack':>7}{'spill st':>10}{'spill ld':>10}{'C7517':>7}")
    with tempfile.TemporaryDirectory(prefix="flygemm-ptxas-") as tmp:
        for name in args.kernels:
            rc, info, log = ptxas_info(specs[name], pathlib.Path(tmp) / name)
            logs.append(f"##### {name} (rc {rc})\n{log}")
            if rc or info["registers"] is None:
                status = 1
                print(f"{name:<64}  build failed or ptxas reported nothing (rc {rc}); see --log")
                continue
            print(f"{name:<64}{info['registers']:>6}{info['barriers'] or 0:>6}{info['stack_bytes'] or 0:>7}"
                  f"{info['spill_stores'] or 0:>10}{info['spill_loads'] or 0:>10}{info['injected_waits']:>7}")
    if args.log:
        pathlib.Path(args.log).write_text("\n".join(logs))
    return status


if __name__ == "__main__":
    sys.exit(main())
