"""The one piece of wiring every explorer shares.

``FigureExplorer`` owns a fixed-height output area and a row of controls. On every change it
calls ``compute(**values)`` (a pure function), then ``draw(result)`` (a plot_* function that
returns a Figure), and shows the figure as one PNG image; the last result stays on
``explorer.result`` for the next cell. A draw step that takes ``ax`` draws every update after the
first on the same figure (``render_png``): an update costs the drawing, not building axes and
ticks again, and the figure's axes and legends are laid back from cached layers while they look
the same (``_canvas``). Images are drawn at twice the size they are shown, sharp on high-density
screens; while a hand moves a control in the browser, each frame is drawn at the size it is shown
(a quarter of the pixels to encode, send and decode) and drawn sharp again once the controls rest.
Once a page shows an explorer, and while a hand is on a slider, the frames one step either side
are drawn ahead in the kernel's idle time (exactly the pictures an update would draw:
tests/test_widgets_base.py) and sent to the page, which keeps them and shows one the moment a
control reaches its values, without waiting for the kernel (``_frames.Picture``); the kernel still
answers every step. Sliders update while dragged: ipywidgets' frontend sends a
widget's next value only when the kernel is idle again, keeping just the latest, so a busy kernel
never draws a queue of stale frames (the drag in tools/bench_browser.py shows it); a frame drawn
ahead delays a value by at most one frame. Errors from bad control combinations are shown as one
line in the output, never as a traceback. Displayed, an explorer is one output holding the widget
and, for pages without a kernel (the course website), its initial figure and a one-line note.
"""

from __future__ import annotations

import base64
import collections
import math
import time
from typing import Callable

from ._canvas import _canvas_class, cache_axis_drawing
from ._frames import Picture, page_key

__all__ = ["FigureExplorer", "fixed_figure", "pick", "powers_of_two", "render_png"]


#: Shown, with the initial figure, where the widget cannot run (the course website, a static render).
NOTE_TEXT = "interactive in JupyterLab (make lab), Binder or Colab; this is its initial figure"

#: CSS pixels per inch of figure: a 7.5-inch figure is shown 600 px wide.
_DPI = 80
#: Image pixels per CSS pixel: drawn at twice the size it is shown, so text stays sharp on a
#: high-density (2x) screen. Four times the pixels cost an update about 10 ms more than 1x, most
#: of it the PNG (tools/bench.py --only widgets measures the update).
_PIXEL_RATIO = 2
#: Image pixels per CSS pixel of the frames drawn while a hand moves a control in the browser: a
#: quarter of the pixels to encode, send and decode. When the controls have rested for
#: ``_SHARPEN_AFTER_S`` the same result is drawn again at ``_PIXEL_RATIO`` (tools/bench_browser.py
#: measures both).
_LIVE_PIXEL_RATIO = 1
_SHARPEN_AFTER_S = 1.0
#: While a hand moves a slider in the browser, the frames one step either side of it are drawn
#: ahead in the kernel's idle time (the step in the same direction first), so the next key press
#: or drag step is answered with a picture already drawn. Frames kept per explorer (a few KiB
#: each); a frame is only ever shown for exactly the control values it was drawn for.
_FRAMES_AHEAD = 2
_FRAMES_KEPT = 24
#: Seconds after a page has shown an explorer before frames are drawn for it: its shown values at
#: the live size (the canvas warm, and a way back), then one step either side of every slider (the
#: last slider first), at most ``_FRAMES_AT_SHOWN``, each sent to the page to keep. The first step a
#: hand takes is then shown by the page itself. Nothing is drawn where no page shows the explorer
#: (a script, a test, nbval).
_WARM_AFTER_S = 0.3
_FRAMES_AT_SHOWN = 12
#: Seconds after a frame is sent before frames are drawn ahead, so that drawing them does not
#: compete with the server relaying that frame and the browser decoding it (on two cores the
#: browser's own work after a key press, ~100 ms, is most of a press drawn ahead: see
#: tools/bench_browser.py); a new value that arrives first cancels them.
_AHEAD_AFTER_S = 0.12
#: zlib level of the PNG: level 1 compresses a figure to about 3% of its pixels' bytes.
_PNG_COMPRESS_LEVEL = 1

