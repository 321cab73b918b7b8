"""Execute the notebooks in order with papermill, one fresh kernel each (what run_all.sh calls).

    python -m tokgen.runner                     # every notebook, GPU, reference results in place
    python -m tokgen.runner --smoke             # tiny model and sizes, CPU allowed, into build/smoke
    python -m tokgen.runner --only 07 --only 08 -p BATCH_SIZE 16

The notebooks' source of truth is the jupytext file notebooks/NN_name.py; each run writes the
executed notebook, the CSVs under <out>/data and the figures under <out>/figures. A failing
notebook does not stop the others; the failures are listed at the end and the exit code is 1.
A notebook runs in a staging copy of <out>: what it writes replaces the previous results only
once it has finished, so a failed or killed run leaves them as they were.
"""

import argparse
import ast
import datetime
import filecmp
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import pandas as pd
import papermill
import torch

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

# Tiny sizes for --smoke: every notebook runs in seconds, on the CPU if need be. A notebook gets
# only the names its parameters cell declares.
SMOKE = {
    "SIZE": "tiny",
    "RUNS": 2,
    "BATCH_SIZE": 4,
    "MAX_SEQLEN": 12,
    "SEQ_LENS": [6, 12],
    "BATCH_SIZES": [1, 4],
    "COMPILED_BATCH_SIZES": [1, 4],
    "WINDOW": [3, 9],
    "STEPS_PER_GRAPH": [1, 4],
    "TOKENS": 8,
    "COPY_MB": 16,
}


def notebook_names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def select(only: list[str]) -> list[str]:
    """Notebook names matching --only (full name or its number); a clear error for unknown ones."""
    names = notebook_names()
    if not only:
        return names
    chosen = []
    for item in only:
        for want in filter(None, (w.strip() for w in item.split(","))):
            stem = Path(want).stem
            matches = [n for n in names if n == stem or n.split("_", 1)[0] == stem]
            if not matches:
                raise SystemExit(f"run_all: unknown notebook {want!r}; choose from: {', '.join(names)}")
            chosen += [m for m in matches if m not in chosen]
    return [n for n in names if n in chosen]


def parse_parameter(value: str):
    """`-p NAME VALUE`: VALUE as a Python literal when it is one (16, [1, 2], 'x'), else a string."""
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def declared_parameters(path: Path) -> set[str]:
    return set(papermill.inspect_notebook(str(path)).keys())


def run_notebook(name: str, out: Path, parameters: dict, progress: bool) -> dict:
    """Execute one notebook into <out>/notebooks/<name>.ipynb; returns its status row.

    It runs in a staging folder holding a copy of <out>/data (later notebooks read earlier
    ones' CSVs), as its working directory's parent, which is where RESULTS_DIR ".." points.
    Only if it succeeds do its notebook, CSVs and figures replace those in <out>; a failed one
    is kept in <out>/build/failed/<name> for inspection, and a killed one changes nothing.
    """
    (out / "build").mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"staging-{name}-", dir=out / "build"))
    if (out / "data").is_dir():
        shutil.copytree(out / "data", stage / "data")
    target = stage / "notebooks" / f"{name}.ipynb"
    target.parent.mkdir(parents=True)
    jupytext.write(jupytext.read(NOTEBOOKS / f"{name}.py"), target)
    declared = declared_parameters(target)
    params = {k: v for k, v in parameters.items() if k in declared}
    started = time.time()
    row = {"notebook": name, "status": "ok", "failed_cell": "", "error": "", "parameters": json.dumps(params)}
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
        row.update(status="failed", failed_cell=err.exec_count, error=f"{err.ename}: {err.evalue}"[:300])
    except Exception as err:  # noqa: BLE001 - a kernel that dies must not stop the other notebooks
        row.update(status="failed", error=f"{type(err).__name__}: {err}"[:300])
    row["seconds"] = round(time.time() - started, 1)
    if row["status"] == "ok":
        promote(stage, out)
        shutil.rmtree(stage)
    else:
        failed = failed_notebook(out, name).parents[1]
        shutil.rmtree(failed, ignore_errors=True)
        failed.parent.mkdir(parents=True, exist_ok=True)
        stage.rename(failed)
    return row


