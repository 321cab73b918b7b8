"""Session 22 (post49): fixes that change what notebooks 07, 10 and 12 measure or record."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from test_bench import FakeClock
from test_notebook_sources import code_cells

import tokgen
import tokgen.display
from tokgen import claims

ROOT = Path(__file__).resolve().parents[1]


# rv21A S1: the summary reads the no-check generator against the synchronous one as the bound on what hiding the
# check can gain; the sequential design must follow that pair to a decision or the cap, eager and compiled


def test_notebook_07_follows_the_no_check_bound_for_both_models():
    needed = claims.followed_pairs()
    for c in (False, True):
        assert (tokgen.label("kv_static", compiled=c), tokgen.label("kv_static_no_check", compiled=c)) in needed
    assert len(needed) == len(set(needed)) == 7 + 4 + 2 + 1
    assert needed[-1] == ("naive", "compiled pipelined_static", claims.SUMMARY_THRESHOLDS)
    source = (ROOT / "notebooks" / "07_pipelining.py").read_text()
    assert "needed = tokgen.claims.followed_pairs()" in source and "tokgen.claims.BOUND_PAIRS" in source


def jittered(name, clock, ms, rng):
    """A variant whose every run takes `ms` × 10% jitter, no drift (`test_bench.timed` without it)."""

    def run():
        clock.now += 1e-3 * ms * rng.lognormal(0, 0.1)
        return torch.zeros(1, 6, dtype=torch.long)

    return tokgen.Variant(name, run)


def test_an_undecided_no_check_bound_runs_on_past_the_first_look(monkeypatch):
    """Every other followed pair of notebook 07 is decided at the first look (twice as fast or more);
    the no-check generator is as fast as the synchronous one, so its pair stays open: it runs on."""
    clock, rng = FakeClock(), np.random.default_rng(3)
    monkeypatch.setattr(tokgen.bench, "time", clock)
    ms = {"kv_dynamic": 1000, "pipelined_dynamic": 500, "kv_static": 1000, "kv_static_no_check": 1000,
          "pipelined_static": 500, "pipelined_static_1stream": 250, "article_pipelined": 2000}  # fmt: skip
    variants = [jittered("naive", clock, 10_000, rng)]
    variants += [jittered(tokgen.label(g, compiled=c), clock, t / (1 + c), rng) for c in (False, True)
                 for g, t in ms.items()]  # fmt: skip
    res = tokgen.compare(variants, rounds=10, max_rounds=40, pairs=claims.followed_pairs(), device="cpu", seed=3)
    runs = res.set_index("variant")["runs"]
    bound = {tokgen.label(g, compiled=c) for g in ("kv_static", "kv_static_no_check") for c in (False, True)}
    assert (runs[list(bound)] > 10).all()  # on to a decision ("no effect") or the cap
    assert (runs.drop(list(bound)) == 10).all()  # every other pair decided at the first look: stopped there


# rv21B N7: a variant whose first call fails in notebook 10 is dropped with one line, not the notebook's end


def test_first_calls_drops_a_variant_that_raises_with_one_line_and_keeps_the_others():
    tokens = torch.arange(6).reshape(1, 6)

    def raises(err):
        def run():
            raise err

        return run

    variants = [
        tokgen.Variant("a", lambda: tokens.clone()),
        tokgen.Variant("oom", raises(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))),
        tokgen.Variant("no cuda-python", raises(ImportError("No module named 'cuda'\nmore"))),
        tokgen.Variant("no while", raises(RuntimeError("CUDA error: operation not supported"))),
        tokgen.Variant("b", lambda: tokens + 1),
    ]
    said = []
    kept, rows, failed = tokgen.bench.first_calls(variants, "cpu", tokens, report=said.append)
    assert [v.name for v in kept] == ["a", "b"] and list(rows) == ["a", "b"]
    assert [(r["variant"], r["status"]) for r in failed] == [("oom", "oom"), ("no cuda-python", "error"),
                                                             ("no while", "error")]  # fmt: skip
    assert rows["a"]["same_tokens"] is True and rows["b"]["same_tokens"] is False
    assert rows["a"]["build_ms"] >= 0 and set(rows["a"]) == set(tokgen.bench.FIRST_CALL_COLUMNS)
    assert said == [
        "`oom` is left out of the comparisons: its first call raised OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 2 GiB",
        "`no cuda-python` is left out of the comparisons: its first call raised ImportError: No module named 'cuda'",
        "`no while` is left out of the comparisons: its first call raised RuntimeError: CUDA error: operation not "
        "supported",
    ]
    # an error the notebook cannot go on without is not caught; nor anything with catch=()
    with pytest.raises(ValueError):
        tokgen.bench.first_calls([tokgen.Variant("bad", raises(ValueError("x")))], "cpu", report=said.append)
    with pytest.raises(RuntimeError):
        tokgen.bench.first_calls(variants[3:], "cpu", report=said.append, catch=())


def test_notebook_10_drops_a_failing_first_call_before_its_comparisons():
    source = (ROOT / "notebooks" / "10_cuda_graphs.py").read_text()
    assert "kept, built, failed = tokgen.bench.first_calls(variants[1:], DEVICE, reference, report=say)" in source
    assert "variants = [variants[0], *kept]" in source
    assert source.index("variants = [variants[0], *kept]") < source.index("results = tokgen.compare(variants")


@pytest.mark.gpu
def test_first_calls_on_cuda_drops_an_out_of_memory_and_keeps_the_generator():
    """GPU path of `first_calls` (notebook 10, section 2): a real out-of-memory error is caught and named, the
    allocator let go, and a generator's first call kept with the naive tokens."""
    model = tokgen.build_model("tiny", "cuda")
    reference = tokgen.generate("naive", model, batch_size=2, max_seqlen=8)
    kv = tokgen.generator_variant("kv_static", model, batch_size=2, max_seqlen=8)
    huge = tokgen.Variant("huge", lambda: torch.empty(1 << 50, dtype=torch.uint8, device="cuda"))
    said = []
    kept, rows, failed = tokgen.bench.first_calls([huge, kv], "cuda", reference, report=said.append)
    assert [v.name for v in kept] == ["kv_static"] and rows["kv_static"]["same_tokens"] is True
    assert [(r["variant"], r["status"]) for r in failed] == [("huge", "oom")]  # its row: failed (rr22b S4)
    assert failed[0]["error"].startswith("OutOfMemoryError: CUDA out of memory.") and failed[0]["runs"] == 0
    assert len(said) == 1 and said[0].startswith(
        "`huge` is left out of the comparisons: its first call raised OutOfMemoryError: CUDA out of memory."
    )


