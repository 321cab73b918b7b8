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
# # 06 · The cost of the EOS check: a timeline of the sync
#
# Every generator so far ends each step with `if finished.all().item(): break`. `.item()`
# copies one boolean to the host and **blocks the CPU until the GPU has finished everything
# queued so far**. Only then can Python queue the next step's kernels, so the GPU has nothing
# queued from the end of step i until the first kernel of step i+1 arrives: the article's
# explanation of the idle time it saw between steps. How long the host actually waits depends on
# how much work the GPU still has queued when the host asks for the flag: section 3 measures it.
#
# **You will learn:** how to profile a window of steps with a hook, read a CUPTI timeline,
# measure the GPU's idle gaps, and tell whether the sync or the host's work before each step's
# first launch keeps the GPU idle there.
#
# **What this step adds:** ranges around "step i" and "model forward" (NVTX, NVIDIA's named
# ranges that Nsight Systems shows, and `record_function` for torch.profiler) and the host's
# sync waits, a profiled window of steps, and the GPU's idle gaps computed from the kernel
# timeline that torch.profiler records through CUPTI (NVIDIA's profiling interface).
#
# **What we measure:** at `BATCH_SIZE`, `MAX_SEQLEN` and the window of steps `WINDOW` (the
# article's profile: B = 16, N = 100, steps 30–50), per step the GPU-busy time and the idle gap
# before it, for the synchronous generator, the same generator with no stop check at all (the
# counterfactual: what the gap is without the stop check, its kernels, copy and sync) and the
# pipelined one of notebook 07, eager and compiled.
#
# **The article's claim:** the GPU idles about 110 µs between steps (on an L40S), because of
# the `.item()` sync.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
BATCH_SIZE = 16  # sequences per batch (the article's profile: 16)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
WINDOW = [30, 50]  # profile steps WINDOW[0] .. WINDOW[1]-1 (the article: 30-50)
WINDOWS = 6  # profiled windows per generator, in a fresh random order each time; 6: tokgen.gaps.MIN_WINDOWS
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.display import plot_timeline, save_figure, say, show_claim

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
compiled = torch.compile(model, backend=COMPILE_BACKEND)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. Ranges and a window of steps
#
# Every generator takes one hook, `on_step`, which it calls at the top of step i (a graph decoder:
# at the top of each replay of K steps). Steps are numbered from 0, as `on_step(i)` sees them, in
# this notebook's profiles and figures; the article's NVTX ranges count from 1 ("Step i+1"), and a
# sentence that a generator "stops after k steps" counts steps, from 1. By default the hook does
# nothing, so the timings of the other notebooks are not disturbed. A `StepWindow` uses it to open
# and close the profiler at the window's first and last step; `Ranges` to mark each step for
# Nsight Systems (NVTX) and
# torch.profiler (`record_function`), and every call of the model ("model forward") through
# forward hooks. The wait itself needs no range: the profiler records the host's CUDA runtime
# calls. `.item()` copies the flag into a pinned host buffer (`cudaMemcpyAsync`, which does not
# wait for the GPU: CUDA documents that for pinned memory; its own host time is measured below) and
# then waits in `cudaStreamSynchronize` until the copy, and everything queued before it, is done;
# the pipelined generator waits in `cudaEventSynchronize`. The figures below draw the
# `*Synchronize` calls as "sync wait", and the `cudaMemcpyAsync` calls in a row of their own,
# "copy call".
#
# Both live in [`tokgen/profiling.py`](../src/tokgen/profiling.py). `StepWindow` is a small
# state machine called with each step's number:
#
# ```python
# def __call__(self, step):
#     if self.state == "before" and step >= self.start:
#         self.open()  # torch.profiler's start, or torch.cuda.profiler.start for Nsight
#         self.state = "open"
#     elif self.state == "open" and step >= self.stop:
#         self.close()
#         self.state = "after"
# ```
#
# `Ranges(model)` opens a range named "step i" at each call (closing the previous one) and wraps
# every call of `model` in a "model forward" range through forward hooks.
# `tokgen.profile_steps(run, start=, stop=)` runs `run(on_step)` once with a `StepWindow` whose
# open and close synchronize the device and start or stop torch.profiler (and, with `cpu=True`,
# the `Ranges` as well), and returns the recorded window as a `Timeline`.

