"""Notebook 13's regime map: pipelining's and skipping the check's paired speed-ups over the
synchronous generator per place, batch size and model, beside the GPU's share of a step, and
what the map and its bracketing slices say in words.

Introduced in notebook 13_regimes (its figure: `tokgen.display.plot_regime_map`).
"""

import json

import pandas as pd

from .claims import usable
from .gpu_slice import L40S_GBS, bracketing
from .registry import label
from .results import MissingRows, load, why_not_usable
from .stats import BAND, FASTER, UNDECIDED, gain, shared_rounds
from .voice import count_text, speedup_text


def bracket_sentence(slices: pd.DataFrame, whole_gbs: float, total_sms: int) -> str:
    """Notebook 13's bracketing slices (column `brackets`) in words, and whether a stream made inside
    one escapes it (notebook 13_regimes)."""
    pair = slices[slices["brackets"].astype(bool)].sort_values("copy_gbs")
    low, high = pair.iloc[0], pair.iloc[-1]
    return (
        f"The whole GPU copies at {whole_gbs:,.0f} GB/s (measured). The L40S's datasheet gives {L40S_GBS} GB/s, a "
        f"peak, not a measured copy, so the comparison is approximate; it lies between the slice of "
        f"**{low['gpu_sms']} SMs "
        f"({low['copy_gbs']:,.0f} GB/s)** and the slice of **{high['gpu_sms']} SMs ({high['copy_gbs']:,.0f} GB/s)**, "
        f"{low['gpu_sms'] / total_sms:.0%} and {high['gpu_sms'] / total_sms:.0%} of this GPU's {total_sms} SMs: "
        f"`./run_all.sh --slice` runs notebooks 01–08 in both. Their side streams copy at "
        f"{low['side_stream_gbs']:,.0f} and {high['side_stream_gbs']:,.0f} GB/s (confined), while a "
        f"`torch.cuda.Stream()` made inside them copies at {low['escaped_stream_gbs']:,.0f} and "
        f"{high['escaped_stream_gbs']:,.0f} GB/s: {_escape(pair)}."
    )


def no_bracket_sentence(slices: pd.DataFrame, whole_gbs: float | None, target: float = L40S_GBS) -> str:
    """Why no two of notebook 13's slices (`slices`: gpu_sms, copy_gbs) bracket the L40S's datasheet
    bandwidth: the whole GPU copies below it (a slower GPU: no slice can), or every slice measured lies
    on one side of it (a smaller or larger slice would); the slices then stand for no L40S (notebook
    13_regimes)."""
    measured = ", ".join(f"{int(r.gpu_sms)} SMs {r.copy_gbs:,.0f}" for r in slices.sort_values("copy_gbs").itertuples())
    measured = f" (slices measured, GB/s: {measured})" if measured else " (no slice measured)"
    if whole_gbs is not None and whole_gbs == whole_gbs and whole_gbs < target:
        why = (f"the whole GPU copies at {whole_gbs:,.0f} GB/s (measured), below the L40S's {target:,.0f} GB/s "
               "(datasheet): a slice of it copies slower still, so no slice brackets the L40S")
    elif len(slices) and (slices["copy_gbs"] >= target).all():
        why = f"every slice measured copies at {target:,.0f} GB/s or more: a smaller slice would lie below it"
    elif len(slices) and (slices["copy_gbs"] < target).all():
        why = f"every slice measured copies below {target:,.0f} GB/s: a larger slice would lie above it"
    else:
        why = "too few slice sizes were measured"
    return (f"No two slices bracket the L40S's datasheet bandwidth ({target:,.0f} GB/s): {why}{measured}. The "
            "slices below are not L40S-class, and nothing measured here stands for a GPU of the L40S's bandwidth.")


def slices_note(data_dir) -> str:
    """Notebook 09's slice columns against the L40S, from notebook 13's data/13_slices.csv: the two
    slices that bracket its datasheet bandwidth, or why none do (`no_bracket_sentence`) (notebook
    09_summary)."""
    try:
        slices = load("13_slices", data_dir)
    except MissingRows:
        return "Notebook 13 recorded no slice bandwidths here: no slice column is known to bracket the L40S."
    slices = slices.drop_duplicates("gpu_sms", keep="last")
    gbs = dict(zip(slices["gpu_sms"].astype(int), slices["copy_gbs"]))
    try:
        low, high = bracketing(gbs)
    except ValueError:
        params = slices["params"].iloc[-1] if "params" in slices else None
        whole = json.loads(params).get("WHOLE_GPU_GBS") if isinstance(params, str) else None
        return no_bracket_sentence(slices, whole)
    return (f"The slices of {low} SMs ({gbs[low]:,.0f} GB/s) and {high} SMs ({gbs[high]:,.0f} GB/s) bracket the "
            f"L40S's datasheet bandwidth, {L40S_GBS} GB/s (notebook 13's measured copies).")


