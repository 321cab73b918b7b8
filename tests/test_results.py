"""Rows on disk as soon as they are measured, each with its provenance."""

import pandas as pd
import pytest

import tokgen
from tokgen.results import Recorder, environment, load


def test_rows_are_on_disk_at_once_with_provenance(tmp_path):
    rec = Recorder("t", tmp_path, params={"B": 4})
    rec.write({"variant": "a", "median_ms": 1.5})
    on_disk = pd.read_csv(tmp_path / "data" / "t.csv")
    assert len(on_disk) == 1
    for column in ("gpu", "driver", "torch", "transformers", "commit", "recorded_at", "params"):
        assert column in on_disk.columns
    assert on_disk.loc[0, "params"] == '{"B": 4}'
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


def test_missing_table_says_which_notebook(tmp_path):
    with pytest.raises(FileNotFoundError, match="run the notebook that writes table '09_summary'"):
        load("09_summary", tmp_path)


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
