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
        return [r for r in _base.UPDATE_LOG if not r.get("ahead")]

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


def _rgba(png):
    import io

    import numpy as np
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(bytes(png))))


async def _settled(ex, timeout_s: float = 30.0) -> None:
    """Wait until ``ex`` has no frame left to draw ahead (however loaded the machine)."""
    import asyncio
    import time
    deadline = time.monotonic() + timeout_s
    await asyncio.sleep(0)
    while ex._ahead is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert ex._ahead is None, "frames still pending after the timeout"


def test_the_next_step_of_a_slider_is_drawn_ahead_and_shown_only_for_its_values(monkeypatch):
    """After a step from the browser, the steps either side of it are drawn while the kernel
    idles; the next step is then shown from that frame, with the pixels, result and text a live
    draw of the same values gives. A frame is never shown for other values: once another control
    has moved, the same slider step is drawn again."""
    import asyncio

    import numpy as np

    from course_lib.widgets import _base

    monkeypatch.setattr(_base, "_SHARPEN_AFTER_S", 60)     # no sharp redraw in between
    ex = roofline_explorer("H100 SXM", "bf16")
    batch = ex.controls["batch"]

    async def browse():
        _base.UPDATE_LOG.clear()
        batch.set_state({"index": 1})           # drawn when it arrives, then 4 and 1 drawn ahead
        await _settled(ex)
        ahead = [r["values"]["batch"] for r in _base.UPDATE_LOG if r.get("ahead")]
        batch.set_state({"index": 2})           # shown from its frame
        shown = dict(_base.UPDATE_LOG[-1])
        image, text, result = bytes(ex.image.value), ex.text.value, ex.result
        await _settled(ex)                      # batch 8 drawn ahead, for m = 1
        ex.controls["m"].set_state({"index": 3})
        await _settled(ex)
        batch.set_state({"index": 3})           # batch 8 with m = 8: no frame, drawn now
        other = dict(_base.UPDATE_LOG[-1])
        batch.set_state({"index": 2})           # the way back (drawn ahead for m = 8): shown
        return ahead, shown, image, text, result, other, dict(_base.UPDATE_LOG[-1])

    ahead, shown, image, text, result, other, back = asyncio.run(browse())
    for pending in (ex._sharpen, ex._ahead):
        if pending is not None:
            pending.cancel()
    assert ahead == ["4", "1"]                  # the same way first, then back
    assert shown.get("drawn_ahead") and shown["draw_s"] == 0
    values = {**ex.values(), "batch": 4, "m": 1}
    live = _base.render_png(ex.draw, ex.compute(**values), pixel_ratio=_base._LIVE_PIXEL_RATIO)[0]
    assert np.array_equal(_rgba(image), _rgba(live))
    assert result == ex.compute(**values) and text == ex.describe(result)
    assert not other.get("drawn_ahead") and other["draw_s"] > 0 and other["values"]["m"] == "8"
    assert back.get("drawn_ahead") and back["values"]["batch"] == "4" and back["values"]["m"] == "8"
    assert ex.result[0].kernel.name.startswith("your matmul (4x 8x8192x8192")


def test_a_dropdown_or_a_change_from_python_draws_nothing_ahead():
    from course_lib.widgets import _base

    ex = roofline_explorer("H100 SXM", "bf16")
    _base.UPDATE_LOG.clear()
    ex.controls["batch"].value = 4
    ex.controls["precision"].value = "fp8"
    assert not any(r.get("ahead") for r in _base.UPDATE_LOG) and not ex._frames


def test_axes_drawn_from_their_cached_layers_give_the_same_pixels(monkeypatch):
    """The explorer canvas lays back a cached picture of each axis and legend whose look has not
    changed: every explorer's figure, after its controls moved, is the same figure drawn by
    matplotlib alone (to one level of 255); and a look that changes (rotated tick labels) is
    drawn anew."""
    import importlib

    import numpy as np

    from course_lib.widgets import _base, _canvas

    explorers = [("roofline", "roofline_explorer"), ("latency", "occupancy_explorer"),
                 ("tiling", "tiling_explorer"), ("economics", "serving_explorer")]
    for module, factory in explorers:
        ex = getattr(importlib.import_module(f"course_lib.widgets.{module}"), factory)()
        last = list(ex.controls.values())[-1]
        options = list(getattr(last, "_options_values", ())) or [last.min, last.max]
        for value in options[:3]:
            last.value = value
        hits = _canvas.LAYER_STATS["hits"]
        cached = _base.render_png(ex.draw, ex.result, ex._figure)[0]
        assert _canvas.LAYER_STATS["hits"] > hits, factory
        monkeypatch.setattr(_base, "cache_axis_drawing", lambda fig: None)
        plain = _base.render_png(ex.draw, ex.result)[0]         # a new figure, matplotlib's axes
        monkeypatch.undo()
        # Equal, but for a level of rounding where a legend's translucent frame is laid back.
        difference = np.abs(_rgba(cached).astype(int) - _rgba(plain).astype(int))
        assert difference.max() <= 1, factory

    ex = roofline_explorer("H100 SXM", "bf16")
    before = _rgba(_base.render_png(ex.draw, ex.result, ex._figure)[0])
    for label in ex._figure.axes[0].get_xticklabels():
        label.set_rotation(30)
    ex._figure.axes[0].xaxis.draw = ex._figure.axes[0].xaxis.draw      # still the cached draw
    ex._figure.canvas.draw()
    rotated = np.asarray(ex._figure.canvas.buffer_rgba())
    assert not np.array_equal(before, rotated)


