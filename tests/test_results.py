"""Rows on disk as soon as they are measured, each with its provenance."""

import pandas as pd
import pytest

import tokgen
from tokgen.results import ROOT, MissingRows, Recorder, data_dir, environment, load, rows_at, run_command, run_of


def test_rows_are_on_disk_at_once_with_provenance(tmp_path):
    rec = Recorder("t", tmp_path, params={"B": 4})
    rec.write({"variant": "a", "median_ms": 1.5})
    on_disk = pd.read_csv(tmp_path / "data" / "t.csv")
    assert len(on_disk) == 1
    for column in ("gpu", "gpu_uuid", "driver", "torch", "triton", "transformers", "commit", "recorded_at", "params"):
        assert column in on_disk.columns
    assert on_disk.loc[0, "params"] == '{"B": 4}'
    stamped = rec.stamped({"variant": "a", "median_ms": 1.5})  # the row as written, without writing it
    assert list(stamped) == list(on_disk.columns) and stamped["params"] == '{"B": 4}' and len(load("t", tmp_path)) == 1
    rec.write({"variant": "b", "median_ms": 2.0})
    rec.write({"variant": "c", "median_ms": 3.0, "extra": "x"})  # a new column: the table is rewritten
    df = load("t", tmp_path)
    assert list(df["variant"]) == ["a", "b", "c"] and df.loc[2, "extra"] == "x"


def test_a_rows_own_value_wins_over_the_provenance_column_of_the_same_name(tmp_path):
    # notebook 13 records each slice's SM count as `gpu_sms` while no slice is entered ("all")
    Recorder("t", tmp_path).write({"gpu_sms": 8, "copy_gbs": 625.0})
    assert load("t", tmp_path).loc[0, "gpu_sms"] == 8


def test_a_new_recorder_starts_the_table_afresh(tmp_path):
    Recorder("t", tmp_path).write({"x": 1})
    Recorder("t", tmp_path).write({"x": 2})
    assert list(load("t", tmp_path)["x"]) == [2]


def test_missing_table_says_which_notebook_writes_it_and_how(tmp_path, monkeypatch):
    monkeypatch.delenv("TOKGEN_RUN_ALL", raising=False)
    with pytest.raises(FileNotFoundError, match=rf"^no data/09_summary.csv in {tmp_path}: notebook 09 writes it; run "
                                                rf"./run_all.sh --out {tmp_path} --only 09$"):  # fmt: skip
        load("09_summary", tmp_path)


def naive_rows(results_dir):
    """Notebook 01's table as a run at B = 16 leaves it: N = 100 and 200 ran, N = 400 failed."""
    rec = Recorder("01_naive", results_dir)
    for n, status in ((100, "ok"), (200, "ok"), (400, "failed")):
        rec.write({"batch_size": 16, "max_seqlen": n, "status": status, "median_ms": n / 10})


def test_rows_at_keeps_the_ok_rows_at_the_readers_sizes(tmp_path):
    naive_rows(tmp_path)
    rows = rows_at("01_naive", tmp_path, "notebook 02", BATCH_SIZE=16, SEQ_LENS=[100, 400])
    assert rows["max_seqlen"].tolist() == [100]  # 400 failed, 200 was not asked for
    assert rows_at("01_naive", tmp_path, "notebook 07")["max_seqlen"].tolist() == [100, 200]


