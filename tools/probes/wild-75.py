#!/usr/bin/env python3
"""Seventy-fifth session: shapes nobody tuned for. Draws `--count` GEMM shapes at random (seeded) the way a user's model
would hand them over - N and K multiples of 64 (one in five only of 16), 512..32768, M log-uniform over 1..16384 - caps
each at --max-tflop of work, and prints them as one comma-separated MxNxK list for `python -m flygemm bench --shapes`.
The point is the worst torch / fly ratios, not a mean: every shape the dispatch table never saw runs on default rows."""
import argparse
import math
import random


def draw_dim(rng: random.Random) -> int:
    step = 16 if rng.random() < 0.2 else 64
    return max(512, int(round(math.exp(rng.uniform(math.log(512), math.log(32768))) / step)) * step)


def draw_shape(rng: random.Random, max_flop: float) -> tuple[int, int, int]:
    while True:
        n, k = draw_dim(rng), draw_dim(rng)
        m = max(1, int(round(math.exp(rng.uniform(0.0, math.log(16384))))))
        if 2.0 * m * n * k <= max_flop:
            return m, n, k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=48)
    ap.add_argument("--seed", type=int, default=75)
    ap.add_argument("--max-tflop", type=float, default=2.0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shapes = [draw_shape(rng, args.max_tflop * 1e12) for _ in range(args.count)]
    print(",".join(f"{m}x{n}x{k}" for m, n, k in shapes))


if __name__ == "__main__":
    main()
