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
# # 00 · Setup: the model, the machine and how we measure
#
# This series rebuilds, step by step, every optimization of the article *Optimizing Token
# Generation in PyTorch Decoder Models* (Towards Data Science, February 2026), then goes
# beyond it. The article's thread: autoregressive decoding makes the CPU ask the GPU "are we
# done?" after every **decode step** (one new token for every sequence of the batch), and, the
# article argues, that `.item()` sync leaves the GPU idle between steps. Terms used throughout
# are explained in the README's [glossary](../README.md#glossary).
#
# **You will learn:** how the model is built without a download, what every generator returns,
# and why variants are timed interleaved and judged by a signed-rank test.
#
# **What this notebook adds:** the model every later notebook uses (GPT-2 small with random
# weights, so nothing is downloaded), the registry of token generators, the benchmark
# method, and one provenance row in `data/` describing the machine.
#
# **What we measure:** no timings yet: whether every generator returns the naive generator's
# tokens, on an all-BOS batch like the article's (BOS: the beginning-of-sequence token every row
# starts from; `BATCH_SIZE` rows of `MAX_SEQLEN` tokens) and on `DISTINCT_PROMPTS` distinct
# prompts, and how far TF32 logits lie from FP32 ones (the yardstick of the one rule for "the same
# tokens"; TF32 is defined in section 1).

# %% tags=["parameters"]
SIZE = "gpt2"  # model: "gpt2" is GPT-2 small (124M, random weights); "tiny" for CPU smoke runs
DEVICE = "cuda"  # "cuda" or "cpu"
BATCH_SIZE = 4  # sequences in the agreement check below
MAX_SEQLEN = 24  # tokens generated in the agreement check below
DISTINCT_PROMPTS = 256  # distinct one-token prompts of the equivalence check (section 3)
DISTINCT_BATCH = 64  # rows per batch of that check (our Triton kernels take at most 64 rows)
DISTINCT_SEQLEN = 100  # tokens generated per prompt in that check
COMPILE_BACKEND = "inductor"  # torch.compile backend of the generators that compile their own step ("eager" on a CPU)
RESULTS_DIR = "../build/lab"  # data/ and figures/ go below this folder; ".." overwrites the reference results

# %%
import pandas as pd

import tokgen
from tokgen.display import say, show_source, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())

# %% [markdown]
# ## 1. The model
#
# The article builds `GPT2LMHeadModel(GPT2Config.from_pretrained("gpt2"))`; `GPT2Config()`'s
# defaults are the same configuration, so we need no network. Weights are random (a fixed
# seed makes them reproducible), fp32, in eval mode, with TF32 matrix multiplications
# (`torch.set_float32_matmul_precision("high")`), exactly as in the article. TF32
# (TensorFloat-32) is how the tensor cores multiply fp32 matrices fast: inputs rounded to a
# 10-bit mantissa, sums kept in fp32; results differ from full FP32 in the last digits.

# %%
show_source(tokgen.build_model)

# %%
model = tokgen.build_model(SIZE, DEVICE)
cfg = model.config
n_params = tokgen.num_parameters(model)
say(tokgen.voice.model_size_text(SIZE, cfg, n_params, tokgen.parameter_bytes(model), model.device))

# %% [markdown]
# ## 2. The generators
#
# Every generator in this repository is a plain function with one signature,
# `fn(model, *, batch_size, max_seqlen, eos_token_id=None, prompt=None, on_step=no_hook, **options)`,
# registered by name in `tokgen.GENERATORS`. Each returns what the article's naive generator
# returns: the prompt column (BOS, or one given token per row) followed by one column per step,
# stopping after the first step at which every sequence has produced EOS at least once.
# `on_step(i)`, called at the top of each step, is the one hook profilers use (notebook 06); the
# options are fixed per registry entry. Each later notebook shows the source of the generator it
# measures before measuring it.

# %%
rows = [
    {
        "name": name,
        "function": getattr(fn, "func", fn).__name__,
        "options": ", ".join(f"{k}={v!r}" for k, v in getattr(fn, "keywords", {}).items()),
        "notebook": tokgen.registry.DESCRIPTIONS[name][0],
        "what it does": tokgen.registry.DESCRIPTIONS[name][1],
    }
    for name, fn in tokgen.GENERATORS.items()
]
say(table(pd.DataFrame(rows)))

