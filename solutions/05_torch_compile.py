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
# # Solutions · 05 torch.compile
#
# Worked solutions to the exercises of [notebook 05](../notebooks/05_torch_compile.ipynb).
# On a GPU they compile with inductor, as the notebook does: exercise 1 then takes minutes
# (max-autotune tries several kernels per matrix product). On a CPU they compile with dynamo's
# `"eager"` backend, which traces and guards exactly as inductor's compilations do but generates
# no code: the counts of compilations are the same, the timings measure nothing.
# Every number this page prints is measured in its own run (exercise 1's compilations, first calls and
# timed rounds, exercise 2's counts and dynamo's reasons, exercise 3's GPU operations per step), recorded one
# row per measurement in `<RESULTS_DIR>/data/05_torch_compile_solution.csv` (with where it ran: GPU, commit,
# versions; the column `exercise` says which exercise, `measure` which measurement) and read back from there,
# as the notebooks read theirs.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch (notebook 05: 32)
MAX_SEQLEN = 100  # new tokens per generation (notebook 05: 100)
RUNS = 12  # interleaved rounds of exercise 1's one comparison (the signed-rank rule needs 6 or more)
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results

# %%
import contextlib
import logging
from logging.handlers import BufferingHandler

import torch
from torch._dynamo.utils import counters

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
BACKEND = "inductor" if CUDA else "eager"  # inductor's C++ build takes minutes on a small CPU
rec = tokgen.Recorder("05_torch_compile_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement


def recorded(exercise: int, measure: str):
    """This exercise's rows of one measure, as recorded (`tokgen.results.rows_where`)."""
    return tokgen.results.rows_where(rec.read(), exercise=exercise, measure=measure).copy()


# %%
@contextlib.contextmanager
def dynamo_log_lines(whole: bool = False):
    """The first line of each record dynamo logs inside the block (`whole`: each record whole), kept
    in the list it yields instead of printed on stderr: the cell's text reports them."""
    log, caught = logging.getLogger("torch._dynamo"), BufferingHandler(capacity=10_000)
    saved = log.handlers[:], log.propagate
    log.handlers, log.propagate = [caught], False
    lines = []
    try:
        yield lines
    finally:
        log.handlers, log.propagate = saved
        lines += [m if whole else m.splitlines()[0] for m in (r.getMessage() for r in caught.buffer)]


def compilations(generator: str, **compile_options) -> int:
    """Frames dynamo compiled during one generation of `generator` on a freshly compiled model."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend=BACKEND, **compile_options)
    tokgen.generate(generator, compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    return counters["frames"]["ok"]


# %% [markdown]
# ## Exercise 1: `dynamic=False` and `mode="max-autotune-no-cudagraphs"`
#
# With static shapes, every new shape or stride of an input is a new graph. The generators feed
# the newest token as the view `tokens[:, -1:]` of a tensor that grows by one column per step,
# so its stride changes every step: with `dynamic=False` each step recompiles, until dynamo's
# recompile limit, after which dynamo compiles nothing more for it: shapes its compiled graphs
# cover run compiled, any other runs eager. Left alone
# (`dynamic=None`), dynamo marks the stride dynamic after the second shape and compiles again;
# the table counts the compilations of each setting.
# This is why notebooks 08 and 13 compile per batch size with the default and not with
# `dynamic=False`. `mode="max-autotune-no-cudagraphs"` changes what inductor generates (it times
# several kernels for each matrix product and keeps the fastest), not when dynamo compiles.
#
# Each setting is compiled in turn, each into new, empty on-disk caches (`tokgen.fresh_compile_caches()`,
# as notebook 05 does), and its first call, which holds all its compilation, is timed alone. Then the
# eager model and every compiled setting are timed together in **one** `tokgen.compare`, each round in a
# fresh random order: each setting's steady state is read against eager and against `compiled, default`
# from the same rounds. Nothing resets dynamo between compiling and timing (`torch._dynamo.reset()` would
# drop the compiled code), so all settings compile the same model's forward, and dynamo's recompile limit
# counts the compilations of all of them together: each setting compiles with the limit raised by the
# compilations made before it, so that it meets the limit where it would alone. Once a setting has met
# it, dynamo compiles nothing more for that forward in this process (it runs what it compiled, else
# eager), so `dynamic=False`, which meets it, compiles last. When it does, dynamo says so in a warning:
# the table shows it. Sharing that forward, the settings also share its dynamo cache: whether one
# setting's compiled code there changes another's steady state is not measured here (timing each
# setting in its own process would show it), and the speed-ups against eager are this page's
# session's, not notebook 05's.

# %%
settings = {"default": {}}
if CUDA:  # a mode of inductor's: the eager backend ignores it
    settings["mode=max-autotune-no-cudagraphs"] = {"mode": "max-autotune-no-cudagraphs"}
settings["dynamic=False"] = {"dynamic": False}  # last: after the recompile limit nothing more compiles
LIMIT = torch._dynamo.config.recompile_limit  # per code object, over every setting's compilations
torch._dynamo.reset()  # before compiling, never between compiling and timing: the compiled code must live on
eager = tokgen.generator_variant("kv_static", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
variants, first_calls, compiled_before = [eager], {}, 0
for name, options in settings.items():
    tokgen.fresh_compile_caches()  # new, empty on-disk caches for this setting: its first call compiles cold
    compiled = torch.compile(model, backend=BACKEND, **options)
    variant = tokgen.generator_variant("kv_static", compiled, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    variant.name = f"compiled, {name}"
    counters.clear()
    with dynamo_log_lines() as said, torch._dynamo.config.patch(recompile_limit=LIMIT + compiled_before):
        first_ms, _ = tokgen.bench.time_run(variant.run, model.device)  # every compilation of this setting
    made = counters["frames"]["ok"]
    warned = "; ".join(dict.fromkeys(said)) or "none"
    first_calls[variant.name] = {"compilations": made, "recompile_limit": LIMIT + compiled_before,
                                 "dynamo_warnings": warned, "compiling_call_s": first_ms / 1e3}  # fmt: skip
    compiled_before += made
    variants.append(variant)

# %% [markdown]
# The timing: one comparison of all of them, each compiled setting against eager, and the other
# settings against `compiled, default`. One look of a fixed number of rounds: each pair is judged
# at level 0.05 on its own, with no correction over the pairs, so among all of them one false
# "faster" or "slower" is more likely than 5%.

# %%
default = variants[1].name
pairs = [(eager.name, v.name) for v in variants[1:]] + [(default, v.name) for v in variants[2:]]
counters.clear()
timed = []  # compare's rows, one per variant: written after the rounds with what the first calls did
with dynamo_log_lines() as said_timing:  # one look of RUNS rounds: each pair judged at level 0.05
    tokgen.compare(variants, rounds=RUNS, max_rounds=RUNS, pairs=pairs, device=model.device, gpu_busy=False,
                   record=timed.append)  # fmt: skip
recompiled = counters["frames"]["ok"]  # compilations in the warm-up calls and the timed rounds
for r in timed:  # times_ms, looks and order_seed: each speed-up recomputes from the CSV
    rec.write({"exercise": 1, "measure": "timing", **r, **first_calls.get(r["variant"], {}),
               "dynamo_recompile_limit": LIMIT, "compiled_in_rounds": recompiled,
               "dynamo_said_in_rounds": "; ".join(dict.fromkeys(said_timing))})  # fmt: skip

# %%
results = recorded(1, "timing")  # the rows as recorded
done = results[results["variant"] != eager.name].copy()  # the compiled settings
done["compilations"] = done["compilations"].astype(int)  # a column the eager row leaves empty reads as float
done["recompile limit in force"] = done["recompile_limit"].astype(int)
done["dynamo's warnings"], done["first call, s"] = done["dynamo_warnings"], done["compiling_call_s"]
done["timed"] = done["status"]
done["against eager"] = [tokgen.display.speedup_text(tokgen.gain(results, eager.name, v)) for v in done["variant"]]
done[f"against `{default}`"] = [
    "—" if v == default else tokgen.display.speedup_text(tokgen.gain(results, default, v)) for v in done["variant"]
]
columns = ["variant", "compilations", "recompile limit in force", "dynamo's warnings", "first call, s", "timed",
           "against eager", f"against `{default}`"]  # fmt: skip
say(f"B = {BATCH_SIZE}, N = {MAX_SEQLEN}, backend `{BACKEND}`, {RUNS} interleaved rounds:\n\n"
    + table(done, columns, digits=1))  # fmt: skip
then = results.iloc[0]  # what followed the first calls, the same on every row
said_then = then["dynamo_said_in_rounds"] if isinstance(then["dynamo_said_in_rounds"], str) else ""  # empty: nothing
in_rounds, limit = int(then["compiled_in_rounds"]), int(then["dynamo_recompile_limit"])
total = int(done["compilations"].sum()) + in_rounds  # the first calls' and the rounds'
say(tokgen.display.compile_rounds_text(RUNS, in_rounds, said_then, limit, default, total))
for row in done[done["dynamo's warnings"].str.contains("recompile_limit")].to_dict("records"):
    g = tokgen.gain(results, eager.name, row["variant"])
    say(tokgen.display.recompile_limit_text(row["variant"], row["compilations"], g))

# %% [markdown]
# ## Exercise 2: the dynamic cache on the compiled model
#
# A `DynamicCache` grows by one position per step: the keys' and values' length is a new shape
# every step. Each time a guard fails dynamo recompiles and marks what changed as dynamic;
# after a few compilations (counted below, each recompilation with the guard that failed) one
# graph serves every further step, until a shape it did not expect (another batch size).

# %%
measured = []
torch._logging.set_logs(recompiles=True)  # dynamo logs the guard that failed at each recompilation
for name in ("kv_dynamic", "kv_static"):
    with dynamo_log_lines(whole=True) as said:
        made = compilations(name)
    measured.append({"exercise": 2, "measure": "compilations", "generator": name, "compilations": made})
    measured += [{"exercise": 2, "measure": "recompile reason", "generator": name, "order": i, "reason": r}
                 for i, r in enumerate(tokgen.display.recompile_reasons(said))]  # fmt: skip
torch._logging.set_logs()  # back to the default logging
for row in measured:
    rec.write(row)
counted = recorded(2, "compilations")  # the rows as recorded
counts = {r["generator"]: int(r["compilations"]) for r in counted.to_dict("records")}
why = recorded(2, "recompile reason")
reasons = {g: why[why["generator"] == g].sort_values("order")["reason"].tolist() if len(why) else [] for g in counts}
say(tokgen.display.compilations_text(counts, MAX_SEQLEN, reasons))

# %% [markdown]
# ## Exercise 3: kernels per step, eager vs compiled (GPU only)
#
# Compiling fuses the elementwise work between the matrix products (layer norms, GELU, bias,
# residual adds) into a few generated kernels; the counts below say how many GPU operations per
# step that leaves (every one the profiler records: kernels, memsets and copies), at this solution's
# `BATCH_SIZE`. The count depends on the batch size (cuBLAS picks
# its matrix-product kernels by shape, and some take more than one launch), so notebook 06's count
# at its own B need not match.

# %%
if CUDA:
    torch._dynamo.reset()
    compiled = torch.compile(model)  # inductor: real kernels to count
    ops = {}
    for name, m in (("eager", model), ("compiled", compiled)):
        run = lambda on_step, m=m: tokgen.generate(
            "kv_static", m, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN, on_step=on_step
        )
        run(tokgen.generators.no_hook)  # warm-up: compilation
        summary = tokgen.profile_steps(run, start=MAX_SEQLEN // 4, stop=MAX_SEQLEN // 2).summary()
        ops[name] = summary["kernels_per_step"]  # every GPU operation the profiler recorded, not kernels alone
    for name, n in ops.items():
        rec.write({"exercise": 3, "measure": "gpu ops per step", "model": name, "batch_size": BATCH_SIZE,
                   "gpu_ops_per_step": n})  # fmt: skip
    counted = recorded(3, "gpu ops per step")  # the rows as recorded
    say(tokgen.display.gpu_ops_text(dict(zip(counted["model"], counted["gpu_ops_per_step"])), BATCH_SIZE))
else:
    say("*On a CPU there are no GPU operations to count: run this cell on a GPU.*")
