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
# Three refinements follow: attention over the *filled* cache slots only, in one Triton kernel;
# our own Triton kernels for the thin matrix products, with the bias, GELU, residual add and
# layer norm folded in; and `DeviceStopDecoder`, where the whole decode is one graph launch and
# the stop is decided on the GPU by a CUDA graph WHILE node ("moving conditional checks onto the
# GPU using conditional nodes", as the article puts what production code does). The registry's
# graph generators: `graph_transformers`, `graph_handwritten`, `graph_handwritten_compiled`,
# `graph_filled_attention`, `graph_triton_kernels` and `graph_stop_on_device`.
#
# **What we measure:** B = 32, N = 100, all interleaved: the naive baseline, `model.generate()`
# (dynamic and static cache), the article's best recipe, and the graph decoders for
# K = 1, 2, 4, 8, 16, each against the task's floor (notebook 12) measured in the same run;
# GPU idle fraction from a CUPTI timeline; where the time goes, kernel by kernel, before and
# after our kernels; and what stopping on the GPU saves when every row stops early.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 8  # timed runs per variant, interleaved, after one warm-up (the article: 10; the rule needs 6 or more)
STEPS_PER_GRAPH = [1, 2, 4, 8, 16]  # K: decode steps per graph replay, one stop check per replay
WINDOW = [20, 100]  # profiled steps for the idle fraction
STOP_AT = [10, 50]  # early stops: every row emits the EOS id first at about these steps (section 6)
COPY_MB = 256  # megabytes per copy when measuring the bandwidth of the floor (notebook 12)
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
# ### Attention over the filled slots only
#
# `handwritten_forward` attends with products and sums over *every* slot of the cache, masking
# the empty ones: a CUDA graph needs fixed shapes, so step 3 reads all 112 slots although 3 hold
# keys. A kernel can instead read the position from GPU memory and stop its loop there: the
# graph stays valid, and step i reads i slots. `attend_filled_slots` is that kernel, in Triton
# (an online softmax over blocks of filled slots, this token's own key and value first); it
# replaces three inductor kernels per layer by one. Same arithmetic, another summation order:
# the tokens must still be the naive ones (section 2 checks).

# %%
show_source(tokgen.kernels.attend_filled_slots)

# %% [markdown]
# ### Our own kernels for the thin products
#
# With 32 rows, each of a layer's four products reads a whole weight matrix to compute 32 rows
# of output. cuBLAS runs such products in a few long-running blocks, often a split-K kernel plus
# a reduction, far below the copy bandwidth (notebook 12 times them alone). `tokgen.kernels`
# tiles the weight's rows thinly instead (16-64 output columns per block, all 32 rows in one
# block), splits the sum when the output is too narrow to give every SM a block, and folds what
# follows each product into the same kernels: the bias and GELU after the first MLP product;
# after each projection, the bias, the residual add and the *next* layer norm, one program per
# row. The block sizes are the fastest of a few hundred configurations timed on our H100, in
# TF32 like the model's own products (`torch.set_float32_matmul_precision("high")`).

# %%
show_source(tokgen.kernels.linear_add_norm)

# %% [markdown]
# Each of these kernels is also launched with *programmatic dependent launch* (PDL, Hopper and
# later; `tokgen.kernels.PDL`): the GPU may start a kernel's blocks while the kernel before it
# is still running. Each block first starts its slice of the weights on its way into L2 (no
# kernel writes the weights, so that is safe), then waits in `griddepcontrol.wait` until the
# kernel before has finished and its writes are visible, and only then reads its inputs. The
# launch gap between two kernels of the graph, and the first weight reads, hide behind the
# kernel before (section 4 measures the idle share; exercise 4 turns PDL off).

# %% [markdown]
# `triton_forward` is `handwritten_forward` on these kernels: seven kernels per layer where
# the compiled `handwritten_forward` runs about fourteen (section 5 counts them). It runs
# eagerly: nothing is left for inductor to fuse, and without a compiler around it the attention
# kernel can store this token's keys and values in the cache itself (a compiled function that
# wrote into its input would copy the whole cache back). `TritonStep` is the step a decoder
# wraps. On a CPU the same functions run as plain torch, which is how the test suite checks that
# the reorganized forward is the same function.

# %%
show_source(tokgen.handwritten.triton_forward)