# %% [markdown]
# A first check, on the article's batch (every row starts from BOS): every registered generator
# must return exactly the naive generator's tokens. (The test suite checks this more thoroughly,
# including runs that stop early on EOS.) Where one does not, the check stops the notebook with one
# line: where the tokens first differ, and whether the naive generator's two best logits there nearly
# tie (section 3), a difference that other kernels or another GPU can produce, or not.

# %%
reference = tokgen.agreement.naive_reference(model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)  # + its top two
differ = []
for name in tokgen.GENERATORS:
    options = {"compile_backend": COMPILE_BACKEND} if name in tokgen.COMPILES_ITSELF else {}
    out = tokgen.generate(name, model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, **options)
    differ += [line] if (line := tokgen.agreement.exact_failure(reference, out, name)) else []
print(reference.tokens[0].tolist())
more = f" (+{len(differ) - 1} more)" if len(differ) > 1 else ""
assert not differ, f"not the naive generator's exact tokens: {differ[0]}{more}"
say(tokgen.voice.all_agree_text(len(tokgen.GENERATORS), reference.tokens.shape))

# %% [markdown]
# ## 3. Distinct prompts, and the one rule for "the same tokens"
#
# An all-BOS batch makes every row the same sequence: a generator that mixed rows up could not
# show it, and neither could a numeric difference between kernels. So we also start each row from
# its own token. Then two correct implementations can disagree: the TF32 products of one kernel
# round differently from another's, and where a row's two best logits nearly tie, one picks the
# runner-up. The repository therefore states one rule, `tokgen.agreement`, modelled on vLLM's
# `check_logprobs_close` (stop at the first difference, which must be a top candidate); the
# runner-up and tolerance requirement is ours: equal tokens, except that at a row's first
# difference the token must be the naive generator's runner-up *and* its two best logits must lie
# within a tolerance; nothing after that difference is compared (the row continues from another
# token); and the output stops where its own tokens say, with no token past the stop. The tolerance is justified by the
# spread between TF32 and FP32 logits measured below, for the model's own products and for our
# Triton kernels (notebook 10): each computation lies within its spread of the exact logits, so two
# of them can swap two logits only where those lie within twice the sum. The GPU tests keep the
# tolerance above that.

# %%
show_source(tokgen.agreement.agreement)

# %% [markdown]
# Every generator on the distinct prompts, against the naive one, and last the naive loop itself
# with FP32 products (TF32 off): the yardstick for how often a near-tie flips between two correct
# computations.

# %%
options = {name: {"compile_backend": COMPILE_BACKEND} for name in tokgen.COMPILES_ITSELF}
prompts = tokgen.agreement.distinct_prompts(model, DISTINCT_PROMPTS)
checked = tokgen.agreement.check_generators(
    model, list(tokgen.GENERATORS), prompts, batch_size=DISTINCT_BATCH, max_seqlen=DISTINCT_SEQLEN, options=options
)
rec = tokgen.Recorder("00_agreement", RESULTS_DIR, params=PARAMS)
for row in checked.to_dict("records"):
    rec.write(row)
say(table(checked, ["generator", "rows", "identical", "near_ties", "max_tie_gap", "failures"], digits=5))

# %%
say(tokgen.agreement.summary(checked))
assert (checked["failures"] == 0).all(), checked.loc[checked["failures"] > 0, "first_failure"].tolist()

