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
# # 12 · Speed of light: how far from the memory bandwidth?
#
# One decode step (one new token for every sequence of the batch) with a KV cache reads every
# weight of the model once, whatever the batch size: for GPT-2 small in fp32 at the article's
# batch, reading those bytes takes longer than the step's arithmetic needs at the GPU's measured
# matrix-product rate (exercise 1 compares the two). So the GPU's memory bandwidth sets a floor under every
# cached generator: bytes that must move per generation, divided by bytes per second. We take the
# bytes per second of a device-to-device copy (bytes read + written), so the floor holds at that
# rate; it is not a hard bound: a kernel that only reads may stream faster or slower than a copy
# (section 7's `stream` rows time one, at two tile sizes, against this floor).
#
# **You will learn:** how to compute the bandwidth floor of a generation, how far each
# generator is from it, and how far a layer's thin matrix products, timed alone, come from the
# time their weights take to read (and what more rows or a split sum change).
#
# **What this step adds:** the floor, from the model's size and the bandwidth measured on this
# GPU, and every generator's distance from it.
#
# **What we measure:** the device-to-device copy bandwidth (bytes read + written) of this card
# (notebook 10's record where notebook 10 ran on this card; section 1 says which card's bandwidth
# each floor uses); then, from the timings of
# notebooks 07 and 10 at the same batch and length, each generator's time against its floor; for
# the generator notebook 10 profiled kernel by kernel, the matrix products' time against the
# weights' floor; each of GPT-2's matrix products timed alone, against the time its weight
# takes to read; and, for notebook 10's fused decoder, the gap from its floor to its measured time split
# into terms, each measured in this process or derived from what was (the floor from section 1's
# bandwidth; the table's status column says which; section 6).

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # the batch size of notebooks 07 and 10, whose timings are used here
MAX_SEQLEN = 100  # their max_seqlen
COPY_MB = 1024  # the copied buffer in MiB (2²⁰ bytes), when notebook 10's bandwidth is missing and measured here
RUNS = 20  # timed copies (then), and interleaved rounds of each matrix product's shapes (section 5)
PRODUCT_ROWS = [32, 256]  # rows (the batch) of the matrix products timed one at a time in section 5
PRODUCT_SPLITS = [1, 4]  # 1: one product as F.linear runs it; 4: its sum over inputs cut into 4 batched products
STEPS_PER_GRAPH = [1, 4, 16]  # K, steps per graph replay, of the waterfalls of section 6 (graph_triton_fused)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import pandas as pd

import tokgen
from tokgen.display import plot_dots, product_findings, save_figure, say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. The bandwidth we can get
#
# A large device-to-device copy is the simplest kernel that does nothing but stream memory.
# Notebook 10 measures it for its floor and records it with the card it ran on. A bandwidth is
# one card's, so each timing is set against the bandwidth of the card that measured it: this
# notebook's own measurements (sections 5 to 7) against this card's, which is notebook 10's record
# of this run (this commit) where notebook 10 ran on this very card, else a copy timed here,
# once; the timings read from notebooks 07 and 10 (sections 3 and 4) against the bandwidth
# notebook 10 recorded in this run on the card that timed them. Where it recorded none on that
# card, they are set against this card's, and a sentence under their table says so and which
# numbers then differ from notebook 10's.

# %%
show_source(tokgen.bandwidth.copy_bandwidth)

# %%
recorded = tokgen.bandwidth.recorded_bandwidth(RESULTS_DIR)  # notebook 10's, of this run on this card, or None
if recorded is not None:
    bandwidth, source = float(recorded["bandwidth_gb_s"]), "notebook 10"
    copies = (f"{recorded['copy_mb']:.0f} MiB copies, median of {recorded['runs']:.0f}; notebook 10's table "
              f"10_bandwidth, {tokgen.results.run_of(pd.DataFrame([recorded]))}")  # fmt: skip
elif CUDA:
    bandwidth, source = tokgen.bandwidth.copy_bandwidth(DEVICE, COPY_MB, RUNS), "notebook 12"
    copies = f"{COPY_MB} MiB copies, median of {RUNS}; notebook 10 recorded none in this run on this card"
else:
    bandwidth = source = None
