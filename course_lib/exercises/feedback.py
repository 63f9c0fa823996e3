"""What a learner reads when an answer is wrong: the errors, the misconceptions, the messages.

A wrong answer raises :class:`ExerciseError` (an ``AssertionError``, so nbgrader counts the check
cell as failed). Its message quotes the learner's value, the form the answer should take, the
misconception it matches if one does (a :class:`Misconception`: one sentence, the lesson section
that corrects it, a hint that follows the mistake) and a hint, never the expected value. IPython
shows it through ``_render_traceback_``: a mark and the message, no traceback into the library.
"""

from __future__ import annotations

import itertools
import math
import numbers
import os
import re
import traceback
from dataclasses import dataclass

import numpy as np

from course_lib.exercises.variants import _fill

__all__ = ["ExerciseError", "AnswerTypeError", "AnswerValueError", "Misconception", "MARK_RIGHT", "MARK_WRONG",
           "QUANTITY_KINDS", "quantity_kinds"]

#: Exercise ids look like "04.2" (lesson 04, exercise 2); a trailing letter ("04.2b") is allowed.
ID_PATTERN = re.compile(r"^(\d{2})\.(\d+[a-z]?)$")


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


#: The kinds of quantity a unit slip can belong to, read from an exercise's ``form`` (or given as
#: its ``quantity``): a time, an amount of data (bytes, or bytes per second), a fraction, or some
#: other quantity with a unit that takes a prefix (FLOP, dollars, parameters). Counts, integers,
#: exponents and ratios have none: no unit slip is suggested for them.
QUANTITY_KINDS = ("time", "data", "fraction", "unit")

_KIND_PATTERNS = (
    ("time", re.compile(r"\b((?i:seconds?|microseconds?|milliseconds?|minutes?|hours?|days?|weeks?)|(?<!/)s|ms|us)\b")),
    ("data", re.compile(r"\b(bytes?|kB|KiB|MB|MiB|GB|GiB|TB|TB/s|GB/s)\b")),
    ("fraction", re.compile(r"\b(fraction|between 0 and 1)\b", re.I)),
    ("unit", re.compile(r"\b(FLOP|dollars?|parameters|tokens per second)\b", re.I)),
)


def quantity_kinds(ex) -> tuple:
    """The kinds of quantity ``ex``'s answer is (see :data:`QUANTITY_KINDS`): its ``quantity`` when
    given, else read from its form; an integer answer, a ratio or an exponent has none."""
    given = getattr(ex, "quantity", None)
    if given is not None:
        return (given,) if isinstance(given, str) else tuple(given)
    form = getattr(ex, "form", "") or ""
    head = form.split(":", 1)[0].lower()
    if "integer" in head or "ratio" in form.lower():
        return ()
    return tuple(kind for kind, pattern in _KIND_PATTERNS if pattern.search(form))


#: Named unit slips that are not a power of ten: (your value / the answer, what it suggests, the
#: kinds of quantity it can happen to). Each comes with its inverse; none is near 1, so a right
#: answer is never reported as a slip. The phrases name the slip, never the factor: a learner who
#: made no such slip cannot read the answer off the message.
_NAMED_SLIPS = (
    (24.0, "hours where days were asked", ("time",)),
    (1 / 24, "days where hours were asked", ("time",)),
    (3600.0, "seconds where hours were asked", ("time",)),
    (1 / 3600, "hours where seconds were asked", ("time",)),
    (86400.0, "seconds where days were asked", ("time",)),
    (1 / 86400, "days where seconds were asked", ("time",)),
    (7.0, "days where weeks were asked", ("time",)),
    (1 / 7, "weeks where days were asked", ("time",)),
    (60.0, "minutes where hours (or seconds where minutes) were asked", ("time",)),
    (1 / 60, "hours where minutes (or minutes where seconds) were asked", ("time",)),
    (8.0, "bits where bytes were asked", ("data",)),
    (1 / 8, "bytes where bits were asked", ("data",)),
    (100.0, "a percent where a fraction was asked", ("fraction",)),
    (1 / 100, "a fraction where a percent was asked", ("fraction",)),
    (1.024, "kB (1000 bytes) where KiB (1024 bytes) was asked", ("data",)),
    (1 / 1.024, "KiB (1024 bytes) where kB (1000 bytes) was asked", ("data",)),
    (1.024 ** 2, "MB (10^6 bytes) where MiB (2^20 bytes) was asked", ("data",)),
    (1 / 1.024 ** 2, "MiB (2^20 bytes) where MB (10^6 bytes) was asked", ("data",)),
    (1.024 ** 3, "GB (10^9 bytes) where GiB (2^30 bytes) was asked", ("data",)),
    (1 / 1.024 ** 3, "GiB (2^30 bytes) where GB (10^9 bytes) was asked", ("data",)),
    (1.024 ** 4, "TB (10^12 bytes) where TiB (2^40 bytes) was asked, or TB/s read as TiB/s", ("data",)),
    (1 / 1.024 ** 4, "TiB (2^40 bytes) where TB (10^12 bytes) was asked, or TiB/s read as TB/s", ("data",)),
)

