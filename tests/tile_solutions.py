"""Lesson 10's puzzle kernels for the tests: a correct one per task (as in solutions/10_tile_kernels.py)
and at least two broken ones each, with the words their check's message must contain."""

from __future__ import annotations

from course_lib.tiles import tl, triton


# --- 10.1 leaky ReLU ---------------------------------------------------------------------------

@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * slope), mask=mask)


@triton.jit
def leaky_relu_no_mask(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * slope))


@triton.jit
def leaky_relu_as_relu(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


@triton.jit
def leaky_relu_twice(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    neg = tl.load(x_ptr + offs, mask=mask) * slope
    tl.store(out_ptr + offs, tl.where(x > 0, x, neg), mask=mask)


# --- 10.2 outer add ----------------------------------------------------------------------------

@triton.jit
def outer_add_kernel(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :],
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def outer_add_rows_only_mask(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x[:, None] + y[None, :], mask=rows[:, None] < M)


@triton.jit
def outer_add_transposed(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows, mask=rows < M)
    y = tl.load(y_ptr + cols, mask=cols < N)
    tl.store(out_ptr + cols[None, :] * M + rows[:, None], x[:, None] + y[None, :],
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def outer_add_tile_loads(x_ptr, y_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] + 0 * cols[None, :], mask=mask)       # a whole tile of x
    y = tl.load(y_ptr + cols[None, :] + 0 * rows[:, None], mask=mask)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], x + y, mask=mask)


# --- 10.3 row sum ------------------------------------------------------------------------------