tflops = tokgen.bandwidth.matmul_tflops(DEVICE) if CUDA else None  # the arithmetic's ceiling, for the naive floor
if bandwidth:
    row = {"bandwidth_gb_s": bandwidth, "source": source, "matmul_tflops": tflops}
    tokgen.Recorder("12_bandwidth", RESULTS_DIR, params=PARAMS).write(row)
    say(tokgen.display.bandwidth_text(bandwidth, copies, source, tflops))
else:
    say("*On the CPU, with no bandwidth recorded by notebook 10: the floors below need the GPU's bandwidth.*")

# %% [markdown]
# ## 2. Bytes per generation
#
# Per decode step: every weight once (the position table: one row), this step's keys and values
# written, and the cached keys and values read. A dynamic cache reads the positions filled so
# far; a static cache's attention reads all of its slots, empty ones included. The naive
# generator has no cache: each step runs the whole sequence so far and writes the logits of
# every position, and its arithmetic grows with the square of N: its own floor is the longer of
# the bytes it moves and the products it computes at the measured TF32 throughput
# (`generation_flops`).

# %%
show_source(tokgen.bandwidth.generation_bytes)

# %%
per_step, nbytes = tokgen.bandwidth.weight_bytes_per_step(model), tokgen.bandwidth.generation_bytes
kinds = {kv: nbytes(model, BATCH_SIZE, MAX_SEQLEN, kv) for kv in ("recompute", "filled", "static")}
names = {"recompute": "naive (no cache; every position's logits written every step)",
         "filled": "cache read where filled", "static": "whole static cache read"}  # fmt: skip
say(tokgen.display.bytes_text(per_step, kinds, names, bandwidth, BATCH_SIZE, MAX_SEQLEN))

# %% [markdown]
# ## 3. Every generator against its floor
#
# The timings come from notebook 07 (the article's generators, ranked in its own run) and
# notebook 10 (graphs, `generate()`), at the same batch and length: two runs, kept apart (a
# generator timed in both, like naive, has a row for each). Each generator's own floor uses the
# cache it reads, read from its registry entry; the task's floor (the fewest bytes: a cache read
# only where filled) is the same for all.

# %%
show_source(tokgen.bandwidth.cache_read)

# %%
frames = []
for name in ("07_pipelining", "10_cuda_graphs"):
    try:
        t = tokgen.rows_at(name, RESULTS_DIR, "notebook 12", this_run=True, BATCH_SIZE=BATCH_SIZE,
                           MAX_SEQLEN=MAX_SEQLEN)  # this run's: a floor is never set against another run's times
    except tokgen.MissingRows as err:
        say(f"*{err}*")
        continue
    frames.append(t.assign(notebook=name[:2]))
    say(f"Notebook {name[:2]}'s rows: its table {name} ({tokgen.results.run_of(t)}).")  # started: the table's
floors, printed = pd.DataFrame(), {"10": "task floor and × task floor"}  # what notebook 10 prints against a floor
if frames and bandwidth:  # one table per run: a generator timed in both runs appears in each
    runs = {f["notebook"].iloc[0]: f for f in frames}
    per_run = {nb: tokgen.bandwidth.floor_bandwidth(f, nb, RESULTS_DIR, bandwidth, also_printed=printed.get(nb))
               for nb, f in runs.items()}  # each run's timings at the copy bandwidth of the card that timed them
    floors = pd.concat([tokgen.bandwidth.floor_table(f, model, per_run[nb]["bandwidth_gb_s"], tflops).assign(
        bandwidth_gb_s=per_run[nb]["bandwidth_gb_s"], bandwidth_from=per_run[nb]["from"]) for nb, f in runs.items()],
        ignore_index=True)  # fmt: skip
    sol_rec = tokgen.Recorder("12_speed_of_light", RESULTS_DIR, params=PARAMS)
    for r in floors.to_dict("records"):
        sol_rec.write({**r, "matmul_tflops": tflops})
    columns = ["variant", "median_ms", "rate_gb_s", "kv_read", "bound_by", "own_floor_ms", "pct_of_own_floor",
               "times_task_floor"]  # rate_gb_s: the bytes it must move over its median time
    for nb, run in floors.groupby("notebook"):
        timed = runs[nb]  # a sequential run's medians: over shared rounds
        notes = [tokgen.display.shared_rounds_note(tokgen.stats.shared_rounds(timed)), per_run[nb]["note"],
                 tokgen.display.other_run_medians_note(nb)]  # fmt: skip
        say(f"**Notebook {nb}'s run** (in its table's order):\n\n" + table(run, columns, digits=1)
            + "".join(f"\n\n{n}" for n in notes if n))

