"""The helpers of notebooks 10-14 in tokgen.display: the EOS that stops a generation where wanted,
sentences read from tables, dot plots."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from tokgen import display  # noqa: E402


def test_stop_token_stops_at_the_first_new_token_from_the_step_on():
    row = [9, 1, 2, 2, 9, 3, 1]  # the prompt (9) is never checked against the EOS
    assert display.stop_token(row, 4) == (9, 4)
    assert display.stop_token(row, 5) == (3, 5)
    assert display.stop_token(row, 2) == (2, 2)
    assert display.stop_token(row, 10) == (3, 5)  # none that late: the last new one
    assert display.stop_token([5, 5, 5], 2) == (5, 1)
    with pytest.raises(ValueError, match="no generated token"):
        display.stop_token([5], 1)


def audit_row(generator, reads, warnings, stream, event, device=1, tokens=32):
    return {"generator": generator, "tokens": tokens, "local_scalar_dense": reads, "sync_debug_warnings": warnings,
            "stream_syncs": stream, "event_syncs": event, "device_syncs": device}  # fmt: skip


def test_sync_reading_explains_every_row_where_the_counts_differ():
    audit = pd.DataFrame(
        [
            audit_row("kv_static", 32, 32, 32, 0),
            audit_row("pipelined_static", 0, 2, 2, 31),
            audit_row("pipelined_dynamic", 0, 2, 2, 31),
            audit_row("naive", 64, 65, 64, 0),
        ]
    )
    lines = display.sync_reading(audit)
    assert "1 device-wide sync per run" in lines[0]
    assert not any("`kv_static`" in line for line in lines)  # its counts agree
    pipelined = next(line for line in lines if "`pipelined_static`, `pipelined_dynamic`" in line)
    assert "2 of the 2 flagged syncs read no value" in pipelined and "31 event waits" in pipelined
    naive = next(line for line in lines if "`naive`" in line)
    assert "64 stream waits where the debug mode flagged 65" in naive


def test_product_findings_and_dot_plots():
    rows = []
    for product, mb in (("attention qkv", 7.0), ("mlp up", 9.0), ("LM head", 150.0)):
        for r, splits, us in ((32, 1, mb), (256, 1, 2 * mb), (32, 4, mb / 2)):
            rows.append({"product": product, "rows": r, "splits": splits, "weight_mb": mb, "floor_us": mb / 3,
                         "median_us": us, "q25_us": us * 0.9, "q75_us": us * 1.1, "status": "ok"})  # fmt: skip
    products = pd.DataFrame(rows)
    lines = display.product_findings(products, 32, layers=2)
    assert "add up to **182 µs**" in lines[0]  # 2 × (7 + 9) + 150
    assert "take 2.00× to 2.00× their time" in lines[2]
    assert "×2.00 to ×2.00 as fast" in lines[3]
    assert display.product_findings(products, 64, layers=2)[0].startswith("*No product")
    ax = display.plot_dots(products[products["splits"] == 1], "product", "median_us", group="rows", low="q25_us",
                           high="q75_us", log=True)  # fmt: skip
    assert [t.get_text() for t in ax.get_yticklabels()] == ["attention qkv", "mlp up", "LM head"]