def test_rows_at_says_in_one_line_what_is_missing_and_the_command_that_writes_it(tmp_path, monkeypatch):
    monkeypatch.delenv("TOKGEN_RUN_ALL", raising=False)
    with pytest.raises(MissingRows) as err:
        rows_at("01_naive", tmp_path, "notebook 02", BATCH_SIZE=32)
    assert str(err.value) == (
        f"notebook 02 needs notebook 01's rows at BATCH_SIZE=32 (no data/01_naive.csv yet): run ./run_all.sh "
        f"--out {tmp_path} --only 01 -p BATCH_SIZE 32"
    )
    naive_rows(tmp_path)
    # what the two README examples in a row did: notebook 01 at B = 16, then notebook 02 at its own 32
    with pytest.raises(MissingRows) as err:
        rows_at("01_naive", tmp_path, "notebook 02", BATCH_SIZE=32, SEQ_LENS=[100, 200])
    assert str(err.value) == (
        f"notebook 02 needs notebook 01's rows at BATCH_SIZE=32, SEQ_LENS=[100, 200]: run ./run_all.sh --out "
        f'{tmp_path} --only 01 -p BATCH_SIZE 32 -p SEQ_LENS "[100, 200]"'
    )
    assert err.value._render_traceback_() == [f"MissingRows: {err.value}"]  # a notebook shows one line
    # the runner says how it was called; a results folder inside the repository is named from it
    monkeypatch.setenv("TOKGEN_RUN_ALL", "./run_all.sh --smoke --out build/x")
    with pytest.raises(MissingRows, match=r": run ./run_all.sh --smoke --out build/x --only 01 -p BATCH_SIZE 32$"):
        rows_at("01_naive", tmp_path, "notebook 02", BATCH_SIZE=32)
    monkeypatch.delenv("TOKGEN_RUN_ALL")
    lab = ROOT / "notebooks" / ".." / "build" / "lab"  # a notebook's default RESULTS_DIR, run in JupyterLab
    assert run_command("01", lab, {}) == "./run_all.sh --out build/lab --only 01"
    assert run_command("01", ROOT, {"MAX_SEQLEN": 8}) == "./run_all.sh --only 01 -p MAX_SEQLEN 8"


# --- rows_at(..., this_run=True): a notebook that sets another's rows beside its own needs them from this run ---

H100 = "NVIDIA H100 80GB HBM3"
UUID_A, UUID_B = "4da776c0-2c08-62ff-bf1f-3a5ac46e878a", "c38a1fbc-dfdd-1b04-ff7d-a2d66ac71764"  # two cards of one kind


@pytest.fixture
def run_here(monkeypatch):
    """This process as a run of commit 4f30a978e0b5 (dirty tree) on card B of an H100 host, whole GPU."""
    env = {**environment(), "commit": "4f30a978e0b5-dirty", "gpu": H100, "gpu_uuid": UUID_B}
    monkeypatch.setattr(tokgen.results, "environment", lambda: env)
    monkeypatch.delenv("TOKGEN_RUN_ALL", raising=False)
    return env


def kv_rows(results_dir, **provenance):
    """Notebook 02's table at B = 16, N = 100 and 200, with the provenance given (as a run elsewhere wrote it)."""
    rows = [{"batch_size": 16, "max_seqlen": n, "status": "ok", "median_ms": n / 10} for n in (100, 200)]
    pd.DataFrame([{**r, **provenance} for r in rows]).to_csv(data_dir(results_dir) / "02_kv_cache.csv", index=False)


def test_rows_of_this_run_are_read_and_another_cards_rows_say_so(tmp_path, run_here):
    # the full 40-digit commit that $TOKGEN_COMMIT gave one machine matches this process's 12 digits and "-dirty"
    kv_rows(tmp_path, commit="4f30a978e0b5d1e2f3a4b5c6d7e8f90011223344", gpu=H100, gpu_uuid=UUID_B, gpu_sms="all",
            run_started="2026-11-26T11:41:33+00:00")  # fmt: skip
    rows = rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True, BATCH_SIZE=16, SEQ_LENS=[100, 200])
    assert rows["max_seqlen"].tolist() == [100, 200]
    assert run_of(rows) == "commit 4f30a97, started 2026-11-26 11:41 UTC"  # this card: nothing to add
    kv_rows(tmp_path, commit="4f30a978e0b5", gpu=H100, gpu_uuid=UUID_A, gpu_sms="all",
            run_started="2026-11-26T11:41:33+00:00")  # fmt: skip
    rows = rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True, BATCH_SIZE=16)  # same run, another card
    assert run_of(rows) == (
        "commit 4f30a97, started 2026-11-26 11:41 UTC, on another card of the same kind (GPU UUID 4da776c0…)"
    )
    assert run_of(rows.assign(gpu_uuid="")) == "commit 4f30a97, started 2026-11-26 11:41 UTC"  # no UUID: no claim


