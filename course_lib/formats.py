"""Numeric formats for ML: bit layouts, rounding, range, quantization and what the hardware gains.

A binary floating-point number with sign bit s, exponent field e (E bits) and mantissa field m
(M bits) stands for

    normal     (e >= 1):  (-1)^s * 2^(e - bias) * (1 + m / 2^M)
    subnormal  (e == 0):  (-1)^s * 2^(1 - bias) * (m / 2^M)

and the gap between neighbours at magnitude |x| is 2^(max(floor(log2|x|), 1 - bias) - M), so the
relative gap of normal numbers is about 2^-M whatever the magnitude. Integers (INT8, INT4) are two's
complement: value = -2^(n-1) * b_{n-1} + sum_i 2^i b_i, with a uniform gap of 1.

Every range and precision figure here is read from the formats themselves through ``ml_dtypes``
(``ml_dtypes.finfo``; ``np.finfo`` refuses the 8- and 4-bit types), never typed. TF32 has no
``ml_dtypes`` type: it is FP32 with its 23-bit mantissa rounded to 10 bits, emulated here on the
FP32 bit pattern with round-to-nearest-even.

Sources for the layouts: IEEE 754-2019 (binary32, binary16); NVIDIA A100 Tensor Core GPU
Architecture whitepaper (2020), TF32 section: "the same 10-bit mantissa as FP16 and the 8-bit
exponent of FP32"; Micikevicius et al., "FP8 Formats for Deep Learning" (arXiv:2209.05433, 2022) and
the OCP 8-bit Floating Point Specification (OFP8) rev. 1.0 (2023) for E4M3 and E5M2; the OCP
Microscaling Formats (MX) Specification v1.0 (2023) for FP4 E2M1, the E8M0 scale and the MX block
of 32 elements (its section 6.3 gives the shared-scale rule used by :func:`quantize`).

Pure functions and frozen dataclasses, NumPy and ml_dtypes only. Drawing lives in
``course_lib.plots.formats``; the number explorer in ``course_lib.widgets.formats``.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ._validate import (MAX_ELEMENTS, check_array, check_bool, check_choice, check_count, check_int, check_number,
                        check_sequence)
from .hardware import bytes_per_element, get_accelerator

__all__ = [
    "FORMAT_NAMES",
    "FLOAT_FORMATS",
    "INT_FORMATS",
    "MX_BLOCK_SIZE",
    "NumberFormat",
    "get_format",
    "format_table",
    "format_table_text",
    "round_float",
    "round_to_format",
    "to_bits",
    "split_fields",
    "decode_fields",
    "decode_bits",
    "representable_values",
    "spacing",
    "SpacingCurve",
    "spacing_curves",
    "Encoding",
    "encode",
    "CastStats",
    "cast_stats",
    "gradient_like",
    "LossScaleSweep",
    "loss_scale_sweep",
    "AccumulationResult",
    "accumulate",
    "stagnation_sum",
    "outlier_matrix",
    "QuantResult",
    "quantize",
    "mx_quantize",
    "mx_scale_exponent_range",
    "HalvingStep",
    "HALVING_PAIRS",
    "halving_steps",
    "tensor_rates",
    "ScalingRun",
    "drifting_tensor",
    "simulate_fp8_scaling",
    "calibrate_amax",
    "fake_quantize",
    "rel_rms_error",
    "random_mlp",
    "LayerErrors",
    "mlp_forward",
    "mlp_quantization_errors",
]

#: Every format of the lesson, widest first.
FORMAT_NAMES = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1", "int8", "int4")
FLOAT_FORMATS = FORMAT_NAMES[:7]
INT_FORMATS = FORMAT_NAMES[7:]

#: Elements that share one E8M0 scale in every concrete MX format (OCP MX v1.0, table 1: k = 32).
MX_BLOCK_SIZE = 32

#: TF32 keeps FP32's 8-bit exponent and FP16's 10-bit mantissa (NVIDIA A100 whitepaper, 2020).
_TF32_MANTISSA_BITS = 10

# name -> (label, storage dtype, precision key of the hardware catalog, source). The catalog's
# "fp8" rate belongs to these OCP encodings on NVIDIA parts; the MI300X runs the FNUZ variants
# instead (E4M3FNUZ, max 240), as its catalog entry's `fp8_formats` records.
_SPECS = {
    "fp32": ("FP32", np.float32, "fp32", "IEEE 754-2019 binary32"),
    "tf32": ("TF32", None, "tf32", "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)"),
    "bf16": ("BF16", ml_dtypes.bfloat16, "bf16", "Google/Intel bfloat16 (Intel BF16 numerics spec, 2018)"),
    "fp16": ("FP16", np.float16, "fp16", "IEEE 754-2019 binary16"),
    "fp8_e4m3": ("FP8 E4M3", ml_dtypes.float8_e4m3fn, "fp8", "OCP OFP8 spec rev 1.0 (2023); arXiv:2209.05433"),
    "fp8_e5m2": ("FP8 E5M2", ml_dtypes.float8_e5m2, "fp8", "OCP OFP8 spec rev 1.0 (2023); arXiv:2209.05433"),
    "fp4_e2m1": ("FP4 E2M1", ml_dtypes.float4_e2m1fn, "fp4", "OCP Microscaling (MX) spec v1.0 (2023), sec. 5.3.3"),
    "int8": ("INT8", np.int8, "int8", "two's complement"),
    "int4": ("INT4", ml_dtypes.int4, "int4", "two's complement"),
}

_ALIASES = {
    "float32": "fp32", "single": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
    "e4m3": "fp8_e4m3", "fp8e4m3": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3",
    "e5m2": "fp8_e5m2", "fp8e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2",
    "fp4": "fp4_e2m1", "e2m1": "fp4_e2m1", "fp4e2m1": "fp4_e2m1", "float4_e2m1fn": "fp4_e2m1",
}


@dataclass(frozen=True)
class NumberFormat:
    """One number format, every figure computed from the format itself.

    ``bits`` counts the bits that carry information (TF32: 1 + 8 + 10 = 19); ``storage_bits`` is
    what one element occupies in memory (TF32 lives in a 32-bit FP32 container).
    ``overflow`` says what a conversion does to a value beyond ``max_value``: ``"inf"``,
    ``"nan"`` (FP8 E4M3 has no infinity) or ``"saturate"`` (FP4 has neither; integers are
    clipped by the quantizers here).
    """

    name: str
    label: str
    kind: str
    bits: int
    storage_bits: int
    sign_bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int | None
    max_value: float
    min_value: float
    min_normal: float
    min_subnormal: float
    epsilon: float
    has_inf: bool
    has_nan: bool
    overflow: str
    catalog_precision: str
    source: str

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def bytes_per_element(self) -> float:
        """Bytes one element occupies in memory: storage_bits / 8."""
        return self.storage_bits / 8

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits: (M + 1) * log10(2) for floats, log10(max) for integers."""
        if self.is_float:
            return (self.mantissa_bits + 1) * math.log10(2)
        return math.log10(self.max_value)

    @property
    def dynamic_range_decades(self) -> float:
        """log10(max_value / min_subnormal): how many powers of ten the nonzero magnitudes span."""
        return math.log10(self.max_value / self.min_subnormal)

    @property
    def max_exponent(self) -> int:
        """floor(log2(max_value)): the top binade (emax_elem of the MX spec for element formats)."""
        return math.floor(math.log2(self.max_value))

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal number, 1 - bias (integers: 0)."""
        return 0 if self.bias is None else 1 - self.bias


def _normalise_name(name) -> str:
    if isinstance(name, NumberFormat):
        return name.name
    if not isinstance(name, str):
        raise TypeError(f"format must be a name such as 'bf16', got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key.replace("_", ""), _ALIASES.get(key, key))
    if key not in _SPECS:
        raise ValueError(f"format must be one of {list(FORMAT_NAMES)}, got {name!r}")
    return key


def _classify_overflow(stored: float, max_value: float) -> str:
    if math.isinf(stored):
        return "inf"
    if math.isnan(stored):
        return "nan"
    if stored == max_value:
        return "saturate"
    return "wrap"


def get_format(name) -> NumberFormat:
    """The :class:`NumberFormat` for ``name`` ('fp32', 'tf32', 'bf16', 'fp16', 'fp8_e4m3', ...).

    >>> get_format("bf16").mantissa_bits, get_format("fp8_e4m3").max_value
    (7, 448.0)
    """
    return _build_format(_normalise_name(name))


@functools.lru_cache(maxsize=None)
def _build_format(key: str) -> NumberFormat:
    label, dtype, precision, source = _SPECS[key]
    if key in INT_FORMATS:
        info = ml_dtypes.iinfo(dtype)
        bits = int(np.dtype(dtype).itemsize * 8) if key == "int8" else 4
        return NumberFormat(
            name=key, label=label, kind="int", bits=bits, storage_bits=bits, sign_bits=1,
            exponent_bits=0, mantissa_bits=bits - 1, bias=None, max_value=float(info.max),
            min_value=float(info.min), min_normal=1.0, min_subnormal=1.0, epsilon=1.0,
            has_inf=False, has_nan=False, overflow="saturate", catalog_precision=precision,
            source=source)
    if key == "tf32":
        fp32 = ml_dtypes.finfo(np.float32)
        mant = _TF32_MANTISSA_BITS
        eps = 2.0 ** -mant
        max_value = (2.0 - eps) * 2.0 ** (fp32.maxexp - 1)
        return NumberFormat(
            name=key, label=label, kind="float", bits=1 + int(fp32.nexp) + mant, storage_bits=32,
            sign_bits=1, exponent_bits=int(fp32.nexp), mantissa_bits=mant, bias=1 - int(fp32.minexp),
            max_value=max_value, min_value=-max_value, min_normal=float(fp32.tiny),
            min_subnormal=float(fp32.tiny) * eps, epsilon=eps, has_inf=True, has_nan=True,
            overflow=_classify_overflow(float(_round_tf32(np.array([4 * max_value]))[0]), max_value),
            catalog_precision=precision, source=source)
    info = ml_dtypes.finfo(dtype)

    def as_dtype(v):
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.array([v], dtype=np.float64).astype(np.float32).astype(dtype).astype(np.float64)[0])

    max_value = float(info.max)
    if 1 + int(info.nexp) + int(info.nmant) != int(info.bits):
        raise AssertionError(f"{key}: 1 + {info.nexp} + {info.nmant} != {info.bits} bits")
    return NumberFormat(
        name=key, label=label, kind="float", bits=int(info.bits), storage_bits=int(info.bits),
        sign_bits=1, exponent_bits=int(info.nexp), mantissa_bits=int(info.nmant),
        bias=1 - int(info.minexp), max_value=max_value, min_value=-max_value,
        min_normal=float(info.tiny), min_subnormal=float(info.smallest_subnormal),
        epsilon=float(info.eps), has_inf=math.isinf(as_dtype(np.inf)), has_nan=math.isnan(as_dtype(np.nan)),
        overflow=_classify_overflow(as_dtype(4 * max_value), max_value),
        catalog_precision=precision, source=source)


def format_table(names=FORMAT_NAMES) -> list[NumberFormat]:
    """The formats in ``names`` (default: all nine), widest first."""
    return [get_format(n) for n in check_sequence("names", names, max_len=100)]


def format_table_text(formats=None) -> str:
    """A plain-text range and precision table of ``formats`` (default: :func:`format_table`)."""
    formats = format_table() if formats is None else [
        f if isinstance(f, NumberFormat) else get_format(f)
        for f in check_sequence("formats", formats, max_len=100)]
    header = (f"{'format':<9}{'bits':>5}{'stored':>7}{'E':>3}{'M':>3}{'bias':>5}{'max':>11}"
              f"{'min normal':>12}{'min subnorm':>12}{'eps':>10}{'digits':>7}{'decades':>8}  overflow")
    lines = [header, "-" * len(header)]
    for f in formats:
        bias = "-" if f.bias is None else str(f.bias)
        lines.append(
            f"{f.label:<9}{f.bits:>5}{f.storage_bits:>7}{f.exponent_bits:>3}{f.mantissa_bits:>3}{bias:>5}"
            f"{f.max_value:>11.4g}{f.min_normal:>12.4g}{f.min_subnormal:>12.4g}{f.epsilon:>10.4g}"
            f"{f.decimal_digits:>7.2f}{f.dynamic_range_decades:>8.1f}  {f.overflow}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- rounding

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


def _round_tf32(x32: np.ndarray) -> np.ndarray:
    """FP32 -> TF32 on the bit pattern: drop 13 mantissa bits, round to nearest even."""
    with np.errstate(over="ignore"):
        x32 = np.asarray(x32, dtype=np.float32)
    bits = x32.view(np.uint32).astype(np.uint64)
    drop = 23 - _TF32_MANTISSA_BITS
    half = np.uint64((1 << (drop - 1)) - 1)
    lsb = (bits >> np.uint64(drop)) & np.uint64(1)
    rounded = ((bits + half + lsb) >> np.uint64(drop)) << np.uint64(drop)
    out = (rounded & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x32), x32, out).astype(np.float32)


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


# --------------------------------------------------------------------------- bit fields

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


# --------------------------------------------------------------------------- one number

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


# --------------------------------------------------------------------------- ranges in training

@dataclass(frozen=True)
class CastStats:
    """What storing an array in one format did to it (fractions of the nonzero inputs)."""

    format: str
    scale: float
    flushed_fraction: float
    subnormal_fraction: float
    overflow_fraction: float
    median_rel_error: float


def cast_stats(values, fmt, scale=1.0) -> CastStats:
    """Store ``values * scale`` in ``fmt``; count flushes to zero, subnormals and overflows.

    ``scale`` is a loss scale: multiplying gradients by 2^k before the cast shifts them up k
    binades, out of the underflow region (and, if too large, into overflow).
    """
    f = get_format(fmt)
    arr = check_array("values", values)
    s = check_number("scale", scale, min_value=0, allow_min=False)
    x = arr[arr != 0] * s
    if x.size == 0:
        raise ValueError("values must contain at least one nonzero number")
    stored = np.asarray(round_to_format(x, f), dtype=np.float64)
    finite = np.isfinite(stored)
    over = ~finite | (np.abs(stored) >= f.max_value) & (np.abs(x) > f.max_value)
    flushed = stored == 0
    sub = finite & (stored != 0) & (np.abs(stored) < f.min_normal)
    ok = finite & ~flushed & ~over
    rel = np.abs(stored[ok] - x[ok]) / np.abs(x[ok])
    return CastStats(format=f.name, scale=s, flushed_fraction=float(flushed.mean()),
                     subnormal_fraction=float(sub.mean()), overflow_fraction=float(over.mean()),
                     median_rel_error=float(np.median(rel)) if rel.size else math.nan)


def gradient_like(rng, n, median=2.0 ** -20, decades=1.5):
    """``n`` gradient-like values: random signs, log-normal magnitudes.

        |g| = median * 10^(decades * z),  z ~ N(0, 1)

    Activation gradients in mixed-precision training are small and spread over many powers of ten
    (Micikevicius et al., "Mixed Precision Training", ICLR 2018, fig. 3); ``decades`` is the
    standard deviation of log10|g|.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n = check_count("n", n)
    med = check_number("median", median, min_value=0, allow_min=False)
    dec = check_number("decades", decades, min_value=0, max_value=30)
    mags = med * 10.0 ** (dec * rng.standard_normal(n))
    return mags * rng.choice((-1.0, 1.0), size=n)


