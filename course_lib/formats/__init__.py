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

One idea per module, each importing only those before it:

    layouts       the formats: fields, range, precision (NumberFormat, get_format, the tables)
    rounding      round_float (the formula) and round_to_format (the cast)
    bits          bit patterns, decoding, every value of a format, the gaps, encode
    training      cast statistics, loss scaling, accumulation, the FP8 scaling recipe
    quantization  scales per tensor, channel or block; the MX formats
    calibration   clipping thresholds from samples, fake quantization
    mlp           error through the layers of an MLP
    rates         bits, bytes and tensor-core rate per format, from the catalog

``from course_lib import formats as F`` gives every public name below. Pure functions and frozen
dataclasses, NumPy and ml_dtypes only. Drawing lives in ``course_lib.plots.formats``; the number
explorer in ``course_lib.widgets.formats``.
"""

from __future__ import annotations

from .bits import (Encoding, SpacingCurve, decode_bits, decode_fields, encode, representable_values, spacing,
                   spacing_curves, split_fields, to_bits)
from .calibration import calibrate_amax, fake_quantize, rel_rms_error
from .layouts import (FLOAT_FORMATS, FORMAT_NAMES, INT_FORMATS, MX_BLOCK_SIZE, NumberFormat, format_table,
                      format_table_text, get_format)
from .mlp import LayerErrors, mlp_forward, mlp_quantization_errors, random_mlp
from .quantization import QuantResult, mx_quantize, mx_scale_exponent_range, outlier_matrix, quantize
from .rates import HALVING_PAIRS, HalvingStep, halving_steps, tensor_rates
from .rounding import round_float, round_to_format
from .training import (AccumulationResult, CastStats, LossScaleSweep, ScalingRun, accumulate, cast_stats,
                       drifting_tensor, gradient_like, loss_scale_sweep, simulate_fp8_scaling, stagnation_sum)

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
