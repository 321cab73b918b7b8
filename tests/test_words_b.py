"""Review 14's wording fixes in tokgen.display (rvC14 S3, rvB14 S5), each pinned with inputs whose answer is known
by hand."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from tokgen import display  # noqa: E402

INFLATED = "may be inflated by the profiler's host cost"


def test_idle_share_text_says_the_profiler_may_inflate_only_a_share_above_the_unprofiled_one():
    """rvC14 S3: the committed run printed 74.0% profiled beside 78.9% unprofiled under "may be inflated by the
    profiler"; the clause now needs the profiled share to be the larger, and both numbers are printed either way."""
    above = display.idle_share_text(pd.Series({"g": 0.013, "h": 0.402}), "h", 0.85)  # 40.2% profiled > 15.0%
    assert f"`h`'s {INFLATED}, section 4" in above
    assert "`h` 40.2%" in above and "leaves the GPU idle 15.0% of a whole generation" in above
    below = display.idle_share_text(pd.Series({"g": 0.013, "h": 0.740}), "h", 0.211)  # 74.0% profiled < 78.9%
    assert INFLATED not in below and "inflat" not in below
    assert "`h` 74.0%" in below and "leaves the GPU idle 78.9% of a whole generation" in below
    assert below.endswith("(`h`: against the median of its unprofiled rounds, its GPU busy time leaves the GPU idle "
                          "78.9% of a whole generation, set-up and prefill included: a different measure from the "
                          "window's, not a correction of it).")  # fmt: skip
    equal = display.idle_share_text(pd.Series({"h": 0.25}), "h", 0.75)  # the same share: not the larger
    assert INFLATED not in equal and "`h` 25.0%" in equal and "idle 25.0% of a whole generation" in equal


def test_sync_reading_names_a_blocking_copy_between_host_and_device_among_the_reasons():
    """rvB14 S5: `generate()`'s 3 flagged syncs that read no value are its set-up's blocking host-to-device copies;
    the reason list names that kind beside stream waits and data-dependent sizes, claiming none for the row."""
    row = {"generator": "generate() static", "tokens": 32, "local_scalar_dense": 68, "sync_debug_warnings": 71,
           "stream_syncs": 71, "event_syncs": 0, "device_syncs": 0}  # fmt: skip
    audit = pd.DataFrame([row])
    line = next(line for line in display.sync_reading(audit) if "`generate() static`" in line)
    assert "3 of the 71 flagged syncs read no value through `.item()`" in line
    assert "a blocking copy between host and device such as `torch.tensor(..., device='cuda')`" in line
    assert "a stream wait such as `Stream.synchronize()`" in line and "like `nonzero()`" in line
