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
# # Solutions · 13 regimes
#
# Worked solutions to the exercises of [notebook 13](../notebooks/13_regimes.ipynb). They
# read the reference results in `data/`, so they run anywhere; the commands that extend the
# measurements on a GPU are given beside them.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results

# %%
import pandas as pd

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
regimes = tokgen.load("13_regimes", DATA_DIR)
slices = tokgen.load("13_slices", DATA_DIR)
l40s_tf32_tflops = 183.0  # the L40S's dense TF32 rate (366 with sparsity), NVIDIA's datasheet; not measured
h100_tf32_tflops = 495.0  # the H100 SXM's dense TF32 rate (989 with sparsity), NVIDIA's datasheet; not measured
h100_sms = 132  # the H100 SXM's SMs

# %% [markdown]
# ## Exercise 1: B = 1024, and a GPU share near 1
#
# Hiding the sync removes a gap of fixed length g from a step of length T: the gain is about
# g / T. As the GPU's share of a step approaches 1, T is the GPU's own work, which grows with B
# while g does not: the gain falls towards 0 again. Between the host-bound regime (nothing to
# hide: the GPU waits for Python anyway) and the saturated one (the gap is negligible) lies the
# band where it pays. The reference map, per point (pipelined vs sync):
#
# On a GPU: `./run_all.sh --only 13 -p MAP_SMS "[8]" -p BATCH_SIZES "[256, 1024]" --out /tmp/b1024`.

# %%
ok = regimes[regimes["status"] == "ok"]
rows = []
for (sms, b, compiled), point in ok.groupby(["gpu_sms", "batch_size", "compiled"]):
    sync = tokgen.label("kv_static", compiled=compiled)
    g = tokgen.gain(point, sync, tokgen.label("pipelined_static", compiled=compiled))
    share = point.set_index("variant").at[sync, "gpu_busy_share"]
    rows.append(
        {
            "SMs": sms,
            "B": b,
            "compiled": compiled,
            "GPU share (sync)": share,
            "gain %": g["gain_pct"],
            "real": g["real"],
        }
    )
say(table(pd.DataFrame(rows).sort_values("GPU share (sync)"), digits=2))

# %% [markdown]
# ## Exercise 2: streams that escape the slice
#
# A `torch.cuda.Stream()` made by torch's stream pool belongs to the whole GPU's context, so
# kernels on it run on every SM. A "pipelined" generator whose side stream escapes the slice
# gets the whole GPU for half its steps: its gain is mostly extra SMs, not a hidden sync.
# Notebook 13 measured the copy bandwidth of both kinds of stream:

# %%
say(table(slices[["gpu_sms", "copy_gbs", "side_stream_gbs", "escaped_stream_gbs"]], digits=0))

# %% [markdown]
# ## Exercise 3: the slice that matches the L40S's compute
#
# Compute scales with SMs: each SM of an H100 SXM contributes its rate / 132 (TF32 is on:
# notebook 00). The slice with the L40S's TF32 rate has L40S rate ÷ (rate per SM) SMs, many
# more than the slice that matches its bandwidth: a slice cannot match both. Then, on a GPU:
# `./run_all.sh --slice N --only 07 --out /tmp/sliceN`.

# %%
per_sm = h100_tf32_tflops / h100_sms
chosen = int(slices.loc[slices["chosen"].astype(bool), "gpu_sms"].iloc[0])
say(
    f"{per_sm:.2f} TFLOP/s per SM (datasheet rates): the L40S's compute is about "
    f"**{l40s_tf32_tflops / per_sm:.0f} SMs**; its bandwidth, measured, {chosen} SMs."
)
