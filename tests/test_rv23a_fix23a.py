"""Reviews rv23A S3, N1, N4 and rv23B N2 on notebook 06's sentences (the CPU side of fix23a): the stop check's
time per step is not read as the check's in a window whose host-speed ratio is flagged; the pictured window's
share and the span beside it are said to one precision; the windows re-profiled for another pass's ratio are named
with the others. Made-up rows with known ratios (`test_rv21a_reprofile._rows`)."""

from pathlib import Path

import pandas as pd
import pytest
from test_rv21a_reprofile import BASE, _rows

import tokgen
from tokgen import gaps

ROOT = Path(__file__).resolve().parents[1]

SIGNED = "the time from the shared work with the sync less that with no stop check: "


def _gap(rows) -> pd.Series:
    return gaps.idle_gaps(pd.DataFrame(rows).assign(gpu_idle_fraction=0.5)).set_index("model").loc["eager"]


def test_the_stop_check_adds_is_not_said_where_a_windows_host_speed_ratio_is_flagged():
    """Review rv23A S3: compiled window 3's 293 µs (host-speed ratio 1.68) was said as what "the stop check adds".
    Six windows 20 µs or more apart read "the stop check adds" with every ratio inside 0.8–1.25; one flagged ratio
    turns it into the signed differences, the flagged window named (the notebook's rows and claim 6 alike)."""
    pairs = [(300.0, 152.0), (300.0, 227.0), (300.0, 222.0), (500.0, 207.0), (300.0, 199.0), (300.0, 219.0)]
    inside = [1.0, 1.1, 0.9, 1.2, 1.0, 1.0]
    assert gaps.check_adds(pairs, range(6), inside) == (
        "the stop check adds 148, 73, 78, 293, 101 and 81 µs per step in windows 0–5"
    )
    flagged = [1.0, 1.1, 0.9, 1.68, 1.0, 1.0]
    assert gaps.check_adds(pairs, range(6), flagged) == (
        f"{SIGNED}+148, +73, +78, +293, +101 and +81 µs per step in windows 0–5 (host-speed ratio 1.68 in window 3, "
        "flagged: its difference not read as the stop check's)")  # fmt: skip
    two = [0.7, 1.1, 0.9, 1.68, 1.0, 1.0]
    assert gaps.check_adds(pairs, range(6), two).endswith(
        "(host-speed ratio 0.70 and 1.68 in windows 0 and 3, flagged: their differences not read as the stop check's)"
    )
    assert gaps.check_adds(pairs) == gaps.check_adds(pairs, range(6), inside)  # no ratio: as before
    # through notebook 06's takeaways (`idle_gaps`): the judged windows' ratios
    assert _gap(_rows(BASE))["check_adds"] == "the stop check adds 110, 110, 110, 110, 110 and 110 µs per step in " \
                                              "windows 0–5"  # fmt: skip
    assert _gap(_rows({**BASE, 3: 1.68}))["check_adds"] == (
        f"{SIGNED}+110, +110, +110, +110, +110 and +110 µs per step in windows 0–5 (host-speed ratio 1.68 in window "
        "3, flagged: its difference not read as the stop check's)")  # fmt: skip


def test_the_pictured_windows_share_and_the_span_are_said_to_one_precision():
    """Review rv23A N4: "shares 51%–54%; 50.1% in window 0" and "69%–70% ... 70% in window 0" (69.7%): one decimal
    for all three, more where one would put a value on 50% (`MOST`)."""
    assert gaps._kept_alike([0.511, 0.540, 0.501]) == ["51.1%", "54.0%", "50.1%"]
    assert gaps._kept_alike([0.69, 0.70, 0.697]) == ["69.0%", "70.0%", "69.7%"]
    assert gaps._kept_alike([0.5004, 0.6, 0.55]) == ["50.04%", "60.00%", "55.00%"]  # not "50.0%" beside "most"
    part, calls = gaps.HOST_PART, "the copy and sync calls"
    windows = [{part: 0.511, calls: 0.1}, {part: 0.540, calls: 0.1}]
    said = gaps._most_over(part, {part: 0.501, calls: 0.1}, windows)
    assert said == f"{part} holds most of it in all 2 windows (shares 51.1%–54.0%; 50.1% in window 0, the one pictured)"


