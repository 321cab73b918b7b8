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
# # 01 · Naive generation: the whole sequence, every step
#
# The article's baseline feeds the *entire* sequence generated so far through the model at
# every step, takes the logits of the last position, appends the argmax token, and asks the
# GPU whether every sequence has produced EOS yet (`.item()`).
#
# **You will learn:** why re-running the whole sequence costs O(N²), how to time GPU work
# (warm-up, synchronize, interleaved rounds), and how to read peak allocated vs reserved
# memory.
#
# **What this step adds:** the baseline every later notebook is compared with.
#
# **What we measure:** runtime for each N of `SEQ_LENS` new tokens at batch size `BATCH_SIZE`,
# how it scales with N, and the memory the caching allocator reserves. The article's grid was
# B = 32, N = 100, 200, 400; the sizes of a run come from its parameters, and the line above each
# table lists the ones it ran (the slices of notebook 13 ran other ones).
#
# Like every timed notebook of the article's (01–08), this one can run on the whole GPU or inside
# a **green-context slice**: a number `GPU_SMS` of the GPU's streaming multiprocessors (SMs, the
# units that run kernels) to which its kernels are confined (notebook 13). A **decode step**
# generates one new token for every sequence of the batch. The README's
# [glossary](../README.md#glossary) explains these and the other terms.
#
# **The article's claim:** runtime roughly quadruples when N doubles (O(N²)), and memory
# fragmentation is high.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 32  # sequences per batch (the article: 32)
SEQ_LENS = [100, 200, 400]  # max_seqlen values (the article: 100, 200, 400)
RUNS = 10  # timed rounds after one warm-up, the N interleaved (the article: 10); claim 1 reads each doubling from them
MAX_RUNS = 20  # the cap: while claim 1's verdict is open (section 2), every N runs on: RUNS, twice that, … this
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt

import tokgen
from tokgen.display import plot_memory, plot_scaling, save_figure, say, show_claim, show_source

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. The generator
#
# Note the two costs the article goes on to remove: `model(tokens)` recomputes every earlier
# position, and `finished.all().item()` makes the CPU wait for the GPU before it can queue the
# next step. (`on_step` does nothing unless a profiler passes its own: notebook 06.)

# %%
show_source("naive")

# %% [markdown]
# ## 2. Measure
#
# One variant per N, timed interleaved: every round runs each N once. More rounds are run only
# while they are needed: after the first `RUNS` rounds, claim 1 is judged on them as section 5
# judges it, and only while its verdict is undecided does every N run on, to twice as many
# rounds, doubling up to the cap `MAX_RUNS`. Undecided means that the interval of a doubling the
# verdict turns on still holds the criterion's threshold (section 5), or that the rounds are too
# few for an interval at all. Two rules keep these looks sound:
#
# * Every look is one more chance to stop on a side of the threshold that noise produced, as with
#   notebook 00's sequential comparisons, and the same design answers it: each look reads its
#   intervals at its own level, and the levels of the looks that may decide add up to 5%
#   (`tokgen.stats.look_levels`). With the defaults (`RUNS` = 10, `MAX_RUNS` = 20) the looks are at
#   10 and 20 rounds and each reads 97.5% intervals, which together hold the true growth at least
#   95% of the time (a "95% sequential interval"; other `RUNS` and `MAX_RUNS` give other looks and
#   levels, which `look_levels` computes the same way); a
#   doubling keeps the reading of the first look whose interval lies clear of the threshold.
#   Section 5 and notebook 09 read the verdict by the same rule, from the parameters recorded
#   with the table.
# * No verdict is read on fewer than 10 rounds (`tokgen.claims.MIN_ROUNDS`, the article's count):
#   the looks that may decide start there.
#
# A round that lost its time at an N (none recorded, or not positive) is left out of the doublings
# at that N, and there the looks count valid rounds: a doubling's look of 10 is its first 10 valid
# rounds, which the run may have reached only at a later look. The claim then names the rounds it
# read.
#
# The intervals already say how far the rounds' noise could move each doubling, so the verdict is
# not read again on rounds drawn at random from these (the bootstrap of section 3). The line below
# the table says how many rounds ran and why.
# Every row is appended to `data/01_naive.csv` with its provenance as soon as it is complete. The
# table gives each N's median over its rounds and their IQR (interquartile range: the middle half
# of the rounds).

