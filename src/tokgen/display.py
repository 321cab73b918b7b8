"""Notebook helpers: show a generator's source, say a measured sentence, tables and figures.

Introduced in notebook 00_setup. Prose cells never hold measured numbers: a code cell reads
them from data/ and `say`s them.
"""

import datetime
import functools
import inspect
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np
import pandas as pd
import torch
from IPython.display import Code, Markdown, display

from .bandwidth import product_rounds
from .claims import (
    GROWTH_EXPONENT,
    MIN_ROUNDS,
    claim,
    growth_per_doubling,
    growth_ratios,
    growth_value_text,
    near_device_memory,
    retried_growth_text,
    retried_steps,
    retries_text,
    rounds_read_text,
)
from .gaps import HOST_DRIFT
from .gpu_slice import GpuSlice
from .profiling import kernel_kind, union_length
from .regimes import _escape
from .registry import get_generator, label
from .results import HOST_PROBE_COLUMNS, environment, slice_columns
from .stats import (
    ALPHA,
    BAND,
    FASTER,
    NO_EFFECT,
    SLOWER,
    UNDECIDED,
    compare_rounds,
    gain,
    paired_slope,
    rank_trend,
    resample_rounds,
    run_times,
    shared_rounds,
    signed_rank_p,
)
from .voice import (  # noqa: F401 - the one voice, re-exported for the notebooks
    GPU_BOUND,
    HOST_BOUND,
    OUTCOME_HEADS,
    _tied,
    bound,
    bound_words,
    count_text,
    design_text,
    difference_text,
    faster_count,
    fastest_sentence,
    findings_text,
    first_rank_floors,
    header_of,
    host_probe_text,
    interval_text,
    outcome_text,
    p_text,
    percent_text,
    rank_text,
    ranking,
    series_text,
    shared_rounds_note,
    shared_rounds_text,
    side_of,
    signed,
    slope_reading,
    speedup_cell,
    speedup_table,
    speedup_text,
    spread,
    table,
    trend_text,
)


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


REST_OF_STEP = "rest of step, ms (wall less busy)"  # `bound_table`'s column: the part of a step the GPU is not busy


def bound_table(results: pd.DataFrame) -> str:
    """Per variant, a step's wall time, its GPU busy part, the rest of the step (wall less busy: the time per step
    the GPU is not busy, which notebook 01 asks to compare down the N; review rvA17 S2), share and bound (notebook
    01_naive; rows of `compare(..., gpu_busy=True)`), over the rounds every interleaved variant ran
    (`tokgen.stats.shared_rounds`; a line under the table says when that is fewer than a variant ran),
    and last the host probe around those rounds (`host_probe_text`): the host sets a host-bound step's pace."""
    host = host_probe_text(results, drift=HOST_DRIFT)  # and how far the probe moved, beyond HOST_DRIFT (rv22B N2)
    if results["gpu_busy_ms"].isna().all():
        return f"*No GPU busy time: CUPTI measures it on a GPU only.*\n\n{host}"
    results = shared_rounds(results)
    busy = results["gpu_busy_ms"] / results["steps"]
    ms = lambda values: [f"{v:,.2f}" if v == v else "" for v in values]  # noqa: E731 - two decimals, 0.995 too
    out = pd.DataFrame(
        {
            "variant": results["variant"],
            "ms per step (wall)": ms(results["ms_per_step"]),
            "GPU busy ms per step": ms(busy),
            REST_OF_STEP: ms(results["ms_per_step"] - busy),
            "GPU share": results["gpu_busy_share"],
            "bound": results["gpu_busy_share"].map(bound),
        }
    )
    share = results["gpu_busy_share"].dropna()  # one count of decimals for the column: what its nearest to 0 or 1 needs
    places = max([2, *(len(side_of(x, (0, 1), 2).split(".")[1]) for x in share if 0 < x < 1)])
    return _with_note(table(out, digits={"GPU share": places}), results) + f"\n\n{host}"


TREND_MIN_ROUNDS = 8  # `round_trend`: fewer rounds than this are too few to look for a drift across them


def _round_index(rows: pd.DataFrame) -> tuple[list[float], list[str], dict[str, int]]:
    """Per round of one comparison (rows of `tokgen.compare` sharing an `order_seed`), the median over the
    variants that ran every round of it (the longest run: review rr20i S1, a variant that stopped at a look would
    make the later rounds pool fewer variants, so they would not be alike under no drift) of each one's time over
    its own median: 1.10 where those variants ran 10% slower than usual in that round. With the names of the
    variants that ran them all, and the others with the rounds each ran (review rr20k N1)."""
    runs = [(r["variant"], run_times(r)) for r in rows.to_dict("records")]
    runs = [(v, t) for v, t in runs if t]
    if not runs:
        return [], [], {}
    n = max(len(t) for _, t in runs)
    full = [(v, np.asarray(t, dtype=float)) for v, t in runs if len(t) == n]
    scaled = [t / np.median(t) for _, t in full]
    index = [float(np.median([s[r] for s in scaled])) for r in range(n)]
    return index, [v for v, _ in full], {v: len(t) for v, t in runs if len(t) < n}


def _pooled_over(index: list[float], full: list[str], left: dict[str, int]) -> str:
    """Which variants `_round_index` pooled, named (review rr20k N1, N4): "its 3 variants, all of which ran every
    round"; "`a`, the one of the 2 variants that ran all 80 rounds"; where fewer were left out than pooled, "the 5
    of 6 variants that ran all 80 rounds (all but `naive`: 40 rounds)", else those pooled by name."""
    n, every = len(index), len(full) + len(left)
    if not left:
        return "its one variant" if every == 1 else f"its {every} variants, all of which ran every round"
    if len(full) == 1:
        return f"`{full[0]}`, the one of the {every} variants that ran all {n} rounds"
    named = (("all but " + ", ".join(f"`{v}`: {_plural(k, 'round')}" for v, k in left.items()))
             if len(left) < len(full) else series_text([f"`{v}`" for v in full]))  # fmt: skip
    return f"the {len(full)} of {every} variants that ran all {n} rounds ({named})"


def _trend_clause(index: list[float]) -> str:
    n = len(index)
    if n < TREND_MIN_ROUNDS:
        return f"too few rounds ({n}) to look for a trend across them"
    if not np.isfinite(index).all():
        return f"not computed over the {n} rounds (a round's time is missing)"
    rho, p = rank_trend(index)
    if rho != rho:
        return f"no trend over the {n} rounds (every round alike)"
    stat = f"Spearman ρ = {signed(rho, 2)} against the round, p {p_text(p)}"
    if p >= ALPHA:
        return f"no trend detected over the {n} rounds ({stat}; a drift of this size is not ruled out)"
    first, last = math.ceil(n / 4), n // 2 + 1  # the first quarter of the rounds against the second half
    early, late = np.median(index[:first]), np.median(index[last - 1 :])
    word = "fell" if rho < 0 else "rose"
    return (f"times {word} over the {n} rounds ({stat}): the pooled per-round index's median is {late:.2f} in rounds "
            f"{last}–{n} against {early:.2f} in rounds 1–{first} (not judged)")  # fmt: skip


def holm(ps) -> list[float]:
    """Holm's step-down adjusted p-values of `ps`, in their order: the i-th smallest times (m − i + 1), kept
    non-decreasing and at most 1; rejecting where the adjusted p < `ALPHA` keeps the chance of naming any null one
    at most `ALPHA` (family-wise), whatever their dependence (notebook 07_pipelining: its pairs' drifts, review
    rr20k S2)."""
    m, out, run = len(ps), [0.0] * len(ps), 0.0
    for i, j in enumerate(sorted(range(m), key=lambda j: ps[j])):
        run = max(run, min(1.0, (m - i) * ps[j]))
        out[j] = run
    return out


def _pair_drifts(ok: pd.DataFrame, pairs) -> tuple[list[str], int]:
    """Per compared pair (base, variant[, …]) of `ok` with both rows, the log of the paired ratio t(base) / t(variant)
    over the rounds both ran, against the round (`tokgen.stats.rank_trend`; review rr20i M1), the p-values
    Holm-adjusted over the pairs tested (`holm`; review rr20k S2): the clauses of those whose adjusted p < `ALPHA`,
    and how many pairs were tested (those with `TREND_MIN_ROUNDS` shared rounds and every ratio finite)."""
    found = []
    for base, variant, *_ in pairs:
        a, b = ok[ok["variant"] == base], ok[ok["variant"] == variant]
        if a.empty or b.empty:
            continue
        ta, tb = run_times(a.iloc[0].to_dict()), run_times(b.iloc[0].to_dict())
        k = min(len(ta), len(tb))
        if k < TREND_MIN_ROUNDS:
            continue
        ratio = np.log(np.asarray(ta[:k], dtype=float) / np.asarray(tb[:k], dtype=float))
        if not np.isfinite(ratio).all():
            continue
        rho, p = rank_trend(ratio)
        found.append((base, variant, k, rho, 1.0 if p != p else p))
    adjusted = holm([p for *_, p in found])
    drifted = [f"`{base}`/`{variant}` over its {k} rounds ({'fell' if rho < 0 else 'rose'}: ρ = {signed(rho, 2)}, "
               f"p {p_text(p)}" + ("" if len(found) == 1 else f", adjusted p {p_text(q)}") + ")"
               for (base, variant, k, rho, p), q in zip(found, adjusted) if rho == rho and q < ALPHA]  # fmt: skip
    return drifted, len(found)


def round_trend(results: pd.DataFrame, pairs=None, ratios: str = "paired speed-ups", scope: str = "") -> str:
    """Whether the timed rounds' times drifted over the rounds, said under the host probe's line (the last of
    `bound_table`, in notebooks 01, 02, 05, 07 and 08; notebook 07_pipelining; review rv19A S4): pooled over the
    variants of a comparison (one `order_seed`) that ran all its rounds (named, `_pooled_over`; reviews rr20i S1,
    rr20k N1) as, per round, the median of each one's time over its own median (`_round_index`), then Spearman's ρ
    of that against the round with a permutation p-value (`tokgen.stats.rank_trend`): "no trend detected" where p ≥
    `ALPHA` (a drift is not ruled out: review rr20i S2), else the pooled index's median in the second half of the
    rounds against the first quarter, not judged (a ratio of medians with no interval: review rr20i S3). One clause
    per comparison, each tested at `ALPHA` unadjusted. Then whether the paired ratios drifted: each compared pair's
    log ratio over its shared rounds against the round (`_pair_drifts`; the pairs `pairs`, (base, variant[, …])
    names, else every two variants of a comparison), the p-values Holm-adjusted over the pairs tested (review rr20k
    S2: twelve pairs at 0.05 each named one by chance in about 4 runs in 10), naming those with adjusted p <
    `ALPHA` and saying their `ratios` ("paired speed-ups"; notebook 01's are growths, "paired ratios": review rr20k
    S1) may read differently over other rounds, else that none was detected (review rr20i M1: a drift that moves two
    variants by different factors does not cancel in their ratio, so it is tested, not assumed). `scope`, where
    given, says in brackets which pairs those are (review rr20k N3). "" for rows without times."""
    if "times_ms" not in results:
        return ""
    ok = results[results["status"] == "ok"] if "status" in results else results
    seeds = ok["order_seed"].astype(str) if "order_seed" in ok else pd.Series("", index=ok.index)
    groups = [rows for _, rows in ok.groupby(seeds, sort=False)]
    clauses = []
    for rows in groups:
        index, full, left = _round_index(rows)
        if index:
            clauses.append((rows, _pooled_over(index, full, left), _trend_clause(index)))
    if not clauses:
        return ""
    pooled = "per round, the median of each variant's time over its own median"
    if len(clauses) == 1:
        text = f"The rounds' own times (pooled over {clauses[0][1]}: {pooled}): {clauses[0][2]}."
    else:
        text = (f"The rounds' own times, each comparison apart ({pooled}; each tested at {ALPHA:g}, not adjusted for "
                f"the {len(clauses)} comparisons): ") + "; ".join(
            f"{' and '.join(f'`{v}`' for v in rows['variant'])} (pooled over {over}): {said}"
            for rows, over, said in clauses) + "."  # fmt: skip
    if pairs is None:
        names = [list(rows["variant"]) for rows in groups]
        pairs = [(a, b) for vs in names for i, a in enumerate(vs) for b in vs[i + 1 :]]
    drifted, tested = _pair_drifts(ok, pairs)
    scope = f" ({scope})" if scope else ""
    if drifted:
        how = ("tested at " + f"{ALPHA:g}" if tested == 1 else
               f"its p-value Holm-adjusted over the {tested} pairs, {ALPHA:g} family-wise")  # fmt: skip
        text += (f" A drift of the paired ratio over the rounds was detected for {len(drifted)} of the "
                 f"{_plural(tested, 'compared pair')}{scope} (the log of each pair's time ratio against the round, "
                 f"{how}): " + "; ".join(drifted)
                 + f"; the {ratios} of {'that pair' if len(drifted) == 1 else 'those pairs'} may read differently "
                 "over other rounds.")  # fmt: skip
    elif tested:
        each = "the compared pair" if tested == 1 else f"each of the {tested} compared pairs"
        text += (f" No drift of the paired ratios was detected: for {each}{scope}, the log of its time ratio against "
                 "the round over its shared rounds, " + (f"p ≥ {ALPHA:g}" if tested == 1 else
                 f"Holm-adjusted p ≥ {ALPHA:g} (adjusted over the {tested} pairs)")
                 + "; a drift is not ruled out.")  # fmt: skip
    if any(said.startswith("times ") for _, _, said in clauses):
        text += (" The medians, ms per step and GPU shares above are over the rounds they name and would read "
                 "differently over others.")  # fmt: skip
    return text


def scaling_summary(results: pd.DataFrame) -> str:
    """Notebook 01's finding in words, from its rows (review rvA17 S2): the runtime's growth per doubling at each
    step (`tokgen.claims.growth_per_doubling`) and in how many rounds it stayed below ×4 (quadrupling); the GPU's
    busy time over a run, grown per doubling too (one profiled run per N); and the rest of each step (wall less
    busy, `bound_table`'s column, over the rounds every N ran) at each N, its values only: whether it changes with N
    is not judged, the busy time being one profiled run per N with no interval (the same variant's rest read 21%
    apart between notebooks 01 and 02: review rv22A S1); a step whose N had the allocator retry (`retried_steps`)
    says that its growth includes the retries (review rv22A S3); and at which steps the runtime grew less than the
    busy time, only where the step's
    interval (claim 1's) lies below the busy growth, which has none (review rr17a S4). "Runtime grew ×2.93
    (100→200) and ×3.49 (200→400) per doubling of N, paired by round, below ×4 in 20 of 20 rounds at each step;
    …" ("at 100→200" where there is one step: review rr17a N5). The growth printed is claim 1's, on the rounds claim 1
    reads (at the look that decided it, named where that is fewer than every round: `tokgen.claims.rounds_read_text`),
    and the rounds below ×4 are counted over those same rounds (review rr18a S2: one growth per step per page), the
    median kept on its side of ×4 too (×3.996 never reads ×4.00 beside them; review rr18c N4), printed as claim 1
    prints it (`tokgen.claims.growth_value_text`, review rr19a N2)."""
    ok = results.sort_values("max_seqlen")
    steps = growth_per_doubling(ok)
    if not steps:
        return "One N only: no growth to read."
    runs = [run_times({"times_ms": t}) for t in ok["times_ms"]]
    below = []
    for (a, b, g), short, long_ in zip(steps, runs, runs[1:]):
        power = math.log(2) / math.log(b / a)
        ratios = [(y / x) ** power for x, y in zip(short, long_) if x > 0 and y > 0][: int(g["rounds"])]
        below.append((sum(r < 4 for r in ratios), len(ratios)))
    retried = retried_steps(ok, steps)
    grew = " and ".join(f"×{growth_value_text(g)} ({a}→{b}"
                        + (f", {rounds_read_text(g)}" if rounds_read_text(g) else "")
                        + (f"; {retried_growth_text(retried[f'{a}→{b}'])})" if f"{a}→{b}" in retried else ")")
                        for a, b, g in steps)  # fmt: skip
    counts = {f"{k} of {n}" for k, n in below}
    each = "each step" if len(steps) > 1 else f"{steps[0][0]}→{steps[0][1]}"
    where = f"{counts.pop()} rounds at {each}" if len(counts) == 1 else ", ".join(
        f"{k} of {n} rounds at {a}→{b}" for (a, b, _), (k, n) in zip(steps, below))  # fmt: skip
    said = f"Runtime grew {grew} per doubling of N, paired by round, below ×4 (quadrupling) in {where}"
    rows = shared_rounds(ok)
    busy = rows["gpu_busy_ms"].to_numpy(float) if "gpu_busy_ms" in rows else np.array([math.nan])
    if np.isnan(busy).any():
        return said + "; no GPU busy time (CUPTI measures it on a GPU only), so no split of the step."
    ns = rows["max_seqlen"].astype(int).tolist()
    busy_growth = [(y / x) ** (math.log(2) / math.log(b / a)) for a, b, x, y in zip(ns, ns[1:], busy, busy[1:])]
    rest = (rows["ms_per_step"] - rows["gpu_busy_ms"] / rows["steps"]).to_numpy(float)
    at = ", ".join(f"{r:.2f}" for r in rest[:-1]) + f" and {rest[-1]:.2f} ms at N = " + (
        ", ".join(map(str, ns[:-1])) + f" and {ns[-1]}")  # fmt: skip
    flat = "whether it changes with N is not judged (one profiled run per N, no interval)"
    less = [f"{a}→{b}" for (a, b, g), busy_b in zip(steps, busy_growth) if g["interval_high"] < busy_b]
    at_steps = "at every step" if len(less) == len(steps) > 1 else f"at {' and '.join(less)}"
    return (f"{said}. The GPU's busy time over a run grew {' and '.join(f'×{b:.2f}' for b in busy_growth)} per "
            f"doubling (one profiled run per N); the rest of each step (wall less busy) measured {at}; {flat}"
            + (f"; {at_steps} the runtime grew less than the GPU's busy time, the high end of the step's interval "
               "(claim 1's) below the busy growth (busy time: one profiled run, no interval)." if less
               else "."))  # fmt: skip


