"""Review rr20g: claims 6 and 7 decided on one pooled interval of the share over the windows (S1), the window tests'
explicit third answer (M1, M2), the interval decides where there is one (N2), the bootstrap's known answers (N1,
N3, N4), a one-step window (N5), the pipelining bullet's count (S3) and the phase takeaway's span (N6)."""

import numpy as np
import pandas as pd
import pytest
from test_claim_criteria import FASTER, measure, pipelining_rows, write

from tokgen import gaps, stats
from tokgen.claims import NOT, PARTLY, REPRODUCED
from tokgen.profiling import per_step_values

NOISE = np.random.default_rng(7).normal(size=(4, 18))  # a fixed pattern of the steps' noise, the same in every window


def _steps(median: float, row: int, spread: float = 0.1) -> list[float]:
    """18 per-step values around `median` (noise proportional to it), with exactly that median."""
    values = median * (1 + spread * NOISE[row])
    return list(values - np.median(values) + median)


def _text(values) -> str:
    return ";".join(f"{v:.2f}" for v in values)


def profile_rows(shares: list, spread: float = 0.1) -> list:
    """Notebook 06's rows with the per-step values: per window, the no-check and the pipelined passes' times at
    `shares[w]` of the synchronous pass's 200 µs (its idle gap and its time from the shared work alike)."""
    rows = []
    for w, share in enumerate(shares):
        sync, other = _steps(200.0, 0, spread), _steps(200.0 * share, 1, spread)
        for variant, k, values in (("kv_static", 352.0, sync), ("kv_static_no_check", 348.0, other),
                                   ("pipelined_static", 352.0, other)):  # fmt: skip
            col = "from_op_5" if variant == "kv_static" else "from_op_1"
            rows.append({"variant": variant, "status": "ok", "window": w, "kernels_per_step": k,
                         "idle_gap_median_us": float(np.median(values)), "idle_gap_steps_us": _text(values),
                         f"{col}_median_us": float(np.median(values)), f"{col}_steps_us": _text(values)})  # fmt: skip
    return rows


def claims_6_and_7(tmp_path, shares, spread: float = 0.1):
    write(tmp_path, "06_eos_sync_profile", profile_rows(shares, spread))
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    return measure(6, tmp_path), measure(7, tmp_path)


def test_all_windows_clearly_below_half_reproduce_both(tmp_path):
    (m6, v6, _), (m7, v7, _) = claims_6_and_7(tmp_path, [0.30] * 6)
    assert v6 == REPRODUCED and v7 == REPRODUCED
    assert "judged on the share pooled over the windows, 0.2" in m6 and "wholly below 0.5" in m6
    assert "at most 0.5 over the windows pooled" in m6 and "wholly below 0.5" in m7


def test_all_windows_clearly_above_half_do_not_reproduce_claim_6(tmp_path):
    (m6, v6, _), (m7, v7, _) = claims_6_and_7(tmp_path, [0.70] * 6)
    assert v6 == NOT and v7 == PARTLY  # claim 7: the gap test fails, pipelining is faster
    assert "wholly above 0.5" in m6 and "wholly above 0.5" in m7


def test_a_pooled_interval_holding_half_leaves_both_open_and_says_more_windows_narrow_it(tmp_path):
    """Six windows of 18 steps, shares 0.45–0.56 around 0.5, each window's steps 10% apart: the pooled interval
    holds 0.5, so the cause is undecided, and (unlike a split) more windows can settle it (falls)."""
    (m6, v6, _), (m7, v7, _) = claims_6_and_7(tmp_path, [0.56, 0.46, 0.55, 0.45, 0.52, 0.48])
    assert v6 == "undecided" and v6.between == [REPRODUCED, NOT] and v6.falls
    assert v6.reason == ("the share pooled over its windows has an interval holding 0.5 (see measured), so the cause "
                         "is not decided; more windows, or longer ones, narrow that interval")  # fmt: skip
    assert m6.endswith("the pooled share decides nothing") and "holding 0.5, so it decides nothing" in m6
    assert v7 == "undecided" and v7.between == [REPRODUCED, PARTLY] and v7.falls
    assert v7.reason == (f"the share pooled over its windows has an interval holding 0.5, so whether "
                         f"{gaps.PIPELINING_CLOSES} is not decided; more windows, or longer ones, narrow that "
                         "interval")  # fmt: skip


