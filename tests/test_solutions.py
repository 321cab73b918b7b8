"""Functions a worked solution defines for itself, run on values whose answer is known."""

import ast
from pathlib import Path

import tokgen
from tokgen.stats import BAND, FASTER, NO_EFFECT, SLOWER, UNDECIDED

ROOT = Path(__file__).resolve().parents[1]


def solution_function(notebook: str, name: str, **names):
    """Function `name` as solutions/<notebook>.py defines it (no other cell run), seeing `names`."""
    tree = ast.parse((ROOT / "solutions" / f"{notebook}.py").read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    scope = dict(names)
    exec(compile(ast.Module([node], []), name, "exec"), scope)
    return scope[name]


def test_solution_04_says_an_undecided_room_as_undecided_not_as_not_slower():
    """Review pre_00_05 M2: every outcome but "slower" printed "Not slower here", undecided too (solution 04 says it
    through `tokgen.display.room_reading`)."""
    room_reading = tokgen.display.room_reading
    said = {o: room_reading({"outcome": o}, 0.26) for o in (FASTER, SLOWER, NO_EFFECT, UNDECIDED)}
    assert said[UNDECIDED].startswith("Undecided (these rounds cannot tell), with 2N slots: the GPU was busy 26%")
    assert said[UNDECIDED].endswith("whether it hides under the host's launch time, these rounds cannot tell.")
    assert said[NO_EFFECT].startswith(f"No effect (within ±{BAND:.0%}), with 2N slots")
    assert said[FASTER].startswith("Faster, for real, with 2N slots") and said[SLOWER].startswith("Slower with 2N")
    assert not any("not slower" in s.lower() for s in said.values())
    assert "a CPU run measures nothing" in room_reading({"outcome": UNDECIDED}, float("nan"))
    assert "though the GPU was busy 95%" in room_reading({"outcome": NO_EFFECT}, 0.95)
    assert room_reading(None, 0.5) == "Not measured."
    tie = room_reading({"outcome": SLOWER, "no_effect": True}, 0.26)  # slower for real, but within ±5%: a tie
    assert tie == said[NO_EFFECT] and "for real" not in tie


def _loop_writes(path: Path, header: str) -> bool:
    """Whether the `for` loop whose first line is `header` (stripped) in a solution's source calls `rec.write`."""
    tree = ast.parse(path.read_text())
    lines = path.read_text().splitlines()
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and lines[n.lineno - 1].strip() == header]
    assert len(loops) == 1, (path.name, header)
    return any(isinstance(n, ast.Attribute) and n.attr == "write" for n in ast.walk(loops[0]))


def test_the_solutions_write_their_rows_after_the_runs_they_time():
    """Review rr20i S4: solution 07's race runs back to back, as in the notebook (a write between two runs lets the GPU
    drain, so every run starts idle); solution 06's profiled windows likewise. The rows are written after the loop."""
    root = Path(__file__).resolve().parents[1] / "solutions"
    assert not _loop_writes(root / "07_pipelining.py", "for trial in range(RUNS):")
    assert not _loop_writes(root / "06_eos_sync_profile.py", "for pair, order in enumerate(orders):")
    source = (root / "07_pipelining.py").read_text()
    assert "for row in measured:\n    rec.write(row)" in source
