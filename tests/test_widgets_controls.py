"""Every explorer: each control changes the figure (no dead control), names are accepted as the
library spells them, bad names and values get a clear error, and the text's counts agree in number."""

import io
import re

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import pytest  # noqa: E402

from course_lib.widgets import (economics, formats, kernels, latency, memory, parallelism,  # noqa: E402
                                roofline, simt, tiles, tiling)
from course_lib.widgets._base import render_png  # noqa: E402

EXPLORERS = {
    "roofline": lambda: roofline.roofline_explorer(),
    "latency_hiding": lambda: latency.latency_hiding_explorer(),
    "occupancy": lambda: latency.occupancy_explorer(),
    "simt": lambda: simt.simt_explorer(),
    "cache": lambda: memory.cache_explorer(),
    "pipeline": lambda: memory.pipeline_explorer(),
    "number": lambda: formats.number_explorer(),
    "tiling": lambda: tiling.tiling_explorer(),
    "serving": lambda: economics.serving_explorer(),
    "parallelism": lambda: parallelism.parallelism_explorer(),
    "kernel": lambda: kernels.kernel_explorer(),
    "tile_order": lambda: tiles.tile_order_explorer(),
}
#: "1 warps", "1 blocks": a count of one with a plural noun.
BAD_PLURAL = re.compile(r"(?<![\d.,])1 (warps|blocks|threads|sectors|lines|registers|schedulers|buffers|"
                        r"tiles)\b")


def _candidates(control):
    """Other values for ``control``: the far end of its range first."""
    if isinstance(control, (widgets.Dropdown, widgets.SelectionSlider)):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        others = [v for v in values if v != control.value]
        return [others[-1], others[0]] if others else []
    if isinstance(control, widgets.Checkbox):
        return [not control.value]
    if isinstance(control, widgets.Text):
        return ["65519", "-3e-5"]
    if isinstance(control, widgets.FloatLogSlider):
        return [control.base ** control.min, control.base ** control.max]
    return [control.max, control.min]


def _outside_the_figure(fig) -> list:
    """Axes whose drawn texts (title, axis labels, tick labels) cross the figure's edge: an
    explorer's figure has a fixed layout, so what crosses it is cut off in the image."""
    renderer, edge = fig.canvas.get_renderer(), fig.bbox
    out = []
    for i, ax in enumerate(fig.axes):
        box = ax.get_tightbbox(renderer)
        if box.x0 < edge.x0 - 1 or box.x1 > edge.x1 + 1 or box.y0 < edge.y0 - 1 or box.y1 > edge.y1 + 1:
            out.append(f"axes {i} ({ax.get_title()!r}) spans {box.extents.round()} in a {edge.extents.round()} figure")
    return out


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_every_control_changes_the_figure(name):
    ex = EXPLORERS[name]()
    assert ex.image.value and not BAD_PLURAL.search(ex.text.value)
    if ex._figure is not None:
        assert not _outside_the_figure(ex._figure), _outside_the_figure(ex._figure)
    for label, control in ex.controls.items():
        changed = False
        for value in _candidates(control):
            before = ex.image.value
            control.value = value
            if ex.image.value != before and "color:#b00" not in ex.text.value[:40]:
                changed = True
                break
        assert changed, f"{name}: moving {label!r} changed nothing ({ex.text.value[:120]!r})"
        assert not BAD_PLURAL.search(ex.text.value), ex.text.value
    # The explorer redraws on one figure: after every control moved, its image is the one a new
    # figure gives for the same result (nothing left over from earlier updates).
    fresh, size, fig = render_png(ex.draw, ex.result)
    assert _pixels(ex.image.value) == _pixels(fresh) and size == (int(ex.image.width), int(ex.image.height))
    assert not _outside_the_figure(fig), _outside_the_figure(fig)


def _pixels(png: bytes):
    from PIL import Image
    image = Image.open(io.BytesIO(png))
    return image.size, image.tobytes()


def test_names_are_accepted_as_the_library_spells_them():
    assert economics.serving_explorer(precision="BF16").controls["precision"].value == "bf16"
    assert parallelism.parallelism_explorer("h100").controls["accelerator"].value == "H100 SXM"
    ex = roofline.roofline_explorer("h100-sxm", "BF16")
    assert (ex.controls["accelerator"].value, ex.controls["precision"].value) == ("H100 SXM", "bf16")
    assert tiling.tiling_explorer("a100 sxm 80gb").controls["accelerator"].value == "A100 SXM 80GB"
    assert latency.occupancy_explorer("h100").controls["accelerator"].value == "H100 SXM"
    assert kernels.kernel_explorer("h100").controls["accelerator"].value == "H100 SXM"
    assert economics.serving_explorer("llama 3 8b", batch=24).controls["batch"].value == 24


@pytest.mark.parametrize("call, word", [
    (lambda: parallelism.parallelism_explorer("H100 SXXM"), "accelerator"),
    (lambda: parallelism.parallelism_explorer("V100 SXM2"), "accelerator"),
    (lambda: economics.serving_explorer(precision="bf17"), "precision"),
    (lambda: economics.serving_explorer(accelerator="V100 SXM2"), "accelerator"),
    (lambda: economics.serving_explorer(context_tokens=0), "context_tokens"),
    (lambda: economics.serving_explorer("Llama 2 7B", context_tokens=65536), "context_tokens"),
    (lambda: kernels.kernel_explorer("MI300X"), "accelerator"),
    (lambda: roofline.roofline_explorer("H100 SXM", "fp4"), "precision"),
])
def test_bad_names_and_values_are_clear_errors(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_serving_context_past_the_window_is_said_and_zero_refused():
    ex = economics.serving_explorer("Mistral 7B", context_tokens=32768)
    assert "window" not in ex.text.value                 # Mistral 7B: a 32,768-token window
    ex.controls["model"].value = "Falcon 7B"
    assert "past Falcon 7B's 2,048-token window" in ex.text.value and ex.result[0].context_tokens == 32768
    assert min(ex.controls["context_tokens"].options) == 128
    with pytest.raises(ValueError, match="context_tokens"):
        economics.explore_serving("Llama 3 8B", "H100 SXM", "bf16", 16, 0)


def test_tiling_accelerator_sets_the_peak_and_precision():
    ex = tiling.tiling_explorer("H100 SXM")
    ex.controls["accelerator"].value = "V100 SXM2"      # no BF16: its FP16 tensor cores
    assert tiling.matmul_precision("V100 SXM2") == "fp16" and "V100 SXM2 (FP16)" in ex.text.value


@pytest.mark.parametrize("lo, hi", [(1.0, 1e6), (3.0, 40.0), (2.0, 4.0), (4.3, 4.8), (0.002, 0.0031)])
def test_log_axes_show_at_least_two_plain_labels(lo, hi):
    """However narrow a log axis's range, an explorer labels it at least twice, in plain text."""
    import matplotlib.pyplot as plt
    from course_lib.widgets._base import _readable_log_axes

    fig, ax = plt.subplots()
    ax.loglog([lo, hi], [hi, lo])
    ax.set_xlim(lo, hi)
    _readable_log_axes(fig)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()
              and lo <= t.get_position()[0] <= hi]
    plt.close(fig)
    assert len(labels) >= 2 and not any("$" in text for text in labels), labels
