"""Review rv23C (notebook 10, its solution, the README parts that read them): S1 notebook 07's same-card,
same-commit run beside notebook 10's baselines; S2 the host probe under every timed table; N4 solution 10's
exercise 2 in one generated sentence."""

from pathlib import Path

import pandas as pd

import tokgen
from tokgen.stats import FASTER, NO_EFFECT, SLOWER, UNDECIDED
from tokgen.voice import same_card_runs_text, while_cost_text
from tokgen_tools import readme

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ["naive", "compiled pipelined_static"]


def code_cells(path: Path) -> list[str]:
    cells = path.read_text().split("\n# %%")[1:]
    return [c.split("\n", 1)[1] if "\n" in c else "" for c in cells if not c.lstrip(" ").startswith("[markdown]")]


def _rows(medians: dict, card="card-a", commit="a" * 40, probe=(3.0, 3.5), times=None) -> pd.DataFrame:
    rows = pd.DataFrame([{"variant": v, "status": "ok", "median_ms": m, "gpu_busy_ms": m / 2, "gpu_uuid": card,
                          "commit": commit, "order_seed": 1, "host_probe_ms_before": probe[0],
                          "host_probe_ms_after": probe[1], "times_ms": (times or {}).get(v, f"{m};{m};{m}")}
                         for v, m in medians.items()])  # fmt: skip
    return rows.assign(runs=rows["times_ms"].str.count(";") + 1)


def test_same_card_runs_text_sets_the_same_card_and_commits_run_beside_this_one():
    """S1 (a): notebook 07's rows on this card at this commit, side by side with notebook 10's; a row of another card
    or commit is not used, and where none is left one sentence says so."""
    here = _rows({"naive": 1200.0, "compiled pipelined_static": 530.0})
    there = pd.concat([_rows({"naive": 600.0, "compiled pipelined_static": 250.0}, commit="a" * 12, probe=(3.3, 3.6)),
                       _rows({"kv_static": 240.0}, card="card-b")])  # fmt: skip
    said = same_card_runs_text(here, there, RECIPE)
    assert (
        "median per generation in this notebook's run against notebook 07's: `naive` 1200.0 ms against 600.0 ms, "
        "the GPU busy 600.0 against 300.0 ms; `compiled pipelined_static` 530.0 ms against 250.0 ms" in said
    )
    assert "took 3.00 ms before this notebook's rounds and 3.30 ms before notebook 07's (3.50 ms and 3.60 ms after)" \
        in said  # fmt: skip
    assert "medians here are over" not in said  # every variant ran the same rounds
    # notebook 07's medians over the rounds every interleaved variant ran (shared_rounds), said
    cut = _rows({"naive": 600.0, "compiled pipelined_static": 575.0},  # 575: its median over all its 4 rounds
                times={"naive": "600;600", "compiled pipelined_static": "250;250;900;900"})  # fmt: skip
    assert "`compiled pipelined_static` 530.0 ms against 250.0 ms" in same_card_runs_text(here, cut, RECIPE)
    assert same_card_runs_text(here, cut, RECIPE).endswith(
        " Notebook 07's medians here are over the first 2 rounds, which every interleaved variant ran."
    )
    tell = "so no second run of `naive` and `compiled pipelined_static` is set beside this notebook's run."
    assert same_card_runs_text(here, None, RECIPE) == f"Notebook 07 has no table in this results folder, {tell}"
    assert same_card_runs_text(here, there.assign(gpu_uuid="card-b"), RECIPE) == (
        f"Notebook 07's rows hold no run that ran ok on this card, {tell}")  # fmt: skip
    assert same_card_runs_text(here, there.assign(commit="b" * 40), RECIPE) == (
        f"Notebook 07's rows hold no run that ran ok on this card at this commit, {tell}")  # fmt: skip
    assert same_card_runs_text(here, there.assign(status="failed"), RECIPE) == (
        f"Notebook 07's rows hold no run that ran ok, {tell}")  # fmt: skip