#: What a slip by a power of ten (or, for data, of 1024) suggests, for each kind of quantity.
_PREFIX_SLIPS = {
    "time": "a unit slip (s, ms, us, or a prefix)",
    "data": "a unit slip (a prefix such as k, M, G, or KiB against kB)",
    "unit": "a unit slip (a prefix such as k, M, G, or billions against units)",
}


def _close_note(got: float, want: float) -> str:
    """A nudge for an answer within 1 % of the expected one that the tolerance still rejects:
    usually a value copied back from a rounded printout, sometimes a small term left out."""
    if want == 0 or not math.isclose(got, want, rel_tol=1e-2):
        return ""
    return ("; it is close (within 1 %): if you copied a rounded printout, pass the unrounded "
            "variable; if not, check that every term the task names is in your count")


def _unit_slip_note(got: float, want: float, kinds=("time", "data", "unit")) -> str:
    """A nudge when the answer is a unit slip away that can happen to a quantity of ``kinds``:
    hours for days (a time), bits for bytes or KiB for kB (data), a percent for a fraction, a
    power of ten (any quantity with a unit). Never for a ratio of 1, never for a quantity with
    no unit (``kinds`` empty), and never naming the factor."""
    kinds = tuple(kinds)
    if not kinds or got == 0 or want == 0 or (got > 0) != (want > 0):
        return ""
    ratio = abs(got / want)
    if math.isclose(ratio, 1.0, rel_tol=1e-2):
        return ""
    for factor, phrase, applies in _NAMED_SLIPS:
        if set(applies) & set(kinds) and math.isclose(ratio, factor, rel_tol=1e-3):
            return f"; it looks like {phrase}: check the units"
    prefixed = [kind for kind in kinds if kind in _PREFIX_SLIPS]
    if prefixed:
        for base in ((10.0, 1024.0) if "data" in prefixed else (10.0,)):
            k = round(math.log(ratio, base))
            if k != 0 and math.isclose(ratio, base ** k, rel_tol=1e-3):
                return f"; it looks like {_PREFIX_SLIPS[prefixed[0]]}: check the unit the exercise asks for"
    return ""


def _failure(ex, what: str, params=None, found=()) -> str:
    """The feedback: what is wrong, the learner's numbers (a variant), the expected form, the
    misconception the answer matches (with where the lesson corrects it) and a hint."""
    params = params or {}
    lines = [f"exercise {ex.id}: {what}."]
    if params:
        lines.append(f"  your numbers: {ex.variants.statement.format(**params)}")
    lines.append(f"  expected: {_form_of(ex, params)}")
    for index, misconception in enumerate(found[:3]):      # one answer several mistakes give: each
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


