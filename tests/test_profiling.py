"""Timeline arithmetic on a synthetic trace, the step window, ranges, the nsys entry point."""

import warnings

import pandas as pd
import pytest
import torch

import tokgen
from tokgen import profiling
from tokgen.profiling import Ranges, StepWindow, Timeline


def ev(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args}


TRACE = {
    "traceEvents": [
        ev("user_annotation", "step 0", 1000, 100),
        ev("cuda_runtime", "cudaLaunchKernel", 1010, 5, correlation=1),
        ev("cuda_runtime", "cudaStreamSynchronize", 1085, 60),
        ev("kernel", "gemm", 1050, 10, stream=7),
        ev("kernel", "triton_fused", 1060, 20, stream=7),
        ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 1080, 2, stream=7),  # ends step 0
        ev("kernel", "gemm", 1150, 30, stream=9),
        ev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 1185, 1, stream=9),  # not a step end
        ev("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 1190, 2, stream=9),  # ends step 1
        ev("kernel", "gemm", 1300, 5, stream=7),  # a step the window did not see end
        ev("cpu_op", "aten::mm", 1011, 2),
    ]
}


def test_device_to_host_copies_delimit_steps():
    tl = Timeline(TRACE)
    assert list(tl.kernels["step"]) == [0, 0, 0, 1, 1, 1]
    steps = tl.steps.set_index("step")
    assert steps.loc[0, "gpu_busy_us"] == 32 and steps.loc[1, "gpu_busy_us"] == 33
    assert steps.loc[1, "idle_before_us"] == 150 - 82
    s = tl.summary(skip=0)
    assert s["steps"] == 2 and s["streams"] == 2
    assert s["gpu_idle_fraction"] == pytest.approx(1 - 65 / 142)
    assert s["idle_gap_median_us"] == 68 and s["median_gap_over_20us"] == 68
    assert list(tl.ranges["name"]) == ["step 0", "sync wait"]


def launch(name, host_ts, gpu_ts, dur, correlation, cat="kernel"):
    """A kernel launched on the host at host_ts and run at gpu_ts, tied by CUPTI's correlation id."""
    return [ev("cuda_runtime", "cudaLaunchKernel", host_ts, 3, correlation=correlation),
            ev(cat, name, gpu_ts, dur, stream=7, correlation=correlation)]  # fmt: skip


def test_step_markers_split_a_generator_that_copies_nothing_to_the_host():
    """The no-check generator never copies a flag to the host: the host's step markers (one
    cudaStreamQuery per step) split its steps, each kernel in the step whose marker precedes its launch."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (100, 200, 300)]
    events += launch("early", 50, 60, 5, 1)  # launched before the window's first marker: dropped
    events += launch("a", 110, 120, 10, 2) + launch("b", 115, 140, 10, 3)  # step 0: busy 120-150
    events += launch("c", 210, 190, 20, 4)  # step 1, though it runs before the marker's time on the host
    events += launch("d", 305, 260, 10, 5) + launch("e", 320, 300, 5, 6)  # step 2: runs 260-305
    tl = Timeline({"traceEvents": events})
    assert list(tl.kernels.sort_values("start")["name"]) == ["a", "b", "c", "d", "e"]
    assert list(tl.kernels.sort_values("start")["step"]) == [0, 0, 1, 2, 2]
    steps = tl.steps.set_index("step")
    assert list(steps["kernels"]) == [2, 1, 2]
    assert steps.loc[1, "idle_before_us"] == 190 - 150 and steps.loc[2, "idle_before_us"] == 260 - 210
    assert tl.summary(skip=0)["idle_gap_median_us"] == 45  # the median of 40 and 50
    # the same kernels with a DtoH copy but no markers: the copy splits them, as before
    no_marks = [e for e in events if e["name"] != "cudaStreamQuery"]
    no_marks += launch("Memcpy DtoH (Device -> Pageable)", 330, 310, 2, 7, cat="gpu_memcpy")
    assert set(Timeline({"traceEvents": no_marks}).kernels["step"]) == {0}


def test_a_kernel_launched_through_the_driver_api_belongs_to_its_step():
    """PyTorch's fused attention and Triton launch with cuLaunchKernel (CUPTI's "cuda_driver"): such a
    kernel is tied to its step like a runtime launch, not dropped (a step's busy time lost its attention)."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (100, 200)]
    events += launch("gemm", 110, 120, 10, 1)
    events += [ev("cuda_driver", "cuLaunchKernel", 112, 3, correlation=2),
               ev("kernel", "fmha_cutlassF", 130, 40, stream=7, correlation=2)]  # fmt: skip
    events += launch("argmax", 210, 220, 5, 3)
    tl = Timeline({"traceEvents": events})
    assert list(tl.kernels["name"]) == ["gemm", "fmha_cutlassF", "argmax"]
    assert list(tl.kernels["step"]) == [0, 0, 1]
    assert tl.steps.set_index("step").loc[0, "gpu_busy_us"] == 50


def test_only_the_synchronize_calls_are_sync_waits_and_the_async_copy_call_has_its_own_lane():
    """`.item()` copies into a pinned buffer (cudaMemcpyAsync returns at once), then waits in
    cudaStreamSynchronize: only the *Synchronize calls and a synchronous cudaMemcpy are waits."""
    calls = [("cudaLaunchKernel", 0, 5), ("cudaMemcpyAsync", 10, 20), ("cudaStreamSynchronize", 30, 8),
             ("cudaEventSynchronize", 40, 3), ("cudaMemcpy", 50, 6), ("cudaEventRecord", 60, 1),
             ("cudaMemsetAsync", 70, 2), ("cudaStreamQuery", 80, 1)]  # fmt: skip
    ranges = Timeline({"traceEvents": [ev("cuda_runtime", *c) for c in calls]}).ranges
    assert list(ranges.itertuples(index=False, name=None)) == [
        ("copy call", 10, 30), ("sync wait", 30, 38), ("sync wait", 40, 43), ("sync wait", 50, 56)
    ]  # fmt: skip
    assert not profiling._waits("cudaMemcpyAsync") and profiling._waits("cudaDeviceSynchronize")


def test_an_empty_window_summarizes_to_nothing():
    assert Timeline({"traceEvents": []}).summary() == {"steps": 0}


def test_the_statistics_leave_out_the_first_steps_of_the_window_as_notebook_06_says():
    """Opening the profiler drains the GPU: the first WINDOW_SKIP steps are not counted (notebook 06
    prints the steps the statistics cover from this constant)."""
    assert profiling.WINDOW_SKIP == 2
    steps = [ev("kernel", "gemm", 1000 + 100 * i, 10, stream=7) for i in range(5)]
    ends = [ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 1012 + 100 * i, 2, stream=7) for i in range(5)]
    tl = Timeline({"traceEvents": steps + ends})
    assert len(tl.steps) == 5 and tl.summary()["steps"] == 5 - profiling.WINDOW_SKIP
    assert tl.summary(skip=0)["steps"] == 5


def test_union_and_gaps():
    assert profiling.union_length([0, 5, 20], [10, 12, 25]) == 17
    assert profiling._gaps([0, 5, 20], [10, 12, 25]) == [8]


def test_step_window_opens_once_and_closes_at_the_end():
    events = []
    window = StepWindow(4, 8, lambda: events.append("start"), lambda: events.append("stop"))
    for i in range(0, 20, 3):  # a generator marking every third step still opens it
        window(i)
        events.append(i)
    window.finish()
    assert events == [0, 3, "start", 6, "stop", 9, 12, 15, 18]
    events.clear()
    window = StepWindow(4, 100, lambda: events.append("start"), lambda: events.append("stop"))
    for i in range(6):
        window(i)
    window.finish()
    window.finish()
    assert events == ["start", "stop"]  # the run ended inside the window, closed once


def test_ranges_mark_steps_and_the_model_forward_and_leave_no_hooks(tiny):
    ranges = Ranges(tiny)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        tokgen.generate("kv_static", tiny, batch_size=1, max_seqlen=3, on_step=ranges)
        ranges.finish()
    names = [e.name for e in prof.events() if e.name.startswith(("step ", "model forward"))]
    assert sorted(set(names)) == ["model forward", "step 0", "step 1", "step 2"]
    assert names.count("model forward") == 3
    assert not tiny._forward_hooks and not tiny._forward_pre_hooks


