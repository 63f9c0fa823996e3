"""Checks for lesson 02, SIMT and divergence (answers in solutions/02_simt_divergence.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import numpy as np

from course_lib.checks import ChoiceExercise, FunctionExercise, Misconception, ValueExercise
from course_lib._validate import check_choice, check_int
from course_lib.hardware import get_accelerator
from course_lib.simt import If, Let, While, aos_addresses, coalescing, run_simt, soa_addresses

__all__ = ["EXERCISES", "loop_kernel", "column_read_addresses", "particle_kernel", "particle_kinds"]


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
    return {REQUESTED_NOT_MOVED: "same" if aos == soa else ("aos" if aos < soa else "soa")}


def _wave_divergence_wrong() -> dict:
    rho, width = 0.05, get_accelerator("MI300X").warp_size
    nvidia = get_accelerator("H100 SXM").warp_size
    rng = np.random.default_rng(0)
    taken = rng.random((10_000, width)) < rho                   # a simulated estimate, not the expected share
    simulated = float(np.mean(taken.any(axis=1) & ~taken.all(axis=1)))
    return {WARP_32: 1 - rho ** nvidia - (1 - rho) ** nvidia,
            UNIFORM_SHARE: rho ** width + (1 - rho) ** width,
            W_RHO: min(1.0, width * rho),
            SIMULATED: simulated}


def _loop_efficiency_wrong() -> dict:
    iterations = np.arange(1000) % 7 + 1
    return {MEAN_OVER_MAX: float(np.mean(iterations) / iterations.max()),
            ONE_WARP: run_simt(loop_kernel(), 32).simt_efficiency}


def loop_kernel():
    """Lane t runs (t % 7) + 1 iterations of a three-instruction body."""
    return [Let("i", lambda v: 0),
            While(lambda v: v["i"] < v["tid"] % 7 + 1,
                  [Let("a", lambda v: v["i"] * 2), Let("a", lambda v: v["a"] + 1),
                   Let("i", lambda v: v["i"] + 1)])]


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


def _sectors_wrong() -> dict:
    return {ORDER_MATTERS: _sectors_in_lane_order, NO_STRADDLE: _sectors_without_straddle}


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


# --- 02.5 (diagnose): a column read of a row-major matrix ---------------------------------------

_REWRITES = "3. Rewrites that avoid divergence"
COLUMNS = 1000          # row-major float32 matrix, 1000 columns (no power of two: no lucky alignment)

PAD_FOR_BANKS = Misconception(
    "padding-fixes-coalescing", "Padding taken to fix a strided global load: padding a row moves "
    "which shared-memory bank a column lands in (lesson 03), but in global memory the lanes are still "
    "a whole row apart, one sector each.", "02", _COALESCING,
    "Compute the 32 lanes' byte addresses with the padded row length and count their sectors.")
NARROWER_ELEMENTS = Misconception(
    "narrower-elements-fix-coalescing", "Narrower elements taken to fix a strided load: they shrink "
    "the bytes requested, not the sectors moved, while each lane still sits in a sector of its own.",
    "02", _COALESCING, "Count the sectors with 2-byte elements: how far apart are neighbouring lanes?")
BLOCK_SIZE_COALESCES = Misconception(
    "block-size-fixes-coalescing", "The block size taken to change one warp's access: it changes how "
    "many warps run, not which addresses the 32 lanes of one warp touch.", "02", _COALESCING,
    "Write down lane 0's and lane 1's addresses before and after the change.")


def column_read_addresses(rewrite: str = "as is", warp: int = 0) -> tuple[np.ndarray, int]:
    """(byte addresses, bytes per access) of one warp's load in exercise 02.5, as is or rewritten.

    As written: ``row = tid % 32; col = tid // 32; x = a[row * n + col]`` on a row-major
    float32 matrix with ``n = 1000`` columns. ``rewrite``: 'swap' (``row = tid // 32;
    col = tid % 32``), 'pad' (rows padded to 1024 columns), 'half' (float16 elements) or 'blocks'
    (256-thread blocks instead of 128: the same mapping of ``tid``).
    """
    rewrite = check_choice("rewrite", rewrite, ("as is",) + _COLUMN_REWRITES)
    warp = check_int("warp", warp, min_value=0, max_value=COLUMNS - 1)
    tid = warp * 32 + np.arange(32)
    n, size = COLUMNS, 4
    row, col = tid % 32, tid // 32
    if rewrite == "swap":
        row, col = tid // 32, tid % 32
    elif rewrite == "pad":
        n = 1024
    elif rewrite == "half":
        size = 2
    elif rewrite not in ("as is", "blocks"):
        raise ValueError(f"rewrite must be one of {_COLUMN_REWRITES} or 'as is', got {rewrite!r}")
    return (row * n + col) * size, size


_COLUMN_REWRITES = ("swap", "pad", "half", "blocks")


def _sectors_after(rewrite: str) -> int:
    addresses, size = column_read_addresses(rewrite)
    return coalescing(addresses, size).n_sectors


def _best_rewrite() -> str:
    sectors = {r: _sectors_after(r) for r in _COLUMN_REWRITES}
    best = min(sectors.values())
    winners = [r for r, n in sectors.items() if n == best]
    if len(winners) != 1:
        raise RuntimeError(f"02.5 must have one best rewrite, got {winners}")
    return winners[0]


def _rewrite_wrong() -> dict:
    return {PAD_FOR_BANKS: "pad", NARROWER_ELEMENTS: "half", BLOCK_SIZE_COALESCES: "blocks"}


# --- 02.6 (decide): does grouping rare long work by branch pay for its sort? --------------------

RARE_BRANCH_CHEAP = Misconception(
    "rare-branch-is-cheap", "A rare branch taken to cost its rate times its length, counted per "
    "thread: a warp with even one lane on the long path issues the whole long path, so a branch that "
    "1 thread in 100 takes stalls about one warp in four.", "02", _HOW_BAD,
    "Count issued instructions per warp, with and without the reorder, as run_simt does.")
EVERY_WARP_DIVERGES = Misconception(
    "every-warp-diverges", "Every warp taken to diverge: with a rare branch most warps are uniform "
    "and run the short path only, even before any reordering.", "02", _HOW_BAD,
    "Simulate the arrival order as given; do not assume each warp runs both paths.")
EFFICIENCY_NOT_COST = Misconception(
    "efficiency-not-instructions", "A SIMT efficiency where a cost in instructions per thread was "
    "asked: the break-even cost is a difference of issued instructions per warp.", "02", _REWRITES,
    "Subtract the sorted run's issued instructions per warp from the unsorted run's.")

PARTICLES = 4096
LONG_PATH, SHORT_PATH = 60, 10


def particle_kinds() -> np.ndarray:
    """The arrival order of exercise 02.6: True where a particle needs the long path (31 of 4096, about 1 in 130)."""
    return np.random.default_rng(2026).random(PARTICLES) < 0.01


def particle_kernel(long_path: int = LONG_PATH, short_path: int = SHORT_PATH) -> list:
    """One branch on the particle's kind: ``long_path`` instructions or ``short_path`` of them."""
    long_path = check_int("long_path", long_path, min_value=1, max_value=1000)
    short_path = check_int("short_path", short_path, min_value=1, max_value=1000)
    return [If(lambda v: v["kind"][v["tid"]],
               then=[Let("a", lambda v: v["tid"] + 1) for _ in range(long_path)],
               orelse=[Let("a", lambda v: v["tid"] + 2) for _ in range(short_path)])]


