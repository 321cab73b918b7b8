"""The reader-facing helpers in tokgen.display: tables and sentences read from result rows
(notebooks 00-08), the EOS that stops a generation where wanted, sentences read from tables, dot
plots (notebooks 10-14)."""

import matplotlib

matplotlib.use("Agg")

import math  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import tokgen  # noqa: E402
from tokgen import display  # noqa: E402
from tokgen.gaps import (  # noqa: E402
    gap_summary,
    gap_takeaway,
    idle_gaps,
    pipelined_gap,
    profile_table,
    profiler_overhead,
)


def this_run(**override) -> dict:
    """The columns that say which run made a row, as this process's Recorder writes them (commit, GPU, slice)."""
    here = {**tokgen.results.environment(), **tokgen.results.slice_columns()}
    return {k: here[k] for k in tokgen.results.RUN_KEYS} | override


def rows(times: dict[str, list[float]], **extra) -> pd.DataFrame:
    """Result rows as `tokgen.compare` writes them, from per-round times."""
    out = []
    for name, t in times.items():
        s = sorted(t)
        out.append({"variant": name, "times_ms": ";".join(map(str, t)), "median_ms": s[len(s) // 2], **extra})
    return pd.DataFrame(out)


def test_every_registry_entry_has_a_one_line_description():
    assert set(tokgen.registry.DESCRIPTIONS) == set(tokgen.GENERATORS)
    for notebook, text in tokgen.registry.DESCRIPTIONS.values():
        assert notebook.isdigit() and len(notebook) == 2 and "\n" not in text
    assert "no K" in tokgen.registry.DESCRIPTIONS["graph_stop_on_device"][1]


def test_table_digits_per_column_and_empty_cells():
    df = pd.DataFrame({"a": [1.23456], "b": [2.0], "c": [None], "d": [float("nan")]})
    assert display.table(df, digits={"a": 3}).splitlines()[-1] == "| 1.235 | 2.0 |  |  |"


def test_rounds_sentence_says_what_the_rounds_can_decide():
    five = display.rounds_sentence(5)
    assert "cannot give p < 0.05" in five and "6 rounds are the fewest" in five
    assert "0.031" in display.rounds_sentence(6) and "all agreeing" in display.rounds_sentence(6)
    assert "up to 2 may disagree" in display.rounds_sentence(8)
    assert "up to 4 may disagree" in display.rounds_sentence(12)  # not 11: those would decide the other way


def test_a_speedup_table_shows_one_measure_and_the_outcome_in_words():
    base = [100.0 + i for i in range(8)]
    df = rows({"a": base, "b": [t / 1.25 for t in base]})
    g = tokgen.gains(df, "a")
    text = display.speedup_table(g)
    assert "| b | a | ×1.25 | ×1.25–×1.25 | 0.008 | 8 | faster |" in text
    assert "gain_pct" not in text and "Speed-up: the median over interleaved rounds" in text


def test_trend_needs_a_change_larger_than_the_band():
    assert display.trend([1.0, 1.01, 1.02]) == "changes by less than 5%"
    assert display.trend([1.0, 1.6, 2.8]) == "grows"
    assert display.trend([0.90, 0.93, 0.88]) == "has no steady trend"
    assert display.trend([0.88, 0.9601, 0.9612]) == "has no steady trend"  # shown as x0.96 twice


def test_the_device_memory_note_says_could_not_reserve_more_only_where_the_allocator_retried():
    """Notebook 01's sentence: reserved ≥ 90% of the GPU's memory, and then what the allocator
    measured; a table from before the retries were recorded says nothing about them."""
    rows = pd.DataFrame({"variant": ["a", "b", "c"], "max_seqlen": [50, 100, 200], "device_memory_gb": 85.0,
                         "peak_reserved_gb": [8.8, 33.2, 83.6], "num_alloc_retries": [0, 0, 4]})  # fmt: skip
    head = "The GPU has 85.0 GB (79.2 GiB of 2³⁰ bytes). At N = 200 peak reserved memory reached ≥ 90% of it"
    assert display.device_memory_note(rows) == head + (
        "; the allocator freed its cache and retried an allocation 4 times at N=200 (the last run at each N): it "
        "could not reserve more, so fragmentation there is capped by device memory."
    )
    no_retry = display.device_memory_note(rows.assign(num_alloc_retries=0))
    assert no_retry.startswith(head + "; the allocator retried no allocation there") and "reserve more" not in no_retry
    assert display.device_memory_note(rows.drop(columns="num_alloc_retries")) == head + "."  # an older table
    assert display.device_memory_note(rows.assign(peak_reserved_gb=1.0)).endswith(
        "GiB of 2³⁰ bytes). No N came near it: the fragmentation below is the allocator's own."
    )
    named = display.device_memory_note(rows.assign(gpu="NVIDIA H100 80GB HBM3"))  # 80 lies nearer 79.2 GiB than 85 GB
    assert named.startswith("The GPU has 85.0 GB (79.2 GiB of 2³⁰ bytes; the “80GB” of its name is nearer the GiB "
                            "figure). At N = 200")  # fmt: skip
    assert "nearer the GB figure" in display.device_memory_note(rows.assign(gpu="Some GPU 84GB"))  # 84: nearer 85 GB
    assert "of its name" not in display.device_memory_note(rows.assign(gpu="NVIDIA H200"))  # no size in the name
    assert "| allocator retries (last run) |" in display.memory_table(rows.assign(peak_allocated_gb=1.0, frag_gb=0.5,
                                                                                   frag_pct=50.0))  # fmt: skip
    assert "retries" not in display.memory_table(rows.drop(columns="num_alloc_retries").assign(
        peak_allocated_gb=1.0, frag_gb=0.5, frag_pct=50.0))  # fmt: skip


def test_where_measured_on_the_cpu_says_it_measures_nothing():
    assert "smoke run" in display.where_measured("cpu")


def test_where_measured_in_a_slice_says_its_copy_bandwidth_counts_bytes_read_and_written(monkeypatch, capsys):
    """`gpu_slice.copy_bandwidth` counts a copy's bytes twice (read, then written): every sentence
    that prints it says so, the notebook's sentence and `use_slice`'s line alike."""
    from types import SimpleNamespace

    import torch

    from tokgen import gpu_slice

    s = SimpleNamespace(sms=16, copy_gbs=1134.4)
    monkeypatch.setattr(display.GpuSlice, "active", s)
    gpu = SimpleNamespace(name="GPU X", multi_processor_count=132)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: gpu)
    assert display.where_measured("cuda") == (
        "Measured in a green-context slice of the GPU X: 16 of its 132 SMs (`GPU_SMS`), whose copy bandwidth "
        "measured 1,134 GB/s (bytes read + written). Every number below is the slice's."
    )
    monkeypatch.setattr(gpu_slice, "GpuSlice", lambda sms: SimpleNamespace(__enter__=lambda: s))
    assert gpu_slice.use_slice(16) is s
    assert capsys.readouterr().out == (
        "running in a green-context slice of 16 SMs: copy bandwidth 1,134 GB/s (bytes read + written)\n"
    )


def test_slice_sizes_above_the_gpus_sm_count_are_said_and_skipped(monkeypatch, capsys):
    """Notebook 13's default SLICE_SMS holds 66, more than an L4's 58 SMs: that size is skipped with a
    line naming the parameter, and the sizes that fit keep their order (a GpuSlice(66) would raise)."""
    from types import SimpleNamespace

    import torch

    from tokgen import gpu_slice

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(multi_processor_count=58))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "NVIDIA L4")
    assert gpu_slice.sizes_that_fit([8, 16, 24, 32, 48, 58, 66]) == [8, 16, 24, 32, 48, 58]
    assert capsys.readouterr().out == "SLICE_SMS: 66 exceed(s) the 58 SMs of NVIDIA L4: skipped\n"
    assert gpu_slice.sizes_that_fit([16, 8]) == [16, 8]
    assert capsys.readouterr().out == ""


def test_the_sweep_takeaway_reconciles_a_flat_step_with_a_high_gpu_share():
    sync = pd.DataFrame(
        {
            "generator": "kv_static",
            "batch_size": [1, 16, 256],
            "ms_per_step": [7.45, 6.24, 6.93],
            "q25_ms": [595.0, 600.0, 680.0],  # per generation of 100 steps: B=1's IQR covers the others
            "q75_ms": [833.0, 650.0, 710.0],
            "gpu_busy_ms": [93.0, 136.0, 420.0],
            "steps": 100,
            "gpu_busy_share": [0.12, 0.22, 0.61],
        }
    )
    g = pd.DataFrame({"batch_size": [1, 16, 256], "outcome": ["undecided", "undecided", "faster"]})
    text = display.sweep_takeaway(g, sync)
    assert text.startswith("Pipelining: faster (real) at B = 256; undecided at B = 1, 16.")
    # rvD12 N1: no nested parentheses
    assert "busy 12% of a step at B = 1 (host-bound) and 61% at B = 256 (mixed), by the bound table" in text
    assert "7.45 (5.95–8.33) ms at B = 1" in text and "no order beyond the rounds' noise" in text
    assert "from 0.93 to 4.20 ms" in text and "×" not in text  # no ratio between two comparisons' medians
    assert "sets the pace" not in text and "grows with" not in text  # no cause the sweep does not measure
    apart = display.sweep_takeaway(g, sync.assign(q25_ms=[740.0, 600.0, 680.0], q75_ms=[750.0, 630.0, 700.0]))
    assert "shortest at B = 16, longest at B = 1, their IQRs apart" in apart and "no steady growth" not in apart
    lost = display.sweep_takeaway(g, sync.assign(gpu_busy_ms=[93.0, 136.0, float("nan")],
                                                 gpu_busy_share=[0.12, 0.22, float("nan")]))  # fmt: skip
    assert lost.endswith("no order beyond the rounds' noise).") and "nan" not in lost and "busy" not in lost


def test_the_sweep_takeaway_files_a_real_gain_shown_within_the_band_as_tied():
    """Review rr23b S1: a batch size whose gain is real but shown within ±5% (slice/sm8's compiled B = 1, marked
    no_effect) read "faster (real)", where claim 8 and `findings_text` read it as a tie."""
    sync = pd.DataFrame({"generator": "kv_static", "batch_size": [1, 16, 64], "ms_per_step": [7.0, 8.0, 9.0],
                         "q25_ms": [690.0, 790.0, 890.0], "q75_ms": [710.0, 810.0, 910.0], "steps": 100,
                         "gpu_busy_ms": [600.0, 700.0, 800.0], "gpu_busy_share": [0.86, 0.88, 0.89]})  # fmt: skip
    g = pd.DataFrame({"batch_size": [1, 16, 64, 128], "outcome": ["faster", "faster", "faster", "slower"],
                      "no_effect": [True, False, False, True]})  # fmt: skip
    text = display.sweep_takeaway(g, sync)
    assert text.startswith("Pipelining: faster (real) at B = 16, 64; real, but within ±5% (tied) at B = 1, 128. ")
    none_ = display.sweep_takeaway(g.assign(no_effect=False), sync)
    assert none_.startswith("Pipelining: faster (real) at B = 1, 16, 64; slower (real) at B = 128. ")
    only = display.sweep_takeaway(g.iloc[[0]].assign(no_effect=[float("nan")]), sync)  # NaN: not shown within
    assert only.startswith("Pipelining: faster (real) at B = 1. ")


def with_shared(profile: pd.DataFrame) -> pd.DataFrame:
    """Notebook 06's table with the time from the work both steps share (`tokgen.gaps.shared_gaps`) equal to each
    row's idle gap: the synchronous step 352 GPU operations, read from its 5th last; the no-check one 348, from
    its last."""
    def extra(variant: str, gap: float) -> dict:
        if variant.endswith("kv_static_no_check"):
            return {"kernels_per_step": 348.0, "from_op_1_median_us": gap}
        if variant.endswith("kv_static"):
            return {"kernels_per_step": 352.0, "from_op_5_median_us": gap}
        return {"kernels_per_step": 352.0}

    extras = [extra(v, g) for v, g in zip(profile["variant"], profile["idle_gap_median_us"])]
    return pd.concat([profile.reset_index(drop=True), pd.DataFrame(extras)], axis=1)


SHARED = ("from the end of the work the synchronous step shares with the one without a check (the token's append; "
          "the stop check's GPU operations come after it)")
# these tables record no host-speed ratio: the verdicts say they read the raw share (review rr18b M1)
# the raw share said as what it is (review rr18d N2): the takeaway's cause names its time just before, the summary not
RAW = "judged on the time with no stop check over the one with the sync (no host-speed ratio recorded)"
RAW_SUMMARY = RAW.replace("the time", "the time from the shared work")
BY_RULE = ", judged on the idle gap pipelined over the one with the sync (no host-speed ratio recorded)"  # claim 7's
SHORT = ("from the end of the token's append (the last work both steps share; the check's GPU operations follow "
         "it)")  # fmt: skip  (the takeaway's SHARED: reviews rr18d S1, rr19b N1)

def takeaway_text(gap) -> str:
    """Notebook 06's two takeaway bullets on one model (`gap_takeaway`: the cause, then pipelining), joined."""
    return " ".join(gap_takeaway(gap))


NO_RATIO = "no host-speed ratio recorded, so the shares are not corrected for host drift"  # rr17c S3, rr18d
NO_RATIO_ONE = "no host-speed ratio recorded, so the share is not corrected for host drift"


def test_idle_gaps_say_when_pipelining_makes_the_gap_larger():
    profile = pd.DataFrame(
        {
            "variant": ["kv_static", "pipelined_static", "compiled kv_static", "compiled pipelined_static"],
            "idle_gap_median_us": [90.0, 226.0, 425.0, 100.0],
            "gpu_idle_fraction": [0.78, 0.84, 0.80, 0.81],
        }
    )
    gaps = idle_gaps(profile)
    assert list(gaps["closes"]) == [False, True]
    eager06 = takeaway_text(gaps.iloc[0])
    assert gap_takeaway(gaps.iloc[0]) == [
        "Eager, the cause (claim 6): the gap before a step is 90.0 µs with the sync: the generator without any stop "
        "check was not profiled here, so how much of the time before a step the stop check (its launches and "
        "`.item()`) opens is not measured.",
        "Eager, pipelining (claim 7): the GPU idles 78% of the window with the sync, 84% pipelined (medians, not "
        "judged); the gap before a "
        f"step is 90.0 µs with the sync, 226.0 µs pipelined: pipelining does not close half of the gap before a "
        f"step{BY_RULE}: the "
        "gap pipelined is larger than with the sync in the one window by 20 µs or more, but one window cannot show a "
        "direction; pipelined / sync 2.511 (the rule: at most 0.5; no within-window interval "
        "recorded)."]  # fmt: skip  (review rr18d S1, N2)
    assert "the sync open" not in eager06.replace("the stop check (its launches and `.item()`) opens is not measured",
                                                  "")
    summary = gap_summary(gaps)
    assert ("how much of the time before a step the stop check (its launches and `.item()`) opens is not "
            "measured") in summary
    results = pd.DataFrame({"variant": ["kv_static", "compiled kv_static"], "gpu_busy_share": [0.25, 0.6],
                            "batch_size": [32, 32]})  # fmt: skip
    paragraphs = pipelined_gap(profile.assign(**this_run(), batch_size=16), results)
    assert len(paragraphs) == 2  # one a model (review rr19b S2)
    text = " ".join(paragraphs)
    assert "the gap pipelined is larger than with the sync in the one window" in text and "host sets the pace" in text
    assert "pipelining closes at least half of the gap before a step" in text
    # 07 says the pipelining bullet in 06's words, not the cause's (review rr19b S2)
    assert paragraphs[0].startswith("Notebook 06 (B = 16, profiled). " + gap_takeaway(gaps.iloc[0])[1])
    assert "claim 6" not in text
    assert ("In this run (B = 32; GPU busy time from one profiled run, wall time the median of the unprofiled "
            "rounds) the GPU is busy 25% of a synchronous step") in text  # fmt: skip
    assert "run notebook 06 here first" in pipelined_gap(profile.assign(**this_run(gpu_sms="16")), results)[0]
    # another run's profile (here the reference run's at commit 9d6c84b) is not set beside this run's share
    old = pipelined_gap(profile.assign(**this_run(commit="9d6c84b80aa0088b"), run_started="2026-11-23T19:27:00"),
                        results)  # fmt: skip
    assert len(old) == 1 and old[0].startswith("Notebook 06's profile in this results folder holds commit "
                                               "9d6c84b80aa0's (")
    assert "started 2026-11-23 19:27 UTC), not this run's (commit " in old[0] and "host sets the pace" not in old[0]
    assert "run notebook 06 here first" in pipelined_gap(profile, results)[0]  # no commit column: another run's