# %%
if len(floors):  # each run's rows in its table's order, run by run: medians over a floor rank nothing
    arithmetic = floors["bound_by"].eq("arithmetic").map({True: ", floor: arithmetic", False: ""})
    s = floors.assign(row=floors["variant"] + " (" + floors["notebook"] + arithmetic + ")",
                      run="notebook " + floors["notebook"] + "'s run")  # fmt: skip
    ax = plot_dots(s, "row", "pct_of_own_floor", group="run", xlabel="% of its own floor reached\n(100%: its "
                   "bytes moved at copy speed or, in a row marked arithmetic, its products at the measured TF32 "
                   "rate)")  # fmt: skip
    ax.set_xlim(left=0)
    ax.set_title(f"B={BATCH_SIZE}, N={MAX_SEQLEN}: distance from the speed of light\n(each run in its table's order; "
                 "not a ranking: medians drift with the host; notebooks 07 and 10 rank round by round)")  # fmt: skip
    save_figure(ax.figure, "12_speed_of_light", RESULTS_DIR)

# %% [markdown]
# ## 4. What stands between a fast generator and the floor
#
# Notebook 10 split the GPU time of the decoders it profiled kernel by kernel (its section 5:
# the compiled handwritten step, our kernels and the fused step, each at a K of its generator's best
# rank there) by kernel kind; here the one ranked first among them round by round (the sentence
# below names any that share that rank). Notebook 10's CSV says "per token" for a decode step,
# which generates one token for each of the B rows: the table below says "per decode step", as notebook 10's
# tables do. The matrix products read all the weights:
# at copy speed they would take the weights' floor per step. Their *own* time (the part no
# earlier kernel overlaps, notebook 10 section 5) is what they add to the GPU's busy time.

# %%
split = None  # the kernel split of the generator notebook 10 profiled, when there is one
try:
    kernels = tokgen.rows_at("10_kernels", RESULTS_DIR, "notebook 12", this_run=True)
except tokgen.MissingRows as err:
    kernels = None
    say(f"*{err}*" if CUDA else "*`data/10_kernels.csv`: notebook 10 writes it on a GPU.*")
if kernels is not None and len(floors):
    run10 = next((f for f in frames if f["notebook"].iloc[0] == "10"), None)
    profiled = [v for v in dict.fromkeys(kernels["variant"]) if run10 is not None and v in set(run10["variant"])]
    ranked = tokgen.display.ranking(run10, profiled[0], profiled) if profiled else pd.DataFrame()
    target = ranked.iloc[0]["variant"] if len(ranked) else kernels["variant"].iloc[0]
    kernels_bw = tokgen.bandwidth.floor_bandwidth(kernels, "10", RESULTS_DIR, bandwidth, what="kernel times")
    split = tokgen.bandwidth.products_against_floor(kernels, target, model, kernels_bw["bandwidth_gb_s"])
    who = (tokgen.voice.first_of_text(ranked, "the decoders notebook 10 profiled, round by round in its run")
           if len(ranked) else f"`{target}`, the first decoder notebook 10 profiled (not ranked here)")  # fmt: skip
    say(tokgen.display.products_split_text(who, split, kernels_bw["note"]))
    columns = ["variant", "kind", "products", "kernels_per_token", "us_per_token", "own_us_per_token", "share"]
    say(table(tokgen.display.step_headers(kernels.loc[kernels["variant"] == target, columns]), digits=2))  # per step

# %% [markdown]
# The same split for every decoder notebook 10 profiled: before our kernels (the compiled
# handwritten step), with them, and with them fused. What fusing changes is in the last two:
# the products' own time and the other kernels' time, fused against unfused (the sentence below).
# On Hopper and later (compute capability ≥ 9), where our kernels launch with programmatic
# dependent launch, those two are not comparable product for product: a kernel's own time starts
# where the kernel before it ends, so any work a kernel does early (before its wait) is credited
# to the kernel before it. The unfused product kernel (`_linear_kernel`) prefetches its weights
# into L2 that way, the fused step's kernels do not: the unfused products' own time can leave out
# their prefetch, which raises their % of copy bandwidth (by how much is not measured here), so
# neither the products' own time nor their % of copy bandwidth compares the unfused step with the
# fused one. Elsewhere no kernel gets PDL, neither step prefetches and kernels do not overlap. The
# sentence below says which case notebook 10's run was, read from its table: whether its kernels'
# durations add up to more than their own times.

