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
# # 13 · Where hiding the sync pays: a regime map
#
# Notebooks 06–08 looked for the article's pipelining gain on the whole GPU, where the **host**
# can set the pace (the GPU idling most of a step; notebook 08's bound table says at which
# points it did). Where it does, two things could keep pipelining from paying: the sync may cost
# the host little, or it may cost something that the two-stream loop does not win back.
# Skipping the stop check altogether tells the two apart, so this notebook measures both. The
# article ran on an NVIDIA L40S, whose memory bandwidth by its datasheet is 864 GB/s (a peak). On a
# GPU with more bandwidth (an H100, say; section 1 measures this one's), the GPU's share of each
# step may be larger on the L40S than here. Instead of buying one we shrink the GPU: a **green
# context** runs our kernels on N of its SMs (streaming multiprocessors, the units that run
# kernels). On a GPU slower than the L40S no slice reaches its bandwidth; section 1 says so.
#
# **You will learn:** how to run PyTorch code on a slice of a GPU (and the one trap: streams that
# escape it), how to tell a host-bound from a GPU-bound run by its GPU share, and at which GPU
# share pipelining the stop check starts to pay.
#
# **What we measure:** (1) the copy bandwidth of slices of several sizes, and the two whose
# bandwidths bracket the L40S's datasheet figure, where two do (no slice matches it: slices come in
# steps of SMs); (2) that every stream of the two-stream generator stays inside a slice; (3) the naive
# tokens inside those slices; (4) the speed-up of pipelining (and of skipping the check) over the synchronous
# generator, over the whole GPU and both slices × batch sizes, eager and compiled, against the
# measured GPU share of a step.
#
# Green contexts: [PyTorch docs](https://docs.pytorch.org/docs/stable/cuda.html) (`torch.cuda.green_contexts`,
# beta since torch 2.10).

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" only: slices are a CUDA feature ("cpu" runs the map on the CPU, no slices)
SLICE_SMS = [8, 16, 24, 32, 48, 66]  # slice sizes whose copy bandwidth we measure
MAP_SMS = None  # slice sizes of the regime map; None: the two that bracket the L40S (the whole GPU is always added)
BATCH_SIZES = [4, 32, 256]  # batch sizes of the regime map (the article's: 32)
MAX_SEQLEN = 50  # new tokens per sequence (the article: 100; 50 keeps the map within minutes)
RUNS = 8  # timed runs per variant and point, interleaved, after one warm-up (the rule needs 6 or more)
COPY_MB = 256  # MB copied to measure a slice's bandwidth
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import contextlib

import matplotlib.pyplot as plt
import pandas as pd
import torch

import tokgen
from tokgen.display import save_figure, say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
ON_GPU = DEVICE == "cuda"

# %% [markdown]
# ## 1. A slice of the GPU
#
# `GpuSlice(n)` creates a green context of n SMs. Inside `with GpuSlice(n):` the current
# stream belongs to the context, so every kernel PyTorch launches there runs on those n SMs.
# Streams are the trap: a `torch.cuda.Stream()` made inside the context is an ordinary stream
# and runs on the whole GPU. The slice therefore makes its two streams itself, and the
# two-stream generators take theirs from `side_streams()`.

# %%
show_source(tokgen.GpuSlice)

# %% [markdown]
# We measure each slice's copy bandwidth three ways: on its current stream, on one of its own
# side streams, and on a `torch.cuda.Stream()` created inside it (the escape). The L40S's figure
# is its datasheet peak, 864 GB/s, set against copies we measure: a copy reaches less than its
# GPU's peak, so an L40S's own measured copy would be lower, and the bracket is approximate. On a
# GPU faster than the L40S no slice copies at exactly that bandwidth: the two whose bandwidths lie
# just below and just above it **bracket** it (`tokgen.gpu_slice.bracketing`), and the article's
# notebooks run in both. On a slower GPU every slice copies below it and none brackets it: the
# sentence below the table then says so, and the map runs in every slice measured, none of them
# standing for an L40S. Where two bracketing slices' verdicts agree, the verdict holds for a GPU of
# the L40S's bandwidth at the sizes both slices ran (a slice has far less compute than an L40S: a
# GPU-bound generator runs slower there); where they differ, it depends on where in between the
# L40S lies.
#
# A green context is granted SMs in steps of the driver's granularity, so a request that is not a
# whole number of steps (66, say) can be rounded: the first column of the table below is the SM
# count requested, and the bandwidth is what the slice granted for it measured, never inferred
# from the count.