def test_the_step_boundary_zoom_shades_every_gap_and_says_the_idle_share():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tokgen.display import plot_step_boundary

    _, ax = plt.subplots()
    plot_step_boundary(ax, Timeline(TRACE), 0, title="t:")
    # busy 50-82, 150-180, 185-186, 190-192 µs: 65 of 142 µs; gaps of 68, 5 and 4 µs
    assert ax.get_title() == f"t: GPU idle {77 / 142:.0%} of this zoom (shaded grey)"
    grey = matplotlib.colors.to_rgba("grey", 0.25)
    assert len([p for p in ax.patches if tuple(p.get_facecolor()) == grey]) == 3  # three shaded idle spans
    assert [t.get_text() for t in ax.texts] == ["68 µs", "5 µs"]  # gaps under 5 µs are shaded, not labelled
    plt.close("all")


def _lane_boxes(ax, color):
    """(x0, x1, y0) of each box drawn in `color` by broken_barh."""
    rgba = _mpl_colors().to_rgba(color)
    boxes = []
    for c in ax.collections:
        if len(c.get_paths()) and tuple(c.get_facecolor()[0][:3]) == rgba[:3]:
            boxes += [(p.vertices[:, 0].min(), p.vertices[:, 0].max(), p.vertices[:, 1].min()) for p in c.get_paths()]
    return boxes


def _mpl_colors():
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib.colors


def test_the_step_boundary_zoom_draws_the_copy_call_apart_from_the_sync_wait():
    import matplotlib.pyplot as plt

    from tokgen.display import plot_step_boundary

    calls = [ev("cuda_runtime", "cudaMemcpyAsync", 1070, 12), ev("cuda_runtime", "cudaStreamSynchronize", 1085, 60)]
    trace = {"traceEvents": [e for e in TRACE["traceEvents"] if e["name"] != "cudaStreamSynchronize"] + calls}
    _, ax = plt.subplots()
    plot_step_boundary(ax, Timeline(trace), 0)  # the zoom starts at 82 - 150 = -68 µs of the window
    assert _lane_boxes(ax, "C4") == [(70 + 68, 82 + 68, 1)]  # the copy call, lane 1
    assert _lane_boxes(ax, "C3") == [(85 + 68, 145 + 68, 2)]  # the wait, lane 2
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "GPU (all streams)", "CPU: copy call", "CPU: sync wait", "CPU: model forward", "CPU: step"
    ]  # fmt: skip
    plt.close("all")


def test_the_timeline_draws_the_copy_call_apart_from_the_sync_wait():
    import matplotlib.pyplot as plt

    from tokgen.display import plot_timeline

    calls = [ev("cuda_runtime", "cudaMemcpyAsync", 1070, 12), ev("cuda_runtime", "cudaStreamSynchronize", 1085, 60)]
    trace = {"traceEvents": [e for e in TRACE["traceEvents"] if e["name"] != "cudaStreamSynchronize"] + calls}
    ax = plot_timeline(Timeline(trace), [0, 1])  # time since the first kernel shown, at 50 µs of the window
    assert _lane_boxes(ax, "C4") == [(70 - 50, 82 - 50, -3)]  # the copy call, under the sync wait
    assert _lane_boxes(ax, "C3") == [(85 - 50, 145 - 50, -2)]
    assert [t.get_text() for t in ax.get_yticklabels()][:4] == [
        "CPU: step", "CPU: model forward", "CPU: sync wait", "CPU: copy call"
    ]  # fmt: skip
    plt.close("all")


def test_the_timeline_says_the_gpus_idle_share_and_draws_its_bars_without_edges():
    """rvA15 S3: steps 0 and 1 busy 1050-1082, 1150-1180, 1185-1186 and 1190-1192 µs, 65 of their 142: the GPU idle
    54% of them, in the title; kernel bars drawn with no edge line, so a short kernel is not drawn wider."""
    import matplotlib.pyplot as plt

    from tokgen.display import plot_timeline

    ax = plot_timeline(Timeline(TRACE), [0, 1], title="kv_static: steps 0–1")
    assert ax.get_title() == "kv_static: steps 0–1; GPU idle 54% of these steps (all streams)"
    gpu = [c for c in ax.collections if tuple(c.get_facecolor()[0][:3]) == _mpl_colors().to_rgba("C1")[:3]]
    assert len(gpu) == 2 and all(list(c.get_linewidth()) == [0.0] for c in gpu)  # streams 7 and 9
    assert plot_timeline(Timeline(TRACE), [0]).get_title() == f"GPU idle {1 - 32 / 32:.0%} of these steps (all streams)"
    plt.close("all")


def test_a_step_boundary_zoom_widened_to_a_shared_scale_shows_more_of_the_next_step():
    """Panels of one model share one x scale: `width_us` widens a narrower zoom to the right (more of the
    next step), and never cuts a wider one."""
    import matplotlib.pyplot as plt

    from tokgen.display import plot_step_boundary, step_boundary_zoom

    steps = [ev("kernel", "gemm", 100 * i, 10, stream=7) for i in range(4)]
    ends = [ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 12 + 100 * i, 2, stream=7) for i in range(4)]
    tl = Timeline({"traceEvents": steps + ends})
    assert step_boundary_zoom(tl, 0, margin_us=5) == (9, 105)  # step 0 ends at 14, step 1 starts at 100
    grey = _mpl_colors().to_rgba("grey", 0.25)
    for width, xlim, gaps in ((None, 96, 2), (50, 96, 2), (200, 200, 4)):
        _, ax = plt.subplots()
        plot_step_boundary(ax, tl, 0, margin_us=5, width_us=width)
        assert ax.get_xlim() == (0, xlim)
        # 0-10, 12-14, 100-110 shown: 2 gaps; the wide zoom adds step 1's copy (112-114) and step 2's kernel (200)
        assert len([p for p in ax.patches if tuple(p.get_facecolor()) == grey]) == gaps
        plt.close("all")


def test_only_the_profilers_cycle_warning_is_silenced():
    cycle = "Warning: Profiler clears events at the end of each cycle.Only events from the current cycle will be ..."
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with profiling._no_cycle_warning():
            warnings.warn(cycle, UserWarning, stacklevel=1)
            warnings.warn("another warning", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["another warning"]


# --- kernel tables (notebook 10) ---

ARGMAX = (
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, "
    "long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)"
)
PDL_TRACE = {
    "traceEvents": [
        ev("kernel", "_linear_kernel", 0, 10, stream=7),
        ev("kernel", "_add_norm_kernel", 5, 15, stream=7),  # launched early (PDL): waits 5 µs
        ev("kernel", "_attend_filled_kernel", 20, 4, stream=7),
        ev("kernel", "void cublasLt::splitKreduce_kernel<32, 16, int, float>(cublasLt::Params<float>, float*)", 24, 6),
        ev("kernel", ARGMAX, 30, 2),
        ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 40, 2, stream=7),
    ]
}


def test_kernel_kinds_and_short_names():
    for product in ("_linear_kernel", "_norm_linear_kernel", "_linear_residual_kernel"):  # they read a weight
        assert profiling.kernel_kind(product) == profiling.OUR_PRODUCTS, product
    for other in ("_add_norm_kernel", "_embed_kernel", "_finish_step_kernel"):  # they read no weight matrix
        assert profiling.kernel_kind(other) == profiling.OUR_OTHER, other
    assert profiling.kernel_kind("_attend_filled_kernel") == profiling.OUR_ATTENTION
    assert profiling.kernel_kind("triton_per_fused_add_addmm_native_layer_norm_12") == profiling.INDUCTOR
    assert profiling.kernel_kind("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32") == profiling.MATMUL
    assert profiling.kernel_kind("Memcpy DtoH (Device -> Pinned)") == profiling.COPIES
    assert {"_linear_kernel", "_add_norm_kernel", "_attend_filled_kernel"} <= profiling.our_kernel_names()
    short = "reduce_kernel<512, 1, ReduceOp<float, ArgMaxOps<…>, unsigned int, long, 4>>"
    assert profiling.short_kernel_name(ARGMAX) == short
    assert profiling.short_kernel_name("void at::native::(anonymous namespace)::f<float>(int, float*)") == "f<float>"
    long = "void k<" + ", ".join(f"Argument{i}" for i in range(20)) + ">(int)"
    short = profiling.short_kernel_name(long, width=40)
    assert len(short) <= 40 and short.endswith(", …>") and "Argument1," in short  # cut between whole arguments


def test_own_times_add_up_to_the_busy_time():
    starts, ends = [0, 5, 12, 11], [10, 20, 15, 30]
    own = profiling.own_times(starts, ends)
    assert own == [10, 10, 0, 10]
    assert sum(own) == profiling.union_length(starts, ends)


