"""Checks for lesson 04, the roofline (answers in solutions/04_roofline.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools

import numpy as np

from course_lib.checks import ChoiceExercise, FunctionExercise, Misconception, ValueExercise, Variants
from course_lib.exercise_checks.misconceptions import shared
from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.roofline import (attainable_flops, binding_ceiling, hierarchical_ceilings,
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
    ridge = get_accelerator("B200").ridge_point("bf16")
    return {C_WRITE: "compute" if _intensity_without_c(4096, 128, 4096) >= ridge else "memory",
            RIDGE_TENS: "compute"}


def _decode_gemv_wrong(accelerator, hidden) -> dict:
    point = place_kernel(matmul_kernel("decode GEMV", 1, hidden, hidden, "bf16"), accelerator, "bf16")
    return {shared("seconds-for-unit", "04", _BOUND): point.t_min_s,
            Misconception("milliseconds-for-microseconds", "Milliseconds where microseconds were "
                          "asked, a factor of 1000.", "04", _BOUND,
                          "Seconds to microseconds is x 1e6, not x 1e3."): point.t_min_s * 1e3,
            COMPUTE_NOT_MAX: point.t_compute_s * 1e6,
            SUM_NOT_MAX: (point.t_compute_s + point.t_memory_s) * 1e6,
            shared("fp32-bytes", "04", _INTENSITY): place_kernel(
                matmul_kernel("gemv", 1, hidden, hidden, "fp32"), accelerator, "bf16").t_min_s * 1e6}


def _first_m(intensity, ridge) -> int:
    return next(m for m in range(1, 100_000) if intensity(m, 8192, 8192, 2) >= ridge)


def _smallest_batch_wrong() -> dict:
    h100 = get_accelerator("H100 SXM")
    ridge = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
    right = _first_m(matmul_intensity, ridge)
    return {C_WRITE: _first_m(_intensity_without_c, ridge),
            WEIGHTS_ONLY: _first_m(lambda m, k, n, b: 2 * m * k * n / (b * k * n), ridge),
            shared("sparse-peak", "04", _SPARSITY): _first_m(matmul_intensity, 2 * ridge),
            LAST_MEMORY_BOUND: right - 1}


def _intensity_wrong() -> dict:
    return {C_WRITE: _intensity_without_c,
            ONE_FLOP_PER_FMA: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, bytes_per_element) / 2,
            BYTES_IGNORED: lambda m, k, n, bytes_per_element=2: matmul_intensity(m, k, n, 1)}


def _roofline_wrong() -> dict:
    return {ROOFLINE_MAX: lambda i, p, b: np.maximum(p, b * np.asarray(i, dtype=float)),
            ROOFLINE_NO_PEAK: lambda i, p, b: b * np.asarray(i, dtype=float)}


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


def _kernel_to_optimize_wrong() -> dict:
    readings = {name: read_profile(name, t, q, f, "H100 SXM", "bf16")
                for name, (t, q, f, _) in _STEP_PROFILE.items()}
    per_call = {name: t * (1 - readings[name].fraction_of_roof) for name, (t, *_rest) in _STEP_PROFILE.items()}
    wrong = {FURTHEST_FROM_ROOF: min(readings, key=lambda n: readings[n].fraction_of_roof),
             PEAK_FLOPS_ROOF: min(readings, key=lambda n: readings[n].compute_fraction),
             PER_CALL_ONLY: max(per_call, key=per_call.get)}
    right = _kernel_to_optimize()
    return {k: v for k, v in wrong.items() if v != right}
# --- 04.7 (design): the smallest tile that lifts an A100 matmul off its L2 roof ----------------

_HIER = "6. The hierarchical roofline"
TILE_N, TILE_STEP, TILE_MAX = 8192, 16, 512          # 04.7: an 8192^3 BF16 matmul, square tiles


def _tile_intensities(tile):
    from course_lib.tiling import tiled_matmul_traffic
    i_l2 = tiled_matmul_traffic(TILE_N, TILE_N, TILE_N, tile, bytes_per_element=2).intensity_flops_per_byte
    return i_l2, matmul_intensity(TILE_N, TILE_N, TILE_N, 2)


def _a100_level(name):
    return next(c for c in hierarchical_ceilings("A100", "bf16") if c.level.startswith(name))


def _smallest_tile_where(ok) -> int:
    for tile in range(TILE_STEP, TILE_MAX + 1, TILE_STEP):
        if ok(tile):
            return tile
    raise RuntimeError("04.7: no tile up to TILE_MAX qualifies")


def _peak_tile() -> int:
    acc = get_accelerator("A100")
    hbm = _a100_level("HBM").level

    def reaches_peak(tile):
        i_l2, i_hbm = _tile_intensities(tile)
        return binding_ceiling({"L2": i_l2, hbm: i_hbm}, acc, "bf16")[1] >= acc.peak("bf16")
    return _smallest_tile_where(reaches_peak)


HBM_RIDGE_FOR_L2 = Misconception(
    "hbm-ridge-for-every-level", "The HBM ridge point used for the L2 traffic: each level has its "
    "own roof, and the L2 intensity is compared with the L2 ridge, peak / L2 bandwidth.", "04", _HIER,
    "List hierarchical_ceilings('A100', 'bf16'): which ridge belongs to the L2 roof?")
TILE_AS_INTENSITY = Misconception(
    "tile-width-as-intensity", "The tile width taken for the L2 intensity: a T x T tile does about T "
    "FLOP per element it reads, and each BF16 element is 2 bytes, so about T / 2 FLOP per byte.",
    "04", _INTENSITY, "Take the intensity from tiled_matmul_traffic(...).intensity_flops_per_byte.")


def _peak_tile_wrong() -> dict:
    acc = get_accelerator("A100")
    l2, hbm = _a100_level("L2"), _a100_level("HBM")
    return {HBM_RIDGE_FOR_L2: _smallest_tile_where(lambda t: _tile_intensities(t)[0] >= hbm.ridge_point),
            TILE_AS_INTENSITY: _smallest_tile_where(lambda t: t >= l2.ridge_point),
            shared("sparse-peak", "04", _SPARSITY): _smallest_tile_where(
                lambda t: _tile_intensities(t)[0] >= 2 * acc.peak("bf16") / l2.bandwidth_bytes_per_s)}


# --- 04.8 (design): the largest batch under a latency target -----------------------------------

BATCH_HIDDEN, BATCH_TARGET_S = 8192, 60e-6      # 04.8: b x 8192 @ 8192 x 8192 in BF16 on an H100 SXM


def _largest_batch(time_of) -> int:
    """The largest b in 1..8192 with time_of(b) within the target (time grows with b: bisection)."""
    low, high = 0, 8192                 # time_of(low) meets the target (or low = 0: none does)
    if time_of(high) <= BATCH_TARGET_S:
        return high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if time_of(mid) <= BATCH_TARGET_S else (low, mid)
    return low


def _batch_terms(b, peak_scale=1.0, bytes_per_element=2):
    acc = get_accelerator("H100 SXM")
    k = matmul_kernel("layer", b, BATCH_HIDDEN, BATCH_HIDDEN)
    moved = k.bytes_moved * bytes_per_element / 2
    return k.flops / (peak_scale * acc.peak("bf16")), moved / acc.mem_bandwidth


def _batch_under_target() -> int:
    return _largest_batch(lambda b: place_kernel(matmul_kernel("layer", b, BATCH_HIDDEN, BATCH_HIDDEN),
                                                 "H100 SXM", "bf16").t_min_s)


MEMORY_BOUND_ALWAYS = Misconception(
    "batched-gemv-always-memory-bound", "A batched GEMV taken to stay memory-bound at any batch: "
    "every row of the batch reuses the weights, and past the ridge the compute time is the larger.",
    "04", _BOUND, "Compute both times at your batch: which one exceeds the target?")


def _batch_wrong() -> dict:
    return {shared("sparse-peak", "04", _SPARSITY): _largest_batch(lambda b: max(_batch_terms(b, 2.0))),
            MEMORY_BOUND_ALWAYS: _largest_batch(lambda b: _batch_terms(b)[1]),
            SUM_NOT_MAX: _largest_batch(lambda b: sum(_batch_terms(b)))}


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
        "04.2", expected=_decode_gemv_time_us, rel_tol=1e-3,
        wrong_answers=_decode_gemv_wrong, variants=_GEMV_VARIANTS,
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
        wrong_answers=_smallest_batch_wrong, concepts=("intensity", "ridge-point"),
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
        "04.7", expected=_peak_tile, rel_tol=0.0, abs_tol=0.0, wrong_answers=_peak_tile_wrong,
        concepts=("intensity", "ridge-point"),
        form="an integer, a multiple of 16: the smallest square tile whose matmul reaches the A100's "
             "dense BF16 peak on the hierarchical roofline (exact)",
        hints=("The matmul has two intensities: against HBM the whole matmul's, against L2 the tiled "
               "traffic's; the lower of the two roofs binds.",
               "tiled_matmul_traffic(8192, 8192, 8192, T, bytes_per_element=2).intensity_flops_per_byte "
               "is the L2 intensity; compare it with the L2 roof's ridge point.",
               "Sweep T = 16, 32, ... and keep the first T for which binding_ceiling(...)[1] is the peak.")),
    ValueExercise(
        "04.8", expected=_batch_under_target, rel_tol=0.0, abs_tol=0.0, wrong_answers=_batch_wrong,
        concepts=("roofline-bound",),
        form="an integer: the largest batch b whose b x 8192 by 8192 x 8192 BF16 matmul takes at most "
             "60 us on the H100 SXM by the roofline (exact)",
        hints=("The roofline time is the larger of F / peak and Q / bandwidth, and both grow with b.",
               "At b = 1 the weights' bytes dominate; as b grows the FLOP grow b times faster than the "
               "bytes. Which time reaches 60 us first?",
               "Sweep b with place_kernel(matmul_kernel('layer', b, 8192, 8192), 'H100 SXM').t_min_s and "
               "keep the largest b at or under 60e-6 s.")),
]
