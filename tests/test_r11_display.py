"""Review r11's sentences (fixer F3): notebook 05's drift rule and first-call sentences, solution 05's and 09's
templates, notebook 06's signed spans and its takeaway's per-window shares, solution 07's late-run count."""

import pandas as pd

from tokgen import display, gaps
from tokgen.stats import compare_rounds
from tokgen.voice import unsynced_runs_text

# notebook 05's rounds of the reference run at 7e7a36f (data/05_torch_compile.csv): eager, then compiled
EAGER = [1130.313, 1097.930, 1042.415, 848.517, 897.280, 566.562, 536.197, 566.549, 628.723, 546.252]
COMPILED = [492.136, 484.056, 474.622, 274.820, 415.378, 273.072, 272.696, 355.352, 337.850, 331.086]


def rounds(base, variant, before=6.478, after=3.525) -> pd.DataFrame:
    times = [";".join(f"{t:.3f}" for t in ts) for ts in (base, variant)]
    return pd.DataFrame({"variant": ["kv_static", "compiled kv_static"], "status": "ok", "times_ms": times,
                         "host_probe_ms_before": before, "host_probe_ms_after": after})  # fmt: skip


def test_drift_is_said_with_both_halves_the_probe_and_the_median_between_them_naming_no_cause():
    """Rounds 1–5 at ×2.16–×3.09 and 6–10 at ×1.59–×2.07 (review r11, rvC S2): apart, 2 in C(10, 5) = 1 in 126 by
    chance; the eager median (738.6 ms) lies between its halves' times, the compiled one (346.6) does not."""
    text = display.drift_text(rounds(EAGER, COMPILED), "kv_static", "compiled kv_static")
    assert text == (
        "The per-round speed-ups moved during the run: rounds 1–5 gave ×2.16–×3.09 (median ×2.27), rounds 6–10 "
        "×1.59–×2.07 (median ×1.86), the two ranges apart (with no drift, 1 time in 126 by chance). The host's probe "
        "loop took 6.48 ms before the rounds and 3.52 ms after. `kv_static`'s median over these rounds, 738.6 ms, lies "
        "between its halves' times (848.5–1130.3 ms, then 536.2–628.7 ms). The paired speed-up ×2.12 and the tables "
        "above (the bound table's too) pool both halves; why the speed-ups moved, this run does not measure.")
    assert "noise" not in text and "because" not in text
    unprobed = display.drift_text(rounds(EAGER, COMPILED, float("nan")), "kv_static", "compiled kv_static")
    assert "The host's probe was not recorded for these rounds." in unprobed


def test_halves_that_overlap_by_one_round_show_no_drift_and_too_few_rounds_are_not_judged():
    """Round 6's ratio raised to ×2.17, above the first half's lowest (×2.16): the ranges overlap, so no drift;
    6 rounds (halves of 3: 1 in 10 by chance) are not judged, 8 (halves of 4: 1 in 35) are; an odd count leaves
    the middle round out."""
    overlapping = COMPILED[:5] + [EAGER[5] / 2.17] + COMPILED[6:]
    text = display.drift_text(rounds(EAGER, overlapping), "kv_static", "compiled kv_static")
    assert text == ("The per-round speed-ups of rounds 1–5 (×2.16–×3.09) and of rounds 6–10 (×1.59–×2.17) overlap: "
                    "this page's rule (the halves' ranges apart) finds no drift between them.")
    six = display.drift_text(rounds(EAGER[2:8], COMPILED[2:8]), "kv_static", "compiled kv_static")
    assert six == ("Whether the speed-ups moved during the run is not judged: with 6 rounds, halves this short fall "
                   "apart by chance 1 time in 10 with no drift at all.")
    eight = display.drift_text(rounds(EAGER[1:9], COMPILED[1:9]), "kv_static", "compiled kv_static")
    assert eight.startswith("The per-round speed-ups moved during the run: rounds 1–4 gave ×2.16–×3.09") and (
        "rounds 5–8 ×1.59–×2.07" in eight and "1 time in 35 by chance" in eight)
    eleven = display.drift_text(rounds(EAGER + [560.0], COMPILED + [330.0]), "kv_static", "compiled kv_static")
    assert "rounds 1–5 gave ×2.16–×3.09 (median ×2.27), rounds 7–11 ×1.59–×1.97 (median ×1.70)" in eleven
    assert "not measured" in display.drift_text(rounds(EAGER, COMPILED), "kv_static", "other")


def test_the_first_call_sentences():
    row = {"first_call_ms": 27676.102, "median_ms": 346.6006, "runs": 10}
    assert display.first_call_text(row) == (
        "First call of the compiled model: **27.7 s** (tracing, compilation and one generation, from empty on-disk "
        "caches), then **347 ms** per generation (median of 10).")
    assert display.first_call_price(row).startswith("The price: a first call of 27.7 s, once, which holds the tracing")
    assert display.first_call_price(row).endswith("expected to be shorter: not measured here).")  # rvB17 N6


