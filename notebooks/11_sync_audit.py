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
# # 11 · Beyond the article: a syncs-per-step audit
#
# transformers issue [#43089](https://github.com/huggingface/transformers/issues/43089)
# counted **3.25 host-device syncs per generated token** in `generate()` (transformers
# 5.0.0.dev0, a tiny Llama): the stop check, a cache check and an attention-mask check, each an
# `.item()`-like read that makes the CPU wait for the GPU. The issue generated one sequence, so
# each of its decode steps made one token. Our audit runs `BATCH_SIZE` sequences and counts per
# **decode step** (one token for every sequence; the counts are expected not to depend on the
# batch size, but only B = `BATCH_SIZE` is audited):
# the CSV's `*_per_token` columns hold these counts per decode step (at the issue's batch of one,
# a step is one token).
#
# **You will learn:** how to count host-device syncs two ways and read where the two differ,
# what `non_blocking=True` does into pinned and pageable memory, and what a decode step costs
# when its arithmetic is tiny.
#
# **What this step adds:** a sync counter, and the audit of every generator in this repository
# and of `generate()`; a measurement of why the pipelined stop flag must live in pinned memory;
# and the time per token on a model so small that its arithmetic is tiny.
#
# **What we measure:**
# 1. syncs per decode step, counted two ways: `torch.cuda.set_sync_debug_mode("warn")` warnings, and
#    `aten::_local_scalar_dense` calls (what `.item()` runs) in torch.profiler; plus the CUDA
#    runtime's blocking waits, which also catch waits that read no value. The two ways count
#    different things, and section 2 says, row by row, where and why they differ;
# 2. how long `copy_(non_blocking=True)` blocks the host, into pinned vs pageable memory;
# 3. ms per token on CPU and GPU for a GPT-2 at issue #43089's layer count, hidden size and vocabulary,
#    one sequence as in the issue, so one token per step (section 4 prints its sizes).

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 4  # sequences per batch for the audit (sync counts are expected not to depend on it; one B is audited)
TOKENS = 32  # tokens generated per audited run, and per micro-model run (x2)
COPY_MB = 256  # size of the GPU work queued before the pinned/pageable copy (MB per operand)
RUNS = 10  # timed runs, interleaved, for the copies and the micro model
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import time

import pandas as pd
import torch

import tokgen
from tokgen.display import plot_dots, save_figure, say, show_source, sync_reading, table

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
# decode steps each, after a warm-up (compilation and graph capture are not counted). A graph
# generator runs at the registry's default K.

# %%
names = [*tokgen.GENERATORS, "generate() dynamic", "generate() static"]
options = {name: {"compile_backend": COMPILE_BACKEND} if name in tokgen.COMPILES_ITSELF else {} for name in names}
audited = [tokgen.generator_variant(n, model, batch_size=BATCH_SIZE, max_seqlen=TOKENS, **options[n]) for n in names]
rec = tokgen.Recorder("11_sync_audit", RESULTS_DIR, params=PARAMS)
for v in audited if CUDA else ():
    v.run()  # warm-up
    counts = tokgen.profiling.counted_syncs(v.run)  # a session lost to CUPTI: NaN counts, `counted` says so
    rec.write({"generator": v.info["generator"], "tokens": TOKENS, **counts}
              | {f"{k}_per_token": counts[k] / TOKENS for k in tokgen.profiling.SYNC_KINDS})  # fmt: skip
audit = rec.read() if CUDA else pd.DataFrame()
kinds = ["sync_debug_warnings", "local_scalar_dense", "stream_syncs", "event_syncs"]
per_step = {f"{k}_per_token": f"{k.replace('_', ' ')} per decode step" for k in kinds}  # the CSV's name: per token
say(table(audit.rename(columns=per_step), ["generator", *per_step.values(), "counted"], 3) if CUDA
    else "*Skipped on the CPU: no device.*")  # fmt: skip
if said := tokgen.display.not_counted_text(audit):
    say(said)
audit = audit[audit["counted"] == "yes"] if CUDA else audit  # the lines below read the rows counted

# %% [markdown]
# How to read it. A loop that checks its stop flag with `.item()` shows one `_local_scalar_dense`
# and one stream sync for every check. The pipelined generators make no `.item()` call at all;
# they wait on an event instead, for the *previous* step while the current one runs (an event
# sync, which the sync debug mode does not flag). The graph generators that check the stop on
# the host wait on an event for the replay of K steps before the one just queued (so for every
# replay but the last), and once at the end read where the stop fell, which also waits for the
# last replay (a run that stops early reads the stop's position: one sync more);
# `graph_stop_on_device` keeps the loop on the GPU and reads once, at the end, how many steps ran.
# The two counting methods see different things; where a row's counts differ, the sentences
# below say why.

# %%
if CUDA and len(audit):
    for sentence in sync_reading(audit):
        say(sentence)
    say(tokgen.voice.extra_reads_text(audit.set_index("generator")["local_scalar_dense_per_token"]))

# %% [markdown]
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
    for _ in range(4):  # queue GPU work: four products of two COPY_MB matrices
        a = a @ a / side
    before_copy = time.perf_counter()
    host.copy_(flag, non_blocking=True)
    after_copy = time.perf_counter()
    tokgen.model.synchronize(DEVICE)
    return 1e3 * (after_copy - before_copy), 1e3 * (time.perf_counter() - start)


# %%
samples = {"pinned": [], "pageable": []}
queued_copy(True)  # warm-up: cuBLAS handles, the pinned allocator
for _ in range(RUNS):  # interleaved
    for name in samples:
        samples[name].append(queued_copy(name == "pinned"))
