"""Drawing: one module per concept, each with ``plot_*(result, ax=None) -> Figure``.

Plot functions take the frozen results that compute modules return; they never compute
physics themselves. ``use_course_style()`` is the one explicit, opt-in style switch. Two small
helpers keep figures readable: ``place_labels`` puts point labels where they collide with
nothing, and ``readable_log_ticks`` labels a log axis that spans too little for its decades.
"""

from __future__ import annotations

import re

import numpy as np

from course_lib._validate import (check_array, check_bool, check_choice, check_instance, check_int, check_items,
                                 check_number, check_sequence)

__all__ = ["use_course_style", "new_axes", "place_labels", "readable_log_ticks", "text_problems",
           "plural", "powers_as_math"]

_POWER = re.compile(r"(\d+)\^(-?\d+)")


def use_course_style() -> None:
    """Opt-in matplotlib defaults for the lessons (never applied at import).

    In a notebook it also asks the inline backend for 2x ("retina") PNGs, so static figures
    stay sharp on high-density screens at the same displayed size.
    """
    import matplotlib as mpl
    mpl.rcParams.update({
        "figure.figsize": (7.5, 4.2), "figure.dpi": 90, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 10,
    })
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:            # pragma: no cover - IPython comes with Jupyter
        shell = None
    if shell is not None and "IPKernelApp" in getattr(shell, "config", {}):
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        set_matplotlib_formats("retina")
        _show_before_redraw(shell)


def _show_before_redraw(shell) -> None:
    """After each cell pyplot redraws every open figure (a hook meant for interactive windows),
    and it ran before the inline backend's hook that shows the figures and closes them: every
    figure was drawn once for nothing, a third of a plotting cell. Moving pyplot's hook to the end
    leaves it nothing to draw. Idempotent; a hook that is not there is left alone."""
    callbacks = shell.events.callbacks.get("post_execute", [])
    for hook in [f for f in callbacks if getattr(f, "__name__", "") == "_draw_all_if_interactive"]:
        shell.events.unregister("post_execute", hook)
        shell.events.register("post_execute", hook)


def _check_result(name, value, where: str, made_by: str, many: bool = False, min_len: int = 1):
    """Check a plot's input: an instance of ``course_lib.<where>`` (``many``: a list of them, or
    one), as ``made_by`` returns it. Returns the value (``many``: a list)."""
    import importlib

    module, cls_name = where.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"course_lib.{module}"), cls_name)
    if many:
        return check_items(name, value, cls, made_by, min_len=min_len)
    return check_instance(name, value, cls, made_by)


def _check_mapping(name, value, what: str) -> dict:
    """A plot's non-empty dict input (``what`` says what its entries are)."""
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a non-empty dict of {what}, got {type(value).__name__} {value!r:.60}")
    if not value:
        raise ValueError(f"{name} must be a non-empty dict of {what}, got an empty dict")
    return value


def new_axes(ax=None, figsize=(7.5, 4.2)):
    """Return ``(fig, ax)``: the given axes and its figure, or a fresh pair."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    if ax is not None:
        if not isinstance(ax, Axes):
            raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
        return ax.figure, ax
    size = check_array("figsize", figsize, ndim=1)
    if size.size != 2 or np.any(size <= 0) or np.any(size > 100):
        raise ValueError(f"figsize must be (width, height) in inches, each in (0, 100], got {figsize!r}")
    fig, ax = plt.subplots(figsize=figsize)
    # Fixed margins instead of a layout engine: widgets redraw often and must stay fast.
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.13, top=0.91)
    return fig, ax


def plural(n, word: str, plural_form: str | None = None) -> str:
    """``"1 warp"``, ``"2 warps"``, ``"1,024 blocks"``: the count and the word in the right number."""
    n = check_int("n", n, min_value=0)
    if not isinstance(word, str) or (plural_form is not None and not isinstance(plural_form, str)):
        bad, name = (word, "word") if not isinstance(word, str) else (plural_form, "plural_form")
        raise TypeError(f"{name} must be a string, got {type(bad).__name__} {bad!r:.40}")
    return f"{n:,} {word if n == 1 else plural_form or word + 's'}"


def powers_as_math(text: str) -> str:
    """``"GELU 2^28 elements"`` -> ``"GELU $2^{28}$ elements"``: powers drawn as powers (mathtext).
    A text that already holds ``$`` is returned unchanged."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__} {text!r:.40}")
    return text if "$" in text else _POWER.sub(r"$\1^{\2}$", text)


