"""Judging measurements: paired per-round speed-ups, a signed-rank test, an equivalence band, fits.

Introduced in notebook 02_kv_cache (the slope in notebook 01_naive). Interleaved rounds make two
variants' times a pair per round; the one speed measure everywhere is the **speed-up** ×s: the
median over rounds of t_base / t (> 1: faster), with the quartiles of the per-round ratios. A
difference is **real** when the Wilcoxon signed-rank test of the per-round log-ratios (exact, as
`scipy.stats.wilcoxon` is without ties) gives p below the level; with the fresh random order of
every round of `tokgen.compare`, each log-ratio of two identical variants is as likely negative as
positive, independently of the others, whatever the host noise, so that rule calls noise real at
most that level of the time (a fixed rotation of the order does not guarantee it:
tokgen.bench.round_orders says why). A comparison shows **no effect** when two one-sided
signed-rank tests (TOST) put the log-ratios' median inside ±BAND: a true effect of BAND is called
"no effect" at most the level's share of the time. The **interval** of a speed-up is the
Hodges-Lehmann confidence interval of the ratios' centre (the pseudo-median: the median of the
Walsh averages of the log-ratios, which is the median ratio where they are symmetric), the one the
signed-rank test inverts (it excludes ×1 exactly when p is below the level). The printed speed-up is
the median ratio; where the ratios are skewed the two centres differ a little (review r10). The
**equivalence interval** is the narrower
(1 − 2·level) one, the one TOST inverts: without ties it lies inside the band exactly when the
comparison shows no effect, while the (1 − level) interval may reach past the band's edges.

**Sequential comparisons** (notebook 00_setup, section 4; `tokgen.compare(..., pairs=...)`): a
comparison is judged at looks, e.g. after 10, 20, 40 and 80 rounds (`looks_up_to`), and stops at
the first look that decides it. Each look k tests at its own level a_k, the increase of the
spending function ALPHA · n_k / n_K (`look_levels`), so the levels add up to ALPHA: by the union
bound the whole procedure calls a difference real, or an effect at the edge of the band "no
effect", at most ALPHA of the time, whatever the correlation between looks or the host's drift.
`tokgen_tools.seqsim` measures both rates (data/sequential_error_rates.csv), tests/test_stats.py
pins them on a small simulation, tests/test_gpu.py on a real variant against itself.
"""

import functools
import math
import numbers
import statistics
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from .results import read_table

ALPHA = 0.05  # two-sided false-positive rate of `real`; each one-sided test of `no effect` too
BAND = 0.05  # "no effect": the speed-up shown to lie within ×1/(1 + BAND)…×(1 + BAND), ±log1p(BAND) in logs
FIRST_LOOK = 10  # rounds at a sequential comparison's first look; each later look doubles them, up to the cap
FASTER, SLOWER, NO_EFFECT, UNDECIDED = "faster", "slower", "no effect", "undecided"


def run_times(row) -> list[float]:
    """The per-round times of a result row, a dict or a DataFrame row (notebook 01_naive)."""
    text = row["times_ms"]
    return [float(x) for x in str(text).split(";")] if isinstance(text, str) and text else []


def time_summary(times: list[float]) -> dict:
    """The median, mean, standard deviation, fastest, slowest and quartiles (inclusive) of per-round
    times in ms, NaN where there are too few: a result row's summary (notebook 01_naive)."""
    t, nan = list(times), float("nan")
    q = statistics.quantiles(t, n=4, method="inclusive") if len(t) >= 2 else [nan] * 3
    return {
        "median_ms": statistics.median(t) if t else nan,
        "mean_ms": statistics.mean(t) if t else nan,
        "std_ms": statistics.stdev(t) if len(t) >= 2 else nan,
        "min_ms": min(t) if t else nan,
        "max_ms": max(t) if t else nan,
        "q25_ms": q[0],
        "q75_ms": q[2],
    }


