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
# # 04 · StaticCache: allocate the whole cache up front
#
# `StaticCache` allocates keys and values for `max_seqlen` positions once and writes each new
# position in place (`index_copy_` at `cache_position`). The allocator sees no growing tensors;
# the price is that attention at every step runs over all `max_seqlen` slots, the empty ones
# masked out.
#
# **You will learn:** what a pre-allocated cache changes (shapes, addresses, fragmentation),
# and how transformers versions differ in passing its position.
#
# **What this step adds:** fixed shapes and fixed addresses, which is also what
# `torch.compile` (notebook 05) and CUDA graphs (notebook 10) want.
#
# **What we measure:** dynamic and static cache on the same grid as notebooks 01–03
# (`BATCH_SIZE`, `SEQ_LENS`: the line above the table lists the sizes this run used),
# interleaved in one process, runtime and fragmentation. Each N's comparison runs sequentially
# (notebook 00, section 4): `RUNS` rounds, then more, up to `MAX_RUNS`, while it is undecided.
#
# **The article's claim:** lower fragmentation; at N = 100 the static cache is slower than the
# dynamic one, at N = 200 and 400 it is 9% and 10% faster (the article's figures, on its L40S).
# A run tests the claim at the sizes it ran: one without N = 400 says nothing about the
# article's N = 400.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 32  # sequences per batch (the article: 32)
SEQ_LENS = [100, 200, 400]  # max_seqlen values (the article: 100, 200, 400)
RUNS = 10  # timed rounds at the first look, interleaved, after one warm-up (the article: 10)
MAX_RUNS = 80  # the cap: a comparison still undecided runs on to at most this many rounds (claim 4)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import pandas as pd

import tokgen
from tokgen.display import save_figure, say, show_claim, show_source

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. The generator
#
# The same `generate_kv` as notebook 02, with `cache="static"`. Between transformers versions
# the StaticCache API moved: 5.1 (the article's) indexes the cache with the `cache_position`
# we pass; from 5.4 on, GPT-2's forward no longer takes it and the cache counts its own
# position in a device tensor. `cache_kwargs` passes it only where the forward takes it.

# %%
show_source("kv_static")

# %%
show_source(tokgen.generators.cache_kwargs)

# %%
say(
    f"transformers {tokgen.environment()['transformers']}: the forward "
    f"{'takes' if tokgen.model.takes_cache_position(model) else 'does not take'} `cache_position`."
)

# %% [markdown]
# ## 2. Measure: dynamic and static, interleaved

# %%
rec = tokgen.Recorder("04_static_cache", RESULTS_DIR, params=PARAMS)
variants = [
    tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=n, by=["max_seqlen"])
    for n in SEQ_LENS
    for g in ("kv_dynamic", "kv_static")
]
pairs = [(variants[i].name, variants[i + 1].name) for i in range(0, len(variants), 2)]  # dynamic, static: per N
results = tokgen.compare(variants, rounds=RUNS, max_rounds=MAX_RUNS, pairs=pairs, device=DEVICE, record=rec.write)
results = tokgen.stats.shared_rounds(results)  # medians, figures and fits over the rounds all variants ran
ok = results[results["status"] == "ok"]
say(f"{tokgen.display.where_measured(DEVICE)} B = {BATCH_SIZE}; N = {', '.join(map(str, SEQ_LENS))}.")
say(tokgen.display.runs_table(results))
if DEVICE == "cuda":
    say(tokgen.display.memory_table(ok))
say(tokgen.display.design_text(tokgen.stats.looks_up_to(MAX_RUNS, RUNS)))

# %% [markdown]
# ## 3. Static vs dynamic, round by round
#
# The speed-up of the static cache over the dynamic one, per N (above ×1 the static cache is
# faster), with the outcome of the signed-rank test over the rounds (notebook 00, section 4).

# %%
rows = []
for n in SEQ_LENS:
    g = tokgen.gains(ok[ok["max_seqlen"] == n], tokgen.label("kv_dynamic", max_seqlen=n))
    rows.append(g[g["variant"] == tokgen.label("kv_static", max_seqlen=n)].assign(max_seqlen=n))
gain = pd.concat(rows)
say(tokgen.display.speedup_table(gain, {"N": "max_seqlen", "variant": "variant", "against": "vs"}))

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
tokgen.display.plot_runtime_vs_n(axes[0], ok)
if DEVICE == "cuda":
    ok.pivot(index="max_seqlen", columns="generator", values="frag_gb").plot.bar(ax=axes[1], rot=0)
    axes[1].set_xlabel("max_seqlen N")
    axes[1].set_ylabel("fragmentation, GB\n(peak reserved − peak allocated)")
fig.suptitle(f"Dynamic vs static KV cache, B={BATCH_SIZE}")
save_figure(fig, "04_static_cache", RESULTS_DIR)

# %% [markdown]
# Why can the static cache lose? Per step it attends over all `max_seqlen` slots instead of
# the i filled ones, and builds a full-length mask; in eager mode it also launches a few more
# kernels per layer (`index_copy_`, the mask). What it saves is the growing allocations and the
# `torch.cat` of the cache every step. Which side wins depends on the GPU and on how host-bound
# the loop is; how the balance moves with N, this run says:

# %%
say(tokgen.display.outcomes_by_n_text(gain))

# %% [markdown]
# ## 4. The article's claim, measured here
#
# Claim 4 has two halves: lower fragmentation at every N, and a runtime that is slower than the
# dynamic cache's at the smallest N and faster at the others. Its verdict below judges both; the
# takeaways after it set out, per N, what it read.

# %%
show_claim(4, RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run
#
# Per N, what each half of the claim reads; the verdict above, not these lines, judges it.

# %%
if DEVICE == "cuda":
    say(tokgen.display.fragmentation_lower_text(ok.pivot(index="max_seqlen", columns="generator", values="frag_gb")))

# %%
for n in SEQ_LENS:  # the article's runtime half per N; claim 4's verdict above judges it
    g = tokgen.gain(ok, tokgen.label("kv_dynamic", max_seqlen=n), tokgen.label("kv_static", max_seqlen=n))
    say(tokgen.display.runtime_at_n_text(n, g, smallest=n == min(SEQ_LENS)))

# %% [markdown]
# ## Summary
#
# * A static cache fixes shapes and addresses: the allocator is no longer asked for ever larger
#   blocks.
# * Its runtime effect can go either way, depending on what sets a step's pace: on the GPU,
#   attention over empty slots against the copies of a growing cache; on the host, the kernels
#   each generator launches per step. We report it per N with its spread; solution 04 counts the
#   launches.
# * Fixed shapes are the entry ticket for `torch.compile` and CUDA graphs: next notebook.
#
# What this run found, computed from its tables:

# %%
say(tokgen.display.findings_text(gain))

# %% [markdown]
# ## Exercises
#
# 1. Make the static cache twice as long as needed (`max_cache_len = 2 N`). Does a step get
#    slower, and why (or why not)?
# 2. Count the kernels per step of each generator with `torch.profiler` (notebook 06 shows how).
# 3. Run this notebook on transformers ≥ 5.4. Which lines of `cache_kwargs` matter there?
#
# Worked solutions: [`solutions/04_static_cache.ipynb`](../solutions/04_static_cache.ipynb).
