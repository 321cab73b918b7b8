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

# %%

# %% [markdown]
# # Solutions · 10 CUDA graphs
#
# Worked solutions to the exercises of [notebook 10](../notebooks/10_cuda_graphs.ipynb).
# Timing a CUDA graph needs a GPU; token identity and the wasted steps of exercise 2 can be
# checked anywhere (on a CPU the graph generators run their steps without capturing them).

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch
MAX_SEQLEN = 100  # new tokens per sequence
RUNS = 10  # timed rounds, interleaved, for exercise 1
COMPILE_BACKEND = "inductor"  # "eager" on a CPU: inductor's C++ build takes minutes

# %%
import pandas as pd
import torch
from torch.utils import benchmark

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
BACKEND = COMPILE_BACKEND if CUDA else "eager"
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)

# %% [markdown]
# ## Exercise 1: transformers' step, compiled, K = 4
#
# `graph_transformers` captures `GPT2LMHeadModel`'s own forward; compiled, inductor fuses its
# small kernels, but the model still goes through transformers' cache object and masks, which
# the handwritten step leaves out. Expect it between the eager graph and the handwritten
# compiled one. Same tokens first, then one interleaved timing (GPU).

# %%
compiled = torch.compile(model, backend=BACKEND)
variants = [
    tokgen.generator_variant("graph_transformers", compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN,
                             compiled=True, steps_per_graph=4),
    tokgen.generator_variant("graph_handwritten_compiled", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN,
                             steps_per_graph=4, compile_backend=BACKEND),
]  # fmt: skip
for v in variants:
    assert torch.equal(v.run(), reference), v.name
say("Both return the naive generator's tokens.")
if CUDA:
    results = tokgen.compare(variants, rounds=RUNS, device="cuda")
    say(table(results[["variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_share"]], digits=2))
else:
    say("*Timing CUDA graphs needs a GPU: run this cell there.*")

# %% [markdown]
# ## Exercise 2: what K = 16 can waste
#
# The stop is checked once per replay, and one replay late: replay r + 1 is queued before the
# flag of replay r is read. A generation that finishes early in replay r still runs to the end
# of replay r + 1: up to 2K − 1 steps computed and dropped. We place the stop at several
# positions with an `eos_token_id` taken from the reference and count the steps computed
# (`on_step` is called once per replay).

# %%
rows = []
for stop in sorted({max(1, MAX_SEQLEN * eighths // 8) for eighths in (1, 3, 5, 7)}):
    eos = int(reference[0, stop])
    expected = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    replays = []
    options = {"eos_token_id": eos, "steps_per_graph": 16, "compile_backend": BACKEND, "on_step": replays.append}
    out = tokgen.generate("graph_handwritten_compiled", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, **options)
    assert torch.equal(out, expected)
    rows.append({"tokens returned": out.shape[1] - 1, "steps computed": 16 * len(replays)})
waste = pd.DataFrame(rows).assign(wasted=lambda d: d["steps computed"] - d["tokens returned"])
say(table(waste, digits=0) + f"\n\nThe most wasted here: {waste['wasted'].max()} steps (the bound: 2K − 1 = 31).")

# %% [markdown]
# ## Exercise 3: products and sums, or matrix products?
#
# For one query row per head, `(q * keys).sum(-1)` and `q @ keys.transpose(-1, -2)` compute the
# same scores. The first is elementwise work that inductor fuses with the mask and the softmax
# into one kernel; the second is a batched matrix product of one row per head, one cuBLAS call
# that nothing fuses with. Timed alone, eager, at notebook 10's attention shapes (B × 12 heads ×
# 64 values per head, a cache of MAX_SEQLEN positions):

# %%
q = torch.randn(BATCH_SIZE, 12, 1, 64, device=model.device)
keys = torch.randn(BATCH_SIZE, 12, MAX_SEQLEN, 64, device=model.device)
assert torch.allclose((q * keys).sum(-1).unsqueeze(2), q @ keys.transpose(-1, -2), atol=1e-4)
forms = {"(q * keys).sum(-1)": "(q * keys).sum(-1)", "q @ keys.transpose(-1, -2)": "q @ keys.transpose(-1, -2)"}
rows = [
    {"form": name, "µs, median": 1e6 * benchmark.Timer(stmt, globals={"q": q, "keys": keys}).blocked_autorange().median}
    for name, stmt in forms.items()
]
say(table(pd.DataFrame(rows), digits=1) + "\n\nAlone the matrix product may win; inside the compiled step what "
    "counts is the kernel it saves by fusing (notebook 10's kernel table, section 5).")  # fmt: skip

# %% [markdown]
# ## Exercise 4: what programmatic dependent launch buys
#
# A captured graph keeps the launches it recorded, so each setting of `tokgen.kernels.PDL` needs
# its own decoder, captured while the setting holds (its first call). Same tokens first, then
# one interleaved timing and each decoder's idle share, as in sections 3 and 4 of notebook 10.

# %%
capacity = tokgen.graphs.graph_capacity(MAX_SEQLEN, 4)
first = tokgen.graphs.first_tokens(model, BATCH_SIZE, None)
eos = tokgen.generators.resolve_eos(model, None)  # the naive generator's default stop token
sizes = {"batch_size": BATCH_SIZE, "capacity": capacity, "eos": eos, "device": model.device}
decoders = {}
for pdl in (False, True):
    tokgen.kernels.PDL = pdl  # read when the kernels are launched, i.e. captured
    decoder = tokgen.GraphDecoder(tokgen.TritonStep(model, BATCH_SIZE, capacity), steps_per_graph=4, **sizes)
    with torch.inference_mode():
        assert torch.equal(decoder.generate(first, MAX_SEQLEN), reference)
    decoders[f"graph_triton_kernels K=4, PDL {'on' if pdl else 'off'}"] = decoder
tokgen.kernels.PDL = True
if CUDA:
    pdl_variants = [
        tokgen.Variant(name, lambda on_step=tokgen.generators.no_hook, d=d: d.generate(first, MAX_SEQLEN, on_step))
        for name, d in decoders.items()
    ]
    with torch.inference_mode():
        results = tokgen.compare(pdl_variants, rounds=RUNS, device="cuda")
        idle = {v.name: tokgen.profile_steps(v.run, start=20, stop=MAX_SEQLEN).summary(skip=1) for v in pdl_variants}
    results["gpu_idle_fraction"] = results["variant"].map(lambda n: idle[n]["gpu_idle_fraction"])
    say(table(results[["variant", "median_ms", "q25_ms", "q75_ms", "gpu_idle_fraction"]], digits=3))
else:
    say("*Both return the naive generator's tokens; PDL and its timing need a Hopper GPU: run this cell there.*")
