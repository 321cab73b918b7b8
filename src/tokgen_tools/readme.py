"""Write README.md's result tables from the CSVs in data/ (so they cannot drift from the data).

    python -m tokgen_tools.readme            # rewrite the blocks between <!-- tokgen:NAME --> markers
    python -m tokgen_tools.readme --check    # exit 1 if README.md differs from what the CSVs give

Every number in those blocks is read from data/; a table that is missing says "not measured".
"""

import argparse
import functools
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from packaging.version import InvalidVersion, Version
from transformers import GPT2LMHeadModel

from tokgen.bandwidth import floor_table, gb_per_s
from tokgen.claims import (
    CLAIMS,
    SLICES_VS_L40S,
    Tables,
    agreed_claims,
    claim_tables,
    claims_by_regime,
    deferred_stop_gains,
    gain_ruled_out,
    generator_text,
    recipe_gains,
    recipe_row_note,
    regime_sources,
    slice_runs,
    slices_bracket,
    summary_results,
    verdicts_overview,
)
from tokgen.display import deferred_gain_text
from tokgen.gpu_slice import L40S_GBS, bracketing
from tokgen.model import gpt2_config
from tokgen.regimes import map_scope, paid, regime_gains, slices_note, within_band
from tokgen.registry import GENERATORS, label
from tokgen.results import ROOT, load, read_table
from tokgen.stats import BAND, FASTER, gain, shared_rounds
from tokgen.voice import (
    CONFINED_RATIO,
    HOST_BOUND,
    HOST_DRIFT,
    count_text,
    first_tied,
    rank_text,
    ranking,
    shared_rounds_note,
    shared_rounds_text,
    speedup_cell,
    speedup_text,
    spread,
    table,
    tie_reason,
    two_runs_text,
)

NAIVE, GENERATE_STATIC = label("naive"), label("generate() static")
RANK_LEGEND = (
    "*Rank: 1 + the number of generators shown faster than it (really faster round by round and not shown to lie "
    "within ±5% of it; see *real* in the glossary), directly or through one shown faster (a beats b and b beats "
    "c: both count against c, even where c is shown within ±5% of a); generators shown within ±5% of each other "
    "share the better rank, one such pair after another, unless that puts one beside or above a generator shown "
    "faster than it. Only a cycle of such wins (a beats b, b beats c, c beats a) shares one rank among generators "
    "that beat each other (`tokgen.voice.ranking`). Two of different ranks need not differ from each other (one "
    "may be beaten by a third that does not beat the other): compare them directly. Each pair is tested at its "
    "own level, not adjusted for the number of pairs. Never ordered by median.*"
)
NOT_MEASURED = "*Not measured yet: run `./run_all.sh` on a CUDA GPU.*"
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
    """Notebook 07's run ranked against naive, each median, ms per step and GPU share over the rounds
    every variant ran (`tokgen.stats.shared_rounds`)."""
    try:
        return shared_rounds(summary_results(results_dir))
    except (FileNotFoundError, KeyError):
        return None


def _paired(g: dict) -> str:
    """A table cell: the paired speed-up with its outcome, as `speedup_text` says it."""
    return speedup_text(g) if g else "not measured"


def summary_table(results_dir: Path) -> str:
    df = _summary(results_dir)
    if df is None:
        return NOT_MEASURED
    out = pd.DataFrame(
        {
            "rank": df.apply(rank_text, axis=1),
            "generator": df.apply(generator_text, axis=1),
            "speed-up vs naive (paired rounds)": [  # naive against itself: a dash, as the other tables (rvC12 N7)
                "—" if r["variant"] == "naive" else
                _paired({k.removesuffix("_vs_naive"): v for k, v in r.items() if k.endswith("_vs_naive")})
                for r in df.to_dict("records")
            ],
            "ms per generation, median (IQR)": _iqr(df),
            "ms per decode step": df["ms_per_step"].map(lambda x: f"{x:.2f}"),
            "GPU busy": df["gpu_busy_share"].map(lambda x: f"{x:.0%}" if x == x else "not measured")
            if "gpu_busy_share" in df
            else "not measured",
            "peak reserved GB": df["peak_reserved_gb"].map(lambda x: f"{x:.2f}"),
        }
    )
    notes = [n for n in (recipe_row_note(df), shared_rounds_note(df)) if n]
    return table(out) + "\n\n" + RANK_LEGEND + "".join(f"\n\n{n}" for n in notes)


def _claims(results_dir: Path):
    """The claims in every regime, computed once per state of the CSVs they read (resampling them takes seconds)."""
    slices = slice_runs(results_dir, results_dir / "slice")
    state = tuple((str(p), p.stat().st_mtime_ns) for folder in (results_dir, *slices.values())
                  for p in sorted(Path(folder, "data").glob("*.csv")))  # fmt: skip
    return _claims_of(Path(results_dir), tuple(slices.items()), state), ["whole GPU", *slices]


@functools.lru_cache(maxsize=4)
def _claims_of(results_dir: Path, slices: tuple, state: tuple) -> pd.DataFrame:
    return claims_by_regime(results_dir, dict(slices))


def _numbers(values) -> str:
    """ "1–5, 8": sorted numbers (or two-digit notebook prefixes, as written), three or more in a row as a range."""
    values = sorted(set(values), key=int)
    runs, out = [], []
    for v in values:
        if runs and int(v) == int(runs[-1][-1]) + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    for r in runs:
        out += [f"{r[0]}–{r[-1]}"] if len(r) >= 3 else r
    return ", ".join(out)


def claim_runs(results_dir: Path) -> dict:
    """Per claim on the whole GPU, the run its verdict reads (`tokgen.claims.claim_tables`): {n: (GPU, commits,
    notebooks)}, the GPU names joined, "" where no table it reads was found; the claims of one run's README
    lines name the GPU each claim ran on (review rv19A M1)."""
    state = tuple((str(p), p.stat().st_mtime_ns) for p in sorted(Path(results_dir, "data").glob("*.csv")))
    return _claim_runs(Path(results_dir), state)


@functools.lru_cache(maxsize=4)
def _claim_runs(results_dir: Path, state: tuple) -> dict:
    out = {}
    for n in CLAIMS:
        names = claim_tables(n, results_dir)
        frames = [load(name, results_dir) for name in names]
        gpus = sorted({str(g) for f in frames if "gpu" in f for g in f["gpu"].dropna()})
        commits = sorted({str(c)[:7] for f in frames if "commit" in f for c in f["commit"].dropna()})
        out[n] = (", ".join(gpus), tuple(commits), tuple(sorted({name[:2] for name in names})))
    return out


def _by_gpu(runs: dict) -> dict:
    """{GPU: [claims]} from `claim_runs`, in the order of each GPU's first claim."""
    by = {}
    for n, (gpu, _, _) in runs.items():
        by.setdefault(gpu, []).append(n)
    return by


