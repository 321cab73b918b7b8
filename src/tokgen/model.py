"""The model under test: GPT-2 with random weights, and the checks every helper shares (notebook 00_setup)."""

import atexit
import functools
import inspect
import os
import shutil
import sys
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel

from .sizes import SHAPES

SIZES = tuple(SHAPES)


def gpt2_config(size: str = "gpt2") -> GPT2Config:
    """`GPT2Config()` defaults (= the hub's "gpt2", 124M), a tiny config for CPU tests, or a
    "micro" model (1 layer, hidden 16, vocab 256, as in transformers issue #43089) where
    framework overhead is all there is (notebook 11). Introduced in notebook 00_setup.
    """
    if size == "gpt2":
        return GPT2Config()
    if size == "tiny":
        # Same vocabulary and special tokens as GPT-2, so token ids mean the same thing.
        return GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=512)
    if size == "micro":
        return GPT2Config(
            n_layer=1, n_embd=16, n_head=1, vocab_size=256, n_positions=256, bos_token_id=0, eos_token_id=0
        )
    raise ValueError(f"unknown model size {size!r}: choose one of {', '.join(SIZES)}")


def require_cuda(what: str) -> None:
    """One clear error for an experiment that only means something on a CUDA GPU (notebook 00_setup)."""
    if not torch.cuda.is_available():
        raise RuntimeError(f"{what} needs a CUDA GPU, but torch.cuda.is_available() is False on this machine")


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """`None` means CUDA when there is one, else CPU; asking for CUDA without one is an error (notebook 00_setup)."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda":
        require_cuda("device 'cuda'")
    return device


def require_positive(**sizes) -> None:
    """One clear error for a size that is not a positive integer; booleans are not sizes (notebook 00_setup)."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def synchronize(device: str | torch.device = "cuda") -> None:
    """Wait for the GPU's queued work; nothing on the CPU (notebook 01_naive)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


COMPILE_CACHES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")  # where torch.compile keeps compiled code on disk


def fresh_compile_caches() -> str:
    """Point torch.compile's on-disk caches at a new, empty temporary folder, for the rest of this
    process: inductor's (FX graphs, AOT graphs, autotuning: TORCHINDUCTOR_CACHE_DIR = the folder)
    and Triton's compiled kernels (TRITON_CACHE_DIR = its `triton` subfolder). A first compile
    after it compiles everything, whatever other processes compiled on this machine before
    (notebook 05_torch_compile times its first call cold). Both are read when a cache is next
    looked up (inductor's `cache_dir()`, Triton's `knobs.cache.dir`), so call it before the
    process's first torch.compile; inductor's in-memory memo of its paths is cleared if loaded.
    Only these two variables change; the folder is deleted when the process exits. Returns a
    sentence that says so."""
    folder = tempfile.mkdtemp(prefix="tokgen-compile-caches-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    inductor, triton = COMPILE_CACHES
    os.environ[inductor], os.environ[triton] = folder, os.path.join(folder, "triton")
    utils = sys.modules.get("torch._inductor.utils")
    if utils is not None:  # paths it memoised before (none in a fresh process); older torch names it differently
        (getattr(utils, "clear_caches", None) or utils.clear_inductor_caches)()
    return ("torch.compile's on-disk caches (inductor's and Triton's: TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR) "
            "point at a new, empty folder: this notebook's first compiled call compiles everything, whatever "
            "earlier notebooks compiled on this machine.")  # fmt: skip


def build_model(size: str = "gpt2", device: str | torch.device | None = None, seed: int = 0) -> GPT2LMHeadModel:
    """GPT-2 with random weights as in the article: fp32, eval mode, TF32 matmuls ("high").

    Nothing is downloaded: `GPT2Config()` defaults equal the hub's "gpt2" config.
    The same seed gives the same weights. Introduced in notebook 00_setup.
    """
    device = resolve_device(device)
    torch.set_float32_matmul_precision("high")
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(gpt2_config(size))
    return model.to(device).eval()


def num_parameters(model: torch.nn.Module) -> int:
    """Unique parameters; the LM head shares the token-embedding matrix (notebook 00_setup)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def parameter_bytes(model: torch.nn.Module) -> int:
    """Bytes of the unique parameters (notebook 00_setup)."""
    return sum(p.numel() * p.element_size() for p in {id(p): p for p in model.parameters()}.values())


@functools.cache
def _forward_takes_cache_position(forward) -> bool:
    return "cache_position" in inspect.signature(forward).parameters


def takes_cache_position(model: torch.nn.Module) -> bool:
    """transformers 5.1 wants `cache_position` with a StaticCache; 5.4+ dropped the argument (notebook 04)."""
    model = getattr(model, "_orig_mod", model)  # a torch.compile wrapper
    return _forward_takes_cache_position(type(model).forward)
