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
# Generating one token for a batch of 32 reads every weight of the model once: for GPT-2 small
# in fp32 that is far more bytes than the arithmetic needs time for. So the GPU's memory
# bandwidth sets a floor under every generator: bytes that must move per generation, divided by
# bytes per second.
#
# **You will learn:** how to compute the bandwidth floor of a generation, how far each
# generator is from it, and why thin matrix products miss it.
#
# **What this step adds:** the floor, from the model's size and the bandwidth measured on this
# GPU, and every generator's distance from it.
#
# **What we measure:** the device-to-device copy bandwidth (bytes read + written); then, from the
# timings of notebooks 07 and 10 (B = 32, N = 100), each generator's time as a percentage of
# its floor; for the fastest generator, the matrix products' time against the weights' floor;
# and each of GPT-2's matrix products timed alone, against the time its weight takes to read.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # the batch size of notebooks 07 and 10, whose timings are used here
MAX_SEQLEN = 100  # their max_seqlen
COPY_MB = 1024  # size of the copied buffer for the bandwidth measurement
RUNS = 20  # timed copies, and timed replays per matrix product (median)
PRODUCT_ROWS = [32, 256]  # rows (the batch) of the matrix products timed one at a time in section 5
PRODUCT_SPLITS = [1, 4]  # 1: one product as F.linear runs it; 4: its sum over inputs cut into 4 batched products
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import statistics

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
# ## 1. The bandwidth we can get
#
# A large device-to-device copy is the simplest kernel that does nothing but stream memory.

# %%
show_source(tokgen.bandwidth.copy_bandwidth)

# %%
rec = tokgen.Recorder("12_bandwidth", RESULTS_DIR, params=PARAMS)
if CUDA:
    bandwidth = tokgen.bandwidth.copy_bandwidth(DEVICE, COPY_MB, RUNS)
    rec.write({"copy_mb": COPY_MB, "runs": RUNS, "bandwidth_gb_s": bandwidth})
    say(f"Measured copy bandwidth: **{bandwidth:,.0f} GB/s** (read + write, median of {RUNS}).")
else:
    bandwidth = None
    say("*Skipped on the CPU: the floor below needs the GPU's bandwidth.*")

# %% [markdown]
# ## 2. Bytes per generation
#
# Per step: every weight once (the position table: one row), this step's keys and values
# written, and the cached keys and values read. A dynamic cache reads the positions filled so
# far; a static cache's attention reads all `max_seqlen` slots, empty ones included.

# %%
show_source(tokgen.bandwidth.generation_bytes)

# %%
per_step = tokgen.bandwidth.weight_bytes_per_step(model)
kinds = {
    kv: tokgen.bandwidth.generation_bytes(model, BATCH_SIZE, MAX_SEQLEN, kv) for kv in ("none", "filled", "static")
}
say(
    f"Weights read per step: **{per_step / 1e6:.0f} MB**. Per generation (B={BATCH_SIZE}, N={MAX_SEQLEN}): "
    + ", ".join(f"{kv} cache reads {b / 1e9:.2f} GB" for kv, b in kinds.items())
    + (
        f". Floor at {bandwidth:,.0f} GB/s: "
        + ", ".join(f"{kv} {b / bandwidth / 1e6:.1f} ms" for kv, b in kinds.items())
        if bandwidth
        else ""
    )
    + "."
)

# %% [markdown]
# ## 3. Every generator against its floor
#
# The timings come from notebook 07 (the article's generators, ranked in notebook 09) and
# notebook 10 (graphs, `generate()`), both at B = 32, N = 100: two runs, kept apart (a generator
# timed in both, like naive, has a row for each). Each generator's own floor uses the cache it
# reads; the task's floor (the fewest bytes: a cache read only where filled) is the same for all.


# %%
def kv_read(variant: str, generator: str) -> str:
    if generator == "naive":
        return "none"
    if getattr(tokgen.GENERATORS.get(generator), "keywords", {}).get("kernels", "torch") != "torch":
        return "filled"  # our attention kernel reads the filled slots only
    if "static" in variant or generator.startswith("graph_"):
        return "static"
    return "filled"


