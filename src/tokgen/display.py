"""Notebook helpers: show a generator's source, say a measured sentence, save a figure.

Introduced in notebook 00_setup. Prose cells never hold measured numbers: a code cell reads
them from data/ and `say`s them.
"""

import functools
import inspect
from pathlib import Path

import pandas as pd


def show_source(obj):
    """The source of a function (or a registry name / partial) from src/, for display in a notebook."""
    from IPython.display import Code

    from .registry import get_generator

    if isinstance(obj, str):
        obj = get_generator(obj)
    header = ""
    if isinstance(obj, functools.partial):
        bound = ", ".join(f"{k}={v!r}" for k, v in obj.keywords.items())
        header = f"# registry entry: functools.partial({obj.func.__name__}, {bound})\n\n"
        obj = obj.func
    path = Path(inspect.getsourcefile(obj)).name
    return Code(f"# tokgen/{path}\n{header}{inspect.getsource(obj)}", language="python")


def say(text: str) -> None:
    """Render a Markdown sentence built from measured values."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def table(df: pd.DataFrame, columns: list[str] | None = None, digits: int = 1) -> str:
    """A Markdown table of `columns` (all by default), floats rounded to `digits`."""
    df = df if columns is None else df[columns]
    header = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(_cell(v, digits) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def _cell(value, digits: int) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:,.{digits}f}"
    return str(value)


def spread(row, unit: str = "ms", digits: int = 1) -> str:
    """ "median (q25–q75) unit" for a result row."""
    return f"{row['median_ms']:.{digits}f} {unit} ({row['q25_ms']:.{digits}f}–{row['q75_ms']:.{digits}f})"


def save_figure(fig, name: str, results_dir: str | Path) -> Path:
    """figures/<name>.png and .svg under `results_dir`; returns the PNG's path."""
    out = Path(results_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"{name}.svg", bbox_inches="tight")
    fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
    return out / f"{name}.png"


def plot_scaling(ax, results: dict[str, pd.DataFrame]):
    """Runtime vs max_seqlen on log-log axes, median with the interquartile range, fitted slope."""
    from .claims import slope

    for label, df in results.items():
        df = df.sort_values("max_seqlen")
        n, med = df["max_seqlen"], df["median_ms"]
        err = [med - df["q25_ms"], df["q75_ms"] - med]
        ax.errorbar(n, med, yerr=err, marker="o", capsize=3, label=f"{label}: slope {slope(n, med):.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("max_seqlen N (log)")
    ax.set_ylabel("runtime per generation, ms (log)")
    ax.legend()
    return ax


def plot_memory(ax, df: pd.DataFrame, label: str = "variant"):
    """Peak allocated memory and fragmentation (reserved - allocated), stacked to peak reserved."""
    x = range(len(df))
    ax.bar(x, df["peak_allocated_gb"], label="peak allocated")
    ax.bar(x, df["frag_gb"], bottom=df["peak_allocated_gb"], label="fragmentation (reserved − allocated)")
    ax.set_xticks(list(x), df[label], rotation=30, ha="right")
    ax.set_ylabel("GB")
    ax.legend()
    return ax


def plot_runtimes(ax, df: pd.DataFrame, label: str = "variant"):
    """Median runtime per variant with its interquartile range, fastest at the top."""
    df = df.sort_values("median_ms", ascending=False)
    y = range(len(df))
    err = [df["median_ms"] - df["q25_ms"], df["q75_ms"] - df["median_ms"]]
    ax.barh(list(y), df["median_ms"], xerr=err, capsize=3, color="C0")
    ax.set_yticks(list(y), df[label])
    ax.set_xlabel("runtime per generation, ms (median, IQR)")
    return ax


def show_claim(n: int, results_dir: str | Path) -> None:
    """The article's claim n, what we measured and the verdict, from data/ (notebooks 01-09)."""
    from .claims import claim

    c = claim(n, results_dir)
    say(
        f"**Article (claim {n}):** {c['article']}.  \n**Measured:** {c['measured']}.  \n"
        f"**Verdict: {c['verdict']}** ({c['criterion']})."
    )
