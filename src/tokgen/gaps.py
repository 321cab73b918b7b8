"""Notebook 06's idle gap before a step, from its profile: the gaps with the sync, with no stop check and
pipelined, whether the sync opens them, and the tables and sentences notebooks 06 and 07 say them in.

Introduced in notebook 06_eos_sync_profile. Claims 6 and 7 (`tokgen.claims`) read the same gaps
with the same rule over the windows (`judged_windows`, `judged_pipelined`): each pass's time as a share of the rest
of its own step (`normalised_share`, `own_step_share`).
"""

import json
import math
import statistics

import numpy as np
import pandas as pd

from .profiling import (
    CHECK_PHASE,
    PHASES,
    SHARE_COLUMNS,
    TAIL_OPS,
    WINDOW_SKIP,
    per_step_values,
    phase_shares,
    sync_wait_row,
)
from .registry import label
from .results import other_runs, this_run_text
from .stats import ALPHA, shared_rounds
from .voice import HOST_BOUND, HOST_DRIFT, series_text, shared_rounds_text, side_of, table
from .voice import signed as with_sign

LATER = "after the later of the copy's end and the sync's start"  # when a sync's return is measured from

def profile_windows(profile: pd.DataFrame) -> pd.DataFrame:
    """Notebook 06's profile, a row per variant: the median over its `window`s, and how many
    (notebook 06_eos_sync_profile). A re-profiled window counts once, its repeat (`last_attempts`)."""
    profile = last_attempts(profile)
    if "window" not in profile or profile.empty:
        return profile.assign(windows=1)
    groups = profile.groupby("variant", sort=False)
    out = groups.first()
    medians = groups.median(numeric_only=True)
    out[medians.columns] = medians
    return out.assign(windows=groups.size()).reset_index()


def last_attempts(profile: pd.DataFrame) -> pd.DataFrame:
    """Notebook 06's profile as every analysis of it reads it (claims 6 and 7, notebook 06's tables and takeaways,
    notebook 07's gap paragraph, the quick run): per window, the rows of its last `attempt` (a window whose first
    attempt's host-speed ratio lay outside the band was profiled once more, `tokgen.bench.profile_windows` with
    `drift_recheck`: its repeat's rows; review rv21A N4), the others as they are; a table without an `attempt`
    column (recorded before re-profiles) whole (notebook 06_eos_sync_profile)."""
    if "attempt" not in profile or "window" not in profile or profile.empty:  # the committed CSVs: the fallback
        return profile  # goes after the re-run
    attempts = pd.to_numeric(profile["attempt"], errors="coerce").fillna(0)
    return profile[attempts == attempts.groupby(profile["window"]).transform("max")]


def first_attempts(profile: pd.DataFrame) -> pd.DataFrame:
    """The first attempt's rows (`attempt` 0) of the windows of notebook 06's profile that were profiled again
    (`last_attempts` reads their repeat); empty where none was, or the table has no `attempt` column (review rv21A N4;
    notebook 06_eos_sync_profile)."""
    if "attempt" not in profile or "window" not in profile:
        return profile.iloc[:0]
    attempts = pd.to_numeric(profile["attempt"], errors="coerce").fillna(0)
    again = set(profile.loc[attempts > 0, "window"])
    return profile[(attempts == 0) & profile["window"].isin(again)]


PROFILED_AS = {"kv_static": "with the sync", "kv_static_no_check": "with no stop check",
               "pipelined_static": "pipelined"}  # fmt: skip  (`over_profiled`'s words per generator)


def profiled_counts(profile: pd.DataFrame, compiled: bool = False,
                    generators=("kv_static", "kv_static_no_check")) -> dict:  # fmt: skip
    """Per generator of `generators`, how many of notebook 06's profiled windows measured its idle gap before a step
    (its finite `idle_gap_median_us` rows): the count the gaps' medians are over (review rr17b S1;
    notebook 06_eos_sync_profile)."""
    out, profile = {}, last_attempts(profile)  # a re-profiled window once, its repeat (review rv21A N4)
    for g in generators:
        rows = profile[profile["variant"] == label(g, compiled=compiled)] if "variant" in profile else profile
        gaps = rows["idle_gap_median_us"] if "idle_gap_median_us" in rows else pd.Series(dtype=float)
        out[g] = int(pd.to_numeric(gaps, errors="coerce").notna().sum())
    return out


def profiled_window_count(profile: pd.DataFrame, compiled: bool = False,
                     generators=("kv_static", "kv_static_no_check")) -> int:  # fmt: skip
    """How many windows profiled any generator of `generators` (a NaN gap counted too): what `over_profiled` sets the
    counts of `profiled_counts` against (review rr18b N1; notebook 06_eos_sync_profile)."""
    if "variant" not in profile:
        return len(profile)
    rows = profile[profile["variant"].isin([label(g, compiled=compiled) for g in generators])]
    return int(rows["window"].nunique()) if "window" in rows else min(len(rows), 1)


def over_profiled(counts: dict, windows: int | None = None, listed: bool = False) -> str:
    """The windows medians of the idle gaps are over (`profiled_counts`), the one wording claims 6 and 7 and notebook
    06's takeaways count them in: "over the 6 profiled windows", "in the one profiled window", or where a count is
    below the profiled windows (`windows`, `profiled_window_count`; or below another count), per generator: "over the
    windows that measured each (5 with the sync, 5 pipelined)"; `listed` (where it stands inside parentheses, notebook
    06's takeaways), after a colon: "over the windows that measured each: 5 with the sync, 5 pipelined" (reviews
    rr17b S1, rr18b N1, rr19b N3; notebook 06_eos_sync_profile)."""
    n = max(counts.values())
    if len(set(counts.values())) == 1 and (windows is None or n >= windows):
        return "in the one profiled window" if n == 1 else f"over the {n} profiled windows"
    each = ", ".join(f"{n} {PROFILED_AS[g]}" for g, n in counts.items())
    return f"over the windows that measured each: {each}" if listed else f"over the windows that measured each ({each})"


def _window_rows(profile: pd.DataFrame, compiled: bool, other: str):
    """Per profiled window that holds both, the synchronous generator's row and `other`'s."""
    sync, them = label("kv_static", compiled=compiled), label(other, compiled=compiled)
    profile = last_attempts(profile)  # a re-profiled window's repeat (review rv21A N4)
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
ARTICLE_GAP_US = 110  # the article's idle gap between steps on its L40S


def within_size(gap_us: float) -> bool:
    """Claim 6's size, also notebook 06's summary's: the idle gap before a step with the sync within ×2 of the
    article's ~ARTICLE_GAP_US µs (55–220 µs), in one window (notebook 06_eos_sync_profile)."""
    return ARTICLE_GAP_US / 2 <= gap_us <= 2 * ARTICLE_GAP_US


def size_text(gaps: list, windows: list) -> str:
    """The gaps with the sync in the judged windows against the article's ~110 µs by claim 6's rule (`within_size`):
    "294, 183 and 197 µs in windows 2–4, within 55–220 µs in 2 of the 3 (windows 3 and 4)"; "" where none is judged
    (reviews rvA16 S2, rr17b N2; notebook 06_eos_sync_profile)."""
    if not gaps:
        return ""
    held = [w for g, w in zip(gaps, windows) if within_size(g)]
    which = f" ({windows_named(held)})" if 0 < len(held) < len(gaps) else ""
    of = "the one" if len(gaps) == 1 else f"the {len(gaps)}"
    low, high = ARTICLE_GAP_US / 2, 2 * ARTICLE_GAP_US
    return (f"{series_text([f'{g:.0f}' for g in gaps])} µs in {windows_named(windows)}, within {low:g}–{high:g} µs in "
            f"{len(held)} of {of}{which}")  # fmt: skip


def size_sentence(gaps: pd.DataFrame) -> str:
    """Notebook 06's summary's size: per model of `idle_gaps`, the gap before a step with the sync in each judged
    window against the article's ~110 µs, by claim 6's rule (its row's `size`, `size_text`); "" where no model has a
    judged window (review rvA16 S2; notebook 06_eos_sync_profile)."""
    said = [f"{g['model']} {g['size']}" for g in gaps.to_dict("records")
            if isinstance(g.get("size"), str) and g["size"]]  # fmt: skip
    if not said:
        return ""
    low, high = ARTICLE_GAP_US / 2, 2 * ARTICLE_GAP_US
    return (f"Claim 6's size, the gap before a step with the sync (from its last GPU operation) within ×2 of the "
            f"article's ~{ARTICLE_GAP_US} µs, {low:g}–{high:g} µs, in each judged window: {'; '.join(said)}.")


SHARE_LEVEL = ALPHA  # a share interval (`share_interval`, `pooled_share_interval`) is a 1 − ALPHA (95%) bootstrap
# interval, the level of the repo's other intervals (review rr20g N3)
RESAMPLES = 2000  # `share_interval`'s bootstrap resamples, drawn from a fixed seed (SHARE_SEED): the same table, the
SHARE_SEED = 0  # same interval
NO_INTERVAL = "no within-window interval recorded"  # a table without the per-step values (`share_interval`: None)
TOO_FEW = "too few steps for an interval"  # `share_interval` where a pass recorded fewer than 2 steps (rr20g N5)


class _Undecided:
    """A window test's third answer (review rr20g M2): neither a pass nor a fail, so reading it as a truth value
    raises rather than passing: `sync_opens_gap`, `closes_gap` and `pooled_verdict` return True, False, None (not
    measured), "split" or this one object, UNDECIDED_WINDOW."""

    def __bool__(self):
        raise TypeError("an undecided share is neither a pass nor a fail: compare it with `is UNDECIDED_WINDOW`")

    def __eq__(self, other) -> bool:
        return isinstance(other, _Undecided)

    def __hash__(self) -> int:
        return hash("undecided")

    def __repr__(self) -> str:
        return "undecided"


UNDECIDED_WINDOW = _Undecided()  # a share whose interval holds 0.5 (`decide_on`; reviews rv19A S2, rr20g S1)
# `pooled_verdict` where the pooled interval with the host-speed ratio fixed at 1 (the raw shares) and the corrected one
# decide differently: the cause is decided by a correction whose premise is not validated (review rv20A M1)
CORRECTION_DECIDES = "inconclusive (the host-speed correction decides)"
OPEN = ("split", UNDECIDED_WINDOW, CORRECTION_DECIDES)  # `pooled_verdict`'s answers that leave the test open


def _resampled_shares(rng, sync_steps, other_steps, shape: tuple, ratio: float = float("nan"),
                      periods: tuple | None = None) -> np.ndarray:  # fmt: skip
    """Bootstrap shares of one window, `shape` of them: each pass's steps resampled with replacement on their own
    (the sync's draws first), the share median(other) / median(sync) times the host-speed ratio: with `periods`
    (the two passes' `step_period_us`, sync then other) re-derived from the resampled medians,
    (P_s − m_s) / (P_o − m_o) (review rr20g N1); else `ratio` held fixed (1 where NaN)."""
    a, b = np.asarray(sync_steps, dtype=float), np.asarray(other_steps, dtype=float)
    sync = np.median(rng.choice(a, size=(*shape, len(a))), axis=-1)
    other = np.median(rng.choice(b, size=(*shape, len(b))), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(sync > 0, other / sync, np.inf)
        if periods is not None and all(math.isfinite(p) for p in periods):
            return shares * (periods[0] - sync) / (periods[1] - other)
    return shares * (ratio if math.isfinite(ratio) else 1.0)


def share_interval(sync_steps, other_steps, ratio: float = float("nan"), level: float = SHARE_LEVEL,
                   resamples: int = RESAMPLES, seed: int = SHARE_SEED, periods: tuple | None = None):  # fmt: skip
    """A 1 − `level` interval of one window's share, median(other) / median(sync) times the window's host-speed
    ratio (`normalised_share`; the raw share where it is NaN), from the per-step values of the two passes'
    statistics (`Timeline.summary`'s `*_steps_us`, `tokgen.profiling.per_step_values`): a percentile bootstrap,
    each pass's steps resampled with replacement on their own (the two passes ran apart), `resamples` times from
    `seed` (`_resampled_shares`); with `periods` (the passes' step periods, `window_periods`) the ratio re-derived
    in each resample from the resampled medians (review rr20g N1), else `ratio` held fixed. None where either
    pass's values were not recorded (a table recorded before them: NO_INTERVAL); TOO_FEW where either holds fewer
    than 2 (reviews rv19A S2, rr20g N5; notebook 06_eos_sync_profile)."""
    if sync_steps is None or other_steps is None:
        return None
    if len(sync_steps) < 2 or len(other_steps) < 2:
        return TOO_FEW
    shares = _resampled_shares(np.random.default_rng(seed), sync_steps, other_steps, (resamples,), ratio, periods)
    lo, hi = np.quantile(shares, [level / 2, 1 - level / 2])
    return float(lo), float(hi)


def pooled_share_interval(steps: list, ratios: list, periods: list | None = None, level: float = SHARE_LEVEL,
                          resamples: int = RESAMPLES, seed: int = SHARE_SEED) -> tuple | None:  # fmt: skip
    """Claims 6 and 7's one interval of the share over the judged windows (review rr20g S1): a two-level percentile
    bootstrap at 1 − `level`: each resample draws the windows with replacement (`rng.integers`, first), then, for
    each drawn window, its two passes' steps apart (`_resampled_shares`, window by window in order, each draw its
    own), and takes the median over the drawn windows of their shares. `steps`: per window (sync, other) per-step
    lists (`window_steps`), `ratios` its host-speed ratios, `periods` its passes' step periods (`window_periods`:
    the ratio re-derived per resample) or None. None where no window is given or some window's values are missing
    or fewer than 2 (notebook 06_eos_sync_profile)."""
    if not steps or any(a is None or b is None or len(a) < 2 or len(b) < 2 for a, b in steps):
        return None
    rng, n = np.random.default_rng(seed), len(steps)
    drawn = rng.integers(0, n, size=(resamples, n))
    shares = np.empty((resamples, n))
    for w, (a, b) in enumerate(steps):
        mine = _resampled_shares(rng, a, b, (resamples, n), ratios[w], periods[w] if periods else None)
        shares[drawn == w] = mine[drawn == w]
    lo, hi = np.quantile(np.median(shares, axis=1), [level / 2, 1 - level / 2])
    return float(lo), float(hi)


# what the host-speed ratio inside the judged share rests on (review rv20A S6): `pooled_rule`'s words
ONE_PASS = ("the ratio re-derived from the two passes' step periods (one pass each), so it has no interval of its "
            "own")  # fmt: skip


def pooled_rule(ratio: str) -> str:
    """Claims 6 and 7's criterion's words for `pooled_verdict` (review rr20g S1, S2); `ratio` says how the host-speed
    ratio enters each resample, ONE_PASS what it rests on: one pass's step period each (review rv20A S6);
    notebook 06_eos_sync_profile."""
    return (f"the share decided on one {1 - SHARE_LEVEL:.0%} interval pooled over the judged windows (a two-level "
            f"bootstrap: the windows resampled, then each pass's steps within each window apart, {ratio}; "
            f"{ONE_PASS}; the share the median over the windows): at most half where it lies wholly below 0.5, more "
            "than half where wholly above, undecided where it holds 0.5, and undecided (split) where some window's own "
            "interval lies wholly on the other side; the pooled interval also made with the host-speed ratio fixed at "
            "1 (the raw shares), and where the two decide differently, inconclusive (the host-speed correction "
            "decides), both intervals printed; each window's share and interval described; a table without per-step "
            "values judged window by window on the shares alone")  # fmt: skip


def _is_interval(interval) -> bool:
    """Whether `share_interval` gave an interval (not None: NO_INTERVAL, nor TOO_FEW)."""
    return isinstance(interval, tuple)


def _holds_half(interval) -> bool:
    """Whether a share interval (`share_interval`) holds the rules' 0.5; False where none was made."""
    return _is_interval(interval) and interval[0] <= 0.5 <= interval[1]


def decide_on(interval) -> bool | _Undecided:
    """The "at most half" test on a share's interval (review rr20g N2): True where it lies wholly at or below 0.5
    (hi < 0.5), False wholly above (lo > 0.5), else UNDECIDED_WINDOW (notebook 06_eos_sync_profile)."""
    return True if interval[1] < 0.5 else False if interval[0] > 0.5 else UNDECIDED_WINDOW


def sync_opens_gap(sync_us: float, no_check_us: float, ratio: float = float("nan"),
                   interval=None) -> bool | _Undecided | None:  # fmt: skip
    """Claim 6's one window test, also notebook 06's: the gap with the sync is at least MIN_GAP_US and the generator
    without any stop check leaves at most half of it, each pass's time as a share of the rest of its own step (the
    raw share times the window's host-speed ratio `ratio`, `normalised_share`; the raw share where the ratio is NaN);
    None where either time is NaN (review rr17c S1); where the time with the sync reaches the floor and the window's
    share interval (`share_interval`, `interval`) was made, decided on it (`decide_on`: UNDECIDED_WINDOW where it
    holds 0.5; reviews rv19A S2, rr20g N2); with none (NO_INTERVAL, TOO_FEW) the share alone decides (notebook
    06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(no_check_us)):
        return None
    if sync_us < MIN_GAP_US:
        return False
    if _is_interval(interval):
        return decide_on(interval)
    r = ratio if math.isfinite(ratio) else 1.0
    return bool(no_check_us * r <= 0.5 * sync_us)


def closes_gap(sync_us: float, pipelined_us: float, ratio: float = float("nan"),
               interval=None) -> bool | _Undecided | None:  # fmt: skip
    """Claim 7's window test of the gap, also notebook 06's (PIPELINING_CLOSES): pipelined leaves at most half the gap
    with the sync, each pass's idle gap as a share of the rest of its own step (`normalised_share`, with the window's
    host-speed ratio `ratio`; the raw share where it is NaN); None where either gap is NaN (review rr17c S1); decided
    on the window's share interval (`share_interval`, `interval`) where one was made (`decide_on`: reviews rv19A S2,
    rr20g N2) (notebook 06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(pipelined_us)):
        return None
    if _is_interval(interval):
        return decide_on(interval)
    r = ratio if math.isfinite(ratio) else 1.0
    return bool(pipelined_us * r <= 0.5 * sync_us)


