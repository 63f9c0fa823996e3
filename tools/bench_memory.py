"""Benchmark of lesson 03's simulators (not a test): cache-simulator and bank-conflict throughput.

    python tools/bench_memory.py
"""

from __future__ import annotations

import time

import numpy as np

from course_lib.memory import PATTERNS, conflict_degree, make_trace, simulate_cache


def _rate(fn, items: int, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return items / best


def run() -> dict:
    """Accesses per second of ``simulate_cache`` on 10^6-access traces, per pattern and cache shape."""
    rng = np.random.default_rng(0)
    n = 1_000_000
    figures = {}
    for pattern in PATTERNS:
        trace = make_trace(pattern, 1 << 20, n, rng=rng)
        figures[f"cache_sim_{pattern}_256KiB_4way_accesses_per_s"] = _rate(
            lambda: simulate_cache(trace, 256 * 1024, 128, 4), n)
        figures[f"cache_sim_{pattern}_32KiB_16way_accesses_per_s"] = _rate(
            lambda: simulate_cache(trace, 32 * 1024, 128, 16), n, repeats=1)
    trace = make_trace("random", 1 << 20, 200_000, rng=rng)
    figures["cache_sim_random_32KiB_fully_assoc_accesses_per_s"] = _rate(
        lambda: simulate_cache(trace, 32 * 1024, 128, 256), 200_000, repeats=1)
    warps = rng.integers(0, 4096, size=(100_000, 32)) * 4
    figures["bank_conflict_warps_per_s"] = _rate(lambda: conflict_degree(warps), 100_000)
    figures["cache_sim_min_accesses_per_s_4_16way"] = min(
        v for k, v in figures.items() if k.startswith("cache_sim") and "fully" not in k)
    return figures


if __name__ == "__main__":
    for name, value in run().items():
        print(f"{name:55s} {value:14,.0f}")
