"""The kernel lab: write real CUDA Python kernels (numba-cuda), check them, profile them.

    from course_lib.kernels import cuda          # numba.cuda; its CPU simulator when no GPU is present

Importing this package selects numba's CUDA simulator when the machine has no NVIDIA GPU
(``course_lib.kernels.sim``); that is the one global effect, and it must happen before numba is
imported, so it happens here. The parts:

* ``trace``    runs a kernel one CUDA thread at a time, checking and recording every access;
* ``profile``  turns a trace into per-warp counts (coalescing, bank conflicts, divergence,
               races) and predicts the time on a catalog accelerator;
* ``warp``     one warp as the pictures draw it: its lanes over time, and the sectors or
               banks one of its requests touches;
* ``tasks``    the kernels of lesson 09 and its puzzles, each with data, a NumPy reference, its
               FLOP and traffic formulas and cost targets; ``check_kernel`` checks one;
* ``measure``  times a kernel on a real GPU with CUDA events, when one is present.
"""

from __future__ import annotations

from .sim import gpu_present, select_simulator, simulator_selected

select_simulator()

from numba import cuda  # noqa: E402  (must follow select_simulator)

__all__ = ["cuda", "gpu_present", "simulator_selected"]
