"""Beyond the article: whole decode steps in CUDA graphs, stop check every K steps (notebook 10).

A `GraphDecoder` owns every tensor a decode step touches (output buffer, current token,
position, finished mask, KV cache), so one step is a fixed sequence of kernels on fixed
addresses. K steps are captured in one CUDA graph and replayed with a single launch. The host
reads the stop flag once per replay, one replay late (the pipelining of notebook 07 without a
second stream), and trims whatever was generated past the stop.

Building a decoder (compilation, capture) is setup, like torch.compile: decoders are kept on
the model and reused by later calls with the same sizes.
"""

import functools
import math

import torch
from transformers import StaticCache

from .generators import check_sizes, first_tokens, resolve_eos
from .lean import LeanGPT2
from .model import require_positive, takes_cache_position
from .profiling import annotate, mark_step


def hf_step(model, batch_size: int, capacity: int):
    """One decode step of the transformers model itself on a StaticCache (seed 001's graph)."""
    cache = StaticCache(config=model.config, max_cache_len=capacity)
    with_position = takes_cache_position(model)

    def forward(tokens, pos):  # tokens (B,), pos (1,) -> logits (B, vocab)
        kwargs = {"cache_position": pos} if with_position else {}
        out = model(tokens[:, None], past_key_values=cache, use_cache=True, position_ids=pos[None], **kwargs)
        return out.logits[:, -1, :]

    return forward, cache.reset


def lean_step(model, batch_size: int, capacity: int, compile: bool = True):
    """One decode step of `LeanGPT2`, compiled when `compile`: inductor fuses the elementwise ops.

    On the CPU only dynamo's tracing is exercised (backend "eager"): CPU runs are tests here.
    """
    backend = ("inductor" if model.device.type == "cuda" else "eager") if compile else None
    lean = LeanGPT2(model, batch_size, capacity, compile_backend=backend)

    def reset():
        pass  # stale slots past `pos` are masked out, and every slot is written before it is read

    return lean, reset


class GraphDecoder:
    """Pre-allocated greedy decoding with K steps per CUDA graph replay (CPU: plain calls)."""

    def __init__(self, model, forward, reset_cache, *, batch_size, capacity, eos, steps_per_graph):
        device = model.device
        self.forward, self.reset_cache = forward, reset_cache
        self.eos, self.k, self.capacity = eos, steps_per_graph, capacity
        self.tokens = torch.zeros(batch_size, 1 + capacity, dtype=torch.long, device=device)  # output
        self.current = torch.zeros(batch_size, dtype=torch.long, device=device)  # (B,) newest token
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # position of `current`
        self.finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
        self.all_done = torch.zeros(capacity, dtype=torch.bool, device=device)  # after step i, all finished?
        self.graph = None
        if device.type == "cuda":
            self._capture()

    def step(self) -> None:
        logits = self.forward(self.current, self.pos)  # (B, vocab)
        new = logits.argmax(dim=-1)  # (B,)
        self.tokens.index_copy_(1, self.pos + 1, new[:, None])
        self.finished |= new == self.eos
        self.all_done.index_copy_(0, self.pos, self.finished.all()[None])
        self.current.copy_(new)
        self.pos += 1

    def steps(self) -> None:
        """K steps: one graph launch on CUDA."""
        if self.graph is not None:
            self.graph.replay()
        else:
            for _ in range(self.k):
                self.step()

    def reset(self, prompt: torch.Tensor) -> None:
        """Start over from `prompt` (B, 1), in place: the graph keeps pointing at these tensors."""
        self.tokens[:, :1].copy_(prompt)
        self.current.copy_(prompt[:, 0])
        self.pos.zero_()
        self.finished.zero_()
        self.all_done.zero_()
        self.reset_cache()

    def _capture(self) -> None:
        prompt = self.tokens[:, :1].clone()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up (compilation, lazy allocation) off the capture stream
            for _ in range(2):
                self.step()
        torch.cuda.current_stream().wait_stream(side)
        self.reset(prompt)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(self.k):
                self.step()
        self.graph = graph

    def generate(self, prompt: torch.Tensor, max_seqlen: int) -> torch.Tensor:
        """(B, 1 + steps) tokens, `steps` as for every generator; reads the stop flag one replay late."""
        on_cuda = self.tokens.device.type == "cuda"
        self.reset(prompt)
        flags = torch.zeros(2, dtype=torch.bool, pin_memory=on_cuda)
        seen = flags.numpy()
        copied = [torch.cuda.Event() if on_cuda else None for _ in range(2)]
        replays = math.ceil(max_seqlen / self.k)
        for r in range(replays):
            cur, prev = r % 2, (r + 1) % 2
            mark_step(r * self.k)
            with annotate(f"step {r * self.k}"):
                with annotate("model forward"):
                    self.steps()
                    flags[cur].copy_(self.all_done[(r + 1) * self.k - 1], non_blocking=True)
                    if on_cuda:
                        copied[cur].record()
                if r > 0:
                    with annotate("stop check"):
                        if on_cuda:
                            copied[prev].synchronize()  # replay r-1 is done; replay r is queued
                        if seen[prev]:
                            break
        done = self.all_done[:max_seqlen].nonzero()  # one sync, once: where did every row finish?
        steps = int(done[0, 0]) + 1 if len(done) else max_seqlen
        return self.tokens[:, : 1 + steps].clone()


STEPS = {"hf": hf_step, "lean": functools.partial(lean_step, compile=False), "lean_compiled": lean_step}


def get_decoder(model, step: str, *, batch_size: int, max_seqlen: int, eos: int, steps_per_graph: int) -> GraphDecoder:
    """The decoder for these sizes, built (compiled, captured) on first use and kept on the model."""
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}: choose one of {', '.join(STEPS)}")
    require_positive(steps_per_graph=steps_per_graph)
    # whole replays fit; a multiple of 16 lets K = 1, 2, 4, 8, 16 share one compiled shape
    block = math.lcm(steps_per_graph, 16)
    capacity = math.ceil(max_seqlen / block) * block
    if capacity > model.config.n_positions:
        raise ValueError(
            f"max_seqlen={max_seqlen} rounded up to whole graph replays ({capacity}) exceeds the model's "
            f"{model.config.n_positions} positions"
        )
    key = (step, batch_size, capacity, eos, steps_per_graph)
    decoders = model.__dict__.setdefault("_tokgen_decoders", {})
    if key not in decoders:
        forward, reset_cache = STEPS[step](model, batch_size, capacity)
        decoders[key] = GraphDecoder(
            model,
            forward,
            reset_cache,
            batch_size=batch_size,
            capacity=capacity,
            eos=eos,
            steps_per_graph=steps_per_graph,
        )
    return decoders[key]


@torch.inference_mode()
def generate_graph(model, *, batch_size, max_seqlen, eos_token_id=None, step="hf", steps_per_graph=1, prompt=None):
    """Decode with K = `steps_per_graph` steps per CUDA graph replay and one stop check per replay.

    `step="hf"` replays the transformers model's own step (eager or torch.compile'd),
    `step="lean"` / `"lean_compiled"` the written-out `LeanGPT2` step. Notebook 10_cuda_graphs.
    """
    check_sizes(model, batch_size, max_seqlen)
    eos = resolve_eos(model, eos_token_id)
    decoder = get_decoder(
        model, step, batch_size=batch_size, max_seqlen=max_seqlen, eos=eos, steps_per_graph=steps_per_graph
    )
    return decoder.generate(first_tokens(model, batch_size, prompt), max_seqlen)
