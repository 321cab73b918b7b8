"""The gap waterfall: from the bandwidth floor to the measured time of one generation, term by term.

Introduced in notebook 12_speed_of_light. Every term is measured on one GPU, or derived from what
was measured there (`DERIVED`), in one process but the floor's bandwidth and TF32 rate, which are
notebook 12's (`gpu_inputs`): the floor (bytes at the
copy bandwidth), the arithmetic at the measured TF32 rate, each kernel's
exclusive time (from the end of the kernels before it in its replay to its own end, so that a
kernel launched early under programmatic dependent launch does not count its wait) against what
its bytes take at the copy bandwidth (for a long copy, and for a copy of its own size: a copy kernel's
curve, scaled so that its long copy takes the floor's time), the idle
gaps between kernels, the stop flag's copy and the graph launch between replays, the GPU work
around the replays, and the host's time outside the GPU's span. The terms telescope: each
stage's total is the next one's start, so they add up to the time of the profiled generation
exactly, and the difference from the unprofiled measured time is its own bar (`remainder`),
never hidden. A term that cannot be measured (on a CPU, or when a measurement fails) is a "not
measured" row with the reason, and the remainder then holds it.
"""

import json
import math
import os
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

try:  # ships with CUDA builds of torch; without it the copy curve is not measured
    import triton
    import triton.language as tl
except ImportError:
    triton = None

from .bandwidth import copy_bandwidth, generation_bytes, generation_flops, matmul_tflops
from .model import require_cuda, synchronize
from .profiling import own_times, settle_profiler, short_kernel_name
from .registry import generate, get_generator
from .voice import percent_text, signed

# the terms, in the order they stack from the floor to the measured time
FLOOR = "floor: the generation's bytes at copy bandwidth"
COMPUTE = "arithmetic beyond the floor (TF32)"
EXTRA_BYTES = "kernels' bytes beyond the floor"
SMALL = "copies of each kernel's size: slower than a long copy"
KERNELS = "kernels slower than copies of their size, from the previous one's end"
GAPS = "idle gaps between kernels: no kernel running inside a replay"
STOP_GPU = "the stop flag's copy (D2H) after each replay"
LAUNCH = "graph launch or host: the gap before each replay's first kernel (not told apart)"
AROUND = "GPU span before the first replay and after the last (idle included)"
HOST = "host outside the GPU's span: first launch, final sync"
REMAINDER = "remainder: the measured time minus the terms above"
TOTAL = "measured time per generation"
TERMS = (FLOOR, COMPUTE, EXTRA_BYTES, SMALL, KERNELS, GAPS, STOP_GPU, LAUNCH, AROUND, HOST)
NOT_MEASURED = "not measured"
# how a term that has a value was obtained (`waterfall_table`'s basis column): measured here, or derived
# from measurements (bytes or operations at a measured rate, a measured copy curve interpolated)
DERIVED = {
    FLOOR: "derived (bytes at the measured copy bandwidth)",
    COMPUTE: "derived (operations at the measured TF32 rate)",
    EXTRA_BYTES: "derived (bytes at the measured copy bandwidth)",
    SMALL: "derived (measured copy curve, scaled to the floor's copy at its kernel's long copy, interpolated at each "
           "kernel's bytes; the factor applies at every size, so at a size where the curve's kernel moves bytes "
           "faster than in its long copy a kernel's term can be below zero)",
    KERNELS: "measured own times minus the derived terms above",
}
UNSCALED = "derived (measured copy curve, not scaled: its long copy was not timed; interpolated at each kernel's bytes)"
MEASURED, DERIVED_STATUS = "measured", "derived"  # the status of a term with a value: its basis's first word
VALUED = (MEASURED, DERIVED_STATUS)
STEP_KERNELS = ("_embed_kernel", "_norm_linear_kernel", "_attend_filled_kernel", "_linear_residual_kernel",
                "_finish_step_kernel")  # fmt: skip
_GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def attempt(measure, *args, **kwargs):
    """(measure(*args, **kwargs), None), or (None, the error in one line) when it raises: one term's
    failure becomes a "not measured" row, not a failed notebook (notebook 12_speed_of_light)."""
    try:
        return measure(*args, **kwargs), None
    except Exception as err:  # noqa: BLE001 - any failure of a measurement is reported, not raised
        lines = str(err).strip().splitlines()
        return None, f"{type(err).__name__}: {lines[0] if lines else ''}"[:300]


def fused_step_calls(model, batch_size: int, pos: int) -> list[tuple[str, str, int]]:
    """The kernels of one step of `tokgen.handwritten.FusedStep` in launch order, as (kernel name,
    what it computes, bytes of weights and KV cache it reads or writes) at position `pos`
    (notebook 12_speed_of_light): the products read their (norm-folded) weights and bias vectors,
    attention reads `pos` filled slots of keys and values and writes slot `pos`, the embedding
    reads B rows of the token table and one of the positions'. Activations are not counted:
    the floor does not count them either."""
    cfg, f = model.config, model.dtype.itemsize
    B, C, V = batch_size, cfg.n_embd, cfg.vocab_size
    calls = [("_embed_kernel", "embedding", (B * C + C) * f)]
    for _ in range(cfg.n_layer):
        calls += [
            ("_norm_linear_kernel", "attention qkv", (3 * C * C + 2 * 3 * C) * f),
            ("_attend_filled_kernel", "attention", 2 * B * (pos + 1) * C * f),
            ("_linear_residual_kernel", "attention out", (C * C + C) * f),
            ("_norm_linear_kernel", "mlp up", (4 * C * C + 2 * 4 * C) * f),
            ("_linear_residual_kernel", "mlp down", (4 * C * C + C) * f),
        ]
    return calls + [("_norm_linear_kernel", "LM head", (V * C + 2 * V) * f), ("_finish_step_kernel", "next token", 0)]


