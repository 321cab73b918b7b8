"""The article's ten claims against our measurements, read from data/ (notebook 09_summary, README).

Each `claim_N(results_dir)` returns one row: the article's claim, what we measured (text built
from the CSVs), a verdict and the criterion behind it. A table that is missing gives
"not measured", never a number.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from .bench import gains
from .results import load

REPRODUCED, PARTLY, NOT, UNMEASURED = "reproduced", "partly", "not reproduced", "not measured"


def _ok(df: pd.DataFrame, **where) -> pd.DataFrame:
    df = df[df["status"] == "ok"]
    for column, value in where.items():
        if column not in df.columns:
            if value is False:  # tables without the column hold eager models only
                continue
            return df.iloc[0:0]
        df = df[df[column] == value]
    return df


def _combine(*parts: bool) -> str:
    return REPRODUCED if all(parts) else PARTLY if any(parts) else NOT


def _gain(results: pd.DataFrame, base: str, variant: str) -> dict | None:
    if base not in set(results["variant"]) or variant not in set(results["variant"]):
        return None
    g = gains(results[results["variant"].isin([base, variant])], base)
    return g[g["variant"] == variant].iloc[0].to_dict()


def _fmt_gain(g: dict | None) -> str:
    if g is None:
        return "not measured"
    real = "clears the spread" if g["real"] else "within the spread"
    return f"{g['gain_pct']:+.1f}% (IQR {g['gain_q25_pct']:+.1f}…{g['gain_q75_pct']:+.1f}%, {real})"


def slope(ns, times) -> float:
    """Exponent k of runtime ∝ N^k, fitted on log-log axes."""
    return float(np.polyfit(np.log(ns), np.log(times), 1)[0])


def _row(n, experiment, article, measured, verdict, criterion):
    return {
        "#": n,
        "experiment": experiment,
        "article": article,
        "measured": measured,
        "verdict": verdict,
        "criterion": criterion,
    }


def claim_1(results_dir):
    article = "runtime ~quadruples when N doubles (O(N²)); high fragmentation"
    criterion = "log-log slope ≥ 1.7 and fragmentation ≥ 50% of reserved at every N"
    try:
        df = _ok(load("01_naive", results_dir)).sort_values("max_seqlen")
    except FileNotFoundError:
        return _row(1, "naive generator", article, UNMEASURED, UNMEASURED, criterion)
    k = slope(df["max_seqlen"], df["median_ms"])
    ratios = ", ".join(f"×{b / a:.1f}" for a, b in zip(df["median_ms"], df["median_ms"][1:]))
    frag = df["frag_pct"].astype(float)
    measured = f"slope {k:.2f} ({ratios} per doubling); fragmentation {frag.min():.0f}–{frag.max():.0f}% of reserved"
    return _row(1, "naive generator", article, measured, _combine(k >= 1.7, bool((frag >= 50).all())), criterion)


def claim_2(results_dir):
    article = "large speed-up over naive, growing with N; fragmentation still a concern"
    criterion = "speed-up > 1.5× at every N and growing with N (runs of notebooks 01 and 02)"
    try:
        naive = _ok(load("01_naive", results_dir)).set_index("max_seqlen")["median_ms"]
        kv = _ok(load("02_kv_cache", results_dir)).set_index("max_seqlen")
    except FileNotFoundError:
        return _row(2, "KV cache (dynamic)", article, UNMEASURED, UNMEASURED, criterion)
    ns = sorted(set(naive.index) & set(kv.index))
    speedups = [naive[n] / kv.loc[n, "median_ms"] for n in ns]
    measured = ", ".join(f"N={n}: ×{s:.1f}" for n, s in zip(ns, speedups))
    measured += f"; fragmentation {kv['frag_pct'].min():.0f}–{kv['frag_pct'].max():.0f}%"
    large = all(s > 1.5 for s in speedups)
    growing = all(b > a for a, b in zip(speedups, speedups[1:]))
    return _row(2, "KV cache (dynamic)", article, measured, _combine(large, growing), criterion)


def claim_3(results_dir):
    article = "expandable segments: fragmentation drops markedly; runtime improves marginally"
    criterion = (
        "fragmentation (GB) at most half of the default allocator's at every N; runtime gain ≥ 0 clearing the spread"
    )
    try:
        df = _ok(load("03_expandable_segments", results_dir))
    except FileNotFoundError:
        return _row(3, "expandable segments", article, UNMEASURED, UNMEASURED, criterion)
    if "expandable_active" in df and not df[df["allocator"] == "expandable"]["expandable_active"].all():
        return _row(3, "expandable segments", article, "setting was not active", UNMEASURED, criterion)
    parts, frag_ok, runtime_ok = [], True, True
    for n, group in df.groupby("max_seqlen"):
        by = group.set_index("allocator")
        if not {"expandable", "default"} <= set(by.index):
            continue
        g = _gain(group, by.loc["default", "variant"], by.loc["expandable", "variant"])
        frag_ok &= by.loc["expandable", "frag_gb"] <= 0.5 * by.loc["default", "frag_gb"]
        runtime_ok &= g is not None and g["real"] and g["gain_pct"] > 0
        parts.append(
            f"N={n}: fragmentation {by.loc['default', 'frag_gb']:.2f}→{by.loc['expandable', 'frag_gb']:.2f} GB, "
            f"runtime {_fmt_gain(g)}"
        )
    if not parts:
        return _row(3, "expandable segments", article, UNMEASURED, UNMEASURED, criterion)
    return _row(3, "expandable segments", article, "; ".join(parts), _combine(frag_ok, runtime_ok), criterion)


def claim_4(results_dir):
    article = "StaticCache: lower fragmentation; N=100 slower than dynamic, N=200 +9%, N=400 +10% faster"
    criterion = "lower fragmentation at every N; slower at the smallest N and faster at the others, clearing the spread"
    try:
        df = _ok(load("04_static_cache", results_dir))
    except FileNotFoundError:
        return _row(4, "StaticCache", article, UNMEASURED, UNMEASURED, criterion)
    parts, frag_ok, pattern_ok = [], True, True
    ns = sorted(df["max_seqlen"].unique())
    for n in ns:
        group = df[df["max_seqlen"] == n].set_index("generator")
        if not {"kv_dynamic", "kv_static"} <= set(group.index):
            continue
        g = _gain(df[df["max_seqlen"] == n], group.loc["kv_dynamic", "variant"], group.loc["kv_static", "variant"])
        frag_ok &= group.loc["kv_static", "frag_gb"] < group.loc["kv_dynamic", "frag_gb"]
        want_faster = n != ns[0]
        pattern_ok &= g is not None and g["real"] and (g["gain_pct"] > 0) == want_faster
        parts.append(
            f"N={n}: static vs dynamic {_fmt_gain(g)}, fragmentation "
            f"{group.loc['kv_dynamic', 'frag_gb']:.2f}→{group.loc['kv_static', 'frag_gb']:.2f} GB"
        )
    if not parts:
        return _row(4, "StaticCache", article, UNMEASURED, UNMEASURED, criterion)
    return _row(4, "StaticCache", article, "; ".join(parts), _combine(frag_ok, pattern_ok), criterion)


def claim_5(results_dir):
    article = "torch.compile on the static-cache generator: a further speed-up"
    criterion = "compiled faster than eager, clearing the spread"
    try:
        df = _ok(load("05_torch_compile", results_dir))
    except FileNotFoundError:
        return _row(5, "torch.compile", article, UNMEASURED, UNMEASURED, criterion)
    eager, compiled = _ok(df, compiled=False), _ok(df, compiled=True)
    if eager.empty or compiled.empty:
        return _row(5, "torch.compile", article, UNMEASURED, UNMEASURED, criterion)
    g = _gain(df, eager.iloc[0]["variant"], compiled.iloc[0]["variant"])
    measured = f"compiled vs eager static {_fmt_gain(g)}"
    verdict = REPRODUCED if g is not None and g["real"] and g["gain_pct"] > 0 else NOT
    return _row(5, "torch.compile", article, measured, verdict, criterion)


def _idle(results_dir):
    df = load("06_eos_sync_profile", results_dir).set_index("variant")
    return df


def claim_6(results_dir):
    article = "the GPU idles ~110 µs between steps, caused by the per-step .item() sync"
    criterion = "idle gap between steps ≥ 20 µs with the sync and at least twice the pipelined generator's"
    try:
        df = _idle(results_dir)
        sync, piped = df.loc["kv_static", "idle_gap_median_us"], df.loc["pipelined_static", "idle_gap_median_us"]
    except (FileNotFoundError, KeyError):
        return _row(6, "cost of the EOS check", article, UNMEASURED, UNMEASURED, criterion)
    measured = f"median idle gap between steps {sync:.0f} µs with the sync, {piped:.0f} µs pipelined (eager, B=16)"
    verdict = REPRODUCED if sync >= 20 and sync >= 2 * piped else PARTLY if sync > piped else NOT
    return _row(6, "cost of the EOS check", article, measured, verdict, criterion)


def claim_7(results_dir):
    article = "two-stream pipelining: the GPU no longer idles between steps; a further speed-up"
    criterion = (
        "idle gap at most half the sync one; pipelined faster than sync, clearing the spread, eager and compiled"
    )
    try:
        df = _ok(load("07_pipelining", results_dir))
        idle = _idle(results_dir)
    except FileNotFoundError:
        return _row(7, "pipelining", article, UNMEASURED, UNMEASURED, criterion)
    parts, oks = [], []
    if "idle_gap_median_us" in idle.columns and {"kv_static", "pipelined_static"} <= set(idle.index):
        sync, piped = idle.loc["kv_static", "idle_gap_median_us"], idle.loc["pipelined_static", "idle_gap_median_us"]
        oks.append(piped <= 0.5 * sync)
        parts.append(f"idle gap {sync:.0f}→{piped:.0f} µs")
    for compiled in (False, True):
        base, var = (
            ("compiled " if compiled else "") + "kv_static",
            ("compiled " if compiled else "") + "pipelined_static",
        )
        g = _gain(df, base, var)
        oks.append(g is not None and g["real"] and g["gain_pct"] > 0)
        parts.append(f"{'compiled' if compiled else 'eager'}: pipelined vs sync {_fmt_gain(g)}")
    return _row(7, "pipelining", article, "; ".join(parts), _combine(*oks), criterion)


def _sweep_gains(df: pd.DataFrame, compiled: bool) -> pd.DataFrame:
    rows = []
    prefix = "compiled " if compiled else ""
    for b, group in _ok(df, compiled=compiled).groupby("batch_size"):
        g = _gain(group, f"{prefix}kv_static B={b}", f"{prefix}pipelined_static B={b}")
        if g is not None:
            rows.append({"batch_size": b, "compiled": compiled, **g})
    return pd.DataFrame(rows)


def sweep_gains(results_dir) -> pd.DataFrame:
    """Pipelining's gain per batch size, eager and compiled (notebook 08)."""
    df = load("08_batch_sweep", results_dir)
    return pd.concat([_sweep_gains(df, False), _sweep_gains(df, True)], ignore_index=True)


