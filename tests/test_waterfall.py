"""The gap waterfall (tokgen.waterfall): a fake timeline with known durations and gaps gives known terms."""

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from tokgen import bandwidth, waterfall  # noqa: E402

STEP = ("k1", "k2")


def fake_events() -> pd.DataFrame:
    """A reset, two replays of three kernels (the first with an overlap of 2 µs and a gap of 5 µs, the
    second with a gap of 1 µs), a flag copy after each, and a trim kernel; times in µs."""
    rows = [
        ("memset", "memset", 0, 2),
        ("k1", "kernel", 10, 20),
        ("k2", "kernel", 18, 30),
        ("k1", "kernel", 35, 40),
        ("Memcpy DtoH", "memcpy", 42, 44),
        ("k1", "kernel", 50, 60),
        ("k2", "kernel", 61, 70),
        ("k1", "kernel", 70, 75),
        ("Memcpy DtoH", "memcpy", 76, 77),
        ("nonzero", "kernel", 80, 85),
    ]
    shuffled = rows[5:] + rows[:5]  # the order of the events does not matter, their start does
    return pd.DataFrame(shuffled, columns=["name", "kind", "start", "end"])


CALLS = [("k1", "a", 1000), ("k2", "b", 2000), ("k1", "c", 0)] * 2
# 1000 B -> 4 µs, 2000 B -> 6 µs; its kernel's long copy, 8000 B in 8 µs, at the floor's rate (1 GB/s below): unscaled
CURVE = pd.DataFrame({"bytes": [500, 4000], "copy_us": [3.0, 10.0], "long_copy_bytes": 8000, "long_copy_us": 8.0})


def test_timeline_terms_of_a_known_timeline():
    t = waterfall.timeline_terms(fake_events(), STEP)
    assert t["replays"] == 2
    assert list(t["kernels"]["exclusive"]) == pytest.approx([10, 10, 5, 10, 9, 5])  # k2 from k1's end (20), not 18
    assert t["durations"] == pytest.approx(25 + 24)  # exclusive times: the raw durations add up to 27 + 24
    assert t["overlap"] == pytest.approx(2)
    assert t["gaps"] == pytest.approx(5 + 1)
    assert t["stop_gpu"] == pytest.approx(4)  # from the first replay's end (40) to its flag copy's (44)
    assert t["launch"] == pytest.approx(6)  # from there to the second replay's first kernel (50)
    assert t["around"] == pytest.approx(20)  # reset and trim: a span of 85 µs, the replays' 65
    assert t["span"] == pytest.approx(85)
    assert t["busy"] == pytest.approx(59)
    assert list(t["kernels"]["name"]) == ["k1", "k2", "k1"] * 2
    # the replays' span, stage by stage
    assert t["durations"] + t["gaps"] + t["stop_gpu"] + t["launch"] + t["around"] == t["span"]


def pdl_replays() -> pd.DataFrame:
    """Two replays as programmatic dependent launch runs them: each kernel starts before the one before
    it ends and waits; one kernel runs inside an earlier one, one starts after a kernel that ended
    before the latest end; a gap of 3 µs; the flag's copy between the replays; times in µs."""
    rows = [
        ("k1", "kernel", 0, 10),  # exclusive 10
        ("k2", "kernel", 2, 12),  # waits 2..10: exclusive 2
        ("k1", "kernel", 3, 8),  # inside the first: exclusive 0, not -4
        ("k2", "kernel", 9, 20),  # from 12 (the latest end before it), not 8 (the kernel just before): 8
        ("k1", "kernel", 23, 25),  # after a gap of 3: exclusive 2
        ("Memcpy DtoH", "memcpy", 25, 27),
        ("k1", "kernel", 30, 35),  # a new replay: from its own start, 5
        ("k2", "kernel", 31, 40),  # 5
    ]
    return pd.DataFrame(rows, columns=["name", "kind", "start", "end"])


def test_exclusive_times_of_overlapping_kernels_partition_each_replay():
    t = waterfall.timeline_terms(pdl_replays(), STEP)
    k = t["kernels"]
    assert list(k["exclusive"]) == pytest.approx([10, 2, 0, 8, 2, 5, 5])
    assert t["durations"] == pytest.approx(22 + 10)  # each replay's busy time: 0..20 and 23..25, then 30..40
    assert t["overlap"] == pytest.approx((38 - 22) + (14 - 10))  # the raw durations minus the exclusive times
    assert t["gaps"] == pytest.approx(3)
    assert t["stop_gpu"] == pytest.approx(2) and t["launch"] == pytest.approx(3)
    assert t["durations"] + t["gaps"] + t["stop_gpu"] + t["launch"] + t["around"] == pytest.approx(t["span"])
    calls = [("k1", "a", 1000), ("k2", "b", 0), ("k1", "a", 1000), ("k2", "b", 0), ("k1", "a", 1000),
             ("k1", "a", 1000), ("k2", "b", 0)]  # fmt: skip
    table = waterfall.kernel_table(k, calls, 1.0, CURVE)
    by = table.set_index("what")
    assert by.loc["a", "own_ms"] == pytest.approx((10 + 0 + 2 + 5) / 1e3)
    assert by.loc["b", "own_ms"] == pytest.approx((2 + 8 + 5) / 1e3)
    assert by.loc["b", "duration_ms"] == pytest.approx((10 + 11 + 9) / 1e3)  # the waits stay visible here
    assert by.loc["a", "median_us"] == pytest.approx(3.5)  # one launch's exclusive time: 0, 2, 5, 10
    assert table["own_ms"].sum() == pytest.approx(t["durations"] / 1e3)
    w = waterfall.waterfall_table(0.1, floor_ms=0.004, compute_ms=0.0, kernels=table, timeline=t,
                                  wall_profiled_ms=0.05)  # fmt: skip
    terms = w[w["status"].isin([*waterfall.VALUED, "remainder"])].set_index("term")
    assert terms.loc[waterfall.KERNELS, "ms"] == pytest.approx(0.032 - 4 * 0.004)  # four copies of 1000 B, 4 µs each
    assert "0.020 ms of the kernels' durations overlap an earlier kernel" in terms.loc[waterfall.KERNELS, "note"]
    assert terms["ms"].sum() == pytest.approx(0.1)
    assert terms.loc[waterfall.REMAINDER, "ms"] == pytest.approx(0.1 - 0.05)  # the profiled wall time is 0.05 ms


