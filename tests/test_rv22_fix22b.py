"""Reviews rv22A and rv22B (notebooks 00, 01, 02, 05 and 11 of the H200 run), the wording findings fixed on branch
fix22b, each pinned with data whose answer is known."""

import json
import statistics

import pandas as pd
import pytest

from tokgen import claims, display, voice
from tokgen.stats import time_summary


def timed(variant, t, seed=1, **info):
    """A row as `tokgen.compare` writes it: its summary over all its rounds, 10 steps."""
    s = time_summary(t)
    return {"variant": variant, "status": "ok", "runs": len(t), "steps": 10, **s, "ms_per_step": s["median_ms"] / 10,
            "times_ms": ";".join(map(str, t)), "order_seed": seed, **info}  # fmt: skip


# --- rv22A N6, rv22B N3: the runs table ---


def test_the_runs_table_says_how_many_rounds_it_shows_and_a_first_call_in_whole_ms():
    """rv22A N6: `a` ran 20 rounds and `b` 10 in one comparison: a's row is over the first 10 (median 104.5 of
    100-109, not of all 20), and its runs read "20 (10 shown)"; b's plain "10"; another comparison whose variants all
    ran 20: "20". rv22B N3: a first call of 19,249.394 ms reads "19,249", not "19,249.39"; a row without one blank."""
    a = [100.0 + i for i in range(10)] + [300.0 + i for i in range(10)]
    rows = pd.DataFrame([timed("a", a, first_call_ms=19249.394), timed("b", [50.0 + i for i in range(10)],
                                                                         first_call_ms=1261.219),
                         timed("c", a, seed=2, first_call_ms=float("nan"))])  # fmt: skip
    said = display.runs_table(rows, {"first call, ms": "first_call_ms"})
    assert "| a | ok | 20 (10 shown) | 10 | 104.5 (102.2–106.8) | 100.0–109.0 | 10.45 | 19,249 |" in said
    assert "| b | ok | 10 | 10 | 54.5 (52.2–56.8) | 50.0–59.0 | 5.45 | 1,261 |" in said
    assert "| c | ok | 20 | 10 |" in said and said.splitlines()[4].endswith("|  |")  # c's first call not recorded
    plain = display.runs_table(rows)  # other extra columns keep two decimals; no extra column: none
    assert "first call" not in plain and "| a | ok | 20 (10 shown) |" in plain
    assert "| 10.45 | 1.23 |" in display.runs_table(rows.assign(x=1.234), {"x": "x"})  # another column: 2 decimals


# --- rv22A N1: the paired slope's bootstrap range ---


def test_a_slope_range_over_fewer_than_20_rounds_prints_one_decimal_rounded_outward():
    """rv22A N1: over 10 rounds the 97.5th percentile's second decimal was the seed's (1.070 with seed 0, 1.048-1.059
    with seeds 1-4): below 20 rounds each end reads one decimal, rounded outward (0.95-1.07 reads 0.9-1.1, never
    0.9-1.0, which would leave 1.07 outside); from 20 rounds two decimals, each kept on its side of 1.7."""
    assert display.slope_range_text(0.95, 1.07, 10) == "0.9–1.1"
    assert display.slope_range_text(0.95, 1.07, 19) == "0.9–1.1"
    assert display.slope_range_text(1.1, 1.2, 10) == "1.1–1.2"  # already on a tenth: not pushed out by float error
    assert display.slope_range_text(0.95, 1.07, 20) == "0.95–1.07"
    assert display.slope_range_text(1.6996, 1.75, 20) == "1.6996–1.75"  # notebook 01's 20 rounds: its side of 1.7
    f = [1.0, 1.3, 0.9, 1.1, 1.2, 0.8, 1.05, 0.95, 1.15, 0.85]
    rows = pd.DataFrame([{"max_seqlen": n, "times_ms": ";".join(str(n * x * (1 + 0.01 * (i % 3) * (n > 100)))
                                                                for i, x in enumerate(f)),
                          "shared_runs": 10, "looks": "10;20"} for n in (100, 200, 400)])  # fmt: skip
    rows["median_ms"] = [statistics.median(map(float, t.split(";"))) for t in rows["times_ms"]]
    low, high = display.slope_range(rows.drop(columns=["looks", "shared_runs"]))
    text = display.slope_text(rows)
    assert f"bootstrap range {display.slope_range_text(low, high, 10)} over its first 10 rounds)" in text
    assert len(text.split("bootstrap range ")[1].split("–")[0]) == 3  # "0.9", one decimal


# --- rv22B N2: the host probe's drift under the bound table ---


def probed(before, after):
    rows = pd.DataFrame([timed("a", [100.0] * 10, gpu_busy_ms=50.0, gpu_busy_share=0.5)])
    return rows.assign(host_probe_ms_before=before, host_probe_ms_after=after, host_probe_min_ms=3.06,
                       host_probe_max_ms=6.03)  # fmt: skip


