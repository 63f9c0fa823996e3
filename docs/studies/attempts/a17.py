# ruff: noqa: F403, F405
from _harness import *


# 1: one barrier per step (read and write in the same phase) - the classic race
@cuda.jit
def scan_one_barrier(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        if t >= d:
            s[t] += s[t - d]
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


# 2: exclusive instead of inclusive (off by one)
@cuda.jit
def scan_exclusive(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
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
        out[i] = s[t] - x[i]


# 3: negative index: read s[t - d] for every thread, add only where t >= d
@cuda.jit
def scan_negative_index(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        v = s[t - d]
        cuda.syncthreads()
        if t >= d:
            s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


# 4: threads past the end do not write their slot
@cuda.jit
def scan_unset_tail(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        s[t] = x[i]
    cuda.syncthreads()
    d = 1
    while d < BLOCK:
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


# 5: loop stops one step early (d < BLOCK // 2)
@cuda.jit
def scan_short_loop(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK // 2:
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]


# 6: correct
@cuda.jit
def scan_ok(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
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
        out[i] = s[t]


# 7: serial scan by thread 0 in shared memory (correct, but no parallelism)
@cuda.jit
def scan_serial_t0(x, out):
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    if t == 0:
        for j in range(1, BLOCK):
            s[j] += s[j - 1]
    cuda.syncthreads()
    if i < x.size:
        out[i] = s[t]


for label, k in [("one barrier per step", scan_one_barrier), ("exclusive", scan_exclusive),
                 ("negative index", scan_negative_index), ("tail unset", scan_unset_tail),
                 ("loop one step short", scan_short_loop), ("correct", scan_ok), ("serial t0", scan_serial_t0)]:
    attempt(label, "09.17", k)
