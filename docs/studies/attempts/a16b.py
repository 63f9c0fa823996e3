# ruff: noqa: F403, F405
from _harness import *


# zeroing guarded by the element test (learner copies the guard everywhere)
@cuda.jit
def hist_zero_guarded(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS and i < x.size:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS and i < x.size:
        cuda.atomic.add(bins, t, h[t])


# never zero the shared histogram
@cuda.jit
def hist_no_zero(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# merge with a store from block 0 only when grid has one block -> wrong across blocks; try store bins[t] = h[t]
@cuda.jit
def hist_store_merge(x, bins):
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
        bins[t] = h[t]


# values clamped wrongly: bins 63 dropped (off-by-one range test)
@cuda.jit
def hist_drop_last(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size and x[i] < NBINS - 1:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


for label, k in [("zero guarded by i<n", hist_zero_guarded), ("no zeroing", hist_no_zero),
                 ("store merge", hist_store_merge), ("drop bin 63", hist_drop_last)]:
    attempt(label, "09.16", k)
