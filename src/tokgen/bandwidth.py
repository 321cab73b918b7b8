"""The speed of light: the fewest bytes a generation must move, over the measured DRAM bandwidth.

Introduced in notebook 12_speed_of_light. Decoding one token at a time reads every weight once
per step, plus the keys and values of the cache: at small batch sizes that traffic, not the
arithmetic, bounds how fast any generator can be.
"""

import functools
import inspect
import math
import random
import statistics

import pandas as pd
import torch
import torch.nn.functional as F

from .bench import compare, generator_variant, round_orders
from .gpu_slice import copy_bandwidth, gpu_times  # noqa: F401 - notebook 12 reads copy_bandwidth here
from .graphs import capture, graph_capacity
from .model import parameter_bytes, require_cuda, require_positive
from .registry import GENERATORS, get_generator
from .results import MissingRows, Recorder, environment, rows_at
from .stats import gain, shared_rounds
from .voice import ranking, speedup_text


def weight_bytes_per_step(model) -> int:
    """Every parameter is read once per step, except the position table, of which one row is (notebook 12)."""
    wpe = model.transformer.wpe.weight
    return parameter_bytes(model) - wpe.numel() * wpe.element_size() + wpe.shape[1] * wpe.element_size()


def kv_bytes(model, batch_size: int, positions: int) -> int:
    """Keys and values of `positions` cached positions, all layers (notebook 12)."""
    cfg = model.config
    return 2 * cfg.n_layer * batch_size * positions * cfg.n_embd * model.dtype.itemsize


def generation_bytes(model, batch_size: int, max_seqlen: int, kv_read: str = "filled", slots: int | None = None) -> int:
    """Bytes one generation of `max_seqlen` steps must read and write at the least (notebook 12).

    kv_read: "filled" reads the positions cached so far at each step (the minimum), "static"
    a whole cache of `slots` positions (default: max_seqlen) at every step (what attention over
    a StaticCache reads), "none" no cache read, "recompute" the naive generator: no cache, every
    step runs the whole sequence so far and writes the logits of every one of its positions (the
    model returns them all), which it must move whatever its kernels.
    """
    if kv_read not in ("filled", "static", "none", "recompute"):
        raise ValueError(f"kv_read must be 'filled', 'static', 'none' or 'recompute', got {kv_read!r}")
    total = 0
    vocab = model.config.vocab_size * model.dtype.itemsize
    for step in range(max_seqlen):
        total += weight_bytes_per_step(model)
        if kv_read == "recompute":
            total += batch_size * (step + 1) * vocab  # the logits of every position: the prompt's and each new one
            continue
        total += kv_bytes(model, batch_size, 1)  # this step's keys and values are written
        if kv_read == "filled":
            total += kv_bytes(model, batch_size, step)
        elif kv_read == "static":
            total += kv_bytes(model, batch_size, max_seqlen if slots is None else slots)
    return total


def cache_bytes_per_row(model, max_seqlen: int) -> int:
    """The KV cache's bytes that one row of the batch adds to a generation of `max_seqlen` steps
    reading the filled positions (`generation_bytes` "filled": each step writes its keys and values
    and reads those cached before): `generation_bytes` grows by this much per row, the weights'
    bytes not at all (notebook 12_speed_of_light's solution, exercise 1)."""
    return generation_bytes(model, 1, max_seqlen) - max_seqlen * weight_bytes_per_step(model)


# the steps of generate_graph whose attention reads the filled slots only (our Triton kernel);
# "transformers" and "handwritten" (without filled_only) attend over every slot of their cache
FILLED_STEPS = {"triton", "fused"}
ALL_SLOTS_STEPS = {"transformers", "handwritten"}


def _options(fn) -> tuple[str, dict]:
    """The loop behind a registry entry and its options: the function's defaults, then the partial's."""
    func = getattr(fn, "func", fn)
    defaults = {name: p.default for name, p in inspect.signature(func).parameters.items() if p.default is not p.empty}
    return inspect.unwrap(func).__name__, defaults | getattr(fn, "keywords", {})


