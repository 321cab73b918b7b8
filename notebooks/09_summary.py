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
# variant took turns, round after round, in one process, each against the same baseline, the
# naive generator of the same rounds. Then the article's ten claims against what notebooks
# 01–08 measured.
#
# **You will learn:** how to rank variants of one interleaved run, and how a claim's verdict,
# its criterion and its stability are computed from the data.
#
# **What we measure:** nothing; we read `data/07_pipelining.csv` (B = 32, N = 100): each
# variant's paired speed-up over the naive generator and its rank, and every notebook's data
# for the claims. (Expandable segments need their own process: notebook 03.) Since nothing runs
# on the GPU here, the environment printed below is the one that rendered this notebook; the GPU
# and versions of the measurements are read from the CSV.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results
RESULTS_DIR = "../build/lab"  # figures/ go below this folder; ".." overwrites the reference figures
SLICE_RESULTS_DIR = "../slice"  # the same notebooks run in the slices that bracket the L40S (run_all.sh --slice)

# %%

import tokgen
from tokgen.display import plot_dots, save_figure, say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())

# %% [markdown]
# ## 1. The ranking
#
# The table is built by `tokgen.claims.summary_results`
# ([`tokgen/claims.py`](../src/tokgen/claims.py)) from notebook 07's CSV: each variant's
# speed-up over the naive generator is paired round by round, as every speed-up here (notebook
# 00, section 4). The other variants are ranked among themselves (`tokgen.voice.ranking`: a rank
# counts the variants really faster than it); naive is the baseline, listed last and not ranked:
# a sequential run times it only for the rounds its own comparisons need, and its fewer rounds
# leave most of its pairs undecided, so its rank would count few of the variants faster than it,
# whatever its speed.

# %%
results = tokgen.claims.summary_results(DATA_DIR)
env = results.iloc[0]
say(tokgen.voice.measured_text(tokgen.claims.measured_on(env), env["batch_size"], env["max_seqlen"], results["runs"]))
naive = tokgen.label("naive")
ranked = tokgen.claims.summary_ranking(DATA_DIR)  # naive: the baseline, last and not ranked
say(tokgen.display.speedup_table(ranked.assign(rank=ranked.apply(tokgen.display.rank_text, axis=1),
                                               shown=ranked.apply(tokgen.claims.generator_text, axis=1)),
                                 {"rank": "rank", "variant": "shown", "against": "vs"})
    + "\n\n" + tokgen.claims.recipe_row_note(ranked))  # fmt: skip

# %%
shown = results.apply(lambda r: f"{r['variant']}, " + ("the baseline" if r["variant"] == naive else
                                                       f"rank {tokgen.display.rank_text(r)}, "
                                                       f"{int(r['rounds_vs_naive'])} rounds")
                      + (", output wrong" if isinstance(r.get("past_stop"), str) and r["past_stop"] else ""),
                      axis=1)  # fmt: skip
ax = plot_dots(results.assign(shown=shown), "shown", "speedup_vs_naive", low="interval_low_vs_naive",
               high="interval_high_vs_naive", log=True, xlabel="speed-up over naive, paired rounds, at the look "
               "that decided it (its rounds in the label), with the interval the table states (log)")  # fmt: skip
ax.axvline(1, color="grey", lw=0.8)
ax.set_title(f"Notebook 07's generators, B={env['batch_size']}, N={env['max_seqlen']}, ranked round by round")
save_figure(ax.figure, "09_summary", RESULTS_DIR)

# %%
say(tokgen.display.fastest_sentence(ranked, "generator of notebook 07, the article's or our one-stream control"))
nearest = ranked[ranked["rank"].isin(sorted(ranked["rank"].dropna().unique())[:2])]  # rank 1 and the next
say(tokgen.voice.below_first_text(nearest, reasons=True))  # what sets the next rank below: pairs, not naive
say(tokgen.claims.wrong_outputs_text(ranked))  # the ranks above name no mark: say which outputs were wrong