def test_kernel_table_per_token_with_overlapping_kernels():
    tl = Timeline(PDL_TRACE)
    kinds = tokgen.profiling.kernel_table(tl, tokens=2).set_index("kind")
    products, add_norm = kinds.loc[profiling.OUR_PRODUCTS], kinds.loc[profiling.OUR_OTHER]
    assert products["kernels_per_token"] == add_norm["kernels_per_token"] == 0.5  # 1 kernel each, 2 tokens
    assert products["us_per_token"] == products["own_us_per_token"] == 10 / 2
    assert add_norm["us_per_token"] == 15 / 2  # its duration, the PDL wait included
    assert add_norm["own_us_per_token"] == 10 / 2  # [10, 20): after the product before it ended
    busy = profiling.union_length(list(tl.kernels["start"]), list(tl.kernels["end"]))
    assert kinds["own_us_per_token"].sum() == pytest.approx(busy / 2)
    assert kinds["share"].sum() == pytest.approx(1.0)
    assert set(kinds.index[kinds["products"]]) == {profiling.OUR_PRODUCTS, profiling.MATMUL}
    top = tokgen.profiling.kernel_table(tl, tokens=2, by="name", top=2)
    assert len(top) == 2 and set(top["name"]) == {"_linear_kernel", "_add_norm_kernel"}  # the most own time
    with pytest.raises(ValueError, match="tokens must be positive"):
        tokgen.profiling.kernel_table(tl, tokens=0)


def test_profile_decode_counts_the_steps_inside_the_window(tiny):
    run = lambda on_step: tokgen.generate("graph_handwritten", tiny, batch_size=2, max_seqlen=12, steps_per_graph=4,
                                          on_step=on_step)  # fmt: skip
    timeline, tokens = profiling.profile_decode(run, start=3, stop=9, steps_per_call=4)
    assert tokens == 8  # the replays at steps 4 and 8, four tokens each


# --- CUPTI's teardown between sessions (pytorch/kineto#1554): settle_profiler, lost sessions ---


class FakeEvent:
    """One kineto event: a GPU span of `start_ns` + `duration_ns`, or a host event named `name`."""

    def __init__(self, name="k", start_ns=0, duration_ns=0, gpu=True):
        self.name, self._start, self._dur, self._gpu = name, start_ns, duration_ns, gpu

    def start_ns(self):
        return self._start

    def duration_ns(self):
        return self._dur

    def device_type(self):
        return torch.autograd.DeviceType.CUDA if self._gpu else torch.autograd.DeviceType.CPU


def fake_sessions(monkeypatch, log, sessions):
    """torch.profiler.profile as a context manager that logs its enter and exit and records, in turn,
    the events of each of `sessions`; CUDA and settle_profiler as loggers (a CPU machine)."""
    sessions = iter(sessions)

    class FakeProfile:
        def __init__(self, activities=None):
            self.events_ = next(sessions)
            self.profiler = type("P", (), {"kineto_results": type("K", (), {"events": lambda _: self.events_})()})()

        def __enter__(self):
            log.append("enter")
            return self

        def __exit__(self, *exc):
            log.append("exit")

        def events(self):
            return self.events_

    monkeypatch.setattr(profiling.torch.profiler, "profile", FakeProfile)
    monkeypatch.setattr(profiling, "require_cuda", lambda what: None)
    monkeypatch.setattr(profiling, "synchronize", lambda *a: None)
    monkeypatch.setattr(profiling, "settle_profiler", lambda device="cuda": log.append(("settle", str(device))))


def test_settle_profiler_waits_and_synchronizes_on_cuda_only(monkeypatch):
    log = []
    monkeypatch.setattr(profiling.time, "sleep", lambda s: log.append(("sleep", s)))
    monkeypatch.setattr(profiling.torch.cuda, "synchronize", lambda *a: log.append("synchronize"))
    profiling.settle_profiler("cpu")
    profiling.settle_profiler(torch.device("cpu"))
    assert log == []  # nothing on the CPU
    profiling.settle_profiler("cuda")
    profiling.settle_profiler(torch.device("cuda", 0))
    assert log == [("sleep", 0.02), "synchronize", ("sleep", 0.005)] * 2  # the finalize runs in the synchronize


def test_gpu_busy_ms_settles_after_its_session(monkeypatch):
    """Spans 0-1 ms and 0.5-2.5 ms overlap: 2.5 ms busy; a host event is not GPU time."""
    log = []
    spans = [FakeEvent(start_ns=0, duration_ns=1_000_000), FakeEvent(start_ns=500_000, duration_ns=2_000_000),
             FakeEvent(start_ns=0, duration_ns=9_000_000, gpu=False)]  # fmt: skip
    fake_sessions(monkeypatch, log, [spans])
    assert profiling.gpu_busy_ms(lambda: log.append("run")) == pytest.approx(2.5)
    assert log == ["enter", "run", "exit", ("settle", "cuda")]


def test_gpu_busy_ms_of_a_lost_session_is_nan(monkeypatch):
    """A session that recorded no GPU event (lost to CUPTI's teardown) is NaN, never 0 ms busy (read as
    host-bound)."""
    import math

    log = []
    fake_sessions(monkeypatch, log, [[], [FakeEvent(duration_ns=5, gpu=False)]])
    assert math.isnan(profiling.gpu_busy_ms(lambda: None))
    assert math.isnan(profiling.gpu_busy_ms(lambda: None))  # host events only: no GPU time recorded either
    assert log == ["enter", "exit", ("settle", "cuda")] * 2


def names(*calls):
    return [FakeEvent(name=n, gpu=False) for n in calls]


def test_count_syncs_settles_after_each_session_and_subtracts_the_profilers_own_wait(monkeypatch):
    """The run's session: one .item() (a _local_scalar_dense and its stream sync) and two device syncs,
    one of them the profiler's own (the reference session's one): 1 device sync."""
    log = []
    monkeypatch.setattr(profiling.torch.cuda, "set_sync_debug_mode", lambda mode: None)
    run = names("cudaLaunchKernel", "aten::_local_scalar_dense", "cudaStreamSynchronize", "cudaDeviceSynchronize",
                "cudaDeviceSynchronize")  # fmt: skip
    fake_sessions(monkeypatch, log, [run, names("cudaDeviceSynchronize")])
    counts = profiling.count_syncs(lambda: log.append("run"))
    assert counts == {"sync_debug_warnings": 0, "local_scalar_dense": 1, "stream_syncs": 1, "event_syncs": 0,
                      "device_syncs": 1}  # fmt: skip
    assert log == ["run", "enter", "run", "exit", ("settle", "cuda"), "enter", "exit", ("settle", "cuda")]


def test_count_syncs_counts_sync_warnings_not_the_debug_modes_first_notice(monkeypatch):
    """The first set_sync_debug_mode("warn") of a process warns that the mode "does not yet detect all
    synchronizing operations" (seen on the H100 at e8d594a: the first count of a process read one sync
    too many). Two counts of a run that makes one sync: 1 flagged sync each, the notice left out."""
    import warnings

    notices = ["Synchronization debug mode is a prototype feature and does not yet detect all synchronizing "
               "operations"]  # fmt: skip

    def set_mode(mode):
        if mode == "warn" and notices:
            warnings.warn(notices.pop(), stacklevel=2)

    monkeypatch.setattr(profiling.torch.cuda, "set_sync_debug_mode", set_mode)
    fake_sessions(monkeypatch, [], [names("cudaDeviceSynchronize")] * 4)

    def run():
        warnings.warn(profiling.SYNC_WARNING + " (Triggered internally at CUDAFunctions.cpp:162.)", stacklevel=2)

    counts = [profiling.count_syncs(run)["sync_debug_warnings"] for _ in range(2)]
    assert counts == [1, 1] and not notices


@pytest.mark.parametrize("lost", [0, 1])
def test_count_syncs_refuses_a_session_that_recorded_no_runtime_call(monkeypatch, lost):
    """Each session ends in a synchronize, so one without any CUDA runtime call was lost: had the
    reference session been lost, the profiler's own device sync would count as the run's."""
    monkeypatch.setattr(profiling.torch.cuda, "set_sync_debug_mode", lambda mode: None)
    sessions = [names("cudaLaunchKernel", "cudaDeviceSynchronize"), names("cudaDeviceSynchronize")]
    sessions[lost] = names("aten::empty")  # operators only: CUPTI recorded nothing
    fake_sessions(monkeypatch, [], sessions)
    which = "the run's" if lost == 0 else "the reference"
    with pytest.raises(RuntimeError, match=f"no CUDA runtime call in {which}.*kineto#1554"):
        profiling.count_syncs(lambda: None)


