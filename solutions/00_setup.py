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
# # Solutions · 00 setup
#
# Worked solutions to the exercises of [notebook 00](../notebooks/00_setup.ipynb). They run on
# a CPU in seconds with the tiny model (`SIZE = "tiny"`, the smoke suite runs them so), and on
# GPT-2 small where noted. Every number below is computed here, not typed.
# Live, in no CSV: every number on this page is measured or computed when it runs and recorded
# nowhere, so data/ cannot reproduce it; the environment line below says where it ran.

# %% tags=["parameters"]
SIZE = "gpt2"  # the model of exercises 2 and 3: "gpt2" (GPT-2 small) or "tiny"

# %%
import torch

import tokgen
from tokgen.display import say

PARAMS = tokgen.check_parameters(globals())  # types and ranges; a bad value stops here, named
print(tokgen.describe_environment())  # where this page's live numbers were measured
model = tokgen.build_model(SIZE)  # on the GPU if there is one; the CPU is enough here

# %% [markdown]
# ## Exercise 1: the tiny model's size
#
# `tokgen.num_parameters` counts unique parameters (the LM head shares the token embedding).
# The tiny model keeps GPT-2's vocabulary, so its embedding dominates.

# %%
tiny, small = tokgen.build_model("tiny", "cpu"), tokgen.build_model("gpt2", "cpu")
n_tiny, n_small = tokgen.num_parameters(tiny), tokgen.num_parameters(small)
say(tokgen.voice.model_share_text(n_tiny, n_small, tuple(tiny.transformer.wte.weight.shape)))
del tiny, small

# %% [markdown]
# ## Exercise 2: why greedy decoding from random weights repeats itself
#
# Random weights give logits with no preference worth the name: the top two can be close, and the
# argmax can then hinge on small differences in the input. Tokens soon repeat, often the token just
# given (the count below); whether the sequence then settles into a loop or moves between a few
# tokens, the printed tokens show.
#
# A step can copy the token it was given. One hypothesis, not measured here: GPT-2 ties its output
# layer to the token embedding, and the residual stream keeps the current token's embedding, so the
# output layer favours that token. The cell counts the copies and checks the tie; whether the tie
# causes them would need the same model with an untied output layer.

# %%
tokens = tokgen.generate("naive", model, batch_size=1, max_seqlen=50, eos_token_id=-1)[0].cpu()
print(tokens.tolist())
with torch.inference_mode():
    logits = model(tokens[None, :10].to(model.device)).logits[0, -1]
top = logits.topk(2).values
tied = model.lm_head.weight.data_ptr() == model.transformer.wte.weight.data_ptr()
# the template counts the copies: steps whose greedy argmax is their own input token
say(tokgen.voice.repeats_text(tokens.tolist(), float(logits.std()), float(top[0] - top[1]), tied, at=10))

# %% [markdown]
# ## Exercise 3: every generator stops at the same step
#
# Choose as EOS a token the naive generator emits; all rows share the BOS prompt, so all stop
# together, after the first step that emits it. Every registered generator must return exactly
# those columns, except the two that skip the EOS check by design (`tokgen.NO_STOP_CHECK`: they
# always run max_seqlen steps); transformers' `generate()` too, since every row stops at once.

# %%
reference = tokgen.generate("naive", model, batch_size=2, max_seqlen=24, eos_token_id=-1)
eos = int(reference[0, 8])
stopped = tokgen.generate("naive", model, batch_size=2, max_seqlen=24, eos_token_id=eos)
backend = "inductor" if model.device.type == "cuda" else "eager"  # inductor's C++ build takes minutes on a CPU
names = [n for n in tokgen.GENERATORS if n not in tokgen.NO_STOP_CHECK] + ["generate() dynamic"]
same = {}
for name in names:
    options = {"compile_backend": backend} if name in tokgen.COMPILES_ITSELF else {}
    out = tokgen.generate(name, model, batch_size=2, max_seqlen=24, eos_token_id=eos, **options)
    same[name] = torch.equal(out, stopped)
assert all(same.values()), same
steps = stopped.shape[1] - 1  # the naive generator's steps (its columns less the prompt's); its last emits EOS
say(tokgen.voice.same_stop_text(eos, steps, len(names) - 1, len(tokgen.GENERATORS)))