def test_one_window_decided_against_the_pooled_share_splits_both(tmp_path):
    """Seven windows at 0.30, window 7 at 0.80 with its own interval wholly above 0.5: the pooled share (the median
    over windows) lies below 0.5, but window 7 decides against it: split, which more windows cannot settle. (With
    six windows, one at 0.80 is drawn three times or more in 6% of the resamples, which puts the pooled median above
    0.5 there: the pooled interval then holds 0.5.)"""
    (m6, v6, _), (m7, v7, _) = claims_6_and_7(tmp_path, [0.30] * 7 + [0.80])
    assert v6 == "undecided" and v6.between == [REPRODUCED, NOT] and not v6.falls
    assert v6.reason.startswith("the share pooled over its windows lies on one side of 0.5, but window 7's own "
                                "interval lies wholly on the other (see measured)")  # fmt: skip
    assert "wholly below 0.5; window 7's own interval lies wholly on the other side" in m6
    assert v7 == "undecided" and v7.between == [REPRODUCED, PARTLY] and not v7.falls
    assert v7.reason == ("window 7's own interval lies wholly on the other side of 0.5 from the share pooled over its "
                         f"windows on whether {gaps.PIPELINING_CLOSES}")  # fmt: skip


def test_window_tests_third_answer_is_never_a_truth_value():
    with pytest.raises(TypeError):
        bool(gaps.UNDECIDED_WINDOW)
    assert gaps.UNDECIDED_WINDOW != "undecided" and repr(gaps.UNDECIDED_WINDOW) == "undecided"
    assert gaps.decide_on((0.40, 0.49)) is True and gaps.decide_on((0.51, 0.6)) is False
    assert gaps.decide_on((0.45, 0.55)) is gaps.UNDECIDED_WINDOW
    # N2: the interval decides where there is one, whatever the point share
    assert gaps.sync_opens_gap(200.0, 98.0, interval=(0.51, 0.60)) is False  # point 0.49, interval above 0.5
    assert gaps.closes_gap(200.0, 102.0, interval=(0.40, 0.49)) is True  # point 0.51, interval below 0.5
    assert gaps.pooled_verdict([True, True, False], (0.2, 0.4)) == "split"
    assert gaps.pooled_verdict([True, gaps.UNDECIDED_WINDOW], (0.2, 0.4)) is True
    assert gaps.pooled_verdict([True, True], (0.45, 0.55)) is gaps.UNDECIDED_WINDOW
    assert gaps.pooled_verdict([True, False], None) == "split"  # no pooled interval: the windows' own tests


def _reference(a, b, ratio=1.0, periods=None, level=0.05, resamples=2000, seed=0):
    """`share_interval` rebuilt by hand: two independent `rng.choice` draws, the sync's first."""
    rng = np.random.default_rng(seed)
    sync = np.median(rng.choice(np.asarray(a), size=(resamples, len(a))), axis=1)
    other = np.median(rng.choice(np.asarray(b), size=(resamples, len(b))), axis=1)
    share = other / sync * (ratio if periods is None else (periods[0] - sync) / (periods[1] - other))
    return tuple(float(q) for q in np.quantile(share, [level / 2, 1 - level / 2]))


def test_share_interval_known_answer_against_a_seeded_numpy_bootstrap():
    a, b = _steps(200.0, 0)[:17], _steps(110.0, 1)  # unequal lengths: 17 and 18 steps
    assert gaps.SHARE_LEVEL == stats.ALPHA  # N3
    assert gaps.share_interval(a, b) == _reference(a, b)
    assert gaps.share_interval(a, b, 1.3) == _reference(a, b, 1.3)
    assert gaps.share_interval(a, b, 1.3, periods=(900.0, 700.0)) == _reference(a, b, periods=(900.0, 700.0))  # N1
    assert gaps.share_interval([200.0], b) == gaps.TOO_FEW  # N5


def test_pooled_interval_known_answer_against_a_seeded_numpy_bootstrap():
    steps = [(_steps(200.0, 0), _steps(100.0 + 10 * w, 1)[: 17 + w % 2]) for w in range(4)]
    rng = np.random.default_rng(0)
    drawn = rng.integers(0, 4, size=(2000, 4))
    shares = np.empty((2000, 4))
    for w, (a, b) in enumerate(steps):
        sync = np.median(rng.choice(np.asarray(a), size=(2000, 4, len(a))), axis=-1)
        other = np.median(rng.choice(np.asarray(b), size=(2000, 4, len(b))), axis=-1)
        shares[drawn == w] = (other / sync)[drawn == w]
    want = tuple(float(q) for q in np.quantile(np.median(shares, axis=1), [0.025, 0.975]))
    assert gaps.pooled_share_interval(steps, [float("nan")] * 4) == want
    assert gaps.pooled_share_interval(steps[:1] + [(None, None)], [1.0, 1.0]) is None