@dataclass(frozen=True)
class LossScaleSweep:
    """Fractions flushed to zero and overflowed against the log2 of the loss scale."""

    format: str
    log2_scales: np.ndarray
    flushed_fraction: np.ndarray
    overflow_fraction: np.ndarray

    @property
    def best_log2_scale(self) -> int:
        """The smallest log2 scale with the fewest values lost (flushed + overflowed)."""
        lost = self.flushed_fraction + self.overflow_fraction
        return int(self.log2_scales[int(np.argmin(lost))])


def loss_scale_sweep(values, fmt, log2_scales=range(0, 33)) -> LossScaleSweep:
    """:func:`cast_stats` of ``values * 2^k`` in ``fmt`` for every k in ``log2_scales``."""
    f = get_format(fmt)
    ks = check_sequence("log2_scales", log2_scales, min_len=0, max_len=10_000)
    if not ks:
        raise TypeError("log2_scales must be a non-empty sequence of integers")
    ks = np.asarray([check_int("log2_scales[i]", k, min_value=-1000, max_value=1000) for k in ks],
                    dtype=np.int64)
    stats = [cast_stats(values, f, 2.0 ** int(k)) for k in ks]
    return LossScaleSweep(format=f.name, log2_scales=ks,
                          flushed_fraction=np.array([s.flushed_fraction for s in stats]),
                          overflow_fraction=np.array([s.overflow_fraction for s in stats]))


