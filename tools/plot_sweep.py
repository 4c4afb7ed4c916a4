"""Plot the decode sweep of `python -m flygemm bench --shapes decode-sweep --json FILE`.

For each (op, scaling) and model (python/flygemm/bench.py SWEEP_MODELS) it draws the achieved
bandwidth against M for flygemm and torch, with the device-to-device copy bandwidth measured in
the same run as the ceiling. A model's bandwidth at one M is its layers' bytes over their summed
times (one decode step through the model's projections), so a slow small layer weighs what it
costs. Also prints that table as Markdown for docs/PERF.md.

    python tools/plot_sweep.py docs/measurements/<run>.json --png docs/perf/decode-sweep.png
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))
from flygemm.bench import SWEEP_M, SWEEP_MODELS  # noqa: E402  (pure data; needs no library)


def row_times(r: dict, kernel_time: bool) -> tuple[float, float]:
    """(flygemm us, torch us) of a row: event times, or with kernel_time the GPU kernel spans that
    `bench --kernel-time` recorded (NaN where the run did not record them)."""
    if not kernel_time:
        return r["flygemm_us"], r["torch_us"]
    nan = float("nan")
    return r["extra"].get("flygemm_kernel_us", nan), r["extra"].get("torch_kernel_us", nan)


def model_bandwidth(rows: list[dict], model: str, op: str, variant: str, kernel_time: bool = False) -> dict:
    """M -> (flygemm GB/s, torch GB/s) over the model's layers, or None where a layer is missing."""
    layers = set(SWEEP_MODELS[model])
    out = {}
    for m in SWEEP_M:
        sel = [r for r in rows if r["op"] == op and r["variant"] == variant and r["M"] == m
               and (r["N"], r["K"]) in layers]
        if len(sel) != len(layers):
            continue
        nbytes = sum(r["extra"]["bytes"] for r in sel)
        fly_us = sum(row_times(r, kernel_time)[0] for r in sel)
        torch_us = sum(row_times(r, kernel_time)[1] for r in sel)
        if fly_us != fly_us:
            continue
        out[m] = (nbytes / fly_us / 1e3, nbytes / torch_us / 1e3 if torch_us == torch_us else float("nan"))
    return out


def op_variants(rows: list[dict]) -> list[tuple[str, str]]:
    seen = []
    for r in rows:
        key = (r["op"], r["variant"])
        if key not in seen:
            seen.append(key)
    return seen


def markdown(data: dict, copy_gbps: float) -> str:
    lines = [f"Copy bandwidth in the same run: {copy_gbps:.0f} GB/s. Cells: flygemm / torch GB/s "
             "(fraction of copy bandwidth for flygemm).", "",
             "| op | scaling | model | " + " | ".join(f"M={m}" for m in SWEEP_M) + " |",
             "|---|---|---|" + "---|" * len(SWEEP_M)]
    for (op, variant, model), bw in data.items():
        cells = [f"{bw[m][0]:.0f} / {bw[m][1]:.0f} ({bw[m][0] / copy_gbps:.0%})" if m in bw else "-"
                 for m in SWEEP_M]
        lines.append(f"| {op} | {variant} | {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(data: dict, copy_gbps: float, keys: list, png: pathlib.Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(SWEEP_MODELS)
    fig, axes = plt.subplots(len(keys), len(models), figsize=(5.5 * len(models), 3.2 * len(keys)),
                             squeeze=False, sharex=True)
    for i, (op, variant) in enumerate(keys):
        for j, model in enumerate(models):
            ax = axes[i][j]
            bw = data.get((op, variant, model), {})
            ms = sorted(bw)
            ax.plot(ms, [bw[m][0] for m in ms], "o-", label="flygemm")
            ax.plot(ms, [bw[m][1] for m in ms], "s--", label="torch")
            ax.axhline(copy_gbps, color="gray", linestyle=":", label="copy bandwidth")
            ax.set_xscale("log", base=2)
            ax.set_xticks(list(SWEEP_M), [str(m) for m in SWEEP_M])
            ax.set_ylim(0, copy_gbps * 1.1)
            ax.set_title(f"{op} {variant if variant != '-' else ''} — {model}", fontsize=9)
            ax.set_ylabel("GB/s")
            if i == len(keys) - 1:
                ax.set_xlabel("M (tokens)")
            if i == 0 and j == 0:
                ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", type=pathlib.Path, help="bench --json output of a decode-sweep run")
    ap.add_argument("--png", type=pathlib.Path, help="write the plot here")
    ap.add_argument("--kernel-time", action="store_true", help="use the kernel spans of a `bench --kernel-time` "
                    "run instead of the event times (no launch / event overhead)")
    args = ap.parse_args(argv)
    run = json.loads(args.json.read_text())
    rows = run["rows"]
    keys = op_variants(rows)
    data = {(op, variant, model): model_bandwidth(rows, model, op, variant, args.kernel_time)
            for op, variant in keys for model in SWEEP_MODELS}
    data = {k: v for k, v in data.items() if v}
    if not data:
        print(f"{args.json}: no complete decode-sweep model in this run", file=sys.stderr)
        return 1
    print(markdown(data, run["copy_gbps"]))
    if args.png:
        plot(data, run["copy_gbps"], [k for k in keys if any(d[:2] == k for d in data)], args.png,
             f"{run['device']}, torch {run['torch']}: decode GEMM bandwidth vs M (cold L2, "
             + ("kernel time)" if args.kernel_time else "event time)"))
        print(f"wrote {args.png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
