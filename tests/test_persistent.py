"""The persistent step kernel's bound (issue 47, item 3): its plan on the CPU, its kernels on a GPU."""

import random

import numpy as np
import pandas as pd
import pytest

import tokgen
from tokgen import persistent, waterfall
from tokgen.bench import round_orders
from tokgen.stats import compare_rounds


def test_step_stages_read_the_fused_steps_bytes_in_its_order(tiny):
    B, N = 3, 8
    step = tokgen.FusedStep(tiny, B, N)
    for pos in (0, 5, N - 1):
        stages = persistent.step_stages(step, pos)
        calls = waterfall.fused_step_calls(tiny, B, pos)
        assert [name for name, _ in stages] == ["embedding"] + [w for _, w, b in calls[1:] if b]
        assert [4 * sum(n for _, n in segs) for _, segs in stages] == [b for _, _, b in calls if b]
    with pytest.raises(ValueError, match="pos must be in 0..7"):
        persistent.step_stages(step, N)


def test_tile_plan_covers_every_float_once_in_stage_order_and_deals_tiles_round_robin():
    base = 1 << 20
    stages = [("a", [(base, 40), (base + 4096, 7)]), ("b", [(base + 8192, 32)]), ("c", [(base + 640, 3)])]
    p = persistent.tile_plan(stages, tile=16, programs=3, base=base)
    assert p["offs"].tolist() == [0, 16, 32, 1024, 2048, 2064, 160]
    assert p["lens"].tolist() == [16, 16, 8, 7, 16, 16, 3]
    assert p["stage"].tolist() == [0, 0, 0, 0, 1, 1, 2]
    assert p["counts"].tolist() == [4, 2, 1] and p["needs"].tolist() == [0, 4, 2]
    assert p["stage_start"].tolist() == [0, 4, 6, 7] and p["bytes"] == 4 * (40 + 7 + 32 + 3)
    assert p["plan"].tolist() == [[0, 3, 6, -1], [1, 4, -1, -1], [2, 5, -1, -1]]
    dealt = p["plan"][p["plan"] >= 0]
    assert sorted(dealt.tolist()) == list(range(7))


def test_tile_plan_refuses_what_the_kernel_cannot_read():
    with pytest.raises(ValueError, match="16-byte aligned"):
        persistent.tile_plan([("a", [(1000 + 8, 4)])], tile=16, programs=2, base=1000)
    with pytest.raises(ValueError, match="multiple of 16"):
        persistent.tile_plan([("a", [(1000, 4)])], tile=24, programs=2, base=1000)
    with pytest.raises(ValueError, match="programs must be a positive integer"):
        persistent.tile_plan([("a", [(1000, 4)])], tile=16, programs=0, base=1000)


def test_persistent_stream_refuses_an_unknown_mode(tiny):
    with pytest.raises(ValueError, match="mode must be one of stream, barrier"):
        persistent.PersistentStream(tiny, 2, 4, mode="megakernel")


def test_interleaved_times_calls_each_once_per_round_after_a_warm_up():
    calls = []
    orders = round_orders(2, 4, random.Random(7))  # what drawn_orders gives for a recorded seed of 7
    times = persistent.interleaved_times({"a": lambda: calls.append("a") or 1.0, "b": lambda: calls.append("b") or 2.0},
                                         orders)  # fmt: skip
    assert times == {"a": [1.0] * 4, "b": [2.0] * 4} and len(calls) == 10
    assert sorted(calls[2:4]) == ["a", "b"]
    assert calls[2:] == [["a", "b"][i] for order in orders for i in order]  # each round in its recorded order


@pytest.mark.gpu
@pytest.mark.parametrize("mode", list(persistent.MODES))
def test_persistent_stream_reads_every_tile_once_and_every_wait_ends(mode):
    model = tokgen.build_model("gpt2", "cuda")
    ps = persistent.PersistentStream(model, 4, 6, mode=mode, tile=2048)
    ps.run()
    assert ps.check(positions=range(6)) == []
    ps.partial[2, 0] += 1.0  # a tile that added up wrong must show
    assert any("pos 2 stage" in line for line in ps.check(positions=[2]))


