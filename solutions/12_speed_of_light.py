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

# %%

# %% [markdown]
# # Solutions · 12 speed of light
#
# Worked solutions to the exercises of [notebook 12](../notebooks/12_speed_of_light.ipynb).
# Exercise 1 is arithmetic on the reference results; exercise 2 times kernels (GPU); exercise 3
# compares tokens on any device.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
DATA_DIR = ".."  # the measured copy bandwidth is read from <DATA_DIR>/data/12_bandwidth.csv
MAX_SEQLEN = 50  # new tokens per generation in exercise 3
RUNS = 20  # timed replays per product in exercise 2

# %%
import pandas as pd
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
tf32_tflops = 495.0  # the H100 SXM's dense TF32 rate (989 with sparsity), NVIDIA's datasheet; not measured

# %% [markdown]
# ## Exercise 1: bytes or arithmetic?
#
# A decode step reads every weight once, whatever B: at the copy bandwidth that takes a fixed
# time. Its arithmetic grows with B: 2 × parameters × B floating-point operations. The
# arithmetic takes longer than the reading from B = bytes/bandwidth × rate / (2 × parameters)
# on, whatever the model's size (fp32 weights: 4 bytes per parameter). The bandwidth is the one
# notebook 12 measured; the rate is the datasheet's, which real kernels do not reach.

# %%
bw = tokgen.load("12_bandwidth", DATA_DIR)
gbs = float(bw["bandwidth_gb_s"].median())
params = tokgen.num_parameters(model)
read_us = 1e6 * tokgen.bandwidth.weight_bytes_per_step(model) / (gbs * 1e9)
rows = [
    {"B": b, "read weights µs": read_us, "arithmetic µs": 1e6 * 2 * params * b / (tf32_tflops * 1e12)} for b in (1, 256)
]
crossover = read_us * 1e-6 * tf32_tflops * 1e12 / (2 * params)
say(
    table(pd.DataFrame(rows), digits=2)
    + f"\n\nBandwidth {gbs:,.0f} GB/s ({bw['gpu'].iloc[0]}): the arithmetic takes longer from B ≈ {crossover:.0f} on."
)

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
# sequences go their own ways. Count the tokens that differ from the fp32 model's.

# %%
fp32 = tokgen.generate("kv_static", model, batch_size=1, max_seqlen=MAX_SEQLEN)
bf16 = tokgen.generate("kv_static", model.to(torch.bfloat16), batch_size=1, max_seqlen=MAX_SEQLEN)
model.to(torch.float32)
n = min(fp32.shape[1], bf16.shape[1])
differ = int((fp32[:, :n] != bf16[:, :n]).sum())
first = next((i for i in range(n) if fp32[0, i] != bf16[0, i]), None)
say(f"{differ} of {n} tokens differ" + (f"; the first at position {first}." if first is not None else "."))
