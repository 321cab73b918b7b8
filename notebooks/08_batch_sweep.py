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
# # 08 · Batch-size sweep: when does pipelining pay?
#
# Pipelining hides the gap at each step boundary. Whether that gap matters depends on how long
# the step's own kernels take: small batches mean short kernels, so the fixed gap is a larger
# share of each step.
#
# **You will learn:** how pipelining's gain changes with the batch size, and what the GPU busy
# share says about who sets the pace.
#
# **What this step adds:** the sweep the article ran, with every point's spread.
#
# **What we measure:** N = 100, B = 1, 2, 4, …, 128: static-cache generation synchronous vs
# pipelined, eager and compiled, interleaved per batch size; the gain in % with its
# interquartile range. A batch size that runs out of memory is recorded and the sweep goes on.
#
# **The article's claim:** the largest gain, 11.6%, at the smallest batch, shrinking as B grows.

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
GPU_SMS = None  # run on this many SMs: a green-context slice of the GPU (notebook 13); None: all of it
MAX_SEQLEN = 100  # new tokens per sequence (the article: 100)
BATCH_SIZES = [1, 16, 256]  # batch sizes of the eager sweep (the article: "several")
COMPILED_BATCH_SIZES = [1, 16, 256]  # batch sizes of the compiled sweep
RUNS = 8  # timed runs per variant and batch size, interleaved, after one warm-up (the rule needs 6 or more)
COMPILE_BACKEND = "inductor"  # torch.compile backend ("eager" only traces: CPU smoke runs)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import matplotlib.pyplot as plt
import torch

import tokgen
from tokgen.display import save_figure, say, show_claim, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
SLICE = tokgen.use_slice(GPU_SMS)  # every kernel from here on runs on GPU_SMS SMs (None: the whole GPU)
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE, DEVICE)

# %% [markdown]
# ## 1. Measure
#
# One interleaved comparison per batch size (sync and pipelined), so each batch size's rows are
# on disk as soon as it is done. The compiled model is compiled afresh for every batch size
# (`torch._dynamo.reset()`, then `torch.compile` as in notebooks 05 and 07): left alone,
# torch.compile would mark the batch dimension dynamic after the second size, and the sweep's
# compiled rows would no longer run the kernels of notebooks 05 and 07. (Not `dynamic=False`:
# the newest token's view `tokens[:, -1:]` has a new stride every step, and with static shapes
# every step recompiles until dynamo's limit of 8, then runs eager.) Compilation is in the
# warm-up, not in the timed rounds.
# The article does not say how many runs its sweep used; we use `RUNS` rounds per point.

# %%
rec = tokgen.Recorder("08_batch_sweep", RESULTS_DIR, params=PARAMS)
for is_compiled, sizes in ((False, BATCH_SIZES), (True, COMPILED_BATCH_SIZES)):
    for b in sizes:
        m = model
        if is_compiled:  # a fresh compilation per batch size, specialized to it
            torch._dynamo.reset()
            m = torch.compile(model, backend=COMPILE_BACKEND)
        variants = [
            tokgen.generator_variant(g, m, batch_size=b, max_seqlen=MAX_SEQLEN, compiled=is_compiled, by=["batch_size"])
            for g in ("kv_static", "pipelined_static")
        ]
        res = tokgen.compare(variants, rounds=RUNS, device=DEVICE, record=rec.write)
        print(", ".join(f"{r.variant} {r.status} {r.median_ms:.1f} ms" for r in res.itertuples()))
results = rec.read()
bad = results[results["status"] != "ok"]
if len(bad):
    say(table(bad[["variant", "status", "error"]]))

# %% [markdown]
# ## 2. Pipelining's gain per batch size

