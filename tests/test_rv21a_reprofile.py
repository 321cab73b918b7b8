"""Review rv21A N4: notebook 06 profiles a window once more where a host-speed ratio lies outside the band
(`tokgen.bench.profile_windows`' `recheck`, `tokgen.gaps.drift_recheck`), every analysis reads each window's last
attempt (`tokgen.gaps.last_attempts`), and the drift sentence and claims 6 and 7's premise say what the repeat
showed. Made-up rows with known ratios: no repeat, a repeat back inside the band, a repeat still outside, and a table
recorded before the `attempt` column."""

import pandas as pd
import pytest
from test_claim_criteria import FASTER, measure, pipelining_rows, write
from test_rr20g_pooled import profile_rows

import tokgen
from tokgen import gaps

SYNC_REST = 1300.0  # the synchronous pass's step (1500 µs) less its time from the shared work (200 µs)


def _period(ratio: float) -> float:
    """The no-check (and pipelined) pass's step period that gives `ratio`: 1300 / (period − its 90 µs)."""
    return 90.0 + SYNC_REST / ratio


def _rows(ratios: dict, attempt: int | None = 0) -> list:
    """`profile_rows` at a raw share of 0.45 in each window of `ratios` ({window: host-speed ratio}), each pass's
    step period set so that the window's ratio (against the no-check pass and the pipelined one alike) is its value;
    an `attempt` column unless None (a table recorded before it)."""
    rows = []
    for w, ratio in ratios.items():
        for r in profile_rows([0.45]):
            r["window"] = w
            r["step_period_us"] = 1500.0 if r["variant"] == "kv_static" else _period(ratio)
            r["from_op_1_median_us"] = r["idle_gap_median_us"]  # the pipelined ratio's synchronous time
            if attempt is not None:
                r["attempt"] = attempt
            rows.append(r)
    return rows


BASE = {w: 1.2 for w in range(6)}  # every window inside the band (0.8–1.25)


def test_drift_recheck_asks_for_a_repeat_where_a_judged_eager_ratio_lies_outside_the_band():
    """Review rr22b S2: only the ratios a verdict is judged on ask for a repeat: the eager synchronous pass against
    the no-check one (claim 6) and against the pipelined one (claim 7); a compiled ratio outside the band does not."""
    assert gaps.drift_recheck(_rows({0: 2.0})) is True
    assert gaps.drift_recheck(_rows({0: 0.7})) is True
    assert gaps.drift_recheck(_rows({0: 1.2})) is False
    inside = _rows({0: 1.2})  # the no-check ratio inside (1.2), the pipelined one outside (1.6)
    for r in inside:
        if r["variant"] == "pipelined_static":
            r["step_period_us"] = _period(1.6)
    assert gaps.host_ratios(pd.DataFrame(inside))[0] == pytest.approx(1.2)
    assert gaps.drift_recheck(inside) is True
    compiled = [{**r, "variant": f"compiled {r['variant']}"} for r in _rows({0: 1.5})]  # compiled only
    assert gaps.host_ratios(pd.DataFrame(compiled), compiled=True)[0] == pytest.approx(1.5)
    assert gaps.drift_recheck(_rows({0: 1.0}) + compiled) is False  # judged by no claim (review rr22b S2)
    assert gaps.drift_recheck(_rows({0: 1.6}) + [{**r, "variant": f"compiled {r['variant']}"}
                                                 for r in _rows({0: 1.0})]) is True  # fmt: skip
    assert gaps.drift_recheck([{"window": 0}]) is False  # nothing to read a ratio from


def test_last_attempts_keeps_each_windows_last_attempt_and_a_table_without_attempts_whole():
    table = pd.DataFrame(_rows(BASE) + _rows({2: 1.1}, attempt=1))
    last = gaps.last_attempts(table)
    assert len(last) == 18 and set(last.loc[last["window"] == 2, "attempt"]) == {1}
    assert set(last.loc[last["window"] != 2, "attempt"]) == {0}
    assert len(gaps.first_attempts(table)) == 3 and set(gaps.first_attempts(table)["window"]) == {2}
    old = pd.DataFrame(_rows(BASE, attempt=None))  # the committed CSVs: no `attempt` column
    assert gaps.last_attempts(old) is old and gaps.first_attempts(old).empty
    assert gaps.profiled_counts(table)["kv_static"] == 6  # the re-profiled window counted once
    assert gaps.profile_windows(table).set_index("variant").at["kv_static", "windows"] == 6


