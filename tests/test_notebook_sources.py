"""Review rvC15 (notebook 10): a `show_source` the cell never displays (S5), and causes the text named without a
measurement (S6)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAIRED = sorted([*(ROOT / "notebooks").glob("[0-9][0-9]_*.py"), *(ROOT / "solutions").glob("[0-9][0-9]_*.py")])


def code_cells(path: Path) -> list[str]:
    """The code cells of a jupytext percent notebook (markdown cells left out)."""
    cells = path.read_text().split("\n# %%")[1:]
    return [c.split("\n", 1)[1] if "\n" in c else "" for c in cells if not c.lstrip(" ").startswith("[markdown]")]


@pytest.mark.parametrize("path", PAIRED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_show_source_is_its_cells_last_expression_so_jupyter_displays_it(path):
    """`show_source` returns the source as an object that Jupyter displays only as a cell's last expression:
    followed by another statement, it is computed and dropped (rvC15 S5: `capture_while` was never shown)."""
    for cell in code_cells(path):
        body = ast.parse(cell).body
        for statement in body[:-1]:
            call = statement.value if isinstance(statement, ast.Expr) else None
            name = getattr(getattr(call, "func", None), "id", getattr(getattr(call, "func", None), "attr", None))
            assert name != "show_source", f"{path.name}: {ast.unparse(statement)} is not displayed"


UNMEASURED = [
    "costs time whatever the kernel does",  # FusedStep's docstring, shown in notebook 10
    "whatever the kernel does",  # notebook 10, the fused step's section
    "saves host work",  # notebook 10, a larger K: no host time per K is measured
    "saves the host's per-replay work",  # notebook 10, the WHILE node: host work is not measured
    "a point inside the grey band with its bar is a difference within",  # 95% bars, the ±5% call reads the 90% one
]


def test_notebook_10_names_no_cause_it_does_not_measure():
    """rvC15 S6: the fused step's kernel boundaries, a larger K's host work and the WHILE node's host work were
    named as causes with no measurement; the text now says what each changes and what the notebook measures."""
    texts = [ROOT / "notebooks" / "10_cuda_graphs.py", *(ROOT / "src" / "tokgen").rglob("*.py")]
    for path in texts:
        said = " ".join(line.strip(" #") for line in path.read_text().splitlines())  # a phrase across lines
        for phrase in UNMEASURED:
            assert phrase not in said, (path.name, phrase)


def test_notebook_12_ranks_each_run_with_its_naive_generator_as_the_baseline():
    """Review rr15c S1: notebook 09 calls naive the baseline, not ranked (a sequential run times it for fewer
    rounds); notebook 12's takeaway on the same run must not rank it among the others."""
    cells = code_cells(ROOT / "notebooks" / "12_speed_of_light.py")
    calls = [c for c in cells if "display.ranking(run, naive" in c]
    assert calls and all("baseline=True" in c for c in calls)


def test_notebook_10_prints_the_host_probe_under_its_table_and_profiles_by_the_rank_table():
    """Review rvC16 S1: the table of section 3 (naive and the recipe host-bound) says the host's probe, as
    notebook 07's does; S2: the profiled Ks come from `profiled_ks` (the fused step's K where it shares the best
    rank), not from the first row of each generator in the table's order (a point speed-up against naive)."""
    cells = code_cells(ROOT / "notebooks" / "10_cuda_graphs.py")
    table = next(c for c in cells if 'say(table(ok, columns + [f"vs {b}"' in c)
    assert "say(tokgen.voice.host_probe_text(ok))" in table
    stages = next(c for c in cells if "stages = " in c)
    assert "profiled_ks(ranked, ok" in stages and "drop_duplicates" not in stages