def agreed(tests: list):
    """One test over the profiled windows, each window's test alone (a table with no pooled interval): its answer
    where every window that measured it agrees, "split" where the decided windows disagree, UNDECIDED_WINDOW where
    they agree but some window is undecided (its share interval holds 0.5: review rv19A S2), None where none
    measured it (notebook 06_eos_sync_profile)."""
    measured = [t for t in tests if t is not None]
    decided = [t for t in measured if t is not UNDECIDED_WINDOW]
    if not measured:
        return None
    if len(set(decided)) > 1:
        return "split"
    return UNDECIDED_WINDOW if len(decided) < len(measured) else decided[0]


def pooled_verdict(tests: list, pooled, raw=None):
    """Claims 6 and 7's verdict over the judged windows (review rr20g S1): with a pooled interval
    (`pooled_share_interval`), decided on it (`decide_on`), "split" where some window's own test (`sync_opens_gap`,
    `closes_gap` on its own interval) is decided the other way; CORRECTION_DECIDES where `raw`, the pooled interval
    with the host-speed ratio fixed at 1 (`raw_pooled`), decides otherwise than `pooled` (review rv20A M1); with no
    pooled interval (a table without per-step values), `agreed` on the windows' own tests; None where none measured
    it (notebook 06_eos_sync_profile)."""
    if pooled is None or not any(t is not None for t in tests):
        return agreed(tests)
    verdict = decide_on(pooled)
    if raw is not None and decide_on(raw) != verdict:  # (review rv20A M1)
        return CORRECTION_DECIDES
    if verdict is UNDECIDED_WINDOW:
        return verdict
    return "split" if any(t is (not verdict) for t in tests) else verdict


def raw_pooled(steps: list) -> tuple | None:
    """`pooled_share_interval` of the raw shares, the host-speed ratio fixed at 1 in every window (review rv20A M1),
    set beside the corrected one (`pooled_verdict`'s `raw`) (notebook 06_eos_sync_profile)."""
    return pooled_share_interval(steps, [1.0] * len(steps))


def raw_pooled_text(pooled, raw) -> str:
    """The pooled interval with the ratio fixed at 1 (`raw_pooled`) beside the corrected one, and what the pair
    decides (review rv20A M1): "with the host-speed ratio fixed at 1 the pooled share is 0.350–0.690, holding 0.5,
    the corrected one 0.529–0.602, wholly above 0.5: inconclusive (the host-speed correction decides)"; where both
    decide alike, "…the same side"; "" where either is missing (notebook 06_eos_sync_profile)."""
    if pooled is None or raw is None:
        return ""
    side = _side
    said = f"with the host-speed ratio fixed at 1 the pooled share is {raw[0]:.3f}–{raw[1]:.3f}, {side(raw)}"
    if decide_on(raw) == decide_on(pooled):
        return f"{said}, as the corrected one"
    return f"{said}, the corrected one {pooled[0]:.3f}–{pooled[1]:.3f}, {side(pooled)}: {CORRECTION_DECIDES}"


def _side(interval) -> str:
    """Where a share's interval lies against 0.5 (`decide_on`): "wholly below 0.5", "wholly above 0.5" or "holding
    0.5"."""
    v = decide_on(interval)
    return "wholly below 0.5" if v is True else "wholly above 0.5" if v is False else "holding 0.5"


def raw_corrected_sides(pooled, raw, of: str = "times") -> str:
    """Where the pooled interval of the raw shares (`raw_pooled`) and the host-speed-corrected one (`pooled`) each lie
    against 0.5, from their intervals (`decide_on`, as `raw_pooled_text` prints them; review rv21A M1), the interval
    named, as a share cannot "hold" 0.5 (review rr21c N1): "the 95% interval of the pooled share of the raw times holds
    0.5, the host-speed-corrected one lies wholly above it"; `of` names what the raw share is of ("idle gaps" for
    claim 7) (notebook 06_eos_sync_profile)."""
    def lies(interval, it: str = "0.5") -> str:  # noqa: E306
        v = decide_on(interval)
        return f"holds {it}" if v is UNDECIDED_WINDOW else f"lies wholly {'below' if v is True else 'above'} {it}"

    return (f"the {1 - SHARE_LEVEL:.0%} interval of the pooled share of the raw {of} {lies(raw)}, the "
            f"host-speed-corrected one {lies(pooled, 'it')}")  # fmt: skip


def contradicting(tests: list, windows: list, verdict) -> list:
    """The windows (of `windows`) whose own test is decided against a pooled `verdict` (True or False); [] else
    (review rr20g S1; notebook 06_eos_sync_profile)."""
    if verdict is not True and verdict is not False:
        return []
    return [w for t, w in zip(tests, windows) if t is (not verdict)]


def _undecided_windows(tests: list, windows: list) -> list:
    """The windows (of `windows`, in order) whose test (`sync_opens_gap`, `closes_gap`) is UNDECIDED_WINDOW."""
    return [w for t, w in zip(tests, windows) if t is UNDECIDED_WINDOW]


def pooled_text(pooled, tests: list | None = None, windows: list | None = None) -> str:
    """The pooled interval (`pooled_share_interval`) in words and what it decides (`pooled_verdict`, review rr20g
    S1): "judged on the share pooled over the windows, 0.561–0.637 (95% two-level bootstrap: windows, then each
    pass's steps; the median over windows), wholly above 0.5; window 2's own interval lies wholly on the other side";
    "" where there is none (notebook 06_eos_sync_profile)."""
    if pooled is None:
        return ""
    verdict = decide_on(pooled)
    side = ("wholly below 0.5" if verdict is True else "wholly above 0.5" if verdict is False else
            "holding 0.5, so it decides nothing")  # fmt: skip
    said = (f"judged on the share pooled over the windows, {pooled[0]:.3f}–{pooled[1]:.3f} ({1 - SHARE_LEVEL:.0%} "
            f"two-level bootstrap: windows, then each pass's steps; the median over windows), {side}")
    if against := contradicting(tests or [], windows or [], verdict):
        one = len(against) == 1
        said += (f"; {windows_named(against)}'s own interval{'' if one else 's'} "
                 f"{'lies' if one else 'lie'} wholly on the other side")
    return said


def interval_note(intervals: list | None, windows: list, pooled=None, tests: list | None = None) -> str:
    """What `half_shares` says of its windows' share intervals (`share_interval`, in the windows' order): how they are
    made and, with no pooled interval, the windows left undecided by one holding 0.5, "95% bootstrap intervals over
    each window's steps; window 5 undecided, its interval holding 0.5"; with `pooled` (`pooled_share_interval`),
    the per-window intervals as description and the pooled one that decides (`pooled_text`, review rr20g S1);
    NO_INTERVAL where none was recorded (each share alone decides); "" where `intervals` is None (a caller that
    passes none) (review rv19A S2; notebook 06_eos_sync_profile)."""
    if intervals is None:
        return ""
    if all(iv is None for iv in intervals):
        return NO_INTERVAL
    said = f"{1 - SHARE_LEVEL:.0%} bootstrap intervals over each window's steps"
    if missing := [w for iv, w in zip(intervals, windows) if iv is None]:
        said += f" ({NO_INTERVAL} in {windows_named(missing)})"
    if few := [w for iv, w in zip(intervals, windows) if iv == TOO_FEW]:
        said += f" ({TOO_FEW} in {windows_named(few)})"
    if pooled is not None:
        return f"{said}, described, not judged; {pooled_text(pooled, tests, windows)}"
    if held := [w for iv, w in zip(intervals, windows) if _holds_half(iv)]:
        its = "its interval holding" if len(held) == 1 else "their intervals holding"
        said += f"; {windows_named(held)} undecided, {its} 0.5"
    return said


def half_shares(pairs, other: str, windows: list | None = None, ratios: list | None = None,
                noun: str = "idle gap", measure: bool = True, intervals: list | None = None, pooled=None,
                tests: list | None = None) -> str:  # fmt: skip
    """Claims 6 and 7's margin (`tokgen.claims`), also notebook 06's: per window, in window order, the `other` time as a
    share of the time with the sync (`shared_gaps`' or `window_gaps`' pairs), each pass's `noun` as a share of the rest
    of its own step (`normalised_share` with the windows' `ratios`, `host_ratios`), against the rule's "at most half",
    and the share nearest to that half, named by its window as notebook 06's table numbers them (`windows`,
    `shared_windows`; default 0, 1, ...), among the windows judged (`windows_named`, review rr15 S2); how they come
    from the raw shares, and the windows whose correction is large or missing, `ratios_text` says beside it; with
    `ratios` None or no ratio recorded, the raw shares (`ratios_text` then says so: NO_RATIO). Repeated shares are
    said once with their windows (`_grouped`, review rr19b N5); claim 6's rule names its MIN_GAP_US floor too (for
    `other` "no-check", `_raw_test`; review rr19b S3). Without `measure`
    (notebook 06's takeaways, where `judged_on` has just named it: review rr18d S1), the shares without the
    measure's words (reviews rr17c S1, S3; notebook 06_eos_sync_profile). With `intervals` (`share_interval`, per
    window), each share with its interval, "0.526 (0.490–0.561)", and how they decide (`interval_note`; review rv19A
    S2); with `pooled` (`pooled_share_interval`) and the windows' own `tests`, the pooled interval that decides
    (`pooled_text`, review rr20g S1)."""
    windows = list(range(len(pairs))) if windows is None else list(windows)
    raw = [o / s if s > 0 else math.inf for s, o in pairs]
    corrected = ratios is not None and any(math.isfinite(r) for r in ratios)
    shares = [normalised_share(s, o, r) for (s, o), r in zip(pairs, ratios)] if corrected else raw
    what = f"{other} / sync, {own_step_share(noun)}," if corrected and measure else f"{other} / sync"
    shown = [f"{x:.3f}" for x in shares]  # a value repeated said once with its windows (review rr19b N5)
    if intervals is not None and any(_is_interval(iv) for iv in intervals):  # (review rv19A S2)
        shown = [f"{x} ({iv[0]:.3f}–{iv[1]:.3f})" if _is_interval(iv) else x for x, iv in zip(shown, intervals)]
    shown = ", ".join(shown) if len(set(shown)) == len(shown) else _grouped(list(zip(windows, shown)))
    floor = f"at least {MIN_GAP_US} µs with the sync and " if _raw_test(other) is sync_opens_gap else ""  # rr19b S3
    note = interval_note(intervals, windows, pooled, tests)
    note = f"; {note}" if note else ""
    if len(shares) == 1:
        return f"{what} {shown} (the rule: {floor}at most 0.5{note})"
    i = min(range(len(shares)), key=lambda j: abs(shares[j] - 0.5))
    d = shares[i] - 0.5
    side = f"{abs(d):.3f} above it" if d > 0 else f"{abs(d):.3f} below it" if d < 0 else "at it"
    near = f"window {windows[i]} of {windows_named(windows)}, {shares[i]:.3f}, {side}"
    every = "over the windows pooled" if pooled is not None else "in every window"  # (review rr20g S1)
    rule = f"the rule: {floor}at most 0.5 {every}; nearest to it: {near}{note}"
    return f"{what.replace(' / sync', ' / sync per window', 1)} {shown} ({rule})"


def windows_named(windows: list) -> str:
    """Windows by their numbers as notebook 06's table numbers them: "window 1", "windows 0 and 2", "windows 0–2"
    (three or more in a row), "windows 0, 2 and 5" (notebook 06_eos_sync_profile)."""
    windows = [int(w) for w in windows]
    if len(windows) == 1:
        return f"window {windows[0]}"
    if len(windows) > 2 and windows == list(range(windows[0], windows[-1] + 1)):
        return f"windows {windows[0]}\u2013{windows[-1]}"
    return f"windows {series_text(windows)}"


def check_adds(pairs, windows: list | None = None, ratios: list | None = None) -> str:
    """The stop check's measured time per step, per window in window order, from claim 6's cause test's pairs
    (`shared_gaps`: the time from the shared work with the sync, with no stop check): the first less the second in
    whole µs, "the stop check adds 72, 172, … µs per step in windows 0–5" only where that is a direction by the
    notebook's rule (`direction`: MIN_GAP_US or more in every window, and MIN_WINDOWS windows or more; review
    rr15 M1); else the differences signed and said as such, "the time from the shared work with the sync less
    that with no stop check: +28, −439 and +12 µs per step in windows 0–2"; `windows` as notebook 06's table numbers
    them (`shared_windows`; default 0, 1, ...), a pair with a NaN left out; "" where none is left (reviews rvB14
    S7, rvA15 S2). `ratios` (`host_ratios`, per window as `pairs`): where a kept window's is flagged (`drifted`),
    its difference is partly the two passes' host speeds, not the check's, so the signed form is said with those
    windows named: "…: +148, +73 and +293 µs per step in windows 0–2 (host-speed ratio 1.68 in window 3, flagged:
    its difference not read as the stop check's)" (review rv23A S3; notebook 06_eos_sync_profile)."""
    windows = list(range(len(pairs))) if windows is None else list(windows)
    ratios = [float("nan")] * len(pairs) if ratios is None else list(ratios)
    kept = [((s, n), w, r) for (s, n), w, r in zip(pairs, windows, ratios) if math.isfinite(s) and math.isfinite(n)]
    if not kept:
        return ""
    where, differences = windows_named([w for _, w, _ in kept]), [s - n for (s, n), _, _ in kept]
    flagged = [(w, r) for _, w, r in kept if drifted(r)]  # host drift, or the generator's own effect (rv23A S3)
    # a direction by notebook 06's rule (every window, MIN_GAP_US or more, MIN_WINDOWS windows), not one window's sign
    if direction([p for p, _, _ in kept]) == "smaller" and len(kept) >= MIN_WINDOWS and not flagged:  # (rr15 M1)
        shown = [f"{d:.0f}" for d in differences]
        head = "the stop check adds"
    else:
        shown = [with_sign(d) for d in differences]
        head = "the time from the shared work with the sync less that with no stop check:"
    said = f"{head} {series_text(shown)} µs per step in {where}"
    if flagged:
        its = "its difference" if len(flagged) == 1 else "their differences"
        said += f" (host-speed ratio {_factors_in(flagged)}, flagged: {its} not read as the stop check's)"
    return said


def shared_gaps(profile: pd.DataFrame, compiled: bool = False) -> list[tuple[float, float]]:
    """Claim 6's cause test's pairs, also notebook 06's: per profiled window, the time from the end of the last GPU
    operation the synchronous step shares with the step without any stop check to the next step's first
    operation, with the sync and with no stop check (statistics pass). The synchronous step runs k more GPU
    operations per step (`kernels_per_step`), its stop check's (the token's comparison, the flag's update and
    reduction, the flag's copy), after the work both share, the token's append: its time is read from the end
    of its (k+1)-th last operation, the no-check one's from its last (`Timeline.summary`'s
    `from_op_<j>_median_us`). A (NaN, NaN) pair where k is not a whole count from 1 to TAIL_OPS − 1 or the
    columns are missing (a table recorded before them) (notebook 06_eos_sync_profile)."""
    nan, out = float("nan"), []
    for a, b in _window_rows(profile, compiled, "kv_static_no_check"):
        col = _shared_column(a, b)
        if col is None or col not in a.index or "from_op_1_median_us" not in b.index:
            out.append((nan, nan))
            continue
        out.append((float(a[col]), float(b["from_op_1_median_us"])))
    return out


def window_steps(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check",
                 shared: bool = False) -> list[tuple]:  # fmt: skip
    """Per window of `window_gaps` (with `shared`, of `shared_gaps`), in their order, the per-step values the two
    medians are over (`Timeline.summary`'s `idle_gap_steps_us`, or the `from_op_<j>_steps_us` of `shared_gaps`'
    columns), as (sync, other) lists; (None, None) where not recorded (a table recorded before them: NO_INTERVAL)
    (review rv19A S2; notebook 06_eos_sync_profile)."""
    out = []
    for a, b in _window_rows(profile, compiled, other):
        col, mine = "idle_gap_steps_us", "idle_gap_steps_us"
        if shared:
            col, mine = _shared_column(a, b), "from_op_1_steps_us"
            col = col.replace("_median_us", "_steps_us") if col is not None else None
        values = (per_step_values(a.get(col)) if col else None, per_step_values(b.get(mine)))
        out.append(values if None not in values else (None, None))
    return out


def _shared_column(sync: pd.Series, no_check: pd.Series, same_ops: bool = False) -> str | None:
    """The synchronous row's column that holds its time from the shared work: `from_op_<k+1>_median_us`, k its extra
    GPU operations per step over the no-check row's; None where k is no whole count from 1 to TAIL_OPS − 1. With
    `same_ops` (the other row a generator that runs the same operations, pipelined): `from_op_1_median_us` where k is
    0, else None."""
    nan = float("nan")
    k = float(sync.get("kernels_per_step", nan)) - float(no_check.get("kernels_per_step", nan))
    if same_ops:
        return "from_op_1_median_us" if k == 0 else None
    return f"from_op_{int(k) + 1}_median_us" if math.isfinite(k) and k == int(k) and 1 <= k < TAIL_OPS else None


