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
# Pipelining aims to hide the wait at the step boundary (whether it did on this machine is in
# notebook 07), but every step still costs the CPU one launch from Python for each of its
# kernels. A **CUDA graph** records a step's kernels once and replays them with a single launch
# (a retelling of the article under the same title, "Optimizing Token Generation in PyTorch Decoder
# Models", by Nino, Senior Tech Editor, with no known address: README's References, adds them to its
# streams: "CUDA Graphs allow you to 'record' a sequence of kernels and launch them with a single CPU
# call", and its table has a row "Streams + CUDA Graphs"; neither is in the article itself).
# Capturing **K steps** in one graph and reading the stop flag once per replay (the ideas of
# transformers issue #43089, "check stopping every N tokens", and web-llm's deferred read-back
# of sampled tokens) leaves the host fewer launches and checks per decode step. The host reads
# the flag one replay late, so the GPU need not wait for the host's check (section 4 measures how much it
# still idles); whatever was generated past the stop is trimmed.
#
# **You will learn:** how to capture K decode steps in one CUDA graph on pre-allocated buffers,
# read the stop flag once per replay, trim the overshoot, and find which kernels take the time.
#
# **What this step adds:** `GraphDecoder` (pre-allocated buffers, K steps per graph replay)
# around a *step*: transformers' own GPT-2 forward on a StaticCache (`TransformersStep`), or the
# same arithmetic written out by hand over the same weights and compiled (`HandwrittenStep`).
# Four refinements follow: attention over the *filled* cache slots only, in one Triton kernel;
# our own Triton kernels for the thin matrix products, with the bias, GELU, residual add and
# layer norm folded in; the *fused* step (`FusedStep`), with fewer kernels: each layer norm folded
# into the product after it, the step's start and its end one kernel each; and
# `DeviceStopDecoder`, where the whole decode is one graph launch and the stop is decided on the
# GPU by a CUDA graph WHILE node ("moving conditional checks onto the GPU using conditional
# nodes", as the article puts what production code does). The registry's graph generators are
# listed in section 2.
#
# **What we measure:** at the article's batch and length (`BATCH_SIZE`, `MAX_SEQLEN`), all
# interleaved: the naive baseline, `model.generate()` (dynamic and static cache), the article's
# best recipe, the compiled handwritten and the Triton decoders for every K of `STEPS_PER_GRAPH` and
# the other graph decoders once each: at one K, or, for the WHILE node's decoder, with no K at all
# (section 2 lists which), each against the task's floor
# (notebook 12) from one bandwidth measurement made here; the GPU's idle share from a
# CUPTI timeline; where the time goes, kernel by kernel, before our kernels, with them and fused;
# and what stopping on the GPU saves when every row stops early.
#
# **Memory:** a graph decoder keeps its buffers, KV cache and graph pool for the next call. Section 6
# times several graph decoders interleaved (every K at each stop, and the WHILE node's), so it holds
# several graph pools at once; the decoders of the earlier sections are let go before it. Sections 3
# and 6 print what stayed allocated through their rounds: a card with less free memory needs fewer
# `STEPS_PER_GRAPH` or `STOP_AT`.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 8  # timed runs per variant, interleaved, after one warm-up (the article: 10; the rule needs 6 or more)
STEPS_PER_GRAPH = [1, 2, 4, 8, 16]  # K: decode steps per graph replay, one stop check per replay
WINDOW = [20, 100]  # profiled steps for the idle share and the kernel tables
STOP_AT = [10, 50]  # early stops: the EOS id is a token whose first appearance is at or after these steps
COPY_MB = 1024  # MiB (2²⁰ bytes) per copy when measuring the bandwidth of the floor (notebook 12 reads it)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import pandas as pd
import torch

import tokgen
from tokgen.display import (
    plot_dots,
    plot_speedup_vs_k,
    save_figure,
    say,
    show_source,
    speedup_text,
    spread,
    stop_token,
    table,
)

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
compiled = torch.compile(model, backend=COMPILE_BACKEND)
CUDA = DEVICE == "cuda"
say(f"B = {BATCH_SIZE} sequences of N = {MAX_SEQLEN} new tokens; K = {', '.join(map(str, STEPS_PER_GRAPH))}.")

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
say(tokgen.voice.decoder_text(MAX_SEQLEN, K, capacity, decoder.graph is not None, tokens.shape[1] - 1))

# %% [markdown]
# ### Attention over the filled slots only
#
# `handwritten_forward` attends with products and sums over *every* slot of the cache, masking
# the empty ones: a CUDA graph needs fixed shapes, so step i reads all the capacity's slots
# (printed above) although only i of them hold keys. A kernel can instead read the position from
# GPU memory and stop its loop there: the graph stays valid, and step i reads i slots.
# `attend_filled_slots` is that kernel, in Triton (an online softmax over blocks of filled slots,
# this token's own key and value first); it replaces several inductor kernels per layer by one.
# Same arithmetic, another summation order: the tokens must still be the naive ones (section 2
# checks).

# %%
show_source(tokgen.kernels.attend_filled_slots)

# %% [markdown]
# ### Our own kernels for the thin products
#
# With `BATCH_SIZE` rows, each of a layer's four products reads a whole weight matrix to compute
# that few rows of output. cuBLAS may run such a product in a few long-running blocks, or as a
# split-K kernel plus a reduction (section 5's tables name the kernels it picked; notebook 12
# times each product alone against the copy bandwidth).
# `tokgen.kernels` tiles the weight's rows thinly instead (narrow column tiles, every row of the
# batch in one block), splits the sum when the output is too narrow to give every SM a block, and
# folds what follows each product into the same kernels: the bias and GELU after the first MLP
# product; after each projection, the bias, the residual add and the *next* layer norm, one
# program per row. The block sizes are constants, picked by timing configurations on an H100 while
# the kernels were written (the comment above `tokgen.kernels.QKV`), not tuned again for the GPU
# this notebook runs on: on a GPU with another number of SMs, or less L2 or bandwidth, other block
# sizes and splits of the sum may suit better, so there these kernels may be slower than they could
# be, and slower against cuBLAS than on the card they were tuned on. The products run in TF32 like the
# model's own (`torch.set_float32_matmul_precision("high")`).

