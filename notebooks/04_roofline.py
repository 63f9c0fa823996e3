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
# # 04 · The roofline: is this kernel limited by arithmetic or by memory?
#
# **Learning objectives.** After this lesson you can
#
# 1. compute a kernel's *arithmetic intensity* (FLOP per byte moved) and an accelerator's
#    *machine balance* (its ridge point);
# 2. bound a kernel's speed with the roofline $P(I) = \min(\pi, \beta I)$ and say whether it is
#    memory-bound or compute-bound;
# 3. explain why a batch-1 decode step reaches a fraction of a percent of a GPU's peak while a
#    training matmul reaches the roof;
# 4. read a *hierarchical* roofline, one roof per memory level;
# 5. measure your own machine's roofline and compare NumPy kernels with their predictions.
#
# Every number below is computed from the cited catalog in `course_lib/data/accelerators.toml`
# (dense tensor-core rates, never the "with sparsity" ones), and the important ones are checked
# a second way.

# %%
import numpy as np
import matplotlib.pyplot as plt

from course_lib.hardware import get_accelerator, list_accelerators, bytes_per_element
from course_lib.roofline import (attainable_flops, binding_ceiling, elementwise_kernel,
                                 hierarchical_ceilings, matmul_intensity, matmul_kernel, place_kernel,
                                 ridge_point)
from course_lib.plots import place_labels, use_course_style
from course_lib.plots.roofline import plot_hierarchical_roofline, plot_measured_roofline, plot_roofline

use_course_style()
h100 = get_accelerator("H100 SXM")
print(f"{h100.name}: {h100.source}")

# %% [markdown]
# ## 1. Arithmetic intensity and machine balance
#
# A kernel performs $F$ floating-point operations and moves $Q$ bytes between the chip and its
# memory. Its **arithmetic intensity** is
#
# $$ I = \frac{F}{Q} \quad [\text{FLOP/byte}]. $$
#
# An accelerator with peak rate $\pi$ (FLOP/s) and memory bandwidth $\beta$ (bytes/s) can only
# keep its arithmetic units busy if every byte brings at least $\pi / \beta$ operations with it.
# That ratio is the **machine balance**, or **ridge point**:
#
# $$ I^{*} = \frac{\pi}{\beta}. $$
#
# For the H100 SXM in dense BF16 over its HBM3:

# %%
ridge_h100 = ridge_point(h100.peak("bf16"), h100.mem_bandwidth)
print(f"I* = {h100.peak('bf16') / 1e12:.1f} TFLOP/s / {h100.mem_bandwidth / 1e12:.2f} TB/s "
      f"= {ridge_h100:.0f} FLOP per byte")

# %% [markdown]
# Each byte read from HBM must feed that many operations before the tensor cores stop waiting.
# The ridge points of the whole catalog, at each chip's fastest 16-bit format:

# %%
rows = []
for name in list_accelerators():
    acc = get_accelerator(name)
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    rows.append((acc.name, prec, acc.peak(prec) / 1e12, acc.mem_bandwidth / 1e12, acc.ridge_point(prec)))
print(f"{'accelerator':15s} {'prec':5s} {'peak TFLOP/s':>13s} {'HBM TB/s':>9s} {'ridge FLOP/B':>13s}")
for row in rows:
    print(f"{row[0]:15s} {row[1]:5s} {row[2]:13.1f} {row[3]:9.3f} {row[4]:13.0f}")
ridges = np.array([r[4] for r in rows])
print(f"\nsmallest ridge {ridges.min():.0f}, largest {ridges.max():.0f} FLOP/byte")

# %% [markdown]
# ## 2. The roofline bound
#
# A kernel can go no faster than its arithmetic allows, nor faster than its bytes can arrive:
#
# $$ P(I) = \min\left(\pi,\; \beta\, I\right). $$
#
# Left of the ridge the sloped roof binds (memory-bound); right of it the flat roof binds
# (compute-bound). The same bound read as time: a kernel needs at least
# $t = \max(F/\pi,\; Q/\beta)$ seconds. The two readings must agree, and we check that they do
# on a kernel on each side of the ridge, and that the ridge is exactly where the roofs meet.

# %%
peak, bw = h100.peak("bf16"), h100.mem_bandwidth
for flops, bytes_moved in [(1e12, 1e10), (1e12, 1e9)]:      # intensity 100 and 1000 FLOP/B
    p = attainable_flops(flops / bytes_moved, peak, bw)
    t_roofline = flops / p
    t_direct = max(flops / peak, bytes_moved / bw)
    assert np.isclose(t_roofline, t_direct), (t_roofline, t_direct)
    print(f"I = {flops / bytes_moved:6.0f} FLOP/B: at most {p / 1e12:6.1f} TFLOP/s, "
          f"at least {t_direct * 1e3:.3f} ms")
