"""tokgen.stats by hand: exact p-values against a brute-force enumeration, the speed-up's quartiles,
the rounds that would decide, resampled tables, on inputs whose every number is known (issue 45)."""

import itertools
import json
import math
import statistics

import numpy as np
import pandas as pd
import pytest

from tokgen import stats
from tokgen.stats import BAND, compare_rounds, equivalence_p, rounds_to_decide, run_times, signed_rank_p


def brute_force_tails(x):
    """P(W+ <= w) and P(W+ >= w) by listing every sign pattern: zeros dropped, tied |x| given their mean rank."""
    x = [v for v in x if v != 0]
    order = sorted(abs(v) for v in x)
    rank = {a: statistics.mean(i + 1 for i, b in enumerate(order) if b == a) for a in order}
    w = sum(rank[abs(v)] for v in x if v > 0)
    sums = [sum(rank[abs(v)] for v, s in zip(x, signs) if s) for signs in itertools.product((0, 1), repeat=len(x))]
    return sum(s <= w for s in sums) / len(sums), sum(s >= w for s in sums) / len(sums)


SAMPLES = [
    [1.0, -2.0, 3.0, 4.0, 5.0, 6.0],  # W+ = 19 of 21
    [-1.0, -2.0, 3.0, -4.0, 5.0, -6.0, 7.0],
    [0.5, -0.5, 0.5, 2.0, -3.0, 3.0, 0.0, 1.0],  # ties and a zero
    [0.1, 0.2, 0.3],
    [-0.3, 0.2, -0.1, 0.0],
]


@pytest.mark.parametrize("x", SAMPLES)
def test_signed_rank_p_is_the_exact_enumeration(x):
    low, high = brute_force_tails(x)
    assert signed_rank_p(x) == pytest.approx(min(1.0, 2 * min(low, high)), abs=1e-12)


def test_nothing_to_rank_gives_no_evidence():
    assert signed_rank_p([0.0, float("nan"), 0.0]) == 1.0 and signed_rank_p([]) == 1.0
    assert signed_rank_p([float("nan")]) == 1.0


@pytest.mark.parametrize("x", [[0.0] * 6, [0.01, -0.02, 0.03, 0.0, -0.01, 0.02], [0.2] * 6, [0.04] * 7, [-0.06] * 7])
def test_equivalence_p_is_the_larger_of_two_exact_one_sided_tests(x):
    edge = math.log1p(BAND)
    below = brute_force_tails([v - edge for v in x])[0]
    above = brute_force_tails([v + edge for v in x])[1]
    assert equivalence_p(x) == pytest.approx(max(below, above), abs=1e-12)


def test_compare_rounds_by_hand():
    """Rounds of base 10, 20, 30, 40, 50 ms against 10, 10, 10, 10, 10: ratios 1, 2, 3, 4, 5."""
    g = compare_rounds([10.0, 20.0, 30.0, 40.0, 50.0], [10.0] * 5)
    # inclusive quartiles of 1..5: positions 1 and 3 -> 2 and 4 (the exclusive method would give 1.5 and 4.5)
    assert (g["speedup"], g["speedup_q25"], g["speedup_q75"], g["rounds"]) == pytest.approx((3.0, 2.0, 4.0, 5))
    # logs 0, log 2 … log 5: the zero dropped, the other four all positive: p = 2 / 2**4
    assert g["p_value"] == 2 / 16 and not g["real"] and not g["no_effect"]
    assert g["outcome"] == "undecided" and g["rounds_to_decide"] == rounds_to_decide([math.log(r) for r in range(1, 6)])
    two = compare_rounds([30.0, 10.0], [10.0, 10.0])  # ratios 3 and 1: quartiles 1.5 and 2.5
    assert (two["speedup"], two["speedup_q25"], two["speedup_q75"]) == pytest.approx((2.0, 1.5, 2.5))


def test_only_rounds_both_variants_ran_with_a_positive_time_are_paired():
    base = [0.0, 5.0, -1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 9.0]
    times = [5.0, 0.0, 5.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]  # one round fewer: the tenth is not paired
    g = compare_rounds(base, times)
    assert g["rounds"] == 6 and g["speedup"] == 2.0 and g["p_value"] == 2 / 64 and g["outcome"] == "faster"
    assert g["rounds_to_decide"] is None


def test_one_round_or_none_gives_no_spread_and_no_verdict():
    one = compare_rounds([20.0], [10.0])
    assert one["speedup"] == 2.0 and math.isnan(one["speedup_q25"]) and math.isnan(one["speedup_q75"])
    assert one["p_value"] == 1.0 and one["outcome"] == "undecided" and one["rounds_to_decide"] is None
    none = compare_rounds([], [])
    assert math.isnan(none["speedup"]) and math.isnan(none["p_value"]) and none["rounds"] == 0
    assert (none["real"], none["no_effect"], none["outcome"], none["rounds_to_decide"]) == (
        False, False, "undecided", None)  # fmt: skip


