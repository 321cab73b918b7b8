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
    assert f"add up to {len(names):.1f} min" in one
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
