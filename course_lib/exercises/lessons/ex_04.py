"""Checks for lesson 04, the roofline (answers in solutions/04_roofline.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.variants import Variants
from course_lib.exercises.decision import OptimumExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import (_dtype_widths, other_accelerator, _other_accelerators, _peak_precisions,
                                                 shared, _with_generated)
from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.roofline import (Kernel, attainable_flops, binding_ceiling, hierarchical_ceilings,
                                 matmul_intensity, matmul_kernel, place_kernel, read_profile, ridge_point)

__all__ = ["EXERCISES"]


_INTENSITY = "1. Arithmetic intensity and machine balance"
_BOUND = "2. The roofline bound"
_SPARSITY = "5. Why sustained throughput falls below the rated peak, and what sparsity doubles"

#: Exercise 04.2's accelerators and model widths: the first is the course's default.
_GEMV_VARIANTS = Variants(
    options=({"accelerator": "H200", "hidden": 8192}, {"accelerator": "H100 SXM", "hidden": 8192},
             {"accelerator": "B200", "hidden": 12288}, {"accelerator": "A100 SXM 80GB", "hidden": 5120},
             {"accelerator": "MI300X", "hidden": 8192}, {"accelerator": "L4", "hidden": 4096},
             {"accelerator": "H100 PCIe", "hidden": 6144}),
    statement="a 1 x {hidden} by {hidden} x {hidden} BF16 GEMV on the {accelerator}, in microseconds")

C_WRITE = shared("c-write-forgotten", "04", _INTENSITY)
RIDGE_TENS = Misconception(
    "ridge-tens-of-flop-per-byte", "Ridge points taken to be tens of FLOP per byte, so that billions "
    "of FLOP look compute-bound: for dense 16-bit math they are in the hundreds.", "04", "Misconceptions",
    "Compute the kernel's intensity and the chip's ridge point, and compare the two numbers.")
COMPUTE_NOT_MAX = Misconception(
    "roofline-compute-term-only", "The compute time alone where the bound is the larger of the "
    "compute and the memory times.", "04", _BOUND,
    "Compute both F / peak and Q / bandwidth; the kernel cannot beat either.")
SUM_NOT_MAX = Misconception(
    "roofline-sum-not-max", "The two times added: the roofline overlaps compute and memory, so the "
    "bound is the larger one, not the sum.", "04", _BOUND, "Take the maximum of the two times.")
WEIGHTS_ONLY = Misconception(
    "weights-bytes-only", "Only the weight matrix's bytes counted: the activations in and the "
    "output out move too, and at large m they matter.", "04", _INTENSITY,
    "Count all three matrices' bytes: m k + k n + m n elements.")
LAST_MEMORY_BOUND = Misconception(
    "last-below-not-first-above", "The last m below the ridge where the first m at or above it was "
    "asked.", "04", _INTENSITY, "Check your m: its intensity must reach the ridge point.")
ONE_FLOP_PER_FMA = Misconception(
    "fma-one-flop", "One FLOP per multiply-add: a fused multiply-add counts as 2 FLOP, so a matmul "
    "does 2 m k n.", "04", _INTENSITY, "Count the multiply and the add: 2 FLOP per term.")
BYTES_IGNORED = Misconception(
    "element-size-ignored", "Elements counted where bytes were asked: multiply by "
    "bytes_per_element.", "04", _INTENSITY, "Intensity is FLOP per byte: each element is "
    "bytes_per_element bytes.")
ROOFLINE_MAX = Misconception(
    "roofline-max-not-min", "The higher of the two roofs: the attainable rate is the lower of the "
    "peak and bandwidth x intensity.", "04", _BOUND, "A kernel is held back by whichever roof is lower.")
ROOFLINE_NO_PEAK = Misconception(
    "roofline-no-peak", "Bandwidth x intensity without the flat roof: no kernel runs faster than "
    "the peak.", "04", _BOUND, "Cap bandwidth x intensity at the peak, elementwise.")


def _attention_scores_bound() -> str:
    """Q K^T for 4096 queries and keys, head dimension 128, BF16, on the B200."""
    kernel = matmul_kernel("attention scores", 4096, 128, 4096, "bf16")
    return place_kernel(kernel, "B200", "bf16").bound


def _decode_gemv_time_us(accelerator, hidden) -> float:
    """Lower bound on one decode GEMV (1 x hidden times hidden x hidden, BF16) in us
    (the course's default: 8192 on the H200)."""
    kernel = matmul_kernel("decode GEMV", 1, hidden, hidden, "bf16")
    return place_kernel(kernel, accelerator, "bf16").t_min_s * 1e6


def _smallest_compute_bound_batch() -> int:
    """Smallest m for which (m x 8192) @ (8192 x 8192) in BF16 reaches the H100 SXM's ridge.

    Found by a sweep (the learner may solve the inequality instead): independent of any
    closed form the learner might get wrong.
    """
    h100 = get_accelerator("H100 SXM")
    ridge = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
    for m in range(1, 8193):
        if matmul_intensity(m, 8192, 8192, 2) >= ridge:
            return m
    raise RuntimeError("no batch up to 8192 reaches the ridge")


def _intensity_without_c(m, k, n, bytes_per_element=2) -> float:
    """The misconception: A and B read, the write of C forgotten."""
    return 2 * m * k * n / (bytes_per_element * (m * k + k * n))


def _attention_scores_wrong() -> dict:
    b200 = get_accelerator("B200")
    ridge = b200.ridge_point("bf16")
    found = {C_WRITE: "compute" if _intensity_without_c(4096, 128, 4096) >= ridge else "memory",
             RIDGE_TENS: "compute",
             FP32_RIDGE: "compute" if matmul_intensity(4096, 128, 4096, 2) >= b200.ridge_point("fp32") else "memory"}
    right = _attention_scores_bound()
    return {k: v for k, v in found.items() if v != right}


def _gemv_time_us(accelerator, hidden, nbytes) -> float:
    """The GEMV's bound in us had it moved ``nbytes`` (a known mistake's count)."""
    kernel = matmul_kernel("decode GEMV", 1, hidden, hidden, "bf16")
    return place_kernel(Kernel("gemv, bytes miscounted", kernel.flops, nbytes), accelerator, "bf16").t_min_s * 1e6


def _decode_gemv_slips(accelerator, hidden) -> dict:
    """Another chip's row of the catalog, another element width, another precision's peak."""
    return {**_other_accelerators(lambda name: _decode_gemv_time_us(name, hidden), accelerator, "04", _BOUND),
            **_dtype_widths(lambda b: _gemv_time_us(accelerator, hidden, b * (2 * hidden + hidden * hidden)),
                           "04", _INTENSITY)}


def _decode_gemv_wrong(accelerator, hidden) -> dict:
    point = place_kernel(matmul_kernel("decode GEMV", 1, hidden, hidden, "bf16"), accelerator, "bf16")
    return {Q_IN_ELEMENTS: _gemv_time_us(accelerator, hidden, 2 * hidden + hidden * hidden),
            shared("seconds-for-unit", "04", _BOUND): point.t_min_s,
            Misconception("milliseconds-for-microseconds", "Milliseconds where microseconds were "
                          "asked.", "04", _BOUND,
                          "Seconds to microseconds is x 1e6, not x 1e3."): point.t_min_s * 1e3,
            COMPUTE_NOT_MAX: point.t_compute_s * 1e6,
            # the small terms the task names, left out: 1 / hidden of the bytes, inside the tolerance
            WEIGHTS_ONLY: _gemv_time_us(accelerator, hidden, 2 * hidden * hidden),
            C_WRITE: _gemv_time_us(accelerator, hidden, 2 * (hidden + hidden * hidden)),
            SUM_NOT_MAX: (point.t_compute_s + point.t_memory_s) * 1e6,
            shared("other-accelerator", "04", _BOUND): _decode_gemv_time_us(other_accelerator(accelerator), hidden),
            shared("fp32-bytes", "04", _INTENSITY): place_kernel(
                matmul_kernel("gemv", 1, hidden, hidden, "fp32"), accelerator, "bf16").t_min_s * 1e6,
            **_gemv_term_widths(accelerator, hidden),
            PER_SM_BANDWIDTH: place_kernel(matmul_kernel("gemv", 1, hidden, hidden, "bf16"), dataclasses.replace(
                get_accelerator(accelerator), mem_bandwidth=get_accelerator(accelerator).mem_bandwidth
                / get_accelerator(accelerator).sm_count), "bf16").t_min_s * 1e6}


Q_IN_ELEMENTS = Misconception(
    "gemv-bytes-counted-as-elements", "Q counted in elements, the element size left out: the memory "
    "time divides bytes by bytes per second, and each BF16 element is 2 bytes.", "04", _INTENSITY,
    "Q = bytes_per_element x (m k + k n + m n): multiply the elements moved by their size in bytes.")
PER_SM_BANDWIDTH = Misconception(
    "one-sms-bandwidth-for-the-chip", "One SM's share of the bandwidth (mem_bandwidth / sm_count) for a "
    "kernel that runs on the whole chip: the GEMV's bytes are read by every SM together, at the chip's "
    "full bandwidth.", "04", _BOUND,
    "Divide the bytes by the chip's mem_bandwidth itself; per-SM shares are for one SM's part of the work.")

def _gemv_term_widths(accelerator, hidden) -> dict:
    """One term of the byte count (the vector in, or the vector out) at another width than BF16's:
    1 / hidden of the bytes, inside the tolerance, so each is listed."""
    total = 2 * (2 * hidden + hidden * hidden)
    found = {}
    # the output first: FP32 is its accumulator's width, the likelier slip
    for term, what in (("output", "the output vector"), ("input", "the input vector")):
        for width, name in ((4, "FP32"), (1, "FP8")):
            found[Misconception(
                f"{term}-at-{name.lower()}-width", f"{what.capitalize()} counted at {name}'s {width} "
                f"byte{'s' if width > 1 else ''} per element: the task's GEMV moves every matrix in BF16, "
                "2 bytes each, whatever width the accumulator or another kernel uses.", "04", _INTENSITY,
                f"Count {what} at 2 bytes per element, as the weights: the task's dtype is BF16 for all three.")] = \
                _gemv_time_us(accelerator, hidden, total + (width - 2) * hidden)
    return found


def _first_m(intensity, ridge) -> int:
    return next(m for m in range(1, 100_000) if intensity(m, 8192, 8192, 2) >= ridge)


FP32_RIDGE = Misconception(
    "fp32-ridge-for-bf16", "The FP32 peak's ridge point where the matmul runs in BF16 on the tensor "
    "cores: the BF16 peak is many times higher, and so is its ridge.", "04", _INTENSITY,
    "Take the ridge of the precision the matmul runs in: peak('bf16') over the bandwidth.")


@functools.lru_cache(maxsize=None)     # simulations and sweeps: once per session (callers copy the dict)
def _smallest_batch_slips() -> dict:
    """Another chip's ridge, another precision's peak, another element width."""
    h100 = get_accelerator("H100 SXM")
    ridge = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
    return {**_other_accelerators(lambda name: _first_m(matmul_intensity, get_accelerator(name).ridge_point("bf16")),
                                 "H100 SXM", "04", _INTENSITY),
            **_peak_precisions(lambda p: _first_m(matmul_intensity, ridge_point(h100.peak(p), h100.mem_bandwidth)),
                              "04", _SPARSITY, precisions=("fp8", "int8", "tf32")),
            **_dtype_widths(lambda b: _first_m(lambda m, k, n, _: matmul_intensity(m, k, n, b), ridge), "04",
                           _INTENSITY)}


SQUARE_RULE = Misconception(
    "square-matmul-rule-for-skinny", "The square matmul's rule, n >= 3 I* (its intensity is n / 3), "
    "applied to an m x 8192 by 8192 x 8192 matmul: with k = n = 8192 fixed the intensity is "
    "2 m k n / (2 (m k + k n + m n)), close to m for a small m, not m / 3.", "04", _INTENSITY,
    "Write the intensity for this shape, m k + k n + m n elements moved, and find the first m that "
    "reaches the ridge.")


@functools.lru_cache(maxsize=None)     # simulations and sweeps: once per session (callers copy the dict)
def _smallest_batch_wrong() -> dict:
    h100 = get_accelerator("H100 SXM")
    ridge = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
    right = _first_m(matmul_intensity, ridge)
    # 4-byte elements halve the intensity, as a doubled ridge does: the two name one value, the
    # element size first (the likelier slip in a task that states BF16).
    return {shared("fp32-bytes", "04", _INTENSITY): _first_m(lambda m, k, n, b: matmul_intensity(m, k, n, 4), ridge),
            FP32_RIDGE: _first_m(matmul_intensity, ridge_point(h100.peak("fp32"), h100.mem_bandwidth)),
            shared("other-accelerator", "04", _INTENSITY): _first_m(
                matmul_intensity, get_accelerator(other_accelerator("H100 SXM")).ridge_point("bf16")),
            C_WRITE: _first_m(_intensity_without_c, ridge),
            WEIGHTS_ONLY: _first_m(lambda m, k, n, b: 2 * m * k * n / (b * k * n), ridge),
            shared("sparse-peak", "04", _SPARSITY): _first_m(matmul_intensity, 2 * ridge),
            LAST_MEMORY_BOUND: right - 1,
            # (one FLOP per multiply-add lands where 4-byte elements, the sparse peak and the FP8
            # peak do: three names are shown for one value, and those three were seen first)
            SQUARE_RULE: int(np.ceil(3 * ridge)),
            RIDGE_ROUNDED_UP: _first_m(matmul_intensity, np.ceil(ridge)),
            RIDGE_ROUNDED: _first_m(matmul_intensity, np.rint(ridge)),
            C_AT_FP32: _first_m(lambda m, k, n, b: 2 * m * k * n / (b * (m * k + k * n) + 4 * m * n), ridge)}


RIDGE_ROUNDED_UP = Misconception(
    "ridge-rounded-to-integer", "The ridge point rounded up to a whole number of FLOP per byte before "
    "the comparison: the intensity of a batch only has to reach the ridge itself, and near the ridge it "
    "grows by a fraction of a FLOP per byte per token.", "04", _INTENSITY,
    "Compare each intensity with peak / bandwidth unrounded.")
RIDGE_ROUNDED = Misconception(
    "ridge-rounded-to-nearest", "The ridge point rounded to the nearest whole number of FLOP per byte "
    "(as printed) before the comparison: the batch must reach the ridge itself, and near it the "
    "intensity grows by a fraction of a FLOP per byte per token.", "04", _INTENSITY,
    "Compare each intensity with peak / bandwidth unrounded, not with a printout of it.")
C_AT_FP32 = Misconception(
    "c-at-fp32-width", "The output C counted at 4 bytes per element, the FP32 accumulator's width: the "
    "task's matmul writes C in BF16, 2 bytes per element like A and B.", "04", _INTENSITY,
    "Count all three matrices at 2 bytes per element: 2 (m k + k n + m n) bytes.")


C_READ_AND_WRITTEN = Misconception(
    "c-read-and-written", "C counted as read and written, as a GEMM with beta (C = A B + C) does: the "
    "task's matmul only writes C, so its m n elements move once.", "04", _INTENSITY,
    "Bytes: A read once, B read once, C written once: m k + k n + m n elements.")
FLOP_DOUBLED = Misconception(
    "fma-four-flop", "Four FLOP per term: a multiply-add is 2 FLOP, so a matmul does 2 m k n, not "
    "twice that.", "04", _INTENSITY, "FLOP = 2 m k n: one multiply and one add per term.")
EXACT_ADDS = Misconception(
    "k-minus-one-adds", "m n (2 k - 1) FLOP, each dot product's k - 1 additions counted exactly: the "
    "course, like every roofline, counts 2 m k n (a fused multiply-add per term).", "04", _INTENSITY,
    "Count 2 FLOP per multiply-add: F = 2 m k n.")
BYTES_PER_FLOP = Misconception(
    "bytes-per-flop", "Bytes per FLOP, the inverse, where intensity is FLOP per byte.", "04", _INTENSITY,
    "Put the FLOP on top: intensity = FLOP / bytes.")
BYTES_MULTIPLIED = Misconception(
    "element-size-on-top", "The element size multiplied into the FLOP where it divides them: wider "
    "elements mean more bytes, so a lower intensity.", "04", _INTENSITY,
    "bytes = bytes_per_element x (m k + k n + m n); divide the FLOP by that.")
ELEMENT_SIZE_FIXED = Misconception(
    "element-size-fixed-at-two", "bytes_per_element fixed at 2 (BF16) whatever the caller passes: the "
    "function must take the element size it is given.", "04", _INTENSITY,
    "Use the bytes_per_element argument in the byte count; 2 is only its default.")
BITS_NOT_BYTES = Misconception(
    "element-size-in-bits", "The element size counted in bits (16 for BF16): intensity is FLOP per "
    "byte.", "04", _INTENSITY, "bytes_per_element is in bytes: 2 for BF16, 4 for FP32.")
FLOOR_DIVISION = Misconception(
    "intensity-floor-division", "Integer division (//), which drops the fraction of the intensity: "
    "it is a float.", "04", _INTENSITY, "Divide with /, not //.")


C_SIZED_M_BY_K = Misconception(
    "c-sized-m-by-k", "C's bytes counted as m x k (A's shape) where C is m x n: the output has one "
    "element per row of A and column of B, whatever the length k of the dot products.", "04", _INTENSITY,
    "Bytes: A is m x k, B is k x n, C is m x n; test a shape with m, k and n all different.")
C_SIZED_N_BY_K = Misconception(
    "c-sized-n-by-k", "C's bytes counted as n x k (B's shape turned round) where C is m x n: the output "
    "has one element per row of A and column of B.", "04", _INTENSITY,
    "Bytes: A is m x k, B is k x n, C is m x n; test a shape with m, k and n all different.")


def _intensity_wrong() -> dict:
    def wrong(flop, elements, bytes_of=lambda b: b):
        def intensity(m, k, n, bytes_per_element=2):
            return flop(m, k, n) / (bytes_of(bytes_per_element) * elements(m, k, n))
        return intensity

    flop2, all3 = (lambda m, k, n: 2 * m * k * n), (lambda m, k, n: m * k + k * n + m * n)
    return {C_WRITE: _intensity_without_c,
            ONE_FLOP_PER_FMA: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, bytes_per_element) / 2,
            BYTES_IGNORED: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, 1),
            C_READ_AND_WRITTEN: wrong(flop2, lambda m, k, n: m * k + k * n + 2 * m * n),
            WEIGHTS_ONLY: wrong(flop2, lambda m, k, n: k * n),
            FLOP_DOUBLED: wrong(lambda m, k, n: 4 * m * k * n, all3),
            EXACT_ADDS: wrong(lambda m, k, n: m * n * (2 * k - 1), all3),
            BYTES_PER_FLOP: lambda m, k, n, bytes_per_element=2: 1 / matmul_intensity(m, k, n, bytes_per_element),
            BYTES_MULTIPLIED: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, 1) * bytes_per_element,
            ELEMENT_SIZE_FIXED: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, 2),
            BITS_NOT_BYTES: wrong(flop2, all3, lambda b: 8 * b),
            FLOOR_DIVISION: lambda m, k, n, bytes_per_element=2: (2 * m * k * n) // (bytes_per_element * all3(m, k, n)),
            C_SIZED_N_BY_K: wrong(flop2, lambda m, k, n: m * k + 2 * k * n),
            C_SIZED_M_BY_K: wrong(flop2, lambda m, k, n: 2 * m * k + k * n),
            A_FORGOTTEN: wrong(flop2, lambda m, k, n: k * n + m * n),
            B_FORGOTTEN: wrong(flop2, lambda m, k, n: m * k + m * n),
            A_SIZED_M_BY_N: wrong(flop2, lambda m, k, n: k * n + 2 * m * n),
            B_SIZED_K_BY_M: wrong(flop2, lambda m, k, n: 2 * m * k + m * n),
            DIMENSIONS_ADDED: wrong(flop2, lambda m, k, n: m + k + n),
            C_AT_FP32: lambda m, k, n, bytes_per_element=2: 2 * m * k * n / (
                bytes_per_element * (m * k + k * n) + 4 * m * n),
            INTENSITY_ROUNDED: lambda m, k, n, bytes_per_element=2: round(matmul_intensity(m, k, n, bytes_per_element)),
            FLOP_WITHOUT_K: wrong(lambda m, k, n: 2 * m * n, all3)}