# Candidate places for a label, tried in order: (dx, dy) in points from its point, and alignment.
_NEAR = [(6, -3, "left", "top"), (6, 3, "left", "bottom"), (-6, -3, "right", "top"),
         (-6, 3, "right", "bottom"), (7, 0, "left", "center"), (-7, 0, "right", "center"),
         (0, -8, "center", "top"), (0, 8, "center", "bottom")]
_OFFSETS = _NEAR + [(dx * 1.5, dy * 4 if dy else dy, ha, va) for dx, dy, ha, va in _NEAR if dy] \
    + [(dx * 2, dy * 7, ha, va) for dx, dy, ha, va in _NEAR if dy]


def _renderer(fig):
    get = getattr(fig.canvas, "get_renderer", None)
    return get() if get is not None else fig._get_renderer()


def _check_axes(name, ax):
    from matplotlib.axes import Axes

    check_instance(name, ax, Axes, "plt.subplots()")


def place_labels(ax, labels, pad_px: float = 2.0, avoid_lines: bool = True, **text_kwargs):
    """Label points so no label covers another label, a text, the legend, a marker or (with
    ``avoid_lines``) a line, and every label stays inside the axes.

    ``labels`` is a sequence of ``(x, y, text)`` or ``(x, y, text, kwargs)`` in data coordinates
    (a label's kwargs may give ``xycoords``, e.g. ``ax.get_xaxis_transform()``). Each label, in
    order, goes to the first of a fixed list of offsets around its point where its box, measured
    by the renderer, hits nothing; where none is free, to the offset with the fewest and least
    serious collisions (leaving the axes, then another text, a marker, a line). Placement runs
    when the figure is drawn, so it sees the final limits, layout and legend (shared axes and
    ``tight_layout`` after the call are fine); it is deterministic and measures real text extents
    at the dpi being drawn. Returns the Annotations.
    """
    _check_axes("ax", ax)
    pad_px = check_number("pad_px", pad_px, min_value=0, max_value=100)
    avoid_lines = check_bool("avoid_lines", avoid_lines)
    labels = check_sequence("labels", labels, min_len=0, max_len=1000, scalar_ok=False)
    anns = []
    for i, label in enumerate(labels):
        if not isinstance(label, (tuple, list)) or len(label) not in (3, 4) or not isinstance(label[2], str) \
                or (len(label) == 4 and not isinstance(label[3], dict)):
            raise TypeError(f"labels[{i}] must be (x, y, text) or (x, y, text, kwargs), got {label!r}")
        x = check_number(f"labels[{i}] x", label[0])
        y = check_number(f"labels[{i}] y", label[1])
        text = label[2]
        kwargs = {**text_kwargs, **(label[3] if len(label) > 3 else {})}
        dx, dy, ha, va = _OFFSETS[0]
        anns.append(ax.annotate(powers_as_math(text), (x, y), textcoords="offset points",
                                xytext=(dx, dy), ha=ha, va=va, **kwargs))
    if anns:
        ax.add_artist(_new_placer(ax, anns, pad_px, avoid_lines))
    return anns


def _label_placer_class():
    from matplotlib.artist import Artist

    class LabelPlacer(Artist):
        """An invisible artist drawn before everything else in its axes: it moves its labels."""

        def __init__(self, ax, anns, pad_px, avoid_lines):
            super().__init__()
            self.set_zorder(-1e9)
            self.set_in_layout(False)
            self._ax, self._anns, self._pad, self._avoid_lines = ax, anns, pad_px, avoid_lines

        def get_window_extent(self, renderer=None):
            from matplotlib.transforms import Bbox
            return Bbox.null()

        def draw(self, renderer):
            _place(self._ax, self._anns, renderer, self._pad, self._avoid_lines)

    return LabelPlacer


_PLACER = None          # the Artist subclass, made on first use so importing stays matplotlib-free


def _new_placer(ax, anns, pad_px, avoid_lines):
    global _PLACER
    if _PLACER is None:
        _PLACER = _label_placer_class()
    return _PLACER(ax, anns, pad_px, avoid_lines)


