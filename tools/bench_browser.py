"""Key press to new picture, timed inside the browser, for every explorer of every lesson.

Starts JupyterLab and Debian's Chromium the way the end-to-end test does (e2e/conftest.py), opens
each lesson, runs all its cells, and for each explorer with a slider presses an arrow key on its
last slider handle ``--presses`` times (ArrowRight; ArrowLeft from the slider's end). The page
itself times each press: ``performance.now()`` at the keydown, a MutationObserver on the
explorer's ``<img>`` for its new ``src``, then ``img.decode()``. Medians and worst cases per
explorer are printed and written to ``build/bench_browser.json``.

Where the time goes, per press (medians; kernel and browser share this machine's clock):
  key->send    keydown to the comm message leaving on the kernel's websocket (the widget's JS)
  send->kernel that message to the explorer's update starting in the kernel (server, ZMQ, kernel)
  compute, draw, encode   FigureExplorer's own timings (course_lib.widgets._base.UPDATE_LOG)
  kernel send  setting the image, size and text traits (serialising and sending the messages)
  ->frame      the image message sent by the kernel to the last websocket frame before the new
               ``src`` arriving in the page (the server's relay)
  frame->src   that frame to the image's new ``src`` (the widget manager and the image view)
  decode       ``src`` set to ``img.decode()`` resolved
and the bytes and websocket frames the page received per press. The kernel draws frames ahead in
its idle time (course_lib/widgets/_base.py): when the page shows an explorer, one step either side
of every slider; after each press, one step either side of the slider pressed. It sends them to
the page, which shows one at the key press itself when it holds the frame for the new values
(course_lib/widgets/_frames.py): the column ``page`` counts those presses (no kernel step in their
time), ``ahead`` the presses the kernel answered with a frame drawn ahead, and ``drawn`` is the
median of the presses the kernel drew when they arrived (``--no-ahead`` turns drawing ahead off:
the page then holds only frames it has shown). Each press records which picture was shown and
which the kernel sent for it (``shown_sha``, ``kernel_sha``: the first 16 hex digits of SHA-256).

The numbers depend on how busy the machine is: run it on a quiet machine and read it as a
measurement, never as a test (e2e/test_bench_browser.py only checks that it runs and that every
explorer updates). ``--lessons 04,06`` picks lessons; ``--presses 8`` the presses per explorer.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "e2e"))

OUT = REPO / "build" / "bench_browser.json"
KEY_TIMEOUT_MS = 20_000
#: Seconds between key presses: about two presses a second, under FigureExplorer's 1 s rest before
#: it draws a frame again at full sharpness.
GAP_S = 0.3

# Before any page script: every websocket frame in or out, with its time, size and message type
# (the v1 kernel protocol: offsets, then channel, header, parent header, metadata, content).
WS_HOOK = r"""
(() => {
  const Orig = window.WebSocket;
  const log = window.__wsLog = [];
  const dec = new TextDecoder();
  function kind(data) {
    if (!(data instanceof ArrayBuffer)) return 'text';
    try {
      const dv = new DataView(data), n = Number(dv.getBigUint64(0, true)), off = [];
      for (let i = 0; i < n; i++) off.push(Number(dv.getBigUint64(8 * (i + 1), true)));
      const part = i => dec.decode(new Uint8Array(data, off[i], (i + 1 < n ? off[i + 1] : data.byteLength) - off[i]));
      let k = part(0) + '/' + JSON.parse(part(1)).msg_type;
      if (k.endsWith('comm_msg')) {
        const d = JSON.parse(part(4)).data || {};
        k += ':' + (d.method || '') + ':' + Object.keys(d.state || {}).concat(
               (d.buffer_paths || []).map(p => p.join('.') + '[buffer]')).join(',');
      } else if (k.endsWith('/status')) {
        k += ':' + JSON.parse(part(4)).execution_state;
      }
      return k;
    } catch (e) { return 'binary'; }
  }
  const size = d => typeof d === 'string' ? d.length : (d.byteLength !== undefined ? d.byteLength : d.size);
  class LoggedSocket extends Orig {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', ev => log.push(['in', performance.now(), size(ev.data), kind(ev.data)]));
    }
    send(data) {
      log.push(['out', performance.now(), size(data), kind(data)]);
      return super.send(data);
    }
  }
  window.WebSocket = LoggedSocket;
  // Which picture an <img> shows: the first 16 hex digits of the SHA-256 of its bytes.
  window.__sha16 = async url => {
    const d = await crypto.subtle.digest('SHA-256', await (await fetch(url)).arrayBuffer());
    return Array.from(new Uint8Array(d)).map(x => x.toString(16).padStart(2, '0')).join('').slice(0, 16);
  };
})();
"""

# Armed before a key press: resolves with the times of the keydown, the new src and the decode.
ARM = """(el) => {
  const imgs = el.querySelectorAll('img.widget-image');
  const img = imgs[imgs.length - 1];
  let before = img.src;
  const b = window.__bench = {t_key: null, ws_start: window.__wsLog.length, stale_src: 0};
  document.addEventListener('keydown', () => { b.t_key = performance.now(); }, {capture: true, once: true});
  window.__benchDone = new Promise(resolve => {
    const obs = new MutationObserver(() => {
      if (img.src === before) return;
      // A frame the page held, shown at the key press (course_lib/widgets/_frames.py): the answer.
      const page = img.dataset.source === 'page' && b.t_key !== null;
      // The answer to the key press follows the kernel's busy status for its message: a picture
      // before that (the kernel's sharper redraw of the last frame) is not the answer.
      const busy = window.__wsLog.slice(b.ws_start).some(
        f => f[0] === 'in' && f[3] === 'iopub/status:busy' && b.t_key !== null && f[1] >= b.t_key);
      if (!busy && !page) { before = img.src; b.stale_src++; return; }
      obs.disconnect();
      b.t_src = performance.now();
      b.page = page;
      const done = () => { b.t_decoded = performance.now();
                           requestAnimationFrame(() => { b.t_frame = performance.now(); resolve('ok'); }); };
      b.sha = window.__sha16(img.src).catch(() => null);     // which picture (after the timing)
      img.decode().then(done, err => { b.error = String(err); done(); });
    });
    obs.observe(img, {attributes: true, attributeFilter: ['src']});
    window.__benchCancel = () => { obs.disconnect(); resolve('cancelled'); };
  });
}"""

#: The first 16 hex digits of the SHA-256 of the picture an explorer shows now.
SHOWN_SHA = """(el) => { const imgs = el.querySelectorAll('img.widget-image');
                        return window.__sha16(imgs[imgs.length - 1].src); }"""

WAIT = f"""() => Promise.race([window.__benchDone,
                             new Promise(r => setTimeout(() => r('timeout'), {KEY_TIMEOUT_MS}))])
          .then(async status => ({{status, origin: performance.timeOrigin, ...window.__bench,
                                  sha: await window.__bench.sha,
                                  ws: window.__wsLog.slice(window.__bench.ws_start)}}))"""

READ_LOG = ("import json as _j, course_lib.widgets._base as _b\n"
            "print(_j.dumps(list(_b.UPDATE_LOG)))\n_b.UPDATE_LOG.clear()")
#: Run in each lesson's kernel with --no-ahead: no frame is drawn ahead, every press is drawn.
NO_AHEAD = "import course_lib.widgets._base as _b\n_b._FRAMES_AHEAD = 0\nprint('[]')"


def kernel_log(lab, path: str, code: str = READ_LOG) -> list[dict]:
    """The explorers' UPDATE_LOG from the kernel of the notebook at ``path`` (then cleared), read
    on a second websocket of that kernel: its output goes to this client, not the notebook.
    ``code`` runs instead of the read where given (it must print a JSON list)."""
    import uuid

    import websocket

    sessions = [s for s in lab.api("GET", "/api/sessions") if s.get("path", "").endswith(path)]
    if not sessions:
        return []
    kernel_id = sessions[0]["kernel"]["id"]
    url = lab.base_url.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels?token={lab.token}"
    ws = websocket.create_connection(url, timeout=30)
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "bench",
                       "session": uuid.uuid4().hex, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False}}))
        text = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            frame = ws.recv()
            if not isinstance(frame, str):      # a message with binary buffers (a widget's image)
                continue
            msg = json.loads(frame)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                text += msg["content"]["text"]
            elif msg["msg_type"] == "error":
                raise RuntimeError("reading the kernel's UPDATE_LOG failed: " + msg["content"]["evalue"])
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break                   # iopub's idle comes after the output (execute_reply may not)
        return json.loads(text) if text.strip() else []
    finally:
        ws.close()


def _press_times(page, explorer, handle, readout, presses: int) -> list[dict]:
    """Press an arrow key on ``handle`` ``presses`` times; the page's record of each press."""
    key, out = "ArrowRight", []
    flips = 0
    while len(out) < presses and flips < 3:
        before = readout.text_content() if readout.count() else None
        explorer.evaluate(ARM)
        handle.focus()
        page.keyboard.press(key)
        if readout.count() and readout.text_content() == before:      # at the slider's end
            page.evaluate("() => window.__benchCancel()")
            key, flips = ("ArrowLeft" if key == "ArrowRight" else "ArrowRight"), flips + 1
            continue
        record = page.evaluate(WAIT)
        record["key"] = key
        out.append(record)
        if record["status"] != "ok":
            break
        time.sleep(GAP_S)       # the kernel idle again, as between a person's key presses
    return out


