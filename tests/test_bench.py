"""The timing harness: interleaving, failures recorded, gains judged by their spread."""

import random

import numpy as np
import pandas as pd
import pytest
import torch

import tokgen
from tokgen.bench import Variant, compare, round_orders
from tokgen.stats import ALPHA, compare_rounds, gains


def fake(name, log, fail_at=None, exc=None, steps=5):
    calls = {"n": 0}

    def run():
        calls["n"] += 1
        log.append(name)
        if fail_at is not None and calls["n"] == fail_at:
            raise exc
        return torch.zeros(2, 1 + steps, dtype=torch.long)

    return Variant(name, run, {"kind": "fake"})


def test_rounds_are_interleaved_in_a_random_order_that_is_recorded():
    log = []
    rows = []
    res = compare([fake(n, log) for n in "abc"], rounds=12, device="cpu", record=rows.append, seed=7)
    orders = round_orders(3, 12, random.Random(7))
    # warm-up a, b, c; then every round runs each variant once, in that round's order
    assert log == list("abc") + ["abc"[i] for order in orders for i in order]
    assert all(sorted(log[3 * r : 3 * r + 3]) == list("abc") for r in range(1, 13))
    assert len({tuple(o) for o in orders}) > 1  # not one fixed order
    assert list(res["runs"]) == [12, 12, 12] and list(res["status"]) == ["ok"] * 3
    assert [r["variant"] for r in rows] == list("abc") and set(res["order_seed"]) == {7}
    assert res.loc[0, "kind"] == "fake" and res.loc[0, "steps"] == 5
    assert len(res.loc[0, "times_ms"].split(";")) == 12
    assert res.loc[1, "positions"] == ";".join(str(o.index(1)) for o in orders)  # where b ran, round by round
    again = []
    compare([fake(n, again) for n in "abc"], rounds=12, device="cpu", seed=7)
    assert again == log  # the seed reproduces the order
    fresh = compare([fake(n, []) for n in "abc"], rounds=2, device="cpu")
    assert fresh["order_seed"].nunique() == 1 and fresh.loc[0, "order_seed"] >= 0  # drawn, and recorded
    with pytest.raises(ValueError, match="seed"):
        compare([fake("a", [])], rounds=1, device="cpu", seed="7")


def test_a_host_rhythm_of_two_rounds_fools_a_rotated_order_but_not_a_random_one():
    """A/A: one variant under two names, run after run on a host whose speed has a rhythm of four
    runs (two rounds of two). Labels by a rotated order (ab, ba, ab, …) line up with the rhythm and
    one name looks faster in nearly every comparison; labels by `round_orders` keep the
    signed-rank rule's false-positive rate at ALPHA."""
    rng = np.random.default_rng(0)

    def called_real(orders):
        t = 10 + 0.5 * np.tile([1, 0, -1, 0], 10)[rng.integers(4) :][:20] + rng.normal(0, 0.1, 20)  # 20 runs
        times = {0: [], 1: []}
        for r, order in enumerate(orders):
            for position, name in enumerate(order):
                times[name].append(t[2 * r + position])
        return compare_rounds(times[0], times[1])["real"]

    rotated = [[0, 1] if r % 2 == 0 else [1, 0] for r in range(10)]
    trials = 400
    assert sum(called_real(rotated) for _ in range(trials)) / trials > 0.5
    orders = random.Random(1)
    rate = sum(called_real(round_orders(2, 10, orders)) for _ in range(trials)) / trials
    assert rate <= ALPHA + 0.035, rate  # 0.035: three standard errors of a 5% rate over 400 trials


def test_out_of_memory_and_errors_are_recorded_and_the_rest_goes_on():
    log = []
    variants = [
        fake("oom", log, fail_at=2, exc=torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80 GiB")),
        fake("broken", log, fail_at=1, exc=RuntimeError("boom")),
        fake("fine", log),
    ]
    rows = []
    res = compare(variants, rounds=4, device="cpu", record=rows.append).set_index("variant")
    assert res.loc["oom", "status"] == "oom" and "out of memory" in res.loc["oom", "error"]
    assert res.loc["broken", "status"] == "error" and "boom" in res.loc["broken", "error"]
    assert res.loc["fine", "status"] == "ok" and res.loc["fine", "runs"] == 4
    assert res.loc["broken", "runs"] == 0 and log.count("broken") == 1
    assert len(rows) == 3


def test_a_changing_step_count_is_an_error():
    lengths = iter([5, 5, 6, 6])
    v = Variant("flaky", lambda: torch.zeros(1, 1 + next(lengths)))
    res = compare([v], rounds=3, device="cpu")
    assert res.loc[0, "status"] == "error" and "steps" in res.loc[0, "error"]


def test_the_warm_up_survivors_are_frozen_for_the_timed_rounds_only():
    import gc

    seen = []

    def run():
        seen.append(gc.get_freeze_count())
        return torch.zeros(1, 3)

    compare([Variant("v", run)], rounds=2, device="cpu")
    assert seen[0] == 0 and all(n > 0 for n in seen[1:])  # warm-up, then the timed rounds
    assert gc.get_freeze_count() == 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="rounds must be a positive integer"):
        compare([], rounds=0, device="cpu")
    with pytest.raises(ValueError, match="unique"):
        compare([fake("a", []), fake("a", [])], rounds=1, device="cpu")


def _row(name, times):
    s = pd.Series(times)
    return {"variant": name, "median_ms": s.median(), "times_ms": ";".join(map(str, times))}


def test_gains_are_paired_by_round_and_judged_by_their_spread():
    base = [100, 130, 90, 120, 110, 100, 140, 95]
    faster = [t * 0.8 for t in base]  # always 20% faster, though the ranges overlap
    noisy = [t * f for t, f in zip(base, [0.9, 1.1, 0.95, 1.08, 0.9, 1.1, 1.05, 0.97])]
    g = gains(pd.DataFrame([_row("base", base), _row("faster", faster), _row("noisy", noisy)]), "base").set_index(
        "variant"
    )
    assert g.loc["faster", "speedup"] == pytest.approx(1.25) and g.loc["faster", "outcome"] == "faster"
    assert g.loc["faster", "real"] and not g.loc["faster", "no_effect"]
    assert not g.loc["noisy", "real"]
    assert "base" not in g.index  # no row of the base against itself
    with pytest.raises(ValueError, match="no variant"):
        gains(pd.DataFrame([_row("base", base)]), "other")


def test_generator_variant_runs_the_registry(tiny):
    v = tokgen.generator_variant("kv_static", tiny, batch_size=2, max_seqlen=4, compiled=True)
    assert v.name == "compiled kv_static"
    assert v.info == {"generator": "kv_static", "batch_size": 2, "max_seqlen": 4, "compiled": True}
    assert v.run().shape == (2, 5)
    with pytest.raises(ValueError, match="unknown generator"):
        tokgen.generator_variant("nope", tiny, batch_size=1, max_seqlen=1)


def test_variant_labels_have_one_owner(tiny):
    v = tokgen.generator_variant(
        "graph_handwritten", tiny, batch_size=2, max_seqlen=4, steps_per_graph=4, by=("max_seqlen", "batch_size")
    )
    assert (
        v.name == "graph_handwritten K=4 N=4 B=2" == tokgen.label("graph_handwritten", k=4, max_seqlen=4, batch_size=2)
    )
    assert v.info["steps_per_graph"] == 4
    with pytest.raises(ValueError, match="unknown generator 'fast'"):
        tokgen.label("fast")