# --------------------------------------------------------------------------- accumulation

@dataclass(frozen=True)
class AccumulationResult:
    """A running sum kept in one format, against the exact sum (math.fsum in float64)."""

    accumulator: str
    partial_sums: np.ndarray
    exact_partial_sums: np.ndarray

    @property
    def total(self) -> float:
        return float(self.partial_sums[-1])

    @property
    def exact_total(self) -> float:
        return float(self.exact_partial_sums[-1])

    @property
    def rel_error(self) -> float:
        """|total - exact| / |exact|."""
        return abs(self.total - self.exact_total) / abs(self.exact_total)


def _scalar_rounder(f: NumberFormat):
    """One Python float -> its value in ``f``, rounded once (the formula of :func:`round_float`).

    Pure-Python arithmetic: the loop of :func:`accumulate` calls it once per element. Python's
    ``round`` breaks ties to even; scaling by powers of two is exact.
    """
    m, emin, top, overflow = f.mantissa_bits, f.min_exponent, f.max_value, f.overflow

    def rnd(v: float) -> float:
        if v == 0 or not math.isfinite(v):
            return v
        e = max(math.frexp(v)[1] - 1, emin)
        q = math.ldexp(1.0, e - m)
        r = round(v / q) * q
        if abs(r) > top:
            if overflow == "saturate":
                return math.copysign(top, r)
            return math.copysign(math.inf, r) if overflow == "inf" else math.nan
        return r

    return rnd


