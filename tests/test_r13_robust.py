"""Review rvD13: paths that had never run on a GPU (notebooks 13 and 14, the GPU cells of solutions 04, 11
and 14), each pinned with data whose answer is known: a failed or escaped variant, a lost profiler session, a
GPU slower than the L40S."""

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tokgen
from tokgen import display, profiling
from tokgen.claims import Tables, deferred_stop_gains
from tokgen.regimes import MAP_COLUMNS, regime_findings, regime_gains
from tokgen.results import ROOT, read_table
from tokgen_tools import readme

KV = "kv_static"
FIXTURES = Path(__file__).parent / "fixtures"  # committed runs frozen as known answers (data/ is replaced by runs)


def _map() -> pd.DataFrame:
    """Notebook 13's run on an H100 at 9d6c84b (every status ok, every busy time measured), kept as a fixture so the
    known answers below stay known when notebook 13 runs again (data/13_regimes.csv is then another run)."""
    runs = read_table(FIXTURES / "13_regimes_h100_9d6c84b.csv")
    return runs.assign(error=runs["error"].astype(object))


def _at(runs: pd.DataFrame, variant: str, point: str) -> pd.Series:
    return (runs["variant"] == variant) & (runs["map_point"] == point)


# --- M1: a point whose synchronous base is not usable ---


def test_a_point_whose_synchronous_generator_failed_is_said_not_measured_not_a_key_error():
    runs = _map()
    runs.loc[_at(runs, KV, "8 SMs, B=32"), ["status", "error", "times_ms"]] = ["oom", "OutOfMemoryError: x", ""]
    m = regime_gains(runs)
    assert len(m) == 36 - 2  # the point's two comparisons left off, every other one kept
    assert not ((m["where"] == "8 SMs") & (m["batch_size"] == 32) & ~m["compiled"]).any()
    note = "8 SMs, B=32, eager: the synchronous generator (`kv_static`) not measured (oom: OutOfMemoryError: x)"
    assert m.attrs["not_measured"] == [note + ", so neither comparison there"]
    assert f"- Not on this map: {note}, so neither comparison there." in regime_findings(m, bracket=(8, 16))


def test_a_point_whose_synchronous_generator_left_its_slice_is_said_so():
    runs = _map()
    runs.loc[_at(runs, KV, "8 SMs, B=32"), "slice_escapes"] = 2
    (note,) = regime_gains(runs).attrs["not_measured"]
    assert "(`kv_static`) not measured (2 of its timed runs left the slice)" in note


def test_a_map_without_any_usable_row_is_an_empty_frame_and_one_honest_line():
    runs = _map().assign(status="error")
    m = regime_gains(runs)
    assert m.empty and list(m.columns) == MAP_COLUMNS
    assert len(m.attrs["not_measured"]) == 18  # 9 points, eager and compiled
    text = regime_findings(m, bracket=(8, 16))
    assert text.startswith("- Pipelining against the check at every step: no point of this map was measured")
    assert "of 0 points" not in text and text.count("- Not on this map: ") == 18


def test_no_pipelined_point_is_one_line_not_of_0_points():
    runs = _map()
    runs.loc[runs["generator"] == "pipelined_static", "status"] = "error"
    text = regime_findings(regime_gains(runs), bracket=(8, 16))
    assert "of 0 points" not in text and ": ." not in text
    assert text.splitlines()[0] == ("- Pipelining against the check at every step: no point of this map was "
                                    "measured, so the map says nothing of where it pays.")  # fmt: skip
    assert "- Not on this map: all SMs, B=32, eager: `pipelined_static` not measured (error)." in text


def test_the_readme_says_a_map_with_no_point_not_measured(tmp_path):
    (tmp_path / "data").mkdir()
    _map().assign(status="error").to_csv(tmp_path / "data" / "13_regimes.csv", index=False)
    line = readme._regimes_line(tmp_path)
    assert line.startswith("- **Where hiding the sync pays**") and "not measured" in line
    assert "18 point(s) or comparison(s) not measured (notebook 13 names them)" in line


# --- M2: no two slices bracket the L40S ---


