"""The one voice (tokgen.voice): every comparison said one way, its numbers and direction read from
its rounds, rankings by paired speed-up with ties, counts in one order."""

import re
import statistics

import numpy as np
import pandas as pd
import pytest

from tokgen.stats import BAND, FASTER, NO_EFFECT, SLOWER, UNDECIDED, compare_rounds, gain
from tokgen.voice import (
    count_text,
    design_text,
    fastest_sentence,
    level_text,
    p_text,
    rank_text,
    ranking,
    speedup_table,
    speedup_text,
)


def frame(times: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"variant": v, "times_ms": ";".join(map(str, t)), "median_ms": statistics.median(t)} for v, t in times.items()]
    )


NUMBER = re.compile(r"×(\d+\.\d+)")


@pytest.mark.parametrize("seed", range(40))
def test_the_sentence_states_the_numbers_and_the_direction_its_rounds_give(seed):
    rng = np.random.default_rng(seed)
    rounds = int(rng.integers(6, 30))
    base = 100 * np.exp(rng.normal(0, 0.3, rounds))  # host noise shared by both runs of a round
    effect = float(rng.choice([0.7, 0.95, 1.0, 1.02, 1.3]))
    times = base / effect * np.exp(rng.normal(0, float(rng.choice([0.01, 0.1])), rounds))
    g = compare_rounds(list(base), list(times))
    text = speedup_text(g)
    ratios = sorted(b / t for b, t in zip(base, times))
    q25, q75 = statistics.quantiles(ratios, n=4, method="inclusive")[::2]
    digits = 3 if "×1.00" in f"×{statistics.median(ratios):.2f}" and "less than" in text else 2
    shown = [float(x) for x in NUMBER.findall(text)]
    assert shown == [round(statistics.median(ratios), digits), round(q25, digits), round(q75, digits)]
    assert f"of {rounds} rounds" in text
    outcome = text.rsplit(", ", 1)[-1] if "less than" not in text else text.split("; p ")[1].split(", ")[1]
    if g["outcome"] == FASTER:
        assert statistics.median(ratios) > 1 and "faster" in outcome
    elif g["outcome"] == SLOWER:
        assert statistics.median(ratios) < 1 and "slower" in outcome
    assert ("faster" in text) == (g["outcome"] == FASTER) and ("slower" in text) == (g["outcome"] == SLOWER)