def _drag(page, slider, readout, name_of: dict, steps: int = 20, step_s: float = 0.05) -> dict:
    """Drag the last handle of ``slider`` a quarter of its track in ``steps`` mouse moves, then rest;
    what was sent and drawn (``name_of`` gives the control name of the slider's readout)."""
    handle = slider.locator(".noUi-handle").last
    track = slider.locator(".noUi-target").first.bounding_box()
    hb = handle.bounding_box()
    x0, y = hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2
    x1 = x0 + track["width"] / 4 if x0 < track["x"] + track["width"] / 2 else x0 - track["width"] / 4
    start = page.evaluate("() => window.__wsLog.length")
    page.mouse.move(x0, y)
    page.mouse.down()
    for i in range(1, steps + 1):
        page.mouse.move(x0 + (x1 - x0) * i / steps, y)
        time.sleep(step_s)
    page.mouse.up()
    time.sleep(1.0 + 1.0 + 1.5)     # the last frame, then the sharper one after the hand rests
    frames = page.evaluate(f"() => window.__wsLog.slice({start})")
    sent = sum(1 for f in frames if f[0] == "out" and f[3].startswith("shell/comm_msg:update:"))
    return {"moves": steps, "drag_s": steps * step_s, "values_sent": sent,
            "readout": readout.text_content().strip() if readout.count() else None}


