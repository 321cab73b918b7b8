"""README's result tables are exactly what data/ gives."""

import functools
import statistics
from pathlib import Path

import pandas as pd
import pytest

from tokgen_tools import readme

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def claims_once_per_folder():
    """The claims block, the findings and the findings test read the same claims of the same folders:
    resampled once per folder in this module (200 resamples of ten claims in three regimes each time)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(readme, "_claims", functools.cache(readme._claims))
        yield


def test_readme_tables_match_the_committed_csvs():
    text = (ROOT / "README.md").read_text()
    assert readme.render(text, ROOT) == text, "run: python -m tokgen_tools.readme"


def _run_all(tmp_path, rows):
    import pandas as pd

    data = tmp_path / "data"
    data.mkdir(parents=True)
    env = {"gpu": "GPU X", "driver": "1", "cuda": "13.0", "torch": "2.11", "transformers": "5.1.0", "python": "3.12"}
    pd.DataFrame([{**env, "status": "ok", "smoke": False, **r} for r in rows]).to_csv(data / "run_all.csv", index=False)
    return tmp_path


def test_provenance_says_whether_the_results_are_one_run(tmp_path):
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    one = readme.provenance(
        _run_all(tmp_path / "one", [{"notebook": n, "seconds": 60, "commit": "a" * 40} for n in names])
    )
    assert f"one commit, {'a' * 12}: {len(names)} of {len(names)} notebook runs ok" in one
    assert f"{len(names):.1f} min in all" in one
    solved = [{"notebook": f"solution {n}", "seconds": 60, "commit": "a" * 40} for n in names[:2]]
    both = readme.provenance(_run_all(tmp_path / "both", [{"notebook": n, "seconds": 60, "commit": "a" * 40}
                                                           for n in names] + solved))  # fmt: skip
    assert f": {len(names)} of {len(names)} notebook runs and 2 of 2 solutions ok; " in both  # rvC13 N1: apart
    assert "every notebook of the repository ran on the whole GPU" in one

    rows = [{"notebook": n, "seconds": 30, "commit": ("a" if i % 2 else "b") * 40} for i, n in enumerate(names[1:])]
    split = readme.provenance(_run_all(tmp_path / "split", rows))
    assert "not one run yet: these results come from 2 commits" in split
    assert f"not yet executed on a GPU: {names[0]}" in split


def test_provenance_names_triton_and_each_regimes_machines_by_gpu_uuid(tmp_path):
    """Rows since the columns exist name triton and the GPU's UUID; a run before them names neither."""
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    run = {"commit": "a" * 40, "parameters": "{}", "triton": "3.6.0"}
    base = _run_all(tmp_path, [{"notebook": n, "seconds": 6, "gpu_uuid": f"GPU-{i % 2}", **run}
                               for i, n in enumerate(names)])  # fmt: skip
    sliced = [{"notebook": n, "seconds": 9, "gpu_uuid": "GPU-0", **run} for n in names[1:3]]
    _run_all(tmp_path / "slice" / "sm16", sliced)
    lines = readme.provenance(base).splitlines()
    assert lines[0] == "- GPU: GPU X, driver 1, CUDA 13.0; by GPU UUID: whole GPU GPU-0, GPU-1; 16 SMs GPU-0"
    assert lines[1] == "- torch 2.11, triton 3.6.0, transformers 5.1.0, Python 3.12"  # one version: no parenthesis
    old = _run_all(tmp_path / "old", [{"notebook": n, "seconds": 6, "commit": "a" * 40} for n in names])
    assert readme.provenance(old).splitlines()[:2] == [
        "- GPU: GPU X, driver 1, CUDA 13.0",
        "- torch 2.11, transformers 5.1.0, Python 3.12",
    ]


def test_provenance_names_the_host_where_the_rows_record_it(tmp_path):
    """The CPU, the loop probe's range over both probes of every row, and the largest steal share; no
    line for rows from before the host columns."""
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    rows = [{"notebook": n, "seconds": 6, "commit": "a" * 40, "cpu": "Xeon, 16 logical CPUs",
             "host_loop_ms_before": 3.0 + i / 100, "host_loop_ms_after": 3.5 - i / 100, "cpu_busy_pct": 7.0,
             "cpu_steal_pct": 0.5 * (i == 2)} for i, n in enumerate(names)]  # fmt: skip
    rows[4]["host_loop_ms_after"] = 4.25  # the slowest probe is an "after" one
    host = [line for line in readme.provenance(_run_all(tmp_path, rows)).splitlines() if line.startswith("- host")]
    assert host == ["- host: Xeon, 16 logical CPUs; the runner's Python loop probe took 3.00–4.25 ms before and "
                    "after the notebooks; CPU time taken by the hypervisor (steal) at most 0.5% over one notebook's "
                    "run"]  # fmt: skip
    old = _run_all(tmp_path / "old", [{"notebook": n, "seconds": 6, "commit": "a" * 40} for n in names])
    assert not any(line.startswith("- host") for line in readme.provenance(old).splitlines())


def test_provenance_lists_each_notebooks_time_per_regime(tmp_path):
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    base = _run_all(tmp_path, [{"notebook": n, "seconds": 60, "commit": "a" * 40, "parameters": "{}"} for n in names])
    _run_all(tmp_path / "slice" / "sm16", [
        {"notebook": n, "seconds": 90, "commit": "a" * 40, "parameters": '{"GPU_SMS": 16, "SEQ_LENS": [50]}'}
        for n in names[1:9]
    ])  # fmt: skip
    text = readme.provenance(base)
    assert "| notebook | whole GPU (s) | 16 SMs (s) | timed runs per variant |" in text
    assert f"| {names[1]} | 60 | 90 |" in text and f"| {names[0]} | 60 |  |" in text
    assert f"per regime: whole GPU {len(names):.1f} min, 16 SMs 12.0 min" in text
    assert f"16 SMs: sizes other than the whole GPU's: {names[1]} SEQ_LENS = [50]" in text


def test_products_table_reads_12_products(tmp_path):
    import pandas as pd

    assert readme.products_table(tmp_path) == readme.NOT_MEASURED
    rows = []
    for product, mb in (("attention out", 2.4), ("LM head", 154.4)):
        for r in (32, 256):
            for s in (1, 4):
                t = 10.0 * (1 + (r == 256)) * (1.5 if s == 4 else 1.0)
                rows.append(
                    {
                        "product": product,
                        "rows": r,
                        "splits": s,
                        "weight_mb": mb,
                        "floor_us": mb / 3,
                        "median_us": t,
                        "q25_us": t - 1,
                        "q75_us": t + 1,
                        "status": "ok",
                        "pct_of_copy_bandwidth": 100 * mb / 3 / t,
                    }
                )
    rows.append({"product": "mlp up", "rows": 32, "splits": 1, "status": "oom"})
    (tmp_path / "data").mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / "data" / "12_products.csv", index=False)
    text = readme.products_table(tmp_path)
    # the split's own median (IQR), no ratio: the two were not timed in paired rounds
    # GB/s beside the time (rv19B S4): 2.4 MB in 10 µs is 240 GB/s
    assert "| attention out | 2.4 | 0.8 | 10.0 (9.0–11.0) | 20.0 (19.0–21.0) | 8% | 240 | 15.0 (14.0–16.0) |" in text
    assert "| % of copy bandwidth at 32 rows | weight GB/s at 32 rows |" in text  # its weight only (rr20h N1)
    assert "µs split in 4, 32 rows, median (IQR)" in text and "speed-up" not in text
    assert "mlp up" not in text  # failed rows are left out