FLOP_WITHOUT_K = Misconception(
    "flop-without-k", "2 m n FLOP, one multiply-add per output element: each of the m n outputs is a dot "
    "product of length k, k multiply-adds.", "04", _INTENSITY, "FLOP = 2 m k n: 2 per term, k terms per output.")


A_FORGOTTEN = Misconception(
    "a-read-forgotten", "The read of A left out of the bytes (only B and C counted): the activations "
    "cross the memory bus too, m x k elements of them.", "04", _INTENSITY,
    "Count the bytes of all three matrices: m k + k n + m n elements.")
B_FORGOTTEN = Misconception(
    "b-read-forgotten", "The read of B left out of the bytes (only A and C counted): the weights "
    "cross the memory bus too, k x n elements of them.", "04", _INTENSITY,
    "Count the bytes of all three matrices: m k + k n + m n elements.")
A_SIZED_M_BY_N = Misconception(
    "a-sized-m-by-n", "A's bytes counted as m x n (C's shape) where A is m x k: each operand has its "
    "own shape.", "04", _INTENSITY,
    "Bytes: A is m x k, B is k x n, C is m x n; test a shape with m, k and n all different.")
B_SIZED_K_BY_M = Misconception(
    "b-sized-k-by-m", "B's bytes counted as k x m (A's shape turned round) where B is k x n: each "
    "operand has its own shape.", "04", _INTENSITY,
    "Bytes: A is m x k, B is k x n, C is m x n; test a shape with m, k and n all different.")
