"""Self-checks for the exercises: ``check("04.2", answer)`` accepts an answer or says why not.

    from course_lib.checks import check, hint
    check("04.1", ridge)        # prints one line when right; raises ExerciseError when wrong
    hint("04.1")                # the first hint; hint("04.1", 2) the next one

Each lesson registers its exercises in ``course_lib/exercise_checks/ex_NN.py`` as a list
``EXERCISES`` of :class:`ValueExercise`, :class:`ChoiceExercise`, :class:`FunctionExercise` and
:class:`KernelExercise` (a ``@cuda.jit`` kernel, run by the kernel lab's tracer).
The expected answers are callables, computed from ``course_lib`` only when a check runs, so no
answer is typed anywhere and importing this module computes nothing.

A wrong answer raises :class:`ExerciseError` (an ``AssertionError``, so nbgrader counts the test
cell as failed). Its message quotes the learner's value, the form the answer should take and the
first hint, never the expected value. A function exercise runs the learner's function on random,
asymmetric inputs whose sizes no block size divides, and names the first input it gets wrong
(with a line that rebuilds that exact input: ``get_exercise(id).cases()[i]``).
In a notebook the error shows as its message alone, without a traceback: it is feedback.
"""

from __future__ import annotations

import copy
import difflib
import functools
import importlib
import inspect
import math
import numbers
import pkgutil
import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = [
    "ExerciseError",
    "ValueExercise",
    "ChoiceExercise",
    "FunctionExercise",
    "KernelExercise",
    "check",
    "hint",
    "get_exercise",
    "list_exercises",
]

#: Exercise ids look like "04.2" (lesson 04, exercise 2); a trailing letter ("04.2b") is allowed.
ID_PATTERN = re.compile(r"^(\d{2})\.(\d+[a-z]?)$")
_CHECKS_PACKAGE = "course_lib.exercise_checks"


class ExerciseError(AssertionError):
    """An answer that does not pass its check (an AssertionError, so graders count it as failed).

    IPython shows it through ``_render_traceback_``: the message alone, no traceback into the
    course library (the cell still fails, and nbgrader still sees the error).
    """

    def _render_traceback_(self):
        lines = str(self).splitlines() or [""]
        return [f"{type(self).__name__}: {lines[0]}"] + lines[1:]


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


def _validate_wrong_answers(kind: str, ex) -> None:
    if ex.wrong_answers is not None and not callable(ex.wrong_answers):
        raise TypeError(f"{kind} {ex.id}: wrong_answers must be None or a callable returning "
                        f"{{description: wrong answer}}, got {type(ex.wrong_answers).__name__}")


