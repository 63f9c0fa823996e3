"""A class leaderboard for the kernel lab: each learner's passing kernels ranked by predicted time.

Over a folder of submissions in nbgrader's layout, ``submitted/<student>/<assignment>/<notebook>``
(a jupytext ``.py`` or an ``.ipynb``), :func:`leaderboard` finds each learner's kernel for each
chosen puzzle (the function ``<task>_kernel`` of the exercise file), runs the puzzle's check on
that learner's own sizes (``check_kernel(..., learner=student)``) and ranks the kernels that pass
by the time their own trace predicts on the chosen accelerator at the task's realistic size
(:func:`~course_lib.kernels.tasks.predict_task` with ``sizes="large"``).

Not ranked, with the reason: no such kernel in the notebook; a kernel that fails its check
(a fault, a race, a wrong element on the learner's drawn data, a missed cost target); one whose
trace moves fewer bytes than the task's compulsory traffic (inputs read once, outputs written
once), which no kernel doing the work can. Only the kernel's own definition is executed, never
the rest of the notebook, in a namespace holding ``cuda``, ``np``, ``math`` and the lab's
constants. Drawing is in ``course_lib.plots.leaderboard``; the command is ``make leaderboard``
(``tools/leaderboard.py``).
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import check_choice
from . import cuda, puzzles
from . import tasks as _tasks
from .tasks import KernelCheckError, check_kernel, get_task, predict_task
from .trace import FULL_MASK, KernelFault

__all__ = ["Entry", "Leaderboard", "leaderboard", "kernel_from_notebook", "DEFAULT_ASSIGNMENT"]

DEFAULT_ASSIGNMENT = "09_kernel_lab"


@dataclass(frozen=True)
class Entry:
    """One learner's kernel for one puzzle: ranked (``rank`` from 1) with its predicted time, or
    not (``rank`` None) with the reason."""

    puzzle: str
    student: str
    rank: int | None
    t_s: float | None
    bytes_moved: float | None
    reason: str = ""

    @property
    def ranked(self) -> bool:
        return self.rank is not None


@dataclass(frozen=True)
class Leaderboard:
    """Every entry, puzzle by puzzle, ranked ones first (fastest first)."""

    accelerator: str
    puzzles: tuple
    entries: tuple

    def of(self, puzzle: str) -> list[Entry]:
        return [e for e in self.entries if e.puzzle == puzzle]

    def table(self) -> str:
        rows = [f"Kernel-lab leaderboard: predicted time on the {self.accelerator} at each task's large size"]
        for puzzle in self.puzzles:
            rows.append(f"\n{puzzle} ({get_task(puzzle).large})")
            for e in self.of(puzzle):
                if e.ranked:
                    rows.append(f"  {e.rank:3d}. {e.student:20s} {e.t_s * 1e6:12.1f} us  "
                                f"{e.bytes_moved / 1e6:12.1f} MB moved")
                else:
                    rows.append(f"    -  {e.student:20s} not ranked: {e.reason}")
        return "\n".join(rows)


def _namespace() -> dict:
    names = {"cuda": cuda, "np": np, "math": math, "FULL_MASK": FULL_MASK}
    for module in (_tasks, puzzles):
        names.update({k: getattr(module, k) for k in module.__all__ if k.isupper()})
    return names


def _code_cells(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        return "\n\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")
    return text                                      # a jupytext .py file is Python as it stands


def kernel_from_notebook(path, name: str):
    """The kernel ``name`` defined in the notebook at ``path`` (decorated as written), or a
    string saying why there is none. Only that function's definition is executed."""
    path = Path(path)
    try:
        tree = ast.parse(_code_cells(path), filename=str(path))
    except (SyntaxError, ValueError, OSError, json.JSONDecodeError) as exc:
        return f"the notebook does not parse ({type(exc).__name__}: {exc})"
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    if not found:
        return f"no function {name} in the notebook"
    namespace = _namespace()
    module = ast.Module(body=[found[-1]], type_ignores=[])
    try:
        exec(compile(module, str(path), "exec"), namespace)     # noqa: S102 - the learner's kernel only
    except Exception as exc:  # noqa: BLE001 - a broken definition is a reason not to rank it
        return f"the definition of {name} raised {type(exc).__name__}: {exc}"
    return namespace[name]


def _submissions(root: Path, assignment: str):
    """(student, notebook path) for each student folder that holds the assignment."""
    out = []
    for student in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        folder = student / assignment
        if not folder.is_dir():
            continue
        books = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".ipynb") and p.is_file())
        if books:
            out.append((student.name, books[0]))
    return out


def leaderboard(submitted, puzzles=("histogram", "warp_sum", "conv1d"), accelerator="H100 SXM",
                assignment=DEFAULT_ASSIGNMENT) -> Leaderboard:
    """Rank every learner's passing kernel for each of ``puzzles`` (see the module docstring)."""
    root = Path(submitted)
    if not root.is_dir():
        raise ValueError(f"submitted must be a folder (nbgrader's submitted/), got {str(submitted)!r}")
    if isinstance(puzzles, str):
        puzzles = tuple(p.strip() for p in puzzles.split(",") if p.strip())
    puzzles = tuple(check_choice("puzzle", p, tuple(_tasks.TASKS)) for p in puzzles)
    if not puzzles:
        raise ValueError("puzzles must name at least one kernel-lab task")
    from ..hardware import get_accelerator
    accelerator = get_accelerator(accelerator).name
    subs = _submissions(root, assignment)
    entries = []
    for puzzle in puzzles:
        task = get_task(puzzle)
        ranked, unranked = [], []
        for student, path in subs:
            kernel = kernel_from_notebook(path, f"{puzzle}_kernel")
            if isinstance(kernel, str):
                unranked.append(Entry(puzzle, student, None, None, None, kernel))
                continue
            try:
                runs = check_kernel(task, kernel, learner=student)
            except KernelCheckError as exc:
                unranked.append(Entry(puzzle, student, None, None, None,
                                      f"fails its check ({exc.failure}): {str(exc).splitlines()[0]}"))
                continue
            except (KernelFault, NotImplementedError, TypeError) as exc:
                unranked.append(Entry(puzzle, student, None, None, None, f"{type(exc).__name__}: {exc}"))
                continue
            run = runs[0]
            compulsory = task.min_bytes(run.sizes)
            if run.profile.bytes_moved < compulsory:
                unranked.append(Entry(puzzle, student, None, None, None,
                                      f"moves {run.profile.bytes_moved:,} B, fewer than the compulsory "
                                      f"{compulsory:,.0f} B: it cannot have done the work"))
                continue
            pred = predict_task(run, accelerator, sizes="large")
            ranked.append((pred.t_s, student, pred.bytes_moved))
        ranked.sort()
        entries += [Entry(puzzle, s, i + 1, t, q) for i, (t, s, q) in enumerate(ranked)]
        entries += sorted(unranked, key=lambda e: e.student)
    return Leaderboard(accelerator, puzzles, tuple(entries))
