# ruff: noqa: F403, F405
from _harness import *


# lane 0 sums its warp's 32 elements serially: no shuffle at all
@cuda.jit
def ws_serial_lane0(a, out):
    i = cuda.grid(1)
    if cuda.laneid == 0:
        v = 0.0
        for j in range(i, min(i + 32, a.size)):
            v += a[j]
        cuda.atomic.add(out, 0, v)


attempt("serial lane 0, no shuffle", "09.19", ws_serial_lane0)
