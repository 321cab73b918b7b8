"""Notebook structure, jupytext pairing, and every notebook executed in smoke mode."""

import json
import os
import re
import subprocess
from pathlib import Path

import jupytext
import nbformat
import pandas as pd
import pytest
from conftest import smoke_command
from papermill.translators import PythonTranslator

from tokgen.bench import drawn_orders
from tokgen.registry import label
from tokgen_tools import clean

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
NAMES = [p.stem for p in NOTEBOOKS]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.py"))
SOLUTIONS_IPYNB = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
COMMITTED = sorted(  # every executed notebook the runner writes and we commit
    [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "slice").glob("sm*/notebooks/*.ipynb"), *SOLUTIONS_IPYNB]
)


def cells(nb):
    return [
        (c.cell_type, c.source.strip()) for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=[str(p.relative_to(ROOT)) for p in COMMITTED])
def test_committed_notebook_is_clean(path):
    """No injected cell, no papermill or execution metadata, no machine paths, no warnings, no errors."""
    assert clean.problems(nbformat.read(path, as_version=4)) == [], "run: python -m tokgen_tools.clean " + str(path)


SAVES_FIGURES = {p.stem for p in NOTEBOOKS if "save_figure(" in p.read_text()}
FIGURED = [p for p in COMMITTED if p.parent.name == "notebooks" and p.stem in SAVES_FIGURES]  # GPU and slices


def images(nb) -> int:
    """How many figures an executed notebook shows (PNG outputs of its code cells)."""
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.parametrize("path", FIGURED, ids=[str(p.relative_to(ROOT)) for p in FIGURED])
def test_committed_notebook_shows_the_figures_it_saves(path):
    """A reader in JupyterLab sees the figures, not only figures/ (review r8: a run under MPLBACKEND=Agg
    committed notebooks 06, 07, 10 and 12 with none)."""
    assert images(nbformat.read(path, as_version=4)) > 0, "re-run it with the runner (it sets the inline backend)"


def executed(stderr="", values='RESULTS_DIR = "/tmp/staging-01-x"\nRUNS = 5\nSEQ_LENS = [6, 12]\nEXTRA = "a"'):
    """A synthetic notebook as papermill leaves it after a run with -p RUNS 5 -p SEQ_LENS [6, 12]."""
    nb = nbformat.v4.new_notebook(metadata={"papermill": {"input_path": "/work/main/build/staging-01-x/a.ipynb"}})
    run = {"papermill": {"duration": 0.1}, "execution": {"iopub.status.idle": "2026-01-01T00:00:00Z"}}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 01 · toy\n\nRun `./run_all.sh --out /tmp/mine`.", metadata=dict(run)),
        nbformat.v4.new_code_cell(
            'RUNS = 3  # timed runs (the rule needs 6 or more)\nNAME = "a #b"  # a string with a hash\n'
            'SEQ_LENS = [100, 200]  # sizes\nRESULTS_DIR = "../build/lab"  # where results go',
            metadata={"tags": ["parameters"], **run},
        ),
        nbformat.v4.new_code_cell("# Parameters\n" + values, metadata={"tags": ["injected-parameters"], **run}),
        nbformat.v4.new_code_cell("print(RUNS)", metadata=dict(run)),
    ]
    nb.cells[3].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="5\n"),
        nbformat.v4.new_output("stream", name="stderr", text=stderr),
    ]
    return nb


PROFILER_WARNING = (
    "/opt/venv/lib/python3.12/site-packages/torch/profiler/profiler.py:224: UserWarning: Warning: Profiler clears "
    "events at the end of each cycle.\n  _warn_once(\n"
)


def test_clean_writes_the_run_values_into_the_parameters_cell_and_drops_what_papermill_added():
    nb = executed(stderr=PROFILER_WARNING + "a line the notebook wrote\n")
    assert len(clean.problems(nb)) >= 6
    clean.clean(nb)
    assert clean.problems(nb) == []
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code"]
    assert nb.cells[1].source.splitlines() == [
        "RUNS = 5  # timed runs (the rule needs 6 or more)",
        'NAME = "a #b"  # a string with a hash',
        "SEQ_LENS = [6, 12]  # sizes",
        'RESULTS_DIR = "../build/lab"  # where results go',  # the runner's folder is not the reader's
        'EXTRA = "a"  # set by this run',
    ]
    assert nb.cells[1].metadata == {"tags": ["parameters"]} and nb.cells[0].metadata == {}
    assert "papermill" not in nb.metadata
    assert [(o.name, o.text) for o in nb.cells[2].outputs] == [
        ("stdout", "5\n"),
        ("stderr", "a line the notebook wrote\n"),
    ]