def test_bracket_or_all_brackets_only_where_two_slices_lie_on_either_side():
    assert tokgen.gpu_slice.bracket_or_all({8: 625.0, 16: 1137.0, 24: 1595.0}) == ((8, 16), True)
    assert tokgen.gpu_slice.bracket_or_all({8: 60.0, 16: 115.0}) == ((8, 16), False)  # an L4: both below 864
    assert tokgen.gpu_slice.bracket_or_all({8: 900.0, 16: 1800.0, 24: 2500.0}) == ((8, 16, 24), False)


def _notebook_13_bracket(slices: pd.DataFrame) -> tuple[pd.DataFrame, object]:
    """Notebook 13's own statements that mark the bracketing slices, run on `slices`, and the `bracket` its
    findings cell passes on a GPU."""
    tree = ast.parse((ROOT / "notebooks" / "13_regimes.py").read_text())
    wanted = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
              and any(w in ast.unparse(n.targets[0]) for w in ("BRACKET", "slices['brackets']"))]  # fmt: skip
    space = {"tokgen": tokgen, "slices": slices, "SIZES": list(slices["gpu_sms"]), "ON_GPU": True}
    exec(compile(ast.Module(wanted, []), "13_regimes.py", "exec"), space)
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("regime_findings")]
    bracket = next(k.value for k in call.keywords if k.arg == "bracket")
    return space["slices"], eval(compile(ast.Expression(bracket), "13_regimes.py", "eval"), space)


def test_notebook_13_calls_no_slice_bracketing_on_a_gpu_slower_than_the_l40s():
    l4 = pd.DataFrame({"gpu_sms": [8, 16], "copy_gbs": [60.0, 115.0]})  # SLICE_SMS [8, 16] on an L4
    slices, bracket = _notebook_13_bracket(l4)
    assert not slices["brackets"].any() and tuple(bracket) == ()
    h100 = pd.DataFrame({"gpu_sms": [8, 16, 24], "copy_gbs": [625.0, 1137.0, 1595.0]})
    slices, bracket = _notebook_13_bracket(h100)
    assert slices["brackets"].tolist() == [True, True, False] and tuple(bracket) == (8, 16)


def test_findings_without_a_bracket_say_no_slice_brackets_the_l40s():
    m = regime_gains(_map())
    text = regime_findings(m, bracket=())
    assert "one of the two that bracket" not in text and "not a bracketing slice" not in text
    assert "- The article's B = 32 in the 8 SMs slice (no slice of this map brackets the L40S on this GPU)" in text


# --- S1: a lost profiler session on a GPU run ---


def test_findings_with_shares_lost_on_a_gpu_say_not_measured_not_no_gpu():
    m = regime_gains(_map())
    lost = m.assign(gpu_share=np.nan)
    text = regime_findings(lost, bracket=(8, 16))
    assert "(no GPU)" not in text and "nan" not in text
    assert "GPU share not measured (the profiler recorded no GPU busy time: a lost session)" in text
    assert "eager: GPU share not measured, pipelined ×" in text
    assert "at 7 point(s), whose GPU share was not measured" in text
    cpu = regime_findings(lost.assign(where="CPU"))
    assert "GPU share not measured (no GPU)" in cpu


def test_findings_pick_the_lowest_paid_share_among_those_measured_and_count_the_rest():
    m = regime_gains(_map())
    low = (m["hidden_by"] == "pipelined_static") & (m["gpu_share"].round(2) == 0.40)  # the lowest where it paid
    text = regime_findings(m.assign(gpu_share=m["gpu_share"].mask(low)), bracket=(8, 16))
    assert "nan" not in text
    line = next(x for x in text.splitlines() if x.startswith("- The lowest GPU share at which it paid"))
    assert ": 0.40 " not in line and "; 1 more where its GPU share was not measured" in line
    assert "; 1 more point(s) whose GPU share was not measured, so not counted as either." in text
    assert "1 of the 18 points' GPU share not measured" in text


# --- M3 and S3: notebook 14's rows ---


def _deferred_rows(changes: dict) -> pd.DataFrame:
    d = read_table(FIXTURES / "14_deferred_stop_h100_9d6c84b.csv")  # notebook 14's H100 run, as a fixture
    d["error"] = d["error"].astype(object)
    for (variant, sms), values in changes.items():
        at = (d["variant"] == variant) & (d["gpu_sms"].astype(str) == sms)
        for column, value in values.items():
            d.loc[at, column] = value
    return d