def test_the_steps_either_side_of_each_kind_of_slider():
    import ipywidgets as widgets

    from course_lib.widgets._base import _steps_either_side

    def steps(control, old, new):
        controls = {"s": control, "other": widgets.Dropdown(options=["a", "b"], value="a")}
        control.value = new
        return [v["s"] for v in _steps_either_side(controls, {"owner": control, "old": old, "new": new})]

    assert steps(widgets.SelectionSlider(options=[1, 2, 4, 8]), 2, 4) == [8, 2]
    assert steps(widgets.SelectionSlider(options=[1, 2, 4, 8]), 8, 4) == [2, 8]
    assert steps(widgets.SelectionSlider(options=[1, 2, 4, 8]), 4, 8) == [4]          # at the end
    assert steps(widgets.IntSlider(min=0, max=10, step=2), 2, 4) == [6, 2]
    assert steps(widgets.FloatSlider(min=0, max=1, step=0.1), 0.2, 0.3) == [0.4, 0.2]
    log = steps(widgets.FloatLogSlider(base=10, min=0, max=3.3, step=0.05), 10 ** 1.8, 10 ** 1.85)
    assert [round(v, 6) for v in log] == [round(10 ** 1.9, 6), round(10 ** 1.8, 6)]
    assert steps(widgets.Dropdown(options=[1, 2, 3]), 1, 2) == []


def test_a_page_that_shows_an_explorer_is_sent_the_frames_of_a_hand_s_first_steps(monkeypatch):
    """Nothing is drawn ahead until a page shows the explorer (a script, a test, nbval draw nothing
    more). Once a page says it has shown it: the shown values at the live size, then one step either
    side of every slider, the last slider first, each kept and sent to the page with the key the page
    computes from its controls; a step the hand then takes is answered from its frame."""
    import asyncio

    from course_lib.widgets import _base
    from course_lib.widgets._frames import page_key

    monkeypatch.setattr(_base, "_WARM_AFTER_S", 0.01)
    monkeypatch.setattr(_base, "_SHARPEN_AFTER_S", 60)

    async def show_then_step():
        ex = roofline_explorer("H100 SXM", "bf16")
        held = []
        monkeypatch.setattr(ex.image, "send", lambda content, buffers=None: held.append((content, buffers)))
        await asyncio.sleep(0.05)
        before = (ex._ahead, dict(ex._frames))
        ex.image._handle_custom_msg({"event": "not-shown"}, [])
        ignored = ex._ahead
        ex.image._handle_custom_msg({"event": "shown"}, [])
        await _settled(ex)
        ex.controls["batch"].set_state({"index": 1})            # one step right: its frame
        step = dict(_base.UPDATE_LOG[-1])
        for pending in (ex._sharpen, ex._ahead):
            if pending is not None:
                pending.cancel()
        return ex, before, ignored, held, step

    ex, before, ignored, held, step = asyncio.run(show_then_step())
    assert before == (None, {}) and ignored is None
    batch = ex.controls["batch"]
    drawn = [frame[4] for frame in ex._frames.values()]
    start = {**ex.values(), "batch": 1}

    def step_of(name, by):
        options = list(ex.controls[name].options)
        return {**start, name: options[options.index(start[name]) + by]}

    # batch and m are at their first option: one step each; k and n have both sides.
    assert drawn == [start, step_of("batch", 1), step_of("n", 1), step_of("n", -1), step_of("k", 1),
                     step_of("k", -1), step_of("m", 1)]
    assert len(held) == len(drawn)
    for (content, buffers), frame in zip(held, ex._frames.values()):
        assert content["frame"] == page_key(ex.controls, frame[4], _base._LIVE_PIXEL_RATIO)
        assert bytes(buffers[0]) == frame[1] and content["text"] == frame[3]
        assert (content["width"], content["height"]) == tuple(str(n) for n in frame[2])
    assert step.get("drawn_ahead") and step["values"]["batch"] == "2" and batch.value == 2
    assert ex.image.key == page_key(ex.controls, ex.values(), _base._LIVE_PIXEL_RATIO)