def test_timeline_without_the_steps_kernels_is_refused():
    with pytest.raises(ValueError, match="no kernel of the step"):
        waterfall.timeline_terms(fake_events(), ("other",))


def test_kernel_table_of_known_bytes():
    t = waterfall.timeline_terms(fake_events(), STEP)
    k = waterfall.kernel_table(t["kernels"], CALLS, 1.0, CURVE).set_index("what")  # 1 GB/s: 1 µs per 1000 B
    assert list(k["launches"]) == [2, 2, 2]
    assert k.loc["a", "own_ms"] == pytest.approx(0.020) and k.loc["b", "own_ms"] == pytest.approx(0.019)
    assert k.loc["b", "duration_ms"] == pytest.approx(0.021)  # k2 starts at 18, 2 µs before k1 ends
    assert k.loc["a", "at_copy_ms"] == pytest.approx(0.002) and k.loc["b", "at_copy_ms"] == pytest.approx(0.004)
    assert k.loc["a", "at_size_ms"] == pytest.approx(0.008) and k.loc["b", "at_size_ms"] == pytest.approx(0.012)
    assert k.loc["c", "at_size_ms"] == 0  # no bytes, no copy
    assert k.loc["a", "pct_of_copy_bandwidth"] == pytest.approx(10)
    assert k.loc["a", "mb"] == pytest.approx(0.002)
    assert k.loc["a", "rate_gb_s"] == pytest.approx(0.1) and k.loc["b", "rate_gb_s"] == pytest.approx(0.004 / 0.019)


def test_the_copy_curve_is_scaled_to_the_floors_copy_before_each_kernels_size_is_read_from_it():
    """rv19B S5: a curve whose kernel copied its long copy at half the floor's rate (8000 B in 16 µs at 1 GB/s,
    where the floor takes 8 µs) is scaled by 0.5, so its long copy takes the floor's time and each kernel's copy
    of its size half the curve's time: a 1000 B launch 2 µs, a 2000 B one 3 µs; the term's note says so."""
    slow = CURVE.assign(long_copy_us=16.0)
    scaled = waterfall.scaled_curve(slow, 1.0)
    assert scaled["at_floor_us"].tolist() == [1.5, 5.0]
    factor = scaled["at_floor_us"] / scaled["copy_us"]
    assert (scaled["long_copy_us"] * factor == 8000 / 1.0 / 1e3).all()  # its long copy, scaled: the floor's time
    assert waterfall.scaled_curve(slow, 2.0)["at_floor_us"].tolist() == [0.75, 2.5]  # twice the floor's rate
    t = waterfall.timeline_terms(fake_events(), STEP)
    k = waterfall.kernel_table(t["kernels"], CALLS, 1.0, slow).set_index("what")
    assert k.loc["a", "at_size_ms"] == pytest.approx(0.004) and k.loc["b", "at_size_ms"] == pytest.approx(0.006)
    assert waterfall.curve_calibration(slow, 1.0) == pytest.approx((0.008, 0.5))
    assert waterfall.curve_calibration(CURVE[["bytes", "copy_us"]], 1.0) is None
    with pytest.raises(ValueError, match="the curve has no long_copy_bytes, long_copy_us: pass copy_time_curve's"):
        waterfall.kernel_table(t["kernels"], CALLS, 1.0, CURVE[["bytes", "copy_us"]])
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k.reset_index(), errors={"timeline":
                                  "no GPU"}, calibration=(2147.5, 0.862)).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] == (
        "the copy curve is scaled by 0.862 (applied at every size): its kernel's long copy (2,148 MB read and "
        "written) ran at 86.2% of the floor's copy rate, so scaled it takes the floor's time and this term is size "
        "alone; that kernel's difference from the floor's copy falls in the next term")


