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
