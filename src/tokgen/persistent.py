"""What any persistent decode-step kernel could reach on this model, measured (notebook 12_speed_of_light).

One kernel per step, as many programs as the GPU runs at once, streams exactly the bytes the fused
step reads (each layer's folded QKV weight, the filled slots' keys and values, the attention-out,
MLP-up and MLP-down weights, then the LM head's) in tiles, and adds each tile up so that no load is
dead. It computes nothing else: whatever a real persistent kernel adds (the products, the
activations) can only make it slower, so its time bounds any such kernel from below. Its
dependency points are the fused step's (after the embedding and, per layer, after QKV, attention,
attention out, MLP up and MLP down): none (`stream`: streaming alone at its tile, not a speed of light for
the design, since another tile streams at another speed), a
grid-wide barrier at each (`barrier`), or dataflow counters in global memory, one per stage, each
tile waiting (acquire) until every tile of the stage before has signalled (release): loaded after
its wait (`counters`), before it (`prefetch`: weights and cached keys do not depend on this step's
activations, so they may be read early), or with the program's next tile in flight as well
(`prefetch2`).
"""

import statistics

import numpy as np
import pandas as pd
import torch

try:  # ships with CUDA builds of torch
    import triton
    import triton.language as tl
except ImportError:
    triton = None

from .bandwidth import generation_bytes
from .bench import drawn_orders
from .gpu_slice import copy_bandwidth
from .handwritten import FusedStep
from .model import require_cuda, require_positive
from .stats import BAND, FASTER, UNDECIDED, compare_rounds
from .voice import band_side, equivalence_text, side_of, speedup_text

MODES = {
    "stream": "no dependency point: streaming alone at this tile",  # not the design's bound (review rv19B S2)
    "barrier": "a grid-wide barrier at each dependency point",
    "counters": "a counter per stage: each tile waits for the stage before, then loads",
    "prefetch": "a counter per stage: each tile loaded before its wait",
    "prefetch2": "a counter per stage: each tile and the program's next one loaded before its wait",
}
_MODE_CODE = {"stream": 0, "counters": 2, "prefetch": 3, "prefetch2": 4}
SPIN = 1 << 17  # polls of a counter before a program gives up (a program not resident deadlocks otherwise)


def step_stages(step: FusedStep, pos: int) -> list[tuple[str, list[tuple[int, int]]]]:
    """The bytes one step of `step` (a `tokgen.handwritten.FusedStep`) at position `pos` reads, in
    its order, as stages (name, [(address, float32 elements), ...]) split where the step has a
    dependency point (notebook 12_speed_of_light): the embedding's rows (B token rows, read as rows
    0..B-1, and the position's row), then per layer the folded QKV weight and its vectors, the
    keys and values of slots 0..pos of every row and head, the attention-out weight and bias, the
    folded MLP-up weight and vectors, the MLP-down weight and bias; then the folded LM head. The
    same bytes as `tokgen.waterfall.fused_step_calls` counts."""
    B, C = step.x.shape
    cap, D = step.keys.shape[3], step.keys.shape[4]
    if not 0 <= pos < cap:
        raise ValueError(f"pos must be in 0..{cap - 1} (the cache's slots), got {pos}")
    f = step.x.element_size()

    def whole(*tensors):
        return [(t.data_ptr(), t.numel()) for t in tensors]

    stages = [("embedding", [(step.wte.data_ptr(), B * C), (step.wpe.data_ptr() + pos * C * f, C)])]
    starts = np.arange(B * step.heads, dtype=np.int64) * cap * D * f  # each (row, head)'s slot 0
    for layer, (qkv, proj, fc, down) in enumerate(step.layers):
        kv = [(int(a), (pos + 1) * D) for cache in (step.keys, step.values) for a in cache[layer].data_ptr() + starts]
        stages += [("attention qkv", whole(*qkv)), ("attention", kv), ("attention out", whole(*proj)),
                   ("mlp up", whole(*fc)), ("mlp down", whole(*down))]  # fmt: skip
    return stages + [("LM head", whole(*step.head))]


