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
# # 06 · Tiling and FlashAttention: fewer bytes for the same arithmetic
#
# **Learning objectives.** After this lesson you can
#
# 1. predict the HBM traffic of a tiled matrix multiplication from its tile size, check the
#    prediction against a simulation that walks the tiles, and say which on-chip resource caps
#    the tile;
# 2. place the intensity that tiling buys on the roofline;
# 3. follow the tiling hierarchy from shared memory to registers to the tensor core's
#    `mma.sync` instruction, counting instructions and operand reuse at each level;
# 4. compute what kernel fusion saves in bytes and in time at bandwidth;
# 5. test a custom kernel so that indexing and precision bugs cannot hide;
# 6. explain FlashAttention's online softmax, run it in NumPy, and compare its HBM traffic and
#    memory footprint with naive attention and with the paper's IO analysis.
#
# Hardware figures come from the catalog (`course_lib/data/accelerators.toml`, dense rates).
# The important results are checked a second way: a formula against a simulation, or an
# algorithm against an independent reference.

# %%
import tracemalloc

import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator
from course_lib.roofline import Kernel, place_kernel
from course_lib import tiling, attention
from course_lib.plots import use_course_style
from course_lib.plots.roofline import plot_roofline
from course_lib.plots.tiling import plot_reuse_hierarchy, plot_tile_traffic
from course_lib.plots.attention import plot_attention_memory, plot_attention_traffic, plot_online_softmax

use_course_style()
h100 = get_accelerator("H100 SXM")
b16 = 2                                   # bytes per BF16 element
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. A tiled matmul and the bytes it moves
#
# To compute $C_{m\times n} = A_{m\times k} B_{k\times n}$, each thread block owns one
# $T_m \times T_n$ tile of $C$. It walks along $k$, staging a $T_m \times T_k$ slice of $A$ and a
# $T_k \times T_n$ slice of $B$ in shared memory at each step, accumulates in registers, and
# writes its tile of $C$ once. Every row panel of $A$ is therefore read once per *column of
# tiles*, and every column panel of $B$ once per *row of tiles*:
#
# $$ Q = b\left(mk\left\lceil \frac{n}{T_n} \right\rceil + kn\left\lceil \frac{m}{T_m} \right\rceil + mn\right) $$
#
# bytes, with $b$ bytes per element. For a large square problem and square tiles $T$, this is
# about $2bmkn/T$, so the intensity $2mkn/Q$ is about $T/b$ FLOP per byte: **doubling the tile
# halves the traffic**. A $4096^3$ BF16 matmul with $128 \times 128$ tiles, against the H100's
# ridge point:

# %%
t128 = tiling.tiled_matmul_traffic(4096, 4096, 4096, 128, bytes_per_element=b16)
print(f"Q = {t128.bytes_moved / 1e9:.2f} GB, intensity {t128.intensity_flops_per_byte:.1f} FLOP/B "
      f"(T/b = {128 / b16:.0f}); H100 BF16 ridge {h100.ridge_point('bf16'):.0f} FLOP/B")

# %% [markdown]
# The ceilings are exact, not a bound: an edge tile loads only the rows and columns that exist.
# To check that, we *walk* the tiles of a matrix whose sides no tile size divides, marking every
# element each (tile, k-step) stages from HBM, and compare the sums with the formula.

# %%
m, k, n = 301, 203, 257
print(f"{'tile':>5s} {'formula MB':>11s} {'walk MB':>9s} {'A loads/elt':>12s} {'B loads/elt':>12s}")
for t in (16, 48, 100, 128, 400):
    walk = tiling.simulate_tiled_matmul(m, k, n, t, tile_k=24, bytes_per_element=b16)
    formula = tiling.tiled_matmul_traffic(m, k, n, t, bytes_per_element=b16)
    assert walk.traffic.bytes_moved == formula.bytes_moved
    assert np.all(walk.c_stores == 1)            # every element of C written exactly once
    print(f"{t:5d} {formula.bytes_moved / 1e6:11.4f} {walk.traffic.bytes_moved / 1e6:9.4f} "
          f"{walk.a_loads.max():12d} {walk.b_loads.max():12d}")

# %% [markdown]
# **What caps the tile.** The staged slices live in shared memory,
# $\text{stages}\cdot b\,(T_m T_k + T_k T_n)$ bytes with double buffering (2 stages), and the
# $T_m \times T_n$ FP32 accumulators live in registers. The catalog gives both capacities:

# %%
print(f"{'accelerator':15s} {'smem/block KiB':>15s} {'regs/SM KiB':>12s} {'T by smem':>10s} {'T by regs':>10s}  binding")
for name in ("V100 SXM2", "A100 SXM 80GB", "H100 SXM", "L4"):
    acc = get_accelerator(name)
    lim = tiling.tile_limit(acc, "bf16", tile_k=32, stages=2)
    print(f"{acc.name:15s} {acc.max_shared_mem_bytes_per_block / 1024:15.0f} "
          f"{acc.register_file_bytes_per_sm / 1024:12.0f} {lim.smem_limit:10d} {lim.register_limit:10d}  {lim.binding}")
