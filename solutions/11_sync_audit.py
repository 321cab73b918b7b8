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
# # Solutions · 11 syncs per decode step
#
# Worked solutions to the exercises of [notebook 11](../notebooks/11_sync_audit.ipynb).
# Syncs exist only between a host and a device: exercises 1 and 2 need a GPU; exercise 3's
# comparison runs on any device.
# Exercise 1 reads notebook 11's audit from its CSV. Every number this page measures (exercise 1's counts in
# this environment, exercise 2's first sync, exercise 3's times and speed-up) is measured when it runs, recorded
# one row per measurement in `<RESULTS_DIR>/data/11_sync_audit_solution.csv` (with where it ran: GPU, commit,
# versions, transformers included; the column `exercise` says which exercise, `measure` which measurement) and
# read back from there, as the notebooks read theirs.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
TOKENS = 32  # tokens per generation (x2 on the micro model)
DATA_DIR = ".."  # notebook 11's audit is read from <DATA_DIR>/data/11_sync_audit.csv
RUNS = 10  # timed rounds, interleaved, for exercise 3
COMPILE_BACKEND = "inductor"  # "eager" on a CPU: inductor's C++ build takes minutes
RESULTS_DIR = "../build/lab"  # this solution's rows go to <RESULTS_DIR>/data; ".." overwrites the reference results

# %%
import traceback

import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())
model = tokgen.build_model(SIZE)  # on the GPU if there is one
CUDA = model.device.type == "cuda"
rec = tokgen.Recorder("11_sync_audit_solution", RESULTS_DIR, params=PARAMS)  # one row per measurement


def recorded(exercise: int, measure: str):
    """This exercise's rows of one measure, as recorded (`tokgen.results.rows_where`)."""
    return tokgen.results.rows_where(rec.read(), exercise=exercise, measure=measure).copy()


# %% [markdown]
# ## Exercise 1: a newer transformers
#
# transformers 5.1.0 needs `cache_position` to index a StaticCache; without it, the cache counts
# its filled slots with a GPU reduction, a hidden sync (`tokgen.generators.cache_kwargs`). Our own
# loops pass `cache_position`; `generate()` builds its own. A newer version may change `generate()`,
# the caches, or both: a count that moves between versions does not say by itself which change moved
# it, and the audit, which counts calls, does not isolate one. The cells below give what notebook 11's
# audit measured (its transformers version is in each row), the same counts here, in this environment,
# and each generator's change between the two, per decode step as in notebook 11. Run this notebook
# with the newer transformers (the runner's `--newest-transformers` sets one up for notebook 14) and
# compare.

# %%
watched = ["generate() dynamic", "generate() static", "kv_static"]
try:
    audit = tokgen.load("11_sync_audit", DATA_DIR)
    say(tokgen.profiling.audit_reads_text(audit, watched))
except FileNotFoundError:
    audit = None
    say("*Notebook 11's audit is not in DATA_DIR: run notebook 11 first.*")
version = tokgen.environment()["transformers"]
say(f"transformers here: **{version}**.")
if CUDA:
    rows = []
    for name in watched:
        run = lambda name=name: tokgen.generate(name, model, batch_size=4, max_seqlen=TOKENS)  # noqa: E731
        run()  # warm-up
        rows.append({"generator": name, "tokens": TOKENS, **tokgen.profiling.counted_syncs(run),
                     "transformers": version})  # fmt: skip
    for row in rows:  # after the counts, as the other solutions write theirs
        rec.write({"exercise": 1, "measure": "syncs", **row})
    counted = recorded(1, "syncs")  # the rows as recorded
    if said := tokgen.display.not_counted_text(counted):  # a profiler session lost to CUPTI
        say(said)
    here = counted.query("counted == 'yes'")
    per_step = {f"{k} per decode step": here[k] / here["tokens"] for k in ("local_scalar_dense", "stream_syncs")}
    say(table(here[["generator"]].assign(**per_step), digits=3))  # notebook 11's precision
    if audit is not None:
        say(tokgen.profiling.sync_change_text(audit, here))
