"""Review rv21A: the wording of claim 6's open verdict, notebook 06's summary and takeaways, solution 06 (no
measurement changes)."""

import re

import pandas as pd
from test_claim_criteria import FASTER, measure, pipelining_rows, write
from test_rr20g_pooled import profile_rows
from test_rv20a_judging import _with_periods

import tokgen
from tokgen import gaps
from tokgen.claims import NOT, PARTLY, REPRODUCED

AROUND_HALF = [0.56, 0.46, 0.55, 0.45, 0.52, 0.48]  # raw pooled interval holding 0.5 (test_rr20g_pooled)
SPLIT = (0, 3, 4)  # the windows whose gap with the sync is outside 55–220 µs: the size's verdict "partly" there


def _claim_6(tmp_path, shares: list, split: bool):
    """Claim 6 on notebook 06's rows with every window's host-speed ratio (1500 − 200) / (1090 − 90) = 1.3, so the
    corrected pooled share lies wholly above 0.5; with `split`, the gap with the sync 400 µs in windows 0, 3 and 4
    (outside ×2 of ~110 µs), 200 µs in the others: the size splits the windows."""
    rows = _with_periods(profile_rows(shares), 1500.0, 1090.0)
    for r in rows:
        if split and r["variant"] == "kv_static" and r["window"] in SPLIT:
            r["idle_gap_median_us"] = 400.0
    write(tmp_path, "06_eos_sync_profile", rows)
    write(tmp_path, "07_pipelining", pipelining_rows(piped=(FASTER, FASTER)))
    return measure(6, tmp_path)


def test_claim_6_says_where_each_pooled_interval_lies_when_the_raw_one_holds_half(tmp_path):
    """M1, the H200 run's case: the raw pooled interval holds 0.5, the corrected one lies wholly above it, and the
    size splits the windows (3 reproduced, 3 partly): the reason says each side as it is (not "different sides"), and
    the only verdict the windows allow is not reproduced: a cause shown still leaves the claim inconclusive."""
    m6, v6, _ = _claim_6(tmp_path, AROUND_HALF, split=True)
    assert "holding 0.5, the corrected one 0.5" in m6 and "wholly above 0.5" in m6  # what measured prints
    assert v6 == "undecided" and v6.between == [NOT] and not v6.falls
    assert "different sides" not in v6.reason
    assert v6.reason.startswith("the 95% interval of the pooled share of the raw times holds 0.5, the "
                                "host-speed-corrected one lies wholly above it (see measured)")  # fmt: skip
    assert v6.reason.endswith(
        "so the correction decides the cause: read on the corrected share the claim is not reproduced, on the raw one "
        "its cause is undecided; a cause shown still leaves it inconclusive, as the size splits the windows "
        "(reproduced in 3 windows (1, 2, 5), partly in 3 windows (0, 3, 4))")  # fmt: skip
    why = tokgen.claims.claim(6, tmp_path)["why"]
    assert "as measured, the claim is" not in why and "reproduced, partly" not in why  # no outcome it cannot reach


def test_claim_6_with_the_raw_interval_on_the_other_side_and_one_size_allows_both_readings(tmp_path):
    """M1, raw on the other side: raw shares 0.45 (wholly below 0.5), corrected wholly above; the size holds in
    every window (200 µs): read on the raw share the claim is reproduced, on the corrected not reproduced, never
    partly. With the size split, the raw reading shows the cause but the claim stays inconclusive: only not
    reproduced is reachable. The raw interval holding 0.5 with one size: reproduced or not reproduced."""
    _, v6, _ = _claim_6(tmp_path, [0.45] * 6, split=False)
    assert v6.between == [REPRODUCED, NOT] and PARTLY not in v6.between
    assert v6.reason.startswith("the 95% interval of the pooled share of the raw times lies wholly below 0.5, the "
                                "host-speed-corrected one lies wholly above it (see measured)")  # fmt: skip
    assert v6.reason.endswith("read on the corrected share the claim is not reproduced, on the raw one reproduced")
    assert tokgen.claims.claim(6, tmp_path)["why"].endswith("; as measured, the claim is reproduced or not reproduced")
    _, v6, _ = _claim_6(tmp_path, [0.45] * 6, split=True)
    assert v6.between == [NOT]
    assert v6.reason.endswith("on the raw one its cause is shown; a cause shown still leaves it inconclusive, as the "
                              "size splits the windows (reproduced in 3 windows (1, 2, 5), partly in 3 windows (0, 3, "
                              "4))")  # fmt: skip
    _, v6, _ = _claim_6(tmp_path, AROUND_HALF, split=False)
    assert v6.between == [REPRODUCED, NOT] and v6.reason.endswith("on the raw one its cause is undecided")


