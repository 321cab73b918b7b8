"""One voice: how every measured comparison a reader sees is said (notebook 00_setup).

A comparison is the dict of `tokgen.stats.gain`. `speedup_text` is its one rendering in words,
`speedup_table` as table columns, `ranking` the one order (by paired speed-up over one base, ties
shown), `bound` the one rule for a step's GPU share; the templates below are the only other
places where a count or a direction is worded. Nothing here measures or decides.
"""

import json
import math
import statistics

import pandas as pd

from .registry import label
from .results import HOST_PROBE_COLUMNS, HOST_REPEATS, _sms, same_commit
from .stats import (
    ALPHA,
    BAND,
    FASTER,
    NO_EFFECT,
    SLOWER,
    UNDECIDED,
    difference_interval,
    gain,
    look_levels,
    parse_looks,
    run_times,
    shared_rounds,
    signed_rank_p,
    time_summary,
)

DECIDED = (FASTER, SLOWER)
HOST_BOUND, GPU_BOUND = 0.5, 0.9  # a step's GPU share: under half the host sets its pace; from 90% the GPU


def bound(share: float) -> str:
    """A step's bound from its GPU share: "host" under HOST_BOUND, "GPU" from GPU_BOUND, "mixed"
    between, "" unmeasured (notebook 05_torch_compile)."""
    return "" if share != share else "host" if share < HOST_BOUND else "GPU" if share >= GPU_BOUND else "mixed"


def bound_words(share: float) -> str:
    """`bound` as words: "host-bound", "GPU-bound", "mixed (host and GPU)" (notebook 05_torch_compile)."""
    return {"host": "host-bound", "GPU": "GPU-bound", "mixed": "mixed (host and GPU)"}.get(bound(share), "")


def _first_rounds(results: pd.DataFrame, rows=None) -> str:
    """ "the first 10 rounds" (or "the first 10 or 20 rounds, each interleaved run's own") of the rows,
    among `rows` (labels; default all), that `tokgen.stats.shared_rounds` cut short; "" if none."""
    if "shared_runs" not in results or "runs" not in results:
        return ""
    df = results if rows is None else results.loc[[r for r in rows if r in results.index]]
    cut = sorted({int(k) for k, n in zip(df["shared_runs"], df["runs"]) if k == k and n == n and k < n})
    if not cut:
        return ""
    said = " or ".join(map(str, cut))
    return f"the first {said} rounds" + (", each interleaved run's own" if len(cut) > 1 else "")


def shared_rounds_text(results: pd.DataFrame, rows=None) -> str:
    """ "over the first 10 rounds, which every interleaved variant ran": what a median or GPU
    share of `tokgen.stats.shared_rounds`' rows (among `rows`: index labels) is over, where it cut
    them to the rounds their comparison's variants share; "" where it cut none (notebook 07_pipelining)."""
    first = _first_rounds(results, rows)
    return f"over {first}, which every interleaved variant ran" if first else ""


SHARED_SUMMARIES = "each median, ms per step and GPU share here is"  # `shared_rounds_note`'s default: what it covers


def shared_rounds_note(results: pd.DataFrame, summaries: str = SHARED_SUMMARIES) -> str:
    """The line under a table of `tokgen.stats.shared_rounds`' rows whose medians, ms per step or GPU
    shares are over fewer rounds than some variants ran, `summaries` naming the table's columns that are (the runs
    table's IQR and min–max too: review rv19A N1); "" where every variant's are over all its rounds
    (notebook 07_pipelining)."""
    first = _first_rounds(results)
    if not first:
        return ""
    return (
        f"*Variants ran different numbers of rounds (the sequential design): {summaries} over {first}, which every "
        "interleaved variant ran; each paired speed-up uses "
        "the rounds up to the look that decided it (the rounds it names), or every round both variants ran where "
        "none did.*"
    )


def _ms_range(values) -> str:
    """ "3.10 ms", or "3.10–3.40 ms" over values that differ (to the 2 decimals shown)."""
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return f"{low} ms" if low == high else f"{low}–{high} ms"


PROBE = f"`tokgen.results.host_loops_ms`, median of {HOST_REPEATS} loops"  # what `tokgen.compare` records
HOST_DRIFT = 1.25  # host speeds more than this apart either way are flagged, judged all the same (review rr17c S1):
# a window's two passes (`tokgen.gaps.host_ratios`, `tokgen.gaps.drift_flags`: the correction is large there), and
# a probe's after/before under a table of rounds (`host_probe_text`). Defined here and re-exported by `tokgen.gaps`,
# which imports this module (review rr22a S2)


def _probe_drift(recorded: pd.DataFrame, drift: float) -> str:
    """`host_probe_text`'s clause where the probe's after/before lies outside [1/drift, drift] (review rv22B N2): "the
    probe ran 1.82× slower after than before: the host's speed changed during these rounds (its effect on the rounds
    is not measured)"; over several comparisons' probes, a range per direction and how many of them, the change
    placed in "those comparisons' rounds", and for the comparisons inside the band, that whether their rounds
    followed the host is not measured (review rr22a N1); "" where none lies outside."""
    before, after = HOST_PROBE_COLUMNS[:2]
    probes = recorded[[before, after]].drop_duplicates()  # a comparison's rows share its probe
    ratios = (probes[after] / probes[before]).tolist()
    slower = [r for r in ratios if r > drift]
    faster = [1 / r for r in ratios if r < 1 / drift]
    if not slower and not faster:
        return ""
    of = lambda k: f" in {k} of {len(ratios)} comparisons" if len(ratios) > 1 else ""  # noqa: E731
    ran = " and ".join(f"{low:.2f}×" + (f"–{max(xs):.2f}×" if f"{max(xs):.2f}" != f"{low:.2f}" else "") + f" {word} "
                       f"after than before{of(len(xs))}"
                       for xs, word in ((slower, "slower"), (faster, "faster")) if xs for low in [min(xs)])  # fmt: skip
    if len(ratios) == 1:
        return (f"; the probe ran {ran}: the host's speed changed during these rounds (its effect on the rounds is "
                "not measured).")  # fmt: skip
    rest = len(ratios) - len(slower) - len(faster)  # several comparisons: only the flagged ones' rounds (rr22a N1)
    others = (f"; for the other {rest} comparison{'s' * (rest != 1)}, whether the rounds' times followed the host's "
              "speed is not measured" if rest else "")  # fmt: skip
    return (f"; the probe ran {ran}: the host's speed changed during those comparisons' rounds (its effect on their "
            f"rounds is not measured){others}.")  # fmt: skip


def host_probe_text(results: pd.DataFrame, drift: float | None = HOST_DRIFT) -> str:
    """The one sentence on the host's speed under a table of timed rounds (`tokgen.display.bound_table`):
    the host probe `tokgen.compare` took before and after them (`tokgen.results.HOST_PROBE_COLUMNS`;
    a range where the table's rows come from several comparisons) and its single loops' spread; "not
    recorded" for rows measured before the probe was (notebook 05_torch_compile). It says how fast
    the host ran Python before and after, never why, and that whether the rounds' times followed it
    is not measured: the probe runs twice, not beside each round (the reviews of issue 49 found
    host-bound rounds that drifted against the probe). Where after/before lies outside [1/drift, drift]
    (`drift`: HOST_DRIFT unless given; None: never said), it says by how much the probe slowed or sped up, and that
    the host's speed changed during the rounds (review rv22B N2), under every table that calls it, notebook 10's
    too (review rr22a S2)."""
    before, after, low, high = HOST_PROBE_COLUMNS
    recorded = results.dropna(subset=[before, after]) if set(HOST_PROBE_COLUMNS) <= set(results) else results[:0]
    if recorded.empty:
        return f"The host's probe loop ({PROBE}) was not recorded for these rounds."
    missing = len(results) - len(recorded)
    unrecorded = f"; it was not recorded for {missing} of these {len(results)} rows" if missing else ""
    said = (f"The host's probe loop ({PROBE}) took {_ms_range(recorded[before])} before these rounds and "
            f"{_ms_range(recorded[after])} after, its single loops {recorded[low].min():.2f}–"
            f"{recorded[high].max():.2f} ms{unrecorded}")  # fmt: skip
    moved = _probe_drift(recorded, drift) if drift else ""
    return said + (moved or "; whether the rounds' times followed the host's speed is not measured.")


def two_runs_text(runs: dict[str, pd.DataFrame], variants: list[str]) -> str:
    """The variants two runs both timed, side by side as two runs (README, beside notebook 10's table;
    review rvC16 S1): each one's median ms per generation and GPU busy ms in each run, then each run's
    host probe before and after its rounds (`runs`: {"notebook 10's": rows indexed by variant, …}, first
    run first). It says how fast the host ran Python, never that the host made the difference: whether
    the rounds' times followed the probe is not measured. "" where no variant is in both runs."""
    (a, here), (b, there) = runs.items()
    shown = [v for v in variants if v in here.index and v in there.index]
    if not shown:
        return ""
    before, after = HOST_PROBE_COLUMNS[:2]

    def probe(rows, column):
        values = rows.loc[shown, column] if column in rows else pd.Series(dtype=float)
        return _ms_range(values) if values.notna().all() and len(values) else "not recorded"

    each = "; ".join(f"`{v}` {here.at[v, 'median_ms']:.1f} ms against {there.at[v, 'median_ms']:.1f} ms, the GPU "
                     f"busy {here.at[v, 'gpu_busy_ms']:.1f} against {there.at[v, 'gpu_busy_ms']:.1f} ms"
                     for v in shown)  # fmt: skip
    return (f"Two runs, set side by side, not one measurement refined: median per generation in {a} run against "
            f"{b}: {each}. The host's probe loop ({PROBE}) took {probe(here, before)} before {a} rounds and "
            f"{probe(there, before)} before {b} ({probe(here, after)} and {probe(there, after)} after); whether "
            "the rounds' times followed the host's speed is not measured.")  # fmt: skip


APOSTROPHE_S = "'s"  # "notebook 07's" -> "notebook 07"


def same_card_runs_text(here: pd.DataFrame, there: pd.DataFrame | None, variants: list[str],
                        names: tuple[str, str] = ("this notebook's", "notebook 07's")) -> str:  # fmt: skip
    """`two_runs_text` under notebook 10's table (review rv23C S1): `here`, this run's rows (`tokgen.compare`'s,
    as recorded: with gpu_uuid and commit), beside the rows of `there` (another notebook's whole table, notebook
    07's) that ran ok at `here`'s sizes (batch_size, max_seqlen) on the same card (gpu_uuid) at the same commit
    (`tokgen.results.same_commit`) and slice (gpu_sms), their medians over the rounds every interleaved variant of
    their comparison ran (`tokgen.stats.shared_rounds`, said where it cut). Where `there` is None (no table) or
    holds no such row, one sentence that says which of these it lacks (review rr23c N2); "" where `here` names no
    card or commit, or no variant of `variants` ran in both."""
    keys = ("gpu_uuid", "commit")
    if here.empty or any(k not in here or pd.isna(here[k].iloc[0]) for k in keys):
        return ""
    first, title = here.iloc[0], names[1][0].upper() + names[1][1:]
    tell = f"so no second run of {' and '.join(f'`{v}`' for v in variants)} is set beside {names[0]} run."
    if there is None:
        return f"{title.removesuffix(APOSTROPHE_S)} has no table in this results folder, {tell}"
    sizes = [(c, w) for c, w in (("batch_size", "B"), ("max_seqlen", "N")) if c in here and c in there]
    keep = there["status"] == "ok" if "status" in there else pd.Series(True, index=there.index)
    for c, _ in sizes:
        keep &= there[c].astype(str) == str(first[c])
    steps = [(f"at {', '.join(f'{w} = {first[c]}' for c, w in sizes)}" if sizes else "that ran ok", keep)]
    steps.append(("on this card", there["gpu_uuid"].astype(str) == str(first["gpu_uuid"]) if "gpu_uuid" in there
                  else False))  # fmt: skip
    steps.append(("at this commit", there["commit"].map(lambda c: same_commit(c, first["commit"])) if "commit" in
                  there else False))  # fmt: skip
    if "gpu_sms" in here and "gpu_sms" in there and pd.notna(first["gpu_sms"]):  # a slice's run is not the GPU's
        n = _sms(first["gpu_sms"])
        steps.append(("on the whole GPU" if n == "all" else f"in a slice of {n} SMs",
                      there["gpu_sms"].map(lambda m: _sms(m) == n)))  # fmt: skip
    keep, said = pd.Series(True, index=there.index), []
    for words, match in steps:
        keep, said = keep & match, [*said, words]
        if not keep.any():  # the first of these that none of its rows meets, with those before it
            return f"{title} rows hold no run {' '.join(said)}, {tell}"
    same = there[keep]
    same = shared_rounds(same.drop_duplicates("variant", keep="last"))
    runs = {names[0]: here.drop_duplicates("variant", keep="last").set_index("variant"),
            names[1]: same.set_index("variant")}  # fmt: skip
    said = two_runs_text(runs, variants)
    over = shared_rounds_text(runs[names[1]], [v for v in variants if v in runs[names[1]].index])
    return said + (f" {names[1][0].upper()}{names[1][1:]} medians here are {over}." if said and over else "")


