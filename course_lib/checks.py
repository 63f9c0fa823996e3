"""Self-checks for the exercises: ``check("04.2", answer)`` accepts an answer or says why not.

    from course_lib.checks import check, hint, variant
    check("04.1", ridge)        # prints one line with a mark when right; raises ExerciseError when wrong
    hint("04.1")                # the first hint; hint("04.1", 2) the next one
    variant("04.2")             # your own numbers, for an exercise that has variants

Each lesson registers its exercises in ``course_lib/exercise_checks/ex_NN.py`` as a list
``EXERCISES`` of :class:`ValueExercise`, :class:`ChoiceExercise`, :class:`FunctionExercise` and
:class:`KernelExercise` (a ``@cuda.jit`` kernel, run by the kernel lab's tracer).
The expected answers are callables, computed from ``course_lib`` only when a check runs, so no
answer is typed anywhere and importing this module computes nothing.

A wrong answer raises :class:`ExerciseError` (an ``AssertionError``, so nbgrader counts the test
cell as failed). Its message quotes the learner's value, the form the answer should take, the
misconception the answer matches if one does, and a hint, never the expected value. In a notebook
it shows as that short message under a mark, without a traceback (IPython asks the exception
for ``_render_traceback_``): it is feedback. A function exercise runs the learner's function on
random, asymmetric inputs whose sizes no block size divides, and names the first input it gets
wrong (with a line that rebuilds that exact input: ``get_exercise(id).cases()[i]``).

How an exercise declares what it teaches (see ``ex_04.py`` for a complete lesson):

* ``concepts=("intensity", "ridge-point")``: tags from the lesson's fixed list,
  ``course_lib.exercise_checks.CONCEPTS["04"]``; the mastery map (``course_lib.mastery``) counts
  exercises per concept.
* ``wrong_answers=f`` (value and choice exercises): ``f(**params)`` returns
  ``{Misconception: the wrong answer it produces}``, computed from ``course_lib`` like the right
  answer. A :class:`Misconception` is a key, one sentence naming it, the lesson and section that
  corrects it (a real ``## heading`` of ``notebooks/NN_*.py``) and a hint that follows the mistake.
  Shared ones (bits for bytes, hours for days, one link direction, sparse peak, ...) live in
  ``course_lib.exercise_checks.misconceptions``. When an answer matches one (within the
  exercise's tolerance, at least 0.1 %), ``check`` names it, points to the section and gives its
  hint; the course's tests assert that every listed wrong answer is rejected and recognised.
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
import difflib
import functools
import hashlib
import importlib
import inspect
import json
import math
import numbers
import os
import pkgutil
import re
import time
import traceback
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = [
    "ExerciseError",
    "ValueExercise",
    "ChoiceExercise",
    "FunctionExercise",
    "KernelExercise",
    "Misconception",
    "Variants",
    "Variant",
    "check",
    "hint",
    "variant",
    "learner_identity",
    "get_exercise",
    "list_exercises",
]

#: Exercise ids look like "04.2" (lesson 04, exercise 2); a trailing letter ("04.2b") is allowed.
ID_PATTERN = re.compile(r"^(\d{2})\.(\d+[a-z]?)$")
_CHECKS_PACKAGE = "course_lib.exercise_checks"


#: The marks a result starts with: right, and not (yet) right.
MARK_RIGHT, MARK_WRONG = "\u2713", "\u2717"


class _Feedback:
    """Mixin: IPython shows the exception through ``_render_traceback_`` as a mark and the
    message alone, with no traceback into the course library (the cell still fails, and nbgrader
    still scores it as failed)."""

    def _render_traceback_(self):
        lines = str(self).splitlines() or [""]
        return [f"{MARK_WRONG} {lines[0]}"] + lines[1:]


class ExerciseError(_Feedback, AssertionError):
    """An answer that does not pass its check (an AssertionError, so graders count it as failed).

    ``exercise_id`` and ``misconception`` (the :class:`Misconception` the answer matched, or
    None) are kept for the mastery map.
    """

    def __init__(self, message="", exercise_id=None, misconception=None):
        super().__init__(message)
        self.exercise_id = exercise_id
        self.misconception = misconception


class AnswerTypeError(_Feedback, TypeError):
    """An answer of the wrong type (a number where a string was expected...): short feedback too."""


class AnswerValueError(_Feedback, ValueError):
    """An answer of the wrong shape, NaN, or outside the choices: short feedback too."""


# --------------------------------------------------------------------------------------------
# Misconceptions and per-learner variants
# --------------------------------------------------------------------------------------------

_KEY_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Misconception:
    """A known mistake: ``key`` (stable, for logs), ``text`` (one sentence naming it),
    ``lesson`` and ``section`` (a ``## heading`` of that lesson, without the hashes), and
    ``hint`` (what to look at, following the mistake; never the answer)."""

    key: str
    text: str
    lesson: str
    section: str
    hint: str

    def __post_init__(self):
        if not isinstance(self.key, str) or not _KEY_PATTERN.match(self.key):
            raise ValueError(f"Misconception key must be lower-case words joined by '-', got {self.key!r}")
        if not isinstance(self.lesson, str) or not re.fullmatch(r"\d{2}", self.lesson):
            raise ValueError(f"Misconception {self.key}: lesson must be two digits such as '04', "
                             f"got {self.lesson!r}")
        for name in ("text", "section", "hint"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"Misconception {self.key}: {name} must be a non-empty string")

    @property
    def where(self) -> str:
        return f"Lesson {self.lesson}, section '{self.section}'"


@dataclass(frozen=True)
class Variants:
    """Per-learner numbers: ``options`` are dicts with the same keys (``options[0]`` is the
    course's default), ``statement`` a format string over those keys that says what the learner's
    numbers are."""

    options: tuple
    statement: str

    def __post_init__(self):
        options = tuple(self.options)
        if len(options) < 2 or not all(isinstance(o, dict) and o for o in options):
            raise ValueError("Variants: options must be at least two non-empty dicts")
        keys = set(options[0])
        if any(set(o) != keys for o in options):
            raise ValueError(f"Variants: every option must have the keys {sorted(keys)}")
        if len({json.dumps(o, sort_keys=True, default=str) for o in options}) != len(options):
            raise ValueError("Variants: options must differ")
        if not all(isinstance(k, str) and k.isidentifier() for k in keys):
            raise ValueError("Variants: option keys must be Python identifiers")
        for option in options:
            self.statement.format(**option)           # a missing field fails here, not in a check
        object.__setattr__(self, "options", options)


class Variant(dict):
    """One learner's numbers for an exercise: a dict that also reads as attributes
    (``v.accelerator``) and shows as its statement."""

    def __init__(self, exercise_id, params, statement, identity):
        super().__init__(params)
        self.exercise_id = exercise_id
        self.identity = identity
        self.statement = statement

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"variant {self.exercise_id} has no {name!r}; it has "
                                 f"{sorted(self)}") from None

    def __str__(self):
        who = (f"your numbers (learner {self.identity!r})" if self.identity
               else "the course's numbers (no learner id set)")
        return f"Exercise {self.exercise_id}, {who}: {self.statement}"

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))


def _autograde_student() -> str | None:
    """nbgrader runs a submission in ``autograded/<student>/<assignment>/``: the student's id."""
    if os.environ.get("NBGRADER_EXECUTION") != "autograde":
        return None
    try:
        here = Path.cwd()
    except OSError:
        return None
    return here.parent.name if here.parent.parent.name == "autograded" else None


def learner_identity() -> str | None:
    """Who is working: ``COURSE_LEARNER_ID``, else ``NBGRADER_STUDENT_ID``, else the student
    nbgrader is autograding, else ``JUPYTERHUB_USER``; None when none is set."""
    for source in (os.environ.get("COURSE_LEARNER_ID"), os.environ.get("NBGRADER_STUDENT_ID"),
                   _autograde_student(), os.environ.get("JUPYTERHUB_USER")):
        if source and source.strip():
            return source.strip()
    return None


def _pick(exercise_id: str, n: int, identity: str | None) -> int:
    """A stable choice among ``n`` options (SHA-256, not Python's salted hash); 0 without identity."""
    if not identity:
        return 0
    digest = hashlib.sha256(f"{exercise_id}|{identity}".encode()).hexdigest()
    return int(digest, 16) % n


_NO_LEARNER = object()


def _resolve(learner):
    if learner is _NO_LEARNER:
        return learner_identity()
    if learner is not None and not isinstance(learner, str):
        raise TypeError(f"learner must be a string (a name or id) or None, got {type(learner).__name__} "
                        f"{learner!r:.40}")
    return learner or None


def _params(ex, learner=_NO_LEARNER) -> dict:
    variants = getattr(ex, "variants", None)
    if variants is None:
        return {}
    return dict(variants.options[_pick(ex.id, len(variants.options), _resolve(learner))])


def _fill(ex, text: str, params: dict) -> str:
    """``text`` with the learner's numbers filled in (only for variant exercises)."""
    return text.format(**params) if params else text


def variant(exercise_id, learner=_NO_LEARNER) -> Variant:
    """Your numbers for a variant exercise: print it in the exercise cell, compute from it.

    ``learner`` overrides the identity (``None``: the course's default numbers).
    """
    ex = get_exercise(exercise_id)
    if getattr(ex, "variants", None) is None:
        raise AnswerValueError(f"exercise {ex.id} has no variants: its numbers are in its statement")
    identity = _resolve(learner)
    params = _params(ex, identity)
    return Variant(ex.id, params, ex.variants.statement.format(**params), identity)


def _log_misconception(ex_id: str, misconception: Misconception, learner) -> None:
    """Append one line to the misconception log; any failure is ignored (a check never fails
    because a log could not be written)."""
    try:
        home = os.environ.get("COURSE_HOME") or os.path.join(os.path.expanduser("~"), ".course")
        path = Path(home) / "misconceptions.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > 1_000_000:      # bounded: keep the newest half
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            path.write_text("\n".join(lines[len(lines) // 2:]) + "\n", encoding="utf-8")
        record = {"time": round(time.time()), "exercise": ex_id, "misconception": misconception.key,
                  "learner": learner or ""}
        if path.exists():                 # the same mistake re-checked (a re-run, `make progress`):
            with open(path, "rb") as handle:                  # once, until something else happens
                handle.seek(max(0, path.stat().st_size - 8192))
                recent = handle.read().decode("utf-8", errors="replace").splitlines()[-50:]
            same = {k: record[k] for k in ("exercise", "misconception", "learner")}
            for line in recent:
                try:
                    old = json.loads(line)
                except ValueError:
                    continue
                if isinstance(old, dict) and all(old.get(k) == v for k, v in same.items()):
                    return
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    except Exception:  # noqa: BLE001 - logging is best effort, never feedback's problem
        pass


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

    def __post_init__(self):
        _validate_common("ValueExercise", self)
        if not callable(self.expected):
            raise TypeError(f"ValueExercise {self.id}: expected must be a callable computing the "
                            f"answer (for example a lambda), got {type(self.expected).__name__}")
        _validate_wrong_answers("ValueExercise", self)
        _validate_tol("ValueExercise", self.id, "rel_tol", self.rel_tol)
        _validate_tol("ValueExercise", self.id, "abs_tol", self.abs_tol)

    def answer(self, learner=_NO_LEARNER):
        """The expected answer for ``learner`` (default: the current identity)."""
        return self.expected(**_params(self, learner))

    def check(self, answer, learner=_NO_LEARNER) -> str:
        """Return a one-line success message, or raise ExerciseError / TypeError / ValueError."""
        params = _params(self, learner)
        want = self.expected(**params)
        if _is_scalar_like(want):
            got = _as_scalar_answer(self, answer, params)
            if not _close(got, float(want), self.rel_tol, self.abs_tol):
                what = (f"your answer {_short(got)} is not accepted "
                        f"({_tolerance_text(self.rel_tol, self.abs_tol)})")
                found = _scalar_misconceptions(self, params, got)
                note = "" if found else (_unit_slip_note(got, float(want)) or _close_note(got, float(want)))
                raise _error(self, what + note, params, found)
            return f"{self.id}: correct ({_short(got)})."
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
    concepts: tuple = ()

    def __post_init__(self):
        _validate_common("KernelExercise", self)
        if not isinstance(self.task, str) or not self.task.strip():
            raise TypeError(f"KernelExercise {self.id}: task must name a kernel-lab task, got {self.task!r}")
        if isinstance(self.cases, bool) or not isinstance(self.cases, int) or not 1 <= self.cases <= 5:
            raise ValueError(f"KernelExercise {self.id}: cases must be an int from 1 to 5, got {self.cases!r}")

    def check(self, answer, learner=_NO_LEARNER) -> str:
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
            raise ExerciseError("\n".join([head, *rest, tail]), self.id) from None
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


def _as_scalar_answer(ex, answer, params=None) -> float:
    form = _form_of(ex, params or {}) if ex.form else "a number"
    if answer is None:
        raise AnswerTypeError(f"exercise {ex.id} expects {form}; you passed None (did you assign your answer?)")
    if isinstance(answer, (bool, np.bool_)):
        raise AnswerTypeError(f"exercise {ex.id} expects {form}; you passed a bool ({answer})")
    if isinstance(answer, (str, bytes)):
        raise AnswerTypeError(f"exercise {ex.id} expects {form}; you passed a string {answer!r}: "
                        f"pass the number itself")
    if isinstance(answer, numbers.Real):
        value = float(answer)
    else:
        try:
            arr = np.asarray(answer)
        except Exception:  # noqa: BLE001 - anything unconvertible is a type problem
            arr = None
        if arr is None or arr.dtype.kind not in "iuf":
            raise AnswerTypeError(f"exercise {ex.id} expects {form}; you passed {type(answer).__name__} "
                            f"{_short(answer)}")
        if arr.size != 1:
            raise AnswerValueError(f"exercise {ex.id} expects a single number ({form}); you passed "
                             f"{type(answer).__name__} of shape {arr.shape}")
        value = float(arr.reshape(()))
    if math.isnan(value):
        raise AnswerValueError(f"exercise {ex.id}: your answer is NaN (not a number), often the result of "
                         f"0/0 or of an unset input; expected {form}")
    if math.isinf(value):
        raise AnswerValueError(f"exercise {ex.id}: your answer is infinite ({value}), often a division "
                         f"by zero; expected {form}")
    return value


def _as_array_answer(ex, answer, shape, params=None) -> np.ndarray:
    form = _form_of(ex, params or {}) if ex.form else f"an array of shape {shape}"
    if answer is None or isinstance(answer, (str, bytes, bool, np.bool_)):
        raise AnswerTypeError(f"exercise {ex.id} expects {form}; you passed {type(answer).__name__} {_short(answer)}")
    try:
        arr = np.asarray(answer)
    except Exception:  # noqa: BLE001
        arr = None
    if arr is None or arr.dtype.kind not in "iuf":
        raise AnswerTypeError(f"exercise {ex.id} expects {form} (numbers); you passed "
                        f"{type(answer).__name__} {_short(answer)}")
    if arr.shape != shape:
        raise AnswerValueError(f"exercise {ex.id} expects shape {shape} ({form}); yours has shape {arr.shape}")
    arr = arr.astype(float)
    if np.any(np.isnan(arr)):
        raise AnswerValueError(f"exercise {ex.id}: your answer contains NaN at index "
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


def _close_note(got: float, want: float) -> str:
    """A nudge for an answer within 1 % of the expected one that the tolerance still rejects:
    usually a value copied back from a rounded printout, sometimes a small term left out."""
    if want == 0 or not math.isclose(got, want, rel_tol=1e-2):
        return ""
    return ("; it is within 1 % of the answer: if you copied a rounded printout, pass the unrounded "
            "variable; if not, a small term is missing")


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


def _failure(ex, what: str, params=None, found=()) -> str:
    """The feedback: what is wrong, the learner's numbers (a variant), the expected form, the
    misconception the answer matches (with where the lesson corrects it) and a hint."""
    params = params or {}
    lines = [f"exercise {ex.id}: {what}."]
    if params:
        lines.append(f"  your numbers: {ex.variants.statement.format(**params)}")
    lines.append(f"  expected: {_form_of(ex, params)}")
    for index, misconception in enumerate(found[:2]):      # one answer two mistakes give: both
        label = "misconception" if index == 0 else "or perhaps"
        lines.append(f"  {label}: {misconception.text} [misconception: {misconception.key}]")
        lines.append(f"  read again: {misconception.where}")
    if found:
        lines.append(f"  hint: {_fill(ex, found[0].hint, params)}")
        if ex.hints:
            lines.append(f"  (more hints: hint({ex.id!r}))")
    elif ex.hints:
        more = f"   (hint({ex.id!r}, 2) for more)" if len(ex.hints) > 1 else ""
        lines.append(f"  hint 1/{len(ex.hints)}: {_fill(ex, ex.hints[0], params)}{more}")
    return "\n".join(lines)


def _error(ex, what: str, params=None, found=()) -> ExerciseError:
    found = list(found)
    return ExerciseError(_failure(ex, what, params, found), ex.id, found[0] if found else None)


def _matching_misconceptions(ex, params: dict, matches) -> list:
    """The misconceptions whose wrong answer ``matches`` accepts (the learner's answer is one)."""
    if ex.wrong_answers is None:
        return []
    found = []
    for misconception, value in ex.wrong_answers(**params).items():
        try:
            if matches(value):
                found.append(_as_misconception(ex, misconception))
        except Exception:  # noqa: BLE001 - an uncomparable wrong answer matches nothing
            continue
    return found


def _scalar_misconceptions(ex, params: dict, got: float) -> list:
    """The misconceptions whose listed wrong answer the number ``got`` matches (within the
    exercise's tolerance, and never tighter than 0.1 %)."""
    return _matching_misconceptions(ex, params, lambda w: _is_scalar_like(w) and _close(
        got, float(w), max(ex.rel_tol, 1e-3), ex.abs_tol))


def _as_misconception(ex, described) -> Misconception:
    """A listed wrong answer's misconception; a plain description (the older form, before an
    exercise adopts Misconception) is named as it stands, pointing at the lesson's Misconceptions."""
    if isinstance(described, Misconception):
        return described
    text = str(described).strip() or "a likely mistake"
    key = "-".join(re.findall(r"[a-z0-9]+", text.lower())[:6]) or "unnamed"
    hint = ex.hints[0] if ex.hints else "Read the exercise again: which quantity, in which unit?"
    return Misconception(key, text[0].upper() + text[1:] + ("" if text.endswith(".") else "."),
                         ex.id[:2], "Misconceptions", hint)


def _learner_line(exc: BaseException) -> str:
    """Where in the learner's own code an exception was raised (not in the course library)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(here)]
    if not frames:
        return ""
    frame = frames[-1]
    code = f": {frame.line.strip()}" if frame.line else ""
    return f", at line {frame.lineno} of {frame.name}{code}"


def _form_of(ex, params=None) -> str:
    if isinstance(ex, ChoiceExercise):
        return _fill(ex, ex._form(), params or {})
    return _fill(ex, ex.form, params or {}) if ex.form else "see the exercise text"


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
        unknown = set(ex.concepts) - set(_lesson_concepts(lesson))
        if unknown:
            raise RuntimeError(f"{module.__name__}: exercise {ex.id} names concepts {sorted(unknown)} "
                               f"that lesson {lesson} does not list in "
                               f"course_lib.exercise_checks.CONCEPTS[{lesson!r}]")
        table[ex.id] = ex
    return table


def _lesson_concepts(lesson: str) -> dict:
    package = importlib.import_module(_CHECKS_PACKAGE)
    return getattr(package, "CONCEPTS", {}).get(lesson, {})


def _all_exercises() -> dict:
    table = {}
    for name in _module_names():
        table.update(_load_module(name))
    return table


def get_exercise(exercise_id):
    """The registered exercise with this id; a clear error naming close ids when unknown."""
    if not isinstance(exercise_id, str):
        raise AnswerTypeError(f"exercise_id must be a string such as '04.2', got "
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
    raise AnswerValueError(f"unknown exercise id {exercise_id!r}.{did_you_mean}")


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

    Raises :class:`ExerciseError` for a wrong answer (with your value, the expected form, the
    misconception it matches if any, and a hint), TypeError/ValueError for an answer of the wrong
    type or shape, or NaN, and ValueError for an unknown id. Variant exercises use your numbers
    (:func:`variant`).
    """
    __tracebackhide__ = True  # IPython and pytest hide this frame: the learner's cell is what matters
    identity = learner_identity()
    try:
        message = get_exercise(exercise_id).check(answer, identity)
    except ExerciseError as error:
        if error.misconception is not None and not os.environ.get("NBGRADER_EXECUTION"):
            _log_misconception(error.exercise_id, error.misconception, identity)   # not the grader's home
        raise
    print(f"{MARK_RIGHT} {message}")


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
    params = _params(ex)
    if total == 0:
        return Hint(f"exercise {ex.id} has no hints; expected: {_form_of(ex, params)}")
    if level > total:
        return Hint(f"hint {total}/{total} for {ex.id} (there is no hint {level}; this is the last): "
                    f"{_fill(ex, ex.hints[-1], params)}")
    more = f"   (hint({ex.id!r}, {level + 1}) for more)" if level < total else ""
    return Hint(f"hint {level}/{total} for {ex.id}: {_fill(ex, ex.hints[level - 1], params)}{more}")
