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
# **What we measure:** runtime for N = 100, 200, 400 new tokens at batch size 32 (the
# article's grid), how it scales with N, and the memory the caching allocator reserves.
#
# **The article's claim:** runtime roughly quadruples when N doubles (O(N²)), and memory
# fragmentation is high.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 32  # sequences per batch (the article: 32)
SEQ_LENS = [100, 200, 400]  # max_seqlen values (the article: 100, 200, 400)
RUNS = 3  # timed runs per variant after one warm-up (the article: 10; no paired test decides these claims)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt

import tokgen
from tokgen.display import plot_memory, plot_scaling, save_figure, say, show_claim, show_source, spread, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. The generator
#
# Note the two costs the article goes on to remove: `model(tokens)` recomputes every earlier
# position, and `finished.all().item()` makes the CPU wait for the GPU before it can queue the
# next step. (`mark_step` and `annotate` are no-ops unless a profiler is listening: notebook 06.)

# %%
show_source("naive")

# %% [markdown]
# ## 2. Measure
#
# One variant per N, timed interleaved: round r runs N = 100, 200 and 400 once each.
# Every row is appended to `data/01_naive.csv` with its provenance as soon as it is complete.

# %%
rec = tokgen.Recorder("01_naive", RESULTS_DIR, params=PARAMS)
variants = [
    tokgen.generator_variant("naive", model, batch_size=BATCH_SIZE, max_seqlen=n, by=["max_seqlen"]) for n in SEQ_LENS
]
results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
results[["variant", "status", "steps", "median_ms", "q25_ms", "q75_ms", "mean_ms", "std_ms", "min_ms", "max_ms"]]

# %% [markdown]
# ## 3. How runtime scales with N
#
# On log-log axes a power law N^k is a straight line of slope k: 2 for O(N²), 1 for O(N).

# %%
ok = results[results["status"] == "ok"].sort_values("max_seqlen")
fig, ax = plt.subplots(figsize=(6, 4))
plot_scaling(ax, {"naive": ok})
ax.set_title(f"Naive generation, B={BATCH_SIZE}")
save_figure(fig, "01_naive_scaling", RESULTS_DIR)

# %%
k = tokgen.stats.slope(ok["max_seqlen"], ok["median_ms"])
steps = [f"N={r['max_seqlen']}: {spread(r)}" for _, r in ok.iterrows()]
say(f"Median runtime (interquartile range): {'; '.join(steps)}. Fitted slope **{k:.2f}**.")

# %% [markdown]
# Why not exactly 2? Each step's cost has a part that grows with the sequence (the forward
# pass over i tokens, attention over i×i) and a fixed part (launching every kernel of the
# model from Python, and the per-step sync). At small N the fixed part dominates and the slope is below 2;
# the longer the sequence, the closer the quadratic term takes over.
#
# ## 4. Memory
#
# Each step allocates slightly larger tensors than the step before (the logits alone are
# B × i × 50257 floats), so the caching allocator can rarely reuse a freed block and keeps
# reserving new ones: the gap between what is reserved and what is in use is what the article
# calls fragmentation.

# %%
if DEVICE == "cuda":
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_memory(ax, ok)
    ax.axhline(ok["device_memory_gb"].iloc[0], color="grey", ls="--", lw=1, label="the GPU's memory")
    ax.legend()
    ax.set_title("Naive generation: peak memory (last run)")
    save_figure(fig, "01_naive_memory", RESULTS_DIR)
    full = ok[ok["peak_reserved_gb"] >= 0.9 * ok["device_memory_gb"]]
    say(
        f"The GPU has {ok['device_memory_gb'].iloc[0]:.0f} GB. "
        + (
            f"At N = {', '.join(map(str, full['max_seqlen']))} the allocator reserved ≥ 90% of it: it could not "
            "reserve more, so the fragmentation there is capped by the device, not set by the generator."
            if len(full)
            else "No N came near it: the fragmentation below is the allocator's own."
        )
    )
    say(table(ok[["variant", "peak_allocated_gb", "peak_reserved_gb", "frag_gb", "frag_pct"]], digits=2))
else:
    say("*Skipped on the CPU: the caching allocator's statistics exist only on CUDA.*")

# %% [markdown]
# ## 5. The article's claim, on our GPU

# %%
show_claim(1, RESULTS_DIR)

# %% [markdown]
# ## Summary
#
# * The naive generator redoes all earlier positions at every step; runtime grows faster than
#   linearly in N, and the measured slope says how close to quadratic it is on this GPU.
# * Growing tensors defeat the caching allocator's reuse: reserved memory far exceeds what is
#   allocated at any moment.
# * Every step also ends in a host-device sync; that cost is the subject of notebooks 06–09.
#
# ## Exercises
#
# 1. Re-run with `BATCH_SIZE=1` (papermill: `-p BATCH_SIZE 1`). Does the slope move towards 1
#    or 2, and why?
# 2. Pass `logits_to_keep=1` to the model call in a copy of the generator. Which part of the
#    memory picture changes?
# 3. Fit the runtime as a + b·N + c·N² instead of a power law. What do a, b and c stand for?
#
# Worked solutions: [`solutions/01_naive.ipynb`](../solutions/01_naive.ipynb).
