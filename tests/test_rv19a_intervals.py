"""Review rv19A S2 and S3: claim 6's and 7's window tests with a within-window interval of the share, and the
phase takeaway's "most" read over every window's pictures' pass (CPU, hand-made tables and timelines)."""

import math

import pandas as pd
from test_profiling import TRACE

from tokgen import gaps
from tokgen.profiling import SHARE_COLUMNS, Timeline, boundary_row, per_step_values


def test_summary_records_the_per_step_values_its_medians_are_over():
    s = Timeline(TRACE).summary(skip=0)
    assert per_step_values(s["idle_gap_steps_us"]) == [68.0]  # step 1's idle gap, 150 - 82 µs (step 0 has none)
    assert per_step_values(s["from_op_1_steps_us"]) == [68.0]
    assert per_step_values(float("nan")) is None and per_step_values("") is None  # an older table: none


def test_share_interval_known_answers():
    assert gaps.share_interval([100.0] * 18, [52.0] * 18) == (0.52, 0.52)  # no spread: the share itself
    assert gaps.share_interval([100.0] * 18, [52.0] * 18, 2.0) == (1.04, 1.04)  # the host-speed ratio scales it
    assert gaps.share_interval(None, [1.0, 2.0]) is None
    wide = gaps.share_interval([100.0] * 9 + [110.0] * 9, [45.0] * 9 + [60.0] * 9)  # median share 52.5 / 105
    assert wide[0] < 0.5 < wide[1]
    assert wide == gaps.share_interval([100.0] * 9 + [110.0] * 9, [45.0] * 9 + [60.0] * 9)  # seeded: reproducible


def test_a_window_whose_interval_holds_half_is_undecided():
    assert gaps.sync_opens_gap(200.0, 105.2, interval=(0.49, 0.56)) is gaps.UNDECIDED_WINDOW
    assert gaps.sync_opens_gap(200.0, 105.2, interval=(0.51, 0.56)) is False
    assert gaps.sync_opens_gap(200.0, 105.2) is False  # no interval recorded: today's test
    assert gaps.sync_opens_gap(10.0, 5.2, interval=(0.49, 0.56)) is False  # under the floor: not undecided
    assert gaps.closes_gap(200.0, 96.0, interval=(0.45, 0.52)) is gaps.UNDECIDED_WINDOW
    assert gaps.closes_gap(200.0, 96.0, interval=(0.45, 0.49)) is True
    assert gaps.agreed([False, False, gaps.UNDECIDED_WINDOW]) == gaps.UNDECIDED_WINDOW
    assert gaps.agreed([False, True, gaps.UNDECIDED_WINDOW]) == "split"
    assert gaps.agreed([False, False]) is False


def _profile(steps: bool) -> pd.DataFrame:
    """Two windows of the three generators: no-check share 0.60 in window 0, 0.525 in window 1 (by medians)."""
    rows = []
    sync_steps = ";".join(["100.00"] * 9 + ["110.00"] * 9)
    for w, (none, none_steps) in enumerate(((63.0, ";".join(["63.00"] * 18)),
                                            (55.125, ";".join(["45.00"] * 9 + ["65.00"] * 9)))):  # fmt: skip
        for v, k, gap, col, per in (("kv_static", 12, 105.0, 105.0, sync_steps),
                                    ("kv_static_no_check", 11, none, none, none_steps),
                                    ("pipelined_static", 12, 20.0, 20.0, ";".join(["20.00"] * 18))):  # fmt: skip
            row = {"variant": v, "window": w, "kernels_per_step": k, "idle_gap_median_us": gap,
                   "from_op_1_median_us": col, "from_op_2_median_us": col, "gpu_idle_fraction": 0.8}  # fmt: skip
            if steps:
                row |= {"idle_gap_steps_us": per, "from_op_1_steps_us": per, "from_op_2_steps_us": per}
            rows.append(row)
    return pd.DataFrame(rows)