DIMENSIONS_ADDED = Misconception(
    "dimensions-added-not-multiplied", "The bytes counted as m + k + n elements: each matrix holds the "
    "product of its two dimensions, m k, k n and m n elements.", "04", _INTENSITY,
    "An m x k matrix has m k elements: bytes = bytes_per_element x (m k + k n + m n).")
INTENSITY_ROUNDED = Misconception(
    "intensity-rounded", "The intensity rounded to a whole number: it is a ratio, a float, and a kernel "
    "near a ridge point is judged by its fraction too.", "04", _INTENSITY, "Return the quotient unrounded.")


BANDWIDTH_OVER_INTENSITY = Misconception(
    "bandwidth-divided-by-intensity", "The bandwidth divided by the intensity: bytes/s times FLOP/byte "
    "gives FLOP/s, so the sloped roof is bandwidth x intensity.", "04", _BOUND,
    "Check the units: (bytes/s) x (FLOP/byte) = FLOP/s.")
TIMES_ADDED_ROOF = Misconception(
    "roofline-rates-combined-as-sum-of-times", "The two times added per FLOP, 1 / (1 / peak + 1 / "
    "(bandwidth x intensity)): the roofline overlaps compute and memory, so the rate is the lower "
    "roof itself.", "04", _BOUND, "Take np.minimum(peak, bandwidth x intensity), elementwise.")
