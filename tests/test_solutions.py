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