def test_idle_gap_sentences_call_two_gaps_within_the_launch_spacing_about_the_same():
    profile = pd.DataFrame(
        {
            "variant": ["kv_static", "pipelined_static", "compiled kv_static", "compiled pipelined_static"],
            "idle_gap_median_us": [2.02, 2.04, 100.0, 70.0],  # eager: within MIN_GAP_US; compiled: 30 µs less
            "gpu_idle_fraction": [0.05, 0.05, 0.5, 0.5],
            **this_run(),
        }
    )
    gaps = idle_gaps(profile)
    assert list(gaps["change"]) == ["same", "smaller"] and not gaps["closes"].any()
    eager, compiled = (takeaway_text(g) for _, g in gaps.iterrows())
    assert ("2.0 µs with the sync, 2.0 µs pipelined: pipelining does not close half of the gap before a step"
            f"{BY_RULE}: the gap is about the same pipelined as with the sync, within 20 µs;") in eager  # fmt: skip
    assert "larger" not in eager and "100.0 µs with the sync, 70.0 µs pipelined" in compiled
    assert (f"pipelining does not close half of the gap before a step{BY_RULE}: the gap pipelined is smaller than "
            "with the sync in the one window by 20 µs or more, but one window cannot show a direction;"
            ) in compiled  # fmt: skip
    results = pd.DataFrame({"variant": ["kv_static", "compiled kv_static"], "gpu_busy_share": [0.25, 0.6]})
    text = " ".join(pipelined_gap(profile, results))
    piped = [gap_takeaway(g)[1] for _, g in gaps.iterrows()]  # the pipelining bullets only (review rr19b S2)
    assert piped[0] in text and piped[1] in text  # in 06's words, each followed by this run's GPU share
    assert "busy 25% of a synchronous step, so the host sets the pace" in text
    assert "busy 60% of a synchronous step." in text


def test_stop_token_stops_at_the_first_new_token_from_the_step_on():
    row = [9, 1, 2, 2, 9, 3, 1]  # the prompt (9) is never checked against the EOS
    assert display.stop_token(row, 4) == (9, 4)
    assert display.stop_token(row, 5) == (3, 5)
    assert display.stop_token(row, 2) == (2, 2)
    assert display.stop_token(row, 10) == (3, 5)  # none that late: the last new one
    assert display.stop_token([5, 5, 5], 2) == (5, 1)
    with pytest.raises(ValueError, match="no generated token"):
        display.stop_token([5], 1)


def audit_row(generator, reads, warnings, stream, event, device=1, tokens=32):
    return {"generator": generator, "tokens": tokens, "local_scalar_dense": reads, "sync_debug_warnings": warnings,
            "stream_syncs": stream, "event_syncs": event, "device_syncs": device}  # fmt: skip


def test_sync_reading_explains_every_row_where_the_counts_differ():
    audit = pd.DataFrame(
        [
            audit_row("kv_static", 32, 32, 32, 0),
            audit_row("pipelined_static", 0, 2, 2, 31),
            audit_row("pipelined_dynamic", 0, 2, 2, 31),
            audit_row("naive", 64, 65, 64, 0),
        ]
    )
    lines = display.sync_reading(audit)
    assert "1 device-wide sync per run" in lines[0] and "the counting's own" in lines[0]
    assert not any("`kv_static`" in line for line in lines)  # its counts agree
    pipelined = next(line for line in lines if "`pipelined_static`, `pipelined_dynamic`" in line)
    assert "2 of the 2 flagged syncs read no value" in pipelined and "31 event waits" in pipelined
    naive = next(line for line in lines if "`naive`" in line)
    assert "64 stream waits where the debug mode flagged 65" in naive


def test_product_findings_and_dot_plots():
    """Rounds whose every ratio is known: 256 rows take twice 32 rows' time in every round (×0.50),
    a split at 32 rows half (×2.00), at 256 rows twice (×0.50); without rounds, no comparison."""
    rows = []
    for product, mb in (("attention qkv", 7.0), ("mlp up", 9.0), ("LM head", 150.0)):
        for r, splits, us in ((32, 1, mb), (256, 1, 2 * mb), (32, 4, mb / 2), (256, 4, 4 * mb)):
            rounds = [us * f for f in (1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 0.8, 1.02, 0.98, 1.0)]  # the same in each shape
            rows.append({"product": product, "rows": r, "splits": splits, "weight_mb": mb, "floor_us": mb / 3,
                         "median_us": us, "q25_us": us * 0.9, "q75_us": us * 1.1, "status": "ok",
                         "times_us": ";".join(map(str, rounds))})  # fmt: skip
    products = pd.DataFrame(rows)
    lines = display.product_findings(products, 32, layers=2)
    assert "add up to **182 µs**" in lines[0]  # 2 × (7 + 9) + 150
    assert lines[2].startswith("With 256 rows (8× the arithmetic and the activations, the same weight bytes), against "
                              "32 rows, paired")
    assert "attention qkv ×0.50 (IQR ×0.50–×0.50 of 10 rounds; p " in lines[2] and "slower" in lines[2]
    assert lines[3].startswith("At 32 rows, the sum cut into 4 batched products") and "LM head ×2.00 (" in lines[3]
    assert "faster" in lines[3]
    assert lines[4].startswith("At 256 rows,") and "mlp up ×0.50 (" in lines[4]  # against 256 rows undivided
    unpaired = display.product_findings(products.drop(columns="times_us"), 32, layers=2)
    assert unpaired[2].endswith("against 32 rows: not compared (this run recorded no rounds to pair).")
    assert len(unpaired) == 5 and not any("paired" in line for line in unpaired[2:])
    assert display.product_findings(products, 64, layers=2)[0].startswith("*No product")
    ax = display.plot_dots(products[products["splits"] == 1], "product", "median_us", group="rows", low="q25_us",
                           high="q75_us", log=True)  # fmt: skip
    assert [t.get_text() for t in ax.get_yticklabels()] == ["attention qkv", "mlp up", "LM head"]


def test_product_findings_quotes_each_products_share_of_copy_bandwidth():
    """4× the bytes in the same time is 4× the share of copy bandwidth (40% against 10%); the two
    are timed in rounds of their own, so no direction between them is stated, whatever the shares."""
    def second_line(big_us):
        rows = [{"product": p, "rows": 32, "splits": 1, "weight_mb": mb, "floor_us": mb, "median_us": us,
                 "status": "ok"}  # fmt: skip
                for p, mb, us in (("attention out", 1.0, 10.0), ("mlp up", 4.0, big_us), ("LM head", 50.0, 100.0))]
        return display.product_findings(pd.DataFrame(rows), 32, layers=2)[1]

    same_time = second_line(10.0)
    assert same_time.startswith("The mlp up product reads 4× the bytes of the attention out product;")
    assert "runs at **40.0%** of copy bandwidth, the attention out product at **10.0%**" in same_time
    assert same_time.endswith("(each its median against its own bytes' floor, in rounds of their own: two separate "
                              "measurements, not compared here).")  # fmt: skip
    assert "µs" not in same_time  # no median quoted beside another as if they were paired
    assert "**10.0%** of copy bandwidth" in second_line(40.0) and "**5.0%**" in second_line(80.0)
    for big_us in (10.0, 40.0, 80.0):  # more, the same, less of the bandwidth: never a direction from two medians
        said = second_line(big_us)
        assert not any(word in said for word in ("uses more", "uses less", "same share", "grew"))


