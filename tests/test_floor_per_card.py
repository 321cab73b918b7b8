"""One floor per card (notebook 12 reads notebook 10's and 07's timings), and notebook 10's K sweep read
round by round (its right panel) with the GPU's busy time per K."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from tokgen import bandwidth, display, results  # noqa: E402

TEN, TWELVE = "166eb039-e74d-b137", "4e64a580-d58c-fe1a"  # the reviewed run: notebook 10's card, notebook 12's
RUN = {"commit": "73e5127ea756", "gpu": "NVIDIA H100 80GB HBM3", "gpu_sms": "all"}


@pytest.fixture
def on_twelves_card(monkeypatch, tmp_path):
    """This process: notebook 12 of commit 73e5127 on card 4e64a580; data/ under tmp_path."""
    here = {**results.environment(), **RUN, "gpu_uuid": TWELVE}
    monkeypatch.setattr(results, "environment", lambda: here)
    monkeypatch.setattr(bandwidth, "environment", lambda: here)
    (tmp_path / "data").mkdir()
    return tmp_path


def bandwidths(folder, *rows):
    """Notebook 10's bandwidth table: (card, GB/s, run) rows."""
    pd.DataFrame([{**RUN, **run, "gpu_uuid": card, "bandwidth_gb_s": bw} for card, bw, run in rows]).to_csv(
        folder / "data" / "10_bandwidth.csv", index=False)  # fmt: skip


def timed(card):
    return pd.DataFrame({"variant": ["naive", "graph_triton_fused K=4"], "gpu_uuid": card})


def test_card_of_names_the_one_card_of_the_rows():
    assert bandwidth.card_of(timed(TEN)) == TEN
    assert bandwidth.card_of(pd.DataFrame({"gpu_uuid": [TEN, TWELVE]})) is None  # two cards: no one card
    assert bandwidth.card_of(pd.DataFrame({"gpu_uuid": [float("nan")]})) is None
    assert bandwidth.card_of(pd.DataFrame({"variant": ["naive"]})) is None


def test_another_notebooks_timings_get_the_bandwidth_recorded_on_the_card_that_timed_them(on_twelves_card):
    folder = on_twelves_card
    bandwidths(folder, (TEN, 2976.93, {}))
    ten = bandwidth.floor_bandwidth(timed(TEN), "10", folder, 2950.49, also_printed="task floor and × task floor")
    assert ten["bandwidth_gb_s"] == 2976.93 and ten["from"] == "notebook 10" and ten["card"] == TEN  # not 2950.49
    assert ten["note"] == ("Notebook 10's timings were measured on GPU 166eb039; their floors use the copy bandwidth "
                           "notebook 10 recorded in this run on that card, 2,977 GB/s (this notebook runs on GPU "
                           "4e64a580).")  # fmt: skip
    # the same timing, one floor: notebook 10's 20.617 ms at 2,976.93 GB/s, not 20.802 ms at 2,950.49 GB/s
    nbytes = 20.617268680371126 * 2976.9269320544736 * 1e6
    assert nbytes / ten["bandwidth_gb_s"] / 1e6 == pytest.approx(20.617, abs=1e-2)
    seven = bandwidth.floor_bandwidth(timed(TWELVE), "07", folder, 2950.49)  # timed here, no record of 10's here
    assert seven["bandwidth_gb_s"] == 2950.49 and seven["from"] == "this card"
    assert seven["note"] == ("Notebook 07's timings were measured on this card (GPU 4e64a580); their floors use its "
                             "copy bandwidth, 2,950 GB/s (section 1).")  # fmt: skip
    bandwidths(folder, (TWELVE, 2950.0, {}), (TEN, 2976.93, {}), (TWELVE, 2951.0, {}))  # both cards recorded
    assert bandwidth.floor_bandwidth(timed(TWELVE), "07", folder, 1.0)["bandwidth_gb_s"] == 2951.0  # its card's last
    assert bandwidth.floor_bandwidth(timed(TEN), "10", folder, 1.0)["bandwidth_gb_s"] == 2976.93