def test_same_card_runs_text_says_which_of_sizes_card_commit_slice_leaves_no_run():
    """rr23c N2: the no-second-run sentence names what notebook 07's table lacks, in order: a run at this run's sizes
    (a B = 16 run of notebook 10 beside 07's B = 32), then on this card, at this commit, on this slice (gpu_sms
    compared as `tokgen.results._sms` reads it: 16.0 is 16); a slice's run of 07 is not set beside the whole GPU's."""
    sized = {"batch_size": 32, "max_seqlen": 100, "gpu_sms": "all"}
    here = _rows({"naive": 1200.0, "compiled pipelined_static": 530.0}).assign(**sized)
    there = _rows({"naive": 600.0, "compiled pipelined_static": 250.0}).assign(**sized)
    tell = "so no second run of `naive` and `compiled pipelined_static` is set beside this notebook's run."
    assert "`naive` 1200.0 ms against 600.0 ms" in same_card_runs_text(here, there, RECIPE)
    assert same_card_runs_text(here.assign(batch_size=16), there, RECIPE) == (
        f"Notebook 07's rows hold no run at B = 16, N = 100, {tell}")  # fmt: skip
    assert same_card_runs_text(here, there.assign(gpu_uuid="card-b"), RECIPE) == (
        f"Notebook 07's rows hold no run at B = 32, N = 100 on this card, {tell}")  # fmt: skip
    assert same_card_runs_text(here, there.assign(commit="b" * 40), RECIPE) == (
        f"Notebook 07's rows hold no run at B = 32, N = 100 on this card at this commit, {tell}")  # fmt: skip
    assert same_card_runs_text(here, there.assign(gpu_sms=16), RECIPE) == (
        f"Notebook 07's rows hold no run at B = 32, N = 100 on this card at this commit on the whole GPU, {tell}"
    )
    assert same_card_runs_text(here.assign(gpu_sms=16.0), there, RECIPE) == (
        f"Notebook 07's rows hold no run at B = 32, N = 100 on this card at this commit in a slice of 16 SMs, {tell}"
    )
    assert "`naive` 1200.0 ms against 600.0 ms" in same_card_runs_text(here.assign(gpu_sms=16.0),
                                                                        there.assign(gpu_sms="16"), RECIPE)  # fmt: skip
    assert same_card_runs_text(here.drop(columns=["gpu_uuid"]), there, RECIPE) == ""


def _section_3_cell() -> str:
    """Notebook 10 section 3's CUDA-only cell that sets notebook 07's run beside the table, as its source text."""
    src = (ROOT / "notebooks" / "10_cuda_graphs.py").read_text()
    start = src.index("if CUDA:  # notebook 07's run")
    return src[start : src.index("\n# %%", start)]


def _run_section_3(results_dir, recorded=None, batch_size=32) -> list[str]:
    """The cell's own source executed with CUDA faked on, as the H200 runs it: on notebook 10's committed rows
    (`recorded`, as the notebook holds them), notebook 07's table read from `results_dir`; what it says."""
    said = []
    recorded = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv") if recorded is None else recorded
    exec(_section_3_cell(), {"tokgen": tokgen, "CUDA": True, "RESULTS_DIR": str(results_dir), "BATCH_SIZE": batch_size,
                             "MAX_SEQLEN": 100, "recorded": recorded, "say": said.append})  # fmt: skip
    return said


def test_notebook_10_sets_notebook_07s_run_beside_its_table_from_the_committed_rows(tmp_path):
    """S1 (a), rr23c S2: section 3's cell, executed on the committed rows (notebooks 07 and 10 at 7472d79 on GPU
    518a1215): naive's 1208.7 ms beside notebook 07's 591.7 ms (its median over the 10 rounds every variant ran), as
    the README does; without notebook 07's table, and for a run of notebook 10 at sizes 07 did not run (B = 16: its
    rows, as that run would record them), the sentence that says which."""
    said = _run_section_3(ROOT)
    assert len(said) == 1
    assert "`naive` 1208.7 ms against 591.7 ms, the GPU busy 408.9 against 408.5 ms" in said[0]
    assert "`compiled pipelined_static` 533.4 ms against 248.2 ms" in said[0]
    assert said[0] in readme.reruns_note(ROOT).replace("notebook 10's run", "this notebook's run").replace(
        "notebook 10's rounds", "this notebook's rounds")  # fmt: skip
    tell = "so no second run of `naive` and `compiled pipelined_static` is set beside this notebook's run."
    assert _run_section_3(tmp_path) == [f"Notebook 07 has no table in this results folder, {tell}"]
    sixteen = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv").assign(batch_size=16)
    assert _run_section_3(ROOT, sixteen, batch_size=16) == [
        f"Notebook 07's rows hold no run at B = 16, N = 100, {tell}"]  # fmt: skip
    other = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv").assign(commit="b" * 40)
    assert _run_section_3(ROOT, other) == [
        f"Notebook 07's rows hold no run at B = 32, N = 100 on this card at this commit, {tell}"]  # fmt: skip


