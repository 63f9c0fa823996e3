"""The number explorer: type a number, see its bits, the value kept and the error in every format."""

from __future__ import annotations

import math

from ._base import FigureExplorer

__all__ = ["explore_number", "number_explorer"]


def explore_number(value, saturate: bool = False):
    """Compute step of the explorer: one :class:`~course_lib.formats.Encoding` per format.

    ``value`` is a number or the text of one ('0.1', '-3e-5', 'inf'). A format that cannot hold
    the value at all (NaN in FP4 or an integer format) is left out.
    """
    from .._validate import check_bool
    saturate = check_bool("saturate", saturate)
    from ..formats import FORMAT_NAMES, encode
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"value must be a number such as 0.1, -3e-5 or 65504, got {text!r}") from None
    encodings = []
    for name in FORMAT_NAMES:
        try:
            encodings.append(encode(value, name, saturate=bool(saturate)))
        except ValueError:
            continue
    return encodings


def _num(v: float) -> str:
    return str(v) if (math.isnan(v) or math.isinf(v)) else f"{v:.6g}"


def _describe(encodings) -> str:
    rows = "".join(
        f"<tr><td>{e.label}</td><td><code>{e.bit_string}</code></td><td>{_num(e.stored)}</td>"
        f"<td>{_num(e.abs_error)}</td><td>{_num(e.rel_error)}</td><td>{e.category}</td></tr>"
        for e in encodings)
    head = ("<tr><th>format</th><th>bits (sign exponent mantissa)</th><th>stored</th>"
            "<th>abs. error</th><th>rel. error</th><th>kind</th></tr>")
    return f"<table style='font-size:85%'>{head}{rows}</table>"


def _draw(encodings, ax=None):
    """The bit table, with room on the right for the longest row: at twice the pixels, hinting
    widens monospace text by a few percent and the last characters would leave the figure."""
    from ..plots.formats import plot_bit_layout
    fig = plot_bit_layout(encodings, ax=ax)
    ax = fig.axes[0]
    left, right = ax.get_xlim()
    ax.set_xlim(left, right + 0.08 * (right - left))
    return fig


def number_explorer(value: str = "0.1") -> FigureExplorer:
    """A widget: a text box for the number and a saturation switch; bits drawn, errors listed."""
    import ipywidgets as widgets

    explore_number(value)            # a bad starting value fails here, with the argument named
    controls = {
        "value": widgets.Text(value=str(value), description="number", continuous_update=True,
                              placeholder="e.g. 0.1, 65519, 1e-8, inf"),
        "saturate": widgets.Checkbox(value=False, description="saturate on overflow"),
    }
    return FigureExplorer(controls, explore_number, _draw, describe=_describe,
                          height_px=360, title="A number in every format")
