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
# On a GPU they compile with inductor, as the notebook does: exercise 1 then takes minutes
# (max-autotune tries several kernels per matrix product). On a CPU they compile with dynamo's
# `"eager"` backend, which traces and guards exactly as inductor's compilations do but generates
# no code: the counts of compilations are the same, the timings measure nothing.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch (notebook 05: 32)
MAX_SEQLEN = 100  # new tokens per generation (notebook 05: 100)
RUNS = 8  # interleaved rounds per comparison in exercise 1 (the signed-rank rule needs 6 or more)

# %%
import contextlib
import logging
from logging.handlers import BufferingHandler

import pandas as pd
import torch
from torch._dynamo.utils import counters

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
BACKEND = "inductor" if CUDA else "eager"  # inductor's C++ build takes minutes on a small CPU


# %%
@contextlib.contextmanager
def dynamo_log_lines():
    """The first line of each record dynamo logs inside the block, kept in the list it yields
    instead of printed on stderr: the cell's text reports them."""
    log, caught = logging.getLogger("torch._dynamo"), BufferingHandler(capacity=10_000)
    saved = log.handlers[:], log.propagate
    log.handlers, log.propagate = [caught], False
    lines = []
    try:
        yield lines
    finally:
        log.handlers, log.propagate = saved
        lines += [record.getMessage().splitlines()[0] for record in caught.buffer]


def compilations(generator: str, **compile_options) -> int:
    """Frames dynamo compiled during one generation of `generator` on a freshly compiled model."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend=BACKEND, **compile_options)
    tokgen.generate(generator, compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    return counters["frames"]["ok"]


# %% [markdown]
# ## Exercise 1: `dynamic=False` and `mode="max-autotune-no-cudagraphs"`
#
# With static shapes, every new shape or stride of an input is a new graph. The generators feed
# the newest token as the view `tokens[:, -1:]` of a tensor that grows by one column per step,
# so its stride changes every step: with `dynamic=False` each step recompiles, until dynamo's
# recompile limit, after which the model runs **eager** for the rest of the process. Left alone
# (`dynamic=None`), dynamo marks the stride dynamic after the second shape and compiles again;
# the table counts the compilations of each setting.
# This is why notebooks 08 and 13 compile per batch size with the default and not with
# `dynamic=False`. `mode="max-autotune-no-cudagraphs"` changes what inductor generates (it times
# several kernels for each matrix product and keeps the fastest), not when dynamo compiles.
#
# Each setting is compiled afresh (`torch._dynamo.reset()`, into new, empty on-disk caches:
# `tokgen.fresh_compile_caches()`, as notebook 05 does) and timed against the eager model,
# round by round: the first call holds the whole compilation, the rounds the steady state. When
# `dynamic=False` reaches the recompile limit, dynamo says so in a warning: the table shows it.

# %%
settings = {"default": {}, "dynamic=False": {"dynamic": False}}
if CUDA:  # a mode of inductor's: the eager backend ignores it
    settings["mode=max-autotune-no-cudagraphs"] = {"mode": "max-autotune-no-cudagraphs"}
eager = tokgen.generator_variant("kv_static", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
rows = []
for name, options in settings.items():
    tokgen.fresh_compile_caches()  # a new, empty on-disk cache per row: every first call compiles cold
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend=BACKEND, **options)
    variant = tokgen.generator_variant("kv_static", compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    variant.name = f"compiled, {name}"
    with dynamo_log_lines() as said:
        res = tokgen.compare([eager, variant], rounds=RUNS, device=model.device, gpu_busy=False)
    g = tokgen.gain(res, eager.name, variant.name)
    eager_ms = res.set_index("variant").loc[eager.name, "median_ms"]  # this comparison's own eager rounds
    rows.append({**res.iloc[1].to_dict(), "eager_median_ms": eager_ms, "compilations": counters["frames"]["ok"],
                 "dynamo's warnings": "; ".join(dict.fromkeys(said)) or "none", "vs eager": g})  # fmt: skip

# %%
done = pd.DataFrame(rows)
done["first call, s"] = done["first_call_ms"] / 1e3
done["against eager"] = done["vs eager"].map(tokgen.display.speedup_text)
columns = ["variant", "compilations", "dynamo's warnings", "first call, s", "median_ms", "eager_median_ms",
           "against eager"]  # fmt: skip
say(f"B = {BATCH_SIZE}, N = {MAX_SEQLEN}, backend `{BACKEND}`:\n\n" + table(done, columns, digits=1))
say(
    f"Each row is timed against its own eager rounds, whose median moved between the rows "
    f"({done['eager_median_ms'].min():,.1f}–{done['eager_median_ms'].max():,.1f} ms): read the steady state "
    "from 'against eager', not down the median column. The first call holds the compilation: each row "
    "compiled into new, empty on-disk caches (`tokgen.fresh_compile_caches()`, as notebook 05 does), so no "
    "row loads what notebooks run before on this machine, or an earlier row, compiled."
)

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
# residual adds) into a few generated kernels; the counts below say how many launches per step
# that leaves, at this solution's `BATCH_SIZE`. The count depends on the batch size (cuBLAS picks
# its matrix-product kernels by shape, and some take more than one launch), so notebook 06's count
# at its own B need not match.

# %%
if CUDA:
    torch._dynamo.reset()
    compiled = torch.compile(model)  # inductor: real kernels to count
    for name, m in (("eager", model), ("compiled", compiled)):
        run = lambda on_step, m=m: tokgen.generate(
            "kv_static", m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, on_step=on_step
        )
        run(tokgen.generators.no_hook)  # warm-up: compilation
        summary = tokgen.profile_steps(run, start=MAX_SEQLEN // 4, stop=MAX_SEQLEN // 2).summary()
        say(f"{name}, B = {BATCH_SIZE}: {summary['kernels_per_step']:.0f} kernels per step")
else:
    say("*On a CPU there are no kernels to count: run this cell on a GPU.*")