def _same_value(readout: str | None, drawn: str | None) -> bool | None:
    if readout is None or drawn is None:
        return None
    try:
        return math.isclose(float(readout), float(drawn), rel_tol=1e-3, abs_tol=1e-9)
    except ValueError:
        return readout.strip("'\" ") == drawn.strip("'\" ")


def _split(record: dict, updates: list[dict]) -> dict:
    """One press's times in ms from the keydown, and the kernel's update that answered it."""
    origin, t_key = record["origin"], record["t_key"]
    key_epoch = (origin + t_key) / 1000
    row = {"t_key_epoch": key_epoch, "total_ms": record["t_decoded"] - t_key, "frame_ms": record.get("t_frame", record["t_decoded"]) - t_key,
           "decode_ms": record["t_decoded"] - record["t_src"]}
    ws_in = [f for f in record["ws"] if f[0] == "in" and f[1] <= record["t_src"]]
    ws_out = [f for f in record["ws"] if f[0] == "out" and f[1] >= t_key]
    row["stale_src"] = record.get("stale_src", 0)      # pictures before the answer (not counted)
    row["page"] = bool(record.get("page"))             # shown by the page from a frame it held
    ws_in = [f for f in ws_in if f[1] >= t_key]
    row["bytes_in"] = sum(f[2] for f in ws_in)
    row["frames_in"] = len(ws_in)
    row["frames_out"] = len(ws_out)
    row["messages"] = [f"{f[0]} {f[3]} {f[2]} B @{f[1] - t_key:.0f}" for f in record["ws"]]
    if ws_out:
        row["key_to_send_ms"] = ws_out[0][1] - t_key
    if ws_in:
        row["frame_to_src_ms"] = record["t_src"] - ws_in[-1][1]
    updates = [u for u in updates if not u.get("sharpen") and not u.get("ahead")]
    row["shown_sha"] = record.get("sha")
    if row["page"]:     # the kernel answers after the picture: its answer is the next update
        later = [u for u in updates if key_epoch - 0.01 <= u["t_arrived"] <= key_epoch + 5]
        if later:
            row["kernel_sha"], row["kernel_values"] = later[0].get("png_sha"), later[0]["values"]
        return row
    answered = [u for u in updates if key_epoch - 0.01 <= u["t_arrived"] <= key_epoch + row["total_ms"] / 1000]
    if answered:
        u = answered[0]
        row["updates_in_kernel"] = len(answered)
        if ws_out:
            row["send_to_kernel_ms"] = (u["t_arrived"] - key_epoch) * 1000 - row["key_to_send_ms"]
        for name in ("compute", "draw", "encode", "send"):
            row[f"{name}_ms"] = u[f"{name}_s"] * 1000
        row["png_bytes"] = u["png_bytes"]
        row["kernel_sha"] = u.get("png_sha")
        row["drawn_ahead"] = bool(u.get("drawn_ahead"))
        if ws_in:
            row["kernel_to_frame_ms"] = ws_in[-1][1] - ((u["t_image_sent"] * 1000) - origin)
    return row


