"""Where the time goes: ranges, a profiled window of steps, GPU idle gaps, syncs per token.

Introduced in notebook 06_eos_sync_profile (ranges, timeline, gaps); notebook 11_sync_audit
counts host-device syncs. `python -m tokgen.profiling --help` runs the same window under
Nsight Systems for readers who have `nsys`.
"""

import argparse
import contextlib
import gzip
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import pandas as pd
import torch

try:
    import nvtx
except ImportError:  # nvtx is optional at run time: the torch.profiler ranges still work
    nvtx = None

_annotating = False
_step_hook = None


@contextlib.contextmanager
def annotations(enabled: bool = True):
    """Turn the generators' ranges on (they cost a few microseconds each, so they are off by default)."""
    global _annotating
    before, _annotating = _annotating, enabled
    try:
        yield
    finally:
        _annotating = before


def annotate(name: str):
    """A range seen by Nsight Systems (NVTX) and by torch.profiler (record_function) alike."""
    if not _annotating:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    if nvtx is not None:
        stack.enter_context(nvtx.annotate(name))
    stack.enter_context(torch.profiler.record_function(name))
    return stack


def mark_step(i: int) -> None:
    """Called by every generator at the top of step i; lets a profiler open and close a window."""
    if _step_hook is not None:
        _step_hook(i)


@contextlib.contextmanager
def step_window(start: int, stop: int, on_start, on_stop):
    """Call `on_start()` at the first step >= `start`, `on_stop()` at the first step >= `stop`
    (or when the run ends first). Generators that mark every K-th step still open the window."""
    global _step_hook
    state = {"open": False, "done": False}

    def hook(i):
        if i >= start and not state["open"] and not state["done"]:
            on_start()
            state["open"] = True
        elif i >= stop and state["open"]:
            on_stop()
            state["open"], state["done"] = False, True

    _step_hook = hook
    try:
        yield
    finally:
        _step_hook = None
        if state["open"]:
            on_stop()


def profile_steps(
    run, *, start: int = 30, stop: int = 50, cpu: bool = False, trace_path: str | Path | None = None
) -> "Timeline":
    """Run `run()` once, recording steps [start, stop) with torch.profiler (CUPTI).

    Like the article's nsys capture of steps 30-50, but readable from Python. With `cpu=False`
    only GPU activity is recorded: recording every operator on the CPU as well slows the CPU
    down several-fold and would inflate the very gaps we measure. `cpu=True` adds the CPU
    ranges (for pictures and Perfetto). The Chrome/Perfetto trace (ranges, kernels, CUDA API
    calls) is written gzip-compressed to `trace_path` when given.
    """
    activities = [torch.profiler.ProfilerActivity.CPU] if cpu or not torch.cuda.is_available() else []
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    prof = torch.profiler.profile(activities=activities)

    def begin():
        _synchronize()
        prof.start()

    def end():
        _synchronize()
        prof.stop()

    with annotations(cpu), step_window(start, stop, begin, end):
        run()
    raw = Path(os.environ.get("TMPDIR", "/tmp")) / f"tokgen_trace_{os.getpid()}.json"
    prof.export_chrome_trace(str(raw))
    trace = json.loads(raw.read_text())
    raw.unlink()
    if trace_path is not None:  # without the per-operator CPU events: a tenth of the size
        trace_path = Path(trace_path)
        trace_path.parent.mkdir(parents=True, exist_ok=True)
        kept = [e for e in trace.get("traceEvents", []) if e.get("cat") != "cpu_op"]
        with gzip.open(trace_path, "wt") as f:
            json.dump({**trace, "traceEvents": kept}, f)
    return Timeline(trace)


def _synchronize():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


_GPU_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}