def test_a_one_step_window_recorded_as_a_number_says_too_few_steps():
    assert per_step_values(12.34) == [12.34]  # read_csv parses "12.34" as a float (N5)
    assert "too few steps for an interval in window 1" in gaps.interval_note([(0.4, 0.45), gaps.TOO_FEW], [0, 1])


def test_most_over_one_window_and_a_window_that_did_not_measure_the_part():
    parts = {gaps.HOST_PART: 0.7, "the copy and sync calls": 0.1}
    one = gaps._most_over(gaps.HOST_PART, parts, [parts])
    assert one == (f"{gaps.HOST_PART} holds most of it in the one window (share 70.0%; 70.0% in window 0, the one "
                   "pictured)")  # fmt: skip
    missing = gaps._most_over(gaps.HOST_PART, parts, [parts, {"the copy and sync calls": 0.2}], [3, 4], pictured=3)
    assert missing == (f"no part holds most of it in every window: {gaps.HOST_PART} holds most of it in 1 of 2 "
                       "windows (share 70.0%; not measured in window 4; 70.0% in window 3, the one "
                       "pictured)")  # fmt: skip


def test_pipelining_bullet_counts_the_windows_decided_against_not_window_0():
    gap = {"closes": gaps.UNDECIDED_WINDOW, "windows_closing": 5, "windows_pipelined": 6, "pipelined_undecided": [5],
           "pipelined_corrected": False}  # fmt: skip
    said = gaps._pipelining_verdict(gap)
    assert f"{gaps.PIPELINING_CLOSES} in 5 of 6 windows, judged" in said and "not in 0" not in said
    gap |= {"windows_closing": 4}
    assert f"{gaps.PIPELINING_CLOSES} in 4 of 6 windows, not in 1 of them, judged" in gaps._pipelining_verdict(gap)


def test_solution_06_reads_only_notebook_06s_rows_at_its_window_and_model_and_names_them():
    kv, naive = {"gpu_busy_per_step_us": 100.0, "kernels_per_step": 50}, {"gpu_busy_per_step_us": 150.0,
                                                                        "kernels_per_step": 40}  # fmt: skip
    at = '{"SIZE": "gpt2", "WINDOW": [30, 50]}'
    rows = pd.DataFrame(
        {
            "window": [0, 1, 2, 0, 1],
            "gpu_busy_per_step_us": [99.0, 100.0, 101.0, 500.0, 900.0],
            "gpu": ["NVIDIA H200"] * 5,
            "params": [at] * 3 + ['{"SIZE": "tiny", "WINDOW": [30, 50]}'] * 2,
        }
    )
    said = gaps.naive_work_text(kv, naive, [30, 50], rows, "gpt2")
    assert ("Notebook 06 profiled the static cache's window (steps 30–49 of gpt2 on the NVIDIA H200) in 3 windows "
            "(each window's judged attempt): GPU busy time per step 99.0–101.0 µs") in said  # fmt: skip
    assert "Notebook 06 profiled" not in gaps.naive_work_text(kv, naive, [80, 100], rows, "gpt2")  # another window


def test_without_a_pooled_interval_the_windows_own_tests_decide_and_the_words_count_them(tmp_path):
    """Window 0's interval holds 0.5; window 1's no-check pass recorded one step (too few for an interval, so no
    pooled one): window 1 is decided on its share, 0.6 (more than half). The words count the undecided window
    against the decided one (review rr20g M1), in claim 6 and in notebook 06's summary."""
    rows = profile_rows([0.50, 0.60])
    one = [r for r in rows if r["variant"] == "kv_static_no_check" and r["window"] == 1][0]
    one |= {"from_op_1_steps_us": 120.0, "idle_gap_steps_us": 120.0}  # read_csv gives a float (N5)
    rows = [one if r["variant"] == "kv_static_no_check" and r["window"] == 1 else r for r in rows]
    write(tmp_path, "06_eos_sync_profile", [r | {"gpu_idle_fraction": 0.5} for r in rows])
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    measured, v6, _ = measure(6, tmp_path)
    assert v6 == "undecided" and v6.between == [REPRODUCED, NOT] and not v6.falls
    assert v6.reason == ("in window 0 the share's interval holds 0.5 (see measured); the other 1 agree (not "
                         "reproduced), but its rule asks for the same verdict in every window")  # fmt: skip
    assert f"{gaps.TOO_FEW} in window 1" in measured
    summary = gaps.gap_summary(gaps.idle_gaps(pd.read_csv(tmp_path / "data" / "06_eos_sync_profile.csv")))
    assert "the share's interval holds 0.5 in 1 of 2 profiled windows, so whether" in summary
