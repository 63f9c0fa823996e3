# ruff: noqa: F403, F405
from _harness import *


# attempt 1: naive, global atomic per element (learner's first idea)
@cuda.jit
def hist_global(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i], 1)


# attempt 2: privatised but no barrier after zeroing
@cuda.jit
def hist_no_init_sync(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# attempt 3: privatised, plain += into shared (race)
@cuda.jit
def hist_plain_add(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        h[x[i]] += 1
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# attempt 4: merge with plain += into global (cross-block race)
@cuda.jit
def hist_merge_plain(x, bins):
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
        bins[t] += h[t]


# attempt 5: right
@cuda.jit
def hist_ok(x, bins):
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


# attempt 6: merge only nonzero bins (fine) / skip guard on load (OOB)
@cuda.jit
def hist_no_guard(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# attempt 7: merge with threadIdx 0 looping over all bins (legal but slow) - should pass
@cuda.jit
def hist_t0_merge(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t == 0:
        for b in range(NBINS):
            if h[b] != 0:
                cuda.atomic.add(bins, b, h[b])


for label, k in [("global atomics", hist_global), ("no barrier after zeroing", hist_no_init_sync),
                 ("plain += in shared", hist_plain_add), ("plain += merge", hist_merge_plain),
                 ("no guard", hist_no_guard), ("correct", hist_ok), ("t0 merge", hist_t0_merge)]:
    attempt(label, "09.16", k)