class Timeline:
    """GPU activity and CPU ranges of a profiled window, in microseconds since the window opened.

    Every generator here ends a step (a graph replay for the graph decoders) by copying its stop
    flag to the host, so the device-to-host copies split the GPU timeline into steps: step j of
    the window is everything after copy j-1 up to and including copy j.

    `kernels`: name, stream, start, end, step (kernels, memcpys and memsets).
    `ranges`: CPU record_function ranges (name, start, end), when recorded.
    `steps`: per step the GPU span, GPU-busy time and the GPU idle gap before it.
    """

    def __init__(self, trace: dict):
        events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
        t0 = min((e["ts"] for e in events), default=0.0)
        ranges = [
            {"name": e["name"], "start": e["ts"] - t0, "end": e["ts"] - t0 + e["dur"]}
            for e in events
            if e.get("cat") == "user_annotation"
        ]
        self.ranges = pd.DataFrame(ranges, columns=["name", "start", "end"]).sort_values("start", ignore_index=True)
        gpu = sorted((e for e in events if e.get("cat") in _GPU_CATEGORIES), key=lambda e: e["ts"])
        kernels, step = [], 0
        for e in gpu:
            kernels.append(
                {
                    "name": e["name"],
                    "stream": e.get("args", {}).get("stream"),
                    "start": e["ts"] - t0,
                    "end": e["ts"] - t0 + e["dur"],
                    "step": step,
                }
            )
            if e.get("cat") == "gpu_memcpy" and "DtoH" in e["name"]:
                step += 1
        self.kernels = pd.DataFrame(kernels, columns=["name", "stream", "start", "end", "step"])
        # activity after the last copy belongs to a step the window did not see end
        self.kernels = self.kernels[self.kernels["step"] < step].reset_index(drop=True)
        self.steps = self._per_step()

    def _per_step(self) -> pd.DataFrame:
        rows = []
        prev_end = None
        for step, k in self.kernels.groupby("step"):
            start, end = k["start"].min(), k["end"].max()
            rows.append(
                {
                    "step": int(step),
                    "gpu_start_us": start,
                    "gpu_end_us": end,
                    "gpu_busy_us": _union_length(k["start"], k["end"]),
                    "idle_before_us": None if prev_end is None else max(0.0, start - prev_end),
                    "kernels": len(k),
                    "streams": k["stream"].nunique(),
                }
            )
            prev_end = end
        return pd.DataFrame(rows)

    def summary(self, skip: int = 2) -> dict:
        """Idle gap per step and idle fraction over the window; the first `skip` steps are dropped
        because opening the profiler drained the GPU."""
        steps = self.steps.iloc[skip:] if len(self.steps) else self.steps
        if steps.empty:
            return {"steps": 0}
        span = steps["gpu_end_us"].max() - steps["gpu_start_us"].min()
        k = self.kernels[self.kernels["step"].isin(steps["step"])]
        busy = _union_length(k["start"], k["end"])
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
        }


def _union_length(starts, ends) -> float:
    total, cur_start, cur_end = 0.0, None, None
    for a, b in sorted(zip(starts, ends)):
        if cur_end is None or a > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = a, b
        else:
            cur_end = max(cur_end, b)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def _gaps(starts, ends) -> list:
    """Idle intervals between consecutive busy periods of the GPU (all streams together)."""
    gaps, cur_end = [], None
    for a, b in sorted(zip(starts, ends)):
        if cur_end is not None and a > cur_end:
            gaps.append(a - cur_end)
        cur_end = b if cur_end is None else max(cur_end, b)
    return gaps