lim_h100 = tiling.tile_limit(h100, "bf16", tile_k=32, stages=2)
# second way: the shared-memory size of the largest tile, and of the next one, against the catalog
smem_fit = tiling.smem_bytes_per_block(lim_h100.smem_limit, lim_h100.smem_limit, 32, b16, 2)
smem_next = tiling.smem_bytes_per_block(lim_h100.smem_limit + 16, lim_h100.smem_limit + 16, 32, b16, 2)
assert smem_fit <= h100.max_shared_mem_bytes_per_block < smem_next

# %% [markdown]
# The register file binds first. A $256 \times 256$ tile cannot keep its FP32 accumulators in
# registers: they alone are the SM's whole register file, with no register left for the operand
# fragments, addresses and loop counters every thread also needs. `tile_limit` therefore requires
# the accumulators to leave room, and real kernels stop further below and spread the accumulators
# over the registers of many warps:

# %%
acc_regs_256 = 256 * 256                              # one 32-bit register per FP32 accumulator
print(f"256 x 256 FP32 accumulators: {acc_regs_256:,} registers; an H100 SM has {h100.registers_per_sm:,} "
      f"({h100.register_file_bytes_per_sm // 1024} KiB): {h100.registers_per_sm - acc_regs_256} left over")
t_reg = lim_h100.register_limit
spare = h100.registers_per_sm - t_reg * t_reg
print(f"largest square tile that leaves room: {t_reg} x {t_reg}, {spare:,} registers spare, "
      f"{spare / h100.max_threads_per_block:.1f} per thread of a {h100.max_threads_per_block}-thread block")
assert acc_regs_256 == h100.registers_per_sm and lim_h100.largest == t_reg < 256

# %% [markdown]
# The traffic against tile size for a $1000 \times 700 \times 900$ matmul, formula and walk:

# %%
sweep = tiling.traffic_sweep(1000, 700, 900, tiles=np.unique(np.geomspace(8, 1024, 30).astype(int)),
                             bytes_per_element=b16, simulate=(50, 128, 300), limit=lim_h100.largest)
assert np.allclose(sweep.simulated_bytes,
                   [tiling.tiled_matmul_traffic(1000, 700, 900, int(t), bytes_per_element=b16).bytes_moved
                    for t in sweep.simulated_tiles])
fig = plot_tile_traffic(sweep)
plt.show()

# %% [markdown]
# ## 2. What tiling buys, on the roofline
#
# An $8192^3$ BF16 matmul with tiles from 16 to the largest that leaves room in the H100's
# register file, placed on its HBM roofline with `course_lib.roofline`. The second way: the
# intensity should be close to $T/b$.

# %%
points = []
for t in (16, 64, 128, lim_h100.largest):
    traffic = tiling.tiled_matmul_traffic(8192, 8192, 8192, t, bytes_per_element=b16)
    assert abs(traffic.intensity_flops_per_byte / (t / b16) - 1) < 0.05
    points.append(place_kernel(Kernel(f"tile {t}", traffic.flops, traffic.bytes_moved), h100, "bf16"))
    print(f"tile {t:4d}: {traffic.intensity_flops_per_byte:6.1f} FLOP/B, at most "
          f"{points[-1].attainable_flops / 1e12:6.1f} TFLOP/s ({points[-1].bound}-bound)")
fig = plot_roofline(points, title="H100 SXM, BF16: an 8192³ matmul by tile size (every tile load from HBM)")
plt.show()

# %% [markdown]
# Even the largest tile leaves this model left of the ridge, yet tuned libraries run such a matmul
# much closer to the compute roof. The model charges every tile load to HBM; on the chip, blocks that run at the same time
# read the same panels of $A$ and $B$, and the L2 cache serves the repeats:

# %%
panel_bytes = 2 * 8192 * lim_h100.largest * b16           # one row panel of A plus one column panel of B
print(f"L2 {h100.l2_cache_bytes / 2 ** 20:.0f} MiB holds {h100.l2_cache_bytes / panel_bytes:.0f} pairs of "
      f"{lim_h100.largest}-wide panels; {h100.sm_count} SMs run a block each at a time")

# %% [markdown]
# ## 3. Down to the tensor core
#
# Libraries such as CUTLASS tile at every level: a **block tile** staged in shared memory, split
# into **warp tiles** held in registers, each done by the tensor core's **MMA** instruction on the
# smallest tiles. On Ampere and Hopper the 16-bit warp-level instruction is
# `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (PTX ISA): one warp multiplies a
# $16\times16$ tile of $A$ by a $16\times8$ tile of $B$ into a $16\times8$ FP32 accumulator.
# (Hopper adds `wgmma.mma_async`, issued by a group of four warps on $64 \times N \times 16$ tiles;
# the counting below works the same way with that shape.)
# A level that works on an $(m, n, k)$ step loads $(m+n)k$ elements and does $2mnk$ FLOP, so it
# reuses each element
#
# $$ \frac{2mnk}{(m+n)k} = \frac{2mn}{m+n} \ \text{FLOP per element}. $$

