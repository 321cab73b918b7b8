"""The notebooks' parameters: one rule per name, checked right after each parameters cell.

Introduced in notebook 00_setup. `papermill -p NAME VALUE` hands every value over as a string;
`check_parameters` parses it the way `papermill -y` would (YAML: "[1, 4, 16]" is a list, "16"
an integer) and stops the notebook with one line naming the parameter and what it accepts,
instead of letting a sweep iterate over the characters of "[1, 4, 16]". The runner uses the
same rules before it starts a kernel.
"""

import re

import yaml

SIZES = ("gpt2", "tiny", "micro")  # tokgen.model.SIZES (a test keeps the two equal)
BACKENDS = ("inductor", "eager", "aot_eager")


class ParameterError(ValueError):
    """A parameter with a value its notebook cannot use; the message is one line (notebook 00_setup)."""


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _positive_list(value) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(_positive(v) for v in value)


def _window(value) -> bool:
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )
    return ok and 0 <= value[0] < value[1]


# name: (what it accepts, in words; the test)
POSITIVE = ("a positive integer", _positive)
POSITIVE_LIST = ("a non-empty list of positive integers, e.g. [1, 4, 16]", _positive_list)
RULES = {
    "SIZE": (f"one of {', '.join(SIZES)}", lambda v: v in SIZES),
    "DEVICE": ("'cuda' or 'cpu'", lambda v: v in ("cuda", "cpu")),
    "COMPILE_BACKEND": (f"one of {', '.join(BACKENDS)}", lambda v: v in BACKENDS),
    "RESULTS_DIR": ("a folder path", lambda v: isinstance(v, str) and v.strip() != ""),
    "SLICE_RESULTS_DIR": ("a folder path", lambda v: isinstance(v, str) and v.strip() != ""),
    "DATA_DIR": ("a folder path", lambda v: isinstance(v, str) and v.strip() != ""),
    "BATCH_SIZE": POSITIVE,
    "MAX_SEQLEN": POSITIVE,
    "RUNS": POSITIVE,
    "MAX_RUNS": POSITIVE,
    "TOKENS": POSITIVE,
    "DISTINCT_PROMPTS": POSITIVE,
    "DISTINCT_BATCH": POSITIVE,
    "DISTINCT_SEQLEN": POSITIVE,
    "COPY_MB": POSITIVE,
    "SEQ_LENS": POSITIVE_LIST,
    "BATCH_SIZES": POSITIVE_LIST,
    "COMPILED_BATCH_SIZES": POSITIVE_LIST,
    "STEPS_PER_GRAPH": POSITIVE_LIST,
    "STOP_AT": POSITIVE_LIST,
    "PRODUCT_ROWS": POSITIVE_LIST,
    "PRODUCT_SPLITS": POSITIVE_LIST,
    "SLICE_SMS": POSITIVE_LIST,
    "MAP_SMS": (
        "None (the two slices around the L40S) or " + POSITIVE_LIST[0],
        lambda v: v is None or _positive_list(v),
    ),
    "SWEEP_BATCH_SIZES": POSITIVE_LIST,
    "GPU_SMS": ("None (the whole GPU) or a positive number of SMs", lambda v: v is None or _positive(v)),
    "WINDOW": ("two integers [start, stop] with 0 <= start < stop", _window),
}


def parse(value):
    """A value as `papermill -y` reads it: YAML for strings ("16" -> 16, "[1, 2]" -> [1, 2]), else as
    is (notebook 00_setup)."""
    if not isinstance(value, str):
        return value
    if value.strip() == "None":  # papermill -p GPU_SMS None: Python's spelling of YAML's null
        return None
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    return value if parsed is None and value.strip() not in ("null", "~") else parsed


def check(name: str, value):
    """The value of parameter `name`, parsed; ParameterError (one line) when its rule rejects it
    (notebook 00_setup)."""
    if name not in RULES:
        raise ParameterError(f"{name} is not a parameter of any notebook; known: {', '.join(sorted(RULES))}")
    accepts, ok = RULES[name]
    parsed = parse(value)
    if not ok(parsed) and not (isinstance(value, str) and ok(value)):
        raise ParameterError(f"parameter {name} must be {accepts}, got {value!r}")
    return parsed if ok(parsed) else value


def check_parameters(namespace: dict) -> dict:
    """Check the notebook's UPPER_CASE parameters in `namespace` (its globals, right after the
    parameters cell), replace string values by what they parse to, and return them as a dict
    for every table's provenance (notebook 00_setup)."""
    names = sorted(n for n in namespace if re.fullmatch(r"[A-Z][A-Z0-9_]*", n))
    params = {name: check(name, namespace[name]) for name in names}
    namespace.update(params)
    if params.get("SIZE", "gpt2") != "gpt2" or params.get("DEVICE") == "cpu":
        print(f"SMOKE RUN (SIZE={params.get('SIZE')}, DEVICE={params.get('DEVICE')}): the numbers below test the code;")
        print("they measure nothing, and no claim gets a verdict.")
    return params
