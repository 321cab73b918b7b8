"""Review rv22B S4: solutions 05 and 11 printed numbers no CSV recorded. Each now records its measurements, one row
each, in data/<notebook>_solution.csv, and prints them as read back (`rec.read()`), as solutions 06, 07 and 10 do."""

import math
from pathlib import Path

import pytest

import tokgen

ROOT = Path(__file__).resolve().parents[1]


def source(name: str) -> str:
    return (ROOT / "solutions" / f"{name}.py").read_text()


@pytest.mark.parametrize(
    "name, measures",
    [
        ("05_torch_compile", [(1, "timing"), (2, "compilations"), (2, "recompile reason"), (3, "gpu ops per step")]),
        ("11_sync_audit", [(1, "syncs"), (2, "first sync"), (3, "timing")]),
    ],
)
def test_each_solution_records_every_measurement_and_prints_it_as_recorded(name, measures):
    text = source(name)
    assert f'rec = tokgen.Recorder("{name}_solution", RESULTS_DIR, params=PARAMS)' in text
    assert 'RESULTS_DIR = "../build/lab"' in text  # the runner sets ".." there: the staging copy it keeps
    for exercise, measure in measures:
        assert f'{{"exercise": {exercise}, "measure": "{measure}"' in text, (exercise, measure)
        assert f'recorded({exercise}, "{measure}")' in text, (exercise, measure)
    assert "no CSV" not in text and "recorded nowhere" not in text


def test_solution_05s_one_look_comparison_reads_back_as_it_was_judged(tmp_path):
    """Exercise 1 times its settings in one look of RUNS rounds (`max_rounds=RUNS`): the CSV holds `looks` as one
    number, which reads back as a number, not "12"; the speed-ups recomputed from the recorded rows are the ones the
    comparison judged (the look's design, "up to 6" in the text), and the first calls' columns come back beside
    them, empty for eager."""
    model = tokgen.build_model("tiny", "cpu")
    variants = [tokgen.generator_variant(g, model, batch_size=2, max_seqlen=4) for g in ("naive", "kv_static")]
    pairs = [(variants[0].name, variants[1].name)]
    timed = []
    kept = tokgen.compare(variants, rounds=6, max_rounds=6, pairs=pairs, device="cpu", gpu_busy=False,
                          record=timed.append)  # fmt: skip
    rec = tokgen.Recorder("99_toy_solution", tmp_path)
    first = {variants[1].name: {"compilations": 2, "recompile_limit": 8, "dynamo_warnings": "none",
                                "compiling_call_s": 1.25}}  # fmt: skip
    for r in timed:
        rec.write({"exercise": 1, "measure": "timing", **r, **first.get(r["variant"], {}), "compiled_in_rounds": 0})
    rec.write({"exercise": 2, "measure": "recompile reason", "generator": "kv_dynamic", "order": 0,
               "reason": "tensor 'input_ids' stride mismatch at index 0. expected 1, actual 2"})  # fmt: skip
    back = tokgen.results.rows_where(rec.read(), exercise=1, measure="timing")
    base, other = variants[0].name, variants[1].name
    assert tokgen.stats.parse_looks(back.set_index("variant").loc[other, "looks"]) == (6,)
    assert tokgen.gain(back, base, other) == tokgen.gain(kept, base, other)
    said = tokgen.display.speedup_text(tokgen.gain(back, base, other))
    assert "up to 6" in said and said == tokgen.display.speedup_text(tokgen.gain(kept, base, other))
    row = back.set_index("variant").loc[other]
    assert (int(row["compilations"]), int(row["recompile_limit"]), row["dynamo_warnings"]) == (2, 8, "none")
    assert row["compiling_call_s"] == 1.25 and math.isnan(back.set_index("variant").loc[base, "compilations"])
    why = tokgen.results.rows_where(rec.read(), exercise=2, measure="recompile reason")
    assert why["reason"].tolist() == ["tensor 'input_ids' stride mismatch at index 0. expected 1, actual 2"]


def test_the_looks_of_one_look_read_as_a_number_are_that_look():
    """A CSV reads a lone look ("12") as the number 12, and beside empty cells as 12.0: both are the look."""
    assert tokgen.stats.parse_looks(12) == tokgen.stats.parse_looks(12.0) == tokgen.stats.parse_looks("12") == (12,)
    assert tokgen.stats.parse_looks(float("nan")) == tokgen.stats.parse_looks(None) == ()
    assert tokgen.stats.parse_looks("10;20;40;80") == (10, 20, 40, 80)


