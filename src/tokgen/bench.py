"""Timing generators properly: warm-up excluded, synchronize around the timer, interleaved rounds.

Introduced in notebook 01_naive. The article ran each variant 10 times in a row; with host
noise that drifts over minutes, that confounds drift with differences, so `compare` runs the
variants in turn, round after round, in one process, each round in a fresh random order
(`round_orders`; tokgen.stats judges the differences). Given the comparisons it needs,
`compare` runs them sequentially: after each look, only the variants of the comparisons still
undecided go on (notebook 00_setup, section 4).
"""

import dataclasses
import gc
import math
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import torch

from .generators import no_hook
from .gpu_slice import GpuSlice
from .memory import held_gb, memory_peaks, reset_memory
from .model import synchronize
from .profiling import Timeline, boundary_phases, boundary_row, gpu_busy_ms, profile_steps, sync_wait, sync_wait_row
from .registry import LOOPS_ON_DEVICE, get_generator, label
from .results import host_loops_ms, host_probe
from .stats import compare_rounds, looks_up_to, time_summary


@dataclasses.dataclass
class Variant:
    """One thing to time: `run()` generates once; `info` becomes extra columns of its row (notebook 01_naive).
    A generator's variant also takes `run(on_step)`, for a profiler (notebook 06)."""

    name: str
    run: Callable[[], torch.Tensor]
    info: dict = dataclasses.field(default_factory=dict)


def generator_variant(
    generator: str, model, *, batch_size: int, max_seqlen: int, compiled=False, by=(), **options
) -> Variant:
    """A Variant running `generator` (see tokgen.GENERATORS) on `model`, named by `tokgen.label`:
    `compiled=True` for a torch.compile'd model; `by` lists what else tells variants apart in the
    name ("max_seqlen", "batch_size"); a graph generator's `steps_per_graph` is always in it
    (notebook 01_naive)."""
    fn = get_generator(generator)
    sizes = {"max_seqlen": max_seqlen, "batch_size": batch_size}
    if not set(by) <= set(sizes):
        raise ValueError(f"by: choose from {', '.join(sizes)}, got {by!r}")
    name = label(generator, compiled=compiled, k=options.get("steps_per_graph"), **{key: sizes[key] for key in by})
    info = {"generator": generator, "compiled": compiled, "batch_size": batch_size, "max_seqlen": max_seqlen}
    run = lambda on_step=no_hook: fn(model, batch_size=batch_size, max_seqlen=max_seqlen, on_step=on_step, **options)
    return Variant(name, run, info | options)


def round_orders(n: int, rounds: int, rng: random.Random) -> list[list[int]]:
    """The order in which `n` variants run in each of `rounds` rounds: a fresh random permutation
    per round (notebook 01_naive). Why random: then which of two variants ran first in a round is
    a coin toss that no rhythm of the host can follow, so for two identical variants each round's
    log-ratio is as likely negative as positive, independently of the other rounds: exactly what
    the signed-rank test of tokgen.stats assumes. A fixed rotation (ab, ba, ab, …) is not enough:
    a host rhythm of two rounds lines up with it and makes one of two identical variants look
    faster in every round (tests/test_bench.py shows it)."""
    return [rng.sample(range(n), n) for _ in range(rounds)]


def drawn_orders(n: int, rounds: int, seed: int | None = None) -> tuple[int, list[list[int]]]:
    """`round_orders` drawn from `seed`, a fresh one from the system's entropy when None (as
    `compare` draws its own), returned with the orders: recorded beside the rows, it regenerates
    them (notebook 06_eos_sync_profile: the order of its profiled windows)."""
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    return seed, round_orders(n, rounds, random.Random(seed))


def time_run(run: Callable[[], torch.Tensor], device: torch.device) -> tuple[float, torch.Tensor]:
    """Milliseconds of one call, the device synchronized before and after (notebook 01_naive)."""
    synchronize(device)
    start = time.perf_counter()
    out = run()
    synchronize(device)
    return 1e3 * (time.perf_counter() - start), out


def _triton_errors() -> tuple:
    """Triton's own errors' base class (`triton.errors.TritonError`: our Triton kernels' `OutOfResources`,
    `CompilationError`), as a 1-tuple; () where Triton (or that module) is absent (review rr22c N1; notebook 10)."""
    try:
        from triton.errors import TritonError
    except ImportError:  # a CPU build of torch ships no Triton
        return ()
    return (TritonError,)


