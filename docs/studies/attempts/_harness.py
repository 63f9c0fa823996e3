"""Scratch harness for the learner study: run check() on one kernel, time it, print the outcome."""
import math  # noqa: F401
import time

import numpy as np  # noqa: F401

from course_lib.checks import check, hint  # noqa: F401
from course_lib.kernels import cuda  # noqa: F401
from course_lib.kernels.puzzles import MICRO, NBINS, RADIUS, RMS_EPS, RT_K, RT_THREADS, TAPS  # noqa: F401
from course_lib.kernels.tasks import BLOCK, BLOCK_2D, TILE, TILE_T, run_task  # noqa: F401

FULL_MASK = 0xFFFFFFFF


def attempt(label, pid, kernel):
    t0 = time.perf_counter()
    try:
        check(pid, kernel)
        ok = True
        msg = "(passed)"
    except Exception as exc:  # noqa: BLE001
        ok = False
        msg = f"{type(exc).__name__}: {exc}"
    dt = time.perf_counter() - t0
    print(f"===== {label} [{pid}] {'PASS' if ok else 'FAIL'} in {dt:.2f}s")
    print(msg)
    print()
    return ok
