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
# # 09 · Summary: every generator of the article, side by side
#
# The article closes with one table: static cache, compilation and pipelining at B = 32,
# N = 100, sorted by runtime, the best about 5× its baseline. Here every generator of the
# article runs in **one process, interleaved**, so the ranking is not an artefact of when each
# notebook ran. Then the article's ten claims against what notebooks 01–09 measured.
#
# **What we measure:** B = 32, N = 100; runtime, speed-up over the naive generator, memory.
# (Expandable segments need their own process: see notebook 03.)

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 32  # sequences per batch (the article: 32)
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
RUNS = 10  # timed runs per variant, interleaved, after one warm-up (the article: 10)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = ".."  # data/ and figures/ are written below this folder (the repository root)

# %%
import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.claims import claims_table
from tokgen.display import plot_runtimes, save_figure, say, table

print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)
compiled = torch.compile(model, backend=COMPILE_BACKEND)

# %% [markdown]
# ## 1. Measure

# %%
rec = tokgen.Recorder(
    "09_summary",
    RESULTS_DIR,
    params={
        "SIZE": SIZE,
        "BATCH_SIZE": BATCH_SIZE,
        "MAX_SEQLEN": MAX_SEQLEN,
        "RUNS": RUNS,
        "COMPILE_BACKEND": COMPILE_BACKEND,
    },
)
eager_gens = ["naive", "kv_dynamic", "pipelined_dynamic", "kv_static", "pipelined_static", "kv_static_no_check"]
compiled_gens = ["kv_static", "pipelined_static", "kv_static_no_check"]
variants = []
for m, gens, prefix in ((model, eager_gens, ""), (compiled, compiled_gens, "compiled ")):
    for g in gens:
        v = tokgen.generator_variant(g, m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, name=prefix + g)
        v.info["compiled"] = m is compiled
        variants.append(v)
results = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)

# %% [markdown]
# ## 2. The ranking

# %%
ok = results[results["status"] == "ok"].copy()
naive_ms = ok.set_index("variant").loc["naive", "median_ms"]
ok["speedup_vs_naive"] = naive_ms / ok["median_ms"]
ok["ms_per_token"] = ok["ms_per_step"]
ranked = ok.sort_values("median_ms")
say(
    table(
        ranked[["variant", "median_ms", "q25_ms", "q75_ms", "speedup_vs_naive", "ms_per_token", "peak_reserved_gb"]],
        digits=2,
    )
)

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
plot_runtimes(ax, ok)
for y, (_, r) in enumerate(ok.sort_values("median_ms", ascending=False).iterrows()):
    ax.text(r["q75_ms"], y, f"  ×{r['speedup_vs_naive']:.1f}", va="center")
ax.set_title(f"The article's generators, B={BATCH_SIZE}, N={MAX_SEQLEN} (× = speed-up over naive)")
save_figure(fig, "09_summary", RESULTS_DIR)

# %%
best = ranked.iloc[0]
recipe = ok.set_index("variant").loc["compiled pipelined_static"]
say(
    f"Fastest: **{best['variant']}**, ×{best['speedup_vs_naive']:.1f} over naive. "
    f"The article's best recipe (compile + static cache + pipelining): ×{recipe['speedup_vs_naive']:.1f}."
)

# %% [markdown]
# ## 3. The article's ten claims on our GPU
#
# Each row is computed from the CSVs of the notebook that measured it; the criterion column
# says how the verdict was decided. A claim whose notebook has not run says "not measured".

# %%
claims = claims_table(RESULTS_DIR)
gpu = tokgen.environment()["gpu"]
say(f"GPU: **{gpu}**\n\n" + table(claims[["#", "experiment", "article", "measured", "verdict"]]))

# %%
claims[["#", "criterion"]]

# %% [markdown]
# ## Summary
#
# * One interleaved run ranks the article's generators on this GPU; the speed-up of the
#   article's best recipe over the naive baseline is read from it.
# * Claims that do not reproduce here are findings about this GPU and software stack, not
#   failures: the article measured an L40S with PyTorch 2.10.
# * Notebooks 10–12 go beyond the article: CUDA graphs, checking the stop every K tokens,
#   counting syncs, and how far all of this is from what the memory bandwidth allows.
#
# ## Exercises
#
# 1. Add `pipelined_static_1stream` to the comparison. Where does it rank?
# 2. Re-run at B = 1 (`-p BATCH_SIZE 1`). Which ranking changes, and why?
# 3. Which claim's verdict is most sensitive to the criterion chosen? Argue for another one.