def shared_rounds(results: pd.DataFrame) -> pd.DataFrame:
    """`results` (rows of `tokgen.compare`) with each row's summary over the rounds that every
    interleaved variant ran, so that medians, ms per step and GPU shares set side by side
    share their rounds (notebook 07_pipelining). In a sequential comparison only the variants of
    undecided comparisons run on after a look, and the host drifts between rounds, so medians over
    10 and over 80 rounds differ for that alone. A comparison is one call of `tokgen.compare`, its
    rows sharing an `order_seed` (without that column: the whole table); its rounds line up by
    index (a variant's i-th round ran in the call's i-th round), so its k shared rounds are the
    first k, k the fewest that any of its ok rows ran. Such a row with more gets median_ms,
    mean_ms, std_ms, min_ms, max_ms, q25_ms, q75_ms, ms_per_step and gpu_busy_share
    (gpu_busy_ms / the new median) over its first k (those columns it has); `runs` and `times_ms`
    stay: the runs it ran, and every round for the paired speed-ups. Every row gets `shared_runs`,
    the rounds its summary is over; a comparison whose rows all ran the same rounds is unchanged.
    Rows that already have `shared_runs` keep it as their count: a subset of a table cut here (one
    comparison's two variants, say) keeps the whole comparison's rounds."""
    if "times_ms" not in results or results.empty:
        return results
    times = [run_times(r) for r in results.to_dict("records")]
    ok = results["status"].eq("ok").tolist() if "status" in results else [True] * len(results)
    seeds = results["order_seed"].astype(str).tolist() if "order_seed" in results else [""] * len(results)
    before = results["shared_runs"].tolist() if "shared_runs" in results else [math.nan] * len(results)
    fewest = {}
    for seed, t, good, cut in zip(seeds, times, ok, before):
        if good and t:
            n = int(cut) if cut == cut else len(t)
            fewest[seed] = min(fewest.get(seed, n), n)
    out = results.copy()
    shared = []
    for i, (seed, t, good) in enumerate(zip(seeds, times, ok)):
        k = fewest.get(seed, len(t)) if good and t else len(t)
        shared.append(k)
        if k >= len(t):
            continue
        summary = time_summary(t[:k])
        if "steps" in out:
            summary["ms_per_step"] = summary["median_ms"] / out["steps"].iloc[i]
        if "gpu_busy_ms" in out:
            summary["gpu_busy_share"] = out["gpu_busy_ms"].iloc[i] / summary["median_ms"]
        for column, value in summary.items():
            if column in out:
                out[column] = out[column].astype(float)  # a column of whole numbers takes the new median too
                out.iloc[i, out.columns.get_loc(column)] = value
    return out.assign(shared_runs=shared)