# %%
show_source(tokgen.kernels.linear_add_norm)

# %% [markdown]
# On Hopper and later (compute capability ≥ 9), each of these kernels is also launched with
# *programmatic dependent launch* (PDL; `tokgen.kernels.PDL`): the GPU may start a kernel's blocks
# while the kernel before it is still running. Each block waits in `griddepcontrol.wait` until the
# kernel before has finished and its writes are visible, and only then reads its inputs. The
# product kernel behind the function above (`_linear_kernel`) first starts its slice of the
# weights into L2 (no kernel writes the weights, so that is safe); the fused step's kernels below
# do not, they go straight to their wait. The launch gap between two kernels of the graph, and
# (for `_linear_kernel`) the first weight reads, can hide behind the kernel before (section 4
# measures the idle share; exercise 4 turns PDL off). One consequence for section 5: a kernel's
# measured duration includes its wait, so durations overlap. Elsewhere (compute capability below
# 9) no kernel gets PDL, neither step prefetches and kernels do not overlap; section 5's lines say
# which case this run was.

# %% [markdown]
# `triton_forward` is `handwritten_forward` on these kernels, with fewer kernels per layer than
# the compiled `handwritten_forward` (section 5 counts both). It runs eagerly: nothing is left for
# inductor to fuse, and without a compiler around it the attention kernel can store this token's
# keys and values in the cache itself (a compiled function that wrote into its input would copy
# the whole cache back). `TritonStep` is the step a decoder wraps. On a CPU the same functions run
# as plain torch, which is how the test suite checks that the reorganized forward is the same
# function.

# %%
show_source(tokgen.handwritten.triton_forward)

# %%
show_source(tokgen.TritonStep)

# %% [markdown]
# ### Fewer kernels: the fused step
#
# Section 4 measures how much the GPU idles with our kernels, and notebook 12 how close their
# products come to the copy bandwidth. One thing that may stall a small kernel is its own start
# and end: a dependent kernel cannot read its input before the kernel before it has finished, its
# blocks may then need time to get their loads going, and at the end the last blocks finish alone.
# GPT-2's matrices are small (notebook 12 lists them), so if such a ramp costs time, it could be a
# large part of a product's time, and it would recur at every kernel boundary. That is the
# hypothesis the fused step tests: it removes kernel boundaries (**fewer boundaries**, not faster
# arithmetic); section 3's table measures what the step saves, and section 5 counts the kernels.
# It does not isolate the boundaries: on Hopper and later (compute capability ≥ 9) its product
# kernels also skip the L2 prefetch of the weights that the unfused `_linear_kernel` issues before
# its wait under PDL, so fused against unfused changes both at once; elsewhere no kernel gets PDL
# and neither step prefetches.
#
# `FusedStep` has fewer kernels per step than `TritonStep` (section 5 counts both):
#
# * each layer norm is folded into the product after it (`tokgen.kernels.fold_norm`): the weight
#   scaled by the norm's gamma, its row sums, and W @ beta + bias give
#   `rstd * (x @ W'ᵀ - mean * c) + d`, so the QKV product, the MLP's first product and the LM head
#   normalize on the fly, with the mean and rstd read from row sums that the kernel that wrote the
#   residual stream left beside it (summed inside the product's loop, they would be summed again by
#   every column block of every product that reads the row);
# * the two projections add bias and residual into the residual stream in place; their split sums
#   are added up, in a fixed order, by the last block of each column block to finish (a ticket
#   counter with acquire-release semantics), so no separate kernel adds them;
# * one kernel starts a step (the token's embedding plus its position's) and one ends it: the LM
#   head writes each block's best token per row, and `finish_step` picks each row's next token and
#   does the bookkeeping of `GraphDecoder.take` (six torch kernels, and an argmax over the logits).

# %%
show_source(tokgen.FusedStep)

# %%
show_source(tokgen.kernels.fold_norm)

# %% [markdown]
# The registry's graph generators do exactly this, and keep each decoder for the next call
# with the same sizes: building one (compilation, warm-up, capture) is setup, like
# `torch.compile`, paid by the first call (section 2 times it).

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
# launches one graph and waits once, to read how many steps ran. The stream capture of torch 2.11
# (the version this notebook was written with) adds no WHILE node from Python code, so
# `capture_while` adds one through cuda-python (`cuda.bindings`), as NVIDIA NeMo's label-looping
# decoders do, and compiles `keep_decoding` with NVRTC.

# %%
show_source(tokgen.DeviceStopDecoder)

# %%
show_source(tokgen.graphs.capture_while)

# %%
print(tokgen.graphs.KEEP_DECODING)

# %% [markdown]
# ## 2. Correct before fast
#
# Every graph generator must return the naive generator's tokens, for every K (the test suite
# also checks early stops). `model.generate()` pads rows that finished early rather than
# continuing them, so it is held to the naive output only here, where no row stops. The cell
# below names the registry's graph generators and the K each runs at here.


# %%
def variant(generator, m=model, **options):
    """A timed variant of B = BATCH_SIZE, N = MAX_SEQLEN, named by tokgen.label."""
    if generator in tokgen.COMPILES_ITSELF:
        options["compile_backend"] = COMPILE_BACKEND
    return tokgen.generator_variant(generator, m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, compiled=m is compiled,
                                    **options)  # fmt: skip