def test_clean_shows_the_runs_relative_folders_where_they_lie_beside_the_notebook():
    """A smoke run's notebook in <out>/notebooks wrote to <out>: RESULTS_DIR ".." says so; an
    absolute folder (a machine path) is never written."""
    nb = clean.clean(executed(values='RESULTS_DIR = ".."\nSLICE_RESULTS_DIR = "/work/x/slice"\nRUNS = 5'), folders=True)
    assert nb.cells[1].source.splitlines()[3] == f'RESULTS_DIR = ".."{clean.FOLDER_COMMENT}'
    assert "SLICE_RESULTS_DIR" not in nb.cells[1].source and clean.problems(nb) == []
    assert 'RESULTS_DIR = "../build/lab"' in clean.clean(executed(values='RESULTS_DIR = ".."')).cells[1].source


def test_clean_drops_a_stderr_output_of_warnings_only_and_keeps_unchanged_values_as_written():
    nb = clean.clean(executed(stderr=PROFILER_WARNING, values='RESULTS_DIR = ".."\nRUNS = 3'))
    assert [o.name for o in nb.cells[2].outputs] == ["stdout"]
    assert nb.cells[1].source.startswith("RUNS = 3  # timed runs (the rule needs 6 or more)\nNAME")
    assert clean.clean(executed(values="")).cells[1].source == executed().cells[1].source  # nothing to write


def test_clean_names_a_library_file_from_its_package_folder():
    log = "W1123 frame.py:1994] function: 'forward' (/work/x/.venv/lib/python3.11/site-packages/a/b.py:765)\n"
    nb = clean.clean(executed(stderr=log))
    assert nb.cells[2].outputs[1].text == "W1123 frame.py:1994] function: 'forward' (site-packages/a/b.py:765)\n"
    assert clean.problems(nb) == []


AUTOTUNE_LOG = (  # as inductor writes it with mode="max-autotune-no-cudagraphs" (solution 05, H100)
    "E1123 08:51:40.961000 777 torch/_inductor/select_algorithm.py:3924] [0/0] Runtime error during autotuning: \n"
    "E1123 08:51:40.961000 777 torch/_inductor/select_algorithm.py:3924] [0/0] No valid triton configs. "
    "OutOfMemoryError: out of resource: triton_mm Required: 245760 Hardware limit:232448\n"
    "E1123 08:51:40.961000 777 torch/_inductor/select_algorithm.py:3924] [0/0] Ignoring this choice.\n"
    'Autotune Choices Stats:\n{"num_choices": 19, "best_kernel": "triton_mm_50"}\n'
    "AUTOTUNE mm(32x768, 768x3072)\nstrides: [768, 1], [3072, 1]\ndtypes: torch.float32, torch.float32\n"
    "  triton_mm_50 0.0123 ms 100.0% BLOCK_K=32, num_warps=8\n  triton_mm_52 0.0155 ms 79.5% BLOCK_K=64\n"
    "SingleProcess AUTOTUNE benchmarking takes 0.3263 seconds and 0.0003 seconds precompiling for 19 choices\n"
)
DYNAMO_LOG = "W1123 08:51:11.989000 777 torch/_dynamo/convert_frame.py:1743] [0/8] hit config.recompile_limit (8)\n"


def test_clean_drops_inductors_autotuning_log_and_keeps_dynamos_records_and_the_notebooks_lines():
    nb = executed(stderr=DYNAMO_LOG + AUTOTUNE_LOG + "a line the notebook wrote\n")
    assert any("autotuning log" in p for p in clean.problems(nb))
    clean.clean(nb)
    assert nb.cells[2].outputs[1].text == DYNAMO_LOG + "a line the notebook wrote\n"
    assert clean.problems(nb) == []
    only_log = clean.clean(executed(stderr=AUTOTUNE_LOG))  # nothing left: the output goes
    assert [o.name for o in only_log.cells[2].outputs] == ["stdout"]


