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
# # 14 · The article's idea upstream: transformers' `DeferredStopCheck`
#
# Since version 5.17, transformers' `generate()` can read its stop flag one step late, as the
# article proposes: `DeferredStopCheck` (in `transformers/generation/utils.py`) copies the flag
# to pinned memory without blocking, reads it on the following step, and undoes the one extra
# step at the end. It is switched on only for Apple's `mps` devices; the source says "we
# should enable it for cuda if we observe perf gains". This notebook observes.
#
# **You will learn:** how transformers defers its stop check, how to force it on for CUDA, and
# whether it pays on the whole GPU and in slices of it (notebook 13 measures which slices
# bracket the L40S's bandwidth).
#
# **What we measure:** `generate()` with the dynamic and the static cache (the static one
# compiles its decode step), the deferred check forced on vs off: the same tokens (early stops
# included), syncs per decode step, and the run time, interleaved, on the whole GPU and in the
# slices of `SLICE_SMS`.
#
# This notebook runs on the **newest** transformers, not the pinned 5.1.0 of notebooks 00–13:
# `run_all.sh` puts a newer one first on this kernel's path (`--newest-transformers DIR`, or
# installed with pip into `build/newest-transformers`). Every row records its version.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu" (on the CPU: tokens only, no syncs or slices)
SLICE_SMS = [8]  # slices (SMs) measured beside the whole GPU; section 4 says where each sits against the L40S
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 8  # timed runs per variant, interleaved, after one warm-up (the article: 10; the rule needs 6 or more)
SWEEP_BATCH_SIZES = [1, 8, 32, 64]  # section 5: our fastest generator against generate() static, deferred
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import contextlib

import matplotlib.pyplot as plt
import pandas as pd
import torch

import tokgen
from tokgen.display import deferred_gain_text, save_figure, say, show_source, stop_token, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
ON_GPU = DEVICE == "cuda"  # on the CPU the deferred check cannot run: it records CUDA events
VARIANTS = [f"generate() {cache} {check}" for cache in ("dynamic", "static") for check in ("sync", "deferred")]
VARIANTS = VARIANTS if ON_GPU else [v for v in VARIANTS if v.endswith("sync")]

# %% [markdown]
# ## 1. Forcing the deferred check on
#
# transformers decides in `DeferredStopCheck.is_supported(device, ...)`; we replace that
# decision, keep the rest of its rule (no assistant model; a cache it can roll back), and
# restore it afterwards. `tokgen.transformers_generate(..., deferred_stop=True)` wraps
# `generate()` in it.

# %%
show_source(tokgen.generators.deferred_stop_check)

# %% [markdown]
# ## 2. Same tokens
#
# The deferred check runs one step past the stop and must undo it. As EOS id we take the first
# token that the naive generator emits for the first time at step `STOP_AT` or later (all rows
# share the prompt, so all stop there; in a run too short for that, the last new token before
# it): every variant must return exactly the naive tokens. The cell says where the stop fell.

