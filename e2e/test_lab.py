"""Every lesson as a learner meets it: JupyterLab in Chromium.

For each ``notebooks/NN_*.py`` the test opens the lesson from the file browser (a double-click,
as a person does), checks that it opens as a notebook and not in the text editor, runs all cells
from the Run menu, waits for the kernel, and then checks what is on the screen:

- no output shows an error (a traceback or an exception name on stderr), every code cell ran;
- every widget rendered (no "Loading widget..." or "Error displaying widget", no widget shown as
  its text repr), and every explorer shows a figure;
- moving one control of the lesson's last explorer (``FigureExplorer``: controls above an image)
  with the keyboard changes the figure's bytes;
- JupyterLab's autosave (on, every ``AUTOSAVE_INTERVAL_S`` seconds in the test) saves the run
  lesson, and the save changes no byte: the lesson is as committed and ``git status`` of the
  served tree is as it was before the test.

Two more tests: the page ``make lab`` opens (START.md, rendered, linking to lesson 01, no news
toast, no maintainers' files in the file browser), and a workspace file saved without edits
(Ctrl+S) that ``make workspace`` still refreshes.

A screenshot of the explorer after the move is saved as ``build/e2e/<lesson>.png`` (and
``<lesson>-failure.png`` when a check fails). The time to open, to run all cells and for the
widget to redraw is recorded per lesson.
"""

from __future__ import annotations

import base64
import difflib
import re
import shutil
import time
from pathlib import Path

import jupytext
import pytest

from _course import AUTOSAVE_INTERVAL_S, BUILD_DIR, FIRST_LESSON, LANDING, ROOT, git_status, lesson_paths

OPEN_TIMEOUT_S = 90
RUN_TIMEOUT_S = 240
WIDGET_RENDER_TIMEOUT_S = 60
WIDGET_UPDATE_TIMEOUT_S = 30

STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
# jupyterlab_widgets renders a widget view in an output panel that carries no data-mime-type.
WIDGET_VIEW = ('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.widget-view+json"], '
               '.jp-OutputArea-output:not([data-mime-type])')
TEXT_PLAIN = '.jp-OutputArea-output[data-mime-type="text/plain"]'
# A traceback, or an exception name at the start of a line (a SyntaxError has no "Traceback").
ERROR_TEXT = re.compile(r"Traceback \(most recent call last\)|^\s*[A-Za-z_][\w.]*(Error|Exception|Interrupt)\b",
                        re.MULTILINE)
# A widget the frontend could not render falls back to its text repr, e.g. "VBox(children=(...".
WIDGET_REPR = re.compile(r"^\s*(VBox|HBox|Box|GridBox|IntProgress|FloatProgress|Image|Dropdown|\w*Slider|"
                         r"Output|HTML|Label|Button|ToggleButtons)\(|FigureExplorer object at 0x")

LESSONS = lesson_paths()


def _lesson_params():
    if not LESSONS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no lessons in {ROOT / 'notebooks'} yet"),
                             id="no-lessons")]
    return [pytest.param(path, id=path.stem) for path in LESSONS]


# ------------------------------------------------------------------------------------------ helpers

def _open_lab(page, lab, workspace: str) -> None:
    """Load JupyterLab in a fresh named workspace and show the file browser at the root."""
    page.goto(lab.url(f"/lab/workspaces/{workspace}?reset"), wait_until="domcontentloaded")
    page.wait_for_selector("#jp-main-dock-panel", timeout=OPEN_TIMEOUT_S * 1000)
    listing = page.locator(".jp-FileBrowser .jp-DirListing-content").first
    tab = page.locator('.jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id="filebrowser"]').first
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while not listing.is_visible():
        # The left sidebar may start collapsed; open the file browser as a person would.
        if tab.count() and "lm-mod-current" not in (tab.get_attribute("class") or ""):
            tab.click()
        if time.monotonic() > deadline:
            pytest.fail(f"the file browser did not appear within {OPEN_TIMEOUT_S} s", pytrace=False)
        time.sleep(0.5)
    home = page.locator(".jp-FileBrowser .jp-BreadCrumbs-home")
    if home.count():
        home.first.click()