# %%
def bandwidths(sms: int) -> dict:
    gpu_slice = tokgen.GpuSlice(sms)
    with gpu_slice:
        side = tokgen.gpu_slice.copy_bandwidth(megabytes=COPY_MB, stream=gpu_slice.streams[1])
        escaped = tokgen.gpu_slice.copy_bandwidth(megabytes=COPY_MB, stream=torch.cuda.Stream())
    return {"gpu_sms": sms, "copy_gbs": gpu_slice.copy_gbs, "side_stream_gbs": side, "escaped_stream_gbs": escaped}


# %%
if ON_GPU:
    whole = tokgen.gpu_slice.copy_bandwidth(megabytes=COPY_MB)
    SIZES = tokgen.gpu_slice.sizes_that_fit(SLICE_SMS)  # a size above this GPU's SM count is said and skipped
    slices = pd.DataFrame([bandwidths(sms) for sms in SIZES])
    # the two that bracket the L40S; none do (a GPU slower than it, or too few sizes): every size, BRACKETED False
    BRACKET, BRACKETED = tokgen.gpu_slice.bracket_or_all(dict(zip(slices["gpu_sms"], slices["copy_gbs"])))
    slices["brackets"] = slices["gpu_sms"].isin(BRACKET) & BRACKETED
    rec = tokgen.Recorder("13_slices", RESULTS_DIR, params=PARAMS | {"WHOLE_GPU_GBS": whole})
    for row in slices.to_dict("records"):
        rec.write(row)
    say(table(slices, digits=0))

# %%
if ON_GPU and BRACKETED:
    say(tokgen.regimes.bracket_sentence(slices, whole, torch.cuda.get_device_properties(0).multi_processor_count))
elif ON_GPU:  # none brackets the L40S: why (a slower GPU, or slices all on one side of it)
    say(tokgen.regimes.no_bracket_sentence(slices, whole))
if ON_GPU:
    own = (slices["side_stream_gbs"] - slices["copy_gbs"]).abs() < 0.15 * slices["copy_gbs"]
    assert own.all(), "a slice's own side streams must copy at the slice's bandwidth"

# %% [markdown]
# A slice is not an L40S. At best its bandwidth is bracketed; its compute is not matched: by its
# datasheet an L40S has 142 SMs of its own generation (about 183 TFLOP/s of dense TF32), while a
# slice keeps its share of this GPU's SMs (the sentence above), and small kernels, which cannot
# fill even a slice, run at the latency of a few SMs. A bracketing slice is a GPU with L40S-like
# bandwidth and weaker compute: we expect it, if anything, to be *more* GPU-bound than an L40S at
# the same batch size (expected, not measured: no L40S ran here).
#
# ## 2. Correct inside the slices
#
# The same early-stop check as notebook 07, run inside the bracketing slices (every slice measured
# where none brackets the L40S): the pipelined generator (streams from the slice) and the
# no-stream generators return the naive tokens.