def test_clean_names_a_library_file_from_its_search_path_folder_in_a_markdown_result(monkeypatch):
    """Solution 11 shows the file of transformers' first sync: installed with pip --target into a
    folder on PYTHONPATH, its path must not reach the committed notebook."""
    monkeypatch.syspath_prepend("/tmp/site")
    nb = executed()
    shown = "First sync: `/tmp/site/transformers/generation/utils.py`, line 2054"
    nb.cells[3].outputs.append(nbformat.v4.new_output("display_data", data={"text/markdown": shown}))
    assert any("machine path in an output: /tmp/s" in p for p in clean.problems(nb))
    clean.clean(nb)
    assert nb.cells[2].outputs[-1].data["text/markdown"] == "First sync: `transformers/generation/utils.py`, line 2054"
    assert clean.problems(nb) == []


def test_clean_problems_name_what_is_left():
    nb = clean.clean(executed())
    nb.cells[2].outputs.append(nbformat.v4.new_output("error", ename="RuntimeError", evalue="boom", traceback=[]))
    nb.cells[2].outputs.append(nbformat.v4.new_output("stream", name="stderr", text="[W] Warning: odd\n"))
    nb.cells[2].outputs.append(
        nbformat.v4.new_output("display_data", data={"text/plain": "saved /home/me/x.csv", "image/png": "AAA/usr/x"})
    )
    nb.cells[0].source += " See /work/main/data."
    found = clean.problems(nb)
    assert len(found) == 4, found
    assert any("error output (RuntimeError)" in f for f in found)
    assert any("warning on stderr: [W] Warning: odd" in f for f in found)
    assert any("machine path in an output: /home/m" in f for f in found)
    assert any("cell 0 (markdown): machine path in its source: /work/m" in f for f in found)


def test_every_py_has_its_ipynb_and_back():
    ipynbs = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert ipynbs == NAMES


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS + SOLUTIONS])
def test_pair_is_in_sync(path):
    text = jupytext.read(path)
    paired = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    assert cells(text) == cells(paired), f"run: jupytext --sync {path.relative_to(ROOT)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NAMES)
def test_notebook_skeleton(path):
    nb = jupytext.read(path)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and re.match(rf"# {path.stem[:2]} · ", first.source)
    assert "**What" in first.source, "the intro says what this step adds / what we measure"
    assert "**You will learn:**" in first.source, "the intro states the learning objectives"
    params = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and params[0] <= 2, "one parameters cell near the top"
    cell = nb.cells[params[0]]
    lines = [line for line in cell.source.splitlines() if line.strip()]
    for line in lines:
        assert re.match(r"^[A-Z][A-Z0-9_]* = .+  # \S", line), f"UPPER_CASE setting with a comment: {line!r}"
    assert len(PythonTranslator.inspect(cell)) == len(lines), "papermill must parse every parameter"
    headings = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert any(h.startswith("## Summary") or "\n## Summary" in h for h in headings)
    assert any("## Exercises" in h for h in headings)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "describe_environment()" in code, "the imports cell prints GPU, driver, torch, transformers"
    after = next(c.source for c in nb.cells[params[0] + 1 :] if c.cell_type == "code")
    assert "PARAMS = tokgen.check_parameters(globals())" in after, "parameters are checked right after their cell"
    assert "params={" not in code, "tables record PARAMS, the parameters cell itself, not a hand copy"
    imports = {line for line in code.splitlines() if re.match(r"(from|import) tokgen", line)}
    assert imports <= {"import tokgen"} | {line for line in imports if line.startswith("from tokgen.display import")}