def _batch_sizes(fam: pd.DataFrame) -> str:
    return "B=" + ", ".join(str(b) for b in fam["batch_size"]) if len(fam) else "none"


def claim_8(results_dir):
    article = "pipelining's gain is largest (11.6%) at the smallest batch and shrinks as B grows"
    criterion = "largest gain at the smallest batch and the gain at the largest batch below it; per family"
    try:
        g = sweep_gains(results_dir)
    except FileNotFoundError:
        return _row(8, "batch-size sweep", article, UNMEASURED, UNMEASURED, criterion)
    parts, oks = [], []
    for compiled, fam in g.groupby("compiled"):
        fam = fam.sort_values("batch_size")
        best = fam.loc[fam["gain_pct"].idxmax()]
        oks.append(best["batch_size"] == fam["batch_size"].min() and fam["gain_pct"].iloc[-1] < best["gain_pct"])
        real = fam[fam["real"].astype(bool)]
        parts.append(
            f"{'compiled' if compiled else 'eager'}: B={fam['batch_size'].iloc[0]} {_fmt_gain(fam.iloc[0])}; "
            f"largest median gain at B={best['batch_size']}, {_fmt_gain(best)}; of {len(fam)} batch sizes, "
            f"gains that clear the spread: {_batch_sizes(real[real['gain_pct'] > 0])}, "
            f"losses that clear it: {_batch_sizes(real[real['gain_pct'] < 0])}"
        )
    if not parts:
        return _row(8, "batch-size sweep", article, UNMEASURED, UNMEASURED, criterion)
    return _row(8, "batch-size sweep", article, "; ".join(parts), _combine(*oks), criterion)


