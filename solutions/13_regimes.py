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
# # Solutions · 13 regimes
#
# Worked solutions to the exercises of [notebook 13](../notebooks/13_regimes.ipynb). Exercises 1
# and 3 measure on a GPU, inside a slice (on a CPU, the tiny model tests the code on the whole
# device and measures nothing); exercise 2 reads the reference results in `data/` and re-times
# nothing.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results
SIZE = "gpt2"  # the model of exercises 1 and 3: "gpt2" (GPT-2 small) or "tiny" for CPU runs
BATCH_SIZES = [256, 1024]  # exercise 1's batch sizes, beyond notebook 13's map
MAX_SEQLEN = 50  # new tokens per sequence (notebook 13: 50)
RUNS = 8  # interleaved rounds per comparison (the signed-rank rule needs 6 or more)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" on a CPU)

# %%
import contextlib

import pandas as pd
import torch

import tokgen
from tokgen.display import say, speedup_text, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured

# %%
slices = tokgen.load("13_slices", DATA_DIR)
gbs = dict(zip(slices["gpu_sms"].astype(int), slices["copy_gbs"]))
try:
    small, large = tokgen.gpu_slice.bracketing(gbs)  # the two slices around the L40S, in the reference run
except ValueError:  # none brackets it (a GPU slower than the L40S): the smallest and largest slice measured
    small, large = min(gbs), max(gbs)
    say(tokgen.regimes.slices_note(DATA_DIR))
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"


# %%
def pipelining_gain(batch_size: int, sms: int | None) -> dict:
    """kv_static against pipelined_static, compiled for this batch size as in notebooks 08 and 13,
    interleaved, in a slice of `sms` SMs."""
    torch._dynamo.reset()  # a compilation specialized to this batch size (notebook 08 says why)
    compiled = torch.compile(model, backend=COMPILE_BACKEND)
    variants = [tokgen.generator_variant(g, compiled, batch_size=batch_size, max_seqlen=MAX_SEQLEN, compiled=True)
                for g in ("kv_static", "pipelined_static")]  # fmt: skip
    with tokgen.GpuSlice(sms) if sms and CUDA else contextlib.nullcontext():
        res = tokgen.compare(variants, rounds=RUNS, device=model.device, gpu_busy=CUDA)
    share = res.set_index("variant").at[variants[0].name, "gpu_busy_share"]
    g = tokgen.gain(res, variants[0].name, variants[1].name)
    where = sms if CUDA else "all (CPU)"
    return {"B": batch_size, "SMs": where, "GPU share (sync)": share, "pipelined": speedup_text(g), "g": g}


# %% [markdown]
# ## Exercise 1: larger batches, and a GPU share near 1
#
# Hiding the sync removes a gap of fixed length g from a step of length T: the speed-up is about
# T / (T − g). As the GPU's share of a step approaches 1, T is the GPU's own work, which grows
# with B while g does not: by this model the speed-up falls towards ×1 again. At the other end,
# where the host sets the pace, the model does not say what g is: there the check costs the host
# its call and its wait for the step's last kernels, which skipping the check bounds and the
# pipelined loop may or may not win back (notebook 13 measures both). The rows below test the
# saturated end. Measured in the smaller bracketing slice, compiled:

# %%
larger = pd.DataFrame([pipelining_gain(b, small) for b in BATCH_SIZES])
say(table(larger.drop(columns="g"), digits=2))
gains = pd.DataFrame([g | {"batch_size": b} for g, b in zip(larger["g"], larger["B"])])
trend = tokgen.voice.trend_text(gains, by="batch_size", name="B")
towards_1 = "shrinks" if (gains["speedup"] > 1).all() else "grows" if (gains["speedup"] < 1).all() else None
expected = towards_1 is not None and trend.startswith(towards_1)  # every point on one side of ×1, moving to it
say(f"The pipelined speed-up {trend}" + (": towards ×1, as the argument above expects." if expected else "."))

# %% [markdown]
# Beside the reference map's points (notebook 13's rows, the same comparison):

# %%
reference = tokgen.regimes.regime_gains(tokgen.load("13_regimes", DATA_DIR))
piped = reference[reference["hidden_by"] == "pipelined_static"].sort_values("gpu_share")
piped = piped.assign(pipelined=piped.apply(speedup_text, axis=1))
say(table(piped, ["where", "batch_size", "compiled", "gpu_share", "pipelined"], digits=2))

# %% [markdown]
# ## Exercise 2: streams that escape the slice
#
# A `torch.cuda.Stream()` made by torch's stream pool belongs to the whole GPU's context, so
# kernels on it may run on every SM. A "pipelined" generator whose side stream escaped the slice
# would run part of each step on the whole GPU: its speed-up would then mix extra SMs with the
# hidden sync, and the slice would no longer stand for a smaller GPU. (Our generators take the
# slice's own streams.) No point is re-timed here: notebook 13 measured the copy bandwidth of
# both kinds of stream, and that reading answers the exercise:

# %%
say(table(slices[["gpu_sms", "copy_gbs", "side_stream_gbs", "escaped_stream_gbs"]], digits=0))
say(tokgen.display.escaped_copy_text(slices, small, large))

# %% [markdown]
# ## Exercise 3: the slice that matches the L40S's compute
#
# Compute scales with SMs: each of this GPU's SMs contributes its rate divided by the SM count
# (TF32 is on: notebook 00). The rate is the one notebook 12 measured on this GPU (`matmul_tflops`
# in data/12_bandwidth.csv), the SM count is read from the GPU, and the L40S's rate is its
# datasheet's (about 183 TFLOP/s of dense TF32, not measured here). Where the slices bracket the
# L40S's bandwidth (a GPU faster than it), the slice with its compute may be much larger than they
# are: a slice cannot match both. Notebook 07's comparison (compiled, B = 32) in that slice, rounded
# to the slices' steps of 8 SMs; where notebook 12 measured no rate on this GPU, or the whole GPU
# falls short of the L40S, the sentence says so and nothing runs:

# %%
rates = tokgen.load("12_bandwidth", DATA_DIR)
if CUDA and "matmul_tflops" in rates:  # this GPU's, on the whole GPU: a rate another card measured is not its
    mine = (rates["gpu"] == torch.cuda.get_device_name()) & (rates["gpu_sms"].astype(str) == "all")
    rates = rates[mine]["matmul_tflops"].dropna()
    tflops = float(rates.iloc[-1]) if len(rates) else None
else:
    tflops = None
total_sms = torch.cuda.get_device_properties(0).multi_processor_count if CUDA else 1
compute_sms, said = tokgen.regimes.compute_slice(tflops, total_sms)
say(said)
if compute_sms:
    say(table(pd.DataFrame([pipelining_gain(32, compute_sms)]).drop(columns="g"), digits=2))