def test_one_layer_cuts_a_replay_at_its_attention_kernels():
    from tokgen.profiling import Timeline

    def ev(cat, name, ts, dur):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": {"stream": 7}}

    events, t = [], 0
    for _ in range(3):  # three replays of two steps of three layers
        for _step in range(2):
            events.append(ev("kernel", "_embed_kernel", t, 1))
            t += 2
            for _layer in range(3):
                for name in ("_norm_linear_kernel", "_attend_filled_kernel", "_linear_residual_kernel"):
                    events.append(ev("kernel", f"{name}", t, 3))
                    t += 4
        events.append(ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", t, 1))
        t += 2
    layer = display.one_layer(Timeline({"traceEvents": events}), 1)
    assert layer["name"].tolist() == ["_norm_linear_kernel", "_attend_filled_kernel", "_linear_residual_kernel"]
    with pytest.raises(ValueError, match="no layer 5 to show"):
        display.one_layer(Timeline({"traceEvents": events}), 5)


def test_sync_reading_with_no_device_sync_says_no_generator_calls_one():
    audit = pd.DataFrame([audit_row("kv_static", 32, 32, 32, 0, device=0), audit_row("naive", 64, 64, 64, 0, device=0)])
    line = display.sync_reading(audit)[0]
    assert line.startswith("No row shows a device-wide sync: no audited generator calls `torch.cuda.synchronize()`")


def overhead_profile(windows=3):
    """Two variants over `windows` windows, in the order they ran (window by window): the profiler's
    profiled step against its bracketing plain runs (%) and those runs' median, fastest and slowest step (µs)."""
    rows = {  # variant: [(overhead %, median, fastest, slowest) per window]
        "kv_static": [(58.0, 4863.0, 4800.0, 5100.0), (7.0, 4700.0, 4500.0, 4750.0), (20.0, 4800.0, 4790.0, 4810.0)],
        "kv_static_no_check": [(6.6, 4000.0, 3500.0, 4500.0), (-3.0, 4100.0, 4000.0, 4200.0),
                               (12.0, 4050.0, 4040.0, 4060.0)],
    }  # fmt: skip
    return pd.DataFrame(
        [{"variant": v, "window": w, "profiled_vs_plain_pct": o, "unprofiled_step_us": m, "unprofiled_min_us": lo,
          "unprofiled_max_us": hi, "unprofiled_runs": 6} for w in range(windows) for v, ws in rows.items()
         for o, m, lo, hi in [ws[w]]]  # fmt: skip
    )


def test_profiler_overhead_says_its_range_over_the_windows_beside_the_plain_runs_spread():
    """kv_static's overhead runs from +7% (window 1) to +58% (window 0); its plain runs spread at most
    (5,100 - 4,800) / 4,863 = 6% (window 0; 5% and 0.4% in the others). The no-check's: -3% to +12%,
    and (4,500 - 3,500) / 4,000 = 25% (29% if divided by the fastest, 50% by the spread's own)."""
    assert profiler_overhead(overhead_profile()) == (
        "Profiled / bracketing plain runs − 1 per step: the profiled step (the GPU span of the window's steps over "
        "their number) against the median step of the 6 plain runs timed just before and just after its profiled "
        "passes (a whole run's wall time over its tokens − 1, prefill and setup included: not the same quantity, so "
        "this is no measure of the profiler's cost), lowest to highest over 3 windows (the plain runs' "
        "spread: slowest less fastest, as a share of their median): `kv_static` +7% to +58%, its plain runs spread up "
        "to 6%; `kv_static_no_check` −3% to +12%, its plain runs spread up to 25%. The idle gaps above were measured "
        "with the profiler running."
    )
    assert "overhead" not in profiler_overhead(overhead_profile())  # a name for a cause the table does not measure
    one = profiler_overhead(overhead_profile(windows=1))
    assert "over 1 window (" in one and "`kv_static` +58%, its plain runs spread up to 6%;" in one


def test_profile_table_shows_each_windows_plain_runs_median_fastest_and_slowest():
    summary = overhead_profile().assign(idle_gap_median_us=110.0, gpu_busy_per_step_us=900.0, step_period_us=6000.0,
                                        gpu_idle_fraction=0.8, kernels_per_step=150.0, streams=1)  # fmt: skip
    lines = profile_table(summary).splitlines()
    assert ("step, µs (unprofiled: median (fastest–slowest) of the plain runs bracketing the profiled passes) | "
            "profiled step (GPU span of the window's steps / their number) / bracketing plain runs' step (a whole "
            "run's wall time / (tokens − 1), prefill and setup included) − 1, % |") in lines[0] and len(lines) == 2 + 6
    assert lines[2] == "| kv_static | 0 | 110 | 900 | 6,000 | 4,863 (4,800–5,100) | 58 | 0.80 | 150 | 1 |"
    assert "| GPU operations per step (kernels, copies, memsets) | streams |" in lines[0]  # not "kernels": 303 + 49
    assert lines[3].startswith("| kv_static_no_check | 0 | 110 | 900 | 6,000 | 4,000 (3,500–4,500) | 7 |")


def test_table_headers_read_as_words_with_units_and_readable_names_stay():
    df = pd.DataFrame({"variant": ["a"], "median_ms": [1.0], "pct_of_copy_bandwidth": [50.0], "own_us_per_token": [2.0],
                       "times_task_floor": [2.5], "bandwidth_gb_s": [900.0], "first call, ms": [3.0]})  # fmt: skip
    header = display.table(df).splitlines()[0]
    expected = "variant | median, ms | % of copy bandwidth | own µs per token | × task floor | bandwidth, GB/s"
    assert header == f"| {expected} | first call, ms |"
    syncs = pd.DataFrame({"local_scalar_dense": [1], "local_scalar_dense_per_token": [1.0], "stream_syncs": [2]})
    assert display.table(syncs).splitlines()[0] == "| `.item()` reads | `.item()` reads per token | stream syncs |"


def test_regime_map_panels_sharing_an_axis_keep_every_point_in_range():
    import matplotlib.pyplot as plt

    rows = pd.DataFrame(
        {"where": ["whole GPU"] * 2, "compiled": [False, False], "gpu_share": [0.3, 0.9], "batch_size": [32, 256],
         "speedup": [0.86, 1.0], "speedup_q25": [0.66, 0.98], "speedup_q75": [0.97, 1.02],
         "hidden_by": ["pipelined_static", "kv_static_no_check"]}
    )  # fmt: skip
    fig, axes = plt.subplots(1, 2, sharey=True)
    for ax, hidden_by in zip(axes, ("pipelined_static", "kv_static_no_check")):
        display.plot_regime_map(ax, rows[rows["hidden_by"] == hidden_by], hidden_by, shared=rows)
    bottom, top = axes[0].get_ylim()
    assert bottom <= 0.66 and top >= 1.02  # the right panel, drawn last, no longer cuts off the left one's point
    plt.close(fig)


def test_a_sweep_whose_step_is_longest_in_the_middle_is_not_said_to_grow():
    base = [100.0 + i for i in range(8)]
    g = tokgen.gains(rows({"a": base, "b": base}), "a").iloc[[0, 0, 0]].assign(batch_size=[1, 16, 256])
    sync = pd.DataFrame(
        {
            "generator": "kv_static",
            "batch_size": [1, 16, 256],
            "steps": 100,
            "ms_per_step": [6.0, 9.7, 8.9],  # longest at B = 16, as notebook 08's eager sweep on the whole GPU
            "q25_ms": [590.0, 960.0, 880.0],
            "q75_ms": [610.0, 980.0, 900.0],
            "gpu_busy_ms": [100.0, 150.0, 600.0],
            "gpu_busy_share": [0.17, 0.15, 0.67],
        }
    )
    text = display.sweep_takeaway(g, sync)  # B = 16's IQR (9.6-9.8 ms per step) above both ends' (5.9-6.1, 8.8-9.0)
    assert "the step is longest at B = 16, not at an end (its IQR above both ends'): no steady growth." in text
    steady = sync.assign(ms_per_step=[6.0, 7.5, 8.9], q25_ms=[590.0, 740.0, 880.0], q75_ms=[610.0, 760.0, 900.0])
    assert "no steady growth" not in display.sweep_takeaway(g, steady)


def test_a_longest_step_in_the_middle_within_an_ends_iqr_is_left_undecided():
    """Notebook 08's eager sweep on the old run: B = 16 at 9.73 (9.09-10.83) ms per step, B = 256 at
    8.94 (8.43-10.47): the IQRs overlap, so no order of the two and no 'no steady growth'."""
    base = [100.0 + i for i in range(8)]
    g = tokgen.gains(rows({"a": base, "b": base}), "a").iloc[[0, 0, 0]].assign(batch_size=[1, 16, 256])
    sync = pd.DataFrame(
        {"generator": "kv_static", "batch_size": [1, 16, 256], "steps": 100, "ms_per_step": [5.83, 9.73, 8.94],
         "q25_ms": [518.0, 909.0, 843.0], "q75_ms": [683.0, 1083.0, 1047.0], "gpu_busy_ms": [100.0, 150.0, 600.0],
         "gpu_busy_share": [0.17, 0.15, 0.67]}
    )  # fmt: skip
    text = display.sweep_takeaway(g, sync)
    assert "no steady growth" not in text
    assert text.endswith("; the longest median is at B = 16, its IQR overlapping that of B = 256: whether the step "
                         "grows steadily, the rounds cannot tell.")  # fmt: skip
    touching = sync.assign(q25_ms=[518.0, 1047.0, 843.0])  # B = 16's lower quartile equal to B = 256's upper one
    assert "its IQR overlapping that of B = 256:" in display.sweep_takeaway(g, touching)
    # review pvA14 M2: B = 16's median (9.78 ms a step) lies above B = 256's IQR (8.53-9.57), the IQRs overlap
    outside = sync.assign(ms_per_step=[5.83, 9.78, 8.94], q25_ms=[518.0, 909.0, 853.0], q75_ms=[683.0, 1083.0, 957.0])
    said = display.sweep_takeaway(g, outside)
    assert "its IQR overlapping that of B = 256:" in said and "within the IQR" not in said
    both = sync.assign(ms_per_step=[9.0, 9.73, 8.94], q25_ms=[850.0, 909.0, 843.0], q75_ms=[950.0, 1083.0, 1047.0])
    assert "whether" not in display.sweep_takeaway(g, both)  # shortest and longest within each other's IQR: said there
    left = sync.assign(ms_per_step=[8.94, 9.73, 5.83], q25_ms=[843.0, 909.0, 518.0], q75_ms=[1047.0, 1083.0, 683.0])
    assert "its IQR overlapping that of B = 1:" in display.sweep_takeaway(g, left)


def three_passes(**extra) -> pd.DataFrame:
    """A profile of the three passes, eager and compiled: eager's gap stays without any check, compiled's goes."""
    return pd.DataFrame(
        {
            "variant": ["kv_static", "kv_static_no_check", "pipelined_static",
                        "compiled kv_static", "compiled kv_static_no_check", "compiled pipelined_static"],
            "idle_gap_median_us": [250.0, 200.0, 450.0, 1000.0, 499.0, 660.0],
            "gpu_idle_fraction": [0.9, 0.9, 0.91, 0.88, 0.8, 0.82],
            **extra,
        }
    )  # fmt: skip


def test_idle_gaps_read_the_syncs_share_from_the_generator_without_any_check():
    """With the no-check generator profiled, the cause is read from it, not from pipelining: eager's gap
    stays without any check (not the sync), compiled's goes (the sync), whatever pipelining does."""
    profile = three_passes()
    gaps = idle_gaps(with_shared(profile))
    assert list(gaps["sync_causes"]) == [False, True] and list(gaps["closes"]) == [False, False]
    eager, compiled = (takeaway_text(g) for _, g in gaps.iterrows())
    assert gap_takeaway(gaps.iloc[0]) == [  # two bullets: the cause, then pipelining (review rr18d S1)
        f"Eager, the cause (claim 6): the gap before a step is 250.0 µs with the sync, 200.0 µs with no stop check; "
        f"{SHORT}, 250.0 µs with the sync and 200.0 µs with no stop check: {RAW}, more than half of that time remains "
        "without any stop check: the stop check (its launches and `.item()`) does not open most of it (the time "
        "without any stop check is smaller than with the sync in the one window by 20 µs or more, but one window "
        "cannot show a direction); the time from the shared work with the sync less that with no stop check: +50 µs "
        "per step in window 0; no-check / sync 0.800 (the rule: at least 20 µs with the sync and at most 0.5; no "
        "within-window interval recorded).",
        "Eager, pipelining (claim 7): the GPU idles 90% of the window with the sync, 91% pipelined (medians, not "
        "judged); the gap before a "
        f"step is 250.0 µs with the sync, 450.0 µs pipelined: pipelining does not close half of the gap before "
        f"a step{BY_RULE}: the "
        "gap pipelined is larger than with the sync in the one window by 20 µs or more, but one window cannot show a "
        "direction; pipelined / sync 1.800 (the rule: at most 0.5)."]  # fmt: skip  (no ratio said once: rr18d N2)
    assert (f"499.0 µs with no stop check: {RAW}, at most half of that time remains without any stop check: "
            "the stop check (its launches and `.item()`) opens most of it; the time from the shared work with the "
            "sync less that with no stop check: +501 µs per step in window 0; no-check / sync 0.499 (the rule: at "
            "least 20 µs with the sync and at most 0.5; no within-window interval recorded). Compiled, pipelining "
            "(claim 7): the GPU idles 88% of the window with the sync, 82% pipelined (medians, not judged); the gap "
            "before a step is 1000.0 µs with the sync, 660.0 µs "
            "pipelined: pipelining does not close half of the gap "
            f"before a step{BY_RULE}: the gap pipelined is smaller") in compiled  # fmt: skip
    summary = gap_summary(gaps)
    assert (f"; compiled, {RAW_SUMMARY}, at most half of the time before a step, from the work the steps share, "
            "remains without any stop check: the stop check (its launches and `.item()`) opens") in summary  # fmt: skip
    assert (f"; eager, {RAW_SUMMARY}, more than half of the time before a step, from the work the steps share, "
            "remains without any stop check: the stop check (its launches and `.item()`) does not open"
            ) in summary  # fmt: skip
    # claim 6's own test (tokgen.gaps.sync_opens_gap): at most half, and at least 20 µs with the sync
    edge = idle_gaps(with_shared(profile.assign(idle_gap_median_us=[250.0, 125.0, 450.0, 19.9, 1.0, 660.0])))
    assert list(edge["sync_causes"]) == [True, False]
    above = idle_gaps(with_shared(profile.assign(idle_gap_median_us=[250.0, 125.1, 450.0, 1000.0, 500.0, 660.0])))
    assert list(above["sync_causes"]) == [False, True]
    # the cause reads the time from the shared work, not the gaps after each step's last operation
    shared = with_shared(profile).assign(from_op_5_median_us=[600.0, None, None, 600.0, None, None],
                                         from_op_1_median_us=[None, 300.0, None, None, 301.0, None])  # fmt: skip
    assert list(idle_gaps(shared)["sync_causes"]) == [True, False]
    old = gap_takeaway(idle_gaps(profile).iloc[0])[0]  # a table from before those columns: no cause said
    assert old.endswith("no time from the work the steps share is recorded for this pair (a table recorded before "
                        "it, or a synchronous step whose extra GPU operations are no whole count from 1 to 7), so how "
                        "much of the time before a step the stop check "
                        "(its launches and `.item()`) opens is not measured.")
    # the direction clause reads the same times as the test: here the no-check gap is larger after each step's last
    # operation (300 against 200 µs) but smaller from the shared work (100 against 300 µs)
    basis = with_shared(profile.assign(idle_gap_median_us=[200.0, 300.0, 450.0, 1000.0, 499.0, 660.0]))
    basis = basis.assign(from_op_5_median_us=[300.0, None, None, 1000.0, None, None],
                         from_op_1_median_us=[None, 100.0, None, None, 499.0, None])  # fmt: skip
    g = idle_gaps(basis).iloc[0]
    assert g["sync_causes"] is True or g["sync_causes"] == True  # noqa: E712  100 <= 150
    assert idle_gaps(basis.assign(from_op_1_median_us=[None, 200.0, None, None, 499.0, None])).iloc[0][
        "no_check_change"] == "smaller"  # 200 against 300: smaller by 100 µs, not "larger" as after the copy
    text = takeaway_text(idle_gaps(basis.assign(from_op_1_median_us=[None, 200.0, None, None, 499.0, None])).iloc[0])
    assert "(the time without any stop check is smaller than with the sync" in text  # no ratio: nothing corrected


def test_idle_gaps_over_several_windows_say_their_medians_and_when_the_windows_disagree():
    rows = []
    for w, (sync, none) in enumerate([(276.0, 124.0), (155.0, 137.0), (136.0, 118.0)]):
        for variant, gap in (("kv_static", sync), ("kv_static_no_check", none), ("pipelined_static", 200.0)):
            rows.append({"variant": variant, "idle_gap_median_us": gap, "gpu_idle_fraction": 0.9, "window": w})
    gaps = idle_gaps(with_shared(pd.DataFrame(rows)))
    g = gaps.iloc[0]
    assert (g["sync_us"], g["no_check_us"], g["sync_causes"], g["windows"], g["windows_opening"]) == (
        155.0, 124.0, "split", 3, 1)  # fmt: skip
    text = takeaway_text(g)
    assert ("155.0 µs with the sync, 124.0 µs with no stop check (medians over the 3 "
            f"profiled windows); {SHORT}, 155.0 µs with the sync and 124.0 µs with no stop check: the 3 profiled "
            f"windows disagree: {RAW}, at most half of that time remains without any stop check in 1 of them, "
            "so whether the stop check (its launches and `.item()`) opens most of it is not decided") in text
    assert (f"eager, {RAW_SUMMARY}, the profiled windows disagree on whether the stop check (its launches and "
            "`.item()`) opens") in gap_summary(gaps)


def test_pipelining_closes_the_gap_only_where_every_window_says_so():
    """The 16-SM slice's compiled gap: 405→261, 453→194, 417→193 µs; the medians (417→194) halve it,
    window 0 does not: "split", not "closes"."""
    rows = []
    for w, (sync, piped) in enumerate([(405.0, 261.0), (453.0, 194.0), (417.0, 193.0)]):
        for variant, gap in (("kv_static", sync), ("kv_static_no_check", 5.0), ("pipelined_static", piped)):
            rows.append({"variant": variant, "idle_gap_median_us": gap, "gpu_idle_fraction": 0.3, "window": w})
    g = idle_gaps(with_shared(pd.DataFrame(rows))).iloc[0]
    assert (g["closes"], g["windows_closing"], g["windows_pipelined"]) == ("split", 2, 3)
    assert takeaway_text(g).endswith(f"pipelining closes at least half of the gap before a step in 2 of 3 windows, not "
                                    f"in the others{BY_RULE}: not decided; pipelined / sync per window 0.644, 0.428, "
                                    "0.463 (the rule: at most 0.5 in every window; nearest to it: window 2 of windows "
                                    "0–2, 0.463, 0.037 below it).")  # fmt: skip
    rows[2]["idle_gap_median_us"] = 202.5  # at half exactly: closed (claim 7's "at most half")
    g = idle_gaps(with_shared(pd.DataFrame(rows))).iloc[0]
    assert str(g["closes"]) == "True" and (f"pipelining closes at least half of the gap before a step{BY_RULE}; "
                                           "pipelined / sync per window 0.500, 0.428, 0.463") in takeaway_text(g)


def test_whether_pipelining_makes_the_gap_larger_is_decided_per_window_as_closes_is():
    """Medians 100 → 130 µs say "larger"; the windows say 150, 90 and 130 against 100: larger in 2 of 3,
    about the same (within MIN_GAP_US, 20 µs) in 1."""
    def windows(pairs):
        return with_shared(pd.DataFrame([{"variant": v, "idle_gap_median_us": gap, "gpu_idle_fraction": 0.9,
                                          "window": w}
                                         for w, (sync, piped) in enumerate(pairs)
                                         for v, gap in (("kv_static", sync), ("kv_static_no_check", 90.0),
                                                        ("pipelined_static", piped))]))  # fmt: skip

    g = idle_gaps(windows([(100.0, 150.0), (100.0, 90.0), (100.0, 130.0)])).iloc[0]
    assert (g["pipelined_us"], g["closes"], g["change"]) == (130.0, False, "split")
    assert (f"pipelining does not close half of the gap before a step{BY_RULE}: the windows disagree on how the gap "
            "pipelined compares with the one with the sync, a difference below 20 µs counting as none; pipelined / "
            "sync per window 1.500, 0.900, 1.300") in takeaway_text(g)  # fmt: skip
    g = idle_gaps(windows([(100.0, 150.0), (100.0, 100.18), (100.0, 130.0)])).iloc[0]  # rv51's 202.29 → 202.47
    assert g["change"] == "split"
    g = idle_gaps(windows([(100.0, 150.0), (100.0, 120.0), (100.0, 130.0)])).iloc[0]
    assert g["change"] == "larger"  # larger in all 3 windows: no direction from 3 (chance: 1 time in 4)
    assert (f"pipelining does not close half of the gap before a step{BY_RULE}: the gap pipelined is larger than "
            "with the sync in all 3 windows by 20 µs or more, but 3 windows cannot show a direction: with no "
            "difference, all three agree by chance 1 time in 4; pipelined / sync") in takeaway_text(g)
    g = idle_gaps(windows([(100.0, 150.0), (100.0, 120.0), (100.0, 130.0)] * 2)).iloc[0]  # 6 windows: 1 in 32
    assert (f"pipelining does not close half of the gap before a step{BY_RULE}: the gap is larger pipelined than "
            "with the sync in all 6 windows, by 20 µs or more; pipelined / sync") in takeaway_text(g)  # fmt: skip
    g = idle_gaps(windows([(100.0, 60.0), (100.0, 80.0), (100.0, 70.0), (100.0, 55.0), (100.0, 79.0)])).iloc[0]
    assert g["change"] == "smaller"  # 5 windows: 1 time in 16, more than 0.05
    assert (": the gap pipelined is smaller than with the sync in all 5 windows by 20 µs or more, but 5 windows "
            "cannot show a direction: with no difference, all five agree by chance 1 time in 16; pipelined"
            ) in takeaway_text(g)  # fmt: skip
    g = idle_gaps(windows([(100.0, 119.0), (100.0, 81.0), (100.0, 100.0)])).iloc[0]
    assert g["change"] == "same"
    assert (": the gap is about the same pipelined as with the sync in every window, within 20 µs; pipelined"
            ) in takeaway_text(g)  # fmt: skip


def test_a_log_axis_over_less_than_a_decade_gets_finer_plain_ticks():
    """Speed-ups from 0.9 to 2.5 (notebook 09's figure): ticks inside that span beyond 1 and 2, as plain
    numbers; over three decades, 1-2-3-5 only."""
    df = pd.DataFrame({"v": ["a", "b", "c"], "x": [0.9, 1.3, 2.5]})
    ax = display.plot_dots(df, "v", "x", log=True)
    ax.figure.canvas.draw()
    shown = [t for t in ax.xaxis.get_majorticklocs() if 0.9 <= t <= 2.5]
    assert shown == pytest.approx([1, 1.2, 1.5, 2, 2.5])
    assert [ax.xaxis.get_major_formatter()(t, 0) for t in shown] == ["1", "1.2", "1.5", "2", "2.5"]
    wide = display.plot_dots(pd.DataFrame({"v": ["a", "b"], "x": [1.0, 1000.0]}), "v", "x", log=True)
    assert [t for t in wide.xaxis.get_majorticklocs() if 1 <= t <= 1000] == pytest.approx(
        [1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000])


# --- medians, ms per step and GPU shares over the rounds every variant of a comparison ran (notebook 07) ---


def compared(variants: dict[str, list[float]], seed: int, **extra) -> list[dict]:
    """Rows as `tokgen.compare` writes them: each summary over all of a variant's rounds, 10 steps."""
    from tokgen.stats import time_summary

    out = []
    for name, (t, busy) in variants.items():
        s = time_summary(t)
        out.append({"variant": name, "status": "ok", "runs": len(t), "steps": 10, **s,
                    "ms_per_step": s["median_ms"] / 10, "gpu_busy_ms": busy, "gpu_busy_share": busy / s["median_ms"],
                    "times_ms": ";".join(map(str, t)), "order_seed": seed, **extra})  # fmt: skip
    return out


def sequential_run() -> pd.DataFrame:
    """Two comparisons. Seed 7, sequential: `a` ran on to 18 rounds, its last 9 slow (the host drifted:
    200-208 ms against 100-108), `b` stopped at 9 (120-128), `e` ran out of memory after 3. Seed 8:
    `c` and `d` both ran 18 rounds, whatever seed 7's variants did."""
    a = [100.0 + i for i in range(9)] + [200.0 + i for i in range(9)]
    rows = compared({"a": (a, 94.64), "b": ([120.0 + i for i in range(9)], 60.0)}, seed=7)
    rows.append({**compared({"e": ([1.0, 2.0, 3.0], 1.0)}, seed=7)[0], "status": "oom"})
    rows += compared({"c": ([300.0 + i for i in range(18)], 200.0), "d": ([400.0 + i for i in range(18)], 200.0)},
                     seed=8)  # fmt: skip
    return pd.DataFrame(rows)


def test_shared_rounds_summarize_each_row_over_the_rounds_every_variant_of_its_comparison_ran():
    from tokgen.stats import shared_rounds

    run = sequential_run()
    s = shared_rounds(run).set_index("variant")
    a = s.loc["a"]  # over its first 9 rounds, 100-108: not its 18 (median 154)
    assert (a["median_ms"], a["q25_ms"], a["q75_ms"], a["min_ms"], a["max_ms"]) == (104.0, 102.0, 106.0, 100.0, 108.0)
    assert a["mean_ms"] == 104.0 and a["std_ms"] == pytest.approx(statistics.stdev(range(9)))
    assert a["ms_per_step"] == pytest.approx(10.4) and a["gpu_busy_share"] == pytest.approx(0.91)
    assert (a["runs"], a["shared_runs"]) == (18, 9)  # the runs it ran stay, beside the rounds its summary is over
    assert a["times_ms"] == run.at[0, "times_ms"]  # every round stays for the paired speed-ups
    assert tokgen.gain(s.reset_index(), "b", "a")["rounds"] == 9  # which pair the rounds both ran
    # b ran the fewest; the out-of-memory row neither sets the count nor is cut
    for name in ("b", "e"):
        assert s.loc[name, ["median_ms", "gpu_busy_share"]].tolist() == run.set_index("variant").loc[
            name, ["median_ms", "gpu_busy_share"]].tolist()  # fmt: skip
    assert (s.loc["b", "shared_runs"], s.loc["e", "shared_runs"]) == (9, 3)
    # another comparison (order_seed 8) whose variants all ran 18 rounds: unchanged
    unchanged = s.loc[["c", "d"]].drop(columns="shared_runs")
    pd.testing.assert_frame_equal(unchanged, run.set_index("variant").loc[["c", "d"]])
    assert list(s.loc[["c", "d"], "shared_runs"]) == [18, 18]
    # again, or on a subset of a table already cut (one comparison's pair): the same rounds
    again = shared_rounds(shared_rounds(run)[run["variant"] == "a"]).set_index("variant")
    assert again.loc["a", "median_ms"] == 104.0 and again.loc["a", "shared_runs"] == 9
    # a table without order_seed is one comparison; one without rounds is left as it is
    assert shared_rounds(run.drop(columns="order_seed")).set_index("variant").loc["c", "median_ms"] == 304.0
    assert shared_rounds(run.drop(columns="times_ms")) is not None and "shared_runs" not in shared_rounds(
        run.drop(columns="times_ms"))  # fmt: skip


def test_the_runs_and_bound_tables_read_the_shared_rounds_and_say_so():
    run = sequential_run()
    runs = display.runs_table(run)
    assert "| a | ok | 18 (9 shown) | 10 | 104.0 (102.0–106.0) | 100.0–108.0 | 10.40 |" in runs  # not 154.0 over 18
    assert "| c | ok | 18 | 10 | 308.5 (304.2–312.8) | 300.0–317.0 | 30.85 |" in runs  # its own comparison: all 18
    note = ("*Variants ran different numbers of rounds (the sequential design): each median, ms per step and GPU "
            "share here is over the first 9 rounds, which every interleaved variant ran; each paired "
            "speed-up uses the rounds up to the look that decided it (the rounds it names), or every round both "
            "variants ran where none did.*")  # fmt: skip
    # the runs table names its IQR and min–max columns too (review rv19A N1); the bound table keeps the default
    assert runs.endswith("\n\n" + note.replace("each median, ms per step and GPU share here is",
                                                "each median, IQR, min–max and ms per step here is"))  # fmt: skip
    bound = display.bound_table(run[run["status"] == "ok"])
    assert "| a | 10.40 | 9.46 | 0.94 | 0.91 | GPU |" in bound  # over all 18: 0.61, mixed; rest 10.40 − 9.46
    assert bound.endswith(f"{note}\n\n{display.host_probe_text(run)}")  # last, the host's speed
    assert "was not recorded" in bound  # this table has no probe
    cpu = run.assign(gpu_busy_ms=float("nan"))  # a smoke run: no busy time, the host's line all the same
    assert display.bound_table(cpu).endswith(f"CUPTI measures it on a GPU only.*\n\n{display.host_probe_text(cpu)}")
    probed = run.assign(host_probe_ms_before=6.98, host_probe_ms_after=6.71, host_probe_min_ms=6.5,
                        host_probe_max_ms=7.2)  # fmt: skip
    assert display.bound_table(probed[probed["status"] == "ok"]).endswith(
        "The host's probe loop (`tokgen.results.host_loops_ms`, median of 5 loops) took 6.98 ms before these rounds "
        "and 6.71 ms after, "
        "its single loops 6.50–7.20 ms; "
        "whether the rounds' times followed the host's speed is not measured.")  # fmt: skip
    same = run[run["variant"].isin(["c", "d"])]  # every variant ran the same rounds: no line, nothing changed
    assert "Variants ran" not in display.runs_table(same) + display.bound_table(same)
    assert "| c | 30.85 | 20.00 | 10.85 | 0.65 | mixed |" in display.bound_table(same)  # rest: wall less busy (S2)
    head = "| variant | ms per step (wall) | GPU busy ms per step | rest of step, ms (wall less busy) | GPU share |"
    assert head in display.bound_table(same)  # review rvA17 S2


def test_the_runtime_bars_and_the_finding_read_the_shared_rounds():
    import matplotlib.pyplot as plt

    run = sequential_run()
    ok = run[run["status"] == "ok"]
    fig, ax = plt.subplots()
    display.plot_runtimes(ax, ok)
    assert [p.get_width() for p in ax.patches] == [408.5, 308.5, 124.0, 104.0]  # bottom up: the table's order
    assert "over the first 9 rounds, which every interleaved variant ran" in ax.get_xlabel()
    fig, ax = plt.subplots()
    display.plot_runtimes(ax, ok[ok["variant"].isin(["c", "d"])])
    assert ax.get_xlabel() == "runtime per generation, ms (median, IQR)"
    plt.close("all")
    text = display.finding(ok, "b", "a")
    assert ("the GPU is busy 91% of the wall time (over the first 9 rounds, which every interleaved variant ran): "
            "GPU-bound.") in text  # fmt: skip
    assert "busy 65% of the wall time: mixed (host and GPU)." in display.finding(ok, "d", "c")


def test_the_scaling_figure_names_the_generators_and_fits_no_slope_of_its_own():
    """Notebook 02's legend read naive 1.72 beside claim 1's 1.66 (review r58 N2): the slope is printed in words
    only, so the legend holds the names and the points the medians over the shared rounds."""
    import matplotlib.pyplot as plt

    rows = [{"variant": f"x{n}", "max_seqlen": n, "status": "ok", "times_ms": f"{n};{n};{n}", "median_ms": n,
             "q25_ms": n, "q75_ms": n} for n in (100, 200, 400)]  # fmt: skip
    fig, ax = plt.subplots()
    display.plot_scaling(ax, {"naive": pd.DataFrame(rows)})
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["naive"]
    assert list(ax.lines[0].get_ydata()) == [100, 200, 400]
    plt.close(fig)


def test_the_sync_steps_gpu_share_beside_notebook_06s_gaps_reads_the_shared_rounds():
    profile = pd.DataFrame({"variant": ["kv_static", "pipelined_static"], "idle_gap_median_us": [90.0, 20.0],
                            "gpu_idle_fraction": [0.3, 0.2], **this_run()})  # fmt: skip
    run = sequential_run().replace({"variant": {"a": "kv_static", "b": "pipelined_static"}}).assign(batch_size=32)
    text = " ".join(pipelined_gap(profile, run))
    assert ("In this run (B = 32; GPU busy time from one profiled run, wall time the median of the unprofiled "
            "rounds, over the first 9 rounds, which every interleaved variant ran) the GPU is busy 91% of a "
            "synchronous step.") in text  # fmt: skip


def test_the_sweep_reads_each_batch_sizes_shared_rounds():
    import matplotlib.pyplot as plt

    run = sequential_run()
    sweep = pd.concat([run[run["variant"].isin(["a", "b"])].assign(batch_size=1),
                       run[run["variant"].isin(["c", "d"])].assign(batch_size=16)])  # fmt: skip
    sweep = sweep.assign(generator=sweep["variant"].map({"a": "kv_static", "b": "pipelined_static",
                                                         "c": "kv_static", "d": "pipelined_static"}), compiled=False)
    g = pd.DataFrame({"batch_size": [1, 16], "outcome": ["faster", "undecided"], "compiled": False, "speedup": 1.1,
                      "speedup_q25": 1.0, "speedup_q75": 1.2})  # fmt: skip
    text = display.sweep_takeaway(g, sweep)
    assert ("A synchronous step takes 10.40 (10.20–10.60) ms at B = 1 and 30.85 (30.43–31.27) ms at B = 16 (median "
            "and IQR of the rounds, over the first 9 rounds, which every interleaved variant ran; each B") in text
    assert "The GPU is busy 91% of a step at B = 1" in text
    fig, axes = plt.subplots(1, 2)
    display.plot_sweep(axes, g, sweep)
    assert list(axes[1].lines[0].get_ydata()) == [10.4, 30.85] and "first 9 rounds" in axes[1].get_ylabel()
    plt.close("all")


def test_the_sweep_plot_draws_a_decided_no_effect_apart_from_an_undecided_point():
    """Notebook 08's left panel: faster/slower filled circles, no effect a filled square, undecided a
    hollow circle, each named once in the legend; an outcome not in the sweep gets no entry."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    run = sequential_run()
    sweep = pd.concat([run[run["variant"].isin(["a", "b"])].assign(batch_size=b) for b in (1, 16, 64)])
    sweep = sweep.assign(generator=sweep["variant"].map({"a": "kv_static", "b": "pipelined_static"}), compiled=False)
    g = pd.DataFrame({"batch_size": [1, 16, 64], "outcome": ["faster", "undecided", "no effect"], "compiled": False,
                      "speedup": [1.3, 1.1, 1.01], "speedup_q25": 1.0, "speedup_q75": 1.4})  # fmt: skip
    fig, axes = plt.subplots(1, 2)
    display.plot_sweep(axes, g, sweep)
    drawn = []  # (B, marker, hollow) of every point drawn: each once
    for c in axes[0].collections[1:]:  # the first: the error bars
        faces = c.get_facecolors()  # one for every point, or one for all
        for i, (x, _) in enumerate(c.get_offsets()):
            square = len(c.get_paths()[0].vertices) == 5  # matplotlib's "s" path: 4 corners and the closing point
            drawn.append((int(x), "square" if square else "circle", tuple(faces[i % len(faces)]) == to_rgba("white")))
    assert sorted(drawn) == [(1, "circle", False), (16, "circle", True), (64, "square", False)]
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["eager", "faster or slower (decided)", "no effect within ±5% (decided)", "undecided"]
    display.plot_sweep(plt.subplots(1, 2)[1], g.assign(outcome="faster"), sweep)
    assert [t.get_text() for t in plt.gcf().axes[0].get_legend().get_texts()] == ["eager", "faster or slower (decided)"]
    plt.close("all")


def cause_profile(eager, compiled=None, piped=500.0):
    """Notebook 06's table, a row per generator per window: per window (sync gap, its profiled / plain − 1
    %, its plain runs' spread %, no-check gap, the same, spread) for eager (and compiled). A plain
    run's median is 1,000 µs, its fastest 1,000 and its slowest 1,000 + 10 × spread: the spread in %."""
    rows = []
    for prefix, windows in (("", eager), ("compiled ", compiled or [])):
        for w, (sync, o_sync, sp_sync, none, o_none, sp_none) in enumerate(windows):
            for v, gap, o, sp in (("kv_static", sync, o_sync, sp_sync), ("kv_static_no_check", none, o_none, sp_none),
                                  ("pipelined_static", piped, 0.0, 0.0)):  # fmt: skip
                rows.append({"variant": prefix + v, "window": w, "idle_gap_median_us": gap, "gpu_idle_fraction": 0.9,
                             "profiled_vs_plain_pct": o, "unprofiled_step_us": 1000.0, "unprofiled_min_us": 1000.0,
                             "unprofiled_max_us": 1000.0 + 10 * sp})  # fmt: skip
    return with_shared(pd.DataFrame(rows))


# the reference run's windows (r49, rv50): gaps (µs) and profiled / plain − 1 (%) as recorded, plain-run
# spreads (%) as recorded; the old comparability filter judged eager window 0 alone and no compiled window
EAGER = [(286.8, 70.0, 31.0, 290.1, 81.0, 7.0), (144.0, -31.0, 7.5, 244.0, 41.0, 2.8),
         (239.0, 21.0, 4.7, 258.0, 43.0, 9.1)]  # fmt: skip
COMPILED = [(896.0, 164.0, 6.0, 691.0, 81.0, 9.0), (452.0, -9.0, 6.0, 706.0, 50.0, 9.0),
            (763.0, 39.0, 6.0, 627.0, 58.0, 9.0)]  # fmt: skip


def test_the_syncs_cause_is_judged_in_every_window_and_a_direction_only_where_every_window_shows_it():
    """Every window judged (claims 6 and 7's one rule): in none does the no-check gap fall to half, so
    the sync does not open most of it, eager and compiled. Eager's no-check gap is about the same in
    windows 0 and 2 (290.1 against 286.8, 258 against 239: within MIN_GAP_US, 20 µs) and larger in
    window 1 (244 > 144): no direction said; its pipelined gap (500) is larger in every window: said;
    compiled's are smaller, larger, smaller: no direction said. The profiled / plain − 1 numbers
    (negative ones too) change nothing."""
    gaps = idle_gaps(cause_profile(EAGER, COMPILED))
    eager, compiled = gaps.to_dict("records")
    assert (eager["sync_causes"], eager["windows"], eager["no_check_change"]) == (False, 3, "split")
    assert (compiled["sync_causes"], compiled["windows"], compiled["no_check_change"]) == (False, 3, "split")
    disagree = "the windows disagree on how the {} compares with the one with the sync, a difference below 20 µs "
    assert gap_takeaway(eager) == [  # no ratio recorded: said once a bullet, by the verdict (review rr18d N2)
        "Eager, the cause (claim 6): the gap before a step is 239.0 µs with the sync, 258.0 µs with no stop check "
        f"(medians over the 3 profiled windows); {SHORT}, 239.0 µs with the sync and 258.0 µs with no stop check: "
        f"{RAW}, more than half of that time remains without any stop check in every window: the stop check (its "
        f"launches and `.item()`) does not open most of it ({disagree.format('time without any stop check')}counting "
        "as none); the time from the shared work with the sync less that with no stop check: \u22123, \u2212100 and "
        "\u221219 µs per step in windows 0–2; no-check / sync per window 1.012, 1.694, 1.079 (the rule: at least 20 µs "
        "with the sync and at most 0.5 in every window; nearest to it: window 0 of windows 0–2, 1.012, 0.512 "
        "above it; no within-window interval recorded).",
        "Eager, pipelining (claim 7): the GPU idles 90% of the window with the sync, 90% pipelined (medians, not "
        "judged); the gap before a "
        "step is 239.0 µs with the sync, 500.0 µs pipelined (medians over the 3 profiled windows): pipelining "
        "does not close "
        f"half of the gap before a step{BY_RULE}: the gap pipelined is larger than with the sync in all 3 windows by "
        "20 µs or more, but 3 windows cannot show a direction: with no difference, all three agree by chance 1 time "
        "in 4; pipelined / sync per window 1.743, 3.472, 2.092 (the rule: at most 0.5 in every window; nearest to "
        "it: window 0 of windows 0–2, 1.743, 1.243 above it)."]  # fmt: skip
    assert gap_takeaway(compiled) == [
        "Compiled, the cause (claim 6): the gap before a step is 763.0 µs with the sync, 691.0 µs with no stop check "
        f"(medians over the 3 profiled windows); {SHORT}, 763.0 µs with the sync and 691.0 µs with no stop check: "
        f"{RAW}, more than half of that time remains without any stop check in every window: the stop check (its "
        f"launches and `.item()`) does not open most of it ({disagree.format('time without any stop check')}counting "
        "as none); the time from the shared work with the sync less that with no stop check: +205, \u2212254 and +136 "
        "µs per step in windows 0–2; no-check / sync per window 0.771, 1.562, 0.822 (the rule: at least 20 µs with the "
        "sync and at most 0.5 in every window; nearest to it: window 0 of windows 0–2, 0.771, 0.271 above it; no "
        "within-window interval recorded).",
        "Compiled, pipelining (claim 7): the GPU idles 90% of the window with the sync, 90% pipelined (medians, not "
        "judged); the gap before "
        "a step is 763.0 µs with the sync, 500.0 µs pipelined (medians over the 3 profiled windows): pipelining "
        "does not close "
        f"half of the gap before a step{BY_RULE}: {disagree.format('gap pipelined')}counting as none; pipelined / "
        "sync per window 0.558, 1.106, 0.655 (the rule: at most 0.5 in every window; nearest to it: window 0 of "
        "windows 0–2, 0.558, 0.058 above it)."]  # fmt: skip
    assert gap_summary(gaps).split(" Claim 6's size,")[0] == (  # then the size
        "The per-step `.item()` synchronizes the host with the GPU at every step boundary (what it waited for is not "
        f"measured here); eager and compiled, {RAW_SUMMARY}, more than half of the time before a step, from the work "
        "the steps share, remains without any stop check: the stop check "
        "(its launches and `.item()`) does not open most of it (see the "
        "takeaways above for "
        "each model's gaps).")  # fmt: skip
    for text in (takeaway_text(eager), takeaway_text(compiled), gap_summary(gaps)):
        assert "unequal" not in text and "comparable" not in text and "profiler slowed" not in text


def test_one_window_that_opens_the_gap_splits_the_windows_whatever_its_profiled_against_plain():
    opens = [EAGER[0], EAGER[1], (240.0, 500.0, 0.0, 100.0, -50.0, 90.0)]  # 100 <= 120: opens, wild numbers beside
    g = idle_gaps(cause_profile(opens)).iloc[0]
    assert (g["sync_causes"], g["windows"], g["windows_opening"]) == ("split", 3, 1)
    said = (f"the 3 profiled windows disagree: {RAW}, at most half of that time remains without any stop check in "
            "1 of them")
    assert said in takeaway_text(g)


@pytest.mark.parametrize(
    "pairs, change, text",
    [([(100.0, 120.0), (200.0, 250.0)] * 3, "larger",
      "the gap is larger pipelined than with the sync in all 6 windows, by 20 µs or more"),  # 20 µs exactly: larger
     ([(100.0, 80.0), (200.0, 150.0)] * 3 + [(90.0, 10.0)], "smaller",
      "the gap is smaller pipelined than with the sync in all 7 windows, by 20 µs or more"),
     ([(100.0, 120.0), (200.0, 250.0)], "larger", "the gap pipelined is larger than with the sync in both windows by "
      "20 µs or more, but 2 windows cannot show a direction: with no difference, both agree by chance 1 time in 2"),
     ([(605.37, 1093.65), (1137.76, 1292.04), (474.70, 516.54)], "larger",  # rv57 compiled: +488, +154, +42 µs
      "the gap pipelined is larger than with the sync in all 3 windows by 20 µs or more, but 3 windows cannot show "
      "a direction: with no difference, all three agree by chance 1 time in 4"),
     ([(100.0, 119.9), (200.0, 180.1)], "same",
      "the gap is about the same pipelined as with the sync in every window, within 20 µs"),
     ([(202.29, 202.47)], "same", "the gap is about the same pipelined as with the sync, within 20 µs"),  # rv51 w1
     ([(100.0, 121.0)], "larger", "the gap pipelined is larger than with the sync in the one window by 20 µs or more, "
      "but one window cannot show a direction"),
     ([(100.0, 121.0), (200.0, 150.0)], "split", "the windows disagree on how the gap pipelined compares with "
      "the one with the sync, a difference below 20 µs counting as none"),
     ([(150.96, 225.28), (202.29, 202.47), (251.11, 376.36)], "split", "the windows disagree on how the gap "
      "pipelined compares with the one with the sync, a difference below 20 µs counting as none")],  # rv51
)  # fmt: skip
def test_a_direction_between_two_gaps_is_stated_only_where_every_window_shows_it(pairs, change, text):
    """The one template (tokgen.gaps.direction_text): two gaps less than MIN_GAP_US (20 µs) apart are
    about the same; rv51's eager window 1 (202.29 against 202.47 µs pipelined) is one of them. A
    direction needs every window and at least 6 of them: n windows all agree in sign by chance
    2·0.5^n of the time where the gaps do not differ, 1 in 4 for 3, 1 in 16 for 5, 1 in 32 for 6."""
    from tokgen.gaps import MIN_WINDOWS, agree_by_chance, direction, direction_text

    assert MIN_WINDOWS == 6 and agree_by_chance(3) == 0.25 and agree_by_chance(5) == 1 / 16 > 0.05
    assert agree_by_chance(6) == 1 / 32 and agree_by_chance(1) == 1.0
    assert direction(pairs) == change
    assert direction_text(change, len(pairs), "pipelined") == text


def test_notebook_07s_figure_shows_paired_speed_ups_where_the_medians_order_is_the_other_way():
    """The reference run's case (r49, notebook 07): kv_static_no_check's median lies above kv_static's
    (46.5 against 45 ms) while round by round it is faster in 7 of 8 rounds (×1.05). The figure draws
    the paired speed-up, ×1.05 with its interval, each variant against kv_static of its own model."""
    import matplotlib.pyplot as plt

    base = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
    rows = [("kv_static", False, base), ("kv_static_no_check", False, [45.0, 19.0, 28.0, 38.0, 48.0, 57.0, 66.0, 76.0]),
            ("compiled kv_static", True, [b / 2 for b in base]),
            ("compiled kv_static_no_check", True, [b / 2 * 1.25 for b in base])]  # fmt: skip
    run = pd.DataFrame([{"variant": v, "compiled": c, "status": "ok", "runs": 8, "times_ms": ";".join(map(str, t)),
                         "median_ms": statistics.median(t)} for v, c, t in rows])  # fmt: skip
    assert run.loc[1, "median_ms"] > run.loc[0, "median_ms"]  # by the medians, no-check looks slower
    fig, ax = plt.subplots()
    drawn = display.plot_speedups(ax, run)
    assert list(drawn["variant"]) == ["kv_static_no_check", "compiled kv_static_no_check"]
    assert list(drawn["vs"]) == ["kv_static", "compiled kv_static"]  # each against its own model's
    eager, compiled = drawn.to_dict("records")
    assert eager["speedup"] == pytest.approx(display.gain(run, "kv_static", "kv_static_no_check")["speedup"])
    assert eager["speedup"] > 1 and eager["low"] <= eager["speedup"] <= eager["high"]
    assert compiled["speedup"] == pytest.approx(0.8)  # ×1.25 the time in every round: slower
    assert list(ax.lines[0].get_xdata()) == pytest.approx([eager["speedup"], compiled["speedup"]])
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.lines)  # ×1 marked
    assert "paired speed-up over kv_static of the same model" in ax.get_xlabel()
    assert ax.get_xlabel().endswith("bar: 95% interval") and "sequential" not in ax.get_xlabel()  # one test
    plt.close(fig)
    fig, ax = plt.subplots()
    display.plot_speedups(ax, run.assign(looks="4;8"))  # a sequential run: decided at a look
    assert ax.get_xlabel().endswith("bar: 95% sequential interval,\nat the look that decided it (or the last)")
    plt.close(fig)
    note = display.medians_note("kv_static")
    assert note.startswith("The medians above are each variant's own, not a ranking") and "paired" in note


