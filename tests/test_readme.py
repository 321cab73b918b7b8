"""README's result tables are exactly what data/ gives."""

from pathlib import Path

from tokgen_tools import readme

ROOT = Path(__file__).resolve().parents[1]


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
    assert f"one commit, {'a' * 12}: {len(names)} of {len(names)} notebooks ok" in one
    assert f"{len(names):.1f} min in all" in one
    assert "every notebook of the repository is in the table below" in one

    rows = [{"notebook": n, "seconds": 30, "commit": ("a" if i % 2 else "b") * 40} for i, n in enumerate(names[1:])]
    split = readme.provenance(_run_all(tmp_path / "split", rows))
    assert "not one run yet: the notebooks below ran at 2 commits" in split
    assert f"not yet executed on a GPU: {names[0]}" in split


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
    assert "| attention out | 2.4 | 0.8 | 10.0 (9.0–11.0) | 20.0 (19.0–21.0) | 8% | +50% |" in text
    assert "split in 4, 32 rows" in text and "mlp up" not in text  # failed rows are left out


def test_each_committed_csv_comes_from_its_notebooks_recorded_run():
    """A notebook's CSVs carry the commit that data/run_all.csv (and so the README) names for it:
    results copied in without their run's row would be credited to another run."""
    import pandas as pd

    for results in (ROOT / "data", ROOT / "slice" / "data"):
        runs = pd.read_csv(results / "run_all.csv", dtype=str).set_index("notebook")["commit"]
        for csv in sorted(results.glob("[0-9][0-9]_*.csv")):
            rows = pd.read_csv(csv, dtype=str)
            notebook = next((n for n in runs.index if n[:3] == csv.stem[:3]), None)
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


def test_budget_says_whether_a_run_is_within_the_goal():
    import pandas as pd

    quick = pd.DataFrame({"seconds": [60 * readme.BUDGET_MINUTES], "in timed runs (s)": [90]})
    assert "within the 15-minute goal), of which 1.5 min in timed runs" in readme._budget(quick)
    assert "over the 15-minute goal" in readme._budget(quick.assign(seconds=quick["seconds"] + 1))


def test_slice_choice_names_the_chosen_slice_and_flags_a_near_tie(tmp_path):
    import pandas as pd

    data = tmp_path / "data"
    data.mkdir()

    def choice(gbs_8, gbs_16):  # notebook 13 marks the slice closest to the L40S's 864 GB/s as chosen
        chosen = [abs(gbs_8 - 864) <= abs(gbs_16 - 864), abs(gbs_8 - 864) > abs(gbs_16 - 864)]
        slices = {"gpu_sms": [8, 16, 32], "copy_gbs": [gbs_8, gbs_16, 2018], "chosen": chosen + [False]}
        pd.DataFrame(slices).to_csv(data / "13_slices.csv", index=False)
        return readme.slice_choice(tmp_path)

    tie = choice(591, 1135)  # 273 and 271 GB/s from the L40S's 864
    assert "chose **16 SMs**" in tie and "near tie" in tie and "next closest is 8 SMs" in tie
    clear = choice(700, 1135)
    assert "chose **8 SMs**" in clear and "near tie" not in clear
    pd.DataFrame({"gpu_sms": ["all", "16"]}).to_csv(data / "14_deferred_stop.csv", index=False)
    assert "Notebook 14" in choice(700, 1135)  # 14 measured 16 SMs, not the chosen 8
    assert "Notebook 14" not in choice(591, 1135)
    (data / "13_slices.csv").unlink()
    assert readme.slice_choice(tmp_path) == readme.NOT_MEASURED
