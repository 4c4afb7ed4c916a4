"""Benchmark flygemm against torch in the same process (used by `python -m flygemm bench` and
tools/bench.py).

For each (op, shape) it draws fresh random quantized inputs, checks flygemm against the CPU oracle
(relative Frobenius error), and times flygemm and the torch peer (torch.mm / torch._scaled_mm)
with the same inputs: medians over repeated runs, inputs rotated so memory-bound shapes do not
run from L2. Speed is reported as ratios (torch time / flygemm time: > 1 means flygemm is faster).
On a machine with no GPU it runs the CPU oracle and says so.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

import torch

import flygemm
from flygemm import quant

# (M, N, K): a large square GEMM, an LLM projection, and a decode shape.
DEFAULT_SHAPES = [(8192, 8192, 8192), (4096, 28672, 4096), (1, 16384, 7168), (16, 2048, 7168)]
CPU_SHAPES = [(64, 256, 512), (1, 512, 1024)]
# The LLM shape set of the CUDA large/medium-M goals: M x (N, K) of common projection layers.
LLM_NK = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (10240, 8192), (8192, 8192), (57344, 8192),
          (8192, 28672), (2112, 7168), (24576, 1536), (7168, 16384), (36864, 7168), (7168, 18432)]
LLM_SHAPES = [(m, n, k) for m in (128, 1024, 4096, 16384) for n, k in LLM_NK]
# Decode sweep (M = 1..64) over the projection layers of two served models: (N, K) per layer.
SWEEP_MODELS = {
    "DeepSeek-V3": [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (36864, 7168), (7168, 18432)],
    "Llama-3-70B": [(10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)],
}
SWEEP_M = (1, 2, 4, 8, 16, 32, 64)
SWEEP_SHAPES = sorted({(m, n, k) for nks in SWEEP_MODELS.values() for n, k in nks for m in SWEEP_M})
OPS = ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale", "gemm_mxfp8", "gemm_mxfp4")
# torch dtype -> the dtype name the kernel registry uses (flygemm.info()["kernels"]: in_dtype / out_dtype)
KERNEL_DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
                      torch.float8_e4m3fn: "fp8_e4m3fn", torch.float8_e4m3fnuz: "fp8_e4m3fnuz", torch.int8: "int8",
                      torch.float4_e2m1fn_x2: "fp4_e2m1_x2"}
# torch._scaled_mm's use_fast_accum for the gemm_a8w8 peer. False (torch's default) is cuBLASLt's mode that
# promotes the fp8 tensor-core sums to fp32 registers as it goes; flygemm's gemm_a8w8 kernels keep the sum
# in the wgmma accumulator for the whole K like use_fast_accum=True (see docs/PERF.md), so
# `bench --torch-fast-accum` compares against the mode with the same numerics.
TORCH_FP8_FAST_ACCUM = False


@dataclass
class Row:
    op: str
    variant: str
    M: int
    N: int
    K: int
    device: str
    flygemm_us: float = float("nan")
    torch_us: float = float("nan")
    speedup: float = float("nan")
    tflops: float = float("nan")
    gbps: float = float("nan")
    rel_err: float = float("nan")
    kernel: str = ""
    note: str = ""
    extra: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------- inputs
def fp8_dtype(device: torch.device) -> torch.dtype:
    if device.type == "cuda" and getattr(torch.version, "hip", None):
        arch = torch.cuda.get_device_properties(device).gcnArchName
        if arch.startswith("gfx942"):
            return torch.float8_e4m3fnuz
    return torch.float8_e4m3fn


def scaled_out_dtype(op: str, variant: str) -> torch.dtype:
    """The output dtype of a variant: "fp32" / "<scaling>_fp32" write fp32; an fp8 op's "fp16" / "<scaling>_fp16"
    fp16; the others bf16 (gemm_a16w16's "fp16" variant: fp16 operands, whose default output is fp16)."""
    if variant.endswith("fp32"):
        return torch.float32
    return torch.float16 if op != "gemm_a16w16" and variant.endswith("fp16") else torch.bfloat16


def out_dtype_args(out: torch.dtype) -> tuple:
    """The op arguments after the scales that ask for `out` (bias None, out_dtype); none for the default bf16."""
    return () if out == torch.bfloat16 else (None, out)


def make_problem(op: str, variant: str, M: int, N: int, K: int, device: torch.device, gen: torch.Generator):
    """Returns (flygemm args tuple, torch peer callable or None, bytes moved)."""
    # Drawn where the generator lives (the GPU for GPU runs: large shapes would be slow on the CPU).
    a32 = torch.randn(M, K, generator=gen, device=gen.device)
    w32 = torch.randn(N, K, generator=gen, device=gen.device) / math.sqrt(K)
    f8 = fp8_dtype(device)
    out = scaled_out_dtype(op, variant)
    if op == "gemm_a16w16":   # variant "fp16": fp16 operands and output; "fp32": bf16 operands, fp32 output
        dt = torch.float16 if variant == "fp16" else torch.bfloat16
        a, w = a32.to(dt).to(device), w32.to(dt).to(device)
        if out == torch.float32:  # torch's peer: aten::mm.dtype (cuBLAS writing fp32; CUDA only)
            peer = (lambda: torch.mm(a, w.t(), out_dtype=out)) if device.type == "cuda" else None  # noqa: E731
            return (a, w, None, out), peer, 2 * (M * K + N * K) + 4 * M * N
        return (a, w), (lambda: torch.mm(a, w.t())), 2 * (M * K + N * K + M * N)
    if op == "gemm_a8w8":
        if variant.startswith("per_tensor"):
            qa, sa = quant.quantize_fp8_per_tensor(a32, f8)
            qw, sw = quant.quantize_fp8_per_tensor(w32, f8)
        else:
            qa, sa = quant.quantize_fp8_per_token(a32, f8)
            qw, sw = quant.quantize_fp8_per_channel(w32, f8)
        qa, sa, qw, sw = (t.to(device) for t in (qa, sa, qw, sw))
        peer = None
        if device.type == "cuda":
            ta = sa.reshape(1, 1) if sa.numel() == 1 else sa.reshape(M, 1)
            tb = sw.reshape(1, 1) if sw.numel() == 1 else sw.reshape(1, N)
            fast = TORCH_FP8_FAST_ACCUM
            peer = lambda: torch._scaled_mm(qa, qw.t(), ta, tb, out_dtype=out,  # noqa: E731
                                            use_fast_accum=fast)
        return (qa, qw, sa, sw) + out_dtype_args(out), peer, \
            M * K + N * K + out.itemsize * M * N + 4 * (sa.numel() + sw.numel())
    if op == "gemm_a8w8_blockscale":
        qa, sa = quant.quantize_fp8_blockscale_act(a32, dtype=f8)
        qw, sw = quant.quantize_fp8_blockscale_weight(w32, dtype=f8)
        qa, sa, qw, sw = (t.to(device) for t in (qa, sa, qw, sw))
        peer = None
        if device.type == "cuda" and K % 128 == 0 and N % 128 == 0:
            # cuBLAS blockwise scaling: A scales 1x128 (outer-dim major), B scales 128x128.
            # cuBLAS refuses M < 16 here: the peer gets the rows padded to 16, as a caller would do.
            pa, psa = (qa, sa) if M >= 16 else (torch.cat([qa, qa[:1].expand(16 - M, K)]),
                                                torch.cat([sa, sa[:1].expand(16 - M, sa.shape[1])]))
            ta, tb = psa.t().contiguous().t(), sw.t()
            peer = lambda: torch._scaled_mm(pa, qw.t(), ta, tb, out_dtype=out)  # noqa: E731
        return (qa, qw, sa, sw) + out_dtype_args(out), peer, \
            M * K + N * K + out.itemsize * M * N + 4 * (sa.numel() + sw.numel())
    if op == "gemm_mxfp8":
        qa, sa = quant.quantize_mxfp8(a32)
        qw, sw = quant.quantize_mxfp8(w32)
        args = tuple(t.to(device) for t in (qa, qw, sa, sw))
        return args, None, M * K + N * K + 2 * M * N + (M + N) * K // 32
    if op == "gemm_mxfp4":
        qa, sa = quant.quantize_mxfp4(a32)
        qw, sw = quant.quantize_mxfp4(w32)
        args = tuple(t.to(device) for t in (qa, qw, sa, sw))
        return args, None, (M * K + N * K) // 2 + 2 * M * N + (M + N) * K // 32
    raise ValueError(f"unknown op {op}")


# the variants a run times by default, and every variant make_problem knows (--variants picks among these)
VARIANTS = {"gemm_a8w8": ("per_tensor", "per_token"), }
KNOWN_VARIANTS = {"gemm_a16w16": ("-", "fp16", "fp32"),
                  "gemm_a8w8": ("per_tensor", "per_token", "per_tensor_fp16", "per_token_fp16", "per_tensor_fp32",
                                "per_token_fp32"),
                  "gemm_a8w8_blockscale": ("-", "fp16")}


def op_variants(op: str, wanted: str | None) -> tuple:
    """The variants to time for op: VARIANTS' default, or those of the comma-separated `wanted` that the op knows
    (KNOWN_VARIANTS; "-" is the op's only variant where none are listed). None known: a ValueError."""
    if not wanted:
        return VARIANTS.get(op, ("-",))
    known = KNOWN_VARIANTS.get(op, ("-",))
    picked = tuple(v for v in wanted.split(",") if v in known)
    if not picked:
        raise ValueError(f"--variants {wanted}: none is a variant of {op} (its variants: {', '.join(known)})")
    return picked


# ----------------------------------------------------------------------------- timing
# Cold-L2 timing. triton's do_bench empties L2 by *writing* a 256 MiB buffer (zero_()), which leaves
# L2 (50 MiB on the H200) full of dirty lines: the timed kernel then pays for writing them back to
# HBM (~12 us on the H200), which swamps memory-bound decode kernels. Reading a buffer larger than
# L2 evicts it just as well and leaves only clean lines, so the timed call is charged for its own
# traffic only. The flush also hides the CPU launch cost of fn() (it runs ~70 us on the GPU) - on a fast
# host. On the H200 machines a pinned flygemm call or a torch peer costs the host 40-60 us (twenty-eighth
# session, tools/probes/event_vs_kernel.py), so flush + call took the host about as long as the GPU and
# the events timed the host whenever it fell behind: the same kernel pair came out 1.3x apart between
# two machines. The event loops therefore give the host a head start after each flush (a GPU sleep of
# ~150 us), so that the timed call is always queued before the GPU reaches it: event time is GPU time,
# a call's kernels plus the GPU's own launch gaps, for torch and flygemm alike (the host's cost per
# call is measured separately, tools/probes/host_overhead.py).
_FLUSH_BYTES = 256 << 20
_HEAD_START_CYCLES = 300_000
_flush_buffers: dict = {}


def flush_l2(device: torch.device, dirty: bool = False) -> None:
    buf = _flush_buffers.get(device)
    if buf is None:
        buf = _flush_buffers[device] = torch.ones(_FLUSH_BYTES // 4, dtype=torch.float32, device=device)
    if dirty:
        buf.fill_(1.0)  # what do_bench does: the write leaves L2 dirty
    else:
        buf.sum()


def head_start(device: torch.device) -> None:
    """A GPU sleep during which the host queues the timed call (see above)."""
    torch.cuda._sleep(_HEAD_START_CYCLES)


def flush_with_head_start(device: torch.device, dirty: bool = False) -> None:
    """flush_l2, then head_start."""
    flush_l2(device, dirty)
    head_start(device)


def time_us(fn, device: torch.device, rep_ms: float = 200.0, dirty_flush: bool = False) -> float:
    """Median time of fn() in microseconds (GPU: cold L2, one event pair per call)."""
    if device.type == "cuda":
        return _time_cuda_us(fn, device, rep_ms, dirty_flush)
    fn()
    times = []
    deadline = time.perf_counter() + rep_ms / 1000.0
    while time.perf_counter() < deadline or len(times) < 3:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def _time_cuda_us(fn, device, rep_ms, dirty_flush) -> float:
    for _ in range(3):  # warm up (lazy loads, allocator)
        fn()
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    flush_with_head_start(device, dirty_flush)
    fn()
    torch.cuda.synchronize(device)
    reps = max(10, min(1000, int(rep_ms / max((time.perf_counter() - t0) * 1000.0, 1e-3))))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for start, end in events:
        flush_with_head_start(device, dirty_flush)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize(device)
    return statistics.median(start.elapsed_time(end) * 1000.0 for start, end in events)


def time_pair_us(fn_a, fn_b, device: torch.device, rep_ms: float = 400.0,
                 warm_l2: bool = False) -> tuple[float, float]:
    """Median times of fn_a() and fn_b() in microseconds, measured interleaved (flush, a, flush, b per
    repetition, one event pair per call): both see the same clocks, power and temperature, so a
    drift during the measurement (a long GEMM run heats the GPU and lowers its clock) cannot favour
    whichever ran first. CPU: two separate time_us.

    warm_l2: no flush (the head start only), so operands that fit L2 are read from it - a diagnostic
    that takes the HBM stream away to show what a kernel's own work costs, never a product number."""
    if device.type != "cuda":
        return time_us(fn_a, device, rep_ms / 2), time_us(fn_b, device, rep_ms / 2)
    between = head_start if warm_l2 else flush_with_head_start
    for _ in range(3):
        fn_a()
        fn_b()
    torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    between(device)
    fn_a()
    between(device)
    fn_b()
    torch.cuda.synchronize(device)
    reps = max(10, min(1000, int(rep_ms / max((time.perf_counter() - t0) * 1000.0, 1e-3))))
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(reps)]
    for e in ev:
        between(device)
        e[0].record()
        fn_a()
        e[1].record()
        between(device)
        e[2].record()
        fn_b()
        e[3].record()
    torch.cuda.synchronize(device)
    a = statistics.median(e[0].elapsed_time(e[1]) * 1000.0 for e in ev)
    b = statistics.median(e[2].elapsed_time(e[3]) * 1000.0 for e in ev)
    return a, b


# Kernel time. The event time above includes what the GPU front end spends between the start event
# and the first kernel (the one-element kernel takes 4.0 us that way on the H200, ~2 us of it outside
# the kernel): at decode sizes that is a third of the row. The kernel time is the GPU span of one
# call's kernels (first start to last end, so the gap between a split-K pass and its reduce counts),
# as CUPTI records it through torch.profiler, cold L2 as above. It is what rocprof-based decode
# numbers (e.g. the MI355X split-K results) report, and what a CUDA-graph replay approaches.
def gpu_activities(prof) -> list[tuple[int, int]]:
    """(start_ns, end_ns) of every GPU activity (kernels, memsets, copies) a profile recorded, in order."""
    acts = []
    for e in prof.profiler.kineto_results.events():
        if e.device_type() == torch.autograd.DeviceType.CUDA:
            acts.append((int(e.start_ns()), int(e.start_ns()) + int(e.duration_ns())))
    return sorted(acts)


def call_spans_ns(acts: list, n_flush: int, n_fn: int, reps: int) -> list[int]:
    """Split activities recorded for `reps` repetitions of [flush (n_flush activities), fn (n_fn)]
    into fn's span per repetition; [] when the counts do not add up (something else ran)."""
    per = n_flush + n_fn
    if n_fn <= 0 or len(acts) != reps * per:
        return []
    spans = []
    for r in range(reps):
        mine = acts[r * per + n_flush:(r + 1) * per]
        spans.append(max(e for _, e in mine) - min(s for s, _ in mine))
    return spans


def _count_activities(fn, device) -> int:
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize(device)
    return len(gpu_activities(prof))


def kernel_time_us(fn, device: torch.device, reps: int = 50) -> float:
    """Median GPU span of one fn() call's kernels, cold L2 (nan if the profile cannot be split)."""
    from torch.profiler import ProfilerActivity, profile
    if device.type != "cuda":
        return float("nan")
    for _ in range(3):
        fn()
    # The first profiler session of a process can miss activities (seen on the H200: the first
    # candidate of an op without a torch peer came back nan in tools/tune.py), so counts and
    # profile are taken again when they do not add up.
    for _ in range(3):
        n_flush = _count_activities(lambda: flush_l2(device), device)
        n_fn = _count_activities(fn, device)
        torch.cuda.synchronize(device)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps):
                flush_l2(device)
                fn()
            torch.cuda.synchronize(device)
        spans = call_spans_ns(gpu_activities(prof), n_flush, n_fn, reps)
        if spans:
            return statistics.median(spans) / 1000.0
    return float("nan")


