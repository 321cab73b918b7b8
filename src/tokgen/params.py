"""The notebooks' parameters: one rule per name, checked right after each parameters cell.

Introduced in notebook 00_setup. `papermill -p NAME VALUE` hands every value over as a string;
`check_parameters` parses it the way `papermill -y` would (YAML: "[1, 4, 16]" is a list, "16"
an integer) and stops the notebook with one line naming the parameter and what it accepts,
instead of letting a sweep iterate over the characters of "[1, 4, 16]". The runner uses the
same rules before it starts a kernel.
"""

import re
import sys

import yaml

from .sizes import SHAPES, generation_bytes, too_large

SIZES = tuple(SHAPES)  # the model sizes of tokgen.model
BACKENDS = ("inductor", "eager", "aot_eager")


class ParameterError(ValueError):
    """A parameter with a value its notebook cannot use; the message is one line, and a notebook shows
    that line instead of a traceback (notebook 00_setup)."""

    def __init__(self, message: str, name: str | None = None):
        super().__init__(message)
        self.name = name  # the parameter, where one is to blame

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines in place of the traceback
        return [f"{type(self).__name__}: {self}"]


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _positive_list(value) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(_positive(v) for v in value)


def _positive_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")


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
    "WINDOWS": POSITIVE,
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
    "MEMORY_GB": ("a positive number of gigabytes, e.g. 16", _positive_number),  # the quick run's cap (issue 48)
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
        raise ParameterError(f"parameter {name} must be {accepts}, got {value!r}", name)
    return parsed if ok(parsed) else value


# Sizes checked against the model and the device before anything runs (tokgen.sizes): lengths are
# tokens generated (or steps: one token each), at most the model's positions; a batch parameter is
# checked with the lengths its notebook generates to; a copy (both buffers) and a product's rows
# (the MLP's widest input) on their own.
LENGTHS = ("MAX_SEQLEN", "SEQ_LENS", "DISTINCT_SEQLEN", "TOKENS", "STEPS_PER_GRAPH", "STOP_AT", "WINDOW")
BATCHES = {
    "BATCH_SIZE": ("MAX_SEQLEN", "SEQ_LENS", "TOKENS"),
    "BATCH_SIZES": ("MAX_SEQLEN",),
    "COMPILED_BATCH_SIZES": ("MAX_SEQLEN",),
    "SWEEP_BATCH_SIZES": ("MAX_SEQLEN",),
    "DISTINCT_BATCH": ("DISTINCT_SEQLEN",),
}
MICRO_TOKENS = 2  # notebook 11 also runs the micro model, for 2 x TOKENS tokens
SMS = ("GPU_SMS", "SLICE_SMS", "MAP_SMS")


def _values(value) -> list:
    return [] if value is None else value if isinstance(value, list) else [value]


def check_device(values: dict) -> None:
    """DEVICE "cuda" on a machine without a CUDA GPU: one line saying how to run the notebook here
    instead (notebook 00_setup)."""
    if values.get("DEVICE") != "cuda":
        return
    import torch  # not at the top: the runner reads the rules before torch loads

    if not torch.cuda.is_available():
        raise ParameterError(
            'parameter DEVICE is "cuda", but this machine has no CUDA GPU: to run this notebook here, set '
            'DEVICE = "cpu" and SIZE = "tiny" in its parameters cell (a smoke run: it tests the code and '
            "measures nothing), or run ./run_all.sh --smoke",
            "DEVICE",
        )


