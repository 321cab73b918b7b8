"""The quick run (tokgen_tools.quick, issue 48): end to end in smoke mode, its refusals before anything
runs, and its report's sentences against the data they are read from."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tokgen.bench import drawn_orders
from tokgen.claims import claim
from tokgen.registry import label
from tokgen.results import ROOT, load
from tokgen.stats import FASTER, NO_EFFECT, SLOWER, UNDECIDED, compare_rounds, gain, shared_rounds
from tokgen.voice import speedup_text
from tokgen_tools import quick

SMALL = ["--smoke", "--max-seqlen", "8", "--runs", "2", "--max-runs", "2"]  # the smoke sizes, shorter still


RECHECKS = []  # the `recheck` the smoke run's 06 stage passed to `tokgen.bench.profile_windows`, per call


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import tokgen.bench

    out, real = tmp_path_factory.mktemp("quick"), tokgen.bench.profile_windows

    def profile_windows(*args, **kwargs):
        RECHECKS.append(kwargs.get("recheck"))
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokgen.bench, "profile_windows", profile_windows)
        return quick.main([*SMALL, "--out", str(out)]), out


def test_the_smoke_run_writes_its_page_figures_and_tables_with_provenance(run):
    code, out = run
    assert code == 0
    assert {"report.md", "quick_regimes.png", "quick_runtimes.png"} <= {p.name for p in out.iterdir()}
    stages = load("quick_stages", out)
    assert list(stages["status"]) == ["ok"] * 5
    for table in ("06_eos_sync_profile", "07_pipelining", "quick_agreement", "quick_stages"):
        df = load(table, out)
        provenance = {"gpu", "gpu_uuid", "driver", "torch", "triton", "transformers", "commit", "params"}
        assert provenance <= set(df.columns), table
        params = json.loads(df["params"].iloc[0])
        assert params["MAX_SEQLEN"] == 8 and params["SIZE"] == "tiny" and "MEMORY_GB" in params


def test_the_profiled_windows_ran_in_the_orders_that_their_recorded_seed_draws(run):
    _, out = run
    rows = load("06_eos_sync_profile", out)
    (seed,) = rows["order_seed"].unique()
    names = [label(g) for g in ("kv_static", "kv_static_no_check", "pipelined_static")]
    _, orders = drawn_orders(len(names), rows["window"].nunique(), int(seed))
    assert rows["variant"].tolist() == [names[i] for order in orders for i in order]
    assert set(rows["attempt"]) == {0}  # the quick run profiles no window again (review rr22b S2)
    assert RECHECKS == [None]  # no recheck passed: on a CPU the ratios may not ask, so the rows alone cannot show it


def test_the_page_says_what_its_tables_hold(run):
    _, out = run
    report = (out / "report.md").read_text()
    ok = load("07_pipelining", out).query("status == 'ok'")
    for compiled in (False, True):  # pipelining against the sync, in that direction, as the one renderer says it
        g = gain(ok, label("kv_static", compiled=compiled), label("pipelined_static", compiled=compiled))
        assert f"{'compiled' if compiled else 'eager'}, pipelined vs sync {speedup_text(g)}" in report
    rows = {int(line.split("|")[1]): line for line in report.splitlines() if line.startswith(("| 6 ", "| 7 ", "| 10 "))}
    for n in (6, 7):  # this run's verdict, then the reference whole GPU's, read by tokgen.claims
        mine, ours = claim(n, out), claim(n, ROOT)
        cells = [c.strip() for c in rows[n].split("|")]
        assert cells[3] == mine["verdict"] == "no verdict (smoke run)"
        assert cells[4] == (f"{ours['verdict']} ({ours['stability']:.0%})" if ours["stability"] == ours["stability"]
                            else ours["verdict"])  # fmt: skip
    # the page's shares are over the rounds every interleaved variant ran, as its note says
    whole = shared_rounds(load("07_pipelining", ROOT)).set_index("variant")["gpu_busy_share"]
    line = next(x for x in report.splitlines() if x.startswith("| whole GPU (reference"))
    assert f"| {whole['kv_static']:.0%} | {whole['compiled kv_static']:.0%} |" in line
    assert quick.STABILITY_NOTE in report  # how a verdict without a percentage was reached
    stages = load("quick_stages", out)
    assert f"Time budget: {quick.QUICK['BUDGET_S']} s (`--budget-s`). Host CPU: {stages['cpu'].iloc[0]}." in report
    assert "logical CPUs" in stages["cpu"].iloc[0]  # the host by name, beside the GPU
    assert "; ".join(f"{r.stage} {r.status} in {quick._seconds(r.seconds)}" for r in stages.itertuples()) in report
    assert (quick._seconds(0.146), quick._seconds(9.94), quick._seconds(10.2)) == ("0.1 s", "9.9 s", "10 s")
    agree = load("quick_agreement", out)
    assert f"{int(agree['ok'].sum())} of {len(agree)} checks returned the naive generator's tokens" in report
    assert agree["ok"].all() and len(agree) == 2 * len(ok)  # every timed variant, with and without an early stop


def test_a_size_that_does_not_fit_the_cap_is_recorded_not_run(tmp_path):
    # tiny model, B = 4, N = 8: a KV-cache generation needs ~15 MB with the weights, the naive one ~25 MB
    assert quick.main([*SMALL, "--memory-gb", "0.02", "--out", str(tmp_path)]) == 0
    skipped = load("quick_skipped", tmp_path)
    assert list(skipped["variant"]) == ["naive"] and skipped["why"].iloc[0].startswith("did not fit in 0.02 GB")
    results = load("07_pipelining", tmp_path)
    assert "naive" not in set(results["variant"]) and json.loads(results["params"].iloc[0])["MEMORY_GB"] == 0.02
    report = (tmp_path / "report.md").read_text()
    assert "Not timed: `naive` did not fit in 0.02 GB" in report
    assert "Memory cap 0.02 GB" in report and "Not checked: the naive generator, the reference, did not fit." in report
    assert claim(10, tmp_path)["verdict"] in ("not measured", "no verdict (smoke run)")


@pytest.mark.parametrize(
    "args, said",
    [
        (["--memory-gb", "-1"], "--memory-gb -1: must be a positive number of gigabytes, e.g. 16, got '-1'"),
        (["--memory-gb", "lots"], "--memory-gb lots: must be a positive number of gigabytes"),
        (["--batch-size", "0"], "--batch-size 0: must be a positive integer, got '0'"),
        (["--max-seqlen", "2000"], "--max-seqlen: parameter MAX_SEQLEN = 2000: 2000 tokens exceed the tiny model's"),
        (["--memory-gb", "0.001"], "--memory-gb 0.001: B = 4, N = 12 needs at least"),
        (["--out", str(ROOT / "data")], "holds the reference results"),
    ],
)
def test_bad_input_is_one_line_naming_it_before_anything_runs(tmp_path, capsys, args, said):
    out = tmp_path / "never"
    argv = ["--smoke", "--out", str(out), *args] if "--out" not in args else ["--smoke", *args]
    assert quick.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("run_all --quick: ") and said in err, err
    assert not out.exists()


def _gain(base: list[float], times: list[float]) -> dict:
    return {"variant": "pipelined_static", "vs": "kv_static", **compare_rounds(base, times)}


BASE = [100.0 + 0.7 * i for i in range(12)]
FAST = _gain(BASE, [t / 1.10 for t in BASE])  # 10% faster in every round
SLOW = _gain(BASE, [t * 1.10 for t in BASE])
SAME = _gain(BASE, [t * (1.002 if i % 2 else 0.998) for i, t in enumerate(BASE)])  # inside ±5%, shown
OPEN = _gain(BASE[:3], [t / 1.10 for t in BASE[:3]])  # three rounds cannot decide
TINY = _gain(BASE, [t / 1.01 for t in BASE])  # 1% faster in every round: real, and shown inside ±5%
# undecided (p = 1, TOST not met), yet its interval lies below ×1.05: no gain beyond the band is possible
CAPPED = {**SAME, "outcome": UNDECIDED, "no_effect": False, "interval_low": 0.95, "interval_high": 1.04}


def test_known_comparisons_have_the_outcomes_the_sentences_are_built_on():
    assert [g["outcome"] for g in (FAST, SLOW, SAME, OPEN, TINY)] == [FASTER, SLOWER, NO_EFFECT, UNDECIDED, FASTER]
    assert TINY["no_effect"] and not FAST["no_effect"]


@pytest.mark.parametrize(
    "eager, compiled, opening",
    [
        (FAST, FAST, "The article's advice holds here: hiding the per-step sync with two streams pays, "),
        (SAME, FAST, "The article's advice holds here compiled only: "),
        (SLOW, SAME, "The article's advice pays no more than 5% here: hiding the per-step sync with two streams "
                     "gains "
                     "nothing beyond ±5%, and is really slower eager (by up to 10.0%: its interval reaches ×0.91): "),
        (SAME, SAME, "The article's advice pays no more than 5% here: hiding the per-step sync with two streams "
                     "gains "
                     "nothing beyond ±5%: "),
        (TINY, FAST, "The article's advice holds here compiled only: "),  # a real gain inside ±5% does not count
        (OPEN, SLOW, "These rounds cannot tell whether the article's advice pays here (eager undecided, a gain "
                     "beyond 5% still inside its interval, and is really slower compiled (by up to 10.0%: its interval "
                     "reaches ×0.91)): "),
        (CAPPED, SLOW, "The article's advice pays no more than 5% here: hiding the per-step sync with two streams "
                     "gains "
                       "no more than 5% (eager undecided, its interval ends below ×1.05), and is really slower "
                       "compiled (by up to 10.0%: its interval reaches ×0.91); a slowdown beyond 5% is not ruled out: "
                       "up to 5.3% eager (its interval reaches "
                       "×0.95): "),  # undecided, its interval ×0.95–×1.04: no gain beyond 5%, a 5.3% loss still open
    ],
)
def test_the_advice_follows_the_measured_outcomes(eager, compiled, opening):
    text = quick.advice_sentence({"eager": eager, "compiled": compiled})
    assert text == (f"{opening}eager, pipelined vs sync {speedup_text(eager)}; compiled, pipelined vs sync "
                    f"{speedup_text(compiled)}.")  # fmt: skip


def test_a_really_slower_comparison_is_sized_only_where_its_interval_reaches_past_the_band():
    """rvB12 S1 / rrA12 N3: slower with an interval ×0.96–×0.99 keeps its loss inside 5%: named by model alone;
    with ×0.93–×0.99 a loss up to 7.5% is open and said."""
    inside = {**SLOW, "interval_low": 0.96, "interval_high": 0.99}
    assert quick._slower_by("compiled", inside) == "compiled"
    assert quick._slower_by("compiled", {**inside, "interval_low": 0.93}) == (
        "compiled (by up to 7.5%: its interval reaches ×0.93)")  # fmt: skip


@pytest.mark.parametrize(
    "eager, compiled, slower",
    [  # the h100 quick page's two intervals: no gain beyond 5%, but a loss beyond it open in both
        ((0.94, 1.03), (0.91, 1.01), "; a slowdown beyond 5% is not ruled out: up to 6.4% eager (its interval "
                                     "reaches ×0.94) and up to 9.9% compiled (its interval reaches ×0.91)"),
        ((0.96, 1.03), (0.91, 1.01), "; a slowdown beyond 5% is not ruled out: up to 9.9% compiled (its interval "
                                     "reaches ×0.91)"),
        ((0.96, 1.03), (0.953, 1.01), ""),  # ×0.953 lies inside ×1/1.05 = ×0.952: no loss beyond 5% open
    ],
)
def test_the_advice_bounds_the_gain_and_names_a_loss_its_intervals_leave_open(eager, compiled, slower):
    """Undecided comparisons whose intervals end below ×1.05 bound the gain at 5%, not the loss: where an
    interval reaches below ×1/1.05 the sentence says how much slower (1/low − 1) is still open."""
    piped = {m: {**CAPPED, "interval_low": lo, "interval_high": hi} for m, (lo, hi) in
             (("eager", eager), ("compiled", compiled))}  # fmt: skip
    said = "; ".join(f"{m}, pipelined vs sync {speedup_text(g)}" for m, g in piped.items())
    assert quick.advice_sentence(piped) == (
        "The article's advice pays no more than 5% here: hiding the per-step sync with two streams gains no more "
        f"than 5% (eager and compiled undecided, their intervals end below ×1.05){slower}: {said}.")  # fmt: skip
    assert "±5% here" not in quick.advice_sentence(piped)


def _provenance(folder: Path, table: str, commit: str, started: str, uuid: str | None = "f08d5542-10fa", **rows):
    """A table of one row (or len(rows[k]) rows) under folder/data with its commit, run start and card."""
    n = len(next(iter(rows.values()))) if rows else 1
    frame = pd.DataFrame({**{k: v for k, v in rows.items()}, "commit": [commit] * n, "run_started": [started] * n,
                          **({"gpu_uuid": [uuid] * n} if uuid else {})})  # fmt: skip
    (folder / "data").mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "data" / f"{table}.csv", index=False)


def test_each_reference_column_names_the_commit_card_and_start_of_the_tables_it_reads(tmp_path):
    """The whole GPU's tables of one run; the slices' of another (no card recorded), their bandwidth read from
    the root's 13_slices row; the 16-SM slice's profile from a third commit: tables from 2 commits."""
    full, old, other = "7e7a36fd2e2d" + "0" * 28, "9d6c84b80aa0" + "1" * 28, "2b5f8d5bddcb"
    _provenance(tmp_path, "06_eos_sync_profile", full, "2026-11-27T09:08:15+00:00")
    _provenance(tmp_path, "07_pipelining", full, "2026-11-27T09:13:28+00:00")
    _provenance(tmp_path, "12_bandwidth", full, "2026-11-27T09:28:20+00:00", bandwidth_gb_s=[2952.7])
    _provenance(tmp_path, "13_slices", old, "2026-11-23T20:35:10+00:00", uuid=None, gpu_sms=[8, 16],
                copy_gbs=[625.0, 1137.0])  # fmt: skip
    sm8, sm16 = tmp_path / "slice" / "sm8", tmp_path / "slice" / "sm16"
    for folder, start in ((sm8, "2026-11-23T20:04:35+00:00"), (sm16, "2026-11-23T20:50:29+00:00")):
        _provenance(folder, "07_pipelining", old, start, uuid=None)
    _provenance(sm8, "06_eos_sync_profile", old, "2026-11-23T20:03:14+00:00", uuid=None)
    _provenance(sm16, "06_eos_sync_profile", other, "2026-11-25T10:00:00+00:00", uuid="4e1ff881-2a3e")
    regimes = {"whole GPU (reference)": tmp_path, "8 SMs": sm8, "16 SMs": sm16}
    assert quick._reference_bandwidth("8 SMs", sm8) == 625.0 and quick._reference_bandwidth("w", tmp_path) == 2952.7
    assert quick.reference_runs(regimes, ("07_pipelining",), bandwidth=True) == [
        "- whole GPU (reference): commit `7e7a36fd2e2d` (GPU f08d5542…; 07_pipelining started 2026-11-27 09:13 UTC, "
        "12_bandwidth started 2026-11-27 09:28 UTC)",
        "- 8 SMs: commit `9d6c84b80aa0` (no GPU UUID recorded; 07_pipelining started 2026-11-23 20:04 UTC, "
        "13_slices' 8-SM row started 2026-11-23 20:35 UTC) (**another commit than the whole GPU (reference)'s**)",
        "- 16 SMs: commit `9d6c84b80aa0` (no GPU UUID recorded; 07_pipelining started 2026-11-23 20:50 UTC, "
        "13_slices' 16-SM row started 2026-11-23 20:35 UTC) (**another commit than the whole GPU (reference)'s**)",
    ]
    claims_runs = quick.reference_runs(regimes, quick.CLAIM_TABLES)
    assert claims_runs[0] == ("- whole GPU (reference): commit `7e7a36fd2e2d` (GPU f08d5542…; 06_eos_sync_profile "
                              "started 2026-11-27 09:08 UTC, 07_pipelining started 2026-11-27 09:13 UTC)")
    assert claims_runs[2] == (
        "- 16 SMs: **tables from 2 commits**, not one run: commit `2b5f8d5bddcb` (GPU 4e1ff881…; 06_eos_sync_profile "
        "started 2026-11-25 10:00 UTC); commit `9d6c84b80aa0` (no GPU UUID recorded; 07_pipelining started "
        "2026-11-23 20:50 UTC) (**another commit than the whole GPU (reference)'s**)")  # fmt: skip
    assert quick.reference_regimes(tmp_path) == {"whole GPU (reference)": tmp_path, "8 SMs, 625 GB/s": sm8,
                                                 "16 SMs, 1,137 GB/s": sm16}  # fmt: skip


def test_each_reference_regime_names_its_gpu_and_a_quick_run_on_another_model_says_so(tmp_path):
    """The whole GPU's run on an H200, the slices' on an H100 (review rv19B M1): each label and run line names its
    GPU model; a page from an H100 says the whole GPU's card differs, one from an H200 says nothing; tables
    without a gpu column keep the plain labels (the test above)."""
    h200, h100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
    _provenance(tmp_path, "07_pipelining", "a403ef0e7c94", "2026-11-28T09:54:00+00:00", uuid="c5384e55-2e35",
                gpu=[h200])  # fmt: skip
    _provenance(tmp_path, "13_slices", "9d6c84b80aa0", "2026-11-23T20:35:10+00:00", uuid=None, gpu_sms=[8, 16],
                copy_gbs=[625.0, 1137.0], gpu=[h100, h100])  # fmt: skip
    sm8, sm16 = tmp_path / "slice" / "sm8", tmp_path / "slice" / "sm16"
    for folder in (sm8, sm16):
        _provenance(folder, "07_pipelining", "9d6c84b80aa0", "2026-11-23T20:04:35+00:00", uuid=None, gpu=[h100])
    regimes = quick.reference_regimes(tmp_path)
    assert regimes == {"whole GPU (reference, NVIDIA H200)": tmp_path,
                       "8 SMs, 625 GB/s of the NVIDIA H100 80GB HBM3": sm8,
                       "16 SMs, 1,137 GB/s of the NVIDIA H100 80GB HBM3": sm16}  # fmt: skip
    assert quick.reference_runs(regimes, ("07_pipelining",))[0] == (
        "- whole GPU (reference, NVIDIA H200): commit `a403ef0e7c94` (NVIDIA H200, GPU c5384e55…; 07_pipelining "
        "started 2026-11-28 09:54 UTC)")  # fmt: skip
    assert quick.other_card(h100, regimes) == (
        "This page ran on the NVIDIA H100 80GB HBM3; the reference run's whole GPU (reference) on another GPU model "
        "(NVIDIA H200): bandwidths and busy times differ by card as well as by host.")  # fmt: skip
    # review rv22B N7: "This page ran on an NVIDIA H200, the reference run's 8 SMs, ... of the H100 ... and 16 SMs, ...
    # on another GPU model" parsed badly: the regimes of each other model are named once, with the model apart
    assert quick.other_card(h200, regimes, {"08d8f342-0969"}) == (
        "This page ran on the NVIDIA H200 (GPU 08d8f342…); the reference run's 8 SMs, 625 GB/s and 16 SMs, 1,137 GB/s "
        "on another GPU model (NVIDIA H100 80GB HBM3); its whole GPU (reference) on another card of the same model, "
        "GPU c5384e55…: bandwidths and busy times differ by card as well as by host.")  # fmt: skip
    whole = {"whole GPU (reference, NVIDIA H200)": tmp_path}
    assert quick.other_card(h200, whole) == ""  # one model, this page's card not recorded: nothing
    assert quick.other_card(h200, whole, {"c5384e55-2e35"}) == ""  # the same card: nothing
    assert quick.other_card("", regimes) == ""  # a CPU smoke run names no card


def test_the_page_lists_the_reference_runs_under_both_tables(run):
    """The smoke run's page, rendered against the committed reference: both lists, one line per reference
    column, each naming the commit its 07_pipelining rows record."""
    _, out = run
    report = (out / "report.md").read_text()
    regimes = quick.reference_regimes()
    commit = str(load("07_pipelining", ROOT)["commit"].iloc[0])[:12]
    for lead, tables in ((quick.RUNS_LEAD.format(what="rows", tables="07_pipelining and the bandwidth's table"),
                          ("07_pipelining",)),
                         (quick.RUNS_LEAD.format(what="columns", tables=" and ".join(quick.CLAIM_TABLES)),
                          quick.CLAIM_TABLES)):  # fmt: skip
        block = report.split(lead + "\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
        here = quick.commits(load("quick_stages", out))  # this page's run: a reference of another commit says so
        assert block == quick.reference_runs(regimes, tables, bandwidth=tables == ("07_pipelining",), here=here)
        assert ("another commit than this page's" in block[0]) == (commit[:7] not in here)
        assert len(block) == len(regimes) and f"commit `{commit}`" in block[0]


def _timed(folder, eager_share: float, compiled_share: float, step_ms: float = 3.0) -> None:
    """A notebook-07-shaped table: kv_static and pipelined_static, eager and compiled, 12 rounds each;
    pipelining 10% faster eager, 10% slower compiled, in every round; the GPU shares are the
    synchronous step's (the pipelined one's differ); compiled kv_static's step takes `step_ms`."""
    rows = []
    for compiled, share, gained in ((False, eager_share, 1.10), (True, compiled_share, 1 / 1.10)):
        for gen, times in (("kv_static", BASE), ("pipelined_static", [t / gained for t in BASE])):
            rows.append({"variant": label(gen, compiled=compiled), "generator": gen, "compiled": compiled,
                         "status": "ok", "gpu_busy_share": share if gen == "kv_static" else 1 - share,
                         "times_ms": ";".join(map(str, times)),
                         "ms_per_step": step_ms if (gen, compiled) == ("kv_static", True) else 2 * step_ms,
                         "batch_size": 32, "max_seqlen": 100, "gpu": "NVIDIA Test", "params": "{}"})  # fmt: skip
    (folder / "data").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(folder / "data" / "07_pipelining.csv", index=False)


