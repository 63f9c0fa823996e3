"""Your own memory ladder, measured: read bandwidth and access latency against working-set size.

Two measurements on the learner's CPU, each well under a second:

* **Bandwidth**: ``np.maximum.reduce`` over a working set of S bytes, read many times in *one*
  NumPy call through a zero-stride view (shape reps x n, row stride 0), so per-call overhead is
  paid once. Bandwidth = reps x S / best time. Working sets that fit a cache level run at that
  level's speed; the steps of the curve are your cache sizes.
* **Latency**: pointer chasing. ``nxt`` holds a single random cycle through n slots, and the loop
  ``i = nxt[i]`` cannot start a load before the previous one returns, so time per step is the
  latency of whichever level holds the working set, plus a constant Python interpreter cost
  (tens of nanoseconds) that the smallest working set measures and ``latency_ns`` subtracts.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .._validate import check_array, check_bool, check_count, check_int
from .progress import progress_bar

__all__ = [
    "DEFAULT_BANDWIDTH_SIZES",
    "DEFAULT_LATENCY_SIZES",
    "BandwidthLadder",
    "LatencyLadder",
    "measure_bandwidth_ladder",
    "measure_latency_ladder",
    "random_cycle",
    "cpu_cache_sizes",
]

_KIB = 1024
#: Working sets for the bandwidth sweep: 8 KiB to 64 MiB in factors of 2 (L1 to DRAM on most CPUs).
DEFAULT_BANDWIDTH_SIZES = tuple(8 * _KIB * 2 ** k for k in range(0, 14))
#: Working sets for the pointer chase: 16 KiB to 64 MiB in factors of 4.
DEFAULT_LATENCY_SIZES = tuple(16 * _KIB * 4 ** k for k in range(0, 7))


@dataclass(frozen=True)
class BandwidthLadder:
    """Measured read bandwidth (bytes/s) for each working-set size (bytes)."""

    working_set_bytes: np.ndarray
    bandwidth_bytes_per_s: np.ndarray


@dataclass(frozen=True)
class LatencyLadder:
    """Measured time per dependent access (ns), raw and with the interpreter's constant removed."""

    working_set_bytes: np.ndarray
    ns_per_step: np.ndarray

    @property
    def latency_ns(self) -> np.ndarray:
        """Time per step minus the smallest one (which is almost all interpreter overhead)."""
        return self.ns_per_step - self.ns_per_step.min()


def _sizes(name, sizes, element_bytes):
    arr = check_array(name, sizes, ndim=1)
    if arr.size == 0:
        raise ValueError(f"{name} must hold at least one size")
    if np.any(arr < element_bytes):
        raise ValueError(f"{name} must all be >= {element_bytes} bytes")
    if np.any(arr > 2 ** 30):
        raise ValueError(f"{name} must all be <= 2**30 bytes (a buffer of the largest is allocated)")
    return np.sort(arr.astype(np.int64))


def measure_bandwidth_ladder(sizes_bytes=DEFAULT_BANDWIDTH_SIZES, bytes_per_call=32 * 2 ** 20,
                             repeats=3, progress=True) -> BandwidthLadder:
    """Read bandwidth for each working set: reps x S bytes / best time of one zero-stride reduce.

    ``bytes_per_call`` sets how much is read per timed call (default 32 MiB: about 0.3 ms from L1,
    1 ms from DRAM), ``repeats`` how many calls to take the best of.
    """
    sizes = _sizes("sizes_bytes", sizes_bytes, 4)
    per_call = check_int("bytes_per_call", bytes_per_call, min_value=4, max_value=2 ** 32,
                         why="each size reads this much per timed call")
    repeats = check_int("repeats", repeats, min_value=1, max_value=100,
                        why="each repeat reads bytes_per_call at every size")
    progress = check_bool("progress", progress)
    buffer = np.ones(int(sizes[-1]) // 4, dtype=np.float32)   # float32: SIMD max, 4-byte elements
    out_bw = np.empty(sizes.size)
    with progress_bar(int(sizes.size), "bandwidth", enabled=progress) as bar:
        for k, size in enumerate(sizes):
            n = int(size) // 4
            reps = max(1, per_call // (4 * n))
            view = as_strided(buffer[:n], shape=(reps, n), strides=(0, 4), writeable=False)
            out = np.empty(reps, dtype=np.float32)
            best = float("inf")
            np.maximum.reduce(view, axis=1, out=out)          # warm the working set into cache
            for _ in range(repeats):
                start = time.perf_counter()
                np.maximum.reduce(view, axis=1, out=out)
                best = min(best, time.perf_counter() - start)
            out_bw[k] = reps * n * 4 / best
            bar.update()
    return BandwidthLadder(sizes, out_bw)


def random_cycle(n, rng, spacing=1) -> np.ndarray:
    """A successor array ``nxt`` of length n whose walk i -> nxt[i] visits every ``spacing``-th slot.

    The slots 0, spacing, 2 spacing, ... are joined in one random cycle (other slots stay 0), so a
    walk from slot 0 touches each of them once before it repeats. With 8-byte slots and
    ``spacing = 8`` every visited slot sits in its own 64-byte cache line.
    """
    n = check_count("n", n)
    spacing = check_int("spacing", spacing, min_value=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (e.g. np.random.default_rng(0))")
    slots = np.arange(0, n, spacing, dtype=np.int64)
    order = slots[rng.permutation(slots.size)]
    nxt = np.zeros(n, dtype=np.int64)
    nxt[order] = np.roll(order, -1)
    return nxt


def measure_latency_ladder(sizes_bytes=DEFAULT_LATENCY_SIZES, steps=10000, rng=None,
                           progress=True) -> LatencyLadder:
    """Time per step of ``i = nxt[i]`` over a random cycle filling each working set (8-byte slots).

    A Python ``memoryview`` of the NumPy array gives the cheapest indexing Python has, so the
    interpreter's share stays constant and the memory level's latency shows on top of it.
    """
    sizes = _sizes("sizes_bytes", sizes_bytes, 8)
    steps = check_int("steps", steps, min_value=1, max_value=10 ** 6,
                      why="each step is a Python loop iteration, timed at every size")
    progress = check_bool("progress", progress)
    if rng is None:
        raise TypeError("rng must be a numpy.random.Generator (e.g. np.random.default_rng(0))")
    ns = np.empty(sizes.size)
    with progress_bar(int(sizes.size), "latency", enabled=progress) as bar:
        for k, size in enumerate(sizes):
            nxt = random_cycle(int(size) // 8, rng, spacing=8)   # one slot per 64 B line
            view = memoryview(nxt)
            i = 0
            for _ in range(min(steps, view.shape[0])):       # warm up
                i = view[i]
            best = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                for _ in range(steps):
                    i = view[i]
                best = min(best, time.perf_counter() - start)
            ns[k] = best / steps * 1e9
            bar.update()
    return LatencyLadder(sizes, ns)


def cpu_cache_sizes() -> dict:
    """Data and unified cache sizes of CPU 0 as Linux reports them, e.g. {"L1d": 49152, "L2": ...}.

    Reads ``/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}``; an empty dict elsewhere.
    """
    sizes = {}
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            level = open(os.path.join(index, "level")).read().strip()
            kind = open(os.path.join(index, "type")).read().strip()
            text = open(os.path.join(index, "size")).read().strip().upper()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes[f"L{level}" + ("d" if kind == "Data" else "")] = int(digits) * scale
    return sizes