def test_a_signed_span_never_prints_a_negative_zero():
    """Compiled window 2's copy ended −0.019 µs from the sync's start (review r11, rvA N1)."""
    assert gaps._span([-0.019, 0.7, 0.3], signed=True) == "0.0 to +0.7"
    assert gaps._span([-0.04, -0.01], signed=True) == "0.0"
    assert gaps._span([-0.2, 1.4], signed=True) == "−0.2 to +1.4"
    assert gaps._span([-0.01, 0.02]) == "0.0" and gaps._span([0.04, 3.0]) == "0.0–3.0"


def test_solution_07s_late_runs_have_no_range_when_none_returned_extra_columns():
    """rvA N4: "0 of 20 runs returned extra columns (from 0 to 0)"."""
    assert unsynced_runs_text([0] * 20, 7, 32, 100, "cuda") == (
        "B = 32, N = 100, compiled, on cuda: the naive generator stops after 7 steps; without the wait, 0 of 20 runs "
        "returned extra columns.")
    late = unsynced_runs_text([0, 3, 1], 7, 32, 100, "cuda")
    assert late.endswith("2 of 3 runs returned extra columns (from 0 to 3).")


def test_solution_05s_sentences():
    g = compare_rounds([10.0, 11.0, 9.0, 10.0, 10.5, 9.5], [10.0, 10.0, 10.0, 10.0, 10.0, 10.0])
    assert display.compile_rounds_text(12, 0, "", 8, "compiled, default", 12) == (
        "Each first call holds its setting's compilations, from new, empty on-disk caches; in the warm-up calls and "
        "the 12 timed rounds that followed, dynamo compiled nothing more. The recompile limit in force is dynamo's (8) "
        "raised by the compilations of the settings before. Both speed-up columns are paired, round by round, from the "
        "same rounds: a setting's steady state against the default one is its speed-up against `compiled, default`. "
        "All settings compile the same model's forward and share its dynamo cache (12 compilations in all, the first "
        "calls' and the rounds'): whether one setting's compiled code there changes another's steady state is not "
        "measured (timing each setting in its own process would show it).")
    assert "dynamo compiled 1 more frame (it said: w)" in display.compile_rounds_text(12, 1, "w", 8, "d", 13)
    assert display.recompile_limit_text("compiled, dynamic=False", 8, g).startswith(
        "`compiled, dynamic=False` met its recompile limit in its first call, after 8 compilations (dynamo's warning")
    assert display.recompile_limit_text("v", 1, None).endswith(
        "after 1 compilation (dynamo's warning above); by dynamo's rule, a step that none of them covers runs eager "
        "from then on. Against eager it reads not measured.")
    assert display.compilations_text({"kv_dynamic": 3, "kv_static": 2}, 100) == (
        "kv_dynamic: 3 compilations in one generation of 100 steps; kv_static: 2. Run with `TORCH_LOGS=recompiles` to "
        "read dynamo's reasons.")
    assert display.gpu_ops_text({"eager": 340.0, "compiled": 188.0}, 32) == (
        "GPU operations per step at B = 32 (kernels, memsets and copies; the median over the profiled steps): eager "
        "340, compiled 188.")


def pair(name, vs, ratios):
    base = [100.0] * len(ratios)
    return {"variant": name, "vs": vs, **compare_rounds(base, [100.0 / r for r in ratios])}


def test_the_closest_pair_is_the_narrowest_equivalence_interval_among_those_shown_within_the_band():
    """rvC NIT: the pair shown within ±5% with the narrowest equivalence interval, not the point speed-up nearest
    ×1: `wide` has median ×1.000 but a wider interval than `narrow` (×1.010, tight); `open` (×1.000, undecided)
    is not shown within ±5%."""
    narrow = pair("narrow", "a", [1.010, 1.011, 1.009, 1.010, 1.012, 1.008, 1.010, 1.011, 1.009, 1.010])
    wide = pair("wide", "b", [1.000, 1.02, 0.98, 1.01, 0.99, 1.00, 1.015, 0.985, 1.005, 0.995])
    open_ = pair("open", "c", [1.00, 1.3, 0.7, 1.2, 0.8, 1.0, 1.25, 0.75, 1.1, 0.9])
    assert narrow["no_effect"] and wide["no_effect"] and not open_["no_effect"]
    assert display.closest_pair_text([open_, wide, narrow]).startswith(
        "Closest: of the 2 pairs of 3 shown within ±5%, the one with the narrowest equivalence interval: `narrow` "
        "against `a`, round by round ×1.01")
    assert display.closest_pair_text([open_, narrow]).startswith("Closest: the only pair of 2 shown within ±5%: "
                                                                 "`narrow` against `a`")
    slow = pair("slow", "d", [1.5] * 10)
    assert display.closest_pair_text([slow, open_]).startswith(
        "No pair of the 2 is shown within ±5%; the one whose paired speed-up is nearest ×1: `open` against `c`")