#: The last updates of every explorer in this process, oldest first: one dict each, with the wall
#: clock (``time.time()``, seconds) when the change arrived, when the image was sent and when the
#: update was done, the seconds spent computing, drawing and encoding, the PNG's bytes and digest
#: (``_digest``), its pixel ratio and the controls' values. Bounded; read by
#: tools/bench_browser.py to split a browser's key-press-to-picture time.
UPDATE_LOG: collections.deque = collections.deque(maxlen=512)


def _png(rgba) -> bytes:
    """An RGBA PNG of an ``(h, w, 4)`` uint8 array: no row filters, zlib level 1.

    Pillow tries filters on every row: 2-3 times slower for a figure (flat colours compress well
    unfiltered), and at twice the pixels the encoding would be a third of an update. RGBA, not
    RGB: dropping the alpha byte is a strided copy that costs more than compressing it.
    """
    import struct
    import zlib

    import numpy as np

    h, w = rgba.shape[:2]
    rows = np.empty((h, 1 + 4 * w), np.uint8)
    rows[:, 0] = 0                                  # filter type 0 (none) for each row
    rows[:, 1:] = np.ascontiguousarray(rgba).reshape(h, 4 * w)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, _PNG_COMPRESS_LEVEL)) + chunk(b"IEND", b""))


def _digest(png: bytes) -> str:
    """The first 16 hex digits of the PNG's SHA-256: which picture a log entry sent (the browser
    benchmark compares it with the picture a page showed)."""
    import hashlib
    return hashlib.sha256(png).hexdigest()[:16]


def _plain_number(value: float, _pos=None) -> str:
    """A log-axis tick label without mathtext: 0.01, 0.5, 20, 500, 2k, 30M, 1T."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"


def _readable_log_axes(fig) -> None:
    """Log axes in an explorer: major ticks only (minor ones cost about half of a redraw), labelled
    in plain text (mathtext is slow to draw), and at least two labels however narrow the range.
    Ticks a plot fixed itself (``set_xticks``) stay where it put them."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, MaxNLocator, NullLocator

    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim), (ax.yaxis, ax.get_ylim)):
            if axis.get_scale() != "log":
                continue
            if isinstance(axis.get_major_locator(), FixedLocator):
                # Ticks the plot placed itself (GROUP_M's powers of two): kept, labelled in plain text.
                axis.set_major_formatter(FuncFormatter(_plain_number))
                axis.set_minor_locator(NullLocator())
                continue
            lo, hi = sorted(lim())
            decades = math.log10(hi / lo) if lo > 0 else 99
            if decades >= 0.5:
                subs = (1.0,) if decades >= 3 else (1.0, 2.0, 5.0) if decades >= 0.8 else \
                    (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
                axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
            else:                       # under half a decade: evenly spaced round values
                axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
            axis.set_major_formatter(FuncFormatter(_plain_number))
            axis.set_minor_locator(NullLocator())


def _clear_plot(ax) -> None:
    """Take back what a plot_* function drew on ``ax``, keeping the axes, its spines and its tick
    objects (building those is most of the cost of a new figure): the data artists and the legend
    go, the data limits, autoscaling, inversion, scales and colour cycle return to a new axes'
    state. tests/test_widgets_controls.py checks the images against freshly built figures."""
    from matplotlib.transforms import Bbox

    for artist in [*ax.lines, *ax.patches, *ax.texts, *ax.collections, *ax.images, *ax.artists,
                   *ax.tables]:
        artist.remove()
    del ax.containers[:]                 # bar containers: the legend would list them again
    if ax.legend_ is not None:
        ax.legend_.remove()
    for loc in ("left", "center", "right"):
        ax.set_title("", loc=loc)
    ax.set_xlabel("")
    ax.set_ylabel("")
    # Only a log axis goes back to linear: resetting a linear one would drop a categorical axis's
    # locator (bar names) along with the defaults.
    if ax.get_xscale() != "linear":
        ax.set_xscale("linear")
    if ax.get_yscale() != "linear":
        ax.set_yscale("linear")
    ax.xaxis.set_inverted(False)
    ax.yaxis.set_inverted(False)
    ax.dataLim.set_points(Bbox.null().get_points())
    ax.ignore_existing_data_limits = True
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)              # colours start again at C0


def _draw_accepts_ax(draw: Callable) -> bool:
    import inspect
    try:
        return "ax" in inspect.signature(draw).parameters
    except (TypeError, ValueError):
        return False


