"""Checks for lesson 01, throughput and latency (answers in solutions/01_throughput_latency.py).

Every expected value is computed from ``course_lib`` when a check runs; none is typed here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np

from course_lib.exercises.feedback import Misconception
from course_lib.exercises.types import ChoiceExercise, FunctionExercise, ValueExercise
from course_lib.exercises.variants import Variants
from course_lib.exercises.decision import OptimumExercise
from course_lib.exercises.steps import _replayed
from course_lib.exercises.misconceptions import other_accelerator, _other_accelerators, shared, _with_generated
from course_lib.hardware import get_accelerator, list_accelerators
from course_lib.latency import (ASSUMED_DRAM_LATENCY_S, H100_L1_SHARED_BYTES_PER_SM, littles_law, occupancy,
                                register_pressure, simulate_latency_hiding)

__all__ = ["EXERCISES", "SPILL_CAPS"]


_LITTLE = "2. Little's law: how much must be in flight"
_SIM = "3. A latency-hiding simulator"
_OCC = "4. Occupancy: how many warps actually fit"

#: Exercise 01.2's accelerators: the first is the course's default; a learner id picks one.
_IN_FLIGHT_VARIANTS = Variants(
    options=tuple({"accelerator": name} for name in
                  ("H200", "H100 SXM", "A100 SXM 80GB", "B200", "L4", "RTX 4090", "H100 PCIe")),
    statement="the {accelerator}: kilobytes in flight per SM at ASSUMED_DRAM_LATENCY_S")

SMEM_IGNORED = Misconception(
    "occupancy-smem-ignored", "Counting registers and warps but not shared memory: a block's "
    "shared memory, plus the reserved 1 KiB, also limits how many blocks an SM holds.",
    "01", _OCC, "Work out the blocks that the SM's shared memory alone allows, and compare.")
PER_GPU = Misconception(
    "per-gpu-not-per-sm", "The bytes in flight of the whole GPU where one SM's share was asked.",
    "01", _LITTLE, "Little's law gives the chip's total; every SM keeps its own share in flight.")
BYTES_NOT_KB = Misconception(
    "bytes-not-kb", "Bytes where kilobytes were asked.",
    "01", _LITTLE, "The answer is in kB: divide bytes by 1000.")
INDEX_NOT_COUNT = Misconception(
    "index-not-count", "The position in the sweep (counted from 0) where the number of warps "
    "(counted from 1) was asked.", "01", _SIM,
    "Read the answer from sweep.n_warps at that position, not the position itself.")
FULL_NOT_90 = Misconception(
    "more-warps-always-better", "The warps for full utilisation where 90 % was asked: past the knee "
    "more warps add little, and higher occupancy is not always faster.", "01", "Misconceptions",
    "Stop at the first entry that reaches the target, 0.9, not 1.")
FOUR_SCHEDULERS = Misconception(
    "four-schedulers-not-one", "The H100's four schedulers simulated where the task has one: each "
    "scheduler needs its own warps, and the task's SM issues from one.", "01", _SIM,
    "Run the simulator as the task states it, with its default of one scheduler.")
FORMULA_ROUNDED_DOWN = Misconception(
    "bound-rounded-down", "N C / (C + L) >= 0.9 solved, then rounded down: the smallest whole "
    "number that reaches a target is rounded up.", "01", _SIM,
    "Rounding down gives a count that falls just short of 0.9; check your integer in the sweep.")
NO_ALLOC_ROUNDING = Misconception(
    "register-alloc-unit-ignored", "Registers given to a warp one at a time: they are allocated "
    "in units of register_alloc_unit, so 32 x r is rounded up.", "01", _OCC,
    "Round each warp's registers up to a multiple of acc.register_alloc_unit before dividing.")
NO_SUBPARTITIONS = Misconception(
    "register-subpartitions-ignored", "The register file treated as one pool: it is split among "
    "warp_alloc_granularity sub-partitions, and a warp lives in one of them.", "01", _OCC,
    "Divide each sub-partition's registers by a warp's, round down, then multiply by the "
    "number of sub-partitions.")
MOST_WARPS_CAP = Misconception(
    "spills-are-free", "The cap that gives the most warps taken as best: the registers it spills "
    "must live somewhere, and past what L1 holds they go out to DRAM.", "01", _OCC,
    "For each cap, compare the spills' footprint per SM with the L1 left beside the blocks' "
    "shared memory, before counting warps.")
NO_CAP = Misconception(
    "register-cap-never-helps", "No cap, to avoid spilling at all: a cap buys resident warps, and "
    "spills that stay in L1 cost little.", "01", _OCC,
    "Look at what each cap buys in resident warps, and whether its spills fit in L1.")
L1_WITHOUT_SMEM = Misconception(
    "l1-shared-memory-ignored", "The whole 256 KiB counted as L1 for the spills: L1 and shared "
    "memory share it, and the resident blocks' shared memory takes its part first.", "01", _OCC,
    "Subtract blocks_per_sm x shared_mem_allocated_per_block from the 256 KiB before comparing.")


def _a100_limiter() -> str:
    """128-thread blocks, 40 registers per thread, 40 KiB of shared memory per block, on an A100."""
    return occupancy(128, 40, 40 * 1024, "A100").limiter


def _kb_in_flight_per_sm(accelerator) -> float:
    """Bytes in flight per SM the accelerator needs at the lessons' assumed latency, in kB (1e3 bytes)."""
    return littles_law(accelerator).bytes_in_flight_per_sm / 1e3


@functools.lru_cache(maxsize=None)      # a simulated sweep
def _warps_for_90_percent() -> int:
    """Smallest N whose simulated utilisation reaches 0.9 with C = 24, L = 700, one scheduler."""
    sweep = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    return int(sweep.n_warps[np.argmax(sweep.utilisation >= 0.9 - 1e-12)])


THREADS_ONLY = Misconception(
    "occupancy-threads-only", "The threads counted alone: 128-thread blocks fill the SM's warp slots "
    "only if the registers and the shared memory let that many blocks in, and here they do not.", "01",
    _OCC, "Work out the blocks each resource allows (warps, registers, shared memory): the smallest wins.")
LARGEST_LIMIT = Misconception(
    "occupancy-largest-limit", "The most generous limit taken for the binding one: an SM holds as many "
    "blocks as the strictest of its limits allows.", "01", _OCC,
    "Of the blocks per SM each resource allows, which is the smallest?")