copy_rec = tokgen.Recorder("11_pinned_copy", RESULTS_DIR, params=PARAMS)
for name, runs in samples.items():
    call, whole = pd.Series([c for c, _ in runs]), pd.Series([w for _, w in runs])
    stats = {"copy_call_median_ms": call.median(), "copy_call_min_ms": call.min(), "copy_call_max_ms": call.max()}
    copy_rec.write({"destination": name, "runs": RUNS, **stats, "gpu_work_and_copy_median_ms": whole.median()})
copies = copy_rec.read().set_index("destination")
say(table(copies.reset_index(), digits=3, columns=["destination", *[c for c in copies if c.endswith("_ms")]]))

# %% [markdown]
# Into pinned memory the call can return at once and the copy happens when the stream reaches
# it; into pageable memory the CPU cannot hand the GPU an address it may DMA into, so the call
# waits for the queued work and copies through a staging buffer: a sync in disguise. What this
# run measured:

# %%
say(tokgen.voice.copy_wait_text(copies, CUDA))

# %% [markdown]
# That is why the pipelined generators keep their stop flags in pinned memory.
#
# ## 4. A micro model, where the arithmetic is tiny
#
# Issue #43089's point: with a model this small the arithmetic is nothing, and what remains is
# the framework. Our micro model is a GPT-2 built at the issue's layer count, hidden size and
# vocabulary (the issue used a Llama; GPT-2's MLP is 4 × the hidden size, the issue's is the hidden
# size). We time `generate()`, the article's static-cache loop and the graph decoders on the CPU
# and on the GPU, one sequence of 2 × `TOKENS` tokens, with an EOS id that the micro model does not
# produce, so every run goes the full length (the cell prints the sizes). On the CPU the graph
# decoders run their K steps as plain eager calls: there is no CUDA graph there. On the GPU the
# table gives each run's GPU busy share: how much of the run the GPU's own work filled.

# %%
micro_rec = tokgen.Recorder("11_micro_overhead", RESULTS_DIR, params=PARAMS | {"micro_tokens": 2 * TOKENS})
for device in ["cpu", "cuda"] if CUDA else ["cpu"]:
    micro = tokgen.build_model("micro", device)
    seen = set(tokgen.generate("naive", micro, batch_size=1, max_seqlen=2 * TOKENS).flatten().tolist())
    kw = {"batch_size": 1, "max_seqlen": 2 * TOKENS, "eos_token_id": min(set(range(micro.config.vocab_size)) - seen)}
    variants = [tokgen.generator_variant(g, micro, **kw) for g in ("generate() dynamic", "kv_static")]
    variants.append(tokgen.generator_variant("graph_handwritten", micro, **kw, steps_per_graph=16))
    variants.append(tokgen.generator_variant("graph_handwritten_compiled", micro, **kw, steps_per_graph=16,
                                             compile_backend=COMPILE_BACKEND))  # fmt: skip
    res = tokgen.compare(variants, rounds=RUNS, device=device)
    for r in res.assign(device=device, tokens=res["steps"], ms_per_token=res["ms_per_step"]).to_dict("records"):
        micro_rec.write(r)
micro_table = micro_rec.read()
cfg = micro.config
say(tokgen.voice.micro_model_text(cfg, kw["batch_size"], kw["max_seqlen"]))
say(tokgen.voice.micro_table(micro_table))  # ms per token on each device; the GPU run's busy share

# %%
ax = plot_dots(micro_table, "variant", "ms_per_token", group="device", log=True,  # the order they were defined in
               xlabel="ms per token (median; log)")  # fmt: skip
ax.set_title(f"Micro model ({cfg.n_layer} layer, hidden {cfg.n_embd}): ms per token (CPU: no CUDA graph)")
save_figure(ax.figure, "11_micro_overhead", RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run

# %%
if CUDA and len(audit):
    per = audit.set_index("generator")
    if {"generate() dynamic", "generate() static"} <= set(per.index):  # both counted (a lost one: said above)
        say(tokgen.voice.issue_syncs_text(per))  # the issue's count (`.item()` reads) first, raw counts beside it
    waits = ["sync_debug_warnings", "local_scalar_dense", "stream_syncs", "event_syncs", "device_syncs"]
    if per["device_syncs"].nunique() > 1:  # the subtraction below assumes one count in every row: show them
        say(table(audit, ["generator", "device_syncs"], 3))
    say(tokgen.voice.no_wait_text(per, waits))

# %%
if CUDA:
    say(tokgen.voice.micro_speed_text(micro_table))

# %% [markdown]
# ## Summary
#
# * The audit counts the syncs per decode step of every generator here and of `generate()` on
#   this transformers version, two ways, and says where the two ways differ.
# * Whether `non_blocking=True` blocks depends on the destination: section 3 times the call
#   into pinned and into pageable memory.
# * On a micro model at batch one the arithmetic per token is tiny; section 4 times each generator
#   on the CPU and on the GPU (two separate comparisons: medians side by side, no ratio) and gives
#   each GPU run's busy share: how much of the run the GPU's own work filled.
#
# ## Exercises
#
# 1. Run the audit with a newer transformers (≥ 5.4). Which rows change, and by how much? (The
#    audit counts calls: it does not say which change in transformers moved a count.)
# 2. Find, with `torch.cuda.set_sync_debug_mode("error")`, the first line of `generate()` that
#    syncs. (Catch the error and print its traceback.)
# 3. On the micro model, how do `graph_handwritten_compiled`'s ms per token change between K = 1 and K = 16 on the GPU?
#
# Worked solutions: [`solutions/11_sync_audit.ipynb`](../solutions/11_sync_audit.ipynb).