def test_without_a_record_on_their_card_the_sentence_says_which_numbers_differ(on_twelves_card):
    folder = on_twelves_card
    bandwidths(folder, (TEN, 2976.93, {"commit": "9d6c84b80aa0"}))  # another run's record: not this run's
    ten = bandwidth.floor_bandwidth(timed(TEN), "10", folder, 2950.49, also_printed="task floor and × task floor")
    assert ten["bandwidth_gb_s"] == 2950.49 and ten["from"] == "this card"
    assert ten["note"] == ("Notebook 10's timings were measured on GPU 166eb039, where notebook 10 recorded no copy "
                           "bandwidth in this run; their floors use this card's (GPU 4e64a580), 2,950 GB/s: another "
                           "card than the one that timed them, so their task floor and × task floor differ from those "
                           "notebook 10 prints for the same timings.")  # fmt: skip
    kernels = bandwidth.floor_bandwidth(timed(TEN), "10", folder, 2950.49, what="kernel times")
    assert kernels["note"].endswith("another card than the one that timed them, so these floors are not that card's.")
    assert kernels["note"].startswith("Notebook 10's kernel times were measured on GPU 166eb039")
    bandwidths(folder, (TWELVE, 2950.0, {}))  # this run, but only this card's
    assert bandwidth.floor_bandwidth(timed(TEN), "10", folder, 2950.49)["from"] == "this card"
    nameless = bandwidth.floor_bandwidth(timed(float("nan")), "07", folder, 2950.49)  # rows that name no card
    assert "measured on a GPU no row names" in nameless["note"] and nameless["bandwidth_gb_s"] == 2950.49


def k_sweep():
    """Notebook 10's rows: generator G at K = 1, 2, 4, 8 (K = 2 ×1.25 faster and K = 8 ×0.8 as fast as K = 1
    in every round), H at K = 4 only, and naive (no K)."""
    noise = [1.0, 1.3, 0.8, 1.1, 0.9, 1.2, 1.05, 0.95]
    rows = [("naive", "naive", float("nan"), 100.0, 90.0), ("G K=1", "G", 1.0, 10.0, 9.0),
            ("G K=2", "G", 2.0, 10.0 / 1.25, 8.9), ("G K=4", "G", 4.0, 10.0, 9.1), ("G K=8", "G", 8.0, 10.0 / 0.8, 9.5),
            ("H K=4", "H", 4.0, 5.0, 4.0)]  # fmt: skip
    return pd.DataFrame([{"variant": v, "generator": g, "steps_per_graph": k, "steps": 100, "median_ms": m,
                          "gpu_busy_ms": busy, "times_ms": ";".join(str(m * f) for f in noise)}
                         for v, g, k, m, busy in rows])  # fmt: skip


def test_each_k_is_set_against_k_1_round_by_round_and_drawn_with_its_interval():
    got = display.speedups_vs_k(k_sweep())
    assert list(got["variant"]) == ["G K=2", "G K=4", "G K=8"] and set(got["vs"]) == {"G K=1"}  # H: one K only
    assert list(got["speedup"]) == pytest.approx([1.25, 1.0, 0.8])
    assert list(got["outcome"])[::2] == ["faster", "slower"]
    fig, ax = plt.subplots()
    drawn = display.plot_speedup_vs_k(ax, k_sweep())
    line = ax.get_lines()[0]
    assert list(line.get_ydata()) == pytest.approx([1.0, 1.25, 1.0, 0.8])  # K = 1 at ×1, then the paired speed-ups
    assert len(ax.collections[0].get_segments()) == 3  # one interval bar per K against K = 1
    low, high = drawn["interval_low"], drawn["interval_high"]
    assert all(lo <= s <= hi for lo, s, hi in zip(low, drawn["speedup"], high))
    title = ax.get_title().replace("\n", " ")  # rvC15 S2: which interval the bar is, which one the ±5% call reads
    assert "bar: its 95% interval; the ±5% call reads the 90% equivalence interval" in title
    plt.close(fig)


def test_the_gpus_busy_time_per_k_says_the_steps_each_k_computes():
    assert display.busy_by_k(k_sweep()) == [
        "`G`, the GPU's busy time per generation of 100 steps (one profiled generation each, not a paired "
        "comparison): K = 1 9.00 ms (100 steps computed), K = 2 8.90 ms (100 steps computed), K = 4 9.10 ms "
        "(100 steps computed), K = 8 9.50 ms (104 steps computed)."
    ]


def test_another_runs_medians_are_no_ranking_and_point_to_its_paired_comparisons():
    said = display.other_run_medians_note("07")
    assert "not a ranking" in said and said.endswith("round by round, in notebook 07.")