def run_of(stem: str, notebooks) -> str | None:
    """The data/run_all.csv row a CSV named `stem` comes from: a solution's table (`<notebook>_solution`) from the
    solution's run (review rr20i N5: a notebook run with --no-solutions moves the notebook's row, not the solution's),
    any other from its notebook's (by number)."""
    if stem.endswith("_solution"):
        return next((n for n in notebooks if n == f"solution {stem.removesuffix('_solution')}"), None)
    return next((n for n in notebooks if n[:3] == stem[:3]), None)


def test_a_solutions_csv_is_matched_to_the_solutions_run():
    runs = ["06_eos_sync_profile", "07_pipelining", "solution 06_eos_sync_profile", "solution 07_pipelining"]
    assert run_of("07_pipelining_solution", runs) == "solution 07_pipelining"
    assert run_of("07_pipelining_eos", runs) == "07_pipelining"
    assert run_of("06_eos_sync_profile_solution", runs[:2]) is None


def test_each_committed_csv_comes_from_its_notebooks_recorded_run():
    """A notebook's CSVs carry the commit that data/run_all.csv (and so the README) names for it:
    results copied in without their run's row would be credited to another run."""
    import pandas as pd

    for results in (ROOT / "data", *sorted((ROOT / "slice").glob("sm*/data"))):
        runs = pd.read_csv(results / "run_all.csv", dtype=str).set_index("notebook")["commit"]
        for csv in sorted(results.glob("[0-9][0-9]_*.csv")):
            rows = pd.read_csv(csv, dtype=str)
            notebook = run_of(csv.stem, runs.index)
            if notebook is None or "commit" not in rows:
                continue
            run = runs[notebook]
            assert all(c.startswith(run) or run.startswith(c) for c in rows["commit"].dropna().unique()), (csv, run)


def test_timed_seconds_sums_a_notebooks_timed_and_first_calls_only(tmp_path):
    import pandas as pd

    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"times_ms": ["1000;2000", None], "first_call_ms": [500, None]}).to_csv(data / "03_a.csv")
    pd.DataFrame({"times_ms": ["250"]}).to_csv(data / "03_b.csv")
    pd.DataFrame({"times_ms": ["99000"], "first_call_ms": [1]}).to_csv(data / "04_a.csv")  # another notebook's
    assert readme.timed_seconds("03_expandable_segments", tmp_path) == 3.75
    assert readme.timed_seconds("05_torch_compile", tmp_path) == 0


def test_budget_says_the_minutes_measured_and_promises_no_hour():
    assert readme._budget(61.0, 20.0) == "61.0 min in all, of which 20.0 min in timed runs and warm-up calls"
    assert "hour" not in readme._budget(93.2, 37.1)


def test_slice_choice_names_the_two_slices_that_bracket_the_l40s(tmp_path):
    import pandas as pd

    data = tmp_path / "data"
    data.mkdir()
    pd.DataFrame({"gpu_sms": [8, 16, 32], "copy_gbs": [591, 1135, 2018]}).to_csv(data / "13_slices.csv", index=False)
    text = readme.slice_choice(tmp_path)
    assert "between **8 SMs (591 GB/s)** and **16 SMs (1,135 GB/s)**" in text and "slice/sm8/" in text
    pd.DataFrame({"gpu_sms": ["all", "8"]}).to_csv(data / "14_deferred_stop.csv", index=False)
    assert "Notebook 14 measured its own `SLICE_SMS`: 8 SMs" in readme.slice_choice(tmp_path)
    pd.DataFrame({"gpu_sms": [16, 32], "copy_gbs": [1135, 2018]}).to_csv(data / "13_slices.csv", index=False)
    # measured, nothing below the L40S: no bracket, and the section says why rather than "not measured"
    assert readme.slice_choice(tmp_path).startswith("No two slices bracket the L40S's datasheet bandwidth (864 GB/s): "
                                                    "every slice measured copies at 864 GB/s or more")  # fmt: skip
    (data / "13_slices.csv").unlink()
    assert readme.slice_choice(tmp_path) == readme.NOT_MEASURED


def test_findings_are_read_from_the_data():
    """The first screen's numbers are those recomputed here from data/: the recipe's paired speed-up
    over naive, the verdicts counted, the fastest graph generator of notebook 10 and its ratio."""
    import pandas as pd

    from tokgen import gain, load
    from tokgen.claims import SUMMARY_THRESHOLDS, summary_results
    from tokgen.voice import ranking, speedup_text

    lines = readme.findings(ROOT).splitlines()
    run07 = load("07_pipelining", ROOT).query("status == 'ok'")
    recipe = gain(run07, "naive", "compiled pipelined_static", thresholds=SUMMARY_THRESHOLDS)  # as claim 10 judges
    # the summary table's recipe row states claim 10's comparison, not the plain test's (whose looks may stop
    # earlier): one pair, one result on the page (reviews pvA16 S1, rvB16 S1)
    row = summary_results(ROOT).set_index("variant").loc["compiled pipelined_static"]
    assert {k: row[f"{k}_vs_naive"] for k in ("speedup", "rounds", "interval_low")} == {
        k: recipe[k] for k in ("speedup", "rounds", "interval_low")}  # fmt: skip
    assert speedup_text(recipe) in readme.summary_table(ROOT)
    claims, _ = readme._claims(ROOT)
    counts = claims["verdict"].map(lambda v: v.split(" (")[0]).value_counts()
    assert sum(counts) == 10
    base = claims.set_index("#")["verdict"].map(lambda v: v.split(" (")[0])
    whole, on07, claimed = readme.whole_gpu_words(readme.claim_runs(ROOT), base, str(run07["gpu"].iloc[0]))
    assert f"- **{whole}** " in lines[0]  # with several GPU models, each named with its claims (review rv19A M1)
    assert f"against the naive generator, round by round{on07}: {speedup_text(recipe)};" in lines[0]
    assert (claimed or f"Its ten claims: {', '.join(f'{n} {v}' for v, n in counts.items())}.") in lines[0]
    graphs = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv")
    graphs = graphs[graphs["status"] == "ok"]
    first = ranking(graphs, "naive", list(graphs[graphs["generator"].isin(readme.GENERATORS)]["variant"])).iloc[0]
    ours = graphs.set_index("variant").loc[first["variant"]]
    beyond = next(line for line in lines if line.startswith("- **Beyond the article**"))
    assert f"`{first['variant']}`, generates B = {ours['batch_size']}, N = {ours['max_seqlen']} in " \
           f"{ours['median_ms']:.1f} ({ours['q25_ms']:.1f}–{ours['q75_ms']:.1f}) ms" in beyond  # fmt: skip
    assert f"against naive {speedup_text(first)}" in beyond
    assert f"against `generate()` static {speedup_text(gain(graphs, 'generate() static', first['variant']))}" in beyond
    assert readme.findings(ROOT / "nothing") == readme.NOT_MEASURED


