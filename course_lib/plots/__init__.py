"""Drawing: one module per concept, each with ``plot_*(result, ax=None) -> Figure``.

Plot functions take the frozen results that compute modules return; they never compute
physics themselves. ``use_course_style()`` is the one explicit, opt-in style switch.
"""

from __future__ import annotations

__all__ = ["use_course_style", "new_axes"]


def use_course_style() -> None:
    """Opt-in matplotlib defaults for the lessons (never applied at import)."""
    import matplotlib as mpl
    mpl.rcParams.update({
        "figure.figsize": (7.5, 4.2), "figure.dpi": 90, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 10,
    })


def new_axes(ax=None, figsize=(7.5, 4.2)):
    """Return ``(fig, ax)``: the given axes and its figure, or a fresh pair."""
    import matplotlib.pyplot as plt
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize)
    # Fixed margins instead of a layout engine: widgets redraw often and must stay fast.
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.13, top=0.91)
    return fig, ax