REGISTER_FILE_AS_BYTES = Misconception(
    "register-count-read-as-bytes", "The register file's 64 Ki registers taken as 64 KiB, a quarter of "
    "the registers: each register is 4 bytes, so the A100's 256 KiB file holds 65,536 of them.", "01", _OCC,
    "Read get_accelerator('A100').registers_per_sm, a count of 32-bit registers, and divide it among the "
    "four sub-partitions.")


def _a100_limiter_wrong() -> dict:
    a100 = get_accelerator("A100")
    limits = occupancy(128, 40, 40 * 1024, a100).block_limits
    quarter_file = dataclasses.replace(a100, register_file_bytes_per_sm=a100.registers_per_sm)
    return {SMEM_IGNORED: occupancy(128, 40, 0, "A100").limiter,
            REGISTER_FILE_AS_BYTES: occupancy(128, 40, 40 * 1024, quarter_file).limiter,
            THREADS_ONLY: occupancy(128, 1, 0, "A100").limiter,       # no registers, no shared memory
            LARGEST_LIMIT: max(limits, key=limits.get),
            FULL_OCCUPANCY_LIMIT: "registers" if 40 * a100.max_threads_per_sm > a100.registers_per_sm else "warps",
            SMALL_BLOCKS_HIT_CAP: occupancy(a100.warp_size, 1, 0, a100).limiter}


SMALL_BLOCKS_HIT_CAP = Misconception(
    "small-blocks-hit-the-block-cap", "Small blocks taken to hit the SM's cap on resident blocks: that cap "
    "binds for one-warp blocks, but a 128-thread block is 4 warps, and this kernel's shared memory stops "
    "its blocks long before either the cap or the warp slots.", "01", _OCC,
    "Work out the blocks each resource allows for this kernel, the block cap among them; the smallest binds.")


FULL_OCCUPANCY_LIMIT = Misconception(
    "limit-for-full-occupancy", "The first resource that stops full occupancy taken for the one that "
    "binds: 40 registers for every thread slot of the SM would overflow the register file, but this kernel's "
    "blocks run out of shared memory before registers.", "01", _OCC,
    "Count the blocks each resource allows for this kernel's blocks; the smallest count binds.")


def _kb_other_chips(accelerator) -> dict:
    """Every other catalog chip's kB per SM: a learner who read another row of the catalog."""
    return _other_accelerators(_kb_in_flight_per_sm, accelerator, "01", _LITTLE)


def _kb_wrong(accelerator) -> dict:
    law = littles_law(accelerator)
    acc = get_accelerator(accelerator)
    wrong = {shared("kib-for-kb", "01", _LITTLE): law.bytes_in_flight_per_sm / 1024,
             BYTES_NOT_KB: law.bytes_in_flight_per_sm,
             PER_GPU: law.bytes_in_flight / 1e3,
             shared("bits-for-bytes", "01", _LITTLE): 8 * law.bytes_in_flight_per_sm / 1e3}
    wrong[shared("other-accelerator", "01", _LITTLE)] = \
        littles_law(other_accelerator(accelerator)).bytes_in_flight_per_sm / 1e3
    wrong[PER_SCHEDULER] = law.bytes_in_flight_per_sm / acc.warp_alloc_granularity / 1e3
    wrong[PER_WARP_SLOT] = law.bytes_in_flight_per_sm / acc.max_warps_per_sm / 1e3
    wrong[WARPS_NOT_BYTES] = law.warps_needed_per_sm
    for latency_s in LESSON_WHAT_IF_LATENCIES_S:   # section 2's what-if latencies, kept from its table
        wrong[_what_if_latency(latency_s)] = littles_law(accelerator, latency_s=latency_s).bytes_in_flight_per_sm / 1e3
    if acc.sm_count == 132:                       # the H100 and H200: the full die's 144 SMs
        wrong[shared("sms-144", "01", "1. Two designs: latency machines and throughput machines")] = \
            law.bytes_in_flight / 144 / 1e3
    return wrong


#: Section 2's table of what-if latencies (``for lat in (400e-9, 800e-9)`` in the lesson; the
#: course's tests keep the two equal): a learner who reuses that cell keeps one of them.
LESSON_WHAT_IF_LATENCIES_S = (400e-9, 800e-9)

PER_SCHEDULER = Misconception(
    "per-scheduler-not-per-sm", "One scheduler's share (the SM's bytes over its "
    "warp_alloc_granularity sub-partitions) where the whole SM's bytes in flight were asked.", "01", _LITTLE,
    "Little's law gives the chip's total; divide it by the SMs only.")
PER_WARP_SLOT = Misconception(
    "per-warp-not-per-sm", "One warp's share (the SM's bytes over its max_warps_per_sm warps) where the "
    "whole SM's bytes in flight were asked.", "01", _LITTLE,
    "Little's law gives the chip's total; divide it by the SMs only.")
WARPS_NOT_BYTES = Misconception(
    "warps-needed-not-bytes", "The warps needed per SM (warps_needed_per_sm) where the bytes in flight "
    "per SM were asked: that count follows from the bytes, for one load size.", "01", _LITTLE,
    "Read bytes_in_flight_per_sm, and give it in kB.")


def _what_if_latency(latency_s) -> Misconception:
    ns = round(latency_s * 1e9)
    return Misconception(
        f"what-if-latency-{ns}-ns", f"Section 2's what-if latency of {ns} ns where the task uses the lessons' "
        "assumed DRAM latency, ASSUMED_DRAM_LATENCY_S: the bytes in flight grow in proportion to the "
        "latency.", "01", _LITTLE, "Pass latency_s=ASSUMED_DRAM_LATENCY_S (littles_law's default).")


#: Section 3's jittered sweep (``jitter=0.5`` drawn from ``np.random.default_rng(2024)`` in the lesson;
#: the course's tests keep them equal): a learner who reuses that cell sweeps with jitter.
LESSON_JITTER, LESSON_JITTER_SEED = 0.5, 2024

JITTERED_SWEEP = Misconception(
    "jittered-sweep", "Section 3's jittered simulation swept where the task's warps compute and wait "
    "exactly 24 and 700 cycles: random jitter lets a few warps bunch up and shifts where the curve "
    "crosses 0.9.", "01", _SIM,
    "Run simulate_latency_hiding(np.arange(1, 65), 24, 700) without jitter.")
