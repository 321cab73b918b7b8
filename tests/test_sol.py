"""Bytes per generation: the speed-of-light arithmetic."""

import pytest

from tokgen import sol
from tokgen.model import parameter_bytes


def test_generation_bytes(tiny):
    cfg = tiny.config
    per_position = 2 * cfg.n_layer * 3 * cfg.n_embd * 4  # K and V, all layers, B=3, fp32
    weights = sol.weight_bytes_per_step(tiny)
    wpe = tiny.transformer.wpe.weight
    assert weights == parameter_bytes(tiny) - wpe.numel() * 4 + wpe.shape[1] * 4
    assert sol.kv_bytes(tiny, 3, 1) == per_position
    n = 10
    none = sol.generation_bytes(tiny, 3, n, "none")
    assert none == n * (weights + per_position)
    assert sol.generation_bytes(tiny, 3, n, "filled") == none + per_position * sum(range(n))
    assert sol.generation_bytes(tiny, 3, n, "static") == none + per_position * n * n
    with pytest.raises(ValueError, match="kv_read"):
        sol.generation_bytes(tiny, 3, n, "paged")
