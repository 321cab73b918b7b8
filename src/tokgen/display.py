"""Notebook helpers: show a generator's source, say a measured sentence, tables and figures.

Introduced in notebook 00_setup. Prose cells never hold measured numbers: a code cell reads
them from data/ and `say`s them.
"""

import functools
import inspect
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Code, Markdown, display

from .claims import claim
from .registry import get_generator
from .stats import gain, slope, speedup_text


def show_source(obj):
    """The source of a function or class (or a registry name / partial) from src/ (notebook 00_setup)."""
    if isinstance(obj, str):
        obj = get_generator(obj)
    header = ""
    if isinstance(obj, functools.partial):
        bound = ", ".join(f"{k}={v!r}" for k, v in obj.keywords.items())
        header = f"# registry entry: functools.partial({obj.func.__name__}, {bound})\n\n"
        obj = obj.func
    obj = inspect.unwrap(obj)  # torch.inference_mode() wraps the generators
    path = Path(inspect.getsourcefile(obj)).name
    return Code(f"# tokgen/{path}\n{header}{inspect.getsource(obj)}", language="python")


def say(text: str) -> None:
    """Render a Markdown sentence built from measured values (notebook 00_setup)."""
    display(Markdown(text))


def table(df: pd.DataFrame, columns: list[str] | None = None, digits: int = 1) -> str:
    """A Markdown table of `columns` (all by default), floats rounded to `digits` (notebook 00_setup)."""
    df = df if columns is None else df[columns]
    header = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(_cell(v, digits) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def _cell(value, digits: int) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:,.{digits}f}"
    return str(value)


def spread(row, unit: str = "ms", digits: int = 1, key: str = "ms") -> str:
    """ "median (q25–q75) unit" for a result row, the one way every table and sentence writes it
    (notebook 01_naive). `key` picks the columns: median_<key>, q25_<key>, q75_<key>."""
    med, lo, hi = row[f"median_{key}"], row[f"q25_{key}"], row[f"q75_{key}"]
    return f"{med:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f}){' ' + unit if unit else ''}"


def bound(share: float) -> str:
    """ "host" under half a step's GPU share, "GPU" from half on, "" unmeasured (notebook 05_torch_compile)."""
    return "" if share != share else "host" if share < 0.5 else "GPU"


def bound_table(results: pd.DataFrame) -> str:
    """Per variant, the wall time of a step and the part of it in which the GPU was busy: under
    half, the host sets the pace (notebooks 05, 07, 08). Needs `compare(..., gpu_busy=True)` rows."""
    busy = results["gpu_busy_ms"] / results["steps"]
    out = pd.DataFrame(
        {
            "variant": results["variant"],
            "ms per step (wall)": results["ms_per_step"],
            "GPU busy ms per step": busy,
            "GPU share": results["gpu_busy_share"],
            "bound": results["gpu_busy_share"].map(bound),
        }
    )
    return table(out, digits=2)


def finding(results: pd.DataFrame, base: str, variant: str) -> str:
    """One takeaway read from a run: `variant` against `base` (medians, the speed-up, the signed-rank
    verdict) and, where profiled, which bound `variant`'s steps are in (notebook 05_torch_compile)."""
    g = gain(results, base, variant)
    if g is None:
        return f"`{variant}` against `{base}`: not measured in this run."
    rows = results.set_index("variant")
    text = (
        f"`{variant}` against `{base}`: {rows.at[base, 'median_ms']:.0f} → {rows.at[variant, 'median_ms']:.0f} ms "
        f"per generation, {speedup_text(g)}"
    )
    share = rows.at[variant, "gpu_busy_share"] if "gpu_busy_share" in rows else float("nan")
    if share == share:
        text += f"; the GPU is busy {share:.0%} of its steps: {bound(share)}-bound"
    return text + "."