# %%
if kernels is not None and bandwidth:
    kernels_bw = tokgen.bandwidth.floor_bandwidth(kernels, "10", RESULTS_DIR, bandwidth, what="kernel times")
    splits = pd.DataFrame([tokgen.bandwidth.products_against_floor(kernels, v, model, kernels_bw["bandwidth_gb_s"])
                           for v in dict.fromkeys(kernels["variant"])])  # fmt: skip
    columns = ["variant", "busy_us", "products_us", "other_us", "weights_floor_us", "pct_of_copy_bandwidth"]
    say(table(splits, columns, digits=0))
    stage = dict(zip(kernels["generator"], kernels["variant"]))
    if {"graph_triton_kernels", "graph_triton_fused"} <= set(stage):
        a, b = (splits.set_index("variant").loc[stage[g]] for g in ("graph_triton_kernels", "graph_triton_fused"))
        overlap = tokgen.display.durations_overlap(kernels, a.name)  # PDL on in notebook 10's run: it prefetched
        say(tokgen.display.fusing_split_text(a, b, overlap))
    else:
        say("*Notebook 10 has no kernel table of both `graph_triton_kernels` and `graph_triton_fused`: no "
            "before/after fusing comparison.*")  # fmt: skip

# %% [markdown]
# Matrix products with only `BATCH_SIZE` rows (the batch) are thin: each weight is used for one
# multiply-add per row, little work for the tensor cores per byte read, and a layer's product
# with a narrow output may have few output tiles to spread over the GPU's streaming
# multiprocessors (the LM head's wide output has many). Whether these, or something else, set a
# product's time is what section 5 tests; it does not measure them apart. cuBLAS can split the
# sum over inputs of such a product over more multiprocessors (look for `splitKreduce` kernels in
# notebook 10's table of the compiled handwritten step). Section 5 takes the products out of the
# decoder to see what one of them costs.
#
# ## 5. One matrix product at a time
#
# A decode step runs each layer's products (attention qkv, attention out, mlp up, mlp down) and
# the LM head. We time each alone, the way the decoder runs it: replayed from a CUDA graph, every
# product reading its own weight from DRAM (not from the L2 cache). If a product's time were set
# by its bytes, it would equal its floor: weight bytes over copy bandwidth. Two variations test
# what else sets it: more rows (`PRODUCT_ROWS`: more arithmetic, the same weight bytes), and the
# sum over inputs cut into several products run as one batched product (`PRODUCT_SPLITS`: more
# output tiles to spread over the multiprocessors). A product's shapes run in interleaved rounds,
# each round in a fresh random order, so each variation is a paired speed-up like every other
# comparison here.

# %%
show_source(tokgen.bandwidth.product_graph)

# %%
products = pd.DataFrame()
if CUDA and bandwidth:
    prod_rec = tokgen.Recorder("12_products", RESULTS_DIR, params=PARAMS)
    products = tokgen.bandwidth.time_products(model, PRODUCT_ROWS, PRODUCT_SPLITS, bandwidth, RUNS, prod_rec.write,
                                              kernels_of=tokgen.waterfall.replay_kernels)  # one profile per shape
    columns = ["product", "rows", "splits", "weight_mb", "floor_us", "median_us", "q25_us", "q75_us", "rate_gb_s"]
    failed = ["status", "error"] if (products["status"] != "ok").any() else []
    say(table(products, columns + ["pct_of_copy_bandwidth"] + failed, digits={"rate_gb_s": 0}))
else:
    say("*Skipped on the CPU: the products are timed from CUDA graphs against the GPU's bandwidth.*")

# %%
if len(products):
    for sentence in product_findings(products, BATCH_SIZE, model.config.n_layer):
        say(sentence)
    if said := tokgen.bandwidth.kernel_change_text(products):  # which kernels cuBLAS chose, where shapes differ
        say(said)
    if split is not None:
        say(tokgen.display.products_inside_text(target, split))
        say(tokgen.bandwidth.floors_bytes_text(split, products, BATCH_SIZE, model.config.n_layer))  # 4's vs 5's bytes