@functools.cache
def cache_read(generator: str, max_seqlen: int, steps_per_graph: int | None = None) -> tuple[str, int]:
    """How the registry's `generator` reads its KV cache at every step, for `generation_bytes`:
    ("recompute", 0) has none and runs the whole sequence every step (naive), ("filled", 0) reads
    the filled positions only, ("static", slots)
    reads all `slots` positions of a static cache, empty ones included (notebook 12_speed_of_light).
    A graph decoder's cache holds `graph_capacity` positions; `generate(cache_implementation=
    "static")` one more than max_seqlen (the prompt's). Read from the registry entry's options, so a
    generator added later is classified by what it does, or refused with the reason."""
    loop, options = _options(get_generator(generator))
    if loop == "generate_naive":
        return "recompute", 0
    if loop in ("generate_kv", "generate_pipelined"):
        return ("static", max_seqlen) if options["cache"] == "static" else ("filled", 0)
    if loop == "article_pipelined":
        return "static", max_seqlen
    if loop == "transformers_generate":
        return ("static", max_seqlen + 1) if options.get("cache_implementation") == "static" else ("filled", 0)
    if loop == "generate_graph":
        if options.get("filled_only") or options["step"] in FILLED_STEPS:
            return "filled", 0
        if options["step"] in ALL_SLOTS_STEPS:
            k = 1 if options.get("stop_on_device") else steps_per_graph or options["steps_per_graph"]
            return "static", graph_capacity(max_seqlen, k)
        raise ValueError(f"{generator}: step {options['step']!r} is in neither FILLED_STEPS nor ALL_SLOTS_STEPS")
    raise ValueError(f"{generator}: how does its loop {loop!r} read the cache? (tokgen.bandwidth.cache_read)")


def generation_flops(model, batch_size: int, max_seqlen: int, kv_read: str = "filled") -> float:
    """Floating-point operations of one generation's matrix products, 2 per multiply-add: every
    weight matrix (the LM head included) once per position processed, and attention's two products
    over the positions attended (notebook 12_speed_of_light). A generator with a cache processes
    one position per row and step; "recompute" (the naive generator) the whole sequence so far."""
    cfg = model.config
    inner = cfg.n_inner or 4 * cfg.n_embd  # GPT-2: None means 4 × n_embd
    layer = 2 * (4 * cfg.n_embd * cfg.n_embd + 2 * cfg.n_embd * inner)
    per_position = cfg.n_layer * layer + 2 * cfg.n_embd * cfg.vocab_size
    total = 0.0
    for step in range(max_seqlen):
        positions = step + 1  # the prompt's and the ones generated so far
        if kv_read == "recompute":  # every position again, each attending to those before it
            total += batch_size * positions * per_position
            total += batch_size * cfg.n_layer * 4 * cfg.n_embd * positions * (positions + 1) / 2
        else:
            total += batch_size * (per_position + cfg.n_layer * 4 * cfg.n_embd * positions)
    return total


def matmul_tflops(device: str | torch.device = "cuda", size: int = 8192, runs: int = 10) -> float:
    """The matrix-product throughput this GPU reaches in fp32 with TF32 allowed (the notebooks'
    precision), in TFLOP/s: the median of `runs` products of two `size` × `size` matrices, timed on
    the GPU (notebook 12_speed_of_light). A ceiling for compute, as the copy is for bytes."""
    require_cuda("matmul_tflops")
    a = torch.rand(size, size, device=device)
    b = torch.rand(size, size, device=device)
    a @ b  # warm-up: cuBLAS picks its kernel
    seconds = statistics.median(gpu_times(lambda: a @ b, runs)) / 1e3
    return 2 * size**3 / seconds / 1e12


def floor_ms(model, batch_size: int, steps: int, bandwidth_gbs: float, kv_read: str = "filled", slots=None) -> float:
    """Milliseconds of `generation_bytes` at `bandwidth_gbs`: a generation's floor (notebooks 10 and 12).
    With the defaults, the *task's* floor: the filled cache only, what any generator must move."""
    return generation_bytes(model, batch_size, steps, kv_read, slots) / bandwidth_gbs / 1e6


