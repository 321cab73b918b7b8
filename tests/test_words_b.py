"""Review 14's wording fixes in tokgen.display (rvC14 S3, rvB14 S5), each pinned with inputs whose answer is known
by hand."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from tokgen import display  # noqa: E402

INFLATED = "may be inflated by the profiler's host cost"


def test_idle_share_text_sets_the_whole_generation_beside_the_window_as_another_measure():
    """rvC14 S3: the committed run printed 74.0% profiled beside 78.9% unprofiled under "may be inflated by the
    profiler", as if the second checked the first; rr14 S2: a smaller whole-generation share would not show the
    profiler added nothing either. The caveat stays; the whole generation is said to be another measure."""
    for share, busy, idle in ((0.402, 0.85, "15.0%"), (0.740, 0.211, "78.9%")):
        text = display.idle_share_text(pd.Series({"g": 0.013, "h": share}), "h", busy)
        assert text.endswith(f"(`h`'s {INFLATED}, section 4; against the median of its unprofiled rounds, its GPU "
                             f"busy time leaves the GPU idle {idle} of a whole generation, set-up and prefill "
                             "included: another measure, not a check of the window's).")  # fmt: skip
    assert display.idle_share_text(pd.Series({"h": 0.25}), "h", float("nan")).endswith(f"`h`'s {INFLATED}, section 4).")


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


def test_idle_share_text_names_the_decoders_whose_kernels_overlapped_as_lower_bounds():
    """Review rvC16 S3: under PDL a kernel waiting for the one before counts as running, so the idle share of a
    decoder whose kernels overlapped (durations 981 µs against 582 µs busy) is a lower bound, not comparable with
    one whose kernels did not (820 against 820); a decoder with no kernel table (`r`) is not named."""
    kernels = pd.DataFrame({"variant": ["p", "p", "c"], "us_per_token": [600.0, 381.0, 820.0],
                            "own_us_per_token": [400.0, 182.0, 820.0]})  # fmt: skip
    share = pd.Series({"p": 0.025, "c": 0.111, "r": 0.773})
    text = display.idle_share_text(share, "x", 0.9, kernels)
    assert text == ("* GPU idle share of the profiled window: `p` 2.5%, `c` 11.1%, `r` 77.3%; `p`: kernels overlapped "
                    "(their durations add up to more than their busy time, section 5), and a kernel launched early "
                    "under PDL counts its wait for the one before as busy, so these shares are lower bounds on the "
                    "time no kernel did work, not comparable with those of decoders whose kernels did not overlap.")
    assert display.idle_share_text(share, "x", 0.9) == display.idle_share_text(share, "x", 0.9, kernels[:0])
    assert display.idle_share_text(share, "x", 0.9).endswith("`r` 77.3%.")  # without section 5's table: no clause
