#!/usr/bin/env python3
"""Seventy-fifth session: the pairs file (tools/ab.py --pairs) that weighs other tiles on the worst rows of the random-shape
sweep (tools/probes/wild-75.sh; H100, docs/PERF.md): A = what the table picks, B = a candidate, bf16 and fp8 per-tensor.
The large-M rows (LARGE_M, --large) are left out by default: tools/probes/by-cost-large-m-75.pairs weighs the 192-row tiles
the M > 4096 buckets now list on them."""
import sys

LARGE_M = ["5168x1728x21568", "4286x576x6336", "15085x5312x2240", "8101x1216x2624", "1672x3584x784"]
WIDE = ["397x12560x832", "825x3648x20096", "689x3136x12464"]
SPLIT = ["150x4368x10928", "88x2688x4352", "241x832x1728", "135x768x2048"]
OPS = {"gemm_a16w16": ("-", "gemm_a16w16.bf16.bf16", 64), "gemm_a8w8": ("per_tensor", "gemm_a8w8.fp8_e4m3fn.bf16", 128)}
BIG_TILES = ["t128x128x{k}:1", "t192x128x{k}:1", "t192x192x{k}:1", "t128x256x{k}:1", "t256x128x{k}:1", "t128x192x{k}:1"]
SPLIT_TILES = ["t128x64x{k}.sk8.sw:2", "t128x64x{k}.sk8.sw:4", "t64x128x{k}.sk8:2", "t128x128x{k}.sk8:2",
               "t128x32x{k}.sk8.sw:1", "t64x64x{k}.sk8.sw:2"]


def main() -> None:
    print(__doc__.replace("\n", "\n# ").join(["# ", ""]))
    groups = ((LARGE_M, BIG_TILES),) if "--large" in sys.argv else ()
    for shapes, tiles in groups + ((SPLIT, SPLIT_TILES), (WIDE, BIG_TILES)):
        for shape in shapes:
            for op, (variant, prefix, tile_k) in OPS.items():
                for tile in tiles:
                    name, split = tile.format(k=tile_k).split(":")
                    print(f"{op} {variant} {shape} table {prefix}.{name}.sm90a:{split}")


if __name__ == "__main__":
    main()