# %%
levels = tiling.tiling_hierarchy(block=(128, 128, 32), warp=(64, 64), mma="m16n8k16")
for lvl in levels:
    print(f"{lvl.level:45s} tile {str(lvl.tile):15s} x{lvl.units_per_parent:<5d} "
          f"{lvl.flops_per_element:7.2f} FLOP/element")
for lvl in levels:
    mm, nn, _ = lvl.tile
    assert np.isclose(lvl.flops_per_element, 2 * mm * nn / (mm + nn))
fig = plot_reuse_hierarchy(levels)
plt.show()

# %% [markdown]
# Now one warp tile, $64 \times 64 \times 32$, done by scalar fused multiply-adds and by MMAs.
# A scalar FMA is one multiply and one add on one lane (2 FLOP) reading one element of $A$ and one
# of $B$; a warp issues 32 of them per instruction.

# %%
warp_tile = tiling.tile_instruction_counts(64, 64, 32, mma="m16n8k16")
print(f"{warp_tile.flops:,.0f} FLOP: {warp_tile.fma_instructions:,} warp FMA instructions or "
      f"{warp_tile.mma_instructions} mma.sync ({warp_tile.instruction_ratio:.0f}x fewer)")
print(f"operand reuse: {warp_tile.fma_flops_per_operand:.1f} FLOP per element read by FMAs, "
      f"{warp_tile.mma_flops_per_operand:.2f} by MMAs")
# second way: one m16n8k16 is 16*8*16 = 2048 FMAs, 64 warp instructions of 32 lanes
assert warp_tile.instruction_ratio == 16 * 8 * 16 / 32
assert np.isclose(warp_tile.mma_flops_per_operand, 2 * 16 * 8 * 16 / (16 * 16 + 16 * 8))

# %% [markdown]
# ## 4. Kernel fusion
#
# Bias, activation and dropout each do a few FLOP per element: memory-bound. Run as three kernels,
# each reads its input from HBM and writes its output back; fused, the intermediate values stay in
# registers. With $E$ elements of $b$ bytes and a one-byte dropout mask saved for the backward pass
# (forward pass only; in training the fused kernel must also write the activation's input for the
# backward pass unless it recomputes it, one more $bE$):
#
# $$ Q_\text{unfused} = b(6E + n_\text{cols}) + E, \qquad Q_\text{fused} = b(2E + n_\text{cols}) + E. $$
#
# For the activation after an MLP up-projection, 16384 tokens by 14336 features in BF16:

# %%
fusion = tiling.fusion_traffic(16384, 14336, "bf16", h100)
e = 16384 * 14336
assert fusion.bytes_unfused == b16 * (6 * e + 14336) + e and fusion.bytes_fused == b16 * (2 * e + 14336) + e
print(f"unfused {fusion.bytes_unfused / 1e9:.2f} GB in {fusion.kernels_unfused} kernels: "
      f"{fusion.t_unfused_s * 1e3:.2f} ms at {h100.mem_bandwidth / 1e12:.2f} TB/s")
print(f"fused   {fusion.bytes_fused / 1e9:.2f} GB in 1 kernel: {fusion.t_fused_s * 1e3:.2f} ms "
      f"({fusion.speedup:.2f}x faster)")
assert np.isclose(fusion.speedup, (6 * b16 + 1) / (2 * b16 + 1), rtol=1e-3)      # the large-tensor limit

# %% [markdown]
# The speed-up is $(6b+1)/(2b+1)$ for large tensors, $13/5 = 2.6$ in BF16, not the 3 one might
# guess from "three reads become one": the mask is written either way.

# %% [markdown]
# ### What fusing compilers fuse
#
# Nobody writes that fused kernel by hand for every model: compilers do. `torch.compile`'s
# default backend, Inductor, generates Triton kernels that fuse chains of pointwise operations
# together with the reductions between them (a LayerNorm's mean and variance are row
# reductions); the matmuls themselves go to cuBLAS or to Triton templates, which can take a
# pointwise epilogue in `max-autotune` mode. XLA (JAX, TensorFlow) fuses elementwise producers
# into their consumers and reductions with their inputs, and on GPUs lets a GEMM absorb a bias
# and activation epilogue. TensorRT fuses vertically (a convolution or GEMM with its bias and
# activation), horizontally (layers that read the same input), and has fused multi-head-attention
# kernels. Attention fused into one kernel is exactly FlashAttention (section 6). What every one
# of them removes is the round trip of an intermediate tensor through HBM.
#
# A transformer block's residual path makes a good example: $h = x + r$ (kept for the next
# residual), $y = \mathrm{GELU}(\mathrm{LayerNorm}(h))$. `graph_traffic` counts the bytes of any
# operator graph for a given grouping of its ops into kernels: a kernel reads each tensor it did
# not produce and writes each tensor that leaves it. Three groupings: one kernel per primitive
# (the chain written out in eager PyTorch), eager with PyTorch's fused `layer_norm` (three
# kernels), and one compiled kernel. For 16384 tokens of a 4096-wide model in BF16 ($E$ elements):

