"""Solution 07, exercise 2 on a CUDA GPU (review rv23B N1): the cell itself, run as the solution runs it."""

import math
import time
from pathlib import Path

import pytest
import torch

import tokgen

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[1]


def _cell(path: Path, marker: str) -> str:
    """The code cell of a jupytext percent notebook that holds `marker`."""
    cells = [c.split("\n", 1)[1] for c in path.read_text().split("\n# %%")[1:] if not c.startswith(" [markdown]")]
    return next(c for c in cells if marker in c)


def test_solution_07_exercise_2_times_the_queued_sleep_and_the_copy_returns(tmp_path):
    """Known answer: `torch.cuda._sleep(50_000_000)` queues tens of ms of GPU work (25 ms at 2 GHz; more than 1 ms at
    any clock up to 50 GHz); the copy into pinned memory returns before that work is done, the one into pageable
    memory only once it has (as the reference run's 0.11 and 25.33 ms read); one row each, two per host memory."""
    said = []
    rec = tokgen.Recorder("07_pipelining_solution", tmp_path, params={})
    cell = _cell(ROOT / "solutions" / "07_pipelining.py", "torch.cuda._sleep(50_000_000)")
    exec(cell, {"CUDA": True, "torch": torch, "time": time, "tokgen": tokgen, "rec": rec, "say": said.append})
    rows = tokgen.results.rows_where(rec.read(), exercise=2)
    by = {(r["measure"], r["host_memory"]): r["value"] for r in rows.to_dict("records")}
    assert len(rows) == 4 and len(by) == 4
    for where in ("pinned", "pageable"):
        assert math.isfinite(by["gpu queued ms", where]) and by["gpu queued ms", where] > 1.0
    assert by["copy returned after ms", "pinned"] < 0.5 * by["gpu queued ms", "pinned"]
    assert by["copy returned after ms", "pageable"] > 0.5 * by["gpu queued ms", "pageable"]
    assert len(said) == 2 and all("of GPU work queued ahead of it" in s and "one call each" in s for s in said)