# The roofs meet at the ridge: just left of it the slope binds, at it the peak does.
assert attainable_flops(ridge_h100 * (1 - 1e-9), peak, bw) < peak
assert np.isclose(attainable_flops(ridge_h100, peak, bw), peak)

# %% [markdown]
# ## 3. Worked examples on real accelerators
#
# A matrix multiplication $C_{m\times n} = A_{m\times k} B_{k\times n}$ performs $2mkn$ FLOP (one
# multiply and one add per term) and, at best, reads $A$ and $B$ once and writes $C$ once:
#
# $$ I_{\text{matmul}} = \frac{2mkn}{b\,(mk + kn + mn)} $$
#
# with $b$ bytes per element. For square matrices in a 2-byte format this is $n/3$: a square
# matmul is compute-bound on the H100 once $n/3 \ge I^*$, that is $n \ge 3 I^*$.

# %%
n_cross = 3 * ridge_h100
sizes = np.arange(16, 4097)
bounds = [matmul_intensity(s, s, s, 2) >= ridge_h100 for s in sizes]
first_compute_bound = int(sizes[np.argmax(bounds)])
print(f"formula: n >= 3 I* = {n_cross:.0f};  sweep: first compute-bound n = {first_compute_bound}")
assert first_compute_bound == int(np.ceil(n_cross))
assert np.isclose(matmul_intensity(4096, 4096, 4096, 2), 4096 / 3)

# %% [markdown]
# The five kernels that matter most in a transformer, in BF16 on the H100. The decode GEMV is one
# token's activations times an 8192 x 8192 weight matrix; the small batch is 16 tokens; the
# training GEMM is 8192 tokens; the skinny GEMM is an attention-score product with head
# dimension 64; GELU is an elementwise activation at about 8 FLOP per element over $2^{28}$
# elements, read once and written once.

# %%
kernels = [
    matmul_kernel("decode GEMV (m=1)", 1, 8192, 8192, "bf16"),
    matmul_kernel("small batch (m=16)", 16, 8192, 8192, "bf16"),
    matmul_kernel("training GEMM (m=8192)", 8192, 8192, 8192, "bf16"),
    matmul_kernel("skinny GEMM (k=64)", 4096, 64, 4096, "bf16"),
    elementwise_kernel("GELU 2^28 elements", 2 ** 28, 8, "bf16"),
]
points = [place_kernel(kern, "H100 SXM", "bf16") for kern in kernels]
print(f"{'kernel':25s} {'FLOP/B':>8s} {'TFLOP/s':>8s} {'% peak':>7s} {'bound':>8s} {'time us':>9s}")
for p in points:
    print(f"{p.kernel.name:25s} {p.intensity_flops_per_byte:8.1f} {p.attainable_flops / 1e12:8.1f} "
          f"{100 * p.fraction_of_peak:7.2f} {p.bound:>8s} {p.t_min_s * 1e6:9.1f}")

gemv, small, train, skinny, gelu = points
assert gemv.bound == small.bound == skinny.bound == gelu.bound == "memory"
assert train.bound == "compute"
# Second way for the GEMV: every 2-byte weight is used for exactly one multiply-add (2 FLOP),
# so its intensity tends to 2 FLOP / 2 bytes = 1 FLOP per byte.
assert abs(gemv.intensity_flops_per_byte - 1.0) < 0.01

# %%
fig = plot_roofline(points)
plt.show()

# %% [markdown]
# The decode GEMV reaches well under one percent of peak (the table's `% peak` column): every
# weight crosses the memory bus to be used once. Batching many sequences reuses each weight read, which is why serving
# systems batch, and why lesson 07 finds decode cost governed by bandwidth. The same kernels on
# every GPU in the catalog (16-bit format each chip runs fastest):

# %%
print(f"{'accelerator':15s} " + " ".join(f"{p.kernel.name.split(' (')[0][:13]:>14s}" for p in points))
for name in list_accelerators(kind="gpu"):
    acc = get_accelerator(name)
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    placed = [place_kernel(p.kernel, acc, prec) for p in points]
    print(f"{acc.name:15s} " + " ".join(f"{100 * q.fraction_of_peak:12.2f}% " for q in placed))

# %% [markdown]
# ## 4. Tensor cores against the ordinary FP32 units
#
# Tensor cores run matrix multiply-accumulates on small tiles in one instruction; the ordinary
# FP32 lanes run one fused multiply-add per lane per clock. The FP32 rate is just
# lanes x 2 x clock x SMs, which gives us an independent check on the catalog's figure.

# %%
fp32_from_clock = h100.sm_count * h100.fp32_flops_per_clock_per_sm * h100.boost_clock_hz
print(f"FP32 from the datasheet: {h100.peak('fp32') / 1e12:.1f} TFLOP/s; "
      f"from {h100.sm_count} SMs x {h100.fp32_flops_per_clock_per_sm} FLOP/clock x "
      f"{h100.boost_clock_hz / 1e9:.2f} GHz: {fp32_from_clock / 1e12:.1f} TFLOP/s")