# %%
rows, cols = 16384, 4096
ops, sizes, outputs, plans = tiling.layernorm_gelu_residual_graph(rows, cols, "bf16")
e = rows * cols
fusion_plans = {}
print(f"{'grouping':26s} {'kernels':>7s} {'GB moved':>9s} {'bytes / bE':>10s} {'time us':>8s}")
for name, kernels in plans.items():
    g = tiling.graph_traffic(ops, sizes, kernels, outputs)
    point = place_kernel(Kernel(name, g.flops, g.bytes_moved), h100, "bf16")
    fusion_plans[name] = (g, point)
    print(f"{name:26s} {g.n_kernels:7d} {g.bytes_moved / 1e9:9.3f} {g.bytes_moved / (b16 * e):10.2f} "
          f"{point.t_min_s * 1e6:8.0f}")
fused_g, fused_pt = fusion_plans["one fused kernel"]
eager_g, eager_pt = fusion_plans["one kernel per primitive"]
# Second way, by hand: fused reads x, r, gamma, beta and writes h, y; the library LayerNorm
# grouping moves 3E (add) + 2E (layer_norm) + 2E (gelu) plus gamma and beta.
assert fused_g.bytes_moved == b16 * (4 * e + 2 * cols)
assert fusion_plans["library LayerNorm"][0].bytes_moved == b16 * (7 * e + 2 * cols)
assert all(pt.bound == "memory" for _, pt in fusion_plans.values())
print(f"all memory-bound (intensity {fused_pt.intensity_flops_per_byte:.1f} FLOP/B fused, ridge "
      f"{fused_pt.ridge_point:.0f}); one fused kernel is {eager_pt.t_min_s / fused_pt.t_min_s:.1f}x faster than "
      f"one kernel per primitive")

# %% [markdown]
# Every grouping does the same FLOP; the bytes set the time. Unfused, the chain writes and
# re-reads its intermediate tensors; fused, it reads its two inputs and writes its two outputs,
# the bytes printed above. The same counter gives a GEMM's epilogue: a bias and GELU after a
# matmul cost two extra round trips of the output unless the GEMM applies them before it writes
# (cuBLASLt epilogues, CUTLASS, Triton templates):

# %%
m_tok, k_in, n_out = 16384, 4096, 14336
gemm_sizes = {"X": b16 * m_tok * k_in, "W": b16 * k_in * n_out, "bias": b16 * n_out,
              "Z": b16 * m_tok * n_out, "Zb": b16 * m_tok * n_out, "Y": b16 * m_tok * n_out}
gemm_ops = [("gemm", ("X", "W"), ("Z",), 2.0 * m_tok * k_in * n_out),
            ("bias", ("Z", "bias"), ("Zb",), m_tok * n_out), ("gelu", ("Zb",), ("Y",), 8.0 * m_tok * n_out)]
separate = tiling.graph_traffic(gemm_ops, gemm_sizes, [("gemm",), ("bias",), ("gelu",)], ("Y",))
epilogue = tiling.graph_traffic(gemm_ops, gemm_sizes, [("gemm", "bias", "gelu")], ("Y",))
t_sep = sum(place_kernel(Kernel(op[0], op[3], rd + wr), h100, "bf16").t_min_s
            for op, rd, wr in zip(gemm_ops, separate.read_bytes, separate.write_bytes))
t_epi = place_kernel(Kernel("gemm+epilogue", epilogue.flops, epilogue.bytes_moved), h100, "bf16").t_min_s
extra = separate.bytes_moved - epilogue.bytes_moved
print(f"separate kernels move {extra / 1e9:.2f} GB more (two intermediate outputs, each written and read) "
      f"and take {t_sep * 1e6:.0f} us against {t_epi * 1e6:.0f} us with the epilogue fused "
      f"({t_sep / t_epi - 1:.0%} longer)")
assert extra == 4 * gemm_sizes["Y"]            # Z written and read, Zb written and read

# %% [markdown]
# The GEMM itself is compute-bound, so the epilogue's saving is the time of the two extra
# memory-bound kernels, the percentage printed above; for the LayerNorm chain, which is all
# memory traffic, fusion divides the time by the ratio of bytes.
#
# ## 5. Writing a custom kernel safely
#
# A tiled kernel has two classic failure modes: an **indexing** bug at the edges and a
# **precision** bug in the accumulator. Here are two plausible ones: `matmul_indexing_bug` runs
# its column loop to $m$ instead of $n$, and `matmul_precision_bug` keeps its accumulator in FP16.
# A weak test (one square, power-of-two, all-ones case) and a strong one (random normal values,
# random shapes with $m \ne k \ne n$, none a multiple of 8, long reductions), each against a
# float64 reference with a tolerance of two units of FP16 roundoff:

# %%
rng = np.random.default_rng(6)
weak = tiling.weak_matmul_cases()
strong = tiling.strong_matmul_cases(rng, count=4)
verdicts = {}
for kernel in (tiling.tiled_matmul, tiling.matmul_indexing_bug, tiling.matmul_precision_bug):
    w, s = tiling.check_matmul_kernel(kernel, weak), tiling.check_matmul_kernel(kernel, strong)
    verdicts[kernel.__name__] = (w.passed, s.passed)
    print(f"{kernel.__name__:22s} weak: {'pass' if w.passed else 'FAIL'}   strong: "
          f"{'pass' if s.passed else 'FAIL'} (worst error {s.worst_error:.2e} at m,k,n = {s.worst_shape}, "
          f"tolerance {s.tolerance:.2e})")