def test_a_failed_long_copy_keeps_the_curve_unscaled_and_the_term_says_why(monkeypatch):
    """rr20h S4: the 1 GiB copy that sets the curve on the floor's copy can fail (out of memory on a 16 GB card)
    after every size was timed; the sizes' times are kept, the curve is used unscaled (factor 1: CURVE's 1000 B
    launch 4 µs, its 2000 B one 6 µs, as the curve's own kernel copied them), and the term's note and basis say
    that it was not scaled, and why."""
    timed = []

    def copy_us(size, runs, device, blocks, l2):
        timed.append(size)
        if size == waterfall.LONG_COPY_BYTES:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB\nmore")
        return size, {500: 3.0, 4000: 10.0}[size]

    monkeypatch.setattr(waterfall, "require_cuda", lambda what: None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(L2_cache_size=2**20))
    monkeypatch.setattr(waterfall, "_copy_us", copy_us)
    curve = waterfall.copy_time_curve([500, 4000], 3, device="cuda")
    assert timed == [500, 4000, waterfall.LONG_COPY_BYTES]
    assert curve["copy_us"].tolist() == [3.0, 10.0] and curve["long_copy_us"].isna().all()
    assert (curve["long_copy_error"] == "OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB").all()
    assert waterfall.scaled_curve(curve, 2.0)["at_floor_us"].tolist() == [3.0, 10.0]  # factor 1, whatever the rate
    t = waterfall.timeline_terms(fake_events(), STEP)
    k = waterfall.kernel_table(t["kernels"], CALLS, 1.0, curve).set_index("what")
    assert k.loc["a", "at_size_ms"] == pytest.approx(0.008) and k.loc["b", "at_size_ms"] == pytest.approx(0.012)
    why = waterfall.curve_calibration(curve, 1.0)
    assert why == "its kernel's long copy was not timed (OutOfMemoryError: CUDA out of memory. Tried to allocate " \
        "1.00 GiB)"  # fmt: skip
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k.reset_index(), calibration=why,
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "ms"] == pytest.approx(0.020 - 0.006)  # at size 2 × (4 + 6) µs, at copy 2 × 3 µs
    assert w.loc[waterfall.SMALL, "note"] == (
        "not scaled: its kernel's long copy was not timed (OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "1.00 GiB), so the copy curve is its kernel's own and this term holds that kernel's difference from the "
        "floor's copy as well as size")  # fmt: skip
    assert w.loc[waterfall.SMALL, "basis"] == waterfall.UNSCALED and w.loc[waterfall.SMALL, "status"] == "derived"
    assert waterfall.curve_calibration(curve.drop(columns="long_copy_error"), 1.0) == (
        "its kernel's long copy was not timed")  # fmt: skip


def test_kernel_table_names_the_first_launch_that_differs():
    t = waterfall.timeline_terms(fake_events(), STEP)
    wrong = CALLS[:4] + [("k1", "b", 2000), CALLS[5]]
    with pytest.raises(ValueError, match="launch 4: the timeline has k2"):
        waterfall.kernel_table(t["kernels"], wrong, 1.0, CURVE)
    with pytest.raises(ValueError, match="ran 6 kernels"):
        waterfall.kernel_table(t["kernels"], CALLS[:5], 1.0, CURVE)
    with pytest.raises(ValueError, match="no 'exclusive' column"):  # raw events have durations only
        waterfall.kernel_table(t["kernels"].drop(columns="exclusive"), CALLS, 1.0, CURVE)


def measured_table(compute_ms=0.001, **overrides):
    t = waterfall.timeline_terms(fake_events(), STEP)
    k = waterfall.kernel_table(t["kernels"], CALLS, 1.0, CURVE)
    inputs = dict(floor_ms=0.004, compute_ms=compute_ms, kernels=k, timeline=t, wall_profiled_ms=0.1) | overrides
    return waterfall.waterfall_table(0.2, **inputs).set_index("term")


def test_waterfall_terms_of_a_known_timeline_add_up_to_the_measured_time():
    w = measured_table()
    expected = {
        waterfall.FLOOR: 0.004,
        waterfall.COMPUTE: 0.0,  # 0.001 ms of arithmetic hides under 0.004 ms of bytes
        waterfall.EXTRA_BYTES: 0.006 - 0.004,
        waterfall.SMALL: 0.020 - 0.006,
        waterfall.KERNELS: 0.049 - 0.020,
        waterfall.GAPS: 0.006,
        waterfall.STOP_GPU: 0.004,
        waterfall.LAUNCH: 0.006,
        waterfall.AROUND: 0.020,
        waterfall.HOST: 0.1 - 0.085,
        waterfall.REMAINDER: 0.2 - 0.1,
        waterfall.TOTAL: 0.2,
    }
    assert list(w.index) == list(expected)
    assert w["ms"].to_dict() == pytest.approx(expected)
    assert w.loc[waterfall.COMPUTE, "note"] == ("the products' arithmetic of the floor's steps alone takes 0.001 ms at "
                                                "the measured rate (steps a replay computes past N or past the stop "
                                                "are in the kernels' bytes)")  # fmt: skip
    assert w.loc[waterfall.KERNELS, "note"].startswith("each kernel's time after the kernels before it ended; "
                                                       "0.002 ms of the kernels' durations overlap")  # fmt: skip
    terms = w[w["status"].isin([*waterfall.VALUED, "remainder"])]
    assert terms["ms"].sum() == pytest.approx(0.2)
    # each bar starts where the one before it ended; the last ends at the measured time
    assert list(terms["start_ms"].iloc[1:]) == pytest.approx(list(terms["end_ms"].iloc[:-1]))
    assert terms["end_ms"].iloc[-1] == pytest.approx(0.2)
    assert w["status"].isin(waterfall.VALUED).sum() == len(waterfall.TERMS)


def test_arithmetic_beyond_the_floor_comes_out_of_the_kernels_term():
    w = measured_table(compute_ms=0.010)
    assert w.loc[waterfall.COMPUTE, "ms"] == pytest.approx(0.006)
    assert w.loc[waterfall.KERNELS, "ms"] == pytest.approx(0.029 - 0.006)
    assert w.loc[waterfall.REMAINDER, "ms"] == pytest.approx(0.1)