# rv21B N8: solution 12's exercises 2 and 3 record their rows in data/12_speed_of_light_solution.csv and read
# their sentences back from them, as solution 10 does


def run_solution_12(tmp_path, monkeypatch, size="tiny", swap=()):
    """Solution 12's code cells run with `size`, notebook 12's committed tables, and rows written under `tmp_path`;
    what it says, and its table read back."""
    said = []
    monkeypatch.setattr(tokgen.display, "say", said.append)
    scope, source = {}, (ROOT / "solutions" / "12_speed_of_light.py").read_text()
    assert all(old in source for old, _ in swap)  # what the test swaps is still there to swap
    for cell in code_cells(ROOT / "solutions" / "12_speed_of_light.py"):
        cell = (cell.replace('RESULTS_DIR = "../build/lab"', f"RESULTS_DIR = {str(tmp_path)!r}")
                .replace('DATA_DIR = ".."', f"DATA_DIR = {str(ROOT)!r}")
                .replace('SIZE = "gpt2"', f"SIZE = {size!r}")
                .replace("MAX_SEQLEN = 100", "MAX_SEQLEN = 12").replace("RUNS = 20", "RUNS = 6"))  # fmt: skip
        for old, new in swap:
            cell = cell.replace(old, new)
        exec(cell, scope)
    return said, pd.read_csv(tmp_path / "data" / "12_speed_of_light_solution.csv"), scope


