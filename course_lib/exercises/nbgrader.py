"""An nbgrader course source from the solutions: each exercise cell split into an answer cell and a
locked, graded check cell; everything else locked."""

from __future__ import annotations

from pathlib import Path

from course_lib._validate import check_callable, check_path, check_sequence
from course_lib.exercises.authoring import find_regions
from course_lib.exercises.files import _CHECK_CALL, COURSE_ID, END, _default_root, _lesson_files, _write_atomic

__all__ = ["build_nbgrader"]


def _nbgrader_meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return meta


def _nbgrader_notebook(path: Path):
    """A solutions file as an nbgrader source notebook: exercise cells split, the rest locked."""
    import jupytext
    import nbformat

    text = path.read_text(encoding="utf-8")
    find_regions(text, f"solutions/{path.name}")        # fail early, with a line number
    nb = jupytext.reads(text, fmt="py:percent")
    cells = []
    stem = path.stem
    for index, cell in enumerate(nb.cells):
        lines = cell.source.split("\n")
        ends = [i for i, line in enumerate(lines) if line.strip() == END]
        if cell.cell_type != "code" or not ends:
            new = (nbformat.v4.new_markdown_cell(cell.source) if cell.cell_type == "markdown"
                   else nbformat.v4.new_code_cell(cell.source) if cell.cell_type == "code"
                   else nbformat.v4.new_raw_cell(cell.source))
            new.metadata = {"nbgrader": _nbgrader_meta(f"cell-{index:03d}", locked=True)}
            new.id = f"{stem}-cell-{index:03d}"
            cells.append(new)
            continue
        split = ends[-1] + 1
        solution_src = "\n".join(lines[:split])
        test_src = "\n".join(lines[split:]).strip("\n")
        ex_id = _CHECK_CALL.search(test_src).group(2)
        slug = ex_id.replace(".", "-")
        solution = nbformat.v4.new_code_cell(solution_src)
        solution.metadata = {"nbgrader": _nbgrader_meta(f"ex-{slug}", solution=True)}
        solution.id = f"{stem}-ex-{slug}"
        test = nbformat.v4.new_code_cell(test_src)
        test.metadata = {"nbgrader": _nbgrader_meta(f"ex-{slug}-check", grade=True, locked=True, points=1)}
        test.id = f"{stem}-ex-{slug}-check"
        cells.extend([solution, test])
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                    "language_info": {"name": "python"}}
    nbformat.validate(out)
    return out


_NBGRADER_CONFIG = '''\
# nbgrader configuration for the course, written by `python -m course_lib.exercises nbgrader`.
# Run nbgrader from this folder (`make release`, `make collect`, `make autograde`, `make feedback`
# from the repository do): see docs/instructors.md.
import os
import warnings

c = get_config()  # noqa: F821 (provided by nbgrader when it reads this file)

# This folder is the course: the gradebook (gradebook.db), source/, release/, submitted/... live here.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "{course_id}"
c.CourseDirectory.source_directory = "source"
# Lessons measure the machine they run on for about a second; allow slow shared servers.
c.Execute.timeout = 300
# The kernel's own start-up warnings (transport encryption) are noise in a grading log.
c.Execute.extra_arguments = ["--IPKernelApp.log_level=ERROR"]
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}

# nbgrader's gradebook uses SQLAlchemy in ways SQLAlchemy 2 warns about (SAWarning on every
# autograde); the warnings say nothing about the submissions.
try:
    from sqlalchemy.exc import SAWarning
except ImportError:
    pass
else:
    warnings.filterwarnings("ignore", category=SAWarning)
'''


def build_nbgrader(dest, root=None, lessons=None, out=print) -> list[Path]:
    """Write an nbgrader course source under ``dest``: source/<lesson>/<lesson>.ipynb each.

    ``lessons`` limits it to some solution stems (for example ``["04_roofline"]``).
    """
    import nbformat

    root = check_path("root", root) if root is not None else _default_root()
    dest = check_path("dest", dest)
    out = check_callable("out", out)
    if dest.exists() and not dest.is_dir():
        raise NotADirectoryError(f"dest {str(dest)!r} is a file, not a folder")
    if not (root / "solutions").is_dir():
        raise FileNotFoundError(f"root: no solutions/ folder under {root}")
    files = _lesson_files(root / "solutions")
    if lessons is not None:
        wanted = check_sequence("lessons", lessons, scalar_ok=False)
        if not all(isinstance(w, str) for w in wanted):
            raise TypeError(f"lessons must list solution stems such as '04_roofline', got {lessons!r}")
        wanted = set(wanted)
        unknown = wanted - {p.stem for p in files}
        if unknown:
            raise ValueError(f"no solutions for {sorted(unknown)}; have {[p.stem for p in files]}")
        files = [p for p in files if p.stem in wanted]
    if not files:
        raise FileNotFoundError(f"root: no solution files under {root / 'solutions'}")
    written = []
    for path in files:
        nb = _nbgrader_notebook(path)
        target = dest / "source" / path.stem / f"{path.stem}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(target, nbformat.writes(nb).encode("utf-8"))
        written.append(target)
        out(f"wrote {target}")
    config = dest / "nbgrader_config.py"
    config.write_text(_NBGRADER_CONFIG.format(course_id=COURSE_ID), encoding="utf-8")
    written.append(config)
    out(f"wrote {config}")
    return written