@pytest.mark.parametrize(
    "eager, compiled, kind, nearest",
    [
        (0.2, 0.3, "**host-bound**", "host"),
        (0.9, 0.95, "**GPU-bound**", "slice"),
        (0.6, 0.8, "**mixed (host and GPU)**", "slice"),
        (0.4, 0.55, "**host-bound eager, mixed (host and GPU) compiled**", "host"),  # 55% lies nearer 25% than 90%
    ],
)
def test_the_regime_is_named_from_the_gpu_share_and_set_beside_the_nearest_reference(tmp_path, eager, compiled, kind,
                                                                                     nearest):  # fmt: skip
    _timed(tmp_path / "here", eager, compiled, step_ms=3.0)
    _timed(tmp_path / "host", 0.15, 0.25, step_ms=4.0)  # the reference's whole GPU: compiled share 25%
    _timed(tmp_path / "slice", 0.85, 0.9, step_ms=1.0)  # a slice: 90%
    regimes = {"host": tmp_path / "host", "slice": tmp_path / "slice"}
    lines = quick.regime_sentences(tmp_path / "here", regimes)
    said = " and ".join(f"{s:.0%} {m}" for m, s in (("eager", eager), ("compiled", compiled)))
    assert lines[0].startswith(f"A synchronous step (`kv_static`) keeps this GPU busy {said} of its wall time: {kind}")
    share, step = {"host": (0.25, 4.0), "slice": (0.9, 1.0)}[nearest]
    assert lines[1] == (f"Compiled, its share lies nearest the reference run's regime **{nearest}** ({share:.0%} "
                        f"there, {compiled:.0%} here). A compiled `kv_static` step keeps the GPU busy "
                        f"{3.0 * compiled:.2f} ms "
                        f"here and {step * share:.2f} ms there, in a wall time of 3.00 ms here and {step:.2f} ms "
                        "there: the share is this GPU and this host together.")  # fmt: skip
    assert lines[2].startswith("The article's advice holds here eager only: eager, pipelined vs sync ×1.10 (")
    assert "compiled, pipelined vs sync ×0.91 (" in lines[2] and lines[2].endswith("slower; 95% interval ×0.91–×0.91).")


