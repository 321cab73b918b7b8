"""Re-review rr22a (of fix22a, fix22b and notebook 01's markdown), the findings fixed on branch fix22g, each pinned
with data whose answer is known."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tokgen import display, voice

sys.path.insert(0, str(Path(__file__).parent))
from test_r11_claims import power_rows  # noqa: E402  (notebook 01's rows, round j: c_j · N^k_j)

# --- rr22a S1: solution 01's reading follows the printed, outward-rounded range ---


def test_solution_01s_reading_is_read_from_the_printed_one_decimal_range():
    """rr22a S1: over 10 rounds whose slopes are 1.02 (five) and 1.46 (five), the bootstrap range is 1.02–1.46,
    printed "1.0–1.5" (one decimal, outward); read from the raw ends it said "nearer 1 than 2 … (its range lies below
    1.5)" beside a printed range that ends on 1.5. Read from the printed ends, it holds 1.1 and 1.5: undecided. The
    reference's 1.12–1.46 prints "1.1–1.5" and reads the same (not "nearer 1 than 2", 1.1 being "near 1"); 1.52–1.86
    prints "1.5–1.9", where 1.9 is "near 2": that is left open."""
    live = power_rows([1.0] * 10, [1.02] * 5 + [1.46] * 5).assign(batch_size=1)
    reference = power_rows([1.0] * 10, [1.12] * 5 + [1.46] * 5)
    assert np.allclose(display.slope_range(live), (1.02, 1.46)) and np.allclose(display.slope_range(reference),
                                                                                 (1.12, 1.46))  # fmt: skip
    said = display.batch_slopes_text(live, reference)
    undecided = ("its range holds 1.1 and 1.5: these rounds do not decide whether it lies near 1, nearer 1 than 2 or "
                 "nearer 2 than 1")  # fmt: skip
    assert f"bootstrap range 1.0–1.5 over its 10 rounds): {undecided}. " in said
    assert f"(paired slope 1.29, bootstrap range 1.1–1.5): {undecided}." in said
    assert "lies below 1.5" not in said and "nearer 1 than 2: " not in said
    high = power_rows([1.0] * 10, [1.52] * 5 + [1.86] * 5).assign(batch_size=1)
    said = display.batch_slopes_text(high, reference)
    assert "bootstrap range 1.5–1.9 over its 10 rounds): nearer 2 than 1: " in said
    assert "(its range lies at or above 1.5); whether it lies near 2 (within 0.1 of 2), these rounds do not " in said
    many = power_rows([1.0] * 20, [1.02] * 10 + [1.46] * 10).assign(batch_size=1)  # 20 rounds: two decimals, as read
    assert "bootstrap range 1.02–1.46 over its 20 rounds): nearer 1 than 2" in display.batch_slopes_text(
        many, reference
    )


# --- rr22a S2, N1: the host probe's drift, by default, and over several comparisons ---


def probed(before, after, variant="a"):
    t = [100.0] * 10
    return pd.DataFrame([{"variant": variant, "status": "ok", "median_ms": 100.0, "times_ms": ";".join(map(str, t)),
                          "host_probe_ms_before": before, "host_probe_ms_after": after, "host_probe_min_ms": 3.06,
                          "host_probe_max_ms": 6.03}])  # fmt: skip


def test_host_probe_text_flags_drift_by_default_as_notebook_10_calls_it():
    """rr22a S2: notebook 10 calls `host_probe_text(ok)` without `drift`; its committed probe went 4.54 → 3.26 ms
    (1.39× faster, beyond HOST_DRIFT 1.25), and its table said nothing of it. Now the default is HOST_DRIFT, one
    constant with `tokgen.gaps`'s (re-exported there); `drift=None` still says nothing."""
    from tokgen import gaps

    assert voice.HOST_DRIFT is gaps.HOST_DRIFT and voice.HOST_DRIFT == 1.25
    said = voice.host_probe_text(probed(4.54, 3.26))
    assert said.endswith("; the probe ran 1.39× faster after than before: the host's speed changed during these "
                         "rounds (its effect on the rounds is not measured).")  # fmt: skip
    assert "the probe ran" not in voice.host_probe_text(probed(4.54, 3.26), drift=None)
    assert voice.host_probe_text(probed(4.54, 4.0)).endswith("whether the rounds' times followed the host's speed is "
                                                             "not measured.")  # fmt: skip


def test_drift_over_several_comparisons_is_placed_in_those_comparisons_rounds():
    """rr22a N1: of three comparisons' probes, one 1.82× slower, one 1.50× faster, one steady: the change is said of
    those comparisons' rounds, not of "these rounds", and for the third, that whether its rounds followed the host is
    not measured; with every comparison flagged, no such clause."""
    three = pd.concat([probed(3.25, 5.915), probed(6.0, 4.0, "b"), probed(4.0, 4.1, "c")])
    assert voice.host_probe_text(three).endswith(
        "; the probe ran 1.82× slower after than before in 1 of 3 comparisons and 1.50× faster after than before in 1 "
        "of 3 comparisons: the host's speed changed during those comparisons' rounds (its effect on their rounds is "
        "not measured); for the other 1 comparison, whether the rounds' times followed the host's speed is not "
        "measured.")  # fmt: skip
    two = pd.concat([probed(3.25, 5.915), probed(3.0, 6.0, "b")])
    assert voice.host_probe_text(two).endswith(
        "in 2 of 2 comparisons: the host's speed changed during those comparisons' rounds (its effect on their rounds "
        "is not measured).")  # fmt: skip


# --- rr22a N2: the README's transformers versions ---


def test_transformers_versions_skip_a_missing_value_and_sort_as_versions():
    """rr22a N2: a regime whose rows lack the version raised TypeError (str against NaN in `sorted`); now those rows
    are left out ("not recorded" where no row has one). 5.9.0 sorts before 5.17.0 (as strings it came after)."""
    from tokgen_tools.readme import transformers_versions

    whole = pd.DataFrame({"notebook": ["01_naive", "02_kv_cache", "solution 11_sync_audit"],
                          "transformers": ["5.17.0", "5.17.0", "5.9.0"]})  # fmt: skip
    sliced = pd.DataFrame({"notebook": ["01_naive"], "transformers": [float("nan")]})
    said = transformers_versions({"whole GPU": whole, "8 SMs": sliced})
    assert said == "5.9.0, 5.17.0 (solution 11_sync_audit on 5.9.0)"
    assert transformers_versions({"whole GPU": whole.drop(columns="transformers")}) == "not recorded"
    assert transformers_versions({"whole GPU": whole.assign(transformers=float("nan"))}) == "not recorded"
