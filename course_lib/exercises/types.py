"""The kinds of exercise: a number, a choice, a function, a kernel.

Each lesson lists its exercises in ``course_lib/exercises/lessons/ex_NN.py`` as ``EXERCISES``.
An exercise's expected answer is a callable, computed from ``course_lib`` only when a check runs,
so no answer is typed anywhere and importing this module computes nothing. Each kind's
``check(answer, learner)`` returns the success line or raises the feedback of
:mod:`course_lib.exercises.feedback`.

How an exercise declares what it teaches (see ``lessons/ex_04.py`` for a complete lesson):

* ``concepts=("intensity", "ridge-point")``: tags from the lesson's fixed list,
  ``course_lib.exercises.lessons.CONCEPTS["04"]``; the mastery map (``course_lib.exercises.mastery``) counts
  exercises per concept.
* ``wrong_answers=f`` (value and choice exercises): ``f(**params)`` returns
  ``{Misconception: the wrong answer it produces}``, computed from ``course_lib`` like the right
  answer. A :class:`Misconception` is a key, one sentence naming it, the lesson and section that
  corrects it (a real ``## heading`` of ``notebooks/NN_*.py``) and a hint that follows the mistake.
  Shared ones (bits for bytes, hours for days, one link direction, sparse peak, ...) live in
  ``course_lib.exercises.misconceptions``. When an answer matches one (within the
  exercise's tolerance, at least 0.1 %, and nearer to it than to the answer), ``check`` names it,
  points to the section and gives its hint; the course's tests assert that every listed wrong
  answer is rejected and recognised. The check looks for them before the tolerance: an answer
  that leaves out a small term the task names is rejected however small the term, as long as
  that partial answer is listed. Candidates that give one value are named in the order listed
  (the more likely first; the first one's hint is given).
* ``quantity`` (value exercises): the kinds of quantity the answer is, for the unit-slip notes
  ("time", "data", "fraction", "unit"; ``()`` for none); by default read from ``form`` (an
  integer, a ratio: none). A slip is suggested only where it can happen (hours for days for a
  time, bits for bytes for data), and no note names a factor between a value and the answer.
* ``wrong_implementations=f`` (function exercises): ``f()`` returns ``{Misconception: function}``;
  a learner's function that agrees with one of them on every check input is named.
* ``variants=Variants(options=(default, other, ...), statement="...")``: per-learner numbers.
  ``options[0]`` is the course's default (used when there is no identity, so the committed
  solution is unchanged); a learner identity (``COURSE_LEARNER_ID``, ``NBGRADER_STUDENT_ID``, the
  student folder nbgrader autogrades in, or ``JUPYTERHUB_USER``) picks one option by a stable
  hash. ``expected``, ``wrong_answers`` and ``form``/``hints`` (``{name}`` fields) then receive
  the option's entries as keyword arguments. The exercise cell prints ``variant("NN.k")`` and
  the solution computes from it, never from typed numbers.

A wrong answer that matches a misconception is also appended to a small log,
``~/.course/misconceptions.jsonl`` (``COURSE_HOME`` moves it); a log that cannot be written is
skipped silently: a check never fails because of it.
"""

from __future__ import annotations

import copy
import inspect
import math
import numbers
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from course_lib.exercises.feedback import (ID_PATTERN, QUANTITY_KINDS, _KEY_PATTERN, AnswerTypeError, AnswerValueError,
                                          ExerciseError, Misconception, _as_array_answer, _as_misconception,
                                          _as_scalar_answer, _call_text, _close, _close_array, _close_note, _error,
                                          _failure, _is_scalar_like, _learner_line, _matching_misconceptions, _mismatch,
                                          _scalar_misconceptions, _short, _tolerance_text, _unit_slip_note,
                                          _add_generated, _default_variant_answers, quantity_kinds)
from course_lib.exercises.variants import Variants, _NO_LEARNER, _params, _resolve

__all__ = ["ValueExercise", "ChoiceExercise", "FunctionExercise", "KernelExercise", "TileKernelExercise",
           "EXERCISE_TYPES"]