# %% [markdown]
# The article started and stopped Nsight Systems at steps 30 and 50 with
# `torch.cuda.profiler.start()/stop()`. We do the same at the steps of `WINDOW` with
# torch.profiler, whose CUPTI timeline we can read back in Python. Opening the profiler drains
# the GPU (a `synchronize()`), so the first two steps of the window are left out of the
# statistics.
#
# Each generator is profiled twice. The statistics come from a pass that records GPU activity
# and the host's CUDA calls only: recording every operator on the CPU too adds host work to
# every operator and would inflate the very gaps we measure. A second pass with the CPU ranges gives the pictures and
# the Perfetto traces; its CPU side can run slower than unprofiled. A few plain runs give the
# time per step without any profiler; their fastest and slowest step are kept beside their
# median, so their own spread is measured too.
#
# One window is one moment of a noisy host: the gap before a step is host time, and the host
# drifts between one window and the next. So every generator is profiled in `WINDOWS` windows,
# interleaved with the others in a fresh random order each time. Claims 6 and 7 judge every
# window by one rule: the windows' common verdict decides, and windows that disagree leave the
# claim "inconclusive".
#
# A window is profiled once more, in the same order, where its first attempt gives an eager
# host-speed ratio that a claim is judged on (explained under the profile: the synchronous pass
# against the no-check one, claim 6, or against the pipelined one, claim 7) outside the band
# `tokgen.gaps.HOST_DRIFT` sets (`tokgen.gaps.drift_recheck`); repeats can up to double the
# profiling time (every window repeated). Whether a window is repeated is decided by the first
# attempt's host-speed ratio alone, never by a share or by the repeat; the ratio scales the
# corrected share, so where the out-of-band ratios lean one way, judging the repeats moves those
# windows' corrected shares toward their raw ones. Every analysis judges each window's last attempt
# (`tokgen.gaps.last_attempts`), the first attempt stays in the table, and the takeaways say what
# the repeat showed. One repeat names no cause: a ratio back inside the band on the repeat is
# consistent with a transient disturbance of the host, and one repeat cannot tell that from the
# generator's own effect.
#
# `tokgen.bench.profile_windows` ([`tokgen/bench.py`](../src/tokgen/bench.py)) brackets each
# generator's profiled passes in each window with its own plain runs: a warm-up call, the plain
# runs, the statistics' pass, the pictures' pass, the plain runs again. The plain runs are so
# timed next to the passes they are set against, on the same moment of the host. tokgen asks
# PyTorch to tear CUPTI down after each profile (`TEARDOWN_CUPTI=1`, set when tokgen is imported;
# pytorch/pytorch#144455) and waits for that teardown after each profiling session
# (`tokgen.profiling.settle_profiler`), so that the plain runs after a profiled pass should run
# without a profiler set up; this notebook does not measure whether they do. A sentence under the
# profile sets, bracket by bracket, the plain runs after the passes against those before them and
# against the before runs' own spread; but the brackets run one after another, so the runs before
# a pass already follow an earlier bracket's profile, and that sentence cannot show it either.

# %% [markdown]
# ## 2. Profile

# %%
traces = Path(RESULTS_DIR) / "data" / "traces"
rec = tokgen.Recorder("06_eos_sync_profile", RESULTS_DIR, params=PARAMS)
variants = [tokgen.generator_variant(g, m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, compiled=m is compiled)
            for m in (model, compiled) for g in ("kv_static", "kv_static_no_check", "pipelined_static")]  # fmt: skip