def test_shares_by_outcome_leave_out_a_lost_share_and_say_so():
    lost = {("generate() dynamic sync", "all"): {"gpu_busy_ms": np.nan, "gpu_busy_share": np.nan}}
    d = deferred_stop_gains(Tables(None, cache={"14_deferred_stop": _deferred_rows(lost)}))
    text = display.shares_by_outcome_text(d)
    assert "nan" not in text and "(rows not confined, or not measured, left out)" in text
    # the whole GPU's dynamic row (share lost) left out, and the 8-SM dynamic row, whose confinement reads the
    # whole GPU's busy time; the 8-SM static row ran outside its slice: the whole GPU's static row alone
    assert "undecided: 0.41." in text
    every = display.shares_by_outcome_text(d.assign(gpu_share_sync=np.nan))
    assert every.startswith("* By outcome, the GPU shares of the synchronous step: not measured")


def test_the_readme_deferred_table_says_not_measured_for_a_lost_share(monkeypatch):
    lost = {("generate() dynamic sync", "all"): {"gpu_busy_ms": np.nan, "gpu_busy_share": np.nan}}
    d = deferred_stop_gains(Tables(None, cache={"14_deferred_stop": _deferred_rows(lost)}))
    monkeypatch.setattr(readme, "deferred_stop_gains", lambda results_dir: d)
    text = readme.deferred_table(Path("."))
    assert "nan" not in text and "| whole GPU | dynamic | not measured | ×" in text


FAILED = {"status": "error", "error": "RuntimeError: x", "times_ms": "", "gpu_busy_ms": np.nan,
          "gpu_busy_share": np.nan}  # fmt: skip


def test_a_failed_deferred_variant_keeps_its_row_and_names_what_failed():
    rows = _deferred_rows({("generate() static deferred", "8"): FAILED})
    d = deferred_stop_gains(Tables(None, cache={"14_deferred_stop": rows}))
    assert len(d) == 4  # every place and cache, the failed one too
    r = d[(d["gpu_sms"] == "8") & (d["cache"] == "static")].iloc[0].to_dict()
    assert not isinstance(r["outcome"], str) and pd.isna(r["speedup"])
    assert r["not_measured"] == "`generate() static deferred` error: RuntimeError: x"
    assert r["gpu_share_sync"] == pytest.approx(0.42671, abs=1e-4)  # its sync variant ran: its share is known
    assert display.deferred_row_text("8-SM slice", r) == (
        "* 8-SM slice, static cache: GPU share of a synchronous step 0.43; deferred against sync not measured "
        "(`generate() static deferred` error: RuntimeError: x).")  # fmt: skip
    assert display.static_vs_dynamic_text(d)[1] == ("* 8-SM slice: not compared, the static cache's comparison not "
                                                    "measured (`generate() static deferred` error: RuntimeError: x).")
    whole = _deferred_rows({("generate() static deferred", "all"): FAILED})
    shares = display.shares_by_outcome_text(deferred_stop_gains(Tables(None, cache={"14_deferred_stop": whole})))
    assert "undecided: 0.14, 0.69." in shares  # the whole GPU's static row (0.41) has no comparison: left out


def test_a_failed_sync_variant_keeps_its_row_with_no_share_and_the_readme_counts_it(monkeypatch):
    rows = _deferred_rows({("generate() dynamic sync", "all"): FAILED | {"status": "oom", "error": ""}})
    d = deferred_stop_gains(Tables(None, cache={"14_deferred_stop": rows}))
    r = d[(d["gpu_sms"] == "all") & (d["cache"] == "dynamic")].iloc[0].to_dict()
    assert r["not_measured"] == "`generate() dynamic sync` oom" and math.isnan(r["gpu_share_sync"])
    assert display.deferred_gain_text(r) == "not measured (`generate() dynamic sync` oom)"
    monkeypatch.setattr(readme, "deferred_stop_gains", lambda results_dir: d)
    line = readme._deferred_line(Path("."))
    assert "; 1 more not measured (a variant failed or left its slice), not counted." in line
    assert "; 1 more, whose confinement was not measured, is not counted" in line  # the 8-SM dynamic row: the
    # whole GPU's sync variant failed, so its busy time, against which a slice's confinement is read, is unknown
    assert "not measured (`generate() dynamic sync` oom)" in readme.deferred_table(Path("."))


# --- S2 and N1: sync counts ---