def test_a_real_slowdown_and_a_shown_absence_of_effect():
    base = [100.0, 104.0, 98.0, 102.0, 100.0, 101.0, 99.0, 103.0]
    slow = compare_rounds(base, [b * 1.25 for b in base])
    assert (slow["speedup"], slow["outcome"], slow["real"], slow["rounds_to_decide"]) == (0.8, "slower", True, None)
    flat = compare_rounds(base, [b * f for b, f in zip(base, [1.001, 0.999] * 4)])
    assert (
        flat["outcome"] == "no effect" and flat["no_effect"] and not flat["real"] and flat["rounds_to_decide"] is None
    )


def test_a_real_gain_whose_median_round_ties_reads_faster():
    base = [10.0] * 13
    times = [10.0] * 7 + [9.0] * 6  # seven rounds tie, six are faster: p = 2 / 2**6, real
    g = compare_rounds(base, times)
    assert g["real"] and g["speedup"] == 1.0
    assert g["outcome"] == "faster"


@pytest.mark.parametrize(
    "x, rounds",
    [
        ([0.5, -0.3] * 4, 74),  # mean 0.1, sd 0.4276: (2 × 0.4276 / 0.1)² = 73.1 -> 74
        ([0.2, -0.19] * 4, 66),  # mean 0.005 inside ±log 1.05: (1.7 × 0.2085 / (0.0488 - 0.005))² = 65.5 -> 66
        ([0.2, -0.2], 98),  # mean 0: only inside the band, (1.7 × 0.2828 / 0.0488)² = 97.1 -> 98
        ([0.1, 0.3] * 4, 9),  # (2 × 0.107 / 0.2)² = 1.1, but never as few as the 8 rounds run
        ([0.3, 0.1], 6),  # (2 × 0.1414 / 0.2)² = 2, but at least 6 (5 rounds can never reach p < 0.05)
        (
            [2 * math.log1p(BAND), 0.0],
            8,
        ),  # mean on the band's edge: (2 × √2 e / e)² = 8; the band's formula divides by 0
        ([0.3, float("nan"), 0.1], 6),  # NaN rounds are left out
        ([0.1], None),  # one round: no spread
        ([0.1] * 5, None),  # no spread
    ],
)
def test_rounds_to_decide_by_hand(x, rounds):
    assert rounds_to_decide(x) == rounds


def test_no_band_and_no_difference_leave_nothing_to_decide():
    assert rounds_to_decide([0.2, -0.2], band=0.0) is None


def test_run_times_reads_the_rounds_of_a_row():
    assert run_times({"times_ms": "1;2.5;10"}) == [1.0, 2.5, 10.0]
    assert run_times({"times_ms": ""}) == [] and run_times({"times_ms": float("nan")}) == []
    assert run_times(pd.Series({"times_ms": "3"})) == [3.0]


def test_gain_names_both_sides_and_is_none_without_either():
    df = pd.DataFrame([{"variant": "a", "times_ms": "20;40"}, {"variant": "b", "times_ms": "10;10"}])
    g = stats.gain(df, "a", "b")
    assert (g["variant"], g["vs"], g["speedup"], g["rounds"]) == ("b", "a", 3.0, 2)
    assert stats.gain(df, "a", "c") is None and stats.gain(df, "c", "a") is None