def test_terms_not_measured_are_rows_with_the_reason_and_the_remainder_holds_them():
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, errors={"timeline": "RuntimeError: no GPU"})
    w = w.set_index("term")
    for term in (waterfall.GAPS, waterfall.LAUNCH, waterfall.HOST):
        assert w.loc[term, "status"] == waterfall.NOT_MEASURED and w.loc[term, "note"] == "RuntimeError: no GPU"
    assert w.loc[waterfall.KERNELS, "status"] == waterfall.NOT_MEASURED
    assert w.loc[waterfall.REMAINDER, "ms"] == pytest.approx(0.2 - 0.004)
    assert w.loc[waterfall.REMAINDER, "note"].startswith("holds 8 term(s) not measured")
    two = measured_table(compute_ms=None, errors={"compute": "no TF32 rate"})  # the kernels' term needs it too
    assert two.loc[waterfall.KERNELS, "note"] == "no TF32 rate"
    said = two.loc[waterfall.REMAINDER, "note"]
    assert said == f"holds 2 term(s) not measured: {waterfall.COMPUTE}; {waterfall.KERNELS}"
    assert two.loc[waterfall.REMAINDER, "ms"] == pytest.approx(0.1 + 0.029)
    assert w[w["status"].isin([*waterfall.VALUED, "remainder"])]["ms"].sum() == pytest.approx(0.2)


def test_biggest_term_is_read_from_the_rows():
    w = measured_table().reset_index()
    said = waterfall.biggest_term(w)
    # 0.1 of 0.2 ms, larger than every other term; 0.1 of the 0.196 ms above the 0.004 ms floor
    assert f"**{waterfall.REMAINDER}**: 0.1 ms (50% of the measured time, 51% of the gap above the floor)" in said
    assert "the measured time, 0.2 ms, is 50.00× the floor" in said  # 0.2 / 0.004


def test_the_profiler_note_says_which_between_replay_terms_the_unprofiled_time_cannot_hold():
    def terms(stop, launch, remainder):
        return pd.DataFrame({"term": [waterfall.FLOOR, waterfall.STOP_GPU, waterfall.LAUNCH, waterfall.REMAINDER],
                             "ms": [20.8, stop, launch, remainder]})  # fmt: skip

    # notebook 12's K = 1 of an earlier run: 57.85 ms profiled, 51.16 ms unprofiled, 0.82 ms outside busy time:
    # the profiler's 6.69 ms exceed that idle time, so nothing is set against it
    unsized = {"measured_ms": 51.16, "wall_profiled_ms": 57.85, "wall_minus_busy_ms": 0.82}
    said = waterfall.profiler_note(terms(0.64, 5.81, -6.69), unsized)
    assert said == ("The profiled generation ran 6.69 ms slower than the unprofiled ones (the remainder, −6.69 ms, is "
                    "more than 5% of the measured time below zero; more than the 0.82 ms of GPU idle time the "
                    "unprofiled time leaves beside the profiled busy time, so this run cannot size that idle time); "
                    "the between-replay terms (6.45 ms) are not set against it: which terms hold the difference (the "
                    "profiler's effect and one generation's variation, not told apart here) is not measured here.")
    # the same terms with 7 ms of idle time, larger than the 6.69 ms slowdown: the comparison is made
    k1 = {**unsized, "wall_minus_busy_ms": 7.0}
    said = waterfall.profiler_note(terms(3.0, 5.81, -6.69), k1)
    assert said.startswith("The profiled generation ran 6.69 ms slower than the unprofiled ones (the remainder, "
                           "−6.69 ms, is more than 5% of the measured time below zero); ")  # fmt: skip
    assert said.endswith("the between-replay terms (8.81 ms) exceed the 7.00 ms the unprofiled time leaves outside "
                         "the GPU's busy time, so part of them is this profiled generation's own (the profiler's "
                         "effect or one generation's variation, not told apart here): at least 1.81 ms.")
    assert "so most of them are this profiled generation's own (the profiler's effect or one generation's " \
        "variation, not told apart here): at least 13.00 ms." in waterfall.profiler_note(terms(10.0, 10.0, -6.69), k1)
    # a profiled generation faster by more than the idle time sizes nothing either (the per-K table agrees)
    quick = {"measured_ms": 57.53, "wall_profiled_ms": 55.68, "wall_minus_busy_ms": 0.86}
    fast = waterfall.profiler_note(terms(0.037, 0.044, 1.85), quick)
    assert fast.startswith("The profiled generation ran 1.85 ms faster than the unprofiled ones (more than the 0.86")
    assert "are not set against it" in fast
    # K = 4 of that run: a remainder of -1.0 ms is 2% of 51.31 ms, under the 5% share, and the profiled
    # generation ran 1.0 ms slower, under the 1.5 ms of idle time: nothing to say
    k4 = {"measured_ms": 51.31, "wall_profiled_ms": 52.31, "wall_minus_busy_ms": 1.5}
    assert waterfall.profiler_note(terms(0.2, 0.08, -1.0), k4) == ""
    wide = {**k1, "wall_minus_busy_ms": 3.0}  # idle time larger than the slowdowns below: only the share decides
    assert waterfall.profiler_note(terms(0.64, 5.81, -2.5), {**wide, "wall_profiled_ms": 53.66}) == ""  # 4.9%
    assert waterfall.profiler_note(terms(0.64, 5.81, -2.6), {**wide, "wall_profiled_ms": 53.76}) != ""  # 5.1%
    # notebook 12's K = 16 of the r8 run: -1.85 ms is 3.2% of 57.53 ms, under the share, but the profiled
    # generation ran 1.85 ms slower than the unprofiled ones, more than the 0.86 ms of idle time: said
    k16 = {"measured_ms": 57.53, "wall_profiled_ms": 59.38, "wall_minus_busy_ms": 0.86}
    said = waterfall.profiler_note(terms(0.037, 0.044, -1.85), k16)
    assert said.startswith("The profiled generation ran 1.85 ms slower than the unprofiled ones (more than the 0.86 ms "
                           "of GPU idle time the unprofiled time leaves beside the profiled busy time, so this run "
                           "cannot size that idle time); the between-replay terms (0.08 ms) are not set")  # fmt: skip
    assert waterfall.profiler_note(terms(0.037, 0.044, -0.80), {**k16, "wall_profiled_ms": 58.33}) == ""  # 0.80 < 0.86
    fits = waterfall.profiler_note(terms(2.0, 4.0, -6.69), k1)  # 6.0 ms fits in 7.0 ms
    assert "(6.00 ms) fit within the 7.00 ms" in fits and "not measured here" in fits
    assert waterfall.profiler_note(terms(0.64, 5.81, -6.69), {**k1, "wall_minus_busy_ms": None}) == ""  # no timeline