def test_plot_speedups_draws_an_interval_its_median_lies_outside():
    """S1 (freeze review): the dot is the median of the per-round ratios, the bar the Hodges-Lehmann
    interval; with bimodal rounds (base 8% slower in about 30% of them) the median lies below the
    interval. Drawn as error arms that raised "'xerr' must not contain negative values"; now the bar
    is drawn from the interval's own ends and the dot where it is."""
    import matplotlib.pyplot as plt

    base = [106.3, 101.5, 99.0, 108.1, 110.1, 99.6, 109.2, 100.7, 99.6, 100.7, 101.2, 107.9, 107.4, 108.2, 97.7,
            99.7, 100.0, 101.0, 110.4, 105.2, 106.5, 99.9, 106.6, 100.4, 108.9, 100.7, 106.2, 111.9, 98.8, 99.8,
            101.6, 100.8, 100.8, 101.3, 99.8, 109.5, 101.2, 107.7, 98.7, 109.0]  # fmt: skip
    other = [98.7, 100.3, 100.5, 101.3, 99.8, 100.9, 100.0, 101.6, 99.3, 99.4, 100.4, 101.7, 100.2, 99.9, 99.4,
             101.0, 99.3, 99.7, 99.7, 101.1, 99.1, 99.1, 100.2, 100.0, 98.5, 99.1, 99.3, 100.0, 99.1, 102.0, 100.2,
             101.2, 100.3, 100.2, 100.7, 99.6, 98.2, 100.4, 99.2, 101.3]  # fmt: skip
    run = pd.DataFrame([{"variant": v, "compiled": False, "status": "ok", "runs": 40, "times_ms": ";".join(map(str, t)),
                         "median_ms": statistics.median(t)}
                        for v, t in (("kv_static", base), ("other", other))])  # fmt: skip
    g = display.gain(run, "kv_static", "other")
    assert g["speedup"] < g["interval_low"] < g["interval_high"] < 2  # the case: the median below its interval
    fig, ax = plt.subplots()
    drawn = display.plot_speedups(ax, run)  # raised ValueError before
    (row,) = drawn.to_dict("records")
    assert (row["speedup"], row["low"], row["high"]) == (g["speedup"], g["interval_low"], g["interval_high"])
    assert list(ax.lines[0].get_xdata()) == [g["speedup"]]  # the dot
    (segment,) = ax.collections[0].get_segments()  # the bar: exactly the interval
    assert list(segment[:, 0]) == pytest.approx([g["interval_low"], g["interval_high"]], rel=1e-12)
    caps = sorted(x for line in ax.lines[1:] if line.get_marker() == "|" for x in line.get_xdata())
    assert caps == pytest.approx([g["interval_low"], g["interval_high"]], rel=1e-12)
    plt.close(fig)


