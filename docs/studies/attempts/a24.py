# ruff: noqa: F403, F405
from _harness import *

W = BLOCK + 2 * RADIUS


def make(mode):
    @cuda.jit
    def k(x, w, y):
        tile = cuda.shared.array(W, np.float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        n = x.size
        b0 = cuda.blockIdx.x * BLOCK
        tile[t + RADIUS] = x[i] if i < n else 0.0
        if t < RADIUS:
            if mode == "left-unguarded":
                tile[t] = x[b0 - RADIUS + t]
            else:
                tile[t] = x[b0 - RADIUS + t] if b0 - RADIUS + t >= 0 else 0.0
            if mode == "right-off-by-one":
                j = b0 + BLOCK + t + 1
            else:
                j = b0 + BLOCK + t
            tile[BLOCK + RADIUS + t] = x[j] if j < n else 0.0
        if mode != "no-barrier":
            cuda.syncthreads()
        if i < n:
            acc = 0.0
            for q in range(TAPS):
                if mode == "flipped":
                    acc += w[TAPS - 1 - q] * tile[t + q]
                else:
                    acc += w[q] * tile[t + q]
            y[i] = acc
    return k


# the first try reads x directly (section 13's stencil pattern not yet applied)
@cuda.jit
def conv_direct(x, w, y):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        acc = 0.0
        for q in range(TAPS):
            src = i + q - RADIUS
            if 0 <= src < n:
                acc += w[q] * x[src]
        y[i] = acc


attempt("direct reads", "09.24", conv_direct)
for mode in ("left-unguarded", "no-barrier", "right-off-by-one", "flipped", "ok"):
    attempt(mode, "09.24", make(mode))
