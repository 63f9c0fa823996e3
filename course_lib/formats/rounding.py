"""Rounding a real number to a format: by formula, and as the format itself stores it.

    e = max(floor(log2|x|), min_exponent),   q = 2^(e - M),   r = q * rint(x / q)

``round_float`` applies the formula (ties to even, exact in float64); ``round_to_format`` casts
through ``ml_dtypes`` (TF32 on FP32's bit pattern). The two are independent ways to the same
numbers, and the tests hold each against the other.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_array, check_bool, check_choice, check_int, check_number
from .layouts import _SPECS, _round_tf32, get_format

__all__ = ["round_float", "round_to_format"]


def round_float(x, mantissa_bits, min_exponent, max_value, overflow="inf"):
    """Round ``x`` to the nearest number with ``mantissa_bits`` bits, ties to even, by formula.

        e = max(floor(log2|x|), min_exponent);  q = 2^(e - M);  r = q * rint(x / q)

    Scaling by a power of two is exact in float64, and ``np.rint`` breaks ties to even, so this is
    the exact rounding of the float64 input. |r| > max_value becomes inf, NaN or ±max_value
    according to ``overflow`` ('inf', 'nan', 'saturate'). An independent second way to round,
    used to check ``ml_dtypes``: ``round_float(1.1, 7, -126, 3.4e38)`` is 1.1015625, BF16's 1.1.
    """
    m = check_int("mantissa_bits", mantissa_bits, min_value=0, max_value=52)
    emin = check_int("min_exponent", min_exponent, min_value=-1022, max_value=1023)
    top = check_number("max_value", max_value, min_value=0, allow_min=False)
    overflow = check_choice("overflow", overflow, ("inf", "nan", "saturate"))
    arr = check_array("x", x, finite=False, dtype=np.float64)
    out = np.array(arr, dtype=np.float64, copy=True)
    finite = np.isfinite(arr) & (arr != 0)
    a = np.abs(arr[finite])
    e = np.maximum(np.floor(np.log2(a)), emin)
    q = np.ldexp(1.0, (e - m).astype(np.int64))
    out[finite] = np.rint(arr[finite] / q) * q
    big = np.abs(out) > top
    if overflow == "saturate":
        big |= np.isinf(arr)
        out[big] = np.sign(out[big]) * top
    else:
        out[big & np.isfinite(arr)] = np.copysign(np.inf, out[big & np.isfinite(arr)]) \
            if overflow == "inf" else np.nan
        if overflow == "nan":
            out[np.isinf(arr)] = np.nan
    return out if np.ndim(x) else float(out)


def round_to_format(x, fmt, saturate=False):
    """The value ``x`` takes when stored in ``fmt``, as float64 (same shape as ``x``).

    Floats: ``x`` is first rounded to FP32 (tensors live in FP32 before they are cast), then cast
    with ``ml_dtypes`` (round to nearest, ties to even); TF32 by rounding the FP32 mantissa to 10
    bits. Beyond the largest finite value the result follows the format (``inf``; NaN for E4M3;
    FP4 saturates) unless ``saturate`` clips to ±max first, as hardware converters with
    saturation do. Integers: rounded to nearest even and clipped to [min, max]. NaN/inf inputs
    are allowed here (they show overflow behaviour), except NaN in a format without NaN (FP4,
    integers), which raises ValueError.
    """
    f = get_format(fmt)
    sat = check_bool("saturate", saturate)
    arr = check_array("x", x, finite=False, dtype=np.float64)
    if not f.has_nan and np.any(np.isnan(arr)):
        raise ValueError(f"x must not contain NaN for {f.name}: the format has no NaN encoding")
    if f.kind == "int":
        out = np.clip(np.rint(arr), f.min_value, f.max_value) + 0.0     # no negative zero
        return out if np.ndim(x) else float(out)
    if sat:
        arr = np.where(np.isnan(arr), arr, np.clip(arr, f.min_value, f.max_value))
    with np.errstate(over="ignore", invalid="ignore"):
        x32 = arr.astype(np.float32)
        if f.name == "fp32":
            out = x32.astype(np.float64)
        elif f.name == "tf32":
            out = _round_tf32(x32).astype(np.float64)
        else:
            out = x32.astype(_SPECS[f.name][1]).astype(np.float64)
    if sat:
        out = np.where(np.isnan(out) & ~np.isnan(arr), np.sign(arr) * f.max_value, out)
    return out if np.ndim(x) else float(out)