def test_the_page_says_what_a_memory_cap_bound():
    timed = pd.DataFrame({"variant": ["naive", "kv_static", "graph_x"], "peak_reserved_gb": [15.9, 3.8, 2.5],
                          "peak_allocated_gb": [4.5, 3.1, 2.0]})  # fmt: skip
    only = (" A cap tests capacity only, not a smaller card's bandwidth or compute; set beside an uncapped run, "
            "this is another run, and where the cap bound nothing the two differ as two runs do.")  # fmt: skip
    assert quick.cap_bound(timed, 16) == ("it bound the allocator's cache of `naive` (reserved 15.9 GB; its tensors "
                                          "peaked at 4.5 GB); every other variant peaked at 3.8 GB or less." + only)
    assert quick.cap_bound(timed, 40) == "no variant came near it (the largest peak: 15.9 GB)." + only
    assert quick.cap_bound(timed, 2.7).startswith("it bound every variant: `naive` (reserved 15.9 GB; its tensors ")
    assert quick.cap_bound(timed.drop(columns="peak_allocated_gb"), 16).startswith(
        "it bound the allocator's cache of `naive` (reserved 15.9 GB); every other")
    assert quick.cap_bound(None, 16) == "what it bound was not recorded."


@pytest.mark.parametrize("example", ["whole", "whole_16gb"])
def test_the_committed_example_pages_are_what_their_csvs_render(example):
    """README links these pages: each is today's `render` of its own CSVs and the reference run's (as the
    README's tables are of data/), so a change in the page's code or in the reference shows up here."""
    folder = ROOT / "data" / "quick" / example
    assert (folder / "report.md").read_text() == quick.render(folder)
    stages = pd.read_csv(folder / "data" / "quick_stages.csv")
    if "gpu_uuid" in stages:  # review rv22B N7: the header names the card
        assert f"), card GPU {stages['gpu_uuid'].iloc[0][:8]}…: B = " in (folder / "report.md").read_text()
    assert f"data/quick/{example}/report.md" in (ROOT / "README.md").read_text()


