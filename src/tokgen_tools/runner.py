"""Execute the notebooks in order with papermill, one fresh kernel each (what run_all.sh calls).

    python -m tokgen_tools.runner                     # every notebook, GPU, reference results in place
    python -m tokgen_tools.runner --smoke             # tiny model and sizes, CPU allowed, into build/smoke
    python -m tokgen_tools.runner --only 07 --only 08 -p BATCH_SIZE 16
    python -m tokgen_tools.runner --slice             # notebooks 01-08 in the two slices that bracket the L40S

The notebooks' source of truth is the jupytext file notebooks/NN_name.py; each run writes the
executed notebook, the CSVs under <out>/data and the figures under <out>/figures, then, on a GPU
run or with --solutions, runs the notebook's worked solution (solutions/NN_name.py) into
<out>/solutions. Paths on the command line are relative to the caller's working directory
($TOKGEN_CALLER_CWD, which run_all.sh sets before it changes into the repository). Sizes given
with -p that the model or the machine cannot hold stop the run before anything starts
(tokgen.params.check_sizes). A failing notebook does not stop the others; the failures are
listed at the end and the exit code is 1. A notebook runs in a staging copy of <out>: what it
writes replaces the previous results only once it has finished and been cleaned for its readers
(tokgen_tools.clean), so a failed or interrupted run leaves them as they were. A failed notebook
is kept in build/failed/NAME (with --out or --smoke: <out>/failed/NAME). A smoke run never writes
into the committed reference folders unless told to (--replace-reference).
"""

import argparse
import ast
import contextlib
import datetime
import filecmp
import importlib.metadata
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pandas as pd

from tokgen.params import ParameterError, check, check_rounds, check_sizes
from tokgen.results import ROOT, data_dir, environment, host_loop_ms, read_table
from tokgen_tools import clean

NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = ROOT / "solutions"  # solutions/NN_name.py: the worked solutions to notebook NN's exercises
REFERENCE = ("data", "figures", "notebooks", "slice", "solutions")  # the committed results' folders
SLICE_NOTEBOOKS = [f"{n:02d}" for n in range(1, 9)]  # the article's experiments (09 shows both regimes)
# On 8 SMs one N = 400 generation takes 7.6 s (kv_dynamic) to 8.5 s (kv_static), a naive one minutes, and
# B = 256 in 08 about 5 s; the slice's run at the whole GPU's sizes took 30 min (ae743e8). These sizes
# drop the points whose finding the slice's earlier run showed at the next size down (N = 400 as N = 200,
# B = 256 as B = 64: GPU-bound, same sign), keeping the run within its 15 minutes; -p still overrides them.
SLICE_SIZES = {
    "01_naive": {"SEQ_LENS": [50, 100, 200]},
    "02_kv_cache": {"SEQ_LENS": [50, 100, 200]},  # naive beside the cache at each N: the sizes 01 can afford
    "03_expandable_segments": {"SEQ_LENS": [100, 200]},
    "04_static_cache": {"SEQ_LENS": [100, 200]},
    "08_batch_sweep": {"BATCH_SIZES": [1, 16, 64], "COMPILED_BATCH_SIZES": [1, 16, 64]},
}
OUT_ELSEWHERE = "DIR"  # an --out outside the repository, as a notebook's text names it (rerun_command)
NAIVE_AT = re.compile(r'"naive", \w+, batch_size=([A-Z_]+)')  # a notebook's naive generations, by batch parameter
MISSING_ROWS = re.compile(r"^(notebook|solution) \S+ needs notebook \d\d's rows\b")  # tokgen.MissingRows, said
SLICE_OUT = ROOT / "slice"  # --slice writes its notebooks, data and figures here, beside the whole GPU's
LAST = ("09_summary",)  # reads the other notebooks' data (13's slices and the slice runs included): runs last
# The backend ipykernel picks when MPLBACKEND is unset: a headless machine's MPLBACKEND=Agg would leave
# every executed notebook without its figures (the 9d0eb57 run's notebooks 06, 07, 10 and 12, review r8)
INLINE_FIGURES = "module://matplotlib_inline.backend_inline"
NEWEST = {"14_deferred_stop"}  # notebooks that run on the newest transformers (--newest-transformers)
# solutions whose exercises need it: 11's compares notebook 11's audit with a newer transformers, 14's
# measures the deferred stop check at another batch size
NEWEST_SOLUTIONS = {"11_sync_audit", "14_deferred_stop"}
NEWEST_SPEC = "transformers>=5.17"  # DeferredStopCheck appeared in 5.17
# The host probe around each notebook and solution (`host_probe`): its columns, last in run_all.csv
HOST_COLUMNS = ("host_loop_ms_before", "host_loop_ms_after", "cpu_busy_pct", "cpu_steal_pct")
PROC_STAT = Path("/proc/stat")  # Linux: the whole machine's CPU time since boot
TOP_PROCESSES = 5  # processes in the `ps` snapshot printed after each notebook

