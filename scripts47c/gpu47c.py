"""Issue 47 (helper i47c): the copy curve's cause and fix, the waterfall before/after, the persistent bound.

python gpu47c.py [PART ...]  parts: diag, curve, waterfall, persistent (default all); writes $OUT/w, packs $OUT/r47c.tgz
"""

import json
import os
import statistics
import subprocess
import sys
import tarfile
import time
import traceback
from pathlib import Path

import pandas as pd
import torch

import tokgen
from tokgen import persistent as P
from tokgen import waterfall as W

T0 = time.time()
OUT = Path(os.environ.get("OUT", "build/out47c"))
WORK = OUT / "w"
WORK.mkdir(parents=True, exist_ok=True)
PARTS = sys.argv[1:] or ["curve", "persistent", "waterfall", "engine"]
BUDGET = float(os.environ.get("BUDGET", "480"))
B, N, K, RUNS = 32, 100, 4, 20
LOG = open(WORK / "log.txt", "a")
pd.set_option("display.width", 250)
pd.set_option("display.max_columns", 30)


def say(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)
    LOG.write(line + "\n")
    LOG.flush()


def pack():
    with tarfile.open(OUT / "r47c.tgz", "w:gz") as tar:
        tar.add(WORK, arcname="w")


def save(df, name):
    df.to_csv(WORK / f"{name}.csv", index=False)
    say(f"{name}:\n{df.to_string()}")


