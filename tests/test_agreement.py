"""The equivalence rule (tokgen.agreement), checked inputs, and decoders that follow their model (CPU)."""

import pytest
import torch

import tokgen
from tokgen.agreement import (
    TOLERANCE,
    Reference,
    agreement,
    assert_tokens_match,
    exact_failure,
    expected_steps,
    naive_reference,
)

EOS = 9


def reference(rows, runner_up=None, gap=None, max_seqlen=None):
    tokens = torch.tensor(rows)
    steps = tokens.shape[1] - 1
    runner_up = torch.full((len(rows), steps), 7) if runner_up is None else torch.tensor(runner_up)
    gap = torch.full((len(rows), steps), 1.0) if gap is None else torch.tensor(gap)
    return Reference(tokens, runner_up, gap, EOS, max_seqlen or steps)


def test_identical_tokens_match():
    ref = reference([[0, 1, 2, 3], [5, 1, 2, 3]])
    result = agreement(ref, ref.tokens.clone())
    assert result["ok"] and result["identical"] == 2 and result["near_ties"] == 0


def test_the_runner_up_at_a_near_tie_is_allowed_and_nothing_after_it_is_compared():
    gaps = [[1.0, 0.5 * TOLERANCE, 1.0], [1.0, 1.0, 1.0]]
    ref = reference([[0, 1, 2, 3], [5, 1, 2, 3]], gap=gaps)
    out = torch.tensor([[0, 1, 7, 4], [5, 1, 2, 3]])  # row 0 takes the runner-up at step 1, then goes its own way
    result = assert_tokens_match(ref, out)
    assert result["identical"] == 1 and result["near_ties"] == 1
    assert result["max_tie_gap"] == pytest.approx(0.5 * TOLERANCE)


@pytest.mark.parametrize(
    "out, gaps, failure",
    [
        ([[0, 1, 7, 3]], [[1.0, 2 * TOLERANCE, 1.0]], "allowed within"),  # the runner-up, but no near-tie
        ([[0, 1, 8, 3]], [[1.0, 0.0, 1.0]], "runner-up 7"),  # a near-tie, but not the runner-up
        ([[4, 1, 2, 3]], None, "prompt 4"),  # another prompt
    ],
)
def test_other_differences_fail(out, gaps, failure):
    ref = reference([[0, 1, 2, 3]], gap=gaps)
    with pytest.raises(AssertionError, match=failure):
        assert_tokens_match(ref, torch.tensor(out))


def test_rows_swapped_or_missing_fail():
    ref = reference([[0, 1, 2, 3], [5, 6, 4, 3]])
    assert not agreement(ref, ref.tokens.flip(0))["ok"]
    assert agreement(ref, ref.tokens[:1])["failures"] == ["1 rows, the reference has 2"]


def test_no_token_past_the_stop_and_none_missing():
    ref = reference([[0, EOS, 2], [5, 1, EOS]], max_seqlen=6)  # every row has produced EOS after step 2
    assert agreement(ref, ref.tokens)["ok"]
    past = torch.tensor([[0, EOS, 2, 2], [5, 1, EOS, 3]])
    assert not agreement(ref, past)["ok"] and "its own tokens say 2" in agreement(ref, past)["failures"][0]
    early = torch.tensor([[0, EOS], [5, 1]])
    assert not agreement(ref, early)["length_ok"]
    assert agreement(ref, past, check_stop=False)["failures"] == ["3 steps, but its own tokens say 6"]


def test_expected_steps():
    tokens = torch.tensor([[0, EOS, 1, 1], [0, 1, 1, EOS]])
    assert expected_steps(tokens, EOS, 10) == 3
    assert expected_steps(tokens, 123, 10) == 10


def test_naive_reference_holds_the_naive_tokens_and_their_margins(tiny):
    prompts = torch.arange(6) * 701 + 11
    ref = naive_reference(tiny, batch_size=6, max_seqlen=12, prompt=prompts)
    naive = tokgen.generate("naive", tiny, batch_size=6, max_seqlen=12, prompt=prompts)
    assert torch.equal(ref.tokens, naive) and ref.gap.shape == ref.runner_up.shape == (6, 12)
    # each step's two best logits, from one forward pass over the whole sequence
    with torch.inference_mode():
        top2 = tiny(naive[:, :-1], use_cache=False).logits.float().topk(2, dim=-1)  # (6, 12, 2)
    assert torch.equal(top2.indices[..., 0], naive[:, 1:]) and torch.equal(ref.runner_up, top2.indices[..., 1])
    torch.testing.assert_close(ref.gap, top2.values[..., 0] - top2.values[..., 1], rtol=0, atol=1e-5)
    assert not tiny._forward_hooks  # the hook is gone


