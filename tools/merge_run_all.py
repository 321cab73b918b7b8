"""Merge data/run_all.csv from several machines' results of one split run (issue 49): one row per notebook
(and solution), the one that finished last. Copying one machine's run_all.csv over another's would keep the
other machine's notebooks' older rows (each queue starts from the working tree it was sent).
    python tools/merge_run_all.py OUT.csv IN.csv [IN.csv ...]   (OUT may be one of the INs)"""

import sys

import pandas as pd


def merge(paths: list[str]) -> pd.DataFrame:
    tables = [pd.read_csv(p, keep_default_na=False, dtype=str) for p in paths]
    rows = pd.concat(tables, ignore_index=True)
    rows = rows.sort_values("finished_at").drop_duplicates("notebook", keep="last")
    columns = list(dict.fromkeys(c for t in tables for c in t.columns))  # the first table's order, then new ones
    return rows[columns].sort_values("notebook")


if __name__ == "__main__":
    out, *ins = sys.argv[1:]
    merge(ins).to_csv(out, index=False)