def erratum_faults(root: Path) -> list[str]:
    """What is wrong with `root`'s README errata against its committed notebooks' outputs: an item that names a
    notebook no longer showing its quote (a new run replaced it), a notebook not named that shows it (the same fault
    unreported), or a named notebook that already shows the item's replacement, quoted as `now: “…”` (review rv21B
    M1: an old quote that survives inside the corrected text kept three re-run items alive); [] where none."""
    import json
    import re

    def said(path):
        outputs = [o for c in json.loads(path.read_text())["cells"] for o in c.get("outputs", [])]
        parts = [v for o in outputs for v in (o.get("text"), *o.get("data", {}).values()) if v]
        return [" ".join((v if isinstance(v, str) else "".join(v)).split()) for v in parts]

    committed = sorted([*root.glob("notebooks/*.ipynb"), *root.glob("solutions/*.ipynb"),
                        *root.glob("slice/sm*/notebooks/*.ipynb")])  # fmt: skip
    outputs = {str(p.relative_to(root)): said(p) for p in committed}
    text = (root / "README.md").read_text()
    if "#### Errata" not in text:
        return []
    section = text.split("#### Errata", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^- (.*?)(?=^- |\Z)", section, flags=re.S | re.M)
    if not items:
        return ["the errata section lists no item: remove the section instead"]
    faults = []
    for item in items:
        item = " ".join(item.split())
        head = item.split("”: ", 1)[0] + "”"  # the notebooks and quotes, before what the item explains
        pairs = re.findall(r"((?:`[^`]+\.ipynb`, )+)“([^”]+)”", head)
        if not pairs:
            faults.append(f"an erratum must start with `notebook.ipynb`, … “quote”: {item[:80]!r}")
        replacements = re.findall(r"\b[Nn]ow: “([^”]+)”", item)  # what the code prints instead, where the item says
        for names, quote in pairs:
            named = set(re.findall(r"`([^`]+\.ipynb)`", names))
            for path in sorted(named):
                if not any(quote in out for out in outputs.get(path, [])):
                    faults.append(f"{path} no longer says “{quote}”: update it")
                for now in replacements:
                    if any(now in out for out in outputs.get(path, [])):
                        faults.append(f"{path} already says the replacement “{now}”: remove it from the item")
            showing = {p for p, outs in outputs.items() if any(quote in out for out in outs)}
            if not showing <= named:
                faults.append(f"“{quote}” is also in {sorted(showing - named)}: name them in the erratum")
    return faults


def test_each_erratum_names_every_committed_notebook_that_still_says_it():
    """README's errata quote the committed outputs that later fixes change. Each item names the
    notebooks that show the quote: one that no longer says it (a new run replaced it) makes the
    item obsolete, and one not named that says it is the same fault unreported; one that already
    shows the item's `now: “…”` replacement was re-run (review rv21B M1); this test says which."""
    assert erratum_faults(ROOT) == []


def test_an_erratum_whose_notebook_already_shows_its_replacement_is_reported(tmp_path):
    """rv21B M1, a known answer: the old quote survives inside the corrected text of a re-run notebook, so only
    the `now:` quote tells the item is stale; a notebook still showing the old text alone passes."""
    import json

    def notebook(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        cell = {"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": [text]}]}
        path.write_text(json.dumps({"cells": [cell]}))

    notebook(tmp_path / "notebooks" / "01_a.ipynb", "rank 19: `x`. The end.")
    notebook(tmp_path / "notebooks" / "02_b.ipynb", "rank 19: `x`, shared with the baseline. The end.")
    readme_text = ("# t\n\n#### Errata\n\n- `notebooks/{}`, “rank 19: `x`”: it missed a word. It says so, now: "
                   "“shared with the baseline”.\n\n## Next\n")  # fmt: skip
    (tmp_path / "README.md").write_text(readme_text.format("01_a.ipynb`, `notebooks/02_b.ipynb"))
    stale = "notebooks/02_b.ipynb already says the replacement “shared with the baseline”: remove it from the item"
    assert erratum_faults(tmp_path) == [stale]
    (tmp_path / "README.md").write_text(readme_text.format("01_a.ipynb"))  # the re-run one left out: still named?
    assert erratum_faults(tmp_path) == ["“rank 19: `x`” is also in ['notebooks/02_b.ipynb']: name them in the erratum"]
    notebook(tmp_path / "notebooks" / "02_b.ipynb", "rank 19: shared with the baseline.")  # a quote that does not
    assert erratum_faults(tmp_path) == []  # survive in the new text: the item names only the notebook still stale


def test_the_error_rate_table_shows_the_a_a_comparisons_undecided_at_the_cap_and_no_rounded_certainty(tmp_path):
    import pandas as pd

    (tmp_path / "data").mkdir()
    rows = [
        {"source": "recorded rounds", "scenario": scenario, "rate": rate, "capped_share": capped, "mean_rounds": 40.0,
         "trials": 4000, "looks": "10;20;40;80"}
        for scenario, rate, capped in (("A/A", 0.03, 0.17275), ("edge ×1.05", 0.01, 0.1), ("edge ×1/1.05", 0.02, 0.2),
                                       ("×1.10", 0.98, 0.01), ("×1.15", 0.9995, 0.0005))
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "data" / "sequential_error_rates.csv", index=False)
    header, _, recorded = readme.sequential_rates(tmp_path).splitlines()
    assert "| false no effect (worse band edge) |" in header and "| A/A undecided at the cap |" in header
    cells = dict(zip(header.strip("| ").split(" | "), recorded.strip("| ").split(" | ")))
    assert cells["A/A undecided at the cap"] == "17.3%" and cells["false no effect (worse band edge)"] == "2.0%"
    assert cells["power at ×1.15"] == "99.95%"  # not "100.0%": some comparisons missed it
    assert cells["power at ×1.10"] == "98.0%"


def test_the_sequential_design_that_readme_and_notebook_00_state_is_the_codes():
    """The hand-written text states the default design's looks, levels and the rounds a level needs
    (parameters and their arithmetic, not measurements): they must be what tokgen.stats computes."""
    from tokgen.stats import ALPHA, look_levels, looks_up_to, signed_rank_p
    from tokgen.voice import level_text

    looks = looks_up_to(80)
    levels = [level_text(a) for a in look_levels(looks)]
    fewest = [next(n for n in range(1, 64) if signed_rank_p([1.0] * n) < a) for a in (ALPHA, *look_levels(looks))]
    after = ", ".join(map(str, looks[:-1])) + f" and {looks[-1]}"
    readme_text = " ".join((ROOT / "README.md").read_text().split())
    assert f"after {after} rounds the levels are {', '.join(levels[:-1])} and {levels[-1]}" in readme_text
    assert f"({', '.join(levels[:-1])} or {levels[-1]} for looks after {after} rounds)" in readme_text  # glossary
    assert f"can decide with {fewest[0]} rounds that all agree" in readme_text
    assert f"a look at {levels[0]} needs {fewest[1]} that all agree" in readme_text
    notebook = " ".join(line.removeprefix("#") for line in (ROOT / "notebooks/00_setup.py").read_text().splitlines())
    notebook = " ".join(notebook.split())
    assert f"after {after} rounds)" in notebook
    assert f"For {after} rounds that is {', '.join(levels[:-1])} and {levels[-1]}, which add up to {ALPHA}" in notebook


