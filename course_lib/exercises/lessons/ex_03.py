"""Checks for lesson 03, the memory hierarchy (answers in solutions/03_memory_hierarchy.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from course_lib._validate import check_choice, check_int
from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.variants import Variants
from course_lib.exercises.decision import OptimumExercise
from course_lib.collectives import get_link
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import (_dtype_widths, other_accelerator, _other_accelerators, _peak_precisions,
                                                 shared, _with_generated)
from course_lib.hardware import get_accelerator
from course_lib.memory import (N_BANKS, BANK_BYTES, column_read_conflict_degree, conflict_degree, copy_hidden, make_trace,
                               pipeline_timeline, simulate_cache, transfer_time_s)

__all__ = ["EXERCISES", "WAYS_CHOICES", "conflict_trace", "pipeline_change", "column_walk_trace"]

#: Associativities the exploration exercise 03.3 chooses from.
WAYS_CHOICES = (1, 2, 4, 8, 16, 32)


_LADDER = "1. The ladder"
_CACHES = "2. Caches: a set-associative LRU simulator"
_BANKS = "4. Shared memory bank conflicts"
_ASYNC = "5. Copying while computing: asynchronous copies, TMA and double buffering"

#: Exercise 03.2's model sizes and accelerators: the first is the course's default.
_HOST_COPY_VARIANTS = Variants(
    options=({"billions": 7, "accelerator": "H100 SXM"}, {"billions": 13, "accelerator": "A100 SXM 80GB"},
             {"billions": 8, "accelerator": "H200"}, {"billions": 70, "accelerator": "B200"},
             {"billions": 3, "accelerator": "L4"}, {"billions": 7, "accelerator": "V100 SXM2"},
             {"billions": 34, "accelerator": "H100 PCIe"}),
    statement="{billions} billion BF16 parameters copied from the host to an {accelerator}, one "
              "direction, in ms")

ONE_OPERAND = Misconception(
    "one-operand-copied", "One operand's slice copied per k step: a tile needs a slice of A and "
    "a slice of B each step.", "03", _ASYNC,
    "One k step copies 2 k (M + N) bytes: both slices, 2 bytes per element.")
ASYNC_FREE = Misconception(
    "async-copy-free", "Asynchronous copies taken to make memory traffic free: they hide it only "
    "while the copy takes no longer than the compute.", "03", "Misconceptions",
    "Compare one k step's copy time with its compute time, both from the SM's share of the chip.")
HBM_NOT_HOST = Misconception(
    "hbm-slowest", "HBM's bandwidth used for a copy from the host: the host link is far slower "
    "than HBM, and it is the bottleneck.", "03", "Misconceptions",
    "Data from host memory crosses the host link: use host_link_bandwidth.")
SIX_WAYS = Misconception(
    "one-way-per-line", "Exactly as many ways as lines, assumed without checking the choices: "
    "the associativity must be one of the choices and reach the hit-rate target.", "03", _CACHES,
    "Run simulate_cache for each choice in WAYS_CHOICES and read the hit rates.")
FULLY_ASSOCIATIVE = Misconception(
    "fully-associative-needed", "A fully associative cache (one set) where far fewer ways suffice.",
    "03", _CACHES, "The smallest choice that reaches the target is the answer; try them in order.")
LANES_NOT_WORDS = Misconception(
    "same-bank-always-conflicts", "Two lanes in one bank taken to always conflict: lanes reading "
    "the same word are served by one broadcast.", "03", "Misconceptions",
    "Count distinct words per bank, not lanes per bank.")
BYTES_NOT_WORDS = Misconception(
    "bank-from-bytes", "The bank computed from the byte address: banks are 4-byte words, "
    "bank = (address // 4) % 32.", "03", _BANKS, "Turn byte addresses into word indices first.")


def conflict_trace() -> np.ndarray:
    """Exercise 03.3's trace: six addresses 4 KiB apart, visited round-robin 500 times.

    The notebook builds it with the public ``make_trace`` in the same way: 6 "elements" of 4 KiB
    swept in order, 3000 accesses.
    """
    return make_trace("sequential", 6 * 4096, 6 * 500, element_bytes=4096)


def _tile_verdict(copied_bytes_per_k) -> str:
    """A 256 x 256 BF16 output tile, k step 64, fed from HBM at one SM's share of an H200."""
    acc = get_accelerator("H200")
    m = n = 256
    k = 64
    t_copy = copied_bytes_per_k(m, n) * k / (acc.mem_bandwidth / acc.sm_count)
    t_compute = 2 * m * n * k / (acc.peak("bf16") / acc.sm_count)
    return "hidden" if copy_hidden(t_copy, t_compute) else "exposed"


def _h200_tile_verdict() -> str:
    return _tile_verdict(lambda m, n: 2 * (m + n))              # both slices, 2 bytes each


MORE_BANDWIDTH_HIDES = Misconception(
    "more-bandwidth-hides-the-copy", "The H200's larger bandwidth taken to settle it: more bandwidth "
    "shortens the copy, but whether it hides depends on the tile's intensity, M N / (M + N) FLOP per "
    "byte, against the H200's own ridge point, never computed here.", "03", _ASYNC,
    "Compute both for one k step: the tile's FLOP per byte copied, and the H200's BF16 ridge point; "
    "compare the two numbers.")