def render_png(draw: Callable, result, figure=None, timings: dict | None = None,
               pixel_ratio: float = _PIXEL_RATIO):
    """``draw(result)``'s Figure as PNG bytes drawn at ``pixel_ratio`` x (``_PIXEL_RATIO``, 2, unless
    told); returns the bytes, the size in CSS pixels and the figure.

    With ``figure`` (one this function returned before, for the same ``draw``), its axes are
    cleared and drawn again with ``draw(result, ax=...)`` (one axes, or a tuple of them) instead of
    building a new figure. A fixed layout and no ``bbox_inches="tight"`` (which draws the figure
    twice); the figure is drawn once on the explorer canvas and its pixels encoded at zlib level 1.
    The figure is never left in pyplot's list (an inline backend would show it again).
    ``timings``, when given, receives the seconds spent drawing (``draw_s``) and encoding (``encode_s``).
    """
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np

    start = time.perf_counter()
    dpi = _DPI * pixel_ratio
    # A fixed title height spares matplotlib measuring every tick label to place titles.
    with matplotlib.rc_context({"figure.dpi": dpi, "axes.titley": 1.0}):
        if figure is not None:
            axes = list(figure.axes)
            for ax in axes:
                _clear_plot(ax)
            fig = draw(result, ax=axes[0] if len(axes) == 1 else tuple(axes))
            if fig is not figure:
                raise RuntimeError("draw(result, ax=...) must draw on the axes it is given")
            if fig.dpi != dpi:
                fig.set_dpi(dpi)
        else:
            fig = draw(result)
            plt.close(fig)
            fig.set_dpi(dpi)
            _canvas_class()(fig)
        _readable_log_axes(fig)
        cache_axis_drawing(fig)
        canvas = fig.canvas
        canvas.draw()
        drawn = time.perf_counter()
        png = _png(np.asarray(canvas.buffer_rgba()))
        w, h = canvas.get_width_height(physical=True)
    if timings is not None:
        timings["draw_s"], timings["encode_s"] = drawn - start, time.perf_counter() - drawn
    return png, (round(w / pixel_ratio), round(h / pixel_ratio)), fig


def powers_of_two(lo: int, hi: int, also=()) -> list[int]:
    """Slider options ``lo, 2 lo, ..., hi`` (powers of two), with any ``also`` values merged in:
    a range over orders of magnitude, each step the same ratio."""
    options = {2 ** k for k in range(int(hi).bit_length()) if lo <= 2 ** k <= hi}
    return sorted(options | {int(v) for v in also})


def pick(name: str, value, options, lookup=None):
    """The option a widget should hold for ``value``: ``lookup(value)`` (the library's own name
    lookup, forgiving case and spelling) when given, then checked against ``options``."""
    canonical = lookup(value) if lookup is not None else value
    if canonical not in list(options):
        raise ValueError(f"{name} must be one of {list(options)} in this explorer, got {value!r}")
    return canonical


def fixed_figure(figsize, ncols: int = 1, width_ratios=None, **margins):
    """A figure of ``ncols`` axes in one row with fixed margins (``subplots_adjust`` keywords).

    For an explorer's draw step: ``tight_layout`` measures every label on each update (tens of
    ms); an explorer's layout does not change between updates, so it is fixed once, here.
    """
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, ncols, figsize=figsize,
                             gridspec_kw={"width_ratios": width_ratios} if width_ratios else None)
    fig.subplots_adjust(**margins)
    return fig, axes