L40S_TF32 = 183.0  # TFLOP/s of dense TF32: the L40S's datasheet figure (not measured here)


def compute_slice(tflops: float | None, total_sms: int, target: float = L40S_TF32, step: int = 8) -> tuple:
    """The slice whose share of this GPU's measured TF32 rate (`tflops`: notebook 12's `matmul_tflops`
    on the whole GPU of `total_sms` SMs; None or NaN: not measured) matches the L40S's datasheet rate,
    rounded to `step` SMs, and a sentence that says how it was found; the SM count is None where the
    rate was not measured or the whole GPU falls short of the L40S (solution of notebook 13_regimes)."""
    if tflops is None or tflops != tflops:
        return None, ("Notebook 12 recorded no matrix-product rate for this GPU (`matmul_tflops` in "
                      "data/12_bandwidth.csv): not measured, so no slice is sized to the L40S's compute here; "
                      "run notebook 12 on this GPU first.")  # fmt: skip
    per_sm = tflops / total_sms
    if tflops < target:
        return None, (f"This GPU's matrix products reach {tflops:,.0f} TFLOP/s (notebook 12, measured, all "
                      f"{total_sms} SMs), below the L40S's {target:,.0f} (datasheet): no slice of it matches the "
                      "L40S's compute.")  # fmt: skip
    sms = min(max(step, round(target / per_sm / step) * step), total_sms)
    return sms, (f"{per_sm:.2f} TFLOP/s per SM (notebook 12's measured {tflops:,.0f} over this GPU's {total_sms} "
                 f"SMs): the L40S's {target:,.0f} TFLOP/s (datasheet) is about **{sms} SMs**, in steps of {step}. "
                 "A datasheet peak set against a measured rate: the count is, if anything, too large.")  # fmt: skip


def _escape(pair: pd.DataFrame) -> str:
    """Whether a stream made inside a slice copied well beyond the slice's bandwidth (notebook 13_regimes)."""
    escaped = pair["escaped_stream_gbs"] > 1.5 * pair["copy_gbs"]
    if escaped.all():
        return "it escapes to the whole GPU"
    return "it stays in the slice" if not escaped.any() else "it escapes from one of them only"


MAP_COLUMNS = ["where", "gpu_sms", "batch_size", "max_seqlen", "compiled", "hidden_by", "gpu_share", "ms_per_step",
               "variant", "vs", "speedup", "speedup_q25", "speedup_q75", "p_value", "rounds", "real", "no_effect",
               "outcome", "interval_low", "interval_high"]  # regime_gains' columns where no point was measured


