"""The registry and the three calls a learner makes: ``check``, ``hint`` and ``variant``.

Every ``course_lib/exercises/lessons/ex_NN.py`` is imported on first use (``importlib``, by name),
so importing this module computes nothing. A wrong answer that matches a misconception is also
appended to a small log, ``~/.course/misconceptions.jsonl`` (``COURSE_HOME`` moves it); a log that
cannot be written is skipped silently: a check never fails because of it.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import json
import numbers
import os
import pkgutil
import re
import time
from pathlib import Path

from course_lib.exercises.feedback import ID_PATTERN, MARK_RIGHT, AnswerTypeError, AnswerValueError, ExerciseError, Misconception, _form_of
from course_lib.exercises.types import EXERCISE_TYPES
from course_lib.exercises.variants import _NO_LEARNER, Variant, _fill, _params, _resolve, learner_identity

__all__ = ["check", "hint", "variant", "get_exercise", "list_exercises", "Hint"]

_CHECKS_PACKAGE = "course_lib.exercises.lessons"


def variant(exercise_id, learner=_NO_LEARNER) -> Variant:
    """Your numbers for a variant exercise: print it in the exercise cell, compute from it.

    ``learner`` overrides the identity (``None``: the course's default numbers).
    """
    ex = get_exercise(exercise_id)
    if getattr(ex, "variants", None) is None:
        raise AnswerValueError(f"exercise {ex.id} has no variants: its numbers are in its statement")
    identity = _resolve(learner)
    params = _params(ex, identity)
    return Variant(ex.id, params, ex.variants.statement.format(**params), identity)


def _log_misconception(ex_id: str, misconception: Misconception, learner) -> None:
    """Append one line to the misconception log; any failure is ignored (a check never fails
    because a log could not be written)."""
    try:
        home = os.environ.get("COURSE_HOME") or os.path.join(os.path.expanduser("~"), ".course")
        path = Path(home) / "misconceptions.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > 1_000_000:      # bounded: keep the newest half
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            path.write_text("\n".join(lines[len(lines) // 2:]) + "\n", encoding="utf-8")
        record = {"time": round(time.time()), "exercise": ex_id, "misconception": misconception.key,
                  "learner": learner or ""}
        if path.exists():                 # the same mistake re-checked (a re-run, `make progress`):
            with open(path, "rb") as handle:                  # once, until something else happens
                handle.seek(max(0, path.stat().st_size - 8192))
                recent = handle.read().decode("utf-8", errors="replace").splitlines()[-50:]
            same = {k: record[k] for k in ("exercise", "misconception", "learner")}
            for line in recent:
                try:
                    old = json.loads(line)
                except ValueError:
                    continue
                if isinstance(old, dict) and all(old.get(k) == v for k, v in same.items()):
                    return
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    except Exception:  # noqa: BLE001 - logging is best effort, never feedback's problem
        pass


# --------------------------------------------------------------------------------------------
# Registry: every course_lib/exercises/lessons/ex_NN.py, imported on first use
# --------------------------------------------------------------------------------------------

def _module_names() -> list[str]:
    package = importlib.import_module(_CHECKS_PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("ex_"))


@functools.lru_cache(maxsize=None)
def _load_module(name: str) -> dict:
    """The exercises one ``ex_NN`` module registers, by id, after checking them."""
    module = importlib.import_module(f"{_CHECKS_PACKAGE}.{name}")
    exercises = getattr(module, "EXERCISES", None)
    if not isinstance(exercises, (list, tuple)):
        raise RuntimeError(f"{module.__name__} must define EXERCISES, a list of exercises")
    lesson = name[3:]
    table = {}
    for ex in exercises:
        if not isinstance(ex, EXERCISE_TYPES):
            raise RuntimeError(f"{module.__name__}: EXERCISES holds a {type(ex).__name__}, not one of "
                               f"{', '.join(t.__name__ for t in EXERCISE_TYPES)}")
        if ex.id.split(".")[0] != lesson:
            raise RuntimeError(f"{module.__name__}: exercise {ex.id} belongs in ex_{ex.id.split('.')[0]}.py")
        if ex.id in table:
            raise RuntimeError(f"{module.__name__}: exercise id {ex.id} is registered twice")
        unknown = set(ex.concepts) - set(_lesson_concepts(lesson))
        if unknown:
            raise RuntimeError(f"{module.__name__}: exercise {ex.id} names concepts {sorted(unknown)} "
                               f"that lesson {lesson} does not list in "
                               f"course_lib.exercises.lessons.CONCEPTS[{lesson!r}]")
        table[ex.id] = ex
    return table


def _lesson_concepts(lesson: str) -> dict:
    package = importlib.import_module(_CHECKS_PACKAGE)
    return getattr(package, "CONCEPTS", {}).get(lesson, {})


def _all_exercises() -> dict:
    table = {}
    for name in _module_names():
        table.update(_load_module(name))
    return table


def get_exercise(exercise_id):
    """The registered exercise with this id; a clear error naming close ids when unknown."""
    if not isinstance(exercise_id, str):
        raise AnswerTypeError(f"exercise_id must be a string such as '04.2', got "
                        f"{type(exercise_id).__name__} {exercise_id!r}")
    key = exercise_id.strip()
    match = ID_PATTERN.match(key)
    if match and f"ex_{match.group(1)}" in _module_names():
        table = _load_module(f"ex_{match.group(1)}")
        if key in table:
            return table[key]
    known = _all_exercises()
    if key in known:
        return known[key]
    close = difflib.get_close_matches(key, list(known), n=4, cutoff=0.5)
    same_lesson = [i for i in known if match and i.startswith(match.group(1) + ".")]
    suggestions = list(dict.fromkeys(close + same_lesson))
    did_you_mean = f" Did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
    if not match:
        did_you_mean = " Ids look like '04.2' (lesson 04, exercise 2)." + did_you_mean
    raise AnswerValueError(f"unknown exercise id {exercise_id!r}.{did_you_mean}")


def list_exercises() -> list[str]:
    """Every registered exercise id, in lesson and exercise order."""
    def order(ex_id):
        lesson, number = ex_id.split(".")
        digits = re.match(r"\d+", number).group()
        return int(lesson), int(digits), number
    return sorted(_all_exercises(), key=order)


# --------------------------------------------------------------------------------------------
# The two calls learners make
# --------------------------------------------------------------------------------------------

def check(exercise_id, answer) -> None:
    """Check ``answer`` for exercise ``exercise_id``: print one line when right, raise otherwise.

    Raises :class:`ExerciseError` for a wrong answer (with your value, the expected form, the
    misconception it matches if any, and a hint), TypeError/ValueError for an answer of the wrong
    type or shape, or NaN, and ValueError for an unknown id. Variant exercises use your numbers
    (:func:`variant`).
    """
    __tracebackhide__ = True  # IPython and pytest hide this frame: the learner's cell is what matters
    identity = learner_identity()
    try:
        message = get_exercise(exercise_id).check(answer, identity)
    except ExerciseError as error:
        if error.misconception is not None and not os.environ.get("NBGRADER_EXECUTION"):
            _log_misconception(error.exercise_id, error.misconception, identity)   # not the grader's home
        raise
    print(f"{MARK_RIGHT} {message}")


class Hint(str):
    """A hint's text; shows without quotes when it is the last value of a notebook cell."""

    def _repr_pretty_(self, printer, cycle):  # IPython's display hook
        printer.text(str(self))


def hint(exercise_id, level=1) -> Hint:
    """Hint number ``level`` (1 = gentlest) for an exercise; past the last, the last one with a note."""
    ex = get_exercise(exercise_id)
    if isinstance(level, bool) or not isinstance(level, numbers.Integral):
        raise TypeError(f"level must be an integer >= 1, got {type(level).__name__} {level!r}")
    level = int(level)
    if level < 1:
        raise ValueError(f"level must be >= 1 (1 is the first hint), got {level}")
    total = len(ex.hints)
    params = _params(ex)
    if total == 0:
        return Hint(f"exercise {ex.id} has no hints; expected: {_form_of(ex, params)}")
    if level > total:
        return Hint(f"hint {total}/{total} for {ex.id} (there is no hint {level}; this is the last): "
                    f"{_fill(ex, ex.hints[-1], params)}")
    more = f"   (hint({ex.id!r}, {level + 1}) for more)" if level < total else ""
    return Hint(f"hint {level}/{total} for {ex.id}: {_fill(ex, ex.hints[level - 1], params)}{more}")