# Tiny sizes for --smoke: every notebook runs in seconds, on the CPU if need be. A notebook gets
# only the names its parameters cell declares.
SMOKE = {
    "SIZE": "tiny",
    "RUNS": 2,
    "MAX_RUNS": 4,  # sequential comparisons: looks at 2 and 4 rounds
    "BATCH_SIZE": 4,
    "MAX_SEQLEN": 12,
    "SEQ_LENS": [6, 12],
    "BATCH_SIZES": [1, 4],
    "COMPILED_BATCH_SIZES": [1, 4],
    "WINDOW": [3, 9],
    "WINDOWS": 1,  # one profiled window per generator: the smoke run tests the code, not the gaps
    "STEPS_PER_GRAPH": [1, 4],
    "TOKENS": 8,
    "DISTINCT_PROMPTS": 8,
    "DISTINCT_BATCH": 4,
    "DISTINCT_SEQLEN": 12,
    "COPY_MB": 16,
    "SLICE_SMS": [8, 16],
    "MAP_SMS": [8],
    "SWEEP_BATCH_SIZES": [1, 4],
}


# Set by a Ctrl-C (`on_interrupt`): whatever papermill raises or returns after it ends the run as interrupted
STOPPING = threading.Event()


class RunError(Exception):
    """A problem with the command line or the output folder: one line, exit code 2."""


def notebook_names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def select(only: list[str]) -> list[str]:
    """Notebook names matching --only (full name or its number), in the order they run (by number,
    `LAST` at the end); a clear error for unknown ones."""
    names = [n for n in notebook_names() if n not in LAST] + [n for n in notebook_names() if n in LAST]
    if not only:
        return names
    chosen = []
    for item in only:
        for want in filter(None, (w.strip() for w in item.split(","))):
            stem = Path(want).stem
            matches = [n for n in names if n == stem or n.split("_", 1)[0] == stem]
            if not matches:
                raise RunError(f"unknown notebook {want!r}; choose from: {', '.join(names)}")
            chosen += [m for m in matches if m not in chosen]
    return [n for n in names if n in chosen]


def declared_parameters(name: str) -> list[str]:
    """The names in a notebook's parameters cell, read from its jupytext file."""
    return declared_in(NOTEBOOKS / f"{name}.py")


def declared_in(path: Path) -> list[str]:
    """The names in the parameters cell of the jupytext file `path` (a notebook or a solution)."""
    text = path.read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)(?=\n# %%|\Z)', text, re.S)
    return re.findall(r"^([A-Z][A-Z0-9_]*) = ", cell.group(1), re.M) if cell else []


def declared_values(path: Path) -> dict:
    """The values of the parameters cell of the jupytext file `path`, as written there."""
    text = path.read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)(?=\n# %%|\Z)', text, re.S)
    values = {}
    for node in ast.parse(cell.group(1) if cell else "").body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError, SyntaxError):
                values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def checked_sizes(names: list[str], run: dict, user: dict, slice_run: bool) -> None:
    """The sizes given with -p (and --slice's SMs) against the model and the machine, in every
    selected notebook with the values it would run with (`tokgen.params.check_sizes`): one line
    naming the parameter before anything runs."""
    if not user:
        return
    for name in names:
        source = NOTEBOOKS / f"{name}.py"
        values = declared_values(source)
        values |= {k: v for k, v in notebook_parameters(name, run, user, slice_run).items() if k in values}
        naive = set(NAIVE_AT.findall(source.read_text())) & set(values)  # it re-runs every position at these
        given = None if {"SIZE", "DEVICE"} & set(user) else user  # another model or device: every size anew
        try:
            check_sizes(values, given=given, recompute=naive)
            check_rounds(values, given=user)
        except ParameterError as err:
            raise RunError(f"-p {err.name}: {err}") from None


def checked_parameters(pairs: list[tuple[str, str]], names: list[str]) -> dict:
    """`-p NAME VALUE` pairs, parsed and checked like the notebooks do; a name none of the selected
    notebooks declares is an error that lists the ones they do."""
    declared = sorted({p for n in names for p in declared_parameters(n)})
    params = {}
    for name, value in pairs:
        if name in clean.FOLDERS:  # a folder outside the staging copy would be written before the run ends
            raise RunError(f"-p {name}: the runner sets the notebooks' folders; to write elsewhere, use --out DIR")
        if name not in declared:
            raise RunError(f"-p {name}: no selected notebook has this parameter; they have: {', '.join(declared)}")
        try:
            params[name] = check(name, value)
        except ParameterError as err:
            raise RunError(f"-p {name}: {err}") from None
    return params


def notebook_parameters(name: str, run: dict, user: dict, slice_run: bool) -> dict:
    """What notebook `name` runs with: the run's parameters, then its SLICE_SIZES on a slice run,
    then the command line's -p, which win."""
    return {**run, **(SLICE_SIZES.get(name, {}) if slice_run else {}), **user}


