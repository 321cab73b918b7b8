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
# Worked solutions to the exercises of [notebook 07](../notebooks/07_pipelining.ipynb).
# Exercises 1 and 2 are about asynchronous copies, which only a GPU has: their cells run there
# and say so on a CPU. Exercise 3 runs anywhere.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 8  # sequences per batch
MAX_SEQLEN = 48  # new tokens per sequence

# %%
import time

import torch

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
probe = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=-1)
eos = int(probe[0, 10])
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)

# %% [markdown]
# ## Exercise 1: without waiting for the copy
#
# The article's loop (`tokgen.article_pipelined`, kept as published) reads the pinned flag
# without waiting for the copy that fills it: `wait_stream` orders GPU work, not the CPU. The
# CPU then often reads the flag before the copy has landed, sees "not finished", and queues
# more steps. Twenty runs show how late it stops (columns returned past the naive ones).

# %%
if CUDA:
    late = [
        tokgen.article_pipelined(model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos).shape[1]
        - reference.shape[1]
        for _ in range(20)
    ]
    say(f"Extra columns over 20 runs: min {min(late)}, max {max(late)}, {sum(x > 0 for x in late)} of 20 late.")
else:
    say("*On a CPU every copy is synchronous, so the flag is never stale: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 2: an ordinary (pageable) flag
#
# `copy_(non_blocking=True)` into pageable host memory cannot be done by the GPU's copy
# engine directly: CUDA stages it and the call returns only when the copy is done, a sync in
# disguise. Notebook 11 measures it; here, the time the host spends in the call.

# %%
if CUDA:
    flag = torch.zeros((), dtype=torch.bool, device="cuda")
    hosts = {"pinned": torch.zeros((), dtype=torch.bool).pin_memory(), "pageable": torch.zeros((), dtype=torch.bool)}
    for where, host in hosts.items():
        torch.cuda._sleep(50_000_000)  # keep the GPU busy for a while, so a copy that waits shows
        t0 = time.perf_counter()
        host.copy_(flag, non_blocking=True)
        returned_after_ms = 1e3 * (time.perf_counter() - t0)
        torch.cuda.synchronize()
        say(f"{where}: `copy_(non_blocking=True)` returned after {returned_after_ms:.2f} ms, the GPU busy.")
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
    computed, kept = len(calls) * k, out.shape[1] - 1
    say(
        f"K = {k}: {computed} steps computed, {kept} returned: {computed - kept} wasted (at most 2K − 1 = {2 * k - 1})."
    )
