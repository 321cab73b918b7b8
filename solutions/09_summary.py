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
# # Solutions · 09 summary
#
# Worked solutions to the exercises of [notebook 09](../notebooks/09_summary.ipynb). Exercises 1
# and 3 read the reference results in `data/` and `slice/`; exercise 2 measures the ranking at
# B = 1 itself (on a GPU; on a CPU with the tiny model it tests the code and measures nothing).
# Exercise 2's numbers at B = 1 (ranks, speed-ups, GPU shares) are live measurements of this page's
# own run that no CSV records; its B = 32 columns are read from the reference results.

# %% tags=["parameters"]
DATA_DIR = ".."  # the tables are read from <DATA_DIR>/data: ".." is the repository's reference results
SIZE = "gpt2"  # the model of exercise 2: "gpt2" (GPT-2 small) or "tiny" for CPU runs
MAX_SEQLEN = 100  # new tokens per sequence in exercise 2 (notebook 07: 100)
RUNS = 8  # interleaved rounds in exercise 2 (the signed-rank rule needs 6 or more)
COMPILE_BACKEND = "inductor"  # torch.compile backend of exercise 2 ("eager" on a CPU)

# %%
import torch

import tokgen
from tokgen.display import say, speedup_text, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured

# %% [markdown]
# ## Exercise 1: the two closest variants
#
# Notebook 09 ranks notebook 07's variants among themselves, round by round (naive is the unranked
# baseline): rank = 1 + the number of variants shown faster (really faster, and not shown within
# ±5% of it), directly or through one shown faster; pairs shown within ±5% share the better rank
# unless that puts one beside or above a variant shown faster than it (`tokgen.voice.ranking`;
# only a cycle of wins shares one rank among variants that beat each other). The closest
# pair is read from each pair's own paired comparison: among the pairs shown within ±5%, the one
# whose equivalence interval is narrowest (`tokgen.display.closest_pair_text`); where no pair is
# shown within ±5%, the one whose paired speed-up is nearest ×1, and its outcome says whether the
# rounds tell those two apart (the same rule every notebook uses).

# %%
ranked = tokgen.claims.summary_results(DATA_DIR)
names = list(ranked["variant"][ranked["rank"].notna()])  # the ranked variants: naive is the baseline
pairs = [tokgen.gain(ranked, a, b) for i, a in enumerate(names) for b in names[i + 1:]]
say(tokgen.display.closest_pair_text(pairs))

# %% [markdown]
# ## Exercise 2: the ranking at B = 1
#
# Notebook 07's run at B = 1, in short: the synchronous, pipelined and no-check static-cache
# generators, eager and compiled, and the naive baseline, interleaved. At B = 1 a step carries
# less GPU work than at B = 32, so the host's share of each step should grow, and with it the
# weight of what each generator does on the CPU; the two GPU share columns (B = 1, and the
# reference run at B = 32 over the rounds its comparison shared) say whether it did. The table
# puts each variant's rank at B = 1 beside its rank among the same variants in the reference run at
# B = 32 (ranked the same way, naive the unranked baseline in both), which ran in
# another session: where two neighbours' own comparison is undecided, a swap between them may be
# that session's noise, not B's doing; the shares too are host times of two sessions.

# %%
model = tokgen.build_model(SIZE)  # on the GPU if there is one
compiled = torch.compile(model, backend=COMPILE_BACKEND)
names = ["naive", "kv_static", "pipelined_static", "kv_static_no_check"]
variants = [tokgen.generator_variant(n, m, batch_size=1, max_seqlen=MAX_SEQLEN, compiled=m is compiled)
            for m in (model, compiled) for n in names if not (n == "naive" and m is compiled)]  # fmt: skip
one = tokgen.compare(variants, rounds=RUNS, device=model.device, gpu_busy=model.device.type == "cuda")
one = one[one["status"] == "ok"]
at_1 = tokgen.display.ranking(one, tokgen.label("naive"), baseline=True)  # as notebook 09 ranks: naive unranked
at_32 = tokgen.display.ranking(ranked, tokgen.label("naive"), list(at_1["variant"]), baseline=True)  # reference
ref = "rank among these at B = 32 (reference)"  # these variants alone, not notebook 09's whole table
ranks = at_1.assign(**{"rank at B = 1": at_1.apply(tokgen.display.rank_text, axis=1)}).merge(
    at_32.assign(**{ref: at_32.apply(tokgen.display.rank_text, axis=1)})[
        ["variant", ref, "rank"]].rename(columns={"rank": "rank_32"}), on="variant")
share_32 = tokgen.stats.shared_rounds(ranked).set_index("variant")["gpu_busy_share"]  # over its shared rounds
ranks = ranks.merge(one[["variant", "gpu_busy_share"]], on="variant")
ranks["GPU share at B = 32 (reference)"] = ranks["variant"].map(share_32)
ranks = ranks.rename(columns={"gpu_busy_share": "GPU share at B = 1"})
say(table(ranks, ["variant", "rank at B = 1", ref, "GPU share at B = 1",
                  "GPU share at B = 32 (reference)"], digits=2))  # fmt: skip

# %%
say(f"With `{SIZE}` on `{model.device}`: " + tokgen.display.fastest_sentence(at_1, "variant at B = 1") + " "
    + tokgen.display.rank_moves_text(ranks[ranks["rank"].notna()]))  # fmt: skip (the baseline has no rank)
base = tokgen.label("kv_static")
against = {
    "compiling": tokgen.label("kv_static", compiled=True),
    "skipping the check": tokgen.label("kv_static_no_check"),
    "a second stream": tokgen.label("pipelined_static"),
}
lines = [f"- {what}: {speedup_text(tokgen.gain(one, base, v))}" for what, v in against.items()]
busy = tokgen.display.busy_at_b1_text(ranks.set_index("variant")["GPU share at B = 1"], share_32)
say(f"Against `{base}` at B = 1:\n" + "\n".join(lines) + (f"\n\n{busy}" if busy else ""))

# %% [markdown]
# ## Exercise 3: the criterion that matters most
#
# A verdict can be fragile in two ways. *Noise*: the stability column (the share of resampled
# runs giving the same verdict) and the undecided comparisons say how far the rounds' noise could
# move it; more rounds help there. *The criterion*: where a measured key sits near a threshold
# (for an unstable verdict the "why" column gives the key and its resampled range; for a
# stable one, set notebook 09's measured value beside the thresholds in the "criterion"
# column), another
# reasonable threshold would change the verdict, and no number of rounds helps. The table lists
# the inconclusive claims first (those open outright, with no stability, then those whose
# resampled runs disagree), then the decided verdicts that were resampled, least stable first,
# then the decided verdicts that were not resampled (read from a sequential run's rounds, from
# claim 1's intervals, or from no timed rounds: they have no stability), last the claims with no
# verdict; its "kind" column
# names the group. Read the "why" column to tell noise from the criterion. The sentence under the
# table sets each decided verdict's one measured key (where a claim has one) beside its nearest
# threshold and names the nearest.
# Claim 10's thresholds (×4 reproduced, ×2.5 partly, for the article's ≈ ×5) are one choice; a
# criterion relative to the best measured generator would judge the recipe, not the GPU.

# %%
claims = tokgen.claims.claims_table(DATA_DIR, resamples=200)
ranked_claims = tokgen.display.fragility_order(claims)  # inconclusive, resampled, decided not resampled, none
say(table(ranked_claims[["#", "experiment", "kind", "verdict", "stability", "why", "criterion"]], digits=2))
say(tokgen.display.closest_to_criterion(claims, tokgen.claims.criterion_keys(DATA_DIR)))  # the criterion's side