PEAK_ONLY_ROOF = Misconception(
    "roofline-flat-roof-only", "The peak returned for every intensity: below the ridge a kernel is held "
    "to bandwidth x intensity.", "04", _BOUND, "Compare the peak with bandwidth x intensity at each intensity.")
FRACTION_OF_PEAK = Misconception(
    "roofline-as-fraction-of-peak", "The attainable rate as a fraction of the peak: the function returns "
    "FLOP/s.", "04", _BOUND, "Do not divide by the peak: return min(peak, bandwidth x intensity) in FLOP/s.")
TERA_UNITS = Misconception(
    "roofline-in-tflops", "TFLOP/s (divided by 1e12) where FLOP/s were asked: print in TFLOP/s, but "
    "return FLOP/s.", "04", _BOUND, "Return the rate in FLOP/s, the unit the peak comes in.")


RIDGE_UPSIDE_DOWN = Misconception(
    "ridge-upside-down", "The ridge computed upside down, bandwidth / peak (bytes per FLOP), so the "
    "switch to the flat roof comes at a tiny intensity: the ridge is peak / bandwidth, in FLOP per "
    "byte.", "04", _BOUND,
    "Skip the ridge: np.minimum(peak, bandwidth x intensity) switches roofs at the right place by itself.")
INTENSITY_PER_ELEMENT = Misconception(
    "sloped-roof-divided-by-element-size", "bandwidth x intensity divided by the bytes per element, as "
    "if the intensity were FLOP per element: it is already FLOP per byte, so (bytes/s) x (FLOP/byte) "
    "is FLOP/s with no element size in it.", "04", _BOUND,
    "The sloped roof is bandwidth x intensity exactly; the element size entered when the intensity was "
    "computed.")


def _roofline_wrong() -> dict:
    def roof(i, p, b):
        return attainable_flops(np.asarray(i, dtype=float), p, b)

    return {ROOFLINE_MAX: lambda i, p, b: np.maximum(p, b * np.asarray(i, dtype=float)),
            ROOFLINE_NO_PEAK: lambda i, p, b: b * np.asarray(i, dtype=float),
            BANDWIDTH_OVER_INTENSITY: lambda i, p, b: np.minimum(p, b / np.asarray(i, dtype=float)),
            TIMES_ADDED_ROOF: lambda i, p, b: 1 / (1 / p + 1 / (b * np.asarray(i, dtype=float))),
            PEAK_ONLY_ROOF: lambda i, p, b: np.full(np.shape(i), float(p)),
            FRACTION_OF_PEAK: lambda i, p, b: roof(i, p, b) / p,
            TERA_UNITS: lambda i, p, b: roof(i, p, b) / 1e12,
            RIDGE_UPSIDE_DOWN: lambda i, p, b: np.where(np.asarray(i, dtype=float) >= b / p, float(p),
                                                        b * np.asarray(i, dtype=float)),
            INTENSITY_PER_ELEMENT: lambda i, p, b: np.minimum(p, b * np.asarray(i, dtype=float) / 2),
            BANDWIDTH_IN_GB: lambda i, p, b: np.minimum(p, b / 1e9 * np.asarray(i, dtype=float)),
            SECONDS_PER_FLOP: lambda i, p, b: 1 / roof(i, p, b),
            ROOFS_AVERAGED: lambda i, p, b: (p + b * np.asarray(i, dtype=float)) / 2,
            INTENSITY_TRUNCATED: lambda i, p, b: np.minimum(p, b * np.asarray(i, dtype=float).astype(int)),
            PEAK_IN_TERA: lambda i, p, b: np.minimum(p / 1e12, b * np.asarray(i, dtype=float))}


