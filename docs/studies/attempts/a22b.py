# ruff: noqa: F403, F405
from _harness import *


# thread 0 turns the sum into 1/rms in s[0]; the others read it with no barrier in between
@cuda.jit
def rms_t0_no_barrier(x, g, out):
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    acc = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        acc += v * v
    s[t] = acc
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        s[0] = 1.0 / math.sqrt(s[0] / cols + RMS_EPS)
    inv = s[0]
    for c in range(t, cols, BLOCK):
        out[r, c] = x[r, c] * inv * g[c]


# forgot g
@cuda.jit
def rms_no_gain(x, g, out):
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    acc = 0.0
    for c in range(t, cols, BLOCK):
        v = x[r, c]
        acc += v * v
    s[t] = acc
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    inv = 1.0 / math.sqrt(s[0] / cols + RMS_EPS)
    for c in range(t, cols, BLOCK):
        out[r, c] = x[r, c] * inv


attempt("t0 writes inv to s[0], no barrier", "09.22", rms_t0_no_barrier)
attempt("gain g forgotten", "09.22", rms_no_gain)