assert verdicts == {"tiled_matmul": (True, True), "matmul_indexing_bug": (True, False),
                    "matmul_precision_bug": (True, False)}

# %% [markdown]
# Both bugs pass the weak test: with $m = n$ the wrong loop bound is the right one, and sums of
# ones are exact in FP16 up to $2^{11}$ (FP16's 10 stored mantissa bits plus the implicit one). A
# test earns trust only if it can fail: random values,
# asymmetric ragged shapes, reductions as long as production's.
#
# ## 6. Attention, naive and tiled
#
# $O = \operatorname{softmax}(QK^\top/\sqrt d)\,V$ for $N$ queries and keys of dimension $d$. The
# naive algorithm writes the $N \times N$ scores $S$ and probabilities $P$ to memory. How big is
# that? One of our seed texts says a 32k context gives "32k x 32k ~ 1 billion elements", about
# 2 GB in FP16:

# %%
n32k = 32 * 1024
naive_bytes, flash_bytes = attention.attention_memory_bytes(n32k, 128, bytes_per_element=2)
print(f"{n32k}^2 = {n32k ** 2:,} elements = {naive_bytes / 1e9:.2f} GB = {naive_bytes / 2 ** 30:.0f} GiB "
      f"per head, per sequence")
assert naive_bytes == n32k ** 2 * 2
heads_32 = 32 * naive_bytes
print(f"a layer with 32 heads: {heads_32 / 1e9:.0f} GB, against {h100.mem_capacity / 1e9:.0f} GB on an H100")

# %% [markdown]
# The seed's arithmetic holds, for **one** head of **one** sequence. A layer of 32 heads needs the
# printed share of the H100's memory for a single sequence, before weights, the KV cache or a
# second sequence: materialising a layer's scores leaves room for little else.
#
# **The online softmax.** FlashAttention (Dao et al., 2022) walks blocks of keys and keeps, per
# query row, a running maximum $m$ and a running sum $\ell$; in the form FlashAttention-2 (Dao,
# 2023) uses, the output $o$ is kept unnormalised and divided once at the end. For each
# block of scores $S_j$ and values $V_j$:
#
# $$ m' = \max(m, \operatorname{rowmax} S_j), \quad \alpha = e^{m - m'}, \quad
#    \ell' = \alpha\,\ell + \operatorname{rowsum} e^{S_j - m'}, \quad
#    o' = \alpha\, o + e^{S_j - m'} V_j, $$
#
# and at the end $O = o/\ell$. The factor $\alpha$ rescales everything summed so far whenever a
# larger score arrives. One query row, keys arriving in blocks of 37:

# %%
row_rng = np.random.default_rng(60)
s_row = row_rng.standard_normal((1, 500)) * 3
v_col = row_rng.standard_normal((500, 1))
state = (np.full(1, -np.inf), np.zeros(1), np.zeros((1, 1)))
trace = {"keys_seen": [], "running_max": [], "estimate": []}
for j0 in range(0, 500, 37):
    state = attention.online_softmax_update(*state, s_row[:, j0:j0 + 37], v_col[j0:j0 + 37])
    trace["keys_seen"].append(min(j0 + 37, 500))
    trace["running_max"].append(state[0][0])
    trace["estimate"].append(state[2][0, 0] / state[1][0])
p_row = np.exp(s_row - s_row.max())
trace["exact"] = ((p_row / p_row.sum()) @ v_col).item()
assert np.isclose(trace["estimate"][-1], trace["exact"], rtol=1e-12)
fig = plot_online_softmax(trace)
plt.show()

# %% [markdown]
# `flash_attention(q, k, v, block_size, causal)` runs the whole algorithm in NumPy: each block of
# queries against each block of keys is two matmuls. It must equal the naive result to rounding
# for any block size, including ones that do not divide $N$, and with causal masking:

# %%
qkv = np.random.default_rng(61).standard_normal((3, 700, 64))
worst = 0.0
for block in (700, 128, 97, (64, 300)):
    for causal in (False, True):
        diff = np.abs(attention.flash_attention(*qkv, block_size=block, causal=causal)
                      - attention.naive_attention(*qkv, causal=causal)).max()
        worst = max(worst, diff)
print(f"N = {qkv.shape[1]}, d = {qkv.shape[2]}: largest difference from naive over 8 variants {worst:.1e}")
assert worst < 1e-12

# %% [markdown]
# **HBM traffic.** Theorem 2 of the paper: with on-chip SRAM of $M$ elements, standard attention
# makes $\Theta(Nd + N^2)$ HBM accesses (counting Algorithm 0's reads and writes: $4N^2 + 4Nd$) and
# FlashAttention $\Theta(N^2 d^2 / M)$. Our NumPy loop keeps a block of $B_q$ queries resident
# and streams all of $K$ and $V$ past it, so it reads $Nd + 2Nd\lceil N/B_q\rceil$ elements and
# writes $N(d+1)$. We count what it actually touches and compare; the paper's own loop order
# (Algorithm 1, with $B_c = \lceil M/4d \rceil$) is shown too, for $M$ = one H100 block's shared
# memory in BF16 elements.

