"""One timer for every measurement of this machine: the best of several runs, after a warm-up.

    t = min(t_1, ..., t_k),   k >= repeats and t_1 + ... + t_k >= min_time_s

An untimed warm-up call first (first-touch page faults, BLAS thread start-up, caches), then the
least disturbed of the timed runs: the minimum, because noise only ever adds time.
"""

from __future__ import annotations

import time
from typing import Callable

from .._validate import check_int, check_number

__all__ = ["time_best"]


def time_best(fn: Callable[[], object], repeats: int = 5, min_time_s: float = 0.0, warmup: int = 1,
              max_runs: int = 1000) -> float:
    """Best wall time of ``fn()`` over ``repeats`` runs (seconds), after ``warmup`` untimed calls;
    keeps going until ``min_time_s`` of timed calls (at most ``max_runs`` runs)."""
    if not callable(fn):
        raise TypeError("fn must be a callable taking no arguments")
    repeats = check_int("repeats", repeats, min_value=1, max_value=10_000)
    min_time_s = check_number("min_time_s", min_time_s, min_value=0, max_value=10)
    warmup = check_int("warmup", warmup, min_value=0, max_value=1000)
    max_runs = check_int("max_runs", max_runs, min_value=1, max_value=100_000)
    for _ in range(warmup):
        fn()
    best = float("inf")
    spent = 0.0
    runs = 0
    while runs < repeats or spent < min_time_s:
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
        if runs >= max_runs:
            break
    return best
