"""Timing generators properly: warm-up excluded, synchronize around the timer, interleaved rounds.

Introduced in notebook 01_naive. The article ran each variant 10 times in a row; on a shared,
noisy GPU that confounds drift with differences, so `compare` runs the variants in turn,
round after round, in one process, and `gains` judges a difference by its per-round spread.
"""

import dataclasses
import gc
import statistics
import time
from collections.abc import Callable

import pandas as pd
import torch

from .registry import get_generator

GB = 1e9


@dataclasses.dataclass
class Variant:
    """One thing to time: `run()` generates once; `info` becomes extra columns of its row."""

    name: str
    run: Callable[[], torch.Tensor]
    info: dict = dataclasses.field(default_factory=dict)


def generator_variant(generator: str, model, *, batch_size: int, max_seqlen: int, name=None, **options) -> Variant:
    """A Variant that runs the registered `generator` (see tokgen.GENERATORS) on `model`."""
    fn = get_generator(generator)
    info = {"generator": generator, "batch_size": batch_size, "max_seqlen": max_seqlen, **options}
    return Variant(
        name or generator,
        lambda: fn(model, batch_size=batch_size, max_seqlen=max_seqlen, **options),
        info,
    )


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_memory(device: torch.device) -> None:
    """As the article: release cached blocks and reset the peaks before each run."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        torch.cuda.synchronize(device)


def memory_peaks(device: torch.device) -> dict:
    """Peak allocated and reserved memory of the last run; fragmentation = reserved - allocated."""
    if device.type != "cuda":
        return {"peak_allocated_gb": None, "peak_reserved_gb": None, "frag_gb": None, "frag_pct": None}
    stats = torch.cuda.memory_stats(device)
    allocated = stats.get("allocated_bytes.all.peak", 0)
    reserved = stats.get("reserved_bytes.all.peak", 0)
    return {
        "peak_allocated_gb": allocated / GB,
        "peak_reserved_gb": reserved / GB,
        "frag_gb": (reserved - allocated) / GB,
        "frag_pct": 100 * (reserved - allocated) / reserved if reserved else 0.0,
    }


def time_run(run: Callable[[], torch.Tensor], device: torch.device) -> tuple[float, torch.Tensor]:
    """Milliseconds of one call, the device synchronized before and after."""
    synchronize(device)
    start = time.perf_counter()
    out = run()
    synchronize(device)
    return 1e3 * (time.perf_counter() - start), out


def _is_oom(err: BaseException) -> bool:
    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


def compare(
    variants: list[Variant],
    *,
    rounds: int = 10,
    device: str | torch.device = "cuda",
    record: Callable[[dict], None] | None = None,
    warmup: int = 1,
) -> pd.DataFrame:
    """Time every variant `rounds` times, interleaved: round r runs each variant once, in an order
    rotated by r. `warmup` untimed calls first (compilation, graph capture, lazy allocation);
    the first one is reported as `first_call_ms`.

    A variant that runs out of memory or raises is recorded with status "oom"/"error" and
    dropped; the others go on. One row per variant goes to `record` when all rounds are done.
    """
    if not isinstance(rounds, int) or rounds <= 0:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise ValueError(f"variant names must be unique, got {names}")
    device = torch.device(device)
    state = {v.name: {"times": [], "status": "ok", "error": "", "steps": None, "memory": {}} for v in variants}

    def attempt(v: Variant) -> float | None:
        s = state[v.name]
        out = None
        try:
            reset_memory(device)
            ms, out = time_run(v.run, device)
            s["memory"] = memory_peaks(device)
            steps = out.shape[1] - 1
            if s["steps"] is None:
                s["steps"] = steps
            elif steps != s["steps"]:
                raise RuntimeError(f"{v.name} generated {steps} steps, earlier {s['steps']}")
            return ms
        except Exception as err:  # noqa: BLE001 - one failing variant must not end the comparison
            s["status"] = "oom" if _is_oom(err) else "error"
            s["error"] = f"{type(err).__name__}: {err}"[:500]
            del out
            reset_memory(device)
            return None

    for v in variants:
        for w in range(warmup):
            if state[v.name]["status"] != "ok":
                break
            ms = attempt(v)
            if w == 0:
                state[v.name]["first_call_ms"] = ms
    # What lives after the warm-up (model, compiled code, decoders: hundreds of thousands of
    # objects) stays alive; frozen, the collection before every timed run skips it (0.1-0.2 s
    # each otherwise, minutes over a sweep).
    gc.collect()
    gc.freeze()
    try:
        for r in range(rounds):
            for v in variants[r % len(variants) :] + variants[: r % len(variants)]:
                if state[v.name]["status"] == "ok":
                    ms = attempt(v)
                    if ms is not None:
                        state[v.name]["times"].append(ms)
    finally:
        gc.unfreeze()

    rows = []
    for v in variants:
        row = {"variant": v.name, **v.info, **_summary(state[v.name])}
        rows.append(row)
        if record is not None:
            record(row)
    return pd.DataFrame(rows)


def _summary(s: dict) -> dict:
    t = s["times"]
    q = statistics.quantiles(t, n=4, method="inclusive") if len(t) >= 2 else [float("nan")] * 3
    steps = s["steps"]
    median = statistics.median(t) if t else float("nan")
    return {
        "status": s["status"],
        "error": s["error"],
        "runs": len(t),
        "steps": steps,
        "median_ms": median,
        "mean_ms": statistics.mean(t) if t else float("nan"),
        "std_ms": statistics.stdev(t) if len(t) >= 2 else float("nan"),
        "min_ms": min(t) if t else float("nan"),
        "max_ms": max(t) if t else float("nan"),
        "q25_ms": q[0],
        "q75_ms": q[2],
        "ms_per_step": median / steps if t and steps else float("nan"),
        "first_call_ms": s.get("first_call_ms"),
        "times_ms": ";".join(f"{x:.3f}" for x in t),
        **s["memory"],
    }


def run_times(row) -> list[float]:
    """The per-round times of a result row (a dict or a DataFrame row)."""
    text = row["times_ms"]
    return [float(x) for x in str(text).split(";")] if isinstance(text, str) and text else []


def gains(results: pd.DataFrame, base: str) -> pd.DataFrame:
    """Each variant against `base`, round by round: gain % = (t_base - t) / t_base.

    Rounds are interleaved, so round r of two variants ran moments apart on the same GPU state.
    `real` is True when the middle half of the per-round gains (25th..75th percentile) lies on
    one side of zero: the difference clears the spread.
    """
    by_name = {row["variant"]: row for _, row in results.iterrows()}
    if base not in by_name:
        raise ValueError(f"no variant {base!r} among {list(by_name)}")
    base_times = run_times(by_name[base])
    rows = []
    for name, row in by_name.items():
        times = run_times(row)
        n = min(len(times), len(base_times))
        per_round = [100 * (b - t) / b for b, t in zip(base_times[:n], times[:n])]
        if n >= 2:
            lo, _, hi = statistics.quantiles(per_round, n=4, method="inclusive")
        else:
            lo = hi = float("nan")
        rows.append(
            {
                "variant": name,
                "vs": base,
                "speedup": by_name[base]["median_ms"] / row["median_ms"] if row["median_ms"] else float("nan"),
                "gain_pct": statistics.median(per_round) if per_round else float("nan"),
                "gain_q25_pct": lo,
                "gain_q75_pct": hi,
                "real": bool(n >= 2 and (lo > 0 or hi < 0)),
            }
        )
    return pd.DataFrame(rows)


def set_expandable_segments(enabled: bool) -> None:
    """Switch the CUDA caching allocator's expandable segments for segments created from now on
    (notebook 03). The article sets PYTORCH_ALLOC_CONF before CUDA starts; this lets one process
    compare both settings round by round."""
    setting = f"expandable_segments:{enabled}"
    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    if setter is None:
        setter = torch.cuda.memory._set_allocator_settings
    setter(setting)


def expandable_segments_active(device: str | torch.device = "cuda") -> bool:
    """Does a fresh allocation land in an expandable segment? Read from the allocator's snapshot."""
    torch.cuda.empty_cache()
    probe = torch.empty(64 * 2**20, dtype=torch.uint8, device=device)
    address = probe.data_ptr()
    segments = torch.cuda.memory._snapshot()["segments"]
    del probe
    for seg in segments:
        if seg["address"] <= address < seg["address"] + seg["total_size"]:
            return bool(seg.get("is_expandable", False))
    raise RuntimeError("the probe allocation was not found in the allocator snapshot")