def accumulate(values, accumulator="fp32") -> AccumulationResult:
    """Add ``values`` one at a time, rounding the running sum to ``accumulator`` after each add.

        s_0 = 0,   s_i = round_acc(s_{i-1} + x_i)

    Each add is done in float64 and rounded once, like a hardware adder; for FP32-representable
    values (products of FP16/BF16/FP8 inputs are) the float64 add is exact whenever the sum and
    the value are within 29 binades, so the sum is rounded exactly once. This is what a dot
    product does when its accumulator is narrow; tensor cores accumulate FP16/BF16 products in FP32.
    """
    f = get_format(accumulator)
    if not f.is_float:
        raise ValueError(f"accumulator must be a floating-point format, got {f.name}")
    x = check_array("values", values, ndim=1)
    if x.size == 0:
        raise ValueError("values must hold at least one number")
    rnd = _scalar_rounder(f)
    partial = np.empty_like(x)
    s = 0.0
    for i, v in enumerate(x.tolist()):
        s = rnd(s + v)
        partial[i] = s
    exact = np.cumsum(x)  # float64: exact enough to judge formats of at most 24 mantissa bits
    exact[-1] = math.fsum(x)
    return AccumulationResult(accumulator=f.name, partial_sums=partial, exact_partial_sums=exact)


def stagnation_sum(increment, accumulator) -> float:
    """The running sum at which adding ``increment`` (> 0) stops changing it, by formula.

    In the binade [2^e, 2^(e+1)) the gap is g = 2^(e - M); S + c rounds back to S = 2^e once
    c <= g / 2 (an exact tie goes to the even neighbour, 2^e itself). Below that binade every add
    moves the sum up, so it climbs to exactly 2^e and stays there:

        S* = 2^e,   e = ceil(log2 c) + M + 1

    unless c is at most half the smallest subnormal, when the very first add rounds to zero (S* = 0).

    >>> stagnation_sum(1.0, "fp16")     # 2048 + 1 is a tie between 2048 and 2050: stays 2048
    2048.0
    """
    f = get_format(accumulator)
    if not f.is_float:
        raise ValueError(f"accumulator must be a floating-point format, got {f.name}")
    c = check_number("increment", increment, min_value=0, allow_min=False)
    if c <= f.min_subnormal / 2:
        return 0.0
    frac, p = math.frexp(c)            # c = frac * 2^p, frac in [0.5, 1)
    ceil_log2 = p - 1 if frac == 0.5 else p
    return math.ldexp(1.0, ceil_log2 + f.mantissa_bits + 1)


# --------------------------------------------------------------------------- quantization