def test_the_beyond_line_says_when_naive_ran_beyond_host_drift_of_notebook_07s_same_card_run():
    """S1 (b): naive's median in notebook 10 is 2.04× notebook 07's on the same card and commit (1208.7 against
    591.7 ms, the GPU busy 408.9 against 408.5 ms): the Findings line says so; within HOST_DRIFT, or another card
    or commit, it says nothing."""
    graphs = readme._ok("10_cuda_graphs", ROOT)
    clause = readme._baseline_drift(graphs, ROOT)
    assert clause == ("; naive's median here, 1208.7 ms, against notebook 07's 591.7 ms on the same card and commit "
                      "(two separate runs, not paired: said where they lie more than "
                      f"×{readme.HOST_DRIFT:g} apart either way), the GPU busy 408.9 against 408.5 ms: read the "
                      "speed-ups against naive, and against `generate()` static (no second run of it; its GPU busy "
                      "under 50% of the wall time here, as naive's) as this run's")  # fmt: skip
    assert "×1.25 apart" in clause and "2.04" not in clause  # rr23c S1: the threshold, no ratio of the medians
    assert readme._beyond_line(ROOT).endswith(clause + ".")
    assert clause in (ROOT / "README.md").read_text()
    naive = graphs["variant"] == "naive"
    assert readme._baseline_drift(graphs.assign(median_ms=graphs["median_ms"].where(~naive, 700.0)), ROOT) == ""
    faster = readme._baseline_drift(graphs.assign(median_ms=graphs["median_ms"].where(~naive, 450.0)), ROOT)
    assert faster.startswith("; naive's median here, 450.0 ms, against notebook 07's 591.7 ms")
    assert readme._baseline_drift(graphs.assign(median_ms=graphs["median_ms"].where(~naive, 735.0)), ROOT) == ""
    assert readme._baseline_drift(graphs.assign(median_ms=graphs["median_ms"].where(~naive, 745.0)), ROOT) != ""
    assert readme._baseline_drift(graphs.assign(commit="b" * 40), ROOT) == ""
    assert readme._baseline_drift(graphs.assign(gpu_uuid="GPU-other"), ROOT) == ""
    busy = graphs.assign(gpu_busy_share=graphs["gpu_busy_share"].where(graphs["variant"] != "generate() static", 0.9))
    assert readme._baseline_drift(busy, ROOT).endswith(
        ": read the speed-ups against naive (its GPU busy under 50% of the wall time here) as this run's"
    )


def _calls_followed_by_the_probe(path: Path) -> list[str]:
    """The code after each `tokgen.compare(` call up to the next one (or the end): each must say the probe."""
    code = "\n".join(code_cells(path))
    return code.split("tokgen.compare(")[1:]


def test_every_timed_table_of_notebook_10_and_its_solution_says_the_host_probe():
    """S2: every `tokgen.compare(` of notebook 10 and solution 10 is followed, before the next one, by a
    `host_probe_text` call (section 6 and exercises 1, 2 and 4 printed none)."""
    for path in (ROOT / "notebooks" / "10_cuda_graphs.py", ROOT / "solutions" / "10_cuda_graphs.py"):
        after = _calls_followed_by_the_probe(path)
        assert after, path
        for i, code in enumerate(after):
            assert "tokgen.voice.host_probe_text(" in code, (path.name, i)
    assert len(_calls_followed_by_the_probe(ROOT / "solutions" / "10_cuda_graphs.py")) == 3
    stops = next(c for c in code_cells(ROOT / "notebooks" / "10_cuda_graphs.py") if 'Recorder("10_device_stop"' in c)
    assert "say(tokgen.voice.host_probe_text(stop_rec.read()))" in stops


def _gain(outcome, no_effect=False, low=1.01, high=1.03):
    return {"outcome": outcome, "no_effect": no_effect, "equivalence_low": low, "equivalence_high": high}