INTENSITY_TRUNCATED = Misconception(
    "intensity-cast-to-int", "The intensities cast to integers (dtype=int) before the multiplication: a "
    "kernel at 0.5 FLOP per byte then gets no rate at all, and every fraction is lost.", "04", _BOUND,
    "Keep the intensities as floats: np.asarray(intensity, dtype=float).")
PEAK_IN_TERA = Misconception(
    "peak-taken-in-tflops", "The peak divided by 1e12 (TFLOP/s) where the sloped roof stays in FLOP/s: the "
    "two roofs must be in one unit before the lower is taken, and the function returns FLOP/s.", "04", _BOUND,
    "Use peak_flops as it comes, in FLOP/s, like bandwidth x intensity.")


BANDWIDTH_IN_GB = Misconception(
    "bandwidth-taken-in-gb", "The bandwidth divided by 1e9 (as if to GB/s) before it multiplies the "
    "intensity: the function receives bytes/s, and bytes/s x FLOP/byte is the FLOP/s it returns.", "04", _BOUND,
    "Use the bandwidth as it comes, in bytes/s: the sloped roof is bandwidth x intensity.")
SECONDS_PER_FLOP = Misconception(
    "roofline-as-seconds-per-flop", "The time per FLOP (1 / rate) returned where the rate was asked: "
    "the roofline gives FLOP/s, higher for a faster kernel.", "04", _BOUND,
    "Return min(peak, bandwidth x intensity) itself, in FLOP/s.")
ROOFS_AVERAGED = Misconception(
    "roofs-averaged", "The two roofs averaged: a kernel cannot beat either of them, so the bound is "
    "the lower one, not a mix.", "04", _BOUND, "Take np.minimum(peak, bandwidth x intensity), elementwise.")


def _odd_size(rng, low, high) -> int:
    """A random size no power-of-two block divides (odd), so tiles never fit it exactly."""
    return int(rng.integers(low, high)) | 1


def _intensity_cases(rng) -> list:
    cases = [((1, 8191, 4097), {"bytes_per_element": 2})]           # a decode-like GEMV
    for _ in range(10):
        m, k, n = (_odd_size(rng, 1, 5000) for _ in range(3))
        while len({m, k, n}) < 3:                                    # keep the shape asymmetric
            n = _odd_size(rng, 1, 5000)
        b = float(rng.choice([0.5, 1.0, 2.0, 4.0]))
        cases.append(((m, k, n), {"bytes_per_element": b}))
    return cases


def _roofline_cases(rng) -> list:
    names = list_accelerators()
    cases = []
    for _ in range(6):
        acc = get_accelerator(names[int(rng.integers(len(names)))])
        precision = "bf16" if "bf16" in acc.peak_flops else "fp16"
        size = _odd_size(rng, 5, 200)
        # Log-uniform intensities from 0.01 to 10^4 FLOP/byte: both sides of every ridge.
        intensity = 10.0 ** rng.uniform(-2, 4, size=size)
        cases.append(((intensity, acc.peak(precision), acc.mem_bandwidth), {}))
    return cases


#: Exercise 04.6's profile of one training step on an H100 SXM, BF16 (task data, illustrative):
#: name -> (duration per call in s, DRAM bytes per call, FLOP per call, calls per step).
_STEP_PROFILE = {
    "decode GEMV": (48e-6, 134_250_496, 134_217_728, 80),
    "layer norm": (22e-6, 16_777_216, 33_554_432, 64),
    "MLP GEMM": (1.65e-3, 1.2e9, 2 * 8192 ** 3, 4),
}


def _recoverable_s(fraction_of_roof=None) -> dict:
    """Seconds per step each kernel would save at its roof: calls x duration x (1 - fraction)."""
    out = {}
    for name, (t, q, f, calls) in _STEP_PROFILE.items():
        r = read_profile(name, t, q, f, "H100 SXM", "bf16")
        out[name] = calls * t * (1 - (r.fraction_of_roof if fraction_of_roof is None else fraction_of_roof(r)))
    return out


def _kernel_to_optimize() -> str:
    saved = _recoverable_s()
    return max(saved, key=saved.get)


_PROFILE = "7b. Reading a profiler's report against the roofline"
FURTHEST_FROM_ROOF = Misconception(
    "furthest-from-roof-first", "The kernel furthest from its roof optimized first: what a kernel "
    "can give back is its distance from the roof times the time it runs, per call and per step.",
    "04", _PROFILE, "Weigh each kernel's (1 - fraction of roof) by its duration and its calls per step.")
PEAK_FLOPS_ROOF = Misconception(
    "peak-flops-roof-for-all", "Every kernel judged against the peak FLOP/s: a memory-bound "
    "kernel's roof is bandwidth x intensity, so its low FLOP rate is no sign of waste.", "04", _PROFILE,
    "Use read_profile's fraction_of_roof, which takes the roof at each kernel's own intensity.")
PER_CALL_ONLY = Misconception(
    "per-call-not-per-step", "The most time recoverable per call, ignoring how often each kernel "
    "runs: a short kernel called many times can cost a step more.", "04", _PROFILE,
    "Multiply each kernel's recoverable time per call by its calls per step.")


MOST_CALLED = Misconception(
    "most-called-kernel-first", "The kernel called most often optimized first: what a kernel can give "
    "back is its time per step times its distance from the roof, and many calls of a short kernel can "
    "add up to less.", "04", _PROFILE, "For each kernel: calls x duration x (1 - fraction of roof).")


FLOP_PEAK_HEADROOM = Misconception(
    "headroom-against-flop-peak", "Each kernel's time per step weighed against the FLOP peak alone, "
    "calls x (t - F / peak): a memory-bound kernel cannot run faster than its bytes allow, so most of "
    "that distance is no time it can give back.", "04", _PROFILE,
    "Take the roof at each kernel's own intensity: calls x duration x (1 - read_profile(...).fraction_of_roof).")
MOST_BYTES = Misconception(
    "most-bytes-per-step-first", "The kernel that moves the most bytes per step optimized first: a "
    "kernel already at its memory roof moves them as fast as it can, and has nothing to give back.",
    "04", _PROFILE, "Ask how far each kernel runs from its roof, not how much it moves.")
LONGEST_CALL = Misconception(
    "longest-call-first", "The kernel whose single call takes longest optimized first, whatever its "
    "distance from its roof and its calls per step.", "04", _PROFILE,
    "For each kernel: calls x duration x (1 - fraction of roof).")