def bracketing_slices() -> list[int]:
    """The two SM counts whose copy bandwidths, measured by notebook 13 (data/13_slices.csv),
    bracket the L40S's: what `--slice` without a number runs, one after the other."""
    from tokgen.gpu_slice import L40S_GBS, bracketing  # torch: only once --slice asks for it

    path = ROOT / "data" / "13_slices.csv"
    if not path.exists():
        raise RunError("--slice: no slices measured yet: run notebook 13 first, or name the SMs: --slice 8")
    rows = read_table(path)
    try:
        return list(bracketing(dict(zip(rows["gpu_sms"].astype(int), rows["copy_gbs"]))))
    except ValueError as err:
        params = rows["params"].iloc[-1] if "params" in rows else None
        whole = json.loads(params).get("WHOLE_GPU_GBS") if isinstance(params, str) else None
        if whole is not None and whole < L40S_GBS:  # a GPU slower than the L40S: no slice of it can reach it
            raise RunError(f"--slice: this GPU copies at {whole:,.0f} GB/s (notebook 13), below the L40S's "
                           f"{L40S_GBS:,} GB/s: no slice of it brackets the L40S. To run notebooks 01–08 in a slice "
                           "anyway, name its SMs: --slice 8") from None  # fmt: skip
        raise RunError(f"--slice: {err}, or name the SMs: --slice 8") from None


def newest_transformers(folder: Path | None, users: str = "") -> Path:
    """A folder holding transformers >= 5.17 to put first on a kernel's path: `folder`, else
    build/newest-transformers, installed there with pip on first use (for `users`, as said)."""
    target = folder or ROOT / "build" / "newest-transformers"
    if folder is None and not (target / "transformers").is_dir():
        print(f"run_all: installing {NEWEST_SPEC} into {target} (for {users})", flush=True)
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--target", str(target), NEWEST_SPEC]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            raise RunError(f"could not install {NEWEST_SPEC} (offline?): give --newest-transformers DIR")
    if not (target / "transformers").is_dir():
        raise RunError(f"--newest-transformers {target}: no transformers package in this folder")
    return target


@contextlib.contextmanager
def first_on_path(folder: Path | None):
    """Kernels started inside see `folder` first on PYTHONPATH (they inherit the environment)."""
    saved = os.environ.get("PYTHONPATH")
    if folder is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), saved]))
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def caller_path(path: Path | None) -> Path | None:
    """A path given on the command line, relative to the directory the caller ran run_all.sh from
    ($TOKGEN_CALLER_CWD; run_all.sh itself changes into the repository), else to this process's."""
    if path is None or path.is_absolute():
        return path
    return Path(os.environ.get("TOKGEN_CALLER_CWD") or os.getcwd()) / path


def rerun_command(args, sms: int | None, out: Path) -> str:
    """How to run more notebooks into this run's folder, the way this run was called, from the
    repository: what a notebook that misses another's rows tells its reader (`tokgen.rows_at`). An
    executed notebook names no machine path: an --out outside the repository is `OUT_ELSEWHERE`
    there, and the runner's console shows the folder itself (`execute`)."""
    words = ["./run_all.sh", *(["--smoke"] if args.smoke else []), *(["--slice", str(sms)] if sms is not None else [])]
    if args.out is not None:
        words += [
            "--out",
            str(out.relative_to(ROOT.resolve())) if out.is_relative_to(ROOT.resolve()) else OUT_ELSEWHERE,
        ]
    return " ".join(words)


def output_folder(out: Path | None, smoke: bool, sms: int | None = None, several: bool = False) -> Path:
    """Where a run writes: --out if given (with several slices, its sm<N>/ for each); else the
    repository, a slice run's into slice/sm<N>/, and for a smoke run build/smoke (a slice run's:
    build/smoke/slice/sm<N>), never the reference folders."""
    if out is None:
        base = ROOT / "build" / "smoke" if smoke else ROOT
        out = base / "slice" / f"sm{sms}" if sms is not None else base
    elif sms is not None and several:
        out = out / f"sm{sms}"
    return out.resolve()


def holds_reference(out: Path) -> bool:
    """Whether <out> is the repository itself or lies in one of its committed results' folders."""
    root = ROOT.resolve()
    return out == root or any(out == root / d or root / d in out.parents for d in REFERENCE)


def guard_reference(out: Path, smoke: bool, replace: bool) -> None:
    """A smoke run (tiny model, numbers that measure nothing) writes over the reference results
    only when asked to with --replace-reference, and then says so."""
    if not (smoke and holds_reference(out)):
        return
    if not replace:
        raise RunError(
            f"--out {out} holds the reference results, which a smoke run does not replace: "
            "choose another --out, or give --replace-reference"
        )
    print(f"run_all: smoke results (tiny model) replace the reference ones in {out} (--replace-reference)")


def work_dir(out: Path) -> Path:
    """Where staging copies and failed notebooks go: build/ in the repository, else <out> itself."""
    return out / "build" if out == ROOT else out


def failed_notebook(out: Path, name: str) -> Path:
    """Where a failed run of notebook `name` (or of its solution, "solutions/NAME") is kept."""
    folder, _, stem = name.rpartition("/")
    return work_dir(out) / "failed" / name / (folder or "notebooks") / f"{stem}.ipynb"


def solution_of(name: str) -> Path | None:
    """Notebook `name`'s worked solution, solutions/<name>.py, if it has one."""
    path = SOLUTIONS / f"{name}.py"
    return path if path.exists() else None


