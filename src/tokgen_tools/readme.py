"""Write README.md's result tables from the CSVs in data/ (so they cannot drift from the data).

    python -m tokgen_tools.readme            # rewrite the blocks between <!-- tokgen:NAME --> markers
    python -m tokgen_tools.readme --check    # exit 1 if README.md differs from what the CSVs give

Every number in those blocks is read from data/; a table that is missing says "not measured".
"""

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from tokgen.claims import claims_by_regime, deferred_stop_gains, summary_results
from tokgen.display import spread, table
from tokgen.gpu_slice import L40S_GBS
from tokgen.registry import GENERATORS, label
from tokgen.results import ROOT, load

NAIVE, GENERATE_STATIC = label("naive"), label("generate() static")
NOT_MEASURED = "*Not measured yet: run `./run_all.sh` on a CUDA GPU.*"
BUDGET_MINUTES = 15  # the goal for each regime's run (issue 18)
READS_DATA_ONLY = {"09_summary"}  # ranks notebook 07's run and evaluates the claims: no GPU work


def _ok(name: str, results_dir: Path) -> pd.DataFrame | None:
    try:
        df = load(name, results_dir)
    except FileNotFoundError:
        return None
    return df[df["status"] == "ok"].copy() if "status" in df else df


def _iqr(df: pd.DataFrame) -> pd.Series:
    return df.apply(lambda r: spread(r, unit=""), axis=1)


def _summary(results_dir: Path) -> pd.DataFrame | None:
    try:
        return summary_results(results_dir)
    except (FileNotFoundError, KeyError):
        return None


def headline(results_dir: Path) -> str:
    summary, graphs = _summary(results_dir), _ok("10_cuda_graphs", results_dir)
    if summary is None:
        return NOT_MEASURED
    env = summary.iloc[0]
    s = summary.set_index("variant")
    best, recipe = summary.iloc[0]["variant"], label("pipelined_static", compiled=True)
    text = (
        f"On one **{env['gpu']}** (torch {env['torch']}, transformers {env['transformers']}), "
        f"B = {env['batch_size']}, N = {env['max_seqlen']}: "
        f"in notebook 07's interleaved run, the article's best recipe (compile + static cache + pipelining) "
        f"runs **×{s.loc[recipe, 'speedup_vs_naive']:.1f}** faster than the naive generator of that run "
        f"({s.loc[NAIVE, 'median_ms']:.0f} ms; the article reports ≈ 5× on an L40S); the fastest of the article's "
        f"generators there is `{best}` (×{s.loc[best, 'speedup_vs_naive']:.1f})."
    )
    if graphs is not None:
        g = graphs.set_index("variant")
        ours = graphs[graphs["generator"].isin(list(GENERATORS))].sort_values("median_ms").iloc[0]
        text += (
            f" Beyond the article, in notebook 10's interleaved run, `{ours['variant']}` (CUDA graphs, "
            f"notebook 10) generates in **{ours['median_ms']:.1f} ms**: "
            f"×{g.loc[NAIVE, 'median_ms'] / ours['median_ms']:.1f} over that run's naive "
            f"({g.loc[NAIVE, 'median_ms']:.0f} ms)"
        )
        if GENERATE_STATIC in g.index:
            ratio = g.loc[GENERATE_STATIC, "median_ms"] / ours["median_ms"]
            text += f' and ×{ratio:.2f} over `generate(cache_implementation="static")`'
        text += ", token-identical to naive on the article's batch."
    return text


def summary_table(results_dir: Path) -> str:
    df = _summary(results_dir)
    if df is None:
        return NOT_MEASURED
    out = pd.DataFrame(
        {
            "generator": df["variant"],
            "ms per generation, median (IQR)": _iqr(df),
            "speed-up vs naive": df["speedup_vs_naive"].map(lambda x: f"×{x:.2f}"),
            "ms per token": df["ms_per_step"].map(lambda x: f"{x:.2f}"),
            "GPU busy": df["gpu_busy_share"].map(lambda x: f"{x:.0%}" if x == x else "not measured")
            if "gpu_busy_share" in df
            else "not measured",
            "peak reserved GB": df["peak_reserved_gb"].map(lambda x: f"{x:.2f}"),
        }
    )
    return table(out)


