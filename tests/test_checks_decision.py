"""DecisionExercise: a design exercise that accepts any decision its judge finds valid."""

import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.types import ValueExercise
from course_lib.exercises.decision import DecisionExercise


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


# --- OptimumExercise: the largest (or smallest) design that meets the constraints --------------

from course_lib.exercises.registry import get_exercise, list_exercises
from course_lib.exercises.variants import _params  # noqa: E402
from course_lib.exercises.decision import OptimumExercise  # noqa: E402


def _under_100_us(b):
    t_us = 7.3 * b + 11
    return None if t_us <= 100 else f"b = {b} takes {t_us:.1f} us, over the 100 us target"


def make_optimum(**kw):
    args = dict(id="99.2", expected=lambda: 12, feasible=_under_100_us, form="an integer",
                hints=("time grows with b",))
    args.update(kw)
    return OptimumExercise(**args)


def test_the_optimum_passes_a_neighbour_is_told_which_way_and_why():
    ex = make_optimum()
    assert "correct" in ex.check(12)
    with pytest.raises(ExerciseError, match=r"b = 13 takes 105\.9 us, over the 100 us target"):
        ex.check(13)
    with pytest.raises(ExerciseError, match="not the largest.*a larger one") as err:
        ex.check(11)
    assert "12" not in str(err.value)       # the feedback never prints the answer
    with pytest.raises(ExerciseError, match="whole number"):
        ex.check(11.5)
    with pytest.raises(ExerciseError, match="multiple of 4"):
        make_optimum(step=4).check(13)
    with pytest.raises(ValueError, match="goal"):
        make_optimum(goal="best")
    with pytest.raises(TypeError, match="feasible"):
        make_optimum(feasible=None)


_OPTIMA = [i for i in list_exercises() if isinstance(get_exercise(i), OptimumExercise)]


@pytest.mark.parametrize("exercise_id", _OPTIMA)
def test_each_course_optimum_is_feasible_and_one_step_further_is_not(exercise_id):
    ex = get_exercise(exercise_id)
    params = _params(ex, None)
    want = ex.answer(None)
    assert ex.feasible(want, **params) is None, f"{exercise_id}: the expected optimum breaks a constraint"
    beyond = want + (ex.step if ex.goal == "largest" else -ex.step)
    assert ex.feasible(beyond, **params), f"{exercise_id}: {beyond} is feasible too, so {want} is not the {ex.goal}"
    with pytest.raises(ExerciseError, match="does not meet the constraints"):
        ex.check(beyond, None)
    short = want - (ex.step if ex.goal == "largest" else -ex.step)
    if short > 0:
        with pytest.raises(ExerciseError):
            ex.check(short, None)
