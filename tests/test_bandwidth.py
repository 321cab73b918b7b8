"""Bytes per generation: the speed-of-light arithmetic (tokgen.bandwidth)."""

import pandas as pd
import pytest
import torch

from tokgen import bandwidth
from tokgen.model import parameter_bytes


def test_generation_bytes(tiny):
    cfg = tiny.config
    per_position = 2 * cfg.n_layer * 3 * cfg.n_embd * 4  # K and V, all layers, B=3, fp32
    weights = bandwidth.weight_bytes_per_step(tiny)
    wpe = tiny.transformer.wpe.weight
    assert weights == parameter_bytes(tiny) - wpe.numel() * 4 + wpe.shape[1] * 4
    assert bandwidth.kv_bytes(tiny, 3, 1) == per_position
    n = 10
    none = bandwidth.generation_bytes(tiny, 3, n, "none")
    assert none == n * (weights + per_position)
    assert bandwidth.generation_bytes(tiny, 3, n, "filled") == none + per_position * sum(range(n))
    assert bandwidth.generation_bytes(tiny, 3, n, "static") == none + per_position * n * n
    with pytest.raises(ValueError, match="kv_read"):
        bandwidth.generation_bytes(tiny, 3, n, "paged")


def test_gpt2_products_are_the_models_weights(tiny):
    block = tiny.transformer.h[0]
    shapes = bandwidth.gpt2_products(tiny)
    # GPT-2's Conv1D stores (in, out)
    assert shapes["attention qkv"] == tuple(block.attn.c_attn.weight.shape)
    assert shapes["attention out"] == tuple(block.attn.c_proj.weight.shape)
    assert shapes["mlp up"] == tuple(block.mlp.c_fc.weight.shape)
    assert shapes["mlp down"] == tuple(block.mlp.c_proj.weight.shape)
    assert shapes["LM head"] == tuple(reversed(tiny.lm_head.weight.shape))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rows": 0}, "rows must be a positive integer"),
        ({"splits": -1}, "splits must be a positive integer"),
        ({"repeats": 2.5}, "repeats must be a positive integer"),
        ({"splits": 5}, "splits=5 does not divide in_features=64"),
    ],
)
def test_product_times_rejects_bad_sizes(kwargs, match):
    args = {"rows": 4, "in_features": 64, "out_features": 32, **kwargs}
    with pytest.raises(ValueError, match=match):
        bandwidth.product_times(args.pop("rows"), args.pop("in_features"), args.pop("out_features"), **args)


def test_product_times_needs_cuda():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: tests/test_gpu.py times a product")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        bandwidth.product_times(4, 64, 32)


def test_static_reads_its_slots_and_floors_scale_with_the_bandwidth(tiny):
    n, per_position = 10, bandwidth.kv_bytes(tiny, 3, 1)
    assert (
        bandwidth.generation_bytes(tiny, 3, n, "static", slots=16)
        == bandwidth.generation_bytes(tiny, 3, n, "none") + per_position * n * 16
    )
    task = bandwidth.floor_ms(tiny, 3, n, 1000.0)
    assert task == pytest.approx(bandwidth.generation_bytes(tiny, 3, n, "filled") / 1e12 * 1e3)
    assert bandwidth.floor_ms(tiny, 3, n, 2000.0) == pytest.approx(task / 2)


def test_cache_read_follows_each_registry_entry():
    from tokgen import GENERATORS, REFERENCES
    from tokgen.graphs import graph_capacity

    reads = {g: bandwidth.cache_read(g, 100, 4) for g in [*GENERATORS, *REFERENCES]}
    assert reads["naive"] == ("recompute", 0)
    assert reads["kv_dynamic"] == reads["pipelined_dynamic"] == reads["generate() dynamic"] == ("filled", 0)
    assert reads["kv_static"] == reads["article_pipelined"] == ("static", 100)
    assert reads["generate() static"] == ("static", 101)  # the prompt's position too
    assert reads["graph_handwritten_compiled"] == ("static", graph_capacity(100, 4))
    assert bandwidth.cache_read("graph_transformers", 100, 1) == ("static", graph_capacity(100, 1))
    for filled in ("graph_filled_attention", "graph_triton_kernels", "graph_stop_on_device"):
        assert reads[filled] == ("filled", 0), filled
    with pytest.raises(ValueError, match="unknown generator"):
        bandwidth.cache_read("graph_nonexistent", 100)