def plot_timeline(timeline: Timeline, steps, ax=None, title: str = ""):
    """CPU ranges on top, one row of kernels per CUDA stream below, for a few steps (notebook 06).

    `steps` are window-relative step indices (see Timeline); CPU rows need a `cpu=True` profile.
    """
    import matplotlib.pyplot as plt

    steps = list(steps)
    k = timeline.kernels[timeline.kernels["step"].isin(steps)]
    if k.empty:
        raise ValueError(f"no kernels recorded for steps {steps}")
    t0, t1 = k["start"].min(), k["end"].max()
    r = timeline.ranges
    r = r[(r["end"] >= t0 - 50) & (r["start"] <= t1)]
    lanes = [("step", "C0"), ("model forward", "C2"), ("stop check", "C3")]
    streams = sorted(k["stream"].dropna().unique())
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 1.0 + 0.5 * (len(lanes) + len(streams))))
    y = 0
    labels = []
    for lane, color in lanes:
        rows = r[r["name"].str.startswith(lane)]
        ax.broken_barh(list(zip(rows["start"] - t0, rows["end"] - rows["start"])), (y, 0.8), color=color, alpha=0.7)
        labels.append(f"CPU: {lane}")
        y -= 1
    for stream in streams:
        s = k[k["stream"] == stream]
        ax.broken_barh(list(zip(s["start"] - t0, s["end"] - s["start"])), (y, 0.8), color="C1")
        labels.append(f"GPU stream {int(stream)}")
        y -= 1
    ax.set_yticks([-i + 0.4 for i in range(len(labels))], labels)
    ax.set_xlabel("time since the first kernel shown (µs)")
    ax.set_title(title)
    return ax


def count_syncs(run) -> dict:
    """Host-device syncs made by `run()`, counted two ways (notebook 11_sync_audit).

    `sync_debug_warnings`: torch.cuda.set_sync_debug_mode("warn") warnings (.item(), blocking copies...).
    `local_scalar_dense`: aten::_local_scalar_dense calls in torch.profiler (what `.item()` runs).
    `stream_syncs` / `event_syncs` / `device_syncs`: the CUDA runtime's blocking waits, which also
    catch waits that do not read a value (an event the host waits on).
    """
    from .model import require_cuda

    require_cuda("counting host-device syncs")
    _synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            run()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    debug = sum("synchroniz" in str(w.message) for w in caught)
    _synchronize()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        run()
        _synchronize()
    names = Counter(e.name for e in prof.events())
    return {
        "sync_debug_warnings": debug,
        "local_scalar_dense": names["aten::_local_scalar_dense"],
        "stream_syncs": names["cudaStreamSynchronize"],
        "event_syncs": names["cudaEventSynchronize"],
        # the profiler's own closing synchronize is not the generator's
        "device_syncs": max(0, names["cudaDeviceSynchronize"] - 1),
    }


def main(argv=None) -> int:
    """Profile a window of steps under Nsight Systems: `python -m tokgen.profiling --generator kv_static`."""
    parser = argparse.ArgumentParser(prog="python -m tokgen.profiling", description=main.__doc__)
    parser.add_argument("--generator", default="kv_static")
    parser.add_argument("--size", default="gpt2", choices=["gpt2", "tiny"])
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-seqlen", type=int, default=100)
    parser.add_argument("--window", type=int, nargs=2, default=(30, 50), metavar=("START", "STOP"))
    parser.add_argument("--output", default="tokgen_nsys", help="report name given to nsys -o")
    args = parser.parse_args(argv)
    if os.environ.get("TOKGEN_UNDER_NSYS") != "1":
        nsys = shutil.which("nsys")
        if nsys is None:
            print("nsys (Nsight Systems) is not on PATH; use notebook 06's torch.profiler timeline instead.")
            return 2
        cmd = [nsys, "profile", "--capture-range=cudaProfilerApi", "--trace=cuda,nvtx,osrt", "-o", args.output]
        cmd += [sys.executable, "-m", "tokgen.profiling", *(argv if argv is not None else sys.argv[1:])]
        return subprocess.call(cmd, env={**os.environ, "TOKGEN_UNDER_NSYS": "1"})
    from .model import build_model, require_cuda
    from .registry import generate

    require_cuda("an Nsight Systems capture")
    model = build_model(args.size, "cuda")
    kwargs = {"batch_size": args.batch_size, "max_seqlen": args.max_seqlen}
    generate(args.generator, model, **kwargs)  # warm-up
    start, stop = args.window

    def begin():
        torch.cuda.synchronize()
        torch.cuda.profiler.start()

    def end():
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()

    with annotations(), step_window(start, stop, begin, end):
        generate(args.generator, model, **kwargs)
    torch.cuda.synchronize()
    print(f"wrote {args.output}.nsys-rep (steps {start}-{stop} of {args.generator})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