def rel_fro(out: torch.Tensor, ref: torch.Tensor) -> float:
    out, ref = out.double().cpu(), ref.double().cpu()
    return float(torch.linalg.norm(out - ref) / max(torch.linalg.norm(ref), 1e-30))


# ----------------------------------------------------------------------------- runner
def run_logged(fn, args) -> tuple:
    """(fn(*args), the picks its dispatches made, as dicts of the FLYGEMM_LOG_DISPATCH columns): the call runs once with
    the dispatch log on a fresh file, so a caller can name what ran (a per-token call's gemm_a8w8.row_scales row, a
    forced kernel) instead of what flygemm.explain answers for the op."""
    fd, path = tempfile.mkstemp(prefix="flygemm-dispatch-", suffix=".csv")
    os.close(fd)
    before = os.environ.get("FLYGEMM_LOG_DISPATCH")
    os.environ["FLYGEMM_LOG_DISPATCH"] = path
    try:
        out = fn(*args)
        with open(path) as f:
            picks = list(csv.DictReader(f))
    finally:
        if before is None:
            del os.environ["FLYGEMM_LOG_DISPATCH"]
        else:
            os.environ["FLYGEMM_LOG_DISPATCH"] = before
        os.unlink(path)
    return out, picks


def bench_one(op: str, variant: str, M: int, N: int, K: int, device: torch.device, gen, check: bool,
              dirty_l2: bool = False, kernel_time: bool = False) -> Row:
    row = Row(op, variant, M, N, K, str(device))
    args, peer, nbytes = make_problem(op, variant, M, N, K, device, gen)
    fn = getattr(flygemm, op)
    try:
        out, picks = run_logged(fn, args) if device.type != "cpu" else (fn(*args), [])
        row.kernel = picks[0]["kernel"] if picks else ""
    except (NotImplementedError, RuntimeError) as exc:
        row.note = str(exc).splitlines()[0][:120]
        return row
    if check:
        ref = fn(*(t.cpu() if isinstance(t, torch.Tensor) else t for t in args))
        row.rel_err = rel_fro(out, ref)
    peer_error = None
    if peer is not None:
        try:
            peer()
        except (RuntimeError, ValueError) as exc:  # the peer may not support this scaling here
            peer_error = exc
    if peer is not None and peer_error is None:
        row.flygemm_us, row.torch_us = time_pair_us(lambda: fn(*args), peer, device)
        row.speedup = row.torch_us / row.flygemm_us
    else:
        row.flygemm_us = time_us(lambda: fn(*args), device)
        if peer_error is not None:
            row.note = "torch peer failed: " + str(peer_error).splitlines()[0][:90]
        elif peer is None and device.type == "cpu" and op == "gemm_a16w16":
            a, w = args[0], args[1]  # the oracle against plain torch on the same machine
            row.torch_us = time_us(lambda: torch.mm(a, w.t()), device)
            row.speedup = row.torch_us / row.flygemm_us
    if device.type == "cuda" and M <= 64 and dirty_l2:  # the do_bench-style flush, for comparison
        row.extra["flygemm_us_dirty_l2"] = time_us(lambda: fn(*args), device, dirty_flush=True)
        if peer is not None and row.torch_us == row.torch_us:
            row.extra["torch_us_dirty_l2"] = time_us(peer, device, dirty_flush=True)
    if device.type == "cuda" and kernel_time:  # any M: the event time of a short call is mostly launch
        row.extra["flygemm_kernel_us"] = kernel_time_us(lambda: fn(*args), device)
        row.extra["torch_kernel_us"] = float("nan")
        if peer is not None and row.torch_us == row.torch_us:
            row.extra["torch_kernel_us"] = kernel_time_us(peer, device)
        row.extra["gbps_kernel"] = nbytes / (row.extra["flygemm_kernel_us"] * 1e-6) / 1e9
    row.extra["bytes"] = nbytes
    row.tflops = 2.0 * M * N * K / (row.flygemm_us * 1e-6) / 1e12
    row.gbps = nbytes / (row.flygemm_us * 1e-6) / 1e9
    return row


