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
# # Solutions · 03 expandable segments
#
# Worked solutions to the exercises of [notebook 03](../notebooks/03_expandable_segments.ipynb).
# All three are about the CUDA caching allocator, which only a GPU has: on a CPU the cells say
# so, and the answers below explain what to expect.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model: "gpt2" (GPT-2 small) or "tiny"
BATCH_SIZE = 32  # sequences per batch (notebook 03: 32)
MAX_SEQLEN = 400  # new tokens per sequence in exercise 2 (the article's largest N); exercise 3 runs a quarter
RESULTS_DIR = "../build/lab"  # the memory snapshots of exercise 2 go to <RESULTS_DIR>/data

# %%
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import torch

import tokgen
from tokgen.display import say, table

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
CUDA = torch.cuda.is_available()
model = tokgen.build_model(SIZE)  # on the GPU if there is one


# %%
def last_line_of(code: str) -> str:
    """Run `code` in a fresh Python: the allocator reads PYTORCH_ALLOC_CONF once per process."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    return (done.stdout.strip().splitlines() or [done.stderr.strip().splitlines()[-1]])[-1]


# %% [markdown]
# ## Exercise 1: when is `PYTORCH_ALLOC_CONF` read?
#
# The caching allocator reads its configuration when CUDA's allocator is first used, not at
# `import torch`. Set after the import but before the first CUDA call, the setting still takes
# effect; set after the first allocation, the environment variable is read by nobody (only the
# allocator's runtime setting, which notebook 03's `set_expandable_segments` uses, changes it
# then).
# Each case runs in its own process and asks the allocator's snapshot where a fresh
# allocation lands.

# %%
SET = 'os.environ["PYTORCH_ALLOC_CONF"] = "expandable_segments:True"'
PROBE = """
import os, torch, tokgen
{before}
torch.zeros(1, device="cuda")  # the first CUDA allocation
{after}
print(tokgen.memory.expandable_segments_active())
"""
if CUDA:
    cases = {"after `import torch`, before any CUDA call": (SET, ""), "after the first allocation": ("", SET)}
    rows = [{"set": k, "expandable": last_line_of(PROBE.format(before=b, after=a))} for k, (b, a) in cases.items()]
    say(table(pd.DataFrame(rows)))
else:
    say("*The allocator exists on CUDA only: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 2: memory snapshots
#
# `torch.cuda.memory._record_memory_history` records every allocation with its stack;
# `_dump_snapshot` writes them for https://pytorch.org/memory_viz (drag the file in). With the
# default allocator the "Active Memory Timeline" shows a staircase of ever larger blocks;
# with expandable segments a segment can grow in place where the default reserves a new one. Below,
# the segment count of each snapshot, the quickest number to compare; it counts every segment the
# snapshot holds (the weights', one or more per pool and stream), not only the cache's.


# %%
def snapshot(expandable: bool, path: Path) -> int:
    """One kv_dynamic generation recorded into a memory snapshot at `path`; its segment count."""
    tokgen.memory.set_expandable_segments(expandable)
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(max_entries=100_000)
    tokgen.generate("kv_dynamic", model, batch_size=BATCH_SIZE, max_seqlen=MAX_SEQLEN)
    torch.cuda.memory._dump_snapshot(str(path))
    segments = torch.cuda.memory._snapshot()["segments"]
    torch.cuda.memory._record_memory_history(enabled=None)
    return len(segments)


# %%
if CUDA:
    out = Path(RESULTS_DIR) / "data"
    out.mkdir(parents=True, exist_ok=True)
    files = {a: out / f"03_snapshot_{a}.pickle" for a in ("default", "expandable")}
    rows = [{"allocator": a, "segments": snapshot(a == "expandable", f)} for a, f in files.items()]
    tokgen.memory.set_expandable_segments(False)
    say(f"B = {BATCH_SIZE}, N = {MAX_SEQLEN}:\n\n" + table(pd.DataFrame(rows)))
    say(f"This run wrote the snapshots as {' and '.join(f'`{f.name}`' for f in files.values())} into "
        f"`{out}`. The repository keeps only this notebook, not the files: to see the timelines, run this cell "
        "and drag the files into memory_viz.")  # fmt: skip
else:
    say("*Snapshots record CUDA allocations: run this cell on a GPU.*")

# %% [markdown]
# ## Exercise 3: the naive generator with expandable segments
#
# The naive generator allocates a slightly larger logits tensor every step. With expandable
# segments a freed block's pages can be reused by the next, larger request in the same
# segment, so reserved memory can follow what is allocated; the table says how far it does.

# %%
if CUDA:
    device, n = torch.device("cuda"), max(1, MAX_SEQLEN // 4)  # the naive generator's N: a quarter
    rows = []
    for allocator in ("default", "expandable"):
        tokgen.memory.set_expandable_segments(allocator == "expandable")
        tokgen.memory.reset_memory(device)
        tokgen.generate("naive", model, batch_size=BATCH_SIZE, max_seqlen=n)
        rows.append({"variant": f"naive N={n}, {allocator}", **tokgen.memory.memory_peaks(device)})
    tokgen.memory.set_expandable_segments(False)
    say(tokgen.display.memory_table(pd.DataFrame(rows)))
else:
    say("*The allocator's statistics exist on CUDA only: run this cell on a GPU.*")