def test_the_bound_table_says_when_the_host_probe_moved_beyond_host_drift():
    """rv22B N2: notebook 05's probe took 3.25 ms before and 5.91 ms after (×1.82): outside [1/1.25, 1.25]
    (`tokgen.gaps.HOST_DRIFT`), so the table says the probe ran 1.82× slower after than before and that the host's
    speed changed during the rounds; 5.91 before and 3.25 after: 1.82× faster; 3.25 and 4.0 (×1.23): inside, the
    sentence as before."""
    from tokgen.gaps import HOST_DRIFT

    head = ("The host's probe loop (`tokgen.results.host_loops_ms`, median of 5 loops) took 3.25 ms before these "
            "rounds and 5.91 ms after, its single loops 3.06–6.03 ms")  # fmt: skip
    moved = ("; the probe ran 1.82× slower after than before: the host's speed changed during these rounds (its "
             "effect on the rounds is not measured).")  # fmt: skip
    assert display.bound_table(probed(3.25, 5.91)).endswith(head + moved)
    assert display.bound_table(probed(5.91, 3.25)).endswith("; the probe ran 1.82× faster after than before: the "
                                                            "host's speed changed during these rounds (its effect on "
                                                            "the rounds is not measured).")  # fmt: skip
    near = display.bound_table(probed(3.25, 4.0))
    assert near.endswith("its single loops 3.06–6.03 ms; whether the rounds' times followed the host's speed is not "
                         "measured.") and "the probe ran" not in near  # fmt: skip
    assert 4.0 / 3.25 < HOST_DRIFT < 5.91 / 3.25
    assert voice.host_probe_text(probed(3.25, 5.91)).endswith(moved)  # notebook 10's call, no `drift`: flagged too
    assert "the probe ran" not in voice.host_probe_text(probed(3.25, 5.91), drift=None)  # (review rr22a S2)
    two = pd.concat([probed(3.25, 5.91), probed(3.0, 6.0).assign(variant="b", order_seed=2)])  # two comparisons
    assert "the probe ran 1.82×–2.00× slower after than before in 2 of 2 comparisons: " in display.bound_table(two)


# --- rv22B N5, N8: notebook 11's copy sentence and micro table ---


def test_the_copy_share_is_named_as_that_runs_queued_work_and_copy():
    """rv22B N5: 12.470 ms of 12.825 ms is 97% of the pageable run's queued work AND copy, not of the queued work."""
    copies = pd.DataFrame({"copy_call_median_ms": [0.03, 12.47], "copy_call_min_ms": [0.02, 11.0],
                           "copy_call_max_ms": [0.1, 13.0], "gpu_work_and_copy_median_ms": [12.5, 12.825]},
                          index=["pinned", "pageable"])  # fmt: skip
    said = voice.copy_wait_text(copies)
    assert "12.470 ms into pageable memory, 97% of that run's queued work and copy." in said
    assert "its median at least half that run's queued work and copy: the pageable copy waited" in said
    assert "of the queued work" not in said and "half the queued work" not in said


def test_the_micro_table_keeps_the_order_the_variants_were_defined_in():
    """rv22B N8: notebook 11's plot lists the variants in the order they were defined (first seen in the rows);
    the table sorted them by name. Defined z, a, m: the table and the takeaway list z, a, m."""
    micro = pd.DataFrame([{"variant": v, "device": d, "ms_per_token": x, "gpu_busy_share": b}
                          for v, x in (("z generate()", 1.0), ("a kv", 0.5), ("m graph", 0.2))
                          for d, b in (("cpu", float("nan")), ("cuda", 0.3))])  # fmt: skip
    lines = voice.micro_table(micro).splitlines()[2:]
    assert [line.split(" | ")[0] for line in lines] == ["| z generate()", "| a kv", "| m graph"]
    takeaway = voice.micro_speed_text(micro)
    assert takeaway.index("`z generate()`") < takeaway.index("`a kv`") < takeaway.index("`m graph`")


# --- rv22A N3: solution 00's step, counted from 0 ---


def test_solution_00s_stop_step_is_counted_from_0_as_the_agreement_lines_count_it():
    """rv22A N3: EOS at column 8 of the naive generator's output: it stops after 8 steps, and the step that first
    emits EOS is step 7 counted from 0, as `tokgen.agreement`'s failure lines ("row r, step col − 1") and
    `eos_stop_text` number steps."""
    said = voice.same_stop_text(26100, 8, 18, 20)
    assert said.startswith("EOS = 26100 first appears at step 7 (counted from 0: the naive generator stops after 8 "
                           "steps); all 19 generators")  # fmt: skip
    eos = voice.eos_stop_text(pd.DataFrame({"naive_columns": [9], "params": [json.dumps({"EOS": 26100})]}))
    assert "stops after 8 steps: step 7 (counted from 0)" in eos  # the same run, numbered alike