# %% [markdown]
# With random weights, greedy decoding soon settles into repeating a token (the tokens printed in
# section 2 show it), and EOS, the end-of-sequence token (here the same id as BOS), may never
# come: as in the article, runs then go to `max_seqlen` and the EOS check costs time without ever
# firing. The tests force early stops by choosing another `eos_token_id`.
#
# ## 4. How we time
#
# The article timed each variant 10 times in a row after one warm-up, synchronizing around a
# host timer, with `empty_cache()` and `reset_peak_memory_stats()` before every run. We keep
# all of that, and change how runs are ordered and judged. A run whose pace the host sets (eager
# generators, `generate()`) can be slowed by whatever else the CPU is doing at the time, and such
# slowdowns can last longer than one run; a run replayed from CUDA graphs does little host work
# per step (notebook 10's interquartile ranges show how far each kind spread in our runs). So
# `tokgen.compare` runs the variants **interleaved**: one **round** runs each variant once, in a
# fresh random order each round (so that no rhythm of the host can favour one of them), all in
# one process; each round's two times of two variants form a **pair**, and a slow phase of the
# host slows both.
#
# **One speed measure.** Each round gives two variants' times a pair, t_base and t. The
# **speed-up** ×s is the median over the rounds of t_base / t: above ×1 the variant is faster. It
# is shown with the interquartile range (IQR: from the 25th to the 75th percentile, the middle
# half) of the per-round ratios, so a reader sees how much the rounds agree. Every table of
# speed-ups in these notebooks reads this way (`tokgen.gains`).
#
# **Three outcomes.** A difference is **real**, faster or slower, when the Wilcoxon signed-rank
# test of the per-round log-ratios gives p below the threshold printed below. Two runs of the same
# variant give log-ratios symmetric about zero, so the test calls pure noise real at most that
# often; `tests/test_stats.py` measures that rate on simulated host noise, `tests/test_gpu.py` on
# a real variant timed against itself. A comparison shows **no effect** when two one-sided
# signed-rank tests put the speed-up inside a narrow band around ×1, from ×1/1.05 to ×1.05
# (`tokgen.stats.BAND` = 0.05: ±log 1.05 in log terms, about −4.8% to +5%; the pages write it "within
# ±5%"). Neither is **undecided**: the
# rounds were too few for their spread; a table with fixed rounds says about how many would decide
# it (or that more than it ran would), a sequential one that the comparison ran to its cap (below).
#
# **Sequential rounds.** How many rounds a comparison needs depends on the host's noise, which
# nobody knows beforehand. So a notebook can name the comparisons it needs (`pairs`) and a cap
# (`MAX_RUNS`): `tokgen.compare` then judges each comparison at *looks*, after `RUNS` rounds and
# after twice as many each time, doubling up to the cap, which is always a look
# (`tokgen.stats.looks_up_to`: with `RUNS = 10` and `MAX_RUNS = 80`, after 10, 20, 40 and 80
# rounds), and stops it at the first look that decides it; only the variants of comparisons still
# undecided keep running, in a fresh random order each round. Looking several times gives noise
# several chances to look real, so each look tests at a smaller level than a single test's 0.05.
# Look k, after n_k of the cap's n_K rounds, gets the share of 0.05 that its new rounds are of
# the cap: a_k = 0.05 · (n_k − n_{k−1}) / n_K, with n_0 = 0 (`tokgen.stats.look_levels`). For 10,
# 20, 40 and 80 rounds that is 0.00625, 0.00625, 0.0125 and 0.025, which add up to 0.05. However
# the looks depend on one another, and however the host drifts, the chance that any look calls a
# variant against itself faster or slower is then at most that sum, the same design target as a
# single test's; so is the chance of calling an effect at the band's edge "no effect". A small
# level asks more of few rounds: the table after the next cell gives the fewest rounds that can
# reach each look's level. Each comparison reports the rounds it used and the **interval** of its
# speed-up at its look's level. By the same sum, the looks' intervals hold the true speed-up
# together at least 95% of the time (for a speed-up that is the same in every round), whichever
# look a comparison stops at: the pages call it a **95% sequential interval**. "No effect" is
# judged on a narrower interval: each of the two one-sided tests, at the look's level, checks one
# end of the interval at twice that level, the **equivalence interval**, and "no effect" means it
# lies inside the band. A comparison shown to lie within the band prints both: its equivalence
# interval inside the band, and its 95% sequential interval, which, being wider, may reach past
# the band's edges. Both are true, at different confidence. One still undecided
# at the cap shows why in its interval, which holds both ×1 and the band's edge. Two identical
# variants can end there too: after the cap's rounds neither real nor shown to be "no effect",
# which is why the design needs a cap. The
# error-rate table after the next cell reads, as a simulation measured them on the noise of our
# recorded rounds and on simulated host noise (`tokgen_tools.seqsim`), both error rates (the
# false "no effect" at the worse of the band's two edges), the power, and how often a variant
# against itself stays undecided at the cap. The recorded rounds are those of the tables the
# simulation found when it ran, which can be an earlier run's than the notebooks beside it: the
# line under the table says which run's, where the CSV records it.
#
# After the rounds, one more run of each variant under the profiler (torch.profiler, which reads
# the GPU's activity through CUPTI, NVIDIA's profiling interface) gives its **GPU busy time**:
# the share of the wall time in which the GPU ran anything says whether the run was host-bound
# or GPU-bound.
#
# The harness is [`tokgen.bench.compare`](../src/tokgen/bench.py); its rounds, in short
# (`attempt` empties the allocator's cache, resets its peak counters and times one call with the
# device synchronized before and after, `time_run`):
#
# ```python
# orders = round_orders(len(variants), rounds, random.Random(seed))  # a fresh permutation per round
# for order in orders:
#     for position, v in enumerate(variants[i] for i in order):
#         ms = attempt(v)  # recorded with its place in the round
# ```
#
# One warm-up call per variant comes first (its time is `first_call_ms`); a variant that runs out
# of memory or fails is recorded with its status and the others go on.

