"""Review r11, fixer F4: the templates of solution 11's sentences (tokgen.profiling), notebook 12's floors'
bytes (tokgen.bandwidth) and its waterfall's rates (tokgen.waterfall), each on data whose answer is known."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from tokgen import bandwidth, profiling, waterfall
from tokgen.stats import compare_rounds

# notebook 11's audit at transformers 5.1.0 (data/11_sync_audit.csv of the run at 7e7a36f), 32 decode steps
AUDIT = pd.DataFrame({
    "generator": ["naive", "kv_static", "generate() dynamic", "generate() static"],
    "tokens": [32, 32, 32, 32],
    "local_scalar_dense": [64, 32, 99, 68],
    "stream_syncs": [64, 32, 102, 71],
    "local_scalar_dense_per_token": [2.0, 1.0, 99 / 32, 68 / 32],
    "transformers": ["5.1.0"] * 4,
})  # fmt: skip
# solution 11's counts at transformers 5.17.0 (its committed page: 2.09/2.19, 1.09/1.56, 1.00/1.38 per step)
HERE = pd.DataFrame({"generator": ["generate() dynamic", "generate() static", "kv_static"], "tokens": 32,
                     "local_scalar_dense": [67, 35, 32], "stream_syncs": [70, 50, 44], "transformers": "5.17.0"})
WATCHED = ["generate() dynamic", "generate() static", "kv_static"]


def test_the_audits_reads_are_printed_with_notebook_11s_three_decimals():
    """68/32 = 2.125: notebook 11 prints it so; two decimals would round it to 2.12."""
    assert profiling.audit_reads_text(AUDIT, WATCHED) == (
        "Notebook 11's audit (transformers 5.1.0), `.item()` reads per decode step: `generate() dynamic` 3.094, "
        "`generate() static` 2.125, `kv_static` 1.000.")  # fmt: skip


def test_each_generators_change_in_counts_is_stated_and_no_cause_is_named():
    said = profiling.sync_change_text(AUDIT, HERE)
    assert said == (
        "From notebook 11's audit (transformers 5.1.0) to this run (transformers 5.17.0), over 32 decode steps each: "
        "`generate() dynamic`: `.item()` reads 99 → 67 (1.000 fewer per decode step), stream syncs 102 → 70 (1.000 "
        "fewer per decode step); `generate() static`: `.item()` reads 68 → 35 (1.031 fewer per decode step), stream "
        "syncs 71 → 50 (0.656 fewer per decode step); `kv_static`: `.item()` reads 32 → 32 (the same), stream syncs "
        "32 → 44 (0.375 more per decode step). The audit counts these calls; it does not isolate which change "
        "between the two versions moved them.")  # fmt: skip
    assert "StaticCache" not in said and "cache" not in said.lower()  # no mechanism the audit does not isolate
    same = profiling.sync_change_text(AUDIT, HERE.assign(transformers="5.1.0"))  # one version on both sides
    assert same.endswith("Both ran the same transformers, so a change here is the runs', not a version's.")


def test_counts_over_different_steps_are_set_side_by_side_per_step():
    """64 decode steps here against notebook 11's 32: per step, 99/32 = 3.094 against 134/64 = 2.094."""
    longer = HERE.assign(tokens=64, local_scalar_dense=[134, 70, 64], stream_syncs=[140, 100, 88])
    said = profiling.sync_change_text(AUDIT, longer)
    assert "`generate() dynamic`: `.item()` reads 3.094 → 2.094 per decode step (1.000 fewer)" in said
    assert "`kv_static`: `.item()` reads 1.000 → 1.000 per decode step (the same), stream syncs 1.000 → 1.375 per " \
        "decode step (0.375 more)" in said
    assert "over 32 decode steps" not in said and ", over " not in said
    assert profiling.sync_change_text(AUDIT, HERE.assign(generator="x")).startswith("No generator counted here")


@pytest.mark.parametrize(
    "passes, when",
    [
        (0, "It came before the model's first forward pass: in `generate()`'s set-up, not in the decode loop."),
        (1, "It came after the prefill's forward pass, before the first decode step's: this run stops at it, so "
            "whether it recurs every step is not shown."),
        (3, "It came after 3 forward passes (the prefill and 2 decode steps): inside the decode loop; this run stops "
            "at it, so whether it recurs every step is not shown."),
    ],
)
def test_the_first_sync_names_its_version_its_functions_and_whether_it_came_before_any_step(passes, when):
    said = profiling.first_sync_text("transformers/generation/utils.py", 2192,
                                     "return torch.tensor(token, device=device, dtype=torch.long)",
                                     ["generate", "_prepare_special_tokens", "_tensor_or_none"], "5.17.0", passes)
    assert said == ("First sync (transformers 5.17.0; the line number is that version's): "
                    "`transformers/generation/utils.py`, line 2192, in `generate` → `_prepare_special_tokens` → "
                    "`_tensor_or_none`: `return torch.tensor(token, device=device, dtype=torch.long)`. " + when)


def test_a_forward_pre_hook_counts_generates_forward_passes():
    """Solution 11's exercise 2 counts the forward passes before the first sync with a hook on the model:
    on the tiny model, generate() of N tokens runs N passes (the prefill and N - 1 decode steps)."""
    import tokgen

    model = tokgen.build_model("tiny", "cpu")
    passes = []
    hook = model.register_forward_pre_hook(lambda *args: passes.append(1))
    try:
        tokgen.generate("generate() dynamic", model, batch_size=2, max_seqlen=5)
    finally:
        hook.remove()
    assert len(passes) == 5


