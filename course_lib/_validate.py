"""Argument checks shared by every public function.

Each check names the argument and the accepted range, so a learner who passes a bad value
reads what to change instead of a traceback from deep inside NumPy.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re

import numpy as np

__all__ = [
    "check_number",
    "check_int",
    "check_choice",
    "check_array",
    "check_bool",
    "name_key",
    "lookup_by_name",
]


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_number(name: str, value, *, min_value=None, max_value=None,
                 allow_min: bool = True, allow_max: bool = True) -> float:
    """Return ``value`` as a float after checking it is a finite real within the bounds.

    ``min_value``/``max_value`` are inclusive unless ``allow_min``/``allow_max`` is False.
    """
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if min_value is not None:
        bad = value < min_value if allow_min else value <= min_value
        if bad:
            op = ">=" if allow_min else ">"
            raise ValueError(f"{name} must be {op} {min_value:g}, got {value:g}")
    if max_value is not None:
        bad = value > max_value if allow_max else value >= max_value
        if bad:
            op = "<=" if allow_max else "<"
            raise ValueError(f"{name} must be {op} {max_value:g}, got {value:g}")
    return value


def check_int(name: str, value, *, min_value=None, max_value=None) -> int:
    """Return ``value`` as an int after checking it is an integer within inclusive bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if min_value is not None and value < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {value}")
    if max_value is not None and value > max_value:
        raise ValueError(f"{name} must be <= {max_value}, got {value}")
    return value


def check_bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` when it is one of ``choices`` (strings compared case-insensitively)."""
    choices = list(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {choices}, got {type(value).__name__}")
    lowered = {str(c).lower(): c for c in choices}
    key = value.strip().lower()
    if key not in lowered:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return lowered[key]


def check_array(name: str, value, *, ndim=None, finite: bool = True, dtype=float) -> np.ndarray:
    """Return ``value`` as a NumPy array of ``dtype``, checking dimensionality and finiteness."""
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of numbers, got {type(value).__name__}") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), "
                             f"got shape {arr.shape}")
    if finite and arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or infinity)")
    return arr


def name_key(name: str) -> str:
    """Forgiving lookup key: case, spaces, hyphens, underscores, dots and slashes do not matter."""
    return re.sub(r"[\s\-_./]+", "", name.lower())


def lookup_by_name(what: str, name, table: dict, known, example: str, where: str):
    """Return ``table[name_key(name)]``; otherwise raise naming ``what`` and the closest entries.

    ``table`` maps keys made by :func:`name_key` to entries that have a ``.name``.
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a name such as {example!r}, got {type(name).__name__}")
    key = name_key(name)
    if key in table:
        return table[key]
    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.4)
    suggestions = sorted({table[c].name for c in close})
    hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    raise ValueError(f"{what} {name!r} is not in {where}.{hint} Known: {', '.join(known)}")