def _place(ax, anns, renderer, pad_px, avoid_lines) -> None:
    from matplotlib.transforms import Bbox

    ax_box = ax.get_window_extent(renderer)
    px_per_pt = renderer.points_to_pixels(1.0)
    ours = set(map(id, anns))
    hard = [t.get_window_extent(renderer) for t in ax.texts
            if id(t) not in ours and t.get_visible() and t.get_text()]
    legend = ax.get_legend()
    if legend is not None and legend.get_visible():
        hard.append(legend.get_window_extent(renderer))
    markers, paths = [], []
    for line in ax.lines:
        if not line.get_visible():
            continue
        path = line.get_transform().transform_path(line.get_path())
        if line.get_marker() not in (None, "None", "", " ") and len(path.vertices) < 500:
            r = px_per_pt * line.get_markersize() / 2
            markers += [Bbox.from_extents(x - r, y - r, x + r, y + r) for x, y in path.vertices]
        if avoid_lines and line.get_linestyle() not in ("None", "", " ") and len(path.vertices) > 1:
            paths.append(path)
    r = px_per_pt * 3
    for ann in anns:
        x, y = ann._get_xy_display()       # the anchor in pixels, whatever its xycoords
        markers.append(Bbox.from_extents(x - r, y - r, x + r, y + r))
    for ann in anns:
        best, best_cost = None, None
        # A label's box is measured once per alignment; another offset only moves it.
        measured = {}
        for dx, dy, ha, va in _OFFSETS:
            if (ha, va) in measured:
                box, dx0, dy0 = measured[ha, va]
                box = box.translated((dx - dx0) * px_per_pt, (dy - dy0) * px_per_pt)
            else:
                ann.set_position((dx, dy))
                ann.set_horizontalalignment(ha)
                ann.set_verticalalignment(va)
                box = ann.get_window_extent(renderer)
                measured[ha, va] = (box, dx, dy)
            box = box.padded(pad_px)
            inside = (box.x0 >= ax_box.x0 and box.x1 <= ax_box.x1 and box.y0 >= ax_box.y0
                      and box.y1 <= ax_box.y1)
            cost = (0 if inside else 1000) + 100 * sum(box.overlaps(b) for b in hard) \
                + 10 * sum(box.overlaps(m) for m in markers) \
                + sum(p.intersects_bbox(box, filled=False) for p in paths)
            if best_cost is None or cost < best_cost:
                best, best_cost = (dx, dy, ha, va), cost
            if cost == 0:
                break
        dx, dy, ha, va = best
        ann.set_position((dx, dy))
        ann.set_horizontalalignment(ha)
        ann.set_verticalalignment(va)
        hard.append(ann.get_window_extent(renderer))


def readable_log_ticks(ax, which: str = "both") -> None:
    """Where a log axis shows fewer than three labelled powers of ten, label 1-2-5 steps (finer
    where the axis spans less) in plain numbers instead (``20``, ``50``, ``100``), so the reader
    always has at least three values to read between. Call it after the limits are final."""
    import math
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    _check_axes("ax", ax)
    which = check_choice("which", which, ("x", "y", "both"))
    for name in ("x", "y") if which == "both" else (which,):
        axis = getattr(ax, f"{name}axis")
        if axis.get_scale() != "log":
            continue
        lo, hi = sorted(getattr(ax, f"get_{name}lim")())
        if lo <= 0:
            continue
        decades = [k for k in range(math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9) + 1)]
        if len(decades) >= 3:
            continue
        # The sparsest steps that label at least three values: 1-2-5, then 1-2-3-5-7, then every digit.
        for subs in ((1, 2, 5), (1, 2, 3, 5, 7), (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9)):
            ticks = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                     for m in subs if lo <= m * 10.0 ** k <= hi]
            if len(ticks) >= 3:
                break
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.6g}"))
        axis.set_minor_formatter(NullFormatter())


def text_problems(fig) -> list[str]:
    """What a reader would call a bug in ``fig``'s texts: two texts of one axes whose boxes
    overlap, a text overlapping its axes' legend, or any text outside the figure. Empty if none.
    Draws the figure (without rendering) first, so placed labels are where a reader sees them."""
    from matplotlib.figure import Figure

    check_instance("fig", fig, Figure, "plt.figure() or any plot_* function")
    fig.draw_without_rendering()
    renderer = _renderer(fig)
    fig_box = fig.bbox
    problems = []
    for i, ax in enumerate(fig.axes):
        texts = [t for t in ax.texts if t.get_visible() and t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        legend = ax.get_legend()
        legend_box = legend.get_window_extent(renderer) if legend is not None else None
        for a in range(len(texts)):
            box = boxes[a]
            name = texts[a].get_text().replace("\n", " ")
            if box.x0 < fig_box.x0 - 1 or box.x1 > fig_box.x1 + 1 or box.y0 < fig_box.y0 - 1 \
                    or box.y1 > fig_box.y1 + 1:
                problems.append(f"axes {i}: {name!r} leaves the figure")
            if legend_box is not None and box.overlaps(legend_box):
                problems.append(f"axes {i}: {name!r} under the legend")
            for b in range(a + 1, len(texts)):
                if box.overlaps(boxes[b]):
                    problems.append(f"axes {i}: {name!r} overlaps {texts[b].get_text()!r}")
    return problems