BREAKDOWN = ("key_to_send_ms", "send_to_kernel_ms", "compute_ms", "draw_ms", "encode_ms", "send_ms",
             "kernel_to_frame_ms", "frame_to_src_ms", "decode_ms")


def summarise(rows: list[dict]) -> dict:
    totals = [r["total_ms"] for r in rows]
    summary = {"presses": len(rows), "median_ms": statistics.median(totals), "worst_ms": max(totals),
               "drawn_ahead": sum(bool(r.get("drawn_ahead")) for r in rows),
               "page": sum(r["page"] for r in rows)}
    drawn = [r["total_ms"] for r in rows if not r.get("drawn_ahead") and not r["page"]]
    if drawn:       # the presses the kernel had to compute and draw (the first one always)
        summary["drawn_median_ms"], summary["drawn_worst_ms"] = statistics.median(drawn), max(drawn)
    for name in BREAKDOWN + ("bytes_in", "frames_in", "png_bytes"):
        values = [r[name] for r in rows if name in r]
        if values:
            summary[name] = statistics.median(values)
    return summary


def bench_lesson(browser, lab, lesson: Path, presses: int, drag: bool = True,
                 ahead: bool = True) -> list[dict]:
    import test_lab as T

    context = browser.new_context(viewport={"width": 1400, "height": 950}, device_scale_factor=1)
    context.add_init_script(WS_HOOK)
    results = []
    try:
        page = context.new_page()
        T._open_lab(page, lab, f"bench-{lesson.stem}")
        T._dir_item(page, lesson.parent.name).dblclick()
        item = T._dir_item(page, lesson.name)
        item.wait_for(state="visible", timeout=T.OPEN_TIMEOUT_S * 1000)
        item.dblclick()
        import jupytext
        panel = T._wait_for_notebook(page, lesson.name, len(jupytext.read(lesson).cells))
        T._wait_kernel_idle(page, panel, f"opening {lesson.name}", T.OPEN_TIMEOUT_S)
        T._run_all(page, panel, lesson.name)
        T._wait_widgets_rendered(panel, lesson.name)
        kernel_log(lab, f"{lesson.parent.name}/{lesson.name}")      # forget the updates of Run All
        if not ahead:
            kernel_log(lab, f"{lesson.parent.name}/{lesson.name}", NO_AHEAD)
        explorers = T._explorers(panel)
        for i in range(explorers.count()):
            explorer = explorers.nth(i)
            explorer.scroll_into_view_if_needed()
            title = explorer.locator(".widget-html b").first.text_content() if \
                explorer.locator(".widget-html b").count() else f"explorer {i + 1}"
            sliders = explorer.locator(".widget-slider:not(.widget-vslider)")
            entry = {"lesson": lesson.stem, "explorer": title.strip()}
            if not sliders.count():
                entry["skipped"] = "no slider"
                results.append(entry)
                continue
            slider = sliders.nth(sliders.count() - 1)
            entry["slider"] = slider.locator(".widget-label").first.text_content().strip()
            handle = slider.locator(".noUi-handle").last
            readout = slider.locator(".widget-readout")
            records = _press_times(page, explorer, handle, readout, presses)
            time.sleep(0.3)
            updates = kernel_log(lab, f"{lesson.parent.name}/{lesson.name}")
            if drag:
                drag_info = _drag(page, slider, readout, {})
                shown = explorer.evaluate(SHOWN_SHA)
                drawn = kernel_log(lab, f"{lesson.parent.name}/{lesson.name}")
                live = [u for u in drawn if not u.get("sharpen") and not u.get("ahead")
                        and u["explorer"] == entry["explorer"]]
                sent = [u for u in drawn if not u.get("ahead") and u["explorer"] == entry["explorer"]]
                # After the rest, the page shows the last picture the kernel sent (the sharp one).
                drag_info["shown_is_last_sent"] = bool(sent) and shown == sent[-1].get("png_sha")
                last = list(live[-1]["values"].values()) if live else []
                drag_info.update(frames_drawn=len(live), sharpened=sum(bool(u.get("sharpen")) for u in drawn),
                                 last_drawn=last,
                                 latest_wins=any(_same_value(drag_info["readout"], v) for v in last))
                entry["drag"] = drag_info
            failed = [r["status"] for r in records if r["status"] != "ok"]
            if failed or not records:
                entry["failed"] = failed[0] if failed else "the slider did not move"
                results.append(entry)
                continue
            rows = [_split(r, updates) for r in records]
            entry["kernel_updates"] = updates
            entry.update(summarise(rows), rows=rows)
            results.append(entry)
    finally:
        context.close()
        lab.shutdown_kernels()
    return results


