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
    ### BEGIN SOLUTION
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * slope), mask=mask)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :],
             mask=(rows[:, None] < M) & (cols[None, :] < N))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_COLS,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, xc / tl.sqrt(var + eps) * w + b, mask=mask)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    m = -float("inf")
    total = 0.0
    for start in range(0, n_cols, BLOCK_COLS):            # pass 1: running max and rescaled sum
        cols = start + tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        m_new = tl.maximum(m, tl.max(x, axis=0))
        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK_COLS):            # pass 2: write
        cols = start + tl.arange(0, BLOCK_COLS)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) / total, mask=mask)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    c = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_N * n_m
    first_n = (pid // per_group) * GROUP_N
    cols_in_group = tl.minimum(n_n - first_n, GROUP_N)
    pid_n = first_n + (pid % per_group) % cols_in_group
    pid_m = (pid % per_group) // cols_in_group
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + rows[:, None] * D + dims[None, :], mask=(rows[:, None] < N) & (dims[None, :] < D), other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    lo = tl.maximum(start_m - WINDOW + 1, 0) // BLOCK_N * BLOCK_N
    hi = tl.minimum(start_m + BLOCK_M, N)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (cols[:, None] < hi) & (dims[None, :] < D)
        k = tl.load(k_ptr + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        keep = (cols[None, :] <= rows[:, None]) & (cols[None, :] > rows[:, None] - WINDOW) & (cols[None, :] < hi)
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)     # a row with no key yet stays at zero
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rows[:, None] * D + dims[None, :], acc / l_i[:, None],
             mask=(rows[:, None] < N) & (dims[None, :] < D))
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    HALF: tl.constexpr = BLOCK_N // 2
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rb = tl.program_id(1) * HALF + tl.arange(0, HALF)          # packed byte columns
    rk = tl.arange(0, BLOCK_K)
    acc_even = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_odd = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + kk[:, None] * (N // 2) + rb[None, :], mask=(kk[:, None] < K) & (rb[None, :] < N // 2),
                    other=0).to(tl.int32)
        even = ((w & 15) - 8).to(tl.float32)
        odd = ((w >> 4) - 8).to(tl.float32)
        acc_even = tl.dot(x, even, acc_even)
        acc_odd = tl.dot(x, odd, acc_odd)
    ce = 2 * rb
    se = tl.load(s_ptr + ce, mask=ce < N, other=0.0)
    so = tl.load(s_ptr + ce + 1, mask=ce + 1 < N, other=0.0)
    out_mask = (rm[:, None] < M) & (rb[None, :] < N // 2)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :], acc_even * se[None, :], mask=out_mask)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :] + 1, acc_odd * so[None, :], mask=out_mask)
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(t_ptr + row)
    picked = tl.sum(tl.where(cols == target, x, 0.0), axis=0)      # the target's logit, from the loaded row
    tl.store(loss_ptr + row, lse - picked)
    ### END SOLUTION


check("10.10", cross_entropy_kernel)
