"""The mastery map: what a learner, or a class, knows, concept by concept.

Every exercise is tagged with the concepts it exercises (``concepts=`` in
``course_lib/exercises/lessons/ex_NN.py``, from the fixed list per lesson in
``course_lib.exercises.lessons.CONCEPTS``). From per-exercise statuses this module counts, per
concept, the exercises (or, for a class, the students) that passed, were attempted and failed,
or were not attempted.

    python -m course_lib.exercises mastery my_work                 # a learner: runs progress, prints the map
    python -m course_lib.exercises mastery --gradebook gradebook.db   # an instructor: the class

For a class the statuses come from nbgrader's ``gradebook.db`` (read with sqlite, so nbgrader
and its ``alembic`` need not be on the PATH): one graded check cell per exercise, named
``ex-NN-k-check``. When the autograded notebooks sit next to the gradebook
(``autograded/<student>/<assignment>/*.ipynb``, nbgrader's layout) they also tell an untouched
exercise from a wrong one, and which misconceptions the wrong answers matched (the checks write
``[misconception: key]`` into their feedback). A learner's own misconceptions come from the log
the checks keep, ``~/.course/misconceptions.jsonl``.

Computing only: the figure is ``course_lib.exercises.mastery_plot.plot_mastery``.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from course_lib._validate import check_instance, check_int, check_sequence
from course_lib.exercises.lessons import CONCEPTS
from course_lib.exercises.registry import get_exercise, list_exercises

__all__ = ["ConceptMastery", "ClassMastery", "exercise_concepts", "concept_mastery", "concept_table",
           "gradebook_statuses", "class_mastery", "class_table", "logged_misconceptions", "STATES"]

#: The three states, in the order tables and figures show them.
STATES = ("passed", "attempted", "not attempted")
_STATUS_OF = {"pass": "passed", "passed": "passed", "fail": "attempted", "failed": "attempted",
              "attempted": "attempted", "not attempted": "not attempted",
              # progress's statuses for a notebook it could not finish: the exercise whose cell was
              # running was attempted; those after it never ran
              "timed out": "attempted", "crashed": "attempted", "unreadable": "attempted",
              "not run": "not attempted"}
_GRADE_ID = re.compile(r"^ex-(\d{2})-(\d+[a-z]?)-check$")
_MISCONCEPTION = re.compile(r"\[misconception: ([a-z0-9]+(?:-[a-z0-9]+)*)\]")


@dataclass(frozen=True)
class ConceptMastery:
    """One concept of one lesson: how many exercises (``unit='exercises'``) or students
    (``unit='students'``) passed, attempted without passing, or did not attempt it."""

    lesson: str
    concept: str
    description: str
    exercises: tuple
    passed: int
    attempted: int
    not_attempted: int
    unit: str = "exercises"

    @property
    def total(self) -> int:
        return self.passed + self.attempted + self.not_attempted

    @property
    def state(self) -> str:
        """'mastered' (all passed), 'in progress' (something tried) or 'not started'."""
        if self.total and self.passed == self.total:
            return "mastered"
        return "in progress" if self.passed or self.attempted else "not started"


@dataclass(frozen=True)
class ClassMastery:
    """A class's map: per concept, students by state; per student, exercise statuses; and the
    misconceptions the class's wrong answers matched, most frequent first."""

    concepts: tuple
    students: dict
    misconceptions: tuple


def _concepts_table() -> dict:
    return CONCEPTS


def exercise_concepts() -> dict:
    """``{exercise id: concepts}`` for every registered exercise."""
    return {i: tuple(get_exercise(i).concepts) for i in list_exercises()}


def _normalise(statuses) -> dict:
    """``{id: 'passed' | 'attempted' | 'not attempted'}`` from a mapping or from objects with
    ``exercise_id`` and ``status`` (``course_lib.exercises.progress``'s result)."""
    if not isinstance(statuses, (dict, list, tuple)):
        raise TypeError(f"statuses must be a dict {{exercise id: status}} or progress's list, "
                        f"got {type(statuses).__name__} {statuses!r}")
    items = statuses.items() if isinstance(statuses, dict) else \
        ((getattr(s, "exercise_id", None), getattr(s, "status", None)) for s in statuses)
    out = {}
    for ex_id, status in items:
        if not isinstance(ex_id, str) or status not in _STATUS_OF:
            raise ValueError(f"statuses must map exercise ids to one of {sorted(_STATUS_OF)}; "
                             f"got {ex_id!r}: {status!r}")
        out[ex_id] = _STATUS_OF[status]
    return out


