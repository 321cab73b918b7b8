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
# # 10 · Beyond the article: CUDA graphs and a stop check every K tokens
#
# Pipelining hides the wait at the step boundary, but every step still costs the CPU hundreds
# of kernel launches from Python. A **CUDA graph** records a step's kernels once and replays
# them with a single launch (the "streams + graphs" variant of the article's follow-ups).
# Capturing **K steps** in one graph and reading the stop flag once per replay (the ideas of
# transformers issue #43089, "check stopping every N tokens", and web-llm's deferred read-back
# of sampled tokens) cuts the host's work per token further. The host reads the flag one
# replay late, so the GPU never waits; whatever was generated past the stop is trimmed.
#
# **You will learn:** how to capture K decode steps in one CUDA graph on pre-allocated buffers,
# read the stop flag once per replay, trim the overshoot, and find which kernels take the time.
#
# **What this step adds:** `GraphDecoder` (pre-allocated buffers, K steps per graph replay)
# around a *step*: transformers' own GPT-2 forward on a StaticCache (`TransformersStep`), or the
# same arithmetic written out by hand over the same weights and compiled (`HandwrittenStep`).
# The registry's graph generators are these decoders: `graph_transformers`, `graph_handwritten`
# and `graph_handwritten_compiled`.
#
# **What we measure:** B = 32, N = 100, all interleaved: the naive baseline, `model.generate()`
# (dynamic and static cache), the article's best recipe, and the graph decoders for
# K = 1, 2, 4, 8, 16; GPU idle fraction from a CUPTI timeline; where the time goes, kernel by
# kernel.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 10  # timed runs per variant, interleaved, after one warm-up
STEPS_PER_GRAPH = [1, 2, 4, 8, 16]  # K: decode steps per graph replay, one stop check per replay
WINDOW = [20, 100]  # profiled steps for the idle fraction
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import pandas as pd
import torch

import tokgen
from tokgen.display import plot_runtimes, save_figure, say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
compiled = torch.compile(model, backend=COMPILE_BACKEND)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. The decoder
#
# Every tensor a step touches lives in the decoder or in its step: output buffer, current
# token, position, finished mask, one "all finished after step i" flag per step, and the KV
# cache. A step is then a fixed sequence of kernels on fixed addresses, which is what a CUDA
# graph needs.

# %%
show_source(tokgen.GraphDecoder)

# %% [markdown]
# The two steps a decoder can wrap. `TransformersStep` calls the transformers model on its
# StaticCache. `HandwrittenStep` runs GPT-2's arithmetic for one new token over the model's
# parameters, with no cache objects, mask builders or output dataclasses per step;
# `handwritten_forward` is the pure function that `torch.compile` sees.

# %%
show_source(tokgen.TransformersStep)

# %%
show_source(tokgen.HandwrittenStep)

# %%
show_source(tokgen.handwritten.handwritten_forward)

# %% [markdown]
# A decoder is built for one batch size, one K and one *capacity*: the positions its buffers
# hold. Every replay runs all K steps, so the capacity is N rounded up to whole replays (and to
# a multiple of 16, so that K = 1, 2, 4, 8, 16 share one compiled shape):

# %%
show_source(tokgen.graph_capacity)

# %% [markdown]
# Here is one built by hand, K = 4, the compiled handwritten step: compilation, warm-up and
# capture happen in the constructor.

# %%
K = 4
capacity = tokgen.graph_capacity(MAX_SEQLEN, K)
step = tokgen.HandwrittenStep(model, BATCH_SIZE, capacity, compile_backend=COMPILE_BACKEND)
decoder = tokgen.GraphDecoder(
    step, batch_size=BATCH_SIZE, capacity=capacity, eos=model.config.eos_token_id, steps_per_graph=K, device=DEVICE
)
prompt = tokgen.generators.first_tokens(model, BATCH_SIZE)  # (B, 1) BOS
tokens = decoder.generate(prompt, MAX_SEQLEN)
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
assert torch.equal(tokens, reference)
say(
    f"N = {MAX_SEQLEN}, K = {K}: capacity {capacity} positions, "
    f"{'one CUDA graph of ' + str(K) + ' steps' if decoder.graph is not None else 'plain calls (no CUDA here)'}; "
    f"{tokens.shape[1] - 1} tokens per row, the naive generator's."
)

# %% [markdown]
# The registry's graph generators do exactly this, and keep each decoder for the next call
# with the same sizes (building one is setup, like `torch.compile`: the warm-up call of the
# benchmark pays for it).

# %%
show_source(tokgen.generate_graph)

# %% [markdown]
# ## 2. Correct before fast
#
# Every graph generator must return the naive generator's tokens, for every K (the test suite
# also checks early stops). `model.generate()` pads rows that finished early rather than
# continuing them, so it is held to the naive output only here, where no row stops.