def save_figure(fig, name: str, results_dir: str | Path) -> None:
    """figures/<name>.png and .svg under `results_dir` (notebook 01_naive)."""
    out = Path(results_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.svg", bbox_inches="tight")
    fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")


def plot_scaling(ax, results: dict[str, pd.DataFrame]):
    """Runtime vs max_seqlen on log-log axes, median with the interquartile range, fitted slope (notebook 01)."""
    for name, df in results.items():
        df = df.sort_values("max_seqlen")
        n, med = df["max_seqlen"], df["median_ms"]
        err = [med - df["q25_ms"], df["q75_ms"] - med]
        ax.errorbar(n, med, yerr=err, marker="o", capsize=3, label=f"{name}: slope {slope(n, med):.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("max_seqlen N (log)")
    ax.set_ylabel("runtime per generation, ms (log)")
    ax.legend()
    return ax


def plot_memory(ax, df: pd.DataFrame, name: str = "variant"):
    """Peak allocated memory and fragmentation (reserved - allocated), stacked to peak reserved (notebook 01)."""
    x = range(len(df))
    ax.bar(x, df["peak_allocated_gb"], label="peak allocated")
    ax.bar(x, df["frag_gb"], bottom=df["peak_allocated_gb"], label="fragmentation (reserved − allocated)")
    ax.set_xticks(list(x), df[name], rotation=30, ha="right")
    ax.set_ylabel("GB")
    ax.legend()
    return ax


def plot_runtimes(ax, df: pd.DataFrame, name: str = "variant"):
    """Median runtime per variant with its interquartile range, fastest at the top (notebook 04)."""
    df = df.sort_values("median_ms", ascending=False)
    y = range(len(df))
    err = [df["median_ms"] - df["q25_ms"], df["q75_ms"] - df["median_ms"]]
    ax.barh(list(y), df["median_ms"], xerr=err, capsize=3, color="C0")
    ax.set_yticks(list(y), df[name])
    ax.set_xlabel("runtime per generation, ms (median, IQR)")
    return ax


# --- helpers introduced in notebooks 01-08 (tables, sentences, figures) ---


def plot_timeline(timeline, steps, ax=None, title: str = ""):
    """CPU ranges on top, one row of kernels per CUDA stream below, for a few steps (notebook 06).

    `steps` are window-relative step indices (see tokgen.profiling.Timeline); CPU rows need a
    `cpu=True` profile.
    """
    steps = list(steps)
    k = timeline.kernels[timeline.kernels["step"].isin(steps)]
    if k.empty:
        raise ValueError(f"no kernels recorded for steps {steps}")
    t0, t1 = k["start"].min(), k["end"].max()
    r = timeline.ranges
    r = r[(r["end"] >= t0 - 50) & (r["start"] <= t1)]
    lanes = [("step", "C0"), ("model forward", "C2"), ("sync wait", "C3")]
    streams = sorted(k["stream"].dropna().unique())
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.0 + 0.5 * (len(lanes) + len(streams))))
    y, labels = 0, []
    for lane, color in lanes:
        rows = r[r["name"].str.startswith(lane)]
        ax.broken_barh(list(zip(rows["start"] - t0, rows["end"] - rows["start"])), (y, 0.8), color=color, alpha=0.7)
        labels.append(f"CPU: {lane}")
        y -= 1
    for stream in streams:
        s = k[k["stream"] == stream]
        ax.broken_barh(list(zip(s["start"] - t0, s["end"] - s["start"])), (y, 0.8), color="C1")
        labels.append(f"GPU stream {int(stream)}")
        y -= 1
    ax.set_yticks([-i + 0.4 for i in range(len(labels))], labels)
    ax.set_xlabel("time since the first kernel shown (µs)")
    ax.set_title(title)
    return ax