def copy_bandwidth_gbps(device: torch.device, nbytes: int = 2 << 30) -> float:
    """Device-to-device copy bandwidth (bytes read + written), the ceiling for memory-bound rows."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    us = time_us(lambda: dst.copy_(src), device)
    return 2 * nbytes / (us * 1e-6) / 1e9


def launch_floor_us(device: torch.device, kernel_time: bool = False) -> float:
    """Time of a one-element kernel with the same method: what any single launch costs here."""
    x = torch.zeros(1, device=device)
    if kernel_time:
        return kernel_time_us(lambda: x.add_(1.0), device)
    return time_us(lambda: x.add_(1.0), device)


def format_kernel_time_table(rows: list[Row], copy_bw: float) -> str:
    """Rows timed both ways: event time (the main table) and kernel time (GPU span)."""
    head = f"{'op':<22}{'variant':<11}{'M':>6}{'N':>7}{'K':>7}{'event us':>10}{'kernel us':>11}" \
           f"{'torch kern us':>15}{'torch/fly':>10}{'GB/s':>8}{'of copy':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if "flygemm_kernel_us" not in r.extra:
            continue
        fk, tk = r.extra["flygemm_kernel_us"], r.extra["torch_kernel_us"]
        gb = r.extra["gbps_kernel"]
        lines.append(f"{r.op:<22}{r.variant:<11}{r.M:>6}{r.N:>7}{r.K:>7}{r.flygemm_us:>10.1f}{fk:>11.1f}"
                     f"{tk:>15.1f}{tk / fk:>10.3f}{gb:>8.0f}{gb / copy_bw:>9.0%}")
    return "\n".join(lines)


def format_table(rows: list[Row]) -> str:
    head = f"{'op':<22}{'variant':<11}{'M':>6}{'N':>7}{'K':>7}{'flygemm us':>12}{'torch us':>10}" \
           f"{'torch/fly':>10}{'TFLOP/s':>9}{'GB/s':>8}{'rel err':>10}  note"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.op:<22}{r.variant:<11}{r.M:>6}{r.N:>7}{r.K:>7}{r.flygemm_us:>12.1f}{r.torch_us:>10.1f}"
                     f"{r.speedup:>10.3f}{r.tflops:>9.1f}{r.gbps:>8.0f}{r.rel_err:>10.2e}  {r.note or r.kernel}")
    return "\n".join(lines)


def geomean_groups(rows: list[Row]) -> dict:
    """(op, variant) -> (geometric mean of torch/flygemm, count) over the rows that have both times."""
    groups: dict = {}
    for r in rows:
        if r.speedup == r.speedup and r.speedup > 0:
            groups.setdefault((r.op, r.variant), []).append(math.log(r.speedup))
    return {k: (math.exp(sum(v) / len(v)), len(v)) for k, v in groups.items()}


def parse_shapes(text: str | None, default):
    if not text:
        return default
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="flygemm bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated ops (default: all)")
    ap.add_argument("--shapes", help="comma-separated MxNxK, 'llm' for the 52-shape LLM set, or 'decode-sweep' "
                    "for M in 1..64 over DeepSeek-V3 and Llama-3-70B projections (default: a few large, "
                    "projection and decode shapes)")
    ap.add_argument("--dirty-l2", action="store_true", help="for M <= 64 also time with the L2 flush "
                    "triton's do_bench uses (a write, leaving L2 dirty), to show its cost")
    ap.add_argument("--kernel-time", action="store_true", help="also report the kernel time of every row "
                    "(GPU span of the call's kernels from CUPTI via torch.profiler, cold L2), without the "
                    "launch/event overhead the event timing includes")
    ap.add_argument("--device", default=None, help="cuda, cpu, ... (default: GPU if present)")
    ap.add_argument("--no-check", action="store_true", help="skip the oracle check (large shapes)")
    ap.add_argument("--variants", default=None, help="comma-separated variants to time instead of each op's "
                    "default ones: per_tensor / per_token (gemm_a8w8; per_tensor_fp16 / per_token_fp16 with fp16 "
                    "output, per_tensor_fp32 / per_token_fp32 with fp32 output), fp16 (gemm_a16w16 with fp16 operands "
                    "and output, gemm_a8w8_blockscale with fp16 output; '-' is bf16), fp32 (gemm_a16w16: bf16 "
                    "operands, fp32 output, against torch.mm(..., out_dtype=torch.float32)); each op times those it "
                    "knows, and one that knows none of them is an error")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-fast-accum", action="store_true", help="time the gemm_a8w8 peer "
                    "torch._scaled_mm with use_fast_accum=True (the accumulation flygemm's kernels use) "
                    "instead of torch's default")
    args = ap.parse_args(argv)
    global TORCH_FP8_FAST_ACCUM
    TORCH_FP8_FAST_ACCUM = args.torch_fast_accum
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cpu":
        print("flygemm bench: no GPU present, running the CPU oracle (reference semantics, not speed)",
              flush=True)
    named = {"llm": LLM_SHAPES, "decode-sweep": SWEEP_SHAPES}
    shapes = named[args.shapes] if args.shapes in named else parse_shapes(
        args.shapes, DEFAULT_SHAPES if device.type != "cpu" else CPU_SHAPES)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    info = flygemm.info()
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"flygemm {info['version']} on {name}; torch {torch.__version__}; backends {info['backends']}"
          f"; gemm_a8w8 peer use_fast_accum={TORCH_FP8_FAST_ACCUM}", flush=True)
    copy_bw = copy_bandwidth_gbps(device) if device.type == "cuda" else float("nan")
    floor_us = launch_floor_us(device) if device.type == "cuda" else float("nan")
    floor_kernel_us = launch_floor_us(device, True) if device.type == "cuda" and args.kernel_time else float("nan")
    if device.type == "cuda":
        print(f"device-to-device copy: {copy_bw:.0f} GB/s (read + write); one-element kernel timed the same "
              f"way: {floor_us:.1f} us (launch + event floor)"
              + (f", kernel time {floor_kernel_us:.1f} us" if args.kernel_time else ""), flush=True)
    rows = []
    for op in args.ops.split(","):
        for variant in op_variants(op, args.variants):
            for M, N, K in shapes:
                check = not args.no_check and M * N * K <= 2 ** 36
                rows.append(bench_one(op, variant, M, N, K, device, gen, check, args.dirty_l2, args.kernel_time))
                print(format_table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    if device.type == "cuda":
        for r in rows:
            r.extra["copy_bw_fraction"] = r.gbps / copy_bw
        print(f"copy bandwidth {copy_bw:.0f} GB/s; GB/s column / copy bandwidth = "
              + ", ".join(f"{r.op}:{r.variant}:{r.M}x{r.N}x{r.K}={r.extra['copy_bw_fraction']:.0%}"
                          for r in rows if r.M <= 64 and r.gbps == r.gbps))
    if args.kernel_time and device.type == "cuda":
        print(f"kernel time (GPU span of one call's kernels, cold L2); copy bandwidth {copy_bw:.0f} GB/s")
        print(format_kernel_time_table(rows, copy_bw))
        print()
    print(format_table(rows))
    for (op, variant), ratios in geomean_groups(rows).items():
        print(f"geometric mean torch/fly {op} {variant}: {ratios[0]:.3f} over {ratios[1]} shapes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "torch": torch.__version__, "copy_gbps": copy_bw, "launch_floor_us": floor_us,
                       "torch_fp8_fast_accum": TORCH_FP8_FAST_ACCUM,
                       "launch_floor_kernel_us": floor_kernel_us,
                       "rows": [asdict(r) for r in rows]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