LATENCY_OVER_COMPUTE = Misconception(
    "latency-over-compute-warps", "L / C warps, the rule of thumb that enough warps cover one wait, "
    "rounded up: that is (nearly) where one scheduler is always busy; the task asks for the first count "
    "that reaches 0.9, N C / (C + L) >= 0.9.", "01", _SIM,
    "Read the sweep: the first entry whose utilisation reaches 0.9.")


@functools.lru_cache(maxsize=None)     # simulations and sweeps: once per session (callers copy the dict)
def _warps_for_90_wrong() -> dict:
    sweep = simulate_latency_hiding(np.arange(1, 65), 24, 700)
    reaches = sweep.utilisation >= 0.9 - 1e-12
    # Most likely first (a value two mistakes share is named in this order, with the first one's
    # hint): the formula's bound rounded down, then the sweep's index taken for the count.
    defaults = inspect.signature(simulate_latency_hiding).parameters
    default_sweep = simulate_latency_hiding(np.arange(1, 65), defaults["compute_cycles"].default,
                                            defaults["latency_cycles"].default)
    return {FORMULA_ROUNDED_DOWN: int(np.floor(0.9 * (24 + 700) / 24)),
            LATENCY_AS_PERIOD: int(np.ceil(0.9 * 700 / 24)),
            INDEX_NOT_COUNT: int(np.argmax(reaches)),
            SIM_DEFAULT_CYCLES: int(default_sweep.n_warps[np.argmax(default_sweep.utilisation >= 0.9 - 1e-12)]),
            FULL_NOT_90: int(sweep.n_warps[np.argmax(sweep.utilisation >= 1 - 1e-12)]),
            KNEE_TRUNCATED: int((24 + 700) // 24),
            LATENCY_OVER_COMPUTE: int(np.ceil(700 / 24)),
            JITTERED_SWEEP: int(np.argmax(simulate_latency_hiding(
                np.arange(1, 65), 24, 700, jitter=LESSON_JITTER, rng=np.random.default_rng(LESSON_JITTER_SEED))
                .utilisation >= 0.9 - 1e-12)) + 1,
            FOUR_SCHEDULERS: int(np.argmax(simulate_latency_hiding(np.arange(1, 65), 24, 700, schedulers=4)
                                           .utilisation >= 0.9 - 1e-12)) + 1,
            COMPUTE_LATENCY_SWAPPED: int(np.argmax(simulate_latency_hiding(np.arange(1, 65), 700, 24)
                                                   .utilisation >= 0.9 - 1e-12)) + 1}


KNEE_TRUNCATED = Misconception(
    "knee-truncated", "(C + L) / C, the knee where one scheduler is always busy, rounded down: that "
    "is where full utilisation begins, and the task asks for the first count that reaches 0.9.", "01", _SIM,
    "Solve N C / (C + L) >= 0.9 for N, or read the sweep: the first entry that reaches 0.9.")
LATENCY_AS_PERIOD = Misconception(
    "latency-as-period", "N C / L >= 0.9 solved: a warp's period is its compute and its wait together, "
    "C + L cycles, not the wait alone.", "01", _SIM,
    "One warp is busy C cycles out of every C + L: divide by the whole period.")
SIM_DEFAULT_CYCLES = Misconception(
    "simulator-default-cycles", "The simulator run at its default compute and latency cycles: pass the "
    "task's own cycles, or the sweep answers another kernel's question.", "01", _SIM,
    "Pass the task's compute cycles and latency cycles to simulate_latency_hiding.")
COMPUTE_LATENCY_SWAPPED = Misconception(
    "compute-and-latency-swapped", "The compute and the wait passed in each other's place: the "
    "simulator takes the compute cycles first, then the latency, and with 700 cycles of work between "
    "waits of 24 one warp keeps the scheduler busy.", "01", _SIM,
    "Read the simulator's signature: which argument is the compute, which the wait?")


def _warps_by_registers_with(registers_per_thread, accelerator, *, file_scale=1, round_alloc=True,
                             subpartitions=True):
    """The register limit on warps, with one of the known mistakes switched on."""
    acc = get_accelerator(accelerator)
    per_warp = registers_per_thread * acc.warp_size
    if round_alloc:
        per_warp = -(-per_warp // acc.register_alloc_unit) * acc.register_alloc_unit
    registers = acc.registers_per_sm * file_scale
    if not subpartitions:
        return registers // per_warp
    parts = acc.warp_alloc_granularity
    return (registers // parts // per_warp) * parts


ALLOC_ROUNDED_DOWN = Misconception(
    "register-alloc-rounded-down", "A warp's registers rounded down to the allocation unit: a warp "
    "that needs part of a unit still takes the whole unit, so 32 x r is rounded up, never down.", "01", _OCC,
    "Round 32 x r up to a multiple of acc.register_alloc_unit: -(-x // unit) * unit.")
PARTIAL_WARP_COUNTED = Misconception(
    "partial-warp-counted", "The warps per sub-partition rounded up: a warp whose registers do not all "
    "fit cannot be resident, so the division is rounded down.", "01", _OCC,
    "Whole warps only: registers per sub-partition // registers per warp.")
FRACTIONAL_WARPS = Misconception(
    "fractional-warps", "The register file divided by a warp's registers with no rounding: warps are "
    "whole, and a fraction of a warp's registers holds no warp.", "01", _OCC,
    "Use integer division (//) per sub-partition, and return an int.")
ONE_THREADS_REGISTERS = Misconception(
    "thread-registers-for-warp", "One thread's registers taken for a warp's: a warp of warp_size "
    "threads holds warp_size x r registers.", "01", _OCC,
    "A warp's registers are acc.warp_size x registers_per_thread, before the rounding.")
WARP_LIMIT_APPLIED = Misconception(
    "warp-slot-limit-applied", "The SM's warp slots (max_warps_per_sm) applied where the register "
    "file's limit alone was asked: with few registers per thread the register file allows more "
    "warps than the SM has slots for.", "01", _OCC,
    "Return what the registers alone allow; occupancy takes the minimum with the other limits later.")
OCCUPANCY_WARPS_FOR_LIMIT = Misconception(
    "occupancy-warps-for-register-limit", "occupancy(...).warps_per_sm, which applies every limit "
    "(warp slots, the blocks per SM), where the register limit alone was asked.", "01", _OCC,
    "Read the register limit itself: occupancy(32, r, 0, acc).block_limits['registers'] with one-warp "
    "blocks, or compute it from the register file.")


def _register_wrong() -> dict:
    def alloc_floor(r, a):
        acc = get_accelerator(a)
        per_warp = max(r * acc.warp_size // acc.register_alloc_unit * acc.register_alloc_unit,
                       acc.register_alloc_unit)
        parts = acc.warp_alloc_granularity
        return (acc.registers_per_sm // parts // per_warp) * parts

    def per_part(r, a, divide):
        acc = get_accelerator(a)
        per_warp = -(-r * acc.warp_size // acc.register_alloc_unit) * acc.register_alloc_unit
        parts = acc.warp_alloc_granularity
        return divide(acc.registers_per_sm / parts, per_warp) * parts

    def one_thread(r, a):
        acc = get_accelerator(a)
        per = -(-r // acc.register_alloc_unit) * acc.register_alloc_unit
        parts = acc.warp_alloc_granularity
        return (acc.registers_per_sm // parts // per) * parts

    def per_thread_unit(r, a):
        acc = get_accelerator(a)
        per_warp = -(-r // acc.register_alloc_unit) * acc.register_alloc_unit * acc.warp_size
        parts = acc.warp_alloc_granularity
        return (acc.registers_per_sm // parts // per_warp) * parts

    def alloc_nearest(r, a):
        acc = get_accelerator(a)
        per_warp = max(1, round(r * acc.warp_size / acc.register_alloc_unit)) * acc.register_alloc_unit
        parts = acc.warp_alloc_granularity
        return (acc.registers_per_sm // parts // per_warp) * parts

    return {shared("registers-256k", "01", "Misconceptions"):
                lambda r, a: _warps_by_registers_with(r, a, file_scale=4),
            NO_ALLOC_ROUNDING: lambda r, a: _warps_by_registers_with(r, a, round_alloc=False),
            NO_SUBPARTITIONS: lambda r, a: _warps_by_registers_with(r, a, subpartitions=False),
            ALLOC_ROUNDED_DOWN: alloc_floor,
            PARTIAL_WARP_COUNTED: lambda r, a: per_part(r, a, lambda x, y: int(np.ceil(x / y))),
            FRACTIONAL_WARPS: lambda r, a: per_part(r, a, lambda x, y: x / y),
            ONE_THREADS_REGISTERS: one_thread,
            WARP_LIMIT_APPLIED: lambda r, a: min(_warps_by_registers(r, a), get_accelerator(a).max_warps_per_sm),
            OCCUPANCY_WARPS_FOR_LIMIT: lambda r, a: occupancy(32, r, 0, a).warps_per_sm,
            ONE_SUBPARTITION: lambda r, a: _warps_by_registers(r, a) // get_accelerator(a).warp_alloc_granularity,
            ALLOC_UNIT_PER_THREAD: per_thread_unit,
            ALLOC_ROUNDED_TO_NEAREST: alloc_nearest}


ALLOC_ROUNDED_TO_NEAREST = Misconception(
    "register-alloc-rounded-to-nearest", "A warp's registers rounded to the nearest allocation unit: a warp "
    "that needs part of a unit takes the whole unit, so 32 x r is always rounded up.", "01", _OCC,
    "Round up: -(-x // unit) * unit, or math.ceil(x / unit) * unit.")


ONE_SUBPARTITION = Misconception(
    "one-sub-partition-only", "The warps of one sub-partition returned: the register file has "
    "warp_alloc_granularity of them, each holding its own whole warps, so the SM holds that many times "
    "more.", "01", _OCC, "Multiply the whole warps per sub-partition by acc.warp_alloc_granularity.")
ALLOC_UNIT_PER_THREAD = Misconception(
    "alloc-unit-per-thread", "Each thread's registers rounded up to register_alloc_unit: the unit is a "
    "warp's allocation, so it is 32 x r that is rounded up, not r.", "01", _OCC,
    "Round acc.warp_size x registers_per_thread up to a multiple of acc.register_alloc_unit.")


def _warps_by_registers(registers_per_thread, accelerator):
    """Reference: with one-warp blocks, blocks allowed by registers = warps allowed by registers."""
    return occupancy(32, registers_per_thread, 0, accelerator).block_limits["registers"]


def _register_cases(rng) -> list:
    nvidia = [n for n in list_accelerators("gpu") if get_accelerator(n).register_alloc_unit]
    cases = [((255, "H100 SXM"), {}), ((33, "A100 SXM 80GB"), {})]
    for _ in range(10):
        regs = int(rng.integers(1, 256))
        cases.append(((regs, nvidia[int(rng.integers(len(nvidia)))]), {}))
    return cases


#: Exercise 01.5's kernel (task data): 150 registers per thread, 128-thread blocks, 12 KiB of
#: shared memory per block, on the H100 SXM; the caps the compiler may be given.
_SPILL_KERNEL = dict(threads=128, registers=150, smem=12 * 1024)
SPILL_CAPS = (255, 128, 96, 80, 64, 48)


def _cap_rows(l1_bytes=H100_L1_SHARED_BYTES_PER_SM, count_smem=True, footprint=None, smem_blocks=None):
    """(cap, resident warps, whether the spills fit in L1) per cap; ``footprint(row, occupancy)``
    replaces the spills' bytes per SM and ``smem_blocks(occupancy)`` the blocks whose shared memory
    is taken from the 256 KiB (known mistakes)."""
    k = _SPILL_KERNEL
    rows = []
    for r in register_pressure(k["threads"], k["registers"], SPILL_CAPS, k["smem"], "H100 SXM"):
        occ = occupancy(k["threads"], r.registers_used, k["smem"], "H100 SXM")
        blocks = occ.blocks_per_sm if smem_blocks is None else smem_blocks(occ)
        smem = blocks * occ.shared_mem_allocated_per_block if count_smem else 0
        spilled = r.spill_footprint_per_sm if footprint is None else footprint(r, occ)
        rows.append((r.cap, r.warps_per_sm, spilled <= l1_bytes - smem))
    return rows


def _best_cap(rows) -> int:
    fits = [(warps, cap) for cap, warps, ok in rows if ok]
    return max(fits)[1]                      # most warps; on a tie, the larger cap (fewer spills)


def _spill_cap() -> int:
    return _best_cap(_cap_rows())


NO_SPILL_CHECK = Misconception(
    "largest-cap-below-need", "The largest cap below the kernel's own register count, with no check "
    "of where its spills go: a cap that spills past what L1 holds sends the reloads to DRAM.", "01", _OCC,
    "For each cap, compare the spills' footprint per SM with the L1 the resident blocks leave.")


SPILL_TRAFFIC_AS_FOOTPRINT = Misconception(
    "spill-traffic-as-footprint", "The spill traffic of one pass (spill_bytes_per_thread_per_pass, a "
    "store and a reload of each spilled register) taken for the bytes the spills hold: each spilled "
    "register occupies its 4 bytes of local memory once, so the footprint is counted twice.", "01", _OCC,
    "Use spill_footprint_per_sm: spilled registers x 4 bytes x resident threads, each register once.")
SPILL_REGISTERS_NOT_BYTES = Misconception(
    "spilled-registers-not-bytes", "The spilled registers counted as bytes: each spilled register is a "
    "32-bit word, 4 bytes of local memory, so the spills hold four times the count.", "01", _OCC,
    "Multiply the spilled registers per thread by 4 bytes and by the resident threads.")
SPILL_PER_BLOCK = Misconception(
    "spill-footprint-per-block", "One block's spills compared with the SM's L1: every resident block "
    "spills, so the footprint per SM is the spills of all its resident threads.", "01", _OCC,
    "Multiply the spills per thread by the threads resident on the SM (warps_per_sm x 32), not by "
    "one block's threads.")
SMEM_ONE_BLOCK = Misconception(
    "shared-memory-of-one-block", "One block's shared memory taken from the 256 KiB: each resident "
    "block holds its own 12 KiB (plus the reserved 1 KiB), so the L1 left for the spills shrinks with "
    "every block the cap lets in.", "01", _OCC,
    "Subtract blocks_per_sm x shared_mem_allocated_per_block, with the blocks_per_sm of that cap.")
SMEM_OF_UNCAPPED_BLOCKS = Misconception(
    "shared-memory-at-uncapped-occupancy", "The shared memory of the blocks resident without a cap taken "
    "for every cap: a tighter cap lets more blocks in, and each takes its shared memory from the 256 KiB.",
    "01", _OCC, "Recount blocks_per_sm with each cap's registers before subtracting their shared memory.")


SPILL_PER_WARP = Misconception(
    "spill-footprint-per-warp", "One warp's spills (32 threads) compared with the SM's L1: every resident "
    "warp spills its own registers, so the footprint per SM is the spills of all resident threads.", "01", _OCC,
    "Multiply the spills per thread by the threads resident on the SM: warps_per_sm x 32.")
SPILLS_OF_ALL_SLOTS = Misconception(
    "spills-of-every-thread-slot", "The spills counted for every thread slot of the SM (max_threads_per_sm) "
    "where only the resident threads spill: a tighter cap lets more threads in, but rarely all 2048.", "01", _OCC,
    "Multiply the spills per thread by the threads that cap lets in: warps_per_sm x 32.")


def _spill_cap_wrong() -> dict:
    right = _spill_cap()
    uncapped = occupancy(_SPILL_KERNEL["threads"], _SPILL_KERNEL["registers"], _SPILL_KERNEL["smem"],
                         "H100 SXM").blocks_per_sm
    # The computed mistakes first: a value that several give is named in this order (the spill
    # traffic of 26e's round before the largest cap below the need, which the same cap gives).
    wrong = {SPILL_TRAFFIC_AS_FOOTPRINT: _best_cap(_cap_rows(
                 footprint=lambda r, occ: r.spill_bytes_per_thread_per_pass * r.warps_per_sm * 32)),
             NO_SPILL_CHECK: max(c for c in SPILL_CAPS if c < _SPILL_KERNEL["registers"]),
             MOST_WARPS_CAP: max((w, c) for c, w, _ in _cap_rows())[1],
             NO_CAP: SPILL_CAPS[0],
             L1_WITHOUT_SMEM: _best_cap(_cap_rows(count_smem=False)),
             SPILL_REGISTERS_NOT_BYTES: _best_cap(_cap_rows(
                 footprint=lambda r, occ: r.spill_footprint_per_sm // 4)),
             SPILL_PER_BLOCK: _best_cap(_cap_rows(
                 footprint=lambda r, occ: r.spilled_per_thread * 4 * occ.threads_per_block)),
             SMEM_ONE_BLOCK: _best_cap(_cap_rows(smem_blocks=lambda occ: 1)),
             SMEM_OF_UNCAPPED_BLOCKS: _best_cap(_cap_rows(smem_blocks=lambda occ: uncapped)),
             SPILL_PER_WARP: _best_cap(_cap_rows(footprint=lambda r, occ: r.spilled_per_thread * 4 * 32)),
             SPILLS_OF_ALL_SLOTS: _best_cap(_cap_rows(
                 footprint=lambda r, occ: r.spilled_per_thread * 4 * get_accelerator("H100 SXM").max_threads_per_sm))}
    out, per_value = {}, {}
    for k, v in wrong.items():              # at most three names for one cap, the likelier first
        if v != right and per_value.get(v, 0) < 3:
            out[k] = v
            per_value[v] = per_value.get(v, 0) + 1
    return out
# --- 01.6 (design): the register budget that still hides the latency ---------------------------

#: 01.6's kernel (task data): each warp computes C cycles, then waits L cycles for a load;
#: 128-thread blocks with 12 KiB of shared memory each, on an H100 SXM (four schedulers per SM,
#: lesson 01 section 3).
BUDGET_C, BUDGET_L, BUDGET_THREADS, BUDGET_SMEM = 60, 500, 128, 12 * 1024
BUDGET_TARGET, BUDGET_SCHEDULERS = 0.9, 4

ONE_SCHEDULER = Misconception(
    "one-scheduler-per-sm", "The warps one scheduler needs taken for the whole SM: an H100 SM has "
    "four schedulers, and each needs its own warps to switch between.", "01", _SIM,
    "Section 3 ends with the H100's four schedulers: run the simulator with all of them.")
PLAIN_REGISTER_DIVISION = Misconception(
    "register-budget-plain-division", "The register budget from a plain division of the register "
    "file by the warps needed: warps come in whole blocks, and each warp's registers in allocation "
    "units from one sub-partition.", "01", _OCC,
    "Put your register count into section 4's occupancy model: how many warps does it really let in?")
BLOCKS_ROUNDED_DOWN = Misconception(
    "warps-rounded-down-to-blocks", "The warps needed rounded down to whole blocks (32 warps, 8 "
    "blocks): the SM then falls just short of the target; a fraction of a block is a whole block.",
    "01", _OCC, "Check the utilisation the simulator gives at the warps your register count lets in.")


@functools.lru_cache(maxsize=None)      # a simulated sweep: each check and test asks again
def _budget_sweep(schedulers=BUDGET_SCHEDULERS):
    return simulate_latency_hiding(np.arange(1, 65), BUDGET_C, BUDGET_L, schedulers=schedulers)


def _budget_utilisation(warps, schedulers=BUDGET_SCHEDULERS) -> float:
    """Simulated utilisation of the SM with ``warps`` resident warps (0 warps: nothing runs)."""
    if warps < 1:
        return 0.0
    return float(_budget_sweep(schedulers).utilisation[warps - 1])


@functools.lru_cache(maxsize=None)
def _budget_warps(registers) -> int:
    return occupancy(BUDGET_THREADS, registers, BUDGET_SMEM, "H100 SXM").warps_per_sm


def _warps_needed(schedulers=BUDGET_SCHEDULERS, target=BUDGET_TARGET) -> int:
    sweep = _budget_sweep(schedulers)
    reaches = sweep.utilisation >= target - 1e-12
    if not reaches.any():
        raise RuntimeError("01.6: the target is out of reach of 64 warps")
    return int(sweep.n_warps[np.argmax(reaches)])


def _budget_feasible(registers) -> str | None:
    """None when ``registers`` per thread keep the SM at the target; else why not, in numbers."""
    limit = get_accelerator("H100 SXM").max_registers_per_thread
    if not 1 <= registers <= limit:
        return f"a thread may use 1 to {limit} registers, not {registers}"
    warps = _budget_warps(registers)
    busy = _budget_utilisation(warps)
    if busy < BUDGET_TARGET - 1e-12:
        return (f"{registers} registers per thread let {warps} warps per SM in "
                f"({warps // (BUDGET_THREADS // 32)} blocks), whose utilisation is {busy:.3f}, under "
                f"the {BUDGET_TARGET} target")
    return None


@functools.lru_cache(maxsize=None)      # at most 255 occupancy calls per question
def _largest_registers(warps, file_scale=1) -> int:
    """The most registers per thread whose occupancy keeps ``warps`` warps per SM resident."""
    acc = get_accelerator("H100 SXM")
    for r in range(acc.max_registers_per_thread, 0, -1):
        occ = occupancy(BUDGET_THREADS, r, BUDGET_SMEM, "H100 SXM")
        if file_scale == 1:
            resident = occ.warps_per_sm
        else:                                         # the register limit with a larger file
            by_regs = _warps_by_registers_with(r, "H100 SXM", file_scale=file_scale) // occ.warps_per_block
            blocks = min(by_regs, *(v for k, v in occ.block_limits.items() if k != "registers"))
            resident = blocks * occ.warps_per_block
        if resident >= warps:
            return r
    raise RuntimeError("01.6: no register count keeps enough warps")


def _register_budget() -> int:
    return _largest_registers(_warps_needed())


WARPS_NOT_REGISTERS = Misconception(
    "warps-not-registers", "The warps the SM needs where the registers per thread were asked: that "
    "count is the first step; the answer is the register count that still lets them in.", "01", _OCC,
    "Put the warps you found into section 4's occupancy model: which register counts let that many in?")


ALL_WARP_SLOTS = Misconception(
    "all-warp-slots-needed", "Every warp slot of the SM taken as needed (full occupancy): the target is "
    "a utilisation of 0.9, which far fewer warps reach, and each warp fewer leaves more registers.", "01", _OCC,
    "Find the fewest warps that reach 0.9 with section 3's simulator first.")


def _warps_reaching(compute_cycles, latency_cycles) -> int:
    """Fewest warps whose simulated utilisation (the H100's four schedulers) reaches the target."""
    sweep = simulate_latency_hiding(np.arange(1, 65), compute_cycles, latency_cycles, schedulers=BUDGET_SCHEDULERS)
    return int(sweep.n_warps[np.argmax(sweep.utilisation >= BUDGET_TARGET - 1e-12)])


def _register_budget_wrong() -> dict:
    defaults = inspect.signature(simulate_latency_hiding).parameters
    need = _warps_needed()
    per_block = BUDGET_THREADS // 32
    wrong = {WARPS_NOT_REGISTERS: need,
             ONE_SCHEDULER: _largest_registers(_warps_needed(schedulers=1)),
             FULL_NOT_90: _largest_registers(_warps_needed(target=1.0)),
             BLOCKS_ROUNDED_DOWN: _largest_registers(need // per_block * per_block),
             PLAIN_REGISTER_DIVISION: get_accelerator("H100 SXM").registers_per_sm // (need * 32),
             shared("registers-256k", "01", "Misconceptions"): _largest_registers(need, file_scale=4),
             SIM_DEFAULT_CYCLES: _largest_registers(_warps_reaching(defaults["compute_cycles"].default,
                                                                    defaults["latency_cycles"].default)),
             COMPUTE_LATENCY_SWAPPED: _largest_registers(_warps_reaching(BUDGET_L, BUDGET_C)),
             ALL_WARP_SLOTS: _largest_registers(get_accelerator("H100 SXM").max_warps_per_sm)}
    right = _register_budget()
    return {k: v for k, v in wrong.items() if v != right}


# --- 01.7 (diagnose, then design): loads in flight per thread, when each load holds a register ----

#: 01.7's streaming kernel (task data): 256-thread blocks, 72 registers per thread before its
#: loads, no shared memory, 4-byte loads, on an H200; each load in flight holds one more register
#: (its destination) until the data arrives, so k loads in flight use 72 + k registers per thread.
#: A profile with k = 1 measures STREAM_PROFILED_BANDWIDTH on the whole chip: the latency under load.
STREAM_ACCELERATOR, STREAM_THREADS, STREAM_BASE_REGISTERS, STREAM_LOAD_BYTES = "H200", 256, 72, 4
STREAM_PROFILED_BANDWIDTH = 0.5e12      # bytes/s with one load in flight per thread

OCCUPANCY_IGNORED = Misconception(
    "max-warps-not-resident", "The SM's maximum warps where the warps this kernel keeps resident "
    "were asked: its registers let fewer warps in, and each must carry more loads.", "01", _OCC,
    "Work out how many warps this kernel's registers let in before you share out the bytes.")
REGISTER_COST_IGNORED = Misconception(
    "loads-in-flight-cost-no-registers", "The warps resident at k = 1 kept while k grows: each load "
    "in flight holds a register, so more loads in flight can mean fewer resident warps.",
    "01", _OCC, "Recount the registers per thread and the resident warps for your k.")
LOADS_ROUNDED_DOWN = Misconception(
    "loads-rounded-down", "The loads per thread rounded down: a thread issues whole loads, and one "
    "fewer than the quotient leaves the bus short of bytes in flight.", "01", _LITTLE,
    "Multiply back: the resident warps' bytes in flight must reach what Little's law asks per SM.")
LANES_FORGOTTEN = Misconception(
    "warp-bytes-one-lane", "One thread's bytes counted for a whole warp: a warp's load moves 32 "
    "lanes' worth.", "01", _LITTLE, "A warp of 4-byte loads has 32 x 4 bytes in flight per load.")
ASSUMED_LATENCY = Misconception(
    "assumed-latency-not-measured", "The lessons' assumed DRAM latency where the profile gives the "
    "latency this kernel sees: under load a load waits longer, and Little's law needs the latency "
    "the loads really see.", "01", _LITTLE,
    "Little's law read backwards: the bytes the profiled kernel keeps in flight and the bandwidth it "
    "reaches give the latency.")


def _stream_latency() -> float:
    """The memory latency the k = 1 profile shows: its bytes in flight over its bandwidth."""
    acc = get_accelerator(STREAM_ACCELERATOR)
    in_flight = _stream_warps(STREAM_BASE_REGISTERS + 1) * 32 * STREAM_LOAD_BYTES * acc.sm_count
    return in_flight / STREAM_PROFILED_BANDWIDTH


def _stream_need(latency_s=None) -> float:
    """Bytes per SM that Little's law asks of the H200 at the profiled latency."""
    latency = _stream_latency() if latency_s is None else latency_s
    return littles_law(STREAM_ACCELERATOR, latency_s=latency).bytes_in_flight_per_sm


@functools.lru_cache(maxsize=None)
def _stream_warps(registers) -> int:
    return occupancy(STREAM_THREADS, registers, 0, STREAM_ACCELERATOR).warps_per_sm


def _stream_feasible(k) -> str | None:
    """None when k loads in flight per thread cover Little's law; else why not, in numbers."""
    if k < 1:
        return f"a thread keeps at least one load in flight, not {k}"
    registers = STREAM_BASE_REGISTERS + k
    limit = get_accelerator(STREAM_ACCELERATOR).max_registers_per_thread
    if registers > limit:
        return f"k = {k} needs {registers} registers per thread, over the {limit} a thread may use"
    warps = _stream_warps(registers)
    held = warps * 32 * STREAM_LOAD_BYTES * k
    need = _stream_need()
    if held < need:
        return (f"k = {k} uses {registers} registers per thread, which let {warps} warps per SM in; "
                f"they hold {held / 1e3:.2f} kB in flight, short of the {need / 1e3:.2f} kB per SM "
                f"that full bandwidth asks at the profiled latency")
    return None


LOAD_WIDTH = Misconception(
    "load-width-not-4-bytes", "Loads of another width (8 bytes, a double) where the kernel reads "
    "4-byte floats: each load in flight holds fewer bytes than you counted.", "01", _LITTLE,
    "A warp of 4-byte loads has 32 x 4 bytes in flight per load.")


ONE_SMS_BYTES_FOR_LATENCY = Misconception(
    "latency-from-one-sms-bytes", "The profiled latency read from one SM's bytes in flight over the whole "
    "chip's 0.5 TB/s: the chip's bandwidth comes from every SM's loads together, so the bytes must be the "
    "chip's too (or the bandwidth one SM's share).", "01", _LITTLE,
    "Latency = bytes in flight / bandwidth, both for the whole chip: resident warps x 32 x 4 bytes x sm_count "
    "over the profiled bandwidth.")
FLOAT4_LOADS = Misconception(
    "float4-loads-not-4-bytes", "16-byte loads (float4, section 2's wide-load example) where the kernel "
    "reads 4-byte floats: each load in flight holds a quarter of the bytes you counted.", "01", _LITTLE,
    "A warp of 4-byte loads has 32 x 4 bytes in flight per load.")


PROFILE_AT_MAX_WARPS = Misconception(
    "profiled-latency-at-max-warps", "The profiled kernel's bytes in flight counted with the SM's "
    f"maximum warps: at k = 1 its {STREAM_BASE_REGISTERS + 1} registers per thread let fewer warps in, so "
    "it had fewer bytes in flight, and the latency Little's law reads from the profile is shorter.", "01", _LITTLE,
    f"Count the warps resident at k = 1 with occupancy({STREAM_THREADS}, {STREAM_BASE_REGISTERS + 1}, 0, "
    f"'{STREAM_ACCELERATOR}') before reading the latency.")


def _smallest_loads(warps_for=None, lanes=32, scale=1.0, latency_s=None, load_bytes=STREAM_LOAD_BYTES):
    """Smallest k whose resident warps hold the bytes per SM (None past the register limit);
    ``warps_for(k)`` replaces the model of resident warps (a known mistake), ``scale`` the bytes."""
    need = _stream_need(latency_s) * scale
    limit = get_accelerator(STREAM_ACCELERATOR).max_registers_per_thread
    for k in range(1, limit - STREAM_BASE_REGISTERS + 1):
        warps = warps_for(k) if warps_for else _stream_warps(STREAM_BASE_REGISTERS + k)
        if warps * lanes * load_bytes * k >= need:
            return k
    return None


@functools.lru_cache(maxsize=None)
def _loads_in_flight() -> int:
    k = _smallest_loads()
    if k is None:
        raise RuntimeError("01.7: no k within the register limit holds the bytes in flight")
    return k


def _loads_in_flight_wrong() -> dict:
    acc = get_accelerator(STREAM_ACCELERATOR)
    right = _loads_in_flight()
    profiled = _stream_warps(STREAM_BASE_REGISTERS + 1)
    at_right = _stream_warps(STREAM_BASE_REGISTERS + right)
    wrong = {REGISTER_COST_IGNORED: _smallest_loads(lambda k: profiled),
             OCCUPANCY_IGNORED: _smallest_loads(lambda k: acc.max_warps_per_sm),
             ASSUMED_LATENCY: _smallest_loads(latency_s=ASSUMED_DRAM_LATENCY_S),
             LOADS_ROUNDED_DOWN: int(np.floor(_stream_need() / (at_right * 32 * STREAM_LOAD_BYTES))),
             LANES_FORGOTTEN: _smallest_loads(lanes=1),
             LOAD_WIDTH: _smallest_loads(load_bytes=8),
             FLOAT4_LOADS: _smallest_loads(load_bytes=16),
             ONE_SMS_BYTES_FOR_LATENCY: _smallest_loads(latency_s=profiled * 32 * STREAM_LOAD_BYTES / STREAM_PROFILED_BANDWIDTH),
             PER_GPU: _smallest_loads(scale=acc.sm_count),
             PROFILE_AT_MAX_WARPS: _smallest_loads(
                 latency_s=acc.max_warps_per_sm * 32 * STREAM_LOAD_BYTES * acc.sm_count / STREAM_PROFILED_BANDWIDTH)}
    return {k: v for k, v in wrong.items() if v is not None and v != right}


EXERCISES = [
    ChoiceExercise(
        "01.1", expected=_a100_limiter, choices=("warps", "registers", "shared memory", "blocks"),
        wrong_answers=_a100_limiter_wrong, concepts=("occupancy",),
        form="a string: 'warps', 'registers', 'shared memory' or 'blocks'",
        hints=("Work out how many blocks each resource alone allows; the smallest wins.",
               "Shared memory per block is the request plus the reserved 1 KiB, rounded up to 128 B; "
               "compare with the A100's shared memory per SM.",
               "Registers: 40 x 32 = 1280 per warp, allocated from four sub-partitions of 16,384.")),
    ValueExercise(
        "01.2", expected=_kb_in_flight_per_sm, rel_tol=1e-3,
        wrong_answers=_with_generated(_kb_wrong, _kb_in_flight_per_sm, _kb_other_chips, _replayed(_kb_in_flight_per_sm, "01"), rel_tol=1e-3),
        variants=_IN_FLIGHT_VARIANTS, concepts=("littles-law",),
        form="a float: kilobytes (1 kB = 1000 bytes) per SM of the {accelerator}",
        hints=("Little's law: bytes in flight = bandwidth x latency.",
               "Use get_accelerator('{accelerator}').mem_bandwidth and ASSUMED_DRAM_LATENCY_S, then "
               "share the result among the SMs.",
               "Divide by sm_count, then by 1e3 for kB.")),
    ValueExercise(
        "01.3", expected=_warps_for_90_percent, rel_tol=0.0, abs_tol=0.0,
        wrong_answers=_with_generated(_warps_for_90_wrong, _warps_for_90_percent, _replayed(_warps_for_90_percent, "01", kinds=("default", "chip"))), concepts=("latency-hiding",),
        form="an integer: the number of resident warps (exact)",
        hints=("Run simulate_latency_hiding(np.arange(1, 65), 24, 700) and look at .utilisation.",
               "Find the first entry that reaches 0.9; n_warps starts at 1, not 0.",
               "Check it against the formula: N C / (C + L) >= 0.9.")),
    FunctionExercise(
        "01.4", reference=_warps_by_registers, make_cases=_register_cases, rel_tol=0.0,
        wrong_implementations=_register_wrong, concepts=("occupancy",),
        form="a function warps_by_registers(registers_per_thread, accelerator) returning an int: "
             "the warps per SM the register file allows; accelerator is a catalog name such as "
             "'H100 SXM'",
        hints=("Registers are given to a warp in units of register_alloc_unit: round 32 x r up.",
               "The register file is split among warp_alloc_granularity sub-partitions; a warp "
               "lives in one of them.",
               "Whole warps per sub-partition, times the number of sub-partitions; "
               "acc.registers_per_sm is the register count.")),
    ValueExercise(
        "01.5", expected=_spill_cap, rel_tol=0.0, abs_tol=0.0, wrong_answers=_with_generated(_spill_cap_wrong, _spill_cap, _replayed(_spill_cap, "01", integer=True)),
        concepts=("occupancy",),
        form="an integer: the register cap, one of the caps the task lists",
        hints=("For each cap, register_pressure(128, 150, caps, 12 * 1024, 'H100 SXM') gives the "
               "resident warps and the bytes the resident threads' spills occupy per SM.",
               "L1 and shared memory share 256 KiB per SM: the spills must fit in what the resident "
               "blocks' shared memory leaves (occupancy(...).blocks_per_sm x "
               ".shared_mem_allocated_per_block, which includes the reserved 1 KiB).",
               "Among the caps whose spills fit, take the one with the most warps; on a tie, the "
               "larger cap spills less.")),
    OptimumExercise(
        "01.6", expected=_register_budget, feasible=_budget_feasible, goal="largest",
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_register_budget_wrong,
        concepts=("latency-hiding", "occupancy"),
        form="an integer: the most registers per thread (1 to 255) that keep the SM's utilisation at least 0.9",
        hints=("Two models meet here: section 3's simulator says how many warps per SM hide the "
               "latency; section 4's occupancy says how many warps a register count lets in.",
               "Simulate the SM as the H100 has it (how many schedulers does section 3 give it?) and "
               "find the fewest warps that reach 0.9; then find the largest register count whose "
               "resident warps are at least that many.",
               "Sanity check: one more register per thread than your answer must drop the SM under "
               "90 %, and warps only come in whole blocks, so your count of resident warps is a "
               "multiple of 4.")),
    OptimumExercise(
        "01.7", expected=_loads_in_flight, feasible=_stream_feasible, goal="smallest",
        rel_tol=0.0, abs_tol=0.0, wrong_answers=_with_generated(_loads_in_flight_wrong, _loads_in_flight, _replayed(_loads_in_flight, "01", integer=True)),
        concepts=("littles-law", "occupancy"),
        form="an integer: the fewest independent 4-byte loads in flight per thread, k >= 1, for "
             "the H200's full memory bandwidth at the profiled latency",
        hints=("Little's law (section 2) ties bytes in flight, bandwidth and latency: the profile "
               "gives two of them for k = 1.",
               "First find the latency the profiled kernel sees (its bytes in flight, from the warps "
               "its registers let in, over the bandwidth it reached); then the bytes per SM that full "
               "bandwidth needs at that latency; then the k whose resident warps hold them.",
               "Sanity check: the latency you derive is longer than the lessons' assumed one; k - 1 "
               "must fall short once you recount its registers and warps, and more loads per "
               "thread can mean fewer warps.")),
]