def test_the_gpu_shares_and_steps_read_the_rounds_every_variant_ran(tmp_path):
    """A sequential run: eager kv_static ran on to 16 rounds, its last 8 slow (the host drifted), the others
    stopped at 8. Its share and step are over its first 8 rounds (100-107 ms), not its 16 (median 153.5 ms);
    the page's line says so, for kv_static's rows (`generator`) or for any."""
    from tokgen.stats import time_summary

    def row(gen, compiled, t, busy):
        s = time_summary(t)
        return {"variant": label(gen, compiled=compiled), "generator": gen, "compiled": compiled, "status": "ok",
                "runs": len(t), "steps": 10, **s, "ms_per_step": s["median_ms"] / 10, "gpu_busy_ms": busy,
                "gpu_busy_share": busy / s["median_ms"], "times_ms": ";".join(map(str, t)),
                "order_seed": 4}  # fmt: skip

    eight = [100.0 + i for i in range(8)]
    sync = eight + [200.0 + i for i in range(8)]
    rows = [row("kv_static", False, sync, 51.75), row("pipelined_static", False, eight, 60.0),
            row("kv_static", True, eight, 93.15), row("pipelined_static", True, eight, 99.0)]  # fmt: skip
    results = pd.DataFrame(rows)
    assert quick.gpu_shares(results) == {"eager": pytest.approx(0.5), "compiled": pytest.approx(0.9)}  # 51.75/103.5
    assert quick.step_times(results, compiled=False) == (pytest.approx(5.175), pytest.approx(10.35))
    assert "over the first 8 rounds, which every interleaved variant ran" in quick.shared_note([results, None])
    assert quick.shared_note([results], "kv_static") == quick.shared_note([results])
    uncut = results.assign(times_ms=[";".join(map(str, eight))] * 4, runs=8)
    assert quick.shared_note([uncut]) == ""
    assert quick.gpu_shares(uncut)["eager"] == pytest.approx(51.75 / 153.5)  # as stored: nothing cut