swept = {"graph_handwritten_compiled": STEPS_PER_GRAPH, "graph_triton_kernels": STEPS_PER_GRAPH}
at_one = [("graph_transformers", model), ("graph_transformers", compiled), ("graph_handwritten", model)]
others = [g for g in tokgen.GENERATORS if g.startswith("graph_") and g not in {*swept, *dict(at_one)}]
variants = [variant("naive"), variant("generate() dynamic"), variant("generate() static")]
variants += [variant("pipelined_static", compiled), *[variant(g, m, steps_per_graph=1) for g, m in at_one]]
variants += [variant(g, steps_per_graph=k) for g, ks in swept.items() for k in ks]
variants += [variant(g, steps_per_graph=4) for g in others if g not in tokgen.LOOPS_ON_DEVICE]
variants += [variant(g) for g in others if g in tokgen.LOOPS_ON_DEVICE and CUDA]  # WHILE node: K does not apply
at_k = {g: "K = " + ", ".join(map(str, STEPS_PER_GRAPH)) for g in swept} | {g: "K = 1" for g, _ in at_one}
at_k |= {g: "no K (WHILE node)" + ("" if CUDA else ", not run on the CPU") if g in tokgen.LOOPS_ON_DEVICE else "K = 4"
         for g in others}  # fmt: skip
say("The registry's graph generators, timed at: " + "; ".join(f"`{g}` {k}" for g, k in at_k.items()) + ".")

# %% [markdown]
# Each variant's first call builds what it needs (a compiled step, a captured graph, a cache)
# and is timed here. The time goes into the variant's row of `data/10_cuda_graphs.csv` as
# `build_ms`, and section 3 shows it from there ("first call (builds)"), beside the file's
# `first_call_ms`, which is the measurement's warm-up call: here each variant's second call.
# The K variants of one step can share its compiled code (every K that divides 16 gives the
# same capacity, section 1); a first call that compiles can take far longer than one that
# reuses compiled code, which is how the column tells which variants compiled. Compiled code can
# also come from torch.compile's on-disk caches (inductor's and Triton's), which notebooks run
# earlier on this machine may have filled: a short first call can be such a load, so the column
# tells what compiled here, not what compiling costs (notebook 05 times that, from empty
# caches). Just before each first call, what the variants before it keep is measured with the
# allocator's cached blocks released (section 6 reads those amounts), so the first call also
# allocates its memory afresh, inside its time, as every timed call of section 3 does. Naive's first
# call was section 1's reference generation, not timed, so its row is
# left out of the first table of section 3, and its cell in the ranked table is empty. A variant
# whose first call fails (out of memory on a small card, cuda-python missing, a WHILE node this
# GPU or driver cannot run, a compiler's error) is left out of the rest, with a line under the cell
# that says why; its row in `data/10_cuda_graphs.csv` records it as failed ("oom" or "error",
# with the error), as section 3 records a variant that fails in its rounds. An error after which
# the GPU cannot run anything more (an illegal memory access, a device-side assert) stops the notebook.

# %%
# recorded with each variant's row in section 3, and shown from there; a variant whose first call runs out of
# memory or raises (no cuda-python, no WHILE node, a compiler's error) is dropped here, with a line that names it
# and the error, and its row (`failed`: status "oom" or "error") is recorded in section 3 (review rr22b S4)
kept, built, failed = tokgen.bench.first_calls(variants[1:], DEVICE, reference, report=say)
variants = [variants[0], *kept]
assert all(built[v.name]["same_tokens"] for v in kept if v.info["generator"] in tokgen.GENERATORS), built

# %% [markdown]
# ## 3. Measure
#
# `torch.compile(mode="reduce-overhead")` also uses CUDA graphs (cudagraph trees). It needs the
# same tensors at the same addresses every call, which our generators' fresh `StaticCache` per
# call does not give; `generate(cache_implementation="static")` is the case where it works:
# transformers compiles the decode step that way and reuses its cache across calls.

# %%
rec = tokgen.Recorder("10_cuda_graphs", RESULTS_DIR, params=PARAMS)
first = lambda row: built.get(row["variant"], dict.fromkeys(tokgen.bench.FIRST_CALL_COLUMNS))  # naive: none
results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=lambda row: rec.write({**row, **first(row)}))
for row in failed:  # dropped in section 2: recorded as failed, as compare records its own failures
    rec.write(row)
ok = results[results["status"] == "ok"].copy()
bad = pd.DataFrame([*failed, *results[results["status"] != "ok"].to_dict("records")])  # section 2's, then these
if len(bad):
    say(table(bad[["variant", "status", "error"]]))
recorded = rec.read()
checks = recorded[recorded["variant"].isin([v.name for v in kept])]  # naive's first call not timed; failed: above
headers = {"same_tokens": "same tokens as naive", "build_ms": "first call (builds), ms",
           "first_call_ms": "warm-up (second call), ms", "resident_gb": "kept after it, GB allocated",
           "resident_reserved_gb": "GB reserved"}  # fmt: skip  (what the first call left behind: section 6 reads it)
say(table(checks.rename(columns=headers), ["variant", *headers.values()],
          digits={"kept after it, GB allocated": 3, "GB reserved": 3}))  # fmt: skip  (others: 1)
say(tokgen.memory.resident_text(recorded, "section 3's rounds"))  # from the rows' peaks (review rv20B S5)

# %% [markdown]
# The task's floor (notebook 12): every weight and the filled part of the KV cache read once per
# decode step and its new K/V entries written, at the copy bandwidth measured now on this card.
# The measurement is recorded in
# `data/10_bandwidth.csv` with the card's id, and notebook 12 sets this notebook's timings against
# the bandwidth recorded on the card that timed them: one floor per card, whichever card notebook
# 12 runs on (where it finds none for that card, it says so under its table).