def looks_up_to(cap: int, first: int = FIRST_LOOK) -> tuple[int, ...]:
    """The rounds at which a sequential comparison is judged: `first`, twice that, … below `cap`,
    then `cap` (notebook 00_setup): looks_up_to(80) == (10, 20, 40, 80); a cap at or below `first`
    is a single look, the fixed-rounds comparison."""
    for name, value in (("cap", cap), ("first", first)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    looks = []
    while first < cap:
        looks.append(first)
        first *= 2
    return (*looks, cap)


def parse_looks(text) -> tuple[int, ...]:
    """The looks a results row records ("10;20;40;80"; one look, 12, reads back from a CSV as a number: solution
    05's); () for a fixed-rounds row (empty, NaN or missing: notebook 00_setup)."""
    if isinstance(text, numbers.Real) and not isinstance(text, bool) and math.isfinite(text):
        return (int(text),)
    return tuple(int(float(x)) for x in text.split(";")) if isinstance(text, str) and text else ()


def look_levels(looks, alpha: float = ALPHA) -> list[float]:
    """The level of each look: the increments of the spending function alpha · n_k / n_K (the
    power family with exponent 1), so that they add up to `alpha` (notebook 00_setup). A first look
    of 10 rounds among (10, 20, 40, 80) gets alpha / 8, the last alpha / 2: early stops need every
    round, or nearly, to agree; most of the level is kept for the rounds that need it."""
    looks = list(looks)
    if not looks or any(b <= a for a, b in zip(looks, looks[1:])):
        raise ValueError(f"looks must be increasing round counts, got {looks}")
    spent = [alpha * (n / looks[-1]) for n in looks]
    return [b - a for a, b in zip([0.0, *spent], spent)]


@functools.lru_cache(maxsize=512)
def _null_cdf(ranks: tuple[int, ...]) -> np.ndarray:
    """P(W <= w), w = 0 … sum(ranks), for W the sum of the `ranks` whose sign is positive, each
    sign a coin toss (the signed-rank test's null; ties' doubled mid-ranks keep them integers)."""
    p = np.zeros(sum(ranks) + 1)
    p[0] = 1.0
    for r in ranks:  # rank r positive or not, with probability 1/2 each
        p[r:] = 0.5 * (p[r:] + p[:-r].copy())
        p[:r] *= 0.5
    return np.cumsum(p)


def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(W+ <= w), w = 0 … n(n+1)/2, for n untied ranks."""
    return _null_cdf(tuple(range(1, n + 1)))


def _tails(w: np.ndarray, cdf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(W <= w) and P(W >= w) under the null with cumulative distribution `cdf`."""
    below = cdf[w]
    above = 1.0 - np.where(w > 0, cdf[np.maximum(w - 1, 0)], 0.0)
    return below, above


def _signed_rank_tails(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact one-sided p-values (median below 0, median above 0) of the Wilcoxon signed-rank
    test of each row of `x` (see `_wilcoxon`)."""
    m, n = x.shape
    low, high = np.ones(m), np.ones(m)
    a = np.abs(x)
    s = np.sort(a, axis=1)
    plain = ~((x == 0).any(axis=1) | (np.diff(s, axis=1) == 0).any(axis=1)) if n else np.zeros(m, bool)
    if n and plain.any():
        ranks = np.argsort(np.argsort(a[plain], axis=1), axis=1) + 1
        w = (ranks * (x[plain] > 0)).sum(axis=1)
        low[plain], high[plain] = _tails(w, _signed_rank_cdf(n))
    for i in np.flatnonzero(~plain):
        row = x[i][x[i] != 0]
        if len(row) == 0:
            continue
        srt = np.sort(np.abs(row))
        first = np.searchsorted(srt, np.abs(row), side="left")
        last = np.searchsorted(srt, np.abs(row), side="right") - 1
        doubled = first + last + 2  # twice the mean rank: an integer
        w = int(doubled[row > 0].sum())
        low[i], high[i] = (float(t) for t in _tails(np.array(w), _null_cdf(tuple(sorted(doubled.tolist())))))
    return low, high


def _wilcoxon(x: np.ndarray, alternative: str = "two-sided") -> np.ndarray:
    """The exact p-value of the Wilcoxon signed-rank test of each row of `x` (zeros dropped, ties
    given their mean rank; the null distribution enumerated over the actual ranks); no rounds: 1.
    Rows without ties or zeros share one null distribution per length: thousands of simulated
    comparisons take one pass. (`scipy.stats.wilcoxon` gives the same p-values without ties, which
    tests/test_stats.py checks; with ties, as every bootstrap resample of the rounds has, it falls
    back to a permutation test a hundred times slower, or to the normal approximation.)"""
    low, high = _signed_rank_tails(x)
    if alternative == "less":
        return low
    if alternative == "greater":
        return high
    return np.minimum(1.0, 2 * np.minimum(low, high))


def _rows(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[~np.isnan(x)][None, :] if x.ndim == 1 else x


def signed_rank_p(x) -> float:
    """Two-sided exact p-value of the Wilcoxon signed-rank test that `x` is symmetric about 0
    (notebook 02_kv_cache)."""
    return float(_wilcoxon(_rows(x))[0])


def _equivalence_p(x: np.ndarray, band: float) -> np.ndarray:
    edge = math.log1p(band)
    below = _wilcoxon(x - edge, "less")  # small if the median lies below +edge
    above = _wilcoxon(x + edge, "greater")  # small if the median lies above −edge
    return np.maximum(below, above)


def equivalence_p(x, band: float = BAND) -> float:
    """p-value of "the median of the log-ratios `x` lies within ±log(1 + band)": the larger of two
    one-sided signed-rank tests (TOST), against a median of +log(1 + band) and of −log(1 + band)
    (notebook 02_kv_cache)."""
    return float(_equivalence_p(_rows(x), band)[0])


def _walsh_ends(x: np.ndarray, levels) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (1 − level) Hodges-Lehmann interval of each row's median at each of `levels`, in the rows'
    own unit, from one sort of the Walsh averages; (−inf, inf) when too few rounds for a level."""
    m, n = x.shape
    cdf = _signed_rank_cdf(n) if n else None
    cs = [int(np.searchsorted(cdf, a / 2, side="right")) if n else 0 for a in levels]  # P(W+ <= c-1) <= a/2
    if not any(cs):  # too few rounds: no interval at these levels
        return [(np.full(m, -math.inf), np.full(m, math.inf)) for _ in cs]
    i, j = np.triu_indices(n)
    walsh = (x[:, i] + x[:, j]) / 2
    size = walsh.shape[1]
    ends = np.partition(walsh, sorted({k for c in cs if c for k in (c - 1, size - c)}), axis=1)
    return [(ends[:, c - 1], ends[:, size - c]) if c else (np.full(m, -math.inf), np.full(m, math.inf))
            for c in cs]  # fmt: skip


def _intervals(x: np.ndarray, levels) -> list[tuple[np.ndarray, np.ndarray]]:
    """`_walsh_ends` of the log-ratios `x`, as ratios (see `speedup_interval`): (0, inf) when too few rounds."""
    return [(np.exp(low), np.exp(high)) for low, high in _walsh_ends(x, levels)]


def _interval(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The (1 − level) Hodges-Lehmann interval of each row's median, as ratios (see `speedup_interval`)."""
    return _intervals(x, (level,))[0]


def speedup_interval(log_ratios, level: float = ALPHA) -> tuple[float, float]:
    """The (1 − level) confidence interval of the speed-up: the Hodges-Lehmann interval of the
    log-ratios' pseudo-median (their median where they are symmetric; the Walsh averages (x_i + x_j) / 2
    between the order statistics that the
    signed-rank test's critical value picks), as ratios; (0, inf) when too few rounds for the
    level (notebook 02_kv_cache). Without ties it excludes ×1 exactly when the signed-rank test
    rejects at `level`."""
    low, high = _interval(_rows(log_ratios), level)
    return float(low[0]), float(high[0])


def difference_interval(differences, level: float = ALPHA) -> tuple[float, float]:
    """The (1 − level) Hodges-Lehmann interval of the median of paired `differences` (per-round
    differences in their own unit, not log-ratios): the Walsh averages between the order statistics
    that the signed-rank test's critical value picks, as `speedup_interval` takes them (`_walsh_ends`),
    left as differences; (−inf, inf) when too few rounds for the level (notebook 10_cuda_graphs' solution,
    exercise 2)."""
    low, high = _walsh_ends(_rows(differences), (level,))[0]
    return float(low[0]), float(high[0])


def judge(log_ratios, level: float = ALPHA, band: float = BAND) -> dict[str, np.ndarray]:
    """Each row of `log_ratios` (rounds × comparisons, or one comparison's rounds) judged at
    `level`: the speed-up (median ratio) and the quartiles of the ratios, the signed-rank p,
    `real`, `no_effect`, the `outcome`, the (1 − level) interval and the equivalence interval, as
    arrays, one entry per row: the one rule behind `compare_rounds`, and what the simulations of
    tokgen_tools.seqsim run many rows of at once (notebook 00_setup)."""
    x = _rows(log_ratios)
    ratios = np.exp(x)
    n = x.shape[1]
    speedup = np.median(ratios, axis=1) if n else np.full(len(x), math.nan)
    q25, q75 = np.quantile(ratios, [0.25, 0.75], axis=1) if n >= 2 else np.full((2, len(x)), math.nan)
    below, above = _signed_rank_tails(x)
    p = np.minimum(1.0, 2 * np.minimum(below, above)) if n else np.full(len(x), math.nan)
    real = p < level
    no_effect = (_equivalence_p(x, band) < level) if n else np.zeros(len(x), bool)
    # a real difference's direction is the test's own (the tail that rejects), not the median
    # ratio's: with more than half the rounds tied the median reads ×1.00 for a real gain
    faster = above < below
    outcome = np.where(real, np.where(faster, FASTER, SLOWER), np.where(no_effect, NO_EFFECT, UNDECIDED))
    # the (1 − level) interval, and the (1 − 2·level) one that the no-effect test inverts: each of its two
    # one-sided tests at `level` rejects exactly where that interval's end lies inside the band (without ties)
    none = (np.full(len(x), math.nan),) * 2
    (low, high), (eq_low, eq_high) = _intervals(x, (level, 2 * level)) if n else (none, none)
    return {
        "speedup": speedup,
        "speedup_q25": q25,
        "speedup_q75": q75,
        "p_value": p,
        "rounds": np.full(len(x), n),
        "real": real,
        "no_effect": no_effect,
        "outcome": outcome,
        "interval_low": low,
        "interval_high": high,
        "equivalence_low": eq_low,
        "equivalence_high": eq_high,
    }


def rounds_to_decide(log_ratios, band: float = BAND) -> int | None:
    """About how many rounds would make this comparison real or show no effect, from the spread of
    its per-round log-ratios (normal approximation; None without spread). Never as few as were run:
    these rounds did not decide it, whatever the approximation says. Notebook 09_summary."""
    x = [v for v in log_ratios if not math.isnan(v)]
    if len(x) < 2 or statistics.stdev(x) == 0:
        return None
    mu, sd = abs(statistics.mean(x)), statistics.stdev(x)
    needed = [(2.0 * sd / mu) ** 2] if mu > 0 else []  # mean two standard errors from 0: real
    if mu < math.log1p(band):
        needed.append((1.7 * sd / (math.log1p(band) - mu)) ** 2)  # 1.7 standard errors inside the band
    return math.ceil(max(6, len(x) + 1, min(needed))) if needed else None


def sequential(log_ratios, looks, thresholds=(), band: float = BAND, levels=None) -> dict[str, np.ndarray]:
    """Each row of `log_ratios` (comparisons × rounds, or one comparison's rounds) judged look by
    look (`looks`, each at its `look_levels` level) and taken at the first look that decides it:
    its outcome, and on which side of each speed-up in `thresholds` it lies (its interval excludes
    them); else at the last look its rounds reach. The `judge` arrays at that look, with its
    `level`, `decided` and `capped` (undecided at the last look). Looks beyond the rounds are not reached;
    rounds fewer than the first look are judged at the first look's level. `levels`: each look's level where
    not `look_levels(looks)` (a design's levels kept where its last look is read on fewer valid rounds:
    `tokgen.claims.growth_per_doubling`, review rr18a S1): one per look, adding up to at most ALPHA, else a
    ValueError (review rr18c N1). The rule of `compare_rounds`, and what tokgen_tools.seqsim simulates
    (notebook 00_setup)."""
    x = _rows(log_ratios)
    n, looks = x.shape[1], list(looks)
    if levels is not None and (len(levels) != len(looks) or sum(levels) > ALPHA + 1e-12):
        raise ValueError(f"levels must give one level per look, adding up to at most {ALPHA}: got {list(levels)} "
                         f"for looks {looks}")  # fmt: skip
    levels = look_levels(looks) if levels is None else list(levels)
    reached = [(k, a) for k, a in zip(looks, levels) if k <= n] or [(n, levels[0])]
    result: dict[str, np.ndarray] = {}
    open_ = np.ones(len(x), bool)
    for k, level in reached:
        g = judge(x[open_, :k], level, band) | {"level": np.full(open_.sum(), level)}
        done = g["outcome"] != UNDECIDED
        for t in thresholds:
            done &= ~((g["interval_low"] <= t) & (t <= g["interval_high"]))
        g["decided"] = done
        for key, values in g.items():
            result.setdefault(key, np.empty(len(x), dtype=object))[open_] = values
        open_[open_] = ~done
        if not open_.any():
            break
    return result | {"capped": open_ & (reached[-1][0] >= looks[-1])}


def compare_rounds(base_times: list[float], times: list[float], looks=(), thresholds=(), levels=None) -> dict:
    """`times` against `base_times`, paired by round: the speed-up (median of the per-round
    t_base / t, > 1 faster) with the quartiles of the per-round ratios, the signed-rank p of the
    log-ratios, `real` (p < level), `no_effect` (TOST within ±BAND), the `outcome` in words, the
    speed-up's (1 − level) `interval_low`–`interval_high`, its (1 − 2·level) `equivalence_low`–
    `equivalence_high` (the one `no_effect` tests against the band) and the rounds that would likely
    decide an undecided one, and `rounds_both` (every round both ran) with `speedup_all`, the
    speed-up over them: beside a sequential comparison that stopped at an earlier look, not judged
    (`tokgen.voice.speedup_text`; notebook 02_kv_cache).

    Without `looks`: every round, at level ALPHA. With `looks` (a sequential comparison,
    `looks_up_to`): the first look that the rounds reach and that decides it, with the speed-ups
    in `thresholds` (`sequential`); `rounds` says how many it used, `decided` whether that look
    decided it, `capped` whether it reached the last look undecided; `looks` is recorded as
    "10;20;40;80"; `levels`, each look's level where not `look_levels(looks)` (`sequential`)."""
    n = min(len(times), len(base_times))
    logs = [math.log(b / t) for b, t in zip(base_times[:n], times[:n]) if b > 0 and t > 0]
    g = sequential(logs, looks or [len(logs) or 1], thresholds if looks else (), levels=levels if looks else None)
    g = {key: value[0].item() if hasattr(value[0], "item") else value[0] for key, value in g.items()}
    g["rounds_to_decide"] = rounds_to_decide(logs[: int(g["rounds"])]) if g["outcome"] == UNDECIDED else None
    g["rounds_both"], g["speedup_all"] = len(logs), float(np.median(np.exp(logs))) if logs else math.nan
    return g | {"looks": ";".join(map(str, looks)), "capped": bool(looks) and bool(g["capped"]),
                "thresholds": [float(t) for t in thresholds]}  # a claim's: `voice.interval_text` keeps each end


def gain(results: pd.DataFrame, base: str, variant: str, thresholds=()) -> dict | None:
    """`variant` against `base`, round by round (`compare_rounds`): the speed-up ×, `real`, `no_effect`
    and the outcome; judged at the looks the rows record (a sequential run of `tokgen.compare`), the
    side of each speed-up in `thresholds` decided too; None when either was not measured
    (notebook 02_kv_cache)."""
    rows = {r["variant"]: r for r in results.to_dict("records")}
    if base not in rows or variant not in rows:
        return None
    looks = parse_looks(rows[variant].get("looks")) if parse_looks(rows[base].get("looks")) else ()
    g = compare_rounds(run_times(rows[base]), run_times(rows[variant]), looks, thresholds)
    return {"variant": variant, "vs": base, **g}


def gains(results: pd.DataFrame, base: str) -> pd.DataFrame:
    """Every other variant of `results` against `base` (see `gain`; notebook 02_kv_cache)."""
    if base not in set(results["variant"]):
        raise ValueError(f"no variant {base!r} among {list(results['variant'])}")
    return pd.DataFrame([gain(results, base, name) for name in results["variant"] if name != base])


def sequential_error_rates(data_dir) -> pd.DataFrame:
    """The sequential design's error rates as tokgen_tools.seqsim measured them
    (`data_dir`/sequential_error_rates.csv), one row per source of noise: the false-positive rate
    (A/A), the false "no effect" rate at the worse of the band's two edges (×(1 + BAND) and
    ×1/(1 + BAND)), power at ×1.10 and ×1.15, the share of A/A comparisons still undecided at the
    cap (neither real nor "no effect" after every round), and the mean rounds used
    (notebook 00_setup, README)."""
    df = read_table(Path(data_dir) / "sequential_error_rates.csv")
    rate = df.pivot_table(index="source", columns="scenario", values="rate", aggfunc="first")
    rounds = df.pivot_table(index="source", columns="scenario", values="mean_rounds", aggfunc="first")
    capped = df.pivot_table(index="source", columns="scenario", values="capped_share", aggfunc="first")
    edges = [c for c in rate.columns if c.startswith("edge")]
    first = df.groupby("source")[["trials", "looks"]].first()
    return pd.DataFrame(
        {
            "false positive (A/A)": rate["A/A"],
            "false no effect (worse band edge)": rate[edges].max(axis=1),
            "power at ×1.10": rate["×1.10"],
            "power at ×1.15": rate["×1.15"],
            "A/A undecided at the cap": capped["A/A"],
            "mean rounds, A/A": rounds["A/A"],
            "mean rounds, ×1.10": rounds["×1.10"],
            "comparisons per scenario": first["trials"],
            "looks": first["looks"],
        }
    ).rename_axis("noise").reset_index()


def percent_of(share: float, trials: float = math.nan, places: int = 1) -> str:
    """`share` as a percentage to `places` decimals, ties rounded half up on the exact value: the count
    share × `trials` over `trials` where `trials` is given and makes it a whole count, else the share as written
    (`Decimal`, not a float whose error decides a tie: 0.0355 is 0.035499999999999997 as a float and printed 3.5%;
    review rr17a N7); "nan%" for NaN (notebook 00_setup)."""
    if share != share:
        return f"{share:.{places}%}"
    exact = Decimal(repr(float(share)))
    if trials == trials and trials and abs(share * trials - round(share * trials)) < 1e-6:
        exact = Decimal(round(share * trials)) / Decimal(int(trials))
    return f"{(exact * 100).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)}%"


def shown_error_rates(rates: pd.DataFrame) -> pd.DataFrame:
    """`sequential_error_rates` as notebook 00 and the README print it, one form in both (review rvA17 N3: 0.035 in
    one, 3.6% in the other): each rate a percentage to one decimal, two where one would round a share short of 100%
    up to it (or above 0 down to 0), rounded half up from its count over the row's comparisons (`percent_of`:
    142 of 4,000, 3.55%, reads 3.6% whether the CSV stored 0.0355 or 0.035500000000000004; review rr17a N7); mean
    rounds whole (notebook 00_setup)."""
    count = "comparisons per scenario"
    trials = rates[count] if count in rates else pd.Series(math.nan, rates.index)

    def share(v, n):
        one = percent_of(v, n)
        return percent_of(v, n, 2) if one in ("100.0%", "0.0%") and 0 < v < 1 else one

    shares = [c for c in rates.columns if c.startswith(("false", "power", "A/A undecided"))]
    out = rates.assign(**{c: [share(v, n) for v, n in zip(rates[c], trials)] for c in shares})
    return out.assign(**{c: out[c].map(lambda v: f"{v:.0f}") for c in out.columns if c.startswith("mean rounds")})


def recorded_rounds_source(data_dir) -> str:
    """Which run's tables the error-rate table's "recorded rounds" came from, as
    `data_dir`/sequential_error_rates.csv records it (tokgen_tools.seqsim's `recorded_commits`: the
    tables' own commits), beside the commit and time the simulation ran at; a CSV from before that
    column says it does not record them (notebook 00_setup). "" without recorded rounds."""
    df = read_table(Path(data_dir) / "sequential_error_rates.csv")
    rows = df[df["source"] == "recorded rounds"]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    pairs = str(row.get("recorded_pairs", "")).split(":")[0]
    when = str(row["recorded_at"])[:16].replace("T", " ")
    ran = f"the simulation ran at commit {str(row['commit'])[:12]}, {when} UTC"
    made = row.get("recorded_commits")
    if isinstance(made, str) and made:
        commits = "commits" if "), " in made else "commit"
        found = f"Recorded rounds: {pairs}, the tables the simulation found when it ran"
        return f"{found}, made at {commits} {made}; {ran}."
    return (f"Recorded rounds: {pairs}, the tables the simulation found when it ran ({ran}); which run made those "
            "tables, this CSV does not record.")  # fmt: skip


def resample_rounds(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The table as if its rounds had been drawn again: one bootstrap draw of round indices,
    the same for every row (rounds are paired across variants), and the times' summaries
    recomputed from it (notebook 09_summary: how stable a verdict is). A sequential run's table
    (a `looks` column) comes back as it is: each of its comparisons stopped at the look that
    decided it, and its error rates are the design's (`look_levels`); a bootstrap cannot draw the
    rounds it did not need, and redrawing the ones it had would judge a stopped comparison again."""
    if "times_ms" not in df or df.empty or ("looks" in df and df["looks"].map(parse_looks).map(bool).any()):
        return df
    times = [run_times({"times_ms": t}) for t in df["times_ms"]]  # not to_dict: the bootstrap reads a table 3,200 times
    n = max((len(t) for t in times), default=0)
    if n == 0:
        return df
    idx = rng.integers(0, n, n)
    df = df.copy()
    drawn = [[t[i] for i in idx if i < len(t)] or t for t in times]
    df["times_ms"] = [";".join(map(str, t)) for t in drawn]
    df["median_ms"] = [statistics.median(t) if t else float("nan") for t in drawn]
    quartiles = [statistics.quantiles(t, n=4, method="inclusive") if len(t) >= 2 else [float("nan")] * 3 for t in drawn]
    df["q25_ms"] = [q[0] for q in quartiles]
    df["q75_ms"] = [q[2] for q in quartiles]
    if "steps" in df:
        df["ms_per_step"] = df["median_ms"] / df["steps"]
    return df


def slope(ns, times) -> float:
    """Exponent k of runtime ∝ N^k, fitted on log-log axes (notebook 01_naive)."""
    return float(np.polyfit(np.log(ns), np.log(times), 1)[0])


def round_slopes(results: pd.DataFrame) -> np.ndarray:
    """Per round, the exponent k of runtime ∝ N^k fitted on log-log axes across the N (`slope`, by least squares),
    the rounds paired by their interleaved position as `tokgen.claims.growth_ratios` pairs them: the i-th round of
    every N ran in the run's i-th round. Over the first k rounds, k the fewest any row ran; rows sorted by max_seqlen
    (notebook 01_naive)."""
    rows = results.sort_values("max_seqlen")
    times = [run_times({"times_ms": t}) for t in rows["times_ms"]]
    k = min((len(t) for t in times), default=0)
    if k == 0 or len(times) < 2:
        return np.array([])
    x = np.log(rows["max_seqlen"].to_numpy(float))
    y = np.log(np.array([t[:k] for t in times]))  # N × rounds
    x = x - x.mean()
    return (x @ (y - y.mean(axis=0))) / (x @ x)  # each round's least-squares slope at once


def paired_slope(results: pd.DataFrame) -> float:
    """Claim 1's slope: the median over rounds of each round's log-log slope across the N (`round_slopes`), NaN
    without rounds. Not the slope fitted through each N's median: with N spaced evenly in log (100, 200, 400) a
    least-squares slope gives the middle N no weight, so that fit is the end points' ratio of medians,
    log(median at 400 / median at 100) / log 4, unpaired; each round's fit is its own end points' ratio, paired
    (notebook 01_naive)."""
    slopes = round_slopes(results)
    return float(np.median(slopes)) if len(slopes) else math.nan


def step_slopes(results: pd.DataFrame, by: str = "batch_size") -> pd.DataFrame:
    """The log-log slope of the time from each value of `by` to the one before it (`results`: ok
    rows of `tokgen.compare`, one per value, all at one N), for the solution of
    notebook 08_batch_sweep. Two rows of one comparison (one `order_seed`) are **paired** round by round: the
    slope is the median over their shared rounds of log(t_b / t_a) / log(b / a), with its IQR and
    rounds. Two rows of separate comparisons cannot be paired: their slope is the ratio of their
    medians on log-log axes, `paired` False, with no IQR (NaN) and 0 rounds."""
    rows = results.sort_values(by).reset_index(drop=True)
    seeds = rows["order_seed"].astype(str) if "order_seed" in rows else pd.Series([""] * len(rows))
    out = []
    for i in range(1, len(rows)):
        a, b = rows.iloc[i - 1], rows.iloc[i]
        step = math.log(float(b[by]) / float(a[by]))
        ta, tb = run_times(a), run_times(b)
        k = min(len(ta), len(tb))
        if seeds.iloc[i] == seeds.iloc[i - 1] and k:
            s = [math.log(tb[j] / ta[j]) / step for j in range(k)]
            q = statistics.quantiles(s, n=4, method="inclusive") if k >= 2 else [s[0]] * 3
            row = {"slope": statistics.median(s), "slope_q25": q[0], "slope_q75": q[2], "rounds": k, "paired": True}
        else:
            nan = float("nan")
            row = {"slope": math.log(float(b["median_ms"]) / float(a["median_ms"])) / step, "slope_q25": nan,
                   "slope_q75": nan, "rounds": 0, "paired": False}  # fmt: skip
        out.append({by: b[by], "from": a[by], **row})
    return pd.DataFrame(out, columns=[by, "from", "slope", "slope_q25", "slope_q75", "rounds", "paired"])


TREND_DRAWS = 20_000  # `rank_trend`'s permutations: the p-value's resolution is 1 / (TREND_DRAWS + 1)


def rank_trend(values, draws: int = TREND_DRAWS, seed: int = 0) -> tuple[float, float]:
    """Spearman's ρ of `values` against their position (1, 2, …: the round) and its two-sided p-value by
    permutation (`draws` reorderings drawn from `seed`, so the same values give the same p; ties ranked by
    their mean), as `scipy.stats.spearmanr` without scipy, which tokgen does not depend on: (NaN, NaN) under
    3 values, where all are equal or where one is not finite (review rr20i N2) (notebook 07_pipelining: whether the
    rounds' times drifted, review rv19A S4)."""
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        return math.nan, math.nan
    y = pd.Series(values).rank().to_numpy()
    n = len(y)
    if n < 3 or np.ptp(y) == 0:
        return math.nan, math.nan
    x = np.arange(1, n + 1, dtype=float)
    xc, yc = x - x.mean(), y - y.mean()
    rho = float(xc @ yc / math.sqrt((xc @ xc) * (yc @ yc)))
    shuffled = np.random.default_rng(seed).permuted(np.tile(yc, (draws, 1)), axis=1)
    drawn = shuffled @ xc / math.sqrt((xc @ xc) * (yc @ yc))
    return rho, float((1 + np.sum(np.abs(drawn) >= abs(rho) - 1e-12)) / (draws + 1))
