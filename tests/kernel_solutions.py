"""Reference kernels for every lesson-09 task, and deliberately broken variants.

Shared by tests/test_kernels.py and tools/bench_kernels.py. Each good kernel passes
``check_kernel``; each broken one fails it for the reason in its name.
"""

import math

import numpy as np

from course_lib.kernels import cuda
from course_lib.kernels.tasks import BLOCK, TILE, TILE_T

# ----------------------------------------------------------------------------- good kernels


@cuda.jit
def map_kernel(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 10 * a[i] + 1


@cuda.jit
def zip_kernel(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def map2d_kernel(a, out):
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c] + 1


@cuda.jit
def outer_kernel(a, b, out):
    c, r = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r] * b[c]


@cuda.jit
def block_sum_kernel(a, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def dot_kernel(a, b, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] * b[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def copy_kernel(a, out):
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c]


@cuda.jit
def transpose_kernel(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE_T + tx
    r = cuda.blockIdx.y * TILE_T + ty
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]
    cuda.syncthreads()
    oc = cuda.blockIdx.y * TILE_T + tx          # output column = input row
    orow = cuda.blockIdx.x * TILE_T + ty        # output row = input column
    if orow < out.shape[0] and oc < out.shape[1]:
        out[orow, oc] = tile[tx, ty]


@cuda.jit
def transpose_padded_kernel(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T + 1), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    c = cuda.blockIdx.x * TILE_T + tx
    r = cuda.blockIdx.y * TILE_T + ty
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]
    cuda.syncthreads()
    oc = cuda.blockIdx.y * TILE_T + tx
    orow = cuda.blockIdx.x * TILE_T + ty
    if orow < out.shape[0] and oc < out.shape[1]:
        out[orow, oc] = tile[tx, ty]


@cuda.jit
def matmul_kernel(a, b, out):
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = 0.0
        for p in range(a.shape[1]):
            acc += a[i, p] * b[p, j]
        out[i, j] = acc


@cuda.jit
def matmul_tiled_kernel(a, b, out):
    sa = cuda.shared.array((TILE, TILE), np.float32)
    sb = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    j = cuda.blockIdx.x * TILE + tx
    i = cuda.blockIdx.y * TILE + ty
    acc = 0.0
    for t0 in range(0, a.shape[1], TILE):
        sa[ty, tx] = a[i, t0 + tx] if i < a.shape[0] and t0 + tx < a.shape[1] else 0.0
        sb[ty, tx] = b[t0 + ty, j] if t0 + ty < b.shape[0] and j < b.shape[1] else 0.0
        cuda.syncthreads()
        for p in range(TILE):
            acc += sa[ty, p] * sb[p, tx]
        cuda.syncthreads()
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = acc