def memcpy_curve(sizes, runs, device="cuda"):
    """The old copy_time_curve (main 85fd64f): the driver's DtoD memcpy on contiguous slices."""
    l2 = torch.cuda.get_device_properties(device).L2_cache_size
    rows = []
    for size in sizes:
        n = max(1, size // 8)
        count = max(2, -(-4 * l2 // (4 * n)))
        src, dst = torch.rand(count * n, device=device), torch.empty(count * n, device=device)
        dst[:n].copy_(src[:n])

        def copies(src=src, dst=dst, n=n, count=count):
            for i in range(runs):
                j = i % count
                dst[j * n : (j + 1) * n].copy_(src[j * n : (j + 1) * n])

        events, _ = W._profiled(copies)
        us = statistics.median(list(events["end"] - events["start"]))
        rows.append({"bytes": 8 * n, "copy_us": us, "copy_gb_s": 8 * n / us / 1e3})
    return pd.DataFrame(rows)


def timed(fn, runs, label):
    events, _ = W._profiled(lambda: [fn(i) for i in range(runs)])
    names = sorted(set(events["name"]))
    return statistics.median(list(events["end"] - events["start"])), names, len(events)


def diag():
    """Per copy size (bytes copied = read), several ways: which cases are slow, and why."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sizes = [786432, 1179648, 1181184, 1183744, 1180672, 3547136, 3548160, 4718592, 4720128, 4730880,
             2**20 + 512, 2**20 + 2048]  # fmt: skip
    rows = []
    pool = torch.rand(3 * l2 // 4 + (1 << 22), device="cuda")
    out = torch.empty_like(pool)
    for s in sizes:
        n = s // 4
        for layout, stride in (("contiguous", n), ("aligned64k", -(-n // 16384) * 16384), ("off512", None)):
            if stride is None:  # 64 KiB-aligned slots, each copy starting 512 bytes in
                stride = -(-n // 16384) * 16384 + 16384
                shift = 128
            else:
                shift = 0
            count = max(2, min(pool.numel() // stride - 1, -(-2 * l2 // (4 * stride))))

            def mem(i, n=n, stride=stride, count=count, shift=shift):
                j = (i % count) * stride + shift
                out[j : j + n].copy_(pool[j : j + n])

            def kern(i, n=n, stride=stride, count=count, shift=shift):
                j = (i % count) * stride + shift
                W.copy_kernel(pool[j : j + n], out[j : j + n], 4096, 8)

            def mul(i, n=n, stride=stride, count=count, shift=shift):
                j = (i % count) * stride + shift
                torch.mul(pool[j : j + n], 1.0, out=out[j : j + n])

            for how, fn in (("memcpy", mem), ("triton4096", kern), ("torch_mul", mul)):
                fn(0)
                us, names, k = timed(fn, 30, how)
                rows.append({"copy_bytes": s, "mod4096": s % 4096, "layout": layout, "how": how, "us": us,
                             "gb_s": 2 * s / us / 1e3, "events": k, "names": ";".join(names)[:80]})  # fmt: skip
    save(pd.DataFrame(rows), "diag_sizes")
    engine()


def engine():
    # a memcpy beside a kernel that holds every SM: a copy engine runs it at once, an SM copy waits
    spin = []
    side = None
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def _busy(x, ITERS: tl.constexpr):
            i = tl.program_id(0)
            acc = tl.load(x + i)
            for _ in range(ITERS):
                acc = acc * 1.000001 + 0.5
            tl.store(x + i, acc)

        sms = torch.cuda.get_device_properties(0).multi_processor_count
        grid = sms * 16  # 16 programs of 4 warps fill an SM's 2048 threads: one wave
        x = torch.rand(grid, device="cuda")
        _busy[(grid,)](x, ITERS=200000, num_warps=4)
        side = torch.cuda.Stream()
        for s in (786432, 1181184, 3548160, 4730880):
            n = s // 4
            a, b = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")

            def both(a=a, b=b):
                _busy[(grid,)](x, ITERS=200000, num_warps=4)  # no dependency between the streams
                with torch.cuda.stream(side):
                    b.copy_(a)
                    W.copy_kernel(a, b, 2048, 4)  # an SM copy, for contrast
                torch.cuda.current_stream().wait_stream(side)

            ev, _ = W._profiled(both)
            busy = ev[ev["name"].str.contains("_busy")].iloc[0]
            cp = ev[ev["kind"] == "memcpy"].iloc[0]
            kc = ev[ev["name"].str.contains("_copy_kernel")].iloc[0]
            spin.append({"copy_bytes": s, "busy_start": busy["start"], "busy_end": busy["end"],
                         "memcpy_start": cp["start"], "memcpy_end": cp["end"], "memcpy_us": cp["end"] - cp["start"],
                         "kernel_copy_start": kc["start"], "kernel_copy_end": kc["end"],
                         "memcpy_ran_inside_busy": bool(cp["end"] < busy["end"])})  # fmt: skip
    except Exception:  # noqa: BLE001
        say("spin test failed:", traceback.format_exc()[-1500:])
    if spin:
        save(pd.DataFrame(spin), "diag_engine")


def versions():
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.memory", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    import triton

    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__,
            "gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi,
            "sms": torch.cuda.get_device_properties(0).multi_processor_count,
            "l2": torch.cuda.get_device_properties(0).L2_cache_size}  # fmt: skip
    (WORK / "info.json").write_text(json.dumps(info, indent=1))
    say(info)


STATE = {}


def curve():
    model = STATE.setdefault("model", tokgen.build_model("gpt2", "cuda"))
    sizes = W.copy_sizes(model, B, N)
    STATE["bw"] = tokgen.bandwidth.copy_bandwidth("cuda", 1024, RUNS)
    STATE["tflops"] = tokgen.bandwidth.matmul_tflops("cuda")
    say("copy bandwidth", STATE["bw"], "tflops", STATE["tflops"])
    old = memcpy_curve(sizes, RUNS)
    new = W.copy_time_curve(sizes, RUNS)
    STATE["old"], STATE["new"] = old, new
    both = old.rename(columns={"copy_us": "memcpy_us", "copy_gb_s": "memcpy_gb_s"}).merge(
        new.rename(columns={"copy_us": "kernel_us", "copy_gb_s": "kernel_gb_s"}), on="bytes")
    both["bytes_mod_8192"] = both["bytes"] % 8192  # read + written: a copy of bytes/2, mod 4096
    save(both, "copy_curve_before_after")
    # the kernel's per-configuration medians, for the record
    rows = []
    for size in sizes if os.environ.get("PER_BLOCK") else []:
        for blk in W.COPY_BLOCKS:
            c = W.copy_time_curve([size], RUNS, blocks=(blk,))
            rows.append({"bytes": size, "block": blk[0], "warps": blk[1], "us": c["copy_us"].iloc[0]})
    if rows:
        per_block = pd.DataFrame(rows).pivot(index="bytes", columns="block", values="us")
        save(per_block.reset_index(), "copy_curve_per_block")
    big = W.copy_time_curve([1 << 31], 10)
    say("kernel copy of 1 GiB (2 GiB moved):", big.to_dict("records"), "memcpy bandwidth", STATE["bw"])


def waterfall():
    model = STATE["model"]
    rows, kern = [], []
    for name in ("memcpy_curve", "kernel_curve", "memcpy_curve_again", "kernel_curve_again"):
        c = STATE["old"] if name.startswith("memcpy") else STATE["new"]
        out = W.measure_waterfall(model, batch_size=B, max_seqlen=N, steps_per_graph=K, runs=RUNS,
                                  bandwidth_gbs=STATE["bw"], tflops=STATE["tflops"], curve=c)  # fmt: skip
        t = out["terms"].assign(curve=name)
        rows.append(t)
        kern.append(out["kernels"].assign(curve=name))
        say(name, out["summary"])
    terms = pd.concat(rows)
    terms.to_csv(WORK / "waterfall_terms.csv", index=False)
    pd.concat(kern).to_csv(WORK / "waterfall_kernels.csv", index=False)
    wide = terms.pivot_table(index="term", columns="curve", values="ms", sort=False).reset_index()
    say("waterfall terms (ms):\n" + wide.to_string())
    k = pd.concat(kern)
    say("kernels:\n" + k[["curve", "kernel", "what", "launches", "mb", "median_us", "own_ms", "at_copy_ms",
                          "at_size_ms",
                          "pct_of_copy_bandwidth"]].to_string())  # fmt: skip


def persistent():
    model = STATE.setdefault("model", tokgen.build_model("gpt2", "cuda"))
    bw = STATE.get("bw") or tokgen.bandwidth.copy_bandwidth("cuda", 1024, RUNS)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    variants = {
        "stream_t4k_1x": {"mode": "stream", "tile": 4096, "programs": sms, "warps": 4},
        "stream_t4k_2x": {"mode": "stream", "tile": 4096, "programs": 2 * sms, "warps": 4},
        "stream": {"mode": "stream", "tile": 2048, "programs": 4 * sms, "warps": 4},
        "stream_t2k_8x": {"mode": "stream", "tile": 2048, "programs": 8 * sms, "warps": 4},
        "stream_t4k_4x": {"mode": "stream", "tile": 4096, "programs": 4 * sms, "warps": 4},
        "stream_t8k_2x": {"mode": "stream", "tile": 8192, "programs": 2 * sms, "warps": 8},
        "prefetch2_t4k_2x": {"mode": "prefetch2", "tile": 4096, "programs": 2 * sms, "warps": 4},
        "prefetch2_t4k_4x": {"mode": "prefetch2", "tile": 4096, "programs": 4 * sms, "warps": 4},
        "prefetch2_t8k_2x": {"mode": "prefetch2", "tile": 8192, "programs": 2 * sms, "warps": 8},
    }
    for mode in ("barrier", "counters", "prefetch", "prefetch2"):
        variants[mode] = {"mode": mode, "tile": 2048, "programs": 4 * sms, "warps": 4}

    def fused_ms():
        t0 = time.perf_counter()
        tokgen.generate("graph_triton_fused", model, batch_size=B, max_seqlen=N, steps_per_graph=K)
        torch.cuda.synchronize()
        return 1e3 * (time.perf_counter() - t0)

    steps = tokgen.generate("graph_triton_fused", model, batch_size=B, max_seqlen=N, steps_per_graph=K).shape[1] - 1
    say("fused generation steps", steps)
    table, info = P.persistent_bound(model, B, N, variants, rounds=15, extra={"graph_triton_fused K=4": fused_ms},
                                     bandwidth_gbs=bw)  # fmt: skip
    save(table, "persistent_bound")
    json.dump({k: v for k, v in info.items()}, open(WORK / "persistent_info.json", "w"), indent=1, default=str)
    say("floor us/step", info["floor_us_per_step"], "bw", info["bandwidth_gb_s"], "streamed", info["streamed_bytes"],
        "floor bytes", info["floor_bytes"])  # fmt: skip
    # vector width of the loads (ld.global.v4 = 16 bytes) in each compiled kernel
    try:
        for kern in (P._persistent_kernel, P._barrier_kernel, W._copy_kernel):
            for dev_cache in kern.device_caches.values():
                for key, compiled in dev_cache[0].items():
                    ptx = compiled.asm.get("ptx", "")
                    say(kern.__name__, str(key)[-120:], "ld.global.v4:", ptx.count("ld.global.v4"),
                        "ld.global (all):", ptx.count("ld.global"), "atom:", ptx.count("atom."),
                        "regs:", getattr(compiled, "n_regs", None))  # fmt: skip
    except Exception:  # noqa: BLE001
        say("ptx inspection failed", traceback.format_exc()[-800:])


def main():
    versions()
    for part in PARTS:
        if time.time() - T0 > BUDGET:
            say("out of time before", part)
            break
        say("==", part)
        try:
            globals()[part]()
        except Exception:  # noqa: BLE001
            say(part, "FAILED", traceback.format_exc()[-3000:])
        pack()


if __name__ == "__main__":
    try:
        main()
    finally:
        pack()
