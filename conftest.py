"""Let nbval run jupytext percent-format lessons (``.py``) straight from source.

nbval only collects ``.ipynb``. Here every ``.py`` under notebooks/ and solutions/ is read with
``jupytext.read`` and handed to nbval's own collector, so no ``.ipynb`` is ever written.
exercises/ is tested separately (tests/test_exercises.py): its stubs are meant to raise.

A solutions file is also run a second time in the same kernel, from its last code cell to its first
(``Cell N again, after the cells below it``): learners re-run cells out of order, and a function a
learner writes must not shadow a name an earlier exercise uses (as a function named ``roofline``
once replaced the module of that name). Lesson 09's solutions run kernels through the CUDA simulator
(seconds per pass) and are run once.

A lesson (``notebooks/NN_*.py``) also gets a learner's habits, in the kernel nbval already started
(so a lesson costs two runs, not four as when these were a separate test file):

1. nbval's run: every cell in a fresh kernel (``Cell N``);
2. the whole lesson again in the same kernel (``Cell N again``): no error, and every number a cell
   prints is the same as in the first run (stale state from the first run would show up here);
   a cell that measures this machine runs once (its numbers vary, and measuring twice costs seconds),
   and figures are built but not drawn to PNG again (the first pass drew them);
3. the lesson's explorer cell (the last cell that displays a widget and calls something named
   ``*explorer*(``) run first, in a namespace of its own: it must be self-contained and show its widget.

Numbers printed from measurements of this machine (timings, bandwidths) legitimately change from
run to run, so a cell that measures, and any later cell that reads a name such a cell assigned
(followed transitively), are not compared.
"""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import jupytext
import nbformat
import pytest

_LESSON_DIRS = {"notebooks", "solutions"}

try:
    from nbval import plugin as _nbval_plugin
except ImportError:  # nbval missing: unit tests still run
    _nbval_plugin = None


def _jupytext_reader():
    """A stand-in for the ``nbformat`` module that reads jupytext sources."""
    shim = types.SimpleNamespace(**{k: getattr(nbformat, k) for k in dir(nbformat) if not k.startswith("__")})
    shim.read = lambda path, as_version=4: jupytext.read(path)
    return shim


if _nbval_plugin is not None:
    class JupytextNbFile(_nbval_plugin.IPyNbFile):
        def collect(self):
            original = _nbval_plugin.nbformat
            _nbval_plugin.nbformat = _jupytext_reader()
            try:
                yield from super().collect()
            finally:
                _nbval_plugin.nbformat = original


def _is_lesson(file_path: Path, config) -> bool:
    return (file_path.suffix == ".py" and file_path.parent.name in _LESSON_DIRS | {"exercises"}
            and file_path.parent.parent == Path(str(config.rootpath)))


class _NotAModule(pytest.File):
    """Placeholder so pytest never imports a lesson named on the command line as a test module."""

    def collect(self):
        return []


def pytest_pycollect_makemodule(module_path: Path, parent):
    if _is_lesson(module_path, parent.config):
        return _NotAModule.from_parent(parent, path=module_path)
    return None


def pytest_collect_file(file_path: Path, parent):
    opt = parent.config.option
    if _nbval_plugin is None or not (opt.nbval or opt.nbval_lax):
        return None
    if _is_lesson(file_path, parent.config) and file_path.parent.name in _LESSON_DIRS:
        if file_path.parent.name == "notebooks" and _LESSON_NAME.match(file_path.name):
            return LessonNbFile.from_parent(parent, path=file_path)
        if file_path.parent.name == "solutions" and not file_path.name.startswith(_SLOW_SOLUTIONS):
            return SolutionNbFile.from_parent(parent, path=file_path)
        return JupytextNbFile.from_parent(parent, path=file_path)
    return None


# ---------------------------------------------------------------------------------------------
# A learner's habits with a lesson (see the module docstring)

_LESSON_NAME = re.compile(r"\d\d_\w+\.py$")
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Cells whose printed numbers come from this machine's clock, not from the course's formulas.
_MEASURING = re.compile(r"\bmeasure\w*\s*\(|perf_counter|timeit|time\.time\s*\(|Progress\s*\(|tqdm|tracemalloc|\bbench\w*\s*\(")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:[,_]\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_EXPLORER_CALL = re.compile(r"\b\w*(explorer|Explorer)\w*\s*\(")