@cuda.jit
def softmax_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    for c in range(t, cols, BLOCK):
        m = max(m, x[r, c])
    s[t] = m
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] = max(s[t], s[t + stride])
        cuda.syncthreads()
        stride //= 2
    m = s[0]
    cuda.syncthreads()
    total = 0.0
    for c in range(t, cols, BLOCK):
        total += math.exp(x[r, c] - m)
    s[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = s[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = math.exp(x[r, c] - m) / total


@cuda.jit
def online_softmax_kernel(x, out):
    sm = cuda.shared.array(BLOCK, np.float32)
    ss = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    total = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        if v > m:
            total = total * math.exp(m - v) + 1.0
            m = v
        elif v > -math.inf:                    # a masked (-inf) element adds nothing
            total += math.exp(v - m)
    sm[t] = m
    ss[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            m1, m2 = sm[t], sm[t + stride]
            mm = max(m1, m2)
            s1 = ss[t] * math.exp(m1 - mm) if m1 > -math.inf else 0.0
            s2 = ss[t + stride] * math.exp(m2 - mm) if m2 > -math.inf else 0.0
            sm[t] = mm
            ss[t] = s1 + s2
        cuda.syncthreads()
        stride //= 2
    m = sm[0]
    total = ss[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = math.exp(x[r, c] - m) / total


GOOD = {
    "map": map_kernel, "zip": zip_kernel, "map2d": map2d_kernel, "outer": outer_kernel,
    "block_sum": block_sum_kernel, "dot": dot_kernel, "copy": copy_kernel,
    "transpose": transpose_kernel, "transpose_padded": transpose_padded_kernel,
    "matmul": matmul_kernel, "matmul_tiled": matmul_tiled_kernel,
    "softmax": softmax_kernel, "online_softmax": online_softmax_kernel,
}


# ----------------------------------------------------------------------------- broken kernels
# Each fails check_kernel on its task for the reason in its name (the tests check the message).


@cuda.jit
def map_no_guard_kernel(a, out):
    i = cuda.grid(1)
    out[i] = 10 * a[i] + 1                     # the last block's extra threads run off the end


@cuda.jit
def block_sum_no_sync_kernel(a, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]              # reads a partial sum another thread has not finished
        stride //= 2                           # (no syncthreads between the steps)
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def block_sum_serial_no_sync_kernel(a, out):
    # The last thread adds up the block's values without waiting at a barrier. The traced
    # executor runs a block's threads in order, so it happens to see every value and the sum is
    # right; on a GPU the warps run in any order. The check must still refuse it.
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    if t == BLOCK - 1:
        total = 0.0
        for j in range(BLOCK):
            total += s[j]
        out[cuda.blockIdx.x] = total


@cuda.jit
def dot_atomic_per_thread_kernel(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(out, 0, a[i] * b[i])   # one atomic per element, all on one address


@cuda.jit
def copy_strided_kernel(a, out):
    # Every element is copied exactly once, but consecutive threads (consecutive c) take
    # elements `rows` apart in memory: each lane of a warp lands in its own 32-byte sector.
    c, r = cuda.grid(2)
    rows, cols = a.shape
    if r < rows and c < cols:
        k = c * rows + r
        rr = k // cols
        cc = k - rr * cols
        out[rr, cc] = a[rr, cc]


@cuda.jit
def matmul_tiled_twice_kernel(a, b, out):
    # The tiled matmul, except that each thread reads its element of A and of B twice.
    sa = cuda.shared.array((TILE, TILE), np.float32)
    sb = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    j = cuda.blockIdx.x * TILE + tx
    i = cuda.blockIdx.y * TILE + ty
    acc = 0.0
    for t0 in range(0, a.shape[1], TILE):
        sa[ty, tx] = 0.5 * (a[i, t0 + tx] + a[i, t0 + tx]) if i < a.shape[0] and t0 + tx < a.shape[1] else 0.0
        sb[ty, tx] = 0.5 * (b[t0 + ty, j] + b[t0 + ty, j]) if t0 + ty < b.shape[0] and j < b.shape[1] else 0.0
        cuda.syncthreads()
        for p in range(TILE):
            acc += sa[ty, p] * sb[p, tx]
        cuda.syncthreads()
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = acc


#: variant name -> (task it is checked against, kernel, words the KernelCheckError must contain).
#: The last four are good kernels of *another* task: correct, but over this task's cost target.
BROKEN = {
    "map_no_guard": ("map", map_no_guard_kernel, "out of bounds"),
    "block_sum_no_sync": ("block_sum", block_sum_no_sync_kernel, "shared-memory race"),
    "block_sum_serial_no_sync": ("block_sum", block_sum_serial_no_sync_kernel, "shared-memory race"),
    "dot_atomic_per_thread": ("dot", dot_atomic_per_thread_kernel, "atomics at most one per block"),
    "copy_strided": ("copy", copy_strided_kernel, "coalescing efficiency"),
    "transpose_unpadded": ("transpose_padded", transpose_kernel, "bank conflicts"),
    "matmul_tiled_twice": ("matmul_tiled", matmul_tiled_twice_kernel, "global loads at most"),
    "matmul_untiled": ("matmul_tiled", matmul_kernel, "global loads at most"),
    "softmax_three_pass": ("online_softmax", softmax_kernel, "global loads at most two per element"),
}


# ----------------------------------------------------------------------------- issue 23: wrong kernels
# that once passed their checks, and a right one that was refused.


@cuda.jit
def softmax_no_max_kernel(x, out):
    # exp(x) without subtracting the row's maximum: right in exact arithmetic, but exp(100)
    # overflows float32 (and exp(800) overflows even float64), so large rows come out NaN or inf.
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    total = 0.0
    for c in range(t, cols, BLOCK):
        total += math.exp(x[r, c])
    s[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = s[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = math.exp(x[r, c]) / total


@cuda.jit
def online_softmax_zero_start_kernel(x, out):
    # The online softmax with each thread's running maximum starting at 0.0 instead of -inf.
    # A thread with elements keeps a consistent (m, s) pair either way, but a thread with none
    # (rows shorter than the block) enters the merge as (0, 0): when the row's values are far
    # below 0, every exp(v - 0) underflows and the row's sum is 0.
    sm = cuda.shared.array(BLOCK, np.float32)
    ss = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m = 0.0
    total = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        if v > m:
            total = total * math.exp(m - v) + 1.0
            m = v
        else:
            total += math.exp(v - m)
    sm[t] = m
    ss[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            m1, m2 = sm[t], sm[t + stride]
            mm = max(m1, m2)
            sm[t] = mm
            ss[t] = ss[t] * math.exp(m1 - mm) + ss[t + stride] * math.exp(m2 - mm)
        cuda.syncthreads()
        stride //= 2
    m = sm[0]
    total = ss[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = math.exp(x[r, c] - m) / total


@cuda.jit
def online_softmax_unguarded_merge_kernel(x, out):
    # The merge rule of the hint taken literally: s_a exp(m_a - m) + s_b exp(m_b - m). Two threads
    # that had no element (m = -inf) give exp(-inf - -inf) = exp(nan): rows shorter than the block.
    sm = cuda.shared.array(BLOCK, np.float32)
    ss = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m = -math.inf
    total = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        if v > m:
            total = total * math.exp(m - v) + 1.0
            m = v
        else:
            total += math.exp(v - m)
    sm[t] = m
    ss[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            m1, m2 = sm[t], sm[t + stride]
            mm = max(m1, m2)
            sm[t] = mm
            ss[t] = ss[t] * math.exp(m1 - mm) + ss[t + stride] * math.exp(m2 - mm)
        cuda.syncthreads()
        stride //= 2
    m = sm[0]
    total = ss[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = math.exp(x[r, c] - m) / total


@cuda.jit
def block_sum_barrier_per_branch_kernel(a, out):
    # One syncthreads in each branch of an if: every thread passes the same number of barriers,
    # but not the same barrier. CUDA leaves that undefined (the barrier must be reached by every
    # thread of the block at the same call).
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def copy_accumulate_kernel(a, out):
    # out += a: right when out starts at zero, but it reads out as well: 1.5x a copy's bytes,
    # and on a GPU out holds whatever the allocation held.
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] += a[r, c]


@cuda.jit
def dot_shared_atomic_kernel(a, b, out):
    # Each thread adds its product into one shared-memory float with a shared atomic (cheap: the
    # SM's own memory, not a trip to DRAM), then one thread per block adds the block's sum into
    # out[0] with a single global atomic. Right, and within the one-global-atomic-per-block target.
    acc = cuda.shared.array(1, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t == 0:
        acc[0] = 0.0
    cuda.syncthreads()
    if i < a.size:
        cuda.atomic.add(acc, 0, a[i] * b[i])
    cuda.syncthreads()
    if t == 0:
        cuda.atomic.add(out, 0, acc[0])


#: Issue 23's wrong kernels that passed: variant -> (task, kernel, failure class, words in the message).
ONCE_PASSED = {
    "softmax_no_max": ("softmax", softmax_no_max_kernel, "numerics", "maximum"),
    "online_softmax_no_max": ("online_softmax", softmax_no_max_kernel, "numerics", "maximum"),
    "online_softmax_zero_start": ("online_softmax", online_softmax_zero_start_kernel, "numerics", "-inf"),
    "online_softmax_unguarded_merge": ("online_softmax", online_softmax_unguarded_merge_kernel, "numerics", "-inf"),
    "block_sum_barrier_per_branch": ("block_sum", block_sum_barrier_per_branch_kernel, "barrier", "different syncthreads"),
    "copy_accumulate": ("copy", copy_accumulate_kernel, "uninitialized", "before"),
}


# ----------------------------------------------------------------------------- issue 23: design puzzles

from course_lib.kernels.puzzles import MICRO, NBINS, RADIUS, RMS_EPS, RT_K, RT_THREADS, TAPS  # noqa: E402
from course_lib.kernels.trace import FULL_MASK  # noqa: E402


@cuda.jit
def histogram_kernel(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


@cuda.jit
def histogram_global_atomics_kernel(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


@cuda.jit
def histogram_no_zero_kernel(x, bins):
    h = cuda.shared.array(NBINS, np.int32)          # never cleared: starts as garbage
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


@cuda.jit
def histogram_no_sync_kernel(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    if t < NBINS:                                   # merges before the other warps have counted
        cuda.atomic.add(bins, t, h[t])


@cuda.jit
def histogram_unguarded_kernel(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(h, x[i], 1)                     # the last block's extra threads read past x
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


@cuda.jit
def scan_block_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
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


@cuda.jit
def scan_block_one_barrier_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        if t >= d:
            s[t] += s[t - d]                        # thread t - d may already have added
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


@cuda.jit
def scan_block_exclusive_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i - 1] if 0 < t and i - 1 < x.size else 0     # shifted by one: exclusive
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


@cuda.jit
def scan_block_unguarded_store_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
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
    out[i] = s[t]                                   # the last block's extra threads write past out


@cuda.jit
def scan_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
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
        cuda.syncthreads()                          # every thread has read s[BLOCK - 1] before reuse


@cuda.jit
def scan_no_carry_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
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
            out[i] = s[t]
        cuda.syncthreads()


@cuda.jit
def scan_carry_race_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0            # the next tile overwrites s before all read it
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


@cuda.jit
def scan_one_tile_kernel(x, out):
    # Scans the first tile only: right below BLOCK elements, wrong past it.
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    s[t] = x[t] if t < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if t < x.size:
        out[t] = s[t]


@cuda.jit
def warp_sum_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def warp_sum_guarded_shuffle_kernel(a, out):
    i = cuda.grid(1)
    if i < a.size:                                  # lanes past the end never reach the shuffle
        v = a[i]
        d = 16
        while d > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, d)
            d //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, v)


@cuda.jit
def warp_sum_shfl_up_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_up_sync(FULL_MASK, v, d)     # the total gathers in lane 31, not lane 0
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@cuda.jit
def warp_sum_shared_kernel(a, out):
    s = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    if t % 32 == 0:
        v = 0.0
        for j in range(32):
            v += s[t + j]
        cuda.atomic.add(out, 0, v)


@cuda.jit
def matmul_register_kernel(a, b, out):
    sa = cuda.shared.array((TILE, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i0 = cuda.blockIdx.y * TILE + ty                # rows i0 and i0 + RT_THREADS
    j0 = cuda.blockIdx.x * TILE + tx                # columns j0 and j0 + RT_THREADS
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    c00 = c01 = c10 = c11 = 0.0
    for k0 in range(0, k, RT_K):
        for r in range(MICRO):
            i = i0 + r * RT_THREADS
            sa[ty + r * RT_THREADS, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
            j = j0 + r * RT_THREADS
            sb[ty, tx + r * RT_THREADS] = b[k0 + ty, j] if k0 + ty < k and j < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0, a1 = sa[ty, p], sa[ty + RT_THREADS, p]
            b0, b1 = sb[p, tx], sb[p, tx + RT_THREADS]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        cuda.syncthreads()
    i1, j1 = i0 + RT_THREADS, j0 + RT_THREADS
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j1 < n:
        out[i0, j1] = c01
    if i1 < m and j0 < n:
        out[i1, j0] = c10
    if i1 < m and j1 < n:
        out[i1, j1] = c11


@cuda.jit
def matmul_register_shared_reads_kernel(a, b, out):
    # The micro-tile, but every product reads its operands from shared memory again.
    sa = cuda.shared.array((TILE, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i0 = cuda.blockIdx.y * TILE + ty
    j0 = cuda.blockIdx.x * TILE + tx
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    c00 = c01 = c10 = c11 = 0.0
    for k0 in range(0, k, RT_K):
        for r in range(MICRO):
            i = i0 + r * RT_THREADS
            sa[ty + r * RT_THREADS, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
            j = j0 + r * RT_THREADS
            sb[ty, tx + r * RT_THREADS] = b[k0 + ty, j] if k0 + ty < k and j < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            c00 += sa[ty, p] * sb[p, tx]
            c01 += sa[ty, p] * sb[p, tx + RT_THREADS]
            c10 += sa[ty + RT_THREADS, p] * sb[p, tx]
            c11 += sa[ty + RT_THREADS, p] * sb[p, tx + RT_THREADS]
        cuda.syncthreads()
    i1, j1 = i0 + RT_THREADS, j0 + RT_THREADS
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j1 < n:
        out[i0, j1] = c01
    if i1 < m and j0 < n:
        out[i1, j0] = c10
    if i1 < m and j1 < n:
        out[i1, j1] = c11


@cuda.jit
def matmul_register_one_barrier_kernel(a, b, out):
    sa = cuda.shared.array((TILE, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i0 = cuda.blockIdx.y * TILE + ty
    j0 = cuda.blockIdx.x * TILE + tx
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    c00 = c01 = c10 = c11 = 0.0
    for k0 in range(0, k, RT_K):
        for r in range(MICRO):
            i = i0 + r * RT_THREADS
            sa[ty + r * RT_THREADS, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
            j = j0 + r * RT_THREADS
            sb[ty, tx + r * RT_THREADS] = b[k0 + ty, j] if k0 + ty < k and j < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0, a1 = sa[ty, p], sa[ty + RT_THREADS, p]
            b0, b1 = sb[p, tx], sb[p, tx + RT_THREADS]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
    i1, j1 = i0 + RT_THREADS, j0 + RT_THREADS
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j1 < n:
        out[i0, j1] = c01
    if i1 < m and j0 < n:
        out[i1, j0] = c10
    if i1 < m and j1 < n:
        out[i1, j1] = c11


@cuda.jit
def matmul_register_unguarded_kernel(a, b, out):
    sa = cuda.shared.array((TILE, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i0 = cuda.blockIdx.y * TILE + ty
    j0 = cuda.blockIdx.x * TILE + tx
    k = a.shape[1]
    c00 = c01 = c10 = c11 = 0.0
    for k0 in range(0, k, RT_K):
        for r in range(MICRO):
            sa[ty + r * RT_THREADS, tx] = a[i0 + r * RT_THREADS, k0 + tx]     # no guard: edge tiles
            sb[ty, tx + r * RT_THREADS] = b[k0 + ty, j0 + r * RT_THREADS]
        cuda.syncthreads()
        for p in range(RT_K):
            a0, a1 = sa[ty, p], sa[ty + RT_THREADS, p]
            b0, b1 = sb[p, tx], sb[p, tx + RT_THREADS]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        cuda.syncthreads()
    out[i0, j0] = c00
    out[i0, j0 + RT_THREADS] = c01
    out[i0 + RT_THREADS, j0] = c10
    out[i0 + RT_THREADS, j0 + RT_THREADS] = c11


@cuda.jit
def int8_gemv_kernel(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += w[r, c] * x[c]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * (w_scale[r] * x_scale[0])


@cuda.jit
def int8_gemv_thread_per_row_kernel(w, w_scale, x, x_scale, y):
    r = cuda.grid(1)
    if r < w.shape[0]:
        acc = 0
        for c in range(w.shape[1]):
            acc += w[r, c] * x[c]
        y[r] = acc * (w_scale[r] * x_scale[0])


@cuda.jit
def int8_gemv_no_x_scale_kernel(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += w[r, c] * x[c]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * w_scale[r]                     # the activations' scale forgotten


@cuda.jit
def int8_gemv_unguarded_lane_kernel(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        acc = w[r, lane] * x[lane]                  # assumes at least 32 columns
        for c in range(lane + 32, w.shape[1], 32):
            acc += w[r, c] * x[c]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * (w_scale[r] * x_scale[0])


def _rms_kernel(eps_inside=True, divide_by_cols=True, three_passes=False):
    @cuda.jit
    def rmsnorm(x, g, out):
        s = cuda.shared.array(BLOCK, np.float32)
        r = cuda.blockIdx.x
        t = cuda.threadIdx.x
        cols = x.shape[1]
        acc = 0.0
        for c in range(t, cols, BLOCK):
            acc += x[r, c] * x[r, c] if three_passes else x[r, c] ** 2
        s[t] = acc
        cuda.syncthreads()
        stride = BLOCK // 2
        while stride > 0:
            if t < stride:
                s[t] += s[t + stride]
            cuda.syncthreads()
            stride //= 2
        mean = s[0] / cols if divide_by_cols else s[0]
        scale = 1.0 / math.sqrt(mean + RMS_EPS) if eps_inside else 1.0 / math.sqrt(mean)
        for c in range(t, cols, BLOCK):
            out[r, c] = x[r, c] * scale * g[c]
    return rmsnorm


rmsnorm_kernel = _rms_kernel()
rmsnorm_no_eps_kernel = _rms_kernel(eps_inside=False)
rmsnorm_sum_not_mean_kernel = _rms_kernel(divide_by_cols=False)
rmsnorm_three_reads_kernel = _rms_kernel(three_passes=True)


@cuda.jit
def spmv_csr_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + lane, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < y.size:
        y[r] = acc


@cuda.jit
def spmv_scalar_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1)
    if r < y.size:
        acc = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            acc += data[j] * x[indices[j]]
        y[r] = acc


@cuda.jit
def spmv_skip_empty_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + lane, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < y.size and indptr[r + 1] > indptr[r]:    # empty rows never written
        y[r] = acc


@cuda.jit
def spmv_inclusive_end_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + lane, indptr[r + 1] + 1, 32):   # one past the row's end
            acc += data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < y.size:
        y[r] = acc


@cuda.jit
def conv1d_kernel(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        left = i - RADIUS
        tile[t] = x[left] if left >= 0 and left < n else 0.0
        right = cuda.blockIdx.x * BLOCK + BLOCK + t
        tile[t + BLOCK + RADIUS] = x[right] if right < n else 0.0
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            acc += w[j] * tile[t + j]
        y[i] = acc


@cuda.jit
def conv1d_direct_kernel(x, w, y):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            p = i + j - RADIUS
            if 0 <= p < n:
                acc += w[j] * x[p]
        y[i] = acc


@cuda.jit
def conv1d_halo_unguarded_kernel(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        tile[t] = x[i - RADIUS]                     # block 0's left halo is x[-3 .. -1]
        right = cuda.blockIdx.x * BLOCK + BLOCK + t
        tile[t + BLOCK + RADIUS] = x[right] if right < n else 0.0
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            acc += w[j] * tile[t + j]
        y[i] = acc


@cuda.jit
def conv1d_no_sync_kernel(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        left = i - RADIUS
        tile[t] = x[left] if left >= 0 and left < n else 0.0
        right = cuda.blockIdx.x * BLOCK + BLOCK + t
        tile[t + BLOCK + RADIUS] = x[right] if right < n else 0.0
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            acc += w[j] * tile[t + j]
        y[i] = acc


@cuda.jit
def conv1d_left_halo_only_kernel(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        left = i - RADIUS
        tile[t] = x[left] if left >= 0 and left < n else 0.0
        tile[t + BLOCK + RADIUS] = 0.0              # the right halo taken as zeros
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            acc += w[j] * tile[t + j]
        y[i] = acc


GOOD.update({
    "histogram": histogram_kernel, "scan_block": scan_block_kernel, "scan": scan_kernel,
    "warp_sum": warp_sum_kernel, "matmul_register": matmul_register_kernel,
    "int8_gemv": int8_gemv_kernel, "rmsnorm": rmsnorm_kernel, "spmv_csr": spmv_csr_kernel,
    "conv1d": conv1d_kernel,
})

#: Broken variants of the design puzzles: variant -> (task, kernel, failure class, words in the message).
PUZZLE_BROKEN = {
    "histogram_global_atomics": ("histogram", histogram_global_atomics_kernel, "cost", "global atomics at most"),
    "histogram_no_zero": ("histogram", histogram_no_zero_kernel, "uninitialized", "uninitialized shared memory"),
    "histogram_no_sync": ("histogram", histogram_no_sync_kernel, "race", "shared-memory race"),
    "histogram_unguarded": ("histogram", histogram_unguarded_kernel, "out of bounds", "out of bounds"),
    "scan_block_one_barrier": ("scan_block", scan_block_one_barrier_kernel, "race", "shared-memory race"),
    "scan_block_exclusive": ("scan_block", scan_block_exclusive_kernel, "wrong", "inclusive"),
    "scan_block_unguarded_store": ("scan_block", scan_block_unguarded_store_kernel, "out of bounds", "out of bounds"),
    "scan_no_carry": ("scan", scan_no_carry_kernel, "wrong", "carried"),
    "scan_carry_race": ("scan", scan_carry_race_kernel, "race", "shared-memory race"),
    "scan_one_tile": ("scan", scan_one_tile_kernel, "wrong", "walks every tile"),
    "scan_block_kernel_for_scan": ("scan", scan_block_kernel, "wrong", "walks every tile"),
    "warp_sum_guarded_shuffle": ("warp_sum", warp_sum_guarded_shuffle_kernel, "warp sync", "never arrive"),
    "warp_sum_shfl_up": ("warp_sum", warp_sum_shfl_up_kernel, "wrong", "expected"),
    "warp_sum_shared": ("warp_sum", warp_sum_shared_kernel, "cost", "no shared-memory accesses"),
    "warp_sum_atomic_per_lane": ("warp_sum", dot_atomic_per_thread_kernel, "crash", "takes 3 parameter"),
    "matmul_register_shared_reads": ("matmul_register", matmul_register_shared_reads_kernel, "cost",
                                     "shared reads at most one per multiply-add"),
    "matmul_register_one_barrier": ("matmul_register", matmul_register_one_barrier_kernel, "race", "race"),
    "matmul_register_unguarded": ("matmul_register", matmul_register_unguarded_kernel, "out of bounds", "out of bounds"),
    "matmul_register_plain_tiled": ("matmul_register", matmul_tiled_kernel, "uninitialized", "ever wrote it"),
    "int8_gemv_thread_per_row": ("int8_gemv", int8_gemv_thread_per_row_kernel, "cost", "sectors per warp request"),
    "int8_gemv_no_x_scale": ("int8_gemv", int8_gemv_no_x_scale_kernel, "wrong", "expected"),
    "int8_gemv_unguarded_lane": ("int8_gemv", int8_gemv_unguarded_lane_kernel, "out of bounds", "out of bounds"),
    "rmsnorm_no_eps": ("rmsnorm", rmsnorm_no_eps_kernel, "numerics", "eps"),
    "rmsnorm_sum_not_mean": ("rmsnorm", rmsnorm_sum_not_mean_kernel, "wrong", "expected"),
    "rmsnorm_three_reads": ("rmsnorm", rmsnorm_three_reads_kernel, "cost", "global loads at most three"),
    "spmv_scalar": ("spmv_csr", spmv_scalar_kernel, "cost", "SIMT efficiency"),
    "spmv_skip_empty": ("spmv_csr", spmv_skip_empty_kernel, "wrong", "empty"),
    "spmv_inclusive_end": ("spmv_csr", spmv_inclusive_end_kernel, "out of bounds", "out of bounds"),
    "conv1d_direct": ("conv1d", conv1d_direct_kernel, "cost", "global loads of x at most"),
    "conv1d_halo_unguarded": ("conv1d", conv1d_halo_unguarded_kernel, "out of bounds", "zeros past both ends"),
    "conv1d_no_sync": ("conv1d", conv1d_no_sync_kernel, "race", "shared-memory race"),
    "conv1d_left_halo_only": ("conv1d", conv1d_left_halo_only_kernel, "wrong", "expected"),
}


# ----------------------------------------------------------------------------- the December 2026 study

# Wrong kernels (and two bypasses) that lesson 09's checks accepted in the blind learner study
# (docs/studies/kernel_lab_study_2026-12.md); each demo is in docs/studies/passing_wrong_kernels.py.

@cuda.jit
def scan_block_float_tile_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.float32)        # float32 for int32 data: exact only up to 2**24
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


@cuda.jit
def scan_float_tile_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.float32)        # a float32 tile and a float carry
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


@cuda.jit
def scan_five_tiles_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, min(x.size, 5 * BLOCK), BLOCK):     # stops after five tiles
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


@cuda.jit
def rmsnorm_eps_outside_kernel(x, g, out):
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
    inv = 1.0 / (math.sqrt(s[0] / cols) + RMS_EPS)      # eps outside the square root
    for c in range(t, cols, BLOCK):
        out[r, c] = x[r, c] * inv * g[c]


@cuda.jit
def spmv_rows_up_to_96_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, min(indptr[r + 1], indptr[r] + 96), 32):   # 3 per lane
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0 and r < y.size:
        y[r] = acc


@cuda.jit
def conv1d_centre_loaded_twice_kernel(x, w, y):
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
        acc = w[RADIUS] * x[i]                      # x[i] loaded from global a second time
        for q in range(TAPS):
            if q != RADIUS:
                acc += w[q] * tile[t + q]
        y[i] = acc


@cuda.jit
def conv1d_right_guard_le_kernel(x, w, y):
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    b0 = cuda.blockIdx.x * BLOCK
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:
        tile[t] = x[b0 - RADIUS + t] if b0 - RADIUS + t >= 0 else 0.0
        j = b0 + BLOCK + t
        tile[BLOCK + RADIUS + t] = x[j] if j <= n else 0.0      # reads x[n] when n % BLOCK <= 2
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for q in range(TAPS):
            acc += w[q] * tile[t + q]
        y[i] = acc


@cuda.jit
def scan_block_serial_thread0_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t == 0:                                      # BLOCK - 1 serial steps while the block waits
        for j in range(1, BLOCK):
            s[j] += s[j - 1]
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[t]


@cuda.jit
def warp_sum_serial_lane0_kernel(a, out):
    i = cuda.grid(1)
    if cuda.laneid == 0:                            # no shuffle: lane 0 adds its warp's 32 elements
        v = 0.0
        for j in range(i, min(i + 32, a.size)):
            v += a[j]
        cuda.atomic.add(out, 0, v)


#: The study's passing wrong kernels and bypasses: variant -> (task, kernel, failure class, words).
STUDY_PASSED = {
    "scan_block_float_tile": ("scan_block", scan_block_float_tile_kernel, "numerics", "2**24"),
    "scan_float_tile": ("scan", scan_float_tile_kernel, "numerics", "2**24"),
    "scan_five_tiles": ("scan", scan_five_tiles_kernel, "wrong", "never written"),
    "rmsnorm_eps_outside": ("rmsnorm", rmsnorm_eps_outside_kernel, "numerics", "inside the square root"),
    "spmv_rows_up_to_96": ("spmv_csr", spmv_rows_up_to_96_kernel, "wrong", "nonzeros"),
    "conv1d_centre_loaded_twice": ("conv1d", conv1d_centre_loaded_twice_kernel, "cost", "global loads of x at most"),
    "conv1d_right_guard_le": ("conv1d", conv1d_right_guard_le_kernel, "out of bounds", "zeros past both ends"),
    "scan_block_serial_thread0": ("scan_block", scan_block_serial_thread0_kernel, "cost", "serial"),
    "warp_sum_serial_lane0": ("warp_sum", warp_sum_serial_lane0_kernel, "cost", "shuffles"),
}


# Feedback the study found misfiring: each kernel's misconception now follows its mistake.

@cuda.jit
def scan_block_tail_unset_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:                                  # the tail's slots keep their garbage
        s[t] = x[i]
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


@cuda.jit
def scan_block_step_short_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK // 2:                           # one doubling step short
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


@cuda.jit
def scan_block_negative_index_kernel(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        v = s[t - d]                                # s[-1] for thread 0
        cuda.syncthreads()
        if t >= d:
            s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


@cuda.jit
def warp_sum_plain_add_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        out[0] += v                                 # warps of one block race on out[0]


@cuda.jit
def warp_sum_every_lane_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    cuda.atomic.add(out, 0, v)                      # every lane adds its partial sum


@cuda.jit
def warp_sum_lane31_kernel(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 31:                           # the total is in lane 0
        cuda.atomic.add(out, 0, v)


@cuda.jit
def histogram_drops_last_bin_kernel(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size and x[i] < NBINS - 1:             # values of 63 dropped
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


@cuda.jit
def int8_gemv_first_scale_kernel(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += w[r, c] * x[c]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * (w_scale[0] * x_scale[0])      # per-tensor scale: w_scale has one per row


@cuda.jit
def rmsnorm_no_gain_kernel(x, g, out):
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    acc = 0.0
    for c in range(t, cols, BLOCK):
        acc += x[r, c] ** 2
    s[t] = acc
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    scale = 1.0 / math.sqrt(s[0] / cols + RMS_EPS)
    for c in range(t, cols, BLOCK):
        out[r, c] = x[r, c] * scale                 # the gain g forgotten (g is still read once)
        out[r, c] += 0.0 * g[c]


@cuda.jit
def spmv_one_pass_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        j = indptr[r] + lane
        if j < indptr[r + 1]:                       # one nonzero per lane: rows cut at 32
            acc = data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < y.size:
        y[r] = acc


@cuda.jit
def spmv_every_lane_stores_kernel(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + lane, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, d)
        d //= 2
    if r < y.size:
        y[r] = acc                                  # 32 lanes store the same y[r]


def _conv1d_variant(right_shift=0, flipped=False):
    @cuda.jit
    def conv1d(x, w, y):
        tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        n = x.size
        tile[t + RADIUS] = x[i] if i < n else 0.0
        if t < RADIUS:
            left = i - RADIUS
            tile[t] = x[left] if left >= 0 else 0.0
            right = cuda.blockIdx.x * BLOCK + BLOCK + t + right_shift
            tile[t + BLOCK + RADIUS] = x[right] if right < n else 0.0
        cuda.syncthreads()
        if i < n:
            acc = 0.0
            for j in range(TAPS):
                acc += w[TAPS - 1 - j if flipped else j] * tile[t + j]
            y[i] = acc
    return conv1d


conv1d_right_halo_shifted_kernel = _conv1d_variant(right_shift=1)
conv1d_flipped_taps_kernel = _conv1d_variant(flipped=True)

#: variant -> (task, kernel, failure class, misconception key): the study's misfires, each now named.
FEEDBACK = {
    "scan_block_tail_unset": ("scan_block", scan_block_tail_unset_kernel, "uninitialized",
                              "shared-memory-starts-garbage"),
    "scan_block_step_short": ("scan_block", scan_block_step_short_kernel, "wrong", "scan-steps-wrong"),
    "scan_block_negative_index": ("scan_block", scan_block_negative_index_kernel, "out of bounds", "index-below-zero"),
    "scan_carry_race": ("scan", scan_carry_race_kernel, "race", "scan-shared-reused-early"),
    "warp_sum_plain_add": ("warp_sum", warp_sum_plain_add_kernel, "race", "threads-unordered"),
    "warp_sum_every_lane": ("warp_sum", warp_sum_every_lane_kernel, "wrong", "atomic-per-lane"),
    "warp_sum_lane31": ("warp_sum", warp_sum_lane31_kernel, "wrong", "warp-total-incomplete"),
    "histogram_drops_last_bin": ("histogram", histogram_drops_last_bin_kernel, "wrong", "histogram-bins-wrong"),
    "int8_gemv_first_scale": ("int8_gemv", int8_gemv_first_scale_kernel, "wrong", "gemv-scales-or-row"),
    "rmsnorm_no_gain": ("rmsnorm", rmsnorm_no_gain_kernel, "wrong", "rmsnorm-formula"),
    "spmv_one_pass": ("spmv_csr", spmv_one_pass_kernel, "wrong", "long-row-cut"),
    "spmv_every_lane_stores": ("spmv_csr", spmv_every_lane_stores_kernel, "race", "threads-unordered"),
    "conv1d_right_halo_shifted": ("conv1d", conv1d_right_halo_shifted_kernel, "wrong", "halo-off-by-one"),
    "conv1d_flipped_taps": ("conv1d", conv1d_flipped_taps_kernel, "wrong", "conv-taps-or-halo"),
}


@cuda.jit
def int8_gemv_int16_partials_kernel(w, w_scale, x, x_scale, y):
    s = cuda.shared.array(BLOCK, np.int16)          # too narrow for a row's sum of int8 products
    t = cuda.threadIdx.x
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += w[r, c] * x[c]
    s[t] = acc
    cuda.syncwarp(FULL_MASK)
    if lane == 0 and r < w.shape[0]:
        total = 0
        for q in range(32):
            total += s[t + q]
        y[r] = total * (w_scale[r] * x_scale[0])


FEEDBACK["int8_gemv_int16_partials"] = ("int8_gemv", int8_gemv_int16_partials_kernel, "crash", "narrow-integer-sum")