def check_sizes(values: dict, given=None, recompute=()) -> None:
    """Sizes the model or the device cannot hold, refused in one line naming the parameter: a length
    beyond the model's positions; a batch size with its lengths, a copy or a product whose least
    memory (`tokgen.sizes`) exceeds all of the device's; more SMs than the GPU has. `values`: a
    notebook's parameters, parsed (SIZE and DEVICE among them, else GPT-2 small on CUDA); `given`:
    check only what involves these names (the runner's -p), default every size; `recompute`: the
    batch parameters the notebook runs the naive generator at, which re-runs every position
    (default: none, the least any generator holds). Notebook 00_setup."""
    size, device = values.get("SIZE", "gpt2"), values.get("DEVICE", "cuda")
    size = size if size in SHAPES else "gpt2"
    shape = SHAPES[size]
    asked = set(values if given is None else given)

    def show(name):
        return f"{name} = {values[name]!r}"

    for name in sorted(asked & set(LENGTHS) & set(values)):
        runs = [(n, size) for n in _values(values[name])]
        runs += [(MICRO_TOKENS * values[name], "micro")] if name == "TOKENS" else []  # notebook 11's micro model
        for n, model in runs:
            if n > SHAPES[model]["n_positions"]:
                positions = SHAPES[model]["n_positions"]
                raise ParameterError(
                    f"parameter {show(name)}: {n} tokens exceed the {model} model's {positions} positions", name
                )
    for batch, lengths in BATCHES.items():
        for length in [x for x in lengths if x in values and batch in values and {batch, x} & asked]:
            for b in _values(values[batch]):
                n = max(_values(values[length]))
                said = too_large(generation_bytes(shape, b, n, recompute=batch in recompute), device)
                if said:
                    name, other = (batch, length) if batch in asked else (length, batch)
                    raise ParameterError(f"parameter {show(name)} with {show(other)}: B = {b}, N = {n} {said}", name)
    alone = {"COPY_MB": lambda mb: 2 * mb * 2**20, "PRODUCT_ROWS": lambda rows: rows * 4 * shape["n_embd"] * 4}
    for name in sorted(asked & set(alone) & set(values)):
        said = too_large(max(alone[name](v) for v in _values(values[name])), device)
        if said:
            raise ParameterError(f"parameter {show(name)} {said}", name)
    sms = [(name, v) for name in sorted(asked & set(SMS) & set(values)) for v in _values(values[name])]
    if sms and device == "cuda":
        import torch  # not at the top: the runner reads the rules before torch loads

        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            for name, v in sms:
                if v > props.multi_processor_count:
                    raise ParameterError(
                        f"parameter {show(name)}: {v} SMs exceed the {props.multi_processor_count} of {props.name}",
                        name,
                    )


def check_rounds(values: dict, given=None) -> None:
    """MAX_RUNS, the cap on a comparison's rounds, below RUNS, the rounds it runs first: refused in one
    line naming the parameter (it would run only MAX_RUNS rounds and look at them once). `given`: as
    in `check_sizes`, only when it names RUNS or MAX_RUNS (notebook 00_setup)."""
    if "RUNS" not in values or "MAX_RUNS" not in values:
        return
    if given is not None and not {"RUNS", "MAX_RUNS"} & set(given):
        return
    if values["MAX_RUNS"] < values["RUNS"]:
        name = "RUNS" if given is not None and "MAX_RUNS" not in given else "MAX_RUNS"
        raise ParameterError(
            f"parameter MAX_RUNS = {values['MAX_RUNS']!r} is below RUNS = {values['RUNS']!r}: the cap on a "
            "comparison's rounds must be at least the rounds it runs first",
            name,
        )


def check_parameters(namespace: dict) -> dict:
    """Check the notebook's UPPER_CASE parameters in `namespace` (its globals, right after the
    parameters cell), replace string values by what they parse to, and return them as a dict
    for every table's provenance (notebook 00_setup). DEVICE "cuda" without a GPU, sizes the
    model or the device cannot hold, and MAX_RUNS below RUNS stop the notebook here with one line
    (`check_device`, `check_sizes`, `check_rounds`)."""
    names = sorted(n for n in namespace if re.fullmatch(r"[A-Z][A-Z0-9_]*", n))
    try:
        params = {name: check(name, namespace[name]) for name in names}
        check_device(params)
        check_sizes(params)
        check_rounds(params)
    except ParameterError as err:
        if sys.__stderr__ is not None:  # the kernel's own stderr: `jupyter nbconvert --execute` prints it first
            print(f"{type(err).__name__}: {err}", file=sys.__stderr__, flush=True)
        raise
    namespace.update(params)
    if params.get("SIZE", "gpt2") != "gpt2" or params.get("DEVICE") == "cpu":
        print(f"SMOKE RUN (SIZE={params.get('SIZE')}, DEVICE={params.get('DEVICE')}): the numbers below test the code;")
        print("they measure nothing, and no claim gets a verdict.")
    return params
