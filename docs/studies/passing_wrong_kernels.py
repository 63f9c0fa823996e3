"""Wrong kernels that lesson 09's checks accepted in the new learner study of December 2026.

Found by trying the design puzzles 09.16 to 09.24 as a new learner, without the answer key
(docs/studies/kernel_lab_study_2026-12.md). Each entry is (puzzle, kernel, one line on what is
wrong, demo). `check(puzzle, kernel)` passed when the study was made (it fails since branch
checks-23); `demo()` runs the kernel with `trace_launch` on
an input it gets wrong (or shows the cost it hides) and returns (got, want). Run this file to see
both; the lead can turn each entry into a regression test that expects check to fail.

Two "bypasses" at the end are correct kernels that skip the technique the puzzle teaches; they are
listed apart (BYPASSES), since refusing them is a design choice, not a correctness fix.
"""
import math

import numpy as np

from course_lib.checks import check
from course_lib.kernels import cuda
from course_lib.kernels.profile import profile_trace
from course_lib.kernels.puzzles import RADIUS, RMS_EPS, TAPS
from course_lib.kernels.tasks import BLOCK
from course_lib.kernels.trace import trace_launch

FULL_MASK = 0xFFFFFFFF


# 1. 09.17: the shared tile is float32 (copied from section 13's running maximum) for int32 data.
@cuda.jit
def scan_block_float_tile(x, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


def demo_scan_block_float_tile():
    x = np.ones(BLOCK, np.int32)
    x[0] = 2**24                                     # 2**24 + 1 is not a float32: every later prefix is off
    out = np.zeros(BLOCK, np.int32)
    trace_launch(scan_block_float_tile, 1, BLOCK, x, out)
    return out, np.cumsum(x, dtype=np.int64)


# 2. 09.18: the same float32 tile and a float carry, in the whole-array scan.
@cuda.jit
def scan_float_tile(x, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    carry = 0.0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        carry += s[BLOCK - 1]
        cuda.syncthreads()


def demo_scan_float_tile():
    x = np.full(300, 2**16 + 1, np.int32)            # prefixes pass 2**24 after 256 elements
    out = np.zeros(300, np.int32)
    trace_launch(scan_float_tile, 1, BLOCK, x, out)
    return out, np.cumsum(x, dtype=np.int64)


# 3. 09.18: walks at most five tiles; the first case's n is at most 593 over 40 seeds (< 5 * 128).
@cuda.jit
def scan_five_tiles(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, min(x.size, 5 * BLOCK), BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        carry += s[BLOCK - 1]
        cuda.syncthreads()


def demo_scan_five_tiles():
    x = np.ones(6 * BLOCK + 5, np.int32)
    out = np.full(x.size, -1, np.int32)
    trace_launch(scan_five_tiles, 1, BLOCK, x, out)
    return out, np.cumsum(x)


# 4. 09.22: the epsilon outside the square root, 1 / (sqrt(mean(x^2)) + eps): the row of zeros
#    still gives 0, and on the drawn rows the difference is ~1e-6 relative; on a row of small values
#    (|x| ~ 1e-3, mean(x^2) ~ eps) it is off by 40%.
@cuda.jit
def rmsnorm_eps_outside(x, g, out):
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    acc = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        acc += v * v
    s[t] = acc
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    inv = 1.0 / (math.sqrt(s[0] / cols) + RMS_EPS)
    for c in range(t, cols, BLOCK):
        out[r, c] = x[r, c] * inv * g[c]


def demo_rmsnorm_eps_outside():
    x = np.full((2, 150), 1e-3, np.float32)
    x[1] = 0.5
    g = np.ones(150, np.float32)
    out = np.zeros_like(x)
    trace_launch(rmsnorm_eps_outside, 2, BLOCK, x, g, out)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + RMS_EPS) * g
    return out, want


# 5. 09.23: each lane takes at most three nonzeros of its row (rows up to 96); the drawn rows are at
#    most ~100 long (cols 61 to 117), so this passes for most identities (it fails on 2 of 40 seeds).
@cuda.jit
def spmv_rows_up_to_96(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, min(indptr[r + 1], indptr[r] + 96), 32):
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0 and r < y.size:
        y[r] = acc


def demo_spmv_rows_up_to_96():
    cols = 200
    lengths = np.array([0, 3, 150, 40], np.int64)       # one row longer than three warps' width
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    rng = np.random.default_rng(0)
    indices = np.concatenate([np.sort(rng.choice(cols, n, replace=False)) for n in lengths]).astype(np.int32)
    data = rng.standard_normal(indices.size).astype(np.float32)
    x = rng.standard_normal(cols).astype(np.float32)
    y = np.zeros(lengths.size, np.float32)
    trace_launch(spmv_rows_up_to_96, 1, BLOCK, indptr, indices, data, x, y)
    want = [float(np.dot(data[indptr[r]:indptr[r + 1]], x[indices[indptr[r]:indptr[r + 1]]])) for r in range(4)]
    return y, np.array(want)


# 6. 09.24: stages the tile and halo, then loads the centre x[i] from global memory a second time:
#    x is read about 2n times, but the target budgets TAPS loads of w for every launched thread,
#    including the ones past the end, and that slack absorbs the n extra loads.
@cuda.jit
def conv1d_centre_loaded_twice(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    b0 = cuda.blockIdx.x * BLOCK
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        tile[t] = x[b0 - RADIUS + t] if b0 - RADIUS + t >= 0 else 0.0
        j = b0 + BLOCK + t
        tile[BLOCK + RADIUS + t] = x[j] if j < n else 0.0
    cuda.syncthreads()
    if i < n:
        acc = w[RADIUS] * x[i]                            # the second load of x[i]
        for q in range(TAPS):
            if q != RADIUS:
                acc += w[q] * tile[t + q]
        y[i] = acc


def demo_conv1d_centre_loaded_twice():
    n = 515
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    w = np.arange(1, TAPS + 1, dtype=np.float32)
    y = np.zeros(n, np.float32)
    prof = profile_trace(trace_launch(conv1d_centre_loaded_twice, -(-n // BLOCK), BLOCK, x, w, y))
    x_loads = sum(ins.accesses for ins in prof.instructions if ins.array == "x")
    blocks = -(-n // BLOCK)
    return x_loads, n + 2 * RADIUS * blocks             # got: ~2n loads of x; want: n plus the halos


# 7. 09.24: the right halo guarded with `j <= n` instead of `j < n`: it reads x[n] only when a block's
#    right halo starts 0, 1 or 2 elements before n, i.e. n % BLOCK in {0, 1, 2}; the drawn sizes
#    (515, 39, 1 here) miss that on 39 of 40 seeds.
@cuda.jit
def conv1d_right_guard_le(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    b0 = cuda.blockIdx.x * BLOCK
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        tile[t] = x[b0 - RADIUS + t] if b0 - RADIUS + t >= 0 else 0.0
        j = b0 + BLOCK + t
        tile[BLOCK + RADIUS + t] = x[j] if j <= n else 0.0        # should be j < n
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for q in range(TAPS):
            acc += w[q] * tile[t + q]
        y[i] = acc


def demo_conv1d_right_guard_le():
    n = 5 * BLOCK                                       # a multiple of BLOCK: the last halo starts at n
    x = np.ones(n, np.float32)
    w = np.ones(TAPS, np.float32)
    y = np.zeros(n, np.float32)
    try:
        trace_launch(conv1d_right_guard_le, n // BLOCK, BLOCK, x, w, y)
    except Exception as exc:                            # noqa: BLE001 (the tracer's out-of-bounds fault)
        print(f"    n = {n}: {str(exc).splitlines()[0][:160]}")
        return np.array([1]), np.array([0])             # got one out-of-bounds read, want none
    return np.array([0]), np.array([0])


PASSING_WRONG = [
    ("09.17", scan_block_float_tile, "float32 shared tile for an int32 scan: wrong once a prefix passes 2**24",
     demo_scan_block_float_tile),
    ("09.18", scan_float_tile, "float32 tile and carry for an int32 scan: wrong once a prefix passes 2**24",
     demo_scan_float_tile),
    ("09.18", scan_five_tiles, "walks at most five tiles: wrong for n > 640, a size the check never draws",
     demo_scan_five_tiles),
    ("09.22", rmsnorm_eps_outside, "eps outside the square root: 40% off on a row whose mean square is near eps",
     demo_rmsnorm_eps_outside),
    ("09.23", spmv_rows_up_to_96, "at most 96 nonzeros per row: wrong on a longer row (rows drawn are <= ~100)",
     demo_spmv_rows_up_to_96),
    ("09.24", conv1d_centre_loaded_twice, "x[i] loaded twice (about 2n loads of x) but within the load target",
     demo_conv1d_centre_loaded_twice),
    ("09.24", conv1d_right_guard_le, "right halo guarded with j <= n: reads x[n] when n % BLOCK is 0, 1 or 2",
     demo_conv1d_right_guard_le),
]


# Bypasses: correct on every input, but without the technique the puzzle names.
@cuda.jit
def scan_block_serial_thread0(x, out):
    """09.17: thread 0 scans the tile alone (127 serial steps) while 127 threads wait."""
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t == 0:
        for j in range(1, BLOCK):
            s[j] += s[j - 1]
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[t]


@cuda.jit
def warp_sum_serial_lane0(a, out):
    """09.19: lane 0 of each warp loads and adds its warp's 32 elements: no shuffle at all."""
    i = cuda.grid(1)
    if cuda.laneid == 0:
        v = 0.0
        for j in range(i, min(i + 32, a.size)):
            v += a[j]
        cuda.atomic.add(out, 0, v)


BYPASSES = [
    ("09.17", scan_block_serial_thread0, "a serial scan by thread 0 meets every target (no parallel scan needed)"),
    ("09.19", warp_sum_serial_lane0, "lane 0 sums its warp serially: no shuffle, yet 'no shared memory, one "
                                     "atomic per warp, one load per element' all hold"),
]


def _check_line(puzzle, kernel) -> str:
    """The check's verdict in one line: since branch checks-23 every kernel here fails it
    (tests/test_kernels_checks.py holds them as regression tests)."""
    try:
        return check(puzzle, kernel)
    except Exception as exc:                                # noqa: BLE001 (the check's ExerciseError)
        return f"refused: {str(exc).splitlines()[0][:150]}"


if __name__ == "__main__":
    for puzzle, kernel, what, demo in PASSING_WRONG:
        print(f"  {puzzle}: {_check_line(puzzle, kernel)}")  # passed when the study was made
        got, want = (np.asarray(v, np.float64).ravel() for v in demo())
        worst = int(np.argmax(np.abs(got - want) / (np.abs(want) + 1e-30)))
        print(f"  {puzzle}: {what}\n    element {worst}: got {got[worst]:.9g}, want {want[worst]:.9g}")
        assert got[worst] != want[worst]
    for puzzle, kernel, what in BYPASSES:
        print(f"  {puzzle} bypass: {what}\n    {_check_line(puzzle, kernel)}")