def test_the_micro_models_sentence_says_the_gpu_not_cuda():
    base = [1.0 + 0.01 * i for i in range(10)]
    g = {"variant": "K=16", "vs": "K=1", **compare_rounds(base, [t / 1.24 for t in base])}
    config = SimpleNamespace(n_layer=1, n_embd=16)
    said = profiling.micro_k_text(config, "cuda", g)
    assert said.startswith("Micro model: 1 layer, hidden 16, on the GPU: K = 16 against K = 1, round by round, ×1.24")
    assert "cuda" not in said
    assert profiling.micro_k_text(SimpleNamespace(n_layer=2, n_embd=16), "cpu", g).startswith(
        "Micro model: 2 layers, hidden 16, on the CPU:")


def _waterfall_rows(bandwidth_gb_s, tflops):
    return pd.DataFrame({"term": [waterfall.FLOOR, waterfall.TOTAL], "bandwidth_gb_s": bandwidth_gb_s,
                         "matmul_tflops": tflops})  # fmt: skip


def test_the_waterfalls_rates_are_read_from_its_rows():
    """Notebook 12's run at 7e7a36f: 2,952.7 GB/s and 419.8 TFLOP/s in every row of 12_waterfall."""
    rows = _waterfall_rows(2952.695551, 419.832694)
    assert waterfall.rates_text(rows, "notebook 10", {}) == (
        "The floor's copy bandwidth: 2,953 GB/s (section 1's, measured by notebook 10); TF32 products 420 TFLOP/s "
        "(section 1's).")  # fmt: skip
    assert waterfall.rates_text(_waterfall_rows(1000.0, math.nan), "notebook 12", {}) == (
        "The floor's copy bandwidth: 1,000 GB/s (section 1's, measured by notebook 12).")
    assert waterfall.rates_text(None, None, {"floor": "RuntimeError: no GPU"}) == (
        "The floor's copy bandwidth: not measured (RuntimeError: no GPU).")
    assert waterfall.rates_text(_waterfall_rows(math.nan, math.nan), None, {}) == (
        "The floor's copy bandwidth: not recorded (no waterfall was measured, so 12_waterfall holds none).")


def test_the_biggest_term_counts_a_derived_term():
    """Arithmetic at 0.5 ms over a 0.004 ms floor: a derived term of 0.496 ms, larger than the 0.1 ms remainder."""
    w = waterfall.waterfall_table(
        0.7, floor_ms=0.004, compute_ms=0.5,
        timeline=waterfall.timeline_terms(
            pd.DataFrame([("k1", "kernel", 10, 20)], columns=["name", "kind", "start", "end"]), ("k1",)),
    )  # fmt: skip
    assert w.set_index("term").at[waterfall.COMPUTE, "status"] == "derived"
    assert f"**{waterfall.COMPUTE}**: 0.5 ms" in waterfall.biggest_term(w)


def _products(mb: dict, bw: float) -> pd.DataFrame:
    """Section 5's table at 32 rows, an undivided sum: each product's weight MB and its floor at `bw` GB/s."""
    return pd.DataFrame([{"product": p, "rows": 32, "splits": 1, "status": "ok", "weight_mb": m,
                          "floor_us": m * 1e3 / bw} for p, m in mb.items()])  # fmt: skip


def test_the_two_weight_floors_say_which_bytes_each_counts():
    """Two layers of 10 + 20 MB and a 30 MB LM head: 90 MB of product matrices, 90 µs at 1,000 GB/s; section
    4's 91 MB (all weights) at the same rate: 91 µs."""
    split = {"weights_floor_us": 91.0, "weights_mb": 91.0, "bandwidth_gb_s": 1000.0}
    products = _products({"attention qkv": 10.0, "mlp up": 20.0, "LM head": 30.0}, 1000.0)
    products = pd.concat([products, products.assign(rows=256, floor_us=0.0)], ignore_index=True)  # not 32 rows
    assert bandwidth.floors_bytes_text(split, products, 32, 2) == (
        "The two weight floors count different bytes: section 4's **91 µs** is every weight a decode step reads "
        "(91.0 MB, section 2's weights per step: the products' matrices, their biases, the norms' vectors and one "
        "row of the position table), this section's **90 µs** the products' weight matrices alone (90.0 MB); both "
        "at 1,000 GB/s.")  # fmt: skip
    other_card = bandwidth.floors_bytes_text(split, _products({"mlp up": 20.0, "LM head": 30.0}, 500.0), 32, 2)
    assert other_card.endswith("this section's **140 µs** the products' weight matrices alone (70.0 MB); at 1,000 "
                               "and 500 GB/s.")  # fmt: skip
    assert bandwidth.floors_bytes_text(split, _products({"mlp up": 20.0}, 1000.0), 32, 2) == ""


def test_the_weights_floor_records_its_bytes_and_bandwidth():
    import tokgen

    model = tokgen.build_model("tiny", "cpu")
    kernels = pd.DataFrame({"variant": "v", "products": [True, False], "own_us_per_token": [3.0, 1.0],
                            "us_per_token": [3.0, 1.0]})  # fmt: skip
    split = bandwidth.products_against_floor(kernels, "v", model, 2000.0)
    assert split["weights_mb"] == pytest.approx(bandwidth.weight_bytes_per_step(model) / 1e6)
    assert split["bandwidth_gb_s"] == 2000.0
    assert split["weights_floor_us"] == pytest.approx(split["weights_mb"] * 1e3 / 2000.0)
