"""The article's token generators (notebooks 01-07), one signature.

Every generator is called as ``fn(model, *, batch_size, max_seqlen, eos_token_id=None, prompt=None,
on_step=no_hook, ...)`` and returns what `generate_naive` returns for the same model (exactly on the
article's all-BOS batch; on distinct prompts under the rule of `tokgen.agreement`): a
``(batch_size, 1 + steps)`` LongTensor, the prompt column first, where ``steps`` is the first step
after which every sequence has produced ``eos_token_id`` at least once, or ``max_seqlen``. Greedy
(argmax) decoding.
``on_step(i)`` is called at the top of step i: the one hook profilers use (tokgen.profiling).
"""

import contextlib
import numbers

import torch
import transformers
from transformers import DynamicCache, StaticCache

from .gpu_slice import side_streams
from .model import require_positive, takes_cache_position
from .sizes import generation_bytes, shape_of, too_large


def no_hook(step: int) -> None:
    """The default `on_step`: does nothing (notebook 06 passes a profiler's instead)."""


def check_sizes(model, batch_size: int, max_seqlen: int, recompute: bool = False) -> None:
    """One clear error for sizes the generator cannot run, before it allocates anything: not positive,
    beyond the model's positions, or needing more memory than the model's device has free
    (`tokgen.sizes.generation_bytes`; `recompute`: the naive generator's logits of every position).
    Notebook 00_setup."""
    require_positive(batch_size=batch_size, max_seqlen=max_seqlen)
    limit = model.config.n_positions
    if max_seqlen > limit:
        raise ValueError(f"max_seqlen={max_seqlen} exceeds the model's {limit} positions")
    needed = generation_bytes(shape_of(model.config), batch_size, max_seqlen, recompute, model.dtype.itemsize)
    said = too_large(needed, model.device, free=True)
    if said:
        what = "re-running every position (the naive generator)" if recompute else "a KV cache of max_seqlen positions"
        raise ValueError(
            f"batch_size={batch_size}, max_seqlen={max_seqlen}: {what} {said}; lower batch_size or max_seqlen"
        )


def resolve_eos(model, eos_token_id: int | None) -> int:
    """The model's EOS id unless another is given (tests force early stops with another; notebook 07).

    An integer; one outside the vocabulary is never generated, so no row finishes and every
    generator runs max_seqlen steps. Anything else (2.7, True, "50256") is one clear error."""
    if eos_token_id is None:
        return model.config.eos_token_id
    if isinstance(eos_token_id, bool) or not isinstance(eos_token_id, numbers.Integral):
        raise ValueError(f"eos_token_id must be an integer token id (or None: the model's), got {eos_token_id!r}")
    return int(eos_token_id)


def first_tokens(model, batch_size: int, prompt: torch.Tensor | None = None) -> torch.Tensor:
    """(B, 1) prompt: BOS for every row as in the article, or `prompt`, a 1-D integer tensor of B
    token ids inside the vocabulary, one per row (notebook 00_setup, tests). Anything else is one
    clear error: a 2-D prompt is not reshaped into more rows, a float one is not truncated."""
    device = model.device
    if prompt is None:
        return torch.full((batch_size, 1), model.config.bos_token_id, dtype=torch.long, device=device)
    integer = isinstance(prompt, torch.Tensor) and not prompt.is_floating_point() and not prompt.is_complex()
    if not integer or prompt.dtype == torch.bool or prompt.dim() != 1:
        what = f"a {prompt.dim()}-D {prompt.dtype} tensor" if isinstance(prompt, torch.Tensor) else repr(prompt)
        raise ValueError(f"prompt must be a 1-D integer tensor of {batch_size} token ids (one per row), got {what}")
    if len(prompt) != batch_size:
        raise ValueError(f"prompt has {len(prompt)} rows, batch_size is {batch_size}")
    low, high = torch.stack(torch.aminmax(prompt)).tolist()  # one read (a sync on a GPU), before any step
    vocab = model.config.vocab_size
    if low < 0 or high >= vocab:
        raise ValueError(f"prompt ids must lie in [0, {vocab}) (the vocabulary), got {low if low < 0 else high}")
    return prompt.to(device=device, dtype=torch.long)[:, None]


def make_cache(model, kind: str, max_seqlen: int):
    """A KV cache: "dynamic" grows by one position per step, "static" is allocated for max_seqlen (notebook 04)."""
    if kind == "dynamic":
        return DynamicCache(config=model.config)
    if kind == "static":
        return StaticCache(config=model.config, max_cache_len=max_seqlen)
    raise ValueError(f"unknown cache {kind!r}: choose 'dynamic' or 'static'")


def cache_kwargs(model, cache, position: torch.Tensor) -> dict:
    """Forward arguments for one cached decode step at `position` ((1,) LongTensor on the device).

    transformers 5.1 needs `cache_position` to index a StaticCache (else it counts the filled
    slots with a GPU reduction and reads the count back: hidden syncs); 5.4+ keeps the position
    inside the cache.
    Introduced in notebook 04_static_cache.
    """
    kwargs = {"past_key_values": cache, "use_cache": True}
    if takes_cache_position(model):
        kwargs["cache_position"] = position
    return kwargs