# %% [markdown]
# How many rounds does the test need? Its p-value cannot be smaller than that of every round
# agreeing, 2/2ⁿ for n rounds: a single test (fixed rounds) at 0.05 needs 2/2ⁿ below 0.05, a
# look of the sequential design 2/2ⁿ below its own, smaller level. Each later notebook states
# what its own `RUNS` can decide.

# %%
counts = range(3, 11)
smallest = [tokgen.stats.signed_rank_p([1.0] * n) for n in counts]  # every round agreeing
say(table(pd.DataFrame({"rounds": counts, "smallest possible p": smallest}), digits=3))
fewest = min(n for n, p in zip(counts, smallest) if p < tokgen.stats.ALPHA)
say(tokgen.voice.fewest_rounds_text(fewest))
looks = tokgen.stats.looks_up_to(80)
levels = tokgen.stats.look_levels(looks)
needed = [next(n for n in range(1, 64) if tokgen.stats.signed_rank_p([1.0] * n) < a) for a in levels]
say(
    table(
        pd.DataFrame(
            {
                "look after (rounds)": looks,
                "level": [tokgen.voice.level_text(a) for a in levels],
                "fewest rounds that can reach it (all agreeing)": needed,
            }
        )
    )
)
say(tokgen.voice.first_look_text(levels[0], needed[0]))
say(tokgen.display.design_text(looks))
say(table(tokgen.stats.shown_error_rates(tokgen.stats.sequential_error_rates(tokgen.results.ROOT / "data"))))
say(tokgen.stats.recorded_rounds_source(tokgen.results.ROOT / "data"))  # whose tables the recorded noise is

# %% [markdown]
# ## 5. Provenance
#
# Every row any notebook writes to `data/` carries the GPU (by name, and by its UUID, which tells
# two machines of one kind apart), driver, CUDA, torch, triton (the compiler behind
# `torch.compile`'s kernels), transformers and Python versions, the git commit, the GPU slice it
# ran in (`gpu_sms`: "all" for the whole GPU), the notebook's parameters (`params`, as JSON) and
# when it was recorded. Here is what this machine's row says about the machine.

# %%
rec = tokgen.Recorder("00_setup", RESULTS_DIR, params=PARAMS)
rec.write(
    {"size": SIZE, "device": str(model.device), "parameters": n_params, "weight_bytes": tokgen.parameter_bytes(model)}
)
row = rec.read().iloc[0]
machine = [*tokgen.environment(), "gpu_sms", "slice_copy_gbs"]
unset = {**tokgen.results.UNSET, "slice_copy_gbs": "(whole GPU: no slice measured)"}
values = [unset.get(c, "") if pd.isna(row[c]) else row[c] for c in machine]
say(table(pd.DataFrame({"column": machine, "value": values})))

# %% [markdown]
# ## Summary
#
# * The model is GPT-2 small with random weights, fp32 with TF32 matmuls, built locally.
# * All generators share one signature. On an all-BOS batch like the article's (section 2) they
#   must return exactly the naive generator's tokens (the check stops the notebook where one does
#   not, naming the row and step); on distinct prompts, under one stated rule: equal,
#   or the naive generator's runner-up at a near-tie within a tolerance justified by the
#   TF32-vs-FP32 spread.
# * Variants are timed interleaved and compared by one measure: the paired speed-up × (the median
#   of the per-round ratios) with its (sequential) interval and its outcome: faster, slower, no
#   effect (shown within ×1/1.05 to ×1.05, "±5%" in the pages' words), or undecided (section 4).
#   A difference is real only if a signed-rank test over the rounds says so, a rule whose
#   false-positive rate the tests measure; "no effect" and "undecided" are told apart.
#
# ## Exercises
#
# 1. Build the model with `SIZE="tiny"` and compare its parameter count with GPT-2 small's.
# 2. Why does greedy decoding from random weights repeat itself? Print the first 50 tokens of
#    one sequence and look at the logits' spread at one step.
# 3. Pick an `eos_token_id` that appears in `reference.tokens[0]` and check that every generator
#    stops at the same step.
#
# Worked solutions: [`solutions/00_setup.ipynb`](../solutions/00_setup.ipynb).
