"""Review rvC14 S2 (tokgen.waterfall): where the profiler note speaks for a K, the gap split's between share
says in place how much of its idle time the unprofiled run leaves room for, and the figure marks the idle bars
that exceed it; where the profiled and unprofiled generations agree, neither changes."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from tokgen import waterfall  # noqa: E402

NAMES = [waterfall.FLOOR, waterfall.COMPUTE, waterfall.EXTRA_BYTES, waterfall.SMALL, waterfall.KERNELS,
         waterfall.GAPS, waterfall.STOP_GPU, waterfall.LAUNCH, waterfall.AROUND, waterfall.HOST,
         waterfall.REMAINDER, waterfall.TOTAL]  # fmt: skip
# notebook 12's committed run (data/12_waterfall.csv), rounded to µs: K = 1 ran 11.44 ms slower profiled
# (63.435 ms) than its unprofiled median (51.995 ms), which leaves 1.944 ms beside the 50.051 ms of profiled busy time
K1 = [20.565, 0.0, 0.020, 8.583, 20.712, 0.152, 0.693, 11.420, 0.762, 0.527, -11.440, 51.995]
K1_SUMMARY = {"measured_ms": 51.995, "wall_profiled_ms": 63.435, "wall_minus_busy_ms": 1.944}
# K = 4: 0.48 ms slower profiled, under both the 1.448 ms left beside the busy time and 5% of 51.905 ms
K4 = [20.565, 0.0, 0.020, 8.583, 21.234, 0.028, 0.174, 0.149, 1.074, 0.560, -0.483, 51.905]
K4_SUMMARY = {"measured_ms": 51.905, "wall_profiled_ms": 52.388, "wall_minus_busy_ms": 1.448}


def rows(ms: list[float]) -> pd.DataFrame:
    """`waterfall_table`'s rows from the terms' ms: each bar from where the one before it ended."""
    status = ["measured"] * 10 + ["remainder", "total"]
    ends = pd.Series(ms[:-1]).cumsum().tolist()
    starts = [0.0, *ends[:-1]]
    return pd.DataFrame({"term": NAMES, "ms": ms, "status": status, "start_ms": [*starts, 0.0],
                         "end_ms": [*ends, ms[-1]]})  # fmt: skip


def test_the_between_share_states_the_unprofiled_bound_where_the_profiled_run_was_much_slower():
    terms = rows(K1)
    said = waterfall.gap_split(terms, K1_SUMMARY)
    # 0.152 + 11.420 ms of idle time between kernels and replays, 1.944 ms left: 9.628 ms more
    caveat = (" (one profiled generation's, which ran 11.44 ms slower than the unprofiled median; its idle part, the "
              "gaps and the gap before each replay's first kernel, 11.57 ms, is 9.63 ms more than the 1.94 ms of GPU "
              "idle time the unprofiled median wall time leaves beside the profiled GPU busy time: if the GPU is "
              "busy at least as long without the profiler (not measured here), at least those 9.63 ms are not seen "
              "without the profiler)")  # fmt: skip
    assert ("between replays (gaps, the stop check with its flag's copy, graph launch or host) 39%" + caveat
            + ", the other terms") in said  # fmt: skip
    assert said.replace(caveat, "") == waterfall.gap_split(terms)  # all other words as they were
    assert "profiler's own cost" not in said and "caused" not in said  # no mechanism is measured


def test_the_between_share_is_unchanged_where_profiled_and_unprofiled_agree():
    terms = rows(K4)
    assert waterfall.profiler_note(terms, K4_SUMMARY) == ""
    said = waterfall.gap_split(terms, K4_SUMMARY)
    assert said == waterfall.gap_split(terms)
    assert "graph launch or host) 1%, the other terms" in said and "unprofiled" not in said


def test_the_caveat_follows_the_profiler_notes_condition_and_says_when_the_idle_time_fits():
    terms = rows(K1)
    cases = {
        "unsized": K1_SUMMARY,
        "sized, remainder 5.1% below zero": {"measured_ms": 51.0, "wall_profiled_ms": 53.6, "wall_minus_busy_ms": 20},
        "sized, remainder 4.9% below zero": {"measured_ms": 51.0, "wall_profiled_ms": 53.5, "wall_minus_busy_ms": 20},
        "faster by more than the idle time": {"measured_ms": 51.0, "wall_profiled_ms": 48.0, "wall_minus_busy_ms": 2},
        "agree": K4_SUMMARY,
    }
    for name, summary in cases.items():
        t = terms.assign(ms=terms["ms"].where(terms["term"] != waterfall.REMAINDER,
                                              summary["measured_ms"] - summary["wall_profiled_ms"]))  # fmt: skip
        said = waterfall.gap_split(t, summary)
        assert ("one profiled generation's" in said) == (waterfall.profiler_note(t, summary) != ""), name
    sized = {"measured_ms": 51.0, "wall_profiled_ms": 53.6, "wall_minus_busy_ms": 20.0}  # 2.6 ms: 5.1% of 51 ms
    t = terms.assign(ms=terms["ms"].where(terms["term"] != waterfall.REMAINDER, -2.6))
    assert ("ran 2.60 ms slower than the unprofiled median; its idle part, the gaps and the gap before each replay's "
            "first kernel, 11.57 ms, fits within the 20.00 ms of GPU idle time the unprofiled median wall time "
            "leaves beside the profiled GPU busy time), the other") in waterfall.gap_split(t, sized)  # fmt: skip
    faster = {"measured_ms": 51.0, "wall_profiled_ms": 48.0, "wall_minus_busy_ms": 2.0}
    assert "ran 3.00 ms faster than the unprofiled median" in waterfall.gap_split(t, faster)


def hatches(terms: pd.DataFrame, summary: dict):
    fig, ax = plt.subplots()
    waterfall.plot_waterfall(ax, terms, summary=summary)
    assert len(ax.patches) == len(terms)  # one bar per row, in the rows' order: every term is measured here
    marked = {term: bar.get_hatch() for term, bar in zip(terms["term"], ax.patches)}
    legend = ax.get_legend()
    labels = [] if legend is None else [" ".join(t.get_text().split()) for t in legend.get_texts()]
    plt.close(fig)
    return marked, labels


def test_the_figure_cross_hatches_only_the_idle_bar_that_exceeds_the_unprofiled_bound():
    marked, labels = hatches(rows(K1), K1_SUMMARY)
    assert marked[waterfall.LAUNCH] == "xx"  # 11.42 ms against 1.944 ms
    assert marked[waterfall.REMAINDER] == "//"  # as before
    assert all(h is None for term, h in marked.items() if term not in (waterfall.LAUNCH, waterfall.REMAINDER))
    assert labels == ["exceeds what the unprofiled run leaves for it (1.94 ms)"]
    # a stop-flag term (it holds its copy, busy time) longer than the bound is not an idle term: not marked
    busy_stop = rows([20.565, 0.0, 0.020, 8.583, 20.712, 0.152, 3.000, 11.420, 0.762, 0.527, -13.747, 51.995])
    marked, _ = hatches(busy_stop, {**K1_SUMMARY, "wall_profiled_ms": 65.742})
    assert marked[waterfall.STOP_GPU] is None and marked[waterfall.LAUNCH] == "xx"


def test_the_figure_marks_nothing_where_profiled_and_unprofiled_agree():
    marked, labels = hatches(rows(K4), K4_SUMMARY)
    assert all(h is None for term, h in marked.items() if term != waterfall.REMAINDER)
    assert labels == []
    # a launch gap of 1.6 ms, longer than the 1.448 ms left beside the busy time, but the profiled generation ran
    # 1.0 ms slower: within that idle time and within 5% of the measured time, so no note, and no mark either
    long_gap = rows([20.565, 0.0, 0.020, 8.583, 20.301, 0.028, 0.174, 1.600, 1.074, 0.560, -1.000, 51.905])
    agree = {**K4_SUMMARY, "wall_profiled_ms": 52.905}
    assert waterfall.profiler_note(long_gap, agree) == ""
    marked, labels = hatches(long_gap, agree)
    assert marked[waterfall.LAUNCH] is None and labels == []