# %%
sram_elements = h100.max_shared_mem_bytes_per_block // b16
traffic = attention.attention_traffic_sweep(
    np.unique(np.geomspace(256, 65536, 25).astype(int)), d=64, block_size=128,
    sram_elements=sram_elements, count_ns=(300, 900, 1300), rng=np.random.default_rng(62))
assert np.array_equal(traffic.counted_elements,
                      [attention.flash_attention_traffic(int(x), 64, 128).elements_moved for x in traffic.counted_n])
ratio = traffic.naive_elements[-1] / traffic.flash_elements[-1]
print(f"N = {traffic.n[-1]:,}: naive / flash traffic = {ratio:.2f} (limit 2 B_q / d = {2 * 128 / 64:.0f})")
theta = traffic.paper_elements / (traffic.n.astype(float) ** 2 * 64 ** 2 / sram_elements)
print(f"paper's Algorithm 1 / (N² d² / M): {theta[0]:.1f} at N = {traffic.n[0]}, {theta[-1]:.1f} at N = {traffic.n[-1]:,}")
assert 3.9 < ratio < 4.0 and 11.5 < theta[-1] < 12.5
fig = plot_attention_traffic(traffic)
plt.show()

# %% [markdown]
# The saving is a constant factor, $2B_q/d$ for our loop and about $M/(3d^2)$ for the paper's, and
# both lines keep a slope of 2: FlashAttention's traffic is still quadratic in $N$. What changes
# by a factor of $N$ is **memory**: the scores never exist in full. We measure the extra memory of
# both NumPy implementations (float64, `tracemalloc`) at small $N$, then plot the model for one
# BF16 head at long $N$ against the H100's memory:

# %%
def extra_bytes(fn, q, k, v):
    tracemalloc.start()
    fn(q, k, v)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak

measured_n = np.array([256, 512, 1024])
print(f"{'N':>5s} {'naive measured MB':>18s} {'N² x 8 B MB':>12s} {'flash measured MB':>18s}")
naive_meas, flash_meas = [], []
for x in measured_n:
    q, k, v = np.random.default_rng(63).standard_normal((3, x, 64))
    naive_meas.append(extra_bytes(attention.naive_attention, q, k, v))
    flash_meas.append(extra_bytes(lambda q, k, v: attention.flash_attention(q, k, v, block_size=128), q, k, v))
    print(f"{x:5d} {naive_meas[-1] / 1e6:18.2f} {x * x * 8 / 1e6:12.2f} {flash_meas[-1] / 1e6:18.2f}")
growth_naive = naive_meas[-1] / naive_meas[0]
growth_flash = flash_meas[-1] / flash_meas[0]
print(f"N x4 -> naive extra memory x{growth_naive:.1f}, flash x{growth_flash:.1f}")
assert growth_naive > 12 and growth_flash < 6
mem = attention.memory_sweep(np.unique(np.geomspace(256, 262144, 30).astype(int)), d=64, bytes_per_element=2,
                             block_size=128, capacity_bytes=h100.mem_capacity, capacity_label="H100 memory")
n_full = int(np.sqrt(h100.mem_capacity / 2))            # N at which N² BF16 scores fill the H100
print(f"one head's BF16 scores fill the H100's {h100.mem_capacity / 1e9:.0f} GB at N = {n_full:,}; "
      f"FlashAttention's extra memory at N = {mem.n[-1]:,}: {mem.flash_bytes[-1] / 1e6:.2f} MB")
assert np.isclose(attention.attention_memory_bytes(n_full, 64)[0], h100.mem_capacity, rtol=1e-4)
assert mem.flash_bytes[-1] < 1e6
fig = plot_attention_memory(mem)
plt.show()

# %% [markdown]
# The naive measurements grow close to $N^2$ for a 4-fold $N$ (one $N^2$ float64 score matrix,
# which the softmax overwrites in place, plus arrays that grow only with $N$); the flash ones grow
# with $N$ only (the output and the row
# statistics). In the model for one BF16 head, the scores alone fill the whole H100 at the $N$
# printed above, while FlashAttention's working set stays under a megabyte. On a GPU, PyTorch's
# `scaled_dot_product_attention` can dispatch to a FlashAttention kernel; here we only say whether
# a GPU is present.

# %%
from course_lib.measure import gpu_status

print(gpu_status()[1])

# %% [markdown]
# ### FlashAttention-2 and -3: the same algorithm, closer to the roof
#
# The later versions keep the online softmax and change how the work is spread over the GPU.
# **FlashAttention-2** (Dao 2023, arXiv:2307.08691) reports that FlashAttention reached only
# 25-40% of the A100's peak, and changes three things: (1) fewer non-matmul FLOP (the output is
# rescaled once at the end, as in the update above, instead of at every block); (2) parallelism
# over the sequence as well as batch and heads, each thread block owning a block of queries, so
# long sequences with few heads still fill the SMs; (3) within a block, the warps split the
# *queries* rather than the keys and values, so they need not exchange partial results through
# shared memory. Why (1) matters is a catalog ratio: a FLOP outside the tensor cores costs as
# much as many inside them.

