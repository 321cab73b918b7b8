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
# # Solutions · 14 transformers' deferred stop check
#
# Worked solutions to the exercises of [notebook 14](../notebooks/14_deferred_stop.ipynb).
# Exercise 1 measures on a GPU with transformers ≥ 5.17 (elsewhere the cell says what it needs
# and shows the reference run instead); exercise 2 reads notebook 14's reference results in
# `data/`, so it runs anywhere.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results
SIZE = "gpt2"  # the model of exercise 1: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 256  # exercise 1's batch (notebook 14: 32)
MAX_SEQLEN = 100  # new tokens per sequence
RUNS = 8  # timed rounds, interleaved (the signed-rank rule needs 6 or more)

# %%
import torch

import tokgen
from tokgen.display import deferred_gain_text, say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
gains = tokgen.claims.deferred_stop_gains(DATA_DIR)
gains["deferred vs sync"] = [deferred_gain_text(g) for g in gains.to_dict("records")]

# %% [markdown]
# ## Exercise 1: B = 256
#
# A larger batch makes each step's GPU work longer while the host's work per step stays the
# same: the GPU share rises. Deferring the check can only hide what the sync costs, so the model
# of notebook 13 (a gap g hidden from a step of length T: ×T / (T − g)) predicts a gain that
# shrinks as the GPU's work comes to dominate the step; at a lower share, what deferring wins is
# the host's wait at the check, which only a measurement tells. Whether either holds is for the
# rows below to say. Measured on the whole GPU (the four variants interleaved, as
# notebook 14 does), against notebook 14's reference run:

# %%
say(table(gains.sort_values("gpu_share_sync"), ["gpu_sms", "cache", "confined", "gpu_share_sync", "deferred vs sync"],
          digits=2) + "\n\n(notebook 14's reference run)")  # fmt: skip

# %%
version = tokgen.environment()["transformers"]
deferrable = tuple(int(x) for x in version.split(".")[:2]) >= (5, 17)  # DeferredStopCheck appeared in 5.17
if torch.cuda.is_available() and deferrable:
    model = tokgen.build_model(SIZE, "cuda")
    names = [f"generate() {cache} {check}" for cache in ("dynamic", "static") for check in ("sync", "deferred")]
    variants = [tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN) for g in names]
    results = tokgen.compare(variants, rounds=RUNS, device="cuda").set_index("variant")
    for cache in ("dynamic", "static"):
        ok = tokgen.claims.usable(results.reset_index())  # a failed variant's rows dropped: its gain is None
        g = tokgen.gain(ok, f"generate() {cache} sync", f"generate() {cache} deferred")
        share = results.at[f"generate() {cache} sync", "gpu_busy_share"]
        row = {**(g or {}), "cache": cache, "gpu_share_sync": share}  # g None: a variant failed, not measured
        say(tokgen.display.deferred_row_text(f"B = {BATCH_SIZE}", row))
else:
    say(f"*Measuring needs a CUDA GPU and transformers ≥ 5.17 (here: {version}, "
        f"{'a GPU' if torch.cuda.is_available() else 'no GPU'}). On one: `./run_all.sh --only 14 -p BATCH_SIZE "
        f"{BATCH_SIZE} --out build/b{BATCH_SIZE}`, or this cell.*")  # fmt: skip

# %% [markdown]
# ## Exercise 2: static against dynamic
#
# With `cache_implementation="static"`, `generate()` compiles the decode step and replays it
# from a CUDA graph: the host's work per step shrinks to a launch, so we expect the GPU's share
# of a step to be larger than with the dynamic cache, and the sync's gap a larger part of what is
# left. The dynamic cache runs eager transformers code: if the host's Python dominates, the GPU
# waits for it anyway and deferring the check can move little. In a slice the dynamic cache's
# eager kernels run on fewer SMs (a higher GPU share), while the static cache's CUDA graphs may
# replay outside the green context (`confined` False: notebook 14, section 4, says why), and
# then those rows measure the whole GPU's SMs, not the slice. The shares and the outcomes, row by
# row, in the reference run:

# %%
for r in gains.to_dict("records"):
    where = "whole GPU" if r["gpu_sms"] == "all" else f"{r['gpu_sms']}-SM slice"
    say(tokgen.display.deferred_row_text(where + (" (not confined)" if r["confined"] is False else ""), r))

# %% [markdown]
# Does the static cache show a different gain? Per place, from the two paired comparisons'
# outcomes (a real difference within ±5% counts as none): the same outcome, outcomes that
# differ, or undecided where either is undecided. How large each gain is, beside the other, no
# test here compares: the same outcome is not a tie of the two gains.

# %%
for line in tokgen.display.static_vs_dynamic_text(gains):
    say(line)
