"""Bytes per generation: the speed-of-light arithmetic (tokgen.bandwidth)."""

import pytest
import torch

from tokgen import bandwidth
from tokgen.model import parameter_bytes


def test_generation_bytes(tiny):
    cfg = tiny.config
    per_position = 2 * cfg.n_layer * 3 * cfg.n_embd * 4  # K and V, all layers, B=3, fp32
    weights = bandwidth.weight_bytes_per_step(tiny)
    wpe = tiny.transformer.wpe.weight
    assert weights == parameter_bytes(tiny) - wpe.numel() * 4 + wpe.shape[1] * 4
    assert bandwidth.kv_bytes(tiny, 3, 1) == per_position
    n = 10
    none = bandwidth.generation_bytes(tiny, 3, n, "none")
    assert none == n * (weights + per_position)
    assert bandwidth.generation_bytes(tiny, 3, n, "filled") == none + per_position * sum(range(n))
    assert bandwidth.generation_bytes(tiny, 3, n, "static") == none + per_position * n * n
    with pytest.raises(ValueError, match="kv_read"):
        bandwidth.generation_bytes(tiny, 3, n, "paged")


def test_gpt2_products_are_the_models_weights(tiny):
    block = tiny.transformer.h[0]
    shapes = bandwidth.gpt2_products(tiny)
    # GPT-2's Conv1D stores (in, out)
    assert shapes["attention qkv"] == tuple(block.attn.c_attn.weight.shape)
    assert shapes["attention out"] == tuple(block.attn.c_proj.weight.shape)
    assert shapes["mlp up"] == tuple(block.mlp.c_fc.weight.shape)
    assert shapes["mlp down"] == tuple(block.mlp.c_proj.weight.shape)
    assert shapes["LM head"] == tuple(reversed(tiny.lm_head.weight.shape))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rows": 0}, "rows must be a positive integer"),
        ({"splits": -1}, "splits must be a positive integer"),
        ({"repeats": 2.5}, "repeats must be a positive integer"),
        ({"splits": 5}, "splits=5 does not divide in_features=64"),
    ],
)
def test_product_times_rejects_bad_sizes(kwargs, match):
    args = {"rows": 4, "in_features": 64, "out_features": 32, **kwargs}
    with pytest.raises(ValueError, match=match):
        bandwidth.product_times(args.pop("rows"), args.pop("in_features"), args.pop("out_features"), **args)


def test_product_times_needs_cuda():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: tests/test_gpu.py times a product")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        bandwidth.product_times(4, 64, 32)
