"""Review r12's templates (fixer F1, rvC S2, S4, S5, N4): the sentences notebooks 03, 04, 13, 14 and solutions 02, 04,
13, 14 used to build inline, each on data whose answer is known."""

import math

import pandas as pd

from tokgen import display
from tokgen.stats import FASTER, NO_EFFECT, SLOWER, UNDECIDED, gain
from tokgen.voice import speedup_text

BASE = [100.0, 101.0, 99.0, 102.0, 98.0, 100.5, 99.5, 101.5, 98.5, 100.2]


def paired(factor: float) -> dict:
    """`tokgen.gain` of a variant `factor` times as fast as BASE in every round (10 rounds: p = 0.002)."""
    times = [";".join(f"{t:.3f}" for t in ts) for ts in (BASE, [t / factor for t in BASE])]
    rows = pd.DataFrame({"variant": ["base", "new"], "status": "ok", "times_ms": times})
    return gain(rows, "base", "new")


def test_fit_crossing_is_where_the_power_laws_meet_and_the_steeper_one_is_faster_below():
    """naive 2·N² and the cache 200·N meet at N = 100; below it the steeper (naive) is the faster."""
    ns = [200, 400, 800]
    naive = pd.DataFrame({"max_seqlen": ns, "median_ms": [2 * n**2 for n in ns], "batch_size": 32})
    kv = pd.DataFrame({"max_seqlen": ns, "median_ms": [200 * n for n in ns], "batch_size": 32})
    text = display.fit_crossing_text(naive, kv)
    assert text.startswith("naive ∝ N^2.00, KV cache ∝ N^1.00 (B = 32). The fitted curves cross at N ≈ 100, below "
                           "which the fits have naive faster; the smallest N measured is 200")  # fmt: skip
    flipped = display.fit_crossing_text(naive.assign(median_ms=[200 * n for n in ns]),
                                        kv.assign(median_ms=[2 * n**2 for n in ns]))  # fmt: skip
    assert "below which the fits have the KV cache faster" in flipped
    assert "outside the sizes measured: a property of the fits" in text
    # review rvB17 S3: a crossing between the sizes measured, or above them, is said as such
    inside = display.fit_crossing_text(naive, kv.assign(median_ms=[600 * n for n in ns]))  # meet at N = 300
    assert "cross at N ≈ 300" in inside and "inside the sizes measured (N = 200–800)" in inside
    assert "outside" not in inside and "smallest" not in inside
    above = display.fit_crossing_text(naive, kv.assign(median_ms=[2000 * n for n in ns]))  # meet at N = 1000
    assert "the largest N measured is 800, so the crossing lies outside the sizes measured" in above
    parallel = display.fit_crossing_text(kv, kv.assign(median_ms=kv["median_ms"] * 2))
    assert "same slope and do not cross" in parallel and "≈" not in parallel


def test_step_growth_says_the_direction_it_took_and_never_rounds_onto_100_percent():
    grows = display.step_growth_text(1.0, 4.0)
    assert grows.startswith("On the GPU the step's busy time grows by 3.000 ms from N = 10 to N = 390 (one profiled "
                            "call each, so no spread), 75% of its busy time at N = 390")  # fmt: skip
    shorter = display.step_growth_text(4.0, 3.9)
    assert "grows by" not in shorter and "is 0.100 ms shorter at N = 390 than at N = 10" in shorter
    assert "100%" not in display.step_growth_text(0.001, 1000.0)  # 99.9999%: not 100%


def test_cache_share_names_no_unmeasured_rest_and_keeps_tiny_shares_off_zero():
    row = {"max_seqlen": 400, "batch_size": 32, "peak_allocated_gb": 1.0, "peak_reserved_gb": 10.0}
    text = display.cache_share_text(row, 0.3, 0.6)
    assert "make 90% of the peak allocated, and the cache alone 3% of what the allocator reserved" in text
    assert "the rest:" not in text and "this page does not measure" in text and "article's 400" not in text
    assert "(0.151 GB after the article's 400" in display.cache_share_text(row, 0.3, 0.6, 0.151)
    assert " 0% " not in display.cache_share_text(row, 0.0001, 0.6)