def _kernel_to_optimize_wrong() -> dict:
    readings = {name: read_profile(name, t, q, f, "H100 SXM", "bf16")
                for name, (t, q, f, _) in _STEP_PROFILE.items()}
    per_call = {name: t * (1 - readings[name].fraction_of_roof) for name, (t, *_rest) in _STEP_PROFILE.items()}
    against_peak = _recoverable_s(lambda r: r.compute_fraction)
    # One choice, several mistakes: the likeliest first (26e's round: the headroom against the FLOP
    # peak, weighed per step, before the most-called kernel); at most three names for one choice.
    wrong = {FLOP_PEAK_HEADROOM: max(against_peak, key=against_peak.get),
             FURTHEST_FROM_ROOF: min(readings, key=lambda n: readings[n].fraction_of_roof),
             PEAK_FLOPS_ROOF: min(readings, key=lambda n: readings[n].compute_fraction),
             PER_CALL_ONLY: max(per_call, key=per_call.get),
             MOST_CALLED: max(_STEP_PROFILE, key=lambda n: _STEP_PROFILE[n][3]),
             MOST_BYTES: max(_STEP_PROFILE, key=lambda n: _STEP_PROFILE[n][1] * _STEP_PROFILE[n][3]),
             LONGEST_CALL: max(_STEP_PROFILE, key=lambda n: _STEP_PROFILE[n][0])}
    right = _kernel_to_optimize()
    out, per_choice = {}, {}
    for k, v in wrong.items():
        if v != right and per_choice.get(v, 0) < 3:
            out[k] = v
            per_choice[v] = per_choice.get(v, 0) + 1
    return out
# --- 04.7 (what-if): the L2 bandwidth at which a fixed 64 x 64 tile costs nothing at any prefill --

_HIER = "6. The hierarchical roofline"
TILE, TILE_KN = 64, 8192            # 04.7: an m x 8192 by 8192 x 8192 BF16 matmul, 64 x 64 tiles, A100
TOKENS_MAX = 4096                   # the prefills of the task: m from 1 to 4096 tokens


def _hbm_level() -> str:
    return next(c.level for c in hierarchical_ceilings("A100", "bf16") if c.level.startswith("HBM"))


def _l2_intensity(m, tile=TILE) -> float:
    from course_lib.tiling import tiled_matmul_traffic
    return tiled_matmul_traffic(m, TILE_KN, TILE_KN, tile, bytes_per_element=2).intensity_flops_per_byte


def _untiled_bound(m) -> float:
    """The bound if L2, like HBM, saw each matrix once: the HBM roof (or the peak) at the matmul's
    own intensity, on the A100's section-6 roofline (its L2 roof is then never the lower one)."""
    i = matmul_intensity(m, TILE_KN, TILE_KN, 2)
    return binding_ceiling({"L2": i, _hbm_level(): i}, "A100", "bf16")[1]


def _a100_with_l2(l2_tbs):
    """The catalog's A100 with its L2 read bandwidth set to ``l2_tbs`` TB/s (bytes per clock scaled)."""
    acc = get_accelerator("A100")
    return dataclasses.replace(acc, l2_read_bytes_per_clock=l2_tbs * 1e12 / acc.boost_clock_hz)


def _l2_needed_tbs(m, l2_intensity=None) -> float:
    """L2 bandwidth (TB/s) at which the tiles' L2 roof just reaches the untiled bound at ``m``."""
    return _untiled_bound(m) / (_l2_intensity(m) if l2_intensity is None else l2_intensity) / 1e12


@functools.lru_cache(maxsize=None)
def _l2_for_free_tiles(l2_intensity=None, with_peak=True, with_hbm=True) -> float:
    """Smallest L2 bandwidth (TB/s) at which 64 x 64 tiles cost nothing for every m in 1..4096:
    the largest of the per-prefill needs (4096 closed-form counts, no roofline placement).
    ``with_peak`` / ``with_hbm`` False leave that roof out of the untiled bound (known mistakes)."""
    if not with_hbm:
        peak = get_accelerator("A100").peak("bf16")
        return max(peak / _l2_intensity(m) / 1e12 for m in range(1, TOKENS_MAX + 1))
    if with_peak:
        return max(_l2_needed_tbs(m, l2_intensity) for m in range(1, TOKENS_MAX + 1))
    hbm = get_accelerator("A100").mem_bandwidth
    return max(hbm * matmul_intensity(m, TILE_KN, TILE_KN, 2) / _l2_intensity(m) / 1e12
               for m in range(1, TOKENS_MAX + 1))


FULL_TILES_ONLY = Misconception(
    "full-tile-rows-only", "The tiles' L2 intensity of whole rows of tiles (or of the largest prefill) "
    "taken for every prefill: when 64 does not divide m, the last row of tiles is partly filled yet "
    "still reads all of B, so just past a multiple of 64 the L2 intensity drops.", "04", _HIER,
    "Count the L2 bytes at m = 64 j + 1 for a few j: how many times is B read, for how few rows?")
SQUARE_TILE_INTENSITY = Misconception(
    "tile-intensity-square", "The tiles' L2 intensity taken as T / 2, the square matrix's shortcut, "
    "for every prefill: C's writes and the partly filled last row of tiles both lower it.", "04", _HIER,
    "Count the L2 bytes for each m: A once per column of tiles, B once per row of tiles (whole "
    "rows of tiles, the last one partly filled), C written once.")
PEAK_FORGOTTEN = Misconception(
    "l2-need-without-peak", "The L2 roof asked to match the HBM roof at every intensity, even where "
    "the compute peak is lower than both: past the HBM ridge the untiled bound is the peak, and L2 "
    "only needs to reach the peak.", "04", _HIER,
    "The untiled bound is the lower of the HBM roof and the peak; which one is it at m = 4096?")


HBM_ROOF_FORGOTTEN = Misconception(
    "l2-need-without-hbm-roof", "The untiled bound taken as the compute peak at every prefill: at a "
    "small prefill the matmul is memory-bound, held to the HBM roof, and L2 need only match that.",
    "04", _HIER, "The untiled bound is the lower of the HBM roof and the peak; which one is it at m = 1?")


EASIEST_PREFILL = Misconception(
    "l2-need-at-easiest-prefill", "The smallest of the per-prefill needs where the largest was asked: "
    "the tiles must cost nothing at every prefill, so L2 must meet the hardest one.", "04", _HIER,
    "Compute the L2 bandwidth each prefill needs; which of them does every prefill's bound depend on?")


def _l2_need_on(accelerator="A100", peak_flops=None, bytes_per_element=2) -> float:
    """04.7's L2 bandwidth (TB/s) worked out on another chip, with another peak or element width (a
    learner's slip): the largest per-prefill need, untiled bound over the tiles' L2 intensity."""
    from course_lib.tiling import tiled_matmul_traffic
    acc = get_accelerator(accelerator)
    peak = acc.peak("bf16") if peak_flops is None else peak_flops
    m = np.arange(1, TOKENS_MAX + 1, dtype=float)
    k = n = float(TILE_KN)
    hbm = 2 * m * k * n / (bytes_per_element * (m * k + k * n + m * n))
    bound = np.minimum(peak, acc.mem_bandwidth * hbm)
    l2 = np.array([tiled_matmul_traffic(int(r), TILE_KN, TILE_KN, TILE, bytes_per_element=bytes_per_element)
                   .intensity_flops_per_byte for r in m])
    return float(np.max(bound / l2) / 1e12)