def test_no_repeat_says_nothing_new_and_an_old_table_reads_as_before():
    """Every attempt 0 (no repeat) and a table without the column judge alike, and say no re-profile."""
    flagged = {**BASE, 3: 2.0}
    with_column, old = (pd.DataFrame(_rows(flagged, a)) for a in (0, None))
    a, b = gaps.judged_windows(with_column), gaps.judged_windows(old)
    assert a["first"] == {} and b["first"] == {} and a["ratios"] == b["ratios"]
    assert a["ratios"][3] == pytest.approx(2.0)
    said = gaps.ratios_text(a["shared"], a["windows"], a["ratios"], first=a["first"])
    assert said == gaps.ratios_text(b["shared"], b["windows"], b["ratios"])
    assert "profiled again" not in said and "host-speed ratio 2.00 in window 3" in said
    assert gaps.correction_premise(a["windows"], a["ratios"], a["first"]) == gaps.PREMISE_UNVALIDATED
    assert gaps.correction_premise(a["windows"], a["ratios"], a["first"], default="") == ""


def test_a_repeat_back_inside_the_band_is_judged_and_no_cause_is_named():
    """Review rr22b S3: one repeat back inside the band names no cause: it did not persist, consistent with a
    transient disturbance, and one repeat cannot tell that from the generator's own effect; the premise was not
    contradicted, and is not validated."""
    table = pd.DataFrame(_rows({**BASE, 3: 2.07}) + _rows({3: 1.1}, attempt=1))
    judged = gaps.judged_windows(table)
    assert judged["windows"] == [0, 1, 2, 3, 4, 5] and judged["ratios"][3] == pytest.approx(1.1)  # the repeat
    assert judged["first"][3] == pytest.approx(2.07) and set(judged["first"]) == {3}
    said = gaps.drift_flags(judged["windows"], judged["ratios"], first=judged["first"])
    assert said == ("window 3 was profiled again, its first attempt's host-speed ratio 2.07 outside 0.8–1.25: the "
                    "repeat's 1.10 lies back inside it, so the ratio did not persist on one repeat (consistent with a "
                    "transient disturbance; one repeat cannot tell it from the generator's own effect), and the "
                    "repeat is judged")  # fmt: skip
    assert gaps.correction_premise(judged["windows"], judged["ratios"], judged["first"]) == (
        "the correction's premise, that the ratio is host drift, was not contradicted where the ratio was large "
        "(window 3's first ratio outside 0.8–1.25 came back inside on one repeat, and the repeat is judged), but is "
        "not validated (one repeat cannot tell a transient disturbance from the generator's own effect under the "
        "profiler, and within 0.8–1.25 nothing tests it)")  # fmt: skip
    two = pd.DataFrame(_rows({**BASE, 3: 2.07, 4: 0.7}) + _rows({3: 1.1, 4: 1.0}, attempt=1))
    j = gaps.judged_windows(two)
    assert gaps.drift_flags(j["windows"], j["ratios"], first=j["first"]).endswith(
        "windows 3 and 4 were profiled again, their first attempt's host-speed ratios 2.07 and 0.70 outside 0.8–1.25: "
        "the repeat's 1.10 and 1.00 lie back inside it, so the ratios did not persist on one repeat (consistent with "
        "transient disturbances; one repeat cannot tell them from the generator's own effect), and the repeat is "
        "judged")  # fmt: skip
    assert gaps.correction_premise(j["windows"], j["ratios"], j["first"]).startswith(
        "the correction's premise, that the ratio is host drift, was not contradicted where the ratio was large "
        "(windows 3 and 4's first ratios outside 0.8–1.25 came back inside on one repeat")  # fmt: skip
    piped = gaps.judged_pipelined(table)  # claim 7's windows read the repeat too
    assert piped["ratios"][3] == pytest.approx(1.1) and piped["first"][3] == pytest.approx(2.07)


def test_a_repeat_still_outside_the_band_says_the_ratio_persisted():
    table = pd.DataFrame(_rows({**BASE, 3: 2.07, 4: 0.7}) + _rows({3: 1.95, 4: 0.75}, attempt=1))
    judged = gaps.judged_windows(table)
    assert judged["ratios"][3] == pytest.approx(1.95) and judged["ratios"][4] == pytest.approx(0.75)
    said = gaps.drift_flags(judged["windows"], judged["ratios"], first=judged["first"])
    assert said.startswith("where one pass's step outside the judged time is more than 1.25× the other's")
    assert said.endswith("windows 3 and 4 were profiled again, their first attempt's host-speed ratios 2.07 and 0.70 "
                         "outside 0.8–1.25: the repeat's 1.95 and 0.75 lie outside it too: the ratios persisted on one "
                         "repeat, so they are not one-off disturbances (they may be the generator's own effect under "
                         "the profiler)")  # fmt: skip
    assert gaps.correction_premise(judged["windows"], judged["ratios"], judged["first"]) == (
        "the correction's premise, that the ratio is host drift, is doubtful: windows 3 and 4's ratios outside "
        "0.8–1.25 persisted on one repeat (not one-off disturbances: they may be the generator's own effect under the "
        "profiler)")  # fmt: skip
    mixed = pd.DataFrame(_rows({**BASE, 3: 2.07, 4: 0.7}) + _rows({3: 1.95, 4: 1.0}, attempt=1))
    j = gaps.judged_windows(mixed)
    assert gaps.correction_premise(j["windows"], j["ratios"], j["first"]) == (
        "the correction's premise, that the ratio is host drift, is not validated: window 3's ratio outside 0.8–1.25 "
        "persisted on one repeat (not a one-off disturbance: it may be the generator's own effect under the "
        "profiler), while window 4's first ratio outside 0.8–1.25 came back inside on one repeat (consistent with a "
        "transient disturbance; one repeat cannot tell it from the generator's own effect)")  # fmt: skip