# %%
if len(products):
    ok = products[(products["status"] == "ok") & (products["splits"] == 1)]
    floor = ok.drop_duplicates("product").assign(rows="floor: weight bytes at copy speed")
    floor = floor.assign(median_us=floor["floor_us"], q25_us=floor["floor_us"], q75_us=floor["floor_us"])
    view = pd.concat([floor, ok.assign(rows=ok["rows"].map(lambda r: f"{r} rows"))], ignore_index=True)
    ax = plot_dots(view, "product", "median_us", group="rows", low="q25_us", high="q75_us", log=True,
                   xlabel="µs per product (median, IQR; log)")  # fmt: skip
    ax.set_title("GPT-2 small's matrix products, one at a time (fp32/TF32; one product, no split)")
    save_figure(ax.figure, "12_products", RESULTS_DIR)

# %% [markdown]
# Timed alone, each product is one `F.linear` call with its bias. Inside the compiled decoder,
# inductor may add the bias in another fused kernel and call a plain matrix product, for which
# cuBLAS chooses its kernels anew (notebook 10's kernel table lists which kernels each decoder
# ran: look for split-K ones there); our own Triton kernels fold even more into each product: the sums of section 5
# and the products' time inside a decoder are the same arithmetic, not the same kernels.
#
# A product whose time barely follows its bytes or its rows points to a cost per kernel that
# neither sets: starting the blocks, filling the pipeline of loads, writing the result, waiting
# for the slowest multiprocessor (this notebook does not measure those parts apart), or to another
# kernel: cuBLAS chooses one per shape, and the sentence after the table says, per product and
# split, whether the rows changed the kernels it ran and whether they split the sum (split-K; one
# profiled replay per shape, the `kernels` column of its rows). `rate_gb_s` counts the weight's
# bytes only: at more rows a product also writes more outputs (the LM head its logits). A decode
# step would pay such a cost for every one of its products, and at a small batch the bytes alone
# are few enough for it to matter. Going further means larger
# batches (the same fixed cost for more tokens), fewer bytes (bf16 or int8 weights: not
# token-identical to fp32 any more), matrix-product kernels written for such thin shapes, and
# fewer, larger kernels for everything else.
#
# ## 6. The gap waterfall: from the floor to the measured time
#
# Sections 3 to 5 say how far a generator is from its floor; this one says where that distance
# goes, for notebook 10's fused decoder (`graph_triton_fused`, K steps per graph replay; its rank
# among notebook 10's generators is in that notebook's table), every term measured on this GPU,
# or derived from what was measured on it (bytes or operations at a measured rate, a measured copy
# curve; the table's status column says which), rather than assumed: in this process, but for
# section 1's copy bandwidth (notebook 10's, where it recorded one), which sets the floor; the
# TF32 rate that prices the arithmetic was measured in section 1 of this process. From the top of
# the figure down:
#
# * **the floor**: the generation's bytes (section 2, the filled cache only) at section 1's copy
#   bandwidth, this card's, the one every measurement of this notebook is set against;
# * **arithmetic beyond the floor**: the matrix products' operations at section 1's TF32 rate,
#   counted only where they would take longer than the bytes;
# * **the kernels' bytes beyond the floor**: each kernel of the replays is matched to the weights
#   and cache slots it reads (`fused_step_calls`); what they add up to beyond the floor (the
#   embedding's rows, the vectors of the folded norms, the steps of the last replay past N or
#   past the stop);
# * **copies of each kernel's size**: a short copy cannot reach a long copy's bandwidth (perhaps
#   because its blocks take time to start and to drain, which this notebook does not measure
#   apart); we time copies of each kernel's size with one copy kernel, and its 1 GiB copy too, scale
#   those times, every size by the same factor, so that its 1 GiB copy takes the floor's time (the
#   copy kernel is not the floor's copy: the row's note says by what factor, or why the curve was not
#   scaled), and take the difference: this term is size alone, and the copy kernel's own difference
#   from the floor's copy falls in the next one;
# * **kernels slower than copies of their size**: each kernel's exclusive time beyond a copy of its
#   bytes. With programmatic dependent launch (Hopper and later) a kernel starts before the one
#   before it ends and waits on the GPU for its inputs, and CUPTI's duration counts that wait
#   (notebook 10 section 5): durations added up would count the same time twice. A kernel's
#   exclusive time runs from the end of the kernels before it in its replay to its own end, so a
#   replay's exclusive times add up to the time its GPU was busy; the row's note says how much of
#   the durations overlapped, if any, and the table after the figure splits the term by kernel;
# * **idle gaps between kernels**: inside a replay, the time from one kernel's end to the next
#   one's start, when no kernel runs (what it is spent on is not measured here);
# * **between replays**: the stop flag's copy after each replay, then the gap before the next
#   replay's first kernel (the graph launch or the host: not told apart here);
# * **around the replays**: the GPU's span before the first replay (the reset) and after the last
#   (finding the stop, trimming), idle time inside that span included (it is a span, not busy
#   time), and the host's time outside the GPU's span;
# * **the remainder**: the time measured without the profiler (the median of `RUNS` generations)
#   minus the profiled generation's, and any term that could not be measured: its own bar, so the
#   terms always add up to the measured time. The terms come from the profiled generation, so they
#   hold the profiler's own cost too. Where the profiled generation ran slower than the unprofiled
#   ones by more than 5% of the measured time, or by more than the GPU idle time below, a sentence
#   under the table says so; it sets the between-replay terms against that idle time only where the
#   run sizes it.
#
# The per-K table then gives the GPU's idle time within the measured time at each K: the
# unprofiled generations' median wall time minus the profiled generation's GPU busy time, two
# different generations. Beside it stand the profiled generation's own wall minus busy time and how
# much slower or faster it ran than the unprofiled ones (the profiler's effect and one generation's
# variation, which this run does not tell apart): where that difference is as large as the idle
# time, the run cannot size it, and the sentence under the table says at which K. What the GPU
# waits for while idle (the host, the driver) is not measured here. A last sentence per K says how
# much of the gap lies inside the kernels and how much between them.