# %%
rec = tokgen.Recorder("01_naive", RESULTS_DIR, params=PARAMS)
variants = [
    tokgen.generator_variant("naive", model, batch_size=BATCH_SIZE, max_seqlen=n, by=["max_seqlen"]) for n in SEQ_LENS
]
run_on = tokgen.claims.RunOn(1, "01_naive", rec.stamped)  # claim 1 on the rounds so far: on only while it is open
results = tokgen.compare(variants, rounds=RUNS, max_rounds=MAX_RUNS, until=run_on, device=DEVICE, record=rec.write)
rounds = int(results["runs"].max())
say(f"{tokgen.display.where_measured(DEVICE)} B = {BATCH_SIZE}; N = {', '.join(map(str, SEQ_LENS))}.")
say(tokgen.display.runs_table(results))
say(run_on.text(rounds, MAX_RUNS))

# %% [markdown]
# ## 3. How runtime scales with N
#
# On log-log axes a power law N^k is a straight line of slope k: 2 for O(N²), 1 for O(N). The
# dotted line has slope 2, drawn through the smallest N's median. The sentence below the figure
# gives the **paired slope**: each round's slope across the N (every N ran once in each round),
# then the median of those slopes over the rounds; a line through each N's median would pair
# nothing. Its range comes from **bootstrap** draws: each picks as many rounds as ran, at random and
# with replacement from those that ran, the same rounds for every N (they ran together), and fits
# the slope again; 95% of the draws lie in the range. The slope summarises all the N in one
# number; claim 1 is not judged on it but on each doubling (section 5), since the article's claim
# is about every doubling.

# %%
ok = results[results["status"] == "ok"].sort_values("max_seqlen").assign(params=rec.params)  # its looks, as in the CSV
fig, ax = plt.subplots(figsize=(6, 4))
plot_scaling(ax, {"naive": ok})
ns = ok["max_seqlen"]  # a slope-2 line (O(N²)) through the smallest N's median, to read the measured one against
ax.plot(ns, ok["median_ms"].iloc[0] * (ns / ns.iloc[0]) ** 2, "k:", label="slope 2 (O(N²)), through the smallest N")
ax.legend()
ax.set_title(f"Naive generation, B={BATCH_SIZE}")
save_figure(fig, "01_naive_scaling", RESULTS_DIR)

# %%
say(tokgen.display.paired_slope_text(ok))  # paired by round, never medians

# %% [markdown]
# Why need the slope not be 2? Each step's cost has a part that grows with the sequence (the
# forward pass over i tokens, attention over i×i) and a part that does not (launching every
# kernel of the model from Python, and the per-step sync). Where the second part weighs more, the
# slope lies below 2; the longer the sequence, the more the growing part counts. A slope fitted
# over a few sizes describes those sizes only. Where the allocator ran out of memory and retried
# (section 4 prints its retries per N, counted in the last run only: the other rounds' are not
# known), that N's times include the retries: its growth over the N before is then not the
# generator's work alone.
#
# ### Host-bound or GPU-bound?
#
# The table below measures how much of each step the GPU works. Per step: the wall time, and the
# part of it in which the GPU was busy (read by torch.profiler from CUPTI, CUDA's profiling
# interface: one profiled run per N, after the timed rounds), as a share of the wall time: under
# half the step is **host-bound** (the host sets the pace), from 90% **GPU-bound**, between the
# two **mixed**. Compare the columns down the N: the busy part is the GPU's work, which grows with
# the sequence; the rest of the step (wall less busy), in which the GPU waits, is shown beside it
# (one profiled run per N, so whether it changes with N is not judged here). The lower the share, the
# more that part weighs, and the further below 2 the slope over those N can lie. The table says
# how long the GPU waits, not what for: the launches, the sync and the allocator are candidates,
# none measured here (notebook 06 puts a step on a timeline). One of them is part of the method:
# as in the article, every timed run starts from an empty allocator cache (`reset_memory` calls
# `torch.cuda.empty_cache()` before each run), so each run's time includes reserving its memory
# from the GPU again (`num_device_alloc` in `data/01_naive.csv` counts those calls in the last run).