def _with_note(text: str, results: pd.DataFrame, **named) -> str:
    note = shared_rounds_note(results, **named)
    return text + (f"\n\n{note}" if note else "")


def finding(results: pd.DataFrame, base: str, variant: str) -> str:
    """One takeaway read from a run: `variant` against `base` (the paired speed-up and its outcome)
    and, where profiled, which bound `variant`'s steps are in: its GPU busy time over its median wall
    time, over the rounds every variant ran (`tokgen.stats.shared_rounds`) (notebook 05_torch_compile)."""
    g = gain(results, base, variant)
    if g is None:
        return f"`{variant}` against `{base}`: not measured in this run."
    rows = shared_rounds(results).set_index("variant")
    text = f"`{variant}` against `{base}`: {speedup_text(g)}"
    share = rows.at[variant, "gpu_busy_share"] if "gpu_busy_share" in rows else float("nan")
    if share == share:
        over = shared_rounds_text(rows, [variant])
        text += f"; the GPU is busy {share:.0%} of the wall time{f' ({over})' if over else ''}: {bound_words(share)}"
    return text + "."


def first_call_text(row) -> str:
    """The compiled variant's first call (its tracing, compilation and one generation, `first_call_ms`)
    beside its steady state, the median of its timed rounds (`row`: its row of `tokgen.compare`)
    (notebook 05_torch_compile)."""
    return (f"First call of the compiled model: **{row['first_call_ms'] / 1e3:.1f} s** (tracing, compilation and one "
            f"generation, from empty on-disk caches), then **{row['median_ms']:.0f} ms** per generation (median of "
            f"{int(row['runs'])}).")  # fmt: skip


def first_call_price(row) -> str:
    """The takeaway on compilation's price: the first call's time, paid once (notebook 05_torch_compile)."""
    return (f"The price: a first call of {row['first_call_ms'] / 1e3:.1f} s, once, which holds the tracing, the "
            "compilation and one generation (from empty on-disk caches; where they already hold this model, a first "
            "call loads it instead, expected to be shorter: not measured here).")  # fmt: skip


def _ratio_range(values) -> str:
    return f"×{min(values):.2f}–×{max(values):.2f}"


def drift_text(results: pd.DataFrame, base: str, variant: str) -> str:
    """Whether `variant`'s per-round speed-ups against `base` moved during the run, by one rule: the
    ranges of the first half and of the last half of the rounds the paired speed-up is over (`gain`;
    the middle round left out when their number is odd) do not overlap. With no drift (rounds whose
    order does not matter) halves of h rounds fall apart so by chance 2 / C(2h, h) of the time, 1 in
    126 for 5; with halves whose chance is ALPHA or more (under 4 rounds) the rule is not applied.
    Where the halves fall apart: their ranges and medians, the host probe before and after the rounds
    (`tokgen.results.HOST_PROBE_COLUMNS`), each variant whose median over these rounds lies between
    its two halves' times, and that the paired speed-up and the tables pool both halves. It names no
    cause: the probe runs before and after the rounds, not beside each (notebook 05_torch_compile;
    the review r11 found rounds 1–5 at ×2.16–×3.09 and 6–10 at ×1.59–×2.07, the probe 6.48 ms before
    and 3.52 ms after)."""
    g = gain(results, base, variant)
    if g is None:
        return f"Whether the speed-ups moved during the run is not measured: `{variant}` against `{base}` is not."
    n = int(g["rounds"])
    rows = results.set_index("variant")
    times = {v: run_times(rows.loc[v])[:n] for v in (base, variant)}
    ratios = [b / t for b, t in zip(times[base], times[variant])]
    h = len(ratios) // 2
    chance = math.comb(2 * h, h) // 2 if h else 1  # 1 in this many
    odds = f"1 time in {chance:,}" if chance < 10**6 else "less than 1 time in a million"
    first, last = ratios[:h], ratios[len(ratios) - h :]
    where = f"rounds 1–{h}", f"rounds {len(ratios) - h + 1}–{len(ratios)}"
    if 1 / chance >= ALPHA:
        return (f"Whether the speed-ups moved during the run is not judged: with {len(ratios)} rounds, halves this "
                f"short fall apart by chance 1 time in {chance} with no drift at all.")  # fmt: skip
    if min(first) <= max(last) and min(last) <= max(first):
        return (f"The per-round speed-ups of {where[0]} ({_ratio_range(first)}) and of {where[1]} "
                f"({_ratio_range(last)}) overlap: this page's rule (the halves' ranges apart) finds no drift "
                "between them.")  # fmt: skip
    text = (f"The per-round speed-ups moved during the run: {where[0]} gave {_ratio_range(first)} (median "
            f"×{np.median(first):.2f}), {where[1]} {_ratio_range(last)} (median ×{np.median(last):.2f}), the two "
            f"ranges apart (with no drift, {odds} by chance).")  # fmt: skip
    before, after = (rows.at[variant, c] if c in rows else np.nan for c in HOST_PROBE_COLUMNS[:2])
    text += (f" The host's probe loop took {before:.2f} ms before the rounds and {after:.2f} ms after."
             if before == before and after == after else " The host's probe was not recorded for these rounds.")
    for v, t in times.items():
        a, b, med = t[:h], t[len(t) - h :], float(np.median(t))
        if max(min(a), min(b)) > med > min(max(a), max(b)):
            text += (f" `{v}`'s median over these rounds, {med:.1f} ms, lies between its halves' times "
                     f"({min(a):.1f}–{max(a):.1f} ms, then {min(b):.1f}–{max(b):.1f} ms).")  # fmt: skip
    return text + (f" The paired speed-up ×{g['speedup']:.2f} and the tables above (the bound table's too) pool both "
                   "halves; why the speed-ups moved, this run does not measure.")  # fmt: skip


def figure_footer(env: dict, day: str) -> str:
    """The provenance line under a saved figure (notebook 01_naive): the GPU (and its slice of SMs, if any), the
    commit and the UTC date, from `env` (a result row's provenance: `tokgen.results.environment` with
    `slice_columns`). What is unknown is left out (no GPU on a CPU run, an unknown commit); "" when neither the GPU
    nor the commit is known (rv21B N6: the files in figures/ stand alone)."""
    gpu = str(env.get("gpu") or "")
    gpu = "" if gpu.startswith("none") else gpu
    sms = str(env.get("gpu_sms") or "all")
    if gpu and sms != "all":
        gpu += f", a slice of {sms} SMs"
    commit = str(env.get("commit") or "")
    commit = f"commit {commit}" if commit not in ("", "unknown") else ""
    if not (gpu or commit):
        return ""
    return " · ".join(filter(None, ["tokgen", gpu, commit, day]))


def save_figure(fig, name: str, results_dir: str | Path) -> None:
    """figures/<name>.png and .svg under `results_dir` (notebook 01_naive), each with a small grey footer saying
    where and when it was made (`figure_footer`: GPU, commit, date of this process's run), placed under everything
    the figure draws once its layout engine has placed the axes (review rv23A N2); the figure shown in the
    notebook stays without it."""
    out = Path(results_dir) / "figures"
    out.mkdir(parents=True, exist_ok=True)
    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    footer = figure_footer({**environment(), **slice_columns()}, day)  # as a result row's provenance
    mark = None
    if footer:  # under everything drawn (axis labels included): bbox_inches="tight" grows the saved canvas to hold it
        if (engine := fig.get_layout_engine()) is not None:  # where the layout puts the axes, not where they were
            engine.execute(fig)  # (a constrained layout moves them when drawn: review rv23A N2)
        bottom = fig.get_tightbbox().y0 / fig.get_figheight()  # inches, as a fraction of the figure's height
        mark = fig.text(0.99, bottom - 0.01, footer, ha="right", va="top", fontsize=6, color="0.5", gid="provenance")
    try:
        fig.savefig(out / f"{name}.svg", bbox_inches="tight")
        fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
    finally:
        if mark is not None:
            mark.remove()


