"""Throughput against latency: Little's law, a latency-hiding simulator, and an occupancy calculator.

    Little's law        bytes_in_flight = bandwidth_bytes_per_s * latency_s
    latency hiding      utilisation(N) = min(1, N * C / (S * (C + L)))
                        (N warps, C compute cycles then L cycles waiting on memory, S schedulers)
    occupancy           resident warps per SM / maximum warps per SM

Pure functions and frozen dataclasses, NumPy only. Drawing: ``course_lib.plots.latency``;
widgets: ``course_lib.widgets.latency``.

The occupancy rules follow NVIDIA's ``cuda_occupancy.h`` (shipped with the CUDA toolkit; the
same rules drive the CUDA Occupancy Calculator and Nsight Compute's occupancy section):

* warps per block = ceil(threads / warp size);
* registers are allocated per warp: ceil(registers_per_thread * 32 / 256) * 256, and from each of
  the SM's four sub-partitions separately (``warp_alloc_granularity`` in the catalog); the launch
  check also rounds a block's warps up to a multiple of four;
* shared memory per block = ceil((requested + reserved) / unit) * unit, with 1 KiB reserved per
  block by the driver from compute capability 8.0 on and a 128-byte unit on 8.x/9.x;
* blocks per SM = min(block limit, warp limit, register limit, shared-memory limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import check_array, check_int, check_number, check_sequence, lookup_by_name, name_key
from .hardware import Accelerator, get_accelerator

__all__ = [
    "ASSUMED_DRAM_LATENCY_S",
    "bytes_in_flight",
    "LittlesLaw",
    "littles_law",
    "analytic_utilisation",
    "warps_to_saturate",
    "LatencySweep",
    "simulate_latency_hiding",
    "LaunchError",
    "Occupancy",
    "occupancy",
    "occupancy_curve",
    "ASSUMED_CPU_DRAM_LATENCY_S",
    "CPU",
    "list_cpus",
    "get_cpu",
    "CpuGpuGap",
    "cpu_gpu_gap",
    "H100_L1_SHARED_BYTES_PER_SM",
    "RegisterCap",
    "register_pressure",
    "BLOG_KERNEL_S",
    "BLOG_STREAM_PER_KERNEL_S",
    "BLOG_GRAPH_PER_KERNEL_S",
    "launch_time_s",
]

#: A round figure for the load-to-use latency of a DRAM (HBM) access on a recent NVIDIA GPU.
#: NVIDIA does not publish this number; microbenchmark studies (Jia et al., "Dissecting the
#: NVIDIA Volta GPU Architecture via Microbenchmarking", arXiv:1804.06826, 2018; Luo et al.,
#: "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", arXiv:2402.13499, 2024)
#: measure several hundred nanoseconds. It is an ASSUMPTION of the lessons, always passed
#: explicitly, and the lessons show how the conclusions move when it changes.
ASSUMED_DRAM_LATENCY_S = 600e-9


def bytes_in_flight(bandwidth_bytes_per_s, latency_s) -> float:
    """Little's law for a memory system: bytes that must be outstanding to sustain a bandwidth.

        bytes_in_flight = bandwidth_bytes_per_s * latency_s

    >>> bytes_in_flight(3.35e12, 600e-9)     # H100 SXM HBM3 at an assumed 600 ns: about 2 MB
    2010000.0
    """
    bw = check_number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, min_value=0, allow_min=False)
    lat = check_number("latency_s", latency_s, min_value=0, allow_min=False)
    return bw * lat


@dataclass(frozen=True)
class LittlesLaw:
    """Concurrency an accelerator needs to keep its memory bus busy, per GPU and per SM."""

    accelerator: str
    bandwidth_bytes_per_s: float
    latency_s: float
    bytes_in_flight: float
    sm_count: int
    bytes_in_flight_per_sm: float
    bytes_per_warp_in_flight: float
    warps_needed_per_sm: float
    max_warps_per_sm: int | None

    @property
    def fraction_of_max_warps(self) -> float | None:
        """warps_needed_per_sm / max_warps_per_sm; above 1 means more warps than can be resident."""
        if not self.max_warps_per_sm:
            return None
        return self.warps_needed_per_sm / self.max_warps_per_sm


def littles_law(accelerator="H100 SXM", latency_s=ASSUMED_DRAM_LATENCY_S, bytes_per_thread=4,
                loads_in_flight_per_thread=1) -> LittlesLaw:
    """Little's law applied to an accelerator's memory system, per GPU and per SM.

        bytes_in_flight        = mem_bandwidth * latency_s
        bytes_in_flight_per_sm = bytes_in_flight / sm_count
        warps_needed_per_sm    = bytes_in_flight_per_sm
                                 / (warp_size * bytes_per_thread * loads_in_flight_per_thread)

    ``bytes_per_thread`` is the width of one load (4 for a float, 16 for a float4);
    ``loads_in_flight_per_thread`` counts independent loads a thread issues before it waits.
    """
    acc = get_accelerator(accelerator)
    lat = check_number("latency_s", latency_s, min_value=0, allow_min=False)
    width = check_number("bytes_per_thread", bytes_per_thread, min_value=0, allow_min=False)
    loads = check_int("loads_in_flight_per_thread", loads_in_flight_per_thread, min_value=1)
    total = bytes_in_flight(acc.mem_bandwidth, lat)
    per_sm = total / acc.sm_count
    per_warp = acc.warp_size * width * loads
    return LittlesLaw(acc.name, acc.mem_bandwidth, lat, total, acc.sm_count, per_sm, per_warp,
                      per_sm / per_warp, acc.max_warps_per_sm)


# --------------------------------------------------------------------------- latency hiding

def analytic_utilisation(n_warps, compute_cycles, latency_cycles, schedulers=1):
    """Fraction of issue slots kept busy by N warps that compute C cycles, then wait L cycles.

        utilisation(N) = min(1, N * C / (S * (C + L)))

    Each warp needs the issue port for C of every C + L cycles; S schedulers offer S slots per
    cycle. ``n_warps`` may be a scalar or an array.

    >>> float(analytic_utilisation(8, 40, 560))          # 8 * 40 / 600
    0.5333333333333333
    """
    c = check_number("compute_cycles", compute_cycles, min_value=0, allow_min=False)
    lat = check_number("latency_cycles", latency_cycles, min_value=0)
    s = check_int("schedulers", schedulers, min_value=1)
    if np.isscalar(n_warps):
        n = check_number("n_warps", n_warps, min_value=0)
        return min(1.0, n * c / (s * (c + lat)))
    n = check_array("n_warps", n_warps)
    if np.any(n < 0):
        raise ValueError("n_warps must be >= 0 everywhere")
    return np.minimum(1.0, n * c / (s * (c + lat)))


def warps_to_saturate(compute_cycles, latency_cycles, schedulers=1) -> int:
    """Smallest whole number of warps that keeps every issue slot busy: ceil(S * (C + L) / C)."""
    c = check_number("compute_cycles", compute_cycles, min_value=0, allow_min=False)
    lat = check_number("latency_cycles", latency_cycles, min_value=0)
    s = check_int("schedulers", schedulers, min_value=1)
    return int(math.ceil(s * (c + lat) / c - 1e-12))


@dataclass(frozen=True)
class LatencySweep:
    """Simulated and analytic issue utilisation of one SM against resident warps."""

    n_warps: np.ndarray
    utilisation: np.ndarray
    analytic: np.ndarray
    compute_cycles: float
    latency_cycles: float
    schedulers: int
    jitter: float
    bursts_per_config: int

    @property
    def knee_warps(self) -> int:
        """Analytic saturation point ceil(S (C + L) / C)."""
        return warps_to_saturate(self.compute_cycles, self.latency_cycles, self.schedulers)

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.utilisation - self.analytic)))


def simulate_latency_hiding(n_warps, compute_cycles=40, latency_cycles=560, schedulers=1,
                            jitter=0.0, bursts=3000, rng=None) -> LatencySweep:
    """Simulate an SM whose warps alternate compute bursts and memory waits; one run per N.

    Each warp repeatedly needs an issue slot for ``compute_cycles`` cycles, then waits
    ``latency_cycles`` for memory. A free scheduler takes the warp that has been ready longest
    and runs its burst to the end (greedy-then-oldest). With ``jitter`` > 0, each burst and each
    latency is drawn uniformly within +-jitter of its mean (``rng`` required).

    The simulation is event-driven over bursts and vectorised across all values of N at once: one
    NumPy step per burst handles every configuration. Utilisation is measured between the start
    of burst k0 and burst k0 + m*N (whole rounds, after a warm-up), counting the busy time of every
    scheduler inside that window, so with jitter = 0 it equals min(1, N C / (S (C + L))).
    """
    counts = check_array("n_warps", n_warps, ndim=1)
    if counts.size == 0:
        raise ValueError("n_warps must hold at least one warp count")
    if np.any(counts < 1) or np.any(counts != np.round(counts)):
        raise ValueError("n_warps must hold whole numbers >= 1")
    counts = counts.astype(np.int64)
    c = check_number("compute_cycles", compute_cycles, min_value=0, allow_min=False)
    lat = check_number("latency_cycles", latency_cycles, min_value=0)
    s = check_int("schedulers", schedulers, min_value=1, max_value=64)
    jit = check_number("jitter", jitter, min_value=0, max_value=0.99)
    bursts = check_int("bursts", bursts, min_value=20, max_value=200_000)
    if jit > 0 and not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator when jitter > 0")
    if bursts < 4 * counts.max():
        raise ValueError(f"bursts must be >= 4 * max(n_warps) = {4 * counts.max()} so every warp "
                         f"runs several rounds, got {bursts}")

    n_cfg, width = counts.size, int(counts.max())
    rows = np.arange(n_cfg)
    # Warps beyond a configuration's N are parked at +inf so they are never chosen.
    ready = np.where(np.arange(width)[None, :] < counts[:, None], 0.0, np.inf)
    slot_free = np.zeros((n_cfg, s))
    starts = np.empty((n_cfg, bursts))
    if jit > 0:
        burst_len = c * rng.uniform(1 - jit, 1 + jit, size=(bursts, n_cfg))
        wait_len = lat * rng.uniform(1 - jit, 1 + jit, size=(bursts, n_cfg))
    else:
        burst_len = np.full((bursts, n_cfg), c)
        wait_len = np.full((bursts, n_cfg), lat)
    for k in range(bursts):
        w = np.argmin(ready, axis=1)                 # oldest ready warp
        slot = np.argmin(slot_free, axis=1)          # earliest free scheduler
        t0 = np.maximum(ready[rows, w], slot_free[rows, slot])
        starts[:, k] = t0
        end = t0 + burst_len[k]
        slot_free[rows, slot] = end
        ready[rows, w] = end + wait_len[k]
    # Measure over whole rounds after a warm-up of a quarter of the bursts.
    k0 = bursts // 4
    rounds = (bursts - 1 - k0) // counts
    k1 = k0 + rounds * counts
    t_lo, t_hi = starts[:, k0], starts[rows, k1]
    ends = starts + burst_len.T
    # Busy time inside [t_lo, t_hi], summed over schedulers (bursts cut at the window's edges).
    overlap = np.minimum(ends, t_hi[:, None]) - np.maximum(starts, t_lo[:, None])
    busy = np.clip(overlap, 0.0, None).sum(axis=1)
    util = busy / (s * (t_hi - t_lo))
    return LatencySweep(counts, util, analytic_utilisation(counts, c, lat, s), c, lat, s, jit, bursts)


# --------------------------------------------------------------------------- occupancy

class LaunchError(ValueError):
    """A block configuration that cannot run on the accelerator at all (zero blocks per SM)."""


_LIMITERS = ("warps", "registers", "shared memory", "blocks")


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps per SM for one kernel configuration, and what limits them."""

    accelerator: str
    threads_per_block: int
    registers_per_thread: int
    shared_mem_per_block: int
    warps_per_block: int
    registers_per_warp: int
    shared_mem_allocated_per_block: int
    block_limits: dict          # resource -> blocks per SM it alone allows (shared memory only if allocated)
    blocks_per_sm: int
    warps_per_sm: int
    max_warps_per_sm: int
    limiter: str                # what binds, in words; a tie names every resource: "warps and blocks"
    limiters: tuple             # every resource that binds, in the order of _LIMITERS

    @property
    def occupancy(self) -> float:
        """warps_per_sm / max_warps_per_sm, a fraction in (0, 1]."""
        return self.warps_per_sm / self.max_warps_per_sm


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _occupancy_fields(acc: Accelerator):
    needed = ("max_warps_per_sm", "max_blocks_per_sm", "max_threads_per_block",
              "max_registers_per_thread", "register_alloc_unit", "warp_alloc_granularity",
              "register_file_bytes_per_sm", "shared_mem_bytes_per_sm",
              "max_shared_mem_bytes_per_block", "shared_mem_alloc_unit_bytes",
              "shared_mem_reserved_bytes_per_block")
    missing = [f for f in needed if getattr(acc, f) is None]
    if missing:
        raise ValueError(f"accelerator {acc.name!r} has no occupancy rules in the catalog "
                         f"(missing {', '.join(missing)}); pick an NVIDIA GPU")