def run_notebook(name: str, out: Path, parameters: dict, progress: bool) -> dict:
    """Execute one notebook into <out>/notebooks/<name>.ipynb; returns its status row.

    It runs in a staging folder holding a copy of <out>/data (later notebooks read earlier
    ones' CSVs), as its working directory's parent, which is where RESULTS_DIR ".." points.
    Only if it succeeds do its notebook, CSVs and figures replace those in <out>; a failed one
    is kept for inspection (`failed_notebook`), and an interrupted one changes nothing.
    """
    return execute(NOTEBOOKS / f"{name}.py", name, out, parameters, progress, data_from=out)


def run_solution(name: str, out: Path, parameters: dict, progress: bool, data_from: Path) -> dict:
    """Execute notebook `name`'s solution the same way into <out>/solutions/<name>.ipynb; its
    DATA_DIR and RESULTS_DIR ".." are the staging copy of <data_from>/data. Only the executed notebook
    and the solution's own table, data/<name>_solution.csv (its measurements, one row each, which it
    reads its sentences from; review rv19A S5), are kept: what else it writes (snapshots, any other
    table) stays in the staging folder."""
    row = execute(SOLUTIONS / f"{name}.py", f"solutions/{name}", out, parameters, progress, data_from)
    return row | {"notebook": f"solution {name}"}  # its row in run_all.csv


def recorded(parameters: dict) -> str:
    """`parameters` as run_all.csv records them: a path inside the repository relative to its root,
    so a committed row names no machine path (`SLICE_RESULTS_DIR`: the slices' folder)."""

    def relative(value):
        if isinstance(value, str) and Path(value).is_absolute() and Path(value).is_relative_to(ROOT):
            return str(Path(value).relative_to(ROOT))
        return value

    return json.dumps({k: relative(v) for k, v in parameters.items()})


def execute(source: Path, name: str, out: Path, parameters: dict, progress: bool, data_from: Path) -> dict:
    """Execute the jupytext file `source` as <out>/<folder>/<stem>.ipynb (`name`: "stem" for
    notebooks/, "solutions/stem") in a staging folder with a copy of <data_from>/data; on success,
    clean it and promote it (a notebook: with everything it wrote); returns its status row."""
    import jupytext
    import papermill

    folder, _, stem = name.rpartition("/")
    folder = folder or "notebooks"
    declared = declared_in(source)
    params = {k: v for k, v in parameters.items() if k in declared}
    work_dir(out).mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"staging-{name.replace('/', '-')}-", dir=work_dir(out)))
    try:
        if (data_from / "data").is_dir():
            shutil.copytree(data_from / "data", stage / "data")
        target = stage / folder / f"{stem}.ipynb"
        target.parent.mkdir(parents=True)
        jupytext.write(jupytext.read(source), target)
        started = time.time()
        row = {"notebook": name, "status": "ok", "failed_cell": "", "error": "", "parameters": recorded(params)}
        try:
            papermill.execute_notebook(
                str(target),
                str(target),
                parameters=params,
                kernel_name="python3",
                cwd=str(target.parent),
                progress_bar=progress,
            )
        except papermill.PapermillExecutionError as err:
            first = str(err.evalue).strip().splitlines()[0] if str(err.evalue).strip() else ""
            row.update(status="failed", failed_cell=err.exec_count, error=f"{err.ename}: {first}"[:300])
        except Exception as err:  # noqa: BLE001 - a kernel that dies must not stop the other notebooks
            row.update(status="failed", error=f"{type(err).__name__}: {err}".splitlines()[0][:300])
        if STOPPING.is_set():  # a Ctrl-C that papermill turned into another error, or swallowed: not a failure
            raise KeyboardInterrupt
        if row["status"] == "ok":
            row.update(tidy(target, folders=data_from == out and not holds_reference(out)))
            row["notes"] = [n.replace(f"--out {OUT_ELSEWHERE} ", f"--out {out} ") for n in row.get("notes", [])]
        row["seconds"] = round(time.time() - started, 1)
        failed = failed_notebook(out, name).parents[1]
        shutil.rmtree(failed, ignore_errors=True)  # a previous failure of this notebook is stale either way
        if row["status"] == "ok":
            own = [p for p in [stage / "data" / f"{stem}_solution.csv"] if p.exists()]  # a solution's own table
            promote(stage, out, only=None if folder == "notebooks" else [target, *own])
        else:
            failed.parent.mkdir(parents=True, exist_ok=True)
            stage.rename(failed)
        return row
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def tidy(path: Path, folders: bool = False) -> dict:
    """Clean the executed notebook at `path` for its readers (tokgen_tools.clean; `folders`: its
    parameters cell shows the folders it wrote to and read from, where they lie beside it); what
    cleaning cannot fix (an absolute path in an output, a warning it cannot tell) fails the
    notebook. An ok notebook's lines saying another's rows are missing come back as its "notes"."""
    import nbformat

    nb = clean.clean(nbformat.read(path, as_version=4), folders=folders)
    nbformat.write(nb, path)
    left = clean.problems(nb)
    if left:
        return {"status": "failed", "error": f"not clean ({len(left)} problems): {left[0]}"[:300]}
    return {"notes": missing_rows_said(nb)}