def test_the_quick_run_reads_the_reference_runs_fastest_generator_on_purpose(tmp_path, monkeypatch):
    """The quick run sets the committed reference run's fastest generator against the floor: another run's
    table, read with rows_at's this_run off (else the guard refuses it and the page loses that row)."""
    import tokgen.bandwidth as bandwidth

    seen = {}
    monkeypatch.setattr(bandwidth, "rows_at", lambda *a, **k: seen.update(k) or (_ for _ in ()).throw(KeyError()))
    source = Path(quick.__file__).read_text()
    call = source[source.index("fastest = fastest_generator(") :].split("\n")[0]
    with pytest.raises(KeyError):
        eval(call.split("=", 1)[1].split("#")[0].strip(), {"fastest_generator": bandwidth.fastest_generator,
                                                            "ROOT": tmp_path})  # fmt: skip
    assert seen == {"this_run": False}


def test_the_fastest_generators_description_is_the_registrys():
    """The words beside the reference run's fastest generator come from tokgen.registry.DESCRIPTIONS."""
    from tokgen.registry import DESCRIPTIONS

    for folder in ("whole", "whole_16gb"):
        page = (ROOT / "data" / "quick" / folder / "report.md").read_text()
        said = re.search(r"`([^`]+)` \((?:the first listed at|one of the \d+ that share) rank 1 of the reference run's "
                         r"notebook 10, ranked round by round against naive(?: \(`[^`]+` listed first\))?; "
                         r"notebook 10's commit `[0-9a-f]{12}` \([^)]*\): (.*?)\) is ",
                         page)  # fmt: skip
        assert said, folder
        generator = said.group(1).split(" K=")[0]
        assert said.group(2) == DESCRIPTIONS[generator][1]