def _h200_tile_wrong() -> dict:
    # 'hidden' is what most mistakes give: at most three names, the likeliest first
    found = {MORE_BANDWIDTH_HIDES: "hidden",
             ONE_OPERAND: _tile_verdict(lambda m, n: 2 * n),
             ASYNC_FREE: "hidden"}
    right = _h200_tile_verdict()
    return {k: v for k, v in found.items() if v != right}


ONE_BYTE_PARAMS = Misconception(
    "bf16-one-byte", "One byte per BF16 parameter: BF16 is 16 bits, 2 bytes.", "03", _LADDER,
    "bytes_per_element('bf16') is 2.")
NVLINK_NOT_HOST = Misconception(
    "nvlink-not-host-link", "NVLink's bandwidth where the copy comes from the host: NVLink joins GPUs; "
    "host memory reaches the GPU over its PCIe (host) link, far slower.", "03", _LADDER,
    "Use the accelerator's host link, acc.host_link_bandwidth, one direction of it.")


BINARY_BILLIONS = Misconception(
    "billions-read-as-binary", "A billion parameters read as 2^30, the binary giga of memory sizes: a "
    "model's 'B' counts parameters in decimal, 10^9.", "03", _LADDER,
    "N billion parameters are N x 1e9; only capacities in GiB use powers of two.")


HBM_WRITE_ADDED = Misconception(
    "hbm-write-added-to-the-copy", "The time to write the weights into HBM added to the copy's: the "
    "copy streams into HBM as it arrives, far faster than the host link delivers, so the link's time "
    "is the whole of it.", "03", _LADDER,
    "The slowest link on the path sets the time: bytes / (host_link_bandwidth / 2), nothing added.")


def _host_copy_slips(billions, accelerator) -> dict:
    """Another chip's host link, or another element width, for the learner's copy."""
    one_way = get_accelerator(accelerator).host_link_bandwidth / 2
    return {**_other_accelerators(lambda name: _weights_from_host_ms(billions, name), accelerator, "03", _LADDER),
            **_dtype_widths(lambda b: transfer_time_s(billions * 1e9 * b, one_way) * 1e3, "03", _LADDER)}


def _weights_from_host_wrong(billions, accelerator) -> dict:
    acc = get_accelerator(accelerator)
    nbytes = billions * 1e9 * 2
    one_way = acc.host_link_bandwidth / 2
    wrong = {shared("both-link-directions", "03", _LADDER): transfer_time_s(nbytes, acc.host_link_bandwidth) * 1e3,
             shared("seconds-for-unit", "03", _LADDER): transfer_time_s(nbytes, one_way),
             shared("fp32-bytes", "03", _LADDER): transfer_time_s(2 * nbytes, one_way) * 1e3,
             shared("bits-for-bytes", "03", _LADDER): transfer_time_s(8 * nbytes, one_way) * 1e3,
             HBM_NOT_HOST: transfer_time_s(nbytes, acc.mem_bandwidth) * 1e3,
             # one byte a parameter gives what both link directions give: both are named
             ONE_BYTE_PARAMS: transfer_time_s(nbytes / 2, one_way) * 1e3,
             BINARY_BILLIONS: transfer_time_s(billions * 2 ** 30 * 2, one_way) * 1e3,
             HBM_WRITE_ADDED: (transfer_time_s(nbytes, one_way) + transfer_time_s(nbytes, acc.mem_bandwidth)) * 1e3}
    nvlink = get_link(accelerator, "nvlink").bandwidth_bytes_per_s
    if nvlink != one_way:                         # a card without NVLink: its 'nvlink' tier is the host link
        wrong[NVLINK_NOT_HOST] = transfer_time_s(nbytes, nvlink) * 1e3
    other = get_accelerator(other_accelerator(accelerator)).host_link_bandwidth
    if other != acc.host_link_bandwidth:          # the H100 SXM and the H200 share one PCIe link
        wrong[shared("other-accelerator", "03", _LADDER)] = transfer_time_s(nbytes, other / 2) * 1e3
    return wrong


SETS_KEPT_FIXED = Misconception(
    "sets-kept-fixed-as-ways-grow", "More ways taken to add room beside the sets the one-way cache has: "
    "at a fixed 16 KiB, doubling the ways halves the sets, so lines that sat in different sets now "
    "share one, and two ways can hold fewer of them than one way did.", "03", _CACHES,
    "Run simulate_cache(trace, 16 * 1024, 64, ways) for each choice, the capacity fixed: do not reason "
    "from the one-way run.")
CAPACITY_OVER_STRIDE = Misconception(
    "ways-from-capacity-over-stride", "The ways taken as the capacity over the addresses' spacing "
    "(16 KiB / 4 KiB): that counts how many strided lines fit in the capacity, not how many land in "
    "one set.", "03", _CACHES,
    "For each choice, work out the number of sets (capacity / (line x ways)) and which set each of the "
    "six lines falls into.")
MOST_WAYS = Misconception(
    "most-ways-to-be-safe", "The most ways among the choices, to be safe: the task asks for the "
    "fewest that reach the target, and more ways cost power and latency on every lookup.", "03", _CACHES,
    "Try the choices in order, from the fewest ways, and stop at the first that reaches 90 % hits.")