def test_room_reading_keeps_the_share_on_its_side_of_half_and_reads_each_outcome():
    faster = paired(1.25)
    assert faster["outcome"] == FASTER and not faster["no_effect"]
    host = display.room_reading(faster, 0.4999)
    assert host.startswith("Faster, for real, with 2N slots: the GPU was busy 49.99% of a run at most, so the step "
                           "is host-bound.")  # fmt: skip
    assert "busy 70% of a run: what the extra slots' reads cost" in display.room_reading(faster, 0.7)
    assert "a CPU run measures nothing" in display.room_reading(faster, math.nan)
    assert display.room_reading(paired(0.8), 0.3).startswith("Slower with 2N slots, for real")
    assert display.room_reading(None, 0.3) == "Not measured."


def test_hidden_sync_counts_only_where_more_without_the_position():
    more = display.hidden_sync_text(pd.Series({True: 0.0, False: 1.0}))
    assert more == "Without `cache_position`: about 1.0 stream syncs per step, 0.0 with it."
    assert "no hidden sync" in display.hidden_sync_text(pd.Series({True: 1.0, False: 1.0}))


def test_static_outcomes_by_n_and_runtime_lines_carry_no_verdict_of_their_own():
    rows = pd.DataFrame([paired(0.8) | {"max_seqlen": 100}, paired(1.25) | {"max_seqlen": 200}])
    text = display.outcomes_by_n_text(rows)
    assert text.startswith(f"Round by round, the static cache against the dynamic one: {SLOWER} at N = 100; "
                           f"{FASTER} at N = 200. Its speed-up grows across N")  # fmt: skip
    g = paired(1.25)
    assert display.runtime_at_n_text(100, g, smallest=True) == (
        f"* Runtime at N = 100: static against dynamic {speedup_text(g)}; the article has it slower there.")
    line = display.runtime_at_n_text(200, None, smallest=False)
    assert line.endswith("not measured; the article has it faster there.") and "held" not in line


def test_fragmentation_lower_counts_the_n_where_the_static_cache_is_lower():
    frag = pd.DataFrame({"kv_dynamic": [0.5, 0.4], "kv_static": [0.1, 0.6]}, index=[100, 200])
    assert display.fragmentation_lower_text(frag) == (
        "* Fragmentation was lower with the static cache at 1 of 2 N. Dynamic → static: N = 100: 0.50 → 0.10 GB; "
        "N = 200: 0.40 → 0.60 GB.")  # fmt: skip
    assert "at every N" in display.fragmentation_lower_text(frag.assign(kv_static=[0.1, 0.2]))
    assert "at no N" in display.fragmentation_lower_text(frag.assign(kv_static=[0.5, 0.4]))  # equal is not lower


def test_halved_counts_at_most_half_inclusive():
    frag = pd.DataFrame({"default": [1.0, 0.4], "expandable": [0.5, 0.3]}, index=[100, 200])
    assert display.halved_text(frag, 20) == (
        "Fragmentation with expandable segments was at most half the default's at 1 of 2 N (N = 100: 1.00 → 0.50 GB, "
        "at most half; N = 200: 0.40 → 0.30 GB, more than half). Claim 3 judges only the N where the default's is at "
        "least 20% of what it reserved.")  # fmt: skip


