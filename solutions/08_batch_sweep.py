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
# # Solutions · 08 batch sweep
#
# Worked solutions to the exercises of [notebook 08](../notebooks/08_batch_sweep.ipynb), from
# the reference results in `data/08_batch_sweep.csv` and, for exercises 1 and 2, a small sweep
# of your own. Every number below is computed here, not typed.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of the sweeps: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZES = [1, 64, 256, 512]  # the sweep of exercises 1 and 2
MAX_SEQLEN = 20  # new tokens per generation in the sweeps
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/08_batch_sweep.csv

# %%
import numpy as np
import pandas as pd

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
sweep = tokgen.load("08_batch_sweep", DATA_DIR)
sweep = sweep[sweep["status"] == "ok"]

# %% [markdown]
# ## Exercise 3 first: the per-step cost that does not depend on B
#
# Fit the synchronous generator's time per step as a + b·B over the reference sweep: a is what
# a step costs whatever the batch (the host's Python and kernel launches, the weights read once),
# b what each extra sequence adds. When b·B stays small next to a, the host sets the pace.

# %%
rows = []
for compiled, family in sweep[sweep["generator"] == "kv_static"].groupby("compiled"):
    b, a = np.polyfit(family["batch_size"], family["ms_per_step"], 1)
    biggest = int(family["batch_size"].max())
    rows.append({"model": "compiled" if compiled else "eager", "a (ms per step)": a, "b (ms per sequence)": b,
                 f"b·B at B={biggest}, as a share of a": b * biggest / a})  # fmt: skip
say(table(pd.DataFrame(rows), digits=4))

# %% [markdown]
# ## Exercises 1 and 2: larger batches, and the dynamic cache
#
# Past some batch size the GPU's work per step outgrows the host's, and the time per step
# starts to grow with B. We time both caches at `BATCH_SIZES` (interleaved, a few rounds).
# On a CPU with the tiny model the numbers only exercise the code.

# %%
variants = [
    tokgen.generator_variant(g, model, batch_size=b, max_seqlen=MAX_SEQLEN, by=["batch_size"])
    for b in BATCH_SIZES
    for g in ("kv_static", "kv_dynamic")
]
own = tokgen.compare(variants, rounds=3, device=model.device, gpu_busy=False)
own = own[own["status"] == "ok"]
per_step = own.pivot(index="batch_size", columns="generator", values="ms_per_step")
say(table(per_step.reset_index(), digits=2))
growth, ratio = per_step.iloc[-1] / per_step.iloc[0], per_step.index[-1] / per_step.index[0]
say(
    f"From B = {per_step.index[0]} to B = {per_step.index[-1]} the time per step grows ×{growth['kv_static']:.1f} "
    f"(static cache) and ×{growth['kv_dynamic']:.1f} (dynamic cache), for ×{ratio:.0f} the sequences: "
    "a growth well below the batch's ratio means the step is still mostly fixed cost."
)
