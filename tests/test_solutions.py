"""Functions a worked solution defines for itself, run on values whose answer is known."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def solution_function(notebook: str, name: str):
    """Function `name` as solutions/<notebook>.py defines it (no other cell run)."""
    tree = ast.parse((ROOT / "solutions" / f"{notebook}.py").read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    scope = {}
    exec(compile(ast.Module([node], []), name, "exec"), scope)
    return scope[name]


def test_solution_01_reads_a_slope_as_printed_not_past_its_second_decimal():
    """1.1004 prints as 1.10: its label is 1.10's, "near 1", not "nearer 1 than 2" (review r58 N4)."""
    reading = solution_function("01_naive", "reading")
    assert reading(1.1004).startswith("near 1:") and reading(1.1051).startswith("nearer 1 than 2")
    assert reading(1.8951).startswith("near 2:") and reading(1.8949).startswith("nearer 2 than 1")
    assert reading(2.1049).startswith("near 2:") and reading(2.1051).startswith("above 2")