# %%
if CUDA:
    bandwidth = tokgen.bandwidth.copy_bandwidth(DEVICE, COPY_MB)  # GB/s, the median of 20 copies
    floor_ms = tokgen.bandwidth.floor_ms(model, BATCH_SIZE, MAX_SEQLEN, bandwidth)
    row = {"copy_mb": COPY_MB, "runs": 20, "bandwidth_gb_s": bandwidth, "task_floor_ms": floor_ms}
    tokgen.Recorder("10_bandwidth", RESULTS_DIR, params=PARAMS).write(row)
    say(tokgen.display.copy_floor_text(bandwidth, COPY_MB, 20, floor_ms))
else:
    floor_ms = float("nan")
    say("*On the CPU: no floor (it needs the GPU's bandwidth).*")

# %% [markdown]
# Variants are ranked round by round against the naive generator (`tokgen.voice.ranking`). A
# variant beats another, or is shown faster than it, where the rounds show it really faster and do
# not also show the difference to lie within ±5%. Its rank = 1 + the number of variants shown faster
# than it, directly or through one shown faster (A beats B and B beats C: both count against C);
# pairs shown within ±5% of each other share the better rank, one such pair after another, unless
# that puts one beside or above a variant shown faster than it. So only a cycle of wins (A beats B,
# B beats C, C beats A) puts variants that beat each other in one rank, and the text says so where
# one occurs. Two the rounds leave
# undecided may still differ in rank when a third beats only one of them. Speed-ups are paired (the
# median over rounds of the base's time over the variant's, > 1: faster; notebook 00); "× task
# floor" is the median time over the floor; "GB/s" the bytes the generator must move (its own
# floor's, notebook 12) over its median time: a rate beside the time, not a ranking, and of bytes
# only: a generator whose own floor is its arithmetic (notebook 12's `bound_by`; naive, which
# recomputes the whole sequence every step, can be one) is not held back by its bytes. What counts
# against a variant is what the rounds show about a difference, not its size: a real difference that
# the rounds do not also show to lie within ±5% counts, while a difference shown to lie within ±5% (no
# effect) or still undecided does not. So a smaller difference can part two ranks where a larger one,
# shown to lie inside the band, leaves two variants tied. In the figure after the table, "1=" marks a
# rank that several variants share.
#
# A worked example (made-up variants and values, for illustration only, not from this run):
#
# * A and B: the rounds show B really slower than A, by a few percent, and also show the
#   difference to lie within ±5%. B is slower, but nothing beats it beyond the band, so nothing
#   counts against it: B has rank 1, like A, and both read "1 (shared)".
# * C and D: A and B each beat both of them beyond the band, and the rounds do not tell C and D
#   apart. Each is beaten by two variants, so each has rank 1 + 2 = 3, shared. No variant has
#   rank 2: a rank counts the variants that beat it, and none is beaten by exactly one.
# * E: A, B, C and D all beat it beyond the band: rank 5, and rank 4 is skipped. Had only C, not
#   D, beaten E beyond the band (D against E undecided), E would have rank 4.
# * F: only E beats it beyond the band, the rounds leave A, B, C and D undecided against F. They
#   beat E, so they count against F through E: rank 1 + 5 = 6.
# * G: the rounds show G within ±5% of A, and C beats G beyond the band. Sharing A's rank 1 would
#   put G above C, so G keeps its count: C, and through C, A and B, that is rank 4.

# %%
ok["ms, median (IQR)"] = ok.apply(spread, axis=1, unit="")
ok["first call (builds), ms"] = ok["variant"].map(recorded.set_index("variant")["build_ms"])
ok["× task floor"] = ok["median_ms"] / floor_ms
if CUDA:  # the bytes each generator must move (its own floor's, `floor_table`) over its median time
    ok["GB/s"] = ok["variant"].map(tokgen.bandwidth.floor_table(ok, model, bandwidth).set_index("variant")["rate_gb_s"])
bases = [b for b in ("naive", "generate() static") if tokgen.label(b) in set(ok["variant"])]
ranked = tokgen.display.ranking(ok, tokgen.label(bases[0]))
ok = ok.set_index("variant").loc[ranked["variant"]].reset_index().assign(
    rank=ranked.apply(tokgen.display.rank_text, axis=1).to_numpy(),
    rank_label=ranked.apply(tokgen.display.rank_label, axis=1).to_numpy())  # the figure's: "1=" a shared rank
for base in bases:
    paired = {v: tokgen.gain(ok, tokgen.label(base), v) for v in ok["variant"]}
    ok[f"vs {base}"] = ok["variant"].map(lambda v, p=paired: tokgen.display.speedup_cell(p[v]))  # itself: "—"
columns = ["rank", "variant", "ms, median (IQR)", *(["GB/s"] if CUDA else []), "first call (builds), ms",
           *(["× task floor"] if CUDA else [])]  # fmt: skip
say(table(ok, columns + [f"vs {b}" for b in bases], digits={"GB/s": 0, "first call (builds), ms": 0,
                                                            "× task floor": 2}))  # fmt: skip
say(tokgen.voice.host_probe_text(ok))  # the host's speed before and after these rounds (review rvC16 S1)
if CUDA:  # notebook 07's run of naive and the recipe on this card at this commit, beside this one (review rv23C S1)
    try:  # its whole table: the sentence says which of sizes, card, commit, slice leaves no row (review rr23c N2)
        seven = tokgen.load("07_pipelining", RESULTS_DIR)
    except tokgen.MissingRows:  # notebook 07 not run here: the sentence says it has no table
        seven = None
    timed_here = recorded[recorded["status"] == "ok"]  # as recorded: with the card's id and the commit
    recipe = ["naive", tokgen.label("pipelined_static", compiled=True)]
    say(tokgen.voice.same_card_runs_text(timed_here, seven, recipe))

