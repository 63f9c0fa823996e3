# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: -jupytext.text_representation
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 09 · Exercises: the kernel lab
#
# Thirteen puzzles on lesson 09, each a real CUDA kernel written in Python with `@cuda.jit`,
# then a prediction and a diagnosis from the profiles of correct but slow kernels (09.14,
# 09.15), then nine design puzzles (09.16 to 09.24) whose kernels the lesson does not print:
# each is taught by a neighbouring example in sections 12 and 13. The puzzles go from one thread
# per element, through shared-memory reductions, coalesced transposes and a tiled matmul, to the
# row softmax in one pass; the design puzzles add a histogram, scans, warp shuffles, a
# register-tiled matmul, an INT8 GEMV, RMSNorm, a sparse matrix-vector product and a convolution. Fill in the body of
# each kernel where it says `NotImplementedError` and run the cell. `check` prints one line
# when the kernel is right; otherwise it names the first problem, the form the answer should
# take and a first hint. `hint("09.3", 2)` shows the next hint.
#
# `check` does not need a GPU. It runs your kernel on the course's traced executor, one CUDA
# thread at a time, on random sizes that no block size divides, on fewer elements than one
# block, and on the puzzle's adversarial cases (values whose exponentials overflow, rows shorter
# than a warp, masked -inf entries, a row of zeros, sizes of one...), and refuses, in this order:
#
# * a **fault**: an index out of bounds (it names the thread, the array and the source line), a
#   warp primitive whose mask names a lane that never arrives;
# * an **unsafe pattern**: a race between threads with no `cuda.syncthreads()` between them,
#   a read of shared memory no thread has written yet, a read of an output before the kernel
#   wrote it (outputs start as garbage, as on a GPU), threads that wait at different barriers;
# * a **wrong element** (it names the thread that wrote it, or says that none did);
# * a missed **cost target**: each puzzle states its own. *Global loads* and *stores* count
#   element accesses to global arrays, thread by thread (`out[i] += x` is a load and a store);
#   *coalescing efficiency* is the bytes a warp's lanes asked for over the bytes of the 32-byte
#   sectors it touched; the *bank-conflict degree* is the most distinct words one of the 32
#   shared-memory banks must serve for one warp request (1 = no conflict).
#
# A failure names its class and the misconception it most likely comes from, with the lesson
# section to read again. The sizes are drawn from your identity, so yours are not your
# neighbour's. The launch is fixed by the check and stated in each puzzle. A failure message ends with the
# `run_task(...)` call that reruns the failing case; `run_task(...).profile.table()` then shows
# the traffic and conflicts line by line, and `.profile.summary()` the totals.

# %%
import math

import numpy as np

from course_lib.checks import check, hint
from course_lib.kernels import cuda
from course_lib.kernels.puzzles import MICRO, NBINS, RADIUS, RMS_EPS, RT_K, RT_THREADS, TAPS
from course_lib.kernels.tasks import BLOCK, BLOCK_2D, TASKS, TILE, TILE_T, run_task

FULL_MASK = 0xFFFFFFFF        # every lane of a warp, the mask of the warp primitives

# The launch sizes the puzzles quote, as the checks use them.
assert (BLOCK, BLOCK_2D, TILE_T, TILE) == (128, (32, 8), 32, 16)
assert (NBINS, RADIUS, TAPS, MICRO, RT_THREADS, RT_K) == (64, 3, 7, 2, 8, 8)
for name, task in TASKS.items():
    print(f"{name:17s} {task.signature:18s} {'; '.join(t.what for t in task.targets)}")

# %% [markdown]
# ### Exercise 09.1 (map): one thread per element, and a guard
#
# Write `map_kernel(a, out)` so that `out[i] = 10 * a[i] + 1` for every element of the float32
# vector `a` (length $n$). **Launch:** $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK` = 128
# threads, one thread per element; `cuda.grid(1)` gives a thread its element. $n$ is odd, so the
# last block has threads past the end. **Cost target:** at most one global load and one global
# store per element ($\le n$ each).

# %%
@cuda.jit
def map_kernel(a, out):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    if i < out.size:              # the last block runs past the end of the vector
        out[i] = 10 * a[i] + 1
    ### END SOLUTION


check("09.1", map_kernel)

# %% [markdown]
# ### Exercise 09.2 (zip): add two vectors with coalesced loads
#
# Write `zip_kernel(a, b, out)` so that `out[i] = a[i] + b[i]` for vectors of length $n$.
# **Launch:** $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK` = 128 threads. **Cost target:**
# at most two global loads per element ($\le 2n$) and a coalescing efficiency of at least 90%:
# the 32 lanes of a warp should read 32 neighbouring elements, one 128-byte line.

# %%
@cuda.jit
def zip_kernel(a, b, out):
    ### BEGIN SOLUTION
    i = cuda.grid(1)              # consecutive lanes, consecutive elements
    if i < out.size:
        out[i] = a[i] + b[i]
    ### END SOLUTION


