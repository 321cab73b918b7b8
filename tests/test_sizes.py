"""Sizes a model and a machine cannot hold are refused before anything runs, in one line naming the parameter."""

import time

import pytest
import torch

import tokgen
from tokgen import params, sizes
from tokgen.model import gpt2_config
from tokgen.params import ParameterError, check_device, check_parameters, check_rounds, check_sizes

GB = 1e9


def fake_memory(monkeypatch, total: float, available: float | None = None, name: str = "a 16 GB GPU") -> list:
    """`sizes.device_memory` as on a device of `total` bytes, `available` of them free; the reads it got."""
    reads = []

    def memory(device, free=False):
        reads.append(free)
        return (available if free and available is not None else total), name

    monkeypatch.setattr(sizes, "device_memory", memory)
    return reads


@pytest.mark.parametrize("size", sizes.SHAPES)
def test_the_shapes_are_the_models(size):
    assert sizes.shape_of(gpt2_config(size)) == sizes.SHAPES[size]
    assert params.SIZES == tokgen.model.SIZES == tuple(sizes.SHAPES)


def test_generation_bytes_counts_tokens_logits_and_the_cache_or_every_positions_logits():
    shape = {"n_layer": 2, "n_embd": 8, "n_positions": 64, "vocab_size": 10}
    # B=3, N=5: tokens 8*3*6 = 144; cache 4*2*2*3*5*8 = 1920; two steps' logits 4*2*3*10 = 240
    assert sizes.generation_bytes(shape, 3, 5) == 144 + 1920 + 240
    # naive: logits of 2N - 1 = 9 positions per row at the last step, 4*3*9*10 = 1080
    assert sizes.generation_bytes(shape, 3, 5, recompute=True) == 144 + 1080
    # GPT-2 small at the article's sizes: below the reference run's peaks less the weights (5.2 and 1.0 GB)
    gpt2 = sizes.SHAPES["gpt2"]
    assert 5.0 * GB < sizes.generation_bytes(gpt2, 32, 400, recompute=True) < 5.2 * GB
    assert 0.9 * GB < sizes.generation_bytes(gpt2, 32, 400) < 1.0 * GB


def test_too_large_allows_what_fits_a_16_gb_gpu_and_reads_free_memory_only_when_it_matters(monkeypatch):
    reads = fake_memory(monkeypatch, total=16 * GB, available=15 * GB)
    gpt2 = sizes.SHAPES["gpt2"]
    assert sizes.too_large(sizes.generation_bytes(gpt2, 32, 400, recompute=True), "cuda", free=True) == ""
    assert reads == [False, True]  # 5.1 GB is more than an eighth of 16 GB: the free memory was read
    reads.clear()
    assert sizes.too_large(sizes.generation_bytes(gpt2, 32, 100), "cuda", free=True) == ""
    assert reads == [False]  # 0.25 GB: no driver call
    said = sizes.too_large(sizes.generation_bytes(gpt2, 128, 400, recompute=True), "cuda", free=True)
    assert said == "needs at least 20.6 GB, a 16 GB GPU has 15 GB available"
    assert sizes.too_large(20.6 * GB, "cuda") == "needs at least 20.6 GB, a 16 GB GPU has 16 GB"


def test_the_host_memory_is_read_without_a_gpu():
    total, where = sizes.device_memory("cpu")
    available, _ = sizes.device_memory("cpu", free=True)
    assert where == "the host" and 0 < available <= total


@pytest.mark.parametrize("name", ["naive", "kv_dynamic", "kv_static", "pipelined_static", "graph_handwritten"])
def test_a_huge_batch_is_refused_at_once_naming_the_sizes(tiny, name):
    started = time.time()
    with pytest.raises(ValueError, match=r"^batch_size=1000000000, max_seqlen=4: .* needs at least .* [TP]B, the host "
                                         r"has .* available; lower batch_size or max_seqlen$"):  # fmt: skip
        tokgen.generate(name, tiny, batch_size=10**9, max_seqlen=4)
    assert time.time() - started < 5  # nothing was allocated (before the check, 47 s and the OOM killer)