# what a variant's first call may raise where the rest of a notebook can go on without it (notebook 10_cuda_graphs):
# out of memory on a small card, cuda-python missing, a CUDA graph WHILE node this driver or GPU cannot run
# (RuntimeError also covers torch.compile's compiler errors, `BackendCompilerFailed`), and our own Triton kernels'
# errors (`TritonError`, not a RuntimeError: review rr22c N1); the variant's row records it as "error" (rr22b S4)
FIRST_CALL_ERRORS = (torch.cuda.OutOfMemoryError, ImportError, RuntimeError, *_triton_errors())
# errors after which the CUDA context is unusable: nothing later in the process can run, so they are never caught
CUDA_STICKY = ("illegal memory access", "device-side assert", "unspecified launch failure")
FIRST_CALL_COLUMNS = ("build_ms", "same_tokens", "resident_gb", "resident_reserved_gb")  # first_calls' row of each


def dropped_text(name: str, err: BaseException) -> str:
    """One line: the variant `name` dropped from the comparisons, and the error its first call raised (its message's
    first line, at most 300 characters) (notebook 10_cuda_graphs)."""
    message = (str(err).strip().splitlines() or [""])[0][:300]
    said = f"{type(err).__name__}: {message}" if message else type(err).__name__
    return f"`{name}` is left out of the comparisons: its first call raised {said}"


def failed_row(v: Variant, err: BaseException) -> dict:
    """The row `compare` records for a variant whose call raised `err`: status "oom" or "error", `error` the
    error's type and message (at most 500 characters), no timed runs (notebook 10_cuda_graphs)."""
    state = dict(times=[], positions=[], status=_status(err), error=_error_text(err), steps=None, memory={},
                 slice_escapes=0)  # fmt: skip
    return {"variant": v.name, **v.info, **_summary(state)}


def first_calls(
    variants: list[Variant], device, reference: torch.Tensor | None = None, report=print, catch=FIRST_CALL_ERRORS
) -> tuple[list[Variant], dict, list[dict]]:
    """Each variant's first call, which builds what the variant keeps (a compiled step, a captured graph, a cache):
    its time (`time_run`) as `build_ms`, and whether it returned `reference` as `same_tokens` (None without one);
    on CUDA, what it kept: `resident_gb`, what was allocated after it (its tokens let go) less what was before
    (`tokgen.memory.held_gb`: torch.cuda.memory_allocated after a synchronize), and `resident_reserved_gb`, the same
    of the memory reserved once cached blocks are released (its CUDA graphs' private pools included); None
    elsewhere. What two variants share (compiled code, a step) is counted for the first that built it. A variant
    whose first call raises one of `catch` is dropped, with one line (`dropped_text`) to `report`, and the
    allocator's cached blocks are let go (`reset_memory`); the others go on. An error whose message says the CUDA
    context is unusable (`CUDA_STICKY`: an illegal memory access, a device-side assert, an unspecified launch
    failure) is raised whatever `catch` says: nothing after it could run (review rr22b S4). `held_gb` releases the
    allocator's cached blocks just before each timed call, so `build_ms` includes allocating its memory afresh, as
    every call of `compare` does (`reset_memory`). Returns the variants kept, in their order; each one's row,
    {name: {column: value}} over FIRST_CALL_COLUMNS; and each dropped variant's row as `compare` records a
    failed one (`failed_row`: status "oom" or "error", and its error), in their order, to be recorded with the
    comparison's rows so that readers see the variant failed (review rr22b S4) (notebook 10_cuda_graphs)."""
    device = torch.device(device)
    kept, rows, failed = [], {}, []
    for v in variants:
        said, before = None, held_gb(device)
        try:
            ms, out = time_run(v.run, device)
        except catch as err:
            if cuda_sticky(err):  # the context is unusable: going on would fail later, far from the cause
                raise
            said, row = dropped_text(v.name, err), failed_row(v, err)
        if said is not None:  # out of the except block: the error's frames, and what they held, are let go
            report(said)
            failed.append(row)
            reset_memory(device)
            continue
        same = None if reference is None else bool(torch.equal(out, reference))
        del out
        after = held_gb(device)
        held = [None, None] if before is None else [a - b for a, b in zip(after, before)]
        rows[v.name] = dict(zip(FIRST_CALL_COLUMNS, [ms, same, *held]))
        kept.append(v)
    return kept, rows, failed


