# ruff: noqa: F403, F405
from _harness import *


def make(guard_lane):
    @cuda.jit
    def k(x, out):
        wsum = cuda.shared.array(4, np.int32)       # BLOCK // 32 warp totals
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        lane = cuda.laneid
        wid = t // 32
        v = x[i] if i < x.size else 0
        d = 1
        while d < 32:
            u = cuda.shfl_up_sync(FULL_MASK, v, d)
            if guard_lane:
                if lane >= d:
                    v += u
            else:
                v += u
            d *= 2
        if lane == 31:
            wsum[wid] = v
        cuda.syncthreads()
        off = 0
        for w in range(wid):
            off += wsum[w]
        if i < x.size:
            out[i] = v + off
    return k


attempt("warp scan by shfl_up, lane guard forgotten", "09.17", make(False))
attempt("warp scan by shfl_up + warp totals (alt. right)", "09.17", make(True))