def regime_gains(runs: pd.DataFrame) -> pd.DataFrame:
    """Notebook 13's map (data/13_regimes.csv): per point (place × batch size × eager/compiled) the
    gain of `pipelined_static` and of `kv_static_no_check` over `kv_static`, beside the latter's GPU
    share and ms per step (over the rounds every interleaved variant ran: `shared_rounds`); the
    whole GPU first, then slices by size. A point whose synchronous generator, or a comparison whose
    variant, has no usable row (failed, out of memory, or its timed runs left the slice: `usable`)
    is left off the map and said in `attrs["not_measured"]`, one line each, which `regime_findings`
    prints; no point at all: an empty frame of `MAP_COLUMNS` (notebook 13_regimes)."""
    rows, notes = [], []
    measured = shared_rounds(usable(runs))
    for (point, compiled), group in runs.groupby(["map_point", "compiled"]) if len(runs) else ():
        ok = measured[(measured["map_point"] == point) & (measured["compiled"] == compiled)]
        base, how = label("kv_static", compiled=compiled), "compiled" if compiled else "eager"
        if base not in set(ok["variant"]):
            notes.append(f"{point}, {how}: the synchronous generator (`{base}`) not measured "
                         f"({why_not_usable(group, base)}), so neither comparison there")  # fmt: skip
            continue
        sync = ok.set_index("variant").loc[base]
        sms = str(sync["gpu_sms"])
        where = "whole GPU" if sms == "all" else f"{sms} SMs"
        if str(sync.get("gpu", "")).startswith("none"):  # a smoke run's rows
            where = "CPU"
        for new in ("pipelined_static", "kv_static_no_check"):
            g = gain(ok, base, label(new, compiled=compiled))
            if g is None:
                notes.append(f"{point}, {how}: `{label(new, compiled=compiled)}` not measured "
                             f"({why_not_usable(group, label(new, compiled=compiled))})")  # fmt: skip
                continue
            rows.append({"where": where, "gpu_sms": 10**6 if sms == "all" else int(float(sms)),
                         "batch_size": int(sync["batch_size"]),
                         "max_seqlen": int(sync["max_seqlen"]) if pd.notna(sync.get("max_seqlen")) else None,
                         "compiled": bool(compiled), "hidden_by": new,
                         "gpu_share": sync["gpu_busy_share"], "ms_per_step": sync["ms_per_step"], **g})  # fmt: skip
    order = ["gpu_sms", "batch_size", "compiled", "hidden_by"]
    out = (pd.DataFrame(rows).sort_values(order, ascending=[False, True, True, True], ignore_index=True) if rows
           else pd.DataFrame(columns=MAP_COLUMNS))  # fmt: skip
    out.attrs["not_measured"] = notes
    return out


def map_scope(points: pd.DataFrame) -> str:
    """What notebook 13's points cover, said before any count of them (notebook 13_regimes)."""
    ns = sorted({int(n) for n in points.get("max_seqlen", pd.Series(dtype=int)).dropna()})
    length = f"at N = {', '.join(map(str, ns))}, " if ns else ""
    return f"{length}each point judged alone at p < 0.05 (no correction for the {len(points)} tests)"


def within_band(points: pd.DataFrame) -> str:
    """How many real gains among `points` are also shown within ±BAND, or "" (notebook 13_regimes)."""
    small = int(((points["outcome"] == FASTER) & ~paid(points)).sum())
    return f" ({small} of the faster by less than {BAND:.0%}, shown)" if small else ""


def paid(points: pd.DataFrame) -> pd.Series:
    """Where a point's gain "paid": real (faster) and not shown within ±BAND (a gain shown within it is a
    tie, as in `tokgen.claims`); not necessarily shown beyond the band either, so the sentences say "not shown
    within", never "beyond" (review rvC12 M1) (notebook 13_regimes)."""
    shown = points["no_effect"].fillna(False).astype(bool) if "no_effect" in points else False
    return (points["outcome"] == FASTER) & ~shown


def gains_range(pays: pd.DataFrame) -> str:
    """The point speed-ups of the real gains `pays` as a range, "; at the 5 points where it paid, point
    speed-ups ×1.04 to ×1.16 (…not ranked)", or "" for one point: each point is its own comparison, so
    their medians are not ranked against each other (no "largest") (notebook 13_regimes)."""
    if len(pays) < 2:
        return ""
    low, high = pays["speedup"].min(), pays["speedup"].max()
    span = f"×{low:.2f} at each" if f"{low:.2f}" == f"{high:.2f}" else f"×{low:.2f} to ×{high:.2f}"
    return (f"; point speed-ups {span} of the {len(pays)} points where it paid (each point its own comparison, "
            "so these medians are not ranked)")


def _share_text(share) -> str:
    """A point's GPU share, "0.43", or "not measured" (NaN: a lost profiler session, or a CPU run) (notebook
    13_regimes)."""
    return f"{share:.2f}" if share == share else "not measured"


def _shares_text(piped: pd.DataFrame) -> str:
    """The span of the map's GPU shares, those not measured counted, and why none was where none was: "(no GPU)"
    for a CPU run, a lost profiler session on a GPU (notebook 13_regimes)."""
    known = piped["gpu_share"].dropna()
    if len(known):
        lost = len(piped) - len(known)
        return (f"GPU shares {known.min():.2f}–{known.max():.2f}"
                + (f" ({lost} of the {len(piped)} points' GPU share not measured)" if lost else ""))  # fmt: skip
    if (piped["where"] == "CPU").all():
        return "GPU share not measured (no GPU)"
    return "GPU share not measured (the profiler recorded no GPU busy time: a lost session)"


