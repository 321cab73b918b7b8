# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
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
# **What this step adds:** the floor, from the model's size and the bandwidth measured on this
# GPU, and every generator's distance from it.
#
# **What we measure:** the device-to-device copy bandwidth (bytes read + written); then, from the
# timings of notebooks 07 and 10 (B = 32, N = 100), each generator's time as a percentage of
# its floor; and for the fastest generator, the matrix products' time against the weights' floor.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # the batch size of notebooks 07 and 10, whose timings are used here
MAX_SEQLEN = 100  # their max_seqlen
COPY_MB = 1024  # size of the copied buffer for the bandwidth measurement
RUNS = 20  # timed copies (median)
RESULTS_DIR = ".."  # data/ and figures/ are written below this folder (the repository root)

# %%
import matplotlib.pyplot as plt
import pandas as pd

import tokgen
from tokgen import sol
from tokgen.display import save_figure, say, show_source, table

print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
CUDA = DEVICE == "cuda"

# %% [markdown]
# ## 1. The bandwidth we can get
#
# A large device-to-device copy is the simplest kernel that does nothing but stream memory.

# %%
show_source(sol.copy_bandwidth)

# %%
rec = tokgen.Recorder("12_bandwidth", RESULTS_DIR, params={"COPY_MB": COPY_MB, "RUNS": RUNS})
if CUDA:
    bandwidth = sol.copy_bandwidth(DEVICE, COPY_MB, RUNS)
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
show_source(sol.generation_bytes)

# %%
per_step = sol.weight_bytes_per_step(model)
kinds = {kv: sol.generation_bytes(model, BATCH_SIZE, MAX_SEQLEN, kv) for kv in ("none", "filled", "static")}
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
# notebook 10 (graphs, `generate()`), both at B = 32, N = 100. Each generator's own floor uses the cache it reads;
# the task's floor (the fewest bytes: a cache read only where filled) is the same for all.


# %%
def kv_read(variant: str, generator: str) -> str:
    if generator == "naive":
        return "none"
    if "static" in variant or generator in ("graph_hf", "graph_lean", "fast"):
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
    timed = pd.concat(frames, ignore_index=True).drop_duplicates("variant", keep="last")
    task_floor = kinds["filled"] / bandwidth / 1e6
    for r in timed.to_dict("records"):
        kv = kv_read(r["variant"], r["generator"])
        own = sol.generation_bytes(model, BATCH_SIZE, int(r["steps"]), kv) / bandwidth / 1e6
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
sol_rec = tokgen.Recorder("12_speed_of_light", RESULTS_DIR, params={"BATCH_SIZE": BATCH_SIZE, "MAX_SEQLEN": MAX_SEQLEN})
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
    fig, ax = plt.subplots(figsize=(8, 5))
    s = sol_table.sort_values("pct_of_own_floor")
    ax.barh(
        s["variant"],
        s["pct_of_own_floor"],
        color=["C2" if v.startswith(("fast", "graph")) else "C0" for v in s["variant"]],
    )
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
# one product over all of the GPU's streaming multiprocessors. Such a product streams its
# weights at a fraction of the bandwidth a plain copy gets; cuBLAS already splits the reduction
# over more multiprocessors (the `splitKreduce` kernels of notebook 10's table). Going further
# means larger batches (more work per weight byte), fewer bytes (bf16 or int8 weights: not
# token-identical to fp32 any more), matrix-product kernels written for such thin shapes, and
# fewer, larger kernels for everything else: the fused kernels of section 4 are many and small.
#
# ## Summary
#
# * At B = 32 a decode step is bound by bytes, not FLOPs: the weights must stream through once
#   per token, and the floor follows from the measured bandwidth.
# * The table of section 3 says how far each generator is from it; section 4 how much of the
#   fastest generator's time is the matrix products and how much everything else.
#
# ## Exercises
#
# 1. Compute the floor for B = 1 and B = 256. At which batch size does the arithmetic (at the
#    GPU's TF32 rate) take longer than reading the weights?
# 2. Time one `x @ W` with x of shape (32, 768) and W of (768, 3072) in isolation. What
#    fraction of copy bandwidth does it reach? And with 256 rows?
# 3. Halve the bytes with bf16 weights. How many tokens of the output change?
