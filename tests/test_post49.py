"""Session 22 (post49): fixes that change what notebooks 07, 10 and 12 measure or record."""

from pathlib import Path

import numpy as np
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