def outlier_matrix(rng, rows, cols, outlier_rows=2, outlier_entries=4, outlier_scale=50.0):
    """A weight-like matrix with outliers: N(0, 1) entries, ``outlier_rows`` rows scaled by
    ``outlier_scale`` (channels with a large range) and ``outlier_entries`` isolated entries of
    magnitude ``outlier_scale`` (the rare large values of LLM weights and activations).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    r = check_count("rows", rows)
    c = check_count("cols", cols, max_value=max(1, MAX_ELEMENTS // r),
                    why=f"rows * cols must stay within {MAX_ELEMENTS:,} elements")
    n_rows = check_int("outlier_rows", outlier_rows, min_value=0, max_value=r)
    n_ent = check_int("outlier_entries", outlier_entries, min_value=0, max_value=r * c)
    big = check_number("outlier_scale", outlier_scale, min_value=0, allow_min=False)
    w = rng.standard_normal((r, c))
    w[rng.choice(r, size=n_rows, replace=False)] *= big
    flat = rng.choice(r * c, size=n_ent, replace=False)
    w.flat[flat] = big * rng.choice((-1.0, 1.0), size=n_ent) * (1 + rng.random(n_ent))
    return w


@dataclass(frozen=True)
class QuantResult:
    """A tensor quantized with one scale per group: code * scale approximates each element."""

    format: str
    granularity: str
    scale_rule: str
    block_size: int | None
    original: np.ndarray
    codes: np.ndarray
    scales: np.ndarray
    element_scales: np.ndarray
    dequantized: np.ndarray
    scale_bits: int

    @property
    def error(self) -> np.ndarray:
        return self.dequantized - self.original

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.error)))

    @property
    def rel_rms_error(self) -> float:
        """sqrt(mean(err^2)) / sqrt(mean(x^2))."""
        return float(np.sqrt(np.mean(self.error ** 2) / np.mean(self.original ** 2)))

    @property
    def sqnr_db(self) -> float:
        """Signal-to-quantization-noise ratio, 10 log10(sum x^2 / sum err^2), in dB."""
        noise = np.sum(self.error ** 2)
        return math.inf if noise == 0 else float(10 * np.log10(np.sum(self.original ** 2) / noise))

    @property
    def clipped_fraction(self) -> float:
        """Fraction of elements whose scaled value lay beyond the format's range (MX can clip)."""
        limit = get_format(self.format).max_value * (1 + 1e-12)     # x / (amax / q) may be q + 1 ulp
        return float(np.mean(np.abs(self.original) / self.element_scales > limit))

    @property
    def bits_per_element(self) -> float:
        """Element bits plus the scales' bits spread over the elements."""
        return get_format(self.format).storage_bits + self.scale_bits * self.scales.size / self.original.size


def _qmax(f: NumberFormat) -> float:
    """Largest magnitude a symmetric quantizer maps to: max for floats, -min - 1 for integers."""
    return f.max_value if f.is_float else -f.min_value - 1


def mx_scale_exponent_range() -> tuple[int, int]:
    """Smallest and largest exponent an E8M0 scale holds, from ml_dtypes' float8_e8m0fnu.

    >>> mx_scale_exponent_range()
    (-127, 127)
    """
    info = ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu)
    return int(round(math.log2(float(info.smallest_normal)))), int(round(math.log2(float(info.max))))


def _group_view(arr, granularity, axis, block_size):
    """Reshape so that each group sharing a scale lies along the last axis; return an undo."""
    if granularity == "tensor":
        return arr.reshape(1, -1), lambda g: g.reshape(arr.shape)
    if granularity == "channel":
        moved = np.moveaxis(arr, axis, 0)
        shape = moved.shape
        return moved.reshape(shape[0], -1), lambda g: np.moveaxis(g.reshape(shape), 0, axis)
    n = arr.shape[-1]
    pad = (-n) % block_size
    padded = np.concatenate([arr, np.zeros(arr.shape[:-1] + (pad,))], axis=-1) if pad else arr
    grouped = padded.reshape(-1, block_size)
    return grouped, lambda g: g.reshape(padded.shape)[..., :n]


def quantize(x, fmt="int8", granularity="tensor", axis=0, block_size=MX_BLOCK_SIZE,
             scale_rule="absmax") -> QuantResult:
    """Quantize ``x`` to ``fmt`` with one scale per tensor, per channel or per block.

        absmax:  s = max|x_group| / q_max,  code = round_fmt(x / s),  x_hat = code * s
        mx:      s = 2^(floor(log2 max|x_group|) - emax_elem)   (OCP MX v1.0, sec. 6.3),
                 code = round_fmt(clip(x / s, -max, max)): the top of a block may be clipped.

    ``q_max`` is the format's largest value (127 for INT8, 7 for INT4: symmetric, so -8 is unused).
    'channel' gives every index along ``axis`` its own scale; 'block' groups ``block_size``
    consecutive elements along the last axis (the last block may be shorter). With 'absmax' no
    value is clipped, so the error of each element is at most half a step of its group.
    Scales are kept in float64 (absmax; an FP32 scale in practice) or as exact powers of two
    (mx; E8M0, 8 bits).
    """
    f = get_format(fmt)
    arr = check_array("x", x)
    if arr.ndim == 0 or arr.size == 0:
        raise ValueError("x must be a non-empty array")
    granularity = check_choice("granularity", granularity, ("tensor", "channel", "block"))
    scale_rule = check_choice("scale_rule", scale_rule, ("absmax", "mx"))
    ax = check_int("axis", axis, min_value=-arr.ndim, max_value=arr.ndim - 1)
    bs = check_count("block_size", block_size, max_value=max(4096, arr.size),
                     why="a block larger than x holds only padding")
    if f.name == "tf32":
        raise ValueError("fmt tf32 is a compute format, not a storage format to quantize to")
    if scale_rule == "mx" and not f.is_float:
        raise ValueError(f"scale_rule 'mx' needs a floating-point element format, got {f.name}")
    groups, undo = _group_view(arr, granularity, ax, bs)
    amax = np.max(np.abs(groups), axis=1, keepdims=True)
    if scale_rule == "absmax":
        scales = np.where(amax > 0, amax / _qmax(f), 1.0)
        scale_bits = 32
    else:
        lo, hi = mx_scale_exponent_range()
        with np.errstate(divide="ignore"):
            e = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - f.max_exponent
        scales = np.ldexp(1.0, np.clip(e, lo, hi).astype(np.int64))
        scale_bits = 8
    scaled = np.clip(groups / scales, f.min_value, f.max_value)
    codes = np.asarray(round_to_format(scaled, f, saturate=True), dtype=np.float64)
    element_scales = undo(np.broadcast_to(scales, groups.shape).copy())
    return QuantResult(format=f.name, granularity=granularity, scale_rule=scale_rule,
                       block_size=bs if granularity == "block" else None, original=arr,
                       codes=undo(codes), scales=scales.reshape(-1), element_scales=element_scales,
                       dequantized=undo(codes * scales), scale_bits=scale_bits)


