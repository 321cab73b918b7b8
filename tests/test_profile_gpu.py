"""tokgen asks PyTorch to tear CUPTI down after each profile (TEARDOWN_CUPTI=1, set where tokgen is
imported): the default and a user's own setting (CPU), and a CUDA graph replayed after profiles that
tore CUPTI down (GPU; the crash CUDA < 12.6 had, pytorch/pytorch#112507). Notebook 06_eos_sync_profile."""

import contextlib
import os
import subprocess
import sys

import pytest
import torch

import tokgen


def _imported_value(env: dict) -> str:
    """TEARDOWN_CUPTI as a fresh process sees it after `import tokgen`, started with `env`."""
    code = "import os, tokgen; print(os.environ.get('TEARDOWN_CUPTI', '<unset>'))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_importing_tokgen_sets_teardown_cupti_and_keeps_a_users_own_value():
    env = {k: v for k, v in os.environ.items() if k != "TEARDOWN_CUPTI"}
    assert _imported_value(env) == "1"
    assert _imported_value(env | {"TEARDOWN_CUPTI": "0"}) == "0"  # the user's explicit choice wins


@pytest.mark.gpu
def test_a_cuda_graph_replays_correctly_after_profiles_that_tore_cupti_down():
    """Two profiles of a CUDA-graph replay through tokgen's profiling path (`profile_steps`), then the
    graph replayed again: every replay gives x·2 + 1, the profiles record its kernels, and
    TEARDOWN_CUPTI is "1" while each profile runs (the second profile re-initializes CUPTI after the
    first one's teardown: the case that crashed before CUDA 12.6)."""
    if os.environ.get("TEARDOWN_CUPTI") != "1":
        pytest.skip("TEARDOWN_CUPTI was set to another value before tokgen was imported")
    x = torch.zeros(1024, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm up on a side stream, as graph capture asks
        y = x * 2 + 1
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x * 2 + 1
    seen, wrong = [], []

    def run(on_step):
        for step in range(8):
            on_step(step)
            x.fill_(step)
            graph.replay()
            if not torch.equal(y, torch.full_like(y, 2 * step + 1)):
                wrong.append(step)
            seen.append(os.environ.get("TEARDOWN_CUPTI"))

    per_step = []
    for _ in range(2):
        timeline = tokgen.profile_steps(run, start=2, stop=6)
        counts = timeline.kernels.groupby("step").size()
        assert len(counts) > 0 and counts.tolist() == timeline.steps["kernels"].tolist()
        assert counts.min() >= 3 and counts.nunique() == 1, counts  # fill, the replay's mul and add: every step
        per_step.append(int(counts.iloc[0]))
    assert per_step[0] == per_step[1]  # the second profile, after the first one's teardown, records as much
    x.fill_(5)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, torch.full_like(y, 11.0)) and not wrong
    assert set(seen) == {"1"}


def _graph_and_loop():
    """Two small CUDA workloads: a CUDA graph of 20 small kernels replayed 10 times, and the same
    20 kernels launched one by one 10 times."""
    x = torch.ones(4096, device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm up on a side stream, as graph capture asks
        for _ in range(20):
            x.mul_(1.0)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(20):
            x.mul_(1.0)

    def replay():
        for _ in range(10):
            graph.replay()

    def loop():
        for _ in range(10):
            for _ in range(20):
                x.mul_(1.0)

    return replay, loop, x


def _slice_or_skip(sms):
    """A green-context slice of `sms` SMs (tests/test_gpu.py's GpuSlice), or a skip where there is none."""
    if sms is None:
        return None
    try:
        return tokgen.GpuSlice(sms)
    except (RuntimeError, ValueError) as err:  # no green contexts in this build, or a smaller GPU
        pytest.skip(f"no {sms}-SM slice: {err}")


@pytest.mark.gpu
@pytest.mark.parametrize("sms", [None, 16])
def test_back_to_back_profiler_sessions_each_record_the_gpus_work(sms):
    """CUPTI's teardown runs on a background thread and finalizes inside the next CUDA call; a session
    started right after another could record no GPU event (pytorch/kineto#1554). Six gpu_busy_ms
    sessions back to back, alternating a graph replay and a plain loop, each give a busy time above 0
    (NaN would be a lost session), and count_syncs, twice in a row, counts one .item() and one
    device-wide sync each time; the whole GPU and a 16-SM slice."""
    gpu_slice = _slice_or_skip(sms)
    with gpu_slice if gpu_slice is not None else contextlib.nullcontext():
        replay, loop, x = _graph_and_loop()
        replay(), loop()
        torch.cuda.synchronize()
        busy = [tokgen.profiling.gpu_busy_ms(replay if i % 2 == 0 else loop) for i in range(6)]
        assert all(b > 0 for b in busy), busy  # NaN > 0 is False: a lost session fails here

        def run():
            loop()
            x.sum().item()
            torch.cuda.synchronize()

        counts = [tokgen.count_syncs(run) for _ in range(2)]
        # confine() re-enters the slice and says True if a profiler session had left it (notebook 06's
        # plain runs after a profiled pass would then run on the whole GPU)
        assert gpu_slice is None or not gpu_slice.confine(), "a profiler session left the slice"
    assert counts[0] == counts[1], counts
    assert counts[0]["local_scalar_dense"] == 1 and counts[0]["device_syncs"] == 1, counts