# %%
g = tokgen.claims.sweep_gains(RESULTS_DIR)
say(
    table(
        g[["compiled", "batch_size", "speedup", "gain_pct", "gain_q25_pct", "gain_q75_pct", "p_value", "real"]],
        digits=3,
    )
)

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
for compiled_flag, fam in g.groupby("compiled"):
    label = "compiled" if compiled_flag else "eager"
    axes[0].errorbar(
        fam["batch_size"],
        fam["gain_pct"],
        yerr=[fam["gain_pct"] - fam["gain_q25_pct"], fam["gain_q75_pct"] - fam["gain_pct"]],
        marker="o",
        capsize=3,
        label=label,
    )
axes[0].axhline(0, color="grey", lw=0.8)
axes[0].set_xscale("log", base=2)
axes[0].set_xlabel("batch size")
axes[0].set_ylabel("pipelined vs sync: gain % (median, IQR of rounds)")
axes[0].legend()
ok = results[results["status"] == "ok"]
for (compiled_flag, generator), fam in ok.groupby(["compiled", "generator"]):
    fam = fam.sort_values("batch_size")
    axes[1].plot(
        fam["batch_size"],
        fam["ms_per_step"],
        marker="o",
        label=f"{'compiled' if compiled_flag else 'eager'} {generator}",
    )
axes[1].set_xscale("log", base=2)
axes[1].set_xlabel("batch size")
axes[1].set_ylabel("ms per step (median)")
axes[1].legend()
fig.suptitle(f"Pipelining vs batch size, N={MAX_SEQLEN}")
save_figure(fig, "08_batch_sweep", RESULTS_DIR)


# %% [markdown]
# ### Host-bound or GPU-bound?
#
# Per step: the wall time, and the part of it in which the GPU was busy (CUPTI, one profiled run
# per variant). Under half, the host sets the pace, and hiding a sync cannot pay.

# %%
say(tokgen.display.bound_table(ok))
# %% [markdown]
# Read the right panel first: where the time per step hardly changes with B, the step is bound
# by per-step overhead (launches, Python, the sync), not by the GPU's arithmetic. That is the
# regime where hiding the sync could help, provided the GPU and not the CPU is what the next
# step waits for.
#
# ## 3. The article's claim, on our GPU

# %%
show_claim(8, RESULTS_DIR)

# %% [markdown]
# ## Takeaways, read from this run

# %%
for compiled_flag, fam in g.groupby("compiled"):
    won = fam[fam["real"] & (fam["gain_pct"] > 0)]["batch_size"].astype(str).tolist()
    lost = fam[fam["real"] & (fam["gain_pct"] < 0)]["batch_size"].astype(str).tolist()
    steps = ok[ok["compiled"] == compiled_flag].groupby("batch_size")["ms_per_step"].median()
    say(
        f"* {'Compiled' if compiled_flag else 'Eager'}: pipelining is a real gain at B = {', '.join(won) or '(none)'}, "
        f"a real loss at B = {', '.join(lost) or '(none)'}, "
        f"noise at the other {len(fam) - len(won) - len(lost)} sizes. A step takes "
        f"{steps.min():.1f}–{steps.max():.1f} ms from B = {steps.index.min()} to {steps.index.max()} "
        f"(×{steps.iloc[-1] / steps.iloc[0]:.1f} for ×{steps.index.max() // steps.index.min()} the tokens)."
    )

# %% [markdown]
# ## Summary
#
# * The sweep shows at which batch sizes a step is overhead-bound and at which the GPU's work
#   takes over.
# * Pipelining's gain, with its spread, per batch size and per model (eager, compiled), says
#   where hiding the stop check's sync is worth two streams.
#
# ## Exercises
#
# 1. Extend the sweep to B = 256 and 512. Where does the step time start to grow linearly?
# 2. Repeat the sweep with the dynamic cache. Does the picture change?
# 3. Estimate, from the right panel, the per-step overhead that does not depend on B.
#
# Worked solutions: [`solutions/08_batch_sweep.ipynb`](../solutions/08_batch_sweep.ipynb).
