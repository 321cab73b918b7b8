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
# # 05 · torch.compile on the static-cache generator
#
# With a static cache every decode step has the same shapes, so `torch.compile(model)` can
# compile the forward for those shapes and generate fused kernels for it: fewer, larger kernels,
# and less Python per step. Compiling happens in the first call, and it need not happen only
# once there: dynamo recompiles when something it specialized on changes (a shape, a stride),
# until the compiled code covers what it sees. Solution 05 counts the compilations.
#
# **You will learn:** what `torch.compile` costs up front and saves per generation, and how to
# keep compilation out of a timing.
#
# **What this step adds:** one line, `model = torch.compile(model)`; the generator is
# unchanged (notebook 04's `kv_static`).
#
# **What we measure:** at `BATCH_SIZE` and `MAX_SEQLEN` (the article's B = 32, N = 100), the
# eager and the compiled model interleaved; the time of the first call (tracing, compilation
# and one generation) reported apart from the steady state. The comparison runs sequentially
# (notebook 00, section 4): `RUNS` rounds, then more, up to `MAX_RUNS`, while it is undecided.
#
# **The article's claim:** a further speed-up.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 10  # timed rounds at the first look, interleaved, after one warm-up (the article: 10)
MAX_RUNS = 80  # the cap: a comparison still undecided runs on to at most this many rounds (claim 5)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.display import plot_paired_rounds, save_figure, say, show_claim, show_source

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
say(tokgen.fresh_compile_caches())  # before anything compiles: section 2 times a cold first compile

# %% [markdown]
# ## 1. The compiled model
#
# As in the article: the whole `GPT2LMHeadModel` is compiled with the default mode (no CUDA
# graphs; notebook 10 adds them). The loop around it, the cache object and the `.item()` stop
# check stay in Python.

# %%
compiled = torch.compile(model, backend=COMPILE_BACKEND)
show_source("kv_static")

# %% [markdown]
# ## 2. Measure
#
# The first call of the compiled variant holds its tracing and every compilation, however many
# there are, and one generation (its `first_call_ms`); the timed rounds that follow are steady state. torch.compile
# keeps what it compiled on disk (inductor's and Triton's caches), and a later process that
# compiles the same model loads it from there instead: the first call would then time a load,
# not a compilation. That is why this notebook points those caches at an empty folder before
# anything compiles (the line under the environment above).

# %%
rec = tokgen.Recorder("05_torch_compile", RESULTS_DIR, params=PARAMS)
variants = [
    tokgen.generator_variant("kv_static", m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, compiled=m is compiled)
    for m in (model, compiled)
]
pairs = [(variants[0].name, variants[1].name)]  # eager, compiled
results = tokgen.compare(variants, rounds=RUNS, max_rounds=MAX_RUNS, pairs=pairs, device=DEVICE, record=rec.write)
say(f"{tokgen.display.where_measured(DEVICE)} B = {BATCH_SIZE}, N = {MAX_SEQLEN}.")
say(tokgen.display.runs_table(results, {"first call, ms": "first_call_ms"}))
say(tokgen.display.design_text(tokgen.stats.looks_up_to(MAX_RUNS, RUNS)))

# %%
ok = results[results["status"] == "ok"]
row = ok[ok["compiled"]].iloc[0]
say(tokgen.display.first_call_text(row))
say(tokgen.display.speedup_table(tokgen.gains(ok, tokgen.label("kv_static"))))


# %% [markdown]
# ### Host-bound or GPU-bound?
#
# Per step: the wall time, and the part of it in which the GPU was busy (read by torch.profiler
# from CUPTI, CUDA's profiling interface: one profiled run per variant), as a share of the wall
# time: under half the step is **host-bound** (the host sets the pace), from 90% **GPU-bound**,
# between the two **mixed**. Where the host sets the pace, hiding a sync can pay only as much as
# the host time it frees. Notebook 14 measures one such case: transformers' deferred stop check,
# which reads the stop flag one step late, so the host need not wait for it before queuing the next
# step.
#
# These absolute host times (the wall time per step, the GPU share) can move between runs and cards
# by more than their spread within a run. The last line under the table gives the host's probe: a
# fixed pure-Python loop (`tokgen.results.host_loop_ms`) timed just before and just after these
# rounds (`data/run_all.csv` has the same probe before and after each notebook of the run). It says
# how fast the host ran Python then, not why. Compare host times only within one run, and read
# speed-ups from the paired rounds.

# %%
say(tokgen.display.bound_table(ok))
say(tokgen.display.round_trend(ok, pairs=pairs))  # under the host's line: did the rounds' times drift?

# %% [markdown]
# The figure shows the speed-up as this page measures it: one dot per round (the eager run's time
# over the compiled run's, in the same round), their median and its interval. Dividing the two
# medians of the table above gives another number, which is not the paired speed-up.

# %%
fig, ax = plt.subplots(figsize=(6, 2.8))
plot_paired_rounds(ax, ok, tokgen.label("kv_static"), tokgen.label("kv_static", compiled=True))
ax.set_title(f"Static cache, B={BATCH_SIZE}, N={MAX_SEQLEN}: torch.compile against eager, round by round")
save_figure(fig, "05_torch_compile", RESULTS_DIR)

# %% [markdown]
# ## 3. The article's claim, measured here

# %%
show_claim(5, RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run
#
# The second bullet asks whether the per-round speed-ups moved during the run, by one rule: the
# first half of the rounds and the last half give ranges that do not overlap. With no drift, the
# rounds' order not mattering, halves of h rounds fall apart so by chance 2 times in C(2h, h), 1 in
# 126 for halves of 5. Where they do, the paired speed-up stays this page's one measure, but it and
# the tables pool rounds that differ; the bullet gives the host's probe beside them and names no
# cause.

# %%
eager_compiled = tokgen.label("kv_static"), tokgen.label("kv_static", compiled=True)
say("* " + tokgen.display.finding(ok, *eager_compiled))
say("* " + tokgen.display.drift_text(ok, *eager_compiled))  # the rule: the halves' per-round speed-ups apart
say("* " + tokgen.display.first_call_price(row))

# %% [markdown]
# ## Summary
#
# * Compilation costs time up front, in the first call (which may compile more than once). What
#   compiled code is meant to buy is fewer, fused kernels with less Python between them; this
#   notebook does not measure that (solution 05, exercise 3, counts the GPU operations per step).
# * The per-step `.item()` is still there: at every step boundary the host cannot go on until the
#   GPU has produced that step's tokens. This notebook does not measure how long the host waits
#   there, if at all; notebook 06 measures the step boundary on a trace. The bound table above
#   says which side sets a step's pace.
#
# What this run found, computed from its tables:

# %%
say(tokgen.display.findings_text(tokgen.gains(ok, tokgen.label("kv_static"))))

# %% [markdown]
# ## Exercises
#
# 1. Compile with `dynamic=False` and with `mode="max-autotune-no-cudagraphs"`. What happens to
#    the compile time and the steady state?
# 2. Set `TORCH_LOGS=recompiles` and run one generation with the dynamic cache on the compiled
#    model. How often does it recompile, and why?
# 3. Count the kernels per step, eager vs compiled (torch.profiler, notebook 06).
#
# Worked solutions: [`solutions/05_torch_compile.ipynb`](../solutions/05_torch_compile.ipynb).