def copy_sizes(model, batch_size: int, max_seqlen: int) -> list[int]:
    """Bytes of the copies `copy_time_curve` times (notebook 12_speed_of_light): every size a fused
    step's weight-reading kernel moves, and a doubling grid over attention's sizes."""
    first, last = fused_step_calls(model, batch_size, 0), fused_step_calls(model, batch_size, max_seqlen - 1)
    sizes = {b for _, what, b in first if b and what != "attention"}
    lo, hi = min(b for _, what, b in first if what == "attention"), max(b for _, what, b in last if what == "attention")
    sizes |= {int(lo * 2**i) for i in range(int(np.ceil(np.log2(hi / lo))) + 1)}
    return sorted(sizes)


def _gpu_events_of(prof) -> pd.DataFrame:
    """The GPU activity a torch.profiler recorded (kernels, copies, memsets) as name, kind, start,
    end in µs from the first; read from its Chrome trace, as `tokgen.profiling.profile_steps` does."""
    raw = Path(os.environ.get("TMPDIR", "/tmp")) / f"tokgen_waterfall_{os.getpid()}.json"
    prof.export_chrome_trace(str(raw))
    try:
        trace = json.loads(raw.read_text())
    finally:
        raw.unlink(missing_ok=True)
    rows = [
        {"name": e["name"], "kind": _GPU_CATEGORIES[e["cat"]], "start": float(e["ts"]),
         "end": float(e["ts"]) + float(e.get("dur", 0.0))}  # fmt: skip
        for e in trace.get("traceEvents", [])
        if e.get("ph") == "X" and e.get("cat") in _GPU_CATEGORIES
    ]
    events = pd.DataFrame(rows, columns=["name", "kind", "start", "end"]).sort_values("start", kind="stable")
    if len(events):
        t0 = events["start"].min()
        events[["start", "end"]] -= t0
    return events.reset_index(drop=True)


def _profiled(run) -> tuple[pd.DataFrame, float]:
    require_cuda("a CUPTI timeline")
    synchronize()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Warning: Profiler clears events", category=UserWarning)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            synchronize()
            t0 = time.perf_counter()
            run()
            synchronize()
            wall_ms = 1e3 * (time.perf_counter() - t0)
    settle_profiler("cuda")  # profile_generation opens two sessions back to back (pytorch/kineto#1554)
    return _gpu_events_of(prof), wall_ms


def profile_generation(run) -> tuple[pd.DataFrame, float]:
    """One call of `run()` under torch.profiler (CUPTI, GPU activity only): its GPU events (name,
    kind, start, end in µs) and its wall time in ms, synchronized before and after;
    a first profiled call, which pays the profiler's start-up, is dropped (notebook 12_speed_of_light)."""
    _profiled(run)  # the profiler's own start-up (CUPTI) is not the generation's
    events, wall_ms = _profiled(run)
    if events.empty:
        raise RuntimeError("the profiler recorded no GPU activity")
    return events, wall_ms


def replay_kernels(replay) -> str:
    """The kernels one call of `replay()` runs on the GPU (`profile_generation`, its first call dropped), by
    `short_kernel_name` in the order each first ran, each with its launches: "name ×48; other ×48": for
    `tokgen.bandwidth.time_products`' `kernels` column, which kernels cuBLAS chose per shape (review rv19B S7;
    notebook 12_speed_of_light)."""
    events, _ = profile_generation(replay)
    names = list(events.loc[events["kind"] == "kernel", "name"].map(short_kernel_name))
    if not names:
        raise RuntimeError("the profiler recorded no kernel")
    return "; ".join(f"{name} ×{names.count(name)}" for name in dict.fromkeys(names))


if triton is not None:

    @triton.jit
    def _copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        # one block of BLOCK floats per program: the simplest kernel that only moves bytes
        at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + at, tl.load(src + at, mask=at < n), mask=at < n)


COPY_BLOCKS = ((1024, 4), (2048, 4), (4096, 8), (8192, 8))  # (floats per program, warps): the copies tried per size


def copy_kernel(src: torch.Tensor, dst: torch.Tensor, block: int, warps: int) -> None:
    """dst[:] = src[:] (float32, contiguous, same size) by `_copy_kernel`, one program per `block`
    floats with `warps` warps (notebook 12_speed_of_light): an SM kernel that moves bytes and does
    nothing else, launched like the step's kernels (a grid of blocks, not the driver's memcpy)."""
    if triton is None:
        raise RuntimeError("copy_kernel needs Triton (a CUDA build of torch ships it)")
    if src.dtype != torch.float32 or dst.dtype != torch.float32 or src.numel() != dst.numel():
        raise ValueError(f"copy_kernel copies float32 tensors of one size, got {src.dtype} {src.numel()} "
                         f"-> {dst.dtype} {dst.numel()}")  # fmt: skip
    _copy_kernel[(triton.cdiv(src.numel(), block),)](src, dst, src.numel(), BLOCK=block, num_warps=warps)


LONG_COPY_BYTES = 2 * 2**30  # a 1 GiB copy, read + written: the floor's (`copy_bandwidth` of 1024 MB) counts it so