# %% [markdown]
# ## 2. The article's ten claims: the whole GPU and two slices of it
#
# Three regimes, three verdict columns: the whole GPU (`DATA_DIR`), and the same notebooks run by
# `./run_all.sh --slice` inside green-context slices (a green context confines kernels to a
# number of the GPU's SMs, its streaming multiprocessors): by default the two whose measured copy
# bandwidths bracket the L40S's datasheet bandwidth (notebook 13: a datasheet peak against our
# measured copies, so the bracket is approximate). No slice matches it, since slices come in steps
# of SMs; on a GPU slower than the L40S none brackets it either. The first line printed below says
# which case this run is. Where two bracketing slices agree, the verdict holds for a GPU of the
# L40S's bandwidth at the sizes both slices ran; where they differ, it depends on where in between
# the L40S lies. A slice keeps a fraction of this GPU's SMs, so of its compute, less than an
# L40S has (notebook 13): a claim that turns on a generator the slices leave GPU-bound (claim 10's
# GPU shares say which) may read otherwise on an L40S. A regime that has not been run says "not
# measured". A slice runs the slowest notebooks at smaller sizes (the
# list below says which), so where a verdict differs between the whole GPU and a slice, the
# sizes differ too, not only the GPU; and a claim about a size a slice did not run (the article's
# N = 400, say) is not tested there.
#
# Each row is computed from the CSVs of the notebook that measured it; the criteria below the
# table say how each verdict was decided. A comparison is **faster** or **slower** when the
# signed-rank test of its per-round log-ratios gives p below its level (0.05 with fixed rounds;
# in a sequential comparison, its look's share of 0.05), shows **no effect** when two one-sided
# tests put it within ±5%, and is **undecided** otherwise (the measured text says about how many
# rounds would decide it, or that more rounds than those run would; a sequential comparison reads
# "undecided at the cap" where it ran every round its cap allowed, so that only a run with a
# larger cap could decide it, and "not run on to the cap" where its variants stopped before it).
# An undecided comparison leaves a verdict that needs it "inconclusive" unless its interval
# already settles that part: claims 2 and 10 by their thresholds, claims 3, 4, 5, 7, 8 and 9 by
# the ±5% band (an interval that rules out a difference beyond ±5% in the direction the claim
# needs counts as none, and the measured text says so). Claim 1 is judged by intervals too: each
# doubling's paired growth against ×3.25 (its criterion below). A decided verdict read from fixed
# rounds is recomputed on
# bootstrap resamples of the timed rounds, 200 at a time until the share that agrees is clear of
# 95% by more than its own
# Monte Carlo error (at most 3,200): that share is its **stability** (in brackets), and below 95%
# the verdict reads "inconclusive" too, with the reason below the table. Claim 1's rounds run on
# while its verdict is open (notebook 01): it gets no verdict on fewer than 10 rounds, and each
# doubling's interval is read at the level of its look, the looks that may decide spending the 5%
# between them, as in a sequential comparison. A verdict from sequential rounds (their error rates
# are the design's), from claim 1's intervals (they already hold the rounds' noise) or from a
# profile without rounds (claim 6) is not resampled and shows no stability. One whose data a smoke
# run wrote gets no verdict.
#
# The slice columns come from `tokgen.claims.slice_runs`
# ([`tokgen/claims.py`](../src/tokgen/claims.py)): the two slices whose bandwidths, measured by
# notebook 13, lie just below and just above the L40S's, or, where none do, every slice run.

# %%
slices = tokgen.claims.slice_runs(DATA_DIR, SLICE_RESULTS_DIR)
say(tokgen.regimes.slices_note(DATA_DIR))
claims = tokgen.claims.claims_by_regime(DATA_DIR, slices)
overview = tokgen.claims.verdicts_overview(claims, ["whole GPU", *slices])
say("Where each column was measured:\n" + tokgen.claims.regime_sources(DATA_DIR, slices) + "\n\n" + table(overview))

# %%
regimes = {"whole GPU": "", **{name: f" ({name})" for name in slices}}
for regime, suffix in regimes.items():
    say(f"**Why undecided, {regime}:**\n" + tokgen.claims.why_undecided(claims, suffix))

# %%
for regime, suffix in regimes.items():
    say(f"**Measured, {regime}:**\n\n" + table(claims[["#", f"measured{suffix}"]]))

# %%
say(table(claims[["#", "experiment", "article", "criterion"]]))

# %% [markdown]
# ## Takeaways, read from the three runs

# %%
say(tokgen.claims.regime_takeaways(claims, list(regimes), tokgen.claims.recipe_gains(DATA_DIR, slices),
                                   tokgen.claims.regime_commits(DATA_DIR, slices)))  # fmt: skip

# %% [markdown]
# ## Summary
#
# * One interleaved run ranks the article's generators on this GPU; the speed-up of the
#   article's best recipe over the naive baseline is read from it, in each regime (the first
#   takeaway above says what it came to).
# * Claims that do not reproduce here are findings about this GPU and software stack, not
#   failures: the article measured an L40S with PyTorch 2.10.
# * Where two slices bracket the L40S's bandwidth (section 2 says whether they do), they say, claim
#   by claim, whether a verdict holds for a GPU of the L40S's bandwidth at the sizes they ran, or
#   depends on where between them the L40S lies. Neither slice matches the L40S: their bandwidths
#   bracket its, and each has less compute than an L40S.
# * Notebooks 10–14 go beyond the article: CUDA graphs, checking the stop every K tokens,
#   counting syncs, how far all of this is from what the memory bandwidth allows, where hiding
#   the sync pays, and transformers' own deferred stop check.
#
# ## Exercises
#
# 1. Which two variants of the ranking are closest? Is their difference real (p below its level)
#    (`tokgen.gains` on `data/07_pipelining.csv`)?
# 2. Re-run notebook 07 at B = 1 (`-p BATCH_SIZE 1`) and then this one. Which ranking changes,
#    and why?
# 3. Which claim's verdict is most sensitive to the criterion chosen? Argue for another one.
#
# Worked solutions: [`solutions/09_summary.ipynb`](../solutions/09_summary.ipynb).