assert abs(fp32_from_clock / h100.peak("fp32") - 1) < 0.01

ratio_bf16 = h100.peak("bf16") / h100.peak("fp32")
ratio_tf32 = h100.peak("tf32") / h100.peak("fp32")
print(f"dense BF16 tensor cores: {ratio_bf16:.1f}x the FP32 lanes; TF32: {ratio_tf32:.1f}x")
print(f"a matmul kept in plain FP32 uses {100 / ratio_bf16:.1f}% of the chip's dense BF16 rate "
      f"and leaves {100 * (1 - 1 / ratio_bf16):.1f}% idle")

# %% [markdown]
# How large is that gap on other chips and generations? The dense 16-bit tensor rate over the
# FP32 rate, for every GPU in the catalog, oldest first:

# %%
tensor_gap = {}
print(f"{'accelerator':15s} {'year':>5s} {'16-bit':>7s} {'tensor / FP32':>14s}")
for name in sorted(list_accelerators(kind="gpu"), key=lambda n: get_accelerator(n).year):
    acc = get_accelerator(name)
    prec = "bf16" if "bf16" in acc.peak_flops else "fp16"
    tensor_gap[acc.name] = acc.peak(prec) / acc.peak("fp32")
    print(f"{acc.name:15s} {acc.year:5d} {prec:>7s} {tensor_gap[acc.name]:13.1f}x")
v100_gap, a100_gap, h100_gap = (tensor_gap[n] for n in ("V100 SXM2", "A100 SXM 80GB", "H100 SXM"))
# The data-centre generations do not widen the gap every time: A100 doubled it, H100 narrowed it,
# Blackwell widened it again.
assert a100_gap > v100_gap and h100_gap < a100_gap < tensor_gap["B200"]
# The Ada parts sit far below ten: the L4 and the RTX 4090 (GeForce: half-rate FP32 accumulate).
assert tensor_gap["L4"] < 5 and tensor_gap["RTX 4090"] < 3
ada = ("L4", "RTX 4090")
assert all(7.95 <= tensor_gap[n] <= 30.05 for n in tensor_gap if n not in ada)   # key points: 8 to 30
assert all(1.95 <= tensor_gap[n] <= 4.05 for n in ada)                           # key points: 2 to 4
print(f"\nV100 -> A100 -> H100: {v100_gap:.1f}x -> {a100_gap:.1f}x -> {h100_gap:.1f}x")
# Second way: (tensor FLOP/clock/SM / FP32 FLOP/clock/SM) x (rated tensor clock / boost clock).
for name in ("V100 SXM2", "A100 SXM 80GB", "H100 SXM"):
    acc = get_accelerator(name)
    per_clock = acc.fp16_tensor_flops_per_clock_per_sm / acc.fp32_flops_per_clock_per_sm
    clock_ratio = acc.tensor_clock_hz / acc.boost_clock_hz
    print(f"{acc.name:15s} per clock {per_clock:4.0f}x, tensor clock / boost clock {clock_ratio:.3f}")
    assert np.isclose(per_clock * clock_ratio, tensor_gap[acc.name], rtol=0.01)

# %% [markdown]
# The gap did not grow with each generation: it doubled from Volta to Ampere, then narrowed a
# little on Hopper, and Blackwell widened it again. Per clock, Hopper's SM doubled its FP32 lanes
# along with its tensor-core rate, so the ratio stayed where Ampere's was; the narrowing is the
# clock: Hopper's dense tensor peak implies a lower clock than its FP32 peak (section 5; an
# inference, since NVIDIA publishes no tensor clock). Nor is it an order of magnitude everywhere: on the Ada parts, the L4 and
# the RTX 4090, the tensor cores give only a few times the FP32 rate (the table above).

# %% [markdown]
# ## 5. Why sustained throughput falls below the rated peak, and what sparsity doubles
#
# Peak rates are *units x FLOP per clock x clock*. For the FP32 lanes the clock is the boost
# clock (section 4 checked it). For the tensor cores the architecture whitepapers give the dense
# FP16 FLOP per clock per SM (the catalog's `fp16_tensor_flops_per_clock_per_sm`), so dividing
# the vendor's dense peak by it and by the SM count gives the clock the vendor rated tensor math
# at:
#
# $$ f_\text{tensor} = \frac{\pi_\text{FP16, dense}}{\text{SMs} \times \text{FLOP/clock/SM}}. $$

# %%
print(f"{'accelerator':15s} {'dense FP16':>11s} {'SMs':>4s} {'FLOP/clk/SM':>12s} {'tensor clock':>13s} {'boost':>9s}")
for name in list_accelerators(kind="gpu"):
    acc = get_accelerator(name)
    if acc.tensor_clock_hz is None:
        continue
    print(f"{acc.name:15s} {acc.peak('fp16') / 1e12:8.1f} TF {acc.sm_count:4d} "
          f"{acc.fp16_tensor_flops_per_clock_per_sm:12d} {acc.tensor_clock_hz / 1e6:9.0f} MHz "
          f"{acc.boost_clock_hz / 1e6:5.0f} MHz")
    # Second way: the clock times the units gives the catalog's dense peak back.
    assert np.isclose(acc.sm_count * acc.fp16_tensor_flops_per_clock_per_sm * acc.tensor_clock_hz, acc.peak("fp16"))