def test_the_naive_generator_is_checked_for_its_logits_of_every_position(tiny, monkeypatch):
    # tiny at B=8, N=32: naive needs 8*63*50257*4 = 101 MB, a KV cache 21 MB
    fake_memory(monkeypatch, total=400e6, available=50e6, name="a small GPU")
    with pytest.raises(ValueError, match="re-running every position .* needs at least 101 MB, a small GPU has 50 MB"):
        tokgen.generate("naive", tiny, batch_size=8, max_seqlen=32)
    assert tokgen.generate("kv_dynamic", tiny, batch_size=8, max_seqlen=32, eos_token_id=-1).shape == (8, 33)


def test_check_sizes_refuses_lengths_beyond_the_models_positions():
    with pytest.raises(ParameterError, match=r"^parameter SEQ_LENS = \[100, 2000\]: 2000 tokens exceed the gpt2 "
                                             r"model's 1024 positions$") as err:  # fmt: skip
        check_sizes({"SIZE": "gpt2", "DEVICE": "cpu", "SEQ_LENS": [100, 2000]})
    assert err.value.name == "SEQ_LENS"
    check_sizes({"SIZE": "tiny", "DEVICE": "cpu", "MAX_SEQLEN": 512})
    for name, value in (("STEPS_PER_GRAPH", [4, 10**9]), ("WINDOW", [0, 2000]), ("STOP_AT", [10, 5000])):
        with pytest.raises(ParameterError, match=f"^parameter {name} = .*: .* tokens exceed the gpt2 model's 1024"):
            check_sizes({name: value})  # steps, one token each
    with pytest.raises(ParameterError, match="TOKENS = 200: 400 tokens exceed the micro model's 256 positions"):
        check_sizes({"SIZE": "tiny", "DEVICE": "cpu", "TOKENS": 200})  # notebook 11 runs micro for 2 x TOKENS


def test_check_sizes_pairs_each_batch_with_its_lengths_and_names_the_given_one(monkeypatch):
    fake_memory(monkeypatch, total=16 * GB)
    ok = {"SIZE": "gpt2", "DEVICE": "cuda", "BATCH_SIZE": 32, "SEQ_LENS": [100, 200, 400]}
    check_sizes(ok, recompute={"BATCH_SIZE"})  # the article's sizes fit 16 GB, naive included
    big = ok | {"BATCH_SIZE": 128}
    check_sizes(big)  # a KV cache of B=128, N=400: 3.8 GB
    naive_at_128 = r"^parameter BATCH_SIZE = 128 with SEQ_LENS = \[100, 200, 400\]: B = 128, N = 400 needs at least "
    with pytest.raises(ParameterError, match=naive_at_128 + "20.6 GB, a 16 GB GPU has 16 GB$"):
        check_sizes(big, recompute={"BATCH_SIZE"})
    with pytest.raises(ParameterError, match="parameter SEQ_LENS = .* with BATCH_SIZE = 128") as err:
        check_sizes(big, given={"SEQ_LENS"}, recompute={"BATCH_SIZE"})  # the one given is named
    assert err.value.name == "SEQ_LENS"
    check_sizes(big, given={"RUNS"}, recompute={"BATCH_SIZE"})  # no size given: nothing to refuse
    with pytest.raises(ParameterError, match=r"BATCH_SIZES = \[1, 10000\] with MAX_SEQLEN = 100: B = 10000"):
        check_sizes({"BATCH_SIZES": [1, 10000], "MAX_SEQLEN": 100})
    with pytest.raises(ParameterError, match="DISTINCT_BATCH = 100000 with DISTINCT_SEQLEN = 100"):
        check_sizes({"DISTINCT_BATCH": 100000, "DISTINCT_SEQLEN": 100, "MAX_SEQLEN": 1})
    with pytest.raises(ParameterError, match="^parameter COPY_MB = 10000 needs at least 21 GB"):
        check_sizes({"COPY_MB": 10000})
    with pytest.raises(ParameterError, match="^parameter PRODUCT_ROWS = \\[32, 10000000\\] needs at least 123 GB"):
        check_sizes({"PRODUCT_ROWS": [32, 10**7]})


