"""Running a learner's notebooks top to bottom in a fresh kernel: which exercises pass.

``progress`` executes each ``NN_topic.py`` of a workspace (nbclient, one kernel per file, a time
limit per file), reports every exercise's status and ends with the concept table of
:mod:`course_lib.exercises.mastery`.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from course_lib._validate import check_number
from course_lib.exercises.files import _CHECK_CALL, _lesson_files
from course_lib.exercises.mastery import concept_table

__all__ = ["DEFAULT_TIMEOUT_S", "CellOutcome", "ExerciseStatus", "execute_notebook", "progress"]


#: Seconds ``progress`` gives each notebook's cells, all together (the kernel's start not counted).
DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 24 * 3600


@dataclass(frozen=True)
class CellOutcome:
    """One executed code cell: its index among all cells, the ids it checks, and any error."""

    index: int
    source: str
    exercise_ids: tuple
    error_name: str | None
    error_value: str | None


def _exercise_ids(source: str) -> tuple:
    return tuple(dict.fromkeys(m.group(2) for m in _CHECK_CALL.finditer(source)))


def _outcome(index: int, cell) -> CellOutcome:
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    return CellOutcome(index, cell.source, _exercise_ids(cell.source),
                       errors[0]["ename"] if errors else None,
                       errors[0]["evalue"] if errors else None)


def _check_timeout(timeout) -> float:
    return check_number("timeout", timeout, min_value=0, allow_min=False, max_value=MAX_TIMEOUT_S)


def _client(nb, path: Path, timeout: float, cwd, started: list):
    """An nbclient that gives the notebook's cells ``timeout`` seconds in all and records, in
    ``started``, the index of each code cell as it starts."""
    import time

    from nbclient import NotebookClient

    deadline = []

    def remaining(cell) -> float:
        if not deadline:                       # the clock starts with the first cell
            deadline.append(time.monotonic() + timeout)
        return max(0.05, deadline[0] - time.monotonic())   # never 0: nbclient reads 0 as "no limit"

    def on_execute(cell, cell_index, **kwargs):
        started.append(cell_index)

    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    return NotebookClient(nb, timeout=max(1, int(timeout)), timeout_func=remaining, kernel_name=kernel,
                          allow_errors=True, shutdown_kernel="immediate", on_cell_execute=on_execute,
                          resources={"metadata": {"path": str(cwd or path.parent)}})


def execute_notebook(path, timeout: float = DEFAULT_TIMEOUT_S, cwd=None) -> list[CellOutcome]:
    """Run every code cell of a jupytext (or .ipynb) notebook in a fresh kernel, errors allowed.

    ``timeout`` (seconds, > 0) bounds all the cells together; running past it raises nbclient's
    ``CellTimeoutError``, and a kernel that dies raises ``DeadKernelError``.
    """
    import jupytext

    timeout = _check_timeout(timeout)
    path = Path(path)
    nb = jupytext.read(path)
    _client(nb, path, timeout, cwd, []).execute(stderr=subprocess.DEVNULL)  # kernel start-up noise
    return [_outcome(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]


@dataclass(frozen=True)
class ExerciseStatus:
    """An exercise's state in a workspace.

    'pass', 'fail', 'not attempted', 'not run' (an earlier cell timed out or crashed the kernel),
    'timed out' or 'crashed' (its own cell did). A notebook that could not be checked at all
    ('unreadable', 'timed out', 'crashed' before any exercise) has one entry with an empty id.
    """

    notebook: str
    exercise_id: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class _NotebookRun:
    outcomes: list            # CellOutcome of every code cell that finished
    problem: str | None       # None, 'timed out', 'crashed' or 'unreadable'
    message: str = ""
    stopped_cell: int | None = None
    unrun_ids: tuple = ()     # exercises in the cells that never finished
    stopped_ids: tuple = ()   # those of them checked in the cell that was running


def _run_for_progress(path: Path, timeout: float) -> _NotebookRun:
    """Run one notebook, turning every way it can stop into a result; never raises for the file."""
    import jupytext
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return _NotebookRun([], "unreadable", f"not UTF-8 text (byte 0x{raw[exc.start]:02x} on line {line}); "
                                              f"open it in an editor and save it with UTF-8 encoding")
    except OSError as exc:
        return _NotebookRun([], "unreadable", f"cannot read it ({exc.strerror or exc})")
    try:
        nb = jupytext.reads(text, fmt="py:percent")
    except Exception as exc:  # noqa: BLE001 - any parse failure is reported for this file only
        return _NotebookRun([], "unreadable", f"not a notebook jupytext can read ({_first_line(str(exc))})")
    started: list = []
    problem = message = None
    try:
        _client(nb, path, timeout, None, started).execute(stderr=subprocess.DEVNULL)
    except CellTimeoutError:
        problem = "timed out"
        message = (f"still running after {timeout:g} s (an endless loop, or too much work?); "
                   f"the cells after it did not run")
    except DeadKernelError:
        problem = "crashed"
        message = ("the Python kernel stopped (os._exit, a crash in compiled code, or out of memory); "
                   "the cells after it did not run")
    except Exception as exc:  # noqa: BLE001 - a kernel that cannot start, a lost connection...
        problem = "crashed"
        message = f"could not run it: {_first_line(str(exc)) or type(exc).__name__}"
    code = [(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    if problem is None:
        return _NotebookRun([_outcome(i, cell) for i, cell in code], None)
    stopped = started[-1] if started else None
    done = [(i, cell) for i, cell in code if stopped is not None and i < stopped]
    unrun = tuple(dict.fromkeys(x for i, cell in code if stopped is None or i >= stopped
                                for x in _exercise_ids(cell.source)))
    stopped_ids = _exercise_ids(nb.cells[stopped].source) if stopped is not None else ()
    return _NotebookRun([_outcome(i, cell) for i, cell in done], problem, message, stopped, unrun,
                        stopped_ids)


def _first_line(text: str | None, limit: int = 100) -> str:
    line = (text or "").strip().split("\n")[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


#: Added to a NameError: the file passed in the learner's kernel, where an old cell defined it.
FRESH_KERNEL_NOTE = ("passes in your notebook? progress runs the file top to bottom in a fresh kernel, "
                     "where a name from a deleted or unrun cell does not exist: define it in a cell above")


def _error_detail(name: str, value: str | None) -> str:
    detail = f"{name}: {_first_line(value)}"
    return f"{detail}; {FRESH_KERNEL_NOTE}" if name in ("NameError", "UnboundLocalError") else detail


def _cell_statuses(notebook: str, cell: CellOutcome) -> list[ExerciseStatus]:
    statuses = []
    for ex_id in cell.exercise_ids:
        if cell.error_name is None:
            statuses.append(ExerciseStatus(notebook, ex_id, "pass"))
        elif cell.error_name == "NotImplementedError":
            statuses.append(ExerciseStatus(notebook, ex_id, "not attempted"))
        else:
            statuses.append(ExerciseStatus(notebook, ex_id, "fail",
                                           _error_detail(cell.error_name, cell.error_value)))
    return statuses


def progress(dest, out=print, timeout: float = DEFAULT_TIMEOUT_S) -> list[ExerciseStatus]:
    """Execute each exercise notebook in ``dest`` and report every exercise's state.

    Each notebook runs in a fresh kernel, its cells given ``timeout`` seconds in all (> 0). A
    notebook that runs past it, crashes its kernel or cannot be read is reported, by name, and
    the others are still checked; a summary ends the report.
    """
    timeout = _check_timeout(timeout)
    dest = Path(dest)
    if not dest.is_dir():
        raise NotADirectoryError(f"{str(dest)!r} is not a folder: make one with "
                                 f"`python -m course_lib.exercises workspace {dest}`")
    notebooks = _lesson_files(dest)
    if not notebooks:
        raise FileNotFoundError(f"no exercise notebooks (NN_topic.py) in {dest}: make them with "
                                f"`python -m course_lib.exercises workspace {dest}`")
    out(f"Each file runs top to bottom in a fresh kernel (as Kernel > Restart Kernel and Run All "
        f"Cells does), {timeout:g} s at most per file.")
    statuses = []
    problems = {}
    for number, notebook in enumerate(notebooks, 1):
        out(f"[{number}/{len(notebooks)}] {notebook.name}")     # each notebook takes seconds: show where we are
        run = _run_for_progress(notebook, timeout)
        for cell in run.outcomes:
            if not cell.exercise_ids and cell.error_name:
                out(f"  note: cell {cell.index + 1} (not an exercise) raised "
                    f"{_error_detail(cell.error_name, cell.error_value)}")
            for status in _cell_statuses(notebook.name, cell):
                statuses.append(status)
                detail = f"  ({status.detail})" if status.detail else ""
                out(f"  {status.exercise_id:6s} {status.status}{detail}")
        if run.problem is None:
            continue
        problems[notebook.name] = run.problem
        where = f"cell {run.stopped_cell + 1}: " if run.stopped_cell is not None else ""
        out(f"  {run.problem}: {notebook.name}, {where}{run.message}")
        if not run.unrun_ids:
            statuses.append(ExerciseStatus(notebook.name, "", run.problem, run.message))
        for ex_id in run.unrun_ids:
            # The exercise whose own cell was running when it stopped gets the notebook's status.
            own = ex_id in run.stopped_ids
            status = ExerciseStatus(notebook.name, ex_id, run.problem if own else "not run", run.message)
            statuses.append(status)
            out(f"  {ex_id:6s} {status.status}")
    if problems:
        kinds = {k: sum(1 for v in problems.values() if v == k) for k in ("timed out", "crashed", "unreadable")}
        out(f"{len(notebooks)} notebooks: {len(notebooks) - len(problems)} ran to the end, "
            + ", ".join(f"{n} {k}" for k, n in kinds.items() if n)
            + " (" + ", ".join(f"{name} {kind}" for name, kind in problems.items()) + ")")
    exercises_ = [s for s in statuses if s.exercise_id]
    try:                                  # the mastery map: per concept, passed / attempted / not
        out(concept_table(exercises_))
    except Exception as exc:  # noqa: BLE001 - the map never hides the statuses
        out(f"(no concept table: {exc})")
    counts = {s: sum(1 for x in exercises_ if x.status == s)
              for s in ("pass", "fail", "not attempted", "not run", "timed out", "crashed")}
    extra = "".join(f", {n} {k}" for k, n in list(counts.items())[3:] if n)
    out(f"{len(exercises_)} exercises: {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['not attempted']} not attempted{extra}")
    return statuses