tensor_clock = h100.tensor_clock_hz
assert tensor_clock < 0.95 * h100.boost_clock_hz                     # H100: rated below boost
a100 = get_accelerator("A100")
assert abs(a100.tensor_clock_hz / a100.boost_clock_hz - 1) < 0.01      # A100: rated at boost

# %% [markdown]
# On the V100 and A100 the tensor peak is rated at the boost clock. On the H100 it is not: its
# dense tensor peaks correspond to a clock well under the boost clock that its FP32 figure uses,
# and the H100 PCIe's likewise. The "tensor clock" column is our inference, not a published
# figure: NVIDIA gives the peak and the whitepaper the FLOP per clock per SM, and the clock is
# what makes them agree (1830 MHz on the H100 SXM, if the per-SM rate holds at every clock). The boost clock is the most the chip runs at, and only within
# its power and thermal budget (the catalog's TDP); a dense BF16 matmul that draws the full
# budget makes the chip lower its clock, and the roof comes down in proportion. The clock drop
# below is an assumption for illustration, not a measured figure. Because the datasheet's tensor
# peak already sits at the lower rated clock, scaling the datasheet peak by the whole drop from
# boost would count part of the drop twice; the roof follows from the clock itself:

# %%
clock_drop = 0.15                       # assumed: clock 15% under boost when power-limited
sustained_clock = h100.boost_clock_hz * (1 - clock_drop)
sustained_peak = h100.sm_count * h100.fp16_tensor_flops_per_clock_per_sm * sustained_clock
double_counted = h100.peak("bf16") * (1 - clock_drop)
print(f"{h100.tdp_w:.0f} W budget: at {sustained_clock / 1e6:.0f} MHz ({clock_drop:.0%} under boost, "
      f"{1 - sustained_clock / tensor_clock:.1%} under the rated tensor clock) the BF16 roof is "
      f"{sustained_peak / 1e12:.0f} TFLOP/s and the ridge moves to "
      f"{ridge_point(sustained_peak, h100.mem_bandwidth):.0f} FLOP/B")
print(f"scaling the datasheet peak by the whole {clock_drop:.0%} would give {double_counted / 1e12:.0f} TFLOP/s: "
      f"the first {1 - tensor_clock / h100.boost_clock_hz:.1%} of the drop counted twice")
assert np.isclose(sustained_peak, h100.peak("bf16") * sustained_clock / tensor_clock)
assert double_counted < sustained_peak < h100.peak("bf16")

# %% [markdown]
# **Structured 2:4 sparsity.** When two of every four weights are zero in a fixed pattern, sparse
# tensor cores skip them and the datasheets print twice the dense rate. It helps only models
# pruned to that pattern. Storing the sparse figure would double every ridge point and make
# memory-bound kernels look further from the roof than they are; the catalog stores dense rates
# and we derive the sparse one when it is wanted.
#
# Sparsity also shrinks the weights: the compressed matrix keeps the two non-zero values of each
# group of four plus a 2-bit index for each (NVIDIA A100 whitepaper, fine-grained structured
# sparsity; PTX ISA, sparse `mma.sp` metadata), so a memory-bound kernel that reads compressed
# weights moves fewer bytes:

# %%
sparse_bf16 = 2 * h100.peak("bf16")
print(f"datasheet 'with sparsity' BF16: {sparse_bf16 / 1e12:.0f} TFLOP/s; ridge would read "
      f"{ridge_point(sparse_bf16, h100.mem_bandwidth):.0f} instead of {ridge_h100:.0f} FLOP/B")
index_bits = 2                                      # per kept value: its position among four
value_bits = 8 * bytes_per_element("bf16")
bf16_fraction = (2 * value_bits + 2 * index_bits) / (4 * value_bits)
print(f"BF16 2:4 weights with metadata take {bf16_fraction:.2%} of the dense bytes; a GEMV that "
      f"streams them could run up to {1 / bf16_fraction:.2f}x faster")
assert round(100 * bf16_fraction) == 56                                     # key points
# Second way: count the bits of one 2:4-compressed 8192 x 8192 BF16 matrix directly.
n_groups = 8192 * 8192 // 4
assert np.isclose(n_groups * (2 * 16 + 2 * index_bits) / 8 / (8192 * 8192 * 2), bf16_fraction)

