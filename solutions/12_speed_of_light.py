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
# # Solutions · 12 speed of light
#
# Worked solutions to the exercises of [notebook 12](../notebooks/12_speed_of_light.ipynb).
# Exercise 1 is arithmetic on the reference bandwidth; exercise 2 times kernels (GPU; on a CPU
# the cell says so); exercise 3 compares tokens on any device.
# Exercise 1 reads notebook 12's CSVs. What exercises 2 and 3 measure (each product's times, round
# by round, and the kernels of its replay; the tokens of both generations) is recorded one row per
# measurement in `<RESULTS_DIR>/data/12_speed_of_light_solution.csv` (with where it ran: GPU,
# commit, versions; the column `exercise` says which exercise, `measure` which measurement) and
# read back from there, as the notebooks read theirs; the set-up cell prints the commit and the
# card they come from.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
DATA_DIR = ".."  # the measured copy bandwidth is read from <DATA_DIR>/data/12_bandwidth.csv
MAX_SEQLEN = 100  # new tokens per generation: the floors of exercise 1 (notebook 12's N), the tokens of exercise 3
RUNS = 20  # timed calls per product in exercise 2
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results

# %%
import copy
import statistics

import pandas as pd
import torch

import tokgen
from tokgen.display import say, table
from tokgen.stats import compare_rounds, run_times
from tokgen.voice import speedup_text

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # the commit and the card behind exercises 2 and 3's live numbers
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
DATASHEET_TFLOPS = 495.0  # dense TF32 rate of an H100 SXM and an H200 SXM (989 with sparsity), NVIDIA's datasheets:
# shown beside the measured rate on either, and used only where notebook 12 recorded none. Not a papermill parameter
# (tokgen.params has no rule for it): for another GPU, edit it here.
rec = tokgen.Recorder("12_speed_of_light_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement


def recorded(exercise: int, measure: str):
    """This exercise's rows of one measure, as recorded (`tokgen.results.rows_where`)."""
    return tokgen.results.rows_where(rec.read(), exercise=exercise, measure=measure).copy()

# %% [markdown]
# ## Exercise 1: the floor at B = 1 and B = 256, and bytes against arithmetic
#
# A generation's floor is its bytes over the bandwidth (`tokgen.bandwidth.floor_ms`): every
# weight once per step, whatever B, plus the KV cache, which grows with B. Its arithmetic is
# about 2 × parameters × B floating-point operations per step. At B = 1 the weights dominate
# the bytes; at B = 256 the cache's share has grown, and so has the arithmetic. The bandwidth and
# the TF32 rate are the ones notebook 12 recorded (the bandwidth notebook 10's where it ran on this
# card, else its own; the rate its own, from large 8192 × 8192 products, which thin ones do not
# reach); the sentence names the GPU and, where that GPU is an H100 or H200 SXM, sets the crossover at
# its datasheet rate (`DATASHEET_TFLOPS`) beside it. The crossover
# compares the arithmetic with the weights' bytes only: each row of the batch also adds cache
# bytes, and the last sentence sets those against the row's arithmetic, which says whether the
# whole floor ever turns into an arithmetic floor.

# %%
bw = tokgen.load("12_bandwidth", DATA_DIR)
say(f"Notebook 12's bandwidth and TF32 rate: its table 12_bandwidth ({tokgen.results.run_of(bw.iloc[[-1]])}).")
gbs, params = float(bw["bandwidth_gb_s"].iloc[-1]), tokgen.num_parameters(model)
measured = float(bw["matmul_tflops"].iloc[-1]) if "matmul_tflops" in bw else float("nan")  # NaN: not measured
tflops = measured if measured == measured else DATASHEET_TFLOPS


def floors(b: int) -> dict:
    floor = tokgen.bandwidth.floor_ms(model, b, MAX_SEQLEN, gbs)
    weights = MAX_SEQLEN * tokgen.bandwidth.weight_bytes_per_step(model) / gbs / 1e6
    arithmetic = 1e3 * MAX_SEQLEN * 2 * params * b / (tflops * 1e12)
    return {"B": b, "floor ms": floor, "of which weights ms": weights, "µs per step": 1e3 * floor / MAX_SEQLEN,
            "arithmetic ms": arithmetic}  # fmt: skip


rows = pd.DataFrame([floors(1), floors(256)])
say(table(rows, digits=2))
for sentence in tokgen.display.crossover_text(
        gpu=bw["gpu"].iloc[-1], gbs=gbs, steps=MAX_SEQLEN, tflops=tflops, measured=measured == measured,
        datasheet_tflops=DATASHEET_TFLOPS, weights_ms=rows["of which weights ms"].iloc[0],
        arithmetic_row_ms=rows["arithmetic ms"].iloc[0],  # B = 1: one row's arithmetic
        cache_row_bytes=tokgen.bandwidth.cache_bytes_per_row(model, MAX_SEQLEN),
        cache_share=(256, 1 - rows["of which weights ms"].iloc[1] / rows["floor ms"].iloc[1])):  # fmt: skip
    say(sentence)

# %% [markdown]
# ## Exercise 2: inductor's kernels against cuBLAS
#
# `max-autotune-no-cudagraphs` lets inductor benchmark Triton templates against cuBLAS for each
# product and keep the fastest, which may be cuBLAS itself (`extern_kernels`) and may add a
# kernel of its own for the bias. At 32 rows the product is a skinny GEMM, which may have few
# output tiles for the GPU's multiprocessors. Both are timed as notebook 12's
# `tokgen.bandwidth.time_products` times a product, bias included (cuBLAS picks its kernel with
# the bias in mind, as in notebook 12's table): each one `tokgen.bandwidth.product_graph` replay
# of `tokgen.bandwidth.PRODUCT_REPEATS` products from one CUDA graph (no launch from Python inside
# the timing), each product reading its own weight from a pool over twice the L2 cache (so from
# DRAM), one replay of each per round in a fresh random order per round
# (`tokgen.bench.round_orders`, its seed printed), paired by round; a replay's time over its
# products is one round's time per product.
# The timing compares inductor's choice with cuBLAS's; which kernels inductor chose is read from
# one profiled replay of each graph, after the timing: whether a Triton template is among them is
# what that table shows, not the timing.

# %%
if CUDA:
    (cin, cout), repeats = tokgen.bandwidth.gpt2_products(model)["mlp up"], tokgen.bandwidth.PRODUCT_REPEATS
    tuned = torch.compile(torch.nn.functional.linear, mode="max-autotune-no-cudagraphs")
    fns = {"cuBLAS (F.linear)": torch.nn.functional.linear, "inductor max-autotune": tuned}
    try:  # each: one graph of `repeats` products, weights from a pool over twice the L2 cache, as notebook 12's
        graphs = {n: tokgen.bandwidth.product_graph(32, cin, cout, linear=fn) for n, fn in fns.items()}
    except RuntimeError as err:  # say so, and let the other exercises run
        graphs = {}
        say(f"*Capturing the products in a CUDA graph failed here ({type(err).__name__}: {str(err)[:200]}).*")
    replays, names = {name: [] for name in graphs}, list(graphs)  # ms per replay, one value per round
    seed, orders = tokgen.bench.drawn_orders(len(names), RUNS if graphs else 0)  # a fresh random order per round
    for order in orders:
        for j in order:
            replays[names[j]] += tokgen.gpu_slice.gpu_times(graphs[names[j]], 1)
    for name, ms in replays.items():  # written after the rounds, none between two timed replays
        rec.write({"exercise": 2, "measure": "timing", "variant": name, "times_ms": ";".join(map(repr, ms)),
                   "runs": len(ms), "repeats": repeats, "order_seed": seed})  # fmt: skip  (times_ms: per replay)
    if graphs:
        timed = recorded(2, "timing")  # the rows as recorded: µs per product, one value per round
        times = {r["variant"]: [1e3 * ms / r["repeats"] for ms in run_times({"times_ms": str(r["times_ms"])})]
                 for r in timed.to_dict("records")}  # fmt: skip  (str: one round reads back as a number)
        rows = [{"mlp up at 32 rows": n, "µs per product, median": statistics.median(t)} for n, t in times.items()]
        say(table(pd.DataFrame(rows), digits=1))
        say(f"Inductor's choice against cuBLAS's product: {speedup_text(compare_rounds(*times.values()))} (each "
            f"round's order drawn at random, seed {int(timed['order_seed'].iloc[0])}).")  # fmt: skip
        for name, replay in graphs.items():  # one profiled replay of each graph, after the timing: its kernels
            profiled, failed = tokgen.waterfall.attempt(tokgen.waterfall.profile_generation, replay)
            if failed:
                ran = {f"not profiled ({failed})": 0}
            else:
                ran = profiled[0].query("kind == 'kernel'")["name"].map(tokgen.profiling.short_kernel_name)
                ran = ran.value_counts(sort=False).to_dict()
            for k, c in ran.items():
                rec.write({"exercise": 2, "measure": "kernels", "graph": name, "kernel": k, "launches": int(c)})
        kernels = recorded(2, "kernels").rename(columns={"launches": "launches per replay"})
        kernels["launches per replay"] = kernels["launches per replay"].astype(int)  # other rows leave it empty
        say(f"The kernels of one replay ({repeats} products each):\n\n"
            + table(kernels[["graph", "kernel", "launches per replay"]]))  # fmt: skip
else:
    say("*Kernels are timed on a GPU: run this cell there.*")

# %% [markdown]
# ## Exercise 3: bf16 weights
#
# Halving the bytes halves the floor, but greedy decoding follows the argmax, and bf16 keeps
# 8 bits of precision (7 stored): where two logits are close the argmax can flip, and from there
# the two sequences go their own ways. Count the tokens that differ from the fp32 model's, on a bf16
# copy of the model (the fp32 one stays as it is for any later cell).

# %%
fp32 = tokgen.generate("kv_static", model, batch_size=1, max_seqlen=MAX_SEQLEN)
bf16 = tokgen.generate("kv_static", copy.deepcopy(model).to(torch.bfloat16), batch_size=1, max_seqlen=MAX_SEQLEN)
for dtype, out in (("float32", fp32), ("bfloat16", bf16)):  # one row per generated row: its tokens, prompt first
    for i, tokens in enumerate(out.tolist()):
        rec.write({"exercise": 3, "measure": "tokens", "variant": dtype, "row": i,
                   "tokens": " ".join(map(str, tokens))})  # fmt: skip
generated = {dtype: torch.tensor([[int(t) for t in r.split()] for r in rows.sort_values("row")["tokens"]])
             for dtype, rows in recorded(3, "tokens").groupby("variant")}  # the tokens as recorded  # fmt: skip
say(tokgen.display.tokens_differ_text(generated["float32"], generated["bfloat16"]))  # column i: step i's token
