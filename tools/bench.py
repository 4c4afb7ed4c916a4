#!/usr/bin/env python3
"""Benchmark flygemm against torch in the same process; see python/flygemm/bench.py.

    python tools/bench.py --ops gemm_a16w16 --shapes 8192x8192x8192,54560x8192x8192 --json out.json
"""
import sys

from flygemm import bench

if __name__ == "__main__":
    sys.exit(bench.main())