def test_floor_table_and_the_products_of_a_kernel_table(tiny):
    import pandas as pd

    timed = pd.DataFrame(
        {
            "variant": ["naive", "graph_triton_kernels K=4", "graph_handwritten_compiled K=4"],
            "generator": ["naive", "graph_triton_kernels", "graph_handwritten_compiled"],
            "notebook": "10",
            "batch_size": 3,
            "max_seqlen": 20,
            "steps": 20,
            "steps_per_graph": [float("nan"), 4.0, 4.0],
            "median_ms": [9.0, 1.0, 3.0],
        }
    )
    floors = bandwidth.floor_table(timed, tiny, 100.0).set_index("variant")
    assert list(floors.index) == ["naive", "graph_triton_kernels K=4", "graph_handwritten_compiled K=4"]  # as given
    task = bandwidth.floor_ms(tiny, 3, 20, 100.0)
    assert floors["task_floor_ms"].eq(task).all()
    assert floors.at["graph_triton_kernels K=4", "own_floor_ms"] == pytest.approx(task)  # filled slots only
    assert floors.at["graph_handwritten_compiled K=4", "kv_read"] == "static (32 slots)"
    assert floors.at["graph_triton_kernels K=4", "pct_of_own_floor"] == pytest.approx(100 * task / 1.0)
    # rv19B S4: the bytes it must move over its median: the task's at 100 GB/s take `task` ms, moved in 1 ms
    assert floors.at["graph_triton_kernels K=4", "rate_gb_s"] == pytest.approx(100 * task / 1.0)
    static = bandwidth.generation_bytes(tiny, 3, 20, "static", 32)
    assert floors.at["graph_handwritten_compiled K=4", "rate_gb_s"] == pytest.approx(static / 3.0 / 1e6)
    assert bandwidth.gb_per_s(2e9, 1000.0) == 2.0  # 2 GB in 1 s
    kernels = pd.DataFrame(
        {
            "variant": "v",
            "kind": ["a", "b", "c"],
            "products": [True, True, False],
            "us_per_token": [5.0, 3.0, 4.0],
            "own_us_per_token": [4.0, 2.0, 3.0],
        }
    )
    split = bandwidth.products_against_floor(kernels, "v", tiny, 100.0)
    assert (split["products_us"], split["busy_us"], split["other_us"], split["durations_us"]) == (6.0, 9.0, 3.0, 12.0)
    assert split["pct_of_copy_bandwidth"] == pytest.approx(100 * split["weights_floor_us"] / 6.0)
    with pytest.raises(ValueError, match="no kernel rows"):
        bandwidth.products_against_floor(kernels, "w", tiny, 100.0)


def test_the_naive_floor_writes_every_positions_logits_and_counts_its_arithmetic(tiny):
    cfg, n, b = tiny.config, 6, 3
    weights = bandwidth.weight_bytes_per_step(tiny)
    logits = b * cfg.vocab_size * 4  # one position's logits for every row, fp32
    # step s runs s + 1 positions (the prompt's and those generated) and writes all their logits
    assert bandwidth.generation_bytes(tiny, b, n, "recompute") == n * weights + logits * sum(range(1, n + 1))
    inner = cfg.n_inner or 4 * cfg.n_embd
    per_position = cfg.n_layer * 2 * (4 * cfg.n_embd**2 + 2 * cfg.n_embd * inner) + 2 * cfg.n_embd * cfg.vocab_size
    attend = lambda p: cfg.n_layer * 4 * cfg.n_embd * p  # noqa: E731 - QKᵀ and PV over p positions
    cached = sum(b * (per_position + attend(s + 1)) for s in range(n))
    assert bandwidth.generation_flops(tiny, b, n, "filled") == cached  # whole numbers below 2**53: exact
    recomputed = sum(b * (s + 1) * per_position + b * attend((s + 1) * (s + 2) / 2) for s in range(n))
    assert bandwidth.generation_flops(tiny, b, n, "recompute") == recomputed