def test_gap_split_reads_the_kernel_and_boundary_shares_from_the_rows():
    """Notebook 12's K = 1 of the r8 run: a 30.5 ms gap over a 21.1 ms floor; 8.1 + 20.4 ms in the
    kernels' terms (94%), 0.11 + 0.54 + 0.60 ms between kernels and replays (4%), the rest 2%."""
    names = [waterfall.FLOOR, waterfall.COMPUTE, waterfall.EXTRA_BYTES, waterfall.SMALL, waterfall.KERNELS,
             waterfall.GAPS, waterfall.STOP_GPU, waterfall.LAUNCH, waterfall.AROUND, waterfall.HOST,
             waterfall.REMAINDER, waterfall.TOTAL]  # fmt: skip
    ms = [21.129, 0.0, 0.021, 8.130, 20.446, 0.110, 0.538, 0.604, 0.736, 0.505, -0.565, 51.654]
    status = ["measured"] * 10 + ["remainder", "total"]
    terms = pd.DataFrame({"term": names, "ms": ms, "status": status})
    said = waterfall.gap_split(terms)
    assert said == ("Of the 30.5 ms between the floor and the measured time, the kernels' own terms (copies of each "
                    "kernel's size; kernels slower than such copies) hold **94%**, the time between kernels and "
                    "between replays (gaps, the stop check with its flag's copy, graph launch or host) 4%, the other "
                    "terms "
                    "(arithmetic, extra bytes, the span around the replays, the host) 4% and the remainder −2%.")
    # rvB12 N1: 0.087 ms of a 29.4 ms gap is 0.3%, not "0%"; the remainder (−1.926 ms, −6.6%) apart, not netted
    small = terms.assign(ms=[21.0, 0.0, 3.0, 10.0, 15.246, 0.010, 0.040, 0.037, 2.0, 0.967, -1.926, 50.374])
    assert ("graph launch or host) 0.3%, the other terms (arithmetic, extra bytes, the span around the replays, the "
            "host) 20% and the remainder −7%.") in waterfall.gap_split(small)
    # launch gaps that dominate: the sentence follows the data, not the teaching text's expectation
    launch_heavy = terms.assign(ms=[21.129, 0.0, 0.021, 1.0, 2.0, 0.110, 0.538, 26.0, 0.736, 0.505, -0.055, 51.654])
    assert "hold **10%**, the time between kernels and between replays (gaps, the stop check with its flag's copy, " \
        "graph launch or host) 87%" in waterfall.gap_split(launch_heavy)
    unmeasured = terms.assign(ms=[21.129, 0.0, 0.021, float("nan"), 20.446, 0.11, 0.538, 0.604, 0.736, 0.505,
                                  -0.565, 51.654])  # fmt: skip
    assert waterfall.gap_split(unmeasured).startswith("*Where the gap lies is not measured here")


def test_gpu_idle_per_k_says_where_the_profiler_is_as_large_as_the_idle_time():
    """Notebook 12's r8 run: unprofiled 51.65/51.78/57.53 ms, profiled busy 49.90/50.65/56.67 ms, the
    profiled generations 0.57/0.96/1.85 ms slower: only K = 16's slowdown exceeds its idle time."""

    def out(measured, profiled, busy, stop, launch):
        terms = pd.DataFrame({"term": [waterfall.STOP_GPU, waterfall.LAUNCH], "ms": [stop, launch]})
        idle = None if busy is None else measured - busy
        return {"terms": terms, "summary": {"replays": 1, "measured_ms": measured, "wall_profiled_ms": profiled,
                                            "gpu_busy_ms": busy, "wall_minus_busy_ms": idle}}  # fmt: skip

    runs = {1: out(51.65, 52.22, 49.90, 0.54, 0.60), 4: out(51.78, 52.74, 50.65, 0.15, 0.15),
            16: out(57.53, 59.38, 56.67, 0.037, 0.044)}  # fmt: skip
    per_k = waterfall.gpu_idle_per_k(runs)
    assert list(per_k["gpu_idle_ms"]) == pytest.approx([1.75, 1.13, 0.86])  # unprofiled wall - profiled busy
    assert list(per_k["profiled_idle_ms"]) == pytest.approx([2.32, 2.09, 2.71])  # profiled wall - profiled busy
    assert list(per_k["profiled_minus_unprofiled_ms"]) == pytest.approx([0.57, 0.96, 1.85])
    assert list(per_k["between_replays_ms"]) == pytest.approx([1.14, 0.30, 0.081])
    assert list(per_k["sized"]) == [True, True, False]
    said = waterfall.gpu_idle_findings(per_k)
    assert said.startswith("At K = 16 (1.85 ms slower, against 0.86 ms) the profiled generation differs from "
                           "the unprofiled ones by more than the GPU idle time (the profiler's effect and one "
                           "generation's variation together, not told apart here), so this run cannot size it there")
    assert "; at K = 1 (0.57 ms slower, against 1.75 ms), K = 4 (0.96 ms slower, against 1.13 ms) the " in said
    assert "host" not in said  # no cause is measured
    # a profiled generation faster than the unprofiled ones by more than the idle time cannot size it either
    faster = waterfall.gpu_idle_per_k({2: out(51.0, 49.0, 50.0, 0.1, 0.1)})
    assert list(faster["sized"]) == [False]
    assert "(2.00 ms faster, against 1.00 ms)" in waterfall.gpu_idle_findings(faster)
    none = waterfall.gpu_idle_per_k({1: out(51.0, None, None, 0.1, 0.1)})
    assert waterfall.gpu_idle_findings(none).startswith("*The GPU idle time was not measured")


