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
# # 10 · Tile kernels: Triton up to FlashAttention, checked and costed on a laptop
#
# **Learning objectives.** After this lesson you can
#
# 1. write a Triton kernel as one program per tile: `tl.program_id`, `tl.arange`, pointer
#    arithmetic, a mask for the edge, `tl.load`/`tl.store`, a reduction along an axis, `tl.dot`;
# 2. say what the Triton compiler does that lesson 09 did by hand (coalescing, staging in shared
#    memory, barriers) and what is still yours (the tiling, the order of programs, the arithmetic);
# 3. count a kernel's HBM bytes and FLOP from a profile of what each program did, and match them
#    to lesson 06's formulas for a fused softmax, a blocked matmul and FlashAttention;
# 4. explain the bytes grouped program order saves through L2, and the bytes INT8 weights save;
# 5. predict a kernel's time on a catalog accelerator at a realistic size, and call your kernel
#    from PyTorch with a backward that passes `gradcheck`.
#
# Most GPU kernels for machine learning are now written one level above lesson 09's threads, at
# the level of **tiles**, in [Triton](https://triton-lang.org). Without a GPU the course runs
# them on Triton's own CPU interpreter (`TRITON_INTERPRET=1`, which `course_lib.tiles` sets
# before triton is imported), on PyTorch tensors. The course's profiler watches every load, store
# and `tl.dot` of every program, so bytes and FLOP are counted, not guessed, and an access past
# the end of a tensor is an error that names the program, never a silent wrong answer.

# %%
import math

import numpy as np
import matplotlib.pyplot as plt
import torch

from course_lib.tiles import interpreter_selected, tl, triton
from course_lib.tiles import kernels as K
from course_lib.tiles.order import grouped_matmul_traffic, group_sweep
from course_lib.tiles.profile import (TileAccessError, precision_of, predict_tiles, profile_launch,
                                      tile_reads)
from course_lib.attention import flash_attention as np_flash_attention
from course_lib.attention import flash_attention_traffic, naive_attention_traffic
from course_lib.hardware import get_accelerator
from course_lib.roofline import Kernel, place_kernel
from course_lib.tiling import tiled_matmul_traffic
from course_lib.plots import use_course_style
from course_lib.plots.roofline import plot_roofline
from course_lib.plots.tiles import plot_grouped_order, plot_group_sweep, plot_tile_reads

use_course_style()
torch.manual_seed(10)
h100 = get_accelerator("H100 SXM")
print(f"triton {triton.__version__}, torch {torch.__version__}; "
      f"{'Triton interpreter (CPU)' if interpreter_selected() else 'compiled Triton'}")

# %% [markdown]
# ## 1. The tile model against the SIMT model
#
# In lesson 09 a kernel was written for **one thread**: it found its element from
# `blockIdx * blockDim + threadIdx`, and the author arranged the 32 lanes of a warp so their
# addresses fell in few sectors, staged tiles through shared memory and placed every
# `cuda.syncthreads()`. A Triton kernel is written for **one program**, which owns a whole tile:
#
# | lesson 09 (CUDA Python)                    | lesson 10 (Triton)                                      |
# |--------------------------------------------|---------------------------------------------------------|
# | `i = cuda.grid(1)`: one index per thread   | `offs = pid * BLOCK + tl.arange(0, BLOCK)`: a tile of indices |
# | `if i < n:` guards one thread              | `mask = offs < n` guards the lanes of the tile          |
# | `a[i]`, one element                        | `tl.load(a_ptr + offs, mask=mask)`, a tile              |
# | a reduction over threads, with barriers    | `tl.sum(x, axis=0)` over the tile                       |
# | a tiled matmul staged in shared memory     | `tl.dot(a_tile, b_tile, acc)`                           |
#
# The compiler now splits the tile over warps and lanes, orders the loads so each warp's are
# coalesced, stages tiles in shared memory, inserts the barriers and uses the tensor cores for
# `tl.dot`. What stays yours: **which tile each program owns** (the tiling), **in which order
# programs run** (section 5), the **arithmetic** (the max subtracted before `exp`, the rescaling of
# section 6) and the **masks**. Pointer arithmetic is in elements: `a_ptr + offs` is the address
# of `a[offs]`. A grid of programs is launched with `kernel[grid](args...)`; a `tl.constexpr`
# argument (a block size) is fixed when the kernel compiles, so `tl.arange` needs a power of two.
#
# ## 2. A masked elementwise kernel, profiled
#
# `out = a x + b` over $n$ elements in blocks of `BLOCK`. The last block is partly past the end:
# its mask keeps those lanes from loading or storing. The profile counts what each of the
# $\lceil n / \text{BLOCK} \rceil$ programs did: a load of $x$ and a store of `out` per program,
#
# $$ Q = b\,(n_{\text{read}} + n_{\text{written}}) = 2 b n, \qquad F = 2 \cdot \text{BLOCK} \cdot \lceil n / \text{BLOCK} \rceil $$
#
# (masked lanes compute too, as on a GPU; they just move no bytes).