def test_the_floor_table_takes_the_longer_of_bytes_and_arithmetic_and_keeps_the_tables_order(tiny):
    timed = pd.DataFrame(
        [
            {"variant": "kv", "generator": "kv_dynamic", "batch_size": 3, "max_seqlen": 6, "steps": 6,
             "median_ms": 2.0},
            {"variant": "naive", "generator": "naive", "batch_size": 3, "max_seqlen": 6, "steps": 6,
             "median_ms": 1.0},
        ]
    )
    gbs = 100.0
    plain = bandwidth.floor_table(timed, tiny, gbs).set_index("variant")
    assert list(plain.index) == ["kv", "naive"]  # the table's order: never ranked by median
    assert plain.loc["naive", "bound_by"] == "bytes (compute not measured)"
    assert plain.loc["naive", "own_floor_ms"] == pytest.approx(bandwidth.floor_ms(tiny, 3, 6, gbs, "recompute"))
    flops = bandwidth.generation_flops(tiny, 3, 6, "recompute")
    slow = flops / 1e9 / (10 * plain.loc["naive", "bytes_floor_ms"])  # TFLOP/s at which compute takes 10× the bytes
    floors = bandwidth.floor_table(timed, tiny, gbs, tflops=slow).set_index("variant")
    assert floors.loc["naive", "bound_by"] == "arithmetic"
    assert floors.loc["naive", "own_floor_ms"] == pytest.approx(10 * plain.loc["naive", "bytes_floor_ms"])
    assert floors.loc["naive", "pct_of_own_floor"] == pytest.approx(100 * floors.loc["naive", "own_floor_ms"] / 1.0)
    assert floors.loc["naive", "times_task_floor"] == pytest.approx(1.0 / bandwidth.floor_ms(tiny, 3, 6, gbs))
    fast = bandwidth.floor_table(timed, tiny, gbs, tflops=1e9).set_index("variant")
    assert fast.loc["kv", "bound_by"] == "bytes" and fast.loc["kv", "own_floor_ms"] == plain.loc["kv", "own_floor_ms"]


def test_matmul_tflops_is_the_products_flops_over_the_median_gpu_time(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="^matmul_tflops needs a CUDA GPU"):
        bandwidth.matmul_tflops("cpu", size=4)
    monkeypatch.setattr(bandwidth, "require_cuda", lambda what: None)
    calls = []

    def fake_gpu_times(run, runs):  # the GPU's clock, faked: 2, 4, 3 ms
        calls.append(runs)
        assert run().shape == (64, 64)  # a product of two size × size matrices
        return [2.0, 4.0, 3.0][:runs]

    monkeypatch.setattr(bandwidth, "gpu_times", fake_gpu_times)
    tflops = bandwidth.matmul_tflops("cpu", size=64, runs=3)
    assert calls == [3] and tflops == pytest.approx(2 * 64**3 / 3e-3 / 1e12)  # the median, 3 ms
    bandwidth.matmul_tflops("cpu", size=64)
    assert calls == [3, 10]  # ten timed products by default

    def on_meta(run, runs):  # both matrices on the device asked for (a CPU one would not multiply a meta one)
        assert run().device.type == "meta"
        return [1.0]

    monkeypatch.setattr(bandwidth, "gpu_times", on_meta)
    assert bandwidth.matmul_tflops("meta", size=8, runs=1) == pytest.approx(2 * 8**3 / 1e-3 / 1e12)


