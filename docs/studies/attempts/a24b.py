# ruff: noqa: F403, F405
from _harness import *

W = BLOCK + 2 * RADIUS


# stages the tile and halo, but reads the centre element from global again: x loaded twice
@cuda.jit
def conv_centre_twice(x, w, y):
    tile = cuda.shared.array(W, np.float32)
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
        acc = w[RADIUS] * x[i]                      # second load of x[i]
        for q in range(TAPS):
            if q != RADIUS:
                acc += w[q] * tile[t + q]
        y[i] = acc


# no shared memory at all for the left/right neighbours beyond distance 1: reads 2 of 7 taps from global
@cuda.jit
def conv_partial_direct(x, w, y):
    tile = cuda.shared.array(W, np.float32)
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
        acc = 0.0
        for q in range(TAPS):
            src = i + q - RADIUS
            if q == 0 or q == TAPS - 1:
                acc += w[q] * (x[src] if 0 <= src < n else 0.0)
            else:
                acc += w[q] * tile[t + q]
        y[i] = acc


attempt("x[i] loaded twice", "09.24", conv_centre_twice)
attempt("outer taps read from global", "09.24", conv_partial_direct)