ENTRIES = [*tokgen.GENERATORS, *tokgen.REFERENCES]


def run(name, model, **kw):
    if name in tokgen.COMPILES_ITSELF:
        kw.setdefault("compile_backend", "eager")
    return tokgen.generate(name, model, **kw)


@pytest.mark.parametrize(
    "prompt, message",
    [
        (torch.tensor([[1], [2]]), "prompt must be a 1-D integer tensor of 2 token ids.*got a 2-D"),
        (torch.tensor([1.0, 2.0]), "prompt must be a 1-D integer tensor.*torch.float32"),
        (torch.tensor([True, False]), "prompt must be a 1-D integer tensor.*torch.bool"),
        ([1, 2], "prompt must be a 1-D integer tensor.*got \\[1, 2\\]"),
        (torch.tensor([1, 2, 3]), "prompt has 3 rows, batch_size is 2"),
        (torch.tensor([1, 50257]), r"prompt ids must lie in \[0, 50257\) \(the vocabulary\), got 50257"),
        (torch.tensor([-1, 2]), r"prompt ids must lie in \[0, 50257\).*got -1"),
    ],
)
@pytest.mark.parametrize("name", ENTRIES)
def test_every_entry_checks_its_prompt(tiny, name, prompt, message):
    with pytest.raises(ValueError, match=message):
        run(name, tiny, batch_size=2, max_seqlen=3, prompt=prompt)