def missing_rows_said(nb) -> list[str]:
    """The lines of a notebook's outputs where it says it went on without rows of another notebook
    (`tokgen.results.MissingRows`), once each."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            texts = [out.get("text", "")] + [str(v) for k, v in out.get("data", {}).items() if k in clean.TEXTS]
            for line in "\n".join(texts).splitlines():
                line = line.strip().strip("*").strip()
                if MISSING_ROWS.search(line) and line not in found:
                    found.append(line)
    return found


def promote(stage: Path, out: Path, only: list[Path] | None = None) -> None:
    """Copy what a finished notebook wrote (new or changed files; or just the files `only`) from its
    staging folder into <out>."""
    for path in sorted(stage.rglob("*")) if only is None else only:
        dest = out / path.relative_to(stage)
        if path.is_file() and not (dest.exists() and filecmp.cmp(path, dest, shallow=False)):
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)


def record_timings(rows: list[dict], out: Path, smoke: bool) -> None:
    """data/run_all.csv: one row per notebook (and solution) of its latest successful run (wall
    time, parameters, and last the host probe's `HOST_COLUMNS`, blank where not measured); a failure
    leaves the previous row as it was, like the previous results."""
    rows = [{k: v for k, v in r.items() if k != "notes"} for r in rows if r["status"] == "ok"]
    if not rows:
        return
    path = data_dir(out) / "run_all.csv"
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    new = pd.DataFrame([{**environment(), **r, "smoke": smoke, "finished_at": stamp} for r in rows])
    if path.exists():
        old = read_table(path, keep_default_na=False)
        new = pd.concat([old[~old["notebook"].isin(new["notebook"])], new], ignore_index=True)
    last = [c for c in HOST_COLUMNS if c in new]  # the host probe's columns trail the others
    new = new[[c for c in new.columns if c not in last] + last]
    partial = path.with_name(f".{path.name}.partial")  # a Ctrl-C while writing leaves the old table whole
    new.sort_values("notebook").to_csv(partial, index=False)
    os.replace(partial, path)


def prepare_out(out: Path) -> None:
    """<out> must be a folder we can write; staging folders left by killed runs are removed."""
    try:
        work_dir(out).mkdir(parents=True, exist_ok=True)  # <out> itself, or <out>/build in the repository
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".tokgen-probe-")
        probe.close()
    except OSError as err:
        raise RunError(f"cannot write to --out {out}: {err.strerror or err}") from None
    for stale in work_dir(out).glob("staging-*"):
        shutil.rmtree(stale, ignore_errors=True)


@contextlib.contextmanager
def kernel_output_to(log: Path):
    """Send what the kernels write to stderr (their startup warnings, their tracebacks when
    Ctrl-C reaches them too) and papermill's log lines to `log` instead of the console: kernels inherit
    file descriptor 2."""
    sys.stderr.flush()
    saved, console = os.dup(2), sys.stderr
    papermill_log = logging.getLogger("papermill")  # "Kernel died ..." when Ctrl-C reaches the kernel first
    with open(log, "a") as f:
        os.dup2(f.fileno(), 2)
        sys.stderr = open(saved, "w", closefd=False)  # this process (progress bars) still writes to the console
        handler = logging.StreamHandler(f)
        papermill_log.addHandler(handler)
        papermill_log.propagate = False
        try:
            yield
        finally:
            papermill_log.removeHandler(handler)
            papermill_log.propagate = True
            sys.stderr.flush()
            sys.stderr = console
            os.dup2(saved, 2)
            os.close(saved)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run_all.sh",
        description="Execute the notebooks with papermill.",
        epilog="run_all.sh --test [pytest arguments] runs the linter and the test suite instead; "
        "run_all.sh --quick [--out DIR] [--memory-gb N] this GPU against the reference run in minutes "
        "(run_all.sh --quick --help).",
    )
    p.add_argument("--smoke", action="store_true", help="tiny model and sizes, CPU allowed; writes to build/smoke")
    p.add_argument("--only", action="append", default=[], metavar="NOTEBOOK", help="run only this notebook")
    p.add_argument("--out", type=Path, help="where notebooks/, data/, figures/ go, relative to the current directory "
                   "(default: the repository on a GPU; build/smoke for --smoke or without a GPU)")  # fmt: skip
    p.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="set a parameter; VALUE is read as YAML, like papermill -y: 16, [1, 4, 16], cpu")  # fmt: skip
    p.add_argument("--slice", nargs="?", const="chosen", metavar="SMS",
                   help="run notebooks 01-08 in a green-context slice of SMS SMs, into slice/smSMS (default: "
                   "in both slices whose bandwidths, measured by notebook 13, bracket the L40S's)")  # fmt: skip
    p.add_argument("--newest-transformers", type=Path, metavar="DIR",
                   help=f"a folder with {NEWEST_SPEC} for notebook 14 and solutions 11, 14 "
                        "(default: pip, into build/)")  # fmt: skip
    p.add_argument("--solutions", action=argparse.BooleanOptionalAction,
                   help="run each notebook's worked solution (solutions/NN_name.py) after it "
                        "(default: on a GPU run, not on a smoke run; a slice run never)")  # fmt: skip
    p.add_argument("--replace-reference", action="store_true",
                   help="let a smoke run (or the CPU fallback) replace the repository's reference results")  # fmt: skip
    p.add_argument("--list", action="store_true", help="list the notebooks in the order they run (09 last) and exit")
    p.add_argument("--no-progress", action="store_true", help="no papermill progress bars")
    return p


def cuda_available() -> bool:
    import torch  # only once the arguments are checked: --help and mistakes answer at once

    return torch.cuda.is_available()


def on_interrupt(signum, frame):
    """SIGINT's handler while the runner runs (`main` installs it): raises KeyboardInterrupt, as Python's
    own does, but first marks the run as stopping (`STOPPING`), since papermill, interrupted while it talks
    to a kernel, may raise another error as it shuts the kernel down, or none: the run must still end as
    interrupted, with exit status 130 (a CI run at 0902024 ended with 1, for a reason its log did not show).
    From here on, the interrupted cell's never-awaited coroutine and asyncio's orphaned tasks print nothing:
    one line is all a Ctrl-C says."""
    STOPPING.set()
    warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
    logging.getLogger("asyncio").disabled = True
    raise KeyboardInterrupt


def main(argv=None) -> int:
    # Started in the background from a script, a process inherits SIGINT ignored, and Python then
    # never raises KeyboardInterrupt: Ctrl-C (or kill -INT) must stop a run wherever it was started.
    STOPPING.clear()
    logging.getLogger("asyncio").disabled = False
    signal.signal(signal.SIGINT, on_interrupt)
    args = parser().parse_args(argv)
    args.out, args.newest_transformers = caller_path(args.out), caller_path(args.newest_transformers)
    if args.list:
        print("\n".join(select([])))
        return 0
    if not args.slice:
        return run(args, None)
    try:
        if args.slice != "chosen":  # a bad SM count or notebook answers before torch loads
            checked_parameters([("GPU_SMS", args.slice)], select(args.only or SLICE_NOTEBOOKS))
        if not cuda_available():
            raise RunError(
                "--slice runs notebooks in a slice of a CUDA GPU, and this machine has none: run without --slice"
            )
        sizes = bracketing_slices() if args.slice == "chosen" else [args.slice]
    except RunError as err:
        print(f"run_all: {err}", file=sys.stderr)
        return 2
    codes = [run(args, sms, several=len(sizes) > 1) for sms in sizes]  # one slice after the other
    if max(codes) == 0 and not args.smoke:
        print("run_all: `./run_all.sh --only 09` puts these slices' verdicts beside the whole GPU's.")
    return max(codes)


def run_parameters(smoke: bool, cuda: bool, out_given: Path | None) -> dict:
    """What every notebook of a run gets: the runner's folders and, in a smoke run, the tiny sizes."""
    # the notebooks' own default, build/lab, keeps a JupyterLab reader from overwriting the reference
    # results; the runner writes into its staging copy of <out> (RESULTS_DIR "..": see run_notebook)
    sizes = dict(SMOKE, DEVICE="cuda" if cuda else "cpu") if smoke else {}
    if smoke and not cuda:
        sizes["COMPILE_BACKEND"] = "eager"  # inductor's C++ build takes minutes on a small CPU
    parameters = {"RESULTS_DIR": "..", "DATA_DIR": ".."} | sizes
    if not smoke:
        # where --slice wrote: <out>/sm<N> with --out, else slice/sm<N> (the staging copies only data/)
        parameters["SLICE_RESULTS_DIR"] = str(out_given.resolve() if out_given else SLICE_OUT)
    return parameters


@contextlib.contextmanager
def environment_variable(name: str, value: str):
    """`name` set to `value` for the kernels started inside (they inherit the environment)."""
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def run(args, sms, several: bool = False) -> int:
    """One run of the selected notebooks: on the whole GPU (`sms` None) or in a slice of `sms` SMs."""
    try:
        names = select(args.only or (SLICE_NOTEBOOKS if sms is not None else []))
        parameters_ = [*args.parameter, *([("GPU_SMS", str(sms))] if sms is not None else [])]
        user = checked_parameters(parameters_, names)
        smoke = args.smoke or not cuda_available()  # with --smoke, a refusal below answers before torch loads
        if smoke and not args.smoke:
            print(
                "run_all: no CUDA GPU here, so running the smoke mode (tiny model, CPU) instead of the reference run."
            )
        out = output_folder(args.out, smoke, None if sms is None else int(sms), several)
        guard_reference(out, smoke, args.replace_reference)
        prepare_out(out)
        cuda = cuda_available()
        parameters = run_parameters(smoke, cuda, args.out)
        checked_sizes(names, parameters, user, slice_run=sms is not None and not smoke)
        # a solution's smoke run tests its code against the reference results: the tests run them, or --solutions
        with_solutions = sms is None and (args.solutions if args.solutions is not None else not smoke)
        users = [n for n in names if n in NEWEST] + [
            f"solution {n}" for n in names if with_solutions and n in NEWEST_SOLUTIONS
        ]
        newest = newest_transformers(args.newest_transformers, ", ".join(users)) if users else None
    except RunError as err:
        print(f"run_all: {err}", file=sys.stderr)
        return 2
    # Solutions take the run's sizes, not -p (their names may mean other sizes), and read the staging
    # copy of the run's data; a smoke run's read the reference results, as a CPU writes no CUDA tables.
    # A slice run has none: solutions do not take GPU_SMS.
    # RESULTS_DIR: where a solution records its own table (`run_solution` keeps it).
    folders = {"DATA_DIR": "..", "RESULTS_DIR": ".."}
    solutions = folders | {k: v for k, v in parameters.items() if k not in clean.FOLDERS}
    solution_data = ROOT if smoke else out

    log = work_dir(out) / "kernels.log"
    what = f"{len(names)} notebook(s)" + (" and their solutions" if with_solutions else "")
    print(f"run_all: {what} -> {out}{' (smoke)' if smoke else ''}; kernel logs: {log}", flush=True)
    done = []  # (name as shown, status row)
    rerun = rerun_command(args, None if sms is None else int(sms), out)
    with environment_variable("TOKGEN_RUN_ALL", rerun), environment_variable("MPLBACKEND", INLINE_FIGURES):
        for i, name in enumerate(names, 1):
            step, current = f"[{i}/{len(names)}]", name
            params = notebook_parameters(name, parameters, user, slice_run=sms is not None and not smoke)
            try:
                run = lambda: run_notebook(name, out, params, progress=not args.no_progress)
                row, stopped = logged(step, name, log, newest if name in NEWEST else None, run)
                record_timings([row], out, smoke)
                done.append((name, row))
                if stopped:  # a Ctrl-C after it finished: its results and row are kept
                    raise KeyboardInterrupt
                if with_solutions and row["status"] == "ok" and solution_of(name):
                    current = f"solutions/{name}"
                    run = lambda: run_solution(name, out, solutions, not args.no_progress, solution_data)
                    row, stopped = logged(step, current, log, newest if name in NEWEST_SOLUTIONS else None, run)
                    record_timings([row], out, smoke)
                    done.append((current, row))
                    if stopped:
                        raise KeyboardInterrupt
            except KeyboardInterrupt:
                print("\n" + interrupted_text(current, name, names[i - 1 :], done, out), file=sys.stderr, flush=True)
                return 130
    total = sum(r["seconds"] for _, r in done)
    failed = [(n, r) for n, r in done if r["status"] != "ok"]
    print(f"run_all: {tally(done)} ok in {total:.0f} s")
    for n, r in failed:
        print(f"  FAILED {n}{failure(r)}")
        print(f"         see {failed_notebook(out, n)} (the previous results are left in place)")
    return 1 if failed else 0


def logged(step: str, name: str, log: Path, newest: Path | None, run) -> tuple[dict, bool]:
    """`run_logged`'s row, with the transformers a kernel given `newest` ran on, and whether a Ctrl-C
    came after `run` finished (the caller then records the row before it stops)."""
    row = run_logged(step, name, log, newest, run)
    stopped = row.pop("interrupted", False)
    if newest is not None:
        row["transformers"] = installed_transformers(newest)
    return row, stopped


def interrupted_text(current: str, name: str, rest: list[str], done: list[tuple[str, dict]], out: Path) -> str:
    """The one line a Ctrl-C leaves: what finished, what did not run (`rest`: notebook `name`, the one
    running, and those after it), and what became of `current` (`name` or its solution): discarded
    if it was running, kept if it had finished (a Ctrl-C in the host probe after it)."""
    finished = current in (n for n, _ in done)
    left = rest if current == name and not finished else rest[1:]
    text = (f"run_all: interrupted {'after' if finished else 'during'} {current}; "
            f"finished: {', '.join(n for n, _ in done) or 'none'}; not run: {', '.join(left) or 'none'}. ")  # fmt: skip
    if finished:
        text += f"{current} had finished and its results and row are kept (the host probe after it is blank); "
    else:
        text += f"{current}'s partial output was discarded; "
    return text + f"the results in {out} are those of the finished notebooks."


def tally(done: list[tuple[str, dict]]) -> str:
    """How many ran ok: "15/15 notebooks", and "and 14/15 solutions" where solutions ran."""
    parts = []
    for what, runs in (("notebooks", [r for n, r in done if not n.startswith("solutions/")]),
                       ("solutions", [r for n, r in done if n.startswith("solutions/")])):  # fmt: skip
        if runs or what == "notebooks":
            parts.append(f"{sum(r['status'] == 'ok' for r in runs)}/{len(runs)} {what}")
    return " and ".join(parts)


def installed_transformers(folder: Path) -> str:
    """The version of transformers in `folder`: what a kernel given that folder ran on, not this process."""
    found = importlib.metadata.distributions(name="transformers", path=[str(folder)])
    return next((d.version for d in found), "unknown")


def run_logged(step: str, name: str, log: Path, newest: Path | None, run) -> dict:
    """`run()` with the kernels' stderr sent to `log` (and `newest` first on their path), between a
    line that says it starts and one that says how it ended, then the host's speed around it
    (`host_probe`: into its row, and said in a line) and a `ps` snapshot of the busiest processes.
    A Ctrl-C after `run` finished (in the probe or these lines) returns its row marked "interrupted"."""
    print(f"{step} {name} ...", flush=True)
    loop_before, stat_before = host_loop_ms(), read_cpu_times()
    with kernel_output_to(log), first_on_path(newest):
        row = run()
    try:
        row.update(host_probe(loop_before, stat_before))
        detail = failure(row) if row["status"] != "ok" else ""
        print(f"{step} {name}: {row['status']} in {row['seconds']:.0f} s{detail}", flush=True)
        for note in row.pop("notes", []):
            print(f"{' ' * len(step)} note: {note}", flush=True)
        print(f"{' ' * len(step)} host: {host_text(row)}", flush=True)
        for line in top_processes():
            print(f"{' ' * len(step)}   {line}", flush=True)
    except KeyboardInterrupt:  # `run` has finished: its row must not be lost (the caller records it, then stops)
        row = {**dict.fromkeys(HOST_COLUMNS), "host_loop_ms_before": loop_before, **row, "interrupted": True}
    return row


def cpu_times(text: str) -> dict | None:
    """The whole machine's CPU time from the text of /proc/stat, its "cpu" line ("cpu user nice system
    idle iowait irq softirq steal guest guest_nice", in clock ticks since boot, summed over the cores):
    `busy` = user + nice + system + irq + softirq (guest and guest_nice are counted in user and nice
    already), `idle` = idle + iowait, `steal` = time the hypervisor ran something else while this
    machine's CPUs had work (older kernels omit the later fields: 0). None without that line."""
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] == ["cpu"]:
            values = [int(x) for x in fields[1:9]] + [0] * (9 - len(fields))
            user, nice, system, idle, iowait, irq, softirq, steal = values
            return {"busy": user + nice + system + irq + softirq, "idle": idle + iowait, "steal": steal}
    return None