def _printed_text(outputs) -> str:
    """What the learner reads under a cell: stdout and plain-text results, addresses blanked."""
    parts = []
    for out in outputs or []:
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            if _WIDGET_MIME not in out.get("data", {}):
                parts.append(str(out.get("data", {}).get("text/plain", "")))
    return _ADDRESS.sub("0x?", "".join(parts))


def _errored(outputs) -> bool:
    return outputs is None or any(out.get("output_type") == "error" for out in outputs)


def _shows_widget(outputs) -> bool:
    return any(_WIDGET_MIME in out.get("data", {}) for out in outputs or []
               if out.get("output_type") in ("execute_result", "display_data"))


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


def _measured_cells(sources: list[str]) -> set[int]:
    """Cells that measure this machine, and every later cell that uses what they computed."""
    tainted: set[str] = set()
    measured = set()
    for i, source in enumerate(sources):
        stored, loaded = _names(source)
        if _MEASURING.search(source) or loaded & tainted:
            measured.add(i)
            tainted |= stored
    return measured


def _first_line(source: str) -> str:
    lines = source.strip().splitlines()
    return lines[0][:60] if lines else ""


# The explorer cell, run in a namespace of its own inside the lesson's kernel: a name it takes from a
# cell above it is a NameError here, as after a restart, and its last expression is displayed as
# IPython would display it. A restart cost a kernel start and the course's imports (about 1.2 s a
# lesson); modules stay imported, which is all a restart would have added to what this catches.
_FRESH_RUN = """\
def _course_fresh_run(source):
    import ast
    namespace = {{"__name__": "__main__"}}
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<explorer cell>", "exec"), namespace)
    if last is not None:
        value = eval(compile(ast.Expression(last.value), "<explorer cell>", "eval"), namespace)
        if value is not None:
            display(value)


_course_fresh_run({source!r})
del _course_fresh_run
"""


_NO_PNG = "get_ipython().display_formatter.formatters['image/png'].enabled = False\n"


class HabitCheck(pytest.Item):
    """One habit check over a lesson's two runs; ``kind`` is "same numbers" or "explorer first"."""

    def __init__(self, *, kind: str, first: list, second: list, **kwargs):
        super().__init__(**kwargs)
        self.kind, self.first, self.second = kind, first, second

    def runtest(self):
        if any(item.test_outputs is None for item in self.first):
            pytest.skip("the first run did not run every cell (deselected?)")
        if self.kind == "same numbers":
            self._same_numbers()
        else:
            self._explorer_first()

    def _same_numbers(self):
        sources = [item.cell.source for item in self.first]
        measured = _measured_cells(sources)
        stale = []
        for i, (one, two) in enumerate(zip(self.first, self.second)):
            if two is None or i in measured or _errored(one.test_outputs) or _errored(two.test_outputs):
                continue       # an error is reported by that cell's own item
            a, b = _printed_text(one.test_outputs), _printed_text(two.test_outputs)
            if _NUMBER.findall(a) != _NUMBER.findall(b):
                stale.append(f"  cell {i} ({_first_line(sources[i])!r}): printed {a[:200]!r} on the first run, "
                             f"{b[:200]!r} on the second")
        if stale:
            raise HabitFailure(f"{self.path.name}: the second run in one kernel prints different numbers "
                               f"(stale state, or an unseeded random draw?):\n" + "\n".join(stale))

    def _explorer_first(self):
        shown = [item for item in self.first if _shows_widget(item.test_outputs)
                 and _EXPLORER_CALL.search(item.cell.source)]
        if not shown:
            raise HabitFailure(f"{self.path.name} has no explorer cell (none displayed a widget and called "
                               f"something named *explorer*)")
        cell = shown[-1]
        fresh = nbformat.v4.new_code_cell(_FRESH_RUN.format(source=cell.cell.source))
        probe = _nbval_plugin.IPyNbCell.from_parent(self.parent, name=f"{cell.name} first", cell_num=cell.cell_num,
                                                    cell=fresh, options=cell.options)
        where = f"{self.path.name}: the explorer cell {cell.cell_num} ({_first_line(cell.cell.source)!r})"
        try:
            probe.runtest()
        except _nbval_plugin.NbCellError:
            error = next(out for out in probe.test_outputs if out.get("output_type") == "error")
            hint = (" is not self-contained: run before the cells above it, it"
                    if error["ename"] in ("NameError", "UnboundLocalError") else ", run first in a fresh namespace,")
            raise HabitFailure(f"{where}{hint} fails with {error['ename']}: {error['evalue']}") from None
        if not _shows_widget(probe.test_outputs):
            raise HabitFailure(f"{where}, run first in a fresh namespace, shows no widget")

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, HabitFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"{self.path.name}::{self.name}"


