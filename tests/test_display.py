"""The reader-facing helpers of notebooks 00-08: tables and sentences read from result rows."""

import pandas as pd

import tokgen
from tokgen import display


def rows(times: dict[str, list[float]], **extra) -> pd.DataFrame:
    """Result rows as `tokgen.compare` writes them, from per-round times."""
    out = []
    for name, t in times.items():
        s = sorted(t)
        out.append({"variant": name, "times_ms": ";".join(map(str, t)), "median_ms": s[len(s) // 2], **extra})
    return pd.DataFrame(out)


def test_every_registry_entry_has_a_one_line_description():
    assert set(tokgen.registry.DESCRIPTIONS) == set(tokgen.GENERATORS)
    for notebook, text in tokgen.registry.DESCRIPTIONS.values():
        assert notebook.isdigit() and len(notebook) == 2 and "\n" not in text
    assert "no K" in tokgen.registry.DESCRIPTIONS["graph_stop_on_device"][1]


def test_table_digits_per_column_and_empty_cells():
    df = pd.DataFrame({"a": [1.23456], "b": [2.0], "c": [None], "d": [float("nan")]})
    assert display.table(df, digits={"a": 3}).splitlines()[-1] == "| 1.235 | 2.0 |  |  |"


def test_rounds_sentence_says_what_the_rounds_can_decide():
    five = display.rounds_sentence(5)
    assert "cannot give p < 0.05" in five and "6 rounds are the fewest" in five
    assert "0.031" in display.rounds_sentence(6) and "all agreeing" in display.rounds_sentence(6)
    assert "up to 2 may disagree" in display.rounds_sentence(8)


def test_a_speedup_table_shows_one_measure_and_the_outcome_in_words():
    base = [100.0 + i for i in range(8)]
    df = rows({"a": base, "b": [t / 1.25 for t in base]})
    g = tokgen.gains(df, "a")
    text = display.speedup_table(g)
    assert "| b | a | ×1.25 | ×1.25–×1.25 | 0.008 | faster |" in text
    assert "gain_pct" not in text and "Speed-up: the median over rounds" in text
    assert display.medians_disagree(df, g) == ""


def test_medians_and_paired_speedups_that_disagree_are_named():
    # b is faster in 5 of 7 rounds by a little, slower in 2 by a lot: the medians say slower
    df = rows({"a": [100, 100, 100, 100, 100, 100, 100], "b": [95, 95, 95, 95, 95, 200, 200]})
    g = tokgen.gains(df, "a")
    assert g.iloc[0]["speedup"] > 1
    df.loc[df["variant"] == "b", "median_ms"] = 120.0
    assert "`b` against `a`" in display.medians_disagree(df, g)


def test_trend_needs_a_change_larger_than_the_band():
    assert display.trend([1.0, 1.01, 1.02]) == "changes by less than 5%"
    assert display.trend([1.0, 1.6, 2.8]) == "grows"
    assert display.trend([0.90, 0.93, 0.88]) == "has no steady trend"


def test_where_measured_on_the_cpu_says_it_measures_nothing():
    assert "smoke run" in display.where_measured("cpu")


def test_the_sweep_takeaway_reconciles_a_flat_step_with_a_high_gpu_share():
    sync = pd.DataFrame(
        {
            "generator": "kv_static",
            "batch_size": [1, 16, 256],
            "ms_per_step": [7.45, 6.24, 6.93],
            "gpu_busy_ms": [93.0, 136.0, 420.0],
            "steps": 100,
            "gpu_busy_share": [0.12, 0.22, 0.61],
        }
    )
    g = pd.DataFrame({"batch_size": [1, 16, 256], "outcome": ["undecided", "undecided", "faster"]})
    text = display.sweep_takeaway(g, sync)
    assert text.startswith("Pipelining: faster (p < 0.05) at B = 256; undecided at B = 1, 16.")
    assert "host's per-step time sets the pace" in text and "busy 61% of a step" in text


def test_idle_gaps_say_when_pipelining_makes_the_gap_larger():
    profile = pd.DataFrame(
        {
            "variant": ["kv_static", "pipelined_static", "compiled kv_static", "compiled pipelined_static"],
            "idle_gap_median_us": [90.0, 226.0, 425.0, 100.0],
            "gpu_idle_fraction": [0.78, 0.84, 0.80, 0.81],
        }
    )
    gaps = display.idle_gaps(profile)
    assert list(gaps["closes"]) == [False, True]
    assert "larger" in display.gap_takeaway(gaps.iloc[0])
    summary = display.gap_summary(gaps)
    assert "eager, the idle gap" in summary and "Compiled, pipelining closes it" in summary
    results = pd.DataFrame({"variant": ["kv_static", "compiled kv_static"], "gpu_busy_share": [0.25, 0.6]})
    text = display.pipelined_gap(profile.assign(gpu_sms="all"), results)
    assert "larger, not smaller" in text and "host sets the pace" in text and "closes most of it" in text
    assert "run notebook 06 here first" in display.pipelined_gap(profile.assign(gpu_sms="16"), results)
