"""An L40S-class slice of the GPU: a green context of N SMs (notebook 13_regimes; `GPU_SMS` in
every GPU notebook).

A green context confines the kernels of its streams to N of the GPU's SMs, so memory bandwidth,
compute and latency all shrink with N; notebook 13 measures which slice's copy bandwidth comes
closest to the L40S's 864 GB/s (datasheet), and says what such a slice does not match. Only the context's own
streams are confined; a `torch.cuda.Stream()` created while it is current is not. So the
two-stream generators take their streams from `side_streams()`, never from torch.cuda.Stream.
"""

import ctypes
import functools
import statistics

import torch
from torch.cuda import green_contexts  # torch >= 2.10; SUPPORTED only in builds with CUDA 12.4+

from .model import require_cuda, require_positive, synchronize

L40S_GBS = 864  # the article's GPU: NVIDIA L40S, 864 GB/s of DRAM bandwidth (datasheet)


def gpu_times(run, runs: int) -> list[float]:
    """Milliseconds of GPU time of each of `runs` calls of `run()`, from CUDA events (notebook 12)."""
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def copy_bandwidth(device: str | torch.device = "cuda", megabytes: int = 1024, runs: int = 20, stream=None) -> float:
    """Device-to-device copy bandwidth in GB/s, bytes read plus bytes written (median), on the
    current stream or on `stream` (notebooks 12 and 13)."""
    src = torch.rand(megabytes * 2**20 // 4, device=device)
    dst = torch.empty_like(src)
    with torch.cuda.stream(stream):
        dst.copy_(src)  # warm-up
        seconds = statistics.median(gpu_times(lambda: dst.copy_(src), runs)) / 1e3
    return 2 * src.numel() * src.element_size() / seconds / 1e9


@functools.cache
def _libcuda():
    return ctypes.CDLL("libcuda.so.1")


def current_context() -> int:
    """The CUDA driver's current context on this thread, as an address (notebook 13_regimes)."""
    handle = ctypes.c_void_p()
    _libcuda().cuCtxGetCurrent(ctypes.byref(handle))
    return handle.value or 0


def _set_device_in_slice(device) -> None:
    """`torch.cuda.set_device` inside a slice. Code that torch.compile generates calls
    `torch.cuda.set_device(0)` on every call, and that (cudaSetDevice) makes the whole GPU's
    context current again: inside a slice, setting the device it is on does nothing."""
    if torch.cuda._get_device_index(device) != torch.cuda.current_device():
        raise RuntimeError("a GPU slice lives on one device: torch.cuda.set_device to another one inside it")


class GpuSlice:
    """A green context of `sms` SMs, its two streams and its measured copy bandwidth. `with
    GpuSlice(8):` runs the block's kernels on 8 SMs; leaving it restores the whole GPU
    (notebook 13_regimes). The driver may round the SM count up to its own granularity, so a
    slice's bandwidth is measured here, never assumed from `sms`.
    There is one slice per SM count, never destroyed: streams and the caching allocator's
    blocks may still refer to its context after the block is left."""

    active: "GpuSlice | None" = None  # the slice the current code runs in; None: the whole GPU
    made: "dict[int, GpuSlice]" = {}

    def __new__(cls, sms: int, device: int = 0):
        return cls.made.get(sms) or super().__new__(cls)

    def __init__(self, sms: int, device: int = 0):
        if GpuSlice.made.get(sms) is self:
            return
        require_positive(GPU_SMS=sms)
        require_cuda(f"a GPU slice (GPU_SMS={sms})")
        total = torch.cuda.get_device_properties(device).multi_processor_count
        if sms > total:
            raise ValueError(f"GPU_SMS={sms} exceeds the {total} SMs of {torch.cuda.get_device_name(device)}")
        if not getattr(green_contexts, "SUPPORTED", False):
            raise RuntimeError(f"torch {torch.__version__} was built without green contexts: no GPU slice")
        # torch makes its pool of streams on the first torch.cuda.Stream(), in the context current
        # then: made inside a slice, every later torch.cuda.Stream() would be confined to it.
        torch.cuda.Stream(device)
        self.sms, self.context, self.outer = sms, green_contexts.GreenContext.create(num_sms=sms, device_id=device), []
        with self:  # streams made while the context is current, by the context itself: confined
            self.streams = [self.context.Stream(), self.context.Stream()]
            self.copy_gbs = copy_bandwidth(megabytes=256)
        GpuSlice.made[sms] = self

    def __enter__(self) -> "GpuSlice":
        synchronize()
        self.context.set_context()  # from here the current stream is the slice's
        self.handle = current_context()
        self.outer.append((GpuSlice.active, torch.cuda.set_device))
        GpuSlice.active, torch.cuda.set_device = self, _set_device_in_slice
        return self

    def confine(self) -> bool:
        """Make the slice current again if something switched the thread back to the whole GPU's
        context (a cudaSetDevice does); True if it had to. `compare` calls it around every run."""
        if current_context() == self.handle:
            return False
        _libcuda().cuCtxSetCurrent(ctypes.c_void_p(self.handle))
        return True

    def __exit__(self, *exc) -> None:
        synchronize()
        self.confine()  # torch pops the context it pushed, and checks that it does
        self.context.pop_context()
        GpuSlice.active, torch.cuda.set_device = self.outer.pop()


def bracketing(bandwidths: dict[int, float], target: float = L40S_GBS) -> tuple[int, int]:
    """The two slice sizes whose measured copy bandwidths bracket `target` (by default the L40S's):
    the largest one below it and the smallest one above it (notebook 13_regimes). Slices come in
    steps of SMs, so no slice matches the L40S; the two around it show where a claim starts to hold."""
    below = [sms for sms, gbs in bandwidths.items() if gbs < target]
    above = [sms for sms, gbs in bandwidths.items() if gbs >= target]
    if not below or not above:
        measured = ", ".join(f"{sms} SMs {gbs:,.0f} GB/s" for sms, gbs in sorted(bandwidths.items()))
        raise ValueError(f"no two measured slices bracket {target:,.0f} GB/s ({measured}): measure more slice sizes")
    return max(below, key=lambda sms: bandwidths[sms]), min(above, key=lambda sms: bandwidths[sms])


def bracket_or_all(bandwidths: dict[int, float], target: float = L40S_GBS) -> tuple[tuple[int, ...], bool]:
    """The slices a regime map runs in, and whether they bracket `target` (`bracketing`): the two that do and
    True, or, where no two do (a GPU slower than the L40S, or every size measured on one side of it), every
    size measured, in order, and False, so that no slice is then called a bracketing one (notebook 13_regimes)."""
    try:
        return bracketing(bandwidths, target), True
    except ValueError:
        return tuple(bandwidths), False


def sizes_that_fit(sizes: list[int], parameter: str = "SLICE_SMS", device: int = 0) -> list[int]:
    """The slice sizes this GPU can hold (at most its SM count), in order; each size it cannot is
    said in one line naming `parameter` and skipped, so the defaults run on a GPU of fewer SMs (an
    L4 has 58) (notebook 13_regimes)."""
    total = torch.cuda.get_device_properties(device).multi_processor_count
    too_big = [sms for sms in sizes if sms > total]
    if too_big:
        print(f"{parameter}: {', '.join(map(str, too_big))} exceed(s) the {total} SMs of "
              f"{torch.cuda.get_device_name(device)}: skipped")  # fmt: skip
    return [sms for sms in sizes if sms <= total]


def use_slice(sms: int | None) -> GpuSlice | None:
    """Enter a slice of `sms` SMs for the rest of the process (a notebook's `GPU_SMS`), or do
    nothing for None (the whole GPU); prints what was entered (notebook 13_regimes)."""
    if sms is None:
        return None
    gpu_slice = GpuSlice(sms).__enter__()
    print(f"running in a green-context slice of {sms} SMs: copy bandwidth {gpu_slice.copy_gbs:,.0f} GB/s "
          "(bytes read + written)")  # fmt: skip
    return gpu_slice


def side_streams(device: torch.device) -> list:
    """The two streams of a two-stream generator: the active slice's own (confined to its SMs),
    new CUDA streams on the whole GPU, `None` (no stream switching) on the CPU (notebook 07)."""
    if device.type != "cuda":
        return [None, None]
    return GpuSlice.active.streams if GpuSlice.active else [torch.cuda.Stream(device) for _ in range(2)]


def slice_columns() -> dict:
    """What every result row says about the slice it was measured in (notebook 13_regimes)."""
    s = GpuSlice.active
    return {"gpu_sms": s.sms if s else "all", "slice_copy_gbs": round(s.copy_gbs, 1) if s else ""}
