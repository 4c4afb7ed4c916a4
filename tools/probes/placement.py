"""Which operand's address moves a pinned kernel's time (H200 probe, needs CUDA and the extension).

Why: in the thirty-eighth session tools/ab.py with new tensors every round showed B / A alternating 0.960 / 0.987 with the
round (fp8 1024 x 6144 x 4096) and t128x112x128 at 1024 x 7168 x 16384 taking 15% longer in one placement of five
(docs/PERF.md). Here each operand of a per-tensor gemm_a8w8 call - A, W and the output (written through the _out variant)
- is a view at a chosen byte offset into its own 8 MiB-padded buffer, one operand moved at a time, the others at offset 0;
each line prints the event time (cold L2, bench.time_us) and its ratio to all-at-0.

    python3 tools/probes/placement.py --shape 1024x7168x16384 --kernel gemm_a8w8.fp8_e4m3fn.bf16.t128x112x128.sm90a:1

--buffers N (thirty-ninth session) asks whether a slow placement belongs to the buffer or to its offset: N fresh copies of
A and of W (all kept alive, offset 0 each, so equal low address bits), timed in two passes; per pair the two passes'
times, then the slowest and the fastest pair once more under cudaProfilerStart/Stop, so that
`ncu --profile-from-start off` profiles exactly those two launches.
"""

import argparse
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import flygemm  # noqa: E402,F401  (loads the ops)
from flygemm import bench, quant  # noqa: E402
from ab import pinned  # noqa: E402

PAD = 8 << 20
OFFSETS = [0, 4096, 8192, 65536, 1 << 20, (2 << 20) + 4096, 3 << 20, 5 << 20]


def placed(t: torch.Tensor, offset: int) -> torch.Tensor:
    """A copy of t whose storage starts `offset` bytes into a fresh buffer of its size plus PAD."""
    nbytes = t.numel() * t.element_size()
    buf = torch.empty(nbytes + PAD, dtype=torch.uint8, device=t.device)
    view = buf[offset:offset + nbytes].view(t.dtype).view(t.shape)
    view.copy_(t)
    return view


def operands(shape: str):
    """The per-tensor fp8 problem both modes time: (device, a, a_scale, w, w_scale, an empty bf16 output)."""
    (M, N, K), = bench.parse_shapes(shape, [])
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    a, sa = quant.quantize_fp8_per_tensor(torch.randn(M, K, device=dev, generator=g))
    w, sw = quant.quantize_fp8_per_tensor(torch.randn(N, K, device=dev, generator=g) / K ** 0.5)
    return dev, a, sa, w, sw, torch.empty(M, N, dtype=torch.bfloat16, device=dev)


def run(shape: str, kernel: str, rep_ms: float) -> None:
    dev, a, sa, w, sw, out0 = operands(shape)

    def time_at(a_off, w_off, o_off):
        pa, pw, po = placed(a, a_off), placed(w, w_off), placed(out0, o_off)
        call = pinned(lambda: torch.ops.flygemm.gemm_a8w8_out(pa, pw, sa, sw, None, torch.bfloat16, out=po), (), kernel)
        us = bench.time_us(call, dev, rep_ms)
        return us, pa.data_ptr(), pw.data_ptr(), po.data_ptr()

    base = time_at(0, 0, 0)[0]
    print(f"{shape} {kernel}: all operands at offset 0: {base:.1f} us")
    print(f"{'moved':>6} {'offset':>10} {'us':>9} {'ratio':>6}   a / w / out address mod 2 MiB")
    for name, pos in (("a", 0), ("w", 1), ("out", 2)):
        for off in OFFSETS[1:]:
            offs = [0, 0, 0]
            offs[pos] = off
            us, *ptrs = time_at(*offs)
            mods = " / ".join(f"{p % (2 << 20):#x}" for p in ptrs)
            print(f"{name:>6} {off:>10} {us:9.1f} {us / base:6.3f}   {mods}", flush=True)


def per_buffer(shape: str, kernel: str, rep_ms: float, buffers: int, vary: str = "both") -> None:
    """Time N fresh (A, W) copies twice each (vary: which operand gets the fresh copies, the other is shared); then the
    slowest and fastest once inside a profiler range (for ncu)."""
    dev, a, sa, w, sw, out = operands(shape)
    copies = [(a.clone() if vary in ("a", "both") else a, w.clone() if vary in ("w", "both") else w)
              for _ in range(buffers)]

    def call(i):
        pa, pw = copies[i]
        return pinned(lambda: torch.ops.flygemm.gemm_a8w8_out(pa, pw, sa, sw, None, torch.bfloat16, out=out), (), kernel)

    passes = [[bench.time_us(call(i), dev, rep_ms) for i in range(buffers)] for _ in range(2)]
    base = sorted(passes[0])[buffers // 2]
    print(f"{shape} {kernel}: {buffers} fresh copies of {vary}, two passes; median {base:.1f} us")
    print(f"{'copy':>4} {'pass 1':>8} {'pass 2':>8} {'ratio':>6}   A / W address (MiB, mod 2 MiB in hex)")
    for i, (t1, t2) in enumerate(zip(*passes)):
        pa, pw = copies[i]
        addr = " / ".join(f"{p.data_ptr() >> 20} {p.data_ptr() % (2 << 20):#x}" for p in (pa, pw))
        print(f"{i:>4} {t1:8.1f} {t2:8.1f} {(t1 + t2) / 2 / base:6.3f}   {addr}", flush=True)
    mean = [(t1 + t2) / 2 for t1, t2 in zip(*passes)]
    slow, fast = max(range(buffers), key=mean.__getitem__), min(range(buffers), key=mean.__getitem__)
    print(f"profiled: fast copy {fast} then slow copy {slow}")
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for i in (fast, slow):
        bench.flush_with_head_start(dev)
        call(i)()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", required=True, help="MxNxK")
    ap.add_argument("--kernel", action="append", required=True, help="kernel:split_k (repeatable)")
    ap.add_argument("--rep-ms", type=float, default=300.0)
    ap.add_argument("--buffers", type=int, default=0, help="per-buffer mode: N fresh (A, W) copies (see above)")
    ap.add_argument("--vary", choices=("a", "w", "both"), default="both", help="per-buffer mode: which operand is copied")
    args = ap.parse_args(argv)
    for k in args.kernel:
        if args.buffers:
            per_buffer(args.shape, k, args.rep_ms, args.buffers, args.vary)
        else:
            run(args.shape, k, args.rep_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
