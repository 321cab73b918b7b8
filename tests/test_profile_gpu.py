"""tokgen asks PyTorch to tear CUPTI down after each profile (TEARDOWN_CUPTI=1, set where tokgen is
imported): the default and a user's own setting (CPU), and a CUDA graph replayed after profiles that
tore CUPTI down (GPU; the crash CUDA < 12.6 had, pytorch/pytorch#112507). Notebook 06_eos_sync_profile."""

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

    for _ in range(2):
        timeline = tokgen.profile_steps(run, start=2, stop=6)
        assert len(timeline.kernels) > 0  # the profile recorded the replays' kernels
    x.fill_(5)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, torch.full_like(y, 11.0)) and not wrong
    assert set(seen) == {"1"}
