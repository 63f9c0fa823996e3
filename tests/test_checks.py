"""Tests of course_lib.checks: right answers pass, wrong ones fail with a useful message.

A failing message must quote the learner's value and the expected form, and must never contain
the expected value. Function exercises must catch implementations that are right only on
symmetric or block-divisible inputs.
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib import checks
from course_lib.checks import (ChoiceExercise, ExerciseError, FunctionExercise, ValueExercise,
                               check, get_exercise, hint, list_exercises)
from course_lib.hardware import get_accelerator

RNG = np.random.default_rng(20240604)
EXPECTED = float(RNG.uniform(100, 900))          # an answer no test types in
HINTS = ("think about the units", "divide the two rates", "use the catalog")


def _spellings(value: float) -> list[str]:
    """Ways an expected value could leak into a message."""
    return [f"{value:.6g}", f"{value:.4g}", f"{value:.10g}", f"{value:.1f}", f"{value:.2f}", repr(value)]


def value_exercise(**kw) -> ValueExercise:
    args = dict(expected=lambda: EXPECTED, rel_tol=1e-3, form="a float: FLOP per byte", hints=HINTS)
    args.update(kw)
    return ValueExercise("99.1", **args)


# --------------------------------------------------------------------------------------------
# ValueExercise
# --------------------------------------------------------------------------------------------

def test_value_accepts_within_tolerance_and_prints_one_line():
    ex = value_exercise()
    message = ex.check(EXPECTED * (1 + 5e-4))
    assert "99.1" in message and "\n" not in message
    assert "correct" in message


def test_value_rejection_quotes_learner_value_form_and_first_hint_but_not_the_answer():
    ex = value_exercise()
    wrong = EXPECTED * 1.37
    with pytest.raises(ExerciseError) as info:
        ex.check(wrong)
    text = str(info.value)
    assert f"{wrong:.10g}" in text
    assert "a float: FLOP per byte" in text
    assert HINTS[0] in text and HINTS[1] not in text
    for spelling in _spellings(EXPECTED):
        assert spelling not in text


def test_exercise_error_is_an_assertion_error_so_graders_count_it_as_failed():
    assert issubclass(ExerciseError, AssertionError)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=-0.95, max_value=3.0))
def test_value_accepts_exactly_the_answers_inside_the_tolerance(relative_error):
    ex = value_exercise(rel_tol=0.01)
    answer = EXPECTED * (1 + relative_error)
    inside = abs(answer - EXPECTED) <= 0.01 * EXPECTED
    if inside:
        ex.check(answer)
    else:
        with pytest.raises(ExerciseError):
            ex.check(answer)


def test_value_abs_tol_accepts_near_zero():
    ex = ValueExercise("99.2", expected=lambda: 0.0, rel_tol=0.0, abs_tol=1e-9, form="a float", hints=HINTS)
    ex.check(5e-10)
    with pytest.raises(ExerciseError):
        ex.check(2e-9)


def test_value_accepts_numpy_scalars_and_size_one_arrays():
    ex = value_exercise()
    ex.check(np.float32(EXPECTED))
    ex.check(np.array(EXPECTED))
    ex.check(np.array([EXPECTED]))


@pytest.mark.parametrize("answer, error", [
    ("295.4", TypeError), (None, TypeError), (True, TypeError), (1 + 2j, TypeError),
    ([1.0, 2.0], ValueError), (np.ones((2, 3)), ValueError),
])
def test_value_wrong_type_or_shape_names_the_expected_form(answer, error):
    with pytest.raises(error, match="FLOP per byte"):
        value_exercise().check(answer)


def test_value_nan_and_infinity_are_refused_clearly():
    with pytest.raises(ValueError, match="NaN"):
        value_exercise().check(float("nan"))
    with pytest.raises(ValueError, match="infinite"):
        value_exercise().check(-math.inf)


def test_value_unit_slip_is_named_without_the_answer():
    with pytest.raises(ExerciseError, match="check the units") as info:
        value_exercise().check(EXPECTED * 1e6)
    for spelling in _spellings(EXPECTED):
        assert spelling not in str(info.value)


def test_array_value_exercise_checks_shape_and_names_the_first_wrong_entry():
    want = RNG.uniform(1, 10, size=(3, 5))
    ex = ValueExercise("99.3", expected=lambda: want, rel_tol=1e-6, form="a 3 x 5 array of seconds", hints=HINTS)
    ex.check(want.copy())
    with pytest.raises(ValueError, match=r"\(3, 5\)"):
        ex.check(want.T)
    bad = want.copy()
    bad[2, 4] *= 1.5
    with pytest.raises(ExerciseError, match=r"1 of 15 entries.*\(2, 4\)") as info:
        ex.check(bad)
    assert f"{want[2, 4]:.6g}" not in str(info.value)
    nan = want.copy()
    nan[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ex.check(nan)


# --------------------------------------------------------------------------------------------
# ChoiceExercise
# --------------------------------------------------------------------------------------------

def choice_exercise() -> ChoiceExercise:
    return ChoiceExercise("99.4", expected=lambda: "memory", choices=("memory", "compute"),
                          form="'memory' or 'compute'", hints=HINTS)


def test_choice_ignores_case_and_spaces():
    choice_exercise().check("  Memory ")


def test_choice_wrong_answer_quotes_it():
    with pytest.raises(ExerciseError, match="'compute'"):
        choice_exercise().check("compute")


def test_choice_outside_the_choices_or_not_a_string():
    with pytest.raises(ValueError, match="one of"):
        choice_exercise().check("bandwidth")
    with pytest.raises(TypeError, match="string"):
        choice_exercise().check(1)
    with pytest.raises(TypeError, match="None"):
        choice_exercise().check(None)


# --------------------------------------------------------------------------------------------
# FunctionExercise
# --------------------------------------------------------------------------------------------

def intensity(m, k, n, bytes_per_element=2):
    return 2 * m * k * n / (bytes_per_element * (m * k + k * n + m * n))


def intensity_cases(rng):
    out = []
    for _ in range(8):
        m, k, n = (int(rng.integers(1, 3000)) | 1 for _ in range(3))
        out.append(((m, k, n), {"bytes_per_element": float(rng.choice([1.0, 2.0, 4.0]))}))
    return out


def function_exercise() -> FunctionExercise:
    return FunctionExercise("99.5", reference=intensity, make_cases=intensity_cases, rel_tol=1e-9,
                            form="a function f(m, k, n, bytes_per_element) -> FLOP per byte", hints=HINTS)


def test_function_accepts_an_equivalent_implementation():
    def mine(m, k, n, bytes_per_element=2):
        return (m * k * n) / ((m * k + k * n + m * n) * bytes_per_element / 2)
    assert "8 test inputs" in function_exercise().check(mine)


def test_function_catches_a_bug_that_symmetric_shapes_hide():
    def wrong(m, k, n, bytes_per_element=2):          # k*k instead of k*n: right whenever k == n
        return 2 * m * k * n / (bytes_per_element * (m * k + k * k + m * n))
    assert wrong(77, 300, 300) == intensity(77, 300, 300)
    with pytest.raises(ExerciseError, match=r"wrong\(\d+, \d+, \d+, bytes_per_element=") as info:
        function_exercise().check(wrong)
    args, kwargs = function_exercise().cases()[0]
    assert f"{wrong(*args, **kwargs):.10g}" in str(info.value)
    assert f"{intensity(*args, **kwargs):.10g}" not in str(info.value)


def test_function_catches_a_bug_that_block_divisible_sizes_hide():
    def padded(m, k, n, bytes_per_element=2):         # pads every size up to a 16-wide tile
        m, k, n = (-(-x // 16) * 16 for x in (m, k, n))
        return intensity(m, k, n, bytes_per_element)
    assert padded(64, 128, 48) == intensity(64, 128, 48)
    with pytest.raises(ExerciseError):
        function_exercise().check(padded)


def test_function_cases_are_reproducible_random_and_asymmetric():
    cases = function_exercise().cases()
    assert cases == function_exercise().cases()
    assert len({args for args, _ in cases}) == len(cases)
    assert any(len(set(args)) == 3 for args, _ in cases)
    assert all(x % 2 == 1 for args, _ in cases for x in args)


def test_function_stub_raises_not_implemented_unchanged():
    def stub(m, k, n, bytes_per_element=2):
        raise NotImplementedError("exercise 99.5: write it")
    with pytest.raises(NotImplementedError, match="99.5"):
        function_exercise().check(stub)


def test_function_that_raises_is_reported_with_its_input():
    def broken(m, k, n):                               # forgot the keyword argument
        return 1.0
    with pytest.raises(ExerciseError, match="raised TypeError.*broken\\("):
        function_exercise().check(broken)


def test_function_returning_the_wrong_type_or_shape_fails():
    with pytest.raises(ExerciseError, match="expected a number"):
        function_exercise().check(lambda m, k, n, bytes_per_element=2: "fast")
    arr_ex = FunctionExercise("99.6", reference=lambda x: np.minimum(x, 3.0),
                              make_cases=lambda rng: [((rng.uniform(0, 6, size=37),), {})],
                              form="f(x) -> array", hints=HINTS)
    arr_ex.check(lambda x: np.clip(x, None, 3.0))
    with pytest.raises(ExerciseError, match="shape"):
        arr_ex.check(lambda x: np.minimum(x, 3.0)[:-1])
    with pytest.raises(ExerciseError, match="first wrong entry"):
        arr_ex.check(lambda x: np.minimum(x, 3.0001))


def test_function_answer_must_be_callable():
    with pytest.raises(TypeError, match="expects a function"):
        function_exercise().check(3.0)


def test_function_does_not_let_the_learner_mutate_the_cases():
    def mutating(x):
        result = np.minimum(x, 3.0)
        x[:] = 0.0
        return result
    ex = FunctionExercise("99.7", reference=lambda x: np.minimum(x, 3.0),
                          make_cases=lambda rng: [((rng.uniform(0, 6, size=11),), {})] * 2,
                          form="f(x)", hints=HINTS)
    ex.check(mutating)


# --------------------------------------------------------------------------------------------
# Constructing exercises
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, error", [
    (lambda: ValueExercise("4.1", expected=lambda: 1.0), ValueError),
    (lambda: ValueExercise("04.1", expected=3.0), TypeError),
    (lambda: ValueExercise("04.1", expected=lambda: 1.0, rel_tol=-1), ValueError),
    (lambda: ValueExercise("04.1", expected=lambda: 1.0, hints=("", )), TypeError),
    (lambda: ChoiceExercise("04.1", expected=lambda: "a", choices=("a",)), ValueError),
    (lambda: ChoiceExercise("04.1", expected=lambda: "a", choices=("a", "A")), ValueError),
    (lambda: FunctionExercise("04.1", reference=1, make_cases=lambda rng: []), TypeError),
])
def test_bad_exercise_definitions_are_refused(make, error):
    with pytest.raises(error):
        make()


def test_a_lesson_module_may_only_register_its_own_ids(monkeypatch):
    fake = types.ModuleType("course_lib.exercise_checks.ex_98")
    fake.EXERCISES = [value_exercise()]                # id 99.1 in module ex_98
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    checks._load_module.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="ex_99"):
            checks._load_module("ex_98")
    finally:
        checks._load_module.cache_clear()


# --------------------------------------------------------------------------------------------
# The registry, check() and hint()
# --------------------------------------------------------------------------------------------

def test_registry_holds_lesson_04():
    ids = list_exercises()
    assert {"04.1", "04.2", "04.3", "04.4", "04.5"} <= set(ids)
    assert ids == sorted(ids, key=lambda i: (int(i[:2]), int("".join(c for c in i[3:] if c.isdigit()))))


def test_lesson_04_accepts_answers_computed_independently(capsys):
    b200, h200, h100 = (get_accelerator(n) for n in ("B200", "H200", "H100 SXM"))
    # 04.1: S = QK^T, 4096 x 128 x 4096 in 2-byte elements, against the B200's balance.
    f, q = 2 * 4096 * 128 * 4096, 2 * (2 * 4096 * 128 + 4096 * 4096)
    check("04.1", "memory" if f / q < b200.peak("bf16") / b200.mem_bandwidth else "compute")
    # 04.2: a GEMV moves about its weight matrix once; the FLOP term is far smaller.
    weights_bytes = 2 * 8192 * 8192
    t_us = (weights_bytes + 2 * 2 * 8192) / h200.mem_bandwidth * 1e6
    check("04.2", t_us)
    # 04.3: closed form, m * k * n / (m k + k n + m n) >= I*, solved for m with k = n = 8192.
    ridge, k = h100.peak("bf16") / h100.mem_bandwidth, 8192
    check("04.3", math.ceil(ridge * k / (k - 2 * ridge)))
    check("04.4", intensity)
    check("04.5", lambda i, p, b: np.minimum(p, b * np.asarray(i)))
    lines = capsys.readouterr().out.strip().split("\n")
    assert len(lines) == 5 and all("correct" in line for line in lines)


def test_unknown_id_suggests_close_ids():
    with pytest.raises(ValueError, match=r"unknown exercise id '04\.9'.*'04\.1'"):
        check("04.9", 1.0)
    with pytest.raises(ValueError, match="look like"):
        check("four point one", 1.0)
    with pytest.raises(TypeError, match="string"):
        check(4.1, 1.0)


def test_hints_reveal_progressively_and_stop_at_the_last():
    ex = get_exercise("04.2")
    shown = [hint("04.2", level) for level in range(1, len(ex.hints) + 1)]
    for level, text in enumerate(shown, start=1):
        assert ex.hints[level - 1] in text
        assert f"{level}/{len(ex.hints)}" in text
    beyond = hint("04.2", len(ex.hints) + 3)
    assert ex.hints[-1] in beyond and "last" in beyond
    assert hint("04.2") == shown[0]
    with pytest.raises(ValueError, match="level"):
        hint("04.2", 0)
    with pytest.raises(TypeError, match="level"):
        hint("04.2", "2")


# --------------------------------------------------------------------------------------------
# Every registered exercise, whichever lesson registered it
# --------------------------------------------------------------------------------------------

ALL_IDS = list_exercises()


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_every_registered_exercise_is_well_formed(exercise_id):
    ex = get_exercise(exercise_id)
    assert ex.form.strip(), f"{exercise_id}: state the form of the answer"
    assert ex.hints, f"{exercise_id}: give at least one hint"
    if isinstance(ex, ChoiceExercise):
        assert ex.expected() in ex.choices
    elif isinstance(ex, ValueExercise):
        want = np.asarray(ex.expected(), dtype=float)
        assert np.all(np.isfinite(want))
        assert ex.check(ex.expected())
        if want.ndim == 0 and abs(float(want)) >= 10:      # hints must not state the answer
            for text in (*ex.hints, ex.form):
                for spelling in _spellings(float(want)):
                    assert spelling not in text, f"{exercise_id}: a hint states the answer"
    else:
        cases = ex.cases()
        assert len(cases) >= 3, f"{exercise_id}: check a function on at least three inputs"
        assert ex.check(ex.reference)