#: Section 2's worked cache (``cap, line, ways = 32 * 1024, 128, 4`` in the lesson; the course's
#: tests keep the two equal): a learner who reuses its cell keeps its capacity and line.
LESSON_CACHE_BYTES, LESSON_LINE_BYTES = 32 * 1024, 128

LESSON_CACHE = Misconception(
    "lesson-cache-kept", "Section 2's cache (32 KiB, 128-byte lines) simulated where the task's has 16 KiB "
    "and 64-byte lines: the capacity and line size set the number of sets, and so which lines collide.",
    "03", _CACHES, "Pass the task's cache to simulate_cache: 16 * 1024 bytes, 64-byte lines, each choice of ways.")
MISS_RATE = Misconception(
    "miss-rate-for-hit-rate", "The miss rate read where the hit rate was asked: a choice whose misses "
    "reach 90 % is the opposite of the target.", "03", _CACHES,
    "Read simulate_cache(...).hit_rate and find the fewest ways at which it reaches 0.9.")
LAST_SHORT_OF_TARGET = Misconception(
    "last-choice-below-target", "The sweep read one row too early: the last associativity whose hit rate "
    "is still below 90 % where the first that reaches it was asked.", "03", _CACHES,
    "Check the hit rate at your choice: the answer's own run must reach 0.9.")


def _fewest_ways_wrong() -> dict:
    trace = conflict_trace()
    # the one-way cache's sets kept while the ways grow (the capacity grows with them): the first
    # choice that reaches the target then, the likelier of the two mistakes that answer it
    grown = next((w for w in WAYS_CHOICES if simulate_cache(trace, 16 * 1024 * w, 64, w).hit_rate >= 0.9), None)
    found = {SIX_WAYS: len(np.unique(trace)),
             FITS_SO_HITS: WAYS_CHOICES[0],
             FULLY_ASSOCIATIVE: 16 * 1024 // 64,
             SETS_KEPT_FIXED: grown,
             CAPACITY_OVER_STRIDE: 16 * 1024 // int(np.diff(np.unique(trace))[0]),
             MOST_WAYS: max(WAYS_CHOICES),
             LESSON_CACHE: next((w for w in WAYS_CHOICES
                                 if simulate_cache(trace, LESSON_CACHE_BYTES, LESSON_LINE_BYTES, w).hit_rate >= 0.9), None),
             MISS_RATE: next((w for w in WAYS_CHOICES if simulate_cache(trace, 16 * 1024, 64, w).hit_rate <= 0.1), None)}
    right = _fewest_ways()
    # the row above the answer in the sweep: after the capacity over the spacing, which gives the
    # same number without a sweep (the likelier reading of it)
    found[LAST_SHORT_OF_TARGET] = max((w for w in WAYS_CHOICES if w < right
                                       and simulate_cache(trace, 16 * 1024, 64, w).hit_rate < 0.9), default=None)
    return {k: v for k, v in found.items() if v is not None and v != right}


def _weights_from_host_ms(billions, accelerator) -> float:
    """``billions`` of BF16 parameters copied host -> ``accelerator`` over its host link, one
    direction, in ms (the course's default: 7 billion to an H100 SXM)."""
    acc = get_accelerator(accelerator)
    return transfer_time_s(billions * 1e9 * 2, acc.host_link_bandwidth / 2) * 1e3


def _fewest_ways() -> int:
    """Smallest associativity in WAYS_CHOICES giving a 16 KiB, 64 B-line LRU cache >= 90% hits."""
    trace = conflict_trace()
    for ways in WAYS_CHOICES:
        if simulate_cache(trace, 16 * 1024, 64, ways).hit_rate >= 0.9:
            return ways
    raise RuntimeError("no associativity reaches 90% hits")


def _bank_cases(rng) -> list:
    """One warp's 32 byte addresses (4-byte aligned) per case: strided, random, broadcast, mixed."""
    lanes = np.arange(32)
    cases = []
    for stride in (1, 2, 6, 32, 33, 48, 0):
        cases.append(((lanes * stride * BANK_BYTES + 4 * int(rng.integers(0, 97)),), {}))
    for _ in range(8):
        words = rng.integers(0, 3 * N_BANKS + 7, size=32)
        cases.append(((words * BANK_BYTES,), {}))
    duplicated = rng.integers(0, 200, size=32)
    duplicated[::3] = duplicated[0]                    # several lanes share one word: a broadcast
    cases.append(((duplicated * BANK_BYTES,), {}))
    return cases


def _reference_degree(byte_addresses) -> int:
    return int(conflict_degree(np.asarray(byte_addresses)))


