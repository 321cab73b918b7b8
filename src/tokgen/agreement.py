"""Which outputs count as the naive generator's tokens: the one equivalence rule (notebook 00_setup).

On the article's batch (every row starts from BOS, so every row is the same sequence) every
generator must return exactly the naive generator's tokens, early stops included. On distinct
prompts, two correct implementations can round differently (TF32 products by other kernels, sums
in another order) and pick the reference's second-best token where its two best logits nearly
tie. The rule is modelled on vLLM's `check_logprobs_close` (stop comparing at a row's first
difference, which must be a top candidate); the runner-up and the tolerance, which we measure, are ours:

* the prompt column is equal, and each row is equal up to its first difference;
* at a row's first difference the token chosen is the reference's runner-up there, and the
  reference's two best logits lie within `TOLERANCE` of each other;
* nothing after a row's first difference is compared (the row continues from another token);
* the output stops where its own tokens say: after the first step at which every row has
  produced EOS, else after max_seqlen steps (no token past the stop, none missing).

TOLERANCE is fixed here; notebook 00 measures how far TF32 logits lie from FP32 ones, for the
model's own products and for our kernels, and a GPU test keeps TOLERANCE above what two such
computations can swap.
"""

import dataclasses

import pandas as pd
import torch

from .generators import generate_naive, resolve_eos
from .handwritten import TritonStep
from .registry import NO_STOP_CHECK, get_generator

# In logits (GPT-2 small, random weights): the largest gap between the two best logits at which a
# generator may pick the runner-up. Each TF32 computation of a logit lies within its spread of the
# FP32 value (measured in notebook 00 and tests/test_gpu.py on an H100: cuBLAS's products ~2e-3, our
# Triton kernels' ~4e-3), so two of them can swap two logits that lie within twice the sum (~1.2e-2).
TOLERANCE = 1.5e-2
FP32_NAIVE = "naive (FP32 products)"  # the yardstick: the naive loop with TF32 switched off


@dataclasses.dataclass
class Reference:
    """The naive generator's tokens (B, 1 + steps) and, at each step, each row's runner-up token
    and the gap between its two best logits (B, steps each); on the CPU (notebook 00_setup)."""

    tokens: torch.Tensor
    runner_up: torch.Tensor
    gap: torch.Tensor
    eos: int
    max_seqlen: int


@torch.inference_mode()
def naive_reference(model, *, batch_size, max_seqlen, eos_token_id=None, prompt=None) -> Reference:
    """Run the naive generator and keep each step's two best logits (a forward hook reads them:
    the generator itself is unchanged). Notebook 00_setup."""
    top2 = []

    def keep_top2(module, args, output):
        top2.append(output.logits[:, -1, :].float().topk(2, dim=-1))  # values, indices: (B, 2) each

    hook = model.register_forward_hook(keep_top2)
    try:
        tokens = generate_naive(
            model, batch_size=batch_size, max_seqlen=max_seqlen, eos_token_id=eos_token_id, prompt=prompt
        )
    finally:
        hook.remove()
    values = torch.stack([v for v, _ in top2], dim=1).cpu()  # (B, steps, 2)
    indices = torch.stack([i for _, i in top2], dim=1).cpu()
    return Reference(
        tokens=tokens.cpu(),
        runner_up=indices[..., 1],
        gap=values[..., 0] - values[..., 1],
        eos=resolve_eos(model, eos_token_id),
        max_seqlen=max_seqlen,
    )


def expected_steps(tokens: torch.Tensor, eos: int, max_seqlen: int) -> int:
    """Steps a generation with these tokens must have run: up to the first step after which
    every row has produced `eos` at least once, else max_seqlen (notebook 00_setup)."""
    done = ((tokens[:, 1:] == eos).cumsum(dim=1) > 0).all(dim=0).nonzero()  # steps after which every row is done
    return int(done[0, 0]) + 1 if len(done) else max_seqlen