def test_solution_09s_rank_moves_and_gpu_shares_beside_the_reference_run():
    ranks = pd.DataFrame({"variant": ["a", "b", "c"], "rank": [1, 2, 3], "rank_32": [1, 3, 2]})
    assert display.rank_moves_text(ranks).startswith("2 of 3 variants have another rank than in the reference run at "
                                                     "B = 32 (ranks count")
    assert display.rank_moves_text(ranks.assign(rank_32=[1, 2, 3])) == "Every variant has its reference rank."
    b1 = pd.Series({"a": 0.17, "b": 0.28, "c": 0.21})
    ref = pd.Series({"a": 0.25, "b": 0.20, "c": 0.58, "z": 0.9})  # z: not among B = 1's variants
    assert display.busy_at_b1_text(b1, ref) == (
        "The GPU is busy 17% to 28% of a step at B = 1: host-bound everywhere, so what a generator does on the host "
        "sets its place. In the reference run at B = 32 (another session, over its shared rounds) the GPU was busy "
        "20% to 58% of a step for these variants; the share at B = 1 is lower for 2 of 3 (host times of two "
        "sessions: they can move between runs by more than their spread within one).")
    assert display.busy_at_b1_text(pd.Series({"a": 0.6}), ref).startswith(
        "The GPU is busy 60% of a step at B = 1. In the reference run")
    assert display.busy_at_b1_text(pd.Series({"a": float("nan")}), ref) == ""


def test_solution_09s_claims_order_puts_decided_unresampled_verdicts_in_their_own_group():
    """rvC S5: a sequential verdict has no stability but is decided: not among the inconclusive ones."""
    claims = pd.DataFrame({"#": range(1, 8),
                           "verdict": ["reproduced", "not measured", "inconclusive", "reproduced",
                                       "inconclusive (partly in 90% of resampled runs)", "not reproduced", "partly"],
                           "stability": [0.9975, None, None, None, 0.90, None, 0.985]})  # fmt: skip
    ordered = display.fragility_order(claims)
    assert list(ordered["#"]) == [3, 5, 7, 1, 4, 6, 2]
    assert list(ordered["kind"]) == ["inconclusive", "inconclusive", "resampled", "resampled",
                                     "decided, not resampled", "decided, not resampled", "no verdict"]


def test_compilations_text_shows_the_guard_that_failed_at_each_recompilation():
    """rvB17 N8: solution 05's exercise 2 shows dynamo's own reason for each recompilation, the first failed guard of
    each "Recompiling" record, with its list marker dropped; records that are not recompilations are skipped."""
    records = [
        "Recompiling function f in a.py:8\n    triggered by the following guard failure(s):\n"
        "    - 0/0: tensor 'x' size mismatch at index 0. expected 3, actual 4",
        "Recompiling function f in a.py:8\n    triggered by the following guard failure(s):\n"
        "    - 0/1: tensor 'x' stride mismatch at index 0. expected 4, actual 5\n    - 0/0: older guard",
        "some other dynamo warning\n    - not a guard",
    ]
    reasons = display.recompile_reasons(records)
    assert reasons == ["tensor 'x' size mismatch at index 0. expected 3, actual 4",
                       "tensor 'x' stride mismatch at index 0. expected 4, actual 5"]  # fmt: skip  (rr18a N5)
    said = {"kv_dynamic": reasons, "kv_static": []}
    assert display.compilations_text({"kv_dynamic": 3, "kv_static": 1}, 100, said) == (
        "kv_dynamic: 3 compilations in one generation of 100 steps; kv_static: 1. The guard that failed at each "
        "recompilation, as dynamo logged it: kv_dynamic, 2 recompilations: `tensor 'x' size mismatch at index 0. "
        "expected 3, actual 4`, then `tensor 'x' stride mismatch at index 0. expected 4, actual 5`; kv_static: no "
        "recompilation.")  # fmt: skip


def test_compilations_text_names_each_generators_recompilations_and_says_none_logged_where_none_was_caught():
    """Review rr18a N5: generators apart by "; ", one generator's guards by ", then ", the count with each; N6: a
    generator compiled 3 times with no recompiles line caught (a torch routing the log elsewhere) reads "none
    logged", not "no recompilation"; one compiled once reads "no recompilation"."""
    said = {"kv_dynamic": ["a", "b"], "kv_static": ["c"], "other": []}
    assert display.compilations_text({"kv_dynamic": 3, "kv_static": 2, "other": 1}, 10, said).endswith(
        "as dynamo logged it: kv_dynamic, 2 recompilations: `a`, then `b`; kv_static, 1: `c`; other: no "
        "recompilation.")  # fmt: skip
    lost = display.compilations_text({"kv_dynamic": 3, "kv_static": 1}, 10, {"kv_dynamic": [], "kv_static": []})
    assert lost.endswith("as dynamo logged it: kv_dynamic: none logged; kv_static: no recompilation.")
