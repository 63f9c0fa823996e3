"""An explorer's picture, and the frames the page already holds for the next step of a hand.

``Picture`` is the image an explorer shows: a PNG with its size in CSS pixels, like ipywidgets'
``Image`` (``value``, ``width``, ``height``), and a ``key``: the pixel ratio it was drawn at, then
the value each control held (a selection control's index; a number to nine significant digits).
The kernel also sends the page frames drawn ahead (``Picture.hold``): a picture with its key and
the explorer's text. The page keeps them, and when a control moves in the page to values it holds
a frame for, it shows that frame at once, in the same task as the key press or the drag, without
waiting for the kernel. The kernel still gets the value and answers it; the page shows that answer
only if it is not already on screen, and never an answer to values the hand has left while the
screen shows the values the controls hold. A frame is only shown for exactly the values it was
drawn for. Pages without this widget's script (a static render) use the explorer's PNG instead.

The page's script (``_ESM``) is run by anywidget, which JupyterLab, Notebook 7, VS Code and
Colab load; nothing is fetched from the network.
"""

from __future__ import annotations

import anywidget
import traitlets

__all__ = ["Picture", "page_key"]

#: Frames a page keeps per explorer (a 1x PNG of a few tens of KiB each); the oldest go first.
PAGE_FRAMES_KEPT = 48

_ESM = """
const KEPT = %(kept)d;
const norm = v => (typeof v === "number" ? parseFloat(v.toPrecision(9)) : v);

export default () => {
  const frames = new Map();          // the controls' values (JSON) -> {url, width, height, text}
  const views = new Set();           // the <img> of every view of this picture
  let controls = [], textModel = null;
  let shownValues = null, shownRatio = null, fromPage = false, looseUrl = null;

  const valuesNow = () => JSON.stringify(controls.map(c => norm(c.model.get(c.attr))));

  function paintOne(img, url, width, height, source) {
    img.src = url;
    img.setAttribute("width", width);
    img.setAttribute("height", height);
    img.dataset.source = source;
  }

  function paint(url, width, height, source) {
    for (const img of views) paintOne(img, url, width, height, source);
  }

  function keep(values, frame) {
    const old = frames.get(values);
    if (old && old.url !== frame.url) URL.revokeObjectURL(old.url);
    frames.delete(values);
    frames.set(values, frame);
    while (frames.size > KEPT) {
      const [oldest, gone] = frames.entries().next().value;
      frames.delete(oldest);
      if (!(oldest === shownValues && shownRatio === 1)) URL.revokeObjectURL(gone.url);
    }
  }

  function urlOf(bytes) {
    return URL.createObjectURL(new Blob([bytes], {type: "image/png"}));
  }

  // A control moved in this page (or a frame arrived for the values it holds): show the frame held
  // for those values, unless the screen shows them already (the sharp picture stays sharp).
  function onControl() {
    const values = valuesNow();
    const frame = frames.get(values);
    if (!frame || values === shownValues) return;
    paint(frame.url, frame.width, frame.height, "page");
    shownValues = values; shownRatio = 1; fromPage = true;
    if (textModel && frame.text !== null) textModel.set("value", frame.text);
  }

  // The kernel set the picture: show it unless it is on screen already, or it answers values the
  // hand has left while the screen shows those the controls hold now.
  function onKernel(model) {
    const key = model.get("key") || [];
    const ratio = key.length ? key[0] : null;
    const values = key.length ? JSON.stringify(key.slice(1)) : null;
    if (values !== null && values === shownValues && ratio === shownRatio) return;
    if (fromPage && values !== shownValues && shownValues === valuesNow()) return;
    const url = urlOf(model.get("value"));
    paint(url, model.get("width"), model.get("height"), "kernel");
    shownValues = values; shownRatio = ratio; fromPage = false;
    if (looseUrl) URL.revokeObjectURL(looseUrl);
    looseUrl = null;
    if (values !== null && ratio === 1) keep(values, {url, width: model.get("width"), height: model.get("height"), text: null});
    else looseUrl = url;
  }

  return {
    async initialize({ model }) {
      model.on("change:value", () => onKernel(model));
      model.on("change:key", () => onKernel(model));
      model.on("msg:custom", (msg, buffers) => {
        if (!msg || !msg.frame || !buffers || !buffers.length) return;
        const url = urlOf(buffers[0]);
        const warm = new Image();          // decoded now, while the page is idle
        warm.src = url;
        warm.decode().catch(() => {});
        keep(JSON.stringify(msg.frame.slice(1)), {url, width: msg.width, height: msg.height,
                                                  text: msg.text === undefined ? null : msg.text, warm});
        if (JSON.stringify(msg.frame.slice(1)) === valuesNow()) onControl();
      });
      const manager = model.widget_manager;
      const ids = model.get("controls") || [], attrs = model.get("attrs") || [];
      try {
        const models = await Promise.all(ids.map(id => manager.get_model(id)));
        controls = models.map((m, i) => ({model: m, attr: attrs[i]}));
        for (const c of controls) c.model.on("change:" + c.attr, onControl);
        if (model.get("text_model")) textModel = await manager.get_model(model.get("text_model"));
      } catch (err) {
        controls = [];                    // no frames from the page: the kernel answers every step
      }
    },
    render({ model, el }) {
      const img = document.createElement("img");
      img.className = "widget-image";
      el.appendChild(img);
      views.add(img);
      if (model.get("value") && model.get("value").byteLength) {
        const frame = shownValues !== null && shownRatio === 1 ? frames.get(shownValues) : null;
        if (frame) paintOne(img, frame.url, frame.width, frame.height, "page");
        else { shownValues = null; onKernel(model); }
      }
      model.send({event: "shown"});
      return () => views.delete(img);
    },
  };
};
""" % {"kept": PAGE_FRAMES_KEPT}