frames = []
for table_name in ("07_pipelining", "10_cuda_graphs"):
    try:
        t = tokgen.load(table_name, RESULTS_DIR)
        frames.append(t[(t["status"] == "ok") & (t["batch_size"] == BATCH_SIZE)].assign(notebook=table_name[:2]))
    except FileNotFoundError:
        say(f"*`data/{table_name}.csv` is missing: run notebook {table_name[:2]} first.*")
sol_rows = []
if frames and bandwidth:
    timed = pd.concat(frames, ignore_index=True)  # each notebook's run on its own rows, never mixed
    task_floor = kinds["filled"] / bandwidth / 1e6
    for r in timed.to_dict("records"):
        kv = kv_read(r["variant"], r["generator"])
        own = tokgen.bandwidth.generation_bytes(model, BATCH_SIZE, int(r["steps"]), kv) / bandwidth / 1e6
        sol_rows.append(
            {
                "variant": r["variant"],
                "notebook": r["notebook"],
                "median_ms": r["median_ms"],
                "kv_read": kv,
                "own_floor_ms": own,
                "pct_of_own_floor": 100 * own / r["median_ms"],
                "task_floor_ms": task_floor,
                "times_task_floor": r["median_ms"] / task_floor,
            }
        )
sol_rec = tokgen.Recorder("12_speed_of_light", RESULTS_DIR, params=PARAMS)
for row in sol_rows:
    sol_rec.write({**row, "bandwidth_gb_s": bandwidth})
if sol_rows:
    sol_table = pd.DataFrame(sol_rows).sort_values("median_ms")
    say(
        table(
            sol_table[
                ["variant", "notebook", "median_ms", "kv_read", "own_floor_ms", "pct_of_own_floor", "times_task_floor"]
            ],
            digits=1,
        )
    )

# %%
if sol_rows:
    fig, ax = plt.subplots(figsize=(8, 5.5))
    s = sol_table.sort_values("pct_of_own_floor")
    colors = {"07": "C0", "10": "C2"}  # one colour per run: rows of two runs are never merged
    ax.barh(
        s["variant"] + " (" + s["notebook"] + ")",
        s["pct_of_own_floor"],
        color=[colors.get(n, "C7") for n in s["notebook"]],
    )
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, [f"notebook {n}'s run" for n in colors], loc="lower right")
    ax.set_xlabel("% of the bandwidth floor reached (100% = every byte moved at copy speed)")
    ax.set_title(f"B={BATCH_SIZE}, N={MAX_SEQLEN}: distance from the speed of light")
    save_figure(fig, "12_speed_of_light", RESULTS_DIR)

# %% [markdown]
# ## 4. What stands between the fastest generator and the floor
#
# Notebook 10 split the fastest generator's GPU time by kernel kind. The matrix products read
# all the weights: at copy speed they would take the weights' floor per token.

# %%
try:
    kernels = tokgen.load("10_kernels", RESULTS_DIR)
except FileNotFoundError:
    kernels = None
    say("*`data/10_kernels.csv` is missing: run notebook 10 first.*")
if kernels is not None and bandwidth:
    weights_us = per_step / bandwidth / 1e3
    matmul = kernels[kernels["kind"].str.startswith("matmul")]["us_per_token"].sum()
    total = kernels["us_per_token"].sum()
    say(
        f"Fastest generator ({kernels['variant'].iloc[0]}): **{total:.0f} µs** of kernels per token, of which matrix "
        f"products **{matmul:.0f} µs**; reading the weights once at copy speed takes **{weights_us:.0f} µs**. "
        f"The matrix products run at {100 * weights_us / matmul:.0f}% of copy bandwidth."
    )
    say(table(kernels[["kind", "us_per_token", "kernels_per_token", "share"]], digits=2))

# %% [markdown]
# Matrix products with only 32 rows (the batch) are thin: each weight byte is used for 32
# multiply-adds, far too few to keep the tensor cores busy, and too few output tiles to spread
# one product over all of the GPU's streaming multiprocessors. cuBLAS already splits the sum
# over inputs of some of them over more multiprocessors (the `splitKreduce` kernels of notebook
# 10's table). Section 5 takes the products out of the decoder to see what one of them costs.
#
# ## 5. One matrix product at a time
#
# A decode step runs five kinds of product, four per layer and the LM head. We time each alone,
# the way the decoder runs it: replayed from a CUDA graph, every product reading its own weight
# from DRAM (not from the L2 cache). If a product's time were set by its bytes, it would equal
# its floor: weight bytes over copy bandwidth. Two variations test what else sets it: 256 rows
# instead of 32 (eight times the arithmetic, the same weight bytes), and the sum over inputs cut
# into 4 products run as one batched product (four times the output tiles to spread over the
# multiprocessors).