seed, orders = tokgen.bench.drawn_orders(len(variants), WINDOWS)  # a fresh seed, recorded: it regenerates the orders
_, first_window = tokgen.bench.profile_windows(
    variants, DEVICE, orders, start=WINDOW[0], stop=WINDOW[1],
    models={v.name: compiled if v.info["compiled"] else model for v in variants},
    traces={v.name: traces / f"06_{v.name.replace(' ', '_')}.json.gz" for v in variants},
    record=lambda row: rec.write({**row, "order_seed": seed}),
    recheck=tokgen.gaps.drift_recheck,  # a window with a judged eager host-speed ratio outside the band: once more
)  # fmt: skip
# the pictures' pass of each variant's first window (its judged attempt), in the figures' order
pictures = {v.name: first_window[v.name][1] for v in variants}
profile = rec.read()  # every attempt: the takeaways say what a re-profiled window's repeat showed
summary = tokgen.gaps.last_attempts(profile)  # per window its last attempt, as every analysis reads the profile
# the statistics leave out the window's first tokgen.profiling.WINDOW_SKIP steps (the profiler drained the GPU)
say(tokgen.gaps.profiled_window_text(BATCH_SIZE, MAX_SEQLEN, WINDOW, where=tokgen.display.where_measured(DEVICE)))

# %% [markdown]
# The idle gap before a step: the median over the window of the time between the end of step
# i−1's last GPU operation (for a synchronous generator the stop flag's copy, which comes after
# the check's own kernels; for the no-check generator the token's append) and the start of step
# i's first one. The two generators' gaps so start at different operations; the takeaways below
# judge the cause from the end of the work both steps share, the token's append, where the table
# records it (`from_op_<j>_median_us` in `data/06_eos_sync_profile.csv`: the time from the end of
# step i−1's j-th last GPU operation to step i's first). The GPU idle
# share: the share of the window's GPU span (its steps' first operation to their last) in which
# no kernel, copy or memset ran at all. GPU busy per step: the time with at least one kernel,
# copy or memset running. GPU operations per step: the kernels, memory copies and memsets the
# GPU ran in a step (the median over the window). The profiler adds host work to every launch, even recording GPU
# activity only, and the gaps are measured under it. The column "profiled / bracketing plain
# runs − 1" sets two different quantities side by side: the profiled step is the GPU span of the
# window's steps (first kernel to last) over their number; the plain runs' step is a whole run's
# wall time over its tokens − 1, so prefill, setup and the other steps are in it too. It is a
# diagnostic, read by no claim, not a measure of the profiler's cost. Each window's row shows those plain runs'
# median with their fastest and slowest step, and the sentence below the table gives each
# generator's range of that column over the windows beside the plain runs' spread: a difference
# no larger than that spread is not told apart from the plain runs' own variation. Both are host
# time, like the gap before a step, and the host drifts: that is why every generator is
# profiled in several windows in a fresh random order, and why claims 6 and 7 decide only when
# every window gives the same verdict. The two generators of one window run one after the other,
# so the host can drift between them too: the cause test, and claim 7's test of the pipelined gap,
# judge every window on each pass's time as a share of the rest of its own step
# (`tokgen.gaps.normalised_share`: the raw share times the two passes' host-speed ratio, the rest of
# each profiled step outside the time judged). A window whose two passes' rest of the step lie further
# apart than `tokgen.gaps.HOST_DRIFT` either way (host drift, or the generator's own effect) is named
# beside its numbers, the correction being large there, not left out; where no ratio was recorded the
# raw share is judged, and the text says so. The ratio may also pick up the generator's own effect (a
# step without a wait may hide launch stalls where the host's launch time is close to the GPU time),
# which pushes the share up, against the claims; a gap that closes stays near zero under a ratio
# of a few. A negative value in that column says the window's profiled steps were shorter than the
# plain runs' average step, not that profiling speeds a step up: the
# two are different quantities (setup and prefill are in the plain step only) and the host
# drifts, so this column cannot say which of the two made it negative. Absolute host times
# (the step, the gaps, the idle share) can move between runs and between cards by more than their
# spread within one run (`data/run_all.csv` records a probe of the host's speed before and after
# each notebook): compare them only within one run, and read speed-ups from the paired rounds
# (notebook 07).

