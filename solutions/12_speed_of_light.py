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

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
DATA_DIR = ".."  # the measured copy bandwidth is read from <DATA_DIR>/data/12_bandwidth.csv
MAX_SEQLEN = 100  # new tokens per generation: the floors of exercise 1 (notebook 12's N), the tokens of exercise 3
RUNS = 20  # timed calls per product in exercise 2

# %%
import copy

import pandas as pd
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
TF32_TFLOPS = 495.0  # the H100 SXM's dense TF32 rate (989 with sparsity), NVIDIA's datasheet; not measured

# %% [markdown]
# ## Exercise 1: the floor at B = 1 and B = 256, and bytes against arithmetic
#
# A generation's floor is its bytes over the bandwidth (`tokgen.bandwidth.floor_ms`): every
# weight once per step, whatever B, plus the KV cache, which grows with B. Its arithmetic is
# about 2 × parameters × B floating-point operations per step. At B = 1 the weights dominate
# the bytes; at B = 256 the cache's share has grown, and so has the arithmetic. The bandwidth is
# the one notebook 12 used; the rate is the datasheet's, which real kernels do not reach.

# %%
bw = tokgen.load("12_bandwidth", DATA_DIR)
gbs, params = float(bw["bandwidth_gb_s"].iloc[-1]), tokgen.num_parameters(model)


def floors(b: int) -> dict:
    floor = tokgen.bandwidth.floor_ms(model, b, MAX_SEQLEN, gbs)
    weights = MAX_SEQLEN * tokgen.bandwidth.weight_bytes_per_step(model) / gbs / 1e6
    arithmetic = 1e3 * MAX_SEQLEN * 2 * params * b / (TF32_TFLOPS * 1e12)
    return {"B": b, "floor ms": floor, "of which weights ms": weights, "µs per token": 1e3 * floor / MAX_SEQLEN,
            "arithmetic ms": arithmetic}  # fmt: skip


rows = pd.DataFrame([floors(1), floors(256)])
crossover = rows["of which weights ms"].iloc[0] / rows["arithmetic ms"].iloc[0]  # arithmetic grows as B, weights do not
say(table(rows, digits=2))
say(f"Bandwidth {gbs:,.0f} GB/s ({bw['gpu'].iloc[-1]}), N = {MAX_SEQLEN}: the arithmetic takes longer than reading the "
    f"weights from B ≈ {crossover:.0f} on. The cache's bytes grow with B as well: at B = 256 they are "
    f"{1 - rows['of which weights ms'].iloc[1] / rows['floor ms'].iloc[1]:.0%} of the floor.")  # fmt: skip

# %% [markdown]
# ## Exercise 2: inductor's kernels against cuBLAS
#
# `max-autotune-no-cudagraphs` lets inductor benchmark Triton templates against cuBLAS for each
# product and keep the fastest. At 32 rows the product is a skinny GEMM that neither fills the
# GPU; whether a template wins is what the timing says.

# %%
if CUDA:
    rows, (cin, cout) = [], tokgen.bandwidth.gpt2_products(model)["mlp up"]
    x, w = torch.randn(32, cin, device="cuda"), torch.randn(cout, cin, device="cuda")
    tuned = torch.compile(torch.nn.functional.linear, mode="max-autotune-no-cudagraphs")
    for name, fn in {"cuBLAS (F.linear)": torch.nn.functional.linear, "inductor max-autotune": tuned}.items():
        fn(x, w)  # compile and tune
        times = tokgen.gpu_slice.gpu_times(lambda fn=fn: fn(x, w), RUNS)
        rows.append({"mlp up at 32 rows": name, "µs, median": 1e3 * sorted(times)[len(times) // 2]})
    say(table(pd.DataFrame(rows), digits=1) + "\n\n(Launched from Python, so both include a launch.)")
else:
    say("*Kernels are timed on a GPU: run this cell there.*")

# %% [markdown]
# ## Exercise 3: bf16 weights
#
# Halving the bytes halves the floor, but greedy decoding follows the argmax, and bf16 keeps
# 8 bits of mantissa: where two logits are close the argmax flips, and from there the two
# sequences go their own ways. Count the tokens that differ from the fp32 model's, on a bf16
# copy of the model (the fp32 one stays as it is for any later cell).

# %%
fp32 = tokgen.generate("kv_static", model, batch_size=1, max_seqlen=MAX_SEQLEN)
bf16 = tokgen.generate("kv_static", copy.deepcopy(model).to(torch.bfloat16), batch_size=1, max_seqlen=MAX_SEQLEN)
n = min(fp32.shape[1], bf16.shape[1])
differ = int((fp32[:, :n] != bf16[:, :n]).sum())
first = next((i for i in range(n) if fp32[0, i] != bf16[0, i]), None)
say(f"{differ} of {n} tokens differ" + (f"; the first at position {first}." if first is not None else "."))
