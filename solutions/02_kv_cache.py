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
# reference results in `data/` (the CSVs of notebooks 01 and 02) and, for exercise 2, a short
# measurement of your own. Every number below is computed here, not typed.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of exercises 2 and 3: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch in exercise 2 (notebook 02: 32)
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/01_naive.csv and 02_kv_cache.csv

# %%
import numpy as np
import torch

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
naive = tokgen.load("01_naive", DATA_DIR).sort_values("max_seqlen")
kv = tokgen.load("02_kv_cache", DATA_DIR).sort_values("max_seqlen")
model = tokgen.build_model(SIZE)  # on the GPU if there is one

# %% [markdown]
# ## Exercise 1: where would naive break even with the KV cache?
#
# Fit each runtime as a power of N on log-log axes (the slope of notebook 01) and solve
# a·N^k = b·N^m. With only three sizes per generator the fits are rough; the answer is a
# size, not a law.

# %%
fit = lambda df: np.polyfit(np.log(df["max_seqlen"]), np.log(df["median_ms"]), 1)  # (slope, log prefactor)
(k_naive, c_naive), (k_kv, c_kv) = fit(naive), fit(kv)
n_even = float(np.exp((c_kv - c_naive) / (k_naive - k_kv))) if k_naive != k_kv else float("nan")
below = "naive" if c_naive + k_naive * np.log(n_even / 2) < c_kv + k_kv * np.log(n_even / 2) else "the KV cache"
smallest = int(naive["max_seqlen"].min())
say(
    f"naive ∝ N^{k_naive:.2f}, KV cache ∝ N^{k_kv:.2f} (B = {int(naive['batch_size'].iloc[0])}). The fitted "
    f"curves cross at N ≈ {n_even:.0f}, below which {below} would be faster; the smallest N measured is "
    f"{smallest}, so this is an extrapolation."
)

# %% [markdown]
# ## Exercise 2: how much of a step depends on N?
#
# Time one decode step of the KV-cache generator with 10 and with 390 cached positions: the
# difference is the attention over the cache; the rest (the weights, the launches) does not
# depend on N.


# %%
def step_ms(position: int, batch_size: int = BATCH_SIZE, repeats: int = 5) -> float:
    tokens = torch.zeros(batch_size, 1, dtype=torch.long, device=model.device)
    cache = tokgen.generators.make_cache(model, "dynamic", position + 1)
    with torch.inference_mode():
        model(torch.zeros(batch_size, position, dtype=torch.long, device=model.device), past_key_values=cache)
        variant = tokgen.Variant("step", lambda: model(tokens, past_key_values=cache).logits)
        times = [tokgen.bench.time_run(variant.run, model.device)[0] for _ in range(repeats)]
        cache.crop(position)  # each timed step appended one position: undo it
    return float(np.median(times))


early, late = step_ms(10), step_ms(390)
say(
    f"One step at B = {BATCH_SIZE} on {model.device.type}: {early:.2f} ms at N = 10, {late:.2f} ms at N = 390 "
    f"({late - early:+.2f} ms, {(late - early) / late:.0%} of the later step)."
)

# %% [markdown]
# ## Exercise 3: the dynamic cache's bytes after 400 steps at B = 32
#
# Keys and values, every layer: 2 × layers × B × N × hidden × 4 bytes (fp32).
# `tokgen.bandwidth.kv_bytes` computes it; the peak allocated memory of the N = 400 run holds
# it together with the weights, the logits and the cache's growing copies.

# %%
gpt2 = tokgen.build_model("gpt2", "cpu")
cache_gb = tokgen.bandwidth.kv_bytes(gpt2, 32, 400) / 1e9
weights_gb = tokgen.parameter_bytes(gpt2) / 1e9
row = kv[kv["max_seqlen"] == 400].iloc[0]
say(
    f"The cache holds {cache_gb:.3f} GB after 400 steps at B = 32; the weights {weights_gb:.3f} GB. The reference "
    f"run's peak allocated memory at N = 400 was {row['peak_allocated_gb']:.3f} GB and its peak reserved "
    f"{row['peak_reserved_gb']:.3f} GB: the final cache is {cache_gb / row['peak_reserved_gb']:.0%} of what the "
    "allocator reserved (the rest: the copies a growing cache leaves behind, and the logits)."
)
