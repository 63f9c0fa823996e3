"""Issue 26, round 26h (fix-h1), lessons 01-04: new mistakes a first-time learner makes, brainstormed
before the next blind round, each computed here as the learner would (with the public library, the
one mistake made) and checked to be rejected and named with its own misconception.

``VALUES``: (exercise, mistake, function returning the learner's value, the misconception key its
message must name). ``FUNCTIONS``: (exercise, mistake, the learner's function, the key). Neither list
reads the lessons' check modules: a value listed there by mistake cannot make its own test pass.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from course_lib.exercises.feedback import ExerciseError
from course_lib.exercises.registry import get_exercise
from course_lib.hardware import get_accelerator
from course_lib.latency import (ASSUMED_DRAM_LATENCY_S, H100_L1_SHARED_BYTES_PER_SM, littles_law, occupancy,
                                register_pressure, simulate_latency_hiding)
from course_lib.memory import bus_bandwidth_bytes_per_s, make_trace, pipeline_timeline, simulate_cache, transfer_time_s
from course_lib.roofline import matmul_intensity
from course_lib.simt import Let, While, run_simt

REPO = Path(__file__).resolve().parent.parent


pytestmark = pytest.mark.usefixtures("anonymous_learner")


def _keys(error: ExerciseError) -> list:
    return re.findall(r"\[misconception: ([a-z0-9-]+)\]", str(error))


# --------------------------------------------------------------------------------------------
# The learner's computations, one mistake each
# --------------------------------------------------------------------------------------------

def _h200_law(**kw):
    return littles_law("H200", **kw)


def _registers_for(warps, compute, latency, schedulers=4):
    """01.6 as the learner solves it: the fewest warps reaching 0.9, then the most registers letting them in."""
    sweep = simulate_latency_hiding(np.arange(1, 65), compute, latency, schedulers=schedulers)
    need = int(sweep.n_warps[np.argmax(sweep.utilisation >= 0.9)]) if warps is None else warps
    return next(r for r in range(255, 0, -1) if occupancy(128, r, 12 * 1024, "H100 SXM").warps_per_sm >= need)


def _loads_needed(load_bytes, per_sm_latency=False):
    """01.7: the profiled latency from the 4-byte floats (``per_sm_latency``: one SM's bytes over the
    chip's bandwidth), then the smallest k whose loads, counted at ``load_bytes`` each (section 2's
    float4 example), hold the bytes."""
    warps = occupancy(256, 73, 0, "H200").warps_per_sm
    sms = 1 if per_sm_latency else get_accelerator("H200").sm_count
    latency = warps * 32 * 4 * sms / 0.5e12
    need = littles_law("H200", latency_s=latency).bytes_in_flight_per_sm
    return next(k for k in range(1, 184) if occupancy(256, 72 + k, 0, "H200").warps_per_sm * 32 * load_bytes * k >= need)


def _cap(footprint_of=None):
    """01.5: the cap with the most warps whose spills fit beside the resident blocks' shared memory."""
    fits = []
    for r in register_pressure(128, 150, (255, 128, 96, 80, 64, 48), 12 * 1024, "H100 SXM"):
        occ = occupancy(128, r.registers_used, 12 * 1024, "H100 SXM")
        spilled = r.spill_footprint_per_sm if footprint_of is None else footprint_of(r)
        if spilled <= H100_L1_SHARED_BYTES_PER_SM - occ.blocks_per_sm * occ.shared_mem_allocated_per_block:
            fits.append((r.warps_per_sm, r.cap))
    return max(fits)[1]


def _loop(modulus=7, plus=1):
    return [Let("i", lambda v: 0),
            While(lambda v: v["i"] < v["tid"] % modulus + plus,
                  [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1), Let("i", lambda v: v["i"] + 1)])]


def _shortest_path(lanes=32):
    """02.6 by hand: issues per warp 1 + 10 (short), 1 + L (long), 1 + 10 + L (mixed), sort 11 per warp."""
    p = 1 / 64
    for long_path in range(1, 1001):
        none, every = (1 - p) ** lanes, p ** lanes
        arrival = none * 11 + every * (1 + long_path) + (1 - none - every) * (11 + long_path)
        grouped = 11 + p * (1 + long_path) + (1 - p) * 11
        if grouped <= arrival:
            return long_path
    return None


def _fewest_ways(capacity, line, hit=True):
    trace = make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)
    for ways in (1, 2, 4, 8, 16, 32):
        rate = simulate_cache(trace, capacity, line, ways).hit_rate
        if (rate >= 0.9) if hit else (1 - rate >= 0.9):
            return ways
    return None


