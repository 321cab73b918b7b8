"""Review rv20B S5 and N4 on notebook 10: its memory (decoders let go before section 6, what stayed allocated
printed from the rows' peaks) and the summary's filled-slot attention with a measured pointer."""

from pathlib import Path

import pandas as pd

import tokgen
from tokgen.memory import resident_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "10_cuda_graphs.py"


def code_cells(path: Path) -> list[str]:
    """The code cells of a jupytext percent notebook (markdown cells left out)."""
    cells = path.read_text().split("\n# %%")[1:]
    return [c.split("\n", 1)[1] if "\n" in c else "" for c in cells if not c.lstrip(" ").startswith("[markdown]")]


def test_resident_text_bounds_what_stays_allocated_by_the_lowest_peak():
    rows = pd.DataFrame({"peak_allocated_gb": [21.3, 21.09, 22.5], "device_memory_gb": [150.0] * 3})
    assert resident_text(rows, "section 6's rounds") == (
        "Memory through section 6's rounds: what stayed allocated between runs (the model, and the decoders kept: "
        "their KV caches and graph pools, and the weight copies our handwritten, Triton and fused steps make) is at "
        "most 21.09 GB, the lowest peak allocated of the 3 variants' last runs; the highest peak is 22.50 GB, of the "
        "card's 150.0 GB."
    )  # rv21B S4: what a decoder holds; N2: one row per variant, its last run's peak; rr21d S1: only some steps
    # copy weights, for section 3 keeps `graph_transformers` decoders, which replay the model's own parameters
    section_3 = NOTEBOOK.read_text().split("at_one = [", 1)[1].split("]", 1)[0]
    assert '("graph_transformers", model)' in section_3
    assert "each with its own weight copies" not in resident_text(rows, "x")
    read_back = pd.DataFrame({"peak_allocated_gb": ["", "3.5"], "device_memory_gb": ["", ""]})  # a failed run's row
    one = "at most 3.50 GB, the lowest peak allocated of the 1 variant's last run; the highest peak is 3.50 GB."
    assert one in resident_text(read_back, "x")
    on_cpu = pd.DataFrame({"peak_allocated_gb": [None, None]})
    assert resident_text(on_cpu, "section 3's rounds") == (
        "*Memory through section 3's rounds: no GPU peaks recorded (on the CPU).*"
    )
    assert "no GPU peaks" in resident_text(pd.DataFrame({"variant": ["a"]}), "x")


def test_notebook_10_lets_its_decoders_go_after_section_5_and_prints_what_stayed():
    """The cell that forgets the decoders runs after section 5's last profile and before section 6 builds its own;
    run on the CPU, it empties the registry's decoders of both models and drops section 1's hand-built one. Both
    timed sections print `resident_text` from their recorded rows, and the sync audit builds before it counts."""
    cells = code_cells(NOTEBOOK)
    at = next(i for i, c in enumerate(cells) if "forget_decoders" in c)
    last_profile = max(i for i, c in enumerate(cells) if "profiled[" in c or "profile_decode(" in c)
    first_stop = next(i for i, c in enumerate(cells) if "stop_token(" in c)
    assert last_profile < at < first_stop
    model, compiled = tokgen.build_model("tiny", "cpu"), tokgen.build_model("tiny", "cpu")  # two models' decoders
    for m in (model, compiled):
        tokgen.generate("graph_triton_fused", m, batch_size=2, max_seqlen=4)
        assert len(tokgen.graphs.DECODERS[m]) == 1
    namespace = {"tokgen": tokgen, "model": model, "compiled": compiled, "decoder": object(), "step": object()}
    exec(cells[at], namespace)
    assert model not in tokgen.graphs.DECODERS and compiled not in tokgen.graphs.DECODERS
    assert "decoder" not in namespace and "step" not in namespace
    source = NOTEBOOK.read_text()
    assert 'tokgen.memory.resident_text(recorded, "section 3\'s rounds")' in source
    assert 'tokgen.memory.resident_text(stop_rec.read(), "this section\'s rounds")' in source
    audit = next(c for c in cells if "count_syncs(" in c)
    assert audit.index("v.run()") < audit.index("count_syncs(v.run)")


