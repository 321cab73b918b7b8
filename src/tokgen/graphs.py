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

import functools
import math
import weakref

import numpy as np
import torch
from transformers import StaticCache

try:  # cuda-python: the WHILE node of DeviceStopDecoder (installed on our GPU machines)
    from cuda.bindings import driver, nvrtc
    from cuda.bindings import runtime as cudart
except ImportError:
    driver = nvrtc = cudart = None

from .generators import check_sizes, first_tokens, no_hook, resolve_eos
from .handwritten import FusedStep, HandwrittenStep, TritonStep
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
        if hasattr(self.step, "decode"):  # a step that does the whole step itself (FusedStep)
            self.step.decode(self)
            return
        logits = self.step(self.current, self.pos)  # (B, vocab)
        self.take(logits.argmax(dim=-1))

    def take(self, new: torch.Tensor) -> None:
        """Record the new token of every row (B,): at column pos + 1, as the current token, in the
        finished mask and all_done[pos]; then pos += 1."""
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


# The stop check as a CUDA kernel: it sets the WHILE node's condition, on the GPU, from the
# decoder's own tensors. cudaGraphSetConditional is a device-runtime builtin; declaring it here
# spares NVRTC the CUDA headers (as NVIDIA NeMo's label-looping decoders do).
KEEP_DECODING = r"""
typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                      unsigned int value);
extern "C" __global__ void keep_decoding(cudaGraphConditionalHandle handle, const bool *finished, int rows,
                                         const long long *pos, const long long *limit) {
    bool all_finished = true;
    for (int r = 0; r < rows; ++r) all_finished &= finished[r];
    cudaGraphSetConditional(handle, !all_finished && *pos < *limit);
}
"""


def cuda_ok(result):
    """cuda-python returns (error, *values): the values, or one clear error (notebook 10_cuda_graphs)."""
    error, *values = result
    if int(error) != 0:
        raise RuntimeError(f"CUDA call failed: {error!r}")
    return values[0] if len(values) == 1 else values


@functools.cache
def keep_decoding_kernel(device_index: int):
    """`KEEP_DECODING` compiled by NVRTC for this GPU and loaded (notebook 10_cuda_graphs)."""
    if cudart is None:
        raise RuntimeError("a WHILE node needs cuda-python (pip install cuda-python): cuda.bindings is missing")
    major, minor = torch.cuda.get_device_capability(device_index)
    program = cuda_ok(nvrtc.nvrtcCreateProgram(KEEP_DECODING.encode(), b"keep_decoding.cu", 0, [], []))
    options = [f"--gpu-architecture=sm_{major}{minor}".encode()]
    if int(nvrtc.nvrtcCompileProgram(program, len(options), options)[0]) != 0:
        log = bytearray(cuda_ok(nvrtc.nvrtcGetProgramLogSize(program)))
        nvrtc.nvrtcGetProgramLog(program, log)
        raise RuntimeError(f"NVRTC: {log.decode(errors='replace')}")
    cubin = bytearray(cuda_ok(nvrtc.nvrtcGetCUBINSize(program)))
    cuda_ok(nvrtc.nvrtcGetCUBIN(program, cubin))
    module = cuda_ok(driver.cuModuleLoadData(bytes(cubin)))
    return cuda_ok(driver.cuModuleGetFunction(module, b"keep_decoding"))


@functools.cache
def body_capture_stream(device_index: int) -> torch.cuda.ExternalStream:
    """A stream of our own to capture WHILE bodies on (notebook 10_cuda_graphs): `torch.cuda.Stream()`
    hands out its pool's few streams in turn, and can return the very stream being captured."""
    with torch.cuda.device(device_index):
        stream = cuda_ok(cudart.cudaStreamCreateWithFlags(1))  # 1: cudaStreamNonBlocking
    return torch.cuda.ExternalStream(int(stream), device=torch.device("cuda", device_index))