def _validate_concepts(kind: str, ex) -> None:
    concepts = (ex.concepts,) if isinstance(ex.concepts, str) else tuple(ex.concepts)
    if not all(isinstance(c, str) and _KEY_PATTERN.match(c) for c in concepts):
        raise TypeError(f"{kind} {ex.id}: concepts must be lower-case keys such as 'ridge-point'")
    object.__setattr__(ex, "concepts", concepts)


def _validate_variants(kind: str, ex) -> None:
    if ex.variants is None:
        return
    if not isinstance(ex.variants, Variants):
        raise TypeError(f"{kind} {ex.id}: variants must be None or a Variants, "
                        f"got {type(ex.variants).__name__}")
    for option in ex.variants.options:                 # a mistyped {field} fails here, at import
        for text in (ex.form, *ex.hints):
            try:
                text.format(**option)
            except (KeyError, IndexError, ValueError) as exc:
                raise ValueError(f"{kind} {ex.id}: {text!r} does not format with the variant's "
                                 f"fields {sorted(option)} ({exc!r}); write literal braces as {{{{ }}}}") from None


# --------------------------------------------------------------------------------------------
# Exercise kinds
# --------------------------------------------------------------------------------------------

def _validate_common(kind: str, ex) -> None:
    if not isinstance(ex.id, str) or not ID_PATTERN.match(ex.id):
        raise ValueError(f"{kind} id must look like '04.2' (two-digit lesson, dot, number), got {ex.id!r}")
    if not isinstance(ex.form, str):
        raise TypeError(f"{kind} {ex.id}: form must be a string describing the answer's form")
    hints = ex.hints
    if isinstance(hints, str):
        hints = (hints,)
    hints = tuple(hints)
    if not all(isinstance(h, str) and h.strip() for h in hints):
        raise TypeError(f"{kind} {ex.id}: hints must be a tuple of non-empty strings")
    object.__setattr__(ex, "hints", hints)
    _validate_concepts(kind, ex)
    if hasattr(ex, "variants"):
        _validate_variants(kind, ex)


def _validate_wrong_answers(kind: str, ex) -> None:
    if ex.wrong_answers is not None and not callable(ex.wrong_answers):
        raise TypeError(f"{kind} {ex.id}: wrong_answers must be None or a callable returning "
                        f"{{Misconception: wrong answer}}, got {type(ex.wrong_answers).__name__}")


def _validate_tol(kind: str, ex_id: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"{kind} {ex_id}: {name} must be a finite number >= 0, got {value!r}")


def _with_default_variant(ex):
    """``ex.wrong_answers`` followed by the answers of the course's default numbers, in whole or
    in part, for a learner whose variant differs (the likeliest slip of a per-learner exercise:
    numbers copied from the task's text or the lesson's example instead of ``variant(...)``)."""
    expected, variants, ex_id = ex.expected, ex.variants, ex.id
    rel_tol, abs_tol = ex.rel_tol, ex.abs_tol
    # misconceptions._with_generated keeps its parts apart, so that the default's numbers (the
    # likelier slip) come before the generated other chips, widths and peaks
    listed = getattr(ex.wrong_answers, "_listed", ex.wrong_answers)
    generators = getattr(ex.wrong_answers, "_generators", ())

    def wrong_answers(**params):
        want = expected(**params)
        found = _add_generated(listed(**params), _default_variant_answers(ex_id, variants, expected, params),
                              want, rel_tol, abs_tol)
        for generator in generators:
            found = _add_generated(found, generator(**params), want, rel_tol, abs_tol,
                                   getattr(generator, "_alone", False))
        return found
    wrong_answers._with_default_variant = True
    wrong_answers._listed, wrong_answers._generators = listed, generators
    return wrong_answers