def read_cpu_times(path: Path = PROC_STAT) -> dict | None:
    """`cpu_times` of `path` (/proc/stat) now; None where there is none (not Linux) or it cannot be read."""
    try:
        return cpu_times(path.read_text())
    except (OSError, ValueError):
        return None


def cpu_shares(before: dict | None, after: dict | None) -> dict:
    """`cpu_busy_pct` and `cpu_steal_pct`: the whole machine's busy and stolen CPU time between two
    `cpu_times`, in % of all its CPU time then (busy + idle + steal, every core: a notebook's own
    kernel busy on one of 16 cores counts 6%); None for both where either is missing or no time passed."""
    blank = {"cpu_busy_pct": None, "cpu_steal_pct": None}
    if before is None or after is None:
        return blank
    delta = {key: after[key] - before[key] for key in before}
    total = sum(delta.values())
    if total <= 0 or min(delta.values()) < 0:
        return blank
    return {"cpu_busy_pct": round(100 * delta["busy"] / total, 1),
            "cpu_steal_pct": round(100 * delta["steal"] / total, 1)}  # fmt: skip


def host_probe(loop_before: float, stat_before: dict | None) -> dict:
    """The host columns of a notebook's row (`HOST_COLUMNS`), given what was measured before it ran:
    the loop again now, and the machine's busy and stolen shares over its run (blank off Linux)."""
    return {"host_loop_ms_before": loop_before, "host_loop_ms_after": host_loop_ms(),
            **cpu_shares(stat_before, read_cpu_times())}  # fmt: skip