# %%
print(K.kernel_source(K.scale_shift_kernel))
n_elem = 1000
x = torch.randn(n_elem)
out, prof = K.scale_shift(x, a=2.0, b=1.0, block=256)
print(prof)
assert torch.allclose(out, 2 * x + 1)
assert prof.bytes_moved == 2 * 4 * n_elem and prof.programs == math.ceil(n_elem / 256)
assert prof.elementwise_flops == 2 * 256 * prof.programs and prof.load_lanes_active == n_elem

# %% [markdown]
# The same launch without its mask is caught before it touches memory. Triton's interpreter
# itself would read whatever lies past the end of `x`; on a GPU the result would be garbage, or
# a crash in some other kernel later:

# %%
@triton.jit
def scale_shift_no_mask(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * a + b)


try:
    profile_launch(scale_shift_no_mask, (4,), x, torch.empty(n_elem), n_elem, 2.0, 1.0, BLOCK=256)
except TileAccessError as err:
    print(err)
    caught = err
assert caught.program == (3, 0, 0) and caught.tensor == "x_ptr" and caught.offsets[0] == n_elem

# %% [markdown]
# ## 3. A fused row softmax: one pass over HBM
#
# A softmax computed by separate kernels (the row max, then `exp(x - max)`, then the row sum,
# then the division, as eager PyTorch might) reads and writes the $R \times C$ matrix several
# times. One program per row that keeps its row on chip reads $x$ once and writes $y$ once:
#
# $$ Q_{\text{fused}} = 2bRC, \qquad Q_{\text{4 passes}} = b\,(6RC + 4R). $$
#
# Two details are the author's: the **max subtracted before `exp`** (without it, a score of 100
# overflows float32's `exp`), and `other=-inf` for masked lanes, so they never win the max and
# add $e^{-\infty} = 0$ to the sum.

# %%
print(K.kernel_source(K.softmax_kernel))
rows, cols = 37, 100
scores = torch.randn(rows, cols) * 30
y_fused, p_fused = K.softmax(scores)
y_four, p_four = K.softmax_unfused(scores)
q_fused, q_four = p_fused.bytes_moved, sum(p.bytes_moved for p in p_four)
print(f"fused: {q_fused:,} B in 1 kernel; four passes: {q_four:,} B in {len(p_four)} kernels "
      f"({q_four / q_fused:.2f}x)")
assert torch.allclose(y_fused, torch.softmax(scores, -1), atol=1e-6) and torch.allclose(y_four, y_fused, atol=1e-6)
assert q_fused == K.softmax_bytes(rows, cols) and q_four == K.softmax_unfused_bytes(rows, cols)

# %% [markdown]
# Both are memory-bound by far (a few FLOP per byte), so time is bytes over bandwidth. At a
# realistic size, 8192 rows of 4096 BF16 scores, on an H100 SXM:

# %%
big_rows, big_cols = 8192, 4096
t_fused = predict_tiles(5 * big_rows * big_cols, K.softmax_bytes(big_rows, big_cols, 2), "H100 SXM", "bf16")
t_four = predict_tiles(5 * big_rows * big_cols, K.softmax_unfused_bytes(big_rows, big_cols, 2), "H100 SXM", "bf16")
print(f"fused {t_fused.t_s * 1e6:.0f} us ({t_fused.bound}-bound), four passes {t_four.t_s * 1e6:.0f} us")
assert t_fused.bound == "memory" and math.isclose(t_fused.t_s, 2 * 2 * big_rows * big_cols / h100.mem_bandwidth)

