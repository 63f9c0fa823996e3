"""A design exercise with several valid answers: the learner decides, a judge checks the decision.

``DecisionExercise`` is a :class:`~course_lib.checks.ValueExercise` (so the registry, hints and
the course's tests treat it like one) whose answer is accepted when ``judge(answer)`` finds no
broken constraint, not when it equals one number. ``expected`` returns one valid decision, used
by the tests; it is chosen so that twice it and half of it are not valid too (the tests feed
such unit slips as wrong answers). Not an ``ex_NN`` module, so the registry does not load it.

``wrong_answers`` lists ``{Misconception: decision}`` like a value exercise's; every listed
decision must be one the judge rejects (the course's tests check it). A rejected decision that
matches one is named, with its section and hint, after the judge's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from course_lib.checks import (_NO_LEARNER, ValueExercise, _as_scalar_answer, _close, _error, _is_scalar_like,
                               _matching_misconceptions, _params, _short)

__all__ = ["DecisionExercise"]


@dataclass(frozen=True)
class DecisionExercise(ValueExercise):
    """``judge(value)`` returns None when the decision meets every constraint, else the reason."""

    judge: Callable[[float], str | None] = None
    integer: bool = True

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.judge):
            raise TypeError(f"DecisionExercise {self.id}: judge must be a callable returning None or a reason")

    def check(self, answer, learner=_NO_LEARNER) -> str:
        params = _params(self, learner)
        got = _as_scalar_answer(self, answer, params)
        if self.integer and got != round(got):
            raise _error(self, f"{_short(got)} is not a whole number", params)
        reason = self.judge(int(round(got)) if self.integer else got)
        if reason:
            found = _matching_misconceptions(self, params, lambda w: _is_scalar_like(w) and _close(
                got, float(w), max(self.rel_tol, 1e-3), self.abs_tol))
            raise _error(self, f"{_short(got)} does not meet the constraints: {reason}", params, found)
        return f"{self.id}: correct, a valid design ({_short(got)}); other choices may be valid too."