def tile_plan(stages, tile: int, programs: int, base: int) -> dict:
    """`stages` (`step_stages`) cut into tiles of at most `tile` floats, in stage order, and dealt
    to `programs` programs round robin (tile i to program i mod programs, so neighbouring tiles
    stream side by side) (notebook 12_speed_of_light). Addresses become float offsets from `base`
    (the lowest address; each must be 16-byte aligned from it). Returns numpy arrays: offs (int64),
    lens and stage (int32) per tile; counts (tiles per stage), needs (tiles a stage's tile waits
    for: the stage before's count, 0 for the first), stage_start (each stage's first tile, and
    the total), plan (programs × (tiles per program + 1), int32, -1 where a program has no tile:
    the extra column makes the tile after every program's last one "none"); bytes."""
    require_positive(tile=tile, programs=programs)
    if tile % 16:
        raise ValueError(f"tile must be a multiple of 16 floats, got {tile}")
    offs, lens, stage = [], [], []
    for s, (_, segments) in enumerate(stages):
        for address, n in segments:
            if (address - base) % 16 or address < base:
                raise ValueError(f"stage {s}: address {address:#x} is not 16-byte aligned above the base {base:#x}")
            first = np.arange(0, n, tile, dtype=np.int64)
            offs.append((address - base) // 4 + first)
            lens.append(np.minimum(tile, n - first))
            stage.append(np.full(len(first), s))
    offs, lens, stage = np.concatenate(offs), np.concatenate(lens).astype(np.int32), np.concatenate(stage)
    counts = np.bincount(stage, minlength=len(stages)).astype(np.int32)
    total = len(offs)
    per_program = -(-total // programs)
    plan = np.full((programs, per_program + 1), -1, dtype=np.int32)
    index = np.arange(total)
    plan[index % programs, index // programs] = index
    return {"offs": offs, "lens": lens, "stage": stage.astype(np.int32), "counts": counts,
            "needs": np.concatenate([[0], counts[:-1]]).astype(np.int32),
            "stage_start": np.concatenate([[0], np.cumsum(counts)]).astype(np.int32), "plan": plan,
            "bytes": int(lens.astype(np.int64).sum()) * 4}  # fmt: skip


if triton is not None:

    @triton.jit
    def _load_tile(base, offs, lens, t, r, TILE: tl.constexpr):
        # tile t's floats (0 beyond its length, all 0 for t < 0), read 16 bytes at a time
        tt = tl.maximum(t, 0)
        n = tl.where(t >= 0, tl.load(lens + tt), 0)
        n4 = tl.multiple_of((n + 3) // 4 * 4, 4)  # tensors end 512-byte aligned: up to 3 floats past one is in it
        off = tl.multiple_of(tl.load(offs + tt), 4)
        x = tl.load(base + off + r, mask=r < n4, other=0.0)
        return tl.where(r < n, x, 0.0)

    @triton.jit
    def _wait_for(counter, need, failed, errors, SPIN: tl.constexpr):
        # spin (acquire) until `counter` reaches `need`; a program that gave up once waits no more
        if (need > 0) & (failed == 0):
            seen = tl.atomic_add(counter, 0, sem="acquire")
            spins = 0
            while (seen < need) & (spins < SPIN):
                seen = tl.atomic_add(counter, 0, sem="acquire")
                spins += 1
            if seen < need:
                tl.atomic_add(errors, 1)
                failed = 1
        return failed

    @triton.jit
    def _persistent_kernel(base, offs, lens, stage, needs, plan, counters, partial, errors, PER_PROGRAM,
                           TILE: tl.constexpr, MODE: tl.constexpr, SPIN: tl.constexpr):  # fmt: skip
        # MODE 0 stream, 2 counters (load after the wait), 3 prefetch (load before it), 4 prefetch2
        row = plan + tl.program_id(0) * (PER_PROGRAM + 1)
        r = tl.arange(0, TILE)
        failed = 0
        if MODE == 4:
            t = tl.load(row)
            x = _load_tile(base, offs, lens, t, r, TILE)
            for k in range(PER_PROGRAM):
                t_next = tl.load(row + k + 1)
                x_next = _load_tile(base, offs, lens, t_next, r, TILE)  # in flight during the wait below
                s = tl.load(stage + tl.maximum(t, 0))
                if t >= 0:
                    failed = _wait_for(counters + s - 1, tl.load(needs + s), failed, errors, SPIN)
                total = tl.sum(x)
                if t >= 0:
                    tl.store(partial + t, total)
                    tl.atomic_add(counters + s, 1, sem="release")
                t = t_next
                x = x_next
        else:
            for k in range(PER_PROGRAM):
                t = tl.load(row + k)
                if MODE == 3:
                    x = _load_tile(base, offs, lens, t, r, TILE)
                s = tl.load(stage + tl.maximum(t, 0))
                if MODE >= 2:
                    if t >= 0:
                        failed = _wait_for(counters + s - 1, tl.load(needs + s), failed, errors, SPIN)
                if MODE < 3:
                    x = _load_tile(base, offs, lens, t, r, TILE)
                total = tl.sum(x)
                if t >= 0:
                    tl.store(partial + t, total)
                    if MODE >= 2:
                        tl.atomic_add(counters + s, 1, sem="release")

    @triton.jit
    def _barrier_kernel(base, offs, lens, stage_start, STAGES, PROGRAMS, arrived, partial, errors,
                        TILE: tl.constexpr, SPIN: tl.constexpr):  # fmt: skip
        # each stage's tiles dealt round robin, then every program arrives and waits for all the others
        pid = tl.program_id(0)
        r = tl.arange(0, TILE)
        failed = 0
        for s in range(STAGES):
            for t in range(tl.load(stage_start + s) + pid, tl.load(stage_start + s + 1), PROGRAMS):
                tl.store(partial + t, tl.sum(_load_tile(base, offs, lens, t, r, TILE)))
            if s + 1 < STAGES:
                tl.atomic_add(arrived + s, 1, sem="release")
                failed = _wait_for(arrived + s, PROGRAMS, failed, errors, SPIN)


class PersistentStream:
    """A generation's worth of persistent step kernels (notebook 12_speed_of_light): for each
    position 0..`max_seqlen`-1, one launch of `programs` programs (default: four per
    multiprocessor, all resident at once: a wait on a program not yet running would never end)
    that streams `step_stages` of a `FusedStep` of `model` at B = `batch_size`
    (`step`, if given; its cache is filled with random numbers, so that a missed tile of keys
    shows) in tiles of `tile` floats with `warps` warps (the defaults: the fastest streaming of the
    configurations measured on an H100 that keep every program of every mode resident; bytes in
    flight matter most), its dependency points as `mode` says
    (`MODES`). `run()` launches them all; `graph()` captures them (and the counters' reset) in one
    CUDA graph; `check()` says whether the last run streamed every tile exactly once and every
    wait ended."""

    def __init__(self, model, batch_size: int, max_seqlen: int, mode: str = "stream", tile: int = 2048,
                 programs: int | None = None, warps: int = 4, step: FusedStep | None = None):  # fmt: skip
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        require_positive(batch_size=batch_size, max_seqlen=max_seqlen, tile=tile, warps=warps)
        require_cuda("a persistent kernel")
        if triton is None:
            raise RuntimeError("a persistent kernel needs Triton (a CUDA build of torch ships it)")
        device = model.device
        if step is None:
            step = FusedStep(model, batch_size, max_seqlen)
        if step.x.shape[0] != batch_size or step.keys.shape[3] < max_seqlen:
            raise ValueError(f"step holds {step.x.shape[0]} rows and {step.keys.shape[3]} slots: batch_size "
                             f"{batch_size} and max_seqlen {max_seqlen} do not fit it")  # fmt: skip
        if not getattr(step, "_cache_random", False):
            step.keys.uniform_()
            step.values.uniform_()
            step._cache_random = True
        self.step = step
        self.programs = programs or 4 * torch.cuda.get_device_properties(device).multi_processor_count
        self.mode, self.tile, self.warps, self.max_seqlen = mode, tile, warps, max_seqlen
        tensors = [step.wte, step.wpe, step.keys, step.values, *step.head]
        self.base = min([*tensors, *(t for layer in step.layers for part in layer for t in part)],
                        key=lambda t: t.data_ptr())  # fmt: skip
        self.plans, self.devices = [], []
        for pos in range(max_seqlen):
            p = tile_plan(step_stages(step, pos), tile, self.programs, self.base.data_ptr())
            self.plans.append(p)
            self.devices.append({k: torch.from_numpy(p[k]).to(device) for k in ("offs", "lens", "stage", "needs",
                                                                                 "stage_start", "plan")})  # fmt: skip
        self.bytes = sum(p["bytes"] for p in self.plans)
        self.names = [name for name, _ in step_stages(step, 0)]
        self.counters = torch.zeros(max_seqlen, len(self.names), dtype=torch.int32, device=device)
        self.partial = torch.zeros(max_seqlen, max(len(p["offs"]) for p in self.plans), device=device)
        self.errors = torch.zeros(1, dtype=torch.int32, device=device)

    def stage_sums(self, pos: int) -> np.ndarray:
        """Each stage's floats added up in float64, read from the step's tensors (not through
        addresses): what the tiles of step `pos` must add up to (notebook 12_speed_of_light)."""
        st, B = self.step, self.step.x.shape[0]

        def total(*tensors):
            return sum(float(t.detach().double().sum()) for t in tensors)

        sums = [total(st.wte[:B], st.wpe[pos])]
        for layer, (qkv, proj, fc, down) in enumerate(st.layers):
            kv = total(st.keys[layer, :, :, : pos + 1], st.values[layer, :, :, : pos + 1])
            sums += [total(*qkv), kv, total(*proj), total(*fc), total(*down)]
        return np.array([*sums, total(*st.head)])

    def launch(self, pos: int) -> None:
        """Step `pos`'s kernel: one launch, on the current stream (notebook 12_speed_of_light)."""
        p, d = self.plans[pos], self.devices[pos]
        counters, partial = self.counters[pos], self.partial[pos]
        if self.mode == "barrier":
            _barrier_kernel[(self.programs,)](self.base, d["offs"], d["lens"], d["stage_start"], len(self.names),
                                              self.programs, counters, partial, self.errors, TILE=self.tile,
                                              SPIN=SPIN, num_warps=self.warps)  # fmt: skip
        else:
            _persistent_kernel[(self.programs,)](self.base, d["offs"], d["lens"], d["stage"], d["needs"], d["plan"],
                                                 counters, partial, self.errors, p["plan"].shape[1] - 1,
                                                 TILE=self.tile, MODE=_MODE_CODE[self.mode], SPIN=SPIN,
                                                 num_warps=self.warps)  # fmt: skip

    def run(self) -> None:
        """Every step's kernel, the counters reset first (notebook 12_speed_of_light)."""
        self.counters.zero_()
        for pos in range(self.max_seqlen):
            self.launch(pos)

    def graph(self) -> torch.cuda.CUDAGraph:
        """`run()` captured in one CUDA graph, after one run outside it (Triton compiles there)
        (notebook 12_speed_of_light)."""
        self.run()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.run()
        return g

    def check(self, positions=None) -> list[str]:
        """What went wrong in the last run at `positions` (default: the first, the middle and the
        last), one line each (at most 10); empty when no wait gave up, every counter saw each of its
        stage's tiles (`barrier`: each program arrive at each stage but the last) and each stage's
        tiles add up to its floats' sum (notebook 12_speed_of_light)."""
        torch.cuda.synchronize()
        errors = int(self.errors.item())
        problems = [f"{errors} waits gave up"] if errors else []
        counters, partial = self.counters.cpu().numpy(), self.partial.double().cpu().numpy()
        n = self.max_seqlen
        for pos in sorted(set(positions if positions is not None else (0, n // 2, n - 1))):
            p, got = self.plans[pos], counters[pos]
            if self.mode == "barrier":
                ok = (got[:-1] == self.programs).all() and got[-1] == 0
            else:
                ok = (got == (p["counts"] if self.mode != "stream" else 0)).all()
            if not ok:
                problems.append(f"pos {pos}: counters {got.tolist()}")
            sums = np.bincount(p["stage"], weights=partial[pos, : len(p["stage"])], minlength=len(self.names))
            for s, (got_sum, want) in enumerate(zip(sums, self.stage_sums(pos))):
                if abs(got_sum - want) > 1e-4 * (1 + abs(want)):
                    problems.append(f"pos {pos} stage {s} ({self.names[s]}): its tiles add up to {got_sum}, not {want}")
        return problems[:10]


def _event_ms(run) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def interleaved_times(calls: dict, orders: list[list[int]]) -> dict[str, list[float]]:
    """Milliseconds of each of `calls` (name -> a function that returns its own time in ms), one
    call each per round in that round's order (`tokgen.bench.drawn_orders`, whose seed the caller
    records), after one warm-up call each (notebook 12_speed_of_light)."""
    require_positive(rounds=len(orders))
    for call in calls.values():
        call()
    names, times = list(calls), {name: [] for name in calls}
    for order in orders:
        for i in order:
            times[names[i]].append(calls[names[i]]())
    return times


def persistent_bound(model, batch_size: int, max_seqlen: int, variants: dict, *, rounds: int = 11,
                     extra: dict | None = None, bandwidth_gbs: float | None = None, base: str = "stream",
                     seed: int | None = None) -> tuple[pd.DataFrame, dict]:  # fmt: skip
    """Each of `variants` (name -> `PersistentStream` keyword arguments: mode, tile, programs,
    warps) timed as a generation of `max_seqlen` steps replayed from one CUDA graph, with `extra`
    (name -> a function returning a generation's time in ms, e.g. a generator's wall time) in
    the same interleaved rounds (`interleaved_times`), against the floor: `model`'s generation
    bytes (`tokgen.bandwidth.generation_bytes`) at `bandwidth_gbs` (default: `copy_bandwidth`
    measured here) (notebook 12_speed_of_light). A variant whose `check()` fails is not timed: its
    row says why. Returns (table: variant, mode, tile, programs, warps, us_per_step (median),
    x_floor, speedup vs `base` with its interval and outcome (`tokgen.stats.compare_rounds`; for
    `variants` only: an `extra` time is read on another clock, so it is set against none), note,
    times_us (each round's µs per step, ";"-joined, for every timed row: `paired_cell` recomputes the
    speed-ups from them), order_seed: the rounds' order, fresh unless `seed` is given; the raw times and the floor)."""
    bw = bandwidth_gbs or copy_bandwidth(model.device, 1024, 20)
    floor_us = generation_bytes(model, batch_size, max_seqlen) / bw / 1e3 / max_seqlen
    step = FusedStep(model, batch_size, max_seqlen)
    calls, notes, built = {}, {}, {}
    for name, kw in variants.items():
        try:
            ps = PersistentStream(model, batch_size, max_seqlen, step=step, **kw)
            g = ps.graph()
            g.replay()
            problems = ps.check()
        except Exception as err:  # noqa: BLE001 - a variant that fails is a row that says why
            notes[name] = f"{type(err).__name__}: {str(err).strip().splitlines()[0][:200] if str(err) else ''}"
            continue
        if problems:
            notes[name] = "; ".join(problems)[:300]
            continue
        built[name] = ps
        calls[name] = lambda g=g: _event_ms(g.replay)
    calls |= extra or {}
    seed, orders = drawn_orders(len(calls), rounds, seed)  # a fresh order each run unless seeded, recorded
    times = interleaved_times(calls, orders) if calls else {}
    for name, ps in built.items():
        problems = ps.check()
        if problems:
            notes[name] = "after timing: " + "; ".join(problems)[:300]
    rows = []
    for name in [*variants, *(extra or {})]:
        kw = variants.get(name, {})
        ps = built.get(name)  # what it ran with, its defaults filled in
        row = {"variant": name, "mode": kw.get("mode", ""), "tile": ps.tile if ps else kw.get("tile"),
               "programs": ps.programs if ps else kw.get("programs"), "warps": ps.warps if ps else kw.get("warps"),
               "us_per_step": float("nan"), "x_floor": float("nan"),
               "note": notes.get(name, MODES.get(kw.get("mode"), "") if name in variants else ""),
               "order_seed": seed}  # fmt: skip
        if name in times and name not in notes:
            us = 1e3 * statistics.median(times[name]) / max_seqlen
            row |= {"us_per_step": us, "x_floor": us / floor_us,
                    "times_us": ";".join(f"{1e3 * t / max_seqlen:.4f}" for t in times[name])}  # fmt: skip
            if base in times and name != base and name in variants and base in variants:  # one clock: events
                g = compare_rounds(times[base], times[name])
                row |= {"speedup_vs_" + base: g["speedup"], "interval_low": g["interval_low"],
                        "interval_high": g["interval_high"], "outcome": g["outcome"]}  # fmt: skip
        rows.append(row)
    streamed = {name: ps.bytes for name, ps in built.items()}
    return pd.DataFrame(rows), {"times": times, "floor_us_per_step": floor_us, "bandwidth_gb_s": bw,
                                "streamed_bytes": streamed,
                                "floor_bytes": generation_bytes(model, batch_size, max_seqlen)}  # fmt: skip


def bound_rounds(bound: pd.DataFrame, variant: str) -> list[float]:
    """`variant`'s per-round µs per step from `persistent_bound`'s table (`times_us`), [] where it has
    none (not timed, or a run from before the rounds were recorded; notebook 12_speed_of_light)."""
    row = bound[bound["variant"] == variant]
    text = row["times_us"].iloc[0] if len(row) and "times_us" in row else ""
    return [float(x) for x in text.split(";")] if isinstance(text, str) and text else []


def paired_cell(bound: pd.DataFrame, variant: str, base: str = "stream") -> str:
    """`variant` against `base` in `persistent_bound`'s table, paired round by round from their `times_us`
    (`tokgen.stats.compare_rounds`, `tokgen.voice.speedup_text`: > 1 faster than `base`): "—" for `base`
    itself, and says why where there is no pair: a row timed by the host's clock (an `extra`: no
    mode), a row not timed, rounds not recorded (review rv19B S3; notebook 12_speed_of_light)."""
    if variant == base:
        return "—"
    modes = bound.set_index("variant")["mode"]
    if variant in modes.index and not (isinstance(modes[variant], str) and modes[variant]):
        return "another clock (the host's): not paired"
    if not _timed(bound, variant) or not _timed(bound, base):
        return "not timed" if not _timed(bound, variant) else f"`{base}` not timed"
    mine, theirs = bound_rounds(bound, variant), bound_rounds(bound, base)
    if not mine or not theirs:
        return "rounds not recorded"
    return speedup_text(compare_rounds(theirs, mine))


def paired_text(bound: pd.DataFrame, variant: str, base: str) -> str:
    """ "`b` against `a`, paired round by round: ×…": two rows of `persistent_bound`'s table compared
    round by round (`paired_cell`), e.g. one design at two tile sizes, instead of setting their
    medians side by side (review rv19B S3; notebook 12_speed_of_light)."""
    return f"`{variant}` against `{base}`, paired round by round: {paired_cell(bound, variant, base)}."


def _timed(bound: pd.DataFrame, variant: str) -> bool:
    x = bound.loc[bound["variant"] == variant, "x_floor"]
    return bool(len(x) and x.iloc[0] == x.iloc[0])


def _streams_text(bound: pd.DataFrame, streams: list[dict]) -> str:
    """Several `stream` rows (one per tile): the one that the rounds, paired round by round
    (`compare_rounds`), show faster than every other by more than ±BAND (`band_side`), with the others'
    medians; where none is, every stream's median × the floor without choosing one (review rr20h S2: no
    choice by median), two shown within ±BAND of each other said so with their equivalence interval (review
    rv21B S2: a gap inside the band is a tie by the repository's rule, not a faster tiling)."""
    names = [r["variant"] for r in streams]
    rounds = {v: bound_rounds(bound, v) for v in names}
    if all(rounds.values()):
        for r in streams:
            mine = rounds[r["variant"]]
            pairs = [compare_rounds(rounds[o], mine) for o in names if o != r["variant"]]
            if all(g["outcome"] == FASTER and band_side(g) == "beyond" for g in pairs):
                others = ", ".join(f"`{o['variant']}` {o['x_floor']:.2f}×" for o in streams if o is not r)
                return (
                    f"streaming alone takes {r['x_floor']:.2f}× the floor at `{r['variant']}`, faster round by "
                    f"round, by more than {BAND:.0%}, than the other {'tiling' if len(streams) == 2 else 'tilings'} "
                    f"streamed ({others})"
                )
        if len(streams) == 2:
            g = compare_rounds(rounds[names[0]], rounds[names[1]])
            if g.get("no_effect") and (shown := equivalence_text(g)):
                why = f"within ±{BAND:.0%} of each other round by round: `{names[1]}` against `{names[0]}`, {shown}"
            elif g["outcome"] == UNDECIDED:
                why = "not told apart round by round"
            else:
                why = f"not shown more than {BAND:.0%} apart round by round"
        else:
            why = f"none faster than all others by more than {BAND:.0%} round by round"
    else:
        why = "their rounds not recorded: not compared"
    values = [f"{r['x_floor']:.2f}×" for r in streams]
    each = f"{', '.join(values[:-1])} and {values[-1]}"
    return (
        f"streaming alone: {each} the floor at the {len(streams)} tiles ({', '.join(f'`{v}`' for v in names)}), {why}"
    )


def bound_findings(bound: pd.DataFrame, target: float = 1.5) -> str:
    """What `persistent_bound`'s table found, in words (notebook 12_speed_of_light): pure streaming
    against the floor (where several tiles were streamed, the one the rounds show faster than every
    other, paired round by round, else each without choosing, `_streams_text`: streaming alone at one
    tile is no bound for the design; reviews rv19B S2, rr20h S2), the range of the
    variants that keep the step's dependency points, how many of them come within `target`× the
    floor, and the other rows (a generator timed beside them); a row not timed says why. Times are
    medians per step; this is no ranking."""
    timed = bound.dropna(subset=["x_floor"])
    said = []
    streams = timed[timed["mode"] == "stream"].to_dict("records")  # the table's order: no ranking by median
    if len(streams) == 1:
        said.append(f"streaming alone, `{streams[0]['variant']}`, takes {streams[0]['x_floor']:.2f}× the floor")
    elif streams:
        said.append(_streams_text(bound, streams))
    dependent = timed[timed["mode"].isin([m for m in MODES if m != "stream"])]
    if len(dependent):
        within = int((dependent["x_floor"] <= target).sum())
        said.append(
            f"with the step's dependency points, {side_of(dependent['x_floor'].min(), (target,))}–"
            f"{side_of(dependent['x_floor'].max(), (target,))}× "  # 1.504 reads 1.504 beside "within 1.5×"
            f"across the {len(dependent)} designs and tilings tried ({within} within {target:g}×, computing nothing)"
        )
    said += [f"`{r['variant']}` {r['x_floor']:.2f}× (by the host's clock, not set against these: other clocks)"
             for r in timed[timed["mode"] == ""].to_dict("records")]  # fmt: skip
    missing = bound[bound["x_floor"].isna()]
    said += [f"`{r['variant']}` not timed ({r['note']})" for r in missing.to_dict("records")]
    return ("Per step, against the floor: " + "; ".join(said) + ".") if said else "Nothing was timed."