def test_a_lost_profiler_session_is_a_row_that_says_not_counted(monkeypatch):
    def lost(run):
        raise profiling.LostSession("no CUDA runtime call")

    monkeypatch.setattr(profiling, "count_syncs", lost)
    row = profiling.counted_syncs(lambda: None)
    assert row["counted"] == profiling.NOT_COUNTED and all(math.isnan(row[k]) for k in profiling.SYNC_KINDS)
    rows = pd.DataFrame([{"generator": "a", "counted": "yes"}, {"generator": "generate() static", **row}])
    assert display.not_counted_text(rows).startswith("* Not counted: `generate() static` (the profiler lost")
    assert display.not_counted_text(rows.head(1)) == ""


def test_hidden_sync_text_tells_close_counts_apart_and_says_not_counted():
    assert display.hidden_sync_text(pd.Series({True: 0.02, False: 0.04})) == (
        "Without `cache_position`: about 0.04 stream syncs per step, 0.02 with it.")
    assert display.hidden_sync_text(pd.Series({True: 0.0, False: 1.0})).endswith("about 1.0 stream syncs per "
                                                                                  "step, 0.0 with it.")
    lost = display.hidden_sync_text(pd.Series({True: 0.02, False: np.nan}))
    assert lost.startswith("Stream syncs per step not counted without `cache_position`") and "nan" not in lost


def test_the_solution_11_sentences_say_a_row_not_counted():
    audit = pd.DataFrame({"generator": ["generate() dynamic", "kv_static"], "tokens": [32, 32],
                          "local_scalar_dense": [99.0, np.nan], "stream_syncs": [99.0, np.nan],
                          "local_scalar_dense_per_token": [3.094, np.nan], "transformers": "5.1.0"})  # fmt: skip
    said = profiling.audit_reads_text(audit, ["generate() dynamic", "kv_static"])
    assert "`kv_static` not counted (a lost profiler session)" in said and "nan" not in said
    change = profiling.sync_change_text(audit, audit.fillna(1.0))
    assert "`kv_static`: not counted in one of the two (the profiler lost its session)" in change


def _code(path: str) -> str:
    return "\n".join(ast.unparse(n) for n in ast.parse((ROOT / path).read_text()).body)


@pytest.mark.parametrize("path", ["solutions/04_static_cache.py", "notebooks/11_sync_audit.py",
                                  "solutions/11_sync_audit.py"])  # fmt: skip
def test_the_gpu_cells_count_syncs_through_the_lost_session_guard(path):
    code = _code(path)
    assert "tokgen.count_syncs(" not in code and "profiling.counted_syncs(" in code


# --- N2, N3 ---


def test_notebook_14_skips_slice_sizes_this_gpu_cannot_hold():
    assert "tokgen.gpu_slice.sizes_that_fit(SLICE_SMS)" in _code("notebooks/14_deferred_stop.py")


def test_the_device_memory_note_reads_the_gpu_name_passed_beside_rows_without_it():
    rows = pd.DataFrame({"max_seqlen": [50], "device_memory_gb": 85.0, "peak_reserved_gb": [8.8]})  # compare's rows
    assert "nearer the GiB figure" in display.device_memory_note(rows, "NVIDIA H100 80GB HBM3")
    assert "of its name" not in display.device_memory_note(rows)
    (call,) = [n for n in ast.walk(ast.parse((ROOT / "notebooks" / "01_naive.py").read_text()))
               if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("device_memory_note")]  # fmt: skip
    assert ast.unparse(call.args[1]) == "tokgen.environment()['gpu']"


def test_the_readme_counts_paid_points_whose_gpu_share_was_lost(tmp_path):
    """rrA13 S4: the README's map line says how many paid points had no GPU share (a lost profiler session),
    beside the lowest measured share, or alone where every share was lost."""
    (tmp_path / "data").mkdir()
    runs = _map()
    runs.assign(gpu_busy_share=float("nan"), gpu_busy_ms=float("nan")).to_csv(tmp_path / "data" / "13_regimes.csv",
                                                                             index=False)  # fmt: skip
    piped = regime_gains(runs.assign(gpu_busy_share=float("nan")))
    paid_points = int(tokgen.regimes.paid(piped[piped["hidden_by"] == "pipelined_static"]).sum())
    assert paid_points > 0
    line = readme._regimes_line(tmp_path)
    assert f"; it paid at {paid_points} point(s) whose GPU share was not measured" in line
    assert "the lowest GPU share" not in line