def test_the_per_regime_minutes_count_notebooks_and_solutions_once_each():
    import re

    import pandas as pd

    runs = pd.read_csv(ROOT / "data" / "run_all.csv")
    solution = runs["notebook"].str.startswith("solution")
    line = next(x for x in (ROOT / "README.md").read_text().splitlines() if x.startswith("- per regime: "))
    whole, solutions = re.search(r"whole GPU ([\d.]+) min.*worked solutions, ([\d.]+) min", line).groups()
    assert float(whole) == round(runs[~solution]["seconds"].sum() / 60, 1)
    assert float(solutions) == round(runs[solution]["seconds"].sum() / 60, 1)


def test_the_beyond_tables_floors_are_computed_now_from_notebook_10s_run(tmp_path):
    """Not a floor column an older notebook stored (here a stale 2% for naive): the current floors of
    that run's rows at its recorded bandwidth; naive's, without a measured TF32 throughput, is its
    bytes alone, so a lower bound, and its share says "or more"."""
    import json

    import pandas as pd
    import torch
    from transformers import GPT2LMHeadModel

    from tokgen.bandwidth import floor_ms, generation_bytes
    from tokgen.model import gpt2_config

    data = tmp_path / "data"
    data.mkdir()
    params = json.dumps({"SIZE": "gpt2"})
    rows = [("naive", "naive", None, [800.0, 820.0, 810.0]), ("graph_triton_kernels K=4", "graph_triton_kernels", 4,
                                                              [60.0, 61.0, 59.0])]  # fmt: skip
    pd.DataFrame([{"variant": v, "generator": g, "steps_per_graph": k, "status": "ok", "batch_size": 32,
                   "max_seqlen": 100, "steps": 100, "median_ms": sorted(t)[1], "q25_ms": min(t), "q75_ms": max(t),
                   "times_ms": ";".join(map(str, t)), "params": params} for v, g, k, t in rows]).to_csv(
        data / "10_cuda_graphs.csv", index=False)  # fmt: skip
    pd.DataFrame({"bandwidth_gb_s": [1000.0, 2000.0]}).to_csv(data / "10_bandwidth.csv", index=False)  # the last
    pd.DataFrame({"variant": ["naive"], "notebook": [10], "pct_of_own_floor": [2.0], "times_task_floor": [9.0]}).to_csv(
        data / "12_speed_of_light.csv", index=False)  # fmt: skip
    with torch.device("meta"):
        model = GPT2LMHeadModel(gpt2_config("gpt2"))
    naive_floor = generation_bytes(model, 32, 100, "recompute") / 2000e9 * 1e3  # ms
    filled = floor_ms(model, 32, 100, 2000.0)
    text = readme.beyond_table(tmp_path)
    naive_rate = generation_bytes(model, 32, 100, "recompute") / 810 / 1e6  # the bytes it must move / time (S4)
    assert (f"| {readme.at_least_pct(100 * naive_floor / 810)} or more (bytes only) | {naive_rate:,.0f} | "
            f"{810 / filled:.2f}× |") in text  # fmt: skip
    rate = generation_bytes(model, 32, 100) / 60 / 1e6  # filled slots only: GB/s
    assert f"| {100 * filled / 60:.0f}% | {rate:,.0f} | {60 / filled:.2f}× |" in text and "9.00×" not in text
    (data / "10_bandwidth.csv").unlink()
    assert "| not measured | not measured | not measured |" in readme.beyond_table(tmp_path)


def test_the_summary_table_reads_medians_and_gpu_shares_over_the_rounds_every_variant_ran(tmp_path):
    """A sequential run of notebook 07: kv_static ran on to 16 rounds, its last 8 slow (the host drifted);
    naive and the recipe stopped at 8. Its median, ms per step and GPU share are over its first 8 rounds
    (100-107 ms), not its 16 (median 153.5 ms), and a line under the table says so."""
    import pandas as pd

    from tokgen.stats import time_summary

    def row(variant, t, busy):
        s = time_summary(t)
        return {"variant": variant, "status": "ok", "runs": len(t), "steps": 10, **s,
                "ms_per_step": s["median_ms"] / 10, "gpu_busy_ms": busy, "gpu_busy_share": busy / s["median_ms"],
                "times_ms": ";".join(map(str, t)), "peak_reserved_gb": 1.0, "order_seed": 3, "looks": "8;16",
                "gpu": "GPU X"}  # fmt: skip

    sync = [100.0 + i for i in range(8)] + [200.0 + i for i in range(8)]
    rows = [row("naive", [500.0 + i for i in range(8)], 450.0), row("kv_static", sync, 42.0),
            row("compiled pipelined_static", [50.0 + i for i in range(8)], 45.0)]  # fmt: skip
    (tmp_path / "data").mkdir()
    pd.DataFrame(rows).to_csv(tmp_path / "data" / "07_pipelining.csv", index=False)
    text = readme.summary_table(tmp_path)
    line = next(x for x in text.splitlines() if "| kv_static |" in x)
    assert "| 103.5 (101.8–105.2) | 10.35 | 41% |" in line  # over all 16 rounds: 153.5, 15.35, 27%
    assert text.endswith("over the first 8 rounds, which every interleaved variant ran; each paired speed-up "
                         "uses the rounds up to the look that decided it (the rounds it names), or every round both "
                         "variants ran where none did.*")  # fmt: skip
    assert "busy 41%–84% of the wall time, over the first 8 rounds, which every interleaved variant ran)" in \
        readme._host_bound(readme._summary(tmp_path))  # fmt: skip


def test_deferred_table_says_where_a_slice_rows_confinement_was_not_measured(monkeypatch):
    """A slice row whose GPU busy time was lost (`confined` NaN, as deferred_stop_gains gives it) is
    neither "confined" nor "NOT confined"."""
    g = {"speedup": 1.25, "speedup_q25": 1.2, "speedup_q75": 1.3, "outcome": "faster", "gpu_share_sync": 0.5,
         "transformers": "5.1.0", "cache": "dynamic", "rounds": 10, "p_value": 0.01}
    d = pd.DataFrame([{**g, "gpu_sms": "all", "confined": "whole GPU"}, {**g, "gpu_sms": "8", "confined": True},
                      {**g, "gpu_sms": "8", "confined": False},
                      {**g, "gpu_sms": "16", "confined": float("nan")}])  # fmt: skip
    monkeypatch.setattr(readme, "deferred_stop_gains", lambda results_dir: d)
    text = readme.deferred_table(Path("."))
    for where in ("| whole GPU |", "| 8-SM slice (confined, inferred) |", "| 8-SM slice (NOT confined, inferred) |",
                  "| 16-SM slice (confinement not measured) |"):  # fmt: skip
        assert where in text, where


