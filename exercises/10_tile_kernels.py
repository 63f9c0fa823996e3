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
# # 10 · Exercises: tile kernels
#
# Ten Triton puzzles on lesson 10, from a masked map to sliding-window FlashAttention and a
# matmul with packed INT4 weights. Each lesson section shows its technique on a neighbouring
# problem; here you write the kernel. Fill in each kernel's body where it says
# `NotImplementedError` and run the cell. `check` prints one line when the kernel is right;
# otherwise it names the first problem, the form the answer should take and a first hint.
# `hint("10.3", 2)` shows the next hint.
#
# `check` needs no GPU: your kernel runs on Triton's CPU interpreter under the course's profiler,
# on three cases: random sizes that no block divides (yours, from your identity), random sizes
# with adversarial values (large magnitudes, a large mean, rows a window leaves empty), and a
# size smaller than one block. It refuses, in this order:
#
# * an **access outside a tensor**: it names the program, the tensor, the offsets and the line;
# * a **wrong output**: when it equals what a known mistake gives, it names the mistake;
# * a missed **cost target** in bytes, stated in each puzzle, with the usual cause.
#
# The launch (grid and block sizes) is fixed by the check and stated in each puzzle.
# `run_tile_task(TASKS["row_sum"], row_sum_kernel, {"rows": 3, "cols": 150}).profile` reruns a case
# and shows what your kernel moved.

# %%
import math

from course_lib.checks import check, hint
from course_lib.tiles import tl, triton
from course_lib.tiles.order import grouped_matmul_traffic
from course_lib.tiles.tasks import TASKS, run_tile_task

for name, task in TASKS.items():
    print(f"{name:17s} {task.launch_text}")

# %% [markdown]
# ### Exercise 10.1: a masked map
#
# Write `leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK)` so that `out[i] = x[i]` where
# `x[i] > 0` and `slope * x[i]` elsewhere, for a float32 vector of length $n$. **Launch:**
# $\lceil n / \text{BLOCK} \rceil$ programs, `BLOCK` = 128. $n$ is never a multiple of 128, and one
# case is shorter than one block. **Cost target:** at most $8n$ bytes moved (each element read once
# and written once).

# %%
@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    raise NotImplementedError("exercise 10.1: a masked map")


check("10.1", leaky_relu_kernel)

# %% [markdown]
# ### Exercise 10.2: a 2D grid and broadcasting
#
# Write `outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M, BLOCK_N)` so that
# `out[i, j] = x[i] + y[j]` for an $M \times N$ row-major float32 `out`. **Launch:** a
# $(\lceil M/32 \rceil, \lceil N/32 \rceil)$ grid, `BLOCK_M = BLOCK_N = 32`. **Cost target:** at most
# $4\,(M\lceil N/32\rceil + N\lceil M/32\rceil)$ bytes read: each program loads its piece of `x`
# and of `y` once, as vectors.

# %%
@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    raise NotImplementedError("exercise 10.2: a 2D grid and broadcasting")


check("10.2", outer_add_kernel)

# %% [markdown]
# ### Exercise 10.3: a reduction over a row longer than one block
#
# Write `row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_COLS)` so that `out[r]` is the sum of row
# $r$ of a row-major float32 matrix whose rows are longer than one block. **Launch:** one program
# per row, `BLOCK_COLS` = 64; `n_cols` is between 150 and 400 and never a multiple of 64 (one case
# has 20). **Cost target:** each element of `x` read once ($\le 4 \cdot$ rows $\cdot$ `n_cols` bytes).

# %%
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    raise NotImplementedError("exercise 10.3: a reduction over a row longer than one block")


check("10.3", row_sum_kernel)

# %% [markdown]
# ### Exercise 10.4: a fused LayerNorm
#
# Write `layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS)` so that each row
# becomes $y = (x - \mu)/\sqrt{\sigma^2 + \varepsilon}\cdot w + b$, with $\mu$ and $\sigma^2$ the
# row's mean and (biased) variance. **Launch:** one program per row, `BLOCK_COLS` = the next power of
# two $\ge$ `n_cols` (a row is one tile). One case has rows whose mean is 1000 and spread 1.
# **Cost target:** `x` read once.

# %%
@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
    raise NotImplementedError("exercise 10.4: a fused LayerNorm")


check("10.4", layernorm_kernel)

# %% [markdown]
# ### Exercise 10.5: an online softmax over long rows
#
# Write `softmax_long_kernel(x_ptr, y_ptr, n_cols, BLOCK_COLS)` so that each row of `y` is the
# softmax of that row of `x`, for rows longer than one block. **Launch:** one program per row,
# `BLOCK_COLS` = 64. One case has scores around 100 with spread 50. **Cost target:** `x` read at
# most twice ($\le 8 \cdot$ rows $\cdot$ `n_cols` bytes).