@dataclass(frozen=True)
class ValueExercise:
    """An exercise whose answer is a number (or an array of numbers).

    ``expected`` is a zero-argument callable returning the answer; an answer ``a`` passes when
    ``|a - e| <= max(rel_tol * |e|, abs_tol)`` (elementwise, with matching shapes for arrays).
    ``wrong_answers``, optional, is a callable returning ``{Misconception: value}``: the answers
    that likely mistakes produce, computed like ``expected``; ``check`` names the one an answer
    matches, and the course's tests assert that each is rejected. With ``variants``, both
    callables take the learner's option as keyword arguments.
    """

    id: str
    expected: Callable[..., Any]
    rel_tol: float = 1e-6
    abs_tol: float = 0.0
    form: str = ""
    hints: tuple = ()
    wrong_answers: Callable[..., dict] | None = None
    concepts: tuple = ()
    variants: Variants | None = None
    quantity: str | tuple | None = None

    def __post_init__(self):
        _validate_common("ValueExercise", self)
        kinds = (self.quantity,) if isinstance(self.quantity, str) else (self.quantity or ())
        if self.quantity is not None and not all(k in QUANTITY_KINDS for k in kinds):
            raise ValueError(f"ValueExercise {self.id}: quantity must be None (read from the form) or "
                             f"kinds from {QUANTITY_KINDS}, got {self.quantity!r}")
        if not callable(self.expected):
            raise TypeError(f"ValueExercise {self.id}: expected must be a callable computing the "
                            f"answer (for example a lambda), got {type(self.expected).__name__}")
        _validate_wrong_answers("ValueExercise", self)
        _validate_tol("ValueExercise", self.id, "rel_tol", self.rel_tol)
        _validate_tol("ValueExercise", self.id, "abs_tol", self.abs_tol)
        if self.variants is not None and self.wrong_answers is not None \
                and not getattr(self.wrong_answers, "_with_default_variant", False):
            object.__setattr__(self, "wrong_answers", _with_default_variant(self))

    def answer(self, learner=_NO_LEARNER):
        """The expected answer for ``learner`` (default: the current identity)."""
        return self.expected(**_params(self, learner))

    def check(self, answer, learner=_NO_LEARNER) -> str:
        """Return a one-line success message, or raise ExerciseError / TypeError / ValueError."""
        params = _params(self, learner)
        want = self.expected(**params)
        if _is_scalar_like(want):
            got = _as_scalar_answer(self, answer, params)
            # A listed wrong answer nearer to yours than the answer is names your mistake, even
            # inside the tolerance: a term the task names is never lost in the rounding.
            found = _scalar_misconceptions(self, params, got, want)
            inside = _close(got, float(want), self.rel_tol, self.abs_tol)
            if inside and not found:
                return f"{self.id}: correct ({_short(got)})."
            what = f"your answer {_short(got)} is not accepted"
            if not inside:
                what += f" ({_tolerance_text(self.rel_tol, self.abs_tol)})"
            else:
                what += (" (it is within the tolerance, but nearer to what a known mistake gives than to "
                         "the answer; if you rounded a printout, pass the unrounded variable)")
            note = "" if found else (_unit_slip_note(got, float(want), quantity_kinds(self))
                                     or _close_note(got, float(want)))
            raise _error(self, what + note, params, found)
        want_arr = np.asarray(want, dtype=float)
        got_arr = _as_array_answer(self, answer, want_arr.shape, params)
        bad = ~_close_array(got_arr, want_arr, self.rel_tol, self.abs_tol)
        if np.any(bad):
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            found = _matching_misconceptions(self, params, lambda w: np.shape(w) == got_arr.shape and bool(
                np.all(_close_array(got_arr, np.asarray(w, dtype=float), max(self.rel_tol, 1e-3), self.abs_tol))))
            raise _error(
                self, f"{int(bad.sum())} of {bad.size} entries are not accepted "
                      f"({_tolerance_text(self.rel_tol, self.abs_tol)}); the first is your value "
                      f"{_short(got_arr[where])} at index {where if len(where) > 1 else where[0]}",
                params, found)
        return f"{self.id}: correct (all {got_arr.size} entries)."