@pytest.mark.gpu
def test_pure_streaming_moves_at_least_half_the_copy_bandwidth():
    """Both stream tilings on a GPU (rv19B S2), each round recorded (rv19B S3): the rounds' median is the row's
    µs per step, the paired cell recomputes from them, and the findings quote the stream that the paired
    rounds show faster, or both (rr20h S2)."""
    import statistics

    model = tokgen.build_model("gpt2", "cuda")
    variants = {"stream": {"mode": "stream"}, "stream, 4096-float tiles": {"mode": "stream", "tile": 4096}}
    table, info = persistent.persistent_bound(model, 32, 20, variants, rounds=8)
    rows = table.set_index("variant")
    assert rows["tile"].tolist() == [2048, 4096]
    for name in variants:
        row = rows.loc[name]
        assert row["note"] == persistent.MODES["stream"], row["note"]
        streamed_us = info["streamed_bytes"][name] / info["bandwidth_gb_s"] / 1e3 / 20
        assert streamed_us / row["us_per_step"] >= 0.5
        assert np.isclose(info["streamed_bytes"][name], info["floor_bytes"], rtol=0.01)
        rounds = persistent.bound_rounds(table, name)  # µs per step of each of the 8 rounds, as timed
        assert len(rounds) == 8 and rounds == pytest.approx([1e3 * t / 20 for t in info["times"][name]], abs=1e-4)
        assert statistics.median(rounds) == pytest.approx(row["us_per_step"], abs=1e-4)
        assert row["x_floor"] == pytest.approx(row["us_per_step"] / info["floor_us_per_step"])
    paired = persistent.paired_cell(table, "stream, 4096-float tiles")
    assert paired.startswith("×") and rows.loc["stream, 4096-float tiles", "interval_low"] > 0, paired
    # the findings quote the stream the paired rounds show faster, or both (rr20h S2): never by median alone
    text, names = persistent.bound_findings(table), list(variants)
    outcome = compare_rounds(persistent.bound_rounds(table, names[0]), persistent.bound_rounds(table, names[1]))
    if outcome["outcome"] in ("faster", "slower"):
        faster = names[1] if outcome["outcome"] == "faster" else names[0]
        assert f"the floor at `{faster}`, faster round by round than the other tiling streamed" in text, text
    else:
        assert "the floor at the 2 tiles (`stream`, `stream, 4096-float tiles`), not told apart round by" in text, text


def test_the_bound_sets_no_extra_time_against_the_graph_replays(monkeypatch):
    """An `extra` entry (a generator's host-clock time) gets its median and floor distance but no
    speed-up against the CUDA-event times of the replays (review r8: the CSV held one, "slower")."""

    class Fake:  # a variant that builds, checks and replays without a GPU
        tile, programs, warps, bytes = 2048, 4, 4, 1

        def __init__(self, *args, **kw):
            self.ms = kw.get("programs")

        def graph(self):
            return self

        def replay(self):
            pass

        def check(self):
            return []

    monkeypatch.setattr(persistent, "FusedStep", lambda *a: None)
    monkeypatch.setattr(persistent, "PersistentStream", Fake)
    monkeypatch.setattr(persistent, "_event_ms", lambda run: 10.0)
    model = tokgen.build_model("tiny", "cpu")
    table, _ = persistent.persistent_bound(model, 2, 10, {"stream": {"mode": "stream"}, "barrier": {"mode": "barrier"}},
                                           rounds=6, extra={"host": lambda: 30.0}, bandwidth_gbs=1000.0)  # fmt: skip
    rows = table.set_index("variant")
    assert rows.loc["barrier", "outcome"] == "no effect" and rows.loc["barrier", "speedup_vs_stream"] == 1.0
    assert rows.loc["host", "us_per_step"] == 3000.0  # its time, its floor distance
    assert np.isnan(rows.loc["host", "speedup_vs_stream"]) and pd.isna(rows.loc["host", "outcome"])
    # rv19B S3: each round's µs per step recorded for every timed row (10 ms over 10 steps: 1000 µs)
    assert rows.loc["stream", "times_us"] == ";".join(["1000.0000"] * 6)
    assert rows.loc["host", "times_us"] == ";".join(["3000.0000"] * 6)
    assert persistent.paired_cell(table, "barrier").startswith("×1.00 (")


