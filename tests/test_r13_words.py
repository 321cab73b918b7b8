"""Review r13's wording fixes (issue 49), each pinned with inputs whose answer is known by hand."""

import pandas as pd
import pytest

from tokgen import gaps, voice, waterfall


def test_a_phase_share_keeps_its_side_of_most_and_never_rounds_onto_0_or_100_percent():
    """rvA13 N1: 0.4964 printed "50%" beside "not most of it"; whole percent elsewhere."""
    assert gaps._most_kept(0.4964) == "49.6%"
    assert gaps._most_kept(0.44) == "44%" and gaps._most_kept(0.5) == "50%"
    assert gaps._most_kept(0.5004) == "50.04%"  # above the edge: "holds most of it" beside it
    assert gaps._most_kept(0.996) == "99.6%" and gaps._most_kept(0.003) == "0.3%"


def test_signed_numbers_print_a_typographic_minus():
    """rvB13 N4: every signed number the pages print, one way: "+4.7", "−2.6", and a difference's text."""
    assert voice.signed(4.7, 1) == "+4.7" and voice.signed(-2.6, 1) == "\u22122.6" and voice.signed(-67) == "\u221267"
    text = voice.difference_text([-3.0, -2.0, -4.0, -1.0, -5.0, -2.5, -3.5, -1.5])
    assert "-" not in text.replace("signed-rank", "") and text.startswith("\u22122.8 µs (a real difference")
    assert gaps._span([-0.2, 1.4], signed=True) == "\u22120.2 to +1.4"
    assert gaps._span([-0.01, 0.02], signed=True) == "0.0"


def test_the_small_copies_term_says_how_far_the_curves_kernel_is_from_the_floors_copy():
    """rvB13 N2, rv19B S5: the curve's copy kernel is not the floor's copy; the curve is scaled so that its kernel's
    long copy takes the floor's time, and the factor is said beside the term it sizes. By hand: 2,000 MB in 800 µs is
    2,500 GB/s, 2,500 / 2,600 = 96.2%."""
    curve = pd.DataFrame({"bytes": [1e6, 100e6], "copy_us": [1.0, 40.0], "long_copy_bytes": 2e9, "long_copy_us": 800.0})
    assert waterfall.curve_calibration(curve, 2600.0) == pytest.approx((2000.0, 2500 / 2600))
    assert waterfall.curve_calibration(None, 2600.0) is None and waterfall.curve_calibration(curve, None) is None
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, errors={"timeline": "no GPU"},
                                  calibration=(2000.0, 2500 / 2600)).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] != ""  # not measured here: its reason, not the curve's note
    k = pd.DataFrame({"own_ms": [0.01], "duration_ms": [0.01], "at_copy_ms": [0.005], "at_size_ms": [0.006]})
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k, calibration=(2000.0, 2500 / 2600),
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] == (
        "the copy curve is scaled by 0.962 (applied at every size): its kernel's long copy (2,000 MB read and "
        "written) ran at 96.2% of the floor's copy rate, so scaled it takes the floor's time and this term is size "
        "alone; that kernel's difference from the floor's copy falls in the next term")
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k,
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] == ""


def test_windows_that_disagree_are_said_to_disagree_not_to_differ_both_ways():
    """rvA13 N2: smaller, same, smaller is no "direction", but neither are the two gaps larger in some window."""
    assert gaps.direction([(100.0, 60.0), (100.0, 105.0), (100.0, 50.0)]) == "split"
    assert gaps.direction_text("split", 3, "pipelined") == (
        "the windows disagree on how the gap pipelined compares with the one with the sync, a difference below 20 µs "
        "counting as none")


def _sweep(ratios_by_b: dict) -> pd.DataFrame:
    """Notebook 08's table: per family and batch size, sync at 100 ms and pipelined at 100 / ratio each round."""
    from test_claims import result

    from tokgen.registry import label

    items = []
    for compiled in (False, True):
        for b, rr in ratios_by_b.items():
            kw = {"compiled": compiled, "batch_size": b}
            items.append(result(label("kv_static", **kw), [100.0] * len(rr), **kw))
            items.append(result(label("pipelined_static", **kw), [100.0 / r for r in rr], **kw))
    return pd.DataFrame(items).assign(gpu="GPU X", params='{"SIZE": "gpt2"}')


FAST = [1.12, 1.11, 1.13, 1.12, 1.10, 1.12, 1.11, 1.13]  # faster, real, beyond the band
MID = [1.06, 1.07, 1.05, 1.06, 1.08, 1.06, 1.07, 1.06]
OPEN_LOW = [1.04, 0.90, 1.04, 0.94, 1.03, 0.92, 1.03, 0.95]  # undecided, 95% interval x0.92-x1.03: below x1.05


def test_claim_8s_largest_batch_undecided_below_the_band_holds_its_part():
    """rrA13 S1: at the largest batch "no gain beyond ±5%" holds where its interval stays below ×1.05, as `_faster`
    reads it; with the smallest faster for real and no larger gain, the claim is reproduced, not open."""
    from tokgen.claims import Tables, _claim_8

    measured, verdict, _ = _claim_8(Tables(None, cache={"08_batch_sweep": _sweep({1: FAST, 16: MID, 64: OPEN_LOW})}))
    assert verdict == "reproduced", verdict
    assert ("B=64 ×0.99 (IQR ×0.93–×1.03 of 8 rounds; p = 0.305, undecided: about 14 rounds would decide it; 95% "
            "interval ×0.92–×1.03) (its interval stays below ×1.050: a gain beyond 5% is ruled out, so not faster "
            "beyond the band)") in measured  # fmt: skip
    measured, verdict, _ = _claim_8(Tables(None, cache={"08_batch_sweep": _sweep({1: OPEN_LOW, 16: MID, 64: FAST})}))
    assert verdict == "not reproduced", verdict  # no real gain at the smallest, ruled out: the core fails


