"""Drawing: one module per concept, each with ``plot_*(result, ax=None) -> Figure``.

Plot functions take the frozen results that compute modules return; they never compute
physics themselves. ``use_course_style()`` is the one explicit, opt-in style switch.
"""

from __future__ import annotations

import numpy as np

__all__ = ["use_course_style", "new_axes"]


def use_course_style() -> None:
    """Opt-in matplotlib defaults for the lessons (never applied at import)."""
    import matplotlib as mpl
    mpl.rcParams.update({
        "figure.figsize": (7.5, 4.2), "figure.dpi": 90, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 10,
    })


def _check_result(name, value, where: str, made_by: str, many: bool = False, min_len: int = 1):
    """Check a plot's input: an instance of ``course_lib.<where>`` (``many``: a list of them, or
    one), as ``made_by`` returns it. Returns the value (``many``: a list)."""
    import importlib

    from .._validate import check_instance, check_items
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

    from .._validate import check_array
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
