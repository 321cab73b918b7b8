"""Review rv20A: how claims 6 and 7 are judged and worded (no measurement changes)."""

import inspect

import pandas as pd
from test_claim_criteria import FASTER, measure, pipelining_rows, write
from test_rr20g_pooled import profile_rows

import tokgen
from tokgen import gaps
from tokgen.claims import NOT, PARTLY, REPRODUCED
from tokgen.profiling import SHARE_COLUMNS


def _with_periods(rows: list, sync_period: float, other_period: float) -> list:
    """Notebook 06's rows with each pass's step period, so that each window's host-speed ratio is
    (sync_period − 200) / (other_period − the other pass's time)."""
    for r in rows:
        r["step_period_us"] = sync_period if r["variant"] == "kv_static" else other_period
    return rows


def test_pooled_verdict_is_inconclusive_where_the_raw_and_corrected_pooled_intervals_decide_apart():
    """M1: the corrected interval wholly above 0.5, the raw one holding it (the H200 run's 0.529–0.602 and
    0.354–0.689): the correction decides, so inconclusive; where both lie on one side, the corrected verdict."""
    assert gaps.pooled_verdict([False] * 6, (0.529, 0.602), (0.354, 0.689)) == gaps.CORRECTION_DECIDES
    assert gaps.pooled_verdict([False] * 6, (0.529, 0.602), (0.40, 0.45)) == gaps.CORRECTION_DECIDES
    assert gaps.pooled_verdict([False] * 6, (1.187, 1.407), (0.859, 1.428)) is False  # claim 7: unchanged
    assert gaps.pooled_verdict([True] * 6, (0.30, 0.40), (0.35, 0.45)) is True
    assert gaps.pooled_verdict([False] * 6, (0.529, 0.602)) is False  # no raw interval given: as before
    said = gaps.raw_pooled_text((0.529, 0.602), (0.354, 0.689))
    assert said == ("with the host-speed ratio fixed at 1 the pooled share is 0.354–0.689, holding 0.5, the "
                    "corrected one 0.529–0.602, wholly above 0.5: "
                    "inconclusive (the host-speed correction decides)")  # fmt: skip
    assert gaps.raw_pooled_text((1.187, 1.407), (0.859, 1.428)).endswith("wholly above 0.5, as the corrected one")


def test_claim_6_is_inconclusive_where_only_the_host_speed_correction_puts_the_share_above_half(tmp_path):
    """M1 end to end: every window's raw share 0.45 (18 steps, 10% apart), its host-speed ratio 1300/1000 = 1.3, so
    the corrected share is 0.585: the corrected pooled interval lies wholly above 0.5 (before the fix: not
    reproduced), the raw one wholly below; the verdict is open, both intervals printed, the rule in the criterion."""
    rows = _with_periods(profile_rows([0.45] * 6), 1500.0, 1090.0)
    write(tmp_path, "06_eos_sync_profile", rows)
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    m6, v6, _ = measure(6, tmp_path)
    assert v6 == "undecided" and not v6.falls and set(v6.between) <= {REPRODUCED, PARTLY, NOT} and NOT in v6.between
    assert "so the correction decides the cause" in v6.reason
    assert "with the host-speed ratio fixed at 1 the pooled share is 0.4" in m6
    assert "wholly below 0.5, the corrected one 0.5" in m6 and gaps.CORRECTION_DECIDES in m6
    assert "inconclusive (the host-speed correction decides)" in gaps.pooled_rule("x")


def test_claim_6_with_no_ratio_recorded_keeps_its_verdict_and_says_both_intervals_agree(tmp_path):
    """No step period recorded: the ratio is 1, the raw and corrected intervals are the same; the verdict stands."""
    write(tmp_path, "06_eos_sync_profile", profile_rows([0.70] * 6))
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    m6, v6, _ = measure(6, tmp_path)
    assert v6 == NOT and "as the corrected one" in m6


def test_the_cause_bullet_says_every_window_only_where_every_windows_own_interval_decides():
    """S1: with a window whose own interval holds 0.5, "more than half … remains … in every window" is not said;
    the pooled reading and that window are."""
    gap = {"model": "eager", "sync_us": 230.0, "no_check_us": 153.0, "sync_causes": False, "windows": 6,
           "windows_opening": 0, "left_out": "", "cause_corrected": True, "no_check_change": "mixed",
           "no_check_shares": "", "check_adds": "", "floored": [], "undecided": [4],
           "pooled": (0.53, 0.60)}  # fmt: skip
    said = gaps._cause(gap)
    assert "in every window" not in said
    assert "over the windows pooled; window 4's own interval holds 0.5" in said
    assert "in every window" in gaps._cause({**gap, "undecided": []})