def host_text(row: dict) -> str:
    """The host line the runner prints under a notebook's: "Python loop 3.10 ms before, 3.05 ms after;
    machine CPU busy 7.5%, stolen 0.0% over the run"."""
    text = f"Python loop {row['host_loop_ms_before']:.2f} ms before, {row['host_loop_ms_after']:.2f} ms after"
    if row.get("cpu_busy_pct") is None:
        return text + "; the machine's CPU shares not measured (no /proc/stat)"
    return text + f"; machine CPU busy {row['cpu_busy_pct']:.1f}%, stolen {row['cpu_steal_pct']:.1f}% over the run"


def top_processes(n: int = TOP_PROCESSES) -> list[str]:
    """A `ps` snapshot: its header and the `n` processes with the largest CPU share (ps's %CPU: CPU
    time over each process's lifetime), each line cut at 160 characters; [] where ps is missing or
    does not take these options (procps, Linux)."""
    command = ["ps", "-eo", "pid,ppid,pcpu,cputime,etime,args", "--sort=-pcpu"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        return []
    lines = [line for line in done.stdout.splitlines() if " ps -eo pid," not in f" {line}"]  # not ps itself
    return [line[:160] for line in lines[: n + 1]]


def failure(row: dict) -> str:
    """How a failed run ended, as the runner prints it: " at cell [N]: error" (no cell when the
    notebook ran but is not clean)."""
    return (f" at cell [{row['failed_cell']}]" if row["failed_cell"] not in ("", None) else "") + f": {row['error']}"


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # at once: after Ctrl-C the dying kernel's asyncio tasks would print pages of tracebacks