def test_a_commit_of_digits_is_read_as_text_and_still_matches(tmp_path, run_here):
    run_here["commit"] = "1234e5678901"  # as a number it reads 1.234e+5682: inf, and no row would match
    kv_rows(tmp_path, commit="1234e5678901", gpu=H100, gpu_uuid=UUID_B, gpu_sms="all", run_started="2026-11-26T11:41")
    assert len(rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True, BATCH_SIZE=16)) == 2
    run_here["commit"] = "000000123456"  # and leading zeros are kept
    kv_rows(tmp_path, commit="000000123456", gpu=H100, gpu_uuid=UUID_B, gpu_sms="all", run_started="2026-11-26T11:41")
    assert len(rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True, BATCH_SIZE=16)) == 2


def test_rows_of_another_run_are_refused_in_one_line_naming_both_runs_and_the_command(tmp_path, run_here):
    old = {"gpu": H100, "gpu_sms": "all", "run_started": "2026-11-23T19:02:11+00:00"}
    kv_rows(tmp_path, commit="9d6c84b80aa0088be5679c34b14b2634ddbcc516", **old)  # the reference run's 3-day-old rows
    with pytest.raises(MissingRows) as err:
        rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True, BATCH_SIZE=16, SEQ_LENS=[100, 200])
    assert str(err.value) == (
        "notebook 03 needs notebook 02's rows at BATCH_SIZE=16, SEQ_LENS=[100, 200] from this run (commit "
        f"4f30a978e0b5, {H100}, all SMs); data/02_kv_cache.csv holds commit 9d6c84b80aa0's ({H100}, all SMs; "
        f'started 2026-11-23 19:02 UTC): run ./run_all.sh --out {tmp_path} --only 02 -p BATCH_SIZE 16 -p SEQ_LENS '
        '"[100, 200]"'
    )
    assert "\n" not in str(err.value)
    # a solution reads the committed results on purpose: this_run off, the same rows are read as before
    assert rows_at("02_kv_cache", tmp_path, "solution 02", BATCH_SIZE=16)["max_seqlen"].tolist() == [100, 200]
    # another GPU, another slice, no commit at all: another run each
    kv_rows(tmp_path, **{**old, "gpu": "NVIDIA L40S"}, commit="4f30a978e0b5")
    with pytest.raises(MissingRows, match=r"holds commit 4f30a978e0b5's \(NVIDIA L40S, all SMs; started "):
        rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True)
    kv_rows(tmp_path, **{**old, "gpu_sms": 16}, commit="4f30a978e0b5")
    with pytest.raises(MissingRows, match=rf"holds commit 4f30a978e0b5's \({H100}, 16 SMs; started "):
        rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True)
    kv_rows(tmp_path, **old)
    no_commit = rf"; data/02_kv_cache.csv holds rows of no commit \({H100}, all SMs; started 2026-11-23 19:02 UTC\)"
    with pytest.raises(MissingRows, match=no_commit):
        rows_at("02_kv_cache", tmp_path, "notebook 03", this_run=True)
    # notebook 13's slice table sets each row's own gpu_sms: its reader checks the commit and the GPU only
    kv_rows(tmp_path, **{**old, "gpu_sms": 16}, commit="4f30a978e0b5")
    assert len(rows_at("02_kv_cache", tmp_path, "notebook 14", this_run=("commit", "gpu"))) == 2


def test_one_commit_is_its_first_12_hex_digits():
    from tokgen.results import same_commit

    assert same_commit("4f30a978e0b5", "4f30a978e0b5d1e2f3a4")  # either may be longer
    assert same_commit("4f30a978e0b5-dirty", "4f30a978e0b5")
    assert same_commit("4f30a97", "4f30a978e0b5")  # a short hash: its 7 digits
    assert not same_commit("4f30a978e0b5", "4f30a978e0b6")
    assert not same_commit("4f30a978e0b5", "9d6c84b80aa0")
    assert not same_commit("unknown", "4f30a978e0b5") and same_commit("unknown", "unknown")
    assert not same_commit(float("nan"), "4f30a978e0b5")


def test_a_smoke_run_reads_its_own_rows_on_the_cpu(tmp_path, monkeypatch):
    """No GPU: every process of one smoke run writes and reads gpu "none (CPU)" at this checkout's commit."""
    monkeypatch.delenv("TOKGEN_COMMIT", raising=False)
    environment.cache_clear()
    naive_rows(tmp_path)  # written by this process's Recorder
    assert rows_at("01_naive", tmp_path, "notebook 02", this_run=True)["max_seqlen"].tolist() == [100, 200]


