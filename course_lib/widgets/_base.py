"""The one piece of wiring every explorer shares.

``FigureExplorer`` owns a fixed-height output area and a row of controls. On every change it
calls ``compute(**values)`` (a pure function), then ``draw(result)`` (a plot_* function that
returns a Figure), and shows the figure as one PNG image; the last result stays on
``explorer.result`` for the next cell. Errors from bad control combinations are shown as one
line in the output, never as a traceback. Displayed, an explorer is one output holding the widget
and, for pages without a kernel (the course website), its initial figure and a one-line note.
"""

from __future__ import annotations

import base64
import io
import time
from typing import Callable

__all__ = ["FigureExplorer"]


#: Shown, with the initial figure, where the widget cannot run (the course website, a static render).
NOTE_TEXT = "interactive in JupyterLab (make lab), Binder or Colab; this is its initial figure"

_DPI = 80     # sharp enough at 1:1, cheap enough to redraw in well under 100 ms


def _drop_log_minor_ticks(fig) -> None:
    """Minor ticks on log axes cost about half of a redraw; the explorer shows major ticks only."""
    from matplotlib.ticker import NullLocator

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_minor_locator(NullLocator())


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
        self.last_update_s = None
        # The image is shown at the pixel size it was drawn at (scaling it blurs the text); the
        # box around it keeps ``height_px`` so the page does not jump while a new figure renders.
        self.image = widgets.Image(format="png")
        self._image_box = widgets.Box([self.image], layout=widgets.Layout(min_height=f"{height_px}px"))
        self.text = widgets.HTML(layout=widgets.Layout(min_height="2.6em"))
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

    def _on_change(self, _change) -> None:
        self.update()

    def update(self) -> None:
        """Recompute and redraw; the figure is rendered to PNG bytes and then closed."""
        import matplotlib
        import matplotlib.pyplot as plt

        start = time.perf_counter()
        try:
            result = self.compute(**self.values())
        except (ValueError, TypeError) as exc:
            self.text.value = f"<span style='color:#b00'>{exc}</span>"
            return
        self.result = result
        # A fixed layout and no bbox_inches="tight" (which draws the figure twice) keep an
        # update near the 100 ms budget.
        # A fixed title height spares matplotlib measuring every tick label to place titles.
        with matplotlib.rc_context({"figure.dpi": _DPI, "axes.titley": 1.0}):
            fig = self.draw(result)
            _drop_log_minor_ticks(fig)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=_DPI)
            width_px, height_px = (fig.get_size_inches() * _DPI).round().astype(int)
            plt.close(fig)
        self.image.value = buf.getvalue()
        self.image.width, self.image.height = str(width_px), str(height_px)
        self.text.value = self.describe(result) if self.describe else ""
        self.last_update_s = time.perf_counter() - start

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