# %% [markdown]
# ## 6. The hierarchical roofline
#
# HBM is not the only roof. Every level of the memory hierarchy has its own bandwidth, hence its
# own sloped roof, and a kernel has its own intensity against each level (the bytes it moves
# *through that level*). Whichever roof is lowest at its intensity binds. On-chip bandwidths are
# not datasheet figures: `hierarchical_ceilings` derives shared memory's from the architecture and
# says how in `source`. L2 gets a roof only where NVIDIA publishes its read bandwidth: the A100
# whitepaper gives 5120 bytes per clock (and 2048 for the V100), which times the boost clock is a
# bandwidth. For Hopper, Ada and Blackwell there is no published figure, so the H100 has no L2
# roof (lesson 03 bounds it between HBM and shared memory):

# %%
ceilings = hierarchical_ceilings("H100 SXM", "bf16")
for c in ceilings:
    print(f"{c.level:32s} {c.bandwidth_bytes_per_s / 1e12:8.3f} TB/s  ridge {c.ridge_point:8.1f} FLOP/B  ({c.source})")
smem = ceilings[0]
assert np.isclose(smem.bandwidth_bytes_per_s, 128 * h100.sm_count * h100.boost_clock_hz)
assert not any(c.level == "L2" for c in ceilings)
fig = plot_hierarchical_roofline(ceilings, h100.peak("bf16"), points=[train, gemv],
                                 title="H100 SXM, dense BF16: one roof per level")
plt.show()

# %% [markdown]
# The A100 has the L2 roof, between shared memory and HBM. Take an $8192^3$ BF16 matmul cut
# into $64 \times 64$ output tiles. Each tile reads its rows of $A$ and columns of $B$ again, but
# neighbouring tiles share them, so (at best) those re-reads hit in L2 and HBM sees each matrix
# once. The kernel then has two intensities: against HBM the matmul's own $n/3$, against L2 the
# tiled traffic's, about $T/b$ (lesson 06 counts it):

# %%
from course_lib.tiling import tiled_matmul_traffic

a100_ceilings = hierarchical_ceilings(a100, "bf16")
for c in a100_ceilings:
    print(f"{c.level:32s} {c.bandwidth_bytes_per_s / 1e12:8.3f} TB/s  ridge {c.ridge_point:8.1f} FLOP/B  ({c.source})")
l2 = next(c for c in a100_ceilings if c.level == "L2")
assert np.isclose(l2.bandwidth_bytes_per_s, a100.l2_read_bytes_per_clock * a100.boost_clock_hz)

tiled = tiled_matmul_traffic(8192, 8192, 8192, 64, bytes_per_element=2)
i_l2 = tiled.intensity_flops_per_byte
i_hbm = matmul_intensity(8192, 8192, 8192, 2)
level, bound = binding_ceiling({"L2": i_l2, "HBM (HBM2e)": i_hbm}, a100, "bf16")
print(f"\n64 x 64 tiles: {i_l2:.1f} FLOP/B against L2, {i_hbm:.0f} against HBM -> the {level} roof binds "
      f"at {bound / 1e12:.0f} of {a100.peak('bf16') / 1e12:.0f} TFLOP/s")
assert level == "L2" and np.isclose(bound, l2.bandwidth_bytes_per_s * i_l2)
fig = plot_hierarchical_roofline(a100_ceilings, a100.peak("bf16"), title="A100 SXM, dense BF16: an L2 roof from the whitepaper")
ax = fig.axes[0]
ax.plot(i_l2, bound, "o", color="k")
place_labels(ax, [(i_l2, bound, "64x64 tiles, against L2")], fontsize=8)
plt.show()

# %% [markdown]
# Against HBM alone this matmul would reach the peak; its L2 traffic holds it lower. Bigger tiles
# raise the L2 intensity (lesson 06). Likewise a tiled matmul that reuses each tile from shared
# memory 64 times has a shared-memory intensity only $1/64$ of its HBM intensity, and may be bound
# by shared memory, not by HBM. Lesson 08 adds the links between chips, whose roofs are lower still.
#
# ## 7. Your own machine's roofline, measured
#
# The same model describes your laptop. We measure two roofs with NumPy, sustained memory
# bandwidth (copy, triad and an in-place scale on arrays twice the size of your largest cache)
# and sustained matmul FLOP/s (the better of two sizes), then time kernels of very different
# intensity and place each at its predicted and measured height. Everything, roofs and kernels
# alike, goes through one timer: a warm-up call, then the best of at least five calls and of at
# least 50 ms of calls, so a kernel and the peak it is compared with are measured the same way.
# It takes one to two seconds.

# %%
from course_lib.measure import gpu_status, measure_kernels, measure_machine

machine = measure_machine()
print(f"{machine.description}")
print(f"copy {machine.copy_bandwidth_bytes_per_s / 1e9:.1f} GB/s, triad "
      f"{machine.triad_bandwidth_bytes_per_s / 1e9:.1f} GB/s, in-place scale "
      f"{machine.scale_bandwidth_bytes_per_s / 1e9:.1f} GB/s; best of the {machine.gemm_size // 2}^3 and "
      f"{machine.gemm_size}^3 float32 matmuls {machine.peak_flops / 1e9:.1f} GFLOP/s: "
      f"ridge {machine.ridge_point:.1f} FLOP/B")