def test_plot_dots_leaves_an_open_end_of_an_interval_undrawn():
    """An interval open on one side (a smoke run's 0-inf) gets its finite end's cap and no bar."""
    import matplotlib.pyplot as plt

    df = pd.DataFrame({"v": ["a", "b"], "x": [1.0, 2.0], "lo": [0.5, 0.0], "hi": [1.5, float("inf")]})
    fig, ax = plt.subplots()
    display.plot_dots(df, "v", "x", low="lo", high="hi", ax=ax)
    (segment,) = ax.collections[0].get_segments()  # only a's bar
    assert list(segment[:, 0]) == [0.5, 1.5] and list(segment[:, 1]) == [1.0, 1.0]
    caps = sorted(x for line in ax.lines[1:] for x in line.get_xdata())
    assert caps == [0.0, 0.5, 1.5]
    plt.close(fig)


def test_plain_after_profile_counts_the_brackets_beyond_their_own_spread_per_model_and_names_no_cause():
    """Bracket by bracket, per model: the plain runs before at 1,000 µs a step, spread 50 µs. Eager
    after at 1,060 (+60: slower beyond), 940 (−60: faster beyond), 1,050 (+50: on the edge, within),
    1,010; compiled after at 1,100 (slower beyond) and 1,000. The pooled median change (+0.5%) lies
    within the 5% spread, which the old sentence read as "no profiler still set up"; it says instead
    that the brackets, run one after another, cannot show it."""
    from tokgen.gaps import plain_after_profile

    def rows(after, variants=("a", "b", "c", "d", "compiled a", "compiled b")):
        return pd.DataFrame([{"variant": v, "window": 0, "unprofiled_before_us": 1000.0, "unprofiled_after_us": a,
                              "unprofiled_before_spread_us": 50.0} for v, a in zip(variants, after)])  # fmt: skip

    text = plain_after_profile(rows([1060.0, 940.0, 1050.0, 1010.0, 1100.0, 1000.0]))
    assert text == (
        "Bracket by bracket, the median of the plain runs after the profiled passes moved beyond the spread of the "
        "plain runs before them (slowest less fastest) in 2 of 4 eager brackets (1 slower, 1 faster) and 1 of 2 "
        "compiled brackets (1 slower, 0 faster). The brackets ran one after another in this process, so every "
        "bracket but the first follows an earlier one's profiled passes: those compare runs after a profile with runs "
        "after a profile and cannot show whether a profiler stays set up after a profile.")  # fmt: skip
    for claimed in ("no profiler", "may still be set up", "within that spread", "drift", "because"):
        assert claimed not in text  # no cause named, no absence claimed
    nan = float("nan")
    assert "in 0 of 1 eager bracket (0 slower, 0 faster)" in plain_after_profile(rows([1000.0, nan], ("a", "b")))
    assert plain_after_profile(rows([1100.0], ("compiled a",))).endswith(
        "in 1 of 1 compiled bracket (1 slower, 0 faster). One bracket cannot show whether a profiler stays set up "
        "after a profile.")  # fmt: skip
    assert "not recorded" in plain_after_profile(rows([1000.0] * 4).drop(columns="unprofiled_after_us"))
    assert "not measured" in plain_after_profile(rows([nan] * 4))


