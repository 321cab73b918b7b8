"""Review rvC14 S4: notebook 10's takeaways say in words what K did (which Ks are tied inside the no-effect band,
which are decidedly slower) and the fused step's paired speed-up against the unfused step at the same K."""

import random
import re
import statistics

import pandas as pd

from tokgen import display, voice
from tokgen.stats import gain
from tokgen.voice import k_sweep_text, speedup_text

WOBBLE = [0.004, -0.003, 0.002, -0.001, 0.003, -0.004, 0.001, -0.002, 0.0, 0.002]  # per round, well inside ±5%
BASE = [100.0 + 3 * i for i in range(10)]  # ten interleaved rounds that drift, as a host does


def frame(times: dict[str, list[float]], **columns) -> pd.DataFrame:
    """A run table as tests/test_voice.py builds one (times_ms per variant), with any columns per variant."""
    rows = [{"variant": v, "times_ms": ";".join(map(str, t)), "median_ms": statistics.median(t)}
            for v, t in times.items()]  # fmt: skip
    return pd.DataFrame(rows).assign(**columns)


def sweep(times: dict[str, list[float]], ks: dict) -> str:
    """The notebook's call: each K against the smallest K, ranked among the sweep's variants."""
    base = min(ks, key=ks.get)
    return k_sweep_text("g", display.ranking(frame(times), base, list(times)), ks)


def test_k_sweep_says_which_ks_are_tied_and_which_is_decidedly_slower():
    times = {"g K=1": BASE, "g K=2": [b * (1 + w) for b, w in zip(BASE, WOBBLE)],
             "g K=4": [b * (1 - w) for b, w in zip(BASE, WOBBLE)],
             "g K=16": [b * 1.12 * (1 + w / 2) for b, w in zip(BASE, WOBBLE)]}  # fmt: skip
    ks = {"g K=1": 1, "g K=2": 2, "g K=4": 4, "g K=16": 16.0}
    text = sweep(times, ks)
    words = ("In words: K = 1, 2 and 4 are tied at rank 1 of its 4 Ks, each pair shown to lie within ±5% (inside "
             "each other's no-effect band); K = 16 is decidedly slower than K = 1, 2 and 4 (really slower than each, "
             "and not shown within ±5%).")  # fmt: skip
    assert text.endswith(". " + words)
    assert text.startswith("* `g`: K = 1 rank 1 of its 4 Ks (shared); ")  # the paired speed-ups stay before the words
    k16 = gain(frame(times), "g K=1", "g K=16")
    assert f"K = 16 rank 4 of its 4 Ks, against K = 1 {speedup_text(k16)}" in text and k16["outcome"] == "slower"


def test_k_sweep_with_a_faster_k_names_it_alone_at_the_best_rank():
    base = [100.0 + i for i in range(8)]
    times = {"g K=1": base, "g K=4": [t / 1.2 for t in base], "g K=16": [t * 1.1 for t in base]}
    assert sweep(times, {"g K=1": 1, "g K=4": 4, "g K=16": 16.0}).endswith(
        "In words: K = 4 alone has rank 1 of its 3 Ks; K = 1 is decidedly slower than K = 4 (really slower than it, "
        "and not shown within ±5%); K = 16 is decidedly slower than K = 1 and 4 (really slower than each, and not "
        "shown within ±5%).")  # fmt: skip


def test_k_sweep_chain_whose_ends_are_told_apart_parts_the_beaten_k():
    """Review rvC15 S3 and rv19A S1: K = 1 ≈ K = 2 and K = 2 ≈ K = 4 within ±5%, yet K = 1 beats K = 4 for real
    (not shown within ±5%). The chain once put K = 4 in rank 1 beside K = 1; now K = 1 and 2 are tied at rank 1
    and K = 4 keeps its own count, 2, and the words say why it is not tied with K = 2 (review rr19f N2)."""
    times = {"a K=1": BASE, "a K=2": [b * 1.035 * (1 + w) for b, w in zip(BASE, WOBBLE)],
             "a K=4": [b * 1.07 * (1 - w) for b, w in zip(BASE, WOBBLE)]}  # fmt: skip
    ks = {"a K=1": 1, "a K=2": 2, "a K=4": 4}
    ranked = display.ranking(frame(times), "a K=1").set_index("variant")
    assert ranked.loc["a K=4", "within_band_of"] == ["a K=2"] and list(ranked.loc["a K=4", "beaten_by"]) == ["a K=1"]
    assert ranked["rank"].to_dict() == {"a K=1": 1, "a K=2": 1, "a K=4": 2}
    assert voice.k_sweep_words(ranked.reset_index(), ks) == (
        "In words: K = 1 and 2 are tied at rank 1 of its 3 Ks, each pair shown to lie within ±5% (inside each "
        "other's no-effect band); K = 4 is decidedly slower than K = 1 (really slower than it, and not shown within "
        "±5%), not tied with K = 2 though shown within ±5% of it: that would put it beside K = 1, which beats "
        "it.")  # fmt: skip