def test_resampling_draws_the_same_rounds_for_every_row():
    """Rows of 4, 2, 1 and no rounds; the draw is rng.integers(0, 4, 4) of a generator seeded like the test's."""
    df = pd.DataFrame(
        {
            "variant": ["a", "b", "c", "d"],
            "times_ms": ["1;2;3;4", "10;20", "7", float("nan")],
            "median_ms": 0.0,
            "q25_ms": -1.0,
            "q75_ms": -1.0,
            "steps": 2,
        }
    )
    for seed in range(6):
        idx = list(np.random.default_rng(seed).integers(0, 4, 4))
        out = stats.resample_rounds(df, np.random.default_rng(seed))
        a = [[1.0, 2.0, 3.0, 4.0][i] for i in idx]
        b = [[10.0, 20.0][i] for i in idx if i < 2] or [10.0, 20.0]  # rounds b did not run are not drawn
        assert out.loc[0, "times_ms"] == ";".join(map(str, a)) and out.loc[1, "times_ms"] == ";".join(map(str, b))
        c = [7.0] * idx.count(0) or [7.0]  # a row of one round: as often as round 0 is drawn, else kept
        assert [float(t) for t in out.loc[2, "times_ms"].split(";")] == c
        assert out.loc[3, "times_ms"] == "" and math.isnan(out.loc[3, "median_ms"])
        for row, t in ((0, a), (1, b), (2, c)):
            q = statistics.quantiles(t, n=4, method="inclusive") if len(t) >= 2 else [float("nan")] * 3
            assert out.loc[row, "median_ms"] == statistics.median(t)
            assert out.loc[row, "ms_per_step"] == statistics.median(t) / 2
            assert (out.loc[row, "q25_ms"], out.loc[row, "q75_ms"]) == pytest.approx((q[0], q[2]), nan_ok=True)
        assert out.loc[2, "median_ms"] == 7.0 and math.isnan(out.loc[2, "q25_ms"]) == (len(c) == 1)
    assert df.loc[0, "median_ms"] == 0.0  # the table itself is left as it was


def test_resampling_a_table_of_single_rounds_recomputes_it_and_leaves_untimed_tables_alone():
    one = pd.DataFrame({"variant": ["a"], "times_ms": ["5"], "median_ms": [0.0], "q25_ms": [9.0], "q75_ms": [9.0]})
    out = stats.resample_rounds(one, np.random.default_rng(0))
    assert out.loc[0, "median_ms"] == 5.0 and math.isnan(out.loc[0, "q25_ms"]) and "ms_per_step" not in out
    untimed = pd.DataFrame({"variant": ["a"], "idle_gap_median_us": [1.0]})
    assert stats.resample_rounds(untimed, np.random.default_rng(0)) is untimed
    empty = pd.DataFrame(columns=["variant", "times_ms"])
    assert stats.resample_rounds(empty, np.random.default_rng(0)) is empty
    none = pd.DataFrame({"variant": ["a"], "times_ms": [""]})
    assert stats.resample_rounds(none, np.random.default_rng(0)) is none
    # a sequential run's table comes back as it is; a `looks` column without looks is a fixed-rounds table
    sequential = pd.DataFrame({"variant": ["a", "b"], "times_ms": ["1;2;3", "4;5;6"], "looks": ["10;20", "10;20"]})
    assert stats.resample_rounds(sequential, np.random.default_rng(0)) is sequential
    fixed = sequential.assign(looks=[float("nan"), ""], median_ms=0.0, q25_ms=0.0, q75_ms=0.0)
    assert stats.resample_rounds(fixed, np.random.default_rng(0))["median_ms"].tolist() != [0.0, 0.0]


def test_two_looks_at_the_same_round_are_refused():
    with pytest.raises(ValueError, match="increasing"):
        stats.look_levels((10, 10, 20))


def test_a_first_look_that_is_not_a_positive_integer_is_named():
    for bad in (0, 1.5, False):
        with pytest.raises(ValueError, match=f"^first must be a positive integer, got {bad!r}$"):
            stats.looks_up_to(40, first=bad)


def test_the_error_rates_table_reads_each_source_of_noise_from_its_scenarios(tmp_path):
    rows = [  # source, scenario, rate, mean rounds, share undecided at the cap, trials, looks
        ("simulated", "A/A", 0.03, 70.0, 0.25, 4000, "10;20;40;80"),
        ("simulated", "edge ×1.05", 0.02, 60.0, 0.1, 4000, "10;20;40;80"),
        ("simulated", "edge ×0.95", 0.04, 61.0, 0.1, 4000, "10;20;40;80"),
        ("simulated", "×1.10", 0.6, 50.0, 0.05, 4000, "10;20;40;80"),
        ("simulated", "×1.15", 0.9, 30.0, 0.01, 4000, "10;20;40;80"),
        ("simulated", "×1.20", 0.99, 20.0, 0.0, 4000, "10;20;40;80"),  # a scenario the table does not show
        ("recorded", "A/A", 0.01, 40.0, 0.17, 800, "10;20"),
        ("recorded", "edge ×1.05", 0.005, 35.0, 0.2, 800, "10;20"),
        ("recorded", "×1.10", 0.7, 25.0, 0.02, 800, "10;20"),
        ("recorded", "×1.15", 0.95, 15.0, 0.0, 800, "10;20"),
    ]
    columns = ["source", "scenario", "rate", "mean_rounds", "capped_share", "trials", "looks"]
    pd.DataFrame(rows, columns=columns).to_csv(tmp_path / "sequential_error_rates.csv", index=False)
    table = stats.sequential_error_rates(tmp_path).set_index("noise")
    assert list(table.columns) == ["false positive (A/A)", "false no effect (worse band edge)", "power at ×1.10",
                                   "power at ×1.15", "A/A undecided at the cap", "mean rounds, A/A",
                                   "mean rounds, ×1.10", "comparisons per scenario", "looks"]  # fmt: skip
    assert table.loc["simulated"].tolist() == [0.03, 0.04, 0.6, 0.9, 0.25, 70.0, 50.0, 4000, "10;20;40;80"]  # worse
    assert table.loc["recorded"].tolist() == [0.01, 0.005, 0.7, 0.95, 0.17, 40.0, 25.0, 800, "10;20"]