def test_the_paired_column_recomputes_each_speed_up_from_the_recorded_rounds():
    """rv19B S3: a paired speed-up against stream from `times_us`, with its interval and outcome, and
    why where there is none: the base itself, another clock, not timed, rounds not recorded."""
    from tokgen.stats import compare_rounds
    from tokgen.voice import speedup_text

    stream = [194.0, 195.0, 196.0, 194.5, 195.5, 194.2, 195.1, 194.8]
    barrier = [2 * t + d for t, d in zip(stream, [0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0.05, -0.05])]
    bound = pd.DataFrame({"variant": ["stream", "barrier", "counters", "old", "graph_triton_fused K=4"],
                          "mode": ["stream", "barrier", "counters", "prefetch", ""],
                          "x_floor": [1.32, 2.42, float("nan"), 1.9, 3.2],
                          "times_us": [";".join(map(str, stream)), ";".join(map(str, barrier)), "", float("nan"),
                                       "480.0;481.0"]})  # fmt: skip
    cell = persistent.paired_cell(bound, "barrier")
    assert cell == speedup_text(compare_rounds(stream, barrier))
    assert cell.startswith("×0.50 (") and "slower" in cell  # half the speed, every round
    assert persistent.paired_cell(bound, "stream") == "—"
    assert persistent.paired_cell(bound, "graph_triton_fused K=4") == "another clock (the host's): not paired"
    assert persistent.paired_cell(bound, "counters") == "not timed"
    assert persistent.paired_cell(bound, "old") == "rounds not recorded"
    assert persistent.paired_cell(bound, "barrier", "counters") == "`counters` not timed"
    assert persistent.paired_text(bound, "stream", "barrier").startswith("`stream` against `barrier`, paired round by "
                                                                         "round: ×2.00 (")  # fmt: skip


def test_bound_findings_say_the_range_and_what_came_within_the_target():
    import pandas as pd

    from tokgen.persistent import bound_findings

    bound = pd.DataFrame({"variant": ["stream", "barrier", "prefetch2", "counters", "graph_triton_fused K=4"],
                          "mode": ["stream", "barrier", "prefetch2", "counters", ""],
                          "x_floor": [1.11, 1.96, 1.49, float("nan"), 2.48],
                          "note": ["", "", "", "RuntimeError: a wait never ended", ""]})  # fmt: skip
    text = bound_findings(bound)
    assert text.startswith("Per step, against the floor: streaming alone, `stream`, takes 1.11× the floor; ")
    assert "with the step's dependency points, 1.49–1.96× across the 2 designs and tilings tried (1 within 1.5×, " \
        "computing nothing)" in text  # fmt: skip
    assert "`graph_triton_fused K=4` 2.48× (by the host's clock" in text
    assert "`counters` not timed (RuntimeError: a wait never ended)" in text
    assert "(0 within 1.2×" in bound_findings(bound, target=1.2)
    # rvB12 N2: 1.504 beside "0 within 1.5×" reads 1.504, not 1.50 (on the other side of the target)
    over = bound.assign(x_floor=[1.11, 1.96, 1.504, float("nan"), 2.48])
    assert "points, 1.504–1.96× across the 2 designs and tilings tried (0 within 1.5×" in bound_findings(over)