def test_the_key_a_page_computes_for_a_frame():
    """The page keys a frame by a selection's index and a number to nine significant digits; a
    value with no such form gives no key (the page never shows a frame for it)."""
    import ipywidgets as widgets

    from course_lib.widgets._frames import page_key

    controls = {"size": widgets.SelectionSlider(options=[1, 2, 4]), "x": widgets.FloatSlider(),
                "on": widgets.Checkbox(), "name": widgets.Text()}
    values = {"size": 4, "x": 0.1 + 0.2, "on": True, "name": "H100"}
    assert page_key(controls, values, 1) == [1, 2, 0.3, True, "H100"]
    assert page_key(controls, {**values, "x": 10 ** 1.85}, 2)[2] == float(f"{10 ** 1.85:.9g}")
    assert page_key(controls, {**values, "size": 3}, 1) is None          # not an option
    assert page_key(controls, {**values, "x": (1, 2)}, 1) is None


def test_a_matplotlib_without_the_private_names_the_layers_read_draws_as_usual(monkeypatch):
    """The layers read matplotlib's private attributes; where one is missing (another release),
    the explorer draws every axis and legend as matplotlib does, with the same picture."""
    from course_lib.widgets import _base, _canvas

    ex = roofline_explorer("H100 SXM", "bf16")
    before = _rgba(_base.render_png(ex.draw, ex.result)[0])

    def broken(axis, renderer):
        raise AttributeError("'XAxis' object has no attribute '_autolabelpos'")

    monkeypatch.setitem(_canvas._LOOKS, "axis", broken)
    monkeypatch.setattr(_canvas, "_LAYERS_ON", True)
    after = _rgba(_base.render_png(ex.draw, ex.result)[0])
    assert _canvas._LAYERS_ON is False
    assert abs(before.astype(int) - after.astype(int)).max() <= 1


def test_where_pages_cannot_run_the_picture_script_the_picture_is_ipywidgets_image(monkeypatch):
    """Colab runs anywidget's script only after enable_custom_widget_manager(): there an explorer
    shows ipywidgets' own image, and a page that never says it has shown the picture gets no frame."""
    import sys
    import types

    import ipywidgets as widgets

    from course_lib.widgets._frames import Picture

    assert isinstance(roofline_explorer("H100 SXM", "bf16").image, Picture)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    ex = roofline_explorer("H100 SXM", "bf16")
    assert type(ex.image) is widgets.Image and bytes(ex.image.value).startswith(b"\x89PNG")
    ex.controls["batch"].value = 4
    assert ex.result[0].kernel.name.startswith("your matmul (4x") and not ex._frames


def test_a_value_the_browser_snaps_to_its_step_grid_changes_nothing(monkeypatch):
    """Just after display a float slider's page may send its value back snapped to the step grid
    (1.3 as 0.1 + 12 x 0.1): the same picture, so nothing is drawn and the frames of a hand's first
    steps, being drawn ahead, are not cancelled. A real step still draws."""
    import asyncio

    from course_lib.widgets import _base
    from course_lib.widgets.memory import pipeline_explorer

    monkeypatch.setattr(_base, "_WARM_AFTER_S", 0.01)
    monkeypatch.setattr(_base, "_SHARPEN_AFTER_S", 60)

    async def snap_then_step():
        ex = pipeline_explorer()
        ex.image._handle_custom_msg({"event": "shown"}, [])
        pending = ex._ahead
        _base.UPDATE_LOG.clear()
        copy = ex.controls["t_copy_us"]
        copy.set_state({"value": 0.1 + 12 * 0.1})
        snapped = (ex._ahead is pending, list(_base.UPDATE_LOG))
        await _settled(ex)
        held = [frame[4]["buffers"] for frame in ex._frames.values()]
        start = ex.controls["buffers"].value
        ex.controls["buffers"].set_state({"value": start + 1})
        step = dict(_base.UPDATE_LOG[-1])
        copy.set_state({"value": 1.5})
        moved = dict(_base.UPDATE_LOG[-1])
        for handle in (ex._sharpen, ex._ahead):
            if handle is not None:
                handle.cancel()
        return snapped, held, start, step, moved

    (kept, logged), held, start, step, moved = asyncio.run(snap_then_step())
    assert kept and logged == []
    assert start + 1 in held and step.get("drawn_ahead")
    assert moved["values"]["t_copy_us"] == "1.5" and not moved.get("drawn_ahead")
