"""Checks for lesson 05, numeric formats (answers in solutions/05_numeric_formats.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools
import inspect
import math
import re

import numpy as np

from course_lib import formats as F
from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import other_accelerator, _other_accelerators, shared, _with_generated
from course_lib.hardware import bytes_per_element, get_accelerator

__all__ = ["EXERCISES"]

#: The gradient-like sample of exercise 05.3 (seed and size are part of the task).
_GRAD_SEED, _GRAD_COUNT = 0, 50_000
#: Exercise 05.3 asks for fewer than this fraction of values flushed to zero.
_FLUSH_TARGET = 1e-3


_ANATOMY = "1. Anatomy of a floating-point number"
_UNDERFLOW = "5. Underflow and subnormals"
_OVERFLOW = "4. Overflow: infinity, NaN or the largest value"
_BF16_TRAINS = "6. Why BF16 trains without loss scaling and FP16 does not"
_QUANT = "8. Quantization: one scale per tensor, per channel or per block"
_HARDWARE = "9. The hardware side: what halving the bits buys"

INT4_TIME = Misconception(
    "read-time-not-saving", "A read time where the time saved was asked: the saving is the "
    "difference of two read times.", "05", _HARDWARE,
    "Compute both read times, BF16 and INT4, and subtract.")
BF16_TIME = Misconception(
    "larger-time-not-saving", "The BF16 read time alone where the time saved by INT4 was asked.",
    "05", _HARDWARE, "Subtract the INT4 read time from the BF16 one.")
FP8_NOT_INT4 = Misconception(
    "fp8-not-int4", "8-bit weights where 4-bit ones were asked: an INT4 weight is half a byte.",
    "05", _HARDWARE, "bytes_per_element('int4') is 0.5.")
INT4_FOUR_BYTES = Misconception(
    "int4-four-bytes", "An INT4 weight taken as 4 bytes: the 4 is bits, so a weight is half a byte, and "
    "the INT4 read is the shorter one.", "05", _HARDWARE, "bytes_per_element('int4') is 0.5.")
BF16_CAST_NOT_FP16 = Misconception(
    "bf16-cast-not-fp16", "The gradients cast to BF16 where the task stores them in FP16: BF16's "
    "exponent range is FP32's, so it flushes almost nothing at any scale.", "05", _BF16_TRAINS,
    "Cast to 'fp16', the format whose narrow range the loss scale is for.")
RATIO_NOT_TIME = Misconception(
    "ratio-not-time", "The speed-up ratio where a time in ms was asked.", "05", _HARDWARE,
    "The answer is a difference of times, in ms, not a quotient.")
K_TOO_SMALL = Misconception(
    "last-failing-not-first-passing", "The last k that still flushes too much where the first that "
    "meets the target was asked.", "05", _BF16_TRAINS,
    "Check your k: its flushed fraction must be below 0.001.")
ONE_PERCENT = Misconception(
    "target-one-percent", "A 1 % target where the task asks for under 0.1 %.", "05", _BF16_TRAINS,
    "The target is a fraction of 0.001, a tenth of a percent.")
PERCENT_AS_FRACTION = Misconception(
    "percent-read-as-fraction", "The 0.1 % target compared with flushed_fraction as 0.1: "
    "flushed_fraction is a fraction of the values, so 0.1 % of them is 0.001.", "05", _BF16_TRAINS,
    "Write the target as a fraction before you compare: a percent is a hundredth.")
PERCENT_CONVERTED_TWICE = Misconception(
    "percent-converted-twice", "The 0.1 % target divided by 100 twice (0.001 %): 0.001 already is "
    "0.1 % as a fraction, and flushed_fraction is a fraction.", "05", _BF16_TRAINS,
    "Write the target once as a fraction, 0.1 / 100, and compare flushed_fraction with it.")
SCALE_NOT_K = Misconception(
    "scale-not-exponent", "The scale 2^k where the exponent k was asked.", "05", _BF16_TRAINS,
    "Answer with k, the power of two, not the scale itself.")
PER_TENSOR = Misconception(
    "one-scale-per-tensor", "One scale for the whole tensor (or row) where each block gets its own: "
    "an outlier then crushes every other block's precision.", "05", _QUANT,
    "Split each row into blocks of block_size and take max|x| per block.")
TRUNCATE = Misconception(
    "truncate-not-round", "Truncating x / scale toward zero where rounding to the nearest integer "
    "was asked: it doubles the worst error.", "05", _QUANT, "Use np.rint, not astype(int) or floor.")
TOP_EXPONENT = Misconception(
    "top-exponent-not-reserved", "The all-ones exponent used for finite numbers: IEEE-like formats "
    "reserve it for infinity and NaN.", "05", _OVERFLOW,
    "The largest exponent field of a finite number is 2^E - 2.")
IMPLICIT_ONE = Misconception(
    "mantissa-forgotten", "The largest value taken as a bare power of two: the largest mantissa is "
    "all ones, 1 + (1 - 2^-M).", "05", _ANATOMY,
    "Multiply the largest power of two by the largest significand, 2 - 2^-M.")


def _more_precise_for_one_third() -> str:
    """The 16-bit format that stores 1/3 with the smaller relative error."""
    errors = {name: F.encode(1 / 3, name).rel_error for name in ("fp16", "bf16")}
    return min(errors, key=errors.get)


#: Exercise 05.2's model size (70 billion weights), an assumption of the task.
_N_WEIGHTS = 70e9


def _read_ms(precision, accelerator="H200") -> float:
    """Milliseconds to read every weight once at ``precision`` on ``accelerator``."""
    return _N_WEIGHTS * bytes_per_element(precision) / get_accelerator(accelerator).mem_bandwidth * 1e3


def _int4_saving_ms() -> float:
    """Milliseconds saved per full read of 70e9 weights on the H200: BF16 against INT4.

    INT4 (half a byte) rather than FP8 (one byte): with FP8 the saving equals the FP8 read
    time, so a learner who computes the wrong one would pass.
    """
    return _read_ms("bf16") - _read_ms("int4")


def _more_precise_wrong() -> dict:
    wider = max(("fp16", "bf16"), key=lambda name: F.get_format(name).exponent_bits)
    return {shared("bf16-more-precise", "05", "Misconceptions"): wider}


def _int4_saving_slips() -> dict:
    """Another chip's bandwidth, or FP32 (4 bytes) for the BF16 side."""
    bandwidth = get_accelerator("H200").mem_bandwidth
    return {**_other_accelerators(lambda name: _read_ms("bf16", name) - _read_ms("int4", name), "H200", "05",
                                 _HARDWARE),
            shared("fp32-bytes", "05", _HARDWARE): _N_WEIGHTS * (4 - bytes_per_element("int4")) / bandwidth * 1e3}


def _int4_saving_wrong() -> dict:
    saving = _int4_saving_ms()
    return {INT4_TIME: _read_ms("int4"),
            BF16_TIME: _read_ms("bf16"),
            FP8_NOT_INT4: _read_ms("bf16") - _read_ms("fp8"),
            RATIO_NOT_TIME: _read_ms("bf16") / _read_ms("int4"),
            INT4_FOUR_BYTES: (_N_WEIGHTS * bytes_per_element("bf16") - _N_WEIGHTS * 4)
            / get_accelerator("H200").mem_bandwidth * 1e3,
            shared("other-accelerator", "05", _HARDWARE): _read_ms("bf16", other_accelerator("H200"))
            - _read_ms("int4", other_accelerator("H200")),
            shared("bits-for-bytes", "05", _HARDWARE): 8 * saving,
            shared("seconds-for-unit", "05", _HARDWARE): saving / 1e3,
            **_int4_saving_more()}


@functools.lru_cache(maxsize=None)      # up to 64 casts of the sample
def _smallest_loss_scale_exponent() -> int:
    """Smallest k >= 0 with under 0.1% of the sample flushed to zero in FP16 at scale 2^k."""
    grads = F.gradient_like(np.random.default_rng(_GRAD_SEED), _GRAD_COUNT)
    for k in range(0, 64):
        if F.cast_stats(grads, "fp16", 2.0 ** k).flushed_fraction < _FLUSH_TARGET:
            return k
    raise RuntimeError("no loss scale up to 2^63 reaches the target")