def test_claim_9s_stream_cost_ruled_out_is_said_as_a_cost_and_not_beside_no_cost_open():
    """rrA13 N1: one stream against two, undecided, interval ×0.94–×1.03: the cost left open and the cost beyond 5%
    ruled out, in one noun; an interval wholly below ×1 leaves no cost open and says nothing more."""
    from test_claims import result

    from tokgen.claims import Tables, _claim_9
    from tokgen.registry import label

    def table(one_stream):
        nocheck = [1.08, 1.09, 1.07, 1.10, 1.08, 1.06, 1.09, 1.08, 1.07, 1.10]
        items = []
        for compiled in (False, True):
            kw = {"compiled": compiled}
            items.append(result(label("pipelined_static", **kw), [100.0] * 10, **kw))
            items.append(result(label("kv_static_no_check", **kw), [100 / r for r in nocheck], **kw))
            items.append(result(label("pipelined_static_1stream", **kw), [100 / r for r in one_stream], **kw))
        return Tables(None, cache={"07_pipelining": pd.DataFrame(items).assign(gpu="GPU X")})

    measured, verdict, _ = _claim_9(table([1.04, 0.90, 1.04, 0.94, 1.03, 0.92, 1.03, 0.95, 1.02, 0.98]))
    assert verdict == "partly", verdict
    assert ("its interval leaves a cost of the second stream of up to 3.0% open; its interval stays below ×1.050: a "
            "cost of the second stream beyond 5% is ruled out, so one stream is not faster beyond the band") in measured
    measured, _, _ = _claim_9(table([0.98, 0.99, 0.97, 1.00, 0.98, 0.99, 0.97, 1.005, 0.98, 0.99]))
    assert "leaves no cost of the second stream open" in measured and "is ruled out" not in measured


def test_the_band_edge_itself_is_not_ruled_out():
    """`gain_ruled_out` needs the interval's high end strictly below ×1.05: at ×1.05 a gain of 5% is still inside."""
    from tokgen.claims import _faster, gain_ruled_out

    g = {"outcome": "undecided", "interval_low": 0.97, "interval_high": 1.05}
    assert gain_ruled_out(g) == "" and _faster(g) is None
    g["interval_high"] = 1.0499
    assert gain_ruled_out(g).startswith("; its interval stays below ×1.050") and _faster(g) is False


def test_edges_of_the_r13_templates():
    """rrA13 N3–N5, N10: a signed number that rounds to zero is unsigned; no window measured says so, not that they
    disagree; a calibration against a NaN bandwidth says nothing, one above the floor's rate is said as it is;
    resampled shares add up (155, 43, 2 of 200: 78%, 21%, 1%)."""
    from tokgen.claims import whole_percents

    assert voice.signed(-0.4) == "0" and voice.signed(-0.04, 1) == "0.0" and voice.signed(0.6) == "+1"
    assert gaps.direction([]) is None
    said = gaps.direction_text(None, 0, "pipelined")
    assert said == "no window measured both the gap pipelined and the one with the sync"
    curve = pd.DataFrame({"bytes": [1e6, 100e6], "copy_us": [1.0, 40.0], "long_copy_bytes": 2e9, "long_copy_us": 800.0})
    assert waterfall.curve_calibration(curve, float("nan")) is None
    assert waterfall.curve_calibration(curve, 2000.0) == pytest.approx((2000.0, 1.25))
    k = pd.DataFrame({"own_ms": [0.01], "duration_ms": [0.01], "at_copy_ms": [0.005], "at_size_ms": [0.006]})
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k, calibration=(2000.0, 1.25),
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"].startswith("the copy curve is scaled by 1.250 (applied at every size): its "
                                                     "kernel's long copy (2,000 MB read and written) ran at 125.0% of "
                                                     "the floor's")  # fmt: skip
    assert whole_percents({"a": 155, "b": 43, "c": 2}, 200) == {"a": 78, "b": 21, "c": 1}
    assert whole_percents({"a": 1, "b": 1, "c": 1}, 3) == {"a": 34, "b": 33, "c": 33}


def test_a_slice_row_whose_variant_left_the_slice_says_so_not_confinement_not_measured():
    """rrA13 N7: the escape was measured; the place words say it, not "confinement not measured"."""
    row = {"gpu_sms": "8", "confined": None, "cache": "static",
           "not_measured": "`generate() static sync` 3 of its timed runs left the slice"}  # fmt: skip
    assert voice.confinement_text(row, pd.DataFrame()) == "8 SMs (confinement not judged: a variant left the slice)"
    row["not_measured"] = "`generate() static sync` oom"
    assert voice.confinement_text(row, pd.DataFrame()) == "8 SMs (confinement not judged: a variant failed)"
    assert voice.confinement_text({**row, "not_measured": None}, pd.DataFrame()) == "8 SMs (confinement not measured)"


def test_the_ruled_out_rule_is_in_the_criteria_it_decides_and_signed_shares_keep_their_minus():
    """rrB13 N2: the criteria printed beside claims 4, 5, 7, 8 and 9 state the interval rule their verdicts use;
    a negative phase share prints a typographic minus."""
    from tokgen.claims import CLAIMS, RULED_OUT

    assert all(RULED_OUT in CLAIMS[n][2] for n in (4, 5, 7, 8, 9))
    assert not any(RULED_OUT in CLAIMS[n][2] for n in (1, 2, 3, 6, 10))
    assert gaps._most_kept(-0.12) == "\u221212%"