def _scalar_misconceptions(ex, params: dict, got: float, want=None) -> list:
    """The misconceptions whose listed wrong answer the number ``got`` matches: within the
    exercise's tolerance (never tighter than 0.1 %) and, when ``want`` is given, nearer to ``got``
    than the answer is. The nearest come first; wrong answers that are equal keep the order the
    exercise lists them in, the more likely first."""
    if ex.wrong_answers is None:
        return []
    scored = []
    for misconception, value in ex.wrong_answers(**params).items():
        try:
            if not _is_scalar_like(value):
                continue
            w = float(value)
            if not _close(got, w, max(ex.rel_tol, 1e-3), ex.abs_tol):
                continue
            if want is not None and not abs(got - w) < abs(got - float(want)):
                continue
        except Exception:  # noqa: BLE001 - an uncomparable wrong answer matches nothing
            continue
        scored.append((abs(got - w), len(scored), _as_misconception(ex, misconception)))
    return [m for _, _, m in sorted(scored, key=lambda t: (t[0], t[1]))]


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
    if callable(getattr(ex, "_form", None)):          # a choice exercise lists its choices
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
# Wrong answers generated, not listed: mistakes nobody wrote down, computed like the answer
# --------------------------------------------------------------------------------------------

def _add_generated(listed: dict, generated: dict, answer, rel_tol: float = 0.0, abs_tol: float = 0.0,
                   alone: bool = False) -> dict:
    """``listed`` with the ``generated`` wrong answers ({Misconception: value}) added after it: a
    generated value is kept only when it is a number, not within the tolerance (at least 0.1 %)
    of the answer, and matched by fewer than three wrong answers already kept, so that every kept
    one is still named (up to three candidates are shown for one value). The listed ones, the
    likelier, come first; a generated one never displaces them. ``alone``: a generated value is kept
    only where no kept wrong answer matches it yet (a _replayed step, see ``steps``, names a value
    no one named)."""
    out = dict(listed)
    tol = max(rel_tol, 1e-3)
    try:
        want = float(answer)
    except (TypeError, ValueError):
        return out
    keys = {getattr(m, "key", None) for m in out}
    for misconception, value in generated.items():
        if misconception in out or getattr(misconception, "key", None) in keys or not _is_scalar_like(value):
            continue
        w = float(value)
        if not math.isfinite(w) or _close(w, want, tol, abs_tol):
            continue
        near = [m for m, v in out.items() if _is_scalar_like(v) and _close(w, float(v), tol, abs_tol)]
        if any(misconception.key.startswith(getattr(m, "key", "") + "-") for m in near):
            continue                   # the same mistake, said more exactly: 'other-accelerator-h200'
        if len(near) < (1 if alone else 3):
            out[misconception] = w
            keys.add(misconception.key)
    return out


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _default_variant_answers(ex_id: str, variants, expected, params: dict) -> dict:
    """The wrong answers of a learner who used the course's default numbers (``options[0]``, the
    ones the task text and the lesson's worked example show) in place of some or all of their own:
    {Misconception: the answer those numbers give}. Empty for the default learner."""
    default = variants.options[0]
    differ = [k for k in default if params.get(k) != default[k]]
    if not differ:
        return {}
    hint = (f"Print variant({ex_id!r}) and compute from the numbers it gives you; the numbers in the "
            f"task's text and in the lesson's example are the course's default, not yours.")
    out = {}
    try:
        out[Misconception(f"default-numbers-{ex_id.replace('.', '-')}",
                          f"The course's default numbers ({variants.statement.format(**default)}) in place of "
                          f"your own: the task's text and the lesson's example show the default.",
                          ex_id[:2], "Exercises", hint)] = expected(**default)
    except Exception:  # noqa: BLE001 - a mix the model refuses is no likely answer
        pass
    for size in range(1, min(len(differ), 2)):     # one default number kept: likelier than two or three
        for keys in itertools.combinations(differ, size):
            mixed = dict(params, **{k: default[k] for k in keys})
            named = ", ".join(f"{k} {_shown(default[k])}" for k in keys)
            try:
                value = expected(**mixed)
            except Exception:  # noqa: BLE001
                continue
            out[Misconception(f"default-numbers-{ex_id.replace('.', '-')}-" + "-".join(re.sub(r"[^a-z0-9]+", "-", k.lower()).strip("-")
                                                            for k in keys),
                              f"Part of the course's default numbers ({named}) mixed with your own numbers.", ex_id[:2], "Exercises", hint)] = value
    return out