def test_device_cuda_without_a_gpu_says_how_to_run_here(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    check_device({"DEVICE": "cpu"})
    with pytest.raises(ParameterError, match='^parameter DEVICE is "cuda", but this machine has no CUDA GPU: to run '
                                             'this notebook here, set DEVICE = "cpu" and SIZE = "tiny"'):  # fmt: skip
        check_device({"DEVICE": "cuda"})


def test_a_notebook_shows_a_bad_parameter_as_one_line_and_the_kernels_stderr_gets_it_first(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("sys.__stderr__", __import__("sys").stderr)
    namespace = {"SIZE": "gpt2", "DEVICE": "cuda", "BATCH_SIZE": 4}
    with pytest.raises(ParameterError) as err:
        check_parameters(namespace)
    assert err.value._render_traceback_() == [f"ParameterError: {err.value}"]  # what IPython shows: no traceback
    assert capsys.readouterr().err == f"ParameterError: {err.value}\n"
    with pytest.raises(ParameterError, match="^parameter MAX_SEQLEN = 4096: 4096 tokens exceed the tiny model's 512"):
        check_parameters({"SIZE": "tiny", "DEVICE": "cpu", "MAX_SEQLEN": "4096"})


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["naive", "kv_dynamic", "kv_static", "pipelined_static", "graph_handwritten"])
def test_the_least_memory_is_at_most_what_a_generation_allocates_on_a_gpu(name):
    """generation_bytes is a lower bound of the peak a generator allocates beyond the weights; for the
    article's loops, near it (within a factor 3: activations and the allocator's rounding on top)."""
    model = tokgen.build_model("gpt2", "cuda")
    for batch, n in ((8, 64), (32, 200)):
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        tokgen.generate(name, model, batch_size=batch, max_seqlen=n, eos_token_id=-1)
        torch.cuda.synchronize()
        held = torch.cuda.max_memory_allocated() - before
        least = sizes.generation_bytes(sizes.shape_of(model.config), batch, n, recompute=name == "naive")
        assert least <= held, (name, batch, n, least, held)
        if name in ("naive", "kv_dynamic", "kv_static"):
            assert held <= 3 * least, (name, batch, n, least, held)


def test_a_cap_on_rounds_below_the_first_rounds_is_refused_naming_the_parameter():
    """Notebook 01 with MAX_RUNS 3 and RUNS 5 ran only 3 rounds: one line naming MAX_RUNS, before anything runs."""
    said = "^parameter MAX_RUNS = 3 is below RUNS = 5: the cap on a comparison's rounds must be at least"
    with pytest.raises(ParameterError, match=said) as err:
        check_rounds({"RUNS": 5, "MAX_RUNS": 3})
    assert err.value.name == "MAX_RUNS"
    with pytest.raises(ParameterError, match=said):
        check_parameters({"SIZE": "tiny", "DEVICE": "cpu", "RUNS": "5", "MAX_RUNS": "3"})  # as -p gives them
    with pytest.raises(ParameterError, match=said) as err:
        check_rounds({"RUNS": 5, "MAX_RUNS": 3}, given={"RUNS": 5})  # the runner's -p RUNS 5 against 01's cap
    assert err.value.name == "RUNS"
    check_rounds({"RUNS": 5, "MAX_RUNS": 5})  # equal: the first look is the last
    check_rounds({"RUNS": 5, "MAX_RUNS": 3}, given={"BATCH_SIZE": 4})  # -p names neither: not this check's
    check_rounds({"RUNS": 5})  # a notebook without a cap
    namespace = {"SIZE": "tiny", "DEVICE": "cpu", "RUNS": "2", "MAX_RUNS": "4"}
    assert check_parameters(namespace)["MAX_RUNS"] == 4