def _copy_us(size: int, runs: int, device, blocks, l2: int) -> tuple[int, float]:
    """(bytes, µs) of `copy_kernel` moving `size` bytes: the fastest of `blocks`' medians of `runs` copies."""
    n = max(1, size // 8)  # float32 elements read (and as many written)
    stride = -(-n // 128) * 128  # each copy starts 512-byte aligned
    count = -(-l2 // stride)  # slices: as before; a copy of more than the L2 in floats (the long one) needs one
    src, dst = torch.rand(count * stride, device=device), torch.empty(count * stride, device=device)
    for block, warps in blocks:  # warm-up: compile each configuration
        copy_kernel(src[:n], dst[:n], block, warps)

    def copies():
        for i in range(runs):
            for c, (block, warps) in enumerate(blocks):  # each copy its own slice: none finds it in L2
                j = ((i * len(blocks) + c) % count) * stride
                copy_kernel(src[j : j + n], dst[j : j + n], block, warps)

    events, _ = _profiled(copies)
    durations = list(events["end"] - events["start"])
    if len(durations) != runs * len(blocks):
        raise RuntimeError(f"{runs} copies of {size} bytes by {len(blocks)} kernels: {len(durations)} GPU events")
    return 8 * n, min(statistics.median(durations[c :: len(blocks)]) for c in range(len(blocks)))


def copy_time_curve(sizes: list[int], runs: int, device="cuda", blocks=COPY_BLOCKS,
                    long_bytes: int = LONG_COPY_BYTES) -> pd.DataFrame:  # fmt: skip
    """The GPU time of an SM copy kernel (`copy_kernel`) moving each of `sizes` bytes (read +
    written, as `copy_bandwidth` counts them): for each of `blocks` ((floats per program, warps)),
    the median of `runs` copies' CUPTI kernel durations, the configurations interleaved copy by
    copy; the fastest configuration's median is the size's time (notebook 12_speed_of_light). Each
    copy reads and writes memory the previous ones did not touch in the last twice the L2 cache's
    size, at 512-byte aligned addresses (as the allocator places tensors), so it comes from DRAM.
    A kernel that only moves its bytes, not the driver's device-to-device memcpy: on an H100 a
    memcpy of a size that is not a multiple of 4 KiB takes 2.5-3 µs more, wherever it starts
    (issue 47), a kernel's copy does not. The same kernel's long copy of `long_bytes` (a 1 GiB copy,
    as the floor's) is timed the same way, so that `scaled_curve` can set the curve on the floor's
    copy (review rv19B S5). Columns: bytes, copy_us, copy_gb_s, long_copy_bytes, long_copy_us (the
    same on every row), long_copy_error: "" or, where the long copy failed (out of memory on a small card, a
    profile with no event), why; its µs is then NaN and the curve is kept, unscaled (review rr20h S4)."""
    if not blocks:
        raise ValueError("blocks must name at least one (floats per program, warps) configuration")
    require_cuda("timing copies")
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20)
    rows = []
    for size in sizes:
        nbytes, us = _copy_us(size, runs, device, blocks, l2)
        rows.append({"bytes": nbytes, "copy_us": us, "copy_gb_s": nbytes / us / 1e3})
    timed, why = attempt(_copy_us, long_bytes, runs, device, blocks, l2)  # its failure loses no size's time
    long_moved, long_us = timed if timed is not None else (long_bytes, math.nan)
    return pd.DataFrame(rows).assign(long_copy_bytes=long_moved, long_copy_us=long_us, long_copy_error=why or "")


def scaled_curve(curve: pd.DataFrame, bandwidth_gbs: float) -> pd.DataFrame:
    """`copy_time_curve`'s curve with `at_floor_us`: each copy's time scaled by the floor's time for the
    curve kernel's long copy over that kernel's own (long_copy_bytes at `bandwidth_gbs` / long_copy_us),
    so that the scaled curve at long_copy_bytes is the floor's time: what is left between a size's scaled
    time and its bytes at `bandwidth_gbs` is the size's alone, not the curve kernel's shortfall against
    the floor's copy (review rv19B S5; notebook 12_speed_of_light). The factor is applied at every size. A curve
    without its long copy's columns is refused; one whose long copy was not timed (NaN: it failed,
    `copy_time_curve`'s long_copy_error) is left unscaled, factor 1, and `curve_calibration` says why (rr20h S4)."""
    missing = {"long_copy_bytes", "long_copy_us"} - set(curve)
    if missing:
        raise ValueError(f"the curve has no {', '.join(sorted(missing))}: pass copy_time_curve's, which times its "
                         "kernel's long copy")  # fmt: skip
    scale = curve["long_copy_bytes"] / bandwidth_gbs / 1e3 / curve["long_copy_us"]
    scale = scale.where(curve["long_copy_us"] > 0, 1.0)  # NaN (not timed): unscaled, said beside the term
    return curve.assign(at_floor_us=curve["copy_us"] * scale)


def _union(intervals) -> float:
    """Time covered by at least one of the (start, end) intervals."""
    total, cur = 0.0, None
    for a, b in sorted(intervals):
        if cur is None or a > cur[1]:
            total += 0.0 if cur is None else cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (0.0 if cur is None else cur[1] - cur[0])


def timeline_terms(events: pd.DataFrame, step_kernels=STEP_KERNELS) -> dict:
    """A generation's GPU timeline split into replays and what lies between them
    (notebook 12_speed_of_light). `events`: name, start, end (µs); a replay is a run of consecutive events
    (by start) whose `short_kernel_name` is in `step_kernels`; anything else (the stop flag's copy,
    the reset before, the trim after) separates them. Each kernel's exclusive time runs from the
    end of every earlier kernel of its replay (or its own start, if later) to its own end, at
    least 0 (`tokgen.profiling.own_times`): under programmatic dependent launch a kernel starts
    early and waits for the one before, and its CUPTI duration counts that wait; its exclusive
    time does not, and a replay's exclusive times add up to its busy time exactly. In µs:
    `durations` (the replays' kernels' exclusive times added up), `gaps` (idle time between them
    inside replays), so that each replay's span is durations + gaps; `overlap` (the raw durations
    minus the exclusive times: the waits, counted in no term); `stop_gpu` (from a replay's end to
    the end of the last GPU event before the next replay: the flag's copy) and `launch` (from
    there to the next replay's first kernel); `around` (GPU span outside the first to the last
    replay); `span` (the whole GPU span), `busy` (time at least one event runs); `replays`;
    `kernels`, the replays' events in order with an `exclusive` column."""
    ev = events.sort_values("start", kind="stable").reset_index(drop=True)
    step = ev["name"].map(lambda n: short_kernel_name(n) in step_kernels)
    runs, current = [], []
    for i, is_step in enumerate(step):
        if is_step:
            current.append(i)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    if not runs:
        raise ValueError(f"no kernel of the step ({', '.join(step_kernels)}) in the timeline")
    out = {"durations": 0.0, "gaps": 0.0, "overlap": 0.0, "stop_gpu": 0.0, "launch": 0.0, "replays": len(runs)}
    exclusive = pd.Series(0.0, index=ev.index)
    for r, idx in enumerate(runs):
        k = ev.loc[idx]
        exclusive[idx] = own_times(list(k["start"]), list(k["end"]))
        busy = float(exclusive[idx].sum())
        out["durations"] += busy
        out["overlap"] += float((k["end"] - k["start"]).sum()) - busy
        out["gaps"] += float(k["end"].max() - k["start"].min()) - busy
        if r + 1 < len(runs):
            end, nxt = float(k["end"].max()), float(ev.loc[runs[r + 1][0], "start"])
            between = ev.loc[idx[-1] + 1 : runs[r + 1][0] - 1]
            last = max([end, *between["end"]])
            out["stop_gpu"] += last - end
            out["launch"] += nxt - last
    first, final = float(ev.loc[runs[0], "start"].min()), float(ev.loc[runs[-1], "end"].max())
    out["span"] = float(ev["end"].max() - ev["start"].min())
    out["around"] = out["span"] - (final - first)
    out["busy"] = _union(zip(ev["start"], ev["end"]))
    chosen = [i for idx in runs for i in idx]
    out["kernels"] = ev.loc[chosen].assign(exclusive=exclusive[chosen]).reset_index(drop=True)
    return out


def kernel_table(kernels: pd.DataFrame, calls: list[tuple[str, str, int]], bandwidth_gbs: float,
                 curve: pd.DataFrame | None) -> pd.DataFrame:  # fmt: skip
    """Each kernel of the replays against its bytes (notebook 12_speed_of_light): `kernels` (name,
    start, end and exclusive time in µs, in launch order: `timeline_terms`' "kernels") matched one
    to one with `calls` ((name, what, bytes) per launch, `fused_step_calls` step after step),
    grouped by kernel and what it computes. In ms per generation: own_ms (exclusive times: they add
    up to the replays' busy time), duration_ms (CUPTI's durations, which also count a kernel's wait
    for the one before under programmatic dependent launch), at_copy_ms (bytes at `bandwidth_gbs`),
    at_size_ms (a copy of each launch's bytes, interpolated in `curve` from `copy_time_curve` scaled to
    the floor's copy, `scaled_curve`: so at_size_ms - at_copy_ms is the sizes' alone; NaN without a
    curve); median_us, one launch's exclusive time; rate_gb_s, its bytes over its own time. A
    mismatch of names is an error naming
    the first launch that differs."""
    if "exclusive" not in kernels:
        raise ValueError("kernels has no 'exclusive' column: pass timeline_terms(...)['kernels']")
    names = [short_kernel_name(n) for n in kernels["name"]]
    if len(names) != len(calls):
        raise ValueError(f"the replays ran {len(names)} kernels, the step's calls are {len(calls)}")
    for i, (got, (want, what, _)) in enumerate(zip(names, calls)):
        if got != want:
            raise ValueError(f"launch {i}: the timeline has {got}, the step calls {want} ({what}) there")
    nbytes = np.array([b for *_, b in calls], dtype=float)
    if curve is not None and len(curve):
        c = scaled_curve(curve, bandwidth_gbs).sort_values("bytes")  # the floor's copy at the long copy's size
        at_size = np.where(nbytes > 0, np.interp(nbytes, c["bytes"], c["at_floor_us"]), 0.0)
    else:
        at_size = np.full(len(calls), np.nan)
    frame = pd.DataFrame({"kernel": names, "what": [w for _, w, _ in calls], "bytes": nbytes,
                          "own_us": kernels["exclusive"].to_numpy(dtype=float),
                          "duration_us": (kernels["end"] - kernels["start"]).to_numpy(dtype=float),
                          "at_copy_us": nbytes / bandwidth_gbs / 1e3, "at_size_us": at_size})  # fmt: skip
    out = frame.groupby(["kernel", "what"], sort=False).agg(
        launches=("own_us", "size"), mb=("bytes", "sum"), own_us=("own_us", "sum"), median_us=("own_us", "median"),
        duration_us=("duration_us", "sum"), at_copy_us=("at_copy_us", "sum"),
        at_size_us=("at_size_us", lambda s: s.sum(min_count=len(s))),
    ).reset_index()  # fmt: skip
    out["mb"] /= 1e6
    for col in ("own", "duration", "at_copy", "at_size"):
        out[f"{col}_ms"] = out.pop(f"{col}_us") / 1e3
    out["pct_of_copy_bandwidth"] = 100 * out["at_copy_ms"] / out["own_ms"]
    out["rate_gb_s"] = out["mb"] / out["own_ms"]  # MB per ms: GB/s over its own time (review rv19B S4)
    return out


def curve_calibration(curve: pd.DataFrame | None, bandwidth_gbs=None) -> tuple[float, float] | str | None:
    """How `scaled_curve` sets the copy curve on the floor's copy (`copy_time_curve`): the MB of its kernel's
    long copy and that kernel's rate for it as a share of `bandwidth_gbs` (the floor's copy), the factor the
    curve's times are scaled by; where that long copy was not timed, why (a str: the curve is left unscaled;
    review rr20h S4); None without a curve or a bandwidth (notebook 12_speed_of_light; review rv19B S5)."""
    if curve is None or not len(curve) or not bandwidth_gbs or "long_copy_us" not in curve:
        return None
    nbytes, us = float(curve["long_copy_bytes"].iloc[0]), float(curve["long_copy_us"].iloc[0])
    if not us > 0:  # NaN: the long copy failed
        why = curve["long_copy_error"].iloc[0] if "long_copy_error" in curve else ""
        return f"its kernel's long copy was not timed ({why})" if isinstance(why, str) and why else (
            "its kernel's long copy was not timed")  # fmt: skip
    share = nbytes / bandwidth_gbs / 1e3 / us  # the floor's time for its bytes over the kernel's
    return (nbytes / 1e6, share) if 0 < share < math.inf else None  # NaN or none: not said


def waterfall_table(measured_ms: float, *, floor_ms=None, compute_ms=None, kernels=None, timeline=None,
                    wall_profiled_ms=None, errors: dict | None = None, calibration=None) -> pd.DataFrame:  # fmt: skip
    """The waterfall from the floor to `measured_ms`, one row per term of `TERMS`, then the
    remainder and the total (notebook 12_speed_of_light). Inputs: the floor and the arithmetic's
    time (ms), `kernel_table`'s table, `timeline_terms`' dict, the profiled generation's wall time;
    each None when not measured, with its reason in `errors` (keys "floor", "compute", "kernels",
    "timeline", "wall"). Columns: term, ms, start_ms, end_ms (where its bar starts and ends, the
    terms stacked in order), status ("measured", "derived", "not measured", "remainder", "total": a term
    with a value is "derived" where its basis says so, else "measured"), basis (the status, but for a term
    with a value that is derived from measurements, how: `DERIVED`), note. `calibration` (`curve_calibration`:
    the MB of the copy curve kernel's long copy and that kernel's rate for it as a share of the floor's copy)
    is said beside the small copies' term: the curve was scaled by it, so the term is the sizes' alone and the
    curve kernel's difference from the floor's copy falls in the next term (reviews rvB13 N2, rv19B S5); a str
    (why the long copy was not timed) says the curve was not scaled and the term holds both (rr20h S4).
    The measured terms and the remainder add up to `measured_ms`."""
    errors = errors or {}
    us = (lambda key: timeline[key] / 1e3) if timeline is not None else None
    over = None if compute_ms is None or floor_ms is None else max(0.0, compute_ms - floor_ms)
    k = kernels if kernels is not None else None
    own = None if k is None else k["own_ms"].sum()
    waits = None if k is None else k["duration_ms"].sum() - own
    at_copy = None if k is None else k["at_copy_ms"].sum()
    at_size = None if k is None or k["at_size_ms"].isna().any() else k["at_size_ms"].sum()
    values = {
        FLOOR: (floor_ms, errors.get("floor")),
        COMPUTE: (over, errors.get("compute") or errors.get("floor")),
        EXTRA_BYTES: (None if at_copy is None or floor_ms is None else at_copy - floor_ms,
                      errors.get("kernels") or errors.get("floor")),
        SMALL: (None if at_size is None else at_size - at_copy, errors.get("kernels") or errors.get("copies")),
        KERNELS: (None if at_size is None or over is None else own - at_size - over,
                  errors.get("kernels") or errors.get("copies") or errors.get("compute")),
        GAPS: (us and us("gaps"), errors.get("timeline")),
        STOP_GPU: (us and us("stop_gpu"), errors.get("timeline")),
        LAUNCH: (us and us("launch"), errors.get("timeline")),
        AROUND: (us and us("around"), errors.get("timeline")),
        HOST: (None if us is None or wall_profiled_ms is None else wall_profiled_ms - us("span"),
               errors.get("timeline") or errors.get("wall")),
    }  # fmt: skip
    rows, level = [], 0.0
    for term, (ms, why) in values.items():
        if ms is None or ms != ms:
            rows.append({"term": term, "ms": float("nan"), "start_ms": level, "end_ms": level, "status": NOT_MEASURED,
                         "basis": NOT_MEASURED,
                         "note": why or "needs a term before it that was not measured"})  # fmt: skip
            continue
        note = ""
        if term == COMPUTE:
            note = (f"the products' arithmetic of the floor's steps alone takes {compute_ms:.3f} ms at the measured "
                    "rate (steps a replay computes past N or past the stop are in the kernels' bytes)")  # fmt: skip
        elif term == KERNELS and waits > 1e-6:
            note = (f"each kernel's time after the kernels before it ended; {waits:.3f} ms of the kernels' durations "
                    "overlap an earlier kernel (programmatic dependent launch: a kernel starts early and waits for it) "
                    "and are not counted")  # fmt: skip
        elif term == KERNELS:
            note = "each kernel's time after the kernels before it ended; no kernel's duration overlaps an earlier one"
        elif term == SMALL and isinstance(calibration, str):
            note = (f"not scaled: {calibration}, so the copy curve is its kernel's own and this term holds that "
                    "kernel's difference from the floor's copy as well as size")  # fmt: skip
        elif term == SMALL and calibration:
            mb, share = calibration
            note = (f"the copy curve is scaled by {share:.3f} (applied at every size): its kernel's long copy "
                    f"({mb:,.0f} MB read and "
                    f"written) ran at {share:.1%} of the floor's copy rate, so scaled it takes the floor's time and "
                    "this term is size alone; that kernel's difference from the floor's copy falls in the next "
                    "term")  # fmt: skip
        basis = DERIVED.get(term, MEASURED) if not (term == SMALL and isinstance(calibration, str)) else UNSCALED
        status = DERIVED_STATUS if basis.startswith(DERIVED_STATUS) else MEASURED
        rows.append({"term": term, "ms": float(ms), "start_ms": level, "end_ms": level + ms, "status": status,
                     "basis": basis, "note": note})  # fmt: skip
        level += ms
    missing = [r["term"] for r in rows if r["status"] == NOT_MEASURED]
    listed = "; ".join(missing) if len(missing) <= 3 else "see their rows"
    note = f"holds {len(missing)} term(s) not measured: {listed}" if missing else "unprofiled minus profiled generation"
    rows.append({"term": REMAINDER, "ms": measured_ms - level, "start_ms": level, "end_ms": measured_ms,
                 "status": "remainder", "basis": "remainder", "note": note})  # fmt: skip
    rows.append({"term": TOTAL, "ms": measured_ms, "start_ms": 0.0, "end_ms": measured_ms, "status": "total",
                 "basis": "total", "note": ""})  # fmt: skip
    return pd.DataFrame(rows)


def wall_times(run, runs: int, device="cuda") -> list[float]:
    """Milliseconds of each of `runs` calls of `run()`, from the host's clock, the device
    synchronized before and after each (notebook 12_speed_of_light)."""
    times = []
    for _ in range(runs):
        synchronize(device)
        t0 = time.perf_counter()
        run()
        synchronize(device)
        times.append(1e3 * (time.perf_counter() - t0))
    return times


def measure_waterfall(model, *, generator: str = "graph_triton_fused", batch_size: int, max_seqlen: int,
                      steps_per_graph: int, runs: int, bandwidth_gbs=None, tflops=None, curve=None,
                      errors: dict | None = None) -> dict:  # fmt: skip
    """The waterfall of `generator` (a registry entry on the fused step, K = `steps_per_graph`
    steps per replay) at B = `batch_size`, N = `max_seqlen` (notebook 12_speed_of_light): the
    median wall time of `runs` generations after a warm-up, then one generation profiled, against
    `bandwidth_gbs` (the copy bandwidth of this card: notebook 12's section 1, `gpu_inputs`), `tflops` and `curve`
    (`copy_time_curve`); those three None where not measured, with reasons in `errors`
    ("floor", "compute", "copies"). Returns {"terms": `waterfall_table`, "kernels":
    `kernel_table` (None if not measured), "summary": K, replays, steps, measured_ms,
    wall_profiled_ms, gpu_busy_ms, wall_minus_busy_ms}."""
    entry = get_generator(generator)
    if getattr(entry, "keywords", {}).get("step") != "fused" or entry.keywords.get("stop_on_device"):
        raise ValueError(f"generator {generator!r}: the waterfall reads the fused step's kernels in K-step replays; "
                         "use graph_triton_fused")  # fmt: skip
    errors = dict(errors or {})
    device = model.device

    def run():
        return generate(generator, model, batch_size=batch_size, max_seqlen=max_seqlen, steps_per_graph=steps_per_graph)

    steps = run().shape[1] - 1  # warm-up: the decoder is built and captured here
    measured = statistics.median(wall_times(run, runs, device))
    floor = compute = None
    if bandwidth_gbs:
        floor = generation_bytes(model, batch_size, steps) / bandwidth_gbs / 1e6
    if tflops:
        compute = generation_flops(model, batch_size, steps) / (tflops * 1e9)
    profiled, errors["timeline"] = attempt(profile_generation, run)
    timeline = kernels = None
    wall_profiled = busy = None
    if profiled is not None:
        events, wall_profiled = profiled
        timeline, errors["timeline"] = attempt(timeline_terms, events)
        busy = _union(zip(events["start"], events["end"])) / 1e3
    if timeline is not None and bandwidth_gbs:
        k_steps = timeline["replays"] * steps_per_graph
        calls = [c for pos in range(k_steps) for c in fused_step_calls(model, batch_size, pos)]
        kernels, errors["kernels"] = attempt(kernel_table, timeline["kernels"], calls, bandwidth_gbs, curve)
    elif timeline is not None:
        errors["kernels"] = errors.get("floor") or "no copy bandwidth measured"
    else:
        errors["kernels"] = f"needs the timeline ({errors['timeline']})"
    terms = waterfall_table(measured, floor_ms=floor, compute_ms=compute, kernels=kernels, timeline=timeline,
                            wall_profiled_ms=wall_profiled, errors=errors,
                            calibration=curve_calibration(curve, bandwidth_gbs))  # fmt: skip
    summary = {"steps_per_graph": steps_per_graph, "replays": timeline["replays"] if timeline else None,
               "steps": steps, "measured_ms": measured, "wall_profiled_ms": wall_profiled, "gpu_busy_ms": busy,
               "wall_minus_busy_ms": None if busy is None else measured - busy}  # fmt: skip
    return {"terms": terms, "kernels": kernels, "summary": summary}


def gpu_inputs(model, batch_size: int, max_seqlen: int, copy_mb: int, runs: int, device, bandwidth_gbs=None,
               tflops=None) -> dict:  # fmt: skip
    """What the waterfall needs from the GPU besides the generator, or its reason for not being
    (notebook 12_speed_of_light): "bandwidth" (GB/s of a `copy_mb` copy, the floor's), "tflops"
    (`matmul_tflops`), "curve" (`copy_time_curve` at `copy_sizes`), and "errors" keyed "floor",
    "compute", "copies" as `measure_waterfall` takes them. `bandwidth_gbs` and `tflops`, when given,
    are used as they are (notebook 12: section 1's bandwidth and rate, this card's); those
    not given are measured in this process."""
    if torch.device(device).type != "cuda":
        why = "not measured on a CPU: it needs a CUDA GPU"
        return {"bandwidth": None, "tflops": None, "curve": None,
                "errors": {"floor": why, "compute": why, "copies": why}}  # fmt: skip
    bw, e_bw = (bandwidth_gbs, None) if bandwidth_gbs else attempt(copy_bandwidth, device, copy_mb, runs)
    tflops, e_tf = (tflops, None) if tflops else attempt(matmul_tflops, device)
    curve, e_curve = attempt(copy_time_curve, copy_sizes(model, batch_size, max_seqlen), runs, device)
    return {"bandwidth": bw, "tflops": tflops, "curve": curve, "errors": {"floor": e_bw, "compute": e_tf,
            "copies": e_curve}}  # fmt: skip


def _recorded(rows: pd.DataFrame | None, column: str) -> float | None:
    values = rows[column].dropna() if rows is not None and column in rows else pd.Series(dtype=float)
    return float(values.iloc[-1]) if len(values) else None


def rates_text(rows: pd.DataFrame | None, source: str | None, errors: dict) -> str:
    """ "The floor's copy bandwidth: 2,953 GB/s (section 1's, measured by notebook 10); TF32 products 420
    TFLOP/s (section 1's)." read from the rows written to `12_waterfall` (their bandwidth_gb_s and
    matmul_tflops); where they hold no bandwidth, why (`errors`' "floor", as `gpu_inputs` gives it)
    (notebook 12_speed_of_light)."""
    bandwidth, tflops = _recorded(rows, "bandwidth_gb_s"), _recorded(rows, "matmul_tflops")
    if bandwidth is None:
        return (f"The floor's copy bandwidth: not measured ({errors['floor']})." if errors.get("floor") else
                "The floor's copy bandwidth: not recorded (no waterfall was measured, so 12_waterfall holds none).")
    said = f"The floor's copy bandwidth: {bandwidth:,.0f} GB/s" + (f" (section 1's, measured by {source})"
                                                                  if source else "")  # fmt: skip
    return said + (f"; TF32 products {tflops:,.0f} TFLOP/s (section 1's)" if tflops is not None else "") + "."


def biggest_term(terms: pd.DataFrame) -> str:
    """The largest measured term above the floor (the remainder included), in one sentence read from
    `waterfall_table`'s rows (notebook 12_speed_of_light)."""
    total = terms.loc[terms["status"] == "total", "ms"].iloc[0]
    above = terms[terms["status"].isin([*VALUED, "remainder"]) & (terms["term"] != FLOOR)].dropna(subset=["ms"])
    floor = terms.loc[terms["term"] == FLOOR, "ms"].iloc[0]
    if above.empty:
        return f"No term above the floor was measured: the measured time is {total:.1f} ms."
    top = above.loc[above["ms"].idxmax()]
    start = (f"The floor is {floor:.1f} ms; the measured time, {total:.1f} ms, is {total / floor:.2f}× the floor; "
             if floor == floor else f"The measured time is {total:.1f} ms (the floor was not measured); ")  # fmt: skip
    share, of_gap = 100 * top["ms"] / total, 100 * top["ms"] / (total - floor) if floor == floor else float("nan")
    gap = f", {of_gap:.0f}% of the gap above the floor" if of_gap == of_gap else ""
    return start + (f"the largest term above the floor is **{top['term']}**: {top['ms']:.1f} ms ({share:.0f}% of "
                    f"the measured time{gap}).")  # fmt: skip


INSIDE_KERNELS = (SMALL, KERNELS)  # the gap's terms inside the kernels' own times
BETWEEN_KERNELS = (GAPS, STOP_GPU, LAUNCH)  # the gap's terms between kernels and between replays


def gap_split(terms: pd.DataFrame) -> str:
    """Where the gap between the floor and the measured time lies, in one sentence read from
    `waterfall_table`'s rows (the rows of `12_waterfall`: term, ms, status; notebook 12): the
    share of the gap in the kernels' own terms (`INSIDE_KERNELS`), in the idle time between
    kernels and between replays (`BETWEEN_KERNELS`), in the other terms (the arithmetic, the extra
    bytes, the span around the replays, the host's time) and in the remainder, signed and apart from
    them (a negative remainder is not netted into the other terms); a share that is not 0 or the
    whole never prints as 0% or 100% (`tokgen.voice.percent_text`; review rvB12 N1)."""
    ms = terms.set_index("term")["ms"]
    total = terms.loc[terms["status"] == "total", "ms"].iloc[0]
    needed = (FLOOR, *INSIDE_KERNELS, *BETWEEN_KERNELS)
    missing = [t for t in needed if t not in ms.index or ms[t] != ms[t]]
    if missing:
        return f"*Where the gap lies is not measured here: {len(missing)} of its terms were not (see the table).*"
    gap = total - ms[FLOOR]
    if gap <= 0:
        return f"*The measured time, {total:.1f} ms, is not above the floor, {ms[FLOOR]:.1f} ms: no gap to split.*"
    inside, between = sum(ms[t] for t in INSIDE_KERNELS), sum(ms[t] for t in BETWEEN_KERNELS)
    remainder = ms.get(REMAINDER, 0.0)
    remainder = 0.0 if remainder != remainder else remainder
    other = gap - inside - between - remainder

    def share(part: float) -> str:
        return percent_text(part / gap, 0.5).replace("-", "−")

    return (f"Of the {gap:.1f} ms between the floor and the measured time, the kernels' own terms (copies of each "
            f"kernel's size; kernels slower than such copies) hold **{share(inside)}**, the time between kernels and "
            f"between replays (gaps, the stop check with its flag's copy, graph launch or host) {share(between)}, the "
            f"other terms (arithmetic, extra bytes, the span around the replays, the host) {share(other)} and the "
            f"remainder {share(remainder)}.")  # fmt: skip


PROFILER_SHARE = 0.05  # a remainder below minus this share of the measured time: the profiler's cost is said


def profiler_note(terms: pd.DataFrame, summary: dict, share: float = PROFILER_SHARE) -> str:
    """One sentence under a waterfall table whose profiled generation ran slower than the unprofiled
    ones by more than `share` of the measured time (its remainder that far below zero), or by more
    than the GPU idle time the unprofiled time leaves beside the profiled busy time (`summary`'s
    wall_minus_busy_ms), which the run then cannot size (notebook 12_speed_of_light). The terms
    come from one profiled generation, and the profiler's own cost sits in them. It says how much
    slower the profiled generation ran; where the idle time is sized, it sets the between-replay
    terms (the stop flag's copy and the graph launch gap) against it: where they exceed it, at least
    the difference is the profiler's (most of them where that is over half). Where it is not sized,
    nothing is set against it. "" otherwise."""
    ms = terms.set_index("term")["ms"]
    measured, remainder = summary.get("measured_ms"), ms.get(REMAINDER)
    profiled, outside = summary.get("wall_profiled_ms"), summary.get("wall_minus_busy_ms")
    between = ms.get(STOP_GPU, float("nan")) + ms.get(LAUNCH, float("nan"))
    known = [v for v in (measured, remainder, profiled, outside, between) if v is not None and v == v]
    if len(known) < 5:
        return ""
    slower = profiled - measured
    below, unsized = remainder < -share * measured, abs(slower) > outside  # faster by as much sizes nothing either
    if not (below or unsized):
        return ""
    why = [f"the remainder, {signed(remainder, 2)} ms, is more than {share:.0%} of the measured time below zero"]
    why = why if below else []
    if unsized:
        why.append(f"more than the {outside:.2f} ms of GPU idle time the unprofiled time leaves beside the profiled "
                   "busy time, so this run cannot size that idle time")  # fmt: skip
    way = "slower" if slower >= 0 else "faster"
    start = f"The profiled generation ran {abs(slower):.2f} ms {way} than the unprofiled ones ({'; '.join(why)})"
    if unsized:  # an idle time the profiler's effect could hold entirely is no yardstick for other terms
        return start + (f"; the between-replay terms ({between:.2f} ms) are not set against it: which terms hold the "
                        "difference (the profiler's effect and one generation's variation, not told apart here) is "
                        "not measured here.")  # fmt: skip
    start += "; "
    if between <= outside:
        return start + (f"the between-replay terms ({between:.2f} ms) fit within the {outside:.2f} ms the unprofiled "
                        "time leaves outside the GPU's busy time: which terms hold the difference is not measured "
                        "here.")  # fmt: skip
    most = "most of them are" if between - outside > between / 2 else "part of them is"
    return start + (f"the between-replay terms ({between:.2f} ms) exceed the {outside:.2f} ms the unprofiled time "
                    f"leaves outside the GPU's busy time, so {most} this profiled generation's own (the profiler's "
                    f"effect or one generation's variation, not told apart here): at least "
                    f"{between - outside:.2f} ms.")  # fmt: skip


def gpu_idle_per_k(waterfalls: dict) -> pd.DataFrame:
    """Per K, from `measure_waterfall`'s results keyed by K (notebook 12_speed_of_light): the GPU
    idle time within the measured time, `gpu_idle_ms` (the unprofiled generations' median wall time
    minus the profiled generation's GPU busy time: two generations), beside the profiled
    generation's own wall minus busy time (`profiled_idle_ms`), how much slower the profiled
    generation ran than the unprofiled ones (`profiled_minus_unprofiled_ms`), the GPU time between replays
    (the stop flag's copy and the graph launch), and `sized`: False where the profiled generation
    ran slower or faster than the unprofiled ones by more than `gpu_idle_ms` (that difference, the
    profiler's effect and one generation's variation not told apart, is then as large as the
    quantity), None where a time is missing."""
    rows = []
    for k, out in waterfalls.items():
        s, ms = out["summary"], out["terms"].set_index("term")["ms"]
        measured, profiled, busy = s.get("measured_ms"), s.get("wall_profiled_ms"), s.get("gpu_busy_ms")
        known = all(v is not None and v == v for v in (measured, profiled, busy))
        idle = measured - busy if known else float("nan")
        slower = profiled - measured if known else float("nan")
        rows.append({"steps_per_graph": k, "replays": s.get("replays"), "measured_ms": measured, "gpu_busy_ms": busy,
                     "gpu_idle_ms": idle, "profiled_idle_ms": profiled - busy if known else float("nan"),
                     "profiled_minus_unprofiled_ms": slower,
                     "between_replays_ms": ms.get(STOP_GPU, float("nan")) + ms.get(LAUNCH, float("nan")),
                     "sized": bool(abs(slower) <= idle) if known else None})  # fmt: skip
    return pd.DataFrame(rows)


def per_k_unpaired_note(per_k: pd.DataFrame) -> str:
    """Under `gpu_idle_per_k`'s table, where it holds several K: its measured times are each K's own
    generations' medians, not a paired comparison; notebook 10 compares K round by round (review
    rv19B N4; notebook 12_speed_of_light). "" for one K or none."""
    if per_k["steps_per_graph"].nunique() < 2:
        return ""
    return ("*Each K's `measured_ms` is the median of its own generations, not a paired comparison: set side by side, "
            "they do not say which K is faster; notebook 10 compares K round by round.*")  # fmt: skip


def gpu_idle_findings(per_k: pd.DataFrame) -> str:
    """One sentence on `gpu_idle_per_k`'s table (notebook 12_speed_of_light): at which K the
    profiled generation's difference from the unprofiled ones exceeds the GPU idle time, so the
    run cannot size it, and at which it stays under it. It names no cause of the idle time: that
    is not measured here."""
    known = per_k[per_k["sized"].notna()]
    if known.empty:
        return "*The GPU idle time was not measured (no profiled generation).*"

    def at(rows):
        return ", ".join(f"K = {int(r.steps_per_graph)} ({abs(r.profiled_minus_unprofiled_ms):.2f} ms "
                         f"{'slower' if r.profiled_minus_unprofiled_ms >= 0 else 'faster'}, against "
                         f"{r.gpu_idle_ms:.2f} ms)" for r in rows.itertuples())  # fmt: skip

    unsized, sized = known[~known["sized"].astype(bool)], known[known["sized"].astype(bool)]
    out = []
    if len(unsized):
        out.append(f"at {at(unsized)} the profiled generation differs from the unprofiled ones by more than the GPU "
                   "idle time (the profiler's effect and one generation's variation together, not told apart "
                   "here), so this run cannot size it there")  # fmt: skip
    if len(sized):
        out.append(f"at {at(sized)} the difference stays below it, so the idle time is sized only to within that "
                   "difference")  # fmt: skip
    text = "; ".join(out)
    return text[0].upper() + text[1:] + ". What the GPU waits for while idle is not measured here."


def plot_waterfall(ax, terms: pd.DataFrame, title: str = ""):
    """`waterfall_table`'s rows as a cascade of horizontal bars, the floor at the top and the measured
    time at the bottom: each term's bar starts where the one above it ended (a negative term
    points left), the remainder hatched, a term not measured named as such (notebook 12_speed_of_light)."""
    n = len(terms)
    for i, r in enumerate(terms.to_dict("records")):
        y = n - 1 - i
        if r["status"] == NOT_MEASURED:
            ax.text(r["start_ms"], y, "  not measured", va="center", fontsize=8, color="0.4")
            continue
        left, width = min(r["start_ms"], r["end_ms"]), abs(r["end_ms"] - r["start_ms"])
        color = {"total": "0.25", "remainder": "0.7"}.get(r["status"], "C0" if r["ms"] >= 0 else "C2")
        color = "C3" if r["term"] == FLOOR else color
        ax.barh(y, width, left=left, color=color, hatch="//" if r["status"] == "remainder" else None,
                edgecolor="0.3", linewidth=0.5)  # fmt: skip
        ax.text(max(r["start_ms"], r["end_ms"]), y, f" {signed(r['ms'], 2)}" if r["status"] in (*VALUED, "remainder")
                and r["term"] != FLOOR else f" {r['ms']:.2f}", va="center", fontsize=8)  # fmt: skip
        if i + 1 < n and r["status"] in VALUED:
            ax.plot([r["end_ms"]] * 2, [y - 0.4, y - 0.6], color="0.5", linewidth=0.5)
    ax.set_yticks(range(n), list(terms["term"])[::-1], fontsize=8)
    ax.set_xlabel("ms per generation")
    ax.set_xlim(left=0, right=1.15 * max(terms["end_ms"].max(), terms["start_ms"].max(), 1e-9))
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title)
    return ax
