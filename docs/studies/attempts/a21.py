# ruff: noqa: F403, F405
from _harness import *


# 1: thread per row (uncoalesced, the obvious first GEMV)
@cuda.jit
def gemv_thread_per_row(w, w_scale, x, x_scale, y):
    r = cuda.grid(1)
    if r < w.shape[0]:
        acc = 0
        for c in range(w.shape[1]):
            acc += w[r, c] * x[c]
        y[r] = acc * w_scale[r] * x_scale[0]


# 2: warp per row, int8 products straight from the arrays, guard around the shuffles
@cuda.jit
def gemv_guarded_shuffle(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    if r < w.shape[0]:
        acc = 0
        for c in range(lane, w.shape[1], 32):
            acc += w[r, c] * x[c]
        d = 16
        while d > 0:
            acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
            d //= 2
        if lane == 0:
            y[r] = acc * w_scale[r] * x_scale[0]


# 3: warp per row, products of the int8 elements as they come (no widening)
@cuda.jit
def gemv_int8_products(w, w_scale, x, x_scale, y):
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
        y[r] = acc * w_scale[r] * x_scale[0]


# 4: widened to int32 but the row scale indexed by the lane / column (wrong scale placement)
@cuda.jit
def gemv_scale_by_col(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += np.int32(w[r, c]) * np.int32(x[c]) * w_scale[r] * x_scale[0]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc


# 5: correct: int32 sum, scales once at the end
@cuda.jit
def gemv_ok(w, w_scale, x, x_scale, y):
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):
            acc += np.int32(w[r, c]) * np.int32(x[c])
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * w_scale[r] * x_scale[0]


for label, k in [("thread per row", gemv_thread_per_row), ("guard around shuffles", gemv_guarded_shuffle),
                 ("int8 products", gemv_int8_products), ("scales per term, float sum", gemv_scale_by_col),
                 ("correct", gemv_ok)]:
    attempt(label, "09.21", k)