def test_a_p_value_too_small_for_three_decimals_reads_below_one_in_a_thousand_not_zero():
    assert p_text(2 / 2**20) == "< 0.001" and p_text(0.0004) == "< 0.001"
    assert p_text(0.0005) == "= 0.001" and p_text(0.016) == "= 0.016"
    g = {"speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 1e-6, "outcome": FASTER, "rounds": 9}
    assert speedup_text(g) == "×1.20 (IQR ×1.10–×1.30 of 9 rounds; p < 0.001, faster)"
    assert speedup_text(None) == "not measured"


def test_the_levels_printed_for_a_design_add_up_to_alpha():
    """Item 24 of the teacher's review: at two significant digits 0.0125 read 0.013, and the printed
    levels of 10, 20, 40 added to 0.051."""
    from tokgen.stats import ALPHA, look_levels, looks_up_to

    for cap in (40, 80, 160, 50):
        shown = [float(level_text(a)) for a in look_levels(looks_up_to(cap))]
        assert sum(shown) == pytest.approx(ALPHA, abs=1e-12)
    assert [level_text(a) for a in look_levels(looks_up_to(80))] == ["0.00625", "0.00625", "0.0125", "0.025"]
    assert level_text(ALPHA / 3) == "0.0167"  # no short exact form: three significant digits
    text = design_text(looks_up_to(40))
    assert "after 10, 20 and 40 rounds, at levels 0.0125, 0.0125, 0.025 (their sum is 0.05)" in text
    g = {"speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 0.0128, "outcome": UNDECIDED,
         "rounds": 40, "looks": "10;20;40", "level": 0.025, "interval_low": 0.99, "interval_high": 1.4}  # fmt: skip
    assert "p = 0.013 at level 0.025, undecided" in speedup_text(g)
    assert "p = 0.002 at level 0.0125, faster" in speedup_text(
        {**g, "p_value": 0.002, "outcome": FASTER, "rounds": 10, "level": 0.0125}
    )


def test_a_real_difference_inside_the_no_effect_band_does_not_read_as_a_gain():
    # 0.1% faster in every round: real (p < ALPHA) and also within ±BAND (notebook 09, 8 SMs, claim 9)
    g = {"speedup": 1.0011, "speedup_q25": 1.0004, "speedup_q75": 1.0019, "p_value": 0.001, "outcome": FASTER,
         "no_effect": True, "rounds": 12}  # fmt: skip
    assert speedup_text(g) == "×1.001 (IQR ×1.000–×1.002 of 12 rounds; p = 0.001, faster, but by less than 5%)"
    g = {**g, "speedup": 1.04, "speedup_q25": 1.03, "speedup_q75": 1.05}
    assert speedup_text(g) == "×1.04 (IQR ×1.03–×1.05 of 12 rounds; p = 0.001, faster, but by less than 5%)"
    assert "less than" not in speedup_text({**g, "no_effect": False})


def test_an_undecided_comparison_says_how_many_rounds_would_decide_it_and_a_row_outside_its_slice_does_not_count():
    g = {"speedup": 1.03, "speedup_q25": 0.97, "speedup_q75": 1.1, "p_value": 0.4, "outcome": UNDECIDED,
         "rounds": 8, "rounds_to_decide": 24.0}  # fmt: skip
    assert speedup_text(g).endswith("p = 0.400, undecided: about 24 rounds would decide it)")
    assert speedup_text({**g, "rounds_to_decide": float("nan")}).endswith("undecided)")
    outside = {**g, "outcome": FASTER, "p_value": 0.01, "confined": False}
    assert speedup_text(outside).endswith("faster; ran outside its slice, not counted)")
    assert "not counted" not in speedup_text({**outside, "confined": True})
    assert "not counted" not in speedup_text({**outside, "confined": "whole GPU"})


def test_the_table_shows_the_same_numbers_as_the_sentence():
    base = [100.0 + i for i in range(8)]
    g = pd.DataFrame([gain(frame({"a": base, "b": [t / 1.25 for t in base]}), "a", "b")])
    text = speedup_table(g)
    assert "| b | a | ×1.25 | ×1.25–×1.25 | 0.008 | 8 | faster |" in text
    assert "Speed-up: the median over interleaved rounds" in text and "Speed-up" not in speedup_table(g, legend=False)


def test_ranking_is_by_paired_speedup_and_variants_the_rounds_do_not_tell_apart_share_a_rank():
    rng = np.random.default_rng(1)
    noise = np.exp(rng.normal(0, 0.3, 12))  # a round's host noise, shared by every variant
    base = 100 * noise
    times = {
        "base": base,
        "fast": base / 2.0 * np.exp(rng.normal(0, 0.002, 12)),
        "fast_too": base / 2.0 * np.exp(rng.normal(0, 0.002, 12)),  # the same speed: tied with "fast"
        "medium": base / 1.5,
        # the lowest median, yet slower than "fast" round by round: its noise fell on the cheap rounds
        "lucky": np.where(noise > 1, 30.0, 300.0),
    }
    ranked = ranking(frame({k: list(v) for k, v in times.items()}), "base")
    order = ranked["variant"].tolist()
    assert order.index("fast") < order.index("medium") < order.index("base")
    r = ranked.set_index("variant")
    assert r.loc["fast", "rank"] == r.loc["fast_too", "rank"] == 1 and r.loc["fast", "tied"]
    assert r.loc["medium", "rank"] > 1 and not r.loc["medium", "tied"]
    assert rank_text(r.loc["fast"]) == "1 (tied)" and rank_text(r.loc["medium"]) == str(int(r.loc["medium", "rank"]))
    # the lowest median of all, yet not told apart from "fast" round by round: tied, not first alone
    assert statistics.median(times["lucky"]) < min(statistics.median(t) for k, t in times.items() if k != "lucky")
    assert r.loc["lucky", "rank"] == 1 and r.loc["lucky", "tied"]
    assert r.loc["lucky", "speedup"] == pytest.approx(gain(frame({k: list(v) for k, v in times.items()}), "base",
                                                           "lucky")["speedup"])
    sentence = fastest_sentence(ranked)
    assert sentence.startswith("Tied for fastest variant (rank 1), ") and "Fastest" not in sentence
    assert all(f"`{v}`" in sentence for v in r.index[r["rank"] == 1]) and "do not tell them apart" in sentence


def test_a_clear_winner_is_alone_in_first_place():
    base = [100.0 + i for i in range(8)]
    ranked = ranking(frame({"a": base, "b": [t / 2 for t in base], "c": [t / 1.25 for t in base]}), "a")
    assert ranked["variant"].tolist() == ["b", "c", "a"] and ranked["rank"].tolist() == [1, 2, 3]
    assert not ranked["tied"].any() and fastest_sentence(ranked).startswith("Fastest variant: `b`, ×2.00")


def test_a_real_difference_inside_the_band_shares_the_rank_and_says_why():
    base = [100.0 + i for i in range(8)]
    results = frame({"a": base, "b": [t / 1.5 for t in base], "c": [t / 1.52 for t in base]})
    ranked = ranking(results, "a")
    assert ranked["rank"].tolist() == [1, 1, 3]  # c beats b for real, by 1.3%: inside ±5%, one rank
    sentence = fastest_sentence(ranked)
    assert "`b`, against `c`" in sentence
    assert "a real difference, but within ±5%: it does not part their rank" in sentence
    assert "do not tell them apart" not in sentence


def test_counts_name_each_outcome_in_one_order_and_add_up():
    outcomes = [FASTER, UNDECIDED, FASTER, NO_EFFECT, SLOWER, UNDECIDED, UNDECIDED]
    text = count_text(outcomes, "points")
    assert text == (f"of 7 points: faster (real) at 2, slower (real) at 1, no effect (within ±{BAND:.0%}) at 1, "
                    "undecided at 3")  # fmt: skip
    assert count_text([UNDECIDED] * 3, "places") == "of 3 places: undecided at 3"
    assert sum(int(n) for n in re.findall(r"at (\d+)", text)) == len(outcomes)


def test_an_undecided_comparison_names_a_count_of_rounds_only_beyond_the_next_one():
    """rounds_to_decide never says fewer than the rounds run + 1: where it says just that, the spread
    alone would have needed fewer, so no count is given."""
    from tokgen.voice import outcome_text

    at_floor = {"outcome": "undecided", "rounds": 12, "rounds_to_decide": 13}
    assert outcome_text(at_floor) == "undecided: more rounds than these 12 would decide it"
    beyond = {"outcome": "undecided", "rounds": 12, "rounds_to_decide": 14}
    assert outcome_text(beyond) == "undecided: about 14 rounds would decide it"