@functools.lru_cache(maxsize=None)      # 4096 counts per chip, peak and width
def _l2_need_slips() -> dict:
    """The sparse peak, FP32 elements, another chip's row of the catalog, another precision's peak."""
    a100 = get_accelerator("A100")
    return {shared("sparse-peak", "04", _SPARSITY): _l2_need_on(peak_flops=2 * a100.peak("bf16")),
            shared("fp32-bytes", "04", _INTENSITY): _l2_need_on(bytes_per_element=4),
            **_other_accelerators(_l2_need_on, "A100", "04", _HIER),
            **_peak_precisions(lambda p: _l2_need_on(peak_flops=a100.peak(p)), "04", _SPARSITY,
                               precisions=("fp32", "tf32", "int8"))}


def _l2_need_without_c() -> float:
    """04.7 with the tiles' L2 traffic counted as the re-reads of A and B only (C's writes left out)."""
    from course_lib.tiling import tiled_matmul_traffic
    need = 0.0
    for m in range(1, TOKENS_MAX + 1):
        t = tiled_matmul_traffic(m, TILE_KN, TILE_KN, TILE, bytes_per_element=2)
        need = max(need, _untiled_bound(m) / (2 * m * TILE_KN * TILE_KN / (t.a_bytes + t.b_bytes)) / 1e12)
    return need


L2_WITHOUT_C = Misconception(
    "l2-traffic-without-c", "The tiles' L2 traffic counted as the re-reads of A and B alone: each tile also "
    "writes its piece of C through L2, and at a small prefill those bytes lower the L2 intensity enough "
    "to move the answer.", "04", _HIER,
    "Count the L2 bytes of all three matrices: tiled_matmul_traffic(...) has a_bytes, b_bytes and c_bytes.")


def _l2_for_free_tiles_listed() -> dict:
    right = _l2_for_free_tiles()
    wrong = {FULL_TILES_ONLY: _l2_needed_tbs(TOKENS_MAX),
             SQUARE_TILE_INTENSITY: _l2_for_free_tiles(TILE / 2),
             PEAK_FORGOTTEN: _l2_for_free_tiles(with_peak=False),
             HBM_ROOF_FORGOTTEN: _l2_for_free_tiles(with_hbm=False),
             EASIEST_PREFILL: min(_l2_needed_tbs(m) for m in range(1, TOKENS_MAX + 1)),
             L2_WITHOUT_C: _l2_need_without_c()}
    return {k: v for k, v in wrong.items() if abs(v / right - 1) > 1e-3}


_l2_for_free_tiles_wrong = _with_generated(_l2_for_free_tiles_listed, _l2_for_free_tiles,
                                           lambda: dict(_l2_need_slips()), rel_tol=1e-3)


# --- 04.8 (diagnose, then design): the largest batch under a latency target, from measurements --

BATCH_HIDDEN, BATCH_TARGET_S = 8192, 60e-6      # 04.8: b x 8192 @ 8192 x 8192 in BF16 on an H100 SXM
#: 04.8's measured step times (task data, as a profiler would report them): batch -> seconds.
BATCH_MEASURED_S = {32: 46.4e-6, 2048: 389.5e-6}


def _layer(b):
    return matmul_kernel("layer", b, BATCH_HIDDEN, BATCH_HIDDEN, "bf16")


@functools.lru_cache(maxsize=None)
def _sustained() -> tuple:
    """(FLOP/s, bytes/s) the kernel sustains: the large batch is compute-bound, the small one
    memory-bound (each is checked against the rate the other gives)."""
    (small, t_small), (big, t_big) = sorted(BATCH_MEASURED_S.items())
    bandwidth = _layer(small).bytes_moved / t_small
    flops = _layer(big).flops / t_big
    if _layer(small).flops / flops >= t_small or _layer(big).bytes_moved / bandwidth >= t_big:
        raise RuntimeError("04.8: the measurements are not one memory-bound and one compute-bound")
    return flops, bandwidth


def _step_s(b) -> float:
    flops, bandwidth = _sustained()
    k = _layer(b)
    return max(k.flops / flops, k.bytes_moved / bandwidth)


def _largest_batch(time_of) -> int:
    """The largest b in 1..8192 with time_of(b) within the target (time grows with b: bisection)."""
    low, high = 0, 8192                 # time_of(low) meets the target (or low = 0: none does)
    if time_of(high) <= BATCH_TARGET_S:
        return high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if time_of(mid) <= BATCH_TARGET_S else (low, mid)
    return low


@functools.lru_cache(maxsize=None)
def _batch_under_target() -> int:
    return _largest_batch(_step_s)


def _batch_feasible(b) -> str | None:
    if b < 1:
        return f"b = {b} serves no token; a batch is at least 1"
    t = _step_s(b)
    if t > BATCH_TARGET_S:
        return f"b = {b} takes {t * 1e6:.2f} us at the rates the kernel sustains, over the 60 us target"
    return None


RATED_NOT_MEASURED = Misconception(
    "rated-not-sustained", "The catalog's rated peak and bandwidth used where the kernel was measured: "
    "it sustains less of both, and the measurements say how much.", "04", _SPARSITY,
    "Derive from each measurement the rate that limits it: bytes / time at the small batch, FLOP / "
    "time at the large one.")
TIME_PROPORTIONAL = Misconception(
    "time-proportional-to-batch", "The time taken to grow in proportion to the batch from the small "
    "measurement: at a small batch the weights' bytes dominate, and they do not grow with b.", "04", _BOUND,
    "Which term dominates at b = 32, and does it grow with b?")
LINEAR_BETWEEN = Misconception(
    "linear-between-measurements", "A straight line through the two measurements: the roofline time "
    "is the larger of two terms, nearly flat and then steep, not one line.", "04", _BOUND,
    "Model each measurement with the term that limits it, then take the larger of the two terms at your b.")
MEMORY_BOUND_ALWAYS = Misconception(
    "batched-gemv-always-memory-bound", "A batched GEMV taken to stay memory-bound at any batch: "
    "every row of the batch reuses the weights, and past the ridge the compute time is the larger.",
    "04", _BOUND, "Compute both times at your batch: which one exceeds the target?")


