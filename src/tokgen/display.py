"""Notebook helpers: show a generator's source, say a measured sentence, tables and figures.

Introduced in notebook 00_setup. Prose cells never hold measured numbers: a code cell reads
them from data/ and `say`s them.
"""

import functools
import inspect
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
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


def plain_log_axis(axis) -> None:
    """A log-scaled axis with ticks at 1, 2, 3 and 5 times the powers of ten, written as plain numbers
    ("50", "100", "200"): no mantissa × exponent labels to collide (notebook 10_cuda_graphs)."""
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1, 2, 3, 5)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def plot_dots(df: pd.DataFrame, label: str, value: str, *, group: str | None = None, low: str | None = None,
              high: str | None = None, log: bool = False, xlabel: str = "", ax=None):  # fmt: skip
    """One row per `label` (in the table's order, the first at the top), a dot at `value`, a bar
    from `low` to `high` where given, one colour per `group` with a legend outside the axes: on a
    log axis a dot keeps its meaning where a bar's length does not. The figure grows with the rows
    (notebooks 10, 11 and 12)."""
    labels = list(dict.fromkeys(df[label]))
    groups = list(dict.fromkeys(df[group])) if group else [None]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 1.2 + 0.3 * len(labels)))
    y = {name: len(labels) - 1 - i for i, name in enumerate(labels)}
    step = 0.6 / len(groups)
    shared = df.groupby(label)[group].nunique() > 1 if group else pd.Series(False, index=labels)  # offset those
    for j, g in enumerate(groups):
        d = df if g is None else df[df[group] == g]
        ys = [y[n] + ((len(groups) - 1) / 2 * step - j * step if shared[n] else 0.0) for n in d[label]]
        err = None if low is None else [d[value] - d[low], d[high] - d[value]]
        ax.errorbar(d[value], ys, xerr=err, fmt="o", color=f"C{j}", capsize=2, label=None if g is None else str(g))
    ax.set_yticks(list(y.values()), list(y))
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.grid(axis="x", alpha=0.3)
    if log:
        ax.set_xscale("log")
        plain_log_axis(ax.xaxis)
    ax.set_xlabel(xlabel)
    if group:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return ax