@functools.lru_cache(maxsize=None)     # simulations and sweeps: once per session (callers copy the dict)
def _loss_scale_wrong() -> dict:
    grads = F.gradient_like(np.random.default_rng(_GRAD_SEED), _GRAD_COUNT)
    k_min = _smallest_loss_scale_exponent()
    flushed = [F.cast_stats(grads, "fp16", 2.0 ** k).flushed_fraction for k in range(k_min + 1)]
    first_under_1_percent = next(k for k, f in enumerate(flushed) if f < 10 * _FLUSH_TARGET)
    first_under_10_percent = next(k for k, f in enumerate(flushed) if f < 100 * _FLUSH_TARGET)
    return {K_TOO_SMALL: k_min - 1,
            ONE_PERCENT: first_under_1_percent,
            PERCENT_AS_FRACTION: first_under_10_percent,
            PERCENT_CONVERTED_TWICE: next(k for k in range(64) if F.cast_stats(
                grads, "fp16", 2.0 ** k).flushed_fraction < _FLUSH_TARGET / 100),
            SCALE_NOT_K: 2 ** k_min,
            BF16_CAST_NOT_FP16: next(k for k in range(64) if F.cast_stats(
                grads, "bf16", 2.0 ** k).flushed_fraction < _FLUSH_TARGET),
            SUBNORMALS_LOST: next(k for k in range(64) if (lambda st: st.flushed_fraction + st.subnormal_fraction)(
                F.cast_stats(grads, "fp16", 2.0 ** k)) < _FLUSH_TARGET),
            SWEEP_BEST_SCALE: int(F.loss_scale_sweep(grads, "fp16", range(0, 33)).best_log2_scale),
            **_loss_scale_more()}


SUBNORMALS_LOST = Misconception(
    "subnormals-counted-lost", "The subnormal values counted as lost with the flushed ones: a subnormal "
    "keeps its value, with fewer bits of precision; only what flushes to zero is lost.", "05", _UNDERFLOW,
    "Count flushed_fraction alone against the 0.1 % target.")
SWEEP_BEST_SCALE = Misconception(
    "sweep-best-scale-not-smallest", "The sweep's best_log2_scale, the scale that loses least to underflow "
    "and overflow together, where the smallest k that meets the 0.1 % target was asked.", "05", _BF16_TRAINS,
    "Walk k up from 0 and stop at the first scale whose flushed fraction is under 0.1 %.")


def _per_block_int8(x, block_size):
    """Reference: absmax INT8 per block of ``block_size`` along the last axis, dequantized."""
    return F.quantize(np.asarray(x, dtype=float), "int8", "block", block_size=block_size).dequantized


def _per_tensor_int8(x, block_size):
    return F.quantize(np.asarray(x, dtype=float), "int8", "tensor").dequantized


def _truncating_int8(x, block_size):
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    for start in range(0, x.shape[-1], block_size):
        block = x[..., start:start + block_size]
        scale = np.max(np.abs(block), axis=-1, keepdims=True) / 127
        scale = np.where(scale == 0, 1.0, scale)
        out[..., start:start + block_size] = np.clip(np.trunc(block / scale), -127, 127) * scale
    return out


def _block_quantizer(top=127.0, clip=(-127, 127), rounding=np.rint, signed_max=False, dequantize=True,
                     spans=None, short_last="quantize", whole_block=False, codes_divided=False,
                     zero_point=False):
    """A per-block INT8 quantizer with one step done another way (the known mistakes of 05.4):
    ``top`` the code the block's max maps to, ``clip`` the codes' range (None: no clip), ``rounding``,
    ``signed_max`` (max(x), not max|x|), ``dequantize`` (False: the codes returned), ``spans(cols,
    block_size)`` the blocks of a row, ``short_last`` what happens to a shorter last block ('quantize',
    'copy': left as it was, 'zero'), ``whole_block`` (one max over every row of the block, not one per
    row), ``codes_divided`` (the codes divided by the scale to dequantize), ``zero_point`` (min-max
    asymmetric INT8, 255 levels and a zero point)."""
    def quantize(x, block_size):
        x = np.asarray(x, dtype=float)
        cols = x.shape[-1]
        out = x.copy() if short_last == "copy" else np.zeros_like(x)
        bounds = spans(cols, block_size) if spans else [(a, min(a + block_size, cols))
                                                         for a in range(0, cols, block_size)]
        for a, b in bounds:
            if short_last != "quantize" and b - a < block_size:
                continue
            block = x[..., a:b]
            if zero_point:
                lo, hi = block.min(axis=-1, keepdims=True), block.max(axis=-1, keepdims=True)
                scale = np.where(hi > lo, (hi - lo) / 255, 1.0)
                zero = np.rint(-128 - lo / scale)
                out[..., a:b] = (np.clip(np.rint(block / scale + zero), -128, 127) - zero) * scale
                continue
            peak = np.max(block if signed_max else np.abs(block), axis=None if whole_block else -1,
                          keepdims=True)
            scale = np.where(peak == 0, 1.0, peak / top)
            codes = rounding(block / scale)
            if clip is not None:
                codes = np.clip(codes, *clip)
            out[..., a:b] = (codes / scale if codes_divided else codes * scale) if dequantize else codes
        return out
    return quantize


def _near_equal_spans(cols, block_size) -> list:
    """np.array_split's ceil(cols / block_size) near-equal pieces of a row."""
    pieces = np.array_split(np.arange(cols), math.ceil(cols / block_size))
    return [(int(p[0]), int(p[-1]) + 1) for p in pieces]


def _flat_blocks_int8(x, block_size):
    """Blocks of block_size taken on the flattened array: they run across the ends of rows."""
    x = np.asarray(x, dtype=float)
    flat = x.reshape(1, -1)
    return _block_quantizer()(flat, block_size).reshape(x.shape)


NEAR_EQUAL_BLOCKS = Misconception(
    "near-equal-blocks-not-fixed", "Each row split into ceil(cols / block_size) near-equal blocks (as "
    "np.array_split does) where the blocks are block_size elements each and only the last one is shorter: "
    "a different split gives different scales.", "05", _QUANT,
    "Take blocks x[:, j:j + block_size] for j = 0, block_size, 2 block_size, ...; the last one keeps "
    "what is left.")
INT8_TOP_128 = Misconception(
    "int8-scale-128-not-127", "128 (2^7) taken as INT8's largest code in the scale: symmetric absmax "
    "quantization maps max|block| to 127, so that -127 to 127 is the range and -128 goes unused.", "05",
    _QUANT, "Divide max|block| by 127, the format's largest value (F.get_format('int8') has it).")
INT8_TOP_128_CLIPPED = Misconception(
    "int8-scale-128-clipped-127", "The scale taken as max|block| / 128 and the codes clipped to INT8's "
    "[-128, 127]: the block's largest value then clips to 127 steps; absmax maps it to 127 exactly, with "
    "the scale max|block| / 127.", "05", _QUANT,
    "Divide max|block| by 127 and clip to [-127, 127]: no value is clipped then.")
ONE_SCALE_PER_ROW = Misconception(
    "one-scale-per-row", "One scale per row (per channel) where each block of block_size elements gets "
    "its own: a large value then crushes the precision of its whole row, not only of its block.", "05",
    _QUANT, "Loop over the blocks of a row, j = 0, block_size, ..., and take max|x| of each block.")
FLOOR_NOT_ROUND = Misconception(
    "int8-floor-not-round", "np.floor of x / scale where rounding to the nearest integer was asked: floor "
    "rounds every value down, negative ones away from zero, so the error is up to a whole step.", "05",
    _QUANT, "Use np.rint (to nearest), not np.floor.")
SIGNED_MAX = Misconception(
    "int8-signed-max-not-absmax", "max(block), the largest signed value, where the scale is the largest "
    "magnitude, max|block|: a block whose largest magnitude is negative gets too small (or a negative) "
    "scale.", "05", _QUANT, "Take np.max(np.abs(block)) for the scale.")
CODES_NOT_DEQUANTIZED = Misconception(
    "int8-codes-not-dequantized", "The integer codes returned where the dequantized values were asked: "
    "multiply each code by its block's scale to get back to x's units.", "05", _QUANT,
    "Return codes * scale, an array close to x.")
SHORT_BLOCK_LEFT = Misconception(
    "short-last-block-left-as-is", "The shorter last block of a row left as it was: when block_size does "
    "not divide the row, its last elements form a block of their own, quantized with their own scale.",
    "05", _QUANT, "Let the loop over j run to the end of the row: range(0, cols, block_size).")
SHORT_BLOCK_ZEROED = Misconception(
    "short-last-block-dropped", "The shorter last block of a row dropped (left zero): when block_size "
    "does not divide the row, its last elements form a block of their own, quantized with their own "
    "scale.", "05", _QUANT, "Let the loop over j run to the end of the row: range(0, cols, block_size).")
FLAT_BLOCKS = Misconception(
    "blocks-across-rows", "Blocks taken on the flattened array (reshape(-1, block_size)), so they run "
    "across the ends of rows: blocks are consecutive elements of one row, each row split on its own.",
    "05", _QUANT, "Split each row separately: x[r, j:j + block_size].")