def claims_block(results_dir: Path) -> str:
    c = claims_by_regime(results_dir, results_dir / "slice")
    if (c["verdict"] == "not measured").all():
        return NOT_MEASURED
    for column in ("stability", "stability (slice)"):
        c[column] = c[column].map(lambda x: f"{x:.0%}" if x == x else "")
    columns = ["#", "experiment", "article", "measured", "verdict", "stability", "verdict (slice)", "stability (slice)"]
    return table(c[columns])


def deferred_table(results_dir: Path) -> str:
    try:
        d = deferred_stop_gains(results_dir)
    except (FileNotFoundError, KeyError):
        return NOT_MEASURED
    where = d["gpu_sms"].map(lambda s: "whole GPU" if s == "all" else f"{s}-SM slice")
    confined = d["confined"].map(lambda c: "" if c == "whole GPU" else " (confined)" if c else " (NOT confined)")
    out = pd.DataFrame(
        {
            "where": where + confined,
            "cache": d["cache"],
            "GPU share of a sync step": d["gpu_share_sync"].map(lambda x: f"{x:.2f}"),
            "deferred vs sync": [
                f"{g['gain_pct']:+.1f}% (IQR {g['gain_q25_pct']:+.1f}…{g['gain_q75_pct']:+.1f}%), "
                f"p = {g['p_value']:.3f}"
                for g in d.to_dict("records")
            ],
            "real": d["real"].map(lambda r: "yes" if r else "no"),
            "transformers": d["transformers"],
        }
    )
    return table(out)


def beyond_table(results_dir: Path) -> str:
    df = _ok("10_cuda_graphs", results_dir)
    if df is None:
        return NOT_MEASURED
    by = df.set_index("variant")
    floors = _ok("12_speed_of_light", results_dir)
    # the rows of notebook 10's run only: notebook 12 keeps each run's rows apart
    floor = (
        floors[floors["notebook"].astype(str).str.zfill(2) == "10"].set_index("variant")["pct_of_own_floor"]
        if floors is not None
        else pd.Series(dtype=float)
    )
    df = df.sort_values("median_ms")
    out = pd.DataFrame(
        {
            "generator": df["variant"],
            "ms per generation, median (IQR)": _iqr(df),
            "vs naive": (by.loc[NAIVE, "median_ms"] / df["median_ms"]).map(lambda x: f"×{x:.1f}"),
            "% of bandwidth floor": df["variant"].map(lambda v: f"{floor[v]:.0f}%" if v in floor else "not measured"),
        }
    )
    if GENERATE_STATIC in by.index:
        out.insert(
            3,
            "vs generate() static",
            (by.loc[GENERATE_STATIC, "median_ms"] / df["median_ms"]).map(lambda x: f"×{x:.2f}"),
        )
    return table(out)


def products_table(results_dir: Path) -> str:
    df = _ok("12_products", results_dir)
    if df is None:
        return NOT_MEASURED
    one = df[df["splits"] == 1]
    rows = sorted(one["rows"].unique())
    out = one[one["rows"] == rows[0]].set_index("product")
    columns = {
        "weight MB": out["weight_mb"].map(lambda x: f"{x:.1f}"),
        "floor µs": out["floor_us"].map(lambda x: f"{x:.1f}"),
    }
    for r in rows:
        t = one[one["rows"] == r].set_index("product")
        columns[f"µs at {r} rows, median (IQR)"] = t.apply(lambda x: spread(x, unit="", key="us"), axis=1)
    columns[f"% of copy bandwidth at {rows[0]} rows"] = out["pct_of_copy_bandwidth"].map(lambda x: f"{x:.0f}%")
    for s in sorted(df["splits"].unique())[1:]:
        cut = df[(df["splits"] == s) & (df["rows"] == rows[0])].set_index("product")["median_us"]
        columns[f"split in {s}, {rows[0]} rows"] = (100 * (cut / out["median_us"] - 1)).map(lambda x: f"{x:+.0f}%")
    table_ = pd.DataFrame(columns).reset_index().rename(columns={"product": "product (alone, from a CUDA graph)"})
    return table(table_.fillna("not measured"))


