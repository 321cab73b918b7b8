"""Review rr22b S4, N1, N2: notebook 10's first calls. A variant dropped by `first_calls` leaves a failed row in
data/10_cuda_graphs.csv, as `compare` records its own failures; an error after which the CUDA context is unusable is
raised; sections 4 and 6 go on without what section 2 dropped; a negative reading of what a first call kept is
named as 0 GB, and the total is the readings' signed sum with what was released beside it (rr22c N3)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from test_notebook_sources import code_cells

import tokgen
import tokgen.display
import tokgen.profiling
from tokgen.claims import usable
from tokgen.memory import resident_text
from tokgen.results import why_not_usable
from tokgen_tools import readme

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "10_cuda_graphs.py"
TOKENS = torch.arange(6).reshape(1, 6)


def raises(err):
    def run():
        raise err

    return run


def fine(name, generator):
    return tokgen.Variant(name, lambda: TOKENS.clone(), {"generator": generator, "steps_per_graph": 4})


@pytest.mark.parametrize(
    "message",
    ["CUDA error: an illegal memory access was encountered", "CUDA error: device-side assert triggered",
     "CUDA error: unspecified launch failure"],
)  # fmt: skip
def test_first_calls_raises_an_error_after_which_the_cuda_context_is_unusable(message):
    said = []
    variants = [fine("a", "g"), tokgen.Variant("sticky", raises(RuntimeError(message))), fine("b", "g")]
    with pytest.raises(RuntimeError, match=message):
        tokgen.bench.first_calls(variants, "cpu", TOKENS, report=said.append)
    assert said == []  # not dropped with a line: the notebook stops there
    assert tokgen.bench.cuda_sticky(RuntimeError(message.upper())) and not tokgen.bench.cuda_sticky(
        RuntimeError("CUDA error: operation not supported"))  # fmt: skip


def section_3(tmp_path, variants, kept, built, failed):
    """Notebook 10's section 3 first cell, run on the CPU with `variants` (naive first) and section 2's results."""
    cell = next(c for c in code_cells(NOTEBOOK) if 'tokgen.Recorder("10_cuda_graphs"' in c)
    said = []
    scope = {"tokgen": tokgen, "pd": pd, "say": said.append, "table": lambda df, *a, **k: df, "PARAMS": {},
             "RESULTS_DIR": tmp_path, "DEVICE": "cpu", "RUNS": 2, "variants": variants, "built": built,
             "kept": kept, "failed": failed}  # fmt: skip
    exec(cell, scope)
    return scope, said


def test_notebook_10_records_a_variant_its_first_call_dropped_as_failed(tmp_path):
    """S4: the dropped variants' rows are in data/10_cuda_graphs.csv with status "oom"/"error" and their error, beside
    the timed ones; notebook 10's `bad` table shows them; readers that keep status "ok" (README, notebook 14's
    rows_at, claims' `usable`) leave them out, and `why_not_usable` (claims' "not measured" reasons) says failed."""
    naive = fine("naive", "naive")
    oom = tokgen.Variant("oom K=4", raises(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")),
                         {"generator": "graph_triton_fused", "steps_per_graph": 4})  # fmt: skip
    node = tokgen.Variant("graph_stop_on_device", raises(RuntimeError("CUDA error: operation not supported")),
                          {"generator": "graph_stop_on_device"})  # fmt: skip
    kept, built, failed = tokgen.bench.first_calls([fine("a K=4", "graph_triton_fused"), oom, node], "cpu", TOKENS,
                                                   report=lambda line: None)  # fmt: skip
    scope, said = section_3(tmp_path, [naive, *kept], kept, built, failed)
    rows = tokgen.load("10_cuda_graphs", tmp_path).set_index("variant")
    assert list(rows.index) == ["naive", "a K=4", "oom K=4", "graph_stop_on_device"]
    assert list(rows["status"]) == ["ok", "ok", "oom", "error"]
    assert rows.at["oom K=4", "error"] == "OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"
    assert rows.at["graph_stop_on_device", "error"] == "RuntimeError: CUDA error: operation not supported"
    assert rows.at["graph_stop_on_device", "generator"] == "graph_stop_on_device" and rows.at["oom K=4", "runs"] == 0
    assert list(scope["bad"]["variant"]) == ["oom K=4", "graph_stop_on_device"]  # shown under the cell
    assert list(scope["ok"]["variant"]) == ["naive", "a K=4"]
    assert pd.api.types.is_integer_dtype(scope["ok"]["steps"])  # the timed rows as compare returned them
    assert said[0].equals(scope["bad"][["variant", "status", "error"]])
    assert list(scope["checks"]["variant"]) == ["a K=4"]  # the first calls' table: the failed ones are in `bad`
    on_file = tokgen.load("10_cuda_graphs", tmp_path)
    assert list(readme._ok("10_cuda_graphs", tmp_path)["variant"]) == ["naive", "a K=4"]
    assert list(usable(on_file)["variant"]) == ["naive", "a K=4"]
    assert why_not_usable(on_file, "oom K=4") == "oom: OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"
    assert why_not_usable(on_file, "never run") == "not run"
    # nothing dropped: the section's rows as before
    kept, built, failed = tokgen.bench.first_calls([fine("a K=4", "graph_triton_fused")], "cpu", TOKENS)
    scope, said = section_3(tmp_path / "none", [naive, *kept], kept, built, failed)
    assert failed == [] and list(tokgen.load("10_cuda_graphs", tmp_path / "none")["status"]) == ["ok", "ok"]


def test_notebook_10_profiles_only_the_variants_still_measured(monkeypatch, tmp_path):
    """S4 (NIT): section 4 profiles `compiled pipelined_static` only where it has timed rounds: dropped in section 2,
    it is not looked up (KeyError before the fix)."""
    cell = next(c for c in code_cells(NOTEBOOK) if "profile_decode(" in c)
    profiled = []

    def profile_decode(run, start, stop, steps_per_call):
        profiled.append(run.__name__)
        return SimpleNamespace(kernels=pd.DataFrame({"start": [0.0], "end": [10.0]}), summary=lambda skip: {}), 5

    monkeypatch.setattr(tokgen.profiling, "profile_decode", profile_decode)
    monkeypatch.setattr(tokgen.profiling, "kernel_table", lambda timeline, tokens: pd.DataFrame(
        {"own_us_per_token": [1.0], "kernels_per_token": [2.0]}))  # fmt: skip
    monkeypatch.setattr(tokgen.profiling, "replay_summary", lambda summary: {"gpu_idle_fraction": 0.5})
    monkeypatch.setattr(tokgen.display, "profiled_ks", lambda *a, **k: dict.fromkeys(("a", "b", "c")))

    def named(name):
        def run():
            return TOKENS

        run.__name__ = name
        return tokgen.Variant(name, run, {"generator": "graph_triton_fused", "steps_per_graph": 4})

    ok = pd.DataFrame({"variant": ["host K=4", "compiled pipelined_static"], "generator": ["graph_triton_fused"] * 2})
    for ran, expected in [(ok, ["host K=4", "compiled pipelined_static"]), (ok.iloc[:1], ["host K=4"])]:
        profiled.clear()
        variants = [named(n) for n in ran["variant"]]
        scope = {"tokgen": tokgen, "say": lambda line: None, "ours": ran, "ranked": ran, "ok": ran, "compiled": None,
                 "variants": variants, "WINDOW": [1, 3], "RESULTS_DIR": tmp_path / str(len(ran)),
                 "PARAMS": {}}  # fmt: skip
        exec(cell, scope)
        assert profiled == expected


def section_6(monkeypatch, tmp_path, failed, while_cell=False):
    """Notebook 10's section 6 (its stops' cell and the WHILE node's), on the CPU with CUDA taken as True, every
    decoder a fake that returns the reference; returns the variants built and what it said."""
    cells = code_cells(NOTEBOOK)
    at = next(i for i, c in enumerate(cells) if 'tokgen.Recorder("10_device_stop"' in c)
    built, said = [], []
    monkeypatch.setattr(tokgen, "generate", lambda *a, **k: TOKENS)

    def variant(generator, m=None, **options):
        built.append(generator)
        k = options.get("steps_per_graph")
        info = {"generator": generator, "steps_per_graph": k, "eos_token_id": options.get("eos_token_id")}
        return tokgen.Variant(tokgen.label(generator, k=k), lambda: TOKENS.clone(), info)

    scope = {"tokgen": tokgen, "pd": pd, "say": said.append, "table": lambda df, *a, **k: "", "variant": variant,
             "CUDA": True, "failed": failed, "stops": {5: 7}, "k_step": "graph_triton_fused", "STEPS_PER_GRAPH": [1, 4],
             "model": None, "BATCH_SIZE": 1, "MAX_SEQLEN": 6, "DEVICE": "cpu", "RUNS": 2,
             "RESULTS_DIR": tmp_path, "PARAMS": {}}  # fmt: skip
    exec(cells[at], scope)
    if while_cell:
        exec(cells[at + 1], scope)  # the WHILE node's cell: nothing to set against, nothing counted
        assert scope["while_node"].empty
    return built, said


def test_notebook_10_section_6_leaves_out_the_while_node_section_2_dropped(monkeypatch, tmp_path):
    """S4 (NIT): where section 2 dropped `graph_stop_on_device`, section 6 does not build it again (before the fix,
    built with catch=(), its failure ended the notebook), and says so in one line."""
    built, said = section_6(monkeypatch, tmp_path / "dropped", [{"generator": "graph_stop_on_device"}], while_cell=True)
    assert built == ["graph_triton_fused", "graph_triton_fused"]
    assert said[0] == "*`graph_stop_on_device` is left out of this section: its first call failed in section 2.*"
    built, said = section_6(monkeypatch, tmp_path / "kept", [{"generator": "graph_triton_kernels"}])
    assert built == ["graph_triton_fused", "graph_triton_fused", "graph_stop_on_device"]
    assert not any("left out" in line for line in said)


def test_notebook_10_section_6_skips_the_k_step_decoders_section_2_dropped(monkeypatch, tmp_path):
    """rr22c S2: where section 2 dropped the K-step decoders' generator (`k_step`), section 6 builds nothing (before
    the fix, built with catch=(), its failure ended the notebook), says so in one line, and reads no rows."""
    built, said = section_6(monkeypatch, tmp_path / "k", [{"generator": "graph_triton_fused"}], while_cell=True)
    assert built == []
    assert said == ["*`graph_triton_fused` is left out of this section: its first call failed in section 2, so this "
                    "section (the WHILE node included) does not run.*"]  # fmt: skip  (rr22d N3)
    assert not (tmp_path / "k" / "10_device_stop.csv").exists()
    built, said = section_6(monkeypatch, tmp_path / "both", [{"generator": g} for g in ("graph_triton_fused",
                                                                                       "graph_stop_on_device")])
    assert built == [] and [line.split("`")[1] for line in said] == ["graph_triton_fused", "graph_stop_on_device"]


def test_largest_kept_names_a_negative_reading_as_nothing_kept_and_totals_the_signed_readings():
    """rr22b N2, rr22c N3: a first call that let go of more than it kept (an earlier variant's cache replaced) reads
    negative; named as 0.00 GB (never "-0.01 GB" or "-0.00 GB"). The readings telescope (each "before" is the previous
    "after"), so the total is their signed sum, what the decoders hold together, with what was released beside it."""
    rows = pd.DataFrame({"variant": ["k1", "freed", "tiny"], "peak_allocated_gb": [3.0, 3.0, 3.0],
                         "resident_gb": [0.5, -0.01, -0.0001], "resident_reserved_gb": [1.0, -0.5, 0.0]})  # fmt: skip
    said = resident_text(rows, "x")
    assert said.endswith(
        "the largest first: `k1` 0.50 GB (1.00 GB reserved), `freed` 0.00 GB (0.00 GB reserved), `tiny` 0.00 GB "
        "(0.00 GB reserved); the 3 variants together 0.49 GB (0.50 GB reserved), after 0.01 GB (0.50 GB reserved) "
        "that first calls released."
    )
    assert "-0." not in said
    kept = rows.assign(resident_gb=[0.5, 0.25, 0.0], resident_reserved_gb=[1.0, 0.5, float("nan")])
    assert resident_text(kept, "x").endswith("; the 3 variants together 0.75 GB.")  # nothing released, one NaN reserved
    net_zero = rows.assign(resident_gb=[0.5, -0.5, -0.0001], resident_reserved_gb=[0.5, -0.5, 0.0])
    assert resident_text(net_zero, "x").endswith(
        "; the 3 variants together 0.00 GB (0.00 GB reserved), after 0.50 GB (0.50 GB reserved) that first calls "
        "released."
    )  # a signed sum just below zero reads 0.00, never -0.00
    net_release = rows.assign(resident_gb=[0.1, -0.5, 0.0], resident_reserved_gb=[0.1, -0.6, 0.0])
    assert resident_text(net_release, "x").endswith(
        "; the 3 variants together 0.40 GB (0.50 GB reserved) less than before the first of them was built, after "
        "0.50 GB (0.60 GB reserved) that first calls released."
    )  # a net release is never a negative size (review rr22d N2)


def test_notebook_10_says_its_first_calls_allocate_afresh():
    """N1: `held_gb` releases the cached blocks just before each timed first call: section 2's markdown says the
    first call allocates its memory afresh, inside its time (teaching text, no number)."""
    source = NOTEBOOK.read_text().split("# ## 2. Correct before fast", 1)[1].split("# ## 3. Measure", 1)[0]
    assert "allocates its memory afresh, inside its time" in " ".join(line.lstrip("# ") for line in source.splitlines())
    assert "allocating its memory afresh" in tokgen.bench.first_calls.__doc__


def test_first_calls_drops_a_variant_whose_triton_kernel_raises_a_triton_error():
    """rr22c N1: our own Triton kernels raise `triton.errors.TritonError` subclasses (`OutOfResources`,
    `CompilationError`), not RuntimeError; `FIRST_CALL_ERRORS` holds TritonError where Triton is installed, so such a
    variant is dropped with its failed row, not the notebook stopped. In a fresh process (this machine has no
    Triton), a stand-in `triton.errors` is put in sys.modules after tokgen is imported and `tokgen.bench` is
    reloaded; without Triton the guarded import leaves the tuple as before. Where Triton is installed (the GPU
    machine) the stand-in is not needed: the companion test checks the real TritonError (review rr22d M1)."""
    if importlib.util.find_spec("triton") is not None:
        pytest.skip("Triton is installed: test_first_call_errors_hold_the_installed_triton_error checks it")
    script = (
        "import importlib, sys, types, torch, tokgen, tokgen.bench\n"
        "assert tokgen.bench._triton_errors() == ()\n"
        "errors = types.ModuleType('triton.errors')\n"
        "class TritonError(Exception):\n    pass\n"
        "class OutOfResources(TritonError):\n    pass\n"
        "errors.TritonError = TritonError\n"
        "sys.modules['triton'], sys.modules['triton.errors'] = types.ModuleType('triton'), errors\n"
        "bench = importlib.reload(tokgen.bench)\n"
        "def bad():\n    raise OutOfResources('out of resource: shared memory, Required: 1, Hardware limit: 0')\n"
        "ok = tokgen.Variant('ok', lambda: torch.zeros(1))\n"
        "kept, rows, failed = bench.first_calls([tokgen.Variant('bad', bad), ok], 'cpu', report=print)\n"
        "assert [v.name for v in kept] == ['ok'], kept\n"
        "assert [(f['variant'], f['status']) for f in failed] == [('bad', 'error')], failed\n"
        "print('OK', TritonError in bench.FIRST_CALL_ERRORS)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-2:] == [
        "`bad` is left out of the comparisons: its first call raised OutOfResources: out of resource: shared memory, "
        "Required: 1, Hardware limit: 0",
        "OK True",
    ]


def test_first_call_errors_hold_the_installed_triton_error():
    """rr22c N1 with the real Triton (GPU machines; skipped without it): its `OutOfResources` is caught by
    `first_calls`, and an error whose message says the CUDA context is unusable is still raised."""
    errors = pytest.importorskip("triton.runtime.errors")
    said = []
    oor = tokgen.Variant("oor", raises(errors.OutOfResources(1, 0, "shared memory")))
    kept, _, failed = tokgen.bench.first_calls([oor, fine("a", "g")], "cpu", TOKENS, report=said.append)
    assert [v.name for v in kept] == ["a"] and [f["variant"] for f in failed] == ["oor"]
    assert said[0].startswith("`oor` is left out of the comparisons: its first call raised OutOfResources")
    sticky = tokgen.Variant("sticky", raises(errors.OutOfResources(1, 0, "CUDA error: an illegal memory access")))
    with pytest.raises(errors.OutOfResources):
        tokgen.bench.first_calls([sticky], "cpu", TOKENS, report=said.append)


def test_largest_kept_counts_the_variants_tied_with_the_last_one_named():
    """rv23C N1: seven variants kept the same 0.64 GB and the third named was one of them, picked by stable order;
    the ones left out at the same amount (as shown, 2 decimals) are counted after it; none tied: nothing added."""
    rows = pd.DataFrame({"variant": ["a", "b", "c", "d", "e", "f"], "peak_allocated_gb": [3.0] * 6,
                         "resident_gb": [1.0, 0.9, 0.638614, 0.638614, 0.6386, 0.5]})  # fmt: skip
    said = resident_text(rows, "x")
    assert "the largest first: `a` 1.00 GB, `b` 0.90 GB, `c` 0.64 GB, and 2 more at 0.64 GB; the 6 variants" in said
    assert ", and 1 more at 0.90 GB;" in resident_text(rows.assign(resident_gb=[1.0, 0.9, 0.9, 0.5, 0.5, 0.5]), "x",
                                                       largest=2)  # fmt: skip
    assert "more at" not in resident_text(rows.assign(resident_gb=[1.0, 0.9, 0.8, 0.7, 0.6, 0.5]), "x")
    assert "more at" not in resident_text(rows.assign(resident_gb=[1.0, 0.9, 0.8, 0.8, 0.8, 0.8]), "x", largest=6)


def test_largest_kept_says_a_release_of_reserved_memory_alone():
    """rr22d N1: a first call that released only reserved memory (allocated net zero) is said beside the total."""
    rows = pd.DataFrame({"variant": ["k1", "k2"], "peak_allocated_gb": [3.0, 3.0], "resident_gb": [0.5, 0.0],
                         "resident_reserved_gb": [1.0, -0.5]})  # fmt: skip
    assert resident_text(rows, "x").endswith(
        "; the 2 variants together 0.50 GB (0.50 GB reserved), after 0.00 GB (0.50 GB reserved) that first calls "
        "released."
    )
