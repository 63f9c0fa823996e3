"""Benchmark (not a test): NumPy FlashAttention against naive attention, time and memory.

    python tools/bench_attention.py

* time at N = 4096, d = 64 (float32): FlashAttention's best of 5 against naive's best of 5;
  the target is flash <= 2x naive. Timed twice, in child processes: with the BLAS library's
  default threads and with one BLAS thread. FlashAttention makes many block-sized matmul
  calls; on a loaded machine a multi-threaded BLAS spends much of each small call waiting for
  its threads, so the one-thread figure is the fairer comparison of the two algorithms.
* peak extra memory at N = 16384, d = 64 (float32) of FlashAttention, measured with
  ``tracemalloc`` (NumPy reports its allocations to it); the target is < 64 MB. Naive attention
  would need the N x N score matrix, 16384^2 * 4 B = 1.07 GB in float32 (more with its
  temporaries): computed with ``attention_memory_bytes`` rather than allocated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_lib.attention import (DEFAULT_BLOCK_SIZE, attention_memory_bytes,  # noqa: E402
                                  flash_attention, naive_attention)

__all__ = ["run"]


def _best_time_s(fn, *args, repeats=5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def _peak_bytes(fn, *args) -> int:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _timings() -> dict:
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4096, 64)).astype(np.float32)
    assert np.allclose(flash_attention(q, k, v), naive_attention(q, k, v), rtol=1e-4, atol=1e-5)
    return {"naive": _best_time_s(naive_attention, q, k, v), "flash": _best_time_s(flash_attention, q, k, v)}


def _timings_in_child(threads: str | None) -> dict:
    env = dict(os.environ)
    if threads is not None:
        env.update(OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    out = subprocess.run([sys.executable, __file__, "--timings"], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run() -> dict:
    default = _timings_in_child(None)
    single = _timings_in_child("1")

    n_long = 16384
    q, k, v = np.random.default_rng(1).standard_normal((3, n_long, 64)).astype(np.float32)
    flash_peak = _peak_bytes(flash_attention, q, k, v)
    naive_need, _ = attention_memory_bytes(n_long, 64, bytes_per_element=4, block_size=DEFAULT_BLOCK_SIZE)
    return {
        "attention N=4096 d=64 naive time, 1 BLAS thread (s)": round(single["naive"], 4),
        "attention N=4096 d=64 flash time, 1 BLAS thread (s)": round(single["flash"], 4),
        "attention flash / naive time, 1 BLAS thread (target <= 2)": round(single["flash"] / single["naive"], 2),
        "attention flash / naive time, default BLAS threads": round(default["flash"] / default["naive"], 2),
        "attention N=16384 flash peak extra memory (MB, target < 64)": round(flash_peak / 1e6, 1),
        "attention N=16384 naive score matrix (GB, computed)": round(naive_need / 1e9, 2),
        "attention default block size": DEFAULT_BLOCK_SIZE,
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--timings"]:
        print(json.dumps(_timings()))
        sys.exit(0)
    for name, value in run().items():
        print(f"{name:62s} {value}")