def claims_block(results_dir: Path) -> str:
    """The ten claims in three regimes, one verdict (stability) a cell; below, why each undecided
    verdict is undecided, and what was measured (folded)."""
    claims, regimes = _claims(results_dir)
    if (claims["verdict"] == "not measured").all():
        return NOT_MEASURED
    overview = verdicts_overview(claims, regimes).assign(claim=claims["article"])
    runs = claim_runs(results_dir)
    if len({(g, c) for g, c, _ in runs.values() if g}) > 1:  # the whole-GPU column holds several runs (rv19A M1)
        run = lambda n: f"{runs[n][0]}, {', '.join(runs[n][1])}"  # noqa: E731
        overview["whole GPU"] = [(f"{v[:-1]}; {run(n)})" if v.endswith(")") else f"{v} ({run(n)})") if runs[n][0]
                                 else v for n, v in zip(overview["#"], overview["whole GPU"])]  # fmt: skip
    slices = slice_runs(results_dir, results_dir / "slice")
    lines = ["Where each column was measured:\n" + regime_sources(results_dir, slices), "",
             table(overview[["#", "experiment", "claim", *regimes, *(["the two slices"] * (len(regimes) == 3))]])]
    for regime in regimes:
        suffix = "" if regime == "whole GPU" else f" ({regime})"
        why = [f"claim {r['#']}: {r[f'why{suffix}']}" for r in claims.to_dict("records") if r[f"why{suffix}"]]
        if why:
            lines += ["", f"Undecided, {regime}: " + "; ".join(why) + "."]
    details = []
    for regime in regimes:
        suffix = "" if regime == "whole GPU" else f" ({regime})"
        if (claims[f"verdict{suffix}"] == "not measured").all():
            continue
        details += ["", f"**{regime}**", "", table(claims[["#", f"measured{suffix}"]].rename(
            columns={f"measured{suffix}": "what was measured"}))]  # fmt: skip
    lines += ["", "<details><summary>What was measured, claim by claim</summary>", *details, "", "</details>"]
    return "\n".join(lines)


def criteria_block(results_dir: Path) -> str:
    """Each claim's criterion as the claims table judges it (`tokgen.claims.CLAIMS`), folded: the README's
    claims table has no room for a criterion column (review rvD14 S7). Reads no data."""
    rows = pd.DataFrame([{"#": n, "claim": claim, "criterion": criterion}
                         for n, (_, claim, criterion, _) in CLAIMS.items()])  # fmt: skip
    return "\n".join(["<details><summary>The criterion each verdict applies, claim by claim</summary>", "",
                      table(rows), "", "</details>"])


def _pipelining(folder) -> str:
    """Claim 7's two comparisons in one regime's run of notebook 07: pipelined against the loop that
    syncs every step, eager and compiled."""
    try:
        run = Tables(folder)["07_pipelining"]
    except (FileNotFoundError, KeyError):
        return "not measured"
    pairs = {"eager": (label("kv_static"), label("pipelined_static")),
             "compiled": (label("kv_static", compiled=True), label("pipelined_static", compiled=True))}  # fmt: skip
    gains = {m: gain(run, base, new) for m, (base, new) in pairs.items()}  # undecided may still rule out (rvD14 S3)
    return "; ".join(f"{m} {_paired(g)}{gain_ruled_out(g)}" for m, g in gains.items())


def disagreeing(claims: pd.DataFrame) -> pd.DataFrame:
    """The claims whose slices disagree (`tokgen.claims.agreement_of_slices`' words), not those whose
    agreement carries a note that a verdict "depends" on something (review r9)."""
    return claims[claims["slices"].str.startswith("the slices disagree")]


def whole_gpu_words(runs: dict, verdict: pd.Series, recipe_gpu: str) -> tuple[str, str, str]:
    """The whole-GPU findings line's label, where its notebook-07 sentences ran, and its claims tallied, from
    `claim_runs` (`verdict`: claim -> base verdict; `recipe_gpu`: notebook 07's GPU): with one GPU "Whole <GPU>",
    "", "" (the tally as before); where the claims read tables of several GPU models, each GPU with its claims
    and notebooks, and the claims tallied per GPU (review rv19A M1, rv19B M2)."""
    by = _by_gpu(runs)
    if len(by) <= 1:
        return f"Whole {recipe_gpu}", "", ""

    def part(gpu, ns):
        notebooks = _numbers({nb for n in ns for nb in runs[n][2]})
        gpu = gpu or "no GPU (not measured)"
        return f"claims {_numbers(map(str, ns))} from notebooks {notebooks} on the {gpu}"

    whole = f"Whole GPU, {len(by)} GPU models: " + "; ".join(part(g, ns) for g, ns in by.items())
    claimed = "Its ten claims: " + "; ".join(
        f"on the {g or 'no GPU'} ({_numbers(map(str, ns))}) "
        + ", ".join(f"{k} {v}" for v, k in verdict[ns].value_counts().items()) for g, ns in by.items()) + "."
    return whole, f" (notebook 07, on the {recipe_gpu})", claimed


def findings(results_dir: Path) -> str:
    """The first screen: five lines, each read from the data, with links to where it comes from: per
    regime the article's recipe against naive and pipelining against the synchronous loop (claim 7,
    the article's thesis), the verdicts counted; then beyond the article."""
    summary = _summary(results_dir)
    if summary is None:
        return NOT_MEASURED
    env = summary.iloc[0]
    claims, regimes = _claims(results_dir)
    slices = slice_runs(results_dir, results_dir / "slice")
    recipe = recipe_gains(results_dir, slices)
    said = {r: g if isinstance(g, str) else speedup_text(g) for r, g in recipe.items()}
    counts = {
        r: claims[f"verdict{'' if r == 'whole GPU' else f' ({r})'}"].map(lambda v: v.split(" (")[0]).value_counts()
        for r in regimes
    }
    tally = lambda r: ", ".join(f"{n} {v}" for v, n in counts[r].items())  # noqa: E731
    verdict = claims.set_index("#")["verdict"].map(lambda v: v.split(" (")[0])
    whole, on07, claimed = whole_gpu_words(claim_runs(results_dir), verdict, str(env["gpu"]))
    claimed = claimed or f"Its ten claims: {tally('whole GPU')}."
    lines = [
        f"- **{whole}** ([notebooks 01–09](notebooks/09_summary.ipynb)): the article's best recipe "
        f"(compile + static cache + pipelining) against the naive generator, round by round{on07}: "
        f"{said['whole GPU']}; the article reports nearly 5× on an L40S. Pipelining against the loop that syncs "
        f"every step (claim 7, the article's thesis{on07.replace(' (', '; ').rstrip(')')}): "
        f"{_pipelining(results_dir)}. {claimed} {_host_bound(summary)}"
    ]
    if len(regimes) == 3:
        agree = claims[claims["slices"].str.startswith("both slices agree")]
        differ = disagreeing(claims)
        ran = [r for r in regimes[1:] if set(counts[r].index) != {"not measured"}]
        verdicts = " ".join(
            f"**{r}**: the recipe against naive {said[r]}; pipelining against the synchronous loop "
            f"{_pipelining(slices[r])}; claims: {tally(r)}." if r in ran else f"**{r}**: not run yet."
            for r in regimes[1:]
        )  # fmt: skip
        bracketed = slices_bracket(results_dir, slices)
        settled = (
            f" They agree on claim(s) {agreed_claims(agree)}, at the sizes both ran"
            + (f" (of the L40S, {SLICES_VS_L40S})" if bracketed else "")
            if len(agree)
            else " They agree on no claim yet"
        ) + (f", and disagree on {', '.join(map(str, differ['#']))}." if len(differ) else ".")
        which = ("Two slices that bracket the L40S's bandwidth" if bracketed else
                 "Two slices, which do not bracket the L40S's bandwidth on this GPU")  # fmt: skip
        lines.append(
            f"- **{which}** ([notebook 13](notebooks/13_regimes.ipynb)): "
            f"{verdicts}" + (settled if len(ran) == 2 else "")
        )
    lines += [_beyond_line(results_dir), _regimes_line(results_dir), _deferred_line(results_dir)]
    return "\n".join(line for line in lines if line)