def _block_wrong() -> dict:
    return {PER_TENSOR: _per_tensor_int8, TRUNCATE: _truncating_int8,
            ONE_SCALE_PER_ROW: _block_quantizer(spans=lambda cols, block_size: [(0, cols)]),
            NEAR_EQUAL_BLOCKS: _block_quantizer(spans=_near_equal_spans),
            INT8_TOP_128: _block_quantizer(top=128.0, clip=None),
            INT8_TOP_128_CLIPPED: _block_quantizer(top=128.0, clip=(-128, 127)),
            FLOOR_NOT_ROUND: _block_quantizer(rounding=np.floor),
            SIGNED_MAX: _block_quantizer(signed_max=True),
            CODES_NOT_DEQUANTIZED: _block_quantizer(dequantize=False),
            SHORT_BLOCK_LEFT: _block_quantizer(short_last="copy"),
            SHORT_BLOCK_ZEROED: _block_quantizer(short_last="zero"),
            FLAT_BLOCKS: _flat_blocks_int8, **_block_more()}


IMPLICIT_ONE_DROPPED = Misconception(
    "implicit-leading-one-dropped", "The implicit leading 1 dropped: a normal number's significand is "
    "1.mmm, so all-ones mantissa bits give 1 + (1 - 2^-M) = 2 - 2^-M, not (2^M - 1) / 2^M = 1 - 2^-M.",
    "05", _ANATOMY, "Write the significand as 1 + mantissa / 2^M: the 1 is not stored, but it counts.")
BIAS_OFF_BY_ONE = Misconception(
    "exponent-bias-off-by-one", "The bias taken as 2^(E-1) where it is 2^(E-1) - 1 (127 for FP32's 8 exponent "
    "bits, 15 for FP16's 5): every exponent comes out one too small.", "05", _ANATOMY,
    "Check the bias against FP32: 8 exponent bits, bias 127.")
ONE_BINADE_ABOVE = Misconception(
    "significand-taken-as-two", "A power of two one binade above the largest value, 2^(2^E - 1 - bias): "
    "the significand 1.11...1 taken as 2 (or the top exponent field used with a bare power of two); the "
    "largest significand is 2 - 2^-M, just under 2, at the field 2^E - 2.", "05", _ANATOMY,
    "Multiply 2^(2^E - 2 - bias) by 2 - 2^-M: the product stays below the next power of two.")
E4M3_CONVENTION = Misconception(
    "e4m3-convention-for-ieee", "FP8 E4M3's convention used for an IEEE-like format: E4M3 keeps the top "
    "exponent field for numbers and gives up only its all-ones mantissa to NaN; an IEEE-like format "
    "reserves the whole top field for infinity and NaN.", "05", _OVERFLOW,
    "For the IEEE-like formats the largest exponent field of a finite number is 2^E - 2, with all mantissa "
    "bits set.")
ONE_STEP_ABOVE_ONE = Misconception(
    "significand-one-step-above-one", "The significand taken as 1 + 2^-M, one step above 1: that is the "
    "smallest mantissa after zero; the largest has all M bits set, 2 - 2^-M.", "05", _ANATOMY,
    "Set every mantissa bit: 1 + (2^M - 1) / 2^M.")
MANTISSA_NOT_SCALED = Misconception(
    "mantissa-field-not-scaled", "The mantissa field's integer value 2^M - 1 added to the leading 1 "
    "without dividing it by 2^M: the mantissa bits are the fraction after the binary point.", "05",
    _ANATOMY, "The significand is 1 + field / 2^M, between 1 and 2.")


MANTISSA_BIT_TOO_MANY = Misconception(
    "significand-one-mantissa-bit-too-many", "The largest significand written 2 - 2^-(M+1), as if the "
    "mantissa had M + 1 bits: with M stored bits (the leading 1 implicit) all ones give 2 - 2^-M.", "05",
    _ANATOMY, "Count the stored mantissa bits only: 1 + (2^M - 1) / 2^M = 2 - 2^-M.")


def _ieee_max_wrong() -> dict:
    def emax(e, bias=None):
        return 2 ** e - 2 - (2 ** (e - 1) - 1 if bias is None else bias)

    def top_exponent(e, m):
        bias = 2 ** (e - 1) - 1
        return (2 - 2.0 ** -m) * 2.0 ** (2 ** e - 1 - bias)

    def bare_power(e, m):
        return 2.0 ** (2 ** e - 2 - (2 ** (e - 1) - 1))
    return {TOP_EXPONENT: top_exponent, IMPLICIT_ONE: bare_power,
            IMPLICIT_ONE_DROPPED: lambda e, m: (1 - 2.0 ** -m) * 2.0 ** emax(e),
            BIAS_OFF_BY_ONE: lambda e, m: (2 - 2.0 ** -m) * 2.0 ** emax(e, 2 ** (e - 1)),
            ONE_BINADE_ABOVE: lambda e, m: 2.0 ** (emax(e) + 1),
            E4M3_CONVENTION: lambda e, m: (2 - 2.0 ** (1 - m)) * 2.0 ** (emax(e) + 1),
            ONE_STEP_ABOVE_ONE: lambda e, m: (1 + 2.0 ** -m) * 2.0 ** emax(e),
            MANTISSA_NOT_SCALED: lambda e, m: 2.0 ** m * 2.0 ** emax(e),
            MANTISSA_BIT_TOO_MANY: lambda e, m: (2 - 2.0 ** -(m + 1)) * 2.0 ** emax(e), **_ieee_max_more()}


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


#: Exercise 05.6's gradient tensor: 30 steps of 2000 values growing 25% per step, with a 3x jump
#: at step 21 (seed and shape are part of the task), scaled with a 4-step amax history in E5M2.
_DRIFT = dict(seed=2026, n_steps=30, n=2000, median=2.0 ** -20, decades=0.8, growth=1.25,
              spike_step=21, spike_factor=3.0)
_DRIFT_HISTORY = 4


def _drift_steps():
    d = dict(_DRIFT)
    return F.drifting_tensor(np.random.default_rng(d.pop("seed")), d.pop("n_steps"), d.pop("n"), **d)


def _clipped(margin, rule="delayed", history_len=_DRIFT_HISTORY, count="values") -> int:
    """Values clipped over the run (``count``: 'values', or 'last' the final step's alone, 'spike'
    the jump's step alone: known mistakes)."""
    run = F.simulate_fp8_scaling(_drift_steps(), "fp8_e5m2", rule, history_len=history_len,
                                 margin=margin)
    counts = np.asarray(run.overflow_counts)
    if count == "last":
        return int(counts[-1])
    if count == "spike":
        return int(counts[_DRIFT["spike_step"]])
    return int(counts.sum())


def _smallest_safe_margin() -> int:
    """Smallest margin with no value clipped over the run, found by simulation (a sweep)."""
    for margin in range(0, 20):
        if _clipped(margin) == 0:
            return margin
    raise RuntimeError("no margin up to 19 avoids clipping")


_FP8 = "8b. FP8 training: two formats and a scale per tensor"
DELAYED_SAFE = Misconception(
    "delayed-scaling-safe", "Delayed scaling taken to be safe as it is: its scale comes from past "
    "steps' amax, so a tensor that grows clips before the history catches up.", "05", _FP8,
    "Run the simulation with no margin and look at overflow_counts step by step.")
MARGIN_STILL_CLIPS = Misconception(
    "margin-that-still-clips", "A margin that still clips a few values: the answer is the first "
    "margin with no value clipped at any step of the run.", "05", _FP8,
    "Sum overflow_counts over every step; a margin is safe only when that sum is 0.")
STEADY_GROWTH_ONLY = Misconception(
    "margin-for-steady-growth-only", "A margin sized for the steady growth alone: the one-off jump, "
    "and amax's noise from step to step, exceed it.", "05", _FP8,
    "Look at the steps where values clip: they come with the jump, which the history has not seen.")
MARGIN_TOO_LARGE = Misconception(
    "margin-more-than-needed", "More margin than needed: every extra power of two shifts the whole "
    "tensor down a binade, towards FP8's underflow; the smallest safe margin was asked.", "05", _FP8,
    "Stop the sweep at the first margin whose run clips nothing.")