def test_while_cost_text_reads_the_steps_sign_and_each_lengths_outcome():
    """N4: exercise 2's two findings in one sentence: each added step costs the WHILE node more (a real +12.7 µs),
    yet over a whole generation it is faster by less than 5% at N = 50, within ±5% at N = 100; the sentence
    follows the signs and outcomes given, and the committed rows give the first."""
    more = [11.0, 12.0, 12.5, 12.7, 12.9, 13.0, 14.0, 12.1, 12.8, 11.5]
    gains = {100: _gain(NO_EFFECT, True, 0.9998, 1.002), 50: _gain(FASTER, True, 1.028, 1.031)}
    assert while_cost_text(more, gains, "k") == (
        "Together: each added step costs the WHILE node more than `k` at K = 1 (its launch, copy and wait), yet over "
        "a whole generation the WHILE node is faster, by less than 5% at N = 50 and within ±5% of it (no effect) at "
        "N = 100.")  # fmt: skip
    less = [-x for x in more]
    assert while_cost_text(less, {50: _gain(FASTER, False, 1.06, 1.08)}, "k") == (
        "Together: each added step costs the WHILE node less than `k` at K = 1 (its launch, copy and wait), and over "
        "a whole generation the WHILE node is faster, by more than 5% at N = 50.")  # fmt: skip
    assert "yet over a whole generation the WHILE node is slower, not shown on either side of 5% at N = 50" in \
        while_cost_text(less, {50: _gain(SLOWER, False, 0.95, 0.99)}, "k")  # fmt: skip
    mixed = [1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -1.5, 0.1, -0.1]
    assert while_cost_text(mixed, {50: _gain(UNDECIDED)}, "k") == (
        "Together: the rounds do not tell the WHILE node's cost per added step from `k` at K = 1's, and over a whole "
        "generation the WHILE node is undecided against it at N = 50.")  # fmt: skip
    noisy = [5, -3, 4, -2, 6, -1, 3, 1, 2, -4]  # rr23c N1: median +1.5, its 95% interval straddles 0
    assert while_cost_text(noisy, {50: _gain(FASTER, False, 1.06, 1.08)}, "k").startswith(
        "Together: the rounds do not tell the WHILE node's cost per added step from `k` at K = 1's, and over"
    )
    assert while_cost_text([-x for x in noisy], {50: _gain(SLOWER, False, 0.9, 0.94)}, "k").startswith(
        "Together: the rounds do not tell")  # fmt: skip
    assert while_cost_text([12.0, 13.0], {50: _gain(FASTER, False, 1.06, 1.08)}, "k").startswith(
        "Together: too few rounds to tell the WHILE node's cost per added step from `k` at K = 1's, and over"
    )
    assert while_cost_text([], gains, "k") == ""
    cells = code_cells(ROOT / "solutions" / "10_cuda_graphs.py")
    assert any("say(tokgen.voice.while_cost_text(paired, whole, k_step))" in c for c in cells)


def _tables(tmp_path: Path, twelve_gbs=3100.0, tflops=None) -> Path:
    """Made-up runs: notebook 10 on card 1111 at commit aaaa, notebook 12 (products, bandwidth) on 2222 at bbbb."""
    data = tmp_path / "data"
    data.mkdir(parents=True, exist_ok=True)
    ten = {"commit": "a" * 12, "gpu": "NVIDIA H200", "gpu_uuid": "11111111-x", "run_started": "2026-01-02T03:04:00"}
    twelve = {"commit": "b" * 12, "gpu": "NVIDIA H200", "gpu_uuid": "22222222-y", "run_started": "2026-01-01T05:06:00"}
    pd.DataFrame([{"variant": "naive", "status": "ok", **ten}]).to_csv(data / "10_cuda_graphs.csv", index=False)
    pd.DataFrame([{"bandwidth_gb_s": 2000.0, **ten}]).to_csv(data / "10_bandwidth.csv", index=False)
    pd.DataFrame([{"bandwidth_gb_s": twelve_gbs, "matmul_tflops": tflops, **twelve},
                  {"bandwidth_gb_s": 9999.0, "matmul_tflops": tflops, **ten}]).to_csv(data / "12_bandwidth.csv",
                                                                                     index=False)  # fmt: skip
    products = [{"product": "LM head", "rows": 32, "splits": 1, "weight_mb": 150.0, "floor_us": 50.0, "median_us": 60.0,
                 "q25_us": 59.0, "q75_us": 61.0, "status": "ok", "pct_of_copy_bandwidth": 83.0, **twelve}]  # fmt: skip
    pd.DataFrame(products).to_csv(data / "12_products.csv", index=False)
    return tmp_path