def reconfine() -> bool:
    """Inside a GPU slice, make it current again if something left it; True if it had to (notebook 13)."""
    return GpuSlice.active.confine() if GpuSlice.active else False


def _is_oom(err: BaseException) -> bool:
    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


def _status(err: BaseException) -> str:
    return "oom" if _is_oom(err) else "error"


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"[:500]


def cuda_sticky(err: BaseException) -> bool:
    """Whether `err` says the CUDA context is unusable after it (`CUDA_STICKY`, in its message; notebook 10)."""
    return any(m in str(err).lower() for m in CUDA_STICKY)


def _pairs(pairs, names: list[str]) -> list[tuple[str, str, tuple]]:
    """`pairs` as (base, variant, thresholds), each name one of `names`; ValueError naming the bad one."""
    out = []
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) not in (2, 3):
            raise ValueError(f"pairs: each is (base, variant) or (base, variant, thresholds), got {pair!r}")
        base, variant, *rest = pair
        for name in (base, variant):
            if name not in names:
                raise ValueError(f"pairs: no variant {name!r} among {names}")
        if base == variant:
            raise ValueError(f"pairs: {base!r} against itself")
        out.append((base, variant, tuple(float(t) for t in (rest[0] if rest else ()))))
    return out


_reset_allocator = reset_memory  # `compare`'s `reset_memory` switch shadows the function's name inside it


