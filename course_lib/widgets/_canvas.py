"""What makes an explorer's redraw cheap: the canvas it is drawn on.

An explorer draws the same figure again and again with new data: the same tick labels, the same
titles, mostly the same axes. Matplotlib lays all of it out and rasterises it on every draw. Two
caches on the explorer canvas keep the result of that work, and nothing else changes:

- ``_canvas_class()``: a renderer that rasterises a plain-text string once and reuses its bitmap;
- ``cache_axis_drawing(fig)``: each axis of ``fig`` (its ticks, tick labels, grid lines and label)
  and each legend is drawn once per look into a transparent layer, and that layer is laid back at
  the artist's place in the drawing order while the look is the same. The look is what the artist
  would draw: for an axis the tick positions and labels its locator and formatter give now, the
  view limits, scale, axes box, tick and label properties; for a legend its texts, samples, place
  and frame (a legend placed "best" depends on the data: always drawn). Computing a look costs a
  few per cent of drawing the artist.

A cached layer is composited where matplotlib would draw the artist, so the picture is the same
whichever way it was made: pixel for pixel for axes, to one level of 255 where a translucent legend
frame is laid back (tests/test_widgets_base.py compares explorers with matplotlib's own drawing and
checks that a changed look is drawn anew; tests/test_widgets_controls.py compares an explorer's
image after every control moved with a fresh figure's). The looks read some of matplotlib's private
attributes: where one is missing (another release), drawing falls back to matplotlib's own for good.
A layer pays where a slider moves and the axes stay (most steps of a hand on one slider); a look
seen for the first time costs a little more than matplotlib's own drawing (the layer's copy).
tools/bench.py --only widgets times the updates.
"""

from __future__ import annotations

import math
from collections import OrderedDict

__all__ = ["cache_axis_drawing", "LAYER_STATS"]

#: Hits and misses of the axis and legend layers in this process (read by the tests).
LAYER_STATS = {"hits": 0, "misses": 0}
#: Looks kept per axis, and per axes for its legends (a 1x and a 2x picture of a few states).
_LOOKS_KEPT = 12

