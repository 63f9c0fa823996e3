"""Time a kernel on a real NVIDIA GPU with CUDA events, when one is present (optional).

Nothing in the course needs this: without a GPU, :func:`gpu_status` says why in one line and
:func:`measure_kernel` raises a clear RuntimeError. With one, the same ``@cuda.jit`` kernel the
learner checked on the simulator is compiled for the device, its arguments copied there once,
launched ``warmup`` times, then timed over ``repeats`` launches between two CUDA events.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_int
from .sim import gpu_present, simulator_selected
from .trace import Launch, dim3

__all__ = ["gpu_status", "measure_kernel"]


def gpu_status() -> tuple[bool, str]:
    """(True, device name) when numba can launch on a real GPU; else (False, one-line reason)."""
    if not gpu_present():
        return False, "no NVIDIA GPU on this machine: the kernels ran on numba's CPU simulator only"
    if simulator_selected():
        return False, ("numba is running its CPU simulator (NUMBA_ENABLE_CUDASIM is set): "
                       "unset it and restart the kernel to time on the GPU")
    try:
        from numba import cuda
        if not cuda.is_available():
            return False, "a GPU is present but numba cannot use it (no CUDA driver or toolkit found)"
        name = cuda.get_current_device().name
        return True, name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:        # a broken driver or toolkit: say so in one line
        return False, f"numba cannot use the GPU: {type(exc).__name__}: {exc}"


def measure_kernel(kernel, grid, block, args, repeats: int = 20, warmup: int = 2) -> float:
    """Median seconds per launch of ``kernel[grid, block](*args)`` on the GPU (CUDA events).

    Arrays in ``args`` are copied to the device once, before timing; scalars pass as they are.
    """
    ok, why = gpu_status()
    if not ok:
        raise RuntimeError(f"cannot time on a GPU: {why}")
    from numba import cuda
    launch = Launch(dim3("grid", grid), dim3("block", block))
    repeats = check_int("repeats", repeats, min_value=1, max_value=10_000)
    warmup = check_int("warmup", warmup, min_value=0, max_value=100)
    dev_args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    configured = kernel[launch.grid, launch.block]
    for _ in range(max(1, warmup)):               # the first launch also compiles
        configured(*dev_args)
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cuda.event(), cuda.event()
        start.record()
        configured(*dev_args)
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop) / 1e3)
    return float(np.median(times))
