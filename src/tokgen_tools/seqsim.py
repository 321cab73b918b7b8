"""The error rates of sequential comparisons (tokgen.stats.sequential), measured by simulation.

    python -m tokgen_tools.seqsim                  # writes data/sequential_error_rates.csv
    python -m tokgen_tools.seqsim --trials 500 --out build/seq.csv

Two sources of per-round log-ratios, each judged by the very rule `tokgen.compare` runs
(`tokgen.stats.sequential`, looks `looks_up_to(cap)`):

* **recorded**: the per-round times of our GPU runs (`times_ms` of data/*.csv and
  slice/sm*/data/*.csv), every pair of variants timed in one interleaved run. Each pair's
  log-ratios less their median are its noise; a simulated comparison draws one recorded pair and
  `cap` rounds of its noise in blocks of consecutive rounds (a circular block bootstrap, which
  keeps a slow phase's neighbouring rounds together), smoothed by a little Gaussian jitter (a
  pair has 5-12 rounds: drawn 80 times without it, its values would tie). For a variant against
  itself (A/A) each round's sign is a coin toss, as the random order within a round makes it;
  for an effect the noise keeps its sign (and any skew) and the true log speed-up is added.
* **simulated**: host noise shaped like what issue 46 measured on an H100 (a host-bound variant's
  round-to-round IQR 30-65% of its median, its median moving by a third between blocks of rounds,
  paired ratios' quartiles a few to 13% from their median): a drift per block of 16 rounds, slow
  phases that hit both runs of a round (or, at a phase's edge, one of them), slow single runs,
  a small penalty for the first run of a round, and heavy-tailed jitter.

Scenarios: A/A (×1; any "faster" or "slower" is a false positive), an effect at the edge of the
band, ×(1 ± BAND) (any "no effect" is a false one), and ×1.10 and ×1.15 (power: "faster").
Each row: the shares of each outcome, the error rate the scenario measures with its Monte-Carlo
standard error, the mean rounds used, and provenance (source tables and the commits that made
them, noise summary, seed, versions, this code's commit). tests/test_stats.py runs a small seeded
copy; README and notebook 00 read the CSV (`tokgen.stats.sequential_error_rates`,
`tokgen.stats.recorded_rounds_source`).
"""

import argparse
import datetime
import math
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from tokgen.results import ROOT, git_commit, read_table
from tokgen.stats import (
    BAND,
    FASTER,
    NO_EFFECT,
    SLOWER,
    UNDECIDED,
    looks_up_to,
    run_times,
    sequential,
)

CSV = ROOT / "data" / "sequential_error_rates.csv"
SCENARIOS = {  # name: true speed-up
    "A/A": 1.0,
    f"edge ×{1 + BAND:.2f}": 1 + BAND,
    f"edge ×1/{1 + BAND:.2f}": 1 / (1 + BAND),
    "×1.10": 1.10,
    "×1.15": 1.15,
}
BLOCK = 4  # rounds per block of the recorded noise's bootstrap
JITTER = 0.25  # the recorded noise's smoothing: this share of its median absolute deviation


def hodges_lehmann(x: np.ndarray) -> float:
    """The median of the Walsh averages (x_i + x_j) / 2, i <= j: the centre of symmetry that the
    signed-rank test and its interval judge, for skewed noise not quite the median."""
    i, j = np.triu_indices(len(x))
    return float(np.median((x[i] + x[j]) / 2))


def recorded_pairs(root: Path = ROOT) -> tuple[list[np.ndarray], list[str]]:
    """Every pair of variants timed in one interleaved run (same table, same `order_seed`, status
    ok) in data/ and slice/sm*/data/ under `root`: its per-round log-ratios less their
    Hodges-Lehmann centre (the pair's noise: an effect added to it is then the effect the test
    judges, also where the noise is skewed), and the tables they came from."""
    noises, tables = [], []
    for path in sorted([*root.glob("data/*.csv"), *root.glob("slice/sm*/data/*.csv")]):
        head = read_table(path, nrows=0).columns
        if not {"times_ms", "order_seed", "status"} <= set(head):
            continue
        df = read_table(path, usecols=["times_ms", "order_seed", "status"])
        df = df[df["status"] == "ok"]
        for _, run in df.groupby("order_seed"):
            times = [np.asarray(run_times(r)) for r in run.to_dict("records")]
            for i in range(len(times)):
                for j in range(i + 1, len(times)):
                    n = min(len(times[i]), len(times[j]))
                    if n >= 5:
                        x = np.log(times[i][:n] / times[j][:n])
                        noises.append(x - hodges_lehmann(x))
            tables.append(str(path.relative_to(root)))
    return noises, sorted(set(tables))


