"""Issue 26's round of wrong answers, kept as regression tests: each mistake, computed as the
learner made it, must be rejected, and the ones the feedback named must stay named."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise

_spec = importlib.util.spec_from_file_location("wrong_answers_round_26",
                                               Path(__file__).with_name("wrong_answers_round_26.py"))
ROUND = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ROUND)


@pytest.fixture(autouse=True)
def _no_identity(monkeypatch, tmp_path):
    for name in ("COURSE_LEARNER_ID", "NBGRADER_STUDENT_ID", "JUPYTERHUB_USER", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_HOME", str(tmp_path / "course_home"))


@pytest.mark.parametrize("index", [i for i in range(len(ROUND.R)) if i not in ROUND.RIGHT_BY_LUCK])
def test_each_wrong_answer_of_the_round_is_rejected_and_named(index):
    exercise_id, mistake, compute = ROUND.R[index]
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(compute(), None)
    if index in ROUND.NAMED:
        assert ROUND.NAMED[index] in str(info.value), (exercise_id, mistake)


def test_the_round_names_at_least_nine_in_ten():
    wrong = [i for i in range(len(ROUND.R)) if i not in ROUND.RIGHT_BY_LUCK]
    assert len(wrong) >= 40 and len([i for i in wrong if i in ROUND.NAMED]) >= 0.9 * len(wrong)
