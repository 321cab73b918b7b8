"""The harness's numbers against answers known by hand: a fake clock and a fake GPU on the CPU.

A run's time, its quartiles, its memory peaks, the bytes a generation must move and its floor:
each test builds data whose answer is worked out in the comments, so that a small mistake in
tokgen.bench, tokgen.memory, tokgen.bandwidth or tokgen.agreement (a synchronize dropped, two
quartiles swapped, a mean for a median, fragmentation over allocated instead of reserved memory)
changes a number that is pinned here (issue 45; tools/mutation.sh measures how many such
mistakes these tests catch).
"""

import math
import os
import random
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from tokgen import bandwidth, bench, memory, profiling
from tokgen.bench import Variant
from tokgen.results import MissingRows, Recorder, load, run_of

TICK = 1 / 64  # seconds: every duration below is a whole number of ticks, so every millisecond is exact
MS = 1e3 * TICK  # 15.625 ms per tick


class FakeGpu:
    """A CUDA device simulated on the CPU: a clock that host work and `synchronize` advance, device
    work queued until someone waits for it, and peak memory since the last reset."""

    def __init__(self):
        self.now = 0.0  # seconds
        self.queued = 0.0  # device work launched and not yet waited for
        self.events = []
        self.syncs = self.resets = self.emptied = 0
        self.allocated = self.reserved = 0  # peak bytes since the last reset
        self.retries = self.ooms = 0  # the allocator's counts since the last reset of its accumulated stats
        self.profiled = []
        self.devices = []  # (call, device) of the calls that name one

    def perf_counter(self):
        self.events.append("clock")
        return self.now

    def synchronize(self, device=None):
        self.devices.append(("synchronize", device))
        self.syncs += 1
        self.events.append("sync")
        self.now += self.queued
        self.queued = 0.0

    def work(self, host_ticks, device_ticks, allocated=0, reserved=0, retries=0):
        """One run: the host busy `host_ticks`, the device `device_ticks` more after it returns; the
        allocator freed its cache and retried `retries` times."""
        self.now += host_ticks * TICK
        self.queued += device_ticks * TICK
        self.allocated, self.reserved = max(self.allocated, allocated), max(self.reserved, reserved)
        self.retries += retries

    def reset_peak_memory_stats(self, device=None):
        self.devices.append(("reset_peak_memory_stats", device))
        self.resets += 1
        self.allocated = self.reserved = 0

    def reset_accumulated_memory_stats(self, device=None):
        self.devices.append(("reset_accumulated_memory_stats", device))
        self.retries = self.ooms = 0

    def empty_cache(self):
        self.emptied += 1

    def memory_stats(self, device=None):
        self.devices.append(("memory_stats", device))
        return {"allocated_bytes.all.peak": self.allocated, "reserved_bytes.all.peak": self.reserved,
                "num_alloc_retries": self.retries, "num_ooms": self.ooms,
                **getattr(self, "device_calls", {})}  # fmt: skip

    def get_device_properties(self, device=None):
        self.devices.append(("get_device_properties", device))
        return SimpleNamespace(total_memory=80e9)

    def gpu_busy_ms(self, run):
        self.profiled.append(run)
        return 187.5


@pytest.fixture
def gpu(monkeypatch):
    fake = FakeGpu()
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=fake.perf_counter))
    for name in ("synchronize", "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache",
                 "memory_stats", "get_device_properties"):  # fmt: skip
        monkeypatch.setattr(torch.cuda, name, lambda *a, _name=name, **k: getattr(fake, _name)(*a, **k))
    monkeypatch.setattr(bench, "gpu_busy_ms", fake.gpu_busy_ms)
    return fake


def scripted(gpu, name, ticks, steps=5, info=None, memory_by_call=None, fail=None):
    """A variant whose k-th call takes ticks[k] (half on the host, half queued on the device), returns
    `steps` steps of 2 rows, and raises `fail[k]` at call k; calls are counted in `.calls`."""
    calls = []

    def run():
        k = len(calls)
        calls.append(k)
        if fail and k in fail:
            raise fail[k]
        allocated, reserved, *retries = (memory_by_call or {}).get(k, (0, 0))
        gpu.work(ticks[k] / 2, ticks[k] / 2, allocated, reserved, *retries)
        return torch.zeros(2, 1 + steps, dtype=torch.long)

    v = Variant(name, run, info or {})
    v.calls = calls
    return v


# --- bench.time_run: the device synchronized before and after ---


def test_time_run_waits_for_earlier_work_before_and_for_its_own_after(gpu):
    gpu.queued = 40 * TICK  # an earlier call's device work, still running: not this run's time

    def run():
        gpu.work(8, 16)  # 8 ticks on the host, then 16 more on the device
        return "tokens"

    ms, out = bench.time_run(run, torch.device("cuda"))
    # without the first synchronize: (40 + 8 + 16) ticks = 1000 ms; without the second: 8 ticks = 125 ms
    assert (ms, out) == (24 * MS, "tokens") == (375.0, "tokens")
    assert gpu.events == ["sync", "clock", "sync", "clock"]


def test_time_run_on_the_cpu_waits_for_nothing(gpu):
    ms, _ = bench.time_run(lambda: gpu.work(8, 16), torch.device("cpu"))
    assert ms == 8 * MS and gpu.syncs == 0  # the fake "device" work is never waited for on the CPU


# --- bench.compare: the rows it writes ---

# a's timed calls take 32, 8, 96, 16, 24 ticks: 500, 125, 1500, 250, 375 ms, in that order.
# Sorted 125, 250, 375, 500, 1500: median 375 (the mean, 550, is far from it), quartiles by the
# inclusive method at positions 1 and 3 of 0..4: 250 and 500. 5 steps: 75 ms per step.
A_TICKS = [64, 32, 8, 96, 16, 24]  # the first is the warm-up: first_call_ms 1000
# b: 10, 2, 6, 4, 8 ticks = 156.25, 31.25, 93.75, 62.5, 125 ms; median 93.75, quartiles 62.5 and 125
B_TICKS = [4, 10, 2, 6, 4, 8]
GB = 10**9


def test_compare_writes_the_known_times_quartiles_memory_and_order(gpu):
    # a's peaks: 5 GB allocated / 8 GB reserved in its early runs, 1 / 4 GB in its last: with the
    # peaks reset before each run, its row holds the last run's, fragmentation (4 - 1) / 4 = 75% of reserved;
    # so do the allocator's retries: 3 in each early run, 2 in the last (not 3 × 5 + 2 = 17)
    a = scripted(gpu, "a", A_TICKS, info={"generator": "kv_static", "batch_size": 2},
                 memory_by_call={k: (5 * GB, 8 * GB, 3) for k in range(5)} | {5: (1 * GB, 4 * GB, 2)})  # fmt: skip
    b = scripted(gpu, "b", B_TICKS, steps=4, info={"generator": "graph_stop_on_device"},
                 memory_by_call={k: (2 * GB, 2 * GB) for k in range(6)})  # fmt: skip
    recorded = []
    res = bench.compare([a, b], rounds=5, device="cuda", record=recorded.append, seed=3)
    orders = bench.round_orders(2, 5, random.Random(3))
    ra, rb = res.to_dict("records")
    pd.testing.assert_frame_equal(pd.DataFrame(recorded), res)  # each row went to `record` as returned
    assert list(res["variant"]) == ["a", "b"]
    assert {k: ra[k] for k in ("status", "error", "runs", "steps", "order_seed", "generator", "batch_size")} == {
        "status": "ok", "error": "", "runs": 5, "steps": 5, "order_seed": 3, "generator": "kv_static", "batch_size": 2
    }  # fmt: skip
    assert ra["times_ms"] == "500.000000;125.000000;1500.000000;250.000000;375.000000"  # the rounds' order, not sorted
    assert (ra["median_ms"], ra["q25_ms"], ra["q75_ms"]) == (375.0, 250.0, 500.0)
    assert (ra["mean_ms"], ra["min_ms"], ra["max_ms"], ra["ms_per_step"]) == (550.0, 125.0, 1500.0, 75.0)
    assert ra["std_ms"] == pytest.approx(math.sqrt((50**2 + 425**2 + 950**2 + 300**2 + 175**2) / 4))
    assert ra["first_call_ms"] == 1000.0 and ra["slice_escapes"] == 0
    assert ra["positions"] == ";".join(str(o.index(0)) for o in orders)
    assert rb["positions"] == ";".join(str(o.index(1)) for o in orders)
    assert rb["times_ms"] == "156.250000;31.250000;93.750000;62.500000;125.000000"
    assert (rb["median_ms"], rb["q25_ms"], rb["q75_ms"], rb["ms_per_step"]) == (93.75, 62.5, 125.0, 93.75 / 4)
    # memory: peaks in GB, fragmentation = reserved - allocated, as a share of reserved
    assert (ra["peak_allocated_gb"], ra["peak_reserved_gb"], ra["frag_gb"], ra["frag_pct"]) == (1.0, 4.0, 3.0, 75.0)
    assert ra["device_memory_gb"] == 80.0 and (ra["num_alloc_retries"], ra["num_ooms"]) == (2, 0)
    assert (rb["frag_gb"], rb["frag_pct"], rb["num_alloc_retries"]) == (0.0, 0.0, 0)
    # GPU busy time: one profiled run after the rounds, but not of a loop that runs on the device
    assert gpu.profiled == [a.run] and ra["gpu_busy_ms"] == 187.5 and ra["gpu_busy_share"] == 187.5 / 375.0
    assert math.isnan(rb["gpu_busy_ms"]) and math.isnan(rb["gpu_busy_share"])
    # every run (1 warm-up + 5 timed, 2 variants): its peaks reset, synchronized 3 times (reset, before, after)
    assert len(a.calls) == len(b.calls) == 6
    assert gpu.resets == gpu.emptied == 12 and gpu.syncs == 36


def test_compare_on_the_cpu_or_without_gpu_busy_profiles_nothing(gpu):
    res = bench.compare([scripted(gpu, "a", A_TICKS)], rounds=5, device="cuda", gpu_busy=False)
    assert gpu.profiled == [] and math.isnan(res.loc[0, "gpu_busy_ms"]) and res.loc[0, "median_ms"] == 375.0
    res = bench.compare([scripted(gpu, "a", A_TICKS)], rounds=5, device="cpu")
    assert gpu.profiled == [] and gpu.resets == 6 and res.loc[0, "peak_allocated_gb"] is None
    # on the CPU nothing waits for the device: only the host half of each run is timed
    assert res.loc[0, "median_ms"] == 375.0 / 2 and res.loc[0, "frag_pct"] is None