def plot_scaling(ax, results: dict[str, pd.DataFrame]):
    """Runtime vs max_seqlen on log-log axes, median with the interquartile range (notebook 01). The legend
    names the generators and no slope: a notebook prints its slope in words, claim 1's from notebook 01's table
    (review r58: notebook 02's legend fitted naive's slope to its own rounds, beside claim 1's)."""
    overs = []
    for name, df in results.items():
        df = shared_rounds(df).sort_values("max_seqlen")  # over the rounds every variant of its run ran
        overs.append(shared_rounds_text(df))
        n, med = df["max_seqlen"], df["median_ms"]
        ax.errorbar(n, med, yerr=_iqr(df), marker="o", capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_axis(ax.xaxis)  # "100", "200", "400": no mantissa × exponent labels
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("max_seqlen N (log)")
    over = next((o for o in overs if o), "")
    ax.set_ylabel("runtime per generation, ms (median, IQR; log)" + (f"\n({over})" if over else ""))
    ax.legend()
    return ax


def _iqr(df: pd.DataFrame, med: str = "median_ms", low: str = "q25_ms", high: str = "q75_ms") -> list:
    """Error bars from the `med` column to `low` and `high` (notebook 01_naive)."""
    return [df[med] - df[low], df[high] - df[med]]


SPEEDUP = ("speedup", "speedup_q25", "speedup_q75")


def plot_memory(ax, df: pd.DataFrame, name: str = "variant", device_gb: float | None = None):
    """Peak allocated memory and fragmentation stacked to peak reserved, the GPU's memory (`device_gb`)
    dashed (notebook 01)."""
    x = range(len(df))
    ax.bar(x, df["peak_allocated_gb"], label="peak allocated")
    ax.bar(x, df["frag_gb"], bottom=df["peak_allocated_gb"], label="fragmentation (reserved − allocated)")
    if device_gb is not None:
        ax.axhline(device_gb, color="grey", ls="--", lw=1, label="the GPU's memory")
    ax.set_xticks(list(x), df[name], rotation=30, ha="right")
    ax.set_ylabel("GB")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def plot_runtimes(ax, df: pd.DataFrame, name: str = "variant"):
    """Median runtime per variant with its IQR in the table's order: not a ranking; over the rounds
    every interleaved variant ran (`tokgen.stats.shared_rounds`), as the axis says (notebook 04)."""
    df = shared_rounds(df).iloc[::-1]
    y = range(len(df))
    ax.barh(list(y), df["median_ms"], xerr=_iqr(df), capsize=3, color="C0")
    ax.set_yticks(list(y), df[name])
    over = shared_rounds_text(df)  # "over the first 10 rounds, …" where some variant ran more
    ax.set_xlabel("runtime per generation, ms (median, IQR)" + (f"\n({over})" if over else ""))
    return ax


def plot_speedups(ax, results: pd.DataFrame, base: str = "kv_static"):
    """Each variant's paired speed-up over `base` of its own model (eager or compiled, `label`): the
    median of the per-round ratios with the interval of that comparison (`gain`), one dot and bar
    per variant in the table's order, ×1 marked: the one speed measure, not medians set side by
    side (whose order a drifting host can turn round). The x label says which interval the bars
    are: a sequential run's is taken at the look that decided it (or the last). Returns the
    speed-ups drawn (notebook 07_pipelining)."""
    drawn, sequential = [], False
    for r in results.to_dict("records"):
        against = label(base, compiled=bool(r.get("compiled", False)))
        if r["variant"] != against and (g := gain(results, against, r["variant"])) is not None:
            sequential |= bool(g.get("looks"))
            drawn.append({"variant": r["variant"], "vs": against, "speedup": g["speedup"],
                          "low": g.get("interval_low", np.nan), "high": g.get("interval_high", np.nan)})  # fmt: skip
    drawn = pd.DataFrame(drawn, columns=["variant", "vs", "speedup", "low", "high"])
    bar = (f"{1 - ALPHA:.0%} sequential interval,\nat the look that decided it (or the last)" if sequential
           else f"{1 - ALPHA:.0%} interval")  # fmt: skip
    plot_dots(drawn, "variant", "speedup", low="low", high="high", ax=ax,
              xlabel=f"paired speed-up over {base} of the same model; above ×1: faster\n"
              f"dot: median of the per-round ratios; bar: {bar}")  # fmt: skip
    ax.axvline(1.0, color="grey", lw=1, ls="--")
    return drawn


def plot_paired_rounds(ax, results: pd.DataFrame, base: str, variant: str) -> dict | None:
    """`variant` against `base` as the page measures it: each round's speed-up t_base / t (a dot per
    round, over the rounds the comparison used, `gain`), their median (the paired speed-up, a line)
    with its interval (a band) and ×1 dashed: the one speed measure, so no ratio of two medians is
    drawn. Returns the comparison (`gain`), None (and an empty axis that says so) where either was
    not measured (notebook 05_torch_compile)."""
    g = gain(results, base, variant)
    if g is None:
        ax.text(0.5, 0.5, f"{variant} against {base}: not measured", ha="center", va="center", transform=ax.transAxes)
        return None
    rows = results.set_index("variant")
    n = int(g["rounds"])
    ratios = [b / t for b, t in zip(run_times(rows.loc[base]), run_times(rows.loc[variant]))][:n]
    rounds = range(1, len(ratios) + 1)
    ax.plot(rounds, ratios, "o", color="C0", label=f"one round: {base}'s time\nover {variant}'s")
    ax.axhline(g["speedup"], color="C1", lw=2, label=f"paired speed-up ×{g['speedup']:.2f}:\nmedian of the rounds")
    low, high = g.get("interval_low", np.nan), g.get("interval_high", np.nan)
    if np.isfinite(low) and np.isfinite(high):
        what = "sequential interval,\nat the look that decided it (or the last)" if g.get("looks") else "interval"
        ax.axhspan(low, high, color="C1", alpha=0.2, label=f"{1 - ALPHA:.0%} {what}:\n×{low:.2f}–×{high:.2f}")
    ax.axhline(1.0, color="grey", lw=1, ls="--")
    ax.set_xlabel(f"round (the {n} the speed-up is over)")
    ax.set_ylabel(f"speed-up over {base}, ×")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return g


def medians_note(base: str = "kv_static") -> str:
    """The line under a runs table whose figure shows paired speed-ups (`plot_speedups`): the medians
    are each variant's own; which is faster is read round by round (notebook 07_pipelining)."""
    return (f"The medians above are each variant's own, not a ranking: on a host that drifts, their order need not "
            f"be the paired one. Which of two variants is faster is read from their paired speed-up, round by round "
            f"(the figure below, against {base} of the same model, and sections 4–5).")  # fmt: skip


# --- helpers introduced in notebooks 01-08 (tables, sentences, figures) ---


def where_measured(device) -> str:
    """Where this notebook measured: the whole GPU, a green-context slice (`GPU_SMS`), or the CPU
    (notebook 01_naive)."""
    device = torch.device(device)
    if device.type != "cuda":
        return "Measured on the CPU: a smoke run, which tests the code and measures nothing."
    gpu = torch.cuda.get_device_properties(device)
    s = GpuSlice.active
    if s is None:
        return f"Measured on the whole {gpu.name}: all {gpu.multi_processor_count} SMs."
    return (
        f"Measured in a green-context slice of the {gpu.name}: {s.sms} of its {gpu.multi_processor_count} SMs "
        f"(`GPU_SMS`), whose copy bandwidth measured {s.copy_gbs:,.0f} GB/s (bytes read + written). Every number "
        "below is the slice's."
    )


def rounds_sentence(runs: int) -> str:
    """What `runs` interleaved rounds can decide: the signed-rank test's smallest p, the fewest
    rounds that reach p < ALPHA, and how many may disagree (notebook 00_setup)."""
    smallest = signed_rank_p([1.0] * runs)
    fewest = next(n for n in range(1, 64) if signed_rank_p([1.0] * n) < ALPHA)
    if smallest >= ALPHA:
        return (
            f"With {runs} rounds the signed-rank test cannot give p < {ALPHA}: its smallest p, every round "
            f"agreeing, is {smallest:.2g} ({fewest} rounds are the fewest that can): a paired comparison made "
            "from these rounds stays undecided."
        )
    ranks = list(range(1, runs + 1))
    # the k smallest differences against the rest: decided while the agreeing rounds still outweigh them
    # (past that, p falls again, but for the other direction)
    may_disagree = 0
    while may_disagree + 1 < runs and sum(ranks[may_disagree + 1 :]) > sum(ranks[: may_disagree + 1]):
        if signed_rank_p([-r if r <= may_disagree + 1 else r for r in ranks]) >= ALPHA:
            break
        may_disagree += 1
    return (
        f"With {runs} rounds the signed-rank test's smallest p, every round agreeing, is {smallest:.2g}; "
        f"p < {ALPHA} needs at least {fewest} rounds"
        + (f", and here up to {may_disagree} may disagree if theirs are the smallest differences." if may_disagree
           else ", all agreeing.")
    )  # fmt: skip


RUNS_SUMMARIES = "each median, IQR, min–max and ms per step here is"  # what `runs_table`'s note says is over them


def runs_table(results: pd.DataFrame, extra: dict[str, str] | None = None) -> str:
    """Per variant: status, timed runs, steps, ms per generation as median (IQR) and min–max, ms
    per step, then `extra` columns ({header: column}, two decimals; a first call, `first_call_ms`, in whole ms:
    review rv22B N3) (notebook 01_naive). The times are over the rounds every interleaved variant ran
    (`tokgen.stats.shared_rounds`); a line under the table says when that is fewer than a variant ran, naming
    every column over them (notebook 07_pipelining; review rv19A N1), and such a variant's runs read "20 (10 shown)"
    (review rv22A N6)."""
    results = shared_rounds(results)
    shown = results["shared_runs"] if "shared_runs" in results else results["runs"]
    out = pd.DataFrame(
        {
            "variant": results["variant"],
            "status": results["status"],
            "runs": [_runs_shown(r, k) for r, k in zip(results["runs"], shown)],
            "steps": results["steps"].map(lambda s: "" if s != s or s is None else str(int(s))),
            "ms per generation, median (IQR)": [
                spread(r, unit="") if r["runs"] else "" for r in results.to_dict("records")
            ],
            "min–max ms": [
                f"{r['min_ms']:.1f}–{r['max_ms']:.1f}" if r["runs"] else "" for r in results.to_dict("records")
            ],
            "ms per step": results["ms_per_step"],
        }
    )
    for header, column in (extra or {}).items():
        values = results[column].to_numpy()
        out[header] = [f"{v:,.0f}" if pd.notna(v) else "" for v in values] if column in WHOLE_MS else values
    return _with_note(table(out, digits=2), results, summaries=RUNS_SUMMARIES)


WHOLE_MS = {"first_call_ms"}  # `runs_table`'s extra columns printed in whole ms (a compile time: rv22B N3)


def _runs_shown(runs, shown) -> str:
    """A variant's runs for `runs_table`: "20", or "20 (10 shown)" where its summaries are over fewer rounds than it
    ran (`shared_runs`, review rv22A N6); "" where not recorded."""
    if runs != runs or runs is None:
        return ""
    runs = int(runs)
    return f"{runs} ({int(shown)} shown)" if shown == shown and shown is not None and int(shown) < runs else str(runs)


def memory_table(results: pd.DataFrame) -> str:
    """Per variant: peak allocated and reserved GB, and fragmentation (reserved − allocated) in GB
    and as a share of reserved; where recorded, the times the allocator freed its cache and retried
    (notebook 01_naive)."""
    out = pd.DataFrame(
        {
            "variant": results["variant"],
            "peak allocated GB": results["peak_allocated_gb"].astype(float),
            "peak reserved GB": results["peak_reserved_gb"].astype(float),
            "fragmentation GB": results["frag_gb"].astype(float),
            "fragmentation, % of reserved": results["frag_pct"].astype(float),
        }
    )
    retries = "allocator retries (last run)"
    if "num_alloc_retries" in results:  # a table from before the column has none
        out[retries] = results["num_alloc_retries"].astype(float)
    return table(out, digits={"fragmentation, % of reserved": 0, retries: 0, **{c: 2 for c in out.columns[1:4]}})


def memory_text(results: pd.DataFrame, two: str = "pipelined_static", one: str = "pipelined_static_1stream") -> str:
    """The sentence under notebook 07_pipelining's memory table (review rv19A N6): how much more the generator on
    two streams (`two`) reserved at its peak than the same loop on one (`one`), both read from `results` (rows of
    `tokgen.compare` whose `generator` is each, one model), with their fragmentation: from the last run of each,
    one run apiece, so not judged. "" where either row or its peak is missing. Where a generator has several rows
    (eager and compiled), the eager ones where both have one, else the compiled ones, so the two share a model
    (review rr20i N4); "" where they share none."""
    if "generator" not in results:
        return ""
    rows = results
    if "compiled" in rows:
        flags = rows["compiled"].astype(str).str.lower() == "true"
        for compiled in (False, True):
            both = rows[flags == compiled]
            if {two, one} <= set(both["generator"]):
                rows = both
                break
        else:
            return ""
    rows = rows.drop_duplicates("generator", keep="last").set_index("generator")
    if two not in rows.index or one not in rows.index:
        return ""
    a, b = rows.loc[two], rows.loc[one]
    if (a["peak_reserved_gb"] != a["peak_reserved_gb"]) or (b["peak_reserved_gb"] != b["peak_reserved_gb"]):
        return ""
    diff = a["peak_reserved_gb"] - b["peak_reserved_gb"]
    more = f"{abs(diff):.3f} GB {'more' if diff > 0 else 'less'} than" if round(diff, 3) else "as much as"
    return (f"Two streams (`{a['variant']}`) reserved {more} one (`{b['variant']}`) at the peak: "
            f"{a['peak_reserved_gb']:.3f} against {b['peak_reserved_gb']:.3f} GB, fragmentation {a['frag_pct']:.0f}% "
            f"against {b['frag_pct']:.0f}% of reserved (one run each, not judged).")  # fmt: skip


def device_memory_note(results: pd.DataFrame, gpu: str | None = None) -> str:
    """The GPU's memory in GB and GiB (and which of the two the "80GB" of a name like "NVIDIA H100
    80GB HBM3" is nearer: the name `gpu`, else the rows' `gpu` column, which `tokgen.compare`'s rows do not
    carry), the sizes whose peak reserved reached 90% of it, and what the allocator measured there: whether
    it ran out and retried (`tokgen.claims.retries_text`; notebook 01_naive)."""
    gpu_gb = results["device_memory_gb"].iloc[0]
    gib = gpu_gb * 1e9 / 2**30
    name = gpu if gpu is not None else results["gpu"].iloc[0] if "gpu" in results else ""
    named = re.search(r"\b(\d+)\s?GB\b", str(name))
    unit = ""
    if named:
        nearer = "GiB" if abs(int(named[1]) - gib) < abs(int(named[1]) - gpu_gb) else "GB"
        unit = f"; the “{named[0]}” of its name is nearer the {nearer} figure"
    full = near_device_memory(results)
    note = "No N came near it: the fragmentation below is the allocator's own."
    if len(full):
        retried = retries_text(full)
        note = f"At N = {', '.join(map(str, full['max_seqlen']))} peak reserved memory reached ≥ 90% of it"
        note += f"; {retried}." if retried else "."
    return f"The GPU has {gpu_gb:.1f} GB ({gib:.1f} GiB of 2³⁰ bytes{unit}). {note}"


def trend(values, within: float = BAND, digits: int = 2) -> str:
    """ "changes by less than 5%", "grows", "shrinks" or "has no steady trend", each step judged at
    the `digits` shown (notebook 02_kv_cache)."""
    values = np.asarray(list(values), dtype=float)
    steps = np.diff(np.round(values, digits))  # a change too small to show is no change
    if len(values) and values.max() <= (1 + within) * values.min():
        return f"changes by less than {within:.0%}"
    if len(steps) and (steps > 0).all():
        return "grows"
    if len(steps) and (steps < 0).all():
        return "shrinks"
    return "has no steady trend"


def plot_runtime_vs_n(ax, results: pd.DataFrame, by: str = "generator"):
    """Median runtime per generation against N with the interquartile range, one line per value
    of `by` (notebook 04_static_cache)."""
    results = shared_rounds(results)  # medians over the rounds every interleaved variant ran
    for (name, d), marker in zip(results.groupby(by), "osD^v"):
        d = d.sort_values("max_seqlen")
        ax.errorbar(d["max_seqlen"], d["median_ms"], yerr=_iqr(d), marker=marker, capsize=3, label=name)
    ax.set_xticks(sorted(results["max_seqlen"].unique()))
    ax.set_xlabel("max_seqlen N")
    over = shared_rounds_text(results)
    ax.set_ylabel("runtime per generation, ms (median, IQR)" + (f"\n({over})" if over else ""))
    ax.legend(frameon=False)
    return ax


def plot_sweep(axes, comparisons: pd.DataFrame, results: pd.DataFrame):
    """Notebook 08's panels: pipelined-vs-sync speed-up per batch size (a filled circle: faster or
    slower; a filled square: no effect within the band; a hollow circle: undecided) and ms per step
    per generator (dashed: pipelined), over the rounds both variants of its batch size ran
    (`tokgen.stats.shared_rounds`) (notebook 08_batch_sweep)."""
    left, right = axes
    results = shared_rounds(results)
    kinds = {  # outcome kind: (outcomes, marker, filled, legend entry)
        "decided": ([FASTER, SLOWER], "o", True, "faster or slower (decided)"),
        "no effect": ([NO_EFFECT], "s", True, f"no effect within ±{BAND:.0%} (decided)"),
        "undecided": ([UNDECIDED], "o", False, "undecided"),
    }
    for (compiled, fam), color in zip(comparisons.groupby("compiled"), ("C0", "C1")):
        fam = fam.sort_values("batch_size")
        name = "compiled" if compiled else "eager"
        left.errorbar(fam["batch_size"], fam["speedup"], yerr=_iqr(fam, *SPEEDUP), capsize=3, color=color, label=name)
        for outcomes, marker, filled, _ in kinds.values():
            pts = fam[fam["outcome"].isin(outcomes)]
            left.scatter(pts["batch_size"], pts["speedup"], marker=marker, edgecolors=color,
                         facecolors=color if filled else "white", zorder=3)  # fmt: skip
    handles = left.get_legend_handles_labels()[0]
    handles += [plt.Line2D([], [], ls="", marker=marker, color="grey", markerfacecolor="grey" if filled else "white",
                           label=words)
                for outcomes, marker, filled, words in kinds.values()
                if comparisons["outcome"].isin(outcomes).any()]  # fmt: skip
    left.axhline(1, color="grey", lw=0.8)
    left.set_ylabel("pipelined vs sync: speed-up × (median, IQR of rounds)")
    for (compiled, generator), fam in results.groupby(["compiled", "generator"]):
        fam = fam.sort_values("batch_size")
        name = f"{'compiled' if compiled else 'eager'} {generator}"
        style = {"color": "C1" if compiled else "C0", "ls": "--" if generator.startswith("pipelined") else "-"}
        right.plot(fam["batch_size"], fam["ms_per_step"], marker="o", label=name, **style)
    over = shared_rounds_text(results)
    right.set_ylabel("ms per step (median)" + (f"\n({over})" if over else ""))
    sizes = sorted(set(results["batch_size"]))
    for ax, legend in zip(axes, (handles, None)):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(b) for b in sizes])
        ax.minorticks_off()
        ax.set_xlabel("batch size B")
        ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return axes


def sweep_takeaway(comparisons: pd.DataFrame, results: pd.DataFrame) -> str:
    """One family's sweep in sentences: where pipelining was faster or slower (a real difference also shown
    within ±BAND said apart, as tied, the way `tokgen.voice.findings_text` and claim 8 read it: review rr23b S1),
    the synchronous step at the sweep's ends (no ratio: each B has its own rounds) and the GPU's share there, over
    the rounds both variants of a batch size ran (`tokgen.stats.shared_rounds`) (notebook 08_batch_sweep)."""
    results = shared_rounds(results)
    untied = [not _tied(g) for g in comparisons.to_dict("records")]  # real, but shown within ±BAND: a tie (rr23b S1)
    heads = comparisons["outcome"].where(untied, "tied")
    by_outcome = comparisons.groupby(heads)["batch_size"].apply(lambda b: ", ".join(map(str, sorted(b))))
    decided = [f"{o} (real) at B = {by_outcome[o]}" for o in (FASTER, SLOWER) if o in by_outcome]
    decided += [f"real, but within ±{BAND:.0%} (tied) at B = {by_outcome['tied']}"] if "tied" in by_outcome else []
    rest = [f"{outcome_text({'outcome': o})} at B = {by_outcome[o]}" for o in (UNDECIDED, NO_EFFECT) if o in by_outcome]
    text = "Pipelining: " + "; ".join(decided or ["no batch size really faster or slower"]) + "; " * bool(rest)
    text += "; ".join(rest) + ". "
    sync = results[results["generator"] == "kv_static"].set_index("batch_size").sort_index()
    step, busy = sync["ms_per_step"], sync["gpu_busy_ms"] / sync["steps"]
    b0, b1 = step.index[0], step.index[-1]
    lo, hi = sync["q25_ms"] / sync["steps"], sync["q75_ms"] / sync["steps"]  # the rounds' IQR, per step

    def at(b):
        return f"{step[b]:.2f} ({lo[b]:.2f}–{hi[b]:.2f}) ms at B = {b}"

    short, long_ = step.idxmin(), step.idxmax()
    order = (
        f"shortest at B = {short}, longest at B = {long_}, their IQRs apart"
        if hi[short] < lo[long_]
        else f"the shortest median (B = {short}) and the longest (B = {long_}) lie within each other's IQR: "
        "no order beyond the rounds' noise"
    )
    over = shared_rounds_text(sync)
    text += (
        f"A synchronous step takes {at(b0)} and {at(b1)} (median and IQR of the rounds{f', {over};' if over else ','} "
        f"each B timed in its own comparison; {order})"
    )
    share = sync["gpu_busy_share"]
    if busy[[b0, b1]].isna().any() or share[[b0, b1]].isna().any():  # not profiled, or a session lost at an end
        return text + "."
    text += f", while the GPU's busy time per step goes from {busy[b0]:.2f} to {busy[b1]:.2f} ms"
    word = lambda s: bound_words(s).split(" (")[0]  # noqa: E731 - "mixed", not "mixed (host and GPU)" in parentheses
    text += (f". The GPU is busy {share[b0]:.0%} of a step at B = {b0} ({word(share[b0])}) and "
             f"{share[b1]:.0%} at B = {b1} ({word(share[b1])}), by the bound table's rule: host-bound under "
             f"{HOST_BOUND:.0%}, GPU-bound from {GPU_BOUND:.0%}")  # fmt: skip
    if hi[short] < lo[long_] and long_ not in (b0, b1):
        within = [b for b in (b0, b1) if hi[b] >= lo[long_]]  # the ends whose IQR reaches the longest step's
        text += (
            f"; the step is longest at B = {long_}, not at an end (its IQR above both ends'): no steady growth"
            if not within
            else f"; the longest median is at B = {long_}, its IQR overlapping that of B = "
            f"{' and '.join(map(str, within))}: whether the step grows steadily, the rounds cannot tell"
        )
    return text + "."


