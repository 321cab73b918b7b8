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
# # 11 · Beyond the article: a syncs-per-token audit
#
# transformers issue [#43089](https://github.com/huggingface/transformers/issues/43089)
# counted **3.25 host-device syncs per generated token** in `generate()` (transformers
# 5.0.0.dev0, a tiny Llama): the stop check, a cache check and an attention-mask check, each an
# `.item()`-like read that makes the CPU wait for the GPU.
#
# **You will learn:** how to count host-device syncs two ways, what `non_blocking=True` does
# into pinned and pageable memory, and what framework overhead alone costs per token.
#
# **What this step adds:** a sync counter, and the audit of every generator in this repository
# and of `generate()`; a measurement of why the pipelined stop flag must live in pinned memory;
# and the framework overhead on a model so small that overhead is all there is.
#
# **What we measure:**
# 1. syncs per token, counted two ways that must agree: `torch.cuda.set_sync_debug_mode("warn")`
#    warnings, and `aten::_local_scalar_dense` calls (what `.item()` runs) in torch.profiler;
#    plus the CUDA runtime's blocking waits, which also catch waits that read no value;
# 2. how long `copy_(non_blocking=True)` blocks the host, into pinned vs pageable memory;
# 3. ms per token on CPU and GPU for issue #43089's micro model (1 layer, hidden 16, vocab 256).

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 4  # sequences per batch for the audit (sync counts do not depend on it)
TOKENS = 32  # tokens generated per audited run, and per micro-model run (x2)
COPY_MB = 256  # size of the GPU work queued before the pinned/pageable copy (MB per operand)
RUNS = 10  # timed runs, interleaved, for the copies and the micro model
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import time

import matplotlib.pyplot as plt
import pandas as pd
import torch

import tokgen
from tokgen.display import save_figure, say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. Counting syncs

# %%
show_source(tokgen.count_syncs)

# %% [markdown]
# ## 2. The audit
#
# Every registry generator and `generate()` with the dynamic and the static cache, `TOKENS`
# new tokens each, after a warm-up (compilation and graph capture are not counted).

# %%
audited = [
    tokgen.generator_variant(
        name,
        model,
        batch_size=BATCH_SIZE,
        max_seqlen=TOKENS,
        **({"compile_backend": COMPILE_BACKEND} if name in tokgen.COMPILES_ITSELF else {}),
    )
    for name in [*tokgen.GENERATORS, "generate() dynamic", "generate() static"]
]
rec = tokgen.Recorder("11_sync_audit", RESULTS_DIR, params=PARAMS)
if CUDA:
    for v in audited:  # a graph generator's K is the registry's default (4): one stop check per 4 tokens
        v.run()  # warm-up
        counts = tokgen.count_syncs(v.run)
        per_token = {f"{k}_per_token": n / TOKENS for k, n in counts.items()}
        rec.write({"generator": v.info["generator"], "tokens": TOKENS, **counts, **per_token})
    audit = rec.read()
    cols = [
        "generator",
        "sync_debug_warnings_per_token",
        "local_scalar_dense_per_token",
        "stream_syncs_per_token",
        "event_syncs_per_token",
        "device_syncs_per_token",
    ]
    say(table(audit[cols], digits=3))
else:
    say("*Skipped on the CPU: there is no device to synchronize with.*")

# %% [markdown]
# How to read it. The article's generators read one flag per token with `.item()`: one
# `_local_scalar_dense` and one stream sync per token. The pipelined generators make no
# `.item()` call at all; they still wait once per token, on an event, but for the *previous*
# step while the current one runs (an event sync, which the sync debug mode does not flag). The
# graph generators wait once per K tokens, plus once at the end to find where the stop fell.
# A row where the two counting methods disagree is worth a look in a profiler trace.
#
# ## 3. Pinned vs pageable: what `non_blocking=True` really does
#
# A retelling of the article puts it this way: "Without pinned memory, `non_blocking=True` in
# your `copy_()` calls is effectively ignored." We queue a long GPU job (matrix products), then
# copy one boolean to the host, and time how long the `copy_` call itself keeps the CPU.


# %%
def queued_copy(pinned: bool) -> tuple[float, float]:
    """(ms inside the copy_ call, ms until the queued GPU work and the copy are done)."""
    side = int((COPY_MB * 2**20 / 4) ** 0.5)
    a = torch.randn(side, side, device=DEVICE)
    flag = torch.zeros((), dtype=torch.bool, device=DEVICE)
    host = torch.zeros((), dtype=torch.bool, pin_memory=pinned and CUDA)
    tokgen.model.synchronize(DEVICE)
    start = time.perf_counter()
    for _ in range(4):  # queue tens of ms of GPU work
        a = a @ a / side
    before_copy = time.perf_counter()
    host.copy_(flag, non_blocking=True)
    after_copy = time.perf_counter()
    tokgen.model.synchronize(DEVICE)
    return 1e3 * (after_copy - before_copy), 1e3 * (time.perf_counter() - start)


