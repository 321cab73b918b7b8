"""The timing harness: interleaving, failures recorded, gains judged by their spread."""

import math
import random

import numpy as np
import pandas as pd
import pytest
import torch

import tokgen
from tokgen.bench import Variant, compare, drawn_orders, round_orders
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


def test_drawn_orders_come_from_a_fresh_seed_each_time_and_the_seed_regenerates_them(monkeypatch):
    """Notebook 06's windows: the seed is drawn from the system's entropy (not a fixed one per
    window), returned to be recorded, and given back it yields the same orders."""
    assert drawn_orders(3, 4, seed=7) == (7, round_orders(3, 4, random.Random(7)))
    seeds = iter([11, 12])
    monkeypatch.setattr(random, "SystemRandom", lambda: type("Entropy", (), {"randrange": lambda _, n: next(seeds)})())
    (first, orders), (second, _) = drawn_orders(6, 3), drawn_orders(6, 3)
    assert (first, second) == (11, 12) and orders == round_orders(6, 3, random.Random(11))
    assert all(sorted(o) == list(range(6)) for o in orders)  # every variant once per window


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


class FakeClock:
    """A host whose runs take what the variants say: `time.perf_counter` for tokgen.bench."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def timed(name, clock, ms, log, rng):
    """A variant whose every run takes `ms` × a host drift (±50%, over about a minute, for every
    variant) × 3% jitter."""

    def run():
        log.append(name)
        drift = 1 + 0.5 * math.sin(clock.now / 10)
        clock.now += 1e-3 * ms * drift * rng.lognormal(0, 0.03)
        return torch.zeros(1, 6, dtype=torch.long)

    return Variant(name, run)


def test_a_sequential_comparison_runs_only_what_its_undecided_pairs_need(monkeypatch):
    """20% faster: decided at the first look, then it stops running; the same variant under two
    names: runs on until "no effect" or the cap; a variant of no pair: the first look only."""
    clock, log, rng = FakeClock(), [], np.random.default_rng(0)
    monkeypatch.setattr(tokgen.bench, "time", clock)
    speeds = (("a", 1000), ("fast", 1000 / 1.2), ("same", 1000), ("other", 500))
    variants = [timed(n, clock, ms, log, rng) for n, ms in speeds]
    res = compare(variants, rounds=10, max_rounds=40, pairs=[("a", "fast"), ("a", "same")], device="cpu", seed=3)
    res = res.set_index("variant")
    assert set(res["looks"]) == {"10;20;40"}
    fast = tokgen.gain(res.reset_index(), "a", "fast")
    same = tokgen.gain(res.reset_index(), "a", "same")
    assert fast["outcome"] == "faster" and fast["rounds"] == 10 and fast["decided"]
    assert res.loc["fast", "runs"] == 10 and res.loc["other", "runs"] == 10  # decided, or in no pair: dropped
    assert same["outcome"] in ("no effect", "undecided") and same["rounds"] in (20, 40)
    assert same["outcome"] == "no effect" or same["capped"]
    assert res.loc["a", "runs"] == res.loc["same", "runs"] == same["rounds"]
    timed_log = log[4:]  # after one warm-up each
    assert timed_log[40:] and set(timed_log[40:]) == {"a", "same"}  # after the first look, only the open pair
    assert all(sorted(timed_log[i : i + 4]) == ["a", "fast", "other", "same"] for i in range(0, 40, 4))
    assert res.loc["a", "positions"].count(";") + 1 == res.loc["a", "runs"]


def test_a_threshold_keeps_a_decided_pair_running_until_its_side_is_known(monkeypatch):
    clock, log, rng = FakeClock(), [], np.random.default_rng(1)
    monkeypatch.setattr(tokgen.bench, "time", clock)
    variants = [timed(n, clock, ms, log, rng) for n, ms in (("a", 1000), ("fast", 1000 / 1.2))]
    res = compare(variants, rounds=10, max_rounds=40, pairs=[("a", "fast", (1.2,))], device="cpu", seed=1)
    g = tokgen.gain(res, "a", "fast", thresholds=(1.2,))
    assert g["outcome"] == "faster" and g["capped"] and list(res["runs"]) == [40, 40]
    assert tokgen.gain(res, "a", "fast")["rounds"] == 10  # read without the threshold: decided at the first look


def test_a_sequential_comparisons_first_look_is_its_rounds_and_a_cap_of_one_is_one_round():
    log = []
    res = compare([fake("a", log), fake("b", log)], rounds=3, max_rounds=12, pairs=[("a", "b")], device="cpu", seed=0)
    assert set(res["looks"]) == {"3;6;12"}  # looks_up_to(12, 3), not the default first look of 10
    res = compare([fake("a", log), fake("b", log)], rounds=1, max_rounds=1, pairs=[("a", "b")], device="cpu", seed=0)
    assert set(res["looks"]) == {"1"} and list(res["runs"]) == [1, 1]


def test_until_runs_every_variant_on_look_by_look_while_it_says_so_and_never_asks_at_the_cap():
    """Looks (5, 10, 15): a rule satisfied at 10 rounds stops there; one never satisfied runs to the
    cap, asked at 5 and 10 only; each time it sees every variant's rows so far; no `looks` recorded."""
    for satisfied_at, ran, asked in ((10, 10, [5, 10]), (99, 15, [5, 10]), (5, 5, [5])):
        seen, log = [], []

        def until(rows, satisfied_at=satisfied_at, seen=seen):
            seen.append(rows)
            return int(rows["runs"].min()) >= satisfied_at

        res = compare([fake(n, log) for n in "abc"], rounds=5, max_rounds=15, until=until, device="cpu", seed=0)
        assert list(res["runs"]) == [ran] * 3 and "looks" not in res
        assert [list(r["runs"]) for r in seen] == [[k] * 3 for k in asked]
        assert [list(r["variant"]) for r in seen] == [list("abc")] * len(asked)
        assert len(log) == 3 + 3 * ran  # a warm-up each, then whole rounds


