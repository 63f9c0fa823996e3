"""Issue 26's probe round (tests/wrong_answers_round_26p.py: the auditor's own, written before the audit), kept as regression
tests: each mistake, computed as the learner made it (with the learner's own variant where it
names one), is rejected and named by the misconception the round records for it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROUND = _load("wrong_answers_round_26p")
WRONG = [i for i in range(len(ROUND.R)) if i not in ROUND.RIGHT_BY_LUCK]


pytestmark = pytest.mark.usefixtures("anonymous_learner")


@pytest.mark.parametrize("index", WRONG)
def test_each_wrong_answer_of_the_third_round_is_rejected_and_named(index):
    exercise_id, mistake, compute, learner = ROUND.R[index]
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(compute(), learner)
    assert f"[misconception: {ROUND.NAMED[index]}]" in str(info.value), (exercise_id, mistake)


@pytest.mark.parametrize("index", sorted(ROUND.RIGHT_BY_LUCK))
def test_the_mistakes_that_give_the_answer_are_accepted(index):
    exercise_id, mistake, compute, learner = ROUND.R[index]
    assert get_exercise(exercise_id).check(compute(), learner).startswith(f"{exercise_id}: correct")


def test_the_round_is_recorded_whole():
    assert len(ROUND.R) >= 20 and set(ROUND.NAMED) == set(WRONG)
    assert ROUND.NAMED_BEFORE <= set(WRONG)