def test_a_profiler_failure_costs_the_column_not_the_run(gpu, monkeypatch):
    message = "CUPTI busy " + "x" * 600

    def gpu_busy_ms(run):
        raise RuntimeError(message)

    monkeypatch.setattr(bench, "gpu_busy_ms", gpu_busy_ms)
    row = bench.compare([scripted(gpu, "a", A_TICKS)], rounds=5, device="cuda").iloc[0]
    assert row["status"] == "ok" and row["error"] == f"gpu_busy_ms: RuntimeError: {message}"[:500]
    assert math.isnan(row["gpu_busy_ms"]) and row["median_ms"] == 375.0


def test_a_profile_that_recorded_nothing_says_so_in_the_row(gpu, monkeypatch):
    monkeypatch.setattr(bench, "gpu_busy_ms", lambda run: float("nan"))  # a lost session
    row = bench.compare([scripted(gpu, "a", A_TICKS)], rounds=5, device="cuda").iloc[0]
    assert row["status"] == "ok" and row["error"] == "gpu_busy_ms: the profiler recorded no GPU activity"
    assert math.isnan(row["gpu_busy_ms"]) and row["median_ms"] == 375.0


@pytest.mark.parametrize(
    "exc, status",
    [
        (torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"), "oom"),
        (RuntimeError("CUDA error: Out Of Memory while capturing"), "oom"),  # told by its message
        (ValueError("bad shape"), "error"),
    ],
)
def test_a_failing_variant_keeps_its_finished_rounds_and_is_not_run_again(gpu, exc, status):
    failing = scripted(gpu, "f", A_TICKS, fail={3: exc})  # warm-up, two timed runs, then the failure
    fine = scripted(gpu, "ok", B_TICKS)
    res = bench.compare([failing, fine], rounds=5, device="cuda", seed=0).set_index("variant")
    f = res.loc["f"]
    assert (f["status"], f["error"]) == (status, f"{type(exc).__name__}: {exc}")
    assert (f["runs"], f["times_ms"], f["median_ms"], f["first_call_ms"]) == (2, "500.000000;125.000000", 312.5, 1000.0)
    assert len(f["positions"].split(";")) == 2 and len(failing.calls) == 4  # never called after it failed
    assert math.isnan(f["gpu_busy_ms"]) and gpu.profiled == [fine.run]  # a failed variant is not profiled
    assert res.loc["ok", "status"] == "ok" and res.loc["ok", "runs"] == 5
    # peaks reset before each of the 10 runs that started, and once more after the failure
    assert gpu.resets == 4 + 1 + 6


def test_a_variant_failing_in_its_warm_up_has_no_rounds_and_no_numbers(gpu):
    long = RuntimeError("x" * 600)
    res = bench.compare([scripted(gpu, "f", A_TICKS, fail={0: long})], rounds=3, device="cuda", warmup=2)
    row = res.iloc[0]
    assert row["status"] == "error" and row["error"] == ("RuntimeError: " + "x" * 600)[:500]
    assert (row["runs"], row["times_ms"], row["positions"], row["steps"]) == (0, "", "", None)
    assert row["first_call_ms"] is None or math.isnan(row["first_call_ms"])
    for key in ("median_ms", "mean_ms", "std_ms", "min_ms", "max_ms", "q25_ms", "q75_ms", "ms_per_step"):
        assert math.isnan(row[key]), key
    assert gpu.resets == 2  # before the one run that started, and after its failure


def test_warm_up_calls_are_untimed_and_the_first_is_reported(gpu):
    v = scripted(gpu, "a", [40, 64, 32, 8, 96, 16, 24])  # two warm-ups: 625 ms, then 1000 ms
    row = bench.compare([v], rounds=5, device="cuda", warmup=2, gpu_busy=False).iloc[0]
    assert len(v.calls) == 7 and row["first_call_ms"] == 625.0 and row["runs"] == 5
    assert row["times_ms"] == "500.000000;125.000000;1500.000000;250.000000;375.000000"
    cold = scripted(gpu, "a", A_TICKS[1:])
    row = bench.compare([cold], rounds=5, device="cuda", warmup=0, gpu_busy=False).iloc[0]
    assert len(cold.calls) == 5 and row["first_call_ms"] is None and row["median_ms"] == 375.0


def test_two_rounds_have_quartiles_and_a_spread(gpu):
    row = bench.compare([scripted(gpu, "a", [64, 32, 8])], rounds=2, device="cuda", gpu_busy=False).iloc[0]
    # 500 and 125 ms: the inclusive quartiles lie a quarter and three quarters of the way, 218.75 and 406.25
    assert (row["median_ms"], row["q25_ms"], row["q75_ms"]) == (312.5, 218.75, 406.25)
    assert row["std_ms"] == pytest.approx(375 / math.sqrt(2))


def test_one_round_has_a_median_but_no_spread(gpu):
    row = bench.compare([scripted(gpu, "a", [64, 32])], rounds=1, device="cuda", gpu_busy=False).iloc[0]
    assert (row["median_ms"], row["mean_ms"], row["min_ms"], row["max_ms"]) == (500.0, 500.0, 500.0, 500.0)
    assert math.isnan(row["q25_ms"]) and math.isnan(row["q75_ms"]) and math.isnan(row["std_ms"])
    assert row["ms_per_step"] == 100.0


def test_a_run_of_no_steps_has_no_time_per_step(gpu):
    row = bench.compare([scripted(gpu, "a", A_TICKS, steps=0)], rounds=5, device="cuda", gpu_busy=False).iloc[0]
    assert row["steps"] == 0 and row["median_ms"] == 375.0 and math.isnan(row["ms_per_step"])


def test_only_timed_runs_that_left_the_slice_are_counted(gpu, monkeypatch):
    """reconfine() before and after every run; an escape in the warm-up (compiling) is not counted."""
    left = {"now": False}

    class Slice:
        def confine(self):
            was, left["now"] = left["now"], False
            return was

    monkeypatch.setattr(bench.GpuSlice, "active", Slice())
    v = scripted(gpu, "a", A_TICKS)
    inner = v.run

    def run():
        out = inner()
        left["now"] = len(v.calls) in (1, 3, 5)  # the warm-up and timed runs 2 and 4 leave the slice
        return out

    row = bench.compare([Variant("a", run)], rounds=5, device="cuda", gpu_busy=False).iloc[0]
    assert row["slice_escapes"] == 2 and bench.reconfine() is False
    monkeypatch.setattr(bench.GpuSlice, "active", None)
    assert bench.reconfine() is False


@pytest.mark.parametrize("rounds", [0, -1, 2.0, True, "3"])
def test_rounds_must_be_a_positive_integer(rounds):
    with pytest.raises(ValueError, match=f"rounds must be a positive integer, got {rounds!r}"):
        bench.compare([], rounds=rounds, device="cpu")


@pytest.mark.parametrize("seed", [True, 1.5, "1"])
def test_seed_must_be_an_integer_or_none(seed):
    with pytest.raises(ValueError, match=f"seed must be an integer or None, got {seed!r}"):
        bench.compare([], rounds=1, device="cpu", seed=seed)


def test_round_orders_are_fresh_permutations_drawn_from_the_rng():
    orders = bench.round_orders(4, 6, random.Random(11))
    rng = random.Random(11)
    assert orders == [rng.sample(range(4), 4) for _ in range(6)]
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders) and len(orders) == 6


def test_generator_variant_names_and_runs_what_it_says(tiny):
    seen = []
    v = bench.generator_variant("graph_handwritten", tiny, batch_size=2, max_seqlen=9, steps_per_graph=2,
                                by=("batch_size",))  # fmt: skip
    assert v.name == "graph_handwritten K=2 B=2"
    assert v.info == {"generator": "graph_handwritten", "compiled": False, "batch_size": 2, "max_seqlen": 9,
                      "steps_per_graph": 2}  # fmt: skip
    # the profiler's hook reaches the loop, which replays K = 2 steps at a time (the option reaches it too)
    assert v.run(seen.append).shape == (2, 10) and seen == [0, 2, 4, 6, 8]
    with pytest.raises(ValueError, match=r"by: choose from max_seqlen, batch_size, got \('rounds',\)"):
        bench.generator_variant("naive", tiny, batch_size=1, max_seqlen=2, by=("rounds",))


class FakeTimeline:
    """A timeline's summary, and no step marker: `sync_wait` and `boundary_phases` find nothing in it."""

    def __init__(self, summary):
        self._summary = summary
        self.ranges = pd.DataFrame(columns=["name", "start", "end"])
        self.kernels = pd.DataFrame(columns=["name", "stream", "start", "end", "step", "launch"])
        self.marks = []

    def summary(self):
        return self._summary


def test_plain_runs_give_each_runs_step_without_a_warm_up(gpu):
    """Three plain runs of 8, 24 and 16 ticks (125, 375, 250 ms) over 5 steps: 25,000, 75,000 and
    50,000 µs a step, in the order they ran; no warm-up call (`profile_window` makes it)."""
    v = scripted(gpu, "a", [8, 24, 16])
    assert bench.plain_runs(v, "cuda", 3) == [25_000.0, 75_000.0, 50_000.0] and len(v.calls) == 3


def logged(gpu, log, name, ticks, variants):
    """A scripted variant whose calls, and the profiler's passes over it, go to `log` in the order they ran."""
    v = scripted(gpu, name, ticks, info={"generator": name})
    run = v.run
    v.run = lambda on_step=None: (log.append(("run", name)), run())[1]
    variants.append(v)
    return v


