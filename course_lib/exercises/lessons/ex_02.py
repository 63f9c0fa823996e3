"""Checks for lesson 02, SIMT and divergence (answers in solutions/02_simt_divergence.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from course_lib.exercises.feedback import (ExerciseError, Misconception, _as_scalar_answer, _close_note, _error,
                                          _scalar_misconceptions, _short, _tolerance_text)
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.variants import _NO_LEARNER, _params
from course_lib.exercises.decision import OptimumExercise
from course_lib.exercises.misconceptions import _with_generated
from course_lib.exercises.steps import _replayed
from course_lib._validate import check_bool, check_int
from course_lib.hardware import get_accelerator
from course_lib.simt import If, Let, While, aos_addresses, coalescing, run_simt, soa_addresses

__all__ = ["EXERCISES", "loop_kernel", "particle_kernel", "particle_kinds"]


_HOW_BAD = "2. How bad can divergence get?"
_WAVES = "4. 32-lane warps against 64-lane wavefronts"
_COALESCING = "6. Coalescing: which bytes a warp's load really moves"

REQUESTED_NOT_MOVED = Misconception(
    "bytes-requested-not-moved", "The bytes the warp asks for where the bytes memory moves were "
    "asked: memory moves whole 32-byte sectors, whatever part of them is used.", "02", _COALESCING,
    "Count the 32-byte sectors each layout touches, and multiply by 32.")
WARP_32 = Misconception(
    "warp-32-not-64", "NVIDIA's 32-lane warp where AMD's 64-lane wavefront runs: the more lanes, "
    "the likelier one of them branches.", "02", _WAVES,
    "Take W from get_accelerator('MI300X').warp_size.")
UNIFORM_SHARE = Misconception(
    "uniform-not-divergent", "The share of groups that stay uniform where the share that diverges "
    "was asked.", "02", _HOW_BAD, "A group diverges unless all its lanes, or none, take the branch: "
    "subtract both cases from 1.")
W_RHO = Misconception(
    "w-rho-not-probability", "W rho taken for the chance that some lane branches: it counts lanes, "
    "not groups, and exceeds 1.", "02", _HOW_BAD,
    "The chance that no lane branches is (1 - rho)^W; work from that.")
NONE_COUNTED_TWICE = Misconception(
    "no-lane-case-counted-twice", "The 'no lane branches' case subtracted twice where the two uniform "
    "cases are 'none' and 'all': the second is rho^W, not (1 - rho)^W.", "02", _HOW_BAD,
    "Write the two uniform cases separately: all lanes branch, no lane branches.")
SIMULATED = Misconception(
    "simulated-not-expected", "A simulated estimate where the expected share was asked: a random "
    "sample is off by its sampling noise.", "02", _HOW_BAD,
    "Compute the probability itself, from rho and W, not from random draws.")
MEAN_OVER_MAX = Misconception(
    "mean-over-max-iterations", "Mean iterations over the most, which ignores the loop test and the "
    "setup instruction that every lane issues too.", "02", _HOW_BAD,
    "Let run_simt count every issued instruction, the loop test included.")
ONE_WARP = Misconception(
    "one-warp-not-all", "One warp of 32 threads where the kernel runs 1000: the other warps see "
    "other iteration counts.", "02", _HOW_BAD, "Run the kernel with all 1000 threads.")
ORDER_MATTERS = Misconception(
    "coalescing-needs-order", "Lane order taken to matter: what counts is the set of sectors "
    "touched, not whether neighbouring lanes hit neighbouring addresses.", "02", "Misconceptions",
    "Collect the sectors of all lanes in a set; shuffling the lanes must not change the count.")
NO_STRADDLE = Misconception(
    "access-straddle-ignored", "Each access counted in one sector: an access of b bytes may cross "
    "a sector boundary and touch two.", "02", _COALESCING,
    "An access covers bytes a to a + b - 1: take the sectors of both ends.")
LOOP_TEST_INCLUSIVE = Misconception(
    "loop-test-inclusive", "The loop test written i <= n where the task runs n iterations (i < n): "
    "every lane runs one iteration too many, so both the issued instructions and the busy lanes "
    "change.", "02", _HOW_BAD,
    "Count the iterations of lane 0 in your kernel: the task gives lane t (t % 7) + 1 of them.")
WHOLE_WARPS = Misconception(
    "threads-rounded-to-whole-warps", "1024 threads, the whole warps that 1000 threads fill, where the "
    "kernel runs 1000: the last warp is partly empty, and its idle lanes count against the efficiency.",
    "02", _HOW_BAD, "Run exactly the task's 1000 threads; the simulator pads the last warp itself.")
END_BYTE_INCLUSIVE = Misconception(
    "access-end-byte-past-the-end", "The last byte of an access taken as a + b, one past its end: "
    "an access of b bytes at a covers a to a + b - 1, so an access that ends on a sector boundary "
    "is counted in the next sector too.", "02", _COALESCING,
    "Try one 4-byte access at address 28: it covers bytes 28 to 31, one sector.")


def _layout_with_fewer_bytes() -> str:
    """A warp reads one 4-byte field of 16-byte structs: AoS or SoA moves fewer bytes?"""
    aos = coalescing(aos_addresses(16, 4)).bytes_moved
    soa = coalescing(soa_addresses(1, 4, n_elements=10_000)).bytes_moved
    return "same" if aos == soa else ("aos" if aos < soa else "soa")


def _wave_divergence_share() -> float:
    """Share of MI300X wavefronts that diverge when each thread branches with probability 0.05."""
    width = get_accelerator("MI300X").warp_size
    rho = 0.05
    return 1 - rho ** width - (1 - rho) ** width


def _layout_wrong() -> dict:
    aos = coalescing(aos_addresses(16, 4)).bytes_requested
    soa = coalescing(soa_addresses(1, 4, n_elements=10_000)).bytes_requested
    moved = {"aos": coalescing(aos_addresses(16, 4)).bytes_moved,
             "soa": coalescing(soa_addresses(1, 4, n_elements=10_000)).bytes_moved}
    return {REQUESTED_NOT_MOVED: "same" if aos == soa else ("aos" if aos < soa else "soa"),
            NEIGHBOURS_TOGETHER: max(moved, key=moved.get)}


NEIGHBOURS_TOGETHER = Misconception(
    "aos-keeps-a-particle-together", "AoS taken as the friendlier layout because a particle's fields sit "
    "together: that helps a thread that reads a whole particle, but here the warp reads one field of 32 "
    "particles, 16 bytes apart in AoS.", "02", _COALESCING,
    "Write the 32 addresses the warp reads in each layout and count the 32-byte sectors they touch.")


#: Section 4's worked example branches with this probability (``rho = 0.02`` in the lesson's cell;
#: the course's tests keep the two equal): a learner who reuses the cell keeps it.
LESSON_RHO = 0.02

LESSON_RHO_KEPT = Misconception(
    "lesson-rho-kept", "Section 4's worked example's branch probability kept where the task gives its "
    "own: the share that diverges depends steeply on rho.", "02", _WAVES,
    "Put the task's probability into D(W) = 1 - rho^W - (1 - rho)^W, with the MI300X's W.")
POISSON_APPROXIMATION = Misconception(
    "poisson-approximation", "1 - exp(-W rho), the Poisson approximation, where the exact share was "
    "asked: it is close for a rare branch, but not equal to 1 - rho^W - (1 - rho)^W.", "02", _WAVES,
    "Use the exact probabilities: (1 - rho)^W that no lane branches, rho^W that all do.")
EXACTLY_ONE_LANE = Misconception(
    "exactly-one-lane-branches", "The chance that exactly one lane branches, W rho (1 - rho)^(W - 1), "
    "where a group diverges as soon as at least one lane, and not all, take the branch.", "02", _WAVES,
    "Count every group that is not uniform: 1 minus the two uniform cases.")
ALL_LANES_CASE_ONLY = Misconception(
    "only-all-lanes-case-removed", "Only the 'all lanes branch' case subtracted, 1 - rho^W: the "
    "commonest uniform group is the one where no lane branches, (1 - rho)^W.", "02", _WAVES,
    "Write the two uniform cases separately: all lanes branch, no lane branches.")


def _wave_divergence_wrong() -> dict:
    rho, width = 0.05, get_accelerator("MI300X").warp_size
    nvidia = get_accelerator("H100 SXM").warp_size
    rng = np.random.default_rng(0)
    taken = rng.random((10_000, width)) < rho                   # a simulated estimate, not the expected share
    simulated = float(np.mean(taken.any(axis=1) & ~taken.all(axis=1)))
    return {WARP_32: 1 - rho ** nvidia - (1 - rho) ** nvidia,
            UNIFORM_SHARE: rho ** width + (1 - rho) ** width,
            W_RHO: min(1.0, width * rho),
            NONE_COUNTED_TWICE: 1 - 2 * (1 - rho) ** width,
            SIMULATED: simulated,
            LESSON_RHO_KEPT: 1 - LESSON_RHO ** width - (1 - LESSON_RHO) ** width,
            POISSON_APPROXIMATION: 1 - math.exp(-width * rho),
            EXACTLY_ONE_LANE: width * rho * (1 - rho) ** (width - 1),
            ALL_LANES_CASE_ONLY: 1 - rho ** width,
            LANE_SHARE: rho,
            WIDTH_MINUS_ONE: 1 - rho ** (width - 1) - (1 - rho) ** (width - 1)}


LANE_SHARE = Misconception(
    "share-of-lanes-not-wavefronts", "The share of lanes that take the branch (rho itself) where the "
    "share of wavefronts that diverge was asked: one branching lane among 64 is enough to split a "
    "wavefront.", "02", _WAVES,
    "A wavefront diverges unless all its lanes, or none, branch: 1 - rho^W - (1 - rho)^W.")
WIDTH_MINUS_ONE = Misconception(
    "width-minus-one-lanes", "W - 1 lanes in the exponents, as if one lane were the reference the others "
    "are compared with: every one of the W lanes branches on its own, so all W count.", "02", _WAVES,
    "Use the full width W = get_accelerator('MI300X').warp_size in both uniform cases.")

#: The fewest groups a simulated estimate of 02.2 is likely drawn from (the lesson's own cell
#: simulates 2000 wavefronts): an answer within SAMPLED_SIGMAS of its standard error is read as one.
SAMPLED_MIN_GROUPS, SAMPLED_SIGMAS = 1000, 4


def _rounded_forms(p: float) -> list:
    """``p`` as a printout shows it: rounded, truncated or raised to 0 to 12 decimals or digits."""
    forms = [float(f"{p:.{d}g}") for d in range(1, 13)]
    for d in range(13):
        forms += [f(p * 10 ** d) / 10 ** d for f in (round, math.floor, math.ceil)]
    return forms


def _is_printout(got: float, p: float) -> bool:
    """Whether ``got`` is ``p`` as a printout shows it (see _rounded_forms), and not ``p`` itself."""
    return got != p and any(math.isclose(got, f, rel_tol=1e-12, abs_tol=1e-15) for f in _rounded_forms(p))


def _looks_sampled(got: float, p: float) -> bool:
    """Whether ``got`` is what a random sample of at least SAMPLED_MIN_GROUPS groups estimates for
    the probability ``p``: within SAMPLED_SIGMAS standard errors, and not a printout of ``p``."""
    if not 0 <= got <= 1 or not 0 < p < 1 or _is_printout(got, p):
        return False
    return abs(got - p) <= SAMPLED_SIGMAS * math.sqrt(p * (1 - p) / SAMPLED_MIN_GROUPS)


@dataclass(frozen=True)
class _ProbabilityExercise(ValueExercise):
    """A value exercise whose answer is an exact probability: an answer within the sampling noise
    of a simulated estimate (see _looks_sampled) is named ``sampled``, whatever sample size and
    seed the learner drew (one listed value cannot stand for every seed); a listed mistake it
    matches only roughly, not to the digit, is named after it. A rounded printout of the answer
    (two decimals, say) is named no mistake, even where a listed value lies near it."""

    sampled: Misconception | None = None

    def check(self, answer, learner=_NO_LEARNER) -> str:
        try:
            return super().check(answer, learner)
        except ExerciseError:
            if self.sampled is None:
                raise
            params = _params(self, learner)
            got = _as_scalar_answer(self, answer, params)
            want = float(self.expected(**params))
            # A listed mistake matched to the digit (the formula a learner typed) keeps its name.
            listed = self.wrong_answers(**params) if self.wrong_answers is not None else {}
            found = _scalar_misconceptions(self, params, got, want)
            if any(math.isclose(got, float(listed[m]), rel_tol=1e-9) for m in found if m in listed):
                raise
            what = f"your answer {_short(got)} is not accepted ({_tolerance_text(self.rel_tol, self.abs_tol)})"
            if _is_printout(got, want):          # a rounded printout of the answer is no mistake's value
                raise _error(self, what + _close_note(got, want), params, []) from None
            if not _looks_sampled(got, want):
                raise
            # a listed value the sample only lands near (within the 0.1 % names allow) comes after it
            names = [self.sampled] + [m for m in found if m != self.sampled][:2]
            raise _error(self, what, params, names) from None


BODY_TWO_INSTRUCTIONS = Misconception(
    "loop-body-two-instructions", "The body written as two instructions (a = 2 i + 1 in one Let) where "
    "the task's body has three: every instruction of the body is issued once per iteration, so the "
    "count changes the efficiency.", "02", _HOW_BAD,
    "Build the body exactly as the task lists it: a = i * 2, a = a + 1, i = i + 1.")
ITERATIONS_PER_WARP = Misconception(
    "iterations-over-max-per-warp", "Each warp's mean iterations over its most, averaged over the warps: "
    "that leaves out the setup and the loop tests every lane issues, and the last warp's idle lanes.",
    "02", _HOW_BAD, "Let run_simt count every issued instruction of all 1000 threads.")


@functools.lru_cache(maxsize=None)      # a simulated kernel per mistake
def _loop_efficiency_wrong() -> dict:
    iterations = np.arange(1000) % 7 + 1
    warps = [iterations[i:i + 32] for i in range(0, iterations.size, 32)]
    return {MEAN_OVER_MAX: float(np.mean(iterations) / iterations.max()),
            ONE_WARP: run_simt(loop_kernel(), 32).simt_efficiency,
            LOOP_TEST_INCLUSIVE: run_simt(loop_kernel(inclusive=True), 1000).simt_efficiency,
            WHOLE_WARPS: run_simt(loop_kernel(), 1024).simt_efficiency,
            LOOP_PLUS_ONE_DROPPED: run_simt(_loop_kernel_without_plus_one(), 1000).simt_efficiency,
            BODY_TWO_INSTRUCTIONS: run_simt(loop_kernel(body=2), 1000).simt_efficiency,
            ITERATIONS_PER_WARP: float(np.mean([w.mean() / w.max() for w in warps])),
            IDLE_SHARE: 1 - run_simt(loop_kernel(), 1000).simt_efficiency,
            MODULUS_EIGHT: run_simt(_loop_kernel_modulus_eight(), 1000).simt_efficiency,
            EXTRA_SETUP: run_simt([Let("a", lambda v: 0)] + loop_kernel(), 1000).simt_efficiency}


EXTRA_SETUP = Misconception(
    "extra-setup-instruction", "An extra instruction before the loop (a = 0, say) that the task's kernel "
    "does not have: every lane issues it, so it raises the efficiency a little.", "02", _HOW_BAD,
    "Build the kernel exactly as the task lists it: Let('i', 0), then the While with its three-instruction body.")


IDLE_SHARE = Misconception(
    "idle-share-not-efficiency", "The share of lane slots left idle (1 - efficiency) where the SIMT "
    "efficiency, the busy share, was asked.", "02", _HOW_BAD,
    "Report run_simt(...).simt_efficiency itself: the fraction of lane slots doing work.")
MODULUS_EIGHT = Misconception(
    "loop-test-tid-mod-eight", "The loop test written i < tid % (7 + 1): the brackets make it tid % 8, so "
    "lane t runs t % 8 iterations, 0 to 7, where the task gives it (t % 7) + 1.", "02", _HOW_BAD,
    "Write the test as the task gives it, (tid % 7) + 1: the modulus is taken first, then 1 is added.")


def _loop_kernel_modulus_eight():
    """Wrong: the loop test i < tid % (7 + 1) (lanes run 0 to 7 iterations)."""
    return [Let("i", lambda v: 0),
            While(lambda v: v["i"] < v["tid"] % 8,
                  [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1),
                   Let("i", lambda v: v["i"] + 1)])]


LOOP_PLUS_ONE_DROPPED = Misconception(
    "loop-test-plus-one-dropped", "The loop test written i < tid % 7, without the + 1: lane t then runs "
    "t % 7 iterations, from 0 to 6, where the task gives it one more.", "02", _HOW_BAD,
    "Write the test exactly as the task gives it, i < tid % 7 + 1: every lane runs at least once.")


def _loop_kernel_without_plus_one():
    """Wrong: the loop test without its + 1 (lanes run 0 to 6 iterations)."""
    return [Let("i", lambda v: 0),
            While(lambda v: v["i"] < v["tid"] % 7,
                  [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1),
                   Let("i", lambda v: v["i"] + 1)])]


def loop_kernel(inclusive=False, body=3):
    """Lane t runs (t % 7) + 1 iterations of a three-instruction body (``inclusive``: the loop
    test written with <=, one iteration more; ``body=2``: a = 2 i + 1 in one instruction; both
    known mistakes)."""
    if check_bool("inclusive", inclusive):
        def test(v):
            return v["i"] <= v["tid"] % 7 + 1
    else:
        def test(v):
            return v["i"] < v["tid"] % 7 + 1
    if check_int("body", body, min_value=2, max_value=3) == 3:
        work = [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1)]
    else:
        work = [Let("a", lambda v: v["i"] * 2 + 1)]
    return [Let("i", lambda v: 0), While(test, work + [Let("i", lambda v: v["i"] + 1)])]


def _loop_efficiency() -> float:
    return run_simt(loop_kernel(), 1000).simt_efficiency


def _sectors(addresses, bytes_per_access):
    return coalescing(np.asarray(addresses), bytes_per_access).n_sectors


def _sectors_in_lane_order(addresses, bytes_per_access):
    """Wrong: a new sector counted whenever a lane's first sector differs from the previous lane's."""
    first = np.asarray(addresses) // 32
    return int(1 + np.count_nonzero(np.diff(first)))


def _sectors_without_straddle(addresses, bytes_per_access):
    return int(np.unique(np.asarray(addresses) // 32).size)


def _sectors_end_inclusive(addresses, bytes_per_access):
    """Wrong: an access taken to end at byte a + b, one past its last byte."""
    a = np.asarray(addresses)
    return len({int(s) for lo, hi in zip(a // 32, (a + bytes_per_access) // 32) for s in range(lo, hi + 1)})


CONTIGUOUS_ASSUMED = Misconception(
    "lanes-assumed-contiguous", "The lanes' bytes taken to lie side by side, lanes x bytes / 32 rounded "
    "up: that holds only for a contiguous, aligned access; a stride, a gap or a repeated address "
    "changes the count.", "02", _COALESCING,
    "Work from the addresses themselves: the sectors each access covers, collected in a set.")
LINES_NOT_SECTORS = Misconception(
    "lines-not-sectors", "128-byte cache lines counted where 32-byte sectors were asked: a line holds "
    "four sectors, and memory moves only the sectors a warp touches.", "02", _COALESCING,
    "Divide byte addresses by 32, the sector size, not by 128.")
SECTORS_PER_LANE_ADDED = Misconception(
    "sectors-per-lane-added", "Each lane's sectors added up: lanes that share a sector are served by "
    "one transfer, so a sector is counted once however many lanes touch it.", "02", _COALESCING,
    "Collect the sectors of all lanes in one set (or np.unique) before counting.")
SECTOR_SPAN = Misconception(
    "sector-span-not-set", "The span from the lowest sector to the highest, gaps included: sectors "
    "between the accesses that no lane touches are not moved.", "02", _COALESCING,
    "Count only the sectors some access covers: a set of sectors, not a range.")
ADDRESSES_AS_INDICES = Misconception(
    "addresses-taken-as-indices", "The addresses multiplied by the access size, as if they were element "
    "indices: they are byte addresses already.", "02", _COALESCING,
    "Use the addresses as they come: an access covers bytes a to a + b - 1.")
ACCESS_SIZE_IGNORED = Misconception(
    "access-size-ignored", "Every access taken as 4 bytes whatever bytes_per_access says: a wider "
    "access covers more bytes and may reach into the next sector.", "02", _COALESCING,
    "Use bytes_per_access for the end of each access: a + bytes_per_access - 1.")


RANGE_END_EXCLUDED = Misconception(
    "sector-range-end-excluded", "The sectors of an access taken as range(first, last), which leaves "
    "out the last one: an access that stays in one sector then counts none.", "02", _COALESCING,
    "An access covers sectors a // 32 to (a + b - 1) // 32 inclusive: range(first, last + 1).")


def _sectors_range_exclusive(addresses, bytes_per_access):
    a = np.asarray(addresses)
    return len({int(s) for lo, hi in zip(a // 32, (a + bytes_per_access - 1) // 32) for s in range(lo, hi)})


def _sectors_contiguous(addresses, bytes_per_access):
    return int(math.ceil(len(addresses) * bytes_per_access / 32))


def _lines_touched(addresses, bytes_per_access):
    a = np.asarray(addresses)
    return len({int(s) for lo, hi in zip(a // 128, (a + bytes_per_access - 1) // 128) for s in range(lo, hi + 1)})


def _sectors_added(addresses, bytes_per_access):
    a = np.asarray(addresses)
    return int(np.sum((a + bytes_per_access - 1) // 32 - a // 32 + 1))


def _sector_span(addresses, bytes_per_access):
    a = np.asarray(addresses)
    return int((a.max() + bytes_per_access - 1) // 32 - a.min() // 32 + 1)


def _sectors_wrong() -> dict:
    return {ORDER_MATTERS: _sectors_in_lane_order, NO_STRADDLE: _sectors_without_straddle,
            END_BYTE_INCLUSIVE: _sectors_end_inclusive, CONTIGUOUS_ASSUMED: _sectors_contiguous,
            LINES_NOT_SECTORS: _lines_touched, SECTORS_PER_LANE_ADDED: _sectors_added,
            SECTOR_SPAN: _sector_span,
            ADDRESSES_AS_INDICES: lambda a, b: _sectors(np.asarray(a) * b, b),
            ACCESS_SIZE_IGNORED: lambda a, b: _sectors(a, 4),
            RANGE_END_EXCLUDED: _sectors_range_exclusive,
            LAST_BYTE_ONLY: lambda a, b: int(np.unique((np.asarray(a) + b - 1) // 32).size),
            BYTE_SPAN: lambda a, b: int(math.ceil((np.max(a) + b - np.min(a)) / 32)),
            STRADDLES_ADDED: lambda a, b: int(np.unique(np.asarray(a) // 32).size
                                              + np.count_nonzero((np.asarray(a) + b - 1) // 32 != np.asarray(a) // 32)),
            DISTINCT_BYTES: lambda a, b: int(math.ceil(np.unique(np.asarray(a)).size * b / 32))}


LAST_BYTE_ONLY = Misconception(
    "sector-of-last-byte-only", "Each access counted in the sector of its last byte only: an access that "
    "straddles a boundary touches the sector of its first byte too.", "02", _COALESCING,
    "An access covers sectors a // 32 to (a + b - 1) // 32: take both ends.")
BYTE_SPAN = Misconception(
    "byte-span-over-32", "The bytes from the lowest address to the end of the highest access, divided by "
    "32: sectors are fixed 32-byte slots of memory, a span does not start on one, and gaps are not moved.",
    "02", _COALESCING, "Count sector indices, address // 32, for each access: a set of them, not a length.")
STRADDLES_ADDED = Misconception(
    "straddling-accesses-added", "Each straddling access added as one more sector on top of the sectors "
    "of the start addresses: the sector it reaches into may be one another lane touches already.", "02",
    _COALESCING, "Put both sectors of every access into one set before counting.")
DISTINCT_BYTES = Misconception(
    "distinct-addresses-times-size", "The distinct addresses times the access size, over 32: that counts "
    "bytes, as if packed side by side from a sector boundary; spread accesses touch more sectors than that.",
    "02", _COALESCING, "Work from each access's own sectors, a // 32 to (a + b - 1) // 32, collected in a set.")


def _sector_cases(rng) -> list:
    cases = [((np.arange(32) * 4 + 4, 4), {}), ((np.full(7, 100), 8), {})]
    for _ in range(10):
        lanes = int(rng.integers(1, 64)) | 1
        size = int(rng.choice([1, 2, 4, 8, 16]))
        stride = int(rng.integers(0, 50))
        base = int(rng.integers(0, 1000))
        addr = base + np.arange(lanes) * stride
        cases.append(((rng.permutation(addr), size), {}))
    return cases


# --- 02.5 (design): the narrowest block whose loads stay coalesced ------------------------------

#: 02.5's launch (task data): 256-thread blocks w threads wide and 256 / w rows tall read rows
#: 0..63 and columns 0..255 of a row-major float32 matrix of TILE_PITCH columns starting at byte 0,
#: one element per thread: thread (tx, ty) of the block in block row R and block column C reads
#: a[R (256 / w) + ty, C w + tx], with tid = ty w + tx and warps of 32 consecutive tids. Target:
#: averaged over the launch's warps, sectors x 32 bytes at most MOVED_PER_REQUESTED x the 128
#: bytes a warp requests.
TILE_ROWS, TILE_COLS, TILE_PITCH, BLOCK_THREADS = 64, 256, 1002, 256
MOVED_PER_REQUESTED = 1.5

ROWS_ALIGNED = Misconception(
    "rows-assumed-aligned", "Every row taken to start on a 32-byte sector boundary: a row of 1002 "
    "floats is 4008 bytes, not a multiple of 32, so most rows start inside a sector and a short row "
    "segment straddles two.", "02", _COALESCING,
    "Print the byte address of a[i, 0] for rows 0 to 3, modulo 32: where in its sector does each row start?")
ONE_ROW_PER_WARP = Misconception(
    "warp-must-read-one-row", "A warp taken to need 32 consecutive floats of one row: memory moves "
    "32-byte sectors, so a warp split over a few rows can do, as long as each piece does not touch "
    "too many sectors.", "02", _COALESCING,
    "Count the sectors of one warp for a narrower block, row piece by row piece.")


def _block_sectors_per_warp(width, pitch=TILE_PITCH, moved=True) -> float:
    """Mean sectors (or, with ``moved=False``, requested bytes / 32) per warp over 02.5's launch."""
    height = BLOCK_THREADS // width
    tid = np.arange(BLOCK_THREADS)
    tx, ty = tid % width, tid // width
    counts = []
    for block_row in range(TILE_ROWS // height):
        for block_col in range(TILE_COLS // width):
            elements = (block_row * height + ty) * pitch + block_col * width + tx
            for warp in elements.reshape(-1, 32):
                use = coalescing(warp * 4, 4)
                counts.append(use.n_sectors if moved else use.bytes_requested / 32)
    return float(np.mean(counts))


def _block_width_problem(width) -> str | None:
    if width < 1 or BLOCK_THREADS % width:
        return f"256 threads do not make whole rows of {width} threads"
    if BLOCK_THREADS // width > TILE_ROWS:
        return f"a block {width} wide is {BLOCK_THREADS // width} rows tall, taller than the {TILE_ROWS} rows read"
    if width > TILE_COLS:
        return f"a block {width} wide is wider than the {TILE_COLS} columns read"
    return None


@functools.lru_cache(maxsize=None)      # 512 warps' sectors per width
def _block_feasible(width, pitch=TILE_PITCH, moved=True) -> str | None:
    """None when blocks ``width`` threads wide keep the loads within the target; else why not."""
    problem = _block_width_problem(width)
    if problem:
        return problem
    sectors = _block_sectors_per_warp(width, pitch, moved)
    if sectors * 32 > MOVED_PER_REQUESTED * 128 + 1e-9:
        return (f"blocks {width} wide move {sectors:.2f} sectors ({sectors * 32:.0f} bytes) per warp on "
                f"average for the 128 bytes a warp requests, {sectors / 4:.2f} times, over "
                f"{MOVED_PER_REQUESTED}")
    return None


def _narrowest(pitch=TILE_PITCH, moved=True) -> int:
    for width in range(1, BLOCK_THREADS + 1):
        if _block_feasible(width, pitch, moved) is None:
            return width
    raise RuntimeError("02.5: no block width meets the target")


def _narrowest_block() -> int:
    return _narrowest()


TID_DOWN_COLUMNS = Misconception(
    "thread-ids-down-the-columns", "The block's threads numbered down its columns, tid = tx x height + "
    "ty: CUDA numbers them along the rows, tid = ty x w + tx, so a warp's 32 consecutive tids run "
    "along a row of the block, not down a column.", "02", _COALESCING,
    "Write tx = tid % w and ty = tid // w, then the warp's 32 element indices, before counting sectors.")


def _transposed_sectors_per_warp(width) -> float:
    """Mean sectors per warp over 02.5's launch with the threads numbered down the columns: every
    warp at once (4-byte loads at multiples of 4 bytes never straddle a sector)."""
    height = BLOCK_THREADS // width
    tid = np.arange(BLOCK_THREADS)
    tx, ty = tid // height, tid % height
    block_row = np.arange(TILE_ROWS // height)[:, None, None]
    block_col = np.arange(TILE_COLS // width)[None, :, None]
    elements = (block_row * height + ty) * TILE_PITCH + block_col * width + tx
    sectors = np.sort((elements.reshape(-1, 32) * 4) // 32, axis=1)
    return float(np.mean(1 + np.count_nonzero(np.diff(sectors, axis=1), axis=1)))


@functools.lru_cache(maxsize=None)
def _narrowest_transposed() -> int | None:
    for width in range(1, BLOCK_THREADS + 1):
        if _block_width_problem(width) is None and \
                _transposed_sectors_per_warp(width) * 32 <= MOVED_PER_REQUESTED * 128 + 1e-9:
            return width
    return None


def _narrowest_block_wrong() -> dict:
    right = _narrowest()
    wrong = {ROWS_ALIGNED: _narrowest(pitch=TILE_COLS * 4),        # a pitch whose rows start on sectors
             REQUESTED_NOT_MOVED: _narrowest(moved=False),
             ONE_ROW_PER_WARP: 32,
             TID_DOWN_COLUMNS: _narrowest_transposed()}
    return {k: v for k, v in wrong.items() if v is not None and v != right}


# --- 02.6 (design): how long must the rare path be before a sort pays? --------------------------

RARE_BRANCH_CHEAP = Misconception(
    "rare-branch-is-cheap", "A rare branch taken to cost its rate times its length, counted per "
    "thread: a warp with even one lane on the long path issues the whole long path, so a branch that "
    "1 thread in 64 takes stalls far more than 1 warp in 64.", "02", _HOW_BAD,
    "Ask how likely a warp of 32 lanes is to hold at least one long particle.")
EVERY_WARP_DIVERGES = Misconception(
    "every-warp-diverges", "Every warp taken to diverge: with a rare branch most warps are uniform "
    "and run the short path only, even before any grouping.", "02", _HOW_BAD,
    "A warp diverges only when it holds both kinds; work out how likely that is.")
SORT_COST_PER_LANE = Misconception(
    "uniform-cost-times-32", "The sort's per-thread cost multiplied by 32 for a warp: an "
    "instruction that every thread runs is one issue for the whole warp, not 32.", "02", "1. One instruction, many lanes",
    "A warp issues each instruction once for all its lanes: compare issues per warp with issues per warp.")
SAVING_TIMES_32 = Misconception(
    "saving-times-32", "The issues saved per warp multiplied by 32 before comparing with the "
    "per-thread cost: the saving and the cost are both counted in issues per warp already.", "02",
    "1. One instruction, many lanes", "Keep both sides in issues per warp: one uniform instruction "
    "per thread is one issue per warp.")
SORT_COST_SHARED_AMONG_LANES = Misconception(
    "sort-cost-shared-among-lanes", "The sort's per-thread instructions divided among a warp's 32 lanes, "
    "as if each lane paid a 32nd of them: every lane runs every one of the sort's instructions, together, "
    "so the warp issues each once, the per-thread count itself.", "02", "1. One instruction, many lanes",
    "One uniform instruction per thread is one issue per warp: the sort adds its per-thread count of "
    "issues to every warp, undivided.")
PROBABILITIES_ADDED = Misconception(
    "warp-probability-added", "The chance that a warp holds a long particle taken as 32 p: adding "
    "the lanes' chances counts warps with two or more long particles more than once.", "02", _HOW_BAD,
    "A warp is free of long particles only when every one of its lanes is: 1 minus that is the "
    "chance it holds one.")
DIVERGED_RUNS_ONE_PATH = Misconception(
    "diverged-warp-one-path", "A diverged warp counted as issuing the long path only: it issues "
    "both paths, one after the other, with the other lanes masked off.", "02", _HOW_BAD,
    "Run one warp with a single long lane in the simulator and count its issues.")
SAMPLE_NOT_EXPECTED = Misconception(
    "sample-not-expectation", "The recorded sample simulated where the expectation over arrival "
    "orders was asked: one draw of 4096 particles has more or fewer diverged warps than the "
    "average by chance.", "02", _HOW_BAD,
    "Use the sample only to test your model; the answer comes from the probabilities.")
SORT_LEFT_OUT = Misconception(
    "sort-cost-left-out", "The grouped run costed without its sort: grouping the particles is not "
    "free, every thread first runs the sort's instructions, and they are what the long path must "
    "pay back.", "02", _HOW_BAD,
    "Add the sort's instructions per thread (one issue per warp each) to the grouped run's cost.")
LENGTH_ROUNDED_DOWN = Misconception(
    "length-rounded-down", "The break-even length rounded down: below it the sort costs more than "
    "it saves, so the shortest whole length that pays is the one above.", "02", _HOW_BAD,
    "Put your whole number back into both expectations and compare.")

LONG_PATH_AS_EXTRA = Misconception(
    "long-path-as-extra-length", "The long path counted as extra instructions on top of the short path: "
    "the task's long path is the whole path a long particle runs, in place of the short one.", "02", _HOW_BAD,
    "Put your length into particle_kernel(long_path=...) and count one all-long warp's issues.")

WAVEFRONT_LANES = Misconception(
    "wavefront-64-for-warp-32", "Warps of 64 lanes (the MI300X's wavefront of 02.2) where the task's "
    "warps have 32: more lanes make a warp likelier to hold a long particle, so the sort seems to pay "
    "sooner.", "02", _WAVES,
    "The task packs 32 particles to a warp: the chance a warp holds a long one is 1 - (63/64)^32.")

PARTICLES = 4096
SHORT_PATH = 10
SORT_COST = 11          # instructions per thread, the same in every thread
LONG_RATE = 1 / 64      # chance that a particle needs the long path, independently of the others


def particle_kinds() -> np.ndarray:
    """Exercise 02.6's recorded sample of one arrival order: True where a particle needs the long path."""
    return np.random.default_rng(2026).random(PARTICLES) < LONG_RATE


def particle_kernel(long_path: int = 60, short_path: int = SHORT_PATH) -> list:
    """One branch on the particle's kind: ``long_path`` instructions or ``short_path`` of them."""
    long_path = check_int("long_path", long_path, min_value=1, max_value=1000)
    short_path = check_int("short_path", short_path, min_value=1, max_value=1000)
    return [If(lambda v: v["kind"][v["tid"]],
               then=[Let("a", lambda v: v["tid"] + 1) for _ in range(long_path)],
               orelse=[Let("a", lambda v: v["tid"] + 2) for _ in range(short_path)])]


@functools.lru_cache(maxsize=None)
def _warp_issues(long_path, n_long) -> int:
    """Issues of one simulated warp of 32 particles, ``n_long`` of them on the long path (past
    1000 instructions, where only wrong answers go, the simulated line is extended)."""
    if long_path > 1000:
        return _warp_issues(1000, n_long) + (long_path - 1000) * (
            _warp_issues(1000, n_long) - _warp_issues(999, n_long))
    kinds = np.arange(32) < n_long
    return run_simt(particle_kernel(long_path), 32, inputs={"kind": kinds}).issued


def _expected_issues(long_path, rate=LONG_RATE, diverged_any=None, mixed_both=True, lanes=32):
    """Expected issues per warp (arrival order, grouped order with its sort); the keywords replace
    the chance that a warp holds a long particle or the cost of a diverged warp (known mistakes)."""
    short, long_, mixed = (_warp_issues(long_path, n) for n in (0, 32, 1))
    if not mixed_both:
        mixed = long_
    all_long = rate ** lanes
    any_long = 1 - (1 - rate) ** lanes if diverged_any is None else diverged_any
    all_short = 1 - any_long
    arrival = all_short * short + all_long * long_ + (any_long - all_long) * mixed
    grouped = SORT_COST + rate * long_ + (1 - rate) * short
    return arrival, grouped


def _sort_feasible(long_path) -> str | None:
    """None when grouping pays, in expectation, for a sort of SORT_COST per thread; else why not."""
    if not 1 <= long_path <= 1000:
        return f"the long path is 1 to 1000 instructions here, not {long_path}"
    arrival, grouped = _expected_issues(long_path)
    if grouped > arrival:
        return (f"with a long path of {long_path} instructions, the grouped run with its sort issues "
                f"{grouped:.2f} instructions per warp on average, more than the arrival order's "
                f"{arrival:.2f}")
    return None


def _shortest(pays, hi=1000):
    """Smallest long path in 1..hi for which ``pays(L)`` (monotone in L); None when none does."""
    if not pays(hi):
        return None
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pays(mid) else (mid + 1, hi)
    return lo


@functools.lru_cache(maxsize=None)
def _shortest_paying_path() -> int:
    found = _shortest(lambda n: _sort_feasible(n) is None)
    if found is None:
        raise RuntimeError("02.6: the sort never pays within 1000 instructions")
    return found


def _sample_issues_per_warp(order, long_path) -> float:
    result = run_simt(particle_kernel(long_path), PARTICLES, inputs={"kind": order})
    return result.issued / result.n_warps


def _shortest_paying_path_wrong() -> dict:
    def with_(cost=SORT_COST, **kw):
        def pays(n):
            arrival, grouped = _expected_issues(n, **kw)
            return grouped - SORT_COST + cost <= arrival
        return _shortest(pays, hi=5000)

    def sample_pays(n):
        kinds = particle_kinds()
        return (_sample_issues_per_warp(np.sort(kinds), n) + SORT_COST
                <= _sample_issues_per_warp(kinds, n))

    right = _shortest_paying_path()
    arrival, grouped = _expected_issues(right)
    # the sort left out first: it is the likelier slip of the two that land on one length
    wrong = {SORT_LEFT_OUT: with_(cost=0),
             SORT_COST_PER_LANE: with_(cost=32 * SORT_COST),
             SORT_COST_SHARED_AMONG_LANES: with_(cost=SORT_COST / 32),
             SAVING_TIMES_32: with_(cost=SORT_COST / 32),
             PROBABILITIES_ADDED: with_(diverged_any=min(1.0, 32 * LONG_RATE)),
             RARE_BRANCH_CHEAP: SHORT_PATH + int(np.ceil(SORT_COST / LONG_RATE - 1e-9)),
             EVERY_WARP_DIVERGES: with_(diverged_any=1.0),
             DIVERGED_RUNS_ONE_PATH: with_(mixed_both=False),
             SAMPLE_NOT_EXPECTED: _shortest(sample_pays),
             LENGTH_ROUNDED_DOWN: right - 1,
             LONG_PATH_AS_EXTRA: _shortest(lambda n: _sort_feasible(n + SHORT_PATH) is None, hi=1000 - SHORT_PATH),
             WAVEFRONT_LANES: with_(lanes=get_accelerator("MI300X").warp_size)}
    return {k: v for k, v in wrong.items() if v is not None and v != right}


EXERCISES = [
    ChoiceExercise(
        "02.1", expected=_layout_with_fewer_bytes, choices=("aos", "soa", "same"),
        wrong_answers=_layout_wrong, concepts=("coalescing",),
        form="a string: 'aos', 'soa' or 'same'",
        hints=("Count the bytes between lane 0's address and lane 31's in each layout.",
               "Memory moves whole 32-byte sectors; in AoS each lane's 4 bytes sit 16 bytes apart.",
               "coalescing(aos_addresses(16, 4)).bytes_moved against coalescing(soa_addresses(1)).bytes_moved.")),
    _ProbabilityExercise(
        "02.2", expected=_wave_divergence_share, sampled=SIMULATED, rel_tol=1e-6, wrong_answers=_with_generated(_wave_divergence_wrong, _wave_divergence_share, _replayed(_wave_divergence_share, "02"), rel_tol=1e-6),
        concepts=("divergence",),
        form="a float between 0 and 1: the expected fraction of wavefronts that diverge, from the "
             "probabilities (not a simulated estimate)",
        hints=("A group is uniform when all its lanes branch, or none do.",
               "Use the MI300X's warp_size from the catalog as W.",
               "1 - rho**W - (1 - rho)**W.")),
    ValueExercise(
        "02.3", expected=_loop_efficiency, rel_tol=1e-9, wrong_answers=_with_generated(_loop_efficiency_wrong, _loop_efficiency, _replayed(_loop_efficiency, "02"), rel_tol=1e-9),
        concepts=("divergence", "simt-efficiency"),
        form="a float between 0 and 1: SIMT efficiency of the whole kernel",
        hints=("run_simt(kernel, 1000) returns a result with .simt_efficiency.",
               "Build the kernel exactly as the task states: the loop test counts as an instruction.",
               "Check your number by hand for one warp: which lane runs longest?")),
    FunctionExercise(
        "02.4", reference=_sectors, make_cases=_sector_cases, rel_tol=0.0,
        wrong_implementations=_sectors_wrong, concepts=("coalescing",),
        form="a function sectors_touched(addresses, bytes_per_access) returning an int",
        hints=("An access of b bytes at address a covers bytes a to a + b - 1.",
               "Its sectors run from a // 32 to (a + b - 1) // 32; an access may straddle two.",
               "Collect every lane's sectors in a set (or np.unique) and count them; lane order "
               "does not matter.")),
    OptimumExercise(
        "02.5", expected=_narrowest_block, feasible=_block_feasible, goal="smallest",
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_narrowest_block_wrong, concepts=("coalescing",),
        form="an integer: the block width w in threads (256 / w rows tall), the narrowest that meets "
             "the target",
        hints=("Section 6's model: a warp's load moves every 32-byte sector any of its lanes touches, "
               "however few of the sector's bytes it uses.",
               "For a width w, write each thread's element index from tid, group 32 consecutive "
               "tids into a warp, and count each warp's sectors; average over every warp the "
               "launch runs.",
               "Sanity check: a row of this matrix is 4008 bytes. Does each row start on a sector "
               "boundary, and what does that do to a short piece of a row?")),
    OptimumExercise(
        "02.6", expected=_shortest_paying_path, feasible=_sort_feasible, goal="smallest",
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_shortest_paying_path_wrong,
        concepts=("divergence", "simt-efficiency"),
        form="an integer: the shortest long path, in instructions (1 to 1000), for which the grouped "
             "run with its sort issues no more instructions per warp than the arrival order, in "
             "expectation",
        hints=("Section 2: a warp issues a path if any of its lanes takes it; section 1: an "
               "instruction every lane runs is issued once for the warp.",
               "There are three kinds of warp: all short, all long, and mixed. Find what each "
               "issues (the simulator on a single warp tells you), then how likely each kind is "
               "in the arrival order and in the grouped order.",
               "Sanity check: the chance that a warp holds at least one long particle is much "
               "more than 1 in 64 but well under a half; the recorded sample should land "
               "near your model, not on it.")),
]
