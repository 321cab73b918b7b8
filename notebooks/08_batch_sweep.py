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
# # 08 · Batch-size sweep: when does pipelining pay?
#
# Pipelining is meant to hide the gap at each step boundary (notebook 06 measures whether it
# does, at one batch size). Whether that gap matters depends on how long
# the step's own kernels take; the article's reasoning: small batches mean short kernels, so a
# gap of fixed length is a larger share of each step.
#
# **You will learn:** how pipelining's gain changes with the batch size, and what the GPU busy
# share says about who sets the pace.
#
# **What this step adds:** the sweep the article ran, with every point's spread.
#
# **What we measure:** at `MAX_SEQLEN` new tokens, for each batch size of `BATCH_SIZES` (eager)
# and `COMPILED_BATCH_SIZES` (compiled): static-cache generation synchronous vs pipelined,
# interleaved per batch size; the speed-up × with the interquartile range of its rounds. A batch
# size that runs out of memory is recorded and the sweep goes on. The batch sizes come from the
# parameters, and the line above the first table lists those this run used (the slice runs of
# `./run_all.sh --slice` used other ones: README's reference run lists them).
#
# **The article's claim:** the largest gain, 11.6%, at the smallest batch, shrinking as B grows.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
BATCH_SIZES = [1, 16, 256]  # batch sizes of the eager sweep (the article: "several")
COMPILED_BATCH_SIZES = [1, 16, 256]  # batch sizes of the compiled sweep
RUNS = 10  # timed runs per variant and batch size at the first look, interleaved, after one warm-up
MAX_RUNS = 80  # the cap: a batch size still undecided runs on to at most this many rounds (claim 8)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.display import save_figure, say, show_claim, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. Measure
#
# One interleaved comparison per batch size (sync and pipelined), so each batch size's rows are
# on disk as soon as it is done. The compiled model is compiled afresh for every batch size
# (`torch._dynamo.reset()`, then `torch.compile` as in notebooks 05 and 07): left alone,
# torch.compile would mark the batch dimension dynamic after the second size, and the sweep's
# compiled rows would no longer run the kernels of notebooks 05 and 07. (Not `dynamic=False`:
# the newest token's view `tokens[:, -1:]` has a new stride every step, and with static shapes
# every step recompiles until dynamo's limit of 8, then runs eager.) Compilation is in the
# warm-up, not in the timed rounds.
# The article does not say how many runs its sweep used; each point runs sequentially (notebook
# 00, section 4): `RUNS` rounds, then more until it is decided, up to `MAX_RUNS`. At the largest
# batch size of each model it also runs until its interval says whether the gain is below the
# ±5% band (claim 8 asks it).

# %%
rec = tokgen.Recorder("08_batch_sweep", RESULTS_DIR, params=PARAMS)
for is_compiled, sizes in ((False, BATCH_SIZES), (True, COMPILED_BATCH_SIZES)):
    for b in sizes:
        if is_compiled:  # a fresh compilation per batch size, specialized to it
            torch._dynamo.reset()
        m = torch.compile(model, backend=COMPILE_BACKEND) if is_compiled else model
        variants = [
            tokgen.generator_variant(g, m, batch_size=b, max_seqlen=MAX_SEQLEN, compiled=is_compiled, by=["batch_size"])
            for g in ("kv_static", "pipelined_static")
        ]
        pair = (variants[0].name, variants[1].name, tokgen.claims.sweep_thresholds(b, max(sizes)))
        tokgen.compare(variants, rounds=RUNS, max_rounds=MAX_RUNS, pairs=[pair], device=DEVICE, record=rec.write)

# %%
results = rec.read()
ok = results[results["status"] == "ok"]
say(
    f"{tokgen.display.where_measured(DEVICE)} N = {MAX_SEQLEN}; eager at B = {', '.join(map(str, BATCH_SIZES))}; "
    f"compiled at B = {', '.join(map(str, COMPILED_BATCH_SIZES))}."
)
say(tokgen.display.runs_table(results))
if len(ok) < len(results):  # a batch size that ran out of memory, or failed: what it said
    say(table(results[results["status"] != "ok"], ["variant", "status", "error"]))
say(tokgen.display.design_text(tokgen.stats.looks_up_to(MAX_RUNS, RUNS)))

# %% [markdown]
# ## 2. Pipelining's gain per batch size
#
# The speed-up is the median over rounds of t(sync) / t(pipelined), above ×1 pipelining is
# faster, with the IQR of the per-round ratios; each batch size shows the rounds it used and its
# interval at the level of the look that judged it.

# %%
g = tokgen.claims.sweep_gains(RESULTS_DIR)
g["model"] = g["compiled"].map({False: "eager", True: "compiled"})
g["interval"] = [tokgen.display.interval_text(r) for r in g.to_dict("records")]
columns = {"model": "model", "B": "batch_size", "interval": "interval"}
say(tokgen.display.speedup_table(g, columns, legend=False))

# %% [markdown]
# Left: the speed-up per batch size, a filled circle where the signed-rank test decided it
# (faster or slower), a filled square where the design showed no effect within the band (also a
# decision), a hollow circle where it decided nothing. Right: the time per step of each generator.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
tokgen.display.plot_sweep(axes, g, ok)
fig.suptitle(f"Pipelining vs batch size, N={MAX_SEQLEN}")
save_figure(fig, "08_batch_sweep", RESULTS_DIR)


# %% [markdown]
# ### Host-bound or GPU-bound?
#
# Per step: the wall time, and the part of it in which the GPU was busy (CUPTI, one profiled run
# per variant), as a share of the wall time: under half the step is **host-bound** (the host sets
# the pace), from 90% **GPU-bound**, between the two **mixed**. Where the host sets the pace,
# hiding a sync can pay only as much as the host time it frees (notebook 14 measures
# transformers' own deferred stop check, another way to free it).

# %%
say(tokgen.display.bound_table(ok))
say(tokgen.display.round_trend(ok))  # under the host's line: did the rounds' times drift?
# %% [markdown]
# Read the right panel first: a time per step that hardly changes with B points to a step bound
# by per-step overhead (launches, Python, the sync) rather than by the GPU's arithmetic. This is a
# way to read the picture, not a measurement: each B was timed in its own comparison, so the
# panel's points are not paired with each other, and the host can drift between them. The GPU
# share (the table above) says how much of each step the GPU's own work fills; the takeaways below
# read the two together, per model.
#
# ## 3. The article's claim, measured here

# %%
show_claim(8, RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run

# %%
for compiled_flag, fam in g.groupby("compiled"):
    name = "Compiled" if compiled_flag else "Eager"
    say(f"* {name}. " + tokgen.display.sweep_takeaway(fam, ok[ok["compiled"] == compiled_flag]))

# %% [markdown]
# ## Summary
#
# * The sweep shows whether, and from which batch size, the GPU's work takes over a step from
#   per-step overhead.
# * Pipelining's gain, with its spread, per batch size and per model (eager, compiled), says
#   whether, and where, hiding the stop check's sync is worth two streams.
#
# ## Exercises
#
# 1. Extend the sweep past the largest batch size measured here (e.g. `-p BATCH_SIZES "[256,
#    512, 1024]"`). Where does the step time start to grow linearly with B?
# 2. Repeat the sweep with the dynamic cache. Does the picture change?
# 3. Fit the time per step as a + b·B over the sweep. What does the intercept a describe, and
#    why is it a property of the fit rather than a measured cost?
#
# Worked solutions: [`solutions/08_batch_sweep.ipynb`](../solutions/08_batch_sweep.ipynb).
