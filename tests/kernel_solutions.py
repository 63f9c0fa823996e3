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