def test_profile_window_brackets_its_profiled_passes_with_plain_runs(gpu, monkeypatch):
    """A warm-up (64 ticks), two plain runs (8 and 24 ticks: 25,000 and 75,000 µs a step), the two
    profiled passes, two plain runs again (16 and 40 ticks: 50,000 and 125,000 µs). The yardstick is
    the bracket's four: median 62,500 µs, fastest 25,000, slowest 125,000; the profiled 75,000 µs is
    +20% of it (the runs before alone would give +50%, those after alone -14%). Each half apart: the
    median before 50,000 µs (its spread 75,000 - 25,000), after 87,500."""
    log, variants = [], []

    def profile_steps(run, start, stop, cpu=False, model=None, trace_path=None):
        log.append(("profile", cpu, model, trace_path))
        return FakeTimeline({"step_period_us": 75_000.0, "steps": stop - start})

    monkeypatch.setattr(bench, "profile_steps", profile_steps)
    v = logged(gpu, log, "a", [64, 8, 24, 16, 40], variants)
    row, stats, picture = bench.profile_window(v, "cuda", start=2, stop=4, runs=2, model="m", trace_path="t.json")
    assert log == [("run", "a")] * 3 + [("profile", False, None, None), ("profile", True, "m", "t.json")] + [
        ("run", "a")] * 2  # fmt: skip
    assert row == {"generator": "a", "variant": "a", "step_period_us": 75_000.0, "steps": 2,
                   "unprofiled_step_us": 62_500.0, "unprofiled_runs": 4, "unprofiled_min_us": 25_000.0,
                   "unprofiled_max_us": 125_000.0, "profiled_vs_plain_pct": pytest.approx(20.0),
                   "unprofiled_before_us": 50_000.0, "unprofiled_after_us": 87_500.0,
                   "unprofiled_before_spread_us": 50_000.0, "sync_steps": 0,
                   **dict.fromkeys(["sync_us", "sync_queued_us", "sync_queued_steps", "sync_idle_steps",
                                    "sync_late_us", "copy_call_us", "copy_done_us", "after_copy_us",
                                    "picture_gap_us", "picture_check_us", "picture_span_us"],
                                   pytest.approx(math.nan, nan_ok=True)),
                   # every window's phase shares (review rv19A S3): none measured in this fake picture
                   **{f"phase_{k}_share": pytest.approx(math.nan, nan_ok=True) for k in profiling.SHARE_COLUMNS},
                   # and the phases' medians, none (review rv23A S2)
                   **{f"phase_{k}_median_us": pytest.approx(math.nan, nan_ok=True) for k in profiling.PHASES},
                   "picture_boundaries": 0}  # fmt: skip
    assert stats.summary() == picture.summary()
    monkeypatch.setattr(bench, "profile_steps", lambda *a, **k: FakeTimeline({"steps": 0}))
    row, _, _ = bench.profile_window(scripted(gpu, "b", [1, 1, 1]), "cuda", start=0, stop=1, runs=1)
    assert math.isnan(row["profiled_vs_plain_pct"])  # no steps profiled: nothing to set against the plain runs
    # the sync-wait columns come from the statistics pass, the gap and the check's tail from the pictures pass
    passes = iter(["stats", "picture"])
    monkeypatch.setattr(bench, "profile_steps", lambda *a, **k: FakeTimeline({"pass": next(passes)}))
    monkeypatch.setattr(bench, "sync_wait", lambda tl: pd.DataFrame(
        [{"step": 2, "queued_us": 0.0, "late_us": 9.0, "sync_us": 30.0 if tl.summary()["pass"] == "stats" else 99.0,
          "copy_us": 20.0, "copy_done_us": 1.0, "after_copy_us": 29.0}]))  # fmt: skip
    monkeypatch.setattr(bench, "boundary_phases", lambda tl: pd.DataFrame(
        [{"gap_us": 500.0 if tl.summary()["pass"] == "picture" else 1.0, "check_us": 300.0}]))  # fmt: skip
    row, _, _ = bench.profile_window(scripted(gpu, "c", [1, 1, 1]), "cuda", start=0, stop=1, runs=1)
    got = (row["sync_us"], row["sync_steps"], row["picture_gap_us"], row["picture_check_us"])
    assert got == (30.0, 1, 500.0, 300.0)


def test_profile_windows_bracket_each_variants_profiled_passes_with_its_own_plain_runs(gpu, monkeypatch):
    """Two variants, two windows in the orders [1, 0] and [0, 1], one plain run on each side of each
    profiled pair. Every variant's plain runs sit next to its own profiled passes, window by window
    in the windows' orders; each window's yardstick is its own bracket: a's plain steps are 50,000 µs
    (16 ticks, both sides) in window 0 and 100,000 (32 ticks) in window 1, its profiled ones 60,000
    and 100,000: +20% and +0%."""
    log, variants = [], []
    periods = {"a": [60_000.0, 100_000.0], "b": [30_000.0, 30_000.0]}  # the statistics' pass, per window

    def profile_steps(run, start, stop, cpu=False, model=None, trace_path=None):
        name = next(v.name for v in variants if v.run is run)
        log.append(("profile", name, cpu, model, trace_path))
        period = periods[name][sum(1 for e in log if e[:3] == ("profile", name, False)) - 1]
        return FakeTimeline({"step_period_us": period, "steps": stop - start})

    monkeypatch.setattr(bench, "profile_steps", profile_steps)
    # a: warm-up, 16, (profiled), 16 in window 0; warm-up, 32, (profiled), 32 in window 1
    logged(gpu, log, "a", [1, 16, 16, 1, 32, 32], variants)
    logged(gpu, log, "b", [1, 8, 8, 1, 8, 8], variants)
    recorded = []
    rows, first = bench.profile_windows(variants, "cuda", [[1, 0], [0, 1]], start=2, stop=4, runs=1,
                                        models={"a": "ma", "b": "mb"}, traces={"a": "a.json", "b": "b.json"},
                                        record=recorded.append)  # fmt: skip
    assert log == [e for n, t in (("b", "b.json"), ("a", "a.json"), ("a", None), ("b", None))
                   for e in (("run", n), ("run", n), ("profile", n, False, None, bench.stats_trace_of(t)),
                             ("profile", n, True, "m" + n, t), ("run", n))]  # fmt: skip
    assert [(r["window"], r["variant"]) for r in rows] == [(0, "b"), (0, "a"), (1, "a"), (1, "b")] and recorded == rows
    a0, a1 = rows[1], rows[2]
    assert (a0["unprofiled_step_us"], a0["profiled_vs_plain_pct"]) == (50_000.0, pytest.approx(20.0))
    assert (a1["unprofiled_step_us"], a1["profiled_vs_plain_pct"]) == (100_000.0, pytest.approx(0.0))
    assert set(first) == {"a", "b"} and first["a"][0].summary()["step_period_us"] == 60_000.0  # window 0's
    assert bench.stats_trace_of("d/06_a.json.gz") == Path("d/06_a_stats.json.gz") and bench.stats_trace_of(None) is None


# --- memory: peaks, fragmentation, the allocator's switch ---


def test_memory_peaks_in_gb_and_fragmentation_as_a_share_of_reserved(gpu):
    gpu.allocated, gpu.reserved, gpu.retries, gpu.ooms = 6 * GB, 8 * GB, 3, 1
    gpu.device_calls = {"num_device_alloc": 120, "num_device_free": 7}  # cudaMalloc / cudaFree since the reset
    assert memory.memory_peaks(torch.device("cuda")) == {
        "peak_allocated_gb": 6.0, "peak_reserved_gb": 8.0, "frag_gb": 2.0, "frag_pct": 25.0, "device_memory_gb": 80.0,
        "num_alloc_retries": 3, "num_ooms": 1, "num_device_alloc": 120, "num_device_free": 7,
    }  # fmt: skip
    del gpu.device_calls
    gpu.allocated = gpu.reserved = 0
    assert memory.memory_peaks(torch.device("cuda:1"))["frag_pct"] == 0.0  # nothing reserved: no division by zero
    assert gpu.devices[-2:] == [("memory_stats", torch.device("cuda:1")), ("get_device_properties",
                                                                          torch.device("cuda:1"))]  # fmt: skip
    gpu.memory_stats = lambda device: {}  # no allocation since the reset: no peaks recorded at all
    assert memory.memory_peaks(torch.device("cuda")) == {
        "peak_allocated_gb": 0.0, "peak_reserved_gb": 0.0, "frag_gb": 0.0, "frag_pct": 0.0, "device_memory_gb": 80.0,
        "num_alloc_retries": 0, "num_ooms": 0, "num_device_alloc": 0, "num_device_free": 0,
    }  # fmt: skip
    assert memory.memory_peaks(torch.device("cpu")) == dict.fromkeys(
        ("peak_allocated_gb", "peak_reserved_gb", "frag_gb", "frag_pct", "num_alloc_retries", "num_ooms",
         "num_device_alloc", "num_device_free")
    )  # fmt: skip


def test_reset_memory_empties_the_cache_resets_the_peaks_and_the_retry_counts_and_waits(gpu):
    gpu.allocated, gpu.queued, gpu.retries, gpu.ooms = 5 * GB, 3 * TICK, 2, 1
    memory.reset_memory(torch.device("cuda:1"))
    assert (gpu.emptied, gpu.resets, gpu.syncs, gpu.allocated, gpu.queued) == (1, 1, 1, 0, 0.0)
    assert (gpu.retries, gpu.ooms) == (0, 0)  # a row's counts are its own run's
    assert [call for call, _ in gpu.devices] == [
        "reset_peak_memory_stats", "reset_accumulated_memory_stats", "synchronize"
    ] and {device for _, device in gpu.devices} == {torch.device("cuda:1")}  # fmt: skip
    memory.reset_memory(torch.device("cpu"))
    assert (gpu.emptied, gpu.resets, gpu.syncs) == (1, 1, 1)


def test_set_expandable_segments_passes_the_setting_to_the_allocator(monkeypatch):
    said = []
    monkeypatch.setattr(torch._C, "_accelerator_setAllocatorSettings", said.append, raising=False)
    monkeypatch.setattr(torch.cuda.memory, "_set_allocator_settings", lambda setting: pytest.fail("the older setter"))
    memory.set_expandable_segments(True)
    memory.set_expandable_segments(False)
    assert said == ["expandable_segments:True", "expandable_segments:False"]
    monkeypatch.delattr(torch._C, "_accelerator_setAllocatorSettings")  # an older torch: the CUDA setter
    monkeypatch.setattr(torch.cuda.memory, "_set_allocator_settings", said.append)
    memory.set_expandable_segments(True)
    assert said[-1] == "expandable_segments:True"