# %% [markdown]
# ## 4. A fused RMSNorm
#
# $y = x / \sqrt{\text{mean}(x^2) + \varepsilon} \cdot w$ per row: a reduction (`tl.sum` of
# $x^2$ along the row) and an elementwise step, in one program per row. Masked lanes load 0, so
# they add nothing to the sum; the division is by the true width `n_cols`, not the padded block.
# Each program also loads the weight vector $w$: $R$ programs read it $R$ times, but it is only
# $C$ distinct values, which L2 serves after the first program (the profile's *distinct* bytes).

# %%
print(K.kernel_source(K.rmsnorm_kernel))
x2, w2 = torch.randn(rows, cols), torch.rand(cols) + 0.5
y_rms, p_rms = K.rmsnorm(x2, w2)
w_traffic = p_rms.tensor("w_ptr")
print(f"{p_rms.bytes_moved:,} B moved, of which w {w_traffic.bytes_read:,} B ({w_traffic.distinct_bytes_read:,} B distinct)")
assert torch.allclose(y_rms, x2 / torch.sqrt((x2 * x2).mean(-1, keepdim=True) + 1e-6) * w2, atol=1e-5)
assert p_rms.bytes_moved == K.rmsnorm_bytes(rows, cols) and w_traffic.distinct_bytes_read == 4 * cols

# %% [markdown]
# ## 5. A blocked matmul, and the order of its programs
#
# One program per `BLOCK_M x BLOCK_N` tile of $C$ walks $K$ in steps of `BLOCK_K`, loading a tile
# of $A$ and one of $B$ and accumulating `tl.dot` of the two in float32. Each program reads a row
# panel of $A$ and a column panel of $B$, so with no reuse between programs the bytes are lesson
# 06's formula, edge tiles included:
#
# $$ Q = b\,\bigl(mk\lceil n/B_N\rceil + kn\lceil m/B_M\rceil + mn\bigr). $$

# %%
print(K.kernel_source(K.matmul_kernel))
m, k, n = 120, 40, 110
A, B = torch.randn(m, k), torch.randn(k, n)
C_flat, p_flat = K.matmul(A, B, 32, 32, 32, group_m=1)
formula = tiled_matmul_traffic(m, k, n, 32, 32, bytes_per_element=4)
print(p_flat)
print(f"lesson 06's formula: {formula.bytes_moved:,.0f} B; the profile: {p_flat.bytes_moved:,} B")
assert torch.allclose(C_flat, A @ B, atol=1e-4) and p_flat.bytes_moved == formula.bytes_moved
assert p_flat.dot_flops == 2 * 32 * 32 * 32 * math.ceil(k / 32) * p_flat.programs

# %% [markdown]
# The programs that a GPU runs at the same time (a **wave**: about one per SM) read some of the
# same panels, and L2 serves the repeats. In row-major order (`GROUP_M = 1`) a wave is a long row
# of $C$ tiles: one panel of $A$, many of $B$. **Grouped order** walks `GROUP_M` tile rows column
# by column, so a wave is closer to a square and reads fewer panels; the total (lesson 06's count)
# is the same. The profile's `hbm_bytes(W)` counts each byte once per wave of $W$ programs.
# Here, 16 tiles in waves of 4, row-major against groups of 2, with the elements of $A$ and $B$
# that the first wave read:

# %%
C_grouped, p_grouped = K.matmul(A, B, 32, 32, 32, group_m=2)
wave = 4
print(f"waves of {wave}: row-major {p_flat.hbm_bytes(wave):,} B, grouped {p_grouped.hbm_bytes(wave):,} B "
      f"(no reuse: {p_flat.bytes_moved:,} B both)")
for g, p in ((1, p_flat), (2, p_grouped)):        # the launch-free model of course_lib.tiles.order agrees
    assert grouped_matmul_traffic(m, k, n, 32, 32, g, wave, bytes_per_element=4).bytes_waves == p.hbm_bytes(wave)