def test_solution_11s_sync_counts_and_first_sync_read_back_as_they_were_said(tmp_path):
    """Exercise 1's counts (a lost session's NaN kept) per decode step from the recorded `tokens`, the sentence on the
    change from notebook 11's audit from the recorded rows; exercise 2's first sync with its functions and line."""
    rec = tokgen.Recorder("99_toy_solution", tmp_path)
    rows = [
        {"generator": "kv_static", "tokens": 32, "local_scalar_dense": 32, "stream_syncs": 0, "counted": "yes",
         "transformers": "5.17.0"},
        {"generator": "generate() static", "tokens": 32, "local_scalar_dense": float("nan"),
         "stream_syncs": float("nan"), "counted": tokgen.profiling.NOT_COUNTED, "transformers": "5.17.0"},
    ]  # fmt: skip
    for row in rows:
        rec.write({"exercise": 1, "measure": "syncs", **row})
    rec.write({"exercise": 2, "measure": "first sync", "raised": "yes", "file": "transformers/generation/utils.py",
               "line": 2517, "code": "if x.item():", "functions": "generate;_sample", "forward_passes": 0,
               "transformers": "5.17.0"})  # fmt: skip
    counted = tokgen.results.rows_where(rec.read(), exercise=1, measure="syncs")
    assert "`generate() static`" in tokgen.display.not_counted_text(counted)
    here = counted.query("counted == 'yes'")
    assert (here["local_scalar_dense"] / here["tokens"]).tolist() == [1.0]
    audit = tokgen.load("11_sync_audit", ROOT)
    assert tokgen.profiling.sync_change_text(audit, here) == tokgen.profiling.sync_change_text(
        audit, tokgen.results.rows_where(__import__("pandas").DataFrame(rows[:1]), counted="yes")
    )
    got = tokgen.results.rows_where(rec.read(), exercise=2, measure="first sync").iloc[0]
    said = tokgen.profiling.first_sync_text(got["file"], int(got["line"]), got["code"], got["functions"].split(";"),
                                            got["transformers"], int(got["forward_passes"]))  # fmt: skip
    assert said.startswith(
        "First sync (transformers 5.17.0; the line number is that version's): "
        "`transformers/generation/utils.py`, line 2517, in `generate` → `_sample`: `if x.item():`."
    )


@pytest.mark.gpu
def test_on_a_gpu_the_solutions_rows_read_back_as_they_were_measured(tmp_path):
    """The GPU paths of solutions 05 and 11 (seconds, the tiny model): a comparison on CUDA with its busy time,
    recorded and read back, gives the speed-up it judged; the sync counts of exercise 11.1 and the GPU operations
    per step of exercise 05.3 come back as counted."""
    model = tokgen.build_model("tiny", "cuda")
    rec = tokgen.Recorder("99_toy_solution", tmp_path)
    variants = [tokgen.generator_variant(g, model, batch_size=2, max_seqlen=8) for g in ("naive", "kv_static")]
    record = lambda r: rec.write({"exercise": 3, "measure": "timing", **r})  # noqa: E731
    kept = tokgen.compare(variants, rounds=6, max_rounds=6, pairs=[(variants[0].name, variants[1].name)],
                          device="cuda", record=record)  # fmt: skip
    back = tokgen.results.rows_where(rec.read(), exercise=3, measure="timing")
    base, other = variants[0].name, variants[1].name
    assert tokgen.gain(back, base, other) == tokgen.gain(kept, base, other)
    run = lambda: tokgen.generate("kv_static", model, batch_size=2, max_seqlen=8)  # noqa: E731
    run()
    counts = {"generator": "kv_static", "tokens": 8, **tokgen.profiling.counted_syncs(run)}
    rec.write({"exercise": 1, "measure": "syncs", **counts})
    synced = tokgen.results.rows_where(rec.read(), exercise=1, measure="syncs").iloc[0]
    assert synced["counted"] == counts["counted"]
    if counts["counted"] == "yes":  # a session lost to CUPTI (pytorch/kineto#1554) counts nothing: NaN both ways
        assert synced["local_scalar_dense"] == counts["local_scalar_dense"]
    step = lambda on_step: tokgen.generate("kv_static", model, batch_size=2, max_seqlen=16, on_step=on_step)  # noqa: E731
    step(tokgen.generators.no_hook)
    ops = tokgen.profile_steps(step, start=4, stop=12).summary()["kernels_per_step"]
    rec.write({"exercise": 3, "measure": "gpu ops per step", "model": "eager", "gpu_ops_per_step": ops})
    counted = tokgen.results.rows_where(rec.read(), exercise=3, measure="gpu ops per step")
    assert tokgen.display.gpu_ops_text(dict(zip(counted["model"], counted["gpu_ops_per_step"])), 2) == (
        tokgen.display.gpu_ops_text({"eager": ops}, 2)
    )
