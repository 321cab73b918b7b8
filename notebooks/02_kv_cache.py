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
# # 02 · KV cache: feed only the newest token
#
# Attention at step i needs the keys and values of all earlier positions, but those never
# change: a KV cache keeps them, and each step runs the model on one new token only. The
# article uses transformers' default `DynamicCache`, which grows by one position per step.
#
# **You will learn:** how a KV cache turns each step into one token's work, and how to compare
# two runs' scaling on log-log axes.
#
# **What this step adds:** O(N) work instead of O(N²).
#
# **What we measure:** the same grid as notebook 01 (`BATCH_SIZE`, `SEQ_LENS`), the speed-up
# over the naive generator per N, the scaling slope, and memory.
#
# **The article's claim:** a large speed-up that grows with N; fragmentation remains a concern.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 32  # sequences per batch (the article: 32)
SEQ_LENS = [100, 200, 400]  # max_seqlen values (the article: 100, 200, 400)
RUNS = 5  # timed runs per variant after one warm-up (the article: 10; claims 1 and 2 compare medians: no paired test)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt

import tokgen
from tokgen.display import plot_memory, plot_scaling, save_figure, say, show_claim, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. The generator
#
# One function serves notebooks 02 and 04, as in the article: `cache="dynamic"` here,
# `cache="static"` in notebook 04. The model gets `tokens[:, -1:]` and the cache object, and
# returns logits for the one new position.

# %%
show_source("kv_dynamic")

# %%
show_source(tokgen.generators.make_cache)

# %% [markdown]
# ## 2. Measure

# %%
rec = tokgen.Recorder("02_kv_cache", RESULTS_DIR, params=PARAMS)
variants = [
    tokgen.generator_variant("kv_dynamic", model, batch_size=BATCH_SIZE, max_seqlen=n, by=["max_seqlen"])
    for n in SEQ_LENS
]
results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
ok = results[results["status"] == "ok"].sort_values("max_seqlen")
say(f"{tokgen.display.where_measured(DEVICE)} B = {BATCH_SIZE}; N = {', '.join(map(str, SEQ_LENS))}.")
say(tokgen.display.runs_table(results))
say(tokgen.display.rounds_sentence(RUNS))

# %% [markdown]
# ## 3. Speed-up over naive, and scaling
#
# The naive numbers come from notebook 01's CSV: a different process, run earlier. No round
# pairs a naive run with a KV-cache run, so the speed-up here is a ratio of medians, and a small
# one may be drift between the two runs rather than the cache. From notebook 03 on, variants we
# compare run interleaved in one process.

# %%
try:
    naive = tokgen.rows_at("01_naive", RESULTS_DIR, "notebook 02", BATCH_SIZE=BATCH_SIZE, SEQ_LENS=SEQ_LENS)
    naive = naive.sort_values("max_seqlen")
except tokgen.MissingRows as err:  # notebook 01 has not run here at these sizes: no speed-up to show
    naive = None
    say(f"*{err}*")
if naive is not None:
    both = ok.merge(naive, on="max_seqlen", suffixes=("", "_naive"))
    both["speed-up (ratio of medians)"] = both["median_ms_naive"] / both["median_ms"]
    # interquartile ranges overlap: then the two runs do not tell the variants apart
    both["IQRs overlap"] = ~((both["q75_ms"] < both["q25_ms_naive"]) | (both["q75_ms_naive"] < both["q25_ms"]))
    both = both.rename(columns={"max_seqlen": "N", "median_ms_naive": "naive, ms", "median_ms": "KV cache, ms"})
    say(table(both, ["N", "naive, ms", "KV cache, ms", "speed-up (ratio of medians)", "IQRs overlap"], digits=2))

# %%
fig, ax = plt.subplots(figsize=(6, 4))
plot_scaling(ax, {"kv_dynamic": ok} | ({"naive (notebook 01)": naive} if naive is not None else {}))
ax.set_title(f"KV cache vs naive, B={BATCH_SIZE}")
save_figure(fig, "02_kv_cache_scaling", RESULTS_DIR)
say(f"KV-cache slope: **{tokgen.stats.slope(ok['max_seqlen'], ok['median_ms']):.2f}** (1 would be linear in N).")

# %%
if naive is not None and len(both):
    ratio = both.set_index("N")["speed-up (ratio of medians)"]
    say(
        f"The speed-up over naive {tokgen.display.trend(ratio)} with N: from ×{ratio.iloc[0]:.2f} at N = "
        f"{ratio.index[0]} to ×{ratio.iloc[-1]:.2f} at N = {ratio.index[-1]}. Each ratio compares two processes run "
        "one after the other, not interleaved rounds: notebook 03 times this same variant in another process and "
        f"shows how far two such runs can lie apart, which matters most for the smallest, ×{ratio.min():.2f}."
    )

# %% [markdown]
# ## 4. Memory
#
# The dynamic cache concatenates one position per step onto every layer's keys and values, so
# it too asks the allocator for slightly larger blocks each step.

# %%
if DEVICE == "cuda":
    fig, ax = plt.subplots(figsize=(6, 4))
    plot_memory(ax, ok)
    ax.set_title("KV cache (dynamic): peak memory (last run)")
    save_figure(fig, "02_kv_cache_memory", RESULTS_DIR)
    say(tokgen.display.memory_table(ok))
else:
    say("*Skipped on the CPU: the caching allocator's statistics exist only on CUDA.*")

# %% [markdown]
# ## 5. The article's claim, measured here
#
# Claim 2 divides notebook 01's medians by this notebook's, N by N: the ratios of section 3.

# %%
show_claim(2, RESULTS_DIR)

# %% [markdown]
# ## Summary
#
# * With a KV cache each step processes one token, so the runtime's growth with N drops towards
#   linear (the slope above says how far); how the speed-up over naive moves with N, section 3
#   says for this run.
# * The dynamic cache still grows every step; the memory table shows what that did to reserved
#   memory.
# * What remains per step: launching the model's kernels from Python, and the `.item()` sync.
#
# ## Exercises
#
# 1. At which N would the naive generator break even with the KV cache on your GPU? Fit both
#    and solve.
# 2. Time one decode step at N = 10 and at N = 390. How much of a step depends on N at all?
# 3. How many bytes does the dynamic cache hold after 400 steps at B = 32? Compare with the
#    peak allocated memory above.
#
# Worked solutions: [`solutions/02_kv_cache.ipynb`](../solutions/02_kv_cache.ipynb).