# What a CPU smoke run must leave behind; CUDA-only tables (sync audit, bandwidth) are skipped there.
CPU_TABLES = {
    "00_setup": ["00_setup"],
    "01_naive": ["01_naive"],
    "02_kv_cache": ["02_kv_cache"],
    "03_expandable_segments": ["03_expandable_segments"],
    "04_static_cache": ["04_static_cache"],
    "05_torch_compile": ["05_torch_compile"],
    "06_eos_sync_profile": ["06_eos_sync_profile"],
    "07_pipelining": ["07_pipelining", "07_pipelining_eos"],
    "08_batch_sweep": ["08_batch_sweep"],
    "09_summary": [],
    "10_cuda_graphs": ["10_cuda_graphs", "10_cuda_graphs_idle"],
    "11_sync_audit": ["11_pinned_copy", "11_micro_overhead"],
    "12_speed_of_light": [],
    "13_regimes": ["13_regimes"],  # 13_slices needs CUDA
    "14_deferred_stop": ["14_deferred_stop"],
}
CPU_FIGURES = {
    "01_naive": ["01_naive_scaling"],
    "02_kv_cache": ["02_kv_cache_scaling"],
    "04_static_cache": ["04_static_cache"],
    "05_torch_compile": ["05_torch_compile"],
    "07_pipelining": ["07_pipelining"],
    "08_batch_sweep": ["08_batch_sweep"],
    "09_summary": ["09_summary"],
    "10_cuda_graphs": ["10_cuda_graphs"],
    "11_sync_audit": ["11_micro_overhead"],
    "13_regimes": ["13_regimes"],
}


