# ruff: noqa: F403, F405
from _harness import *


def make(use_syncwarp):
    @cuda.jit
    def k(x, out):
        s = cuda.shared.array(BLOCK, np.int32)
        wsum = cuda.shared.array(4, np.int32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        lane = cuda.laneid
        s[t] = x[i] if i < x.size else 0
        if use_syncwarp:
            cuda.syncwarp(FULL_MASK)
        d = 1
        while d < 32:                       # a scan inside each warp, legacy "warp-synchronous" style
            v = s[t - d] if lane >= d else 0
            if use_syncwarp:
                cuda.syncwarp(FULL_MASK)
            s[t] += v
            if use_syncwarp:
                cuda.syncwarp(FULL_MASK)
            d *= 2
        if lane == 31:
            wsum[t // 32] = s[t]
        cuda.syncthreads()
        off = 0
        for w in range(t // 32):
            off += wsum[w]
        if i < x.size:
            out[i] = s[t] + off
    return k


attempt("warp-synchronous shared scan, no syncwarp (wrong since Volta)", "09.17", make(False))
attempt("warp shared scan with syncwarp (right)", "09.17", make(True))
