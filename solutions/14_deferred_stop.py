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

# %%

# %% [markdown]
# # Solutions · 14 transformers' deferred stop check
#
# Worked solutions to the exercises of [notebook 14](../notebooks/14_deferred_stop.ipynb).
# They read its reference results in `data/`, so they run anywhere; exercise 1's measurement
# needs a GPU and transformers ≥ 5.17.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results

# %%
import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
gains = tokgen.claims.deferred_stop_gains(DATA_DIR)

# %% [markdown]
# ## Exercise 1: B = 256
#
# A larger batch makes each step's GPU work longer while the host's work per step stays the
# same: the GPU share rises. Deferring the check can only hide the sync's gap, so its gain
# follows the shape of notebook 13's map: small while the host sets the pace, largest where
# the GPU's work and the gap are of one size, falling again as the GPU's work dominates.
# On a GPU: `./run_all.sh --only 14 -p BATCH_SIZE 256 --out /tmp/b256`. The reference run, by
# GPU share:

# %%
say(table(gains.sort_values("gpu_share_sync"), digits=2))

# %% [markdown]
# ## Exercise 2: static against dynamic
#
# With `cache_implementation="static"`, `generate()` compiles the decode step and replays it
# from a CUDA graph: the host's work per step shrinks to a launch, so on the whole GPU the
# GPU's share of a step is larger and the sync's gap a larger part of what is left. The dynamic
# cache runs eager transformers code: the host's Python dominates, the GPU waits for it anyway,
# and deferring the check moves little. On the slice the picture changes: the dynamic cache's
# eager kernels run on a few SMs (a high GPU share), while the static cache's CUDA graphs replay
# outside the green context (`confined` is False: notebook 13 shows why), so those rows measure
# the whole GPU's SMs, not the slice. The shares, row by row:

# %%
for r in gains.itertuples():
    where = "whole GPU" if r.gpu_sms == "all" else f"{r.gpu_sms}-SM slice" + ("" if r.confined else " (not confined)")
    say(f"* {where}, {r.cache}: GPU share of a sync step {r.gpu_share_sync:.2f}, deferred {r.gain_pct:+.1f}%.")