@pytest.fixture(scope="module")
def smoke_out(tmp_path_factory):
    return tmp_path_factory.mktemp("smoke")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_notebook_runs_in_smoke_mode(smoke_out, name):
    """One notebook at a time, in order, into one folder (later notebooks read earlier ones' CSVs),
    each followed by its worked solution (with the tiny model, reading the reference results)."""
    assert set(CPU_TABLES) == set(NAMES)
    cmd = smoke_command(name, smoke_out, solutions=True)
    headless = {**os.environ, "MPLBACKEND": "Agg"}  # a headless machine's setting: the runner still shows figures
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=headless)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    if (ROOT / "solutions" / f"{name}.py").exists():
        solution = nbformat.read(smoke_out / "solutions" / f"{name}.ipynb", as_version=4)
        assert clean.problems(solution) == [], name
        if name in ("01_naive", "02_kv_cache", "12_speed_of_light"):  # it names the reference run it read
            outputs = [o for c in solution.cells for o in c.get("outputs", [])]
            said = [str(o.get("data", {}).get("text/markdown", "")) for o in outputs]
            assert any(re.search(r"\bcommit [0-9a-f]{7}, started \d{4}-", t) for t in said), name
        if name == "02_kv_cache":  # exercise 3 quotes the article's 400 at B = 32 only where the run's largest differs
            (held,) = [t for t in said if t.startswith("The cache holds")]
            n, b = map(int, re.match(r"The cache holds [\d.]+ GB after (\d+) steps at B = (\d+)", held).groups())
            assert ("the article's 400" in held) == ((n, b) != (400, 32)), held
        if name == "05_torch_compile":  # exercise 1: each setting compiled in turn, then all timed in one comparison
            outputs = [o for c in solution.cells for o in c.get("outputs", [])]
            said = [str(o.get("data", {}).get("text/markdown", "")) for o in outputs]
            limit = __import__("torch")._dynamo.config.recompile_limit
            # on the CPU: the default compiles twice; dynamic=False once per step until its limit, dynamo's raised by 2
            shown = {header: {n: v for n, v, _ in shown_column(said, header)}
                     for header in ("compilations", "recompile limit in force", "timed")}  # fmt: skip
            assert shown == {"compilations": {"compiled, default": "2", "compiled, dynamic=False": str(limit)},
                             "recompile limit in force": {"compiled, default": str(limit),
                                                          "compiled, dynamic=False": str(limit + 2)},
                             "timed": {"compiled, default": "ok", "compiled, dynamic=False": "ok"}}  # fmt: skip
            assert any("dynamo compiled nothing more" in t for t in said)  # the compiled code lived on into the rounds
    nb = nbformat.read(smoke_out / "notebooks" / f"{name}.ipynb", as_version=4)
    assert clean.problems(nb) == [], name
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{name}: not every cell ran"
    outputs = [o for c in code for o in c.outputs]
    assert not any(o.get("output_type") == "error" for o in outputs)
    assert not any(o.get("name") == "stderr" and "Warning" in "".join(o.get("text", "")) for o in outputs), name
    assert not any("PosixPath(" in str(o.get("data", {}).get("text/plain", "")) for o in outputs), name
    verdicts = [str(o.get("data", {}).get("text/markdown", "")) for o in outputs]
    assert not any("**Verdict: reproduced" in v or "**Verdict: not reproduced" in v for v in verdicts), name
    for table in CPU_TABLES[name]:
        df = pd.read_csv(smoke_out / "data" / f"{table}.csv")
        provenance = {"torch", "triton", "transformers", "gpu_uuid", "commit", "params"}
        assert len(df) > 0 and provenance <= set(df.columns), table
        assert json.loads(df["params"].iloc[0])["SIZE"] == "tiny", table
    assert images(nb) >= (1 if CPU_FIGURES.get(name) else 0), f"{name}: a figure saved but not shown"
    for fig in CPU_FIGURES.get(name, []):
        assert (smoke_out / "figures" / f"{fig}.png").stat().st_size > 0
        assert (smoke_out / "figures" / f"{fig}.svg").exists()
    timings = pd.read_csv(smoke_out / "data" / "run_all.csv").set_index("notebook")
    assert timings.loc[name, "status"] == "ok"
    if name == "03_expandable_segments":  # the side table: notebook 02's KV-cache row, one per N, not its naive one
        side = next(v for v in verdicts if "02: default, own process" in v)
        seq_lens = json.loads(pd.read_csv(smoke_out / "data" / f"{name}.csv")["params"].iloc[0])["SEQ_LENS"]
        assert side.count("02: default, own process") == len(seq_lens), side
    if name == "10_cuda_graphs":  # the first calls shown are the ones recorded (build_ms), the warm-up apart
        rows = pd.read_csv(smoke_out / "data" / f"{name}.csv").set_index("variant")
        said_out = {m for v in verdicts for m in re.findall(r"`([^`]+)` is left out of the comparisons: its first", v)}
        # failed rows: those said (rr22c N2); only section 2's first-call drops, which record no build_ms: a variant
        # that failed in compare's rounds keeps its first call's build_ms and is not said here (rr22d N4)
        dropped = (rows["status"] != "ok") & rows["build_ms"].isna() & (rows.index != "naive")
        assert set(rows.index[dropped]) == said_out, said_out
        rows = rows[rows["status"] == "ok"]  # a dropped variant's failed row has no build_ms
        assert rows["build_ms"].drop("naive").gt(0).all() and rows["build_ms"].isna()["naive"]
        for header, key in (("first call (builds), ms", "build_ms"), ("warm-up (second call), ms", "first_call_ms")):
            shown = shown_column(verdicts, header)
            assert shown and all(v == f"{rows.at[n, key]:,.{digits}f}" if v else n == "naive"
                                 for n, v, digits in shown), (header, shown)  # fmt: skip
    if name == "06_eos_sync_profile":  # its windows ran in the orders that their recorded seed draws
        rows = pd.read_csv(smoke_out / "data" / f"{name}.csv")
        (seed,) = rows["order_seed"].unique()
        generators = ("kv_static", "kv_static_no_check", "pipelined_static")
        names = [label(g, compiled=c) for c in (False, True) for g in generators]  # the notebook's variants, in order
        _, orders = drawn_orders(len(names), rows["window"].nunique(), int(seed))
        assert rows["variant"].tolist() == [names[i] for order in orders for i in order]