def agreement(ref: Reference, out: torch.Tensor, *, tolerance: float = TOLERANCE, check_stop: bool = True) -> dict:
    """`out` against the reference under the rule of this module's docstring (notebook 00_setup).

    Returns `ok` (the rule holds), the rows `identical` and `near_ties` (first difference at the
    runner-up within tolerance), the largest gap at such a difference, the `failures` (one line
    each: row, step, token, what was allowed) and `length_ok`. `check_stop=False`: a generator
    without a stop check must run max_seqlen steps."""
    out = out.cpu()
    steps = out.shape[1] - 1
    want = expected_steps(out, ref.eos, ref.max_seqlen) if check_stop else ref.max_seqlen
    failures = [] if steps == want else [f"{steps} steps, but its own tokens say {want}"]
    rows, common = min(out.shape[0], ref.tokens.shape[0]), min(out.shape[1], ref.tokens.shape[1])
    if out.shape[0] != ref.tokens.shape[0]:
        failures.append(f"{out.shape[0]} rows, the reference has {ref.tokens.shape[0]}")
    differs = out[:rows, :common] != ref.tokens[:rows, :common]  # (B, common)
    identical, ties, tie_gaps = 0, 0, []
    for row in range(rows):
        columns = differs[row].nonzero()
        if not len(columns):
            identical += 1
            continue
        col = int(columns[0, 0])
        if col == 0:
            failures.append(f"row {row}: prompt {int(out[row, 0])}, the reference's {int(ref.tokens[row, 0])}")
            continue
        step, token = col - 1, int(out[row, col])
        runner_up, gap = int(ref.runner_up[row, step]), float(ref.gap[row, step])
        if token == runner_up and gap <= tolerance:
            ties += 1
            tie_gaps.append(gap)
        else:
            failures.append(
                f"row {row}, step {step}: token {token}, the reference's {int(ref.tokens[row, col])} "
                f"(runner-up {runner_up}, {gap:.2e} below it; allowed within {tolerance:.2g})"
            )
    return {
        "ok": not failures,
        "rows": out.shape[0],
        "identical": identical,
        "near_ties": ties,
        "max_tie_gap": max(tie_gaps, default=float("nan")),
        "length_ok": steps == want,
        "failures": failures,
    }


def tokens_match(ref: Reference, out: torch.Tensor, **kwargs) -> bool:
    """Does `out` count as the naive generator's tokens under the rule? (`agreement`'s `ok`; notebook 00_setup)"""
    return agreement(ref, out, **kwargs)["ok"]


def assert_tokens_match(ref: Reference, out: torch.Tensor, name: str = "output", **kwargs) -> dict:
    """`agreement`, raising AssertionError with the first failures when the rule does not hold
    (the tests' and notebooks' check; notebook 00_setup)."""
    result = agreement(ref, out, **kwargs)
    if not result["ok"]:
        shown = "; ".join(result["failures"][:3])
        more = f" (+{len(result['failures']) - 3} more)" if len(result["failures"]) > 3 else ""
        raise AssertionError(f"{name} does not match the naive tokens: {shown}{more}")
    return result


def exact_failure(ref: Reference, out: torch.Tensor, name: str = "output") -> str:
    """Where `out` first differs from the reference's tokens, in one line; "" where it equals them.
    The all-BOS check of notebook 00 wants exact tokens (this module's standard), so a difference
    fails it, but the line says what kind: where the token is the reference's runner-up and its two
    best logits lie within TOLERANCE, a near tie that two correct computations can swap (other
    kernels, another GPU), which the distinct-prompt rule would accept; else a real difference."""
    out = out.cpu()
    if out.shape != ref.tokens.shape:
        return f"{name}: {tuple(out.shape)} tokens, the naive generator's {tuple(ref.tokens.shape)}"
    differs = (out != ref.tokens).nonzero()
    if not len(differs):
        return ""
    col, row = min((int(c), int(r)) for r, c in differs.tolist())  # the earliest step, then the first row
    token, want = int(out[row, col]), int(ref.tokens[row, col])
    if col == 0:
        return f"{name}, row {row}: prompt {token}, the naive generator's {want}"
    runner_up, gap = int(ref.runner_up[row, col - 1]), float(ref.gap[row, col - 1])
    why = (f"the naive generator's runner-up, its two best logits {gap:.1e} apart: a near tie (within the "
           f"tolerance {TOLERANCE:.2g}) that two correct computations can swap, which exact tokens do not allow"
           if token == runner_up and gap <= TOLERANCE else
           f"not a near tie (the runner-up is {runner_up}, {gap:.1e} below the best; tolerance "
           f"{TOLERANCE:.2g})")  # fmt: skip
    return f"{name}, row {row}, step {col - 1}: token {token}, the naive generator's {want}; {why}"


@torch.inference_mode()
def logit_spread(model, tokens: torch.Tensor) -> dict:
    """How far TF32 logits lie from FP32 ones on the same tokens (B, T): the largest |difference|
    over every logit and over each position's two best, one forward each; on a GPU also our
    Triton kernels' (`TritonStep`, one position after the other) against FP32 (notebook 00_setup).
    Two computations, each within its spread of the exact value, can swap two logits that lie
    within twice the sum of their spreads: what TOLERANCE must cover."""
    tokens = tokens.to(model.device)
    precision = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        exact = model(tokens, use_cache=False).logits.float()  # (B, T, vocab)
        torch.set_float32_matmul_precision("high")
        tf32 = model(tokens, use_cache=False).logits.float()
    finally:
        torch.set_float32_matmul_precision(precision)
    top2 = exact.topk(2, dim=-1).indices  # (B, T, 2)
    diff = (tf32 - exact).abs()
    spread = {"max_abs_diff": float(diff.max()), "max_top2_diff": float(diff.gather(-1, top2).max())}
    if model.device.type == "cuda" and model.dtype == torch.float32:  # our kernels' own rounding, step by step
        step, positions = TritonStep(model, tokens.shape[0], tokens.shape[1]), torch.arange(tokens.shape[1])
        ours = torch.stack([step(tokens[:, i], positions[i : i + 1].to(model.device)) for i in positions], 1)
        spread["max_top2_diff_ours"] = float((ours.float() - exact).abs().gather(-1, top2).max())
    return spread