def _stacks(bandwidth_needed, per_stack):
    return math.ceil(bandwidth_needed / per_stack)


def _fp8_without_dequantization():
    totals = {"third buffer": pipeline_timeline(12, 1.3e-6, 0.9e-6, 3).total_s,
              "faster math": pipeline_timeline(12, 1.3e-6, 0.45e-6, 2).total_s,
              "fp8 inputs": pipeline_timeline(12, 0.65e-6, 0.9e-6, 2).total_s,           # the 0.3 us forgotten
              "multicast": pipeline_timeline(12, 1.3e-6 * 0.75, 0.9e-6, 2).total_s}
    return min(totals, key=totals.get)


def _first_m(threshold, intensity=lambda m: matmul_intensity(m, 8192, 8192, 2)):
    return next(m for m in range(1, 100_000) if intensity(m) >= threshold)


def _l2_need(accelerator="A100", peak=None, bytes_per_element=2):
    """04.7 as the learner sweeps it: the untiled bound over the tiles' L2 intensity, largest over m."""
    from course_lib.tiling import tiled_matmul_traffic
    acc = get_accelerator(accelerator)
    peak = acc.peak("bf16") if peak is None else peak
    need = 0.0
    for m in range(1, 4097):
        bound = min(peak, acc.mem_bandwidth * matmul_intensity(m, 8192, 8192, bytes_per_element))
        l2 = tiled_matmul_traffic(m, 8192, 8192, 64, bytes_per_element=bytes_per_element).intensity_flops_per_byte
        need = max(need, bound / l2 / 1e12)
    return need


