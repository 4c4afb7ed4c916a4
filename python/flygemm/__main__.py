"""Command line: `python -m flygemm {info,bench,explain}`."""
from __future__ import annotations

import argparse
import json
import sys

import torch

import flygemm

DTYPES = {
    "bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32,
    "fp8": torch.float8_e4m3fn, "fp8_e4m3fn": torch.float8_e4m3fn, "fp8_e4m3fnuz": torch.float8_e4m3fnuz,
    "int8": torch.int8, "fp4": torch.float4_e2m1fn_x2,
}


def cmd_info(args) -> int:
    info = flygemm.info()
    print(f"flygemm {info['version']} (torch {torch.__version__})")
    print(f"library: {flygemm.library_path()}")
    print(f"backends compiled in: {', '.join(info['backends'])}")
    if not info["archs"]:
        print("kernels: none linked (CPU oracle only)")
    for arch, a in info["archs"].items():
        print(f"  {arch}: {a['kernels']} kernels, {a['dispatch_rows']} dispatch rows")
    for k in info["kernels"] if args.kernels else []:
        print(f"    {k['arch']:<7} {k['name']:<48} {k['in_dtype']}->{k['out_dtype']} {k['w_layout']} tile {k['tile']}")
    if torch.cuda.is_available():
        print(f"device: {torch.cuda.get_device_name()} ({flygemm._arch_of('cuda')})")
    return 0


def cmd_explain(args) -> int:
    dtype = DTYPES[args.dtype]
    out_dtype = DTYPES[args.out_dtype] if args.out_dtype else None
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    print(json.dumps(flygemm.explain(args.op, args.M, args.N, args.K, dtype, device, out_dtype,
                                     device_name=args.device_name)))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flygemm")
    sub = ap.add_subparsers(dest="cmd", required=True)
    info = sub.add_parser("info", help="version, backends, arches, kernels, dispatch rows")
    info.add_argument("--kernels", action="store_true", help="list every compiled kernel")
    sub.add_parser("bench", help="benchmark every op against torch on the present device", add_help=False)
    ex = sub.add_parser("explain", help="which kernel and split_k a problem gets")
    ex.add_argument("op")
    ex.add_argument("M", type=int)
    ex.add_argument("N", type=int)
    ex.add_argument("K", type=int)
    ex.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ex.add_argument("--out-dtype", choices=sorted(DTYPES))
    ex.add_argument("--device", help="cuda, cpu, or an arch name (sm_90a, gfx942, gfx950)")
    ex.add_argument("--device-name", help="answer as on a device of this name (e.g. 'NVIDIA H100 80GB HBM3'); "
                                          "default: the device's own, the arch's reference part for an arch name")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:  # everything after 'bench' belongs to the bench parser
        from flygemm import bench
        return bench.main(argv[1:])
    args = ap.parse_args(argv)
    return {"info": cmd_info, "explain": cmd_explain}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
