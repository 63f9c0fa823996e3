"""Bit patterns and the values they stand for: fields, decoding, every value of a format, the gaps.

    value(s, e, m) = (-1)^s 2^(e - bias) (1 + m / 2^M)   (e >= 1),   (-1)^s 2^(1 - bias) m / 2^M   (e = 0)
    gap at |x|     = 2^(max(floor(log2|x|), 1 - bias) - M)

:func:`to_bits` stores a number and reads its pattern back, :func:`decode_fields` applies the
formula to fields, :func:`encode` describes one number's storage field by field.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._validate import check_array, check_count, check_sequence
from .layouts import _SPECS, FLOAT_FORMATS, NumberFormat, get_format
from .rounding import round_to_format

__all__ = ["to_bits", "split_fields", "decode_fields", "decode_bits", "representable_values", "spacing",
           "SpacingCurve", "spacing_curves", "Encoding", "encode"]


def _code_mask(f: NumberFormat) -> int:
    return (1 << f.bits) - 1


def to_bits(x, fmt, saturate=False):
    """The bit pattern (an unsigned integer of ``fmt.bits`` bits) ``x`` is stored as in ``fmt``.

    TF32's 19-bit pattern is FP32's top 19 bits after rounding: sign | 8 exponent | 10 mantissa.
    """
    f = get_format(fmt)
    stored = np.asarray(round_to_format(x, f, saturate=saturate), dtype=np.float64)
    if f.name == "tf32":
        codes = stored.astype(np.float32).view(np.uint32).astype(np.uint64) >> np.uint64(23 - f.mantissa_bits)
    elif f.name == "fp32":
        codes = stored.astype(np.float32).view(np.uint32).astype(np.uint64)
    else:
        dtype = _SPECS[f.name][1]
        raw = stored.astype(dtype)
        view = {1: np.uint8, 2: np.uint16}[np.dtype(dtype).itemsize]
        codes = raw.view(view).astype(np.uint64) & np.uint64(_code_mask(f))
    return codes if np.ndim(x) else int(codes)


def _check_codes(codes, f):
    arr = np.asarray(codes)
    if arr.dtype.kind not in "iu":
        if isinstance(codes, numbers.Integral) and not isinstance(codes, bool):
            arr = np.asarray(int(codes))
        else:
            raise TypeError(f"codes must be integers (bit patterns), got {arr.dtype}")
    if np.any(arr < 0) or np.any(arr > _code_mask(f)):
        raise ValueError(f"codes must lie in [0, 2^{f.bits} - 1] for {f.name}")
    return arr.astype(np.uint64)


def split_fields(codes, fmt):
    """Split bit patterns into ``(sign, exponent, mantissa)`` integer fields of ``fmt``.

    Integers have no exponent: ``exponent`` is 0 and ``mantissa`` holds the low n-1 bits.
    """
    f = get_format(fmt)
    arr = _check_codes(codes, f)
    m_bits = np.uint64(f.mantissa_bits)
    mantissa = arr & np.uint64((1 << f.mantissa_bits) - 1)
    exponent = (arr >> m_bits) & np.uint64((1 << f.exponent_bits) - 1)
    sign = arr >> np.uint64(f.bits - 1)
    return sign.astype(np.int64), exponent.astype(np.int64), mantissa.astype(np.int64)


def _check_field(name, value):
    arr = check_array(name, value, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one value (a bit field), got an empty array")
    if np.any(arr != np.round(arr)) or np.any(np.abs(arr) > 2 ** 62):
        raise ValueError(f"{name} must hold integers (a bit field of the format)")
    return arr.astype(np.int64)


def decode_fields(sign, exponent, mantissa, fmt):
    """The value of the fields ``(sign, exponent, mantissa)`` in ``fmt``, by the formula.

        normal:    (-1)^s 2^(e - bias) (1 + m / 2^M)      subnormal (e = 0): (-1)^s 2^(1 - bias) m / 2^M
        specials:  IEEE-like (FP32, TF32, BF16, FP16, E5M2): e all ones is inf (m = 0) or NaN;
                   E4M3 (no inf): only e and m all ones is NaN;  FP4 E2M1: no specials.
        integers:  -2^(n-1) s + m   (two's complement)
    """
    f = get_format(fmt)
    s, e, m = (_check_field(name, value) for name, value in
               (("sign", sign), ("exponent", exponent), ("mantissa", mantissa)))
    try:
        np.broadcast_shapes(s.shape, e.shape, m.shape)
    except ValueError:
        raise ValueError(f"sign, exponent and mantissa must have one shape, got {s.shape}, {e.shape} "
                         f"and {m.shape}") from None
    if np.any((s < 0) | (s > 1)):
        raise ValueError("sign must be 0 or 1")
    if np.any((e < 0) | (e >= 2 ** f.exponent_bits)) and f.is_float:
        raise ValueError(f"exponent must lie in [0, {2 ** f.exponent_bits - 1}] for {f.name}")
    if np.any((m < 0) | (m >= 2 ** f.mantissa_bits)):
        raise ValueError(f"mantissa must lie in [0, {2 ** f.mantissa_bits - 1}] for {f.name}")
    if not f.is_float:
        out = (-(2.0 ** f.mantissa_bits) * s + m).astype(np.float64)
        return out if out.ndim else float(out)
    frac = m.astype(np.float64) / 2.0 ** f.mantissa_bits
    mag = np.where(e == 0, np.ldexp(frac, 1 - f.bias), np.ldexp(1.0 + frac, e - f.bias))
    top_e = 2 ** f.exponent_bits - 1
    if f.has_inf:
        mag = np.where(e == top_e, np.where(m == 0, np.inf, np.nan), mag)
    elif f.has_nan:
        mag = np.where((e == top_e) & (m == 2 ** f.mantissa_bits - 1), np.nan, mag)
    out = np.where(s == 1, -mag, mag)
    return out if out.ndim else float(out)


def decode_bits(codes, fmt):
    """The value of bit patterns ``codes`` in ``fmt``: :func:`decode_fields` of :func:`split_fields`."""
    return decode_fields(*split_fields(codes, fmt), fmt)


@functools.lru_cache(maxsize=None)
def _values_cache(name: str) -> np.ndarray:
    f = get_format(name)
    if f.kind == "int":
        return np.arange(f.min_value, f.max_value + 1, dtype=np.float64)
    vals = decode_bits(np.arange(2 ** f.bits, dtype=np.uint64), f)
    return np.unique(vals[np.isfinite(vals)] + 0.0)       # + 0.0: one zero, and it is +0


def representable_values(fmt) -> np.ndarray:
    """Every finite value of ``fmt`` (formats of at most 16 bits), sorted, zero once.

    >>> representable_values("fp4_e2m1")[7:]      # the non-negative FP4 E2M1 values
    array([0. , 0.5, 1. , 1.5, 2. , 3. , 4. , 6. ])
    """
    f = get_format(fmt)
    if f.bits > 16:
        raise ValueError(f"fmt {f.name} has 2^{f.bits} values; enumerate formats of at most 16 bits")
    return _values_cache(f.name).copy()


def spacing(x, fmt):
    """Gap from |x| (after rounding to ``fmt``) to the next larger representable magnitude.

        floats:   2^(max(floor(log2|r|), 1 - bias) - M)   (at 0: the smallest subnormal)
        integers: 1

    >>> spacing(1.0, "bf16"), spacing(1000.0, "fp16")
    (0.0078125, 0.5)
    """
    f = get_format(fmt)
    arr = check_array("x", x, dtype=np.float64)
    r = np.abs(np.asarray(round_to_format(arr, f, saturate=True), dtype=np.float64))
    if f.kind == "int":
        out = np.ones_like(r)
    else:
        with np.errstate(divide="ignore"):
            e = np.where(r > 0, np.floor(np.log2(np.where(r > 0, r, 1.0))), f.min_exponent)
        out = np.ldexp(1.0, (np.maximum(e, f.min_exponent) - f.mantissa_bits).astype(np.int64))
    return out if np.ndim(x) else float(out)


@dataclass(frozen=True)
class SpacingCurve:
    """The gap between neighbours of one format over a range of magnitudes."""

    format: str
    magnitudes: np.ndarray
    gaps: np.ndarray

    @property
    def relative_gaps(self) -> np.ndarray:
        """gap / magnitude: about 2^-M for normal numbers, growing in the subnormal range."""
        return self.gaps / self.magnitudes


def spacing_curves(names=FLOAT_FORMATS, points=400) -> list[SpacingCurve]:
    """:func:`spacing` of each format at ``points`` magnitudes, log-spaced from its smallest
    subnormal to its largest finite value."""
    n = check_count("points", points, min_value=2, max_value=100_000)
    curves = []
    for name in check_sequence("names", names, max_len=100):
        f = get_format(name)
        mags = np.logspace(math.log10(f.min_subnormal), math.log10(f.max_value), n)
        mags = mags[(mags >= f.min_subnormal) & (mags <= f.max_value)]
        curves.append(SpacingCurve(format=f.name, magnitudes=mags, gaps=spacing(mags, f)))
    return curves


@dataclass(frozen=True)
class Encoding:
    """How one number is stored in one format: the fields, the value kept and the error."""

    format: str
    label: str
    value: float
    stored: float
    bits: int
    bit_string: str
    sign: int
    exponent: int
    mantissa: int
    sign_bits: int
    exponent_bits: int
    mantissa_bits: int
    category: str

    @property
    def abs_error(self) -> float:
        """|stored - value| (inf or NaN when the format overflowed)."""
        return abs(self.stored - self.value)

    @property
    def rel_error(self) -> float:
        """|stored - value| / |value| (0 for an exact zero)."""
        if self.value == 0:
            return 0.0 if self.stored == 0 else math.inf
        return self.abs_error / abs(self.value)


def encode(value, fmt, saturate=False) -> Encoding:
    """Store the real number ``value`` in ``fmt`` and describe the result field by field.

    ``category`` is one of 'zero', 'subnormal', 'normal', 'inf', 'nan', 'saturated',
    'flushed to zero' (a nonzero value that became 0) or, for integers, 'integer'/'clipped'.
    """
    f = get_format(fmt)
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"value must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    stored = float(round_to_format(v, f, saturate=saturate))
    code = int(to_bits(v, f, saturate=saturate))
    s, e, m = (int(a) for a in split_fields(code, f))
    if f.kind == "int":
        category = "integer" if f.min_value <= np.rint(v) <= f.max_value else "clipped"
    elif math.isnan(stored):
        category = "nan"
    elif math.isinf(stored):
        category = "inf"
    elif stored == 0:
        category = "flushed to zero" if v != 0 else "zero"
    elif abs(v) > f.max_value and abs(stored) == f.max_value:
        category = "saturated"
    else:
        category = "subnormal" if e == 0 else "normal"
    raw = format(code, f"0{f.bits}b")
    groups = [raw[:1], raw[1:1 + f.exponent_bits], raw[1 + f.exponent_bits:]]
    return Encoding(format=f.name, label=f.label, value=v, stored=stored, bits=code,
                    bit_string=" ".join(g for g in groups if g), sign=s, exponent=e, mantissa=m,
                    sign_bits=f.sign_bits, exponent_bits=f.exponent_bits,
                    mantissa_bits=f.mantissa_bits, category=category)