# %%
if CUDA:
    say(tokgen.gaps.profile_table(summary))
    say(tokgen.gaps.profiler_overhead(summary))
    say(tokgen.gaps.plain_after_profile(summary))
else:
    say("*Skipped on the CPU: there are no GPU kernels to put on a timeline.*")

# %% [markdown]
# Hiding the sync lets the host queue the next step's work before the current step's flag is
# read; what that saves depends on how much of each step the host and the GPU each take (the idle
# share above, and section 3's measured sync waits), so it is not bounded here. The pipelined
# generator still makes one synchronize call per step (on the step before's event): it moves the
# wait, not the call. Whether one generator is faster than another is not read from these few
# plain runs: notebook 07 times them round by round.

# %% [markdown]
# ## 3. The timeline
#
# CPU ranges on top, one row of kernels per CUDA stream below: the picture the article showed
# as Nsight Systems screenshots. One panel per generator and model (the three generators, eager
# and compiled: six panels, less any whose picture recorded no steps), each of four steps in the
# middle of the first window, of its judged attempt (its repeat, where it was profiled again: the
# attempt the table's row shows). Each panel has its own time axis: its width is one profiled pass's host
# time, slower than unprofiled and moving from pass to pass, so the panels do not rank the
# generators (notebook 07 times them round by round, in paired rounds). These pictures, and the
# zoom below, come from the second pass, the one that records the CPU ranges: its host can run
# slower than in the statistics' pass, so its gaps can be wider than those in the table above.

# %%
drawn = {name: tl for name, tl in pictures.items() if len(tl.steps)}  # a picture without steps has nothing to show
if CUDA and drawn:  # a time axis per panel: one pass each, not a speed comparison
    mid = (WINDOW[0] + WINDOW[1]) // 2
    fig, axes = plt.subplots(len(drawn), 1, figsize=(13, 2.6 * len(drawn)), layout="constrained")  # suptitle kept apart
    for ax, (name, tl) in zip(axes, drawn.items()):
        shown = [s for s in sorted(tl.kernels["step"].unique()) if s >= mid - WINDOW[0]][:4]
        first = WINDOW[0] + shown[0]
        steps = f"steps {first}–{first + len(shown) - 1}"
        plot_timeline(tl, shown, ax=ax, title=f"{name}: {steps} (window 0, pictures' pass, with CPU ranges)")
    fig.suptitle("One profiled pass each, on its own time axis: the widths do not rank the generators "
                 "(notebook 07 times them in paired rounds)")
    save_figure(fig, "06_timelines", RESULTS_DIR)

# %% [markdown]
# On a 4-step axis a gap of the size the article reports (about a tenth of a millisecond) can be
# thinner than a line when the steps are long, and kernels drawn side by side look like one busy
# band. So we zoom on one step boundary: every kernel at its true width, the GPU's idle intervals shaded grey and
# labelled in µs (the widest ones, where the labels fit), and the idle share of the zoom
# printed. The panels of one model share one time scale (the three eager panels one, the three
# compiled panels another), so that each panel's phases read at the same scale; a narrower
# boundary's panel shows more of the next step. Each panel is one boundary of one pass: its widths
# show where that gap's time lies, they do not rank the generators (the takeaways judge the gaps
# over every window).