def _steps_either_side(controls: dict, change) -> list[dict]:
    """The controls' values with the slider that just moved one step further the way it moved,
    then one step back: where a hand on that slider goes next. Empty for controls that are not
    sliders (a dropdown, a text box: no next step to guess)."""
    import ipywidgets as widgets

    control = change["owner"]
    name = next((n for n, c in controls.items() if c is control), None)
    if name is None:
        return []
    values = {n: c.value for n, c in controls.items()}
    if isinstance(control, widgets.SelectionSlider):
        options = list(control._options_values)
        try:
            now, before = options.index(change["new"]), options.index(change["old"])
        except ValueError:
            return []
        way = 1 if now >= before else -1
        steps = [options[i] for i in (now + way, now - way) if 0 <= i < len(options)]
    elif isinstance(control, widgets.FloatLogSlider):      # steps of the exponent, from min
        way = 1 if change["new"] >= change["old"] else -1
        if change["new"] <= 0 or not control.step:
            return []
        index = round((math.log(change["new"], control.base) - control.min) / control.step)
        steps = [control.base ** (control.min + i * control.step) for i in (index + way, index - way)
                 if control.min <= control.min + i * control.step <= control.max + 1e-9]
    elif isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
        way = 1 if change["new"] >= change["old"] else -1
        digits = max(0, -math.floor(math.log10(control.step))) + 6 if control.step else 12
        steps = [v for v in (change["new"] + way * control.step, change["new"] - way * control.step)
                 if control.min <= v <= control.max]
        steps = [int(v) if isinstance(control, widgets.IntSlider) else round(v, digits) for v in steps]
    else:
        return []
    return [{**values, name: v} for v in steps]


def _pages_run_picture_script() -> bool:
    """Whether the pages showing this kernel's widgets run ``Picture``'s script (anywidget's):
    JupyterLab, Notebook 7 and VS Code do; Colab only after ``enable_custom_widget_manager()``,
    so there the picture is ipywidgets' own image, and the kernel answers every step."""
    import sys
    return "google.colab" not in sys.modules


