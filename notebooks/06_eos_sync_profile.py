# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06 · The cost of the EOS check: a timeline of the sync
#
# Every generator so far ends each step with `if finished.all().item(): break`. `.item()`
# copies one boolean to the host and **blocks the CPU until the GPU has finished everything
# queued so far**. Only then can Python queue the next step's kernels, so the GPU sits idle
# from the end of step i until the first kernel of step i+1 arrives.
#
# **What this step adds:** ranges around "step i", "model forward" and "stop check" (NVTX for
# Nsight Systems, `record_function` for torch.profiler), a profiled window of steps, and the
# GPU's idle gaps computed from the kernel timeline.
#
# **What we measure:** B = 16, N = 100, steps 30–50 as in the article: per step the GPU-busy
# time and the idle gap before it, for the synchronous generator and for the pipelined one of
# notebook 07, eager and compiled.
#
# **The article's claim:** the GPU idles about 110 µs between steps (on an L40S), because of
# the `.item()` sync.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 16  # sequences per batch (the article's profile: 16)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
WINDOW = [30, 50]  # profile steps WINDOW[0] .. WINDOW[1]-1 (the article: 30-50)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = ".."  # data/ and figures/ are written below this folder (the repository root)

# %%
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.display import save_figure, say, show_claim, show_source, table

print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
compiled = torch.compile(model, backend=COMPILE_BACKEND)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. Ranges and a window of steps
#
# Each generator wraps its step in `annotate(...)` ranges and calls `mark_step(i)` at the top
# of step i. Both do nothing until a profiler asks for them, so the timings of the other
# notebooks are not disturbed.

# %%
show_source(tokgen.profiling.annotate)

# %%
show_source(tokgen.profile_steps)

# %% [markdown]
# The article started and stopped Nsight Systems at steps 30 and 50 with
# `torch.cuda.profiler.start()/stop()`. We do the same with torch.profiler, whose CUPTI
# timeline we can read back in Python. Opening the profiler drains the GPU (a
# `synchronize()`), so the first two steps of the window are left out of the statistics.
#
# Each generator is profiled twice. The statistics come from a pass that records GPU activity
# only: recording every operator on the CPU too slows the CPU down several-fold and would
# inflate the very gaps we measure. A second pass with the CPU ranges gives the pictures and
# the Perfetto traces; its CPU side runs slower than unprofiled.
#
# ## 2. Profile

# %%
traces = Path(RESULTS_DIR) / "data" / "traces"
profiled = {
    "kv_static": (model, "kv_static"),
    "pipelined_static": (model, "pipelined_static"),
    "compiled kv_static": (compiled, "kv_static"),
    "compiled pipelined_static": (compiled, "pipelined_static"),
}
rec = tokgen.Recorder(
    "06_eos_sync_profile",
    RESULTS_DIR,
    params={"SIZE": SIZE, "BATCH_SIZE": BATCH_SIZE, "MAX_SEQLEN": MAX_SEQLEN, "WINDOW": WINDOW},
)
timelines, pictures = {}, {}
for name, (m, generator) in profiled.items():
    run = lambda: tokgen.generate(generator, m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    run()  # warm-up: compilation, lazy allocation
    timelines[name] = tokgen.profile_steps(run, start=WINDOW[0], stop=WINDOW[1])
    trace = traces / f"06_{name.replace(' ', '_')}.json.gz"
    pictures[name] = tokgen.profile_steps(run, start=WINDOW[0], stop=WINDOW[1], cpu=True, trace_path=trace)
    row = {"variant": name, "generator": generator, "compiled": m is compiled, "batch_size": BATCH_SIZE}
    rec.write({**row, **timelines[name].summary()})
summary = rec.read()
summary

# %% [markdown]
# `idle_gap_median_us`: median over the window of the time between the last kernel of step
# i−1 and the first kernel of step i. `gpu_idle_fraction`: share of the window's wall time in
# which no kernel ran at all. `gpu_busy_per_step_us`: time with at least one kernel running,
# per step.

# %%
if CUDA:
    cols = [
        "variant",
        "idle_gap_median_us",
        "gpu_busy_per_step_us",
        "step_period_us",
        "gpu_idle_fraction",
        "kernels_per_step",
        "streams",
    ]
    say(table(summary[cols], digits=2))
else:
    say("*Skipped on the CPU: there are no GPU kernels to put on a timeline.*")

# %% [markdown]
# ## 3. The timeline
#
# CPU ranges on top, one row of kernels per CUDA stream below: the picture the article showed
# as Nsight Systems screenshots, for four steps in the middle of the window.

# %%
if CUDA:
    mid = (WINDOW[0] + WINDOW[1]) // 2
    fig, axes = plt.subplots(len(timelines), 1, figsize=(13, 2.6 * len(timelines)))
    for ax, (name, tl) in zip(axes, pictures.items()):
        shown = [s for s in sorted(tl.kernels["step"].unique()) if s >= mid - WINDOW[0]][:4]
        first = WINDOW[0] + shown[0]
        tokgen.plot_timeline(
            tl, shown, ax=ax, title=f"{name}: steps {first}–{first + len(shown) - 1} (CPU ranges recorded)"
        )
    fig.tight_layout()
    save_figure(fig, "06_timelines", RESULTS_DIR)

# %% [markdown]
# How to read it: each step ends with the device-to-host copy of the stop flag. With the
# sync, the GPU row has a hole at every step boundary, exactly while the CPU's "stop check"
# range ends and the next "step" range starts queuing kernels. Whether there are also holes
# *inside* a step depends on whether the CPU can queue kernels faster than the GPU runs them:
# an eager GPT-2 step on a fast GPU is often CPU-bound, in which case the GPU waits for Python
# all through the step, sync or not.
#
# The full traces are in `data/traces/` (gzip-compressed Chrome trace JSON): open them at
# https://ui.perfetto.dev (drag the `.json.gz` file in) to zoom into any step.
#
# ## 4. Nsight Systems, for readers who have it
#
# `python -m tokgen.profiling --generator kv_static --batch-size 16` runs the same window under
# `nsys profile --capture-range=cudaProfilerApi --trace=cuda,nvtx,osrt`, with the NVTX ranges
# the article showed.

# %%
nsys = shutil.which("nsys")
say(
    f"`nsys` on this machine: **{nsys or 'not found'}**."
    + ("" if nsys else " The torch.profiler timeline above needs nothing else.")
)

# %% [markdown]
# ## 5. The article's claim, on our GPU

# %%
show_claim(6, RESULTS_DIR)

# %% [markdown]
# ## Summary
#
# * The per-step `.item()` makes the GPU wait for the CPU at every step boundary; the timeline
#   shows the gap and we measure its size per step.
# * How much that gap matters depends on what else keeps the GPU idle: in eager mode, Python's
#   kernel launches; compiled, far fewer launches per step.
# * The remedy the article proposes, queuing step i+1 before checking step i, is notebook 07.
#
# ## Exercises
#
# 1. Profile the naive generator. How does its idle gap compare, and its busy time per step?
# 2. Move the window to steps 80–100. Does the gap change with the sequence length?
# 3. In Perfetto, find the `cudaStreamSynchronize` / `cudaMemcpyAsync` behind `.item()` in the
#    CPU rows of the synchronous trace. How long does the CPU wait in it?
