"""Every registered generator returns the naive generator's tokens (tiny GPT-2, CPU)."""

import pytest
import torch

import tokgen
from tokgen.agreement import assert_tokens_match, naive_reference
from tokgen.generators import article_pipelined, transformers_generate

CHECKED = [name for name in tokgen.GENERATORS if name not in tokgen.NO_STOP_CHECK]
GRAPHS = ["graph_transformers", "graph_handwritten", "graph_handwritten_compiled"]


def run(name, model, **kw):
    if name in tokgen.COMPILES_ITSELF:  # dynamo traces, no inductor C++ build on the CPU
        kw.setdefault("compile_backend", "eager")
    return tokgen.generate(name, model, **kw)


def distinct_prompts(batch_size):
    return torch.arange(batch_size) * 701 + 11


@pytest.fixture(scope="module")
def rows_that_stop_apart(tiny):
    """Prompts whose rows all emit one token, first at different steps: (prompts, token, steps, the
    naive generator's full run of 40 steps, its reference with that token as EOS). Computed once
    for every generator's test: the naive runs are the slow part."""
    prompts = distinct_prompts(64)
    full = run("naive", tiny, batch_size=64, max_seqlen=40, prompt=prompts)
    first = {}
    for r, row in enumerate(full[:, 1:].tolist()):
        for i, t in enumerate(row):
            first.setdefault(t, {}).setdefault(r, i)
    token, rows = max(first.items(), key=lambda kv: (len(set(kv[1].values())), len(kv[1])))
    assert len(set(rows.values())) >= 2, "no token is emitted by two rows at different steps: pick other prompts"
    chosen = sorted(rows)[:4]
    prompts = prompts[chosen]
    ref = naive_reference(tiny, batch_size=len(prompts), max_seqlen=40, prompt=prompts, eos_token_id=token)
    return prompts, token, max(rows[r] for r in chosen) + 1, full[chosen], ref


@pytest.fixture(scope="module")
def bos_rows(tiny):
    """The naive generator's tokens for 3 BOS rows, 20 steps."""
    return run("naive", tiny, batch_size=3, max_seqlen=20)


@pytest.fixture(scope="module")
def sixteen_distinct(tiny):
    """Sixteen distinct prompts and the naive reference for them, 25 steps."""
    prompts = distinct_prompts(16)
    return prompts, naive_reference(tiny, batch_size=16, max_seqlen=25, prompt=prompts)


@pytest.fixture(scope="module")
def token_of_row_0(tiny):
    """Four distinct prompts, a token only row 0 emits, the naive tokens (30 steps) and the reference with
    that token as EOS."""
    prompts = distinct_prompts(4)
    full = run("naive", tiny, batch_size=4, max_seqlen=30, prompt=prompts)
    only_row0 = set(full[0, 1:].tolist()) - set(full[1:, 1:].flatten().tolist())
    assert only_row0, "row 0 has no token of its own: pick other prompts"
    eos = min(only_row0)
    return prompts, eos, full, naive_reference(tiny, batch_size=4, max_seqlen=30, prompt=prompts, eos_token_id=eos)


@pytest.mark.parametrize("name", list(tokgen.GENERATORS))
def test_same_tokens_as_naive_to_max_seqlen(tiny, bos_rows, name):
    assert bos_rows.shape == (3, 21)
    assert torch.equal(run(name, tiny, batch_size=3, max_seqlen=20), bos_rows)


def test_the_naive_generator_stops_after_every_row_has_emitted_eos(tiny, rows_that_stop_apart, token_of_row_0):
    """The references of the two tests below: the naive generator stops after the first step at which
    every row has emitted EOS once, and runs on while some row has not."""
    prompts, eos, expected_steps, full, ref = rows_that_stop_apart
    assert ref.tokens.shape == (len(prompts), 1 + expected_steps)
    assert torch.equal(ref.tokens, full[:, : 1 + expected_steps])
    assert torch.equal(ref.tokens, run("naive", tiny, batch_size=len(prompts), max_seqlen=40, prompt=prompts,
                                       eos_token_id=eos))  # fmt: skip
    _, _, full, ref = token_of_row_0
    assert torch.equal(ref.tokens, full)