def _per_warp(kinds) -> float:
    result = run_simt(particle_kernel(), PARTICLES, inputs={"kind": kinds})
    return result.issued / result.n_warps


def _break_even() -> float:
    kinds = particle_kinds()
    return _per_warp(kinds) - _per_warp(np.sort(kinds))


def _break_even_wrong() -> dict:
    kinds = particle_kinds()
    unsorted = run_simt(particle_kernel(), PARTICLES, inputs={"kind": kinds})
    return {RARE_BRANCH_CHEAP: float(kinds.mean()) * (LONG_PATH - SHORT_PATH),
            EVERY_WARP_DIVERGES: float(LONG_PATH),
            EFFICIENCY_NOT_COST: unsorted.simt_efficiency}


EXERCISES = [
    ChoiceExercise(
        "02.1", expected=_layout_with_fewer_bytes, choices=("aos", "soa", "same"),
        wrong_answers=_layout_wrong, concepts=("coalescing",),
        form="a string: 'aos', 'soa' or 'same'",
        hints=("Count the bytes between lane 0's address and lane 31's in each layout.",
               "Memory moves whole 32-byte sectors; in AoS each lane's 4 bytes sit 16 bytes apart.",
               "coalescing(aos_addresses(16, 4)).bytes_moved against coalescing(soa_addresses(1)).bytes_moved.")),
    ValueExercise(
        "02.2", expected=_wave_divergence_share, rel_tol=1e-6, wrong_answers=_wave_divergence_wrong,
        concepts=("divergence",),
        form="a float between 0 and 1: the expected fraction of wavefronts that diverge, from the "
             "probabilities (not a simulated estimate)",
        hints=("A group is uniform when all its lanes branch, or none do.",
               "Use the MI300X's warp_size from the catalog as W.",
               "1 - rho**W - (1 - rho)**W.")),
    ValueExercise(
        "02.3", expected=_loop_efficiency, rel_tol=1e-9, wrong_answers=_loop_efficiency_wrong,
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
    ChoiceExercise(
        "02.5", expected=_best_rewrite, choices=_COLUMN_REWRITES, wrong_answers=_rewrite_wrong,
        concepts=("coalescing",),
        form="one of 'swap', 'pad', 'half' or 'blocks': the one change that makes the load coalesced",
        hints=("Profile first: column_read_addresses('as is') gives one warp's byte addresses and "
               "element size; coalescing() counts their sectors.",
               "How many bytes apart are lane 0 and lane 1 as written? What would make them 4 apart?",
               "Try each rewrite with column_read_addresses(rewrite) and keep the one that touches the "
               "fewest sectors.")),
    ValueExercise(
        "02.6", expected=_break_even, rel_tol=1e-9, wrong_answers=_break_even_wrong,
        concepts=("divergence", "simt-efficiency"),
        form="a float: the break-even cost of the reorder, in instructions per thread (one uniform "
             "instruction per thread costs each warp one issue)",
        hints=("Run particle_kernel() over the given order and over np.sort(kinds); compare issued / n_warps.",
               "Sorting puts the rare particles together, so only a few warps run the long path.",
               "The reorder pays while its own cost per thread is below the issues per warp it saves.")),
]