# %%
if CUDA and drawn:
    boundaries = {name: sorted(tl.kernels["step"].unique())[len(tl.steps) // 2] for name, tl in drawn.items()}
    model_of = {v.name: "compiled" if v.info["compiled"] else "eager" for v in variants}
    widths = {}  # per model the widest zoom: its panels share that time scale
    for name, tl in drawn.items():
        t0, t1 = tokgen.display.step_boundary_zoom(tl, boundaries[name])
        widths[model_of[name]] = max(widths.get(model_of[name], 0.0), t1 - t0)
    fig, axes = plt.subplots(len(drawn), 1, figsize=(13, 2.6 * len(drawn)), layout="constrained")  # suptitle kept apart
    for ax, (name, tl) in zip(axes, drawn.items()):
        title = f"{name}, end of step {WINDOW[0] + boundaries[name]} (second pass):"
        tokgen.display.plot_step_boundary(ax, tl, boundaries[name], title=title, width_us=widths[model_of[name]])
    fig.suptitle("One boundary of one pass each: the widths show where a gap lies, they do not rank the generators "
                 "(the takeaways judge every window)")
    save_figure(fig, "06_step_boundary", RESULTS_DIR)

# %% [markdown]
# What the sync waits for, per synchronous generator, from the statistics' pass of the first
# window's judged attempt, its repeat where it was profiled again (GPU activity and the host's
# CUDA calls, no CPU ranges): for each step, the GPU work
# launched before the stop flag's copy call that was still unfinished when the host issued it,
# how long the `cudaStreamSynchronize` after it lasted, and how long after the GPU's last
# operation ended the host issued the copy (`tokgen.profiling.sync_wait`). Every window records
# their medians as columns of the table (`sync_us`, `copy_call_us`, ...), and the pass's trace is
# saved beside the pictures' (`data/traces/06_<name>_stats.json.gz`): the sentences below are read
# back from the table.
#
# Then, from the pictures' pass (it has the "step i" and "model forward" ranges), each boundary
# split into measured phases from a point every generator shares: the end on the GPU of the last
# operation that step i−1's model forward launched. First the time after the forward, to the
# end of step i−1's last GPU operation: the token's argmax and append and, with a stop check, the check's
# kernels and the flag's copy (the flag's copy call, which queues that copy, falls here, before
# the gap); then the idle gap's phases: to the host's start of step i, to the model's forward,
# to the launch of step i's first GPU operation, to that operation's start
# (`tokgen.profiling.boundary_phases`). Per boundary the phases add up to its time; their medians
# need not add up to the median time. Their shares are of the boundaries' summed time. The copy
# and sync calls' share is no further part: the calls lie within those phases, and the sentences
# say how much of their time falls in which. The
# phases are host time under the CPU-op profiler, wider than unprofiled: they say where a
# boundary's time goes, not how long an unprofiled gap is. Nor are they the statistics: the
# profiler need not widen each generator's boundary by the same amount, so two generators'
# spans set side by side here are not claim 6's test, which the statistics' pass decides
# (section 5). The last sentence gives, per window, the idle gap before a step in the pictures'
# pass less that in the statistics' pass, with the sync and with no stop check (either sign can occur).

# %%
sync_names, waits, phases = {}, {}, {}
if CUDA:
    sync_names = {m: tokgen.label("kv_static", compiled=m == "compiled") for m in ("eager", "compiled")}
    sync_names = {m: name for m, name in sync_names.items() if name in first_window}
    first_rows = summary[summary["window"] == 0]  # the pictures' attempt, window 0's judged one, read back
    first_rows = first_rows.drop_duplicates("variant").set_index("variant")
    waits = {m: first_rows.loc[name] for m, name in sync_names.items() if name in first_rows.index}
    for m, w in waits.items():
        say("* " + tokgen.gaps.sync_wait_text(sync_names[m], w))
    phases = {name: tokgen.profiling.boundary_phases(tl) for name, tl in drawn.items()}
    recorded = "picture_boundaries" in first_rows  # the phases' medians, recorded beside their shares
    for name, p in phases.items():  # read back from the recorded row (window 0's judged attempt, as pictured)
        say("* " + tokgen.gaps.phases_text(name, first_rows.loc[name] if recorded and name in first_rows.index else p))
    say(tokgen.gaps.picture_widening(summary))

# %% [markdown]
# How to read it: a synchronous step ends with the host reading the stop flag (the purple box
# of the "CPU: copy call" row queues its copy, its host time measured above; the red box of the
# "CPU: sync wait" row is the host's time in the synchronize call, which the sentences above split), and the
# grey intervals are the GPU's idle time around it.
# Compare each synchronous panel with the no-check one of the same model (no stop check at all) and the
# pipelined one (its copy call queues this step's flag, its wait is for the step before's): a
# hole that all show at the boundary cannot be the sync's doing (how large each hole is, the
# pictures do not decide: claim 6 reads the statistics' pass); the phases above say which part
# of the host's work before the next step's first launch it spans, and how long the time after
# the model's forward takes, from the forward's last GPU operation to the flag's copy's end: the
# check's few operations, with the GPU idle between them for the part of it that the takeaway
# below gives. That phase ends where the idle gap before a step begins, so the gap does not count
# it, though the GPU may be idle for most of it.
# Whether there are also holes *inside* a step depends on whether the CPU can queue kernels
# faster than the GPU runs them: where the table above shows a GPU idle share above half, the
# step was host-bound under the profiler, and the GPU waited for the host all through the step,
# sync or not.
#
# The traces in `data/traces/` (gzip-compressed Chrome trace JSON) are the first window's judged
# attempt's (its repeat, where it was profiled again, as the pictures and the table):
# `06_<name>.json.gz` its pictures' pass, with the CPU ranges and the CUDA calls (the per-operator
# CPU events left out), whose gaps can be wider than the table's; `06_<name>_stats.json.gz` its
# statistics' pass. Open them at https://ui.perfetto.dev (drag the `.json.gz` file in) to zoom
# into any step.
#
# ## 4. Nsight Systems, for readers who have it
#
# The same two callbacks drive Nsight Systems: save the lines below as `capture.py` and run
# `nsys profile --capture-range=cudaProfilerApi --trace=cuda,nvtx,osrt python capture.py`. The
# capture opens at step 30 and closes at step 50, with two NVTX ranges: "step i" and "model
# forward", around the model's call alone. The article's screenshots had three: its "Model
# Forward" also covered the argmax, the append and the stop flag's update and reduction, and a
# third, "Check Stop Condition", wrapped `.item()`. `Ranges` reaches a generator only through its
# `on_step` hook and the model's forward hooks, so it adds no range inside a step's own code; the
# CPU rows show the `.item()` call as the copy call and the sync wait (`cudaMemcpyAsync`,
# `cudaStreamSynchronize`).
#
# ```python
# import torch
# import tokgen
# from tokgen.profiling import Ranges, StepWindow
#
# model = tokgen.build_model("gpt2", "cuda")
# run = lambda on_step: tokgen.generate("kv_static", model, batch_size=16, max_seqlen=100, on_step=on_step)
# run(tokgen.generators.no_hook)  # warm-up
# ranges = Ranges(model)
# start = lambda: (torch.cuda.synchronize(), torch.cuda.profiler.start())  # drain the GPU, then open
# stop = lambda: (torch.cuda.synchronize(), torch.cuda.profiler.stop())
# window = StepWindow(30, 50, start, stop)
# run(lambda step: (window(step), ranges(step)))
# ranges.finish(), window.finish()
# ```

# %%
nsys = shutil.which("nsys")
say(
    f"`nsys` on this machine: **{nsys or 'not found'}**."
    + ("" if nsys else " The torch.profiler timeline above needs nothing else.")
)

# %% [markdown]
# ## 5. The article's claim, measured here

# %%
show_claim(6, RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run
#
# The gap's size, and whether the stop check (its launches and `.item()`) causes it: if it does,
# the generator with no stop check at all (same model, same steps, no `.item()`) leaves most of the time before a step
# closed. That time is measured from the end of the work both steps share, the token's append (the
# synchronous step runs the check's few GPU operations after it, the flag's copy last), to the next
# step's first GPU operation, so that neither side leaves out the check's own time; the gap's size
# is measured from each step's last GPU operation, as a trace shows it. The test is judged in every
# window that measured both times, by claim 6's rule: the same answer in every judged window
# decides it, and windows that disagree leave it undecided. Which of two gaps is larger is said
# only where every window shows it and the windows are enough to show a direction: where the two
# gaps do not differ, n windows all agree in sign by chance 2·0.5^n of the time, 1 time in 4 for 3
# windows, so it takes 6 (`tokgen.gaps.MIN_WINDOWS`) to bring that under 0.05 (the default
# `WINDOWS`); fewer that agree are said with that chance. Two gaps that differ by less than
# `tokgen.gaps.MIN_GAP_US` (a gap that short is launch spacing, nothing to explain) count as about
# the same; else the sentence says the windows disagree. The
# pipelined generator hides the sync too, but it also adds a second stream: its gap is claim 7's,
# not the cause's test. The last bullets answer "the sync or the host's work?" from the phases
# of section 3, from the end of the model's forward on the GPU: the argmax, the append and the stop check (and
# how much of that time the GPU was busy), the copy and sync calls (which lie within the other
# parts, not beside them), against the host's other work before the step's first launch, naming the
# part that holds most of the time, else the largest. Like the phases, they are the pictures' pass, under
# the CPU-op profiler: the statistics' pass, not these, decides claim 6.

# %%
if CUDA:
    gaps = tokgen.gaps.idle_gaps(profile)  # judges each window's last attempt, and says the first of a re-profiled one
    for gap in gaps.to_dict("records"):
        for said in tokgen.gaps.gap_takeaway(gap):  # the cause (claim 6), then pipelining (claim 7)
            say("* " + said)
    for m, name in sync_names.items():
        if name in phases:
            say("* " + tokgen.gaps.phase_takeaway(m, phases[name], summary[summary["variant"] == name]))
else:
    say("*Measured on CUDA only.*")

# %% [markdown]
# ## Summary

# %%
if CUDA:
    say("* " + tokgen.gaps.gap_summary(gaps, tokgen.gaps.window_waits(summary)))  # every window, not the first
else:
    say("* *The sync's gap is measured on CUDA only.*")

# %% [markdown]
# * The timeline shows what the GPU does at each step boundary; the generator with no stop check
#   (no check kernels, copy or sync) tells whether the stop check opens most of the time there,
#   both measured from the end of the work the two steps share.
# * The sync is not the only thing that can keep the GPU idle: the host's work for each step
#   can too; the phases under the step-boundary figure say which part of the host's work holds
#   the time, for each model. The no-check
#   generator says, window by window, how much of the time before a step, from the work both
#   steps share, is the stop check's where this ran; its pass and the synchronous one run one
#   after the other, so the rule takes each pass's time as a share of the rest of its own step,
#   meant to correct for the host's speed drifting between them (see the caveat above). The idle shares say how much of
#   each step the GPU waits for the host.
# * The phases under the step-boundary figure say which part of the host's work each gap spans,
#   under the CPU-op profiler: the CPU rows of the traces in `data/traces/` show the same in
#   Perfetto, call by call.
# * The remedy the article proposes, queuing step i+1 before checking step i, is notebook 07.

# %% [markdown]
# ## Exercises
#
# 1. Profile the naive generator. How does its idle gap compare, and its busy time per step?
# 2. Move the window to steps 80–99. Does the gap change with the sequence length? One profile
#    per window cannot tell: profile both windows several times, interleaved.
# 3. In Perfetto, find the `cudaMemcpyAsync` and the `cudaStreamSynchronize` behind `.item()` in
#    the CPU rows of the synchronous trace. How long does the CPU spend in each, and which one waits?
#
# Worked solutions: [`solutions/06_eos_sync_profile.ipynb`](../solutions/06_eos_sync_profile.ipynb).
