# ruff: noqa: F403, F405
from _harness import *


# 1: thread per row (section 13's first design)
@cuda.jit
def spmv_thread(indptr, indices, data, x, y):
    r = cuda.grid(1)
    if r < y.size:
        acc = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            acc += data[j] * x[indices[j]]
        y[r] = acc


# 2: warp per row, but an empty row is skipped (y never written there)
@cuda.jit
def spmv_skip_empty(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    start = 0
    end = 0
    if r < y.size:
        start = indptr[r]
        end = indptr[r + 1]
        for j in range(start + cuda.laneid, end, 32):
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0 and r < y.size and end > start:
        y[r] = acc


# 3: warp per row, lane 0 writes with no row guard
@cuda.jit
def spmv_no_row_guard(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0:
        y[r] = acc


# 4: correct (section 13's warp-per-row row sums, plus the gather of x)
@cuda.jit
def spmv_ok(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if cuda.laneid == 0 and r < y.size:
        y[r] = acc


# 5: every lane writes y[r] (32 writers of one element, same value)
@cuda.jit
def spmv_all_lanes_write(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + cuda.laneid, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    k = 16
    while k > 0:
        acc += cuda.shfl_xor_sync(FULL_MASK, acc, k)
        k //= 2
    if r < y.size:
        y[r] = acc


# 6: warp per row, lane 0 does the whole row serially (the other 31 lanes idle)
@cuda.jit
def spmv_lane0_serial(indptr, indices, data, x, y):
    r = cuda.grid(1) // 32
    if r < y.size and cuda.laneid == 0:
        acc = 0.0
        for j in range(indptr[r], indptr[r + 1]):
            acc += data[j] * x[indices[j]]
        y[r] = acc


for label, k in [("thread per row", spmv_thread), ("skip empty rows", spmv_skip_empty),
                 ("no row guard", spmv_no_row_guard), ("all lanes write", spmv_all_lanes_write),
                 ("lane 0 serial", spmv_lane0_serial), ("correct", spmv_ok)]:
    attempt(label, "09.23", k)
