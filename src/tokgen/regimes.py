"""Notebook 13's regime map: pipelining's and skipping the check's paired speed-ups over the
synchronous generator per place, batch size and model, beside the GPU's share of a step, and
what the map and its bracketing slices say in words.

Introduced in notebook 13_regimes (its figure: `tokgen.display.plot_regime_map`).
"""

import pandas as pd

from .claims import usable
from .gpu_slice import L40S_GBS
from .registry import label
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


def _escape(pair: pd.DataFrame) -> str:
    """Whether a stream made inside a slice copied well beyond the slice's bandwidth (notebook 13_regimes)."""
    escaped = pair["escaped_stream_gbs"] > 1.5 * pair["copy_gbs"]
    if escaped.all():
        return "it escapes to the whole GPU"
    return "it stays in the slice" if not escaped.any() else "it escapes from one of them only"


def regime_gains(runs: pd.DataFrame) -> pd.DataFrame:
    """Notebook 13's map (data/13_regimes.csv): per point (place × batch size × eager/compiled) the
    gain of `pipelined_static` and of `kv_static_no_check` over `kv_static`, beside the latter's GPU
    share and ms per step (over the rounds every variant of its comparison ran: `shared_rounds`); the
    whole GPU first, then slices by size (notebook 13_regimes)."""
    rows, runs = [], shared_rounds(usable(runs))
    for (_, compiled), group in runs.groupby(["map_point", "compiled"]):
        base = label("kv_static", compiled=compiled)
        sync = group.set_index("variant").loc[base]
        sms = str(sync["gpu_sms"])
        where = "whole GPU" if sms == "all" else f"{sms} SMs"
        if str(sync.get("gpu", "")).startswith("none"):  # a smoke run's rows
            where = "CPU"
        for new in ("pipelined_static", "kv_static_no_check"):
            g = gain(group, base, label(new, compiled=compiled))
            if g is not None:
                rows.append({"where": where, "gpu_sms": 10**6 if sms == "all" else int(float(sms)),
                             "batch_size": int(sync["batch_size"]),
                             "max_seqlen": int(sync["max_seqlen"]) if pd.notna(sync.get("max_seqlen")) else None,
                             "compiled": bool(compiled), "hidden_by": new,
                             "gpu_share": sync["gpu_busy_share"], "ms_per_step": sync["ms_per_step"], **g})  # fmt: skip
    order = ["gpu_sms", "batch_size", "compiled", "hidden_by"]
    return pd.DataFrame(rows).sort_values(order, ascending=[False, True, True, True], ignore_index=True)


def map_scope(points: pd.DataFrame) -> str:
    """What notebook 13's points cover, said before any count of them (notebook 13_regimes)."""
    ns = sorted({int(n) for n in points.get("max_seqlen", pd.Series(dtype=int)).dropna()})
    length = f"at N = {', '.join(map(str, ns))}, " if ns else ""
    return f"{length}each point judged alone at p < 0.05 (no correction for the {len(points)} tests)"


def within_band(points: pd.DataFrame) -> str:
    """How many real gains among `points` are also shown within ±BAND, or "" (notebook 13_regimes)."""
    shown = points["no_effect"].fillna(False).astype(bool) if "no_effect" in points else False
    small = int(((points["outcome"] == FASTER) & shown).sum())
    return f" ({small} of the faster by less than {BAND:.0%}, shown)" if small else ""


def regime_findings(regimes: pd.DataFrame, article_batch: int = 32, bracket=()) -> str:
    """Notebook 13's map on pipelining, from `regime_gains`: where it paid, lost or had no effect, and
    the article's batch size in each slice (`bracket`: the bracketing SM counts) (notebook 13_regimes)."""
    piped = regimes[regimes["hidden_by"] == "pipelined_static"].sort_values("gpu_share")
    count = piped["outcome"].value_counts()
    pays = piped[piped["outcome"] == FASTER]
    shares = (
        f"GPU shares {piped['gpu_share'].min():.2f}–{piped['gpu_share'].max():.2f}"
        if piped["gpu_share"].notna().any()
        else "GPU share not measured (no GPU)"
    )
    lines = [f"- Pipelining against the check at every step, {map_scope(piped)}, {shares}, "
             f"{count_text(piped['outcome'], 'points')}{within_band(piped)}."]
    if len(pays):
        low = pays.iloc[0]
        lines.append(
            f"- The lowest GPU share at which it paid: {low['gpu_share']:.2f} ({low['where']}, B={low['batch_size']}, "
            f"{'compiled' if low['compiled'] else 'eager'}: {speedup_text(low)}); the largest speed-up "
            f"×{pays['speedup'].max():.2f}."
        )
    else:
        undecided = count.get(UNDECIDED, 0)
        lines.append(
            "- It was faster (p < 0.05) at no point of this map"
            + (f"; {undecided} point(s) stay undecided." if undecided else ".")
        )
    if piped["gpu_share"].notna().any():
        host = piped[piped["gpu_share"] < 0.5]
        paid = int((host["outcome"] == FASTER).sum())
        line = f"- Host-bound points (GPU share < 0.5): {len(host)}, of which pipelining paid at {paid}"
        skipped = regimes[(regimes["hidden_by"] == "kv_static_no_check") & (regimes["gpu_share"] < 0.5)]
        if len(skipped):  # what skipping the check altogether gained there: the most hiding it could gain
            line += (f"; skipping the check altogether was faster (real) at "
                     f"{int((skipped['outcome'] == FASTER).sum())} of {len(skipped)}")  # fmt: skip
        lines.append(line + ".")
    bracketing = {f"{n} SMs" for n in bracket}
    said = False
    for where in [w for w in piped["where"].unique() if w.endswith(" SMs")]:
        kind = "one of the two that bracket the L40S" if where in bracketing else "not a bracketing slice"
        at = piped[(piped["where"] == where) & (piped["batch_size"] == article_batch)]
        if at.empty:
            lines.append(f"- The article's B = {article_batch} is not on this map in the {where} slice ({kind}).")
        for r in at.itertuples():
            lines.append(
                f"- The article's B = {article_batch} in the {r.where} slice ({kind}), "
                f"{'compiled' if r.compiled else 'eager'}: "
                f"GPU share {r.gpu_share:.2f}, pipelined {speedup_text(r._asdict())}."
            )
            said = True
    if said:  # the map has its own length and rounds: a verdict here may differ from claim 7's
        lines.append(
            "- Those points ran at this notebook's `MAX_SEQLEN` and `RUNS`, not notebook 07's; claim 7 in "
            "notebook 09 reads 07's run, so its verdicts may differ from these."
        )
    return "\n".join(lines)