@pytest.mark.parametrize(
    "segments, expected",
    [
        ([{"address": 0, "total_size": 5000}, {"address": 5000, "total_size": 100, "is_expandable": True}], True),
        ([{"address": 4000, "total_size": 1001, "is_expandable": False}], False),
        ([{"address": 5000, "total_size": 1}], False),  # is_expandable absent: not expandable
        ([{"address": 0, "total_size": 5000, "is_expandable": True}], None),  # ends just before the probe
        ([{"address": 5001, "total_size": 10, "is_expandable": True}], None),
    ],
)
def test_expandable_segments_active_reads_the_probes_segment(monkeypatch, segments, expected):
    made = []

    def empty(*size, dtype, device):
        made.append((size, dtype, device))
        return SimpleNamespace(data_ptr=lambda: 5000)

    emptied = []
    cuda = SimpleNamespace(empty_cache=lambda: emptied.append(len(made)),
                           memory=SimpleNamespace(_snapshot=lambda: {"segments": segments}))  # fmt: skip
    monkeypatch.setattr(memory, "torch", SimpleNamespace(empty=empty, uint8=torch.uint8, cuda=cuda))
    if expected is None:
        with pytest.raises(RuntimeError, match="^the probe allocation was not found in the allocator snapshot$"):
            memory.expandable_segments_active("cuda:1")
    else:
        assert memory.expandable_segments_active("cuda:1") is expected
        assert memory.expandable_segments_active() is expected  # on "cuda" by default
    probe = 64 * 2**20
    assert made == [((probe,), torch.uint8, "cuda:1"), ((probe,), torch.uint8, "cuda")][: len(made)]
    assert emptied == [0, 1][: len(made)]  # the cache emptied before each probe


# --- bandwidth: the bytes a generation moves, and its floor ---


class Toy(torch.nn.Module):
    """A model of known sizes: a position table of 10 rows of 4 floats (40 values) and 100 other
    values, all float32: 560 bytes; 2 layers of width 4."""

    def __init__(self):
        super().__init__()
        self.transformer = torch.nn.Module()
        self.transformer.wpe = torch.nn.Embedding(10, 4)
        self.other = torch.nn.Linear(9, 10)  # 90 weights and 10 biases
        self.config = SimpleNamespace(n_layer=2, n_embd=4, vocab_size=50)
        self.dtype = torch.float32


def test_bytes_of_a_generation_by_hand():
    toy = Toy()
    # all 560 bytes but the position table's 40 × 4, of which one row of 4 × 4 is read
    assert bandwidth.weight_bytes_per_step(toy) == 560 - 160 + 16 == 416
    # keys and values (2) × 2 layers × 3 rows × 5 positions × 4 floats × 4 bytes
    assert bandwidth.kv_bytes(toy, 3, 5) == 2 * 2 * 3 * 5 * 4 * 4 == 960
    # 3 steps of B = 1: the weights (416) and this step's keys and values (64) each step, plus what is read:
    assert bandwidth.generation_bytes(toy, 1, 3, "none") == 3 * (416 + 64) == 1440
    assert bandwidth.generation_bytes(toy, 1, 3, "filled") == 1440 + 64 * (0 + 1 + 2) == 1632
    assert bandwidth.generation_bytes(toy, 1, 3, "static") == 1440 + 3 * 64 * 3 == 2016
    assert bandwidth.generation_bytes(toy, 1, 3, "static", slots=5) == 1440 + 3 * 64 * 5 == 2400
    assert bandwidth.generation_bytes(toy, 1, 3) == 1632  # "filled" by default
    # at 2 GB/s: bytes / 2e9 s = bytes / 2e6 ms
    assert bandwidth.floor_ms(toy, 1, 3, 2.0) == pytest.approx(1632 / 2e6, rel=1e-12)
    assert bandwidth.floor_ms(toy, 1, 3, 2.0, "static", 5) == pytest.approx(2400 / 2e6, rel=1e-12)
    assert bandwidth.gpt2_products(toy) == {"attention qkv": (4, 12), "attention out": (4, 4), "mlp up": (4, 16),
                                            "mlp down": (16, 4), "LM head": (4, 50)}  # fmt: skip
    with pytest.raises(ValueError, match="kv_read must be 'filled', 'static', 'none' or 'recompute', got 'paged'"):
        bandwidth.generation_bytes(toy, 1, 3, "paged")


def test_floor_table_by_hand():
    bandwidth.cache_read.cache_clear()  # read each registry entry afresh
    toy = Toy()
    timed = pd.DataFrame(
        {
            "variant": ["kv_static", "naive", "graph_triton_kernels K=2", "graph_handwritten K=3"],
            "generator": ["kv_static", "naive", "graph_triton_kernels", "graph_handwritten"],
            "notebook": "12",
            "batch_size": 1,
            "max_seqlen": 3,
            "steps": 3,
            "steps_per_graph": [float("nan"), float("nan"), 2.0, 3.0],
            "median_ms": [0.004, 0.008, 0.002, 0.016],
            "status": "ok",  # not carried over
        }
    )
    floors = bandwidth.floor_table(timed, toy, 2.0)
    task = 1632 / 2e6  # the filled cache: 0.000816 ms
    # naive recomputes: 3 × the weights (416) + every position's logits, 50 floats × 4 bytes, at 1 + 2 + 3 positions
    naive = 3 * 416 + 200 * (1 + 2 + 3)
    assert list(floors["variant"]) == ["kv_static", "naive", "graph_triton_kernels K=2", "graph_handwritten K=3"]
    assert list(floors.index) == [0, 1, 2, 3]  # the table's order: no ranking
    assert list(floors.columns) == ["variant", "notebook", "median_ms", "kv_read", "bytes_floor_ms", "compute_floor_ms",
                                    "bound_by", "own_floor_ms", "pct_of_own_floor", "task_floor_ms",
                                    "times_task_floor", "rate_gb_s"]  # fmt: skip
    # K = 3 replays need a capacity that is a multiple of lcm(3, 16) = 48: its static cache has 48 slots
    assert list(floors["kv_read"]) == ["static (3 slots)", "recompute", "filled", "static (48 slots)"]
    own = [2016 / 2e6, naive / 2e6, task, (1440 + 3 * 64 * 48) / 2e6]
    assert list(floors["own_floor_ms"]) == pytest.approx(own)
    times = [0.004, 0.008, 0.002, 0.016]
    assert list(floors["pct_of_own_floor"]) == pytest.approx([100 * o / t for o, t in zip(own, times)])
    assert list(floors["task_floor_ms"]) == pytest.approx([task] * 4)
    assert list(floors["times_task_floor"]) == pytest.approx([t / task for t in times])


def test_cache_read_refuses_a_loop_it_cannot_classify(monkeypatch):
    from tokgen.graphs import generate_graph, graph_capacity

    entries = {
        "toy_unknown_step": partial(generate_graph, step="cuda"),
        "toy_unknown_loop": lambda model, **kw: None,
        "toy_filled_only": partial(generate_graph, step="transformers", filled_only=True),
        "toy_stop_on_device": partial(generate_graph, step="handwritten", stop_on_device=True),
    }
    monkeypatch.setattr(bandwidth, "get_generator", entries.__getitem__)
    bandwidth.cache_read.cache_clear()  # answers remembered from other tests would hide what is read here
    with pytest.raises(ValueError, match="toy_unknown_step: step 'cuda' is in neither FILLED_STEPS nor ALL_SLOTS"):
        bandwidth.cache_read("toy_unknown_step", 10)
    with pytest.raises(ValueError, match=r"toy_unknown_loop: how does its loop '<lambda>' read the cache\?"):
        bandwidth.cache_read("toy_unknown_loop", 10)
    assert bandwidth.cache_read("toy_filled_only", 10) == ("filled", 0)
    monkeypatch.undo()
    bandwidth.cache_read.cache_clear()
    assert bandwidth.cache_read("graph_handwritten", 3) == ("static", graph_capacity(3, 4)) == ("static", 16)  # K=4
    assert bandwidth.cache_read("graph_handwritten", 3, 3) == ("static", 48)
    monkeypatch.setattr(bandwidth, "get_generator", entries.__getitem__)
    assert bandwidth.cache_read("toy_stop_on_device", 10, 4) == ("static", graph_capacity(10, 1))


def test_products_against_floor_by_hand():
    kernels = pd.DataFrame({"variant": ["v", "v", "v", "w"], "products": [1, 0, 1, 1],
                            "us_per_token": [5.0, 4.0, 3.0, 100.0],
                            "own_us_per_token": [4.0, 3.0, 2.0, 100.0]})  # fmt: skip
    split = bandwidth.products_against_floor(kernels, "v", Toy(), 2.0)
    # the weights' 416 bytes at 2 GB/s: 416 / 2e9 s = 0.000208 µs
    assert split == {"variant": "v", "busy_us": 9.0, "durations_us": 12.0, "products_us": 6.0, "other_us": 3.0,
                     "weights_floor_us": pytest.approx(416 / 2e3), "pct_of_copy_bandwidth": pytest.approx(
                         100 * 416 / 2e3 / 6.0), "weights_mb": pytest.approx(416 / 1e6),
                     "bandwidth_gb_s": 2.0}  # fmt: skip
    no_products = kernels.assign(products=0)
    assert math.isnan(bandwidth.products_against_floor(no_products, "v", Toy(), 2.0)["pct_of_copy_bandwidth"])
    with pytest.raises(ValueError, match="no kernel rows for 'x'; profiled: v, w"):
        bandwidth.products_against_floor(kernels, "x", Toy(), 2.0)


