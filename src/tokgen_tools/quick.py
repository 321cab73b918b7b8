"""The quick run: this GPU against the reference run's three regimes and the article, in minutes (issue 48).

    ./run_all.sh --quick                       # whole GPU, into build/quick/ (the CPU: a smoke run)
    ./run_all.sh --quick --memory-gb 16        # the process capped at 16 GB, as on a 16 GB GPU
    python -m tokgen_tools.quick --smoke --out build/quick_smoke

At the article's sizes (B = 32, N = 100) it measures, with the notebooks' own tokgen calls: the
idle gap before a step with the per-step sync, with no stop check at all and pipelined, from one
profiled window each at the article's profile batch (B = 16; `tokgen.bench.profile_windows`,
notebook 06: claim 6); pipelining's paired speed-up eager and
compiled, the article's best recipe against naive, the GPU's share of a synchronous step and the
reference run's fastest generator, in one sequential interleaved run (`tokgen.compare` with the
pairs notebook 07 names and a MAX_RUNS cap: claims 7 and 10, notebook 13's x axis); and that
generator against the floor at this GPU's measured copy bandwidth (`tokgen.bandwidth`, notebook
12). Every generator is first held to the naive tokens, early stop included (`tokgen.agreement`).
The tables go to <out>/data under the notebooks' names, so the verdicts are `tokgen.claims`'
own, read exactly as for the reference run. Each stage writes its rows when it ends and the page
<out>/report.md (figures beside it) is rewritten after every stage: a crash or a kill loses only
the stage it interrupts. `--memory-gb N` caps the process with
`torch.cuda.set_per_process_memory_fraction`; a size whose least memory (`tokgen.sizes`) exceeds
the cap is recorded as not fitting, a generator that runs out of memory under it is recorded as
such, and a cap that nothing fits is refused in one line before anything runs.

Orchestration and report only: the measuring is tokgen's.
"""

import argparse
import contextlib
import json
import math
import signal
import sys
import time
from pathlib import Path

import pandas as pd

from tokgen.params import ParameterError, check, check_sizes
from tokgen.results import ROOT
from tokgen_tools.runner import SMOKE, caller_path, holds_reference

DEFAULT_OUT = Path("build") / "quick"
ARTICLE = {"BATCH_SIZE": 32, "MAX_SEQLEN": 100, "PROFILE_BATCH": 16}  # claims 7 and 10; claim 6's profile at 16
QUICK = {"RUNS": 10, "MAX_RUNS": 30, "WINDOW": [30, 50], "WINDOWS": 3, "COPY_MB": 1024, "BUDGET_S": 360}
SMOKE_SIZES = {k: SMOKE[k] for k in ("SIZE", "BATCH_SIZE", "MAX_SEQLEN", "RUNS", "MAX_RUNS", "WINDOW", "WINDOWS")}
CLAIMS = (6, 7, 10)
RESERVE_S = 45  # after the timed rounds: one profiled run per variant, the floor, the report
PREFIX = "run_all --quick"


