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
# # Solutions · 05 torch.compile
#
# Worked solutions to the exercises of [notebook 05](../notebooks/05_torch_compile.ipynb).
# Exercises 1 and 2 are about *when* dynamo compiles, which its guards decide whatever the
# backend: we count compilations with dynamo's own counters, on the CPU in seconds with the
# `"eager"` backend (dynamo traces, nothing is code-generated). Exercise 3 needs a GPU.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
COMPILE_BACKEND = "eager"  # "eager": dynamo only (fast, any device); "inductor" compiles for real
MAX_SEQLEN = 20  # new tokens per generation

# %%
import pandas as pd
import torch
from torch._dynamo.utils import counters

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one


def compilations(generator: str, **compile_options) -> int:
    """Frames dynamo compiled during one generation of `generator` on a freshly compiled model."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend=COMPILE_BACKEND, **compile_options)
    tokgen.generate(generator, compiled, batch_size=4, max_seqlen=MAX_SEQLEN)
    return counters["frames"]["ok"]


# %% [markdown]
# ## Exercise 1: `dynamic=False`
#
# With static shapes, every new shape or stride of an input is a new graph. The generators feed
# the newest token as the view `tokens[:, -1:]` of a tensor that grows by one column per step,
# so its stride changes every step: with `dynamic=False` each step recompiles, until dynamo's
# recompile limit (8), after which the model silently runs **eager** (the warning above the
# table says so). Left alone (`dynamic=None`), dynamo marks the stride dynamic after the
# second shape and compiles twice. This is why notebooks 08 and 13 compile per batch size with
# the default and not with `dynamic=False`. `mode="max-autotune-no-cudagraphs"` changes what
# inductor generates (autotuned matrix products), not when dynamo compiles: on a GPU it adds
# minutes of compile time, and whether the steady state gains depends on the GPU: time it with
# notebook 05's comparison (`COMPILE_BACKEND`-style edits to its `torch.compile` call).

# %%
rows = [
    {"compile": "dynamic=False", "compilations in one generation": compilations("kv_static", dynamic=False)},
    {"compile": "default (dynamic=None)", "compilations in one generation": compilations("kv_static")},
]
say(table(pd.DataFrame(rows), digits=0) + f"\n\n({MAX_SEQLEN} steps per generation.)")

# %% [markdown]
# ## Exercise 2: the dynamic cache on the compiled model
#
# A `DynamicCache` grows by one position per step: the keys' and values' length is a new shape
# every step. Each time a guard fails dynamo recompiles and marks what changed as dynamic;
# after a few compilations (counted below) one graph serves every further step, until a shape
# it did not expect (another batch size).

# %%
say(
    f"kv_dynamic: {compilations('kv_dynamic')} compilations in one generation of {MAX_SEQLEN} steps; "
    f"kv_static: {compilations('kv_static')}. Run with `TORCH_LOGS=recompiles` to read dynamo's reasons."
)

# %% [markdown]
# ## Exercise 3: kernels per step, eager vs compiled (GPU only)
#
# Compiling fuses the elementwise work between the matrix products (layer norms, GELU, bias,
# residual adds) into a few generated kernels: fewer launches per step.

# %%
if model.device.type == "cuda":
    torch._dynamo.reset()
    compiled = torch.compile(model)  # inductor: real kernels to count
    for name, m in (("eager", model), ("compiled", compiled)):
        run = lambda on_step, m=m: tokgen.generate("kv_static", m, batch_size=8, max_seqlen=40, on_step=on_step)
        run(tokgen.generators.no_hook)  # warm-up: compilation
        summary = tokgen.profile_steps(run, start=10, stop=30).summary()
        say(f"{name}: {summary['kernels_per_step']:.0f} kernels per step")
else:
    say("*On a CPU there are no kernels to count: run this cell on a GPU.*")