# %%
fig, axes = plt.subplots(1, 2, figsize=(14, 0.3 * len(ok) + 1.5), gridspec_kw={"width_ratios": [1.3, 1]})
plot_dots(ok, "rank_label", "median_ms", low="q25_ms", high="q75_ms", log=True,
          xlabel="ms per generation (median, IQR; log), in rank order (1=: a shared rank)", ax=axes[0])  # fmt: skip
if floor_ms == floor_ms:  # the task's floor, at the measured copy rate
    axes[0].axvline(floor_ms, color="grey", ls="--", label="the task's floor")
    axes[0].legend(loc="upper right", fontsize=8)  # the slowest rows, at the bottom right, stay visible
axes[0].set_title(f"B={BATCH_SIZE}, N={MAX_SEQLEN}")
plot_speedup_vs_k(axes[1], ok)  # each K against K = 1, round by round, with its interval
save_figure(fig, "10_cuda_graphs", RESULTS_DIR)

# %%
ours = ok[ok["generator"].isin(list(tokgen.GENERATORS))]  # the registry's generators, in the table's rank order
fastest_text = tokgen.display.fastest_sentence(ranked, "registry generator", only=ours["variant"])  # table's ranks
floor_text = " " + tokgen.display.first_rank_floors(  # each of the best rank with its own time and floor distance
    ranked[ranked["variant"].isin(ours["variant"])], ours.rename(columns={"× task floor": "times_task_floor"})
    .set_index("variant"))  # fmt: skip
say(fastest_text + floor_text)

# %% [markdown]
# A replay always runs its K steps: when K does not divide N, the last replay computes steps
# nobody asked for, trimmed afterwards. A larger K launches and checks the flag less often (the
# host's time per K is not measured here) but computes those extra steps; whether that pays, the
# right panel measures: each K against K = 1 round by round (each bar is the 95% interval; the ±5%
# call reads the narrower 90% equivalence interval, so a bar may reach past the grey band while the
# difference is still shown within ±5%). The lines below give the steps each K computes and the
# GPU's busy time per K.

# %%
say(tokgen.voice.steps_past_n_text(ok))  # the Ks and N of the timed rows
if CUDA:  # the GPU time the extra steps take, one profiled generation per variant (section 3's)
    for line in tokgen.display.busy_by_k(ok):
        say(line)

# %% [markdown]
# ## 4. Is the GPU ever idle?
#
# The CUPTI timeline of one generation (steps in `WINDOW`) for the registry generator that stops
# on the host listed first in section 3's table; the fused step (`graph_triton_fused`), and the
# compiled handwritten step (before our kernels) and our kernels (`graph_triton_kernels`) at the
# fused step's K where that K shares their best rank, so the steps are compared at one K (else
# their K listed first in section 3's table; the lines under the next cell say which K, and which
# other Ks share its rank); and the article's
# best recipe: the share of the window in which no kernel ran, and the GPU's busy time and kernels
# per decode step. (`graph_stop_on_device` is not profiled: while tokgen was written, CUPTI showed
# the kernels of a WHILE node's body once, not once per iteration; no output here
# measures that.) Decode steps are counted from the `on_step`
# calls inside the window (one call per replay of K steps). **Where a column name says "token",
# read "decode step"**: one step generates one token for each of the `BATCH_SIZE` rows, and the
# weights are read once per step, not once per token.

# %%
by_name = {v.name: v for v in variants}
on_host = ours[~ours["generator"].isin(list(tokgen.LOOPS_ON_DEVICE))]
after = on_host.iloc[0]["variant"]
stages = tokgen.display.profiled_ks(ranked, ok, ("graph_handwritten_compiled", "graph_triton_kernels",
                                                 "graph_triton_fused"), anchor="graph_triton_fused")  # fmt: skip
before, unfused, fused = stages.values()  # None: not measured (failed); the fused step's K where it ranks best
for chosen in filter(None, stages.values()):  # the profiled K, and the Ks its rank does not part it from
    say(tokgen.display.profiled_k_text(ranked, ok, chosen, same_k_as=fused))
idle_rec, profiled = tokgen.Recorder("10_cuda_graphs_idle", RESULTS_DIR, params=PARAMS), {}
profile = [after, *filter(None, stages.values()), tokgen.label("pipelined_static", compiled=True)]
for name in [n for n in dict.fromkeys(profile) if n in set(ok["variant"])]:  # dropped or failed: not profiled
    k = by_name[name].info.get("steps_per_graph", 1)
    timeline, tokens = tokgen.profiling.profile_decode(by_name[name].run, start=WINDOW[0], stop=WINDOW[1],
                                                       steps_per_call=k)  # fmt: skip
    profiled[name] = (timeline, tokens)
    kinds, spans = tokgen.profiling.kernel_table(timeline, tokens), timeline.kernels
    summary = tokgen.profiling.replay_summary(timeline.summary(skip=1))  # busy time and kernels per replay of K
    idle_rec.write({"variant": name, "tokens_per_copy": k, "tokens": tokens, **summary,
                    "gpu_busy_per_token": kinds["own_us_per_token"].sum(),
                    "kernels_per_token": kinds["kernels_per_token"].sum(),
                    "window_us_per_token": (spans["end"].max() - spans["start"].min()) / tokens})  # fmt: skip
idle = tokgen.profiling.replay_columns(idle_rec.read())