def shared_windows(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check") -> list:
    """The window numbers (the table's `window` column) of `shared_gaps`' pairs (of `window_gaps`' with `other`), in
    their order; 0, 1, ... where the table has no `window` column (notebook 06_eos_sync_profile)."""
    rows = _window_rows(profile, compiled, other)
    return [int(a["window"]) if "window" in a.index else i for i, (a, _) in enumerate(rows)]


def host_ratios(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check") -> list[float]:
    """Per window of `shared_gaps`, in its order, how much slower the host ran in the synchronous generator's pass than
    in the no-check one's: the rest of the profiled step outside the time from the shared work,
    `step_period_us − from_op_<k+1>_median_us` with the sync over `step_period_us − from_op_1_median_us` with no stop
    check (k as in `shared_gaps`). The two passes of a window run one after the other, so the host can drift between
    them (review rvA16 S1): the host-normalised share corrects for it (`normalised_share`, review rr17c S1). NaN where
    a column is missing (a table recorded before them: the raw shares are then judged, said so: NO_RATIO). With
    `other` "pipelined_static" (claim 7's gap test, per window of `window_gaps` with it), the same quantity: the
    pipelined step runs the same GPU operations as the synchronous one (its stop check and flag's copy too, only not
    waited for), so the work both share is the whole step and the time from it is each one's `from_op_1_median_us`:
    NaN where their operations per step differ (`_shared_column`) (notebook 06_eos_sync_profile)."""
    nan, out = float("nan"), []
    for a, b in _window_rows(profile, compiled, other):
        col = _shared_column(a, b, same_ops=other != "kv_static_no_check")
        try:
            sync, none = (float(r["step_period_us"]) - float(r[c]) for r, c in ((a, col), (b, "from_op_1_median_us")))
        except (KeyError, TypeError, ValueError):
            sync, none = nan, nan
        out.append(sync / none if sync > 0 and none > 0 else nan)
    return out


NO_RATIO = "no host-speed ratio recorded"  # where the raw shares are judged (reviews rr17c S3, rr18b M1, rr18d N2)
RAW_AS = {"no-check": "with no stop check", "pipelined": "pipelined"}  # `judged_on`'s raw share, per other pass
RAW_US = "in raw µs, uncorrected"  # a direction read from the gaps themselves, not the judged share (review rr18b S1)


def own_step_share(noun: str = "idle gap") -> str:
    """The host-normalised share in words, the one phrase claims 6 and 7, notebook 06's takeaways and summary and the
    quick pages say it in: "each pass's idle gap as a share of the rest of its own step" (`normalised_share`; review
    rr17c S1) (notebook 06_eos_sync_profile)."""
    return f"each pass's {noun} as a share of the rest of its own step"


def judged_on(noun: str = "idle gap", corrected: bool = True, other: str = "no-check") -> str:
    """What a verdict of claims 6 and 7, notebook 06's takeaways and summary is judged on: "judged on each pass's idle
    gap as a share of the rest of its own step" (`own_step_share`) where some window recorded a host-speed ratio
    (`corrected`, the `idle_gaps` row's `cause_corrected`/`pipelined_corrected`), else the raw share, said as what it
    is: "judged on the idle gap pipelined over the one with the sync (no host-speed ratio recorded)" (`other`'s pass,
    NO_RATIO): a measure is named only where it was measured (reviews rr18b M1, rr18d N2; notebook
    06_eos_sync_profile)."""
    if corrected:
        return f"judged on {own_step_share(noun)}"
    return f"judged on the {noun} {RAW_AS.get(other, other)} over the one with the sync ({NO_RATIO})"


def normalised_share(sync_us: float, other_us: float, ratio: float = float("nan")) -> float:
    """The host-normalised share (`own_step_share`), what claim 6's cause test and claim 7's gap test judge against
    their "at most 0.5": (other / rest_other) / (sync / rest_sync) = other / sync × `ratio`, the window's host-speed
    ratio (`host_ratios`: rest_sync / rest_other, rest the profiled step less the time judged); the raw share other /
    sync where the ratio is NaN (not recorded); inf where the sync time is not above 0, NaN where either time is NaN
    (review rr17c S1; notebook 06_eos_sync_profile)."""
    if not (math.isfinite(sync_us) and math.isfinite(other_us)):
        return float("nan")
    share = other_us / sync_us if sync_us > 0 else math.inf
    return share * ratio if math.isfinite(ratio) else share


def drifted(ratio: float) -> bool:
    """Whether a window's host-speed ratio (`host_ratios`) lies outside [1/HOST_DRIFT, HOST_DRIFT], so that its
    correction is flagged as large (`drift_flags`); a NaN one does not (notebook 06_eos_sync_profile)."""
    return math.isfinite(ratio) and not 1 / HOST_DRIFT <= ratio <= HOST_DRIFT


RECHECKED = ("kv_static_no_check", "pipelined_static")  # the eager passes whose host-speed ratio `drift_recheck` reads
# against the synchronous one: the ratios a verdict is judged on (claim 6's cause, claim 7's gap; review rr22b S2)


def drift_recheck(rows: list[dict]) -> bool:
    """Whether notebook 06 profiles a window once more (`tokgen.bench.profile_windows`' `recheck`, review rv21A N4):
    its rows (one per generator, as measured) give an eager host-speed ratio a verdict is judged on (`host_ratios`:
    the synchronous pass against the no-check one, claim 6's cause, or against the pipelined one, claim 7's gap)
    outside [1/HOST_DRIFT, HOST_DRIFT] (`drifted`); the compiled passes' ratios, judged by no claim, never ask for a
    repeat (review rr22b S2). Decided by the first attempt's host-speed ratio alone, never by a share or by the
    repeat; the ratio scales the corrected share (`normalised_share`), so where the out-of-band ratios lean one way,
    judging the repeats moves those windows' corrected shares toward their raw ones (review rr22c S1). False where no
    such ratio can be read (notebook 06_eos_sync_profile)."""
    profile = pd.DataFrame(rows)
    if "variant" not in profile:
        return False
    return any(drifted(r) for other in RECHECKED for r in host_ratios(profile, False, other))


def first_ratios(profile: pd.DataFrame, compiled: bool = False, other: str = "kv_static_no_check") -> dict:
    """Per window of notebook 06's profile that was profiled again (`first_attempts`), its first attempt's host-speed
    ratio (`host_ratios` against `other`), by window; {} where none was
    (review rv21A N4; notebook 06_eos_sync_profile)."""
    first = first_attempts(profile)
    return dict(zip(shared_windows(first, compiled, other), host_ratios(first, compiled, other)))


DRIFT_BAND = f"{1 / HOST_DRIFT:g}–{HOST_DRIFT:g}"  # the band of host-speed ratios not flagged (`drifted`), in words
PREMISE_UNVALIDATED = ("the correction's premise, that the ratio is host drift, is not validated (it may be the "
                       "generator's own effect under the profiler)")  # claim 6's words where no window was re-profiled


def _persisted(one: bool = True) -> str:
    """What a ratio outside the band on a window's first attempt and on its repeat shows (reviews rv21A N4, rr22b
    S3): one repeat names no cause."""
    if one:
        return "so it is not a one-off disturbance (it may be the generator's own effect under the profiler)"
    return "so they are not one-off disturbances (they may be the generator's own effect under the profiler)"


def _transient(one: bool = True) -> str:
    """What a ratio outside the band on a window's first attempt and back inside it on the repeat is consistent with,
    and what one repeat cannot tell (review rr22b S3)."""
    if one:
        return "consistent with a transient disturbance; one repeat cannot tell it from the generator's own effect"
    return "consistent with transient disturbances; one repeat cannot tell them from the generator's own effect"


def _not_persisted(one: bool = True) -> str:
    """Such a ratio in words, naming no cause (review rr22b S3)."""
    return f"did not persist on one repeat ({_transient(one)})"


def _reprofiled(windows: list, ratios: list, first: dict | None) -> tuple[list, list, list]:
    """The judged windows profiled again whose first attempt's ratio was flagged: those whose repeat came back inside
    the band, those whose repeat stayed outside; then those whose first attempt lay inside and whose repeat lies
    outside (profiled again for another pass's ratio)."""
    last = dict(zip(windows, ratios))
    again = [w for w in windows if first and w in first and math.isfinite(first[w]) and math.isfinite(last[w])]
    back = [w for w in again if drifted(first[w]) and not drifted(last[w])]
    stayed = [w for w in again if drifted(first[w]) and drifted(last[w])]
    moved = [w for w in again if not drifted(first[w]) and drifted(last[w])]
    return back, stayed, moved


def reprofile_text(windows: list, ratios: list, first: dict | None, compiled: bool = False) -> str:
    """What the repeats of re-profiled windows show (review rv21A N4; `first`: `first_ratios`, the judged `ratios`
    the repeats'), naming no cause from one repeat (review rr22b S3): "window 3 was profiled again, its first
    attempt's host-speed ratio 2.07 outside 0.8–1.25: the repeat's 1.10 lies back inside it, so the ratio did not
    persist on one repeat (consistent with a transient disturbance; one repeat cannot tell it from the generator's
    own effect), and the repeat is judged"; where the repeat's stays outside, "…the repeat's 1.95 lies outside it
    too: the ratio persisted on one repeat, so it is not a one-off disturbance (it may be the generator's own effect
    under the profiler)"; a window profiled again for another pass's ratio whose first attempt lay inside the band
    and whose repeat lies outside, with both values: "…on the first attempt (0.92) and outside it on the repeat
    (1.47), which is judged: the ratio left the band on the repeat"; then the other judged windows profiled again for
    another pass's ratio, their own inside the band on both attempts: "window 1 was also profiled again for another
    pass's ratio, and the repeat is judged" (review rv23B N2); "" where no judged window was profiled again. The
    `compiled` passes' ratios never ask for a repeat (`drift_recheck`): their windows are said as "profiled again
    for another pass's ratio" whatever their first ratio (review rr22c N5) (notebook 06_eos_sync_profile)."""
    back, stayed, moved = _reprofiled(windows, ratios, first)
    last, parts = dict(zip(windows, ratios)), []
    for these, came_back in ((back, True), (stayed, False)):
        if not these:
            continue
        one = len(these) == 1
        before = _values([(w, _ratio(first[w])) for w in these])
        after = _values([(w, _ratio(last[w])) for w in these])
        noun = "ratio" if one else "ratios"
        shows = (f"back inside it, so the {noun} {_not_persisted(one)}, and the repeat is judged" if came_back else
                 f"outside it too: the {noun} persisted on one repeat, {_persisted(one)}")  # fmt: skip
        why = " for another pass's ratio" if compiled else ""  # a compiled ratio asks for no repeat (rr22c N5)
        parts.append(f"{windows_named(these)} {'was' if one else 'were'} profiled again{why}, "
                     f"{'its' if one else 'their'} "
                     f"first attempt's host-speed ratio{'' if one else 's'} {before} outside {DRIFT_BAND}: the "
                     f"repeat's {after} {'lies' if one else 'lie'} {shows}")  # fmt: skip
    if moved:
        one = len(moved) == 1
        parts.append(f"{windows_named(moved)}, profiled again for another pass's ratio, lay inside {DRIFT_BAND} on "
                     f"the first attempt ({_values([(w, _ratio(first[w])) for w in moved])}) and outside it on the "
                     f"repeat ({_values([(w, _ratio(last[w])) for w in moved])}), which is judged: the "
                     f"{'ratio' if one else 'ratios'} left the band on the repeat")  # fmt: skip
    # the windows profiled again for another pass's ratio whose own ratio lay inside the band on both attempts (or
    # was not measured): their repeat is judged too, so they are named (review rv23B N2)
    if quiet := [w for w in windows if first and w in first and w not in (*back, *stayed, *moved)]:
        one = len(quiet) == 1
        judged = "the repeat is judged" if one else "their repeats are judged"
        parts.append(f"{windows_named(quiet)} {'was' if one else 'were'}{' also' if parts else ''} profiled again "
                     f"for another pass's ratio, and {judged}")  # fmt: skip
    return "; ".join(parts)


def correction_premise(windows: list, ratios: list, first: dict | None, default: str = PREMISE_UNVALIDATED) -> str:
    """Claims 6 and 7's words on the host-speed correction's premise, that the ratio is host drift, from the repeats
    of the judged windows whose first attempt's ratio lay outside the band (`first_ratios`, review rv21A N4), naming
    no cause from one repeat (review rr22b S3): every one back inside it, the premise was not contradicted where the
    ratio was large, and is not validated (one repeat cannot tell a transient disturbance from the generator's own
    effect); every one outside it again, the ratio persisted, so the premise is doubtful (it may be the generator's
    own effect under the profiler); some each way, not validated, both named; `default` (PREMISE_UNVALIDATED) where
    no such window was profiled again (notebook 06_eos_sync_profile)."""
    back, stayed, _ = _reprofiled(windows, ratios, first)
    if not back and not stayed:
        return default
    head = "the correction's premise, that the ratio is host drift"
    ratios_ = {k: "ratio" if len(ws) == 1 else "ratios" for k, ws in (("back", back), ("stayed", stayed))}
    came_back = (f"{windows_named(back)}'s first {ratios_['back']} outside {DRIFT_BAND} came back inside on one "
                 "repeat" if back else "")  # fmt: skip
    if not stayed:
        return (f"{head}, was not contradicted where the ratio was large ({came_back}, and the repeat is judged), "
                "but is not validated (one repeat cannot tell a transient disturbance from the generator's own effect "
                f"under the profiler, and within {DRIFT_BAND} nothing tests it)")  # fmt: skip
    what = ("not a one-off disturbance: it may be" if len(stayed) == 1 else
            "not one-off disturbances: they may be")  # fmt: skip
    persisted = (f"{windows_named(stayed)}'s {ratios_['stayed']} outside {DRIFT_BAND} persisted on one repeat "
                 f"({what} the generator's own effect under the profiler)")  # fmt: skip
    if not back:
        return f"{head}, is doubtful: {persisted}"
    return f"{head}, is not validated: {persisted}, while {came_back} ({_transient(len(back) == 1)})"


def judged_windows(profile: pd.DataFrame, compiled: bool = False) -> dict:
    """Claim 6's and notebook 06's one choice of the windows its cause test judges (`claims._claim_6`, `idle_gaps`):
    per profiled window that holds both generators, in order, left out only where its idle gaps (`window_gaps`) or its
    times from the shared work (`shared_gaps`) are not both measured ("unmeasured": their windows), every other one
    judged on the host-normalised share (`normalised_share`, `sync_opens_gap` with the ratio): "idle", "shared",
    "windows", "ratios" (`host_ratios`) and "intervals" (`share_interval` of the shared times' per-step values, None
    where not recorded: review rv19A S2) of those (review rr17c S1), each window's last attempt (`last_attempts`),
    with "first" the re-profiled windows' first attempts' ratios (`first_ratios`, review rv21A N4)
    (notebook 06_eos_sync_profile)."""
    out = {k: [] for k in ("idle", "shared", "windows", "ratios", "intervals", "steps", "periods", "unmeasured")}
    out["first"] = first_ratios(profile, compiled)  # the re-profiled windows' first attempts (review rv21A N4)
    profile = last_attempts(profile)
    rows = zip(window_gaps(profile, compiled), shared_gaps(profile, compiled), shared_windows(profile, compiled),
               host_ratios(profile, compiled), window_steps(profile, compiled, shared=True),
               window_periods(profile, compiled))  # fmt: skip
    for idle, shared, w, r, steps, p in rows:
        if sync_opens_gap(*idle) is None or sync_opens_gap(*shared) is None:
            out["unmeasured"].append(w)
        else:
            for k, v in (("idle", idle), ("shared", shared), ("windows", w), ("ratios", r), ("steps", steps),
                         ("periods", p), ("intervals", share_interval(*steps, r, periods=p))):  # fmt: skip
                out[k].append(v)
    out["pooled"] = pooled_share_interval(out["steps"], out["ratios"], out["periods"])  # (review rr20g S1)
    out["pooled_raw"] = raw_pooled(out["steps"])  # the ratio fixed at 1 (review rv20A M1)
    out["tests"] = [sync_opens_gap(*p, r, iv) for p, r, iv in zip(out["shared"], out["ratios"], out["intervals"])]
    return out


def window_periods(profile: pd.DataFrame, compiled: bool = False) -> list[tuple]:
    """Per window of `shared_gaps`, in its order, the synchronous and the no-check passes' step periods
    (`step_period_us`), from which `host_ratios` is made, so that `share_interval` re-derives the ratio per resample
    (review rr20g N1); (NaN, NaN) where not recorded (notebook 06_eos_sync_profile)."""
    nan, out = float("nan"), []
    for a, b in _window_rows(profile, compiled, "kv_static_no_check"):
        try:
            out.append((float(a["step_period_us"]), float(b["step_period_us"])))
        except (KeyError, TypeError, ValueError):
            out.append((nan, nan))
    return out


UNMEASURED_WHY = "with no idle gap or no time from the shared work measured"  # `judged_windows`' "unmeasured"


def left_out_text(judged: dict, missing: str = UNMEASURED_WHY) -> str:
    """The windows `judged_windows` (or `judged_pipelined`) left out, in words, with the reason, a time not measured:
    "window 3 left out, with no idle gap or no time from the shared work measured" (`missing` says which times); ""
    where none is (review rr16a S4; notebook 06_eos_sync_profile)."""
    return f"{windows_named(judged['unmeasured'])} left out, {missing}" if judged["unmeasured"] else ""


PIPELINED_MISSING = "with no idle gap measured"  # `judged_pipelined`'s "unmeasured", in `left_out_text`


def judged_pipelined(profile: pd.DataFrame, compiled: bool = False) -> dict:
    """Claim 7's gap test's windows (`closes_gap`), by claim 6's rule (`judged_windows`): per profiled window that
    holds the synchronous and the pipelined generator, in order, left out only where either idle gap is not measured
    ("unmeasured"), every other one judged on the host-normalised share (`host_ratios` with "pipelined_static"):
    "idle" (`window_gaps`' pairs), "windows", "ratios" and "intervals" (`share_interval` of the idle gaps' per-step
    values, None where not recorded: review rv19A S2) of those (review rr17c S1), each window's last attempt, with
    "first" as `judged_windows`' (review rv21A N4) (notebook 06_eos_sync_profile)."""
    out = {k: [] for k in ("idle", "windows", "ratios", "intervals", "steps", "unmeasured")}
    other = "pipelined_static"
    out["first"] = first_ratios(profile, compiled, other)  # the re-profiled windows' first attempts (review rv21A N4)
    profile = last_attempts(profile)
    rows = zip(window_gaps(profile, compiled, other), shared_windows(profile, compiled, other),
               host_ratios(profile, compiled, other), window_steps(profile, compiled, other))  # fmt: skip
    for idle, w, r, steps in rows:
        if closes_gap(*idle) is None:
            out["unmeasured"].append(w)
        else:
            for k, v in (("idle", idle), ("windows", w), ("ratios", r), ("steps", steps),
                         ("intervals", share_interval(*steps, r))):  # fmt: skip
                out[k].append(v)
    # the ratio is from the passes' times from their last operation, not the idle gaps resampled: held fixed
    out["pooled"] = pooled_share_interval(out["steps"], out["ratios"])  # (review rr20g S1)
    out["pooled_raw"] = raw_pooled(out["steps"])  # the ratio fixed at 1 (review rv20A M1)
    out["tests"] = [closes_gap(*p, r, iv) for p, r, iv in zip(out["idle"], out["ratios"], out["intervals"])]
    return out


def _ratio(r: float) -> str:
    """A host-speed ratio in two decimals, or more where two would put it on or across the flag's edges: 0.795 reads
    "0.795", not "0.80" beside "more than 1.25× apart" (`side_of`)."""
    return side_of(r, (1 / HOST_DRIFT, HOST_DRIFT))


def _grouped(shown: list) -> str:
    """Per-window values (`shown`: (window, text) pairs) with their windows, equal values said once: "1.96× and 2.23×
    in windows 0 and 1", "1.30× in windows 0–5", "1.30× in windows 0–2 and 1.56× in window 5" (reviews rr18b N4,
    rr18d N3)."""
    values = list(dict.fromkeys(v for _, v in shown))
    if len(values) == len(shown):
        return f"{series_text(values)} in {windows_named([w for w, _ in shown])}"
    return series_text([f"{v} in {windows_named([w for w, v_ in shown if v_ == v])}" for v in values])


def _values(shown: list) -> str:
    """Per-window values (`shown`: (window, text) pairs, the windows named beside them) in window order, "0.302 and
    0.260"; where some repeat, grouped by value with their windows (`_grouped`): "0.300 in windows 0–5" (review
    rr18d N3)."""
    values = [v for _, v in shown]
    return series_text(values) if len(set(values)) == len(values) else _grouped(shown)


def _factors_in(these: list) -> str:
    """`drift_flags`' ratios with their windows, in `ratios_text`'s form (`_ratio`: the synchronous pass's rest over
    the other's, no factor inverted: review rv20A N1), equal ratios said once (`_grouped`, review rr18b N4)."""
    return _grouped([(w, _ratio(r)) for w, r in these])


def drift_flags(windows: list, ratios: list, other: str = "no-check", decided: list = (), pairs: list = (),
                first: dict | None = None, compiled: bool = False) -> str:  # fmt: skip
    """The windows where one pass's step outside the judged time (`host_ratios`: the measured quantity, host drift or
    the generator's own effect) is more than HOST_DRIFT times the other's (`drifted`), flagged, not left out, each
    ratio in `ratios_text`'s one form (the synchronous pass's rest over the other's, review rv20A N1) with its
    direction: "where one pass's step outside the judged time is more than 1.25× the other's (host drift, or the
    generator's own effect), the correction is large: host-speed ratio 1.96 and 2.23 in windows 0 and 1 (above 1: the
    synchronous pass's the longer) and 0.64 in window 5 (below 1: the no-check pass's the longer)".
    Where every flagged ratio lies on one side and the correction decides a flagged window (`decided`,
    `correction_decides`' windows), what that implies, either side alike (reviews rr18d S2, rr19b S1): "every
    flagged ratio raises the share, against the claim" (or "lowers the share, for the claim"), "a one-sided ratio
    that may be the generator's own effect rather than drift"; where every flagged ratio raises the share and
    decides no window, the flagged corrections (not every window's: an unflagged ratio below 1 lowers its share,
    review rv20A S3) can only have worked against the claim, said of the flagged windows alone where some window's
    ratio below 1 turned its verdict (review rr19b M1); the mirror where every flagged ratio lowers the share: they
    can only have worked for the claim, "and the share is still above 0.5 in them" where every flagged window's
    corrected share (from `pairs`, (sync, other) per window) is, else "and they turn no window's verdict" (review
    rv20A S3); "" where none is flagged (reviews rr17c S1, N1, rr18b S2, N4, rr18d N1). The windows profiled again
    (`first`: `first_ratios`) follow, with their first attempt's ratio, the repeat's and what that shows
    (`reprofile_text`, review rv21A N4; `compiled`: the compiled passes' ratios, review rr22c N5);
    notebook 06_eos_sync_profile."""
    said, again = _flagged(windows, ratios, other, decided, pairs), reprofile_text(windows, ratios, first, compiled)
    return "; ".join(t for t in (said, again) if t)


def _flagged(windows: list, ratios: list, other: str, decided, pairs) -> str:
    """`drift_flags` of the judged ratios, without the re-profiles."""
    far = [(w, r) for w, r in zip(windows, ratios) if drifted(r)]
    parts = []
    for longer, side, how in (("synchronous", lambda r: r > 1, "above"), (other, lambda r: r < 1, "below")):
        if these := [(w, r) for w, r in far if side(r)]:
            parts.append(f"{_factors_in(these)} ({how} 1: the {longer} pass's the longer)")
    if not parts:
        return ""
    said = (f"where one pass's step outside the judged time is more than {HOST_DRIFT:g}× the other's (host drift, or "
            f"the generator's own effect), the correction is large: host-speed ratio "
            f"{' and '.join(parts)}")  # fmt: skip
    every = "the flagged ratio" if len(far) == 1 else "every flagged ratio"
    flagged = "the flagged correction" if len(far) == 1 else "the flagged corrections"
    raises = all(r > 1 for _, r in far)
    if len(parts) == 1 and any(w in decided for w, _ in far):  # one side only, and it turns a flagged window
        moves = "raises the share, against the claim" if raises else "lowers the share, for the claim"
        said += f"; {every} {moves}: a one-sided ratio that may be the generator's own effect rather than drift"
    elif raises:  # scoped to the flagged windows where a ratio below 1 turned another window (review rr19b M1)
        helped = any(w in decided and r < 1 for w, r in zip(windows, ratios))
        scope = f"in {windows_named([w for w, _ in far])} " if helped else ""
        said += f"; {every} raises the share, so {scope}{flagged} can only have worked against the claim"
    elif all(r < 1 for _, r in far):  # every flagged ratio lowers the share, none decides it (review rv20A S3)
        shares = {w: normalised_share(s, o, r) for (s, o), w, r in zip(pairs, windows, ratios)}
        them = "in it" if len(far) == 1 else "in them"
        still = (f"the share is still above 0.5 {them}" if pairs and all(shares.get(w, 0) > 0.5 for w, _ in far)
                 else f"{'it turns' if len(far) == 1 else 'they turn'} no window's verdict")  # fmt: skip
        said += f"; {every} lowers the share, so {flagged} can only have worked for the claim, and {still}"
    return said


def _raw_test(other: str):
    """The test a window's share is judged by: claim 7's `closes_gap` for the pipelined pass, else claim 6's
    `sync_opens_gap` (its MIN_GAP_US floor too)."""
    return closes_gap if other == "pipelined" else sync_opens_gap


def correction_decides(pairs, windows: list, ratios: list, other: str = "no-check") -> list:
    """The windows (of `windows`, `pairs`' (sync, other) times) whose verdict the host-speed ratio turns: the test
    (`_raw_test`: `sync_opens_gap`, or `closes_gap` for "pipelined") on the raw times differs from the same test with
    the window's ratio, so a window that fails either way (a gap with the sync under MIN_GAP_US) is not among them
    (review rr18d N4; notebook 06_eos_sync_profile)."""
    test = _raw_test(other)
    return [w for (s, o), w, r in zip(pairs, windows, ratios)
            if math.isfinite(r) and test(s, o) is not None and test(s, o) != test(s, o, r)]  # fmt: skip


def decided_by_correction(pairs, windows: list, ratios: list, other: str = "no-check") -> str:
    """The windows whose verdict the correction decides (`correction_decides`: met on the raw share and not on the
    corrected one, or the reverse), with their raw shares, repeated values grouped (`_values`; one value: "raw 0.300 in
    each"): "the correction decides windows 0 and 1: raw 0.302 and 0.260, at most 0.5, corrected above it"; "" where
    it decides none (reviews
    rr18b S2, rr18d N3, N4; notebook 06_eos_sync_profile)."""
    decided, test = correction_decides(pairs, windows, ratios, other), _raw_test(other)
    parts = []
    for raw_met, how in ((True, "at most 0.5, corrected above it"), (False, "above 0.5, corrected at most 0.5")):
        these = [(w, f"{o / s if s > 0 else math.inf:.3f}") for (s, o), w in zip(pairs, windows)
                 if w in decided and test(s, o) == raw_met]  # fmt: skip
        if these:
            raw = f"{these[0][1]} in each" if len(these) > 1 and len({x for _, x in these}) == 1 else _values(these)
            parts.append(f"the correction decides {windows_named([w for w, _ in these])}: raw {raw}, {how}")
    return "; ".join(parts)


def ratios_text(pairs, windows: list, ratios: list, other: str = "no-check", derivation: bool = True,
                first: dict | None = None, compiled: bool = False) -> str:  # fmt: skip
    """How `half_shares`' host-normalised shares come from the raw ones (`pairs`: (sync, other) per window): "the raw
    shares 0.302, 0.260 and 0.507 times the two passes' host-speed ratio (the rest of the synchronous pass's step over
    the no-check pass's) 1.96, 2.23 and 1.06" (repeated values grouped, `_values`: review rr18d N3), then the windows
    whose ratio lies beyond HOST_DRIFT (`drift_flags`) and those whose ratio was not recorded, their shares not
    corrected ("no host-speed ratio recorded in window 3, so its share is not corrected for host drift"); where no
    ratio was recorded, NO_RATIO with the derivation ("no host-speed ratio recorded, so the shares are not corrected
    for host drift": a table recorded before them, review rr17c S3), "" without it (the verdict's `judged_on` says
    so: review rr18d N2); "" where no window is judged. The windows whose verdict the correction decides follow the
    flags (`decided_by_correction`, review rr18b S2). Without `derivation` (notebook 06's takeaways: review rr18b S3),
    the flags and those windows only, not the raw shares and ratios. `first` (`first_ratios`): the re-profiled
    windows' first attempts, said with the flags (`drift_flags`, review rv21A N4; `compiled`: the compiled passes'
    ratios, review rr22c N5) (notebook 06_eos_sync_profile)."""
    if not windows or not (derivation or any(math.isfinite(r) for r in ratios)):
        return ""
    if not any(math.isfinite(r) for r in ratios):
        return f"{NO_RATIO}, so the share{' is' if len(windows) == 1 else 's are'} not corrected for host drift"
    raw = [o / s if s > 0 else math.inf for s, o in pairs]
    one = len(windows) == 1
    shown = _values([(w, _ratio(r) if math.isfinite(r) else "not recorded") for w, r in zip(windows, ratios)])
    said = (f"the raw share{'' if one else 's'} {_values([(w, f'{x:.3f}') for w, x in zip(windows, raw)])} times the "
            f"two passes' host-speed ratio (the rest of the synchronous pass's step over the {other} pass's) "
            f"{shown}")  # fmt: skip
    said = [said] if derivation else []
    decided = correction_decides(pairs, windows, ratios, other)
    said += [t for t in (drift_flags(windows, ratios, other, decided, pairs, first, compiled),
                         decided_by_correction(pairs, windows, ratios, other)) if t]  # fmt: skip
    said = "; ".join(said)
    if missing := [w for w, r in zip(windows, ratios) if not math.isfinite(r)]:
        its = "its share is" if len(missing) == 1 else "their shares are"
        said += f"{'; ' if said else ''}{NO_RATIO} in {windows_named(missing)}, so {its} not corrected for host drift"
    return said


SHARED_NOUN = "time from the shared work"  # what claim 6's cause test compares (`shared_gaps`), in `direction_text`
SHARED_WORDS = ("from the end of the work the synchronous step shares with the one without a check (the token's "
                "append; the stop check's GPU operations come after it)")  # fmt: skip
SHARED_SHORT = ("from the end of the token's append (the last work both steps share; the check's GPU operations "
                "follow it)")  # fmt: skip  (`gap_takeaway`'s SHARED_WORDS: review rr19b N1)
STOP_CHECK = "the stop check (its launches and `.item()`)"  # what claim 6's cause test weighs: all of it, not the wait
STOP_CHECK_TESTED = ("the cause test weighs the whole stop check (its GPU operations' launches and `.item()`'s copy "
                     "and synchronize calls), not the synchronize's wait alone")  # fmt: skip


def counted_windows(what: str, windows: list) -> str:
    """`what` (a verdict) counted, with the windows' numbers as notebook 06's table numbers them, so a count does not
    read as a window: "partly in 1 window (1)", "not reproduced in 2 windows (0, 2)" (notebook 06_eos_sync_profile)."""
    return f"{what} in {len(windows)} window{'' if len(windows) == 1 else 's'} ({', '.join(map(str, windows))})"


def direction(pairs) -> str | None:
    """Per window, the second gap of a (first, second) pair against the first: "larger" or "smaller" by
    MIN_GAP_US or more, else "same" (about equal: a gap below MIN_GAP_US is launch spacing, and so is a
    difference below it); the windows' common answer, "split" where they differ, None where none
    measured both (`agreed`). A common "larger" or "smaller" is a direction only from MIN_WINDOWS
    windows on (`direction_text` says so) (notebook 06_eos_sync_profile)."""
    shown = [b - a for a, b in pairs if math.isfinite(a) and math.isfinite(b)]
    return agreed(["same" if abs(d) < MIN_GAP_US else "larger" if d > 0 else "smaller" for d in shown])


NO_DIRECTION = "the windows disagree on how"
DIRECTION_LEVEL = 0.05  # windows that all agree in sign show a direction only where chance does so this rarely


def agree_by_chance(windows: int) -> float:
    """How often `windows` windows all agree in sign, either sign, where the two gaps do not differ
    and each window's noise is symmetric: 2·0.5^windows (3 windows: 1 time in 4; notebook 06_eos_sync_profile)."""
    return min(1.0, 2 * 0.5**windows)


MIN_WINDOWS = next(n for n in range(1, 64) if agree_by_chance(n) <= DIRECTION_LEVEL)  # 6: 2·0.5^6 = 1 in 32


def too_few_windows(windows: int) -> str:
    """Why `windows` windows, fewer than MIN_WINDOWS, that all agree in sign show no direction:
    "3 windows cannot show a direction: with no difference, all three agree by chance 1 time in 4"
    (notebook 06_eos_sync_profile)."""
    if windows <= 1:
        return "one window cannot show a direction"
    every = {2: "both", 3: "all three", 4: "all four", 5: "all five"}.get(windows, f"all {windows}")
    return (f"{windows} windows cannot show a direction: with no difference, {every} agree by chance 1 time in "
            f"{round(1 / agree_by_chance(windows))}")  # fmt: skip


def direction_text(change: str | None, windows: int, other: str, against: str = "with the sync",
                   noun: str = "gap") -> str:  # fmt: skip
    """The one template for a direction between two gaps (`direction`) over `windows` windows: a
    direction is stated only where every window shows it and there are at least MIN_WINDOWS of them
    (all agreeing in sign by chance at most DIRECTION_LEVEL of the time); fewer that agree are said
    with why they show none (`too_few_windows`); windows that disagree give NO_DIRECTION. `other`
    names the second gap ("without any stop check", "pipelined"), `against` the first, the one with
    the sync unless said (solution 06 sets a late window's gap against an early one's); `noun` what is
    compared ("gap", or claim 6's "time from the shared work") (notebook 06_eos_sync_profile)."""
    if change is None:  # no window measured both gaps (rrA13 N4)
        return f"no window measured both the {noun} {other} and the one {against}"
    if change not in ("larger", "smaller", "same"):
        within = f"a difference below {MIN_GAP_US} µs counting as none"
        return f"{NO_DIRECTION} the {noun} {other} compares with the one {against}, {within}"
    every = " in every window" if windows > 1 else ""
    if change == "same":
        return f"the {noun} is about the same {other} as {against}{every}, within {MIN_GAP_US} µs"
    if windows < MIN_WINDOWS:
        where = {1: "in the one window", 2: "in both windows"}.get(windows, f"in all {windows} windows")
        return (f"the {noun} {other} is {change} than {against} {where} by {MIN_GAP_US} µs or more, but "
                f"{too_few_windows(windows)}")  # fmt: skip
    return f"the {noun} is {change} {other} than {against} in all {windows} windows, by {MIN_GAP_US} µs or more"


OVERHEAD_COLUMN = ("profiled step (GPU span of the window's steps / their number) / bracketing plain runs' step "
                   "(a whole run's wall time / (tokens − 1), prefill and setup included) − 1, %")


def window_pairs(rows: list[dict], windows: list[str], measures=("idle_gap_median_us", "gpu_busy_per_step_us")):
    """Interleaved pairs of profiles, one row per profile ({"variant", "pair", "window", and a profile's
    `summary()` keys}, in the order they ran), as {variant: {measure: [(value in windows[0], in windows[1]),
    ...] per pair}}, whatever order each pair ran in: what `direction` reads per pair (notebook 06's
    solution, exercise 2)."""
    frame = pd.DataFrame(rows)
    out = {}
    for variant, g in frame.groupby("variant", sort=False):
        by = g.set_index(["pair", "window"])
        pairs = sorted(set(g["pair"]))
        out[variant] = {m: [tuple(float(by.at[(p, w), m]) for w in windows) for p in pairs] for m in measures}
    return out


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
    out["step, µs (unprofiled: median (fastest–slowest) of the plain runs bracketing the profiled passes)"] = plain
    out[OVERHEAD_COLUMN] = summary["profiled_vs_plain_pct"].to_numpy()
    out["GPU idle share of the window"] = summary["gpu_idle_fraction"].to_numpy()
    out["GPU operations per step (kernels, copies, memsets)"] = summary["kernels_per_step"].to_numpy()
    out["streams"] = summary["streams"].to_numpy()
    return table(out, digits={c: 2 if c == "GPU idle share of the window" else 0 for c in out})


def profiler_overhead(summary: pd.DataFrame) -> str:
    """Per variant, the profiled step against its bracketing plain runs over the windows, beside the
    spread of those plain runs (notebook 06_eos_sync_profile)."""
    summary = last_attempts(summary)  # a re-profiled window once, its repeat (review rv21A N4)
    runs, windows = int(summary["unprofiled_runs"].iloc[0]), int(summary.groupby("variant").size().max())
    spread_pct = 100 * (summary["unprofiled_max_us"] - summary["unprofiled_min_us"]) / summary["unprofiled_step_us"]
    parts = []
    for v, g in summary.assign(spread_pct=spread_pct).groupby("variant", sort=False):
        lo, hi = g["profiled_vs_plain_pct"].min(), g["profiled_vs_plain_pct"].max()
        over = f"{with_sign(lo)}%" if with_sign(lo) == with_sign(hi) else f"{with_sign(lo)}% to {with_sign(hi)}%"
        parts.append(f"`{v}` {over}, its plain runs spread up to {g['spread_pct'].max():.0f}%")
    return (f"Profiled / bracketing plain runs − 1 per step: the profiled step (the GPU span of the window's steps "
            f"over their number) against the median step of the {runs} plain runs timed just before and just after its "
            f"profiled passes (a whole run's wall time over its tokens − 1, prefill and setup included: not the same "
            f"quantity, so this is no measure of the profiler's cost), lowest to highest over {windows} "
            f"window{'s' if windows > 1 else ''} (the plain runs' spread: slowest less fastest, as a share of their "
            f"median): {'; '.join(parts)}. The idle gaps above were measured with the profiler running.")  # fmt: skip


def plain_after_profile(summary: pd.DataFrame) -> str:
    """Bracket by bracket, per model (eager, compiled): in how many brackets the median of the plain runs
    after the profiled passes moved beyond the spread (slowest less fastest) of the plain runs before
    them, slower and faster. No cause is named: the brackets run one after another in one process, so
    every bracket but the first follows an earlier one's profiled passes, its runs before and after
    alike; they cannot show whether a profiler stays set up after a profile (tokgen asks PyTorch to
    tear CUPTI down after each profile, TEARDOWN_CUPTI=1) (notebook 06_eos_sync_profile)."""
    if not {"unprofiled_before_us", "unprofiled_after_us", "unprofiled_before_spread_us"} <= set(summary):
        return "*Whether the plain runs after a profile run as those before it: not recorded in this table.*"
    change = summary["unprofiled_after_us"] - summary["unprofiled_before_us"]
    beyond = change.abs() > summary["unprofiled_before_spread_us"]  # a change equal to the spread lies within it
    measured = change.notna() & summary["unprofiled_before_spread_us"].notna()
    compiled = summary["variant"].str.startswith("compiled ")
    parts = []
    for model, rows in (("eager", measured & ~compiled), ("compiled", measured & compiled)):
        if rows.any():
            slower, faster = int((rows & beyond & (change > 0)).sum()), int((rows & beyond & (change < 0)).sum())
            n = int(rows.sum())
            parts.append(f"{slower + faster} of {n} {model} bracket{'s' * (n > 1)} ({slower} slower, {faster} faster)")
    if not parts:
        return "*Whether the plain runs after a profile run as those before it: not measured.*"
    said = ("Bracket by bracket, the median of the plain runs after the profiled passes moved beyond the spread of "
            f"the plain runs before them (slowest less fastest) in {' and '.join(parts)}.")  # fmt: skip
    if len(summary) == 1:
        return said + " One bracket cannot show whether a profiler stays set up after a profile."
    return said + (" The brackets ran one after another in this process, so every bracket but the first follows an "
                   "earlier one's profiled passes: those compare runs after a profile with runs after a profile and "
                   "cannot show whether a profiler stays set up after a profile.")  # fmt: skip


def idle_gaps(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model, from notebook 06's profile: the idle gap before a step with the sync, with no stop
    check (NaN where not profiled) and pipelined (medians over the windows that measured each, `over`:
    `over_profiled`, review rr17b S1); every window with both times measured judged by claims 6 and 7's one rule,
    each pass's time as a share of the rest of its own step (`normalised_share`): whether the stop check (its
    launches and `.item()`) opens the time before a step, from the work both steps share (`sync_causes`:
    `sync_opens_gap` on `shared_gaps` with `host_ratios`, whose medians are `sync_shared_us` and
    `no_check_shared_us`; `windows` judged, `windows_opening`; the per-window shares against the rule's half in
    words, `no_check_shares`: `half_shares`; the stop check's time per step per window in words, `check_adds`:
    `check_adds`), over the windows claim 6 judges (`judged_windows`: those with a time not measured named in
    `left_out`, `left_out_text`, review rr16a S4; `profiled`, the windows that measured the gap with the sync;
    `size`, the judged windows' gaps with the sync against the article's, `size_text`) and whether pipelining
    closes at least half of the gap before a step (`closes`: `closes_gap` over `judged_pipelined`, with its
    windows' host-speed ratios; `windows_pipelined`, `windows_closing`; `pipelined_shares`: `half_shares`; those
    left out in `pipelined_left_out`), each "split" where the windows disagree; and the direction of the no-check
    time (from the shared work) and of the pipelined gap against the sync's (`no_check_change`, `change`:
    `direction`) (notebook 06_eos_sync_profile)."""
    columns = ["model", "sync_us", "no_check_us", "pipelined_us", "idle_share", "closes", "sync_causes", "change",
               "no_check_change", "windows", "windows_opening", "windows_closing", "windows_pipelined",
               "sync_shared_us", "no_check_shared_us", "no_check_shares", "check_adds", "left_out",
               "profiled", "over", "size", "pipelined_left_out", "pipelined_shares", "cause_corrected",
               "pipelined_corrected", "cause_over", "pipelined_over", "pipelined_idle_share", "floored",
               "undecided", "pipelined_undecided", "pooled", "pipelined_pooled",
               "pooled_raw", "pipelined_pooled_raw"]  # fmt: skip
    if "idle_gap_median_us" not in summary:  # a profile without GPU kernels (a CPU run) has no gaps
        return pd.DataFrame(columns=columns)
    full, summary = summary, last_attempts(summary)  # a re-profiled window's repeat (review rv21A N4)
    s, rows = profile_windows(summary).set_index("variant"), []
    for compiled in (False, True):
        sync, piped = label("kv_static", compiled=compiled), label("pipelined_static", compiled=compiled)
        none = label("kv_static_no_check", compiled=compiled)
        if sync in s.index and piped in s.index:
            a, b = s.at[sync, "idle_gap_median_us"], s.at[piped, "idle_gap_median_us"]
            n = s.at[none, "idle_gap_median_us"] if none in s.index else float("nan")
            judged = judged_windows(full, compiled)  # claim 6's windows, by its one rule (review rr17c S1)
            shared, windows_ = judged["shared"], judged["windows"]
            opens = judged["tests"]
            piped_ = judged_pipelined(full, compiled)  # claim 7's windows, by the same rule
            closes = piped_["tests"]
            profiled = (("kv_static", "kv_static_no_check", "pipelined_static") if none in s.index else
                        ("kv_static", "pipelined_static"))  # fmt: skip
            counts = profiled_counts(summary, compiled, profiled)
            windows_all = profiled_window_count(summary, compiled, profiled)

            def over(generators):  # each bullet counts its own passes' windows (review rr19b N3)
                mine = {g: n for g, n in counts.items() if g in generators}
                return over_profiled(mine, profiled_window_count(summary, compiled, generators), listed=True)

            rows.append(
                {"model": "compiled" if compiled else "eager", "sync_us": a, "no_check_us": n, "pipelined_us": b,
                 "idle_share": s.at[sync, "gpu_idle_fraction"],
                 "closes": pooled_verdict(closes, piped_["pooled"], piped_["pooled_raw"]),  # (rr20g S1, rv20A M1)
                 "sync_causes": pooled_verdict(opens, judged["pooled"], judged["pooled_raw"]),
                 "change": direction(piped_["idle"]),
                 "no_check_change": direction(shared),
                 "windows": sum(o is not None for o in opens), "windows_opening": sum(o is True for o in opens),
                 "profiled": counts["kv_static"], "over": over_profiled(counts, windows_all, listed=True),
                 "windows_closing": sum(c is True for c in closes),
                 "windows_pipelined": sum(c is not None for c in closes),
                 "sync_shared_us": _median(a_ for a_, _ in shared),
                 "no_check_shared_us": _median(n_ for _, n_ in shared),
                 "no_check_shares": "; ".join(t for t in (
                     half_shares(shared, "no-check", windows_, judged["ratios"], SHARED_NOUN, measure=False,
                                 intervals=judged["intervals"], pooled=judged["pooled"], tests=opens),
                     ratios_text(shared, windows_, judged["ratios"], derivation=False, first=judged["first"],
                                 compiled=compiled))
                     if t) if shared else "",
                 "check_adds": check_adds(shared, windows_, judged["ratios"]), "left_out": left_out_text(judged),
                 "size": size_text([s_ for s_, _ in judged["idle"]], windows_),
                 "pipelined_left_out": left_out_text(piped_, PIPELINED_MISSING),
                 "pipelined_shares": "; ".join(t for t in (
                     half_shares(piped_["idle"], "pipelined", piped_["windows"], piped_["ratios"], measure=False,
                                 intervals=piped_["intervals"], pooled=piped_["pooled"], tests=closes),
                     ratios_text(piped_["idle"], piped_["windows"], piped_["ratios"], "pipelined", derivation=False,
                                 first=piped_["first"], compiled=compiled))
                     if t) if piped_["idle"] else "",
                 # whether a ratio was recorded: what the verdicts say they are judged on (review rr18b M1)
                 "cause_corrected": any(math.isfinite(r) for r in judged["ratios"]),
                 "pipelined_corrected": any(math.isfinite(r) for r in piped_["ratios"]),
                 "cause_over": over(("kv_static", "kv_static_no_check")),
                 "pipelined_over": over(("kv_static", "pipelined_static")),
                 "pipelined_idle_share": s.at[piped, "gpu_idle_fraction"],
                 # the judged windows whose time with the sync is under the floor (review rr19b S3)
                 "floored": [w for (a_, _), w in zip(shared, windows_) if a_ < MIN_GAP_US],
                 # the judged windows whose share interval holds 0.5 (review rv19A S2)
                 "undecided": _undecided_windows(opens, windows_),
                 "pipelined_undecided": _undecided_windows(closes, piped_["windows"]),
                 "pooled": judged["pooled"], "pipelined_pooled": piped_["pooled"],
                 "pooled_raw": judged["pooled_raw"], "pipelined_pooled_raw": piped_["pooled_raw"]}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _median(values) -> float:
    """The median of the finite `values`; NaN where none is."""
    finite = pd.Series([v for v in values if math.isfinite(v)], dtype=float)
    return float(finite.median()) if len(finite) else float("nan")


PIPELINING_CLOSES = "pipelining closes at least half of the gap before a step"  # claim 7's gap test, in words: rr17c N2


def _text(gap, key: str) -> str:
    """A text column of an `idle_gaps` row, "" where the row or the text is missing."""
    said = gap.get(key) if gap is not None else None
    return said if isinstance(said, str) else ""


def _pipelining_does(gap) -> str:
    """`gap_takeaway`'s clause on claim 7's gap test, over the windows it judges (`judged_pipelined`), each pass's idle
    gap as a share of the rest of its own step: the verdict, those left out named (the row's `pipelined_left_out`),
    the per-window shares (`pipelined_shares`); none left: not decided (review rr17c S2), with why."""
    left, shares = _text(gap, "pipelined_left_out"), _text(gap, "pipelined_shares")
    against = "against the pipelined passes, "  # not the no-check passes the clause before names
    if left and int(gap["windows_pipelined"]) == 0:
        return f"{against}{left}: no window is left to judge, so whether {PIPELINING_CLOSES} is not decided"
    said = _pipelining_verdict(gap)
    said += f"; {against}{left}, judged over the other {int(gap['windows_pipelined'])}" if left else ""
    return f"{said}; {shares}" if shares else said


def _corrected(gap, key: str) -> bool:
    """Whether an `idle_gaps` row's verdict is on the host-normalised share (`cause_corrected`,
    `pipelined_corrected`: some window recorded a host-speed ratio); False where the row lacks the flag."""
    flag = gap.get(key) if gap is not None else None
    return flag is not None and flag == flag and bool(flag)  # a NaN (a row without the flag) is False


def _pipelining_verdict(gap) -> str:
    """Claim 7's gap test's verdict, judged on the share `judged_on` names (the raw one where no ratio was recorded,
    review rr18b M1), the direction beside a "does not" read from the raw µs, labelled so where the verdict is on the
    corrected share (RAW_US, rr18b S1), else after a colon (review rr18d N2)."""
    corrected = _corrected(gap, "pipelined_corrected")
    measure = judged_on("idle gap", corrected, "pipelined")
    if gap["closes"] in OPEN:
        n, of = int(gap["windows_closing"]), int(gap["windows_pipelined"])
        if _pooled(gap, "pipelined_pooled"):  # (reviews rr20g S1, rv20A M1)
            why = _pooled_why(gap["closes"], gap.get("pipelined_pooled"), gap.get("pipelined_pooled_raw"))
            return f"whether {PIPELINING_CLOSES} is not decided, {measure}: {why}"
        unsure = _listed(gap, "pipelined_undecided")
        if not unsure:
            return f"{PIPELINING_CLOSES} in {n} of {of} windows, not in the others, {measure}: not decided"
        rest = of - n - len(unsure)
        rest = f", not in {rest} of them" if rest else ""  # (review rr20g S3)
        return f"{PIPELINING_CLOSES} in {n} of {of} windows{rest}, {measure}, and {_unsure(unsure)}: not decided"
    if gap["closes"] is None or gap["closes"] != gap["closes"]:
        return f"whether {PIPELINING_CLOSES} is not measured"
    if gap["closes"]:
        return f"{PIPELINING_CLOSES}, {measure}"
    change = direction_text(gap["change"], int(gap["windows_pipelined"]), "pipelined")
    said = f"pipelining does not close half of the gap before a step, {measure}"
    return f"{said} ({RAW_US}: {change})" if corrected else f"{said}: {change}"


def _measured_cause(gap) -> bool:
    """Whether some window profiled the generator without any stop check beside the synchronous one."""
    return gap.get("sync_causes") is not None and gap["sync_causes"] == gap["sync_causes"]


def _left_out(gap) -> str:
    """The windows `idle_gaps` left out, a time not measured, in words (its row's `left_out`, `left_out_text`); ""
    where none is."""
    return _text(gap, "left_out")


def _cause(gap) -> str:
    """`gap_takeaway`'s clause on the sync's cause, every window with both times judged, each pass's time from the
    shared work as a share of the rest of its own step (`own_step_share`), then the stop check's time per step per
    window (`check_adds`, the row's `check_adds`: reviews rvB14 S7, rvA15 S2) and the per-window shares the cause
    rests on (`half_shares`, the row's `no_check_shares`, where recorded: review r11 found a decided "more than
    half" that held in one window by 0.005); a window whose time with the sync is under MIN_GAP_US named as such, not
    as one where more than half remains (`_floored`, review rr19b S3)."""
    judged, left = int(gap["windows"]), _left_out(gap)
    every = f" in every{' judged' if left else ''} window" if judged > 1 else ""
    if unsure := _listed(gap, "undecided"):  # "every window" only where every window's own test decides (rv20A S1)
        one = len(unsure) == 1
        every = (f" over the windows pooled; {windows_named(unsure)}'s own interval{'' if one else 's'} "
                 f"{'holds' if one else 'hold'} 0.5")  # fmt: skip
    corrected = _corrected(gap, "cause_corrected")
    measure = judged_on("time", corrected)  # the raw share said as such (rr18b M1); the time named just before
    shares = f"; {_text(gap, 'no_check_shares')}" if _text(gap, "no_check_shares") else ""
    shares = f"; {_text(gap, 'check_adds')}{shares}" if _text(gap, "check_adds") else shares
    shares = f"; {left}, judged over the other {judged}{shares}" if left else shares
    if gap["sync_causes"] in OPEN and _pooled(gap, "pooled"):  # (reviews rr20g S1, rv20A M1)
        why = _pooled_why(gap["sync_causes"], gap.get("pooled"), gap.get("pooled_raw"))
        return (f"{measure}, whether at most half of that time remains without any stop check is not decided: "
                f"{why}, so whether {STOP_CHECK} opens most of it is not "
                f"decided{shares}")  # fmt: skip
    if gap["sync_causes"] in ("split", UNDECIDED_WINDOW):
        unsure = _listed(gap, "undecided")
        how = "disagree" if gap["sync_causes"] == "split" else "do not all decide"
        also = f", and {_unsure(unsure)}" if unsure else ""
        return (f"the {judged} {'judged' if left else 'profiled'} windows {how}: {measure}, at most half of that "
                f"time remains without any stop check in {int(gap['windows_opening'])} of them{also}, so whether "
                f"{STOP_CHECK} opens most of it is not decided{shares}")  # fmt: skip
    if gap["sync_causes"]:
        return (f"{measure}, at most half of that time remains without any stop check{every}: {STOP_CHECK} opens "
                f"most of it{shares}")  # fmt: skip
    change = direction_text(gap["no_check_change"], judged, "without any stop check", noun="time")  # named before
    change = f"{RAW_US}: {change}" if corrected else change
    if floored := _floored(gap):  # those windows fail on the floor, not on the half (review rr19b S3)
        where = every if len(floored) == judged else f" in {windows_named(floored)}"
        under = f"the time with the sync is under {MIN_GAP_US} µs{where} (launch spacing, nothing to explain"
        if len(floored) == judged:
            return f"{measure}, {under}; {change}){shares}"
        return (f"{measure}, {under}); more than half of that time remains without any stop check in the other "
                f"{judged - len(floored)}: {STOP_CHECK} does not open most of it there ({change}){shares}")  # fmt: skip
    return (f"{measure}, more than half of that time remains without any stop check{every}: {STOP_CHECK} does not "
            f"open most of it ({change}){shares}")  # fmt: skip


def _pooled(gap, key: str) -> bool:
    """Whether an `idle_gaps` row's verdict was made on a pooled interval (`pooled`, `pipelined_pooled`)."""
    return gap is not None and isinstance(gap.get(key), tuple)


def _pooled_why(verdict, pooled=None, raw=None) -> str:
    """Why a verdict made on the pooled interval (`pooled_verdict`) is open: the interval holds 0.5, ("split")
    some window's own interval lies wholly on the other side of 0.5 (review rr20g S1), or (CORRECTION_DECIDES) the
    pooled interval of the raw shares (`raw`) decides otherwise than the corrected one (`pooled`), both printed
    (`raw_pooled_text`, review rv20A M1)."""
    if verdict == CORRECTION_DECIDES:
        return raw_pooled_text(pooled, raw) or CORRECTION_DECIDES
    if verdict is UNDECIDED_WINDOW:
        return "the share pooled over the windows has an interval holding 0.5"
    return "some window's own interval lies wholly on the other side of 0.5 from the pooled share's"


def _listed(gap, key: str) -> list:
    """An `idle_gaps` row's list of windows (`undecided`, `pipelined_undecided`); [] where the row lacks it."""
    said = gap.get(key) if gap is not None else None
    return list(said) if isinstance(said, (list, tuple)) else []


def _unsure(windows: list) -> str:
    """The windows left undecided by their share interval holding 0.5 (review rv19A S2): "window 5 is undecided (its
    share's interval holds 0.5)"."""
    one = len(windows) == 1
    return (f"{windows_named(windows)} {'is' if one else 'are'} undecided ({'its' if one else 'their'} share's "
            f"interval{'' if one else 's'} {'holds' if one else 'hold'} 0.5)")


def _floored(gap) -> list:
    """The judged windows whose time with the sync from the shared work is under MIN_GAP_US (an `idle_gaps` row's
    `floored`): claim 6's test fails there on its floor, not on the half; [] where the row lacks them."""
    floored = gap.get("floored") if gap is not None else None
    return list(floored) if isinstance(floored, (list, tuple)) else []


def _us(gap_us: float) -> str:
    """A median gap as `gap_takeaway` says it: "245.5 µs", or "not measured" where no window measured it (NaN)."""
    return f"{gap_us:.1f} µs" if math.isfinite(gap_us) else "not measured"


def gap_takeaway(gap) -> list[str]:
    """One model's row of `idle_gaps` in two bullets (notebook 06_eos_sync_profile; review rr18d S1): the cause
    (claim 6), where the generator without any stop check was profiled read from it in every window it judges
    (`judged_windows`, `_cause`), else why it is not measured; then pipelining (claim 7: `_piped`), which hides the
    sync but also adds a stream. Each bullet's gaps' medians are over the windows that measured its own passes
    (`over_profiled`, reviews rr17b S1, rr19b N3)."""
    model, head = gap["model"].capitalize(), "the gap before a step is"
    if not _measured_cause(gap):
        return [f"{model}, the cause (claim 6): {head} {_us(gap['sync_us'])} with the sync: {_unmeasured_cause(gap)}.",
                _piped(gap)]  # fmt: skip
    gaps = f"{_us(gap['sync_us'])} with the sync, {_us(gap['no_check_us'])} with no stop check"
    judged = ("" if not _left_out(gap) else " (in the judged window)" if int(gap["windows"]) == 1 else
              " (medians over the judged windows)")  # fmt: skip
    shared = (f"{SHARED_SHORT}, {gap['sync_shared_us']:.1f} µs with the sync and {gap['no_check_shared_us']:.1f} "
              f"µs with no stop check{judged}")  # fmt: skip
    cause = f"{model}, the cause (claim 6): {head} {gaps}{_medians(gap, 'cause_over')}; {shared}: {_cause(gap)}."
    return [cause, _said_once(_piped(gap), cause)]


def _said_once(text: str, before: str) -> str:
    """`text` without its "; NO_INTERVAL" where `before`, the bullet above it, has said it: a table recorded before
    the per-step values says so once per model, not in every bullet (review rv19A S2)."""
    note = f"; {NO_INTERVAL})"
    return text.replace(note, ")") if note in before else text


def _medians(gap, key: str) -> str:
    """The count in parentheses, " (medians over the 6 profiled windows)": an `idle_gaps` row's count for one bullet
    (`cause_over`, `pipelined_over`, or `over` for all three passes), "" where it is one window or missing."""
    over = _text(gap, key)
    return f" (medians {over})" if over and not over.startswith("in the one") else ""


def _finite(value) -> bool:
    """Whether `value` is a finite number (a missing or NaN one is not)."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _piped(gap, no_check: bool = False) -> str:
    """`gap_takeaway`'s pipelining bullet (claim 7): the GPU's idle share of the profiled window with the sync and
    pipelined (where recorded: review rr19b N2), the gaps with the sync then pipelined, and `_pipelining_does`; with
    `no_check` (notebook 07, review rr19b S2), the gap with no stop check too, where measured."""
    model, head = gap["model"].capitalize(), "the gap before a step is"
    idle = [f"{gap.get(k):.0%}{' of the window' * (not i)} {PROFILED_AS[g]}" for i, (k, g) in enumerate(
        (("idle_share", "kv_static"), ("pipelined_idle_share", "pipelined_static"))) if _finite(gap.get(k))]
    idle = f"the GPU idles {', '.join(idle)}{' (medians, not judged)' * (len(idle) > 1)}; " if idle else ""
    gaps = f"{_us(gap['sync_us'])} with the sync, {_us(gap['pipelined_us'])} pipelined"
    no_check = no_check and _finite(gap.get("no_check_us"))
    gaps += f", {_us(gap['no_check_us'])} with no stop check" if no_check else ""
    over = _medians(gap, "over" if no_check else "pipelined_over")
    return f"{model}, pipelining (claim 7): {idle}{head} {gaps}{over}: {_pipelining_does(gap)}."


QUEUED_SHARE = 0.5  # the sync waited for queued GPU work where that work's median is at least this share of the wait
COPY_CALL_UNSPLIT = "the profile does not split the call's own cost from any wait inside it"  # `sync_wait_text`
# "the host did not wait for queued work" sets the GPU's times against the host's: the caveat `which_call_waits` gives
CLOCKS_CAVEAT = "the GPU's times set against the host's by the profiler's alignment of the two clocks"  # (rv19A N7)


def _synced(w) -> bool:
    """Whether a recorded sync-wait row (`tokgen.profiling.sync_wait_row`) holds a step with a copy and a sync."""
    steps = w.get("sync_steps") if w is not None else None
    return steps is not None and steps == steps and steps > 0


def waited_for_queue(w) -> bool | None:
    """Whether the host's sync waited mostly for GPU work still queued when it issued the stop-flag copy, from
    one generator's recorded sync-wait medians (`tokgen.profiling.sync_wait_row`, a row of notebook 06's table):
    the median of that work is at least QUEUED_SHARE of the sync's median duration; False: the GPU had
    (nearly) finished, so the host waited for no queued work (`_wait_clause` says whether the copy's round trip
    or the synchronize call itself then holds most of the sync's time); None where no step had a copy and a
    sync (notebook 06_eos_sync_profile)."""
    if not _synced(w):
        return None
    return bool(w["sync_queued_us"] >= QUEUED_SHARE * w["sync_us"])


def _wait_clause(w) -> str:
    """What the sync waited for, from a recorded sync-wait row (`tokgen.profiling.sync_wait_row`), as a clause."""
    wait, queued, steps = w["sync_us"], w["sync_queued_us"], int(w["sync_steps"])
    if waited_for_queue(w):
        return (f"the GPU still had {queued:.1f} µs of work queued (median) when the host issued the copy, in "
                f"{int(w['sync_queued_steps'])} of {steps} steps, and the sync waited {wait:.1f} µs: the host "
                "waited for that queued work")  # fmt: skip
    text = (f"the sync lasted {wait:.1f} µs per step (median of {steps} steps); the GPU had already finished "
            f"everything queued before the copy in {int(w['sync_idle_steps'])} of {steps} steps ({queued:.1f} µs "
            f"left, median), so the host did not wait for queued work ({CLOCKS_CAVEAT})")  # fmt: skip
    into, after = w.get("copy_done_us", float("nan")), w.get("after_copy_us", float("nan"))
    if not (math.isfinite(into) and math.isfinite(after)):
        return text + "; when the flag's copy finished was not recorded"
    copy = (f"the flag's copy was done {into:.1f} µs into the sync" if into > 0 else
            f"the flag's copy was done {-into:.1f} µs before the sync began")  # fmt: skip
    holds = ("the synchronize call's own, under the profiler, not the copy's" if after > max(into, 0.0) else
             "the copy's round trip")  # fmt: skip
    return f"{text}; {copy} and the sync returned {after:.1f} µs {LATER} (medians): most of its time is {holds}"


def sync_wait_text(name: str, w) -> str:
    """What one generator's per-step sync waited for, from its recorded sync-wait medians
    (`tokgen.profiling.sync_wait_row`, a row of notebook 06's table): queued GPU work, or, where the GPU had
    finished, whether the copy's round trip or the synchronize call's own time holds most of it, with how late
    the host issued the copy (notebook 06_eos_sync_profile)."""
    if waited_for_queue(w) is None:
        return f"`{name}`: no step of the window recorded a stop-flag copy followed by a sync."
    late = w["sync_late_us"]
    when = (f"the host issued the copy {late:.1f} µs after the GPU's last queued operation ended" if late >= 0 else
            f"the host issued the copy {-late:.1f} µs before the GPU's last queued operation ended")  # fmt: skip
    return (f"`{name}`: {_wait_clause(w)}. Medians: {when}; the copy call took {w['copy_call_us']:.1f} µs of "
            f"host time, from its start to its return ({COPY_CALL_UNSPLIT}).")  # fmt: skip


def window_waits(profile: pd.DataFrame) -> dict:
    """Per model ("eager", "compiled"), the synchronous generator's recorded sync-wait rows
    (`tokgen.profiling.sync_wait_row`'s columns), one per profiled window that recorded a stop-flag copy followed by
    a sync, in window order; a model without one is left out (notebook 06_eos_sync_profile)."""
    out = {}
    if "sync_us" not in profile or "variant" not in profile:
        return out
    profile = last_attempts(profile)  # a re-profiled window's repeat (review rv21A N4)
    for compiled in (False, True):
        rows = profile[profile["variant"] == label("kv_static", compiled=compiled)]
        if "window" in rows:
            rows = rows.drop_duplicates("window").sort_values("window")
        rows = rows[[_synced(r) for _, r in rows.iterrows()]]
        if len(rows):
            out["compiled" if compiled else "eager"] = rows
    return out


def _span(values, signed: bool = False) -> str:
    """Per-window values to one decimal: one value where they all round alike, else their range; a value that
    rounds to zero reads "0.0", never "-0.0" nor "+0.0" (review r11: −0.019 µs read "-0.0")."""
    fmt = (lambda v: with_sign(v, 1)) if signed else "{:.1f}".format
    lo, hi = (s if float(s.replace("\u2212", "-")) else "0.0" for s in (fmt(v) for v in (min(values), max(values))))
    return lo if lo == hi else f"{lo} to {hi}" if signed else f"{lo}–{hi}"


def _over_windows(rows: pd.DataFrame, column: str, per: str = "") -> str:
    """A recorded median over the windows: "20.9 µs per step (the median of 3 windows' medians; range 18.5–21.8)"."""
    values = rows[column].astype(float)
    return f"{values.median():.1f} µs{per} (the median of {len(values)} windows' medians; range {_span(values)})"


def _waits_clause(rows: pd.DataFrame) -> str:
    """`_wait_clause` over several windows' recorded rows (`window_waits`): each median over the windows with its
    range, the steps counted across all of them; one window's row in `_wait_clause`'s own words."""
    if len(rows) == 1:
        return _wait_clause(rows.iloc[0])
    n, steps = len(rows), int(rows["sync_steps"].sum())
    queued = [waited_for_queue(r) for _, r in rows.iterrows()]
    queued_steps = int(rows["sync_queued_steps"].sum())
    if all(queued):
        return (f"the GPU still had {_over_windows(rows, 'sync_queued_us')} of work queued when the host issued the "
                f"copy, in {queued_steps} of {steps} steps, and the sync waited {_over_windows(rows, 'sync_us')}: the "
                "host waited for that queued work in every window")  # fmt: skip
    text = f"the sync lasted {_over_windows(rows, 'sync_us', ' per step')}"
    if any(queued):
        return (f"{text}; it waited mostly for queued GPU work in {sum(queued)} of {n} windows, not in the others "
                f"({queued_steps} of {steps} steps had work queued when the host issued the copy)")  # fmt: skip
    idle = int(rows["sync_idle_steps"].sum())
    text += (f"; the GPU had already finished everything queued before the copy in {idle} "
             f"of {steps} steps ({_span(rows['sync_queued_us'])} µs left, each window's median), so the host did not "
             f"wait for queued work ({CLOCKS_CAVEAT})")  # fmt: skip
    if not {"copy_done_us", "after_copy_us"} <= set(rows) or rows[["copy_done_us", "after_copy_us"]].isna().any().any():
        return text + "; when the flag's copy finished was not recorded in every window"
    into, after = rows["copy_done_us"].astype(float), rows["after_copy_us"].astype(float)
    own = [a > max(i, 0.0) for i, a in zip(into, after)]
    copy = (f"the flag's copy ended {_span(into, signed=True)} µs from the sync's start (each window's median; "
            "negative: before it)")  # fmt: skip
    if all(own) or not any(own):
        holds = "the synchronize call's own, under the profiler, not the copy's" if own[0] else "the copy's round trip"
        return (f"{text}; {copy} and the sync returned {_span(after)} µs {LATER}: in every window most of its time "
                f"is {holds}")  # fmt: skip
    return (f"{text}; {copy}: most of the sync's time is the synchronize call's own in {sum(own)} of {n} windows, the "
            "copy's round trip in the others")  # fmt: skip


def sync_wait_words(profile: pd.DataFrame, compiled: bool = False) -> str:
    """Claim 6's measured sync wait, not judged (`tokgen.claims`): the synchronous generator's recorded synchronize
    after the flag's copy, its median per step over the windows with their range, and in how many of all the
    windows' steps the GPU still had work queued when the host issued the copy; "" where the table records no
    sync wait (a table recorded before it) (notebook 06_eos_sync_profile)."""
    rows = window_waits(profile).get("compiled" if compiled else "eager")
    if rows is None:
        return ""
    wait = (f"{float(rows['sync_us'].iloc[0]):.1f} µs per step (median)" if len(rows) == 1 else
            _over_windows(rows, "sync_us", " per step"))  # fmt: skip
    return (f"the synchronize after the flag's copy, measured, not judged: {wait}, with GPU work still queued when "
            f"the host issued the copy in {int(rows['sync_queued_steps'].sum())} of {int(rows['sync_steps'].sum())} "
            "steps")  # fmt: skip


def copy_running_text(waits: pd.DataFrame) -> str:
    """In how many of `tokgen.profiling.sync_wait`'s steps with a sync the flag's copy was still running on the GPU
    when the synchronize began (`copy_done_us` > 0), with what that count rests on; it says nothing of whether the
    copy call itself waited (notebook 06_eos_sync_profile's solution)."""
    timed = waits.dropna(subset=["sync_us", "copy_done_us"]) if len(waits) else waits
    if timed.empty:
        return "when the flag's copy finished, against the synchronize's start, was not recorded"
    running = int((timed["copy_done_us"] > 0).sum())
    return (f"the flag's copy was still running on the GPU when the synchronize began in {running} of {len(timed)} "
            "steps (the copy's end is a GPU time, the synchronize's start a host time: the count rests on the "
            "profiler's alignment of the two clocks); this count does not say whether the copy call itself waited for "
            "the copy")  # fmt: skip


def which_call_waits(waits: pd.DataFrame, full_profile_copy_us: float | None = None) -> str:
    """Solution 06's answer to "which call waits?" from a window's `tokgen.profiling.sync_wait` table, on its
    medians: the synchronize, for queued GPU work (`waited_for_queue`) or for the flag's copy (it ended after the
    synchronize began: about that long for the copy, the rest, `after_copy_us`, the call's own; review rv20A S4),
    or neither (the copy had ended before it began; the copy's end not recorded: the
    synchronize, not for queued work); in how many steps the flag's copy
    was still running when the synchronize began (`copy_running_text`); and the copy call's host time, under the
    full CPU-op profiler (`full_profile_copy_us`, a mean per call) and in this lighter profile (a median)
    (notebook 06_eos_sync_profile's solution)."""
    medians = sync_wait_row(waits)
    queued = waited_for_queue(medians)
    if queued is None:
        return "So, which one waits? Not measured: no step recorded a copy followed by a sync."
    landed = medians.get("copy_done_us", float("nan"))
    clocks = "by the profiler's alignment of the GPU's and the host's clocks"
    if queued:
        which = "The synchronize, and it waited for queued GPU work"
    elif abs(landed) < 0.05:  # prints as 0.0: neither before nor after, as far as the clocks tell
        which = ("The synchronize, though not for queued GPU work: the flag's copy ended as the synchronize began "
                 f"(median, {clocks}), so how much of its time was a wait this profile cannot tell")  # fmt: skip
    elif landed < 0:  # the copy had ended (median) before the synchronize began: nothing left to wait for
        which = ("Neither waited for the GPU in the median step: no work was queued and the flag's copy had ended "
                 f"{-landed:.1f} µs before the synchronize began ({clocks}), so the synchronize's time is the call's "
                 "own (the sentence above says how long)")  # fmt: skip
    elif landed > 0:  # the wait for the copy, then the call's own time (review rv20A S4)
        own = medians.get("after_copy_us", float("nan"))  # from the later of the copy's end and its start
        own = own if _finite(own) else medians.get("sync_us", float("nan")) - landed
        rest = f", the rest ({own:.1f} µs) its own" if math.isfinite(own) and own >= 0 else ""
        which = (f"The synchronize: about {landed:.1f} µs (median) for the flag's copy{rest}, not for queued GPU "
                 f"work (the copy ended {landed:.1f} µs after the synchronize began, median, {clocks})")  # fmt: skip
    else:
        which = ("The synchronize, though not for queued GPU work (the GPU had finished: the sentence above says what "
                 "its time holds)")  # fmt: skip
    running = copy_running_text(waits)
    said = f"So, which one waits? {which}. {running[0].upper()}{running[1:]}."
    if full_profile_copy_us is not None:
        said += (f" The copy call took {full_profile_copy_us:.1f} µs per call (mean) under the full CPU-op profiler "
                 f"and {medians['copy_call_us']:.1f} µs (median) in this lighter profile "
                 f"({COPY_CALL_UNSPLIT}).")  # fmt: skip
    return said


def gap_summary(gaps: pd.DataFrame, waits: dict | None = None) -> str:
    """The summary bullet on the sync's gap, read from the same test as `gap_takeaway`, and, per model in
    `waits`, what the sync waited for: {"eager": the recorded rows of every window (`window_waits`), ...}, each
    median over the windows with its range and the steps counted across them (`_waits_clause`), or one recorded
    sync-wait row (`tokgen.profiling.sync_wait_row`), said as that row's; then the gap with the sync against the
    article's, in each judged window (`size_sentence`, review rvA16 S2); a model with a judged window whose time with
    the sync is under MIN_GAP_US said so, not as one where more than half remains (review rr19b S3); every verdict
    of `pooled_verdict` has its clause, CORRECTION_DECIDES with where each pooled interval lies (`raw_corrected_sides`,
    review rv21A M2) (notebook 06_eos_sync_profile)."""
    text = "The per-step `.item()` synchronizes the host with the GPU at every step boundary"
    said = []
    for model, w in (waits or {}).items():
        if isinstance(w, pd.DataFrame):
            rows = w[[_synced(r) for _, r in w.iterrows()]]
            said += [f"{model}, {_waits_clause(rows)}"] if len(rows) else []
        elif waited_for_queue(w) is not None:
            said.append(f"{model}, {_wait_clause(w)}")
    text += "; " + "; ".join(said) if said else " (what it waited for is not measured here)"
    records = gaps.to_dict("records")
    judged = [g for g in records if _measured_cause(g)]
    if judged:  # each model's own clause: one may be judged while the other's cause is not measured (review rr16a M1)

        def models(test, corrected: bool, floored: bool | None = None) -> str:  # floored: some window under the floor
            return " and ".join(g["model"] for g in judged if test(g["sync_causes"])
                                and _corrected(g, "cause_corrected") == corrected
                                and floored in (None, bool(_floored(g))))  # fmt: skip

        shared = "the time before a step, from the work the steps share,"
        for corrected in (True, False):  # claim 6's one rule (review rr17c S1), the raw share said so (rr18b M1)
            measure = judged_on(SHARED_NOUN, corrected)
            split, opens = models(lambda c: c == "split", corrected), models(lambda c: c is True, corrected)
            if split:
                text += (f"; {split}, {measure}, the profiled windows disagree on whether {STOP_CHECK} opens the "
                         "time before a step, from the work the steps share (see the takeaways)")  # fmt: skip
            for g in judged:  # each model's own reason (reviews rv19A S2, rr20g M1, S1)
                if g["sync_causes"] is not UNDECIDED_WINDOW or _corrected(g, "cause_corrected") != corrected:
                    continue
                k, n = len(_listed(g, "undecided")), int(g["windows"])
                why = (_pooled_why(UNDECIDED_WINDOW) if _pooled(g, "pooled") else
                       f"the share's interval holds 0.5 in {'the one' if n == 1 else f'{k} of {n}'} profiled "
                       f"window{'s' * (n != 1)}")  # fmt: skip
                text += (f"; {g['model']}, {measure}, {why}, so whether {STOP_CHECK} opens the time before a step, "
                         "from the work the steps share, is not decided (see the takeaways)")  # fmt: skip
            for g in judged:  # the raw and the corrected pooled shares decide apart (review rv21A M2)
                if g["sync_causes"] != CORRECTION_DECIDES or _corrected(g, "cause_corrected") != corrected:
                    continue
                sides = (raw_corrected_sides(g["pooled"], g["pooled_raw"]) if _pooled(g, "pooled") and
                         _pooled(g, "pooled_raw") else "the pooled shares of the raw and the corrected times decide "
                         "apart")  # fmt: skip
                text += (f"; {g['model']}, {measure}, {sides}: whether {STOP_CHECK} opens {shared} is "
                         "not decided (the host-speed correction decides; see the takeaways)")  # fmt: skip
            if opens:
                text += (f"; {opens}, {measure}, at most half of {shared} remains without any stop check: "
                         f"{STOP_CHECK} opens most of it")  # fmt: skip
            if stays := models(lambda c: c is False, corrected, floored=False):
                text += (f"; {stays}, {measure}, more than half of {shared} remains without any stop check: "
                         f"{STOP_CHECK} does not open most of it (see the takeaways above for each model's gaps)")
            if floored := models(lambda c: c is False, corrected, floored=True):  # (review rr19b S3)
                text += (f"; {floored}, {measure}, {shared} is under {MIN_GAP_US} µs with the sync in some window "
                         "(launch spacing, nothing to explain; see the takeaways)")  # fmt: skip
        text += "".join(f"; {g['model']}, {_unmeasured_cause(g)}" for g in records if not _measured_cause(g))
        return text + "." + (f" {size}" if (size := size_sentence(gaps)) else "")
    return text + (". " + _unmeasured_cause(records[0] if records else None).capitalize() + ".")


def _unmeasured_cause(gap) -> str:
    """Why the stop check's share of the time before a step is not measured: no generator without a check was
    profiled, or its table predates the time from the work both steps share."""
    profiled = gap is not None and math.isfinite(float(gap.get("no_check_us", float("nan"))))
    last = TAIL_OPS - 1
    why = ("no time from the work the steps share is recorded for this pair (a table recorded before it, or a "
           f"synchronous step whose extra GPU operations are no whole count from 1 to {last})" if profiled else
           "the generator without any stop check was not profiled here")  # fmt: skip
    return f"{why}, so how much of the time before a step {STOP_CHECK} opens is not measured"


MOST = 0.5  # a phase "holds most of the time" above this share


def _phase_names(shares: dict) -> dict:
    """The measured phases' names, in order; without "model forward" ranges the launch phase runs from the
    step's start."""
    names = {c: PHASES[c] for c in PHASES if c in shares}
    if "forward_us" not in names and "launch_us" in names:
        names["launch_us"] = "step i starts → the first launch of step i"
    return names


def _calls_share(shares: dict) -> str:
    """The copy and sync calls' share as `_calls_clause` prints it: split by the phase after the forward, one decimal,
    the whole the sum of its rounded parts (`_calls_parts`), so the parts add up to the whole as printed; else whole
    percent."""
    split = CHECK_PHASE in shares and "gap_calls_us" in shares
    return f"{sum(_calls_parts(shares)):.1%}" if split else f"{shares['sync_copy_us']:.0%}"


def _calls_parts(shares: dict) -> tuple[float, float]:
    """The copy and sync calls' share within the phase after the forward and in the idle gap, each rounded to the
    one decimal of a percent it is printed with."""
    return round(shares["sync_copy_us"] - shares["gap_calls_us"], 3), round(shares["gap_calls_us"], 3)


def _calls_clause(shares: dict, beside: bool = False) -> str:
    """The copy and sync calls' share, and how much of it falls within the phase after the forward and how much in
    the idle gap (the copy call precedes it): the calls overlap the phases, so `phases_text` says their share is not
    one more part; `beside` (`phase_takeaway`, which takes them out of the phases: `_parts`) says it as one part
    beside the others: "the copy and sync calls take 5.7% (4.0% within the phase after the model's forward, the
    flag's copy call before the idle gap, and 1.7% in the idle gap)" (review rv20A S2)."""
    if shares["sync_copy_us"] == 0:
        return "it makes no copy or sync call"
    said = f"the copy and sync calls take {_calls_share(shares)}"
    if CHECK_PHASE in shares and "gap_calls_us" in shares:
        within, gap = _calls_parts(shares)
        said += (f" ({within:.1%} within the phase after the model's forward, the flag's copy call before the idle "
                 f"gap, and {gap:.1%} in the idle gap)" if beside else
                 f", a time counted within the phases, not beside them: {within:.1%} within the phase after the "
                 f"model's forward (the flag's copy call comes before the idle gap) and {gap:.1%} in the idle gap")
    return said


def _check_busy(phases: pd.DataFrame) -> str:
    """How much of the phase after the model's forward (`check_us`) the GPU ran an operation in (`check_busy_us`,
    over all boundaries), and that it was idle in the rest; "the GPU's busy time within it not recorded" where a
    table lacks the column."""
    if "check_busy_us" not in phases or phases["check_busy_us"].isna().all():
        return "the GPU's busy time within it not recorded"
    measured = phases.dropna(subset=["check_busy_us", CHECK_PHASE])
    total = measured[CHECK_PHASE].sum()
    if total <= 0:
        return "no time measured in it"
    busy = measured["check_busy_us"].sum() / total
    return f"its operations kept the GPU busy for {busy:.0%} of it, the GPU idle in the rest"


def _most_kept(share: float) -> str:
    """A phase's share in whole percent, or with decimals where whole ones would put it on or across MOST, the
    edge "most of it" is judged by, or on 0% or 100%: 0.4964 reads "49.6%", not "50%" beside "not most of it"
    (review rvA13 N1)."""
    return f"{side_of(100 * share, (0, 100 * MOST, 100), 0)}%".replace("-", "\u2212")


def _kept_alike(shares: list) -> list:
    """Shares said side by side (a span and a value beside it), all to one precision: one decimal of a percent, or
    more where one would put one of them on or across MOST, 0% or 100% (`_most_kept`'s edges): "50.1%" beside
    "51.1%–54.0%", never "50.1%" beside "51%–54%", nor "70%" beside "69%–70%" (review rv23A N4)."""
    edges = (0, 100 * MOST, 100)
    places = max(len(side_of(100 * x, edges, 1).partition(".")[2]) for x in shares)
    return [f"{100 * x:.{places}f}%".replace("-", "\u2212") for x in shares]


def phases_text(name: str, phases) -> str:
    """One generator's time from the end of step i−1's model forward on the GPU to step i's first operation
    (`tokgen.profiling.boundary_phases`), of which the idle gap before the step, split into its measured phases:
    each phase's median and share of the total time, the copy and sync calls' share, and the phase that holds
    most of it where one does (more than MOST), else the largest, of single phases, then the host's phases grouped as
    `phase_takeaway` groups them (`_host_total`), so that "the largest part" here and "holds most of it" there do not
    read as a contradiction (review rv21A S3), said "as the takeaways group them" only of the synchronous generators
    `phase_takeaway` reads (review rr21c N2); without forward ranges, the idle gap alone. `phases`: the
    boundaries (`boundary_phases`), or the row notebook 06 recorded from them (`boundary_row`'s medians and shares,
    so that the sentence is read from data/: review rv23A S2) (notebook 06_eos_sync_profile)."""
    if isinstance(phases, pd.DataFrame):
        shares = phase_shares(phases)
        medians = {c: float(phases[c].median()) for c in _phase_names(shares)}
        n, gap_us = len(phases), float(phases["gap_us"].median()) if len(phases) else float("nan")
        span_us = float(phases["span_us"].median()) if "span_us" in phases and len(phases) else float("nan")
    else:  # a recorded row
        shares = {c: float(phases[f"phase_{c}_share"]) for c in SHARE_COLUMNS
                  if math.isfinite(float(phases.get(f"phase_{c}_share", float("nan"))))}  # fmt: skip
        medians = {c: float(phases[f"phase_{c}_median_us"]) for c in _phase_names(shares)}
        n, gap_us, span_us = int(phases["picture_boundaries"]), phases["picture_gap_us"], phases["picture_span_us"]
    if not shares:
        return f"`{name}`: no step boundary with GPU work on both sides was recorded."
    names = _phase_names(shares)
    parts = [f"{names[c]} {medians[c]:.1f} µs ({_most_kept(shares[c])})" for c in names]
    top = max(names, key=shares.get)
    holds = "holds most of it" if shares[top] > MOST else "is the largest part, though not most of it"
    gap = f"{gap_us:.1f} µs"
    head = f"the idle gap {gap} (median over {n} boundaries)"
    if CHECK_PHASE in shares:
        head = (f"from the end of step i−1's model forward on the GPU to step i's first operation "
                f"{span_us:.1f} µs, of which the GPU's idle gap before the step {gap} (medians "
                f"over {n} boundaries)")  # fmt: skip
    grouped = ""
    if len(host := [c for c in HOST_PHASES if c in names]) > 1:  # the takeaways' grouping, said (review rv21A S3)
        calls = ", less the copy and sync calls' time in the idle gap" if _parts(shares)[1] > 0 else ""
        total = f"{_parts(shares)[2]:.1%}"
        taken = name in {label("kv_static", compiled=c) for c in (False, True)}  # those with a takeaway (rr21c N2)
        grouped = (f" (of single phases; grouped as the takeaways group them, the host's other work before the "
                   f"step's first launch, its {len(host)} phases together{calls}, holds {total})" if taken else
                   f" (of single phases; the host's {len(host)} phases before the step's first launch together"
                   f"{calls}, hold {total})")  # fmt: skip
    return (f"`{name}`: {head}; medians (share of the total time): {'; '.join(parts)}. "
            f"{_calls_clause(shares)[0].upper()}{_calls_clause(shares)[1:]}; '{names[top]}' {holds}"
            f"{grouped}.")  # fmt: skip


def picture_widening(summary: pd.DataFrame) -> str:
    """Per window (the table's numbering), the idle gap before a step in the pictures' pass (`picture_gap_us`: CPU
    ranges and every operator recorded) less the statistics' pass's (`idle_gap_median_us`), with the sync and
    with no stop check, per model: the phases are the pictures' pass, so their spans set side by side across
    generators are not claim 6's test, which the statistics' pass decides. It names no cause of the difference
    (notebook 06_eos_sync_profile)."""
    if not {"picture_gap_us", "idle_gap_median_us", "variant"} <= set(summary):
        return "*The pictures' pass's gaps are not recorded in this table.*"
    s = last_attempts(summary) if "window" in summary else summary.assign(window=0)  # (review rv21A N4)
    windows = sorted(int(w) for w in s["window"].unique())
    parts = []
    for compiled in (False, True):
        for g in ("kv_static", "kv_static_no_check"):
            rows = s[s["variant"] == label(g, compiled=compiled)].drop_duplicates("window").set_index("window")
            if rows.empty:
                continue
            wider = rows["picture_gap_us"] - rows["idle_gap_median_us"]
            said = [with_sign(wider[w]) if w in wider.index and math.isfinite(wider[w]) else "—" for w in windows]
            parts.append(f"`{label(g, compiled=compiled)}` {', '.join(said)} µs")
    if not parts:
        return "*No synchronous or no-check generator was profiled here.*"
    return (f"The idle gap before a step in the pictures' pass less that in the statistics' pass, per window "
            f"({', '.join(map(str, windows))}): {'; '.join(parts)}. The phases above come from the pictures' pass: "
            "their times are not the statistics, and two generators' spans set side by side there are not claim "
            "6's test, which the statistics' pass decides (section 5).")  # fmt: skip


HOST_PART = "the host's other work before the step's first launch"  # `phase_takeaway`'s parts, as it names them
CHECK_PART = "the argmax, append and stop check after the forward"


def _parts(shares: dict) -> tuple[dict, float, float]:
    """`phase_takeaway`'s parts from one pass's phase shares (`phase_shares`): {part: share} as `_answer` weighs them,
    the copy and sync calls counted inside the host's phases (`in_gap`) and the host's other work (`host`), the sum of
    its phases as printed (`_host_total`), so that "most of it" is decided on the total the takeaway prints (review
    rr21c S2). The calls are one part, taken out of both phases they fall in (the check's phase and the host's), so
    the parts do not overlap and add up to the whole (review rv20A S2)."""
    in_gap = shares.get("gap_calls_us", shares["sync_copy_us"]) if CHECK_PHASE in shares else shares["sync_copy_us"]
    host = _host_total(shares, shares, in_gap)  # as printed, so "most" is decided on it (review rr21c S2)
    parts = {HOST_PART: host, "the copy and sync calls": shares["sync_copy_us"],
             "the launch's own latency": shares["start_us"]}  # fmt: skip
    if CHECK_PHASE in shares:  # less its own calls too, as the host's phases are: parts that do not overlap (rv20A S2)
        parts[CHECK_PART] = shares[CHECK_PHASE] - (shares["sync_copy_us"] - in_gap)
    return parts, in_gap, host


def window_parts(rows: pd.DataFrame, numbers: bool = False) -> list:
    """Per window of notebook 06's profile (`rows`: one generator's rows), `_parts` of the phase shares its pictures'
    pass recorded (`boundary_row`'s `phase_<key>_share`); [] where the table has none (a table recorded before them);
    with `numbers`, those windows' numbers (the rows' `window`, else 0, 1, ...) instead (reviews rv19A S3, rr20g N6;
    notebook 06_eos_sync_profile)."""
    out = []
    rows = rows if rows is not None else pd.DataFrame()
    for i, (_, row) in enumerate(rows.iterrows()):
        shares = {c: float(row[f"phase_{c}_share"]) for c in SHARE_COLUMNS if _finite(row.get(f"phase_{c}_share"))}
        if "sync_copy_us" in shares and "start_us" in shares:
            out.append(int(row["window"]) if numbers and _finite(row.get("window")) else i if numbers else
                       _parts(shares)[0])  # fmt: skip
    return out


def _most_over(top: str, parts: dict, per_window: list, numbers: list | None = None, pictured: int = 0,
               apart: str = "", named: dict | None = None) -> str:  # fmt: skip
    """`_answer`'s "most" over every window's pictures' pass (`window_parts`, review rv19A S3): "holds most of it in all
    6 windows (shares 51%–58%; 52% in window 0, the one pictured)" where it does in each, "in the one window" where
    there is one; else "no part holds most of it in every window: … holds most of it in 4 of 6 windows (shares
    47%–58%; …)"; the span over the windows that measured the part, those that did not named (review rr20g N6).
    `numbers`: the windows' numbers (default 0, 1, ...), `pictured` the one whose phases `parts` are; `apart`, where
    the calls were taken out of the other parts, says so beside the span ("each without the copy and sync calls'
    time": a share just over half is most of the whole only so, review rv20A N4); `named`, the parts' names as said
    (the host's phases "together", `_part_names`)."""
    named = named or {}
    n, mine = len(per_window), [w.get(top, float("nan")) for w in per_window]
    numbers = list(range(n)) if numbers is None else list(numbers)
    held = sum(x > MOST and x == max(w.values()) for x, w in zip(mine, per_window))
    finite = [x for x in mine if math.isfinite(x)]
    lo, hi, pictured_share = _kept_alike([min(finite), max(finite), parts[top]] if finite else [0.0, 0.0, parts[top]])
    span = (f"shares {lo}–{hi}" if len(finite) > 1 else f"share {lo}" if finite else "not measured")
    if unmeasured := [w for x, w in zip(mine, numbers) if not math.isfinite(x)]:
        span += f"; not measured in {windows_named(unmeasured)}"
    if apart and top != "the copy and sync calls":  # "most" of parts that do not overlap (review rv20A N4)
        span += f", each {apart}"
    here = f"{pictured_share} in window {pictured}, the one pictured"  # one precision with the span (rv23A N4)
    verb, share, top = "hold" if top == "the copy and sync calls" else "holds", parts[top], named.get(top, top)
    if held == n and share > MOST:
        where = "in the one window" if n == 1 else f"in all {n} windows"
        return f"{top} {verb} most of it {where} ({span}; {here})"
    return (f"no part holds most of it in every window: {top} {verb} most of it in {held} of {n} windows ({span}; "
            f"{here})")  # fmt: skip


HOST_PHASES = ("host_us", "forward_us", "launch_us")  # the phases HOST_PART sums


def _part_names(names: dict) -> dict:
    """`_answer`'s names of the parts as said: the host's other work, where it sums more than one measured phase,
    "(its N phases together)", as no one phase of it need hold what they do together (`phases_text` names the
    largest single phase: review rv20A S2)."""
    n = sum(c in names for c in HOST_PHASES)
    return {HOST_PART: f"{HOST_PART} (its {n} phases together)"} if n > 1 else {}


def _host_sum(shares: dict, names: dict, in_gap: float) -> str:
    """The host's other work as `phase_takeaway` sums it: each measured phase of it named with its share, "together"
    where more than one, less the copy and sync calls' time in the idle gap (counted in the first of them) where
    there is any: "its 3 phases together, 'a' 12.1% + 'b' 22.9% + 'c' 18.5%, less the 1.7% of copy and sync call time
    in the idle gap" (review rv20A S2), each to one decimal, so that the total printed beside it (`_host_total`) is
    their sum (review rv21A N1)."""
    mine = [c for c in HOST_PHASES if c in names]
    summed = " + ".join(f"'{names[c]}' {_printed(shares[c]):.1%}" for c in mine)  # as `_host_total` sums them
    said = f"its {len(mine)} phases together, {summed}" if len(mine) > 1 else summed
    return f"{said}, less the {_printed(in_gap):.1%} of copy and sync call time in the idle gap" if in_gap > 0 else said


def _printed(share: float) -> float:
    """`share` as printed to one decimal of a percent, read back from the printed text: 0.0545 prints "5.5%", so 0.055
    (`round(0.0545, 3)` gives 0.054: review rr21c S2)."""
    return float(f"{share:.1%}"[:-1]) / 100


def _host_total(shares: dict, names: dict, in_gap: float) -> float:
    """The host's other work as `phase_takeaway` prints it: the sum of its phases' shares as `_host_sum` prints them
    (`_printed`: to one decimal of a percent), less the calls' time in the idle gap as printed, so the printed parts
    add up to the printed total: 11.7% + 22.6% + 18.7% − 2.0% is 51.0%, printed before as 12% + 23% + 19% beside 51%
    (review rv21A N1, rr21c N4). `_parts` takes it as the host's part, so "most of it" is decided on this total: parts
    of 11.749% + 22.649% + 18.649% − 3.044% (50.003%) print 49.9%, not most of it (review rr21c S2)."""
    mine = [c for c in HOST_PHASES if c in names]
    return round(sum(_printed(shares[c]) for c in mine) - (_printed(in_gap) if in_gap > 0 else 0.0), 3)


def _answer(shares: dict, host: float, names: dict, in_gap: float = 0.0, per_window: list | None = None,
            numbers: list | None = None, pictured: int = 0) -> str:  # fmt: skip
    """`phase_takeaway`'s answer to "the sync or the host's work?": of its parts (the argmax, append and stop check
    after the forward; the copy and sync calls; the host's other work before the first launch, `host`; the launch's
    own latency), the one that holds most of the time (more than MOST) where one does, else "no part holds most of
    it" with the largest, then the copy and sync calls' share beside it; where one phase of the host's other work
    alone holds most of the time, that phase too (review rvA15 S5), less the copy and sync calls within it (`in_gap`,
    the calls `tokgen.profiling.boundary_phases` counts inside "host_us"), so the calls' time is never named twice,
    once as the calls and once as the host's other work (review rr15 S1). With `per_window` (`window_parts`), "most"
    is said only where every window's pictures' pass agrees (`_most_over`, review rv19A S3)."""
    calls = "the copy and sync calls"
    parts = _parts(shares)[0]
    top = max(parts, key=parts.get)
    named = _part_names(names)  # the host's phases "together" (review rv20A S2)
    said = (f"{named.get(top, top)} {'hold' if top == calls else 'holds'} most of it ({_most_kept(parts[top])})"
            if parts[top] > MOST else
            f"no part holds most of it: the largest is {named.get(top, top)}, {_most_kept(parts[top])}")  # fmt: skip
    if per_window:
        apart = "without the copy and sync calls' time" if shares["sync_copy_us"] > 0 else ""
        said = _most_over(top, parts, per_window, numbers, pictured, apart, named)
    if top != calls:
        said += f"; {calls} {_calls_share(shares)}" if shares["sync_copy_us"] > 0 else "; it makes no copy or sync call"
    other = {c: shares[c] - (in_gap if c == "host_us" else 0.0) for c in ("host_us", "forward_us", "launch_us")
             if c in names}  # fmt: skip
    phase = max(other, key=other.get) if other else None
    if phase is not None and other[phase] > MOST:
        without = " without its copy and sync calls" if phase == "host_us" and in_gap > 0 else ""
        said += (f"; one phase of the host's other work alone holds most of it, '{names[phase]}'{without} "
                 f"({_most_kept(other[phase])})")  # fmt: skip
    return said


def phase_takeaway(model: str, phases: pd.DataFrame, windows: pd.DataFrame | None = None, pictured: int = 0) -> str:
    """Notebook 06's answer to "the sync or the host's work?" for one model's synchronous generator, from its
    phases (`phase_shares`) from the end of step i−1's model forward on the GPU to step i's first operation: the
    append and the stop check after the forward (its kernels and the flag's copy, and the GPU's idle time between
    them: `_check_busy`; it ends where the idle gap before a step begins), the copy and sync calls (counted within
    the phases: `_calls_clause`), the host's other work before the first launch, and the answer: the part of these
    that holds most of the time where one does, else the largest, beside the copy and sync calls (`_answer`); with
    `windows` (the generator's rows of notebook 06's profile), "most" only where every window's pictures' pass agrees
    (`window_parts`; review rv19A S3), the phases' own window named as `pictured` (notebook 06's pictures are its
    window 0: review rr20g N6) (notebook 06_eos_sync_profile)."""

    shares = phase_shares(phases)
    if not shares:
        return f"{model.capitalize()}: the gap's phases were not measured."
    _, in_gap, host = _parts(shares)
    said = _answer(shares, host, _phase_names(shares), in_gap, window_parts(windows),
                   window_parts(windows, numbers=True), pictured)  # the phases are window `pictured`'s (rr20g N6)
    names, parts = _phase_names(shares), _parts(shares)[0]
    if CHECK_PHASE in shares:
        span = "of the time from the end of step i−1's model forward on the GPU to step i's first operation"
        within = _calls_parts(shares)[0] if "gap_calls_us" in shares else 0.0
        less = f"{shares[CHECK_PHASE]:.0%} less the copy call's {within:.1%} within it; " if within > 0 else ""
        check = (f"the token's argmax and append and the stop check after the forward take {parts[CHECK_PART]:.0%} "
                 f"({less}from the forward's last GPU operation to the flag's copy's end: {_check_busy(phases)}; "
                 "the idle gap before a step is measured from the copy's end, so it does not count this "
                 "phase), ")  # fmt: skip
    else:
        span, check = "of the GPU's idle gap before a step", ""
    if shares["sync_copy_us"] > 0:  # one part, taken out of the phases it falls in (review rv20A S2)
        span += ", in parts that do not overlap (the copy and sync calls' time taken out of the phases it falls in)"
    calls = _calls_clause(shares, beside=True)
    return (f"{model.capitalize()}, with the sync, in the pictures' pass, {span}: {check}{calls}, "
            f"the host's other work before the step's first launch {_host_total(shares, names, in_gap):.1%} "
            f"({_host_sum(shares, names, in_gap)}), "
            f"the launch's own latency {shares['start_us']:.0%}; {said}.")  # fmt: skip


def pipelined_gap(profile: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    """Notebook 06's idle gaps, one paragraph per model: its pipelining bullet (`gap_takeaway`'s, `_piped`) with the
    gap with no stop check too, not its cause bullet (review rr19b S2), beside this run's GPU share of the synchronous
    step (its GPU busy time over its median wall time, over the rounds every interleaved variant ran:
    `tokgen.stats.shared_rounds`), where both ran in the same run (`tokgen.results.other_runs`: commit, GPU and slice;
    else one paragraph saying so; notebook 07_pipelining)."""
    if found := other_runs(profile):  # rows that bypassed rows_at(..., this_run=True): another run's gaps
        return [f"Notebook 06's profile in this results folder holds {found}, not this run's ({this_run_text()}): "
                "run notebook 06 here first to compare their idle gaps."]  # fmt: skip
    gaps = idle_gaps(profile)  # every attempt: it judges each window's last (`last_attempts`, review rv21A N4)
    if gaps.empty:
        return ["Notebook 06's profile holds no idle gaps here: they are measured on a GPU."]
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
        sentences.append(f"Notebook 06{profiled}. " + _piped(gap, no_check=True) + (
            f" In this run{at} the GPU is busy {share:.0%} of a synchronous step{pace}." if share == share else ""))
    return sentences


def steps_text(start: int, stop: int) -> str:
    """Steps [start, stop) as the pages write them: "steps 30–49" (notebook 06_eos_sync_profile)."""
    return f"steps {start}–{stop - 1}"


def profiled_window_text(batch_size: int, max_seqlen: int, window, skip: int = WINDOW_SKIP, where: str = "") -> str:
    """The profiled window and the steps its statistics cover (notebook 06_eos_sync_profile): steps
    [window[0], window[1]) profiled, the first `skip` (WINDOW_SKIP: the profiler drained the GPU) left
    out; `where` (`tokgen.display.where_measured`) goes first."""
    start, stop = window
    return (f"{where + ' ' if where else ''}B = {batch_size}, N = {max_seqlen}, {steps_text(start, stop)} "
            f"profiled; the statistics leave out the first {skip}: {steps_text(start + skip, stop)}.")


def busy_times_text(naive_us: float, kv_us: float) -> str:
    """The solution of notebook 06_eos_sync_profile, exercise 1: the two GPU busy times per step (one
    profile each, the median over its window's steps) and which is larger, a ranking only: no ratio of
    two single profiles' medians."""
    which = "naive's" if naive_us > kv_us else "the KV cache's" if kv_us > naive_us else "neither"
    return (f"GPU busy time per step, one profile each: naive {naive_us:,.1f} µs, the static KV cache "
            f"{kv_us:,.1f} µs; {which} is the larger (a ranking of two profiles only).")


def _profiled_run(rows: pd.DataFrame, window=None, size: str | None = None) -> tuple[pd.DataFrame, str]:
    """Notebook 06's rows (`busy_spread_text`) kept to those profiled at the reader's `window` and model `size` where
    the rows record them (their `params`), and what they were: "steps 30–49 of gpt2 on the NVIDIA H200", or "its
    `WINDOW`" where the rows record neither (review rr20g N7)."""
    if "params" not in rows:
        return rows, "its `WINDOW`"
    params = [json.loads(p) if isinstance(p, str) else {} for p in rows["params"]]
    keep = [(window is None or p.get("WINDOW") == list(window)) and (size is None or p.get("SIZE") == size)
            for p in params]  # fmt: skip
    rows, params = rows[keep], [p for p, k in zip(params, keep) if k]
    if not len(rows) or not isinstance(params[0].get("WINDOW"), list):
        return rows, "its `WINDOW`"
    start, stop = params[0]["WINDOW"]
    gpu = f" on the {rows['gpu'].iloc[0]}" if "gpu" in rows else ""
    return rows, f"{steps_text(start, stop)} of {params[0].get('SIZE', 'its model')}{gpu}"


def busy_spread_text(naive_us: float, kv_us: float, windows: pd.DataFrame | None, window=None,
                     size: str | None = None) -> str:  # fmt: skip
    """How far one profile's GPU busy time per step can be trusted, from the static cache's busy time per step in
    the windows notebook 06 profiled (`windows`: its `kv_static` rows, one per window), those at the reader's
    `window` and `size` where the rows record them, named by their steps, model and GPU (`_profiled_run`, review
    rr20g N7): their range and its width as a share of their median, against the two profiles' difference as a share
    of the static cache's time, the windows counted once each, by their judged attempt (review rv23A N1); "" where
    fewer than 2 windows recorded it (review rv19A N9; notebook 06_eos_sync_profile's solution)."""
    if windows is None or "gpu_busy_per_step_us" not in windows:
        return ""
    windows, which = _profiled_run(last_attempts(windows), window, size)  # a re-profile's repeat (review rv21A N4)
    if "window" in windows:
        windows = windows.drop_duplicates("window")
    values = pd.to_numeric(windows["gpu_busy_per_step_us"], errors="coerce").dropna()
    if len(values) < 2 or not values.median() > 0 or not kv_us > 0:
        return ""
    lo, hi, mid = float(values.min()), float(values.max()), float(values.median())
    width, diff = (hi - lo) / mid, abs(naive_us - kv_us) / kv_us
    than = "wider than" if diff > width else "within"
    return (f" Notebook 06 profiled the static cache's window ({which}) in {len(values)} windows (each window's "
            f"judged attempt): GPU busy time per step {lo:,.1f}–{hi:,.1f} µs, a spread of "
            f"{width:.1%} of their median; the two profiles here differ by "
            f"{diff:.0%} of the static cache's time, {than} that spread (another run's profiles: a guide, not a "
            "test).")  # fmt: skip


def naive_work_text(kv: dict, naive: dict, window, windows: pd.DataFrame | None = None,
                    size: str | None = None) -> str:  # fmt: skip
    """The solution of notebook 06_eos_sync_profile, exercise 1: which generator gives the GPU more work per
    step in `window`, from the two profiles' busy times (`busy_times_text`), and for naive's smaller work
    the kernels per step and their average time, and the most positions naive re-runs; for its larger work, the
    positions it re-runs; both at the steps its statistics cover (`_counted_steps`, reviews rv21A S4, rr21c N3), a
    result of this window, not of the construction (review rv21A S4). With `windows`
    (notebook 06's `kv_static` rows), the spread of busy time across its windows beside the two profiles'
    difference (`busy_spread_text`, review rv19A N9), of the rows at `window` and model `size` (review rr20g N7)."""
    busy = busy_times_text(naive["gpu_busy_per_step_us"], kv["gpu_busy_per_step_us"])
    busy += busy_spread_text(naive["gpu_busy_per_step_us"], kv["gpu_busy_per_step_us"], windows, window, size)
    first, last = _counted_steps(naive, window)  # both branches: the steps its statistics cover (review rr21c N3)
    if naive["gpu_busy_per_step_us"] > kv["gpu_busy_per_step_us"]:  # at this window only (review rv21A S4)
        return (f"{busy} Naive gives the GPU more work per step at this window: at {steps_text(first, last + 1)} it "
                f"re-runs {first + 1}–{last + 1} positions a step (its one prompt token and the tokens so far), which "
                "here costs more than one token's step over the static cache, whose attention runs over all its "
                "slots; which costs more depends on the window's position. Its idle share is one profile's host "
                "time, not compared here.")  # fmt: skip
    each = {k: r["gpu_busy_per_step_us"] / r["kernels_per_step"] for k, r in (("kv", kv), ("naive", naive))}
    return (f"{busy} Naive gives the GPU no more work per step: {naive['kernels_per_step']:.0f} kernels per step "
            f"against the static cache's {kv['kernels_per_step']:.0f}, which take {each['kv']:.1f} µs each on "
            f"average (naive's {each['naive']:.1f} µs). In {steps_text(first, last + 1)} naive re-runs at most "
            f"{last + 1} positions: its work grows with the step and the cache's does not, so a later window can "
            "reverse this.")


def _counted_steps(row, window) -> tuple[int, int]:
    """The first and last step a profile's statistics cover, read from its row's `statistics_steps` ("32–49", as the
    solution of notebook 06 records it); without it, `window`'s steps less the first WINDOW_SKIP (review rv21A S4)."""
    said = str(row.get("statistics_steps", "")) if hasattr(row, "get") else ""
    if len(parts := said.replace("-", "–").split("–")) == 2 and all(p.strip().isdigit() for p in parts):
        return int(parts[0]), int(parts[1])
    return int(window[0]) + WINDOW_SKIP, int(window[1]) - 1


def late_window_text(name: str, gaps: list, busy: list, early, late, skip: int = WINDOW_SKIP) -> str:
    """The solution of notebook 06_eos_sync_profile, exercise 2: over interleaved pairs of profiles of an
    early and a late window (`early`, `late`: [start, stop)), the idle gap's direction by notebook 06's
    rule (`direction_text`), then the median over the pairs of the GPU busy time per step in each
    (`gaps`, `busy`: (early, late) per pair). The steps named are those the statistics cover, each window's
    first `skip` (WINDOW_SKIP) left out (review rv19A N2); a gap that changes is host time, its cause not measured
    here (rv19A N2)."""
    first, later = (steps_text(start + skip, stop) for start, stop in (early, late))
    moved = direction(gaps)
    gap = direction_text(moved, len(gaps), f"at {later}", f"at {first}")
    a, b = (statistics.median(x) for x in zip(*busy))
    why = (" The idle gap is host time, the GPU waiting for the host: what changes it between the windows is not "
           "measured here.") if moved in ("larger", "smaller") else ""  # fmt: skip
    return (f"`{name}`, over {len(gaps)} interleaved pairs of profiles: {gap}. Its GPU busy time per step, median "
            f"over the pairs: {a:,.1f} µs at {first}, {b:,.1f} µs at {later}.{why}")
