#!/usr/bin/env python3
"""Sixty-third session: the tools/tune.py groups that time every decode dispatch row (M <= 16) whose pick is not a
bulk-ring kernel against the bulk-ring kernels of its op and M (sessions 60-62 moved rows to them only at the
N = 2048 / 1536 / 1024 shapes they were written for; at 16 x 2048 x 8192 and 16 x 1536 x 8960 they beat the .sw tile
by 13-16% in event time). One line per (op, M): op variant shapes match split_ks (tools/probes/ring-sweep-63.sh).
The row's own pick is always among the candidates, so tools/tune_vs_table.py can compare in the same run."""
import csv
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
VARIANT = {"gemm_a16w16": "-", "gemm_a8w8": "per_tensor", "gemm_a8w8_blockscale": "-", "gemm_mxfp8": "-", "gemm_mxfp4": "-"}
DEFAULT_OPS = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale")  # the sixty-third session's sweep
RING = {  # (op, M <= 8 or 16): the bulk-ring kernels worth timing there
    ("gemm_a16w16", 8): "m8n16.w7k256.bk2,m8n32.w4.bk2",
    ("gemm_a16w16", 16): "m16n16.w8.bk3,m16n32.w4.bk2",
    ("gemm_a8w8", 8): "m8n16.w7.bk4,m8n32.w4.bk2,m8n16.w6.bk1",
    ("gemm_a8w8", 16): "m16n16.w7.bk4.rr.np,m8n16.w7.bk4.np",  # two 8-row CTAs along M: small N x K
    ("gemm_a8w8_blockscale", 8): "m8n16.w7.bk4,m8n32.w4.bk2",
    ("gemm_a8w8_blockscale", 16): "m16n16.w7.bk3.np,m8n16.w7.bk4.np",
    ("gemm_mxfp8", 8): "m8n16.w8k128.bk6",
    ("gemm_mxfp8", 16): "m16n16.w7.bk3,m8n16.w8k128.bk6",
    ("gemm_mxfp4", 8): "m8n16.w7.bk4",
    ("gemm_mxfp4", 16): "m8n16.w7.bk4",
}
IS_RING = re.compile(r"\.bk\d")


def groups(table: pathlib.Path, ops=DEFAULT_OPS):
    out = {}
    for r in csv.reader(line for line in open(table) if line.startswith("sm_90a,")):
        op, m_max, n, k, kernel, split = r[1], int(r[4]), int(r[5]), int(r[6]), r[7], int(r[8])
        if op not in ops or r[2] == "fp16" or not 0 < m_max <= 16 or n == 0 or IS_RING.search(kernel):
            continue
        g = out.setdefault((op, m_max), {"shapes": [], "picks": set(), "splits": {1}})
        g["shapes"].append(f"{m_max}x{n}x{k}")
        g["picks"].add(kernel)
        g["splits"].add(split)
    for (op, m), g in sorted(out.items(), key=lambda kv: (-kv[0][1], kv[0][0])):  # M = 16 first: most to gain
        match = ",".join(sorted(g["picks"]) + [RING[(op, 8 if m <= 8 else 16)]])
        yield op, VARIANT[op], ",".join(g["shapes"]), match, ",".join(map(str, sorted(g["splits"])))


if __name__ == "__main__":
    # optional argument: comma-separated ops (default: bf16, fp8 per-tensor, blockscale)
    ops = tuple(sys.argv[1].split(",")) if len(sys.argv) > 1 else DEFAULT_OPS
    for line in groups(ROOT / "kernels" / "configs" / "sm_90a.csv", ops):
        print(" ".join(line))
    sys.exit(0)