def test_the_paired_rounds_figure_draws_each_rounds_speed_up_and_their_median_never_a_ratio_of_medians():
    """Notebook 05's figure: medians 110 and 40 ms would suggest ×2.75; the rounds' own ratios have
    the median 2, the paired speed-up, drawn with its interval as a band and ×1 dashed."""
    import matplotlib.pyplot as plt

    from tokgen.stats import gain

    base, fast = [100, 60, 150, 80, 120, 90, 210, 70, 120, 130], [50, 30, 40, 40, 60, 36, 140, 35, 40, 65]
    rows = pd.DataFrame({"variant": ["eager", "compiled"], "times_ms": [";".join(map(str, base)),
                         ";".join(map(str, fast))], "median_ms": [110.0, 40.0]})  # fmt: skip
    fig, ax = plt.subplots()
    g = display.plot_paired_rounds(ax, rows, "eager", "compiled")
    dots, median, one = ax.lines
    assert list(dots.get_xdata()) == list(range(1, 11))
    assert list(dots.get_ydata()) == [2.0, 2.0, 3.75, 2.0, 2.0, 2.5, 1.5, 2.0, 3.0, 2.0]
    assert list(median.get_ydata()) == [2.0, 2.0] and g["speedup"] == 2.0 == gain(rows, "eager", "compiled")["speedup"]
    assert list(one.get_ydata()) == [1.0, 1.0] and one.get_linestyle() == "--"
    band = ax.patches[0]
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx((g["interval_low"], g["interval_high"]))
    assert "×2.00" in ax.get_legend().get_texts()[1].get_text() and "2.75" not in str(
        [t.get_text() for t in ax.get_legend().get_texts()])  # fmt: skip
    plt.close(fig)
    fig, ax = plt.subplots()
    assert display.plot_paired_rounds(ax, rows, "eager", "missing") is None
    assert ax.texts[0].get_text() == "missing against eager: not measured"
    plt.close(fig)


def test_host_waits_count_each_wait_once_with_the_item_reads_among_them():
    """Notebook 10's two audited decoders: K = 16 waits on 6 events and ends in one stream sync (7 waits, no
    `.item()`); the WHILE node's one `.item()` is its one stream sync (1 wait, not 2)."""
    audit = pd.DataFrame([{**audit_row("g", 0, 1, 1, 6, device=0), "variant": "graph K=16"},
                          {**audit_row("s", 1, 1, 1, 0, device=0), "variant": "stop on device"},
                          {**audit_row("d", 2, 2, 2, 1, device=3), "variant": "device syncs"}])  # fmt: skip
    waits = display.host_waits(audit).set_index("variant")
    assert waits[display.HOST_WAITS].tolist() == [7, 1, 6]  # stream + event + device, never + `.item()`
    assert waits[display.ITEM_READS].tolist() == [0, 1, 2]
    assert waits["event syncs"].tolist() == [6, 0, 1] and waits["device syncs"].tolist() == [0, 0, 3]
    said = display.waits_text(audit, 100)
    assert said.startswith("The host waits per generation of 100 steps: ")
    assert "`graph K=16` 7 (none of them an `.item()` read)" in said
    assert "`stop on device` 1 (of which 1 `.item()` read)" in said and "`device syncs` 6 (of which 2" in said
    more = pd.DataFrame([{**audit_row("m", 3, 3, 1, 0, device=0), "variant": "more reads"}])
    assert "`more reads` 1 (and 3 `.item()` reads, more than its stream syncs" in display.waits_text(more, 10)


def test_the_profiled_k_is_named_with_the_ks_that_share_its_rank():
    """K = 1, 2, 4 share rank 3 (K = 2 listed first); K = 8 is rank 5 alone; `f` was timed at one K."""
    ranked = pd.DataFrame({"variant": ["f K=4", "g K=2", "g K=4", "g K=1", "h K=1", "g K=8"],
                           "rank": [1, 3, 3, 3, 3, 6], "vs": "naive"})  # fmt: skip
    results = pd.DataFrame({"variant": ranked["variant"], "generator": ["f", "g", "g", "g", "h", "g"],
                            "steps_per_graph": [4, 2, 4, 1, 1, 8]})  # fmt: skip
    said = display.profiled_k_text(ranked, results, "g K=2")
    assert said.startswith("`g K=2` is profiled: K = 1, 2, 4 of `g` share rank 3; ")  # not h's K = 1, not K = 8
    assert "listed first among them by its point speed-up against `naive`, which does not rank them" in said
    alone = "`g K=8` is profiled: no other K of `g` shares its rank 6."
    assert display.profiled_k_text(ranked, results, "g K=8") == alone
    assert display.profiled_k_text(ranked, results, "f K=4") == "`f K=4` is profiled: the only K of `f` timed."


def _kv_rows(times: dict[int, list[float]], shared: int, looks: str = "10;20") -> pd.DataFrame:
    return pd.DataFrame(
        [{"max_seqlen": n, "times_ms": ";".join(map(str, t)), "median_ms": statistics.median(t[:shared]),
          "shared_runs": shared, "looks": looks} for n, t in times.items()]
    )  # fmt: skip


def test_slope_text_reads_a_sequential_table_over_its_shared_rounds_with_a_range():
    """Review pre_00_05 S2: notebook 02 printed the KV cache's slope with no range; `slope_range`
    alone returns a sequential table unchanged, so every draw gave the same slope."""
    f = [1.0, 1.3, 0.9, 1.1, 1.2, 0.8, 1.05, 0.95, 1.15, 0.85]  # one factor per round: paired, runtime ∝ N
    exact = {n: [n * x for x in f] + [1e6] * 6 for n in (100, 200, 400)}  # rounds past the 10 shared: not read
    exact[100][10:] = [1.0] * 6
    assert display.slope_text(_kv_rows(exact, 10)) == (
        "paired slope 1.00 (runtime ×2.00, ×2.00 from one N to the next, paired by round; bootstrap range 1.0–1.0 "
        "over its first 10 rounds)"
    )
    rng = np.random.default_rng(1)
    noisy = {n: [n * x * rng.uniform(0.8, 1.25) for x in f] for n in (100, 200, 400)}
    text = display.slope_text(_kv_rows(noisy, 10))
    low, high = map(float, re.search(r"range (\S+)–(\S+) over", text).groups())
    assert low < high  # resampled, not the one slope every draw
    slope_ = float(re.search(r"paired slope (\S+) \(", text).group(1))
    assert slope_ == round(tokgen.stats.paired_slope(_kv_rows(noisy, 10).assign(
        times_ms=lambda d: [";".join(t.split(";")[:10]) for t in d["times_ms"]])), 2)  # the paired slope, not medians'
    fixed = _kv_rows(noisy, 10).drop(columns=["looks", "shared_runs"])
    drawn = display.slope_range(fixed)  # one decimal over 10 rounds, each end rounded outward (review rv22A N1)
    assert (low, high) == (math.floor(drawn[0] * 10) / 10, math.ceil(drawn[1] * 10) / 10)


def test_rank_label_marks_a_shared_rank_with_an_equals_sign():
    assert display.rank_label({"rank": 1, "tied": True, "variant": "a"}) == "1=  a"
    assert display.rank_label({"rank": 5, "tied": False, "variant": "b"}) == "5  b"
    ranked = pd.DataFrame({"variant": ["a", "b", "c"], "rank": [1, 1, 3], "tied": [True, True, False]})
    assert list(ranked.apply(display.rank_label, axis=1)) == ["1=  a", "1=  b", "3  c"]
    shared3 = pd.DataFrame({"variant": ["a", "b", "c"], "rank": [1, 3, 3], "tied": [False, True, True]})
    assert list(shared3.apply(display.rank_label, axis=1)) == ["1  a", "3=  b", "3=  c"]


def kernel_rows(variant, durations, owns):
    return pd.DataFrame({"variant": variant, "kind": [f"k{i}" for i in range(len(owns))],
                         "us_per_token": durations, "own_us_per_token": owns})  # fmt: skip


def test_durations_overlap_reads_from_the_kernel_table_whether_kernels_were_launched_early():
    """PDL (compute capability ≥ 9): durations 102 µs against 100 µs of own time, over the 1% share;
    without it they are equal (100.5 against 100 is within 1%); a variant not in the table: no."""
    kernels = pd.concat([kernel_rows("pdl", [60.0, 42.0], [50.0, 50.0]),
                         kernel_rows("plain", [50.0, 50.5], [50.0, 50.0])])  # fmt: skip
    assert display.durations_overlap(kernels, "pdl") is True
    assert display.durations_overlap(kernels, "plain") is False
    assert display.durations_overlap(kernels, "absent") is False


def test_fusing_split_text_says_the_prefetch_only_where_the_unfused_kernels_overlapped():
    a = pd.Series({"busy_us": 582.0, "products_us": 343.0, "other_us": 238.0}, name="u")
    b = pd.Series({"busy_us": 517.0, "products_us": 419.0, "other_us": 98.0}, name="f")
    head = ("Fusing (`u` → `f`), per step: the GPU's busy time 582 → 517 µs (−65; one profile each, not a paired "
            "speed-up); the products' own time 343 → 419 µs and the other kernels' 238 → 98 µs")  # fmt: skip
    on, off = display.fusing_split_text(a, b, True), display.fusing_split_text(a, b, False)
    moved = (". The fused product kernels also do work the unfused step ran in other kernels (the split sums' "
             "addition, the residual add, the norms' statistics: notebook 10's fused step), so part of that split is "
             "work moving from the other kernels into the products")  # fmt: skip
    assert on.startswith(head + moved + ". Beyond that, the split is not fusing's effect alone either") and \
        "prefetch" in on
    assert off == head + moved + " (the unfused run's kernels did not overlap: none was launched early, so none " \
        "prefetched)."


def test_is_hopper_sxm_from_the_gpu_name():
    """An H100 SXM and an H200 SXM (one dense TF32 datasheet rate; the H200 SXM reports "NVIDIA H200"), not the
    PCIe/NVL cards (review rv19B N2)."""
    for sxm in ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB", "NVIDIA H200"):
        assert display.is_hopper_sxm(sxm), sxm
    for other in ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200 NVL", "NVIDIA L4", "NVIDIA A100-SXM4-80GB",
                  None):
        assert not display.is_hopper_sxm(other), other


def crossover(gpu="NVIDIA H100 80GB HBM3", measured=True, cache_row_bytes=1e8):
    """10 ms of weights, 0.05 ms of arithmetic per row at 400 TFLOP/s: the crossover at B = 200, at
    a 500 TFLOP/s datasheet rate 250; at 1000 GB/s, 1e8 cache bytes per row take 0.1 ms."""
    return display.crossover_text(gpu=gpu, gbs=1000.0, steps=100, tflops=400.0 if measured else 500.0,
                                  measured=measured, datasheet_tflops=500.0, weights_ms=10.0, arithmetic_row_ms=0.05,
                                  cache_row_bytes=cache_row_bytes, cache_share=(256, 0.66))  # fmt: skip


def test_crossover_text_sets_the_datasheet_rate_beside_only_on_an_h100_sxm():
    first, _ = crossover()
    assert first == ("Bandwidth 1,000 GB/s (NVIDIA H100 80GB HBM3), N = 100, arithmetic at the measured 400 TFLOP/s "
                     "(fp32 with TF32, notebook 12): the arithmetic takes longer than reading the weights from B ≈ 200 "
                     "on (B ≈ 250 at an H100 or H200 SXM's datasheet 500 TFLOP/s). The cache's bytes grow with B as "
                     "well: at B = 256 they are 66% of the floor.")  # fmt: skip
    l4, _ = crossover(gpu="NVIDIA L4")
    assert "datasheet" not in l4 and "from B ≈ 200 on. The cache's" in l4
    hybrid, _ = crossover(gpu="NVIDIA L4", measured=False)
    assert "500 TFLOP/s (an H100 or H200 SXM's datasheet TF32 rate with this card's bandwidth: notebook 12 " \
           "recorded no measured one)" in hybrid  # fmt: skip
    assert "with this card's bandwidth" not in crossover(measured=False)[0]
    h200, _ = crossover(gpu="NVIDIA H200")  # the H200 SXM: the same datasheet rate beside (review rv19B N2)
    assert "from B ≈ 200 on (B ≈ 250 at an H100 or H200 SXM's datasheet 500 TFLOP/s)." in h200
    assert "datasheet" not in crossover(gpu="NVIDIA H200 NVL")[0]


def test_crossover_text_sets_each_rows_cache_bytes_against_its_arithmetic():
    """0.1 ms of cache per row against 0.05 ms of arithmetic: never overtaken; 2e7 bytes (0.02 ms): the
    whole floor 10 + 0.02 B is overtaken by 0.05 B from B = 10 / 0.03 ≈ 333."""
    _, bytes_win = crossover()
    assert bytes_win == ("Per row of the batch, a generation of N = 100 moves 100.0 MB of cache (0.100 ms at 1,000 "
                         "GB/s) and computes 0.050 ms of arithmetic: each row adds more bytes' time than arithmetic, "
                         "so the whole floor (weights and cache) is set by bytes at every B at this N; only the "
                         "weights' part is overtaken, from B ≈ 200.")  # fmt: skip
    _, overtaken = crossover(cache_row_bytes=2e7)
    assert overtaken.endswith("(0.020 ms at 1,000 GB/s) and computes 0.050 ms of arithmetic: the arithmetic overtakes "
                              "the whole floor (weights and cache) from B ≈ 333 on, later than the weights alone "
                              "(B ≈ 200).")  # fmt: skip


def test_kind_change_text_names_the_kind_that_changed_most_only_above_one_percent_of_the_busy_time():
    kinds = ["products", "attention", "other"]
    own = pd.DataFrame({"base": [60.0, 30.0, 10.0], "small": [60.5, 30.0, 9.8], "large": [60.0, 33.0, 10.0]},
                       index=kinds)  # fmt: skip
    count = pd.DataFrame({"base": [4.0, 2.0, 1.0], "small": [4.0, 2.0, 1.0], "large": [4.0, 3.0, 1.0]}, index=kinds)
    small = display.kind_change_text(own, count, "base", "small")
    assert small == ("* small: the GPU is busy 100 µs per decode step (0 µs; one profile each, not a paired "
                     "speed-up); no kind's own time changed by 1% of the busy time or more; kernels per decode step "
                     "unchanged.")  # fmt: skip  (rv19B S8: a decode step, not a token: 32 tokens per step)
    large = display.kind_change_text(own, count, "base", "large")
    assert large == ("* large: the GPU is busy 103 µs per decode step (+3 µs; one profile each, not a paired "
                     "speed-up); the kind that changed most: attention (+3.0 µs); kernels per decode step that "
                     "changed: attention 2.0 → 3.0.")  # fmt: skip
    assert "per token" not in small + large


def test_pdl_idle_caveat_says_busy_time_and_idle_share_count_the_same_wait_and_points_to_the_paired_speed_up():
    """rv19B S1, rr20h M1: a PDL decoder's kernels count their early-launched wait as busy, in its busy time from
    own times and in its idle share alike (both from the same busy intervals): the caveat gives each decoder's busy
    time and the durations' overlap, and sends the comparison to the paired speed-up, not to either of them."""
    kernels = pd.DataFrame({"variant": ["off", "off", "on", "on"], "kind": ["a", "b", "a", "b"],
                            "us_per_token": [500.0, 250.0, 600.0, 240.0],
                            "own_us_per_token": [500.0, 250.0, 500.0, 240.0]})  # fmt: skip
    text = display.pdl_idle_caveat(kernels)
    assert text == ("`off` busy 750 µs per decode step (own times), its kernels' durations add up to 750 µs (0 µs of "
                    "overlap); `on` busy 740 µs per decode step (own times), its kernels' durations add up to 840 µs "
                    "(100 µs of overlap). `on`: kernels overlapped (a kernel launched early under PDL counts its wait "
                    "for the one before as busy). The busy time (own times) and the idle share come from the same "
                    "busy intervals, so both count such a wait as busy, and their difference between the decoders is "
                    "not PDL's effect alone: the paired speed-up below is the comparison; the overlap (durations − "
                    "own) shows how far PDL launched kernels early.")  # fmt: skip
    assert "compare the busy times" not in text
    plain = display.pdl_idle_caveat(kernels[kernels["variant"] == "off"])
    assert plain.endswith("No decoder's kernels overlapped by more than 1%: their idle shares compare (one profile "
                          "each, not a paired speed-up).")  # fmt: skip