def test_solution_12_records_exercise_3s_tokens_and_reads_its_sentence_back(tmp_path, monkeypatch):
    said, rows, scope = run_solution_12(tmp_path, monkeypatch)
    tokens = rows[(rows["exercise"] == 3) & (rows["measure"] == "tokens")]
    assert sorted(tokens["variant"]) == ["bfloat16", "float32"] and set(tokens["row"]) == {0}
    fp32 = tokens.set_index("variant").loc["float32", "tokens"]
    assert fp32 == " ".join(map(str, scope["fp32"][0].tolist())) and len(fp32.split()) == 13  # BOS + 12 steps
    assert said[-1] == tokgen.display.tokens_differ_text(scope["fp32"], scope["bf16"])
    assert {"gpu", "commit", "params"} <= set(rows.columns)  # where it ran, as every table records it
    source = (ROOT / "solutions" / "12_speed_of_light.py").read_text()
    assert "Live, in no CSV" not in source
    for exercise, measure in ((2, "timing"), (2, "kernels"), (3, "tokens")):
        assert f'{{"exercise": {exercise}, "measure": "{measure}"' in source, (exercise, measure)
        assert f'recorded({exercise}, "{measure}")' in source, (exercise, measure)


@pytest.mark.gpu
def test_solution_12_records_exercise_2s_rounds_and_kernels_and_reads_them_back(tmp_path, monkeypatch):
    """GPU path of solution 12's exercise 2, inductor's choice swapped for `backend="eager"` (seconds, not an
    autotuning): its rows hold each product's replay times round by round, and the sentence read back from them
    is the one its times in memory give."""
    tuned = 'torch.compile(torch.nn.functional.linear, mode="max-autotune-no-cudagraphs")'
    said, rows, scope = run_solution_12(
        tmp_path, monkeypatch, swap=[(tuned, 'torch.compile(torch.nn.functional.linear, backend="eager")')]
    )
    timed = rows[(rows["exercise"] == 2) & (rows["measure"] == "timing")].set_index("variant")
    assert list(timed.index) == ["cuBLAS (F.linear)", "inductor max-autotune"] and (timed["runs"] == 6).all()
    for name, ms in scope["replays"].items():
        assert [float(x) for x in str(timed.loc[name, "times_ms"]).split(";")] == ms  # exact, round by round
    repeats = tokgen.bandwidth.PRODUCT_REPEATS
    per_product = [[1e3 * ms / repeats for ms in scope["replays"][n]] for n in timed.index]
    assert any(line.startswith("Inductor's choice against cuBLAS's product: ") for line in said)
    expected = tokgen.voice.speedup_text(tokgen.stats.compare_rounds(*per_product))
    assert f"Inductor's choice against cuBLAS's product: {expected} (each round's order" in "\n".join(said)
    kernels = rows[(rows["exercise"] == 2) & (rows["measure"] == "kernels")]
    assert set(kernels["graph"]) == set(timed.index) and (kernels["launches"] >= 0).all()


# rv21B N9: notebook 10's idle table records the busy time and kernels of a replay of K steps under per-replay names