def _l2_need_without_c():
    """04.7 by hand: A re-read once per column of 64-wide tiles, B once per row of tiles, C not counted."""
    a100 = get_accelerator("A100")
    need = 0.0
    for m in range(1, 4097):
        bound = min(a100.peak("bf16"), a100.mem_bandwidth * matmul_intensity(m, 8192, 8192, 2))
        l2_bytes = 2 * (m * 8192 * (8192 // 64) + 8192 * 8192 * math.ceil(m / 64))
        need = max(need, bound / (2 * m * 8192 * 8192 / l2_bytes) / 1e12)
    return need


_H200, _H100, _A100, _B200 = (get_accelerator(n) for n in ("H200", "H100 SXM", "A100", "B200"))
_HBM3E_STACK = bus_bandwidth_bytes_per_s(1024, 9.2e9)
_NEED = _B200.peak("bf16") / _H100.ridge_point("bf16")

VALUES = [
    # 01.1: the resource that stops full occupancy
    ("01.1", "40 registers x 2048 threads overflow the register file, so registers limit", lambda: "registers",
     "limit-for-full-occupancy"),
    ("01.1", "small blocks hit the cap on resident blocks", lambda: "blocks", "small-blocks-hit-the-block-cap"),
    # 01.2
    ("01.2", "divides the SM's bytes by its 64 warp slots", lambda: _h200_law().bytes_in_flight_per_sm / 64 / 1e3,
     "per-warp-not-per-sm"),
    ("01.2", "divides the SM's bytes by its four schedulers", lambda: _h200_law().bytes_in_flight_per_sm / 4 / 1e3,
     "per-scheduler-not-per-sm"),
    ("01.2", "keeps section 2's what-if 400 ns", lambda: _h200_law(latency_s=400e-9).bytes_in_flight_per_sm / 1e3,
     "what-if-latency-400-ns"),
    ("01.2", "keeps section 2's what-if 800 ns", lambda: _h200_law(latency_s=800e-9).bytes_in_flight_per_sm / 1e3,
     "what-if-latency-800-ns"),
    ("01.2", "answers warps_needed_per_sm", lambda: _h200_law().warps_needed_per_sm, "warps-needed-not-bytes"),
    # 01.3
    ("01.3", "L / C warps cover one wait, rounded up", lambda: math.ceil(700 / 24), "latency-over-compute-warps"),
    ("01.3", "section 3's jittered sweep reused",
     lambda: int(np.argmax(simulate_latency_hiding(np.arange(1, 65), 24, 700, jitter=0.5, rng=np.random.default_rng(2024))
                           .utilisation >= 0.9)) + 1, "jittered-sweep"),
    # 01.5
    ("01.5", "spills counted for all 2048 thread slots",
     lambda: _cap(lambda r: r.spilled_per_thread * 4 * _H100.max_threads_per_sm), "spills-of-every-thread-slot"),
    ("01.5", "one warp's spills against L1", lambda: _cap(lambda r: r.spilled_per_thread * 4 * 32), "spill-footprint-per-warp"),
    # 01.6
    ("01.6", "keeps section 3's C, L = 40, 560", lambda: _registers_for(None, 40, 560), "simulator-default-cycles"),
    ("01.6", "passes the 500-cycle wait as the compute", lambda: _registers_for(None, 500, 60),
     "compute-and-latency-swapped"),
    ("01.6", "keeps all 64 warps resident", lambda: _registers_for(64, 60, 500), "all-warp-slots-needed"),
    # 01.7
    ("01.7", "the latency from one SM's bytes over the chip's bandwidth",
     lambda: _loads_needed(4, per_sm_latency=True), "latency-from-one-sms-bytes"),
    ("01.7", "16-byte (float4) loads counted in the k sweep", lambda: _loads_needed(16), "float4-loads-not-4-bytes"),
    # 02.2
    ("02.2", "answers the lane's chance, rho", lambda: 0.05, "share-of-lanes-not-wavefronts"),
    ("02.2", "W - 1 lanes in the exponents", lambda: 1 - 0.05 ** 63 - 0.95 ** 63, "width-minus-one-lanes"),
    # 02.3
    ("02.3", "reports 1 - efficiency", lambda: 1 - run_simt(_loop(), 1000).simt_efficiency, "idle-share-not-efficiency"),
    ("02.3", "test i < tid % (7 + 1)", lambda: run_simt(_loop(modulus=8, plus=0), 1000).simt_efficiency,
     "loop-test-tid-mod-eight"),
    ("02.3", "an extra a = 0 before the loop", lambda: run_simt([Let("a", lambda v: 0)] + _loop(), 1000).simt_efficiency,
     "extra-setup-instruction"),
    # 02.6
    ("02.6", "warps of 64 lanes (02.2's wavefront)", lambda: _shortest_path(lanes=64), "wavefront-64-for-warp-32"),
    # 03.2
    ("03.2", "adds the HBM write after the copy",
     lambda: (transfer_time_s(14e9, _H100.host_link_bandwidth / 2) + transfer_time_s(14e9, _H100.mem_bandwidth)) * 1e3,
     "hbm-write-added-to-the-copy"),
    # 03.3
    ("03.3", "section 2's 32 KiB cache with 128-byte lines", lambda: _fewest_ways(32 * 1024, 128), "lesson-cache-kept"),
    ("03.3", "reads the miss rate", lambda: _fewest_ways(16 * 1024, 64, hit=False), "miss-rate-for-hit-rate"),
    # 03.5
    ("03.5", "the H100's own pin rate",
     lambda: _stacks(_NEED, bus_bandwidth_bytes_per_s(1024, _H100.mem_data_rate_bits_per_s_per_pin)),
     "h100-pin-rate-for-hbm3e"),
    ("03.5", "the H100's five stacks scaled by the peaks",
     lambda: math.ceil(_H100.mem_bus_width_bits / 1024 * _B200.peak("bf16") / _H100.peak("bf16")),
     "h100-stacks-scaled-by-peak"),
    ("03.5", "keeps the H100 SXM's bandwidth", lambda: _stacks(_H100.mem_bandwidth, _HBM3E_STACK), "h100-bandwidth-kept"),
    # 03.6
    ("03.6", "FP8 inputs without the dequantization", _fp8_without_dequantization, "fp8-dequantization-forgotten"),
    # 04.2
    ("04.2", "one SM's share of the bandwidth",
     lambda: 2 * (8192 * 8192 + 2 * 8192) / (_H200.mem_bandwidth / _H200.sm_count) * 1e6, "one-sms-bandwidth-for-the-chip"),
    # 04.3
    ("04.3", "ridge rounded up to a whole FLOP/byte", lambda: _first_m(math.ceil(_H100.ridge_point("bf16"))),
     "ridge-rounded-to-integer"),
    ("04.3", "ridge rounded to the printed whole number", lambda: _first_m(round(_H100.ridge_point("bf16"))),
     "ridge-rounded-to-nearest"),
    ("04.3", "C counted at FP32's 4 bytes",
     lambda: _first_m(_H100.ridge_point("bf16"), lambda m: 2 * m * 8192 * 8192 / (2 * (m * 8192 + 8192 ** 2) + 4 * m * 8192)),
     "c-at-fp32-width"),
    # 04.7
    ("04.7", "the L2 traffic of A and B only", _l2_need_without_c, "l2-traffic-without-c"),
    ("04.7", "the H100 SXM's catalog row", lambda: _l2_need("H100 SXM"), "other-accelerator-h100-sxm"),
    ("04.7", "the A100's FP32 peak", lambda: _l2_need(peak=_A100.peak("fp32")), "peak-fp32-for-bf16"),
    ("04.7", "the sparse BF16 peak", lambda: _l2_need(peak=2 * _A100.peak("bf16")), "sparse-peak"),
    ("04.7", "4-byte elements at both levels", lambda: _l2_need(bytes_per_element=4), "fp32-bytes"),
]


def _subpartition_only(r, a):
    acc = get_accelerator(a)
    per_warp = -(-r * 32 // acc.register_alloc_unit) * acc.register_alloc_unit
    return acc.registers_per_sm // acc.warp_alloc_granularity // per_warp


def _unit_per_thread(r, a):
    acc = get_accelerator(a)
    per_warp = -(-r // acc.register_alloc_unit) * acc.register_alloc_unit * 32
    return (acc.registers_per_sm // acc.warp_alloc_granularity // per_warp) * acc.warp_alloc_granularity


def _unit_nearest(r, a):
    acc = get_accelerator(a)
    per_warp = max(1, round(r * 32 / acc.register_alloc_unit)) * acc.register_alloc_unit
    return (acc.registers_per_sm // acc.warp_alloc_granularity // per_warp) * acc.warp_alloc_granularity


def _broadcast_if_all_same(byte_addresses):
    words = np.asarray(byte_addresses) // 4
    if len(set(words.tolist())) == 1:
        return 1
    return int(np.bincount(words % 32, minlength=32).max())


def _intensity(elements, flop=lambda m, k, n: 2 * m * k * n):
    def matmul_intensity(m, k, n, bytes_per_element=2):
        return flop(m, k, n) / (bytes_per_element * elements(m, k, n))
    return matmul_intensity


FUNCTIONS = [
    ("01.4", "returns one sub-partition's warps", _subpartition_only, "one-sub-partition-only"),
    ("01.4", "rounds each thread's registers to the unit", _unit_per_thread, "alloc-unit-per-thread"),
    ("01.4", "rounds a warp's registers to the nearest unit", _unit_nearest, "register-alloc-rounded-to-nearest"),
    ("02.4", "counts the sector of each access's last byte",
     lambda a, b: len({int(x) for x in (np.asarray(a) + b - 1) // 32}), "sector-of-last-byte-only"),
    ("02.4", "bytes spanned over 32", lambda a, b: math.ceil((max(a) + b - min(a)) / 32), "byte-span-over-32"),
    ("02.4", "start sectors plus one per straddling access",
     lambda a, b: len(set((np.asarray(a) // 32).tolist())) + int(sum((x + b - 1) // 32 != x // 32 for x in a)),
     "straddling-accesses-added"),
    ("02.4", "distinct addresses x size over 32", lambda a, b: math.ceil(len(set(np.asarray(a).tolist())) * b / 32),
     "distinct-addresses-times-size"),
    ("03.4", "a broadcast only when all lanes agree", _broadcast_if_all_same, "broadcast-only-when-all-lanes-agree"),
    ("03.4", "counts the banks used", lambda a: len(set(((np.asarray(a) // 4) % 32).tolist())), "banks-used-count"),
    ("03.4", "16 banks", lambda a: max(np.bincount(np.unique(np.asarray(a) // 4) % 16)), "sixteen-banks"),
    ("03.4", "8-byte bank words", lambda a: max(np.bincount(np.unique(np.asarray(a) // 8) % 32)), "eight-byte-bank-words"),
    ("03.4", "distinct words over 32 banks", lambda a: math.ceil(len(set((np.asarray(a) // 4).tolist())) / 32),
     "distinct-words-over-banks"),
    ("04.4", "A left out", _intensity(lambda m, k, n: k * n + m * n), "a-read-forgotten"),
    ("04.4", "B left out", _intensity(lambda m, k, n: m * k + m * n), "b-read-forgotten"),
    ("04.4", "A sized m x n", _intensity(lambda m, k, n: m * n + k * n + m * n), "a-sized-m-by-n"),
    ("04.4", "B sized k x m", _intensity(lambda m, k, n: m * k + k * m + m * n), "b-sized-k-by-m"),
    ("04.4", "m + k + n elements", _intensity(lambda m, k, n: m + k + n), "dimensions-added-not-multiplied"),
    ("04.4", "C at 4 bytes", lambda m, k, n, bytes_per_element=2: 2 * m * k * n / (bytes_per_element * (m * k + k * n)
                                                                                     + 4 * m * n), "c-at-fp32-width"),
    ("04.4", "rounded", lambda m, k, n, bytes_per_element=2: round(2 * m * k * n / (bytes_per_element * (m * k + k * n + m * n))),
     "intensity-rounded"),
    ("04.4", "2 m n FLOP, k forgotten", _intensity(lambda m, k, n: m * k + k * n + m * n, lambda m, k, n: 2 * m * n),
     "flop-without-k"),
    ("04.5", "intensities cast to int", lambda i, p, b: np.minimum(p, b * np.array(i, dtype=int)), "intensity-cast-to-int"),
    ("04.5", "peak in TFLOP/s", lambda i, p, b: np.minimum(p / 1e12, b * np.asarray(i)), "peak-taken-in-tflops"),
    ("04.5", "bandwidth taken to GB/s", lambda i, p, b: np.minimum(p, b / 1e9 * np.asarray(i)), "bandwidth-taken-in-gb"),
    ("04.5", "seconds per FLOP", lambda i, p, b: 1 / np.minimum(p, b * np.asarray(i)), "roofline-as-seconds-per-flop"),
    ("04.5", "the two roofs averaged", lambda i, p, b: (p + b * np.asarray(i)) / 2, "roofs-averaged"),
]


@pytest.mark.parametrize("exercise_id, mistake, compute, key", VALUES, ids=[f"{e}-{k}" for e, _, _, k in VALUES])
def test_each_new_wrong_value_is_rejected_and_named(exercise_id, mistake, compute, key):
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(compute(), None)
    assert key in _keys(info.value), (exercise_id, mistake, _keys(info.value))


@pytest.mark.parametrize("exercise_id, mistake, function, key", FUNCTIONS, ids=[f"{e}-{k}" for e, _, _, k in FUNCTIONS])
def test_each_new_wrong_function_is_rejected_and_named_first(exercise_id, mistake, function, key):
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(function)
    assert info.value.misconception is not None and info.value.misconception.key == key, \
        (exercise_id, mistake, _keys(info.value))


def _printed_forms(value: float) -> list:
    forms = {f"{value:.3g}", f"{value:.4g}", f"{value:.6g}", repr(value)}
    if abs(value) >= 1:
        forms |= {f"{value:.1f}", f"{value:.2f}"}
    if float(value).is_integer():
        forms |= {str(int(value)), f"{int(value):,}"}
    if abs(value) < 10 and float(value).is_integer():       # a single digit appears everywhere
        forms = {f for f in forms if not re.fullmatch(r"-?\d(\.0+)?", f)}
    return sorted(forms)


@pytest.mark.parametrize("exercise_id, mistake, compute, key",
                         [v for v in VALUES if not isinstance(get_exercise(v[0]).answer(None), str)],
                         ids=[f"{e}-{k}" for e, _, _, k in VALUES if not isinstance(get_exercise(e).answer(None), str)])
def test_no_new_message_prints_the_answer(exercise_id, mistake, compute, key):
    """The misconception's sentence and hint, and the message below its first line, never state the
    answer."""
    right = float(get_exercise(exercise_id).answer(None))
    with pytest.raises(ExerciseError) as info:
        get_exercise(exercise_id).check(compute(), None)
    text = str(info.value).split("\n", 1)[1]
    for spelled in _printed_forms(right):
        assert re.search(rf"(?<![\d.]){re.escape(spelled)}(?![\d])", text) is None, (exercise_id, key, spelled)


def test_the_lessons_numbers_the_new_mistakes_keep_are_the_lessons():
    """01.2's what-if latencies, 01.3's jittered sweep and 03.3's lesson cache are the numbers the
    lessons' cells use."""
    from course_lib.exercises.lessons.ex_01 import LESSON_JITTER, LESSON_JITTER_SEED, LESSON_WHAT_IF_LATENCIES_S
    from course_lib.exercises.lessons.ex_03 import LESSON_CACHE_BYTES, LESSON_LINE_BYTES
    (lesson_01,) = (REPO / "notebooks").glob("01_*.py")
    (lesson_03,) = (REPO / "notebooks").glob("03_*.py")
    latencies = ", ".join(f"{round(t * 1e9)}e-9" for t in LESSON_WHAT_IF_LATENCIES_S)
    assert f"for lat in ({latencies}):" in lesson_01.read_text(encoding="utf-8")
    assert f"rng = np.random.default_rng({LESSON_JITTER_SEED})" in lesson_01.read_text(encoding="utf-8")
    assert f"jitter={LESSON_JITTER}, rng=rng" in lesson_01.read_text(encoding="utf-8")
    assert re.search(rf"^cap, line, ways = {LESSON_CACHE_BYTES // 1024} \* 1024, {LESSON_LINE_BYTES}, \d+$",
                     lesson_03.read_text(encoding="utf-8"), re.M)
    assert ASSUMED_DRAM_LATENCY_S not in LESSON_WHAT_IF_LATENCIES_S
