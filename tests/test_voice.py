"""The one voice (tokgen.voice): every comparison said one way, its numbers and direction read from
its rounds, rankings by paired speed-up with ties, counts in one order."""

import math
import re
import statistics

import numpy as np
import pandas as pd
import pytest

from tokgen.stats import (
    BAND,
    FASTER,
    NO_EFFECT,
    SLOWER,
    UNDECIDED,
    compare_rounds,
    difference_interval,
    gain,
    time_summary,
)
from tokgen.voice import (
    ALL_ROUNDS,
    ALL_ROUNDS_NOTE,
    EQUIVALENCE,
    LEGEND,
    band_side,
    below_first_text,
    count_text,
    decoder_text,
    design_text,
    device_stop_text,
    difference_text,
    equivalence_text,
    faster_count,
    fastest_sentence,
    findings_text,
    first_of_text,
    first_rank_floors,
    first_tied,
    header_of,
    interval_text,
    k_sweep_text,
    k_sweep_words,
    level_text,
    measured_text,
    outcome_text,
    p_text,
    percent_text,
    rank_text,
    ranking,
    ruled_out,
    runs_apart_text,
    slope_reading,
    speedup_cell,
    speedup_table,
    speedup_text,
    spread,
    steps_past_n_text,
    table,
    tie_reason,
    trend_text,
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
    assert shown[:3] == [round(statistics.median(ratios), digits), round(q25, digits), round(q75, digits)]
    # shown within the band: the interval the no-effect test used follows, inside the band as printed
    inside = 2 if g["no_effect"] else 0
    assert len(shown) == 3 + inside + 2 and ("equivalence interval" in text) == g["no_effect"]
    assert all(1 / (1 + BAND) <= x <= 1 + BAND for x in shown[3 : 3 + inside])
    # last, the 95% interval (fixed rounds too): it excludes ×1 exactly when the test decided a direction
    low, high = shown[-2:]
    assert "; 95% interval ×" in text and (low > 1 or high < 1) == (g["outcome"] in (FASTER, SLOWER))
    assert low <= round(statistics.median(ratios), digits) <= high
    assert f"of {rounds} rounds" in text
    outcome = text.split("; p ")[1].split(", ")[1]
    if g["outcome"] == FASTER:
        assert statistics.median(ratios) > 1 and "faster" in outcome
    elif g["outcome"] == SLOWER:
        assert statistics.median(ratios) < 1 and "slower" in outcome
    assert ("faster" in text) == (g["outcome"] == FASTER) and ("slower" in text) == (g["outcome"] == SLOWER)


def test_a_p_value_too_small_for_three_decimals_reads_below_one_in_a_thousand_not_zero():
    assert p_text(2 / 2**20) == "< 0.001" and p_text(0.0004) == "< 0.001"
    assert p_text(0.0005) == "= 0.001" and p_text(0.016) == "= 0.016"
    g = {"speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 1e-6, "outcome": FASTER, "rounds": 9}
    assert speedup_text(g) == ("×1.20 (IQR ×1.10–×1.30 of 9 rounds; p < 0.001, faster; "
                               "too few rounds for an interval)")  # a dict without its interval: not invented
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
         "no_effect": True, "rounds": 12, "level": 0.05, "interval_low": 1.0004, "interval_high": 1.0018}  # fmt: skip
    assert speedup_text(g) == ("×1.001 (IQR ×1.000–×1.002 of 12 rounds; p = 0.001, faster, but by less than 5%; "
                               "95% interval ×1.0004–×1.002)")  # fmt: skip
    g = {**g, "speedup": 1.04, "speedup_q25": 1.03, "speedup_q75": 1.05, "interval_low": 1.03, "interval_high": 1.045}
    assert speedup_text(g) == ("×1.04 (IQR ×1.03–×1.05 of 12 rounds; p = 0.001, faster, but by less than 5%; "
                               "95% interval ×1.03–×1.04)")  # fmt: skip
    assert "less than" not in speedup_text({**g, "no_effect": False})


def test_an_undecided_comparison_says_how_many_rounds_would_decide_it_and_a_row_outside_its_slice_does_not_count():
    g = {"speedup": 1.03, "speedup_q25": 0.97, "speedup_q75": 1.1, "p_value": 0.4, "outcome": UNDECIDED,
         "rounds": 8, "rounds_to_decide": 24.0}  # fmt: skip
    assert speedup_text(g).endswith("p = 0.400, undecided: about 24 rounds would decide it; "
                                    "too few rounds for an interval)")  # a dict without one: none invented
    assert speedup_text({**g, "rounds_to_decide": float("nan")}).endswith("undecided; too few rounds for an interval)")
    outside = {**g, "outcome": FASTER, "p_value": 0.01, "confined": False}
    # rvC12 N8: the note after the interval, not between the outcome and it
    assert speedup_text(outside).endswith("faster; too few rounds for an interval; taken as run outside its slice "
                                          "(inferred from its GPU busy time), not counted)")  # fmt: skip
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
    assert rank_text(r.loc["fast"]) == "1 (shared)" and rank_text(r.loc["medium"]) == str(int(r.loc["medium", "rank"]))
    # the lowest median of all, yet not told apart from "fast" round by round: tied, not first alone
    assert statistics.median(times["lucky"]) < min(statistics.median(t) for k, t in times.items() if k != "lucky")
    assert r.loc["lucky", "rank"] == 1 and r.loc["lucky", "tied"]
    assert r.loc["lucky", "speedup"] == pytest.approx(gain(frame({k: list(v) for k, v in times.items()}), "base",
                                                           "lucky")["speedup"])
    sentence = fastest_sentence(ranked)  # "lucky" leads; the rounds do not tell "fast" apart from it: not a tie
    assert sentence.startswith("3 variants share rank 1 for the fastest variant: `")  # the first among the 3
    assert "Fastest" not in sentence and "Tied" not in sentence and not first_tied(ranked)
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


SEQUENTIAL = {"speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 0.004, "outcome": FASTER, "rounds": 20,
              "looks": "10;20;40", "level": 0.025, "interval_low": 1.05, "interval_high": 1.31}  # fmt: skip


def test_a_sequential_comparison_says_its_cap_the_level_that_judged_it_and_its_interval():
    assert speedup_text(SEQUENTIAL) == (
        "×1.20 (IQR ×1.10–×1.30 of 20 rounds, up to 40; p = 0.004 at level 0.025, faster; "
        "95% sequential interval ×1.05–×1.31)"
    )
    capped = {**SEQUENTIAL, "outcome": UNDECIDED, "p_value": 0.3, "rounds": 40, "capped": True, "rounds_to_decide": 90}
    said = "p = 0.300 at level 0.025, undecided at the cap; 95% sequential interval ×1.05–×1.31)"
    assert speedup_text(capped).endswith(said)
    # stopped before its cap undecided (not a comparison run on, or a variant failed): it says so, and no cap
    # it never reached beside its rounds (nb07 in the 16-SM slice read "of 20 rounds, up to 80 ... undecided")
    stopped = speedup_text({**capped, "capped": False, "rounds": 20})
    said = "of 20 rounds; p = 0.300 at level 0.025, undecided, not run on to the cap of 40; 95% sequential interval"
    assert said in stopped
    assert "up to 40" not in speedup_text({**SEQUENTIAL, "looks": ""})  # a fixed-rounds row


def test_an_interval_is_said_only_where_the_rounds_give_one():
    assert interval_text(SEQUENTIAL) == "95% sequential interval ×1.05–×1.31"
    assert interval_text({**SEQUENTIAL, "looks": "", "level": 0.01}) == "99% interval ×1.05–×1.31"
    for low, high in [(0.0, 1.3), (float("nan"), 1.3), (1.05, float("inf")), (1.05, float("nan"))]:
        none = {**SEQUENTIAL, "interval_low": low, "interval_high": high}
        assert interval_text(none) == "too few rounds for an interval"
    assert interval_text({"level": 0.025}) == "too few rounds for an interval"
    assert interval_text({**SEQUENTIAL, "interval_low": 1e-9}).startswith("95% sequential interval ×0.00–")
    # rvD12 S1: an end never rounds onto a claim's threshold it was judged against (×1.5034 holds ×1.5)
    held = {**SEQUENTIAL, "interval_low": 1.34, "interval_high": 1.50336, "thresholds": (1.5,)}
    assert interval_text(held) == "95% sequential interval ×1.34–×1.503"
    assert interval_text({**held, "interval_high": 1.4996}) == "95% sequential interval ×1.34–×1.4996"
    assert interval_text({**held, "thresholds": ()}) == "95% sequential interval ×1.34–×1.50"  # no threshold: 2
    # end to end (rrC12 N2): a comparison judged against ×1.5 records it, so its interval keeps each end's side
    from tokgen.stats import compare_rounds

    g = compare_rounds([1.0] * 10, [1 / 1.5] * 10, looks=[10], thresholds=(1.5,))
    assert g["thresholds"] == [1.5] and compare_rounds([1.0] * 10, [0.9] * 10, looks=[10])["thresholds"] == []
    from tokgen.voice import side_of

    assert side_of(1.6996, (1.7,)) == "1.6996" and side_of(1.0496, (1.7,)) == "1.05"  # a slope: its threshold only


def test_the_design_names_each_look_its_level_and_the_cap():
    text = design_text((10, 20, 40, 50))  # spending 0.05 · n / 50: 0.01, 0.02, 0.04, 0.05
    assert text.startswith("Each comparison this notebook needs is judged after 10, 20, 40 and 50 rounds, at levels "
                           "0.01, 0.01, 0.02, 0.01 (their sum is 0.05), and stops at the first look that decides it: "
                           "faster, slower, or no effect within ±5%;")  # fmt: skip
    assert "up to the cap of 50 rounds" in text and "at most 5% of the time" in text
    assert text.endswith(" Each comparison says how many rounds it used and its interval at the level of the look that "
                         "judged it: the looks' intervals hold the true speed-up together at least 95% of the time (a "
                         f"sequential interval). {EQUIVALENCE}")  # fmt: skip
    assert design_text([20]) == ("Each comparison is judged once, after 20 rounds, at level 0.05 (a cap no larger "
                                 f"than the first look leaves one look); its interval is the 95% one. {EQUIVALENCE}")
    # what each of the two intervals is, said once, in the design and in the table's legend
    assert EQUIVALENCE.startswith("A comparison shown to lie within ±5% (no effect, or a real difference by less than "
                                  "5%) also gives its equivalence interval: the narrower interval at twice its level")
    assert "may reach past the band's edges" in EQUIVALENCE and EQUIVALENCE in LEGEND
    assert "judged after 10 and 20 rounds, at levels 0.025, 0.025 " in design_text((10, 20))


def test_the_design_says_a_comparison_with_a_threshold_runs_on_until_its_interval_clears_it():
    # review rvB17 M1: N=100, faster at look 10, ran to 80 while its interval held ×1.5; the design said it stops
    text = design_text((10, 20, 40, 80), (1.5,))
    assert ("no effect within ±5%; each comparison also needs its interval clear of ×1.5 (the speed-up its claim "
            "reads it against), so it runs on while its interval still holds it, even once called faster; only the "
            "variants of comparisons still undecided run on") in text  # fmt: skip
    two = design_text((10, 20), (2.5, 4.0), "the recipe against naive (claim 10)")
    assert ("the recipe against naive (claim 10) also needs its interval clear of ×2.5 and ×4 (the speed-ups its "
            "claim reads it against), so it runs on while its interval still holds one of them") in two
    assert "clear of" not in design_text((10, 20))


def test_findings_group_the_comparisons_by_outcome_in_one_order():
    def g(variant, outcome, speedup):
        return {"variant": variant, "vs": "naive", "speedup": speedup, "speedup_q25": speedup, "speedup_q75": speedup,
                "p_value": 0.5, "outcome": outcome, "rounds": 8}  # fmt: skip

    rows = [g("s", SLOWER, 0.5), None, g("u", UNDECIDED, 1.0), g("f", FASTER, 2.0), g("n", NO_EFFECT, 1.01),
            g("f2", FASTER, 3.0)]  # fmt: skip
    text = findings_text(rows)
    slower = f"- **Slower, for real:** `s` against `naive` {speedup_text(rows[0])}."
    assert text.splitlines() == [
        f"- **Faster, for real:** `f` against `naive` {speedup_text(rows[3])}; "
        f"`f2` against `naive` {speedup_text(rows[5])}.",
        slower,
        f"- **No effect (within ±5%):** `n` against `naive` {speedup_text(rows[4])}.",
        f"- **Undecided (these rounds cannot tell):** `u` against `naive` {speedup_text(rows[2])}.",
    ]
    assert findings_text(pd.DataFrame([r for r in rows if r])) == text
    assert findings_text([g("s", SLOWER, 0.5)]) == slower
    assert findings_text([None]) == findings_text([]) == "- No comparison was measured in this run."


def test_findings_split_the_undecided_by_what_their_interval_rules_out():
    """Review rvB14 S2: notebook 07's summary listed `pipelined_static` against `kv_static` ×0.98 (95% sequential
    interval ×0.93–×1.03) as one these rounds cannot tell, though its interval rules out a gain beyond 5%, as the
    claims read it (`tokgen.claims.gain_ruled_out`: high end below ×(1 + BAND); a slowdown: low end above
    ×1/(1 + BAND))."""

    def g(variant, outcome, speedup, low, high):
        return {"variant": variant, "vs": "kv_static", "speedup": speedup, "speedup_q25": 0.9, "speedup_q75": 1.1,
                "p_value": 0.29, "outcome": outcome, "rounds": 80,
                "interval_low": low, "interval_high": high}  # fmt: skip

    no_gain = g("pipelined_static", UNDECIDED, 0.98, 0.93, 1.03)
    open_ = g("wide", UNDECIDED, 1.0, 0.90, 1.12)
    no_slowdown = g("one_stream", UNDECIDED, 1.0, 0.96, 1.06)
    either = g("narrow", UNDECIDED, 1.0, 0.96, 1.04)
    faster = g("fast", FASTER, 1.03, 1.01, 1.04)  # decided: its high end below ×1.05 moves it nowhere
    slower = g("slow", SLOWER, 0.97, 0.96, 0.99)
    said = lambda r: f"`{r['variant']}` against `kv_static` {speedup_text(r)}"  # noqa: E731
    text = findings_text([open_, no_gain, faster, no_slowdown, slower, either])
    assert text.splitlines() == [
        f"- **Faster, for real:** {said(faster)}.",
        f"- **Slower, for real:** {said(slower)}.",
        f"- **Undecided, but a difference beyond ±5% is ruled out either way:** {said(either)}.",
        f"- **Undecided, but a gain beyond 5% is ruled out:** {said(no_gain)}.",
        f"- **Undecided, but a slowdown beyond 5% is ruled out:** {said(no_slowdown)}.",
        f"- **Undecided (these rounds cannot tell):** {said(open_)}.",
    ]
    assert "95% interval ×0.93–×1.03" in text
    # each alone: the ruled-out one leaves "cannot tell", the wide one stays, a decided one is unchanged
    assert findings_text([no_gain]) == f"- **Undecided, but a gain beyond 5% is ruled out:** {said(no_gain)}."
    assert findings_text([open_]) == f"- **Undecided (these rounds cannot tell):** {said(open_)}."
    assert findings_text([faster]) == f"- **Faster, for real:** {said(faster)}."
    assert findings_text(pd.DataFrame([open_, no_gain])) == findings_text([open_, no_gain])


def test_an_interval_rules_out_only_what_lies_strictly_past_the_bands_edge():
    edge = 1 / (1 + BAND)
    u = lambda low, high: {"outcome": UNDECIDED, "interval_low": low, "interval_high": high}  # noqa: E731
    assert ruled_out(u(0.93, 1.03)) == "gain" and ruled_out(u(0.90, 1.12)) == ""
    assert ruled_out(u(0.96, 1.06)) == "slowdown" and ruled_out(u(0.96, 1.04)) == "either"
    assert ruled_out(u(0.93, 1 + BAND)) == "" and ruled_out(u(edge, 1.06)) == ""  # on the edge: not ruled out
    assert ruled_out(u(0.93, 1.0499)) == "gain" and ruled_out(u(edge + 1e-6, 1.06)) == "slowdown"
    assert ruled_out(u(math.nan, math.nan)) == "" and ruled_out({"outcome": UNDECIDED}) == ""
    assert ruled_out({**u(0.93, 1.03), "outcome": FASTER}) is None


def test_a_spread_is_the_median_and_quartiles_of_the_columns_it_names():
    row = {"median_ms": 1.26, "q25_ms": 1.04, "q75_ms": 1.51, "median_us": 7.0, "q25_us": 6.0, "q75_us": 8.25}
    assert spread(row) == "1.3 (1.0–1.5) ms"
    assert spread(row, unit="µs", digits=2, key="us") == "7.00 (6.00–8.25) µs"
    assert spread(row, unit="") == "1.3 (1.0–1.5)"


def test_a_table_rounds_each_column_and_says_its_header_in_words():
    df = pd.DataFrame({"variant": ["a", "b"], "median_ms": [1.25, 10.0], "n": [3, 4], "kv_mb": [1234.5, None]})
    assert table(df, digits=2) == ("| variant | median, ms | n | KV, MB |\n|---|---|---|---|\n"
                                   "| a | 1.25 | 3 | 1,234.50 |\n| b | 10.00 | 4 |  |")  # fmt: skip
    assert table(df, columns=["n", "variant"]) == "| n | variant |\n|---|---|\n| 3 | a |\n| 4 | b |"
    assert table(pd.DataFrame({"x": [1.26]})) == "| x |\n|---|\n| 1.3 |"  # one decimal by default
    # rvA12 N1: a rate strictly between 0 and 1 never prints as 1 or 0 (2 of 4000 undecided: power 0.9995)
    rates = pd.DataFrame({"r": [0.9995, 0.0004, 0.0355, 1.0, 0.0]})
    assert [r.strip("| ") for r in table(rates, digits=3).splitlines()[2:]] == ["0.9995", "0.0004", "0.035", "1.000",
                                                                                 "0.000"]  # fmt: skip
    assert table(df, digits={"kv_mb": 0}).splitlines()[2] == "| a | 1.2 | 3 | 1,234 |"
    names = ["Median_ms", "a-b_ms", "ms", "pct_faster", "n_sms", "eos_rows", "sync_debug_warnings", "peak_gb_s",
             "times_x", "copy_bandwidth_gb_s"]  # fmt: skip
    assert [header_of(c) for c in names] == [
        "Median_ms", "a-b_ms", "ms", "% faster", "n SMs", "EOS rows", "flagged syncs", "peak, GB/s", "× x",
        "copy bandwidth, GB/s"]  # fmt: skip


def test_the_table_of_comparisons_names_its_columns_and_says_p_and_rounds_like_the_sentence():
    rows = pd.DataFrame([{"variant": "b", "vs": "a", "n": 4, "speedup": 1.5, "speedup_q25": 1.25, "speedup_q75": 1.75,
                          "p_value": 1e-5, "outcome": FASTER, "rounds": 12.0, "level": 0.05, "interval_low": 1.2,
                          "interval_high": 1.8},
                         {"variant": "c", "vs": "a", "n": 8, "speedup": 1.0, "speedup_q25": 0.9, "speedup_q75": 1.1,
                          "p_value": 0.25, "outcome": UNDECIDED, "rounds": 6, "rounds_to_decide": 30}])  # fmt: skip
    assert speedup_table(rows, legend=False).splitlines()[0].startswith("| variant | against | speed-up |")
    text = speedup_table(rows, columns={"N": "n", "variant": "variant"}, legend=False)
    assert text.splitlines() == ["| N | variant | speed-up | IQR of rounds | p | rounds | outcome | interval |",
                                 "|---|---|---|---|---|---|---|---|",
                                 "| 4 | b | ×1.50 | ×1.25–×1.75 | < 0.001 | 12 | faster | 95% interval ×1.20–×1.80 |",
                                 "| 8 | c | ×1.00 | ×0.90–×1.10 | 0.250 | 6 "
                                 "| undecided: about 30 rounds would decide it "
                                 "| too few rounds for an interval |"]  # fmt: skip


def test_ranking_leaves_out_what_was_not_measured_and_compares_each_tied_variant_with_its_leader():
    base = [100.0 + i for i in range(8)]
    half = [t / 2 for t in base]
    results = frame({"a": base, "b": half, "c": half, "d": [t / 1.25 for t in base], "e": half})
    ranked = ranking(results, "a", variants=["d", "b", "c", "gone", "e"])
    assert ranked["variant"].tolist() == ["b", "c", "e", "d"] and ranked["rank"].tolist() == [1, 1, 1, 4]
    assert ranked["tied"].tolist() == [True, True, True, False]
    assert ranked["vs_leader"].iloc[0] is None and ranked["vs_leader"].iloc[3] is None
    c, e = ranked["vs_leader"].iloc[1], ranked["vs_leader"].iloc[2]
    assert (c["variant"], c["vs"], c["speedup"], e["variant"], e["vs"]) == ("c", "b", 1.0, "e", "b")
    head = "Tied for the fastest generator (rank 1), 3 variants: `b`, ×2.00 "
    assert fastest_sentence(ranked, "generator").startswith(head)
    said = (f"; `c`, against `b` {speedup_text(c)} (shown to lie within ±5% of it); `e`, against `b` "
            f"{speedup_text(e)} (shown to lie within ±5% of it). Below rank 1: rank 4: `d`.")  # fmt: skip
    assert fastest_sentence(ranked).startswith("Tied for the fastest variant (rank 1), 3 variants: `b`, ")
    assert fastest_sentence(ranked).endswith(said)
    empty = ranking(results, "a", variants=["gone"])
    assert empty.empty and list(empty.columns) == ["variant", "rank", "tied", "speedup", "outcome", "vs_leader",
                                                   "own_rank", "beaten_by", "beaten_through", "within_band_of",
                                                   "cycle", "shared_with"]  # fmt: skip
    assert fastest_sentence(empty, "generator") == "No generator was timed."
    assert count_text([]) == "of 0 comparisons: "


def test_variants_sharing_a_rank_are_ordered_by_their_speedup_over_the_base():
    base = [100.0 + i for i in range(8)]
    wobbly = [t / 2 * f for t, f in zip(base, [0.8, 1.05] * 4)]  # ×2.5 or ×1.9: median ×2.2, not told apart from b
    ranked = ranking(frame({"a": base, "b": [t / 2 for t in base], "c": wobbly}), "a", variants=["b", "c"])
    assert ranked["variant"].tolist() == ["c", "b"] and ranked["rank"].tolist() == [1, 1]
    assert ranked["speedup"].iloc[0] > ranked["speedup"].iloc[1]


def test_a_comparison_without_a_round_count_says_none():
    g = {"speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 1e-6, "outcome": FASTER}
    assert speedup_text(g) == "×1.20 (IQR ×1.10–×1.30; p < 0.001, faster; too few rounds for an interval)"
    assert speedup_text({**g, "rounds": float("nan")}) == speedup_text(g)


def test_a_p_value_and_an_interval_are_printed_on_the_side_of_their_level_and_of_one_they_lie():
    """The 16-SM slice's nb07 read "p = 0.006 at level 0.00625, undecided" (p was 0.00639) and
    "interval ×1.00–×1.21 ... faster" beside "×1.00–×1.17 ... undecided" (low ends 1.0017 and 0.9979)."""
    assert p_text(0.00639, 0.00625) == "= 0.0064" and p_text(0.00611, 0.00625) == "= 0.006"
    assert p_text(0.016, 0.05) == "= 0.016" and p_text(0.0499, 0.05) == "= 0.0499" and p_text(0.00639) == "= 0.006"
    assert p_text(0.0002, 0.0125) == "< 0.001"
    g = {"level": 0.00625, "interval_low": 1.0017, "interval_high": 1.2071}
    assert interval_text(g) == "99.4% interval ×1.002–×1.21"  # no looks: a fixed design's, at its level
    assert interval_text({**g, "interval_low": 0.9979, "interval_high": 1.1712}) == "99.4% interval ×0.998–×1.17"
    assert interval_text({**g, "interval_low": 0.95004, "interval_high": 1.04996}) == "99.4% interval ×0.95–×1.04996"
    assert interval_text({**g, "interval_low": 0.9613, "interval_high": 1.0388}) == "99.4% interval ×0.96–×1.04"
    assert interval_text({**g, "looks": "10;20;40;80"}) == "95% sequential interval ×1.002–×1.21"
    seq = {"speedup": 1.09, "speedup_q25": 1.0, "speedup_q75": 1.2, "p_value": 0.00639, "outcome": UNDECIDED,
           "rounds": 20, "looks": "10;20;40;80", "level": 0.00625, "interval_low": 0.9979,
           "interval_high": 1.17}  # fmt: skip
    assert "p = 0.0064 at level 0.00625, undecided, not run on to the cap of 80; 95% sequential interval ×0.998–" in (
        speedup_text(seq)
    )


def test_a_tie_shown_inside_the_band_is_not_called_one_the_rounds_cannot_tell_apart():
    assert tie_reason({"outcome": NO_EFFECT}) == "shown to lie within ±5% of it"
    assert tie_reason({"outcome": UNDECIDED}) == "the rounds do not tell them apart"
    assert tie_reason(None) == "the rounds do not tell them apart"
    assert "does not part their rank" in tie_reason({"outcome": FASTER, "no_effect": True})
    # a real difference not shown within the band, yet the same rank: as many variants beat each (review r10)
    assert tie_reason({"outcome": FASTER}).startswith("a real difference, not shown within ±5%, yet as many")


def test_a_trend_across_n_is_said_only_where_every_point_is_decided_and_the_intervals_part():
    """The 16-SM slice's nb04 said the static cache's speed-up "shrinks" from an undecided ×1.00
    (interval ×0.88–×1.20) to ×0.88: a trend through an undecided point."""
    def point(n, s, outcome, low, high):
        return {"max_seqlen": n, "speedup": s, "outcome": outcome, "interval_low": low, "interval_high": high}

    undecided = pd.DataFrame([point(200, 0.88, SLOWER, 0.81, 0.94), point(100, 1.0, UNDECIDED, 0.88, 1.2)])
    assert trend_text(undecided) == ("reads ×1.00 at N = 100, ×0.88 at N = 200; with N = 100 undecided, no trend "
                                     "across N is established")  # fmt: skip
    apart = pd.DataFrame([point(100, 1.2, FASTER, 1.1, 1.3), point(200, 0.88, SLOWER, 0.81, 0.94)])
    assert trend_text(apart).startswith("shrinks across N (×1.20 at N = 100, ×0.88 at N = 200;")
    growing = pd.DataFrame([point(50, 2.2, FASTER, 1.8, 2.5), point(100, 3.9, FASTER, 3.2, 4.2),
                            point(200, 5.5, FASTER, 5.0, 5.9)])  # fmt: skip
    assert trend_text(growing).startswith("grows across N")
    overlap = growing.assign(interval_high=[2.5, 5.1, 5.9])  # the middle interval reaches into the last one's
    assert "neighbouring intervals overlap, so no trend across N is established" in trend_text(overlap)
    assert trend_text(growing.iloc[:1]) == "reads ×2.20 at N = 50: measured at one N only, no trend"


def test_a_generator_that_returns_tokens_past_the_stop_is_named_beside_the_ranking():
    from tokgen.voice import past_the_stop

    rows = [{"generator": g, "model": m, "trial": t, "extra_tokens": x}
            for g, x in (("article_pipelined", 1), ("pipelined_static", 0)) for m in ("eager", "compiled")
            for t in range(3)]  # fmt: skip
    eos = pd.DataFrame(rows)
    assert past_the_stop(eos) == ("`article_pipelined` (eager, compiled) returns 1 token past the stop in every "
                                  "trial of the EOS check (section 2): a rank it holds is that of a generator whose "
                                  "output is wrong, fast or not.")  # fmt: skip
    eos.loc[(eos["generator"] == "article_pipelined") & (eos["trial"] == 0), "extra_tokens"] = 0
    assert "returns 1 token past the stop in 4 of 6 trials" in past_the_stop(eos)
    assert past_the_stop(eos.assign(extra_tokens=0)) == ""


def test_a_runs_rounds_are_said_as_a_range_where_the_design_ran_some_variants_on():
    from tokgen.voice import rounds_range

    assert rounds_range([12, 12]) == "12 interleaved rounds"
    assert rounds_range([10, 80, 20]) == ("10–80 interleaved rounds per variant (more for variants in a comparison "
                                          "still undecided)")  # fmt: skip


def test_p_and_interval_edges_print_on_their_side():
    """p at the level, p below a tiny level, an interval end a hair from ×1, the band's lower edge ×1/1.05."""
    assert p_text(0.05, 0.05) == "= 0.05" and p_text(0.0003, 0.000625) == "= 0.0003"
    hair = {"level": 0.05, "interval_low": 0.99996, "interval_high": 1.2}
    assert interval_text(hair) == "95% interval ×0.99996–×1.20"
    assert interval_text({"level": 0.05, "interval_low": 0.951, "interval_high": 1.01}) == "95% interval ×0.95–×1.01"
    assert interval_text({"level": 0.05, "interval_low": 0.9525, "interval_high": 1.01}) == "95% interval ×0.953–×1.01"


def test_a_table_of_sequential_comparisons_gives_each_ps_level_and_the_legend_says_so():
    seq = {"variant": "b", "vs": "a", "speedup": 1.2, "speedup_q25": 1.1, "speedup_q75": 1.3, "p_value": 0.004,
           "outcome": FASTER, "rounds": 20, "looks": "10;20;40;80", "level": 0.00625}  # fmt: skip
    text = speedup_table(pd.DataFrame([seq]))
    assert "| level |" in text and "| 0.004 | 20 | faster | 0.00625 |" not in text and "| 0.00625 |" in text
    assert "p below its level (0.05 with fixed rounds; with the sequential design, the level of the look" in text
    fixed = speedup_table(pd.DataFrame([{**seq, "looks": "", "level": 0.05}]))
    assert "| level |" not in fixed


def test_no_effect_is_said_beside_the_interval_it_was_judged_on():
    """Notebook 07's `pipelined_static_1stream` case (tests/test_stats_exact.py: SHOWN_WITHIN): "no effect,
    within ±5%" with the equivalence interval inside ±5%, and the wider 95% sequential interval that reaches
    below ×1/1.05 as the coverage statement; every renderer says it in the same words."""
    from test_stats_exact import SHOWN_WITHIN

    base = [100.0] * 20
    g = compare_rounds(base, [100.0 / np.exp(x) for x in SHOWN_WITHIN] + base[:10], looks=(10, 20))
    said = "no effect, within ±5%: its equivalence interval ×0.953–×1.01"
    assert speedup_text(g) == (f"×0.98 (IQR ×0.95–×1.02 of 10 rounds, up to 20; p = 0.232 at level 0.025, {said}; "
                               "95% sequential interval ×0.94–×1.03; ×1.00 over all 20 rounds both ran)")  # fmt: skip
    assert interval_text(g) == "95% sequential interval ×0.94–×1.03"  # the coverage statement, as before
    rows = pd.DataFrame([g | {"variant": "b", "vs": "a"}])
    assert f"| {said} |" in speedup_table(rows, legend=False)  # the table's outcome column: the same words
    # a real difference shown within the band says the interval that showed it too; one not shown, none
    real = {**g, "outcome": SLOWER, "equivalence_low": 0.9612, "equivalence_high": 0.9903}
    said = "slower, but by less than 5%: its equivalence interval ×0.96–×0.99 (slower by at most 4.0%)"
    assert outcome_text(real) == said
    assert outcome_text({**real, "no_effect": False}) == "slower"
    assert outcome_text({**g, "equivalence_low": float("nan")}) == "no effect, within ±5%"  # none recorded
    assert outcome_text({"outcome": NO_EFFECT}) == "no effect, within ±5%"


def test_the_equivalence_interval_as_printed_lies_inside_the_band_exactly_when_the_test_says_no_effect():
    """Each end printed with the digits that keep it on its side of the band's edges: ×0.9524 is not
    ×0.95, which would read outside ×1/1.05 = ×0.95238."""
    from tokgen.stats import judge

    assert equivalence_text({"equivalence_low": 0.95241, "equivalence_high": 1.04999}) == \
        "its equivalence interval ×0.9524–×1.04999"  # fmt: skip
    assert equivalence_text({"equivalence_low": 0.96, "equivalence_high": float("inf")}) == ""
    rng = np.random.default_rng(11)
    x = rng.normal(rng.uniform(-0.05, 0.05, (3000, 1)), rng.uniform(0.005, 0.05, (3000, 1)), (3000, 20))
    g = judge(x, 0.025)
    for low, high, within in zip(g["equivalence_low"], g["equivalence_high"], g["no_effect"]):
        text = equivalence_text({"equivalence_low": low, "equivalence_high": high})
        printed = [float(v) for v in NUMBER.findall(text)]
        assert (1 / (1 + BAND) <= printed[0] and printed[1] <= 1 + BAND) == within


def test_an_equivalence_interval_on_one_side_of_one_says_by_how_much_at_most_as_the_band_counts():
    """×0.9532–×0.9967 (the reference run's compiled one stream against two): the variant's time
    at most 1/0.9532 = 1.0491 times the other's, slower by at most 4.9% (within the band's 5%, which
    counts a slowdown the same way: ×1/1.05); ×1.002–×1.0301: faster by at most 3.0%; an interval
    that holds ×1 says no side; one at the band's edge keeps the digits that keep it inside."""
    one_sided = equivalence_text({"equivalence_low": 0.9532, "equivalence_high": 0.9967})
    assert one_sided == "its equivalence interval ×0.953–×0.997 (slower by at most 4.9%)"
    assert equivalence_text({"equivalence_low": 1.002, "equivalence_high": 1.0301}).endswith(
        "×1.002–×1.03 (faster by at most 3.0%)")  # fmt: skip
    both_sides = equivalence_text({"equivalence_low": 0.97, "equivalence_high": 1.02})
    assert both_sides == "its equivalence interval ×0.97–×1.02"
    for low, high in ((0.99, 1.005), (0.995, 1.03)):  # ×1 inside, however near an end: no side
        assert equivalence_text({"equivalence_low": low, "equivalence_high": high}).endswith(f"{high:g}")
    edge = equivalence_text({"equivalence_low": 1.01, "equivalence_high": 1.04996})
    assert edge.endswith("(faster by at most 4.996%)")
    assert equivalence_text({"equivalence_low": 0.9525, "equivalence_high": 0.99}).endswith("(slower by at most 4.99%)")


def test_an_equivalence_interval_whose_ends_round_alike_keeps_the_digits_that_tell_them_apart():
    """rr21d N1, notebook 12's committed pair: ×0.9728–×0.9740 printed "×0.97–×0.97", an interval of zero
    width; its ends now read ×0.973–×0.974. Ends apart at two decimals keep two; equal ends print once alike."""
    assert equivalence_text({"equivalence_low": 0.9728, "equivalence_high": 0.9740}) == \
        "its equivalence interval ×0.973–×0.974 (slower by at most 2.8%)"  # fmt: skip
    assert equivalence_text({"equivalence_low": 1.0201, "equivalence_high": 1.02014}) == \
        "its equivalence interval ×1.02010–×1.02014 (faster by at most 2.0%)"  # fmt: skip
    assert equivalence_text({"equivalence_low": 0.97, "equivalence_high": 0.98}).startswith(
        "its equivalence interval ×0.97–×0.98 ")  # fmt: skip
    assert "×1.02–×1.02 " in equivalence_text({"equivalence_low": 1.02, "equivalence_high": 1.02})


def test_a_percentage_never_rounds_onto_or_across_the_threshold_it_is_judged_by():
    assert percent_text(0.945625, 0.95) == "94.6%"  # the reference run's claim 1: "95%" would read as meeting 95%
    assert percent_text(0.9496875, 0.95) == "94.97%" and percent_text(0.9499, 0.95) == "94.99%"  # as it takes
    assert percent_text(0.95, 0.95) == "95%" and percent_text(0.955, 0.95) == "96%"
    assert percent_text(0.69, 0.95) == "69%"
    assert percent_text(0.945625, 0.5) == "95%"  # far from its threshold: whole percents
    assert percent_text(0.4996, 0.5) == "49.96%" and percent_text(0.0493, 0.05, 1) == "4.9%"


def test_tied_for_fastest_only_where_every_member_is_shown_within_the_band_of_the_first():
    base = [100.0 + 3 * i for i in range(10)]
    fast = [t / 2 for t in base]
    same = [t * w for t, w in zip(fast, [1.001, 0.999, 1.002, 0.998, 1.0015, 0.9985, 1.0005, 0.9995, 1.0012, 0.9988])]
    loose = [t * w for t, w in zip(fast, [1.08, 0.93, 1.07, 0.94, 1.09, 0.92, 1.06, 0.95, 1.1, 0.91])]  # ±8%
    tied = ranking(frame({"a": base, "b": fast, "c": same}), "a")
    assert first_tied(tied) and fastest_sentence(tied).startswith("Tied for the fastest variant (rank 1), 2 variants: ")
    assert fastest_sentence(tied).endswith("(shown to lie within ±5% of it). Below rank 1: rank 3: `a`.")
    mixed = ranking(frame({"a": base, "b": fast, "c": same, "d": loose}), "a")
    assert mixed["rank"].tolist() == [1, 1, 1, 4] and not first_tied(mixed)
    sentence = fastest_sentence(mixed, "generator")
    assert sentence.startswith("3 variants share rank 1 for the fastest generator: `c`, ×2.00 (")  # c, 2 after it
    assert [m for m in "bcd" if f"`{m}`, " in sentence] == list("bcd")  # all 3 listed, the first counted among them
    assert "Tied" not in sentence and "(the rounds do not tell them apart)" in sentence  # each member's own reason
    assert "(shown to lie within ±5% of it)" in sentence
    alone = ranking(frame({"a": base, "b": fast}), "a")
    assert not first_tied(alone) and fastest_sentence(alone).startswith("Fastest variant: `b`")


def test_a_count_of_faster_comparisons_says_how_many_are_faster_by_less_than_the_band():
    """Notebook 10's WHILE node against five K-step replays, two of them ×1.03: faster for real, and
    shown within ±5%; three shown beyond ±5% (every round ×1.06 or more: the equivalence interval lies
    above ×1.05)."""
    base = [100.0 + i for i in range(8)]
    rows = [compare_rounds(base, [t / s for t in base]) for s in (1.026, 1.031, 1.06, 1.22, 1.57)]
    assert [g["no_effect"] for g in rows] == [True, True, False, False, False]
    assert faster_count(rows) == "faster in 5 of 5 comparisons, 3 of them by more than 5%, 2 by less than 5%"
    assert faster_count(rows[2:]) == "faster in 3 of 3 comparisons, all 3 by more than 5%"
    more = rows[:1] + [{"outcome": SLOWER, "no_effect": True}, {"outcome": SLOWER}, {"outcome": UNDECIDED}]
    assert faster_count(more, "pairs") == ("faster in 1 of 4 pairs, by less than 5%; slower in 2, 1 of them by "
                                           "less than 5%; undecided in 1")  # fmt: skip
    assert faster_count([{"outcome": NO_EFFECT}]) == "faster in 0 of 1 comparisons; no effect in 1"


def test_a_real_difference_neither_shown_within_nor_beyond_the_band_is_counted_as_neither():
    """Review r11 (rvB N1): notebook 10's K = 2 replay against the WHILE node, ×1.054 with equivalence
    interval ×1.048–×1.060, is neither shown within ±5% nor beyond it. Known answers, 8 rounds each:
    ratios alternating ×1.03 and ×1.08 (equivalence interval ×1.03–×1.08, across ×1.05): neither; every
    round ×1.049: within; ×1.051: beyond; slower ones mirrored at ×1/1.05."""
    base = [100.0 + i for i in range(8)]

    def g(ratios):
        return compare_rounds(base, [t / r for t, r in zip(base, ratios)])

    straddles, within, beyond = g([1.03, 1.08] * 4), g([1.049] * 8), g([1.051] * 8)
    slow_beyond, slow_straddles = g([1 / 1.06] * 8), g([1 / 1.03, 1 / 1.08] * 4)
    assert [band_side(x) for x in (straddles, within, beyond, slow_beyond, slow_straddles)] == [
        "neither", "within", "beyond", "beyond", "neither"]  # fmt: skip
    assert band_side({"outcome": FASTER, "no_effect": False}) is None  # no equivalence interval: not placed
    rows = [beyond, within, straddles, g([1.22] * 8), g([1.57] * 8)]  # notebook 10's 52-step stop, in kind
    assert faster_count(rows) == ("faster in 5 of 5 comparisons, 3 of them by more than 5%, 1 by less than 5%, 1 "
                                  "not shown on either side of 5%")  # fmt: skip
    assert faster_count([straddles]) == "faster in 1 of 1 comparisons, not shown on either side of 5%"
    slower = faster_count([slow_beyond, slow_straddles])
    assert slower == ("faster in 0 of 2 comparisons; slower in 2, 1 of them by more than 5%, 1 not shown on either "
                      "side of 5%")
    # rows without an equivalence interval (not `gain` rows): counted by outcome alone, as before
    assert faster_count([{"outcome": FASTER, "no_effect": False}] * 2) == "faster in 2 of 2 comparisons"


def test_a_base_against_itself_reads_a_dash_in_a_table_cell():
    base = [100.0 + i for i in range(8)]
    results = frame({"a": base, "b": [t / 1.25 for t in base], "c": [t / 1.001 for t in base]})
    assert speedup_cell(gain(results, "a", "a")) == "—"
    assert speedup_cell(gain(results, "a", "b")) == "×1.25 (95% interval ×1.25–×1.25; faster)"
    # not ×1.00; real but shown inside ±5%, in speedup_text's words
    assert speedup_cell(gain(results, "a", "c")) == "×1.001 (95% interval ×1.001–×1.001; faster, but by less than 5%)"
    assert "faster, but by less than 5%" in speedup_text(gain(results, "a", "c"))
    assert speedup_cell(None) == "not measured"


def test_a_fixed_round_comparison_prints_its_95_percent_interval_from_its_rounds():
    """Six rounds whose ratios are ×1.1, ×1.2, ×1.3, ×1.3, ×1.4, ×1.5: with 6 rounds the signed-rank
    test's P(W+ = 0) = 1/64 <= 0.025 < P(W+ <= 1) = 2/64, so the 95% Hodges-Lehmann interval runs
    from the smallest Walsh average to the largest, the smallest and largest ratio: ×1.10–×1.50 (at
    level 0.10 it would be the 3rd from each end, narrower). The sentence and the table cell both
    print it, and a table of comparisons gets it as a column."""
    ratios = [1.3, 1.1, 1.5, 1.2, 1.4, 1.3]
    base = [100.0 + 7 * i for i in range(6)]
    g = gain(frame({"a": base, "b": [t / r for t, r in zip(base, ratios)]}), "a", "b")
    assert speedup_text(g).startswith("×1.30 (IQR ×")
    assert speedup_text(g).endswith(" of 6 rounds; p = 0.031, faster; 95% interval ×1.10–×1.50)")
    assert speedup_cell(g) == "×1.30 (95% interval ×1.10–×1.50; faster)"
    assert speedup_table(pd.DataFrame([g])).splitlines()[2].endswith("| faster | 95% interval ×1.10–×1.50 |")
    five = gain(frame({"a": base[:5], "b": [t / r for t, r in zip(base[:5], ratios)]}), "a", "b")
    assert speedup_cell(five) == "×1.30 (too few rounds for an interval; undecided)"  # 1/32 > 0.025: none


def test_two_runs_of_one_variant_are_compared_over_the_same_first_rounds_and_apart_only_beyond_their_spread():
    """Notebook 03's default allocator against notebook 02's. N = 100: 02 ran 10 rounds, 03 ran 80 whose
    last 70 are slow (200 ms): over all 80, 03's median would be 200 and lie apart; over the first 10
    of each (1..10 ms against 2..11 ms: medians 5.5 and 6.5, IQRs 3.25–7.75 and 4.25–8.75) they
    overlap. N = 200: 02's rounds 100..109, 03's 1..10 over both's 10: 02's IQR (102.25–106.75)
    wholly above 03's (3.25–7.75): slower. Swapped: faster."""
    def rows(times_by_n):
        return pd.DataFrame([{"max_seqlen": n, "times_ms": ";".join(map(str, t))} for n, t in times_by_n.items()])

    first10 = [float(i) for i in range(1, 11)]
    nb02 = rows({100: first10, 200: [100.0 + i for i in range(10)]})
    nb03 = rows({100: [t + 1 for t in first10] + [200.0] * 70, 200: first10, 400: first10})  # 400: only 03's
    said = runs_apart_text(nb02, nb03, ("notebook 02", "this notebook"))
    assert said == (
        "The same variant in two runs, at N = 100, over the first 10 rounds of each: notebook 02 5.5 (3.2–7.8) ms, "
        "this notebook 6.5 (4.2–8.8) ms: within the rounds' spread (the IQRs overlap); at N = 200, over the first 10 "
        "rounds of each: notebook 02 104.5 (102.2–106.8) ms, this notebook 5.5 (3.2–7.8) ms: notebook 02 slower, its "
        "IQR wholly above. So the two runs lay apart by more than their rounds' spread where their IQRs do not overlap."
    )
    swapped = runs_apart_text(nb03, nb02, ("this notebook", "notebook 02"))
    assert "this notebook faster, its IQR wholly below" in swapped
    same = runs_apart_text(nb02.iloc[:1], nb03, ("notebook 02", "this notebook"))
    assert same.endswith("So the two runs lay within their rounds' spread of each other: no drift between them "
                         "shows beyond it.")  # fmt: skip
    assert runs_apart_text(nb02, rows({800: first10}), ("a", "b")) == ""  # no N both ran


def test_a_sequential_stop_before_the_rounds_both_ran_says_the_speed_up_over_all_of_them():
    """The reviews of issue 51 (claim 9: ×1.04 at look 20, ×1.01 over the 80 rounds both variants ran
    for other pairs). Known answers: ×1.25 in the first 10 rounds, then ×1.01 in 30 more: faster at
    look 10 (every round faster, p = 2/1024 < 0.0125), the median of all 40 ratios ×1.01, nearer ×1:
    said, with the caution. Later rounds at ×1.5 (median of 40 ×1.50, farther from ×1): the number, no
    caution. Only the 10 rounds run, an undecided pair judged at look 20 of 30 rounds run, a fixed-rounds
    one: nothing added."""
    base = [100.0 + i for i in range(40)]
    early = [t / 1.25 for t in base[:10]]
    g = compare_rounds(base, early + [t / 1.01 for t in base[10:]], looks=(10, 20, 40))
    assert (g["outcome"], g["rounds"], g["rounds_both"]) == (FASTER, 10, 40) and g["speedup_all"] == pytest.approx(1.01)
    assert speedup_text(g).endswith("95% sequential interval ×1.25–×1.25; ×1.01 over all 40 rounds both ran: a stop "
                                    "at an early look tends to overstate the size)")  # fmt: skip
    assert speedup_text(g).startswith("×1.25 (IQR ×1.25–×1.25 of 10 rounds, up to 40; p = 0.002 at level 0.0125, ")
    larger = compare_rounds(base, early + [t / 1.5 for t in base[10:]], looks=(10, 20, 40))
    assert larger["rounds"] == 10 and speedup_text(larger).endswith("×1.25–×1.25; ×1.50 over all 40 rounds both ran)")
    slower = compare_rounds(base, [t * 1.25 for t in base[:10]] + [t * 1.01 for t in base[10:]], looks=(10, 20, 40))
    assert speedup_text(slower).endswith("; ×0.99 over all 40 rounds both ran: a stop at an early look tends to "
                                         "overstate the size)")  # fmt: skip
    near = compare_rounds(base, [t / 1.02 for t in base[:10]] + [t / 1.015 for t in base[10:]], looks=(10, 20, 40))
    assert near["rounds"] == 10 and speedup_text(near).endswith("; ×1.01 over all 40 rounds both ran)")  # within 1%
    alone = compare_rounds(base[:10], early, looks=(10, 20, 40))  # the run ended at the look that stopped it
    assert alone["rounds_both"] == 10 and "over all" not in speedup_text(alone)
    wobbly = list(np.array(base[:30]) * np.random.default_rng(0).lognormal(0, 0.3, 30))  # not decided at look 20
    open_ = compare_rounds(base[:30], wobbly, looks=(10, 20, 40))
    assert (open_["outcome"], open_["rounds"], open_["rounds_both"]) == (UNDECIDED, 20, 30)
    assert "over all" not in speedup_text(open_)
    assert "over all" not in speedup_text(compare_rounds(base, early + base[10:]))  # fixed rounds: all of them


def test_the_host_probe_sentence_states_the_probe_of_its_rows_and_says_not_recorded_where_none_was():
    from tokgen.voice import host_probe_text

    head = "The host's probe loop (`tokgen.results.host_loops_ms`, median of 5 loops)"
    old = pd.DataFrame({"variant": ["a", "b"], "median_ms": [799.4, 360.9]})  # a CSV from before the probe
    not_recorded = f"{head} was not recorded for these rounds."
    assert host_probe_text(old) == not_recorded
    one = old.assign(host_probe_ms_before=6.98, host_probe_ms_after=6.714, host_probe_min_ms=6.5, host_probe_max_ms=7.2)
    assert host_probe_text(one) == (f"{head} took 6.98 ms before these rounds and 6.71 ms after, "
                                    "its single loops 6.50–7.20 ms; "
                                    "whether the rounds' times followed the host's speed is not measured.")  # fmt: skip
    # two comparisons (notebook 08: one per batch size): the range of each probe, the widest spread
    two = pd.concat([one, one.assign(host_probe_ms_before=3.021, host_probe_ms_after=3.4, host_probe_min_ms=2.9,
                                     host_probe_max_ms=3.6)])  # fmt: skip
    assert host_probe_text(two) == (f"{head} took 3.02–6.98 ms before these rounds and 3.40–6.71 ms after, "
                                    "its single loops 2.90–7.20 ms; "
                                    "whether the rounds' times followed the host's speed is not measured.")  # fmt: skip
    mixed = pd.concat([one, old.assign(variant=["c", "d"])])  # rows of an older run beside new ones
    assert host_probe_text(mixed) == (f"{head} took 6.98 ms before these rounds and 6.71 ms after, "
                                      "its single loops 6.50–7.20 ms; it was not recorded for 2 of these 4 rows; "
                                      "whether the rounds' times followed the host's speed is not "
                                      "measured.")  # fmt: skip
    assert host_probe_text(one.assign(host_probe_ms_after=float("nan"))) == not_recorded  # a probe cut short


def test_the_naive_loops_extra_reads_are_placed_by_elimination_and_said_to_be_inferred():
    from tokgen.voice import extra_reads_text

    reads = pd.Series({"naive": 2.0, "kv_dynamic": 1.0, "kv_static": 1.0})
    text = extra_reads_text(reads)
    assert text.startswith("`naive` reads 2.00 values per decode step with `.item()`, `kv_dynamic` 1.00. ")
    assert text.endswith(", so the naive loop's 1.00 extra reads per decode step come, by elimination, from "
                         "transformers' uncached forward (inferred: the profiler does not locate them).")  # fmt: skip
    for same in (1.0, 1.004, 0.5):  # no more reads (to the 2 decimals shown): no cause inferred
        assert extra_reads_text(reads.replace(2.0, same)).endswith("differ only in the cache.")


def test_the_pageable_copy_is_said_to_wait_only_where_the_named_rule_holds():
    """Notebook 11's run: pageable calls 10.34–12.1 ms against pinned 0.02–0.10 ms, a median of
    11.763 ms in 12.65 ms of queued work (93%): the rule holds. Overlapping calls, or a median under
    half the queued work, and it does not."""
    from tokgen.voice import copy_wait_text

    copies = pd.DataFrame({"copy_call_median_ms": [0.031, 11.763], "copy_call_min_ms": [0.02, 10.34],
                           "copy_call_max_ms": [0.10, 12.1], "gpu_work_and_copy_median_ms": [12.5, 12.65]},
                          index=pd.Index(["pinned", "pageable"], name="destination"))  # fmt: skip
    head = ("The queued work and the copy took 12.500 ms (pinned) and 12.650 ms (pageable); the `copy_` call "
            "itself kept the CPU 0.031 ms into pinned memory and 11.763 ms into pageable memory, "
            "93% of that run's queued work and copy")  # the share is of both (review rv22B N5)
    assert copy_wait_text(copies) == head + (
        ". Every pageable call took longer than every pinned one (pageable 10.340–12.100 ms, pinned 0.020–0.100 ms) "
        "and its median at least half that run's queued work and copy: the pageable copy waited for the GPU "
        "(inferred from these times, not traced).")  # fmt: skip
    overlap = copies.assign(copy_call_max_ms=[10.5, 12.1])  # one pinned call outlasted a pageable one
    assert "does not hold (pageable 10.340–12.100 ms, pinned 0.020–10.500 ms)" in copy_wait_text(overlap)
    short = copies.assign(gpu_work_and_copy_median_ms=[12.5, 24.0])  # 49% of the queued work: not waited
    assert "49% of that run's queued work and copy. The rule this page reads" in copy_wait_text(short)
    assert "waited for the GPU" not in copy_wait_text(overlap) + copy_wait_text(short)
    assert copy_wait_text(copies, cuda=False) == head + ". (On the CPU there is no queue: both return when done.)"


def test_each_variant_of_a_shared_first_rank_is_named_with_its_own_floor_numbers():
    """`b` and `c` tie for rank 1 (the rounds do not tell them apart), `a` is slower: each of `b` and `c`
    gets its own time and floor distance after its own name, the numbers never the other's."""
    base = [100.0 + 3 * i for i in range(10)]
    fast = [t / 2 for t in base]
    loose = [t * w for t, w in zip(fast, [1.08, 0.93, 1.07, 0.94, 1.09, 0.92, 1.06, 0.95, 1.1, 0.91])]
    results = frame({"a": base, "b": fast, "c": loose})
    ranked = ranking(results, "a")
    assert ranked["rank"].tolist() == [1, 1, 3]
    summary = pd.DataFrame([{"variant": v, **time_summary(t)} for v, t in (("a", base), ("b", fast), ("c", loose))])
    rows = summary.set_index("variant").assign(times_task_floor=[6.0, 3.0, 3.5], pct_of_own_floor=[10.0, 40.0, 30.0],
                                               kv_read="filled")  # fmt: skip
    said = first_rank_floors(ranked, rows)
    parts = dict(re.match(r"`(\w)` (.*)", p).groups() for p in said.rstrip(".").split("; "))
    assert set(parts) == {"b", "c"}  # rank 1 only, each named
    for v, x, pct in (("b", "3.00", "40"), ("c", "3.50", "30")):
        assert parts[v] == (f"takes {spread(rows.loc[v])} per generation, {x}× the task's floor and reaches {pct}% "
                            "of its own floor (its cache: filled)")  # fmt: skip
    no_time = first_rank_floors(ranked, rows[["times_task_floor"]].assign(times_task_floor=[6.0, 3.0, float("nan")]))
    assert no_time == "`b` takes 3.00× the task's floor; `c` is not set against the floor."
    assert first_rank_floors(ranked, rows.drop(index="c")).endswith("; `c` is not set against the floor.")


def test_the_leader_is_said_with_those_that_share_its_rank():
    """`b` and `c` share rank 1 above `a`: the leader is named as listed first of both; alone, as first."""
    base = [100.0 + 3 * i for i in range(10)]
    fast = [t / 2 for t in base]
    loose = [t * w for t, w in zip(fast, [1.08, 0.93, 1.07, 0.94, 1.09, 0.92, 1.06, 0.95, 1.1, 0.91])]
    ranked = ranking(frame({"a": base, "b": fast, "c": loose}), "a")
    assert first_of_text(ranked, "the decoders") == ("`b`, listed first of `b`, `c`, which share the first rank of "
                                                     "the decoders (by its point speed-up, which does not rank them)")
    alone = ranking(frame({"a": base, "b": fast}), "a")
    assert first_of_text(alone, "the decoders") == "`b`, ranked first of the decoders"


def test_a_paired_difference_is_said_with_its_median_iqr_p_and_signed_rank_interval():
    """For 1..8 the 95% Hodges-Lehmann interval runs from the 4th smallest to the 4th largest of the 36 Walsh
    averages: 2.0 to 7.0 (n = 8: the signed-rank critical value is 3)."""
    assert difference_interval(list(range(1, 9))) == (2.0, 7.0)
    assert difference_interval([5.0, 6.0, 7.0]) == (-math.inf, math.inf)  # too few rounds for a 95% interval
    shifted = difference_interval([x + 10 for x in range(1, 9)])
    assert shifted == (12.0, 17.0)
    said = difference_text(list(range(1, 9)))
    assert said == ("+4.5 µs (a real difference: IQR +2.8 to +6.2 µs of 8 rounds; p = 0.008; 95% interval +2.0 "
                    "to +7.0 µs)")
    few = difference_text([-3.0, -1.0, -2.0])
    assert few.startswith("−2.0 µs (not told apart from none: ") and few.endswith("too few rounds for a 95% interval)")
    across = difference_text([-2.0, 1.0, 3.0, -1.0, 2.0, 4.0, -3.0, 5.0])  # an interval that holds 0
    assert "(not told apart from none: " in across and "of 8 rounds" in across
    assert "of 1 round;" in difference_text([2.0])


def test_the_deferred_checks_syncs_are_said_as_deferred_minus_sync_or_as_not_counted():
    """Notebook 14, section 3, read from its 14_syncs table: each kind's difference, signed; a lost
    profiler session names the variant not counted and compares nothing."""
    from tokgen.voice import sync_difference_text

    kinds = ["local_scalar_dense", "stream_syncs"]
    audit = pd.DataFrame({"local_scalar_dense": [2.0, 3.0, 1.0, 1.0], "stream_syncs": [0.5, 3.0, 1.25, 1.0],
                          "counted": ["yes", "yes", "yes", "not counted: the profiler lost its session"]},
                         index=["generate() dynamic deferred", "generate() dynamic sync", "generate() static deferred",
                                "generate() static sync"])  # fmt: skip
    assert sync_difference_text(audit, "dynamic", kinds) == (
        "dynamic cache, deferred minus sync, per decode step: `.item()` reads −1.00, stream syncs −2.50")
    lost = sync_difference_text(audit, "static", kinds)
    assert lost == "static cache: not compared, generate() static sync not counted."


def test_the_issues_count_stands_beside_our_item_reads_and_the_flagged_syncs_come_second():
    """Issue #43089 counted `aten::_local_scalar_dense` calls (26 in 8 tokens): our like-for-like
    number is the `.item()` reads, not the sync debug mode's; both said as raw counts over their steps
    with three decimals per step (the audit table's 2.125, not "2.12"), and every setup difference
    listed with no cause named (review r10, rvB S1 and N6)."""
    import json

    from tokgen.voice import issue_syncs_text

    per = pd.DataFrame({"tokens": [32, 32], "local_scalar_dense": [99, 68], "sync_debug_warnings": [102, 71],
                        "transformers": "5.1.0", "params": json.dumps({"BATCH_SIZE": 4, "SIZE": "gpt2"})},
                       index=["generate() dynamic", "generate() static"])  # fmt: skip
    text = issue_syncs_text(per)
    assert text.startswith("* `generate()` here: 99 `.item()` reads in 32 steps (3.094 per step) with the "
                           "dynamic cache, 68 in 32 steps (2.125 per step) with the static cache "
                           "(`aten::_local_scalar_dense` calls, the count issue #43089 made); the issue counted 26 "
                           "in 8 tokens of one sequence, 8 steps (3.250 per step).")  # fmt: skip
    for difference in ("run length (32 steps here, the prefill's included, each one token per sequence; 8 in the "
                       "issue's profile)",
                       "batch (4 sequences here, 1 there)", "model (tokgen's `gpt2` here, a Llama of 1 layer",
                       "transformers (5.1.0 here, 5.0.0.dev0 there)",
                       "a custom StoppingCriteria, a custom LogitsProcessor and min_new_tokens=64"):  # fmt: skip
        assert difference in text
    assert "another model and an earlier transformers" not in text and "does not show" in text  # no cause named
    assert text.endswith("flagged 102 syncs in 32 steps (3.188 per step) with the dynamic cache and 71 "
                         "in 32 steps (2.219 per step) with the static cache.")  # fmt: skip
    assert "of them" not in issue_syncs_text(per.assign(local_scalar_dense=[128, 64]))
    assert "batch (not recorded here, 1 there)" in issue_syncs_text(per.drop(columns="params"))


def test_a_slice_rows_confinement_is_said_as_inferred_with_its_busy_time_ratio_and_the_rule_of_the_claims():
    """The summary of notebook 14 says how `confined` was inferred, with the same threshold as
    `tokgen.claims.deferred_stop_gains` (a busy time just above and just below CONFINED_RATIO × the
    whole GPU's falls on either side in both)."""
    from tokgen.claims import Tables, deferred_stop_gains
    from tokgen.voice import CONFINED_RATIO, confinement_text

    def rows(sms, cache, busy):
        t = [100.0, 101.0, 99.0, 102.0, 98.0, 100.0, 103.0, 97.0]
        times = ";".join(map(str, t))
        info = {"gpu_sms": sms, "transformers": "5.17.0", "gpu_busy_share": 0.5, "status": "ok", "times_ms": times,
                "median_ms": 100.0, "gpu_busy_ms": busy}  # fmt: skip
        return [{**info, "variant": f"generate() {cache} {check}"} for check in ("sync", "deferred")]

    table_ = pd.DataFrame([*rows("all", "dynamic", 20.0), *rows("all", "static", 20.0),
                           *rows("8", "dynamic", 20.0 * CONFINED_RATIO * 1.02),
                           *rows("8", "static", 20.0 * CONFINED_RATIO * 0.98)])  # fmt: skip
    d = deferred_stop_gains(Tables(None, cache={"14_deferred_stop": table_})).to_dict("records")
    assert [r["confined"] for r in d] == ["whole GPU", "whole GPU", True, False]
    said = [confinement_text(r, table_) for r in d]
    assert said[:2] == ["the whole GPU", "the whole GPU"]
    assert said[2] == "8 SMs (taken as confined: its GPU busy time 1.53× the whole GPU's, over 1.5×)"
    assert said[3] == ("8 SMs (**taken as not confined**: its GPU busy time stayed within 1.5× of the whole GPU's "
                       "(1.47×), so it is inferred to have run outside the slice; `slice_escapes` does not see CUDA "
                       "graph replays)")  # fmt: skip
    assert "ran on the whole GPU" not in " ".join(said)
    assert confinement_text({**d[3], "confined": float("nan")}, table_) == "8 SMs (confinement not measured)"


def test_the_knee_is_read_from_paired_slopes_and_a_slope_across_comparisons_is_said_not_paired():
    from tokgen.voice import knee_text

    slopes = pd.DataFrame({"batch_size": [16, 256, 512, 1024], "from": [1, 16, 256, 512],
                           "slope": [0.18, 0.02, 0.45, 0.62], "slope_q25": [float("nan"), float("nan"), 0.4, 0.55],
                           "slope_q75": [float("nan"), float("nan"), 0.5, 0.7], "rounds": [0, 0, 8, 8],
                           "paired": [False, False, True, True]})  # fmt: skip
    text = knee_text(slopes, 100)
    assert text.startswith("At N = 100 the eager step time starts to follow B between B = 512 and B = 1024, where the "
                           "slope first reaches 0.5: 0.62 (IQR 0.55–0.70 of 8 rounds). Slopes, from one B to the next: "
                           "B = 1→16: 0.18 (not paired); B = 16→256: 0.02 (not paired); B = 256→512: 0.45 (IQR "
                           "0.40–0.50 of 8 rounds); B = 512→1024: 0.62 (IQR 0.55–0.70 of 8 rounds). "
                           "Not paired: ")  # fmt: skip
    paired_only = knee_text(slopes[slopes["paired"]].assign(slope=[0.45, 0.49]), 100)
    assert "does not follow B up to B = 1024 (no slope reaches 0.5)" in paired_only and "Not paired" not in paired_only


def test_slope_reading_takes_a_side_only_where_the_whole_bootstrap_range_lies_on_it():
    """Review pre_00_05 M1: slope 1.52 with range 1.455–1.564 was read "nearer 2 than 1" from the
    point alone; the range holds 1.5, so the rounds do not decide which limit it lies nearer."""
    assert slope_reading(1.455, 1.564) == (
        "its range holds 1.5: these rounds do not decide whether it lies nearer 1 than 2 or nearer 2 than 1"
    )
    assert slope_reading(1.52, 1.58).startswith("nearer 2 than 1:")
    assert slope_reading(1.2, 1.45).startswith("nearer 1 than 2:")
    assert slope_reading(1.3, 1.95) == ("its range holds 1.5 and 1.9: these rounds do not decide whether it lies "
                                        "nearer 1 than 2, nearer 2 than 1 or near 2")  # fmt: skip
    # each end read as printed (two decimals), the bounds on the side the point reading had them
    assert slope_reading(1.0, 1.1004).startswith("near 1:") and slope_reading(1.1051, 1.2).startswith("nearer 1 than")
    assert slope_reading(1.4951, 1.8949).startswith("nearer 2 than 1:")
    assert slope_reading(1.8951, 2.1049).startswith("near 2:") and slope_reading(2.1051, 3).startswith("above 2")
    # review rvA17 S5: a range that holds 1.1 alone (or 1.9 alone) lies on one side of 1.5: that side is the answer
    assert slope_reading(1.05, 1.1051) == (
        "nearer 1 than 2: over these N the runtime grows more like N than like the positions' work (its range lies "
        "below 1.5); whether it lies near 1 (at most 1.1), these rounds do not decide")  # fmt: skip  (rr17a N6)
    assert slope_reading(1.8, 1.95) == (
        "nearer 2 than 1: over these N the runtime grows more like the positions' work than like N (its range lies at "
        "or above 1.5); whether it lies near 2 (within 0.1 of 2), these rounds do not decide")  # fmt: skip
    assert slope_reading(1.05, 1.5).startswith("its range holds 1.1 and 1.5:")  # across 1.5: no side


def _chain_rounds():
    """Four variants against a slow `a`, 10 rounds: `b` and `c` shown within ±5% of each other, `x`
    beats `c` for real (not shown within ±5%) but not `b` (undecided); `d` within ±5% of `c` only, beaten by `x`
    and `b`. Counting beaters alone gives `b` rank 1, `c` rank 2, `d` rank 3."""
    base = [100.0 + 3 * i for i in range(10)]
    c = [t / 2 for t in base]
    weights = {"x": [0.984, 0.976, 0.969, 0.991, 0.982, 0.918, 0.975, 0.909, 0.943, 0.94],
               "b": [0.971, 0.976, 0.998, 0.975, 0.996, 0.995, 0.982, 0.984, 0.995, 0.99],
               "d": [1.028, 1.018, 1.036, 1.033, 1.015, 1.039, 1.024, 1.031, 1.016, 1.008]}  # fmt: skip
    return {"a": base, "c": c, **{k: [t * w for t, w in zip(c, ws)] for k, ws in weights.items()}}


def test_a_band_chain_does_not_put_a_beaten_variant_in_the_rank_of_the_one_that_beats_it():
    """Review r10 (rvC S4, rvB S3) tied pairs shown within ±5% of each other, one pair after another; reviews
    rv19A S1 and rv19B S6: that chain put `c` and `d`, which `x` beats for real, in rank 1 beside `x`. Now `b`
    (undecided against `x`) keeps rank 1, and the band ties `c` and `d` at rank 2 (`d` through `c`): a shared
    rank holds no variant beaten by another of it."""
    results = frame(_chain_rounds())
    assert gain(results, "c", "b")["no_effect"] and gain(results, "d", "c")["no_effect"]  # the band's links
    assert not gain(results, "b", "d")["no_effect"]  # `b` and `d` are linked only through `c`
    assert gain(results, "c", "x")["outcome"] == FASTER and not gain(results, "c", "x")["no_effect"]
    assert gain(results, "b", "x")["outcome"] == UNDECIDED
    r = ranking(results, "a").set_index("variant")
    assert r["own_rank"].to_dict() == {"x": 1, "b": 1, "c": 2, "d": 3, "a": 5}
    assert r["rank"].to_dict() == {"x": 1, "b": 1, "c": 2, "d": 2, "a": 5}
    assert r.loc["c", "within_band_of"] == ["b", "d"] and list(r.loc["d", "beaten_by"]) == ["x", "b"]
    for name, row in r.iterrows():  # no variant shares the rank of, or ranks above, one that beats it
        assert all(r.loc[o, "rank"] < row["rank"] for o in row["beaten_by"]), name
    reason = tie_reason(r.loc["d", "vs_leader"])  # `c` leads rank 2; `d` is there through the band with it
    assert reason == ("shown to lie within ±5% of `c`, which shares the rank: variants inside each other's band are "
                      "tied; its own count alone would rank it 3")  # fmt: skip
    sentence = fastest_sentence(ranking(results, "a"))
    assert sentence.startswith("2 variants share rank 1 for the fastest variant: `x`, ")
    assert not first_tied(r.reset_index())
    assert sentence.endswith("Below rank 1: rank 2: `c`, `d`; rank 5: `a`.")


def test_a_band_chain_with_a_real_difference_at_its_ends_splits_where_the_beaten_one_joins(monkeypatch):
    """Review rv19A S1's chain, every pair a known outcome: `a` ≈ `b` and `b` ≈ `c` within ±5%, and `a`
    beats `c` for real. `c` must not share `a`'s rank: `a` and `b` share rank 1, `c` keeps its own count."""
    decided = {("a", "b"): "no effect", ("b", "c"): "no effect", ("c", "a"): FASTER}  # (x, y): y against x
    for names in (["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"]):  # the same ranks in any order
        r = ranked_from_outcomes(monkeypatch, decided, names)
        assert r["own_rank"].to_dict() == {"a": 1, "b": 1, "c": 2}
        assert r.loc[["a", "b", "c"], "rank"].tolist() == [1, 1, 2], names
        assert not r.loc["c", "tied"] and r.loc["a", "tied"]


def test_a_k_sweep_chain_parts_the_k_its_neighbours_beat(monkeypatch):
    """Review rv19B S6 (notebook 10's K sweep): K = 1, 2, 4 within ±5% of each other, K = 8 within ±5% of K = 1
    only, yet K = 2 and K = 4 beat it for real (not shown within ±5%). K = 8 shared rank 1 (the table's
    "3 (shared)"); now it has its own count, 3, and the others are tied at rank 1."""
    band = {("k1", "k2"): "no effect", ("k1", "k4"): "no effect", ("k2", "k4"): "no effect",
            ("k1", "k8"): "no effect", ("k8", "k2"): FASTER, ("k8", "k4"): FASTER}  # fmt: skip
    r = ranked_from_outcomes(monkeypatch, band, ["k1", "k2", "k4", "k8"])
    assert r["own_rank"].to_dict() == {"k1": 1, "k2": 1, "k4": 1, "k8": 3}
    assert r["rank"].to_dict() == {"k1": 1, "k2": 1, "k4": 1, "k8": 3}
    assert r.loc[["k1", "k2", "k4"], "tied"].all() and not r.loc["k8", "tied"]
    words = k_sweep_words(r.reset_index(), {"k1": 1, "k2": 2, "k4": 4, "k8": 8})  # review rr19f N2: why not tied
    assert words.endswith("; K = 8 is decidedly slower than K = 2 and 4 (really slower than each, and not shown "
                          "within ±5%), not tied with K = 1 though shown within ±5% of it: that would put it beside "
                          "K = 2 and 4, which beat it.")  # fmt: skip



def test_a_k_sweep_says_beats_only_for_a_k_that_beats_it_directly(monkeypatch):
    """Review rr20f S3: K = 1 beats K = 2, K = 2 beats K = 4, K = 4 beats K = 8, and K = 8 is shown within ±5%
    of K = 1. K = 1 beats K = 8 only through K = 2 and 4, so "K = 1, ranked as high, beats it" contradicted
    "shown within ±5% of it": the tie is refused because it would put K = 8 above K = 4, which beats it."""
    decided = {("k2", "k1"): FASTER, ("k4", "k2"): FASTER, ("k8", "k4"): FASTER, ("k1", "k8"): "no effect"}
    r = ranked_from_outcomes(monkeypatch, decided, ["k1", "k2", "k4", "k8"])
    assert r["rank"].to_dict() == {"k1": 1, "k2": 2, "k4": 3, "k8": 4}
    words = k_sweep_words(r.reset_index(), {"k1": 1, "k2": 2, "k4": 4, "k8": 8})
    assert words.endswith("; K = 8 is decidedly slower than K = 4 (really slower than it, and not shown within "
                          "±5%), not tied with K = 1 though shown within ±5% of it: that would put it above K = 4, "
                          "which beats it.")  # fmt: skip
    assert "K = 1, ranked as high" not in words and "K = 1 beats it" not in words

def test_an_undecided_pair_is_not_tied_by_the_band_rule():
    """`e` is undecided against `c` (beaten by `x`, so not tied with `b`: review rv19A S1), beaten by `x`
    and `b`: it keeps its own count, 3,
    and with `reasons` the sentence names what beat it, each comparison, and that the pairs are unadjusted."""
    rounds = _chain_rounds()
    del rounds["d"]
    weights = [1.04, 1.11, 0.97, 1.11, 1.0, 1.02, 1.09, 1.02, 1.04, 0.95]
    rounds["e"] = [t * w for t, w in zip(rounds["c"], weights)]
    results = frame(rounds)
    assert gain(results, "c", "e")["outcome"] == UNDECIDED and not gain(results, "c", "e")["no_effect"]
    ranked = ranking(results, "a")
    r = ranked.set_index("variant")
    assert r["rank"].to_dict() == {"x": 1, "b": 1, "c": 2, "e": 3, "a": 5} and not r.loc["e", "tied"]
    below = below_first_text(ranked, reasons=True)
    e = gain(results, "x", "e")
    assert below.startswith("Below rank 1: `c` has rank 2, beaten by `x` (really faster, not shown within ±5%)")
    assert (f" `e` has rank 3, beaten by `x` and `b` (really faster, not shown within ±5%): against `x` "
            f"{speedup_text(e)}; against `b` ") in below  # fmt: skip
    assert below.endswith("each pair tested at its own level (its look's, in a sequential run), not adjusted for "
                          "the number of pairs.")  # fmt: skip
    assert below_first_text(ranked) == "Below rank 1: rank 2: `c`; rank 3: `e`; rank 5: `a`."
    assert fastest_sentence(ranked, reasons=True).endswith(below)
    assert below_first_text(ranked[ranked["rank"] == 1]) == ""


def test_past_the_stop_names_the_rank_it_refers_to():
    """Review r10 rvB S3: "its rank" pointed at a rank the page never printed."""
    from tokgen.voice import past_the_stop

    base = [100.0 + 3 * i for i in range(10)]
    eager = ranking(frame({"kv_static": base, "article_pipelined": [t * 1.3 for t in base]}), "kv_static")
    same = frame({"compiled kv_static": base, "compiled article_pipelined": list(base)})
    ranks = {"eager": eager, "compiled": ranking(same, "compiled kv_static")}
    eos = pd.DataFrame([{"generator": "article_pipelined", "model": m, "trial": t, "extra_tokens": 1}
                        for m in ("eager", "compiled") for t in range(3)])  # fmt: skip
    assert past_the_stop(eos, ranks) == (
        "`article_pipelined` (eager, compiled) returns 1 token past the stop in every trial of the EOS check "
        "(section 2): its rank above (rank 2 of the 2 eager variants; rank 1 of the 2 compiled variants, shared) "
        "is that of a generator whose output is wrong, fast or not.")
    assert "rank 2 of the 2 eager" in past_the_stop(eos, {"eager": eager}) and "compiled variants" not in (
        past_the_stop(eos, {"eager": eager}))


def test_the_eos_sentence_is_read_from_the_eos_rows():
    """Notebook 07: the EOS id from the rows' parameters, the step from `naive_columns` (the prompt's column
    counted): 7 columns, 6 steps, the last step 5 counted from 0 as notebook 06 counts (review r10 rvB S4, rv19A N4)."""
    import json

    from tokgen.voice import eos_stop_text

    rows = pd.DataFrame({"naive_columns": [7, 7], "params": json.dumps({"EOS": 14007, "SIZE": "gpt2"})})
    assert eos_stop_text(rows) == ("EOS = token 14007: the naive generator stops after 6 steps: step 5 (counted "
                                   "from 0) is the first that emits it.")  # fmt: skip
    two = rows.assign(naive_columns=[7, 8])  # the stop moved between the trials
    assert "stops after 6 or 7 steps: step 5 or 6 (counted from 0)" in eos_stop_text(two)
    assert eos_stop_text(rows.drop(columns="params")).startswith("The EOS token (its id not recorded): ")


def test_the_micro_model_is_said_with_its_own_mlp_and_each_gpu_runs_busy_share():
    """Review r10 rvB S2 and N4: the micro model's MLP is GPT-2's 4 × hidden (64), not the issue's 16;
    each GPU run's busy share stands beside its ms per token, read by `bound_words`' rule."""
    from tokgen.model import gpt2_config
    from tokgen.voice import micro_model_text, micro_speed_text
    from tokgen.voice import micro_table as micro_table_text

    said = micro_model_text(gpt2_config("micro"), 1, 64)
    assert said.startswith("Micro model: a GPT-2 of 1 layer, hidden size 16, MLP 64, 1 attention head, vocabulary "
                           "256 (issue #43089: a Llama of 1 layer, hidden size 16, MLP 16") and said.endswith(
        "B = 1, 64 tokens per run.")  # fmt: skip
    cfg = gpt2_config("micro")
    cfg.n_inner = 16
    assert "MLP 16, 1 attention head" in micro_model_text(cfg, 1, 64)
    micro = pd.DataFrame([
        {"variant": "g", "device": "cpu", "ms_per_token": 0.63, "gpu_busy_share": float("nan")},
        {"variant": "g", "device": "cuda", "ms_per_token": 1.413, "gpu_busy_share": 0.066},
        {"variant": "h", "device": "cpu", "ms_per_token": 0.151, "gpu_busy_share": float("nan")},
        {"variant": "h", "device": "cuda", "ms_per_token": 0.079, "gpu_busy_share": 0.861},
        {"variant": "k", "device": "cpu", "ms_per_token": 0.2, "gpu_busy_share": float("nan")},
        {"variant": "k", "device": "cuda", "ms_per_token": 0.05, "gpu_busy_share": 0.95},
    ])  # fmt: skip
    lines = micro_table_text(micro).splitlines()
    assert lines[0] == ("| variant | ms per token, CPU | ms per token, GPU | GPU busy share of the GPU run | GPU run |")
    assert lines[2:] == ["| g | 0.630 | 1.413 | 0.066 | host-bound |",
                         "| h | 0.151 | 0.079 | 0.861 | mixed (host and GPU) |",
                         "| k | 0.200 | 0.050 | 0.950 | GPU-bound |"]  # fmt: skip
    assert micro_table_text(micro[micro["device"] == "cpu"]).splitlines()[0] == "| variant | ms per token, CPU |"
    text = micro_speed_text(micro)
    assert "`g` 0.630 on the CPU and 1.413 on the GPU (GPU busy 7% of it: host-bound)" in text
    assert "`h` 0.151 on the CPU and 0.079 on the GPU (GPU busy 86% of it: mixed)" in text
    assert "(GPU busy 95% of it: GPU-bound)." in text


def test_no_host_wait_names_the_rows_with_none_beyond_the_device_wide_syncs_of_every_row():
    from tokgen.voice import no_wait_text

    waits = ["local_scalar_dense", "event_syncs", "device_syncs"]
    per = pd.DataFrame({"local_scalar_dense": [0, 1, 0], "event_syncs": [0, 0, 2], "device_syncs": [1, 1, 1]},
                       index=["a", "b", "c"])  # fmt: skip
    assert no_wait_text(per, waits) == "* No host wait at all during the run (beyond the 1 device-wide sync every row "\
                                       "shows): `a`."
    assert no_wait_text(per.assign(device_syncs=0), waits) == "* No host wait at all during the run: `a`."
    assert no_wait_text(per.assign(local_scalar_dense=1), waits).endswith(": no generator.")



def _decided_outcome(decided, a, b):
    """A fake pair's outcome from `decided` ((a, b) -> outcome, read either way round), else undecided."""
    outcome, flip = decided.get((a, b)), decided.get((b, a))
    if flip is not None:
        outcome = {FASTER: SLOWER, "no effect": "no effect"}[flip]
    return outcome or UNDECIDED

def ranked_from_outcomes(monkeypatch, decided: dict, names: list[str], speedups: dict | None = None):
    """`ranking` of `names` against "naive" where every pair's outcome is known: `decided` maps (a, b) to
    b's outcome against a (FASTER: b beats a; "no effect"), the reverse pair is mirrored, any other pair
    is undecided; `speedups` against naive order the rows (default all 2.0)."""
    from tokgen import voice

    def fake_gain(results, a, b, **kwargs):
        if a == "naive":
            return {"variant": b, "vs": a, "speedup": (speedups or {}).get(b, 2.0), "outcome": FASTER}
        outcome = _decided_outcome(decided, a, b)
        return {"variant": b, "vs": a, "speedup": 1.0, "outcome": outcome, "no_effect": outcome == "no effect"}

    monkeypatch.setattr(voice, "gain", fake_gain)
    return voice.ranking(pd.DataFrame({"variant": ["naive", *names]}), "naive", names).set_index("variant")


def test_a_variant_never_ranks_below_one_it_beats(monkeypatch):
    """Review r10 (rrB M1): a variant never ranks below one it beats; review rr19f S1/S2: with own counts
    of direct wins, `x` and `y` beat `w`, `w` beats `l`, and `x`, `y` against `l` undecided gave `w` 3 and
    `l` 2. The count now takes wins through a chain: `x` and `y` beat `l` through `w`, so `l` has rank 4,
    below `w`, with no rule to lift `w`; the sentence names the wins through `w`. With the band, review
    r10's case (`e` beats `a`, `a` beats `c`, `c` within ±5% of `d`) does not lift `c` beside `e`."""
    decided = {("w", "x"): FASTER, ("w", "y"): FASTER, ("l", "w"): FASTER}  # (a, b): b beats a
    r = ranked_from_outcomes(monkeypatch, decided, ["x", "y", "w", "l"], {"x": 3.0, "y": 2.9, "l": 2.5, "w": 2.0})
    assert r["own_rank"].to_dict() == {"x": 1, "y": 1, "w": 3, "l": 4}
    assert r["rank"].to_dict() == {"x": 1, "y": 1, "w": 3, "l": 4}  # before: `l` 2 and `w` 2, shared
    assert list(r.loc["l", "beaten_by"]) == ["w"] and r.loc["l", "beaten_through"] == {"x": "w", "y": "w"}
    monkeypatch.setattr("tokgen.voice.speedup_text", lambda g: "×…")  # the outcomes alone are known here
    below = below_first_text(r.reset_index(), reasons=True)
    assert "`l` has rank 4, beaten by `w` (really faster, not shown within ±5%): against `w` " in below
    assert "; through `w`, also by `x` and `y`." in below
    assert below.endswith("The rule: rank = 1 + the number of variants shown faster (really faster, not shown "
                          "within ±5%), directly or through one shown faster (a beats b and b beats c: both count "
                          "against c); pairs shown within ±5% share the "
                          "better rank unless that puts one beside or above a variant shown faster than it; a "
                          "cycle of such wins shares one rank; each pair tested at its own level (its look's, in a "
                          "sequential run), not adjusted for the number of pairs.")  # fmt: skip
    decided = {("a", "e"): FASTER, ("c", "a"): FASTER, ("c", "e"): FASTER, ("c", "d"): "no effect"}  # b against a
    r = ranked_from_outcomes(monkeypatch, decided, ["a", "c", "d", "e"], {"e": 3.0, "d": 2.9, "c": 2.5, "a": 2.8})
    assert r["own_rank"].to_dict() == {"e": 1, "d": 1, "a": 2, "c": 3}
    assert r["rank"].to_dict() == {"e": 1, "d": 1, "a": 2, "c": 3}  # before rv19A S1: all four at rank 1
    for name, row in r.iterrows():  # no variant ranks below, or beside, one it beats
        assert all(r.loc[o, "rank"] < row["rank"] for o in row["beaten_by"]), name


def test_equal_direct_counts_do_not_put_a_beaten_variant_beside_the_one_that_beats_it(monkeypatch):
    """Review rr19f S1: `z` beats `x`, `x` beats `y`, `z` against `y` undecided. Counting direct wins gave `x`
    and `y` 2 each, so `y` shared rank 2 with `x`, which beats it, with no band pair involved. Counted
    through the chain, `y` has 3 (`z` through `x`)."""
    decided = {("x", "z"): FASTER, ("y", "x"): FASTER}  # (a, b): b beats a
    r = ranked_from_outcomes(monkeypatch, decided, ["z", "x", "y"], {"z": 3.0, "x": 2.5, "y": 2.0})
    assert r["rank"].to_dict() == {"z": 1, "x": 2, "y": 3} and not r["tied"].any()
    assert r.loc["y", "beaten_through"] == {"z": "x"}


def test_a_beat_cycle_shares_one_rank_and_says_it_is_a_cycle(monkeypatch):
    """Review rr19f S2/N3: `a` beats `b`, `b` beats `c`, `c` beats `a`: each is beaten by the other two through
    the cycle, so all three share a rank (no rule can order them), and the sentences say it is a cycle.
    Review rr20f S4: they share the better rank, 1 (a cycle's members count only the beaters outside it;
    they had 3, and no variant had rank 1). `d`, beaten by `a`, ranks below the whole cycle: 4."""
    decided = {("b", "a"): FASTER, ("c", "b"): FASTER, ("a", "c"): FASTER, ("d", "a"): FASTER}
    r = ranked_from_outcomes(monkeypatch, decided, ["a", "b", "c", "d"], {"a": 3.0, "b": 2.9, "c": 2.8, "d": 2.0})
    assert r["rank"].to_dict() == {"a": 1, "b": 1, "c": 1, "d": 4}
    assert r["own_rank"].to_dict() == {"a": 1, "b": 1, "c": 1, "d": 4}
    cycle = "`a` beats `b`, `b` beats `c`, `c` beats `a`"
    assert r.loc[["a", "b", "c"], "cycle"].tolist() == [cycle] * 3 and r.loc["d", "cycle"] == ""
    assert tie_reason(r.loc["b", "vs_leader"]) == (
        f"a cycle: {cycle}, so each is beaten through the others and they share a rank")
    monkeypatch.setattr("tokgen.voice.speedup_text", lambda g: "×…")  # the outcomes alone are known here
    sentence = fastest_sentence(r.reset_index())
    assert sentence.startswith("3 variants share rank 1 for the fastest variant: `a`, ")
    assert "`b`, against `a` " in sentence and f"(a cycle: {cycle}, so each is beaten" in sentence
    below = below_first_text(r.reset_index(), reasons=True)
    assert below.startswith("Below rank 1: `d` has rank 4, beaten by `a` (really faster, not shown within ±5%)")
    assert "; through `a`, also by `b` and `c`." in below


def test_a_band_pair_does_not_lift_a_member_of_a_beat_cycle_above_the_others(monkeypatch):
    """Review rr19f S2 (the guard counts a cycle's members as beaters): `a` beats `b`, `b` beats `c`, `c` beats
    `a`, and `d`, beaten by none, is within ±5% of `a`. Rank 1 with `d` would put `a` above `c`, which beats it
    (and `b`, which beats it through `c`). Review rr20f S4: the cycle shares the better rank, 1, beside `d`
    (rank 1 by its own count); `e`, beaten by `d` and within ±5% of `a`, is not lifted to the cycle's rank 1
    beside `d`: it has rank 2."""
    decided = {("b", "a"): FASTER, ("c", "b"): FASTER, ("a", "c"): FASTER, ("a", "d"): "no effect",
               ("e", "d"): FASTER, ("a", "e"): "no effect"}  # fmt: skip
    r = ranked_from_outcomes(monkeypatch, decided, ["a", "b", "c", "d", "e"])
    assert r["rank"].to_dict() == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 2}


def test_a_variant_that_beats_nobody_is_not_pulled_up_by_the_merges(monkeypatch):
    """Review r10 (rrC M1): `a` beats both `c` and `f`. Step 3 once lifted `a` into the ranks of those it beats;
    counting wins through a chain (review rr19f S2), `c` and `f` rank below `a` from the start: `z`, `e1` and
    `e2` beat them through `a`. `c` stays out of `d`'s rank 2 (within ±5% of `d`), which would put it above
    `a`, and `f`, which beats nobody and has no band link, keeps its count."""
    decided = {("e1", "z"): FASTER, ("e2", "z"): FASTER, ("a", "z"): FASTER, ("c", "z"): FASTER,
               ("d", "z"): FASTER, ("f", "z"): FASTER, ("a", "e1"): FASTER, ("a", "e2"): FASTER,
               ("c", "a"): FASTER, ("f", "a"): FASTER, ("c", "d"): "no effect"}  # b against a: b beats a
    r = ranked_from_outcomes(monkeypatch, decided, ["z", "e1", "e2", "a", "c", "d", "f"])
    assert r["own_rank"].to_dict() == {"z": 1, "e1": 2, "e2": 2, "a": 4, "c": 5, "d": 2, "f": 5}
    assert r["rank"].to_dict() == {"z": 1, "e1": 2, "e2": 2, "a": 4, "c": 5, "d": 2, "f": 5}
    assert r.loc["f", "within_band_of"] == [] and r.loc["c", "beaten_through"] == {"e1": "a", "e2": "a"}
    for name, row in r.iterrows():  # no variant at or above one that beats it
        assert all(r.loc[o, "rank"] < row["rank"] for o in row["beaten_by"]), name


def test_a_cycle_below_rank_1_is_named_a_cycle_in_the_short_sentence_and_the_k_sweep(monkeypatch):
    """Review rr20f S4(b): `z` beats `a`, and `a`, `b`, `c` beat each other in a cycle: they share rank 2
    (`z` beats each, through the cycle), and the sentence without reasons (notebooks 09, 10, 12) and the K
    sweep's words name the cycle."""
    decided = {("a", "z"): FASTER, ("b", "a"): FASTER, ("c", "b"): FASTER, ("a", "c"): FASTER}
    r = ranked_from_outcomes(monkeypatch, decided, ["z", "a", "b", "c"])
    assert r["rank"].to_dict() == {"z": 1, "a": 2, "b": 2, "c": 2}
    assert below_first_text(r.reset_index()) == (
        "Below rank 1: rank 2: `a`, `b`, `c` (a cycle: `a` beats `b`, `b` beats `c`, `c` beats `a`).")
    words = k_sweep_words(r.reset_index(), {"z": 1, "a": 2, "b": 4, "c": 8})
    assert "(a cycle: K = 2 beats K = 4, K = 4 beats K = 8, K = 8 beats K = 2)" in words
    assert words.count("a cycle") == 1  # said once, not for each of its Ks
    decided = {("b", "a"): FASTER, ("c", "b"): FASTER, ("a", "c"): FASTER}  # the cycle at the best rank
    r = ranked_from_outcomes(monkeypatch, decided, ["a", "b", "c"])
    words = k_sweep_words(r.reset_index(), {"a": 1, "b": 2, "c": 4})
    assert words.startswith("In words: K = 1, 2 and 4 share rank 1 of its 3 Ks, not all shown to lie within ±5% "
                            "of each other")  # fmt: skip
    assert "(a cycle: K = 1 beats K = 2, K = 2 beats K = 4, K = 4 beats K = 1)" in words


def test_a_band_join_is_refused_where_it_lifts_a_variant_beside_its_direct_beater(monkeypatch):
    """Review rr19f S3: `x` beats `m`, `m` beats `c`, `c` is within ±5% of `p`, and `p` is undecided against
    all. `p` (rank 1) would take `c` to rank 1 beside `m` (rank 2 would do), which beats `c` directly, and
    above it; the join is refused, and `c` keeps 3. (Review rr20f N1: `m` alone blocks it; a beater through
    a chain never blocks a join that no direct beater blocks, since each direct beater ranks below those
    that beat it.)"""
    decided = {("m", "x"): FASTER, ("c", "m"): FASTER, ("c", "p"): "no effect"}
    r = ranked_from_outcomes(monkeypatch, decided, ["x", "m", "c", "p"])
    assert r["rank"].to_dict() == {"x": 1, "m": 2, "c": 3, "p": 1}


def test_a_band_join_is_refused_where_a_beater_would_share_the_joined_rank(monkeypatch):
    """Review rr19f S3 (`best[o] >= rank`, not `>`): `b` beats `c`, `a` ≈ `c` within ±5%, `a` and `b` undecided.
    Joining `a` and `c` gives rank 1, the rank `b` has: `c` would sit beside `b`, which beats it."""
    decided = {("c", "b"): FASTER, ("a", "c"): "no effect"}
    r = ranked_from_outcomes(monkeypatch, decided, ["a", "b", "c"])
    assert r["rank"].to_dict() == {"a": 1, "b": 1, "c": 2}


def test_a_band_join_is_refused_where_it_puts_two_of_one_chain_in_one_rank(monkeypatch):
    """Review rr19f S3 (a beater inside the joined group): `a` ≈ `b`, `b` ≈ `c`, `a` beats `c`: the chain
    must not join `c` into `a`'s group; `b` joins `a`, and `c` keeps rank 2."""
    decided = {("a", "b"): "no effect", ("b", "c"): "no effect", ("c", "a"): FASTER}
    for names in (["a", "b", "c"], ["c", "b", "a"]):
        assert ranked_from_outcomes(monkeypatch, decided, names)["rank"].to_dict() == {"a": 1, "b": 1, "c": 2}


N1_CASE = {("b", "a"): FASTER, ("e", "a"): FASTER, ("f", "a"): FASTER, ("b", "d"): FASTER, ("c", "d"): FASTER,
           ("f", "d"): FASTER, ("e", "c"): FASTER, ("b", "c"): "no effect", ("b", "e"): "no effect",
           ("b", "f"): "no effect", ("e", "f"): "no effect"}  # fmt: skip
# review rr19f N1's decoded case (its rand.py, seed 1): (x, y): y against x


def test_the_ranks_do_not_depend_on_the_order_of_the_variants(monkeypatch):
    """Review rr19f N1: `f` is within ±5% of `b` (rank 2 with `c`) and of `e` (rank 3: `c` beats it); which
    join was made first followed the listing, so `f` ranked 2 or 3 by the order of `variants`. The join
    that gives the better rank goes first: `f` has rank 2 in any listing, and the pairs' order by name
    decides only between joins of the same ranks (`e`: 4, beaten by `a`, `c` and, through `c`, `d`)."""
    for names in ("abcdef", "acdebf", "fedcba"):  # fix19f: `f` 2 for the first listing, 3 for the second
        r = ranked_from_outcomes(monkeypatch, N1_CASE, list(names))
        assert r["rank"].to_dict() == {"a": 1, "b": 2, "c": 2, "d": 1, "e": 4, "f": 2}, names
        for name, row in r.iterrows():
            assert all(r.loc[o, "rank"] < row["rank"] for o in row["beaten_by"]), (names, name)


def test_the_band_join_that_gives_the_better_rank_goes_first(monkeypatch):
    """Review rr19f N1: `f` (3: `x` and `w` beat it) is within ±5% of `p` (2) and of `d` (3, beaten by `c` of
    rank 2). Joining `d` and `f` first (the first pair by name, or by this listing) ties them at 3, and then
    `p` cannot take them to 2 (`c`, which beats `d`, has 2); the better join goes first: `f` shares `p`'s
    rank 2 and `d` keeps 3, in either listing."""
    decided = {("p", "x"): FASTER, ("c", "x"): FASTER, ("d", "x"): FASTER, ("d", "c"): FASTER, ("f", "x"): FASTER,
               ("f", "w"): FASTER, ("f", "p"): "no effect", ("d", "f"): "no effect"}  # fmt: skip
    for names in ("dfxwpc", "xwcpfd"):
        r = ranked_from_outcomes(monkeypatch, decided, list(names))
        assert r["rank"].to_dict() == {"x": 1, "w": 1, "p": 2, "c": 2, "f": 2, "d": 3}, names


def test_a_rank_the_left_out_baseline_would_share_says_so():
    """Review rv19B N3: notebook 12 ranks notebook 10's run with naive left out (`baseline`), and printed
    "rank 19: `generate() dynamic`" where notebook 10's table, with naive ranked, has "19 (shared)". `b` and
    `naive` are undecided (the rounds wobble ±20%), both beaten by `a`: `b` has rank 2 alone, and the
    baseline, ranked by the same rule, would share it: said so in the table's rank and in the sentences."""
    base = [100.0 + i for i in range(12)]
    wobble = [1.2 if i % 2 else 0.8 for i in range(12)]
    results = frame({"naive": base, "a": [t / 2 for t in base], "b": [t * w for t, w in zip(base, wobble)]})
    assert gain(results, "naive", "b")["outcome"] == UNDECIDED
    ranked = ranking(results, "naive", baseline=True)
    r = ranked.set_index("variant")
    assert r.loc["b", "rank"] == 2 and not r.loc["b", "tied"] and r.loc["b", "shared_with"] == "naive"
    assert r.loc["a", "shared_with"] == ""
    assert [rank_text(row) for _, row in ranked.iterrows()] == ["1", "2 (shared with the baseline `naive`)",
                                                                "— (baseline)"]  # fmt: skip
    assert below_first_text(ranked) == "Below rank 1: rank 2 (shared with the baseline `naive`): `b`."
    assert below_first_text(ranked, reasons=True).startswith(
        "Below rank 1: `b` has rank 2, shared with the baseline `naive`, beaten by `a`")
    assert ranking(results, "naive").set_index("variant")["rank"].to_dict() == {"a": 1, "b": 2, "naive": 2}
    assert rank_text({"rank": 2, "tied": True, "shared_with": "naive"}) == "2 (shared, also with the baseline `naive`)"
    assert ranking(results, "naive", ["a", "naive"], baseline=True)["shared_with"].tolist() == ["", ""]
    short = frame({"naive": base[:6], "a": [t / 2 for t in base], "b": [t * w for t, w in zip(base, wobble)]})
    assert gain(short, "naive", "b")["rounds_both"] == 6 and gain(short, "a", "b")["rounds_both"] == 12
    assert ranking(short, "naive", baseline=True)["shared_with"].tolist() == ["", "", ""]  # review rr20f S1


def test_a_rank_the_baseline_would_share_only_through_its_own_band_join_is_not_said(monkeypatch):
    """Review rr20f S5: `a` and `c` undecided, both rank 1; `a` beats `base` and `b`, `c` beats `b`, and `b`
    is shown within ±5% of `base`. Without `base`, `b` has rank 3; with it, `base` has 2 and `b` joins it
    at 2. `b`'s rank, 3, is not the one `base` would take: no "shared with the baseline"."""
    from tokgen import voice

    decided = {("b", "a"): FASTER, ("b", "c"): FASTER, ("base", "a"): FASTER, ("base", "b"): "no effect"}

    def fake_gain(results, x, y, **kwargs):
        outcome = _decided_outcome(decided, x, y)
        return {"variant": y, "vs": x, "speedup": 1.0, "outcome": outcome, "no_effect": outcome == "no effect"}

    monkeypatch.setattr(voice, "gain", fake_gain)
    steps = voice._rank_steps(["a", "c", "b", "base"], {(x, y): fake_gain(None, x, y) for x in "a c b base".split()
                                                        for y in "a c b base".split() if x != y})  # fmt: skip
    assert steps["b"]["rank"] == steps["base"]["rank"] == 2  # with the baseline ranked, `b` joins it at 2
    r = voice.ranking(pd.DataFrame({"variant": ["base", "a", "c", "b"]}), "base", baseline=True).set_index("variant")
    assert r.loc["b", "rank"] == 3 and r["shared_with"].tolist() == ["", "", "", ""]


def test_notebook_00s_sentences_state_the_model_the_agreement_and_the_rounds_from_their_inputs():
    """Notebook 00's model size, agreement and rounds sentences are templates (review r10, S-b): the
    parameters in millions (one decimal) and the weights in MB of 10⁶ bytes, the generators counted, and
    the fewest rounds of a single test and of the first look."""
    from types import SimpleNamespace

    from tokgen.voice import all_agree_text, fewest_rounds_text, first_look_text, model_size_text

    cfg = SimpleNamespace(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024, eos_token_id=50256)
    assert model_size_text("gpt2", cfg, 124_439_808, 497_759_232, "cuda:0") == (
        "`gpt2`: 12 layers, 12 heads, hidden size 768, vocabulary 50257, 1024 positions; **124.4 M parameters = "
        "498 MB** of fp32 weights on `cuda:0`. BOS = EOS = token 50256.")  # fmt: skip
    assert all_agree_text(20, (4, 25)) == "All 20 generators returned the naive generator's (4, 25) tokens."
    assert fewest_rounds_text(6, 0.05, 0.02) == (
        "Real: p below the level (0.05 for a single test); no effect: the speed-up shown to lie within ±2%. With "
        "fixed rounds, tested once at 0.05, 6 rounds are the fewest that can make a difference real, and only if "
        "every round agrees.")  # fmt: skip
    assert first_look_text(0.00625, 9) == (
        "In the sequential design, the first look, at level 0.00625, needs at least 9 rounds, all agreeing: with a "
        "first look (`RUNS`) of fewer rounds, no comparison can stop there.")  # fmt: skip


def test_solution_00s_sentences_count_the_parameters_repeats_copies_and_stops():
    """Solution 00's exercise sentences (review r10, S-b): shares of known counts, the first repeat and
    the copies of a known token list, and the generators that stopped counted with `generate()`."""
    from tokgen.voice import model_share_text, repeats_text, same_stop_text

    assert model_share_text(400, 1000, (10, 30)) == (
        "GPT-2 small: 1,000 parameters; tiny: 400 (40.0% of it), of which 75% are the token embedding (10 × 30).")
    text = repeats_text([5, 7, 7, 3, 7, 7], 0.1234, 0.0456, True, at=10)
    assert text == ("3 distinct tokens among 6; the first repeat at position 2. At step 10 the logits have standard "
                    "deviation 0.123, and the best two differ by 0.046. 2 of 5 steps emit the token they were given; "
                    "output layer tied to the embedding: True.")  # fmt: skip
    assert "the first repeat at position None" in repeats_text([1, 2, 3], 1.0, 0.5, False)
    assert same_stop_text(14007, 8, 18, 20) == (  # 8 steps: the last, step 7 counted from 0, emits it (rv22A N3)
        "EOS = 14007 first appears at step 7 (counted from 0: the naive generator stops after 8 steps); all 19 "
        "generators (18 of the registry's 20, and `generate()`) stop there.")  # fmt: skip


def test_notebook_07s_counts_and_the_run_it_reads_are_templates():
    """Notebook 07's variant count and the run of notebook 06 it reads (review r10, rvB S4 left open):
    the variants are the sum of eager and compiled, one comparison is singular."""
    from tokgen.voice import rows_from_text, variants_text

    assert variants_text(8, 5, 12) == "13 variants: 8 eager, 5 compiled; 12 comparisons."
    assert variants_text(1, 1, 1) == "2 variants: 1 eager, 1 compiled; 1 comparison."
    assert rows_from_text("06", "commit abc1234, started 2026-01-02 03:04 UTC") == (
        "Notebook 06's rows: its run of commit abc1234, started 2026-01-02 03:04 UTC.")


def test_solution_07s_sentences_count_the_late_runs_the_race_the_copy_and_the_wasted_steps():
    """Solution 07's exercise sentences (review r10, rvB S4 left open): the runs with extra columns and
    their range, the race said as happened only where a run raced, and 2K − 1 from K."""
    from tokgen.voice import copy_return_text, race_text, unsynced_runs_text, wasted_steps_text

    assert unsynced_runs_text([0, 2, 0, 1], 7, 4, 24, "cuda") == (
        "B = 4, N = 24, compiled, on cuda: the naive generator stops after 7 steps; without the wait, 2 of 4 runs "
        "returned extra columns (from 0 to 2).")  # fmt: skip
    assert unsynced_runs_text([0, 0], 7, 4, 24, "cpu").endswith("the flag is never stale: run this on a GPU.")
    assert race_text([0, 2, 0, 1]).startswith("The race happened: 2 of 4 runs read the flag before its copy had "
                                              "landed and kept 1 to 2 steps past the stop.")  # fmt: skip
    quiet = race_text([0, 0, 0], 0.456, 5)
    assert quiet.startswith("The race is possible but not observed here: at the stop step, in each of 3 runs the "
                            "copy had landed")  # rv20A N2: only the stop step's flag can show a stale read
    assert "a stale flag at an earlier step reads False as the fresh one does" in quiet
    assert "busy 46% of a run (one profiled run's busy time over the median of 5 timed runs)" in quiet
    assert ("is not measured here, but notebook 06 measures, step by step under the profiler, whether the GPU still "
            "had work queued when the host issued the stop flag's copy") in quiet  # rvB15 S6: points to the measure
    assert copy_return_text("pageable", 49.876) == (
        "pageable: `copy_(non_blocking=True)` returned after 49.88 ms, the GPU busy (one call).")
    # review rv23B N1: how much GPU work was queued ahead of the copy, timed by CUDA events, and that each is one call
    assert copy_return_text("pageable", 25.334, 25.261) == (
        "pageable: `copy_(non_blocking=True)` returned after 25.33 ms, with 25.26 ms of GPU work queued ahead of it "
        "(CUDA events around the sleep; one call each).")  # fmt: skip
    assert copy_return_text("pinned", 0.11, math.nan) == copy_return_text("pinned", 0.11)  # not recorded: as before
    assert wasted_steps_text(4, 12, 8) == "K = 4: 12 steps computed, 8 returned: 4 wasted (at most 2K − 1 = 7)."


def test_a_percentage_never_rounds_onto_100_or_0_percent_unless_exact():
    """Review r11 (rvC NIT): claim 1's 399 of 400 resampled runs (0.9975) printed "100%"; a share reads
    100% or 0% only where it is exactly that, with as many more decimals as keep it off otherwise."""
    assert percent_text(399 / 400, 0.975) == "99.8%" and percent_text(399 / 400, 0.5) == "99.8%"
    assert percent_text(0.9996, 0.95) == "99.96%"  # "100.0%" is 100% too
    assert percent_text(1.0, 0.95) == "100%" and percent_text(0.0, 0.5) == "0%"  # exact: as they are
    assert percent_text(0.0004, 0.05) == "0.04%" and percent_text(0.004, 0.05, 1) == "0.4%"
    assert percent_text(0.9949, 0.5) == "99%"  # not 100% in whole percents: no more digits needed
    assert percent_text(1 - 1e-12, 0.5) == "just under 100%" and percent_text(1e-12, 0.5) == "just over 0%"


def test_a_sentence_about_some_variants_of_a_ranking_keeps_the_tables_ranks():
    """Review r11 (rvB S1): notebook 10 ranked its registry generators again on their own, and gave
    `compiled pipelined_static` rank 17 beside the table's 18. Known answers: `x` (×1.5, not named),
    `b` ×2, `c` ×1.2 against `a`; the table ranks b 1, x 2, c 3, a 4, and the sentence about a, b, c
    keeps those ranks and names what it leaves out."""
    base = [100.0 + i for i in range(8)]
    results = frame({"a": base, "x": [t / 1.5 for t in base], "b": [t / 2 for t in base],
                     "c": [t / 1.2 for t in base]})  # fmt: skip
    ranked = ranking(results, "a")
    assert ranked.set_index("variant")["rank"].to_dict() == {"b": 1, "x": 2, "c": 3, "a": 4}
    sentence = fastest_sentence(ranked, "generator", only=["a", "b", "c"])
    assert sentence.startswith("Fastest generator: `b`, ×2.00 (")
    assert sentence.endswith("Below rank 1: rank 3: `c`; rank 4: `a`. The ranks are those of all 4 variants ranked "
                             "together; not named here: `x`.")  # fmt: skip
    assert "rank 2" not in sentence  # a subset ranked on its own would give `c` rank 2
    assert fastest_sentence(ranked, "generator") == fastest_sentence(ranked, "generator", only=list("abcx"))
    # the best rank of those named is not 1: said with its rank, below it the rest
    lower = fastest_sentence(ranked, "generator", only=["a", "c", "x"])
    assert lower.startswith("Fastest generator, at rank 2: `x`, ×1.50 (")
    assert "Below rank 2: rank 3: `c`; rank 4: `a`." in lower and lower.endswith("not named here: `b`.")
    # a shared first rank whose first in the table is left out: each named one against that first, by name
    half = [t / 2 for t in base]
    tied = ranking(frame({"a": base, "x": half, "b": half, "c": half}), "a")
    assert tied["variant"].tolist()[:3] == ["x", "b", "c"] and set(tied["rank"][:3]) == {1}
    shared = fastest_sentence(tied, "generator", only=["a", "b", "c"])
    assert shared.startswith("Tied for the fastest generator (rank 1), 2 variants: `b`, ×2.00 (")
    assert "; `c`, against `x` ×1.00 (" in shared and "against `b`" not in shared
    floors = pd.DataFrame({"times_task_floor": [3.0]}, index=["x"])  # the best rank named here is 2: `x`'s
    assert first_rank_floors(ranked[ranked["variant"] != "b"], floors) == "`x` takes 3.00× the task's floor."


def test_a_comparison_decided_early_shows_its_speed_up_over_all_rounds_both_ran_in_the_table():
    """Review r11 (rvC S3): notebook 09's table gave the recipe ×2.50 (its first look, 10 rounds) and
    claim 10 on the same page ×2.33 over the 80 rounds both ran. Known answers: ×2 in the first 10 rounds,
    ×1.5 in the next 10: decided faster at look 10 (×2.00), ×1.75 over all 20 (the median of ten 2s and
    ten 1.5s), the number `speedup_text` adds too."""
    base = [100.0 + i for i in range(20)]
    early = compare_rounds(base, [t / 2 for t in base[:10]] + [t / 1.5 for t in base[10:]], looks=(10, 20))
    assert (early["rounds"], early["rounds_both"], early["speedup"]) == (10, 20, 2.0)
    assert early["speedup_all"] == pytest.approx(1.75)
    late = compare_rounds(base, [t * w for t, w in zip(base, [0.9, 1.1] * 10)], looks=(10, 20))  # to the cap
    assert (late["rounds"], late["rounds_both"], late["outcome"]) == (20, 20, UNDECIDED)
    rows = pd.DataFrame([early | {"variant": "b", "vs": "a"}, late | {"variant": "c", "vs": "a"},
                         compare_rounds(base, base, looks=(10, 20)) | {"variant": "a", "vs": "a"}])  # fmt: skip
    text = speedup_table(rows, legend=False)
    header, _, b, c, a = text.split("\n\n")[0].splitlines()
    assert header.endswith(f"| {ALL_ROUNDS} |") and b.endswith("| ×1.75 (20 rounds) |")
    assert c.endswith("|  |") and a.endswith("|  |")  # not stopped early; a base against itself
    assert "×1.75 over all 20 rounds both ran" in speedup_text(early)  # the same number in the sentence
    assert ALL_ROUNDS_NOTE in text and LEGEND not in text
    assert ALL_ROUNDS not in speedup_table(rows.iloc[1:]) and ALL_ROUNDS_NOTE not in speedup_table(rows.iloc[1:])


def test_notebook_10_and_09_templates_read_their_numbers_from_the_rows():
    """Review r11 (rvB S4, rvC S7): the sentences notebooks 09 and 10 built inline, now templates; the
    stops and EOS ids from the 10_device_stop rows, not from live variables."""
    assert measured_text("**GPU X**", 32, 100, [10, 80, 20]) == (
        "Measured on **GPU X**, batch size 32, 100 new tokens, 10–80 interleaved rounds per variant (more for "
        "variants in a comparison still undecided).")  # fmt: skip
    assert decoder_text(100, 4, 112, True, 100) == ("N = 100, K = 4: capacity 112 positions, one CUDA graph of 4 "
                                                    "steps; 100 tokens per row, the naive generator's.")  # fmt: skip
    assert "plain calls (no CUDA here)" in decoder_text(100, 4, 112, False, 100)
    timed = pd.DataFrame({"max_seqlen": [100] * 6, "steps_per_graph": [1, 2, 4, 8, 16, float("nan")]})
    assert steps_past_n_text(timed) == "N = 100: K = 8 computes 104 steps; K = 16 computes 112 steps."
    assert steps_past_n_text(timed.assign(max_seqlen=96)) == (
        "N = 96: every K here divides N, so no replay computes a step past N.")  # fmt: skip
    stops = pd.DataFrame({"generator": ["s", "s", "graph_stop_on_device"] * 2, "steps_per_graph": [1, 4, None] * 2,
                          "steps_run": [52] * 3 + [14] * 3, "eos_token_id": [8982] * 3 + [46581] * 3})  # fmt: skip
    assert device_stop_text(stops, "s") == ("`s` (the step the WHILE node runs) at K = 1, 4 against "
                                            "`graph_stop_on_device`; every row stops after 14 steps (EOS id 46581), "
                                            "52 steps (EOS id 8982).")  # fmt: skip
    on_cpu = device_stop_text(stops[stops["generator"] == "s"], "s")
    assert "against" not in on_cpu and on_cpu.endswith("after 14 steps (EOS id 46581), 52 steps (EOS id 8982).")
    base = [100.0 + i for i in range(8)]
    results = frame({"g K=1": base, "g K=4": [t / 1.2 for t in base], "g K=16": [t * 1.1 for t in base]})
    by_k = ranking(results, "g K=1")
    text = k_sweep_text("g", by_k, {"g K=1": 1, "g K=4": 4, "g K=16": 16.0})
    k4, k16 = (gain(results, "g K=1", v) for v in ("g K=4", "g K=16"))
    assert text == (f"* `g`: K = 1 rank 2 of its 3 Ks; K = 4 rank 1 of its 3 Ks, against K = 1 {speedup_text(k4)}; "
                    f"K = 16 rank 3 of its 3 Ks, against K = 1 {speedup_text(k16)}. In words: K = 4 alone has rank 1 "
                    "of its 3 Ks; K = 1 is decidedly slower than K = 4 (really slower than it, and not shown within "
                    "±5%); K = 16 is decidedly slower than K = 1 and 4 (really slower than each, and not shown within "
                    "±5%).")  # fmt: skip  (rvB12 N7; rvC14 S4; rvC15 S4)



def test_a_lone_first_rank_is_the_fastest_only_where_it_beats_every_other_variant():
    """Review pvA15 S2: rank 1 alone means only that nobody beats `X`. Known answers (12 rounds,
    review pvA15's seed 2664): `X` beats `Z` (×1.04), `Z` beats `Y` (×1.09), but the rounds do not tell
    `X` from `Y`, so `Y` ranks 2 through `Z` alone. Not "Fastest": the sentence names `Y` as not told
    apart from `X`. A lone first that beats every other stays "Fastest"."""
    rng = np.random.default_rng(2664)
    z = np.full(12, 100.0)
    lx, ly = rng.normal(-0.04, 0.05, 12), rng.normal(0.05, 0.10, 12)
    x, y, zz = z * np.exp(lx), z * np.exp(ly), z * np.exp(rng.normal(0, 0.005, 12))
    results = frame({"naive": list(z * 2), "X": list(x), "Y": list(y), "Z": list(zz)})
    assert [gain(results, a, b)["outcome"] for a, b in [("Z", "X"), ("Y", "Z"), ("Y", "X")]] == [
        "faster", "faster", "undecided"]  # fmt: skip
    ranked = ranking(results, "naive")
    assert ranked.set_index("variant")["rank"].to_dict() == {"X": 1, "Z": 2, "Y": 3, "naive": 4}  # `Y`: `X` through `Z`
    sentence = fastest_sentence(ranked)
    assert "Fastest" not in sentence and sentence.startswith("Rank 1 alone for the fastest variant: `X`, ×")
    assert "; no variant beats it, but the rounds do not show it faster than `Y` (rank 3) directly (only through " \
           "`Z`), so it is not shown to be the fastest. Below rank 1: rank 2: `Z`; rank 3: `Y`; rank 4: `naive`." \
           in sentence  # fmt: skip  (review rr20f S2: it beats `Y` through `Z` by the rule's own words)
    beats_all = ranking(results, "naive", ["naive", "X", "Z"])  # X beats Z and naive: the fastest
    assert fastest_sentence(beats_all).startswith("Fastest variant: `X`, ×")
    with_base = ranking(results, "naive", ["naive", "X", "Z"], baseline=True)  # a baseline is not ranked against
    assert fastest_sentence(with_base).startswith("Fastest variant: `X`, ×")


def test_a_first_not_shown_faster_than_the_baseline_is_not_called_the_fastest():
    """Review rr15c M1–M3, known answers. `A` and `B` run ×0.8 of `naive`'s speed every round (slower),
    `A` faster than `B` by 10%: ranked with `naive` as the baseline, `A` is first yet not "Fastest" (the
    baseline, unranked, is faster); with `only` leaving out the variants that beat it, "no variant named
    here beats it"; a table of the baseline alone keeps its row, and the sentence says nothing else ran."""
    base = [100.0 + i for i in range(12)]
    results = frame({"naive": base, "A": [t * 1.25 for t in base], "B": [t * 1.25 * 1.1 for t in base]})
    ranked = ranking(results, "naive", baseline=True)
    assert ranked["variant"].tolist() == ["A", "B", "naive"] and math.isnan(ranked["rank"].iloc[-1])
    sentence = fastest_sentence(ranked)
    assert "Fastest" not in sentence and sentence.startswith("Rank 1 alone for the fastest variant: `A`, ×0.80")
    assert "; no variant beats it, but the rounds do not show it faster than the baseline `naive`, so it is not " \
           "shown to be the fastest." in sentence  # fmt: skip
    twin = frame({"naive": base, "A": [t * 1.25 for t in base], "B": [t * 1.25 * 1.001 for t in base]})
    tied = fastest_sentence(ranking(twin, "naive", baseline=True))
    assert not tied.startswith("Tied for the fastest") and tied.startswith("2 variants share rank 1")
    assert "; the first is not shown faster than the baseline `naive`, so the rank does not show the fastest." in tied
    quick = frame({"naive": base, "A": [t / 1.2 for t in base], "B": [t / 1.1 for t in base]})
    only_b = fastest_sentence(ranking(quick, "naive"), only=["B"])
    assert only_b.startswith("Fastest variant, at rank 2: `B`")  # beats the one named besides it: none
    rng = np.random.default_rng(2664)  # review pvA15's case: X beats Z, Z beats Y, X and Y undecided; H beats all
    z = np.full(12, 100.0)
    lx, ly = rng.normal(-0.04, 0.05, 12), rng.normal(0.05, 0.10, 12)
    x, y, zz = z * np.exp(lx), z * np.exp(ly), z * np.exp(rng.normal(0, 0.005, 12))
    four = frame({"naive": list(z * 2), "H": list(z / 2), "X": list(x), "Y": list(y), "Z": list(zz)})
    named = fastest_sentence(ranking(four, "naive"), only=["X", "Y"])  # X alone at rank 2, beaten by H, unnamed
    assert named.startswith("Rank 2 alone for the fastest variant: `X`")
    assert "; no variant named here beats it, but the rounds do not show it faster than `Y`" in named
    alone = ranking(frame({"naive": base}), "naive", baseline=True)
    assert alone["variant"].tolist() == ["naive"] and rank_text(alone.iloc[0]) == "— (baseline)"
    assert fastest_sentence(alone) == "No variant was timed besides the baseline `naive`."


def test_two_runs_text_sets_both_runs_medians_busy_times_and_host_probes_side_by_side():
    """Review rvC16 S1: notebook 10's naive ran slower than notebook 07's with the same GPU busy time, and the
    probe said the host was slower before notebook 10's rounds; the README said only "(two runs)"."""
    from tokgen.voice import PROBE, two_runs_text

    def run(medians, busy, before, after):
        return pd.DataFrame({"median_ms": medians, "gpu_busy_ms": busy, "host_probe_ms_before": before,
                             "host_probe_ms_after": after}, index=["naive", "recipe", "other"][:len(medians)])

    ten, seven = run([931.6, 442.9], [452.0, 107.1], 6.089, 3.594), run([702.7, 311.4, 1.0], [452.5, 106.8, 1.0],
                                                                          3.589, 3.677)  # fmt: skip
    said = two_runs_text({"notebook 10's": ten, "notebook 07's": seven}, ["naive", "recipe", "other", "absent"])
    assert said == ("Two runs, set side by side, not one measurement refined: median per generation in notebook 10's "
                    "run against notebook 07's: `naive` 931.6 ms against 702.7 ms, the GPU busy 452.0 against 452.5 "
                    "ms; `recipe` 442.9 ms against 311.4 ms, the GPU busy 107.1 against 106.8 ms. The host's probe "
                    f"loop ({PROBE}) took 6.09 ms before notebook 10's rounds and 3.59 ms before notebook 07's "
                    "(3.59 ms and 3.68 ms after); whether the rounds' times followed the host's speed is not "
                    "measured.")  # fmt: skip
    unprobed = seven.drop(columns=["host_probe_ms_before"])
    assert "took 6.09 ms before a rounds and not recorded before b (" in two_runs_text({"a": ten, "b": unprobed},
                                                                                       ["naive"])  # fmt: skip
    assert two_runs_text({"a": ten, "b": seven}, ["other"]) == ""  # in one run only


def test_below_first_text_keeps_the_tables_shared_mark_where_the_partner_is_left_out():
    """Review rvC16 N2: notebook 10 names only registry generators, so naive's "19 (shared)" (with the left-out
    `generate() dynamic`) read "rank 19: `naive`"; a rank alone in its table stays bare."""
    ranked = pd.DataFrame({"variant": ["a", "b", "c", "d"], "rank": [1, 3, 3, 5], "tied": [False, True, True, True]})
    assert below_first_text(ranked) == "Below rank 1: rank 3: `b`, `c`; rank 5 (shared): `d`."
    assert below_first_text(ranked.assign(tied=False)) == "Below rank 1: rank 3: `b`, `c`; rank 5: `d`."
    assert below_first_text(ranked.drop(columns="tied")).endswith("rank 5: `d`.")


def test_a_lone_first_names_the_variants_it_is_not_shown_faster_than_as_a_list(monkeypatch):
    """Review rr20f N3 and S2: `x` beats `z`, `z` beats `y` and `w`, `x` against `y` and `w` undecided. The
    names are joined as a sentence lists them ("… and …", not "…, …"), each with the variant through which
    `x` beats it."""
    decided = {("z", "x"): FASTER, ("y", "z"): FASTER, ("w", "z"): FASTER}  # (a, b): b beats a
    r = ranked_from_outcomes(monkeypatch, decided, ["x", "z", "y", "w"], {"x": 3.0, "z": 2.5, "y": 2.2, "w": 2.0})
    monkeypatch.setattr("tokgen.voice.speedup_text", lambda g: "×…")  # the outcomes alone are known here
    assert fastest_sentence(r.reset_index()).startswith(
        "Rank 1 alone for the fastest variant: `x`, ×… against `naive`; no variant beats it, but the rounds do not "
        "show it faster than `y` (rank 3, shared) directly (only through `z`) and `w` (rank 3, shared) directly "
        "(only through `z`), so it is not shown to be the fastest.")  # fmt: skip


def test_a_lone_first_beating_one_through_a_longer_chain_names_every_link(monkeypatch):
    """Review rr20k N7: `x` beats `a`, `a` beats `b`, `b` beats `c`, `x` against `b` and `c` undecided. `x` beats
    `c` only through `a` and then `b`: naming `b` alone would read as if `x` beat `b` directly."""
    decided = {("a", "x"): FASTER, ("b", "a"): FASTER, ("c", "b"): FASTER}  # (a, b): b beats a
    r = ranked_from_outcomes(monkeypatch, decided, ["x", "a", "b", "c"], {"x": 3.0, "a": 2.5, "b": 2.2, "c": 2.0})
    monkeypatch.setattr("tokgen.voice.speedup_text", lambda g: "×…")
    said = fastest_sentence(r.reset_index())
    assert "`b` (rank 3) directly (only through `a`) and `c` (rank 4) directly (only through a chain: `a`, then " \
           "`b`), so it is not shown to be the fastest." in said  # fmt: skip


def test_findings_put_a_real_difference_shown_within_the_band_under_its_own_tied_head():
    """Review rv23B S2: notebook 07's summary listed `compiled kv_static_no_check` against `compiled kv_static` ×1.04
    (real, and shown within ±5%) under "Faster, for real", while its ranking and claims 7 and 9 tie it."""

    def g(variant, outcome, speedup, no_effect):
        return {"variant": variant, "vs": "kv_static", "speedup": speedup, "speedup_q25": speedup,
                "speedup_q75": speedup, "p_value": 0.01, "outcome": outcome, "rounds": 40, "real": True,
                "no_effect": no_effect, "interval_low": speedup - 0.01, "interval_high": speedup + 0.01}  # fmt: skip

    fast_tie, slow_tie = g("no_check", FASTER, 1.04, True), g("one_stream", SLOWER, 0.97, True)
    fast, slow = g("fast", FASTER, 1.5, False), g("slow", SLOWER, 0.6, False)
    none = g("same", NO_EFFECT, 1.0, True) | {"real": False, "p_value": 0.6}
    said = lambda r: f"`{r['variant']}` against `kv_static` {speedup_text(r)}"  # noqa: E731
    text = findings_text([fast_tie, slow, none, fast, slow_tie])
    assert text.splitlines() == [
        f"- **Faster, for real:** {said(fast)}.",
        f"- **Slower, for real:** {said(slow)}.",
        f"- **Real, but within ±5% (tied):** {said(fast_tie)}; {said(slow_tie)}.",
        f"- **No effect (within ±5%):** {said(none)}.",
    ]
    assert findings_text([fast_tie]) == f"- **Real, but within ±5% (tied):** {said(fast_tie)}."
    # a frame whose rows lack `no_effect` (NaN) reads as before: under its outcome
    bare = {k: v for k, v in fast.items() if k != "no_effect"}
    assert findings_text(pd.DataFrame([bare, fast_tie])).splitlines()[0].startswith("- **Faster, for real:** `fast`")


def _cmp(vs, variant, outcome, speedup, low, high, no_effect=False):
    """A `gain` row with known outcome and interval (fixed rounds: a 95% interval)."""
    return {"vs": vs, "variant": variant, "outcome": outcome, "speedup": speedup, "speedup_q25": speedup,
            "speedup_q75": speedup, "p_value": 0.01, "rounds": 20, "real": outcome in (FASTER, SLOWER),
            "no_effect": no_effect, "interval_low": low, "interval_high": high}  # fmt: skip


def test_pipelining_findings_say_what_the_run_found_in_words_host_bound_and_gpu_bound():
    """Review rv23B S3: notebook 07's summary listed 13 statistics and said nothing in words. Per model: pipelining
    against the synchronous loop, whether skipping the check gained more than ±5% (the bound on what hiding it can
    gain), the step's bound, and one stream against two; each from its outcome, so a GPU-bound slice where
    pipelining pays reads right too."""
    from tokgen.voice import pipelining_findings

    c = "compiled "
    host = pipelining_findings(
        [_cmp("kv_static", "pipelined_static", SLOWER, 0.97, 0.92, 0.99),
         _cmp(c + "kv_static", c + "pipelined_static", SLOWER, 0.95, 0.92, 0.97)],
        pd.DataFrame([_cmp("pipelined_static", "kv_static_no_check", FASTER, 1.04, 1.01, 1.07),
                      _cmp("pipelined_static", "pipelined_static_1stream", NO_EFFECT, 1.02, 0.99, 1.04, True),
                      _cmp(c + "pipelined_static", c + "pipelined_static_1stream", NO_EFFECT, 1.03, 0.998, 1.04, True),
                      _cmp(c + "pipelined_static", c + "kv_static_no_check", FASTER, 1.08, 1.04, 1.10)]),
        [_cmp("kv_static", "kv_static_no_check", NO_EFFECT, 1.02, 0.98, 1.04, True),
         _cmp(c + "kv_static", c + "kv_static_no_check", FASTER, 1.04, 1.001, 1.049, True)],
        {"eager": 0.30, "compiled": 0.42},
    )  # fmt: skip
    eager, compiled = host.splitlines()
    assert eager == (
        "- **Eager** (a synchronous step kept the GPU busy 30% of its wall time: host-bound): pipelining did not pay: "
        "`pipelined_static` was slower than the synchronous `kv_static`, for real (×0.97). Skipping the check "
        "altogether gained less than 5% (×1.02: no effect, shown within ±5%), which bounds what hiding the check could "
        "gain here, while the host sets the pace. One stream was shown within ±5% of two (×1.02), so the no-check "
        "generator's gain over the pipelined loop is not shown to come from the second stream."
    )
    assert compiled.startswith("- **Compiled** (a synchronous step kept the GPU busy 42% of its wall time: host-bound)"
                               ": pipelining did not pay: `compiled pipelined_static` was slower")  # fmt: skip
    assert ("gained less than 5% (×1.04: a real difference, but shown within ±5%), which bounds what hiding the check "
            "could gain here, while the host sets the pace") in compiled  # fmt: skip
    gpu = pipelining_findings(
        [_cmp(c + "kv_static", c + "pipelined_static", FASTER, 1.07, 1.06, 1.08)],
        [_cmp(c + "pipelined_static", c + "pipelined_static_1stream", FASTER, 1.10, 1.07, 1.12)],
        [_cmp(c + "kv_static", c + "kv_static_no_check", FASTER, 1.07, 1.06, 1.08)],
        {"eager": math.nan, "compiled": 0.92},
    )
    eager, compiled = gpu.splitlines()
    assert eager == (
        "- **Eager** (the GPU's share of a step was not measured): `pipelined_static` against the synchronous "
        "`kv_static` was not measured. Skipping the check altogether was not measured, so nothing bounds what hiding "
        "it could gain."
    )
    assert compiled == (
        "- **Compiled** (a synchronous step kept the GPU busy 92% of its wall time: GPU-bound): pipelining paid: "
        "`compiled pipelined_static` was faster than the synchronous `compiled kv_static`, for real (×1.07). Skipping "
        "the check altogether gained more than 5% (×1.07; its 95% interval ×1.06–×1.08 lies above ×1.05): room that "
        "hiding the check could take back here, while the GPU sets the pace. One stream was faster than two, for real "
        "(×1.10): the second stream cost something here."
    )
    # the outcomes between: a tie, no effect, undecided with a gain ruled out, real but not shown beyond the band
    one = lambda piped, room: pipelining_findings([piped], [], [room], {"eager": 0.6})  # noqa: E731
    said = one(_cmp("kv_static", "pipelined_static", FASTER, 1.03, 1.01, 1.04, True),
               _cmp("kv_static", "kv_static_no_check", UNDECIDED, 1.0, 0.96, 1.03))  # fmt: skip
    assert "wall time: mixed): pipelining neither paid nor cost beyond ±5%: `pipelined_static` was faster" in said
    assert ("gained no more than 5% (undecided, ×1.00, but a gain beyond 5% is ruled out), which bounds what hiding "
            "the check could gain here.") in said  # fmt: skip
    said = one(_cmp("kv_static", "pipelined_static", UNDECIDED, 1.0, 0.9, 1.1),
               _cmp("kv_static", "kv_static_no_check", FASTER, 1.08, 1.02, 1.12))  # fmt: skip
    assert "these rounds do not tell whether `pipelined_static` was faster or slower than the synchronous" in said
    assert "was faster, for real (×1.08), but whether by more than 5% these rounds do not show." in said


def test_pipelining_findings_call_no_slowdown_or_tie_a_gain():
    """Review rr23b N1-N4: a slower or tied no-check row was called the no-check generator's "gain" under one
    stream against two; a no-check row below ×1 "gained less than 5%"; a no-effect pipelining row "made no
    difference" (only ±5% is shown); and the header nested "(… mixed (host and GPU)): …"."""
    from tokgen.voice import pipelining_findings

    one_stream = _cmp("pipelined_static", "pipelined_static_1stream", NO_EFFECT, 1.02, 0.99, 1.04, True)

    def said(floor, room=None, piped=None):
        piped = piped or _cmp("kv_static", "pipelined_static", FASTER, 1.08, 1.04, 1.12)
        room = room or _cmp("kv_static", "kv_static_no_check", FASTER, 1.08, 1.04, 1.12)
        return pipelining_findings([piped], [one_stream, floor], [room], {"eager": 0.87}).splitlines()[0]

    gain_ = _cmp("pipelined_static", "kv_static_no_check", FASTER, 1.06, 1.03, 1.09)
    slower = _cmp("pipelined_static", "kv_static_no_check", SLOWER, 0.94, 0.91, 0.97)
    tied = _cmp("pipelined_static", "kv_static_no_check", FASTER, 1.001, 1.0002, 1.002, True)
    assert said(gain_).endswith("One stream was shown within ±5% of two (×1.02), so the no-check generator's gain "
                                "over the pipelined loop is not shown to come from the second stream.")  # fmt: skip
    for floor in (slower, tied):  # no gain beyond ±5% to attribute to the second stream
        assert said(floor).endswith("One stream was shown within ±5% of two (×1.02).")
    assert said(gain_).startswith("- **Eager** (a synchronous step kept the GPU busy 87% of its wall time: mixed): "
                                  "pipelining paid")  # fmt: skip
    below = _cmp("kv_static", "kv_static_no_check", SLOWER, 0.97, 0.96, 0.98, True)
    assert ("Skipping the check altogether stayed within ±5% of the synchronous loop (×0.97: a real difference, but "
            "shown within ±5%), which bounds") in said(gain_, room=below)  # fmt: skip
    flat = _cmp("kv_static", "kv_static_no_check", NO_EFFECT, 0.99, 0.97, 1.01, True)
    assert "Skipping the check altogether stayed within ±5% of the synchronous loop (×0.99: no effect, shown" in said(
        gain_, room=flat)
    assert "gained less than 5% (×1.02: no effect" in said(
        gain_, room=_cmp("kv_static", "kv_static_no_check", NO_EFFECT, 1.02, 0.99, 1.04, True))
    none_ = _cmp("kv_static", "pipelined_static", NO_EFFECT, 1.01, 0.98, 1.03, True)
    assert ("pipelining made no difference beyond ±5%: `pipelined_static` was shown within ±5% of the synchronous "
            "`kv_static` (×1.01)") in said(gain_, piped=none_)  # fmt: skip


def test_sync_shares_read_the_synchronous_steps_share_as_the_quick_page_does():
    from pathlib import Path

    from tokgen import load
    from tokgen.voice import sync_shares
    from tokgen_tools.quick import gpu_shares

    results = load("07_pipelining", Path(__file__).resolve().parents[1])
    assert sync_shares(results[results["status"] == "ok"]) == gpu_shares(results)
    assert all(s != s for s in sync_shares(results.drop(columns="gpu_busy_share")).values())


def test_the_line_under_notebook_07s_figure_names_the_pairs_the_design_did_not_follow():
    """Review rv23B N4: the figure drew naive and kv_dynamic against kv_static (kv_dynamic ×1.14, interval
    ×1.04–×1.19), pairs the design never followed, with no word about them or about the faster eager cache."""
    from tokgen.voice import unfollowed_pairs_text

    def row(variant, speedup, low, high, vs="kv_static"):
        return {"variant": variant, "vs": vs, "speedup": speedup, "low": low, "high": high}

    followed = [("kv_static", "pipelined_static"), ("naive", "compiled pipelined_static", (2.5, 4.0))]
    drawn = pd.DataFrame([row("naive", 0.80, 0.68, 0.92), row("kv_dynamic", 1.14, 1.04, 1.19),
                          row("pipelined_static", 0.97, 0.92, 0.99)])  # fmt: skip
    assert unfollowed_pairs_text(drawn, followed) == (
        "The figure also draws pairs the design did not follow: `naive`, `kv_dynamic` against `kv_static`. Their dots "
        "and bars are read at the same looks, fixed in advance, over the rounds both variants ran; no verdict here "
        "rests on them. Eager, `kv_dynamic` against `kv_static` ×1.14, 95% sequential interval ×1.04–×1.19: the "
        "dynamic cache was the faster eager cache here (claim 4 compares the two caches in notebook 04)."
    )  # rr23b N5: the interval named as every other on the page
    slower = unfollowed_pairs_text(pd.DataFrame([row("kv_dynamic", 0.9, 0.85, 0.95)]), followed)
    assert slower.endswith("×0.90, 95% sequential interval ×0.85–×0.95: the static cache was the faster eager cache "
                           "here (claim 4 compares the two caches in notebook 04).")  # fmt: skip
    sm8 = unfollowed_pairs_text(pd.DataFrame([row("kv_dynamic", 1.08, 0.9998, 1.14)]), followed)  # rr23b N5: sm8's
    assert sm8.endswith("×1.08, 95% sequential interval ×0.9998–×1.14: these rounds do not tell which eager cache was "
                        "the faster (claim 4 compares the two caches in notebook 04).")  # fmt: skip
    sm8_slow = unfollowed_pairs_text(pd.DataFrame([row("kv_dynamic", 0.95, 0.9, 1.0002)]), followed)
    assert "these rounds do not tell which eager cache was the faster" in sm8_slow
    open_ = unfollowed_pairs_text(pd.DataFrame([row("kv_dynamic", 1.0, 0.97, 1.03)]), followed)
    assert "these rounds do not tell which eager cache was the faster" in open_
    assert "cache" not in unfollowed_pairs_text(pd.DataFrame([row("naive", 0.8, 0.7, 0.9)]), followed)
    assert unfollowed_pairs_text(drawn.iloc[2:], followed) == ""  # every pair drawn was followed