def test_the_floor_table_sets_medians_over_the_rounds_every_variant_ran_against_the_floor(tiny):
    """A sequential run (notebook 07's): `kv` ran on to 16 rounds, its last 8 slow; `naive` stopped at 8. The
    floor is set against kv's median over its first 8 rounds (2.0-2.7 ms: 2.35), not its 16 (3.05)."""
    kv = [2.0 + 0.1 * i for i in range(8)] + [4.0 + 0.1 * i for i in range(8)]
    timed = pd.DataFrame(
        [
            {"variant": "kv", "generator": "kv_dynamic", "batch_size": 3, "max_seqlen": 6, "steps": 6, "status": "ok",
             "median_ms": 3.05, "times_ms": ";".join(map(str, kv)), "order_seed": 1},
            {"variant": "naive", "generator": "naive", "batch_size": 3, "max_seqlen": 6, "steps": 6, "status": "ok",
             "median_ms": 1.0, "times_ms": ";".join(["1.0"] * 8), "order_seed": 1},
        ]
    )  # fmt: skip
    floors = bandwidth.floor_table(timed, tiny, 100.0).set_index("variant")
    assert floors.at["kv", "median_ms"] == pytest.approx(2.35) and floors.at["naive", "median_ms"] == 1.0
    assert floors.at["kv", "times_task_floor"] == pytest.approx(2.35 / floors.at["kv", "task_floor_ms"])


def test_cache_bytes_per_row_is_what_each_row_adds_to_a_generation(tiny):
    """Per row, N steps write one position each and read 0, 1, ..., N-1 cached ones: (N + N(N-1)/2)
    positions of K and V in every layer; a generation's bytes are the weights' plus B times that."""
    cfg, n = tiny.config, 10
    per_position = 2 * cfg.n_layer * cfg.n_embd * 4  # K and V, all layers, one row, fp32
    assert bandwidth.cache_bytes_per_row(tiny, n) == per_position * (n + n * (n - 1) // 2)
    weights = n * bandwidth.weight_bytes_per_step(tiny)
    for b in (1, 3, 32):
        assert bandwidth.generation_bytes(tiny, b, n) == weights + b * bandwidth.cache_bytes_per_row(tiny, n)


def test_product_graph_replays_a_given_linear_through_the_pool_as_it_does_f_linear(monkeypatch):
    """Solution 12 times a compiled product as notebook 12 times cuBLAS's: the given `linear` is called
    `PRODUCT_REPEATS` times per replay with the rows, each pool weight in turn and the bias; F.linear is
    not called; a split sum cannot take a `linear`."""
    from types import SimpleNamespace

    calls, f_linear, made = [], [], []

    def randn(*size, device):
        made.append(torch.empty(*size))
        return made[-1]

    monkeypatch.setattr(bandwidth, "torch", SimpleNamespace(randn=randn, device=lambda name: name, cuda=SimpleNamespace(
        get_device_properties=lambda device: SimpleNamespace(L2_cache_size=1000))))  # fmt: skip
    monkeypatch.setattr(bandwidth, "F", SimpleNamespace(linear=lambda x, w, b: f_linear.append(1)))
    monkeypatch.setattr(bandwidth, "require_cuda", lambda what: None)
    monkeypatch.setattr(bandwidth, "capture", lambda products, warmups: products() or SimpleNamespace(replay=products))
    replay = bandwidth.product_graph(3, 8, 4, linear=lambda x, w, b: calls.append((x, w, b)))
    repeats, pool = bandwidth.PRODUCT_REPEATS, 16  # ⌈2 × 1000 / (8 × 4 × 4)⌉ weights
    assert repeats == 48 and f_linear == []
    assert len(calls) == 2 * repeats  # the capture's call and the untimed warm-up replay
    replay()
    last = calls[-repeats:]
    weights, bias, x = made[:pool], made[pool], made[pool + 1]
    assert all(c[0] is x and c[2] is bias for c in last)
    assert [c[1].data_ptr() for c in last] == [weights[i % pool][0].data_ptr() for i in range(repeats)]
    with pytest.raises(ValueError, match="splits must be 1, got 2"):
        bandwidth.product_graph(3, 8, 4, splits=2, linear=lambda x, w, b: None)