def test_environment_names_versions(monkeypatch):
    import platform
    from importlib.metadata import version

    import torch

    env = environment()
    assert (env["torch"], env["transformers"], env["python"]) == (
        torch.__version__, version("transformers"), platform.python_version())  # fmt: skip
    assert env["gpu"] == (torch.cuda.get_device_name() if torch.cuda.is_available() else "none (CPU)")
    monkeypatch.setenv("TOKGEN_COMMIT", "abc123")
    assert tokgen.results.git_commit() == "abc123"


def test_environment_names_the_gpu_by_its_uuid_and_the_triton_that_is_installed(monkeypatch):
    """Two machines of one kind differ by the UUID of the GPU this process uses (here device 1);
    triton's version is recorded where it is installed, "" (shown as not installed) where not."""
    import uuid
    from importlib.metadata import PackageNotFoundError
    from types import SimpleNamespace

    import torch

    one = uuid.UUID(int=1)  # as torch gives it: str() reads 00000000-0000-0000-0000-000000000001
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "GPU X")
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", {1: SimpleNamespace(uuid=one)}.__getitem__)
    monkeypatch.setattr(tokgen.results, "_run", lambda cmd, cwd=None: "580.1")
    monkeypatch.setenv("TOKGEN_COMMIT", "abc123")
    versions = {"triton": "3.6.0", "transformers": "5.1.0"}

    def version(package):
        if package not in versions:
            raise PackageNotFoundError(package)
        return versions[package]

    monkeypatch.setattr(tokgen.results, "version", version)
    environment.cache_clear()
    try:
        env = environment()
        assert (env["gpu"], env["driver"]) == ("GPU X", "580.1")
        assert env["gpu_uuid"] == "00000000-0000-0000-0000-000000000001"
        assert env["triton"] == "3.6.0" and env["transformers"] == "5.1.0"
        assert "      triton: 3.6.0" in tokgen.describe_environment().splitlines()
        del versions["triton"]
        environment.cache_clear()
        assert environment()["triton"] == ""  # the rows' provenance keeps it empty
        lines = tokgen.describe_environment().splitlines()
        assert "      triton: (not installed)" in lines
        assert "    gpu_uuid: 00000000-0000-0000-0000-000000000001" in lines
    finally:
        environment.cache_clear()  # the next test reads this machine's provenance, not the fake's


def test_the_environment_printout_names_an_unset_allocator_setting(monkeypatch):
    monkeypatch.delenv("PYTORCH_ALLOC_CONF", raising=False)
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    environment.cache_clear()
    assert "  alloc_conf: (not set: PyTorch's default)" in tokgen.describe_environment().splitlines()
    assert environment()["alloc_conf"] == ""  # the rows' provenance keeps it empty
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True")
    environment.cache_clear()
    assert "  alloc_conf: expandable_segments:True" in tokgen.describe_environment().splitlines()
    environment.cache_clear()


def test_run_of_says_which_run_wrote_a_table():
    from tokgen.results import run_of

    df = pd.DataFrame({"commit": ["6ae714b0e47c"] * 2, "run_started": ["2026-11-23T17:11:18+00:00"] * 2})
    assert run_of(df) == "commit 6ae714b, started 2026-11-23 17:11 UTC"  # Recorder.started is UTC
    assert run_of(df.drop(columns="commit")) == "no provenance columns"


def test_the_cpu_is_named_by_its_model_and_the_logical_cpus_this_process_may_use(monkeypatch, tmp_path):
    import os
    from pathlib import Path

    from tokgen.results import cpu_model

    info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9454 48-Core Processor\n"
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda p, *a, **k: info if str(p) == "/proc/cpuinfo" else real(p, *a, **k))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 5}, raising=False)
    assert cpu_model() == "AMD EPYC 9454 48-Core Processor, 3 logical CPUs"
    monkeypatch.setattr(Path, "read_text", lambda p, *a, **k: (_ for _ in ()).throw(OSError("no /proc")))
    monkeypatch.setattr("platform.processor", lambda: "arm")
    assert cpu_model() == "arm, 3 logical CPUs"


HASHES = ["6349888223e5", "123456789012"]  # digits and one "e" (a float to pandas), and digits only (an int)