# %%
show_source(tokgen.waterfall.timeline_terms)

# %%
W = tokgen.waterfall
inputs = W.gpu_inputs(model, BATCH_SIZE, MAX_SEQLEN, COPY_MB, RUNS, DEVICE, bandwidth_gbs=bandwidth,
                      tflops=tflops)  # section 1's bandwidth and rate; the copy curve measured here, or why not
if inputs["curve"] is not None:
    copy_rec = tokgen.Recorder("12_copy_sizes", RESULTS_DIR, params=PARAMS)
    for r in inputs["curve"].to_dict("records"):
        copy_rec.write(r)
waterfall_rec = tokgen.Recorder("12_waterfall", RESULTS_DIR, params=PARAMS)
kernels_rec = tokgen.Recorder("12_waterfall_kernels", RESULTS_DIR, params=PARAMS)
waterfalls = {}
for k in STEPS_PER_GRAPH:
    name = tokgen.label("graph_triton_fused", k=k)
    out, failed = W.attempt(W.measure_waterfall, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN,
                            steps_per_graph=k, runs=RUNS, bandwidth_gbs=inputs["bandwidth"], tflops=inputs["tflops"],
                            curve=inputs["curve"], errors=inputs["errors"])  # fmt: skip
    if failed:
        say(f"*`{name}`: the waterfall was not measured ({failed}).*")
        continue
    waterfalls[k] = out
    where = {"variant": name, "generator": "graph_triton_fused", "steps_per_graph": k, "batch_size": BATCH_SIZE,
             "max_seqlen": MAX_SEQLEN}  # fmt: skip
    for r in out["terms"].to_dict("records"):
        waterfall_rec.write({**where, **r, **out["summary"], "bandwidth_gb_s": inputs["bandwidth"],
                             "matmul_tflops": inputs["tflops"]})  # fmt: skip
    if out["kernels"] is not None:
        for r in out["kernels"].to_dict("records"):
            kernels_rec.write({**where, **r})
say(W.rates_text(waterfall_rec.read() if waterfalls else None, source, inputs["errors"]))  # as 12_waterfall holds them

# %%
if waterfalls:
    fig, axes = plt.subplots(len(waterfalls), 1, figsize=(9, 0.2 + 3.6 * len(waterfalls)), squeeze=False)
    for ax, (k, out) in zip(axes[:, 0], waterfalls.items()):
        W.plot_waterfall(ax, out["terms"], title=f"graph_triton_fused K={k}, B={BATCH_SIZE}, N={MAX_SEQLEN}")
    fig.tight_layout()
    save_figure(fig, "12_waterfall", RESULTS_DIR)
    for k, out in waterfalls.items():
        say(f"**K = {k}.** " + W.biggest_term(out["terms"]))
        say(table(out["terms"].drop(columns="status").rename(columns={"basis": "status"}),
                  ["term", "ms", "status", "note"], digits=3))  # status: measured, or derived how
        if note := W.profiler_note(out["terms"], out["summary"]):  # the terms are one profiled generation's
            say(note)