# %%
def early_stop_check() -> list[str]:
    probe = tokgen.generate("naive", model, batch_size=4, max_seqlen=MAX_SEQLEN)
    eos = int(probe[0, min(10, MAX_SEQLEN)])
    reference = tokgen.generate("naive", model, batch_size=4, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    same = ["kv_static", "pipelined_static", "pipelined_static_1stream"]
    for name in same:
        out = tokgen.generate(name, model, batch_size=4, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
        assert torch.equal(out, reference), f"{name} differs from naive inside the slice"
    return same


if ON_GPU:
    for sms in BRACKET:
        with tokgen.GpuSlice(sms):
            checked = early_stop_check()
        print(f"inside {sms} SMs, the naive tokens with an early stop: {', '.join(checked)}")

# %% [markdown]
# ## 3. The regime map
#
# At each point (the whole GPU or a slice × a batch size) one interleaved comparison of six variants: the
# synchronous static-cache generator, the pipelined one and the one without a stop check,
# eager and compiled. `compare` also measures each variant's **GPU busy time** (CUPTI, one
# extra run); its share of the wall time is the step's GPU share: near 1 the GPU is the
# bottleneck, near 0 the host is. The compiled model is compiled afresh per batch size (as in
# notebook 08): compiled once, at the whole-GPU point, and reused in every slice.
#
# A second trap: **code can leave a slice**. A `torch.cuda.set_device` call is a
# `cudaSetDevice`, which makes the whole GPU's context current again, so every kernel after it
# would run on all SMs; whether the code torch.compile generates makes that call, this notebook
# does not count. Inside a slice `GpuSlice` replaces `torch.cuda.set_device` by a check that the
# device is the slice's; what is measured: `compare` re-enters the slice before every timed run
# (`GpuSlice.confine`) and records in `slice_escapes` how many timed runs left it anyway, and at
# the end of each point we measure the copy bandwidth again, inside the slice.

# %%
GENERATORS = ["kv_static", "pipelined_static", "kv_static_no_check"]
MAP = (MAP_SMS or list(BRACKET)) if ON_GPU else []  # the slices mapped: by default the bracketing two
POINTS = [None, *MAP]  # None: the whole GPU
SLICES = {sms: tokgen.GpuSlice(sms) for sms in MAP}
rec = tokgen.Recorder("13_regimes", RESULTS_DIR, params=PARAMS)


def compiled_for(batch_size: int):
    torch._dynamo.reset()  # compiled for this batch size, as in notebook 08
    return torch.compile(model, backend=COMPILE_BACKEND)


# %%
def measure_point(sms, batch_size: int, compiled) -> pd.DataFrame:
    variants = [
        tokgen.generator_variant(g, m, batch_size=batch_size, max_seqlen=MAX_SEQLEN, compiled=m is compiled)
        for m in (model, compiled)
        for g in GENERATORS
    ]
    write = lambda row: rec.write(row | {"map_point": f"{sms or 'all'} SMs, B={batch_size}"})
    with SLICES[sms] if sms else contextlib.nullcontext():
        results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=write)
        if sms:  # still confined at the end of the point? (`slice_escapes`: what the text above says is measured)
            after = tokgen.gpu_slice.copy_bandwidth(megabytes=COPY_MB)
            assert abs(after - SLICES[sms].copy_gbs) < 0.15 * SLICES[sms].copy_gbs, (sms, after)
    return results


# %%
for batch_size in BATCH_SIZES:
    compiled = compiled_for(batch_size)
    for sms in POINTS:
        measure_point(sms, batch_size, compiled)
        print(f"B={batch_size}, {sms or 'all'} SMs: done", flush=True)

# %% [markdown]
# ## 4. Reading the map
#
# For each point: the speed-up of the pipelined generator and of skipping the check, each over
# the synchronous generator of the same model (per-round pairs, signed-rank test and the ±5%
# band of "no effect", as in every notebook), beside the synchronous generator's GPU share. The
# table is built by `tokgen.regimes.regime_gains` ([`tokgen/regimes.py`](../src/tokgen/regimes.py))
# from this notebook's rows, one `tokgen.gain` per point and per way of hiding the check.

# %%
regimes = tokgen.regimes.regime_gains(rec.read())
columns = ["where", "batch_size", "compiled", "hidden_by", "gpu_share", "speed-up"]
say(table(regimes.assign(**{"speed-up": regimes.apply(tokgen.display.speedup_text, axis=1)}), columns, 2))

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
for ax, hidden_by in zip(axes, ("pipelined_static", "kv_static_no_check")):
    tokgen.display.plot_regime_map(ax, regimes[regimes["hidden_by"] == hidden_by], hidden_by, shared=regimes)
fig.suptitle(f"Hiding the stop-check sync vs the GPU's share of a step (N={MAX_SEQLEN})")
save_figure(fig, "13_regimes", RESULTS_DIR)

# %% [markdown]
# The article's configuration is B = 32 on an L40S: on this map, the points B = 32 in the
# slices that bracket it (by default the map's two slices; each line names its slice's kind).
# What the map says, from the rows above:

# %%
say(tokgen.regimes.regime_findings(regimes, article_batch=32, bracket=BRACKET if ON_GPU and BRACKETED else ()))

# %% [markdown]
# ## Summary
#
# * The sentences above are computed from this run; the map (figure) shows every point with the
#   spread of its per-round speed-ups.
# * A step's GPU share says who sets the pace. At a given share, skipping the check bounds what
#   hiding it can gain, and the pipelined generator shows how much of that the second stream
#   wins back: the map measures both.
# * Where two slices bracket the L40S's datasheet bandwidth (possible on a GPU faster than it),
#   none matches its compute; say so when quoting their numbers, and read a claim as settled for a
#   GPU of the L40S's bandwidth only where both agree, and only at the sizes both ran. On a slower
#   GPU no slice brackets it (section 1 says which case this run is).
#
# ## Exercises
#
# 1. Add B = 1024 to `BATCH_SIZES` (with `MAP_SMS` set to the smaller bracketing slice). How does
#    the speed-up change as the GPU share nears 1? What does the model T / (T − g) predict there?
# 2. Section 1 measured the copy bandwidth of a stream made with `torch.cuda.Stream()` inside a
#    slice (the escape) beside the slice's own streams. What does it say about where that
#    stream's kernels run, and what would a "pipelined" generator using such streams measure?
# 3. Which slice matches the L40S's *compute* (about 183 TFLOP/s of dense TF32)? Re-run notebook 07 there
#    with `./run_all.sh --slice N --only 07 --out build/sliceN`.
#
# Worked solutions: [`solutions/13_regimes.ipynb`](../solutions/13_regimes.ipynb).