def test_notebook_10_takeaways_give_filled_slot_attention_against_every_slot_round_by_round():
    """N4: the summary says attention over the filled slots cuts the attention's reads; the takeaways cell before it
    prints `graph_filled_attention K=4` against `graph_handwritten_compiled K=4`, paired, from the rounds (the
    reference run at 019154c: ×1.22, review rv21B's recomputation; ×1.23 in the run before it, rv20B's)."""
    from tokgen.voice import speedup_text

    ok = tokgen.load("10_cuda_graphs", ROOT).query("status == 'ok'")
    cell = next(c for c in code_cells(NOTEBOOK) if "while_node_text" in c)
    said = []
    namespace = {"tokgen": tokgen, "say": said.append, "ok": ok, "CUDA": False, "while_node": pd.DataFrame(),
                 "speedup_text": speedup_text, "unfused": None, "fused": None}  # fmt: skip
    exec(cell, namespace)
    g = tokgen.gain(ok, "graph_handwritten_compiled K=4", "graph_filled_attention K=4")
    assert said == [
        "`graph_filled_attention K=4` against `graph_handwritten_compiled K=4` (attention over the filled slots "
        f"against over every slot): {speedup_text(g)}."
    ]


def test_solution_10_records_its_measurements_and_reads_them_back_as_it_computed_them(tmp_path):
    """S7: solution 10 records exercises 1, 2 and 4's timings and exercises 3 and 4's kernel tables in one table,
    data/10_cuda_graphs_solution.csv, and reads them back. The round trip it relies on, on the CPU: compare's rows
    written with their exercise and measure beside rows with other columns (a kernel table's), read back by
    `rows_where`, give the same paired speed-up as the rows in memory, and the lengths as integers."""
    source = (ROOT / "solutions" / "10_cuda_graphs.py").read_text()
    assert 'rec = tokgen.Recorder("10_cuda_graphs_solution", RESULTS_DIR, params=PARAMS)' in source
    for exercise, measure in ((1, "timing"), (2, "timing"), (3, "kernels"), (4, "timing"), (4, "kernels"),
                              (4, "idle")):  # fmt: skip
        assert f'{{"exercise": {exercise}, "measure": "{measure}"' in source, (exercise, measure)
    for exercise, measure in ((1, "timing"), (2, "timing"), (3, "kernels"), (4, "timing"), (4, "kernels"),
                              (4, "idle")):  # fmt: skip
        assert f'recorded({exercise}, "{measure}")' in source, (exercise, measure)
    assert "Live, in no CSV" not in source

    model = tokgen.build_model("tiny", "cpu")
    rec = tokgen.Recorder("99_toy_solution", tmp_path)
    variants = [tokgen.generator_variant(g, model, batch_size=2, max_seqlen=n, by=("max_seqlen",))
                for n in (4, 8) for g in ("naive", "kv_static")]  # fmt: skip
    kept = tokgen.compare(variants, rounds=6, device="cpu", gpu_busy=False,
                          record=lambda r: rec.write({"exercise": 2, "measure": "timing", **r}))  # fmt: skip
    rec.write({"exercise": 3, "measure": "kernels", "variant": "a", "kind": "gemm", "own_us_per_token": 1.5})
    timed = tokgen.results.rows_where(rec.read(), exercise=2, measure="timing").copy()
    timed["max_seqlen"] = timed["max_seqlen"].astype(int)
    assert timed["max_seqlen"].tolist() == kept["max_seqlen"].tolist()
    base, other = variants[0].name, variants[1].name
    assert tokgen.gain(timed, base, other) == tokgen.gain(kept, base, other)
    kinds = tokgen.results.rows_where(rec.read(), exercise=3, measure="kernels").set_index("kind")
    assert kinds.loc["gemm", "own_us_per_token"] == 1.5