# %%
@triton.jit
def softmax_long_kernel(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    raise NotImplementedError("exercise 10.5: an online softmax over long rows")


check("10.5", softmax_long_kernel)

# %% [markdown]
# ### Exercise 10.6: a matmul with a fused epilogue
#
# Write `matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)`
# so that $C = \text{relu}(AB + \text{bias})$, the bias added to every row. **Launch:** a
# $(\lceil M/32\rceil, \lceil N/32\rceil)$ grid, all blocks 32. **Cost target:** at most lesson 06's
# bytes for the matmul plus the bias once per program row: $4\,(mk\lceil n/32\rceil + kn\lceil m/32\rceil
# + mn + n\lceil m/32\rceil)$.

# %%
@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    raise NotImplementedError("exercise 10.6: a matmul with a fused epilogue")


check("10.6", matmul_bias_relu_kernel)

# %% [markdown]
# ### Exercise 10.7: grouped program order, by columns
#
# Section 5's kernel groups tile **rows**. Write `grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
# BLOCK_M, BLOCK_N, BLOCK_K, GROUP_N)` computing $C = AB$ on a **1D grid** of
# $\lceil M/32\rceil\lceil N/32\rceil$ programs, blocks of 32, whose programs walk groups of
# `GROUP_N` = 4 tile **columns** row by row (the last group may have fewer columns): program 0 takes
# tile (0, 0), program 1 tile (0, 1), ..., program 4 tile (1, 0). **Cost target:** every program on
# its tile of that order; the HBM bytes when waves of 8 consecutive programs share their reads
# (`profile.hbm_bytes(8)`) at most those of that order (`grouped_matmul_traffic(N, K, M, 32, 32, 4, 8,
# 4).bytes_waves`: the row model on the transposed grid); and each tile loaded once per K step.

# %%
@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
    raise NotImplementedError("exercise 10.7: grouped program order, by columns")


check("10.7", grouped_matmul_kernel)

# %% [markdown]
# ### Exercise 10.8: sliding-window attention
#
# Write `window_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW, BLOCK_M, BLOCK_N, BLOCK_D)`:
# one head of causal attention in which query $i$ sees only keys $i - \text{WINDOW} < j \le i$,
# $O = \text{softmax}(QK^\top \cdot \text{scale})V$ over those keys ($Q$, $K$, $V$, $O$ are
# $N \times D$, row-major). **Launch:** $\lceil N/16\rceil$ programs, `BLOCK_M = BLOCK_N = 16`,
# `BLOCK_D = 16` $\ge D$. One case has scores in the hundreds. **Cost target:** $K$ and $V$ read only
# from the first key block the window reaches: at most $2D\sum_{\text{query blocks}}(i_1 - j_0)$
# elements, $j_0 = \lfloor \max(0, i_0 - \text{WINDOW} + 1)/16 \rfloor \cdot 16$.

# %%
@triton.jit
def window_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    raise NotImplementedError("exercise 10.8: sliding-window attention")


check("10.8", window_attention_kernel)

# %% [markdown]
# ### Exercise 10.9: a matmul with packed INT4 weights
#
# Write `int4_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K)` so that
# $y = x\,(c \cdot s)$ for float32 `x` ($M \times K$), INT4 codes $c \in [-8, 7]$ ($K \times N$) with
# one float32 scale per column `s` ($N$). The codes are packed two per byte, `w` is uint8 of
# $K \times N/2$: byte $(k, j)$ holds $c_{k,2j} + 8$ in its low nibble and $c_{k,2j+1} + 8$ in its high
# nibble. **Launch:** a $(\lceil M/16\rceil, \lceil N/32\rceil)$ grid, `BLOCK_M` = 16, `BLOCK_N` = 32
# output columns (16 bytes), `BLOCK_K` = 32. **Cost target:** each byte of `w` loaded once per
# program row: $\le (KN/2)\lceil M/16\rceil$ bytes, a quarter of what float32 weights would cost
# and half of INT8.

# %%
@triton.jit
def int4_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    raise NotImplementedError("exercise 10.9: a matmul with packed INT4 weights")


check("10.9", int4_matmul_kernel)

# %% [markdown]
# ### Exercise 10.10: a fused cross-entropy
#
# Write `cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS)` so that
# `loss[r]` $= \log\sum_j e^{x_{rj}} - x_{r, t_r}$ for logits `x` (rows $\times$ `n_cols`, float32)
# and int32 targets `t`. **Launch:** one program per row, `BLOCK_COLS` = the next power of two
# $\ge$ `n_cols`. One case has logits around 80 with spread 40. **Cost target:** the row read once
# (plus the target's index).

# %%
@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    raise NotImplementedError("exercise 10.10: a fused cross-entropy")


check("10.10", cross_entropy_kernel)