@torch.inference_mode()
def generate_naive(model, *, batch_size, max_seqlen, eos_token_id=None, prompt=None, on_step=no_hook):
    """Re-run the whole sequence at every step: O(N²) work. Notebook 01_naive."""
    check_sizes(model, batch_size, max_seqlen, recompute=True)
    eos = resolve_eos(model, eos_token_id)
    tokens = first_tokens(model, batch_size, prompt)  # (B, 1)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=tokens.device)
    for i in range(max_seqlen):
        on_step(i)
        logits = model(tokens, use_cache=False).logits[:, -1, :]  # (B, vocab): the last position only
        new = logits.argmax(dim=-1)  # (B,)
        tokens = torch.cat([tokens, new[:, None]], dim=1)  # (B, i + 2)
        finished |= new == eos
        if finished.all().item():  # the CPU waits here for the GPU, every step
            break
    return tokens


@torch.inference_mode()
def generate_kv(
    model, *, batch_size, max_seqlen, eos_token_id=None, cache="dynamic", check_stop=True, prompt=None, on_step=no_hook
):
    """Feed only the newest token; keys and values of the past come from a KV cache.

    `cache="dynamic"` is notebook 02_kv_cache, `cache="static"` notebook 04_static_cache.
    `check_stop=False` skips the EOS check altogether and always runs max_seqlen steps
    (notebook 07_pipelining measures what the check costs).
    """
    check_sizes(model, batch_size, max_seqlen)
    eos = resolve_eos(model, eos_token_id)
    tokens = first_tokens(model, batch_size, prompt)  # (B, 1)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=tokens.device)
    past = make_cache(model, cache, max_seqlen)
    positions = torch.arange(max_seqlen, device=tokens.device)
    for i in range(max_seqlen):
        on_step(i)
        out = model(tokens[:, -1:], **cache_kwargs(model, past, positions[i : i + 1]))
        new = out.logits[:, -1, :].argmax(dim=-1)  # (B,)
        tokens = torch.cat([tokens, new[:, None]], dim=1)  # (B, i + 2)
        if check_stop:
            finished |= new == eos
            if finished.all().item():  # the CPU waits here for the GPU, every step
                break
    return tokens


@torch.inference_mode()
def generate_pipelined(
    model, *, batch_size, max_seqlen, eos_token_id=None, cache="static", streams=2, prompt=None, on_step=no_hook
):
    """Queue step i before reading step i-1's stop flag, so that the GPU need not wait for the CPU's stop check.

    The host may still be slower than the GPU, and then the GPU waits anyway (notebook 06 measures
    the idle gap before a step with this generator).

    The article's two-stream "ping-pong" (notebook 07_pipelining): step i runs on stream i % 2
    after waiting for the other stream; its stop flag is copied without blocking into pinned
    host memory. Unlike the article's loop, the CPU waits on an event for step i-1's copy before
    reading the flag (reading pinned memory does not wait for the copy), and the step that was
    queued past the stop is dropped from the result. `streams=1` does the same on one stream.
    """
    check_sizes(model, batch_size, max_seqlen)
    if streams not in (1, 2):
        raise ValueError(f"streams must be 1 or 2, got {streams!r}")
    eos = resolve_eos(model, eos_token_id)
    tokens = first_tokens(model, batch_size, prompt)  # (B, 1)
    device = tokens.device
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    past = make_cache(model, cache, max_seqlen)
    positions = torch.arange(max_seqlen, device=device)
    on_cuda = device.type == "cuda"
    lanes = side_streams(device) if streams == 2 else [None, None]  # lanes[i % 2] runs step i
    for lane in lanes:  # the setup above ran on the current stream
        if lane is not None:
            lane.wait_stream(torch.cuda.current_stream(device))
    stop_host = torch.zeros(2, dtype=torch.bool, pin_memory=on_cuda)  # pinned: the copy is truly async
    stop_seen = stop_host.numpy()  # read the flags as plain host memory, no .item()
    copied = [torch.cuda.Event() if on_cuda else None for _ in range(2)]
    steps = max_seqlen
    for i in range(max_seqlen):
        on_step(i)
        cur, prev = i % 2, (i + 1) % 2
        with torch.cuda.stream(lanes[cur]):
            if lanes[cur] is not None:
                lanes[cur].wait_stream(lanes[prev])  # step i-1's tokens, cache and mask
            out = model(tokens[:, -1:], **cache_kwargs(model, past, positions[i : i + 1]))
            new = out.logits[:, -1, :].argmax(dim=-1)  # (B,)
            tokens = torch.cat([tokens, new[:, None]], dim=1)  # (B, i + 2)
            finished |= new == eos
            stop_host[cur].copy_(finished.all(), non_blocking=True)
            if on_cuda:
                copied[cur].record()
        if i > 0:
            if on_cuda:
                copied[prev].synchronize()  # waits for step i-1 only; step i is queued
            if stop_seen[prev]:
                steps = i  # step i-1 was the last one; step i is dropped below
                break
    for lane in lanes:  # nothing may still run when the caller frees or reuses these tensors
        if lane is not None:
            lane.synchronize()
    return tokens[:, : 1 + steps]