def _lessons_of(ids) -> list:
    return sorted({i.split(".")[0] for i in ids})


def concept_mastery(statuses, lessons=None) -> list[ConceptMastery]:
    """Per concept, the learner's exercises passed / attempted / not attempted.

    ``statuses``: ``{exercise id: 'pass' | 'fail' | 'not attempted'}`` or ``progress``'s list.
    ``lessons``: the lessons to show (default: those the statuses mention); an exercise of those
    lessons missing from ``statuses`` counts as not attempted.
    """
    states = _normalise(statuses)
    tags = exercise_concepts()
    table = _concepts_table()
    if lessons is None:
        lessons = _lessons_of(states)
    else:
        lessons = check_sequence("lessons", [lessons] if isinstance(lessons, str) else lessons, max_len=100)
        lessons = [str(lesson).zfill(2) for lesson in lessons]
        unknown = [lesson for lesson in lessons if lesson not in table]
        if unknown:
            raise ValueError(f"lessons {unknown} have no concepts; known lessons: {sorted(table)}")
    rows = []
    for lesson in lessons:
        for concept, description in table.get(lesson, {}).items():
            ids = tuple(i for i, c in tags.items() if i.startswith(lesson + ".") and concept in c)
            counts = Counter(states.get(i, "not attempted") for i in ids)
            rows.append(ConceptMastery(lesson, concept, description, ids, counts["passed"],
                                       counts["attempted"], counts["not attempted"]))
    return rows