samples = {"pinned": [], "pageable": []}
queued_copy(True)  # warm-up: cuBLAS handles, the pinned allocator
for _ in range(RUNS):  # interleaved
    for name in samples:
        samples[name].append(queued_copy(name == "pinned"))
copy_rec = tokgen.Recorder("11_pinned_copy", RESULTS_DIR, params=PARAMS)
for name, runs in samples.items():
    call, whole = pd.Series([c for c, _ in runs]), pd.Series([w for _, w in runs])
    copy_rec.write(
        {
            "destination": name,
            "runs": RUNS,
            "copy_call_median_ms": call.median(),
            "copy_call_min_ms": call.min(),
            "copy_call_max_ms": call.max(),
            "gpu_work_and_copy_median_ms": whole.median(),
        }
    )
copy_table = copy_rec.read()
say(
    table(
        copy_table[
            [
                "destination",
                "copy_call_median_ms",
                "copy_call_min_ms",
                "copy_call_max_ms",
                "gpu_work_and_copy_median_ms",
            ]
        ],
        digits=3,
    )
)

# %% [markdown]
# Into pinned memory the call returns at once and the copy happens when the stream reaches it;
# into pageable memory the CPU cannot hand the GPU an address it may DMA into, so the call waits
# for the queued work and copies through a staging buffer: a sync in disguise. That is why the
# pipelined generators keep their stop flags in pinned memory.
#
# ## 4. Framework overhead on a micro model
#
# Issue #43089's point: with a model this small (1 layer, hidden 16, vocabulary 256) the arithmetic
# is nothing, and what remains is the framework. We time `generate()`, the article's
# static-cache loop and the graph decoders on the CPU and on the GPU, B = 1, 2 × `TOKENS` tokens,
# with an EOS id that the micro model does not produce, so every run goes the full length.

# %%
micro_rec = tokgen.Recorder("11_micro_overhead", RESULTS_DIR, params=PARAMS | {"micro_tokens": 2 * TOKENS})
devices = ["cpu", "cuda"] if CUDA else ["cpu"]
for device in devices:
    micro = tokgen.build_model("micro", device)
    seen = set(tokgen.generate("naive", micro, batch_size=1, max_seqlen=2 * TOKENS).flatten().tolist())
    eos = next(t for t in range(micro.config.vocab_size) if t not in seen)
    kw = {"batch_size": 1, "max_seqlen": 2 * TOKENS, "eos_token_id": eos}
    variants = [
        tokgen.generator_variant("generate() dynamic", micro, **kw),
        tokgen.generator_variant("kv_static", micro, **kw),
        tokgen.generator_variant("graph_handwritten", micro, **kw, steps_per_graph=16),
        tokgen.generator_variant(
            "graph_handwritten_compiled", micro, **kw, steps_per_graph=16, compile_backend=COMPILE_BACKEND
        ),
    ]
    res = tokgen.compare(variants, rounds=RUNS, device=device)
    for r in res.to_dict("records"):
        micro_rec.write(
            {
                "device": device,
                "variant": r["variant"],
                "status": r["status"],
                "error": r["error"],
                "tokens": r["steps"],
                "median_ms": r["median_ms"],
                "q25_ms": r["q25_ms"],
                "q75_ms": r["q75_ms"],
                "ms_per_token": r["ms_per_step"],
            }
        )
micro_table = micro_rec.read()
say(table(micro_table.pivot(index="variant", columns="device", values="ms_per_token").reset_index(), digits=3))

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
micro_table.pivot(index="variant", columns="device", values="ms_per_token").plot.barh(ax=ax)
ax.set_xscale("log")
ax.set_xlabel("ms per token (log)")
ax.set_title("Micro model (1 layer, hidden 16): framework overhead per token")
save_figure(fig, "11_micro_overhead", RESULTS_DIR)

# %% [markdown]
# ## Summary
#
# * The audit counts the syncs per token of every generator here and of `generate()` on this
#   transformers version, two ways.
# * `non_blocking=True` is non-blocking only into pinned memory; into pageable memory it waits
#   for the GPU.
# * On a micro model, where compute is nothing, the time per token *is* the framework's
#   overhead: launches, Python, syncs. Graph replays remove most of it on the GPU.
#
# ## Exercises
#
# 1. Run the audit with transformers ≥ 5.4 (which tracks the StaticCache position itself). Which
#    rows change?
# 2. Find, with `torch.cuda.set_sync_debug_mode("error")`, the first line of `generate()` that
#    syncs. (Catch the error and print its traceback.)
# 3. On the micro model, how do `graph_handwritten_compiled`'s ms per token change between K = 1 and K = 16 on the GPU?
#
# Worked solutions: [`solutions/11_sync_audit.ipynb`](../solutions/11_sync_audit.ipynb).
