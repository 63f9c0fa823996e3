"""DecisionExercise: a design exercise that accepts any decision its judge finds valid."""

import pytest

from course_lib.checks import ExerciseError, ValueExercise
from course_lib.exercise_checks._decision import DecisionExercise


def _judge(value):
    if value < 10:
        return f"{value} is below the floor of 10"
    if value > 17:
        return f"{value} is over the ceiling of 17"
    return None


def make(**kw):
    args = dict(id="99.1", expected=lambda: 13, judge=_judge, form="an integer from the valid range",
                hints=("stay between the floor and the ceiling",))
    args.update(kw)
    return DecisionExercise(**args)


def test_every_valid_decision_passes_and_others_fail_with_the_reason():
    ex = make()
    assert isinstance(ex, ValueExercise)
    for v in range(10, 18):
        assert "valid design" in ex.check(v)
    for v, reason in ((9, "below the floor"), (18, "over the ceiling"), (26, "over the ceiling")):
        with pytest.raises(ExerciseError, match=reason):
            ex.check(v)


def test_a_fraction_is_refused_when_a_whole_number_is_asked():
    with pytest.raises(ExerciseError, match="whole number"):
        make().check(12.5)
    assert "valid design" in make(integer=False).check(12.5)


def test_bad_answers_and_definitions():
    with pytest.raises((TypeError, ValueError)):
        make().check("twelve")
    with pytest.raises(TypeError, match="judge"):
        make(judge=None)