def test_windows_profiled_again_for_another_passs_ratio_are_named():
    """Review rv23B N2: windows 1 and 2 were profiled again (for the pipelined pass's ratio) with their own no-check
    ratio inside the band on both attempts; their repeats are judged, and the sentence now names them beside window 0,
    whose own ratio left the band."""
    first = {0: 2.0, 1: 1.2, 2: 1.1}
    said = gaps.reprofile_text([0, 1, 2, 3], [1.1, 1.15, 1.0, 1.2], first)
    assert said.startswith("window 0 was profiled again, its first attempt's host-speed ratio 2.00 outside 0.8–1.25")
    assert said.endswith("; windows 1 and 2 were also profiled again for another pass's ratio, and their repeats are "
                         "judged")  # fmt: skip
    assert gaps.reprofile_text([0, 1], [1.1, 1.0], {1: 1.2}) == (
        "window 1 was profiled again for another pass's ratio, and the repeat is judged"
    )
    assert gaps.reprofile_text([0, 1], [1.1, 1.0], {}) == ""
    rows = _rows({**BASE, 0: 2.0, 1: 1.2, 2: 1.1}) + _rows({0: 1.1, 1: 1.15, 2: 1.0}, attempt=1)
    shares = _gap(rows)["no_check_shares"]
    assert "windows 1 and 2 were also profiled again for another pass's ratio, and their repeats are judged" in shares


@pytest.mark.parametrize("n", [1, 3])
def test_the_solutions_busy_spread_counts_windows_not_profiles(n):
    """Review rv23A N1: notebook 06 profiled windows 0–2 twice (9 profiles); the solution's spread is over the 6
    windows' judged attempts, and says so ("in 6 windows (each window's judged attempt)", not "6 times")."""
    rows = pd.DataFrame([{"window": w, "attempt": a, "gpu_busy_per_step_us": 100.0 + w + 10 * a}
                         for w in range(6) for a in ((0, 1) if w < n else (0,))])  # fmt: skip
    said = gaps.busy_spread_text(150.0, 100.0, rows)
    assert "in 6 windows (each window's judged attempt): GPU busy time per step" in said
    assert "6 times" not in said


def _boundaries() -> pd.DataFrame:
    """Three boundaries of a synchronous pass (µs), the phases adding up to each span; the third a slow one, so that
    each phase's median differs from its mean (review rr23a N1: span median 1000, mean 1600)."""
    return pd.DataFrame(
        [
            {"step": 1, "span_us": 1000.0, "gap_us": 550.0, "check_us": 450.0, "host_us": 124.6, "forward_us": 234.6,
             "launch_us": 186.0, "start_us": 4.8, "sync_copy_us": 57.0, "gap_calls_us": 20.0, "check_busy_us": 43.0},
            {"step": 2, "span_us": 800.0, "gap_us": 500.0, "check_us": 300.0, "host_us": 100.0, "forward_us": 200.0,
             "launch_us": 190.0, "start_us": 10.0, "sync_copy_us": 40.0, "gap_calls_us": 10.0, "check_busy_us": 30.0},
            {"step": 3, "span_us": 3000.0, "gap_us": 2400.0, "check_us": 600.0, "host_us": 900.0, "forward_us": 1300.0,
             "launch_us": 190.0, "start_us": 10.0, "sync_copy_us": 50.0, "gap_calls_us": 30.0, "check_busy_us": 40.0},
        ]
    )  # fmt: skip


def test_the_phases_sentence_reads_the_same_from_the_recorded_row(tmp_path):
    """Review rv23A S2: section 3's phase medians (599.9 µs, 74.7 µs, ...) were read from the in-memory timeline
    only. `boundary_row` records them (`picture_span_us`, `picture_boundaries`, `phase_<key>_median_us`) and
    `phases_text` of the row read back from a CSV is the sentence of the boundaries themselves; known medians: span
    1000, host 124.6, forward 234.6 µs over 3 boundaries (means 1600, 374.9, 578.2: rr23a N1)."""
    from tokgen import profiling

    df = _boundaries()
    row = profiling.boundary_row(df)
    assert (row["picture_span_us"], row["picture_boundaries"]) == (1000.0, 3)
    assert (row["picture_gap_us"], row["picture_check_us"]) == (550.0, 450.0)
    assert (row["phase_host_us_median_us"], row["phase_forward_us_median_us"]) == pytest.approx((124.6, 234.6))
    pd.DataFrame([{"variant": "kv_static", **row}]).to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv").iloc[0]
    said = gaps.phases_text("kv_static", back)
    assert said == gaps.phases_text("kv_static", df)
    assert "first operation 1000.0 µs, of which the GPU's idle gap before the step 550.0 µs (medians over 3" in said
    no_forward = df.assign(forward_us=float("nan"), check_us=float("nan"), span_us=df["gap_us"])
    assert gaps.phases_text("x", pd.Series(profiling.boundary_row(no_forward))) == gaps.phases_text("x", no_forward)
    empty = df.iloc[:0]
    assert gaps.phases_text("x", pd.Series(profiling.boundary_row(empty))) == gaps.phases_text("x", empty)