def shown_column(markdown: list[str], header: str) -> list[tuple[str, str, int]]:
    """(variant, cell, digits) of the column `header` in every Markdown table of `markdown` that has
    it, with the decimals each cell was printed with."""
    out = []
    for text in markdown:
        lines = [line for line in text.splitlines() if line.startswith("| ")]
        heads = [c.strip() for c in lines[0].strip("|").split("|")] if lines else []
        if header not in heads:
            continue
        for line in lines[1:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            value = cells[heads.index(header)]
            out.append((cells[heads.index("variant")], value, len(value.rpartition(".")[2]) if "." in value else 0))
    return out


def test_a_smoke_run_writes_a_notebook_and_its_solution_clean(tmp_path):
    proc = subprocess.run(smoke_command("00", tmp_path, solutions=True), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "[1/1] solutions/00_setup: ok in" in proc.stdout
    assert "run_all: 1 notebook(s) and their solutions -> " in proc.stdout
    assert "run_all: 1/1 notebooks and 1/1 solutions ok in " in proc.stdout
    for folder in ("notebooks", "solutions"):
        nb = nbformat.read(tmp_path / folder / "00_setup.ipynb", as_version=4)
        assert clean.problems(nb) == [], folder
        assert all(c.execution_count for c in nb.cells if c.cell_type == "code"), folder
        params = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        assert params.startswith('SIZE = "tiny"  # '), "the parameters cell shows the values the run used"
    nb = nbformat.read(tmp_path / "notebooks" / "00_setup.ipynb", as_version=4)
    params = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert 'RESULTS_DIR = ".."  # this run\'s results folder' in params, "where its results went"
    timings = pd.read_csv(tmp_path / "data" / "run_all.csv")
    assert timings["notebook"].tolist() == ["00_setup", "solution 00_setup"] and set(timings["status"]) == {"ok"}


def test_a_bad_parameter_stops_the_notebook_with_one_line(tmp_path):
    from tokgen_tools import runner

    row = runner.run_notebook("00_setup", tmp_path, {"SIZE": "tiny", "DEVICE": "cpu", "BATCH_SIZE": "abc"}, False)
    assert row["status"] == "failed"
    assert row["error"] == "ParameterError: parameter BATCH_SIZE must be a positive integer, got 'abc'"
    assert runner.failed_notebook(tmp_path, "00_setup").exists()


@pytest.mark.slow
def test_solution_08_takes_batch_sizes_that_include_the_reference_sweeps_largest(tmp_path):
    """Exercise 1 times the reference sweep's largest B beside BATCH_SIZES: a user's list that already
    holds it (or repeats a size) runs once per size, not into compare's "names must be unique"."""
    from tokgen_tools import runner

    largest = int(pd.read_csv(ROOT / "data" / "08_batch_sweep.csv")["batch_size"].max())
    params = {"SIZE": "tiny", "BATCH_SIZES": [largest, largest], "MAX_SEQLEN": 4, "RUNS": 2, "DATA_DIR": ".."}
    row = runner.run_solution("08_batch_sweep", tmp_path, params, progress=False, data_from=ROOT)
    assert row["status"] == "ok", row.get("error")


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_a_solution_prints_where_it_ran_right_after_its_parameters_are_checked(path):
    """A solution's live numbers are in no CSV: the page itself names the GPU, versions and commit
    (review r10: solutions 06, 07, 10 and 12 printed measurements with no provenance)."""
    code = [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]
    setup = next(c for c in code if "PARAMS = tokgen.check_parameters(globals())" in c)
    assert "print(tokgen.describe_environment())" in setup


def test_every_solution_belongs_to_a_notebook():
    assert {p.stem for p in SOLUTIONS} <= set(NAMES)


def test_a_file_on_pythons_search_path_is_named_from_its_folder():
    from tokgen_tools.clean import without_install_paths

    log = "W1123 frame.py] function: 'forward' (/tmp/site/transformers/models/gpt2/modeling_gpt2.py:765)"
    assert without_install_paths(log, ["/tmp/site", "/tmp"]) == (
        "W1123 frame.py] function: 'forward' (transformers/models/gpt2/modeling_gpt2.py:765)"
    )
    assert without_install_paths("/x/.venv/lib/python3.12/site-packages/torch/a.py", []) == "site-packages/torch/a.py"


def test_a_file_on_the_kernels_path_is_named_from_its_folder(monkeypatch):
    # run_all puts --newest-transformers first on the kernels' PYTHONPATH only (`first_on_path`), not on
    # its own sys.path: solution 11's "First sync" line named /tmp/newest/transformers/... and failed (run b296e64)
    from tokgen_tools.clean import without_install_paths
    from tokgen_tools.runner import first_on_path

    line = "First sync: `/opt/newest-tf/transformers/generation/utils.py`, line 7"
    with first_on_path(Path("/opt/newest-tf")):
        assert without_install_paths(line) == "First sync: `transformers/generation/utils.py`, line 7"
    assert without_install_paths(line) == line  # once the kernel's path is restored, the folder is not known