def test_the_beyond_run_line_says_when_no_tf32_throughput_of_its_card_and_commit_exists(tmp_path):
    """N2: without notebook 12's TF32 throughput of notebook 10's card and commit, the run line says so and names the
    rows whose own floor is then their bytes only (the committed run: naive); with one, it says neither."""
    committed = readme._beyond_run(ROOT)
    assert committed.endswith("; no TF32 throughput recorded by notebook 12 on this card at this commit: `naive`'s "
                              "own floor is its bytes only, a lower bound.*")  # fmt: skip
    assert committed in (ROOT / "README.md").read_text()
    assert "no TF32 throughput recorded" in readme._beyond_run(_tables(tmp_path / "none"))
    assert "no TF32" not in readme._beyond_run(_tables(tmp_path / "some", tflops=400.0))


def test_the_products_run_line_cites_notebook_12s_recorded_bandwidth(tmp_path):
    """N3: the products' floors' bandwidth is the one their run's data/12_bandwidth.csv row records (here 3,010 GB/s,
    not the 3,000 that 150 MB over 50 µs gives); where the two lie more than 0.5% apart, both (rr23c N5); without
    that value, derived from the products' own columns."""
    cited = readme.products_table(_tables(tmp_path / "row", twelve_gbs=3010.0)).splitlines()[-1]
    assert "floors at notebook 12's copy bandwidth, 3,010 GB/s (data/12_bandwidth.csv)" in cited
    assert "imply" not in cited  # 0.33% from the 3,000 its floors imply: within BANDWIDTH_AGREE
    # rr23c N5: a recorded 3,100 GB/s the floors were not computed with (they imply 3,000): both named
    both = readme.products_table(_tables(tmp_path / "apart")).splitlines()[-1]
    assert ("floors at notebook 12's copy bandwidth: 3,100 GB/s recorded (data/12_bandwidth.csv), but the floors "
            "imply 3,000 GB/s (the products' weight bytes / their floor µs)") in both  # fmt: skip
    derived = readme.products_table(_tables(tmp_path / "nan", twelve_gbs=float("nan"))).splitlines()[-1]
    assert "floors at notebook 12's copy bandwidth, 3,000 GB/s (the products' weight bytes / their floor µs)" in derived
    assert "4,197 GB/s (data/12_bandwidth.csv)" in (ROOT / "README.md").read_text()


def test_solution_10s_gpu_cells_on_the_committed_rows():
    """S2, N4: what the solution's CUDA-only cells now print, on its committed rows (7472d79, GPU 518a1215): the probe
    line under exercises 1, 2 and 4 (1.94× and 1.53× faster after, in 1 and 4), and exercise 2's summary, computed as
    its cell computes it (+12.7 µs per added step, yet faster by less than 5% at N = 50, no effect at N = 100)."""
    import statistics

    from tokgen.stats import run_times
    from tokgen.voice import host_probe_text

    sol = tokgen.load("10_cuda_graphs_solution", ROOT)
    timing = {e: tokgen.results.rows_where(sol, exercise=e, measure="timing").copy() for e in (1, 2, 4)}
    assert "the probe ran 1.94× faster after than before" in host_probe_text(timing[1])
    assert "the probe ran 1.53× faster after than before" in host_probe_text(timing[4])
    assert "took 6.69 ms before these rounds and 6.69 ms after" in host_probe_text(timing[2])
    timed, k_step, per_round, whole = timing[2], "graph_triton_fused", {}, {}
    timed["max_seqlen"] = timed["max_seqlen"].astype(int)
    for generator, t in timed.sort_values("max_seqlen").groupby("generator", sort=False):
        short, long_ = (run_times(r) for r in t.to_dict("records"))
        extra = t["max_seqlen"].iloc[-1] - t["max_seqlen"].iloc[0]
        per_round[generator] = [1e3 * (b - a) / extra for a, b in zip(short, long_)]
    paired = [w - k for w, k in zip(per_round["graph_stop_on_device"], per_round[k_step])]
    assert round(statistics.median(paired), 1) == 12.7
    for n, t in timed.groupby("max_seqlen"):
        names = t.set_index("generator")["variant"]
        whole[n] = tokgen.gain(timed, names[k_step], names["graph_stop_on_device"])
    assert while_cost_text(paired, whole, k_step) == (
        "Together: each added step costs the WHILE node more than `graph_triton_fused` at K = 1 (its launch, copy and "
        "wait), yet over a whole generation the WHILE node is faster, by less than 5% at N = 50 and within ±5% of it "
        "(no effect) at N = 100."
    )
