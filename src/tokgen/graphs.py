"""Beyond the article: whole decode steps in CUDA graphs, stop check every K steps (notebook 10).

A `GraphDecoder` owns every tensor a decode step touches (output buffer, current token,
position, finished mask) around a *step*: an object called as ``step(tokens, pos) -> logits``
that keeps its own KV cache and has a ``reset()``. `TransformersStep` wraps the transformers
model on a StaticCache, `tokgen.handwritten.HandwrittenStep` the step written out by hand.
One step is then a fixed sequence of kernels on fixed addresses: K steps are captured in one
CUDA graph and replayed with a single launch. The host reads the stop flag once per replay,
one replay late (the pipelining of notebook 07 without a second stream), and trims whatever
was generated past the stop.
"""

import math
import weakref

import torch
from transformers import StaticCache

from .generators import check_sizes, first_tokens, no_hook, resolve_eos
from .handwritten import HandwrittenStep
from .model import require_positive, takes_cache_position


class TransformersStep:
    """One decode step of the transformers model itself on a StaticCache of `capacity` positions (notebook 10)."""

    def __init__(self, model, capacity: int):
        self.model = model
        self.cache = StaticCache(config=model.config, max_cache_len=capacity)
        self.with_position = takes_cache_position(model)

    def __call__(self, tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        """tokens (B,) at position pos ((1,) LongTensor) -> logits (B, vocab)."""
        kwargs = {"cache_position": pos} if self.with_position else {}
        out = self.model(tokens[:, None], past_key_values=self.cache, use_cache=True, position_ids=pos[None], **kwargs)
        return out.logits[:, -1, :]

    def reset(self) -> None:
        self.cache.reset()


def capture(run, reset=lambda: None, warmups: int = 2) -> torch.cuda.CUDAGraph:
    """A CUDA graph of one call of `run()`. The warm-up calls (compilation, cuBLAS's choice of
    kernels and workspace, lazy allocation) run on a side stream first, `reset()` after each
    (notebooks 10 and 12)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmups):
            run()
            reset()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    return graph


def graph_capacity(max_seqlen: int, steps_per_graph: int) -> int:
    """Positions a decoder allocates: whole replays must fit, and a multiple of 16 lets
    K = 1, 2, 4, 8, 16 share one compiled shape (notebook 10). N=100, K=4 -> 112."""
    block = math.lcm(steps_per_graph, 16)
    return math.ceil(max_seqlen / block) * block


class GraphDecoder:
    """Pre-allocated greedy decoding with K steps per CUDA graph replay (CPU: plain calls; notebook 10)."""

    def __init__(self, step, *, batch_size: int, capacity: int, eos: int, steps_per_graph: int, device):
        require_positive(batch_size=batch_size, capacity=capacity, steps_per_graph=steps_per_graph)
        self.step, self.eos, self.k, self.capacity = step, eos, steps_per_graph, capacity
        self.tokens = torch.zeros(batch_size, 1 + capacity, dtype=torch.long, device=device)  # output
        self.current = torch.zeros(batch_size, dtype=torch.long, device=device)  # (B,) newest token
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # position of `current`
        self.finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
        self.all_done = torch.zeros(capacity, dtype=torch.bool, device=device)  # after step i, all finished?
        self.graph = None
        if torch.device(device).type == "cuda":
            prompt = self.tokens[:, :1].clone()
            self.graph = capture(self.run_steps, reset=lambda: self.reset(prompt))

    def decode_step(self) -> None:
        """One token for every row, on the decoder's own tensors."""
        logits = self.step(self.current, self.pos)  # (B, vocab)
        new = logits.argmax(dim=-1)  # (B,)
        self.tokens.index_copy_(1, self.pos + 1, new[:, None])
        self.finished |= new == self.eos
        self.all_done.index_copy_(0, self.pos, self.finished.all()[None])
        self.current.copy_(new)
        self.pos += 1

    def run_steps(self) -> None:
        """K decode steps: what the graph holds."""
        for _ in range(self.k):
            self.decode_step()

    def reset(self, prompt: torch.Tensor) -> None:
        """Start over from `prompt` (B, 1), in place: the graph keeps pointing at these tensors."""
        self.tokens[:, :1].copy_(prompt)
        self.current.copy_(prompt[:, 0])
        self.pos.zero_()
        self.finished.zero_()
        self.all_done.zero_()
        self.step.reset()

    def generate(self, prompt: torch.Tensor, max_seqlen: int, on_step=no_hook) -> torch.Tensor:
        """(B, 1 + steps) tokens, `steps` as for every generator; reads the stop flag one replay late."""
        on_cuda = self.graph is not None
        self.reset(prompt)
        flags = torch.zeros(2, dtype=torch.bool, pin_memory=on_cuda)
        seen = flags.numpy()
        copied = [torch.cuda.Event() if on_cuda else None for _ in range(2)]
        for r in range(math.ceil(max_seqlen / self.k)):
            on_step(r * self.k)
            cur, prev = r % 2, (r + 1) % 2
            if on_cuda:
                self.graph.replay()  # K steps, one launch
            else:
                self.run_steps()
            flags[cur].copy_(self.all_done[(r + 1) * self.k - 1], non_blocking=True)
            if on_cuda:
                copied[cur].record()
            if r > 0:
                if on_cuda:
                    copied[prev].synchronize()  # replay r-1 is done; replay r is queued
                if seen[prev]:
                    break
        done = self.all_done[:max_seqlen].nonzero()  # one sync, once: where did every row finish?
        steps = int(done[0, 0]) + 1 if len(done) else max_seqlen
        return self.tokens[:, : 1 + steps].clone()


# Building a decoder (compilation, capture) is setup, like torch.compile: the registry's graph
# generators keep theirs here, per model (freed with it) and per sizes, and reuse them.
DECODERS: "weakref.WeakKeyDictionary[torch.nn.Module, dict]" = weakref.WeakKeyDictionary()


@torch.inference_mode()
def generate_graph(
    model,
    *,
    batch_size,
    max_seqlen,
    eos_token_id=None,
    step="transformers",
    steps_per_graph=4,
    compile_backend=None,
    prompt=None,
    on_step=no_hook,
):
    """Decode with K = `steps_per_graph` steps per CUDA graph replay and one stop check per replay.

    `step="transformers"` replays the transformers model's own step (eager, or compiled if the
    model is), `step="handwritten"` the step written out by hand, compiled with
    `compile_backend` when given. The decoder is built on first use and kept in `DECODERS`.
    Notebook 10_cuda_graphs.
    """
    check_sizes(model, batch_size, max_seqlen)
    require_positive(steps_per_graph=steps_per_graph)
    if step not in ("transformers", "handwritten"):
        raise ValueError(f"unknown step {step!r}: choose 'transformers' or 'handwritten'")
    if step == "transformers" and compile_backend is not None:
        raise ValueError("compile the model itself (torch.compile) for a compiled transformers step")
    eos = resolve_eos(model, eos_token_id)
    capacity = graph_capacity(max_seqlen, steps_per_graph)
    if capacity > model.config.n_positions:
        raise ValueError(
            f"max_seqlen={max_seqlen} rounded up to whole graph replays ({capacity}) exceeds the model's "
            f"{model.config.n_positions} positions"
        )
    key = (step, batch_size, capacity, eos, steps_per_graph, compile_backend)
    decoders = DECODERS.setdefault(model, {})
    if key not in decoders:
        decoders[key] = GraphDecoder(
            TransformersStep(model, capacity)  # compiled if the model is
            if step == "transformers"
            else HandwrittenStep(model, batch_size, capacity, compile_backend=compile_backend),
            batch_size=batch_size,
            capacity=capacity,
            eos=eos,
            steps_per_graph=steps_per_graph,
            device=model.device,
        )
    return decoders[key].generate(first_tokens(model, batch_size, prompt), max_seqlen, on_step)
