"""run_all's command line: selection, parameters, clear errors."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from conftest import smoke_command

from tokgen import results
from tokgen_tools import clean, readme, runner

ROOT = Path(__file__).resolve().parents[1]
RUNNER = [sys.executable, "-m", "tokgen_tools.runner"]  # the runner on this interpreter: no Python picked from PATH


def run_all_env() -> dict:
    """The environment for `bash run_all.sh` in a test: its Python is this interpreter (run_all.sh
    takes `python` from PATH inside an active environment), so it never builds a .venv."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "VIRTUAL_ENV": sys.prefix, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}


def test_notebooks_are_found_in_order():
    names = runner.notebook_names()
    assert names[0] == "00_setup" and names == sorted(names) and len(names) >= 13


def test_select_by_name_or_number():
    assert runner.select(["03", "01_naive.ipynb"]) == ["01_naive", "03_expandable_segments"]
    assert runner.select(["00,02"]) == ["00_setup", "02_kv_cache"]
    every = runner.select([])  # the summary reads the others' data: it runs last
    assert every[-1] == "09_summary" and sorted(every) == runner.notebook_names() and every[:-1] == sorted(every[:-1])
    assert runner.select(["09", "13"]) == ["13_regimes", "09_summary"]


def test_unknown_notebook_is_one_clear_error():
    with pytest.raises(runner.RunError, match="unknown notebook '99_nope'; choose from: 00_setup"):
        runner.select(["99_nope"])


def test_parameters_are_read_as_yaml_and_checked():
    names = ["08_batch_sweep"]
    assert runner.checked_parameters([("RUNS", "16"), ("BATCH_SIZES", "[1, 4, 16]")], names) == {
        "RUNS": 16,
        "BATCH_SIZES": [1, 4, 16],
    }
    assert runner.checked_parameters([("DEVICE", "cpu")], names) == {"DEVICE": "cpu"}
    with pytest.raises(runner.RunError, match="-p RUNS: parameter RUNS must be a positive integer, got 'abc'"):
        runner.checked_parameters([("RUNS", "abc")], names)
    with pytest.raises(runner.RunError, match="-p NOT_A_PARAM: no selected notebook has this parameter; they have: "):
        runner.checked_parameters([("NOT_A_PARAM", "3")], names)


def test_run_all_csv_records_paths_inside_the_repository_relative_to_it():
    # notebook 09 runs with the absolute slice/ folder; its committed row must not name the machine
    row = json.loads(runner.recorded({"SLICE_RESULTS_DIR": str(runner.SLICE_OUT), "RUNS": 8, "DATA_DIR": ".."}))
    assert row == {"SLICE_RESULTS_DIR": "slice", "RUNS": 8, "DATA_DIR": ".."}
    elsewhere = str(Path("/elsewhere/out").resolve())  # a user's --out outside the repository stays as given
    assert json.loads(runner.recorded({"SLICE_RESULTS_DIR": elsewhere})) == {"SLICE_RESULTS_DIR": elsewhere}