# %%
a100 = get_accelerator("A100")
for acc in (a100, h100):
    print(f"{acc.name}: dense FP16 tensor {acc.peak('fp16') / 1e12:.0f} TFLOP/s / FP32 non-matmul "
          f"{acc.peak('fp32') / 1e12:.1f} TFLOP/s = {acc.peak('fp16') / acc.peak('fp32'):.1f}x")
assert np.isclose(a100.peak("fp16") / a100.peak("fp32"), 16)           # the paper's "16x"

# %% [markdown]
# **FlashAttention-3** (Shah, Bikshandi, Zhang, Thakkar, Ramani and Dao 2024, arXiv:2407.08608)
# targets Hopper, on which FlashAttention-2 reaches about 35% of peak. It uses two Hopper
# features: **TMA**, the copy engine that moves a tile between HBM and shared memory
# asynchronously, and asynchronous `wgmma` tensor-core instructions issued by a warpgroup (4
# warps). (1) **Warp specialisation**: producer warps only issue TMA loads of the K and V tiles,
# consumer warpgroups only compute, so loading and computing overlap. (2) **Ping-pong
# scheduling**: the exponentials run on the special-function units, far slower than the tensor
# cores, so while one warpgroup does its softmax another does its GEMMs. How much is at stake?
# Each score needs one exponential against $4d$ matmul FLOP, and the paper puts the H100 SXM5 at
# 3.9 TFLOP/s of special functions:

# %%
ratio_exp = attention.exp_to_matmul_time(128, h100.peak("fp16"))
print(f"d = 128: the exponentials take {ratio_exp:.2f}x the matmul time on the H100 SXM "
      f"(1 / {attention.H100_SFU_FLOPS_FA3 / 1e12:.1f}e12 s against 512 / {h100.peak('fp16') / 1e12:.0f}e12 s per score)")
one = attention.warpgroup_schedule(1.0, ratio_exp, blocks_per_group=32, groups=1)
two = attention.warpgroup_schedule(1.0, ratio_exp, blocks_per_group=16, groups=2)
# Second way, closed forms: one group runs blocks x (gemm + softmax); two groups hide each
# softmax behind the other group's GEMM, all but the last.
assert np.isclose(one.makespan_s, 32 * (1 + ratio_exp)) and np.isclose(two.makespan_s, 32 + ratio_exp)
print(f"32 blocks: one warpgroup keeps the tensor cores busy {one.tensor_busy_fraction:.0%} of the time, "
      f"two in ping-pong {two.tensor_busy_fraction:.0%}")

# %% [markdown]
# (3) **FP8**, with two tricks against its 3 mantissa bits: *block quantisation*, one scale per
# tile rather than per tensor, and *incoherent processing*: $Q$ and $K$ are multiplied by the same
# random orthogonal matrix $M$ (a Hadamard matrix with random signs), which leaves
# $QM(KM)^\top = QK^\top$ unchanged but spreads an outlier feature over all $d$ features. Large
# language models have such outlier *channels*; we give two of 128 features 20 times the
# others' scale in both $Q$ and $K$ and measure the error of the FP8 scores:

# %%
fp8_rng = np.random.default_rng(64)
q8, k8 = fp8_rng.standard_normal((2, 256, 128))
q8[:, [5, 77]] *= 20
k8[:, [5, 77]] *= 20
errs = {label: attention.fp8_scores_error(q8, k8, scaling, 64, rotate, np.random.default_rng(65))
        for label, scaling, rotate in (("per-tensor scale", "tensor", False), ("per-block scale", "block", False),
                                       ("per-block + rotation", "block", True))}
for label, err in errs.items():
    print(f"{label:22s} relative error of Q K^T: {err:.4f}")
rotation_gain = errs["per-tensor scale"] / errs["per-block + rotation"]
print(f"with the rotation the error is {rotation_gain:.1f}x smaller; block scaling alone changes it by a "
      f"factor of {errs['per-tensor scale'] / errs['per-block scale']:.2f}")
assert rotation_gain > 2

# %% [markdown]
# The rotation helps because an outlier channel makes one product dominate each dot product, and
# FP8 rounds that product with a relative error of a few percent; rotated, the same magnitude is
# spread over 128 products whose rounding errors partly cancel. Block scaling helps little here
# because FP8 is a floating-point format: a smaller scale costs no relative precision until values
# fall into the subnormals; it matters when some tokens' rows are far larger than others.
#
# The reported results, against the catalog's dense peaks (FLOP counted as the papers count them,
# $4N^2d$ per head forward; the figures are the papers' best cases):

# %%
reported = [("FlashAttention-2, A100, FP16 forward, best", 0.73 * a100.peak("fp16"), a100, "fp16",
             "'50-73% of the theoretical maximum', Dao 2023"),
            ("FlashAttention-2 in GPT training, A100", 225e12, a100, "fp16", "'225 TFLOPs/s per A100', Dao 2023"),
            ("FlashAttention-3, H100, FP16", 740e12, h100, "fp16", "'740 TFLOPs/s (75% utilization)', Shah 2024"),
            ("FlashAttention-3, H100, FP8", 1.2e15, h100, "fp8", "'close to 1.2 PFLOPs/s', Shah 2024")]
