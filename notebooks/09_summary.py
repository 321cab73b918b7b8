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
# # 09 · Summary: every generator of the article, side by side
#
# The article closes with one table: static cache, compilation and pipelining at B = 32,
# N = 100, sorted by runtime, the best about 5× its baseline. A ranking is only fair when the
# variants ran together, so this notebook measures nothing new: it ranks the **one interleaved
# run** of notebook 07, where the naive baseline and every cache, compile and pipelining
# variant took turns, round after round, in one process. Then the article's ten claims against
# what notebooks 01–08 measured.
#
# **You will learn:** how to rank variants of one interleaved run, and how a claim's verdict,
# its criterion and its stability are computed from the data.
#
# **What we measure:** nothing; we read `data/07_pipelining.csv` (B = 32, N = 100): runtime,
# speed-up over the naive generator, memory. (Expandable segments need their own process:
# notebook 03.) Since nothing runs on the GPU here, the environment printed below is the one
# that rendered this notebook; the GPU and versions of the measurements are read from the CSV.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results
RESULTS_DIR = "../build/lab"  # figures/ go below this folder; ".." overwrites the reference figures
SLICE_RESULTS_DIR = "../slice"  # the same notebooks run on the L40S-class slice (run_all.sh --slice)

# %%
import matplotlib.pyplot as plt

import tokgen
from tokgen.display import plot_runtimes, save_figure, say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())

# %% [markdown]
# ## 1. The ranking

# %%
show_source(tokgen.claims.summary_results)

# %%
results = tokgen.claims.summary_results(DATA_DIR)
env = results.iloc[0]
say(
    f"Measured on **{env['gpu']}** (driver {env['driver']}, torch {env['torch']}, transformers "
    f"{env['transformers']}), commit `{env['commit']}`, batch size {env['batch_size']}, "
    f"{env['max_seqlen']} new tokens, {env['runs']} interleaved rounds."
)
cols = ["variant", "median_ms", "q25_ms", "q75_ms", "speedup_vs_naive", "ms_per_step", "peak_reserved_gb"]
say(table(results[cols], digits=2))

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
plot_runtimes(ax, results)
for y, (_, r) in enumerate(results.sort_values("median_ms", ascending=False).iterrows()):
    ax.text(r["q75_ms"], y, f"  ×{r['speedup_vs_naive']:.1f}", va="center")
ax.set_title(f"The article's generators, B={env['batch_size']}, N={env['max_seqlen']} (× = speed-up over naive)")
save_figure(fig, "09_summary", RESULTS_DIR)

# %%
best = results.iloc[0]
recipe = results.set_index("variant").loc[tokgen.label("pipelined_static", compiled=True)]
say(
    f"Fastest: **{best['variant']}**, ×{best['speedup_vs_naive']:.1f} over naive. "
    f"The article's best recipe (compile + static cache + pipelining): ×{recipe['speedup_vs_naive']:.1f}."
)

# %% [markdown]
# ## 2. The article's ten claims, on the whole GPU and on an L40S-class slice
#
# Two regimes, two verdict columns: the whole GPU (`DATA_DIR`), where every generator built on
# transformers is host-bound, and the same notebooks run by `./run_all.sh --slice` inside a
# green-context slice whose copy bandwidth is closest to the L40S's (notebook 13), where the
# GPU's share of a step is far larger. A regime that has not been run says "not measured".
#
# Each row is computed from the CSVs of the notebook that measured it; the criteria below the
# table say how each verdict was decided. A difference counts as real when the signed-rank test
# of its per-round log-ratios gives p < 0.05. Each verdict is then recomputed on 200 bootstrap
# resamples of the timed rounds: its **stability** is the share that agree, and a verdict below
# 95% reads "inconclusive". A claim whose notebook has not run says "not measured"; one whose
# data a smoke run wrote gets no verdict.

# %%
claims = tokgen.claims.claims_by_regime(DATA_DIR, SLICE_RESULTS_DIR)
percent = lambda x: f"{x:.0%}" if x == x else ""
shown = claims.assign(**{c: claims[c].map(percent) for c in ("stability", "stability (slice)")})
columns = ["#", "experiment", "verdict", "stability", "verdict (slice)", "stability (slice)"]
say(f"Measured on **{env['gpu']}**\n\n" + table(shown[columns]))

# %%
say(table(shown[["#", "article", "measured", "measured (slice)"]]))

# %%
say(table(claims[["#", "experiment", "criterion"]]))

# %% [markdown]
# ## Takeaways, read from the two runs

# %%
verdicts = {c: claims[c].str.replace(r" \(.*", "", regex=True) for c in ("verdict", "verdict (slice)")}  # no details
for regime, column in (("Whole GPU", "verdict"), ("L40S-class slice", "verdict (slice)")):
    say(f"* {regime}: " + ", ".join(f"{n} {v}" for v, n in verdicts[column].value_counts().items()) + ".")
moved = claims[verdicts["verdict"] != verdicts["verdict (slice)"]]
say(
    f"* The verdict depends on the regime for claim(s) {', '.join(map(str, moved['#']))}."
    if len(moved)
    else "* Both regimes give the same verdicts."
)

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
# 1. Which two variants of the ranking are closest? Is their difference real (p < 0.05)
#    (`tokgen.gains` on `data/07_pipelining.csv`)?
# 2. Re-run notebook 07 at B = 1 (`-p BATCH_SIZE 1`) and then this one. Which ranking changes,
#    and why?
# 3. Which claim's verdict is most sensitive to the criterion chosen? Argue for another one.
#
# Worked solutions: [`solutions/09_summary.ipynb`](../solutions/09_summary.ipynb).