def test_sequential_arguments_are_checked_before_anything_runs():
    log = []
    with pytest.raises(ValueError, match="pairs: no variant 'b'"):
        compare([fake("a", log)], rounds=2, max_rounds=4, pairs=[("a", "b")], device="cpu")
    whole = "^max_rounds caps a sequential comparison: name the comparisons it needs in pairs, or until$"
    with pytest.raises(ValueError, match=whole):  # one clear line
        compare([fake("a", log)], rounds=2, max_rounds=4, device="cpu")
    with pytest.raises(ValueError, match="max_rounds must be a positive integer"):
        compare([fake("a", log), fake("b", log)], rounds=2, pairs=[("a", "b")], device="cpu")
    with pytest.raises(ValueError, match="max_rounds must be a positive integer with pairs or until"):
        compare([fake("a", log)], rounds=2, until=lambda rows: True, device="cpu")
    with pytest.raises(ValueError, match="^pairs or until decides when the rounds stop, not both$"):
        compare([fake("a", log), fake("b", log)], rounds=2, max_rounds=4, pairs=[("a", "b")], until=bool, device="cpu")
    with pytest.raises(ValueError, match="against itself"):
        compare([fake("a", log)], rounds=2, max_rounds=4, pairs=[("a", "a")], device="cpu")
    two = [fake("a", log), fake("b", log)]
    # neither (base, variant) nor (base, variant, thresholds)
    for pair in [("a", "b", (1.2,), "extra"), ("a",), "ab", 5]:
        with pytest.raises(ValueError, match="pairs: each is"):
            compare(two, rounds=2, max_rounds=4, pairs=[pair], device="cpu")
    assert log == []


def test_every_row_records_the_host_probe_taken_just_before_and_just_after_the_timed_rounds(monkeypatch):
    """Notebook 05's host was twice as slow as notebook 06's in one run (r58): each comparison's rows
    carry the probe around its own rounds, the warm-up (compilation) outside it."""
    log = []
    probes = iter([[3.0, 2.0, 4.0], [6.0, 7.0, 5.0]])

    def probe():
        log.append("probe")
        return next(probes)

    monkeypatch.setattr(tokgen.bench, "host_loops_ms", probe)
    res = compare([fake(n, log) for n in "ab"], rounds=3, device="cpu", seed=5)
    assert log[:2] == list("ab") and log[2] == "probe" and log[-1] == "probe"  # warm-up, probe, 3 rounds, probe
    assert sorted(log[3:-1]) == sorted("ab" * 3)
    assert res[list(tokgen.results.HOST_PROBE_COLUMNS)].to_dict("records") == [
        {"host_probe_ms_before": 3.0, "host_probe_ms_after": 6.0, "host_probe_min_ms": 2.0, "host_probe_max_ms": 7.0}
    ] * 2


def test_recorded_times_keep_six_decimals_so_the_quartiles_recompute_from_the_csv(monkeypatch, tmp_path):
    """rv21B N1: at 3 decimals a quartile recomputed from the CSV's times_ms could differ from the printed one in its
    last digit. Each round's time is stored to the ns; a time with 6 significant decimals round-trips."""
    times = iter([1.0, 1.0, 7.543219, 7.548761, 24.974501, 24.975499])  # two warm-ups, then 2 rounds of a and b
    monkeypatch.setattr(tokgen.bench, "time_run", lambda run, device: (next(times), run()))
    monkeypatch.setattr(tokgen.bench, "host_loops_ms", lambda: [1.0])
    rec = tokgen.Recorder("t", tmp_path)
    res = compare([fake(n, []) for n in "ab"], rounds=2, device="cpu", seed=5, record=rec.write)
    back = rec.read().set_index("variant")
    stored = sorted(t for v in "ab" for t in tokgen.stats.run_times(back.loc[v]))
    assert stored == [7.543219, 7.548761, 24.974501, 24.975499]
    for v in "ab":
        again = tokgen.stats.time_summary(tokgen.stats.run_times(back.loc[v]))
        assert again["q25_ms"] == pytest.approx(res.set_index("variant").loc[v, "q25_ms"], abs=1e-9)