def test_pdl_idle_caveat_says_not_measured_where_a_decoders_durations_are_missing():
    """rr20h N3: a NaN duration is not skipped in the sum (that printed "-440 µs of overlap" and "No decoder's
    kernels overlapped"): that decoder's durations read "not measured" and nothing is said of its overlap."""
    kernels = pd.DataFrame({"variant": ["off", "off", "on", "on"], "kind": ["a", "b", "a", "b"],
                            "us_per_token": [500.0, 250.0, float("nan"), 240.0],
                            "own_us_per_token": [500.0, 250.0, 500.0, 240.0]})  # fmt: skip
    text = display.pdl_idle_caveat(kernels)
    assert text == ("`off` busy 750 µs per decode step (own times), its kernels' durations add up to 750 µs (0 µs of "
                    "overlap); `on` busy 740 µs per decode step (own times), its kernels' durations not measured. "
                    "Whether `on`'s kernels overlapped is not known (not measured): the paired speed-up below is the "
                    "comparison.")  # fmt: skip
    own = kernels.assign(us_per_token=[500.0, 250.0, 600.0, 240.0], own_us_per_token=[500.0, 250.0, 500.0, None])
    assert "`on` busy not measured per decode step (own times), its kernels' durations add up to 840 µs." in (
        display.pdl_idle_caveat(own))  # fmt: skip


def test_copy_floor_text_states_the_bandwidth_copies_and_floor():
    text = display.copy_floor_text(2965.4, 256, 20, 20.66)
    assert text == ("Copy bandwidth 2,965 GB/s (bytes read + written, the median of 20 copies of 256 MiB); "
                    "the task's floor: **20.7 ms** per generation.")  # fmt: skip


def test_kernel_count_text_says_the_overlap_only_above_one_percent():
    rows = pd.DataFrame({"kernels_per_token": [60.0, 38.0], "us_per_token": [700.0, 244.0],
                         "own_us_per_token": [400.0, 117.0]})  # fmt: skip
    text = display.kernel_count_text("a", rows, 12, 522.0)
    assert "`a`: 98.0 kernels per step, 8.2 per layer of 12" in text
    assert "add up to 944 µs per step; the GPU was busy 517 µs of the 522 µs per step" in text
    assert text.endswith("durations overlap by 427 µs per step (a kernel launched early counts its wait).")
    close = rows.assign(us_per_token=[400.0 + 5.0, 117.0])  # 5 µs over 517: under 1%
    assert display.kernel_count_text("a", close, 12, 522.0).endswith("durations overlap by less than 1%.")
    over = rows.assign(us_per_token=[400.0 + 6.0, 117.0])  # 6 µs over 517: over 1%
    assert display.kernel_count_text("a", over, 12, 522.0).endswith("by 6 µs per step (a kernel launched early "
                                                                     "counts its wait).")  # fmt: skip


def test_idle_share_text_flags_the_host_launched_decoder_and_its_unprofiled_share():
    share = pd.Series({"g": 0.031, "h": 0.402})
    assert display.idle_share_text(share, "x", 0.9) == "* GPU idle share of the profiled window: `g` 3.1%, `h` 40.2%."
    text = display.idle_share_text(share, "h", 0.85)
    assert text.endswith("`h` 40.2% (`h`'s may be inflated by the profiler's host cost, section 4; against the "
                         "median of its unprofiled rounds, its GPU busy time leaves the GPU idle 15.0% of a whole "
                         "generation, set-up and prefill included: another measure, not a check of the "
                         "window's).")  # fmt: skip
    assert display.idle_share_text(share, "h", float("nan")).endswith("host cost, section 4).")


def test_fusing_count_text_counts_kernels_and_leaves_out_kinds_under_half_a_microsecond():
    kernels = pd.DataFrame({
        "variant": ["u", "u", "f", "f", "f", "f"],
        "kind": ["matmul", "norm", "matmul", "norm", "copy", "softmax"],
        "products": [True, False, True, False, False, False],
        "kernels_per_token": [60.0, 38.0, 48.0, 12.0, 2.0, 1.0],
        "own_us_per_token": [400.0, 100.0, 380.0, 12.4, 0.4, 0.5],
    })
    assert display.fusing_count_text(kernels, "u", "f") == (
        "* Fusing: 98 → 63 kernels per step; besides its products, `f` spends 12 µs on norm; 0 µs on softmax per step.")
    only = kernels[kernels["kind"] != "norm"].assign(own_us_per_token=[400.0, 380.0, 0.4, 0.1])
    assert "`f` spends no time on others per step" in display.fusing_count_text(only, "u", "f")


def test_while_node_text_states_outcomes_not_a_range_of_points():
    rows = [{"outcome": "faster", "speedup": 1.07, "no_effect": False},
            {"outcome": "faster", "speedup": 2.15, "no_effect": False},
            {"outcome": "undecided", "speedup": 1.01}]  # fmt: skip
    text = display.while_node_text(14, rows)
    assert text == ("* Every row stopping after 14 steps, the WHILE node against the K-step replays: faster in 2 of 3 "
                    "comparisons; undecided in 1 (each with its interval in the table above).")  # fmt: skip
    assert "1.07" not in text and "2.15" not in text


def test_bandwidth_text_adds_the_rate_only_where_measured():
    assert display.bandwidth_text(2965.4, "c", "notebook 10", None) == (
        "Copy bandwidth: **2,965 GB/s** (read + write; c), measured by notebook 10.")
    assert display.bandwidth_text(2965.4, "c", "notebook 12", 427.8).endswith(
        "measured by notebook 12. Matrix products (fp32 with TF32, 8192 × 8192): **428 TFLOP/s**.")


def test_bytes_text_gives_bytes_and_floors_at_the_bandwidth():
    kinds, names = {"filled": 10.0e9, "static": 12.5e9}, {"filled": "cache read where filled", "static": "whole"}
    text = display.bytes_text(495.2e6, kinds, names, 2500.0, 32, 256)
    assert text == ("Weights read per step: **495 MB**. Bytes per generation (B=32, N=256; weights, cache writes and "
                    "reads): cache read where filled: 10.00 GB, whole: 12.50 GB. Floor at 2,500 GB/s: cache read "
                    "where filled 4.0 ms, whole 5.0 ms.")  # fmt: skip
    assert display.bytes_text(495.2e6, kinds, names, None, 32, 256).endswith("whole: 12.50 GB.")


def test_products_sentences_of_notebook_12_read_the_split():
    split = {"busy_us": 517.0, "durations_us": 944.0, "products_us": 419.0, "other_us": 98.0,
             "weights_floor_us": 167.6, "pct_of_copy_bandwidth": 40.0}  # fmt: skip
    text = display.products_split_text("`a`", split, "N.")
    assert text == ("`a`: the GPU is busy **517 µs** per step (its kernels' durations add up to 944 µs), of which the "
                    "matrix products take **419 µs** and the other kernels 98 µs; reading the weights once at copy "
                    "speed takes **168 µs**: the products run at 40% of copy bandwidth. N.")  # fmt: skip
    assert display.products_inside_text("a", split) == (
        "Inside `a`'s decoder (section 4) the matrix products' own time is 419 µs per step.")
    assert display.products_share_text("a", split) == (
        "* In `a`, the matrix products are 81% of the GPU's busy time and run at 40% of copy bandwidth; the other "
        "kernels take 98 µs per step.")  # 419 / 517 = 0.8104


def test_products_reach_text_gives_the_range_or_one_value():
    assert display.products_reach_text(pd.Series([71.2, 10.4, 40.0]), 32) == (
        "* Alone, at 32 rows, the products reach 10–71% of copy bandwidth.")
    assert display.products_reach_text([40.2, 39.8], 32).endswith("reach 40% of copy bandwidth.")


def test_pdl_unavailable_text_names_the_capability():
    text = display.pdl_unavailable_text("NVIDIA L4", (8, 9))
    assert "This GPU (NVIDIA L4) has compute capability 8.9: PDL needs 9.0" in text


def test_tokens_differ_text_counts_generated_tokens_of_every_row_and_the_first_step():
    import torch

    a = torch.tensor([[0, 5, 6, 7, 8], [0, 1, 2, 3, 4]])
    b = torch.tensor([[0, 5, 6, 9, 9, 9], [0, 1, 2, 3, 0, 0]])  # longer: compared over the shorter's columns
    assert display.tokens_differ_text(a, b) == "3 of 8 generated tokens differ; the first at step 3."
    assert display.tokens_differ_text(a, a) == "0 of 8 generated tokens differ."


def test_the_unfused_steps_are_profiled_at_the_fused_steps_k_where_it_shares_their_best_rank():
    """Review rvC16 S2: `g` K = 2 is listed above K = 4 (by a point speed-up), both rank 3; the fused `f`
    has K = 4, so `g K=4` is profiled. `h`'s best rank holds K = 1 alone (its K = 4 ranks below): its
    first listed, K = 1. `e` has no ranked row: None."""
    ranked = pd.DataFrame({"variant": ["f K=4", "g K=2", "g K=4", "g K=1", "h K=1", "h K=4", "g K=8"],
                           "rank": [1, 3, 3, 3, 3, 6, 6], "vs": "naive"})  # fmt: skip
    results = pd.DataFrame({"variant": ranked["variant"], "generator": ["f", "g", "g", "g", "h", "h", "g"],
                            "steps_per_graph": [4, 2, 4, 1, 1, 4, 8]})  # fmt: skip
    chosen = display.profiled_ks(ranked, results, ("h", "g", "f", "e"), anchor="f")
    assert chosen == {"h": "h K=1", "g": "g K=4", "f": "f K=4", "e": None}
    assert display.profiled_ks(ranked.drop(index=0), results, ("g",), anchor="f") == {"g": "g K=2"}  # f failed
    said = display.profiled_k_text(ranked, results, "g K=4", same_k_as="f K=4")
    assert said == "`g K=4` is profiled: K = 1, 2, 4 of `g` share rank 3; it has the K of `f K=4`, so the steps are " \
                   "profiled at one K."
    assert "point speed-up" in display.profiled_k_text(ranked, results, "g K=2", same_k_as="f K=4")  # another K
    assert display.profiled_k_text(ranked, results, "f K=4", same_k_as="f K=4").endswith("the only K of `f` timed.")


def test_notebook_07_says_each_models_pipelining_bullet_with_the_gap_with_no_stop_check():
    """Review rr19b S2: notebook 07 asks for the gaps with the sync, pipelined and with no stop check: one paragraph a
    model, its pipelining bullet with the no-check gap beside the others (counted over all three passes), not claim
    6's cause bullet; where no no-check generator was profiled, the bullet as notebook 06 says it."""
    profile = three_passes(**this_run())
    results = pd.DataFrame({"variant": ["kv_static", "compiled kv_static"], "gpu_busy_share": [0.25, 0.6]})
    eager, compiled = pipelined_gap(with_shared(profile), results)
    assert eager.startswith("Notebook 06 (profiled). Eager, pipelining (claim 7): the GPU idles 90% of the window with "
                            "the sync, 91% pipelined (medians, not judged); the gap before a step is 250.0 µs with "
                            "the sync, 450.0 µs pipelined, 200.0 µs with no stop check: pipelining does not close "
                            "half")  # fmt: skip
    # notebook 07 shows no cause bullet: its pipelining bullet says itself that no interval was recorded (rv19A S2)
    assert eager.count(tokgen.gaps.NO_INTERVAL) == 1
    assert "1000.0 µs with the sync, 660.0 µs pipelined, 499.0 µs with no stop check: " in compiled
    assert "claim 6" not in eager + compiled and "opens most of it" not in eager + compiled
    plain = profile[~profile["variant"].str.endswith("no_check")]  # no no-check generator: 06's bullet as it is
    gaps = idle_gaps(plain)
    assert pipelined_gap(plain, results)[0].startswith(f"Notebook 06 (profiled). {gap_takeaway(gaps.iloc[0])[1]}")


# --- whether the rounds' times drifted over the rounds (review rv19A S4), N5's digits, N6's memory sentence ---


def timed_rows(spec: dict[str, list[float]], seed: int = 1) -> pd.DataFrame:
    return pd.DataFrame([{"variant": n, "status": "ok", "times_ms": ";".join(map(str, t)), "order_seed": seed}
                         for n, t in spec.items()])  # fmt: skip


def pooled(over: str) -> str:
    per_round = "per round, the median of each variant's time over its own median"
    return f"The rounds' own times (pooled over {over}: {per_round}): "


NO_PAIR_DRIFT = (" No drift of the paired ratios was detected: for the compared pair, the log of its time ratio "
                 "against the round over its shared rounds, p ≥ 0.05; a drift is not ruled out.")  # fmt: skip
ABOVE = (" The medians, ms per step and GPU shares above are over the rounds they name and would read differently over "
         "others.")  # fmt: skip


def test_round_trend_says_a_falling_series_fell_unjudged_and_no_trend_detected_for_a_flat_one():
    """Reviews rv19A S4, rr20i S2, S3. Falling: both variants' times fall by 1 ms (a: 200 − r) or 0.5 ms (b: 100 − r/2)
    a round, so the pooled index is (200 − r) / 159.5 in every round: ρ = −1, no permutation reaches it (p = 1/20001);
    rounds 41–80 (median at r = 60.5) 139.5 / 159.5 = 0.87 against rounds 1–20 (at r = 10.5) 189.5 / 159.5 = 1.19, as
    two medians, not judged, no percentage. Their ratio a/b is 2 in every round: no drift of the pair."""
    falling = [200.0 - r for r in range(1, 81)]
    said = display.round_trend(timed_rows({"a": falling, "b": [100 - r / 2 for r in range(1, 81)]}))
    assert said == (pooled("its 2 variants, all of which ran every round") + "times fell over the 80 rounds (Spearman "
                    "ρ = −1.00 against the round, p < 0.001): the pooled per-round index's median is 0.87 in rounds "
                    "41–80 against 1.19 in rounds 1–20 (not judged)." + NO_PAIR_DRIFT + ABOVE)  # fmt: skip
    # one variant: no pair, no word on pairs (rr20i N3); 179.5 / 159.5 = 1.13 against 129.5 / 159.5 = 0.81
    rising = display.round_trend(timed_rows({"a": falling[::-1]}))
    assert rising == (pooled("its one variant") + "times rose over the 80 rounds (Spearman ρ = +1.00 against the "
                      "round, p < 0.001): the pooled per-round index's median is 1.13 in rounds 41–80 against 0.81 in "
                      "rounds 1–20 (not judged)." + ABOVE)  # fmt: skip
    # flat: a deterministic wobble with no drift, the same backwards: ρ = 0, "no trend detected", not "no trend"
    flat = [100.0 + (r * 7) % 5 for r in range(80)]
    said = display.round_trend(timed_rows({"a": flat, "b": flat[::-1]}))
    assert said.startswith(pooled("its 2 variants, all of which ran every round") + "no trend detected over the 80 "
                           "rounds (Spearman ρ = 0.00 against the round, p = 1.000; a drift of this size is not ruled "
                           "out).")  # fmt: skip
    assert display.round_trend(timed_rows({"a": falling[:5]})) == pooled("its one variant") + (
        "too few rounds (5) to look for a trend across them.")
    assert display.round_trend(timed_rows({"a": falling}).drop(columns="times_ms")) == ""
    # two comparisons (two order seeds): one clause each, named by their variants, the tests said unadjusted
    two = pd.concat([timed_rows({"a": falling}, seed=1), timed_rows({"c": flat}, seed=2)])
    said = display.round_trend(two)
    assert said.startswith("The rounds' own times, each comparison apart (per round, the median of each variant's "
                           "time over its own median; each tested at 0.05, not adjusted for the 2 comparisons): `a` "
                           "(pooled over its one variant): times fell over the 80 rounds")  # fmt: skip
    assert "`c` (pooled over its one variant): no trend detected over the 80 rounds" in said