def test_replay_summary_names_the_per_replay_columns_and_readers_take_the_old_names():
    summary = {"steps": 20, "gpu_busy_per_step_us": 1856.6, "kernels_per_step": 580.0, "gpu_idle_fraction": 0.1}
    assert tokgen.profiling.replay_summary(summary) == {
        "steps": 20,
        "gpu_busy_per_replay_us": 1856.6,
        "kernels_per_replay": 580.0,
        "gpu_idle_fraction": 0.1,
    }
    old = pd.DataFrame([summary | {"variant": "g K=4", "gpu_busy_per_token": 464.2}])  # as committed before the re-run
    read = tokgen.profiling.replay_columns(old)
    assert read.loc[0, "gpu_busy_per_replay_us"] == 1856.6 and read.loc[0, "kernels_per_replay"] == 580.0
    assert "gpu_busy_per_step_us" not in read and read.loc[0, "gpu_busy_per_token"] == 464.2
    new = pd.DataFrame([tokgen.profiling.replay_summary(summary)])
    assert tokgen.profiling.replay_columns(new).equals(new)
    source = (ROOT / "notebooks" / "10_cuda_graphs.py").read_text()
    assert "**summary," in source and "summary = tokgen.profiling.replay_summary(timeline.summary(skip=1))" in source
    assert "idle = tokgen.profiling.replay_columns(idle_rec.read())" in source
    # notebook 06's profile keeps Timeline.summary's names
    assert "replay_summary" not in (ROOT / "notebooks" / "06_eos_sync_profile.py").read_text()


@pytest.mark.gpu
def test_a_graph_decoders_profile_is_recorded_per_replay_of_k_steps():
    """Notebook 10 section 4's path: a K = 4 TritonStep graph decoder profiled by `profile_decode` (steps 4 to 39: 9
    replays), its summary as recorded: the operations of one replay are K = 4 decode steps' (`kernel_table`'s per
    decode step, × 4)."""
    model = tokgen.build_model("gpt2", "cuda")
    capacity = tokgen.graph_capacity(48, 4)
    step = tokgen.TritonStep(model, 8, capacity)
    decoder = tokgen.GraphDecoder(step, batch_size=8, capacity=capacity, eos=-1, steps_per_graph=4, device=model.device)
    first = tokgen.generators.first_tokens(model, 8)
    with torch.inference_mode():
        run = lambda on_step: decoder.generate(first, 48, on_step)  # noqa: E731
        run(tokgen.generators.no_hook)  # captured here
        timeline, tokens = tokgen.profiling.profile_decode(run, start=4, stop=40, steps_per_call=4)
    assert tokens == 36
    summary = tokgen.profiling.replay_summary(timeline.summary(skip=1))
    assert "kernels_per_step" not in summary and "gpu_busy_per_step_us" not in summary
    per_step = tokgen.profiling.kernel_table(timeline, tokens)["kernels_per_token"].sum()
    assert summary["kernels_per_replay"] == pytest.approx(4 * per_step, rel=0.1), (summary, per_step)
    assert summary["gpu_busy_per_replay_us"] > 0


# rr21d N6: what each decoder of notebook 10 keeps, measured as its first call builds it, and the largest named


def test_first_calls_measures_what_each_first_call_left_allocated(monkeypatch):
    held = {"allocated": 2.0, "reserved": 3.0}  # a fake allocator, GB: each variant's run keeps what it says
    monkeypatch.setattr(tokgen.bench, "held_gb", lambda device: (held["allocated"], held["reserved"]))

    def keeps(allocated, reserved):
        def run():
            held["allocated"] += allocated
            held["reserved"] += reserved
            return torch.zeros(1, 3, dtype=torch.long)

        return run

    variants = [tokgen.Variant("big", keeps(1.5, 1.75)), tokgen.Variant("none", keeps(0.0, 0.0))]
    variants.append(tokgen.Variant("small", keeps(0.25, 0.5)))
    _, rows, _ = tokgen.bench.first_calls(variants, "cpu")
    assert {n: (r["resident_gb"], r["resident_reserved_gb"]) for n, r in rows.items()} == {
        "big": (1.5, 1.75),
        "none": (0.0, 0.0),
        "small": (0.25, 0.5),
    }
    monkeypatch.undo()
    _, on_cpu, _ = tokgen.bench.first_calls(variants[:1], "cpu")  # tokgen.memory.held_gb: nothing measured off CUDA
    assert on_cpu["big"]["resident_gb"] is None and on_cpu["big"]["resident_reserved_gb"] is None