@functools.lru_cache(maxsize=None)     # simulations and sweeps: once per session (callers copy the dict)
def _margin_wrong() -> dict:
    right = _smallest_safe_margin()
    steady = int(np.ceil(np.log2(_DRIFT["growth"])))       # the steady growth alone, jump ignored
    # Most likely first (a margin two mistakes share is named in this order, with the first one's
    # hint): a margin sized for the steady growth, before a sweep stopped one margin early.
    wrong = {STEADY_GROWTH_ONLY: steady} if steady != right else {}
    # the 3x jump taken as a margin of 3 (a factor where the margin counts binades): named before the
    # oldest amax and a sweep stopped one margin late, which may give the same number
    spike = int(_DRIFT["spike_factor"])
    if spike != right:
        wrong[SPIKE_FACTOR_AS_MARGIN] = spike
    # the window's oldest amax: the headroom sized for the whole window's growth and the jump
    oldest = math.ceil(math.log2(_DRIFT["spike_factor"] * _DRIFT["growth"] ** _DRIFT_HISTORY))
    current = next(m for m in range(0, 20) if _clipped(m, "current") == 0)
    wrong.update({DELAYED_SAFE: 0})
    if current != right:
        wrong[CURRENT_RULE] = current
    if oldest != right:
        wrong[OLDEST_AMAX] = oldest
    history_default = next((m for m in range(0, 20) if _clipped(m, history_len=inspect.signature(
        F.simulate_fp8_scaling).parameters["history_len"].default) == 0), None)
    jump_only = math.ceil(math.log2(_DRIFT["spike_factor"]))
    spike_step_only = next((m for m in range(0, 20) if _clipped(m, count="spike") == 0), None)
    # log2 of the worst growth over the history rounded down: named before a sweep stopped one margin
    # early and the jump's step checked alone, which may give the same number
    worst = _worst_growth_over_history()
    rounded_down = int(math.floor(math.log2(worst)))
    if rounded_down != right:
        wrong[MARGIN_ROUNDED_DOWN] = rounded_down
    for mistake, value in ((HISTORY_LEFT_AT_DEFAULT, history_default),
                           (JUMP_ONLY, jump_only)):
        if value is not None and value != right:
            wrong[mistake] = value
    wrong.update({MARGIN_STILL_CLIPS: right - 1})
    # the jump's step checked alone, the least likely reading of its number: listed only while fewer
    # than three likelier ones give it (three candidates are shown for one value, and every listed
    # one must be named)
    if (spike_step_only is not None and spike_step_only != right
            and sum(v == spike_step_only for v in wrong.values()) < 3):
        wrong[SPIKE_STEP_ONLY] = spike_step_only
    wrong.update({MARGIN_TOO_LARGE: right + 1})
    wrong.update(_margin_more())
    return wrong


def _worst_growth_over_history() -> float:
    """The largest ratio of a step's amax to the largest amax of the history window before it."""
    amax = np.abs(_drift_steps()).max(axis=1)
    return float(max(amax[t] / amax[max(0, t - _DRIFT_HISTORY):t].max() for t in range(1, amax.size)))


MARGIN_ROUNDED_DOWN = Misconception(
    "margin-log2-rounded-down", "log2 of the worst growth over the history rounded down (floor, or int()): "
    "a margin of m makes room for a factor 2^m, so it must reach log2 of the ratio, the first whole number "
    "at or above it.", "05", _FP8,
    "Round log2 of the worst ratio up, or sweep whole margins with the simulation and read overflow_counts.")
WHOLE_RUN_RANGE = Misconception(
    "margin-for-the-whole-runs-range", "A margin sized for amax's growth over the whole run, first step to "
    "largest: the delayed scale follows the last 4 steps' amax, so it only has to cover how far a step's "
    "amax outgrows the largest of the history window before it.", "05", _FP8,
    "Compare each step's amax with the largest amax of the 4 steps before it, not with the first step's.")
SPIKE_FACTOR_AS_MARGIN = Misconception(
    "jump-factor-as-margin", "The 3x jump taken as a margin of 3: the margin counts binades, powers of "
    "two (the scale is divided by 2^m), so a margin of m makes room for a factor 2^m, not m.", "05", _FP8,
    "m is an exponent: the scale is divided by 2^m, not by m. Sweep m with the simulation and read "
    "overflow_counts.")
HISTORY_LEFT_AT_DEFAULT = Misconception(
    "history-len-left-at-default", "simulate_fp8_scaling called without the task's history_len, so it "
    "used its default window: the task's recipe keeps 4 steps of amax history, and the window sets what "
    "the delayed scale has seen.", "05", _FP8, "Pass history_len=4, as the task states, at every margin.")
JUMP_ONLY = Misconception(
    "margin-for-the-jump-only", "A margin sized for the jump alone, log2 of the 3x factor rounded up: "
    "the history also lags the steady growth of the steps before, and amax is noisy; the jump comes on "
    "top of them.", "05", _FP8, "Sweep the margin with the simulation instead of sizing it by hand.")
SPIKE_STEP_ONLY = Misconception(
    "clipping-checked-at-the-jump-only", "Clipping checked at the jump's step alone: values clip at other "
    "steps too, where the growth and the noise outrun the history; the margin must leave every step "
    "unclipped.", "05", _FP8, "Sum overflow_counts over all the steps of the run.")


CURRENT_RULE = Misconception(
    "current-rule-for-delayed", "The simulation run with rule 'current', the scale from this step's own "
    "amax, which never clips: the task's recipe is delayed scaling, whose scale lags the tensor.", "05", _FP8,
    "Pass 'delayed' with the task's history length to simulate_fp8_scaling, then sweep the margin.")
OLDEST_AMAX = Misconception(
    "scale-from-oldest-amax", "The delayed scale taken from the oldest amax of the window, so the margin "
    "was sized for the whole window's growth and the jump: the scale comes from the largest amax of the "
    "window, and the simulation shows how much headroom that leaves.", "05", _FP8,
    "Sweep the margin with simulate_fp8_scaling rather than sizing it from the growth by hand.")
# --- 05.7 (design): a weight format within a memory budget and an error budget ----------------

_ROUNDING = "3. Rounding and the gap between neighbours"
_ACCUMULATE = "7. Accumulating a long sum in low precision"
#: 05.7's storage schemes: name -> (element format, scale granularity, scale rule). Per channel
#: is one scale per row; per block, 32 consecutive elements of a row; absmax scales are FP32,
#: MX scales 8-bit powers of two (E8M0).
STORE_SCHEMES = {
    "int8 per tensor": ("int8", "tensor", "absmax"),
    "int8 per channel": ("int8", "channel", "absmax"),
    "int8 per block": ("int8", "block", "absmax"),
    "fp8_e4m3 per tensor": ("fp8_e4m3", "tensor", "absmax"),
    "fp8_e4m3 per channel": ("fp8_e4m3", "channel", "absmax"),
    "mxfp8": ("fp8_e4m3", "block", "mx"),
    "int4 per block": ("int4", "block", "absmax"),
    "mxfp4": ("fp4_e2m1", "block", "mx"),
    "int8 per channel, outliers apart": ("int8", "channel", "absmax"),
}
#: The last scheme keeps apart, exactly, every entry larger in magnitude than APART_RATIO times its
#: row's RMS (of w, outliers included), at APART_BITS each (a 32-bit value and a 32-bit position),
#: and quantizes the rest, with those entries set to zero, INT8 per channel.
APART_SCHEME, APART_RATIO, APART_BITS = "int8 per channel, outliers apart", 8.0, 64
STORE_BITS, STORE_ERROR = 9.5, 0.015      # bits per element, scales included; relative RMS error of every row


def _store_weights() -> np.ndarray:
    """05.7's weight matrix: 256 x 1000, N(0, 1) with outlier rows and entries (seed 507)."""
    return F.outlier_matrix(np.random.default_rng(507), 256, 1000)


def _row_errors(q) -> np.ndarray:
    """Relative RMS error of each row (output channel) of a quantized matrix."""
    return np.sqrt((q.error ** 2).mean(axis=1) / (q.original ** 2).mean(axis=1))


@functools.lru_cache(maxsize=None)
def _scheme_stats(channel_axis=0) -> dict:
    """name -> (bits per element, worst row's relative RMS error, whole matrix's relative RMS error)
    (``channel_axis`` 1: a channel taken to be a column, a known mistake)."""
    w = _store_weights()
    out = {}
    for name, (fmt, granularity, rule) in STORE_SCHEMES.items():
        if name == APART_SCHEME:
            out[name] = _apart_stats(w, fmt, granularity, channel_axis)
            continue
        q = F.quantize(w, fmt, granularity, axis=channel_axis, block_size=32, scale_rule=rule)
        out[name] = (q.bits_per_element, float(_row_errors(q).max()), q.rel_rms_error)
    return out


def _apart_stats(w, fmt, granularity, channel_axis=0) -> tuple:
    """(bits, worst row's error, whole error) with the large entries kept apart exactly."""
    apart = np.abs(w) > APART_RATIO * np.sqrt((w ** 2).mean(axis=1, keepdims=True))
    q = F.quantize(np.where(apart, 0.0, w), fmt, granularity, axis=channel_axis, block_size=32)
    restored = np.where(apart, w, q.dequantized)
    rows = np.sqrt(((restored - w) ** 2).mean(axis=1) / (w ** 2).mean(axis=1))
    whole = float(np.sqrt(((restored - w) ** 2).mean() / (w ** 2).mean()))
    return float(q.bits_per_element + apart.sum() * APART_BITS / w.size), float(rows.max()), whole


