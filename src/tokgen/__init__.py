"""tokgen: fast token generation in PyTorch, step by step (see the notebooks).

Architecture: three layers, each importing only from the ones above it.

    model, gpu_slice, sizes   GPT-2 with random weights; size and device checks; a green-context
                              slice; the positions and memory a generation needs
      decoding    generators (the article's loops), kernels (our Triton kernels), handwritten
                  (GPT-2's step by hand), graphs (K steps per CUDA graph replay), registry (names)
        measuring  agreement (which tokens count as the naive ones), bench (interleaved timing),
                   memory, stats (gains, fits), voice (how a comparison is said: one renderer,
                   rankings with ties), profiling (windows, timelines, sync counts),
                   gaps (notebook 06's idle gap before a step and whether the sync opens it),
                   bandwidth (the floor), waterfall (from the floor to the measured time),
                   persistent (what a persistent step kernel could reach),
                   results (CSVs)
          reporting   params (notebook parameters), claims (the article's claims),
                      regimes (notebook 13's map of hiding the sync), display

The package `tokgen_tools` beside it runs the notebooks (runner) and writes README.md's
tables (readme); the notebooks never import it.

`import tokgen` is cheap: the names below load their module on first use, so the command
line (`run_all.sh --help`) does not wait for torch.
"""

import importlib
import os
import warnings

# Kineto (torch.profiler's back end) calls cuptiFinalize at the end of each profile where TEARDOWN_CUPTI is
# "1", so a profiled process does not keep CUPTI set up (pytorch/pytorch#144455, pytorch/kineto#1264; CUDA
# graphs work with it from CUDA 12.6). It reads the variable at run time (getenv), so setting it here, before
# any of tokgen's profiles, is enough; a value the user set (TEARDOWN_CUPTI=0) is kept. Notebook 06_eos_sync_profile.
os.environ.setdefault("TEARDOWN_CUPTI", "1")

# transformers imports tqdm.auto, which warns in a Jupyter kernel without ipywidgets; we draw no progress bars
warnings.filterwarnings("ignore", message="IProgress not found")

_EXPORTS = {
    "model": [
        "build_model",
        "fresh_compile_caches",
        "num_parameters",
        "parameter_bytes",
        "require_cuda",
        "resolve_device",
    ],
    "gpu_slice": ["GpuSlice", "use_slice"],
    "generators": [
        "article_pipelined",
        "generate_kv",
        "generate_naive",
        "generate_pipelined",
        "transformers_generate",
    ],
    "graphs": ["DeviceStopDecoder", "GraphDecoder", "TransformersStep", "generate_graph", "graph_capacity"],
    "handwritten": ["FusedStep", "HandwrittenStep", "TritonStep"],
    "registry": [
        "COMPILES_ITSELF",
        "GENERATORS",
        "LOOPS_ON_DEVICE",
        "NO_STOP_CHECK",
        "REFERENCES",
        "generate",
        "get_generator",
        "label",
    ],
    "agreement": ["Reference", "agreement", "assert_tokens_match", "naive_reference", "tokens_match"],
    "bench": ["Variant", "compare", "generator_variant"],
    "stats": ["gain", "gains"],
    "profiling": ["count_syncs", "profile_steps"],
    "results": ["MissingRows", "Recorder", "describe_environment", "environment", "load", "rows_at"],
    "params": ["check_parameters"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


_MODULES = {*_EXPORTS, "bandwidth", "claims", "display", "gaps", "kernels", "memory", "persistent", "regimes", "sizes",
            "voice", "waterfall"}


def __getattr__(name: str):
    if name in _MODULES:  # tokgen.bandwidth, tokgen.display, ...
        return importlib.import_module(f"{__name__}.{name}")
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'tokgen' has no attribute {name!r}")
