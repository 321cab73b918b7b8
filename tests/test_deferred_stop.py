"""Forcing transformers' DeferredStopCheck (tokgen.generators.deferred_stop_check), on the CPU.

The pinned transformers (5.1.0) has no DeferredStopCheck, so the GPU test of the real one runs on
the newer transformers that run_all.sh installs for notebook 14 (tests/test_gpu.py). What is ours,
the rule we force and putting transformers' own back, is tested here against a stand-in class.
"""

from types import SimpleNamespace

import pytest
import torch
import transformers.generation.utils as utils

import tokgen
from tokgen.generators import deferred_stop_check


@pytest.fixture
def check(monkeypatch):
    """A stand-in DeferredStopCheck with transformers' default: deferred on Apple's mps only."""

    class DeferredStopCheck:
        @staticmethod
        def is_supported(device, cache, cache_is_returned, is_assistant):
            return device == "mps"

    monkeypatch.setattr(utils, "DeferredStopCheck", DeferredStopCheck, raising=False)
    return DeferredStopCheck


def test_forced_on_it_holds_on_every_device_where_transformers_could_roll_a_step_back(check):
    own = check.__dict__["is_supported"]
    croppable, fixed = SimpleNamespace(is_croppable=True), SimpleNamespace(is_croppable=False)
    with deferred_stop_check(True):
        rule = check.is_supported
        assert rule("cuda", None, True, False) and rule("cpu", croppable, True, False)
        assert rule("cuda", fixed, False, False)  # a cache not returned need not be rolled back
        assert not rule("cuda", fixed, True, False)  # a returned cache that cannot be cropped
        assert not rule("cuda", None, False, True)  # never for an assistant model
    assert check.__dict__["is_supported"] is own
    with deferred_stop_check(False):
        assert not check.is_supported("mps", None, False, False)  # off even where transformers turns it on
    assert check.__dict__["is_supported"] is own and check.is_supported("mps", None, False, False)


def test_transformers_own_rule_comes_back_after_an_error(check):
    own = check.__dict__["is_supported"]
    with pytest.raises(RuntimeError, match="inside"), deferred_stop_check(True):
        raise RuntimeError("inside")
    assert check.__dict__["is_supported"] is own


def test_without_deferred_stop_check_it_says_which_transformers_is_needed(monkeypatch, tiny):
    monkeypatch.delattr(utils, "DeferredStopCheck", raising=False)
    with pytest.raises(RuntimeError, match=r"a deferred stop check needs transformers >= 5.17; this is \d"):
        tokgen.generate("generate() dynamic sync", tiny, batch_size=2, max_seqlen=4)


def test_the_registry_entries_force_it_around_generate(check, monkeypatch, tiny):
    """`generate() … deferred` and `… sync` run transformers' generate() with the check forced on and off;
    what transformers 5.1.0 makes of it (nothing) gives the naive tokens."""
    seen = []
    generate = type(tiny).generate

    def spy(model, *args, **kwargs):
        seen.append(check.is_supported("cuda", None, False, False))
        return generate(model, *args, **kwargs)

    monkeypatch.setattr(type(tiny), "generate", spy)
    naive = tokgen.generate("naive", tiny, batch_size=2, max_seqlen=6)
    for name in ("generate() dynamic deferred", "generate() dynamic sync", "generate() dynamic"):
        assert torch.equal(tokgen.generate(name, tiny, batch_size=2, max_seqlen=6), naive), name
    assert seen == [True, False, False]  # forced on, forced off, transformers' own (cuda: off)