def _batch_wrong() -> dict:
    flops, bandwidth = _sustained()
    (small, t_small), (big, t_big) = sorted(BATCH_MEASURED_S.items())
    return {RATED_NOT_MEASURED: _largest_batch(lambda b: place_kernel(_layer(b), "H100 SXM", "bf16").t_min_s),
            TIME_PROPORTIONAL: _largest_batch(lambda b: t_small * b / small),
            LINEAR_BETWEEN: _largest_batch(lambda b: t_small + (t_big - t_small) * (b - small) / (big - small)),
            MEMORY_BOUND_ALWAYS: _largest_batch(lambda b: _layer(b).bytes_moved / bandwidth),
            SUM_NOT_MAX: _largest_batch(lambda b: _layer(b).flops / flops + _layer(b).bytes_moved / bandwidth)}


EXERCISES = [
    ChoiceExercise(
        "04.1", expected=_attention_scores_bound, choices=("memory", "compute"),
        wrong_answers=_attention_scores_wrong, concepts=("intensity", "ridge-point"),
        form="a string, 'memory' or 'compute'",
        hints=("Intensity is FLOP divided by bytes; a matmul reads A and B once and writes C once.",
               "With k = 128 the output C (m x n) dominates the bytes moved, and it is written once "
               "for only 2k FLOP per element.",
               "Compare matmul_intensity(4096, 128, 4096, 2) with the B200's ridge point "
               "get_accelerator('B200').ridge_point('bf16').")),
    ValueExercise(
        "04.2", quantity=("time", "data"), expected=_decode_gemv_time_us, rel_tol=1e-3,
        wrong_answers=_with_generated(_decode_gemv_wrong, _decode_gemv_time_us, _decode_gemv_slips, _replayed(_decode_gemv_time_us, "04"), rel_tol=1e-3),
        variants=_GEMV_VARIANTS,
        concepts=("roofline-bound",),
        form="a float: the time in microseconds (us), not seconds, of the 1 x {hidden} GEMV on "
             "the {accelerator}",
        hints=("The bound is t = max(F / peak, Q / bandwidth); compute both terms.",
               "F = 2 m k n FLOP and Q = 2 (m k + k n + m n) bytes for a BF16 matmul; "
               "which of the two times is larger for m = 1?",
               "place_kernel(matmul_kernel('gemv', 1, {hidden}, {hidden}, 'bf16'), '{accelerator}', "
               "'bf16').t_min_s is in seconds; multiply by 1e6.")),
    ValueExercise(
        "04.3", expected=_smallest_compute_bound_batch, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_smallest_batch_wrong, _smallest_compute_bound_batch, _smallest_batch_slips, _replayed(_smallest_compute_bound_batch, "04")),
        concepts=("intensity", "ridge-point"),
        form="an integer: the number of tokens m (exact)",
        hints=("Compute-bound means intensity >= ridge point; the intensity grows with m.",
               "Sweep m = 1, 2, 3, ... with matmul_intensity(m, 8192, 8192, 2) and stop at the first "
               "m that reaches the H100 SXM's BF16 ridge point.",
               "Or solve 2 m k n / (2 (m k + k n + m n)) >= I* for m and round up; check the "
               "neighbouring integers with the sweep.")),
    FunctionExercise(
        "04.4", reference=matmul_intensity, make_cases=_intensity_cases, rel_tol=1e-9,
        wrong_implementations=_intensity_wrong, concepts=("intensity",),
        form="a function matmul_intensity(m, k, n, bytes_per_element) returning FLOP per byte (a float)",
        hints=("FLOP: one multiply and one add per term of each of the m x n dot products of length k.",
               "Bytes: A is m x k, B is k x n, C is m x n; each element takes bytes_per_element bytes.",
               "Did you count writing C, and do m and n appear in the right places? Test a shape "
               "with m, k and n all different.")),
    FunctionExercise(
        "04.5", reference=attainable_flops, make_cases=_roofline_cases, rel_tol=1e-9,
        wrong_implementations=_roofline_wrong, concepts=("roofline-bound",),
        form="a function roofline(intensity, peak_flops, bandwidth) returning a NumPy array of "
             "FLOP/s, the same shape as intensity",
        hints=("A kernel is bounded by the peak and by bandwidth x intensity: whichever is lower.",
               "Work elementwise on the array: np.minimum, not Python's min.",
               "Units: bandwidth in bytes/s times intensity in FLOP/byte gives FLOP/s.")),
    ChoiceExercise(
        "04.6", expected=_kernel_to_optimize, choices=tuple(_STEP_PROFILE),
        wrong_answers=_kernel_to_optimize_wrong, concepts=("roofline-bound",),
        form="a string: the name of one kernel of the profile",
        hints=("Judge each kernel against the roof that applies at its intensity, not against the "
               "peak FLOP/s: read_profile(name, duration_s, bytes, flops, 'H100 SXM', 'bf16').",
               "A kernel at fraction f of its roof could at best run in f times its duration: it "
               "can save duration x (1 - f) per call.",
               "Multiply by the calls per step and pick the largest total; the kernel furthest "
               "from its roof is not necessarily the one that costs the most.")),
    ValueExercise(
        "04.7", expected=_l2_for_free_tiles, rel_tol=1e-3, wrong_answers=_l2_for_free_tiles_wrong,
        concepts=("intensity", "ridge-point"),
        form="a float: the smallest L2 bandwidth in TB/s (1e12 bytes/s) at which the 64 x 64 tiles cost "
             "nothing for every prefill m from 1 to 4096 (within 0.1 %)",
        hints=("This matmul has one intensity per level: against HBM its own (each matrix once), against "
               "L2 the tiled traffic's. The tiles cost nothing at m when the L2 roof at the L2 intensity "
               "is at least the bound the matmul reaches without them.",
               "For one m that gives the L2 bandwidth needed: the untiled bound divided by the L2 "
               "intensity. The answer is the largest need over m. Count the L2 bytes exactly: a partly "
               "filled row of tiles still reads all of B.",
               "Sanity check: at your bandwidth the need is met with nothing to spare at one prefill; "
               "is that prefill a multiple of 64? Compare with the need at m = 4096.")),
    OptimumExercise(
        "04.8", expected=_batch_under_target, feasible=_batch_feasible, goal="largest",
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_with_generated(_batch_wrong, _batch_under_target, _replayed(_batch_under_target, "04", integer=True)), concepts=("roofline-bound",),
        form="an integer: the largest batch b whose b x 8192 by 8192 x 8192 BF16 matmul takes at most "
             "60 us at the rates the measured kernel sustains (exact)",
        hints=("Each measurement is limited by one thing: the weights' bytes at a small batch, the FLOP "
               "at a large one. Check which, with the catalog's ridge point.",
               "From the memory-bound measurement take the bandwidth the kernel sustains (bytes / time); "
               "from the compute-bound one the FLOP/s it sustains (FLOP / time).",
               "Model the time at any b as section 2's bound with those two rates; it grows with b, so the "
               "answer is where it crosses 60 us. Check b and b + 1.")),
]