def test_plot_waterfall_draws_a_bar_per_measured_row_and_names_the_missing():
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, errors={"timeline": "no GPU"})
    fig, ax = plt.subplots()
    waterfall.plot_waterfall(ax, w)
    missing = (w["status"] == waterfall.NOT_MEASURED).sum()
    assert len(ax.patches) == len(w) - missing
    assert sum(t.get_text().strip() == "not measured" for t in ax.texts) == missing
    plt.close(fig)


def test_fused_step_bytes_are_the_floors_plus_what_the_fused_step_adds(tiny):
    cfg, B, n = tiny.config, 3, 7
    C, L, V = cfg.n_embd, cfg.n_layer, cfg.vocab_size
    calls = [c for pos in range(n) for c in waterfall.fused_step_calls(tiny, B, pos)]
    assert len(calls) == n * (5 * L + 3)
    extra_per_step = (B * C + 3 * L * C + 2 * V - 2 * C) * 4  # embedding rows, folded norms' vectors, no norm weights
    assert sum(b for *_, b in calls) == bandwidth.generation_bytes(tiny, B, n) + n * extra_per_step
    sizes = waterfall.copy_sizes(tiny, B, n)
    assert sizes == sorted(sizes) and (V * C + 2 * V) * 4 in sizes
    attention = [b for _, what, b in calls if what == "attention"]
    assert sizes[0] <= min(attention) and sizes[-1] >= max(attention)


def test_attempt_turns_a_failure_into_its_reason():
    assert waterfall.attempt(lambda x: x + 1, 1) == (2, None)
    value, why = waterfall.attempt(lambda: 1 / 0)
    assert value is None and why.startswith("ZeroDivisionError: ")


def test_measure_waterfall_refuses_a_generator_off_the_fused_step(tiny):
    with pytest.raises(ValueError, match="generator 'graph_triton_kernels'"):
        waterfall.measure_waterfall(tiny, generator="graph_triton_kernels", batch_size=2, max_seqlen=4,
                                    steps_per_graph=2, runs=1)  # fmt: skip


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path: GPU terms not measured")
def test_measure_waterfall_on_the_cpu_says_what_it_did_not_measure(tiny):
    out = waterfall.measure_waterfall(tiny, batch_size=2, max_seqlen=6, steps_per_graph=2, runs=1,
                                      errors={"floor": "no copy bandwidth on a CPU"})  # fmt: skip
    w = out["terms"].set_index("term")
    assert w.loc[waterfall.FLOOR, "status"] == waterfall.NOT_MEASURED
    assert "CUDA" in w.loc[waterfall.GAPS, "note"]
    assert out["summary"]["measured_ms"] > 0
    assert w.loc[waterfall.REMAINDER, "ms"] == pytest.approx(out["summary"]["measured_ms"])
    assert out["kernels"] is None and out["summary"]["gpu_busy_ms"] is None


def test_the_waterfall_takes_notebook_12s_one_bandwidth_and_rate_instead_of_measuring_its_own(tiny, monkeypatch):
    """Notebook 12 hands section 1's bandwidth and TF32 rate to section 6: every floor of the notebook is one."""
    measured = []
    monkeypatch.setattr(waterfall, "copy_bandwidth", lambda *a: measured.append("bandwidth") or 2984.0)
    monkeypatch.setattr(waterfall, "matmul_tflops", lambda *a: measured.append("tflops") or 440.0)
    monkeypatch.setattr(waterfall, "copy_time_curve", lambda *a: measured.append("curve") or "the curve")
    given = waterfall.gpu_inputs(tiny, 2, 8, 64, 5, "cuda", bandwidth_gbs=2974.7, tflops=433.8)
    assert (given["bandwidth"], given["tflops"], given["curve"]) == (2974.7, 433.8, "the curve")
    assert measured == ["curve"] and given["errors"] == {"floor": None, "compute": None, "copies": None}
    measured.clear()  # none given (a caller without notebook 12's section 1): each measured here, once
    own = waterfall.gpu_inputs(tiny, 2, 8, 64, 5, "cuda")
    assert (own["bandwidth"], own["tflops"], measured) == (2984.0, 440.0, ["bandwidth", "tflops", "curve"])
    # and notebook 12 hands them over: its one copy-bandwidth measurement is section 1's (when notebook 10's is missing)
    from tokgen.results import ROOT

    source = (ROOT / "notebooks" / "12_speed_of_light.py").read_text()
    call = source[source.index("W.gpu_inputs(") :].split(")  #")[0]
    assert "bandwidth_gbs=bandwidth" in call and "tflops=tflops" in call
    assert source.count("copy_bandwidth(") == 1 and source.count("matmul_tflops(") == 1