def test_a_ratio_inside_the_band_first_and_outside_on_the_repeat_gives_the_repeats_value():
    """Review rr22b S3: window 0 repeated for its pipelined ratio (first attempt: no-check ratio 0.92, inside the band;
    pipelined 1.6, outside), its repeat's no-check ratio 1.47, outside: said with both values, "the ratio left the
    band on the repeat"; the premise names no such window (its first ratio was not flagged)."""
    first = _rows({**BASE, 0: 0.92})
    for r in first:
        if r["window"] == 0 and r["variant"] == "pipelined_static":
            r["step_period_us"] = _period(1.6)
    table = pd.DataFrame(first + _rows({0: 1.47}, attempt=1))
    judged = gaps.judged_windows(table)
    assert judged["first"][0] == pytest.approx(0.92) and judged["ratios"][0] == pytest.approx(1.47)
    assert gaps.reprofile_text(judged["windows"], judged["ratios"], judged["first"]) == (
        "window 0, profiled again for another pass's ratio, lay inside 0.8–1.25 on the first attempt (0.92) and "
        "outside it on the repeat (1.47), which is judged: the ratio left the band on the repeat")  # fmt: skip
    assert gaps.correction_premise(judged["windows"], judged["ratios"], judged["first"]) == gaps.PREMISE_UNVALIDATED


def _claim(tmp_path, n: int, rows: list):
    write(tmp_path, "06_eos_sync_profile", rows)
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    return measure(n, tmp_path)


@pytest.mark.parametrize("repeat", [None, 1.1, 1.95])
def test_claims_6_and_7_use_the_repeat_and_say_what_it_showed(tmp_path, repeat):
    """Raw share 0.45 in every window, every ratio 1.2 but window 3's first attempt at 2.07 (corrected 0.54): the
    correction decides both claims (inconclusive). No repeat: claim 6's premise words as before, claim 7's none; a
    repeat back inside: the premise was not contradicted where the ratio was large, and is not validated; still
    outside: doubtful (review rr22b S3)."""
    rows = _rows({**BASE, 3: 2.07}) + (_rows({3: repeat}, attempt=1) if repeat else [])
    m6, v6, _ = _claim(tmp_path, 6, rows)
    m7, v7, _ = _claim(tmp_path, 7, rows)
    assert v6 == "undecided" and v7 == "undecided"
    assert gaps.CORRECTION_DECIDES in m6 and gaps.CORRECTION_DECIDES in m7
    if repeat is None:
        assert f"and {gaps.PREMISE_UNVALIDATED}, so the correction decides the cause" in v6.reason
        assert "premise" not in v7.reason and "profiled again" not in m6
        return
    assert "window 3 was profiled again, its first attempt's host-speed ratio 2.07 outside 0.8–1.25" in m6
    assert "window 3 was profiled again" in m7
    if repeat == 1.1:
        words = ("the correction's premise, that the ratio is host drift, was not contradicted where the ratio was "
                 "large (window 3's first ratio outside 0.8–1.25 came back inside on one repeat, and the repeat is "
                 "judged), but is not validated")  # fmt: skip
        assert ("lies back inside it, so the ratio did not persist on one repeat (consistent with a transient "
                "disturbance; one repeat cannot tell it from the generator's own effect)") in m6  # fmt: skip
        assert "host drift (transient)" not in m6 + v6.reason + v7.reason
    else:
        words = "the correction's premise, that the ratio is host drift, is doubtful: window 3's ratio"
        assert "the ratio persisted on one repeat, so it is not a one-off disturbance" in m6
    assert words in v6.reason and gaps.PREMISE_UNVALIDATED not in v6.reason
    assert f"(see measured), and {words}" in v7.reason