def mx_quantize(x, element="fp4_e2m1", block_size=MX_BLOCK_SIZE) -> QuantResult:
    """The MX form of ``element`` (MXFP4 by default): blocks of 32 along the last axis, each
    with a power-of-two E8M0 scale chosen by the OCP MX v1.0 rule (see :func:`quantize`)."""
    return quantize(x, element, granularity="block", block_size=block_size, scale_rule="mx")


# --------------------------------------------------------------------------- hardware side

@dataclass(frozen=True)
class HalvingStep:
    """From a wider to a narrower tensor-core format on one accelerator, from the catalog.

    ``bits_ratio`` compares the bits that carry information (TF32: 19), ``bytes_ratio`` the bytes
    each element occupies in memory (TF32: 4, an FP32 container).
    """

    accelerator: str
    wide: str
    narrow: str
    bits_ratio: float
    bytes_ratio: float
    rate_ratio: float

    @property
    def doubles_rate(self) -> bool:
        """True when peak(narrow) / peak(wide) is 2 within the catalog's rounding (1%)."""
        return math.isclose(self.rate_ratio, 2.0, rel_tol=0.01)


#: Tensor-core precision pairs where the bytes per element halve (TF32 sits in a 32-bit container).
HALVING_PAIRS = (("tf32", "bf16"), ("bf16", "fp8"), ("fp8", "fp4"), ("fp16", "int8"), ("int8", "int4"))

#: The element format standing for each catalog precision key ('fp8' covers E4M3 and E5M2).
_CATALOG_FORMAT = {"tf32": "tf32", "fp16": "fp16", "bf16": "bf16", "fp8": "fp8_e4m3",
                   "fp4": "fp4_e2m1", "int8": "int8", "int4": "int4", "fp32": "fp32"}


def halving_steps(accelerator, pairs=HALVING_PAIRS) -> list[HalvingStep]:
    """For each (wide, narrow) pair the accelerator runs, three ratios from the catalog and the
    formats: bits(wide)/bits(narrow), bytes(wide)/bytes(narrow) and the dense tensor rate
    peak(narrow)/peak(wide). Pairs the chip lacks are skipped.

    >>> [round(s.rate_ratio, 3) for s in halving_steps("A100")]      # tf32->bf16, fp16->int8, int8->int4
    [2.0, 2.0, 2.0]
    """
    acc = get_accelerator(accelerator)
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError("pairs must be a sequence of (wide, narrow) precision tuples")
    steps = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(f"pairs must hold (wide, narrow) tuples, got {pair!r}")
        for p in pair:
            if p not in _CATALOG_FORMAT:
                raise ValueError(f"pairs: precision must be one of {sorted(_CATALOG_FORMAT)}, got {p!r}")
        wide, narrow = pair
        if wide not in acc.peak_flops or narrow not in acc.peak_flops:
            continue
        steps.append(HalvingStep(
            accelerator=acc.name, wide=wide, narrow=narrow,
            bits_ratio=get_format(_CATALOG_FORMAT[wide]).bits / get_format(_CATALOG_FORMAT[narrow]).bits,
            bytes_ratio=bytes_per_element(wide) / bytes_per_element(narrow),
            rate_ratio=acc.peak(narrow) / acc.peak(wide)))
    return steps


def tensor_rates(accelerator) -> list[tuple[str, float, float]]:
    """``(precision, bytes_per_element, peak FLOP/s)`` for each tensor-core precision the
    accelerator lists (TF32 and narrower), widest first, from the catalog."""
    acc = get_accelerator(accelerator)
    order = ("tf32", "fp16", "bf16", "fp8", "int8", "fp4", "int4")
    return [(p, bytes_per_element(p), acc.peak(p)) for p in order if p in acc.peak_flops]


# --------------------------------------------------------------------------- FP8 training recipe

@dataclass(frozen=True)
class ScalingRun:
    """Per-tensor FP8 scaling applied to one tensor over a run of training steps.

    Each step ``t`` stores ``x_t * s_t`` in the format, clipping at its largest value (as
    Transformer Engine's casts do), then divides by ``s_t``. Counts are per step.
    """

    format: str
    rule: str
    history_len: int
    margin: int
    amax: np.ndarray
    scales: np.ndarray
    overflow_counts: np.ndarray
    underflow_counts: np.ndarray
    nonzero_counts: np.ndarray
    rel_rms_errors: np.ndarray

    @property
    def overflow_fraction(self) -> float:
        """Clipped values over all steps, as a fraction of the nonzero values."""
        return float(self.overflow_counts.sum() / self.nonzero_counts.sum())

    @property
    def underflow_fraction(self) -> float:
        """Nonzero values stored as zero over all steps, as a fraction of the nonzero values."""
        return float(self.underflow_counts.sum() / self.nonzero_counts.sum())

    @property
    def overflow_steps(self) -> np.ndarray:
        """Indices of the steps at which at least one value was clipped."""
        return np.flatnonzero(self.overflow_counts)