def test_pipelined_docstrings_name_no_unmeasured_promise_or_cause():
    """M2, S5: notebook 07 prints these docstrings."""
    piped, article = inspect.getdoc(tokgen.generate_pipelined), inspect.getdoc(tokgen.article_pipelined)
    assert "never waits" not in piped and "need not wait for the CPU's stop check" in piped
    assert "may still be slower than the GPU" in piped and "notebook 06" in piped
    assert "likely cause" not in article and "no notebook measured" in article


def test_claim_7_is_inconclusive_where_only_the_host_speed_correction_puts_the_share_above_half(tmp_path):
    """M1 end to end for claim 7 (its inconclusive path had no test): every window's pipelined gap 0.45 of the
    synchronous 200 µs (18 steps, 10% apart), the host-speed ratio (1500 − 200) / (1090 − 90) = 1.3, so the corrected
    share is 0.585: the raw pooled interval lies wholly below 0.5, the corrected one wholly above. Pipelined is faster
    eager and compiled, so only the gap test is open: the verdict is undecided between reproduced and partly, not
    falling with more windows, its reason the correction, both intervals printed; `show_claim` reads "inconclusive"."""
    rows = _with_periods(profile_rows([0.45] * 6), 1500.0, 1090.0)
    for r in rows:  # the pipelined ratio's synchronous time: from its last operation, its idle gap (`host_ratios`)
        r["from_op_1_median_us"] = r["idle_gap_median_us"]
    write(tmp_path, "06_eos_sync_profile", rows)
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    m7, v7, _ = measure(7, tmp_path)
    assert v7 == "undecided" and not v7.falls and set(v7.between) == {REPRODUCED, PARTLY}
    assert v7.reason == ("the 95% interval of the pooled share of the raw idle gaps lies wholly below 0.5, the "
                         "host-speed-corrected one lies wholly above it (see measured), so the correction decides "
                         "whether "
                         f"{gaps.PIPELINING_CLOSES}")  # (review rv21A M1: each side said)
    assert "with the host-speed ratio fixed at 1 the pooled share is 0.4" in m7
    assert "wholly below 0.5, the corrected one 0.5" in m7 and gaps.CORRECTION_DECIDES in m7
    c = tokgen.claims.claim(7, tmp_path)  # what `show_claim` prints
    assert c["verdict"] == "inconclusive"
    assert c["why"].startswith("the 95% interval of the pooled share of the raw idle gaps")  # (review rr21c N1)


def test_drift_flags_speak_of_the_flagged_corrections_and_the_mirror_when_every_flagged_ratio_lowers_the_share():
    """S3: windows 0 and 1 flagged at 1.5 (raise), window 2 unflagged at 0.96 (lowers): the flagged corrections, not
    "the correction", worked against the claim. Mirror: pipelined/sync 1.40 raw in windows 0–2, ratios 0.60, 0.74
    and 0.59 (all flagged, all lower the share): corrected 0.840, 1.036, 0.826, all still above 0.5, none turned."""
    up = gaps.drift_flags([0, 1, 2], [1.5, 1.5, 0.96])
    assert up.endswith("every flagged ratio raises the share, so the flagged corrections can only have worked against "
                       "the claim")  # fmt: skip
    said = gaps.ratios_text([(100.0, 140.0)] * 3, [0, 1, 2], [0.6, 0.74, 0.59], "pipelined")
    assert said.endswith("host-speed ratio 0.60, 0.74 and 0.59 in windows 0–2 (below 1: the pipelined pass's the "
                         "longer); every flagged ratio lowers the share, so the flagged corrections can only have "
                         "worked for the claim, and the share is still above 0.5 in them")  # fmt: skip
    met = gaps.ratios_text([(100.0, 40.0)] * 3, [0, 1, 2], [0.6, 0.74, 0.59], "pipelined")  # 0.24, 0.30, 0.24
    assert met.endswith("worked for the claim, and they turn no window's verdict")
    both = gaps.drift_flags([0, 1], [1.5, 0.6])  # flagged on both sides: no side named (review rr18b S2)
    assert "worked" not in both and "(above 1: the synchronous" in both and "0.60 in window 1 (below 1" in both