# %%
def variant(generator, m=model, **options):
    """A timed variant of B = BATCH_SIZE, N = MAX_SEQLEN, named by tokgen.label."""
    if generator in tokgen.COMPILES_ITSELF:
        options["compile_backend"] = COMPILE_BACKEND
    return tokgen.generator_variant(
        generator, m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, compiled=m is compiled, **options
    )


variants = [
    variant("naive"),
    variant("generate() dynamic"),
    variant("generate() static"),
    variant("pipelined_static", compiled),
    variant("graph_transformers", steps_per_graph=1),
    variant("graph_transformers", compiled, steps_per_graph=1),
    variant("graph_handwritten", steps_per_graph=1),
    *[variant("graph_handwritten_compiled", steps_per_graph=k) for k in STEPS_PER_GRAPH],
]
same = {v.name: torch.equal(v.run(), reference) for v in variants[1:]}
say(table(pd.DataFrame({"variant": list(same), "same tokens as naive": list(same.values())})))
assert all(same[v.name] for v in variants[1:] if v.info["generator"] in tokgen.GENERATORS), same

# %% [markdown]
# ## 3. Measure
#
# `torch.compile(mode="reduce-overhead")` also uses CUDA graphs (cudagraph trees). It needs the
# same tensors at the same addresses every call, which our generators' fresh `StaticCache` per
# call does not give; `generate(cache_implementation="static")` is the case where it works:
# transformers compiles the decode step that way and reuses its cache across calls.

# %%
rec = tokgen.Recorder("10_cuda_graphs", RESULTS_DIR, params=PARAMS)
results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
ok = results[results["status"] == "ok"].copy()
bad = results[results["status"] != "ok"]
if len(bad):
    say(table(bad[["variant", "status", "error"]]))

# %%
by = ok.set_index("variant")
ok["speedup_vs_naive"] = by.loc[tokgen.label("naive"), "median_ms"] / ok["median_ms"]
if tokgen.label("generate() static") in by.index:
    ok["speedup_vs_generate_static"] = by.loc[tokgen.label("generate() static"), "median_ms"] / ok["median_ms"]
cols = [
    "variant",
    "median_ms",
    "q25_ms",
    "q75_ms",
    "first_call_ms",
    "speedup_vs_naive",
    "speedup_vs_generate_static",
    "peak_reserved_gb",
]
say(table(ok.sort_values("median_ms")[[c for c in cols if c in ok]], digits=2))

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 5))
plot_runtimes(axes[0], ok)
axes[0].set_xscale("log")
axes[0].set_title(f"B={BATCH_SIZE}, N={MAX_SEQLEN}")
fast = ok[ok["generator"] == "graph_handwritten_compiled"].sort_values("steps_per_graph")
axes[1].errorbar(
    fast["steps_per_graph"],
    fast["median_ms"],
    yerr=[fast["median_ms"] - fast["q25_ms"], fast["q75_ms"] - fast["median_ms"]],
    marker="o",
    capsize=3,
)
axes[1].set_xscale("log", base=2)
axes[1].set_xlabel("K = decode steps per graph replay (one stop check per replay)")
axes[1].set_ylabel("ms per generation")
axes[1].set_title("graph_handwritten_compiled: runtime vs K")
save_figure(fig, "10_cuda_graphs", RESULTS_DIR)

# %%
ours = ok[ok["generator"].isin(list(tokgen.GENERATORS))]
fastest = ours.sort_values("median_ms").iloc[0]
say(
    f"Fastest registry generator: **{fastest['variant']}**, {fastest['median_ms']:.1f} ms per generation "
    f"(IQR {fastest['q25_ms']:.1f}–{fastest['q75_ms']:.1f}): "
    f"×{fastest['speedup_vs_naive']:.1f} over naive"
    + (
        f", ×{fastest['speedup_vs_generate_static']:.2f} over `generate(cache_implementation='static')`"
        if "speedup_vs_generate_static" in fastest
        else ""
    )
    + " in this run."
)

# %% [markdown]
# A replay always runs its K steps: for N = 100, K = 8 computes 104 steps and K = 16 computes 112,
# trimmed afterwards. A larger K saves host work but, when N is not a multiple of K, spends GPU
# time on steps nobody asked for: the right panel shows which of the two weighs more here.
#
# ## 4. Is the GPU ever idle?
#
# The CUPTI timeline of one generation (steps in `WINDOW`) for the fastest generator and for the
# article's best recipe: share of wall time in which no kernel ran.

