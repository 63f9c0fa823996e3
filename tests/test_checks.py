"""Tests of course_lib.checks: right answers pass, wrong ones fail with a useful message.

A failing message must quote the learner's value and the expected form, and must never contain
the expected value. Function exercises must catch implementations that are right only on
symmetric or block-divisible inputs.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.exercises import feedback, registry, variants
from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import check, get_exercise, hint, list_exercises
from course_lib.exercises.types import (ChoiceExercise, FunctionExercise, KernelExercise, TileKernelExercise,
                                        ValueExercise)
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
    with pytest.raises(ExerciseError, match="check the unit") as info:
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
    fake = types.ModuleType("course_lib.exercises.lessons.ex_98")
    fake.EXERCISES = [value_exercise()]                # id 99.1 in module ex_98
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    registry._load_module.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="ex_99"):
            registry._load_module("ex_98")
    finally:
        registry._load_module.cache_clear()


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
    ex = get_exercise("04.3")
    shown = [hint("04.3", level) for level in range(1, len(ex.hints) + 1)]
    for level, text in enumerate(shown, start=1):
        assert ex.hints[level - 1] in text
        assert f"{level}/{len(ex.hints)}" in text
    beyond = hint("04.3", len(ex.hints) + 3)
    assert ex.hints[-1] in beyond and "last" in beyond
    assert hint("04.3") == shown[0]
    with pytest.raises(ValueError, match="level"):
        hint("04.3", 0)
    with pytest.raises(TypeError, match="level"):
        hint("04.3", "2")


# --------------------------------------------------------------------------------------------
# Every registered exercise, whichever lesson registered it
# --------------------------------------------------------------------------------------------

ALL_IDS = list_exercises()


@pytest.mark.parametrize("exercise_id", ALL_IDS)
def test_every_registered_exercise_is_well_formed(exercise_id):
    ex = get_exercise(exercise_id)
    assert ex.form.strip(), f"{exercise_id}: state the form of the answer"
    assert ex.hints, f"{exercise_id}: give at least one hint"
    assert ex.concepts, f"{exercise_id}: tag the concepts it exercises (concepts=...)"
    if isinstance(ex, ChoiceExercise):
        assert ex.answer(None) in ex.choices
    elif isinstance(ex, ValueExercise):
        want = np.asarray(ex.answer(None), dtype=float)
        assert np.all(np.isfinite(want))
        assert ex.check(ex.answer(None), None)
    elif isinstance(ex, KernelExercise):
        from course_lib.kernels.tasks import TASKS
        assert ex.task in TASKS, f"{exercise_id}: no kernel task {ex.task!r}"
        assert "@cuda.jit" in ex.form and len(ex.hints) >= 2
        n_cases = len(TASKS[ex.task].cases) if ex.cases is None else ex.cases
        assert n_cases >= 3, f"{exercise_id}: check a kernel on random, small and adversarial sizes"
    elif isinstance(ex, TileKernelExercise):
        from course_lib.tiles.tasks import TASKS          # torch and triton: the check runs in test_tile_puzzles
        assert ex.task in TASKS, f"{exercise_id}: no tile task {ex.task!r}"
        assert "@triton.jit" in ex.form and len(ex.hints) >= 2
    else:
        cases = ex.cases()
        assert len(cases) >= 3, f"{exercise_id}: check a function on at least three inputs"
        assert ex.check(ex.reference)


# --------------------------------------------------------------------------------------------
# Likely wrong answers: every value and choice exercise lists them, and none of them passes
# --------------------------------------------------------------------------------------------

#: Learner identities the variant exercises are checked with (None: the course's numbers).
LEARNERS = (None, "ada", "grace", "linus", "margaret")
VALUE_AND_CHOICE_IDS = [i for i in ALL_IDS if isinstance(get_exercise(i), (ValueExercise, ChoiceExercise))]
#: Slips any numeric answer may suffer, as factors of the right one: every named unit slip and
#: powers of ten.
GENERIC_SLIP_FACTORS = tuple(f for f, *_ in feedback._NAMED_SLIPS) + (2.0, 0.5, 1e-9, 1e-6, 1e-3, 1e3, 1e6, 1e9)


@pytest.mark.parametrize("exercise_id", VALUE_AND_CHOICE_IDS)
def test_every_likely_wrong_answer_is_rejected(exercise_id):
    """The wrong answers each exercise lists (computed from course_lib by its ex_NN module: unit
    slips and misconceptions), and generic slips of a number, all raise ExerciseError."""
    ex = get_exercise(exercise_id)
    assert ex.wrong_answers is not None, f"{exercise_id}: list its likely wrong answers (wrong_answers=...)"
    # expected and the wrong answers computed once per learner, not again for every answer tried
    ex = dataclasses.replace(ex, expected=functools.cache(ex.expected),
                             wrong_answers=functools.cache(ex.wrong_answers))
    passed = []
    for learner in LEARNERS if ex.variants else (None,):
        params = variants._params(ex, learner)
        wrong = ex.wrong_answers(**params)
        assert isinstance(wrong, dict) and wrong, f"{exercise_id}: wrong_answers() must return a non-empty dict"
        assert all(isinstance(m, feedback.Misconception) for m in wrong), \
            f"{exercise_id}: every wrong answer carries a Misconception (sentence, section, hint)"
        wrong = {m.key: v for m, v in wrong.items()}
        right = ex.expected(**params)
        if isinstance(ex, ChoiceExercise):
            wrong.update({f"the other choice {c!r}": c for c in ex.choices
                          if c.strip().lower() != right.strip().lower()})
        elif _is_scalar(right):
            wrong.update({f"{factor:.6g} x the answer": float(right) * factor for factor in GENERIC_SLIP_FACTORS})
        for description, value in wrong.items():
            try:
                ex.check(value, learner)
            except ExerciseError:
                continue
            passed.append(f"{description} = {value!r} (learner {learner!r})")
    assert not passed, f"{exercise_id} accepts likely wrong answers: {passed}"


def _is_scalar(value) -> bool:
    return np.ndim(value) == 0 and not isinstance(value, str)


def test_wrong_answers_is_optional_and_must_be_callable():
    assert value_exercise().wrong_answers is None and choice_exercise().wrong_answers is None
    assert value_exercise(wrong_answers=lambda: {"x": 1.0}).wrong_answers() == {"x": 1.0}
    with pytest.raises(TypeError, match="wrong_answers"):
        value_exercise(wrong_answers={"x": 1.0})
    with pytest.raises(TypeError, match="wrong_answers"):
        ChoiceExercise("99.4", expected=lambda: "a", choices=("a", "b"), wrong_answers=["b"])


@pytest.mark.parametrize("factor, words, form", [
    (24, "hours where days", "a float: days"), (1 / 24, "days where hours", "a float: hours"),
    (8, "bits where bytes", "a float: bytes"), (1 / 8, "bytes where bits", "a float: GB/s"),
    (1.024, "kB (1000 bytes) where KiB", "a float: KiB"), (1 / 1.024, "KiB (1024 bytes) where kB", "a float: kB"),
    (86400, "seconds where days", "a float: days"), (1 / 3600, "hours where seconds", "a float: seconds"),
    (100, "a percent where a fraction", "a float between 0 and 1: the fraction of warps"),
    (1e6, "unit slip", "a float: seconds"), (1e-3, "unit slip", "a float: ms"),
    (1024 ** 2, "unit slip", "a float: bytes"), (1e3, "unit slip", "a float: FLOP per byte"),
])
def test_unit_slips_are_named_without_the_answer(factor, words, form):
    with pytest.raises(ExerciseError, match="check the unit") as info:
        value_exercise(form=form).check(EXPECTED * factor)
    assert words in str(info.value)
    assert "factor" not in str(info.value) and "the answer" not in str(info.value)
    for spelling in _spellings(EXPECTED):
        assert spelling not in str(info.value)


@pytest.mark.parametrize("factor, form", [
    (2, "a float: days"), (0.5, "a float: milliseconds"),           # no generic 'twice the answer'
    (24, "a float: bytes"), (8, "a float: days"),                   # a slip of another kind of quantity
    (2, "an integer k: the loss scale is 2^k"), (10, "an integer: the margin m"),
    (1e3, "an integer: the number of tokens"), (100, "a float: naive over flash (a ratio, no unit)"),
])
def test_no_unit_slip_is_suggested_where_the_unit_cannot_slip(factor, form):
    ex = value_exercise(form=form, rel_tol=0.0)
    with pytest.raises(ExerciseError) as info:
        ex.check(EXPECTED * factor)
    assert "check the unit" not in str(info.value) and "looks like" not in str(info.value)


def test_the_kinds_of_quantity_are_read_from_the_form_or_given():
    assert feedback.quantity_kinds(value_exercise(form="a float: the time in microseconds (us)")) == ("time",)
    assert feedback.quantity_kinds(value_exercise(form="a float: the L2 bandwidth in TB/s")) == ("data",)
    assert feedback.quantity_kinds(value_exercise(form="an integer: the number of HBM3e stacks")) == ()
    assert feedback.quantity_kinds(value_exercise(form="a float: naive over flash (a ratio, no unit)")) == ()
    assert feedback.quantity_kinds(value_exercise(form="a float: days", quantity=())) == ()
    assert feedback.quantity_kinds(value_exercise(form="a float", quantity="data")) == ("data",)
    with pytest.raises(ValueError, match="quantity"):
        value_exercise(quantity="furlongs")


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.98, max_value=1.02), st.floats(min_value=1e-30, max_value=1e30))
def test_a_ratio_near_one_is_never_named_a_slip(ratio, want):
    assert feedback._unit_slip_note(want * ratio, want) == ""
    assert feedback._unit_slip_note(-want * ratio, -want) == ""


def test_a_rounded_answer_is_told_to_pass_the_unrounded_value():
    with pytest.raises(feedback.ExerciseError) as info:
        value_exercise().check(EXPECTED * 1.004)
    assert "within 1 %" in str(info.value) and "unrounded" in str(info.value)
    with pytest.raises(feedback.ExerciseError) as info:
        value_exercise().check(EXPECTED * 1.37)
    assert "within 1 %" not in str(info.value)


def test_named_slips_come_in_inverse_pairs_and_stay_away_from_one():
    factors = [f for f, *_ in feedback._NAMED_SLIPS]
    assert all(any(math.isclose(f * g, 1.0) for g in factors) for f in factors)
    assert all(abs(math.log(f)) > math.log(1.02) for f in factors)
    assert feedback._unit_slip_note(EXPECTED * 1.37, EXPECTED) == ""          # just a wrong number
    assert feedback._unit_slip_note(0.0, EXPECTED) == "" and feedback._unit_slip_note(-EXPECTED, EXPECTED) == ""


def test_a_registered_slip_is_named_in_the_learners_terms():
    ex = get_exercise("07.2")                                            # an answer in days
    with pytest.raises(ExerciseError, match="Hours where days.*hours-for-days") as info:
        ex.check(ex.answer(None) * 24, None)
    assert info.value.misconception.key == "hours-for-days"


def test_a_failing_function_check_says_how_to_rebuild_the_exact_input():
    ex = get_exercise("04.4")
    reference = ex.reference

    def shortcut(m, k, n, bytes_per_element=2):        # right on the first case only (m == 1)
        if m == 1:
            return reference(m, k, n, bytes_per_element)
        return 2 * m * k * n / (bytes_per_element * (m * k + k * n))       # forgets writing C
    with pytest.raises(ExerciseError) as info:
        ex.check(shortcut)
    text = str(info.value)
    line = next(line for line in text.splitlines() if "exact input" in line)
    match = re.search(r"get_exercise\('04\.4'\)\.cases\(\)\[(\d+)\]", line)
    assert match and "shortcut(*args, **kwargs)" in line
    assert "from course_lib.checks import get_exercise" in line
    args, kwargs = get_exercise("04.4").cases()[int(match.group(1))]
    assert f"{shortcut(*args, **kwargs):.10g}" in text                  # the very case it reported
    assert not math.isclose(shortcut(*args, **kwargs), reference(*args, **kwargs), rel_tol=1e-9)
    # The line runs as written, in a fresh namespace.
    namespace = {"shortcut": shortcut}
    code = line.split(": ", 1)[1].replace("; ", "\n")
    exec(code.rsplit("\n", 1)[0] + "\nresult = " + code.rsplit("\n", 1)[1], namespace)
    assert namespace["result"] == shortcut(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# KernelExercise (lesson 09): a broken kernel fails with its problem named; a stub stays a stub
# --------------------------------------------------------------------------------------------

def test_importing_the_checks_and_listing_exercises_does_not_import_numba():
    import subprocess
    code = ("import sys; from course_lib.checks import list_exercises, get_exercise; "
            "assert '09.1' in list_exercises(); get_exercise('09.11'); "
            "assert 'numba' not in sys.modules and 'course_lib.kernels' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_exercise_error_renders_as_its_message_alone():
    assert ExerciseError("exercise 99.1: wrong.\n  hint 1/3: x")._render_traceback_() == [
        f"{feedback.MARK_WRONG} exercise 99.1: wrong.", "  hint 1/3: x"]


from course_lib.kernels import cuda  # noqa: E402  (numba: only for the kernel tests below)
from course_lib.kernels.tasks import BLOCK, TASKS, TILE, TILE_T  # noqa: E402


@cuda.jit
def map_no_guard(a, out):
    i = cuda.grid(1)
    out[i] = 10 * a[i] + 1


@cuda.jit
def zip_strided(a, b, out):
    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x       # a warp's lanes a grid apart
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def map2d_guard_on_columns_only(a, out):
    c, r = cuda.grid(2)
    if c < a.shape[1]:
        out[r, c] = a[r, c] + 1


@cuda.jit
def outer_accumulating(a, b, out):
    c, r = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] += a[r] * b[c]                                   # reads out too


@cuda.jit
def block_sum_no_sync_in_tree(a, out):
    partial = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]


@cuda.jit
def dot_atomic_per_element(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(out, 0, a[i] * b[i])


@cuda.jit
def copy_column_major(a, out):
    per_block = cuda.blockDim.x * cuda.blockDim.y
    tid = ((cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * per_block
           + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x)
    r, c = tid % a.shape[0], tid // a.shape[0]                     # lanes go down a column
    if c < a.shape[1]:
        out[r, c] = a[r, c]


@cuda.jit
def transpose_direct(a, out):
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[c, r] = a[r, c]                                        # writes go down a column


@cuda.jit
def transpose_unpadded(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r, c = cuda.blockIdx.y * TILE_T + ty, cuda.blockIdx.x * TILE_T + tx
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]
    cuda.syncthreads()
    r_out, c_out = cuda.blockIdx.x * TILE_T + ty, cuda.blockIdx.y * TILE_T + tx
    if r_out < out.shape[0] and c_out < out.shape[1]:
        out[r_out, c_out] = tile[tx, ty]                           # 32 lanes, one bank


@cuda.jit
def matmul_accumulating_in_out(a, b, out):
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        for p in range(a.shape[1]):
            out[i, j] += a[i, p] * b[p, j]


@cuda.jit
def matmul_tiled_one_barrier(a, b, out):
    tile_a = cuda.shared.array((TILE, TILE), np.float32)
    tile_b = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i, j = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    acc = 0.0
    for k0 in range(0, k, TILE):
        tile_a[ty, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
        tile_b[ty, tx] = b[k0 + ty, j] if k0 + ty < k and j < b.shape[1] else 0.0
        cuda.syncthreads()
        for p in range(TILE):
            acc += tile_a[ty, p] * tile_b[p, tx]
    if i < m and j < b.shape[1]:
        out[i, j] = acc


def _three_pass_softmax(sync_after_max):
    def softmax(x, out):
        partial = cuda.shared.array(BLOCK, np.float32)
        r, t, cols = cuda.blockIdx.x, cuda.threadIdx.x, x.shape[1]
        row_max = -math.inf
        for c in range(t, cols, BLOCK):
            row_max = max(row_max, x[r, c])
        partial[t] = row_max
        cuda.syncthreads()
        stride = BLOCK // 2
        while stride > 0:
            if t < stride:
                partial[t] = max(partial[t], partial[t + stride])
            cuda.syncthreads()
            stride //= 2
        row_max = partial[0]
        if sync_after_max:
            cuda.syncthreads()
        total = 0.0
        for c in range(t, cols, BLOCK):
            total += math.exp(x[r, c] - row_max)
        partial[t] = total
        cuda.syncthreads()
        stride = BLOCK // 2
        while stride > 0:
            if t < stride:
                partial[t] += partial[t + stride]
            cuda.syncthreads()
            stride //= 2
        total = partial[0]
        for c in range(t, cols, BLOCK):
            out[r, c] = math.exp(x[r, c] - row_max) / total
    return cuda.jit(softmax)


BROKEN = {   # exercise id: (broken kernel, a phrase the failure must contain)
    "09.1": (map_no_guard, "out of bounds"),
    "09.2": (zip_strided, "coalescing efficiency"),
    "09.3": (map2d_guard_on_columns_only, "out of bounds"),
    "09.4": (outer_accumulating, "global loads"),
    "09.5": (block_sum_no_sync_in_tree, "race"),
    "09.6": (dot_atomic_per_element, "global atomics at most one per block"),
    "09.7": (copy_column_major, "coalescing efficiency"),
    "09.8": (transpose_direct, "coalescing efficiency"),
    "09.9": (transpose_unpadded, "bank conflicts"),
    "09.10": (matmul_accumulating_in_out, "global loads"),
    "09.11": (matmul_tiled_one_barrier, "race"),
    "09.12": (_three_pass_softmax(sync_after_max=False), "race"),
    "09.13": (_three_pass_softmax(sync_after_max=True), "global loads at most two per element"),
}
# The design puzzles' broken variants live beside their solutions (tests/kernel_solutions.py).
from kernel_solutions import PUZZLE_BROKEN  # noqa: E402

_PUZZLE_IDS = {"histogram": "09.16", "scan_block": "09.17", "scan": "09.18", "warp_sum": "09.19",
               "matmul_register": "09.20", "int8_gemv": "09.21", "rmsnorm": "09.22", "spmv_csr": "09.23",
               "conv1d": "09.24"}
for _task, _kernel, _failure, _words in PUZZLE_BROKEN.values():
    if _failure != "crash":
        BROKEN.setdefault(_PUZZLE_IDS[_task], (_kernel, _words))


def test_every_kernel_exercise_has_a_broken_variant_here():
    kernel_ids = {i for i in ALL_IDS if isinstance(get_exercise(i), KernelExercise)}
    assert kernel_ids == set(BROKEN)


@pytest.mark.parametrize("exercise_id", sorted(BROKEN, key=lambda i: int(i.split(".")[1])))
def test_a_broken_kernel_fails_with_its_problem_named(exercise_id):
    kernel, phrase = BROKEN[exercise_id]
    ex = get_exercise(exercise_id)
    with pytest.raises(ExerciseError) as info:
        ex.check(kernel)
    text = str(info.value)
    assert phrase in text, text
    assert text.startswith(f"exercise {exercise_id}: ") and f": {ex.task} at " in text.splitlines()[0]
    assert f"run_task({ex.task!r}, kernel, seed=" in text              # how to rerun the case
    found = info.value.misconception                                  # the failure names its mistake
    assert found is not None and found.lesson == "09", text
    assert f"[misconception: {found.key}]" in text and f"read again: {found.where}" in text
    assert ex.form in text and f"hint: {found.hint}" in text and ex.hints[1] not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def _stub(exercise_id, params):
    namespace = {}
    exec(f"def stub({', '.join(params)}):\n"
         f"    raise NotImplementedError('exercise {exercise_id}: write the kernel')\n", namespace)
    return cuda.jit(namespace["stub"])


@pytest.mark.parametrize("exercise_id", sorted(BROKEN, key=lambda i: int(i.split(".")[1])))
def test_an_untouched_kernel_stub_raises_not_implemented_unchanged(exercise_id):
    ex = get_exercise(exercise_id)
    with pytest.raises(NotImplementedError, match=f"^exercise {exercise_id}: write the kernel$") as info:
        ex.check(_stub(exercise_id, TASKS[ex.task].params))
    assert info.traceback[-1].name == "stub"          # it points at the stub, not into the tracer


def test_a_right_kernel_prints_one_line_with_the_sizes_and_the_targets_met():
    @cuda.jit
    def fine(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] * 10 + 1
    message = get_exercise("09.1").check(fine)
    assert "\n" not in message and message.startswith("09.1: correct")
    assert " cases (n=" in message and "global loads at most one per element: " in message
    assert " <= " in message and "decorate" not in message


def test_a_kernel_answer_must_be_a_kernel_with_the_task_signature():
    ex = get_exercise("09.1")
    with pytest.raises(TypeError, match="@cuda.jit"):
        ex.check(3.0)
    with pytest.raises(TypeError, match="None"):
        ex.check(None)

    def undecorated(a, out):                      # the tracer runs it, and says to decorate it
        i = cuda.grid(1)
        if i < out.size:
            out[i] = 10 * a[i] + 1
    assert "decorate it with @cuda.jit" in ex.check(undecorated)
    with pytest.raises(ExerciseError, match=r"takes 3 parameter\(s\).*kernel\(a, out\)"):
        ex.check(cuda.jit(lambda a, b, out: None))


def test_bad_kernel_exercise_definitions_are_refused():
    with pytest.raises(TypeError):
        KernelExercise("09.1", task=3, form="f", hints=HINTS)
    with pytest.raises(ValueError):
        KernelExercise("09.1", task="map", form="f", hints=HINTS, cases=0)
    with pytest.raises(RuntimeError, match="misconfigured"):
        KernelExercise("99.1", task="no_such_task", form="f", hints=HINTS).check(map_no_guard)