def claim_9(results_dir):
    article = "streams cost something: the no-EOS-check generator is still faster than the pipelined one"
    criterion = "no-check faster than pipelined, clearing the spread, eager and compiled"
    try:
        df = _ok(load("07_pipelining", results_dir))
    except FileNotFoundError:
        return _row(9, "overhead of streams", article, UNMEASURED, UNMEASURED, criterion)
    parts, oks = [], []
    for prefix in ("", "compiled "):
        g = _gain(df, f"{prefix}pipelined_static", f"{prefix}kv_static_no_check")
        oks.append(g is not None and g["real"] and g["gain_pct"] > 0)
        parts.append(f"{prefix or 'eager '}no-check vs pipelined {_fmt_gain(g)}")
    return _row(9, "overhead of streams", article, "; ".join(parts), _combine(*oks), criterion)


def summary_results(results_dir) -> pd.DataFrame:
    """Notebook 07's interleaved run of every article generator (B=32, N=100), fastest first,
    with the speed-up over the naive generator of the same run (notebook 09, README)."""
    df = _ok(load("07_pipelining", results_dir))
    naive = df.set_index("variant").loc["naive", "median_ms"]
    return df.assign(speedup_vs_naive=naive / df["median_ms"]).sort_values("median_ms", ignore_index=True)