# %% [markdown]
# "GPU idle fraction": the share of the window (after its first copy) in which no kernel ran;
# "GPU busy per decode step": µs in which at least one kernel ran, per decode step, over the same
# window as section 5's tables. (The file also records the busy time and the kernels per graph
# replay of K decode steps, `gpu_busy_per_replay_us` and `kernels_per_replay`.) With PDL (our
# kernels, on compute capability 9 or later) a kernel launched early counts its wait for the one
# before as running, so a PDL decoder's idle share is
# a lower bound on the time no kernel did work, not comparable with that of a decoder whose
# kernels have no PDL (cuBLAS, inductor); the takeaways name the decoders whose kernels overlapped.
# The profiler adds host work to every launch (how much, no
# notebook measures), so a generator whose host launches every kernel,
# `compiled pipelined_static`, can run slower under it, and its idle share here can be larger
# than without the profiler; a graph replay's kernels are queued by one launch, so the graph
# decoders' shares are less exposed to that cost (notebook 12 gives how much slower or faster a
# profiled generation of one of them ran: the profiler's effect and one generation's variation
# together).

# %%
if CUDA:
    columns = ["variant", "tokens_per_copy", "tokens", "gpu_idle_fraction", "gpu_busy_per_token", "kernels_per_token"]
    say(table(tokgen.display.step_headers(idle[columns]), digits=3))  # per decode step, not per token
else:
    say("*On the CPU: no GPU timeline.*")

# %% [markdown]
# ## 5. Where the time goes, kernel by kernel
#
# GPU time per decode step (one token for each of the batch's sequences), grouped by what the kernel does
# (`tokgen.profiling.kernel_kind`), before our kernels, with them, and fused, from the windows
# profiled in section 4. Two times per row:
# "µs per decode step" adds up the kernels' durations; "own µs per decode step" gives each kernel only its
# time after every kernel that started before it had ended, so the rows add up to the GPU's busy
# time. With PDL the two differ: a kernel launched early counts its wait for the one before in
# its duration. The own times are computed by `tokgen.profiling.own_times`
# ([`tokgen/profiling.py`](../src/tokgen/profiling.py)): the kernels sorted by start, each
# credited only with the part of its interval that no earlier kernel covers.

# %%
kernel_rec = tokgen.Recorder("10_kernels", RESULTS_DIR, params=PARAMS)
name_rec = tokgen.Recorder("10_kernel_names", RESULTS_DIR, params=PARAMS)  # the 8 names with most own time
for generator, name in stages.items() if CUDA else ():
    if name is None:
        say(f"*`{generator}` has no successful timing in this run (section 3): no kernel table for it.*")
        continue
    timeline, tokens = profiled[name]
    for r in tokgen.profiling.kernel_table(timeline, tokens).to_dict("records"):
        kernel_rec.write({"variant": name, "generator": generator, "tokens": tokens, **r})
    for r in tokgen.profiling.kernel_table(timeline, tokens, by="name", top=8).to_dict("records"):
        name_rec.write({"variant": name, "generator": generator, "tokens": tokens, **r})
if CUDA and any(stages.values()):  # both tables as recorded
    names = name_rec.read()
    for name, rows in kernel_rec.read().groupby("variant", sort=False):
        say(f"**{name}**, {rows['tokens'].iloc[0]} decode steps in the window")
        per_step = ["kernels_per_token", "us_per_token", "own_us_per_token", "share"]  # per decode step
        say(table(tokgen.display.step_headers(rows[["kind", *per_step]]), digits=3))
        top = names[names["variant"] == name]
        say(table(tokgen.display.step_headers(top[["name", *per_step]]), digits=3))
if not CUDA:
    say("*Skipped on the CPU: no GPU kernels.*")

# %%
if CUDA and any(stages.values()):
    kernels, layers = kernel_rec.read(), model.config.n_layer
    windows = idle.set_index("variant")["window_us_per_token"]  # µs per step, first kernel to last (section 4)
    for name, rows in kernels.groupby("variant", sort=False):
        say(tokgen.display.kernel_count_text(name, rows, layers, windows[name]))

# %% [markdown]
# One layer of one step, kernel by kernel, with our kernels before and after fusing them
# (`graph_triton_kernels` and `graph_triton_fused`, each at the K profiled in section 4; one
# sample: the first step of the profiled window's middle replay): each bar is a kernel
# from its launch to its end (with PDL a kernel is launched while the one before still runs, and
# waits), on the same µs axis; consecutive kernels alternate between the lower and the upper half
# of their row, so two that overlap are both visible.