# %%
doublings = [(long, short) for short, long in zip(ok["variant"], ok["variant"].iloc[1:])]  # claim 1's: t(2N) / t(N)
say(tokgen.display.bound_table(ok))
say(tokgen.display.round_trend(ok, pairs=doublings, ratios="paired ratios"))  # under the host's line: drift?

# %% [markdown]
# ## 4. Memory
#
# Each step allocates slightly larger tensors than the step before (the logits alone are
# B × i × vocabulary-size floats), so the caching allocator can rarely reuse a freed block and keeps
# reserving new ones: the gap between what is reserved and what is in use is what the article
# calls fragmentation. Whether the device's memory capped it is measured, not inferred: when a
# cudaMalloc fails, the allocator frees its cached blocks and tries again, and counts it
# (`num_alloc_retries` in `torch.cuda.memory_stats()`, recorded per run beside the peaks).

# %%
if DEVICE == "cuda":
    gpu_gb = ok["device_memory_gb"].iloc[0]
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_memory(ax, ok, device_gb=gpu_gb)
    ax.set_title("Naive generation: peak memory (last run)")
    save_figure(fig, "01_naive_memory", RESULTS_DIR)
    say(tokgen.display.device_memory_note(ok, tokgen.environment()["gpu"]))  # and the allocator's retries there
    say(tokgen.display.memory_table(ok))
else:
    say("*Skipped on the CPU: the caching allocator's statistics exist only on CUDA.*")

# %% [markdown]
# ## 5. The article's claim, measured here
#
# The verdict reads this notebook's table in `data/`, by section 2's rules. It judges each
# doubling: for each step from one N to the next, each round's time at the longer N over its time
# at the shorter, the median over the rounds, and its 95% interval (the same paired interval that
# later notebooks give a speed-up; a step whose N do not double is converted to its growth per
# doubling). "Roughly quadruples" is read as at least ×3.25 per doubling: 2 to the power 1.7, an
# exponent 15% short of O(N²)'s 2, so that a growth near ×4 counts and one halfway to O(N) does
# not. Every step's interval above ×3.25 holds the runtime part; one step's interval at or below
# it fails it; an interval that holds ×3.25 leaves it open, and more rounds (section 2 ran them
# only while the verdict was open, up to its cap) narrow it. Each interval is read at the level of
# its look (section 2). Since one step below fails the part, the small chance that a step whose
# true growth is ×3.25 reads below adds up over the steps: the criterion states that bound.
# Fragmentation must be at least half of what is reserved at every N. The measured text ends
# with which part the verdict rests on. The paired slope of section 3 is shown beside the
# verdict, not judged.

# %%
show_claim(1, RESULTS_DIR)

# %% [markdown]
# ## Summary
#
# * The naive generator redoes all earlier positions at every step: O(N²) work. How much of that
#   quadratic growth a run shows depends on how much of each step does not grow with N.
# * Growing tensors can defeat the caching allocator's reuse: what it reserves can run ahead of
#   what is allocated, which the article calls fragmentation.
# * Every step also ends in a host-device sync; that cost is the subject of notebooks 06–09.
#
# What this run found, computed from its tables:

# %%
say(tokgen.display.scaling_summary(ok))  # the growth per doubling, the GPU's busy time and the rest of each step

# %%
say(f"- {tokgen.claims.claim(1, RESULTS_DIR)['measured']}.")

# %% [markdown]
# ## Exercises
#
# 1. Re-run with `BATCH_SIZE=1` (papermill: `-p BATCH_SIZE 1`). Does the slope move towards 1
#    or 2, and why?
# 2. Pass `logits_to_keep=1` to the model call in a copy of the generator. Which part of the
#    memory picture changes?
# 3. Fit the runtime as a + b·N + c·N² instead of a power law. What could a, b and c stand for,
#    and how far can a fit through the measured sizes tell you?
#
# Worked solutions: [`solutions/01_naive.ipynb`](../solutions/01_naive.ipynb).
