"""The difference rule: exact signed-rank p-values, and its false-positive rate on host-like noise."""

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from tokgen.stats import ALPHA, compare_rounds, resample_rounds, signed_rank_p


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
    assert "+20.0%: faster, a real difference" in text and "GPU-bound" in text
    assert "no real difference" in finding(rows, "a", "a") and "host-bound" in finding(rows, "a", "a")
    assert "not measured" in finding(rows, "a", "c")
