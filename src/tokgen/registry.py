"""The generators by name, and the labels every table uses for them (notebook 00_setup).

`GENERATORS` entries are called as ``fn(model, *, batch_size, max_seqlen, eos_token_id=None,
prompt=None, on_step=no_hook, **options)`` and return the tokens `generate_naive` returns: exactly
on the article's all-BOS batch, early stops included; on distinct prompts under the rule of
`tokgen.agreement` (tests check both). Entries in `NO_STOP_CHECK` skip the EOS check by design and always run
max_seqlen steps. `REFERENCES` are compared against but not held to the naive tokens when rows
stop early. `label()` is the one place a variant's name in a table is built.
"""

from functools import partial

from .generators import (
    article_pipelined,
    generate_kv,
    generate_naive,
    generate_pipelined,
    transformers_generate,
)
from .graphs import generate_graph

GENERATORS = {
    # the article (notebooks 01-07)
    "naive": generate_naive,
    "kv_dynamic": partial(generate_kv, cache="dynamic"),
    "kv_static": partial(generate_kv, cache="static"),
    "kv_dynamic_no_check": partial(generate_kv, cache="dynamic", check_stop=False),
    "kv_static_no_check": partial(generate_kv, cache="static", check_stop=False),
    "pipelined_dynamic": partial(generate_pipelined, cache="dynamic"),
    "pipelined_static": partial(generate_pipelined, cache="static"),
    # beyond the article (notebook 10): K steps per CUDA graph replay (steps_per_graph, 4 by default)
    "pipelined_static_1stream": partial(generate_pipelined, cache="static", streams=1),
    "graph_transformers": partial(generate_graph, step="transformers"),
    "graph_handwritten": partial(generate_graph, step="handwritten"),
    "graph_handwritten_compiled": partial(generate_graph, step="handwritten", compile_backend="inductor"),
    # ... attending over the filled cache slots only (our Triton kernel); on our Triton kernels throughout
    "graph_filled_attention": partial(generate_graph, step="handwritten", compile_backend="inductor", filled_only=True),
    "graph_triton_kernels": partial(generate_graph, step="triton"),
    # ... on fewer, fused kernels: norms folded into products, the end of the step in one kernel
    "graph_triton_fused": partial(generate_graph, step="fused"),
    # ... and the whole decode in one replay that stops on the GPU
    "graph_stop_on_device": partial(generate_graph, step="fused", stop_on_device=True),
}
NO_STOP_CHECK = {"kv_dynamic_no_check", "kv_static_no_check"}
# entries whose decode loop runs on the GPU, in a CUDA graph WHILE node: CUPTI sees one iteration of it
LOOPS_ON_DEVICE = {"graph_stop_on_device"}
# entries that compile their own step: they take `compile_backend` ("eager" on a CPU: inductor's C++ build is slow)
COMPILES_ITSELF = {"graph_handwritten_compiled", "graph_filled_attention"}
# each entry: the notebook that introduces it and what it does, in one line (notebook 00's table)
DESCRIPTIONS = {
    "naive": ("01", "re-runs the whole sequence every step (O(N²) work); an `.item()` stop check every step"),
    "kv_dynamic": ("02", "feeds the newest token only; a KV cache that grows one position per step"),
    "kv_static": ("04", "the KV-cache loop on a cache allocated for max_seqlen up front, written in place"),
    "kv_dynamic_no_check": ("07", "kv_dynamic without any EOS check: always max_seqlen steps"),
    "kv_static_no_check": ("07", "kv_static without any EOS check: always max_seqlen steps"),
    "pipelined_dynamic": ("07", "queues step i on stream i % 2 before reading step i−1's stop flag; dynamic cache"),
    "pipelined_static": ("07", "the same loop on the static cache: the article's two streams, stop read correctly"),
    "pipelined_static_1stream": ("07", "pipelined_static on one stream: the late check without a second stream"),
    "graph_transformers": ("10", "K steps of the transformers model per CUDA graph replay; the stop read per replay"),
    "graph_handwritten": ("10", "K steps per replay of GPT-2's step written out by hand in PyTorch ops"),
    "graph_handwritten_compiled": ("10", "graph_handwritten with that step compiled by torch.compile"),
    "graph_filled_attention": ("10", "graph_handwritten_compiled attending over the filled cache slots only"),
    "graph_triton_kernels": ("10", "the hand-written step on our Triton kernels, K steps per replay"),
    "graph_triton_fused": ("10", "fewer, fused kernels: norms folded into products, the step's end in one kernel"),
    "graph_stop_on_device": ("10", "the fused step, the whole decode in one graph launch stopped on the GPU: no K"),
}

REFERENCES = {
    "generate() dynamic": transformers_generate,
    "generate() static": partial(transformers_generate, cache_implementation="static"),
    "article_pipelined": article_pipelined,
    # transformers >= 5.17 only (notebook 14): its DeferredStopCheck forced on / off
    "generate() dynamic deferred": partial(transformers_generate, deferred_stop=True),
    "generate() static deferred": partial(transformers_generate, cache_implementation="static", deferred_stop=True),
    "generate() dynamic sync": partial(transformers_generate, deferred_stop=False),
    "generate() static sync": partial(transformers_generate, cache_implementation="static", deferred_stop=False),
}


def get_generator(name: str):
    """The generator called `name`, from `GENERATORS` or `REFERENCES`; a clear error for unknown names
    (notebook 00_setup)."""
    if name in GENERATORS:
        return GENERATORS[name]
    if name in REFERENCES:
        return REFERENCES[name]
    raise ValueError(f"unknown generator {name!r}; registered: {', '.join([*GENERATORS, *REFERENCES])}")


def generate(name: str, model, **kwargs):
    """Run the generator `name` with the common signature (notebook 00_setup)."""
    return get_generator(name)(model, **kwargs)


def label(
    generator: str,
    *,
    compiled: bool = False,
    k: int | None = None,
    max_seqlen: int | None = None,
    batch_size: int | None = None,
) -> str:
    """A variant's name in every table: "[compiled ]generator[ K=k][ N=n][ B=b]", e.g. "compiled
    kv_static", "graph_handwritten_compiled K=4", "naive N=200", "pipelined_static B=32". An unknown
    generator is an error, so a renamed one cannot quietly become "not measured" (notebook 00_setup)."""
    get_generator(generator)
    parts = [("compiled " if compiled else "") + generator]
    parts += [f"{key}={value}" for key, value in (("K", k), ("N", max_seqlen), ("B", batch_size)) if value is not None]
    return " ".join(parts)
