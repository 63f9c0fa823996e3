"""The fused softmax and the FlashAttention forward as PyTorch operations, with a backward.

``TileSoftmax`` and ``TileAttention`` are ``torch.autograd.Function`` subclasses: PyTorch calls
their ``forward`` (a Triton kernel) and, for gradients, their ``backward``:

    softmax:    y = softmax(x)               dx = y * (dy - sum(dy * y, axis=-1))   (a Triton kernel)
    attention:  O = softmax(Q K^T s) V       backward by recomputation from the saved log-sum-exp L:
                P = exp(Q K^T s - L),  dV = P^T dO,  dP = dO V^T,  D = rowsum(dO * O),
                dS = P * (dP - D),  dQ = s dS K,  dK = s dS^T Q             (PyTorch, as CS336 allows)

Each forward takes the kernel as an argument (the library's by default), so a learner's kernel
can replace it; :class:`TileAttentionModule` is a small attention layer whose attention is either
PyTorch's ``scaled_dot_product_attention`` or such a kernel. On the interpreter every launch goes
through the profiler's bounds check; on a GPU the kernel runs compiled, on CUDA tensors.
"""

from __future__ import annotations

import math

from . import interpreter_selected, tl, triton
from .kernels import flash_attention_kernel, next_pow2, softmax_kernel
from .profile import run_checked

__all__ = ["softmax_backward_kernel", "TileSoftmax", "TileAttention", "tile_softmax", "tile_attention",
           "TileAttentionModule"]


def _torch():
    import torch
    return torch


def launch(kernel, grid, *args, **kwargs) -> None:
    """Run a kernel: checked on the interpreter (CPU tensors), compiled on a GPU (CUDA tensors)."""
    torch = _torch()
    on_gpu = any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)
    if on_gpu and not interpreter_selected():
        kernel[grid](*args, **kwargs)
    else:
        run_checked(kernel, grid, *args, **kwargs)


@triton.jit
def softmax_backward_kernel(y_ptr, dy_ptr, dx_ptr, n_cols, BLOCK_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_COLS)
    mask = cols < n_cols
    y = tl.load(y_ptr + row * n_cols + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0)
    dx = y * (dy - tl.sum(dy * y, axis=0))
    tl.store(dx_ptr + row * n_cols + cols, dx, mask=mask)


def _rows(x):
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
    if x.ndim < 1 or x.numel() == 0:
        raise ValueError(f"x must be a non-empty tensor with at least one axis, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"x must be floating point, got {x.dtype}")
    return x.contiguous().reshape(-1, x.shape[-1])


class TileSoftmax(_torch().autograd.Function):
    """softmax over the last axis by a Triton kernel (``kernel(x, y, n_cols, row_stride, BLOCK_COLS)``)."""

    @staticmethod
    def forward(ctx, x, kernel=None):
        rows = _rows(x)
        y = _torch().empty_like(rows)
        cols = rows.shape[1]
        launch(kernel or softmax_kernel, (rows.shape[0],), rows, y, cols, cols, BLOCK_COLS=next_pow2(cols))
        y = y.reshape(x.shape)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        y2, dy2 = _rows(y), _rows(dy)
        dx = _torch().empty_like(y2)
        launch(softmax_backward_kernel, (y2.shape[0],), y2, dy2, dx, y2.shape[1],
               BLOCK_COLS=next_pow2(y2.shape[1]))
        return dx.reshape(y.shape), None


def tile_softmax(x, kernel=None):
    """``torch.softmax(x, -1)`` through :class:`TileSoftmax` (differentiable)."""
    return TileSoftmax.apply(x, kernel)


def _heads(t, name):
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {type(t).__name__}")
    if t.ndim < 2:
        raise ValueError(f"{name} must have shape (..., N, d), got {tuple(t.shape)}")
    return t.contiguous().reshape(-1, t.shape[-2], t.shape[-1])


class TileAttention(_torch().autograd.Function):
    """softmax(Q K^T / sqrt(d)) V by a FlashAttention kernel with the signature of
    :func:`course_lib.tiles.kernels.flash_attention_kernel`; backward by recomputation."""

    @staticmethod
    def forward(ctx, q, k, v, causal=False, kernel=None, block_m=16, block_n=16):
        torch = _torch()
        q3, k3, v3 = _heads(q, "q"), _heads(k, "k"), _heads(v, "v")
        if not (q3.shape == k3.shape == v3.shape):
            raise ValueError(f"q, k and v must have one shape, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
        heads, n, d = q3.shape
        scale = 1.0 / math.sqrt(d)
        o = torch.empty_like(q3)
        lse = torch.empty(heads, n, dtype=torch.float64 if q3.dtype == torch.float64 else torch.float32,
                          device=q3.device)
        launch(kernel or flash_attention_kernel, (triton.cdiv(n, block_m), heads), q3, k3, v3, o, lse, n, d, scale,
               BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=max(16, next_pow2(d)), CAUSAL=bool(causal))
        ctx.save_for_backward(q3, k3, v3, o, lse)
        ctx.causal, ctx.scale, ctx.shape = bool(causal), scale, q.shape
        return o.reshape(q.shape)

    @staticmethod
    def backward(ctx, do):
        torch = _torch()
        q, k, v, o, lse = ctx.saved_tensors
        do = _heads(do, "do")
        s = (q @ k.transpose(-1, -2)) * ctx.scale
        if ctx.causal:
            n = q.shape[-2]
            s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), -math.inf)
        p = torch.exp(s - lse[..., None].to(s.dtype))
        dv = p.transpose(-1, -2) @ do
        dp = do @ v.transpose(-1, -2)
        delta = (do * o).sum(-1, keepdim=True)
        ds = p * (dp - delta)
        dq = ds @ k * ctx.scale
        dk = ds.transpose(-1, -2) @ q * ctx.scale
        shape = ctx.shape
        return dq.reshape(shape), dk.reshape(shape), dv.reshape(shape), None, None, None, None


def tile_attention(q, k, v, causal=False, kernel=None):
    """Attention over (..., N, d) tensors through :class:`TileAttention` (differentiable)."""
    return TileAttention.apply(q, k, v, causal, kernel)


class TileAttentionModule(_torch().nn.Module):
    """Multi-head self-attention: x (batch, N, heads * d) -> (batch, N, heads * d).

    ``attention`` is None for PyTorch's ``scaled_dot_product_attention``, or a FlashAttention
    kernel (the learner's) that :class:`TileAttention` launches instead; the weights are shared,
    so the two give the same output and gradients.
    """

    def __init__(self, heads, head_dim, causal=True, attention=None, seed=0):
        torch = _torch()
        super().__init__()
        self.heads, self.head_dim, self.causal, self.attention = int(heads), int(head_dim), bool(causal), attention
        width = self.heads * self.head_dim
        g = torch.Generator().manual_seed(seed)
        self.qkv = torch.nn.Linear(width, 3 * width, bias=False)
        self.out = torch.nn.Linear(width, width, bias=False)
        with torch.no_grad():
            self.qkv.weight.copy_(torch.randn(3 * width, width, generator=g) / math.sqrt(width))
            self.out.weight.copy_(torch.randn(width, width, generator=g) / math.sqrt(width))

    def forward(self, x):
        torch = _torch()
        b, n, _ = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.attention is None:
            o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        else:
            o = TileAttention.apply(q, k, v, self.causal, self.attention)
        return self.out(o.transpose(1, 2).reshape(b, n, self.heads * self.head_dim))
