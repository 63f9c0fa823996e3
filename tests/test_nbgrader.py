"""The classroom path: an nbgrader course source generated from solutions/, graded by real nbgrader.

``generate_assignment`` must accept the source; ``autograde`` must give the solution, submitted
as a student's work, full marks, and the untouched released notebook zero. One lesson, and nbgrader
run in this process (tests/nbgrader_inprocess.py), keep it to a few seconds. Skipped only when
nbgrader is not installed (``pip install -e .[classroom]``).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from course_lib.exercises import BEGIN, END, build_nbgrader, find_regions

from nbgrader_inprocess import in_process_alembic, nbgrader_api as course_api, run

# nbgrader is imported by the tests that use it: its import (its server extensions, Jupyter Server)
# takes seconds, which collection would otherwise pay in every pytest worker.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("nbgrader") is None,
                                reason="nbgrader is not installed (pip install -e .[classroom])")

REPO = Path(__file__).resolve().parent.parent
LESSON = "04_roofline"


def quiet(*args, **kwargs):
    pass


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("classroom")
    build_nbgrader(course, REPO, lessons=[LESSON], out=quiet)
    return course


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_source_notebook_splits_each_exercise_into_solution_and_graded_check(course):
    cells = _cells(course / "source" / LESSON / f"{LESSON}.ipynb")
    meta = [c["metadata"]["nbgrader"] for c in cells]
    assert all(m["schema_version"] == 3 for m in meta)
    ids = [c["id"] for c in cells]
    assert len(ids) == len(set(ids))
    assert len({m["grade_id"] for m in meta}) == len(meta)
    regions = find_regions((REPO / "solutions" / f"{LESSON}.py").read_text(encoding="utf-8"))
    solutions = [c for c, m in zip(cells, meta) if m["solution"]]
    graded = [c for c, m in zip(cells, meta) if m["grade"]]
    assert len(solutions) == len(graded) == len({r.exercise_id for r in regions})
    for cell in solutions:
        assert BEGIN in "".join(cell["source"]) and END in "".join(cell["source"])
        assert not cell["metadata"]["nbgrader"]["locked"] and not cell["metadata"]["nbgrader"]["grade"]
    for cell, region_id in zip(graded, [r.exercise_id for r in regions]):
        m = cell["metadata"]["nbgrader"]
        assert m["points"] == 1 and m["locked"] and not m["solution"]
        assert f'check("{region_id}"' in "".join(cell["source"]) or f"check('{region_id}'" in "".join(cell["source"])
    others = [m for m in meta if not m["grade"] and not m["solution"]]
    assert others and all(m["locked"] for m in others)
    assert (course / "nbgrader_config.py").exists()


def test_nbgrader_grades_the_solution_full_and_the_untouched_exercise_zero(course):
    api = course_api(course)
    with in_process_alembic():
        run(api.generate_assignment(LESSON, force=True), "generate_assignment")
    released = course / "release" / LESSON / f"{LESSON}.ipynb"
    assert BEGIN not in released.read_text(encoding="utf-8")
    for student, notebook in (("solver", course / "source" / LESSON / f"{LESSON}.ipynb"),
                              ("idle", released)):
        folder = course / "submitted" / student / LESSON
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, folder / f"{LESSON}.ipynb")
    with in_process_alembic():
        for student in ("solver", "idle"):
            run(api.autograde(LESSON, student, force=True), f"autograde {student}")
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        solver = gradebook.find_submission(LESSON, "solver")
        idle = gradebook.find_submission(LESSON, "idle")
        assert solver.max_score >= 3
        assert solver.score == solver.max_score
        assert idle.score == 0


def test_classroom_command_refuses_a_file_and_unknown_lessons(tmp_path):
    target = tmp_path / "classroom"
    target.write_text("keep me\n")
    with pytest.raises(NotADirectoryError):
        build_nbgrader(target, REPO, out=quiet)
    assert target.read_text() == "keep me\n"
    with pytest.raises(ValueError, match="99_nothing"):
        build_nbgrader(tmp_path / "c", REPO, lessons=["99_nothing"], out=quiet)
