# ruff: noqa: F403, F405
from _harness import *


# block 0 clears bins first ("outputs start as garbage"), then every block merges with atomics
@cuda.jit
def hist_block0_zeroes(x, bins):
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0 and t < NBINS:
        bins[t] = 0
    if t < NBINS:
        h[t] = 0
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])


# thread 0 of the grid clears out[0], then every warp adds atomically
@cuda.jit
def ws_thread0_zeroes(a, out):
    i = cuda.grid(1)
    if i == 0:
        out[0] = 0.0
    v = a[i] if i < a.size else 0.0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


attempt("block 0 zeroes bins, then atomics", "09.16", hist_block0_zeroes)
attempt("thread 0 zeroes out[0], then atomics", "09.19", ws_thread0_zeroes)
