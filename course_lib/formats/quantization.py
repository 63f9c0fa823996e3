"""Quantization with scales: one per tensor, per channel or per block, and the MX block formats.

    absmax:  s = max|x_group| / q_max,   code = round_fmt(x / s),   x_hat = code * s
    mx:      s = 2^(floor(log2 max|x_group|) - emax_elem)

``q_max`` is the format's largest value (127 for INT8). The MX rule is the OCP Microscaling
Formats (MX) Specification v1.0 (2023), sec. 6.3: blocks of 32 elements share one E8M0
(power-of-two) scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .._validate import MAX_ELEMENTS, check_array, check_choice, check_count, check_int, check_number
from .layouts import MX_BLOCK_SIZE, NumberFormat, get_format
from .rounding import round_to_format

__all__ = ["outlier_matrix", "QuantResult", "quantize", "mx_quantize", "mx_scale_exponent_range"]


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
