"""Speed of light: the fewest bytes a generation must move, over the measured DRAM bandwidth.

Introduced in notebook 12_speed_of_light. Decoding one token at a time reads every weight once
per step, plus the keys and values of the cache: at small batch sizes that traffic, not the
arithmetic, bounds how fast any generator can be.
"""

import statistics

import torch

from .model import parameter_bytes


def copy_bandwidth(device: str | torch.device = "cuda", megabytes: int = 1024, runs: int = 20) -> float:
    """Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written (median)."""
    src = torch.rand(megabytes * 2**20 // 4, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # warm-up
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return 2 * src.numel() * src.element_size() / statistics.median(times) / 1e9


def weight_bytes_per_step(model) -> int:
    """Every parameter is read once per step, except the position table, of which one row is."""
    wpe = model.transformer.wpe.weight
    return parameter_bytes(model) - wpe.numel() * wpe.element_size() + wpe.shape[1] * wpe.element_size()


def kv_bytes(model, batch_size: int, positions: int) -> int:
    """Keys and values of `positions` cached positions, all layers."""
    cfg = model.config
    return 2 * cfg.n_layer * batch_size * positions * cfg.n_embd * model.dtype.itemsize


def generation_bytes(model, batch_size: int, max_seqlen: int, kv_read: str = "filled") -> int:
    """Bytes one generation of `max_seqlen` steps must read and write at the least.

    kv_read: "filled" reads the positions cached so far at each step (the minimum), "static"
    the whole max_seqlen-long cache at every step (what a StaticCache's attention reads),
    "none" no cache (the naive generator recomputes keys and values from the weights).
    """
    total = 0
    for step in range(max_seqlen):
        total += weight_bytes_per_step(model)
        total += kv_bytes(model, batch_size, 1)  # this step's keys and values are written
        if kv_read == "filled":
            total += kv_bytes(model, batch_size, step)
        elif kv_read == "static":
            total += kv_bytes(model, batch_size, max_seqlen)
        elif kv_read != "none":
            raise ValueError(f"kv_read must be 'filled', 'static' or 'none', got {kv_read!r}")
    return total