def claim_10(results_dir):
    article = "best of the article (compile + static cache + pipelining) ≈ 5× the naive baseline"
    criterion = "speed-up ≥ 4× reproduced, ≥ 2.5× partly (B=32, N=100, one interleaved run)"
    try:
        df = summary_results(results_dir).set_index("variant")
        speedup = df.loc["compiled pipelined_static", "speedup_vs_naive"]
    except (FileNotFoundError, KeyError):
        return _row(10, "summary", article, UNMEASURED, UNMEASURED, criterion)
    ranked = df.index.tolist()
    place = ranked.index("compiled pipelined_static") + 1
    measured = f"×{speedup:.1f} over naive; ranked {place} of {len(ranked)} variants (fastest: {ranked[0]})"
    verdict = REPRODUCED if speedup >= 4 else PARTLY if speedup >= 2.5 else NOT
    return _row(10, "summary", article, measured, verdict, criterion)


CLAIMS = [claim_1, claim_2, claim_3, claim_4, claim_5, claim_6, claim_7, claim_8, claim_9, claim_10]


def claims_table(results_dir: str | Path) -> pd.DataFrame:
    """All ten claims; a claim whose data is broken says so instead of stopping the table."""
    rows = []
    for i, claim in enumerate(CLAIMS, 1):
        try:
            rows.append(claim(results_dir))
        except Exception as err:  # noqa: BLE001 - one unreadable table must not hide the other nine
            rows.append(_row(i, claim.__name__, "", f"could not evaluate: {type(err).__name__}: {err}", UNMEASURED, ""))
    return pd.DataFrame(rows)


def claim(n: int, results_dir: str | Path) -> dict:
    """Claim n (1-10) as a dict, for the notebook that measures it."""
    return CLAIMS[n - 1](results_dir)