def headline(results_dir: Path) -> str:
    """The first screen's result, read from the data: the article's recipe against naive on the whole
    GPU, and our fastest generator against the floor (notebooks 07, 10 and 12)."""
    summary = _summary(results_dir)
    if summary is None:
        return NOT_MEASURED
    recipe = recipe_gains(results_dir, {})["whole GPU"]
    text = (f"**Found on the whole {summary.iloc[0]['gpu']}:** the article's best recipe against the naive "
            f"generator, round by round, {recipe if isinstance(recipe, str) else speedup_text(recipe)} (the article: "
            "nearly 5× on an L40S)")  # fmt: skip
    graphs, floor = _ok("10_cuda_graphs", results_dir), _floors(results_dir)
    ranked = _fastest(graphs) if graphs is not None and NAIVE in set(graphs["variant"]) else pd.DataFrame()
    if len(ranked) and ranked.iloc[0]["variant"] in floor.index:
        first, shared = floor.loc[ranked.iloc[0]["variant"]], int((ranked["rank"] == 1).sum())
        row = graphs.set_index("variant").loc[ranked.iloc[0]["variant"]]
        who = ("our fastest generator" if shared == 1 else
               f"the first listed of our {shared} generators tied for fastest (each shown within ±{BAND:.0%} of "
               "the first)"
               if first_tied(ranked) else f"the first listed of our {shared} generators sharing rank 1 (notebook 10 "
               "says why each shares it)")  # fmt: skip
        others = ranked[(ranked["rank"] == 1) & ranked["tied"]].iloc[1:]["variant"]  # named too (review rv20B N1)
        also = "".join(f", and `{v}`, {floor.at[v, 'median_ms']:.1f} ms," for v in others if v in floor.index)
        text += (f"; {who}, `{ranked.iloc[0]['variant']}`, {first['median_ms']:.1f} ms{also} per generation of "
                 f"B = {row['batch_size']}, N = {row['max_seqlen']} (median); the first "
                 f"{first['times_task_floor']:.2f}× the task's bandwidth floor "
                 f"({_floor_basis(results_dir)})")  # fmt: skip
    return text + ". The three regimes' verdicts are below; what each regime found, after them."


def _host_bound(summary: pd.DataFrame) -> str:
    """How many of the article's cached generators leave the GPU idle most of a step (notebook 07's run)."""
    cached = summary[summary["variant"] != NAIVE]
    share = cached["gpu_busy_share"] if "gpu_busy_share" in cached else pd.Series(dtype=float)
    if share.isna().all():
        return ""
    idle, measured = int((share < 0.5).sum()), int(share.notna().sum())
    over = shared_rounds_text(cached.set_index("variant"))
    return (
        f"{'All' if idle == measured else idle} of its {measured} cached variants leave the GPU idle more "
        f"than half of a run (GPU busy {share.min():.0%}–{share.max():.0%} of the wall time"
        f"{f', {over}' if over else ''}), so the host sets their pace."
    )


def _fastest(graphs: pd.DataFrame) -> pd.DataFrame:
    """Notebook 10's registry generators ranked by paired speed-up over that run's naive generator."""
    return ranking(graphs, NAIVE, list(graphs[graphs["generator"].isin(list(GENERATORS))]["variant"]))


def _beyond_line(results_dir: Path) -> str:
    graphs = _ok("10_cuda_graphs", results_dir)
    if graphs is None or NAIVE not in set(graphs["variant"]):
        return ""
    ranked = _fastest(graphs)
    if ranked.empty:
        return ""
    first = ranked.iloc[0]
    ours = graphs.set_index("variant").loc[first["variant"]]
    shared = int((ranked["rank"] == 1).sum())
    who = ("the fastest of our generators, ranked round by round" if shared == 1 else
           f"{shared} of our generators share the first rank, ranked round by round; the first of them")
    text = (
        f"- **Beyond the article** ([notebook 10](notebooks/10_cuda_graphs.ipynb)): {who}, "
        f"`{first['variant']}`, generates B = {ours['batch_size']}, "
        f"N = {ours['max_seqlen']} in {spread(ours, unit='ms')} (median, IQR); against naive {speedup_text(first)}"
    )
    if GENERATE_STATIC in set(graphs["variant"]):
        text += f"; against `generate()` static {speedup_text(gain(graphs, GENERATE_STATIC, first['variant']))}"
    tied = ranked[(ranked["rank"] == 1) & ranked["tied"]].iloc[1:]
    if len(tied):
        text += "; sharing rank 1 with " + ", ".join(
            f"`{r['variant']}` ({tie_reason(r['vs_leader'])})" for r in tied.to_dict("records"))
    floor = _floors(results_dir)
    if "times_task_floor" in floor and first["variant"] in floor.index:
        text += (f"; {floor.at[first['variant'], 'times_task_floor']:.2f}× the task's bandwidth floor "
                 f"({_floor_basis(results_dir)})")  # fmt: skip
    return text + _baseline_drift(graphs, results_dir) + "."


def _baseline_drift(graphs: pd.DataFrame, results_dir: Path) -> str:
    """`_beyond_line`'s clause where notebook 10's naive median lies more than HOST_DRIFT either way from notebook
    07's on the same card (gpu_uuid) at the same commit (its median over the rounds every interleaved variant ran,
    `_summary`): both medians (two runs, not paired: no ratio of them), the threshold that brings the clause, both
    GPU busy times, and that the speed-ups against the baselines whose GPU is busy under half the time here
    (HOST_BOUND: naive, `generate()` static, which notebook 07 does not time) are this run's (reviews rv23C S1: naive
    ran 1208.7 against 591.7 ms, its GPU busy the same, and every speed-up against it doubled; rr23c S1); "" where
    no such run or the two lie within it."""
    seven = _same_run(_summary(results_dir), graphs)
    if seven is None or NAIVE not in set(seven["variant"]):
        return ""
    here, there = graphs.set_index("variant"), seven.set_index("variant")
    ratio = here.at[NAIVE, "median_ms"] / there.at[NAIVE, "median_ms"]
    if not ratio == ratio or 1 / HOST_DRIFT <= ratio <= HOST_DRIFT:
        return ""
    busy = [here.at[NAIVE, "gpu_busy_ms"], there.at[NAIVE, "gpu_busy_ms"]] if "gpu_busy_ms" in here and \
        "gpu_busy_ms" in there else []  # fmt: skip
    busy = f", the GPU busy {busy[0]:.1f} against {busy[1]:.1f} ms" if busy and pd.notna(busy).all() else ""
    share = here["gpu_busy_share"] if "gpu_busy_share" in here else pd.Series(dtype=float)
    bases = [v for v in (NAIVE, GENERATE_STATIC) if v in share.index and share[v] < HOST_BOUND]
    under = f"GPU busy under {HOST_BOUND:.0%} of the wall time here"
    named = {NAIVE: f"naive (its {under})",  # as the line names them; notebook 07 times no `generate()` (rr23c S1)
             GENERATE_STATIC: f"`generate()` static (no second run of it; its {under}"
                              + (", as naive's)" if NAIVE in bases else ")")}  # fmt: skip
    if NAIVE in bases and GENERATE_STATIC in bases:
        named[NAIVE] = "naive"
    bound = (f": read the speed-ups against {', and against '.join(named[v] for v in bases)} as this run's"
             if bases else "")  # fmt: skip
    return (f"; naive's median here, {here.at[NAIVE, 'median_ms']:.1f} ms, against notebook 07's "
            f"{there.at[NAIVE, 'median_ms']:.1f} ms on the same card and commit (two separate runs, not paired: "
            f"said where they lie more than ×{HOST_DRIFT:g} apart either way){busy}{bound}")  # fmt: skip


