"""Per-learner numbers: who is working, and which option of an exercise's ``Variants`` they get.

A learner identity (``COURSE_LEARNER_ID``, ``NBGRADER_STUDENT_ID``, the student folder nbgrader
autogrades in, or ``JUPYTERHUB_USER``) picks one option by a stable SHA-256 hash, so a learner
sees the same numbers in JupyterLab, in ``make progress`` and under the grader. Without an
identity every exercise uses ``options[0]``, the course's default.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Variants", "Variant", "learner_identity"]


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

