"""A design exercise with several valid answers: the learner decides, a judge checks the decision.

``DecisionExercise`` is a :class:`~course_lib.exercises.types.ValueExercise` (so the registry, hints and
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

from course_lib.exercises.feedback import _as_scalar_answer, _error, _scalar_misconceptions, _short
from course_lib.exercises.types import ValueExercise
from course_lib.exercises.variants import _NO_LEARNER, _params

__all__ = ["DecisionExercise", "OptimumExercise"]


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
            found = _scalar_misconceptions(self, params, got)
            raise _error(self, f"{_short(got)} does not meet the constraints: {reason}", params, found)
        return f"{self.id}: correct, a valid design ({_short(got)}); other choices may be valid too."


_GOALS = ("smallest", "largest")


@dataclass(frozen=True)
class OptimumExercise(ValueExercise):
    """The smallest or largest whole-number design that meets the constraints.

    ``expected`` returns the optimum; ``feasible(value, **params)`` returns None when ``value``
    meets every constraint, else the reason it does not, in the learner's numbers ("b = 444 takes
    60.1 us, over the 60 us target"). A wrong answer is then feedback on the learner's own design:
    one that breaks a constraint is told which, one that meets them all but is not the optimum is
    told to go further, without the answer being printed. ``step`` is the grid the designs live on
    (a tile that is a multiple of 16: step=16). The course's tests check that the optimum is
    feasible and its neighbour one step further is not.
    """

    feasible: Callable[..., str | None] = None
    goal: str = "largest"
    step: int = 1

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.feasible):
            raise TypeError(f"OptimumExercise {self.id}: feasible must be a callable returning None or a reason")
        if self.goal not in _GOALS:
            raise ValueError(f"OptimumExercise {self.id}: goal must be one of {_GOALS}, got {self.goal!r}")
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 1:
            raise ValueError(f"OptimumExercise {self.id}: step must be a whole number >= 1, got {self.step!r}")

    def check(self, answer, learner=_NO_LEARNER) -> str:
        params = _params(self, learner)
        got = _as_scalar_answer(self, answer, params)
        if got != round(got):
            raise _error(self, f"{_short(got)} is not a whole number", params)
        value = int(round(got))
        if value % self.step:
            raise _error(self, f"{value} is not a multiple of {self.step}", params)
        want = self.expected(**params)
        if value == want:
            return f"{self.id}: correct ({value})."
        found = _scalar_misconceptions(self, params, got)
        reason = self.feasible(value, **params)
        if reason:
            raise _error(self, f"{value} does not meet the constraints: {reason}", params, found)
        further = "larger" if self.goal == "largest" else "smaller"
        raise _error(self, f"{value} meets every constraint, but it is not the {self.goal} value that does: "
                           f"a {further} one meets them too", params, found)