def test_the_page_says_where_the_timed_fastest_stands_in_the_reference_table_beside_it(monkeypatch, tmp_path):
    """Review rvC14 M1: a quick run timed the first listed of an earlier reference table, and the page, written
    beside a newer one that lists a tied variant first, still called it the first listed."""
    from tokgen import bandwidth

    ref = {"label": "graph_a K=4", "shares_rank_with": ["graph_b K=4"], "generator": "graph_a", "steps_per_graph": 4}
    monkeypatch.setattr(bandwidth, "fastest_generator", lambda root, this_run=True: ref)
    assert quick.reference_rank_words("graph_a K=4", tmp_path).startswith("the first listed at rank 1 of the reference")
    tied = quick.reference_rank_words("graph_b K=4", tmp_path)
    assert tied.startswith("one of the 2 that share rank 1") and "(`graph_a K=4` listed first); " in tied
    assert "now lists `graph_a K=4` first at rank 1" in quick.reference_rank_words("graph_c K=1", tmp_path)
    monkeypatch.setattr(bandwidth, "fastest_generator", lambda root, this_run=True: (_ for _ in ()).throw(
        FileNotFoundError()))  # fmt: skip
    assert "no reference notebook 10 table is here now" in quick.reference_rank_words("graph_a K=4", tmp_path)