def test_time_products_by_hand(monkeypatch):
    """Each product's shapes interleaved over five rounds in a fresh random order: a shape's GPU time
    per replay 240, 48, 192, 96, 144 µs gives 5, 1, 4, 2, 3 µs per product, quartiles 2 and 4, median 3; the
    rounds are recorded for paired comparisons; a shape that runs out of memory is recorded and the
    product's other shapes go on."""
    built, emptied, recorded, replayed = [], [], [], []
    per_replay = {}

    def product_graph(rows, k, n, *, splits, repeats):
        built.append((rows, k, n, splits, repeats))
        if (k, n) == (4, 50) and splits == 2:
            raise torch.OutOfMemoryError("CUDA out of memory.\nTried to allocate")
        key = (k, n, splits)
        per_replay[key] = iter([0.240, 0.048, 0.192, 0.096, 0.144])  # ms per replay of 48 products
        return lambda: replayed.append(key) or next(per_replay[key])

    monkeypatch.setattr(bandwidth, "product_graph", product_graph)
    monkeypatch.setattr(bandwidth, "gpu_times", lambda run, runs: [run() for _ in range(runs)])
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(1))
    out = bandwidth.time_products(Toy(), rows=[8], splits=[1, 2], bandwidth_gbs=2.0, runs=5, record=recorded.append,
                                  seed=3)  # fmt: skip
    assert built[:2] == [(8, 4, 12, 1, 48), (8, 4, 12, 2, 48)] and len(built) == 10
    first = out.iloc[0].to_dict()
    # attention qkv: 4 × 12 floats = 192 bytes, 0.000192 MB; at 2 GB/s they take 192 / 2e3 µs, against 3 µs
    assert math.isnan(first.pop("error"))
    assert first == {"product": "attention qkv", "rows": 8, "in_features": 4, "out_features": 12, "splits": 1,
                     "weight_mb": 4 * 12 * 4 / 1e6, "floor_us": 4 * 12 * 4 / 2.0 / 1e3, "status": "ok",
                     "runs": 5, "median_us": 3.0, "q25_us": 2.0, "q75_us": 4.0,
                     "pct_of_copy_bandwidth": pytest.approx(100 * 192 / 2e3 / 3.0), "order_seed": 3,
                     "times_us": "5.0000;1.0000;4.0000;2.0000;3.0000",
                     "rate_gb_s": pytest.approx(192 / 3e3)}  # fmt: skip  (192 B in 3 µs: 0.064 GB/s; rv19B S4)
    # the two shapes of a product alternate round by round, in an order drawn from the seed
    rounds = [replayed[i : i + 2] for i in range(0, 10, 2)]
    assert all(sorted(r) == [(4, 12, 1), (4, 12, 2)] for r in rounds)
    assert rounds == [[(4, 12, 1 + i) for i in order] for order in
                      bandwidth.round_orders(2, 5, __import__("random").Random(3))]  # fmt: skip
    oom = out[out["status"] == "oom"]
    assert list(oom["product"]) == ["LM head"] and list(oom["error"]) == ["CUDA out of memory."]
    assert math.isnan(oom["median_us"].iloc[0]) and emptied == [1]
    assert [r["product"] for r in recorded] == list(out["product"]) and len(out) == 10
    assert bandwidth.product_rounds(out, "attention qkv", 8, 2) == [5.0, 1.0, 4.0, 2.0, 3.0]
    assert bandwidth.product_rounds(out, "LM head", 8, 2) == []  # out of memory: no rounds
    assert "kernels" not in out  # no kernels_of: nothing profiled


def test_time_products_records_the_kernels_each_shape_ran(monkeypatch):
    """rv19B S7: given `kernels_of`, each shape's replay is profiled once, after every timed round, and its
    `kernels` cell says what it ran, or why not; `kernel_change_text` names the products whose shapes differ."""
    events = []

    def product_graph(rows, k, n, *, splits, repeats):
        return lambda: events.append(("replay", k, n, splits)) or 0.048

    def kernels_of(replay):
        replay()
        _, k, n, splits = events[-1]
        events.append("profiled")
        if (k, n) == (4, 50):
            raise RuntimeError("the profiler recorded no GPU activity\nmore")
        return "gemv ×48" if splits == 1 and (k, n) != (16, 4) else "splitK_gemm ×48; reduce ×48"

    monkeypatch.setattr(bandwidth, "product_graph", product_graph)
    monkeypatch.setattr(bandwidth, "gpu_times", lambda run, runs: [run() for _ in range(runs)])
    out = bandwidth.time_products(Toy(), rows=[8], splits=[1, 2], bandwidth_gbs=2.0, runs=3, seed=3,
                                  kernels_of=kernels_of)  # fmt: skip
    qkv = events[: events.index("profiled")]
    assert len(qkv) == 2 * 3 + 1  # both shapes' 3 rounds, then the first shape's profile
    assert list(out["kernels"][:2]) == ["gemv ×48", "splitK_gemm ×48; reduce ×48"]
    assert (out.loc[out["product"] == "LM head", "kernels"] == "not profiled (RuntimeError: the profiler recorded "
            "no GPU activity)").all()  # fmt: skip
    assert (out["status"] == "ok").all() and out["median_us"].notna().all()  # its times stand
    said = bandwidth.kernel_change_text(out)
    assert said.startswith("Kernels each shape ran (one profiled replay each): `attention qkv`, undivided: 8 rows "
                           "only (split-K: no); `attention qkv`, split in 2: 8 rows only (split-K: yes); ")
    assert "`mlp down`, undivided: 8 rows only (split-K: yes)" in said  # (16, 4): splitK_gemm undivided too
    assert "LM head" not in said  # not profiled: nothing said of it
    assert said.endswith(". A split shape runs as one batched product (`torch.bmm`, without the bias), so its kernels "
                         "differ from the undivided shape's by construction.")  # fmt: skip
    assert bandwidth.kernel_change_text(out.drop(columns="kernels")) == ""


def test_kernel_change_text_says_per_product_and_split_whether_the_rows_changed_the_kernels():
    """rr20h S1: notebook 12's grid (32 and 256 rows, undivided and split in 4). A split shape is a batched product
    (`bmm`, no bias), so comparing all four shapes always found "other kernels": grouped by product and split, the
    rows' effect is said on its own, with split-K by name (a splitKreduce kernel, or segment-K on)."""
    gemm_off = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_execute_segment_k_off_kernel__5x_cublas"
    gemm_on = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_execute_segment_k_on_kernel__5x_cublas"
    kernels = {  # (product, rows, splits): what the profiled replay ran
        ("attention out", 32, 1): "gemv2T_kernel ×48", ("attention out", 256, 1): f"{gemm_off} ×48",
        ("attention out", 32, 4): f"{gemm_on} ×48", ("attention out", 256, 4): f"{gemm_on} ×48",
        ("mlp down", 32, 1): "gemmk1_kernel ×48; splitKreduce_kernel ×48", ("mlp down", 256, 1): "not profiled (x)",
        ("mlp down", 32, 4): f"{gemm_off} ×48", ("mlp down", 256, 4): f"{gemm_off} ×48",
    }  # fmt: skip
    products = pd.DataFrame([{"product": p, "rows": r, "splits": s, "status": "ok", "kernels": k}
                             for (p, r, s), k in kernels.items()])  # fmt: skip
    assert bandwidth.kernel_change_text(products) == (
        "Kernels each shape ran (one profiled replay each): `attention out`, undivided: 32 rows ran `gemv2T_kernel` "
        f"(split-K: no), 256 rows ran `{gemm_off}` (split-K: no); `attention out`, split in 4: the same kernels at 32 "
        "and 256 rows (split-K: yes); `mlp down`, undivided: 32 rows only (split-K: yes); `mlp down`, split in 4: the "
        "same kernels at 32 and 256 rows (split-K: no). A split shape runs as one batched product (`torch.bmm`, "
        "without the bias), so its kernels differ from the undivided shape's by construction."
    )
    undivided = bandwidth.kernel_change_text(products[products["splits"] == 1])
    assert "batched" not in undivided and undivided.endswith("`mlp down`, undivided: 32 rows only (split-K: yes).")
    assert not bandwidth.split_k(("gemv2T_kernel", gemm_off)) and bandwidth.split_k(("a", "splitKreduce_kernel"))


def test_the_recorded_bandwidth_and_the_fastest_generator_come_from_notebook_10s_tables(tmp_path, monkeypatch):
    from tokgen import results

    here = {**results.environment(), "commit": "4f30a978e0b5", "gpu": "GPU X", "gpu_uuid": "c38a1fbc-0000"}
    monkeypatch.setattr(results, "environment", lambda: here)  # this process: commit 4f30a97 on card c38a1fbc
    monkeypatch.setattr(bandwidth, "environment", lambda: here)
    assert bandwidth.recorded_bandwidth(tmp_path) is None
    with pytest.raises(MissingRows, match="notebook 14 needs notebook 10's rows"):  # one line, and how to get them
        bandwidth.fastest_generator(tmp_path)
    data = tmp_path / "data"
    data.mkdir()

    def recorded(**provenance):
        """Notebook 10's bandwidth table, its last row the one a floor uses."""
        row = {"gpu": "GPU X", "gpu_uuid": "c38a1fbc-0000", "commit": "4f30a978e0b5", "gpu_sms": "all"} | provenance
        pd.DataFrame([row | {"bandwidth_gb_s": 2000.0}, row | {"bandwidth_gb_s": 3000.0}]).to_csv(
            data / "10_bandwidth.csv")  # fmt: skip
        return bandwidth.recorded_bandwidth(tmp_path)

    assert recorded()["bandwidth_gb_s"] == 3000.0  # the last row
    assert recorded(commit="4f30a978e0b5d1e2-dirty")["bandwidth_gb_s"] == 3000.0  # the same commit, written longer
    assert recorded(gpu_uuid=float("nan"))["bandwidth_gb_s"] == 3000.0  # a table that names no card
    assert recorded(gpu="GPU Y") is None  # measured on another GPU
    assert recorded(commit="9d6c84b80aa0") is None  # another run's: the old reference run's table
    assert recorded(gpu_uuid="4da776c0-0000") is None  # this run, but another card's: a bandwidth is one card's
    assert recorded(gpu_sms=16) is None  # in a slice
    recorded()
    assert bandwidth.bandwidth_for(tmp_path, "cuda") == 3000.0
    monkeypatch.setattr(bandwidth, "copy_bandwidth", lambda device, megabytes: (device, 42.0 + megabytes))
    recorded(commit="9d6c84b80aa0")
    assert bandwidth.bandwidth_for(tmp_path, "cuda:1") == ("cuda:1", 42.0 + 1024)  # measured now

    def table(medians, status=("ok", "ok", "oom", "ok", "ok")):
        """Notebook 10's table: naive, generate() static and three registry generators, eight rounds each,
        every round of a variant its median times a shared noise (so the paired ratio is the ratio of the two)."""
        noise = [1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 1.05, 0.95]
        names = ["naive", "generate() static", "graph_triton_fused K=4", "graph_handwritten K=2", "kv_static"]
        return pd.DataFrame(
            {
                "variant": names,
                "generator": ["naive", "generate() static", "graph_triton_fused", "graph_handwritten", "kv_static"],
                "status": list(status),
                "median_ms": medians,
                "times_ms": [";".join(str(m * f) for f in noise) for m in medians],
                "steps_per_graph": [float("nan"), float("nan"), 4.0, 2.0, float("nan")],
                "commit": "4f30a978e0b5",  # this run's
                "gpu": "GPU X",
                "gpu_sms": "all",
            }
        )

    table([10.0, 1.0, 2.0, 3.0, 4.0]).assign(commit="9d6c84b80aa0").to_csv(data / "10_cuda_graphs.csv", index=False)
    with pytest.raises(MissingRows, match=r"^notebook 14 needs notebook 10's rows from this run \(commit 4f30a978e0b5, "
                                          r"GPU X, all SMs\); data/10_cuda_graphs.csv holds commit 9d6c84b80aa0's"):
        bandwidth.fastest_generator(tmp_path)  # another run's ranking is not this run's sweep's generator
    best = {"label": "graph_handwritten K=2", "generator": "graph_handwritten", "steps_per_graph": 2,
            "shares_rank_with": []}  # fmt: skip
    assert bandwidth.fastest_generator(tmp_path, this_run=False) == best  # the quick run reads the reference run's
    table([10.0, 1.0, 2.0, 3.0, 4.0]).to_csv(data / "10_cuda_graphs.csv", index=False)
    # a reference (generate()) and a failed run are not candidates: the first registry generator, ranked round by
    # round against naive, that ran
    best = {"label": "graph_handwritten K=2", "generator": "graph_handwritten", "steps_per_graph": 2,
            "shares_rank_with": []}  # fmt: skip
    assert bandwidth.fastest_generator(tmp_path) == best
    assert bandwidth.fastest_words(best) == "`graph_handwritten K=2`, ranked first"
    table([10.0, 1.0, 2.0, 3.0, 3.0]).to_csv(data / "10_cuda_graphs.csv", index=False)  # equal every round: tied
    shared = bandwidth.fastest_generator(tmp_path)
    assert shared == best | {"shares_rank_with": ["kv_static"]}
    assert bandwidth.fastest_words(shared) == (
        "`graph_handwritten K=2`, the first listed of the 2 that share rank 1 (with `kv_static`: the rounds do not "
        "part them; listed by speed-up over naive, round by round)")  # fmt: skip
    table([10.0, 1.0, 2.0, 5.0, 4.0]).to_csv(data / "10_cuda_graphs.csv", index=False)
    assert bandwidth.fastest_generator(tmp_path) == {"label": "kv_static", "generator": "kv_static",
                                                     "steps_per_graph": None, "shares_rank_with": []}  # fmt: skip
    table([10.0, 1.0, 2.0, 3.0, 4.0], status=["ok"] + ["oom"] * 4).to_csv(data / "10_cuda_graphs.csv", index=False)
    assert bandwidth.fastest_generator(tmp_path)["label"] == "naive"  # the registry's only one that ran
    table([10.0, 1.0, 2.0, 3.0, 4.0], status=["oom"] + ["ok"] * 4).to_csv(data / "10_cuda_graphs.csv", index=False)
    assert bandwidth.fastest_generator(tmp_path) is None  # no naive run: nothing to rank against