def regime_findings(regimes: pd.DataFrame, article_batch: int = 32, bracket=()) -> str:
    """Notebook 13's map on pipelining, from `regime_gains`: where it paid, lost or had no effect, and
    the article's batch size in each slice (`bracket`: the bracketing SM counts; empty where none brackets
    the L40S), a GPU share not measured said so; then each point or comparison `regime_gains` could not
    measure (its `attrs["not_measured"]`) (notebook 13_regimes)."""
    missing = [f"- Not on this map: {note}." for note in regimes.attrs.get("not_measured", [])]
    piped = regimes[regimes["hidden_by"] == "pipelined_static"].sort_values("gpu_share")
    if piped.empty:
        return "\n".join(["- Pipelining against the check at every step: no point of this map was measured, so the map "
                          "says nothing of where it pays.", *missing])  # fmt: skip
    count = piped["outcome"].value_counts()
    pays = piped[paid(piped)]
    lines = [f"- Pipelining against the check at every step, {map_scope(piped)}, {_shares_text(piped)}, "
             f"{count_text(piped['outcome'], 'points')}{within_band(piped)}."]
    shared = pays[pays["gpu_share"].notna()]
    if len(shared):
        low = shared.iloc[0]
        lost = len(pays) - len(shared)
        lost = f"; {lost} more where its GPU share was not measured" if lost else ""
        lines.append(
            f"- The lowest GPU share at which it paid (faster for real, not shown within ±{BAND:.0%}): "
            f"{low['gpu_share']:.2f} ({low['where']}, B={low['batch_size']}, "
            f"{'compiled' if low['compiled'] else 'eager'}: {speedup_text(low)}){lost}{gains_range(pays)}."
        )
    elif len(pays):
        lines.append(f"- It paid (faster for real, not shown within ±{BAND:.0%}) at {len(pays)} point(s), whose GPU "
                     f"share was not measured{gains_range(pays)}.")  # fmt: skip
    else:
        undecided = count.get(UNDECIDED, 0)
        lines.append(
            f"- It was faster for real (p < 0.05), and not shown within ±{BAND:.0%}, at no point of this map"
            + (f"; {undecided} point(s) stay undecided." if undecided else ".")
        )
    if piped["gpu_share"].notna().any():
        host = piped[piped["gpu_share"] < 0.5]
        line = (f"- Host-bound points (GPU share < 0.5): {len(host)}, of which pipelining paid (faster for real, not "
                f"shown within ±{BAND:.0%}) at ")
        line += f"{int(paid(host).sum())}"
        skipped = regimes[(regimes["hidden_by"] == "kv_static_no_check") & (regimes["gpu_share"] < 0.5)]
        if len(skipped):  # what skipping the check altogether gained there: the most hiding it could gain
            line += (f"; skipping the check altogether was faster (real, not shown within ±{BAND:.0%}) at "
                     f"{int(paid(skipped).sum())} of {len(skipped)}")  # fmt: skip
        lost = int(piped["gpu_share"].isna().sum())
        line += f"; {lost} more point(s) whose GPU share was not measured, so not counted as either" if lost else ""
        lines.append(line + ".")
    bracketing = {f"{n} SMs" for n in bracket}
    said = False
    for where in [w for w in piped["where"].unique() if w.endswith(" SMs")]:
        kind = ("one of the two that bracket the L40S" if where in bracketing else "not a bracketing slice" if bracket
                else "no slice of this map brackets the L40S on this GPU")  # fmt: skip
        at = piped[(piped["where"] == where) & (piped["batch_size"] == article_batch)]
        if at.empty:
            lines.append(f"- The article's B = {article_batch} is not on this map in the {where} slice ({kind}).")
        for r in at.itertuples():
            lines.append(
                f"- The article's B = {article_batch} in the {r.where} slice ({kind}), "
                f"{'compiled' if r.compiled else 'eager'}: "
                f"GPU share {_share_text(r.gpu_share)}, pipelined {speedup_text(r._asdict())}."
            )
            said = True
    if said:  # the map has its own length and rounds: a verdict here may differ from claim 7's
        lines.append(
            "- Those points ran at this notebook's `MAX_SEQLEN` and `RUNS`, not notebook 07's; claim 7 in "
            "notebook 09 reads 07's run, so its verdicts may differ from these."
        )
    return "\n".join(lines + missing)