def test_round_trend_pools_only_the_variants_that_ran_every_round():
    """Review rr20i S1. Sequential: b stopped at 40 rounds (flat, 100 ms); only a ran all 80, so the index is a's
    alone, (200 − r) / 159.5 (0.87 against 1.19), and the sentence names it. With b pooled in rounds 1–40 it would
    read 0.78 against 1.03. Review rr20k N4: "pooled over `a`, the one …", not "the 1 of 2 variants"."""
    falling = [200.0 - r for r in range(1, 81)]
    said = display.round_trend(timed_rows({"a": falling, "b": [100.0] * 40}), pairs=[])
    assert said.startswith(pooled("`a`, the one of the 2 variants that ran all 80 rounds") + "times fell over the 80 "
                           "rounds (Spearman ρ = −1.00 against the round, p < 0.001): the pooled per-round index's "
                           "median is 0.87 in rounds 41–80 against 1.19 in rounds 1–20 (not judged).")  # fmt: skip
    # review rr20k N1: several pooled are named, or those left out where they are fewer, each with its rounds
    flat = [100.0 + (r * 7) % 5 for r in range(80)]
    said = display.round_trend(timed_rows({"a": flat, "b": flat, "c": flat, "d": flat[:40]}), pairs=[])
    assert said.startswith(pooled("the 3 of 4 variants that ran all 80 rounds (all but `d`: 40 rounds)"))
    said = display.round_trend(timed_rows({"a": flat, "b": flat, "c": flat[:40], "d": flat[:30]}), pairs=[])
    assert said.startswith(pooled("the 2 of 4 variants that ran all 80 rounds (`a` and `b`)"))


def test_round_trend_stays_at_its_rate_when_most_variants_stop_at_a_look():
    """Review rr20i S1: with no drift at all (skewed noise, the same in every round), 12 of 13 variants stopping at
    round 40 must not make a drift appear: "no trend detected" in at least 90% of 100 seeds (nominal 95%; pooling
    every variant that ran a round read a drift in about 16%)."""
    found = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        spec = {f"v{i}": (100 * (1 + i / 10) * (1 + rng.exponential(0.1, 80 if i == 0 else 40))).tolist()
                for i in range(13)}  # fmt: skip
        found += "no trend detected" in display.round_trend(timed_rows(spec), pairs=[])
    assert found >= 90


def test_round_trend_pools_by_the_median_of_ok_rows_and_counts_quarters_up():
    """Review rr20i N6. (a) A failed row with wild times is left out; (b) three variants, one an outlier that falls
    a thousandfold: the median over variants follows the two constant ones, a mean would follow the outlier; (c) 10
    rounds: the first quarter is rounds 1–3 (ceil(10/4)), the second half 6–10."""
    flat = [100.0 + (r * 7) % 5 for r in range(80)]
    wild = timed_rows({"x": [1000.0 - 10 * r for r in range(80)]}).assign(status="failed")
    said = display.round_trend(pd.concat([timed_rows({"a": flat, "b": flat[::-1]}), wild]), pairs=[])
    assert "no trend detected" in said and "2 variants" in said and "`x`" not in said
    outlier = [1000.0 / (1 + r) for r in range(80)]
    said = display.round_trend(timed_rows({"a": [100.0] * 80, "b": [50.0] * 80, "c": outlier}), pairs=[])
    assert "no trend over the 80 rounds (every round alike)" in said  # a and b at 1.00: the median is 1.00 each round
    ten = display.round_trend(timed_rows({"a": [200.0 - r for r in range(1, 11)]}))
    assert "in rounds 6–10 against" in ten and "in rounds 1–3 (not judged)" in ten


def test_round_trend_names_the_pairs_whose_ratio_drifted():
    """Review rr20i M1: a drift that moves two variants by different factors does not cancel in their ratio, so it is
    tested: a falls by 1 ms a round, b stays at 100 ms, so log(a/b) falls in every round (ρ = −1, p = 1/20001); c falls
    as a does, by the same factor, so a/c is constant (no drift). Only the pairs asked for are tested; the p-values are
    Holm-adjusted over them (review rr20k S2: 2 × 1/20001 < 0.001), and the consequence is a possibility."""
    falling = [200.0 - r for r in range(1, 81)]
    rows = timed_rows({"a": falling, "b": [100.0] * 80, "c": [x / 2 for x in falling]})
    said = display.round_trend(rows, pairs=[("a", "b", (1.5,)), ("a", "c")])
    assert (" A drift of the paired ratio over the rounds was detected for 1 of the 2 compared pairs (the log of "
            "each pair's time ratio against the round, its p-value Holm-adjusted over the 2 pairs, 0.05 family-wise): "
            "`a`/`b` over its 80 rounds (fell: ρ = −1.00, p < 0.001, adjusted p < 0.001); the paired speed-ups of that "
            "pair may read differently over other rounds.") in said  # fmt: skip
    said = display.round_trend(rows, pairs=[("b", "a")], ratios="paired ratios", scope="the pairs the looks follow")
    assert (" A drift of the paired ratio over the rounds was detected for 1 of the 1 compared pair (the pairs the "
            "looks follow) (the log of each pair's time ratio against the round, tested at 0.05): `b`/`a` over its 80 "
            "rounds (rose: ρ = +1.00, p < 0.001); the paired ratios of that pair may read differently") in said
    said = display.round_trend(rows, pairs=[("a", "c"), ("b", "b")], scope="the pairs the looks follow")
    assert (" No drift of the paired ratios was detected: for each of the 2 compared pairs (the pairs the looks "
            "follow), the log of its time ratio against the round over its shared rounds, Holm-adjusted p ≥ 0.05 "
            "(adjusted over the 2 pairs); a drift is not ruled out.") in said  # fmt: skip
    assert "moves both alike" not in said and "`a`/`c`" not in said
    said = display.round_trend(rows, pairs=[("a", "c")])
    assert NO_PAIR_DRIFT in said
    # every two variants of a comparison where no pairs are named: a/b and b/c drift, a/c does not
    said = display.round_trend(rows)
    assert "for 2 of the 3 compared pairs" in said and "`a`/`b`" in said and "`b`/`c`" in said
    assert "the paired speed-ups of those pairs may read differently" in said
    # a pair under TREND_MIN_ROUNDS shared rounds is not tested
    assert "paired" not in display.round_trend(timed_rows({"a": falling, "b": [100.0] * 5}))


def test_round_trend_does_not_count_a_pair_it_could_not_test():
    """Review rr20k N2: `c` has a NaN round time, so its pair with `a` is not tested; `a`/`b` alone is ("the compared
    pair", not "each of the 2"), and the Holm adjustment is over that one."""
    flat = [100.0 + (r * 7) % 5 for r in range(80)]
    c = list(flat)
    c[3] = float("nan")
    said = display.round_trend(timed_rows({"a": flat, "b": flat[::-1], "c": c}), pairs=[("a", "b"), ("a", "c")])
    assert NO_PAIR_DRIFT in said and "each of the 2" not in said


def test_holm_adjusts_step_down_and_keeps_the_order():
    """Review rr20k S2, known answers: 0.01, 0.04, 0.03 (m = 3) → 0.03 (3 × 0.01), 0.06 (0.04 × 1, raised to 0.06 by
    the step before), 0.06 (0.03 × 2); capped at 1."""
    assert display.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert display.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0]) and display.holm([]) == []


def test_round_trend_names_a_pair_by_chance_at_most_about_alpha_of_the_time(monkeypatch):
    """Review rr20k S2: no drift at all (i.i.d. skewed noise, 10 variants, notebook 07's 12 pairs, 80 rounds): a pair
    is named in at most 7% of 200 seeds (Holm, family-wise 5%; each pair at 0.05 unadjusted named one in about 41%).
    `rank_trend` at 2,000 draws here (p's resolution 1/2001, far below 0.05 / 12) to keep the test short."""
    import functools

    from tokgen import stats

    monkeypatch.setattr(display, "rank_trend", functools.partial(stats.rank_trend, draws=2000))
    names = [f"v{i}" for i in range(10)]
    ends = [(0, 1), (0, 2), (0, 3), (1, 4), (1, 5), (2, 6), (2, 7), (3, 8), (3, 9), (4, 5), (6, 7), (8, 9)]
    pairs = [(names[i], names[j]) for i, j in ends]
    named = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        spec = {n: (100 * (1 + i / 10) * (1 + rng.exponential(0.1, 80))).tolist() for i, n in enumerate(names)}
        said = display.round_trend(timed_rows(spec), pairs=pairs)
        assert "would read differently over other rounds" not in said.split("The medians")[0]
        named += "was detected for" in said
    assert named <= 14


def test_round_trend_says_a_missing_round_time_was_not_computed():
    """Review rr20i N2: one NaN round time gives no ρ and no "every round alike"."""
    times = [100.0 + r for r in range(20)]
    times[3] = float("nan")
    said = display.round_trend(timed_rows({"a": times}))
    assert said == pooled("its one variant") + "not computed over the 20 rounds (a round's time is missing)."


def test_the_bound_table_gives_each_column_one_count_of_decimals():
    """Review rv19A N5: a busy time of 0.996 ms per step reads "1.00" beside "1.43", not "0.996"; the GPU share column
    takes the decimals its nearest cell to 0 or 1 needs (0.9996: four), in every row."""
    rows = pd.DataFrame({"variant": ["a", "b"], "status": "ok", "steps": 10, "ms_per_step": [3.0, 7.0],
                         "gpu_busy_ms": [9.96, 14.3], "gpu_busy_share": [0.9996, 0.2]})  # fmt: skip
    bound = display.bound_table(rows)
    assert "| a | 3.00 | 1.00 | 2.00 | 0.9996 | GPU |" in bound
    assert "| b | 7.00 | 1.43 | 5.57 | 0.2000 | host |" in bound


def test_the_memory_sentence_sets_two_streams_against_one_unjudged():
    """Review rv19A N6: notebook 07's memory table read in one sentence, from its rows (one run each)."""
    mem = pd.DataFrame({"variant": ["kv_static", "pipelined_static", "pipelined_static_1stream"],
                        "generator": ["kv_static", "pipelined_static", "pipelined_static_1stream"],
                        "peak_reserved_gb": [1.999, 2.043, 1.999], "frag_pct": [4.8, 6.9, 4.8]})  # fmt: skip
    assert display.memory_text(mem) == (
        "Two streams (`pipelined_static`) reserved 0.044 GB more than one (`pipelined_static_1stream`) at the peak: "
        "2.043 against 1.999 GB, fragmentation 7% against 5% of reserved (one run each, not judged).")
    same = mem.assign(peak_reserved_gb=2.0)
    assert "reserved as much as one" in display.memory_text(same)
    assert display.memory_text(mem[mem["generator"] != "pipelined_static"]) == ""
    # eager and compiled rows of each generator (review rr20i N4): the eager pair, not a crash
    both = pd.concat([mem.assign(compiled=False), mem.assign(compiled=True, peak_reserved_gb=9.0,
                      variant="compiled " + mem["variant"])])  # fmt: skip
    assert display.memory_text(both) == display.memory_text(mem)
    compiled_only = both[both["compiled"] | (both["generator"] != "pipelined_static")]
    said = display.memory_text(compiled_only)
    assert "(`compiled pipelined_static`) reserved as much as one (`compiled pipelined_static_1stream`)" in said


def test_every_notebook_that_prints_the_host_probe_line_says_the_rounds_trend_under_it():
    """Review rv19A S4: the bound table ends with the host probe's line; the next line of each notebook that prints
    it is the rounds' trend, over the same rows."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    shown = 0
    for path in sorted((root / "notebooks").glob("*.py")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if m := re.fullmatch(r"say\(tokgen\.display\.bound_table\((.*)\)\)", line):
                trend = lines[i + 1]
                assert re.match(rf"say\(tokgen\.display\.round_trend\({re.escape(m[1])}(\)|, pairs=)", trend), path
                # the pairs the notebook compares are the pairs whose ratio it tests for a drift (review rr20i M1)
                compared = re.search(r"tokgen\.compare\(.*pairs=(\w+)", path.read_text())
                assert compared is None or re.search(rf"pairs={compared[1]}[,)]", trend), path.name
                # review rr20k S1: notebook 01 compares its doublings, read as claim 1 reads them (t(2N) / t(N)):
                # a ratio of times, not a speed-up; notebook 08 compares its two variants, every two
                if path.name == "01_naive.py":
                    assert 'pairs=doublings, ratios="paired ratios"' in trend
                    assert ('doublings = [(long, short) for short, long in zip(ok["variant"], ok["variant"].iloc[1:])]'
                            in lines[i - 1])  # fmt: skip
                elif compared is None:
                    assert "pairs=" not in trend, path.name
                if path.name == "07_pipelining.py":  # review rr20k N3: its rankings read pairs the looks do not
                    assert 'scope="the pairs the looks follow; the rankings' in trend
                shown += 1
    assert shown == 5  # notebooks 01, 02, 05, 07 and 08


def test_pdl_gain_text_says_the_switch_also_turns_off_the_l2_prefetch():
    """rv20B M2: `tokgen.kernels.PDL = False` also turns off `_linear_kernel`'s L2 prefetch of its weights, so
    the speed-up of PDL on against off is the early launch and the prefetch together: the sentence says so."""
    from tokgen.stats import gain
    from tokgen.voice import speedup_text

    off, on = [10.0 + 0.1 * i for i in range(8)], [9.0 + 0.1 * i for i in range(8)]
    run = pd.DataFrame([{"variant": n, "status": "ok", "times_ms": ";".join(map(str, t)), "median_ms": t[4]}
                        for n, t in (("off", off), ("on", on))])  # fmt: skip
    g = gain(run, "off", "on")
    text = display.pdl_gain_text(g)
    assert text.startswith(f"PDL on against off: {speedup_text(g)}.")
    assert "early launch and `_linear_kernel`'s L2 prefetch of its weights together, not separated" in text


def test_step_headers_name_notebook_10s_per_token_columns_per_decode_step():
    """rv20B S4: the profile and kernel tables of notebook 10 showed "µs per token" for a decode step of B tokens
    (470 µs at B = 32 read as one token's time is 32× too much): the headers say per decode step, the CSV columns
    keep their names."""
    from tokgen.voice import table

    rows = pd.DataFrame({"kind": ["matmul"], "tokens": [4], "kernels_per_token": [98.0], "us_per_token": [470.237],
                         "own_us_per_token": [400.0]})  # fmt: skip
    text = table(display.step_headers(rows), digits=3)
    assert text.splitlines()[0] == ("| kind | decode steps | kernels per decode step | µs per decode step | "
                                    "own µs per decode step |")  # fmt: skip
    assert "per token" not in text and list(rows.columns)[2] == "kernels_per_token"


def test_solution_10_names_the_added_steps_mean_cost_and_the_pdl_switchs_two_effects():
    """rv20B S6: exercise 2's difference of two lengths over their steps is the mean cost of the added steps (which
    read more cached slots), not "one more step"; M2: exercise 4's markdown says PDL off also turns off the L2
    prefetch, and its sentence comes from `pdl_gain_text`."""
    from pathlib import Path

    source = (Path(__file__).resolve().parents[1] / "solutions" / "10_cuda_graphs.py").read_text()
    assert "one more step" not in source and "per extra step" not in source
    assert 'f"mean µs per step of {added} (median of rounds)"' in source
    assert "the early launch and the L2 prefetch together, not separated" in " ".join(
        line.lstrip("# ") for line in source.splitlines())  # fmt: skip
    assert "tokgen.display.pdl_gain_text(" in source