def test_resident_text_names_the_largest_decoders_by_measurement():
    from tokgen.memory import resident_text

    rows = pd.DataFrame(
        {
            "variant": ["k1", "k4", "k16", "node"],
            "peak_allocated_gb": [3.0, 3.1, 3.2, 3.05],
            "resident_gb": [0.5, 0.75, 1.25, 0.25],
            "resident_reserved_gb": [0.5, 1.0, 1.5, 0.5],
        }
    )
    said = resident_text(rows, "this section's rounds")
    assert said.startswith(resident_text(rows.drop(columns=["resident_gb", "resident_reserved_gb"]), "this section's"
                                         " rounds"))  # fmt: skip
    assert said.endswith(
        " Measured variant by variant as its first call built it (torch.cuda.memory_allocated after a synchronize, "
        "before against after; reserved: the same after releasing cached blocks, graph pools included), what each "
        "kept, the largest first: `k16` 1.25 GB (1.50 GB reserved), `k4` 0.75 GB (1.00 GB reserved), `k1` 0.50 GB "
        "(0.50 GB reserved); the 4 variants together 2.75 GB (3.50 GB reserved)."
    )
    assert "`k1` 0.50 GB" in resident_text(rows, "x", largest=4) and "`node`" in resident_text(rows, "x", largest=4)
    no_reserved = resident_text(rows.drop(columns=["resident_reserved_gb"]), "x", largest=1)
    assert no_reserved.endswith("the largest first: `k16` 1.25 GB; the 4 variants together 2.75 GB.")
    # a table recorded before the column (the 10_device_stop.csv of 019154c; the one of 7472d79 has it): the line as
    # it was, nothing named
    committed = tokgen.load("10_device_stop", ROOT).drop(columns=["resident_gb", "resident_reserved_gb"],
                                                         errors="ignore")  # fmt: skip
    assert "Measured variant by variant" not in resident_text(committed, "x")


def test_notebook_10_records_what_each_decoder_keeps_in_sections_3_and_6():
    source = (ROOT / "notebooks" / "10_cuda_graphs.py").read_text()
    assert '"resident_gb": "kept after it, GB allocated"' in source  # section 3's first table, from the CSV
    section_6 = source.split("# ## 6. Stopping on the GPU", 1)[1]
    assert "tokgen.bench.first_calls(chosen, DEVICE, ref, catch=())" in section_6  # a failure still stops it
    assert "record=lambda row: stop_rec.write(row | stop_memory(row))" in section_6
    assert section_6.index("first_calls(chosen") < section_6.index("tokgen.compare(stop_variants")


@pytest.mark.gpu
def test_first_calls_on_cuda_measures_what_a_variant_keeps():
    """GPU path of `first_calls`' memory (notebook 10, sections 2 and 6): a variant that keeps a 256 MiB tensor
    is measured at 2**28 bytes allocated (and at least that reserved), one that keeps nothing at none, and a K = 4
    fused graph decoder of GPT-2 small (its KV cache, weight copies and graph pool) at more than nothing."""
    kept = []

    def keeps():
        kept.append(torch.empty(2**28, dtype=torch.uint8, device="cuda"))
        return torch.zeros(1, 3, dtype=torch.long, device="cuda")

    model = tokgen.build_model("gpt2", "cuda")  # at tests/test_gpu.py's sizes, where every generator is checked
    reference = tokgen.generate("naive", model, batch_size=8, max_seqlen=48)
    graph = tokgen.generator_variant("graph_triton_fused", model, batch_size=8, max_seqlen=48, steps_per_graph=4)
    variants = [tokgen.Variant("keeps", keeps), tokgen.Variant("none", lambda: torch.zeros(1, 3, device="cuda")), graph]
    _, rows, _ = tokgen.bench.first_calls(variants, "cuda")
    assert rows["keeps"]["resident_gb"] == pytest.approx(2**28 / 1e9, abs=1e-3)
    assert rows["keeps"]["resident_reserved_gb"] >= 2**28 / 1e9 - 1e-3
    assert abs(rows["none"]["resident_gb"]) < 1e-3
    assert rows[graph.name]["resident_gb"] > 0
    assert torch.equal(graph.run(), reference)
