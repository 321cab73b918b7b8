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
# # Solutions · 10 CUDA graphs
#
# Worked solutions to the exercises of [notebook 10](../notebooks/10_cuda_graphs.ipynb).
# Timing a CUDA graph and reading its kernels need a GPU; on a CPU every cell still checks the
# tokens (the graph generators then run their steps without capturing them) and says what it
# skipped.
# Every number this page prints (times, speed-ups, idle shares, kernel tables) is measured when it
# runs, recorded one row per measurement in `<RESULTS_DIR>/data/10_cuda_graphs_solution.csv` (with
# where it ran: GPU, commit, versions; the column `exercise` says which exercise, `measure` which
# measurement) and read back from there, as the notebooks read theirs; the set-up cell prints the
# commit and the card they come from.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch
MAX_SEQLEN = 100  # new tokens per sequence
RUNS = 10  # timed rounds, interleaved (the signed-rank rule needs 6 or more)
WINDOW = [20, 100]  # profiled steps for the kernel tables of exercise 3
COMPILE_BACKEND = "inductor"  # "eager" on a CPU: inductor's C++ build takes minutes
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results

# %%
import statistics
import types

import pandas as pd
import torch

import tokgen
from tokgen.display import say, table
from tokgen.stats import run_times
from tokgen.voice import speedup_text

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # the commit and the card behind every live number below
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
BACKEND = COMPILE_BACKEND if CUDA else "eager"
reference = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
rec = tokgen.Recorder("10_cuda_graphs_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement


def recorded(exercise: int, measure: str):
    """This exercise's rows of one measure, as recorded (`tokgen.results.rows_where`)."""
    return tokgen.results.rows_where(rec.read(), exercise=exercise, measure=measure).copy()

# %% [markdown]
# ## Exercise 1: transformers' step, compiled, K = 4
#
# `graph_transformers` captures `GPT2LMHeadModel`'s own forward; compiled, inductor fuses its
# small kernels, but the model still goes through transformers' cache object and masks, which
# the handwritten step leaves out. Whether those account for a difference in time is not
# measured here: this exercise takes no kernel table of either decoder (exercise 3 shows how).
# Same tokens first, then one interleaved timing (GPU).

# %%
compiled = torch.compile(model, backend=BACKEND)
sizes = {"batch_size": BATCH_SIZE, "max_seqlen": MAX_SEQLEN, "steps_per_graph": 4}
variants = [
    tokgen.generator_variant("graph_transformers", compiled, compiled=True, **sizes),
    tokgen.generator_variant("graph_handwritten_compiled", model, compile_backend=BACKEND, **sizes),
]
for v in variants:
    assert torch.equal(v.run(), reference), v.name
say("Both return the naive generator's tokens.")
if CUDA:
    tokgen.compare(variants, rounds=RUNS, device="cuda",
                   record=lambda r: rec.write({"exercise": 1, "measure": "timing", **r}))  # fmt: skip
    results = recorded(1, "timing")  # the rows as recorded
    say(table(results[["variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_share"]], digits=2))
    say(tokgen.voice.host_probe_text(results))  # the host's speed before and after these rounds (review rv23C S2)
    g = tokgen.gain(results, variants[0].name, variants[1].name)
    say(f"`{variants[1].name}` against `{variants[0].name}`: {speedup_text(g)}.")
else:
    say("*Timing CUDA graphs needs a GPU: run this cell there.*")

# %% [markdown]
# ## Exercise 2: what the added steps cost in the WHILE node and in the K = 1 decoder
#
# CUPTI showed a WHILE body's kernels once, not once per iteration, while tokgen was written (no
# output of this repository measures it), so we time whole generations instead: the WHILE node and the
# K = 1 decoder of the same step, each at two lengths, no early stop. In each round, the difference
# of the two lengths' times over the difference of their steps is the mean cost of the steps the
# longer generation adds (its later steps, which read more cached slots: not the cost of one more
# step at any length, and not a line through zero): for
# the K = 1 decoder one graph launch, one flag copy and one host wait per step around the step's
# kernels; for the WHILE node one iteration of the loop on the GPU, its `keep_decoding` condition
# kernel included. The table gives each decoder's per-step cost as the median over rounds. The
# per-step difference, the WHILE node's minus the K = 1 decoder's, is taken round by round (both
# decoders ran in every round), with its interval: it sets the WHILE node's iteration, condition
# kernel included, against the K = 1 decoder's launch, copy and wait, and no timing here splits
# it into those parts. Which decoder is faster over a whole generation is read from their paired
# speed-up at each length, round by round, with its interval.

# %%
device_step = {k: v for k, v in tokgen.GENERATORS["graph_stop_on_device"].keywords.items() if k != "stop_on_device"}
k_step = next(g for g, f in tokgen.GENERATORS.items() if getattr(f, "keywords", None) == device_step)
lengths = sorted({max(2, MAX_SEQLEN // 2), MAX_SEQLEN})
runs = [(k_step, {"steps_per_graph": 1}), ("graph_stop_on_device", {})]
variants = [tokgen.generator_variant(g, model, batch_size=BATCH_SIZE, max_seqlen=n, by=("max_seqlen",), **o)
            for n in lengths for g, o in runs]  # fmt: skip
for v in variants:
    expected = tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=v.info["max_seqlen"])
    assert torch.equal(v.run(), expected), v.name
if CUDA:
    tokgen.compare(variants, rounds=RUNS, device="cuda", gpu_busy=False,
                   record=lambda r: rec.write({"exercise": 2, "measure": "timing", **r}))  # fmt: skip
    timed = recorded(2, "timing")  # the rows as recorded
    timed["max_seqlen"] = timed["max_seqlen"].astype(int)  # a CSV column that other rows leave empty reads as float
    rows, per_round = [], {}
    for generator, t in timed.sort_values("max_seqlen").groupby("generator", sort=False):
        short, long_ = (run_times(r) for r in t.to_dict("records"))  # the two lengths, round by round
        extra = t["max_seqlen"].iloc[-1] - t["max_seqlen"].iloc[0]
        added = f"steps {t['max_seqlen'].iloc[0] + 1}–{t['max_seqlen'].iloc[-1]}"  # the steps the longer one adds
        per_round[generator] = [1e3 * (b - a) / extra for a, b in zip(short, long_)]  # mean µs per added step
        cost = statistics.median(per_round[generator])
        rows.append({"generator": generator, **{f"ms at N={n}": m for n, m in zip(t["max_seqlen"], t["median_ms"])},
                     f"mean µs per step of {added} (median of rounds)": cost})  # fmt: skip
    say(table(pd.DataFrame(rows), digits=2))  # mean µs per added step: medians of differences, no direction
    say(tokgen.voice.host_probe_text(timed))  # the host's speed before and after these rounds (review rv23C S2)
    paired = [w - k for w, k in zip(per_round["graph_stop_on_device"], per_round[k_step])]  # same rounds
    say(f"Per step of {added} (their mean), the WHILE node's cost minus `{k_step}` at K = 1's, round by round: "
        f"{tokgen.display.difference_text(paired)}.")  # fmt: skip
    whole = {}  # N -> the WHILE node against the K = 1 decoder over a whole generation
    for n, t in timed.groupby("max_seqlen"):  # round by round, the WHILE node against the K = 1 decoder
        names = t.set_index("generator")["variant"]
        whole[n] = g = tokgen.gain(timed, names[k_step], names["graph_stop_on_device"])
        say(f"At N = {n}, the WHILE node against `{names[k_step]}`: {speedup_text(g)}.")
    say(tokgen.voice.while_cost_text(paired, whole, k_step))  # the step's sign and the lengths' outcomes (rv23C N4)
else:
    say(f"Both return the naive tokens at N = {' and '.join(map(str, lengths))}. *Timing needs a GPU: run it there.*")

# %% [markdown]
# ## Exercise 3: products and sums, or matrix products? GPT-2's own layout?
#
# Three compiled handwritten decoders at K = 4: as in notebook 10; with the attention's scores
# and weighted sum as matrix products (`q @ keys.T`, `w @ values`: a copy of
# `handwritten_forward` whose `attend_all_slots` is replaced); and with the projection matrices
# in GPT-2's own (in, out) layout (the transposed view of each `Conv1D` weight, not a transposed
# copy made in advance; whether the compiled step copies it anyway, the kernel counts say). Each
# is checked against the naive tokens under notebook 00's rule (another summation
# order may flip a near tie), then profiled as in notebook 10, sections 4 and 5.


# %%
def attend_matmul(q, k, v, keys, values, past):
    """`attend_all_slots` with the cached scores and the weighted sum as matrix products."""
    scale = q.shape[-1] ** -0.5
    cached = (q @ keys.transpose(-1, -2)).masked_fill(~past, float("-inf"))  # (B, H, 1, capacity)
    w = torch.softmax(torch.cat([cached, (q * k).sum(-1, keepdim=True)], dim=-1) * scale, dim=-1)
    return w[..., :-1] @ values + w[..., -1:] * v  # (B, H, 1, D)


forward = tokgen.handwritten.handwritten_forward
matmul_forward = types.FunctionType(forward.__code__, forward.__globals__ | {"attend_all_slots": attend_matmul})
weights = tokgen.handwritten.gpt2_weights(model)  # its (out, in) matrices are transposed copies of GPT-2's (in, out)
in_out = (*weights[:3], tuple(tuple(w.t().contiguous().t() if w.dim() == 2 else w for w in b) for b in weights[3]))

# %%
capacity, eos = tokgen.graph_capacity(MAX_SEQLEN, 4), tokgen.generators.resolve_eos(model, None)
first = tokgen.generators.first_tokens(model, BATCH_SIZE)
naive = tokgen.naive_reference(model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)  # tokens and near ties
decoders, kinds = {}, {}
with torch.inference_mode():
    for name, fwd, w in [("as in notebook 10", None, None), ("attention by matmul", matmul_forward, None),
                         ("(in, out) weights", None, in_out)]:  # fmt: skip
        step = tokgen.HandwrittenStep(model, BATCH_SIZE, capacity, compile_backend=BACKEND)
        if fwd is not None:
            step.forward = torch.compile(fwd, fullgraph=True, dynamic=False, backend=BACKEND)
        if w is not None:
            step.weights = w  # the same matrices, laid out in memory as GPT-2 stores them
        decoders[name] = d = tokgen.GraphDecoder(step, batch_size=BATCH_SIZE, capacity=capacity, eos=eos,
                                                 steps_per_graph=4, device=model.device)  # fmt: skip
        same = tokgen.tokens_match(naive, d.generate(first, MAX_SEQLEN))
        say(f"{name}: the naive tokens under notebook 00's rule? {same}")
        if CUDA:
            run = lambda on_step, d=d: d.generate(first, MAX_SEQLEN, on_step)
            timeline, tokens = tokgen.profiling.profile_decode(run, start=WINDOW[0], stop=WINDOW[1], steps_per_call=4)
            for r in tokgen.profiling.kernel_table(timeline, tokens).to_dict("records"):
                rec.write({"exercise": 3, "measure": "kernels", "variant": name, "tokens": tokens, **r})

# %%
if CUDA:
    for name, rows in recorded(3, "kernels").groupby("variant", sort=False):  # the rows as recorded
        kinds[name] = rows.set_index("kind")
    own = pd.DataFrame({name: k["own_us_per_token"] for name, k in kinds.items()}).fillna(0.0)
    count = pd.DataFrame({name: k["kernels_per_token"] for name, k in kinds.items()}).fillna(0.0)
    say("GPU µs per decode step (own time), by kind:\n\n" + table(own.reset_index(), digits=1))
    say("Kernels per decode step, by kind:\n\n" + table(count.reset_index(), digits=1))
    for name in list(decoders)[1:]:  # "changed most" only for a change of 1% of the busy time or more
        say(tokgen.display.kind_change_text(own, count, "as in notebook 10", name))
else:
    say("*The kernel tables need a GPU: run this cell there.*")

# %% [markdown]
# ## Exercise 4: what programmatic dependent launch buys
#
# A captured graph keeps the launches it recorded, so each setting of `tokgen.kernels.PDL` needs
# its own decoder, captured while the setting holds (its first call). Same tokens first, then
# one interleaved timing and each decoder's idle share and GPU busy time, as in sections 3 to 5 of
# notebook 10. A kernel launched early under PDL counts its wait as busy, so the two idle shares
# are not comparable (notebook 10, section 4), nor are the busy times from the kernels' own times,
# which come from the same busy intervals: the paired timing is.
# The switch changes two things at once: with `PDL` off, `_linear_kernel` neither launches early
# nor starts its slice of the weights into L2 before waiting for its input (`tokgen.kernels`), so
# the paired speed-up is the early launch and the L2 prefetch together, not separated.
# Below compute capability 9 (Hopper) `tokgen.kernels` never launches with PDL, so the two
# decoders are the same and the cell says so instead of timing them.

# %%
pdl_decoders = {}
with torch.inference_mode():
    for pdl in (False, True):
        tokgen.kernels.PDL = pdl  # read when the kernels are launched, i.e. captured
        step = tokgen.TritonStep(model, BATCH_SIZE, capacity)
        decoder = tokgen.GraphDecoder(step, batch_size=BATCH_SIZE, capacity=capacity, eos=eos, steps_per_graph=4,
                                      device=model.device)  # fmt: skip
        assert torch.equal(decoder.generate(first, MAX_SEQLEN), reference)
        pdl_decoders[f"graph_triton_kernels K=4, PDL {'on' if pdl else 'off'}"] = decoder
tokgen.kernels.PDL = True
hopper = CUDA and torch.cuda.get_device_capability()[0] >= 9  # PDL needs compute capability 9 or later
if hopper:
    pdl_variants = [
        tokgen.Variant(name, lambda on_step=tokgen.generators.no_hook, d=d: d.generate(first, MAX_SEQLEN, on_step))
        for name, d in pdl_decoders.items()
    ]
    with torch.inference_mode():
        tokgen.compare(pdl_variants, rounds=RUNS, device="cuda",
                       record=lambda r: rec.write({"exercise": 4, "measure": "timing", **r}))  # fmt: skip
        for v in pdl_variants:  # one profile each: the idle share and the kernels' own times and durations
            timeline, tokens = tokgen.profiling.profile_decode(v.run, start=WINDOW[0], stop=WINDOW[1],
                                                               steps_per_call=4)  # fmt: skip
            rec.write({"exercise": 4, "measure": "idle", "variant": v.name, "tokens": tokens,
                       **timeline.summary(skip=1)})  # fmt: skip
            for r in tokgen.profiling.kernel_table(timeline, tokens).to_dict("records"):
                rec.write({"exercise": 4, "measure": "kernels", "variant": v.name, "tokens": tokens, **r})
    results, pdl_kernels = recorded(4, "timing"), recorded(4, "kernels")  # the rows as recorded
    idle = recorded(4, "idle").set_index("variant").to_dict("index")
    busy = pdl_kernels.groupby("variant")[["own_us_per_token", "us_per_token"]].sum()
    results["gpu_busy_us_per_step"] = results["variant"].map(busy["own_us_per_token"])
    results["durations_us_per_step"] = results["variant"].map(busy["us_per_token"])
    results["gpu_idle_fraction"] = results["variant"].map(lambda n: idle[n]["gpu_idle_fraction"])
    say(table(results[["variant", "median_ms", "q25_ms", "q75_ms", "gpu_busy_us_per_step", "durations_us_per_step",
                       "gpu_idle_fraction"]], digits=3))  # fmt: skip
    say(tokgen.voice.host_probe_text(results))  # the host's speed before and after these rounds (review rv23C S2)
    say(tokgen.display.pdl_idle_caveat(pdl_kernels))  # busy time and idle share count PDL's waits alike
    say(tokgen.display.pdl_gain_text(tokgen.gain(results, pdl_variants[0].name, pdl_variants[1].name)))
elif CUDA:
    say(tokgen.display.pdl_unavailable_text(torch.cuda.get_device_name(), torch.cuda.get_device_capability()))
else:
    say("*Both return the naive generator's tokens; PDL and its timing need a Hopper GPU: run this cell there.*")