def test_bound_findings_quote_the_stream_the_paired_rounds_show_faster_and_else_choose_none():
    """rv19B S2, rr20h S2: streaming alone at one tile is no bound for the design; with two tilings streamed, the
    findings quote the one that the rounds, paired round by round, show faster (not the lower median), whatever the
    table's order; where the rounds do not tell them apart, or were not recorded, both without choosing."""
    fast = ";".join(str(t) for t in [100, 101, 99, 102, 100, 98, 101, 100, 99, 103, 100, 101])  # 12 rounds
    slow = ";".join(str(t) for t in [112, 113, 111, 114, 112, 110, 113, 112, 111, 115, 112, 113])  # each 12 µs more
    bound = pd.DataFrame({"variant": ["stream", "barrier", "stream, 4096-float tiles"],
                          "mode": ["stream", "barrier", "stream"], "x_floor": [1.32, 2.42, 1.18],
                          "times_us": [slow, "", fast],
                          "note": [persistent.MODES["stream"], "", persistent.MODES["stream"]]})  # fmt: skip
    text = persistent.bound_findings(bound)
    assert text.startswith(
        "Per step, against the floor: streaming alone takes 1.18× the floor at `stream, 4096-float tiles`, faster "
        "round by round, by more than 5%, than the other tiling streamed (`stream` 1.32×); with the step's"
    ), text
    # the lower median is not what chooses: here the rounds show `stream` faster though its median is the higher
    swapped = bound.assign(times_us=[fast, "", slow])
    assert persistent.bound_findings(swapped).startswith(
        "Per step, against the floor: streaming alone takes 1.32× the floor at `stream`, faster round by round, by "
        "more than 5%, than the other tiling streamed (`stream, 4096-float tiles` 1.18×); "
    )
    mixed = ";".join(str(t) for t in [112, 89, 111, 91, 112, 88, 113, 90, 111, 92, 112, 89])  # either way by turns
    apart = persistent.bound_findings(bound.assign(times_us=[mixed, "", fast]))
    assert apart.startswith(
        "Per step, against the floor: streaming alone: 1.32× and 1.18× the floor at the 2 tiles "
        "(`stream`, `stream, 4096-float tiles`), not told apart round by round; "
    ), apart
    # rv21B S2: 3% slower every round is real but shown within ±5%: a tie by the band's rule, no tiling chosen
    close = ";".join(str(round(t * 1.03, 3)) for t in [100, 101, 99, 102, 100, 98, 101, 100, 99, 103, 100, 101])
    tied = persistent.bound_findings(bound.assign(x_floor=[1.32, 2.42, 1.36], times_us=[fast, "", close]))
    assert tied.startswith(
        "Per step, against the floor: streaming alone: 1.32× and 1.36× the floor at the 2 tiles "
        "(`stream`, `stream, 4096-float tiles`), within ±5% of each other round by round: `stream, 4096-float tiles` "
        "against `stream`, its equivalence interval ×0.97–×0.97 (slower by at most 3.0%); "
    ), tied  # exactly 3% every round: both ends are 1/1.03, printed alike (rr21d N1 adds digits only to ends apart)
    assert "faster round by round" not in tied
    # rr21d S2: about 5% slower each round, its equivalence interval ×0.950–×0.954 across the band's edge ×1/1.05:
    # neither beyond the band nor within it, so no tiling is chosen and the text says the pair is not shown apart
    straddle = ";".join(map(str, [105.1, 106.0, 104.3, 107.2, 104.7, 103.1, 106.8, 105.6, 103.5, 107.4, 104.6, 106.1]))
    neither = persistent.bound_findings(bound.assign(x_floor=[1.32, 2.42, 1.39], times_us=[fast, "", straddle]))
    assert neither.startswith(
        "Per step, against the floor: streaming alone: 1.32× and 1.39× the floor at the 2 tiles "
        "(`stream`, `stream, 4096-float tiles`), not shown more than 5% apart round by round; "
    ), neither
    old = persistent.bound_findings(bound.drop(columns="times_us"))
    assert "1.32× and 1.18× the floor at the 2 tiles (`stream`, `stream, 4096-float tiles`), their rounds not " \
        "recorded: not compared; " in old  # fmt: skip
    assert persistent.MODES["stream"] == "no dependency point: streaming alone at this tile"