def _validate_tol(kind: str, ex_id: str, name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"{kind} {ex_id}: {name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class ValueExercise:
    """An exercise whose answer is a number (or an array of numbers).

    ``expected`` is a zero-argument callable returning the answer; an answer ``a`` passes when
    ``|a - e| <= max(rel_tol * |e|, abs_tol)`` (elementwise, with matching shapes for arrays).
    ``wrong_answers``, optional, is a zero-argument callable returning ``{description: value}``:
    the answers that likely mistakes produce, computed like ``expected``; the course's tests
    assert that each is rejected.
    """

    id: str
    expected: Callable[[], Any]
    rel_tol: float = 1e-6
    abs_tol: float = 0.0
    form: str = ""
    hints: tuple = ()
    wrong_answers: Callable[[], dict] | None = None

    def __post_init__(self):
        _validate_common("ValueExercise", self)
        if not callable(self.expected):
            raise TypeError(f"ValueExercise {self.id}: expected must be a callable computing the "
                            f"answer (for example a lambda), got {type(self.expected).__name__}")
        _validate_wrong_answers("ValueExercise", self)
        _validate_tol("ValueExercise", self.id, "rel_tol", self.rel_tol)
        _validate_tol("ValueExercise", self.id, "abs_tol", self.abs_tol)

    def check(self, answer) -> str:
        """Return a one-line success message, or raise ExerciseError / TypeError / ValueError."""
        want = self.expected()
        if _is_scalar_like(want):
            got = _as_scalar_answer(self, answer)
            if not _close(got, float(want), self.rel_tol, self.abs_tol):
                raise ExerciseError(_failure(self, f"{_short(got)} is not accepted "
                                                   f"({_tolerance_text(self.rel_tol, self.abs_tol)})"
                                                   + _unit_slip_note(got, float(want))))
            return f"{self.id}: correct ({_short(got)})."
        want_arr = np.asarray(want, dtype=float)
        got_arr = _as_array_answer(self, answer, want_arr.shape)
        bad = ~_close_array(got_arr, want_arr, self.rel_tol, self.abs_tol)
        if np.any(bad):
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ExerciseError(_failure(
                self, f"{int(bad.sum())} of {bad.size} entries are not accepted "
                      f"({_tolerance_text(self.rel_tol, self.abs_tol)}); the first is your value "
                      f"{_short(got_arr[where])} at index {where if len(where) > 1 else where[0]}"))
        return f"{self.id}: correct (all {got_arr.size} entries)."


@dataclass(frozen=True)
class ChoiceExercise:
    """An exercise whose answer is one of a few strings (a prediction, a classification).

    Comparison ignores case and surrounding spaces. ``expected`` is a zero-argument callable.
    ``wrong_answers``, optional, is a zero-argument callable returning ``{description: choice}``:
    the choices that likely misconceptions lead to, computed like ``expected``.
    """

    id: str
    expected: Callable[[], str]
    choices: tuple = ()
    form: str = ""
    hints: tuple = ()
    wrong_answers: Callable[[], dict] | None = None

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

    def check(self, answer) -> str:
        if answer is None:
            raise TypeError(f"exercise {self.id} expects {self._form()}; you passed None "
                            f"(did you assign your answer?)")
        if not isinstance(answer, str):
            raise TypeError(f"exercise {self.id} expects a string, one of {list(self.choices)}; "
                            f"you passed {type(answer).__name__} {_short(answer)}")
        keys = {self._key(c): c for c in self.choices}
        if self._key(answer) not in keys:
            raise ValueError(f"exercise {self.id} expects one of {list(self.choices)}; "
                             f"you passed {answer!r}")
        want = self.expected()
        if not isinstance(want, str) or self._key(want) not in keys:
            raise RuntimeError(f"exercise {self.id} is misconfigured: its expected answer is "
                               f"not one of its choices")
        if self._key(answer) != self._key(want):
            raise ExerciseError(_failure(self, f"{answer!r} is not the right choice"))
        return f"{self.id}: correct ({keys[self._key(answer)]!r})."

    def _form(self) -> str:
        return self.form or f"one of {list(self.choices)}"


@dataclass(frozen=True)
class FunctionExercise:
    """An exercise whose answer is a function, compared with ``reference`` on generated cases.

    ``make_cases(rng)`` returns a list of ``(args, kwargs)`` pairs; ``rng`` is
    ``np.random.default_rng(seed)`` with ``seed`` fixed per exercise (the CRC-32 of its id
    unless given), so a failing case can be reproduced. Cases should be random, asymmetric
    and of sizes a block size does not divide.
    """

    id: str
    reference: Callable
    make_cases: Callable[[np.random.Generator], list]
    rel_tol: float = 1e-9
    form: str = ""
    hints: tuple = ()
    abs_tol: float = 0.0
    seed: int | None = None

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

    def check(self, answer) -> str:
        if not callable(answer):
            raise TypeError(f"exercise {self.id} expects a function ({self.form or 'see the task'}); "
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
                raise ExerciseError(self._failure_with_case(
                    f"your function raised {type(exc).__name__}: {exc} when called as {call}",
                    index, len(cases), name)) from exc
            problem = _mismatch(got, want, self.rel_tol, self.abs_tol)
            if problem is not None:
                raise ExerciseError(self._failure_with_case(
                    f"your function returned {_short(got)} for {call}"
                    f"{'' if problem == 'value' else ' (' + problem + ')'}", index, len(cases), name))
        return f"{self.id}: correct on all {len(cases)} test inputs."


    def _failure_with_case(self, what: str, index: int, total: int, name: str) -> str:
        """The failure message, with a line that rebuilds the exact failing input (the one shown
        above may be shortened): the cases come from a fixed seed, so ``cases()[index]`` is it."""
        head, tail = _failure(self, what).split("\n", 1)
        if not name.isidentifier():
            name = "your_function"
        exact = (f"  exact input (case {index} of {total}): from course_lib.checks import get_exercise; "
                 f"args, kwargs = get_exercise({self.id!r}).cases()[{index}]; "
                 f"{name}(*args, **kwargs)")
        return "\n".join([head, exact, tail])


@dataclass(frozen=True)
class KernelExercise:
    """An exercise whose answer is a ``@cuda.jit`` kernel for one task of the kernel lab.

    ``task`` names a :data:`course_lib.kernels.tasks.TASKS` entry, which holds the data, the
    launch, the NumPy reference and the cost targets. The check runs the kernel on the course's
    traced executor (``check_kernel``) on ``cases`` random sizes that no block size divides:
    no fault, no race, every element right, every cost target met. An undecorated Python
    function is accepted too (the tracer runs the Python source either way); the success line
    then says to decorate it. ``course_lib.kernels`` (and numba) is imported only when a check
    runs, so importing this module stays cheap.
    """

    id: str
    task: str
    form: str = ""
    hints: tuple = ()
    cases: int = 2

    def __post_init__(self):
        _validate_common("KernelExercise", self)
        if not isinstance(self.task, str) or not self.task.strip():
            raise TypeError(f"KernelExercise {self.id}: task must name a kernel-lab task, got {self.task!r}")
        if isinstance(self.cases, bool) or not isinstance(self.cases, int) or not 1 <= self.cases <= 5:
            raise ValueError(f"KernelExercise {self.id}: cases must be an int from 1 to 5, got {self.cases!r}")

    def check(self, answer) -> str:
        __tracebackhide__ = True
        fn, decorated = _kernel_function(self, answer)
        from course_lib.kernels.tasks import TASKS, KernelCheckError, check_kernel   # numba: only now
        task = TASKS.get(self.task)
        if task is None:
            raise RuntimeError(f"exercise {self.id} is misconfigured: no kernel task {self.task!r}")
        try:
            runs = check_kernel(task, fn, cases=self.cases)
        except KernelCheckError as exc:
            first, *rest = str(exc).splitlines()
            head, tail = _failure(self, first.rstrip(".")).split("\n", 1)
            raise ExerciseError("\n".join([head, *rest, tail])) from None
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
            for run in runs:
                _, got, limit = target.evaluate(run.profile, run.sizes)
                values.append(f"{target.format(got)} {'>=' if target.at_least else '<='} "
                              f"{target.format(limit)}")
            met.append(f"{target.what}: {' | '.join(values)}")
        note = "" if decorated else "; decorate it with @cuda.jit to launch it"
        return (f"{self.id}: correct and safe on {len(runs)} random sizes ({sizes}); "
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


Exercise = ValueExercise | ChoiceExercise | FunctionExercise | KernelExercise


# --------------------------------------------------------------------------------------------
# Comparison and messages
# --------------------------------------------------------------------------------------------

def _is_scalar_like(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, numbers.Real):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"


def _as_scalar_answer(ex, answer) -> float:
    form = ex.form or "a number"
    if answer is None:
        raise TypeError(f"exercise {ex.id} expects {form}; you passed None (did you assign your answer?)")
    if isinstance(answer, (bool, np.bool_)):
        raise TypeError(f"exercise {ex.id} expects {form}; you passed a bool ({answer})")
    if isinstance(answer, (str, bytes)):
        raise TypeError(f"exercise {ex.id} expects {form}; you passed a string {answer!r}: "
                        f"pass the number itself")
    if isinstance(answer, numbers.Real):
        value = float(answer)
    else:
        try:
            arr = np.asarray(answer)
        except Exception:  # noqa: BLE001 - anything unconvertible is a type problem
            arr = None
        if arr is None or arr.dtype.kind not in "iuf":
            raise TypeError(f"exercise {ex.id} expects {form}; you passed {type(answer).__name__} "
                            f"{_short(answer)}")
        if arr.size != 1:
            raise ValueError(f"exercise {ex.id} expects a single number ({form}); you passed "
                             f"{type(answer).__name__} of shape {arr.shape}")
        value = float(arr.reshape(()))
    if math.isnan(value):
        raise ValueError(f"exercise {ex.id}: your answer is NaN (not a number), often the result of "
                         f"0/0 or of an unset input; expected {form}")
    if math.isinf(value):
        raise ValueError(f"exercise {ex.id}: your answer is infinite ({value}), often a division "
                         f"by zero; expected {form}")
    return value


def _as_array_answer(ex, answer, shape) -> np.ndarray:
    form = ex.form or f"an array of shape {shape}"
    if answer is None or isinstance(answer, (str, bytes, bool, np.bool_)):
        raise TypeError(f"exercise {ex.id} expects {form}; you passed {type(answer).__name__} {_short(answer)}")
    try:
        arr = np.asarray(answer)
    except Exception:  # noqa: BLE001
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise TypeError(f"exercise {ex.id} expects {form} (numbers); you passed "
                        f"{type(answer).__name__} {_short(answer)}")
    if arr.shape != shape:
        raise ValueError(f"exercise {ex.id} expects shape {shape} ({form}); yours has shape {arr.shape}")
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise ValueError(f"exercise {ex.id}: your answer contains NaN at index "
                         f"{tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])}; expected {form}")
    return arr


def _close(got: float, want: float, rel_tol: float, abs_tol: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= max(rel_tol * abs(want), abs_tol)


def _close_array(got: np.ndarray, want: np.ndarray, rel_tol: float, abs_tol: float) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        ok = np.abs(got - want) <= np.maximum(rel_tol * np.abs(want), abs_tol)
        ok |= (got == want)                          # equal infinities
        ok |= np.isnan(got) & np.isnan(want)
    return ok


def _mismatch(got, want, rel_tol, abs_tol) -> str | None:
    """None when ``got`` matches ``want``; otherwise a short reason ('value' for a plain miss)."""
    if want is None:
        return None if got is None else "expected None"
    if isinstance(want, (bool, np.bool_)):
        if not isinstance(got, (bool, np.bool_)):
            return f"expected True or False, got {type(got).__name__}"
        return None if bool(got) == bool(want) else "value"
    if isinstance(want, str):
        if not isinstance(got, str):
            return f"expected a string, got {type(got).__name__}"
        return None if got.strip().lower() == want.strip().lower() else "value"
    if _is_scalar_like(want):
        if isinstance(got, (bool, np.bool_, str)) or got is None:
            return f"expected a number, got {type(got).__name__}"
        try:
            arr = np.asarray(got)
        except Exception:  # noqa: BLE001
            return f"expected a number, got {type(got).__name__}"
        if arr.dtype.kind not in "iuf":
            return f"expected a number, got {type(got).__name__}"
        if arr.size != 1:
            return f"expected a single number, got shape {arr.shape}"
        return None if _close(float(arr.reshape(())), float(want), rel_tol, abs_tol) else "value"
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"expected a dict, got {type(got).__name__}"
        if set(got) != set(want):
            return f"expected the keys {sorted(map(str, want))}"
        for key in want:
            sub = _mismatch(got[key], want[key], rel_tol, abs_tol)
            if sub is not None:
                return f"at key {key!r}: {sub}"
        return None
    want_arr = None
    if isinstance(want, (np.ndarray, list, tuple)):
        try:
            want_arr = np.asarray(want)
        except Exception:  # noqa: BLE001 - ragged: compare item by item below
            want_arr = None
    if want_arr is not None and want_arr.dtype.kind in "iuf":
        try:
            got_arr = np.asarray(got)
        except Exception:  # noqa: BLE001
            return f"expected an array of shape {want_arr.shape}, got {type(got).__name__}"
        if got_arr.dtype.kind not in "iufb" or isinstance(got, (str, bytes)):
            return f"expected numbers of shape {want_arr.shape}, got {type(got).__name__}"
        if got_arr.shape != want_arr.shape:
            return f"expected shape {want_arr.shape}, got shape {got_arr.shape}"
        ok = _close_array(got_arr.astype(float), want_arr.astype(float), rel_tol, abs_tol)
        if np.all(ok):
            return None
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        return f"first wrong entry at index {where}"
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"expected a {type(want).__name__} of {len(want)} items"
        for i, (g, w) in enumerate(zip(got, want)):
            sub = _mismatch(g, w, rel_tol, abs_tol)
            if sub is not None:
                return f"item {i}: {sub}"
        return None
    return None if got == want else "value"


def _tolerance_text(rel_tol: float, abs_tol: float) -> str:
    parts = []
    if rel_tol:
        parts.append(f"relative {rel_tol:.3g}")
    if abs_tol:
        parts.append(f"absolute {abs_tol:.3g}")
    return "tolerance: " + " or ".join(parts) if parts else "an exact answer is needed"


#: Named slips that are not a power of ten: (your value / the answer, what it suggests). Each
#: comes with its inverse; none is near 1, so a right answer is never reported as a slip.
_NAMED_SLIPS = (
    (24.0, "hours where days were asked (a factor of 24)"),
    (1 / 24, "days where hours were asked (a factor of 24)"),
    (3600.0, "seconds where hours were asked (a factor of 3600)"),
    (1 / 3600, "hours where seconds were asked (a factor of 3600)"),
    (86400.0, "seconds where days were asked (a factor of 86,400)"),
    (1 / 86400, "days where seconds were asked (a factor of 86,400)"),
    (60.0, "minutes where hours (or seconds where minutes) were asked (a factor of 60)"),
    (1 / 60, "hours where minutes (or minutes where seconds) were asked (a factor of 60)"),
    (8.0, "bits where bytes were asked (a factor of 8)"),
    (1 / 8, "bytes where bits were asked (a factor of 8)"),
    (2.0, "twice the answer: one link direction against both, or a factor of 2 too many"),
    (0.5, "half the answer: one link direction against both, or a factor of 2 missing"),
    (1.024, "kB (1000 bytes) where KiB (1024 bytes) was asked"),
    (1 / 1.024, "KiB (1024 bytes) where kB (1000 bytes) was asked"),
    (1.024 ** 2, "MB (10^6 bytes) where MiB (2^20 bytes) was asked"),
    (1 / 1.024 ** 2, "MiB (2^20 bytes) where MB (10^6 bytes) was asked"),
    (1.024 ** 3, "GB (10^9 bytes) where GiB (2^30 bytes) was asked"),
    (1 / 1.024 ** 3, "GiB (2^30 bytes) where GB (10^9 bytes) was asked"),
)


def _unit_slip_note(got: float, want: float) -> str:
    """A nudge when the answer is a known unit slip away: a power of ten (or of 1024), hours for
    days, bits for bytes, one link direction for both, KiB for kB. Never for a ratio of 1."""
    if got == 0 or want == 0 or (got > 0) != (want > 0):
        return ""
    ratio = abs(got / want)
    if math.isclose(ratio, 1.0, rel_tol=1e-2):
        return ""
    for factor, phrase in _NAMED_SLIPS:
        if math.isclose(ratio, factor, rel_tol=1e-3):
            return f"; it looks like {phrase}: check the units"
    for base in (10.0, 1024.0):
        k = round(math.log(ratio, base))
        if k != 0 and math.isclose(ratio, base ** k, rel_tol=1e-3):
            return "; it is a power of ten (or of 1024) away from the answer: check the units"
    return ""


def _failure(ex, what: str) -> str:
    lines = [f"exercise {ex.id}: {what}.", f"  expected: {_form_of(ex)}"]
    if ex.hints:
        more = f"   (hint({ex.id!r}, 2) for more)" if len(ex.hints) > 1 else ""
        lines.append(f"  hint 1/{len(ex.hints)}: {ex.hints[0]}{more}")
    return "\n".join(lines)


def _form_of(ex) -> str:
    if isinstance(ex, ChoiceExercise):
        return ex._form()
    return ex.form or "see the exercise text"


def _short(value, limit: int = 90) -> str:
    if isinstance(value, np.ndarray):
        body = np.array2string(value, threshold=6, edgeitems=2, precision=4)
        text = f"array(shape={value.shape}, {body})" if value.ndim else body
    elif isinstance(value, float):
        text = f"{value:.10g}"
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call_text(name: str, args: tuple, kwargs: dict) -> str:
    parts = [_short(a, 60) for a in args] + [f"{k}={_short(v, 60)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


# --------------------------------------------------------------------------------------------
# Registry: every course_lib/exercise_checks/ex_NN.py, imported on first use
# --------------------------------------------------------------------------------------------

def _module_names() -> list[str]:
    package = importlib.import_module(_CHECKS_PACKAGE)
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("ex_"))


@functools.lru_cache(maxsize=None)
def _load_module(name: str) -> dict:
    """The exercises one ``ex_NN`` module registers, by id, after checking them."""
    module = importlib.import_module(f"{_CHECKS_PACKAGE}.{name}")
    exercises = getattr(module, "EXERCISES", None)
    if not isinstance(exercises, (list, tuple)):
        raise RuntimeError(f"{module.__name__} must define EXERCISES, a list of exercises")
    lesson = name[3:]
    table = {}
    for ex in exercises:
        if not isinstance(ex, (ValueExercise, ChoiceExercise, FunctionExercise, KernelExercise)):
            raise RuntimeError(f"{module.__name__}: EXERCISES holds a {type(ex).__name__}, not a "
                               f"ValueExercise, ChoiceExercise, FunctionExercise or KernelExercise")
        if ex.id.split(".")[0] != lesson:
            raise RuntimeError(f"{module.__name__}: exercise {ex.id} belongs in ex_{ex.id.split('.')[0]}.py")
        if ex.id in table:
            raise RuntimeError(f"{module.__name__}: exercise id {ex.id} is registered twice")
        table[ex.id] = ex
    return table


def _all_exercises() -> dict:
    table = {}
    for name in _module_names():
        table.update(_load_module(name))
    return table


def get_exercise(exercise_id):
    """The registered exercise with this id; a clear error naming close ids when unknown."""
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a string such as '04.2', got "
                        f"{type(exercise_id).__name__} {exercise_id!r}")
    key = exercise_id.strip()
    match = ID_PATTERN.match(key)
    if match and f"ex_{match.group(1)}" in _module_names():
        table = _load_module(f"ex_{match.group(1)}")
        if key in table:
            return table[key]
    known = _all_exercises()
    if key in known:
        return known[key]
    close = difflib.get_close_matches(key, list(known), n=4, cutoff=0.5)
    same_lesson = [i for i in known if match and i.startswith(match.group(1) + ".")]
    suggestions = list(dict.fromkeys(close + same_lesson))
    did_you_mean = f" Did you mean {', '.join(map(repr, suggestions))}?" if suggestions else ""
    if not match:
        did_you_mean = " Ids look like '04.2' (lesson 04, exercise 2)." + did_you_mean
    raise ValueError(f"unknown exercise id {exercise_id!r}.{did_you_mean}")


def list_exercises() -> list[str]:
    """Every registered exercise id, in lesson and exercise order."""
    def order(ex_id):
        lesson, number = ex_id.split(".")
        digits = re.match(r"\d+", number).group()
        return int(lesson), int(digits), number
    return sorted(_all_exercises(), key=order)


# --------------------------------------------------------------------------------------------
# The two calls learners make
# --------------------------------------------------------------------------------------------

def check(exercise_id, answer) -> None:
    """Check ``answer`` for exercise ``exercise_id``: print one line when right, raise otherwise.

    Raises :class:`ExerciseError` for a wrong answer (with your value, the expected form and the
    first hint), TypeError/ValueError for an answer of the wrong type or shape, or NaN, and
    ValueError for an unknown id.
    """
    __tracebackhide__ = True  # IPython and pytest hide this frame: the learner's cell is what matters
    print(get_exercise(exercise_id).check(answer))


class Hint(str):
    """A hint's text; shows without quotes when it is the last value of a notebook cell."""

    def _repr_pretty_(self, printer, cycle):  # IPython's display hook
        printer.text(str(self))


def hint(exercise_id, level=1) -> Hint:
    """Hint number ``level`` (1 = gentlest) for an exercise; past the last, the last one with a note."""
    ex = get_exercise(exercise_id)
    if isinstance(level, bool) or not isinstance(level, numbers.Integral):
        raise TypeError(f"level must be an integer >= 1, got {type(level).__name__} {level!r}")
    level = int(level)
    if level < 1:
        raise ValueError(f"level must be >= 1 (1 is the first hint), got {level}")
    total = len(ex.hints)
    if total == 0:
        return Hint(f"exercise {ex.id} has no hints; expected: {_form_of(ex)}")
    if level > total:
        return Hint(f"hint {total}/{total} for {ex.id} (there is no hint {level}; this is the last): "
                    f"{ex.hints[-1]}")
    more = f"   (hint({ex.id!r}, {level + 1}) for more)" if level < total else ""
    return Hint(f"hint {level}/{total} for {ex.id}: {ex.hints[level - 1]}{more}")