def distinct_prompts(model, count: int, seed: int = 0) -> torch.Tensor:
    """`count` different one-token prompts drawn from the vocabulary (notebook 00_setup)."""
    return torch.randperm(model.config.vocab_size, generator=torch.Generator().manual_seed(seed))[:count]


def check_generators(model, names, prompts: torch.Tensor, *, batch_size: int, max_seqlen: int, options=None):
    """Every generator in `names` against the naive one on `prompts`, in batches of `batch_size`
    (our kernels take at most 64 rows), under the rule; then the naive loop with FP32 products
    instead of TF32, the yardstick. One row each: rows identical, near ties, the largest gap at
    one, failures. `options`: extra arguments per name. Notebook 00_setup."""
    batches = [(p, naive_reference(model, batch_size=len(p), max_seqlen=max_seqlen, prompt=p)) for p in
               prompts.split(batch_size)]  # fmt: skip
    rows, precision = [], torch.get_float32_matmul_precision()
    for name in [*names, FP32_NAIVE]:
        run = get_generator("naive" if name == FP32_NAIVE else name)
        kwargs = {"max_seqlen": max_seqlen, **(options or {}).get(name, {})}
        torch.set_float32_matmul_precision("highest" if name == FP32_NAIVE else precision)
        try:
            outs = [(ref, run(model, batch_size=len(p), prompt=p, **kwargs)) for p, ref in batches]
        finally:
            torch.set_float32_matmul_precision(precision)
        found = [agreement(ref, out, check_stop=name not in NO_STOP_CHECK) for ref, out in outs]
        rows.append(
            {
                "generator": name,
                "rows": sum(f["rows"] for f in found),
                "identical": sum(f["identical"] for f in found),
                "near_ties": sum(f["near_ties"] for f in found),
                "max_tie_gap": max((f["max_tie_gap"] for f in found if f["near_ties"]), default=float("nan")),
                "failures": sum(len(f["failures"]) for f in found),
                "first_failure": next((f["failures"][0] for f in found if f["failures"]), ""),
            }
        )
    spreads = [logit_spread(model, ref.tokens) for _, ref in batches]
    worst = {key: max(s.get(key, float("nan")) for s in spreads) for key in ("max_top2_diff", "max_top2_diff_ours")}
    return pd.DataFrame(rows).assign(
        tolerance=TOLERANCE, spread_cublas=worst["max_top2_diff"], spread_ours=worst["max_top2_diff_ours"]
    )


def summary(checked: pd.DataFrame) -> str:
    """What `check_generators` found, in sentences read from its table (notebook 00_setup)."""
    gens, fp32 = checked[checked["generator"] != FP32_NAIVE], checked.set_index("generator").loc[FP32_NAIVE]
    tied, failed = gens[gens["near_ties"] > 0], gens[gens["failures"] > 0]
    rows, tolerance = int(fp32["rows"]), fp32["tolerance"]
    cublas, ours = fp32["spread_cublas"], fp32["spread_ours"]
    swap = 2 * (cublas + (ours if ours == ours else cublas))  # without our kernels (a CPU): two cuBLAS-like
    others = gens[gens["generator"] != "naive"]  # the naive generator is the reference itself
    same = int((others["identical"] == others["rows"]).sum())
    lines = [f"- {same} of the {len(others)} other generators returned all {rows} rows identical to naive's."]
    if len(tied):
        each = ", ".join(f"`{r.generator}` {r.near_ties}" for r in tied.itertuples())
        lines.append(
            f"- Rows that took the naive generator's runner-up at a near-tie: {each}; the largest gap between "
            f"its two best logits at such a row: {tied['max_tie_gap'].max():.1e} (tolerance {tolerance:.2g})."
        )
    lines.append(
        f"- The naive loop with FP32 products: {int(fp32['identical'])} rows identical, {int(fp32['near_ties'])} "
        f"at a near-tie, {int(fp32['failures'])} outside the rule."
    )
    ours_text = f", our Triton kernels' {ours:.1e}" if ours == ours else " (our Triton kernels: not on this device)"
    lines.append(
        f"- The largest |TF32 − FP32| of a top-two logit: the model's own (cuBLAS) products' {cublas:.1e}"
        f"{ours_text}. Two such computations can swap two logits that lie within twice the sum, {swap:.1e}: "
        + ("within the tolerance." if swap <= tolerance else f"**above the tolerance of {tolerance:.2g}**.")
    )
    if len(failed):
        lines.append(f"- **Outside the rule:** {', '.join(f'`{g}`' for g in failed['generator'])}.")
    return "\n".join(lines)
