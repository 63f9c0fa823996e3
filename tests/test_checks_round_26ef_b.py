"""Blind rounds 26e and 26f, lessons 05-08: the mistakes their tables found not named (or named as
another mistake) are named now, each by its own misconception; every wrong implementation the
function exercises of lessons 05-08 list is named when a learner submits it; and no message of
these lessons' misconceptions prints the answer.

The rounds' own files (tests/wrong_answers_round_26e.py, _26f.py) are loaded by path, as
tests/test_checks_round_26.py does; the indices are positions in their list R, 0-based.
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest

from course_lib.exercises import variants
from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise, list_exercises
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROUND_E = _load("wrong_answers_round_26e")
ROUND_F = _load("wrong_answers_round_26f")

#: 26e's misses in lessons 05-08 (not named, or partly: another mistake named first) and the
#: misconception that names each now.
NAMED_NOW_26E = {
    61: "near-equal-blocks-not-fixed",
    62: "int8-scale-128-not-127",
    64: "implicit-leading-one-dropped",
    65: "jump-factor-as-margin",
    76: "naive-bytes-over-flash-elements",
    77: "output-not-rescaled",
    78: "output-normalised-each-step",
    82: "skinny-square-tiles-only",
    95: "kv-token-being-generated-counted",
    99: "cache-at-1024-most-slots",
    100: "step-timed-at-batch-one",
    102: "fixed-part-not-scaled",
    103: "profiled-deployment-only",
    104: "int4-kept-at-todays-bandwidth",
    106: "bandwidth-grid-too-coarse",
    114: "zero-1-shards-gradients",
    116: "mig-context-left-at-default",
    119: "micro-batches-fixed-at-32",
}

#: 26f's misses in lessons 05-08 (its table: not named, or partly) and the misconception that names
#: each now.
NAMED_NOW_26F = {
    59: "one-scale-per-row",
    62: "implicit-leading-one-dropped",
    66: "channel-taken-as-column",
    75: "output-not-rescaled",
    76: "rescale-factor-inverted",
    91: "kv-batch-forgotten",
    94: "cache-at-1024-most-slots",
    96: "profiled-deployment-only",
    102: "whole-buffer-every-ring-step",
    105: "zero-1-shards-gradients",
    108: "mig-context-left-at-default-largest",
}
#: 26f's mistakes that give the right answer with these exercises' data (its table's "right by
#: luck", lessons 05-08): the check accepts them, and no misconception may claim the answer.
RIGHT_BY_LUCK_26F = getattr(ROUND_F, "RIGHT_BY_LUCK", {63, 80, 81, 97, 98, 110})

LESSONS = ("05", "06", "07", "08")
IDS = [i for i in list_exercises() if i[:2] in LESSONS]
FUNCTION_IDS = [i for i in IDS if isinstance(get_exercise(i), FunctionExercise)]
VALUE_IDS = [i for i in IDS if isinstance(get_exercise(i), ValueExercise)]


pytestmark = pytest.mark.usefixtures("anonymous_learner")


def _rejected(exercise_id, answer) -> str:
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(answer, None)
    return str(info.value)


def _first_named(text: str) -> str | None:
    found = re.search(r"\[misconception: ([a-z0-9-]+)\]", text)
    return found.group(1) if found else None


@pytest.mark.parametrize("index", sorted(NAMED_NOW_26E))
def test_each_miss_of_round_26e_is_rejected_and_named(index):
    exercise_id, mistake, compute = ROUND_E.R[index]
    text = _rejected(exercise_id, compute())
    assert f"[misconception: {NAMED_NOW_26E[index]}]" in text, (exercise_id, mistake, text)


def test_the_26e_misses_listed_are_those_of_lessons_05_to_08():
    misses = {i for i in ROUND_E.NOT_NAMED | ROUND_E.PARTLY if ROUND_E.R[i][0][:2] in LESSONS}
    assert misses == set(NAMED_NOW_26E)


ROUND_F_LESSONS = [i for i, (ex, _, _) in enumerate(ROUND_F.R) if ex[:2] in LESSONS]


@pytest.mark.parametrize("index", [i for i in ROUND_F_LESSONS if i not in RIGHT_BY_LUCK_26F])
def test_each_mistake_of_round_26f_in_lessons_05_to_08_is_rejected_and_named(index):
    exercise_id, mistake, compute = ROUND_F.R[index]
    text = _rejected(exercise_id, compute())
    assert _first_named(text) is not None or "does not split the 48 layers" in text, (exercise_id, mistake, text)
    if index in NAMED_NOW_26F:
        assert f"[misconception: {NAMED_NOW_26F[index]}]" in text, (exercise_id, mistake, text)


@pytest.mark.parametrize("index", sorted(i for i in ROUND_F_LESSONS if i in RIGHT_BY_LUCK_26F))
def test_the_26f_mistakes_that_give_the_answer_are_accepted(index):
    exercise_id, mistake, compute = ROUND_F.R[index]
    assert get_exercise(exercise_id).check(compute(), None).startswith(f"{exercise_id}: correct")


@pytest.mark.parametrize("exercise_id", FUNCTION_IDS)
def test_every_wrong_implementation_is_named_when_submitted(exercise_id):
    ex = get_exercise(exercise_id)
    wrong = ex.wrong_implementations()
    assert len(wrong) >= 6, f"{exercise_id}: list the plausible ways to write the function wrong"
    for misconception, function in wrong.items():
        text = _rejected(exercise_id, function)
        assert f"[misconception: {misconception.key}]" in text, (exercise_id, misconception.key, text)


@pytest.mark.parametrize("exercise_id", FUNCTION_IDS)
def test_wrong_implementations_differ_from_each_other_somewhere(exercise_id):
    """Two listed wrong versions that agree on every case would name each other: each must be told
    apart from the others (and from the reference) by at least one case."""
    ex = get_exercise(exercise_id)
    cases = ex.cases()
    keys = {}
    for misconception, function in ex.wrong_implementations().items():
        outputs = []
        for args, kwargs in cases:
            with np.errstate(all="ignore"):
                out = function(*args, **kwargs)
            outputs.append(repr(np.round(np.asarray(out, dtype=float).ravel() if not isinstance(out, tuple)
                                         else np.concatenate([np.ravel(o) for o in out]), 9).tolist()))
        keys.setdefault(tuple(outputs), []).append(misconception.key)
    assert all(len(v) == 1 for v in keys.values()), [v for v in keys.values() if len(v) > 1]


def _printed_forms(value: float) -> list[str]:
    forms = {f"{value:.4g}", f"{value:.6g}", f"{value:.10g}", repr(value)}
    if float(value).is_integer():
        forms |= {str(int(value)), f"{int(value):,}"}
    return sorted(f for f in forms if not re.fullmatch(r"-?\d(\.0+)?", f))


def _contains_number(text: str, spelled: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(spelled)}(?![\d])", text) is not None


@pytest.mark.parametrize("exercise_id", VALUE_IDS)
def test_no_misconception_message_prints_the_answer(exercise_id):
    """The lines a misconception adds (its sentence, where to read again, its hint) never print the
    answer: checked on every wrong answer the exercise lists, as a learner would meet it."""
    ex = get_exercise(exercise_id)
    right = ex.answer(None)
    if isinstance(ex, ChoiceExercise):
        return
    for misconception, wrong in ex.wrong_answers(**variants._params(ex, None)).items():
        text = _rejected(exercise_id, wrong)
        body = "\n".join(line for line in text.splitlines()[1:] if not line.lstrip().startswith("expected:"))
        for spelled in _printed_forms(float(right)):
            assert not _contains_number(body, spelled), (exercise_id, misconception.key, spelled)


def test_the_coarse_sweep_of_07_9_is_recomputed_by_the_search():
    """07.9's 0.1 TB/s sweep: the value named is where the exercise's own comparison first turns,
    on that grid from the H200's own bandwidth, not a typed number."""
    from course_lib.exercises.lessons import ex_07
    from course_lib.hardware import get_accelerator
    coarse = ex_07._fp8_overtakes_coarse()
    start = get_accelerator("H200").mem_bandwidth / 1e12
    steps = (coarse - start) / 0.1
    assert math.isclose(steps, round(steps), abs_tol=1e-6) and steps >= 1
    assert ex_07._fp8_keeps_up(coarse) and not ex_07._fp8_keeps_up(round(coarse - 0.1, 2))
    assert coarse != get_exercise("07.9").answer(None)