# %%
show_source(tokgen.bandwidth.product_times)

# %%
product_rows = []
if CUDA and bandwidth:
    params = {"PRODUCT_ROWS": PRODUCT_ROWS, "PRODUCT_SPLITS": PRODUCT_SPLITS, "RUNS": RUNS}
    prod_rec = tokgen.Recorder("12_products", RESULTS_DIR, params=params)
    for name, (k, n) in tokgen.bandwidth.gpt2_products(model).items():
        for rows in PRODUCT_ROWS:
            for splits in PRODUCT_SPLITS:
                row = {"product": name, "rows": rows, "in_features": k, "out_features": n, "splits": splits}
                row |= {"weight_mb": k * n * 4 / 1e6, "floor_us": k * n * 4 / bandwidth / 1e3}
                try:
                    times = tokgen.bandwidth.product_times(rows, k, n, splits=splits, runs=RUNS)
                    q25, median, q75 = statistics.quantiles(times, n=4, method="inclusive")
                    row |= {"status": "ok", "runs": RUNS, "median_us": median, "q25_us": q25, "q75_us": q75}
                    row["pct_of_copy_bandwidth"] = 100 * row["floor_us"] / median
                except torch.OutOfMemoryError as err:  # recorded; the other products go on
                    row |= {"status": "oom", "error": str(err).splitlines()[0]}
                    torch.cuda.empty_cache()
                prod_rec.write(row)
                product_rows.append(row)
    products = pd.DataFrame(product_rows)
    columns = ["product", "rows", "splits", "weight_mb", "floor_us", "median_us", "q25_us", "q75_us"]
    failed = ["status", "error"] if (products["status"] != "ok").any() else []
    say(table(products, columns + ["pct_of_copy_bandwidth"] + failed, digits=1))
else:
    say("*Skipped on the CPU: the products are timed from CUDA graphs against the GPU's bandwidth.*")

# %%
ok = pd.DataFrame(product_rows).query("status == 'ok'") if product_rows else pd.DataFrame()
if not ok.empty and BATCH_SIZE in PRODUCT_ROWS and 1 in PRODUCT_SPLITS:
    base = ok[(ok["rows"] == BATCH_SIZE) & (ok["splits"] == 1)].set_index("product")
    layers = model.config.n_layer
    per_token = layers * base["median_us"].drop("LM head").sum() + base.loc["LM head", "median_us"]
    floor = layers * base["floor_us"].drop("LM head").sum() + base.loc["LM head", "floor_us"]
    in_decoder = ""
    if kernels is not None:
        in_decoder = f", **{matmul:.0f} µs** of matrix-product kernels inside the decoder (section 4)"
    say(
        f"At {BATCH_SIZE} rows, one step's products timed alone add up to **{per_token:.0f} µs**{in_decoder}; "
        f"reading their weights at copy speed takes **{floor:.0f} µs**."
    )
    small, large = base["weight_mb"].drop("LM head").idxmin(), base["weight_mb"].drop("LM head").idxmax()
    say(
        f"The {large} product reads {base.loc[large, 'weight_mb'] / base.loc[small, 'weight_mb']:.0f}× the bytes of "
        f"the {small} product and takes {base.loc[large, 'median_us'] / base.loc[small, 'median_us']:.1f}× its time "
        f"({base.loc[large, 'median_us']:.1f} vs {base.loc[small, 'median_us']:.1f} µs)."
    )
    for rows in [r for r in PRODUCT_ROWS if r != BATCH_SIZE]:
        more = ok[(ok["rows"] == rows) & (ok["splits"] == 1)].set_index("product")["median_us"]
        ratio = (more / base["median_us"]).dropna()
        say(
            f"With {rows} rows ({rows / BATCH_SIZE:.0f}× the arithmetic) the products take "
            f"{ratio.min():.2f}× to {ratio.max():.2f}× their time at {BATCH_SIZE} rows."
        )
    for splits in [s for s in PRODUCT_SPLITS if s != 1]:
        cut = ok[(ok["rows"] == BATCH_SIZE) & (ok["splits"] == splits)].set_index("product")["median_us"]
        change = (100 * (cut / base["median_us"] - 1)).dropna()
        say(
            f"Cut into {splits} batched products, their time changes by {change.min():+.0f}% to {change.max():+.0f}% "
            f"(not counting the sum of the partial results)."
        )

