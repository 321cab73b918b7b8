"""Saved figures say where and when they were made (rv21B N6): the files in figures/ stand alone."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import tokgen  # noqa: E402
from tokgen import display  # noqa: E402

H200 = {"gpu": "NVIDIA H200", "commit": "019154c9aa44", "gpu_sms": "all"}


def test_the_footer_names_the_gpu_its_slice_the_commit_and_the_day_and_leaves_out_what_is_unknown():
    day = "2026-11-28"
    assert display.figure_footer(H200, day) == "tokgen · NVIDIA H200 · commit 019154c9aa44 · 2026-11-28"
    sliced = display.figure_footer({**H200, "gpu_sms": 66}, day)
    assert sliced == "tokgen · NVIDIA H200, a slice of 66 SMs · commit 019154c9aa44 · 2026-11-28"
    cpu = {"gpu": "none (CPU)", "commit": "2be1225abcde-dirty", "gpu_sms": "all"}
    assert display.figure_footer(cpu, day) == "tokgen · commit 2be1225abcde-dirty · 2026-11-28"
    assert display.figure_footer({"gpu": "none (CPU)", "commit": "unknown"}, day) == ""
    assert display.figure_footer({}, day) == ""


def test_a_saved_svg_and_png_carry_the_footer_and_the_figure_shown_does_not(monkeypatch, tmp_path):
    monkeypatch.setattr(tokgen.display, "environment", lambda: {**H200, "driver": "580"})
    monkeypatch.setattr(tokgen.display, "slice_columns", lambda: {"gpu_sms": 66, "slice_copy_gbs": 1.0})
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    ax.set_xlabel("x label")
    display.save_figure(fig, "f", tmp_path)
    svg = (tmp_path / "figures" / "f.svg").read_text()
    assert "NVIDIA H200, a slice of 66 SMs · commit 019154c9aa44 · " in svg
    assert (tmp_path / "figures" / "f.png").stat().st_size > 0
    assert fig.texts == []  # removed again after saving
    plt.close(fig)


def test_a_figure_saved_where_nothing_is_known_has_no_footer(monkeypatch, tmp_path):
    monkeypatch.setattr(tokgen.display, "environment", lambda: {"gpu": "none (CPU)", "commit": "unknown"})
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    display.save_figure(fig, "g", tmp_path)
    assert "commit" not in (tmp_path / "figures" / "g.svg").read_text()
    plt.close(fig)


@pytest.mark.gpu
def test_on_a_gpu_the_saved_figure_names_the_card_and_the_commit_of_the_run(tmp_path):
    """The provenance the footer reads on a GPU run is the result rows' own (`tokgen.results.environment`)."""
    import torch

    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    display.save_figure(fig, "h", tmp_path)
    svg = (tmp_path / "figures" / "h.svg").read_text()
    assert f"tokgen · {torch.cuda.get_device_name()}" in svg
    assert f"commit {tokgen.results.environment()['commit']}" in svg
    plt.close(fig)


def test_the_footer_lies_under_every_axes_of_a_constrained_layout(monkeypatch, tmp_path):
    """Review rv23A N2: figures/06_timelines.png had the footer over its last panel: `save_figure` read the axes'
    positions before the constrained layout moved them. Known answer: at save time (the layout run, as `savefig`
    runs it), the footer's top lies under the bottom of every axes' drawn extent (its labels included)."""
    monkeypatch.setattr(tokgen.display, "environment", lambda: {**H200, "driver": "580"})
    monkeypatch.setattr(tokgen.display, "slice_columns", lambda: {"gpu_sms": "all"})
    fig, axes = plt.subplots(3, 1, figsize=(8, 6), layout="constrained")
    for ax in axes:
        ax.plot([1, 2], [3, 4])
        ax.set_xlabel("x label")
        ax.set_title("a panel")
    fig.suptitle("a title")
    seen, save = [], fig.savefig

    def savefig(*args, **kwargs):
        fig.canvas.draw()  # the layout, as savefig runs it
        mark = next(t for t in fig.texts if t.get_gid() == "provenance")
        top = mark.get_window_extent().y1
        seen.append(all(top <= ax.get_tightbbox().y0 for ax in axes))
        return save(*args, **kwargs)

    monkeypatch.setattr(fig, "savefig", savefig)
    display.save_figure(fig, "f", tmp_path)
    assert seen == [True, True], seen
    plt.close(fig)