def plot_step_boundary(ax, timeline, step: int, margin_us: float = 150.0, title: str = ""):
    """A zoom on the end of `step` and the start of the next: kernels at their true width, the
    GPU's idle intervals shaded and labelled in µs, CPU ranges above, the idle share in the
    title (notebook 06). On a whole-window axis a 100 µs gap is thinner than a line."""
    k = timeline.kernels
    end, start = k[k["step"] == step]["end"].max(), k[k["step"] == step + 1]["start"].min()
    t0, t1 = end - margin_us, start + margin_us
    shown = k[(k["end"] >= t0) & (k["start"] <= t1)].sort_values("start")
    r = timeline.ranges[(timeline.ranges["end"] >= t0) & (timeline.ranges["start"] <= t1)]
    for y, (lane, color) in enumerate([("sync wait", "C3"), ("model forward", "C2"), ("step", "C0")], start=1):
        rows = r[r["name"].str.startswith(lane)]
        ax.broken_barh(list(zip(rows["start"] - t0, rows["end"] - rows["start"])), (y, 0.8), color=color, alpha=0.7)
    ax.broken_barh(list(zip(shown["start"] - t0, shown["end"] - shown["start"])), (0, 0.8), color="C1")
    busy_end, idle = None, 0.0
    for a, b in zip(shown["start"], shown["end"]):
        if busy_end is not None and a > busy_end:
            ax.axvspan(busy_end - t0, a - t0, color="red", alpha=0.15)
            if a - busy_end >= 5:
                ax.annotate(f"{a - busy_end:.0f} µs", ((busy_end + a) / 2 - t0, 0.9), ha="center", fontsize=8)
            idle += a - busy_end
        busy_end = b if busy_end is None else max(busy_end, b)
    span = shown["end"].max() - shown["start"].min()
    ax.set_yticks([0.4, 1.4, 2.4, 3.4], ["GPU (all streams)", "CPU: sync wait", "CPU: model forward", "CPU: step"])
    ax.set_xlim(0, t1 - t0)
    ax.set_xlabel("µs since the zoom's start")
    ax.set_title(f"{title} GPU idle {idle / span:.0%} of this zoom (shaded)")
    return ax


# --- helpers introduced in notebooks 10-12 and 14 ---


# --- helpers introduced in notebooks 09 and 13 ---


def plot_regime_map(ax, regimes: pd.DataFrame, hidden_by: str):
    """Speed-up of `hidden_by` over the synchronous generator against the GPU share of a step, one
    colour per place (whole GPU, each slice), circles eager and squares compiled, the per-round IQR
    as bars, the ±5% band of "no effect" shaded, each point labelled with its batch size (notebook 13)."""
    places = list(dict.fromkeys(regimes["where"]))
    for i, place in enumerate(places):
        for compiled, marker in ((False, "o"), (True, "s")):
            d = regimes[(regimes["where"] == place) & (regimes["compiled"] == compiled)]
            err = [d["speedup"] - d["speedup_q25"], d["speedup_q75"] - d["speedup"]]
            ax.errorbar(d["gpu_share"], d["speedup"], yerr=err, fmt=marker, color=f"C{i}", capsize=3, alpha=0.85,
                        label=f"{place}, {'compiled' if compiled else 'eager'}")  # fmt: skip
            for r in d.itertuples():  # labels beside the point, nudged apart per place
                ax.annotate(f"B={r.batch_size}", (r.gpu_share, r.speedup), xytext=(5, 4 - 6 * i),
                            textcoords="offset points", fontsize=7, color=f"C{i}")  # fmt: skip
    ax.axhspan(1 / 1.05, 1.05, color="grey", alpha=0.15, lw=0, label="no effect (±5%)")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_ylim(max(0.5, regimes["speedup_q25"].min() - 0.05), min(2.0, regimes["speedup_q75"].max() + 0.05))
    ax.set_xlabel("GPU share of a synchronous step (GPU busy / wall time)")
    ax.set_ylabel(f"speed-up of {hidden_by} over sync (×, median and IQR)")
    ax.legend(fontsize=7, loc="upper left")
    return ax


def show_claim(n: int, results_dir: str | Path) -> None:
    """The article's claim n, what we measured and the verdict, from data/ (notebooks 01-09)."""
    c = claim(n, results_dir)
    say(
        f"**Article (claim {n}):** {c['article']}.  \n**Measured:** {c['measured']}.  \n"
        f"**Verdict: {c['verdict']}.**  \nCriterion: {c['criterion']}."
    )
