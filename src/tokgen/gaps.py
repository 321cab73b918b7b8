"""Notebook 06's idle gap before a step, from its profile: the gaps with the sync, with no stop check and
pipelined, whether the sync opens them, and the tables and sentences notebooks 06 and 07 say them in.

Introduced in notebook 06_eos_sync_profile. Claims 6 and 7 (`tokgen.claims`) read the same gaps
with the same test (`sync_opens_gap`).
"""

import math

import pandas as pd

from .registry import label
from .results import other_runs, this_run_text
from .stats import shared_rounds
from .voice import HOST_BOUND, shared_rounds_text, table


def profile_windows(profile: pd.DataFrame) -> pd.DataFrame:
    """Notebook 06's profile, a row per variant: the median over its `window`s, and how many
    (notebook 06_eos_sync_profile)."""
    if "window" not in profile or profile.empty:
        return profile.assign(windows=1)
    groups = profile.groupby("variant", sort=False)
    out = groups.first()
    medians = groups.median(numeric_only=True)
    out[medians.columns] = medians
    return out.assign(windows=groups.size()).reset_index()


def window_gaps(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check"):
    """Per profiled window, the idle gap (µs) with the sync and with `other` (no stop check, or
    "pipelined_static") as (sync, other) pairs (notebook 06_eos_sync_profile)."""
    sync, none = label("kv_static", compiled=compiled), label(other, compiled=compiled)
    windows = [g for _, g in profile.groupby("window")] if "window" in profile else [profile]
    pairs = []
    for w in windows:
        gap = w.set_index("variant")["idle_gap_median_us"]
        if sync in gap.index and none in gap.index:
            pairs.append((float(gap[sync]), float(gap[none])))
    return pairs


MIN_GAP_US = 20  # a gap before a step below this is launch spacing, nothing to explain


def sync_opens_gap(sync_us: float, no_check_us: float) -> bool | None:
    """Claim 6's one test, also notebook 06's: the gap with the sync is at least MIN_GAP_US and the
    generator without any stop check leaves at most half of it; None where either is NaN
    (notebook 06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(no_check_us)):
        return None
    return bool(sync_us >= MIN_GAP_US and no_check_us <= 0.5 * sync_us)


def closes_gap(sync_us: float, pipelined_us: float) -> bool | None:
    """Claim 7's test of the gap, also notebook 06's: pipelined leaves at most half the gap with the
    sync; None where either is NaN (notebook 06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(pipelined_us)):
        return None
    return bool(pipelined_us <= 0.5 * sync_us)


def agreed(tests: list) -> bool | str | None:
    """One test over the profiled windows: its answer where every window that measured it agrees,
    "split" where they disagree, None where none measured it (notebook 06_eos_sync_profile)."""
    measured = [t for t in tests if t is not None]
    return None if not measured else measured[0] if len(set(measured)) == 1 else "split"


def profile_table(summary: pd.DataFrame) -> str:
    """Notebook 06's profile, a row per variant and window (notebook 06_eos_sync_profile)."""
    plain = [f"{m:,.0f} ({lo:,.0f}–{hi:,.0f})" for m, lo, hi in
             summary[["unprofiled_step_us", "unprofiled_min_us", "unprofiled_max_us"]].to_numpy()]  # fmt: skip
    out = pd.DataFrame({"variant": summary["variant"].to_numpy()})
    if "window" in summary:  # several profiled windows: one row each, in the order they ran
        out["window"] = summary["window"].to_numpy()
    out["idle gap before a step, µs (median)"] = summary["idle_gap_median_us"].to_numpy()
    out["GPU busy per step, µs"] = summary["gpu_busy_per_step_us"].to_numpy()
    out["step, µs (profiled)"] = summary["step_period_us"].to_numpy()
    out["step, µs (unprofiled: median (fastest–slowest) of the plain runs)"] = plain
    out["profiler overhead, %"] = summary["profiler_overhead_pct"].to_numpy()
    out["GPU idle share of the window"] = summary["gpu_idle_fraction"].to_numpy()
    out["kernels per step"] = summary["kernels_per_step"].to_numpy()
    out["streams"] = summary["streams"].to_numpy()
    return table(out, digits={c: 2 if c == "GPU idle share of the window" else 0 for c in out})


def profiler_overhead(summary: pd.DataFrame) -> str:
    """Per variant, the profiler's overhead per step over the windows, beside the spread of the plain
    runs it is read against (notebook 06_eos_sync_profile)."""
    runs, windows = int(summary["unprofiled_runs"].iloc[0]), int(summary.groupby("variant").size().max())
    spread_pct = 100 * (summary["unprofiled_max_us"] - summary["unprofiled_min_us"]) / summary["unprofiled_step_us"]
    parts = []
    for v, g in summary.assign(spread_pct=spread_pct).groupby("variant", sort=False):
        lo, hi = g["profiler_overhead_pct"].min(), g["profiler_overhead_pct"].max()
        over = f"{lo:+.0f}%" if f"{lo:+.0f}" == f"{hi:+.0f}" else f"{lo:+.0f}% to {hi:+.0f}%"
        parts.append(f"`{v}` {over}, its plain runs spread up to {g['spread_pct'].max():.0f}%")
    return (f"Profiler overhead per step, the profiled step against the median of the {runs} plain runs of its "
            f"window, lowest to highest over {windows} window{'s' if windows > 1 else ''} (the plain runs' spread: "
            f"slowest less fastest, as a share of their median): {'; '.join(parts)}. The idle gaps above were "
            "measured with the profiler running.")  # fmt: skip


def idle_gaps(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model, from notebook 06's profile: the idle gap before a step with the sync, with no stop
    check (NaN where not profiled) and pipelined (medians over the windows); whether pipelining closes
    at least half of it in every window (`closes`: `closes_gap`, "split" where windows disagree),
    whether the sync opens it in every window (`sync_causes`: `sync_opens_gap`, likewise), and
    `change` at the 0.1 µs shown (notebook 06_eos_sync_profile)."""
    columns = ["model", "sync_us", "no_check_us", "pipelined_us", "idle_share", "closes", "sync_causes", "change",
               "windows", "windows_opening", "windows_closing", "windows_pipelined"]  # fmt: skip
    if "idle_gap_median_us" not in summary:  # a profile without GPU kernels (a CPU run) has no gaps
        return pd.DataFrame(columns=columns)
    s, rows = profile_windows(summary).set_index("variant"), []
    for compiled in (False, True):
        sync, piped = label("kv_static", compiled=compiled), label("pipelined_static", compiled=compiled)
        none = label("kv_static_no_check", compiled=compiled)
        if sync in s.index and piped in s.index:
            a, b = s.at[sync, "idle_gap_median_us"], s.at[piped, "idle_gap_median_us"]
            n = s.at[none, "idle_gap_median_us"] if none in s.index else float("nan")
            causes = [c for c in (sync_opens_gap(x, y) for x, y in window_gaps(summary, compiled)) if c is not None]
            closes = [c for c in (closes_gap(x, y) for x, y in window_gaps(summary, compiled, "pipelined_static"))
                      if c is not None]  # fmt: skip
            shown = round(b, 1) - round(a, 1)  # the sentences say what their digits show
            rows.append(
                {"model": "compiled" if compiled else "eager", "sync_us": a, "no_check_us": n, "pipelined_us": b,
                 "idle_share": s.at[sync, "gpu_idle_fraction"], "closes": agreed(closes),
                 "sync_causes": agreed(causes), "change": "larger" if shown > 0 else "smaller" if shown < 0 else "same",
                 "windows": len(causes), "windows_opening": sum(causes), "windows_closing": sum(closes),
                 "windows_pipelined": len(closes)}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _pipelining_does(gap) -> str:
    if gap["closes"] == "split":
        n, of = int(gap["windows_closing"]), int(gap["windows_pipelined"])
        return f"pipelining closes at least half of that gap in {n} of {of} windows, not in the others: not decided"
    if gap["closes"]:
        return "pipelining closes at least half of that gap"
    return {"larger": "pipelining makes it larger", "smaller": "pipelining narrows it, but not by half"}.get(
        gap["change"], "pipelining does not close it")


def _measured_cause(gap) -> bool:
    return gap.get("sync_causes") is not None and gap["sync_causes"] == gap["sync_causes"]


def gap_takeaway(gap) -> str:
    """One model's row of `idle_gaps` in a sentence (notebook 06_eos_sync_profile). Where the
    generator without any stop check was profiled, the sync's share of the gap is read from it;
    else from pipelining (which hides the sync but also adds a stream)."""
    head = f"{gap['model'].capitalize()}: the GPU idles {gap['idle_share']:.0%} of the window; "
    head += "the gap before a step is "
    if _measured_cause(gap):
        if gap["sync_causes"] == "split":
            cause = (f"the {gap['windows']} profiled windows disagree: most of that gap goes without any stop check in "
                     f"{gap['windows_opening']} of them, so whether the sync opens it is not decided")  # fmt: skip
        else:
            opens = "without any stop check most of that gap goes: the sync opens most of it"
            stays = "most of that gap stays without any stop check, so the sync is not what opens it"
            cause = opens if gap["sync_causes"] else stays
        over = f" (medians over {gap['windows']} profiled windows)" if gap.get("windows", 1) > 1 else ""
        return (f"{head}{gap['sync_us']:.1f} µs with the sync, {gap['no_check_us']:.1f} µs with no stop check at all "
                f"and {gap['pipelined_us']:.1f} µs pipelined{over}: {cause}; {_pipelining_does(gap)}.")  # fmt: skip
    unmeasured = "the generator without any stop check was not profiled, so the sync's share is not measured here"
    return (f"{head}{gap['sync_us']:.1f} µs with the sync and {gap['pipelined_us']:.1f} µs pipelined: "
            f"{_pipelining_does(gap)}; {unmeasured}.")  # fmt: skip


def gap_summary(gaps: pd.DataFrame) -> str:
    """The summary bullet on the sync's gap, read from the same test as `gap_takeaway`
    (notebook 06_eos_sync_profile)."""
    text = "The per-step `.item()` makes the CPU wait for the GPU at every step boundary"
    if not gaps.empty and all(_measured_cause(g) for g in gaps.to_dict("records")):
        opens = " and ".join(gaps[gaps["sync_causes"].map(lambda c: c is True)]["model"])
        stays = " and ".join(gaps[gaps["sync_causes"].map(lambda c: c is False)]["model"])
        split = " and ".join(gaps[gaps["sync_causes"].map(lambda c: c == "split")]["model"])
        if split:
            text += f"; {split}, the profiled windows disagree on whether the sync opens that gap (see the takeaways)"
        if opens:
            text += f"; {opens}, the idle gap before a step mostly goes without any stop check: "
            text += "the sync opens most of it"
        if stays:
            text += (f"; {stays}, most of that gap stays without any stop check: the sync is not what opens it "
                     "(see the takeaways above for each model's gaps)")  # fmt: skip
        return text + "."
    return text + (": the generator without any stop check was not profiled here, so how much of the GPU's idle "
                   "gap before a step the sync opens is not measured.")  # fmt: skip


def pipelined_gap(profile: pd.DataFrame, results: pd.DataFrame) -> str:
    """Notebook 06's idle gaps (`gap_takeaway`) beside this run's GPU share of the synchronous step
    (its GPU busy time over its median wall time, over the rounds every variant of its comparison
    ran: `tokgen.stats.shared_rounds`), where both ran in the same run (`tokgen.results.other_runs`: commit,
    GPU and slice; notebook 07_pipelining)."""
    if found := other_runs(profile):  # rows that bypassed rows_at(..., this_run=True): another run's gaps
        return (f"Notebook 06's profile in this results folder holds {found}, not this run's ({this_run_text()}): "
                "run notebook 06 here first to compare their idle gaps.")  # fmt: skip
    gaps = idle_gaps(profile)
    if gaps.empty:
        return "Notebook 06's profile holds no idle gaps here: they are measured on a GPU."
    rows = shared_rounds(results).set_index("variant")
    shares = rows["gpu_busy_share"]
    batches = rows["batch_size"] if "batch_size" in rows else pd.Series(dtype=object)
    profiled = f" (B = {int(profile['batch_size'].iloc[0])}, profiled)" if "batch_size" in profile else " (profiled)"
    sentences = []
    for gap in gaps.to_dict("records"):
        name = label("kv_static", compiled=gap["model"] == "compiled")
        share = shares.get(name, float("nan"))
        over = shared_rounds_text(rows, [name])
        at = f"B = {int(batches[name])}; " if name in batches.index else ""
        at = (f" ({at}GPU busy time from one profiled run, wall time the median of the unprofiled rounds"
              f"{f', {over}' if over else ''})")  # fmt: skip
        pace = ", so the host sets the pace" if share < HOST_BOUND else ""
        sentences.append(f"Notebook 06{profiled}. " + gap_takeaway(gap) + (
            f" In this run{at} the GPU is busy {share:.0%} of a synchronous step{pace}." if share == share else ""))
    return " ".join(sentences)