measured = measure_kernels(machine)
print(f"{'kernel':12s} {'FLOP/B':>7s} {'predicted GFLOP/s':>18s} {'measured':>9s} {'ratio':>6s}")
for k in measured:
    print(f"{k.name:12s} {k.intensity_flops_per_byte:7.2f} {k.predicted_flops / 1e9:18.2f} "
          f"{k.measured_flops / 1e9:9.2f} {k.fraction_of_prediction:6.2f}")

# %%
fig = plot_measured_roofline(machine, measured, title=f"your machine: {machine.description}")
plt.show()
# Second way for the byte and FLOP accounting: the measured GEMM's intensity is the matmul formula
# of section 3 at 4 bytes per float32 element.
gemm_big = max((k for k in measured if k.name.startswith("GEMM")), key=lambda k: k.flops)
size = int(gemm_big.name.split()[1])
assert np.isclose(gemm_big.intensity_flops_per_byte, matmul_intensity(size, size, size, 4))
# Timings depend on what else your machine is doing, so they are compared, not asserted.
streaming = [k for k in measured if k.intensity_flops_per_byte < 1]
best_stream = max(streaming, key=lambda k: k.measured_flops)
contrast = gemm_big.measured_flops / best_stream.measured_flops
verdict = "as the roofline predicts" if contrast > 1 else \
    "NOT as predicted: is something else busy on this machine?"
print(f"{gemm_big.name} ran {contrast:.0f}x the FLOP/s of the fastest streaming kernel "
      f"({best_stream.name}), {verdict}")
near = [k.name for k in measured if 0.5 <= k.fraction_of_prediction <= 2]
print(f"within a factor of two of the roofline on this run: {', '.join(near) or 'none'}")
for k in measured:
    if k.fraction_of_prediction < 0.5:
        print(f"more than 2x below: {k.name}, {k.seconds * 1e6:.0f} us per call")
    elif k.fraction_of_prediction > 2:
        print(f"more than 2x above: {k.name} (its roof was measured in a slower moment)")

# %% [markdown]
# Read the plot with the noise in mind. A laptop, or a shared machine with two cores, runs other
# work beside NumPy, and BLAS threads wait for each other when one is descheduled; the ratios
# move from run to run (run the two cells again and compare). What a noisy run still shows,
# unless something heavy runs beside it, is the contrast the roofline is about: the large GEMM,
# far right of the ridge, runs at a multiple of the FLOP/s of the streaming kernels, far left of
# it. The first line above gives the factor for this run and says whether the run showed it; the
# next lines say which kernels landed near their roof this time. Two effects pull points down:
# a pass that writes lines not in cache first reads them (write-allocate), bytes we did not count
# (which is why the memory roof is the best of three streams, not the copy alone); and a kernel
# of a few microseconds per call, such as the smallest GEMM, pays NumPy's fixed call cost
# (lesson 01 measures it) on top of its work.
#
# **On a GPU.** Where PyTorch sees a GPU, the same two roofs are measured on it (a 1 GiB
# device copy and an 8192^3 BF16 matmul) and set beside the catalog's datasheet figures. Without
# one, this cell says so in one line.

# %%
from course_lib.measure import measure_gpu_machine

has_gpu, message = gpu_status()
print(message)
gpu = measure_gpu_machine() if has_gpu else None
if gpu is not None:
    print(f"{gpu.description}: copy {gpu.copy_bandwidth_bytes_per_s / 1e12:.2f} TB/s, "
          f"BF16 matmul {gpu.peak_flops / 1e12:.0f} TFLOP/s; ridge {gpu.ridge_point:.0f} FLOP/B")
    for name in list_accelerators("gpu"):
        if name.split()[0].lower() in gpu.description.lower():
            acc = get_accelerator(name)
            print(f"  catalog {acc.name}: {acc.mem_bandwidth / 1e12:.2f} TB/s, "
                  f"{acc.peak('bf16') / 1e12:.0f} TFLOP/s dense BF16 "
                  f"(measured {gpu.bandwidth_bytes_per_s / acc.mem_bandwidth:.0%} and "
                  f"{gpu.peak_flops / acc.peak('bf16'):.0%} of them)")
            break

