"""Session 22 (post49): fixes that change what notebooks 07, 10 and 12 measure or record."""

from pathlib import Path

import numpy as np
import pytest
import torch
from test_bench import FakeClock

import tokgen
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
    kept, rows = tokgen.bench.first_calls(variants, "cpu", tokens, report=said.append)
    assert [v.name for v in kept] == ["a", "b"] and list(rows) == ["a", "b"]
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
    assert "kept, built = tokgen.bench.first_calls(variants[1:], DEVICE, reference, report=say)" in source
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
    kept, rows = tokgen.bench.first_calls([huge, kv], "cuda", reference, report=said.append)
    assert [v.name for v in kept] == ["kv_static"] and rows["kv_static"]["same_tokens"] is True
    assert len(said) == 1 and said[0].startswith(
        "`huge` is left out of the comparisons: its first call raised OutOfMemoryError: CUDA out of memory."
    )