def concept_table(statuses_or_rows, lessons=None) -> str:
    """The concept table as text: one line per concept with its counts and state."""
    if not isinstance(statuses_or_rows, (dict, list, tuple)):
        raise TypeError(f"statuses_or_rows must be a dict {{exercise id: status}}, progress's list or "
                        f"concept_mastery's rows, got {type(statuses_or_rows).__name__} {statuses_or_rows!r}")
    rows = list(statuses_or_rows.items()) if isinstance(statuses_or_rows, dict) else list(statuses_or_rows)
    if not rows or not isinstance(rows[0], ConceptMastery):
        rows = concept_mastery(dict(rows) if isinstance(statuses_or_rows, dict) else rows, lessons)
    if not rows:
        return "no concepts to show"
    unit = rows[0].unit
    width = max(len(f"{r.lesson} {r.concept}") for r in rows)
    lines = [f"{'concept':{width}s}  passed  attempted  not attempted  ({unit})"]
    for r in rows:
        mark = {"mastered": "\u2713", "in progress": "~", "not started": " "}[r.state]
        lines.append(f"{r.lesson + ' ' + r.concept:{width}s}  {r.passed:6d}  {r.attempted:9d}  "
                     f"{r.not_attempted:13d}  {mark} {r.description}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# A class, from nbgrader's gradebook
# --------------------------------------------------------------------------------------------

_GRADES_SQL = """
SELECT sa.student_id, a.name, n.name, bc.name, g.auto_score, g.manual_score, gc.max_score
FROM grade g
JOIN submitted_notebook sn ON g.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN notebook n ON sn.notebook_id = n.id
JOIN base_cell bc ON g.cell_id = bc.id
JOIN grade_cells gc ON gc.id = bc.id
"""


def _autograded_notebook(course_dir: Path, student: str, assignment: str, notebook: str):
    path = course_dir / "autograded" / student / assignment / f"{notebook}.ipynb"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _cell_errors(nb, grade_ids) -> list:
    errors = []
    for cell in (nb or {}).get("cells", []):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in grade_ids:
            errors += [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    return errors


def gradebook_statuses(gradebook, course_dir=None):
    """``({student: {exercise id: status}}, [(student, exercise id, misconception key), ...])``
    from an nbgrader ``gradebook.db`` (and the autograded notebooks in ``course_dir``, default
    the gradebook's folder)."""
    path = Path(gradebook)
    if not path.is_file():
        raise FileNotFoundError(f"no gradebook at {str(path)!r}: pass the gradebook.db of your "
                                f"nbgrader course folder")
    course_dir = Path(course_dir) if course_dir is not None else path.resolve().parent
    try:
        with sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True) as db:
            rows = db.execute(_GRADES_SQL).fetchall()
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{str(path)!r} is not an nbgrader gradebook ({exc})") from None
    students, hits = {}, []
    notebooks = {}
    for student, assignment, notebook, grade_id, auto, manual, max_score in rows:
        match = _GRADE_ID.match(grade_id or "")
        if not match:
            continue                                   # a grade cell this course did not write
        ex_id = f"{match.group(1)}.{match.group(2)}"
        score = manual if manual is not None else auto
        key = (student, assignment, notebook)
        if key not in notebooks:
            notebooks[key] = _autograded_notebook(course_dir, *key)
        slug = grade_id[:-len("-check")]
        errors = _cell_errors(notebooks[key], {slug, grade_id})
        if score is not None and max_score and score >= max_score:
            status = "pass"
        elif score is None or any(e.get("ename") == "NotImplementedError" for e in errors):
            status = "not attempted"
        else:
            status = "fail"
        students.setdefault(student, {})[ex_id] = status
        for error in errors:
            text = "\n".join([error.get("evalue", "")] + list(error.get("traceback", [])))
            for found in dict.fromkeys(_MISCONCEPTION.findall(text)):
                hits.append((student, ex_id, found))
    return students, hits


def class_mastery(gradebook, course_dir=None) -> ClassMastery:
    """Per concept, the students who passed every exercise of it, who attempted it without
    passing all, and who did not attempt it; with the misconceptions hit most."""
    students, hits = gradebook_statuses(gradebook, course_dir)
    lessons = _lessons_of({i for s in students.values() for i in s})
    per_student = {name: {r.concept + "@" + r.lesson: r for r in concept_mastery(statuses, lessons)}
                   for name, statuses in students.items()}
    rows = []
    for row in concept_mastery({}, lessons):
        key = row.concept + "@" + row.lesson
        states = Counter(per_student[name][key].state for name in per_student)
        rows.append(ConceptMastery(row.lesson, row.concept, row.description, row.exercises,
                                   states["mastered"], states["in progress"], states["not started"],
                                   unit="students"))
    counts = Counter(key for _, _, key in hits)
    students_per = {key: len({s for s, _, k in hits if k == key}) for key in counts}
    exercises_per = {key: sorted({e for _, e, k in hits if k == key}) for key in counts}
    top = tuple((key, counts[key], students_per[key], tuple(exercises_per[key]))
                for key, _ in counts.most_common())
    return ClassMastery(tuple(rows), students, top)


def class_table(mastery: ClassMastery, top: int = 10) -> str:
    """The class view as text: the concept table, then the misconceptions hit most."""
    check_instance("mastery", mastery, ClassMastery, "class_mastery")
    top = check_int("top", top, min_value=1, max_value=10_000)
    lines = [f"{len(mastery.students)} students", concept_table(mastery.concepts)]
    if mastery.misconceptions:
        lines.append("misconceptions the class hit most (times, students, exercises):")
        for key, times, students, exercises in mastery.misconceptions[:top]:
            lines.append(f"  {key}: {times} times, {students} students, in {', '.join(exercises)}")
    else:
        lines.append("no misconception recorded (autograded notebooks not found, or none matched)")
    return "\n".join(lines)


def logged_misconceptions(path=None) -> Counter:
    """``Counter({(exercise id, misconception key): times})`` from a learner's log
    (default ``~/.course/misconceptions.jsonl``, or under ``COURSE_HOME``); empty when absent,
    and unreadable lines are skipped."""
    if path is None:
        home = os.environ.get("COURSE_HOME") or os.path.join(os.path.expanduser("~"), ".course")
        path = Path(home) / "misconceptions.jsonl"
    counts = Counter()
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return counts
    for line in lines:
        try:
            record = json.loads(line)
            counts[(str(record["exercise"]), str(record["misconception"]))] += 1
        except (ValueError, KeyError, TypeError):
            continue
    return counts