def _floor_basis(results_dir: Path) -> str:
    """Which copy bandwidth the Beyond table's floors use: notebook 10's own (data/10_bandwidth.csv, its last
    row), the floor as notebook 12 defines it (review rv20B S3: "(notebook 12)" read as notebook 12's run)."""
    copies = _ok("10_bandwidth", results_dir)
    gbs = float(copies["bandwidth_gb_s"].iloc[-1]) if copies is not None and len(copies) else float("nan")
    return f"at notebook 10's copy bandwidth, {gbs:,.0f} GB/s; the floor as notebook 12 defines it"


def _regimes_line(results_dir: Path) -> str:
    try:
        regimes = regime_gains(load("13_regimes", results_dir))
    except FileNotFoundError:  # notebook 13 not run here: no line (a point it could not measure is said below)
        return ""
    piped = regimes[regimes["hidden_by"] == "pipelined_static"]
    lost = regimes.attrs.get("not_measured", [])
    lost = f"; {len(lost)} point(s) or comparison(s) not measured (notebook 13 names them)" if lost else ""
    if piped.empty:
        return ("- **Where hiding the sync pays** ([notebook 13](notebooks/13_regimes.ipynb)): not measured, no "
                f"point of pipelining against the check was measured{lost}.")  # fmt: skip
    pays = piped[paid(piped)].sort_values("gpu_share")  # as notebook 13 says "paid": a gain within ±5% is a tie
    unshared = int(pays["gpu_share"].isna().sum())  # a share not measured (a lost profiler session): said, not lowest
    pays = pays[pays["gpu_share"].notna()]
    where = f"{count_text(piped['outcome'], 'points')}{within_band(piped)}"
    whole = piped["where"] == "whole GPU"  # by place: the pattern a count over all points hides
    split = {"on the whole GPU": piped[whole], "in the slices": piped[~whole]}
    where += "; faster (real) at " + ", ".join(f"{int((g['outcome'] == FASTER).sum())} of {len(g)} points {place}"
                                               for place, g in split.items() if len(g))  # fmt: skip
    if len(pays):
        low = pays.iloc[0]
        where += (f"; the lowest GPU share where it paid (faster for real, not shown within ±{BAND:.0%}): "
                  f"{low['gpu_share']:.2f} ({low['where']}, "
                  f"B = {low['batch_size']}, {'compiled' if low['compiled'] else 'eager'})")  # fmt: skip
    if unshared:  # review rrA13 S4: the points it paid at whose share the profiler lost
        where += (f"; {'' if len(pays) else 'it paid at '}{unshared} {'more ' if len(pays) else ''}point(s) whose GPU "
                  "share was not measured")  # fmt: skip
    return (
        f"- **Where hiding the sync pays** ([notebook 13](notebooks/13_regimes.ipynb)): pipelining the stop "
        f"check against the GPU's share of a step, on the whole GPU and in slices, eager and compiled, "
        f"{map_scope(piped)}: {where}{lost}."
    )


def _deferred_line(results_dir: Path) -> str:
    try:
        d = deferred_stop_gains(results_dir)
    except (FileNotFoundError, KeyError):
        return ""
    compared = d["outcome"].map(lambda o: isinstance(o, str))  # no comparison: a variant failed or left its slice
    placed = d["confined"].map(lambda c: c == "whole GPU" or c is True or c is np.True_)  # ran where it says
    counted = d[placed & compared]
    outside = int((d["confined"].map(lambda c: c is False or c is np.False_) & compared).sum())
    failed = int((~compared).sum())
    unmeasured = len(d) - len(counted) - outside - failed
    return (
        "- **transformers' own deferred stop check** ([notebook 14](notebooks/14_deferred_stop.ipynb)), "
        f"forced on for CUDA, against the check at every step, {count_text(counted['outcome'], 'places and caches')}"
        + (f"; {outside} more, taken as run outside its slice (inferred from its GPU busy time: within "
           f"{CONFINED_RATIO:g}× of the whole GPU's), is not counted" if outside else "")
        + (f"; {unmeasured} more, whose confinement was not measured, is not counted" if unmeasured else "")
        + (f"; {failed} more not measured (a variant failed or left its slice), not counted" if failed else "")
        + "."
    )


def deferred_table(results_dir: Path) -> str:
    try:
        d = deferred_stop_gains(results_dir)
    except (FileNotFoundError, KeyError):
        return NOT_MEASURED
    where = d["gpu_sms"].map(lambda s: "whole GPU" if s == "all" else f"{s}-SM slice")
    confined = d["confined"].map(
        lambda c: "" if c == "whole GPU" else " (confinement not measured)" if pd.isna(c) else " (confined, inferred)"
        if c else " (NOT confined, inferred)"
    )  # fmt: skip
    out = pd.DataFrame(
        {
            "where": where + confined,
            "cache": d["cache"],
            "GPU share of a sync step": d["gpu_share_sync"].map(lambda x: f"{x:.2f}" if x == x else "not measured"),
            "deferred vs sync (speed-up)": [deferred_gain_text(g) for g in d.to_dict("records")],
            "transformers": d["transformers"],
        }
    )
    return table(out)


def _same_card_tflops(light: pd.DataFrame | None, copy: pd.Series) -> float | None:
    """Notebook 12's last TF32 throughput (data/12_bandwidth.csv) measured on the card and at the commit
    of notebook 10's copy row `copy`: a throughput is one card's, so None where no row matches both (or
    either file does not name them)."""
    keys = ("gpu_uuid", "commit")
    if light is None or "matmul_tflops" not in light or any(k not in light or pd.isna(copy.get(k)) for k in keys):
        return None
    same = light[(light["gpu_uuid"].astype(str) == str(copy["gpu_uuid"])) & (light["commit"].astype(str) ==
                                                                             str(copy["commit"]))]  # fmt: skip
    tflops = same["matmul_tflops"].dropna()
    return float(tflops.iloc[-1]) if len(tflops) else None


def _floors(results_dir: Path) -> pd.DataFrame:
    """Notebook 10's run against its floors, by variant, computed now (`tokgen.bandwidth.floor_table`)
    from its rows, its model size and the copy bandwidth it measured (data/10_bandwidth.csv, its last
    row), with the TF32 throughput notebook 12 recorded only where it measured it on the same card
    (gpu_uuid) at the same commit as that bandwidth (`_same_card_tflops`; else the arithmetic-bound
    rows get their bytes-only floor, a lower bound; review rvC15 S1): the current arithmetic on that
    run's measurements, not a floor column stored by an older notebook. Empty if not measured."""
    graphs, copies = _ok("10_cuda_graphs", results_dir), _ok("10_bandwidth", results_dir)
    if graphs is None or copies is None or graphs.empty or copies.empty:
        return pd.DataFrame()
    tflops = _same_card_tflops(_ok("12_bandwidth", results_dir), copies.iloc[-1])
    with torch.device("meta"):  # the model's shapes only: no weights, no GPU
        model = GPT2LMHeadModel(gpt2_config(json.loads(graphs["params"].iloc[0]).get("SIZE", "gpt2")))
    floors = floor_table(graphs, model, float(copies["bandwidth_gb_s"].iloc[-1]), tflops)
    return floors.set_index("variant")