def compare(
    variants: list[Variant],
    *,
    rounds: int = 10,
    device: str | torch.device = "cuda",
    record: Callable[[dict], None] | None = None,
    warmup: int = 1,
    gpu_busy: bool = True,
    seed: int | None = None,
    pairs: list[tuple] | None = None,
    max_rounds: int | None = None,
    until: Callable[[pd.DataFrame], bool] | None = None,
    reset_memory: bool = True,
) -> pd.DataFrame:
    """Time every variant `rounds` times, interleaved: each round runs every variant once, in a
    fresh random order (`round_orders`, drawn from `seed`: a new one when None; each row records
    its `order_seed` and its `positions`, 0 = first, round by round). `warmup` untimed calls first
    (compilation, graph capture, lazy allocation); the first one is reported as `first_call_ms`.
    Introduced in notebook 01_naive.

    With `pairs`, the comparisons the caller needs ((base, variant) names, or (base, variant,
    thresholds) where the side of each speed-up in `thresholds` must be decided too), the rounds
    run in looks (`tokgen.stats.looks_up_to(max_rounds, rounds)`: `rounds`, twice that, … up to
    the cap `max_rounds`; notebook 00_setup): after each look, every comparison still undecided
    is judged (`tokgen.stats.compare_rounds` at the look's level), and only the variants of those
    still undecided run on, each round in a fresh random order among themselves, until all are
    decided or the cap is reached. A variant of no pair runs the first look only. Each row
    records the `looks` (the design `tokgen.gain` judges it by) and its `runs`; a variant's
    rounds are the first of every round, so any two variants pair round by round over the
    shorter one's.

    With `until` instead of `pairs` (notebook 01_naive: `tokgen.claims.RunOn`), the looks are the
    same, but every variant runs on together while `until`, given the rows so far (as returned,
    before the profiled run), returns False; the last look is not asked. No `looks` are recorded:
    the claim reads the looks from the rows' parameters (`tokgen.claims.run_on_looks`).

    A variant that runs out of memory or raises is recorded with status "oom"/"error" and
    dropped; the others go on. One row per variant goes to `record` when all rounds are done.
    On CUDA, with `gpu_busy`, one more (profiled) run of each gives `gpu_busy_ms`, the time the
    GPU was busy, and `gpu_busy_share` = gpu_busy_ms / median_ms: near 1 GPU-bound, near 0
    host-bound. Every row records the host probe taken just before and just after the timed rounds
    (`tokgen.results.HOST_PROBE_COLUMNS`, a few tens of ms each): how fast the host ran Python then; whether the
    rounds' times followed it is not measured.

    Before every call (warm-up and timed), `tokgen.memory.reset_memory` empties the allocator's cache (gc.collect,
    torch.cuda.empty_cache) and resets its peaks, as the article did for whole generations: each run then reserves
    its memory again, inside its time. `reset_memory=False` skips that (solution 02 times one decode step, where
    the refill would be part of what is timed: review rv22A S2); the memory columns then hold the peaks since the
    last reset. A failed call empties the cache either way.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds <= 0:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise ValueError(f"variant names must be unique, got {names}")
    if pairs is not None and until is not None:
        raise ValueError("pairs or until decides when the rounds stop, not both")
    if pairs is None and until is None and max_rounds is not None:
        raise ValueError("max_rounds caps a sequential comparison: name the comparisons it needs in pairs, or until")
    if pairs is not None or until is not None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds <= 0:
            raise ValueError(f"max_rounds must be a positive integer with pairs or until, got {max_rounds!r}")
        pending, looks = _pairs(pairs or [], names), looks_up_to(max_rounds, rounds)
    else:
        pending, looks = [], (rounds,)
    seed = random.SystemRandom().randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    device = torch.device(device)
    state = {
        v.name: dict(times=[], positions=[], status="ok", error="", steps=None, memory={}, slice_escapes=0)
        for v in variants
    }

    def attempt(v: Variant) -> float | None:
        s = state[v.name]
        out = None
        try:
            if reset_memory:
                _reset_allocator(device)
            reconfine()  # compiling switches back to the whole GPU's context: re-enter the slice
            ms, out = time_run(v.run, device)
            s["slice_escapes"] += reconfine()  # this run left the slice (counted, notebook 13)
            s["memory"] = memory_peaks(device)
            steps = out.shape[1] - 1
            if s["steps"] is None:
                s["steps"] = steps
            elif steps != s["steps"]:
                raise RuntimeError(f"{v.name} generated {steps} steps, earlier {s['steps']}")
            return ms
        except Exception as err:  # noqa: BLE001 - one failing variant must not end the comparison
            s["status"], s["error"] = _status(err), _error_text(err)
            del out
            _reset_allocator(device)
            return None

    host = {}  # the host probe around the timed rounds (`tokgen.results.host_probe`), once they are done

    def row(v: Variant) -> dict:
        out = {"variant": v.name, **v.info, **_summary(state[v.name]), "order_seed": seed, **host}
        return out | ({"looks": ";".join(map(str, looks))} if pairs is not None else {})

    for v in variants:
        for w in range(warmup):
            if state[v.name]["status"] != "ok":
                break
            ms = attempt(v)
            if w == 0:
                state[v.name]["first_call_ms"] = ms
        state[v.name]["slice_escapes"] = 0  # the warm-up compiles; only the timed runs count
    # What lives after the warm-up (model, compiled code, decoders: hundreds of thousands of
    # objects) stays alive; frozen, the collection before every timed run skips it (0.1-0.2 s
    # each otherwise, minutes over a sweep).
    gc.collect()
    gc.freeze()
    needed = set(names)  # the first look runs every variant
    done_rounds = 0
    probe_before = host_loops_ms()  # ≈ 5 loops of a few ms: how fast the host runs Python now
    try:
        for look in looks:
            while done_rounds < look:
                active = [i for i, v in enumerate(variants) if v.name in needed and state[v.name]["status"] == "ok"]
                if not active:
                    break
                for position, i in enumerate(rng.sample(active, len(active))):  # = round_orders with all active
                    v = variants[i]
                    ms = attempt(v)
                    if ms is not None:
                        state[v.name]["times"].append(ms)
                        state[v.name]["positions"].append(position)
                done_rounds += 1
            if until is not None:
                if look == looks[-1] or until(pd.DataFrame([row(v) for v in variants])):
                    break
                continue  # every variant runs on
            pending = [
                (b, v, t) for b, v, t in pending
                if state[b]["status"] == state[v]["status"] == "ok"
                and not compare_rounds(state[b]["times"], state[v]["times"], looks, t)["decided"]
            ]  # fmt: skip
            needed = {name for b, v, _ in pending for name in (b, v)}
    finally:
        gc.unfreeze()
    host.update(host_probe(probe_before, host_loops_ms()))
    if gpu_busy and device.type == "cuda":  # one profiled run each, after the timed rounds
        for v in variants:
            s = state[v.name]
            # CUPTI records the kernels of a WHILE node's body once, not once per iteration
            if s["status"] == "ok" and v.info.get("generator") not in LOOPS_ON_DEVICE:
                try:
                    reconfine()
                    s["gpu_busy_ms"] = gpu_busy_ms(v.run)
                    if math.isnan(s["gpu_busy_ms"]):  # a session that recorded nothing (pytorch/kineto#1554)
                        s["error"] = "gpu_busy_ms: the profiler recorded no GPU activity"
                except Exception as err:  # noqa: BLE001 - a profiler failure costs the column, not the run
                    s["error"] = f"gpu_busy_ms: {type(err).__name__}: {err}"[:500]

    rows = []
    for v in variants:
        rows.append(row(v))
        if record is not None:
            record(rows[-1])
    return pd.DataFrame(rows)


def _summary(s: dict) -> dict:
    t = s["times"]
    steps = s["steps"]
    summary = time_summary(t)
    median = summary["median_ms"]
    return {
        "status": s["status"],
        "error": s["error"],
        "runs": len(t),
        "steps": steps,
        **summary,
        "ms_per_step": median / steps if t and steps else float("nan"),
        "first_call_ms": s.get("first_call_ms"),
        "gpu_busy_ms": s.get("gpu_busy_ms", float("nan")),
        "gpu_busy_share": s.get("gpu_busy_ms", float("nan")) / median if t else float("nan"),
        "times_ms": ";".join(f"{x:.6f}" for x in t),  # ns: the quartiles recompute from the CSV (rv21B N1)
        "positions": ";".join(map(str, s["positions"])),  # where in its round each timed run came
        "slice_escapes": s["slice_escapes"],  # timed runs that found the slice left (notebook 13)
        **s["memory"],
    }


def plain_runs(v: Variant, device, runs: int = 3) -> list[float]:
    """Notebook 06_eos_sync_profile's plain runs of one variant: `runs` calls timed without a profiler
    (`time_run`), each as µs per step (no warm-up: `profile_window` warms the variant up first)."""
    device = torch.device(device)
    timed = [time_run(v.run, device) for _ in range(runs)]  # (ms, tokens) each
    return [1e3 * ms / (tokens.shape[1] - 1) for ms, tokens in timed]


def profile_window(
    v: Variant, device, *, start: int, stop: int, runs: int = 3, model=None, trace_path=None, stats_trace_path=None
) -> tuple[dict, Timeline, Timeline]:
    """Notebook 06_eos_sync_profile's profiled window of one variant, bracketed by plain runs: a
    warm-up call; `runs` plain runs (`plain_runs`); steps [start, stop) profiled with GPU activity
    only, for the statistics; again with the CPU ranges of `Ranges(model)`, for pictures and the
    Perfetto trace at `trace_path` (recording every operator on the CPU slows the host, so those
    gaps are not measured); `runs` plain runs again. The statistics pass's trace (GPU activity and the
    host's CUDA calls) goes to `stats_trace_path` when given. The yardstick is the bracket's 2·`runs` plain
    runs, timed next to the profiled passes on the same host moment: their median step
    (`unprofiled_step_us`), fastest and slowest (`unprofiled_min_us`, `unprofiled_max_us`: the
    bracket's spread) and how many (`unprofiled_runs`); `profiled_vs_plain_pct` is the statistics
    pass's step against their median, in % (profiled / bracketing plain runs − 1). Each half apart,
    to set the runs after the profiled passes against those before (`gaps.plain_after_profile`):
    the median step before and after (`unprofiled_before_us`, `unprofiled_after_us`) and the before
    runs' spread, slowest less fastest (`unprofiled_before_spread_us`). What the statistics pass's
    sync waited for (`profiling.sync_wait_row`: `sync_us`, ..., NaN without a sync) and the pictures
    pass's idle gap and the time after the model's forward that no gap counts (`profiling.boundary_row`:
    `picture_gap_us`, `picture_check_us`) go in the row too, so that the sentences on them are read
    from data/. Returns its row (the variant's info, the window's summary and those) and the two
    timelines."""
    v.run()  # warm-up: whatever ran last was another variant
    before = plain_runs(v, device, runs)
    stats = profile_steps(v.run, start=start, stop=stop, trace_path=stats_trace_path)
    picture = profile_steps(v.run, start=start, stop=stop, cpu=True, model=model, trace_path=trace_path)
    after = plain_runs(v, device, runs)
    plain = before + after
    s = stats.summary()
    median = statistics.median(plain)
    versus = 100 * (s["step_period_us"] / median - 1) if "step_period_us" in s else float("nan")
    return ({**v.info, "variant": v.name, **s, "unprofiled_step_us": median, "unprofiled_runs": len(plain),
             "unprofiled_min_us": min(plain), "unprofiled_max_us": max(plain), "profiled_vs_plain_pct": versus,
             "unprofiled_before_us": statistics.median(before), "unprofiled_after_us": statistics.median(after),
             "unprofiled_before_spread_us": max(before) - min(before), **sync_wait_row(sync_wait(stats)),
             **boundary_row(boundary_phases(picture))},
            stats, picture)  # fmt: skip


def stats_trace_of(trace_path):
    """Where notebook 06_eos_sync_profile saves a statistics pass's trace: beside its pictures pass's
    `<name>.json.gz`, as `<name>_stats.json.gz`; None for None."""
    if trace_path is None:
        return None
    path = Path(trace_path)
    name = path.name.removesuffix(".json.gz").removesuffix(".json")
    return path.with_name(f"{name}_stats.json.gz")


def profile_windows(
    variants: list[Variant],
    device,
    orders: list[list[int]],
    *,
    start: int,
    stop: int,
    models: dict | None = None,
    traces: dict | None = None,
    runs: int = 3,
    record: Callable[[dict], None] | None = None,
    recheck: Callable[[list[dict]], bool] | None = None,
) -> tuple[list[dict], dict]:
    """Notebook 06_eos_sync_profile's windows: one per order of `orders` (`drawn_orders`), each
    running every variant once in its order, each variant's profiled passes bracketed by its own
    plain runs (`profile_window`). tokgen asks PyTorch to tear CUPTI down after each profile
    (TEARDOWN_CUPTI=1, set where tokgen is imported), so that the plain runs after a profiled pass
    run without a profiler set up (not measured: `gaps.plain_after_profile` says why). `models` maps
    a variant's name to the model whose CPU ranges its pictures' pass records, `traces` to the
    Perfetto trace its first window writes (`<name>.json.gz`, from the pictures pass, with the
    CPU ranges; its statistics pass beside it, `<name>_stats.json.gz`: GPU activity and CUDA
    calls). Where `recheck` (`gaps.drift_recheck`) is True for a window's rows, that window is
    profiled once more, in the same order (review rv21A N4): every row records its `attempt`, 0 the
    first, 1 the repeat (never more than one); both are kept (`gaps.last_attempts` reads the
    repeat), and the first window's timelines and traces are those of its last attempt, the one every
    analysis judges: a repeat of window 0 replaces them and writes its traces over the first attempt's
    (review rv23A S1). Each row (with its `window` and `attempt`) goes to `record` as soon as it is
    measured. Returns the rows, in the order they ran, and per variant the first window's two timelines
    (statistics, pictures) of its last attempt."""
    models, traces = models or {}, traces or {}
    rows, first = [], {}
    for window, order in enumerate(orders):
        for attempt in (0, 1):
            mine = []
            for i in order:
                v = variants[i]
                trace = traces.get(v.name) if window == 0 else None  # a repeat's overwrite (rv23A S1)
                row, stats, picture = profile_window(v, device, start=start, stop=stop, runs=runs,
                                                     model=models.get(v.name), trace_path=trace,
                                                     stats_trace_path=stats_trace_of(trace))  # fmt: skip
                row["window"], row["attempt"] = window, attempt
                rows.append(row)
                mine.append(row)
                if record is not None:
                    record(row)
                if window == 0:  # the judged attempt's: a repeat replaces the first (review rv23A S1)
                    first[v.name] = (stats, picture)
            if attempt == 1 or recheck is None or not recheck(mine):  # one repeat at most
                break
    return rows, first
