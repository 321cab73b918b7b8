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
# # Solutions · 11 syncs per decode step
#
# Worked solutions to the exercises of [notebook 11](../notebooks/11_sync_audit.ipynb).
# Syncs exist only between a host and a device: exercises 1 and 2 need a GPU; exercise 3's
# comparison runs on any device.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
TOKENS = 32  # tokens per generation (x2 on the micro model)
DATA_DIR = ".."  # notebook 11's audit is read from <DATA_DIR>/data/11_sync_audit.csv
RUNS = 10  # timed rounds, interleaved, for exercise 3
COMPILE_BACKEND = "inductor"  # "eager" on a CPU: inductor's C++ build takes minutes

# %%
import traceback

import pandas as pd
import torch

import tokgen
from tokgen.display import say, speedup_text, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"

# %% [markdown]
# ## Exercise 1: a newer transformers
#
# transformers 5.1.0 needs `cache_position` to index a StaticCache; without it, the cache counts
# its filled slots with a GPU reduction, a hidden sync (`tokgen.generators.cache_kwargs`). Our own
# loops pass `cache_position`; `generate()` builds its own. From 5.4 on the StaticCache keeps its
# position itself, so the rows to watch are `generate()`'s; the hand-written loops' `.item()`
# reads should not move. Their stream syncs may: reading transformers 5.17's StaticCache, we
# expect it to copy its position counter from the host to the GPU when each layer first fills,
# one pageable copy, so one sync per layer and generation (the counts below show whether that is
# what happens). Counts are per decode step, as in notebook 11. What notebook 11's audit
# measured (its transformers version is in each row), then the same count here, in this
# environment: run this notebook with the
# newer transformers (the runner's `--newest-transformers` sets one up for notebook 14) and
# compare.

# %%
try:
    audit = tokgen.load("11_sync_audit", DATA_DIR).set_index("generator")
    reads = audit["local_scalar_dense_per_token"]
    watched = [g for g in ("generate() dynamic", "generate() static", "kv_static") if g in audit.index]
    say(f"Notebook 11's audit (transformers {audit['transformers'].iloc[0]}), `.item()` reads per decode step: "
        + ", ".join(f"`{g}` {reads[g]:.2f}" for g in watched) + ".")  # fmt: skip
except FileNotFoundError:
    say("*Notebook 11's audit is not in DATA_DIR: run notebook 11 first.*")
say(f"transformers here: **{tokgen.environment()['transformers']}**.")
if CUDA:
    rows = []
    for name in ("generate() dynamic", "generate() static", "kv_static"):
        run = lambda name=name: tokgen.generate(name, model, batch_size=4, max_seqlen=TOKENS)  # noqa: E731
        run()  # warm-up
        syncs = tokgen.count_syncs(run)
        per_step = {f"{k} per decode step": syncs[k] / TOKENS for k in ("local_scalar_dense", "stream_syncs")}
        rows.append({"generator": name, **per_step})
    say(table(pd.DataFrame(rows), digits=2))
else:
    say("*Syncs are between a host and a GPU: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 2: the first line of `generate()` that syncs
#
# `torch.cuda.set_sync_debug_mode("error")` turns every synchronizing call into an exception;
# the last frame inside transformers in its traceback is the culprit.

# %%
if CUDA:
    torch.cuda.set_sync_debug_mode("error")
    try:
        tokgen.generate("generate() dynamic", model, batch_size=4, max_seqlen=TOKENS)
        say("No sync raised.")
    except RuntimeError as err:
        paths = [(f, f.filename.replace("\\", "/")) for f in traceback.extract_tb(err.__traceback__)]
        frames = [(f, p) for f, p in paths if "/transformers/" in p]  # the package's folder, not build/newest-...
        last, path = frames[-1] if frames else paths[-1]
        where = path[path.rfind("/transformers/") + 1 :] if frames else path  # from its package folder on
        say(f"First sync: `{where}`, line {last.lineno}: `{last.line}`")
    finally:
        torch.cuda.set_sync_debug_mode("default")
else:
    say("*There is nothing to synchronize with on a CPU: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: K = 1 against K = 16 on the micro model
#
# On the micro model (issue #43089's; the cell prints its size) the GPU's work per step is almost
# nothing, so a step costs what the host spends on it. One replay of K steps costs one launch
# and one stop check: K = 16 spreads them over 16 steps (16 tokens: the micro model generates one
# sequence). On a CPU there is no launch to spread:
# the graph decoders run their steps as plain calls.

# %%
micro = tokgen.build_model("micro", model.device)
seen = set(tokgen.generate("naive", micro, batch_size=1, max_seqlen=2 * TOKENS).flatten().tolist())
eos = next(t for t in range(micro.config.vocab_size) if t not in seen)  # never produced: full length
backend = COMPILE_BACKEND if CUDA else "eager"
variants = [
    tokgen.generator_variant("graph_handwritten_compiled", micro, batch_size=1, max_seqlen=2 * TOKENS,
                             eos_token_id=eos, steps_per_graph=k, compile_backend=backend)
    for k in (1, 16)
]  # fmt: skip
results = tokgen.compare(variants, rounds=RUNS, device=model.device)
cfg = micro.config
say(table(results[["variant", "median_ms", "ms_per_step"]], digits=3))
say(f"Micro model: {cfg.n_layer} layer, hidden {cfg.n_embd}, on the {model.device.type}: K = 16 against K = 1, "
    f"round by round, {speedup_text(tokgen.gain(results, variants[0].name, variants[1].name))}.")  # fmt: skip