class HabitFailure(AssertionError):
    pass


if _nbval_plugin is not None:
    class LessonNbFile(JupytextNbFile):
        """A lesson: nbval's cells, the same cells again in the same kernel, then the habit checks."""

        def collect(self):
            first = list(super().collect())
            yield from first
            # A cell that measures this machine runs once: its numbers are not compared anyway, and
            # a second measurement costs seconds (lesson 04's roofs) for nothing the first did not check.
            second = [None if _MEASURING.search(item.cell.source) else
                      _nbval_plugin.IPyNbCell.from_parent(self, name=f"{item.name} again", cell_num=item.cell_num,
                                                          cell=item.cell, options=item.options) for item in first]
            # The second pass draws no PNGs: a figure shows as its text form. Drawing every figure
            # again (at 2x, with a tight bounding box) was half of a lesson's second pass, and it
            # checks nothing the first pass and the plotting code's own run do not.
            again = next((item for item in second if item is not None), None)
            if again is not None:
                again.cell = nbformat.v4.new_code_cell(_NO_PNG + again.cell.source)
            yield from (item for item in second if item is not None)
            yield HabitCheck.from_parent(self, name="second run prints the same numbers", kind="same numbers",
                                         first=first, second=second)
            yield HabitCheck.from_parent(self, name="explorer cell runs first in a fresh namespace",
                                         kind="explorer first", first=first, second=second)


#: Solutions whose second, reversed pass would cost seconds (lesson 09 runs the CUDA simulator,
#: lesson 10 Triton's interpreter; each puzzle's check is already tested in its own file).
_SLOW_SOLUTIONS = ("09_", "10_")

if _nbval_plugin is not None:
    class SolutionNbFile(JupytextNbFile):
        """A solutions file: nbval's cells, then every cell again from the last to the first."""

        def collect(self):
            first = list(super().collect())
            yield from first
            for item in reversed(first):
                yield _nbval_plugin.IPyNbCell.from_parent(self, name=f"{item.name} again, after the cells below it",
                                                          cell_num=item.cell_num, cell=item.cell, options=item.options)


# --- Scheduling: the longest work first -------------------------------------------------------
# `make test` runs workers that take whole files (--dist loadfile). xdist hands out files with
# the most items first, which leaves the slow files of few items (the nbgrader round trip, the API
# walk, the progress run that waits for a timeout) for last, where one worker runs them while the
# others idle. Here the lessons and solutions (seconds each) go first, then the test files known
# to be slow, then the rest by number of items; the order inside a file is unchanged. A file
# missing from the list is only scheduled later, never skipped.
_SLOW_TEST_FILES = ("test_exercises_robust.py", "test_nbgrader.py", "test_api_walk.py", "test_exercises.py",
                    "test_tile_puzzles.py", "test_checks.py", "test_widgets_controls.py", "test_kernels.py",
                    "test_tiles.py", "test_tiles_torch.py", "test_checks_feedback.py", "test_mastery.py")


def pytest_configure(config):
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False        # keep the order set below


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist, for each worker: tell it to order its collection (a worker's own dist is "no")."""
    if getattr(node.config.option, "dist", "no") == "loadfile":
        node.workerinput["course_heavy_first"] = True


def pytest_collection_modifyitems(session, config, items):
    if not getattr(config, "workerinput", {}).get("course_heavy_first"):
        return
    counts: dict = {}
    for item in items:
        counts[item.path] = counts.get(item.path, 0) + 1

    def rank(item):
        path = item.path
        if path.parent.name in _LESSON_DIRS:
            return (0, path.parent.name == "solutions", 0, str(path))   # lessons, then solutions
        if path.name in _SLOW_TEST_FILES:
            return (1, 0, _SLOW_TEST_FILES.index(path.name), str(path))
        return (2, 0, -counts[path], str(path))

    items.sort(key=rank)