def _cheapest_scheme(bits=STORE_BITS, error=STORE_ERROR, whole=False, channel_axis=0) -> str:
    """The scheme with the fewest bits that meets both budgets (``whole``: the whole matrix's
    error instead of every row's; ``channel_axis`` 1: channels taken as columns: known mistakes)."""
    stats = _scheme_stats(channel_axis)
    ok = [n for n, (b, row, mat) in stats.items() if b <= bits and (mat if whole else row) <= error]
    if not ok:
        raise RuntimeError("05.7: no scheme meets both budgets")
    fewest = min(stats[n][0] for n in ok)
    winners = [n for n in ok if stats[n][0] == fewest]
    if len(winners) != 1:
        raise RuntimeError(f"05.7 must have one cheapest scheme, got {winners}")
    return winners[0]


WHOLE_MATRIX_ERROR = Misconception(
    "whole-matrix-error-hides-rows", "The whole matrix's relative error checked where every row's "
    "was asked: the two outlier rows hold almost all of the matrix's energy, so the ordinary rows' "
    "errors hardly show in the whole; a row with one outlier entry, whose scale that entry "
    "stretches, is far over the budget.", "05", _QUANT,
    "Compute the error row by row (the error and the original, each row's mean square) and look "
    "at the worst row.")
FLOAT_GRID_ENOUGH = Misconception(
    "fp8-relative-grid-enough", "FP8's relative grid taken to meet the error budget because it copes "
    "with the outliers: it does, but with 3 mantissa bits every value is off by a few percent.", "05",
    _ROUNDING, "Compare the error of an FP8 scheme with the budget, not with INT8 per tensor.")
FEWEST_BITS_ONLY = Misconception(
    "fewest-bits-only", "The fewest bits chosen without checking the error budget: 4-bit elements "
    "leave errors of ten percent and more, whatever the scales.", "05", _QUANT,
    "Check every candidate against both budgets, the error as well as the bits.")
INT8_ONE_SCALE = Misconception(
    "int8-one-scale-with-outliers", "INT8 with one scale for the whole matrix: the outlier rows and "
    "entries set the scale, and every ordinary value is left with a few of the 255 levels.", "05", _QUANT,
    "Compare the error of INT8 per tensor with INT8 per channel: where do the outliers live?")


SCALES_FOR_FOUR_ENTRIES = Misconception(
    "finer-scales-for-a-few-outliers", "Finer scales everywhere to cope with a few outlier entries: a "
    "32-bit scale per block of 32 costs a bit for every element, while keeping the few large entries "
    "apart costs their own bits only.", "05", _QUANT,
    "Count the entries that break the per-channel scheme's worst rows, and what keeping them apart costs.")


def _cheapest_scheme_wrong() -> dict:
    stats = _scheme_stats()
    right = _cheapest_scheme()
    wrong = {INT8_ONE_SCALE: "int8 per tensor",
             SCALES_FOR_FOUR_ENTRIES: "int8 per block",
             APART_NOT_BUILT: _cheapest_library_scheme(),
             WHOLE_MATRIX_ERROR: _cheapest_scheme(whole=True),
             FLOAT_GRID_ENOUGH: "fp8_e4m3 per channel",
             FEWEST_BITS_ONLY: min(stats, key=lambda n: stats[n][0]),
             BUDGET_PERCENT_MISREAD: _cheapest_scheme(error=STORE_ERROR * 10),
             ERROR_NOT_ROOTED: _cheapest_scheme(error=STORE_ERROR ** 0.5),
             CHANNEL_AS_COLUMN: _cheapest_or_none(channel_axis=1)}
    wrong = {k: v for k, v in wrong.items() if v is not None and v != right}
    # every other choice, named by the budget it breaks and the likeliest way to miss that
    named = set(wrong.values())
    for name, (bits, row, _) in stats.items():
        if name == right or name in named:
            continue
        if bits > STORE_BITS:
            wrong[Misconception(
                f"scale-bits-left-out-{_slug(name)}", f"{name!r} counted without its scales (or the entries it "
                "keeps apart): with them it takes more bits per element than the 9.5 budget.", "05", _QUANT,
                "Count bits per element with every scale, and every entry kept apart, included.")] = name
        elif row > STORE_ERROR:
            wrong[Misconception(
                f"row-error-not-measured-{_slug(name)}", f"{name!r} chosen for its bits without measuring its "
                "error row by row: its worst row is over the 1.5 % budget.", "05", _QUANT,
                "Measure each row's relative RMS error and keep the worst, for every scheme you consider.")] = name
        else:
            wrong[Misconception(
                f"valid-not-cheapest-{_slug(name)}", f"{name!r} meets both budgets, but another scheme that "
                "meets them takes fewer bits per element: the cheapest was asked.", "05", _QUANT,
                "Among the schemes that meet both budgets, keep the one with the fewest bits per element.")] = name
    return wrong