# %%
show_source(tokgen.TritonStep)

# %% [markdown]
# The registry's graph generators do exactly this, and keep each decoder for the next call
# with the same sizes (building one is setup, like `torch.compile`: the warm-up call of the
# benchmark pays for it).

# %%
show_source(tokgen.generate_graph)

# %% [markdown]
# ### The stop decided on the GPU
#
# The K-step decoder still asks the host once per replay, and when every row has stopped, up to
# 2K - 1 steps have run or been queued for nothing (the replay that holds the stop, plus the one
# queued while the host looked). `DeviceStopDecoder` captures one decode step inside a CUDA graph
# **WHILE node**: the GPU runs the step, then a one-thread kernel, `keep_decoding`, sets the
# node's condition to "some row unfinished and steps left"; the loop ends on the device. The host
# launches one graph and waits once, to read how many steps ran. torch 2.11 builds no WHILE node
# itself, so `capture_while` adds one through cuda-python (`cuda.bindings`), as NVIDIA NeMo's
# label-looping decoders do, and compiles `keep_decoding` with NVRTC.

# %%
show_source(tokgen.DeviceStopDecoder)

# %%
show_source(tokgen.graphs.capture_while)
print(tokgen.graphs.KEEP_DECODING)

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
    variant("graph_filled_attention", steps_per_graph=4),
    *[variant("graph_triton_kernels", steps_per_graph=k) for k in STEPS_PER_GRAPH],
    *([variant("graph_stop_on_device")] if CUDA else []),  # on a CPU: the same loop in Python
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

# %% [markdown]
# The task's floor, as in notebook 12: every weight read once per token and the filled part of
# the KV cache once per step, at the copy bandwidth measured now, in this run.

# %%
if CUDA:
    bandwidth = tokgen.bandwidth.copy_bandwidth(DEVICE, COPY_MB, RUNS)  # GB/s
    floor_ms = tokgen.bandwidth.generation_bytes(model, BATCH_SIZE, MAX_SEQLEN, "filled") / bandwidth / 1e6
    say(f"Copy bandwidth {bandwidth:,.0f} GB/s; the task's floor: **{floor_ms:.1f} ms** per generation.")
else:
    floor_ms = float("nan")
    say("*On the CPU: no floor (it needs the GPU's bandwidth).*")

# %%
by = ok.set_index("variant")
ok["task_floor_ms"] = floor_ms
ok["times_task_floor"] = ok["median_ms"] / floor_ms
ok["speedup_vs_naive"] = by.loc[tokgen.label("naive"), "median_ms"] / ok["median_ms"]
if tokgen.label("generate() static") in by.index:
    ok["speedup_vs_generate_static"] = by.loc[tokgen.label("generate() static"), "median_ms"] / ok["median_ms"]
