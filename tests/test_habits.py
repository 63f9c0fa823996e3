"""A learner's habits with a lesson, run in a real kernel (no browser).

People do not run a notebook once from top to bottom. For each ``notebooks/NN_*.py`` this runs,
in one kernel per lesson (to stay fast):

1. the whole lesson in a fresh kernel (run 1);
2. the whole lesson again in the same kernel (run 2): no error, and every number a cell prints
   is the same as in run 1 (stale state from the first run would show up here);
3. restart the kernel, then run the lesson's widget cell first (the last cell that builds a
   ``FigureExplorer``): it must be self-contained, so it works before the cells above it, or at
   least fails with a clear message, never a ``NameError`` or a traceback from inside course_lib;
4. the whole lesson once more (run 3) after that restart: no error.

Numbers printed from measurements of this machine (timings, bandwidths) legitimately change from
run to run, so they are left out: a cell that measures, any later cell that reads a name such a cell
assigned (followed transitively), and any number that differs between run 1 and run 3 (both after a
fresh start) are not compared.
"""

from __future__ import annotations

import ast
import copy
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
from nbclient.util import run_sync  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
CELL_TIMEOUT_S = 120
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Cells whose printed numbers come from this machine's clock, not from the course's formulas.
MEASURING = re.compile(r"\bmeasure\w*\s*\(|perf_counter|timeit|time\.time\s*\(|Progress\s*\(|\bbench\w*\s*\(")
NUMBER = re.compile(r"[-+]?(?:\d+(?:[,_]\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
STATIC_EXPLORER = re.compile(r"\b\w*(explorer|Explorer)\w*\s*\(")


@dataclass
class Run:
    texts: dict[int, str] = field(default_factory=dict)   # cell index -> printed text
    errors: dict[int, str] = field(default_factory=dict)  # cell index -> "Ename: value (where)"
    seconds: float = 0.0


@dataclass
class LessonHabits:
    path: Path
    first: Run
    second: Run
    after_restart: Run
    widget_cell: int | None
    widget_cell_error: str | None
    widget_cell_showed_widget: bool
    code_cells: list[int]
    sources: dict[int, str]


def _printed_text(cell) -> str:
    """What the learner reads under a cell: stdout and plain-text results, addresses blanked."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream" and out.name == "stdout":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            if WIDGET_MIME in out.get("data", {}):
                continue
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return ADDRESS.sub("0x?", "".join(parts))


def _error_text(cell) -> str | None:
    for out in cell.get("outputs", []):
        if out.output_type == "error":
            frames = [ADDRESS.sub("", re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in out.get("traceback", [])]
            where = next((f.strip().splitlines()[0] for f in reversed(frames) if "course_lib" in f), "")
            inside = f" (raised inside course_lib: {where})" if where else ""
            arrows = [ln.strip() for f in frames for ln in f.splitlines() if ln.lstrip().startswith("---->")]
            at = f" at `{arrows[0][5:].strip()}`" if arrows else ""
            return f"{out.ename}: {out.evalue}{at}{inside}"
    return None


def _shows_widget(cell) -> bool:
    return any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", [])
               if out.output_type in ("execute_result", "display_data"))


def _run_cells(client, nb, indices, widget_ids: dict | None = None) -> Run:
    """Execute ``indices`` in order (copies, so the notebook stays clean); keep text and errors."""
    run = Run()
    start = time.perf_counter()
    for i in indices:
        cell = copy.deepcopy(nb.cells[i])
        client.execute_cell(cell, i)
        run.texts[i] = _printed_text(cell)
        error = _error_text(cell)
        if error:
            run.errors[i] = error
        if widget_ids is not None:
            widget_ids[i] = [out["data"][WIDGET_MIME]["model_id"] for out in cell.get("outputs", [])
                             if out.output_type in ("execute_result", "display_data")
                             and WIDGET_MIME in out.get("data", {})]
    run.seconds = time.perf_counter() - start
    return run


def _explorer_cell(client, nb, code_cells, widget_ids) -> int | None:
    """The last cell that displayed a FigureExplorer (a VBox with an Image child) in run 1."""
    state = client.widget_state
    found = None
    for i in code_cells:
        for model_id in widget_ids.get(i, []):
            model = state.get(model_id, {})
            children = [c[len("IPY_MODEL_"):] for c in model.get("children", [])
                        if isinstance(c, str) and c.startswith("IPY_MODEL_")]
            if model.get("_model_name") == "VBoxModel" and any(
                    state.get(c, {}).get("_model_name") == "ImageModel" for c in children):
                found = i
    if found is None:  # fall back to the source: the last call of something named *explorer*(
        for i in code_cells:
            if STATIC_EXPLORER.search(nb.cells[i].source):
                found = i
    return found


def _habits(path: Path) -> LessonHabits:
    nb = jupytext.read(path)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=True,
                                      shutdown_kernel="immediate",
                                      resources={"metadata": {"path": str(path.parent)}})
    widget_ids: dict[int, list[str]] = {}
    with client.setup_kernel():
        first = _run_cells(client, nb, code_cells, widget_ids)
        widget_cell = _explorer_cell(client, nb, code_cells, widget_ids)
        second = _run_cells(client, nb, code_cells)

        run_sync(client.km.restart_kernel)(now=True)
        run_sync(client.kc.wait_for_ready)(timeout=60)
        widget_error, showed = None, False
        if widget_cell is not None:
            cell = copy.deepcopy(nb.cells[widget_cell])
            client.execute_cell(cell, widget_cell)
            widget_error = _error_text(cell)
            showed = _shows_widget(cell)
        after_restart = _run_cells(client, nb, code_cells)

    return LessonHabits(path, first, second, after_restart, widget_cell, widget_error, showed, code_cells,
                        {i: nb.cells[i].source for i in code_cells})


@pytest.fixture(scope="module", params=LESSONS or [None], ids=lambda p: p.stem if p else "no-lessons")
def habits(request) -> LessonHabits:
    if request.param is None:
        pytest.skip("no lessons in notebooks/ yet")
    return _habits(request.param)


def _names(source: str) -> tuple[set[str], set[str]]:
    """Names a cell assigns and names it reads (IPython magics and shell lines are ignored)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        words = set(re.findall(r"[A-Za-z_]\w*", code))
        return words, words
    stored, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
    return stored, loaded


def _measured_cells(sources: dict[int, str]) -> set[int]:
    """Cells that measure this machine, and every later cell that uses what they computed."""
    tainted_names: set[str] = set()
    measured = set()
    for i, source in sources.items():
        stored, loaded = _names(source)
        if MEASURING.search(source) or loaded & tainted_names:
            measured.add(i)
            tainted_names |= stored
    return measured


def _new_errors(run: Run, baseline: Run) -> dict[int, str]:
    """Errors of ``run`` in cells that did not fail in ``baseline`` (those are the first test's)."""
    return {i: e for i, e in run.errors.items() if i not in baseline.errors}


def _describe(errors: dict[int, str], sources: dict[int, str]) -> str:
    return "\n".join(f"  cell {i} ({sources[i].strip().splitlines()[0][:60]!r}): {e}" for i, e in errors.items())


def test_first_run_has_no_error(habits):
    """The baseline: the lesson runs top to bottom in a fresh kernel (what nbval also checks)."""
    if habits.first.errors:
        pytest.fail(f"{habits.path.name} fails in a fresh kernel:\n"
                    f"{_describe(habits.first.errors, habits.sources)}", pytrace=False)


def test_running_twice_in_one_kernel_gives_the_same_numbers(habits):
    name = habits.path.name
    new = _new_errors(habits.second, habits.first)
    if new:
        pytest.fail(f"{name}: running the lesson a second time in the same kernel fails where the first "
                    f"run did not:\n{_describe(new, habits.sources)}", pytrace=False)
    stale = []
    failed_anywhere = set(habits.first.errors) | set(habits.second.errors) | set(habits.after_restart.errors)
    measured = _measured_cells(habits.sources)
    for i in habits.code_cells:
        if i in measured or i in failed_anywhere:
            continue
        first, second, fresh = (NUMBER.findall(r.texts.get(i, "")) for r in
                                (habits.first, habits.second, habits.after_restart))
        if len(first) != len(second) or len(first) != len(fresh):
            if habits.first.texts.get(i) == habits.after_restart.texts.get(i):
                stale.append(f"  cell {i}: printed {habits.first.texts[i][:200]!r} on the first run, "
                             f"{habits.second.texts.get(i, '')[:200]!r} on the second")
            continue
        changed = [(a, b) for a, b, c in zip(first, second, fresh) if a == c and a != b]
        if changed:
            stale.append(f"  cell {i} ({habits.sources[i].strip().splitlines()[0][:60]!r}): "
                         f"numbers changed on the second run: {changed[:5]}")
    if stale:
        pytest.fail(f"{name}: the second run in one kernel prints different numbers (stale state?):\n"
                    + "\n".join(stale), pytrace=False)


def test_restart_and_run_again(habits):
    new = _new_errors(habits.after_restart, habits.first)
    if new:
        pytest.fail(f"{habits.path.name}: after a kernel restart the lesson fails where a fresh kernel "
                    f"did not:\n{_describe(new, habits.sources)}", pytrace=False)


def test_widget_cell_runs_first(habits):
    name = habits.path.name
    if habits.widget_cell is None:
        pytest.fail(f"{name} has no widget cell (no FigureExplorer found)", pytrace=False)
    first_line = habits.sources[habits.widget_cell].strip().splitlines()[0][:60]
    error = habits.widget_cell_error
    if error and error.startswith(("NameError", "UnboundLocalError")):
        pytest.fail(f"{name}: the widget cell {habits.widget_cell} ({first_line!r}) is not self-contained; "
                    f"run before the cells above it, it fails with {error}", pytrace=False)
    if error:
        pytest.fail(f"{name}: the widget cell {habits.widget_cell} ({first_line!r}) run first in a fresh "
                    f"kernel fails with {error}", pytrace=False)
    if not habits.widget_cell_showed_widget:
        pytest.fail(f"{name}: the widget cell {habits.widget_cell} ({first_line!r}) run first shows no widget",
                    pytrace=False)
