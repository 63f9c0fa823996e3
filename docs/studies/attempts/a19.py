# ruff: noqa: F403, F405
from _harness import *


# 1: guard around the shuffle (lanes past the end never arrive) - section 12 warns
@cuda.jit
def ws_guarded(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        d = 16
        while d > 0:
            v += cuda.shfl_down_sync(FULL_MASK, v, d)
            d //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, v)


# 2: every lane adds atomically (forgot lane 0)
@cuda.jit
def ws_all_lanes(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    cuda.atomic.add(out, 0, v)


# 3: shfl_down starting at 32 / wrong order: d = 1,2,4.. (still a correct sum for down? check)
@cuda.jit
def ws_up_order(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 1
    while d < 32:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d *= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


# 4: lane 31 adds (shfl_down leaves the total in lane 0, not 31)
@cuda.jit
def ws_lane31(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 31:
        cuda.atomic.add(out, 0, v)


# 5: plain += for the warp's total
@cuda.jit
def ws_plain(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        out[0] += v


# 6: correct
@cuda.jit
def ws_ok(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


# 7: only 4 steps (16,8,4,2): misses d=1
@cuda.jit
def ws_four_steps(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 1:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


# 8: mask from activemask inside the guard (a "fix" for 1 a learner might try)
@cuda.jit
def ws_activemask(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        m = cuda.activemask()
        d = 16
        while d > 0:
            v += cuda.shfl_down_sync(m, v, d)
            d //= 2
        if cuda.laneid == 0:
            cuda.atomic.add(out, 0, v)


for label, k in [("guard around shuffle", ws_guarded), ("every lane atomics", ws_all_lanes),
                 ("d ascending", ws_up_order), ("lane 31 adds", ws_lane31), ("plain +=", ws_plain),
                 ("four steps", ws_four_steps), ("activemask in guard", ws_activemask), ("correct", ws_ok)]:
    attempt(label, "09.19", k)