def test_the_pooled_rule_says_the_ratio_rests_on_one_pass_each():
    """S6: the criterion says the ratio inside the judged share comes from the two passes' step periods, one each."""
    said = gaps.pooled_rule("the host-speed ratio re-derived per resample")
    assert ("the host-speed ratio re-derived per resample; the ratio re-derived from the two passes' step periods "
            "(one pass each), so it has no interval of its own; the share the median") in said  # fmt: skip
    assert gaps.ONE_PASS in tokgen.claims.CLAIMS[6][2] and gaps.ONE_PASS in tokgen.claims.CLAIMS[7][2]


def test_claims_6_and_7_state_the_measured_premise_as_a_condition_from_the_data(tmp_path):
    """S7: the GPU busy share read from the data, not written in: notebook 06's profiled idle fraction 0.88 in every
    window (busy 12%, host-bound) gives claim 6 the premise and the caution; at 0.05 idle (busy 95%, GPU-bound)
    the premise is said, the caution not; no idle fraction recorded, nothing is said."""
    rows = profile_rows([0.30] * 6)
    for r in rows:
        r["gpu_idle_fraction"] = 0.88
    write(tmp_path, "06_eos_sync_profile", rows)
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    m6, _, _ = measure(6, tmp_path)
    assert m6.endswith(
        "; the premise these verdicts rest on, as measured: the synchronous loop is host-bound here (the GPU busy 12% "
        "of a step, eager, profiled, the median over notebook 06's windows); the article's remedy, pipelining, "
        "is judged here only under that premise, and the verdicts do not carry over to a card or slice where the GPU "
        "holds most of a step, whose longer GPU part the pipelined loop may hide (notebook 13 measures slices of this "
        "GPU)")  # fmt: skip
    write(tmp_path, "06_eos_sync_profile", [r | {"gpu_idle_fraction": 0.05} for r in rows])
    m6, _, _ = measure(6, tmp_path)
    assert "the synchronous loop is GPU-bound here (the GPU busy 95% of a step" in m6 and "carry over" not in m6
    write(tmp_path, "06_eos_sync_profile", profile_rows([0.30] * 6))
    assert "premise" not in measure(6, tmp_path)[0]
    assert tokgen.claims.premise_text(float("nan"), "x") == ""


def test_the_phase_takeaway_names_the_summed_host_phases_and_says_most_only_of_parts_that_do_not_overlap():
    """S2, N4 with notebook 06's eager shape (per 1000 µs): the check's phase 430 µs with 40 µs of the copy call in
    it, the host's three phases 120 + 230 + 190 µs with 17 µs of calls in the idle gap, the launch 30 µs. The parts
    do not overlap: 390 + 57 + 523 + 30 = 1000 (39%, 5.7%, 52%, 3%), not 43% + 5.7% + 52% + 3% = 104%; the host's
    52% is its three phases together (12% + 23% + 19%, less 1.7%), and "most of it" says the calls' time is out."""
    p = pd.DataFrame([{"step": 1, "span_us": 1000.0, "gap_us": 570.0, "check_us": 430.0, "host_us": 120.0,
                       "forward_us": 230.0, "launch_us": 190.0, "start_us": 30.0, "sync_copy_us": 57.0,
                       "gap_calls_us": 17.0, "check_busy_us": 43.0}])  # fmt: skip
    shares = gaps.phase_shares(p)
    windows = pd.DataFrame([{**{f"phase_{c}_share": shares[c] for c in SHARE_COLUMNS}, "window": w} for w in (0, 1)])
    said = gaps.phase_takeaway("eager", p, windows)
    assert "after the forward take 39% (43% less the copy call's 4.0% within it;" in said
    assert "the copy and sync calls take 5.7% (4.0% within the phase after the model's forward" in said
    # rv21A N1: the parts to one decimal and the total their printed sum (12.0 + 23.0 + 19.0 − 1.7 = 52.3)
    assert ("the host's other work before the step's first launch 52.3% (its 3 phases together, 'the GPU's last "
            "operation of step i−1 → the host starts step i' 12.0% + 'step i starts → its model forward starts' 23.0% "
            "+ 'model forward starts → the first launch of step i' 19.0%, less the 1.7% of copy and sync call time in "
            "the idle gap)") in said  # fmt: skip
    assert ("the host's other work before the step's first launch (its 3 phases together) holds most of it in all 2 "
            "windows (shares 52.3%–52.3%, each without the copy and sync calls' time; 52.3% in "
            "window 0") in said  # fmt: skip  (one precision: review rv23A N4)
    assert "in parts that do not overlap" in said
