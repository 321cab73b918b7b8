"""run_all's command line: selection, parameters, clear errors."""

import subprocess
import sys
from pathlib import Path

import pytest

from tokgen import runner

ROOT = Path(__file__).resolve().parents[1]


def test_notebooks_are_found_in_order():
    names = runner.notebook_names()
    assert names[0] == "00_setup" and names == sorted(names) and len(names) >= 13


def test_select_by_name_or_number():
    assert runner.select(["03", "01_naive.ipynb"]) == ["01_naive", "03_expandable_segments"]
    assert runner.select(["00,02"]) == ["00_setup", "02_kv_cache"]
    assert runner.select([]) == runner.notebook_names()


def test_unknown_notebook_is_one_clear_error():
    with pytest.raises(SystemExit, match="unknown notebook '99_nope'; choose from: 00_setup"):
        runner.select(["99_nope"])


def test_parameters_are_python_literals_or_strings():
    assert runner.parse_parameter("16") == 16
    assert runner.parse_parameter("[1, 2]") == [1, 2]
    assert runner.parse_parameter("cuda") == "cuda"


def test_every_smoke_parameter_is_declared_by_some_notebook():
    declared = set()
    for name in runner.notebook_names():
        declared |= runner.declared_parameters(runner.NOTEBOOKS / f"{name}.ipynb")
    assert set(runner.SMOKE) <= declared


@pytest.mark.parametrize(
    "args, message",
    [(["--bogus"], "unrecognized arguments: --bogus"), (["--only", "99_nope"], "unknown notebook '99_nope'")],
)
def test_run_all_rejects_bad_arguments(args, message):
    proc = subprocess.run(["bash", str(ROOT / "run_all.sh"), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert message in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_runner_module_lists_notebooks():
    out = subprocess.run([sys.executable, "-m", "tokgen.runner", "--list"], capture_output=True, text=True, check=True)
    assert out.stdout.split() == runner.notebook_names()


TOY = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
FAIL = False  # raise after writing the table
RESULTS_DIR = ".."  # data/ and figures/ go below this folder

# %%
from pathlib import Path

(Path(RESULTS_DIR) / "data" / "99_toy.csv").write_text("new\\n")
(Path(RESULTS_DIR) / "figures").mkdir(exist_ok=True)
(Path(RESULTS_DIR) / "figures" / "99_toy.svg").write_text("<svg/>")
if FAIL:
    raise RuntimeError("boom")
"""


def test_a_failed_notebook_leaves_the_previous_results_in_place(tmp_path, monkeypatch):
    notebooks, out = tmp_path / "src", tmp_path / "out"
    notebooks.mkdir()
    (notebooks / "99_toy.py").write_text(TOY)
    monkeypatch.setattr(runner, "NOTEBOOKS", notebooks)
    (out / "data").mkdir(parents=True)
    (out / "data" / "99_toy.csv").write_text("old\n")
    (out / "data" / "98_other.csv").write_text("other\n")

    row = runner.run_notebook("99_toy", out, {"FAIL": True}, progress=False)
    assert row["status"] == "failed" and "boom" in row["error"]
    assert (out / "data" / "99_toy.csv").read_text() == "old\n"
    assert not (out / "figures").exists() and not (out / "notebooks").exists()
    kept = out / "build" / "failed" / "99_toy"
    assert (kept / "data" / "99_toy.csv").read_text() == "new\n"
    assert runner.failed_notebook(out, "99_toy").exists()

    row = runner.run_notebook("99_toy", out, {"FAIL": False}, progress=False)
    assert row["status"] == "ok"
    assert (out / "data" / "99_toy.csv").read_text() == "new\n"
    assert (out / "data" / "98_other.csv").read_text() == "other\n"
    assert (out / "figures" / "99_toy.svg").exists() and (out / "notebooks" / "99_toy.ipynb").exists()
    assert [p.name for p in (out / "build").iterdir()] == ["failed"]  # no staging folder left behind