def test_every_smoke_parameter_is_declared_by_some_notebook():
    declared = set()
    for name in runner.notebook_names():
        declared |= set(runner.declared_parameters(name))
    assert set(runner.SMOKE) <= declared


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--only", "99_nope"], "run_all: unknown notebook '99_nope'"),
        (["--only", "01", "-p", "BATCH_SIZE", "0"], "run_all: -p BATCH_SIZE: parameter BATCH_SIZE must be a positive"),
        (["--only", "01", "-p", "BATCH_SIZE", "abc"], "must be a positive integer, got 'abc'"),
        (
            ["--only", "01", "-p", "NOT_A_PARAM", "3"],
            "-p NOT_A_PARAM: no selected notebook has this parameter; they have",
        ),
        (["--out", "/proc/x"], "run_all: cannot write to --out /proc/x"),
        (["--slice", "0"], "run_all: -p GPU_SMS: parameter GPU_SMS must be None (the whole GPU) or a positive"),
        (["--slice", "abc"], "GPU_SMS must be None (the whole GPU) or a positive number of SMs, got 'abc'"),
        (
            ["--only", "01", "-p", "RESULTS_DIR", "/tmp/x"],
            "run_all: -p RESULTS_DIR: the runner sets the notebooks' folders; to write elsewhere, use --out DIR",
        ),
        (["--only", "09", "-p", "DATA_DIR", "x"], "-p DATA_DIR: the runner sets the notebooks' folders"),
        (["--only", "09", "-p", "SLICE_RESULTS_DIR", "x"], "-p SLICE_RESULTS_DIR: the runner sets the notebooks'"),
        (
            ["--smoke", "--out", str(ROOT)],
            f"run_all: --out {ROOT} holds the reference results, which a smoke run does not replace: choose another "
            "--out, or give --replace-reference",
        ),
        (["--smoke", "--out", str(ROOT / "slice")], f"--out {ROOT / 'slice'} holds the reference results"),
        (["--smoke", "--out", str(ROOT / "data" / "x")], f"--out {ROOT / 'data' / 'x'} holds the reference results"),
    ],
)
def test_the_runner_rejects_bad_arguments_with_one_line(args, message):
    proc = subprocess.run([*RUNNER, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2
    assert message in proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(said) == 1 and "Traceback" not in proc.stderr  # argparse adds its usage lines above


def test_without_a_gpu_the_smoke_fallback_does_not_write_into_the_repository():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("checks the CPU fallback")
    proc = subprocess.run([*RUNNER, "--out", "."], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2 and "running the smoke mode" in proc.stdout
    assert proc.stderr.splitlines() == [
        f"run_all: --out {ROOT} holds the reference results, which a smoke run does not replace: choose another "
        "--out, or give --replace-reference"
    ]


def test_smoke_runs_write_below_build_smoke_unless_told_otherwise():
    build = ROOT / "build" / "smoke"
    assert runner.output_folder(None, smoke=True) == build
    assert runner.output_folder(None, smoke=True, sms=8) == build / "slice" / "sm8"  # the CPU fallback of --slice
    assert runner.output_folder(None, smoke=False, sms=16) == ROOT / "slice" / "sm16"
    assert runner.output_folder(None, smoke=False) == ROOT
    assert runner.output_folder(Path("/tmp/mine"), smoke=True, sms=8) == Path("/tmp/mine")
    assert runner.output_folder(Path("/tmp/mine"), smoke=False, sms=8, several=True) == Path("/tmp/mine/sm8")
    for folder in [ROOT, ROOT / "slice", ROOT / "data", ROOT / "figures" / "x", ROOT / "notebooks", ROOT / "solutions"]:
        assert runner.holds_reference(folder), folder
    for folder in [ROOT / "build" / "smoke", ROOT / "build" / "smoke" / "slice", ROOT / "build", Path("/tmp/mine")]:
        assert not runner.holds_reference(folder), folder


def test_replacing_the_reference_with_smoke_results_is_said_in_one_line(capsys):
    runner.guard_reference(ROOT / "slice", smoke=True, replace=True)
    assert capsys.readouterr().out.splitlines() == [
        f"run_all: smoke results (tiny model) replace the reference ones in {ROOT / 'slice'} (--replace-reference)"
    ]
    runner.guard_reference(ROOT, smoke=False, replace=False)  # the reference run itself
    with pytest.raises(runner.RunError, match="holds the reference results"):
        runner.guard_reference(ROOT / "figures", smoke=True, replace=False)


def test_help_answers_at_once():
    """Through run_all.sh itself: it passes its arguments to the runner, and a mistake's exit status back."""
    started = time.time()
    run_all = ["bash", str(ROOT / "run_all.sh")]
    proc = subprocess.run([*run_all, "--help"], capture_output=True, text=True, timeout=60, env=run_all_env())
    assert proc.returncode == 0 and "--smoke" in proc.stdout and "--test" in proc.stdout
    words = " ".join(proc.stdout.split())  # argparse wraps the lines
    assert "(default: the repository on a GPU; build/smoke for --smoke or without a GPU)" in words
    assert "(default: on a GPU run, not on a smoke run; a slice run never)" in words
    assert time.time() - started < 30  # a loaded machine may be slow; what matters is checked below
    # --help must not wait for torch (seconds to import): the runner imports it only once it runs notebooks
    probe = "\n".join(["import sys", "from tokgen_tools import runner", "try:", "    runner.main(['--help'])",
                       "except SystemExit:", "    pass", "print('torch' in sys.modules)"])  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.stdout.strip().splitlines()[-1] == "False", "--help imported torch"
    proc = subprocess.run([*run_all, "--only", "99_nope"], capture_output=True, text=True, timeout=60,
                          env=run_all_env())  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.startswith("run_all: unknown notebook '99_nope'")


def wait_for_an_executed_cell(out: Path, name: str, proc, timeout: float = 300) -> None:
    """Until papermill has saved notebook `name` in its staging folder under `out` with a cell
    executed (it saves after every cell): a signal that the notebook runs, however slow the machine."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for path in out.glob(f"staging-{name}-*/notebooks/{name}.ipynb"):
            try:
                cells = json.loads(path.read_text())["cells"]
            except (OSError, ValueError):  # not there yet, or being written
                continue
            if any(cell.get("execution_count") for cell in cells):
                return
        time.sleep(0.05)
    pytest.fail(f"{name} never showed an executed cell (runner exit status {proc.poll()})")


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_ctrl_c_says_what_finished_in_one_line_and_leaves_nothing_behind(tmp_path, sigint):
    """Also when the runner starts with SIGINT ignored, as a job started with & from a script does."""
    (tmp_path / "staging-01_naive-old").mkdir()  # what a killed run leaves behind
    cmd = smoke_command("00,01", tmp_path)
    start = lambda: signal.signal(signal.SIGINT, sigint)  # noqa: E731 - in the child, before exec
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=start)
    for line in proc.stdout:  # wait until notebook 01 has started
        if line.startswith("[2/2] 01_naive ..."):
            break
    wait_for_an_executed_cell(tmp_path, "01_naive", proc)  # its kernel runs: interrupt it mid-notebook
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"stdout:\n{out}\nstderr:\n{err}"  # what it said, should this fail again
    assert err.strip().splitlines() == [
        f"run_all: interrupted during 01_naive; finished: 00_setup; not run: 01_naive. 01_naive's partial output "
        f"was discarded; the results in {tmp_path} are those of the finished notebooks."
    ]
    assert not list(tmp_path.glob("staging-*"))
    assert (tmp_path / "notebooks" / "00_setup.ipynb").exists() and not (
        tmp_path / "notebooks" / "01_naive.ipynb"
    ).exists()


def test_smoke_failures_are_kept_where_the_readme_says():
    readme = (ROOT / "README.md").read_text()
    assert runner.failed_notebook(ROOT, "01_naive") == ROOT / "build/failed/01_naive/notebooks/01_naive.ipynb"
    smoke = ROOT / "build" / "smoke"
    assert runner.failed_notebook(smoke, "01_naive") == smoke / "failed/01_naive/notebooks/01_naive.ipynb"
    solution = runner.failed_notebook(ROOT, "solutions/01_naive")
    assert solution == ROOT / "build/failed/solutions/01_naive/solutions/01_naive.ipynb"
    assert "`build/failed/NAME/`" in readme and "`build/smoke/failed/NAME/`" in readme


def test_runner_module_lists_notebooks():
    out = subprocess.run(
        [sys.executable, "-m", "tokgen_tools.runner", "--list"], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == runner.select([])  # in the order a full run takes them


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
    kept = out / "failed" / "99_toy"
    assert (kept / "data" / "99_toy.csv").read_text() == "new\n"
    assert runner.failed_notebook(out, "99_toy").exists()

    row = runner.run_notebook("99_toy", out, {"FAIL": False}, progress=False)
    assert row["status"] == "ok"
    assert (out / "data" / "99_toy.csv").read_text() == "new\n"
    assert (out / "data" / "98_other.csv").read_text() == "other\n"
    assert (out / "figures" / "99_toy.svg").exists() and (out / "notebooks" / "99_toy.ipynb").exists()
    assert not list(out.glob("staging-*"))  # no staging folder left behind
    assert not kept.exists()  # nor the failure this success replaced


TOY_SOLUTION = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
SIZE = "gpt2"  # the model
FAIL = False  # raise after reading the table
DATA_DIR = ".."  # the results read: <DATA_DIR>/data/99_toy.csv
RESULTS_DIR = "../build/lab"  # its own table goes to <RESULTS_DIR>/data/99_toy_solution.csv

# %%
from pathlib import Path

print(SIZE, (Path(DATA_DIR) / "data" / "99_toy.csv").read_text().strip())
(Path(DATA_DIR) / "data" / "99_solution.csv").write_text("stays in the staging folder\\n")
(Path(RESULTS_DIR) / "data").mkdir(parents=True, exist_ok=True)
(Path(RESULTS_DIR) / "data" / "99_toy_solution.csv").write_text(f"its own table, {SIZE}\\n")
if FAIL:
    raise RuntimeError("boom")
"""


def toy_repository(root: Path, monkeypatch, notebook: str = TOY, solution: str = TOY_SOLUTION) -> Path:
    """A repository with one toy notebook, its solution and committed results, as the runner's ROOT."""
    for folder in ("notebooks", "solutions", "data", "figures"):
        (root / folder).mkdir(parents=True)
    (root / "notebooks" / "99_toy.py").write_text(notebook)
    (root / "solutions" / "99_toy.py").write_text(solution)
    committed = {
        "data/99_toy.csv": "reference\n",
        "data/run_all.csv": "notebook,status\n99_toy,ok\n",
        "figures/99_toy.svg": "<svg/>",
        "notebooks/99_toy.ipynb": "{}",
        "solutions/99_toy.ipynb": "{}",
    }
    for name, text in committed.items():
        (root / name).write_text(text)
    monkeypatch.setattr(runner, "ROOT", root)
    monkeypatch.setattr(runner, "NOTEBOOKS", root / "notebooks")
    monkeypatch.setattr(runner, "SOLUTIONS", root / "solutions")
    return root


def snapshot(root: Path) -> dict:
    """Every file below `root` but build/ (staging, failures, logs), by its content's hash."""
    files = (p for p in root.rglob("*") if p.is_file() and "build" not in p.relative_to(root).parts)
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.parametrize("failing", ["notebook", "solution"])
def test_a_failed_run_leaves_the_committed_files_byte_identical(tmp_path, monkeypatch, capsys, failing):
    notebook, solution = (
        (TOY.replace("FAIL = False", "FAIL = True"), TOY_SOLUTION)
        if failing == "notebook"
        else (TOY, TOY_SOLUTION.replace("FAIL = False", "FAIL = True"))
    )
    root = toy_repository(tmp_path / "repo", monkeypatch, notebook, solution)
    before = snapshot(root)
    args = ["--smoke", "--only", "99", "--out", str(root), "--replace-reference", "--no-progress", "--solutions"]
    code = runner.main(args)
    said = capsys.readouterr().out
    assert code == 1 and "replace the reference ones" in said
    if failing == "notebook":
        assert snapshot(root) == before and "FAILED 99_toy at cell" in said
    else:  # the notebook's results are promoted, its solution's notebook and its row are left as they were
        after = snapshot(root)
        assert after["solutions/99_toy.ipynb"] == before["solutions/99_toy.ipynb"]
        assert "FAILED solutions/99_toy at cell" in said
        assert pd.read_csv(root / "data" / "run_all.csv")["notebook"].tolist() == ["99_toy"]
        assert runner.failed_notebook(root, "solutions/99_toy").exists()
    assert not list((root / "build").glob("staging-*"))


def test_a_notebook_and_its_solution_are_written_clean_and_the_solution_reads_the_staging_copy(
    tmp_path, monkeypatch, capsys
):
    root, out = toy_repository(tmp_path / "repo", monkeypatch), tmp_path / "out"
    (out / "data").mkdir(parents=True)  # the toy notebook writes into it
    assert runner.main(["--smoke", "--only", "99", "--out", str(out), "--no-progress", "--solutions"]) == 0
    said = capsys.readouterr().out
    assert "1 notebook(s) and their solutions ->" in said and "run_all: 1/1 notebooks and 1/1 solutions ok in" in said
    solution = nbformat.read(out / "solutions" / "99_toy.ipynb", as_version=4)
    assert clean.problems(solution) == [] and clean.problems(nbformat.read(out / "notebooks" / "99_toy.ipynb", 4)) == []
    assert solution.cells[0].source.startswith('SIZE = "tiny"  # the model')  # the smoke size it ran with
    assert solution.cells[1].outputs[0].text == "tiny reference\n"  # a smoke run's solution reads the reference
    assert pd.read_csv(out / "data" / "run_all.csv")["notebook"].tolist() == ["99_toy", "solution 99_toy"]
    assert not (out / "data" / "99_solution.csv").exists() and not (root / "data" / "99_solution.csv").exists()
    # its own table, data/<name>_solution.csv, is kept beside the run's (review rv19A S5): RESULTS_DIR ".." there
    assert (out / "data" / "99_toy_solution.csv").read_text() == "its own table, tiny\n"
    assert not (root / "data" / "99_toy_solution.csv").exists()

    (out / "data" / "99_toy.csv").write_text("this run's\n")  # a reference run's solution reads that run's data
    row = runner.run_solution("99_toy", out, {"DATA_DIR": ".."}, progress=False, data_from=out)
    assert row["status"] == "ok" and row["notebook"] == "solution 99_toy"
    solution = nbformat.read(out / "solutions" / "99_toy.ipynb", as_version=4)
    assert solution.cells[1].outputs[0].text == "gpt2 this run's\n"
    assert not list(out.glob("staging-*")) and not (out / "data" / "99_solution.csv").exists()


def test_the_build_folder_is_made_when_the_output_is_the_repository(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "ROOT", tmp_path)  # a fresh clone has no build/
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "staging-00_setup-x").mkdir()  # left by a killed run
    runner.prepare_out(tmp_path)
    assert (tmp_path / "build").is_dir() and not list((tmp_path / "build").glob("staging-*"))
    (tmp_path / "build").rmdir()
    runner.prepare_out(tmp_path)
    assert (tmp_path / "build").is_dir()


def test_a_slice_run_gives_its_smaller_sizes_and_the_command_line_wins():
    run = {"RESULTS_DIR": "..", "RUNS": 10}
    assert runner.notebook_parameters("01_naive", run, {}, slice_run=True)["SEQ_LENS"] == [50, 100, 200]
    assert runner.notebook_parameters("01_naive", run, {}, slice_run=False) == run
    assert runner.notebook_parameters("05_torch_compile", run, {}, slice_run=True) == run
    assert runner.notebook_parameters("08_batch_sweep", run, {}, slice_run=True)["BATCH_SIZES"] == [1, 16, 64]
    assert runner.notebook_parameters("01_naive", run, {"SEQ_LENS": [8]}, slice_run=True)["SEQ_LENS"] == [8]
    assert runner.notebook_parameters("01_naive", run, {"RUNS": 5}, slice_run=True)["RUNS"] == 5


def test_slice_sizes_name_declared_parameters_with_valid_values():
    for name, sizes in runner.SLICE_SIZES.items():
        assert set(sizes) <= set(runner.declared_parameters(name)), name
        for key, value in sizes.items():
            assert runner.check(key, value) == value
    # claim 2 divides 01's naive time by 02's KV-cache time at each N: both must have the same N
    assert runner.SLICE_SIZES["01_naive"]["SEQ_LENS"] == runner.SLICE_SIZES["02_kv_cache"]["SEQ_LENS"]


def test_slice_runs_the_two_slices_notebook_13_found_around_the_l40s(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "ROOT", tmp_path)
    with pytest.raises(runner.RunError, match="run notebook 13 first, or name the SMs: --slice 8"):
        runner.bracketing_slices()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "13_slices.csv").write_text("gpu_sms,copy_gbs\n8,591.0\n16,1135.0\n24,1635.0\n")
    assert runner.bracketing_slices() == [8, 16]
    (tmp_path / "data" / "13_slices.csv").write_text("gpu_sms,copy_gbs\n16,1135.0\n24,1635.0\n")
    with pytest.raises(runner.RunError, match="no two measured slices bracket 864 GB/s.*or name the SMs: --slice 8"):
        runner.bracketing_slices()
    # an L4 (about 300 GB/s): the whole GPU is below the L40S, so no slice size could bracket it
    params = '"{""WHOLE_GPU_GBS"": 290.4}"'
    (tmp_path / "data" / "13_slices.csv").write_text(f"gpu_sms,copy_gbs,params\n8,61.0,{params}\n16,122.0,{params}\n")
    with pytest.raises(runner.RunError, match=r"copies at 290 GB/s \(notebook 13\), below the L40S's 864 GB/s: no "
                                              r"slice of it brackets the L40S. .*name its SMs: --slice 8$"):
        runner.bracketing_slices()


def test_a_slice_on_a_machine_without_cuda_is_refused_before_any_notebook_starts(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("checks the refusal on a machine without CUDA")
    for args in (["--slice"], ["--slice", "8", "--only", "01"], ["--smoke", "--slice", "8"]):
        assert runner.main([*args, "--out", str(tmp_path)]) == 2, args
        said = capsys.readouterr()
        assert said.err == "run_all: --slice runs notebooks in a slice of a CUDA GPU, and this machine has none: run " \
                           "without --slice\n" and said.out == "", args  # fmt: skip
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


HUGE = [
    (["--only", "01", "-p", "BATCH_SIZE", "1000000000"], "-p BATCH_SIZE: parameter BATCH_SIZE = 1000000000 with "
     "SEQ_LENS = [6, 12]: B = 1000000000, N = 12 needs at least "),
    (["--only", "01", "-p", "SEQ_LENS", "[1000000000]"], "-p SEQ_LENS: parameter SEQ_LENS = [1000000000]: 1000000000 "
     "tokens exceed the tiny model's 512 positions"),
    (["--only", "08", "-p", "BATCH_SIZES", "[1, 100000000]"], "-p BATCH_SIZES: parameter BATCH_SIZES = [1, 100000000] "
     "with MAX_SEQLEN = 12: B = 100000000, N = 12 needs at least "),
    (["--only", "11", "-p", "TOKENS", "200"], "-p TOKENS: parameter TOKENS = 200: 400 tokens exceed the micro model's"),
    (["--only", "10", "-p", "COPY_MB", "100000000"], "-p COPY_MB: parameter COPY_MB = 100000000 needs at least "),
    (["--only", "01", "-p", "SIZE", "gpt2", "-p", "SEQ_LENS", "[6, 1025]"],
     "-p SEQ_LENS: parameter SEQ_LENS = [6, 1025]: 1025 tokens exceed the gpt2 model's 1024"),
]  # fmt: skip


@pytest.mark.parametrize("args, message", HUGE, ids=[a[-2] for a, _ in HUGE])
def test_sizes_the_model_or_the_machine_cannot_hold_are_refused_before_anything_runs(tmp_path, capsys, args, message):
    assert runner.main(["--smoke", *args, "--out", str(tmp_path / "out")]) == 2
    said = capsys.readouterr()
    assert said.err.startswith(f"run_all: {message}") and len(said.err.splitlines()) == 1
    assert said.out == "" and not (tmp_path / "out" / "notebooks").exists()


def test_a_batch_size_only_the_naive_generator_cannot_hold_is_refused_where_a_notebook_runs_naive(capsys):
    """B = 20000 at N = 12 on the tiny model: a KV cache holds 8 GB (two steps' logits), the naive
    generator 92 GB. Notebook 01 runs naive at BATCH_SIZE; notebook 02 does not (the API still checks)."""
    run = runner.run_parameters(smoke=True, cuda=False, out_given=None)
    user = {"BATCH_SIZE": 20000}
    with pytest.raises(runner.RunError, match="-p BATCH_SIZE: .* B = 20000, N = 12 needs at least 92.5 GB"):
        runner.checked_sizes(["01_naive"], run, user, slice_run=False)
    if tokgen_sizes().device_memory("cpu")[0] > 9e9:  # a host with room for the cache
        runner.checked_sizes(["02_kv_cache"], run, user, slice_run=False)


def tokgen_sizes():
    from tokgen import sizes

    return sizes


def test_newest_transformers_folder_must_hold_transformers(tmp_path):
    with pytest.raises(runner.RunError, match="no transformers package in this folder"):
        runner.newest_transformers(tmp_path)


def test_first_on_path_puts_the_folder_first_and_restores(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/x")
    with runner.first_on_path(tmp_path):
        assert os.environ["PYTHONPATH"] == f"{tmp_path}{os.pathsep}/x"
    assert os.environ["PYTHONPATH"] == "/x"


def test_notebook_14_and_the_solutions_of_11_and_14_run_on_the_newest_transformers(tmp_path, monkeypatch):
    given = {}  # what each run got as its newest-transformers folder

    def fake_run(step, name, log, newest, run):
        given[name] = newest
        return {"status": "ok", "seconds": 0.0, "notebook": name.replace("solutions/", "solution ")}

    monkeypatch.setattr(runner, "run_logged", fake_run)
    monkeypatch.setattr(runner, "newest_transformers", lambda folder, users: tmp_path / "newest")
    monkeypatch.setattr(runner, "installed_transformers", lambda folder: "5.17.0")
    args = ["--smoke", "--only", "10,11,14", "--out", str(tmp_path / "out"), "--no-progress", "--solutions"]
    assert runner.main(args) == 0
    newest = tmp_path / "newest"
    assert given == {"10_cuda_graphs": None, "solutions/10_cuda_graphs": None, "11_sync_audit": None,
                     "solutions/11_sync_audit": newest, "14_deferred_stop": newest,
                     "solutions/14_deferred_stop": newest}  # fmt: skip
    rows = pd.read_csv(tmp_path / "out" / "data" / "run_all.csv").set_index("notebook")["transformers"]
    assert rows["solution 11_sync_audit"] == "5.17.0" and rows["14_deferred_stop"] == "5.17.0"
    given.clear()  # without solutions, 11 needs no newer transformers and none is set up
    monkeypatch.setattr(runner, "newest_transformers", lambda folder, users: pytest.fail("not needed"))
    args = ["--smoke", "--only", "11", "--no-solutions", "--out", str(tmp_path / "o2"), "--no-progress"]
    assert runner.main(args) == 0


def test_paths_on_the_command_line_are_relative_to_the_callers_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKGEN_CALLER_CWD", str(tmp_path / "caller"))  # run_all.sh sets it, then cds to the repository
    assert runner.caller_path(Path("out")) == tmp_path / "caller" / "out"
    assert runner.caller_path(Path("/abs/out")) == Path("/abs/out") and runner.caller_path(None) is None
    monkeypatch.delenv("TOKGEN_CALLER_CWD")
    monkeypatch.chdir(tmp_path)  # python -m tokgen_tools.runner: this process's directory
    assert runner.caller_path(Path("out")) == tmp_path / "out"


def test_a_relative_out_and_newest_transformers_are_the_callers(tmp_path, monkeypatch):
    given = {}

    def fake_run(step, name, log, newest, run):
        given[name] = newest
        return {"status": "ok", "seconds": 0.0, "notebook": name}

    caller = tmp_path / "caller"
    (caller / "nt" / "transformers").mkdir(parents=True)
    monkeypatch.setenv("TOKGEN_CALLER_CWD", str(caller))
    monkeypatch.setattr(runner, "run_logged", fake_run)
    monkeypatch.setattr(runner, "installed_transformers", lambda folder: "5.17.0")
    assert runner.main(["--smoke", "--only", "14", "--out", "rel", "--newest-transformers", "nt", "--no-progress"]) == 0
    assert given == {"14_deferred_stop": caller / "nt"}  # the kernel gets the caller's folder, not the repository's
    assert pd.read_csv(caller / "rel" / "data" / "run_all.csv")["notebook"].tolist() == ["14_deferred_stop"]


def test_run_all_sh_resolves_a_relative_out_from_where_it_was_called():
    # from /proc, --out x is /proc/x, which cannot be written (resolved in the repository, it could)
    cmd = ["bash", str(ROOT / "run_all.sh"), "--smoke", "--only", "00", "--out", "x", "-p", "BATCH_SIZE", "1000000000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd="/proc")
    assert proc.returncode == 2 and proc.stderr.startswith("run_all: cannot write to --out /proc/x"), proc.stderr


MISSING = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
BATCH_SIZE = 4  # sequences per batch
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder

# %%
import tokgen
from tokgen.display import say

try:
    tokgen.rows_at("98_other", RESULTS_DIR, "notebook 99", BATCH_SIZE=BATCH_SIZE)
except tokgen.MissingRows as err:
    say(f"*{err}*")
"""


def test_a_notebook_that_finds_no_rows_says_the_command_and_the_runner_repeats_it(tmp_path, monkeypatch, capsys):
    toy_repository(tmp_path / "repo", monkeypatch, notebook=MISSING)
    out = tmp_path / "out"
    assert runner.main(["--smoke", "--only", "99", "--out", str(out), "--no-progress"]) == 0
    said = capsys.readouterr().out.splitlines()
    note, end = next(line for line in said if "note:" in line), said[-1]  # the host's lines follow the note
    assert note == (
        f"      note: notebook 99 needs notebook 98's rows at BATCH_SIZE=4 (no data/98_other.csv yet): run "
        f"./run_all.sh --smoke --out {out} --only 98 -p BATCH_SIZE 4"
    )  # the console names the folder
    assert end.startswith("run_all: 1/1 notebooks ok in ")  # a smoke run runs no solution unless asked
    assert runner.MISSING_ROWS.search("solution 02 needs notebook 01's rows at BATCH_SIZE=32: run ...")
    nb = nbformat.read(out / "notebooks" / "99_toy.ipynb", as_version=4)
    assert clean.problems(nb) == []  # the notebook names no machine path: an --out outside the repository is DIR
    said = nb.cells[1].outputs[0].data["text/markdown"]
    assert said == "*notebook 99 needs notebook 98's rows at BATCH_SIZE=4 (no data/98_other.csv yet): run " \
                   "./run_all.sh --smoke --out DIR --only 98 -p BATCH_SIZE 4*"  # fmt: skip
    params = nb.cells[0].source  # where this run's results went, not the committed notebook's build/lab
    assert params.splitlines()[1] == f'RESULTS_DIR = ".."{clean.FOLDER_COMMENT}'


def test_a_cap_on_rounds_below_notebook_01s_first_rounds_is_refused_before_anything_runs():
    run = runner.run_parameters(smoke=True, cuda=False, out_given=None)
    with pytest.raises(runner.RunError, match="^-p MAX_RUNS: parameter MAX_RUNS = 1 is below RUNS = 2"):
        runner.checked_sizes(["01_naive"], run, {"MAX_RUNS": 1}, slice_run=False)
    runner.checked_sizes(["01_naive"], run, {"MAX_RUNS": 2}, slice_run=False)


# /proc/stat as Linux writes it (2 cores; clock ticks since boot), and the same machine 1000 ticks later
PROC_STAT_BEFORE = """cpu  9133606 152714 598522 6304637 13421 0 3849 2563 0 0
cpu0 4121681 54317 262891 3658488 2504 0 809 1261 0 0
cpu1 5011924 98396 335630 2646149 10916 0 3039 1302 0 0
intr 123 0 0
ctxt 456
"""
# +300 user, +50 nice, +100 system, +400 idle, +20 iowait, +10 irq, +20 softirq, +100 steal, +70 guest (in user)
PROC_STAT_AFTER = """cpu  9133906 152764 598622 6305037 13441 10 3869 2663 70 0
cpu0 4121831 54342 262941 3658688 2514 5 819 1311 35 0
cpu1 5012074 98421 335680 2646349 10926 5 3049 1352 35 0
"""


def test_cpu_times_reads_the_machines_line_of_proc_stat():
    assert runner.cpu_times(PROC_STAT_BEFORE) == {
        "busy": 9133606 + 152714 + 598522 + 0 + 3849,  # user nice system irq softirq; guest is in user
        "idle": 6304637 + 13421,  # idle iowait
        "steal": 2563,
    }
    assert runner.cpu_times("cpu  10 0 5 80\n") == {"busy": 15, "idle": 80, "steal": 0}  # an old kernel's 4 fields
    assert runner.cpu_times("cpu0 1 2 3 4 5 6 7 8\n") is None  # a core's line, not the machine's


def test_cpu_shares_over_a_run_are_the_busy_and_stolen_parts_of_all_cpu_time():
    before, after = runner.cpu_times(PROC_STAT_BEFORE), runner.cpu_times(PROC_STAT_AFTER)
    # busy 300+50+100+10+20 = 480, idle 400+20 = 420, steal 100: 1000 ticks in all
    assert runner.cpu_shares(before, after) == {"cpu_busy_pct": 48.0, "cpu_steal_pct": 10.0}
    blank = {"cpu_busy_pct": None, "cpu_steal_pct": None}
    assert runner.cpu_shares(None, after) == blank and runner.cpu_shares(before, None) == blank
    assert runner.cpu_shares(before, before) == blank  # no time passed
    assert runner.cpu_shares(after, before) == blank  # counters that went back (another boot): not a share
    went_back = {"busy": 50, "idle": 200, "steal": 0}  # one counter lower, the sum higher: still not a share
    assert runner.cpu_shares({"busy": 100, "idle": 0, "steal": 0}, went_back) == blank


def test_read_cpu_times_is_blank_where_there_is_no_proc_stat(tmp_path):
    assert runner.read_cpu_times(tmp_path / "missing") is None
    (tmp_path / "stat").write_text(PROC_STAT_BEFORE)
    assert runner.read_cpu_times(tmp_path / "stat") == runner.cpu_times(PROC_STAT_BEFORE)


def test_host_loop_ms_is_the_median_of_its_repeats(monkeypatch):
    """The runner's probe is tokgen's (tokgen.results), the one `tokgen.compare` takes around its rounds."""
    assert runner.host_loop_ms is results.host_loop_ms
    ticks = iter([0.0, 0.004, 1.0, 1.003, 2.0, 2.010])  # loops of 4, 3 and 10 ms
    monkeypatch.setattr(results, "time", type("Clock", (), {"perf_counter": staticmethod(lambda: next(ticks))}))
    assert results.host_loop_ms(repeats=3, n=10) == 4.0
    ticks = iter([0.0, 0.004, 1.0, 1.003, 2.0, 2.010])
    assert results.host_loops_ms(repeats=3, n=10) == [4.0, 3.0, 10.0]
    monkeypatch.undo()
    ms = runner.host_loop_ms(repeats=3)
    assert 0 < ms < 1000  # the real loop: a few ms, cheap beside a notebook
    assert results.host_probe([4.0, 3.0, 10.0], [6.0, 5.5, 2.5, 9.0]) == {
        "host_probe_ms_before": 4.0, "host_probe_ms_after": 5.75, "host_probe_min_ms": 2.5, "host_probe_max_ms": 10.0
    }  # fmt: skip


def test_a_ctrl_c_in_the_host_probe_after_a_notebook_keeps_its_results_and_row(tmp_path, monkeypatch, capsys):
    """The notebook has finished (its results promoted) when the probe after it runs: a Ctrl-C there
    records its row (the probe after it blank), says it finished, and runs nothing more."""
    root = toy_repository(tmp_path / "repo", monkeypatch)
    out = tmp_path / "out"
    ran = []

    def finished(name, *_, **__):
        ran.append(name)
        return {"notebook": name, "status": "ok", "failed_cell": "", "error": "", "parameters": "{}", "seconds": 1.0}

    loops = iter([3.0])

    def probe():
        if ran:  # after the notebook: the user presses Ctrl-C
            raise KeyboardInterrupt
        return next(loops)

    monkeypatch.setattr(runner, "run_notebook", finished)
    monkeypatch.setattr(runner, "host_loop_ms", probe)
    assert runner.main(["--smoke", "--only", "99", "--out", str(out), "--no-progress", "--solutions"]) == 130
    assert ran == ["99_toy"]  # the solution did not start
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"run_all: interrupted after 99_toy; finished: 99_toy; not run: none. 99_toy had finished and its results and "
        f"row are kept (the host probe after it is blank); the results in {out} are those of the finished notebooks."
    ]
    runs = pd.read_csv(out / "data" / "run_all.csv").set_index("notebook")
    assert runs.loc["99_toy", "host_loop_ms_before"] == 3.0 and pd.isna(runs.loc["99_toy", "host_loop_ms_after"])
    assert "interrupted" not in runs and not list((out / "data").glob(".*partial"))
    assert (root / "data" / "run_all.csv").read_text() == "notebook,status\n99_toy,ok\n"  # the reference untouched


@pytest.mark.parametrize("papermill_does", ["raises another error", "returns"])
def test_a_ctrl_c_that_papermill_turns_into_another_error_or_swallows_still_ends_the_run_as_interrupted(
    tmp_path, monkeypatch, capsys, papermill_does
):
    """Interrupted while it talks to a kernel, papermill may raise another error as it shuts the kernel down,
    or return: either way the run ends as interrupted (exit status 130, the one line, the notebook not kept
    as failed), not as a failed notebook (exit status 1, as a CI run at 0902024 ended)."""
    import papermill

    toy_repository(tmp_path / "repo", monkeypatch)
    out = tmp_path / "out"

    def interrupted(*_, **__):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C while a cell runs
            time.sleep(5)  # the handler raises here
        except KeyboardInterrupt:
            if papermill_does == "raises another error":
                raise RuntimeError("Kernel didn't respond in 60 seconds") from None

    monkeypatch.setattr(papermill, "execute_notebook", interrupted)
    saved = signal.getsignal(signal.SIGINT)
    try:
        code = runner.main(["--smoke", "--only", "99", "--out", str(out), "--no-progress"])
    finally:
        signal.signal(signal.SIGINT, saved)
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        f"run_all: interrupted during 99_toy; finished: none; not run: 99_toy. 99_toy's partial output was "
        f"discarded; the results in {out} are those of the finished notebooks."
    ]
    assert not runner.failed_notebook(out, "99_toy").exists() and not (out / "notebooks" / "99_toy.ipynb").exists()
    assert not list(out.rglob("staging-*"))
    with warnings.catch_warnings(record=True) as said:  # the interrupted cell's coroutine, collected on the way out
        warnings.warn("coroutine 'NotebookClient.async_execute_cell' was never awaited", RuntimeWarning, stacklevel=2)
    assert not said
    runner.main(["--list"])  # a new run starts unmarked: the same failure is then the notebook's own
    assert not runner.STOPPING.is_set()


def test_the_interrupted_line_names_what_finished_and_what_did_not_run():
    ok = {"status": "ok"}
    during = runner.interrupted_text("02_b", "02_b", ["02_b", "03_c"], [("01_a", ok)], Path("/o"))
    assert during == ("run_all: interrupted during 02_b; finished: 01_a; not run: 02_b, 03_c. 02_b's partial output "
                      "was discarded; the results in /o are those of the finished notebooks.")  # fmt: skip
    solution = runner.interrupted_text("solutions/02_b", "02_b", ["02_b", "03_c"], [("02_b", ok)], Path("/o"))
    assert solution.startswith("run_all: interrupted during solutions/02_b; finished: 02_b; not run: 03_c. ")
    after = runner.interrupted_text("solutions/02_b", "02_b", ["02_b", "03_c"],
                                    [("02_b", ok), ("solutions/02_b", ok)], Path("/o"))  # fmt: skip
    assert after.startswith("run_all: interrupted after solutions/02_b; finished: 02_b, solutions/02_b; not run: "
                            "03_c. solutions/02_b had finished and its results and row are kept")  # fmt: skip


def test_run_logged_records_the_host_and_says_it_with_the_busiest_processes(tmp_path, monkeypatch, capsys):
    loops = iter([3.0, 5.5])
    stats = iter([runner.cpu_times(PROC_STAT_BEFORE), runner.cpu_times(PROC_STAT_AFTER)])
    monkeypatch.setattr(runner, "host_loop_ms", lambda: next(loops))
    monkeypatch.setattr(runner, "read_cpu_times", lambda: next(stats))
    monkeypatch.setattr(runner, "top_processes", lambda: ["  PID %CPU COMMAND", "  42 99.0 busy"])
    row = runner.run_logged("[1/1]", "99_toy", tmp_path / "k.log", None, lambda: {"status": "ok", "seconds": 2.0})
    assert {k: row[k] for k in runner.HOST_COLUMNS} == {
        "host_loop_ms_before": 3.0, "host_loop_ms_after": 5.5, "cpu_busy_pct": 48.0, "cpu_steal_pct": 10.0
    }  # fmt: skip
    said = capsys.readouterr().out.splitlines()
    assert said[-3:] == [
        "      host: Python loop 3.00 ms before, 5.50 ms after; machine CPU busy 48.0%, stolen 10.0% over the run",
        "          PID %CPU COMMAND",
        "          42 99.0 busy",
    ]
    assert runner.host_text({**row, "cpu_busy_pct": None}).endswith("CPU shares not measured (no /proc/stat)")


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="Linux only")
def test_the_probe_reads_this_machine():
    shares = runner.host_probe(runner.host_loop_ms(), runner.read_cpu_times())
    assert set(shares) == set(runner.HOST_COLUMNS) and shares["host_loop_ms_after"] > 0
    lines = runner.top_processes()
    assert lines and "PID" in lines[0] and len(lines) <= runner.TOP_PROCESSES + 1
    assert not any("ps -eo" in line for line in runner.top_processes(n=10_000))  # every process, but not ps itself


def test_run_all_csv_puts_the_host_columns_last_and_leaves_older_rows_blank(tmp_path):
    (tmp_path / "data").mkdir()
    old = "notebook,status,seconds,smoke,finished_at,gpu,commit\n01_naive,ok,9.0,False,2026-01-01T00:00+00:00,H,abc\n"
    (tmp_path / "data" / "run_all.csv").write_text(old)
    host = {"host_loop_ms_before": 3.1, "host_loop_ms_after": 3.2, "cpu_busy_pct": 7.5, "cpu_steal_pct": None}
    runner.record_timings([{"notebook": "05_torch_compile", "status": "ok", "seconds": 5.0, **host}], tmp_path, False)
    runs = pd.read_csv(tmp_path / "data" / "run_all.csv", keep_default_na=False).set_index("notebook")
    assert list(runs.columns[-4:]) == list(runner.HOST_COLUMNS)
    assert runs.loc["05_torch_compile", "cpu_busy_pct"] == "7.5" and runs.loc["05_torch_compile", "cpu_steal_pct"] == ""
    assert (runs.loc["01_naive", list(runner.HOST_COLUMNS)] == "").all()  # measured before the probe: blank
    runner.record_timings([{"notebook": "06_eos_sync_profile", "status": "ok", "seconds": 1.0}], tmp_path, False)
    runs = pd.read_csv(tmp_path / "data" / "run_all.csv")
    assert list(runs.columns[-4:]) == list(runner.HOST_COLUMNS)  # still last after a row without them
    assert runs.set_index("notebook").loc["05_torch_compile", "host_loop_ms_after"] == 3.2
    fresh = tmp_path / "fresh"  # a first row, no table before it: the same order
    runner.record_timings([{"notebook": "05_torch_compile", "status": "ok", "seconds": 5.0, **host}], fresh, False)
    assert list(pd.read_csv(fresh / "data" / "run_all.csv").columns[-4:]) == list(runner.HOST_COLUMNS)
    measured = readme._measured_runs(tmp_path)  # the README's reader takes the table with the new columns
    assert measured["notebook"].tolist() == ["01_naive", "05_torch_compile", "06_eos_sync_profile"]
    assert readme._distinct(measured, "gpu") == ["H", "none (CPU)"]


def test_notebook_06_profiles_enough_windows_by_default_to_show_a_direction():
    """rvA15 S2: at 3 windows every direction clause of notebook 06 could only say "3 windows cannot show a
    direction"; its default is tokgen.gaps.MIN_WINDOWS, the fewest whose agreeing signs can show one. The whole GPU
    and the slices run it with that default (no runner size overrides WINDOWS); the smoke run keeps one window."""
    import tokgen.gaps

    assert runner.declared_values(runner.NOTEBOOKS / "06_eos_sync_profile.py")["WINDOWS"] == tokgen.gaps.MIN_WINDOWS
    assert all("WINDOWS" not in sizes for sizes in runner.SLICE_SIZES.values())
    assert runner.SMOKE["WINDOWS"] == 1
