"""Where the time goes: a profiled window of steps, GPU idle gaps, syncs per token.

Introduced in notebook 06_eos_sync_profile (window, ranges, timeline, gaps); notebook
11_sync_audit counts host-device syncs. Generators call ``on_step(i)`` at the top of step i;
the callbacks here use it to open and close a profiling window and to mark ranges.
Readers with Nsight Systems use the same two callbacks with `torch.cuda.profiler.start/stop`
(notebook 06, section 4).
"""

import bisect
import contextlib
import functools
import gzip
import inspect
import json
import math
import os
import re
import time
import warnings
from collections import Counter
from pathlib import Path

import pandas as pd
import torch

from . import kernels as _kernels
from .model import require_cuda, synchronize
from .voice import speedup_text

try:
    import nvtx
except ImportError:  # nvtx is optional at run time: the torch.profiler ranges still work
    nvtx = None


@contextlib.contextmanager
def _no_cycle_warning():
    """Silence torch.profiler's "Profiler clears events at the end of each cycle" UserWarning
    (some torch versions give it for every profiler, cycles or not; ours have none), and only it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Warning: Profiler clears events", category=UserWarning)
        yield


class StepWindow:
    """An `on_step` callback: `open()` at the first step >= start, `close()` at the first step >=
    stop, or by `finish()` when the run ends first. A generator that calls on_step every K-th
    step (a graph decoder) still opens the window (notebook 06_eos_sync_profile)."""

    def __init__(self, start: int, stop: int, open, close):
        self.start, self.stop, self.open, self.close = start, stop, open, close
        self.state = "before"

    def __call__(self, step: int) -> None:
        if self.state == "before" and step >= self.start:
            self.open()
            self.state = "open"
        elif self.state == "open" and step >= self.stop:
            self.close()
            self.state = "after"

    def finish(self) -> None:
        if self.state == "open":
            self.close()
            self.state = "after"


class Ranges:
    """Named ranges seen by Nsight Systems (NVTX) and by torch.profiler (record_function) alike:
    "step i" from one `on_step` call to the next, and "model forward" around every call of
    `model` (forward hooks), when one is given (notebook 06_eos_sync_profile)."""

    def __init__(self, model=None):
        self.open_step, self.forwards, self.hooks = None, [], []
        if model is not None:
            self.hooks = [
                model.register_forward_pre_hook(lambda *_: self.forwards.append(self._enter("model forward"))),
                model.register_forward_hook(lambda *_: self._exit(self.forwards.pop())),
            ]

    @staticmethod
    def _enter(name: str):
        marks = [torch.profiler.record_function(name)] + ([nvtx.annotate(name)] if nvtx is not None else [])
        for mark in marks:
            mark.__enter__()
        return marks

    @staticmethod
    def _exit(marks) -> None:
        for mark in reversed(marks):
            mark.__exit__(None, None, None)

    def __call__(self, step: int) -> None:
        self.finish_step()
        self.open_step = self._enter(f"step {step}")

    def finish_step(self) -> None:
        if self.open_step is not None:
            self._exit(self.open_step)
            self.open_step = None

    def finish(self) -> None:
        self.finish_step()
        for hook in self.hooks:
            hook.remove()


def profile_steps(
    run, *, start: int = 30, stop: int = 50, cpu: bool = False, model=None, trace_path: str | Path | None = None
) -> "Timeline":
    """Run `run(on_step)` once, recording steps [start, stop) with torch.profiler (CUPTI).

    Like the article's nsys capture of steps 30-50, but readable from Python. With `cpu=False`
    only GPU activity is recorded: recording every operator on the CPU as well adds host work to
    every operator and would inflate the very gaps we measure. `cpu=True` adds the CPU
    side, and the ranges of `Ranges(model)` (for pictures and Perfetto). The Chrome/Perfetto
    trace is written gzip-compressed to `trace_path` when given, without its "traceName" (the path of
    the profiler's temporary file: a machine path). Notebook 06_eos_sync_profile.
    """
    activities = [torch.profiler.ProfilerActivity.CPU] if cpu or not torch.cuda.is_available() else []
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    prof = torch.profiler.profile(activities=activities)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    window = StepWindow(
        start, stop, lambda: (synchronize(device), prof.start()), lambda: (synchronize(device), prof.stop())
    )
    ranges = Ranges(model) if cpu else None

    def on_step(step: int) -> None:
        window(step)
        if window.state == "open" and device == "cuda":  # a step marker: a runtime call with a host timestamp,
            torch.cuda.current_stream().query()  # non-blocking, the same for every generator (`Timeline`)
        if ranges is not None:
            ranges(step)

    with _no_cycle_warning():  # prof.start() runs inside run(), at the window's first step
        try:
            run(on_step)
        finally:
            if ranges is not None:
                ranges.finish()
            window.finish()
            settle_profiler(device)
    raw = Path(os.environ.get("TMPDIR", "/tmp")) / f"tokgen_trace_{os.getpid()}.json"
    prof.export_chrome_trace(str(raw))
    trace = json.loads(raw.read_text())
    raw.unlink()
    if trace_path is not None:  # without the per-operator CPU events: a tenth of the size
        trace_path = Path(trace_path)
        trace_path.parent.mkdir(parents=True, exist_ok=True)
        kept = [e for e in trace.get("traceEvents", []) if e.get("cat") != "cpu_op"]
        written = {key: value for key, value in trace.items() if key != "traceName"}  # a temporary file's path
        with gzip.open(trace_path, "wt") as f:
            json.dump({**written, "traceEvents": kept}, f)
    return Timeline(trace)


def settle_profiler(device: str | torch.device = "cuda") -> None:
    """Let CUPTI's teardown finish after a torch.profiler session ends on CUDA, outside every timed and
    profiled region (notebook 06_eos_sync_profile).

    With TEARDOWN_CUPTI=1 (set at `import tokgen`) kineto tears CUPTI down on a background thread, and
    `cuptiFinalize` then runs inside the next CUDA call; a session started before that can record no GPU
    events at all, with no error (pytorch/kineto#1554). A short wait, a synchronize (in which the
    finalize runs) and a shorter wait, about 25 ms a session: nothing on the CPU."""
    if torch.device(device).type != "cuda":
        return
    time.sleep(0.02)
    torch.cuda.synchronize()
    time.sleep(0.005)


_GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
WINDOW_SKIP = 2  # steps at the start of a profiled window left out of its statistics (notebook 06_eos_sync_profile)


def _waits(runtime_call: str) -> bool:
    """Whether a CUDA runtime call blocks the host until the GPU gets there: the cuda*Synchronize calls
    and a synchronous cudaMemcpy (notebook 06). Not cudaMemcpyAsync: `.item()` (PyTorch's
    `_local_scalar_dense`) and the pipelined generator copy into pinned host memory, for which that call
    is documented not to wait for the GPU (its own host time is measured: `sync_wait`'s `copy_us`), and
    `.item()` then waits in cudaStreamSynchronize."""
    return "Synchronize" in runtime_call or runtime_call == "cudaMemcpy"


def _host_lane(runtime_call: str) -> str | None:
    """The CPU lane of a CUDA runtime call on a `Timeline`: "sync wait" (`_waits`), "copy call"
    (cudaMemcpyAsync, which queues a copy), or None: not drawn (notebook 06)."""
    return "sync wait" if _waits(runtime_call) else "copy call" if runtime_call == "cudaMemcpyAsync" else None


# `Timeline.summary` records, per step, the time from the end of each of step i−1's last TAIL_OPS GPU operations
# to step i's first: the stop check's operations come last in a synchronous step (the token's comparison, the
# flag's update and reduction, the flag's copy), so claim 6 can measure both generators from the work they share
TAIL_OPS = 8


class Timeline:
    """GPU activity and CPU ranges of a profiled window, in microseconds since the window opened.

    `profile_steps` marks the start of every step of the window (a graph replay for the graph
    decoders) with a `cudaStreamQuery` on the host; GPU work belongs to the step during which the
    host launched it (CUPTI's correlation ids tie each kernel and copy to its launch call). A
    generator without any stop check copies nothing to the host, so the markers are what splits
    its steps. A trace without markers is split by its device-to-host copies instead (every
    generator with a stop check ends a step by copying its flag): step j is everything after copy
    j-1 up to and including copy j.

    `kernels`: name, stream, start, end, step (kernels, memcpys and memsets), and launch: when the
    host's launch call began (NaN where it was not recorded). `marks`: the host's start of each step
    (its `cudaStreamQuery` marker), one per step from step 0 on; empty in a trace without markers.
    `ranges`: CPU ranges (name, start, end), when recorded: "step i", "model forward", "sync wait"
    for the host's blocking waits on the GPU (cuda*Synchronize calls, a synchronous cudaMemcpy), and
    "copy call" for cudaMemcpyAsync calls. `.item()` copies the flag into a pinned host buffer with
    cudaMemcpyAsync, documented not to wait for the GPU with pinned memory, and then waits in
    cudaStreamSynchronize until the copy, and everything queued before it, is done: the wait for the GPU
    is the synchronize; the copy call's own host time is measured (`sync_wait`).
    `steps`: per step the GPU span, GPU-busy time and the GPU idle gap before it.
    Introduced in notebook 06_eos_sync_profile.
    """

    def __init__(self, trace: dict):
        events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
        t0 = min((e["ts"] for e in events), default=0.0)
        ranges = [
            {
                "name": _host_lane(e["name"]) if e.get("cat") == "cuda_runtime" else e["name"],
                "start": e["ts"] - t0,
                "end": e["ts"] - t0 + e["dur"],
            }
            for e in events
            if e.get("cat") == "user_annotation" or (e.get("cat") == "cuda_runtime" and _host_lane(e["name"]))
        ]
        self.ranges = pd.DataFrame(ranges, columns=["name", "start", "end"]).sort_values("start", ignore_index=True)
        gpu = sorted((e for e in events if e.get("cat") in _GPU_CATEGORIES), key=lambda e: e["ts"])
        # launches through the driver API too (cuLaunchKernel: Triton's kernels, PyTorch's fused attention);
        # a kernel whose launch is not found would be dropped from its step
        runtime = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")]
        marks = sorted(e["ts"] for e in runtime if e["name"] == "cudaStreamQuery")
        launched = {e["args"]["correlation"]: e["ts"] for e in runtime if "correlation" in e.get("args", {})}
        kernels, step = [], 0
        for e in gpu:
            at = launched.get(e.get("args", {}).get("correlation"))
            if marks:  # the step whose marker precedes the launch; before the first marker: -1, dropped
                step = -1 if at is None else bisect.bisect_right(marks, at) - 1
            kernels.append(
                {
                    "name": e["name"],
                    "stream": e.get("args", {}).get("stream"),
                    "start": e["ts"] - t0,
                    "end": e["ts"] - t0 + e["dur"],
                    "step": step,
                    "launch": float("nan") if at is None else at - t0,
                }
            )
            if not marks and e.get("cat") == "gpu_memcpy" and "DtoH" in e["name"]:
                step += 1
        self.kernels = pd.DataFrame(kernels, columns=["name", "stream", "start", "end", "step", "launch"])
        self.marks = [m - t0 for m in marks]  # the host's start of each marked step
        if marks:  # every marked step ended before the window closed (it synchronizes first)
            self.kernels = self.kernels[self.kernels["step"] >= 0].reset_index(drop=True)
        else:  # activity after the last copy belongs to a step the window did not see end
            self.kernels = self.kernels[self.kernels["step"] < step].reset_index(drop=True)
        self.steps = self._per_step()

    def _per_step(self) -> pd.DataFrame:
        rows = []
        prev_end, prev_ends = None, []
        for step, k in self.kernels.groupby("step"):
            start, end = k["start"].min(), k["end"].max()
            row = {
                "step": int(step),
                "gpu_start_us": start,
                "gpu_end_us": end,
                "gpu_busy_us": union_length(k["start"], k["end"]),
                "idle_before_us": None if prev_end is None else max(0.0, start - prev_end),
                "kernels": len(k),
                "streams": k["stream"].nunique(),
            }
            for j in range(1, TAIL_OPS + 1):  # from the end of step i-1's j-th last operation (in launch order)
                row[f"from_op_{j}_us"] = start - prev_ends[-j] if prev_end is not None and j <= len(prev_ends) else None
            rows.append(row)
            prev_end, prev_ends = end, list(k.sort_values("start")["end"])
        return pd.DataFrame(rows)

    def summary(self, skip: int | None = None) -> dict:
        """Idle gap per step and idle fraction over the window; the first `skip` steps (default
        WINDOW_SKIP) are dropped because opening the profiler drained the GPU."""
        skip = WINDOW_SKIP if skip is None else skip
        steps = self.steps.iloc[skip:] if len(self.steps) else self.steps
        if steps.empty:
            return {"steps": 0}
        span = steps["gpu_end_us"].max() - steps["gpu_start_us"].min()
        k = self.kernels[self.kernels["step"].isin(steps["step"])]
        busy = union_length(k["start"], k["end"])
        gaps = pd.Series(_gaps(k["start"], k["end"]), dtype=float)
        return {
            "steps": len(steps),
            "idle_gap_median_us": float(steps["idle_before_us"].median()),
            "idle_gap_mean_us": float(steps["idle_before_us"].mean()),
            "gpu_busy_per_step_us": float(steps["gpu_busy_us"].median()),
            "step_period_us": float(span / len(steps)),
            "gpu_idle_fraction": float(1 - busy / span) if span > 0 else float("nan"),
            "kernels_per_step": float(steps["kernels"].median()),
            "streams": int(k["stream"].nunique()),
            "median_gap_over_20us": float(gaps[gaps > 20].median()) if (gaps > 20).any() else float("nan"),
            **{f"from_op_{j}_median_us": float(pd.to_numeric(steps[f"from_op_{j}_us"]).median())
               for j in range(1, TAIL_OPS + 1)},  # fmt: skip
            # the per-step values the medians above are over, so that a share of two of them can be given an
            # interval within the window (`tokgen.gaps.share_interval`, review rv19A S2)
            "idle_gap_steps_us": per_step_text(steps["idle_before_us"]),
            **{f"from_op_{j}_steps_us": per_step_text(steps[f"from_op_{j}_us"]) for j in range(1, TAIL_OPS + 1)},
        }


def per_step_text(values) -> str:
    """Per-step values (µs) as `Timeline.summary` records them in one column: ";"-joined, two decimals, the steps
    where it was not measured (NaN, None) left out (notebook 06_eos_sync_profile; `per_step_values` reads them)."""
    return ";".join(f"{float(v):.2f}" for v in pd.to_numeric(pd.Series(values, dtype=object)).dropna())


def per_step_values(text) -> list[float] | None:
    """`per_step_text`'s values back as floats; None where the column is missing or empty (a table recorded before
    it: NaN), so that no interval is made up for it; a number (one step's value, which `read_csv` parses as a float:
    review rr20g N5) as its one value (notebook 06_eos_sync_profile)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return [float(text)] if math.isfinite(text) else None
    if not isinstance(text, str) or not text.strip():
        return None
    return [float(x) for x in text.split(";")]


def _gaps(starts, ends) -> list:
    """Idle intervals between consecutive busy periods of the GPU (all streams together)."""
    gaps, cur_end = [], None
    for a, b in sorted(zip(starts, ends)):
        if cur_end is not None and a > cur_end:
            gaps.append(a - cur_end)
        cur_end = b if cur_end is None else max(cur_end, b)
    return gaps


def union_length(starts, ends) -> float:
    """Time covered by at least one interval: the span minus the gaps (notebook 01_naive: the GPU busy time)."""
    return max(ends) - min(starts) - sum(_gaps(starts, ends)) if len(starts) else 0.0


def gpu_busy_ms(run) -> float:
    """Milliseconds in which the GPU ran at least one kernel, copy or memset during one call of
    `run()`, from CUPTI (overlaps on several streams counted once). Beside the wall time it says
    whether a run is host-bound (the GPU mostly idle) or GPU-bound (notebook 01_naive). NaN where the
    session recorded no GPU activity at all (a session lost to CUPTI's teardown, `settle_profiler`):
    a gap in the table, never 0 ms busy read as host-bound."""
    require_cuda("measuring GPU busy time")
    synchronize()
    with _no_cycle_warning(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run()
        synchronize()
    settle_profiler("cuda")
    spans = [
        (e.start_ns(), e.start_ns() + e.duration_ns())
        for e in prof.profiler.kineto_results.events()
        if e.device_type() == torch.autograd.DeviceType.CUDA
    ]
    if not spans:
        return float("nan")
    return union_length([a for a, _ in spans], [b for _, b in spans]) / 1e6


# What torch's sync-debug mode says at each synchronizing operation (c10/cuda/CUDAFunctions.cpp). The first
# set_sync_debug_mode("warn") of a process also warns that the mode "does not yet detect all synchronizing
# operations": a notice, not a sync, so the count matches this text only.
SYNC_WARNING = "called a synchronizing CUDA operation"


class LostSession(RuntimeError):
    """A torch.profiler session that recorded no CUDA runtime call (CUPTI's teardown, pytorch/kineto#1554;
    notebook 11_sync_audit)."""


def count_syncs(run) -> dict:
    """Host-device syncs made by `run()`, counted two ways (notebook 11_sync_audit).

    `sync_debug_warnings`: torch.cuda.set_sync_debug_mode("warn") warnings of a synchronizing operation
    (.item(), blocking copies...; `SYNC_WARNING`).
    `local_scalar_dense`: aten::_local_scalar_dense calls in torch.profiler (what `.item()` runs).
    `stream_syncs` / `event_syncs` / `device_syncs`: the CUDA runtime's blocking waits, which also
    catch waits that do not read a value (an event the host waits on).
    """
    require_cuda("counting host-device syncs")
    synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            run()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    debug = sum(SYNC_WARNING in str(w.message) for w in caught)
    names, own = _runtime_calls(run), _runtime_calls(lambda: None)  # the profiler's own waits, to subtract
    for session, calls in (("the run's", names), ("the reference (empty)", own)):
        if not any(name.startswith("cuda") for name in calls):  # each ends in a synchronize: never empty
            raise LostSession(
                f"count_syncs: the profiler recorded no CUDA runtime call in {session} session (a session lost "
                "to CUPTI's teardown, pytorch/kineto#1554); the counts would be wrong"
            )
    return {
        "sync_debug_warnings": debug,
        "local_scalar_dense": names["aten::_local_scalar_dense"],
        "stream_syncs": names["cudaStreamSynchronize"],
        "event_syncs": names["cudaEventSynchronize"],
        "device_syncs": max(0, names["cudaDeviceSynchronize"] - own["cudaDeviceSynchronize"]),
    }


SYNC_KINDS = ("sync_debug_warnings", "local_scalar_dense", "stream_syncs", "event_syncs", "device_syncs")


NOT_COUNTED = "not counted: the profiler lost its session"  # `counted` of a row whose session was lost


def counted_syncs(run) -> dict:
    """`count_syncs(run)` with `counted` "yes"; where the profiler lost its session (`LostSession`) every
    count NaN and `counted` NOT_COUNTED, so that one lost session costs one row, not the notebook's other
    results (notebook 11_sync_audit)."""
    try:
        counts = count_syncs(run)
    except LostSession:
        return {**dict.fromkeys(SYNC_KINDS, float("nan")), "counted": NOT_COUNTED}
    return {**counts, "counted": "yes"}


def syncs_per_step(run, steps: int) -> dict:
    """`counted_syncs(run)` per decode step: every count over `steps`, NaN where the profiler lost its
    session (`counted` says so) (notebook 14_deferred_stop)."""
    counts = counted_syncs(run)
    return {**{k: counts[k] / steps for k in SYNC_KINDS}, "counted": counts["counted"]}


def _runtime_calls(run) -> Counter:
    """Operator and CUDA runtime calls made while `run()` runs under torch.profiler, by name."""
    synchronize()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with _no_cycle_warning(), torch.profiler.profile(activities=activities) as prof:
        run()
        synchronize()
    settle_profiler("cuda")
    return Counter(e.name for e in prof.events())



# --- the sentences of notebook 11's solution (its exercises' counts, its first sync, its micro model) ---

SYNC_WORDS = {"local_scalar_dense": "`.item()` reads", "stream_syncs": "stream syncs"}


def _versions(df: pd.DataFrame) -> str:
    return ", ".join(dict.fromkeys(df["transformers"].astype(str))) if "transformers" in df else "version not recorded"


def audit_reads_text(audit: pd.DataFrame, generators) -> str:
    """ "Notebook 11's audit (transformers 5.1.0), `.item()` reads per decode step: `generate() dynamic` 3.094,
    `generate() static` 2.125, `kv_static` 1.000." from its rows (`11_sync_audit`), with the three decimals
    notebook 11 prints (notebook 11_sync_audit's solution, exercise 1)."""
    reads = audit.set_index("generator")["local_scalar_dense_per_token"]
    said = ", ".join(f"`{g}` {reads[g]:.3f}" if reads[g] == reads[g] else f"`{g}` not counted (a lost profiler "
                     "session)" for g in generators if g in reads.index)  # fmt: skip
    return f"Notebook 11's audit (transformers {_versions(audit)}), `.item()` reads per decode step: {said}."


def _change(before: float, after: float, steps: tuple[float, float]) -> str:
    """ "99 → 67 (1.000 fewer per decode step)" where both counts are over the same decode steps (`steps`),
    else per step: "3.094 → 2.094 per decode step (1.000 fewer)"."""
    per_step = round(after / steps[1] - before / steps[0], 3)
    moved = "the same" if per_step == 0 else f"{abs(per_step):.3f} {'fewer' if per_step < 0 else 'more'}"
    if steps[0] == steps[1]:
        return f"{before:.0f} → {after:.0f} ({moved}{'' if per_step == 0 else ' per decode step'})"
    return f"{before / steps[0]:.3f} → {after / steps[1]:.3f} per decode step ({moved})"


def sync_change_text(before: pd.DataFrame, after: pd.DataFrame, kinds=tuple(SYNC_WORDS)) -> str:
    """Each generator's change in counts between two audits (`before`: notebook 11's rows, `after`: the same
    counts in this environment; columns generator, tokens, the `count_syncs` kinds, transformers): the totals
    where both ran the same decode steps, else per step, and each change per decode step. The audit counts
    calls; it does not isolate what in transformers moved them, so the sentence names no cause
    (notebook 11_sync_audit's solution, exercise 1)."""
    old, new = before.set_index("generator"), after.set_index("generator")
    common = [g for g in new.index if g in old.index]
    if not common:
        return "No generator counted here is in notebook 11's audit: nothing to set beside it."
    parts = []
    for g in common:
        steps = (float(old.at[g, "tokens"]), float(new.at[g, "tokens"]))
        if any(pd.isna(old.at[g, k]) or pd.isna(new.at[g, k]) for k in kinds):  # a lost profiler session's row
            parts.append(f"`{g}`: not counted in one of the two (the profiler lost its session)")
            continue
        said = [f"{SYNC_WORDS.get(k, k)} {_change(float(old.at[g, k]), float(new.at[g, k]), steps)}" for k in kinds]
        parts.append(f"`{g}`: {', '.join(said)}")
    steps = {float(t) for t in (*old.loc[common, "tokens"], *new.loc[common, "tokens"])}
    over = f", over {steps.pop():.0f} decode steps each" if len(steps) == 1 else ""
    same = _versions(before) == _versions(after)
    why = ("both ran the same transformers, so a change here is the runs', not a version's" if same else
           "the audit counts these calls; it does not isolate which change between the two versions moved them")
    return (f"From notebook 11's audit (transformers {_versions(before)}) to this run (transformers "
            f"{_versions(after)}){over}: {'; '.join(parts)}. {why[0].upper()}{why[1:]}.")  # fmt: skip


def first_sync_text(where: str, line: int, code: str, functions: list, version: str, forward_calls: int) -> str:
    """Where `torch.cuda.set_sync_debug_mode("error")` first raised in `generate()`: the file and line (of
    transformers `version`: a line number is one version's), the transformers functions that led there
    (outermost first) and the statement; and when, from the model's forward passes counted until then
    (a forward pre-hook): none yet is a sync in `generate()`'s set-up, not in the decode loop (the hook shows
    when, not how often)
    (notebook 11_sync_audit's solution, exercise 2)."""
    chain = f", in {' → '.join(f'`{f}`' for f in functions)}" if functions else ""
    if forward_calls == 0:
        when = ("It came before the model's first forward pass: in `generate()`'s set-up, not in the decode "
                "loop.")  # fmt: skip
    elif forward_calls == 1:
        when = ("It came after the prefill's forward pass, before the first decode step's: this run stops at it, "
                "so whether it recurs every step is not shown.")  # fmt: skip
    else:
        when = (f"It came after {forward_calls} forward passes (the prefill and {forward_calls - 1} decode steps): "
                "inside the decode loop; this run stops at it, so whether it recurs every step is not shown.")
    return (f"First sync (transformers {version}; the line number is that version's): `{where}`, line {line}{chain}: "
            f"`{code}`. {when}")


DEVICE_WORDS = {"cuda": "the GPU", "cpu": "the CPU"}


def micro_k_text(config, device: str, gain: dict) -> str:
    """ "Micro model: 1 layer, hidden 16, on the GPU: K = 16 against K = 1, round by round, ×1.24 (…)." from
    the micro model's config and the paired comparison (`tokgen.stats.gain`, K = 1 the base)
    (notebook 11_sync_audit's solution, exercise 3)."""
    return (f"Micro model: {config.n_layer} layer{'s' if config.n_layer != 1 else ''}, hidden {config.n_embd}, on "
            f"{DEVICE_WORDS.get(device, device)}: K = 16 against K = 1, round by round, {speedup_text(gain)}.")

# --- kernel tables of a profiled window (notebook 10_cuda_graphs) ---

MATMUL = "matrix products (cuBLAS)"
OUR_PRODUCTS = "matrix products, with what is folded into them (ours, Triton)"
OUR_ATTENTION = "attention over the filled slots (ours, Triton)"
OUR_OTHER = "other kernels of ours (Triton)"
INDUCTOR = "fused elementwise / reductions (inductor)"
COPIES = "copies and memsets"
OTHER = "other torch kernels"
PRODUCT_KINDS = (MATMUL, OUR_PRODUCTS)  # the kinds that read the weight matrices
_CUBLAS = ("gemm", "gemv", "cutlass", "xmma", "sm90_", "sm80_", "cublas", "splitk")


def profile_decode(run, *, start: int, stop: int, steps_per_call: int = 1) -> tuple["Timeline", int]:
    """`profile_steps` of `run(on_step)` (GPU activity only), and the decode steps its window
    recorded: the `on_step` calls at steps in [start, stop), times `steps_per_call` (K for a graph
    decoder, which calls on_step once per replay of K steps). Counted from the calls, not from the
    timeline's stop-flag copies, which also split off what a generator does after its loop (a
    final copy to find the stop). Notebook 10_cuda_graphs."""
    calls = []

    def counted(on_step):
        def hook(step: int) -> None:
            calls.append(step)
            on_step(step)

        return run(hook)

    timeline = profile_steps(counted, start=start, stop=stop)
    return timeline, steps_per_call * sum(start <= step < stop for step in calls)


# `Timeline.summary`'s per-"step" columns that notebook 10 records per replay (review rv21B N9): its graph decoders
# call on_step once per replay of K decode steps, so its summary's "steps" are replays
PER_REPLAY = {"gpu_busy_per_step_us": "gpu_busy_per_replay_us", "kernels_per_step": "kernels_per_replay"}


def replay_summary(summary: dict) -> dict:
    """`Timeline.summary` of a decoder profiled with one `on_step` call per replay of K decode steps
    (`profile_decode`), as notebook 10_cuda_graphs records it: the GPU's busy time and its operations per "step"
    are per replay, so named (`PER_REPLAY`), beside the notebook's per-decode-step columns (`*_per_token`).
    Notebook 06's profile keeps `Timeline.summary`'s names."""
    return {PER_REPLAY.get(k, k): v for k, v in summary.items()}


def replay_columns(table: pd.DataFrame) -> pd.DataFrame:
    """Notebook 10_cuda_graphs' idle table with `replay_summary`'s names, also where it was recorded before them
    (data/10_cuda_graphs_idle.csv up to the re-run after review rv21B N9: the fallback goes after that re-run)."""
    return table.rename(columns={old: new for old, new in PER_REPLAY.items() if new not in table})


@functools.cache
def our_kernel_names() -> frozenset:
    """The names of the Triton kernels in tokgen.kernels, read from its source, so that a kernel
    added there is recognised without a list to update (notebook 10_cuda_graphs)."""
    return frozenset(re.findall(r"^\s*def (_\w+_kernel)\(", inspect.getsource(_kernels), re.M))


def _without_arguments(text: str) -> str:
    """`text` up to its first "(" outside template brackets: a function's name without its parameters."""
    depth = 0
    for i, c in enumerate(text):
        if c == "(" and depth == 0:
            return text[:i]
        depth = max(0, depth + (c == "<") - (c == ">"))
    return text


def _top_level_args(inner: str) -> list[str]:
    args, depth, current = [], 0, ""
    for c in inner:
        depth += (c in "<([") - (c in ">)]")
        if c == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += c
    return [*args, current.strip()] if current.strip() else args


def _collapse(text: str, keep: int) -> str:
    """Template arguments nested deeper than `keep` levels become "…"."""
    out, depth = "", 0
    for c in text:
        if c == "<":
            depth += 1
            out += "<" if depth <= keep else "<…" if depth == keep + 1 else ""
        elif c == ">":
            out += ">" if depth <= keep + 1 else ""
            depth = max(0, depth - 1)
        elif depth <= keep:
            out += c
    return out


def short_kernel_name(name: str, width: int = 80) -> str:
    """A kernel's name for a table: no `void`, namespaces or argument list, template arguments
    nested more than two deep as "…", and at most `width` characters, cut between whole template
    arguments (an identifier longer than that is kept whole). Notebook 10_cuda_graphs."""
    text = name.strip().removeprefix("void ").replace("(anonymous namespace)::", "")
    text = _without_arguments(text).strip()
    text = re.sub(r"\b(?:[A-Za-z_]\w*::)+", "", text)
    text = re.sub(r">\s+>", ">>", _collapse(text, 2))
    while re.search(r">\s+>", text):
        text = re.sub(r">\s+>", ">>", text)
    if len(text) <= width or "<" not in text:
        return text
    head, inner = text.split("<", 1)
    kept = []
    for arg in _top_level_args(inner[:-1] if inner.endswith(">") else inner):
        if len(head) + len(", ".join([*kept, arg])) + 4 > width:
            break
        kept.append(arg)
    return f"{head}<{', '.join([*kept, '…'])}>"


def kernel_kind(name: str) -> str:
    """What a GPU kernel does, from its name: cuBLAS's matrix products, our Triton kernels (by the
    names in tokgen.kernels: a product is one that reads a weight matrix, "linear" in its name;
    `_add_norm_kernel` adds partial sums, bias and residual and normalizes, one program per row,
    and counts as another kernel of ours), inductor's fused kernels, copies, or other torch
    kernels (notebook 10_cuda_graphs)."""
    base, lower = short_kernel_name(name), name.lower()
    if base in our_kernel_names():
        if "attend" in base:
            return OUR_ATTENTION
        return OUR_PRODUCTS if "linear" in base else OUR_OTHER
    if any(marker in lower for marker in _CUBLAS):
        return MATMUL
    if "triton_" in lower:
        return INDUCTOR
    if "memcpy" in lower or "memset" in lower:
        return COPIES
    return OTHER


def own_times(starts, ends) -> list[float]:
    """Each interval's time after every interval that started before it had ended (notebook 10_cuda_graphs).
    With programmatic dependent launch a kernel starts while the one before still
    runs and waits on the GPU for its inputs: its duration overlaps the one before, its own time
    does not. The own times add up to the time the GPU was busy (`union_length`)."""
    order = sorted(range(len(starts)), key=lambda i: (starts[i], ends[i]))
    own, covered = [0.0] * len(order), None
    for i in order:
        a, b = starts[i], ends[i]
        own[i] = max(0.0, b - (a if covered is None else max(a, covered)))
        covered = b if covered is None else max(covered, b)
    return own


def kernel_table(timeline: "Timeline", tokens: int, by: str = "kind", top: int | None = None) -> pd.DataFrame:
    """GPU time of a profiled window per generated token (notebook 10_cuda_graphs), grouped `by`
    "kind" (`kernel_kind`) or "name" (`short_kernel_name`), most own time first, the first `top` rows.
    Columns: kernels_per_token; us_per_token, the kernels' durations added up;
    own_us_per_token, their own time (`own_times`): the rows add up to the GPU's busy time per
    token; share, of that busy time; products, whether the kind reads the weight matrices."""
    if tokens <= 0:
        raise ValueError(f"tokens must be positive, got {tokens}: did the window record any step?")
    k = timeline.kernels
    frame = pd.DataFrame(
        {
            "name": k["name"].map(short_kernel_name),
            "kind": k["name"].map(kernel_kind),
            "us": k["end"] - k["start"],
            "own": own_times(list(k["start"]), list(k["end"])),
        }
    )
    out = frame.groupby(by).agg(count=("us", "size"), us=("us", "sum"), own=("own", "sum")).reset_index()
    out = pd.DataFrame(
        {
            by: out[by],
            "kernels_per_token": out["count"] / tokens,
            "us_per_token": out["us"] / tokens,
            "own_us_per_token": out["own"] / tokens,
            "share": out["own"] / max(frame["own"].sum(), 1e-12),
        }
    )
    if by == "kind":
        out["products"] = out["kind"].isin(PRODUCT_KINDS)
    return out.sort_values("own_us_per_token", ascending=False, ignore_index=True).head(top)


# --- what the host waits for at a step boundary, and the phases of the gap (notebook 06_eos_sync_profile) ---


def _in_step(times, marks: list, j: int):
    """Which of `times` fall in marked step j: from its marker up to the next one."""
    end = marks[j + 1] if j + 1 < len(marks) else float("inf")
    return (times >= marks[j]) & (times < end)


def sync_wait(timeline: "Timeline", skip: int | None = None) -> pd.DataFrame:
    """Per marked step with a stop-flag copy (its first copy call that queued a device-to-host copy; after
    the first `skip` steps, default WINDOW_SKIP), what the host waited for (notebook 06_eos_sync_profile):
    `queued_us`, the GPU work launched before the copy call still unfinished when the host issued it (0:
    the GPU had finished); `late_us`, the copy call's start less the end of that work (positive: the host
    issued the copy after the GPU had finished); `sync_us`, how long the `*Synchronize` call after the copy
    lasted (NaN where none followed in the step); `copy_us`, how long the copy call lasted; `copy_done_us`,
    when the copy itself finished on the GPU, counted from the synchronize's start (0 or less: done before
    the sync began), and `after_copy_us`, how long the synchronize went on after that (NaN where no sync
    followed). Empty for a timeline without step markers or device-to-host copies."""
    skip = WINDOW_SKIP if skip is None else skip
    columns = ["step", "queued_us", "late_us", "sync_us", "copy_us", "copy_done_us", "after_copy_us"]
    r, k, marks = timeline.ranges, timeline.kernels, timeline.marks
    copies, syncs = r[r["name"] == "copy call"], r[r["name"] == "sync wait"]
    rows = []
    dtoh = k[k["name"].str.contains("DtoH")]  # device-to-host copies: the stop flag's among them
    for j in range(skip, len(marks)):
        copy = copies[_in_step(copies["start"], marks, j)]
        # the step's first copy call that queued a device-to-host copy (not one that copies the other way)
        flags = [(c, dtoh[dtoh["launch"].between(c["start"], c["end"])]) for _, c in copy.iterrows()]
        flags = [(c, f) for c, f in flags if len(f)]
        if not flags:
            continue
        c, flag = flags[0]
        sync = syncs[_in_step(syncs["start"], marks, j) & (syncs["start"] >= c["start"])]
        before = k[k["launch"] < c["start"]]
        if before.empty:
            continue
        done = before["end"].max()
        nan = float("nan")
        s0, s1 = (sync["start"].iloc[0], sync["end"].iloc[0]) if len(sync) else (nan, nan)
        copied = flag["end"].max()
        rows.append({"step": j, "queued_us": max(0.0, done - c["start"]), "late_us": c["start"] - done,
                     "sync_us": s1 - s0, "copy_us": c["end"] - c["start"], "copy_done_us": copied - s0,
                     "after_copy_us": s1 - max(copied, s0)})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


SYNC_WAIT_COLUMNS = ("sync_steps", "sync_us", "sync_queued_us", "sync_queued_steps", "sync_idle_steps",
                     "sync_late_us", "copy_call_us", "copy_done_us", "after_copy_us")  # fmt: skip


def sync_wait_row(waits: pd.DataFrame) -> dict:
    """`sync_wait`'s table as the columns notebook 06_eos_sync_profile records per generator and window, so
    that its sentences are read back from data/ (`tokgen.gaps.sync_wait_text`): over the steps whose copy was
    followed by a sync, their number (`sync_steps`, 0 where none: every other column NaN), the medians of
    `sync_us`, of `queued_us` (`sync_queued_us`), of `late_us` (`sync_late_us`) and of `copy_us`
    (`copy_call_us`), the steps with queued work left (`sync_queued_steps`) and with none
    (`sync_idle_steps`), and over those of them where the copy's end was recorded the medians of
    `copy_done_us` and `after_copy_us`."""
    w = waits.dropna(subset=["sync_us"]) if len(waits) else waits
    nan = float("nan")
    if w.empty:
        return {**dict.fromkeys(SYNC_WAIT_COLUMNS, nan), "sync_steps": 0}
    timed = w.dropna(subset=["copy_done_us", "after_copy_us"])
    return {"sync_steps": len(w), "sync_us": float(w["sync_us"].median()),
            "sync_queued_us": float(w["queued_us"].median()), "sync_queued_steps": int((w["queued_us"] > 0).sum()),
            "sync_idle_steps": int((w["queued_us"] == 0).sum()), "sync_late_us": float(w["late_us"].median()),
            "copy_call_us": float(w["copy_us"].median()),
            "copy_done_us": float(timed["copy_done_us"].median()) if len(timed) else nan,
            "after_copy_us": float(timed["after_copy_us"].median()) if len(timed) else nan}  # fmt: skip


CHECK_PHASE = "check_us"
PHASES = {
    CHECK_PHASE: "after the model's forward (its last GPU operation of step i−1 ends) → step i−1's last GPU "
    "operation ends: the token's choice (argmax) and append and, with a stop check, its kernels and the flag's copy",
    "host_us": "the GPU's last operation of step i−1 → the host starts step i",
    "forward_us": "step i starts → its model forward starts",
    "launch_us": "model forward starts → the first launch of step i",
    "start_us": "that launch → the operation starts on the GPU",
}  # the phases from the end of step i−1's model forward on the GPU to step i's first operation (`boundary_phases`)


def boundary_phases(timeline: "Timeline", skip: int | None = None) -> pd.DataFrame:
    """Per step boundary (the steps after the first `skip`, default WINDOW_SKIP), the time from a point every
    generator shares, the end of the last GPU operation of step i−1 launched inside its "model forward" range
    (the forward's end on the GPU), to step i's first GPU operation, split into the measured phases of
    `PHASES` (notebook 06_eos_sync_profile): to the end of step i−1's last GPU operation (`check_us`: the
    token's argmax and append, and with a stop check its kernels and the flag's copy; NaN without "model forward"
    ranges), to the host's marker of step i (`host_us`), to the "model forward" range's start
    (`forward_us`), to the launch call of step i's first GPU operation (`launch_us`), to that operation's
    start (`start_us`). The last four add up to `gap_us`, the GPU's idle gap before step i as
    `Timeline.steps` measures it (from step i−1's last operation: for a synchronous generator the flag's
    copy); all five to `span_us` (`gap_us` where `check_us` is NaN). `sync_copy_us`: the host's time in copy
    and `*Synchronize` calls within the span, up to the marker; `gap_calls_us`: the part of it within the
    gap (the flag's copy call comes before the gap: the copy it queues ends the previous step); `check_busy_us`:
    the time within `check_us` in which the GPU ran at least one of step i−1's operations (the rest of that phase
    the GPU is idle, between the host's launches; the idle gap before step i starts only at its end). Without
    "model forward" ranges (a pass without CPU ranges) `forward_us` and `check_busy_us` are NaN too and
    `launch_us` runs from the marker."""
    skip = WINDOW_SKIP if skip is None else skip
    columns = ["step", "span_us", "gap_us", *PHASES, "sync_copy_us", "gap_calls_us", "check_busy_us"]
    r, k, marks = timeline.ranges, timeline.kernels, timeline.marks
    forwards = r[r["name"] == "model forward"]
    calls = r[r["name"].isin(["copy call", "sync wait"])]
    nan = float("nan")

    def calls_from(t: float, j: int) -> float:
        return float((calls["end"].clip(upper=marks[j]) - calls["start"].clip(lower=t)).clip(lower=0).sum())

    def busy_within(ops: pd.DataFrame, a: float, b: float) -> float:
        if a != a:
            return nan
        ops = ops[(ops["end"] > a) & (ops["start"] < b)]
        return float(union_length(ops["start"].clip(lower=a).tolist(), ops["end"].clip(upper=b).tolist()))

    rows = []
    for j in range(max(skip, 1), len(marks)):
        prev, now = k[k["step"] == j - 1], k[k["step"] == j]
        if prev.empty or now.empty:
            continue
        t0, first = prev["end"].max(), now.loc[now["start"].idxmin()]
        fwd = forwards[_in_step(forwards["start"], marks, j)]
        t2 = fwd["start"].min() if len(fwd) else nan
        before = forwards[_in_step(forwards["start"], marks, j - 1)]
        inside = [((before["start"] <= t) & (t <= before["end"])).any() for t in prev["launch"]]
        anchor = prev.loc[inside, "end"].max() if any(inside) else nan
        start = t0 if anchor != anchor else anchor
        rows.append({"step": j, "span_us": first["start"] - start, "gap_us": first["start"] - t0,
                     CHECK_PHASE: t0 - anchor, "host_us": marks[j] - t0, "forward_us": t2 - marks[j],
                     "launch_us": first["launch"] - (marks[j] if t2 != t2 else t2),
                     "start_us": first["start"] - first["launch"], "sync_copy_us": calls_from(start, j),
                     "gap_calls_us": calls_from(t0, j), "check_busy_us": busy_within(prev, anchor, t0)})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _total(phases: pd.DataFrame) -> str:
    """The column the phases add up to: `span_us` (from the model forward's end on the GPU) where measured."""
    return "span_us" if "span_us" in phases and phases["span_us"].notna().any() else "gap_us"


SHARE_COLUMNS = (*PHASES, "sync_copy_us", "gap_calls_us")  # `phase_shares`' keys, `boundary_row`'s phase_<key>_share


def phase_shares(phases: pd.DataFrame) -> dict:
    """Each phase's share of the boundaries' total time from the end of step i−1's model forward on the GPU to step
    i's first operation (`boundary_phases`' `span_us`; its idle gap `gap_us` where no forward
    range was recorded): the phases add up to each span, so their shares add up to 1; "sync_copy_us" the copy
    and sync calls' share, "gap_calls_us" the share of those calls that falls in the idle gap; empty where no
    boundary was measured (notebook 06_eos_sync_profile)."""
    total = phases[_total(phases)].sum() if len(phases) else 0.0
    if total <= 0:
        return {}
    measured = [c for c in SHARE_COLUMNS if c in phases and phases[c].notna().any()]
    return {c: float(phases[c].fillna(0).sum() / total) for c in measured}


def boundary_row(phases: pd.DataFrame) -> dict:
    """`boundary_phases`' medians as the columns notebook 06_eos_sync_profile records per generator and window
    from its pictures' pass: `picture_gap_us`, the idle gap before a step in that pass, and
    `picture_check_us`, the time from the model forward's end on the GPU to the end of step i−1's last GPU operation
    (`check_us`: the argmax, the append and, with a stop check, the check's kernels and the flag's copy, with the
    host's launches between them; it ends where the idle gap before step i begins); NaN where not measured. And every
    window's phase shares (`phase_shares`, as `phase_<key>_share`, NaN where not measured), so that notebook 06's
    answer on which part holds most of the time is read over every window, not one (review rv19A S3). And the
    medians `tokgen.gaps.phases_text` prints, so that its sentence is read from data/ (review rv23A S2): the
    boundaries' number (`picture_boundaries`), the median time from the forward's end on the GPU (`picture_span_us`)
    and each phase's median (`phase_<key>_median_us`, NaN where not measured)."""
    nan = float("nan")
    shares = phase_shares(phases)
    shares = {f"phase_{c}_share": shares.get(c, nan) for c in SHARE_COLUMNS}
    if phases.empty:
        medians = {f"phase_{c}_median_us": nan for c in PHASES}
        return {"picture_gap_us": nan, "picture_check_us": nan, "picture_span_us": nan, "picture_boundaries": 0,
                **medians, **shares}  # fmt: skip
    check = phases[CHECK_PHASE].dropna()
    medians = {f"phase_{c}_median_us": float(phases[c].median()) if c in phases else nan for c in PHASES}
    return {"picture_gap_us": float(phases["gap_us"].median()),
            "picture_check_us": float(check.median()) if len(check) else nan,
            "picture_span_us": float(phases["span_us"].median()) if "span_us" in phases else nan,
            "picture_boundaries": len(phases), **medians, **shares}  # fmt: skip