assert torch.equal(C_grouped, C_flat) and p_grouped.hbm_bytes(wave) < p_flat.hbm_bytes(wave)
fig, axes = plt.subplots(1, 4, figsize=(12, 3.2))
fig.subplots_adjust(left=0.05, right=0.9, bottom=0.16, top=0.76, wspace=0.45)
plot_tile_reads(tile_reads(p_flat, ("a_ptr", "b_ptr"), range(wave)), axes=axes[:2], title=" ")
plot_tile_reads(tile_reads(p_grouped, ("a_ptr", "b_ptr"), range(wave)), axes=axes[2:],
                title="first wave: row-major (left pair) and GROUP_M = 2 (right pair)")
plt.show()

# %% [markdown]
# At 4096³ in BF16 with 128 x 128 tiles, 1,024 programs run on an H100's 132 SMs in 8 waves. The
# model of `course_lib.tiles.order` (checked against the traced launch above) gives:

# %%
sweep = group_sweep(4096, 4096, 4096, 128, 128, group_m=8, programs_per_wave=h100.sm_count)
flat_big = grouped_matmul_traffic(4096, 4096, 4096, 128, 128, 1, h100.sm_count)
grouped_big = sweep.current
print(f"no reuse (lesson 06) {grouped_big.bytes_no_reuse / 1e9:.2f} GB; waves of {h100.sm_count}: row-major "
      f"{flat_big.bytes_waves / 1e9:.3f} GB, GROUP_M = 8 {grouped_big.bytes_waves / 1e9:.3f} GB; "
      f"floor {grouped_big.min_bytes / 1e9:.3f} GB")
assert grouped_big.bytes_no_reuse == tiled_matmul_traffic(4096, 4096, 4096, 128, bytes_per_element=2).bytes_moved
assert grouped_big.programs == 1024 and grouped_big.waves == 8 and grouped_big.bytes_waves < flat_big.bytes_waves
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": (1, 1.3)})
fig.subplots_adjust(left=0.05, right=0.98, bottom=0.14, top=0.9, wspace=0.22)
plot_grouped_order(grouped_big, ax=axes[0])
plot_group_sweep(sweep, ax=axes[1])
plt.show()

# %% [markdown]
# On the roofline: the time is $\max(F/\pi, Q/\beta)$ (lesson 04). At the traced size the
# profile's own FLOP and bytes; at 4096³ the formula's, with and without the waves' reuse:

# %%
print(f"traced {m} x {k} x {n}: {p_flat.intensity_flops_per_byte:.1f} FLOP/B, {precision_of(p_flat)} "
      f"(float32 inputs: tl.dot uses TF32), {predict_tiles(p_flat.flops, p_flat.bytes_moved, 'H100 SXM', precision_of(p_flat)).t_s * 1e9:.0f} ns on the H100 SXM")
kernels_big = [Kernel("4096³, no reuse", grouped_big.flops, grouped_big.bytes_no_reuse),
               Kernel("4096³, GROUP_M = 8 waves", grouped_big.flops, grouped_big.bytes_waves),
               Kernel("softmax 8192 x 4096", 5 * big_rows * big_cols, K.softmax_bytes(big_rows, big_cols, 2))]
points = [place_kernel(kern, h100, "bf16") for kern in kernels_big]
for pt in points:
    print(f"  {pt.kernel.name:26s} {pt.intensity_flops_per_byte:8.1f} FLOP/B  {pt.t_min_s * 1e3:7.3f} ms  {pt.bound}-bound")
plot_roofline(points, title="H100 SXM, BF16: the matmul's place moves with its reuse")
plt.show()

# %% [markdown]
# ## 6. FlashAttention forward
#
# Lesson 06's online softmax, as a kernel: one program per block of `BLOCK_M` queries (and per
# head) keeps $Q$'s block, a running max $m$, a running sum $\ell$ and an unnormalised output
# on chip while blocks of $K$ and $V$ stream past:
#
# $$ m' = \max(m, \text{rowmax}(S)), \quad \alpha = e^{m - m'}, \quad P = e^{S - m'}, \quad
#    \ell' = \alpha\ell + \text{rowsum}(P), \quad O' = \alpha O + P V. $$
#
# Forget $\alpha$ and the blocks seen before the max moved are summed on the wrong scale. With
# `CAUSAL`, a query block stops at its last query: keys past it are never loaded. The kernel
# also writes each row's log-sum-exp $m + \log \ell$, which a backward pass needs. Lesson 06
# counted the elements this moves:
#
# $$ \text{reads} = Nd + 2d\sum_{\text{query blocks}} (\text{keys visited}), \qquad \text{writes} = N(d + 1). $$