def test_k_sweep_ranks_say_they_rank_among_the_generators_own_ks():
    """Review rvC15 S4: the table ranks every variant; a sweep ranks one generator's Ks. Every rank the sweep
    prints says so ("rank 4 of its 4 Ks"), so no K shows a bare rank beside its rank in the table."""
    times = {"g K=1": BASE, "g K=2": [b * (1 + w) for b, w in zip(BASE, WOBBLE)],
             "g K=4": [b * (1 - w) for b, w in zip(BASE, WOBBLE)],
             "g K=16": [b * 1.12 * (1 + w / 2) for b, w in zip(BASE, WOBBLE)]}  # fmt: skip
    text = sweep(times, {"g K=1": 1, "g K=2": 2, "g K=4": 4, "g K=16": 16.0})
    ranks = re.findall(r"rank \d+(?: of its \d+ Ks)?", text)
    assert len(ranks) == 5 and all(r.endswith(" of its 4 Ks") for r in ranks), ranks


def test_k_sweep_never_calls_undecided_ks_tied():
    rnd = random.Random(1)
    noisy = lambda: [100 * (1 + 0.3 * rnd.uniform(-1, 1)) for _ in range(10)]  # noqa: E731
    ranked = display.ranking(frame({"b K=1": noisy(), "b K=2": noisy()}), "b K=1")
    assert ranked.set_index("variant").at["b K=2", "outcome"] == "undecided"
    words = voice.k_sweep_words(ranked, {"b K=1": 1, "b K=2": 2})
    assert words == "In words: K = 1 and 2 share rank 1 of its 2 Ks, not all shown to lie within ±5% of each other."
    assert "tied" not in words


KERNELS = pd.DataFrame({
    "variant": ["u K=1", "u K=1", "f K=4", "f K=4"],
    "kind": ["matmul", "norm", "matmul", "norm"],
    "products": [True, False, True, False],
    "kernels_per_token": [60.0, 38.0, 48.0, 12.0],
    "own_us_per_token": [400.0, 100.0, 380.0, 12.4],
})  # fmt: skip
COUNT = "* Fusing: 98 → 60 kernels per step; besides its products, `f K=4` spends 12 µs on norm per step."


def fused_run(fused_over: float) -> pd.DataFrame:
    """The unfused step at K = 1 and 4 and the fused step at K = 4, the fused step's times `fused_over` times faster."""
    times = {"u K=1": [b * 1.01 for b in BASE], "u K=4": BASE,
             "f K=4": [b / fused_over * (1 + w) for b, w in zip(BASE, WOBBLE)]}  # fmt: skip
    return frame(times, generator=["u", "u", "f"], steps_per_graph=[1, 4, 4])


def test_fusing_text_adds_the_fused_step_against_the_unfused_step_at_the_same_k():
    results = fused_run(1.14)
    g = gain(results, "u K=4", "f K=4")
    assert g["outcome"] == "faster" and not g["no_effect"]
    text = display.fusing_count_text(KERNELS, "u K=1", "f K=4", results=results)  # profiled at K = 1, timed at K = 4
    assert text == (f"{COUNT} `f K=4` against the unfused step at the same K, `u K=4`, round by round: "
                    f"{speedup_text(g)}.")  # fmt: skip
    assert "faster; 95% interval ×" in text and "`u K=1`" not in text  # the same K, not the profiled K = 1
    assert display.fusing_count_text(KERNELS, "u K=1", "f K=4") == COUNT  # without the rounds, the count alone


def test_fusing_text_says_slower_or_not_measured_as_the_rounds_give():
    slower = display.fusing_count_text(KERNELS, "u K=1", "f K=4", results=fused_run(0.85))
    assert ", slower; 95% interval ×" in slower and "faster" not in slower
    untimed = fused_run(1.14).query("variant != 'u K=4'")
    assert display.fusing_count_text(KERNELS, "u K=1", "f K=4", results=untimed) == (
        f"{COUNT} `f K=4` against the unfused step at the same K: not measured in this run.")  # fmt: skip