def _lanes_per_bank(byte_addresses) -> int:
    banks = (np.asarray(byte_addresses) // BANK_BYTES) % N_BANKS
    return int(np.bincount(banks, minlength=N_BANKS).max())


def _bank_from_bytes(byte_addresses) -> int:
    addresses = np.asarray(byte_addresses)
    counts = [np.unique(addresses[addresses % N_BANKS == b] // BANK_BYTES).size for b in range(N_BANKS)]
    return int(max(max(counts), 1))


STRIDE_OF_TWO_LANES = Misconception(
    "stride-of-first-two-lanes", "The conflict degree read off the stride of the first two lanes, "
    "gcd(stride, 32): that rule holds for a regular stride only; the task's lanes may read any words, "
    "repeat one, or skip around.", "03", _BANKS,
    "Work from every lane's address: word = address // 4, bank = word % 32, distinct words per bank.")
EXTRA_PASSES = Misconception(
    "conflicts-not-passes", "The extra passes (the largest count minus one) where the degree was asked: "
    "a warp with no conflict takes one pass, degree 1, not 0.", "03", _BANKS,
    "Return the largest number of distinct words in one bank: 1 when there is no conflict.")
BANK_DIVIDED = Misconception(
    "bank-by-division", "The bank taken as word // 32, the row of banks, where it is word % 32: "
    "consecutive words go to consecutive banks.", "03", _BANKS, "bank = (address // 4) % 32.")
DISTINCT_WORDS_TOTAL = Misconception(
    "distinct-words-in-the-warp", "The distinct words of the whole warp counted, not per bank: words "
    "in different banks are served in one pass.", "03", _BANKS,
    "Group the distinct words by bank first; the degree is the largest group.")
BANKS_USED = Misconception(
    "banks-used-not-words-per-bank", "32 divided by the number of banks the warp uses: that matches a "
    "regular stride, but the degree is the most distinct words any one bank must serve.", "03", _BANKS,
    "Count distinct words per bank and take the largest count.")


def _stride_gcd(byte_addresses) -> int:
    a = np.asarray(byte_addresses)
    return int(math.gcd(int(a[1] - a[0]) // BANK_BYTES, N_BANKS))


def _degree_with(byte_addresses, bank_of) -> int:
    words = np.unique(np.asarray(byte_addresses) // BANK_BYTES)
    return int(np.bincount(bank_of(words)).max())


def _bank_wrong() -> dict:
    return {LANES_NOT_WORDS: _lanes_per_bank, BYTES_NOT_WORDS: _bank_from_bytes,
            STRIDE_OF_TWO_LANES: _stride_gcd,
            EXTRA_PASSES: lambda a: _reference_degree(a) - 1,
            BANK_DIVIDED: lambda a: _degree_with(a, lambda w: w // N_BANKS),
            DISTINCT_WORDS_TOTAL: lambda a: int(np.unique(np.asarray(a) // BANK_BYTES).size),
            BANKS_USED: lambda a: N_BANKS // int(np.unique((np.asarray(a) // BANK_BYTES) % N_BANKS).size),
            FULL_BROADCAST_ONLY: _broadcast_only_when_all_same,
            DISTINCT_BANKS: lambda a: int(np.unique((np.asarray(a) // BANK_BYTES) % N_BANKS).size),
            SIXTEEN_BANKS: lambda a: _degree_with(a, lambda w: w % 16),
            EIGHT_BYTE_WORDS: lambda a: int(np.bincount(np.unique(np.asarray(a) // 8) % N_BANKS).max()),
            WORDS_OVER_BANKS: lambda a: int(math.ceil(np.unique(np.asarray(a) // BANK_BYTES).size / N_BANKS))}


WORDS_OVER_BANKS = Misconception(
    "distinct-words-over-banks", "The warp's distinct words divided by the 32 banks, rounded up: that is "
    "the fewest passes if the words spread evenly; the degree is set by the busiest bank.", "03", _BANKS,
    "Count distinct words per bank and take the largest count.")


def _broadcast_only_when_all_same(byte_addresses) -> int:
    """Wrong: lanes counted per bank, except when every lane reads one word (a full broadcast)."""
    words = np.asarray(byte_addresses) // BANK_BYTES
    if np.unique(words).size == 1:
        return 1
    return int(np.bincount(words % N_BANKS, minlength=N_BANKS).max())


FULL_BROADCAST_ONLY = Misconception(
    "broadcast-only-when-all-lanes-agree", "A broadcast taken to need every lane on one word: any lanes "
    "that read the same word are served together, so a bank's load is its distinct words, whichever "
    "lanes share them.", "03", _BANKS, "Count distinct words per bank, for every bank, not lanes per bank.")
DISTINCT_BANKS = Misconception(
    "banks-used-count", "The number of distinct banks the warp touches: more banks used means fewer "
    "passes; the degree is the most distinct words any one bank must serve.", "03", _BANKS,
    "Group the distinct words by bank and take the largest group's size.")
SIXTEEN_BANKS = Misconception(
    "sixteen-banks", "16 banks, as on pre-Fermi GPUs and half-warps, where the task's shared memory has "
    "32: bank = word % 32.", "03", _BANKS, "Use 32 banks of 4 bytes: bank = (address // 4) % 32.")
EIGHT_BYTE_WORDS = Misconception(
    "eight-byte-bank-words", "8-byte bank words (Kepler's 64-bit bank mode) where the task's banks are "
    "4 bytes wide: word = address // 4.", "03", _BANKS, "Word = address // 4, bank = word % 32.")


#: Exercise 03.5's design (task data): keep the H100 SXM's dense BF16 ridge point at the B200's
#: dense BF16 peak, with HBM3e stacks of 1024 pins at an assumed 9.2 Gbit/s per pin.
_STACK_PINS, _PIN_RATE = 1024, 9.2e9


STACKS_ROUNDED_DOWN = Misconception(
    "stacks-rounded-down", "The number of stacks rounded down: a chip short of the bandwidth it needs "
    "has a higher ridge point; a fraction of a stack is a whole stack.", "03", _LADDER,
    "Check your count: stacks x one stack's bytes per second must reach peak / ridge.")
PIN_RATE_BYTES = Misconception(
    "pin-rate-in-bytes", "A pin's rate read as bytes per second: pin rates are quoted in bits per "
    "second, so a stack moves pins x rate / 8 bytes per second.", "03", _LADDER,
    "Turn one stack's pins x Gbit/s into bytes per second before dividing.")


def _stacks_for(ridge, peak, pins=_STACK_PINS, rate=_PIN_RATE) -> int:
    from course_lib.memory import bus_bandwidth_bytes_per_s
    need = peak / ridge
    per_stack = bus_bandwidth_bytes_per_s(pins, rate)
    stacks = 1
    while stacks * per_stack < need:          # a sweep, independent of any ceil() slip
        stacks += 1
    return stacks


def _stacks_needed() -> int:
    return _stacks_for(get_accelerator("H100 SXM").ridge_point("bf16"), get_accelerator("B200").peak("bf16"))


def _stacks_slips() -> dict:
    """Another chip's ridge for the H100 SXM's (the H100 PCIe's, most likely), another chip's
    peak for the B200's, or another precision's B200 peak."""
    h100, b200 = get_accelerator("H100 SXM"), get_accelerator("B200")
    ridge = _other_accelerators(lambda name: _stacks_for(get_accelerator(name).ridge_point("bf16"), b200.peak("bf16")),
                               "H100 SXM", "03", _LADDER)
    peak = _other_accelerators(lambda name: _stacks_for(h100.ridge_point("bf16"), get_accelerator(name).peak("bf16")),
                              "B200", "03", _LADDER)
    precision = _peak_precisions(lambda p: _stacks_for(h100.ridge_point("bf16"), b200.peak(p)), "03", _LADDER)
    return {**ridge, **{m: v for m, v in peak.items() if m.key != "other-accelerator-h100-sxm"}, **precision}


def _stacks_wrong() -> dict:
    right = _stacks_needed()
    h100, b200 = get_accelerator("H100 SXM"), get_accelerator("B200")
    need = b200.peak("bf16") / h100.ridge_point("bf16")
    wrong = {STACKS_ROUNDED_DOWN: int(need // (_STACK_PINS * _PIN_RATE / 8)),
             PIN_RATE_BYTES: _stacks_for(h100.ridge_point("bf16"), b200.peak("bf16"), rate=_PIN_RATE * 8),
             shared("sparse-peak", "03", _LADDER): _stacks_for(h100.ridge_point("bf16"),
                                                               2 * b200.peak("bf16")),
             H100_PIN_RATE: _stacks_for(h100.ridge_point("bf16"), b200.peak("bf16"),
                                        rate=h100.mem_data_rate_bits_per_s_per_pin),
             H100_BANDWIDTH_KEPT: _stacks_for(1.0, h100.mem_bandwidth),
             STACKS_SCALED_BY_PEAK: int(np.ceil(h100.mem_bus_width_bits / _STACK_PINS
                                                * b200.peak("bf16") / h100.peak("bf16") - 1e-9))}
    return {k: v for k, v in wrong.items() if v != right}


H100_PIN_RATE = Misconception(
    "h100-pin-rate-for-hbm3e", "The H100 SXM's own pin rate (its HBM3, mem_data_rate_bits_per_s_per_pin) "
    "where the task's HBM3e stacks run at 9.2 Gbit/s per pin: only the ridge point is the H100's.", "03",
    _LADDER, "One stack moves 1024 pins x 9.2e9 bit/s / 8 bytes per second: "
    "bus_bandwidth_bytes_per_s(1024, 9.2e9).")
H100_BANDWIDTH_KEPT = Misconception(
    "h100-bandwidth-kept", "The H100 SXM's bandwidth kept where its ridge point was asked: with the "
    "B200's much higher peak, the same bandwidth gives a far higher ridge; the bandwidth must grow with "
    "the peak.", "03", _LADDER, "The bandwidth needed is the new peak over the H100's ridge: peak / ridge.")
STACKS_SCALED_BY_PEAK = Misconception(
    "h100-stacks-scaled-by-peak", "The H100 SXM's five stacks scaled by the ratio of the peaks: that keeps "
    "the H100's per-stack bandwidth, but the new stacks are HBM3e at 9.2 Gbit/s per pin, faster than the "
    "H100's.", "03", _LADDER,
    "Compute the bandwidth needed, peak / ridge, then divide by one HBM3e stack's bytes per second.")
# --- 03.6 (diagnose): a double-buffered kernel, and the change that pays -----------------------

#: 03.6's profile: 12 tiles, copy and compute per tile (seconds), two buffers. FP8 inputs halve
#: the copy and add a dequantization to each tile's compute; multicast shares the A slice (as
#: large as the B slice) between the two blocks of a cluster, so each block's copy reads half of A.
PIPE_TILES, PIPE_COPY_S, PIPE_COMPUTE_S, PIPE_DEQUANT_S = 12, 1.3e-6, 0.9e-6, 0.3e-6
PIPE_CHANGES = ("third buffer", "faster math", "fp8 inputs", "multicast")


def pipeline_change(change: str):
    """03.6's pipeline after one change, as a ``PipelineTimeline``: 'as is', 'third buffer'
    (three buffers), 'faster math' (compute halved), 'fp8 inputs' (copy halved, compute plus
    the dequantization) or 'multicast' (half of A's bytes: the copy falls to 3/4)."""
    change = check_choice("change", change, ("as is",) + tuple(PIPE_CHANGES))
    return _pipeline_after(change, PIPE_COPY_S, PIPE_COMPUTE_S)


def _pipeline_after(change: str, tc: float, tk: float):
    """The pipeline after ``change`` from a copy of ``tc`` and a compute of ``tk`` per tile."""
    n, b = PIPE_TILES, 2
    if change == "third buffer":
        b = 3
    elif change == "faster math":
        tk = tk / 2
    elif change == "fp8 inputs":
        tc, tk = tc / 2, tk + PIPE_DEQUANT_S
    elif change == "multicast":
        tc = tc * (0.5 * 0.5 + 0.5)          # A is half the bytes; a block now reads half of it
    elif change != "as is":
        raise ValueError(f"change must be 'as is' or one of {PIPE_CHANGES}, got {change!r}")
    return pipeline_timeline(n, tc, tk, b)


def _best_pipeline_change() -> str:
    totals = {c: pipeline_change(c).total_s for c in PIPE_CHANGES}
    best = min(totals.values())
    winners = [c for c, t in totals.items() if t == best]
    if len(winners) != 1 or best >= pipeline_change("as is").total_s:
        raise RuntimeError(f"03.6 must have one change that pays most: {totals}")
    return winners[0]


MORE_BUFFERS = Misconception(
    "more-buffers-hide-any-copy", "More buffers taken to hide a copy longer than the compute: "
    "buffers let copies run ahead, but the copy engine still needs t_copy per tile, so the pipeline "
    "runs at the slower of the two.", "03", _ASYNC,
    "With two or more buffers, what sets the time per tile once the pipeline is full?")
FASTER_MATH = Misconception(
    "faster-math-speeds-copy-bound", "Faster math taken to speed up a pipeline the copies bound: "
    "asynchronous copies make memory traffic free only while t_copy <= t_compute.", "03",
    "Misconceptions", "Read the profile again: between tiles, which unit waits for the other?")
BIGGEST_COPY_CUT = Misconception(
    "biggest-cut-of-the-bottleneck", "The change that cuts the copy most taken as the best one: once "
    "the copy is shorter than the compute, the compute sets the pace, and a change that lengthens "
    "the compute loses what it gained.", "03", _ASYNC,
    "For each change, work out both new times per tile, and ask which one is now the larger.")


COLUMNS_SWAPPED = Misconception(
    "profile-columns-swapped", "The profile's two columns read the wrong way round, the compute time "
    "taken for the copy and the copy's for the compute: the copy is the longer of the two per tile, so "
    "the copies bound this pipeline, not the math.", "03", _ASYNC,
    "Read the profile's headers again: which column is t_copy, and which unit waits for the other?")


DEQUANT_FORGOTTEN = Misconception(
    "fp8-dequantization-forgotten", "FP8 inputs costed without their dequantization: each tile must turn "
    "the FP8 slices back into BF16 before the same math, and those 0.3 us lengthen every compute step.",
    "03", _ASYNC, "Add the dequantization to the FP8 change's compute per tile, then ask which of the two "
    "times per tile is now the larger.")


def _pipeline_change_wrong() -> dict:
    fastest_copy = min(PIPE_CHANGES, key=lambda c: pipeline_change(c).t_copy_s)
    swapped = min(PIPE_CHANGES, key=lambda c: _pipeline_after(c, PIPE_COMPUTE_S, PIPE_COPY_S).total_s)
    no_dequant = min(PIPE_CHANGES, key=lambda c: pipeline_timeline(PIPE_TILES, PIPE_COPY_S / 2, PIPE_COMPUTE_S, 2).total_s
                     if c == "fp8 inputs" else pipeline_change(c).total_s)
    found = {MORE_BUFFERS: "third buffer", FASTER_MATH: "faster math", BIGGEST_COPY_CUT: fastest_copy,
             COLUMNS_SWAPPED: swapped, DEQUANT_FORGOTTEN: no_dequant}
    right = _best_pipeline_change()
    return {k: v for k, v in found.items() if v != right}


# --- 03.7 (design): the smallest aligned row padding that serves both the cache and the banks ---

#: 03.7: a float32 matrix of WALK_ROWS rows of WALK_COLS columns (+ pad), walked column by
#: column over its first WALK_WALKED columns, through a 32 KiB, 4-way cache of 128-byte lines;
#: the pad is a multiple of WALK_PAD_STEP floats, so every row stays 16-byte aligned for float4
#: loads; its first 32 rows are also staged in shared memory with the same row length, where a
#: warp reads one column (lane t, row t) with at most a WALK_MAX_CONFLICT-way bank conflict.
WALK_ROWS, WALK_COLS, WALK_WALKED = 64, 1024, 64
WALK_CACHE, WALK_LINE, WALK_WAYS, WALK_TARGET = 32 * 1024, 128, 4, 0.9
WALK_PAD_STEP, WALK_MAX_CONFLICT = 4, 4


def column_walk_trace(pad: int) -> np.ndarray:
    """Byte addresses of 03.7's walk: for j in columns, for i in rows, a[i, j] at 4 (i (1024 + pad) + j)."""
    pad = check_int("pad", pad, min_value=0, max_value=WALK_COLS, why="a row padded by more than its own length")
    i, j = np.arange(WALK_ROWS), np.arange(WALK_WALKED)
    return ((i[None, :] * (WALK_COLS + pad) + j[:, None]) * 4).ravel()


@functools.lru_cache(maxsize=None)      # one cache simulation per pad
def _walk_hit_rate(pad: int) -> float:
    return simulate_cache(column_walk_trace(pad), WALK_CACHE, WALK_LINE, WALK_WAYS).hit_rate


def _pad_feasible(pad, banks=True, cache=True) -> str | None:
    """None when ``pad`` keeps the rows aligned, the bank conflict and the walk within their
    targets; else why not. ``banks`` / ``cache`` False leave that constraint out (a mistake)."""
    if pad < 0 or pad > WALK_COLS:
        return f"the pad is 0 to {WALK_COLS} floats, not {pad}"
    if pad % WALK_PAD_STEP:
        return f"a pad of {pad} floats leaves rows that are not 16-byte aligned"
    degree = column_read_conflict_degree(WALK_COLS, pad)
    if banks and degree > WALK_MAX_CONFLICT:
        return (f"with a pad of {pad} floats a warp reading a column from shared memory meets "
                f"{degree}-way bank conflicts, over the {WALK_MAX_CONFLICT}-way allowed")
    rate = _walk_hit_rate(pad)
    if cache and rate < WALK_TARGET:
        return f"with a pad of {pad} floats the walk hits {rate:.1%} of the time, under {WALK_TARGET:.0%}"
    return None


def _smallest_pad(banks=True, cache=True) -> int:
    for pad in range(0, WALK_COLS + 1, WALK_PAD_STEP):
        if _pad_feasible(pad, banks, cache) is None:
            return pad
    raise RuntimeError("03.7: no pad meets the targets")


FIRST_ALIGNED_PAD = Misconception(
    "any-pad-breaks-the-stride", "The first pad that breaks the power-of-two row stride taken to be "
    "enough: a pad of 16 bytes moves each row only a little way along the sets, so the 64 rows still "
    "crowd into a few sets, and each row's next line has nowhere to go.", "03", _CACHES,
    "Print (row start // 128) % n_sets for the 64 rows with your pad: how many different sets do they use?")
FITS_SO_HITS = Misconception(
    "fits-so-hits", "Data that fits in the cache taken to hit: lines that map to one set evict each "
    "other however empty the rest of the cache is.", "03", "Misconceptions",
    "Work out which set each line falls into: lines 4 KiB apart share few sets.")
CACHE_ONLY = Misconception(
    "cache-pad-ignores-banks", "The pad chosen for the cache alone: the same row length also sets "
    "which bank each lane of a column read lands in, and a pad that shares a large power of two with "
    "32 banks piles the lanes into few banks.", "03", _BANKS,
    "Work out the bank of row t's word of one column, (t x (1024 + pad)) % 32, for your pad.")
BANKS_ONLY = Misconception(
    "bank-pad-ignores-cache", "The pad chosen for the banks alone: the walk through the cache "
    "needs the rows spread over enough sets too.", "03", _CACHES,
    "Run the walk with your pad through the cache simulator and read its hit rate.")
WHOLE_LINE = Misconception(
    "pad-a-whole-line", "A whole line of padding taken to be needed: it spreads the rows over the "
    "cache's sets, but smaller pads do too, and a whole line is a multiple of 32 words, which sends "
    "a column's 32 lanes to one bank.", "03", _CACHES,
    "Try the aligned pads from 0 upwards, checking both the hit rate and the bank conflict.")


ROW_BY_ROW_WALK = Misconception(
    "walk-traced-row-by-row", "The walk's trace built row by row (i outer, j inner), a sequential sweep "
    "every cache hits: the task's walk goes column by column, each step a whole padded row further on, "
    "and that stride is what the pad must spread over the sets.", "03", _CACHES,
    "Build the trace with column_walk_trace(pad): for j in the columns, for i in the rows.")


def _smallest_pad_row_walk() -> int | None:
    """The smallest aligned pad within the bank target whose walk, traced row by row, hits enough."""
    i, j = np.arange(WALK_ROWS), np.arange(WALK_WALKED)
    for pad in range(0, WALK_COLS + 1, WALK_PAD_STEP):
        trace = ((i[:, None] * (WALK_COLS + pad) + j[None, :]) * 4).ravel()
        if (column_read_conflict_degree(WALK_COLS, pad) <= WALK_MAX_CONFLICT
                and simulate_cache(trace, WALK_CACHE, WALK_LINE, WALK_WAYS).hit_rate >= WALK_TARGET):
            return pad
    return None


PAD_IN_BYTES = Misconception(
    "pad-in-bytes-not-floats", "The pad given in bytes where float32 elements were asked: each float "
    "is 4 bytes, so the same pad in bytes is four times the count.", "03", _CACHES,
    "Give the pad as the number of float32 elements added to each row (bytes / 4).")


def _smallest_pad_wrong() -> dict:
    right = _smallest_pad()
    # Most likely first: a pad that shares one value is named in this order, and the first one's
    # hint is given. Solving the banks alone (section 6's pad) comes before stopping at the
    # first aligned pad.
    wrong = {BANKS_ONLY: _smallest_pad(cache=False), FIRST_ALIGNED_PAD: WALK_PAD_STEP, FITS_SO_HITS: 0,
             WHOLE_LINE: WALK_LINE // 4, CACHE_ONLY: _smallest_pad(banks=False),
             PAD_IN_BYTES: right * 4, ROW_BY_ROW_WALK: _smallest_pad_row_walk()}
    return {k: v for k, v in wrong.items() if v is not None and v != right}


EXERCISES = [
    ChoiceExercise(
        "03.1", expected=_h200_tile_verdict, choices=("hidden", "exposed"),
        wrong_answers=_h200_tile_wrong, concepts=("async-copy",),
        form="a string, 'hidden' or 'exposed'",
        hints=("Double buffering hides the copy when t_copy <= t_compute for one k step of the tile.",
               "One k step copies 2 k (M + N) bytes and computes 2 M N k FLOP; give the SM its share "
               "(bandwidth / SMs, peak / SMs).",
               "The condition reduces to M N / (M + N) >= the H200's BF16 ridge point; the H200 has "
               "more bandwidth than the H100 but the same compute.")),
    ValueExercise(
        "03.2", quantity=("time", "data"), expected=_weights_from_host_ms, rel_tol=1e-3,
        wrong_answers=_with_generated(_weights_from_host_wrong, _weights_from_host_ms, _host_copy_slips, _replayed(_weights_from_host_ms, "03"), rel_tol=1e-3),
        variants=_HOST_COPY_VARIANTS,
        concepts=("memory-ladder",),
        form="a float: the time in milliseconds (ms) to copy {billions} billion BF16 parameters to "
             "the {accelerator}",
        hints=("t = bytes / bandwidth; {billions} billion BF16 parameters are 2 bytes each.",
               "The catalog's host_link_bandwidth counts both directions; a copy uses one.",
               "Divide by host_link_bandwidth / 2 and multiply seconds by 1e3.")),
    ValueExercise(
        "03.3", expected=_fewest_ways, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_fewest_ways_wrong, _fewest_ways, _replayed(_fewest_ways, "03")), concepts=("caches",),
        form=f"an integer: the number of ways, one of {WAYS_CHOICES}",
        hints=("Keep the capacity at 16 KiB and the line at 64 B; only the number of ways changes, "
               "and with it the number of sets.",
               "Work out which set each of the six addresses falls into for each choice, or run "
               "simulate_cache for each one.",
               "Six lines that share one set need at least six ways in it to stay resident.")),
    FunctionExercise(
        "03.4", reference=_reference_degree, make_cases=_bank_cases, rel_tol=0.0,
        wrong_implementations=_bank_wrong, concepts=("bank-conflicts",),
        form="a function passes(byte_addresses) taking 32 byte addresses and returning an int",
        hints=("Word = address // 4, bank = word % 32.",
               "Lanes reading the same word share one access: count distinct words per bank.",
               "The answer is the largest count over the 32 banks (1 when there is no conflict).")),
    ValueExercise(
        "03.5", expected=_stacks_needed, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_stacks_wrong, _stacks_needed, _stacks_slips, _replayed(_stacks_needed, "03")),
        concepts=("memory-ladder",),
        form="an integer: the number of HBM3e stacks",
        hints=("Keeping the ridge point means bandwidth = peak / ridge: compute the bandwidth the "
               "new chip needs from the B200's dense BF16 peak and the H100 SXM's ridge point.",
               "One stack moves 1024 pins x 9.2 Gbit/s / 8 bytes per second "
               "(course_lib.memory.bus_bandwidth_bytes_per_s).",
               "Divide and round up: a fraction of a stack is a whole stack.")),
    ChoiceExercise(
        "03.6", expected=_best_pipeline_change, choices=PIPE_CHANGES, wrong_answers=_pipeline_change_wrong,
        concepts=("async-copy",),
        form="one of 'third buffer', 'faster math', 'fp8 inputs' or 'multicast': the change that "
             "shortens the run most",
        hints=("Diagnose first: read each tile's copy and compute times off the profile, and see "
               "which unit waits for the other (section 5).",
               "For each change, work out the new copy and compute times per tile, then the run's "
               "total with section 5's pipeline model (or its formula for two or more buffers).",
               "Sanity check: with two or more buffers only the larger of the two times per tile "
               "repeats; a change that makes the other one the larger stops paying there.")),
    OptimumExercise(
        "03.7", expected=_smallest_pad, feasible=_pad_feasible, goal="smallest", step=WALK_PAD_STEP,
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_with_generated(_smallest_pad_wrong, _smallest_pad, _replayed(_smallest_pad, "03", integer=True, keep=lambda v: v % WALK_PAD_STEP == 0)), concepts=("caches",),
        form="an integer: the smallest pad, in float32 elements per row and a multiple of 4, that "
             "meets both targets (a 0.9 hit rate, at most a 4-way bank conflict)",
        hints=("Two models judge one pad: section 2's cache (which set each row's lines land in) and "
               "section 4's banks (which bank each lane of a column read lands in).",
               "For each allowed pad from 0 upwards, run the walk through section 2's cache "
               "simulator and work out the column read's bank conflict; stop at the first pad that "
               "passes both.",
               "Sanity check: the walk touches 16 KiB of a 32 KiB cache, so a low hit rate means "
               "placement, not capacity; and a pad's bank conflict depends on the largest power of "
               "two that divides the padded row length.")),
]
