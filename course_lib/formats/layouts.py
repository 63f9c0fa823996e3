"""Bit layouts of the course's number formats: fields, range and precision, read from each format.

A binary floating-point number with sign bit s, exponent field e (E bits) and mantissa field m
(M bits) stands for

    normal     (e >= 1):  (-1)^s * 2^(e - bias) * (1 + m / 2^M)
    subnormal  (e == 0):  (-1)^s * 2^(1 - bias) * (m / 2^M)

so the relative gap of normal numbers is about 2^-M whatever the magnitude, and the exponent
field sets the range. Integers (INT8, INT4) are two's complement: -2^(n-1) * b_{n-1} + sum_i 2^i b_i.

Every figure of a :class:`NumberFormat` is read through ``ml_dtypes`` (``ml_dtypes.finfo``;
``np.finfo`` refuses the 8- and 4-bit types), never typed. TF32 has no ``ml_dtypes`` type: it is
FP32 with its 23-bit mantissa rounded to 10 bits, emulated here on the FP32 bit pattern with
round-to-nearest-even (:func:`_round_tf32`, the floor that ``rounding`` and ``bits`` build on).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .._validate import check_sequence

__all__ = ["FORMAT_NAMES", "FLOAT_FORMATS", "INT_FORMATS", "MX_BLOCK_SIZE", "NumberFormat", "get_format",
           "format_table", "format_table_text"]

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
