"""Results on disk: one CSV per table under data/, every row stamped with its provenance.

Introduced in notebook 00_setup. Rows are appended (and flushed to disk) the moment they are
measured, so a crash loses no finished result.
"""

import datetime
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]  # the repository

# Generators renamed after the last reference run measured them (so its tables still read);
# the next reference run writes the new names and this map can go.
RENAMED = {"fast": "graph_handwritten_compiled", "graph_hf": "graph_transformers", "graph_lean": "graph_handwritten"}


def _run(cmd: list[str], cwd=None) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=cwd, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_commit() -> str:
    """The commit the results were made with: $TOKGEN_COMMIT, else `git rev-parse` (+ "-dirty");
    notebook 00_setup."""
    if os.environ.get("TOKGEN_COMMIT"):
        return os.environ["TOKGEN_COMMIT"]
    here = Path(__file__).resolve().parent
    commit = _run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here)
    if not commit:
        return "unknown"
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here)
    return commit + ("-dirty" if dirty else "")


def cpu_model() -> str:
    """The host CPU by name and its logical CPUs ("AMD EPYC 9454 48-Core Processor, 16 logical CPUs"):
    the host sets the pace of a host-bound generator, so a result names it (notebook 00_setup).
    Linux's /proc/cpuinfo gives the name; elsewhere the platform's processor or machine string."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    name = name or platform.processor() or platform.machine()
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{name}, {count} logical CPUs"


def installed(package: str) -> str:
    """The installed version of `package`, "" when it is not installed (notebook 00_setup)."""
    try:
        return version(package)
    except PackageNotFoundError:
        return ""


@functools.cache
def environment() -> dict:
    """GPU (by name and by its UUID, which tells two machines of one kind apart), driver, CUDA,
    torch, triton (what torch.compile's inductor generates kernels with; "" when not installed),
    transformers, Python, CPU, commit, allocator setting: what every result row carries (notebook 00_setup)."""
    import torch  # here, not at the top: the runner's --help must not wait for torch

    env = {
        "gpu": "none (CPU)",
        "gpu_uuid": "",
        "driver": "",
        "cuda": torch.version.cuda or "",
        "torch": torch.__version__,
        "triton": installed("triton"),
        "transformers": version("transformers"),
        "python": platform.python_version(),
        "cpu": cpu_model(),  # the logical CPUs this process may run on
        "commit": git_commit(),
        "alloc_conf": os.environ.get("PYTORCH_ALLOC_CONF", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")),
    }
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        env["gpu_uuid"] = str(torch.cuda.get_device_properties(torch.cuda.current_device()).uuid)
        env["driver"] = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).split("\n")[0]
    return env


def slice_columns() -> dict:
    """The GPU slice a row was measured in (tokgen.gpu_slice). Not imported means never entered:
    the runner reads this module without waiting for torch (notebook 13_regimes)."""
    module = sys.modules.get("tokgen.gpu_slice")
    return module.slice_columns() if module else {"gpu_sms": "all", "slice_copy_gbs": ""}


ALLOC_CONF_UNSET = "(not set: PyTorch's default)"  # how a reader sees an empty alloc_conf (notebook 00_setup)
# How a reader sees each provenance field left empty (notebook 00_setup)
UNSET = {"alloc_conf": ALLOC_CONF_UNSET, "triton": "(not installed)", "gpu_uuid": "(no GPU)"}


def describe_environment() -> str:
    """One line per provenance field, for the imports cell of every notebook (notebook 00_setup); an
    empty field (no allocator setting, no triton, no GPU) is named as such (`UNSET`), not printed empty."""
    env = environment()  # the cached provenance that result rows carry keeps the empty values
    return "\n".join(f"{k:>12}: {v or UNSET.get(k, '')}" for k, v in env.items())


# Columns read as text whatever they hold: the provenance (a commit hash of digits and one "e", such as
# 6349888223e5, is no number; nor is a CUDA version such as 12.10) and the commits a table names
TEXT_COLUMNS = ("gpu", "gpu_uuid", "driver", "cuda", "torch", "triton", "transformers", "python", "cpu", "commit",
                "alloc_conf", "recorded_commits", "numpy")  # fmt: skip


def read_table(path: str | Path, **kwargs) -> pd.DataFrame:
    """A CSV of data/ as `pd.read_csv` reads it (`kwargs` passed on), with `TEXT_COLUMNS` read as text:
    the one reader of result tables, so that a hash never reads as a number (notebook 00_setup)."""
    return pd.read_csv(path, dtype=dict.fromkeys(TEXT_COLUMNS, str), **kwargs)


HOST_LOOP = 100_000  # iterations of `host_loops_ms`'s pure-Python loop: a few ms on a server's core
HOST_REPEATS = 5  # loops per probe: their median is the probe, their range its spread
# The probe `tokgen.compare` takes before and after its timed rounds, as each of its rows records it
HOST_PROBE_COLUMNS = ("host_probe_ms_before", "host_probe_ms_after", "host_probe_min_ms", "host_probe_max_ms")


def host_loops_ms(repeats: int = HOST_REPEATS, n: int = HOST_LOOP) -> list[float]:
    """Milliseconds of each of `repeats` runs of a fixed pure-Python loop of `n` additions: how fast
    this host runs Python right now (notebook 01_naive). A host-bound generator's wall time moves
    with it; the probe says that the host's speed moved, not why. `tokgen.compare` takes it before
    and after its timed rounds (`host_probe`), the runner before and after each notebook."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        total = 0
        for i in range(n):
            total += i
        times.append(round(1e3 * (time.perf_counter() - start), 3))
    return times


def host_loop_ms(repeats: int = HOST_REPEATS, n: int = HOST_LOOP) -> float:
    """The median of `host_loops_ms`: the host probe as one number (notebook 01_naive)."""
    return round(statistics.median(host_loops_ms(repeats, n)), 3)


def host_probe(before: list[float], after: list[float]) -> dict:
    """The `HOST_PROBE_COLUMNS` of a comparison's rows from the probe's loops (`host_loops_ms`) taken
    before and after its timed rounds: each probe's median, and the fastest and slowest single loop of
    the two (notebook 01_naive)."""
    loops = [*before, *after]
    return {"host_probe_ms_before": round(statistics.median(before), 3),
            "host_probe_ms_after": round(statistics.median(after), 3),
            "host_probe_min_ms": min(loops), "host_probe_max_ms": max(loops)}  # fmt: skip


def data_dir(results_dir: str | Path) -> Path:
    """<results_dir>/data, created if need be (notebook 00_setup)."""
    path = Path(results_dir) / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Recorder:
    """Appends result rows to data/<table>.csv, each with provenance and the notebook's parameters.

    Opening a Recorder starts the table afresh (one run per table); `write` appends and flushes.
    Introduced in notebook 00_setup.
    """

    def __init__(self, table: str, results_dir: str | Path, params: dict | None = None):
        self.path = data_dir(results_dir) / f"{table}.csv"
        self.path.unlink(missing_ok=True)
        self.params = json.dumps(params or {}, sort_keys=True, default=str)
        self.started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

    def stamped(self, row: dict) -> dict:
        """`row` as `write` appends it: with its provenance, the time and the notebook's parameters."""
        stamp = {
            "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "run_started": self.started,
        }
        # a column the row sets itself (notebook 13: each slice's gpu_sms) wins over the provenance of that name
        provenance = {k: v for k, v in {**environment(), **slice_columns()}.items() if k not in row}
        return {**row, **provenance, **stamp, "params": self.params}

    def write(self, row: dict) -> None:
        new = pd.DataFrame([self.stamped(row)])
        if self.path.exists():
            old = read_table(self.path, keep_default_na=False)
            if list(old.columns) != list(new.columns):  # a row with other columns: rewrite with the union
                new = pd.concat([old, new], ignore_index=True)
                _write_csv(new, self.path, header=True, mode="w")
                return
        _write_csv(new, self.path, header=not self.path.exists(), mode="a")

    def read(self) -> pd.DataFrame:
        return read_table(self.path)


def rows_where(table: pd.DataFrame, **match) -> pd.DataFrame:
    """The rows of `table` (a `Recorder`'s, read back) whose columns equal `match` ({column: value}), numbered from
    0: one exercise's measurements from a solution's one table (the solution of notebook 06_eos_sync_profile; review
    rv19A S5). Every column stays: a column another exercise's rows brought in reads empty here. No rows where a
    column of `match` is not in the table (no row recorded it: review rr20i N1)."""
    keep = pd.Series(True, index=table.index)
    for column, value in match.items():
        if column not in table:
            return table.iloc[0:0].reset_index(drop=True)
        keep &= table[column] == value
    return table[keep].reset_index(drop=True)


def _write_csv(df: pd.DataFrame, path: Path, header: bool, mode: str) -> None:
    with open(path, mode, newline="") as f:
        df.to_csv(f, header=header, index=False)
        f.flush()
        os.fsync(f.fileno())


def _renamed(text):
    if not isinstance(text, str):
        return text
    return re.sub(r"\b(" + "|".join(RENAMED) + r")\b", lambda m: RENAMED[m.group(1)], text)


def run_of(df: pd.DataFrame) -> str:
    """Which run wrote a table, from its rows: the commit and when the run started, so that a
    notebook reading another's table says which run it read (notebook 12_speed_of_light); rows made
    on another card than this process's (another GPU UUID: a run may span machines of one kind) say
    so, with the card's UUID."""
    if not {"commit", "run_started"} <= set(df):
        return "no provenance columns"
    keys = ["commit", "run_started"] + [k for k in ("gpu", "gpu_uuid") if k in df]
    runs = df[keys].astype(object).fillna("").astype(str).drop_duplicates()
    return "; ".join(
        f"commit {r['commit'][:7]}, started {r['run_started'][:16].replace('T', ' ')} UTC{_card(r)}"
        for r in runs.to_dict("records")
    )


def why_not_usable(rows: pd.DataFrame, variant: str) -> str:
    """Why `variant` has no row a result may be read from among `rows` (one comparison's, failed ones
    kept): "not run", its status ("oom", "error: …", first line of the error), "2 of its timed runs left
    the slice", or "no timed rounds" (notebook 13_regimes)."""
    mine = rows[rows["variant"] == variant] if "variant" in rows else rows.iloc[:0]
    if mine.empty:
        return "not run"
    r = mine.iloc[-1]
    status = str(r.get("status", "ok"))
    if status != "ok":
        error = r.get("error")
        first = str(error).strip().splitlines()[0][:120] if isinstance(error, str) and error.strip() else ""
        return f"{status}: {first}" if first else status
    escapes = r.get("slice_escapes")
    if escapes is not None and escapes == escapes and escapes > 0:
        return f"{int(escapes)} of its timed runs left the slice"
    return "no timed rounds"


def _card(row: dict) -> str:
    """", on another card of the same kind (GPU UUID c38a1fbc…)" when `row` names a GPU UUID other
    than this process's (both known), "" otherwise (notebook 03_expandable_segments)."""
    env = environment()
    uuid = row.get("gpu_uuid", "")
    if not uuid or not env["gpu_uuid"] or uuid == env["gpu_uuid"]:
        return ""
    kind = "of the same kind" if row.get("gpu", env["gpu"]) == env["gpu"] else f"({row['gpu']})"
    return f", on another card {kind} (GPU UUID {uuid[:8]}…)"


def load(table: str, results_dir: str | Path) -> pd.DataFrame:
    """A table written by `Recorder`; a clear error when the notebook that writes it has not run
    (notebook 09_summary). Old generator names are read as today's (`RENAMED`)."""
    path = Path(results_dir) / "data" / f"{table}.csv"
    if not path.exists():
        writer = table[:2]
        raise MissingRows(f"no data/{table}.csv in {results_dir}: notebook {writer} writes it; run "
                          f"{run_command(writer, results_dir, {})}")  # fmt: skip
    df = read_table(path)
    for column in ("variant", "generator"):
        if column in df:
            df[column] = df[column].map(_renamed)
    return df


class MissingRows(FileNotFoundError):
    """A notebook reads rows another notebook writes, and they are not in its results folder: the
    message, one line, says which rows and the command that writes them (`rows_at`); a notebook
    shows that line instead of a traceback. Notebook 02_kv_cache."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines in place of the traceback
        return [f"{type(self).__name__}: {self}"]


# the column of a table that holds what a notebook's parameter set (rows_at)
COLUMNS = {"BATCH_SIZE": "batch_size", "SEQ_LENS": "max_seqlen", "MAX_SEQLEN": "max_seqlen"}


def run_command(writer: str, results_dir: str | Path, parameters: dict) -> str:
    """The command that runs notebook `writer` with `parameters` into `results_dir`: as the runner
    that started this notebook was called ($TOKGEN_RUN_ALL, which it sets), else `./run_all.sh`
    with `--out` for `results_dir` (notebook 02_kv_cache)."""
    prefix = os.environ.get("TOKGEN_RUN_ALL")
    if not prefix:
        folder = Path(results_dir).resolve()
        where = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
        prefix = "./run_all.sh" + ("" if folder == ROOT else f" --out {where}")
    values = {name: f'"{value}"' if isinstance(value, list) else str(value) for name, value in parameters.items()}
    return " ".join([prefix, "--only", writer, *(f"-p {name} {value}" for name, value in values.items())])


# what a row carries that says which run made it: the commit, the GPU, the slice (notebook 02_kv_cache)
RUN_KEYS = ("commit", "gpu", "gpu_sms")


def same_commit(a, b) -> bool:
    """Two commits are one when their first 12 hex digits agree (either may be longer, or end in
    "-dirty"; a 7-digit short hash matches its first 7); a value that is no hash ("unknown", a
    missing one) only matches itself (notebook 02_kv_cache)."""
    a, b = str(a), str(b)
    x, y = (re.match(r"[0-9a-f]*", v).group() for v in (a, b))
    n = min(12, len(x), len(y))
    return x[:n] == y[:n] if n >= 7 else a == b


def _sms(value) -> str:
    """A gpu_sms value as text: 16, 16.0 and "16" alike; "all" for the whole GPU."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _here() -> dict:
    return {**environment(), **slice_columns()}


def _run_text(run: dict) -> str:
    """"commit 4f30a978e0b5, NVIDIA H100 80GB HBM3, all SMs": the keys of RUN_KEYS that `run` holds."""
    words = {"commit": lambda c: f"commit {str(c)[:12]}", "gpu": str, "gpu_sms": lambda n: f"{_sms(n)} SMs"}
    return ", ".join(words[k](run[k]) for k in RUN_KEYS if k in run)


def this_run_text() -> str:
    """This process's run as `other_runs` names one: "commit 4f30a978e0b5, NVIDIA H100 80GB HBM3, all SMs"
    (notebook 07_pipelining)."""
    return _run_text(_here())


def other_runs(df: pd.DataFrame, keys=RUN_KEYS) -> str:
    """"" when every row of `df` was made in this run: this process's commit (`same_commit`), GPU and
    slice, those of `keys` a row holds (rows without a commit column are another run's); else the
    runs it holds in one phrase, e.g. "commit 9d6c84b80aa0's (NVIDIA H100 80GB HBM3, all SMs;
    started 2026-11-23 19:02 UTC)". Notebook 02_kv_cache."""
    here, present = _here(), [k for k in keys if k in df]
    same = {"commit": same_commit, "gpu_sms": lambda a, b: _sms(a) == _sms(b)}
    if ("commit" in present or "commit" not in keys) and all(
        same.get(k, lambda a, b: str(a) == str(b))(v, here[k]) for k in present for v in df[k]
    ):
        return ""
    said = []
    for run in df[present + ["run_started"] * ("run_started" in df)].drop_duplicates().to_dict("records"):
        started = str(run.pop("run_started", ""))[:16].replace("T", " ")
        commit = run.pop("commit", None)
        head = "rows of no commit" if pd.isna(commit) else f"commit {str(commit)[:12]}'s"
        inside = [p for p in (_run_text(run), f"started {started} UTC" if started else "") if p]
        said.append(head + (f" ({'; '.join(inside)})" if inside else ""))
    return " and ".join(said) or "rows of no commit"


def rows_at(table: str, results_dir: str | Path, reader: str, this_run: bool | tuple = False,
            **parameters) -> pd.DataFrame:  # fmt: skip
    """The rows of another notebook's `table` that ran ok at the reader's `parameters` (a value, or a
    list of which a row may have any: `BATCH_SIZE=16, SEQ_LENS=[100, 200]`). None there, or no table:
    `MissingRows`, one line naming what is missing and how to get it, e.g. "notebook 02 needs notebook
    01's rows at BATCH_SIZE=16: run ./run_all.sh --only 01 -p BATCH_SIZE 16". `reader`: "notebook 02",
    "solution 12". Every notebook that reads another's rows reads them here (notebook 02_kv_cache).

    `this_run`: a notebook that sets the rows beside its own measurements needs them from this run
    (`other_runs` of `RUN_KEYS`, or of the keys given: notebook 13's slice table sets its own
    gpu_sms); rows of another run are `MissingRows` too, naming both runs. A solution, which reads
    the committed results on purpose, leaves it off."""
    writer = table[:2]
    at = ", ".join(f"{name}={value}" for name, value in parameters.items())
    needs = f"{reader} needs notebook {writer}'s rows" + (f" at {at}" if at else "")
    how = f": run {run_command(writer, results_dir, parameters)}"
    path = Path(results_dir) / "data" / f"{table}.csv"
    if not path.exists():
        raise MissingRows(f"{needs} (no data/{table}.csv yet){how}")
    df = load(table, results_dir)
    keep = df["status"] == "ok" if "status" in df else pd.Series(True, index=df.index)
    for name, value in parameters.items():
        keep &= df[COLUMNS[name]].isin(value if isinstance(value, list) else [value])
    if not keep.any():
        raise MissingRows(f"{needs}{how}")
    keys = RUN_KEYS if this_run is True else this_run
    if keys and (found := other_runs(df[keep], keys)):
        raise MissingRows(f"{needs} from this run ({_run_text({k: _here()[k] for k in keys})}); "
                          f"data/{table}.csv holds {found}{how}")  # fmt: skip
    return df[keep]