def test_the_reference_rank_names_notebook_10s_run_and_the_bandwidth_is_notebook_10s_of_07s_run(monkeypatch, tmp_path):
    """Review rv20B S1: the regime bullet read notebook 10's table but no line named its commit or card. S2: the
    whole GPU's copy bandwidth came from notebook 12's run of another commit and card although notebook 10 measured
    one beside 07's run: a 10_bandwidth row of 07's commit and card is preferred, else 12_bandwidth, and the run line
    names the table used."""
    from tokgen import bandwidth

    ref = {"label": "graph_a K=4", "shares_rank_with": [], "generator": "graph_a", "steps_per_graph": 4}
    monkeypatch.setattr(bandwidth, "fastest_generator", lambda root, this_run=True: ref)
    ten, twelve = "4b89be838dd8" + "0" * 28, "a403ef0e7c94" + "1" * 28
    _provenance(tmp_path, "10_cuda_graphs", ten, "2026-11-28T13:16:00+00:00", uuid="18cfe079-37b4", variant=["naive"])
    assert quick.reference_rank_words("graph_a K=4", tmp_path).endswith(
        "against naive; notebook 10's commit `4b89be838dd8` (GPU 18cfe079…; 10_cuda_graphs started "
        "2026-11-28 13:16 UTC)")  # fmt: skip
    _provenance(tmp_path, "07_pipelining", ten, "2026-11-28T13:06:00+00:00", uuid="18cfe079-37b4")
    _provenance(tmp_path, "12_bandwidth", twelve, "2026-11-28T10:09:00+00:00", uuid="c5384e55-2e35",
                bandwidth_gb_s=[4171.4])  # fmt: skip
    _provenance(tmp_path, "10_bandwidth", ten, "2026-11-28T13:17:00+00:00", uuid="c5384e55-2e35",
                bandwidth_gb_s=[4188.8])  # fmt: skip  (another card than 07's: not that run's)
    assert quick._bandwidth_rows(tmp_path)[0] == "12_bandwidth" and quick._reference_bandwidth("w", tmp_path) == 4171.4
    _provenance(tmp_path, "10_bandwidth", ten, "2026-11-28T13:17:00+00:00", uuid="18cfe079-37b4",
                bandwidth_gb_s=[4188.8])  # fmt: skip
    assert quick._reference_bandwidth("w", tmp_path) == 4188.8
    assert quick.reference_runs({"whole GPU": tmp_path}, ("07_pipelining",), bandwidth=True) == [
        "- whole GPU: commit `4b89be838dd8` (GPU 18cfe079…; 07_pipelining started 2026-11-28 13:06 UTC, "
        "10_bandwidth started 2026-11-28 13:17 UTC)"]  # fmt: skip


def test_the_idle_time_is_each_windows_own_then_their_median(tmp_path):
    """Review rv22B N6: the idle time was the median step period less the median busy time, taken column by column
    (here 7,000 − 1,500 = 5,500 µs, and the gap's share 900 / 5,500 = 16%); each window's own idle time (6,000,
    5,000 and 4,500 µs) has the median 5,000 µs, and the gap's share is each window's own (10%, 30%, 20%), then
    their median, 20%."""
    profile = pd.DataFrame({"variant": ["kv_static"] * 3 + ["pipelined_static"], "window": [0, 1, 2, 0],
                            "batch_size": 16, "step_period_us": [7000.0, 6500.0, 8000.0, 9000.0],
                            "gpu_busy_per_step_us": [1000.0, 1500.0, 3500.0, 100.0],
                            "idle_gap_median_us": [600.0, 1500.0, 900.0, 50.0]})  # fmt: skip
    assert quick.idle_sentence(profile) == [
        "- In a profiled `kv_static` step (eager, B = 16) the GPU idles 5,000 µs of 7,000 µs; the gap before a step "
        "is 20% of that idle time, the rest lies between the step's own kernels (each the median over 3 windows of "
        "the window's own)."]  # fmt: skip