def slope_range(results: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """The paired log-log slope's (`tokgen.stats.paired_slope`, shown beside claim 1) 2.5th and 97.5th percentiles
    over resampled rounds, one draw of rounds for every N, as they ran together; 2,000 draws: with 200 a
    percentile moved by several hundredths from seed to seed (review rvA17 N1). Callers print it with
    `slope_range_text`: two decimals from SLOPE_ROUNDS rounds on, one below (notebook 01_naive)."""
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        draws.append(paired_slope(resample_rounds(results, rng)))
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


SLOPE_ROUNDS = 20  # `slope_range_text`: below this many rounds a bootstrap percentile's second decimal is the seed's


def slope_range_text(low: float, high: float, rounds: int) -> str:
    """A paired slope's bootstrap range (`slope_range`) as printed (notebook 01_naive): from SLOPE_ROUNDS rounds on,
    each end in two decimals, kept on its side of claim 1's exponent (`_slope`); below, one decimal, each end
    rounded outward ("0.9–1.1" for 0.95–1.07): over 10 rounds the bootstrap median takes few values, and the
    97.5th percentile's second decimal moved with the seed (1.070 with seed 0, 1.048–1.059 with seeds 1–4;
    review rv22A N1)."""
    if rounds >= SLOPE_ROUNDS:
        return f"{_slope(low)}–{_slope(high)}"
    down, up = _printed_slope_ends(low, high, rounds)
    return f"{down:.1f}–{up:.1f}"


def _printed_slope_ends(low: float, high: float, rounds: int) -> tuple[float, float]:
    """The ends of a bootstrap range as `slope_range_text` prints them: below SLOPE_ROUNDS rounds each rounded outward
    to one decimal, else as they are; a reading beside the printed range (`slope_reading`) is read from these, so it
    never claims what the printed ends do not support (1.02–1.46 prints "1.0–1.5": not "lies below 1.5"; review
    rr22a S1)."""
    if rounds >= SLOPE_ROUNDS:
        return low, high
    return math.floor(round(low * 10, 6)) / 10, math.ceil(round(high * 10, 6)) / 10  # 1.1·10 reads 11, not 12


def _rounds_of(results: pd.DataFrame) -> int:
    """The rounds every row of `results` ran (the fewest any ran)."""
    return min((len(run_times({"times_ms": t})) for t in results["times_ms"]), default=0)


def _slope(k: float) -> str:
    """A paired slope of notebook 01's table (or one end of its range) in two decimals, or more where two would put
    it on or across claim 1's exponent 1.7 (×3.25 per doubling): 1.6996 reads "1.6996", not "1.70" (rrC12 N1,
    rvA17 N2): every slope notebook 01 and its solution print, alike."""
    return side_of(k, (GROWTH_EXPONENT,))


def paired_slope_text(results: pd.DataFrame) -> str:
    """Notebook 01's slope sentence: the paired slope (`tokgen.stats.paired_slope`, shown beside claim 1, which
    judges each doubling instead), how it is formed, the paired growth from one N to the next
    (`tokgen.claims.growth_ratios`) and the paired slope's bootstrap range (`slope_range_text`)
    (notebook 01_naive)."""
    ok = results.sort_values("max_seqlen")
    growth = ", ".join(f"×{r:.2f}" for r in growth_ratios(ok))
    k = paired_slope(ok)
    if k != k:  # a round without a time at some N: no slope, not "nan" (review rr17a N4)
        return (f"No paired slope: a round has no time at some N, so its slope across the N is not defined (runtime "
                f"{growth} from one N to the next, paired by round over the rounds both ran). Claim 1 judges each "
                "doubling's growth by its interval (section 5).")  # fmt: skip
    low, high = slope_range(ok)
    steps = np.diff(np.log(ok["max_seqlen"].to_numpy(float)))
    even = (" (with N spaced evenly in log, that round's first and last N alone decide it)"
            if len(steps) > 1 and np.allclose(steps, steps[0]) else "")  # fmt: skip
    slope, within = _slope(k), slope_range_text(low, high, _rounds_of(ok))
    return (f"Paired slope **{slope}**: per round, the least-squares log-log slope across the N{even}; "
            f"its median over the {_rounds_of(ok)} rounds (runtime {growth} from one N to the next, paired by round). "
            f"Drawn again from its own rounds (bootstrap), the paired slope lies within {within} "
            "in 95% of the draws. Shown, not judged: claim 1 judges each doubling's growth by its interval (section "
            "5).")  # fmt: skip


def batch_slopes_text(live: pd.DataFrame, reference: pd.DataFrame, min_rounds: int = MIN_ROUNDS) -> str:
    """Solution 01's exercise 1 (notebook 01_naive): the live run's paired slope (`tokgen.stats.paired_slope`), read
    against 1 and 2 from its bootstrap range (`slope_reading`, read from the range's printed ends,
    `_printed_slope_ends`) only from `min_rounds` rounds on (notebook 01's rule: no verdict on fewer), and the
    reference run's (data/01_naive.csv), each named by its batch size; where the two
    ran other N, that the N alone move a slope."""
    b, ref_b = (int(df["batch_size"].iloc[0]) for df in (live, reference))
    rounds, k = _rounds_of(live), _slope(paired_slope(live))
    if rounds < min_rounds:
        said = (f"B = {b} (paired slope {k}, live, in no CSV): {rounds} rounds, too few to read a slope by "
                f"notebook 01's own rule (no verdict on fewer than {min_rounds} rounds), so no reading and no range; "
                f"set `RUNS = {min_rounds}` or more for one")  # fmt: skip
    else:
        low, high = slope_range(live)
        said = (f"B = {b} (paired slope {k}, live, in no CSV; bootstrap range {slope_range_text(low, high, rounds)} "
                f"over its {rounds} rounds): {slope_reading(*_printed_slope_ends(low, high, rounds))}")  # fmt: skip
    ref_low, ref_high = slope_range(reference)
    ref_k, ref_rounds = _slope(paired_slope(reference)), _rounds_of(reference)
    said += (f". The reference run at B = {ref_b} (paired slope {ref_k}, bootstrap range "
             f"{slope_range_text(ref_low, ref_high, ref_rounds)}): "
             f"{slope_reading(*_printed_slope_ends(ref_low, ref_high, ref_rounds))}.")  # fmt: skip
    ns, ref_ns = (", ".join(map(str, sorted(df["max_seqlen"].astype(int)))) for df in (live, reference))
    if ns != ref_ns:
        said += (f" The two runs differ in N too (here {ns}, there {ref_ns}): the N alone move a slope (notebook "
                 "01), so the difference is not B's alone.")  # fmt: skip
    return said


def logits_sum_text(row: dict, vocab_size: int) -> str:
    """Solution 01's exercise 2 (notebook 01_naive), at one N of data/01_naive.csv: every step's full logits summed
    (step i, 1 to N, holds B·i·vocabulary float32 logits) beside the run's peak reserved (and whether the device
    could hold that sum, with the allocator's retries in the last run), the logits held at the last step (2N − 1
    positions, `tokgen.sizes.generation_bytes`) beside peak allocated, and one step's with `logits_to_keep=1`."""
    n, position_gb = row["max_seqlen"], row["batch_size"] * vocab_size * 4 / 1e9  # one position's logits
    summed = position_gb * n * (n + 1) / 2
    retries = row.get("num_alloc_retries", 0)
    retries = 0 if retries != retries else retries
    over = (
        f"more than the device's {row['device_memory_gb']:.1f} GB, and the run reserved "
        f"{row['peak_reserved_gb']:.2f} GB at its peak"
        + (f" (the allocator retried {retries:.0f} time{'s' * (retries != 1)} in its last run)" if retries > 0 else "")
        if summed > row["device_memory_gb"]
        else f"the run reserved {row['peak_reserved_gb']:.2f} GB at its peak: the sum is "
        f"{summed / row['peak_reserved_gb']:.0%} of it"
    )  # fmt: skip
    return (f"N = {n}: every step's full logits add up to {summed:.2f} GB; {over}. Peak allocated was "
            f"{row['peak_allocated_gb']:.2f} GB, of which the logits held at the last step (2N − 1 positions) are "
            f"{position_gb * (2 * n - 1):.2f} GB; with `logits_to_keep=1` a step's logits are {position_gb:.4f} GB.")


def quadratic_fit_text(ns, times) -> str:
    """Solution 01's exercise 3 (notebook 01_naive): a + b·N + c·N² through the (N, time) points, each coefficient
    with its unit, and at the largest N the quadratic and linear terms' shares of its time; where a coefficient is
    negative, that it has no meaning as a cost."""
    ns, times = np.asarray(ns, float), np.asarray(times, float)
    c, b, a = np.polyfit(ns, times, 2)
    i = int(np.argmax(ns))
    last, t_last = ns[i], times[i]
    return (f"a = {a:.0f} ms, b = {b:.2f} ms per step, c = {c * 1e3:.2f} µs per step². At N = {last:.0f} the "
            f"quadratic term is {c * last**2 / t_last:.0%} of the runtime, the linear one {b * last / t_last:.0%}."
            + (" A negative coefficient has no meaning as a cost." if min(a, b, c) < 0 else ""))  # fmt: skip


def coefficient_range_text(draws, fitted: float, last_n: float) -> str:
    """Solution 01's exercise 3 (notebook 01_naive): where b of a + b·N + c·N² lies in 95% of bootstrap draws of the
    rounds (`draws`), b·N at the largest N (`last_n`) against the fit's (`fitted` b), and what its sign says: within
    the noise where the range holds 0; positive or negative beyond it otherwise."""
    low, high = np.percentile(draws, [2.5, 97.5])
    said = (f"Over {len(draws)} draws of the rounds, b lies between {low:.2f} and {high:.2f} ms per step in 95% of "
            f"them: b·N at N = {last_n:.0f} between {low * last_n:.0f} and {high * last_n:.0f} ms, against the fit's "
            f"{fitted * last_n:.0f} ms.")  # fmt: skip
    if low <= 0 <= high:
        return said + (" So b's size and sign are within the noise: more sizes and a least-squares fit would pin it "
                       "down.")  # fmt: skip
    if high < 0:
        return said + (" So noise does not explain b's sign: the medians curve otherwise than a + b·N + c·N² allows "
                       "with positive costs, as work growing faster than N² would (attention re-runs i positions for "
                       "each of i queries).")  # fmt: skip
    return said + " So b is positive beyond the noise: a per-step cost that does not grow with the sequence."


def slope_text(results: pd.DataFrame) -> str:
    """ "paired slope 1.00 (runtime ×2.00, ×2.03 from one N to the next, paired by round; bootstrap range
    0.9–1.2 over its first 10 rounds)": one generator's paired log-log slope over N (`tokgen.stats.paired_slope`,
    claim 1's) with its paired growth and `slope_range` (`slope_range_text`: one decimal below SLOPE_ROUNDS
    rounds), all over the rounds every row ran (`shared_runs`, else the fewest any row ran), the first k of each;
    a sequential run's table (a `looks` column, which `resample_rounds` keeps as it is) is resampled over those k
    rounds too, as a fixed-rounds table of k rounds (notebook 02)."""
    ok = results.sort_values("max_seqlen")
    times = [run_times({"times_ms": t}) for t in ok["times_ms"]]
    shared = ok["shared_runs"].dropna() if "shared_runs" in ok else pd.Series(dtype=float)
    k = int(shared.min()) if len(shared) else min(len(t) for t in times)
    cut = ok.drop(columns=[c for c in ("looks", "shared_runs") if c in ok]).assign(
        times_ms=[";".join(map(str, t[:k])) for t in times], median_ms=[float(np.median(t[:k])) for t in times]
    )
    growth = ", ".join(f"×{r:.2f}" for r in growth_ratios(cut))
    low, high = slope_range(cut)
    return (f"paired slope {paired_slope(cut):.2f} (runtime {growth} from one N to the next, paired by round; "
            f"bootstrap range {slope_range_text(low, high, k)} over its first {k} rounds)")  # fmt: skip


def plot_timeline(timeline, steps, ax=None, title: str = ""):
    """CPU ranges on top, a row of kernels per CUDA stream below, for window-relative `steps`
    (tokgen.profiling.Timeline; CPU rows need a `cpu=True` profile); the GPU's bars without edge lines, so a
    kernel of a few µs is not drawn wider than it ran, and the title ends with the GPU's idle share of the steps
    shown, all streams together, as the zoom's does (review rvA15 S3) (notebook 06)."""
    steps = list(steps)
    k = timeline.kernels[timeline.kernels["step"].isin(steps)]
    if k.empty:
        raise ValueError(f"no kernels recorded for steps {steps}")
    t0, t1 = k["start"].min(), k["end"].max()
    r = timeline.ranges
    r = r[(r["end"] >= t0 - 50) & (r["start"] <= t1)]
    lanes = [("step", "C0"), ("model forward", "C2"), ("sync wait", "C3"), ("copy call", "C4")]
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
        ax.broken_barh(list(zip(s["start"] - t0, s["end"] - s["start"])), (y, 0.8), color="C1", linewidth=0)
        labels.append(f"GPU stream {int(stream)}")
        y -= 1
    ax.set_yticks([-i + 0.4 for i in range(len(labels))], labels)
    ax.set_xlabel("time since the first kernel shown (µs)")
    idle = f"GPU idle {1 - union_length(k['start'], k['end']) / (t1 - t0):.0%} of these steps (all streams)"
    ax.set_title(f"{title}; {idle}" if title else idle)
    return ax


def step_boundary_zoom(timeline, step: int, margin_us: float = 150.0) -> tuple[float, float]:
    """The zoom `plot_step_boundary` shows at least: from `margin_us` before the end of `step`'s last GPU
    work to `margin_us` after the start of the next step's first (notebook 06)."""
    k = timeline.kernels
    end, start = k[k["step"] == step]["end"].max(), k[k["step"] == step + 1]["start"].min()
    return end - margin_us, start + margin_us


def plot_step_boundary(
    ax, timeline, step: int, margin_us: float = 150.0, title: str = "", width_us: float | None = None
):
    """A zoom on the end of `step` and the start of the next: kernels at true width, idle intervals
    shaded, gaps of 5 µs or more labelled (widest first, none overlapping), CPU ranges above (notebook 06).
    `width_us`: the zoom's width at least (more of the next step shown), so that panels share one scale."""
    k = timeline.kernels
    t0, t1 = step_boundary_zoom(timeline, step, margin_us)
    t1 = t1 if width_us is None else max(t1, t0 + width_us)
    shown = k[(k["end"] >= t0) & (k["start"] <= t1)].sort_values("start")
    r = timeline.ranges[(timeline.ranges["end"] >= t0) & (timeline.ranges["start"] <= t1)]
    lanes = [("copy call", "C4"), ("sync wait", "C3"), ("model forward", "C2"), ("step", "C0")]
    for y, (lane, color) in enumerate(lanes, start=1):
        rows = r[r["name"].str.startswith(lane)]
        ax.broken_barh(list(zip(rows["start"] - t0, rows["end"] - rows["start"])), (y, 0.8), color=color, alpha=0.7)
    ax.broken_barh(list(zip(shown["start"] - t0, shown["end"] - shown["start"])), (0, 0.8), color="C1")
    busy_end, idle, gaps = None, 0.0, []
    for a, b in zip(shown["start"], shown["end"]):
        if busy_end is not None and a > busy_end:
            ax.axvspan(busy_end - t0, a - t0, color="grey", alpha=0.25)  # not red: the sync-wait lane is
            gaps.append((busy_end - t0, a - t0))
            idle += a - busy_end
        busy_end = b if busy_end is None else max(busy_end, b)
    # label the widest gaps first, and none whose text would run into a label already placed
    us_per_point = (t1 - t0) / (ax.bbox.width * 72 / ax.figure.dpi)
    placed = []
    for a, b in sorted(gaps, key=lambda g: g[0] - g[1]):
        text, middle = f"{b - a:.0f} µs", (a + b) / 2
        half = 0.5 * len(text) * 0.6 * 8 * us_per_point + 2 * us_per_point  # 8-point text, 2 points apart
        if b - a >= 5 and all(abs(middle - m) >= half + h for m, h in placed):
            ax.annotate(text, (middle, 0.9), ha="center", fontsize=8)
            placed.append((middle, half))
    span = shown["end"].max() - shown["start"].min()
    ax.set_yticks([y + 0.4 for y in range(len(lanes) + 1)], ["GPU (all streams)", *(f"CPU: {n}" for n, _ in lanes)])
    ax.set_xlim(0, t1 - t0)
    ax.set_xlabel("µs since the zoom's start")
    ax.set_title(f"{title} GPU idle {idle / span:.0%} of this zoom (shaded grey)")
    return ax


# --- helpers introduced in notebooks 10-12 and 14 ---


def plot_sweep_against_floor(ax, sweep: pd.DataFrame):
    """ms per generation against the batch size for each generator of notebook 14's sweep, with
    the task's floor at each batch size as a dashed line (notebook 14)."""
    ok = sweep[sweep["status"] == "ok"]
    for i, (generator, rows) in enumerate(ok.groupby("generator", sort=False)):
        rows = rows.sort_values("batch_size")
        ax.plot(rows["batch_size"], rows["median_ms"], marker="o", color=f"C{i}", label=generator)
    floor = ok.groupby("batch_size")["floor_ms"].first()
    ax.plot(floor.index, floor.values, "k--", label="the task's floor")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    plain_log_axis(ax.yaxis)
    ax.set_xticks(list(floor.index), [str(b) for b in floor.index])
    ax.set_xlabel("batch size B")
    ax.set_ylabel("ms per generation (median; log)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def one_layer(timeline, layer: int) -> pd.DataFrame:
    """The kernels of one layer of the first decode step of a profiled window's middle replay, from
    the product before its attention kernel to the one before the next layer's (notebook 10)."""
    k = timeline.kernels
    replay = k[k["step"] == sorted(k["step"].unique())[len(k["step"].unique()) // 2]].sort_values("start")
    replay = replay.reset_index(drop=True)
    attention = replay.index[replay["name"].str.contains("attend")].tolist()
    if len(attention) < layer + 2:
        raise ValueError(f"the window's replay holds {len(attention)} attention kernels: no layer {layer} to show")
    return replay.iloc[attention[layer] - 1 : attention[layer + 1] - 1]


def plot_one_layer(ax, timelines: dict, layer: int):
    """A row per timeline: one layer's kernels coloured by kind, consecutive ones alternating between
    the row's halves so that overlapping kernels (PDL) stay apart (notebook 10)."""
    kinds, rows, counts = {}, list(timelines.items()), []
    for y, (_, timeline) in enumerate(reversed(rows)):
        layer_k = one_layer(timeline, layer)
        t0 = layer_k["start"].min()
        for i, r in enumerate(layer_k.itertuples()):
            color = kinds.setdefault(kernel_kind(r.name), f"C{len(kinds)}")
            lane = (y + 0.1 + 0.42 * (i % 2), 0.38)  # (bottom, height): the lower half, then the upper
            ax.broken_barh([(r.start - t0, r.end - r.start)], lane, color=color, edgecolor="k")
        counts.append(len(layer_k))
    ax.set_yticks([y + 0.5 for y in range(len(rows))],
                  [f"{name}\n{n} kernels" for (name, _), n in zip(reversed(rows), counts)])  # fmt: skip
    ax.set_xlabel(f"µs since the layer's first kernel started (layer {layer})")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in kinds.values()]
    ax.legend(handles, list(kinds), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def plain_log_axis(axis) -> None:
    """A log-scaled axis with ticks at 1, 2, 3 and 5 times the powers of ten (finer where the data span
    less than a decade: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8), written as plain numbers ("50", "100",
    "200"): no mantissa × exponent labels to collide (notebook 10_cuda_graphs)."""
    low, high = sorted(axis.get_data_interval())
    narrow = low > 0 and high / low < 10
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8) if narrow
                                             else (1, 2, 3, 5)))  # fmt: skip
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def plot_dots(df: pd.DataFrame, label: str, value: str, *, group: str | None = None, low: str | None = None,
              high: str | None = None, log: bool = False, xlabel: str = "", ax=None):  # fmt: skip
    """One row per `label` (the first at the top), a dot at `value`, a bar from `low` to `high`, one
    colour per `group`: on a log axis a dot keeps its meaning where a bar does not (notebook 10_cuda_graphs)."""
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
        ax.plot(d[value], ys, "o", color=f"C{j}", label=None if g is None else str(g))
        if low is not None:  # the bar from its ends, not as arms around the dot: a median may lie outside its
            _bars(ax, ys, d[low], d[high], f"C{j}")  # Hodges-Lehmann interval (plot_speedups), never a crash
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


def _bars(ax, ys, low, high, color: str) -> None:
    """Horizontal bars from `low` to `high` at heights `ys`, capped; an end that is not finite (an
    interval open on that side) is left undrawn, as its bar (notebook 10_cuda_graphs)."""
    ys, low, high = np.asarray(ys, float), np.asarray(low, float), np.asarray(high, float)
    both = np.isfinite(low) & np.isfinite(high)
    if both.any():
        ax.hlines(ys[both], low[both], high[both], color=color, lw=1.5)
    for ends in (low, high):
        ok = np.isfinite(ends)
        if ok.any():
            ax.plot(ends[ok], ys[ok], ls="", marker="|", ms=6, color=color)


def _k_sweeps(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each generator timed at several K, its rows by K (notebook 10_cuda_graphs)."""
    graphs = results[results["steps_per_graph"].notna()]
    return {g: r.sort_values("steps_per_graph") for g, r in graphs.groupby("generator", sort=False)
            if r["steps_per_graph"].nunique() > 1}  # fmt: skip


def speedups_vs_k(results: pd.DataFrame) -> pd.DataFrame:
    """Each K of a generator timed at several K against that generator's smallest K (K = 1), round
    by round (`tokgen.stats.gain`: speed-up, outcome, interval_low–interval_high), one row per K
    but the smallest (notebook 10_cuda_graphs)."""
    rows = []
    for generator, runs in _k_sweeps(results).items():
        base = runs["variant"].iloc[0]
        for r in runs.iloc[1:].to_dict("records"):
            rows.append({"generator": generator, "steps_per_graph": r["steps_per_graph"], "base_k":
                         runs["steps_per_graph"].iloc[0], **gain(results, base, r["variant"])})  # fmt: skip
    return pd.DataFrame(rows)


def plot_speedup_vs_k(ax, results: pd.DataFrame) -> pd.DataFrame:
    """Each K's paired speed-up against K = 1 (`speedups_vs_k`), one line per generator timed at
    several K, each point with its interval (a bar; an open end undrawn), K = 1 at ×1, ×1 and the
    ±BAND band marked: a direction is read from the rounds, not from medians. The title says the bar is
    the (1 - ALPHA) interval while the ±BAND call reads the narrower (1 - 2·ALPHA) equivalence interval, so a
    bar may cross the band's edge for a difference shown within ±BAND (review rvC15 S2). Returns the
    comparisons drawn (notebook 10_cuda_graphs)."""
    comparisons = speedups_vs_k(results)
    sweeps = _k_sweeps(results)
    for i, (generator, runs) in enumerate(sweeps.items()):
        shift = 2 ** (0.05 * (i - (len(sweeps) - 1) / 2))  # side by side at each K, so the bars stay apart
        own = comparisons[comparisons["generator"] == generator]
        ks = np.r_[runs["steps_per_graph"].iloc[0], own["steps_per_graph"].to_numpy(float)] * shift
        line = ax.plot(ks, np.r_[1.0, own["speedup"].to_numpy(float)], marker="o", label=generator)[0]
        low, high = own["interval_low"].to_numpy(float), own["interval_high"].to_numpy(float)
        both = np.isfinite(low) & np.isfinite(high) & (low > 0)
        ax.vlines(ks[1:][both], low[both], high[both], color=line.get_color(), lw=1.5)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.axhspan(1 / (1 + BAND), 1 + BAND, color="gray", alpha=0.12, label=f"within ±{BAND:.0%} (no effect band)")
    ks = sorted(results.loc[results["steps_per_graph"].notna(), "steps_per_graph"].unique())
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [f"{k:g}" for k in ks])
    ax.set(xlabel="K = decode steps per graph replay", ylabel="paired speed-up against K = 1, × (> 1: faster)",
           title=f"Each K against K = 1, round by round\n(median of the rounds' ratios, bar: its {1 - ALPHA:.0%} "
                 f"interval;\nthe ±{BAND:.0%} call reads the {1 - 2 * ALPHA:.0%} equivalence interval)")  # fmt: skip
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return comparisons


def busy_by_k(results: pd.DataFrame) -> list[str]:
    """One sentence per generator timed at several K: the GPU's busy time per generation at each K
    (`gpu_busy_ms`: one profiled generation each, not a paired comparison) and the steps its
    replays compute (K × the replays N steps need: past N where K does not divide N), as in
    notebook 10_cuda_graphs."""
    said = []
    for generator, runs in _k_sweeps(results).items():
        parts = []
        for r in runs.to_dict("records"):
            k, n = int(r["steps_per_graph"]), int(r["steps"])
            parts.append(f"K = {k} {r['gpu_busy_ms']:.2f} ms ({-(-n // k) * k} steps computed)")
        said.append(f"`{generator}`, the GPU's busy time per generation of {n} steps (one profiled generation "
                    f"each, not a paired comparison): " + ", ".join(parts) + ".")  # fmt: skip
    return said


def other_run_medians_note(writer: str) -> str:
    """The line under a table that sets notebook `writer`'s medians against a floor: `medians_note`
    for another notebook's run, whose paired comparisons are in that notebook, not in a figure here
    (notebook 12_speed_of_light)."""
    return (f"The medians above are each variant's own, not a ranking: on a host that drifts, their order, and so "
            f"the order of their distances from the floor, need not be the paired one. Which of two variants is "
            f"faster is read from their paired speed-up, round by round, in notebook {writer}.")  # fmt: skip


def stop_token(row, step: int) -> tuple[int, int]:
    """(token, column): the first token that `row` (prompt in column 0) first generates at column
    `step` or later, else the last to first appear before it; as the EOS id it stops the generation
    after `column` steps (notebook 10_cuda_graphs)."""
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
    """Where `tokgen.count_syncs`' counting methods differ, a sentence per pattern (notebook 11_sync_audit)."""
    out = []
    device = audit["device_syncs"]
    if device.nunique() == 1:
        n = int(device.iloc[0])
        out.append(
            "No row shows a device-wide sync: no audited generator calls `torch.cuda.synchronize()`. The table leaves "
            "that column out."
            if n == 0
            else f"Every row shows {n} device-wide sync{'s' * (n != 1)} per run, the no-check generators included, "
            "which wait on nothing: the counting's own (`count_syncs` profiles each run and synchronizes around "
            "it), not the generators'. The table leaves that column out."
        )
    keys = ["local_scalar_dense", "sync_debug_warnings", "stream_syncs", "event_syncs"]
    for (r, w, s, e), rows in audit.groupby(keys, sort=False):
        reasons = []
        if w > r:
            reasons.append(
                f"{w - r} of the {w} flagged syncs read no value through `.item()` (a stream wait such as "
                "`Stream.synchronize()`, a blocking copy between host and device such as "
                "`torch.tensor(..., device='cuda')`, or an operation whose result's size is data-dependent, like "
                "`nonzero()`)"
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


HOST_WAITS = "host waits (stream + event + device syncs)"
ITEM_READS = "of which `.item()` reads"


def host_waits(audit: pd.DataFrame) -> pd.DataFrame:
    """`tokgen.count_syncs` rows as a table of the host's waits: `HOST_WAITS`, the CUDA runtime's
    blocking waits (stream + event + device syncs), each counted once, then `ITEM_READS`: an
    `.item()` read waits through one of the stream syncs, so it is part of the total, not added to
    it; then the three kinds (notebook 10_cuda_graphs)."""
    kinds = ["stream_syncs", "event_syncs", "device_syncs"]
    out = audit[["variant"]].copy()
    out[HOST_WAITS] = audit[kinds].sum(axis=1).astype(int)
    out[ITEM_READS] = audit["local_scalar_dense"].astype(int)
    for kind in kinds:
        out[header_of(kind)] = audit[kind].astype(int)
    return out


def waits_text(audit: pd.DataFrame, steps: int) -> str:
    """One sentence: each audited variant's host waits per generation of `steps` steps (`host_waits`),
    with its `.item()` reads among them; where a row counts more `.item()` reads than stream syncs
    (two mechanisms, `count_syncs`), it says so instead of "of which" (notebook 10_cuda_graphs)."""
    parts = []
    for r, total in zip(audit.to_dict("records"), host_waits(audit)[HOST_WAITS]):
        item = int(r["local_scalar_dense"])
        reads = f"{item} `.item()` read{'s' * (item != 1)}"
        among = ("none of them an `.item()` read" if item == 0 else f"of which {reads}" if item <= r["stream_syncs"]
                 else f"and {reads}, more than its stream syncs: the two are counted by two mechanisms")  # fmt: skip
        parts.append(f"`{r['variant']}` {total} ({among})")
    return f"The host waits per generation of {steps} steps: " + "; ".join(parts) + "." if parts else ""


def profiled_ks(ranked: pd.DataFrame, results: pd.DataFrame, generators, anchor: str) -> dict:
    """{generator: the variant profiled, None where none was ranked} (notebook 10_cuda_graphs): `anchor`'s
    (the fused step's) first listed variant, and for every other generator its variant at that K where
    that K shares the generator's best rank in `ranking`'s table `ranked`, so the steps are profiled at
    one K; else its first listed of that rank (review rvC16 S2: a point speed-up against a noisy base
    picked K = 2, tied with the fused step's K = 4). `results` gives each variant's generator and
    steps_per_graph."""
    info = results.set_index("variant")
    generator = ranked["variant"].map(info["generator"])
    first = ranked[generator == anchor]["variant"].tolist()
    k = info.at[first[0], "steps_per_graph"] if first else None
    chosen = {}
    for g in generators:
        rows = ranked[generator == g]
        best = rows[rows["rank"] == rows["rank"].min()]["variant"].tolist()
        chosen[g] = ([v for v in best if info.at[v, "steps_per_graph"] == k] + best + [None])[0]
    return chosen


def profiled_k_text(ranked: pd.DataFrame, results: pd.DataFrame, variant: str, same_k_as: str | None = None) -> str:
    """Which K of a generator is profiled, and the other Ks that share its rank in `ranking`'s table
    (`ranked`; `results` gives each variant's generator and steps_per_graph): "`g K=2` is profiled:
    K = 1, 2, 4 of `g` share rank 3; it is listed first among them by its point speed-up against
    `naive`, which does not rank them", or, where `variant` has the K of `same_k_as` (`profiled_ks`'s
    anchor), "…; it has the K of `f K=2`, so the steps are profiled at one K" (notebook 10_cuda_graphs)."""
    info = results.set_index("variant")
    generator, rank = info.at[variant, "generator"], ranked.set_index("variant").at[variant, "rank"]
    peers = ranked[(ranked["rank"] == rank) & ranked["variant"].map(info["generator"]).eq(generator)]["variant"]
    ks = sorted(int(info.at[v, "steps_per_graph"]) for v in peers)
    if (info["generator"] == generator).sum() == 1:
        return f"`{variant}` is profiled: the only K of `{generator}` timed."
    if len(ks) == 1:
        return f"`{variant}` is profiled: no other K of `{generator}` shares its rank {int(rank)}."
    k = info["steps_per_graph"]
    if same_k_as in info.index and same_k_as != variant and k[same_k_as] == k[variant]:
        return (f"`{variant}` is profiled: K = {', '.join(map(str, ks))} of `{generator}` share rank {int(rank)}; "
                f"it has the K of `{same_k_as}`, so the steps are profiled at one K.")  # fmt: skip
    return (f"`{variant}` is profiled: K = {', '.join(map(str, ks))} of `{generator}` share rank {int(rank)}; "
            f"it is listed first among them by its point speed-up against `{ranked['vs'].iloc[0]}`, which does "
            "not rank them.")


def product_findings(products: pd.DataFrame, rows: int, layers: int) -> list[str]:
    """Sentences on GPT-2's products timed alone (`12_products`): a step's against their floor; the
    largest and smallest product's share of copy bandwidth, each on its own (their rounds are not
    shared, so no direction between them is stated); more rows and a split sum as paired speed-ups
    over the interleaved rounds, where the run recorded them (notebook 12_speed_of_light)."""
    ok = products[products["status"] == "ok"]
    base = ok[(ok["rows"] == rows) & (ok["splits"] == 1)].set_index("product")
    if base.empty or "LM head" not in base.index:
        return [f"*No product was timed at {rows} rows with an undivided sum.*"]
    layer = base.drop("LM head")
    per_step = layers * layer["median_us"].sum() + base.loc["LM head", "median_us"]
    floor = layers * layer["floor_us"].sum() + base.loc["LM head", "floor_us"]
    small, large = layer["weight_mb"].idxmin(), layer["weight_mb"].idxmax()
    pct = 100 * base["floor_us"] / base["median_us"]  # each product's median against its own bytes' floor
    out = [
        f"At {rows} rows, one step's products ({layers} layers' and the LM head) timed alone add up to "
        f"**{per_step:.0f} µs** (their medians); reading their weights at copy speed takes **{floor:.0f} µs**.",
        f"The {large} product reads {base.loc[large, 'weight_mb'] / base.loc[small, 'weight_mb']:.0f}× the bytes "
        f"of the {small} product; timed alone, it runs at **{pct[large]:.1f}%** of copy bandwidth, the {small} "
        f"product at **{pct[small]:.1f}%** (each its median against its own bytes' floor, in rounds of their own: "
        "two separate measurements, not compared here).",
    ]
    shapes = [(r, 1, f"With {r} rows ({r / rows:g}× the arithmetic and the activations, the same weight bytes), "
                     f"against {rows} rows")
              for r in sorted(set(ok["rows"]) - {rows})]  # fmt: skip
    shapes += [(r, s, f"At {r} rows, the sum cut into {s} batched products (their partial sums not added), "
                "against one product") for s in sorted(set(ok["splits"]) - {1}) for r in sorted(set(ok["rows"]))]
    for r, s, what in shapes:  # every row count: a split that pays at one may not at another
        gains = {p: compare_rounds(product_rounds(ok, p, rows if s == 1 else r, 1), product_rounds(ok, p, r, s))
                 for p in base.index if product_rounds(ok, p, r, s)}  # fmt: skip
        if gains:
            said = "; ".join(f"{p} {speedup_text(g)}" for p, g in gains.items())
            out.append(f"{what}, paired round by round: {said}.")
        elif len(ok[(ok["rows"] == r) & (ok["splits"] == s)]):
            out.append(f"{what}: not compared (this run recorded no rounds to pair).")
    return out


# --- helpers introduced in notebooks 09 and 13 ---


def plot_regime_map(ax, regimes: pd.DataFrame, hidden_by: str, shared: pd.DataFrame | None = None):
    """Speed-up of `hidden_by` over sync against the GPU share of a step, a colour per place, circles
    eager, squares compiled, the ±5% band shaded; the y range fits `shared` (all panels' rows) (notebook 13)."""
    places = list(dict.fromkeys(regimes["where"]))
    for i, place in enumerate(places):
        for compiled, marker in ((False, "o"), (True, "s")):
            d = regimes[(regimes["where"] == place) & (regimes["compiled"] == compiled)]
            ax.errorbar(d["gpu_share"], d["speedup"], yerr=_iqr(d, *SPEEDUP), fmt=marker, color=f"C{i}", capsize=3,
                        alpha=0.85, label=f"{place}, {'compiled' if compiled else 'eager'}")  # fmt: skip
    # labels beside their points: neighbours along the x axis take turns above and below, so that
    # points that crowd together (GPU-bound, near a share of 1) keep their labels apart
    colors = {place: f"C{i}" for i, place in enumerate(places)}
    for j, r in enumerate(regimes.sort_values("gpu_share").itertuples()):
        ax.annotate(f"B={r.batch_size}", (r.gpu_share, r.speedup), xytext=(4, (10, -14, 24, -28, 38, -42)[j % 6]),
                    textcoords="offset points", fontsize=7, color=colors[r.where],  # fmt: skip
                    arrowprops={"arrowstyle": "-", "color": colors[r.where], "lw": 0.4})  # fmt: skip
    ax.axhspan(1 / 1.05, 1.05, color="grey", alpha=0.15, lw=0, label="no effect (±5%)")
    ax.axhline(1, color="grey", lw=0.8)
    fit = regimes if shared is None else shared
    ax.set_ylim(max(0.5, fit["speedup_q25"].min() - 0.05), min(2.0, fit["speedup_q75"].max() + 0.05))
    ax.set_xlabel("GPU share of a synchronous step (GPU busy / wall time)")
    ax.set_ylabel(f"speed-up of {hidden_by} over sync (×, median and IQR)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
    return ax


def show_claim(n: int, results_dir: str | Path) -> None:
    """The article's claim n, what we measured and the verdict, from data/ (notebooks 01-09)."""
    c = claim(n, results_dir)
    why = f"  \nWhy undecided: {c['why']}." if c["why"] else ""
    say(
        f"**Article (claim {n}):** {c['article']}.  \n**Measured:** {c['measured']}.  \n"
        f"**Verdict: {c['verdict']}.**{why}  \nCriterion: {c['criterion']}."
    )


# --- helpers introduced in notebooks 10 and 12 and their solutions ---


def rank_label(row) -> str:
    """A y label of a figure in rank order, from `ranking`'s row (rank, tied, variant): "1= `a`" for
    a rank several variants share, "5 `a`" for one held alone (notebook 10_cuda_graphs)."""
    return f"{int(row['rank'])}{'=' if row['tied'] else ''}  {row['variant']}"


OVERLAP_SHARE = 0.01  # durations that add up to more than the own times by this share overlap (notebook 10)


def durations_overlap(kernels: pd.DataFrame, variant: str, share: float = OVERLAP_SHARE) -> bool:
    """Whether `variant`'s kernels in a kernel table (notebook 10's `10_kernels`: us_per_token,
    own_us_per_token per kind) have durations that add up to more than their own times by over
    `share`: kernels launched early by programmatic dependent launch count their wait in their
    duration, so this reads from the recorded run whether PDL was on for it (compute capability
    ≥ 9), whichever card reads the table (notebook 12_speed_of_light)."""
    rows = kernels[kernels["variant"] == variant]
    return bool(len(rows) and rows["us_per_token"].sum() > (1 + share) * rows["own_us_per_token"].sum())


def fusing_split_text(unfused, fused, overlap: bool) -> str:
    """Fusing's change of the GPU's busy time per step, and of the products' and other kernels' own
    times, from `products_against_floor`'s rows `unfused` and `fused` (Series named by variant:
    busy_us, products_us, other_us). Where `overlap` (`durations_overlap` for the unfused run: PDL
    was on), the unfused product kernel's L2 prefetch sits in the kernel before its own time, so the
    split is said not to be fusing's effect alone; without it no kernel prefetches and that is said. Either way
    the fused products also do the unfused step's add-and-norm work, which moves own time from the other kernels
    into the products (review rvB12 N5; notebook 12_speed_of_light)."""
    a, b = unfused, fused
    text = (f"Fusing (`{a.name}` → `{b.name}`), per step: the GPU's busy time {a.busy_us:.0f} → {b.busy_us:.0f} µs "
            f"({signed(b.busy_us - a.busy_us)}; one profile each, not a paired speed-up); the products' own time "
            f"{a.products_us:.0f} → {b.products_us:.0f} µs and the other kernels' {a.other_us:.0f} → "
            f"{b.other_us:.0f} µs")  # fmt: skip
    moved = (". The fused product kernels also do work the unfused step ran in other kernels (the split sums' "
             "addition, the residual add, the norms' statistics: notebook 10's fused step), so part of that split is "
             "work moving from the other kernels into the products")  # fmt: skip
    if overlap:
        return (text + moved + ". Beyond that, the split is not fusing's effect alone either: the unfused run's "
                "kernels overlapped (programmatic dependent launch), so its product kernels' L2 prefetch, issued "
                "before their wait, can fall in the own time of the kernel before each, and the fused step's kernels "
                "do not prefetch (above).")  # fmt: skip
    return (text + moved + " (the unfused run's kernels did not overlap: none was launched early, so none "
            "prefetched).")  # fmt: skip


def is_hopper_sxm(gpu) -> bool:
    """Whether a GPU name (the `gpu` column, `torch.cuda.get_device_name`) is an H100 SXM or an H200 SXM, the two
    with one dense TF32 datasheet rate: "H100" with "SXM" or "HBM3" (the SXM's memory; the PCIe card's is HBM2e)
    in it, or "H200" without "NVL" (the H200 SXM reports "NVIDIA H200"; the H200 NVL, a lower rate, says "NVL")
    (notebook 12_speed_of_light's solution)."""
    name = str(gpu).upper()
    return ("H100" in name and ("SXM" in name or "HBM3" in name)) or ("H200" in name and "NVL" not in name)


def crossover_text(*, gpu: str, gbs: float, steps: int, tflops: float, measured: bool, datasheet_tflops: float,
                   weights_ms: float, arithmetic_row_ms: float, cache_row_bytes: float,
                   cache_share: tuple[int, float]) -> list[str]:  # fmt: skip
    """Exercise 1 of solution 12_speed_of_light, in two sentences. (1) From which batch size B the
    arithmetic of a generation of `steps` steps (`arithmetic_row_ms` per row of the batch at
    `tflops`, measured by notebook 12 or, where `measured` is False, `datasheet_tflops`) takes longer
    than reading the weights (`weights_ms`), with the cache's share of the floor at a batch
    (`cache_share`: B, share); beside a measured rate, the crossover at an H100 or H200 SXM's datasheet rate
    only where `gpu` is one (`is_hopper_sxm`): elsewhere it would mix this card's bandwidth with another
    card's rate. (2) Per row, the cache's bytes (`cache_row_bytes`, at `gbs`) against the arithmetic:
    both grow with B, so where the cache's time per row exceeds the arithmetic's, the whole floor
    (weights and cache) is never overtaken by the arithmetic at any B; else from which B it is."""
    crossover = weights_ms / arithmetic_row_ms  # arithmetic grows as B, the weights' bytes do not
    if measured:
        rate = f"the measured {tflops:,.0f} TFLOP/s (fp32 with TF32, notebook 12)"
    else:
        hybrid = "" if is_hopper_sxm(gpu) else " with this card's bandwidth"
        rate = (f"{datasheet_tflops:g} TFLOP/s (an H100 or H200 SXM's datasheet TF32 rate{hybrid}: notebook 12 "
                "recorded no measured one)")  # fmt: skip
    beside = ""
    if measured and is_hopper_sxm(gpu):
        beside = (f" (B ≈ {crossover * datasheet_tflops / tflops:.0f} at an H100 or H200 SXM's datasheet "
                  f"{datasheet_tflops:g} TFLOP/s)")  # fmt: skip
    b, share = cache_share
    first = (f"Bandwidth {gbs:,.0f} GB/s ({gpu}), N = {steps}, arithmetic at {rate}: the arithmetic takes longer "
             f"than reading the weights from B ≈ {crossover:.0f} on{beside}. The cache's bytes grow with B as well: "
             f"at B = {b} they are {share:.0%} of the floor.")  # fmt: skip
    cache_row_ms = cache_row_bytes / gbs / 1e6
    said = (f"Per row of the batch, a generation of N = {steps} moves {cache_row_bytes / 1e6:,.1f} MB of cache "
            f"({cache_row_ms:.3f} ms at {gbs:,.0f} GB/s) and computes {arithmetic_row_ms:.3f} ms of arithmetic")
    if cache_row_ms >= arithmetic_row_ms:
        second = (said + ": each row adds more bytes' time than arithmetic, so the whole floor (weights and cache) "
                  f"is set by bytes at every B at this N; only the weights' part is overtaken, from B ≈ "
                  f"{crossover:.0f}.")  # fmt: skip
    else:
        whole = weights_ms / (arithmetic_row_ms - cache_row_ms)
        second = (said + f": the arithmetic overtakes the whole floor (weights and cache) from B ≈ {whole:.0f} on, "
                  f"later than the weights alone (B ≈ {crossover:.0f}).")  # fmt: skip
    return [first, second]


def kind_change_text(own: pd.DataFrame, count: pd.DataFrame, base: str, name: str, share: float = OVERLAP_SHARE) -> str:
    """One decoder's kernel table against `base`'s, by kind (notebook 10_cuda_graphs's solution, exercise 3):
    `own` and `count` hold µs of own time and kernels per decode step, one column per decoder, one row
    per kind. The busy time and its change (one profile each, not a paired speed-up); the kind whose
    own time changed most, named only where that change is at least `share` of `base`'s busy time
    (below it two single profiles do not single one out); the kinds whose kernel count changed. Per
    decode step (the kernel tables' "per token" columns count decode steps; review rv19B S8)."""
    busy, before = own[name].sum(), own[base].sum()
    change = own[name] - own[base]
    most = change.abs().idxmax()
    changed = (f"the kind that changed most: {most} ({signed(change[most], 1)} µs)"
               if abs(change[most]) >= share * before
               else f"no kind's own time changed by {share:.0%} of the busy time or more")  # fmt: skip
    moved = count[name] - count[base]
    kernels = "; ".join(f"{k} {count.at[k, base]:.1f} → {count.at[k, name]:.1f}" for k in moved.index
                        if abs(moved[k]) >= 0.05)  # fmt: skip
    return (f"* {name}: the GPU is busy {busy:.0f} µs per decode step ({signed(busy - before)} µs; one profile each, "
            f"not a paired speed-up); {changed}; kernels per decode step "
            + (f"that changed: {kernels}." if kernels else "unchanged."))  # fmt: skip


# --- sentences of notebooks 10 and 12 and their solutions, moved out of the notebooks (review r10) ---


def copy_floor_text(bandwidth: float, copy_mb: int, runs: int, floor_ms: float) -> str:
    """ "Copy bandwidth 2,965 GB/s (bytes read + written, the median of 20 copies of 256 MiB); the task's
    floor: **20.7 ms** per generation." (notebook 10_cuda_graphs)"""
    return (f"Copy bandwidth {bandwidth:,.0f} GB/s (bytes read + written, the median of {runs} copies of {copy_mb} "
            f"MiB); the task's floor: **{floor_ms:.1f} ms** per generation.")  # fmt: skip


def kernel_count_text(name: str, rows: pd.DataFrame, layers: int, window_us: float,
                      share: float = OVERLAP_SHARE) -> str:  # fmt: skip
    """One decoder's kernels per step from its rows of a kernel table (kernels_per_token, us_per_token,
    own_us_per_token per kind): the count, per layer, the durations' sum, the GPU's busy time within the
    profiled window (`window_us` per step, first kernel to last), and by how much the durations overlap,
    said only where their sum exceeds the busy time by more than `share` (notebook 10_cuda_graphs)."""
    count, summed, busy = (rows[c].sum() for c in ("kernels_per_token", "us_per_token", "own_us_per_token"))
    overlap = (f"by {summed - busy:.0f} µs per step (a kernel launched early counts its wait)"
               if summed > (1 + share) * busy else f"by less than {share:.0%}")  # fmt: skip
    return (f"`{name}`: {count:.1f} kernels per step, {count / layers:.1f} per layer of {layers} with those outside "
            f"the layers counted in; their durations add up to {summed:.0f} µs per step; the GPU was busy "
            f"{busy:.0f} µs of the {window_us:.0f} µs per step that the profiled window lasted (first kernel to "
            f"last): durations overlap {overlap}.")  # fmt: skip


def idle_share_text(share: pd.Series, host: str, unprofiled: float, kernels: pd.DataFrame | None = None) -> str:
    """ "* GPU idle share of the profiled window: `a` 3.1%, `b` 40.2% (…)." from `share` (idle fraction by
    variant). Where `host` (the decoder that launches every kernel from Python) is among them and
    `unprofiled` (its GPU busy share over the unprofiled rounds) is a number, the idle share that leaves
    of a whole generation is said too, as another measure (set-up and prefill included), not a check of the
    window's: a smaller whole-generation share does not show the profiler added nothing (review rr14 S2), and a
    larger one does not contradict the caveat (review rvC14 S3; notebook 10_cuda_graphs). With `kernels`
    (section 5's table: variant, us_per_token, own_us_per_token), the variants whose kernels overlapped
    (durations adding up to more than 1.01× their busy time) are named: launched early under PDL, a kernel
    counts its wait as busy, so their shares are lower bounds, not comparable with the others' (rvC16 S3)."""
    said = ", ".join(f"`{n}` {share[n]:.1%}" for n in share.index)
    sums = kernels.groupby("variant")[["us_per_token", "own_us_per_token"]].sum() if kernels is not None else None
    early = [n for n in share.index if sums is not None and n in sums.index
             and sums.at[n, "us_per_token"] > 1.01 * sums.at[n, "own_us_per_token"]]  # fmt: skip
    overlap = "" if not early else (
        f"; {' and '.join(f'`{n}`' for n in early)}: kernels overlapped (their durations add up to more than their "
        "busy time, section 5), and a kernel launched early under PDL counts its wait for the one before as busy, "
        "so these shares are lower bounds on the time no kernel did work, not comparable with those of decoders "
        "whose kernels did not overlap")  # fmt: skip
    if host in share.index:
        idle = 1 - unprofiled  # NaN where the unprofiled share is not a number
        whole = (f"against the median of its unprofiled rounds, its GPU busy time leaves the GPU idle {idle:.1%} of "
                 f"a whole generation")  # fmt: skip
        inflated = f"`{host}`'s may be inflated by the profiler's host cost, section 4"
        said += (f" ({inflated})" if idle != idle else
                 f" ({inflated}; {whole}, set-up and prefill included: another measure, not a check of the window's)")
    return f"* GPU idle share of the profiled window: {said}{overlap}."


def fusing_count_text(kernels: pd.DataFrame, unfused: str, fused: str, least_us: float = 0.5,
                      results: pd.DataFrame | None = None) -> str:  # fmt: skip
    """ "* Fusing: 98 → 63 kernels per step; besides its products, `f` spends 12 µs on norm per step." from a
    kernel table (variant, kind, products, kernels_per_token, own_us_per_token); kinds whose own time is
    under `least_us` (rounding to 0 µs) are left out (notebook 10_cuda_graphs). With `results` (the timed
    rounds: variant, generator, steps_per_graph, times_ms), then `fused` against the unfused step (`unfused`'s
    generator) at `fused`'s K: " `f K=4` against the unfused step at the same K, `u K=4`, round by round:
    ×1.14 (…; faster; 95% interval …)." (`speedup_text`; review rvC14 S4); "not measured" where that K of
    the unfused step was not timed. It names no cause: the two steps differ in more than their kernel count."""
    count = kernels.groupby("variant")["kernels_per_token"].sum()
    rest = kernels[(kernels["variant"] == fused) & ~kernels["products"].astype(bool)]
    shown = rest[rest["own_us_per_token"] >= least_us]
    spent = "; ".join(f"{r.own_us_per_token:.0f} µs on {r.kind}" for r in shown.itertuples()) or "no time on others"
    text = (f"* Fusing: {count[unfused]:.0f} → {count[fused]:.0f} kernels per step; besides its products, `{fused}` "
            f"spends {spent} per step.")  # fmt: skip
    if results is None:
        return text
    rows = results.set_index("variant")
    k, step = rows["steps_per_graph"].get(fused), rows["generator"].get(unfused)
    same = results[(results["generator"] == step) & (results["steps_per_graph"] == k)]["variant"].tolist()
    if not same:  # a K that was not timed (or no K: NaN equals nothing)
        return f"{text} `{fused}` against the unfused step at the same K: not measured in this run."
    return (f"{text} `{fused}` against the unfused step at the same K, `{same[0]}`, round by round: "
            f"{speedup_text(gain(results, same[0], fused))}.")  # fmt: skip


def while_node_text(steps: int, comparisons) -> str:
    """ "* Every row stopping after 14 steps, the WHILE node against the K-step replays: faster in 5 of 5
    comparisons (each with its interval in the table above)." The outcomes of `comparisons` (rows of
    `tokgen.stats.gain`) by `faster_count`, not a range of point speed-ups (notebook 10_cuda_graphs)."""
    return (f"* Every row stopping after {steps} steps, the WHILE node against the K-step replays: "
            f"{faster_count(comparisons)} (each with its interval in the table above).")


def bandwidth_text(bandwidth: float, copies: str, source: str, tflops: float | None) -> str:
    """ "Copy bandwidth: **2,965 GB/s** (read + write; …), measured by notebook 10. Matrix products (fp32
    with TF32, 8192 × 8192): **428 TFLOP/s**." The rate only where `tflops` was
    measured (notebook 12_speed_of_light)."""
    rate = f" Matrix products (fp32 with TF32, 8192 × 8192): **{tflops:,.0f} TFLOP/s**." if tflops else ""
    return f"Copy bandwidth: **{bandwidth:,.0f} GB/s** (read + write; {copies}), measured by {source}.{rate}"


def bytes_text(per_step: float, kinds: dict, names: dict, bandwidth: float | None, batch: int, seqlen: int) -> str:
    """ "Weights read per step: **495 MB**. Bytes per generation (B=…, N=…; …): name: 10.00 GB, …. Floor at
    2,965 GB/s: name 20.7 ms, …." from the bytes per step and per generation (`kinds`: bytes by cache
    kind, worded by `names`); the floors only where `bandwidth` (GB/s) is known (notebook 12_speed_of_light)."""
    text = (f"Weights read per step: **{per_step / 1e6:.0f} MB**. Bytes per generation (B={batch}, N={seqlen}; "
            "weights, cache writes and reads): ")
    text += ", ".join(f"{names[kv]}: {b / 1e9:.2f} GB" for kv, b in kinds.items())
    if bandwidth:
        text += f". Floor at {bandwidth:,.0f} GB/s: " + ", ".join(
            f"{names[kv]} {b / bandwidth / 1e6:.1f} ms" for kv, b in kinds.items())
    return text + "."


def products_split_text(who: str, split: dict, note: str) -> str:
    """ "`a`: the GPU is busy **517 µs** per step (…), of which the matrix products take **419 µs** …: the
    products run at 40% of copy bandwidth. <note>" from `products_against_floor`'s split
    (notebook 12_speed_of_light)."""
    return (f"{who}: the GPU is busy **{split['busy_us']:.0f} µs** per step (its kernels' durations add up to "
            f"{split['durations_us']:.0f} µs), of which the matrix products take **{split['products_us']:.0f} µs** "
            f"and the other kernels {split['other_us']:.0f} µs; reading the weights once at copy speed takes "
            f"**{split['weights_floor_us']:.0f} µs**: the products run at {split['pct_of_copy_bandwidth']:.0f}% of "
            f"copy bandwidth. {note}")  # fmt: skip


def products_inside_text(target: str, split: dict) -> str:
    """ "Inside `a`'s decoder (section 4) the matrix products' own time is 419 µs per step."
    (notebook 12_speed_of_light)"""
    return (f"Inside `{target}`'s decoder (section 4) the matrix products' own time is {split['products_us']:.0f} µs "
            "per step.")


def products_share_text(target: str, split: dict) -> str:
    """ "* In `a`, the matrix products are 81% of the GPU's busy time and run at 40% of copy bandwidth; the
    other kernels take 98 µs per step." (notebook 12_speed_of_light)"""
    return (f"* In `{target}`, the matrix products are {split['products_us'] / split['busy_us']:.0%} of the GPU's "
            f"busy time and run at {split['pct_of_copy_bandwidth']:.0f}% of copy bandwidth; the other kernels take "
            f"{split['other_us']:.0f} µs per step.")  # fmt: skip


def products_reach_text(pct, rows: int) -> str:
    """ "* Alone, at 32 rows, the products reach 10–71% of copy bandwidth." from each product's measured
    share of copy bandwidth (`pct`, in %); one value where they all round alike (notebook 12_speed_of_light)."""
    low, high = f"{min(pct):.0f}", f"{max(pct):.0f}"
    return f"* Alone, at {rows} rows, the products reach {low if low == high else low + '–' + high}% of copy bandwidth."


def pdl_idle_caveat(kernels: pd.DataFrame, share: float = OVERLAP_SHARE) -> str:
    """Under a table that sets decoders with and without PDL side by side (notebook 10_cuda_graphs's
    solution, exercise 4): each decoder's GPU busy time per decode step from its kernels' own times,
    the durations' sum and their overlap (`kernels`: variant, us_per_token, own_us_per_token per
    kind, `tokgen.profiling.kernel_table`'s; a decoder with a duration or own time missing reads "not
    measured" there, review rr20h N3). Where some decoder's durations overlap (`durations_overlap`), the
    busy time and the idle share come from the same busy intervals (`profiling.own_times` add up to the
    union), so both count a kernel's early-launched wait as busy: neither compares the decoders, the
    paired speed-up printed below does, and the overlap shows how far PDL launched kernels early
    (reviews rv19B S1, rr20h M1)."""
    columns = ["us_per_token", "own_us_per_token"]
    sums = kernels.groupby("variant", sort=False)[columns].agg(lambda s: s.sum(min_count=len(s)))  # NaN: not measured
    measured = [v for v, r in sums.iterrows() if r.notna().all()]

    def each(v, r):
        busy = "not measured" if r.own_us_per_token != r.own_us_per_token else f"{r.own_us_per_token:.0f} µs"
        if v not in measured:
            durations = ("not measured" if r.us_per_token != r.us_per_token else
                         f"add up to {r.us_per_token:.0f} µs")  # fmt: skip
            return f"`{v}` busy {busy} per decode step (own times), its kernels' durations {durations}"
        return (f"`{v}` busy {busy} per decode step (own times), its kernels' durations add up to "
                f"{r.us_per_token:.0f} µs ({r.us_per_token - r.own_us_per_token:.0f} µs of overlap)")  # fmt: skip

    said = "; ".join(each(v, r) for v, r in sums.iterrows())
    early = [v for v in measured if durations_overlap(kernels, v, share)]
    unknown = [v for v in sums.index if v not in measured]
    if early:
        return (f"{said}. {' and '.join(f'`{v}`' for v in early)}: kernels overlapped (a kernel launched early under "
                "PDL counts its wait for the one before as busy). The busy time (own times) and the idle share come "
                "from the same busy intervals, so both count such a wait as busy, and their difference between the "
                "decoders is not PDL's effect alone: the paired speed-up below is the comparison; the overlap "
                "(durations − own) shows how far PDL launched kernels early.")  # fmt: skip
    if unknown:
        return (f"{said}. Whether {' and '.join(f'`{v}`' for v in unknown)}'s kernels overlapped is not known "
                "(not measured): the paired speed-up below is the comparison.")  # fmt: skip
    return (f"{said}. No decoder's kernels overlapped by more than {share:.0%}: their idle shares compare "
            "(one profile each, not a paired speed-up).")  # fmt: skip


STEP_HEADERS = {
    "tokens_per_copy": "decode steps per copy",
    "tokens": "decode steps",
    "gpu_busy_per_token": "GPU busy per decode step, µs",
    "kernels_per_token": "kernels per decode step",
    "us_per_token": "µs per decode step",
    "own_us_per_token": "own µs per decode step",
    "window_us_per_token": "window µs per decode step",
}


def step_headers(df: pd.DataFrame) -> pd.DataFrame:
    """Notebook 10's profile and kernel tables with their "per token" columns named per decode step (one token
    for each of the batch's sequences): 470 µs "per token" at B = 32 read as one token's time is 32× too much
    (review rv20B S4). The CSV columns keep their names; only the displayed headers change."""
    return df.rename(columns=STEP_HEADERS)


def pdl_gain_text(g: dict) -> str:
    """The paired speed-up of a decoder captured with `tokgen.kernels.PDL` on against one captured with it off
    (`g`: `tokgen.stats.gain`'s), and what the switch changes: off, `_linear_kernel` neither launches early nor
    starts its weights into L2 before waiting for its input, so the speed-up is the two together, not separated
    (notebook 10_cuda_graphs's solution, exercise 4; review rv20B M2)."""
    return (f"PDL on against off: {speedup_text(g)}. This is PDL's early launch and `_linear_kernel`'s L2 prefetch "
            "of its weights together, not separated: `tokgen.kernels.PDL = False` turns off both, and no decoder "
            "here launches early without prefetching, or prefetches without launching early.")  # fmt: skip


def pdl_unavailable_text(gpu: str, capability: tuple[int, int]) -> str:
    """Why PDL is not compared on a GPU of compute capability below 9.0 (notebook 10_cuda_graphs's
    solution, exercise 4)."""
    cc = ".".join(map(str, capability))
    return (f"*Both return the naive generator's tokens. This GPU ({gpu}) has compute capability {cc}: PDL needs 9.0 "
            "(Hopper) or later, so both decoders launch their kernels the same way and there is nothing to compare.*")


def tokens_differ_text(a, b) -> str:
    """How many generated tokens of two generations (tensors, rows × steps, column 0 the prompt) differ,
    over all rows, and the first step where row 0 differs: "3 of 64 generated tokens
    differ; the first at step 41." (notebook 12_speed_of_light's solution, exercise 3)."""
    n = min(a.shape[1], b.shape[1])  # column i is the token of step i
    differ = int((a[:, 1:n] != b[:, 1:n]).sum())
    first = next((i for i in range(1, n) if a[0, i] != b[0, i]), None)
    return f"{differ} of {(n - 1) * a.shape[0]} generated tokens differ" + (
        f"; the first at step {first}." if first is not None else ".")


# --- the solutions' sentences (review r11: templates, not inline f-strings) ---


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def compile_rounds_text(runs: int, recompiled: int, said: str, limit: int, default: str, compilations: int) -> str:
    """What followed the compiled settings' first calls in one comparison of `runs` rounds: the frames dynamo
    compiled in the warm-up calls and the rounds (`recompiled`, what it `said`), the recompile limit, how the
    speed-up columns read, and that all settings' compilations (`compilations`, first calls and rounds) share the
    one forward's dynamo cache, whose effect on each other's steady state is not measured
    (notebook 05_torch_compile's solution, exercise 1)."""
    again = f"dynamo compiled {_plural(recompiled, 'more frame')}" if recompiled else "dynamo compiled nothing more"
    return (f"Each first call holds its setting's compilations, from new, empty on-disk caches; in the warm-up calls "
            f"and the {runs} timed rounds that followed, {again}{f' (it said: {said})' if said else ''}. The recompile "
            f"limit in force is dynamo's ({limit}) raised by the compilations of the settings before. Both speed-up "
            "columns are paired, round by round, from the same rounds: a setting's steady state against the default "
            f"one is its speed-up against `{default}`. All settings compile the same model's forward and share its "
            f"dynamo cache ({_plural(compilations, 'compilation')} in all, the first calls' and the rounds'): whether "
            "one setting's compiled code there changes another's steady state is not measured (timing each setting in "
            "its own process would show it).")  # fmt: skip


def recompile_limit_text(variant: str, compilations: int, g: dict | None) -> str:
    """A compiled setting that met dynamo's recompile limit in its first call, after `compilations`, and its
    comparison with eager (`g`, `tokgen.gain`; None: not measured) (notebook 05_torch_compile's solution,
    exercise 1)."""
    return (f"`{variant}` met its recompile limit in its first call, after {_plural(compilations, 'compilation')} "
            "(dynamo's warning above); by dynamo's rule, a step that none of them covers runs eager from then on. "
            f"Against eager it reads {outcome_text(g) if g else 'not measured'}.")  # fmt: skip


def compilations_text(counts: dict, steps: int, reasons: dict | None = None) -> str:
    """Frames dynamo compiled in one generation of `steps` steps, per generator ({generator: count}, the first
    named with the generation), and per generator the guard that failed at each recompilation, as dynamo's
    recompiles log said it (`reasons`, {generator: [its lines]}, `recompile_reasons`); without them, where to read
    them (review rvB17 N8; notebook 05_torch_compile's solution, exercise 2). Review rr18a N5: "kv_dynamic, 2
    recompilations: `…`, then `…`; kv_static, 1: `…`"; N6: a generator compiled more than once with no line caught
    reads "none logged", not "no recompilation" (frames counted may include graph breaks: no count is inferred)."""
    (first, n), *rest = counts.items()
    others = "".join(f"; {name}: {m}" for name, m in rest)
    head = f"{first}: {_plural(n, 'compilation')} in one generation of {steps} steps{others}."
    if reasons is None:
        return f"{head} Run with `TORCH_LOGS=recompiles` to read dynamo's reasons."
    said, named = [], False  # the first generator with lines names the unit, the rest give a count
    for name, lines in reasons.items():
        if not lines:
            said.append(f"{name}: {'none logged' if counts.get(name, 0) > 1 else 'no recompilation'}")
            continue
        said.append(f"{name}, {str(len(lines)) if named else _plural(len(lines), 'recompilation')}: "
                    + ", then ".join(f"`{r}`" for r in lines))  # fmt: skip
        named = True
    return f"{head} The guard that failed at each recompilation, as dynamo logged it: {'; '.join(said)}."


def recompile_reasons(messages: list) -> list:
    """From dynamo's recompiles log records (each "Recompiling function … triggered by the following guard
    failure(s):" and then one "- 0/1: …" line per cached graph, the newest first), each record's first failed
    guard, without its list marker and the id of the cached graph ("0/1: "): "tensor 'x' size mismatch at index 0.
    expected 4, actual 5" (review rvB17 N8, rr18a N5; notebook 05_torch_compile's solution, exercise 2)."""
    out = []
    for message in messages:
        guards = [line.strip()[2:] for line in message.splitlines() if line.strip().startswith("- ")]
        if message.startswith("Recompiling") and guards:
            out.append(re.sub(r"^\d+/\d+: ", "", guards[0]))
    return out


def gpu_ops_text(ops: dict, batch_size: int) -> str:
    """GPU operations per step ({model: the profiled window's median of kernels, memsets and copies per step,
    `Timeline.summary`'s `kernels_per_step`}) at `batch_size` (notebook 05_torch_compile's solution, exercise 3)."""
    counts = ", ".join(f"{name} {n:.0f}" for name, n in ops.items())
    return (f"GPU operations per step at B = {batch_size} (kernels, memsets and copies; the median over the profiled "
            f"steps): {counts}.")  # fmt: skip


def closest_pair_text(pairs: list) -> str:
    """Solution 09's closest pair among paired comparisons (rows of `tokgen.gain`): of the pairs shown within
    ±BAND (`no_effect`), the one with the narrowest equivalence interval (its ends' ratio); where none is, the one
    whose paired speed-up is nearest ×1, said as such, its outcome saying whether the rounds tell the two apart
    (notebook 09_summary's solution, exercise 1)."""
    shown = [p for p in pairs if p.get("no_effect")]
    band = f"shown within ±{BAND:.0%}"
    if shown:
        g = min(shown, key=lambda p: p["equivalence_high"] / p["equivalence_low"])
        lead = (f"Closest: the only pair of {len(pairs)} {band}" if len(shown) == 1 else
                f"Closest: of the {len(shown)} pairs of {len(pairs)} {band}, the one with the narrowest equivalence "
                "interval")  # fmt: skip
    else:
        g = min(pairs, key=lambda p: abs(math.log(p["speedup"])))
        lead = f"No pair of the {len(pairs)} is {band}; the one whose paired speed-up is nearest ×1"
    return f"{lead}: `{g['variant']}` against `{g['vs']}`, round by round {speedup_text(g)}."


def rank_moves_text(ranks: pd.DataFrame, b: int = 32) -> str:
    """How many variants have another rank (`rank`) than in the reference run (`rank_32`) at batch size `b`
    (notebook 09_summary's solution, exercise 2)."""
    moved = int((ranks["rank"] != ranks["rank_32"]).sum())
    if not moved:
        return "Every variant has its reference rank."
    return (f"{moved} of {len(ranks)} variants have another rank than in the reference run at B = {b} (ranks count "
            "the variants really faster round by round; a change of rank can be B's doing or the other session's "
            "noise).")  # fmt: skip


def _percent_span(values) -> str:
    return " to ".join(dict.fromkeys(f"{x:.0%}" for x in (min(values), max(values))))  # one value when both alike


def busy_at_b1_text(share_1: pd.Series, share_ref: pd.Series, b: int = 32) -> str:
    """The GPU's busy share of a step at B = 1 (`share_1`, by variant) and, where all are host-bound, that the
    host sets the places; beside it the reference run's at batch size `b` (`share_ref`, by variant, over its
    shared rounds: `tokgen.stats.shared_rounds`) and for how many variants the B = 1 share is lower; "" where a
    B = 1 share was not measured (a CPU run) (notebook 09_summary's solution, exercise 2)."""
    if share_1.empty or share_1.isna().any():
        return ""
    text = f"The GPU is busy {_percent_span(share_1)} of a step at B = 1"
    host = (share_1 < HOST_BOUND).all()
    text += ": host-bound everywhere, so what a generator does on the host sets its place." if host else "."
    ref = share_ref.reindex(share_1.index).dropna()
    if ref.empty:
        return text + f" The reference run at B = {b} has no GPU share for these variants."
    lower = int((share_1[ref.index] < ref).sum())
    return text + (f" In the reference run at B = {b} (another session, over its shared rounds) the GPU was busy "
                   f"{_percent_span(ref)} of a step for these variants; the share at B = 1 is lower for {lower} of "
                   f"{len(ref)} (host times of two sessions: they can move between runs by more than their spread "
                   "within one).")  # fmt: skip


FRAGILITY_KINDS = ("inconclusive", "resampled", "decided, not resampled", "no verdict")


def fragility_order(claims: pd.DataFrame) -> pd.DataFrame:
    """`tokgen.claims.claims_table`'s rows with a `kind` column, in this order: inconclusive verdicts (those open
    outright, with no stability, first; then the least stable), decided verdicts that were resampled (least stable
    first), decided verdicts not resampled (a sequential run's rounds, claim 1's intervals or none: no stability), and
    last the claims with no verdict (not measured, a smoke run) (notebook 09_summary's solution, exercise 3)."""
    verdict, stable = claims["verdict"].astype(str), claims["stability"].notna()
    open_ = verdict.str.startswith("inconclusive")
    decided = verdict.str.startswith(("reproduced", "partly", "not reproduced"))
    kind = np.select([open_, decided & stable, decided], FRAGILITY_KINDS[:3], FRAGILITY_KINDS[3])
    out = claims.assign(kind=kind, _group=[FRAGILITY_KINDS.index(k) for k in kind],
                        _stable=claims["stability"].fillna(-1.0))  # fmt: skip
    return out.sort_values(["_group", "_stable"], kind="stable").drop(columns=["_group", "_stable"])


def closest_to_criterion(claims: pd.DataFrame, keys: dict) -> str:
    """Which decided verdict sits nearest a threshold it is judged against (`keys`: `tokgen.claims.criterion_keys`;
    `claims`: `claims_table`'s rows): a point key's relative distance to its nearest threshold, an interval's from
    its nearer end (what a threshold must cross to change the verdict); the claims counted, and those with such a
    key left out with their verdict, read from `claims` (review pvA15 S5: a fixed list named an inconclusive claim
    1 among the decided); the claims without such a key named as not counted; an interval's end named as "the high
    end of its speed-up's interval, ×2.44," and with the step it is at where the key gives one (claim 1: "the high
    end of its growth per doubling's interval at 100→200, ×3.12,"; review rr17a N9) (notebook 09_summary's solution,
    exercise 3; reviews rvD12 S3, rrC12 S2)."""
    verdicts = claims.set_index("#")["verdict"].astype(str)
    near = []
    for n, (what, value, thresholds, *where) in keys.items():
        if not verdicts.get(n, "").startswith(("reproduced", "partly", "not reproduced")):
            continue
        for t in thresholds:
            low, high = value if isinstance(value, tuple) else (value, value)
            if low <= t <= high:
                continue  # a threshold inside the interval: the claim could not be decided on it
            end = high if high < t else low
            if isinstance(value, tuple):
                at = f" at {where[0][end == high and high < t]}" if where else ""
                said = f"the {'high' if end == high and high < t else 'low'} end of its {what}{at}, ×{end:.2f},"
            else:
                said = f"its {what} {end:.2f}"
            near.append((abs(end / t - 1), n, f"{said} is {abs(end / t - 1):.1%} {'below' if end < t else 'above'} "
                                              f"{'×' if isinstance(value, tuple) else ''}{t:.3g}"))  # fmt: skip
    if not near:
        return "No decided verdict here is judged against a growth or speed-up threshold: nothing to set beside one."
    near.sort()
    firsts = {}
    for _, n, said in near:  # each claim's nearest threshold
        firsts.setdefault(n, said)
    (n0, said0), *rest = firsts.items()
    then = "; ".join(f"claim {n}: {said}" for n, said in rest)
    which = "; ".join(f"claim {n} on its {what}" for n, (what, *_) in sorted(keys.items()) if n in firsts)
    left = [f"claim {n}, {verdicts.get(n, 'no verdict').split(' (')[0]}" for n in sorted(keys) if n not in firsts]
    which += f"; not counted: {', '.join(left)}" if left else ""
    return (f"Of the decided verdicts judged against a growth or speed-up threshold ({which}), claim {n0}'s sits "
            f"nearest one: {said0}"
            + (f" (then {then})" if then else "") + ". The other claims have no such threshold (claim 5: one "
            "comparison's outcome) or are judged per N (2), per window (6, 7) or on several comparisons (3, 4, 8, 9).")


# --- review r12's sentences (fixer F1): the notebooks' and solutions' inline f-strings, as templates ---


def fit_crossing_text(naive: pd.DataFrame, kv: pd.DataFrame) -> str:
    """Where power-law fits (log-log, `median_ms` against `max_seqlen`) of naive's and the KV cache's runtimes
    cross, which one the fits have faster below it, and that this is a property of the fits, not a measurement
    (notebook 02_kv_cache's solution, exercise 1)."""
    fit = lambda df: np.polyfit(np.log(df["max_seqlen"]), np.log(df["median_ms"]), 1)  # (slope, log prefactor)
    (k_naive, c_naive), (k_kv, c_kv) = fit(naive), fit(kv)
    head = f"naive ∝ N^{k_naive:.2f}, KV cache ∝ N^{k_kv:.2f} (B = {int(naive['batch_size'].iloc[0])})."
    tail = "at the N measured, which one was faster is for a paired comparison to say (claim 2), not for the fits."
    if math.isclose(k_naive, k_kv):
        return f"{head} The fitted curves have the same slope and do not cross; {tail}"
    n_even = math.exp((c_kv - c_naive) / (k_naive - k_kv))
    below = "naive" if k_naive > k_kv else "the KV cache"  # the steeper curve is the lower one below the crossing
    lo, hi = int(naive["max_seqlen"].min()), int(naive["max_seqlen"].max())
    if lo <= n_even <= hi:  # between sizes measured: still the fits' crossing (review rvB17 S3)
        where = (f"it lies inside the sizes measured (N = {lo}–{hi}), yet it is where the fitted curves meet, not a "
                 "measured size")  # fmt: skip
    else:
        side = "smallest" if n_even < lo else "largest"
        where = (f"the {side} N measured is {lo if n_even < lo else hi}, so the crossing lies outside the sizes "
                 "measured: a property of the fits, not a measurement")  # fmt: skip
    return (f"{head} The fitted curves cross at N ≈ {n_even:.0f}, below which the fits have {below} faster; {where}: "
            f"{tail}")  # fmt: skip


def step_growth_text(busy_low: float, busy_high: float, low: int = 10, high: int = 390) -> str:
    """How the GPU's busy time of one decode step changes from `low` to `high` cached positions (ms, one profiled
    call each: no spread), in the direction it took, and the change's share of the larger step's busy time,
    never rounded onto 0% or 100% (`percent_text`) (notebook 02_kv_cache's solution, exercise 2)."""
    extra = busy_high - busy_low
    calls = "one profiled call each, so no spread"
    if extra > 0:
        return (f"On the GPU the step's busy time grows by {extra:.3f} ms from N = {low} to N = {high} ({calls}), "
                f"{percent_text(extra / busy_high, 0)} of its busy time at N = {high}: the part of a step that "
                "depends on N, in these two calls (which kernels it is, a busy time does not say).")  # fmt: skip
    change = f"is {-extra:.3f} ms shorter" if extra < 0 else "is the same"
    return (f"On the GPU the step's busy time {change} at N = {high} than at N = {low} ({calls}): these two calls "
            "show no part of a step that grows with N.")  # fmt: skip


def cache_share_text(row, cache_gb: float, weights_gb: float, article_gb: float | None = None) -> str:
    """The dynamic cache's and the weights' bytes beside the peak allocated and reserved memory of one run (`row`:
    max_seqlen, batch_size, peak_allocated_gb, peak_reserved_gb), as shares never rounded onto 0% or 100%; what
    the rest of either peak holds is not measured, and is said so (notebook 02_kv_cache's solution, exercise 3)."""
    n, batch = int(row["max_seqlen"]), int(row["batch_size"])
    allocated, reserved = row["peak_allocated_gb"], row["peak_reserved_gb"]
    article = f" ({article_gb:.3f} GB after the article's 400 at B = 32)" if article_gb is not None else ""
    return (f"The cache holds {cache_gb:.3f} GB after {n} steps at B = {batch}{article}; the weights "
            f"{weights_gb:.3f} GB. The reference run's peak allocated memory at N = {n} was {allocated:.3f} GB and "
            f"its peak reserved {reserved:.3f} GB. The cache and the weights make "
            f"{percent_text((cache_gb + weights_gb) / allocated, 0)} of the peak allocated, and the cache alone "
            f"{percent_text(cache_gb / reserved, 0)} of what the allocator reserved; what the rest of either peak "
            "is, this page does not measure.")  # fmt: skip


def room_reading(g: dict | None, share: float) -> str:
    """What a 2N static cache's outcome against the N one (`g`, `tokgen.gain`) says, in the outcome's own words, and
    what the GPU's busy `share` of a run (NaN on a CPU) lets the exercise say about why (notebook 04_static_cache's
    solution, exercise 1)."""
    if g is None:
        return "Not measured."
    outcome = NO_EFFECT if g.get("no_effect") else g["outcome"]  # within ±5%: a tie, as the claims read it
    if outcome == SLOWER:
        return ("Slower with 2N slots, for real, which reading twice the keys and values would predict (not "
                "measured here).")  # fmt: skip
    head = OUTCOME_HEADS[outcome]
    if bound(share) == "":  # the rule of notebook 05: host-bound under half
        return f"{head}, with 2N slots; a CPU run measures nothing about a GPU's step: run this on a GPU."
    busy = percent_text(share, HOST_BOUND)
    if bound(share) == "host":
        hide = ("whether it hides under the host's launch time, these rounds cannot tell" if outcome == UNDECIDED
                else "what made up the difference here, this exercise does not measure")  # fmt: skip
        return (f"{head}, with 2N slots: the GPU was busy {busy} of a run at most, so the step is host-bound. "
                f"Reading more cache adds GPU time that can hide under the host's launch time; {hide}.")  # fmt: skip
    return (f"{head}, with 2N slots, though the GPU was busy {busy} of a run: what the extra slots' reads cost, "
            "this exercise does not separate (notebook 12 weighs a step's bytes).")  # fmt: skip


def hidden_sync_text(per_step: pd.Series) -> str:
    """Stream syncs per step with `cache_position` passed (`per_step[True]`) and without (`per_step[False]`),
    each at as many decimals as tell the two apart (0.04 and 0.02, not 0.0 and 0.0); NaN (the profiler lost
    its session: `tokgen.profiling.counted_syncs`): "not counted" (notebook 04_static_cache's solution,
    exercise 3)."""
    without, with_ = float(per_step[False]), float(per_step[True])
    if without != without or with_ != with_:
        lost = " and ".join(w for w, x in (("without", without), ("with", with_)) if x != x)
        return (f"Stream syncs per step not counted {lost} `cache_position` (the profiler lost its session, "
                "pytorch/kineto#1554): whether a sync hides here, this run does not say.")  # fmt: skip
    if without > with_:
        d = next((d for d in range(1, 6) if f"{without:.{d}f}" != f"{with_:.{d}f}"), 6)
        return f"Without `cache_position`: about {without:.{d}f} stream syncs per step, {with_:.{d}f} with it."
    return "Without `cache_position` no more syncs than with it: no hidden sync here."


def not_counted_text(rows: pd.DataFrame, name: str = "generator") -> str:
    """The rows of a sync count whose profiler session was lost (`counted` not "yes":
    `tokgen.profiling.counted_syncs`), named by their `name` column and said to be left out of what follows;
    "" where every row was counted (notebook 11_sync_audit)."""
    if "counted" not in rows:
        return ""
    lost = rows.loc[rows["counted"] != "yes", name].tolist()
    if not lost:
        return ""
    return (f"* Not counted: {', '.join(f'`{g}`' for g in lost)} (the profiler lost its session, "
            "pytorch/kineto#1554): left out of the lines below, and a line that needs them is not said.")


def outcomes_by_n_text(gain_rows: pd.DataFrame) -> str:
    """The static cache's outcome against the dynamic one at each N (rows of `tokgen.gain` with `max_seqlen`),
    and how its speed-up moves with N (`trend_text`) (notebook 04_static_cache)."""
    outcomes = "; ".join(f"{outcome_text(g)} at N = {g['max_seqlen']}" for g in gain_rows.to_dict("records"))
    return (f"Round by round, the static cache against the dynamic one: {outcomes}. Its speed-up "
            f"{trend_text(gain_rows)}.")  # fmt: skip


def fragmentation_lower_text(frag: pd.DataFrame, base: str = "kv_dynamic", new: str = "kv_static") -> str:
    """Fragmentation per N (`frag`: GB, index N, one column per generator) of `new` against `base`: the N where it
    is lower, and each N's two values; no verdict (claim 4's, shown above it, judges) (notebook 04_static_cache)."""
    lower = frag[new] < frag[base]
    where = "at every N" if lower.all() else "at no N" if not lower.any() else f"at {lower.sum()} of {len(lower)} N"
    each = "; ".join(f"N = {n}: {r[base]:.2f} → {r[new]:.2f} GB" for n, r in frag.iterrows())
    return f"* Fragmentation was lower with the static cache {where}. Dynamic → static: {each}."


def runtime_at_n_text(n: int, g: dict | None, smallest: bool) -> str:
    """One N's runtime line under claim 4: the static cache against the dynamic one (`g`, `tokgen.gain`), and what
    the article says there (slower at the smallest N, faster at the others); no verdict: claim 4's judges it
    (notebook 04_static_cache)."""
    want = SLOWER if smallest else FASTER
    return f"* Runtime at N = {n}: static against dynamic {speedup_text(g)}; the article has it {want} there."


def halved_text(frag: pd.DataFrame, concern_pct: float) -> str:
    """Where expandable segments' fragmentation was at most half the default allocator's (`frag`: GB, index N,
    columns `default` and `expandable`), each N's values, and which N claim 3 judges
    (notebook 03_expandable_segments)."""
    halved = frag["expandable"] <= 0.5 * frag["default"]
    each = "; ".join(f"N = {n}: {r['default']:.2f} → {r['expandable']:.2f} GB, {'at most' if h else 'more than'} half"
                     for (n, r), h in zip(frag.iterrows(), halved))  # fmt: skip
    where = "at every N" if halved.all() else "at no N" if not halved.any() else f"at {halved.sum()} of {len(halved)} N"
    return (f"Fragmentation with expandable segments was at most half the default's {where} ({each}). Claim 3 "
            f"judges only the N where the default's is at least {concern_pct}% of what it reserved.")  # fmt: skip


def escaped_copy_text(slices: pd.DataFrame, small: int, large: int) -> str:
    """How many times the slice's own copy rate a `torch.cuda.Stream()` made inside the slices of `small` and
    `large` SMs copied (notebook 13's table: gpu_sms, copy_gbs, escaped_stream_gbs), and whether it escapes them
    by notebook 13's rule (`tokgen.regimes`: more than ×1.5) (notebook 13_regimes's solution, exercise 2)."""
    pair = slices[slices["gpu_sms"].astype(int).isin([small, large])]
    factor = pair["escaped_stream_gbs"] / pair["copy_gbs"]
    span = "–×".join(dict.fromkeys(f"{x:.1f}" for x in (factor.min(), factor.max())))
    return (f"In the slices of {small} and {large} SMs, a stream made inside copied ×{span} as fast as the slice "
            f"itself: {_escape(pair)} (notebook 13's rule: more than ×1.5 the slice's rate).")  # fmt: skip


def deferred_row_text(where: str, r: dict, bold: bool = False) -> str:
    """One place and cache of notebook 14's deferred stop check (`r`: cache, gpu_share_sync and a `tokgen.gain`'s
    fields): the synchronous step's GPU share and deferred against sync (notebooks 14_deferred_stop, its summary,
    and its solution's exercises 1 and 2); "not measured" where `r` holds no comparison (a variant that failed:
    `deferred_gain_text`)."""
    said = deferred_gain_text(r)
    share = r.get("gpu_share_sync", math.nan)
    share = f"{share:.2f}" if share == share else "not measured"
    return (f"* {where}, {r['cache']} cache: GPU share of a synchronous step {share}; deferred "
            f"against sync {f'**{said}**' if bold else said}.")  # fmt: skip


def deferred_gain_text(r: dict) -> str:
    """Deferred against sync in one row of `tokgen.claims.deferred_stop_gains`: `speedup_text`, or where the row
    holds no comparison (its `outcome` missing: a variant failed, ran out of memory or left its slice) "not
    measured", with what its `not_measured` says: "not measured (`generate() static deferred` oom)"
    (notebook 14_deferred_stop)."""
    if isinstance(r.get("outcome"), str):
        return speedup_text(r)
    why = r.get("not_measured")
    return f"not measured ({why})" if isinstance(why, str) and why else "not measured"


def _kind(g: dict) -> str:
    return NO_EFFECT if g.get("no_effect") else g["outcome"]  # a real difference within ±5%: a tie


def static_vs_dynamic_text(gains: pd.DataFrame) -> list[str]:
    """Per place of notebook 14's `deferred_stop_gains`: does the static cache show a different gain from the
    deferred check than the dynamic one, read from the two paired comparisons' outcomes (a real difference within
    ±5% counts as no effect): "undecided" where either is undecided, the same outcome, or outcomes that differ;
    a static row taken as run outside its slice is not compared. The sizes of
    two gains are not compared with each other: no test here pairs them (notebook 14_deferred_stop's solution,
    exercise 2)."""
    lines = []
    for sms, rows in gains.groupby(gains["gpu_sms"].astype(str), sort=False):
        by = {r["cache"]: r for r in rows.to_dict("records")}
        where = "whole GPU" if sms == "all" else f"{sms}-SM slice"
        if set(by) != {"dynamic", "static"}:
            lines.append(f"* {where}: not both caches measured.")
            continue
        if lost := [c for c in ("dynamic", "static") if not isinstance(by[c].get("outcome"), str)]:  # a variant failed
            whose = f"the {lost[0]} cache's comparison" if len(lost) == 1 else "both caches' comparisons"
            lines.append(f"* {where}: not compared, {whose} {'; '.join(deferred_gain_text(by[c]) for c in lost)}.")
            continue
        if any(r.get("confined") is False for r in by.values()):
            lines.append(f"* {where}: not compared (a row taken as run outside its slice).")
            continue
        kinds = {c: _kind(r) for c, r in by.items()}
        both = f"dynamic {outcome_text(by['dynamic'])}, static {outcome_text(by['static'])}"
        if open_ := [c for c in ("dynamic", "static") if kinds[c] == UNDECIDED]:
            answer = (f"undecided: the {open_[0]} cache's comparison is undecided" if len(open_) == 1 else
                      "undecided: both caches' comparisons are undecided")  # fmt: skip
        elif kinds["dynamic"] == kinds["static"]:  # no test pairs the two gains: "tied" would claim one (rrB12 S2)
            answer = "the same outcome for both; whether the gains differ in size, no test here says"
        else:
            answer = "the outcomes differ; no test here compares the two gains' sizes"
        lines.append(f"* {where}: {answer} ({both}).")
    return lines


def slice_bandwidth_lines(sliced: pd.DataFrame, bracket: set, l40s: float) -> list[str]:
    """Per slice of notebook 14 (`sliced`: gpu_sms, slice_copy_gbs): its measured copy rate against the L40S's
    datasheet peak (an approximate comparison, as notebook 13 says), and whether notebook 13 found it to be one of
    the two slices that bracket the L40S (`bracket`: their SM counts; empty: none found) (notebook
    14_deferred_stop)."""
    lines, others = [], " and ".join(map(str, sorted(bracket)))
    for sms, rows in sliced.groupby("gpu_sms"):
        gbs = float(rows["slice_copy_gbs"].iloc[0])
        role = "one of the two that bracket it" if int(sms) in bracket else f"the two that bracket it: {others} SMs"
        role = role if bracket else "no bracketing slices of notebook 13 from this run in this results folder"
        side = "below" if gbs < l40s else "above"
        lines.append(f"* {sms} SMs: {gbs:,.0f} GB/s of copy bandwidth (measured), {side} the L40S's {l40s:,.0f} "
                     f"GB/s (its datasheet peak, not a measured copy: the comparison is approximate); {role}.")
    return lines


def shares_by_outcome_text(deferred: pd.DataFrame) -> str:
    """Notebook 14's summary line: the synchronous step's GPU shares grouped by the deferred check's outcome,
    over the rows that ran where they say (whole GPU, or confined to their slice) with a share and a comparison
    measured (a lost profiler session leaves the share NaN, a failed variant the outcome None); "" where none ran
    where it says, a line that says so where every such row's share or comparison was not measured (notebook
    14_deferred_stop)."""
    placed = deferred[deferred["confined"].astype(str).isin(["whole GPU", "True"])] if len(deferred) else deferred
    if not len(placed):
        return ""
    placed = placed[placed["gpu_share_sync"].notna() & placed["outcome"].map(lambda o: isinstance(o, str))]
    if not len(placed):
        return ("* By outcome, the GPU shares of the synchronous step: not measured (no row that ran where it says "
                "has both its GPU share and its comparison measured).")  # fmt: skip
    left_out = " (rows not confined, or not measured, left out)" if len(placed) < len(deferred) else ""
    by = "; ".join(f"{o}: {', '.join(f'{x:.2f}' for x in sorted(v))}"
                   for o, v in placed.groupby("outcome")["gpu_share_sync"])  # fmt: skip
    return (f"* By outcome, the GPU shares of the synchronous step{left_out}: {by}. Notebook 13 maps such gains "
            "against the GPU share over more places and batch sizes.")  # fmt: skip