def test_the_deferred_line_counts_only_rows_that_ran_where_they_say(monkeypatch):
    """The README's deferred-stop line counts the whole GPU and confined slice rows; a slice row that ran
    outside its slice, and one whose confinement was not measured (NaN), are named and left out."""
    g = {"speedup": 1.25, "speedup_q25": 1.2, "speedup_q75": 1.3, "gpu_share_sync": 0.5, "transformers": "5.1.0",
         "cache": "dynamic", "rounds": 10, "p_value": 0.01}
    d = pd.DataFrame([{**g, "gpu_sms": "all", "confined": "whole GPU", "outcome": "faster"},
                      {**g, "gpu_sms": "8", "confined": True, "outcome": "faster"},
                      {**g, "gpu_sms": "8", "confined": False, "outcome": "slower"},
                      {**g, "gpu_sms": "16", "confined": float("nan"), "outcome": "slower"}])  # fmt: skip
    monkeypatch.setattr(readme, "deferred_stop_gains", lambda results_dir: d)
    line = readme._deferred_line(Path("."))
    assert readme.count_text(d["outcome"][:2], "places and caches") in line
    assert ("; 1 more, taken as run outside its slice (inferred from its GPU busy time: within 1.5× of the whole "
            "GPU's), is not counted") in line  # fmt: skip
    assert "; 1 more, whose confinement was not measured, is not counted." in line


def test_the_claims_table_says_above_it_where_each_column_was_measured():
    """The sources line (commit per column, mixed runs flagged) stands above the verdicts, as in notebook 09."""
    from tokgen.claims import regime_sources, slice_runs

    block = readme.claims_block(ROOT)
    sources = regime_sources(ROOT, slice_runs(ROOT, ROOT / "slice"))
    assert sources.startswith("- whole GPU: ") and "commit " in sources
    assert block.startswith(f"Where each column was measured:\n{sources}\n\n| # |")


def test_findings_list_as_disagreeing_only_claims_whose_slices_disagree(monkeypatch):
    """A note that holds "depends" (claim 10's naive GPU-bound note) is no disagreement (review r9:
    the README said the slices "agree on 1, 5, 10 … and disagree on 10")."""
    agree = "both slices agree (reproduced) at the sizes both ran; naive GPU-bound in both: the speed-up depends on x"
    differ = "the slices disagree: the verdict depends on where between them the L40S lies"
    claims = pd.DataFrame({"claim": [1, 9, 10], "slices": [agree, differ, agree]})
    picked = readme.disagreeing(claims)
    assert picked["claim"].tolist() == [9]



def test_findings_do_not_say_slices_bracket_the_l40s_where_they_do_not(monkeypatch):
    """On a GPU slower than the L40S (an L4) the slice runs bracket nothing: the first screen must not
    head them "Two slices that bracket the L40S's bandwidth" (review r8, left open at b296e64)."""
    monkeypatch.setattr(readme, "slices_bracket", lambda *args: True)  # either way, whatever the committed slices
    said = readme.findings(ROOT)
    assert "**Two slices that bracket the L40S's bandwidth**" in said
    monkeypatch.setattr(readme, "slices_bracket", lambda *args: False)
    said = readme.findings(ROOT)
    assert "**Two slices, which do not bracket the L40S's bandwidth on this GPU**" in said
    assert "bracket the L40S's bandwidth**" not in said.replace("do not bracket the L40S's bandwidth on", "")
    assert "a slice matches the L40S's bandwidth" not in said


