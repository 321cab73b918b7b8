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


def test_the_small_copies_term_says_how_far_the_curves_largest_copy_is_from_the_long_copys_rate():
    """rvB13 N2: the curve's copy kernel is not the floor's copy; its largest copy at 96% of the long copy's rate is
    said beside the term it sizes. By hand: 100 MB in 40 µs is 2,500 GB/s, 2,500 / 2,600 = 96.2%."""
    curve = pd.DataFrame({"bytes": [1e6, 100e6], "copy_us": [1.0, 40.0]})
    assert waterfall.curve_top(curve, 2600.0) == pytest.approx((100.0, 2500 / 2600))
    assert waterfall.curve_top(None, 2600.0) is None and waterfall.curve_top(curve, None) is None
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, errors={"timeline": "no GPU"},
                                  curve_top=(100.0, 2500 / 2600)).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] != ""  # not measured here: its reason, not the curve's note
    k = pd.DataFrame({"own_ms": [0.01], "duration_ms": [0.01], "at_copy_ms": [0.005], "at_size_ms": [0.006]})
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k, curve_top=(100.0, 2500 / 2600),
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] == (
        "the curve's largest copy (100 MB) runs at 96.2% of the long copy's rate: the curve's copy kernel is not the "
        "floor's copy, so part of this term may be that kernel's, not size")
    w = waterfall.waterfall_table(0.2, floor_ms=0.004, compute_ms=0.001, kernels=k,
                                  errors={"timeline": "no GPU"}).set_index("term")  # fmt: skip
    assert w.loc[waterfall.SMALL, "note"] == ""


def test_windows_that_disagree_are_said_to_disagree_not_to_differ_both_ways():
    """rvA13 N2: smaller, same, smaller is no "direction", but neither are the two gaps larger in some window."""
    assert gaps.direction([(100.0, 60.0), (100.0, 105.0), (100.0, 50.0)]) == "split"
    assert gaps.direction_text("split", 3, "pipelined") == (
        "the windows disagree on how the gap pipelined compares with the one with the sync, a difference below 20 µs "
        "counting as none")