def gb_per_s(nbytes, ms):
    """GB/s of `nbytes` bytes moved in `ms` milliseconds (scalars or arrays): bytes / ms / 1e6, the rate set
    beside a time (review rv19B S4; notebooks 10 and 12)."""
    return nbytes / ms / 1e6


def floor_table(timed: pd.DataFrame, model, bandwidth_gbs: float, tflops: float | None = None) -> pd.DataFrame:
    """Every timed row (variant, generator, batch_size, max_seqlen, steps, median_ms; steps_per_graph
    for a graph decoder) against two floors (notebook 12_speed_of_light): its own, for what it must
    move (`cache_read`) and, given a measured matrix-product throughput `tflops`, compute
    (`generation_flops`), whichever is longer (`bound_by`); and the task's (the filled cache only,
    bytes). pct_of_own_floor = 100 × own floor / median time, times_task_floor = median time / task
    floor, rate_gb_s = the bytes of its own floor (what it must move) over its median time
    (`gb_per_s`). Without `tflops`, compute_floor_ms is NaN and a floor bound by arithmetic (the naive
    generator's) is only a lower bound. In the table's order: this is no ranking. Each median is over
    the rounds every interleaved variant ran (`tokgen.stats.shared_rounds`: a sequential run,
    notebook 07's, lets some variants run on)."""
    rows = []
    for r in shared_rounds(timed).to_dict("records"):
        k = r.get("steps_per_graph")
        kv, slots = cache_read(r["generator"], int(r["max_seqlen"]), None if k is None or k != k else int(k))
        b, steps = int(r["batch_size"]), int(r["steps"])
        moved = floor_ms(model, b, steps, bandwidth_gbs, kv, slots)
        compute = generation_flops(model, b, steps, kv) / (tflops * 1e9) if tflops else float("nan")
        own = max(moved, compute) if compute == compute else moved
        task = floor_ms(model, b, steps, bandwidth_gbs)
        rows.append(
            {
                **{c: r[c] for c in ("variant", "notebook") if c in r},
                "median_ms": r["median_ms"],
                "kv_read": kv if kv != "static" else f"static ({slots} slots)",
                "bytes_floor_ms": moved,
                "compute_floor_ms": compute,
                "bound_by": "bytes (compute not measured)" if compute != compute else
                            "arithmetic" if compute > moved else "bytes",  # fmt: skip
                "own_floor_ms": own,
                "pct_of_own_floor": 100 * own / r["median_ms"],
                "task_floor_ms": task,
                "times_task_floor": r["median_ms"] / task,
                "rate_gb_s": gb_per_s(generation_bytes(model, b, steps, kv, slots), r["median_ms"]),
            }
        )
    return pd.DataFrame(rows)


def recorded_bandwidth(results_dir) -> dict | None:
    """The copy bandwidth notebook 10 measured for its floor and recorded (data/10_bandwidth.csv under
    `results_dir`), if it measured it in this run (`tokgen.results.rows_at`'s `this_run`: this commit,
    GPU and slice) on this card (the same GPU UUID, where both name one: a bandwidth is one card's):
    one measurement for the floors of notebooks 10 and 12 (notebook 12_speed_of_light). None otherwise."""
    try:
        row = rows_at("10_bandwidth", results_dir, "notebook 12", this_run=True).iloc[-1]
    except MissingRows:
        return None
    uuid, theirs = environment()["gpu_uuid"], row.get("gpu_uuid")
    return None if uuid and isinstance(theirs, str) and theirs and theirs != uuid else row.to_dict()


def card_of(rows: pd.DataFrame) -> str | None:
    """The one GPU (its UUID, column gpu_uuid) that measured `rows`, None when they name none or
    several (notebook 12_speed_of_light)."""
    cards = {c for c in rows.get("gpu_uuid", pd.Series(dtype=object)) if isinstance(c, str) and c}
    return cards.pop() if len(cards) == 1 else None


