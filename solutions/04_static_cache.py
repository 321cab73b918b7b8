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
# # Solutions · 04 StaticCache
#
# Worked solutions to the exercises of [notebook 04](../notebooks/04_static_cache.ipynb): a copy
# of the static-cache loop with the two knobs the exercises turn (the cache's length, and
# whether `cache_position` is passed), timed and checked here; kernel and sync counts need a
# GPU. Every number below is computed here.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch (notebook 04: 32)
MAX_SEQLEN = 100  # new tokens per sequence (notebook 04's smallest N)
RUNS = 8  # interleaved rounds of exercise 1 (the signed-rank rule needs 6 or more)

# %%
import pandas as pd
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
model = tokgen.build_model(SIZE)  # on the GPU if there is one
device = model.device


# %%
@torch.inference_mode()
def static_loop(model, *, batch_size, max_seqlen, room=1, with_position=True, on_step=tokgen.generators.no_hook):
    """generate_kv's static loop without the stop check, a cache of room × max_seqlen slots, and
    `cache_position` passed (as `cache_kwargs` does) or not (this solution only)."""
    tokens = tokgen.generators.first_tokens(model, batch_size)
    past = tokgen.generators.make_cache(model, "static", room * max_seqlen)
    positions = torch.arange(max_seqlen, device=tokens.device)
    for i in range(max_seqlen):
        on_step(i)
        kwargs = tokgen.generators.cache_kwargs(model, past, positions[i : i + 1])
        if not with_position:
            kwargs.pop("cache_position", None)
        new = model(tokens[:, -1:], **kwargs).logits[:, -1].argmax(-1)
        tokens = torch.cat([tokens, new[:, None]], dim=1)
    return tokens


# %% [markdown]
# ## Exercise 1: a static cache twice as long as needed
#
# A StaticCache's attention reads every slot, filled or not (masked): doubling `max_cache_len`
# doubles the keys and values each step reads. Whether that shows in the time depends on
# whether attention matters next to the weights, and on who sets the step's pace: GPU time
# added while the GPU waits for the host's launches can hide under them. We time the same
# generation with a cache of N and of 2N slots, interleaved, with the share of each run in
# which the GPU was busy; the cell after it reads the outcome.

# %%
variants = [
    tokgen.Variant(f"cache of {room}N", lambda room=room: static_loop(model, batch_size=BATCH_SIZE,
                                                                      max_seqlen=MAX_SEQLEN, room=room))
    for room in (1, 2)
]  # fmt: skip
rooms = tokgen.compare(variants, rounds=RUNS, device=device)  # + one profiled run each: GPU busy time
g = tokgen.gain(rooms, "cache of 1N", "cache of 2N")
say(
    f"B = {BATCH_SIZE}, N = {MAX_SEQLEN} on {device.type}: the 2N cache against the N one, round by round: "
    f"{tokgen.display.speedup_text(g)}. {tokgen.display.rounds_sentence(RUNS)}"
)

# %%
share = rooms.set_index("variant")["gpu_busy_share"].max()  # NaN on a CPU: CUPTI measures GPUs only
say(tokgen.display.room_reading(g, share))

# %% [markdown]
# ## Exercise 2: kernels per step
#
# `tokgen.profile_steps` records a window of steps with torch.profiler; its `summary()` gives
# the median GPU operations per step: kernels, memsets and copies (GPU only: on a CPU there are
# no kernels to count).

# %%
if device.type == "cuda":
    window = {"start": MAX_SEQLEN // 4, "stop": MAX_SEQLEN // 2}  # a window in the middle of the generation
    ops = {}
    for name in ("kv_dynamic", "kv_static"):
        run = lambda on_step, name=name: tokgen.generate(
            name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, on_step=on_step
        )
        ops[name] = tokgen.profile_steps(run, **window).summary()["kernels_per_step"]
    say(tokgen.display.gpu_ops_text(ops, BATCH_SIZE))
else:
    say("*On a CPU there are no kernels to count: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: which lines of `cache_kwargs` matter, by version
#
# `use_cache` and `past_key_values` matter on every version: without them the model builds no
# cache. `cache_position` is the line that depends on the version. transformers 5.1 (the
# article's) takes it, and without it GPT-2 works the position out from the StaticCache itself
# (it counts the filled slots with a reduction on the GPU and reads the count back: syncs the
# loop does not show; the table below counts them per step). From 5.4 on the forward no longer
# takes it and the cache counts its own position, so `cache_kwargs` leaves it out
# (`tokgen.model.takes_cache_position` reads the signature).
# Below: the same loop with and without the line, on this installation.

# %%
takes = tokgen.model.takes_cache_position(model)
runs = {w: (lambda w=w: static_loop(model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, with_position=w))
        for w in (True, False)}  # fmt: skip
same = torch.equal(runs[True](), runs[False]())
say(
    f"transformers {tokgen.environment()['transformers']}: the forward "
    f"{'takes' if takes else 'does not take'} `cache_position`; with and without the line the tokens are "
    f"{'the same' if same else 'different'}."
)

# %%
if device.type == "cuda":
    counts = [{"cache_position passed": w, **tokgen.profiling.counted_syncs(runs[w])} for w in (True, False)]
    syncs = pd.DataFrame(counts)  # a profiler session lost to CUPTI: NaN counts, `counted` says so
    syncs["syncs per step"] = syncs["stream_syncs"] / MAX_SEQLEN
    shown = ["cache_position passed", "local_scalar_dense", "stream_syncs", "syncs per step", "counted"]
    say(table(syncs, shown, digits=2))
    say(tokgen.display.hidden_sync_text(syncs.set_index("cache_position passed")["syncs per step"]))
else:
    say("*The hidden sync is a GPU's: run this cell on a GPU to count it (`tokgen.count_syncs`).*")