def test_escaped_copy_reads_the_factor_over_the_two_slices_with_notebook_13s_rule():
    slices = pd.DataFrame({"gpu_sms": [8, 16, 24], "copy_gbs": [600.0, 1100.0, 1500.0],
                           "escaped_stream_gbs": [2850.0, 2850.0, 2850.0]})  # fmt: skip
    assert display.escaped_copy_text(slices, 8, 16) == (
        "In the slices of 8 and 16 SMs, a stream made inside copied ×2.6–×4.8 as fast as the slice itself: it escapes "
        "to the whole GPU (notebook 13's rule: more than ×1.5 the slice's rate).")  # fmt: skip
    one = display.escaped_copy_text(slices.assign(escaped_stream_gbs=[700.0, 2850.0, 2850.0]), 8, 16)
    assert "×1.2–×2.6" in one and "it escapes from one of them only" in one


def test_deferred_row_says_the_share_and_the_speed_up():
    g = paired(1.25)
    text = display.deferred_row_text("whole GPU", g | {"cache": "static", "gpu_share_sync": 0.456}, bold=True)
    said = speedup_text(g)
    assert text == f"* whole GPU, static cache: GPU share of a synchronous step 0.46; deferred against sync **{said}**."
    failed = display.deferred_row_text("B = 4", {"cache": "dynamic", "gpu_share_sync": 0.3})  # no comparison: a failure
    assert failed == "* B = 4, dynamic cache: GPU share of a synchronous step 0.30; deferred against sync not measured."
    # rrC12 S3: compare() keeps a failed variant's row; usable() drops it, so its gain is None, not ×nan
    from tokgen.claims import usable
    from tokgen.stats import gain

    rows = pd.DataFrame([{"variant": "generate() dynamic sync", "status": "ok", "times_ms": "1;2;3;4;5;6"},
                         {"variant": "generate() dynamic deferred", "status": "error", "times_ms": ""}])  # fmt: skip
    g = gain(usable(rows), "generate() dynamic sync", "generate() dynamic deferred")
    said = display.deferred_row_text("B = 4", {**(g or {}), "cache": "dynamic", "gpu_share_sync": float("nan")})
    assert said == "* B = 4, dynamic cache: GPU share of a synchronous step not measured; deferred against sync " \
        "not measured."


def test_static_vs_dynamic_says_same_or_different_outcomes_or_undecided_and_never_tied():
    def row(sms, cache, outcome, no_effect=False, confined=True):
        return {"gpu_sms": sms, "cache": cache, "outcome": outcome, "no_effect": no_effect, "confined": confined}

    gains = pd.DataFrame([
        row("all", "dynamic", FASTER, confined="whole GPU"), row("all", "static", FASTER, confined="whole GPU"),
        row("8", "dynamic", FASTER), row("8", "static", FASTER, no_effect=True),  # real, but within ±5%: no effect
        row("16", "dynamic", FASTER), row("16", "static", UNDECIDED),
        row("24", "dynamic", NO_EFFECT), row("24", "static", FASTER, confined=False),
    ])  # fmt: skip
    lines = display.static_vs_dynamic_text(gains)
    assert [line.split(" (")[0] for line in lines] == [
        "* whole GPU: the same outcome for both; whether the gains differ in size, no test here says",
        "* 8-SM slice: the outcomes differ; no test here compares the two gains' sizes",
        "* 16-SM slice: undecided: the static cache's comparison is undecided",
        "* 24-SM slice: not compared",
    ]  # fmt: skip
    assert lines[0] == (f"* whole GPU: the same outcome for both; whether the gains differ in size, no test here says "
                        f"(dynamic {FASTER}, static {FASTER}).")  # fmt: skip
    both_open = display.static_vs_dynamic_text(gains.assign(outcome=UNDECIDED).head(2))
    assert both_open[0].startswith("* whole GPU: undecided: both caches' comparisons are undecided (")


