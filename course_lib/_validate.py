"""Argument checks shared by every public function.

Each check names the argument and the accepted range, so a learner who passes a bad value
reads what to change instead of a traceback from deep inside NumPy.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
import re
from pathlib import Path

import numpy as np

__all__ = [
    "check_number",
    "check_int",
    "check_choice",
    "check_float_dtype",
    "check_array",
    "check_bool",
    "check_sequence",
    "check_instance",
    "check_items",
    "check_path",
    "check_callable",
    "MAX_INT",
    "MAX_ELEMENTS",
    "check_count",
    "name_key",
    "lookup_by_name",
]


#: The largest integer any argument may take when a function sets no tighter bound: every integer
#: up to it is exact in a float64, and NumPy can hold it.
MAX_INT = 2 ** 53


#: The most array elements a function builds for one call (80 MB of float64): enough for every
#: lesson, small enough that a typo cannot fill the machine's memory.
MAX_ELEMENTS = 10 ** 7


def check_count(name: str, value, *, min_value: int = 1, max_value: int = MAX_ELEMENTS,
                why: str = "more would need hundreds of MB or many seconds") -> int:
    """An integer count or size bounded so the work and memory it asks for stay small."""
    return check_int(name, value, min_value=min_value, max_value=max_value, why=why)


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


def check_int(name: str, value, *, min_value=None, max_value=None, why: str = "") -> int:
    """Return ``value`` as an int after checking it is an integer within inclusive bounds.

    Without ``max_value`` the bound is :data:`MAX_INT`. ``why`` says what the upper bound
    protects (e.g. "more would take minutes"), appended to its message.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if min_value is not None and value < min_value:
        raise ValueError(f"{name} must be >= {min_value}, got {value}")
    if max_value is None and abs(value) > MAX_INT:
        raise ValueError(f"{name} must lie within +-2**53, got {value:.3g}")
    if max_value is not None and value > max_value:
        reason = f" ({why})" if why else ""
        shown = value if value < 10 ** 12 else f"{value:.3g}"
        raise ValueError(f"{name} must be <= {max_value}{reason}, got {shown}")
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` when it is True or False: 'False', 0 and 1 are not on/off answers."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_float_dtype(name: str, value, example: str = "np.float32") -> np.dtype:
    """Return ``value`` as a NumPy floating-point dtype (np.float16, 'float32', ...)."""
    try:
        dtype = np.dtype(value)
    except TypeError as exc:
        raise TypeError(f"{name} must be a NumPy floating-point dtype such as {example}, got {value!r}") from exc
    if dtype.kind != "f":
        raise TypeError(f"{name} must be a NumPy floating-point dtype such as {example}, got {dtype}")
    return dtype


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
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be array-like of numbers, got {type(value).__name__} {value!r}")
    if np.dtype(dtype).kind != "b" and np.asarray(value).dtype.kind == "b":
        raise TypeError(f"{name} must hold numbers, not True/False")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(f"{name} must be array-like of numbers, got {type(value).__name__}") from exc
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimension(s), "
                             f"got shape {arr.shape}")
    if finite and arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers (no NaN or infinity)")
    return arr


def check_sequence(name: str, value, *, min_len: int = 1, max_len: int | None = None,
                   scalar_ok: bool = True) -> list:
    """Return ``value`` as a list: a list, tuple, range or 1-D array (a single value becomes a
    one-element list when ``scalar_ok``). Checks of the items are left to the caller."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (list, tuple, range)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        items = list(value.tolist() if isinstance(value, np.ndarray) else value)
    elif scalar_ok and value is not None and not isinstance(value, (str, bytes, dict, set)):
        items = [value]
    else:
        kind = "a value or a sequence" if scalar_ok else "a sequence (list, tuple or 1-D array)"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__} {value!r}")
    if len(items) < min_len:
        raise ValueError(f"{name} must hold at least {min_len} value(s), got {len(items)}")
    if max_len is not None and len(items) > max_len:
        raise ValueError(f"{name} must hold at most {max_len} values, got {len(items)}")
    return items


def _type_names(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in types)


def check_instance(name: str, value, types, made_by: str = ""):
    """Return ``value`` when it is an instance of ``types``; otherwise say what is expected and
    (``made_by``) which function makes one."""
    if not isinstance(value, types):
        source = f" (as returned by {made_by})" if made_by else ""
        raise TypeError(f"{name} must be a {_type_names(types)}{source}, got {type(value).__name__}")
    return value


def check_items(name: str, value, types, made_by: str = "", min_len: int = 1) -> list:
    """Return a non-empty list of instances of ``types``; a single instance is accepted too."""
    if isinstance(value, types):
        return [value]
    if not isinstance(value, (list, tuple)):
        source = f" (as returned by {made_by})" if made_by else ""
        raise TypeError(f"{name} must be a list of {_type_names(types)}{source}, "
                        f"got {type(value).__name__}")
    if len(value) < min_len:
        raise ValueError(f"{name} must hold at least {min_len} {_type_names(types)}, got an empty list")
    for i, item in enumerate(value):
        check_instance(f"{name}[{i}]", item, types, made_by)
    return list(value)


def check_path(name: str, value) -> Path:
    """Return ``value`` as a Path when it is a path: a non-empty str or an os.PathLike."""
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
        path = Path(value)
        if str(value) == "":
            raise ValueError(f"{name} must be a path to a folder or file, got an empty string")
        return path
    raise TypeError(f"{name} must be a path (a str or pathlib.Path), got {type(value).__name__} {value!r}")


def check_callable(name: str, value, example: str = "print"):
    """Return ``value`` when it can be called (a function such as ``print``)."""
    if not callable(value):
        raise TypeError(f"{name} must be a function such as {example}, got {type(value).__name__} {value!r}")
    return value


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