def bandwidth_on_card(results_dir, card: str) -> dict | None:
    """The copy bandwidth notebook 10 recorded in this run (this commit, GPU model and slice) on the
    card `card` (a GPU UUID), its last row in data/10_bandwidth.csv there; None where it recorded
    none on that card (notebook 12_speed_of_light)."""
    try:
        rows = rows_at("10_bandwidth", results_dir, "notebook 12", this_run=True)
    except MissingRows:
        return None
    mine = rows[rows["gpu_uuid"] == card] if "gpu_uuid" in rows else rows.iloc[:0]
    return mine.iloc[-1].to_dict() if len(mine) else None


def _card(uuid: str | None) -> str:
    return f"GPU {uuid[:8]}" if uuid else "a GPU no row names"


def floor_bandwidth(timed: pd.DataFrame, writer: str, results_dir, bandwidth_gbs: float, what: str = "timings",
                    also_printed: str | None = None) -> dict:  # fmt: skip
    """The copy bandwidth to set notebook `writer`'s `timed` rows against (notebook 12_speed_of_light):
    a bandwidth is one card's, so the one notebook 10 recorded in this run on the card that measured
    them (`card_of`, `bandwidth_on_card`): one floor per card, the floor notebook 10 prints for its
    own timings. Where notebook 10 recorded none there, `bandwidth_gbs` (this card's), and `note`
    says that these timings came from another card than the floor's bandwidth, and which numbers
    therefore differ from those notebook `writer` prints for them (`also_printed`, e.g. "task floor
    and × task floor"; None: it prints none). Returns bandwidth_gb_s, card (theirs),
    from ("notebook 10" or "this card") and note (one sentence, always: which bandwidth, measured
    where)."""
    card, here = card_of(timed), environment()["gpu_uuid"] or None
    recorded = bandwidth_on_card(results_dir, card) if card else None
    whose = f"Notebook {writer}'s {what}"
    if recorded is not None:
        bw = float(recorded["bandwidth_gb_s"])
        elsewhere = f" (this notebook runs on {_card(here)})" if here and here != card else ""
        return {"bandwidth_gb_s": bw, "card": card, "from": "notebook 10",
                "note": f"{whose} were measured on {_card(card)}; their floors use the copy bandwidth notebook 10 "
                        f"recorded in this run on that card, {bw:,.0f} GB/s{elsewhere}."}  # fmt: skip
    if card is not None and card == here:
        return {"bandwidth_gb_s": bandwidth_gbs, "card": card, "from": "this card",
                "note": f"{whose} were measured on this card ({_card(card)}); their floors use its copy bandwidth, "
                        f"{bandwidth_gbs:,.0f} GB/s (section 1)."}  # fmt: skip
    differ = (f" so their {also_printed} differ from those notebook {writer} prints for the same {what}"
              if also_printed else " so these floors are not that card's")  # fmt: skip
    return {"bandwidth_gb_s": bandwidth_gbs, "card": card, "from": "this card",
            "note": f"{whose} were measured on {_card(card)}, where notebook 10 recorded no copy bandwidth in this "
                    f"run; their floors use this card's ({_card(here)}), {bandwidth_gbs:,.0f} GB/s: another card "
                    f"than the one that timed them,{differ}."}  # fmt: skip