# %% [markdown]
# ## 7b. Reading a profiler's report against the roofline
#
# On a GPU the timings come from a profiler. NVIDIA's Nsight Compute reports, for each kernel,
# its **duration**, the bytes it moved to and from DRAM (`dram__bytes`), the operations it ran,
# and, in its "GPU Speed Of Light Throughput" section, the two numbers the roofline needs:
# achieved memory throughput and achieved compute throughput, each as a percentage of the
# device's peak. Its rule for reading them (the SOLBottleneck rule shipped with the tool): above
# 80% of peak a unit is well used; if both stay below 60%, the kernel "typically" has latency
# issues, neither roof is near, and the warp-state statistics say why. From the three recorded
# numbers, duration $t$, bytes $Q$ and FLOP $F$:
#
# $$ \text{achieved FLOP/s} = \frac{F}{t}, \qquad \text{achieved bytes/s} = \frac{Q}{t}, \qquad
#    \text{fraction of roof} = \frac{F/t}{\min(\pi, \beta F/Q)}
#    = \max\left(\frac{F/t}{\pi}, \frac{Q/t}{\beta}\right). $$
#
# Efficiency is a fraction of the roof that applies at the kernel's intensity, never of the FLOP
# peak alone: a decode GEMV at 0.3% of peak FLOP/s can be a perfect kernel. Three kernels on an
# H100 SXM with the kind of numbers a profile records (illustrative figures, not measurements):
# the decode GEMV of section 3, the training GEMM with the DRAM bytes its tiles really moved,
# and a layer norm over $4096 \times 1024$ BF16 values.

# %%
from course_lib.roofline import read_profile
from course_lib.plots.roofline import plot_profile_readings

gemv_k, train_k = gemv.kernel, train.kernel
profile = [
    read_profile("decode GEMV", 48e-6, gemv_k.bytes_moved, gemv_k.flops, "H100 SXM", "bf16"),
    read_profile("training GEMM", 1.65e-3, 1.2e9, train_k.flops, "H100 SXM", "bf16"),
    read_profile("layer norm", 22e-6, 2 * 2 * 4096 * 1024, 8 * 4096 * 1024, "H100 SXM", "bf16"),
]
print(f"{'kernel':14s} {'us':>7s} {'TFLOP/s':>8s} {'TB/s':>6s} {'compute %':>10s} {'memory %':>9s} "
      f"{'roof':>8s} {'of roof':>8s} {'limiter':>8s}")
for r in profile:
    print(f"{r.name:14s} {r.duration_s * 1e6:7.0f} {r.achieved_flops / 1e12:8.1f} "
          f"{r.achieved_bandwidth_bytes_per_s / 1e12:6.2f} {100 * r.compute_fraction:10.1f} "
          f"{100 * r.memory_fraction:9.1f} {r.roof:>8s} {r.fraction_of_roof:8.0%} {r.limiter:>8s}")
for r in profile:
    print(f"  {r.name}: {r.verdict}")
# Second way: the fraction of the roof is the larger of the two speed-of-light fractions.
for r in profile:
    assert np.isclose(r.fraction_of_roof, max(r.compute_fraction, r.memory_fraction))
p_gemv, p_train, p_norm = profile
assert (p_gemv.limiter, p_train.limiter, p_norm.limiter) == ("memory", "compute", "latency")
assert p_gemv.compute_fraction < 0.01 < 0.8 < p_gemv.fraction_of_roof
# The GEMM's tiles re-read operands: its DRAM bytes exceed the minimum, its intensity falls.
print(f"training GEMM: {p_train.bytes_moved / train_k.bytes_moved:.1f}x the minimum bytes, intensity "
      f"{p_train.intensity_flops_per_byte:.0f} instead of {train_k.intensity_flops_per_byte:.0f} FLOP/B "
      f"(still right of the ridge, {ridge_h100:.0f})")
assert p_train.intensity_flops_per_byte > ridge_h100
t_norm_min = p_norm.bytes_moved / h100.mem_bandwidth
print(f"layer norm: its bytes need {t_norm_min * 1e6:.1f} us at full bandwidth; it ran {p_norm.duration_s * 1e6:.0f} us")
assert np.isclose(t_norm_min / p_norm.duration_s, p_norm.fraction_of_roof)
fig = plot_profile_readings(profile)
plt.show()

# %% [markdown]
# Read the table from the right. The GEMV moves bytes at over 80% of HBM's peak: it is done,
# and only fewer bytes (batching, a narrower format) make it faster. The GEMM is compute-limited
# with room left; its DRAM bytes are a few times the minimum because its tiles re-read operands,
# which is harmless while it stays right of the ridge. The layer norm is near neither roof: its
# bytes would take a few microseconds at full bandwidth (the last line), so a launch, a tail of
# idle SMs or too few loads in flight (lesson 01's Little's law) weigh as much as the traffic:
# the pattern the 60% rule calls latency. For such a kernel the profiler's **warp stall reasons** say what
# the warps waited for, as a share of their cycles (Nsight Compute Profiling Guide, "Warp Stall
# Reasons"):
#
# | stall reason | the warp waits for | points to |
# |---|---|---|
# | long scoreboard | data from L1TEX: global or local memory | memory latency: more loads in flight per thread, more warps (lesson 01) |
# | short scoreboard | shared memory or special-function results | bank conflicts (lesson 03), MIO pressure |
# | barrier | the other warps of its block at `__syncthreads` | uneven work per warp, big blocks |
# | math pipe throttle | a busy arithmetic pipe | compute-bound, good if it is the pipe the work needs (tensor cores, FMA); one oversubscribed pipe such as MUFU (exp, rsqrt) or FP64 on a consumer GPU is a bottleneck to remove |
# | not selected | nothing: it was ready, another warp issued | enough warps; occupancy could go down |
#
# A kernel whose cycles go to long-scoreboard stalls at low memory throughput is waiting on
# latency with too little in flight; the same stall at 90% memory throughput is simply
# bandwidth-bound. Always read a stall next to the two throughput fractions, and judge a change
# by its duration, the number that matters.

