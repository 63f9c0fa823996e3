"""Wrong answers generated rather than listed (issue 26): the course's default numbers in place of a
learner's own, another chip's row of the catalog, another element width, another precision's peak.
They must name mistakes nobody listed, and never cost a right answer or a listed mistake its name."""

from __future__ import annotations

import pytest

from course_lib.exercises.feedback import ExerciseError, Misconception, _add_generated, _default_variant_answers
from course_lib.exercises.misconceptions import _dtype_widths, _other_accelerators, _peak_precisions, _with_generated
from course_lib.exercises.registry import get_exercise
from course_lib.exercises.variants import _params
from course_lib.hardware import get_accelerator


pytestmark = pytest.mark.usefixtures("anonymous_learner")


def _m(key):
    return Misconception(key, f"The mistake {key}.", "04", "Exercises", "Look again.")


def test_a_generated_value_never_lands_on_the_answer_nor_crowds_a_listed_one_out():
    listed = {_m("a"): 10.0, _m("b"): 10.0}
    generated = {_m("near-answer"): 20.0005, _m("a-more-exactly"): 10.0, _m("third"): 10.0, _m("fourth"): 10.0,
                 _m("elsewhere"): 35.0, _m("not-a-number"): "x"}
    kept = {m.key: v for m, v in _add_generated(listed, generated, 20.0, 1e-6).items()}
    assert list(kept) == ["a", "b", "third", "elsewhere"]     # listed first, three at most for one value,
    # none that only says a listed one more exactly ('a-more-exactly' refines 'a')


def test_the_default_numbers_are_named_for_a_learner_whose_variant_differs():
    ex = get_exercise("04.2")
    assert _default_variant_answers(ex.id, ex.variants, ex.expected, dict(ex.variants.options[0])) == {}
    mine = dict(ex.variants.options[3])                         # the A100 with 5120
    found = {m.key: v for m, v in _default_variant_answers(ex.id, ex.variants, ex.expected, mine).items()}
    assert found["default-numbers-04-2"] == pytest.approx(ex.expected(**ex.variants.options[0]))
    assert found["default-numbers-04-2-hidden"] == pytest.approx(ex.expected(accelerator=mine["accelerator"],
                                                                             hidden=8192))
    learner = next(n for n in ("ada", "bob", "cyd", "dee", "eve") if _params(ex, n) == mine)
    with pytest.raises(ExerciseError) as info:
        ex.check(ex.expected(**ex.variants.options[0]), learner)
    assert "[misconception: default-numbers-04-2]" in str(info.value) and "variant('04.2')" in str(info.value)


def test_chips_that_give_one_value_are_named_together_and_the_own_chip_never():
    found = _other_accelerators(lambda name: get_accelerator(name).peak("bf16"), "H100 SXM", "04", "Exercises")
    keys = {m.key for m in found}
    assert "other-accelerator-h100-sxm" not in keys and not any(k.startswith("other-accelerator-h100-sxm") for k in keys)
    assert "other-accelerator-h200" in keys          # the H200 first: the same BF16 peak as the H100 SXM
    same = [m for m, v in found.items() if v == get_accelerator("H200").peak("bf16")]
    assert len(same) == 1


def test_widths_and_peaks_leave_out_the_tasks_own():
    widths = {m.key: v for m, v in _dtype_widths(lambda b: 100 * b, "04", "Exercises").items()}
    assert widths == {"fp32-bytes": 400, "fp8-width-for-16-bit": 100, "fp64-width-for-16-bit": 800,
                      "int4-width-for-16-bit": 50}
    peaks = {m.key for m in _peak_precisions(lambda p: get_accelerator("H100 SXM").peak(p), "04", "Exercises")}
    assert "peak-fp8-for-bf16" in peaks and not any("bf16-for" in k for k in peaks)


def test_the_generators_refuse_what_is_not_a_function():
    with pytest.raises(TypeError, match="compute"):
        _other_accelerators(None, "H100 SXM", "04", "Exercises")
    with pytest.raises(TypeError, match="section"):
        _peak_precisions(lambda p: 1.0, "04", None)
    with pytest.raises(TypeError, match="expected"):
        _with_generated(lambda: {}, None)


@pytest.mark.parametrize("exercise_id, learner", [("01.2", "cyd"), ("03.2", "gus"), ("04.2", "ada"), ("07.2", "cyd")])
def test_every_variant_exercise_names_the_default_numbers(exercise_id, learner):
    ex = get_exercise(exercise_id)
    assert _params(ex, learner) != ex.variants.options[0]
    with pytest.raises(ExerciseError) as info:
        ex.check(ex.expected(**ex.variants.options[0]), learner)
    assert f"[misconception: default-numbers-{exercise_id.replace('.', '-')}]" in str(info.value)
    assert ex.check(ex.expected(**_params(ex, learner)), learner).startswith(f"{exercise_id}: correct")
