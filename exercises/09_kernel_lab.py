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
    raise NotImplementedError("exercise 09.1: one thread per element, and a guard")


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
    raise NotImplementedError("exercise 09.2: add two vectors with coalesced loads")


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
    raise NotImplementedError("exercise 09.3: a 2D grid over a matrix")


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
    raise NotImplementedError("exercise 09.4: broadcast two vectors into a matrix")


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
    raise NotImplementedError("exercise 09.5: a tree reduction in shared memory")


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
    raise NotImplementedError("exercise 09.6: one atomic per block")


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
    raise NotImplementedError("exercise 09.7: the memory system's speed limit")


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
    raise NotImplementedError("exercise 09.8: coalesced on both sides through a shared tile")


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
    raise NotImplementedError("exercise 09.9: no bank conflicts")


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
    raise NotImplementedError("exercise 09.10: one thread per output element")


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
    raise NotImplementedError("exercise 09.11: reuse through shared memory")


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
    raise NotImplementedError("exercise 09.12: one block per row, three passes")


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
    raise NotImplementedError("exercise 09.13: the maximum and the sum in one pass")


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
raise NotImplementedError("exercise 09.14: row sums on narrower rows")
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
raise NotImplementedError("exercise 09.15: the staged row sums")
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
    raise NotImplementedError("exercise 09.16: privatise, then merge")


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
    raise NotImplementedError("exercise 09.17: every prefix, not one sum")


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
    raise NotImplementedError("exercise 09.18: the whole array, tile by tile")


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
    raise NotImplementedError("exercise 09.19: registers, not shared memory")


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
    raise NotImplementedError("exercise 09.20: a micro-tile per thread")


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
    raise NotImplementedError("exercise 09.21: a warp per row, integer sums, two scales")


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
    raise NotImplementedError("exercise 09.22: one reduction, fused")


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
    raise NotImplementedError("exercise 09.23: a warp per row")


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
    raise NotImplementedError("exercise 09.24: a tile and its halo")


check("09.24", conv1d_kernel)