class QuickError(Exception):
    """A problem with the command line or the sizes: one line, exit code 2."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run_all.sh --quick",
        description="This GPU against the reference run and the article in minutes: claims 6, 7 and 10, the GPU's "
        "share of a step and the fastest generator against the floor, on one Markdown page.",
    )
    p.add_argument("--out", type=Path, help=f"where report.md, its figures and data/ go (default {DEFAULT_OUT})")
    p.add_argument("--memory-gb", metavar="N", help="cap the process at N GB of GPU memory "
                   "(torch.cuda.set_per_process_memory_fraction): what fits on a smaller card, capacity "
                   "only")  # fmt: skip
    p.add_argument("--smoke", action="store_true", help="tiny model and sizes, CPU allowed (the default without a GPU)")
    p.add_argument("--batch-size", metavar="B", help="sequences per batch (default: the article's 32)")
    p.add_argument("--max-seqlen", metavar="N", help="new tokens per sequence (default: the article's 100)")
    p.add_argument("--runs", metavar="R", help="rounds at the first look (default 10)")
    p.add_argument("--max-runs", metavar="M", help="the cap of rounds for an undecided comparison (default 30)")
    p.add_argument("--budget-s", metavar="S", help="seconds the whole run may take: the cap of rounds is lowered "
                   "to what fits (default 360)")  # fmt: skip
    return p


def checked(args) -> dict:
    """The run's parameters from the command line, each checked by `tokgen.params` before torch loads:
    one line naming the option (QuickError)."""
    given = {
        "BATCH_SIZE": ("--batch-size", args.batch_size),
        "MAX_SEQLEN": ("--max-seqlen", args.max_seqlen),
        "RUNS": ("--runs", args.runs),
        "MAX_RUNS": ("--max-runs", args.max_runs),
        "MEMORY_GB": ("--memory-gb", args.memory_gb),
        "TOKENS": ("--budget-s", args.budget_s),  # a positive integer: TOKENS' rule
    }
    params = {}
    for name, (option, value) in given.items():
        if value is None:
            continue
        try:
            params[name] = check(name, value)
        except ParameterError as err:
            accepts = str(err).split(" must be ", 1)[-1]
            raise QuickError(f"{option} {value}: must be {accepts}") from None
    if "TOKENS" in params:
        params["BUDGET_S"] = params.pop("TOKENS")
    return params


def run_parameters(user: dict, smoke: bool, cuda: bool) -> dict:
    """What the run measures with: the article's batch and the quick rounds, or the smoke sizes; the
    command line wins. The profiled window sits at the same fraction of the steps as the article's 30-50 of 100."""
    params = {**ARTICLE, **QUICK, "SIZE": "gpt2", "DEVICE": "cuda", "COMPILE_BACKEND": "inductor"}
    if smoke:
        params |= SMOKE_SIZES | {"DEVICE": "cuda" if cuda else "cpu", "COPY_MB": SMOKE["COPY_MB"],
                                 "PROFILE_BATCH": SMOKE["BATCH_SIZE"]}  # fmt: skip
        if not cuda:
            params["COMPILE_BACKEND"] = "eager"  # inductor's C++ build takes minutes on a small CPU
    params |= user
    n = params["MAX_SEQLEN"]
    if "MAX_SEQLEN" in user or n < params["WINDOW"][1]:
        params["WINDOW"] = [max(0, 3 * n // 10), max(1, n // 2)]
    params["MEMORY_GB"] = user.get("MEMORY_GB")
    return params


def check_memory(params: dict, total_bytes: int | None, gpu: str, weights: int) -> dict:
    """The cap against the device and the sizes against the cap (`tokgen.sizes.generation_bytes`,
    weights included): QuickError when the cap exceeds the device, or when not even a KV-cache
    generation fits; {generator: why} for those that cannot fit (the naive generator re-runs every
    position), recorded as rows, not run."""
    from tokgen.sizes import SHAPES, _size, generation_bytes

    cap_gb = params["MEMORY_GB"]
    if cap_gb is None:
        return {}
    cap = cap_gb * 1e9
    if total_bytes is not None and cap > total_bytes:
        raise QuickError(f"--memory-gb {cap_gb:g}: more than the {_size(total_bytes)} of {gpu}")
    shape, b, n = SHAPES[params["SIZE"]], params["BATCH_SIZE"], params["MAX_SEQLEN"]
    kv = weights + generation_bytes(shape, b, n)
    if kv > cap:
        raise QuickError(
            f"--memory-gb {cap_gb:g}: B = {b}, N = {n} needs at least {_size(kv)} with a KV cache (weights "
            "included): give a larger cap, or a smaller --batch-size or --max-seqlen"
        )
    naive = weights + generation_bytes(shape, b, n, recompute=True)
    return {"naive": f"did not fit in {cap_gb:g} GB (needs at least {_size(naive)})"} if naive > cap else {}


class Stages:
    """The run's stages, each timed and recorded in data/quick_stages.csv when it ends (ok, or the
    error it ended with); the report is rewritten after each one."""

    def __init__(self, out: Path, params: dict, report):
        from tokgen.results import Recorder

        self.rec, self.report, self.started = Recorder("quick_stages", out, params=params), report, time.monotonic()

    @contextlib.contextmanager
    def stage(self, name: str):
        start, status, error = time.monotonic(), "ok", ""
        print(f"quick: {name} ...", flush=True)
        try:
            yield
        except Exception as err:  # noqa: BLE001 - one failed stage must not lose the others' results
            status, error = "error", f"{type(err).__name__}: {err}"[:500]
        seconds = time.monotonic() - start
        self.rec.write({"stage": name, "status": status, "error": error, "seconds": seconds,
                        "elapsed_s": time.monotonic() - self.started})  # fmt: skip
        print(f"quick: {name}: {status} in {seconds:.0f} s{f': {error}' if error else ''}", flush=True)
        self.report()

    def elapsed(self) -> float:
        return time.monotonic() - self.started


def variants_to_time(model, compiled, params: dict, fastest: dict | None, cuda: bool):
    """Notebook 07's variants that claims 7 and 10 need (naive; kv_static and pipelined_static, eager
    and compiled), and the reference run's fastest generator as notebook 10 built it; the pairs that
    `tokgen.compare` must decide (notebook 07's, claim 10's with its thresholds)."""
    import tokgen
    from tokgen.claims import SUMMARY_THRESHOLDS

    b, n = params["BATCH_SIZE"], params["MAX_SEQLEN"]
    variants = [
        tokgen.generator_variant(g, m, batch_size=b, max_seqlen=n, compiled=m is compiled)
        for m, gens in ((model, ("naive", "kv_static", "pipelined_static")), (compiled, ("kv_static", "pipelined_static")))  # noqa: E501
        for g in gens
    ]
    if fastest is not None and (cuda or fastest["generator"] not in tokgen.LOOPS_ON_DEVICE):
        options = {} if fastest["steps_per_graph"] is None else {"steps_per_graph": fastest["steps_per_graph"]}
        if fastest["generator"] in tokgen.COMPILES_ITSELF:
            options["compile_backend"] = params["COMPILE_BACKEND"]
        variants.append(tokgen.generator_variant(fastest["generator"], model, batch_size=b, max_seqlen=n, **options))
    label = tokgen.label
    pairs = [(label("kv_static", compiled=c), label("pipelined_static", compiled=c)) for c in (False, True)]
    pairs.append((label("naive"), label("pipelined_static", compiled=True), SUMMARY_THRESHOLDS))
    return variants, pairs


def check_tokens(variants, models: dict, params: dict, device, record, skip: dict) -> dict:
    """Every variant held to the naive tokens (`tokgen.agreement`) on the article's batch, and with
    an early stop (the EOS id a token of the first steps, as in notebook 07); one row each to
    `record`. A variant that fails, or runs out of memory, comes back as {name: why} and is not
    timed; so does one whose generator is in `skip` ({generator: why}: it does not fit). `models`:
    {False: the eager model, True: the compiled one}."""
    import torch

    import tokgen
    from tokgen.agreement import agreement, naive_reference

    b, n = params["BATCH_SIZE"], params["MAX_SEQLEN"]
    eager = models[False]
    if "naive" in skip:  # no naive tokens to hold the others to: they are timed unchecked, and the page says so
        return {v.name: skip[v.info["generator"]] for v in variants if v.info["generator"] in skip}
    with torch.inference_mode():
        ref = naive_reference(eager, batch_size=b, max_seqlen=n)
        eos = int(ref.tokens[0, min(10, n)])  # a token of the first steps: every row stops early
        ref_eos = naive_reference(eager, batch_size=b, max_seqlen=n, eos_token_id=eos)
    failed = {}
    for v in variants:
        generator = v.info["generator"]
        options = {k: x for k, x in v.info.items() if k not in ("generator", "compiled", "batch_size", "max_seqlen")}
        # the early stop first: a first call compiles or captures, and the full-length call after it then
        # times one warm generation, what a round of the timed run costs (`rounds_cap`)
        for stop, reference, kwargs in ((f"EOS {eos}", ref_eos, {"eos_token_id": eos}), ("none", ref, {})):
            row = {"variant": v.name, "generator": generator, "stop": stop}
            try:
                start = time.perf_counter()
                out = tokgen.generate(generator, models[v.info["compiled"]], batch_size=b, max_seqlen=n,
                                      **options, **kwargs)  # fmt: skip
                tokgen.model.synchronize(device)
                row["seconds"] = time.perf_counter() - start
                found = agreement(reference, out)
                row |= {k: found[k] for k in ("ok", "rows", "identical", "near_ties", "length_ok")}
                row["failures"] = "; ".join(found["failures"][:3])
                if not found["ok"]:
                    failed[v.name] = f"does not return the naive tokens (stop: {stop}): {row['failures']}"
            except Exception as err:  # noqa: BLE001 - out of memory under the cap is a finding, not a crash
                oom = isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()
                cap = params["MEMORY_GB"]
                why = f"did not fit in {cap:g} GB" if oom and cap else f"failed: {type(err).__name__}: {str(err)[:300]}"
                row |= {"ok": False, "failures": why}
                failed[v.name] = why
                del err
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            record(row)
            if v.name in failed:
                break
    return failed


# ---------------------------------------------------------------- the report: read from the CSVs only


def _load(out: Path, table: str) -> pd.DataFrame | None:
    from tokgen.results import load

    try:
        return load(table, out)
    except FileNotFoundError:
        return None


def reference_regimes(root: Path = ROOT) -> dict:
    """The reference run's three regimes: label -> results folder (the whole GPU, then the two slices
    `tokgen.claims.slice_runs` finds, as the README and notebook 09 put them), below `root` (the
    repository's committed data/ and slice/ by default)."""
    from tokgen.claims import slice_runs

    regimes = {"whole GPU (reference)": Path(root), **slice_runs(root, Path(root) / "slice")}
    return {_with_gpu(name, folder): folder for name, folder in regimes.items()}


def reference_gpu(folder) -> str:
    """The GPU model(s) a reference regime's timed run (07_pipelining) ran on, "" where not run."""
    rows = _load(folder, "07_pipelining")
    return ", ".join(sorted({str(g) for g in rows["gpu"].dropna()})) if rows is not None and "gpu" in rows else ""


def _with_gpu(name: str, folder) -> str:
    """A regime's label with the GPU its run used: "whole GPU (reference, NVIDIA H200)", "8 SMs, 625 GB/s of the
    NVIDIA H100 80GB HBM3" (review rv19B M1: the reference run may span GPU models)."""
    gpu = reference_gpu(folder)
    if not gpu:
        return name
    return name.replace("(reference)", f"(reference, {gpu})") if "(reference)" in name else f"{name} of the {gpu}"


def cards(rows: pd.DataFrame | None) -> set[str]:
    """The GPU UUIDs a table records (empty where it predates the column or is None)."""
    if rows is None or "gpu_uuid" not in rows:
        return set()
    return {str(u) for u in rows["gpu_uuid"].dropna() if str(u)}


def _card(uuids) -> str:
    """ "GPU 08d8f342…" (the first 8 hex digits of each UUID, without a "GPU-" prefix)."""
    return "GPU " + ", ".join(f"{str(u).removeprefix('GPU-')[:8]}…" for u in sorted(uuids))


def another_card(here: set, theirs: set) -> str:
    """ "another card of the same model, GPU 7cd44378…" where both runs record their GPU UUIDs and none is
    shared, else "" (review rv22B N7: two H200 cards read as one machine); call it for runs of one model."""
    return f"another card of the same model, {_card(theirs)}" if here and theirs and not here & theirs else ""


def commits(rows: pd.DataFrame | None) -> set[str]:
    """The commits a table records, 7 hex digits each (empty where it has no commit column or is None)."""
    if rows is None or "commit" not in rows:
        return set()
    return {str(c)[:7] for c in rows["commit"].dropna() if str(c)}


def another_commit(here: set, theirs: set) -> str:
    """ "at another commit (7472d79)" where both runs record their commits and they differ, else "" (review
    rv23B S1: the quick page set its run beside a reference run of another commit and did not say so)."""
    return f"at another commit ({', '.join(sorted(theirs))})" if here and theirs and theirs != here else ""


def _plain(name: str, gpu: str) -> str:
    """A regime's label without the GPU model `_with_gpu` added to it."""
    return name.replace(f"(reference, {gpu})", "(reference)").replace(f" of the {gpu}", "")


def other_card(here_gpu: str, regimes: dict, here_cards: set | None = None, here_commits: set | None = None) -> str:
    """One sentence where a reference regime ran on another GPU model than this page's, or (both recording
    GPU UUIDs) on another card of the same model, else "" (reviews rv19B M1, rv22B N7); each such regime whose
    07_pipelining rows record another commit than `here_commits` (this page's) adds ", at another commit
    (7472d79)" (review rv23B S1)."""
    if not here_gpu or here_gpu.startswith("none"):
        return ""
    models, same_model = {}, []
    for name, folder in regimes.items():
        gpu = reference_gpu(folder)
        rows = _load(folder, "07_pipelining")
        at = another_commit(here_commits or set(), commits(rows))
        at = f", {at}" if at else ""
        if gpu and gpu != here_gpu:
            models.setdefault(gpu, []).append((_plain(name, gpu), at))
        elif gpu and (other := another_card(here_cards or set(), cards(rows))):
            same_model.append(f"its {_plain(name, gpu)} on {other}{at}")
    if not models and not same_model:
        return ""
    said = []
    for gpu, named in models.items():  # one commit for all of a model's regimes is said once, after the model
        ats = {at for _, at in named}
        names = [n if len(ats) == 1 else n + at for n, at in named]
        said.append(f"{' and '.join(names)} on another GPU model ({gpu}){ats.pop() if len(ats) == 1 else ''}")
    here = f"the {here_gpu}" + (f" ({_card(here_cards)})" if here_cards else "")
    return (f"This page ran on {here}; the reference run's {'; '.join(said + same_model)}: bandwidths and busy "
            "times differ by card as well as by host.")  # fmt: skip


def gpu_shares(results: pd.DataFrame | None) -> dict:
    """The synchronous step's GPU share (GPU busy / wall time of `kv_static`), eager and compiled,
    from a notebook-07-shaped table, over the rounds every variant ran (`tokgen.stats.shared_rounds`):
    notebook 13's x axis."""
    from tokgen.registry import label
    from tokgen.stats import shared_rounds

    if results is None or "gpu_busy_share" not in results:
        return {"eager": math.nan, "compiled": math.nan}
    ok = shared_rounds(results[results["status"] == "ok"]).set_index("variant")["gpu_busy_share"]
    return {m: float(ok.get(label("kv_static", compiled=m == "compiled"), math.nan)) for m in ("eager", "compiled")}


def idle_sentence(profile: pd.DataFrame) -> list[str]:
    """Where a profiled synchronous step (eager `kv_static`) leaves the GPU idle: its idle time per step
    (step period less GPU busy, taken in each window, then the median over the windows: review rv22B N6)
    and the share of it that the gap before a step makes (each window's own, then their median); the rest
    lies between the step's own kernels. Per window its last attempt (`tokgen.gaps.last_attempts`: a table with
    re-profiled windows counts each once, its repeat; review rr22b S1). Empty without a GPU profile."""
    from tokgen.gaps import last_attempts

    if "step_period_us" not in profile or "kv_static" not in set(profile["variant"]):
        return []
    profile = last_attempts(profile)
    rows = profile[profile["variant"] == "kv_static"]
    idle_w = rows["step_period_us"] - rows["gpu_busy_per_step_us"]
    idle, share = idle_w.median(), (rows["idle_gap_median_us"] / idle_w).median()
    if not idle > 0:
        return []
    return [f"- In a profiled `kv_static` step (eager, B = {int(profile['batch_size'].iloc[0])}) the GPU idles "
            f"{idle:,.0f} µs of {rows['step_period_us'].median():,.0f} µs; the gap before a step is "
            f"{share:.0%} of that idle time, the rest lies between the step's own kernels"
            + (f" (each the median over {len(rows)} windows of the window's own)." if len(rows) > 1
               else ".")]  # fmt: skip


def step_times(results: pd.DataFrame | None, compiled: bool = True) -> tuple[float, float]:
    """A synchronous step (`kv_static`, compiled by default) in ms: (GPU busy, wall), both per decode
    step, from a notebook-07-shaped table (gpu_busy_share × ms_per_step, and ms_per_step); NaNs where
    not measured; over the rounds every variant ran (`tokgen.stats.shared_rounds`). The share alone
    hides which of the two moved."""
    from tokgen.registry import label
    from tokgen.stats import shared_rounds

    if results is None or "gpu_busy_share" not in results:
        return math.nan, math.nan
    ok = shared_rounds(results[results["status"] == "ok"]).set_index("variant")
    name = label("kv_static", compiled=compiled)
    if name not in ok.index:
        return math.nan, math.nan
    wall = float(ok.at[name, "ms_per_step"])
    return float(ok.at[name, "gpu_busy_share"]) * wall, wall


def regime_table(out: Path, here: str, regimes: dict, bandwidth: float | None) -> pd.DataFrame:
    """This GPU beside the reference's regimes and the article's L40S: copy bandwidth, GPU share of a
    synchronous step eager and compiled, and the bound it makes (`tokgen.display.bound_words`)."""
    from tokgen.display import bound_words
    from tokgen.gpu_slice import L40S_GBS

    rows = []
    ours = gpu_shares(_load(out, "07_pipelining"))
    rows.append({"regime": here, "copy bandwidth": _gbs(bandwidth), **_shares(ours, bound_words)})
    for name, folder in regimes.items():
        rows.append({"regime": name, "copy bandwidth": _gbs(_reference_bandwidth(name, folder)),
                     **_shares(gpu_shares(_load(folder, "07_pipelining")), bound_words)})  # fmt: skip
    rows.append({"regime": "the article's L40S", "copy bandwidth": f"{L40S_GBS:,} GB/s (datasheet)",
                 "GPU share, eager": "not published", "GPU share, compiled": "not published", "bound": ""})  # fmt: skip
    return pd.DataFrame(rows)


def _gbs(value) -> str:
    return f"{value:,.0f} GB/s (measured)" if value is not None and value == value else "not measured"


def _shares(shares: dict, words) -> dict:
    cell = lambda s: f"{s:.0%}" if s == s else "not measured"
    kinds = [f"{m} {words(s)}" for m, s in shares.items() if s == s]
    return {"GPU share, eager": cell(shares["eager"]), "GPU share, compiled": cell(shares["compiled"]),
            "bound": ", ".join(kinds) or "not measured"}  # fmt: skip


def _reference_bandwidth(name: str, folder: Path) -> float | None:
    """A reference regime's copy bandwidth (`_bandwidth_rows`): notebook 10's or 12's for the whole GPU,
    notebook 13's for a slice."""
    _, rows = _bandwidth_rows(folder)
    if rows is None or rows.empty:
        return None
    return float(rows["copy_gbs" if "copy_gbs" in rows else "bandwidth_gb_s"].iloc[-1])


def _slice_sms(folder) -> int | None:
    """The SM count of a slice's results folder (<root>/slice/sm<N>), None for a whole GPU's."""
    name = Path(folder).name
    return int(name[2:]) if name.startswith("sm") and name[2:].isdigit() else None


def _same_run_rows(rows: pd.DataFrame | None, of: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of `rows` whose (commit, gpu_uuid) is one of `of`'s (commits compared on their first 7
    hex digits); None where either does not record them or none matches."""
    keys = ("commit", "gpu_uuid")
    if rows is None or of is None or any(k not in rows or k not in of for k in keys):
        return None
    runs = {(str(c)[:7], str(u)) for c, u in zip(of["commit"], of["gpu_uuid"], strict=True)}
    same = rows[[(str(c)[:7], str(u)) in runs for c, u in zip(rows["commit"], rows["gpu_uuid"], strict=True)]]
    return same if len(same) else None


def _bandwidth_rows(folder) -> tuple[str, pd.DataFrame | None]:
    """(what, rows) of the table a reference regime's copy bandwidth is read from: the whole GPU's
    10_bandwidth (its last row) where notebook 10 measured it on the card and at the commit of that
    folder's 07_pipelining table (review rv20B S2: one run, not two), else its 12_bandwidth (its last
    row), or a slice's row of its root's 13_slices (<root>/slice/sm<N>)."""
    sms = _slice_sms(folder)
    if sms is None:  # notebook 10's copy where it ran on the card and at the commit of 07's table (review rv20B S2)
        same = _same_run_rows(_load(folder, "10_bandwidth"), _load(folder, "07_pipelining"))
        if same is not None and "bandwidth_gb_s" in same:
            return "10_bandwidth", same.iloc[[-1]]
        bw = _load(folder, "12_bandwidth")
        return "12_bandwidth", None if bw is None else bw.iloc[[-1]]
    slices = _load(Path(folder).parent.parent, "13_slices")
    if slices is None:
        return f"13_slices' {sms}-SM row", None
    return f"13_slices' {sms}-SM row", slices[slices["gpu_sms"].astype(int) == sms]


def _started(value) -> str:
    return f"{str(value)[:16].replace('T', ' ')} UTC"


def table_runs(frames: dict) -> str:
    """The runs a reference column's tables come from ({what: its rows}, None where it has none), grouped
    by commit (12 hex digits): "commit `7e7a36fd2e2d` (GPU f08d5542…; 07_pipelining started 2026-11-27
    09:13 UTC, 12_bandwidth started 2026-11-27 09:28 UTC)"; tables of several commits lead with
    "**tables from 2 commits**, not one run", as notebook 09's `tokgen.claims.regime_sources` says it
    (the quick run's page)."""
    runs = {}
    for what, rows in frames.items():
        if rows is None or rows.empty or "commit" not in rows:
            continue
        for commit, part in rows.groupby(rows["commit"].astype(str).str[:12], sort=False):
            runs.setdefault(commit, {})[what] = part
    for short in list(runs):  # a hash written short ("9d6c84b") is the same run as the long one it begins
        longer = next((c for c in runs if c != short and c.startswith(short)), None)
        if longer is not None:
            runs[longer] |= runs.pop(short)
    if not runs:
        return "no table with a commit recorded (not run)"
    said = []
    for commit, tables in runs.items():
        uuids = sorted({str(u)[:8] for t in tables.values() if "gpu_uuid" in t for u in t["gpu_uuid"].dropna() if u})
        card = (f"GPU {uuids[0]}…" if len(uuids) == 1 else f"GPUs {', '.join(u + '…' for u in uuids)}" if uuids
                else "no GPU UUID recorded")  # fmt: skip
        names = sorted({str(g) for t in tables.values() if "gpu" in t for g in t["gpu"].dropna()})
        card = f"{', '.join(names)}, {card}" if names else card  # the model beside the UUID (review rv19B M1)
        starts = [f"{what} started {' and '.join(_started(s) for s in dict.fromkeys(t['run_started'].dropna()))}"
                  if "run_started" in t else f"{what} (no start recorded)" for what, t in tables.items()]  # fmt: skip
        said.append(f"commit `{commit}` ({card}; {', '.join(starts)})")
    lead = f"**tables from {len(runs)} commits**, not one run: " if len(runs) > 1 else ""
    return lead + "; ".join(said)


def reference_runs(
    regimes: dict, tables: tuple[str, ...], bandwidth: bool = False, here: set | None = None
) -> list[str]:
    """One line per reference column: the commit, card and run start of each table it reads (`tables`
    from its folder; with `bandwidth`, the table its copy bandwidth comes from: `_bandwidth_rows`), by
    `table_runs`; a column whose commits are not the first column's says so, and one whose commits are not
    `here` (this page's own run's, 7 hex digits) says "another commit than this page's, 019154c" (review rv23B
    S1) (the quick run's page: the reference columns read the CSVs found at render time)."""
    lines, first = [], None
    for name, folder in regimes.items():
        frames = {t: _load(folder, t) for t in tables}
        if bandwidth:
            what, rows = _bandwidth_rows(folder)
            frames[what] = rows
        commits = {str(c)[:7] for f in frames.values() if f is not None and "commit" in f for c in f["commit"]}
        apart = first is not None and first[1] and commits and commits != first[1]
        than = [f"this page's, {', '.join(sorted(here))}"] if here and commits and commits != here else []
        than += [f"the {first[0]}'s"] if apart else []
        other = f" (**another commit than {', and than '.join(than)}**)" if than else ""
        first = first or (name, commits)
        lines.append(f"- {name}: {table_runs(frames)}{other}")
    return lines


def regime_sentences(out: Path, regimes: dict) -> list[str]:
    """Which regime this GPU is in and what that means for the article's advice, each sentence read
    from the tables: the GPU share of a synchronous step (`bound_words`), the reference regime whose
    compiled share lies nearest, pipelining's paired speed-up here eager and compiled
    (`tokgen.voice.speedup_text`), and, where pipelining did not pay, what the fastest generator
    gained over the article's recipe."""
    from tokgen.display import GPU_BOUND, HOST_BOUND, bound_words
    from tokgen.registry import label
    from tokgen.stats import FASTER, SLOWER, gain
    from tokgen.voice import speedup_text

    results = _load(out, "07_pipelining")
    if results is None:
        return ["Not measured yet: the timed run (claims 7 and 10) has not finished."]
    ours = gpu_shares(results)
    lines = []
    if all(s != s for s in ours.values()):
        lines.append("The GPU's share of a step was not measured (no GPU: a smoke run), so no regime is named.")
    else:
        said = " and ".join(f"{s:.0%} {m}" for m, s in ours.items() if s == s)
        kinds = {m: bound_words(s) for m, s in ours.items() if s == s}
        kind = next(iter(kinds.values())) if len(set(kinds.values())) == 1 else ", ".join(
            f"{k} {m}" for m, k in kinds.items())  # fmt: skip
        lines.append(
            f"A synchronous step (`kv_static`) keeps this GPU busy {said} of its wall time: **{kind}** (under "
            f"{HOST_BOUND:.0%} the host sets the pace, from {GPU_BOUND:.0%} the GPU, between both weigh; notebook "
            "13's x axis)."
        )
        tables = {name: _load(folder, "07_pipelining") for name, folder in regimes.items()}
        refs = {name: gpu_shares(t)["compiled"] for name, t in tables.items()}
        refs = {k: v for k, v in refs.items() if v == v}
        if refs and ours["compiled"] == ours["compiled"]:
            near = min(refs, key=lambda k: abs(refs[k] - ours["compiled"]))
            (busy, wall), (busy_ref, wall_ref) = step_times(results), step_times(tables[near])
            models = [set(t["gpu"].dropna()) if "gpu" in t else set() for t in (results, tables[near])]
            same = bool(models[0]) and models[0] == models[1]  # one GPU model: is it one card? (review rv22B N7)
            other = another_card(cards(results), cards(tables[near])) if same else ""
            at = another_commit(commits(results), commits(tables[near]))  # review rv23B S1
            there = "; there" + (f" on {other}" if other else "") + (f"{',' * bool(other)} {at}" if at else "")
            lines.append(
                f"Compiled, its share lies nearest the reference run's regime **{near}** ({refs[near]:.0%} there, "
                f"{ours['compiled']:.0%} here{there if other or at else ''}). A compiled "
                f"`kv_static` step keeps the GPU busy {busy:.2f} ms here "
                f"and {busy_ref:.2f} ms there, in a wall time of {wall:.2f} ms here and {wall_ref:.2f} ms there: "
                "the share is this GPU and this host together."
            )
    ok = results[results["status"] == "ok"]
    pair = lambda m: (label("kv_static", compiled=m == "compiled"), label("pipelined_static", compiled=m == "compiled"))
    piped = {m: gain(ok, *pair(m)) for m in ("eager", "compiled")}
    lines.append(advice_sentence(piped))
    best = label("pipelined_static", compiled=True)
    fastest = [v for v in ok["variant"] if str(v).startswith("graph_")]
    g = gain(ok, best, fastest[0]) if fastest else None
    if g is not None:
        verb = {FASTER: "faster, for real", SLOWER: "slower, for real"}.get(g["outcome"], "not decidedly faster")
        from tokgen.registry import DESCRIPTIONS

        row = ok[ok["variant"] == fastest[0]].iloc[0]
        generator = row["generator"] if "generator" in row and row["generator"] in DESCRIPTIONS else None
        what = f": {DESCRIPTIONS[generator][1]}" if generator else ""  # the registry's words, not ours
        where = reference_rank_words(fastest[0], next(iter(regimes.values()), ROOT))
        lines.append(f"Against the article's recipe `{best}`, `{fastest[0]}` ({where}{what}) is {verb}: "
                     f"{speedup_text(g)}.")
    return lines


def reference_rank_words(variant: str, root: Path) -> str:
    """Where the generator the quick run timed as the reference run's fastest stands in the reference run's
    notebook 10 table under `root` as the page is written (review rvC14 M1: a run picked from an earlier
    table than the one committed beside it, and the page called it the first listed)."""
    from tokgen.bandwidth import fastest_generator

    try:
        ref = fastest_generator(root, this_run=False)
    except FileNotFoundError:
        ref = None
    if ref is None:
        return "the reference run's fastest when this run began (no reference notebook 10 table is here now)"
    tied = [ref["label"], *ref["shares_rank_with"]]
    run = f"notebook 10's {table_runs({'10_cuda_graphs': _load(root, '10_cuda_graphs')})}"  # review rv20B S1
    if variant == ref["label"]:
        return (f"the first listed at rank 1 of the reference run's notebook 10, ranked round by round against naive; "
                f"{run}")  # fmt: skip
    if variant in tied:
        return (f"one of the {len(tied)} that share rank 1 of the reference run's notebook 10, ranked round by round "
                f"against naive (`{ref['label']}` listed first); {run}")  # fmt: skip
    return (f"the reference run's fastest when this run began (its notebook 10 table here now lists `{ref['label']}` "
            f"first at rank 1; {run})")  # fmt: skip


def cap_bound(timed, cap_gb: float, caveat: bool = True) -> str:
    """What a memory cap bound in a run: the timed variants whose peak reserved memory reached 90% of
    the cap (the allocator held them near it), else that none came near it; with `caveat`, that a cap
    tests capacity only, not a smaller card's bandwidth or compute (the quick run's page; without it,
    the README's line on the example pages)."""
    if timed is None or "peak_reserved_gb" not in timed:
        return "what it bound was not recorded."
    near = timed[timed["peak_reserved_gb"] >= 0.9 * cap_gb]
    tensors = lambda r: f"; its tensors peaked at {r.peak_allocated_gb:.1f} GB" if "peak_allocated_gb" in timed else ""
    kept = ", ".join(f"`{r.variant}` (reserved {r.peak_reserved_gb:.1f} GB{tensors(r)})" for r in near.itertuples())
    most, rest = timed["peak_reserved_gb"].max(), timed.drop(near.index)["peak_reserved_gb"]
    only = (" A cap tests capacity only, not a smaller card's bandwidth or compute; set beside an uncapped run, "
            "this is another run, and where the cap bound nothing the two differ as two runs do.")  # fmt: skip
    only = only if caveat else ""
    if kept and rest.empty:
        return f"it bound every variant: {kept}.{only}"
    return (f"it bound the allocator's cache of {kept}; every other variant peaked at {rest.max():.1f} GB "
            f"or less.{only}" if kept else
            f"no variant came near it (the largest peak: {most:.1f} GB).{only}")  # fmt: skip


def advice_sentence(piped: dict) -> str:
    """What pipelining's comparisons here ({"eager": gain, "compiled": gain}, `tokgen.stats.gain`,
    pipelined_static against kv_static) mean for the article's advice (hide the per-step sync with
    two streams): it pays where a gain is real and not inside the ±5% band; a model where it is
    really slower, shows no effect, or stays undecided with an interval that already lies below
    ×(1 + BAND) gains nothing beyond the band; where every model is one of those, the advice pays
    no more than the band (a bound on its gain only: an undecided interval that reaches below
    ×1/(1 + BAND) leaves a larger slowdown open, and `slowdown_open` says so); an undecided
    comparison whose interval still holds a gain leaves it open. Each comparison said by
    `tokgen.voice.speedup_text`."""
    from tokgen.stats import BAND, FASTER, SLOWER, UNDECIDED
    from tokgen.voice import speedup_text

    said = "; ".join(f"{m}, pipelined vs sync {speedup_text(g)}" for m, g in piped.items())
    measured = {m: g for m, g in piped.items() if g is not None}
    if not measured:
        return f"Pipelining was not timed here: {said}."
    pays = [m for m, g in measured.items() if g["outcome"] == FASTER and not g.get("no_effect")]
    loses = [m for m, g in measured.items() if g["outcome"] == SLOWER]
    open_ = [m for m, g in measured.items()
             if g["outcome"] == UNDECIDED and not g.get("interval_high", float("inf")) < 1 + BAND]  # fmt: skip
    if len(pays) == len(piped):
        return f"The article's advice holds here: hiding the per-step sync with two streams pays, {said}."
    if pays:
        return f"The article's advice holds here {' and '.join(pays)} only: {said}."
    lost = f", and is really slower {' and '.join(_slower_by(m, measured[m]) for m in loses)}" if loses else ""
    capped = [m for m, g in measured.items() if g["outcome"] == UNDECIDED]  # undecided, a gain beyond BAND ruled out
    ends = "its interval ends" if len(capped) == 1 else "their intervals end"
    bound = (f"gains no more than {BAND:.0%} ({' and '.join(capped)} undecided, {ends} below ×{1 + BAND:.2f})"
             if capped else f"gains nothing beyond ±{BAND:.0%}")  # fmt: skip
    slower = slowdown_open(measured)
    if open_:
        undecided = " and ".join(open_)
        return (f"These rounds cannot tell whether the article's advice pays here ({undecided} undecided, a gain "
                f"beyond {BAND:.0%} still inside its interval{lost}){slower}: {said}.")  # fmt: skip
    return (f"The article's advice pays no more than {BAND:.0%} here: hiding the per-step sync with two streams "
            f"{bound}{lost}{slower}: {said}.")  # fmt: skip


def _slower_by(model: str, g: dict) -> str:
    """ "compiled (by up to 6.9%: its interval reaches ×0.94)" for a really slower comparison whose interval
    reaches below ×1/(1 + BAND), the time up to 1/low − 1 longer as `slowdown_open` counts it; the model alone where
    the interval keeps the loss inside the band (rvB12 S1: the largest open loss is a slower one's too)."""
    from tokgen.stats import BAND
    from tokgen.voice import _side_kept, percent_text

    low = g.get("interval_low", math.nan)
    if not 0 < low < 1 / (1 + BAND):
        return model
    return f"{model} (by up to {percent_text(1 / low - 1, BAND, 1)}: its interval reaches ×{_side_kept(low)})"


def slowdown_open(measured: dict) -> str:
    """Where an undecided comparison's interval ({model: gain}) reaches below ×1/(1 + BAND), a slowdown
    beyond the band is not ruled out: "; a slowdown beyond 5% is not ruled out: up to 9.9% compiled (its
    interval reaches ×0.91)", the time up to 1/low − 1 longer, as `tokgen.voice.equivalence_text` counts
    it; "" where no interval reaches that far (`advice_sentence`)."""
    from tokgen.stats import BAND, UNDECIDED
    from tokgen.voice import _side_kept, percent_text

    reach = {m: g["interval_low"] for m, g in measured.items()
             if g["outcome"] == UNDECIDED and 0 < g.get("interval_low", math.nan) < 1 / (1 + BAND)}  # fmt: skip
    if not reach:
        return ""
    said = " and ".join(f"up to {percent_text(1 / low - 1, BAND, 1)} {m} (its interval reaches ×{_side_kept(low)})"
                        for m, low in reach.items())  # fmt: skip
    return f"; a slowdown beyond {BAND:.0%} is not ruled out: {said}"


def claims_rows(out: Path, here: str, regimes: dict) -> tuple[pd.DataFrame, list[str]]:
    """Claims 6, 7 and 10: the article's words (its L40S), this GPU's verdict and the reference
    regimes', each from `tokgen.claims.claim` on the folder's CSVs; and this GPU's measured lines."""
    from tokgen.claims import CLAIMS as ARTICLE_CLAIMS
    from tokgen.claims import claim

    rows, measured = [], []
    for n in CLAIMS:
        mine = claim(n, out)
        row = {"#": n, "the article (L40S)": ARTICLE_CLAIMS[n][1], here: _verdict(mine)}
        for name, folder in regimes.items():
            row[name] = _verdict(_reference_claim(n, folder))
        rows.append(row)
        why = f" Why undecided: {mine['why']}." if mine["why"] else ""
        measured.append(f"- **Claim {n}** ({mine['criterion']}): {mine['measured']}. **{mine['verdict']}**.{why}")
    return pd.DataFrame(rows), measured


_REFERENCE = {}  # (claim, folder) -> claim(): the committed CSVs do not change during a run


def _reference_claim(n: int, folder) -> dict:
    from tokgen.claims import claim

    if (n, str(folder)) not in _REFERENCE:
        _REFERENCE[n, str(folder)] = claim(n, folder)
    return _REFERENCE[n, str(folder)]


def _verdict(c: dict) -> str:
    s = c["stability"]
    return f"{c['verdict']} ({s:.0%})" if s == s and not str(c["verdict"]).startswith("inconclusive") else c["verdict"]


def floor_sentences(out: Path) -> tuple[list[str], pd.DataFrame | None]:
    """The fastest generator of this run (ranked round by round against naive, `tokgen.voice.ranking`)
    against the floor at this GPU's copy bandwidth: notebook 12's takeaway, read from the quick run's
    data/12_speed_of_light.csv and data/07_pipelining.csv."""
    from tokgen.registry import label
    from tokgen.voice import fastest_sentence, ranking

    floors, results, bw = (_load(out, t) for t in ("12_speed_of_light", "07_pipelining", "12_bandwidth"))
    if bw is None:
        return ["No copy bandwidth measured (a smoke run on the CPU, or the stage did not finish): no floor."], None
    lines = [f"Copy bandwidth of this GPU: **{float(bw['bandwidth_gb_s'].iloc[-1]):,.0f} GB/s** (read + write, "
             "measured now, `tokgen.bandwidth.copy_bandwidth`)."]  # fmt: skip
    if floors is None or results is None:
        return [*lines, "The timed run has not finished: no generator set against the floor."], None
    ok = results[results["status"] == "ok"]
    if label("naive") not in set(ok["variant"]):
        return [*lines, "The naive generator was not timed: no ranking against it."], floors
    ranked = ranking(ok, label("naive"))
    first = floors.set_index("variant").loc[ranked.iloc[0]["variant"]]
    lines.append(
        fastest_sentence(ranked, f"of the {len(ranked)} generators timed here")
        + f" `{ranked.iloc[0]['variant']}` takes {first['times_task_floor']:.2f}× the task's floor and reaches "
        f"{first['pct_of_own_floor']:.0f}% "
        f"of its own (its cache: {first['kv_read']})."
    )
    return lines, floors


def shared_note(tables: list, generator: str | None = None) -> str:
    """`tokgen.voice.shared_rounds_note` for notebook-07-shaped tables (None: not there), of the rows of
    `generator` only when given: the line that says their medians, ms per step and GPU shares are over
    the rounds every interleaved variant ran, "" where none was cut (`tokgen.stats.shared_rounds`)."""
    from tokgen.stats import shared_rounds
    from tokgen.voice import shared_rounds_note

    cut = [shared_rounds(t[t["status"] == "ok"]) for t in tables if t is not None and "status" in t]
    rows = pd.concat(cut, ignore_index=True) if cut else pd.DataFrame()
    if generator is not None and "generator" in rows:
        rows = rows[rows["generator"] == generator]
    return shared_rounds_note(rows)


def _table(df: pd.DataFrame, digits=1) -> str:
    from tokgen.voice import table

    return table(df, digits=digits)


def render(out: Path, regimes: dict | None = None) -> str:
    """report.md's text, every number read from <out>/data and the reference run's CSVs."""
    from tokgen.claims import measured_on

    regimes = reference_regimes() if regimes is None else regimes
    stages = _load(out, "quick_stages")
    params = json.loads(stages["params"].iloc[0]) if stages is not None else {}
    timed = _load(out, "07_pipelining")
    if timed is not None:  # the cap of rounds is set when the timed run starts (`rounds_cap`)
        params["ROUNDS_CAP"] = json.loads(timed["params"].iloc[0]).get("ROUNDS_CAP")
    env = stages.iloc[0] if stages is not None else None
    cpu = env is None or str(env["gpu"]).startswith("none")
    cap = params.get("MEMORY_GB")
    here = "this CPU (smoke run)" if cpu else f"this {env['gpu']}" + (f", capped at {cap:g} GB" if cap else "")
    lines = [f"# Quick run: {here.removeprefix('this ')} beside the reference run and the article", ""]
    if env is not None:
        rounds = params.get("ROUNDS_CAP") or params["MAX_RUNS"]
        lines += [
            f"Measured on {measured_on(env)}"
            + (f", card {_card(cards(stages))}" if cards(stages) and not cpu else "")  # review rv22B N7
            + f": B = {params['BATCH_SIZE']}, N = {params['MAX_SEQLEN']}, "
            f"{params['RUNS']} interleaved rounds at the first look, up to {rounds} "
            f"for a comparison still undecided (`tokgen.compare`, sequential; the cap asked: {params['MAX_RUNS']}). "
            + (f"**Memory capped at {cap:g} GB** (`torch.cuda.set_per_process_memory_fraction`): "
               + cap_bound(timed, cap) if cap and not cpu
               else f"Memory cap {cap:g} GB: on the CPU it only refuses sizes, nothing enforces it." if cap
               else "No memory cap: the whole device.")
            + f" Claim 6's {_count(params.get('WINDOWS', 1), 'profiled window')} per generator run at B = "
            f"{params.get('PROFILE_BATCH', params['BATCH_SIZE'])}, the article's profile batch. "
            f"Time budget: {params['BUDGET_S']} s (`--budget-s`). Host CPU: {env['cpu']}.",
            "",
            "Stages: " + "; ".join(f"{r.stage} {r.status} in {_seconds(r.seconds)}" for r in stages.itertuples())
            + f"; {stages['elapsed_s'].max():.0f} s in all from building the model (the process's imports before it "
            "not counted).",
            "",
        ]  # fmt: skip
    here_commits = commits(stages)  # this page's run: its reference columns may be of another (review rv23B S1)
    card = other_card("" if cpu else str(env["gpu"]), regimes, cards(stages), here_commits)
    lines += ["## Which regime this GPU is in", "", *[f"- {s}" for s in regime_sentences(out, regimes)],
              *([f"- {card}"] if card else []), ""]  # fmt: skip
    table_ = regime_table(out, here, regimes, _bandwidth(out))
    lines += [_table(table_), "", RUNS_LEAD.format(what="rows", tables="07_pipelining and the bandwidth's table"), "",
              *reference_runs(regimes, ("07_pipelining",), True, here_commits), ""]  # fmt: skip
    note = shared_note([_load(folder, "07_pipelining") for folder in [out, *regimes.values()]], "kv_static")
    lines += [note, ""] if note else []
    if (out / "quick_regimes.png").exists():
        lines += ["![This GPU beside the reference run's regimes, at the same sizes](quick_regimes.png)", ""]
    lines += ["## The article's claims 6, 7 and 10, here and in the reference run's three regimes", ""]
    try:
        claims, measured = claims_rows(out, here, regimes)
        lines += [_table(claims), "", RUNS_LEAD.format(what="columns", tables=" and ".join(CLAIM_TABLES)), "",
                  *reference_runs(regimes, CLAIM_TABLES, here=here_commits), "", STABILITY_NOTE, "",
                  f"Measured on {here}:", "", *measured, ""]  # fmt: skip
    except Exception as err:  # noqa: BLE001 - the page still says what the other stages found
        lines += [f"*Claims not evaluated: {type(err).__name__}: {err}*", ""]
    gaps = _load(out, "06_eos_sync_profile")
    if gaps is not None:
        from tokgen.gaps import gap_takeaway, idle_gaps, profiler_overhead

        for gap in idle_gaps(gaps).to_dict("records"):
            lines += [f"- {said}" for said in gap_takeaway(gap)]  # the cause (claim 6), then pipelining (claim 7)
        lines += idle_sentence(gaps)
        if not cpu and "profiled_vs_plain_pct" in gaps:  # a profile whose plain runs bracket its profiled passes
            lines.append(
                f"- {profiler_overhead(gaps)} The window's idle share is of profiled steps at B = "
                f"{int(gaps['batch_size'].iloc[0])}; the GPU share above is another measure: one whole timed "
                f"generation's GPU busy time at B = {params['BATCH_SIZE']} over its unprofiled median time."
            )
        lines.append("")
    lines += ["## The fastest generator against this GPU's floor", ""]
    said, floors = floor_sentences(out)
    lines += [f"- {s}" for s in said] + [""]
    results = _load(out, "07_pipelining")
    if floors is not None:
        columns = ["variant", "median_ms", "kv_read", "bound_by", "own_floor_ms", "pct_of_own_floor"]
        lines += [_table(floors[[c for c in [*columns, "times_task_floor"] if c in floors]]), ""]
        note = shared_note([results])  # floor_table's medians are over the timed run's shared rounds
        lines += [note, ""] if note else []
    if results is not None:
        from tokgen.display import bound_table
        from tokgen.stats import shared_rounds

        columns = ["variant", "status", "runs", "median_ms", "q25_ms", "q75_ms", "ms_per_step", "peak_reserved_gb"]
        shown = shared_rounds(results)[[c for c in columns if c in results]]
        lines += ["## Timed variants", "", f"A step generates one token for each of the B = {params['BATCH_SIZE']} "
                  "sequences.", "", _table(shown, digits=2), ""]  # fmt: skip
        bound, note = bound_table(results[results["status"] == "ok"]), shared_note([results])
        lines += [bound, ""] + ([note, ""] if note and note not in bound else [])
        if (out / "quick_runtimes.png").exists():
            lines += ["![Runtimes](quick_runtimes.png)", "",
                      "Each bar is one variant's own rounds (median and IQR); bars are not set against each other: "
                      "the speed-ups above are paired round by round.", ""]  # fmt: skip
    skipped = _load(out, "quick_skipped")
    if skipped is not None:
        lines += ["Not timed: " + "; ".join(f"`{r.variant}` {r.why}" for r in skipped.itertuples()) + ".", ""]
    agree = _load(out, "quick_agreement")
    if agree is None and skipped is not None and "naive" in set(skipped["variant"]):
        lines += ["## Same tokens as naive", "", "Not checked: the naive generator, the reference, did not fit.", ""]
    if agree is not None:
        ok = int(agree["ok"].astype(str).eq("True").sum())
        lines += [
            "## Same tokens as naive",
            "",
            f"{ok} of {len(agree)} checks returned the naive generator's tokens under `tokgen.agreement`'s rule "
            "(on the article's batch, and with an early stop).",
            "",
        ]
    lines += ["## Files", "", "CSVs with their provenance (GPU, driver, torch, transformers, commit, parameters, "
              "memory cap) in `data/`: " + ", ".join(f"`{p.name}`" for p in sorted((out / "data").glob("*.csv")))
              + ". The reference rows and columns read the reference run's `data/` and `slice/` (the repository's, "
              "as found when this page was written); the commit and start of each table they read is listed under "
              "each table."]  # fmt: skip
    return "\n".join(lines) + "\n"


CLAIM_TABLES = ("06_eos_sync_profile", "07_pipelining")  # what `tokgen.claims.claim` reads for claims 6, 7 and 10
RUNS_LEAD = "The reference {what} read these runs ({tables}; the commit, the card and when each table's run started):"

STABILITY_NOTE = (
    "A percentage beside a verdict is its stability: how often the verdict comes out the same over "
    "resampled rounds of a run with a fixed number of rounds. A verdict without one came from a sequential "
    "run (looks at growing numbers of rounds, each at its own level; the design's error rates are in the "
    "repository's `data/sequential_error_rates.csv`), which is not resampled."
)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _seconds(s: float) -> str:
    """A stage's duration: one decimal below 10 s (a 0.1 s stage does not read "0 s"), whole seconds above."""
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"


def _bandwidth(out: Path) -> float | None:
    bw = _load(out, "12_bandwidth")
    return float(bw["bandwidth_gb_s"].iloc[-1]) if bw is not None else None


def regime_map(out: Path, regimes: dict | None = None) -> None:
    """This GPU's point on a regime map (`tokgen.regimes.regime_gains`, `tokgen.display.plot_regime_map`)
    beside the reference run's regimes at the same sizes: each regime's notebook-07 run (B = 32,
    N = 100, the sizes of this run), not notebook 13's map, which ran N = 50 (a point at one N
    set among points at another would compare two lengths): quick_regimes.png."""
    import matplotlib.pyplot as plt

    from tokgen.display import plot_regime_map
    from tokgen.regimes import regime_gains
    from tokgen.stats import shared_rounds

    results = _load(out, "07_pipelining")
    if results is None:
        return
    pair = ["kv_static", "pipelined_static"]  # their GPU shares over the rounds every variant ran, as the tables'
    mine = shared_rounds(results).assign(map_point="this GPU")
    ours = regime_gains(mine[mine["generator"].isin(pair)])
    if ours.empty:
        return
    gpu = str(results["gpu"].iloc[0])
    n = int(results["max_seqlen"].iloc[0])
    ours["where"] = "CPU (smoke)" if gpu.startswith("none") else f"this {gpu}, N={n}"
    frames = [ours]
    for name, folder in (reference_regimes() if regimes is None else regimes).items():
        table = _load(folder, "07_pipelining")
        if table is None or "max_seqlen" not in table or set(table["max_seqlen"].dropna().astype(int)) != {n}:
            continue  # another length: not on this map
        ref = regime_gains(shared_rounds(table)[table["generator"].isin(pair)].assign(map_point=name))
        ref["where"] = f"{name}, N={n}"
        frames.append(ref)
    both = pd.concat(frames, ignore_index=True)
    both = both[both["hidden_by"] == "pipelined_static"]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    plot_regime_map(ax, both, "pipelined_static")
    ax.set_title(f"Hiding the stop-check sync vs the GPU's share of a step, N={n}: this GPU and the reference run")
    fig.savefig(out / "quick_regimes.png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def runtimes_figure(out: Path) -> None:
    """Median and IQR per timed variant (`tokgen.display.plot_runtimes`, notebook 07's figure): quick_runtimes.png."""
    import matplotlib.pyplot as plt

    from tokgen.display import plot_runtimes

    results = _load(out, "07_pipelining")
    if results is None:
        return
    fig, ax = plt.subplots(figsize=(7, 3.5))
    plot_runtimes(ax, results[results["status"] == "ok"])
    ax.set_title(f"B={int(results['batch_size'].iloc[0])}, N={int(results['max_seqlen'].iloc[0])}")
    fig.savefig(out / "quick_runtimes.png", dpi=120, bbox_inches="tight")
    plt.close(fig)


_DRAWN = {}  # results folder -> the timed table's mtime when its figures were drawn


def write_report(out: Path, regimes: dict | None = None) -> Path:
    """<out>/report.md from the CSVs written so far (called after every stage)."""
    import matplotlib

    matplotlib.use("Agg")
    timed = out / "data" / "07_pipelining.csv"  # both figures draw the timed run: drawn again only when it changed
    stamp = timed.stat().st_mtime_ns if timed.exists() else None
    if stamp is not None and _DRAWN.get(out) != stamp:
        for figure in (regime_map, runtimes_figure):
            with contextlib.suppress(Exception):  # a figure that cannot be drawn is left out, not fatal
                figure(out)
        _DRAWN[out] = stamp
    path = out / "report.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render(out, regimes))
    tmp.replace(path)  # whole or not at all: a kill mid-write leaves the previous page
    return path


# ---------------------------------------------------------------- the run


def measure(out: Path, params: dict, device: str, skip: dict) -> None:
    """The stages, in the order that keeps the cheap and decisive first: the floor's bandwidth, the
    token checks (the compiled model compiles here), claim 6's profile, the timed run, the floor."""
    import torch

    import tokgen
    from tokgen.bandwidth import copy_bandwidth, fastest_generator, floor_table, matmul_tflops
    from tokgen.bench import drawn_orders, profile_windows

    cuda = device == "cuda"
    stages = Stages(out, params, lambda: write_report(out))
    model = tokgen.build_model(params["SIZE"], device)
    compiled = torch.compile(model, backend=params["COMPILE_BACKEND"])
    try:
        # the reference run's (notebook 10's data, another run's on purpose): the one set against the floor
        fastest = fastest_generator(ROOT, this_run=False)
    except FileNotFoundError:
        fastest = None
    variants, pairs = variants_to_time(model, compiled, params, fastest, cuda)
    failed = {}

    with stages.stage("copy bandwidth"):
        if cuda:
            mb = min(params["COPY_MB"], int((params["MEMORY_GB"] or 1e9) * 1e3 / 8))  # two buffers well within a cap
            bw, tflops = copy_bandwidth(device, mb), matmul_tflops(device)
            tokgen.Recorder("12_bandwidth", out, params=params).write(
                {"bandwidth_gb_s": bw, "source": "quick run", "copy_mb": mb, "matmul_tflops": tflops}
            )
    with stages.stage("same tokens as naive (the compiled model compiles here)"):
        rec = tokgen.Recorder("quick_agreement", out, params=params)
        failed = check_tokens(variants, {False: model, True: compiled}, params, torch.device(device), rec.write, skip)
        if failed:
            skipped = tokgen.Recorder("quick_skipped", out, params=params)
            for name, why in failed.items():
                skipped.write({"variant": name, "why": why})
    with stages.stage("claim 6: profiled window"):
        rec = tokgen.Recorder("06_eos_sync_profile", out, params=params)
        start, stop = params["WINDOW"]
        # eager kv_static, the same without any stop check (claim 6's cause) and pipelined_static (claim 7's
        # gap), at the batch of the article's profile (notebook 06's B = 16), not the timed run's
        b, n = params["PROFILE_BATCH"], params["MAX_SEQLEN"]
        profiled = [tokgen.generator_variant(g, model, batch_size=b, max_seqlen=n)
                    for g in ("kv_static", "kv_static_no_check", "pipelined_static") if tokgen.label(g) not in failed]
        seed, orders = drawn_orders(len(profiled), params["WINDOWS"])  # recorded: regenerates them
        # each generator once per window, in a fresh random order, its profiled passes bracketed by its plain runs;
        # no window is profiled again (notebook 06's recheck can double the profiling time, which would come out of
        # the rounds' budget: review rr22b S2), so every row is attempt 0
        profile_windows(profiled, device, orders, start=start, stop=stop, models={v.name: model for v in profiled},
                        record=lambda row: rec.write({**row, "order_seed": seed}))  # fmt: skip
    with stages.stage("claims 7 and 10: interleaved rounds"):
        timed = [v for v in variants if v.name not in failed]
        names = {v.name for v in timed}
        needed = [p for p in pairs if p[0] in names and p[1] in names]
        cap = rounds_cap(params, timed, out, stages.elapsed())
        params["ROUNDS_CAP"] = cap
        rec = tokgen.Recorder("07_pipelining", out, params=params)
        first = min(params["RUNS"], cap)
        if needed:
            tokgen.compare(timed, rounds=first, max_rounds=cap, pairs=needed, device=device, record=rec.write)
        else:
            tokgen.compare(timed, rounds=first, device=device, record=rec.write)
    with stages.stage("the fastest generator against the floor"):
        bw = _bandwidth(out)
        results = _load(out, "07_pipelining")
        if bw and results is not None:
            ok = results[results["status"] == "ok"]
            tflops = float(_load(out, "12_bandwidth")["matmul_tflops"].iloc[-1])
            rec = tokgen.Recorder("12_speed_of_light", out, params=params)
            for r in floor_table(ok, model, bw, tflops).to_dict("records"):
                rec.write({**r, "bandwidth_gb_s": bw, "bandwidth_from": "quick run", "matmul_tflops": tflops})


def rounds_cap(params: dict, timed, out: Path, elapsed: float) -> int:
    """The cap of rounds: MAX_RUNS, lowered so that the rounds end within BUDGET_S of the run's start
    (less RESERVE_S for what follows them), a round costing what the token checks' full-length calls
    of the variants `timed` took (`quick_agreement.csv`, each after a first call that compiled);
    never below the first look."""
    agree = _load(out, "quick_agreement")
    if agree is None or "seconds" not in agree:
        return params["MAX_RUNS"]
    names = {v.name for v in timed}
    full = agree[(agree["stop"] == "none") & agree["variant"].isin(names)]
    per_round = full["seconds"].astype(float).sum()
    left = params["BUDGET_S"] - elapsed - RESERVE_S
    fits = int(left / per_round) if per_round > 0 else params["MAX_RUNS"]
    return max(min(params["RUNS"], params["MAX_RUNS"]), min(params["MAX_RUNS"], fits))


def main(argv=None) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    args = parser().parse_args(argv)
    try:
        user = checked(args)
        out = caller_path(args.out) if args.out is not None else ROOT / DEFAULT_OUT
        out = out.resolve()
        if holds_reference(out):
            raise QuickError(f"--out {out}: that folder holds the reference results; choose another")
        import torch  # only once the arguments are checked: mistakes answer at once

        cuda = torch.cuda.is_available()
        smoke = args.smoke or not cuda
        if smoke and not args.smoke:
            print(f"{PREFIX}: no CUDA GPU here, so running the smoke mode (tiny model, CPU): it measures nothing.")
        params = run_parameters(user, smoke, cuda)
        device = params["DEVICE"]
        try:
            check_sizes({k: params[k] for k in ("SIZE", "DEVICE", "BATCH_SIZE", "MAX_SEQLEN")})
        except ParameterError as err:
            option = {"BATCH_SIZE": "--batch-size", "MAX_SEQLEN": "--max-seqlen"}.get(err.name, err.name)
            raise QuickError(f"{option}: {err}") from None
        from tokgen.model import gpt2_config
        from tokgen.sizes import device_memory

        total, gpu = device_memory(device) if cuda else (None, "the host")
        config = gpt2_config(params["SIZE"])
        weights = 4 * (config.vocab_size * config.n_embd + config.n_positions * config.n_embd
                       + config.n_layer * 12 * config.n_embd**2)  # fp32 parameters, as tokgen.model builds them
        skip = check_memory(params, total, gpu, weights)
    except QuickError as err:
        print(f"{PREFIX}: {err}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    if cuda and params["MEMORY_GB"]:
        torch.cuda.set_per_process_memory_fraction(params["MEMORY_GB"] * 1e9 / total)
    cap = f", memory capped at {params['MEMORY_GB']:g} GB" if params["MEMORY_GB"] else ""
    print(f"{PREFIX}: B = {params['BATCH_SIZE']}, N = {params['MAX_SEQLEN']}{cap} -> {out}"
          + (" (smoke)" if smoke else ""), flush=True)  # fmt: skip
    precision, threads = torch.get_float32_matmul_precision(), torch.get_num_threads()
    torch.set_float32_matmul_precision("high")  # the article's setting, as tokgen.model's notebooks run
    if not cuda:  # a tiny model gains nothing from threads, and on a shared CPU they wait for each other
        torch.set_num_threads(1)
    start = time.monotonic()
    try:
        measure(out, params, device, skip)
    except KeyboardInterrupt:
        print(f"\n{PREFIX}: interrupted; {out / 'report.md'} holds the stages that finished.", file=sys.stderr)
        return 130
    finally:
        torch.set_float32_matmul_precision(precision)
        torch.set_num_threads(threads)
    path = write_report(out)
    stages = _load(out, "quick_stages")
    failed = stages[stages["status"] != "ok"] if stages is not None else pd.DataFrame()
    print(f"{PREFIX}: {len(stages) - len(failed)}/{len(stages)} stages ok in {time.monotonic() - start:.0f} s; "
          f"report: {path}")  # fmt: skip
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