def test_syncs_per_step_divides_by_the_steps_and_a_lost_session_costs_only_its_row(monkeypatch):
    """One .item() and its stream sync in 4 steps: 0.25 each; a lost session (notebook 14 counts four
    variants, then times them): every count NaN and the row says it was not counted, no exception."""
    monkeypatch.setattr(profiling.torch.cuda, "set_sync_debug_mode", lambda mode: None)
    run = names("aten::_local_scalar_dense", "cudaStreamSynchronize", "cudaDeviceSynchronize")
    fake_sessions(monkeypatch, [], [run, names("cudaDeviceSynchronize")])
    assert profiling.syncs_per_step(lambda: None, 4) == {
        "sync_debug_warnings": 0.0, "local_scalar_dense": 0.25, "stream_syncs": 0.25, "event_syncs": 0.0,
        "device_syncs": 0.0, "counted": "yes"}  # fmt: skip
    fake_sessions(monkeypatch, [], [names("aten::empty"), names("cudaDeviceSynchronize")])
    lost = profiling.syncs_per_step(lambda: None, 4)
    assert lost["counted"] == "not counted: the profiler lost its session"
    assert set(lost) == {*profiling.SYNC_KINDS, "counted"} and all(lost[k] != lost[k] for k in profiling.SYNC_KINDS)
    monkeypatch.setattr(profiling, "require_cuda", lambda what: (_ for _ in ()).throw(RuntimeError("needs a GPU")))
    with pytest.raises(RuntimeError, match="needs a GPU"):  # only a lost session is caught
        profiling.syncs_per_step(lambda: None, 4)


