"""Judging measurements: paired per-round speed-ups, a signed-rank test, an equivalence band, fits.

Introduced in notebook 02_kv_cache (the slope in notebook 01_naive). Interleaved rounds make two
variants' times a pair per round; the one speed measure everywhere is the **speed-up** ×s: the
median over rounds of t_base / t (> 1: faster), with the quartiles of the per-round ratios. A
difference is **real** when the Wilcoxon signed-rank test of the per-round log-ratios gives
p < ALPHA; with the fresh random order of every round of `tokgen.compare`, each log-ratio of two
identical variants is as likely negative as positive, independently of the others, whatever the
host noise, so that rule calls noise real at most ALPHA of the time (a fixed rotation of the order
does not guarantee it: tokgen.bench.round_orders says why). A comparison shows **no effect** when
two one-sided signed-rank tests (TOST) put the log-ratios' median inside ±BAND: a true effect of
BAND is called "no effect" at most ALPHA of the time. tests/test_stats.py measures both rates on
simulated host noise, tests/test_gpu.py the first on a real variant against itself.
"""

import math
import statistics

import numpy as np
import pandas as pd

ALPHA = 0.05  # two-sided false-positive rate of `real`; each one-sided test of `no effect` too
BAND = 0.05  # "no effect": the speed-up shown to lie within ×(1 - BAND)…×(1 + BAND)
FASTER, SLOWER, NO_EFFECT, UNDECIDED = "faster", "slower", "no effect", "undecided"


def run_times(row) -> list[float]:
    """The per-round times of a result row, a dict or a DataFrame row (notebook 01_naive)."""
    text = row["times_ms"]
    return [float(x) for x in str(text).split(";")] if isinstance(text, str) and text else []


def _signed_rank_tails(x) -> tuple[float, float]:
    """P(W+ <= w) and P(W+ >= w) under the null of the Wilcoxon signed-rank test of `x` (zeros
    dropped, ties given their mean rank; the null distribution enumerated over the actual ranks)."""
    x = [v for v in x if v != 0 and not math.isnan(v)]
    if not x:
        return 1.0, 1.0
    first, last = {}, {}
    for i, a in enumerate(sorted(abs(v) for v in x)):
        first.setdefault(a, i)
        last[a] = i
    ranks = [first[abs(v)] + last[abs(v)] + 2 for v in x]  # doubled mean ranks of ties: integers
    w = sum(r for r, v in zip(ranks, x) if v > 0)
    counts = {0: 1}  # sum of the positive ranks -> number of sign patterns
    for r in ranks:
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + r] = nxt.get(s + r, 0) + c
        counts = nxt
    total = 2 ** len(x)
    return (sum(c for s, c in counts.items() if s <= w) / total, sum(c for s, c in counts.items() if s >= w) / total)


def signed_rank_p(x) -> float:
    """Two-sided exact p-value of the Wilcoxon signed-rank test that `x` is symmetric about 0
    (notebook 02_kv_cache)."""
    low, high = _signed_rank_tails(x)
    return min(1.0, 2 * min(low, high))


def equivalence_p(x, band: float = BAND) -> float:
    """p-value of "the median of the log-ratios `x` lies within ±log(1 + band)": the larger of two
    one-sided signed-rank tests (TOST), against a median of +log(1 + band) and of −log(1 + band)
    (notebook 02_kv_cache)."""
    edge = math.log1p(band)
    below = _signed_rank_tails([v - edge for v in x])[0]  # small if the median lies below +edge
    above = _signed_rank_tails([v + edge for v in x])[1]  # small if the median lies above −edge
    return max(below, above)


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


def compare_rounds(base_times: list[float], times: list[float]) -> dict:
    """`times` against `base_times`, paired by round: the speed-up (median of the per-round
    t_base / t, > 1 faster) with the quartiles of the per-round ratios, the signed-rank p of the
    log-ratios, `real` (p < ALPHA), `no_effect` (TOST within ±BAND), the `outcome` in words and
    the rounds that would likely decide an undecided one (notebook 02_kv_cache)."""
    n = min(len(times), len(base_times))
    pairs = [(b, t) for b, t in zip(base_times[:n], times[:n]) if b > 0 and t > 0]
    ratios = [b / t for b, t in pairs]
    logs = [math.log(r) for r in ratios]
    lo, hi = statistics.quantiles(ratios, n=4, method="inclusive")[::2] if len(ratios) >= 2 else (math.nan,) * 2
    speedup = statistics.median(ratios) if ratios else math.nan
    p = signed_rank_p(logs) if pairs else math.nan
    real, no_effect = bool(p < ALPHA), bool(pairs) and equivalence_p(logs) < ALPHA
    outcome = (FASTER if speedup > 1 else SLOWER) if real else NO_EFFECT if no_effect else UNDECIDED
    return {
        "speedup": speedup,
        "speedup_q25": lo,
        "speedup_q75": hi,
        "p_value": p,
        "rounds": len(pairs),
        "real": real,
        "no_effect": no_effect,
        "outcome": outcome,
        "rounds_to_decide": rounds_to_decide(logs) if outcome == UNDECIDED else None,
    }


def gain(results: pd.DataFrame, base: str, variant: str) -> dict | None:
    """`variant` against `base`, round by round (`compare_rounds`): the speed-up ×, `real`, `no_effect`
    and the outcome; None when either was not measured (notebook 02_kv_cache)."""
    rows = {r["variant"]: r for r in results.to_dict("records")}
    if base not in rows or variant not in rows:
        return None
    return {"variant": variant, "vs": base, **compare_rounds(run_times(rows[base]), run_times(rows[variant]))}


def gains(results: pd.DataFrame, base: str) -> pd.DataFrame:
    """Every other variant of `results` against `base` (see `gain`; notebook 02_kv_cache)."""
    if base not in set(results["variant"]):
        raise ValueError(f"no variant {base!r} among {list(results['variant'])}")
    return pd.DataFrame([gain(results, base, name) for name in results["variant"] if name != base])


def resample_rounds(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The table as if its rounds had been drawn again: one bootstrap draw of round indices,
    the same for every row (rounds are paired across variants), and the times' summaries
    recomputed from it (notebook 09_summary: how stable a verdict is)."""
    if "times_ms" not in df or df.empty:
        return df
    times = [run_times(r) for r in df.to_dict("records")]
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
