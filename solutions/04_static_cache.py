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
# Worked solutions to the exercises of [notebook 04](../notebooks/04_static_cache.ipynb): a
# measurement of your own for exercise 1, kernel counts for exercise 2 (on a GPU), and the
# reference results in `data/04_static_cache.csv`. Every number below is computed here.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 8  # sequences per batch in the measurements below
MAX_SEQLEN = 50  # new tokens per sequence in the measurements below
DATA_DIR = ".."  # the reference results: <DATA_DIR>/data/04_static_cache.csv

# %%
import torch

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
device = model.device
reference = tokgen.load("04_static_cache", DATA_DIR)

# %% [markdown]
# ## Exercise 1: a static cache twice as long as needed
#
# A StaticCache's attention reads every slot, filled or not (masked): doubling `max_cache_len`
# doubles the keys and values each step reads. Whether that shows in the time depends on
# whether attention matters next to the weights and the host's work. We time the same
# generation with a cache of N and of 2N slots, interleaved.


# %%
def static_with_room(model, *, batch_size, max_seqlen, room, on_step=tokgen.generators.no_hook, **_):
    """generate_kv's static loop with a cache of room × max_seqlen slots (this exercise only)."""
    tokens = tokgen.generators.first_tokens(model, batch_size)
    past = tokgen.generators.make_cache(model, "static", room * max_seqlen)
    positions = torch.arange(max_seqlen, device=tokens.device)
    with torch.inference_mode():
        for i in range(max_seqlen):
            kwargs = tokgen.generators.cache_kwargs(model, past, positions[i : i + 1])
            new = model(tokens[:, -1:], **kwargs).logits[:, -1].argmax(-1)
            tokens = torch.cat([tokens, new[:, None]], dim=1)
    return tokens


variants = [
    tokgen.Variant(
        f"cache of {room}N",
        lambda room=room: static_with_room(model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, room=room),
    )  # fmt: skip
    for room in (1, 2)
]
rooms = tokgen.compare(variants, rounds=5, device=device, gpu_busy=False)
g = tokgen.gain(rooms, "cache of 1N", "cache of 2N")
slower = -g["gain_pct"]  # gain of 2N over 1N, negated: positive means 2N is slower
verdict = "a real difference" if g["real"] else "not distinguishable from noise (p ≥ 0.05)"
say(
    f"B = {BATCH_SIZE}, N = {MAX_SEQLEN} on {device.type}: a cache of 2N is {abs(slower):.1f}% "
    f"{'slower' if slower > 0 else 'faster'} (median of the per-round differences, p = {g['p_value']:.3f}): {verdict}."
)

# %% [markdown]
# ## Exercise 2: kernels per step
#
# `tokgen.profile_steps` records a window of steps with torch.profiler; its `summary()` gives
# the median kernels per step (GPU only: on a CPU there are no kernels to count).

# %%
if device.type == "cuda":
    for name in ("kv_dynamic", "kv_static"):
        run = lambda on_step, name=name: tokgen.generate(
            name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, on_step=on_step
        )
        summary = tokgen.profile_steps(run, start=10, stop=20).summary()
        say(f"{name}: {summary['kernels_per_step']:.0f} kernels per step")
else:
    say("*On a CPU there are no kernels to count: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: transformers ≥ 5.4
#
# From 5.4 GPT-2's forward no longer takes `cache_position`: the StaticCache keeps its own
# position. `tokgen.model.takes_cache_position` checks the installed version's signature, so
# `cache_kwargs` passes it only where it exists; the `use_cache` and `past_key_values` lines
# matter on every version.

# %%
say(f"This transformers ({tokgen.environment()['transformers']}) takes `cache_position`: "
    f"{tokgen.model.takes_cache_position(model)}.")  # fmt: skip
# and for reference, the per-step times the reference run measured (notebook 04, eager):
say(
    "; ".join(
        f"{r['variant']}: {r['ms_per_step']:.2f} ms per step, GPU busy {r['gpu_busy_ms'] / r['steps']:.2f} ms"
        for r in reference.to_dict("records")
    )
)
