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


def _window_rows(profile: pd.DataFrame, compiled: bool, other: str):
    """Per profiled window that holds both, the synchronous generator's row and `other`'s."""
    sync, them = label("kv_static", compiled=compiled), label(other, compiled=compiled)
    windows = [g for _, g in profile.groupby("window")] if "window" in profile else [profile]
    for w in windows:
        rows = w.drop_duplicates("variant").set_index("variant")
        if sync in rows.index and them in rows.index:
            yield rows.loc[sync], rows.loc[them]


def window_gaps(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check"):
    """Per profiled window, the idle gap (µs) with the sync and with `other` (no stop check, or
    "pipelined_static") as (sync, other) pairs (notebook 06_eos_sync_profile)."""
    return [(float(a["idle_gap_median_us"]), float(b["idle_gap_median_us"])) for a, b in
            _window_rows(profile, compiled, other)]  # fmt: skip


MIN_GAP_US = 20  # a gap before a step below this is launch spacing, nothing to explain


def sync_opens_gap(sync_us: float, no_check_us: float) -> bool | None:
    """Claim 6's one test, also notebook 06's: the gap with the sync is at least MIN_GAP_US and the
    generator without any stop check leaves at most half of it; None where either is NaN
    (notebook 06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(no_check_us)):
        return None
    return bool(sync_us >= MIN_GAP_US and no_check_us <= 0.5 * sync_us)


def overheads_alike(a, b) -> bool | None:
    """Whether the profiler slowed two variants of one window alike, so that their idle gaps can be
    set side by side: their profiler overheads (%) differ by no more than the larger of their plain
    runs' spreads (slowest less fastest, as a share of their median); None where an overhead or a
    spread was not recorded (notebook 06_eos_sync_profile)."""
    try:
        spreads = [100 * (r["unprofiled_max_us"] - r["unprofiled_min_us"]) / r["unprofiled_step_us"] for r in (a, b)]
        apart = abs(float(a["profiler_overhead_pct"]) - float(b["profiler_overhead_pct"]))
    except KeyError:
        return None
    if not all(math.isfinite(float(x)) for x in (*spreads, apart)):
        return None
    return bool(apart <= max(spreads))


def cause_windows(profile: pd.DataFrame, compiled: bool = False) -> list[tuple[float, float, bool | None]]:
    """Per profiled window that holds both, the idle gap (µs) with the sync and with no stop check,
    and whether the profiler slowed the two alike (`overheads_alike`) (notebook 06_eos_sync_profile)."""
    return [(float(a["idle_gap_median_us"]), float(b["idle_gap_median_us"]), overheads_alike(a, b))
            for a, b in _window_rows(profile, compiled, "kv_static_no_check")]  # fmt: skip


def cause_test(profile: pd.DataFrame, compiled: bool = False) -> dict:
    """Notebook 06_eos_sync_profile's test of the sync's cause (`sync_opens_gap`), judged only in the
    windows whose two gaps are comparable (`cause_windows`; a window whose overheads were not
    recorded is judged, unchecked): `sync_causes` (`agreed` over them), how many were judged
    (`windows`) and found it opening (`windows_opening`), how many windows measured both gaps
    (`windows_profiled`), whether every one's overheads were recorded (`overheads_checked`), and
    the two gaps' medians over the judged windows. Claim 6 reads the same windows."""
    measured = [(s, n, c) for s, n, c in cause_windows(profile, compiled) if sync_opens_gap(s, n) is not None]
    judged = [(s, n) for s, n, c in measured if c is not False]
    tests = [sync_opens_gap(s, n) for s, n in judged]
    syncs, nones = pd.Series([s for s, _ in judged], dtype=float), pd.Series([n for _, n in judged], dtype=float)
    return {"sync_causes": agreed(tests), "windows": len(judged), "windows_opening": sum(tests),
            "windows_profiled": len(measured), "overheads_checked": all(c is not None for *_, c in measured),
            "compared_sync_us": float(syncs.median()), "compared_no_check_us": float(nones.median())}  # fmt: skip


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
    out["GPU operations per step (kernels, copies, memsets)"] = summary["kernels_per_step"].to_numpy()
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
    whether the sync opens it in every window whose two gaps are comparable (`sync_causes` and the
    columns of `cause_test`), and whether pipelining makes it larger, smaller or the same in every
    window at the 0.1 µs shown (`change`, "split" where windows disagree; `windows_larger` counts the
    windows where it is larger) (notebook 06_eos_sync_profile)."""
    columns = ["model", "sync_us", "no_check_us", "pipelined_us", "idle_share", "closes", "sync_causes", "change",
               "windows", "windows_opening", "windows_closing", "windows_pipelined", "windows_larger",
               "windows_profiled", "overheads_checked", "compared_sync_us", "compared_no_check_us"]  # fmt: skip
    if "idle_gap_median_us" not in summary:  # a profile without GPU kernels (a CPU run) has no gaps
        return pd.DataFrame(columns=columns)
    s, rows = profile_windows(summary).set_index("variant"), []
    for compiled in (False, True):
        sync, piped = label("kv_static", compiled=compiled), label("pipelined_static", compiled=compiled)
        none = label("kv_static_no_check", compiled=compiled)
        if sync in s.index and piped in s.index:
            a, b = s.at[sync, "idle_gap_median_us"], s.at[piped, "idle_gap_median_us"]
            n = s.at[none, "idle_gap_median_us"] if none in s.index else float("nan")
            cause = cause_test(summary, compiled)  # judged in the windows whose two gaps are comparable
            piped_gaps = window_gaps(summary, compiled, "pipelined_static")
            closes = [c for c in (closes_gap(x, y) for x, y in piped_gaps) if c is not None]
            shown = [round(y, 1) - round(x, 1) for x, y in piped_gaps if x == x and y == y]  # at the digits shown
            changes = ["larger" if d > 0 else "smaller" if d < 0 else "same" for d in shown]
            rows.append(
                {"model": "compiled" if compiled else "eager", "sync_us": a, "no_check_us": n, "pipelined_us": b,
                 "idle_share": s.at[sync, "gpu_idle_fraction"], "closes": agreed(closes),
                 "change": agreed(changes) or "same", "windows_closing": sum(closes),
                 "windows_pipelined": len(closes), "windows_larger": changes.count("larger")} | cause
            )  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _pipelining_does(gap) -> str:
    if gap["closes"] == "split":
        n, of = int(gap["windows_closing"]), int(gap["windows_pipelined"])
        return f"pipelining closes at least half of that gap in {n} of {of} windows, not in the others: not decided"
    if gap["closes"]:
        return "pipelining closes at least half of that gap"
    of = int(gap.get("windows_pipelined", 1) or 1)
    every = " in every window" if of > 1 else ""  # `change` is per window, as `closes` is
    if gap["change"] == "split":
        larger = int(gap["windows_larger"])
        return f"the windows split on whether pipelining makes it larger: larger in {larger} of {of} windows"
    return {"larger": f"pipelining makes it larger{every}", "smaller": f"pipelining narrows it{every}, but not by half"
            }.get(gap["change"], "pipelining does not close it")  # fmt: skip


def _measured_cause(gap) -> bool:
    return gap.get("sync_causes") is not None and gap["sync_causes"] == gap["sync_causes"]


def _profiled_cause(gap) -> bool:
    """Whether some window profiled the generator without any stop check beside the synchronous one."""
    return _measured_cause(gap) or gap.get("windows_profiled", 0) > 0


def _shown_larger(a: float, b: float) -> bool:
    return round(a, 1) > round(b, 1)  # the sentences say what their digits show


def _cause(gap) -> str:
    """`gap_takeaway`'s clause on the sync's cause: which windows it is judged in, and what they say."""
    judged, of = int(gap["windows"]), int(gap.get("windows_profiled", gap["windows"]))
    left, checked = of - judged, bool(gap.get("overheads_checked", False))
    if judged == 0:
        every = f"in each of the {of} windows" if of > 1 else "in its one window"
        return (f"{every} the two generators' profiler overheads differ by more than their plain runs' spread, so "
                "their gaps are not comparable and whether the sync opens the gap is not judged")  # fmt: skip
    sync, none = gap.get("compared_sync_us", gap["sync_us"]), gap.get("compared_no_check_us", gap["no_check_us"])
    where = ""
    if not checked:  # a table written before they were recorded
        where = ("the plain runs' spread or the profiler's overhead was not recorded, so whether the profiler slowed "
                 "the two generators alike is not checked; ")  # fmt: skip
    if left:
        other = f"the other {judged}" if judged > 1 else "the other one"
        gaps = f"{sync:.1f} µs with the sync, {none:.1f} µs with no stop check"
        where += (f"in {left} of the {of} windows the two generators' profiler overheads differ by more than their "
                  f"plain runs' spread, so their gaps are not comparable there; in {other} "
                  f"({'medians ' if judged > 1 else ''}{gaps}) ")  # fmt: skip
    if gap["sync_causes"] == "split":
        which = "profiled" if not left else "compared"
        return (f"{where}the {judged} {which} windows disagree: most of that gap goes without any stop check in "
                f"{int(gap['windows_opening'])} of them, so whether the sync opens it is not decided")  # fmt: skip
    if gap["sync_causes"]:
        return f"{where}without any stop check most of that gap goes: the sync opens most of it"
    if _shown_larger(none, sync):
        return f"{where}the gap is larger without any stop check than with the sync: the sync does not open most of it"
    return f"{where}most of that gap stays without any stop check: the sync does not open most of it"


def gap_takeaway(gap) -> str:
    """One model's row of `idle_gaps` in a sentence (notebook 06_eos_sync_profile). Where the
    generator without any stop check was profiled, the sync's share of the gap is read from it,
    only in the windows where the profiler slowed the two generators alike (`cause_test`: a
    window where their profiler overheads differ by more than their plain runs' spread compares
    gaps inflated unequally); else from pipelining (which hides the sync but also adds a stream)."""
    head = f"{gap['model'].capitalize()}: the GPU idles {gap['idle_share']:.0%} of the window; "
    head += "the gap before a step is "
    if _profiled_cause(gap):
        every = int(gap.get("windows", 1)) == int(gap.get("windows_profiled", 1))  # else the judged clause says it
        larger = " (larger than with the sync)" if every and _shown_larger(gap["no_check_us"], gap["sync_us"]) else ""
        windows = int(gap.get("windows_profiled", 1))
        over = f" (medians over {windows} profiled windows)" if windows > 1 else ""
        return (f"{head}{gap['sync_us']:.1f} µs with the sync, {gap['no_check_us']:.1f} µs with no stop check at all"
                f"{larger} and {gap['pipelined_us']:.1f} µs pipelined{over}: {_cause(gap)}; "
                f"{_pipelining_does(gap)}.")  # fmt: skip
    unmeasured = "the generator without any stop check was not profiled, so the sync's share is not measured here"
    return (f"{head}{gap['sync_us']:.1f} µs with the sync and {gap['pipelined_us']:.1f} µs pipelined: "
            f"{_pipelining_does(gap)}; {unmeasured}.")  # fmt: skip


def gap_summary(gaps: pd.DataFrame) -> str:
    """The summary bullet on the sync's gap, read from the same test as `gap_takeaway`
    (notebook 06_eos_sync_profile)."""
    text = "The per-step `.item()` makes the CPU wait for the GPU at every step boundary"
    records = gaps.to_dict("records")
    if records and all(_profiled_cause(g) for g in records):

        def models(test) -> str:
            return " and ".join(g["model"] for g in records if test(g["sync_causes"]) and _measured_cause(g))

        unjudged = " and ".join(g["model"] for g in records if not _measured_cause(g))
        split, opens = models(lambda c: c == "split"), models(lambda c: c is True)
        stays = models(lambda c: c is False)
        if unjudged:
            text += (f"; {unjudged}, the profiler slowed the two generators unequally in every window, so whether the "
                     "sync opens that gap is not judged (see the takeaways)")  # fmt: skip
        if split:
            text += (f"; {split}, the windows it is judged in disagree on whether the sync opens that gap "
                     "(see the takeaways)")  # fmt: skip
        if opens:
            text += f"; {opens}, the idle gap before a step mostly goes without any stop check: "
            text += "the sync opens most of it"
        if stays:
            text += (f"; {stays}, most of that gap stays without any stop check: the sync does not open most of it "
                     "(see the takeaways above for each model's gaps and the windows compared)")  # fmt: skip
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