# %% [markdown]
# Each kernel of the replays against its bytes, by what it computes: `own_ms` is the kernels'
# exclusive times added up over the generation (the waterfall's), `duration_ms` their durations
# as CUPTI reports them, the wait for the kernel before included (the difference is that wait),
# `median_us` one launch's exclusive time, `at_copy_ms` their bytes at the long copy's bandwidth
# (the floor's), `at_size_ms` the same bytes moved by copies of each launch's size.

# %%
measured_kernels = {k: out["kernels"] for k, out in waterfalls.items() if out["kernels"] is not None}
if measured_kernels:
    k, kernels_k = next(reversed(measured_kernels.items()))
    columns = ["kernel", "what", "launches", "mb", "median_us", "own_ms", "rate_gb_s", "duration_ms", "at_copy_ms",
               "at_size_ms", "pct_of_copy_bandwidth"]  # fmt: skip
    say(f"`graph_triton_fused K={k}`:\n\n" + table(kernels_k, columns, digits=2))
else:
    say("*No kernel was matched to its bytes here (on a CPU the step runs as torch, without a GPU timeline).*")
if waterfalls:
    per_k = W.gpu_idle_per_k(waterfalls)
    say("The GPU's idle time per K: *GPU idle* is the unprofiled generations' median wall time minus the profiled "
        "generation's GPU busy time; *profiled idle* the profiled generation's own wall minus busy time; "
        "*profiled minus unprofiled* how much slower (+) or faster it ran than the unprofiled ones (the "
        "profiler's effect and one generation's variation together); and the GPU time between "
        "replays:\n\n" + table(per_k, ["steps_per_graph", "replays", "measured_ms", "gpu_busy_ms", "gpu_idle_ms",
                                       "profiled_idle_ms", "profiled_minus_unprofiled_ms", "between_replays_ms"],
                               digits=2))  # fmt: skip
    say(W.per_k_unpaired_note(per_k))  # unpaired medians: notebook 10 compares K round by round
    say(W.gpu_idle_findings(per_k))
    for k, out in waterfalls.items():  # the rows written to 12_waterfall
        say(f"**K = {k}.** " + W.gap_split(out["terms"]))

# %% [markdown]
# ## 7. What a persistent step kernel could reach
#
# Section 6's last sentences say how much of the gap lies inside the kernels and how much between
# them; look there for where a different kernel design would have to act. One kernel per step
# that never ends between products (a *persistent* kernel) would have no launch or drain between
# them, but it still has the step's dependency points: QKV before attention, attention
# before its output product, and so on, 61 per step. `tokgen.persistent` measures what such
# kernels of a few designs reach on this model: one launch per step that streams exactly the fused
# step's bytes and computes nothing, its dependency points as nothing at all (pure streaming),
# grid-wide barriers, or dataflow counters that let a tile's weights load before its wait (weights
# do not depend on this step's activations). A real persistent kernel of the same design and
# tiling adds the products and the activations, so it can only be slower than its row here;
# other designs or tilings (deeper prefetch, other tile sizes) are not bounded by this table. The
# 1.5× threshold in the takeaway is this repository's target for the fastest generator, not a law.
# `graph_triton_fused` runs in the same interleaved rounds, by the host's clock; the persistent
# kernels by CUDA events, replayed from one graph per generation. These rounds run after section
# 6's profiled generations in this process: tokgen asks PyTorch to tear CUPTI down after each
# profile (`TEARDOWN_CUPTI=1`, notebook 06) and waits for that teardown after each profiling
# session, so that they should run without a profiler set up; whether they do is not measured
# here. Each generation here launches graphs, not kernel by kernel.

