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
# # 14 · The article's idea upstream: transformers' `DeferredStopCheck`
#
# Since version 5.17, transformers' `generate()` can read its stop flag one step late, as the
# article proposes: `DeferredStopCheck` (in `transformers/generation/utils.py`) copies the flag
# to pinned memory without blocking, reads it on the following step, and undoes the one extra
# step at the end. It is switched on only for Apple's `mps` devices; the source says "we
# should enable it for cuda if we observe perf gains". This notebook observes.
#
# **You will learn:** how transformers defers its stop check, how to force it on for CUDA, and
# whether it pays on a whole GPU and on an L40S-class slice (notebook 13).
#
# **What we measure:** `generate()` with the dynamic and the static cache (the static one
# compiles its decode step), the deferred check forced on vs off: the same tokens (early stops
# included), syncs per token, and the run time, interleaved, on the whole GPU and in slices.
#
# This notebook runs on the **newest** transformers, not the pinned 5.1.0 of notebooks 00–13:
# `run_all.sh` puts a newer one first on this kernel's path (`--newest-transformers DIR`, or
# installed with pip into `build/newest-transformers`). Every row records its version.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu" (on the CPU: tokens only, no syncs or slices)
SLICE_SMS = [8]  # slices (SMs) measured beside the whole GPU: notebook 13's L40S-class slice
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 8  # timed runs per variant, interleaved, after one warm-up (the article: 10; the rule needs 6 or more)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import contextlib

import pandas as pd
import torch

import tokgen
from tokgen.display import say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
ON_GPU = DEVICE == "cuda"
VARIANTS = [f"generate() {cache} {check}" for cache in ("dynamic", "static") for check in ("sync", "deferred")]
if not ON_GPU:  # DeferredStopCheck records a torch.Event: "cpu backend doesn't support events"
    VARIANTS = [v for v in VARIANTS if v.endswith("sync")]
    print("on the CPU transformers' deferred check cannot run (it needs CUDA events): sync variants only")

# %% [markdown]
# ## 1. Forcing the deferred check on
#
# transformers decides in `DeferredStopCheck.is_supported(device, ...)`; we replace that
# decision, keep the rest of its rule (no assistant model; a cache it can roll back), and
# restore it afterwards. `tokgen.transformers_generate(..., deferred_stop=True)` wraps
# `generate()` in it.

# %%
show_source(tokgen.generators.deferred_stop_check)

# %% [markdown]
# ## 2. Same tokens
#
# The deferred check runs one step past the stop and must undo it. We pick an EOS token that
# the naive generator emits at step 10 (all rows share the prompt, so all stop there): every
# variant must return exactly the naive tokens.

# %%
probe = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=-1)  # no stop
eos = int(probe[0, min(10, MAX_SEQLEN)])
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
for name in VARIANTS:
    out = tokgen.generate(name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    assert torch.equal(out, reference), f"{name}: {out.shape[1]} columns, naive {reference.shape[1]}"
version = tokgen.environment()["transformers"]
print(f"transformers {version}: {', '.join(VARIANTS)}: the naive tokens ({reference.shape[1]} columns)")

# %% [markdown]
# ## 3. Syncs per token
#
# Counted as in notebook 11: `.item()`-style reads (`aten::_local_scalar_dense`) and the CUDA
# runtime's blocking waits, per generated token (N = MAX_SEQLEN, no early stop).


# %%
def syncs(name: str) -> dict:
    run = lambda: tokgen.generate(name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    run()  # warm-up: compilation
    counts = tokgen.count_syncs(run)
    return {"variant": name, **{k: v / MAX_SEQLEN for k, v in counts.items()}}


if ON_GPU:
    audit = pd.DataFrame([syncs(name) for name in VARIANTS])
    say(table(audit, digits=2))

# %% [markdown]
# ## 4. Is it faster?
#
# One interleaved comparison of the four variants per place: the whole GPU, then each slice.

# %%
rec = tokgen.Recorder("14_deferred_stop", RESULTS_DIR, params=PARAMS)
places = [None, *SLICE_SMS] if ON_GPU else [None]
for sms in places:
    variants = [tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN) for g in VARIANTS]
    with tokgen.GpuSlice(sms) if sms else contextlib.nullcontext():
        tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
results = rec.read()
say(table(results, ["gpu_sms", "variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_share", "transformers"], 2))

# %% [markdown]
# Was each slice row really run in the slice? transformers' static-cache `generate()` replays
# CUDA graphs it captures itself, on its own stream; a graph can run on the whole GPU while
# the code around it sits in a slice. A confined run's GPU busy time grows several-fold in a
# small slice; one close to the whole GPU's did not run there (`confined` False).

# %%
show_source(tokgen.claims.deferred_stop_gains)

# %%
deferred = tokgen.claims.deferred_stop_gains(RESULTS_DIR) if ON_GPU else pd.DataFrame()
columns = ["gpu_sms", "cache", "confined", "gpu_share_sync", "gain_pct", "gain_q25_pct", "gain_q75_pct", "p_value"]
say(table(deferred, [*columns, "real"], 2) if len(deferred) else "No deferred variant was measured (CPU run).")

# %%
for r in deferred.to_dict("records"):
    verdict = ("faster" if r["gain_pct"] > 0 else "slower") if r["real"] else "no different (p ≥ 0.05)"
    where = "" if r["confined"] is not False else " — **not confined: it ran on the whole GPU**"
    say(
        f"- {r['gpu_sms']} SMs, {r['cache']} cache (GPU share {r['gpu_share_sync']:.2f}){where}: deferred is "
        f"**{verdict}**, {r['gain_pct']:+.1f}% (IQR {r['gain_q25_pct']:+.1f}…{r['gain_q75_pct']:+.1f}%, "
        f"p = {r['p_value']:.3f})."
    )

# %% [markdown]
# ## Summary
#
# * transformers already holds the article's idea; whether it should be on for CUDA is the
#   question notebook 13 answers in general: it can pay only where the GPU's share of a step
#   is large. The lines above say where it did, in this run.
# * Deferring costs one extra decode step per generation (undone afterwards): at small N and
#   host-bound steps that is pure loss.
#
# ## Exercises
#
# 1. Run with `BATCH_SIZE = 256`. How do the GPU share and the gain move?
# 2. Why does the static cache (a compiled, CUDA-graphed step) show a different gain than the
#    dynamic one? Look at the GPU share of each.
#
# Worked solutions: [`solutions/14_deferred_stop.ipynb`](../solutions/14_deferred_stop.ipynb).