def test_slice_bandwidth_lines_carry_the_unit_and_call_the_l40s_figure_a_datasheet_peak():
    sliced = pd.DataFrame({"gpu_sms": [8, 16], "slice_copy_gbs": [625.3, 1137.0]})
    lines = display.slice_bandwidth_lines(sliced, {8, 16}, 864)
    assert lines == [
        "* 8 SMs: 625 GB/s of copy bandwidth (measured), below the L40S's 864 GB/s (its datasheet peak, not a measured "
        "copy: the comparison is approximate); one of the two that bracket it.",
        "* 16 SMs: 1,137 GB/s of copy bandwidth (measured), above the L40S's 864 GB/s (its datasheet peak, not a "
        "measured copy: the comparison is approximate); one of the two that bracket it.",
    ]  # fmt: skip
    assert display.slice_bandwidth_lines(sliced.head(1), set(), 864)[0].endswith("in this results folder.")


def test_shares_by_outcome_leave_out_rows_not_confined():
    deferred = pd.DataFrame({"confined": ["whole GPU", True, False], "outcome": [FASTER, FASTER, SLOWER],
                             "gpu_share_sync": [0.9, 0.456, 0.2]})  # fmt: skip
    assert display.shares_by_outcome_text(deferred) == (
        f"* By outcome, the GPU shares of the synchronous step (rows not confined, or not measured, left out): "
        f"{FASTER}: 0.46, 0.90. Notebook 13 maps such gains against the GPU share over more places and batch sizes.")
    assert display.shares_by_outcome_text(deferred.iloc[[2]]) == ""


def test_closest_to_criterion_reads_an_interval_from_its_nearer_end():
    """rvD12 S3 / rrC12 S2: claim 10's interval ×2.14–×2.44 is 2.4% below ×2.5 (its point ×2.34 would say 6.4%);
    claim 1's growth per doubling's interval (its lowest low end and lowest high end, `criterion_keys`) ×2.54–×3.09
    is 4.9% below ×3.25, printed as its criterion prints it (×3.25, not ×3.24901; review rvA17 M1): claim 10 is
    nearest; an inconclusive claim is not counted. Each end named once, with the step it is at where the key gives
    one (review rr17a N9: "its growth per doubling's interval's high end" named no step)."""
    growth = 2**1.7
    claims = pd.DataFrame({"#": [1, 10], "verdict": ["partly", "not reproduced"]})
    keys = {1: ("growth per doubling's interval", (2.54, 3.09), (growth,), ("200→400", "100→200")),
            10: ("speed-up's interval", (2.14, 2.44), (2.5, 4.0))}  # fmt: skip
    assert display.closest_to_criterion(claims, keys) == (
        "Of the decided verdicts judged against a growth or speed-up threshold (claim 1 on its growth per doubling's "
        "interval; claim 10 on its speed-up's interval), claim 10's sits nearest one: the high end of its speed-up's "
        "interval, ×2.44, is 2.4% below ×2.5 (then claim 1: the high end of its growth per doubling's interval at "
        "100→200, ×3.09, is 4.9% below ×3.25). The "
        "other claims have no such threshold (claim 5: one comparison's outcome) or are judged per N (2), per window "
        "(6, 7) or on several comparisons (3, 4, 8, 9).")  # fmt: skip
    wide = {**keys, 10: ("speed-up's interval", (2.0, 2.48), (2.5, 4.0)),
            1: ("growth per doubling's interval", (2.6, 2.9), (growth,))}  # fmt: skip
    assert "claim 10's sits nearest one: the high end of its speed-up's interval, ×2.48, is 0.8% below" in \
        display.closest_to_criterion(claims, wide)  # the point ×2.2 (12% away) would have named claim 1 (10.7%)
    assert display.closest_to_criterion(claims.assign(verdict="inconclusive"), keys).startswith("No decided verdict")
    # review pvA15 S5: claim 1 inconclusive is not listed among the decided verdicts, but as not counted
    open_ = display.closest_to_criterion(claims.assign(verdict=["inconclusive (partly in 95–97% of 1,200)", "not "
                                                                "reproduced"]), keys)  # fmt: skip
    assert open_.startswith("Of the decided verdicts judged against a growth or speed-up threshold (claim 10 on its "
                            "speed-up's interval; not counted: claim 1, inconclusive), claim 10's sits nearest one: ")