# --- rv22A S1, S3: notebook 01's summary and claim 1 ---


def naive_rows(retries, device_gb=150.0, reserved=(20.0, 70.0, 140.0), wall=(2.56, 1.66, 1.89)):
    """Notebook 01's rows, 10 rounds: ×3 per doubling at 100→200, ×3.6 at 200→400 (each round its own base), the
    allocator's retries at each N in its last run (`retries`), GPU busy 1 ms per step, `wall` ms per step."""
    base = [100.0 + 3 * i for i in range(10)]
    times = {100: base, 200: [3 * t for t in base], 400: [3 * 3.6 * t for t in base]}
    return pd.DataFrame([timed(f"naive N={n}", times[n], max_seqlen=n, batch_size=32, steps=n, frag_pct=95.0,
                               peak_reserved_gb=r, device_memory_gb=device_gb, num_alloc_retries=k,
                               ms_per_step=w, gpu_busy_ms=1.0 * n, gpu_busy_share=1.0 / w)
                         for n, k, r, w in zip((100, 200, 400), retries, reserved, wall)])  # fmt: skip


def test_claim_1_and_notebook_01s_summary_name_each_step_whose_growth_includes_the_allocators_retries():
    """rv22A S3, both ways. On the H200 (150 GB) only N=400 retried (3 times in its last run): 200→400's growth
    includes them, 100→200's does not. On an 80 GB card N=200 retried too: both steps say so, 200→400 naming both N.
    No retries (or no column): neither says it."""
    h200 = naive_rows((0, 0, 3))
    measured = claims.claim(1, "anywhere", tables={"01_naive": h200})["measured"]
    said = "; at 200→400 the growth includes the allocator's retries at N=400, counted in its last run only"
    assert said in measured and "at 100→200 the growth includes" not in measured
    assert measured.index("; the runtime part") < measured.index(said) < measured.index("; fragmentation holds")
    summary = display.scaling_summary(h200)
    assert summary.startswith("Runtime grew ×3.00 (100→200) and ×3.60 (200→400; the growth includes the allocator's "
                              "retries at N=400, counted in its last run only) per doubling of N")  # fmt: skip
    card80 = naive_rows((0, 2, 5), device_gb=80.0, reserved=(20.0, 75.0, 79.0))
    measured = claims.claim(1, "anywhere", tables={"01_naive": card80})["measured"]
    assert "; at 100→200 the growth includes the allocator's retries at N=200, counted in its last run only" in measured
    assert ("; at 200→400 the growth includes the allocator's retries at N=200 and N=400, counted in each N's last "
            "run only") in measured  # fmt: skip
    summary = display.scaling_summary(card80)
    assert "×3.00 (100→200; the growth includes the allocator's retries at N=200, counted in its last run only)" \
        in summary  # fmt: skip
    for rows in (naive_rows((0, 0, 0)), naive_rows((0, 0, 3)).drop(columns="num_alloc_retries")):
        assert "the growth includes" not in claims.claim(1, "anywhere", tables={"01_naive": rows})["measured"]
        assert "the growth includes" not in display.scaling_summary(rows)


def test_notebook_01s_summary_reports_the_rest_of_each_step_without_judging_a_change_with_n():
    """rv22A S1: the rest of each step (wall less busy) 2.56, 1.66 and 1.89 ms: one profiled run per N and no
    interval, while the same variant's rest read 21% apart between notebooks 01 and 02: the values, and that a
    change with N is not judged (neither "changed with N" nor "did not grow"), whatever their spread."""
    for wall in ((2.56, 1.66, 1.89), (1.5, 1.52, 1.51)):
        said = display.scaling_summary(naive_rows((0, 0, 0), wall=wall))
        rest = ", ".join(f"{w - 1:.2f}" for w in wall[:2]) + f" and {wall[2] - 1:.2f}"
        assert (f"the rest of each step (wall less busy) measured {rest} ms at N = 100, 200 and 400; whether it "
                "changes with N is not judged (one profiled run per N, no interval)") in said  # fmt: skip
        assert "changed with N" not in said and "did not grow" not in said


@pytest.mark.parametrize("retries", [(0, 0, 3)])
def test_retried_steps_reads_the_last_runs_counts(retries):
    steps = claims.growth_per_doubling(naive_rows(retries))
    assert claims.retried_steps(naive_rows(retries), steps) == {"200→400": [400]}
    assert claims.retried_steps(naive_rows(retries).assign(num_alloc_retries=float("nan")), steps) == {}