def plot_runtime_vs_k(ax, results: pd.DataFrame, floor_ms: float | None = None):
    """Median time per generation (IQR bars) against K, one line per generator timed at several K,
    and the task's floor when given; the y axis from 0 (notebook 10_cuda_graphs)."""
    graphs = results[results["steps_per_graph"].notna()]
    for generator, runs in graphs.groupby("generator"):
        if runs["steps_per_graph"].nunique() > 1:
            runs = runs.sort_values("steps_per_graph")
            err = [runs["median_ms"] - runs["q25_ms"], runs["q75_ms"] - runs["median_ms"]]
            ax.errorbar(runs["steps_per_graph"], runs["median_ms"], yerr=err, marker="o", capsize=3, label=generator)
    if floor_ms is not None and floor_ms == floor_ms:
        ax.axhline(floor_ms, color="gray", linestyle="--", label="the task's floor")
    ks = sorted(graphs["steps_per_graph"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [f"{k:g}" for k in ks])
    ax.set_ylim(bottom=0)
    ax.set(xlabel="K = decode steps per graph replay", ylabel="ms per generation", title="Runtime vs K")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return ax


def stop_token(row, step: int) -> tuple[int, int]:
    """(token, column) of the first token that a generation (`row`: its tokens, the prompt in column
    0) generates for the first time at column `step` or later: as the EOS id, it stops that
    generation after exactly `column` steps (the prompt is never checked). When no token first
    appears that late, the last one that first appears before it (notebooks 10 and 14)."""
    first = {}
    for column, token in enumerate(row[1:], start=1):
        first.setdefault(int(token), column)
    if not first:
        raise ValueError("the row holds no generated token")
    firsts = sorted((column, token) for token, column in first.items())
    later = [(c, t) for c, t in firsts if c >= step]
    column, token = later[0] if later else firsts[-1]
    return token, column


def sync_reading(audit: pd.DataFrame) -> list[str]:
    """Sentences on where the counting methods of `tokgen.count_syncs` differ, one per pattern of
    counts, from an audit with one row per generator (notebook 11_sync_audit)."""
    out = []
    device = audit["device_syncs"]
    if device.nunique() == 1:
        out.append(
            f"Every row shows {int(device.iloc[0])} device-wide sync{'s' * (int(device.iloc[0]) != 1)} per run, the "
            "no-check generators included: "
            "the `synchronize()` with which `count_syncs` ends its profiled run, not the generator's. "
            "The table leaves that column out."
        )
    keys = ["local_scalar_dense", "sync_debug_warnings", "stream_syncs", "event_syncs"]
    for (r, w, s, e), rows in audit.groupby(keys, sort=False):
        reasons = []
        if w > r:
            reasons.append(
                f"{w - r} of the {w} flagged syncs read no value through `.item()` (a stream wait such as "
                "`Stream.synchronize()`, or an operation whose result's size is data-dependent, like `nonzero()`)"
            )
        if s != w:
            reasons.append(
                f"the profiled run saw {s} stream waits where the debug mode flagged {w} syncs: the two counts come "
                "from two runs and two mechanisms, and the debug mode also flags synchronizing calls that are not "
                "stream waits"
            )
        if e:
            reasons.append(f"{e} event waits (`Event.synchronize()`), which the debug mode does not flag")
        if reasons:
            names = ", ".join(f"`{g}`" for g in rows["generator"])
            tokens = int(rows["tokens"].iloc[0])
            out.append(f"{names} (per run of {tokens} tokens, {r} `.item()` reads): " + "; ".join(reasons) + ".")
    return out


def product_findings(products: pd.DataFrame, rows: int, layers: int) -> list[str]:
    """Sentences on GPT-2's products timed alone (notebook 12's table `12_products`): one step's
    products at `rows` rows against their floor, bytes against time, more rows, a split sum
    (notebook 12_speed_of_light). Time ratios are ratios of medians."""
    ok = products[products["status"] == "ok"]
    base = ok[(ok["rows"] == rows) & (ok["splits"] == 1)].set_index("product")
    if base.empty or "LM head" not in base.index:
        return [f"*No product was timed at {rows} rows with an undivided sum.*"]
    layer = base.drop("LM head")
    per_step = layers * layer["median_us"].sum() + base.loc["LM head", "median_us"]
    floor = layers * layer["floor_us"].sum() + base.loc["LM head", "floor_us"]
    small, large = layer["weight_mb"].idxmin(), layer["weight_mb"].idxmax()
    out = [
        f"At {rows} rows, one step's products ({layers} layers' and the LM head) timed alone add up to "
        f"**{per_step:.0f} µs**; reading their weights at copy speed takes **{floor:.0f} µs**.",
        f"The {large} product reads {base.loc[large, 'weight_mb'] / base.loc[small, 'weight_mb']:.0f}× the bytes "
        f"of the {small} product and takes {base.loc[large, 'median_us'] / base.loc[small, 'median_us']:.1f}× its "
        f"time ({base.loc[large, 'median_us']:.1f} vs {base.loc[small, 'median_us']:.1f} µs).",
    ]
    for more in sorted(set(ok["rows"]) - {rows}):
        ratio = ok[(ok["rows"] == more) & (ok["splits"] == 1)].set_index("product")["median_us"] / base["median_us"]
        out.append(
            f"With {more} rows ({more / rows:g}× the arithmetic, the same weight bytes) the products take "
            f"{ratio.min():.2f}× to {ratio.max():.2f}× their time at {rows} rows."
        )
    for split in sorted(set(ok["splits"]) - {1}):
        cut = ok[(ok["rows"] == rows) & (ok["splits"] == split)].set_index("product")["median_us"]
        speedup = (base["median_us"] / cut).dropna()
        out.append(
            f"Cut into {split} batched products, they run ×{speedup.min():.2f} to ×{speedup.max():.2f} as fast "
            f"(fastest: {speedup.idxmax()}; slowest: {speedup.idxmin()}; the sum of the partial results not counted)."
        )
    return out


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