def test_sweep_against_floor_by_hand(tmp_path, monkeypatch, tiny):
    """Ours twice as fast as theirs in every round at B = 1; theirs out of memory at B = 2."""
    rounds = []

    def compare(variants, rounds_, device, gpu_busy):
        rounds.append(([v.name for v in variants], rounds_, gpu_busy))
        assert device == tiny.device
        b = variants[0].info["batch_size"]
        for v in variants:  # the variants run the model at these sizes
            assert v.run().shape == (b, 1 + 3), v.name
        ours = {"variant": variants[0].name, "generator": "graph_handwritten", "batch_size": b, "status": "ok",
                "steps": 3, "median_ms": 0.004, "times_ms": "0.004;0.004;0.004;0.004;0.004;0.004"}  # fmt: skip
        theirs = {"variant": variants[1].name, "generator": "generate() static", "batch_size": b,
                  "status": "ok" if b == 1 else "oom", "steps": 3, "median_ms": 0.008,
                  "times_ms": "0.008;0.008;0.008;0.008;0.008;0.008" if b == 1 else ""}  # fmt: skip
        return pd.DataFrame([ours, theirs])

    monkeypatch.setattr(bandwidth, "compare", lambda v, rounds, device, gpu_busy: compare(v, rounds, device, gpu_busy))
    ours = {"label": "graph_handwritten K=2", "generator": "graph_handwritten", "steps_per_graph": 2}
    sweep = bandwidth.sweep_against_floor(tiny, ours, "generate() dynamic", [1, 2], 3, 6, 2.0, tmp_path, {"RUNS": 6})
    assert rounds == [(["graph_handwritten K=2 B=1", "generate() dynamic B=1"], 6, False),
                      (["graph_handwritten K=2 B=2", "generate() dynamic B=2"], 6, False)]  # fmt: skip
    task = {1: bandwidth.floor_ms(tiny, 1, 3, 2.0), 2: bandwidth.floor_ms(tiny, 2, 3, 2.0)}
    assert list(sweep["floor_ms"])[:3] == [task[1], task[1], task[2]] and math.isnan(sweep["floor_ms"].iloc[3])
    assert sweep["times_floor"].iloc[0] == 0.004 / task[1] and sweep["times_floor"].iloc[1] == 0.008 / task[1]
    assert sweep["speed-up"].iloc[0].startswith("×2.00 (IQR ×2.00–×2.00 of 6 rounds; p = 0.031, faster"
                                                "; 95% interval ×2.00–×2.00)")
    assert list(sweep["speed-up"])[1:] == ["", "", ""]  # theirs never, ours at B = 2 has nothing to beat
    on_disk = load("14_batch_sweep", tmp_path)
    assert list(on_disk["variant"]) == list(sweep["variant"]) and (on_disk["params"] == '{"RUNS": 6}').all()
    rounds.clear()  # a generator without K: no K in its name nor in its options
    kv = {"label": "kv_static", "generator": "kv_static", "steps_per_graph": None}
    monkeypatch.setattr(bandwidth, "generator_variant", lambda *a, **kw: seen.append(kw) or real(*a, **kw))
    seen, real = [], bench.generator_variant
    bandwidth.sweep_against_floor(tiny, kv, "naive", [1], 3, 6, 2.0, tmp_path, {})
    assert rounds[0][0] == ["kv_static B=1", "naive B=1"] and "steps_per_graph" not in seen[0]


def test_sweep_sentence_names_each_generators_nearest_and_farthest_batch():
    sweep = pd.DataFrame({"generator": ["theirs", "theirs", "ours", "ours", "ours"],
                          "batch_size": [1, 8, 1, 8, 64], "status": ["ok", "oom", "ok", "ok", "ok"],
                          "times_floor": [9.0, 0.5, 3.0, 1.5, 2.25]})  # fmt: skip
    assert bandwidth.sweep_sentence(sweep) == (  # in the table's order, not sorted by name
        "- `theirs`: 9.00× the floor at B = 1 to 9.00× at B = 1.\n- `ours`: 1.50× the floor at B = 8 to 3.00× at B = 1."
    )


# --- results: what a Recorder writes ---


def test_a_recorder_stamps_every_row_and_keeps_old_rows_when_a_column_appears(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKGEN_COMMIT", "c0ffee")
    from tokgen import results

    results.environment.cache_clear()
    try:
        rec = Recorder("t", tmp_path, params={"b": 2, "a": 1})
        rec.write({"variant": "x", "ms": 1.5})
        assert (tmp_path / "data" / "t.csv").read_text().count("\n") == 2  # the header and the row, on disk
        rec.write({"variant": "y", "ms": 2.5, "extra": "e"})
        df = load("t", tmp_path)
        assert list(df["ms"]) == [1.5, 2.5] and df["extra"].isna().tolist() == [True, False]
        assert set(df["commit"]) == {"c0ffee"} and set(df["params"]) == {'{"a": 1, "b": 2}'}
        assert df["run_started"].nunique() == 1 and df["run_started"].iloc[0] == rec.started
        assert list(df.columns[:3]) == ["variant", "ms", "gpu"]  # the row's columns first, then provenance
        df.assign(run_started="2026-01-02T03:04:05+00:00", commit="abcdef1234").to_csv(rec.path, index=False)
        assert run_of(load("t", tmp_path)) == "commit abcdef1, started 2026-01-02 03:04 UTC"
        two = pd.DataFrame({"commit": ["a" * 9, "b" * 9], "run_started": ["2026-01-01T00:00", "2026-01-02T00:00"]})
        assert (
            run_of(two) == "commit aaaaaaa, started 2026-01-01 00:00 UTC; commit bbbbbbb, started 2026-01-02 00:00 UTC"
        )
    finally:
        results.environment.cache_clear()


def test_old_generator_names_are_read_as_todays(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"variant": ["compiled fast K=4", "graph_hf", "fastest"], "generator": ["fast", "graph_lean", "x"]}
                 ).to_csv(data / "t.csv", index=False)  # fmt: skip
    df = load("t", tmp_path)
    assert list(df["variant"]) == ["compiled graph_handwritten_compiled K=4", "graph_transformers", "fastest"]
    assert list(df["generator"]) == ["graph_handwritten_compiled", "graph_handwritten", "x"]


# --- agreement: the rule's edges ---


def test_the_tolerance_is_inclusive_and_every_failure_is_said(monkeypatch):
    from tokgen.agreement import TOLERANCE, Reference, agreement, assert_tokens_match, tokens_match

    tokens = torch.tensor([[0, 1, 2, 3], [5, 1, 2, 3], [6, 1, 2, 3], [7, 1, 2, 3], [8, 1, 2, 3]])
    gap = torch.full((5, 3), 1.0, dtype=torch.float64)  # float64: the edge is TOLERANCE exactly
    gap[0, 1] = TOLERANCE  # on the edge: allowed
    gap[1, 1] = TOLERANCE * 1.0001  # just past it
    gap[2, 2] = TOLERANCE / 2
    ref = Reference(tokens, torch.full((5, 3), 7), gap, eos=9, max_seqlen=3)
    out = tokens.clone()
    out[0, 2] = out[1, 2] = 7  # both take the runner-up at step 1
    out[2, 3] = 7  # the runner-up at step 2
    found = agreement(ref, out)
    assert (found["identical"], found["near_ties"], found["max_tie_gap"], found["rows"]) == (2, 2, TOLERANCE, 5)
    assert found["failures"] == [
        f"row 1, step 1: token 7, the reference's 2 (runner-up 7, {gap[1, 1].item():.2e} below it; allowed within "
        f"{TOLERANCE:.2g})"
    ]
    assert not found["ok"] and found["length_ok"] and not tokens_match(ref, out)
    assert agreement(ref, out, tolerance=0.02)["ok"] and tokens_match(ref, out, tolerance=0.02)
    assert assert_tokens_match(ref, out, tolerance=0.02)["near_ties"] == 3  # the options reach the rule
    with pytest.raises(AssertionError, match=r"^output does not match the naive tokens: row 1, step 1: token 7"):
        assert_tokens_match(ref, out)
    assert math.isnan(agreement(ref, tokens)["max_tie_gap"]) and agreement(ref, tokens)["identical"] == 5
    bad = tokens.clone()
    bad[:, 0] = torch.tensor([1, 2, 3, 4, 10])  # every prompt differs: five failures, three shown
    with pytest.raises(AssertionError, match=r"^mine does not match the naive tokens: row 0: prompt 1, the "
                       r"reference's 0; row 1: prompt 2, the reference's 5; row 2: prompt 3, the reference's 6 "
                       r"\(\+2 more\)$"):  # fmt: skip
        assert_tokens_match(ref, bad, "mine")
    with pytest.raises(AssertionError, match=r"row 0: prompt 1, the reference's 0$"):
        assert_tokens_match(ref, bad[:1])  # one row: the count differs too, and nothing more is said
    with pytest.raises(AssertionError, match=r"row 1: prompt 2, the reference's 5$"):
        assert_tokens_match(ref, bad[:2])  # three failures: all shown, none "more"
    with pytest.raises(AssertionError, match=r"; row 1: prompt 2, the reference's 5 \(\+1 more\)$"):
        assert_tokens_match(ref, bad[:3])  # four (the row count, three prompts): three shown
    assert assert_tokens_match(ref, tokens)["ok"]