# %% [markdown]
# ## 8. Explore
#
# Choose an accelerator and a precision, then move the matmul's shape. $m$ is the number of tokens
# in the batch, $k \times n$ the weight matrix. Watch the point cross the ridge as $m$ grows, and
# watch the ridge move when you change precision or chip.

# %%
from course_lib.widgets.roofline import roofline_explorer

explorer = roofline_explorer("H100 SXM", "bf16")
explorer

# %% [markdown]
# ## Misconceptions
#
# - **"Ridge points are tens of FLOP per byte."** (One of our seed texts says so.) For dense
#   16-bit tensor-core math they are in the hundreds on every current GPU in the catalog; the
#   smallest above is the one printed in section 1.
# - **"Tensor cores give five to ten times the FP32 rate."** It depends on the chip: on the A100
#   and H100 SXM the dense 16-bit rate is well above ten times the FP32 rate, on the L4 and the
#   RTX 4090 only a few times, and the gap did not grow with every generation (section 4 prints
#   each ratio).
# - **"A faster GPU speeds up every kernel."** A memory-bound kernel only speeds up with bandwidth.
#   From H100 SXM to H200 the BF16 peak is unchanged and the bandwidth grows:

# %%
h200 = get_accelerator("H200")
gain_gemv = place_kernel(gemv.kernel, h200, "bf16").t_min_s / gemv.t_min_s
gain_train = place_kernel(train.kernel, h200, "bf16").t_min_s / train.t_min_s
print(f"H100 SXM -> H200: decode GEMV takes {gain_gemv:.2f}x the time, training GEMM {gain_train:.2f}x")
assert np.isclose(1 / gain_gemv, h200.mem_bandwidth / h100.mem_bandwidth, rtol=1e-3)
assert np.isclose(gain_train, 1.0)

# %% [markdown]
# - **"Lower precision only helps the arithmetic."** Halving the bytes per element doubles the
#   intensity of every kernel: a memory-bound kernel gets faster even if the math does not.
# - **"The spec-sheet peak is what my kernel will get."** Only kernels right of the ridge can reach
#   it, and then only at the clock the chip sustains; on the H100 the tensor peak is already rated
#   below the boost clock (section 5).
# - **"Intensity against HBM tells the whole story."** The binding roof may be L2, shared memory or
#   a link (section 6).
#
# ## Exercises
#
# `my_work/04_roofline.py` (answers in `solutions/04_roofline.py`): predict before you compute,
# compute on a real accelerator, explore with the widget, write the roofline yourself, and decide
# from a recorded profile which kernel to optimize first (04.6); then two designs: how fast L2
# must be for a fixed 64 x 64 tile to cost nothing at every prefill (04.7), and the largest batch
# under a latency target at the rates a measured kernel sustains (04.8).
# `my_work/` is your own copy of the exercises: `make lab` makes it, `make workspace` refreshes
# it without touching your answers, and `make progress` lists which exercises pass.
#
# ## Key points
#
# - Intensity $I = F/Q$ belongs to the kernel; ridge $I^* = \pi/\beta$ belongs to the machine.
# - $P(I) = \min(\pi, \beta I)$: left of the ridge you are paying for bytes, right of it for FLOP.
# - Square matmuls in 16-bit formats have $I = n/3$; decode GEMVs have $I \approx 1$, so decode is
#   memory-bound on every GPU and batching is the lever.
# - Dense tensor-core rates are 8 to 30 times the FP32 lanes on the data-centre GPUs in the catalog
#   but only 2 to 4 times on the Ada parts (section 4); sparse figures are twice dense, apply only
#   to 2:4-pruned weights, and those weights also take about 56% of the dense bytes.
# - Peak = units x FLOP per clock x clock, at the clock the vendor rated: the H100's tensor peak
#   implies a clock below its boost clock (section 5).
# - A profile gives duration, bytes and FLOP: efficiency is the fraction of the roof at the
#   kernel's intensity, the larger of its compute and memory fractions of peak; above 80% the
#   unit is well used, below 60% on both the kernel waits on latency (section 7b).
# - Every memory level has its own roof (L2's where a vendor publishes it, as for the A100);
#   measure your own machine's roofs, the same way as its kernels, before trusting a model.