def capture_while(condition, body) -> None:
    """Inside a CUDA graph capture: a WHILE node whose body graph holds `body()`'s kernels
    (notebook 10_cuda_graphs). `condition(stream)` launches the kernel that sets the node's
    condition: once before the node (run the first iteration at all?) and at the end of every
    iteration (run another?). The GPU loops; the host has queued one graph.
    """
    stream = torch.cuda.current_stream()
    graph = cuda_ok(cudart.cudaStreamGetCaptureInfo(stream.cuda_stream))[2]
    handle = cuda_ok(cudart.cudaGraphConditionalHandleCreate(graph, 0, 0))
    condition(stream, handle)
    _, _, graph, dependencies, *_ = cuda_ok(cudart.cudaStreamGetCaptureInfo(stream.cuda_stream))
    params = driver.CUgraphNodeParams()
    params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
    params.conditional.handle = handle
    params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
    params.conditional.size = 1
    params.conditional.ctx = cuda_ok(driver.cuCtxGetCurrent())
    node = cuda_ok(driver.cuGraphAddNode(graph, dependencies, None, len(dependencies), params))
    set_dependencies = cudart.cudaStreamUpdateCaptureDependenciesFlags.cudaStreamSetCaptureDependencies
    cuda_ok(cudart.cudaStreamUpdateCaptureDependencies(stream.cuda_stream, [node], None, 1, set_dependencies))
    # the body graph is filled by capturing a second stream into it; torch does not know that
    # capture, so the body's temporaries come from a pool of their own that lives with the graph
    body_stream, pool = body_capture_stream(torch.cuda.current_device()), torch.cuda.MemPool()
    mode = cudart.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal
    cuda_ok(
        cudart.cudaStreamBeginCaptureToGraph(
            body_stream.cuda_stream, params.conditional.phGraph_out[0], None, None, 0, mode
        )
    )
    try:
        with torch.cuda.stream(body_stream), torch.cuda.use_mem_pool(pool):
            body()
            condition(body_stream, handle)
    except BaseException:
        cudart.cudaStreamEndCapture(body_stream.cuda_stream)  # its own error would hide the first one
        raise
    cuda_ok(cudart.cudaStreamEndCapture(body_stream.cuda_stream))
    return pool


class DeviceStopDecoder(GraphDecoder):
    """The whole decode in one CUDA graph launch that stops on the GPU (notebook 10_cuda_graphs).

    The graph is a WHILE node around one decode step; the `keep_decoding` kernel ends the loop
    when every row has finished or `max_seqlen` steps are done. No step runs past the stop, and
    the host waits once per generation, to read how many steps ran. On a CPU: the same loop in Python.
    """

    def __init__(self, step, *, batch_size: int, capacity: int, eos: int, device):
        self.limit = torch.full((1,), capacity, dtype=torch.long, device=device)  # max_seqlen of this call
        if torch.device(device).type == "cuda":
            keep_decoding_kernel(self.limit.device.index or 0)  # compile and load it before any capture
        super().__init__(step, batch_size=batch_size, capacity=capacity, eos=eos, steps_per_graph=1, device=device)

    def keep_decoding(self, stream, handle) -> None:
        """Launch the stop check on `stream`: sets `handle` to 'some row unfinished and steps left'."""
        kernel = keep_decoding_kernel(self.pos.device.index or 0)
        pointers = [np.array([t.data_ptr()], dtype=np.uint64) for t in (self.finished, self.pos, self.limit)]
        rows = np.array([len(self.finished)], dtype=np.int32)
        # cuLaunchKernel takes the address of each argument's value
        values = [
            handle.getPtr(),
            pointers[0].ctypes.data,
            rows.ctypes.data,
            pointers[1].ctypes.data,
            pointers[2].ctypes.data,
        ]
        args = np.array(values, dtype=np.uint64)
        cuda_ok(driver.cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, stream.cuda_stream, args.ctypes.data, 0))

    def run_steps(self) -> None:
        """What the graph holds: decode steps while some row is unfinished and steps remain."""
        if self.pos.is_cuda and torch.cuda.is_current_stream_capturing():
            self.pool = capture_while(self.keep_decoding, self.decode_step)
            return
        while bool(self.pos[0] < self.limit[0]) and not bool(self.finished.all()):  # the host checks (CPU, warm-up)
            self.decode_step()

    def generate(self, prompt: torch.Tensor, max_seqlen: int, on_step=no_hook) -> torch.Tensor:
        """(B, 1 + steps) tokens, `steps` as for every generator, from one replay and one sync."""
        require_positive(max_seqlen=max_seqlen)
        if max_seqlen > self.capacity:
            raise ValueError(f"max_seqlen={max_seqlen} exceeds this decoder's capacity of {self.capacity}")
        self.reset(prompt)
        self.limit.fill_(max_seqlen)
        on_step(0)
        if self.graph is not None:
            self.graph.replay()  # every step, and the stop, on the GPU
        else:
            self.run_steps()
        steps = int(self.pos)  # the one sync: how many steps ran?
        return self.tokens[:, : 1 + steps].clone()


STEPS = ("transformers", "handwritten", "triton", "fused")  # what generate_graph's decoders can wrap