def test_slope_of_known_powers():
    ns = [100, 200, 400]
    assert stats.slope(ns, [3 * n**1.5 for n in ns]) == pytest.approx(1.5)
    assert stats.slope(ns, [7.0] * 3) == pytest.approx(0.0, abs=1e-12)


def test_a_comparison_holds_plain_python_values():
    """compare_rounds' dict is written to JSON and CSV and tested with `is`: no numpy scalars in it."""
    for looks in ((), (8, 16)):
        g = compare_rounds([100.0 + i for i in range(8)], [80.0 + i for i in range(8)], looks)
        assert json.loads(json.dumps(g)) == g
        assert {k: type(v) for k, v in g.items() if k != "rounds_to_decide"} == {
            "speedup": float, "speedup_q25": float, "speedup_q75": float, "p_value": float, "rounds": int, "real": bool,
            "no_effect": bool, "outcome": str, "interval_low": float, "interval_high": float, "equivalence_low": float,
            "equivalence_high": float, "level": float,
            "decided": bool, "capped": bool, "looks": str, "rounds_both": int, "speedup_all": float,
            "thresholds": list}  # fmt: skip


# ten rounds' log-ratios (notebook 07's `pipelined_static_1stream` case): no effect at the first look, while
# the look's wider interval reaches below the band's lower edge ×1/1.05
SHOWN_WITHIN = [-0.061, -0.047, -0.048, -0.012, -0.081, -0.007, -0.034, 0.031, 0.033, 0.049]


def test_the_equivalence_interval_is_the_one_the_no_effect_test_inverts():
    """Looks (10, 20) spend 0.025 each. At ten rounds the look's (1 − 0.025) interval runs from the 6th
    smallest to the 6th largest of the 55 Walsh averages (P(W+ ≤ 5) = 10/1024 ≤ 0.0125 < P(W+ ≤ 6) =
    14/1024), the equivalence interval, at twice the level, from the 9th (P(W+ ≤ 8) = 25/1024 ≤ 0.025 <
    P(W+ ≤ 9) = 33/1024): the textbook critical values of the signed-rank test for n = 10."""
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(SHOWN_WITHIN, 2))
    assert len(walsh) == 55
    base = [100.0] * 20
    g = compare_rounds(base, [100.0 / math.exp(x) for x in SHOWN_WITHIN] + base[:10], looks=(10, 20))
    assert (g["rounds"], g["level"], g["outcome"]) == (10, 0.025, stats.NO_EFFECT)
    assert (g["interval_low"], g["interval_high"]) == pytest.approx((math.exp(walsh[5]), math.exp(walsh[-6])))
    assert (g["equivalence_low"], g["equivalence_high"]) == pytest.approx((math.exp(walsh[8]), math.exp(walsh[-9])))
    assert g["interval_low"] < 1 / (1 + BAND) < g["equivalence_low"] and g["equivalence_high"] < 1 + BAND


def test_the_equivalence_interval_lies_inside_the_band_exactly_when_the_comparison_shows_no_effect():
    """Without ties, each one-sided test of TOST at a level rejects exactly where that end of the
    (1 − 2·level) interval lies inside the band: thousands of comparisons at each look's level."""
    rng = np.random.default_rng(7)
    for n in (7, 10, 20, 40, 80):
        for level in (0.00625, 0.0125, 0.025, 0.05):
            x = rng.normal(rng.uniform(-0.06, 0.06, (400, 1)), rng.uniform(0.005, 0.08, (400, 1)), (400, n))
            g = stats.judge(x, level)
            inside = (g["equivalence_low"] >= 1 / (1 + BAND)) & (g["equivalence_high"] <= 1 + BAND)
            assert (inside == g["no_effect"]).all(), (n, level)
            narrower = (g["interval_low"] <= g["equivalence_low"]) & (g["equivalence_high"] <= g["interval_high"])
            assert narrower.all()
            if n >= 10:  # both answers occur: the test is not passed by a constant
                assert inside.any() and (~inside).any(), (n, level)