def print_table(results: list[dict], load: str) -> None:
    cols = [("median", "median_ms"), ("worst", "worst_ms"), ("drawn", "drawn_median_ms"),
            ("key>send", "key_to_send_ms"),
            (">kernel", "send_to_kernel_ms"), ("compute", "compute_ms"), ("draw", "draw_ms"),
            ("encode", "encode_ms"), ("k.send", "send_ms"), (">frame", "kernel_to_frame_ms"),
            ("frm>src", "frame_to_src_ms"), ("decode", "decode_ms")]
    head = f"{'lesson / explorer':44s}" + "".join(f"{c:>9s}" for c, _ in cols) + \
        f"{'KiB in':>8s}{'frames':>7s}{'ahead':>7s}{'page':>7s}"
    print(f"key press to decoded picture in Chromium (ms; medians of {results and max((r.get('presses', 0) for r in results)) or 0} presses) -- load: {load}")
    print(head)
    print("-" * len(head))
    for r in results:
        name = f"{r['lesson'][:2]} {r['explorer']}"[:43]
        if "median_ms" not in r:
            print(f"{name:44s}   {r.get('skipped') or 'FAILED: ' + r.get('failed', '?')}")
            continue
        cells = "".join(f"{r[k]:9.0f}" if k in r else f"{'-':>9s}" for _, k in cols)
        print(f"{name:44s}{cells}{r.get('bytes_in', 0) / 1024:8.0f}{r.get('frames_in', 0):7.0f}"
              f"{r.get('drawn_ahead', 0):4d}/{r['presses']}{r.get('page', 0):4d}/{r['presses']}")
    drags = [r for r in results if "drag" in r]
    if drags:
        print(f"\ndrag of the same slider ({drags[0]['drag']['moves']} mouse moves in "
              f"{drags[0]['drag']['drag_s']:.1f} s, then rest): values the page sent, frames the kernel drew, "
              f"whether the last frame drawn shows the slider's final value")
        for r in drags:
            d = r["drag"]
            print(f"{r['lesson'][:2]} {r['explorer'][:40]:41s} sent {d['values_sent']:3d}  drawn {d['frames_drawn']:3d}  "
                  f"sharpened {d['sharpened']}  final {d['readout']!s:>8s}  latest drawn: {d['latest_wins']}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", help="comma-separated lesson numbers or names (default: all)")
    parser.add_argument("--presses", type=int, default=8)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-drag", action="store_true", help="only the key presses")
    parser.add_argument("--no-ahead", action="store_true",
                        help="draw no frame ahead: every press computed and drawn when it arrives")
    args = parser.parse_args(argv)
    from _course import lesson_paths
    from conftest import _missing_tools, chromium, lab_server

    missing = _missing_tools()
    if missing:
        print(f"bench_browser: cannot run: {missing}", file=sys.stderr)
        return 2
    lessons = lesson_paths()
    if args.lessons:
        wanted = [w.strip() for w in args.lessons.split(",") if w.strip()]
        lessons = [p for p in lessons if any(p.stem.startswith(w) for w in wanted)]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp, lab_server(Path(tmp)) as lab, \
            chromium() as browser:
        for lesson in lessons:
            started = time.perf_counter()
            try:
                got = bench_lesson(browser, lab, lesson, args.presses, drag=not args.no_drag,
                                   ahead=not args.no_ahead)
            except BaseException as exc:         # pytest.fail from a helper is a BaseException
                if isinstance(exc, KeyboardInterrupt):
                    raise
                got = [{"lesson": lesson.stem, "explorer": "-", "failed": f"{type(exc).__name__}: {exc}"[:300]}]
            results += got
            print(f"{lesson.stem}: {len(got)} explorer(s) in {time.perf_counter() - started:.0f} s", flush=True)
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    load_text = f"{load} at start, {load_after} at end (1, 5, 15 min), {os.cpu_count()} cores"
    print_table(results, load_text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": load_text, "presses": args.presses, "explorers": results},
                                   indent=1) + "\n")
    print(f"wrote {args.out}")
    ok = all("median_ms" in r or "skipped" in r for r in results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
