# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Solutions · 06 the EOS check on a timeline
#
# Worked solutions to the exercises of [notebook 06](../notebooks/06_eos_sync_profile.ipynb).
# The timelines need a GPU (CUPTI records its kernels); on a CPU the cells say so. Every number
# below is measured in this run, recorded one row per measurement in
# `<RESULTS_DIR>/data/06_eos_sync_profile_solution.csv` (with where it ran: GPU, commit, versions)
# and read back from there, as the notebooks read theirs; exercise 1's spread of busy times is read
# from notebook 06's rows in `<DATA_DIR>/data/`.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 16  # sequences per batch (notebook 06: 16)
MAX_SEQLEN = 100  # new tokens per sequence; the late window needs at least 100
WINDOW = [30, 50]  # the window of notebook 06; exercise 2 moves it to the end of the generation
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/06_eos_sync_profile.csv (exercise 1's spread)

# %%
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
rec = tokgen.Recorder("06_eos_sync_profile_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement
COLUMNS = ["variant", "statistics_steps", "idle_gap_median_us", "gpu_busy_per_step_us", "step_period_us",
           "gpu_idle_fraction"]  # fmt: skip


# %%
def profiled(generator: str, start: int, stop: int) -> dict:
    """Notebook 06's summary of steps [start, stop) of one generation (after a warm-up run); its statistics
    leave out the window's first `tokgen.profiling.WINDOW_SKIP` steps, as notebook 06's do (`statistics_steps`)."""
    v = tokgen.generator_variant(generator, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    v.run()
    summary = tokgen.profile_steps(v.run, start=start, stop=stop).summary()
    counted = f"{start + tokgen.profiling.WINDOW_SKIP}–{stop - 1}"  # the steps the statistics cover
    return {"variant": v.name, "statistics_steps": counted, **summary}


# %% [markdown]
# ## Exercise 1: the naive generator
#
# Naive re-runs the whole sequence every step, so the GPU's work per step grows with the step,
# while the host's (the same kernels launched, the same `.item()` reads every step: notebook 11 counts them)
# does not. The static KV cache's work does not grow with the step either: it feeds one token, but
# its attention runs over all the cache's slots from the first step on. Which of the two keeps the GPU busier therefore
# depends on the window's position. The profile of the window `WINDOW` says which way it goes,
# and the cell after it reads it: the busy time per step, GPU work, answers the exercise. The idle
# gap is time in which the GPU has nothing queued, waiting for the host: one profile's gap or idle
# share is host time that moves between runs (exercise 2 profiles the same window again).

# %%
if CUDA:
    for g in ("kv_static", "naive"):
        rec.write({"exercise": 1, **profiled(g, *WINDOW)})
    ex1 = tokgen.results.rows_where(rec.read(), exercise=1).set_index("variant")  # the rows as recorded
    say(table(ex1.reset_index()[COLUMNS], digits=2))
    kv, naive = ex1.loc["kv_static"], ex1.loc["naive"]
    say("The idle gaps and idle shares in the table come from one profile each: host time, which moves between runs "
        "(exercise 2 profiles the static cache's window again), so one profile does not say which of the two leaves "
        "the GPU idle longer.")  # fmt: skip
else:
    say("*The timeline records GPU kernels: run this cell on a GPU.*")

# %%
if CUDA:
    try:  # notebook 06's profiles of the static cache: how far its busy time moves between windows (rv19A N9)
        nb06 = tokgen.rows_at("06_eos_sync_profile", DATA_DIR, "solution 06", BATCH_SIZE=BATCH_SIZE,
                              MAX_SEQLEN=MAX_SEQLEN)  # fmt: skip
        nb06 = nb06[nb06["variant"] == "kv_static"]
    except tokgen.MissingRows as err:
        nb06 = None
        say(f"*{err}*")
    say(tokgen.gaps.naive_work_text(kv, naive, WINDOW, nb06, SIZE))  # notebook 06's rows at this WINDOW and SIZE

# %% [markdown]
# ## Exercise 2: late steps
#
# With a static cache every step has the same shapes (attention runs over the whole
# preallocated cache), so its GPU work does not depend on the position; with the dynamic
# cache the attention grows with the position. The busy time per step is the GPU's work; the
# idle gap also depends on the host, whose pace moves from one profile to the next. One profile
# per window cannot tell a change with the position from that drift, so each generator profiles
# the early and the late window `ROUNDS` times, the two in a fresh random order each time, and
# reads the gap's direction by notebook 06's rule (`tokgen.gaps.direction_text`): a direction
# only where every pair shows it and there are at least `tokgen.gaps.MIN_WINDOWS` pairs (here a
# pair of profiles is what that rule calls a window). This costs 2 × 2 × `ROUNDS` profiled
# generations of `MAX_SEQLEN` steps.

# %%
ROUNDS = tokgen.gaps.MIN_WINDOWS  # pairs of profiles (early, late) per generator: the fewest that can show a direction
late = [MAX_SEQLEN - (WINDOW[1] - WINDOW[0]), MAX_SEQLEN]
where = {"early": WINDOW, "late": late}
if CUDA:
    for g in ("kv_static", "kv_dynamic"):
        v = tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
        v.run()  # warm-up
        seed, orders = tokgen.bench.drawn_orders(len(where), ROUNDS)
        measured = []  # written after the profiles, not between them (review rr20i S4)
        for pair, order in enumerate(orders):
            for i in order:
                name, (start, stop) = list(where.items())[i]
                s = tokgen.profile_steps(v.run, start=start, stop=stop).summary()
                measured.append({"exercise": 2, **s, "variant": v.name, "pair": pair, "window": name})
        for row in measured:
            rec.write(row)
    rows = tokgen.results.rows_where(rec.read(), exercise=2).to_dict("records")  # the rows as recorded
    ex2 = tokgen.gaps.window_pairs(rows, list(where))  # {variant: {measure: [(early, late) per pair]}}
else:
    say("*The timeline records GPU kernels: run this cell on a GPU.*")

# %%
if CUDA:
    for name, m in ex2.items():
        say(tokgen.gaps.late_window_text(name, m["idle_gap_median_us"], m["gpu_busy_per_step_us"], *where.values()))

# %% [markdown]
# ## Exercise 3: the wait behind `.item()`
#
# The synchronous trace, `data/traces/06_kv_static.json.gz`, keeps the host's CUDA calls but not
# the per-operator CPU events (notebook 06 leaves them out). So in Perfetto the CPU row shows, at
# the end of each "step i" range and after its "model forward" range, a `cudaMemcpyAsync` followed
# by a `cudaStreamSynchronize`; it holds no `aten::item` or `aten::_local_scalar_dense` event.
# Those operator events, the calls `.item()` makes on its way to the copy, are recorded only by a
# profile of the CPU operators, like the one the cell below takes (it saves no trace).
# `.item()` copies the flag into a pinned host buffer
# (`cudaMemcpyAsync`, which does not wait for the GPU: CUDA documents that for pinned memory; its
# own host time is measured below) and then waits in
# `cudaStreamSynchronize` until the copy, and everything queued before it, is done. The same
# calls without Perfetto, from torch.profiler's CPU events of one generation: a full CPU-op
# profile, which adds host work around every operator it records. The two profiles here time these calls
# at different moments and by different statistics (a mean over the whole generation, a median over
# the window), so they do not measure that cost. A call's CPU time is
# not by itself a wait: the copy call's time runs from the call to its return, and the
# synchronize lasts as long as the GPU still has work before the flag, plus the copy itself, plus
# the call's own cost of noticing that the copy is done and returning. The cell after the table
# measures which of these holds its time: a profile of the window `WINDOW` with GPU activity and
# CUDA calls only (`tokgen.profiling.sync_wait`), as notebook 06's statistics. It also counts the
# steps in which the flag's copy was still running on the GPU when the synchronize began: a GPU
# time set against a host time, and a count that does not show whether the copy call waited.

# %%
if CUDA:
    v = tokgen.generator_variant("kv_static", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    v.run()  # warm-up
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        steps = v.run().shape[1] - 1
        torch.cuda.synchronize()
    events = {e.key: e for e in prof.key_averages()}
    for c in ("cudaMemcpyAsync", "cudaStreamSynchronize"):
        if c in events:
            rec.write({"exercise": 3, "measure": "full profile", "cuda_call": c,
                       "calls_per_step": events[c].count / steps,
                       "cpu_us_per_step": events[c].cpu_time_total / steps})  # fmt: skip
    calls = tokgen.results.rows_where(rec.read(), exercise=3, measure="full profile")  # the rows as recorded
    shown = {"cuda_call": "CUDA call", "calls_per_step": "calls per step",
             "cpu_us_per_step": "CPU µs per step, under the full CPU-op profiler"}  # fmt: skip
    say(table(calls.reindex(columns=list(shown)).rename(columns=shown), digits=1))  # no rows: an empty table
else:
    say("*There is no device to wait for on a CPU: run this cell on a GPU.*")

# %%
if CUDA:
    for step in tokgen.profiling.sync_wait(tokgen.profile_steps(v.run, start=WINDOW[0], stop=WINDOW[1])).to_dict(
        "records"
    ):  # one row per step of the window
        rec.write({"exercise": 3, "measure": "sync wait", "variant": v.name, **step})
    waits = tokgen.results.rows_where(rec.read(), exercise=3, measure="sync wait")  # the rows as recorded
    say(tokgen.gaps.sync_wait_text(v.name, tokgen.profiling.sync_wait_row(waits)))  # notebook 06's medians
    copy = calls[calls["cuda_call"] == "cudaMemcpyAsync"]  # the full profile's mean copy call: its µs over its calls
    say(tokgen.gaps.which_call_waits(waits, float((copy["cpu_us_per_step"] / copy["calls_per_step"]).iloc[0])
                                     if len(copy) else None))  # fmt: skip
