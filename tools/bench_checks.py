"""Benchmark of the exercise checks of lessons 01-08 (not a test): how long a learner waits.

For every exercise, the first check of a session (which computes and caches its wrong answers,
replays and searches) and a repeated check of a wrong value, the way a learner tries again. The goal
is a repeated check well under 0.5 s; the tests never time it (the machines are shared).

    python tools/bench_checks.py
"""

from __future__ import annotations

import time

from course_lib.exercises import variants
from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib.exercises.types import FunctionExercise

LESSONS = ("01", "02", "03", "04", "05", "06", "07", "08")
GOAL_REPEATED_S = 0.5


def _ids() -> list[str]:
    import importlib
    return [ex.id for lesson in LESSONS
            for ex in importlib.import_module(f"course_lib.exercises.lessons.ex_{lesson}").EXERCISES]


def _wrong(ex):
    """A value the check rejects: the first listed wrong answer or implementation, else -1 or 'x'."""
    if isinstance(ex, FunctionExercise):
        listed = ex.wrong_implementations() if ex.wrong_implementations else {}
        return next(iter(listed.values()), lambda *a, **k: -1)
    try:
        listed = ex.wrong_answers(**variants._params(ex, None)) if getattr(ex, "wrong_answers", None) else {}
    except TypeError:
        listed = {}
    answer = ex.answer(None)
    return next(iter(listed.values()), "x" if isinstance(answer, str) else -1)


def _timed(ex, value) -> float:
    start = time.perf_counter()
    try:
        ex.check(value, None)
    except (ExerciseError, ValueError, TypeError):
        pass
    return time.perf_counter() - start


def run() -> dict:
    figures = {}
    for exercise_id in _ids():
        ex = get_exercise(exercise_id)
        wrong = _wrong(ex)
        figures[f"check_{exercise_id}_first_s"] = _timed(ex, wrong)
        figures[f"check_{exercise_id}_repeated_s"] = min(_timed(ex, wrong) for _ in range(3))
    repeated = {k: v for k, v in figures.items() if k.endswith("_repeated_s")}
    figures["check_slowest_repeated_s"] = max(repeated.values())
    figures["checks_over_goal"] = sorted(k.split("_")[1] for k, v in repeated.items() if v >= GOAL_REPEATED_S)
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:32s} {value:8.3f}" if isinstance(value, float) else f"{name:32s} {value}")