def test_claim_6_window_with_half_in_its_interval_leaves_the_cause_undecided():
    with_steps = gaps.idle_gaps(_profile(True)).iloc[0]
    assert with_steps["sync_causes"] == gaps.UNDECIDED_WINDOW and with_steps["undecided"] == [1]
    assert "holding 0.5, so it decides nothing" in with_steps["no_check_shares"]  # the pooled interval (rr20g S1)
    assert "is not decided" in gaps.gap_takeaway(with_steps)[0]
    older = gaps.idle_gaps(_profile(False)).iloc[0]  # no per-step values: today's verdict, said so
    assert older["sync_causes"] == False and older["undecided"] == []  # noqa: E712 (a numpy bool)
    assert gaps.NO_INTERVAL in older["no_check_shares"]


def _shares(host: float) -> dict:
    """One window's phase shares with the host's other work (host_us alone) at `host`."""
    out = {f"phase_{c}_share": 0.0 for c in SHARE_COLUMNS}
    return out | {"phase_host_us_share": host, "phase_start_us_share": 0.1, "phase_check_us_share": 0.9 - host,
                  "phase_sync_copy_us_share": 0.0, "phase_gap_calls_us_share": 0.0}  # fmt: skip


HOST = f"{gaps.HOST_PART} (its 2 phases together)"  # host_us and launch_us measured (review rv20A S2)


def test_most_only_where_every_window_agrees():
    phases = pd.DataFrame({"step": [2], "span_us": [100.0], "gap_us": [60.0], "check_us": [38.0], "host_us": [52.0],
                           "forward_us": [math.nan], "launch_us": [0.0], "start_us": [10.0], "sync_copy_us": [0.0],
                           "gap_calls_us": [0.0], "check_busy_us": [10.0]})  # fmt: skip
    one = gaps.phase_takeaway("eager", phases)
    assert f"{HOST} holds most of it (52%)" in one  # one window: today's text
    split = gaps.phase_takeaway("eager", phases, pd.DataFrame([_shares(0.52), _shares(0.47)]))
    assert f"no part holds most of it in every window: {HOST} holds most of it in 1 of 2 windows" in split
    every = gaps.phase_takeaway("eager", phases, pd.DataFrame([_shares(0.52), _shares(0.58)]))
    # one precision for the span and the pictured window's share (review rv23A N4)
    said = f"{HOST} holds most of it in all 2 windows (shares 52.0%–58.0%; 52.0% in window 0, the one pictured)"
    assert said in every


def test_boundary_row_records_every_phase_share():
    row = boundary_row(pd.DataFrame({"gap_us": [60.0], "span_us": [100.0], "check_us": [40.0], "host_us": [50.0],
                                     "forward_us": [math.nan], "launch_us": [0.0], "start_us": [10.0],
                                     "sync_copy_us": [5.0], "gap_calls_us": [2.0]}))  # fmt: skip
    assert row["phase_host_us_share"] == 0.5 and row["phase_sync_copy_us_share"] == 0.05
    assert math.isnan(row["phase_forward_us_share"])


def test_a_table_without_per_step_values_says_so_once_per_model_in_notebook_06s_bullets():
    """The cause bullet says NO_INTERVAL; the pipelining bullet below it does not repeat it (review rv19A S2: said
    once, not in every sentence); a table with the per-step values says its intervals instead."""
    older = gaps.idle_gaps(_profile(False)).iloc[0]
    cause, piped = gaps.gap_takeaway(older)
    assert cause.count(gaps.NO_INTERVAL) == 1 and gaps.NO_INTERVAL not in piped
    assert gaps.NO_INTERVAL in older["pipelined_shares"]  # notebook 07's bullet, alone, still says it
    newer = " ".join(gaps.gap_takeaway(gaps.idle_gaps(_profile(True)).iloc[0]))
    assert gaps.NO_INTERVAL not in newer and "95% bootstrap intervals over each window's steps" in newer