def test_the_criteria_block_gives_each_claim_the_criterion_its_verdict_applies(tmp_path):
    """README states each claim's criterion (review rvD14 S7: it named a criterion column the table lacks), read
    from `tokgen.claims.CLAIMS`, the criteria the verdicts apply, with no data needed."""
    from tokgen.claims import CLAIMS

    text = readme.criteria_block(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    assert len(rows) == len(CLAIMS) == 10
    for (n, (_, claim, criterion, _)), row in zip(CLAIMS.items(), rows):
        assert row == f"| {n} | {claim} | {criterion} |"
    assert "×1.5" in rows[1] and "×4" in rows[9]  # claim 2's threshold and claim 10's: the repo's, shown


def test_the_reading_rules_say_when_an_undecided_comparison_counts_as_none():
    """The README's reading rules match `tokgen.claims`: an undecided comparison whose interval rules out ±5% in
    the claim's direction counts as none (review rvD14 S1: they said every such verdict reads inconclusive)."""
    from tokgen.claims import RULED_OUT

    text = " ".join((ROOT / "README.md").read_text().split())
    assert "counts as none" in RULED_OUT
    assert "unless that comparison's interval already rules out a difference beyond ±5% in the direction" in text
    assert "unless the comparison's interval rules out a difference beyond ±5% in the direction the claim" in text
    assert "A verdict that needs an undecided comparison reads \"inconclusive\". " not in text


def test_the_findings_say_where_an_undecided_pipelining_comparison_rules_a_gain_out(monkeypatch, tmp_path):
    """Review rvD14 S3: the first screen said "undecided at the cap" where the interval had ruled out any gain
    beyond 5% (what decided claim 7); it now says so, and only where the interval's high end is below ×1.05."""
    highs = iter([1.03, 1.20])
    monkeypatch.setattr(readme, "Tables", lambda folder: {"07_pipelining": pd.DataFrame()})
    monkeypatch.setattr(readme, "gain", lambda run, base, new: {"outcome": "undecided", "interval_high": next(highs)})
    monkeypatch.setattr(readme, "_paired", lambda g: f"×(high {g['interval_high']})")
    text = readme._pipelining(tmp_path)
    eager, compiled = text.split("; compiled ")
    assert eager.startswith("eager ×(high 1.03)") and "a gain beyond 5% is ruled out" in eager
    assert compiled == "×(high 1.2)"


def test_the_beyond_tables_floors_take_notebook_12s_tf32_rate_only_from_the_card_and_commit_of_the_bandwidth(
    tmp_path,
):
    """Review rvC15 S1: naive's own floor is arithmetic-bound given a TF32 rate, but a rate is one card's: read
    from data/12_bandwidth.csv only where that row names the GPU and commit of notebook 10's copy row; measured
    on another card (or at another commit, or naming none), naive's floor is its bytes alone, "or more"."""
    import json

    import pandas as pd
    import torch
    from transformers import GPT2LMHeadModel

    from tokgen.bandwidth import generation_bytes, generation_flops
    from tokgen.model import gpt2_config

    data = tmp_path / "data"
    data.mkdir()
    t = [800.0, 820.0, 810.0]
    pd.DataFrame([{"variant": "naive", "generator": "naive", "steps_per_graph": None, "status": "ok",
                   "batch_size": 32, "max_seqlen": 100, "steps": 100, "median_ms": 810.0, "q25_ms": 800.0,
                   "q75_ms": 820.0, "times_ms": ";".join(map(str, t)), "params": json.dumps({"SIZE": "gpt2"}),
                   "gpu_uuid": "GPU-a", "commit": "c1"}]).to_csv(data / "10_cuda_graphs.csv", index=False)  # fmt: skip
    pd.DataFrame({"bandwidth_gb_s": [2000.0], "gpu_uuid": ["GPU-a"], "commit": ["c1"]}).to_csv(
        data / "10_bandwidth.csv", index=False)  # fmt: skip
    with torch.device("meta"):
        model = GPT2LMHeadModel(gpt2_config("gpt2"))
    arithmetic = generation_flops(model, 32, 100, "recompute") / 100e9  # ms at 100 TFLOP/s: the longer floor
    moved = generation_bytes(model, 32, 100, "recompute") / 2000e9 * 1e3  # ms at 2,000 GB/s
    assert arithmetic > moved
    bytes_only = f"| {readme.at_least_pct(100 * moved / 810)} or more (bytes only) |"

    def naive_cell(uuid, commit):
        pd.DataFrame({"matmul_tflops": [100.0], "gpu_uuid": [uuid], "commit": [commit]}).to_csv(
            data / "12_bandwidth.csv", index=False)  # fmt: skip
        return next(line for line in readme.beyond_table(tmp_path).splitlines() if "| naive |" in line)

    assert f"| {100 * arithmetic / 810:.0f}% |" in naive_cell("GPU-a", "c1") and "bytes only" not in naive_cell(
        "GPU-a", "c1")  # fmt: skip
    assert bytes_only in naive_cell("GPU-b", "c1")  # another card
    assert bytes_only in naive_cell("GPU-a", "c0")  # another commit
    assert bytes_only in naive_cell(None, None)  # a row that names neither


def test_a_lower_bounds_percentage_is_rounded_down():
    """Review rr15 N3: the naive generator's bytes-only floor is 2.586% of its time, a lower bound: "2.5% or more",
    never "3%" or "2.6%", which overstate it."""
    assert readme.at_least_pct(2.586) == "2.5%"
    assert readme.at_least_pct(2.99) == "2.9%"
    assert readme.at_least_pct(35.9) == "35%"


def test_the_reruns_note_gives_both_runs_naive_and_recipe_with_their_host_probes():
    """Review rvC16 S1: above the Beyond table, notebook 10's and notebook 07's medians of naive and the recipe,
    their GPU busy times and each run's host probe, from the committed CSVs (not "(two runs)" alone)."""
    graphs = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv").set_index("variant")
    seven = pd.read_csv(ROOT / "data" / "07_pipelining.csv").set_index("variant")
    text = readme.reruns_note(ROOT)
    assert f"`naive` {graphs.at['naive', 'median_ms']:.1f} ms against " in text
    assert f"took {graphs['host_probe_ms_before'].iloc[0]:.2f} ms before notebook 10's rounds and " \
           f"{seven['host_probe_ms_before'].iloc[0]:.2f} ms before notebook 07's" in text  # fmt: skip
    assert "`compiled pipelined_static`" in text
    assert "<!-- tokgen:reruns -->\n" + text in (ROOT / "README.md").read_text()
    # rv20B N2: notebook 07's median is over the first k rounds, k the fewest that any variant of naive's
    # comparison (its order_seed) ran, recomputed here from the committed rounds, not its own row's median
    ok = seven[seven["status"] == "ok"]
    k = int(ok.loc[ok["order_seed"] == ok.at["naive", "order_seed"], "runs"].min())
    first = statistics.median([float(x) for x in ok.at["naive", "times_ms"].split(";")][:k])
    assert f"`naive` {graphs.at['naive', 'median_ms']:.1f} ms against {first:.1f} ms" in text
    if k < int(ok.at["naive", "runs"]):
        assert f"Notebook 07's medians here are over the first {k} rounds" in text
    # rv21B S3: each run's GPU busy time is one profiled generation after its rounds, not over the first k rounds
    assert "GPU busy times here are" not in text
    assert text.endswith(" Each GPU busy time is one profiled generation after that run's timed rounds.")  # rr21d N7


def test_the_glossary_says_a_cuda_graph_removes_the_hosts_launch_calls_not_every_per_kernel_cost():
    """Review rvC16 N1: a replay removes the host's launch call per kernel, not the GPU's per-kernel boundaries,
    which notebook 10 itself measures inside graphs."""
    line = next(x for x in (ROOT / "README.md").read_text().splitlines() if x.startswith("| CUDA graph |"))
    assert "without Python or a host launch call per kernel" in line and "per-kernel launch costs" not in line


def _runs(**gpus):
    """`claim_runs`-shaped: claim -> (GPU, commits, notebooks), claims 1-5 and 8 on one GPU, 6, 7, 9, 10 on `b`."""
    a, b = gpus["a"], gpus["b"]
    nb = {1: ("01",), 2: ("02",), 3: ("03",), 4: ("04",), 5: ("05",), 6: ("06",), 7: ("06", "07"), 8: ("08",),
          9: ("07",), 10: ("07",)}  # fmt: skip
    return {n: (b if n in (6, 7, 9, 10) else a, ("a403ef0" if n in (6, 7, 9, 10) else "9d6c84b",), nb[n])
            for n in range(1, 11)}  # fmt: skip


def test_the_whole_gpu_line_names_each_gpu_with_its_claims_and_notebooks():
    """Two GPU models behind the ten claims (review rv19A M1, rv19B M2): each named with its claims and notebooks,
    the claims tallied per GPU and notebook 07's sentences placed on its GPU; one model reads as before."""
    import pandas as pd

    from tokgen_tools.readme import _numbers, whole_gpu_words

    verdict = pd.Series(["partly", "partly", "inconclusive", "inconclusive", "reproduced", "not reproduced",
                         "not reproduced", "inconclusive", "partly", "not reproduced"], index=range(1, 11))  # fmt: skip
    whole, on07, claimed = whole_gpu_words(_runs(a="NVIDIA H100 80GB HBM3", b="NVIDIA H200"), verdict, "NVIDIA H200")
    assert whole == ("Whole GPU, 2 GPU models: claims 1–5, 8 from notebooks 01–05, 08 on the NVIDIA H100 80GB HBM3; "
                     "claims 6, 7, 9, 10 from notebooks 06, 07 on the NVIDIA H200")  # fmt: skip
    assert on07 == " (notebook 07, on the NVIDIA H200)"
    assert claimed == ("Its ten claims: on the NVIDIA H100 80GB HBM3 (1–5, 8) 3 inconclusive, 2 partly, 1 reproduced; "
                       "on the NVIDIA H200 (6, 7, 9, 10) 3 not reproduced, 1 partly.")  # fmt: skip
    assert whole_gpu_words(_runs(a="NVIDIA H200", b="NVIDIA H200"), verdict, "NVIDIA H200") == (
        "Whole NVIDIA H200", "", "")
    assert _numbers(["1", "2", "3", "5", "6", "8"]) == "1–3, 5, 6, 8" and _numbers(["06", "07"]) == "06, 07"


def test_claim_runs_reads_each_claims_tables_gpu_and_commit(tmp_path):
    """Hand-made tables: notebook 01's on an H100, 06's and 07's on an H200; claim 7 reads 06 and 07."""
    import pandas as pd

    from tokgen_tools.readme import claim_runs

    (tmp_path / "data").mkdir()
    for name, gpu, commit in (("01_naive", "NVIDIA H100 80GB HBM3", "9d6c84b80aa0"),
                              ("06_eos_sync_profile", "NVIDIA H200", "a403ef0e7c94"),
                              ("07_pipelining", "NVIDIA H200", "a403ef0e7c94")):  # fmt: skip
        pd.DataFrame({"gpu": [gpu], "commit": [commit], "variant": ["naive"]}).to_csv(
            tmp_path / "data" / f"{name}.csv", index=False)
    runs = claim_runs(tmp_path)
    assert runs[1] == ("NVIDIA H100 80GB HBM3", ("9d6c84b",), ("01",))
    assert runs[7] == ("NVIDIA H200", ("a403ef0",), ("06", "07"))
    assert runs[2] == ("", (), ())  # its table is missing


def test_the_provenance_names_each_gpu_with_its_uuids_and_notebooks():
    """run_all rows of two GPU models (review rv19A M2, rv19B M3): each model with the notebooks each UUID ran,
    solutions counted by their notebook, rows without a UUID said so."""
    import pandas as pd

    from tokgen_tools.readme import _gpus_line

    h100, h200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
    whole = pd.DataFrame({"notebook": ["00_setup", "01_naive", "03_expandable_segments", "06_eos_sync_profile",
                                       "solution 07_pipelining"],
                          "gpu": [h100, h100, h100, h200, h200],
                          "gpu_uuid": ["56d1b8d3-5f38", "56d1b8d3-5f38", None, "c5384e55-2e35", "c5384e55-2e35"]})
    sm8 = pd.DataFrame({"notebook": ["01_naive"], "gpu": [h100], "gpu_uuid": [None]})
    assert _gpus_line({"whole GPU": whole, "8 SMs": sm8}) == [
        "NVIDIA H100 80GB HBM3 (whole GPU: notebook 03 with no GPU UUID recorded, notebooks 00, 01 on 56d1b8d3-5f38; "
        "8 SMs: notebook 01 with no GPU UUID recorded)",
        "NVIDIA H200 (whole GPU: notebooks 06, 07 on c5384e55-2e35)",
    ]  # fmt: skip


def test_the_beyond_and_products_tables_name_their_runs_and_bandwidths(tmp_path):
    """Review rv20B M1: notebook 10's Beyond table and notebook 12's products table came from two commits on
    two cards at two copy bandwidths, and neither said so: each now ends with its run line."""
    import pandas as pd

    data = tmp_path / "data"
    data.mkdir()
    ten = {"commit": "aaaaaaaaaaaa", "gpu": "NVIDIA H200", "gpu_uuid": "11111111-x",
           "run_started": "2026-01-02T03:04:00"}  # fmt: skip
    twelve = {"commit": "bbbbbbbbbbbb", "gpu": "NVIDIA H200", "gpu_uuid": "22222222-y",
              "run_started": "2026-01-01T05:06:00"}  # fmt: skip
    pd.DataFrame([{"variant": "naive", "status": "ok", **ten}]).to_csv(data / "10_cuda_graphs.csv", index=False)
    pd.DataFrame([{"bandwidth_gb_s": 2000.0, **ten}]).to_csv(data / "10_bandwidth.csv", index=False)
    pd.DataFrame([{"bandwidth_gb_s": 3000.0, "matmul_tflops": None, **twelve}]).to_csv(data / "12_bandwidth.csv",
                                                                                      index=False)  # fmt: skip
    products = [{"product": "LM head", "rows": 32, "splits": 1, "weight_mb": 150.0, "floor_us": 50.0, "median_us": 60.0,
                 "q25_us": 59.0, "q75_us": 61.0, "status": "ok", "pct_of_copy_bandwidth": 83.0, **twelve}]  # fmt: skip
    pd.DataFrame(products).to_csv(data / "12_products.csv", index=False)
    run = readme._beyond_run(tmp_path)
    assert "commit `aaaaaaaaaaaa` (NVIDIA H200, GPU 11111111…; 10_cuda_graphs started 2026-01-02 03:04 UTC" in run
    assert "notebook 10's own copy bandwidth, 2,000 GB/s" in run and "12_bandwidth" not in run  # no TF32 used
    text = readme.products_table(tmp_path)
    assert "*Run: commit `bbbbbbbbbbbb` (NVIDIA H200, GPU 22222222…; 12_products started 2026-01-01 05:06 UTC" in text
    assert "notebook 12's copy bandwidth, 3,000 GB/s" in text  # 150 MB over 50 µs
    # rv21B N5: where notebook 12 used notebook 10's measurement of its run (12_bandwidth's source), the line says
    # so, with 10_bandwidth's start
    pd.DataFrame([{"bandwidth_gb_s": 3000.0, "source": "notebook 10", "matmul_tflops": None, **twelve}]).to_csv(
        data / "12_bandwidth.csv", index=False)  # fmt: skip
    pd.DataFrame([{"bandwidth_gb_s": 3000.0, **twelve, "run_started": "2026-01-01T04:59:00"}]).to_csv(
        data / "10_bandwidth.csv", index=False)  # fmt: skip
    used = readme.products_table(tmp_path)
    assert "10_bandwidth started 2026-01-01 04:59 UTC); floors at notebook 10's copy bandwidth measurement " \
        "(10_bandwidth), as notebook 12 used it, 3,000 GB/s" in used  # fmt: skip
    assert "notebook 12's copy bandwidth" not in used
    # rr21d N2: notebook 10 re-run after notebook 12 at the same commit and card: the start is that of the row whose
    # value notebook 12 took, not the last row's; where no row of that run gives the value, no start is named
    again = {**twelve, "run_started": "2026-01-01T07:30:00"}
    pd.DataFrame([{"bandwidth_gb_s": 3000.0, **twelve, "run_started": "2026-01-01T04:59:00"},
                  {"bandwidth_gb_s": 3100.0, **again}]).to_csv(data / "10_bandwidth.csv", index=False)  # fmt: skip
    rerun = readme.products_table(tmp_path)
    assert "10_bandwidth started 2026-01-01 04:59 UTC); floors at notebook 10's" in rerun and "07:30" not in rerun
    pd.DataFrame([{"bandwidth_gb_s": 3100.0, **again}]).to_csv(data / "10_bandwidth.csv", index=False)
    neither = readme.products_table(tmp_path)
    assert "10_bandwidth started" not in neither and "07:30" not in neither
    assert "floors at notebook 10's copy bandwidth measurement (10_bandwidth), as notebook 12 used it" in neither
    pd.DataFrame([{"bandwidth_gb_s": 2000.0, **ten}]).to_csv(data / "10_bandwidth.csv", index=False)
    assert "**another run than the Beyond table's** (commit `aaaaaaaaaaaa`, GPU 11111111…)" in text
    pd.DataFrame([{**products[0], **ten}]).to_csv(data / "12_products.csv", index=False)  # the same run: nothing said
    assert "another run" not in readme.products_table(tmp_path)
    assert "a static cache's empty slots included" in (ROOT / "README.md").read_text()  # rv20B N3: GB/s, not a rank


def test_the_headline_and_findings_name_the_bandwidth_of_the_floor_and_both_tied_generators():
    """Review rv20B S3: "3.17× the task's bandwidth floor (notebook 12)" read as notebook 12's run, but the floor
    is at notebook 10's own copy bandwidth (the last row of the committed data/10_bandwidth.csv); N1: the headline
    quoted the first listed of tied generators alone, now each with its time. Numbers from the committed CSVs."""
    copies = pd.read_csv(ROOT / "data" / "10_bandwidth.csv")
    gbs = float(copies["bandwidth_gb_s"].iloc[-1])  # the table has no status column: every row is a measurement
    basis = f"(at notebook 10's copy bandwidth, {gbs:,.0f} GB/s; the floor as notebook 12 defines it)"
    graphs = pd.read_csv(ROOT / "data" / "10_cuda_graphs.csv")
    ranked, floors = readme._fastest(graphs[graphs["status"] == "ok"]), readme._floors(ROOT)
    first = ranked.iloc[0]["variant"]
    times = f"{floors.at[first, 'times_task_floor']:.2f}× the task's bandwidth floor {basis}"
    assert times in readme._beyond_line(ROOT)
    head = readme.headline(ROOT)
    medians = graphs.set_index("variant")["median_ms"]
    tied = ranked[(ranked["rank"] == 1) & ranked["tied"]]["variant"]
    assert f"`{first}`, {medians[first]:.1f} ms" in head and f"the first {times}" in head
    for v in list(tied)[1:]:  # every generator tied with the first, named with its own median
        assert f", and `{v}`, {medians[v]:.1f} ms," in head


def test_the_provenance_names_the_runs_on_a_transformers_version_other_than_the_most_common(tmp_path):
    """Review rv22A S4 / rv22B S3: "(notebook 14 runs on the newest)" was a fixed string while a solution ran on
    5.17.0 too; the parenthesis is now read from the rows (made-up rows: two notebooks and a solution on 5.17.0,
    one slice row on 4.0.0; the most common version, 5.1.0, named alone)."""
    names = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    newer = {names[-1], names[3]}
    rows = [{"notebook": n, "seconds": 6, "commit": "a" * 40, "transformers": "5.17.0" if n in newer else "5.1.0"}
            for n in names]  # fmt: skip
    rows += [{"notebook": f"solution {names[1]}", "seconds": 6, "commit": "a" * 40, "transformers": "5.17.0"},
             {"notebook": f"solution {names[2]}", "seconds": 6, "commit": "a" * 40,
              "transformers": "5.1.0"}]  # fmt: skip
    base = _run_all(tmp_path, rows)
    _run_all(tmp_path / "slice" / "sm8", [{"notebook": names[1], "seconds": 9, "commit": "a" * 40,
                                           "transformers": "4.0.0", "parameters": "{}"}])  # fmt: skip
    line = readme.provenance(base).splitlines()[1]
    assert line == (f"- torch 2.11, transformers 4.0.0, 5.1.0, 5.17.0 (notebook {names[1]} (8 SMs) on 4.0.0; "
                    f"notebooks {names[3]}, {names[-1]} and solution {names[1]} on 5.17.0), Python 3.12")  # fmt: skip


def test_transformers_versions_order_equal_versions_by_their_text():
    """Review rr22c N7: "5.1" and "5.1.0" are equal versions; without a tie-break their order (and which one a tie in
    counts names as the most common) followed the set's order, which varies with hash seeding."""
    for given in (["5.1.0", "5.1", "5.17.0", "x"], ["x", "5.17.0", "5.1", "5.1.0"]):
        assert sorted(given, key=readme._version_key) == ["5.1", "5.1.0", "5.17.0", "x"]
    rows = pd.DataFrame({"notebook": ["01_a", "02_b"], "transformers": ["5.1.0", "5.1"]})
    assert readme.transformers_versions({"whole GPU": rows}) == "5.1, 5.1.0 (notebook 01_a on 5.1.0)"


def _page(folder: Path, gpu: str, commit: str, uuid: str | None = None, cap=None, peaks=None):
    """A quick page's folder: report.md, and a quick_stages.csv of one row (its GPU, card, commit and parameters)."""
    import json

    (folder / "data").mkdir(parents=True)
    (folder / "report.md").write_text("a page\n")
    row = {"stage": "copy bandwidth", "gpu": gpu, "commit": commit, "params": json.dumps({"MEMORY_GB": cap}),
           **({"gpu_uuid": uuid} if uuid else {})}  # fmt: skip
    pd.DataFrame([row]).to_csv(folder / "data" / "quick_stages.csv", index=False)
    if peaks:
        timed = pd.DataFrame({"variant": list(peaks), "peak_reserved_gb": list(peaks.values())})
        timed.to_csv(folder / "data" / "07_pipelining.csv", index=False)


def test_the_quick_example_pages_are_named_with_the_gpu_card_and_commit_of_their_own_csvs(tmp_path):
    """Review rv22B S1: the line beside the links said "an earlier H100 run" after the whole-GPU page was re-run
    on an H200. Made-up pages: two GPU models; two cards of one model; one card; a card not recorded."""
    quick = tmp_path / "data" / "quick"
    _page(quick / "whole", "NVIDIA H200", "019154c9aa44", "GPU-08d8f342-0969")
    _page(quick / "whole_16gb", "NVIDIA H100 80GB HBM3", "24b98f87e8f2", cap=16,
          peaks={"naive": 15.9, "kv_static": 3.8})  # fmt: skip
    assert readme.quick_pages(tmp_path) == (
        "Example pages (two runs on two GPU models, at two commits): [the whole GPU](data/quick/whole/report.md) "
        "(NVIDIA H200, GPU 08d8f342…, commit `019154c`) and [capped at 16 GB](data/quick/whole_16gb/report.md) "
        "(NVIDIA H100 80GB HBM3, no GPU UUID recorded, commit `24b98f8`). The 16 GB cap: it bound the allocator's "
        "cache of `naive` (reserved 15.9 GB); every other variant peaked at 3.8 GB or less.")  # fmt: skip
    for uuid, on in (("7cd44378-d9d6", "on two cards of the NVIDIA H200"), ("08d8f342-0969", "on one card of the "
                     "NVIDIA H200"), (None, "on the NVIDIA H200 (not every run recorded its card)")):  # fmt: skip
        root = tmp_path / str(uuid)
        _page(root / "data" / "quick" / "a", "NVIDIA H200", "019154c9aa44", "08d8f342-0969")
        _page(root / "data" / "quick" / "b", "NVIDIA H200", "019154c9aa44", uuid)
        assert readme.quick_pages(root).startswith(f"Example pages (two runs {on}, at one commit): [the whole GPU]")


def test_the_readme_names_beside_each_quick_page_the_gpu_its_csv_records():
    """The committed README: the GPU model named beside each link to a data/quick page is its quick_stages.csv's."""
    import re

    from tokgen.results import read_table

    text = (ROOT / "README.md").read_text()
    found = re.findall(r"\]\((data/quick/([^/]+)/report\.md)\) \(([^,]+),", text)
    assert {f[1] for f in found} == {p.parent.name for p in (ROOT / "data" / "quick").glob("*/report.md")}
    for _, page, gpu in found:
        assert gpu == read_table(ROOT / "data" / "quick" / page / "data" / "quick_stages.csv")["gpu"].iloc[0]


def test_the_syncs_table_says_the_csvs_per_token_names_hold_counts_per_step_only_while_they_do(tmp_path):
    """Review rv22B S2: a hand-written line said notebook 11's tables name their columns "per token" after its
    run had renamed them; the note now follows the CSV's own column names."""
    kinds = ["local_scalar_dense", "sync_debug_warnings", "stream_syncs", "event_syncs"]
    note = "`data/11_sync_audit.csv` names these columns `*_per_token`; they hold counts per decode step."
    for suffix, said in (("_per_token", True), ("_per_step", False)):
        data = tmp_path / suffix / "data"
        data.mkdir(parents=True)
        audit = pd.DataFrame({"generator": ["naive"], "status": ["ok"], **{f"{k}{suffix}": [2.0] for k in kinds}})
        audit.to_csv(data / "11_sync_audit.csv", index=False)
        text = readme.syncs_table(tmp_path / suffix)
        assert (note in text) == said and "| naive | 2.00 | 2.00 | 2.00 | 2.00 |" in text
