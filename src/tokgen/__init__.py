"""tokgen: fast token generation in PyTorch, step by step (see the notebooks)."""

from .bench import Variant, compare, gains, generator_variant, memory_peaks, run_times
from .generators import generate_kv, generate_naive, generate_pipelined
from .graphs import generate_graph
from .model import build_model, num_parameters, parameter_bytes, require_cuda, resolve_device
from .profiling import annotations, count_syncs, plot_timeline, profile_steps
from .registry import GENERATORS, NO_STOP_CHECK, generate, get_generator
from .results import Recorder, describe_environment, environment, load

__all__ = [
    "GENERATORS",
    "NO_STOP_CHECK",
    "Recorder",
    "Variant",
    "annotations",
    "build_model",
    "compare",
    "count_syncs",
    "describe_environment",
    "environment",
    "gains",
    "generate",
    "generate_graph",
    "generate_kv",
    "generate_naive",
    "generate_pipelined",
    "generator_variant",
    "get_generator",
    "load",
    "memory_peaks",
    "num_parameters",
    "parameter_bytes",
    "plot_timeline",
    "profile_steps",
    "require_cuda",
    "resolve_device",
    "run_times",
]