def drifting_tensor(rng, n_steps, n, median=1.0, decades=0.5, growth=1.05, spike_step=None,
                    spike_factor=16.0):
    """A tensor seen at ``n_steps`` training steps whose scale drifts: shape (n_steps, n).

        x[t] = growth^t * median * 10^(decades * z) * sign,   z ~ N(0, 1)

    and, at ``spike_step`` (if given), every value multiplied by ``spike_factor``: the one-step
    jump a loss spike or a new batch of unusual data gives an activation or gradient tensor.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    steps = check_int("n_steps", n_steps, min_value=1, max_value=100_000)
    size = check_int("n", n, min_value=1, max_value=10_000_000)
    if steps * size > 20_000_000:
        raise ValueError(f"n_steps * n must be at most 2e7 values, got {steps * size}")
    med = check_number("median", median, min_value=0, allow_min=False)
    dec = check_number("decades", decades, min_value=0, max_value=10)
    g = check_number("growth", growth, min_value=0, allow_min=False)
    spike = check_number("spike_factor", spike_factor, min_value=0, allow_min=False)
    if spike_step is not None:
        k = check_int("spike_step", spike_step, min_value=0, max_value=steps - 1)
    # log10 of the largest magnitude: median x growth^(n_steps - 1) x spike x 10^(6 decades)
    top = (math.log10(med) + (steps - 1) * math.log10(g) + 6 * dec
           + (math.log10(spike) if spike_step is not None else 0.0))
    if top > 300:
        raise ValueError(f"median * growth ** (n_steps - 1) * spike_factor * 10 ** (6 * decades) must stay "
                         f"below 1e300 (float64's range), got 1e{top:.0f} (median={med:g}, growth={g:g}, "
                         f"n_steps={steps}, decades={dec:g})")
    drift = med * g ** np.arange(steps, dtype=float)
    if spike_step is not None:
        drift[k] *= spike
    mags = 10.0 ** (dec * rng.standard_normal((steps, size)))
    return drift[:, None] * mags * rng.choice((-1.0, 1.0), size=(steps, size))


def simulate_fp8_scaling(steps, fmt="fp8_e4m3", rule="delayed", history_len=16, margin=0) -> ScalingRun:
    """Per-tensor scaling of a tensor over training steps, as NVIDIA's Transformer Engine does it.

        current:  s_t = (max_fmt / amax_t) / 2^margin                 (needs amax_t first: two reads)
        delayed:  s_t = (max_fmt / max(amax_{t-H}, ..., amax_{t-1})) / 2^margin     (one read)
        none:     s_t = 1

    with ``H = history_len`` (Transformer Engine's ``DelayedScaling``: ``amax_history_len``,
    default 1024, ``amax_compute_algo='max'``, ``margin`` default 0; the recipe keeps an FP32
    scale per tensor). The first step has no history; it is scaled with its own amax here (a
    warm-up; Transformer Engine starts from a scale of 1). Delayed scaling clips values at a
    step whose amax exceeds the history's largest by more than 2^margin.

    ``steps`` is a 2-D array (n_steps, elements). Sources: Micikevicius et al., "FP8 Formats for
    Deep Learning" (arXiv:2209.05433, 2022), sec. 3-4 (per-tensor scaling; E4M3 for weights and
    activations, E5M2 for gradients); Transformer Engine documentation, common API
    ``DelayedScaling`` and ``Format.HYBRID``.
    """
    f = get_format(fmt)
    if not f.is_float:
        raise ValueError(f"fmt must be a floating-point format, got {f.name}")
    x = check_array("steps", steps, ndim=2)
    if x.size == 0:
        raise ValueError("steps must hold at least one value")
    if x.size > 50_000_000 or x.shape[0] > 100_000:
        raise ValueError(f"steps must hold at most 1e5 steps and 5e7 values, got shape {x.shape}")
    rule = check_choice("rule", rule, ("delayed", "current", "none"))
    h = check_int("history_len", history_len, min_value=1, max_value=100_000)
    m = check_int("margin", margin, min_value=0, max_value=64)
    amax = np.max(np.abs(x), axis=1)
    if rule == "none":
        ref = np.full_like(amax, f.max_value)
    elif rule == "current":
        ref = amax.copy()
    else:
        ref = np.empty_like(amax)
        ref[0] = amax[0]
        for t in range(1, amax.size):
            ref[t] = amax[max(0, t - h):t].max()
    ref = np.where(ref > 0, ref, 1.0)
    scales = f.max_value / ref / 2.0 ** m
    scaled = x * scales[:, None]
    stored = np.asarray(round_to_format(np.clip(scaled, -f.max_value, f.max_value), f, saturate=True),
                        dtype=np.float64)
    nonzero = x != 0
    over = np.abs(scaled) > f.max_value * (1 + 1e-12)       # x * (max / amax) may land an ulp above
    under = nonzero & (stored == 0)
    err = stored / scales[:, None] - x
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.sqrt(np.sum(err ** 2, axis=1) / np.sum(x ** 2, axis=1))
    return ScalingRun(format=f.name, rule=rule, history_len=h, margin=m, amax=amax, scales=scales,
                      overflow_counts=over.sum(axis=1), underflow_counts=under.sum(axis=1),
                      nonzero_counts=nonzero.sum(axis=1), rel_rms_errors=rel)


# --------------------------------------------------------------------------- calibration (PTQ)

def calibrate_amax(samples, method="max", percentile=99.99, fmt="int8", candidates=100) -> float:
    """The clipping threshold post-training quantization reads from calibration data.

        max:         amax = max |x|
        percentile:  amax = the ``percentile``-th percentile of |x|
        mse:         amax = the threshold, among ``candidates`` evenly spaced fractions of max |x|,
                     whose :func:`fake_quantize` to ``fmt`` has the least squared error on the samples

    (Nagel et al., "A White Paper on Neural Network Quantization", arXiv:2106.08295, 2021,
    sec. 3.1: min-max, MSE and percentile range setting.) The quantizer's scale is then
    ``amax / q_max`` and anything beyond ``amax`` is clipped: a lower threshold trades clipping
    error on the few largest values for finer steps on all the others.
    """
    x = check_array("samples", samples)
    if x.size == 0:
        raise ValueError("samples must hold at least one value")
    method = check_choice("method", method, ("max", "percentile", "mse"))
    p = check_number("percentile", percentile, min_value=0, max_value=100, allow_min=False)
    n = check_int("candidates", candidates, min_value=1, max_value=1000)
    mags = np.abs(x).ravel()
    top = float(mags.max())
    if top <= 0:
        raise ValueError("samples must contain a nonzero value")
    if method == "max":
        return top
    if method == "percentile":
        return float(np.percentile(mags, p))
    f = get_format(fmt)
    if mags.size * n > 50_000_000:
        raise ValueError(f"samples.size * candidates must be at most 5e7, got {mags.size * n}")
    thresholds = top * np.arange(1, n + 1) / n
    errors = [np.sum((fake_quantize(x, a, f.name) - x) ** 2) for a in thresholds]
    return float(thresholds[int(np.argmin(errors))])


def fake_quantize(x, amax, fmt="int8") -> np.ndarray:
    """Quantize with a fixed clipping threshold and return the dequantized values.

        s = amax / q_max,   x_hat = round_fmt(clip(x / s, -q_max, q_max)) * s

    ``q_max`` is 127 for INT8, 448 for FP8 E4M3. This is the operation quantization-aware
    training inserts in the forward pass ("fake" because the result is stored wide again).
    """
    f = get_format(fmt)
    if f.name == "tf32":
        raise ValueError("fmt tf32 is a compute format, not a storage format to quantize to")
    arr = check_array("x", x)
    a = check_number("amax", amax, min_value=0, allow_min=False)
    s = a / _qmax(f)
    q = np.clip(arr / s, -_qmax(f), _qmax(f))
    return np.asarray(round_to_format(q, f, saturate=True), dtype=np.float64) * s


def rel_rms_error(approx, reference) -> float:
    """sqrt(sum (approx - reference)^2 / sum reference^2)."""
    a = check_array("approx", approx)
    r = check_array("reference", reference)
    if a.shape != r.shape:
        raise ValueError(f"approx and reference must have the same shape, got {a.shape} and {r.shape}")
    den = np.sum(r ** 2)
    if den == 0:
        raise ValueError("reference must contain a nonzero value")
    return float(np.sqrt(np.sum((a - r) ** 2) / den))


# --------------------------------------------------------------------------- error through layers

def random_mlp(rng, widths):
    """Weights of a ReLU MLP with He-initialised layers: widths (d0, d1, ..., dL) -> L matrices.

        W_l ~ N(0, 2 / d_{l-1}),  shape (d_{l-1}, d_l)

    He et al. (2015): this variance keeps activations' scale steady through ReLU layers.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__") or len(widths) < 2:
        raise ValueError(f"widths must list at least two layer widths, got {widths!r}")
    ws = [check_int(f"widths[{i}]", w, min_value=1, max_value=8192) for i, w in enumerate(widths)]
    return [rng.standard_normal((a, b)) * math.sqrt(2.0 / a) for a, b in zip(ws[:-1], ws[1:])]