@pytest.mark.parametrize("eos", [2.7, True, "50256", torch.tensor(5)])
@pytest.mark.parametrize("name", ENTRIES)
def test_every_entry_checks_its_eos_id(tiny, name, eos):
    with pytest.raises(ValueError, match="eos_token_id must be an integer token id"):
        run(name, tiny, batch_size=2, max_seqlen=3, eos_token_id=eos)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_size": 0, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": 2, "max_seqlen": 0}, "max_seqlen must be a positive integer"),
        ({"batch_size": 2.0, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": 2, "max_seqlen": 100_000}, "exceeds the model's"),
    ],
)
@pytest.mark.parametrize("name", list(tokgen.REFERENCES))
def test_the_references_check_their_sizes(tiny, name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(name, tiny, **kwargs)


def test_an_eos_outside_the_vocabulary_never_stops(tiny):
    full = run("naive", tiny, batch_size=2, max_seqlen=8)
    for name in ("naive", "kv_static", "pipelined_static", "graph_handwritten", "graph_stop_on_device"):
        assert torch.equal(run(name, tiny, batch_size=2, max_seqlen=8, eos_token_id=-1), full), name


GRAPHS = [name for name in tokgen.GENERATORS if name.startswith("graph_")]


def edit_in_place(model):
    with torch.no_grad():
        for block in model.transformer.h:
            block.mlp.c_fc.weight.mul_(-1.5)


def load_other_weights(model):
    model.load_state_dict(tokgen.build_model("tiny", "cpu", seed=7).state_dict())


@pytest.mark.parametrize("change", [edit_in_place, load_other_weights])
@pytest.mark.parametrize("name", GRAPHS)
def test_a_graph_decoder_follows_its_models_weights(name, change):
    model = tokgen.build_model("tiny", "cpu")
    prompts = torch.arange(3) * 911 + 5
    before = run(name, model, batch_size=3, max_seqlen=12, prompt=prompts)  # builds and keeps a decoder
    assert torch.equal(before, run("naive", model, batch_size=3, max_seqlen=12, prompt=prompts))
    change(model)
    after = run("naive", model, batch_size=3, max_seqlen=12, prompt=prompts)
    assert not torch.equal(after, before), "the change must change the tokens for this test to mean anything"
    assert torch.equal(run(name, model, batch_size=3, max_seqlen=12, prompt=prompts), after)


@pytest.mark.parametrize("name", [g for g in GRAPHS if g != "graph_transformers"])
def test_a_handwritten_decoder_refuses_another_dtype_in_one_line(name):
    model = tokgen.build_model("tiny", "cpu")
    run(name, model, batch_size=2, max_seqlen=4)
    for convert in (torch.nn.Module.half, torch.nn.Module.double):
        convert(model)
        with pytest.raises(ValueError, match=r"runs GPT-2 in float32, this model is torch.float(16|64)"):
            run(name, model, batch_size=2, max_seqlen=4)
    model.float()
    assert torch.equal(run(name, model, batch_size=2, max_seqlen=4), run("naive", model, batch_size=2, max_seqlen=4))


def test_graph_transformers_follows_a_dtype_change():
    model = tokgen.build_model("tiny", "cpu")
    run("graph_transformers", model, batch_size=2, max_seqlen=6)
    model.double()
    out = run("graph_transformers", model, batch_size=2, max_seqlen=6)
    assert torch.equal(out, run("naive", model, batch_size=2, max_seqlen=6))


def test_decoders_are_reused_until_the_weights_change_and_can_be_forgotten():
    model = tokgen.build_model("tiny", "cpu")
    run("graph_handwritten", model, batch_size=2, max_seqlen=4)
    first = tokgen.graphs.DECODERS[model]
    run("graph_handwritten", model, batch_size=2, max_seqlen=4)
    assert tokgen.graphs.DECODERS[model] is first and len(first) == 1
    edit_in_place(model)
    run("graph_handwritten", model, batch_size=2, max_seqlen=4)
    assert tokgen.graphs.DECODERS[model] is not first
    tokgen.graphs.forget_decoders(model)
    assert model not in tokgen.graphs.DECODERS


def test_summary_counts_the_other_generators_and_prints_the_tolerance_as_it_is():
    import pandas as pd

    from tokgen.agreement import FP32_NAIVE, summary

    def row(generator, identical, ties, gap=float("nan")):
        return {"generator": generator, "rows": 8, "identical": identical, "near_ties": ties, "failures": 0,
                "max_tie_gap": gap, "tolerance": 0.015, "spread_cublas": 2e-3, "spread_ours": 3.8e-3}  # fmt: skip

    text = summary(pd.DataFrame([row("naive", 8, 0), row("kv_static", 8, 0), row("ours", 6, 2, 2.9e-3),
                                 row(FP32_NAIVE, 7, 1, 1e-3)]))  # fmt: skip
    assert "1 of the 2 other generators returned all 8 rows identical" in text
    assert "(tolerance 0.015)" in text and "1.2e-02: within the tolerance" in text


def test_exact_failure_names_the_earliest_difference_and_whether_it_is_a_near_tie():
    """Notebook 00's all-BOS check wants exact tokens; its one line says where they first differ and
    whether the naive generator's two best logits nearly tied there (review pre_00_05 S3)."""
    ref = reference([[0, 1, 2, 3], [0, 1, 2, 3]], runner_up=[[7, 7, 7]] * 2, gap=[[1.0, 3e-3, 1.0]] * 2)
    assert exact_failure(ref, ref.tokens.clone(), "g") == ""
    out = ref.tokens.clone()
    out[0, 3], out[1, 2], out[1, 3] = 8, 7, 5  # row 0 differs at step 2, row 1 earlier, at step 1
    assert exact_failure(ref, out, "g") == (
        "g, row 1, step 1: token 7, the naive generator's 2; the naive generator's runner-up, its two best logits "
        f"3.0e-03 apart: a near tie (within the tolerance {TOLERANCE:.2g}) that two correct computations can swap, "
        "which exact tokens do not allow"
    )
    out = ref.tokens.clone()
    out[0, 3] = 7  # the runner-up, but 1.0 below the best
    assert exact_failure(ref, out, "g").endswith(f"not a near tie (the runner-up is 7, 1.0e+00 below the best; "
                                                 f"tolerance {TOLERANCE:.2g})")  # fmt: skip
    out = ref.tokens.clone()
    out[0, 2] = 8  # within the gap, but not the runner-up
    assert "step 1: token 8, the naive generator's 2; not a near tie" in exact_failure(ref, out, "g")
    assert exact_failure(ref, ref.tokens[:, :3], "g") == "g: (2, 3) tokens, the naive generator's (2, 4)"
