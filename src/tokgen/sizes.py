"""Sizes a model and a machine can hold: positions, and the least memory a generation needs.

Introduced in notebook 00_setup. Sizes beyond the model's positions, or needing more memory than
the device has, are refused with one line before anything runs: by `tokgen.params` (a notebook's
parameters, and the runner's `-p`, against the device's whole memory) and by every generator
(against the memory free when it is called). Importing this module does not import torch: the
runner checks `-p` with it before torch loads.
"""

import os

# The shapes of tokgen.model.gpt2_config(size) that bound a generation (a test keeps them equal).
SHAPES = {
    "gpt2": {"n_layer": 12, "n_embd": 768, "n_positions": 1024, "vocab_size": 50257},
    "tiny": {"n_layer": 2, "n_embd": 64, "n_positions": 512, "vocab_size": 50257},
    "micro": {"n_layer": 1, "n_embd": 16, "n_positions": 256, "vocab_size": 256},
}
GB = 1e9


def shape_of(config) -> dict:
    """The numbers of `SHAPES` read from a model's config (notebook 00_setup)."""
    return {key: getattr(config, key) for key in SHAPES["gpt2"]}


def generation_bytes(shape: dict, batch_size: int, max_seqlen: int, recompute: bool = False, itemsize: int = 4) -> int:
    """The least memory, in bytes, a generation of `batch_size` rows and `max_seqlen` steps holds
    beyond the weights (notebook 00_setup): its token ids (int64); the logits of two steps (a
    step's are computed while the previous step's are still held); and either the keys and values
    of every layer for `max_seqlen` positions (a KV cache) or, re-running the whole sequence every
    step (`recompute`, the naive generator), logits for every position: 2N - 1 of them at its last
    step. Activations, the allocator's rounding and transformers' own copies come on top: a size
    refused here cannot run, one allowed may still run out of memory. (GPT-2 small, B = 32,
    N = 400: 5.1 GB naive, 0.96 GB with a KV cache; the reference run's peaks less the weights:
    5.2 GB and 1.0 GB.)"""
    b, n, vocab = batch_size, max_seqlen, shape["vocab_size"]
    tokens = 8 * b * (n + 1)
    if recompute:
        return tokens + itemsize * b * (2 * n - 1) * vocab
    cache = itemsize * 2 * shape["n_layer"] * b * n * shape["n_embd"]
    return tokens + cache + itemsize * 2 * b * vocab


def _host_bytes(available: bool) -> int | None:
    """The host's available memory (Linux: MemAvailable) or its whole memory."""
    if available:
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def device_memory(device, free: bool = False) -> tuple[int | None, str]:
    """Memory of `device` ("cuda", "cpu" or a torch.device) in bytes, and its name in words
    (notebook 00_setup): all of it, or with `free` what a new tensor can still get (on CUDA the
    driver's free memory plus the blocks torch's allocator holds unused; on the CPU the host's
    available memory). None where it cannot be read."""
    import torch  # not at the top: the runner imports this module before torch

    device = torch.device(device)
    if device.type != "cuda":
        return _host_bytes(free), "the host"
    if not torch.cuda.is_available():
        return None, "no CUDA GPU"
    index = device.index if device.index is not None else torch.cuda.current_device()
    if not free:
        props = torch.cuda.get_device_properties(index)
        return props.total_memory, props.name
    unused = torch.cuda.memory_reserved(index) - torch.cuda.memory_allocated(index)
    return torch.cuda.mem_get_info(index)[0] + unused, torch.cuda.get_device_name(index)


def too_large(needed: int, device, free: bool = False) -> str:
    """ "" if `needed` bytes fit `device`, else the clause that says they do not, e.g. "needs at
    least 804 TB, the host has 21.9 GB available" (notebook 00_setup). With `free`, the memory
    is read only when `needed` exceeds an eighth of the device's: a generation that fits easily
    pays no driver call."""
    total, where = device_memory(device)
    if total is None:
        return ""
    have = total
    if free and needed > total / 8:
        have = device_memory(device, free=True)[0] or total
    if needed <= have:
        return ""
    return f"needs at least {_size(needed)}, {where} has {_size(have)}{' available' if free else ''}"


def _size(n: float) -> str:
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", GB), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} bytes"