def test_raw_corrected_sides_reads_each_interval():
    """M1: each interval's side from its own bounds, for claim 6's times and claim 7's idle gaps; the interval named,
    as a share "holds 0.5" reads as equal to it (rr21c N1)."""
    assert gaps.raw_corrected_sides((0.516, 0.604), (0.391, 0.654)) == (
        "the 95% interval of the pooled share of the raw times holds 0.5, the host-speed-corrected one lies wholly "
        "above it")  # fmt: skip
    assert gaps.raw_corrected_sides((0.40, 0.49), (0.52, 0.60), "idle gaps") == (
        "the 95% interval of the pooled share of the raw idle gaps lies wholly above 0.5, the host-speed-corrected "
        "one lies wholly below it")  # fmt: skip


def _summary_row(verdict) -> dict:
    """One model's `idle_gaps` row as notebook 06's eager one, its cause's verdict `verdict`."""
    rows = _with_periods(profile_rows(AROUND_HALF), 1500.0, 1090.0)
    row = gaps.idle_gaps(pd.DataFrame(rows).assign(gpu_idle_fraction=0.9)).iloc[0].to_dict()
    return {**row, "sync_causes": verdict}


def test_the_summary_says_the_cause_of_every_model_whatever_its_verdict():
    """M2: the summary had no clause for CORRECTION_DECIDES, so eager's (claim 6's) result was dropped: every verdict
    `pooled_verdict` can give (True, False and each of OPEN) yields a clause naming the model."""
    for verdict in (True, False, *gaps.OPEN):
        said = gaps.gap_summary(pd.DataFrame([_summary_row(verdict)]))
        assert "eager, judged on" in said.split(" Claim 6's size")[0], verdict
    said = gaps.gap_summary(pd.DataFrame([_summary_row(gaps.CORRECTION_DECIDES)]))
    clause = (
        "; eager, judged on each pass's time from the shared work as a share of the rest of its own step, the 95% "
        "interval of the pooled share of the raw times holds 0.5, the host-speed-corrected one lies wholly above it: "
        "whether the stop check (its launches and `.item()`) opens the time before a step, from the work the steps "
        "share, is not decided (the host-speed correction decides; see the takeaways)."
    )
    assert clause in said


def test_the_premise_names_no_card_as_gpu_bound_unmeasured():
    """S2: no L4 or A100 called GPU-bound, and notebook 13's slices named rather than "not measured here"."""
    said = tokgen.claims.premise_text(0.2, "eager")
    assert "L4" not in said and "A100" not in said and "not measured here" not in said
    assert "a card or slice where the GPU holds most of a step" in said and "notebook 13 measures slices" in said


# per 1000 µs: the phases as notebook 06's eager window 0 rounds them, each printed whole 12% + 23% + 19% − 2.0% = 52%
# while the host's three phases less the calls in the gap are 124.6 + 234.6 + 186.0 − 20.0 = 525.2 µs (53%)
PHASES = pd.DataFrame([{"step": 1, "span_us": 1000.0, "gap_us": 550.0, "check_us": 450.0, "host_us": 124.6,
                        "forward_us": 234.6, "launch_us": 186.0, "start_us": 4.8, "sync_copy_us": 57.0,
                        "gap_calls_us": 20.0, "check_busy_us": 43.0}])  # fmt: skip


def test_the_host_work_printed_is_the_sum_of_its_printed_parts():
    """N1: the parts to one decimal (12.5% + 23.5% + 18.6%, less 2.0%) and the total their sum, 52.6%."""
    said = gaps.phase_takeaway("eager", PHASES)
    total = re.search(r"the host's other work before the step's first launch ([\d.]+)% \(its 3 phases", said)
    parts = re.findall(r"' ([\d.]+)%", said.split("its 3 phases together, ")[1].split(", less")[0])
    less = re.search(r"less the ([\d.]+)% of copy and sync call time", said)
    assert parts == ["12.5", "23.5", "18.6"] and total[1] == "52.6" and less[1] == "2.0"
    assert round(sum(map(float, parts)) - float(less[1]), 1) == float(total[1])


def test_the_phases_say_they_are_single_phases_and_the_grouped_host_work_as_the_takeaways_give_it():
    """S3: "the largest part" of single phases beside the takeaways' grouped host work, the same number in both."""
    text = gaps.phases_text("kv_static", PHASES)
    assert text.endswith("is the largest part, though not most of it (of single phases; grouped as the takeaways "
                         "group them, the host's other work before the step's first launch, its 3 phases together, "
                         "less the copy and sync calls' time in the idle gap, holds 52.6%).")  # fmt: skip
    assert "launch 52.6% (its 3 phases together" in gaps.phase_takeaway("eager", PHASES)