def test_the_idle_time_reads_each_windows_last_attempt():
    """Review rr22b S1: a profile with re-profiled windows (attempt 0 and 1 of each of 3 windows) read every attempt,
    "over 6 windows", its medians mixing in the first attempts (10,750 µs idle of 12,250 µs); each window's repeat
    alone gives 3 windows, idle 5,000 µs of 7,000 µs (as in the test above) and the gap 20% of it."""
    first = pd.DataFrame({"variant": "kv_static", "window": [0, 1, 2], "attempt": 0, "batch_size": 16,
                          "step_period_us": [17000.0, 16500.0, 18000.0], "gpu_busy_per_step_us": [1000.0] * 3,
                          "idle_gap_median_us": [8000.0] * 3})  # fmt: skip
    repeat = pd.DataFrame({"variant": "kv_static", "window": [0, 1, 2], "attempt": 1, "batch_size": 16,
                           "step_period_us": [7000.0, 6500.0, 8000.0], "gpu_busy_per_step_us": [1000.0, 1500.0, 3500.0],
                           "idle_gap_median_us": [600.0, 1500.0, 900.0]})  # fmt: skip
    assert quick.idle_sentence(pd.concat([first, repeat], ignore_index=True)) == [
        "- In a profiled `kv_static` step (eager, B = 16) the GPU idles 5,000 µs of 7,000 µs; the gap before a step "
        "is 20% of that idle time, the rest lies between the step's own kernels (each the median over 3 windows of "
        "the window's own)."]  # fmt: skip


def test_the_page_names_its_card_and_a_nearest_reference_on_another_card_of_the_same_model(tmp_path):
    """Review rv22B N7: the header named the GPU model only, and the nearest regime, run on another H200 card, read
    as the same machine."""
    _timed(tmp_path / "here", 0.2, 0.3, step_ms=3.0)
    _timed(tmp_path / "host", 0.15, 0.25, step_ms=4.0)
    for folder, uuid in ((tmp_path / "here", "GPU-08d8f342-0969"), (tmp_path / "host", "7cd44378-d9d6")):
        table = pd.read_csv(folder / "data" / "07_pipelining.csv").assign(gpu="NVIDIA H200", gpu_uuid=uuid)
        table.to_csv(folder / "data" / "07_pipelining.csv", index=False)
    lines = quick.regime_sentences(tmp_path / "here", {"host": tmp_path / "host"})
    assert lines[1].startswith(
        "Compiled, its share lies nearest the reference run's regime **host** (25% there, "
        "30% here; there on another card of the same model, GPU 7cd44378…). A compiled"
    )
    assert quick.another_card({"a1"}, {"a1", "b2"}) == "" and quick.another_card(set(), {"b2"}) == ""


def test_a_reference_column_of_another_commit_than_the_page_says_so(tmp_path):
    """Review rv23B S1: the whole-GPU page (commit 019154c) set its run beside the reference run's 7472d79 rows and
    said "another commit" only between reference columns; each line, the card sentence and the regime's own now say
    which commit differs from this page's."""
    page, ref, old = "019154c9aa44", "7472d7922734", "9d6c84b80aa0"
    h200, h100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
    whole, sm8 = tmp_path, tmp_path / "slice" / "sm8"
    _provenance(whole, "07_pipelining", ref, "2026-11-28T20:28:00+00:00", uuid="518a1215-aaaa", gpu=[h200])
    _provenance(sm8, "07_pipelining", old, "2026-11-23T20:04:35+00:00", uuid=None, gpu=[h100])
    regimes = {"whole GPU (reference, NVIDIA H200)": whole, "8 SMs of the NVIDIA H100 80GB HBM3": sm8}
    lines = quick.reference_runs(regimes, ("07_pipelining",), here={page[:7]})
    assert lines[0].endswith("started 2026-11-28 20:28 UTC) (**another commit than this page's, 019154c**)")
    assert lines[1].endswith("(**another commit than this page's, 019154c, and than the whole GPU (reference, NVIDIA "
                             "H200)'s**)")  # fmt: skip
    same = quick.reference_runs(regimes, ("07_pipelining",), here={ref[:7]})  # the page at the reference's commit
    assert "another commit" not in same[0]
    assert same[1].endswith("(**another commit than this page's, 7472d79, and than the whole GPU (reference, NVIDIA "
                            "H200)'s**)")  # fmt: skip
    assert quick.reference_runs(regimes, ("07_pipelining",)) == [
        line.replace("this page's, 019154c, and than ", "").replace(" (**another commit than this page's, 019154c**)",
                                                                    "")
        for line in lines
    ]  # no page commit given: as before
    assert quick.other_card(h200, regimes, {"08d8f342-0969"}, {page[:7]}) == (
        "This page ran on the NVIDIA H200 (GPU 08d8f342…); the reference run's 8 SMs on another GPU model (NVIDIA H100 "
        "80GB HBM3), at another commit (9d6c84b); its whole GPU (reference) on another card of the same model, GPU "
        "518a1215…, at another commit (7472d79): bandwidths and busy times differ by card as well as by host."
    )
    assert "another commit" not in quick.other_card(h200, {"w": whole}, {"08d8f342-0969"}, {ref[:7]})
    assert quick.another_commit({"019154c"}, {"7472d79"}) == "at another commit (7472d79)"
    assert quick.another_commit(set(), {"7472d79"}) == quick.another_commit({"7472d79"}, {"7472d79"}) == ""
