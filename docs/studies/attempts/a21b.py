# ruff: noqa: F403, F405
from _harness import *


# per-tensor scale: w_scale[0] for every row
@cuda.jit
def gemv_scale0(w, w_scale, x, x_scale, y):
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
        y[r] = acc * w_scale[0] * x_scale[0]


# x_scale forgotten
@cuda.jit
def gemv_no_xscale(w, w_scale, x, x_scale, y):
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
        y[r] = acc * w_scale[r]


# accumulated in an int16 shared array per warp (overflows on the -128 case)
@cuda.jit
def gemv_int16_shared(w, w_scale, x, x_scale, y):
    s = cuda.shared.array(BLOCK, np.int16)
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
        tot = 0
        for q in range(32):
            tot += s[t + q]
        y[r] = tot * w_scale[r] * x_scale[0]


for label, k in [("per-tensor w scale", gemv_scale0), ("x_scale forgotten", gemv_no_xscale),
                 ("int16 shared partials", gemv_int16_shared)]:
    attempt(label, "09.21", k)