def _dir_item(page, name: str):
    text = page.locator(".jp-DirListing-itemText", has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))
    return page.locator(".jp-DirListing-item", has=text).first


def _fail_on_dialog(page, what: str) -> None:
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and dialog.first.is_visible():
        pytest.fail(f"{what}: JupyterLab shows a dialog: {dialog.first.inner_text()[:600]!r}", pytrace=False)


def _current_main_widget_id(page) -> str | None:
    return page.evaluate("""() => {
        const tab = document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current');
        return tab ? tab.dataset.id : null;
    }""")


def _wait_for_notebook(page, file_name: str, n_cells: int):
    """Wait until the current main-area tab is ``file_name`` as a notebook with all its cells."""
    deadline = time.monotonic() + OPEN_TIMEOUT_S
    while True:
        _fail_on_dialog(page, f"opening {file_name}")
        widget_id = _current_main_widget_id(page)
        if widget_id:
            info = page.evaluate("""(id) => {
                const w = document.getElementById(id);
                const tab = document.querySelector(`#jp-main-dock-panel .lm-TabBar-tab[data-id="${id}"]`);
                if (!w) return null;
                return {cls: w.className, title: tab ? tab.innerText.trim() : '',
                        cells: w.querySelectorAll('.jp-Cell').length};
            }""", widget_id)
            if info and file_name in info["title"]:
                if "jp-FileEditor" in info["cls"] or "jp-FileEditor" in page.locator(f"[id='{widget_id}']").first.evaluate(
                        "w => w.querySelector('.jp-FileEditor') ? 'jp-FileEditor' : ''"):
                    pytest.fail(f"{file_name} opened in the text editor, not as a notebook "
                                f"(is the 'Jupytext Notebook' default viewer configured?)", pytrace=False)
                if "jp-NotebookPanel" in info["cls"] and info["cells"] >= n_cells:
                    return page.locator(f"[id='{widget_id}']").first
        if time.monotonic() > deadline:
            pytest.fail(f"{file_name} did not open as a notebook with {n_cells} cells within "
                        f"{OPEN_TIMEOUT_S} s (current tab: {widget_id!r})", pytrace=False)
        time.sleep(0.1)


def _kernel_state(panel) -> str:
    """'idle', 'busy', ... from the notebook toolbar's execution indicator and kernel status."""
    return panel.evaluate("""(w) => {
        const ind = w.querySelector('.jp-Notebook-ExecutionIndicator');
        if (ind && ind.dataset.status) return ind.dataset.status;
        const st = w.querySelector('.jp-KernelStatus, .jp-Toolbar-kernelStatus');
        return st ? (st.getAttribute('title') || st.className) : 'unknown';
    }""")


