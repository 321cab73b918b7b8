"""Review rv21B S1, N3 and N4 on notebooks 10 and 12: the WHILE node's pointers to whole-generation comparisons,
notebook 12's kernel table headers per decode step, and the WHILE-node row the summary counts as neither side."""

import re
from pathlib import Path

import pandas as pd

import tokgen
from tokgen.voice import band_speedup_text, faster_count, speedup_text

ROOT = Path(__file__).resolve().parents[1]


def test_notebook_10_points_to_where_the_while_node_meets_k_4_and_k_1_over_whole_generations():
    """S1: section 3 sets the node beside the fused step at K = 4 only; K = 1 is solution 10's exercise 2."""
    text = " ".join((ROOT / "notebooks" / "10_cuda_graphs.py").read_text().replace("#", " ").split())
    assert "section 3 compares the two over whole generations" not in text
    assert text.count("section 3 sets the node beside the fused step at K = 4 over whole generations, and solution "
                      "10, exercise 2, beside K = 1") == 2  # fmt: skip


def test_notebook_12_names_its_kernel_table_columns_per_decode_step():
    """N3: the fused step's kernel table reads "per decode step", as notebook 10's do (`step_headers`)."""
    source = (ROOT / "notebooks" / "12_speed_of_light.py").read_text()
    assert 'table(tokgen.display.step_headers(kernels.loc[kernels["variant"] == target, columns]), digits=2)' in source
    kernels = pd.DataFrame({"variant": ["a"], "kernels_per_token": [49.0], "us_per_token": [677.3],
                            "own_us_per_token": [383.3]})  # fmt: skip
    header = tokgen.display.table(tokgen.display.step_headers(kernels)).splitlines()[0]
    assert header == "| variant | kernels per decode step | µs per decode step | own µs per decode step |"


def test_the_while_node_row_the_summary_counts_as_neither_side_of_5_percent_says_so():
    """N4: a row the summary counts as "not shown on either side of 5%" says so in the table, with its equivalence
    interval; every other row reads as `speedup_text` has it. Known answers: a made-up faster pair whose
    equivalence interval 1.043–1.051 straddles ×1.05 (marked), one wholly beyond it, one inside the band and an
    undecided one (not marked: the summary counts it undecided, review rr21d S2); then every row of the committed
    data/10_device_stop.csv, marked where `faster_count` counts it so."""
    base = {"variant": "b", "vs": "a", "speedup": 1.047, "speedup_q25": 1.04, "speedup_q75": 1.05, "p_value": 0.001,
            "rounds": 10, "real": True, "no_effect": False, "outcome": "faster", "interval_low": 1.044,
            "interval_high": 1.050, "level": 0.05, "decided": True}  # fmt: skip
    neither = {**base, "equivalence_low": 1.043, "equivalence_high": 1.051}
    undecided = {**base, "speedup": 1.01, "p_value": 0.3, "real": False, "outcome": "undecided", "decided": False,
                 "interval_low": 0.93, "interval_high": 1.10, "equivalence_low": 0.94,
                 "equivalence_high": 1.08}  # fmt: skip
    assert band_speedup_text(neither) == speedup_text(neither) + "; not shown on either side of 5%: its " \
        "equivalence interval ×1.04–×1.051 (faster by at most 5.1%)"  # fmt: skip
    for other in ({**base, "equivalence_low": 1.06, "equivalence_high": 1.08},  # beyond the band
                  {**base, "no_effect": True, "equivalence_low": 1.01, "equivalence_high": 1.03},  # inside it
                  undecided):  # rr21d S2: undecided, its equivalence interval across both edges  # fmt: skip
        assert band_speedup_text(other) == speedup_text(other)
    assert faster_count([undecided]).endswith("undecided in 1")  # the summary's count for it, as the row leaves it
    stopped = pd.read_csv(ROOT / "data" / "10_device_stop.csv")
    stopped = stopped[stopped["status"] == "ok"]
    node = stopped[stopped["generator"] == "graph_stop_on_device"].set_index("steps")["variant"]
    replays = stopped[stopped["generator"] != "graph_stop_on_device"]
    rows = {(r.steps, r.variant): tokgen.gain(stopped, r.variant, node[r.steps]) for r in replays.itertuples()}
    cells = {key: band_speedup_text(g) for key, g in rows.items()}
    marked = [key for key, cell in cells.items() if "not shown on either side of 5%" in cell]
    for steps in {s for s, _ in rows}:  # the table's marks agree with the summary's count at each stop
        n = sum(1 for s, _ in marked if s == steps)
        said = faster_count([g for (s, _), g in rows.items() if s == steps])
        shown = re.search(rf"\b{n} not shown on either side of 5%", said)  # rr21d N5: "11 not shown" is not 1
        assert shown if n else "not shown on either side" not in said
    assert all(cells[k] == speedup_text(g) for k, g in rows.items() if k not in marked)