@contextlib.contextmanager
def deferred_stop_check(enabled: bool):
    """Force transformers' own deferred stop check on (or off) for every device, `mps` aside.

    transformers >= 5.17 ships `DeferredStopCheck` (the article's idea: read the stop flag one
    step late, undo the extra step) but turns it on only for Apple's mps: "we should enable it
    for cuda if we observe perf gains". Notebook 14_deferred_stop measures that."""
    check = getattr(transformers.generation.utils, "DeferredStopCheck", None)
    if check is None:
        raise RuntimeError(f"a deferred stop check needs transformers >= 5.17; this is {transformers.__version__}")
    original = check.__dict__["is_supported"]

    def is_supported(device, cache, cache_is_returned, is_assistant):  # transformers' rule, any device
        return enabled and not is_assistant and (cache is None or cache.is_croppable or not cache_is_returned)

    check.is_supported = staticmethod(is_supported)
    try:
        yield
    finally:
        check.is_supported = original


@torch.inference_mode()
def transformers_generate(
    model,
    *,
    batch_size,
    max_seqlen,
    eos_token_id=None,
    cache_implementation=None,
    deferred_stop=None,
    prompt=None,
    on_step=no_hook,
):
    """transformers' own `model.generate()`, greedy, from the same prompts (notebooks 10, 11, 14).

    Not held to the naive tokens on early stops: a row that finishes early is padded with the
    EOS id instead of being continued, so the output equals the naive one only when all rows
    stop together or never. `cache_implementation="static"` makes generate() compile the
    decode step itself. `deferred_stop` True/False forces transformers' `DeferredStopCheck`
    on/off (>= 5.17; None: transformers decides). `on_step` is not called: generate() has its own loop.
    """
    check_sizes(model, batch_size, max_seqlen)
    eos = resolve_eos(model, eos_token_id)
    tokens = first_tokens(model, batch_size, prompt)
    kwargs = {"cache_implementation": cache_implementation} if cache_implementation else {}
    # BOS is also the pad id here, so generate() would warn about right-padding at every call
    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    deferred = contextlib.nullcontext() if deferred_stop is None else deferred_stop_check(deferred_stop)
    try:
        with deferred:
            return model.generate(
                tokens,
                attention_mask=torch.ones_like(tokens),
                max_new_tokens=max_seqlen,
                do_sample=False,
                eos_token_id=eos,
                pad_token_id=eos,
                **kwargs,
            )
    finally:
        transformers.logging.set_verbosity(verbosity)


@torch.inference_mode()
def article_pipelined(model, *, batch_size, max_seqlen, eos_token_id=None, prompt=None, on_step=no_hook):
    """The article's two-stream loop as published, kept to show its two flaws (notebook 07).

    1. `stop_host[prev].item()` reads pinned host memory: `wait_stream` orders the GPU, not the
       CPU, so the copy may not have landed and the stop is seen one or more steps late.
    2. It returns `all_tokens` as is, with the token(s) of the steps queued past the stop.
    Not held to the naive tokens: its output can be longer than the naive generator's.

    One line is not the article's: its streams first wait for the setup queued on the current
    stream (the prompt, the positions). As published they do not, so a side stream could read the
    prompt and positions before they are written: a race no notebook measured; this wait rules it
    out.
    """
    check_sizes(model, batch_size, max_seqlen)  # the article checks nothing; bad sizes get one line here
    eos = resolve_eos(model, eos_token_id)
    all_tokens = first_tokens(model, batch_size, prompt)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=all_tokens.device)
    past = make_cache(model, "static", max_seqlen)
    cache_positions = torch.arange(max_seqlen, device=all_tokens.device)
    on_cuda = all_tokens.device.type == "cuda"
    streams = side_streams(all_tokens.device)  # torch.cuda.Stream() in the article; see tokgen.gpu_slice
    for stream in streams:  # not in the article: without it the first steps may read unwritten setup
        if stream is not None:
            stream.wait_stream(torch.cuda.current_stream(all_tokens.device))
    stop_host = [torch.tensor(False, pin_memory=on_cuda), torch.tensor(False, pin_memory=on_cuda)]
    for i in range(max_seqlen):
        on_step(i)
        curr_idx, prev_idx = i % 2, (i + 1) % 2
        curr_s, prev_s = streams[curr_idx], streams[prev_idx]
        with torch.cuda.stream(curr_s):
            if curr_s is not None:
                curr_s.wait_stream(prev_s)
            out = model(all_tokens[:, -1:], **cache_kwargs(model, past, cache_positions[i : i + 1]))
            new_tokens = out.logits[:, -1, :].argmax(dim=-1)
            all_tokens = torch.cat([all_tokens, new_tokens.unsqueeze(-1)], dim=-1)
            finished |= new_tokens == eos
            stop_host[curr_idx].copy_(torch.all(finished), non_blocking=True)
        if prev_s is not None:
            torch.cuda.current_stream().wait_stream(prev_s)
        if stop_host[prev_idx].item():
            break
    if on_cuda:
        torch.cuda.synchronize()
    return all_tokens
