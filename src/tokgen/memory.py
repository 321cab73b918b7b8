"""GPU memory: peaks and fragmentation of a run, and the allocator's expandable segments.

Peaks are introduced in notebook 01_naive, the allocator switch in notebook 03_expandable_segments.
"""

import gc

import pandas as pd
import torch

GB = 1e9


def reset_memory(device: torch.device) -> None:
    """As the article: release cached blocks and reset the peaks before each run, and the
    allocator's counts of retries and out-of-memory errors with them (notebook 01_naive)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        torch.cuda.reset_accumulated_memory_stats(device)
        torch.cuda.synchronize(device)


def memory_peaks(device: torch.device) -> dict:
    """Peak allocated and reserved memory since the last reset; fragmentation = reserved - allocated;
    the GPU's whole memory beside them; and how often the caching allocator found no room since
    then: `num_alloc_retries`, the times a cudaMalloc failed and it freed its cached blocks to try
    again, and `num_ooms`, the times that failed too; and how often it reserved memory from the
    device and gave it back (`num_device_alloc`, `num_device_free`: its cudaMalloc and cudaFree
    calls; after `reset_memory`'s empty cache, a run reserves all it uses again) (notebook 01_naive).
    Empty values on the CPU."""
    if device.type != "cuda":
        keys = ("peak_allocated_gb", "peak_reserved_gb", "frag_gb", "frag_pct", "num_alloc_retries", "num_ooms",
                "num_device_alloc", "num_device_free")  # fmt: skip
        return dict.fromkeys(keys)
    stats = torch.cuda.memory_stats(device)
    total = torch.cuda.get_device_properties(device).total_memory
    allocated = stats.get("allocated_bytes.all.peak", 0)
    reserved = stats.get("reserved_bytes.all.peak", 0)
    return {
        "peak_allocated_gb": allocated / GB,
        "peak_reserved_gb": reserved / GB,
        "frag_gb": (reserved - allocated) / GB,
        "frag_pct": 100 * (reserved - allocated) / reserved if reserved else 0.0,
        "device_memory_gb": total / GB,
        # > 0: the device's memory ran out at least once, so reserved could grow no further
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
        "num_ooms": stats.get("num_ooms", 0),
        "num_device_alloc": stats.get("num_device_alloc", 0),  # cudaMalloc calls since the reset
        "num_device_free": stats.get("num_device_free", 0),  # cudaFree calls since the reset
    }


def held_gb(device) -> tuple[float, float] | None:
    """What the caching allocator holds now, (allocated, reserved) in GB, after a garbage collection, a synchronize
    and releasing its cached blocks (`torch.cuda.empty_cache`), so that reserved is the segments of live tensors and
    of CUDA graphs' private pools; None off CUDA (notebook 10_cuda_graphs: what a decoder keeps)."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    gc.collect()
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    return torch.cuda.memory_allocated(device) / GB, torch.cuda.memory_reserved(device) / GB


def _largest_kept(rows: pd.DataFrame, largest: int) -> str:
    """`resident_text`'s sentence on what each variant's first call left behind (`resident_gb`, and
    `resident_reserved_gb` where recorded), the `largest` first; "" where no row recorded it. A first call that
    freed more than it kept (what an earlier variant held let go: a negative reading) is named as keeping 0 GB
    (review rr22b N2). The total is the readings' signed sum: each "before" is read just after the previous "after",
    so it is what the decoders hold together after the last first call; where some first call released memory, how
    much is said beside it (review rr22c N3: the clipped sum overstated the total); a net release reads as less than
    before the first was built, never as a negative size (review rr22d N2). Variants left out that keep what the
    last one named keeps (to the 2 decimals shown) are counted after it, "and 6 more at 0.64 GB": which of a tie is
    named is arbitrary (review rv23C N1)."""
    if "resident_gb" not in rows:  # a table recorded before the column (review rr21d N6): nothing measured to name
        return ""
    signed = rows.assign(gb=pd.to_numeric(rows["resident_gb"], errors="coerce")).dropna(subset=["gb"])
    if signed.empty:
        return ""
    signed = signed.assign(res=pd.to_numeric(
        signed.get("resident_reserved_gb", pd.Series(float("nan"), index=signed.index)), errors="coerce"))  # fmt: skip
    kept = signed.assign(gb=signed["gb"].clip(lower=0) + 0.0, reserved=signed["res"].clip(lower=0) + 0.0)  # no -0
    kept = kept.sort_values("gb", ascending=False, kind="stable")

    def amount(gb, res) -> str:
        gb, res = round(gb, 2) + 0.0, round(res, 2) + 0.0  # a sum that rounds to zero reads 0.00, never -0.00
        return f"{gb:.2f} GB" + (f" ({res:.2f} GB reserved)" if res == res else "")

    def summed(values: pd.Series) -> float:
        return values.sum() if values.notna().all() else float("nan")

    top = kept.head(largest)
    named = ", ".join(f"`{v}` {amount(gb, res)}" for v, gb, res in zip(top["variant"], top["gb"], top["reserved"]))
    if len(top) and len(kept) > len(top):  # those left out that keep what the last named keeps, as shown (rv23C N1)
        cut = round(top["gb"].iloc[-1], 2)
        tied = int((kept["gb"].iloc[len(top) :].round(2) == cut).sum())
        named += f", and {tied} more at {cut + 0.0:.2f} GB" if tied else ""
    total = amount(signed["gb"].sum(), summed(signed["res"]))
    if round(signed["gb"].sum(), 2) < 0:  # they let go of more than they kept (review rr22d N2): no negative size
        total = f"{amount(-signed['gb'].sum(), -summed(signed['res']))} less than before the first of them was built"
    freed_gb, freed_res = -signed["gb"].clip(upper=0).sum(), -summed(signed["res"].clip(upper=0))
    if round(freed_gb, 2) > 0 or round(freed_res, 2) > 0:  # some first call let go of what an earlier one held
        total += f", after {amount(freed_gb, freed_res)} that first calls released"
    n = len(kept)
    return (f" Measured variant by variant as its first call built it (torch.cuda.memory_allocated after a "
            f"synchronize, before against after; reserved: the same after releasing cached blocks, graph pools "
            f"included), what each kept, the largest first: {named}; the {n} variant{'s' * (n != 1)} together "
            f"{total}.")  # fmt: skip


def resident_text(rows: pd.DataFrame, what: str, largest: int = 3) -> str:
    """What stayed allocated through the runs of `rows` (`memory_peaks`' columns, one row per variant, holding its
    last run's peak), for notebook 10.

    Each run's peak is reset before it (`reset_memory`), so every peak includes what was allocated before the run
    began: the model, and whatever is kept between runs (graph decoders with their KV caches and graph pools, and the
    weight copies the handwritten, Triton and fused steps make; a `graph_transformers` decoder replays the model's
    own parameters and copies none: review rr21d S1).
    The lowest peak bounds that from above; the highest is the most any of these runs needed (review rv20B S5).
    Each row keeps only its variant's last run, so the peaks are of the variants' last runs, not of every timed run
    (review rv21B N2). Where the rows record what each variant's first call left allocated (`resident_gb`, from
    `tokgen.bench.first_calls`), the `largest` of them are named, with their total (review rr21d N6: so that a
    smaller card can choose its Ks and stops); without that column nothing is named as the larger (review rv21B
    S4). `what` names the runs. Without peaks (on the CPU), one line that says so."""
    peaks = pd.to_numeric(rows.get("peak_allocated_gb", pd.Series(dtype=float)), errors="coerce").dropna()
    if peaks.empty:
        return f"*Memory through {what}: no GPU peaks recorded (on the CPU).*"
    card = pd.to_numeric(rows.get("device_memory_gb", pd.Series(dtype=float)), errors="coerce").dropna()
    of_card = f", of the card's {card.max():.1f} GB" if len(card) else ""
    runs = f"{len(peaks)} variants' last runs" if len(peaks) != 1 else "1 variant's last run"
    return (
        f"Memory through {what}: what stayed allocated between runs (the model, and the decoders kept: their KV caches "
        f"and graph pools, and the weight copies our handwritten, Triton and fused steps make) is at most "
        f"{peaks.min():.2f} GB, the lowest peak allocated of "
        f"the {runs}; the highest peak is {peaks.max():.2f} GB{of_card}."
    ) + _largest_kept(rows, largest)


def set_expandable_segments(enabled: bool) -> None:
    """Switch the CUDA caching allocator's expandable segments for segments created from now on
    (notebook 03_expandable_segments). The article sets PYTORCH_ALLOC_CONF before CUDA starts;
    this lets one process compare both settings round by round."""
    setting = f"expandable_segments:{enabled}"
    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    if setter is None:
        setter = torch.cuda.memory._set_allocator_settings
    setter(setting)


def expandable_segments_active(device: str | torch.device = "cuda") -> bool:
    """Does a fresh allocation land in an expandable segment? Read from the allocator's snapshot
    (notebook 03_expandable_segments)."""
    torch.cuda.empty_cache()
    probe = torch.empty(64 * 2**20, dtype=torch.uint8, device=device)
    address = probe.data_ptr()
    segments = torch.cuda.memory._snapshot()["segments"]
    del probe
    for seg in segments:
        if seg["address"] <= address < seg["address"] + seg["total_size"]:
            return bool(seg.get("is_expandable", False))
    raise RuntimeError("the probe allocation was not found in the allocator snapshot")