def promote(stage: Path, out: Path) -> None:
    """Copy what a finished notebook wrote (new or changed files) from its staging folder into <out>."""
    for path in sorted(stage.rglob("*")):
        dest = out / path.relative_to(stage)
        if path.is_file() and not (dest.exists() and filecmp.cmp(path, dest, shallow=False)):
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)


def failed_notebook(out: Path, name: str) -> Path:
    """Where a failed run of notebook `name` is kept: <out>/build/failed/<name>/notebooks/<name>.ipynb."""
    return out / "build" / "failed" / name / "notebooks" / f"{name}.ipynb"


def record_timings(rows: list[dict], out: Path, smoke: bool) -> None:
    """data/run_all.csv: one row per notebook of the latest run of each (wall time, status)."""
    from .results import data_dir, environment

    path = data_dir(out) / "run_all.csv"
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    new = pd.DataFrame([{**r, "smoke": smoke, "finished_at": stamp, **environment()} for r in rows])
    if path.exists():
        old = pd.read_csv(path, keep_default_na=False)
        new = pd.concat([old[~old["notebook"].isin(new["notebook"])], new], ignore_index=True)
    new.sort_values("notebook").to_csv(path, index=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="run_all.sh", description="Execute the notebooks with papermill.")
    parser.add_argument("--smoke", action="store_true", help="tiny model and sizes, CPU allowed; writes to build/smoke")
    parser.add_argument("--only", action="append", default=[], metavar="NOTEBOOK", help="run only this notebook")
    parser.add_argument("--out", type=Path, help="where notebooks/, data/, figures/ go (default: the repo)")
    parser.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"), help="set a parameter"
    )
    parser.add_argument("--list", action="store_true", help="list the notebooks and exit")
    parser.add_argument("--no-progress", action="store_true", help="no papermill progress bars")
    args = parser.parse_args(argv)

    if args.list:
        print("\n".join(notebook_names()))
        return 0
    names = select(args.only)
    smoke = args.smoke
    if not smoke and not torch.cuda.is_available():
        print("run_all: no CUDA GPU here, so running the smoke mode (tiny model, CPU) instead of the reference run.")
        smoke = True
    out = (args.out or (ROOT / "build" / "smoke" if smoke else ROOT)).resolve()
    parameters = dict(SMOKE) if smoke else {}
    if smoke:
        parameters["DEVICE"] = "cuda" if torch.cuda.is_available() else "cpu"
        if not torch.cuda.is_available():
            parameters["COMPILE_BACKEND"] = "eager"  # inductor's C++ build takes minutes on a small CPU
    parameters.update({name: parse_parameter(value) for name, value in args.parameter})

    print(f"run_all: {len(names)} notebook(s) -> {out}{' (smoke)' if smoke else ''}", flush=True)
    rows = []
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name} ...", flush=True)
        row = run_notebook(name, out, parameters, progress=not args.no_progress)
        rows.append(row)
        detail = f" at cell [{row['failed_cell']}]: {row['error']}" if row["status"] != "ok" else ""
        print(f"[{i}/{len(names)}] {name}: {row['status']} in {row['seconds']:.0f} s{detail}", flush=True)
        record_timings([row], out, smoke)
    total = sum(r["seconds"] for r in rows)
    failed = [r for r in rows if r["status"] != "ok"]
    print(f"run_all: {len(rows) - len(failed)}/{len(rows)} notebooks ok in {total:.0f} s")
    for r in failed:
        print(f"  FAILED {r['notebook']} at cell [{r['failed_cell']}]: {r['error']}")
        print(f"         see {failed_notebook(out, r['notebook'])} (the previous results are left in place)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