check("09.2", zip_kernel)

# %% [markdown]
# ### Exercise 09.3 (map2d): a 2D grid over a matrix
#
# Write `map2d_kernel(a, out)` so that `out[r, c] = a[r, c] + 1` for a float32 matrix of `rows`
# $\times$ `cols` (row-major: `a[r, c + 1]` is the next address). **Launch:** blocks of
# `BLOCK_2D` = (32, 8) threads, **x along the columns** and y along the rows, on a grid of
# $(\lceil \text{cols}/32 \rceil, \lceil \text{rows}/8 \rceil)$ blocks; `cuda.grid(2)` returns
# (x, y). Neither size is a multiple of the block. **Cost target:** at most one global load per
# element ($\le$ rows $\cdot$ cols) and a coalescing efficiency of at least 60%.

# %%
@cuda.jit
def map2d_kernel(a, out):
    ### BEGIN SOLUTION
    c, r = cuda.grid(2)           # x is the column: a warp covers 32 neighbouring columns
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c] + 1
    ### END SOLUTION


check("09.3", map2d_kernel)

# %% [markdown]
# ### Exercise 09.4 (outer): broadcast two vectors into a matrix
#
# Write `outer_kernel(a, b, out)` so that `out[r, c] = a[r] * b[c]`: `a` has `rows` entries, `b`
# has `cols`, `out` is `rows` $\times$ `cols`. **Launch:** as in 09.3, blocks of `BLOCK_2D` =
# (32, 8) threads with x along the columns, on $(\lceil \text{cols}/32 \rceil,
# \lceil \text{rows}/8 \rceil)$ blocks. **Cost target:** at most two global loads per output
# element ($\le 2\,$rows$\,\cdot\,$cols) and a coalescing efficiency of at least 60%.

# %%
@cuda.jit
def outer_kernel(a, b, out):
    ### BEGIN SOLUTION
    c, r = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r] * b[c]   # a[r] is one address for the whole warp: a broadcast
    ### END SOLUTION


check("09.4", outer_kernel)

# %% [markdown]
# ### Exercise 09.5 (block sum): a tree reduction in shared memory
#
# Write `block_sum_kernel(a, out)`: block $b$ writes `out[b]`, the sum of the `BLOCK` elements
# `a[b * BLOCK]` to `a[b * BLOCK + BLOCK - 1]` (fewer in the last block, which runs past the
# end). Each thread loads one element into a shared array of `BLOCK` float32
# (`cuda.shared.array(BLOCK, np.float32)`); then the block halves the number of partial sums at
# each step, with a `cuda.syncthreads()` between steps. **Launch:** $\lceil n / \text{BLOCK}
# \rceil$ blocks of `BLOCK` = 128 threads. **Cost target:** at most one global load per element
# ($\le n$) and one global store per block ($\le \lceil n / \text{BLOCK} \rceil$).

# %%
@cuda.jit
def block_sum_kernel(a, out):
    ### BEGIN SOLUTION
    partial = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = a[i] if i < a.size else 0.0     # past the end, add nothing
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()                         # every pair is summed before the next step reads it
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = partial[0]
    ### END SOLUTION


check("09.5", block_sum_kernel)

# %% [markdown]
# ### Exercise 09.6 (dot): one atomic per block
#
# Write `dot_kernel(a, b, out)` so that `out[0]` ends as $\sum_i a_i b_i$ for vectors of length
# $n$; `out` starts at zero. Each block reduces its products in shared memory as in 09.5, then
# one thread adds the block's sum with `cuda.atomic.add(out, 0, value)`: blocks cannot wait for
# one another, so a plain `+=` from several blocks would race. **Launch:**
# $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK` = 128 threads. **Cost target:** at most two
# global loads per element ($\le 2n$) and at most one atomic per block
# ($\le \lceil n / \text{BLOCK} \rceil$).