for label, flops, acc, prec, where in reported:
    print(f"{label:42s} {flops / 1e12:5.0f} TFLOP/s = {flops / acc.peak(prec):4.0%} of the {acc.name} "
          f"dense {prec.upper()} peak ({where})")
assert abs(740e12 / h100.peak("fp16") - 0.75) < 0.01                  # the paper's 75% is of dense FP16
fp8_share = 1.2e15 / h100.peak("fp8")
assert 0.55 < fp8_share < 0.65

# %% [markdown]
# FlashAttention-3's 75% is of the dense FP16 peak, as a utilisation should be. Its FP8 kernel
# reaches a smaller share of the FP8 peak (the last line): FP8 doubles the tensor-core rate but
# not the special-function units, so the exponentials weigh twice as much against the matmuls.
# The paper reports that block quantisation and incoherent processing together give 2.6 times
# lower error than a baseline FP8 attention on data with outliers; our synthetic test agrees in
# direction, with its own factor printed above.

# %% [markdown]
# ## 7. Explore
#
# Move the matmul's tile size and watch the traffic fall until the tile no longer fits on chip;
# move the attention block size and sequence length and watch the gap between naive and flash
# traffic. A block smaller than $d/2$ makes FlashAttention's loop move *more* bytes than naive.

# %%
from course_lib.widgets.tiling import tiling_explorer

explorer = tiling_explorer("H100 SXM")
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"FlashAttention makes attention linear in sequence length."** Its memory is linear; its FLOP
#   and its HBM traffic stay quadratic (section 6: a constant-factor saving, slope 2 on both lines).
# - **"FlashAttention is an approximation."** It is exact: the online softmax rescales and gets the
#   same result to rounding, checked above against the naive algorithm on ragged blocks.
# - **"A scalar pipeline needs $2mnk$ lane-cycles for a tile."** (A seed text says so.) One fused
#   multiply-add does 2 FLOP, so a tile's $2mnk$ FLOP take $mnk$ FMAs:

# %%
one_mma = tiling.tile_instruction_counts(16, 8, 16)
print(f"m16n8k16: {one_mma.flops:.0f} FLOP = {one_mma.fma_instructions * one_mma.warp_size} FMAs, not "
      f"{2 * 16 * 8 * 16}")
assert one_mma.fma_instructions * one_mma.warp_size == 16 * 8 * 16

# %% [markdown]
# - **"A tensor core consumes a whole 16 x 16 tile per clock."** (Same seed.) The 16-bit warp
#   instruction is m16n8k16, a 16 x 16 by 16 x 8 product issued by a whole warp; it is an
#   instruction, not a per-clock rate.
# - **"Bigger tiles are always better."** Only until they stop fitting: the register file caps the
#   H100's square tile below 256, long before shared memory would (section 1).
# - **"Fusing three elementwise kernels makes them three times faster."** The saved mask and the
#   bias vector are moved either way: 2.6x in BF16 (section 4).
# - **"My kernel passed its test."** Which test? Square, power-of-two, all-ones inputs let both
#   bugs in section 5 through.
#
# ## Exercises
#
# `my_work/06_tiling_flashattention.py` (answers in `solutions/06_tiling_flashattention.py`):
# predict what a bigger tile does, size a tile for a real GPU, count FlashAttention's traffic,
# write one step of the online softmax, and count what fusing a softmax saves (06.5); then find
# the register budget at which the fewest-bytes tile of a skinny matmul covers all its rows
# (06.6), and choose FlashAttention's query and key blocks under a shared-memory and a register
# budget (06.7).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - Tiled matmul traffic is $b(mk\lceil n/T_n\rceil + kn\lceil m/T_m\rceil + mn)$; the intensity is
#   about $T/b$, so the tile size, capped by shared memory and registers, sets the HBM intensity.
# - Each level of the hierarchy (block, warp, MMA) reuses its operands $2mn/(m+n)$ times; one
#   `mma.sync` m16n8k16 replaces 64 warp FMA instructions.
# - Fusion keeps intermediates on chip: a chain of memory-bound kernels costs one read and one write.
# - Test kernels on random, asymmetric, ragged shapes with long reductions, against a reference.
# - FlashAttention computes exact attention without the $N \times N$ matrix: memory $O(N)$, HBM
#   traffic $\Theta(N^2d^2/M)$ instead of $\Theta(N^2)$, the same $4N^2d$ FLOP.
# - Fusing compilers (Inductor, XLA, TensorRT) remove intermediate round trips through HBM: count a
#   graph's bytes per grouping of ops into kernels; fused, a chain costs its inputs and outputs.
# - FlashAttention-2 cuts non-matmul FLOP and parallelises over the sequence; FlashAttention-3 on
#   Hopper overlaps loads (TMA, warp specialisation) and softmax (ping-pong) with the GEMMs and adds
#   FP8 with block scales and a random rotation: 75% of the H100's dense FP16 peak, by the paper.