def test_expected_steps_by_hand():
    from tokgen.agreement import expected_steps

    eos = 9
    tokens = torch.tensor([[0, 9, 1, 1, 1], [0, 1, 1, 9, 9]])  # row 0 done after step 0, row 1 after step 2
    assert expected_steps(tokens, eos, 10) == 3
    assert expected_steps(tokens[:1], eos, 10) == 1  # the prompt column is not a step
    assert expected_steps(torch.tensor([[9, 1, 1]]), eos, 7) == 7  # an EOS prompt does not stop it


def test_distinct_prompts_are_a_seeded_draw_from_the_vocabulary(tiny):
    from tokgen.agreement import distinct_prompts

    drawn = distinct_prompts(tiny, 6, seed=3)
    assert torch.equal(drawn, torch.randperm(tiny.config.vocab_size, generator=torch.Generator().manual_seed(3))[:6])
    assert len(set(drawn.tolist())) == 6 and not torch.equal(drawn, distinct_prompts(tiny, 6))
    first = torch.randperm(tiny.config.vocab_size, generator=torch.Generator().manual_seed(0))[:6]
    assert torch.equal(distinct_prompts(tiny, 6), first)  # seed 0 by default


def test_logit_spread_on_known_logits():
    """A model whose TF32 logits differ from its FP32 ones by known amounts: +0.5 on the best token of
    one position, +0.25 on a token outside every top two."""
    from tokgen.agreement import logit_spread

    exact = torch.tensor([[[3.0, 2.0, 0.0, 1.0], [0.0, 1.0, 2.0, -1.0]]])  # (B=1, T=2, vocab=4)
    tf32 = exact.clone()
    tf32[0, 0, 0] += 0.5  # a top-two logit
    tf32[0, 1, 3] += 0.25  # the smallest logit of position 1
    seen = []

    class Model:
        device, dtype = torch.device("cpu"), torch.float32

        def __call__(self, tokens, use_cache):
            seen.append((tokens.tolist(), use_cache, torch.get_float32_matmul_precision()))
            logits = exact if torch.get_float32_matmul_precision() == "highest" else tf32
            return SimpleNamespace(logits=logits)

    before = torch.get_float32_matmul_precision()
    spread = logit_spread(Model(), torch.tensor([[5, 6]]))
    assert spread == {"max_abs_diff": 0.5, "max_top2_diff": 0.5}
    assert seen == [([[5, 6]], False, "highest"), ([[5, 6]], False, "high")]
    assert torch.get_float32_matmul_precision() == before
    tf32[0, 0, 0] -= 0.5
    assert logit_spread(Model(), torch.tensor([[5, 6]])) == {"max_abs_diff": 0.25, "max_top2_diff": 0.0}


def test_check_generators_counts_rows_against_the_naive_tokens(tiny, monkeypatch):
    from tokgen import agreement as rule

    prompts = torch.tensor([11, 712, 1413, 2114, 2815])
    checked = rule.check_generators(tiny, ["kv_static"], prompts, batch_size=2, max_seqlen=6)
    assert list(checked["generator"]) == ["kv_static", rule.FP32_NAIVE]
    assert list(checked["rows"]) == [5, 5] and list(checked["identical"]) == [5, 5]
    assert list(checked["near_ties"]) == [0, 0] and list(checked["failures"]) == [0, 0]
    assert list(checked["first_failure"]) == ["", ""]
    for column in ("max_tie_gap", "spread_ours"):  # no near tie; no kernels of ours on the CPU: NaN, not None
        assert all(isinstance(x, float) and math.isnan(x) for x in checked[column]), column
    assert (checked["tolerance"] == rule.TOLERANCE).all()
    assert (checked["spread_cublas"] == 0.0).all()  # no TF32 on the CPU: the same logits twice

    real = rule.get_generator

    given = []

    def fakes(name):
        if name == "shifted":  # another row's tokens for the last row of each batch
            return lambda model, **kw: (lambda out: torch.cat([out[:-1], out[:1]]))(real("naive")(model, **kw))
        if name == "tied":  # the naive tokens but the runner-up of row 0's first step, a near tie (gap 1.2e-3)
            def tied(model, **kw):
                given.append(kw)
                out = real("naive")(model, **kw).clone()
                ref = rule.naive_reference(model, batch_size=len(out), max_seqlen=kw["max_seqlen"], prompt=kw["prompt"])
                if kw["prompt"][0] == prompts[0]:
                    out[0, 1] = ref.runner_up[0, 0]
                return out
            return tied
        return real(name)

    monkeypatch.setattr(rule, "get_generator", fakes)
    rows = rule.check_generators(tiny, ["shifted", "tied"], prompts, batch_size=2, max_seqlen=6,
                                 options={"tied": {"eos_token_id": -1}}).set_index("generator")  # fmt: skip
    # batches of 2, 2 and 1: the last row of each is the first one's again; a batch of one is unchanged
    shifted = rows.loc["shifted"]
    assert (shifted["rows"], shifted["identical"], shifted["failures"]) == (5, 3, 2)
    assert shifted["first_failure"] == f"row 1: prompt {int(prompts[0])}, the reference's {int(prompts[1])}"
    tied = rows.loc["tied"]
    gap = float(rule.naive_reference(tiny, batch_size=2, max_seqlen=6, prompt=prompts[:2]).gap[0, 0])
    assert (tied["identical"], tied["near_ties"], tied["failures"], tied["max_tie_gap"]) == (4, 1, 0, gap)
    assert [kw["eos_token_id"] for kw in given] == [-1, -1, -1]  # its options, for each batch


def test_the_summary_of_a_check_by_hand():
    from tokgen.agreement import FP32_NAIVE, summary

    def row(generator, identical, ties, failures=0, gap=float("nan"), ours=4e-3):
        return {"generator": generator, "rows": 8, "identical": identical, "near_ties": ties, "failures": failures,
                "max_tie_gap": gap, "tolerance": 0.015, "spread_cublas": 2e-3, "spread_ours": ours}  # fmt: skip

    text = summary(pd.DataFrame([row("naive", 8, 0), row("a", 8, 0), row("b", 5, 2, 1, 3e-3), row("c", 7, 1, 0, 4e-3),
                                 row(FP32_NAIVE, 6, 2, 0)]))  # fmt: skip
    assert text.splitlines() == [
        "- 1 of the 3 other generators returned all 8 rows identical to naive's.",
        "- Rows that took the naive generator's runner-up at a near-tie: `b` 2, `c` 1; the largest gap between its "
        "two best logits at such a row: 4.0e-03 (tolerance 0.015).",
        "- The naive loop with FP32 products: 6 rows identical, 2 at a near-tie, 0 outside the rule.",
        "- The largest |TF32 − FP32| of a top-two logit: the model's own (cuBLAS) products' 2.0e-03, our Triton "
        "kernels' 4.0e-03. Two such computations can swap two logits that lie within twice the sum, 1.2e-02: within "
        "the tolerance.",
        "- **Outside the rule:** `b`.",
    ]
    on_cpu = summary(pd.DataFrame([row("naive", 8, 0, ours=float("nan")), row(FP32_NAIVE, 8, 0, ours=float("nan"))]))
    assert "(our Triton kernels: not on this device). Two such computations can swap two logits that lie within " \
           "twice the sum, 8.0e-03: within the tolerance." in on_cpu  # fmt: skip
    assert "near-tie:" not in on_cpu and "Outside the rule" not in on_cpu
    wide = summary(pd.DataFrame([row("naive", 8, 0, ours=6e-3), row(FP32_NAIVE, 8, 0, ours=6e-3)]))
    assert wide.endswith("1.6e-02: **above the tolerance of 0.015**.")
    edge = pd.DataFrame([row("naive", 8, 0), row(FP32_NAIVE, 8, 0)]).assign(tolerance=0.25, spread_cublas=0.0625,
                                                                             spread_ours=0.0625)  # fmt: skip
    assert summary(edge).endswith("2.5e-01: within the tolerance.")  # 2 × (0.0625 + 0.0625) = 0.25: on the edge


def test_check_generators_holds_a_generator_without_stop_check_to_max_seqlen_and_fp32_to_highest(monkeypatch):
    """With an EOS both rows emit, the naive loop stops early; `kv_static_no_check` runs on to max_seqlen
    and still follows the rule (its stop is not checked). The yardstick runs with FP32 products, the
    others with the precision set, which is restored."""
    import tokgen
    from tokgen import agreement as rule

    model = tokgen.build_model("tiny", "cpu")
    prompts = torch.tensor([3516, 9124])  # two rows that both emit token 49662 within 12 steps
    full = tokgen.generate("naive", model, batch_size=2, max_seqlen=12, prompt=prompts)
    common = set(full[0, 1:].tolist()) & set(full[1, 1:].tolist())
    assert common, "no token that both rows emit: pick other prompts"
    model.config.eos_token_id = min(common)
    precisions, real = [], rule.get_generator

    def spy(name):
        run = real(name)
        return lambda *a, **kw: precisions.append((name, torch.get_float32_matmul_precision())) or run(*a, **kw)

    monkeypatch.setattr(rule, "get_generator", spy)
    before = torch.get_float32_matmul_precision()
    checked = rule.check_generators(model, ["kv_static", "kv_static_no_check"], prompts, batch_size=2, max_seqlen=12)
    assert list(checked["failures"]) == [0, 0, 0] and list(checked["identical"]) == [2, 2, 2]
    assert precisions == [("kv_static", before), ("kv_static_no_check", before), ("naive", "highest")]
    assert torch.get_float32_matmul_precision() == before
    out = tokgen.generate("kv_static_no_check", model, batch_size=2, max_seqlen=12, prompt=prompts)
    ref = rule.naive_reference(model, batch_size=2, max_seqlen=12, prompt=prompts)
    assert out.shape[1] == 13 > ref.tokens.shape[1] and not rule.agreement(ref, out)["ok"]  # its stop would fail