@pytest.mark.parametrize("name", CHECKED)
def test_same_tokens_as_naive_when_rows_finish_at_different_steps(tiny, rows_that_stop_apart, name):
    prompts, eos, _, _, ref = rows_that_stop_apart
    out = run(name, tiny, batch_size=len(prompts), max_seqlen=40, prompt=prompts, eos_token_id=eos)
    assert_tokens_match(ref, out)


@pytest.mark.parametrize("name", CHECKED)
def test_a_token_only_some_rows_emit_does_not_stop(tiny, token_of_row_0, name):
    prompts, eos, _, ref = token_of_row_0
    out = run(name, tiny, batch_size=4, max_seqlen=30, prompt=prompts, eos_token_id=eos)
    assert assert_tokens_match(ref, out)["rows"] == 4


@pytest.mark.parametrize("name", list(tokgen.GENERATORS))
def test_distinct_rows_to_max_seqlen(tiny, sixteen_distinct, name):
    """Sixteen distinct prompts: a generator that mixed rows up, or shifted one, would show here
    (an all-BOS batch makes every row the same sequence and hides both)."""
    prompts, ref = sixteen_distinct
    out = run(name, tiny, batch_size=16, max_seqlen=25, prompt=prompts)
    assert_tokens_match(ref, out, name, check_stop=name not in tokgen.NO_STOP_CHECK)
    assert len(set(map(tuple, out[:, 1:].tolist()))) > 8, "distinct prompts give distinct rows here"


@pytest.fixture(scope="module")
def stops_at_1_5_12(tiny):
    """The naive tokens of 2 BOS rows, 23 steps, and with EOS the token of column 1, 5 or 12: [(eos, tokens)]."""
    full = run("naive", tiny, batch_size=2, max_seqlen=23)
    eos = [int(full[0, stop_at]) for stop_at in (1, 5, 12)]
    return full, [(e, run("naive", tiny, batch_size=2, max_seqlen=23, eos_token_id=e)) for e in eos]


@pytest.mark.parametrize("k", [1, 3, 4, 7, 16])
@pytest.mark.parametrize("name", GRAPHS)
def test_k_steps_per_replay_trim_to_the_stop(tiny, stops_at_1_5_12, name, k):
    ref_full, stops = stops_at_1_5_12
    for eos, ref in stops:
        out = run(name, tiny, batch_size=2, max_seqlen=23, eos_token_id=eos, steps_per_graph=k)
        assert torch.equal(out, ref), (name, k, eos)
    assert torch.equal(run(name, tiny, batch_size=2, max_seqlen=23, steps_per_graph=k), ref_full)


@pytest.mark.parametrize("name", sorted(tokgen.NO_STOP_CHECK))
def test_no_check_generators_always_run_max_seqlen(tiny, name):
    full = run("naive", tiny, batch_size=2, max_seqlen=15)
    out = run(name, tiny, batch_size=2, max_seqlen=15, eos_token_id=int(full[0, 2]))
    assert torch.equal(out, full)


def test_generators_are_repeatable(tiny):
    for name in ("pipelined_static", "graph_handwritten_compiled"):
        outs = [run(name, tiny, batch_size=2, max_seqlen=12) for _ in range(3)]
        assert all(torch.equal(o, outs[0]) for o in outs)


def test_article_loop_returns_a_token_past_the_stop(tiny):
    full = run("naive", tiny, batch_size=2, max_seqlen=20)
    eos = int(full[0, 4])
    ref = run("naive", tiny, batch_size=2, max_seqlen=20, eos_token_id=eos)
    out = article_pipelined(tiny, batch_size=2, max_seqlen=20, eos_token_id=eos)
    # on the CPU the flag copy is synchronous: exactly one step late
    assert out.shape[1] == ref.shape[1] + 1
    assert torch.equal(out[:, : ref.shape[1]], ref)