def table(df: pd.DataFrame, columns: list[str] | None = None, digits: int | dict = 1) -> str:
    """A Markdown table of `columns` (all by default), floats rounded to `digits`: one count for
    every column, or {column: count} with 1 for the others (notebook 00_setup)."""
    df = df if columns is None else df[columns]
    places = digits if isinstance(digits, dict) else {}
    default = 1 if isinstance(digits, dict) else digits
    header = "| " + " | ".join(header_of(c) for c in df.columns) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = [
        "| " + " | ".join(_cell(v, places.get(c, default)) for c, v in zip(df.columns, row)) + " |"
        for row in df.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


_UNITS = {"ms": "ms", "us": "µs", "s": "s", "mb": "MB", "gb": "GB", "gbs": "GB/s", "pct": "%"}
_WORDS = {"gpu": "GPU", "cpu": "CPU", "kv": "KV", "lm": "LM", "mlp": "MLP", "sms": "SMs", "eos": "EOS", "us": "µs"}
# counters of profiling.count_syncs whose names are op names, not words
_TERMS = {"local_scalar_dense": "`.item()` reads", "sync_debug_warnings": "flagged syncs"}


def header_of(column) -> str:
    """A snake_case result column in words with its unit ("median_ms" -> "median, ms",
    "times_task_floor" -> "× task floor"); other names as they are (notebook 00_setup)."""
    name = str(column)
    if "_" not in name or not name.replace("_", "").isalnum() or name != name.lower():
        return name
    for term, words in _TERMS.items():
        if name.startswith(term):
            rest = name[len(term) :].strip("_")
            return words + (f" {header_of(rest)}" if rest else "")
    name = name.replace("gb_s", "gbs")
    words = name.split("_")
    unit = _UNITS.get(words[-1]) if len(words) > 1 else None
    words = words[:-1] if unit else words
    lead = {"pct": "%", "times": "×"}.get(words[0])
    words = ([lead] if lead else []) + [_WORDS.get(w, w) for w in words[1 if lead else 0 :]]
    return " ".join(words) + (f", {unit}" if unit else "")


def _cell(value, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:
            return ""
        if 0 < value < 1:  # never printed as 0 or 1: 0.9995 reads "0.9995", not "1.000"
            return side_of(value, (0, 1), digits)
        return f"{value:,.{digits}f}"
    return str(value)


def spread(row, unit: str = "ms", digits: int = 1, key: str = "ms") -> str:
    """ "median (q25–q75) unit" from median_<key>, q25_<key>, q75_<key> (notebook 01_naive)."""
    med, lo, hi = row[f"median_{key}"], row[f"q25_{key}"], row[f"q75_{key}"]
    return f"{med:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f}){' ' + unit if unit else ''}"


def percent_text(share: float, threshold: float, digits: int = 0) -> str:
    """`share` as a percentage with `digits` decimals, or as many more as keep it on its side of
    `threshold` (notebook 01_naive: 0.9456 of the resampled runs against the 95% a verdict needs
    reads "94.6%", not "95%"), and off 100% and 0% unless it is exactly that: 399 of 400 resampled
    runs (0.9975) read "99.8%", not "100%" (review r11)."""
    for places in range(digits, digits + 7):
        text = f"{share:.{places}%}"
        shown = float(text[:-1]) / 100
        if (shown >= threshold) == (share >= threshold) and (shown == share or shown not in (0, 1)):
            return text
    # closer to the threshold, 0% or 100% than 0.000001%: no count of rounds gets here
    edge = 1 if abs(share - 1) < abs(share - threshold) else 0 if abs(share) < abs(share - threshold) else threshold
    return f"just {'under' if share < edge else 'over'} {edge:.{digits}%}"


def runs_apart_text(first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str], by: str = "max_seqlen",
                    name: str = "N") -> str:  # fmt: skip
    """How far two separate runs of one variant lay apart (`first` and `second`: their rows, one per
    `by` value; `names`: what to call each), at every value both ran: each run's median (IQR) over
    the first k rounds of each, k the fewer that either ran there (like with like: a median over 10
    rounds beside one over 80 differs for that alone, as the host drifts between rounds); a
    direction only where the two IQRs do not overlap, otherwise "within the rounds' spread"
    (notebook 03_expandable_segments: its default allocator against notebook 02's)."""
    mine = {r[by]: run_times(r) for r in first.to_dict("records")}
    theirs = {r[by]: run_times(r) for r in second.to_dict("records")}
    parts, apart = [], 0
    for value in sorted(v for v in mine if v in theirs and mine[v] and theirs[v]):
        k = min(len(mine[value]), len(theirs[value]))
        a, b = (time_summary(t[:k]) for t in (mine[value], theirs[value]))
        said = (f"at {name} = {value}, over the first {k} rounds of each: {names[0]} {spread(a, '')} ms, "
                f"{names[1]} {spread(b, '')} ms")  # fmt: skip
        if a["q25_ms"] > b["q75_ms"] or a["q75_ms"] < b["q25_ms"]:
            apart += 1
            side = "slower" if a["q25_ms"] > b["q75_ms"] else "faster"
            parts.append(f"{said}: {names[0]} {side}, its IQR wholly {'above' if side == 'slower' else 'below'}")
        else:
            parts.append(f"{said}: within the rounds' spread (the IQRs overlap)")
    if not parts:
        return ""
    end = ("the two runs lay apart by more than their rounds' spread where their IQRs do not overlap" if apart
           else "the two runs lay within their rounds' spread of each other: no drift between them shows beyond it")
    return f"The same variant in two runs, {'; '.join(parts)}. So {end}."


def p_text(p: float, level: float | None = None) -> str:
    """ "= 0.016", or "< 0.001" where three decimals would show a p-value as zero; beside a `level`,
    as many decimals as keep the printed p on its side of the printed level: "= 0.0064" at level
    0.00625, where "0.006" would read below it (notebook 02_kv_cache)."""
    if p < 0.0005 and (level is None or level > 0.001):
        return "< 0.001"
    if level is not None and p == level:
        return f"= {level_text(level)}"
    for digits in range(3, 10):
        text = f"{p:.{digits}f}"
        shown = float(text)
        if (shown > 0 or p == 0) and (level is None or (shown < level) == (p < level) and shown != level):
            return f"= {text}"
    return f"= {p:.3g}"


def outcome_text(g: dict, said: dict | None = None) -> str:
    """A comparison's outcome in words, with the rounds that would likely decide an undecided one,
    a real difference inside the band, a row outside its slice; `said` ({outcome: words}) words an
    outcome another way, e.g. "grows" for faster (notebook 03_expandable_segments)."""
    outcome = g["outcome"]
    words = {NO_EFFECT: f"no effect, within ±{BAND:.0%}", UNDECIDED: "undecided", **(said or {})}.get(outcome, outcome)
    needed = g.get("rounds_to_decide")
    looks = parse_looks(g.get("looks"))
    if outcome == UNDECIDED and looks:  # sequential: it ran on to its cap, or its variants stopped before
        ran = g.get("rounds")
        if g.get("capped"):
            words += " at the cap"
        elif ran == ran and ran is not None and int(ran) < looks[-1]:  # not a comparison run on, or a variant failed
            words += f", not run on to the cap of {looks[-1]}"
    elif outcome == UNDECIDED and needed is not None and needed == needed and needed:  # None or NaN: no estimate
        ran = g.get("rounds")
        if ran == ran and ran is not None and needed <= int(ran) + 1:  # the estimate is no more than one more round:
            words += f": more rounds than these {int(ran)} would decide it"  # its spread alone says fewer: no count
        else:
            words += f": about {int(needed)} rounds would decide it"
    if outcome in DECIDED and g.get("no_effect"):
        words += f", but by less than {BAND:.0%}"  # real, yet shown inside the band: not a gain to count on
    if g.get("no_effect") and (shown := equivalence_text(g)):
        words += f": {shown}"  # the interval the no-effect test put inside the band, not the wider one
    return words


OUTSIDE = "; taken as run outside its slice (inferred from its GPU busy time), not counted"


def _digits(g: dict) -> int:
    """Two decimals, three where a real difference inside the band would read ×1.00."""
    return 3 if g["outcome"] in DECIDED and g.get("no_effect") and round(g["speedup"], 2) == 1 else 2


def speedup_text(g: dict | None, said: dict | None = None) -> str:
    """ "×1.08 (IQR ×1.02–×1.13 of 12 rounds; p = 0.016, faster; 95% interval ×1.03–×1.12)": the
    paired speed-up with its interval and outcome, fixed rounds too (`interval_text`, computed from the
    recorded rounds by `tokgen.stats.judge`); a sequential comparison with its cap, its look's level
    and interval, and where it stopped before its variants' last round the speed-up over all of them
    (`_all_rounds_text`); "not measured" for None (notebook 02_kv_cache)."""
    if g is None:
        return "not measured"
    d = _digits(g)
    rounds, looks = g.get("rounds"), parse_looks(g.get("looks"))
    of = f" of {int(rounds)} rounds" if rounds is not None and rounds == rounds else ""
    if looks and of and not (g["outcome"] == UNDECIDED and not g.get("capped") and rounds < looks[-1]):  # says why
        of = f" of {int(rounds)} rounds, up to {looks[-1]}"
    iqr = f"IQR ×{g['speedup_q25']:.{d}f}–×{g['speedup_q75']:.{d}f}{of}"
    outside = OUTSIDE if g.get("confined") is False else ""  # after the interval, not inside the outcome's words
    if not looks:
        said_ = f"p {p_text(g['p_value'], ALPHA)}, {outcome_text(g, said)}; {interval_text(g)}"
        return f"×{g['speedup']:.{d}f} ({iqr}; {said_}{outside})"
    return (
        f"×{g['speedup']:.{d}f} ({iqr}; p {p_text(g['p_value'], g['level'])} at level {level_text(g['level'])}, "
        f"{outcome_text(g, said)}; "
        f"{interval_text(g)}{_all_rounds_text(g, d)}{outside})"
    )


def _all_rounds_text(g: dict, digits: int) -> str:
    """A sequential comparison decided at a look before the last round both of its variants ran
    (they ran on for other pairs): its speed-up over all those rounds, not judged, "; ×1.01 over all
    80 rounds both ran: a stop at an early look tends to overstate the size" where the look found a
    real difference and its speed-up lies farther from ×1 than that over all the rounds by more than 1%
    (a look stops where the difference looks large; the reviews of issue 51: ×1.04 at look 20, ×1.01
    over 80); "" where nothing stopped early (notebook 07_pipelining)."""
    if not _ran_on(g):
        return ""
    both = g["rounds_both"]
    all_, look = f"×{g['speedup_all']:.{digits}f}", f"×{g['speedup']:.{digits}f}"
    # farther from ×1 by more than 1% (×2.43 at the look against ×2.42 over all: no caution)
    smaller = all_ != look and abs(math.log(g["speedup_all"])) < abs(math.log(g["speedup"])) - math.log(1.01)
    why = ": a stop at an early look tends to overstate the size" if g["outcome"] in DECIDED and smaller else ""
    return f"; {all_} over all {int(both)} rounds both ran{why}"


def _ran_on(g: dict) -> bool:
    """Whether a comparison was decided at a look before the last round both of its variants ran."""
    both = g.get("rounds_both", 0)
    return bool(g.get("decided")) and both > g["rounds"] and g.get("speedup_all") == g.get("speedup_all")


def level_text(level: float) -> str:
    """A look's level in the fewest digits (2 to 5) that write it exactly, so that a design's levels
    as printed add up to ALPHA (notebook 00_setup)."""
    for digits in range(2, 6):
        text = f"{level:.{digits}g}"
        if abs(float(text) - level) <= 1e-9 * abs(level):
            return text
    return f"{level:.3g}"


def has_interval(g: dict) -> bool:
    """Whether a comparison has an interval: too few rounds for its level give none (0 to ∞, or NaN), as
    `interval_text` says (notebook 01_naive)."""
    low, high = g.get("interval_low", math.nan), g.get("interval_high", math.nan)
    return bool(0 < low and high < math.inf)


def interval_text(g: dict) -> str:
    """ "95% interval ×1.03–×1.12": a comparison's interval at its level, each end with as many
    decimals (two to six) as keep it on its side of ×1 and of the band's edges: ×1.002, not ×1.00,
    for an interval that excludes ×1. A sequential comparison's is its look's interval, at that look's
    level: the looks' intervals hold the true speed-up together at least 1 - ALPHA of the time (their
    levels add up to ALPHA), so it reads "95% sequential interval", not the look's own 99.4%, which
    stopping where the interval first excludes ×1 does not keep (notebook 00_setup)."""
    low, high = g.get("interval_low", math.nan), g.get("interval_high", math.nan)
    if not has_interval(g):  # NaN, or too few rounds for the level
        return "too few rounds for an interval"
    looks = parse_looks(g.get("looks"))
    level = g.get("level", ALPHA)
    what = f"{1 - ALPHA:.0%} sequential interval" if len(looks) > 1 else f"{100 * (1 - level):.3g}% interval"
    edges = tuple(g.get("thresholds") or ())  # a claim's thresholds (×1.5, ×2.5, ×4): an end never rounds onto one
    return f"{what} ×{_side_kept(low, edges)}–×{_side_kept(high, edges)}"


def equivalence_text(g: dict) -> str:
    """ "its equivalence interval ×0.96–×1.04": the (1 − 2·level) interval of `tokgen.stats.judge`
    that the no-effect test (two one-sided tests at the level) inverts, which lies inside ±BAND
    exactly when the comparison is shown to; each end with the digits that keep it on its side of
    ×1 and of the band's edges; "" where the comparison has none. Wholly on one side of ×1, it says
    by how much at most, as the band counts: "(slower by at most 4.9%)" for ×0.953–×0.997 (the time
    1/0.953 = 1.049 times the other's), "(faster by at most 3.0%)" for ×1.002–×1.030 (notebook 00_setup)."""
    low, high = g.get("equivalence_low", math.nan), g.get("equivalence_high", math.nan)
    if not (0 < low and high < math.inf):  # NaN, missing, or too few rounds for the level
        return ""
    side = (f" (slower by at most {percent_text(1 / low - 1, BAND, 1)})" if high < 1 else
            f" (faster by at most {percent_text(high - 1, BAND, 1)})" if low > 1 else "")  # fmt: skip
    return f"its equivalence interval ×{_ends_kept(low, high)}{side}"


def _ends_kept(low: float, high: float) -> str:
    """ "0.973–×0.974": an interval's ends as `_side_kept` gives them, with more decimals (up to six) where
    two would print both ends the same though they differ ("×0.97–×0.97" read as an interval of zero width:
    review rr21d N1)."""
    edges = (1 / (1 + BAND), 1, 1 + BAND)
    for digits in range(2, 7):
        shown = side_of(low, edges, digits), side_of(high, edges, digits)
        if float(shown[0]) != float(shown[1]) or low == high:
            break
    return f"{shown[0]}–×{shown[1]}"


def side_of(x: float, edges=(), digits: int = 2) -> str:
    """`x` with `digits` decimals, or more (up to digits + 4) where fewer would put it on one of `edges` or across
    one: 1.6996 against a slope threshold of 1.7 reads "1.6996", not "1.70" (review rvD12 S1; notebook 01_naive)."""
    for places in range(digits, digits + 5):
        shown = round(x, places)
        if all((shown < edge) == (x < edge) and (shown != edge or x == edge) for edge in edges):
            break
    return f"{x:.{places}f}"


def _side_kept(x: float, extra=()) -> str:
    """`x` in two decimals, or more where two would put it on ×1 or an edge of the band the no-effect test
    uses (×1/(1 + BAND) and ×(1 + BAND)), or on one of `extra` (a claim's thresholds, review rvD12 S1:
    ×1.5034 reads ×1.503 beside "holds ×1.5"), or across one (`side_of`)."""
    return side_of(x, (1 / (1 + BAND), 1, 1 + BAND, *extra))


def design_text(looks, thresholds=(), which: str = "each comparison") -> str:
    """The sequential design in one paragraph, for the notebooks that run it (notebook 00_setup):
    the looks, their levels, and what the whole procedure guarantees. With `thresholds` (the speed-ups a claim
    reads `which` against: `tokgen.stats.sequential`'s), that such a comparison also runs on until its interval
    lies clear of each, even once called faster (review rvB17 M1: notebook 02's N=100, faster at 10 rounds, ran
    to 80 while its interval held ×1.5)."""
    looks, levels = list(looks), look_levels(looks)
    edges = " and ".join(f"×{t:g}" for t in thresholds)
    clear = (f"; {which} also needs its interval clear of {edges} (the speed-up{'s' * (len(thresholds) > 1)} its "
             "claim reads it against), so it runs on while its interval still holds "
             f"{'one of them' if len(thresholds) > 1 else 'it'}, even once called faster") if thresholds else ""
    if len(looks) == 1:
        return (
            f"Each comparison is judged once, after {looks[0]} rounds, at level {ALPHA} (a cap no larger than "
            f"the first look leaves one look); its interval is the {1 - ALPHA:.0%} one. {EQUIVALENCE}"
        )
    said = ", ".join(map(str, looks[:-1])) + f" and {looks[-1]}"
    return (
        f"Each comparison this notebook needs is judged after {said} rounds, at levels "
        f"{', '.join(map(level_text, levels))} (their sum is {ALPHA}), and stops at the first look that "
        f"decides it: faster, slower, or no effect within ±{BAND:.0%}{clear}; only the variants of comparisons "
        f"still undecided run on, up to the cap of {looks[-1]} rounds. Over all the looks together, a variant "
        f"against itself is called faster or slower, and an effect at the band's edge \"no effect\", at most "
        f"{ALPHA:.0%} of the time (notebook 00, section 4; data/sequential_error_rates.csv measures both, for "
        "the looks it names). "
        "Each comparison says how many rounds it used and its interval at the level of the look that judged it: "
        f"the looks' intervals hold the true speed-up together at least {1 - ALPHA:.0%} of the time (a "
        f"sequential interval). {EQUIVALENCE}"
    )


def speedup_table(comparisons: pd.DataFrame, columns: dict[str, str] | None = None, legend: bool = True) -> str:
    """Comparisons as a Markdown table: `columns` ({header: column}), then `speedup_text`'s parts as
    columns, the interval last (unless `columns` gives one), and with `legend` the `LEGEND`
    (notebook 03_expandable_segments). Where a sequential comparison was decided at a look before the
    last round both of its variants ran, a last column gives its speed-up over all those rounds, as
    `speedup_text` does (`_all_rounds_text`), with `ALL_ROUNDS_NOTE` under the table: a page that also
    states that speed-up (notebook 09's claim 10) then shows it in the table too (review r11)."""
    columns = columns or {"variant": "variant", "against": "vs"}
    out = pd.DataFrame({header: comparisons[column].to_numpy() for header, column in columns.items()})
    rows = comparisons.to_dict("records")
    out["speed-up"] = [f"×{g['speedup']:.{_digits(g)}f}" for g in rows]
    out["IQR of rounds"] = [f"×{g['speedup_q25']:.{_digits(g)}f}–×{g['speedup_q75']:.{_digits(g)}f}" for g in rows]
    out["p"] = [p_text(g["p_value"], g.get("level") or ALPHA).removeprefix("= ") for g in rows]
    if any(parse_looks(g.get("looks")) for g in rows):  # sequential: each p is judged at its look's level
        out["level"] = [level_text(g["level"]) if g.get("level") == g.get("level") and g.get("level") else ""
                        for g in rows]  # fmt: skip
    out["rounds"] = [str(int(g["rounds"])) for g in rows]
    out["outcome"] = [outcome_text(g) for g in rows]
    if "interval" not in out:  # a caller's own column of `interval_text` stays the one
        out["interval"] = [interval_text(g) for g in rows]
    ran_on = [_ran_on(g) and g.get("variant") != g.get("vs") for g in rows]  # a base against itself: ×1 anyway
    if any(ran_on):
        out[ALL_ROUNDS] = [f"×{g['speedup_all']:.{_digits(g)}f} ({int(g['rounds_both'])} rounds)" if on else ""
                           for g, on in zip(rows, ran_on)]  # fmt: skip
    return (table(out) + (f"\n\n{ALL_ROUNDS_NOTE}" if any(ran_on) else "")
            + (f"\n\n{LEGEND}" if legend else ""))  # fmt: skip


ALL_ROUNDS = "over all rounds both ran, not judged"  # `speedup_table`'s column
ALL_ROUNDS_NOTE = (
    f"*{ALL_ROUNDS[0].upper() + ALL_ROUNDS[1:]}: where a comparison was decided at a look before the last round "
    "both of its variants ran (they ran on for other comparisons), its speed-up over all those rounds; its outcome "
    "and interval are the look's. A look stops where the difference looks large, so the speed-up at an early look "
    "can overstate it.*"
)


EQUIVALENCE = (
    f"A comparison shown to lie within ±{BAND:.0%} (no effect, or a real difference by less than {BAND:.0%}) also "
    "gives its equivalence interval: the narrower interval at twice its level, whose ends the no-effect test's "
    f"two one-sided tests check, each at that level; it lies inside ±{BAND:.0%}, while the wider interval beside "
    "it, the one that holds the true speed-up as often as stated, may reach past the band's edges."
)
LEGEND = (
    "*Speed-up: the median over interleaved rounds of t(against) / t(variant); above ×1 the variant is "
    f"faster. IQR: that of the per-round ratios. Faster or slower: the signed-rank test's p below its level "
    f"({ALPHA} with fixed rounds; with the sequential design, the level of the look that judged it); no effect: "
    f"shown to lie within ±{BAND:.0%}; undecided: neither. {EQUIVALENCE}*"
)


RANK_COLUMNS = ["variant", "rank", "tied", "speedup", "outcome", "vs_leader", "own_rank", "beaten_by",
                "beaten_through", "within_band_of", "cycle", "shared_with"]  # what `ranking` gives, an empty table too


def _cycle_text(scc: set, beats, name=lambda v: f"`{v}`") -> str:
    """A beat cycle's wins in words, walked from its first name: "`a` beats `b`, `b` beats `c`, `c` beats `a`"
    (any other win inside it after the walk); `name` words each member ("K = 2" in a sweep of K)."""
    edges = sorted((w, lo) for w in scc for lo in scc if beats(w, lo))
    at = start = min(scc)
    seen, walk = {start}, []
    while nxt := min((lo for w, lo in edges if w == at and lo not in seen), default=None):
        walk.append((at, nxt))
        seen.add(nxt)
        at = nxt
    walk += [(at, start)] if (at, start) in edges else []
    return ", ".join(f"{name(w)} beats {name(lo)}" for w, lo in walk + [e for e in edges if e not in walk])


def _rank_steps(names: list, pairs: dict) -> dict:
    """`ranking`'s two steps on `names`, from `pairs` ({(a, b): b against a}): per name its `beaten_by`,
    `beaten_through`, `within_band_of`, `own_rank`, `cycle` and `rank`."""
    out = {}
    for name in names:  # beaten: faster for real, and not shown to lie inside the band
        beats = {o: pairs[o, name] for o in names if o != name and pairs[name, o].get("outcome") == FASTER
                 and not pairs[name, o].get("no_effect")}  # fmt: skip
        band = [o for o in names if o != name and (pairs[name, o].get("no_effect") or pairs[o, name].get("no_effect"))]
        out[name] = {"beaten_by": beats, "within_band_of": band}
    up = {n: set(out[n]["beaten_by"]) for n in names}  # step 1: the variants that beat it, directly or through a chain
    while True:
        grown = {n: up[n].union(*(up[o] for o in up[n])) for n in names}
        if grown == up:
            break
        up = grown
    for n, g in out.items():
        scc = {n} | {o for o in up[n] if n in up[o]} if n in up[n] else set()  # a beat cycle: they beat each other
        g["own_rank"] = 1 + len(up[n] - scc - {n})  # a cycle's members share the better rank (review rr20f S4)
        g["beaten_through"] = {o: next(p for p in g["beaten_by"] if o in up[p] or o == p)
                               for o in sorted(up[n] - {n} - set(g["beaten_by"]))}  # fmt: skip
        g["cycle"] = _cycle_text(scc, lambda w, lo: w in out[lo]["beaten_by"]) if scc else ""
    group = {n: n for n in names}  # step 2: the band's pairs join groups; a group takes its best own count

    def root(n):
        while group[n] != n:
            n = group[n]
        return n

    links = {tuple(sorted((n, o))) for n in names for o in out[n]["within_band_of"]}
    while True:  # the join that gives the best rank first, then by name: not by the order of the listing
        of = {n: root(n) for n in names}
        best = {}
        for n in names:
            best[of[n]] = min(best.get(of[n], out[n]["own_rank"]), out[n]["own_rank"])

        def clash(a, b):  # the join would put a variant beside or above one that beats it (directly or through a
            # chain, a beat cycle's other members too): a beater in the joined group, or ranked no better than it
            rank = min(best[a], best[b])
            return any(best[of[o]] >= rank for m in names if of[m] in (a, b) for o in up[m] - {m})

        open_ = sorted((min(best[of[a]], best[of[b]]), a, b) for a, b in links
                       if of[a] != of[b] and not clash(of[a], of[b]))  # fmt: skip
        if not open_:
            break
        group[of[open_[0][2]]] = of[open_[0][1]]
    for n, g in out.items():
        g["rank"], g["root"] = best[of[n]], of[n]
    return out


def ranking(results: pd.DataFrame, base: str, variants: list[str] | None = None,
            baseline: bool = False) -> pd.DataFrame:  # fmt: skip
    """`variants` (default: all) with their gain over `base` and a `rank`, ordered by rank, then by
    that gain (notebook 07_pipelining; notebook 10_cuda_graphs words the rule with a worked example).
    Never a ranking by median. A variant *beats* another where it is really faster round by round and
    not shown to lie within ±BAND of it (`tokgen.stats.gain`, each pair at its looks' levels, not adjusted
    for the number of pairs; `beaten_by`: {each: the variant against it}). The rule, in two steps:

    1. `own_rank`: one plus the number of variants that beat it, directly or through a chain of such wins
       (`a` beats `b` beats it: `beaten_through` {`a`: `b`}). So a variant beaten by another ranks below
       it, and below every variant that beats that one. In a beat cycle (`a` beats `b`, `b` beats `c`,
       `c` beats `a`) each beats the others through the cycle: its members count only the beaters outside
       it and share that better rank, as band ties do (review rr20f S4), and `cycle` says the wins.
    2. Variants shown inside each other's no-effect band (no effect, or a real difference shown within
       ±BAND; `within_band_of` names them) share the better rank, unless that puts a variant beside or
       above one that beats it (review rr20f N1: a variant ranked below each that beats it directly is
       below each that beats it through a chain too): such a pair joins their two groups, and a
       group takes the best own count of its members, so one variant can reach another's rank through a
       chain of such pairs (reviews rv19A S1, rv19B S6: chained ±BAND ties had put beaten variants at
       rank 1 beside the variant that beats them). Each time, the join giving the best rank is made
       first, then by name: the ranks do not depend on the order of `variants` (review rr19f N1). With
       `a` ≈ `b`, `b` ≈ `c` and `a` beating `c`, `a` and `b` share rank 1 and `c` has rank 2; with `a`
       beating `c`, `b` ≈ `c` and `a` against `b` undecided, `b` keeps rank 1 beside `a`, and `c` rank 2.
       So a shared rank holds no variant that beats another of it, but in a beat cycle. A variant raised
       through the band carries `through` and `own_rank` in `vs_leader` (`tie_reason` says them).
       Undecided pairs are not tied by this rule: they share a rank only where their counts agree.

    `tied` where several share a rank; `vs_leader`, the comparison with the first of its rank (None
    for that first). With `baseline`, `base` is left out of the ranking and its row comes last, rank
    NaN (`rank_text`: "— (baseline)"): a baseline that ran fewer rounds (notebook 07's naive, stopped
    at its first look) beats nobody, yet outranked variants beaten over more rounds (reviews pvA15 S1,
    rvB15 S1). A variant whose rank the baseline would share, ranked by the same rule with it, where
    that leaves the variant's rank as it is, has `shared_with` = `base` (review rv19B N3: notebook 12
    printed "rank 19: `generate() dynamic`" for the run notebook 10 ranks "19 (shared)" with naive),
    only where each of the baseline's pairs ran as many rounds as each pair of the ranked variants
    (`rounds_both`): else that rank is the unfair one the baseline was left out for (review rr20f S1)."""
    names = list(results["variant"]) if variants is None else list(variants)
    names = [n for n in names if not (baseline and n == base)]
    rows = {}
    for name in names:
        g = gain(results, base, name)
        if g is not None and g["speedup"] == g["speedup"]:
            rows[name] = g
    own = gain(results, base, base) if baseline else None  # against itself: ×1 every round, not ranked
    base_row = own and own | {"rank": float("nan"), "tied": False, "vs_leader": None, "own_rank": float("nan"),
                              "beaten_by": {}, "beaten_through": {}, "within_band_of": [], "cycle": "",
                              "shared_with": ""}  # fmt: skip
    if not rows:  # nothing to rank: the baseline's row alone, where there is one (review rr15c M3)
        return pd.DataFrame([base_row]) if base_row else pd.DataFrame(columns=RANK_COLUMNS)
    pairs = {(a, b): gain(results, a, b) or {} for a in rows for b in rows if a != b}  # b against a
    steps = _rank_steps(list(rows), pairs)
    with_base = {}
    ran = [g.get("rounds_both") for g in pairs.values() if g.get("rounds_both") is not None]
    fair = all(rows[n].get("rounds_both") is None or rows[n]["rounds_both"] >= max(ran, default=0) for n in rows)
    if base_row and fair:  # the same rule with the baseline in: the ranks it would share (review rv19B N3), only
        # where its pairs ran as many rounds as the others (review rr20f S1: notebook 07's naive ran 40, they 80)
        pairs |= {(base, n): rows[n] for n in rows} | {(n, base): gain(results, n, base) or {} for n in rows}
        with_base = _rank_steps([*rows, base], pairs)
    for name, g in rows.items():
        g |= {k: v for k, v in steps[name].items() if k != "root"}
        same = with_base and with_base[name]["rank"] == with_base[base]["rank"] == g["rank"]
        g["shared_with"] = base if same else ""
    ordered = sorted(rows.values(), key=lambda g: (g["rank"], -g["speedup"]))
    ranks = pd.Series([g["rank"] for g in ordered]).value_counts()
    leaders = {}
    for g in ordered:
        leader = leaders.setdefault(g["rank"], g["variant"])
        g["tied"] = bool(ranks[g["rank"]] > 1)
        g["vs_leader"] = None if leader == g["variant"] else gain(results, leader, g["variant"])
        if g["vs_leader"] is not None and g["own_rank"] > g["rank"]:  # its rank through the band, not its count
            g["vs_leader"] |= {"through": [o for o in g["within_band_of"] if steps[o]["root"] == steps[g["variant"]]
                                           ["root"]], "own_rank": g["own_rank"]}  # fmt: skip
        elif g["vs_leader"] is not None and g["cycle"] and g["cycle"] == steps[leader]["cycle"]:  # one beat cycle
            g["vs_leader"] |= {"cycle": g["cycle"]}
    if base_row:
        ordered.append(base_row)
    return pd.DataFrame(ordered)


def first_of_text(ranked: pd.DataFrame, what: str) -> str:
    """The variant that leads `ranking`'s table `ranked`, with the others that share its rank where
    it is shared (notebook 12_speed_of_light): "`a`, ranked first of {what}", or "`a`, listed first
    of `a`, `b`, which share the first rank of {what} (by its point speed-up, which does not rank
    them)"."""
    top = ranked[ranked["rank"] == ranked["rank"].min()]["variant"].tolist()
    if len(top) == 1:
        return f"`{top[0]}`, ranked first of {what}"
    names = ", ".join(f"`{v}`" for v in top)
    return (f"`{top[0]}`, listed first of {names}, which share the first rank of {what} (by its point speed-up, "
            "which does not rank them)")


RANK_RULE = (f"rank = 1 + the number of variants shown faster (really faster, not shown within ±{BAND:.0%}), "
             "directly or through one shown faster (a beats b and b beats c: both count against c); pairs shown within "
             f"±{BAND:.0%} share the better rank unless that puts one beside or above a variant shown faster than it; "
             "a cycle of such wins shares one rank")
# `ranking`'s rule in words, for the sentences that print ranks (README's legend says it for generators)


def _shared_words(row, head: str = " (", tail: str = ")") -> str:
    """ "shared", "shared with the baseline `naive`" or "shared, also with the baseline `naive`" (review rr20f
    S1: not "shared, and with"), wrapped in `head` and `tail`; "" for neither."""
    base, tied = row.get("shared_with") or "", bool(row.get("tied"))
    if not (base or tied):
        return ""
    with_base = f"with the baseline `{base}`" if base else ""
    return head + ("shared, also " if tied and base else "shared" if tied else "shared ") + with_base + tail


def rank_text(row) -> str:
    """ "1", or "1 (shared)" for a rank that several variants share (`tie_reason` says why each shares
    it; notebook 07_pipelining); "19 (shared with the baseline `naive`)" where `ranking` left its
    baseline out and the baseline, ranked by the same rule, has that rank (`shared_with`; review rv19B
    N3); "— (baseline)" for `ranking`'s unranked baseline (rank NaN)."""
    if row["rank"] != row["rank"]:
        return "— (baseline)"
    return f"{int(row['rank'])}{_shared_words(row)}"


def _through_text(near, own_rank) -> str:
    """Why a variant takes a better rank than its own count: the variants within ±BAND of it."""
    which = "which shares" if len(near) == 1 else "which share"
    return (f"shown to lie within ±{BAND:.0%} of {', '.join(f'`{v}`' for v in near)}, {which} the rank: variants "
            f"inside each other's band are tied; its own count alone would rank it {int(own_rank)}")


def tie_reason(vs_leader) -> str:
    """Why a variant shares its rank's place with its first (`vs_leader`, `ranking`'s comparison of the
    two): where its own count would rank it lower, the variants within ±BAND of it through which it
    shares the rank (`through`, with its `own_rank`); in a beat cycle with the first, the cycle's wins
    (`cycle`); else a real difference shown within ±BAND, "no effect", or rounds that do not tell them
    apart (notebook 07_pipelining)."""
    if vs_leader and vs_leader.get("through"):
        return _through_text(vs_leader["through"], vs_leader["own_rank"])
    if vs_leader and vs_leader.get("cycle"):
        return f"a cycle: {vs_leader['cycle']}, so each is beaten through the others and they share a rank"
    if vs_leader and vs_leader.get("outcome") in (FASTER, SLOWER) and vs_leader.get("no_effect"):
        return f"a real difference, but within ±{BAND:.0%}: it does not part their rank"
    if vs_leader and vs_leader.get("outcome") in (FASTER, SLOWER):
        return (f"a real difference, not shown within ±{BAND:.0%}, yet as many variants beat each: a rank counts "
                "the variants that beat it")  # fmt: skip
    if vs_leader and vs_leader.get("outcome") == NO_EFFECT:
        return f"shown to lie within ±{BAND:.0%} of it"
    return "the rounds do not tell them apart"


def first_tied(ranked: pd.DataFrame) -> bool:
    """Whether every variant sharing `ranking`'s rank 1 (the best rank of the rows given) is shown to
    lie within ±BAND of the first (no effect, or a real difference inside the band): tied, not merely
    not told apart by the rounds (notebook 07_pipelining)."""
    first = ranked[ranked["rank"] == ranked["rank"].min()].iloc[1:] if len(ranked) else ranked
    return bool(len(first)) and all(bool((g or {}).get("no_effect")) for g in first["vs_leader"])


def below_first_text(ranked: pd.DataFrame, reasons: bool = False) -> str:
    """The variants of `ranking`'s table left out of rank 1 with their ranks: "Below rank 1: rank 2:
    `c`; rank 3: `d`, `e`."; with `reasons`, a sentence each naming the variants that beat it
    and its comparison with each ("`c` has rank 2, beaten by `a` (…): against `a` ×0.94 (…)."), those
    that beat it through one of them ("through `a`, also by `z`"), a beat cycle's wins, and that these
    pairwise tests are not adjusted for their number; a rank taken through the band says so; a rank
    the left-out baseline would share says so (`shared_with`); without `reasons`, a rank that holds a
    beat cycle names its wins ("rank 4: `a`, `b`, `c` (a cycle: `a` beats `b`, …)"; review rr20f
    S4); "" where every variant has rank 1. Rows
    of a larger table keep its ranks: below the best rank among them (notebook 07_pipelining)."""
    top = int(ranked["rank"].min()) if len(ranked) else 1
    below = ranked[ranked["rank"] > top] if len(ranked) else ranked
    if not len(below):
        return ""
    if not reasons:  # grouped by rank: a rank shared by several names them together; one name alone keeps the
        # larger table's "(shared)" where its partner is left out here (review rvC16 N2)
        parts = []
        for k, g in below.groupby("rank", sort=True):
            row = {"tied": len(g) == 1 and bool(g["tied"].fillna(False).iloc[0]) if "tied" in g else False,
                   "shared_with": next((b for b in g.get("shared_with", []) if b), "")}  # fmt: skip
            cycles = sorted({c for c in g.get("cycle", []) if isinstance(c, str) and c})  # rr20f S4: name a cycle
            parts.append(f"rank {int(k)}{_shared_words(row)}: " + ", ".join(f"`{v}`" for v in g["variant"])
                         + "".join(f" (a cycle: {c})" for c in cycles))  # fmt: skip
        return f"Below rank {top}: " + "; ".join(parts) + "."
    parts = []
    for r in below.to_dict("records"):
        said = f"`{r['variant']}` has rank {int(r['rank'])}{_shared_words(r, ', ', '')}"
        if r["own_rank"] > r["rank"]:  # its rank through the band, not its own count
            near = [o for o in r["within_band_of"] if o in set(ranked[ranked["rank"] == r["rank"]]["variant"])]
            parts.append(f"{said}: {_through_text(near, r['own_rank'])}.")
            continue
        by = series_text(f"`{o}`" for o in r["beaten_by"])
        each = "; ".join(f"against `{o}` {speedup_text(g)}" for o, g in r["beaten_by"].items())
        via = {}
        for o, p in (r.get("beaten_through") or {}).items():
            via.setdefault(p, []).append(o)
        each += "".join(f"; through `{p}`, also by {series_text(f'`{o}`' for o in os_)}" for p, os_ in via.items())
        each += f"; a cycle: {r['cycle']}" if r.get("cycle") else ""
        parts.append(f"{said}, beaten by {by} (really faster, not shown within ±{BAND:.0%}): {each}.")
    return (f"Below rank {top}: " + " ".join(parts) + f" The rule: {RANK_RULE}; each pair tested at its own level "
            "(its look's, in a sequential run), not adjusted for the number of pairs.")


def _rank_words(row) -> str:
    return f"rank {int(row['rank'])}{_shared_words(row, ', ', '')}"


def _chain(ranked: pd.DataFrame, row: dict, top: str) -> str:
    """How `top` beats `row`'s variant only through others (`ranking`'s `beaten_through`, followed link by link,
    review rr20k N7): "`z`" for one between, "a chain: `a`, then `b`" for x → a → b → c; "" where it beats it
    directly or not at all."""
    by = {r["variant"]: r for r in ranked.to_dict("records")}
    links, at = [], row
    while (p := (at.get("beaten_through") or {}).get(top)) and p not in links:
        links.insert(0, p)
        if p not in by:
            break
        at = by[p]
    if len(links) > 1:
        return "a chain: " + ", then ".join(f"`{v}`" for v in links)
    return f"`{links[0]}`" if links else ""


def fastest_sentence(ranked: pd.DataFrame, what: str = "variant", reasons: bool = False, only=None) -> str:
    """Who ranks first in `ranking`'s table, and for a shared first place why each shares it: "tied"
    only where every one is shown within ±BAND of the first (`first_tied`), else "3 variants share
    rank 1" (the first counted among them), each after the first with its reason (`tie_reason`);
    then the variants below rank 1 with their ranks, and with `reasons` what placed each there
    (`below_first_text`; notebook 07_pipelining). With `only` (variant names), it names those alone,
    with the ranks the whole table gives them, and says how many variants those ranks count and which
    it leaves out (notebook 10_cuda_graphs: its registry generators, ranked with `generate()`; review
    r11 found a subset re-ranked on its own beside the table's ranks). "Fastest" only where the lone
    first beats every other variant named; where the rounds do not show it faster than some (rank 1
    alone means only that none beats it), it names them and says it is not shown to be the fastest
    (where it beats one only through a chain, "directly (only through `z`)": review rr20f S2),
    as where a baseline left out of the ranking (`ranking`'s `baseline`) is not shown slower than the
    first (review rr15c M1); with `only`, "no variant named here beats it" (M2)."""
    shown = ranked if only is None or ranked.empty else ranked[ranked["variant"].isin(list(only))]
    base = shown[shown["rank"].isna()]["variant"].tolist() if "rank" in shown else []  # `ranking`'s baseline row
    if shown.empty or len(base) == len(shown):
        return f"No {what} was timed" + (f" besides the baseline `{base[0]}`." if base else ".")
    top = int(shown["rank"].min())  # 1, unless `only` leaves out every variant of rank 1
    first = shown[shown["rank"] == top]
    lead = first.iloc[0]
    others = first.iloc[1:]
    below = below_first_text(shown, reasons)
    below = f" {below}" if below else ""
    left = ranked[~ranked["variant"].isin(shown["variant"])]["variant"].tolist()
    if left:
        below += (f" The ranks are those of all {len(ranked)} variants ranked together; not named here: "
                  + ", ".join(f"`{v}`" for v in left) + ".")  # fmt: skip
    at = "" if top == 1 else f", at rank {top}"
    ranked_ = shown[shown["rank"].notna() & (shown["variant"] != lead["variant"])]  # a baseline is not ranked
    open_ = [r for r in ranked_.to_dict("records") if lead["variant"] not in r["beaten_by"]]
    none = "no variant named here beats it" if left else "no variant beats it"  # `only`: others may (rr15c M2)
    # a baseline left out of the ranking: the first is the fastest only where it beats the baseline too (rr15c M1)
    slow = f"the baseline `{base[0]}`" if base and lead["outcome"] != FASTER else ""
    if not len(others) and (open_ or slow):  # alone at its rank, yet not faster than every other (review pvA15 S2)
        via = {r["variant"]: _chain(ranked, r, lead["variant"]) for r in open_}  # rr20f S2, rr20k N7
        names = series_text([f"`{r['variant']}` ({_rank_words(r)})" + (f" directly (only through {via[r['variant']]})"
                             if via[r["variant"]] else "") for r in open_] + ([slow] if slow else []))  # fmt: skip
        return (f"Rank {top} alone for the fastest {what}: `{lead['variant']}`, {speedup_text(lead)} against "
                f"`{lead['vs']}`; {none}, but the rounds do not show it faster than {names}, so it is not shown to "
                f"be the fastest.{below}")  # fmt: skip
    if not len(others):
        return f"Fastest {what}{at}: `{lead['variant']}`, {speedup_text(lead)} against `{lead['vs']}`.{below}"
    head = (f"Tied for the fastest {what} (rank {top}), {len(first)} variants" if first_tied(shown) and not slow else
            f"{len(first)} variants share rank {top} for the fastest {what}")  # fmt: skip
    text = f"{head}: `{lead['variant']}`, {speedup_text(lead)} against `{lead['vs']}`"
    text += "; " + "; ".join(  # each against its rank's first in the whole table (`lead` where `only` keeps it)
        f"`{r['variant']}`, against `{r['vs_leader']['vs']}` {speedup_text(r['vs_leader'])} "
        f"({tie_reason(r['vs_leader'])})"
        for r in others.to_dict("records")
    )
    if slow:
        text += f"; the first is not shown faster than {slow}, so the rank does not show the fastest"
    return text + "." + below


def first_rank_floors(ranked: pd.DataFrame, rows: pd.DataFrame) -> str:
    """Each variant of `ranking`'s rank 1 named with its own distance from the floor, read from `rows`
    (indexed by variant): its time where `rows` has median_ms, q25_ms and q75_ms, `times_task_floor`
    and `pct_of_own_floor` (with `kv_read`, its cache) where given and measured: "`a` takes 51.9
    (51.7–52.3) ms per generation, 2.46× the task's floor; `b` takes …". A shared first place gives
    every member its own numbers after its own name, so no number reads as another variant's; the
    sentence that says why they share it is `fastest_sentence` (notebooks 10_cuda_graphs and
    12_speed_of_light). Rows of a larger table keep its ranks: the best rank among them."""
    if ranked.empty:
        return ""
    parts = []
    for name in ranked[ranked["rank"] == ranked["rank"].min()]["variant"]:
        if name not in rows.index:
            parts.append(f"`{name}` is not set against the floor")
            continue
        r, takes = rows.loc[name], []
        if all(c in r.index for c in ("median_ms", "q25_ms", "q75_ms")):
            takes.append(f"{spread(r)} per generation")
        times, pct = r.get("times_task_floor"), r.get("pct_of_own_floor")
        if times is not None and times == times:
            takes.append(f"{times:.2f}× the task's floor")
        said = [f"takes {', '.join(takes)}"] if takes else []
        if pct is not None and pct == pct:
            cache = f" (its cache: {r['kv_read']})" if "kv_read" in r.index else ""
            said.append(f"reaches {pct:.0f}% of its own floor{cache}")
        parts.append(f"`{name}` " + " and ".join(said) if said else f"`{name}` is not set against the floor")
    return "; ".join(parts) + "." if parts else ""


def difference_text(differences, unit: str = "µs", digits: int = 1) -> str:
    """Paired per-round differences (`differences`, in `unit`) said as their median, IQR, the
    signed-rank p and the 95% interval (`tokgen.stats.difference_interval`), led by whether that
    interval is clear of 0: "+10.2 µs (a real difference: IQR +5.0 to +14.1 µs of 10 rounds;
    p = 0.004; 95% interval +4.1 to +16.3 µs)", else "not told apart from none". It says how large
    the difference is and how sure; what it is made of, the caller's words say (the solution of
    notebook 10_cuda_graphs, exercise 2)."""
    d = [float(x) for x in differences if x == x]
    if not d:
        return "not measured"
    q = statistics.quantiles(d, n=4, method="inclusive") if len(d) >= 2 else [d[0]] * 3
    low, high = difference_interval(d)
    s = lambda x: signed(x, digits)  # noqa: E731
    interval = (f"95% interval {s(low)} to {s(high)} {unit}" if math.isfinite(low)
                else "too few rounds for a 95% interval")  # fmt: skip
    told = low > 0 or high < 0  # the interval clear of 0: the rounds tell the difference from none
    word = "a real difference" if told else "not told apart from none"
    return (f"{s(statistics.median(d))} {unit} ({word}: IQR {s(q[0])} to {s(q[2])} {unit} of {len(d)} "
            f"round{'s' * (len(d) != 1)}; p {p_text(signed_rank_p(d))}; {interval})")


def while_cost_text(differences, gains: dict, k_name: str) -> str:
    """What the solution of notebook 10_cuda_graphs, exercise 2, found, in one sentence read from its numbers
    (review rv23C N4): the sign of the per-step cost difference (`differences`: the WHILE node's per added step
    minus the K = 1 decoder's, round by round; real where its 95% interval is clear of 0, as `difference_text`
    says) and each length's outcome of the WHILE node against the K = 1 decoder (`gains`: {N: `tokgen.gain`},
    faster or slower beyond, within or not shown on either side of ±BAND; no effect; undecided); "yet" where
    the whole generation goes the other way from the step. "" where no difference was measured."""
    d = [float(x) for x in differences if x == x]
    if not d:
        return ""
    low, high = difference_interval(d)
    step = ("more than" if low > 0 else "less than" if high < 0 else None) if math.isfinite(low) else None
    if step is None:  # too few rounds for a 95% interval, as `difference_text` says, or one that straddles 0
        tell = "too few rounds to tell" if not math.isfinite(low) else "the rounds do not tell"
        step_text = f"{tell} the WHILE node's cost per added step from `{k_name}` at K = 1's"
    else:
        step_text = (f"each added step costs the WHILE node {step} `{k_name}` at K = 1 (its launch, copy and "
                     "wait)")  # fmt: skip

    def outcome(g: dict) -> str:
        if g["outcome"] not in DECIDED:
            return f"within ±{BAND:.0%} of it (no effect)" if g["outcome"] == NO_EFFECT else "undecided against it"
        side = band_side(g)
        by = {"within": f"by less than {BAND:.0%}", "beyond": f"by more than {BAND:.0%}"}.get(
            side, f"not shown on either side of {BAND:.0%}")  # fmt: skip
        return f"{g['outcome']}, {by}"

    ends = [f"{outcome(g)} at N = {n}" for n, g in sorted(gains.items())]
    against = {"more than": FASTER, "less than": SLOWER}.get(step)
    turn = "yet" if against and any(g["outcome"] == against for g in gains.values()) else "and"
    whole = ", ".join(ends[:-1]) + (" and " if len(ends) > 1 else "") + ends[-1] if ends else "not measured"
    return f"Together: {step_text}, {turn} over a whole generation the WHILE node is {whole}."


def signed(x: float, digits: int = 0) -> str:
    """`x` with its sign, a typographic minus for a negative one, as every signed number the pages print:
    "+4.7", "−2.6", and one that rounds to zero unsigned, "0.0" (review rvB13 N4, rrA13 N3; the solution of
    notebook 10_cuda_graphs, exercise 2)."""
    s = f"{x:+.{digits}f}"
    return s[1:] if float(s) == 0 else s.replace("-", "\u2212")


def count_text(outcomes, where: str = "comparisons") -> str:
    """ "of 6 comparisons: faster (real) at 3, slower (real) at 1, no effect (within ±5%) at 2":
    outcomes counted in one order, the kinds that none had left out (notebook 13_regimes)."""
    outcomes = list(outcomes)
    counts = pd.Series(outcomes, dtype=object).value_counts()
    kinds = {FASTER: "faster (real)", SLOWER: "slower (real)", NO_EFFECT: f"no effect (within ±{BAND:.0%})",
             UNDECIDED: "undecided"}  # fmt: skip
    return f"of {len(outcomes)} {where}: " + ", ".join(f"{w} at {counts[k]}" for k, w in kinds.items() if k in counts)


def faster_count(comparisons, where: str = "comparisons") -> str:
    """ "faster in 5 of 5 comparisons, 3 of them by more than 5%, 1 by less than 5%, 1 not shown on either
    side of 5%": how many of `comparisons` (rows of `tokgen.stats.gain`) are faster for real, and of
    those how many are shown beyond ±BAND, shown inside it, and neither (`band_side`); then the other
    outcomes, if any ("; slower in 1, by more than 5%; undecided in 1"). A row without an
    equivalence interval (not a `gain` row) is counted by its outcome alone (notebook 10_cuda_graphs)."""
    rows = list(comparisons)
    counts = pd.Series([g["outcome"] for g in rows], dtype=object).value_counts()
    words = {"beyond": f"by more than {BAND:.0%}", "within": f"by less than {BAND:.0%}",
             "neither": f"not shown on either side of {BAND:.0%}"}  # fmt: skip
    parts = []
    for outcome in (FASTER, SLOWER, NO_EFFECT, UNDECIDED):
        k = int(counts.get(outcome, 0))
        if k or outcome == FASTER:
            part = f"{outcome} in {k}" + (f" of {len(rows)} {where}" if outcome == FASTER else "")
            sides = [band_side(g) for g in rows if g["outcome"] == outcome and outcome in DECIDED]
            said = [(sides.count(s), w) for s, w in words.items() if sides.count(s)]
            for i, (n, w) in enumerate(said):  # "3 of them by more than 5%, 1 by …", "all 5 by …", one: "by …"
                of_them = " of them" if i == 0 and n < k else ""
                part += f", {w}" if n == k == 1 else f", {'all ' if n == k else ''}{n}{of_them} {w}"
            parts.append(part)
    return "; ".join(parts)


def band_side(g: dict) -> str | None:
    """Where a real difference (faster or slower) lies against ±BAND: "within" where shown inside it
    (`no_effect`); "beyond" where its equivalence interval (the (1 − 2·level) one, whose ends the
    one-sided tests at the level check) lies wholly past the band's edge on its side, above ×(1 + BAND)
    for faster, below ×1/(1 + BAND) for slower; else "neither"; None for a row without an equivalence
    interval (notebook 10_cuda_graphs: faster ×1.054, equivalence interval ×1.048–×1.060: neither)."""
    if g.get("no_effect"):
        return "within"
    if "equivalence_low" not in g:
        return None
    low, high = g.get("equivalence_low", math.nan), g.get("equivalence_high", math.nan)
    beyond = low > 1 + BAND if g["outcome"] == FASTER else high < 1 / (1 + BAND)
    return "beyond" if beyond else "neither"


def band_speedup_text(g: dict) -> str:
    """`speedup_text`, and for a real difference that is shown neither beyond ±BAND nor inside it (`band_side`:
    "neither"), what `faster_count` counts it as, with the equivalence interval that says so: "…; not shown on
    either side of 5%: its equivalence interval ×1.043–×1.051 (faster by at most 5.1%)"; so a table row says which
    of the summary's counts it is (review rv21B N4; notebook 10_cuda_graphs). Rows beyond or inside the band read
    as `speedup_text` has them (inside: "but by less than 5%")."""
    text = speedup_text(g)
    shown = equivalence_text(g)
    if g["outcome"] in DECIDED and band_side(g) == "neither" and shown:
        text += f"; not shown on either side of {BAND:.0%}: {shown}"
    return text


def speedup_cell(g: dict | None) -> str:
    """A table cell: "×1.23 (95% interval ×1.20–×1.31; faster)", the paired speed-up with its
    interval (`interval_text`) and outcome, as `speedup_text` says them, without the IQR and p;
    "—" for a base against itself, "not measured" for None (notebook 10_cuda_graphs)."""
    if g is None:
        return "not measured"
    if g.get("variant") is not None and g.get("variant") == g.get("vs"):
        return "—"
    inside = f", but by less than {BAND:.0%}" if g["outcome"] in DECIDED and g.get("no_effect") else ""  # as said
    return f"×{g['speedup']:.{_digits(g)}f} ({interval_text(g)}; {g['outcome']}{inside})"


def decoder_text(max_seqlen: int, k: int, capacity: int, graphed: bool, tokens_per_row: int) -> str:
    """Notebook 10_cuda_graphs, section 1: one decoder built by hand for N = `max_seqlen` at K = `k`,
    its `capacity` (positions), whether it captured a CUDA graph (`graphed`; no CUDA: plain calls)
    and the tokens per row it returned, checked against the naive generator's before this is said."""
    how = f"one CUDA graph of {k} steps" if graphed else "plain calls (no CUDA here)"
    return (f"N = {max_seqlen}, K = {k}: capacity {capacity} positions, {how}; {tokens_per_row} tokens per row, the "
            "naive generator's.")


def steps_past_n_text(rows: pd.DataFrame) -> str:
    """Notebook 10_cuda_graphs, section 3: the decode steps each K computes where it does not divide N
    (whole replays of K steps: K·⌈N/K⌉), read from the timed rows (`max_seqlen`, `steps_per_graph`)."""
    n = int(rows["max_seqlen"].iloc[0])
    ks = sorted({int(k) for k in rows["steps_per_graph"].dropna()})
    over = {k: math.ceil(n / k) * k for k in ks if n % k}
    if not over:
        return f"N = {n}: every K here divides N, so no replay computes a step past N."
    return f"N = {n}: " + "; ".join(f"K = {k} computes {steps} steps" for k, steps in over.items()) + "."


def device_stop_text(rows: pd.DataFrame, step: str) -> str:
    """Notebook 10_cuda_graphs, section 6: the K-step decoder of `step` (the step the WHILE node runs) at
    each K of the 10_device_stop rows, against `graph_stop_on_device` where it ran, and where every row
    stopped: each `steps_run` with its `eos_token_id`, read from the rows."""
    ks = sorted({int(k) for k in rows["steps_per_graph"].dropna()})
    against = " against `graph_stop_on_device`" if (rows["generator"] == "graph_stop_on_device").any() else ""
    stops = rows.drop_duplicates("steps_run").sort_values("steps_run")
    said = ", ".join(f"{int(r['steps_run'])} steps (EOS id {int(r['eos_token_id'])})" for _, r in stops.iterrows())
    return (f"`{step}` (the step the WHILE node runs) at K = {', '.join(map(str, ks))}{against}; every row stops "
            f"after {said}.")


def k_sweep_text(generator: str, by_k: pd.DataFrame, ks: dict) -> str:
    """Notebook 10_cuda_graphs' takeaway on one generator's sweep of K: the smallest K's rank, then each
    other K's rank among the generator's own Ks ("rank 1 of its 5 Ks", never a bare rank beside the table's
    ranks among all variants; review rvC15 S4) and its speed-up over the smallest K, round by round
    (`by_k`: `ranking`'s table against that K's variant; `ks`: {variant: K}), then the sweep in words
    (`k_sweep_words`: which Ks are tied, which decidedly slower; review rvC14 S4)."""
    base, of = by_k["vs"].iloc[0], _of_its(by_k)
    rank = lambda r: f"rank {int(r['rank'])}{of}{' (shared)' if r['tied'] else ''}"  # noqa: E731
    own = [f"K = {ks[base]:.0f} {rank(r)}" for r in by_k.to_dict("records") if r["variant"] == base]
    each = [f"K = {ks[r['variant']]:.0f} {rank(r)}, against K = {ks[base]:.0f} {speedup_text(r)}"
            for r in by_k.to_dict("records") if r["variant"] != base]  # fmt: skip
    return f"* `{generator}`: " + "; ".join(own + each) + ". " + k_sweep_words(by_k, ks)


def _of_its(by_k: pd.DataFrame) -> str:
    """ " of its 5 Ks": what a rank in a sweep of K ranks among (review rvC15 S4)."""
    return f" of its {len(by_k)} Ks"


def series_text(items) -> str:
    """ "1, 2, 4 and 8", "1 and 2", "1": items joined as a sentence lists them (notebook 10_cuda_graphs's K
    sweep; notebook 06_eos_sync_profile's windows and ratios)."""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def k_sweep_words(by_k: pd.DataFrame, ks: dict) -> str:
    """A sweep of K said in words from `ranking`'s table `by_k` (`ks`: {variant: K}; review rvC14 S4): the Ks
    of its best rank (a rank among the generator's own Ks, said so: review rvC15 S4), "tied" (inside each
    other's no-effect band) only where every pair of them is shown to lie within ±BAND; where they are linked
    only by such pairs one after another, said to share the rank through them, without "tied" (some pair of
    the chain may be told apart: review rvC15 S3); else said to share the rank without either; with any K of
    that rank that another of it beats (only in a beat cycle: `ranking`'s step 1), and the cycle's wins
    ("(a cycle: K = 1 beats K = 2, …)"; review rr20f S4); then each K below it, decidedly slower than the
    Ks that beat it (really faster than it and not shown within ±BAND: its `beaten_by`), and where it is
    shown within ±BAND of a K ranked above it, why `ranking`'s step 2 refused that tie (review rr19f N2):
    "that would put it beside K = 2 and 4, which beat it" (or above: the Ks that beat it directly, ranked
    no better than that tie would rank it; review rr20f S3), else the K that beats it through a chain (only within
    a beat cycle: outside one, a chain's first beater ranks above the direct one, so the direct ones are named;
    review rr20k N6). How large each difference is, the paired speed-ups before this say; no cause is named
    (notebook 10_cuda_graphs:
    "K = 1, 2 and 4 are tied at rank 1 of its 5 Ks, …; K = 16 is decidedly slower than …")."""
    rows, of = {r["variant"]: r for r in by_k.to_dict("records")}, _of_its(by_k)
    k_of = lambda names: series_text(f"{ks[v]:.0f}" for v in sorted(names, key=lambda v: ks[v]))  # noqa: E731
    top = min(int(r["rank"]) for r in rows.values())
    best = [v for v, r in rows.items() if int(r["rank"]) == top]
    if len(best) == 1:
        said = f"K = {k_of(best)} alone has rank {top}{of}"
    else:
        linked, todo = {best[0]}, [best[0]]  # the Ks of the best rank linked to its first by pairs inside the band
        while todo:
            linked |= (new := {o for o in rows[todo.pop()]["within_band_of"] if o in best} - linked)
            todo += list(new)
        each = all(set(best) - {v} <= set(rows[v]["within_band_of"]) for v in best)
        if each:
            said = (f"K = {k_of(best)} are tied at rank {top}{of}, each pair shown to lie within ±{BAND:.0%} "
                    "(inside each other's no-effect band)")  # fmt: skip
        elif linked == set(best):
            said = (f"K = {k_of(best)} share rank {top}{of} through pairs shown within ±{BAND:.0%}, one pair "
                    "after another")  # fmt: skip
        else:
            said = f"K = {k_of(best)} share rank {top}{of}, not all shown to lie within ±{BAND:.0%} of each other"
        for v in sorted(best, key=lambda v: ks[v]):  # in the rank through the band or a K it beats, yet beaten
            if rows[v]["beaten_by"]:
                said += (f", though K = {k_of([v])} is decidedly slower than K = {k_of(rows[v]['beaten_by'])} "
                         f"(really slower, and not shown within ±{BAND:.0%})")  # fmt: skip
    told = set()  # the beat cycles said (review rr20f S4: the text names a cycle where one occurs)

    def cycle_of(names):
        scc = [v for v in names if rows[v].get("cycle") and rows[v]["cycle"] not in told]
        if not scc:
            return ""
        c = rows[scc[0]]["cycle"]
        told.add(c)
        scc = {v for v in rows if rows[v].get("cycle") == c}
        words = _cycle_text(scc, lambda w, lo: w in rows[lo]["beaten_by"], lambda v: f"K = {ks[v]:.0f}")
        return f" (a cycle: {words})"

    said += cycle_of(sorted(best, key=lambda v: ks[v]))
    below = []
    for v, r in sorted(rows.items(), key=lambda item: (item[1]["rank"], ks[item[0]])):
        if v in best:
            continue
        if not r["beaten_by"]:  # not expected below the best rank (a rank counts the variants that beat it)
            below.append(f"K = {k_of([v])} has rank {int(r['rank'])}{of}")
            continue
        whom = "each" if len(r["beaten_by"]) > 1 else "it"
        said_v = (f"K = {k_of([v])} is decidedly slower than K = {k_of(r['beaten_by'])} (really slower than "
                  f"{whom}, and not shown within ±{BAND:.0%})")  # fmt: skip
        near = [o for o in r["within_band_of"] if o in rows and rows[o]["rank"] < r["rank"]]  # a band pair not joined
        at = min((rows[p]["rank"] for p in near), default=None)  # the rank that tie would give it
        block = [o for o in r["beaten_by"] if o in rows and at is not None and rows[o]["rank"] >= at]  # rr20f S3
        chain = {o: p for o, p in (r.get("beaten_through") or {}).items() if o in rows and at is not None
                 and rows[o]["rank"] >= at}  # fmt: skip
        tied = near and f", not tied with K = {k_of(near)} though shown within ±{BAND:.0%} of " + (
            "them" if near[1:] else "it")
        if near and block:  # review rr19f N2: why it is not tied with a K shown within ±BAND of it
            where = ("beside" if all(rows[o]["rank"] == at for o in block) else
                     "above" if all(rows[o]["rank"] > at for o in block) else "beside or above")  # fmt: skip
            said_v += (f"{tied}: that would put it {where} K = {k_of(block)}, which "
                       f"{'beats' if len(block) == 1 else 'beat'} it")  # fmt: skip
        elif near and chain:  # no K that beats it directly blocks the tie: one through a chain does
            said_v += (f"{tied}: K = {k_of(chain)} {'beats' if len(chain) == 1 else 'beat'} it through K = "
                       f"{k_of(set(chain.values()))}")  # fmt: skip
        below.append(said_v + cycle_of([v]))
    return "In words: " + "; ".join([said, *below]) + "."


OUTCOME_HEADS = {FASTER: "Faster, for real", SLOWER: "Slower, for real", NO_EFFECT: f"No effect (within ±{BAND:.0%})",
                 UNDECIDED: "Undecided (these rounds cannot tell)"}  # fmt: skip
TIED_HEAD = f"Real, but within ±{BAND:.0%} (tied)"
# `findings_text`'s head for a real difference also shown within ±BAND: a tie, as the rankings and the claims read
# it, never under "Faster/Slower, for real" (review rv23B S2)
# what each outcome head says: a comparison's outcome as the first words of a sentence (notebook 02, solution 04)
RULED_OUT_HEADS = {"either": f"Undecided, but a difference beyond ±{BAND:.0%} is ruled out either way",
                   "gain": f"Undecided, but a gain beyond {BAND:.0%} is ruled out",
                   "slowdown": f"Undecided, but a slowdown beyond {BAND:.0%} is ruled out",
                   "": OUTCOME_HEADS[UNDECIDED]}  # fmt: skip
# `findings_text`'s heads for the undecided, split by what their interval rules out (`ruled_out`; review rvB14 S2)


def ruled_out(g: dict) -> str | None:
    """What an undecided comparison's interval rules out, read against the band's edges (the claims read the
    gain side through `tokgen.claims.gain_ruled_out`; claims 3 and 4 the same edges): "gain" where its high
    end lies below ×(1 + BAND) (a gain beyond the band is ruled out), "slowdown" where its low end lies above
    ×1/(1 + BAND), "either" where both, "" where neither (these rounds cannot tell); None for a decided one
    (notebook 07_pipelining: ×0.93–×1.03, "gain")."""
    if g["outcome"] != UNDECIDED:
        return None
    no_gain = g.get("interval_high", math.nan) < 1 + BAND
    no_slowdown = g.get("interval_low", math.nan) > 1 / (1 + BAND)
    return "either" if no_gain and no_slowdown else "gain" if no_gain else "slowdown" if no_slowdown else ""


def findings_text(comparisons) -> str:
    """A run's comparisons (rows of `tokgen.stats.gain`; None skipped) grouped by outcome, each said
    by `speedup_text`: a notebook's computed summary (notebook 02_kv_cache). The undecided are split by
    what their interval rules out (`ruled_out`): a gain beyond the band, a slowdown beyond it, either,
    or nothing, which these rounds cannot tell (review rvB14 S2). A real difference also shown within ±BAND
    (`no_effect`) is tied, as the rankings and the claims read it: it goes under "Real, but within ±5% (tied)",
    after the slower, never under "Faster/Slower, for real" (review rv23B S2)."""
    rows = [g for g in (comparisons.to_dict("records") if isinstance(comparisons, pd.DataFrame) else comparisons) if g]
    if not rows:
        return "- No comparison was measured in this run."
    heads = [((o, None, False), OUTCOME_HEADS[o]) for o in DECIDED] + [((None, None, True), TIED_HEAD)]
    heads += [((NO_EFFECT, None, False), OUTCOME_HEADS[NO_EFFECT])]
    heads += [((UNDECIDED, side, False), head) for side, head in RULED_OUT_HEADS.items()]

    def key(g):  # a real difference shown within ±BAND goes under its own head, whichever its direction
        tied = _tied(g)
        return (None if tied else g["outcome"], ruled_out(g), tied)

    lines = []
    for group, head in heads:
        said = [f"`{g['variant']}` against `{g['vs']}` {speedup_text(g)}" for g in rows if key(g) == group]
        if said:
            lines.append(f"- **{head}:** " + "; ".join(said) + ".")
    return "\n".join(lines)


def sync_shares(results: pd.DataFrame) -> dict[str, float]:
    """The synchronous step's GPU busy share (`kv_static`'s GPU busy / wall time), eager and compiled, over the
    rounds every interleaved variant ran (`tokgen.stats.shared_rounds`), as notebook 07's bound table reads it; NaN
    where not measured (a CPU run) (notebook 07_pipelining)."""
    if results is None or results.empty or "gpu_busy_share" not in results:
        return {"eager": math.nan, "compiled": math.nan}
    busy = shared_rounds(results).set_index("variant")["gpu_busy_share"]
    return {m: float(busy.get(label("kv_static", compiled=m == "compiled"), math.nan)) for m in ("eager", "compiled")}


def _pick(rows, vs: str, variant: str) -> dict | None:
    """The comparison of `variant` against `vs` among `rows` (a frame or a list of `gain` rows), or None."""
    rows = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else rows
    return next((g for g in rows if g and g.get("vs") == vs and g.get("variant") == variant), None)


def _tied(g: dict) -> bool:
    """A real difference also shown within ±BAND (`no_effect`): a tie, as the rankings and the claims read it."""
    shown = g.get("no_effect", False)  # NaN where a frame's other rows carry it and this one does not
    return g["outcome"] in DECIDED and shown == shown and bool(shown)


def _piped_words(g: dict | None, variant: str, vs: str) -> str:
    """Pipelining against the synchronous loop, in its outcome's own words (`pipelining_findings`)."""
    if g is None:
        return f"`{variant}` against the synchronous `{vs}` was not measured"
    x = f"×{g['speedup']:.{_digits(g)}f}"
    if _tied(g):
        side = "faster" if g["outcome"] == FASTER else "slower"
        return (f"pipelining neither paid nor cost beyond ±{BAND:.0%}: `{variant}` was {side} than the synchronous "
                f"`{vs}` for real ({x}), but shown within ±{BAND:.0%} of it (tied)")  # fmt: skip
    if g["outcome"] == FASTER:
        return f"pipelining paid: `{variant}` was faster than the synchronous `{vs}`, for real ({x})"
    if g["outcome"] == SLOWER:
        return f"pipelining did not pay: `{variant}` was slower than the synchronous `{vs}`, for real ({x})"
    if g["outcome"] == NO_EFFECT:
        return (f"pipelining made no difference beyond ±{BAND:.0%}: `{variant}` was shown within ±{BAND:.0%} of the "
                f"synchronous `{vs}` ({x})")  # fmt: skip
    side = ruled_out(g)
    left = {"either": f"; a difference beyond ±{BAND:.0%} is ruled out either way",
            "gain": f"; a gain beyond {BAND:.0%} is ruled out", "slowdown": f"; a slowdown beyond {BAND:.0%} is ruled "
            "out"}.get(side, "")  # fmt: skip
    return f"these rounds do not tell whether `{variant}` was faster or slower than the synchronous `{vs}` ({x}{left})"


def _room_words(g: dict | None, share: float) -> str:
    """Whether skipping the stop check altogether (`g`: no check against the synchronous loop) gained more than
    the band: the most that hiding the check could gain here (`pipelining_findings`)."""
    if g is None:
        return "Skipping the check altogether was not measured, so nothing bounds what hiding it could gain"
    x = f"×{g['speedup']:.{_digits(g)}f}"
    pace = {"host": ", while the host sets the pace", "GPU": ", while the GPU sets the pace"}.get(bound(share), "")
    bounds = f"which bounds what hiding the check could gain here{pace}"
    if g["outcome"] == FASTER and not _tied(g) and g.get("interval_low", math.nan) > 1 + BAND:
        return (f"Skipping the check altogether gained more than {BAND:.0%} ({x}; its {interval_text(g)} lies above "
                f"×{1 + BAND:.2f}): room that hiding the check could take back here{pace}")  # fmt: skip
    if g["outcome"] == NO_EFFECT or _tied(g):
        how = "a real difference, but shown within" if _tied(g) else "no effect, shown within"
        said = (f"gained less than {BAND:.0%}" if g["speedup"] >= 1 else
                f"stayed within ±{BAND:.0%} of the synchronous loop")  # fmt: skip
        return f"Skipping the check altogether {said} ({x}: {how} ±{BAND:.0%}), {bounds}"  # below ×1 no gain: rr23b N3
    if g["outcome"] == FASTER:
        return (f"Skipping the check altogether was faster, for real ({x}), but whether by more than {BAND:.0%} "
                "these rounds do not show")  # fmt: skip
    if g["outcome"] == SLOWER:
        return f"Skipping the check altogether was slower, for real ({x}): it leaves hiding the check nothing to gain"
    if ruled_out(g) in ("gain", "either"):
        return (f"Skipping the check altogether gained no more than {BAND:.0%} (undecided, {x}, but a gain beyond "
                f"{BAND:.0%} is ruled out), {bounds}")  # fmt: skip
    return f"Whether skipping the check altogether gains more than {BAND:.0%}, these rounds cannot tell ({x})"


def _stream_words(g: dict | None, floor: dict | None) -> str:
    """One stream against two (claim 9's second half), and what it says of the no-check gain over the pipelined
    loop (`floor`) (`pipelining_findings`)."""
    if g is None:
        return ""
    x = f"×{g['speedup']:.{_digits(g)}f}"
    if g["outcome"] == FASTER and not _tied(g):
        return f" One stream was faster than two, for real ({x}): the second stream cost something here."
    said = ("slower than two, for real" if g["outcome"] == SLOWER and not _tied(g) else
            f"shown within ±{BAND:.0%} of two" if g["outcome"] == NO_EFFECT or _tied(g) else
            "not told apart from two")  # fmt: skip
    gained = floor is not None and floor["outcome"] == FASTER and not _tied(floor)  # real, beyond ±BAND (rr23b N1)
    so = ", so the no-check generator's gain over the pipelined loop is not shown to come from the second stream" if (
        gained) else ""  # fmt: skip
    return f" One stream was {said} ({x}){so}."


def pipelining_findings(piped, overhead, bound_rows, shares: dict) -> str:
    """What notebook 07's run found, in words, per model (eager, then compiled): pipelining against the
    synchronous loop (`pipelined_static` against `kv_static`, from `piped`), whether skipping the stop check
    altogether (`kv_static_no_check` against `kv_static`, from `bound_rows`) gained more than ±BAND, the most
    hiding the check could gain, and the step's bound from `shares` ({model: the synchronous step's GPU busy
    share}, `sync_shares`), then one stream against two (from `overhead`); each said from its outcome, so it reads
    as right where pipelining pays (a GPU-bound slice) as where it does not (notebook 07_pipelining; review rv23B
    S3)."""
    lines = []
    for model in ("eager", "compiled"):
        c = model == "compiled"
        sync, piped_, no_check = (label(v, compiled=c) for v in ("kv_static", "pipelined_static", "kv_static_no_check"))
        share = shares.get(model, math.nan)
        words = bound_words(share).split(" (")[0]  # "mixed", not "mixed (host and GPU)" in parentheses (rr23b N2)
        near = GPU_BOUND if share == share and share >= (HOST_BOUND + GPU_BOUND) / 2 else HOST_BOUND
        busy = (f"a synchronous step kept the GPU busy {percent_text(share, near)} of its wall time: {words}" if words
                else "the GPU's share of a step was not measured")  # fmt: skip
        step = _piped_words(_pick(piped, sync, piped_), piped_, sync)
        room = _room_words(_pick(bound_rows, sync, no_check), share)
        streams = _stream_words(_pick(overhead, piped_, label("pipelined_static_1stream", compiled=c)),
                                _pick(overhead, piped_, no_check))  # fmt: skip
        lines.append(f"- **{model.capitalize()}** ({busy}): {step}. {room}.{streams}")
    return "\n".join(lines)


def unfollowed_pairs_text(drawn: pd.DataFrame, followed) -> str:
    """Under notebook 07's figure (`drawn`: `tokgen.display.plot_speedups`' rows, variant, vs, speedup, low, high):
    the pairs it draws that the design did not follow (`followed`: `tokgen.claims.followed_pairs`, (against,
    variant, ...) labels), read at the same looks fixed in advance over the rounds both ran, so no verdict rests on
    them; and, where the figure holds the dynamic cache against the static one (eager), which of the two was the
    faster here, from its interval (claim 4's ground); "" where every pair drawn was followed
    (notebook 07_pipelining; review rv23B N4)."""
    pairs = {frozenset(p[:2]) for p in followed}
    rows = drawn.to_dict("records") if isinstance(drawn, pd.DataFrame) else list(drawn)
    loose = [r for r in rows if frozenset((r["vs"], r["variant"])) not in pairs]
    if not loose:
        return ""
    by_vs = {}
    for r in loose:
        by_vs.setdefault(r["vs"], []).append(f"`{r['variant']}`")
    named = "; ".join(f"{', '.join(v)} against `{vs}`" for vs, v in by_vs.items())
    said = (f"The figure also draws pairs the design did not follow: {named}. Their dots and bars are read at the "
            "same looks, fixed in advance, over the rounds both variants ran; no verdict here rests on "
            "them.")  # fmt: skip
    dyn = next((r for r in loose if r["variant"] == label("kv_dynamic") and r["vs"] == label("kv_static")), None)
    if dyn is not None and dyn["low"] == dyn["low"] and dyn["high"] == dyn["high"]:
        x = (f"×{dyn['speedup']:.2f}, {1 - ALPHA:.0%} sequential interval ×{_side_kept(dyn['low'])}–"
             f"×{_side_kept(dyn['high'])}")  # fmt: skip
        # the interval named as every other on the page is (`interval_text`; review rr23b N5)
        which = ("the dynamic cache was the faster eager cache here" if dyn["low"] > 1 else
                 "the static cache was the faster eager cache here" if dyn["high"] < 1 else
                 "these rounds do not tell which eager cache was the faster")  # fmt: skip
        said += f" Eager, `kv_dynamic` against `kv_static` {x}: {which} (claim 4 compares the two caches in notebook "
        said += "04)."
    return said


SLOPE_LIMITS = ((1.1, "near 1: over these N the runtime grows like N, as a cost per step would"),
                (1.5, "nearer 1 than 2: over these N the runtime grows more like N than like the positions' work"),
                (1.9, "nearer 2 than 1: over these N the runtime grows more like the positions' work than like N"),
                (2.1, "near 2: the positions' work dominates"),
                (math.inf, "above 2: some work grows faster than the positions (attention: i positions for each of "
                           "i queries)"))  # fmt: skip
# a slope's readings against the model's two limits, 1 and 2, each up to its bound: near 1 up to 1.1 included,
# nearer 1 below 1.5, nearer 2 from 1.5 below 1.9, near 2 from 1.9 to 2.1 included, above 2 past it


def _slope_bucket(k: float) -> int:
    """Which of SLOPE_LIMITS a slope lies in, read as printed (two decimals: 1.1004 is 1.10)."""
    k = round(k, 2)
    for i, (bound, _) in enumerate(SLOPE_LIMITS):
        if k < bound or (k == bound and i in (0, 3)):  # 1.10 is near 1, 2.10 near 2; 1.50 and 1.90 the upper side's
            return i
    return len(SLOPE_LIMITS) - 1


def slope_reading(low: float, high: float) -> str:
    """Where a fitted log-log slope lies against the model's two limits, 1 and 2, read from its
    bootstrap range `low`–`high`, never from the point estimate alone: a reading only where the whole
    range lies on one side of every bound of SLOPE_LIMITS (e.g. "nearer 2 than 1" only where the
    range lies at or above 1.5), else "its range holds 1.5: these rounds do not decide whether it
    lies nearer 1 than 2 or nearer 2 than 1" (solution of notebook 01). A range that holds only 1.1, or only 1.9,
    lies wholly on one side of 1.5, which answers "towards 1 or 2?": it reads that side, and says what it leaves
    open: "nearer 1 than 2: … (its range lies below 1.5); whether it lies near 1 (at most 1.1), these rounds do not
    decide"
    (review rvA17 S5)."""
    first, last = _slope_bucket(low), _slope_bucket(high)
    if first == last:
        return SLOPE_LIMITS[first][1]
    if (first, last) in ((0, 1), (2, 3)):  # one side of 1.5: the side is decided, only "near" is open
        side, near, limit = (1, 0, 1) if first == 0 else (2, 3, 2)
        where = "below" if first == 0 else "at or above"
        # "near 1" is every slope up to 1.1 (0.8 too), "near 2" 1.9 to 2.1 (review rr17a N6)
        bucket = (f"at most {SLOPE_LIMITS[0][0]:g}" if first == 0 else
                  f"within {SLOPE_LIMITS[3][0] - limit:.1f} of {limit}")  # fmt: skip
        return (f"{SLOPE_LIMITS[side][1]} (its range lies {where} {SLOPE_LIMITS[1][0]:g}); whether it lies "
                f"{SLOPE_LIMITS[near][1].split(':')[0]} ({bucket}), these rounds do not decide")  # fmt: skip
    held = " and ".join(f"{SLOPE_LIMITS[i][0]:g}" for i in range(first, last))
    sides = [SLOPE_LIMITS[i][1].split(":")[0] for i in range(first, last + 1)]
    return (f"its range holds {held}: these rounds do not decide whether it lies "
            f"{', '.join(sides[:-1])} or {sides[-1]}")  # fmt: skip


def trend_text(comparisons: pd.DataFrame, by: str = "max_seqlen", name: str = "N") -> str:
    """How a speed-up moves across `by` (N, B): "grows" or "shrinks" only where every point is
    decided and each interval lies apart from the next one's, in one direction; otherwise what
    each point reads and why no trend is established (notebook 04_static_cache)."""
    rows = comparisons.sort_values(by).to_dict("records")
    each = ", ".join(f"×{g['speedup']:.{_digits(g)}f} at {name} = {g[by]}" for g in rows)
    if len(rows) < 2:
        return f"reads {each}: measured at one {name} only, no trend"
    open_ = [str(g[by]) for g in rows if g["outcome"] == UNDECIDED]
    if open_:
        return f"reads {each}; with {name} = {', '.join(open_)} undecided, no trend across {name} is established"
    pairs = list(zip(rows, rows[1:]))
    if all(b["interval_low"] > a["interval_high"] for a, b in pairs):
        return f"grows across {name} ({each}; each interval above the one before)"
    if all(b["interval_high"] < a["interval_low"] for a, b in pairs):
        return f"shrinks across {name} ({each}; each interval below the one before)"
    return f"reads {each}; neighbouring intervals overlap, so no trend across {name} is established"


def past_the_stop(eos_table: pd.DataFrame, ranks: dict[str, pd.DataFrame] | None = None) -> str:
    """The generators of notebook 07's EOS check that return tokens past the stop, per model, a
    sentence each, beside a ranking that may hold them: with `ranks` ({model: `ranking`'s table of
    that model's variants, "eager" or "compiled"}), the rank each holds there, "rank 2 of the 5 eager
    variants"; "" where none returns tokens past the stop (notebook 07_pipelining)."""
    over = eos_table[eos_table["extra_tokens"] > 0]
    sentences = []
    for name, rows in over.groupby("generator", sort=False):
        models = rows["model"].drop_duplicates().tolist()
        trials = eos_table[eos_table["generator"] == name]
        extra = rows["extra_tokens"]
        count = f"{extra.min()}" if extra.min() == extra.max() else f"{extra.min()}–{extra.max()}"
        said = "every" if len(rows) == len(trials) else f"{len(rows)} of {len(trials)}"
        text = (f"`{name}` ({', '.join(models)}) returns {count} token{'s' if extra.max() > 1 else ''} past the stop "
                f"in {said} trial{'s' if said != 'every' else ''} of the EOS check (section 2)")  # fmt: skip
        held = []
        for model in models:
            table_ = (ranks or {}).get(model)
            found = table_[table_["variant"] == label(name, compiled=model == "compiled")] if table_ is not None else []
            if len(found):
                r, shared = found.iloc[0], ", shared" if found.iloc[0]["tied"] else ""
                held.append(f"rank {int(r['rank'])} of the {len(table_)} {model} variants{shared}")
        if held:
            text += (f": its rank above ({'; '.join(held)}) is that of a generator whose output is wrong, "
                     "fast or not")  # fmt: skip
        else:
            text += ": a rank it holds is that of a generator whose output is wrong, fast or not"
        sentences.append(text + ".")
    return " ".join(sentences)


def rounds_range(runs) -> str:
    """ "12 interleaved rounds", or "10–80 interleaved rounds per variant (…)" for a sequential run,
    whose variants ran on while a comparison of theirs was undecided (notebook 09_summary)."""
    runs = pd.Series(list(runs), dtype=float).dropna()
    lo, hi = int(runs.min()), int(runs.max())
    if lo == hi:
        return f"{lo} interleaved rounds"
    return f"{lo}–{hi} interleaved rounds per variant (more for variants in a comparison still undecided)"


def measured_text(where: str, batch_size, max_seqlen, runs) -> str:
    """Notebook 09_summary: where its ranking's run was measured (`where`: `tokgen.claims.measured_on`'s
    words), the run's batch size and new tokens, and its rounds (`rounds_range` of `runs`), all read
    from notebook 07's rows."""
    return f"Measured on {where}, batch size {int(batch_size)}, {int(max_seqlen)} new tokens, {rounds_range(runs)}."


def extra_reads_text(reads) -> str:
    """`naive`'s and `kv_dynamic`'s `.item()` reads per decode step (`reads`, by generator) and what
    their difference says: the two loops check their stop flag alike and differ only in the cache, so
    reads beyond `kv_dynamic`'s are placed in transformers' uncached forward by elimination, which
    the sentence says, since the profiler does not locate them (notebook 11_sync_audit)."""
    naive, cached = float(reads["naive"]), float(reads["kv_dynamic"])
    text = (f"`naive` reads {naive:.2f} values per decode step with `.item()`, `kv_dynamic` {cached:.2f}. "
            "The two loops check their stop flag alike and differ only in the cache")  # fmt: skip
    if round(naive - cached, 2) <= 0:
        return text + "."
    return (text + f", so the naive loop's {naive - cached:.2f} extra reads per decode step come, by elimination, "
            "from transformers' uncached forward (inferred: the profiler does not locate them).")  # fmt: skip


def copy_wait_text(copies: pd.DataFrame, cuda: bool = True) -> str:
    """What the pinned and pageable `copy_(non_blocking=True)` calls cost (`copies`: one row per
    destination, "pinned" and "pageable", with the call's median, min and max and the median of the queued
    work and the copy, in ms), and whether the pageable call waited for the queued GPU work, by a rule the
    sentence names: every pageable call took longer than every pinned one, and its median at least
    half of that run's queued work and copy (the share is of both: review rv22B N5); an inference from times,
    not a trace (notebook 11_sync_audit)."""
    call, work = copies["copy_call_median_ms"], copies["gpu_work_and_copy_median_ms"]
    low, high = copies["copy_call_min_ms"], copies["copy_call_max_ms"]
    share = call["pageable"] / work["pageable"]
    text = (f"The queued work and the copy took {work['pinned']:.3f} ms (pinned) and {work['pageable']:.3f} ms "
            f"(pageable); the `copy_` call itself kept the CPU {call['pinned']:.3f} ms into pinned memory and "
            f"{call['pageable']:.3f} ms into pageable memory, {share:.0%} of that run's queued work and "
            "copy")  # fmt: skip
    if not cuda:
        return text + ". (On the CPU there is no queue: both return when done.)"
    ranges = (f"pageable {low['pageable']:.3f}–{high['pageable']:.3f} ms, pinned {low['pinned']:.3f}–"
              f"{high['pinned']:.3f} ms")  # fmt: skip
    if low["pageable"] > high["pinned"] and share >= 0.5:
        return (text + f". Every pageable call took longer than every pinned one ({ranges}) and its median at "
                "least half that run's queued work and copy: the pageable copy waited for the GPU (inferred from "
                "these times, not traced).")  # fmt: skip
    return (text + f". The rule this page reads (every pageable call longer than every pinned one, its median at "
            f"least half that run's queued work and copy) does not hold ({ranges}): these times do not show the "
            "pageable copy waiting for the GPU.")  # fmt: skip


CONFINED_RATIO = 1.5  # a slice row is taken as confined where its GPU busy time exceeds this many times the whole GPU's


def confinement_text(row, results: pd.DataFrame) -> str:
    """Where a row of `tokgen.claims.deferred_stop_gains` ran, in words, for notebook 14_deferred_stop's
    summary: "the whole GPU", or "8 SMs" with how its confinement was inferred from `results` (the
    14_deferred_stop table): its synchronous variant's GPU busy time over the whole GPU's, against
    CONFINED_RATIO. An inference, said as one: `slice_escapes` counts the runs that left the slice's
    context, and does not see CUDA graph replays."""
    if str(row["gpu_sms"]) == "all":
        return "the whole GPU"
    where = f"{row['gpu_sms']} SMs"
    if row["confined"] is None or row["confined"] != row["confined"]:
        why = row.get("not_measured")  # a failed or escaped variant: its own words (review rrA13 N7)
        if isinstance(why, str) and why:
            left = "left the slice" in why
            return where + f" (confinement not judged: {'a variant left the slice' if left else 'a variant failed'})"
        return where + " (confinement not measured)"
    busy = results.assign(where=results["gpu_sms"].astype(str)).set_index(["where", "variant"])["gpu_busy_ms"]
    sync = f"generate() {row['cache']} sync"
    ratio = float(busy[(str(row["gpu_sms"]), sync)]) / float(busy[("all", sync)])
    if bool(row["confined"]):
        return where + (f" (taken as confined: its GPU busy time {ratio:.2f}× the whole GPU's, over "
                        f"{CONFINED_RATIO:g}×)")  # fmt: skip
    return where + (f" (**taken as not confined**: its GPU busy time stayed within {CONFINED_RATIO:g}× of the whole "
                    f"GPU's ({ratio:.2f}×), so it is inferred to have run outside the slice; `slice_escapes` does not "
                    "see CUDA graph replays)")  # fmt: skip


def sync_difference_text(audit: pd.DataFrame, cache: str, kinds) -> str:
    """Notebook 14_deferred_stop, section 3: the deferred check's syncs per decode step minus the
    synchronous one's, for `cache` ("dynamic" or "static"), each of `kinds` (columns of `audit`, the
    14_syncs table indexed by variant, with its `counted` column): "dynamic cache, deferred minus sync,
    per decode step: `.item()` reads -1.00, …", or which of the two was not counted."""
    pair = audit.loc[[f"generate() {cache} deferred", f"generate() {cache} sync"]]
    lost = pair.index[pair["counted"] != "yes"].tolist()
    if lost:
        return f"{cache} cache: not compared, {' and '.join(lost)} not counted."
    d = pair.iloc[0][list(kinds)].astype(float) - pair.iloc[1][list(kinds)].astype(float)
    return f"{cache} cache, deferred minus sync, per decode step: " + ", ".join(
        f"{header_of(k)} {signed(d[k], 2)}" for k in kinds)


ISSUE_43089 = {  # transformers issue #43089's own numbers and setup, as its text gives them (notebook 11_sync_audit)
    "calls": 26,  # aten::_local_scalar_dense calls in its profile
    "tokens": 8,  # the tokens generated in that profile, one sequence
    "batch_size": 1,
    "transformers": "5.0.0.dev0",
    "model": "a Llama of 1 layer, hidden size 16, MLP 16, vocabulary 256",
    "call": "a custom StoppingCriteria, a custom LogitsProcessor and min_new_tokens=64",  # its benchmark script's
}


def _params(rows: pd.DataFrame) -> dict:
    """The notebook parameters a Recorder stored with `rows` (their first row's), {} where none."""
    raw = rows["params"].iloc[0] if "params" in rows and len(rows) else None
    return json.loads(raw) if isinstance(raw, str) else {}


def issue_syncs_text(per: pd.DataFrame, issue: dict = ISSUE_43089) -> str:
    """Notebook 11_sync_audit's takeaway: `generate()`'s `.item()` reads (`aten::_local_scalar_dense`,
    what transformers issue #43089 counted) as raw counts over this run's steps (the `tokens` column,
    `max_seqlen`: one token per sequence each, the prefill's step included), beside the issue's own
    count over its tokens of one sequence, as many steps (`issue`, ISSUE_43089), each also per step in
    three decimals; then every way the two setups differ (run length, batch, model,
    transformers, the issue's generate() call), with no cause named: one audit cannot tell which of
    them, if any, moves the count. Then the sync debug mode's flagged syncs, a count of another kind
    (`per`: the 11_sync_audit table indexed by generator, with its `tokens` and raw counts). Neither
    count is said to hold the other: they see different things."""
    dyn, static = per.loc["generate() dynamic"], per.loc["generate() static"]
    params = _params(per)
    steps = int(dyn["tokens"])
    batch = f"{params['BATCH_SIZE']} sequences" if "BATCH_SIZE" in params else "not recorded"
    version = per["transformers"].iloc[0] if "transformers" in per else "not recorded"
    model = f"tokgen's `{params['SIZE']}`" if "SIZE" in params else "not recorded"

    def count(row, what, noun):
        n, steps_ = row[what], row["tokens"]
        return f"{int(n)}{noun} in {int(steps_)} steps ({n / steps_:.3f} per step)"

    reads = "local_scalar_dense"
    flagged = "sync_debug_warnings"
    return (f"* `generate()` here: {count(dyn, reads, ' `.item()` reads')} with the dynamic cache, "
            f"{count(static, reads, '')} with the static cache (`aten::_local_scalar_dense` calls, the count issue "
            f"#43089 made); the issue counted {issue['calls']} in {issue['tokens']} tokens of one sequence, "
            f"{issue['tokens']} steps ({issue['calls'] / issue['tokens']:.3f} per step). The two setups differ in run "
            f"length ({steps} steps here, the prefill's included, each one token per sequence; {issue['tokens']} in "
            "the issue's profile), "
            f"batch ({batch} here, {issue['batch_size']} there), model ({model} here, {issue['model']} there), "
            f"transformers ({version} here, {issue['transformers']} there) and the call (the issue's benchmark "
            f"passes {issue['call']}; this audit passes none); which of these the difference in counts comes from, "
            f"this one audit does not show. The sync debug mode, a count of another kind, flagged "
            f"{count(dyn, flagged, ' syncs')} with the dynamic cache and {count(static, flagged, '')} with the "
            "static cache.")  # fmt: skip


def no_wait_text(per: pd.DataFrame, waits: list[str]) -> str:
    """Notebook 11_sync_audit's takeaway: the generators with no host wait of any kind in `waits`
    (columns of `per`, the 11_sync_audit table indexed by generator), the device-wide syncs that every
    row shows (the counting's own) taken off first and said; "no generator" where every one waits."""
    own = per["device_syncs"].min() if "device_syncs" in per else 0  # the same in every row: the counting's own
    counted = per[waits].assign(device_syncs=per["device_syncs"] - own) if "device_syncs" in waits else per[waits]
    none = counted.index[counted.eq(0).all(axis=1)].tolist()
    beyond = f" (beyond the {own:.0f} device-wide sync every row shows)" if own else ""
    names = ", ".join(f"`{g}`" for g in none) or "no generator"
    return f"* No host wait at all during the run{beyond}: {names}."


def micro_model_text(config, batch_size: int, tokens: int, issue: dict = ISSUE_43089) -> str:
    """The micro model's sizes from its `config` (a GPT2Config; its MLP is GPT-2's 4 × hidden where
    `n_inner` is unset) beside issue #43089's model, and the run's batch and length
    (notebook 11_sync_audit)."""
    mlp = config.n_inner or 4 * config.n_embd
    return (f"Micro model: a GPT-2 of {config.n_layer} layer{'s' * (config.n_layer != 1)}, hidden size "
            f"{config.n_embd}, MLP {mlp}, {config.n_head} attention head{'s' * (config.n_head != 1)}, vocabulary "
            f"{config.vocab_size} (issue #43089: {issue['model']}); B = {batch_size}, {tokens} tokens per run.")


def _micro_wide(micro: pd.DataFrame) -> pd.DataFrame:
    """The 11_micro_overhead rows, one per variant in the order they were defined (first seen in the rows, as the
    notebook's plot (`tokgen.display.plot_dots`) lists them; pivot alone sorts by name: review rv22B N8): ms per
    token on each device, the GPU run's busy share."""
    wide = micro.pivot(index="variant", columns="device", values="ms_per_token").reindex(pd.unique(micro["variant"]))
    if "gpu_busy_share" in micro:
        wide["busy"] = micro[micro["device"] == "cuda"].set_index("variant")["gpu_busy_share"]
    return wide


def micro_table(micro: pd.DataFrame) -> str:
    """Notebook 11_sync_audit's micro-model table: per variant, ms per token (the median of each
    device's own rounds) on the CPU and on the GPU, and where the GPU ran, its busy share of that run
    with `bound_words`' reading (`micro`: the 11_micro_overhead rows)."""
    wide = _micro_wide(micro)
    out = pd.DataFrame({"variant": wide.index})
    for device, name in (("cpu", "CPU"), ("cuda", "GPU")):
        if device in wide:
            out[f"ms per token, {name}"] = wide[device].to_numpy()
    if "busy" in wide and wide["busy"].notna().any():
        out["GPU busy share of the GPU run"] = wide["busy"].to_numpy()
        out["GPU run"] = [bound_words(b) for b in wide["busy"]]
    return table(out, digits=3)


def micro_speed_text(micro: pd.DataFrame) -> str:
    """Notebook 11_sync_audit's takeaway on the micro model: each variant's ms per token on the CPU and
    on the GPU, two separate comparisons (not paired: no ratio, no ranking), with the GPU run's busy
    share, from which `bound_words` reads host- or GPU-bound (`micro`: the 11_micro_overhead rows)."""
    wide = _micro_wide(micro)
    parts = []
    for variant, row in wide.iterrows():
        busy = row.get("busy", math.nan)
        bound_ = f" (GPU busy {busy:.0%} of it: {bound_words(busy).split(' (')[0]})" if busy == busy else ""
        parts.append(f"`{variant}` {row['cpu']:.3f} on the CPU and {row['cuda']:.3f} on the GPU{bound_}")
    return ("* On the micro model, ms per token, the median of each device's own rounds (two separate comparisons, "
            "not paired: no ratio, no ranking): " + ", ".join(parts) + ".")  # fmt: skip


def eos_stop_text(eos_table: pd.DataFrame) -> str:
    """Notebook 07_pipelining, section 2: the EOS id the check chose (its `EOS` parameter) and after how
    many steps the naive generator stops, read from the 07_pipelining_eos rows (`naive_columns` counts
    the prompt's column too): k steps counted from 1, and its last, step k − 1, numbered from 0 as
    notebook 06 numbers steps (review rv19A N4)."""
    eos = _params(eos_table).get("EOS")
    steps = sorted({int(c) - 1 for c in eos_table["naive_columns"]})
    which = f"EOS = token {eos}" if eos is not None else "The EOS token (its id not recorded)"
    after, last = " or ".join(map(str, steps)), " or ".join(str(k - 1) for k in steps)
    return (f"{which}: the naive generator stops after {after} steps: step {last} (counted from 0) is the first "
            "that emits it.")


def _slope_words(s) -> str:
    if s["paired"]:
        return f"{s['slope']:.2f} (IQR {s['slope_q25']:.2f}–{s['slope_q75']:.2f} of {int(s['rounds'])} rounds)"
    return f"{s['slope']:.2f} (not paired)"


def knee_text(slopes: pd.DataFrame, n: int, threshold: float = 0.5) -> str:
    """The solution of notebook 08_batch_sweep, exercise 1: where the step time starts to follow B,
    the first interval whose slope (`slopes`: rows of `tokgen.stats.step_slopes`, by batch_size)
    reaches `threshold`, then every slope from the B before; a paired slope with its IQR and rounds,
    one across separate comparisons said to be not paired (a ratio of medians)."""
    s = slopes.sort_values("batch_size").reset_index(drop=True)
    knee = s[s["slope"] >= threshold]
    found = (f"starts to follow B between B = {knee.iloc[0]['from']} and B = {knee.iloc[0]['batch_size']}, where "
             f"the slope first reaches {threshold:g}: {_slope_words(knee.iloc[0])}" if len(knee)
             else f"does not follow B up to B = {s['batch_size'].iloc[-1]} (no slope reaches {threshold:g})")
    text = (f"At N = {n} the eager step time {found}. Slopes, from one B to the next: "
            + "; ".join(f"B = {r['from']}→{r['batch_size']}: {_slope_words(r)}" for _, r in s.iterrows()) + ".")
    if not s["paired"].all():
        text += (" Not paired: the two batch sizes were timed in separate comparisons (the reference sweep's), and "
                 "the slope is the ratio of their medians on log-log axes, with no IQR.")  # fmt: skip
    return text


def model_size_text(size: str, config, n_params: int, weight_bytes: int, device) -> str:
    """The model's size in one sentence (notebook 00_setup): its layers, heads, hidden size,
    vocabulary and positions (`config`, a GPT2Config), its unique parameters in millions and its fp32
    weights in MB (10⁶ bytes), the device, and the BOS = EOS token."""
    return (f"`{size}`: {config.n_layer} layers, {config.n_head} heads, hidden size {config.n_embd}, "
            f"vocabulary {config.vocab_size}, {config.n_positions} positions; **{n_params / 1e6:.1f} M parameters = "
            f"{weight_bytes / 1e6:.0f} MB** of fp32 weights on `{device}`. BOS = EOS = token {config.eos_token_id}.")


def all_agree_text(generators: int, shape) -> str:
    """The agreement check's outcome on the all-BOS batch (notebook 00_setup), said only once every
    generator passed: how many, and the shape (rows, columns) of the naive generator's tokens."""
    return f"All {generators} generators returned the naive generator's {tuple(shape)} tokens."


def fewest_rounds_text(fewest: int, alpha: float = ALPHA, band: float = BAND) -> str:
    """The fewest rounds a single signed-rank test at `alpha` needs to call a difference real, every
    round agreeing (notebook 00_setup), after the two outcomes' rules (p below `alpha`; "no effect"
    within ±`band`)."""
    return (f"Real: p below the level ({alpha} for a single test); no effect: the speed-up shown to lie within "
            f"±{band:.0%}. With fixed rounds, tested once at {alpha}, {fewest} rounds are the fewest that can make a "
            "difference real, and only if every round agrees.")


def first_look_text(level: float, needed: int) -> str:
    """The rounds the sequential design's first look needs (notebook 00_setup): at its `level`, at
    least `needed` rounds, all agreeing, before any comparison can stop there."""
    return (f"In the sequential design, the first look, at level {level_text(level)}, needs at least {needed} "
            "rounds, all agreeing: with a first look (`RUNS`) of fewer rounds, no comparison can stop there.")


def model_share_text(n_tiny: int, n_small: int, embedding_shape) -> str:
    """The solution of notebook 00_setup, exercise 1: both models' parameter counts, the tiny one's
    share of GPT-2 small's, and the token embedding's (`embedding_shape`) share of the tiny one."""
    embedding = math.prod(embedding_shape)
    return (f"GPT-2 small: {n_small:,} parameters; tiny: {n_tiny:,} ({n_tiny / n_small:.1%} of it), of which "
            f"{embedding / n_tiny:.0%} are the token embedding ({' × '.join(map(str, embedding_shape))}).")


def repeats_text(tokens: list[int], logits_std: float, top_two_gap: float, tied: bool, at: int = 10) -> str:
    """The solution of notebook 00_setup, exercise 2: the distinct tokens of one greedy sequence, the
    position of its first repeat (None: no repeat), then the spread of the logits at step `at` and the
    gap between the best two; then how many steps emit the token they were given, and whether the
    output layer is tied to the embedding (`tied`)."""
    first = next((i for i, t in enumerate(tokens) if t in tokens[:i]), None)
    copies = sum(a == b for a, b in zip(tokens, tokens[1:]))
    return (f"{len(set(tokens))} distinct tokens among {len(tokens)}; the first repeat at position {first}. At step "
            f"{at} the logits have standard deviation {logits_std:.3f}, and the best two differ by "
            f"{top_two_gap:.3f}. {copies} of {len(tokens) - 1} steps emit the token they were given; output layer tied "
            f"to the embedding: {tied}.")


def same_stop_text(eos: int, steps: int, checked: int, registry: int) -> str:
    """The solution of notebook 00_setup, exercise 3, said once every checked generator stopped where
    the naive one did: the EOS token, the step that first emits it, numbered from 0 as `eos_stop_text` and
    `tokgen.agreement`'s failure lines number steps (`steps`: the naive generator's steps, its columns less the
    prompt's; its last, step steps − 1, emits EOS: review rv22A N3), and how many of the registry's were checked
    (those with an EOS check) besides `generate()`."""
    return (f"EOS = {eos} first appears at step {steps - 1} (counted from 0: the naive generator stops after {steps} "
            f"steps); all {checked + 1} generators ({checked} of the registry's {registry}, and `generate()`) stop "
            "there.")


def variants_text(eager: int, compiled: int, comparisons: int) -> str:
    """How many variants a comparison runs, eager and compiled, and how many comparisons it needs
    (notebook 07_pipelining)."""
    return (f"{eager + compiled} variants: {eager} eager, {compiled} compiled; "
            f"{comparisons} comparison{'s' if comparisons != 1 else ''}.")


def rows_from_text(notebook: str, run: str) -> str:
    """Which run of another notebook the rows read beside this one come from (notebook 07_pipelining),
    `run` as `tokgen.results.run_of` says it."""
    return f"Notebook {notebook}'s rows: its run of {run}."


def unsynced_runs_text(late: list[int], naive_steps: int, batch_size: int, max_seqlen: int, device: str) -> str:
    """The solution of notebook 07_pipelining, exercise 1: how many of the runs without the wait
    returned columns past the naive generator's stop (`late`: each run's extra columns), and their
    range over all runs, where any did (none: no range); on a CPU, why none can."""
    extra = sum(x > 0 for x in late)
    span = f" (from {min(late)} to {max(late)})" if extra else ""
    text = (f"B = {batch_size}, N = {max_seqlen}, compiled, on {device}: the naive generator stops after "
            f"{naive_steps} steps; without the wait, {extra} of {len(late)} runs returned extra columns{span}.")
    if device != "cuda":
        text += " On a CPU the copy is done before `copy_` returns, so the flag is never stale: run this on a GPU."
    return text


def race_text(late: list[int], busy_share: float | None = None, timed: int | None = None) -> str:
    """The solution of notebook 07_pipelining, exercise 1: whether the race happened in the runs
    without the wait (`late`: each run's extra columns) and by how many steps; where it did not, the
    GPU's busy share of a run (one profiled run's busy time over the median of `timed` timed runs),
    with no cause named for the GPU never falling behind, and where notebook 06 measures whether GPU work was
    still queued at the flag's copy (reviews rvB14 S8, rvB15 S6)."""
    raced = [x for x in late if x > 0]
    if raced:
        return (f"The race happened: {len(raced)} of {len(late)} runs read the flag before its copy had landed and "
                f"kept {min(raced)} to {max(raced)} steps past the stop. Without the wait the output depends on "
                "timing.")
    return (f"The race is possible but not observed here: at the stop step, in each of {len(late)} runs the copy "
            "had landed before the CPU, one step later, read the flag (a stale flag at an earlier step reads False "
            f"as the fresh one does, so the runs cannot show it). The GPU was busy {busy_share:.0%} of a run (one "
            f"profiled run's busy time over the median of {timed} timed runs); why the GPU never fell a step behind "
            "in these runs is not measured here, but notebook 06 measures, step by step under the profiler, whether "
            "the GPU still had work queued when the host issued the stop flag's copy (its summary says in how many "
            "steps). A run where it falls a step behind would race, and the wait is what keeps the output right "
            "then.")  # fmt: skip


def copy_return_text(where: str, returned_after_ms: float, queued_ms: float | None = None) -> str:
    """The solution of notebook 07_pipelining, exercise 2: how long `copy_(non_blocking=True)` into
    `where` ("pinned", "pageable") memory kept the host, and how much GPU work was queued ahead of it
    (`queued_ms`, timed by CUDA events around the sleep; None or NaN where not recorded), each time one
    call (review rv23B N1)."""
    if queued_ms is None or queued_ms != queued_ms:
        said = f"{where}: `copy_(non_blocking=True)` returned after {returned_after_ms:.2f} ms"
        return f"{said}, the GPU busy (one call)."
    return (f"{where}: `copy_(non_blocking=True)` returned after {returned_after_ms:.2f} ms, with {queued_ms:.2f} ms "
            "of GPU work queued ahead of it (CUDA events around the sleep; one call each).")  # fmt: skip


def wasted_steps_text(k: int, computed: int, kept: int) -> str:
    """The solution of notebook 07_pipelining, exercise 3: the steps a graph generator checking every
    `k` steps computed and returned, the difference, and the bound 2K − 1."""
    return (f"K = {k}: {computed} steps computed, {kept} returned: {computed - kept} wasted "
            f"(at most 2K − 1 = {2 * k - 1}).")