cols = [
    "variant",
    "median_ms",
    "q25_ms",
    "q75_ms",
    "first_call_ms",
    "times_task_floor",
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
for generator in ("graph_handwritten_compiled", "graph_triton_kernels"):
    fast = ok[ok["generator"] == generator].sort_values("steps_per_graph")
    axes[1].errorbar(
        fast["steps_per_graph"],
        fast["median_ms"],
        yerr=[fast["median_ms"] - fast["q25_ms"], fast["q75_ms"] - fast["median_ms"]],
        marker="o",
        capsize=3,
        label=generator,
    )
if CUDA:
    axes[1].axhline(3 * floor_ms, color="gray", linestyle="--", label="3 × the task's floor")
axes[1].set_xscale("log", base=2)
axes[1].set_xlabel("K = decode steps per graph replay (one stop check per replay)")
axes[1].set_ylabel("ms per generation")
axes[1].set_title("Runtime vs K")
axes[1].legend()
save_figure(fig, "10_cuda_graphs", RESULTS_DIR)

# %%
ours = ok[ok["generator"].isin(list(tokgen.GENERATORS))]
fastest = ours.sort_values("median_ms").iloc[0]
say(
    f"Fastest registry generator: **{fastest['variant']}**, {fastest['median_ms']:.1f} ms per generation "
    f"(IQR {fastest['q25_ms']:.1f}–{fastest['q75_ms']:.1f}), "
    f"{fastest['times_task_floor']:.2f}× the task's floor: ×{fastest['speedup_vs_naive']:.1f} over naive"
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
# The CUPTI timeline of one generation (steps in `WINDOW`) for the fastest generator that stops
# on the host, the compiled handwritten step before our kernels, and the article's best recipe: share
# of wall time in which no kernel ran. (`graph_stop_on_device` is not profiled: CUPTI records
# the kernels of a WHILE node's body once, not once per iteration.)

# %%
on_host = ours[~ours["generator"].isin(list(tokgen.LOOPS_ON_DEVICE))].sort_values("median_ms")
after = on_host.iloc[0]["variant"]
before = tokgen.label("graph_handwritten_compiled", k=4)
idle_rec = tokgen.Recorder("10_cuda_graphs_idle", RESULTS_DIR, params=PARAMS)
timelines = {}
for name in dict.fromkeys([after, before, tokgen.label("pipelined_static", compiled=True)]):
    v = next(v for v in variants if v.name == name)
    timelines[name] = tokgen.profile_steps(v.run, start=WINDOW[0], stop=WINDOW[1])
    summary = timelines[name].summary(skip=1)  # its "steps" are stop-flag copies: one per replay of K tokens
    k = v.info.get("steps_per_graph", 1)
    per_token = {
        key: summary.get(f"{key}_per_step{unit}", float("nan")) / k
        for key, unit in (("gpu_busy", "_us"), ("kernels", ""))
    }
    idle_rec.write(
        {
            "variant": name,
            "tokens_per_copy": k,
            **summary,
            "gpu_busy_per_token": per_token["gpu_busy"],
            "kernels_per_token": per_token["kernels"],
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
# GPU time per generated token, grouped by what the kernel does, before our kernels
# (`graph_handwritten_compiled K=4`) and after (the fastest generator that stops on the host).


# %%
def kernel_kind(name: str) -> str:
    n = name.lower()
    if any(s in n for s in ("gemm", "gemv", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "splitk")):
        return "matmul (cuBLAS)"
    if "attend_filled" in n:
        return "attention (ours, Triton, filled slots)"
    if "_linear_kernel" in n or "_add_norm_kernel" in n:
        return "products, bias, GELU, residual, norm (ours, Triton)"
    if "triton" in n:
        return "fused elementwise / reductions (inductor)"
    if "memcpy" in n or "memset" in n:
        return "copies"
    return "other"


def kernel_table(name):
    """GPU µs and kernels per token of variant `name`'s profiled window, by kind and by kernel."""
    k = timelines[name].kernels.dropna(subset=["step"]).copy()
    per_replay = next(v for v in variants if v.name == name).info.get("steps_per_graph", 1)
    tokens = k["step"].nunique() * per_replay
    k["us"] = k["end"] - k["start"]
    k["kind"] = k["name"].map(kernel_kind)
    kinds = k.groupby("kind")["us"].agg(["sum", "count"]).sort_values("sum", ascending=False)
    kinds = kinds.assign(us_per_token=kinds["sum"] / tokens, kernels_per_token=kinds["count"] / tokens)
    kinds = kinds.assign(share=kinds["sum"] / kinds["sum"].sum()).reset_index()
    top = k.groupby("name")["us"].agg(["sum", "count"]).sort_values("sum", ascending=False).head(8)
    top = top.assign(us_per_token=top["sum"] / tokens, share=top["sum"] / k["us"].sum()).reset_index()
    return kinds, top.assign(name=top["name"].str.slice(0, 90))


if CUDA:
    kernel_rec = tokgen.Recorder("10_kernels", RESULTS_DIR, params=PARAMS)
    for name in (before, after):
        kinds, top = kernel_table(name)
        for r in kinds.itertuples():
            kernel_rec.write(
                {
                    "variant": name,
                    "kind": r.kind,
                    "us_per_token": r.us_per_token,
                    "kernels_per_token": r.kernels_per_token,
                    "share": r.share,
                }
            )
        say(f"**{name}**")
        say(table(kinds[["kind", "us_per_token", "kernels_per_token", "share"]], digits=3))
        say(table(top[["name", "us_per_token", "count", "share"]], digits=3))
else:
    say("*Skipped on the CPU: no GPU kernels.*")

# %% [markdown]
# ## 6. Stopping on the GPU: when every row stops early
#
# Above, no row stops, and every decoder runs all N steps: the WHILE node can only save the
# host's checks. Here the EOS id is the token every row emits at about step `STOP_AT` (all rows
# start from the same BOS, so they decode the same sequence), and the K-step replays pay for the
# steps they run past the stop. Interleaved as before, the same step in every variant.

# %%
stop_rec = tokgen.Recorder("10_device_stop", RESULTS_DIR, params=PARAMS)
stop_variants, stop_steps = [], {}
for stop_at in STOP_AT:
    eos = int(reference[0, min(stop_at, MAX_SEQLEN)])
    ref = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    chosen = [variant("graph_triton_kernels", steps_per_graph=k, eos_token_id=eos) for k in STEPS_PER_GRAPH]
    chosen += [variant("graph_stop_on_device", eos_token_id=eos)] if CUDA else []
    for v in chosen:
        assert torch.equal(v.run(), ref), v.name  # the naive tokens, early stop included
        stop_variants.append(tokgen.Variant(f"{v.name} stop={stop_at}", v.run, v.info | {"stop_at": stop_at}))
    stop_steps[stop_at] = ref.shape[1] - 1
stopped = tokgen.compare(stop_variants, rounds=RUNS, device=DEVICE, record=stop_rec.write, gpu_busy=False)
stopped["steps_run"] = stopped["stop_at"].map(stop_steps)
say(table(stopped[["variant", "steps_run", "median_ms", "q25_ms", "q75_ms"]], digits=2))

# %%
if CUDA:
    rows = []
    for stop_at, group in stopped.groupby("stop_at"):
        device = group[group["generator"] == "graph_stop_on_device"]
        if len(device):
            base = device.iloc[0]["variant"]
            for other in group[group["generator"] != "graph_stop_on_device"]["variant"]:
                g = tokgen.gain(stopped, other, base)
                row = {"steps run": stop_steps[stop_at], "WHILE node against": other}
                rows.append(row | {"gain %": g["gain_pct"], "p": g["p_value"], "real": g["real"]})
    say(table(pd.DataFrame(rows), digits=3))
    syncs = {
        name: tokgen.count_syncs(
            lambda n=name, k=k: tokgen.generate(n, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, **k)
        )
        for name, k in (("graph_triton_kernels", {"steps_per_graph": 4}), ("graph_stop_on_device", {}))
    }
    say(table(pd.DataFrame(syncs).T.reset_index(names="generator"), digits=0))

# %% [markdown]
# `gain %` is how much faster the WHILE node is than each K-step decoder (the signed-rank rule of
# notebook 09 decides `real`). The counts: host-device syncs per generation of N steps without a
# stop (notebook 11's audit).
#
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
# * Attention over the filled slots only (one Triton kernel that reads the position on the GPU)
#   keeps the graph valid and cuts the attention's reads to what is filled; section 3 gives the
#   gain and the distance to the task's floor, section 5 the kernel table before and after.
# * Our own kernels for the thin products, with the bias, GELU, residual add and layer norm
#   folded in, replace cuBLAS's split-K kernels and most of inductor's small ones: section 5
#   puts the two kernel tables side by side, section 3 the distance to the floor.
# * Programmatic dependent launch lets each of our kernels start, and start its weights into L2,
#   while the one before still runs: the launch gaps inside the graph mostly disappear from
#   section 4's idle share.
# * What still stands between us and the floor is in section 5's "after" table: the products
#   themselves (each still below the copy bandwidth with only 32 rows to share a weight read),
#   the kernels that remain per layer, and the torch kernels between layers' worth of ours
#   (argmax, embedding) that PDL cannot overlap.
# * A CUDA graph WHILE node moves the stop check onto the GPU: one launch and one host sync per
#   generation, and no step past the stop. Without a stop it only saves the host's checks,
#   which the K-step replay already hides; with early stops it saves the wasted steps
#   (section 6).
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
# 4. Set `tokgen.kernels.PDL = False`, build a fresh `graph_triton_kernels` decoder (a new
#    `GraphDecoder(tokgen.TritonStep(...))`, since a captured graph keeps its launches) and
#    measure its idle share and time as in sections 3 and 4. What did PDL buy?
#
# Worked solutions: [`solutions/10_cuda_graphs.ipynb`](../solutions/10_cuda_graphs.ipynb).