def _running_loop():
    """The running asyncio loop (a kernel's), or None in a plain script or test: nothing can run later."""
    import asyncio
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class FigureExplorer:
    def __init__(self, controls: dict, compute: Callable, draw: Callable,
                 describe: Callable | None = None, height_px: int = 430, title: str = ""):
        import ipywidgets as widgets
        self._widgets = widgets
        self.controls = dict(controls)
        self.compute = compute
        self.draw = draw
        self.describe = describe
        self._title = title
        self.result = None
        self.last_update_s = self.last_update_cpu_s = None
        # A draw step that takes ``ax`` redraws on the same figure at each update (see render_png).
        self._reuse_figure = _draw_accepts_ax(draw)
        self._figure = None
        self._pixel_ratio = _PIXEL_RATIO
        self._sharpen = None        # the pending full-sharpness redraw (an asyncio TimerHandle)
        self._shown_key = None      # the controls' values (``_key``) of the picture shown
        self._ahead = None          # the pending draw-ahead (an asyncio TimerHandle)
        self._frames: collections.OrderedDict = collections.OrderedDict()   # values -> drawn frame
        self.text = widgets.HTML(layout=widgets.Layout(min_height="2.6em"))
        # The image is drawn at twice the size it is shown (its width and height are set in CSS
        # pixels), sharp on 2x screens; the box around it keeps ``height_px`` so the page does not
        # jump while a new figure renders. The page keeps the frames drawn ahead (``_frames``).
        if _pages_run_picture_script():
            self.image = Picture.watching(self.controls, self.text)
            self.image.on_msg(self._on_page_message)
        else:
            self.image = widgets.Image(format="png")
        # ``align_items``: the box is a flex row and ipywidgets styles an image ``height: auto``, so
        # by default a figure shorter than the box was stretched to its height, text and all.
        self._image_box = widgets.Box([self.image], layout=widgets.Layout(min_height=f"{height_px}px",
                                                                          align_items="flex-start"))
        box_items = list(self.controls.values())
        rows = [widgets.HBox(box_items[i:i + 3]) for i in range(0, len(box_items), 3)]
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        self.widget = widgets.VBox(header + rows + [self.text, self._image_box])
        for control in self.controls.values():
            if hasattr(control, "style") and "description_width" in control.style.keys:
                control.style.description_width = "initial"     # never truncate a control's label
            control.observe(self._on_change, names="value")
        self.update()

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _on_page_message(self, _widget, content, _buffers) -> None:
        """A page has shown the explorer: send it the frames kept, then draw, once the page is
        done, the shown values at the live size and one step either side of every slider."""
        loop = _running_loop()
        if not isinstance(content, dict) or content.get("event") != "shown" or loop is None:
            return
        for frame in self._frames.values():
            self._hold(frame)
        queue = [self.values()]
        if _FRAMES_AHEAD:
            for control in reversed(list(self.controls.values())):
                now = control.value
                queue += _steps_either_side(self.controls, {"owner": control, "old": now, "new": now})
        queue = [v for v in queue if self._key(v) not in self._frames][:_FRAMES_AT_SHOWN]
        if queue and self._ahead is None:
            self._ahead = loop.call_later(_WARM_AFTER_S, self._draw_ahead, loop, queue)

    def _hold(self, frame: tuple) -> None:
        """Send the page a frame drawn at the live size, to show when its controls reach its values."""
        _, png, size, text, values = frame
        key = page_key(self.controls, values, _LIVE_PIXEL_RATIO)
        if key is not None and isinstance(self.image, Picture):
            self.image.hold(key, png, size, text)

    def _on_change(self, change) -> None:
        """A change typed in Python redraws at full sharpness. One from the browser (ipywidgets'
        ``set_state`` holds the properties the browser sent locked while it notifies: ``value``,
        or ``index`` for a selection) is drawn at ``_LIVE_PIXEL_RATIO`` at once, and at full
        sharpness once the controls have rested ``_SHARPEN_AFTER_S``: the picture follows the hand."""
        loop = _running_loop() if getattr(change["owner"], "_property_lock", None) else None
        if loop is not None and self._key(self.values()) == self._shown_key:
            # The browser's slider snapped a value to its step grid (1.3 -> 1.3000000000000003) and
            # sent it back: the picture shown is already the one for these values, and the frames
            # being drawn ahead (those of a hand's first steps, just after display) still wanted.
            return
        for pending in (self._sharpen, self._ahead):
            if pending is not None:
                pending.cancel()
        self._sharpen = self._ahead = None
        if loop is None:
            self.update()
            return
        frame = self._frames.get(self._key(self.values()))
        if frame is not None:
            self._show_frame(frame)
        else:
            self.update(pixel_ratio=_LIVE_PIXEL_RATIO)
        if self._pixel_ratio != _PIXEL_RATIO:
            self._sharpen = loop.call_later(_SHARPEN_AFTER_S, self._sharpen_now)
            ahead = [v for v in _steps_either_side(self.controls, change) if self._key(v) not in self._frames]
            if ahead:
                self._ahead = loop.call_later(_AHEAD_AFTER_S, self._draw_ahead, loop, ahead[:_FRAMES_AHEAD])

    def _key(self, values: dict) -> tuple:
        """The frame's key: every control's value; a float to nine significant digits (the browser
        and Python may differ in the last bit of 0.1 + 0.2 or of 10 ** 1.85)."""
        return tuple((name, type(v).__name__, float(f"{v:.9g}") if isinstance(v, float) else v)
                     for name, v in values.items())

    def _draw_ahead(self, loop, queue: list) -> None:
        """Draw the first frame of ``queue`` (values of every control) at the live pixel ratio and
        keep it; the rest follow, one per turn of the event loop, so a message from the browser
        waits at most one frame. A frame that fails to compute or draw is left out (the update,
        if the hand gets there, shows the error)."""
        self._ahead = None
        values = queue.pop(0)
        record = {"explorer": self._title, "t_arrived": time.time(), "ahead": True,
                  "values": {k: repr(v) for k, v in values.items()}}
        start = time.perf_counter()
        try:
            result = self.compute(**values)
            record["compute_s"] = time.perf_counter() - start
            png, size, figure = render_png(self.draw, result, self._figure, record, _LIVE_PIXEL_RATIO)
            self._figure = figure if self._reuse_figure else None
            text = self.describe(result) if self.describe else ""
        except Exception:          # a frame drawn ahead is never shown if it fails
            self._figure = None
        else:
            self._keep((result, png, size, text, values))
            self._hold(self._frames[self._key(values)])
            record.update(png_bytes=len(png), png_sha=_digest(png), t_sent=time.time())
            UPDATE_LOG.append(record)
        if queue:
            self._ahead = loop.call_later(0.001, self._draw_ahead, loop, queue)

    def _keep(self, frame: tuple) -> None:
        """Keep a frame drawn at the live size: (result, PNG, size, text, the controls' values)."""
        self._frames[self._key(frame[4])] = frame
        while len(self._frames) > _FRAMES_KEPT:
            self._frames.popitem(last=False)

    def _show_frame(self, frame) -> None:
        """Show a frame drawn ahead for the controls' current values: no compute, no draw."""
        arrived, start = time.time(), time.perf_counter()
        result, png, size, text, _ = frame
        self.result = result
        record = {"explorer": self._title, "t_arrived": arrived, "compute_s": 0.0, "draw_s": 0.0,
                  "encode_s": 0.0, "drawn_ahead": True, "pixel_ratio": _LIVE_PIXEL_RATIO,
                  "values": {k: repr(v) for k, v in self.values().items()}}
        self._send(png, size, _LIVE_PIXEL_RATIO, record)
        self.text.value = text
        self.last_update_s = time.perf_counter() - start
        self.last_update_cpu_s = None
        record["t_sent"] = time.time()
        UPDATE_LOG.append(record)

    def _sharpen_now(self) -> None:
        """The shown result drawn again at ``_PIXEL_RATIO`` (the controls have rested)."""
        self._sharpen = None
        if self.result is None or self._pixel_ratio == _PIXEL_RATIO:
            return
        record = {"explorer": self._title, "t_arrived": time.time(), "compute_s": 0.0, "sharpen": True}
        self._show(self.result, _PIXEL_RATIO, record)
        record["t_sent"] = time.time()
        UPDATE_LOG.append(record)

    def _show(self, result, pixel_ratio: float, record: dict) -> tuple:
        """Draw ``result`` at ``pixel_ratio`` (on the same figure where the draw step takes ``ax``) and
        send it as the image; ``record`` receives the draw, encode and send times. Returns the PNG
        and its size in CSS pixels."""
        record["pixel_ratio"] = pixel_ratio
        try:
            png, size, figure = render_png(self.draw, result, self._figure, record, pixel_ratio)
        except Exception:
            self._figure = None             # half drawn: the next update starts a new figure
            raise
        self._figure = figure if self._reuse_figure else None
        self._send(png, size, pixel_ratio, record)
        return png, size

    def _send(self, png: bytes, size: tuple, pixel_ratio: float, record: dict) -> None:
        """Show ``png`` (``size`` in CSS pixels): the picture and its size in one message."""
        start = time.perf_counter()
        with self.image.hold_sync():
            self.image.value = png
            self.image.width, self.image.height = str(size[0]), str(size[1])
            if isinstance(self.image, Picture):
                self.image.key = page_key(self.controls, self.values(), pixel_ratio) or []
        self._pixel_ratio = pixel_ratio
        self._shown_key = self._key(self.values())
        record.update(t_image_sent=time.time(), png_bytes=len(png), png_sha=_digest(png),
                      send_s=time.perf_counter() - start)

    def update(self, pixel_ratio: float = _PIXEL_RATIO) -> None:
        """Recompute and redraw, on the same figure where the draw step takes ``ax``; show it as PNG
        drawn at ``pixel_ratio`` image pixels per CSS pixel."""
        arrived = time.time()
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            result = self.compute(**self.values())
        except (ValueError, TypeError) as exc:
            self.text.value = f"<span style='color:#b00'>{exc}</span>"
            return
        computed = time.perf_counter()
        self.result = result
        record = {"explorer": self._title, "t_arrived": arrived, "compute_s": computed - start,
                  "values": {k: repr(v) for k, v in self.values().items()}}
        png, size = self._show(result, pixel_ratio, record)
        self.text.value = self.describe(result) if self.describe else ""
        if pixel_ratio == _LIVE_PIXEL_RATIO:        # a frame like those drawn ahead: the way back
            self._keep((result, png, size, self.text.value, self.values()))
        self.last_update_s = time.perf_counter() - start
        self.last_update_cpu_s = time.process_time() - start_cpu      # what the update cost this process
        record["t_sent"] = time.time()
        UPDATE_LOG.append(record)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """One output: the live widget, and for renderers without a kernel its figure and a note.

        JupyterLab, Colab and VS Code render the widget view (they rank it first). A static render
        of the executed notebook (the course website, nbconvert, GitHub) shows ``image/png``, the
        figure at the moment of display; ``text/plain`` says where the explorer is interactive
        (the website shows it under the figure). Built once, at display; updates add nothing.
        """
        data = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude, **kwargs))
        data["text/plain"] = f"{self._title}: {NOTE_TEXT}" if self._title else NOTE_TEXT.capitalize()
        metadata = {}
        if self.image.value:
            data["image/png"] = base64.b64encode(self.image.value).decode("ascii")
            metadata["image/png"] = {"width": self.image.width, "height": self.image.height}
        return data, metadata
