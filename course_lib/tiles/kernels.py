"""The worked Triton kernels of lesson 10, each with a launcher and the traffic it should move.

Every kernel is plain ``@triton.jit`` code (no helper functions, so the profiler's interpreted
copy runs it unchanged on a GPU machine too). Each ``*_launch`` function allocates the output,
picks the grid and runs the kernel through :func:`course_lib.tiles.profile.profile_launch`,
returning ``(output, profile)``; each ``*_bytes`` function is the formula the profile must equal.

    masked elementwise   out = x * a + b                    bytes = b (2 n)
    row softmax, fused   one program per row                bytes = b (2 R C)
    row softmax, 4 passes  max, exp, sum, divide            bytes = b (6 R C + 3 R)
    RMSNorm              y = x / sqrt(mean(x^2) + eps) * w   bytes = b (2 R C + C R)   (w once per row)
    blocked matmul       grouped program order (GROUP_M)    lesson 06: b (mk ceil(n/tn) + kn ceil(m/tm) + mn)
    FlashAttention fwd   online softmax, causal or not      lesson 06: flash_attention_traffic
    INT8-weight matmul   x (fp32) @ (W_int8 * s_col)         W in 1 byte instead of 4
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_bool, check_int, check_number
from . import tl, triton
from .profile import profile_launch

__all__ = [
    "scale_shift_kernel", "scale_shift", "softmax_kernel", "softmax", "softmax_unfused", "softmax_bytes",
    "softmax_unfused_bytes", "row_max_kernel", "exp_sub_kernel", "row_sum_kernel", "row_div_kernel",
    "rmsnorm_kernel", "rmsnorm", "rmsnorm_bytes", "matmul_kernel", "matmul",
    "flash_attention_kernel", "flash_attention", "int8_matmul_kernel", "int8_matmul", "quantize_weights",
    "next_pow2", "kernel_source",
]


def kernel_source(kernel) -> str:
    """The Python source of a ``@triton.jit`` kernel, decorator included (for showing in a lesson)."""
    import inspect
    fn = getattr(kernel, "fn", kernel)
    if not callable(fn):
        raise TypeError(f"kernel must be a @triton.jit function, got {type(kernel).__name__}")
    return inspect.getsource(fn).rstrip()


def next_pow2(n: int) -> int:
    """The smallest power of two >= n (tl.arange needs a power-of-two length)."""
    n = check_int("n", n, min_value=1)
    return 1 << (n - 1).bit_length()


def _torch():
    import torch
    return torch


def _check_tensor(name, x, ndim=None, dtypes=None):
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(x.shape)}")
    if x.numel() == 0:
        raise ValueError(f"{name} must not be empty")
    if dtypes is not None and x.dtype not in dtypes:
        raise TypeError(f"{name} must have dtype {' or '.join(str(d) for d in dtypes)}, got {x.dtype}")
    return x.contiguous()


def _floats():
    torch = _torch()
    return (torch.float32, torch.float64, torch.float16, torch.bfloat16)


# --------------------------------------------------------------------------------------------
# 1. A masked elementwise kernel
# --------------------------------------------------------------------------------------------

@triton.jit
def scale_shift_kernel(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    pid = tl.program_id(0)                          # which block of BLOCK elements this program owns
    offsets = pid * BLOCK + tl.arange(0, BLOCK)     # a tile of BLOCK element indices
    mask = offsets < n                              # the guard: the last block is partly past the end
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * a + b, mask=mask)


def scale_shift(x, a=2.0, b=1.0, block=256) -> tuple:
    """out = a x + b over a 1D tensor, ``ceil(n / block)`` programs. Bytes: 2 n b (read x, write out)."""
    x = _check_tensor("x", x, ndim=1, dtypes=_floats())
    block = check_int("block", block, min_value=1, max_value=1 << 16)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two (tl.arange needs one), got {block}")
    out = _torch().empty_like(x)
    n = x.numel()
    prof = profile_launch(scale_shift_kernel, (triton.cdiv(n, block),), x, out, n,
                          float(check_number("a", a)), float(check_number("b", b)), BLOCK=block)
    return out, prof


# --------------------------------------------------------------------------------------------
# 2. Row softmax: fused (one pass over HBM) and in four passes
# --------------------------------------------------------------------------------------------

@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)                                  # one program per row
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)                               # exp of large scores would overflow
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y, mask=mask)


@triton.jit
def row_max_kernel(x_ptr, m_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(m_ptr + row, tl.max(x, axis=0))


@triton.jit
def exp_sub_kernel(x_ptr, m_ptr, e_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    m = tl.load(m_ptr + row)
    tl.store(e_ptr + row * n_cols + cols, tl.exp(x - m), mask=mask)


@triton.jit
def row_sum_kernel(e_ptr, s_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    e = tl.load(e_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(s_ptr + row, tl.sum(e, axis=0))


@triton.jit
def row_div_kernel(e_ptr, s_ptr, y_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    e = tl.load(e_ptr + row * n_cols + cols, mask=mask)
    s = tl.load(s_ptr + row)
    tl.store(y_ptr + row * n_cols + cols, e / s, mask=mask)


def softmax(x) -> tuple:
    """Softmax along the last axis of a 2D tensor, one program per row (the row fits one tile)."""
    x = _check_tensor("x", x, ndim=2, dtypes=_floats())
    rows, cols = x.shape
    y = _torch().empty_like(x)
    prof = profile_launch(softmax_kernel, (rows,), x, y, cols, cols, BLOCK_COLS=next_pow2(cols))
    return y, prof


def softmax_unfused(x) -> tuple:
    """The same softmax as four kernels, each a pass over HBM: ``(y, [profiles])``."""
    torch = _torch()
    x = _check_tensor("x", x, ndim=2, dtypes=_floats())
    rows, cols = x.shape
    bc = next_pow2(cols)
    m = torch.empty(rows, dtype=x.dtype)
    s = torch.empty(rows, dtype=x.dtype)
    e = torch.empty_like(x)
    y = torch.empty_like(x)
    profs = [profile_launch(row_max_kernel, (rows,), x, m, cols, BLOCK_COLS=bc),
             profile_launch(exp_sub_kernel, (rows,), x, m, e, cols, BLOCK_COLS=bc),
             profile_launch(row_sum_kernel, (rows,), e, s, cols, BLOCK_COLS=bc),
             profile_launch(row_div_kernel, (rows,), e, s, y, cols, BLOCK_COLS=bc)]
    return y, profs


def softmax_bytes(rows, cols, bytes_per_element=4) -> float:
    """Fused: read x once, write y once: b (2 R C)."""
    r, c = check_int("rows", rows, min_value=1), check_int("cols", cols, min_value=1)
    return float(bytes_per_element) * 2 * r * c


def softmax_unfused_bytes(rows, cols, bytes_per_element=4) -> float:
    """Four passes: max reads x, writes m; exp reads x, m, writes e; sum reads e, writes s; divide
    reads e, s, writes y:  b (6 R C + 4 R)  (the row statistics m and s: written once, read once)."""
    r, c = check_int("rows", rows, min_value=1), check_int("cols", cols, min_value=1)
    return float(bytes_per_element) * (6 * r * c + 4 * r)


# --------------------------------------------------------------------------------------------
# 3. RMSNorm, fused
# --------------------------------------------------------------------------------------------

@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask)
    mean_sq = tl.sum(x * x, axis=0) / n_cols               # masked lanes are 0: they add nothing
    y = x / tl.sqrt(mean_sq + eps) * w
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


def rmsnorm(x, w, eps=1e-6) -> tuple:
    """y = x / sqrt(mean(x^2) + eps) * w over the last axis, one program per row."""
    x = _check_tensor("x", x, ndim=2, dtypes=_floats())
    w = _check_tensor("w", w, ndim=1, dtypes=_floats())
    if w.shape[0] != x.shape[1]:
        raise ValueError(f"w must have one weight per column of x ({x.shape[1]}), got {w.shape[0]}")
    rows, cols = x.shape
    y = _torch().empty_like(x)
    prof = profile_launch(rmsnorm_kernel, (rows,), x, w, y, cols,
                          float(check_number("eps", eps, min_value=0)), BLOCK_COLS=next_pow2(cols))
    return y, prof


def rmsnorm_bytes(rows, cols, bytes_per_element=4) -> float:
    """Read x, write y, and w once per row (no reuse between programs): b (2 R C + R C)."""
    r, c = check_int("rows", rows, min_value=1), check_int("cols", cols, min_value=1)
    return float(bytes_per_element) * 3 * r * c


# --------------------------------------------------------------------------------------------
# 4. Blocked matmul, with grouped program order
# --------------------------------------------------------------------------------------------

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BLOCK_M)
    n_n = tl.cdiv(N, BLOCK_N)
    # Grouped order: programs walk GROUP_M rows of C tiles column by column, so the programs that
    # run together share rows of A and columns of B. GROUP_M = 1 is plain row-major order.
    per_group = GROUP_M * n_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(n_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
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


def matmul(a, b, block_m=32, block_n=32, block_k=32, group_m=1) -> tuple:
    """C = A B for 2D tensors, one program per BLOCK_M x BLOCK_N tile of C, in grouped order."""
    torch = _torch()
    a = _check_tensor("a", a, ndim=2, dtypes=_floats())
    b = _check_tensor("b", b, ndim=2, dtypes=_floats())
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    blocks = [check_int(n, v, min_value=16, max_value=256) for n, v in
              (("block_m", block_m), ("block_n", block_n), ("block_k", block_k))]
    for name, v in zip(("block_m", "block_n", "block_k"), blocks):
        if v & (v - 1):
            raise ValueError(f"{name} must be a power of two, got {v}")
    group_m = check_int("group_m", group_m, min_value=1, max_value=64)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=torch.float32)
    grid = (triton.cdiv(m, blocks[0]) * triton.cdiv(n, blocks[1]),)
    prof = profile_launch(matmul_kernel, grid, a, b, c, m, n, k, BLOCK_M=blocks[0], BLOCK_N=blocks[1],
                          BLOCK_K=blocks[2], GROUP_M=group_m)
    return c, prof


# --------------------------------------------------------------------------------------------
# 5. FlashAttention forward
# --------------------------------------------------------------------------------------------

@triton.jit
def flash_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N, D, scale,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                           CAUSAL: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M             # this program's block of queries
    head = tl.program_id(1)                          # one head (of batch x heads) per grid column
    base = head * N * D
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, BLOCK_D)
    row_ok = rows < N
    dim_ok = dims < D
    q = tl.load(q_ptr + base + rows[:, None] * D + dims[None, :], mask=row_ok[:, None] & dim_ok[None, :], other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)     # running max of each query row
    l_i = tl.zeros((BLOCK_M,), tl.float32)                   # running sum of exp(s - m)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)           # running unnormalised output
    hi = N
    if CAUSAL:
        hi = tl.minimum(start_m + BLOCK_M, N)                # keys past the block's last query: never read
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < hi
        kv_mask = col_ok[:, None] & dim_ok[None, :]
        k = tl.load(k_ptr + base + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)                          # rescale what was summed so far
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    tl.store(o_ptr + base + rows[:, None] * D + dims[None, :], acc / l_i[:, None],
             mask=row_ok[:, None] & dim_ok[None, :])
    tl.store(lse_ptr + head * N + rows, m_i + tl.log(l_i), mask=row_ok)


def flash_attention(q, k, v, causal=False, block_m=16, block_n=16, scale=None) -> tuple:
    """Attention by online softmax: q, k, v of shape (N, d) or (heads, N, d), one program per
    block of BLOCK_M queries and head. Returns ``(o, lse, profile)``; lse is the log-sum-exp of
    each query row (what a backward pass needs)."""
    torch = _torch()
    causal = check_bool("causal", causal)
    squeeze = q.ndim == 2
    q3, k3, v3 = (x.unsqueeze(0) if isinstance(x, torch.Tensor) and x.ndim == 2 else x for x in (q, k, v))
    q3 = _check_tensor("q", q3, ndim=3, dtypes=_floats())
    k3 = _check_tensor("k", k3, ndim=3, dtypes=_floats())
    v3 = _check_tensor("v", v3, ndim=3, dtypes=_floats())
    if not (q3.shape == k3.shape == v3.shape):
        raise ValueError(f"q, k and v must have the same shape, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    bm = check_int("block_m", block_m, min_value=16, max_value=256)
    bn = check_int("block_n", block_n, min_value=16, max_value=256)
    for name, b in (("block_m", bm), ("block_n", bn)):
        if b & (b - 1):
            raise ValueError(f"{name} must be a power of two, got {b}")
    heads, n, d = q3.shape
    sc = 1.0 / math.sqrt(d) if scale is None else float(check_number("scale", scale, min_value=0, allow_min=False))
    o = torch.empty_like(q3)
    lse = torch.empty(heads, n, dtype=torch.float32 if q3.dtype != torch.float64 else torch.float64)
    prof = profile_launch(flash_attention_kernel, (triton.cdiv(n, bm), heads), q3, k3, v3, o, lse, n, d, sc,
                          BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=max(16, next_pow2(d)), CAUSAL=causal)
    if squeeze:
        return o[0], lse[0], prof
    return o, lse, prof


# --------------------------------------------------------------------------------------------
# 6. A matmul with INT8 weights and one scale per output column
# --------------------------------------------------------------------------------------------

@triton.jit
def int8_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(x, w.to(tl.float32), acc)               # the codes widen on chip, after the load
    s = tl.load(s_ptr + rn, mask=rn < N, other=0.0)          # a column's scale factors out of its sum
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc * s[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))


def quantize_weights(w) -> tuple:
    """Symmetric INT8 codes with one FP32 scale per output column (lesson 05's absmax rule,
    ``course_lib.formats.quantize(..., granularity='channel', axis=1)``): ``(codes, scales)``."""
    torch = _torch()
    from ..formats import quantize
    w = _check_tensor("w", w, ndim=2, dtypes=_floats())
    q = quantize(w.double().numpy(), "int8", granularity="channel", axis=1)
    return (torch.from_numpy(q.codes.astype(np.int8)), torch.from_numpy(q.scales.astype(np.float32)))


def int8_matmul(x, codes, scales, block_m=16, block_n=32, block_k=32) -> tuple:
    """y = x @ (codes * scales[None, :]) with INT8 codes (K, N) and FP32 scales (N,)."""
    torch = _torch()
    x = _check_tensor("x", x, ndim=2, dtypes=(torch.float32,))
    codes = _check_tensor("codes", codes, ndim=2, dtypes=(torch.int8,))
    scales = _check_tensor("scales", scales, ndim=1, dtypes=(torch.float32,))
    m, k = x.shape
    if codes.shape[0] != k or scales.shape[0] != codes.shape[1]:
        raise ValueError(f"codes must be ({k}, N) and scales (N,), got {tuple(codes.shape)} and {tuple(scales.shape)}")
    n = codes.shape[1]
    y = torch.empty(m, n, dtype=torch.float32)
    bm, bn, bk = (check_int(nm, v, min_value=16, max_value=256) for nm, v in
                  (("block_m", block_m), ("block_n", block_n), ("block_k", block_k)))
    prof = profile_launch(int8_matmul_kernel, (triton.cdiv(m, bm), triton.cdiv(n, bn)), x, codes, scales, y,
                          m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return y, prof