def test_profile_steps_settles_after_its_session_on_cuda_and_not_on_the_cpu(monkeypatch):
    """On the CPU: one settle_profiler('cpu') after the run, which does nothing (above). On CUDA
    (faked): the settle comes after the window closed (the profiler stopped), before the trace is read."""
    log = []
    monkeypatch.setattr(profiling, "settle_profiler", lambda device="cuda": log.append(("settle", str(device))))

    def run(on_step):
        for step in range(4):
            on_step(step)
            log.append(f"step {step}")

    profiling.profile_steps(run, start=1, stop=3)
    assert log == ["step 0", "step 1", "step 2", "step 3", ("settle", "cpu")]

    class FakeProfile:
        def __init__(self, activities=None):
            pass

        def start(self):
            log.append("start")

        def stop(self):
            log.append("stop")

        def export_chrome_trace(self, path):
            log.append("export")
            with open(path, "w") as f:
                f.write('{"traceEvents": []}')

    log.clear()
    monkeypatch.setattr(profiling.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(profiling.torch.cuda, "current_stream", lambda: type("S", (), {"query": lambda _: True})())
    monkeypatch.setattr(profiling, "synchronize", lambda *a: None)
    monkeypatch.setattr(profiling.torch.profiler, "profile", FakeProfile)
    profiling.profile_steps(run, start=1, stop=3)
    assert log == ["step 0", "start", "step 1", "step 2", "stop", "step 3", ("settle", "cuda"), "export"]


def boundary_trace():
    """Three marked steps (markers at 0, 1000, 2000 µs), with known waits and phases.
    Step 0: forward 5–25; a kernel launched in it at 10 runs 100–300; the flag's copy call at 400–420 queues a
    copy that runs 430–432; the sync 420–450: the GPU had finished 100 µs before the copy call (nothing queued).
    Step 1: forward 1100–1350; a kernel launched in it at 1300 runs 1310–1800; the copy call at 1500–1510, its
    copy 1800–1802, the sync 1510–1805: 300 µs of work still queued at the copy call.
    Step 2: forward at 2050; a kernel launched at 2200 runs 2210–2300; no copy."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (0, 1000, 2000)]
    events += [ev("user_annotation", "model forward", t, d) for t, d in ((5, 20), (1100, 250), (2050, 20))]
    events += launch("k0", 10, 100, 200, 1)
    events += [ev("cuda_runtime", "cudaMemcpyAsync", 400, 20, correlation=2),
               ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 430, 2, stream=7, correlation=2),
               ev("cuda_runtime", "cudaStreamSynchronize", 420, 30)]  # fmt: skip
    events += launch("k1", 1300, 1310, 490, 3)
    events += [ev("cuda_runtime", "cudaMemcpyAsync", 1500, 10, correlation=4),
               ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 1800, 2, stream=7, correlation=4),
               ev("cuda_runtime", "cudaStreamSynchronize", 1510, 295)]  # fmt: skip
    events += launch("k2", 2200, 2210, 90, 5)
    return Timeline({"traceEvents": events})


def test_sync_wait_says_what_was_still_queued_when_the_host_issued_the_copy():
    w = profiling.sync_wait(boundary_trace(), skip=0)
    assert w.to_dict("records") == [
        {"step": 0, "queued_us": 0.0, "late_us": 100.0, "sync_us": 30.0, "copy_us": 20.0, "copy_done_us": 12.0,
         "after_copy_us": 18.0},
        {"step": 1, "queued_us": 300.0, "late_us": -300.0, "sync_us": 295.0, "copy_us": 10.0, "copy_done_us": 292.0,
         "after_copy_us": 3.0},
    ]  # the copy itself (launched by the copy call) is not work queued before it; it ends 432 and 1802  # fmt: skip
    assert profiling.sync_wait(boundary_trace()).empty  # WINDOW_SKIP = 2 leaves step 2 only: no copy


def test_sync_wait_reads_the_copy_call_that_queued_a_device_to_host_copy():
    """A step whose first copy call queues a host-to-device copy (say, new input) before the flag's copy:
    the wait is measured from the flag's copy call, the one whose GPU record is device-to-host."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (0, 1000)]
    events += launch("k0", 10, 100, 200, 1)
    events += [ev("cuda_runtime", "cudaMemcpyAsync", 350, 10, correlation=2),
               ev("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 360, 2, stream=7, correlation=2),
               ev("cuda_runtime", "cudaMemcpyAsync", 400, 20, correlation=3),
               ev("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 430, 2, stream=7, correlation=3),
               ev("cuda_runtime", "cudaStreamSynchronize", 420, 30)]  # fmt: skip
    events += launch("k1", 1010, 1100, 50, 4)
    w = profiling.sync_wait(Timeline({"traceEvents": events}), skip=0)
    assert w.to_dict("records") == [{"step": 0, "queued_us": 0.0, "late_us": 38.0, "sync_us": 30.0, "copy_us": 20.0,
                                     "copy_done_us": 12.0, "after_copy_us": 18.0}]  # fmt: skip


def test_boundary_phases_split_each_gap_into_measured_phases_that_add_up():
    p = profiling.boundary_phases(boundary_trace(), skip=0)
    assert p.to_dict("records") == [
        {"step": 1, "span_us": 1010.0, "gap_us": 878.0, "check_us": 132.0, "host_us": 568.0, "forward_us": 100.0,
         "launch_us": 200.0, "start_us": 10.0, "sync_copy_us": 50.0, "gap_calls_us": 18.0, "check_busy_us": 2.0},
        # from k0's end at 300 (launched in the forward): the copy call 400–420 and the sync 420–450 (50 µs); of
        # them only the sync's 18 µs past the copy's end at 432 fall in the gap; in 300–432 the GPU runs only the
        # copy 430–432 (k0, 100–300, ends where the phase starts)
        {"step": 2, "span_us": 410.0, "gap_us": 408.0, "check_us": 2.0, "host_us": 198.0, "forward_us": 50.0,
         "launch_us": 150.0, "start_us": 10.0, "sync_copy_us": 5.0, "gap_calls_us": 3.0, "check_busy_us": 2.0},
    ]  # fmt: skip
    row = profiling.boundary_row(p)  # with every window's phase shares (review rv19A S3)
    assert {k: row[k] for k in ("picture_gap_us", "picture_check_us")} == {"picture_gap_us": 643.0,
                                                                           "picture_check_us": 67.0}  # fmt: skip
    assert set(row) == {"picture_gap_us", "picture_check_us", "picture_span_us", "picture_boundaries",
                        *(f"phase_{c}_share" for c in profiling.SHARE_COLUMNS),
                        *(f"phase_{c}_median_us" for c in profiling.PHASES)}  # fmt: skip
    assert (row["picture_span_us"], row["picture_boundaries"]) == (710.0, 2)  # review rv23A S2
    assert row["phase_host_us_share"] == pytest.approx(766 / 1420)
    assert row["phase_gap_calls_us_share"] == pytest.approx(21 / 1420)
    shares = tokgen.gaps.phase_shares(p)
    assert shares["host_us"] == pytest.approx(766 / 1420)
    assert sum(shares[c] for c in profiling.PHASES) == pytest.approx(1)
    assert shares["sync_copy_us"] == pytest.approx(55 / 1420) and shares["gap_calls_us"] == pytest.approx(21 / 1420)
    text = tokgen.gaps.phases_text("kv_static", p)
    assert text.startswith("`kv_static`: from the end of step i−1's model forward on the GPU to step i's first "
                           "operation 710.0 µs, of which the GPU's idle gap before the step 643.0 µs (medians over 2 "
                           "boundaries); medians (share of the total time): after the model's forward")  # fmt: skip
    assert "the flag's copy 67.0 µs (9%); the GPU's last operation of step i−1 → the host starts step i 383.0 µs " \
        "(54%);" in text
    assert text.endswith("The copy and sync calls take 3.9%, a time counted within the phases, not beside them: 2.4% "
                         "within the phase after the model's forward (the flag's copy call comes before the idle gap) "
                         "and 1.5% in the idle gap; 'the GPU's last operation of step i−1 → the host starts step i' "
                         "holds most of it (of single phases; grouped as the takeaways group them, the host's other "
                         "work before the step's first launch, its 3 phases together, less the copy and sync calls' "
                         "time in the idle gap, holds 87.6%).")  # fmt: skip
    # 3.9%: 55 of 1420 µs; 1.5%: 21 in the gap; 2.4%: the other 34, within the check's phase (one decimal, the
    # whole the sum of its rounded parts: whole numbers would print 4% = 2% + 1%)
    assert tokgen.gaps.phase_takeaway("eager", p) == (
        "Eager, with the sync, in the pictures' pass, of the time from the end of step i−1's model forward on the GPU "
        "to step i's first operation, in parts that do not overlap (the copy and sync calls' time taken out of the "
        "phases it falls in): the token's argmax and append and the stop check after the forward take 7% (9% less "
        "the copy call's 2.4% within it; from the forward's last GPU operation to the flag's copy's end: its "
        "operations kept the GPU busy for 3% of it, the GPU idle in the rest; the idle gap before a step is measured "
        "from the copy's end, so it does not count this phase), the copy and sync calls take 3.9% (2.4% within the "
        "phase after the model's forward, the flag's copy call before the idle gap, and 1.5% in the idle gap), the "
        "host's other work before the step's first launch 87.6% (its 3 phases together, 'the GPU's last operation of "
        "step i−1 → the host starts step i' 53.9% + 'step i starts → its model forward starts' 10.6% + 'model forward "
        "starts → the first launch of step i' 24.6%, less the 1.5% of copy and sync call time in the idle gap), the "
        "launch's own latency 1%; the host's other work before the step's first launch (its 3 phases together) "
        "holds most of it (88%); the copy and sync calls 3.9%; one phase of the host's other work alone holds most "
        "of it, 'the GPU's last operation of step i−1 → the host starts step i' without its copy and sync calls "
        "(52%).")  # fmt: skip
    # rv20A S2: the parts do not overlap and add up to the whole: the check's 134 µs less its 34 µs of calls (100,
    # 7%), the calls 55 (3.9%), the host's 766 + 150 + 350 less the 21 µs of calls in the gap (1245, 88%), the
    # launch 20 (1%): 100 + 55 + 1245 + 20 = 1420; the host's phases 54% + 11% + 25% named, together
    # 3%: 4 µs busy (two 2 µs copies) of the checks' 134 µs; 9% + 1% + 88% + 1% (rounded) make the whole
    assert "the GPU's busy time within it not recorded" in tokgen.gaps.phase_takeaway("eager", p.drop(
        columns="check_busy_us"))  # an older table
    # 88%: host 766 + forward 150 + launch 350 less the 21 µs of calls in the gap (1245), of 1420
    no_forward = p.assign(forward_us=float("nan"), check_us=float("nan"), span_us=p["gap_us"])  # no CPU ranges
    text = tokgen.gaps.phases_text("x", no_forward)
    assert text.startswith("`x`: the idle gap 643.0 µs (median over 2 boundaries); medians (share of the total time): "
                           "the GPU's last operation") and "forward" not in text.split(";")[2]  # fmt: skip
    assert tokgen.gaps.phase_shares(no_forward)["host_us"] == pytest.approx(766 / 1286)


def test_the_forwards_end_is_the_last_gpu_operation_launched_inside_it_not_the_last_to_end():
    """Two kernels launched in step 0's forward (the first ends last) and one after it (the append): the check's
    phase starts at the end of the forward's latest-ending operation, not at the append's launch or end."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (0, 1000)]
    events += [ev("user_annotation", "model forward", t, 40) for t in (10, 1010)]
    events += launch("a", 20, 100, 150, 1) + launch("b", 30, 250, 10, 2) + launch("append", 60, 300, 20, 3)
    events += launch("k1", 1020, 1100, 10, 4)
    p = profiling.boundary_phases(Timeline({"traceEvents": events}), skip=0)
    assert p[["span_us", "gap_us", "check_us"]].to_dict("records") == [
        {"span_us": 1100.0 - 260.0, "gap_us": 1100.0 - 320.0, "check_us": 60.0}]  # fmt: skip


def test_the_checks_busy_time_counts_each_overlap_once_and_only_within_the_phase():
    """Step 0's forward launches a (100–200); after it, b 190–260 (it starts before the phase) and c 240–300
    (overlapping b), then the copy 350–352: the phase is 200–352, the GPU busy 200–300 and 350–352, 102 µs of 152."""
    events = [ev("cuda_runtime", "cudaStreamQuery", t, 1) for t in (0, 1000)]
    events += [ev("user_annotation", "model forward", t, 40) for t in (10, 1010)]
    events += launch("a", 20, 100, 100, 1) + launch("b", 60, 190, 70, 2) + launch("c", 70, 240, 60, 3)
    events += launch("copy", 80, 350, 2, 4) + launch("k1", 1020, 1100, 10, 5)
    p = profiling.boundary_phases(Timeline({"traceEvents": events}), skip=0)
    assert p[["check_us", "check_busy_us"]].to_dict("records") == [{"check_us": 152.0, "check_busy_us": 102.0}]
    assert "kept the GPU busy for 67% of it, the GPU idle in the rest" in tokgen.gaps.phase_takeaway("eager", p)


def test_picture_widening_reads_each_windows_two_passes_and_names_the_tables_windows():
    rows = [{"variant": v, "window": w, "picture_gap_us": pic, "idle_gap_median_us": stat}
            for v, w, pic, stat in [("kv_static", 0, 500.0, 300.0), ("kv_static", 1, 420.0, 400.0),
                                    ("kv_static_no_check", 1, 310.0, 300.0), ("kv_static_no_check", 0, 302.5, 300.0),
                                    ("compiled kv_static", 0, 900.0, float("nan")),
                                    ("pipelined_static", 0, 999.0, 1.0)]]  # fmt: skip
    text = tokgen.gaps.picture_widening(pd.DataFrame(rows))
    assert text.startswith("The idle gap before a step in the pictures' pass less that in the statistics' pass, per "
                           "window (0, 1): `kv_static` +200, +20 µs; `kv_static_no_check` +2, +10 µs; "
                           "`compiled kv_static` —, — µs. The phases above")  # fmt: skip
    assert "not claim 6's test, which the statistics' pass decides" in text
    assert "pictures' pass's gaps are not recorded" in tokgen.gaps.picture_widening(pd.DataFrame(rows).drop(
        columns="picture_gap_us"))


def test_no_step_boundary_gives_no_phases_and_nan_columns():
    empty = profiling.boundary_phases(Timeline({"traceEvents": []}))
    assert empty.empty
    row = profiling.boundary_row(empty)
    assert set(row) == {"picture_gap_us", "picture_check_us", "picture_span_us", "picture_boundaries",
                        *(f"phase_{c}_share" for c in profiling.SHARE_COLUMNS),
                        *(f"phase_{c}_median_us" for c in profiling.PHASES)}  # fmt: skip
    assert row.pop("picture_boundaries") == 0 and all(v != v for v in row.values())


def test_a_phase_of_exactly_half_the_gap_is_the_largest_not_most():
    half = pd.DataFrame([{"step": 1, "span_us": 100.0, "gap_us": 100.0, "check_us": float("nan"), "host_us": 50.0,
                          "forward_us": 30.0, "launch_us": 10.0, "start_us": 10.0, "sync_copy_us": 0.0,
                          "gap_calls_us": 0.0}])  # fmt: skip
    assert "is the largest part, though not most of it" in tokgen.gaps.phases_text("x", half)
    # rvA15 S5: the takeaway answers with its parts; the host's other work, 50 + 30 + 10 µs, holds most of it
    assert tokgen.gaps.phase_takeaway("eager", half).endswith(
        "; the host's other work before the step's first launch (its 3 phases together) holds most of it (90%); it "
        "makes no copy or sync call.")  # fmt: skip
    # a part of exactly half is the largest, not most: check 45, host 30 + 10 + 10 less the calls' 0 in the gap
    edge = half.assign(check_us=45.0, host_us=30.0, forward_us=10.0, start_us=5.0, sync_copy_us=4.0, check_busy_us=1.0)
    assert tokgen.gaps.phase_takeaway("eager", edge).endswith(
        "; no part holds most of it: the largest is the host's other work before the step's first launch (its 3 "
        "phases together), 50%; the copy and sync calls 4.0%.")  # fmt: skip
    empty = "`x`: no step boundary with GPU work on both sides was recorded."
    assert tokgen.gaps.phases_text("x", half.iloc[:0]) == empty


def waits(queued, sync, into=None):
    """`sync_wait`'s table, the flag's copy done `into` µs into each sync (default 2 µs), the sync going on after,
    as notebook 06 records it (`sync_wait_row`): the sentences read the recorded medians."""
    n = len(queued)
    into = [2.0] * n if into is None else into
    return profiling.sync_wait_row(pd.DataFrame(
        {"step": range(n), "queued_us": queued, "late_us": [16.0 - q for q in queued], "sync_us": sync,
         "copy_us": [25.0] * n, "copy_done_us": into,
         "after_copy_us": [w - max(i, 0.0) for w, i in zip(sync, into)]}, dtype=float))  # fmt: skip


def test_sync_wait_row_records_the_medians_and_counts_the_sentences_read():
    row = profiling.sync_wait_row(profiling.sync_wait(boundary_trace(), skip=0))
    assert row == {"sync_steps": 2, "sync_us": 162.5, "sync_queued_us": 150.0, "sync_queued_steps": 1,
                   "sync_idle_steps": 1, "sync_late_us": -100.0, "copy_call_us": 15.0, "copy_done_us": 152.0,
                   "after_copy_us": 10.5}  # fmt: skip
    assert list(row) == list(profiling.SYNC_WAIT_COLUMNS)
    none = profiling.sync_wait_row(profiling.sync_wait(boundary_trace()))  # WINDOW_SKIP: no step with a copy
    assert none["sync_steps"] == 0 and all(none[c] != none[c] for c in profiling.SYNC_WAIT_COLUMNS[1:])
    assert tokgen.gaps.sync_wait_text("x", none) == "`x`: no step of the window recorded a stop-flag copy followed " \
        "by a sync."
    recorded = pd.DataFrame([row, {**none, "sync_steps": float("nan")}])  # read back from a table: NaN, or 0
    assert tokgen.gaps.waited_for_queue(recorded.iloc[1]) is None
    assert tokgen.gaps.waited_for_queue(recorded.iloc[0]) is True  # 150 ≥ half of 162.5


def test_sync_wait_text_says_the_copys_round_trip_only_where_the_gpu_had_finished():
    done = waits([0.0, 0.0, 2.0], [13.0, 13.0, 14.0])
    assert tokgen.gaps.sync_wait_text("kv_static", done) == (
        "`kv_static`: the sync lasted 13.0 µs per step (median of 3 steps); the GPU had already finished everything "
        "queued before the copy in 2 of 3 steps (0.0 µs left, median), so the host did not wait for queued work (the "
        "GPU's times set against the host's by the profiler's alignment of the two clocks); the "
        "flag's copy was done 2.0 µs into the sync and the sync returned 11.0 µs after the later of the copy's end and "
        "the sync's start (medians): most of its "
        "time is the synchronize call's own, under the profiler, not the copy's. Medians: the host issued the copy "
        "16.0 µs after the GPU's last queued operation ended; the copy call took 25.0 µs of host time, from its start "
        "to its return (the profile does not split the call's own cost from any wait inside it).")  # fmt: skip
    trip = tokgen.gaps.sync_wait_text("x", waits([0.0] * 3, [13.0] * 3, into=[9.0] * 3))
    assert ("the flag's copy was done 9.0 µs into the sync and the sync returned 4.0 µs after the later of the "
            "copy's end and the sync's start (medians): most of its time is the copy's round trip.") in trip
    before = tokgen.gaps.sync_wait_text("x", waits([0.0] * 3, [13.0] * 3, into=[-1.0] * 3))
    assert ("the flag's copy was done 1.0 µs before the sync began and the sync returned 13.0 µs after the later "
            "of the copy's end and the sync's start") in before
    unknown = tokgen.gaps.sync_wait_text("x", waits([0.0] * 3, [13.0] * 3, into=[float("nan")] * 3))
    assert (f"so the host did not wait for queued work ({tokgen.gaps.CLOCKS_CAVEAT}); when the flag's copy finished "
            "was not recorded.") in unknown  # the clocks' caveat, as solution 06's which_call_waits (review rv19A N7)
    busy = waits([100.0, 120.0, 0.0], [110.0, 130.0, 12.0])
    assert tokgen.gaps.sync_wait_text("kv_static", busy).startswith(
        "`kv_static`: the GPU still had 100.0 µs of work queued (median) when the host issued the copy, in 2 of 3 "
        "steps, and the sync waited 110.0 µs: the host waited for that queued work. Medians: the host issued the copy "
        "84.0 µs before the GPU's last queued operation ended")  # fmt: skip
    assert tokgen.gaps.waited_for_queue(waits([5.0], [10.0])) is True  # QUEUED_SHARE: half the wait counts
    assert tokgen.gaps.waited_for_queue(waits([4.9], [10.0])) is False
    assert tokgen.gaps.waited_for_queue(waits([], [])) is None
    summary = tokgen.gaps.gap_summary(pd.DataFrame(), {"eager": pd.Series(done), "compiled": busy})  # a table row too
    assert summary.startswith("The per-step `.item()` synchronizes the host with the GPU at every step boundary; "
                              "eager, the sync lasted 13.0 µs per step (median of 3 steps); the GPU had already")
    assert "; compiled, the GPU still had 100.0 µs of work queued (median)" in summary
    assert "makes the CPU wait" not in summary


def test_direction_text_names_the_gap_it_sets_the_other_against():
    text = tokgen.gaps.direction_text("larger", 6, "at steps 80–99", "at steps 30–49")
    assert text == "the gap is larger at steps 80–99 than at steps 30–49 in all 6 windows, by 20 µs or more"
    assert "than with the sync in all 6 windows" in tokgen.gaps.direction_text("larger", 6, "pipelined")


def test_window_pairs_reads_each_pair_of_profiles_by_window_whatever_else_the_summary_holds():
    rows = [{"steps": 18, "idle_gap_median_us": g, "gpu_busy_per_step_us": b, "variant": v, "pair": p, "window": w}
            for v, p, w, g, b in [("kv_static", 0, "late", 120.0, 900.0), ("kv_static", 0, "early", 100.0, 880.0),
                                  ("kv_static", 1, "early", 101.0, 881.0), ("kv_static", 1, "late", 130.0, 905.0),
                                  ("kv_dynamic", 0, "early", 90.0, 700.0), ("kv_dynamic", 0, "late", 95.0, 990.0)]]
    pairs = tokgen.gaps.window_pairs(rows, ["early", "late"])  # the summary's own "steps" (a count) is not the window
    assert pairs == {"kv_static": {"idle_gap_median_us": [(100.0, 120.0), (101.0, 130.0)],
                                   "gpu_busy_per_step_us": [(880.0, 900.0), (881.0, 905.0)]},
                     "kv_dynamic": {"idle_gap_median_us": [(90.0, 95.0)],
                                    "gpu_busy_per_step_us": [(700.0, 990.0)]}}  # the late pair ran first: read in order


def test_the_time_from_each_of_the_last_operations_of_the_step_before_is_recorded_per_step():
    """Claim 6 reads the synchronous step's time from the work it shares with the step without a check: per
    step, the time from the end of step i−1's j-th last GPU operation (in launch order) to step i's first.
    Steps split at the flag's copies: step 1 starts at 40 µs after ops ending at 10, 14 and 17 µs (23, 26, 30
    µs), step 2 at 100 µs after ops ending at 50, 54 and 57 µs (43, 46, 50 µs); no 4th last operation."""
    from tokgen.profiling import TAIL_OPS, Timeline

    def ev(cat, name, ts, dur):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": {"stream": 7}}

    events = []
    for t0 in (0, 40, 100):
        events += [ev("kernel", "a", t0, 10), ev("kernel", "b", t0 + 12, 2),
                   ev("gpu_memcpy", "Memcpy DtoH", t0 + 16, 1)]
    events.append(ev("kernel", "after the last copy: a step not seen to end", 160, 1))
    s = Timeline({"traceEvents": events}).summary(skip=0)
    assert [s[f"from_op_{j}_median_us"] for j in (1, 2, 3)] == [33.0, 36.0, 40.0]  # medians of (23, 43), ...
    assert s["idle_gap_median_us"] == s["from_op_1_median_us"]  # one stream: the last operation ends last
    assert all(s[f"from_op_{j}_median_us"] != s[f"from_op_{j}_median_us"] for j in range(4, TAIL_OPS + 1))  # NaN


def test_a_written_trace_drops_the_profilers_temporary_path(monkeypatch, tmp_path):
    """rvA N4: torch's Chrome trace names its temporary file ("traceName": "/tmp/tokgen_trace_<pid>.json"), a machine
    path; the trace written to `trace_path` leaves that key out and keeps every other key and the non-CPU-op events."""
    import gzip
    import json

    class FakeProfile:
        def __init__(self, activities=None):
            pass

        def start(self):
            pass

        def stop(self):
            pass

        def export_chrome_trace(self, path):
            trace = {"schemaVersion": 1, "traceName": path, "traceEvents": [ev("kernel", "gemm", 1, 2, stream=7),
                                                                            ev("cpu_op", "aten::mm", 1, 1)]}
            with open(path, "w") as f:
                json.dump(trace, f)

    monkeypatch.setattr(profiling.torch.profiler, "profile", FakeProfile)
    written = tmp_path / "t.json.gz"
    profiling.profile_steps(lambda on_step: [on_step(s) for s in range(3)], start=1, stop=2, trace_path=written)
    with gzip.open(written, "rt") as f:
        trace = json.load(f)
    assert "traceName" not in trace and trace["schemaVersion"] == 1
    assert [e["name"] for e in trace["traceEvents"]] == ["gemm"]  # the per-operator CPU events left out, as before


def test_the_summary_gives_each_sync_median_over_the_windows_with_its_range_and_counts_every_windows_steps():
    """rvA S3: notebook 06's Summary reads every window, not the first: the sync 20.9, 21.8 and 18.5 µs per window
    (the reference run's eager medians) give 20.9 µs, range 18.5–21.8; 18 steps each, none with work queued, give
    54 of 54; the copy's end (−1.3, −1.4, −0.9 µs) is said as a range, and the sync's time held by the call's own in
    every window. One window's rows read as that window's row does (`_wait_clause`)."""
    def row(w, sync, into, after, queued=0.0, queued_steps=0):
        return {"variant": "kv_static", "window": w, "sync_steps": 18, "sync_us": sync, "sync_queued_us": queued,
                "sync_queued_steps": queued_steps, "sync_idle_steps": 18 - queued_steps, "sync_late_us": 20.0,
                "copy_call_us": 39.0, "copy_done_us": into, "after_copy_us": after}  # fmt: skip

    profile = pd.DataFrame([row(2, 18.5, -0.9, 18.5), row(0, 20.9, -1.3, 20.9), row(1, 21.8, -1.4, 21.8),
                            {"variant": "kv_static_no_check", "window": 0, "sync_steps": 0}])  # fmt: skip
    waits = tokgen.gaps.window_waits(profile)
    assert list(waits) == ["eager"] and list(waits["eager"]["window"]) == [0, 1, 2]
    text = tokgen.gaps.gap_summary(pd.DataFrame(), waits)
    assert ("eager, the sync lasted 20.9 µs per step (the median of 3 windows' medians; range 18.5–21.8); the GPU had "
            "already finished everything queued before the copy in 54 of 54 steps (0.0 µs left, each window's "
            f"median), so the host did not wait for queued work ({tokgen.gaps.CLOCKS_CAVEAT}); the flag's copy ended "
            "−1.4 to −0.9 µs from the sync's "
            "start (each window's median; negative: before it) and the sync returned 18.5–21.8 µs after the later of "
            "the copy's end and the sync's start: in every window most of its time is the synchronize call's own, "
            "under the profiler, not the copy's") in text
    one = tokgen.gaps.gap_summary(pd.DataFrame(), {"eager": waits["eager"].iloc[:1]})
    assert one == tokgen.gaps.gap_summary(pd.DataFrame(), {"eager": waits["eager"].iloc[0]})  # window 0's own words
    assert "(median of 18 steps)" in one
    # the copy's round trip in one window only: said per window, not as every window's
    split = pd.DataFrame([row(0, 20.0, -1.0, 20.0), row(1, 14.0, 10.0, 4.0)])
    assert ("most of the sync's time is the synchronize call's own in 1 of 2 windows, the copy's round trip in the "
            "others") in tokgen.gaps.gap_summary(pd.DataFrame(), tokgen.gaps.window_waits(split))
    queued = pd.DataFrame([row(0, 100.0, 2.0, 98.0, 90.0, 18), row(1, 120.0, 2.0, 118.0, 110.0, 17)])
    assert ("the GPU still had 100.0 µs (the median of 2 windows' medians; range 90.0–110.0) of work queued when the "
            "host issued the copy, in 35 of 36 steps") in tokgen.gaps.gap_summary(pd.DataFrame(), {"eager": queued})
    assert tokgen.gaps.window_waits(profile.drop(columns="sync_us")) == {}  # a table recorded before the columns


def test_the_copy_running_count_says_what_it_counted_not_that_the_call_waited():
    """rvA M2: `copy_done_us` > 0 means the flag's copy ended after the synchronize began; in 1 of 3 steps here.
    The sentence says so, with the clocks it rests on, and not that the copy call waited or did not."""
    w = pd.DataFrame({"step": [2, 3, 4, 5], "queued_us": [0.0] * 4, "late_us": [20.0] * 4,
                      "sync_us": [20.0, 21.0, 19.0, float("nan")], "copy_us": [40.0, 38.0, 41.0, 39.0],
                      "copy_done_us": [-1.0, 0.5, -0.2, 1.0], "after_copy_us": [20.0, 20.5, 19.0, float("nan")]})
    running = tokgen.gaps.copy_running_text(w)
    assert running.startswith("the flag's copy was still running on the GPU when the synchronize began in 1 of 3 "
                              "steps (the copy's end is a GPU time, the synchronize's start a host time")
    assert "did not wait" not in running and "does not say whether the copy call itself waited" in running
    said = tokgen.gaps.which_call_waits(w, 55.04)
    # rvA12 S2: the median copy (−0.2 µs: ended before the synchronize began) left nothing to wait for
    assert said.startswith("So, which one waits? Neither waited for the GPU in the median step: no work was queued and "
                           "the flag's copy had ended 0.2 µs before the synchronize began (by the profiler's alignment "
                           "of the GPU's and the host's clocks), so the synchronize's time is the call's own (the "
                           "sentence above says how long). The flag's copy was still running")  # fmt: skip
    late = w.assign(copy_done_us=[1.0, 0.5, 2.0, 1.0], after_copy_us=[19.0, 20.5, 17.0, float("nan")])
    # the copy still landing when the synchronize began: it waits about 1.0 µs for it (median), the rest, 19.0 µs
    # (median of 19.0, 20.5, 17.0), is the call's own (review rv20A S4)
    assert tokgen.gaps.which_call_waits(late).startswith(
        "So, which one waits? The synchronize: about 1.0 µs (median) for the flag's copy, the rest (19.0 µs) its "
        "own, not for queued GPU work (the copy ended 1.0 µs after the synchronize began, median, by the profiler's "
        "alignment of the GPU's and the host's clocks).")  # fmt: skip
    at_start = w.assign(copy_done_us=[0.02, -0.01, 0.03, 1.0])  # median 0.02: prints 0.0, neither side (rrA12 N2)
    assert "the flag's copy ended as the synchronize began (median" in tokgen.gaps.which_call_waits(at_start)
    unknown = w.assign(copy_done_us=float("nan"))  # not recorded: no claim about the copy
    assert tokgen.gaps.which_call_waits(unknown).startswith(
        "So, which one waits? The synchronize, though not for queued GPU work (the GPU had finished")
    queued = w.assign(queued_us=[30.0, 30.0, 30.0, 30.0])  # queued work held the sync's time
    assert tokgen.gaps.which_call_waits(queued).startswith("So, which one waits? The synchronize, and it waited for "
                                                           "queued GPU work.")
    # 40.0: the median copy call over the 3 steps with a sync (40, 38, 41), as notebook 06 records it
    assert said.endswith("The copy call took 55.0 µs per call (mean) under the full CPU-op profiler and 40.0 µs "
                         "(median) in this lighter profile (the profile does not split the call's own cost from any "
                         "wait inside it).")  # fmt: skip
    assert tokgen.gaps.which_call_waits(w.iloc[:0]) == ("So, which one waits? Not measured: no step recorded a copy "
                                                        "followed by a sync.")  # fmt: skip


def test_the_calls_share_is_the_sum_of_its_rounded_parts():
    """rvA N2: the copy and sync calls at 2.49% of the span, 0.80% of it in the idle gap and 1.69% before it: whole
    percents would print 2% made of 2% and 1%; one decimal prints 2.5% = 1.7% + 0.8%."""
    p = pd.DataFrame([{"step": 1, "span_us": 10000.0, "gap_us": 9000.0, "check_us": 1000.0, "host_us": 6000.0,
                       "forward_us": 1000.0, "launch_us": 1900.0, "start_us": 100.0, "sync_copy_us": 249.0,
                       "gap_calls_us": 80.0, "check_busy_us": 500.0}])  # fmt: skip
    said = tokgen.gaps.phase_takeaway("compiled", p)
    assert ("the copy and sync calls take 2.5% (1.7% within the phase after the model's forward, the flag's copy "
            "call before the idle gap, and 0.8% in the idle gap)") in said  # fmt: skip  (rv20A S2: one part)
    # parts 1.68% and 0.76% print 1.7% and 0.8%: the whole must print their sum, 2.5%, not its own 2.44% -> 2.4%
    p = p.assign(sync_copy_us=244.0, gap_calls_us=76.0)
    said = tokgen.gaps.phase_takeaway("compiled", p)
    assert "the copy and sync calls take 2.5% (" in said and "2.4%" not in said

    # rvA12 N2: a generator with no stop check makes no copy or sync call: said so, not "take 0%"
    none = {"check_us": 0.1, "gap_calls_us": 0.0, "sync_copy_us": 0.0}
    assert tokgen.gaps._calls_clause(none) == "it makes no copy or sync call"
    assert tokgen.gaps._calls_clause({"sync_copy_us": 0.004}) == "the copy and sync calls take 0%"  # a share, rounded


def test_counted_windows_names_the_windows_it_counts():
    """rvA S1: a count beside its windows' numbers, so "in 2" does not read as window 2."""
    assert tokgen.gaps.counted_windows("partly", [1]) == "partly in 1 window (1)"
    assert tokgen.gaps.counted_windows("not reproduced", [0, 2]) == "not reproduced in 2 windows (0, 2)"


def test_notebook_06s_window_line_says_the_profiled_and_the_counted_steps():
    """Notebook 06's window line is a template (review r10, S-b): steps [30, 50) profiled are "30–49",
    and with 2 left out the statistics cover 32–49."""
    from tokgen.gaps import profiled_window_text

    assert profiled_window_text(16, 100, [30, 50], skip=2, where="Measured here.") == (
        "Measured here. B = 16, N = 100, steps 30–49 profiled; the statistics leave out the first 2: steps 32–49.")
    assert profiled_window_text(4, 60, (10, 20), skip=3).startswith("B = 4, N = 60, steps 10–19 profiled;")
    assert profiled_window_text(4, 60, (10, 20), skip=3).endswith("the first 3: steps 13–19.")


def test_solution_06_states_both_busy_times_and_which_is_larger_not_their_ratio():
    """Solution 06's exercises (review r10, S-a): two single profiles' busy times said with which is larger,
    no ratio; naive's smaller work explained by its kernels; the late window's busy times are medians over
    the pairs."""
    from tokgen.gaps import busy_times_text, late_window_text, naive_work_text

    assert busy_times_text(150.0, 100.0) == ("GPU busy time per step, one profile each: naive 150.0 µs, the static "
                                             "KV cache 100.0 µs; naive's is the larger (a ranking of two profiles "
                                             "only).")  # fmt: skip
    assert "the KV cache's is the larger" in busy_times_text(90.0, 100.0)
    assert "neither is the larger" in busy_times_text(100.0, 100.0)
    kv = {"gpu_busy_per_step_us": 100.0, "kernels_per_step": 50}
    more = naive_work_text(kv, {"gpu_busy_per_step_us": 150.0, "kernels_per_step": 40}, [30, 50])
    assert "×" not in more and "Naive gives the GPU more work per step at this window: at steps 32–49" in more
    # rv21A S4: no "(by construction)": the positions at this window (steps 32–49: 33–50), the window's position said
    assert "by construction" not in more and "it re-runs 33–50 positions a step" in more
    assert "which costs more depends on the window's position" in more
    less = naive_work_text(kv, {"gpu_busy_per_step_us": 80.0, "kernels_per_step": 40}, [30, 50])  # rr21c N3: 32–49
    assert ("no more work per step: 40 kernels per step against the static cache's 50, which take 2.0 µs each on "
            "average (naive's 2.0 µs). In steps 32–49 naive re-runs at most 50 positions") in less  # fmt: skip
    # review rv19A N9: the spread of the static cache's busy time over notebook 06's windows, read from its rows
    nb06 = pd.DataFrame({"window": [0, 1, 2, 2], "gpu_busy_per_step_us": [99.0, 100.0, 101.0, 101.0]})
    spread = naive_work_text(kv, {"gpu_busy_per_step_us": 150.0, "kernels_per_step": 40}, [30, 50], nb06)
    assert ("only). Notebook 06 profiled the static cache's window (its `WINDOW`) in 3 windows (each window's judged "
            "attempt): GPU busy time per step 99.0–101.0 µs, a spread of 2.0% of their median; the two profiles here "
            "differ by 50% of the static cache's time, wider than that spread (another run's profiles: a guide, not "
            "a test). Naive") in spread
    close = naive_work_text(kv, {"gpu_busy_per_step_us": 101.0, "kernels_per_step": 40}, [30, 50], nb06)
    assert "differ by 1% of the static cache's time, within that spread" in close
    assert naive_work_text(kv, {"gpu_busy_per_step_us": 150.0, "kernels_per_step": 40}, [30, 50], nb06.iloc[:1]) == more
    text = late_window_text("kv_static", [(10.0, 10.5)] * 6, [(100.0, 110.0), (102.0, 108.0), (98.0, 200.0)],
                            [30, 50], [80, 100])  # fmt: skip
    assert text.startswith("`kv_static`, over 6 interleaved pairs of profiles: the gap is about the same at steps "
                           "82–99 as at steps 32–49")  # fmt: skip  (the steps the statistics cover: rv19A N2)
    assert text.endswith("median over the pairs: 100.0 µs at steps 32–49, 110.0 µs at steps 82–99.")  # no growth
    grows = late_window_text("kv_static", [(10.0, 50.0)] * 6, [(100.0, 100.0)] * 6, [30, 50], [80, 100])
    assert grows.endswith("at steps 82–99. The idle gap is host time, the GPU waiting for the host: what changes it "
                          "between the windows is not measured here.")  # (review rv19A N2)
    assert "at steps 81–99" in late_window_text("x", [(10.0, 10.0)] * 6, [(1.0, 1.0)] * 6, [30, 50], [80, 100],
                                                skip=1)  # fmt: skip


def test_the_phase_answer_never_names_the_calls_time_twice():
    """Review rr15 S1: the phase "GPU's last operation → the host starts step i" holds the copy and sync calls after
    the copy's end (`gap_calls_us`); where those calls are most of it (60 of its 70%), the answer names the calls
    once, with a plural verb, and no phase of the host's other work, since that phase less its calls is 10%."""
    shares = dict(check_us=0.1, host_us=0.7, forward_us=0.05, launch_us=0.13, start_us=0.02, sync_copy_us=0.62,
                  gap_calls_us=0.6)  # fmt: skip
    host = 0.7 + 0.05 + 0.13 - 0.6
    said = tokgen.gaps._answer(shares, host, tokgen.gaps._phase_names(shares), 0.6)
    assert said == "the copy and sync calls hold most of it (62%)"
    shares |= dict(host_us=0.7, sync_copy_us=0.12, gap_calls_us=0.1, check_us=0.1)  # the phase less its calls: 60%
    said = tokgen.gaps._answer(shares, 0.7 + 0.05 + 0.13 - 0.1, tokgen.gaps._phase_names(shares), 0.1)
    assert said.endswith("; one phase of the host's other work alone holds most of it, 'the GPU's last operation of "
                         "step i−1 → the host starts step i' without its copy and sync calls (60%)")  # fmt: skip