@dataclass(frozen=True)
class LayerErrors:
    """Relative RMS error of each layer's output against the float64 reference network."""

    format: str
    rel_errors: np.ndarray

    @property
    def growth(self) -> float:
        """Last layer's error over the first layer's."""
        return float(self.rel_errors[-1] / self.rel_errors[0])


def mlp_forward(weights, x, fmt=None) -> list:
    """Outputs of every layer of ``relu(... relu(x W_1) ... ) W_L`` (no ReLU after the last).

    With ``fmt`` each layer's input is quantized per tensor and each weight matrix per output
    column (absmax scales, :func:`quantize`) before a float64 matmul: the tensor-core pattern of
    narrow inputs and a wide accumulator. ``fmt=None`` is the float64 reference.
    """
    if not isinstance(weights, (list, tuple)) or not weights:
        raise ValueError("weights must be a non-empty list of 2-D arrays")
    ws = [check_array(f"weights[{i}]", w, ndim=2) for i, w in enumerate(weights)]
    h = check_array("x", x, ndim=2)
    for i, w in enumerate(ws):
        width = h.shape[1] if i == 0 else ws[i - 1].shape[1]
        if w.shape[0] != width:
            raise ValueError(f"weights[{i}] has {w.shape[0]} rows but its input has width {width}")
    if sum(w.size for w in ws) > 50_000_000 or h.shape[0] > 100_000:
        raise ValueError("weights may hold at most 5e7 values and x at most 1e5 rows")
    outs = []
    for i, w in enumerate(ws):
        if fmt is not None:
            h = quantize(h, fmt, "tensor").dequantized
            w = quantize(w, fmt, "channel", axis=1).dequantized
        h = h @ w
        outs.append(h)
        if i < len(ws) - 1:
            h = np.maximum(h, 0.0)
    return outs


def mlp_quantization_errors(weights, x, fmt) -> LayerErrors:
    """Error of each layer's output when every layer quantizes its inputs and weights to ``fmt``.

        e_l = ||y_l^fmt - y_l^ref|| / ||y_l^ref||

    The error a layer adds is carried into the next one and joins its own: the errors compound.
    """
    f = get_format(fmt)
    ref = mlp_forward(weights, x)
    got = mlp_forward(weights, x, f.name)
    return LayerErrors(format=f.name, rel_errors=np.array([rel_rms_error(g, r) for g, r in zip(got, ref)]))