else:
    say("*Syncs are between a host and a GPU: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 2: the first line of `generate()` that syncs
#
# `torch.cuda.set_sync_debug_mode("error")` turns every synchronizing call into an exception;
# the last frame inside transformers in its traceback is the culprit. A line number is one
# transformers version's (the sentence names it); a hook counts the model's forward passes until
# then, which says whether the sync came before the first one (set-up, once per call) or inside
# the decode loop.

# %%
if CUDA:
    passes = []
    hook = model.register_forward_pre_hook(lambda *args: passes.append(1))
    torch.cuda.set_sync_debug_mode("error")
    try:
        tokgen.generate("generate() dynamic", model, batch_size=4, max_seqlen=TOKENS)
        first = {"raised": "no"}
    except RuntimeError as err:
        paths = [(f, f.filename.replace("\\", "/")) for f in traceback.extract_tb(err.__traceback__)]
        frames = [(f, p) for f, p in paths if "/transformers/" in p]  # the package's folder, not build/newest-...
        last, path = frames[-1] if frames else paths[-1]
        where = path[path.rfind("/transformers/") + 1 :] if frames else path  # from its package folder on
        functions = [f.name for f, _ in frames[-3:]]  # the last three transformers functions, outermost first
        first = {"raised": "yes", "file": where, "line": last.lineno, "code": last.line or "",
                 "functions": ";".join(functions), "forward_passes": len(passes)}  # fmt: skip
    finally:
        torch.cuda.set_sync_debug_mode("default")
        hook.remove()
    rec.write({"exercise": 2, "measure": "first sync", **first, "transformers": version})
    got = recorded(2, "first sync").iloc[0]  # the row as recorded
    if got["raised"] == "no":
        say("No sync raised.")
    else:
        text = lambda column: got[column] if isinstance(got[column], str) else ""  # noqa: E731 - empty reads NaN
        functions = [f for f in text("functions").split(";") if f]
        say(tokgen.profiling.first_sync_text(text("file"), int(got["line"]), text("code"), functions,
                                             got["transformers"], int(got["forward_passes"])))  # fmt: skip
else:
    say("*There is nothing to synchronize with on a CPU: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: K = 1 against K = 16 on the micro model
#
# On the micro model (issue #43089's; the cell prints its size) the host's per-replay work is part
# of each step on the GPU (notebook 11's section 4 gives each GPU run's busy share: how much of it
# the GPU's own work filled). One replay of K steps costs one launch and one stop check: K = 16
# spreads them over 16 steps (16 tokens: the micro model generates one sequence). On a CPU there is
# no launch to spread: the graph decoders run their steps as plain calls.

# %%
micro = tokgen.build_model("micro", model.device)
seen = set(tokgen.generate("naive", micro, batch_size=1, max_seqlen=2 * TOKENS).flatten().tolist())
eos = next(t for t in range(micro.config.vocab_size) if t not in seen)  # never produced: full length
backend = COMPILE_BACKEND if CUDA else "eager"
variants = [
    tokgen.generator_variant("graph_handwritten_compiled", micro, batch_size=1, max_seqlen=2 * TOKENS,
                             eos_token_id=eos, steps_per_graph=k, compile_backend=backend)
    for k in (1, 16)
]  # fmt: skip
tokgen.compare(variants, rounds=RUNS, device=model.device,
               record=lambda r: rec.write({"exercise": 3, "measure": "timing", **r}))  # fmt: skip
results = recorded(3, "timing")  # the rows as recorded: times_ms and order_seed, each round's time
say(table(results[["variant", "median_ms", "ms_per_step"]], digits=3))
g = tokgen.gain(results, variants[0].name, variants[1].name)
say(tokgen.profiling.micro_k_text(micro.config, model.device.type, g))
