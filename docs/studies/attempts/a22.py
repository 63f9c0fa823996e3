# ruff: noqa: F403, F405
from _harness import *


def make(mode):
    @cuda.jit
    def k(x, g, out):
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
        if mode == "eps-outside":
            inv = 1.0 / (math.sqrt(s[0] / cols) + RMS_EPS)
        elif mode == "mean-over-block":
            inv = 1.0 / math.sqrt(s[0] / BLOCK + RMS_EPS)
        elif mode == "no-eps":
            inv = 1.0 / math.sqrt(s[0] / cols)
        else:
            inv = 1.0 / math.sqrt(s[0] / cols + RMS_EPS)
        for c in range(t, cols, BLOCK):
            out[r, c] = x[r, c] * inv * g[c]
    return k


# a learner writing it out by hand: the first try has the mean over BLOCK (copied from block_sum)
for mode in ("no-eps", "eps-outside", "mean-over-block", "ok"):
    attempt(mode, "09.22", make(mode))