@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_COLS,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def row_sum_one_block(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def row_sum_overwrite(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        total = tl.sum(tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0), axis=0)
    tl.store(out_ptr + row, total)


@triton.jit
def row_sum_unmasked(x_ptr, out_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_COLS,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        acc += tl.load(x_ptr + row * n_cols + cols)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


# --- 10.4 LayerNorm ----------------------------------------------------------------------------

@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
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


@triton.jit
def layernorm_padded_variance(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = x - mean                                   # padded lanes are now -mean
    var = tl.sum(xc * xc, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, xc / tl.sqrt(var + eps) * w + b, mask=mask)


@triton.jit
def layernorm_one_pass(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    var = tl.sum(x * x, axis=0) / n_cols - mean * mean     # cancels when the mean is large
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, (x - mean) / tl.sqrt(var + eps) * w + b, mask=mask)


@triton.jit
def layernorm_block_divisor(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / BLOCK_COLS
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / BLOCK_COLS
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, xc / tl.sqrt(var + eps) * w + b, mask=mask)


# --- 10.5 softmax over long rows ----------------------------------------------------------------

@triton.jit
def softmax_long_kernel(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
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


@triton.jit
def softmax_long_no_rescale(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    total = 0.0
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
        total = total + tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) / total, mask=mask)


@triton.jit
def softmax_long_no_max(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        total = total + tl.sum(tl.exp(x), axis=0)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(y_ptr + row * n_cols + cols, tl.exp(x) / total, mask=mask)


@triton.jit
def softmax_long_three_passes(x_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    total = 0.0
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        total = total + tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK_COLS):
        cols = start + tl.arange(0, BLOCK_COLS)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
        tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) / total, mask=mask)


# --- 10.6 matmul + bias + ReLU -----------------------------------------------------------------

@triton.jit
def matmul_bias_relu_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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


@triton.jit
def matmul_bias_in_loop(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
        acc = tl.dot(a, b, acc) + bias[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.maximum(acc, 0.0), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_relu_first(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.maximum(acc, 0.0) + bias[None, :],
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_store_reload(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=mask)              # an unfused epilogue
    c = tl.load(c_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.maximum(c + bias[None, :], 0.0), mask=mask)


# --- 10.7 grouped matmul -----------------------------------------------------------------------

@triton.jit
def grouped_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
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


@triton.jit
def grouped_matmul_row_major(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
    pid = tl.program_id(0)
    n_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // n_n
    pid_n = pid % n_n
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


@triton.jit
def grouped_matmul_no_k_mask(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
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
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def grouped_matmul_rows(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, GROUP_N: tl.constexpr):
    # the lesson's order (groups of tile rows), copied instead of designed
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_N * n_n
    first_m = (pid // per_group) * GROUP_N
    rows_in_group = tl.minimum(n_m - first_m, GROUP_N)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group
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


# --- 10.8 sliding-window attention --------------------------------------------------------------

@triton.jit
def window_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
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


@triton.jit
def window_attention_no_rescale(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
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
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i + tl.sum(p, axis=1)                 # no rescale by exp(m_old - m_new)
        acc = acc + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rows[:, None] * D + dims[None, :], acc / l_i[:, None],
             mask=(rows[:, None] < N) & (dims[None, :] < D))


@triton.jit
def window_attention_from_zero(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + rows[:, None] * D + dims[None, :], mask=(rows[:, None] < N) & (dims[None, :] < D), other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, N)
    for start_n in range(0, hi, BLOCK_N):             # every key block up to the diagonal
        cols = start_n + tl.arange(0, BLOCK_N)
        kv_mask = (cols[:, None] < hi) & (dims[None, :] < D)
        k = tl.load(k_ptr + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        keep = (cols[None, :] <= rows[:, None]) & (cols[None, :] > rows[:, None] - WINDOW) & (cols[None, :] < hi)
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rows[:, None] * D + dims[None, :], acc / l_i[:, None],
             mask=(rows[:, None] < N) & (dims[None, :] < D))


@triton.jit
def window_attention_unsafe_max(q_ptr, k_ptr, v_ptr, o_ptr, N, D, scale, WINDOW,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
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
        m_new = tl.maximum(m_i, tl.max(s, axis=1))     # -inf for a row with no key in this block yet
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    tl.store(o_ptr + rows[:, None] * D + dims[None, :], acc / l_i[:, None],
             mask=(rows[:, None] < N) & (dims[None, :] < D))


# --- 10.9 INT4 matmul --------------------------------------------------------------------------

@triton.jit
def int4_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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


@triton.jit
def int4_matmul_unsigned(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rb = tl.program_id(1) * HALF + tl.arange(0, HALF)
    rk = tl.arange(0, BLOCK_K)
    acc_even = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_odd = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + kk[:, None] * (N // 2) + rb[None, :], mask=(kk[:, None] < K) & (rb[None, :] < N // 2),
                    other=0).to(tl.int32)
        acc_even = tl.dot(x, (w & 15).to(tl.float32), acc_even)
        acc_odd = tl.dot(x, (w >> 4).to(tl.float32), acc_odd)
    ce = 2 * rb
    se = tl.load(s_ptr + ce, mask=ce < N, other=0.0)
    so = tl.load(s_ptr + ce + 1, mask=ce + 1 < N, other=0.0)
    out_mask = (rm[:, None] < M) & (rb[None, :] < N // 2)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :], acc_even * se[None, :], mask=out_mask)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :] + 1, acc_odd * so[None, :], mask=out_mask)


@triton.jit
def int4_matmul_two_loads(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    HALF: tl.constexpr = BLOCK_N // 2
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rb = tl.program_id(1) * HALF + tl.arange(0, HALF)
    rk = tl.arange(0, BLOCK_K)
    acc_even = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    acc_odd = tl.zeros((BLOCK_M, HALF), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        wmask = (kk[:, None] < K) & (rb[None, :] < N // 2)
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        lo = tl.load(w_ptr + kk[:, None] * (N // 2) + rb[None, :], mask=wmask, other=8).to(tl.int32)
        hi = tl.load(w_ptr + kk[:, None] * (N // 2) + rb[None, :], mask=wmask, other=128).to(tl.int32)
        acc_even = tl.dot(x, ((lo & 15) - 8).to(tl.float32), acc_even)
        acc_odd = tl.dot(x, ((hi >> 4) - 8).to(tl.float32), acc_odd)
    ce = 2 * rb
    se = tl.load(s_ptr + ce, mask=ce < N, other=0.0)
    so = tl.load(s_ptr + ce + 1, mask=ce + 1 < N, other=0.0)
    out_mask = (rm[:, None] < M) & (rb[None, :] < N // 2)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :], acc_even * se[None, :], mask=out_mask)
    tl.store(y_ptr + rm[:, None] * N + ce[None, :] + 1, acc_odd * so[None, :], mask=out_mask)


# --- 10.10 cross-entropy -----------------------------------------------------------------------

@triton.jit
def cross_entropy_kernel(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(t_ptr + row)
    picked = tl.sum(tl.where(cols == target, x, 0.0), axis=0)      # the target's logit, from the loaded row
    tl.store(loss_ptr + row, lse - picked)


@triton.jit
def cross_entropy_no_max(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    lse = tl.log(tl.sum(tl.exp(x), axis=0))
    target = tl.load(t_ptr + row)
    picked = tl.sum(tl.where(cols == target, x, 0.0), axis=0)
    tl.store(loss_ptr + row, lse - picked)


@triton.jit
def cross_entropy_row0_target(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(t_ptr + row)
    picked = tl.load(x_ptr + target)                   # forgot the row's offset
    tl.store(loss_ptr + row, lse - picked)


@triton.jit
def cross_entropy_zero_padding(x_ptr, t_ptr, loss_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)    # exp(0) = 1 per padded lane
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(t_ptr + row)
    picked = tl.sum(tl.where(cols == target, x, 0.0), axis=0)
    tl.store(loss_ptr + row, lse - picked)


#: task -> the correct kernel
GOOD = {
    "leaky_relu": leaky_relu_kernel, "outer_add": outer_add_kernel, "row_sum": row_sum_kernel,
    "layernorm": layernorm_kernel, "softmax_long": softmax_long_kernel, "matmul_bias_relu": matmul_bias_relu_kernel,
    "grouped_matmul": grouped_matmul_kernel, "window_attention": window_attention_kernel,
    "int4_matmul": int4_matmul_kernel, "cross_entropy": cross_entropy_kernel,
}

#: (task, broken kernel, words the check's message must contain)
BROKEN = [
    ("leaky_relu", leaky_relu_no_mask, ("x_ptr", "mask")),
    ("leaky_relu", leaky_relu_as_relu, ("[mistake: relu]",)),
    ("leaky_relu", leaky_relu_twice, ("over the cost target", "bytes moved")),
    ("outer_add", outer_add_rows_only_mask, ("outside", "out_ptr")),
    ("outer_add", outer_add_transposed, ("[mistake: transposed]",)),
    ("outer_add", outer_add_tile_loads, ("over the cost target", "broadcast")),
    ("row_sum", row_sum_one_block, ("[mistake: one-block]",)),
    ("row_sum", row_sum_overwrite, ("[mistake: last-block]",)),
    ("row_sum", row_sum_unmasked, ("x_ptr", "mask")),
    ("layernorm", layernorm_padded_variance, ("[mistake: padded-variance]",)),
    ("layernorm", layernorm_one_pass, ("E[x^2] - E[x]^2",)),
    ("layernorm", layernorm_block_divisor, ("[mistake: block-divisor]",)),
    ("softmax_long", softmax_long_no_rescale, ("[mistake: no-rescale]",)),
    ("softmax_long", softmax_long_no_max, ("subtract the row's (running) max",)),
    ("softmax_long", softmax_long_three_passes, ("over the cost target", "three times")),
    ("matmul_bias_relu", matmul_bias_in_loop, ("[mistake: bias-in-loop]",)),
    ("matmul_bias_relu", matmul_relu_first, ("[mistake: relu-first]",)),
    ("matmul_bias_relu", matmul_store_reload, ("over the cost target", "store C once")),
    ("grouped_matmul", grouped_matmul_row_major, ("over the cost target", "row-major")),
    ("grouped_matmul", grouped_matmul_no_k_mask, ("outside", "mask")),
    ("grouped_matmul", grouped_matmul_rows, ("over the cost target", "groups rows")),
    ("window_attention", window_attention_no_rescale, ("[mistake: no-rescale]",)),
    ("window_attention", window_attention_from_zero, ("over the cost target", "starts at 0")),
    ("window_attention", window_attention_unsafe_max, ("NaN", "-inf")),
    ("int4_matmul", int4_matmul_unsigned, ("[mistake: unsigned]",)),
    ("int4_matmul", int4_matmul_two_loads, ("over the cost target", "twice")),
    ("cross_entropy", cross_entropy_no_max, ("subtract the row's max",)),
    ("cross_entropy", cross_entropy_row0_target, ("[mistake: target-of-row-0]",)),
    ("cross_entropy", cross_entropy_zero_padding, ("expected",)),
]
