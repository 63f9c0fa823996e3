"""Benchmark of lesson 02's SIMT simulator (and lesson 01's latency simulator). Not a test.

The SIMT simulator runs a divergent kernel (Collatz steps: a data-dependent loop around an
if/else) over 10,000 threads; numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs the
same kernel as a real ``@cuda.jit`` function in a subprocess. Both results must be identical;
the figure of merit is the ratio of their times. numba-cuda is optional: without it the
benchmark says so in one line.

    python tools/bench_simt.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

N_THREADS = 10_000
SEED = 20240
BLOCK = 256

_NUMBA_SCRIPT = r"""
import json, sys, time
import numpy as np
from numba import cuda

@cuda.jit
def collatz(start, steps):
    i = cuda.grid(1)
    if i < start.size:
        x = start[i]
        s = 0
        while x != 1:
            if (x & 1) == 0:
                x = x >> 1
            else:
                x = 3 * x + 1
            s += 1
        steps[i] = s

start = np.load(sys.argv[1])
steps = np.zeros_like(start)
block = int(sys.argv[3])
grid = (start.size + block - 1) // block
t0 = time.perf_counter()
collatz[grid, block](start, steps)
elapsed = time.perf_counter() - t0
np.save(sys.argv[2], steps)
print(json.dumps({"time_s": elapsed}))
"""


def _inputs(n=N_THREADS) -> np.ndarray:
    return np.random.default_rng(SEED).integers(1, 1000, size=n).astype(np.int64)


def _collatz_kernel():
    from course_lib.simt import If, Let, While
    return [Let("x", lambda v: v["start"][v["tid"]]), Let("steps", lambda v: 0),
            While(lambda v: v["x"] != 1,
                  [If(lambda v: (v["x"] & 1) == 0, then=[Let("x", lambda v: v["x"] >> 1)],
                      orelse=[Let("x", lambda v: 3 * v["x"] + 1)]),
                   Let("steps", lambda v: v["steps"] + 1)])]


def _time_simt(start, repeats=5):
    from course_lib.simt import run_simt
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = run_simt(_collatz_kernel(), start.size, {"start": start}, trace_warp=None)
        best = min(best, time.perf_counter() - t0)
    return best, result


def _time_numba(start, tmp: Path):
    """Run the kernel under numba-cuda's simulator in a subprocess; None if numba is missing."""
    import os
    import importlib.util
    if importlib.util.find_spec("numba") is None:
        return None, "numba-cuda not installed: pip install numba-cuda to compare with its CUDA simulator"
    inp, out = tmp / "start.npy", tmp / "steps.npy"
    np.save(inp, start)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", _NUMBA_SCRIPT, str(inp), str(out), str(BLOCK)],
                          env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"numba-cuda simulator failed: {tail[:160]}"
    return (json.loads(proc.stdout.strip().splitlines()[-1])["time_s"], np.load(out)), ""


def _latency_sim_rate() -> float:
    from course_lib.latency import simulate_latency_hiding
    n = np.arange(1, 65)
    t0 = time.perf_counter()
    simulate_latency_hiding(n, 40, 560, bursts=4000)
    return n.size * 4000 / (time.perf_counter() - t0)


def run(sizes=(N_THREADS, 4 * N_THREADS)) -> dict:
    """Time both simulators at each thread count; the ratio grows with the count because the
    CUDA simulator pays per thread and the vectorised one mostly per instruction."""
    import tempfile
    figures = {"latency_sim_bursts_per_s": round(_latency_sim_rate()), "target_speedup": 100}
    for n in sizes:
        start = _inputs(n)
        t_simt, result = _time_simt(start)
        figures[f"simt_{n}_threads_time_s"] = round(t_simt, 4)
        figures[f"simt_{n}_threads_per_s"] = round(n / t_simt)
        figures[f"simt_{n}_efficiency_collatz"] = round(result.simt_efficiency, 4)
        with tempfile.TemporaryDirectory() as tmp:
            numba, why = _time_numba(start, Path(tmp))
        if numba is None:
            figures["numba_cudasim"] = why
            return figures
        t_numba, steps = numba
        figures[f"numba_cudasim_{n}_threads_time_s"] = round(t_numba, 3)
        figures[f"results_identical_{n}"] = bool(np.array_equal(steps, result.variables["steps"]))
        figures[f"speedup_vs_numba_cudasim_{n}"] = round(t_numba / t_simt, 1)
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:28s} {value}")