# %%
if CUDA and unfused and fused:
    fig, ax = plt.subplots(figsize=(12, 2.6))
    layers = {name: profiled[name][0] for name in (unfused, fused)}
    tokgen.display.plot_one_layer(ax, layers, layer=model.config.n_layer // 2)
    save_figure(fig, "10_one_layer", RESULTS_DIR)
elif CUDA:
    missing = " and ".join(f"`{g}`" for g in ("graph_triton_kernels", "graph_triton_fused") if stages[g] is None)
    say(f"*No before/after figure: no successful timing of {missing} in this run.*")
else:
    say("*Skipped on the CPU: no GPU kernels.*")

# %% [markdown]
# ## 6. Stopping on the GPU: when every row stops early
#
# Above, no row stops, and every decoder runs all N steps: there the WHILE node makes no
# per-replay launch or host wait, and adds a condition kernel (`keep_decoding`) and a loop
# iteration per step (exercise 2 times what one more step costs with the node and with the K = 1
# decoder; section 3 sets the node beside the fused step at K = 4 over whole generations, and solution 10,
# exercise 2, beside K = 1). Here the EOS id is, for each
# entry of `STOP_AT`, the first token of the reference whose first appearance is at or after that step (all rows start
# from the same BOS, so they decode the same sequence and stop together), and the K-step replays
# of the same step pay for the steps they run past the stop. Interleaved as before, after section 4's profiled
# windows in this process: tokgen asks PyTorch to tear CUPTI down after each profile
# (`TEARDOWN_CUPTI=1`, notebook 06) and waits for that teardown after each profiling session, so
# that these rounds should run without a profiler set up; whether they do is not measured here.
# Every decoder here launches a graph per replay rather than kernel by kernel.
#
# The decoders built so far (sections 1 to 5) are let go first, with their caches and graph pools
# (`tokgen.graphs.forget_decoders`); this section's own decoders, every K at every stop, stay
# allocated together through its interleaved rounds, and the line under its table says how much that is,
# and what each decoder kept, measured as it was built, the largest first: on a smaller card, choose
# `STEPS_PER_GRAPH` and `STOP_AT` by those sizes.

# %%
for m in (model, compiled):  # the registry's decoders of sections 2 to 5: section 5 profiled the last of them
    tokgen.graphs.forget_decoders(m)
del decoder, step  # section 1's, built by hand (the next rounds' reset_memory frees what these held)

# %%
device_step = {k: v for k, v in tokgen.GENERATORS["graph_stop_on_device"].keywords.items() if k != "stop_on_device"}
k_step = next(g for g, f in tokgen.GENERATORS.items() if getattr(f, "keywords", None) == device_step)
stops = {}  # steps run -> the EOS id that stops every row there
for stop_at in STOP_AT:
    eos, steps = stop_token(reference[0], min(stop_at, MAX_SEQLEN))
    stops.setdefault(steps, eos)

# %%
dropped = {r.get("generator") for r in failed}  # what section 2 left out: not built again here (it would fail)
k_failed = k_step in dropped  # without the K-step decoders, nothing to build or compare in this section
if k_failed:
    say(f"*`{k_step}` is left out of this section: its first call failed in section 2, so this section (the WHILE "
        "node included) does not run.*")  # fmt: skip  (nothing to set the WHILE node against: rr22d N3)
on_device = CUDA and not k_failed and "graph_stop_on_device" not in dropped  # section 2 kept the WHILE node
if CUDA and "graph_stop_on_device" in dropped:
    say("*`graph_stop_on_device` is left out of this section: its first call failed in section 2.*")
stop_rec, stop_variants, stop_kept = tokgen.Recorder("10_device_stop", RESULTS_DIR, params=PARAMS), [], {}
for steps, eos in {} if k_failed else stops.items():
    ref = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, eos_token_id=eos)
    chosen = [variant(k_step, steps_per_graph=k, eos_token_id=eos) for k in STEPS_PER_GRAPH]
    chosen += [variant("graph_stop_on_device", eos_token_id=eos)] if on_device else []
    chosen = [tokgen.Variant(f"{v.name}, {steps} steps", v.run, v.info | {"steps_run": steps}) for v in chosen]
    stop_built = tokgen.bench.first_calls(chosen, DEVICE, ref, catch=())[1]  # built here: what each keeps, measured
    assert all(b["same_tokens"] for b in stop_built.values()), stop_built  # the naive tokens, early stop included
    stop_variants, stop_kept = stop_variants + chosen, stop_kept | stop_built
if stop_variants:  # none where section 2 dropped the K-step decoders' generator: no rows to read
    stop_memory = lambda row: {k: stop_kept[row["variant"]][k] for k in ("resident_gb", "resident_reserved_gb")}
    stopped = tokgen.compare(stop_variants, rounds=RUNS, device=DEVICE, gpu_busy=False,
                             record=lambda row: stop_rec.write(row | stop_memory(row)))  # fmt: skip
    say(tokgen.voice.device_stop_text(stop_rec.read(), k_step))  # the Ks, stops and EOS ids as recorded
    say(table(stopped, ["variant", "steps", "median_ms", "q25_ms", "q75_ms"], digits=2))
    say(tokgen.voice.host_probe_text(stop_rec.read()))  # the host's speed before and after (review rv23C S2)
    say(tokgen.memory.resident_text(stop_rec.read(), "this section's rounds"))  # the rows' peaks; the largest ones

# %% [markdown]
# The WHILE node's speed-up over each K-step decoder at the same stop (notebook 00's signed-rank
# rule decides "faster" or "slower"), and the host-device syncs of one generation of N steps
# without a stop (counted as in notebook 11).

# %%
while_node = pd.DataFrame()
if on_device:  # without the WHILE node or the K-step decoders (section 2 dropped one), nothing to set against
    node = stopped[stopped["generator"] == "graph_stop_on_device"].set_index("steps")["variant"]
    replays = stopped[stopped["generator"] != "graph_stop_on_device"]
    gains = [{"steps run": r.steps, **tokgen.gain(stopped, r.variant, node[r.steps])} for r in replays.itertuples()]
    while_node = pd.DataFrame(gains).rename(columns={"vs": "WHILE node against"})
    while_node["speed-up of the WHILE node"] = [  # a row neither beyond nor inside ±5% says so (the summary's count)
        tokgen.voice.band_speedup_text(g) for g in while_node.to_dict("records")
    ]
    say(table(while_node, ["steps run", "WHILE node against", "speed-up of the WHILE node"]))
    audited = [variant(k_step, steps_per_graph=max(STEPS_PER_GRAPH)), variant("graph_stop_on_device")]
    sync_rec = tokgen.Recorder("10_sync_counts", RESULTS_DIR, params=PARAMS)  # the counts, read back from data/
    for v in audited:
        v.run()  # built (or rebuilt after forget_decoders) before counting, as in tests/test_gpu.py
        sync_rec.write({"variant": v.name, **tokgen.count_syncs(v.run)})
    audit = sync_rec.read()
    say(table(tokgen.display.host_waits(audit), digits=0))  # each wait once; an `.item()` is one of them
    say(tokgen.display.waits_text(audit, MAX_SEQLEN))

# %% [markdown]
# Notebook 12 sets these times against what the memory bandwidth allows: reading all of GPT-2
# small's fp32 weights and the filled part of the KV cache once per decode step, and writing its new
# K/V entries (the task's floor
# of section 3), at the measured copy rate (bytes read + written), is a floor at that rate, not a
# hard bound: a stream that only reads could run faster than a copy, and no read-only bandwidth is
# measured here (notebook 12, section 7, times one read-only stream).
#
# ## Takeaways, read from this run