# Building a decoder (compilation, capture) is setup, like torch.compile: the registry's graph
# generators keep theirs here, per model (freed with it) and per sizes, and reuse them.
DECODERS: "weakref.WeakKeyDictionary[torch.nn.Module, ModelDecoders]" = weakref.WeakKeyDictionary()


def parameters_state(params) -> tuple:
    """Each parameter's storage address and version counter (notebook 10_cuda_graphs): an in-place
    change (`load_state_dict`, an edit under `torch.no_grad()`) bumps the version, `.to()` and
    `.half()` move the storage. (An edit through `.data` bumps nothing: `forget_decoders` then.)"""
    return tuple((p.data_ptr(), p._version) for p in params)


class ModelDecoders(dict):
    """The decoders built for one model, by sizes and options, and the state of the parameters
    they were built from (notebook 10_cuda_graphs)."""

    def __init__(self, model):
        super().__init__()
        self.params = tuple(model.parameters())  # walking the modules costs ~0.2 ms: once
        self.state = parameters_state(self.params)


def decoders_of(model) -> ModelDecoders:
    """The decoders built for `model`; none if its weights, dtype or device changed since they were
    built, so a decoder never replays old weights (notebook 10_cuda_graphs). Checking costs ~25 µs."""
    built = DECODERS.get(model)
    if built is None or parameters_state(built.params) != built.state:
        built = DECODERS[model] = ModelDecoders(model)  # the stale ones (graphs, caches) are freed
    return built


def forget_decoders(model) -> None:
    """Drop the decoders built for `model`: after an edit the version counters do not see
    (through `.data`, or a replaced submodule); the next call builds afresh (notebook 10_cuda_graphs)."""
    DECODERS.pop(model, None)


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
    filled_only=False,
    stop_on_device=False,
    prompt=None,
    on_step=no_hook,
):
    """Decode from CUDA graph replays: K = `steps_per_graph` steps per replay and one stop check per
    replay, or (`stop_on_device=True`) the whole decode in one replay that stops on the GPU.

    `step="transformers"` replays the transformers model's own step (eager, or compiled if the
    model is), `step="handwritten"` the step written out by hand, compiled with
    `compile_backend` when given, attending over the filled slots only with `filled_only`;
    `step="triton"` the same step on our own kernels (`TritonStep`), `step="fused"` on fewer of
    them, the end of the step included (`FusedStep`).
    `stop_on_device=True` replays the whole decode once and stops on the GPU
    (`DeviceStopDecoder`; K does not apply). The decoder is built on first use and kept in
    `DECODERS` until the model's parameters change. Notebook 10_cuda_graphs.
    """
    check_sizes(model, batch_size, max_seqlen)
    require_positive(steps_per_graph=steps_per_graph)
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}: choose one of {', '.join(STEPS)}")
    if step != "handwritten" and (compile_backend is not None or filled_only):
        raise ValueError("compile_backend and filled_only are options of the handwritten step")
    if step != "transformers" and model.dtype != torch.float32:
        raise ValueError(f"the {step} step runs GPT-2 in float32, this model is {model.dtype}: use step='transformers'")
    eos = resolve_eos(model, eos_token_id)
    prompt = first_tokens(model, batch_size, prompt)  # (B, 1), checked before anything is built
    if stop_on_device:
        steps_per_graph = 1  # one capacity for every K: whole steps, rounded up to 16
    capacity = graph_capacity(max_seqlen, steps_per_graph)
    if capacity > model.config.n_positions:
        raise ValueError(
            f"max_seqlen={max_seqlen} rounded up to whole graph replays ({capacity}) exceeds the model's "
            f"{model.config.n_positions} positions"
        )
    key = (step, batch_size, capacity, eos, steps_per_graph, compile_backend, filled_only, stop_on_device)
    decoders = decoders_of(model)  # rebuilt when the model's weights, dtype or device changed
    if key not in decoders:
        if step == "transformers":
            one_step = TransformersStep(model, capacity)  # compiled if the model is
        elif step == "handwritten":
            one_step = HandwrittenStep(model, batch_size, capacity, compile_backend, filled_only)
        elif step == "triton":
            one_step = TritonStep(model, batch_size, capacity)
        else:
            one_step = FusedStep(model, batch_size, capacity)
        sizes = {"batch_size": batch_size, "capacity": capacity, "eos": eos, "device": model.device}
        if stop_on_device:
            decoders[key] = DeviceStopDecoder(one_step, **sizes)
        else:
            decoders[key] = GraphDecoder(one_step, steps_per_graph=steps_per_graph, **sizes)
    return decoders[key].generate(prompt, max_seqlen, on_step)