class Picture(anywidget.AnyWidget):
    """A PNG shown at ``width`` x ``height`` CSS pixels, with frames the page keeps for later."""

    _esm = _ESM
    value = traitlets.Bytes(b"").tag(sync=True)
    width = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Unicode("").tag(sync=True)
    #: [pixel ratio, then each control's value as ``page_key`` gives it]; [] for a picture no key names.
    key = traitlets.List().tag(sync=True)
    #: The controls the page watches (their model ids), the attribute each syncs, the text's model.
    controls = traitlets.List(traitlets.Unicode()).tag(sync=True)
    attrs = traitlets.List(traitlets.Unicode()).tag(sync=True)
    text_model = traitlets.Unicode("").tag(sync=True)

    def hold(self, key: list, png: bytes, size: tuple, text: str) -> None:
        """Send the page a frame to keep: shown by the page when its controls reach ``key``."""
        self.send({"frame": key, "width": str(size[0]), "height": str(size[1]), "text": text}, [png])

    @classmethod
    def watching(cls, controls: dict, text) -> Picture:
        """A picture whose page keys its frames by ``controls`` and shows a frame's text in ``text``
        (an HTML widget): both known when the page first builds the picture."""
        return cls(controls=[c.model_id for c in controls.values()],
                   attrs=[_synced_attribute(c) for c in controls.values()], text_model=text.model_id)


def _synced_attribute(control) -> str:
    """The attribute a control's page model holds its value in: a selection's index, else value."""
    import ipywidgets as widgets
    return "index" if isinstance(control, widgets.widgets.widget_selection._Selection) else "value"


def page_key(controls: dict, values: dict, pixel_ratio: float) -> list | None:
    """The key the page computes for ``values``: the pixel ratio, then per control the index of a
    selection's option or the value (a number to nine significant digits, as the page rounds it);
    None where a value has no such form (the page then never shows a frame for it)."""
    key: list = [pixel_ratio]
    for name, control in controls.items():
        value = values[name]
        if _synced_attribute(control) == "index":
            options = list(getattr(control, "_options_values", ()))
            if value not in options:
                return None
            key.append(options.index(value))
        elif isinstance(value, bool) or isinstance(value, str):
            key.append(value)
        elif isinstance(value, (int, float)):
            key.append(float(f"{value:.9g}"))
        else:
            return None
    return key