# %%
say("* " + fastest_text + floor_text)
sweeps = {g: r for g, r in ok[ok["steps_per_graph"].notna()].groupby("generator") if r["steps_per_graph"].nunique() > 1}
for generator, runs in sweeps.items():  # each generator's K against its K = 1, round by round
    k1 = runs[runs["steps_per_graph"] == runs["steps_per_graph"].min()]["variant"].iloc[0]
    by_k = tokgen.display.ranking(ok, k1, list(runs["variant"]))
    say(tokgen.voice.k_sweep_text(generator, by_k, runs.set_index("variant")["steps_per_graph"].to_dict()))

# %%
if CUDA:
    share = idle.set_index("variant")["gpu_idle_fraction"]
    host = tokgen.label("pipelined_static", compiled=True)  # launches every kernel from Python: may be slowed
    # by the profiler
    unprofiled = ok.set_index("variant")["gpu_busy_share"].get(host, float("nan"))  # section 3's rounds
    say(tokgen.display.idle_share_text(share, host, unprofiled, kernels if any(stages.values()) else None))
if CUDA and unfused and fused:
    say(tokgen.display.fusing_count_text(kernels, unfused, fused, results=ok))  # kinds under 0.5 µs (0 when
    # rounded) left out; then the fused step against the unfused one at the same K, round by round
for steps, group in while_node.groupby("steps run") if len(while_node) else ():
    say(tokgen.display.while_node_text(steps, group.to_dict("records")))  # outcomes; the intervals are in the table
filled, all_slots = (tokgen.label(g, k=4) for g in ("graph_filled_attention", "graph_handwritten_compiled"))
if {filled, all_slots} <= set(ok["variant"]):  # the summary's attention over the filled slots, round by round
    say(f"`{filled}` against `{all_slots}` (attention over the filled slots against over every slot): "
        f"{speedup_text(tokgen.gain(ok, all_slots, filled))}.")  # fmt: skip

# %% [markdown]
# ## Summary
#
# * One graph replay per K steps replaces the Python-level launches of every step; with the stop
#   flag read one replay late, the host does not wait for the replay it has just queued before
#   queuing the next one (it waits for the one before).
# * The returned tokens are the naive generator's for every K: the steps generated past the
#   stop are trimmed.
# * A replay computes all of its K steps, so when N is not a multiple of K it computes steps past
#   N: section 3 gives the GPU's busy time per K, and its right panel each K against K = 1,
#   round by round.
# * Attention over the filled slots only (one Triton kernel that reads the position on the GPU)
#   keeps the graph valid and cuts the attention's reads to what is filled (the takeaways give
#   `graph_filled_attention` against the compiled handwritten step at the same K).
# * Our own kernels for the thin products, with the bias, GELU, residual add and layer norm
#   folded in, replace cuBLAS's product kernels and inductor's fused ones: section 5 puts the
#   kernel tables side by side, section 3 the distance to the floor.
# * The fused step folds each layer norm into the product after it and makes the step's start and
#   end one kernel each: fewer kernel boundaries per step (section 5 counts the kernels, and the
#   takeaways give the change).
# * On Hopper and later (compute capability ≥ 9), programmatic dependent launch lets each of our
#   kernels start while the one before still runs, and the unfused product kernel
#   (`_linear_kernel`) also prefetches its weights into L2 before its wait, the fused step's
#   kernels do not; elsewhere no kernel gets PDL, neither step prefetches and kernels do not
#   overlap. Section 5 shows whether kernels' durations overlap in this run, and exercise 4
#   measures what PDL buys by turning it off (on Hopper and later).
# * What still stands between us and the floor is in section 5's table of the fused step: the
#   products themselves (how close they come to the copy bandwidth with only `BATCH_SIZE` rows to
#   share a weight read: notebook 12), and the kernels that are not products (the takeaways list
#   them).
# * A CUDA graph WHILE node moves the stop check onto the GPU: one launch and one host sync per
#   generation, and no step past the stop. Without a stop it makes no per-replay launch or host
#   wait, and adds a condition kernel and a loop iteration per step (exercise 2 times what one
#   more step costs in each; section 3 sets the node beside the fused step at K = 4 over whole
#   generations, and solution 10, exercise 2, beside K = 1); with early stops
#   it also runs no wasted steps (section 6).
#
# ## Exercises
#
# 1. Capture `graph_transformers` with the compiled model for K = 4. How does it compare with
#    `graph_handwritten_compiled K=4`?
# 2. The WHILE node runs `keep_decoding`, a one-thread kernel, after every step, and CUPTI showed
#    its body only once while tokgen was written (section 4 skips it). Time
#    `graph_stop_on_device` and the K = 1 decoder of the same step at two lengths N, without an
#    early stop: what does one more step cost in each, and what is the per-step difference between
#    the two, round by round?
# 3. In a copy of `handwritten_forward`, compute the attention with `q @ keys[layer].transpose(-1, -2)`
#    and `w @ values[layer]` instead of products and sums, or use the projection matrices in
#    GPT-2's own (in, out) layout. Which kernels of section 5 change, and by how much?
# 4. On Hopper and later (elsewhere PDL is never used), set `tokgen.kernels.PDL = False`, build a
#    fresh `graph_triton_kernels` decoder (a new `GraphDecoder(tokgen.TritonStep(...))`, since a
#    captured graph keeps its launches) and measure its idle share and time as in sections 3 and 4.
#    What did PDL buy?
#
# Worked solutions: [`solutions/10_cuda_graphs.ipynb`](../solutions/10_cuda_graphs.ipynb).
