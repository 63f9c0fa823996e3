"""The kernel lab's correct but slow kernels, with their data: exercises 09.14 and 09.15 profile them.

``slow_launch(exercise_id)`` returns ``(kernel, grid, block, args)``; ``trace_launch(kernel, grid,
block, *args)`` runs it. The kernels are the ones the exercises print; the answers live elsewhere
(the exercise checks compute them from these kernels' traced profiles).
"""

from __future__ import annotations

import numpy as np

from course_lib._validate import check_choice

__all__ = ["slow_launch", "ROWS", "COLS"]

ROWS, COLS = 128, 24          # 09.14's matrix (float32, row-major); 09.15 reads 32-wide rows
cuda = None                   # the kernel lab's cuda, imported on first use (the tracer swaps this global)


def _import_cuda():
    global cuda
    from course_lib.kernels import cuda


def _row_sums():
    _import_cuda()

    @cuda.jit
    def row_sums(a, out):
        r = cuda.grid(1)
        if r < a.shape[0]:
            s = 0.0
            for c in range(a.shape[1]):
                s += a[r, c]
            out[r] = s
    return row_sums


def _staged_row_sums():
    _import_cuda()

    @cuda.jit
    def staged_row_sums(a, out):
        tile = cuda.shared.array((32, 32), np.float32)
        t = cuda.threadIdx.x
        r0 = cuda.blockIdx.x * 32
        for r in range(32):                  # lane t loads column t of 32 rows: coalesced
            tile[r, t] = a[r0 + r, t]
        cuda.syncthreads()
        s = 0.0
        for c in range(32):                  # lane t sums row t of the tile
            s += tile[t, c]
        out[r0 + t] = s
    return staged_row_sums


def slow_launch(exercise_id: str):
    """``(kernel, grid, block, args)`` of the correct but slow kernel of exercise 09.14 or 09.15,
    with its data (random float32): ``trace_launch(kernel, grid, block, *args)`` runs it."""
    exercise_id = check_choice("exercise_id", exercise_id, ("09.14", "09.15"))
    rng = np.random.default_rng(914)
    if exercise_id == "09.14":
        a = rng.standard_normal((ROWS, COLS)).astype(np.float32)
        return _row_sums(), ROWS // 64, 64, (a, np.zeros(ROWS, np.float32))
    a = rng.standard_normal((ROWS, 32)).astype(np.float32)
    return _staged_row_sums(), ROWS // 32, 32, (a, np.zeros(ROWS, np.float32))