def _canvas_class():
    """An Agg canvas whose renderer draws each plain-text string from a cached bitmap.

    Matplotlib 3.11 lays out and rasterises every glyph in Python on every draw: about 5 ms a
    label, most of an explorer's redraw. An explorer redraws the same tick labels and titles
    again and again, so its canvas rasterises a string once (FreeType's whole-string path, as
    matplotlib did up to 3.10) and reuses the bitmap. Mathtext, and anything the fast path does
    not support, is drawn by matplotlib as usual; the first failure switches the cache off.
    """
    global _CANVAS
    if _CANVAS is not None:
        return _CANVAS
    from collections import OrderedDict

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag

    class _CachedTextRenderer(RendererAgg):
        _cache: OrderedDict = OrderedDict()
        _limit = 4096               # strings kept (a few KiB each): bounded memory
        enabled = True
        _heights: dict = {}

        def _get_font_height_metrics(self, prop):
            """(ascent, descent, line gap) of ``prop``'s font in pixels, read from its tables once:
            matplotlib reads them for every text on every draw (about a tenth of a redraw)."""
            key = (hash(prop), prop.get_size_in_points(), self.dpi)
            hit = self._heights.get(key)
            if hit is None:
                from matplotlib.font_manager import fontManager, get_font
                hit = (None, None, None)
                font = get_font(fontManager._find_fonts_by_props(prop))
                for table_name, gap, ascent, descent in (
                        ("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                        ("hhea", "lineGap", "ascent", "descent")):
                    table = font.get_sfnt_table(table_name)
                    if table is not None:
                        scale = prop.get_size_in_points() * self.dpi / 72 / font.get_sfnt_table("head")["unitsPerEm"]
                        hit = (table[ascent] * scale, -table[descent] * scale, table[gap] * scale)
                        break
                if len(self._heights) > 256:
                    self._heights.clear()
                self._heights[key] = hit
            return hit

        def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
            if ismath or not _CachedTextRenderer.enabled:
                return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
            try:
                font = self._prepare_font(prop)
                key = (font.fname, prop.get_size_in_points(), self.dpi, s, bool(gc.get_antialiased()))
                hit = self._cache.get(key)
                if hit is None:
                    font.set_text(s, 0, flags=get_hinting_flag())
                    font.draw_glyphs_to_bitmap(antialiased=key[-1])
                    xo, yo = font.get_bitmap_offset()
                    hit = (np.array(font.get_image()), xo / 64, yo / 64, font.get_descent() / 64)
                    self._cache[key] = hit
                    if len(self._cache) > self._limit:
                        self._cache.popitem(last=False)
                image, xo, yo, descent = hit
                xd, yd = descent * math.sin(math.radians(angle)), descent * math.cos(math.radians(angle))
                self._renderer.draw_text_image(image, round(x + xo + xd), round(y + yo + yd) + 1, angle, gc)
            except Exception:       # another matplotlib: its own path from now on
                _CachedTextRenderer.enabled = False
                super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderers: OrderedDict = OrderedDict()

    class _ExplorerCanvas(FigureCanvasAgg):
        """One renderer per pixel size, shared by every explorer figure of that size: matplotlib
        caches text extents per renderer, so a fresh figure measures its labels only once."""

        def get_renderer(self):
            key = (*self.get_width_height(physical=True), self.figure.dpi)
            if key not in renderers:
                renderers[key] = _CachedTextRenderer(*key)
                if len(renderers) > 8:
                    renderers.popitem(last=False)
            self.renderer = renderers[key]
            return self.renderer

    _CANVAS = _ExplorerCanvas
    return _CANVAS


_CANVAS = None


def _text_look(text, content: bool = True) -> tuple:
    return (text.get_visible(), text.get_text() if content else None, text.get_rotation(), text.get_fontsize(),
            str(text.get_color()), text.get_ha(), text.get_va(), text.get_fontweight(),
            tuple(text.get_fontfamily()), text.get_alpha())


def _line_look(line) -> tuple:
    return (line.get_visible(), str(line.get_color()), line.get_linestyle(), line.get_linewidth(),
            line.get_marker(), line.get_markersize(), line.get_markeredgewidth(), line.get_alpha())


def _ticks_look(ticks) -> tuple:
    # A tick's label text is what the last draw put there, not what this one will (the axis's
    # labels are in the look already): left out, or every look would depend on the one before.
    return tuple((_text_look(t.label1, False), _text_look(t.label2, False), _line_look(t.tick1line),
                  _line_look(t.tick2line), _line_look(t.gridline), t._tickdir, t.get_pad())
                 for t in ticks)


def _axis_look(axis, renderer) -> tuple:
    """Everything an axis's drawing depends on, cheap to compute: equal looks draw equal pixels.

    The tick positions and labels are computed as the axis's own draw computes them (locator,
    then formatter); the tick objects' properties are read as they stand (a plot may have rotated
    or coloured its labels)."""
    ax = axis.axes
    major = axis.get_majorticklocs()
    minor = axis.get_minorticklocs()
    major_labels = tuple(axis.major.formatter.format_ticks(major))
    minor_labels = tuple(axis.minor.formatter.format_ticks(minor))
    offset = axis.major.formatter.get_offset()
    spines = tuple((name, str(spine.get_position()), spine.get_visible())
                   for name, spine in ax.spines.items())
    label = axis.label
    return (renderer.width, renderer.height, renderer.dpi, tuple(ax.bbox.bounds),
            tuple(map(float, axis.get_view_interval())), axis.get_scale(),
            getattr(axis._scale, "base", None), tuple(map(float, major)), major_labels,
            tuple(map(float, minor)), minor_labels, offset, _text_look(axis.offsetText),
            _ticks_look(axis.get_major_ticks(len(major))), _ticks_look(axis.get_minor_ticks(len(minor))),
            repr(sorted(axis._major_tick_kw.items())), repr(sorted(axis._minor_tick_kw.items())),
            _text_look(label), axis.label_position if hasattr(axis, "label_position") else None,
            axis._autolabelpos, None if axis._autolabelpos else tuple(label.get_position()),
            spines, ax.get_frame_on())


_OFFSCREEN: OrderedDict = OrderedDict()


def _offscreen(renderer):
    """A transparent renderer of ``renderer``'s size (one kept per size: its text caches stay warm)."""
    key = (renderer.width, renderer.height, renderer.dpi)
    off = _OFFSCREEN.get(key)
    if off is None:
        off = _OFFSCREEN[key] = type(renderer)(*key)
        if len(_OFFSCREEN) > 4:
            _OFFSCREEN.popitem(last=False)
    off.clear()
    return off


def _handle_look(handle) -> tuple:
    """What a legend's sample artist looks like (a line, a patch, a collection); anything else
    gets a look of its own that no other draw shares, so it is always drawn anew."""
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(handle, Line2D):
        return ("line", _line_look(handle), str(handle.get_markerfacecolor()),
                str(handle.get_markeredgecolor()), handle.get_drawstyle())
    if isinstance(handle, Patch):
        return ("patch", type(handle).__name__, str(handle.get_facecolor()), str(handle.get_edgecolor()),
                handle.get_linewidth(), handle.get_linestyle(), handle.get_hatch(), handle.get_alpha(),
                handle.get_visible())
    if isinstance(handle, Collection):
        return ("collection", type(handle).__name__, repr(handle.get_facecolor().tolist()),
                repr(handle.get_edgecolor().tolist()), repr(list(handle.get_linewidth())),
                repr(getattr(handle, "get_sizes", lambda: ())()), handle.get_alpha(), handle.get_visible())
    return ("unknown", object())


def _legend_look(legend, renderer) -> tuple | None:
    """Everything a legend's drawing depends on; None (draw it, keep nothing) where its place
    depends on the data (``loc="best"``)."""
    if legend._loc == 0:
        return None
    ax = legend.axes
    patch = legend.legendPatch
    return (renderer.width, renderer.height, renderer.dpi, tuple(ax.bbox.bounds) if ax is not None else None,
            legend._loc, tuple(legend.get_bbox_to_anchor().bounds), legend._ncols, legend._mode,
            legend._fontsize, legend.get_alpha(), legend.shadow, repr(legend._shadow_props),
            tuple(_text_look(t) for t in legend.texts), tuple(_handle_look(h) for h in legend.legend_handles),
            _text_look(legend.get_title()), legend._alignment,
            tuple(getattr(legend, name) for name in (
                "numpoints", "markerscale", "scatterpoints", "borderpad", "labelspacing", "handlelength",
                "handleheight", "handletextpad", "borderaxespad", "columnspacing")),
            patch.get_visible(), str(patch.get_facecolor()), str(patch.get_edgecolor()), patch.get_linewidth(),
            patch.get_alpha(), type(patch.get_boxstyle()).__name__, repr(sorted(vars(patch.get_boxstyle()).items())))


_LOOKS = {"axis": _axis_look, "legend": _legend_look}
#: False once a look could not be computed (another matplotlib): every artist is drawn as usual.
_LAYERS_ON = True


def _switch_layers_off() -> None:
    global _LAYERS_ON
    _LAYERS_ON = False


def _draw_cached(kind: str, artist, renderer) -> None:
    """``artist.draw``, laying back a layer drawn before when the artist looks the same."""
    import numpy as np

    if not artist.get_visible():
        return
    try:
        look = _LOOKS[kind](artist, renderer) if hasattr(renderer, "buffer_rgba") and _LAYERS_ON else None
    except Exception:       # a matplotlib whose private names differ: its own drawing from now on
        _switch_layers_off()
        look = None
    if look is None:        # a vector export, or a look that cannot be told: matplotlib draws it
        type(artist).draw(artist, renderer)
        return
    # An axis keeps its layers; a legend is made anew by every draw of the plot, so its layers
    # are kept by the axes (or figure) it belongs to.
    holder = artist if kind == "axis" else (artist.axes or artist.figure)
    layers = holder.__dict__.setdefault(f"_explorer_{kind}_layers", OrderedDict())
    layer = layers.get(look)
    if layer is None:
        LAYER_STATS["misses"] += 1
        off = _offscreen(renderer)
        type(artist).draw(artist, off)
        pixels = np.asarray(off.buffer_rgba())
        rows = np.flatnonzero(pixels[..., 3].any(axis=1))
        cols = np.flatnonzero(pixels[..., 3].any(axis=0))
        if rows.size:
            top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
            # draw_image takes the rows bottom first, and places the lower-left corner counted
            # from the canvas's bottom.
            layer = (left, off.height - bottom, np.ascontiguousarray(pixels[top:bottom, left:right][::-1]))
        else:
            layer = (0, 0, None)
        layers[look] = layer
        if len(layers) > _LOOKS_KEPT:
            layers.popitem(last=False)
    else:
        LAYER_STATS["hits"] += 1
        layers.move_to_end(look)
    x, y, image = layer
    if image is not None:
        gc = renderer.new_gc()
        renderer.draw_image(gc, x, y, image)
        gc.restore()
    artist.stale = False


def cache_axis_drawing(fig) -> None:
    """Draw every axis and legend of ``fig`` through a layer cache from now on (idempotent; a
    plot makes a new legend at each draw, which is wrapped when this is called again)."""
    import functools

    for ax in fig.axes:
        for axis in ax._axis_map.values():
            if "draw" not in vars(axis):
                axis.draw = functools.partial(_draw_cached, "axis", axis)
        legend = ax.get_legend()
        if legend is not None and "draw" not in vars(legend):
            legend.draw = functools.partial(_draw_cached, "legend", legend)