def products_against_floor(kernels: pd.DataFrame, variant: str, model, bandwidth_gbs: float) -> dict:
    """From notebook 10's kernel table (data/10_kernels.csv) of `variant`, per token: the GPU's busy
    time, the matrix products' own time, the rest, and the weights' floor, at which the products
    would run at copy speed (every weight a step reads, `weight_bytes_per_step`: `weights_mb`, at
    `bandwidth_gb_s`) (notebook 12_speed_of_light)."""
    rows = kernels[kernels["variant"] == variant]
    if rows.empty:
        raise ValueError(f"no kernel rows for {variant!r}; profiled: {', '.join(dict.fromkeys(kernels['variant']))}")
    products = rows[rows["products"].astype(bool)]["own_us_per_token"].sum()
    busy = rows["own_us_per_token"].sum()
    weights = weight_bytes_per_step(model)
    weights_us = weights / bandwidth_gbs / 1e3
    return {
        "variant": variant,
        "busy_us": busy,
        "durations_us": rows["us_per_token"].sum(),
        "products_us": products,
        "other_us": busy - products,
        "weights_floor_us": weights_us,
        "pct_of_copy_bandwidth": 100 * weights_us / products if products else float("nan"),
        "weights_mb": weights / 1e6,
        "bandwidth_gb_s": bandwidth_gbs,
    }


def floors_bytes_text(split: dict, products: pd.DataFrame, rows: int, layers: int) -> str:
    """Which bytes the weights' floor of notebook 12's section 4 (`products_against_floor`: every weight a
    step reads) and the products' floor of its section 5 (`time_products`' weight matrices, `layers` times
    each but the LM head, at `rows` rows and an undivided sum, as `display.product_findings` adds them)
    count, each with the µs it prints and its bandwidth: "" where section 5 timed no such step
    (notebook 12_speed_of_light)."""
    ok = products[(products["status"] == "ok") & (products["rows"] == rows) & (products["splits"] == 1)]
    base = ok.drop_duplicates("product").set_index("product")
    if "LM head" not in base.index:
        return ""
    each = lambda col: layers * base.drop("LM head")[col].sum() + base.at["LM head", col]  # noqa: E731
    mb, floor = each("weight_mb"), each("floor_us")
    rates = [f"{split['bandwidth_gb_s']:,.0f}", f"{mb * 1e3 / floor:,.0f}"]  # GB/s: MB / µs × 1e3
    at = f"both at {rates[0]} GB/s" if rates[0] == rates[1] else f"at {rates[0]} and {rates[1]} GB/s"
    return (f"The two weight floors count different bytes: section 4's **{split['weights_floor_us']:.0f} µs** is "
            f"every weight a decode step reads ({split['weights_mb']:.1f} MB, section 2's weights per step: the "
            f"products' matrices, their biases, the norms' vectors and one row of the position table), this "
            f"section's **{floor:.0f} µs** the products' weight matrices alone ({mb:.1f} MB); {at}.")  # fmt: skip


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


PRODUCT_REPEATS = 48  # products per replay of `product_graph`: the launch and timing cost of a replay is shared by them


def product_graph(rows: int, in_features: int, out_features: int, *, splits: int = 1, repeats: int = PRODUCT_REPEATS,
                  linear=None):  # fmt: skip
    """A CUDA graph's replay of `repeats` fp32 products of `rows` rows through an (out, in) weight,
    warmed up (notebook 12_speed_of_light).

    Timed as in a decode step: the products replayed from one CUDA graph (no launch overhead from
    Python), each reading its own weight from a pool over twice the size of the L2 cache, so the
    weights come from DRAM. `splits` > 1 cuts the sum over `in_features` into that many products
    run as one batched product (`torch.bmm`): more output tiles for the GPU's multiprocessors to
    share; adding up the partial results afterwards is not timed. `linear` (default `F.linear`)
    computes each undivided product, `linear(x, w, bias)`: solution 12 passes a compiled one, timed
    like cuBLAS's.
    """
    require_positive(rows=rows, in_features=in_features, out_features=out_features, splits=splits, repeats=repeats)
    if in_features % splits:
        raise ValueError(f"splits={splits} does not divide in_features={in_features}")
    if linear is not None and splits != 1:
        raise ValueError(f"linear computes an undivided product: splits must be 1, got {splits}")
    linear = F.linear if linear is None else linear
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
                linear(x, w[0], bias)
            else:
                torch.bmm(xs, w.transpose(1, 2))

    graph = capture(products, warmups=1)  # cuBLAS picks its kernels and workspace before the capture
    graph.replay()  # warm-up
    return graph.replay