# %%
STOP_AT = 10  # aim the early stop at this step
probe = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=-1)  # no stop
eos, steps = stop_token(probe[0], min(STOP_AT, MAX_SEQLEN))
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
for name in VARIANTS:
    out = tokgen.generate(name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    assert torch.equal(out, reference), f"{name}: {out.shape[1]} columns, naive {reference.shape[1]}"
say(
    f"transformers {tokgen.environment()['transformers']}, EOS id {eos}: every row stops after step {steps} "
    f"({reference.shape[1]} columns with the prompt); {', '.join(VARIANTS)}: the naive tokens."
)

# %% [markdown]
# ## 3. Syncs per decode step
#
# Counted as in notebook 11: `.item()`-style reads (`aten::_local_scalar_dense`) and the CUDA
# runtime's blocking waits, per decode step (N = `MAX_SEQLEN` steps, no early stop; one step makes
# one token for each of the `BATCH_SIZE` sequences). A profiler session lost to CUPTI's teardown
# leaves its row "not counted" and the timings below still run. The counts go to
# `data/14_syncs.csv`, and the lines below are read from it.


# %%
def syncs(name: str) -> dict:
    run = lambda: tokgen.generate(name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    run()  # warm-up: compilation
    return {"variant": name, **tokgen.profiling.syncs_per_step(run, MAX_SEQLEN)}  # a lost session: its row says so


if ON_GPU:
    sync_rec = tokgen.Recorder("14_syncs", RESULTS_DIR, params=PARAMS)
    for name in VARIANTS:
        sync_rec.write({**syncs(name), "steps": MAX_SEQLEN})
    audit = sync_rec.read().set_index("variant")
    kinds = ["local_scalar_dense", "sync_debug_warnings", "stream_syncs", "event_syncs"]
    say(table(audit.reset_index(), ["variant", *kinds, "counted"], digits=2))  # headers in words: display.header_of
    for cache in ("dynamic", "static"):
        say(tokgen.voice.sync_difference_text(audit, cache, kinds))
else:
    say("*On the CPU: no device to synchronize with.*")

# %% [markdown]
# A `.item()` on a tensor that is already on the host (a pinned copy) reads it without waiting
# for the GPU, and a wait on an event is no stream sync: the stream and event columns, not the
# `.item()` count, say how often the CPU waits, and for what.
#
# ## 4. Is it faster?
#
# One interleaved comparison of the four variants per place: the whole GPU, then each slice.

# %%
rec = tokgen.Recorder("14_deferred_stop", RESULTS_DIR, params=PARAMS)
sizes = tokgen.gpu_slice.sizes_that_fit(SLICE_SMS) if ON_GPU else []  # a size above this GPU's SMs: said, skipped
for sms in [None, *sizes]:
    variants = [tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN) for g in VARIANTS]
    with tokgen.GpuSlice(sms) if sms else contextlib.nullcontext():
        tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
results = rec.read()
say(table(results, ["gpu_sms", "variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_share", "transformers"], 2))

# %% [markdown]
# Where the slices sit: the copy bandwidth each one measured when it was entered, against the
# L40S's, and whether notebook 13 (in the same results folder) found it to be one of the two
# slices that bracket the L40S.

# %%
sliced = results[results["gpu_sms"].astype(str) != "all"]
try:  # notebook 13's slices of this run (commit and GPU; each of its rows names its own slice)
    slices = tokgen.rows_at("13_slices", RESULTS_DIR, "notebook 14", this_run=("commit", "gpu"))
    bracket = set(tokgen.gpu_slice.bracketing(dict(zip(slices["gpu_sms"].astype(int), slices["copy_gbs"]))))
except tokgen.MissingRows as err:  # notebook 13 not run here, or in another run
    bracket = set()
    if len(sliced):
        say(f"*{err}*")
except ValueError:  # no two slices around the L40S
    bracket = set()
for line in tokgen.display.slice_bandwidth_lines(sliced, bracket, tokgen.gpu_slice.L40S_GBS):
    say(line)

# %% [markdown]
# Was each slice row really run in the slice? transformers' static-cache `generate()` replays
# CUDA graphs it captures itself, on its own stream; a graph can run on the whole GPU while
# the code around it sits in a slice. A run confined to a small slice should take longer on the
# GPU than the whole GPU does: a slice row counts as confined only where its GPU busy time is
# more than 1.5 times the whole GPU's (`tokgen.voice.CONFINED_RATIO`); any other is taken as not
# having run there (`confined` False, the rule in the source below). That
# is an inference from times: the `slice_escapes` counter, which counts the runs that left the
# slice's context, does not see graph replays.

# %%
show_source(tokgen.claims.deferred_stop_gains)

# %%
deferred = tokgen.claims.deferred_stop_gains(RESULTS_DIR) if ON_GPU else pd.DataFrame()
if len(deferred):
    deferred["deferred vs sync"] = [deferred_gain_text(g) for g in deferred.to_dict("records")]
    say(table(deferred, ["gpu_sms", "cache", "confined", "gpu_share_sync", "deferred vs sync"], 2))
else:
    say("No deferred variant was measured (CPU run).")

# %% [markdown]
# The speed-up is paired (the median over rounds of the synchronous check's time over the
# deferred one's, > 1: deferring is faster; notebook 00 says when it is real).
#
# ## 5. Our graph generator against transformers' static `generate()`, by batch size
#
# The upstream setting this notebook studies is `generate(cache_implementation="static")`
# with this deferred check forced on; the table above says whether the check itself pays here.
# Against it: the registry generator that notebook 10's run ranked first, round by round against
# that run's naive generator (read from its CSV in this results folder), at each batch size of
# `SWEEP_BATCH_SIZES`, interleaved, each against the task's floor at that batch size (notebook 12:
# every weight once per decode step, the filled KV cache once per step, at the copy bandwidth
# notebook 10 recorded, or measured here).

# %%
try:
    fastest = tokgen.bandwidth.fastest_generator(RESULTS_DIR)
    say(f"Of the registry generators in notebook 10's run, ranked round by round against its naive generator: "
        f"{tokgen.bandwidth.fastest_words(fastest)}." if fastest else
        "*Notebook 10's run has no registry generator, or no naive run to rank them against: nothing to sweep.*")
except tokgen.MissingRows as err:
    fastest = None
    say(f"*{err}*")

# %%
sweep = None
if fastest and ON_GPU:
    bandwidth = tokgen.bandwidth.bandwidth_for(RESULTS_DIR, DEVICE)
    sweep = tokgen.bandwidth.sweep_against_floor(model, fastest, "generate() static deferred", SWEEP_BATCH_SIZES,
                                                 MAX_SEQLEN, RUNS, bandwidth, RESULTS_DIR, PARAMS)  # fmt: skip
    say(table(sweep, ["batch_size", "variant", "median_ms", "floor_ms", "times_floor", "speed-up"], digits=2))
    fig, ax = plt.subplots(figsize=(7, 4))
    tokgen.display.plot_sweep_against_floor(ax, sweep)
    save_figure(fig, "14_batch_sweep", RESULTS_DIR)
    say(tokgen.bandwidth.sweep_sentence(sweep))

# %% [markdown]
# ## Summary, read from this run

# %%
for r in deferred.to_dict("records"):  # where: inferred from GPU busy times, the sentence says how
    say(tokgen.display.deferred_row_text(tokgen.voice.confinement_text(r, results), r, bold=True))
if said := tokgen.display.shares_by_outcome_text(deferred):  # only rows that ran where they say
    say(said)

# %% [markdown]
# * transformers already holds the article's idea; whether it should be on for CUDA is what the
#   lines above answer for this GPU, these sizes and these places.
# * Deferring computes at most one step past an EOS stop per generation (and undoes it): a cost
#   that weighs more the shorter the generation.
#
# ## Exercises
#
# 1. Run with `BATCH_SIZE = 256`. How do the GPU share and the gain move?
# 2. Does the static cache (a compiled, CUDA-graphed step) show a different gain than the
#    dynamic one? Look at the GPU share of each.
#
# Worked solutions: [`solutions/14_deferred_stop.ipynb`](../solutions/14_deferred_stop.ipynb).
