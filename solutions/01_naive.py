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
#
# Live, in no CSV: exercise 1's B = 1 rounds and the slope fitted to them are measured when this
# page runs and recorded nowhere; the reference run's slope comes from `data/01_naive.csv`.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of exercise 1: "gpt2" (GPT-2 small) or "tiny"
SEQ_LENS = [100, 200, 400]  # the sizes N of exercise 1's run at batch size 1: the reference run's, so only B differs
RUNS = 10  # interleaved rounds of that run: notebook 01's MIN_ROUNDS, the fewest a verdict or slope is read from
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/01_naive.csv

# %%
import numpy as np

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
naive = tokgen.load("01_naive", DATA_DIR).sort_values("max_seqlen")
say(f"Notebook 01's rows: its run of {tokgen.results.run_of(naive)}.")
model = tokgen.build_model(SIZE)  # on the GPU if there is one
device = model.device

# %% [markdown]
# ## Exercise 1: the slope at B = 1
#
# Step i of the naive generator re-runs i positions. Model a step as a fixed cost (launches,
# reading the weights) plus work proportional to i: the whole run then grows like N where the
# fixed cost dominates (slope 1) and like N² where the positions' work does (slope 2), with
# slopes in between while both count; attention over i × i positions adds a part that grows
# faster still, so a slope above 2 does not break the model. At B = 1 on a GPU a step is many small kernels, the
# fixed cost's side; with B sequences a step re-runs B·i positions. The slopes below are
# measured, here at B = 1 and in the reference run, each the paired slope of notebook 01 (each
# round's slope across the N, the median over rounds); the sentence reads where each lies from
# its bootstrap range, not from the slope alone: a side only where the whole range lies on it (a
# slope from fewer rounds than notebook 01 reads a verdict on is shown, not read).

# %%
variants = [tokgen.generator_variant("naive", model, batch_size=1, max_seqlen=n, by=["max_seqlen"]) for n in SEQ_LENS]
b1 = tokgen.compare(variants, rounds=RUNS, device=device, gpu_busy=False)
say(tokgen.display.batch_slopes_text(b1, naive))  # a reading from its range only from notebook 01's 10 rounds on

# %% [markdown]
# ## Exercise 2: `logits_to_keep=1`
#
# The naive generator asks the model for the logits of every position and keeps the last. The
# full logits tensor at step i is B × i × vocabulary floats; with `logits_to_keep=1` only
# B × vocabulary, the same size at every step. Two parts of the memory picture can change:
#
# * **Peak allocated** falls by the full logits held at the last step, less the B × vocabulary
#   kept: the generator still holds the step before's logits while the model computes the next
#   (`tokgen.sizes.generation_bytes` counts 2N − 1 positions' logits at the last step). The rest of
#   what is in use (the weights, the activations) stays.
# * **Peak reserved** is where the larger change can lie. Each step's full logits are larger than
#   the step before's, so a block freed by one step is too small for the next, and the caching
#   allocator reserves a new one and keeps the old: if that is what happened, what it reserved
#   grows by about each step's full logits, up to their sum over the steps, or to the device's
#   memory where that sum is larger. The cell below sets that sum beside the reference run's peak
#   reserved. With `logits_to_keep=1` every step's logits fit the block the step before freed, so
#   most of that growth, the fragmentation of notebook 01, is the part expected to go (the other
#   activations still grow with the sequence); this solution does not re-run the generator, so
#   that is expected, not measured.
#
# The work of the transformer layers does not change.

# %%
cfg = tokgen.model.gpt2_config("gpt2")  # GPT-2 small's configuration: the reference run's model
for row in naive.to_dict("records"):  # step i (1..N) re-runs i positions: B·i·vocab floats each
    say(tokgen.display.logits_sum_text(row, cfg.vocab_size))

# %% [markdown]
# ## Exercise 3: a + b·N + c·N²
#
# Three sizes fix three coefficients exactly. Read as a model, a would be a cost per generation
# (setup, the first step's launches), b·N the per-step cost that does not depend on the sequence
# so far (weights read once per step, kernel launches), c·N² the work that grows with the prefix
# (attention and the layers over all positions re-run every step). But the coefficients are
# properties of a curve through three points, not measured costs: a is that curve's value at
# N = 0, far below the smallest N measured, and the cell after the fit shows how far b moves when
# the rounds are drawn again (a paired bootstrap: one draw of rounds for every N, as they ran together).

# %%
n, t = naive["max_seqlen"].to_numpy(float), naive["median_ms"].to_numpy(float)
say(tokgen.display.quadratic_fit_text(n, t))

# %%
rng = np.random.default_rng(0)  # each draw: the same rounds for every N (tokgen.stats.resample_rounds), b refitted
bs = [np.polyfit(n, tokgen.stats.resample_rounds(naive, rng)["median_ms"].to_numpy(float), 2)[1] for _ in range(1000)]
say(tokgen.display.coefficient_range_text(bs, np.polyfit(n, t, 2)[1], n.max()))