def test_naive_more_work_is_said_of_this_window_from_the_steps_its_row_records():
    """S4: no "(by construction)": the positions naive re-runs read from the row's statistics steps (85–99: 86–100;
    not the window's 82–99 less WINDOW_SKIP, so a row's steps ignored fails: rr21c's mutation b), and that the
    window's position decides which generator costs more."""
    kv = {"gpu_busy_per_step_us": 100.0, "kernels_per_step": 50}
    naive = {"gpu_busy_per_step_us": 150.0, "kernels_per_step": 40, "statistics_steps": "85–99"}
    said = gaps.naive_work_text(kv, naive, [80, 100])
    assert "by construction" not in said
    assert ("Naive gives the GPU more work per step at this window: at steps 85–99 it re-runs 86–100 positions a step "
            "(its one prompt token and the tokens so far), which here costs more than one token's step over the "
            "static cache, whose attention runs over all its slots; which costs more depends on the window's "
            "position.") in said  # fmt: skip
    assert "at steps 32–49 it re-runs 33–50 positions" in gaps.naive_work_text(
        kv, pd.Series(naive).drop("statistics_steps"), [30, 50]
    )  # no steps recorded: the window less its first WINDOW_SKIP


def test_claim_6_puts_the_claim_is_before_a_verdict_only(tmp_path):
    """rr21c S1: the corrected pooled interval holds 0.5 (the shares of AROUND_HALF), the raw one lies wholly below it
    (those over the ratio 1.3) and the size holds in every window: "the claim is" went before "its cause is undecided"
    ("the claim is its cause is undecided"); it goes before the first verdict, the raw reading's."""
    _, v6, _ = _claim_6(tmp_path, [s / 1.3 for s in AROUND_HALF], split=False)
    assert v6.between == [REPRODUCED, NOT]
    assert "the claim is its cause" not in v6.reason
    assert v6.reason.endswith("read on the corrected share its cause is undecided, on the raw one the claim is "
                              "reproduced")  # fmt: skip


def test_naive_no_more_work_names_the_steps_its_row_records():
    """rr21c N3: the "no more work" branch read the whole window ("In steps 80–99"); it reads the row's statistics
    steps, as the other branch does."""
    kv = {"gpu_busy_per_step_us": 150.0, "kernels_per_step": 50}
    naive = {"gpu_busy_per_step_us": 100.0, "kernels_per_step": 40, "statistics_steps": "85–99"}
    said = gaps.naive_work_text(kv, naive, [80, 100])
    assert "In steps 85–99 naive re-runs at most 100 positions: its work grows with the step" in said
    assert "In steps 32–49 naive re-runs at most 50 positions" in gaps.naive_work_text(
        kv, pd.Series(naive).drop("statistics_steps"), [30, 50]
    )  # no steps recorded: the window less its first WINDOW_SKIP


def test_the_phases_of_a_generator_without_a_takeaway_do_not_cite_one():
    """rr21c N2: the grouped clause said "as the takeaways group them" for generators no takeaway reads (no stop check,
    pipelined); only the synchronous ones, eager and compiled, say it."""
    text = gaps.phases_text("kv_static_no_check", PHASES)
    assert "takeaway" not in text
    assert text.endswith("(of single phases; the host's 3 phases before the step's first launch together, less the "
                         "copy and sync calls' time in the idle gap, hold 52.6%).")  # fmt: skip
    assert "grouped as the takeaways group them" in gaps.phases_text("compiled kv_static", PHASES)


# per 1000 µs: the host's phases 11.749% + 22.649% + 18.649%, less 3.044% in the idle gap: 50.003%, over half, while
# the parts as printed, 11.7% + 22.6% + 18.6% − 3.0%, add up to 49.9%
EDGE = PHASES.assign(host_us=117.49, forward_us=226.49, launch_us=186.49, gap_calls_us=30.44)


def test_most_of_it_is_decided_on_the_host_total_printed():
    """rr21c S2: the printed total (the sum of the printed parts) 49.9% stood beside "holds most of it (50.003%)";
    the answer is decided on the total printed, and phases_text prints the same total."""
    said = gaps.phase_takeaway("eager", EDGE)
    total = re.search(r"the host's other work before the step's first launch ([\d.]+)% \(its 3 phases", said)[1]
    assert total == "49.9" and "together) holds most of it" not in said
    assert (
        "no part holds most of it: the largest is the host's other work before the step's first launch (its 3 "
        "phases together), 49.9%" in said
    )
    assert gaps.phases_text("kv_static", EDGE).endswith("holds 49.9%).")


def test_the_host_total_sums_the_parts_as_printed_at_a_tie():
    """rr21c S2: 0.0545 prints "5.5%" while round(0.0545, 3) is 0.054: the total sums what is printed, 5.5% + 10.0%
    + 10.0% − 2.0% = 23.5%."""
    said = gaps.phase_takeaway("eager", PHASES.assign(host_us=54.5, forward_us=100.0, launch_us=100.0))
    assert "launch 23.5% (its 3 phases together, " in said and "' 5.5% + " in said
