"""Review rv21B S1, N3 and N4 on notebooks 10 and 12: the WHILE node's pointers to whole-generation comparisons,
notebook 12's kernel table headers per decode step, and the WHILE-node row the summary counts as neither side."""

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
    """N4, from the committed run (data/10_device_stop.csv): at 52 steps the node against K = 1 is faster, its
    equivalence interval ×1.04–×1.051 neither inside ±5% nor beyond it; that row, and only that one, says so."""
    stopped = pd.read_csv(ROOT / "data" / "10_device_stop.csv")
    stopped = stopped[stopped["status"] == "ok"]
    node = stopped[stopped["generator"] == "graph_stop_on_device"].set_index("steps")["variant"]
    replays = stopped[stopped["generator"] != "graph_stop_on_device"]
    rows = {(r.steps, r.variant): tokgen.gain(stopped, r.variant, node[r.steps]) for r in replays.itertuples()}
    cells = {key: band_speedup_text(g) for key, g in rows.items()}
    marked = [key for key, cell in cells.items() if "not shown on either side of 5%" in cell]
    assert marked == [(52, "graph_triton_fused K=1, 52 steps")], marked
    g = rows[marked[0]]
    assert cells[marked[0]] == speedup_text(g) + "; not shown on either side of 5%: its equivalence interval " \
        "×1.04–×1.051 (faster by at most 5.1%)"  # fmt: skip
    assert "1 not shown on either side of 5%" in faster_count([g for (s, _), g in rows.items() if s == 52])
    assert all(cells[k] == speedup_text(g) for k, g in rows.items() if k not in marked)
