# ruff: noqa: F403, F405
from _harness import *


# a right design: two buffers, one barrier per k-step (write buffer s%2 while others may still read the other)
@cuda.jit
def rt_double_buffer(a, b, out):
    sa = cuda.shared.array((2, 16, RT_K), np.float32)
    sb = cuda.shared.array((2, RT_K, 16), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tid = ty * RT_THREADS + tx
    row0 = cuda.blockIdx.y * 16
    col0 = cuda.blockIdx.x * 16
    m, k = a.shape
    n = b.shape[1]
    c00 = 0.0
    c01 = 0.0
    c10 = 0.0
    c11 = 0.0
    step = 0
    for k0 in range(0, k, RT_K):
        q = step % 2
        for e in range(tid, 16 * RT_K, 64):
            r, c = e // RT_K, e % RT_K
            sa[q, r, c] = a[row0 + r, k0 + c] if row0 + r < m and k0 + c < k else 0.0
        for e in range(tid, RT_K * 16, 64):
            r, c = e // 16, e % 16
            sb[q, r, c] = b[k0 + r, col0 + c] if k0 + r < k and col0 + c < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0 = sa[q, ty, p]
            a1 = sa[q, ty + 8, p]
            b0 = sb[q, p, tx]
            b1 = sb[q, p, tx + 8]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        step += 1
    i0, j0 = row0 + ty, col0 + tx
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j0 + 8 < n:
        out[i0, j0 + 8] = c01
    if i0 + 8 < m and j0 < n:
        out[i0 + 8, j0] = c10
    if i0 + 8 < m and j0 + 8 < n:
        out[i0 + 8, j0 + 8] = c11


attempt("double buffer, one barrier per step (right)", "09.20", rt_double_buffer)
