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
# # Solutions · 01 naive
#
# Worked solutions to the exercises of [notebook 01](../notebooks/01_naive.ipynb), from the
# reference results in `data/01_naive.csv` and a short timing of your own. Every number below
# is computed here, not typed.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of exercise 1: "gpt2" (GPT-2 small) or "tiny"
SEQ_LENS = [25, 50, 100]  # the sizes N of exercise 1's run at batch size 1
RUNS = 3  # interleaved rounds of that run (a slope is fitted to medians: no paired test is read)
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/01_naive.csv

# %%
import numpy as np

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
naive = tokgen.load("01_naive", DATA_DIR).sort_values("max_seqlen")
model = tokgen.build_model(SIZE)  # on the GPU if there is one
device = model.device

# %% [markdown]
# ## Exercise 1: the slope at B = 1
#
# Step i of the naive generator re-runs i positions. When that work is large (B = 32), the
# step's time grows with i and the whole run with N²: slope 2. At B = 1 on a GPU a step is a
# few small kernels whose time hardly depends on i: a fixed cost per step, and the run grows
# like N: slope 1. Measured here with a few sizes (on a CPU the tiny model shows the same
# pull towards 1).

# %%
variants = [tokgen.generator_variant("naive", model, batch_size=1, max_seqlen=n, by=["max_seqlen"]) for n in SEQ_LENS]
b1 = tokgen.compare(variants, rounds=RUNS, device=device, gpu_busy=False)
reference_slope = tokgen.stats.slope(naive["max_seqlen"], naive["median_ms"])
say(
    f"B = 1: slope {tokgen.stats.slope(b1['max_seqlen'], b1['median_ms']):.2f} over N = {SEQ_LENS}; the reference "
    f"run at B = {int(naive['batch_size'].iloc[0])}: slope {reference_slope:.2f}."
)

# %% [markdown]
# ## Exercise 2: `logits_to_keep=1`
#
# The naive generator asks the model for the logits of every position and keeps the last. The
# full logits tensor at step i is B × i × vocabulary floats; with `logits_to_keep=1` only
# B × vocabulary. What changes is the **peak allocated** memory (and with it what the
# allocator must reserve), not the work of the transformer layers.

# %%
cfg = tokgen.model.gpt2_config("gpt2")  # GPT-2 small's configuration: the reference run's model
for row in naive.to_dict("records"):
    full = row["batch_size"] * row["max_seqlen"] * cfg.vocab_size * 4 / 1e9
    say(
        f"N = {row['max_seqlen']}: the last step's full logits are {full:.2f} GB; the reference run's peak "
        f"allocated was {row['peak_allocated_gb']:.2f} GB. With `logits_to_keep=1`: "
        f"{row['batch_size'] * cfg.vocab_size * 4 / 1e9:.4f} GB."
    )

# %% [markdown]
# ## Exercise 3: a + b·N + c·N²
#
# Three sizes fix three coefficients exactly. a is a fixed cost per generation (setup, the
# first step's launches), b·N the per-step cost that does not depend on the sequence so far
# (weights read once per step, kernel launches), c·N² the work that grows with the prefix
# (attention and the layers over all positions re-run every step).

# %%
n, t = naive["max_seqlen"].to_numpy(float), naive["median_ms"].to_numpy(float)
c, b, a = np.polyfit(n, t, 2)
last = n.max()
say(
    f"a = {a:.0f} ms, b = {b:.2f} ms per step, c = {c * 1e3:.2f} µs per step². At N = {last:.0f} the "
    f"quadratic term is {c * last**2 / t[-1]:.0%} of the runtime, the linear one {b * last / t[-1]:.0%}."
    + (
        " A negative coefficient has no meaning as a cost: three medians fix the curve exactly, noise included, "
        "and the linear term is smaller than that noise. More sizes and a least-squares fit would pin it down."
        if min(a, b, c) < 0
        else ""
    )
)
