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
# # Solutions · 02 KV cache
#
# Worked solutions to the exercises of [notebook 02](../notebooks/02_kv_cache.ipynb), from the
# reference results in `data/` (notebook 02's CSV; notebook 01's only for a run of 02 that timed no
# naive rounds) and, for exercise 2, a short
# measurement of your own. Every number below is computed here, not typed.
# Live, in no CSV: exercise 2's step times, speed-up and GPU busy times are measured when this page
# runs and recorded nowhere, so data/ cannot reproduce them; exercises 1 and 3 read the CSVs.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of exercises 2 and 3: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch in exercise 2 (notebook 02: 32)
RUNS = 10  # interleaved rounds of exercise 2's two steps (the signed-rank rule needs 6 or more)
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/02_kv_cache.csv

# %%
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured

# %%
both = tokgen.rows_at("02_kv_cache", DATA_DIR, "solution 02").sort_values("max_seqlen")  # naive and the cache
both = tokgen.stats.shared_rounds(both)  # medians over the rounds every variant ran (a sequential run)
naive, kv = (both[both["generator"] == g] for g in ("naive", "kv_dynamic"))
runs = f"Notebook 02's rows: its run of {tokgen.results.run_of(both)}"
if naive.empty:  # a notebook-02 run from before it timed naive beside the cache: notebook 01's naive at its B
    batch = int(kv["batch_size"].iloc[0])
    naive = tokgen.rows_at("01_naive", DATA_DIR, "solution 02", BATCH_SIZE=batch).sort_values("max_seqlen")
    runs += f"; its naive rows are notebook 01's, from its run of {tokgen.results.run_of(naive)}"
say(runs + ".")
model = tokgen.build_model(SIZE)  # on the GPU if there is one

# %% [markdown]
# ## Exercise 1: where would naive break even with the KV cache?
#
# Fit each runtime as a power of N on log-log axes, through each N's median (a fit through
# medians, not notebook 01's paired slope: here it only locates a crossing) and solve
# a·N^k = b·N^m. With only three sizes per generator the fits are rough, and where the two fitted
# curves cross is a property of the fits, not a measured break-even: outside the sizes measured
# it is an extrapolation, which only a run at that size can confirm (notebook 02's runs in the
# slices of notebook 13 included a smaller N, in another regime).

# %%
say(tokgen.display.fit_crossing_text(naive, kv))

# %% [markdown]
# ## Exercise 2: how much of a step depends on N?
#
# Time one decode step of the KV-cache generator with 10 and with 390 cached positions,
# interleaved round by round, and profile one of each for the GPU's busy time. What is measured:
# the wall time of each step and the GPU's busy time of each (its sum over kernels, one profiled
# call). Each timed call is the step's forward pass and the `cache.crop` that undoes its append,
# synchronized before and after; unlike the notebooks' whole generations, the allocator's cache is
# not emptied before each call (`compare(..., reset_memory=False)`): the step reuses the blocks the
# calls before it reserved, so the harness's `gc.collect()` is skipped and no refill of the
# allocator's cache is timed with the step (Python's automatic collector may still run inside a
# timed call: `compare` freezes the warm-up's objects but does not disable it). The
# difference between the two N's times is the part of the step that depends on N; which kernels make it is not
# measured here (a kernel-by-kernel profile would split it, as notebook 10 does). The expected
# ones: the attention over the cache, and the copy `torch.cat` makes of the whole DynamicCache
# each step; the rest of the step (reading the weights, the host's launches) is expected not to
# depend on N. The wall time holds both; where the host sets the pace, the host's launches can
# hide the GPU's part of it.


# %%
def one_step(position: int) -> tokgen.Variant:
    """One decode step at B = BATCH_SIZE over `position` cached positions; each call undoes its append."""
    tokens = torch.zeros(BATCH_SIZE, 1, dtype=torch.long, device=model.device)
    cache = tokgen.generators.make_cache(model, "dynamic", position + 1)
    with torch.inference_mode():
        model(torch.zeros(BATCH_SIZE, position, dtype=torch.long, device=model.device), past_key_values=cache)

    def run() -> torch.Tensor:
        with torch.inference_mode():
            logits = model(tokens, past_key_values=cache).logits  # (B, 1, vocab)
        cache.crop(position)  # the step appended one position: the next call starts where this one did
        return logits

    return tokgen.Variant(f"one step at N = {position}", run)


# %%
steps = tokgen.compare([one_step(10), one_step(390)], rounds=RUNS, device=model.device,
                       reset_memory=False)  # one step: no allocator refill timed with it (review rv22A S2)
g = tokgen.gain(steps, "one step at N = 10", "one step at N = 390")
say(table(steps, [c for c in ("variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_ms") if c in steps], digits=3))
say(f"Wall time, N = 390 against N = 10: {tokgen.display.speedup_text(g)}.")

# %%
if "gpu_busy_ms" in steps and steps["gpu_busy_ms"].notna().all():
    busy = steps.set_index("variant")["gpu_busy_ms"]
    say(tokgen.display.step_growth_text(busy["one step at N = 10"], busy["one step at N = 390"]))
else:
    say("*The GPU's busy time needs a GPU (CUPTI): on a CPU the wall times above are the whole answer.*")

# %% [markdown]
# ## Exercise 3: the dynamic cache's bytes after N steps at B = 32
#
# Keys and values, every layer: 2 × layers × B × N × hidden × 4 bytes (fp32).
# `tokgen.bandwidth.kv_bytes` computes it, for the largest N the reference run measured and,
# where that is not the article's 400 at B = 32, for the article's too; the peak allocated memory
# of the largest N's run holds it together with the weights and whatever else the run allocated
# (what that is, this page does not measure).

# %%
gpt2 = tokgen.build_model("gpt2", "cpu")
row = kv.sort_values("max_seqlen").iloc[-1]  # the largest N this run measured
n, batch = int(row["max_seqlen"]), int(row["batch_size"])
cache_gb = tokgen.bandwidth.kv_bytes(gpt2, batch, n) / 1e9
article_gb = tokgen.bandwidth.kv_bytes(gpt2, 32, 400) / 1e9 if (n, batch) != (400, 32) else None
say(tokgen.display.cache_share_text(row, cache_gb, tokgen.parameter_bytes(gpt2) / 1e9, article_gb))
