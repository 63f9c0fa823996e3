"""FigureExplorer's display bundle: the live widget first, its initial figure for static pages."""

import base64

import matplotlib

matplotlib.use("Agg")

from course_lib.widgets._base import NOTE_TEXT  # noqa: E402
from course_lib.widgets.roofline import roofline_explorer  # noqa: E402

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_bundle_holds_widget_view_initial_png_and_note():
    ex = roofline_explorer("H100 SXM", "bf16")
    data, metadata = ex._repr_mimebundle_()
    assert data[WIDGET_MIME]["model_id"] == ex.widget.model_id
    assert base64.b64decode(data["image/png"]) == ex.image.value
    assert bytes(ex.image.value).startswith(b"\x89PNG")
    assert metadata["image/png"]["width"] == ex.image.width
    assert data["text/plain"] == f"Roofline explorer: {NOTE_TEXT}"      # not the VBox(...) repr


def test_update_does_not_build_a_bundle(monkeypatch):
    ex = roofline_explorer("H100 SXM", "bf16")
    calls = []
    monkeypatch.setattr(type(ex), "_repr_mimebundle_", lambda self, **kw: calls.append(1))
    ex.controls["m"].value = 8192
    assert calls == []


def test_ipython_formatter_publishes_the_bundle():
    from IPython.core.formatters import DisplayFormatter

    ex = roofline_explorer("H100 SXM", "bf16")
    data, _ = DisplayFormatter().format(ex)
    assert set(data) == {WIDGET_MIME, "image/png", "text/plain"}


def _png_width(png: bytes) -> int:
    import struct
    return struct.unpack(">I", bytes(png)[16:20])[0]        # IHDR's width


def test_a_change_from_the_browser_is_drawn_live_then_sharp(monkeypatch):
    """A value the browser sends (ipywidgets' set_state) is drawn at the live pixel ratio at once,
    then, once the controls rest, at full sharpness: the same pixels as a fresh 2x figure. A change
    made in Python is drawn sharp at once; a second change before the rest cancels the first redraw."""
    import asyncio

    from course_lib.widgets import _base

    monkeypatch.setattr(_base, "_SHARPEN_AFTER_S", 0.05)
    ex = roofline_explorer("H100 SXM", "bf16")
    css_width = int(ex.image.width)
    assert _png_width(ex.image.value) == css_width * _base._PIXEL_RATIO

    async def browse():
        _base.UPDATE_LOG.clear()
        ex.controls["batch"].set_state({"index": 1})          # what the slider's keyboard sends
        ex.controls["batch"].set_state({"index": 2})
        assert _png_width(ex.image.value) == css_width * _base._LIVE_PIXEL_RATIO
        assert int(ex.image.width) == css_width and ex.result[0].kernel.name.startswith("your matmul (4x")
        await asyncio.sleep(0.5)
        return list(_base.UPDATE_LOG)

    log = asyncio.run(browse())
    assert [bool(r.get("sharpen")) for r in log] == [False, False, True]     # one sharp redraw
    assert _png_width(ex.image.value) == css_width * _base._PIXEL_RATIO
    fresh, _, _ = _base.render_png(ex.draw, ex.result)
    from PIL import Image
    import io
    import numpy as np
    pixels = [np.asarray(Image.open(io.BytesIO(bytes(p)))) for p in (ex.image.value, fresh)]
    assert np.array_equal(*pixels)

    async def from_python():
        ex.controls["batch"].value = 16                     # a cell, not the browser: sharp at once
        return _png_width(ex.image.value), ex._sharpen
    assert asyncio.run(from_python()) == (css_width * _base._PIXEL_RATIO, None)


def test_log_ticks_a_plot_fixed_itself_are_kept():
    """An explorer relabels its log axes in plain text; ticks a plot placed itself (lesson 10's
    GROUP_M at powers of two) stay where they are, as in the lesson's static figure."""
    import matplotlib.pyplot as plt

    from course_lib.widgets._base import _readable_log_axes
    fig, (fixed, free) = plt.subplots(1, 2)
    for ax in (fixed, free):
        ax.semilogx([1, 64], [1, 2], base=2)
    fixed.set_xticks([1, 2, 4, 8, 16, 32, 64])
    _readable_log_axes(fig)
    fig.canvas.draw()
    assert [t.get_text() for t in fixed.get_xticklabels()] == ["1", "2", "4", "8", "16", "32", "64"]
    assert [t.get_text() for t in free.get_xticklabels()] != ["1", "2", "4", "8", "16", "32", "64"]
    plt.close(fig)