def product_times(
    rows: int, in_features: int, out_features: int, *, splits: int = 1, repeats: int = PRODUCT_REPEATS, runs: int = 20
) -> list[float]:
    """Microseconds per product of `product_graph`'s replay, one value per run (notebook 12_speed_of_light)."""
    require_positive(runs=runs)
    replay = product_graph(rows, in_features, out_features, splits=splits, repeats=repeats)
    return [1e3 * ms / repeats for ms in gpu_times(replay, runs)]


def time_products(
    model, rows: list[int], splits: list[int], bandwidth_gbs: float, runs: int, record=None, seed: int | None = None,
    kernels_of=None,
) -> pd.DataFrame:
    """Every product of `gpt2_products` at each number of `rows` and `splits` against its floor (its
    weight's bytes at `bandwidth_gbs`): a product's shapes are timed in `runs` interleaved rounds,
    each round in a fresh random order (drawn from `seed`, recorded), one replay of `product_graph`
    each, so that two shapes of a product compare round by round (`times_us`: µs per product in each
    round; rate_gb_s, the weight's bytes over the median time); a shape that runs out of memory is
    recorded as such and the others go on. Given `kernels_of` (a function of a replay, e.g.
    `tokgen.waterfall.replay_kernels`), each shape's replay is profiled once after the timed rounds and
    its `kernels` column says which kernels it ran ("not profiled (why)" where that fails; review
    rv19B S7). Each row also goes to `record` (notebook 12_speed_of_light)."""
    require_positive(runs=runs)
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    rng, repeats = random.Random(seed), PRODUCT_REPEATS
    out = []
    for name, (k, n) in gpt2_products(model).items():
        shapes, replays = [], {}
        for r in rows:
            for s in splits:
                row = {"product": name, "rows": r, "in_features": k, "out_features": n, "splits": s}
                row |= {"weight_mb": k * n * 4 / 1e6, "floor_us": k * n * 4 / bandwidth_gbs / 1e3}
                try:
                    replays[len(shapes)] = product_graph(r, k, n, splits=s, repeats=repeats)
                except torch.OutOfMemoryError as err:
                    row |= {"status": "oom", "error": str(err).splitlines()[0]}
                    torch.cuda.empty_cache()
                shapes.append(row)
        keys = list(replays)
        times = {i: [] for i in keys}
        for order in round_orders(len(keys), runs, rng):
            for j in order:
                times[keys[j]].append(1e3 * gpu_times(replays[keys[j]], 1)[0] / repeats)
        ran = {}
        for i in keys if kernels_of is not None else ():  # after the timed rounds: profiling times nothing
            try:
                ran[i] = kernels_of(replays[i])
            except Exception as err:  # noqa: BLE001 - a shape not profiled says why; its times stand
                first = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
                ran[i] = f"not profiled ({type(err).__name__}: {first})"
        for i, row in enumerate(shapes):
            if i in ran:
                row["kernels"] = ran[i]
            if i in times:
                q25, median, q75 = statistics.quantiles(times[i], n=4, method="inclusive")
                row |= {"status": "ok", "runs": runs, "median_us": median, "q25_us": q25, "q75_us": q75}
                row |= {"pct_of_copy_bandwidth": 100 * row["floor_us"] / median, "order_seed": seed,
                        "rate_gb_s": gb_per_s(k * n * 4, median / 1e3),  # the weight's bytes over the median
                        "times_us": ";".join(f"{t:.4f}" for t in times[i])}  # fmt: skip
            if record is not None:
                record(row)
            out.append(row)
        del replays
    return pd.DataFrame(out)


def _kernel_names(text) -> tuple[str, ...]:
    """The kernel names of a `kernels` cell ("a ×48; b ×48"), without their counts; () for none."""
    if not isinstance(text, str) or not text or text.startswith("not profiled"):
        return ()
    return tuple(part.rsplit(" ×", 1)[0] for part in text.split("; "))