def _same_run(rows: pd.DataFrame | None, of: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of `rows` recorded on the card (gpu_uuid) and at the commit of `of`'s last row; None where
    either does not name them or none matches."""
    keys = ("gpu_uuid", "commit")
    if rows is None or of is None or of.empty or any(k not in rows or k not in of for k in keys):
        return None
    last = of.iloc[-1]
    same = rows[(rows["gpu_uuid"].astype(str) == str(last["gpu_uuid"])) & (rows["commit"].astype(str) ==
                                                                          str(last["commit"]))]  # fmt: skip
    return same if len(same) else None


def run_line(frames: dict, bandwidth: str) -> str:
    """The line under a README table that names its run: each table's commit, GPU UUID and start
    (`tokgen_tools.quick.table_runs`) and the copy bandwidth its floors use (`bandwidth`, its own words);
    notebook 10's Beyond table and notebook 12's products table (review rv20B M1: two cards, two commits,
    two bandwidths in one section, nothing said)."""
    from tokgen_tools.quick import table_runs

    return f"*Run: {table_runs(frames)}; {bandwidth}.*"


def at_least_pct(pct: float) -> str:
    """A lower bound's percentage rounded down, never up past what was measured: one decimal below 10%, "2.5%" for
    2.586, else whole, "35%" for 35.9 (review rr15 N3: "3% or more" overstated a bound of 2.59%)."""
    return f"{math.floor(pct * 10) / 10:.1f}%" if pct < 10 else f"{math.floor(pct):.0f}%"


def beyond_table(results_dir: Path) -> str:
    """Notebook 10's run ranked by paired speed-up over its naive generator (ties shared), each
    against naive and `generate()` static round by round, and its distance to the floor (notebook 12)."""
    df = _ok("10_cuda_graphs", results_dir)
    if df is None or NAIVE not in set(df["variant"]):
        return NOT_MEASURED
    ranked = ranking(df, NAIVE)
    by = df.set_index("variant")
    floor = _floors(results_dir)

    def own_floor(row):  # a floor of bytes alone is a lower bound where the arithmetic was not measured
        if row["bound_by"].startswith("bytes (") and row["kv_read"] == "recompute":
            return f"{at_least_pct(row['pct_of_own_floor'])} or more (bytes only)"
        return f"{row['pct_of_own_floor']:.0f}%"

    def from_floor(column, fmt):
        return ranked["variant"].map(lambda v: fmt(floor.at[v, column]) if column in floor and v in floor.index
                                     else "not measured")  # fmt: skip


    out = pd.DataFrame(
        {
            "rank": ranked.apply(rank_text, axis=1),
            "generator": ranked["variant"],
            "ms per generation, median (IQR)": ranked["variant"].map(lambda v: spread(by.loc[v], unit="")),
            "vs naive (paired)": [speedup_cell(g) for g in ranked.to_dict("records")],
        }
    )
    if GENERATE_STATIC in by.index:
        static = ranked["variant"].map(lambda v: speedup_cell(gain(df, GENERATE_STATIC, v)))
        out["vs generate() static (paired)"] = static
    out["own floor / time"] = ranked["variant"].map(lambda v: own_floor(floor.loc[v]) if v in floor.index
                                                    else "not measured")  # fmt: skip
    out["GB/s (the bytes it must move / time)"] = from_floor("rate_gb_s", lambda x: f"{x:,.0f}")  # rv19B S4
    out["× the task's floor"] = from_floor("times_task_floor", lambda x: f"{x:.2f}×")
    note = shared_rounds_note(df)
    rates = ("*GB/s: the bytes each generator's cache layout makes it read (a static cache's empty slots included) "
             "over its time, so a generator that reads fewer bytes can show fewer GB/s and still be faster: not a "
             "ranking (notebook 10 explains it).*")  # review rv20B N3
    return (table(out) + "\n\n" + RANK_LEGEND + f"\n\n{rates}" + (f"\n\n{note}" if note else "") + "\n\n"
            + _beyond_run(results_dir))  # fmt: skip


def _beyond_run(results_dir: Path) -> str:
    """The Beyond table's run line: notebook 10's commit, card and start, and the copy bandwidth its floors
    use (data/10_bandwidth.csv's last row), with notebook 12's TF32 row where one of the same run is used; where
    none is, that no TF32 throughput of this card and commit was recorded, and which rows (those that recompute
    the sequence: naive) have a bytes-only floor, a lower bound (review rv23C N2)."""
    graphs, copies = _ok("10_cuda_graphs", results_dir), _ok("10_bandwidth", results_dir)
    frames = {"10_cuda_graphs": graphs}
    if copies is None or copies.empty or "bandwidth_gb_s" not in copies:
        return run_line(frames, "no copy bandwidth recorded, so no floors")
    frames["10_bandwidth"] = copies.iloc[[-1]]
    light = _same_run(_ok("12_bandwidth", results_dir), copies)
    if light is not None and "matmul_tflops" in light and light["matmul_tflops"].notna().any():
        frames["12_bandwidth"] = light.iloc[[-1]]
    gbs = float(copies["bandwidth_gb_s"].iloc[-1])
    said = f"floors at notebook 10's own copy bandwidth, {gbs:,.0f} GB/s (data/10_bandwidth.csv)"
    if _same_card_tflops(_ok("12_bandwidth", results_dir), copies.iloc[-1]) is None:  # review rv23C N2
        try:
            floors = _floors(results_dir)
        except KeyError:  # rows without the model's parameters: no floors to name
            floors = pd.DataFrame()
        bytes_only = list(floors.index[floors["kv_read"] == "recompute"]) if "kv_read" in floors else []
        said += ("; no TF32 throughput recorded by notebook 12 on this card at this commit"
                 + (f": {' and '.join(f'`{v}`' for v in bytes_only)}'s own floor is its bytes only, a lower bound"
                    if bytes_only else ""))  # fmt: skip
    return run_line(frames, said)


def reruns_note(results_dir: Path) -> str:
    """The sentence above the Beyond table: notebook 10 timed naive and the article's recipe again, and both
    runs' medians, GPU busy times and host probes side by side (`two_runs_text`; review rvC16 S1); notebook 07's
    medians over the rounds every interleaved variant ran, each GPU busy time one profiled generation after that run's
    timed rounds (reviews rv21B S3, rr21d N7)."""
    intro = ("Notebook 10's own interleaved run: the naive generator and the article's recipe were timed again "
             "there, beside our generators, so their numbers differ from notebook 07's run above.")  # fmt: skip
    graphs, summary = _ok("10_cuda_graphs", results_dir), _summary(results_dir)
    if graphs is None or summary is None:
        return intro
    runs = {"notebook 10's": graphs.set_index("variant"), "notebook 07's": summary.set_index("variant")}
    shown = [NAIVE, label("pipelined_static", compiled=True)]
    said = two_runs_text(runs, shown)
    over = shared_rounds_text(runs["notebook 07's"], [v for v in shown if v in runs["notebook 07's"].index])
    said += f" Notebook 07's medians here are {over}." if said and over else ""  # rv20B N2
    # rv21B S3: a GPU busy time is one profiled generation after a run's rounds, whatever rounds a median is over
    # rr21d N7: and says when it was taken
    busy = " Each GPU busy time is one profiled generation after that run's timed rounds."
    said += busy if "GPU busy" in said else ""
    return f"{intro} {said}" if said else intro


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
    rate = gb_per_s(out["weight_mb"] * 1e6, out["median_us"] / 1e3)  # the weight's bytes over the median (rv19B S4)
    columns[f"weight GB/s at {rows[0]} rows"] = rate.map(lambda x: f"{x:,.0f}")  # its weight only (rr20h N1)
    for s in sorted(df["splits"].unique())[1:]:  # its own timings, no ratio of medians (notebook 12 pairs the rounds)
        cut = df[(df["splits"] == s) & (df["rows"] == rows[0])].set_index("product")
        columns[f"µs split in {s}, {rows[0]} rows, median (IQR)"] = cut.apply(lambda x: spread(x, unit="", key="us"),
                                                                               axis=1)  # fmt: skip
    table_ = pd.DataFrame(columns).reset_index().rename(columns={"product": "product (alone, from a CUDA graph)"})
    return table(table_.fillna("not measured")) + "\n\n" + _products_run(df, results_dir)


BANDWIDTH_AGREE = 0.005  # the cited bandwidth and the one the floors imply, apart by more: both named


def _products_run(df: pd.DataFrame, results_dir: Path) -> str:
    """The products table's run line: notebook 12's commit, card and start, the copy bandwidth its floor µs
    and % of copy bandwidth were computed with (its weight bytes over its floor), named as notebook 10's
    measurement where notebook 12 used it (its 12_bandwidth `source`; review rv21B N5), with the start of the
    10_bandwidth row whose value it took, and none where no row of that run gives it (review rr21d N2),
    and whether that is another run than the Beyond table's (review rv20B M1). The bandwidth is the one that run's
    12_bandwidth row records (review rv23C N3), else the products' weight bytes over their floor µs; where the
    two lie more than BANDWIDTH_AGREE apart, both (review rr23c N5)."""
    ok = df[df["floor_us"].notna() & (df["floor_us"] > 0)] if "floor_us" in df else df.iloc[:0]
    frames = {"12_products": df}
    light = _same_run(_ok("12_bandwidth", results_dir), df)
    if light is not None:
        frames["12_bandwidth"] = light.iloc[[-1]]
    whose = "notebook 12's copy bandwidth"
    if light is not None and "source" in light and str(light["source"].iloc[-1]) == "notebook 10":
        whose = "notebook 10's copy bandwidth measurement (10_bandwidth), as notebook 12 used it"  # rv21B N5
        ten = _same_run(_ok("10_bandwidth", results_dir), light)
        if ten is not None and "bandwidth_gb_s" in ten and "bandwidth_gb_s" in light:
            used = pd.to_numeric(ten["bandwidth_gb_s"], errors="coerce") == float(light["bandwidth_gb_s"].iloc[-1])
            if used.any():  # the row whose value notebook 12 took; none: no start (review rr21d N2)
                frames["10_bandwidth"] = ten[used.to_numpy()].iloc[[-1]]  # its start in the run line
    implied = float((ok["weight_mb"] / ok["floor_us"] * 1e3).median()) if len(ok) else float("nan")  # MB/µs = TB/s
    if ok.empty:
        said = "no floor recorded"
    elif light is not None and "bandwidth_gb_s" in light and pd.notna(light["bandwidth_gb_s"].iloc[-1]):
        gbs = float(light["bandwidth_gb_s"].iloc[-1])
        said = f"floors at {whose}, {gbs:,.0f} GB/s (data/12_bandwidth.csv)"  # N3
        if abs(implied / gbs - 1) > BANDWIDTH_AGREE:  # not the bandwidth the floors were computed with (rr23c N5)
            said = (f"floors at {whose}: {gbs:,.0f} GB/s recorded (data/12_bandwidth.csv), but the floors imply "
                    f"{implied:,.0f} GB/s (the products' weight bytes / their floor µs)")  # fmt: skip
    else:  # no row of that run records it: derived from the products' own columns
        said = f"floors at {whose}, {implied:,.0f} GB/s (the products' weight bytes / their floor µs)"
    graphs = _ok("10_cuda_graphs", results_dir)
    if graphs is not None and _same_run(df, graphs) is None and {"commit", "gpu_uuid"} <= set(graphs):
        last = graphs.iloc[-1]
        said += (f"; **another run than the Beyond table's** (commit `{str(last['commit'])[:12]}`, "
                 f"GPU {str(last['gpu_uuid'])[:8]}…), so its times are not that run's")  # fmt: skip
    return run_line(frames, said)


WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def quick_pages(results_dir: Path) -> str:
    """The committed example pages of `./run_all.sh --quick` (data/quick/*/report.md), each linked with the GPU
    model, card and commit its own data/quick_stages.csv records, whether they ran on one GPU model and card,
    and what a memory cap bound (`tokgen_tools.quick.cap_bound`); review rv22B S1: a hand-written line named
    the H100 for a page re-run on an H200."""
    from tokgen_tools.quick import _card, cap_bound, cards

    pages = []
    for folder in sorted(p.parent for p in Path(results_dir, "data", "quick").glob("*/report.md")):
        stages = folder / "data" / "quick_stages.csv"
        if stages.exists():
            pages.append((folder, read_table(stages)))
    if not pages:
        return "*No example page of `./run_all.sh --quick` is committed yet.*"
    links, caps, models, uuids, commits = [], [], set(), [], set()
    for folder, stages in pages:
        env = stages.iloc[0]
        cap = json.loads(env["params"]).get("MEMORY_GB") if isinstance(env.get("params"), str) else None
        what = f"capped at {cap:g} GB" if cap else "the whole GPU"
        card = _card(cards(stages)) if cards(stages) else "no GPU UUID recorded"
        commit = str(env["commit"])[:7]
        link = f"data/quick/{folder.name}/report.md"
        links.append(f"[{what}]({link}) ({env['gpu']}, {card}, commit `{commit}`)")
        models.add(str(env["gpu"]))
        uuids.append(cards(stages))
        commits.add(commit)
        if cap:
            timed = folder / "data" / "07_pipelining.csv"
            bound = cap_bound(read_table(timed) if timed.exists() else None, cap, caveat=False)
            caps.append(f"The {cap:g} GB cap: {bound}")
    n = len(pages)
    runs = f"{WORDS.get(n, n)} run{'s' * (n > 1)}"
    if len(models) > 1:
        on = f"on {WORDS.get(len(models), len(models))} GPU models"
    elif all(uuids) and len(set().union(*uuids)) > 1:
        on = f"on {WORDS.get(len(set().union(*uuids)), len(set().union(*uuids)))} cards of the {next(iter(models))}"
    elif all(uuids):
        on = f"on one card of the {next(iter(models))}"
    else:
        on = f"on the {next(iter(models))} (not every run recorded its card)"
    at = f"at {WORDS.get(len(commits), len(commits))} commits" if len(commits) > 1 else "at one commit"
    head = "Example page" + "s" * (n > 1) + (f" ({runs} {on}, {at})" if n > 1 else f" ({on})")
    return f"{head}: " + " and ".join(links) + "." + "".join(f" {c}" for c in caps)


def syncs_table(results_dir: Path) -> str:
    df = _ok("11_sync_audit", results_dir)
    if df is None:
        return NOT_MEASURED
    shown = {"local_scalar_dense": "`.item()` reads", "sync_debug_warnings": "sync-debug warnings",
             "stream_syncs": "stream syncs", "event_syncs": "event syncs"}  # fmt: skip
    # a CSV names the counts `*_per_step` or, as notebook 11's runs so far do, `*_per_token` (review rv22B S2)
    suffix = "_per_step" if all(f"{k}_per_step" in df for k in shown) else "_per_token"
    cols = {"generator": "generator", **{f"{k}{suffix}": f"{v} / decode step" for k, v in shown.items()}}
    if "counted" in df and (df["counted"] != "yes").any():  # a profiler session lost to CUPTI: its row says so
        cols["counted"] = "counted"
    params = json.loads(df["params"].iloc[0]) if "params" in df and isinstance(df["params"].iloc[0], str) else {}
    counted = (f"Counted at B = {params['BATCH_SIZE']}, {params['TOKENS']} steps per generation (notebook 11's "
               "parameters).\n\n" if {"BATCH_SIZE", "TOKENS"} <= set(params) else "")  # fmt: skip
    if suffix == "_per_token":  # said only while the CSV's names say "per token" (review rv22B S2)
        counted += ("`data/11_sync_audit.csv` names these columns `*_per_token`; they hold counts per decode "
                    "step.\n\n")  # fmt: skip
    return counted + table(df[list(cols)].rename(columns=cols), digits=2)


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
        df = read_table(path)
        if "times_ms" in df:
            total += sum(float(x) for s in df["times_ms"].dropna() for x in str(s).split(";") if x)
        if "first_call_ms" in df:
            total += float(df["first_call_ms"].fillna(0).sum())
    return total / 1000


def _notebooks(run: pd.DataFrame) -> pd.DataFrame:
    """A run_all.csv's notebook rows, its worked solutions left out (they are counted on their own)."""
    return run[~run["notebook"].astype(str).str.startswith("solution")]


def _budget(minutes: float, timed: float) -> str:
    """Minutes in all, and how many of them the timed runs took."""
    return f"{minutes:.1f} min in all, of which {timed:.1f} min in timed runs and warm-up calls"


def slice_choice(results_dir: Path) -> str:
    """The two slices that bracket the L40S in this run's notebook 13, and what each measured."""
    try:
        slices = load("13_slices", results_dir)
        gbs = dict(zip(slices["gpu_sms"].astype(int), slices["copy_gbs"]))
        low, high = bracketing(gbs)
    except FileNotFoundError:
        return NOT_MEASURED
    except ValueError:  # measured, but none brackets the L40S (a slower GPU, an L4): why, in notebook 13's words
        return slices_note(results_dir)
    text = (
        f"Notebook 13 measured {len(slices)} slices; the L40S's {L40S_GBS} GB/s lies between **{low} SMs "
        f"({gbs[low]:,.0f} GB/s)** and **{high} SMs ({gbs[high]:,.0f} GB/s)**, and `./run_all.sh --slice` "
        f"ran notebooks 01–08 in both (`slice/sm{low}/`, `slice/sm{high}/`). Where their verdicts agree, "
        f"they agree at the sizes both ran; where they differ, it depends on where between them the L40S's "
        f"bandwidth lies. Of the L40S, {SLICES_VS_L40S}."
    )
    try:
        deferred = load("14_deferred_stop", results_dir)
        other = sorted({str(s) for s in deferred["gpu_sms"]} - {"all"})
        if other:
            text += f" Notebook 14 measured its own `SLICE_SMS`: {', '.join(other)} SMs in this run."
    except FileNotFoundError:
        pass
    return text


def _regime_runs(results_dir: Path) -> dict:
    """run_all.csv of each regime that ran: the whole GPU, then each slice/sm<N>/, notebooks only."""
    folders = {"whole GPU": results_dir}
    for folder in sorted((results_dir / "slice").glob("sm*"), key=lambda f: int(f.name[2:] or 0)):
        folders[f"{folder.name[2:]} SMs"] = folder
    runs = {}
    for regime, folder in folders.items():
        found = _measured_runs(folder)
        if found is not None:
            found["in timed runs (s)"] = found["notebook"].map(lambda n: timed_seconds(n, folder))
            runs[regime] = found
    return runs


def _distinct(runs: pd.DataFrame, column: str) -> list[str]:
    """The distinct non-empty values of `column`, sorted; none where the rows predate the column."""
    return sorted(set(runs[column].dropna().astype(str)) - {""}) if column in runs else []


def _host_line(runs: pd.DataFrame) -> str:
    """The host the notebooks ran on, from run_all.csv's host columns (`runner.host_probe`): the CPU,
    the Python loop probe's range before and after each notebook, and the most CPU time the
    hypervisor took during one notebook's run; "" where the rows predate the columns."""
    loops = pd.concat([pd.to_numeric(runs[c], errors="coerce") for c in ("host_loop_ms_before", "host_loop_ms_after")
                       if c in runs]).dropna() if "host_loop_ms_before" in runs else pd.Series(dtype=float)  # fmt: skip
    if loops.empty:
        return ""
    cpus = _distinct(runs, "cpu")
    line = f"- host: {'; '.join(cpus) or 'CPU not recorded'}; the runner's Python loop probe took {loops.min():.2f}–"
    line += f"{loops.max():.2f} ms before and after the notebooks"
    steal = pd.to_numeric(runs.get("cpu_steal_pct"), errors="coerce").dropna() if "cpu_steal_pct" in runs else None
    if steal is not None and len(steal):
        line += f"; CPU time taken by the hypervisor (steal) at most {steal.max():.1f}% over one notebook's run"
    return line


def _gpus_line(runs: dict) -> list[str]:
    """Per GPU model in the regimes' run_all.csv (`_regime_runs`), the notebooks (solutions counted by their
    notebook's number) each of its GPU UUIDs ran, per regime: "NVIDIA H200 (whole GPU: notebooks 06, 07 on
    c5384e55-…)"; rows older than the UUID column say none was recorded (review rv19A M2, rv19B M3)."""
    said = []
    every = pd.concat([r.assign(regime=name) for name, r in runs.items()], ignore_index=True)
    for gpu, rows in every.groupby(every["gpu"].astype(str), sort=True):
        parts = []
        for regime, part in rows.groupby("regime", sort=False):
            uuid = part["gpu_uuid"].fillna("") if "gpu_uuid" in part else pd.Series("", index=part.index)
            nbs = lambda p_: {n.removeprefix("solution ")[:2] for n in p_["notebook"]}  # noqa: E731
            where = [f"notebook{'s' * (len(nbs(p_)) > 1)} {_numbers(nbs(p_))} "
                     + (f"on {u}" if u else "with no GPU UUID recorded")
                     for u, p_ in part.groupby(uuid.astype(str), sort=True)]  # fmt: skip
            parts.append(f"{regime}: {', '.join(where)}")
        said.append(f"{gpu} ({'; '.join(parts)})")
    return said


def _names(kind: str, names: list[str]) -> str:
    """ "notebook 14_deferred_stop", "solutions 11_sync_audit, 14_deferred_stop"."""
    return f"{kind}{'s' * (len(names) > 1)} {', '.join(names)}"


def transformers_versions(runs: dict) -> str:
    """The transformers versions the regimes' runs (`_regime_runs`) used, and, per version other than the
    most common, which notebooks and solutions ran on it, from the rows themselves (review rv22A S4 / rv22B
    S3): "5.1.0, 5.17.0 (notebook 14_deferred_stop and solutions 11_sync_audit, 14_deferred_stop on 5.17.0)";
    a run in a slice is named with its regime. Rows without a version are left out (a CSV that lacks the value, or
    the column: "not recorded" where none has one), and versions sort as versions: 5.9.0 before 5.17.0 (review
    rr22a N2)."""
    rows = pd.concat([r.assign(regime=name) for name, r in runs.items()], ignore_index=True)
    rows = rows.dropna(subset=["transformers"]) if "transformers" in rows else rows[:0].assign(transformers="")
    if rows.empty:
        return "not recorded"
    version = rows["transformers"].astype(str)
    counts = version.value_counts()
    common = min(counts.index, key=lambda v: (-counts[v], _version_key(v)))  # the most rows; a tie: the lowest
    said = []
    for other in sorted(set(version) - {common}, key=_version_key):
        part = rows[version == other]
        where = [n if r == "whole GPU" else f"{n} ({r})" for n, r in zip(part["notebook"], part["regime"])]
        notebooks = sorted(dict.fromkeys(n for n in where if not n.startswith("solution ")))
        solutions = sorted(dict.fromkeys(n.removeprefix("solution ") for n in where if n.startswith("solution ")))
        groups = [_names(k, ns) for k, ns in (("notebook", notebooks), ("solution", solutions)) if ns]
        said.append(f"{' and '.join(groups)} on {other}")
    return ", ".join(sorted(set(version), key=_version_key)) + (f" ({'; '.join(said)})" if said else "")


def _version_key(version: str) -> tuple:
    """A version string's sort key: PEP 440 order (5.9.0 before 5.17.0), equal versions by their text ("5.1" before
    "5.1.0", whatever the set's order: review rr22c N7); a string that is no version sorts after every version, by its
    text (`packaging` comes with transformers)."""
    try:
        return (0, Version(version), version)  # equal versions ("5.1", "5.1.0"): by their text (review rr22c N7)
    except InvalidVersion:
        return (1, None, version)


def provenance(results_dir: Path) -> str:
    runs = _regime_runs(results_dir)
    if "whole GPU" not in runs:
        return NOT_MEASURED
    every = pd.concat(runs.values(), ignore_index=True)
    notebooks_only = every[~every["notebook"].str.startswith("solution")]
    env = runs["whole GPU"].iloc[0]
    commits = sorted(set(every["commit"]))
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    whole = runs["whole GPU"].set_index("notebook")
    absent = [n for n in names if n not in whole.index]
    ok = int((notebooks_only["status"] == "ok").sum())
    solutions = every[every["notebook"].str.startswith("solution")]
    ok_text = f"{ok} of {len(notebooks_only)} notebook runs" + (  # the solutions counted apart (review rvC13 N1)
        f" and {int((solutions['status'] == 'ok').sum())} of {len(solutions)} solutions" if len(solutions) else "")
    ok_text += " ok"
    minutes, timed = every["seconds"].sum() / 60, every["in timed runs (s)"].sum() / 60
    if len(commits) == 1:
        timing = f"- one commit, {commits[0]}: {ok_text}; "
        timing += _budget(minutes, timed)
    else:
        timing = (
            f"- not one run yet: these results come from {len(commits)} commits ({', '.join(commits)}); "
            f"{ok_text}; {_budget(minutes, timed)}"
        )
    coverage = (
        "- every notebook of the repository ran on the whole GPU"
        if not absent
        else f"- not yet executed on a GPU: {', '.join(absent)}"
        + (f" ({', '.join(sorted(READS_DATA_ONLY))} only reads data/)" if set(absent) <= READS_DATA_ONLY else "")
    )
    regimes = list(runs)
    per = pd.DataFrame({"notebook": [n for n in names if n in set(notebooks_only["notebook"])]})
    for regime in regimes:
        seconds = runs[regime].set_index("notebook")["seconds"]
        per[f"{regime} (s)"] = per["notebook"].map(lambda n, s_=seconds: f"{s_[n]:.0f}" if n in s_ else "")
    per["timed runs per variant"] = per["notebook"].map(lambda n: _timed_runs(n, results_dir))
    expected = [name.split(",")[0] for name in slice_runs(results_dir, results_dir / "slice")]
    totals = ", ".join(
        [f"{r} {_notebooks(runs[r])['seconds'].sum() / 60:.1f} min" for r in regimes]  # solutions said apart
        + [f"{r} not run yet" for r in expected if r not in runs]
    )
    solutions = whole[whole.index.str.startswith("solution")]
    tritons = _distinct(every, "triton")
    machines = [f"{r} {', '.join(_distinct(runs[r], 'gpu_uuid'))}" for r in regimes if _distinct(runs[r], "gpu_uuid")]
    gpu_line = (f"- GPU: {env['gpu']}, driver {env['driver']}, CUDA {env['cuda']}"
                + (f"; by GPU UUID: {'; '.join(machines)}" if machines else ""))  # runs before the column have none
    if len(_distinct(every, "gpu")) > 1:  # each GPU with its UUIDs and notebooks, not the first row's alone (rv19A M2)
        gpu_line = (f"- GPUs: {'; '.join(_gpus_line(runs))}; driver {', '.join(_distinct(every, 'driver'))}, "
                    f"CUDA {', '.join(_distinct(every, 'cuda'))}")  # fmt: skip
    lines = [
        gpu_line,
        f"- torch {env['torch']}{', triton ' + ', '.join(tritons) if tritons else ''}, transformers "
        f"{transformers_versions(runs)}, Python {env['python']}",
        *([host] if (host := _host_line(every)) else []),
        timing,
        coverage,
        f"- per regime: {totals}"
        + (f"; {len(solutions)} worked solutions, {solutions['seconds'].sum() / 60:.1f} min" if len(solutions) else ""),
        "",
        table(per, digits=0),
    ]
    for regime in regimes[1:]:
        set_ = [
            f"{n} " + ", ".join(f"{k} = {v}" for k, v in json.loads(p).items() if k not in ("RESULTS_DIR", "GPU_SMS"))
            for n, p in zip(runs[regime]["notebook"], runs[regime]["parameters"])
            if set(json.loads(p)) - {"RESULTS_DIR", "GPU_SMS"}
        ]
        lines += ["", f"{regime}: sizes other than the whole GPU's: " + ("; ".join(set_) or "none") + "."]
    return "\n".join(lines)


def sequential_rates(results_dir: Path) -> str:
    """The sequential comparisons' error rates (data/sequential_error_rates.csv, tokgen_tools.seqsim)."""
    from tokgen.stats import sequential_error_rates, shown_error_rates

    try:
        rates = sequential_error_rates(Path(results_dir) / "data")
    except FileNotFoundError:
        return "*Not measured yet: run `python -m tokgen_tools.seqsim`.*"
    out = shown_error_rates(rates)  # notebook 00's form too
    header = "| " + " | ".join(out.columns) + " |\n|" + "---|" * len(out.columns)
    return header + "\n" + "\n".join("| " + " | ".join(map(str, r)) + " |" for r in out.itertuples(index=False))


BLOCKS = {
    "headline": headline,
    "seqrates": sequential_rates,
    "findings": findings,
    "summary": summary_table,
    "claims": claims_block,
    "criteria": criteria_block,
    "deferred": deferred_table,
    "reruns": reruns_note,
    "beyond": beyond_table,
    "products": products_table,
    "syncs": syncs_table,
    "quickpages": quick_pages,
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
