"""Review rv20A: how claims 6 and 7 are judged and worded (no measurement changes)."""

import inspect

from test_claim_criteria import FASTER, measure, pipelining_rows, write
from test_rr20g_pooled import profile_rows

import tokgen
from tokgen import gaps
from tokgen.claims import NOT, PARTLY, REPRODUCED


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