@pytest.mark.gpu
def test_measure_waterfall_on_a_gpu_measures_every_term_and_adds_up():
    import tokgen

    model = tokgen.build_model("gpt2", "cuda")
    B, N, K = 8, 24, 4
    inputs = waterfall.gpu_inputs(model, B, N, 64, 5, "cuda")
    assert inputs["errors"] == {"floor": None, "compute": None, "copies": None}, inputs["errors"]
    out = waterfall.measure_waterfall(model, batch_size=B, max_seqlen=N, steps_per_graph=K, runs=3,
                                      bandwidth_gbs=inputs["bandwidth"], tflops=inputs["tflops"],
                                      curve=inputs["curve"], errors=inputs["errors"])  # fmt: skip
    w = out["terms"].set_index("term")
    assert w.loc[list(waterfall.TERMS), "status"].isin(waterfall.VALUED).all(), w[["status", "note"]].to_string()
    parts = w[w["status"].isin([*waterfall.VALUED, "remainder"])]["ms"].sum()
    assert parts == pytest.approx(out["summary"]["measured_ms"])
    k = out["kernels"]
    assert k["launches"].sum() == out["summary"]["replays"] * K * (5 * model.config.n_layer + 3)
    assert w.loc[waterfall.FLOOR, "ms"] > 0 and (k["own_ms"] > 0).all()
    # rv19B S5: each kernel's size read from the curve scaled to the floor's copy, and the term says by how much
    assert w.loc[waterfall.SMALL, "note"].startswith("the copy curve is scaled by "), w.loc[waterfall.SMALL, "note"]
    assert (k["at_size_ms"] >= 0.9 * k["at_copy_ms"]).all(), k[["what", "at_size_ms", "at_copy_ms"]]
    # rv19B S4: each kernel's rate is its bytes over its own time
    assert np.allclose(k["rate_gb_s"], k["mb"] * 1e6 / (k["own_ms"] * 1e-3) / 1e9)


class FakeProfiler:
    """What `_gpu_events_of` reads of a torch.profiler: its Chrome trace, as torch writes it."""

    def __init__(self, events):
        self.events = events

    def export_chrome_trace(self, path):
        import json

        with open(path, "w") as f:
            json.dump({"traceEvents": self.events}, f)


def test_gpu_events_are_read_from_the_chrome_trace():
    trace = [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 90.0, "dur": 5.0},
        {"ph": "X", "cat": "kernel", "name": "_embed_kernel", "ts": 110.5, "dur": 2.0, "args": {"stream": 7}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "ts": 120.0, "dur": 1.5},
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 100.0, "dur": 1.0},
        {"ph": "i", "cat": "kernel", "name": "not a span", "ts": 50.0},
    ]
    events = waterfall._gpu_events_of(FakeProfiler(trace))
    assert list(events["name"]) == ["Memset (Device)", "_embed_kernel", "Memcpy DtoH (Device -> Pinned)"]
    assert list(events["kind"]) == ["memset", "kernel", "memcpy"]
    assert list(events["start"]) == [0.0, 10.5, 20.0] and list(events["end"]) == [1.0, 12.5, 21.5]


def test_copy_time_curve_needs_a_configuration_then_a_gpu():
    with pytest.raises(ValueError, match="blocks must name at least one"):
        waterfall.copy_time_curve([1 << 20], 3, blocks=())
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="timing copies needs a CUDA GPU"):
            waterfall.copy_time_curve([1 << 20], 3)


@pytest.mark.gpu
def test_copy_kernel_copies_and_its_curve_grows_with_the_bytes():
    src = torch.rand(1_000_003, device="cuda")
    for block, warps in waterfall.COPY_BLOCKS:
        dst = torch.zeros_like(src)
        waterfall.copy_kernel(src, dst, block, warps)
        assert torch.equal(dst, src), (block, warps)
    # the sizes where the driver's memcpy jumped (2.36 MB, 7.1 MB, 9.44 MB: not multiples of 4 KiB) among others
    sizes = [393216, 1572864, 2362368, 3145728, 7096320, 9440256, 9461760, 25165824, 154791560]
    curve = waterfall.copy_time_curve(sizes, 30)
    assert list(curve.columns) == ["bytes", "copy_us", "copy_gb_s", "long_copy_bytes", "long_copy_us",
                                   "long_copy_error"]  # fmt: skip
    assert (curve["long_copy_error"] == "").all() and (curve["long_copy_us"] > 0).all()  # timed: no error (rr20h S4)
    assert curve["bytes"].tolist() == sizes and (curve["long_copy_bytes"] == 2 * 2**30).all()  # a 1 GiB copy
    us = curve["copy_us"].to_numpy()
    assert (np.diff(us) > -0.05 * us[:-1]).all(), curve.to_string()  # more bytes never take less time (5%)
    assert (np.diff(curve["copy_gb_s"].to_numpy()) > -0.05 * curve["copy_gb_s"].to_numpy()[:-1]).all(), curve
    long_copy = bandwidth.copy_bandwidth("cuda", 1024, 10)
    assert 0.6 * long_copy < curve["copy_gb_s"].iloc[-1] < 1.1 * long_copy, (curve.to_string(), long_copy)
    # rv19B S5: the kernel's own 1 GiB copy, and the curve scaled so that copy takes the floor's (memcpy's) time
    kernel_long = 2 * 2**30 / curve["long_copy_us"].iloc[0] / 1e3
    assert 0.6 * long_copy < kernel_long < 1.1 * long_copy and curve["copy_gb_s"].max() < 1.05 * kernel_long
    scaled = waterfall.scaled_curve(curve, long_copy)
    factor = scaled["at_floor_us"] / scaled["copy_us"]
    assert np.allclose(scaled["long_copy_us"] * factor, 2 * 2**30 / long_copy / 1e3)  # the floor's time
    assert (scaled["bytes"] / scaled["at_floor_us"] / 1e3 < 1.05 * long_copy).all()  # no size beats the floor's copy
    assert waterfall.curve_calibration(curve, long_copy) == pytest.approx((2 * 2**30 / 1e6, kernel_long / long_copy))


