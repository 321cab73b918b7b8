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
# the reference results in `data/08_batch_sweep.csv` and sweeps of your own at the notebook's N.
# Every number below is computed here, not typed. With the tiny model on a CPU the sweeps only
# exercise the code, and mixing them with the reference run's GPT-2 rows means nothing.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of the sweeps: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZES = [512, 1024]  # exercise 1: batch sizes beyond the reference sweep's largest
MAX_SEQLEN = 100  # new tokens per generation (notebook 08: 100)
RUNS = 8  # interleaved rounds per comparison (the signed-rank rule needs 6 or more)
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/08_batch_sweep.csv

# %%
import numpy as np
import pandas as pd

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
model = tokgen.build_model(SIZE)  # on the GPU if there is one
sweep = tokgen.load("08_batch_sweep", DATA_DIR)
sweep = tokgen.stats.shared_rounds(sweep[sweep["status"] == "ok"])  # each B's pair over its shared rounds
reference = sweep[(sweep["generator"] == "kv_static") & ~sweep["compiled"]].set_index("batch_size")["ms_per_step"]

# %% [markdown]
# ## Exercise 3 first: a straight line through the sweep
#
# Fit the synchronous generator's time per step as a + b·B over the reference sweep. Read as a
# model, a would be what a step costs whatever the batch (the host's Python and kernel launches,
# the weights read once) and b what each extra sequence adds. But a and b are properties of a
# straight line through a few batch sizes, not measured costs: a is where that line meets B = 0,
# and where the step time does not grow steadily with B, the line can put a away from the step
# measured at the smallest B (compare a with the reference row of the smallest B in exercise 1's
# table below). When b·B stays
# small next to a, the step's length barely depends on B over the sizes measured; whether the
# host or the GPU's own work sets that length is what the GPU share in notebook 08's bound table
# says.

# %%
rows = []
for compiled, family in sweep[sweep["generator"] == "kv_static"].groupby("compiled"):
    b, a = np.polyfit(family["batch_size"], family["ms_per_step"], 1)
    biggest = int(family["batch_size"].max())
    smallest = int(family["batch_size"].min())
    rows.append({"model": "compiled" if compiled else "eager", "a: the fit at B = 0, ms per step": a,
                 "b: the fit's slope, ms per sequence": b, f"b·B at B={biggest}, as a share of a": b * biggest / a,
                 f"measured at B = {smallest}, ms per step": family.set_index("batch_size")["ms_per_step"][smallest]})
say(table(pd.DataFrame(rows), digits=4))
say("a and b describe a straight line through the measured points, not measured costs: where the line misses "
    "the measured steps (the last column), the step's length does not follow B linearly over this range.")

# %% [markdown]
# ## Exercise 1: where does the step time start to grow linearly?
#
# Linear growth means that doubling B doubles the time per step: a slope of 1 on log-log axes.
# We time the eager synchronous generator at `BATCH_SIZES`, beyond the reference sweep, and at
# the reference's largest batch size again, all in one interleaved comparison, and read the slope
# between each batch size and the one before it paired round by round: the median over rounds of
# each round's log-ratio of times over the log-ratio of batch sizes, with its IQR. The reference
# sweep timed each batch size in its own comparison, so its slopes (taken below this run's
# smallest B) cannot be paired: each is a ratio of two medians, and the sentence says which.
# We call the knee the first interval where the slope reaches one half: from there the step's
# length follows B, which suggests that the GPU's work has begun to set it (the GPU share, as in
# notebook 08's bound table, is the direct reading).

# %%
sizes = sorted({int(reference.index.max()), *BATCH_SIZES})  # the reference's largest B links the two runs
variants = [
    tokgen.generator_variant("kv_static", model, batch_size=b, max_seqlen=MAX_SEQLEN, by=["batch_size"]) for b in sizes
]
own = tokgen.compare(variants, rounds=RUNS, device=model.device, gpu_busy=False)
own = own[own["status"] == "ok"]
ref_rows = sweep[(sweep["generator"] == "kv_static") & ~sweep["compiled"]]
paired = tokgen.stats.step_slopes(own)  # one comparison: every slope paired round by round
unpaired = tokgen.stats.step_slopes(ref_rows)  # separate comparisons: ratios of medians, not paired
below = unpaired["batch_size"] <= paired["from"].min() if len(paired) else unpaired["batch_size"] > 0
slopes = pd.concat([unpaired[below], paired])  # the reference's intervals only below this run's: none overlap

steps = pd.concat([reference.rename("reference"), own.set_index("batch_size")["ms_per_step"].rename("this run")],
                  axis=1).sort_index()  # fmt: skip
steps["ms per step"] = steps["this run"].fillna(steps["reference"])
steps = steps.join(slopes.set_index("batch_size")[["slope", "slope_q25", "slope_q75", "paired"]])
say(table(steps.rename_axis("B").reset_index(), digits=2))

# %%
say(tokgen.voice.knee_text(slopes, MAX_SEQLEN))

# %% [markdown]
# ## Exercise 2: the sweep with the dynamic cache
#
# The same comparison as notebook 08, pipelined against synchronous, with the dynamic cache
# instead of the static one, at the reference sweep's eager batch sizes, beside the reference
# run's static-cache speed-ups. That run is another session: an outcome that differs only where
# one side is undecided, or by a few percent, may be the sessions' noise rather than the cache;
# a decided outcome that flips (faster in one, slower in the other) points to the cache, though
# the two sessions differ as well.

# %%
dynamic = []
for b in sorted(reference.index):
    pair = [
        tokgen.generator_variant(g, model, batch_size=b, max_seqlen=MAX_SEQLEN, by=["batch_size"])
        for g in ("kv_dynamic", "pipelined_dynamic")
    ]
    res = tokgen.compare(pair, rounds=RUNS, device=model.device, gpu_busy=False)
    dynamic.append({"batch_size": b, **tokgen.gain(res, pair[0].name, pair[1].name)})
static = tokgen.claims.sweep_gains(DATA_DIR)
both = pd.concat([static[~static["compiled"]].assign(cache="static (reference run)"),
                  pd.DataFrame(dynamic).assign(cache="dynamic (this run)")])  # fmt: skip
say(tokgen.display.speedup_table(both.sort_values(["batch_size", "cache"]), {"B": "batch_size", "cache": "cache"}))
say(tokgen.display.rounds_sentence(RUNS))