# %%
idle_rec = tokgen.Recorder("10_cuda_graphs_idle", RESULTS_DIR, params=PARAMS)
profiled = {
    name: next(v for v in variants if v.name == name)
    for name in (fastest["variant"], tokgen.label("pipelined_static", compiled=True))
}
timelines = {}
for name, v in profiled.items():
    timelines[name] = tokgen.profile_steps(v.run, start=WINDOW[0], stop=WINDOW[1])
    summary = timelines[name].summary(skip=1)  # its "steps" are stop-flag copies: one per replay of K tokens
    k = v.info.get("steps_per_graph", 1)
    per_token = {"gpu_busy_per_token": summary.get("gpu_busy_per_step_us", float("nan")) / k}
    idle_rec.write(
        {
            "variant": name,
            "tokens_per_copy": k,
            **summary,
            **per_token,
            "kernels_per_token": summary.get("kernels_per_step", float("nan")) / k,
        }
    )
idle = idle_rec.read()
if CUDA:
    columns = ["variant", "tokens_per_copy", "gpu_idle_fraction", "gpu_busy_per_token", "kernels_per_token"]
    say(table(idle[columns], digits=3))
    say(
        "`gpu_busy_per_token` is in µs: the GPU busy time between two stop-flag copies, "
        "divided by the tokens made between them."
    )

# %% [markdown]
# ## 5. Where the time goes, kernel by kernel
#
# The fastest generator's GPU time per generated token, grouped by what the kernel does.


# %%
def kernel_kind(name: str) -> str:
    n = name.lower()
    if any(s in n for s in ("gemm", "gemv", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "splitk")):
        return "matmul (cuBLAS)"
    if any(s in n for s in ("attention", "fmha", "flash", "efficient")):
        return "attention"
    if "triton" in n:
        return "fused elementwise / reductions (inductor)"
    if "memcpy" in n or "memset" in n:
        return "copies"
    return "other"


if CUDA:
    k = timelines[fastest["variant"]].kernels.dropna(subset=["step"]).copy()
    k_per_replay = fastest.get("steps_per_graph")
    tokens = k["step"].nunique() * (int(k_per_replay) if pd.notna(k_per_replay) else 1)
    k["us"] = k["end"] - k["start"]
    k["kind"] = k["name"].map(kernel_kind)
    kinds = k.groupby("kind")["us"].agg(["sum", "count"]).sort_values("sum", ascending=False)
    kinds = kinds.assign(
        us_per_token=kinds["sum"] / tokens,
        kernels_per_token=kinds["count"] / tokens,
        share=kinds["sum"] / kinds["sum"].sum(),
    )
    top = k.groupby("name")["us"].agg(["sum", "count"]).sort_values("sum", ascending=False).head(8)
    top = top.assign(us_per_token=top["sum"] / tokens, share=top["sum"] / k["us"].sum()).reset_index()
    top["name"] = top["name"].str.slice(0, 90)
    kernel_rec = tokgen.Recorder("10_kernels", RESULTS_DIR, params=PARAMS | {"variant": fastest["variant"]})
    for kind, r in kinds.iterrows():
        kernel_rec.write(
            {
                "variant": fastest["variant"],
                "kind": kind,
                "us_per_token": r["us_per_token"],
                "kernels_per_token": r["kernels_per_token"],
                "share": r["share"],
            }
        )
    say(table(kinds.reset_index()[["kind", "us_per_token", "kernels_per_token", "share"]], digits=3))
    say(table(top[["name", "us_per_token", "count", "share"]], digits=3))
else:
    say("*Skipped on the CPU: no GPU kernels.*")

# %% [markdown]
# Notebook 12 sets these times against what the memory bandwidth allows: reading all of GPT-2
# small's fp32 weights once per token is a floor no generator can beat.
#
# ## Summary
#
# * One graph replay per K steps replaces hundreds of Python-level launches per token; with the
#   stop flag read one replay late, the host never makes the GPU wait.
# * The returned tokens are the naive generator's for every K: the steps generated past the
#   stop are trimmed.
# * A replay computes all of its K steps, so K beyond what the host needs costs GPU time when N
#   is not a multiple of K.
# * Section 4 says how much GPU idle time is left, section 5 which kernels take the time (the
#   thin matrix products and the many small fused kernels), and notebook 12 how far that is
#   from the bandwidth floor.
#
# ## Exercises
#
# 1. Capture `graph_transformers` with the compiled model for K = 4. How does it compare with
#    `graph_handwritten_compiled K=4`?
# 2. What is the largest amount of work K = 16 can waste after the stop? Measure it with an
#    early `eos_token_id`.
# 3. In a copy of `handwritten_forward`, compute the attention with `q @ keys[layer].transpose(-1, -2)`
#    and `w @ values[layer]` instead of products and sums, or use the projection matrices in
#    GPT-2's own (in, out) layout. Which kernels of section 5 change, and by how much?
#
# Worked solutions: [`solutions/10_cuda_graphs.ipynb`](../solutions/10_cuda_graphs.ipynb).
