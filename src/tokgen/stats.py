"""Judging measurements: paired per-round gains with a signed-rank test, resampled rounds, fits.

Gains are introduced in notebook 02_kv_cache, the slope in notebook 01_naive. Interleaved
rounds make two variants' times a pair per round; a difference is called real when the
Wilcoxon signed-rank test of the per-round log-ratios gives p < ALPHA. With the rotated order
of `tokgen.compare`, two identical variants give log-ratios symmetric about zero, whatever
the host noise, so the test's false-positive rate is at most ALPHA; tests/test_stats.py
measures it on simulated host noise, tests/test_gpu.py on a real variant against itself.
"""

import math
import statistics

import numpy as np
import pandas as pd

ALPHA = 0.05  # two-sided false-positive rate of `real`


def run_times(row) -> list[float]:
    """The per-round times of a result row, a dict or a DataFrame row (notebook 01_naive)."""
    text = row["times_ms"]
    return [float(x) for x in str(text).split(";")] if isinstance(text, str) and text else []


def signed_rank_p(x) -> float:
    """Two-sided exact p-value of the Wilcoxon signed-rank test that `x` is symmetric about 0
    (zeros dropped, ties given their mean rank; the null distribution is enumerated over the
    actual ranks). Introduced in notebook 02_kv_cache."""
    x = [v for v in x if v != 0 and not math.isnan(v)]
    if not x:
        return 1.0
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
    low = sum(c for s, c in counts.items() if s <= w) / total
    high = sum(c for s, c in counts.items() if s >= w) / total
    return min(1.0, 2 * min(low, high))


def compare_rounds(base_times: list[float], times: list[float]) -> dict:
    """`times` against `base_times`, paired by round: median gain % (IQR of the per-round gains),
    the signed-rank p of the log-ratios and `real` = p < ALPHA (notebook 02_kv_cache)."""
    n = min(len(times), len(base_times))
    pairs = [(b, t) for b, t in zip(base_times[:n], times[:n]) if b > 0 and t > 0]
    per_round = [100 * (b - t) / b for b, t in pairs]
    if len(per_round) >= 2:
        lo, _, hi = statistics.quantiles(per_round, n=4, method="inclusive")
    else:
        lo = hi = float("nan")
    p = signed_rank_p([math.log(b / t) for b, t in pairs]) if pairs else float("nan")
    return {
        "gain_pct": statistics.median(per_round) if per_round else float("nan"),
        "gain_q25_pct": lo,
        "gain_q75_pct": hi,
        "p_value": p,
        "rounds": len(pairs),
        "real": bool(p < ALPHA),
    }


def gain(results: pd.DataFrame, base: str, variant: str) -> dict | None:
    """`variant` against `base`, round by round: gain % = (t_base - t) / t_base, with `real` from the
    signed-rank test (`compare_rounds`); None when either was not measured (notebook 02_kv_cache)."""
    rows = {r["variant"]: r for r in results.to_dict("records")}
    if base not in rows or variant not in rows:
        return None
    speedup = rows[base]["median_ms"] / rows[variant]["median_ms"] if rows[variant]["median_ms"] else float("nan")
    measured = compare_rounds(run_times(rows[base]), run_times(rows[variant]))
    return {"variant": variant, "vs": base, "speedup": speedup, **measured}


def gains(results: pd.DataFrame, base: str) -> pd.DataFrame:
    """Every variant of `results` against `base` (see `gain`; notebook 02_kv_cache)."""
    if base not in set(results["variant"]):
        raise ValueError(f"no variant {base!r} among {list(results['variant'])}")
    return pd.DataFrame([gain(results, base, name) for name in results["variant"]])


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