SPLIT_K_MARKS = ("splitk", "segment_k_on")  # in a kernel's name (any case): cuBLAS's split-K reduce, segment-K on


def split_k(names) -> bool:
    """Whether kernels of these names split the sum over K between blocks: a `splitKreduce` kernel, or a
    cuBLAS kernel with segment-K on ("…segment_k_on…"), by name (notebook 12_speed_of_light)."""
    return any(mark in name.lower() for name in names for mark in SPLIT_K_MARKS)


def kernel_change_text(products: pd.DataFrame) -> str:
    """Whether the rows changed cuBLAS's choice of kernels, from `time_products`' `kernels` column (one profiled
    replay per shape; reviews rv19B S7, rr20h S1; notebook 12_speed_of_light): per product and split, "the same
    kernels at 32 and 256 rows" (or "32 rows only") or each row count's kernels, with "split-K: yes/no"
    (`split_k`) per row count; then, where a split shape was profiled, that it is one batched product
    (`torch.bmm`, no bias), so its kernels differ from the undivided shape's by construction. "" where no shape
    was profiled."""
    if "kernels" not in products:
        return ""
    ok = products[products["status"] == "ok"]
    ok = ok[ok["kernels"].map(_kernel_names).map(bool)]  # profiled shapes only
    said = []
    for (name, splits), rows in ok.groupby(["product", "splits"], sort=False):
        cut = "undivided" if splits == 1 else f"split in {splits}"
        names = [_kernel_names(k) for k in rows["kernels"]]
        counts = " and ".join(str(r) for r in rows["rows"])
        if len(set(names)) == 1:
            word = "yes" if split_k(names[0]) else "no"
            at = f"the same kernels at {counts} rows" if len(names) > 1 else f"{counts} rows only"
            said.append(f"`{name}`, {cut}: {at} (split-K: {word})")
            continue
        each = ", ".join(f"{r} rows ran {', '.join(f'`{k}`' for k in n)} (split-K: {'yes' if split_k(n) else 'no'})"
                         for r, n in zip(rows["rows"], names))  # fmt: skip
        said.append(f"`{name}`, {cut}: {each}")
    if not said:
        return ""
    bmm = (" A split shape runs as one batched product (`torch.bmm`, without the bias), so its kernels differ from "
           "the undivided shape's by construction." if (ok["splits"] > 1).any() else "")  # fmt: skip
    return "Kernels each shape ran (one profiled replay each): " + "; ".join(said) + "." + bmm


def product_rounds(products: pd.DataFrame, product: str, rows: int, splits: int) -> list[float]:
    """One shape's per-round µs from `time_products`' table (`times_us`), [] when it has none (a run
    from before the rounds were recorded, or a failed shape; notebook 12_speed_of_light)."""
    row = products[(products["product"] == product) & (products["rows"] == rows) & (products["splits"] == splits)]
    text = row["times_us"].iloc[0] if len(row) and "times_us" in row else ""
    return [float(x) for x in text.split(";")] if isinstance(text, str) and text else []


# --- our fastest generator against transformers' static generate(), by batch size (notebook 14) ---


def fastest_generator(results_dir, this_run: bool = True) -> dict | None:
    """The fastest registry generator of notebook 10's run (data/10_cuda_graphs.csv under
    `results_dir`), first by paired speed-up over that run's naive generator (`tokgen.voice.ranking`;
    a variant tied with it is not told apart by the rounds): its label, generator and K; None when
    no registry generator ran there or naive did not, and `tokgen.results.MissingRows` when notebook
    10 has not run there in this run (`tokgen.results.rows_at`'s `this_run`; notebook 14). `this_run=False`
    reads another run's table on purpose: the quick run sets the reference run's fastest against the floor."""
    ok = rows_at("10_cuda_graphs", results_dir, "notebook 14", this_run=this_run)
    ours = ok[ok["generator"].isin(list(GENERATORS))]
    ranked = ranking(ok, "naive", list(ours["variant"])) if "naive" in set(ok["variant"]) else pd.DataFrame()
    if ranked.empty:
        return None
    best = ours.set_index("variant").loc[ranked.iloc[0]["variant"]].to_dict() | {"variant": ranked.iloc[0]["variant"]}
    k = best.get("steps_per_graph")
    shared = [str(v) for v in ranked.loc[ranked["rank"] == 1, "variant"].iloc[1:]]
    return {"label": best["variant"], "generator": best["generator"], "steps_per_graph": None if k != k else int(k),
            "shares_rank_with": shared}  # fmt: skip


