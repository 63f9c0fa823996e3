# ruff: noqa: F403, F405
from _harness import *


# barrier in each branch of an if (undefined behaviour on a GPU)
@cuda.jit
def scan_branch_barriers(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        if t >= d:
            v = s[t - d]
            cuda.syncthreads()
            s[t] += v
        else:
            cuda.syncthreads()
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


attempt("barrier in each branch", "09.17", scan_branch_barriers)