def table_commits(tables: list[str], root: Path = ROOT) -> str:
    """Which runs made the recorded rounds: each commit in the tables' `commit` column (12 digits)
    with how many of `tables` (paths under `root`) hold it, most first, e.g. "9d6c84b80aa0 (27
    tables)"; a table without the column counts as "unrecorded". Notebook 00_setup names it."""
    counts: dict[str, int] = {}
    for table in tables:
        has = "commit" in read_table(root / table, nrows=0).columns
        commits = read_table(root / table, usecols=["commit"])["commit"].dropna() if has else []
        for commit in sorted({str(c)[:12] for c in commits} or {"unrecorded"}):
            counts[commit] = counts.get(commit, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{c} ({n} table{'s' * (n != 1)})" for c, n in ordered)


def recorded_noise(noises: list[np.ndarray], rng: np.random.Generator, trials: int, rounds: int) -> np.ndarray:
    """`trials` × `rounds` noise drawn from the recorded pairs: a pair per trial, its rounds in
    circular blocks of BLOCK, plus Gaussian jitter of JITTER × the pair's median absolute deviation."""
    out = np.empty((trials, rounds))
    starts = rng.integers(0, 10**9, (trials, -(-rounds // BLOCK)))
    for t, k in enumerate(rng.integers(0, len(noises), trials)):
        x = noises[k]
        idx = ((starts[t] % len(x))[:, None] + np.arange(BLOCK)[None, :]).ravel()[:rounds] % len(x)
        mad = np.median(np.abs(x)) or 1e-3
        out[t] = x[idx] + rng.normal(0, JITTER * mad, rounds)
    return out


def host_times(rng: np.random.Generator, trials: int, rounds: int, speedup: float = 1.0) -> np.ndarray:
    """Times (ms) of two variants of one process, `trials` × `rounds` × 2 (base, variant), on a
    simulated noisy host: a drift per block of 16 rounds (lognormal, sd 0.25: medians move by a
    third between blocks), slow phases (15% of rounds, ×1.2-1.8) that hit both runs of a round, or
    one of them at a phase's edge (a fifth of them), slow single runs (10%, ×1.3-1.8), +3% for
    the first run of a round (random order), and Student-t (3 degrees of freedom) jitter of 4%."""
    shape = (trials, rounds)
    drift = np.repeat(rng.lognormal(0, 0.25, (trials, -(-rounds // 16))), 16, axis=1)[:, :rounds]
    phase = np.where(rng.random(shape) < 0.15, rng.uniform(1.2, 1.8, shape), 1.0)
    edge = rng.random(shape) < 0.2  # the phase began or ended between the two runs: one of them only
    who = rng.integers(0, 2, shape)  # which run of the round comes first, and which an edge spares
    times = []
    for v, scale in ((0, 1.0), (1, 1 / speedup)):
        hit = np.where(edge & (who == v), 1.0, phase)
        slow_run = np.where(rng.random(shape) < 0.1, rng.uniform(1.3, 1.8, shape), 1.0)
        first = np.where(who == v, 1.03, 1.0)
        jitter = np.exp(0.04 * rng.standard_t(3, shape))
        times.append(1000 * scale * drift * hit * slow_run * first * jitter)
    return np.stack(times, axis=-1)


def noise_summary(times: np.ndarray) -> dict:
    """How noisy `host_times` is, in the issue's terms: a variant's IQR / median over its rounds,
    and how far the paired ratios' quartiles lie from their median (medians over trials)."""
    q25, q50, q75 = np.quantile(times[..., 0], [0.25, 0.5, 0.75], axis=1)
    ratios = times[..., 0] / times[..., 1]
    r25, r50, r75 = np.quantile(ratios, [0.25, 0.5, 0.75], axis=1)
    return {
        "times_iqr_over_median": float(np.median((q75 - q25) / q50)),
        "ratio_quartiles_from_median": f"{np.median(1 - r25 / r50):.3f};{np.median(r75 / r50 - 1):.3f}",
    }


def error_rates(log_ratios: np.ndarray, speedup: float, looks) -> dict:
    """The outcomes of `sequential` on each row of `log_ratios` (true speed-up `speedup`): their
    shares, the error the scenario measures (false positive at ×1, false "no effect" at the band's
    edge), power (faster) above the band, and the mean rounds used."""
    g = sequential(log_ratios, looks)
    outcome, trials = g["outcome"].astype(str), len(log_ratios)
    count = {o: int(np.sum(outcome == o)) for o in (FASTER, SLOWER, NO_EFFECT, UNDECIDED)}
    share = {o: c / trials for o, c in count.items()}
    at_edge = math.isclose(abs(math.log(speedup)), math.log1p(BAND))
    # from counts, not a sum of shares: 142/4000 is 0.0355, not 0.035500000000000004 (review rvA17 N3)
    error = (count[FASTER] + count[SLOWER]) / trials if speedup == 1 else share[NO_EFFECT] if at_edge else math.nan
    measure = "false positive" if speedup == 1 else "false no effect" if at_edge else "power"
    rate = error if measure != "power" else share[FASTER]
    return {
        **{f"share_{o.replace(' ', '_')}": s for o, s in share.items()},
        "measures": measure,
        "rate": rate,
        "mc_se": math.sqrt(rate * (1 - rate) / trials),
        "mean_rounds": float(np.mean(g["rounds"].astype(float))),
        "capped_share": float(np.mean(g["capped"].astype(bool))),
    }


def simulate(trials: int = 4000, cap: int = 80, seed: int = 46, root: Path = ROOT) -> pd.DataFrame:
    """Every scenario on both sources, `trials` comparisons each, looks `looks_up_to(cap)`: one row each."""
    looks = looks_up_to(cap)
    rng = np.random.default_rng(seed)
    noises, tables = recorded_pairs(root)
    commits = table_commits(tables, root)
    common = {
        "looks": ";".join(map(str, looks)),
        "cap": cap,
        "trials": trials,
        "seed": seed,
        "band": BAND,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "commit": git_commit(),
        "recorded_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    rows = []
    for name, speedup in SCENARIOS.items():
        times = host_times(rng, trials, cap, speedup)
        rows.append(
            {"source": "simulated host noise", "scenario": name, "true_speedup": speedup,
             **error_rates(np.log(times[..., 0] / times[..., 1]), speedup, looks), **noise_summary(times),
             "recorded_pairs": "", "recorded_commits": "", **common}
        )  # fmt: skip
        if noises:
            x = recorded_noise(noises, rng, trials, cap)
            if speedup == 1:  # a variant against itself: each round's sign a coin toss (random order)
                x = x * rng.choice([-1.0, 1.0], x.shape)
            rows.append(
                {"source": "recorded rounds", "scenario": name, "true_speedup": speedup,
                 **error_rates(x + math.log(speedup), speedup, looks), "times_iqr_over_median": math.nan,
                 "ratio_quartiles_from_median": "", "recorded_pairs": f"{len(noises)} pairs from {len(tables)} tables: "
                 + ", ".join(tables), "recorded_commits": commits, **common}
            )  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--cap", type=int, default=80)
    ap.add_argument("--seed", type=int, default=46)
    ap.add_argument("--out", type=Path, default=CSV)
    args = ap.parse_args(argv)
    df = simulate(args.trials, args.cap, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.out, index=False)
    print(df[["source", "scenario", "measures", "rate", "mc_se", "mean_rounds"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