@dataclass(frozen=True)
class ChoiceExercise:
    """An exercise whose answer is one of a few strings (a prediction, a classification).

    Comparison ignores case and surrounding spaces. ``expected`` is a zero-argument callable.
    ``wrong_answers``, optional, is a callable returning ``{Misconception: choice}``: the
    choices that likely misconceptions lead to, computed like ``expected``.
    """

    id: str
    expected: Callable[..., str]
    choices: tuple = ()
    form: str = ""
    hints: tuple = ()
    wrong_answers: Callable[..., dict] | None = None
    concepts: tuple = ()
    variants: Variants | None = None

    def __post_init__(self):
        _validate_common("ChoiceExercise", self)
        if not callable(self.expected):
            raise TypeError(f"ChoiceExercise {self.id}: expected must be a callable returning one "
                            f"of the choices, got {type(self.expected).__name__}")
        _validate_wrong_answers("ChoiceExercise", self)
        choices = (self.choices,) if isinstance(self.choices, str) else tuple(self.choices)
        if len(choices) < 2 or not all(isinstance(c, str) and c.strip() for c in choices):
            raise ValueError(f"ChoiceExercise {self.id}: choices must be at least two non-empty strings")
        keys = [c.strip().lower() for c in choices]
        if len(set(keys)) != len(keys):
            raise ValueError(f"ChoiceExercise {self.id}: choices must differ (ignoring case): {choices}")
        object.__setattr__(self, "choices", choices)

    def _key(self, value: str) -> str:
        return value.strip().lower()

    def answer(self, learner=_NO_LEARNER) -> str:
        """The expected choice for ``learner`` (default: the current identity)."""
        return self.expected(**_params(self, learner))

    def check(self, answer, learner=_NO_LEARNER) -> str:
        params = _params(self, learner)
        if answer is None:
            raise AnswerTypeError(f"exercise {self.id} expects {self._form()}; you passed None "
                                  f"(did you assign your answer?)")
        if not isinstance(answer, str):
            raise AnswerTypeError(f"exercise {self.id} expects a string, one of {list(self.choices)}; "
                                  f"you passed {type(answer).__name__} {_short(answer)}")
        keys = {self._key(c): c for c in self.choices}
        if self._key(answer) not in keys:
            raise AnswerValueError(f"exercise {self.id} expects one of {list(self.choices)}; "
                                   f"you passed {answer!r}")
        want = self.expected(**params)
        if not isinstance(want, str) or self._key(want) not in keys:
            raise RuntimeError(f"exercise {self.id} is misconfigured: its expected answer is "
                               f"not one of its choices")
        if self._key(answer) != self._key(want):
            found = _matching_misconceptions(
                self, params, lambda w: isinstance(w, str) and self._key(w) == self._key(answer))
            raise _error(self, f"your answer {answer!r} is not the right choice", params, found)
        return f"{self.id}: correct ({keys[self._key(answer)]!r})."

    def _form(self) -> str:
        return self.form or f"one of {list(self.choices)}"