def fastest_words(fastest: dict) -> str:
    """Which generator `fastest_generator` picked, and whether it holds rank 1 alone: "`X`, ranked first" or,
    where others share rank 1 (the rounds do not part them), "`X`, the first listed of the 2 that share
    rank 1 (with `Y`: the rounds do not part them; listed by speed-up over naive, round by round)" (notebook 14)."""
    if not fastest["shares_rank_with"]:
        return f"`{fastest['label']}`, ranked first"
    others = ", ".join(f"`{v}`" for v in fastest["shares_rank_with"])
    return (f"`{fastest['label']}`, the first listed of the {1 + len(fastest['shares_rank_with'])} that share rank 1 "
            f"(with {others}: the rounds do not part them; listed by speed-up over naive, round by round)")


def bandwidth_for(results_dir, device) -> float:
    """The copy bandwidth notebook 10 recorded in this run on this card, else measured now (notebook 14)."""
    recorded = recorded_bandwidth(results_dir)
    return float(recorded["bandwidth_gb_s"]) if recorded is not None else copy_bandwidth(device, 1024)


def sweep_against_floor(model, ours: dict, theirs: str, batch_sizes, max_seqlen: int, runs: int, bandwidth_gbs: float,
                        results_dir, params) -> pd.DataFrame:  # fmt: skip
    """`ours` (from `fastest_generator`) and the reference `theirs`, interleaved at each batch size,
    each against the task's floor at that batch size; rows recorded in data/14_batch_sweep.csv as
    they are measured, with "speed-up" (ours over theirs) on our rows (notebook 14_deferred_stop)."""
    rec = Recorder("14_batch_sweep", results_dir, params=params)
    options = {"steps_per_graph": ours["steps_per_graph"]} if ours["steps_per_graph"] else {}
    rows = []
    for b in batch_sizes:
        variants = [
            generator_variant(ours["generator"], model, batch_size=b, max_seqlen=max_seqlen, by=("batch_size",),
                              **options),  # fmt: skip
            generator_variant(theirs, model, batch_size=b, max_seqlen=max_seqlen, by=("batch_size",)),
        ]
        res = compare(variants, rounds=runs, device=model.device, gpu_busy=False)
        ok = res[res["status"] == "ok"]
        vs = gain(ok, variants[1].name, variants[0].name) if len(ok) == 2 else None
        for r in res.to_dict("records"):
            floor = floor_ms(model, b, int(r["steps"]), bandwidth_gbs) if r["status"] == "ok" else float("nan")
            row = {**r, "floor_ms": floor, "times_floor": r["median_ms"] / floor,
                   "speed-up": speedup_text(vs) if vs and r["variant"] == variants[0].name else ""}  # fmt: skip
            rec.write(row)
            rows.append(row)
    return pd.DataFrame(rows)


def sweep_sentence(sweep: pd.DataFrame) -> str:
    """Notebook 14's sweep in one sentence per generator, read from its rows: the range of its
    distance to the floor over the batch sizes (notebook 14_deferred_stop)."""
    lines = []
    for generator, rows in sweep[sweep["status"] == "ok"].groupby("generator", sort=False):
        lo, hi = rows.loc[rows["times_floor"].idxmin()], rows.loc[rows["times_floor"].idxmax()]
        lines.append(
            f"- `{generator}`: {lo['times_floor']:.2f}× the floor at B = {lo['batch_size']} to "
            f"{hi['times_floor']:.2f}× at B = {hi['batch_size']}."
        )
    return "\n".join(lines)
