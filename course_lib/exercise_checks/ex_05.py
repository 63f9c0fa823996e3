"""Checks for lesson 05, numeric formats (answers in solutions/05_numeric_formats.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import numpy as np

from course_lib import formats as F
from course_lib.checks import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.hardware import bytes_per_element, get_accelerator

__all__ = ["EXERCISES"]

#: The gradient-like sample of exercise 05.3 (seed and size are part of the task).
_GRAD_SEED, _GRAD_COUNT = 0, 50_000
#: Exercise 05.3 asks for fewer than this fraction of values flushed to zero.
_FLUSH_TARGET = 1e-3


def _more_precise_for_one_third() -> str:
    """The 16-bit format that stores 1/3 with the smaller relative error."""
    errors = {name: F.encode(1 / 3, name).rel_error for name in ("fp16", "bf16")}
    return min(errors, key=errors.get)


def _fp8_saving_ms() -> float:
    """Milliseconds saved per full read of 70e9 weights on the H200: BF16 against FP8."""
    h200 = get_accelerator("H200")
    n = 70e9
    return n * (bytes_per_element("bf16") - bytes_per_element("fp8")) / h200.mem_bandwidth * 1e3


def _smallest_loss_scale_exponent() -> int:
    """Smallest k >= 0 with under 0.1% of the sample flushed to zero in FP16 at scale 2^k."""
    grads = F.gradient_like(np.random.default_rng(_GRAD_SEED), _GRAD_COUNT)
    for k in range(0, 64):
        if F.cast_stats(grads, "fp16", 2.0 ** k).flushed_fraction < _FLUSH_TARGET:
            return k
    raise RuntimeError("no loss scale up to 2^63 reaches the target")


def _per_block_int8(x, block_size):
    """Reference: absmax INT8 per block of ``block_size`` along the last axis, dequantized."""
    return F.quantize(np.asarray(x, dtype=float), "int8", "block", block_size=block_size).dequantized


def _block_cases(rng) -> list:
    cases = []
    for _ in range(8):
        rows = int(rng.integers(1, 7))
        block = int(rng.choice([8, 16, 32, 64]))
        cols = int(rng.integers(block + 1, 5 * block)) | 1          # odd: no block size divides it
        x = rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-3, 3)
        x[rng.integers(rows), rng.integers(cols)] *= 40.0           # one outlier
        cases.append(((x, block), {}))
    return cases


def _ieee_max(exponent_bits, mantissa_bits) -> float:
    """Largest finite value of an IEEE-like format: (2 - 2^-M) 2^(2^E - 2 - bias)."""
    bias = 2 ** (exponent_bits - 1) - 1
    return (2 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** exponent_bits - 2 - bias)


def _ieee_max_cases(rng) -> list:
    # the IEEE-like formats of the lesson first (FP32, BF16, FP16, E5M2), then random widths
    cases = [((F.get_format(n).exponent_bits, F.get_format(n).mantissa_bits), {})
             for n in ("fp32", "bf16", "fp16", "fp8_e5m2")]
    for _ in range(8):
        cases.append(((int(rng.integers(2, 11)), int(rng.integers(1, 40))), {}))
    return cases


EXERCISES = [
    ChoiceExercise(
        "05.1", expected=_more_precise_for_one_third, choices=("fp16", "bf16"),
        form="a string, 'fp16' or 'bf16'",
        hints=("Both formats have 16 bits; what differs is how many go to the mantissa.",
               "The relative rounding error of a normal number is at most half of 2^-M, "
               "with M the mantissa bits.",
               "Compare F.encode(1/3, 'fp16').rel_error with F.encode(1/3, 'bf16').rel_error.")),
    ValueExercise(
        "05.2", expected=_fp8_saving_ms, rel_tol=1e-3,
        form="a float: milliseconds (ms) saved per full read of the weights",
        hints=("Reading N values of b bytes at bandwidth beta takes N b / beta seconds.",
               "Take the difference of the BF16 and FP8 times; bytes_per_element('bf16') and "
               "('fp8') give b.",
               "get_accelerator('H200').mem_bandwidth is in bytes per second; convert seconds to ms.")),
    ValueExercise(
        "05.3", expected=_smallest_loss_scale_exponent, rel_tol=0.0, abs_tol=0.0,
        form="an integer k: the loss scale is 2^k",
        hints=("Multiplying by 2^k moves every gradient up k binades, away from FP16's underflow.",
               "Loop k = 0, 1, 2, ... and call F.cast_stats(grads, 'fp16', 2.0 ** k).",
               "Stop at the first k whose flushed_fraction is below 0.001; use the sample the task "
               "names, with its seed.")),
    FunctionExercise(
        "05.4", reference=_per_block_int8, make_cases=_block_cases, rel_tol=1e-9, abs_tol=1e-12,
        form="a function quantize_blocks_int8(x, block_size) returning the dequantized array, "
             "the same shape as x",
        hints=("Each block of block_size consecutive elements of a row gets its own scale "
               "max|block| / 127.",
               "The last block of a row is shorter when block_size does not divide the row; "
               "an all-zero block needs a scale that is not zero.",
               "Round x / scale to the nearest integer (np.rint), clip to [-127, 127], multiply back.")),
    FunctionExercise(
        "05.5", reference=_ieee_max, make_cases=_ieee_max_cases, rel_tol=1e-12,
        form="a function ieee_max(exponent_bits, mantissa_bits) returning a float",
        hints=("The top exponent field is reserved for infinity and NaN, so the largest usable "
               "field is 2^E - 2.",
               "The bias is 2^(E-1) - 1; the largest mantissa is all ones: 1 + (1 - 2^-M).",
               "Check your function against F.get_format('fp16').max_value and "
               "F.get_format('bf16').max_value.")),
]