def test_notebook_06s_gap_takeaways_read_the_repeat_and_say_it():
    """`idle_gaps` (notebook 06's takeaways, the quick report) judges on the repeat and says the re-profile."""
    table = pd.DataFrame(_rows({**BASE, 3: 2.07}) + _rows({3: 1.1}, attempt=1))
    for r in ("gpu_idle_fraction",):
        table[r] = 0.5
    gap = gaps.idle_gaps(table).iloc[0]
    assert "window 3 was profiled again" in gap["no_check_shares"] and "back inside it" in gap["no_check_shares"]
    assert "window 3 was profiled again" in gap["pipelined_shares"]
    assert int(gap["windows"]) == 6 and gap["profiled"] == 6


def _fake_window(calls: list):
    """A stand-in for `profile_window` (CPU): a row numbered by its call, its timelines tagged by it."""

    def profile_window(v, device, *, start, stop, runs, model, trace_path, stats_trace_path):
        calls.append((v.name, trace_path))
        n = len(calls)
        return {"variant": v.name, "call": n}, ("stats", n), ("picture", n)

    return profile_window


class _V:
    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("answer", [None, False, True])
def test_profile_windows_repeats_a_window_once_where_recheck_asks(monkeypatch, tmp_path, answer):
    calls, seen = [], []
    monkeypatch.setattr(tokgen.bench, "profile_window", _fake_window(calls))

    def recheck(rows):
        seen.append([r["call"] for r in rows])
        return answer

    variants = [_V("a"), _V("b")]
    rows, first = tokgen.bench.profile_windows(
        variants, "cpu", [[0, 1], [1, 0]], start=0, stop=4, traces={"a": tmp_path / "a.json.gz"},
        recheck=None if answer is None else recheck)  # fmt: skip
    attempts = [(r["window"], r["attempt"], r["variant"]) for r in rows]
    if answer:
        assert attempts == [(0, 0, "a"), (0, 0, "b"), (0, 1, "a"), (0, 1, "b"),
                            (1, 0, "b"), (1, 0, "a"), (1, 1, "b"), (1, 1, "a")]  # fmt: skip
        assert seen == [[1, 2], [5, 6]]  # each window's first attempt's rows, once: never a repeat's
    else:
        assert attempts == [(0, 0, "a"), (0, 0, "b"), (1, 0, "b"), (1, 0, "a")]
        assert seen == ([] if answer is None else [[1, 2], [3, 4]])
    # window 0's judged attempt's timelines and traces: the repeat's where it was profiled again (review rv23A S1)
    judged = {"a": 3, "b": 4} if answer else {"a": 1, "b": 2}
    assert first == {n: (("stats", k), ("picture", k)) for n, k in judged.items()}
    written = [n for (_, t), n in zip(calls, range(1, len(calls) + 1)) if t == tmp_path / "a.json.gz"]
    assert written == ([1, 3] if answer else [1])  # the repeat writes window 0's trace again, over the first's
    assert [t for _, t in calls if t is not None] == [tmp_path / "a.json.gz"] * len(written)  # window 0's only


def test_a_compiled_window_repeated_for_an_eager_ratio_says_so():
    """Review rr22c N5: a compiled pass's ratio never asks for a repeat (`drift_recheck`), so a compiled window
    whose own first ratio lay outside the band was profiled again for another pass's ratio, and is said so (before:
    "window 3 was profiled again, its first attempt's host-speed ratio 0.50 outside …", as if it caused the repeat);
    the eager wording is unchanged."""
    eager = _rows({**BASE, 3: 2.07}) + _rows({3: 1.1}, attempt=1)
    compiled = [r | {"variant": tokgen.label(r["variant"], compiled=True)}
                for r in _rows({**BASE, 3: 0.5}) + _rows({3: 1.1}, attempt=1)]  # fmt: skip
    table = pd.DataFrame(eager + compiled).assign(gpu_idle_fraction=0.5)
    gap = gaps.idle_gaps(table).set_index("model")
    for column in ("no_check_shares", "pipelined_shares"):
        assert "window 3 was profiled again, its first attempt's host-speed ratio 2.07 outside 0.8–1.25: the " \
               "repeat's 1.10 lies back inside it" in gap.at["eager", column]  # fmt: skip
        assert "window 3 was profiled again for another pass's ratio, its first attempt's host-speed ratio 0.50 " \
               "outside 0.8–1.25: the repeat's 1.10 lies back inside it" in gap.at["compiled", column]  # fmt: skip
    assert gaps.reprofile_text([3, 4], [1.95, 0.7], {3: 2.07, 4: 0.5}, compiled=True).startswith(
        "windows 3 and 4 were profiled again for another pass's ratio, their first attempt's host-speed ratios 2.07 "
        "and 0.50 outside 0.8–1.25: the repeat's 1.95 and 0.70 lie outside it too")  # fmt: skip