@pytest.mark.parametrize(
    "shape, splits, l2, pool",
    [
        ((8, 4), 1, 1000, 16),  # 8 × 4 floats = 128 bytes a weight: ⌈2 × 1000 / 128⌉ = 16 weights
        ((12, 4), 2, 1000, 11),  # 192 bytes: ⌈2000 / 192⌉ = 11, each cut in two along the sum (6 of the 12)
        ((64, 64), 1, 1000, 2),  # a weight larger than twice the cache: still two, so no replay reads one twice
        ((2560, 2048), 1, None, 5),  # no L2 size reported: 50 MiB assumed, 100 MiB / 20 MiB = 5 exactly
    ],
)
def test_product_times_reads_a_pool_of_weights_twice_the_l2_cache_in_turn(monkeypatch, shape, splits, l2, pool):
    """On a CPU stand-in for the GPU: the weights made, the product each replay computes, the graph
    captured after one warm-up call and replayed once untimed, and µs per product from the GPU's ms."""
    (k, n), rows, repeats = shape, 3, 20
    made, used, captured, timed = [], [], [], []

    tensors = []

    def empty(*size, device):
        made.append((size, device))
        tensors.append(torch.empty(*size))
        return tensors[-1]

    def capture(products, warmups):
        captured.append(warmups)
        products()  # what the graph records
        return SimpleNamespace(replay=products)

    def gpu_times(run, runs):
        timed.append(runs)
        for _ in range(runs):
            run()
        return [2.0 * (i + 1) for i in range(runs)]

    props = SimpleNamespace(L2_cache_size=l2) if l2 else SimpleNamespace()
    asked = []
    fake_torch = SimpleNamespace(randn=empty, device=lambda name: f"fake {name}", bmm=lambda a, b: used.append(
        ("bmm", tuple(a.shape), b.transpose(1, 2).data_ptr(), tuple(b.shape))), cuda=SimpleNamespace(
        get_device_properties=lambda device: asked.append(device) or props))  # fmt: skip
    monkeypatch.setattr(bandwidth, "torch", fake_torch)
    monkeypatch.setattr(bandwidth, "F", SimpleNamespace(linear=lambda x, w, b: used.append(
        ("linear", tuple(x.shape), w.data_ptr(), x is tensors[-1] and b is tensors[-2]))))  # fmt: skip
    monkeypatch.setattr(bandwidth, "require_cuda", lambda what: None)
    monkeypatch.setattr(bandwidth, "capture", capture)
    monkeypatch.setattr(bandwidth, "gpu_times", gpu_times)

    times = bandwidth.product_times(rows, k, n, splits=splits, repeats=repeats, runs=4)
    assert times == [1e3 * 2.0 * (i + 1) / repeats for i in range(4)]  # ms per replay -> µs per product
    weights = made[:pool]
    assert weights == [((splits, n, k // splits), "fake cuda")] * pool
    assert made[pool:] == [((n,), "fake cuda"), ((rows, k), "fake cuda")]  # the bias, then the rows
    assert captured == [1] and timed == [4] and asked == ["fake cuda"]
    # one capture, one untimed replay, four timed: 6 calls of `repeats` products, weight i % pool in turn
    assert len(used) == 6 * repeats
    first = used[:repeats]
    if splits == 1:  # the rows through each weight, plus the bias
        assert {(u[0], u[1], u[3]) for u in first} == {("linear", (rows, k), True)}
    else:  # each part of the rows through its part of the weight, transposed to (splits, k / splits, n)
        assert {(u[0], u[1], u[3]) for u in first} == {("bmm", (splits, rows, k // splits), (splits, k // splits, n))}
    order = [u[2] for u in first]
    assert len(set(order)) == min(pool, repeats) and order[pool:] == order[: repeats - pool]


def test_compare_defaults_ten_rounds_on_the_gpu_and_a_fresh_seed_of_32_bits(gpu, monkeypatch):
    drawn = []
    fresh = SimpleNamespace(randrange=lambda n: drawn.append(n) or 77)
    monkeypatch.setattr(bench.random, "SystemRandom", lambda: fresh)
    v = scripted(gpu, "a", [8] * 11)
    row = bench.compare([v], gpu_busy=False).iloc[0]
    assert row["runs"] == 10 and len(v.calls) == 11 and gpu.syncs == 33  # on "cuda": synchronized
    assert drawn == [2**32] and row["order_seed"] == 77


def test_a_changing_step_count_says_which_and_what_it_was():
    lengths = iter([5, 5, 6, 6])
    v = Variant("flaky", lambda: torch.zeros(1, 1 + next(lengths)))
    row = bench.compare([v], rounds=3, device="cpu").iloc[0]
    assert (row["status"], row["runs"]) == ("error", 1)
    assert row["error"] == "RuntimeError: flaky generated 6 steps, earlier 5"


def test_product_times_defaults_and_its_checks(monkeypatch):
    """48 products a replay, 20 timed replays, one split; every size checked before the GPU is asked for."""
    for kwargs, message in (({"in_features": 0}, "in_features must be a positive integer, got 0"),
                            ({"out_features": -3}, "out_features must be a positive integer, got -3"),
                            ({"runs": 0}, "runs must be a positive integer, got 0")):  # fmt: skip
        args = {"rows": 4, "in_features": 8, "out_features": 4} | kwargs
        with pytest.raises(ValueError, match=f"^{message}$"):
            bandwidth.product_times(args.pop("rows"), args.pop("in_features"), args.pop("out_features"), **args)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="^timing a matrix product needs a CUDA GPU"):
            bandwidth.product_times(4, 8, 4)
    used, timed = [], []
    monkeypatch.setattr(bandwidth, "torch", SimpleNamespace(
        randn=lambda *size, device: torch.empty(*size), device=lambda name: name,
        cuda=SimpleNamespace(get_device_properties=lambda device: SimpleNamespace(L2_cache_size=1000))))  # fmt: skip
    monkeypatch.setattr(bandwidth, "F", SimpleNamespace(linear=lambda x, w, b: used.append(tuple(w.shape))))
    monkeypatch.setattr(bandwidth, "require_cuda", lambda what: None)
    monkeypatch.setattr(bandwidth, "capture", lambda products, warmups: products() or SimpleNamespace(replay=products))
    monkeypatch.setattr(bandwidth, "gpu_times", lambda run, runs: timed.append(runs) or [run() or 1.0 for _ in
                                                                                           range(runs)])  # fmt: skip
    assert bandwidth.product_times(3, 8, 4) == [1e3 / 48] * 20
    assert timed == [20] and len(used) == (1 + 1 + 20) * 48 and set(used) == {(4, 8)}


def test_fresh_compile_caches_point_both_caches_at_one_new_empty_folder_and_change_nothing_else(monkeypatch):
    """Notebook 05's cold first compile: inductor's and Triton's cache variables name a new empty
    folder (read by inductor's own path functions), inductor's memo of its paths is cleared where
    loaded, no other variable changes, and the folder is removed at exit."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir, triton_cache_dir

    from tokgen import model

    for key in model.COMPILE_CACHES:
        monkeypatch.setenv(key, "/a/warm/cache")  # restored after the test, like every variable set here
    registered, cleared = [], []
    monkeypatch.setattr(model.atexit, "register", lambda f, *args, **kwargs: registered.append((f, args, kwargs)))
    monkeypatch.setitem(sys.modules, "torch._inductor.utils", SimpleNamespace(clear_caches=lambda: cleared.append(1)))
    before = dict(os.environ)
    said = model.fresh_compile_caches()
    folder = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    assert os.environ["TRITON_CACHE_DIR"] == os.path.join(folder, "triton") and cleared == [1]
    assert os.path.isdir(folder) and os.listdir(folder) == [] and os.path.dirname(folder) == tempfile.gettempdir()
    assert cache_dir() == folder and triton_cache_dir(0) == os.path.join(folder, "triton")  # inductor reads them
    assert {k: v for k, v in os.environ.items() if k not in model.COMPILE_CACHES} == {
        k: v for k, v in before.items() if k not in model.COMPILE_CACHES}  # fmt: skip
    assert registered == [(shutil.rmtree, (folder,), {"ignore_errors": True})]
    assert "new, empty folder" in said and all(key in said for key in model.COMPILE_CACHES)
    model.fresh_compile_caches()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] != folder  # each call a new one
    for f, args, kwargs in registered:
        f(*args, **kwargs)
    assert not os.path.exists(folder)


def test_compare_empties_the_allocators_cache_before_every_call_unless_told_not_to(gpu):
    """Review rv22A S2: `compare` empties the allocator's cache (and collects garbage) before every call, warm-up
    and timed, as the article did for whole generations; solution 02 times one decode step, where that refill
    would be timed with it, so `reset_memory=False` skips it. On the fake GPU: 1 warm-up + 5 timed calls empty the
    cache 6 times by default, never without; a failed call still empties it (an out-of-memory error frees its
    blocks for the next variant)."""
    v = scripted(gpu, "a", A_TICKS)
    row = bench.compare([v], rounds=5, device="cuda", gpu_busy=False).iloc[0]
    assert (len(v.calls), gpu.emptied, gpu.resets, row["median_ms"]) == (6, 6, 6, 375.0)
    gpu.emptied = gpu.resets = 0
    kept = scripted(gpu, "b", A_TICKS)
    row = bench.compare([kept], rounds=5, device="cuda", gpu_busy=False, reset_memory=False).iloc[0]
    assert (len(kept.calls), gpu.emptied, gpu.resets, row["median_ms"]) == (6, 0, 0, 375.0)  # same times
    failing = scripted(gpu, "c", A_TICKS, fail={2: RuntimeError("boom")})
    row = bench.compare([failing], rounds=5, device="cuda", gpu_busy=False, reset_memory=False).iloc[0]
    assert (row["status"], gpu.emptied) == ("error", 1)  # only the failed call's