# %%
print(K.kernel_source(K.flash_attention_kernel))
n_seq, d_head = 50, 24
Q, K_, V = (torch.randn(n_seq, d_head) for _ in range(3))
for causal in (False, True):
    O, lse, p_fa = K.flash_attention(Q, K_, V, causal=causal, block_m=16, block_n=16)
    ref = torch.nn.functional.scaled_dot_product_attention(Q[None], K_[None], V[None], is_causal=causal)[0]
    ref06 = np_flash_attention(Q.numpy(), K_.numpy(), V.numpy(), block_size=16, causal=causal)
    counted = sum((t.bytes_read + t.bytes_written) // t.itemsize for t in p_fa.tensors)
    f06 = flash_attention_traffic(n_seq, d_head, block_size=16, causal=causal)
    print(f"causal={causal!s:5}: max |O - torch| {(O - ref).abs().max():.1e}, |O - lesson 06| "
          f"{np.abs(O.numpy() - ref06).max():.1e}; {counted:,} elements moved, lesson 06: {f06.elements_moved:,.0f}")
    assert torch.allclose(O, ref, atol=1e-5) and np.allclose(O.numpy(), ref06, atol=1e-5)
    assert counted == f06.elements_moved

# %% [markdown]
# At $N$ = 8192, $d$ = 128, one head in BF16 with 128-query blocks, against standard attention's
# $4N^2 + 4Nd$ elements (lesson 06), and the time on an H100 SXM (the two matmuls, $4N^2d$ FLOP):

# %%
n_big, d_big = 8192, 128
flash_big = flash_attention_traffic(n_big, d_big, block_size=128).bytes_moved(2)
naive_big = naive_attention_traffic(n_big, d_big).bytes_moved(2)
t_flash = predict_tiles(4 * n_big**2 * d_big, flash_big, "H100 SXM", "bf16")
t_naive = predict_tiles(4 * n_big**2 * d_big, naive_big, "H100 SXM", "bf16")
print(f"flash {flash_big / 1e6:.0f} MB, {t_flash.t_s * 1e6:.0f} us ({t_flash.bound}-bound, "
      f"{t_flash.intensity_flops_per_byte:.0f} FLOP/B); naive {naive_big / 1e6:.0f} MB, {t_naive.t_s * 1e6:.0f} us; "
      f"the H100's BF16 ridge: {h100.ridge_point('bf16'):.0f} FLOP/B")
assert t_flash.t_s < t_naive.t_s and flash_big < naive_big
# about BLOCK_M FLOP/B (K and V once per query block; Q, O and the log-sum-exp add a little)
assert 0.9 * 128 < t_flash.intensity_flops_per_byte <= 128 < h100.ridge_point("bf16")

# %% [markdown]
# By lesson 06's count, which allows no reuse between programs, every block of 128 queries reads
# all of $K$ and $V$ again: about `BLOCK_M` FLOP per byte, under the ridge, so the formula calls
# FlashAttention memory-bound here. On a GPU the query blocks of one head that run at the same
# time share those reads through L2, as the matmul's waves did in section 5; bigger query blocks
# (FlashAttention-2 uses 128 to 256 rows per program) raise the intensity directly.

# %% [markdown]
# ## 7. A matmul with INT8 weights
#
# Serving a model at small batch reads every weight once per step and does little arithmetic
# with it (lesson 07): memory-bound, so the bytes per weight set the time. Stored as INT8 codes
# with one FP32 scale per output column (lesson 05's absmax rule, $s_j = \max_i |W_{ij}| / 127$),
# the kernel loads one byte per weight and widens it on chip. The scale of column $j$ factors out
# of that column's sum, $\sum_i x_i\, c_{ij}\, s_j = s_j \sum_i x_i c_{ij}$, so it is applied once,
# after the loop:

# %%
print(K.kernel_source(K.int8_matmul_kernel))
X, W = torch.randn(20, 64), torch.randn(64, 48)
codes, scales = K.quantize_weights(W)
Y8, p8 = K.int8_matmul(X, codes, scales)
_, p32 = K.matmul(X, W, 16, 32, 32)
w8, w32 = p8.tensor("w_ptr").bytes_read, p32.tensor("b_ptr").bytes_read
print(f"weights read: INT8 {w8:,} B, FP32 {w32:,} B ({w32 // w8}x); "
      f"max |error| against FP32 weights {(Y8 - X @ W).abs().max():.3f}")
assert torch.allclose(Y8, X @ (codes.float() * scales), atol=1e-4) and w32 == 4 * w8

# %% [markdown]
# One decode step of a 4096 x 4096 layer at batch 16 on an H100 SXM, weights in BF16 against
# INT8 (activations and outputs in BF16 both times):

# %%
mb, kb, nb = 16, 4096, 4096
for name, wb in (("bf16", 2), ("int8", 1)):
    q_layer = wb * kb * nb + 2 * (mb * kb + mb * nb) + (4 * nb if name == "int8" else 0)
    t_layer = predict_tiles(2 * mb * kb * nb, q_layer, "H100 SXM", "bf16")
    print(f"{name} weights: {q_layer / 1e6:.1f} MB, {t_layer.t_s * 1e6:.1f} us ({t_layer.bound}-bound)")

# %% [markdown]
# ## 8. From PyTorch
#
# `course_lib.tiles.torch_ops` wraps the fused softmax and the FlashAttention forward as
# `torch.autograd.Function`s. The softmax's backward is a Triton kernel too,
# $dx = y \odot (dy - \sum_j dy_j\,y_j)$; attention's backward recomputes $P$ from $Q$, $K$ and the
# saved log-sum-exp (no $N \times N$ matrix was kept by the forward). `torch.autograd.gradcheck`
# compares each backward with finite differences in float64:

# %%
from course_lib.tiles.torch_ops import TileAttentionModule, tile_attention, tile_softmax

xs = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
qs, ks, vs = (torch.randn(1, 6, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
grad_ok = (torch.autograd.gradcheck(tile_softmax, (xs,), fast_mode=True),
           torch.autograd.gradcheck(lambda a, b, c: tile_attention(a, b, c, True), (qs, ks, vs), fast_mode=True))
print(f"gradcheck: softmax {grad_ok[0]}, causal attention {grad_ok[1]}")
assert all(grad_ok)

# %% [markdown]
# A small attention layer takes any kernel with the FlashAttention kernel's signature in place
# of PyTorch's `scaled_dot_product_attention`; with the same weights, the outputs and gradients
# agree. Your kernel from the exercises plugs in the same way.

# %%
layer_ref = TileAttentionModule(heads=2, head_dim=8)
layer_tile = TileAttentionModule(heads=2, head_dim=8, attention=K.flash_attention_kernel)
tokens = torch.randn(2, 11, 16, requires_grad=True)
out_ref, out_tile = layer_ref(tokens), layer_tile(tokens)
g_ref = torch.autograd.grad(out_ref.square().sum(), tokens)[0]
g_tile = torch.autograd.grad(out_tile.square().sum(), tokens)[0]
print(f"max |output difference| {(out_ref - out_tile).abs().max():.1e}, max |gradient difference| "
      f"{(g_ref - g_tile).abs().max():.1e}")
assert torch.allclose(out_ref, out_tile, atol=1e-5) and torch.allclose(g_ref, g_tile, atol=1e-4)

# %% [markdown]
# ## 9. Explore
#
# Block sizes and `GROUP_M` against a large matmul's HBM traffic and roofline time, on any NVIDIA
# accelerator of the catalog (its SM count sets the wave). Lesson 06's formula is printed beside
# the wave model. Larger tiles cut both; grouping cuts what a wave reads, down toward the floor.

# %%
from course_lib.widgets.tiles import tile_order_explorer

tile_order_explorer()

# %% [markdown]
# ## 10. On a real GPU (optional)
#
# With an NVIDIA GPU and a CUDA build of PyTorch (Colab's GPU runtime has both), the softmax, the
# matmul and the causal FlashAttention above run compiled at large sizes in a process of their
# own (this one runs the interpreter), timed with `triton.testing.do_bench`, each beside the
# roofline time of the catalog GPU of the same name. Without one, one line says so.

# %%
from course_lib.tiles.measure import catalog_match, gpu_status, measure_on_gpu

has_gpu, device = gpu_status()
print(device if not has_gpu else f"timing on {device}")
if has_gpu:
    catalog = catalog_match(device)
    for timing in measure_on_gpu():
        pred = predict_tiles(timing.flops, timing.bytes_moved, catalog, timing.precision)
        print(f"{timing.name:48s} {timing.seconds * 1e6:9.1f} us measured, {pred.t_s * 1e6:9.1f} us predicted "
              f"for the {catalog} ({timing.seconds / pred.t_s:.2f}x)")

# %% [markdown]
# ## Misconceptions
#
# - **"Triton takes care of the edges."** It does not: a load without a mask reads past the end
#   (section 2). Every tile whose size does not divide the tensor needs its mask, and a masked
#   load that feeds a max or a sum needs the right `other` ($-\infty$ for a max, 0 for a sum).
# - **"A fused kernel does less arithmetic."** It does the same arithmetic; it moves fewer bytes.
#   The fused and four-pass softmax of section 3 differ only in bytes, and both are memory-bound.
# - **"Program order cannot matter: every program does the same work."** Lesson 06's count is the
#   same in any order, but what a wave of programs shares through L2 is not (section 5).
# - **"FlashAttention is an approximation."** It computes exact attention; section 6's output
#   equals PyTorch's `scaled_dot_product_attention` to float32 rounding.
# - **"INT8 weights make the matmul faster because INT8 arithmetic is faster."** Here the codes
#   are widened to float32 on chip before `tl.dot`: the saving is in the bytes read (section 7),
#   which is what bounds a small-batch layer.
#
# ## Exercises
#
# `my_work/10_tile_kernels.py`, your own copy of the exercises (`make lab` makes it; answers in
# `solutions/10_tile_kernels.py`): ten Triton puzzles. A masked leaky ReLU (10.1) and a 2D outer
# sum (10.2) practise section 2's masks; a row sum (10.3) and a softmax (10.5) over rows longer
# than one block need a loop over the row, the second an online max and rescaled sum; a fused
# LayerNorm (10.4) and cross-entropy (10.10) follow section 4's RMSNorm; a matmul with a fused
# bias and ReLU (10.6) and one grouped by columns (10.7) follow section 5; sliding-window attention
# (10.8) follows section 6; a matmul with INT4 weights packed two per byte (10.9) follows
# section 7. `check` runs your kernel on random sizes that no block divides, again with
# adversarial values (large magnitudes, a large mean, rows a window leaves empty), and on a size
# smaller than one block, and holds it to a cost target in bytes.
#
# ## Key points
#
# - A Triton program owns a tile: `pid * BLOCK + tl.arange(0, BLOCK)` are its indices, a mask
#   guards the edge, `tl.load`/`tl.store` move the tile, `tl.sum`/`tl.max` reduce along an axis,
#   `tl.dot` multiplies tiles on the tensor cores.
# - The compiler coalesces, stages in shared memory and places barriers; the tiling, the program
#   order, the masks and the numerics (max subtraction, online rescaling) are still yours.
# - Count bytes per program and sum: a fused softmax moves $2bRC$; a blocked matmul lesson 06's
#   $b(mk\lceil n/B_N\rceil + kn\lceil m/B_M\rceil + mn)$; FlashAttention $Nd + 2d\sum$keys $+ N(d+1)$ elements.
# - Grouped order does not change that total; it cuts what each wave of programs reads from HBM.
# - Predicted time is $\max(F/\pi, Q/\beta)$ at a realistic size, from the counted formula.
# - A kernel becomes a PyTorch op through `torch.autograd.Function`; `gradcheck` in float64
#   checks its backward.
