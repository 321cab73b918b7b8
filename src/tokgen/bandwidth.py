"""The speed of light: the fewest bytes a generation must move, over the measured DRAM bandwidth.

Introduced in notebook 12_speed_of_light. Decoding one token at a time reads every weight once
per step, plus the keys and values of the cache: at small batch sizes that traffic, not the
arithmetic, bounds how fast any generator can be.
"""

import math

import torch
import torch.nn.functional as F

from .gpu_slice import copy_bandwidth, gpu_times  # noqa: F401 - notebook 12 reads copy_bandwidth here
from .graphs import capture
from .model import parameter_bytes, require_cuda, require_positive


def weight_bytes_per_step(model) -> int:
    """Every parameter is read once per step, except the position table, of which one row is (notebook 12)."""
    wpe = model.transformer.wpe.weight
    return parameter_bytes(model) - wpe.numel() * wpe.element_size() + wpe.shape[1] * wpe.element_size()


def kv_bytes(model, batch_size: int, positions: int) -> int:
    """Keys and values of `positions` cached positions, all layers (notebook 12)."""
    cfg = model.config
    return 2 * cfg.n_layer * batch_size * positions * cfg.n_embd * model.dtype.itemsize


def generation_bytes(model, batch_size: int, max_seqlen: int, kv_read: str = "filled") -> int:
    """Bytes one generation of `max_seqlen` steps must read and write at the least (notebook 12).

    kv_read: "filled" reads the positions cached so far at each step (the minimum), "static"
    the whole max_seqlen-long cache at every step (what a StaticCache's attention reads),
    "none" no cache (the naive generator recomputes keys and values from the weights).
    """
    if kv_read not in ("filled", "static", "none"):
        raise ValueError(f"kv_read must be 'filled', 'static' or 'none', got {kv_read!r}")
    total = 0
    for step in range(max_seqlen):
        total += weight_bytes_per_step(model)
        total += kv_bytes(model, batch_size, 1)  # this step's keys and values are written
        if kv_read == "filled":
            total += kv_bytes(model, batch_size, step)
        elif kv_read == "static":
            total += kv_bytes(model, batch_size, max_seqlen)
    return total


def gpt2_products(model) -> dict[str, tuple[int, int]]:
    """(in, out) features of one decode step's matrix products, n_layer times each but the LM head (notebook 12)."""
    cfg = model.config
    C = cfg.n_embd
    return {
        "attention qkv": (C, 3 * C),
        "attention out": (C, C),
        "mlp up": (C, 4 * C),
        "mlp down": (4 * C, C),
        "LM head": (C, cfg.vocab_size),
    }


def product_times(
    rows: int, in_features: int, out_features: int, *, splits: int = 1, repeats: int = 48, runs: int = 20
) -> list[float]:
    """Microseconds per fp32 product of `rows` rows through an (out, in) weight, one value per run.

    Introduced in notebook 12_speed_of_light. Timed as in a decode step: `repeats` products
    replayed from one CUDA graph (no launch overhead from Python), each reading its own weight
    from a pool over twice the size of the L2 cache, so the weights come from DRAM.
    `splits` > 1 cuts the sum over `in_features` into that many products run as one batched
    product (`torch.bmm`): more output tiles for the GPU's multiprocessors to share; adding up
    the partial results afterwards is not timed.
    """
    require_positive(
        rows=rows, in_features=in_features, out_features=out_features, splits=splits, repeats=repeats, runs=runs
    )
    if in_features % splits:
        raise ValueError(f"splits={splits} does not divide in_features={in_features}")
    require_cuda("timing a matrix product")
    device = torch.device("cuda")
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20)
    weight_bytes = in_features * out_features * 4
    pool = [
        torch.randn(splits, out_features, in_features // splits, device=device)
        for _ in range(max(2, math.ceil(2 * l2 / weight_bytes)))
    ]
    bias = torch.randn(out_features, device=device)
    x = torch.randn(rows, in_features, device=device)
    xs = x.view(rows, splits, in_features // splits).transpose(0, 1)  # (splits, rows, in/splits)

    def products():
        for i in range(repeats):
            w = pool[i % len(pool)]  # (splits, out, in/splits)
            if splits == 1:
                F.linear(x, w[0], bias)
            else:
                torch.bmm(xs, w.transpose(1, 2))

    graph = capture(products, warmups=1)  # cuBLAS picks its kernels and workspace before the capture
    graph.replay()  # warm-up
    return [1e3 * ms / repeats for ms in gpu_times(graph.replay, runs)]