def syncs_table(results_dir: Path) -> str:
    df = _ok("11_sync_audit", results_dir)
    if df is None:
        return NOT_MEASURED
    cols = {
        "generator": "generator",
        "local_scalar_dense_per_token": "`.item()` reads / token",
        "sync_debug_warnings_per_token": "sync-debug warnings / token",
        "stream_syncs_per_token": "stream syncs / token",
        "event_syncs_per_token": "event syncs / token",
    }
    return table(df[list(cols)].rename(columns=cols), digits=2)


def _timed_runs(notebook: str, results_dir: Path) -> str:
    """The timed runs per variant in a notebook's main table ("" where it times nothing)."""
    df = _ok(notebook, results_dir)
    if df is None or "runs" not in df or df.empty:
        return ""
    lo, hi = int(df["runs"].min()), int(df["runs"].max())
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _measured_runs(results_dir: Path) -> pd.DataFrame | None:
    """run_all.csv under `results_dir` without its smoke rows, commits shortened; None if there are none."""
    try:
        runs = load("run_all", results_dir)
    except FileNotFoundError:
        return None
    runs = runs[~runs["smoke"].astype(str).str.lower().eq("true")].copy()
    runs["commit"] = runs["commit"].astype(str).str.slice(0, 12)
    return None if runs.empty else runs


def timed_seconds(notebook: str, results_dir: Path) -> float:
    """Seconds notebook `notebook` spent in timed runs and first (warm-up) calls, summed from the
    `times_ms` and `first_call_ms` of every CSV it wrote (data/NN_*.csv); the rest of its wall time
    is kernel start, imports, compilation, graph capture, profiling and reporting."""
    total = 0.0
    for path in sorted((Path(results_dir) / "data").glob(f"{notebook[:2]}_*.csv")):
        df = pd.read_csv(path)
        if "times_ms" in df:
            total += sum(float(x) for s in df["times_ms"].dropna() for x in str(s).split(";") if x)
        if "first_call_ms" in df:
            total += float(df["first_call_ms"].fillna(0).sum())
    return total / 1000


def _budget(runs: pd.DataFrame) -> str:
    """Minutes in all against BUDGET_MINUTES, and how many of them the timed runs took (column
    "in timed runs (s)", from `timed_seconds`)."""
    minutes, timed = runs["seconds"].sum() / 60, runs["in timed runs (s)"].sum() / 60
    verdict = "within" if minutes <= BUDGET_MINUTES else "over"
    return (
        f"{minutes:.1f} min in all ({verdict} the {BUDGET_MINUTES}-minute goal), of which {timed:.1f} min in "
        f"timed runs and warm-up calls"
    )


def slice_choice(results_dir: Path) -> str:
    """Which slice notebook 13 chose as L40S-class in this run, and how close the runner-up came."""
    try:
        slices = load("13_slices", results_dir)
    except FileNotFoundError:
        return NOT_MEASURED
    slices = slices.assign(off=(slices["copy_gbs"] - L40S_GBS).abs())
    picked = slices["chosen"].astype(bool)  # notebook 13's choice, the one `run_all.sh --slice` runs in
    chosen, second = slices[picked].iloc[0], slices[~picked].sort_values("off").iloc[0]
    text = (
        f"In this run notebook 13 measured {len(slices)} slices and chose **{chosen['gpu_sms']} SMs** "
        f"({chosen['copy_gbs']:,.0f} GB/s of copy bandwidth, {chosen['off']:,.0f} GB/s from the L40S's "
        f"{L40S_GBS}); the next closest is {second['gpu_sms']} SMs ({second['copy_gbs']:,.0f} GB/s, "
        f"{second['off']:,.0f} GB/s away)."
    )
    if second["off"] - chosen["off"] < 0.1 * chosen["off"]:
        text += (
            " That is a near tie: the two slices bracket the L40S, and a run whose bandwidths come out a few "
            "percent differently picks the other one. The slice column below is the chosen slice's."
        )
    try:
        deferred = load("14_deferred_stop", results_dir)
        other = sorted({str(s) for s in deferred["gpu_sms"]} - {"all", str(chosen["gpu_sms"])})
        if other:
            text += (
                f" Notebook 14 measures the slice of its own `SLICE_SMS` parameter: {', '.join(other)} SMs in this run."
            )
    except FileNotFoundError:
        pass
    return text