def _section_3_cell() -> str:
    """Notebook 06 section 3's CUDA-only cell that reads window 0's judged attempt (sync waits, phases), as source."""
    src = (ROOT / "notebooks" / "06_eos_sync_profile.py").read_text()
    start = src.index("sync_names, waits, phases = {}, {}, {}")
    return src[start : src.index("\n# %%", start)]


def _run_section_3(profile: pd.DataFrame, monkeypatch) -> list[str]:
    """The cell's own source executed with CUDA faked on, as the H200 runs it: `profile` as `rec.read()` holds it, the
    summary as section 2 makes it, every variant pictured; each picture's boundaries are `_boundaries()`' first two
    (a fake `boundary_phases`), so that a sentence read from them says "over 2 boundaries"; what it says."""
    from tokgen import profiling

    assert "summary = tokgen.gaps.last_attempts(profile)" in (ROOT / "notebooks" / "06_eos_sync_profile.py").read_text()
    monkeypatch.setattr(profiling, "boundary_phases", lambda tl: _boundaries().iloc[:2])
    names = list(dict.fromkeys(profile["variant"]))
    said = []
    exec(_section_3_cell(), {"tokgen": tokgen, "CUDA": True, "first_window": {n: None for n in names},
                             "drawn": {n: f"timeline of {n}" for n in names}, "profile": profile,
                             "summary": gaps.last_attempts(profile), "say": said.append})  # fmt: skip
    return said


def test_notebook_06_section_3_reads_window_0s_judged_attempt_from_the_committed_rows(monkeypatch):
    """Review rr23a N4: section 3's cell, executed on the committed rows, says the sync waits of window 0's judged
    attempt (its repeat: window 0 was profiled again), `kv_static`'s 9.4 µs, not its first attempt's 12.9 µs; where
    the phases' medians are recorded (`picture_boundaries`), it reads them from that attempt's row (here made up: the
    repeat's row over 3 boundaries, every other row over 2), else from the pictures' boundaries."""
    from tokgen import profiling

    profile = pd.read_csv(ROOT / "data" / "06_eos_sync_profile.csv")
    judged = profile[(profile["window"] == 0) & (profile["attempt"] == 1)].set_index("variant")
    assert set(profile.loc[profile["window"] == 0, "attempt"]) == {0, 1}  # window 0 was profiled again
    names = list(dict.fromkeys(profile["variant"]))
    waits = [f"* {gaps.sync_wait_text(n, judged.loc[n])}" for n in ("kv_static", "compiled kv_static")]
    said = _run_section_3(profile, monkeypatch)
    assert said[:2] == waits
    assert said[0].startswith("* `kv_static`: the sync lasted 9.4 µs per step (median of 18 steps)")
    assert said[1].startswith("* `compiled kv_static`: the sync lasted 9.1 µs per step")
    two = _boundaries().iloc[:2]
    assert said[2:-1] == [f"* {gaps.phases_text(n, two)}" for n in names]  # no recorded medians: the pictures'
    assert said[-1] == gaps.picture_widening(gaps.last_attempts(profile))
    # recorded medians: the judged attempt's row is read, not the first attempt's
    repeat = (profile["window"] == 0) & (profile["attempt"] == 1)
    rows = [profiling.boundary_row(_boundaries() if r else two) for r in repeat]
    rows = pd.DataFrame(rows, index=profile.index)
    recorded = pd.concat([profile.drop(columns=[c for c in rows if c in profile]), rows], axis=1)
    said = _run_section_3(recorded, monkeypatch)
    assert said[:2] == waits
    assert said[2:-1] == [f"* {gaps.phases_text(n, _boundaries())}" for n in names]
    assert all("(medians over 3 boundaries)" in s for s in said[2:-1])
