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
# # Solutions · 07 pipelining
#
# Worked solutions to the exercises of [notebook 07](../notebooks/07_pipelining.ipynb), at its
# sizes. Exercises 1 and 2 are about asynchronous copies, which only a GPU has: on a CPU every
# copy is synchronous, so their cells run there too, with the model `SIZE` names, and say what a
# GPU shows instead. Exercise 3 runs anywhere.
# Every number this page prints is measured in its own run (exercise 1's race counts and GPU busy share,
# exercise 2's copy return times and the GPU work queued ahead of each copy, exercise 3's steps computed and
# returned), recorded one row per measurement in `<RESULTS_DIR>/data/07_pipelining_solution.csv` and read back
# from there, as the notebooks read theirs.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch (notebook 07: 32)
MAX_SEQLEN = 100  # new tokens per sequence (notebook 07: 100)
RUNS = 20  # runs of the early-stop check in exercise 1
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results

# %%
import difflib
import inspect
import re
import statistics
import time

import torch

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
TIMED = 5  # timed runs behind exercise 1's GPU busy share: their median wall time, as in compare's gpu_busy_share
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
rec = tokgen.Recorder("07_pipelining_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement
compiled = torch.compile(model, backend="inductor" if CUDA else "eager")  # inductor's C++ build is slow on a CPU
probe = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=-1)
eos = int(probe[0, min(10, MAX_SEQLEN)])  # a token of the first steps, as in notebook 07
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)

# %% [markdown]
# ## Exercise 1: without waiting for the copy
#
# A copy of `generate_pipelined` without the line `copied[prev].synchronize()`: the CPU then
# reads the pinned flag without waiting for the copy that fills it. `wait_stream` orders GPU
# work, not the CPU, so the CPU can read the flag before the copy has landed, see "not
# finished", and queue more steps; the loop then keeps the tokens of every step up to the one
# at which it saw the flag. Whether that race happens depends on whether the GPU is still
# behind when the CPU reads. The copy is made from the generator's own source, so the two
# differ in that line only:

# %%
source = inspect.getsource(inspect.unwrap(tokgen.generate_pipelined))
unsynced_source = re.sub(r"copied\[prev\]\.synchronize\(\).*", "pass  # the wait for step i-1's copy: removed", source)
names = {"fromfile": "generate_pipelined (tokgen)", "tofile": "generate_pipelined without the wait"}
print("".join(difflib.unified_diff(source.splitlines(True), unsynced_source.splitlines(True), n=1, **names)))
namespace = dict(vars(tokgen.generators))  # the module's names: torch, make_cache, cache_kwargs, ...
exec(unsynced_source, namespace)
unsynced = namespace["generate_pipelined"]

# %% [markdown]
# Section 2's check, `RUNS` times with the compiled model: the columns each run returns past
# the naive generator's.

# %%
measured = []  # back to back as in the notebook: the rows are written after the runs (review rr20i S4)
for trial in range(RUNS):
    out = unsynced(compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    measured.append({"exercise": 1, "measure": "extra columns", "trial": trial, "naive_columns": reference.shape[1],
                     "value": out.shape[1] - reference.shape[1]})  # fmt: skip
for row in measured:
    rec.write(row)
ex1 = tokgen.results.rows_where(rec.read(), exercise=1, measure="extra columns")  # the rows as recorded
late = ex1["value"].astype(int).tolist()
naive_steps = int(ex1["naive_columns"].iloc[0]) - 1  # the prompt's column is not a step
say(tokgen.voice.unsynced_runs_text(late, naive_steps, BATCH_SIZE, MAX_SEQLEN, model.device.type))

# %%
if any(x > 0 for x in late):
    say(tokgen.voice.race_text(late))
elif CUDA:
    run = lambda: unsynced(compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    wall_ms = statistics.median(tokgen.bench.time_run(run, model.device)[0] for _ in range(TIMED))
    share = tokgen.profiling.gpu_busy_ms(run) / wall_ms  # as compare's gpu_busy_share: over the median wall time
    rec.write({"exercise": 1, "measure": "gpu busy share", "value": share, "timed": TIMED})
    busy = tokgen.results.rows_where(rec.read(), exercise=1, measure="gpu busy share").iloc[0]  # as recorded
    say(tokgen.voice.race_text(late, float(busy["value"]), int(busy["timed"])))

# %% [markdown]
# ## Exercise 2: an ordinary (pageable) flag
#
# `copy_(non_blocking=True)` into pageable host memory cannot be done by the GPU's copy
# engine directly: CUDA stages it and the call returns only when the copy is done, a sync in
# disguise. Notebook 11 measures it; here, the time the host spends in the call, beside the
# GPU work queued ahead of the copy (CUDA events around the sleep), one call each.

# %%
if CUDA:
    flag = torch.zeros((), dtype=torch.bool, device="cuda")
    hosts = {"pinned": torch.zeros((), dtype=torch.bool).pin_memory(), "pageable": torch.zeros((), dtype=torch.bool)}
    for where, host in hosts.items():
        torch.cuda.synchronize()  # nothing else queued: the GPU work ahead of the copy is the sleep alone
        queued = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        queued[0].record()
        torch.cuda._sleep(50_000_000)  # keep the GPU busy for a while, so a copy that waits shows
        queued[1].record()  # the sleep's GPU time, between the two events
        t0 = time.perf_counter()
        host.copy_(flag, non_blocking=True)
        returned_after_ms = 1e3 * (time.perf_counter() - t0)
        torch.cuda.synchronize()
        rec.write({"exercise": 2, "measure": "copy returned after ms", "host_memory": where,
                   "value": returned_after_ms})
        rec.write({"exercise": 2, "measure": "gpu queued ms", "host_memory": where,
                   "value": queued[0].elapsed_time(queued[1])})
    rows = tokgen.results.rows_where(rec.read(), exercise=2)  # the rows as recorded: one call each
    for r in rows[rows["measure"] == "copy returned after ms"].to_dict("records"):
        gpu = rows[(rows["measure"] == "gpu queued ms") & (rows["host_memory"] == r["host_memory"])]["value"]
        say(tokgen.voice.copy_return_text(r["host_memory"], r["value"], gpu.iloc[0] if len(gpu) else None))
else:
    say("*On a CPU there is no device copy: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: checking every 4 steps
#
# Checking every K steps lets the stop go unnoticed for up to K − 1 steps, and reading the flag
# one check late (as pipelining does) adds K more: at most 2K − 1 steps computed past the stop,
# none of them returned. The graph generator of notebook 10 does exactly this; `on_step` is
# called once per K steps, so we can count what it computed.

# %%
for k in (1, 4):
    calls = []
    out = tokgen.generate("graph_transformers", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN,
                          eos_token_id=eos, steps_per_graph=k, on_step=calls.append)  # fmt: skip
    assert torch.equal(out, reference)
    rec.write({"exercise": 3, "measure": "steps", "steps_per_graph": k, "computed": len(calls) * k,
               "kept": out.shape[1] - 1})  # fmt: skip
for r in tokgen.results.rows_where(rec.read(), exercise=3).to_dict("records"):  # the rows as recorded
    say(tokgen.voice.wasted_steps_text(int(r["steps_per_graph"]), int(r["computed"]), int(r["kept"])))