def test_transformers_generate_matches_naive_for_bos_prompts(tiny):
    ref = run("naive", tiny, batch_size=2, max_seqlen=10)
    assert torch.equal(transformers_generate(tiny, batch_size=2, max_seqlen=10), ref)
    eos = int(ref[0, 3])
    early = run("naive", tiny, batch_size=2, max_seqlen=10, eos_token_id=eos)
    assert torch.equal(transformers_generate(tiny, batch_size=2, max_seqlen=10, eos_token_id=eos), early)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"batch_size": 0, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": -2, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": 1.5, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": True, "max_seqlen": 5}, "batch_size must be a positive integer"),
        ({"batch_size": 2, "max_seqlen": 0}, "max_seqlen must be a positive integer"),
        ({"batch_size": 2, "max_seqlen": 100_000}, "exceeds the model's"),
    ],
)
@pytest.mark.parametrize("name", list(tokgen.GENERATORS))
def test_bad_sizes_raise_one_clear_error(tiny, name, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(name, tiny, **kwargs)


def test_bad_options_raise_clear_errors(tiny):
    with pytest.raises(ValueError, match="unknown generator 'nope'; registered: naive"):
        tokgen.generate("nope", tiny, batch_size=1, max_seqlen=2)
    with pytest.raises(ValueError, match="unknown cache"):
        tokgen.generate_kv(tiny, batch_size=1, max_seqlen=2, cache="paged")
    with pytest.raises(ValueError, match="streams must be 1 or 2"):
        tokgen.generate_pipelined(tiny, batch_size=1, max_seqlen=2, streams=3)
    with pytest.raises(ValueError, match="steps_per_graph must be a positive integer"):
        run("graph_handwritten_compiled", tiny, batch_size=1, max_seqlen=2, steps_per_graph=0)
    with pytest.raises(ValueError, match="prompt has 3 rows"):
        tokgen.generate("naive", tiny, batch_size=2, max_seqlen=2, prompt=torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="unknown model size"):
        tokgen.build_model("gpt3", "cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cuda_only_things_say_so_without_cuda():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        tokgen.build_model("tiny", "cuda")
    with pytest.raises(RuntimeError, match="the sync audit needs a CUDA GPU"):
        tokgen.require_cuda("the sync audit")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        tokgen.count_syncs(lambda: None)


def test_seed_fixes_the_weights():
    a, b, c = (tokgen.build_model("tiny", "cpu", seed=s) for s in (0, 0, 1))
    wa, wb, wc = (m.transformer.h[0].attn.c_attn.weight for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)


def test_handwritten_step_matches_the_transformers_forward(tiny):
    lean = tokgen.HandwrittenStep(tiny, batch_size=2, capacity=8, compile_backend="eager")
    cache = tokgen.generators.make_cache(tiny, "dynamic", 8)
    tokens = torch.tensor([464, 50256])
    with torch.inference_mode():
        for pos in range(5):
            ours = lean(tokens, torch.tensor([pos]))
            theirs = tiny(tokens[:, None], past_key_values=cache, use_cache=True).logits[:, -1]
            torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
            tokens = ours.argmax(-1)


def assert_same_logits_and_keys_as_handwritten(step, model, steps: int):
    """`step` (a decode step of 2 rows) gives HandwrittenStep's logits at every position and stores the same keys."""
    plain = tokgen.HandwrittenStep(model, batch_size=2, capacity=8)
    tokens = torch.tensor([464, 50256])
    with torch.inference_mode():
        for pos in range(steps):
            a, b = step(tokens, torch.tensor([pos])), plain(tokens, torch.tensor([pos]))
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
            tokens = b.argmax(-1)
    torch.testing.assert_close(step.keys, plain.keys, rtol=1e-5, atol=1e-5)


def test_our_kernels_step_matches_the_handwritten_one(tiny):
    """On a CPU our kernels run as torch: the reorganized forward (norms folded into the products
    before them, keys and values stored by the attention) is the same function as `handwritten_forward`."""
    assert_same_logits_and_keys_as_handwritten(tokgen.TritonStep(tiny, batch_size=2, capacity=8), tiny, steps=5)
    for bad in (
        {"step": "cuda"},
        {"step": "triton", "compile_backend": "inductor"},
        {"step": "triton", "filled_only": True},
    ):
        with pytest.raises(ValueError, match="unknown step 'cuda'|options of the handwritten step"):
            run("graph_handwritten", tiny, batch_size=1, max_seqlen=2, **bad)


def test_on_step_is_called_at_every_step_or_replay(tiny):
    for name, k, expected in (("kv_static", None, list(range(9))), ("graph_handwritten", 4, [0, 4, 8])):
        seen = []
        kw = {"steps_per_graph": k} if k else {}
        run(name, tiny, batch_size=2, max_seqlen=9, on_step=seen.append, **kw)
        assert seen == expected, name


def test_graph_capacity_rounds_to_whole_replays():
    assert tokgen.graph_capacity(100, 4) == 112 and tokgen.graph_capacity(100, 16) == 112
    assert tokgen.graph_capacity(16, 1) == 16 and tokgen.graph_capacity(17, 3) == 48


def test_graph_decoders_are_kept_per_model_and_freed_with_it():
    import gc

    from tokgen.graphs import DECODERS

    model = tokgen.build_model("tiny", "cpu")
    run("graph_handwritten", model, batch_size=1, max_seqlen=4)
    run("graph_handwritten", model, batch_size=1, max_seqlen=4)
    assert len(DECODERS[model]) == 1
    before = len(DECODERS)
    del model
    gc.collect()
    assert len(DECODERS) == before - 1


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_a_slice_needs_cuda_and_a_positive_size():
    with pytest.raises(RuntimeError, match=r"a GPU slice \(GPU_SMS=8\) needs a CUDA GPU"):
        tokgen.GpuSlice(8)
    for bad in (0, -8, 2.5, True):
        with pytest.raises(ValueError, match="GPU_SMS must be a positive integer"):
            tokgen.GpuSlice(bad)
    assert tokgen.use_slice(None) is None
    assert tokgen.gpu_slice.slice_columns() == {"gpu_sms": "all", "slice_copy_gbs": ""}
    assert tokgen.gpu_slice.side_streams(torch.device("cpu")) == [None, None]


def test_gpu_sms_parameter_is_none_or_positive():
    from tokgen.params import ParameterError, check

    assert check("GPU_SMS", "None") is None and check("GPU_SMS", None) is None
    assert check("GPU_SMS", "16") == 16
    for bad in ("0", "-8", "abc", "[8]"):
        with pytest.raises(ParameterError, match="GPU_SMS must be None"):
            check("GPU_SMS", bad)


def test_deferred_stop_check_needs_a_transformers_that_has_it(tiny):
    import transformers.generation.utils as utils

    if hasattr(utils, "DeferredStopCheck"):
        pytest.skip("this transformers has DeferredStopCheck")
    with pytest.raises(RuntimeError, match="needs transformers >= 5.17"):
        tokgen.generate("generate() dynamic deferred", tiny, batch_size=2, max_seqlen=4)


def test_the_slices_that_bracket_the_l40s():
    from tokgen.gpu_slice import bracketing

    measured = {8: 591.0, 16: 1135.0, 24: 1635.0, 32: 2053.0}
    assert bracketing(measured) == (8, 16)
    assert bracketing(measured, target=1700) == (24, 32)
    with pytest.raises(ValueError, match="no two measured slices bracket 864 GB/s"):
        bracketing({16: 1135.0, 32: 2053.0})


def test_the_fused_step_computes_the_handwritten_logits(tiny):
    """Norms folded into the products after them, residual adds in place, the end of the step in
    one kernel: on a CPU (every kernel as torch) the same function as `handwritten_forward`."""
    assert_same_logits_and_keys_as_handwritten(tokgen.FusedStep(tiny, batch_size=2, capacity=8), tiny, steps=6)
    with pytest.raises(ValueError, match="the fused step runs GPT-2 in float32"):
        tokgen.FusedStep(tokgen.build_model("tiny", "cpu").double(), batch_size=1, capacity=4)


def test_map_sms_is_none_or_a_list_of_slices():
    from tokgen.params import ParameterError, check

    assert check("MAP_SMS", "None") is None and check("MAP_SMS", "[8, 16]") == [8, 16]
    with pytest.raises(ParameterError, match="MAP_SMS must be None"):
        check("MAP_SMS", "[0]")
