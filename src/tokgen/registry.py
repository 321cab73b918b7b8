"""The registry of generators: name -> function with the common signature (notebook 00_setup).

Every entry is called as ``fn(model, *, batch_size, max_seqlen, eos_token_id=None, **options)``
and returns the tokens `generate_naive` returns (see tokgen.generators). Entries in
`NO_STOP_CHECK` skip the EOS check by design and always run max_seqlen steps.
"""

from functools import partial

from .generators import generate_kv, generate_naive, generate_pipelined
from .graphs import generate_graph

GENERATORS = {
    # the article
    "naive": generate_naive,
    "kv_dynamic": partial(generate_kv, cache="dynamic"),
    "kv_static": partial(generate_kv, cache="static"),
    "kv_dynamic_no_check": partial(generate_kv, cache="dynamic", check_stop=False),
    "kv_static_no_check": partial(generate_kv, cache="static", check_stop=False),
    "pipelined_dynamic": partial(generate_pipelined, cache="dynamic"),
    "pipelined_static": partial(generate_pipelined, cache="static"),
    # beyond the article
    "pipelined_static_1stream": partial(generate_pipelined, cache="static", streams=1),
    "graph_hf": partial(generate_graph, step="hf"),
    "graph_lean": partial(generate_graph, step="lean"),
    "fast": partial(generate_graph, step="lean_compiled", steps_per_graph=8),
}

NO_STOP_CHECK = {"kv_dynamic_no_check", "kv_static_no_check"}


def get_generator(name: str):
    """The registered generator called `name`; a clear error for unknown names."""
    try:
        return GENERATORS[name]
    except KeyError:
        raise ValueError(f"unknown generator {name!r}; registered: {', '.join(GENERATORS)}") from None


def generate(name: str, model, **kwargs):
    """Run the registered generator `name` with the common signature."""
    return get_generator(name)(model, **kwargs)
