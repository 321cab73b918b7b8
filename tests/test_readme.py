"""README's result tables are exactly what data/ gives."""

from pathlib import Path

from tokgen import readme

ROOT = Path(__file__).resolve().parents[1]


def test_readme_tables_match_the_committed_csvs():
    text = (ROOT / "README.md").read_text()
    assert readme.render(text, ROOT) == text, "run: python -m tokgen.readme"