# %%
if not ok.empty:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    view = ok[ok["splits"] == 1]
    names = list(dict.fromkeys(view["product"]))
    width = 0.8 / (1 + len(PRODUCT_ROWS))
    floors = view.drop_duplicates("product").set_index("product").loc[names, "floor_us"]
    ax.bar([i for i in range(len(names))], floors, width, color="0.6", label="floor: weight bytes at copy speed")
    for j, rows in enumerate(PRODUCT_ROWS, start=1):
        t = view[view["rows"] == rows].set_index("product").reindex(names)
        ax.bar(
            [i + j * width for i in range(len(names))],
            t["median_us"],
            width,
            yerr=[t["median_us"] - t["q25_us"], t["q75_us"] - t["median_us"]],
            label=f"{rows} rows",
        )
    ax.set_xticks([i + width * len(PRODUCT_ROWS) / 2 for i in range(len(names))], names)
    ax.set_yscale("log")
    ax.set_ylabel("µs per product (median, IQR)")
    ax.set_title("GPT-2 small's matrix products, one at a time (fp32/TF32)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(fig, "12_products", RESULTS_DIR)

# %% [markdown]
# Timed alone, each product is one `F.linear` call, and cuBLAS adds the bias in the same kernel.
# Inside the compiled decoder, inductor adds the bias in the next fused kernel and calls a plain
# matrix product, for which cuBLAS chooses its kernels anew (notebook 10's table has split-K ones
# among them): the two sums above are the same arithmetic, not necessarily the same kernels.
#
# A product whose time barely follows its bytes or its rows is paying a fixed cost per kernel:
# starting the blocks, filling the pipeline of loads, writing the result, and waiting for the
# slowest multiprocessor. A decode step pays it for every one of its products, and at 32 rows
# the bytes alone are small enough for that cost to matter. Going further means larger batches
# (the same fixed cost for more tokens), fewer bytes (bf16 or int8 weights: not
# token-identical to fp32 any more), matrix-product kernels written for such thin shapes, and
# fewer, larger kernels for everything else: the fused kernels of section 4 are many and small.
#
# ## Takeaways, read from this run

# %%
if sol_rows:
    fastest = sol_table.iloc[0]
    say(
        f"* The fastest generator, `{fastest['variant']}` (notebook {fastest['notebook']}'s run), takes "
        f"{fastest['times_task_floor']:.1f}× the task's floor ({fastest['pct_of_own_floor']:.0f}% of its own): "
        "far from what its bytes require."
    )
if kernels is not None and bandwidth:
    say(
        f"* Matrix products are {100 * matmul / total:.0f}% of its kernel time and run at "
        f"{100 * weights_us / matmul:.0f}% of copy bandwidth; the other kernels take {total - matmul:.0f} µs per token."
    )
if not ok.empty:
    at = ok[(ok["rows"] == BATCH_SIZE) & (ok["splits"] == 1)]["pct_of_copy_bandwidth"]
    if len(at):
        say(f"* Alone, at {BATCH_SIZE} rows, the products reach {at.min():.0f}–{at.max():.0f}% of copy bandwidth.")

# %% [markdown]
# ## Summary
#
# * The floor is set by bytes: every weight read once per token at the measured bandwidth.
#   How far each generator is from it, and what fills the difference, is read above.
# * Section 4 splits the fastest generator's kernel time into matrix products and the rest;
#   section 5 times each product alone: how much of a thin product's time its bytes explain,
#   and how little more rows or a split of its sum change it.
#
# ## Exercises
#
# 1. Compute the floor for B = 1 and B = 256. At which batch size does the arithmetic (at the
#    GPU's TF32 rate) take longer than reading the weights?
# 2. Compile one product with `torch.compile(mode="max-autotune-no-cudagraphs")` and time it
#    as `tokgen.bandwidth.product_times` does. Do inductor's Triton kernels beat cuBLAS at 32 rows?
# 3. Halve the bytes with bf16 weights. How many tokens of the output change?
#
# Worked solutions: [`solutions/12_speed_of_light.ipynb`](../solutions/12_speed_of_light.ipynb).
