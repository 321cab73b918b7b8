import sys

import pytest
import torch

import tokgen


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny():
    return tokgen.build_model("tiny", "cpu")


def smoke_command(only: str, out, solutions: bool = False) -> list[str]:
    """The runner in smoke mode for notebooks `only` (and their solutions if asked) into `out`, as tests start it."""
    cmd = [sys.executable, "-m", "tokgen_tools.runner", "--smoke", "--only", only, "--out", str(out), "--no-progress"]
    return [*cmd, "--solutions"] if solutions else cmd
