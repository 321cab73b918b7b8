"""The difference rule: exact signed-rank p-values, and its false-positive rate on host-like noise."""

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from tokgen.stats import ALPHA, BAND, compare_rounds, equivalence_p, resample_rounds, rounds_to_decide, signed_rank_p


def test_signed_rank_p_values():
    assert signed_rank_p([1.0] * 10) == pytest.approx(2 / 2**10)  # all ten rounds one way
    assert signed_rank_p([1.0, -1.0] * 5) == 1.0
    assert signed_rank_p([0.0, 0.0]) == 1.0  # no difference at all
    assert signed_rank_p([1.0] * 5) == pytest.approx(2 / 2**5)  # five rounds can never reach p < 0.05
    # exact null distribution of W+ for n = 4, ranks 1..4: P(W+ <= 1) = 2/16
    assert signed_rank_p([-1, -2, -3, 0.5]) == pytest.approx(2 * 2 / 16)


def host_noise(rng, rounds):
    """Times of one host-bound variant: lognormal jitter, occasional slow runs of one variant,
    and slow phases that hit every run of a round (the noise notebook 10's rounds show)."""
    phase = np.where(rng.random(rounds) < 0.15, rng.uniform(1.2, 1.8, rounds), 1.0)
    return lambda: (
        600
        * phase
        * rng.lognormal(0, 0.05, rounds)
        * np.where(rng.random(rounds) < 0.1, rng.uniform(1.3, 1.8, rounds), 1.0)
    )


def old_rule(base, times):
    per_round = [100 * (b - t) / b for b, t in zip(base, times)]
    lo, _, hi = statistics.quantiles(per_round, n=4, method="inclusive")
    return lo > 0 or hi < 0


@pytest.mark.parametrize("rounds", [10, 20])
def test_false_positive_rate_on_simulated_host_noise(rounds):
    rng = np.random.default_rng(1)
    trials, flagged, old_flagged = 3000, 0, 0
    for _ in range(trials):
        draw = host_noise(rng, rounds)
        a, b = draw(), draw()  # the same variant twice: any "real" difference is a false positive
        flagged += compare_rounds(list(a), list(b))["real"]
        old_flagged += old_rule(a, b)
    rate, old_rate = flagged / trials, old_flagged / trials
    print(f"A/A false-positive rate, {rounds} rounds: signed-rank {rate:.3f}, middle-half rule {old_rate:.3f}")
    assert rate <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)
    if rounds == 10:  # the previous rule ("the middle half of the per-round gains on one side of zero")
        assert old_rate > 2 * ALPHA


def test_a_consistent_gain_is_found():
    rng = np.random.default_rng(2)
    found = 0
    for _ in range(500):
        draw = host_noise(rng, 10)
        base = draw()
        found += compare_rounds(list(base), list(0.8 * base * rng.lognormal(0, 0.05, 10)))["real"]
    assert found / 500 > 0.95


def test_a_speedup_is_the_median_of_paired_ratios_and_agrees_in_sign_with_its_verdict():
    base = [100.0, 300.0, 100.0, 300.0, 100.0, 300.0, 100.0, 300.0]
    times = [90.0, 330.0, 90.0, 330.0, 90.0, 330.0, 95.0, 320.0]  # faster in the fast rounds only
    g = compare_rounds(base, times)
    ratios = sorted(b / t for b, t in zip(base, times))
    assert g["speedup"] == pytest.approx(statistics.median(ratios))
    assert g["speedup_q25"] <= g["speedup"] <= g["speedup_q75"]
    assert (g["speedup"] > 1) == (statistics.median([math.log(r) for r in ratios]) > 0)


@pytest.mark.parametrize("rounds", [8, 20])
def test_no_effect_is_rarely_called_for_an_effect_at_the_edge_of_the_band(rounds):
    """TOST's false-positive rate: a true speed-up of exactly ×(1 + BAND) (or its inverse) called
    "no effect" at most ALPHA of the time, on the simulated host noise."""
    rng = np.random.default_rng(3)
    trials, flagged = 2000, 0
    for i in range(trials):
        draw = host_noise(rng, rounds)
        a = draw()
        b = a / (1 + BAND) ** (1 if i % 2 else -1) * rng.lognormal(0, 0.03, rounds)
        flagged += compare_rounds(list(a), list(b))["no_effect"]
    rate = flagged / trials
    print(f"'no effect' called for an effect at the band's edge, {rounds} rounds: {rate:.3f}")
    assert rate <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


def test_no_effect_is_found_where_the_noise_is_small():
    """Variants replayed from CUDA graphs vary by ±0.2%: the same variant twice shows no effect."""
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(300):
        a = 60 * rng.lognormal(0, 0.002, 8)
        found += compare_rounds(list(a), list(60 * rng.lognormal(0, 0.002, 8)))["outcome"] == "no effect"
    assert found / 300 > 0.95


def test_equivalence_p_and_rounds_to_decide():
    assert equivalence_p([0.0] * 8) == pytest.approx(1 / 2**8)  # every round inside the band
    assert equivalence_p([0.2] * 8) == 1.0  # every round a 22% speed-up: far outside ±5%
    assert rounds_to_decide([0.1, -0.1] * 4) is not None and rounds_to_decide([0.01] * 8) is None
    noisy = [0.1, -0.08, 0.12, -0.05, 0.09, -0.11, 0.07, -0.02]  # mean ~0, spread ~0.09
    assert rounds_to_decide(noisy) > 8
    # a clear mean with two rounds against it: the approximation wants fewer than the 8 run, which did not decide it
    near = [0.1, 0.12, 0.05, 0.11, -0.04, -0.06, 0.13, 0.08]
    assert signed_rank_p(near) >= ALPHA and rounds_to_decide(near) > len(near)


def test_resampling_keeps_rounds_paired():
    df = pd.DataFrame(
        [
            {"variant": "a", "times_ms": "1;2;3;4", "median_ms": 2.5, "steps": 10},
            {"variant": "b", "times_ms": "10;20;30;40", "median_ms": 25.0, "steps": 10},
        ]
    )
    out = resample_rounds(df, np.random.default_rng(0))
    a = [float(x) for x in out.loc[0, "times_ms"].split(";")]
    b = [float(x) for x in out.loc[1, "times_ms"].split(";")]
    assert [10 * x for x in a] == b and len(a) == 4
    assert out.loc[0, "median_ms"] == statistics.median(a) and out.loc[0, "ms_per_step"] == out.loc[0, "median_ms"] / 10


def test_a_finding_states_the_verdict_and_the_bound():
    from tokgen.display import finding

    base = [100.0 + i for i in range(10)]
    times = {"a": ";".join(map(str, base)), "b": ";".join(str(0.8 * t) for t in base)}
    rows = pd.DataFrame(
        [
            {"variant": "a", "median_ms": 104.5, "times_ms": times["a"], "gpu_busy_share": 0.2},
            {"variant": "b", "median_ms": 83.6, "times_ms": times["b"], "gpu_busy_share": 0.7},
        ]
    )
    text = finding(rows, "a", "b")
    assert "×1.25 (IQR ×1.25–×1.25 of 10 rounds; p = 0.002, faster)" in text and "GPU-bound" in text
    assert "no effect, within ±5%" in finding(rows, "a", "a") and "host-bound" in finding(rows, "a", "a")
    assert "not measured" in finding(rows, "a", "c")