def occupancy(threads_per_block, registers_per_thread, shared_mem_per_block,
              accelerator="H100 SXM") -> Occupancy:
    """Blocks and warps resident per SM, the occupancy fraction and the limiting resource.

        warps/block   = ceil(threads / 32)
        regs/warp     = ceil(regs_per_thread * 32 / 256) * 256
        warps by regs = floor(registers_per_sm / 4 / regs_per_warp) * 4       (4 sub-partitions)
        smem/block    = ceil((shared_mem_per_block + reserved) / unit) * unit
        blocks/SM     = min(max_blocks, max_warps // warps/block,
                            warps by regs // warps/block, smem_per_sm // smem/block)

    256 threads x 128 registers on an H100: 4096 registers per warp, 4 warps per sub-partition,
    16 warps per SM, so 2 blocks of 8 warps: occupancy 16 / 64 = 0.25.

    ``shared_mem_per_block`` is static plus dynamic shared memory in bytes; above 48 KiB a real
    kernel must opt in with ``cudaFuncSetAttribute``; the calculator assumes it has. The SM's
    shared-memory carve-out is taken at its maximum. Raises :class:`LaunchError` (a ValueError)
    when no block fits on an SM, with the reason.

    ``limiter`` names what binds; when several resources allow the same smallest number of blocks
    it names them all ("warps and blocks"), and ``limiters`` lists them. Where a block allocates
    no shared memory at all (no bytes asked for and none reserved, as on a V100), shared memory
    sets no limit and is absent from ``block_limits``.
    """
    acc = get_accelerator(accelerator)
    _occupancy_fields(acc)
    threads = check_int("threads_per_block", threads_per_block, min_value=1)
    regs = check_int("registers_per_thread", registers_per_thread, min_value=1)
    smem = check_int("shared_mem_per_block", shared_mem_per_block, min_value=0)

    ws = acc.warp_size
    subpartitions = acc.warp_alloc_granularity
    regs_per_sm = acc.registers_per_sm
    if threads > acc.max_threads_per_block:
        raise LaunchError(f"threads_per_block = {threads} exceeds the {acc.name}'s limit of "
                          f"{acc.max_threads_per_block} threads per block: the launch fails")
    if regs > acc.max_registers_per_thread:
        raise LaunchError(f"registers_per_thread = {regs} exceeds the limit of "
                          f"{acc.max_registers_per_thread}: the compiler would spill instead")
    if smem > acc.max_shared_mem_bytes_per_block:
        raise LaunchError(f"shared_mem_per_block = {smem} B exceeds the {acc.name}'s "
                          f"{acc.max_shared_mem_bytes_per_block} B per block: the launch fails")

    warps_per_block = -(-threads // ws)
    regs_per_warp = _round_up(regs * ws, acc.register_alloc_unit)
    # Launch check of cuda_occupancy.h: a block's warps rounded up to the sub-partition count.
    regs_assumed_per_block = regs_per_warp * _round_up(warps_per_block, subpartitions)
    if regs_assumed_per_block > regs_per_sm:
        raise LaunchError(f"a block needs {regs_assumed_per_block} registers "
                          f"({regs_per_warp} per warp x {_round_up(warps_per_block, subpartitions)} "
                          f"warps) but an SM has {regs_per_sm}: the launch fails "
                          f"(too many resources requested)")
    warps_by_regs = (regs_per_sm // subpartitions // regs_per_warp) * subpartitions
    smem_alloc = _round_up(smem + acc.shared_mem_reserved_bytes_per_block, acc.shared_mem_alloc_unit_bytes)

    limits = {
        "warps": acc.max_warps_per_sm // warps_per_block,
        "registers": warps_by_regs // warps_per_block,
        "blocks": acc.max_blocks_per_sm,
    }
    if smem_alloc:                 # a block that allocates no shared memory is not limited by it
        limits = {**limits, "shared memory": acc.shared_mem_bytes_per_sm // smem_alloc}
    limits = {k: limits[k] for k in _LIMITERS if k in limits}
    blocks = min(limits.values())
    if blocks == 0:
        zero = [k for k, v in limits.items() if v == 0]
        raise LaunchError(f"no block fits on an SM (limited by {', '.join(zero)})")
    binding = tuple(k for k in _LIMITERS if limits.get(k) == blocks)
    return Occupancy(acc.name, threads, regs, smem, warps_per_block, regs_per_warp, smem_alloc,
                     limits, blocks, blocks * warps_per_block, acc.max_warps_per_sm,
                     _join_and(binding), binding)


def _join_and(names) -> str:
    """("warps",) -> "warps"; a tie -> "warps and blocks" or "warps, registers and blocks"."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def occupancy_curve(threads_per_block, shared_mem_per_block, accelerator="H100 SXM",
                    registers=None) -> tuple[np.ndarray, np.ndarray]:
    """Occupancy against registers per thread (1..max): the staircase a compiler flag walks.

    Returns ``(registers, occupancy)``; configurations that cannot launch give occupancy 0.
    """
    acc = get_accelerator(accelerator)
    _occupancy_fields(acc)
    if registers is None:
        registers = np.arange(1, acc.max_registers_per_thread + 1)
    registers = np.asarray([check_int("registers[i]", r, min_value=1, max_value=1024)
                            for r in check_sequence("registers", registers, max_len=1024)], dtype=np.int64)
    occ = np.zeros(registers.shape)
    for i, r in enumerate(registers):
        try:
            occ[i] = occupancy(threads_per_block, int(r), shared_mem_per_block, acc).occupancy
        except LaunchError:
            occ[i] = 0.0
    return registers, occ


# --------------------------------------------------------------------------- CPU against GPU

#: A round load-to-use latency for a DRAM access on a server CPU: an ASSUMPTION of the lesson,
#: like ``ASSUMED_DRAM_LATENCY_S``; microbenchmarks of recent server parts measure about 100 ns
#: (and more across sockets). Only the ratio to the GPU's figure matters below.
ASSUMED_CPU_DRAM_LATENCY_S = 100e-9


@dataclass(frozen=True)
class CPU:
    """One CPU's cited figures (``course_lib/data/cpus.toml``), SI units."""

    name: str
    vendor: str
    architecture: str
    year: int
    cores: int
    threads_per_core: int
    base_clock_hz: float
    fp32_flops_per_clock_per_core: int
    bf16_flops_per_clock_per_core: int | None
    mem_type: str
    mem_channels: int
    mem_transfer_rate_per_s: float
    mem_bandwidth: float
    tdp_w: float
    source: str
    boost_clock_hz: float | None = None
    boost_clock_kind: str = ""

    @property
    def peak_fp32_flops(self) -> float:
        """cores x FP32 FLOP per clock per core x base clock: the low end of the range."""
        return self.cores * self.fp32_flops_per_clock_per_core * self.base_clock_hz

    @property
    def peak_fp32_flops_boost(self) -> float:
        """The same at ``boost_clock_hz``, the high end (the base clock where none is stored).

        EPYC 9654: 96 x 32 x 3.55e9 = 10.9e12 FLOP/s at its all-core boost, 7.4e12 at base."""
        return self.cores * self.fp32_flops_per_clock_per_core * (self.boost_clock_hz or self.base_clock_hz)

    @property
    def peak_bf16_flops(self) -> float | None:
        """The matrix unit's BF16 rate at the base clock, where the core has one."""
        if not self.bf16_flops_per_clock_per_core:
            return None
        return self.cores * self.bf16_flops_per_clock_per_core * self.base_clock_hz

    @property
    def channel_bandwidth(self) -> float:
        """channels x 8 bytes x transfers/s: the vendor's bandwidth, computed (a second way)."""
        return self.mem_channels * 8 * self.mem_transfer_rate_per_s

    @property
    def hardware_threads(self) -> int:
        return self.cores * self.threads_per_core


def _cpu_catalog() -> dict:
    import tomllib
    from importlib import resources

    text = resources.files("course_lib").joinpath("data/cpus.toml").read_bytes()
    table = {}
    for e in tomllib.loads(text.decode("utf-8"))["cpu"]:
        cpu = CPU(name=e["name"], vendor=e["vendor"], architecture=e["architecture"], year=int(e["year"]),
                  cores=int(e["cores"]), threads_per_core=int(e["threads_per_core"]),
                  base_clock_hz=float(e["base_clock_mhz"]) * 1e6,
                  fp32_flops_per_clock_per_core=int(e["fp32_flops_per_clock_per_core"]),
                  bf16_flops_per_clock_per_core=e.get("bf16_flops_per_clock_per_core"),
                  mem_type=e["mem_type"], mem_channels=int(e["mem_channels"]),
                  mem_transfer_rate_per_s=float(e["mem_transfer_rate_mt_per_s"]) * 1e6,
                  mem_bandwidth=float(e["mem_bandwidth_gb_per_s"]) * 1e9, tdp_w=float(e["tdp_w"]),
                  source=e["source"],
                  boost_clock_hz=float(e["boost_clock_mhz"]) * 1e6 if "boost_clock_mhz" in e else None,
                  boost_clock_kind=e.get("boost_clock_kind", ""))
        table[name_key(cpu.name)] = cpu
    return table


def list_cpus() -> list[str]:
    """Names of the CPUs in ``course_lib/data/cpus.toml``."""
    return [c.name for c in _cpu_catalog().values()]


def get_cpu(name) -> CPU:
    """Look up a CPU by name, forgiving case and spaces ("epyc 9654")."""
    if isinstance(name, CPU):
        return name
    return lookup_by_name("cpu", name, _cpu_catalog(), list_cpus(), "EPYC 9654", "the CPU list")


@dataclass(frozen=True)
class CpuGpuGap:
    """One CPU socket against one GPU: rates, bandwidths, threads and bytes in flight."""

    cpu: str
    gpu: str
    cpu_fp32_flops: float
    gpu_fp32_flops: float
    cpu_best_flops: float            # the CPU's fastest path (its matrix unit where it has one)
    gpu_best_flops: float            # the GPU's dense 16-bit tensor rate
    cpu_bandwidth: float
    gpu_bandwidth: float
    cpu_threads: int
    gpu_threads: int
    cpu_bytes_in_flight: float
    gpu_bytes_in_flight: float
    cpu_fp32_flops_boost: float = 0.0     # the CPU's FP32 peak at its boost clock (the range's top)

    @property
    def fp32_ratio(self) -> float:
        """GPU / CPU FP32 at the CPU's base clock: the top of the range of ratios."""
        return self.gpu_fp32_flops / self.cpu_fp32_flops

    @property
    def fp32_ratio_boost(self) -> float:
        """GPU / CPU FP32 at the CPU's boost clock: the bottom of the range (H100 / EPYC 9654:
        66.9e12 / 10.9e12 = 6.1x, against 9.1x at base)."""
        return self.gpu_fp32_flops / (self.cpu_fp32_flops_boost or self.cpu_fp32_flops)

    @property
    def best_ratio(self) -> float:
        return self.gpu_best_flops / self.cpu_best_flops

    @property
    def bandwidth_ratio(self) -> float:
        return self.gpu_bandwidth / self.cpu_bandwidth

    @property
    def thread_ratio(self) -> float:
        return self.gpu_threads / self.cpu_threads

    @property
    def in_flight_per_thread_cpu(self) -> float:
        """Bytes each hardware thread must keep outstanding for full CPU bandwidth."""
        return self.cpu_bytes_in_flight / self.cpu_threads

    @property
    def in_flight_per_thread_gpu(self) -> float:
        return self.gpu_bytes_in_flight / self.gpu_threads


def cpu_gpu_gap(cpu="EPYC 9654", gpu="H100 SXM", cpu_latency_s=ASSUMED_CPU_DRAM_LATENCY_S,
                gpu_latency_s=ASSUMED_DRAM_LATENCY_S) -> CpuGpuGap:
    """Compare a CPU socket and a GPU: peak rates, bandwidth, resident threads, Little's law.

        bytes in flight = bandwidth x latency          (per hardware thread: / threads)

    A CPU core covers its share with out-of-order execution and prefetchers (dozens of misses
    in flight from one thread); a GPU with thousands of resident threads, each with a few loads.
    """
    c = get_cpu(cpu)
    g = get_accelerator(gpu)
    lat_c = check_number("cpu_latency_s", cpu_latency_s, min_value=0, allow_min=False)
    lat_g = check_number("gpu_latency_s", gpu_latency_s, min_value=0, allow_min=False)
    if g.max_threads_per_sm is None:
        raise ValueError(f"accelerator {g.name!r} has no thread limits in the catalog; pick an NVIDIA GPU")
    prec = "bf16" if "bf16" in g.peak_flops else "fp16"
    return CpuGpuGap(cpu=c.name, gpu=g.name, cpu_fp32_flops=c.peak_fp32_flops, gpu_fp32_flops=g.peak("fp32"),
                     cpu_best_flops=c.peak_bf16_flops or c.peak_fp32_flops, gpu_best_flops=g.peak(prec),
                     cpu_bandwidth=c.mem_bandwidth, gpu_bandwidth=g.mem_bandwidth,
                     cpu_threads=c.hardware_threads, gpu_threads=g.sm_count * g.max_threads_per_sm,
                     cpu_bytes_in_flight=bytes_in_flight(c.mem_bandwidth, lat_c),
                     gpu_bytes_in_flight=bytes_in_flight(g.mem_bandwidth, lat_g),
                     cpu_fp32_flops_boost=c.peak_fp32_flops_boost)


# --------------------------------------------------------------------------- register pressure

#: Bytes of combined L1 data cache and shared memory per SM on the H100 (H100 whitepaper: "256 KB
#: of combined L1 cache and shared memory"); spilled registers live in local memory, which is
#: device memory cached in L1 and L2 (CUDA C++ Programming Guide, "Local Memory").
H100_L1_SHARED_BYTES_PER_SM = 256 * 1024


@dataclass(frozen=True)
class RegisterCap:
    """A kernel that needs ``registers_needed`` per thread, compiled with at most ``cap``."""

    cap: int
    registers_used: int
    spilled_per_thread: int
    warps_per_sm: int
    occupancy: float
    spill_bytes_per_thread_per_pass: int     # one store and one reload of each spilled register
    spill_footprint_per_sm: int              # local-memory bytes the resident threads' spills hold


def register_pressure(threads_per_block, registers_needed, caps, shared_mem_per_block=0,
                      accelerator="H100 SXM", reloads_per_pass=1) -> list[RegisterCap]:
    """Occupancy and spill traffic when the compiler caps registers per thread.

        used = min(needed, cap),  spilled = needed - used
        spill traffic per thread per pass = spilled x 4 B x (1 store + reloads_per_pass loads)
        spill footprint per SM = spilled x 4 B x resident threads

    Capping (``-maxrregcount`` or ``__launch_bounds__``) raises occupancy and moves the excess
    to local memory: device memory, cached in L1/L2, with the latency of a global access when it
    misses (CUDA C++ Programming Guide, "Local Memory").
    """
    t = check_int("threads_per_block", threads_per_block, min_value=1, max_value=4096)
    need = check_int("registers_needed", registers_needed, min_value=1, max_value=1024)
    k = check_int("reloads_per_pass", reloads_per_pass, min_value=1, max_value=1_000_000)
    if isinstance(caps, (str, bytes)) or not hasattr(caps, "__iter__"):
        raise TypeError(f"caps must be a sequence of register counts, got {caps!r}")
    rows = []
    for i, cap in enumerate(caps):
        c = check_int(f"caps[{i}]", cap, min_value=16, max_value=255)
        used = min(need, c)
        spilled = need - used
        occ = occupancy(t, used, shared_mem_per_block, accelerator)
        resident = occ.warps_per_sm * 32
        rows.append(RegisterCap(cap=c, registers_used=used, spilled_per_thread=spilled,
                                warps_per_sm=occ.warps_per_sm, occupancy=occ.occupancy,
                                spill_bytes_per_thread_per_pass=spilled * 4 * (1 + k),
                                spill_footprint_per_sm=spilled * 4 * resident))
    return rows


# --------------------------------------------------------------------------- launches and graphs

#: One published measurement of launch overhead (NVIDIA Technical Blog, A. Gray, "Getting Started
#: with CUDA Graphs", 2019; V100, CUDA 10.1): 20 kernels of about 2.9 us each took 3.8 us per
#: kernel launched back to back in a stream and 3.4 us per kernel launched as one graph.
BLOG_KERNEL_S = 2.9e-6
BLOG_STREAM_PER_KERNEL_S = 3.8e-6
BLOG_GRAPH_PER_KERNEL_S = 3.4e-6


def launch_time_s(n_kernels, kernel_s, per_kernel_overhead_s) -> float:
    """Time for ``n_kernels`` short dependent kernels: n x (kernel time + exposed overhead).

    When kernels are shorter than the CPU's time to launch the next, the GPU idles between them
    and each one costs its launch overhead on top of its run time. A CUDA graph submits the whole
    sequence in one launch; what remains per kernel is the smaller cost of the GPU stepping from
    node to node.
    """
    n = check_int("n_kernels", n_kernels, min_value=0, max_value=10**9)
    k = check_number("kernel_s", kernel_s, min_value=0)
    o = check_number("per_kernel_overhead_s", per_kernel_overhead_s, min_value=0)
    return n * (k + o)