def _slug(text: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def _cheapest_or_none(**mistake):
    try:
        return _cheapest_scheme(**mistake)
    except RuntimeError:                 # no single cheapest scheme under that mistake: nothing to name
        return None


CHANNEL_AS_COLUMN = Misconception(
    "channel-taken-as-column", "A channel taken to be a column (axis=1): here a channel is a row, an "
    "output of the layer, and the outlier rows need a scale of their own; a scale per column shares one "
    "with every row's outliers.", "05", _QUANT,
    "Quantize per channel with axis=0, one scale per row, and measure each row's error.")


BUDGET_PERCENT_MISREAD = Misconception(
    "error-budget-percent-misread", "The 1.5 % budget read as 0.15 (or 15 %): as a fraction, 1.5 % is "
    "0.015.", "05", _QUANT, "Write the budget as a fraction before you compare: 1.5 % is 0.015.")
ERROR_NOT_ROOTED = Misconception(
    "rms-error-without-root", "The mean squared relative error compared with the budget, without the "
    "square root: the budget is on the RMS error, the square root of that mean.", "05", _QUANT,
    "Take the square root of each row's mean squared error over its mean square, then compare.")


# --- 05.8 (what-if): how many mantissa bits a running sum needs to drop the chunks ------------

SUM_LENGTHS = tuple(2 ** k for k in range(3, 15))       # chunk lengths 8 to 16384
SUM_TOLERANCE = 0.01
SUM_BITS = range(7, 24)                                  # 05.8: mantissa bits from BF16's 7 to FP32's 23


def _products() -> np.ndarray:
    """05.8's 16,384 products, uniform in [0, 0.02)."""
    return np.random.default_rng(508).uniform(0.0, 0.02, 2 ** 14)


def _chunked_error(chunk, accumulator="bf16") -> float:
    """Relative error of the whole sum: chunks summed in ``accumulator``, chunk sums added in FP32."""
    v = _products()
    partial = np.array([F.accumulate(v[i:i + chunk], accumulator).total for i in range(0, v.size, chunk)])
    total = F.accumulate(partial, "fp32").total
    exact = math.fsum(v)
    return abs(total - exact) / exact


@functools.lru_cache(maxsize=None)
def _longest_chunk(accumulator="bf16") -> int:
    """The longest power-of-two chunk within the tolerance (the prompt states it for BF16: 128)."""
    ok = [c for c in SUM_LENGTHS if _chunked_error(c, accumulator) <= SUM_TOLERANCE]
    if not ok:
        raise RuntimeError("05.8: no chunk length keeps the sum within the tolerance")
    return max(ok)


@functools.lru_cache(maxsize=None)
def _one_sum_error(mantissa_bits, rounding="nearest") -> float:
    """Relative error of one running sum of all the products, rounded after every add to
    ``mantissa_bits`` bits with BF16's exponent range (section 7's accumulator, any width:
    the catalog's formats fix the width, so the sum is rounded here by section 3's formula)."""
    emin = F.get_format("bf16").min_exponent
    s = 0.0
    for x in _products().tolist():
        v = s + x
        q = math.ldexp(1.0, max(math.frexp(v)[1] - 1, emin) - mantissa_bits)
        # nearest, ties to even (no overflow: the sum stays < 400); "trunc": toward zero, a known mistake
        s = (round(v / q) if rounding == "nearest" else math.floor(v / q)) * q
    exact = math.fsum(_products())
    return abs(s - exact) / exact


@functools.lru_cache(maxsize=None)
def _fewest_bits() -> int:
    ok = [m for m in SUM_BITS if _one_sum_error(m) <= SUM_TOLERANCE]
    if not ok:
        raise RuntimeError("05.8: no accumulator width keeps one running sum within the tolerance")
    return min(ok)


STAGNATION_ONLY = Misconception(
    "error-only-at-stagnation", "The sum taken to be accurate as long as it never stops growing: every "
    "add rounds to the accumulator's gap, and those errors add up long before the increments vanish.",
    "05", _ACCUMULATE, "Measure (or scale from the BF16 chunks) the error of the whole sum; a sum that "
    "still grows can already be percents off.")
RANDOM_WALK = Misconception(
    "rounding-errors-random-walk", "The rounding errors taken to cancel like a random walk (error "
    "growing as the square root of the length): a sum of positive products loses the low bits of "
    "each one the same way, so the error grows in proportion to the length.", "05", _ACCUMULATE,
    "How does the error change from 128 to 256 products in BF16, by the measurement the task gives?")
IMPLICIT_BIT_COUNTED = Misconception(
    "implicit-bit-counted", "The implicit leading 1 counted among the mantissa bits: a format with M "
    "mantissa bits stores M of them and has M + 1 bits of precision; the task asks for M, as BF16's "
    "7 and FP32's 23.", "05", _ANATOMY,
    "Check your count against BF16: F.get_format('bf16').mantissa_bits is 7, its precision 8 bits.")
CATALOG_ONLY = Misconception(
    "catalog-accumulator-only", "Only the catalog's widths tried (BF16 7 bits, FP16 and TF32 10, FP32 "
    "23): the accumulator of the task may have any whole number of mantissa bits.", "05", _ACCUMULATE,
    "Round the running sum yourself to M bits with section 3's formula, or scale from the BF16 chunk.")


def _fewest_bits_wrong() -> dict:
    mean = float(_products().mean())
    total = float(_products().sum())
    chunk = _longest_chunk()
    length = _products().size
    never_stalls = min(m for m in SUM_BITS                  # S* = 2^(ceil(log2 c) + M + 1) above the sum
                       if math.ldexp(1.0, math.ceil(math.log2(mean)) + m + 1) > total)
    walk = 7 + math.ceil(0.5 * math.log2(length / chunk))   # one bit per factor of 4 in length
    catalog = min(F.get_format(f).mantissa_bits for f in ("bf16", "fp16", "tf32", "fp32")
                  if _one_sum_error(F.get_format(f).mantissa_bits) <= SUM_TOLERANCE)
    right = _fewest_bits()
    # the doubling rule started from the chunk that fails (256) rather than the one that holds
    from_failing = 7 + round(math.log2(length / (2 * chunk)))
    largest = float(_products().max())
    stalls_at_largest = min(m for m in SUM_BITS
                            if math.ldexp(1.0, math.ceil(math.log2(largest)) + m + 1) > total)
    truncated = min((m for m in SUM_BITS if _one_sum_error(m, "trunc") <= SUM_TOLERANCE), default=None)
    bf16_bits = F.get_format("bf16").mantissa_bits
    return {k: v for k, v in {DOUBLING_FROM_FAILING_CHUNK: from_failing, STAGNATION_ONLY: never_stalls,
                              STAGNATION_LARGEST: stalls_at_largest, TRUNCATED_SUM: truncated,
                              ONE_BIT_BY_ANALOGY: bf16_bits + 1,
                              RANDOM_WALK: walk, CATALOG_ONLY: catalog,
                              IMPLICIT_BIT_COUNTED: right + 1, **_fewest_bits_more()}.items()
            if v is not None and v != right}


STAGNATION_LARGEST = Misconception(
    "stagnation-largest-product", "Section 7's stagnation bound taken with the largest product as the "
    "increment: the sum stalls for the typical product first, and in any case it is percents off long "
    "before it stalls.", "05", _ACCUMULATE,
    "Measure the error of the whole running sum at each width rather than asking when it stops growing.")
TRUNCATED_SUM = Misconception(
    "truncation-not-nearest", "Each add rounded toward zero (truncated): the accumulator rounds to "
    "nearest, so its errors are half as large and of both signs; truncation loses on every add.", "05",
    _ROUNDING, "Round v / q with round(), to nearest with ties to even, not with floor().")
ONE_BIT_BY_ANALOGY = Misconception(
    "one-bit-for-one-doubling", "One bit more than BF16's because one doubling (128 to 256) failed: the "
    "whole sum is 16,384 products, 128 times the chunk, and each doubling of the length costs a bit.",
    "05", _ACCUMULATE, "Count the doublings from the 128 products BF16 keeps within 1 % up to 16,384.")


DOUBLING_FROM_FAILING_CHUNK = Misconception(
    "doubling-from-failing-chunk", "The doubling rule counted from the chunk that fails (256) instead of "
    "the longest one that holds (128): 7 mantissa bits keep 128 products within 1 %, not 256.", "05",
    _ACCUMULATE, "Start from the longest chunk BF16 keeps within 1 %, then add one bit per doubling "
    "of the sum's length up to 16,384.")


# --- Round 26h (fix-h2): more of the long tail, each computed with the one mistake ------------

def _h(key, text, section, hint) -> Misconception:
    return Misconception(key, text, "05", section, hint)


PARAMS_BINARY_BILLIONS = _h(
    "params-binary-billions", "70 billion read as 70 x 2^30 (a binary giga): parameter counts are decimal, "
    "70 x 10^9.", _HARDWARE, "Write the model's size as 70e9 weights.")
PARAMS_FROM_CATALOG = _h(
    "catalog-model-params-for-task-count", "Llama 3 70B's catalog count (get_model(...).params) where the task "
    "states its own model of 70 x 10^9 weights: the catalog's 70B model has a few hundred million more.",
    _HARDWARE, "Use the task's count, 70e9 weights.")
PARAMS_TEN_FEWER = _h(
    "params-power-of-ten-fewer", "70 billion written with one power of ten too few (7e9): 70 x 10^9 is 7e10.",
    _HARDWARE, "Write 70 billion as 70e9 and check the exponent.")
PARAMS_TEN_MORE = _h(
    "params-power-of-ten-more", "70 billion written with one power of ten too many (700e9, 7e11): 70 x 10^9 "
    "is 7e10.", _HARDWARE, "Write 70 billion as 70e9 and check the exponent.")
TIMES_ADDED = _h(
    "read-times-added", "The BF16 and INT4 read times added where the saving, their difference, was asked.",
    _HARDWARE, "Subtract the INT4 read time from the BF16 one.")
SAVING_SIGN_FLIPPED = _h(
    "saving-sign-flipped", "t_INT4 - t_BF16, the saving with its sign turned: INT4 reads fewer bytes, so "
    "the time saved is positive.", _HARDWARE, "Subtract the shorter INT4 time from the BF16 time.")
MICROSECONDS_FOR_MS = _h(
    "microseconds-for-milliseconds", "Microseconds where milliseconds were asked: the formula is right, "
    "the unit is not.", _HARDWARE, "Seconds to milliseconds is x 1e3, not x 1e6.")
RATIO_INT4_OVER_BF16 = _h(
    "int4-over-bf16-ratio", "The ratio of the INT4 read time to the BF16 one where the saving, a time in "
    "ms, was asked.", _HARDWARE, "Compute both read times in ms and subtract them; do not divide.")
FRACTION_SAVED = _h(
    "fraction-of-read-saved", "The fraction of the read time saved, 1 - t_INT4 / t_BF16, where the saving "
    "itself, in ms, was asked.", _HARDWARE, "Subtract the two read times, each in ms.")
CAPACITY_FOR_BANDWIDTH = _h(
    "capacity-for-bandwidth", "mem_capacity (bytes) used where mem_bandwidth (bytes per second) was meant: "
    "a read time is bytes over a rate.", _HARDWARE,
    "Divide the bytes by get_accelerator('H200').mem_bandwidth.")


def _int4_saving_more() -> dict:
    from course_lib.economics import get_model
    bw = get_accelerator("H200").mem_bandwidth
    bf16, int4 = bytes_per_element("bf16"), bytes_per_element("int4")

    def saving(n=_N_WEIGHTS, rate=bw, unit=1e3):
        return n * (bf16 - int4) / rate * unit
    return {PARAMS_BINARY_BILLIONS: saving(70 * 2 ** 30),
            PARAMS_FROM_CATALOG: saving(get_model("Llama 3 70B").params),
            PARAMS_TEN_FEWER: saving(_N_WEIGHTS / 10), PARAMS_TEN_MORE: saving(_N_WEIGHTS * 10),
            TIMES_ADDED: _read_ms("bf16") + _read_ms("int4"),
            SAVING_SIGN_FLIPPED: _read_ms("int4") - _read_ms("bf16"),
            MICROSECONDS_FOR_MS: saving(unit=1e6),
            RATIO_INT4_OVER_BF16: _read_ms("int4") / _read_ms("bf16"),
            FRACTION_SAVED: 1 - _read_ms("int4") / _read_ms("bf16"),
            CAPACITY_FOR_BANDWIDTH: saving(rate=get_accelerator("H200").mem_capacity)}


K_ONE_PAST = _h(
    "first-passing-k-plus-one", "One k past the first that meets the target: a loop that adds 1 to k after "
    "the test passes (or counts the scales tried from 1) ends one too high.", _BF16_TRAINS,
    "Print k and its flushed_fraction, and the k before it: the answer is the first under 0.001.")
SCALE_K_NOT_POWER = _h(
    "scale-k-not-two-to-the-k", "k itself passed as the scale, cast_stats(grads, 'fp16', k): the loss scale "
    "is 2^k, so each step of k doubles it.", _BF16_TRAINS, "Pass 2.0 ** k as the scale.")
SCALE_POWERS_OF_TEN = _h(
    "loss-scale-powers-of-ten", "Scales of 10^k tried where the loss scale is 2^k: k counts binades, powers "
    "of two.", _BF16_TRAINS, "Pass 2.0 ** k as the scale, k = 0, 1, 2, ...")
FRACTION_NOT_K = _h(
    "flushed-fraction-not-k", "The flushed fraction at the first good scale where the exponent k itself "
    "was asked.", _BF16_TRAINS, "Answer the integer k of that scale, not its flushed_fraction.")


def _loss_scale_more() -> dict:
    grads = F.gradient_like(np.random.default_rng(_GRAD_SEED), _GRAD_COUNT)
    k_min = _smallest_loss_scale_exponent()

    def first(scale, ks=range(0, 64)):
        return next((k for k in ks if F.cast_stats(grads, "fp16", scale(k)).flushed_fraction < _FLUSH_TARGET), None)
    found = {K_ONE_PAST: k_min + 1,
             SCALE_K_NOT_POWER: _first_linear_scale(grads),
             SCALE_POWERS_OF_TEN: first(lambda k: 10.0 ** k, range(0, 20)),
             FRACTION_NOT_K: F.cast_stats(grads, "fp16", 2.0 ** k_min).flushed_fraction}
    return {k: v for k, v in found.items() if v is not None and v != k_min}


def _first_linear_scale(grads, top=1 << 16):
    """The first whole k that meets the target with k itself as the scale (a known mistake), by
    bisection: the flushed fraction only falls as the scale grows (no value overflows FP16 here)."""
    def ok(k):
        return F.cast_stats(grads, "fp16", float(k)).flushed_fraction < _FLUSH_TARGET
    if not ok(top):
        return None
    lo, hi = 1, top                     # ok(hi); the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid + 1, hi)
    return lo


AMAX_OVER_ALL_ROWS = _h(
    "block-scale-over-all-rows", "np.max(np.abs(block)) without axis=1: one scale for the whole column of "
    "blocks, shared by every row, where each row's block gets its own.", _QUANT,
    "Take the maximum along the row, np.max(np.abs(block), axis=1, keepdims=True).")
INT8_TOP_255 = _h(
    "int8-scale-255-levels", "max|block| / 255 as the scale, as if the block's largest value mapped to 255: "
    "symmetric INT8 runs from -127 to 127, so max|block| maps to 127.", _QUANT,
    "Divide max|block| by 127.")
INT8_TOP_HALF_255 = _h(
    "int8-scale-255-over-two", "max|block| / 127.5 (255 levels over the range -max to max) as the scale: "
    "absmax maps max|block| to the code 127, so the scale is max|block| / 127.", _QUANT,
    "Divide max|block| by 127, the largest code.")
CEIL_NOT_ROUND = _h(
    "int8-ceil-not-round", "np.ceil of x / scale where rounding to the nearest integer was asked: ceil "
    "rounds every value up, so the error is up to a whole step.", _QUANT, "Use np.rint (to nearest).")
SCALE_PER_COLUMN = _h(
    "scale-per-column", "Blocks taken down the columns (axis 0), so a column's values share a scale: the "
    "blocks are block_size consecutive elements of one row.", _QUANT,
    "Slice blocks along each row, x[:, j:j + block_size], and take max|x| along axis 1.")
BLOCK_SIZE_AS_COUNT = _h(
    "block-size-as-number-of-blocks", "Each row split into block_size pieces (np.array_split(row, "
    "block_size)) where each block has block_size elements.", _QUANT,
    "Step through the row in strides of block_size: j = 0, block_size, 2 block_size, ...")
CODES_OVER_SCALE = _h(
    "codes-divided-by-scale", "The codes divided by the scale to dequantize: quantizing divided by s, so "
    "getting back multiplies by it, q x s.", _QUANT, "Return codes * scale.")
ASYMMETRIC_MINMAX = _h(
    "asymmetric-min-max-scale", "An asymmetric (min-max) scale with a zero point, (max - min) / 255: the task "
    "asks for symmetric absmax, s = max|block| / 127, no zero point.", _QUANT,
    "Take s = max|block| / 127 and round x / s; no offset.")
QUANTIZE_DEFAULT_BLOCK = _h(
    "quantize-block-size-left-at-default", "F.quantize(x, 'int8', 'block') called without block_size, so it "
    "used its default of 32: the function must use the block_size it is given.", _QUANT,
    "Pass block_size=block_size on.")


def _count_spans(cols, block_size) -> list:
    """A row split into block_size near-equal pieces (np.array_split's count, not their size)."""
    return [(int(p[0]), int(p[-1]) + 1) for p in np.array_split(np.arange(cols), block_size) if p.size]


def _block_more() -> dict:
    return {AMAX_OVER_ALL_ROWS: _block_quantizer(whole_block=True),
            INT8_TOP_255: _block_quantizer(top=255.0, clip=None),
            INT8_TOP_HALF_255: _block_quantizer(top=127.5, clip=(-128, 127)),
            CEIL_NOT_ROUND: _block_quantizer(rounding=np.ceil),
            SCALE_PER_COLUMN: lambda x, block_size: F.quantize(np.asarray(x, dtype=float), "int8", "channel",
                                                               axis=1).dequantized,
            BLOCK_SIZE_AS_COUNT: _block_quantizer(spans=_count_spans),
            CODES_OVER_SCALE: _block_quantizer(codes_divided=True),
            ASYMMETRIC_MINMAX: _block_quantizer(zero_point=True),
            QUANTIZE_DEFAULT_BLOCK: lambda x, block_size: F.quantize(np.asarray(x, dtype=float), "int8",
                                                                     "block").dequantized}


BIAS_FORGOTTEN = _h(
    "exponent-bias-forgotten", "The largest exponent field used as the exponent, without subtracting the "
    "bias: the stored field is the exponent plus 2^(E-1) - 1.", _ANATOMY,
    "Subtract the bias, 2^(E-1) - 1, from the largest usable field, 2^E - 2.")
TOP_MANTISSA_RESERVED = _h(
    "all-ones-mantissa-reserved-too", "The all-ones mantissa given up as well, significand 2 - 2^(1-M): an "
    "IEEE-like format reserves the top exponent field for infinity and NaN, and below it every mantissa, "
    "all ones included, is a number.", _OVERFLOW,
    "At the field 2^E - 2 set every mantissa bit: the significand is 2 - 2^-M.")
EXPONENT_SIGN_BIT = _h(
    "exponent-bit-for-sign", "One exponent bit set aside for the exponent's sign (E - 1 bits for its size): "
    "the bias makes the field unsigned, and all E bits count.", _ANATOMY,
    "Use all E bits: the largest usable field is 2^E - 2, the bias 2^(E-1) - 1.")


def _ieee_max_more() -> dict:
    def emax(e):
        return 2 ** e - 2 - (2 ** (e - 1) - 1)
    return {BIAS_FORGOTTEN: lambda e, m: (2 - 2.0 ** -m) * 2.0 ** (2 ** e - 2),
            TOP_MANTISSA_RESERVED: lambda e, m: (2 - 2.0 ** (1 - m)) * 2.0 ** emax(e),
            EXPONENT_SIGN_BIT: lambda e, m: (2 - 2.0 ** -m) * 2.0 ** emax(e - 1)}


MARGIN_AS_FACTOR = _h(
    "margin-as-headroom-factor", "The headroom factor 2^m where the margin m, its exponent, was asked.", _FP8,
    "Answer m, the power of two the scale is divided by.")
MARGIN_NOT_ROUNDED = _h(
    "margin-log2-not-rounded-up", "log2 of the worst growth over the history left as a fraction: the margin "
    "is a whole number of binades, the first integer at or above it.", _FP8,
    "Round log2 of the worst ratio up, or sweep integer margins with the simulation.")


def _margin_more() -> dict:
    right = _smallest_safe_margin()
    amax = np.abs(_drift_steps()).max(axis=1)
    found = {MARGIN_AS_FACTOR: 2 ** right, MARGIN_NOT_ROUNDED: float(np.log2(_worst_growth_over_history())),
             WHOLE_RUN_RANGE: int(math.ceil(math.log2(amax.max() / amax.min())))}
    return {k: v for k, v in found.items() if v != right}


APART_NOT_BUILT = _h(
    "outliers-apart-not-built", "Only the library's schemes compared: the scheme that keeps the few large "
    "entries apart has no function, but it is a candidate, and its 64 bits per entry spread over all the "
    "elements cost little.", _QUANT,
    "Build the last scheme: zero the entries over 8 x their row's RMS, quantize INT8 per channel, put them "
    "back, and count their bits over all the elements.")


def _cheapest_library_scheme() -> str | None:
    stats = {n: s for n, s in _scheme_stats().items() if n != APART_SCHEME}
    ok = [n for n, (b, row, _) in stats.items() if b <= STORE_BITS and row <= STORE_ERROR]
    return min(ok, key=lambda n: stats[n][0]) if ok else None


TOLERANCE_TEN_PERCENT = _h(
    "sum-tolerance-read-as-ten-percent", "The 1 % tolerance read as 0.1 (10 %): as a fraction, 1 % is 0.01.",
    _ACCUMULATE, "Compare each width's relative error with 0.01.")
TOLERANCE_TENTH_PERCENT = _h(
    "sum-tolerance-read-as-tenth-percent", "The 1 % tolerance read as 0.001 (0.1 %): as a fraction, 1 % is "
    "0.01.", _ACCUMULATE, "Compare each width's relative error with 0.01.")
ABSOLUTE_ERROR = _h(
    "sum-absolute-error-not-relative", "The absolute error of the sum held to 0.01 where the task bounds the "
    "relative error, |sum - exact| / exact: the sum of these products is far larger than 1.", _ACCUMULATE,
    "Divide the error by the exact sum before comparing it with 0.01.")
FP16_MANTISSA_BASE = _h(
    "fp16-mantissa-for-bf16", "The doublings added to FP16's 10 mantissa bits: the chunks were summed in BF16, "
    "which has 7.", _ACCUMULATE, "Start from F.get_format('bf16').mantissa_bits.")
DOUBLINGS_FROM_ONE = _h(
    "doublings-counted-from-one-product", "The doublings counted from a single product up to 16,384 and "
    "added to BF16's 7 bits: BF16 already keeps a chunk of 128 within 1 %; only the doublings beyond 128 "
    "need a bit each.", _ACCUMULATE, "Count the doublings from the 128 products that BF16 keeps within 1 %.")
BF16_AS_IS = _h(
    "bf16-enough-without-chunks", "BF16's own mantissa bits kept: they keep a chunk of 128 within 1 %, not one "
    "running sum of all 16,384 products.", _ACCUMULATE,
    "Measure one running sum of all the products at each width, or scale from the chunk.")


def _fewest_bits_more() -> dict:
    errors = {m: _one_sum_error(m) for m in SUM_BITS}
    exact = math.fsum(_products())
    doublings = round(math.log2(_products().size / _longest_chunk()))
    bf16 = F.get_format("bf16").mantissa_bits
    found = {TOLERANCE_TEN_PERCENT: min((m for m in SUM_BITS if errors[m] <= 10 * SUM_TOLERANCE), default=None),
             TOLERANCE_TENTH_PERCENT: min((m for m in SUM_BITS if errors[m] <= SUM_TOLERANCE / 10), default=None),
             FP16_MANTISSA_BASE: F.get_format("fp16").mantissa_bits + doublings,
             ABSOLUTE_ERROR: min((m for m in SUM_BITS if errors[m] * exact <= SUM_TOLERANCE), default=None),
             DOUBLINGS_FROM_ONE: bf16 + round(math.log2(_products().size)),
             BF16_AS_IS: bf16}
    return {k: v for k, v in found.items() if v is not None and v != _fewest_bits()}


EXERCISES = [
    ChoiceExercise(
        "05.1", expected=_more_precise_for_one_third, choices=("fp16", "bf16"),
        wrong_answers=_more_precise_wrong, concepts=("precision-range", "format-anatomy"),
        form="a string, 'fp16' or 'bf16'",
        hints=("Both formats have 16 bits; what differs is how many go to the mantissa.",
               "The relative rounding error of a normal number is at most half of 2^-M, "
               "with M the mantissa bits.",
               "Compare F.encode(1/3, 'fp16').rel_error with F.encode(1/3, 'bf16').rel_error.")),
    ValueExercise(
        "05.2", quantity=("time", "data"), expected=_int4_saving_ms, rel_tol=1e-3,
        wrong_answers=_with_generated(_int4_saving_wrong, _int4_saving_ms, _int4_saving_slips, _replayed(_int4_saving_ms, "05"), rel_tol=1e-3),
        concepts=("bytes-per-element",),
        form="a float: milliseconds (ms) saved per full read of the weights",
        hints=("Reading N values of b bytes at bandwidth beta takes N b / beta seconds.",
               "Take the difference of the BF16 and INT4 times; bytes_per_element('bf16') and "
               "('int4') give b (an INT4 weight is half a byte).",
               "get_accelerator('H200').mem_bandwidth is in bytes per second; convert seconds to ms.")),
    ValueExercise(
        "05.3", expected=_smallest_loss_scale_exponent, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_loss_scale_wrong, _smallest_loss_scale_exponent, _replayed(_smallest_loss_scale_exponent, "05")), concepts=("loss-scaling",),
        form="an integer k: the loss scale is 2^k",
        hints=("Multiplying by 2^k moves every gradient up k binades, away from FP16's underflow.",
               "Loop k = 0, 1, 2, ... and call F.cast_stats(grads, 'fp16', 2.0 ** k).",
               "Stop at the first k whose flushed_fraction is below 0.001; use the sample the task "
               "names, with its seed.")),
    FunctionExercise(
        "05.4", reference=_per_block_int8, make_cases=_block_cases, rel_tol=1e-9, abs_tol=1e-12,
        wrong_implementations=_block_wrong, concepts=("quantization",),
        form="a function quantize_blocks_int8(x, block_size) returning the dequantized array, "
             "the same shape as x",
        hints=("Each block of block_size consecutive elements of a row gets its own scale "
               "max|block| / 127.",
               "The last block of a row is shorter when block_size does not divide the row; "
               "an all-zero block needs a scale that is not zero.",
               "Round x / scale to the nearest integer (np.rint), clip to [-127, 127], multiply back.")),
    FunctionExercise(
        "05.5", reference=_ieee_max, make_cases=_ieee_max_cases, rel_tol=1e-12,
        wrong_implementations=_ieee_max_wrong, concepts=("format-anatomy",),
        form="a function ieee_max(exponent_bits, mantissa_bits) returning a float",
        hints=("The top exponent field is reserved for infinity and NaN, so the largest usable "
               "field is 2^E - 2.",
               "The bias is 2^(E-1) - 1; the largest mantissa is all ones: 1 + (1 - 2^-M).",
               "Check your function against F.get_format('fp16').max_value and "
               "F.get_format('bf16').max_value.")),
    ValueExercise(
        "05.6", expected=_smallest_safe_margin, rel_tol=0.0, abs_tol=0.0, wrong_answers=_with_generated(_margin_wrong, _smallest_safe_margin, _replayed(_smallest_safe_margin, "05")),
        concepts=("fp8-scaling",),
        form="an integer: the margin m (the scale is divided by 2^m)",
        hints=("Delayed scaling clips at a step whose amax exceeds 2^m times the largest amax of "
               "the history window.",
               "The tensor grows steadily and also jumps once; a margin that covers the steady "
               "growth may not cover the jump, nor the step-to-step noise of amax.",
               "Loop m = 0, 1, 2, ... with F.simulate_fp8_scaling(grads, 'fp8_e5m2', 'delayed', "
               "history_len=4, margin=m) and stop at the first run whose overflow_counts sum to 0.")),
    ChoiceExercise(
        "05.7", expected=_cheapest_scheme, choices=tuple(STORE_SCHEMES), wrong_answers=_cheapest_scheme_wrong,
        concepts=("precision-range", "bytes-per-element"),
        form="one of " + ", ".join(repr(n) for n in STORE_SCHEMES) + ": the scheme with the fewest bits "
             "per element that meets both budgets, the error budget in every row",
        hints=("Two budgets pull apart: finer scales cut the error of an integer format but cost bits; "
               "a float format's grid is relative, but coarse. And an error over a whole matrix is "
               "an average weighted by each row's energy.",
               "For each scheme, count bits per element with the scales and any entries kept apart "
               "included; then measure each row's relative RMS error (its own mean squares, error "
               "over original) and keep the worst row. The last scheme you build yourself: zero the "
               "large entries, quantize the rest, put them back.",
               "Sanity check: which rows hold the outlier entries? A scale shared with one of them "
               "leaves the rest of its group few levels; the scheme you keep must cope with that "
               "row too.")),
    ValueExercise(
        "05.8", expected=_fewest_bits, rel_tol=0.0, abs_tol=0.0, wrong_answers=_fewest_bits_wrong,
        concepts=("precision-range",),
        form="an integer from 7 to 23: the fewest mantissa bits for which one running sum of all 16,384 "
             "products stays within 1 % (exact)",
        hints=("Section 7: each add rounds the running sum to its gap, which doubles with every binade "
               "the sum climbs. How does the gap, relative to a product, change with one more mantissa bit?",
               "Either scale: the BF16 measurement tells you how long a sum 7 bits keep within 1 %, and "
               "one more bit halves every gap. Or measure: round the running sum yourself to M bits "
               "(section 3's formula, BF16's exponent range) and compare with the exact sum.",
               "Sanity check: with your M, the sum of all the products must still be growing at the end "
               "and within 1 %; one bit fewer must be over 1 %.")),
]