def _wait_kernel_idle(page, panel, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    idle_since = None
    while True:
        _fail_on_dialog(page, what)
        state = _kernel_state(panel).lower()
        if "idle" in state:
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since > 0.5:
                return
        else:
            idle_since = None
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: kernel not idle after {timeout_s} s (state {state!r})", pytrace=False)
        time.sleep(0.1)


def _prompts(panel) -> list[str]:
    return panel.evaluate("""(w) => Array.from(w.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'))
                                .map(p => p.textContent.trim())""")


def _error_outputs(panel) -> list[str]:
    texts = panel.locator(STDERR).all_text_contents()
    return [t for t in texts if ERROR_TEXT.search(t)]


def _run_all(page, panel, file_name: str) -> None:
    """Run > Run All Cells, then wait until no cell is queued or running and the kernel is idle."""
    panel.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.locator("#jp-menu-panel .lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).first.click()
    page.locator(".lm-Menu:visible .lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
                 has_text=re.compile(r"^Run All Cells$")).first.click()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    done_since = None
    while True:
        _fail_on_dialog(page, f"running {file_name}")
        prompts = _prompts(panel)
        running = [p for p in prompts if "*" in p]
        numbered = [p for p in prompts if re.search(r"\[\d+\]", p)]
        finished = not running and (len(numbered) == len(prompts) or _error_outputs(panel))
        if finished and "idle" in _kernel_state(panel).lower():
            done_since = done_since or time.monotonic()
            if time.monotonic() - done_since > 0.5:
                return
        else:
            done_since = None
        if time.monotonic() > deadline:
            pytest.fail(f"running {file_name}: not finished after {RUN_TIMEOUT_S} s "
                        f"({len(running)} cells still queued or running)", pytrace=False)
        time.sleep(0.1)


def _wait_widgets_rendered(panel, file_name: str) -> None:
    deadline = time.monotonic() + WIDGET_RENDER_TIMEOUT_S
    while True:
        texts = panel.locator(WIDGET_VIEW).all_text_contents()
        loading = [t for t in texts if "Loading widget" in t]
        if not loading:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{file_name}: {len(loading)} widget(s) still show 'Loading widget...' after "
                        f"{WIDGET_RENDER_TIMEOUT_S} s", pytrace=False)
        time.sleep(0.2)


def _image_bytes(img) -> tuple[str, bytes]:
    """The explorer image's src and the bytes it shows (a blob: or data: URL)."""
    src, data_url = img.evaluate("""async (el) => {
        const r = await fetch(el.src);
        const blob = await r.blob();
        const url = await new Promise(res => { const f = new FileReader(); f.onload = () => res(f.result);
                                               f.readAsDataURL(blob); });
        return [el.src, url];
    }""")
    return src, base64.b64decode(data_url.split(",", 1)[1])


CONTROLS = ".widget-slider, .widget-dropdown, .widget-checkbox, .widget-text, .widget-toggle-buttons"


def _explorers(panel):
    """Widget outputs that look like a FigureExplorer: controls above an image."""
    return panel.locator(WIDGET_VIEW).filter(has=panel.page.locator("img.widget-image")).filter(
        has=panel.page.locator(CONTROLS))


def _move_one_control(page, explorer, file_name: str) -> tuple[str, float]:
    """Change one control of ``explorer`` with the keyboard; return its label and the redraw time."""
    img = explorer.locator("img.widget-image").last
    before_src, before = _image_bytes(img)

    def wait_changed():
        deadline = time.monotonic() + WIDGET_UPDATE_TIMEOUT_S
        while time.monotonic() < deadline:
            src = img.get_attribute("src")
            if src and src != before_src:
                _, now = _image_bytes(img)
                if now != before:
                    return True
            time.sleep(0.05)
        return False

    sliders = explorer.locator(".widget-slider:not(.widget-vslider)")
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        label = slider.locator(".widget-label").first.text_content().strip()
        handle = slider.locator(".noUi-handle").first
        if not handle.count() or slider.locator(".noUi-target[disabled]").count():
            continue
        for key in ("ArrowRight", "End"):
            handle.focus()
            start = time.perf_counter()
            handle.press(key)
            if wait_changed():
                return f"slider '{label}' ({key})", time.perf_counter() - start
    dropdowns = explorer.locator(".widget-dropdown select")
    for i in range(dropdowns.count()):
        select = dropdowns.nth(i)
        options = select.locator("option").all_text_contents()
        current = select.evaluate("s => s.options[s.selectedIndex] ? s.options[s.selectedIndex].text : ''")
        others = [o for o in options if o != current]
        if not others:
            continue
        start = time.perf_counter()
        select.select_option(label=others[-1])
        if wait_changed():
            return f"dropdown → {others[-1]!r}", time.perf_counter() - start
    checkboxes = explorer.locator(".widget-checkbox input[type=checkbox]")
    for i in range(checkboxes.count()):
        box = checkboxes.nth(i)
        label = box.evaluate("el => el.closest('.widget-checkbox').textContent.trim()")
        box.focus()
        start = time.perf_counter()
        box.press("Space")
        if wait_changed():
            return f"checkbox '{label}'", time.perf_counter() - start
    texts = explorer.locator(".widget-text input")
    for i in range(texts.count()):
        field_ = texts.nth(i)
        current = field_.input_value()
        try:
            new = repr(float(current) * 3 + 1)
        except ValueError:
            new = current + "x"
        field_.fill(new)
        start = time.perf_counter()
        field_.press("Enter")  # continuous_update=False: the value is sent on Enter or blur
        if wait_changed():
            return f"text {current!r} -> {new!r}", time.perf_counter() - start
    message = explorer.locator(".widget-html").all_text_contents()
    pytest.fail(f"{file_name}: moving the last explorer's controls did not change its figure "
                f"(explorer text: {message!r})", pytrace=False)


def _clipped_px(img) -> int:
    """How many pixels of the figure lie beyond the right edge of its visible output area."""
    return img.evaluate("""(el) => {
        const r = el.getBoundingClientRect();
        let right = Infinity;
        for (let p = el.parentElement; p; p = p.parentElement) {
            const st = getComputedStyle(p);
            if (st.overflowX !== 'visible' || p.classList.contains('jp-OutputArea-output')) {
                right = Math.min(right, p.getBoundingClientRect().right);
            }
            if (p.classList.contains('jp-WindowedPanel-outer') || p.classList.contains('jp-NotebookPanel')) break;
        }
        return Math.max(0, Math.round(r.right - right));
    }""")


def _wait_saved(path: Path, mtime_before: int, what: str, timeout_s: float) -> None:
    """Wait until ``path`` has been written (its mtime moved), by autosave or Ctrl+S."""
    deadline = time.monotonic() + timeout_s
    while path.stat().st_mtime_ns == mtime_before:
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: {path.name} was not saved within {timeout_s:.0f} s", pytrace=False)
        time.sleep(0.2)
    time.sleep(0.5)  # the save has renamed its temporary file into place


def _changed_text(path: Path, before: bytes) -> str:
    diff = difflib.unified_diff(before.decode(errors="replace").splitlines(),
                                path.read_text(errors="replace").splitlines(), "committed", "saved", lineterm="")
    return "\n".join(list(diff)[:30])


def _screenshot(page, target, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if target is not None:
            target.scroll_into_view_if_needed(timeout=5000)
        page.screenshot(path=str(path))
    except Exception:  # a screenshot must never hide the real failure
        pass


def _check(condition, message: str) -> None:
    """Fail with ``message`` only (the learner-facing problem), not pytest's expression dump."""
    if not condition:
        pytest.fail(message, pytrace=False)


def _save_dom(page, path: Path) -> None:
    """The page's HTML at the failure, to see which output or widget went wrong."""
    try:
        path.write_text(page.content())
    except Exception:
        pass


# -------------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("lesson", _lesson_params())
def test_lesson_in_jupyterlab(lesson: Path, lab, page, timings, git_baseline):
    name = lesson.stem
    row = timings.setdefault(name, {"status": "failed"})
    notebook = jupytext.read(lesson)
    n_cells = len(notebook.cells)
    n_code = sum(cell.cell_type == "code" for cell in notebook.cells)
    screenshot_target = None
    source_before = lesson.read_bytes()
    mtime_before = lesson.stat().st_mtime_ns
    for stale in BUILD_DIR.glob(f"{name}-failure.*"):
        stale.unlink()
    try:
        _open_lab(page, lab, f"e2e-{name}")
        _dir_item(page, lesson.parent.name).dblclick()
        item = _dir_item(page, lesson.name)
        item.wait_for(state="visible", timeout=OPEN_TIMEOUT_S * 1000)

        start = time.perf_counter()
        item.dblclick()
        panel = _wait_for_notebook(page, lesson.name, n_cells)
        _wait_kernel_idle(page, panel, f"opening {lesson.name}", OPEN_TIMEOUT_S)
        row["open_s"] = round(time.perf_counter() - start, 2)

        start = time.perf_counter()
        _run_all(page, panel, lesson.name)
        row["run_s"] = round(time.perf_counter() - start, 2)

        errors = _error_outputs(panel)
        _check(not errors, f"{lesson.name}: {len(errors)} cell(s) show an error:\n"
               + "\n---\n".join(e[-1500:] for e in errors))
        prompts = _prompts(panel)
        _check(len(prompts) == n_code, f"{lesson.name}: {len(prompts)} code cells on screen, {n_code} in the file")
        not_run = [i for i, p in enumerate(prompts) if not re.search(r"\[\d+\]", p)]
        _check(not not_run, f"{lesson.name}: code cells {not_run} did not run (prompts {[prompts[i] for i in not_run]})")

        _wait_widgets_rendered(panel, lesson.name)
        widget_texts = panel.locator(WIDGET_VIEW).all_text_contents()
        broken = [t[:300] for t in widget_texts if "Error displaying widget" in t]
        _check(not broken, f"{lesson.name}: widget(s) failed to display: {broken}")
        reprs = [t[:200] for t in panel.locator(TEXT_PLAIN).all_text_contents() if WIDGET_REPR.search(t)]
        _check(not reprs, f"{lesson.name}: widget(s) shown as text, not rendered: {reprs}")
        n_views = panel.locator(WIDGET_VIEW).count()
        empty = panel.locator(WIDGET_VIEW).evaluate_all(
            "els => els.map((e, i) => [i, e.querySelector('.jupyter-widgets')]).filter(p => !p[1] || "
            "p[1].getBoundingClientRect().height === 0).map(p => p[0])")
        _check(not empty, f"{lesson.name}: widget outputs {empty} of {n_views} contain no visible .jupyter-widgets")

        explorers = _explorers(panel)
        n_explorers = explorers.count()
        _check(n_explorers >= 1, f"{lesson.name}: no explorer (controls above a figure) found among {n_views} widgets")
        for i in range(n_explorers):
            img = explorers.nth(i).locator("img.widget-image").last
            img.scroll_into_view_if_needed()
            ok = img.evaluate("el => el.complete && el.naturalWidth > 0 && /^(blob|data):/.test(el.src)")
            red = explorers.nth(i).locator(".widget-html span[style*='color']").all_text_contents()
            _check(ok, f"{lesson.name}: explorer {i + 1} of {n_explorers} shows no figure (message: {red!r})")
            _check(not red, f"{lesson.name}: explorer {i + 1} of {n_explorers} shows an error: {red!r}")

        last = explorers.nth(n_explorers - 1)
        screenshot_target = last
        last.scroll_into_view_if_needed()
        control, update_s = _move_one_control(page, last, lesson.name)
        row["widget_update_s"] = round(update_s, 2)
        row["control_moved"] = control
        row["widgets"] = n_views
        row["explorers"] = n_explorers
        # A PNG shown larger than it was drawn looks blurred; record the scale a learner sees.
        natural_w, shown_w = last.locator("img.widget-image").last.evaluate(
            "el => [el.naturalWidth, el.getBoundingClientRect().width]")
        row["figure_scale"] = round(shown_w / natural_w, 2) if natural_w else None
        clipped = _clipped_px(last.locator("img.widget-image").last)
        row["figure_clipped_px"] = clipped
        _check(not _error_outputs(panel), f"{lesson.name}: an error appeared after moving {control}")

        # The screenshot shows what a learner sees: the explorer after the move, figure below controls.
        last.locator("img.widget-image").last.scroll_into_view_if_needed()
        _screenshot(page, None, BUILD_DIR / f"{name}.png")

        # Autosave writes the run notebook back through jupytext: no byte may change.
        start = time.perf_counter()
        _wait_saved(lesson, mtime_before, f"autosave of {lesson.name}", 3 * AUTOSAVE_INTERVAL_S + 30)
        time.sleep(AUTOSAVE_INTERVAL_S + 1)   # and past one more interval, after the last output
        row["autosave_s"] = round(time.perf_counter() - start, 2)
        _check(lesson.read_bytes() == source_before,
               f"{lesson.name}: JupyterLab's save changed the file:\n{_changed_text(lesson, source_before)}")
        if git_baseline is not None:
            status = git_status()
            _check(status == git_baseline, f"git status of {ROOT} changed while {lesson.name} ran and was "
                                           f"saved:\nbefore:\n{git_baseline}\nafter:\n{status}")
        row["status"] = "ok"
        row["browser_errors"] = [e for e in page.errors if "favicon" not in e][:10]
    except BaseException:
        _screenshot(page, screenshot_target, BUILD_DIR / f"{name}-failure.png")
        _save_dom(page, BUILD_DIR / f"{name}-failure.html")
        row["browser_errors"] = page.errors[:10]
        raise


def test_make_lab_lands_on_the_start_page(lab, page):
    """The URL ``make lab`` prints opens START.md rendered; its first link opens lesson 01 as a
    notebook; no news toast; the file browser shows the course, not the maintainers' files."""
    if not (ROOT / LANDING).exists():
        pytest.skip(f"{LANDING} does not exist yet")
    assert lab.landing_url, f"the server wrote no page to open {LANDING}:\n{lab.log_tail()}"
    assert lab.landing_url.split("?")[0].endswith(LANDING), \
        f"`make lab` would open {lab.landing_url}, not {LANDING}"
    page.goto(lab.landing_url, wait_until="domcontentloaded")
    page.wait_for_selector("#jp-main-dock-panel", timeout=OPEN_TIMEOUT_S * 1000)
    rendered = page.locator("#jp-main-dock-panel .jp-RenderedMarkdown", has_text="Start here").first
    try:
        rendered.wait_for(state="visible", timeout=OPEN_TIMEOUT_S * 1000)
    except Exception:
        _screenshot(page, None, BUILD_DIR / "landing-failure.png")
        pytest.fail("START.md is not shown rendered (Markdown Preview)", pytrace=False)
    assert page.locator("#jp-main-dock-panel .jp-FileEditor").count() == 0, "START.md opened in the editor"
    link = rendered.locator(f"a[href*='{Path(FIRST_LESSON).name}']").first
    time.sleep(3)  # the news toast, when on, appears a moment after the page loads
    toasts = page.locator(".Toastify__toast").all_text_contents()
    assert not [t for t in toasts if "news" in t.lower()], f"a news toast is shown: {toasts}"
    _screenshot(page, None, BUILD_DIR / "landing.png")
    listed = {t.strip() for t in page.locator(".jp-FileBrowser .jp-DirListing-itemText").all_text_contents()}
    for hidden in ("course_lib", "tests", "tools", "e2e", "pyproject.toml"):
        assert hidden not in listed, f"the file browser lists {hidden!r}: {sorted(listed)}"
    assert {"notebooks", "exercises", "START.md"} <= listed, sorted(listed)
    link.click()
    n_cells = len(jupytext.read(ROOT / FIRST_LESSON).cells)
    _wait_for_notebook(page, Path(FIRST_LESSON).name, n_cells)


def test_a_workspace_file_saved_without_edits_is_still_refreshed(lab, page, tmp_path):
    """Ctrl+S in an untouched exercise of the workspace: ``make workspace`` still updates it."""
    from course_lib import exercises as ex

    dest = ROOT / "build" / "e2e" / "workspace"    # inside the served tree, ignored by git
    shutil.rmtree(dest, ignore_errors=True)
    ex.make_workspace(dest, ROOT, out=lambda *a: None)
    name = Path(FIRST_LESSON).name
    path = dest / name
    before, mtime_before = path.read_bytes(), path.stat().st_mtime_ns
    # A fresh named workspace, so no tab left by an earlier test covers this one.
    page.goto(lab.url(f"/lab/workspaces/e2e-save/tree/{dest.relative_to(ROOT).as_posix()}/{name}?reset"),
              wait_until="domcontentloaded")
    page.wait_for_selector("#jp-main-dock-panel", timeout=OPEN_TIMEOUT_S * 1000)
    panel = _wait_for_notebook(page, name, len(jupytext.read(path).cells))
    _wait_kernel_idle(page, panel, f"opening {name}", OPEN_TIMEOUT_S)
    panel.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5}, timeout=10_000)
    page.keyboard.press("Control+s")
    _wait_saved(path, mtime_before, f"Ctrl+S in {name}", 30)
    _check(path.read_bytes() == before, f"saving {name} unedited changed it:\n{_changed_text(path, before)}")
    # The course moves on: the untouched (saved) file is refreshed, not kept as the learner's.
    newer = tmp_path / "course"
    (newer / "exercises").mkdir(parents=True)
    for source in (ROOT / "exercises").glob("[0-9][0-9]_*.py"):
        text = source.read_text(encoding="utf-8")
        (newer / "exercises" / source.name).write_text(text + "\n# %% [markdown]\n# A later note.\n",
                                                       encoding="utf-8")
    actions = {e.name: e.action for e in ex.make_workspace(dest, newer, out=lambda *a: None)}
    _check(actions[name] == "updated", f"after a save without edits, make workspace did {actions[name]!r} "
                                       f"with {name} instead of refreshing it")
