# ruff: noqa: F403, F405
from _harness import *

BM = RT_THREADS * MICRO   # 16


def body(second_barrier=True, guard_a=True, reuse=True):
    pass


# 1: no barrier after the multiply (the next load overwrites tiles still being read)
@cuda.jit
def rt_no_second_barrier(a, b, out):
    sa = cuda.shared.array((16, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, 16), np.float32)
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
    for k0 in range(0, k, RT_K):
        for e in range(tid, 16 * RT_K, 64):         # a tile: 16 rows x 8
            r, c = e // RT_K, e % RT_K
            sa[r, c] = a[row0 + r, k0 + c] if row0 + r < m and k0 + c < k else 0.0
        for e in range(tid, RT_K * 16, 64):         # b tile: 8 x 16 cols
            r, c = e // 16, e % 16
            sb[r, c] = b[k0 + r, col0 + c] if k0 + r < k and col0 + c < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0 = sa[ty, p]
            a1 = sa[ty + 8, p]
            b0 = sb[p, tx]
            b1 = sb[p, tx + 8]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
    i0, j0 = row0 + ty, col0 + tx
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j0 + 8 < n:
        out[i0, j0 + 8] = c01
    if i0 + 8 < m and j0 < n:
        out[i0 + 8, j0] = c10
    if i0 + 8 < m and j0 + 8 < n:
        out[i0 + 8, j0 + 8] = c11


# 2: correct (micro-tile strided by 8: rows ty, ty+8; cols tx, tx+8)
@cuda.jit
def rt_ok(a, b, out):
    sa = cuda.shared.array((16, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, 16), np.float32)
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
    for k0 in range(0, k, RT_K):
        for e in range(tid, 16 * RT_K, 64):
            r, c = e // RT_K, e % RT_K
            sa[r, c] = a[row0 + r, k0 + c] if row0 + r < m and k0 + c < k else 0.0
        for e in range(tid, RT_K * 16, 64):
            r, c = e // 16, e % 16
            sb[r, c] = b[k0 + r, col0 + c] if k0 + r < k and col0 + c < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0 = sa[ty, p]
            a1 = sa[ty + 8, p]
            b0 = sb[p, tx]
            b1 = sb[p, tx + 8]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        cuda.syncthreads()
    i0, j0 = row0 + ty, col0 + tx
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j0 + 8 < n:
        out[i0, j0 + 8] = c01
    if i0 + 8 < m and j0 < n:
        out[i0 + 8, j0] = c10
    if i0 + 8 < m and j0 + 8 < n:
        out[i0 + 8, j0 + 8] = c11


# 3: no register reuse: re-read shared memory for every multiply-add (2 reads per MAC)
@cuda.jit
def rt_no_reuse(a, b, out):
    sa = cuda.shared.array((16, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, 16), np.float32)
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
    for k0 in range(0, k, RT_K):
        for e in range(tid, 16 * RT_K, 64):
            r, c = e // RT_K, e % RT_K
            sa[r, c] = a[row0 + r, k0 + c] if row0 + r < m and k0 + c < k else 0.0
        for e in range(tid, RT_K * 16, 64):
            r, c = e // 16, e % 16
            sb[r, c] = b[k0 + r, col0 + c] if k0 + r < k and col0 + c < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            c00 += sa[ty, p] * sb[p, tx]
            c01 += sa[ty, p] * sb[p, tx + 8]
            c10 += sa[ty + 8, p] * sb[p, tx]
            c11 += sa[ty + 8, p] * sb[p, tx + 8]
        cuda.syncthreads()
    i0, j0 = row0 + ty, col0 + tx
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j0 + 8 < n:
        out[i0, j0 + 8] = c01
    if i0 + 8 < m and j0 < n:
        out[i0 + 8, j0] = c10
    if i0 + 8 < m and j0 + 8 < n:
        out[i0 + 8, j0 + 8] = c11


# 4: edge guard on k missing in the a tile (k not a multiple of 8 -> reads past the row)
@cuda.jit
def rt_no_k_guard(a, b, out):
    sa = cuda.shared.array((16, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, 16), np.float32)
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
    for k0 in range(0, k, RT_K):
        for e in range(tid, 16 * RT_K, 64):
            r, c = e // RT_K, e % RT_K
            sa[r, c] = a[row0 + r, k0 + c] if row0 + r < m else 0.0
        for e in range(tid, RT_K * 16, 64):
            r, c = e // 16, e % 16
            sb[r, c] = b[k0 + r, col0 + c] if k0 + r < k and col0 + c < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0 = sa[ty, p]
            a1 = sa[ty + 8, p]
            b0 = sb[p, tx]
            b1 = sb[p, tx + 8]
            c00 += a0 * b0
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        cuda.syncthreads()
    i0, j0 = row0 + ty, col0 + tx
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j0 + 8 < n:
        out[i0, j0 + 8] = c01
    if i0 + 8 < m and j0 < n:
        out[i0 + 8, j0] = c10
    if i0 + 8 < m and j0 + 8 < n:
        out[i0 + 8, j0 + 8] = c11


for label, k in [("no second barrier", rt_no_second_barrier), ("no register reuse", rt_no_reuse),
                 ("no k guard on a", rt_no_k_guard), ("correct", rt_ok)]:
    attempt(label, "09.20", k)