# %%
@cuda.jit
def dot_kernel(a, b, out):
    ### BEGIN SOLUTION
    partial = cuda.shared.array(BLOCK, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    partial[t] = a[i] * b[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, partial[0])        # one atomic per block, not one per element
    ### END SOLUTION


check("09.6", dot_kernel)

# %% [markdown]
# ### Exercise 09.7 (copy): the memory system's speed limit
#
# Write `copy_kernel(a, out)` so that `out[r, c] = a[r, c]` for a `rows` $\times$ `cols` float32
# matrix, one thread per element, consecutive threads on consecutive columns: a copy moves each
# byte once and does no arithmetic, so it is the bandwidth every other kernel is measured
# against. **Launch:** blocks of `BLOCK_2D` = (32, 8) threads, x along the columns, on
# $(\lceil \text{cols}/32 \rceil, \lceil \text{rows}/8 \rceil)$ blocks. **Cost target:** a
# coalescing efficiency of at least 60%.

# %%
@cuda.jit
def copy_kernel(a, out):
    ### BEGIN SOLUTION
    c, r = cuda.grid(2)
    if r < a.shape[0] and c < a.shape[1]:
        out[r, c] = a[r, c]
    ### END SOLUTION


check("09.7", copy_kernel)

# %% [markdown]
# ### Exercise 09.8 (transpose): coalesced on both sides through a shared tile
#
# Write `transpose_kernel(a, out)` so that `out[c, r] = a[r, c]`; `a` is `rows` $\times$ `cols`
# and `out` is `cols` $\times$ `rows`. Reading `a` along a row makes the writes to `out` go down
# a column, 32 sectors for one warp. Instead, each block loads a `TILE_T` $\times$ `TILE_T` tile
# of `a` into shared memory with coalesced reads, waits, and writes the transposed tile to `out`
# with coalesced writes. **Launch:** blocks of (`TILE_T`, `TILE_T`) = (32, 32) threads, one per
# tile element, x along the columns of `a`, on $(\lceil \text{cols}/32 \rceil,
# \lceil \text{rows}/32 \rceil)$ blocks: block (x, y) owns the tile of `a` at rows
# $32y \ldots 32y + 31$ and columns $32x \ldots 32x + 31$. **Cost target:** a coalescing
# efficiency of at least 60% over all global loads and stores.

# %%
@cuda.jit
def transpose_kernel(a, out):
    ### BEGIN SOLUTION
    tile = cuda.shared.array((TILE_T, TILE_T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r = cuda.blockIdx.y * TILE_T + ty              # the element of a this thread loads
    c = cuda.blockIdx.x * TILE_T + tx
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]                     # lanes read neighbouring columns of a
    cuda.syncthreads()
    r_out = cuda.blockIdx.x * TILE_T + ty          # rows of out are columns of a
    c_out = cuda.blockIdx.y * TILE_T + tx
    if r_out < out.shape[0] and c_out < out.shape[1]:
        out[r_out, c_out] = tile[tx, ty]           # lanes write neighbouring columns of out
    ### END SOLUTION


check("09.8", transpose_kernel)

# %% [markdown]
# ### Exercise 09.9 (padded transpose): no bank conflicts
#
# In 09.8 the 32 lanes of a warp read `tile[tx, ty]` for 32 values of `tx`: 32 words that are
# 32 words apart, all in the same shared-memory bank, served one after another. Write
# `transpose_padded_kernel(a, out)`, the same transpose with the tile's rows padded so that those
# reads land in 32 different banks. **Launch:** as in 09.8, blocks of (32, 32) threads on
# $(\lceil \text{cols}/32 \rceil, \lceil \text{rows}/32 \rceil)$ blocks. **Cost target:** a
# coalescing efficiency of at least 60% and a bank-conflict degree of 1 for every shared-memory
# request.

# %%
@cuda.jit
def transpose_padded_kernel(a, out):
    ### BEGIN SOLUTION
    tile = cuda.shared.array((TILE_T, TILE_T + 1), np.float32)   # 33 words per row: column reads
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y                  # step one bank at a time
    r = cuda.blockIdx.y * TILE_T + ty
    c = cuda.blockIdx.x * TILE_T + tx
    if r < a.shape[0] and c < a.shape[1]:
        tile[ty, tx] = a[r, c]
    cuda.syncthreads()
    r_out = cuda.blockIdx.x * TILE_T + ty
    c_out = cuda.blockIdx.y * TILE_T + tx
    if r_out < out.shape[0] and c_out < out.shape[1]:
        out[r_out, c_out] = tile[tx, ty]
    ### END SOLUTION


check("09.9", transpose_padded_kernel)

# %% [markdown]
# ### Exercise 09.10 (matmul): one thread per output element
#
# Write `matmul_kernel(a, b, out)` so that `out = a @ b`, with `a` of shape $m \times k$, `b` of
# shape $k \times n$ and `out` of shape $m \times n$, all float32 and all three sizes different.
# Each thread computes one `out[i, j]` as a dot product of length $k$, summed in a local
# variable. **Launch:** blocks of (`TILE`, `TILE`) = (16, 16) threads, **x along the columns j**
# of `out` and y along its rows i, on $(\lceil n/16 \rceil, \lceil m/16 \rceil)$ blocks.
# **Cost target:** at most $2mkn$ global loads (two per multiply-add).

# %%
@cuda.jit
def matmul_kernel(a, b, out):
    ### BEGIN SOLUTION
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        acc = 0.0                                  # a register, not out[i, j]: no extra traffic
        for p in range(a.shape[1]):
            acc += a[i, p] * b[p, j]
        out[i, j] = acc
    ### END SOLUTION


check("09.10", matmul_kernel)

# %% [markdown]
# ### Exercise 09.11 (tiled matmul): reuse through shared memory
#
# In 09.10 every element of `a` is read $n$ times and every element of `b` $m$ times. Write
# `matmul_tiled_kernel(a, b, out)`, the same product in which each block steps along $k$ one
# `TILE` at a time: its threads load a `TILE` $\times$ `TILE` tile of `a` and one of `b` into
# shared memory (one element each, zero where the tile runs past an edge), wait, multiply the two
# tiles into their running sums, and wait again before the next load. **Launch:** as in 09.10,
# blocks of (16, 16) threads, x along the columns of `out`, on $(\lceil n/16 \rceil,
# \lceil m/16 \rceil)$ blocks. Every thread of a block must take part in every load and every
# barrier, even one whose `out[i, j]` lies outside the matrix. **Cost target:** at most lesson
# 06's tiled count of global loads, $m\,k \lceil n/\text{TILE} \rceil + k\,n \lceil m/\text{TILE}
# \rceil$.

# %%
@cuda.jit
def matmul_tiled_kernel(a, b, out):
    ### BEGIN SOLUTION
    tile_a = cuda.shared.array((TILE, TILE), np.float32)
    tile_b = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i = cuda.blockIdx.y * TILE + ty
    j = cuda.blockIdx.x * TILE + tx
    m, k = a.shape
    n = b.shape[1]
    acc = 0.0
    for k0 in range(0, k, TILE):
        tile_a[ty, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
        tile_b[ty, tx] = b[k0 + ty, j] if k0 + ty < k and j < n else 0.0
        cuda.syncthreads()                         # both tiles are complete
        for p in range(TILE):
            acc += tile_a[ty, p] * tile_b[p, tx]
        cuda.syncthreads()                         # nobody overwrites a tile still being read
    if i < m and j < n:
        out[i, j] = acc
    ### END SOLUTION


check("09.11", matmul_tiled_kernel)

# %% [markdown]
# ### Exercise 09.12 (softmax): one block per row, three passes
#
# Write `softmax_kernel(x, out)` so that each row of `out` is the softmax of the same row of `x`
# (`rows` $\times$ `cols`, float32): $\text{out}_{rc} = e^{x_{rc} - m_r} / \sum_{c'} e^{x_{rc'}
# - m_r}$ with $m_r$ the row's maximum, subtracted so that no exponential overflows. **Launch:**
# one block of `BLOCK` = 128 threads per row, a grid of (`rows`,) blocks; thread $t$ handles
# columns $t, t + 128, t + 256, \ldots$ Pass 1 finds the maximum (a max-reduction in shared
# memory), pass 2 the sum of exponentials (a sum-reduction), pass 3 writes the output.
# **Cost target:** at most three global loads per element ($\le 3\,$rows$\,\cdot\,$cols).

# %%
@cuda.jit
def softmax_kernel(x, out):
    ### BEGIN SOLUTION
    partial = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    row_max = -math.inf
    for c in range(t, cols, BLOCK):                # pass 1: this thread's maximum...
        row_max = max(row_max, x[r, c])
    partial[t] = row_max
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:                              # ... then the block's
        if t < stride:
            partial[t] = max(partial[t], partial[t + stride])
        cuda.syncthreads()
        stride //= 2
    row_max = partial[0]
    cuda.syncthreads()                             # all have read it before partial is reused
    total = 0.0
    for c in range(t, cols, BLOCK):                # pass 2: the sum of exponentials
        total += math.exp(x[r, c] - row_max)
    partial[t] = total
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        cuda.syncthreads()
        stride //= 2
    total = partial[0]
    for c in range(t, cols, BLOCK):                # pass 3: normalise
        out[r, c] = math.exp(x[r, c] - row_max) / total
    ### END SOLUTION


check("09.12", softmax_kernel)

# %% [markdown]
# ### Exercise 09.13 (online softmax): the maximum and the sum in one pass
#
# Passes 1 and 2 of 09.12 each read the whole row. Write `online_softmax_kernel(x, out)`, the
# same softmax reading `x` only twice: each thread keeps a running maximum $m$ and a running sum
# $s$ of $e^{x - m}$; when a new value $v$ raises the maximum to $m' = \max(m, v)$, the sum so
# far is rescaled, $s \leftarrow s\,e^{m - m'} + e^{v - m'}$ (lesson 06's online softmax). The
# block then merges the threads' pairs $(m, s)$ with the same rule, and a last pass writes the
# output. **Launch:** as in 09.12, one block of `BLOCK` = 128 threads per row. **Cost target:**
# at most two global loads per element ($\le 2\,$rows$\,\cdot\,$cols).

# %%
@cuda.jit
def online_softmax_kernel(x, out):
    ### BEGIN SOLUTION
    part_max = cuda.shared.array(BLOCK, np.float32)
    part_sum = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    m, s = -math.inf, 0.0
    for c in range(t, cols, BLOCK):                # one pass: running max, rescaled running sum
        v = x[r, c]
        m_new = max(m, v)
        if m_new > -math.inf:                      # a masked (-inf) value with nothing before it adds nothing
            s = s * math.exp(m - m_new) + math.exp(v - m_new)
            m = m_new
    part_max[t] = m
    part_sum[t] = s
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:                              # merge (m, s) pairs with the same rule
        if t < stride:
            m_a, m_b = part_max[t], part_max[t + stride]
            m_new = max(m_a, m_b)
            if m_new > -math.inf:                  # both empty: nothing to rescale
                part_sum[t] = (part_sum[t] * math.exp(m_a - m_new)
                               + part_sum[t + stride] * math.exp(m_b - m_new))
                part_max[t] = m_new
        cuda.syncthreads()
        stride //= 2
    m, s = part_max[0], part_sum[0]
    for c in range(t, cols, BLOCK):                # second and last read of x
        out[r, c] = math.exp(x[r, c] - m) / s
    ### END SOLUTION


check("09.13", online_softmax_kernel)

# %% [markdown]
# When every check passes, rerun one puzzle with `run_task` and read its `profile.summary()`:
# the copy of 09.7 and the transposes of 09.8 and 09.9 move the same bytes, and the tiled
# matmul of 09.11 reads a fraction of what 09.10 reads, the ratio lesson 06 predicted for a
# 16-wide tile.

# %% [markdown]
# ### Exercise 09.14 (what-if): row sums on narrower rows
#
# Not every exercise asks for a kernel. Each thread of this correct but slow one sums one row of
# a row-major float32 matrix:
#
# ```python
# @cuda.jit
# def row_sums(a, out):
#     r = cuda.grid(1)
#     if r < a.shape[0]:
#         s = 0.0
#         for c in range(a.shape[1]):
#             s += a[r, c]
#         out[r] = s
# ```
#
# The cell below traces it on 128 rows of 24 columns, in blocks of 64 threads, and prints the
# profile. In production the same kernel, in the same blocks of 64, sums the rows of a matrix of
# **2^20 rows and 6 columns** (row-major float32, starting on a sector boundary) on an **H100
# SXM**. Predict that launch's time with section 9's bound (one add per element; every request
# moves the 32-byte sectors it touches, with no reuse by the caches), and answer it in
# **microseconds** (a float).

# %%
from course_lib.kernels.slow import slow_launch
from course_lib.kernels.profile import profile_trace
from course_lib.kernels.trace import trace_launch

kernel, grid, block, args = slow_launch("09.14")
row_profile = profile_trace(trace_launch(kernel, grid, block, *args))
print(row_profile.summary())
print(row_profile.table())
### BEGIN SOLUTION
from course_lib.kernels.profile import predict_time
from course_lib.simt import coalescing

rows, cols = 2 ** 20, 6
# At 24 columns the lanes are 96 bytes apart: one sector each. At 6 they are 24 bytes apart and
# share sectors: count one warp's sectors per column from its 32 addresses.
lanes = np.arange(32)
load_sectors = sum(coalescing(lanes * cols * 4 + c * 4).n_sectors for c in range(cols))
store_sectors = coalescing(lanes * 4).n_sectors
bytes_large = rows // 32 * (load_sectors + store_sectors) * 32
row_us = predict_time(rows * cols, bytes_large, "H100 SXM").t_s * 1e6
# A second way: the 32 lanes span 32 x 24 bytes = 24 whole sectors per load.
assert load_sectors == cols * 24 and store_sectors == 4
print(f"{bytes_large / 1e6:.0f} MB moved for {rows * (cols + 1) * 4 / 1e6:.0f} MB used: {row_us:.0f} us")
### END SOLUTION
check("09.14", row_us)

# %% [markdown]
# ### Exercise 09.15 (diagnose, then fix): the staged row sums
#
# A colleague stages the rows through a shared tile, so that lane `t` loads column `t` (one
# block of one warp per 32 rows; here the rows are 32 floats long):
#
# ```python
# @cuda.jit
# def staged_row_sums(a, out):
#     tile = cuda.shared.array((32, 32), np.float32)
#     t = cuda.threadIdx.x
#     r0 = cuda.blockIdx.x * 32
#     for r in range(32):          # lane t loads column t of 32 rows
#         tile[r, t] = a[r0 + r, t]
#     cuda.syncthreads()
#     s = 0.0
#     for c in range(32):          # lane t sums row t of the tile
#         s += tile[t, c]
#     out[r0 + t] = s
# ```
#
# It is still slower than it should be: the cell below prints its profile. Five changes are
# proposed, each on its own:
#
# - `"pad-2"`: declare the tile `cuda.shared.array((32, 34), np.float32)`, nothing else changed;
# - `"swap"`: store `tile[t, r] = a[r0 + r, t]` and sum `s += tile[c, t]`;
# - `"swizzle"`: store `tile[r, (t + r) % 32] = a[r0 + r, t]` and sum `s += tile[t, (c + t) % 32]`;
# - `"direct"`: drop the tile and the barrier, and sum `s += a[r0 + t, c]`;
# - `"no-barrier"`: remove `cuda.syncthreads()`.
#
# Which one change leaves a correct kernel whose profile shows no waste (100 % coalescing, no
# bank conflict, no divergence, no atomic contention) and no race? Predict for each, then
# profile the one you choose: copy the kernel, change it, and trace it on `args` with the same
# `grid` and `block`. Answer its name.

# %%
kernel, grid, block, args = slow_launch("09.15")
staged_profile = profile_trace(trace_launch(kernel, grid, block, *args))
print(staged_profile.summary())
print(staged_profile.table())
### BEGIN SOLUTION
# The shared read tile[t, c] puts lane t on word 32 t + c: every lane in bank c, 32-way.
# pad-2: word 34 t + c, bank (2 t + c) mod 32, so lanes t and t + 16 share a bank (2-way).
# swap: the read becomes free, but the store tile[t, r] puts lane t on word 32 t + r (32-way).
# direct: the global loads a[r0 + t, c] are 128 bytes apart again. no-barrier: a race.
# swizzle: the store puts lane t in bank (t + r) mod 32 and the read in bank (c + t) mod 32,
# different for every lane, and row t still holds a's row r0 + t, only rotated.
@cuda.jit
def swizzled_row_sums(a, out):
    tile = cuda.shared.array((32, 32), np.float32)
    t = cuda.threadIdx.x
    r0 = cuda.blockIdx.x * 32
    for r in range(32):
        tile[r, (t + r) % 32] = a[r0 + r, t]
    cuda.syncthreads()
    s = 0.0
    for c in range(32):
        s += tile[t, (c + t) % 32]
    out[r0 + t] = s


args[1][:] = 0                                                       # the sums, written afresh
swizzled = profile_trace(trace_launch(swizzled_row_sums, grid, block, *args))
print(swizzled.summary())
assert swizzled.safe and swizzled.coalescing_efficiency == 1 and swizzled.bank_conflict_degree == 1
assert np.allclose(args[1], args[0].sum(axis=1), rtol=1e-5)          # the sums are right
change = "swizzle"
### END SOLUTION
check("09.15", change)

# %% [markdown]
# ## Design puzzles (09.16 to 09.24)
#
# The lesson does not print these kernels. Each names the section whose neighbouring example
# teaches the technique; the check's messages name the section again when a kernel fails.

# %% [markdown]
# ### Exercise 09.16 (histogram): privatise, then merge
#
# Write `histogram_kernel(x, bins)`: `x` holds int32 values from 0 to `NBINS` - 1 = 63, and
# `bins` (NBINS int32, zero at launch) must end with the count of each value. **Launch:**
# $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK` = 128 threads, one element per thread.
# **Cost target:** at most `NBINS` global atomics per block and one global load per element:
# section 13's privatised count keeps the block's partial result in shared memory, where an
# atomic stays inside the SM. The check includes a case where every element falls in one bin.

# %%
@cuda.jit
def histogram_kernel(x, bins):
    ### BEGIN SOLUTION
    h = cuda.shared.array(NBINS, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if t < NBINS:
        h[t] = 0                                   # shared memory starts as garbage
    cuda.syncthreads()
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)                # a shared atomic: no trip to L2
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(bins, t, h[t])             # one global atomic per bin per block
    ### END SOLUTION


check("09.16", histogram_kernel)

# %% [markdown]
# ### Exercise 09.17 (block scan): every prefix, not one sum
#
# Write `scan_block_kernel(x, out)`: for each block of `BLOCK` = 128 consecutive elements of the
# int32 vector `x`, `out[i]` is the sum of the block's elements up to and including `x[i]` (an
# inclusive scan per block). **Launch:** $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK`
# threads. **Cost target:** one global load and one store per element. Section 13 shows the
# scan's pattern of distances on a running maximum.

# %%
@cuda.jit
def scan_block_kernel(x, out):
    ### BEGIN SOLUTION
    s = cuda.shared.array(BLOCK, np.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    d = 1
    while d < BLOCK:                               # Hillis-Steele: distances 1, 2, 4, ...
        v = s[t - d] if t >= d else 0
        cuda.syncthreads()                         # every read of this step before any write
        s[t] += v
        cuda.syncthreads()
        d *= 2
    if i < x.size:
        out[i] = s[t]
    ### END SOLUTION


check("09.17", scan_block_kernel)

# %% [markdown]
# ### Exercise 09.18 (scan): the whole array, tile by tile
#
# Write `scan_kernel(x, out)`: `out[i]` = `x[0] + ... + x[i]` over the whole int32 vector.
# **Launch:** one block of `BLOCK` = 128 threads, which walks `x` in tiles of `BLOCK` elements:
# scan a tile as in 09.17, add the total of the tiles before it, carry the new total on. **Cost
# target:** one global load and one store per element. (A GPU-wide scan over many blocks adds a
# second launch, or a chain between blocks, for the blocks' totals: section 13.)

# %%
@cuda.jit
def scan_kernel(x, out):
    ### BEGIN SOLUTION
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
        carry += s[BLOCK - 1]                      # the tile's total, read by every thread
        cuda.syncthreads()                         # ... before the next tile overwrites it
    ### END SOLUTION


check("09.18", scan_kernel)

# %% [markdown]
# ### Exercise 09.19 (warp sum): registers, not shared memory
#
# Write `warp_sum_kernel(a, out)`: add the sum of the float32 vector `a` into `out[0]` (zero at
# launch). Each warp sums its 32 elements with `cuda.shfl_down_sync` (section 12), and its lane
# 0 adds the warp's total with one `cuda.atomic.add`. **Launch:** $\lceil n / \text{BLOCK}
# \rceil$ blocks of `BLOCK` = 128 threads. **Cost target:** no shared-memory access at all, at
# most one global atomic per warp, one global load per element. Every lane named by a mask must
# reach the shuffle: the check refuses one that never arrives.

# %%
@cuda.jit
def warp_sum_kernel(a, out):
    ### BEGIN SOLUTION
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0.0                # lanes past the end still shuffle, with 0
    d = 16
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
    ### END SOLUTION


check("09.19", warp_sum_kernel)

# %% [markdown]
# ### Exercise 09.20 (register-tiled matmul): a micro-tile per thread
#
# Write `matmul_register_kernel(a, b, out)`, `out = a @ b` (a is m x k, b is k x n, float32).
# **Launch:** blocks of `RT_THREADS` x `RT_THREADS` = 8 x 8 threads, grid
# $(\lceil n/16 \rceil, \lceil m/16 \rceil)$: a block covers a 16 x 16 tile of `out`, and
# each thread computes a `MICRO` x `MICRO` = 2 x 2 micro-tile of it, held in four local
# variables. Stage `k` in steps of `RT_K` = 8: a 16 x 8 tile of `a` and an 8 x 16 tile of `b` in
# shared memory. **Cost targets:** global loads at most the plain 16 x 16 tiled kernel's count
# (09.11, lesson 06's formula), and at most one shared-memory read per multiply-add (09.11's
# kernel makes two). Section 13 shows the idea on the outer product, two outputs per thread.

# %%
@cuda.jit
def matmul_register_kernel(a, b, out):
    ### BEGIN SOLUTION
    sa = cuda.shared.array((TILE, RT_K), np.float32)
    sb = cuda.shared.array((RT_K, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i0 = cuda.blockIdx.y * TILE + ty               # this thread's rows: i0 and i0 + RT_THREADS
    j0 = cuda.blockIdx.x * TILE + tx               # its columns: j0 and j0 + RT_THREADS
    m, k, n = a.shape[0], a.shape[1], b.shape[1]
    c00 = c01 = c10 = c11 = 0.0
    for k0 in range(0, k, RT_K):
        for r in range(MICRO):                     # two elements of each tile per thread
            i = i0 + r * RT_THREADS
            sa[ty + r * RT_THREADS, tx] = a[i, k0 + tx] if i < m and k0 + tx < k else 0.0
            j = j0 + r * RT_THREADS
            sb[ty, tx + r * RT_THREADS] = b[k0 + ty, j] if k0 + ty < k and j < n else 0.0
        cuda.syncthreads()
        for p in range(RT_K):
            a0, a1 = sa[ty, p], sa[ty + RT_THREADS, p]     # four shared reads ...
            b0, b1 = sb[p, tx], sb[p, tx + RT_THREADS]
            c00 += a0 * b0                                 # ... for four multiply-adds
            c01 += a0 * b1
            c10 += a1 * b0
            c11 += a1 * b1
        cuda.syncthreads()
    i1, j1 = i0 + RT_THREADS, j0 + RT_THREADS
    if i0 < m and j0 < n:
        out[i0, j0] = c00
    if i0 < m and j1 < n:
        out[i0, j1] = c01
    if i1 < m and j0 < n:
        out[i1, j0] = c10
    if i1 < m and j1 < n:
        out[i1, j1] = c11
    ### END SOLUTION


check("09.20", matmul_register_kernel)

# %% [markdown]
# ### Exercise 09.21 (INT8 GEMV): a warp per row, integer sums, two scales
#
# Write `int8_gemv_kernel(w, w_scale, x, x_scale, y)`: `w` is an int8 matrix (rows x cols), `x`
# an int8 vector, `w_scale` one float32 per row and `x_scale` one float32 (an array of one):
# $y_r = s^w_r\,s^x \sum_k w_{rk} x_k$, the sum taken in integers. **Launch:**
# $\lceil \text{rows} / 4 \rceil$ blocks of `BLOCK` = 128 threads: one warp per row, row
# `cuda.grid(1) // 32`. **Cost targets:** `w`'s loads at most 2 sectors per warp request (a
# warp's 32 neighbouring bytes of one row), and `w` and `x` read once per row. The check includes
# a case where every value is -128. Section 12's warp sum shows the shuffles.

# %%
@cuda.jit
def int8_gemv_kernel(w, w_scale, x, x_scale, y):
    ### BEGIN SOLUTION
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0                                        # an integer sum: int8 products need 15 bits
    if r < w.shape[0]:
        for c in range(lane, w.shape[1], 32):      # 32 neighbouring bytes per step
            acc += w[r, c] * x[c]
    d = 16
    while d > 0:                                   # every lane shuffles, rows or not
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < w.shape[0]:
        y[r] = acc * (w_scale[r] * x_scale[0])     # both scales, once, after the sum
    ### END SOLUTION


check("09.21", int8_gemv_kernel)

# %% [markdown]
# ### Exercise 09.22 (RMSNorm): one reduction, fused
#
# Write `rmsnorm_kernel(x, g, out)`: $\text{out}_{rc} = x_{rc} / \sqrt{\tfrac{1}{C}\sum_c x_{rc}^2
# + \varepsilon}\; g_c$ with $\varepsilon$ = `RMS_EPS` = 1e-6 inside the square root.
# **Launch:** one block of `BLOCK` = 128 threads per row. **Cost targets:** at most three
# global loads per element (x twice, g once) and one store. The check includes a row of zeros.
# Section 4 shows a block reduction in shared memory (the block argmax), section 8 a statistic
# computed before the output pass (the log-sum-exp).

# %%
@cuda.jit
def rmsnorm_kernel(x, g, out):
    ### BEGIN SOLUTION
    s = cuda.shared.array(BLOCK, np.float32)
    r = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cols = x.shape[1]
    acc = 0.0
    for c in range(t, cols, BLOCK):                # first read of x: the sum of squares
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
    scale = 1.0 / math.sqrt(s[0] / cols + RMS_EPS)  # eps inside: a zero row stays finite
    for c in range(t, cols, BLOCK):                # second read of x: the output
        out[r, c] = x[r, c] * scale * g[c]
    ### END SOLUTION


check("09.22", rmsnorm_kernel)

# %% [markdown]
# ### Exercise 09.23 (CSR SpMV): a warp per row
#
# Write `spmv_csr_kernel(indptr, indices, data, x, y)`: row `r` of the sparse matrix holds the
# values `data[j]` at columns `indices[j]` for `j` from `indptr[r]` to `indptr[r + 1] - 1`;
# `y = A x`. **Launch:** $\lceil \text{rows} / 4 \rceil$ blocks of `BLOCK` = 128 threads, one
# warp per row. **Cost target:** SIMT efficiency at least 80%: the rows' lengths differ a lot
# (some are empty, two are long), and one thread per row leaves most lanes waiting for the
# longest (30-70% on these matrices). Section 13 profiles both designs on another sparse matrix.

# %%
@cuda.jit
def spmv_csr_kernel(indptr, indices, data, x, y):
    ### BEGIN SOLUTION
    r = cuda.grid(1) // 32
    lane = cuda.laneid
    acc = 0.0
    if r < y.size:
        for j in range(indptr[r] + lane, indptr[r + 1], 32):
            acc += data[j] * x[indices[j]]
    d = 16
    while d > 0:
        acc += cuda.shfl_down_sync(FULL_MASK, acc, d)
        d //= 2
    if lane == 0 and r < y.size:
        y[r] = acc                                 # empty rows too: 0.0
    ### END SOLUTION


check("09.23", spmv_csr_kernel)

# %% [markdown]
# ### Exercise 09.24 (1D convolution): a tile and its halo
#
# Write `conv1d_kernel(x, w, y)`: $y_i = \sum_{j=0}^{6} w_j\, x_{i + j - 3}$ (`TAPS` = 7,
# `RADIUS` = 3), with $x$ taken as 0 past both ends. **Launch:**
# $\lceil n / \text{BLOCK} \rceil$ blocks of `BLOCK` = 128 threads, one output per thread.
# **Cost target:** global loads at most $n$ plus, per block, the $2 \cdot$RADIUS halo elements
# and the taps once per thread: stage the block's `BLOCK` + 2 `RADIUS` elements of `x` in
# shared memory. Section 13 stages a halo for a 3-point stencil.

# %%
@cuda.jit
def conv1d_kernel(x, w, y):
    ### BEGIN SOLUTION
    tile = cuda.shared.array(BLOCK + 2 * RADIUS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    tile[t + RADIUS] = x[i] if i < n else 0.0
    if t < RADIUS:                                 # the halo, zero past either end
        left = i - RADIUS
        tile[t] = x[left] if 0 <= left < n else 0.0
        right = cuda.blockIdx.x * BLOCK + BLOCK + t
        tile[t + BLOCK + RADIUS] = x[right] if right < n else 0.0
    cuda.syncthreads()
    if i < n:
        acc = 0.0
        for j in range(TAPS):
            acc += w[j] * tile[t + j]
        y[i] = acc
    ### END SOLUTION


check("09.24", conv1d_kernel)
