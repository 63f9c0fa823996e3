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