# %%
bound = pd.DataFrame()
if CUDA and inputs["bandwidth"]:
    P = tokgen.persistent
    fused = tokgen.generator_variant("graph_triton_fused", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN,
                                     steps_per_graph=4)  # fmt: skip
    variants = {mode: {"mode": mode} for mode in P.MODES} | {f"{mode}, 4096-float tiles": {"mode": mode, "tile": 4096}
                                                             for mode in ("stream", "prefetch2")}  # two tile sizes
    bound, info = P.persistent_bound(model, BATCH_SIZE, MAX_SEQLEN, variants, rounds=RUNS,
                                     bandwidth_gbs=inputs["bandwidth"],
                                     extra={fused.name: lambda: W.wall_times(fused.run, 1, DEVICE)[0]})  # fmt: skip
    bound_rec = tokgen.Recorder("12_persistent_bound", RESULTS_DIR, params=PARAMS)
    for r in bound.to_dict("records"):
        bound_rec.write({**r, "floor_us_per_step": info["floor_us_per_step"], "bandwidth_gb_s": info["bandwidth_gb_s"]})
    bound["vs stream (paired)"] = [P.paired_cell(bound, v, "stream") for v in bound["variant"]]  # round by round
    say(table(bound, ["variant", "mode", "tile", "programs", "us_per_step", "x_floor", "vs stream (paired)", "note"],
              digits={"tile": 0, "programs": 0, "us_per_step": 1, "x_floor": 2}))  # fmt: skip
    say(P.bound_findings(bound))
    for mode in ("stream", "prefetch2"):  # one design, two tile sizes: paired round by round
        if {mode, f"{mode}, 4096-float tiles"} <= set(bound["variant"]):
            say(P.paired_text(bound, f"{mode}, 4096-float tiles", mode))
else:
    say("*Not measured: a persistent kernel needs a CUDA GPU and the copy bandwidth (section 1).*")

# %% [markdown]
# ## Takeaways, read from this run

# %%
for run in frames:  # each run's fastest, ranked round by round; that run's naive generator the baseline
    nb, naive = run["notebook"].iloc[0], tokgen.label("naive")
    if naive not in set(run["variant"]) or not len(floors):
        continue
    ranked = tokgen.display.ranking(run, naive, baseline=True)  # as notebook 09's summary
    own = floors[floors["notebook"] == nb].set_index("variant")[["times_task_floor", "pct_of_own_floor", "kv_read"]]
    say(f"* Notebook {nb}'s run. " + tokgen.display.fastest_sentence(ranked, "generator") + " "
        + tokgen.display.first_rank_floors(ranked, own))  # each of rank 1: its own floor numbers
if split is not None:
    say(tokgen.display.products_share_text(target, split))
if len(products):
    at = products.query("status == 'ok' and rows == @BATCH_SIZE and splits == 1")["pct_of_copy_bandwidth"]
    if len(at):
        say(tokgen.display.products_reach_text(at, BATCH_SIZE))
for k, out in waterfalls.items():
    say(f"* The waterfall of `graph_triton_fused K={k}`: " + W.biggest_term(out["terms"]))
if len(bound):
    say("* What a persistent step kernel could reach: " + tokgen.persistent.bound_findings(bound))

# %% [markdown]
# ## Summary
#
# * The task's floor is set by bytes: every weight read once per decode step, the keys and values
#   written, and the cache read where it is filled (section 2), at the measured bandwidth of the card
#   that timed the generator (section 1). How far each generator is from it is in section 3's table
#   and the takeaways.
# * Section 4 splits a fast generator's GPU time into matrix products and the rest; section 5
#   times each product alone: how much of a thin product's time its bytes explain, and how
#   much more rows or a split of its sum change it.
# * Section 6 follows the fused decoder from its floor to its measured time, term by term, each
#   term measured on this GPU or derived from what was measured on it (bytes or operations at
#   section 1's rates, a measured copy curve), as the table's status column marks it; the largest
#   term is named above, read from the data.
# * Section 7 times persistent kernels of a few designs that keep the step's dependency points and
#   compute nothing: a lower bound for a real kernel of each design and tiling, not for every
#   design; what they came to is in the takeaways.
#
# ## Exercises
#
# 1. Compute the floor for B = 1 and B = 256. At which batch size does the arithmetic (at the
#    GPU's TF32 rate) take longer than reading the weights?
# 2. Compile one product with `torch.compile(mode="max-autotune-no-cudagraphs")` and time it
#    as `tokgen.bandwidth.product_times` does. Does inductor's choice beat cuBLAS at 32 rows, and
#    which kernels did it choose?
# 3. Halve the bytes with bf16 weights. How many tokens of the output change?
#
# Worked solutions: [`solutions/12_speed_of_light.ipynb`](../solutions/12_speed_of_light.ipynb).