def test_profile_generation_settles_after_each_of_its_two_sessions(monkeypatch):
    """profile_generation opens two sessions back to back (the first pays CUPTI's start-up): each is
    followed by settle_profiler, outside the timed call (pytorch/kineto#1554)."""
    log = []

    class FakeProfile:
        def __init__(self, activities=None):
            pass

        def __enter__(self):
            log.append("enter")
            return self

        def __exit__(self, *exc):
            log.append("exit")

    events = pd.DataFrame({"name": ["k"], "kind": ["kernel"], "start": [0.0], "end": [1.0]})
    monkeypatch.setattr(waterfall.torch.profiler, "profile", FakeProfile)
    monkeypatch.setattr(waterfall, "require_cuda", lambda what: None)
    monkeypatch.setattr(waterfall, "synchronize", lambda *a: None)
    monkeypatch.setattr(waterfall, "_gpu_events_of", lambda prof: events)
    monkeypatch.setattr(waterfall, "settle_profiler", lambda device="cuda": log.append("settle"))
    got, _ = waterfall.profile_generation(lambda: log.append("run"))
    assert got is events and log == ["enter", "run", "exit", "settle"] * 2


def test_the_basis_column_says_which_terms_are_derived_from_measurements():
    """The floor, the arithmetic, the kernels' extra bytes and the small copies are derived (bytes or
    operations at a measured rate, the copy curve interpolated); the timeline's terms are measured; the
    status column agrees with the basis: "derived" for those four, "measured" for every other term with a
    value (the kernels' term: measured own times less derived terms)."""
    w = measured_table()
    derived = {waterfall.FLOOR: "derived (bytes at the measured copy bandwidth)",
               waterfall.COMPUTE: "derived (operations at the measured TF32 rate)",
               waterfall.EXTRA_BYTES: "derived (bytes at the measured copy bandwidth)",
               waterfall.SMALL: "derived (measured copy curve, scaled to the floor's copy at its kernel's long copy, "
                                "interpolated at each kernel's bytes; the factor applies at every size, so at a size "
                                "where the curve's kernel moves bytes faster than in its long copy a kernel's term can "
                                "be below zero)",
               waterfall.KERNELS: "measured own times minus the derived terms above"}  # fmt: skip
    assert w.loc[list(derived), "basis"].to_dict() == derived
    timed = [waterfall.GAPS, waterfall.STOP_GPU, waterfall.LAUNCH, waterfall.AROUND, waterfall.HOST]
    assert (w.loc[timed, "basis"] == "measured").all()
    assert w.loc[waterfall.REMAINDER, "basis"] == "remainder" and w.loc[waterfall.TOTAL, "basis"] == "total"
    four = [waterfall.FLOOR, waterfall.COMPUTE, waterfall.EXTRA_BYTES, waterfall.SMALL]
    assert (w.loc[four, "status"] == "derived").all()
    assert (w.loc[[*timed, waterfall.KERNELS], "status"] == "measured").all()
    assert all(w.loc[t, "basis"].startswith(w.loc[t, "status"]) for t in waterfall.TERMS)
    missing = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, errors={"timeline": "no GPU"})
    assert missing.set_index("term").loc[waterfall.GAPS, "basis"] == waterfall.NOT_MEASURED
    assert waterfall.STOP_GPU == "the stop flag's copy (D2H) after each replay"


def test_the_kernels_note_names_programmatic_dependent_launch_only_where_durations_overlap():
    """Without PDL (below compute capability 9) a kernel's duration is its exclusive time: the note says
    that no duration overlaps, and names no launch mechanism."""
    t = waterfall.timeline_terms(fake_events(), STEP)
    k = waterfall.kernel_table(t["kernels"], CALLS, 1.0, CURVE)
    k = k.assign(duration_ms=k["own_ms"])  # no kernel waited inside its duration
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k, timeline=t,
                                  wall_profiled_ms=0.1).set_index("term")  # fmt: skip
    note = w.loc[waterfall.KERNELS, "note"]
    assert note == "each kernel's time after the kernels before it ended; no kernel's duration overlaps an earlier one"
    assert "programmatic" in measured_table().loc[waterfall.KERNELS, "note"]  # 0.002 ms overlap: PDL named


def test_the_per_k_table_says_its_medians_are_not_paired_where_it_holds_several_k():
    """rv19B N4: each K's measured time is its own generations' median; notebook 10 pairs the rounds."""
    per_k = pd.DataFrame({"steps_per_graph": [1, 4, 16], "measured_ms": [47.75, 47.63, 52.41]})
    note = waterfall.per_k_unpaired_note(per_k)
    assert note == ("*Each K's `measured_ms` is the median of its own generations, not a paired comparison: set side "
                    "by side, they do not say which K is faster; notebook 10 compares K round by round.*")  # fmt: skip
    assert waterfall.per_k_unpaired_note(per_k.iloc[:1]) == ""


def test_replay_kernels_counts_each_kernel_in_the_order_it_first_ran(monkeypatch):
    """rv19B S7: one profiled replay's kernels by short name, each with its launches, memcpys left out; a replay
    whose profile holds no kernel is an error (time_products then says "not profiled")."""
    ran = ["void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)",
           "void splitKreduce_kernel<32, 16, int, float>(cublasSplitKParams<float>, float const*)"] * 3  # fmt: skip
    events = pd.DataFrame({"name": [*ran, "Memcpy DtoH"], "kind": ["kernel"] * 6 + ["memcpy"]})
    monkeypatch.setattr(waterfall, "profile_generation", lambda replay: (events, 1.0))
    assert waterfall.replay_kernels(None) == (
        "Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4> ×3; splitKreduce_kernel<32, 16, int, float> ×3")
    monkeypatch.setattr(waterfall, "profile_generation", lambda replay: (events.tail(1), 1.0))
    with pytest.raises(RuntimeError, match="the profiler recorded no kernel"):
        waterfall.replay_kernels(None)