@dataclass(frozen=True)
class FunctionExercise:
    """An exercise whose answer is a function, compared with ``reference`` on generated cases.

    ``make_cases(rng)`` returns a list of ``(args, kwargs)`` pairs; ``rng`` is
    ``np.random.default_rng(seed)`` with ``seed`` fixed per exercise (the CRC-32 of its id
    unless given), so a failing case can be reproduced. Cases should be random, asymmetric
    and of sizes a block size does not divide. ``wrong_implementations``, optional, is a
    zero-argument callable returning ``{Misconception: function}``: likely wrong versions; a
    learner's function that agrees with one on every case is named.
    """

    id: str
    reference: Callable
    make_cases: Callable[[np.random.Generator], list]
    rel_tol: float = 1e-9
    form: str = ""
    hints: tuple = ()
    abs_tol: float = 0.0
    seed: int | None = None
    wrong_implementations: Callable[[], dict] | None = None
    concepts: tuple = ()

    def __post_init__(self):
        _validate_common("FunctionExercise", self)
        if not callable(self.reference):
            raise TypeError(f"FunctionExercise {self.id}: reference must be a callable")
        if not callable(self.make_cases):
            raise TypeError(f"FunctionExercise {self.id}: make_cases must be a callable taking an rng")
        _validate_tol("FunctionExercise", self.id, "rel_tol", self.rel_tol)
        _validate_tol("FunctionExercise", self.id, "abs_tol", self.abs_tol)
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise TypeError(f"FunctionExercise {self.id}: seed must be an int or None")
        if self.wrong_implementations is not None and not callable(self.wrong_implementations):
            raise TypeError(f"FunctionExercise {self.id}: wrong_implementations must be None or a "
                            f"callable returning {{Misconception: function}}")

    @property
    def effective_seed(self) -> int:
        return zlib.crc32(self.id.encode()) if self.seed is None else self.seed

    def cases(self) -> list[tuple[tuple, dict]]:
        """The generated ``(args, kwargs)`` cases, checked for shape."""
        raw = self.make_cases(np.random.default_rng(self.effective_seed))
        cases = []
        for i, case in enumerate(raw):
            if not (isinstance(case, tuple) and len(case) == 2
                    and isinstance(case[0], tuple) and isinstance(case[1], dict)):
                raise RuntimeError(f"exercise {self.id} is misconfigured: case {i} must be "
                                   f"(args tuple, kwargs dict), got {_short(case)}")
            cases.append(case)
        if not cases:
            raise RuntimeError(f"exercise {self.id} is misconfigured: make_cases returned no cases")
        return cases

    def check(self, answer, learner=_NO_LEARNER) -> str:
        if not callable(answer):
            raise AnswerTypeError(f"exercise {self.id} expects a function ({self.form or 'see the task'}); "
                                  f"you passed {type(answer).__name__} {_short(answer)}")
        name = getattr(answer, "__name__", "f")
        cases = self.cases()
        for index, (args, kwargs) in enumerate(cases):
            want = self.reference(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            call = _call_text(name, args, kwargs)
            try:
                got = answer(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            except NotImplementedError:
                raise                      # an untouched stub: let it read as one
            except Exception as exc:       # the learner's code failed: say where, keep the cause
                raise self._error_with_case(
                    f"your function raised {type(exc).__name__}: {exc} when called as {call}"
                    f"{_learner_line(exc)}", index, len(cases), name, []) from exc
            problem = _mismatch(got, want, self.rel_tol, self.abs_tol)
            if problem is not None:
                raise self._error_with_case(
                    f"your function returned {_short(got)} for {call}"
                    f"{'' if problem == 'value' else ' (' + problem + ')'}", index, len(cases), name,
                    self._matching_implementations(answer, cases))
        return f"{self.id}: correct on all {len(cases)} test inputs."

    def _matching_implementations(self, answer, cases) -> list:
        """The listed wrong implementations the learner's function agrees with on every case."""
        if self.wrong_implementations is None:
            return []
        outputs = []
        for args, kwargs in cases:
            try:
                outputs.append(answer(*copy.deepcopy(args), **copy.deepcopy(kwargs)))
            except Exception:  # noqa: BLE001 - a function that raises matches no wrong version
                return []
        found = []
        for misconception, wrong in self.wrong_implementations().items():
            try:
                if all(_mismatch(got, wrong(*copy.deepcopy(args), **copy.deepcopy(kwargs)),
                                 max(self.rel_tol, 1e-9), self.abs_tol) is None
                       for got, (args, kwargs) in zip(outputs, cases)):
                    found.append(_as_misconception(self, misconception))
            except Exception:  # noqa: BLE001 - a wrong version undefined on a case: no match
                continue
        return found

    def _error_with_case(self, what: str, index: int, total: int, name: str, found) -> "ExerciseError":
        """The failure, with a line that rebuilds the exact failing input (the one shown above
        may be shortened): the cases come from a fixed seed, so ``cases()[index]`` is it."""
        error = _error(self, what, {}, found)
        head, tail = str(error).split("\n", 1)
        if not name.isidentifier():
            name = "your_function"
        exact = (f"  exact input (case {index} of {total}): from course_lib.checks import get_exercise; "
                 f"args, kwargs = get_exercise({self.id!r}).cases()[{index}]; "
                 f"{name}(*args, **kwargs)")
        return ExerciseError("\n".join([head, exact, tail]), self.id, error.misconception)


@dataclass(frozen=True)
class KernelExercise:
    """An exercise whose answer is a ``@cuda.jit`` kernel for one task of the kernel lab.

    ``task`` names a :data:`course_lib.kernels.tasks.TASKS` entry, which holds the data, the
    launch, the NumPy reference and the cost targets. The check runs the kernel on the course's
    traced executor (``check_kernel``) on the task's cases (all of them, or the first ``cases``):
    random sizes that no block size divides, fewer elements than one block, and the task's
    adversarial data; the sizes are drawn from the learner's identity (``learner_seed``), so
    two learners get different ones. No fault, no race, every element right, every cost target
    met; a failure names its class and the misconception it most likely comes from (a
    :class:`Misconception` with the lesson 09 section to read again). An undecorated Python
    function is accepted too (the tracer runs the Python source either way); the success line
    then says to decorate it. ``course_lib.kernels`` (and numba) is imported only when a check
    runs, so importing this module stays cheap.
    """

    id: str
    task: str
    form: str = ""
    hints: tuple = ()
    cases: int | None = None
    concepts: tuple = ()

    def __post_init__(self):
        _validate_common("KernelExercise", self)
        if not isinstance(self.task, str) or not self.task.strip():
            raise TypeError(f"KernelExercise {self.id}: task must name a kernel-lab task, got {self.task!r}")
        if self.cases is not None and (isinstance(self.cases, bool) or not isinstance(self.cases, int)
                                       or not 1 <= self.cases <= 8):
            raise ValueError(f"KernelExercise {self.id}: cases must be None (all) or an int from 1 to 8, "
                             f"got {self.cases!r}")

    def check(self, answer, learner=_NO_LEARNER) -> str:
        __tracebackhide__ = True
        fn, decorated = _kernel_function(self, answer)
        from course_lib.kernels.tasks import TASKS, KernelCheckError, check_kernel   # numba: only now
        task = TASKS.get(self.task)
        if task is None:
            raise RuntimeError(f"exercise {self.id} is misconfigured: no kernel task {self.task!r}")
        identity = _resolve(learner)
        try:
            runs = check_kernel(task, fn, cases=self.cases, learner=identity)
        except KernelCheckError as exc:
            first, *rest = str(exc).splitlines()
            # The kernel lab names its mistake in plain data; here it becomes a Misconception and
            # the feedback takes the form of lessons 01-08 (misconception, read again, hint).
            rest = [line for line in rest if not line.startswith(("  misconception:", "  read again:", "  hint:"))]
            found = []
            if exc.mistake is not None:
                m = exc.mistake
                found = [Misconception(m.key, m.text, "09", m.heading, m.hint)]
            head, tail = _failure(self, f"{exc.failure}: {first.rstrip('.')}", found=found).split("\n", 1)
            raise ExerciseError("\n".join([head, *rest, tail]), self.id, found[0] if found else None) from None
        except NotImplementedError as exc:
            # An untouched stub passes through the tracer unchanged and reads as one: the same
            # exception, its traceback starting at the kernel's own line, not in the tracer.
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code is not fn.__code__:
                tb = tb.tb_next
            raise exc.with_traceback(tb or exc.__traceback__)
        sizes = " | ".join(", ".join(f"{k}={v}" for k, v in run.sizes.items()) for run in runs)
        met = []
        for target in task.targets:
            values = []
            for run in runs[:task.costed_cases]:       # the adversarial cases check values only
                _, got, limit = target.evaluate(run.profile, run.sizes)
                values.append(f"{target.format(got)} {'>=' if target.at_least else '<='} "
                              f"{target.format(limit)}")
            met.append(f"{target.what}: {' | '.join(values)}")
        note = "" if decorated else "; decorate it with @cuda.jit to launch it"
        return (f"{self.id}: correct and safe on {len(runs)} cases ({sizes}); "
                f"cost targets met: {'; '.join(met)}{note}.")


def _kernel_function(ex, answer):
    """The Python function of a ``@cuda.jit`` kernel (real or simulated) or a plain function,
    and whether it was decorated; TypeError for anything else."""
    form = ex.form or "a @cuda.jit kernel"
    if answer is None:
        raise TypeError(f"exercise {ex.id} expects {form}; you passed None (pass the kernel "
                        f"itself: check({ex.id!r}, my_kernel), not the result of a launch)")
    for attr in ("py_func", "fn"):                    # numba's CUDA dispatcher; its simulator's kernel
        fn = getattr(answer, attr, None)
        if inspect.isfunction(fn):
            return fn, True
    if inspect.isfunction(answer):
        return answer, False
    raise TypeError(f"exercise {ex.id} expects {form}: a function decorated with @cuda.jit; "
                    f"you passed {type(answer).__name__} {_short(answer)}")


@dataclass(frozen=True)
class TileKernelExercise:
    """An exercise whose answer is a ``@triton.jit`` kernel for one puzzle of the tile-kernel lab.

    ``task`` names a :data:`course_lib.tiles.tasks.TASKS` entry (signature, launch, data, PyTorch
    reference, cost targets, known mistakes). The check runs the kernel under the tile profiler
    on three cases: random sizes no block divides (per learner), random sizes with adversarial
    values, and a size smaller than one block; it fails on an access outside a tensor, a wrong
    output (naming the mistake it matches), or a missed cost target. ``course_lib.tiles`` (torch
    and triton) is imported only when a check runs.
    """

    id: str
    task: str
    form: str = ""
    hints: tuple = ()
    concepts: tuple = ()

    def __post_init__(self):
        _validate_common("TileKernelExercise", self)
        if not isinstance(self.task, str) or not self.task.strip():
            raise TypeError(f"TileKernelExercise {self.id}: task must name a tile-lab task, got {self.task!r}")

    def check(self, answer, learner=_NO_LEARNER) -> str:
        __tracebackhide__ = True
        if answer is None or not callable(getattr(answer, "fn", None)):
            raise TypeError(f"exercise {self.id} expects {self.form or 'a @triton.jit kernel'}; you passed "
                            f"{type(answer).__name__} {_short(answer)} (pass the kernel itself, decorated "
                            f"with @triton.jit)")
        from course_lib.tiles.tasks import TASKS, TileCheckError, check_tile_kernel   # torch and triton: only now
        task = TASKS.get(self.task)
        if task is None:
            raise RuntimeError(f"exercise {self.id} is misconfigured: no tile task {self.task!r}")
        seed = 0 if learner is _NO_LEARNER else zlib.crc32(str(learner).encode())
        try:
            runs = check_tile_kernel(task, answer, seed=seed)
        except TileCheckError as exc:
            head, tail = _failure(self, "the kernel does not pass").split("\n", 1)
            raise ExerciseError("\n".join([head, f"  {exc}", tail]), self.id) from None
        except Exception as exc:                       # the interpreter wraps the learner's own exceptions
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            if isinstance(cause, NotImplementedError):
                raise cause.with_traceback(None) from None
            raise
        sizes = " | ".join(", ".join(f"{k}={v}" for k, v in run.sizes.items()) for run in runs)
        met = []
        for target in task.targets:
            values = [f"{target.measure(run.profile, run.sizes):,.0f} <= {target.limit(run.sizes):,.0f}" for run in runs]
            met.append(f"{target.what}: {' | '.join(values)}")
        return (f"{self.id}: correct on {len(runs)} cases ({sizes}; the second with {task.adversarial_text}); "
                f"cost targets met: {'; '.join(met)}.")


#: What a lesson's EXERCISES may hold (a lesson lab may add a kind of its own here).
EXERCISE_TYPES = (ValueExercise, ChoiceExercise, FunctionExercise, KernelExercise, TileKernelExercise)
Exercise = ValueExercise | ChoiceExercise | FunctionExercise | KernelExercise | TileKernelExercise