def test_a_commit_of_digits_reads_and_rewrites_as_the_text_it_is(tmp_path):
    """Every reader of data/ tables (results.read_table) keeps a commit such as 6349888223e5 as text, and a
    Recorder's rewrite (a row with a new column) leaves the older rows' bytes as they were (review r58 M1)."""
    import csv

    from tokgen.claims import regime_commits
    from tokgen.results import read_table
    from tokgen.stats import recorded_rounds_source
    from tokgen_tools import runner
    from tokgen_tools.seqsim import table_commits

    rec = Recorder("t", tmp_path)
    for i, commit in enumerate(HASHES):
        rec.write({"x": i, "commit": commit, "gpu": "H100", "cuda": "12.10"})
    before = (tmp_path / "data" / "t.csv").read_text().splitlines()
    rec.write({"x": 2, "commit": HASHES[0], "gpu": "H100", "cuda": "12.10", "extra": "y"})  # rewritten with the union
    after = (tmp_path / "data" / "t.csv").read_text().splitlines()
    assert [line + "," for line in before[1:]] == after[1:3]  # the old rows as they were, the new column empty
    assert read_table(rec.path, keep_default_na=False).to_csv(index=False) == rec.path.read_text()  # byte-identical
    assert rec.read()["commit"].tolist() == [*HASHES, HASHES[0]] and rec.read()["cuda"].tolist() == ["12.10"] * 3
    assert load("t", tmp_path)["commit"].tolist() == [*HASHES, HASHES[0]]
    assert regime_commits(tmp_path, {}) == {"whole GPU": tuple(sorted(HASHES))}  # claims._sources: notebooks 09, 13
    assert table_commits(["data/t.csv"], tmp_path) == f"{HASHES[1]} (1 table), {HASHES[0]} (1 table)"

    rows = [{"source": "recorded rounds", "scenario": "A/A", "commit": HASHES[0], "recorded_pairs": "",
             "recorded_at": "2026-11-26T21:48:19+00:00", "recorded_commits": HASHES[1]}]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "sequential_error_rates.csv", index=False)
    said = recorded_rounds_source(tmp_path)  # notebook 00's line under the error-rate table
    assert f"made at commit {HASHES[1]}; the simulation ran at commit {HASHES[0]}, 2026-11-26 21:48 UTC." in said

    (tmp_path / "data" / "run_all.csv").write_text(f"notebook,status,seconds,commit\n00_setup,ok,1.0,{HASHES[0]}\n")
    runner.record_timings([{"notebook": "01_naive", "status": "ok", "seconds": 2.0}], tmp_path, False)
    with open(tmp_path / "data" / "run_all.csv") as f:
        assert next(csv.DictReader(f))["commit"] == HASHES[0]  # the older row rewritten as it was


def test_every_reader_of_data_tables_is_read_table():
    """One reader: a `pd.read_csv` elsewhere in src/ would read a hash of digits as a number again."""
    found = [p.name for p in (ROOT / "src").rglob("*.py") if "read_csv(" in p.read_text() and p.name != "results.py"]
    assert not found


def test_rows_where_keeps_one_exercises_rows_of_a_solutions_table(tmp_path):
    """Review rv19A S5: a solution records every measurement in one table and reads each exercise's rows back."""
    from tokgen.results import rows_where

    rec = tokgen.Recorder("99_toy_solution", tmp_path)
    rec.write({"exercise": 1, "measure": "extra columns", "value": 0})
    rec.write({"exercise": 1, "measure": "extra columns", "value": 2})
    rec.write({"exercise": 3, "measure": "steps", "computed": 8, "kept": 2})
    ex1 = rows_where(rec.read(), exercise=1, measure="extra columns")
    assert ex1["value"].tolist() == [0, 2] and list(ex1.index) == [0, 1]
    ex3 = rows_where(rec.read(), exercise=3)
    assert ex3[["computed", "kept"]].values.tolist() == [[8, 2]] and ex3["value"].isna().all()
    assert rows_where(rec.read(), exercise=2).empty
    # a column no row recorded (review rr20i N1): no rows, not a KeyError
    none = rows_where(rec.read(), exercise=3, measure_kind="full profile")
    assert none.empty and list(none.columns) == list(rec.read().columns)
    assert rows_where(rec.read(), exercise=3, measure_kind="x").reindex(columns=["cuda_call"]).empty