def provenance(results_dir: Path) -> str:
    runs = _measured_runs(results_dir)
    if runs is None:
        return NOT_MEASURED
    env = runs.iloc[0]
    commits = sorted(set(runs["commit"]))
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    absent = [n for n in notebooks if n not in set(runs["notebook"])]
    runs["timed runs per variant"] = runs["notebook"].map(lambda n: _timed_runs(n, results_dir))
    runs["in timed runs (s)"] = runs["notebook"].map(lambda n: timed_seconds(n, results_dir))
    ok = sum(runs["status"] == "ok")
    if len(commits) == 1:
        timing = (
            f"- one commit, {commits[0]}: {ok} of {len(runs)} notebooks ok; their wall times (a fresh "
            f"Jupyter kernel each, compilation included): {_budget(runs)}"
        )
    else:
        timing = (
            f"- not one run yet: the notebooks below ran at {len(commits)} commits ({', '.join(commits)}), "
            f"in separate calls; their times: {_budget(runs)} ({ok} of {len(runs)} ok)"
        )
    if not absent:
        coverage = "- every notebook of the repository is in the table below"
    else:
        coverage = f"- not yet executed on a GPU: {', '.join(absent)}" + (
            f" ({', '.join(sorted(READS_DATA_ONLY))} only reads data/)" if set(absent) <= READS_DATA_ONLY else ""
        )
    lines = [
        f"- GPU: {env['gpu']}, driver {env['driver']}, CUDA {env['cuda']}",
        f"- torch {env['torch']}, transformers {', '.join(sorted(set(runs['transformers'].astype(str))))} "
        f"(per notebook below), Python {env['python']}",
        timing,
        coverage,
        "",
        table(
            runs[
                [
                    "notebook",
                    "status",
                    "seconds",
                    "in timed runs (s)",
                    "timed runs per variant",
                    "transformers",
                    "commit",
                ]
            ],
            digits=0,
        ),
        *_slice_provenance(results_dir / "slice"),
    ]
    return "\n".join(lines)


def _slice_provenance(slice_dir: Path) -> list[str]:
    """The slice's run (`run_all.sh --slice`): its notebooks, times, commits and the parameters it set."""
    runs = _measured_runs(slice_dir)
    if runs is None:
        return ["", "The L40S-class slice: not run yet (`./run_all.sh --slice`)."]
    runs["parameters set"] = runs["parameters"].map(
        lambda p: ", ".join(f"{k} = {v}" for k, v in json.loads(p).items() if k != "RESULTS_DIR")
    )
    runs["in timed runs (s)"] = runs["notebook"].map(lambda n: timed_seconds(n, slice_dir))
    return [
        "",
        f"The L40S-class slice (`slice/`; {', '.join(sorted(set(runs['gpu'])))}, torch "
        f"{', '.join(sorted(set(runs['torch'].astype(str))))}, transformers "
        f"{', '.join(sorted(set(runs['transformers'].astype(str))))}): {len(runs)} notebooks at "
        f"{', '.join(sorted(set(runs['commit'])))}: {_budget(runs)}.",
        "",
        table(runs[["notebook", "status", "seconds", "in timed runs (s)", "parameters set", "commit"]], digits=0),
    ]


BLOCKS = {
    "headline": headline,
    "summary": summary_table,
    "claims": claims_block,
    "deferred": deferred_table,
    "beyond": beyond_table,
    "products": products_table,
    "syncs": syncs_table,
    "provenance": provenance,
    "slice": slice_choice,
}


def render(text: str, results_dir: Path) -> str:
    """README text with every <!-- tokgen:NAME --> ... <!-- /tokgen:NAME --> block regenerated."""
    for name, make in BLOCKS.items():
        pattern = re.compile(rf"(<!-- tokgen:{name} -->\n).*?(<!-- /tokgen:{name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"README has no <!-- tokgen:{name} --> block")
        text = pattern.sub(lambda m, make=make: m.group(1) + make(results_dir) + "\n" + m.group(2), text)
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tokgen_tools.readme", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md is not what the CSVs give")
    parser.add_argument("--results-dir", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    path = ROOT / "README.md"
    current = path.read_text()
    wanted = render(current, args.results_dir)
    if args.check:
        if wanted != current:
            print("README.md differs from the tables the CSVs in data/ give: run `python -m tokgen_tools.readme`.")
            return 1
        print("README.md tables match data/.")
        return 0
    path.write_text(wanted)
    print("README.md tables regenerated from data/.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
