# ruff: noqa: F403, F405
from _harness import *


# no barrier between counting and merging
@cuda.jit
def hist_no_merge_sync(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# zero with all threads: h[t % NBINS] = 0 (two threads write each bin the same zero)
@cuda.jit
def hist_zero_twice(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    h[t % NBINS] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


attempt("no barrier before merge", "09.16", hist_no_merge_sync)
attempt("every thread zeroes h[t % NBINS]", "09.16", hist_zero_twice)
