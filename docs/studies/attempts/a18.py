# ruff: noqa: F403, F405
from _harness import *


def make(variant):
    pass


# 1: carry read from s[BLOCK-1] without a barrier before the next tile overwrites s
@cuda.jit
def scan_carry_race(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        carry += s[BLOCK - 1]


# 2: carry kept only by thread 0 (a local is per thread)
@cuda.jit
def scan_carry_t0(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        if t == 0:
            carry += s[BLOCK - 1]
        cuda.syncthreads()


# 3: carry from out[base + BLOCK - 1] (reads the output: extra load and, on the last tile, past n)
@cuda.jit
def scan_carry_from_out(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        cuda.syncthreads()
        last = min(base + BLOCK, x.size) - 1
        carry = out[last]
        cuda.syncthreads()


# 4: correct
@cuda.jit
def scan_ok(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    for base in range(0, x.size, BLOCK):
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        carry += s[BLOCK - 1]
        cuda.syncthreads()


# 5: carry via a shared slot written by the last thread, then a barrier (alt. correct)
@cuda.jit
def scan_ok_loop_while(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    carry = 0
    base = 0
    while base < x.size:
        i = base + t
        s[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        d = 1
        while d < BLOCK:
            v = s[t - d] if t >= d else 0
            cuda.syncthreads()
            s[t] += v
            cuda.syncthreads()
            d *= 2
        if i < x.size:
            out[i] = s[t] + carry
        carry += s[BLOCK - 1]
        cuda.syncthreads()
        base += BLOCK


for label, k in [("carry race", scan_carry_race), ("carry only in t0", scan_carry_t0),
                 ("carry from out", scan_carry_from_out), ("correct", scan_ok), ("correct while", scan_ok_loop_while)]:
    attempt(label, "09.18", k)
